//! A CustomResourceDefinition's own validation, the part of apiextensions-apiserver's
//! `ValidateCustomResourceDefinition` (`pkg/apis/apiextensions/validation/validation.go`) a
//! manifest meets and that is certain offline, each schema's keywords as
//! `ValidateCustomResourceDefinitionOpenAPISchema` checks them:
//! - a `type` that is none of OpenAPI v3's (`strign`), `field.NotSupported`;
//! - `uniqueItems: true`, forbidden ("the runtime complexity becomes quadratic");
//! - `x-kubernetes-preserve-unknown-fields: false` ("must be true or undefined");
//! - an `x-kubernetes-map-type` other than `atomic` or `granular`, an `x-kubernetes-list-type`
//!   other than `atomic`, `set` or `map`;
//! - a list of type `set` or `map` whose items are `nullable`, and a key of a `map` list
//!   (`x-kubernetes-list-map-keys`) that is neither required nor defaulted, or is `nullable`
//!   (`validateMapListKeysMapSet`).
//!
//! The errors of a schema's own keywords come as the API server gives them: its type and
//! `uniqueItems` before the schemas it holds, the extensions after them.
//!
//! The API server validates the CRD in its internal version, into which
//! `Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_CustomResourceDefinitionSpec`
//! (`pkg/apis/apiextensions/v1/conversion.go`) hoists a schema every version shares to
//! `spec.validation`: the error's path is then `spec.validation.openAPIV3Schema...`, and
//! `spec.versions[i].schema.openAPIV3Schema...` where the versions' schemas differ. The finding
//! is located at the field in the manifest, under `spec.versions[i]` either way.
//!
//! On an update, two rules are off when the old CRD already broke them, as
//! `ValidateCustomResourceDefinitionUpdate` sets its options ("don't tighten validation on
//! existing persisted data"): the types (`requireValidPropertyType`) and the `set` and `map`
//! lists' items and keys (`requireMapListKeysMapSetValidation`); the others hold on every write.
//!
//! Not checked, among others: a `map` list without keys, a `set` of non-atomic items, list-map
//! keys that are missing or not scalars, a list or map type on a schema of another type,
//! `definitions`, `dependencies` and `$ref`, a `nullable` root; a `default` that does not validate against its schema (`ValidateDefaults`,
//! whose messages name the default's value as the root of kube-openapi's validator, a form no
//! test of the sources shows), the structural schema rules, the CEL rules' compilation and cost
//! (object-validation compiles the rules when it judges a custom resource).
//!
//! Nothing here is crd-schema-fields' (a schema keyword the API server drops or a CRD that does
//! not round-trip) or crd-safe-upgrade's (a change between two versions of a CRD).

use super::field_error::{BadValue, FieldError};
use crate::json::Node;

/// The types a CRD schema may name (`openapiV3Types`), sorted as `sets.String.List` gives them.
const OPENAPI_V3_TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// Which of the rules that an update relaxes apply (`validationOptions`).
#[derive(Clone, Copy)]
struct Options {
    /// `requireValidPropertyType`.
    valid_property_type: bool,
    /// `requireMapListKeysMapSetValidation`.
    map_list_keys_map_set: bool,
    /// The rules no update relaxes.
    always: bool,
}

/// The errors the API server gives `crd` (a CustomResourceDefinition of
/// `apiextensions.k8s.io/v1`), `old` the CRD it replaces on an update.
pub fn validate(crd: &Node<'_>, old: Option<&Node<'_>>) -> Vec<FieldError> {
    let options = Options {
        valid_property_type: !old.is_some_and(|old| any_schema_breaks(old, Rule::PropertyType)),
        map_list_keys_map_set: !old.is_some_and(|old| any_schema_breaks(old, Rule::MapListKeysMapSet)),
        always: true,
    };
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
                walk(schema, "spec.validation.openAPIV3Schema", &at, options, &mut errors);
            }
        } else {
            walk(schema, &at, &at, options, &mut errors);
        }
    }
    errors
}

/// A version's `schema`, none when absent or `null`.
fn schema_of<'n, 'j>(version: &'n Node<'j>) -> Option<&'n Node<'j>> {
    version.get("schema").filter(|s| !s.is_null())
}

/// A rule an update relaxes when the old CRD breaks it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// `specHasInvalidTypes`.
    PropertyType,
    /// `hasInvalidMapListKeysMapSet`.
    MapListKeysMapSet,
}

/// Whether any schema of `crd` breaks `rule`.
fn any_schema_breaks(crd: &Node<'_>, rule: Rule) -> bool {
    let Some(Node::Array(versions)) = crd.at(&["spec", "versions"]) else {
        return false;
    };
    let only = Options {
        valid_property_type: rule == Rule::PropertyType,
        map_list_keys_map_set: rule == Rule::MapListKeysMapSet,
        always: false,
    };
    versions.iter().any(|v| {
        let mut errors = Vec::new();
        if let Some(schema) = v.at(&["schema", "openAPIV3Schema"]) {
            walk(schema, "", "", only, &mut errors);
        }
        !errors.is_empty()
    })
}

