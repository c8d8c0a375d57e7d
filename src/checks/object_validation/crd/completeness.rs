//! `validateStructuralCompleteness` (apiextensions-apiserver `pkg/apiserver/schema/complete.go`):
//! every value validation of the root schema (its `not`, `allOf`, `anyOf` and `oneOf`, and the
//! `items` and `properties` they name, at any depth) must have a structural counterpart, a field
//! or `items` the schema itself declares at the same place: `...openAPIV3Schema.properties[foo]:
//! Required value: because it is defined in ...openAPIV3Schema.allOf[0].properties[foo]`.
//!
//! As upstream, only the root's value validations are followed (`validateStructuralCompleteness`
//! starts at the root and never descends into the structural properties' own `allOf`...), and
//! with the options a CRD is validated with (`ValidateStructural`): a property named only by a
//! value validation is refused even where the structural schema has `additionalProperties`
//! (`AllowValidationPropertiesWithAdditionalProperties` off), and a nested `additionalProperties`
//! is not followed (`AllowNestedAdditionalProperties` off: the structural rules refuse it).
//! The errors join the structural schema's, sorted with them; each is located at the value
//! validation that names the field.

use super::super::field_error::FieldError;
use super::items_schema;
use crate::json::Node;

/// A place in the schema: its path as the API server names it and its path in the manifest.
#[derive(Clone, Copy)]
struct At<'p> {
    path: &'p str,
    at: &'p str,
}

/// The completeness errors of the root schema `schema`, at `path` as the API server names it and
/// `at` in the manifest.
pub(super) fn check(schema: &Node<'_>, path: &str, at: &str, errors: &mut Vec<FieldError>) {
    let place = At { path, at };
    value_validation(schema, Some(schema), place, place, errors);
}

/// `validateValueValidationCompleteness`: the `not`, `allOf`, `anyOf` and `oneOf` of `v` (a schema
/// whose value validations are read), against the structural schema `s`.
fn value_validation(v: &Node<'_>, s: Option<&Node<'_>>, s_at: At<'_>, v_at: At<'_>, errors: &mut Vec<FieldError>) {
    let Some(s) = s else {
        errors.push(required(s_at, v_at));
        return;
    };
    if let Some(not @ Node::Object(_)) = v.get("not") {
        let (path, at) = (format!("{}.not", v_at.path), format!("{}.not", v_at.at));
        nested(not, Some(s), s_at, At { path: &path, at: &at }, errors);
    }
    for listed in ["allOf", "anyOf", "oneOf"] {
        if let Some(Node::Array(items)) = v.get(listed) {
            for (i, item) in items.iter().enumerate() {
                let (path, at) = (
                    format!("{}.{listed}[{i}]", v_at.path),
                    format!("{}.{listed}[{i}]", v_at.at),
                );
                nested(item, Some(s), s_at, At { path: &path, at: &at }, errors);
            }
        }
    }
}

/// `validateNestedValueValidationCompleteness`: a value validation `v` (a schema under `not`,
/// `allOf`, `anyOf` or `oneOf`, or one its `items` or `properties` name) against the structural
/// schema `s` at the same place.
fn nested(v: &Node<'_>, s: Option<&Node<'_>>, s_at: At<'_>, v_at: At<'_>, errors: &mut Vec<FieldError>) {
    if !matches!(v, Node::Object(_)) {
        return;
    }
    let Some(s) = s else {
        errors.push(required(s_at, v_at));
        return;
    };
    value_validation(v, Some(s), s_at, v_at, errors);
    if let Some(items) = items_schema(v) {
        let (s_path, s_loc) = (format!("{}.items", s_at.path), format!("{}.items", s_at.at));
        let (v_path, v_loc) = (format!("{}.items", v_at.path), format!("{}.items", v_at.at));
        nested(
            items,
            items_schema(s),
            At {
                path: &s_path,
                at: &s_loc,
            },
            At {
                path: &v_path,
                at: &v_loc,
            },
            errors,
        );
    }
    if let Some(entries) = v.get("properties").and_then(Node::as_object) {
        for (key, v_field) in entries {
            let step = format!(".properties[{key}]");
            let (s_path, s_loc) = (format!("{}{step}", s_at.path), format!("{}{step}", s_at.at));
            let (v_path, v_loc) = (format!("{}{step}", v_at.path), format!("{}{step}", v_at.at));
            let s_place = At {
                path: &s_path,
                at: &s_loc,
            };
            let v_place = At {
                path: &v_path,
                at: &v_loc,
            };
            match s.get("properties").and_then(|p| p.get(key)) {
                Some(s_field) => nested(v_field, Some(s_field), s_place, v_place, errors),
                None => errors.push(required(s_place, v_place)),
            }
        }
    }
}

