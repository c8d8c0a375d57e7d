//! A CustomResourceDefinition's own validation, the part of apiextensions-apiserver's
//! `ValidateCustomResourceDefinition` (`pkg/apis/apiextensions/validation/validation.go`) a typo
//! in a manifest meets and that is certain offline: a schema's `type` that is none of OpenAPI
//! v3's (`strign`), refused as `field.NotSupported` with the supported types.
//!
//! The API server validates the CRD in its internal version, into which
//! `Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_CustomResourceDefinitionSpec`
//! (`pkg/apis/apiextensions/v1/conversion.go`) hoists a schema every version shares to
//! `spec.validation`: the error's path is then `spec.validation.openAPIV3Schema...`, and
//! `spec.versions[i].schema.openAPIV3Schema...` where the versions' schemas differ. The finding
//! is located at the field in the manifest, under `spec.versions[i]` either way.
//!
//! On an update, an old CRD that already had such a type turns the rule off
//! (`requireValidPropertyType`: "don't tighten validation on existing persisted data").
//!
//! Nothing here is crd-schema-fields' (a schema keyword the API server drops or a CRD that does
//! not round-trip) or crd-safe-upgrade's (a change between two versions of a CRD).

use super::field_error::{BadValue, FieldError};
use crate::json::Node;

/// The types a CRD schema may name (`openapiV3Types`), sorted as `sets.String.List` gives them.
const OPENAPI_V3_TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// The errors the API server gives `crd` (a CustomResourceDefinition of
/// `apiextensions.k8s.io/v1`), `old` the CRD it replaces on an update.
pub fn validate(crd: &Node<'_>, old: Option<&Node<'_>>) -> Vec<FieldError> {
    if old.is_some_and(has_invalid_types) {
        return Vec::new();
    }
    let mut errors = Vec::new();
    let Some(Node::Array(versions)) = crd.at(&["spec", "versions"]) else {
        return errors;
    };
    // `apiequality.Semantic.DeepEqual` of every version's `schema` with the first's.
    let first = versions.first().and_then(schema_of);
    let hoisted = versions.iter().all(|v| match (schema_of(v), first) {
        (Some(a), Some(b)) => same(a, b),
        (None, None) => true,
        _ => false,
    });
    for (i, version) in versions.iter().enumerate() {
        let Some(schema) = schema_of(version).and_then(|s| s.get("openAPIV3Schema")) else {
            continue;
        };
        let at = format!("spec.versions[{i}].schema.openAPIV3Schema");
        if hoisted {
            // One schema, validated once, at the path of the internal version.
            if i == 0 {
                walk(schema, "spec.validation.openAPIV3Schema", &at, &mut errors);
            }
        } else {
            walk(schema, &at, &at, &mut errors);
        }
    }
    errors
}

/// A version's `schema`, none when absent or `null`.
fn schema_of<'n, 'j>(version: &'n Node<'j>) -> Option<&'n Node<'j>> {
    version.get("schema").filter(|s| !s.is_null())
}

/// Whether any schema of `crd` names a type OpenAPI v3 does not have (`specHasInvalidTypes`).
fn has_invalid_types(crd: &Node<'_>) -> bool {
    let Some(Node::Array(versions)) = crd.at(&["spec", "versions"]) else {
        return false;
    };
    versions.iter().any(|v| {
        let mut errors = Vec::new();
        if let Some(schema) = v.at(&["schema", "openAPIV3Schema"]) {
            walk(schema, "", "", &mut errors);
        }
        !errors.is_empty()
    })
}

/// Checks `schema` (at `path` as the API server names it, at `at` in the manifest) and every
/// schema it holds, as `ValidateCustomResourceDefinitionOpenAPISchema` recurses.
fn walk(schema: &Node<'_>, path: &str, at: &str, errors: &mut Vec<FieldError>) {
    if let Some(kind) = schema.get("type").and_then(Node::as_str)
        && !kind.is_empty()
        && !OPENAPI_V3_TYPES.contains(&kind)
    {
        let valid: Vec<String> = OPENAPI_V3_TYPES.iter().map(|t| t.to_string()).collect();
        let mut error = FieldError::not_supported(format!("{path}.type"), BadValue::Str(kind.to_string()), &valid);
        error.at = format!("{at}.type");
        errors.push(error);
    }
    let mut child = |node: &Node<'_>, step: &str| {
        if matches!(node, Node::Object(_)) {
            walk(node, &format!("{path}{step}"), &format!("{at}{step}"), errors);
        }
    };
    for keyed in ["properties", "definitions", "dependencies"] {
        if let Some(entries) = schema.get(keyed).and_then(Node::as_object) {
            for (key, value) in entries {
                child(value, &format!(".{keyed}[{key}]"));
            }
        }
    }
    for single in ["additionalProperties", "not"] {
        if let Some(node) = schema.get(single) {
            child(node, &format!(".{single}"));
        }
    }
    for listed in ["allOf", "oneOf", "anyOf"] {
        if let Some(Node::Array(items)) = schema.get(listed) {
            for (i, item) in items.iter().enumerate() {
                child(item, &format!(".{listed}[{i}]"));
            }
        }
    }
    match schema.get("items") {
        Some(Node::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                child(item, &format!(".items[{i}]"));
            }
        }
        Some(items) => child(items, ".items"),
        None => {}
    }
}