/// An error at `path` + `step` as the API server names it, located at `at` + `step`.
fn at_step(mut error: FieldError, at: &str, step: &str) -> FieldError {
    error.at = format!("{at}{step}");
    error
}

/// A string member of a schema.
fn text<'n>(schema: &'n Node<'_>, key: &str) -> Option<&'n str> {
    schema.get(key).and_then(Node::as_str)
}

/// Checks `schema` (at `path` as the API server names it, at `at` in the manifest) and every
/// schema it holds, as `ValidateCustomResourceDefinitionOpenAPISchema` recurses.
fn walk(schema: &Node<'_>, path: &str, at: &str, options: Options, errors: &mut Vec<FieldError>) {
    let kind = text(schema, "type").unwrap_or_default();
    if options.valid_property_type && !kind.is_empty() && !OPENAPI_V3_TYPES.contains(&kind) {
        let valid: Vec<String> = OPENAPI_V3_TYPES.iter().map(|t| t.to_string()).collect();
        let error = FieldError::not_supported(format!("{path}.type"), BadValue::Str(kind.to_string()), &valid);
        errors.push(at_step(error, at, ".type"));
    }
    if options.always && schema.get("uniqueItems").and_then(Node::as_bool) == Some(true) {
        let error = FieldError::forbidden(
            format!("{path}.uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        );
        errors.push(at_step(error, at, ".uniqueItems"));
    }
    let mut child = |node: &Node<'_>, step: &str| {
        if matches!(node, Node::Object(_)) {
            walk(node, &format!("{path}{step}"), &format!("{at}{step}"), options, errors);
        }
    };
    if let Some(node) = schema.get("additionalProperties") {
        child(node, ".additionalProperties");
    }
    for keyed in ["properties"] {
        if let Some(entries) = schema.get(keyed).and_then(Node::as_object) {
            for (key, value) in entries {
                child(value, &format!(".{keyed}[{key}]"));
            }
        }
    }
    if let Some(node) = schema.get("not") {
        child(node, ".not");
    }
    for listed in ["allOf", "oneOf", "anyOf"] {
        if let Some(Node::Array(items)) = schema.get(listed) {
            for (i, item) in items.iter().enumerate() {
                child(item, &format!(".{listed}[{i}]"));
            }
        }
    }
    if let Some(entries) = schema.get("definitions").and_then(Node::as_object) {
        for (key, value) in entries {
            child(value, &format!(".definitions[{key}]"));
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
    if let Some(entries) = schema.get("dependencies").and_then(Node::as_object) {
        for (key, value) in entries {
            child(value, &format!(".dependencies[{key}]"));
        }
    }
    extensions(schema, path, at, options, errors);
}

/// The errors of a schema's Kubernetes extensions, after those of the schemas it holds.
fn extensions(schema: &Node<'_>, path: &str, at: &str, options: Options, errors: &mut Vec<FieldError>) {
    let mut push = |error: FieldError, step: &str| errors.push(at_step(error, at, step));
    if options.always
        && schema
            .get("x-kubernetes-preserve-unknown-fields")
            .and_then(Node::as_bool)
            == Some(false)
    {
        let step = ".x-kubernetes-preserve-unknown-fields";
        push(
            FieldError::invalid(
                format!("{path}{step}"),
                BadValue::Bool(false),
                "must be true or undefined",
            ),
            step,
        );
    }
    if let Some(map_type) = text(schema, "x-kubernetes-map-type")
        && options.always
        && !matches!(map_type, "atomic" | "granular")
    {
        let step = ".x-kubernetes-map-type";
        let valid = ["atomic".to_string(), "granular".to_string()];
        push(
            FieldError::not_supported(format!("{path}{step}"), BadValue::Str(map_type.to_string()), &valid),
            step,
        );
    }
    let list_type = text(schema, "x-kubernetes-list-type");
    if let Some(list_type) = list_type
        && options.always
        && !matches!(list_type, "atomic" | "set" | "map")
    {
        let step = ".x-kubernetes-list-type";
        let valid = ["atomic".to_string(), "set".to_string(), "map".to_string()];
        push(
            FieldError::not_supported(format!("{path}{step}"), BadValue::Str(list_type.to_string()), &valid),
            step,
        );
    }
    // `validateMapListKeysMapSet`.
    let items = schema.get("items").filter(|items| matches!(items, Node::Object(_)));
    if !options.map_list_keys_map_set {
        return;
    }
    let (Some(list_type @ ("set" | "map")), Some(items)) = (list_type, items) else {
        return;
    };
    if items.get("nullable").and_then(Node::as_bool) == Some(true) {
        let step = ".items.nullable";
        push(
            FieldError::forbidden(
                format!("{path}{step}"),
                format!("cannot be nullable when x-kubernetes-list-type is {list_type}"),
            ),
            step,
        );
    }
    if list_type != "map" {
        return;
    }
    let required: Vec<&str> = match items.get("required") {
        Some(Node::Array(names)) => names.iter().filter_map(Node::as_str).collect(),
        _ => Vec::new(),
    };
    let Some(Node::Array(keys)) = schema.get("x-kubernetes-list-map-keys") else {
        return;
    };
    for key in keys.iter().filter_map(Node::as_str) {
        let Some(property) = items.get("properties").and_then(|p| p.get(key)) else {
            continue;
        };
        let has_default = property.get("default").is_some_and(|d| !d.is_null());
        if !required.contains(&key) && !has_default {
            let step = format!(".items.properties[{key}].default");
            push(
                FieldError::required(
                    format!("{path}{step}"),
                    "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                ),
                &step,
            );
        }
        if property.get("nullable").and_then(Node::as_bool) == Some(true) {
            let step = format!(".items.properties[{key}].nullable");
            push(
                FieldError::forbidden(
                    format!("{path}{step}"),
                    "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                ),
                &step,
            );
        }
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

    /// A CRD of one version whose schema's `spec` is `spec`.
    fn with_spec(spec: &str) -> String {
        format!(
            r#"{{"spec":{{"versions":[{{"name":"v1","schema":{{"openAPIV3Schema":{{"type":"object","properties":{{"spec":{spec}}}}}}}}}]}}}}"#
        )
    }

    const ROOT: &str = "spec.validation.openAPIV3Schema.properties[spec]";

    #[test]
    fn unique_items_and_preserve_unknown_fields_false_are_refused() {
        let found = errors(
            &with_spec(
                r#"{"type":"object","x-kubernetes-preserve-unknown-fields":false,
                "properties":{"l":{"type":"array","uniqueItems":true,"items":{"type":"string"}}}}"#,
            ),
            None,
        );
        assert_eq!(
            found,
            [
                (
                    format!(
                        "{ROOT}.properties[l].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
                    ),
                    "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[l].uniqueItems".to_string()
                ),
                (
                    format!(
                        "{ROOT}.x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined"
                    ),
                    "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-preserve-unknown-fields"
                        .to_string()
                ),
            ]
        );
        let valid = with_spec(
            r#"{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"l":{"type":"array","uniqueItems":false}}}"#,
        );
        assert!(errors(&valid, None).is_empty());
        // No update relaxes them.
        let old = with_spec(r#"{"type":"array","uniqueItems":true}"#);
        assert_eq!(errors(&old, Some(&old)).len(), 1);
    }

    #[test]
    fn map_and_list_types_are_the_supported_ones() {
        // Properties in the manifest's order (Go ranges over a map).
        let found: Vec<String> = errors(
            &with_spec(
                r#"{"type":"object","properties":{"m":{"type":"object","x-kubernetes-map-type":"merge"},
                "l":{"type":"array","x-kubernetes-list-type":"list","items":{"type":"string"}}}}"#,
            ),
            None,
        )
        .into_iter()
        .map(|(text, _)| text)
        .collect();
        assert_eq!(
            found,
            [
                format!(
                    "{ROOT}.properties[m].x-kubernetes-map-type: Unsupported value: \"merge\": supported values: \"atomic\", \"granular\""
                ),
                format!(
                    "{ROOT}.properties[l].x-kubernetes-list-type: Unsupported value: \"list\": supported values: \"atomic\", \"set\", \"map\""
                ),
            ]
        );
        for valid in [
            r#"{"type":"object","x-kubernetes-map-type":"atomic"}"#,
            r#"{"type":"object","x-kubernetes-map-type":"granular"}"#,
            r#"{"type":"array","x-kubernetes-list-type":"atomic","items":{"type":"string"}}"#,
            r#"{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}}"#,
        ] {
            assert!(errors(&with_spec(valid), None).is_empty(), "{valid}");
        }
    }

    #[test]
    fn list_map_keys_must_be_required_or_defaulted_and_not_nullable() {
        let list = |items: &str| {
            with_spec(&format!(
                r#"{{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name","port"],"items":{items}}}"#
            ))
        };
        let bad = list(
            r#"{"type":"object","nullable":true,"properties":{"name":{"type":"string","nullable":true},"port":{"type":"integer"}}}"#,
        );
        let found: Vec<String> = errors(&bad, None).into_iter().map(|(text, _)| text).collect();
        assert_eq!(
            found,
            [
                format!("{ROOT}.items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is map"),
                format!(
                    "{ROOT}.items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"
                ),
                format!(
                    "{ROOT}.items.properties[name].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable"
                ),
                format!(
                    "{ROOT}.items.properties[port].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"
                ),
            ]
        );
        let good = list(
            r#"{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"port":{"type":"integer","default":80}}}"#,
        );
        assert!(errors(&good, None).is_empty());
        // An update of a CRD that already had such a list keeps it (and any other).
        assert!(errors(&bad, Some(&bad)).is_empty());
        assert_eq!(errors(&bad, Some(&good)).len(), 4);
    }

    #[test]
    fn an_update_of_a_crd_that_had_an_invalid_type_is_not_tightened() {
        let old = crd(&[version("v1", "strign")]);
        assert!(errors(&crd(&[version("v1", "strign")]), Some(&old)).is_empty());
        let valid_before = crd(&[version("v1", "string")]);
        assert_eq!(errors(&crd(&[version("v1", "strign")]), Some(&valid_before)).len(), 1);
    }
}