/// The field the structural schema lacks, named where the value validation defines it.
fn required(s_at: At<'_>, v_at: At<'_>) -> FieldError {
    let mut error = FieldError::required(s_at.path, format!("because it is defined in {}", v_at.path));
    error.at = v_at.at.to_string();
    error
}

#[cfg(test)]
mod tests {
    use crate::checks::object_validation::NEWEST_MINOR;
    use crate::json;

    /// The errors of a CRD of one version whose root schema is `root`, each with where it is.
    fn errors(root: &str) -> Vec<(String, String)> {
        let crd = format!(r#"{{"spec":{{"versions":[{{"name":"v1","schema":{{"openAPIV3Schema":{root}}}}}]}}}}"#);
        let crd = json::read(&crd, json::Everything, usize::MAX).unwrap();
        super::super::validate(&crd, None, NEWEST_MINOR)
            .into_iter()
            .map(|e| (e.to_string(), e.at))
            .collect()
    }

    const ROOT: &str = "spec.validation.openAPIV3Schema";
    const AT: &str = "spec.versions[0].schema.openAPIV3Schema";

    #[test]
    fn a_field_only_a_value_validation_of_the_root_names_is_required_and_defaults_are_not_judged() {
        // kubectl-validate 1.35 on this CRD: the three completeness errors, sorted, and neither
        // the nested `allOf` of `spec` (not followed) nor the default beyond its maximum (the
        // defaults are judged only when the structural schema has no error).
        let root = r#"{"type":"object",
          "allOf":[{"properties":{"foo":{"minLength":2},"spec":{"properties":{"x":{"maxLength":3}},"items":{"minLength":1}}}}],
          "properties":{"spec":{"type":"object","allOf":[{"properties":{"y":{"minLength":1}}}],
            "properties":{"replicas":{"type":"integer","maximum":3,"default":5}}}}}"#;
        assert_eq!(
            errors(root),
            [
                (
                    format!(
                        "{ROOT}.properties[foo]: Required value: because it is defined in {ROOT}.allOf[0].properties[foo]"
                    ),
                    format!("{AT}.allOf[0].properties[foo]")
                ),
                (
                    format!(
                        "{ROOT}.properties[spec].items: Required value: because it is defined in {ROOT}.allOf[0].properties[spec].items"
                    ),
                    format!("{AT}.allOf[0].properties[spec].items")
                ),
                (
                    format!(
                        "{ROOT}.properties[spec].properties[x]: Required value: because it is defined in {ROOT}.allOf[0].properties[spec].properties[x]"
                    ),
                    format!("{AT}.allOf[0].properties[spec].properties[x]")
                ),
            ]
        );
    }

    #[test]
    fn every_value_validation_of_the_root_is_followed_and_a_complete_one_says_nothing() {
        // `not`, `anyOf` and `oneOf` and the value validations they hold.
        let root = r#"{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}}},
          "not":{"properties":{"b":{}}},
          "anyOf":[{"properties":{"a":{"items":{"minLength":1}}}},{"oneOf":[{"properties":{"c":{}}}]}]}"#;
        let found: Vec<String> = errors(root).into_iter().map(|(text, _)| text).collect();
        assert_eq!(
            found,
            [
                format!("{ROOT}.properties[b]: Required value: because it is defined in {ROOT}.not.properties[b]"),
                format!(
                    "{ROOT}.properties[c]: Required value: because it is defined in {ROOT}.anyOf[1].oneOf[0].properties[c]"
                ),
            ]
        );
        // A property of `additionalProperties` is no counterpart
        // (`AllowValidationPropertiesWithAdditionalProperties` is off for CRDs).
        let root = r#"{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"}}},
          "allOf":[{"properties":{"m":{"properties":{"k":{"minLength":1}}}}}]}"#;
        assert_eq!(
            errors(root)[0].0,
            format!(
                "{ROOT}.properties[m].properties[k]: Required value: because it is defined in {ROOT}.allOf[0].properties[m].properties[k]"
            )
        );
        let complete = r#"{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}},"b":{"type":"string"}},
          "anyOf":[{"required":["a"]},{"properties":{"a":{"items":{"minLength":1}},"b":{"minLength":1}}}]}"#;
        assert!(errors(complete).is_empty());
    }
}