/// Whether two JSON values are equal as decoded values: objects whatever their keys' order (the
/// last of duplicate keys), numbers by value.
fn same(a: &Node<'_>, b: &Node<'_>) -> bool {
    match (a, b) {
        (Node::Object(x), Node::Object(y)) => {
            let keys = |entries: &[(std::borrow::Cow<'_, str>, Node<'_>)]| {
                let mut keys: Vec<String> = entries.iter().map(|(k, _)| k.to_string()).collect();
                keys.sort();
                keys.dedup();
                keys
            };
            let (kx, ky) = (keys(x), keys(y));
            kx == ky
                && kx
                    .iter()
                    .all(|k| matches!((a.get(k), b.get(k)), (Some(p), Some(q)) if same(p, q)))
        }
        (Node::Array(x), Node::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
        (Node::Str(x), Node::Str(y)) => x == y,
        (Node::Bool(x), Node::Bool(y)) => x == y,
        (Node::Null, Node::Null) => true,
        _ => match (a.number(), b.number()) {
            (Some(x), Some(y)) => x.as_f64() == y.as_f64(),
            _ => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    fn errors(crd: &str, old: Option<&str>) -> Vec<(String, String)> {
        let crd = json::read(crd, json::Everything, usize::MAX).unwrap();
        let old = old.map(|o| json::read(o, json::Everything, usize::MAX).unwrap());
        validate(&crd, old.as_ref())
            .into_iter()
            .map(|e| (e.to_string(), e.at))
            .collect()
    }

    fn version(name: &str, message_type: &str) -> String {
        format!(
            r#"{{"name":"{name}","served":true,"storage":{},"schema":{{"openAPIV3Schema":{{"type":"object","properties":{{"spec":{{"type":"object","properties":{{"message":{{"type":"{message_type}"}}}}}}}}}}}}}}"#,
            name == "v1"
        )
    }

    fn crd(versions: &[String]) -> String {
        format!(
            r#"{{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{{"versions":[{}]}}}}"#,
            versions.join(",")
        )
    }

    const UNSUPPORTED: &str =
        r#"Unsupported value: "strign": supported values: "array", "boolean", "integer", "number", "object", "string""#;

    #[test]
    fn a_type_typo_is_refused_at_the_hoisted_path_when_versions_share_the_schema() {
        // kubectl-validate's `error_crd_typo.yaml`: one version, so its schema is hoisted.
        assert_eq!(
            errors(&crd(&[version("v1", "strign")]), None),
            [(
                format!("spec.validation.openAPIV3Schema.properties[spec].properties[message].type: {UNSUPPORTED}"),
                "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[message].type".to_string()
            )]
        );
        // Two versions with one schema: said once, at the hoisted path.
        assert_eq!(
            errors(&crd(&[version("v1", "strign"), version("v2", "strign")]), None).len(),
            1
        );
        // Valid types, and no type at all, are accepted.
        for valid in OPENAPI_V3_TYPES {
            assert!(errors(&crd(&[version("v1", valid)]), None).is_empty(), "{valid}");
        }
        assert!(errors(&crd(&[version("v1", "")]), None).is_empty());
    }

    #[test]
    fn versions_with_different_schemas_are_named_each() {
        let found = errors(&crd(&[version("v1", "string"), version("v2", "strign")]), None);
        assert_eq!(
            found,
            [(
                format!(
                    "spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[message].type: {UNSUPPORTED}"
                ),
                "spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[message].type".to_string()
            )]
        );
    }

    #[test]
    fn every_nested_schema_is_checked() {
        let schema = r#"{"type":"object","properties":{"a":{"type":"array","items":{"type":"int"}},
          "b":{"type":"object","additionalProperties":{"type":"map"}},
          "c":{"allOf":[{"type":"str"}],"anyOf":[{"not":{"type":"bool"}}],"oneOf":[{"type":"integer"}]}}}"#;
        let crd = format!(r#"{{"spec":{{"versions":[{{"name":"v1","schema":{{"openAPIV3Schema":{schema}}}}}]}}}}"#);
        let fields: Vec<String> = errors(&crd, None)
            .into_iter()
            .map(|(text, _)| text.split(':').next().unwrap().to_string())
            .collect();
        assert_eq!(
            fields,
            [
                "spec.validation.openAPIV3Schema.properties[a].items.type",
                "spec.validation.openAPIV3Schema.properties[b].additionalProperties.type",
                "spec.validation.openAPIV3Schema.properties[c].allOf[0].type",
                "spec.validation.openAPIV3Schema.properties[c].anyOf[0].not.type",
            ]
        );
    }

    #[test]
    fn an_update_of_a_crd_that_had_an_invalid_type_is_not_tightened() {
        let old = crd(&[version("v1", "strign")]);
        assert!(errors(&crd(&[version("v1", "strign")]), Some(&old)).is_empty());
        let valid_before = crd(&[version("v1", "string")]);
        assert_eq!(errors(&crd(&[version("v1", "strign")]), Some(&valid_before)).len(), 1);
    }
}
