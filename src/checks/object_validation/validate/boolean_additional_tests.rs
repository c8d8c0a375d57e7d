//! `additionalProperties: true` or `false` without `properties` in a CRD: the API server's pruning
//! keeps the keys and prunes what they hold (no schema), and kube-openapi refuses every key of a
//! `false` one as a forbidden property. Each answer is kubectl-validate 1.35's on the same CRD
//! and object (which stops at the unknown fields when there are any).

use super::*;
use crate::json::{self, Everything};

const SCHEMA: &str = r#"{"type":"object","properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
  "spec":{"type":"object","additionalProperties":false},
  "other":{"type":"object","properties":{"m":{"type":"object","additionalProperties":false}}},
  "open":{"type":"object","additionalProperties":true},
  "list":{"type":"array","items":{"type":"object","additionalProperties":false}}}}"#;

fn errors(members: &str) -> Vec<String> {
    let schema = json::read(SCHEMA, Everything, 128).unwrap();
    let schema = Schema::compile(&schema, None, 35).unwrap();
    let object = format!(r#"{{"apiVersion":"example.com/v1","kind":"Widget","metadata":{{"name":"w"}},{members}}}"#);
    let object = json::read(&object, Everything, 128).unwrap();
    let options = Options {
        unknown_fields: true,
        ..Options::default()
    };
    validate(&schema, &object, None, &options)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn every_key_of_a_false_additional_properties_is_a_forbidden_property_named_by_its_key() {
    assert_eq!(
        errors(r#""spec":{"extra":1}"#),
        [r#"spec: Invalid value: "extra": spec.extra in body is a forbidden property"#]
    );
    assert_eq!(
        errors(r#""other":{"m":{"x":"y"}}"#),
        [r#"other.m: Invalid value: "x": other.m.x in body is a forbidden property"#]
    );
    assert_eq!(
        errors(r#""list":[{"q":1},{}]"#),
        [r#"list[0]: Invalid value: "q": list[0].q in body is a forbidden property"#]
    );
    assert!(errors(r#""spec":{},"other":{"m":{}},"list":[{}]"#).is_empty());
}

#[test]
fn what_a_boolean_additional_properties_holds_is_pruned_key_by_key() {
    // What the key holds is pruned with no schema: every key of an object in it is unknown, and
    // no deeper (the pruning deletes it).
    assert_eq!(
        errors(r#""open":{"x":{"a":1,"b":[{"c":1}]},"y":2}"#),
        [r#"unknown field "open.x.a""#, r#"unknown field "open.x.b""#]
    );
    assert_eq!(
        errors(r#""list":[{"q":[{"z":1}]}]"#),
        [
            r#"unknown field "list[0].q[0].z""#,
            r#"list[0]: Invalid value: "q": list[0].q in body is a forbidden property"#,
        ]
    );
    // The key itself is kept, and counts: a `false` one still refuses it.
    assert_eq!(
        errors(r#""spec":{"more":{"a":1}}"#),
        [
            r#"unknown field "spec.more.a""#,
            r#"spec: Invalid value: "more": spec.more in body is a forbidden property"#,
        ]
    );
}

#[test]
fn a_default_under_a_false_additional_properties_is_refused_as_kube_openapi_refuses_it() {
    // kubectl-validate 1.35's answer on the CRD (in Go's map order; sorted here).
    let crd = r#"{"spec":{"versions":[{"name":"v1","schema":{"openAPIV3Schema":{"type":"object","properties":{
      "spec":{"type":"object","additionalProperties":false,"default":{"extra":1}},
      "other":{"type":"object","properties":{"m":{"type":"object","additionalProperties":false}},"default":{"m":{"x":1}}},
      "third":{"type":"object","additionalProperties":false,"default":{"more":{"a":1}}}}}}}]}}"#;
    let crd = json::read(crd, Everything, 128).unwrap();
    let mut found: Vec<String> = crate::checks::object_validation::crd::validate(&crd, None, 35)
        .iter()
        .map(ToString::to_string)
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            r#"spec.validation.openAPIV3Schema.properties[other].default.m: Invalid value: "x": m.x in body is a forbidden property"#,
            r#"spec.validation.openAPIV3Schema.properties[spec].default: Invalid value: "extra": .extra in body is a forbidden property"#,
            r#"spec.validation.openAPIV3Schema.properties[third].default: Invalid value: "more": .more in body is a forbidden property"#,
            r#"spec.validation.openAPIV3Schema.properties[third].default: Invalid value: {"more":{"a":1}}: must not have unknown fields"#,
        ]
    );
}
