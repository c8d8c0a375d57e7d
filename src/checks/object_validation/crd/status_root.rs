//! The status subresource's limits on the root schema (`validateCustomResourceDefinitionValidation`
//! in apiextensions-apiserver's `pkg/apis/apiextensions/validation/validation.go`): where the
//! status subresource is enabled, `status` is extracted as `properties["status"]`, so the root
//! may only say what survives that. The API server walks the internal `JSONSchemaProps` in its
//! fields' order, skips those at their zero value and stops at the first that breaks the rule:
//! - a `type` other than `object`: `spec.validation.openAPIV3Schema.type: Invalid value: "string":
//!   only "object" is allowed as the type at the root of the schema if the status subresource is
//!   enabled`;
//! - a field not in `allowedFieldsAtRootSchema`: `spec.validation.openAPIV3Schema: Invalid value:
//!   {"ID":"",...}: only [Description Type ...] fields are allowed at the root of the schema if
//!   the status subresource is enabled`, the value the whole root schema as `encoding/json`
//!   marshals the internal type (Go's field names, every field, `null` for those unset:
//!   [`internal_json`]).
//!
//! An empty list or map (`enum: []`, `allOf: []`, `definitions: {}`...) is a field at its zero
//! value or not depending on whether the client sent it as empty or left it out (Go's
//! `reflect.DeepEqual` tells a nil slice from an empty one): it does not count alone. The error
//! is located at the root schema's first offending member (its `type` for the first).

use super::super::field_error::{BadValue, FieldError, go_json};
use crate::json::{Node, Number};

/// `allowedFieldsAtRootSchema`, as `%v` prints it.
const ALLOWED: &str = "[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations]";

/// Whether a root member the rule forbids is set: certainly (`Some(true)`), only if the client
/// sent an empty collection as such (`Some(false)`), or not (`None`).
fn forbidden_member(schema: &Node<'_>, key: &str) -> Option<bool> {
    let value = schema.get(key).filter(|value| !value.is_null())?;
    match key {
        // Go strings: zero when empty.
        "id" | "$schema" => value.as_str().is_some_and(|s| !s.is_empty()).then_some(true),
        // Go booleans.
        "nullable" | "x-kubernetes-embedded-resource" | "x-kubernetes-int-or-string" => {
            (value.as_bool() == Some(true)).then_some(true)
        }
        // Go slices and maps: an empty one is as the client sent it.
        "enum"
        | "allOf"
        | "oneOf"
        | "anyOf"
        | "x-kubernetes-list-map-keys"
        | "patternProperties"
        | "dependencies"
        | "definitions" => Some(match value {
            Node::Array(items) => !items.is_empty(),
            Node::Object(entries) => !entries.is_empty(),
            _ => true,
        }),
        // Go pointers, set whatever they point to.
        _ => Some(true),
    }
}

/// The root's members the rule forbids, in the internal type's field order (`type` is judged
/// between `$ref` and `nullable`).
const FORBIDDEN: [&str; 23] = [
    "id",
    "$schema",
    "$ref",
    "type",
    "nullable",
    "default",
    "enum",
    "maxProperties",
    "minProperties",
    "allOf",
    "oneOf",
    "anyOf",
    "not",
    "additionalProperties",
    "patternProperties",
    "dependencies",
    "additionalItems",
    "definitions",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
];

/// The error the status subresource's limits give the root schema `schema` (at `path` as the
/// API server names it, `at` in the manifest), if any.
pub(super) fn check(schema: &Node<'_>, path: &str, at: &str) -> Option<FieldError> {
    for key in FORBIDDEN {
        if key == "type" {
            let kind = schema.get("type").and_then(Node::as_str).unwrap_or_default();
            if !kind.is_empty() && kind != "object" {
                let mut error = FieldError::invalid(
                    format!("{path}.type"),
                    BadValue::Str(kind.to_string()),
                    "only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled",
                );
                error.at = format!("{at}.type");
                return Some(error);
            }
            continue;
        }
        // An empty collection before it changes nothing: the API server stops there or here,
        // with the same message.
        if forbidden_member(schema, key) == Some(true) {
            let value = internal_json(schema)?;
            let mut error = FieldError::invalid(
                path.to_string(),
                BadValue::Json(value),
                format!(
                    "only {ALLOWED} fields are allowed at the root of the schema if the status subresource is enabled"
                ),
            );
            error.at = format!("{at}.{key}");
            return Some(error);
        }
    }
    None
}

/// How a member of the internal type is written, by its Go type.
#[derive(Clone, Copy)]
enum Go {
    /// `string`: `""` when unset.
    Str,
    /// `*string`.
    StrPointer,
    /// `bool`: `false` when unset.
    Bool,
    /// `*bool`.
    BoolPointer,
    /// `*float64`.
    Float,
    /// `*int64`.
    Int,
    /// `*JSON`: the value as the unstructured decoder holds it.
    Value,
    /// `[]JSON`.
    Values,
    /// `[]string`.
    Strings,
    /// `*JSONSchemaProps`.
    Schema,
    /// `[]JSONSchemaProps`.
    Schemas,
    /// `map[string]JSONSchemaProps`.
    SchemaMap,
    /// `*JSONSchemaPropsOrArray` (`items`).
    OrArray,
    /// `*JSONSchemaPropsOrBool`.
    OrBool,
    /// `JSONSchemaDependencies`.
    Dependencies,
    /// `*ExternalDocumentation`.
    Docs,
    /// `ValidationRules`.
    Rules,
}

/// The internal `JSONSchemaProps`' fields in their order: Go's name, the v1 member it is read
/// from, its type.
const SCHEMA_FIELDS: [(&str, &str, Go); 44] = [
    ("ID", "id", Go::Str),
    ("Schema", "$schema", Go::Str),
    ("Ref", "$ref", Go::StrPointer),
    ("Description", "description", Go::Str),
    ("Type", "type", Go::Str),
    ("Nullable", "nullable", Go::Bool),
    ("Format", "format", Go::Str),
    ("Title", "title", Go::Str),
    ("Default", "default", Go::Value),
    ("Maximum", "maximum", Go::Float),
    ("ExclusiveMaximum", "exclusiveMaximum", Go::Bool),
    ("Minimum", "minimum", Go::Float),
    ("ExclusiveMinimum", "exclusiveMinimum", Go::Bool),
    ("MaxLength", "maxLength", Go::Int),
    ("MinLength", "minLength", Go::Int),
    ("Pattern", "pattern", Go::Str),
    ("MaxItems", "maxItems", Go::Int),
    ("MinItems", "minItems", Go::Int),
    ("UniqueItems", "uniqueItems", Go::Bool),
    ("MultipleOf", "multipleOf", Go::Float),
    ("Enum", "enum", Go::Values),
    ("MaxProperties", "maxProperties", Go::Int),
    ("MinProperties", "minProperties", Go::Int),
    ("Required", "required", Go::Strings),
    ("Items", "items", Go::OrArray),
    ("AllOf", "allOf", Go::Schemas),
    ("OneOf", "oneOf", Go::Schemas),
    ("AnyOf", "anyOf", Go::Schemas),
    ("Not", "not", Go::Schema),
    ("Properties", "properties", Go::SchemaMap),
    ("AdditionalProperties", "additionalProperties", Go::OrBool),
    ("PatternProperties", "patternProperties", Go::SchemaMap),
    ("Dependencies", "dependencies", Go::Dependencies),
    ("AdditionalItems", "additionalItems", Go::OrBool),
    ("Definitions", "definitions", Go::SchemaMap),
    ("ExternalDocs", "externalDocs", Go::Docs),
    ("Example", "example", Go::Value),
    (
        "XPreserveUnknownFields",
        "x-kubernetes-preserve-unknown-fields",
        Go::BoolPointer,
    ),
    ("XEmbeddedResource", "x-kubernetes-embedded-resource", Go::Bool),
    ("XIntOrString", "x-kubernetes-int-or-string", Go::Bool),
    ("XListMapKeys", "x-kubernetes-list-map-keys", Go::Strings),
    ("XListType", "x-kubernetes-list-type", Go::StrPointer),
    ("XMapType", "x-kubernetes-map-type", Go::StrPointer),
    ("XValidations", "x-kubernetes-validations", Go::Rules),
];

/// `ExternalDocumentation`'s fields.
const DOCS_FIELDS: [(&str, &str, Go); 2] = [("Description", "description", Go::Str), ("URL", "url", Go::Str)];

/// `ValidationRule`'s fields.
const RULE_FIELDS: [(&str, &str, Go); 6] = [
    ("Rule", "rule", Go::Str),
    ("Message", "message", Go::Str),
    ("MessageExpression", "messageExpression", Go::Str),
    ("Reason", "reason", Go::StrPointer),
    ("FieldPath", "fieldPath", Go::Str),
    ("OptionalOldSelf", "optionalOldSelf", Go::BoolPointer),
];

/// A string as `encoding/json` writes it.
fn string(s: &str, out: &mut String) {
    out.push_str(&go_json(&Node::Str(s.into())));
}

/// A `float64` as `encoding/json` writes it: `%f`'s shortest digits, or the `e` form below 1e-6
/// and from 1e21 on (`e-7`, `e+21`).
fn float(x: f64, out: &mut String) {
    let abs = x.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let sci = format!("{x:e}");
        let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
        let exponent: i32 = exponent.parse().unwrap_or(0);
        let sign = if exponent < 0 { '-' } else { '+' };
        let width = if exponent < 0 { 1 } else { 2 };
        out.push_str(&format!("{mantissa}e{sign}{:0width$}", exponent.abs()));
    } else {
        out.push_str(&format!("{x}"));
    }
}

/// The internal `JSONSchemaProps` converted from the v1 schema `node`, as `encoding/json`
/// marshals it (`pkg/apis/apiextensions/types_jsonschema.go`: no JSON tags, so every field by
/// its Go name, in its order). None where a member does not decode into its Go type (the API
/// server refuses the CRD then, with another message).
pub fn internal_json(node: &Node<'_>) -> Option<String> {
    let mut out = String::new();
    structure(node, &SCHEMA_FIELDS, &mut out)?;
    Some(out)
}

/// A Go struct read from `node` (an object; `null` decodes to the zero value), its `fields` in
/// order.
fn structure(node: &Node<'_>, fields: &[(&str, &str, Go)], out: &mut String) -> Option<()> {
    if !matches!(node, Node::Object(_) | Node::Null) {
        return None;
    }
    out.push('{');
    for (i, (name, key, go)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('"');
        out.push_str(name);
        out.push_str("\":");
        member(node.get(key).filter(|value| !value.is_null()), *go, out)?;
    }
    out.push('}');
    Some(())
}

/// A member of Go type `go` read from `value` (none when unset or `null`).
fn member(value: Option<&Node<'_>>, go: Go, out: &mut String) -> Option<()> {
    let Some(value) = value else {
        out.push_str(match go {
            Go::Str => "\"\"",
            Go::Bool => "false",
            _ => "null",
        });
        return Some(());
    };
    match (go, value) {
        (Go::Str | Go::StrPointer, Node::Str(s)) => string(s, out),
        (Go::Bool | Go::BoolPointer, Node::Bool(b)) => out.push_str(if *b { "true" } else { "false" }),
        (Go::Float, _) => float(value.number()?.as_f64(), out),
        (Go::Int, _) => match value.number()? {
            Number::I64(n) => out.push_str(&n.to_string()),
            Number::U64(n) => out.push_str(&i64::try_from(n).ok()?.to_string()),
            Number::F64(_) => return None,
        },
        (Go::Value, _) => out.push_str(&go_json(value)),
        (Go::Values | Go::Strings | Go::Schemas | Go::Rules, Node::Array(items)) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                match go {
                    Go::Values => out.push_str(&go_json(item)),
                    Go::Strings => string(item.as_str()?, out),
                    Go::Schemas => structure(item, &SCHEMA_FIELDS, out)?,
                    _ => structure(item, &RULE_FIELDS, out)?,
                }
            }
            out.push(']');
        }
        (Go::Schema, _) => structure(value, &SCHEMA_FIELDS, out)?,
        (Go::Docs, _) => structure(value, &DOCS_FIELDS, out)?,
        (Go::SchemaMap | Go::Dependencies, Node::Object(entries)) => {
            let mut keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_ref()).collect();
            keys.sort_unstable();
            keys.dedup();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                string(key, out);
                out.push(':');
                let entry = value.get(key)?;
                match (go, entry) {
                    (Go::SchemaMap, _) => structure(entry, &SCHEMA_FIELDS, out)?,
                    (_, Node::Object(_)) => {
                        out.push_str("{\"Schema\":");
                        structure(entry, &SCHEMA_FIELDS, out)?;
                        out.push_str(",\"Property\":null}");
                    }
                    (_, Node::Array(_)) => {
                        out.push_str("{\"Schema\":null,\"Property\":");
                        member(Some(entry), Go::Strings, out)?;
                        out.push('}');
                    }
                    _ => return None,
                }
            }
            out.push('}');
        }
        (Go::OrArray, Node::Object(_)) => {
            out.push_str("{\"Schema\":");
            structure(value, &SCHEMA_FIELDS, out)?;
            out.push_str(",\"JSONSchemas\":null}");
        }
        (Go::OrArray, Node::Array(_)) => {
            out.push_str("{\"Schema\":null,\"JSONSchemas\":");
            member(Some(value), Go::Schemas, out)?;
            out.push('}');
        }
        (Go::OrBool, Node::Bool(b)) => {
            out.push_str(if *b { "{\"Allows\":true" } else { "{\"Allows\":false" });
            out.push_str(",\"Schema\":null}");
        }
        (Go::OrBool, Node::Object(_)) => {
            out.push_str("{\"Allows\":true,\"Schema\":");
            structure(value, &SCHEMA_FIELDS, out)?;
            out.push('}');
        }
        _ => return None,
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use crate::checks::object_validation::NEWEST_MINOR;
    use crate::json;

    /// The errors of a CRD of one version whose root schema is `root`, with the status
    /// subresource when `status`.
    fn errors(root: &str, status: bool) -> Vec<(String, String)> {
        let subresources = if status { r#","subresources":{"status":{}}"# } else { "" };
        let crd = format!(
            r#"{{"spec":{{"versions":[{{"name":"v1"{subresources},"schema":{{"openAPIV3Schema":{root}}}}}]}}}}"#
        );
        let crd = json::read(&crd, json::Everything, usize::MAX).unwrap();
        super::super::validate(&crd, None, NEWEST_MINOR)
            .into_iter()
            .map(|e| (e.to_string(), e.at))
            .collect()
    }

    /// kubectl-validate 1.35's answer on a CRD whose root says `minProperties` beside the
    /// status subresource: the whole root schema printed as the internal type marshals.
    const MIN_PROPERTIES_ROOT: &str = r#"{"type":"object","x-kubernetes-preserve-unknown-fields":true,"minProperties":1,"description":"a <b> & c","maximum":1.5,"properties":{"spec":{"type":"object","default":{"a":1},"x-kubernetes-preserve-unknown-fields":true,"enum":[{"a":1}]},"list":{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"set"}},"required":["spec"],"x-kubernetes-validations":[{"rule":"true","message":"m","reason":"FieldValueForbidden"}]}"#;
    const MIN_PROPERTIES_ANSWER: &str = r#"spec.validation.openAPIV3Schema: Invalid value: {"ID":"","Schema":"","Ref":null,"Description":"a \u003cb\u003e \u0026 c","Type":"object","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":1.5,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":1,"Required":["spec"],"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":{"list":{"ID":"","Schema":"","Ref":null,"Description":"","Type":"array","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":null,"Required":null,"Items":{"Schema":{"ID":"","Schema":"","Ref":null,"Description":"","Type":"string","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":null,"Required":null,"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":null,"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":null},"JSONSchemas":null},"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":null,"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":"set","XMapType":null,"XValidations":null},"spec":{"ID":"","Schema":"","Ref":null,"Description":"","Type":"object","Nullable":false,"Format":"","Title":"","Default":{"a":1},"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":[{"a":1}],"MaxProperties":null,"MinProperties":null,"Required":null,"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":null,"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":true,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":null}},"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":true,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":[{"Rule":"true","Message":"m","MessageExpression":"","Reason":"FieldValueForbidden","FieldPath":"","OptionalOldSelf":null}]}: only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled"#;
    /// The same on a root whose fields exercise every member's printing (floats in the `e` form,
    /// `items`, `additionalProperties`, `anyOf`, `externalDocs`, `example`, CEL rules, HTML
    /// escapes); kubectl-validate also refuses its rule's `fieldPath`.
    const EVERY_MEMBER_ROOT: &str = r#"{"type":"object","minProperties":1,"externalDocs":{"url":"https://x/y?a=1&b=2"},"example":{"spec":{"n":1.5}},"properties":{"spec":{"type":"object","title":"T","x-kubernetes-map-type":"atomic","properties":{"n":{"type":"number","maximum":1e+21,"minimum":1e-07,"multipleOf":0.5,"exclusiveMaximum":true,"nullable":true},"i":{"type":"integer","format":"int32","maxLength":5,"enum":[1,2,null]},"m":{"type":"object","additionalProperties":{"type":"string","pattern":"^a$"}},"k":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],"items":{"type":"object","required":["name"],"properties":{"name":{"type":"string"}}}},"p":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]}}},"status":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"x-kubernetes-validations":[{"rule":"self.size() > 0","messageExpression":"'x'","fieldPath":".a","optionalOldSelf":true,"reason":"FieldValueInvalid","message":""}]}}}"#;
    const EVERY_MEMBER_ANSWER: &str = r#"spec.validation.openAPIV3Schema: Invalid value: {"ID":"","Schema":"","Ref":null,"Description":"","Type":"object","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":1,"Required":null,"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":{"spec":{"ID":"","Schema":"","Ref":null,"Description":"","Type":"object","Nullable":false,"Format":"","Title":"T","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":null,"Required":null,"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":{"i":{"ID":"","Schema":"","Ref":null,"Description":"","Type":"integer","Nullable":false,"Format":"int32","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":5,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":[1,2,null],"MaxProperties":null,"MinProperties":null,"Required":null,"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":null,"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":null},"k":{"ID":"","Schema":"","Ref":null,"Description":"","Type":"array","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":null,"Required":null,"Items":{"Schema":{"ID":"","Schema":"","Ref":null,"Description":"","Type":"object","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":null,"Required":["name"],"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":{"name":{"ID":"","Schema":"","Ref":null,"Description":"","Type":"string","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":null,"Required":null,"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":null,"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":null}},"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":null},"JSONSchemas":null},"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":null,"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":["name"],"XListType":"map","XMapType":null,"XValidations":null},"m":{"ID":"","Schema":"","Ref":null,"Description":"","Type":"object","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":null,"Required":null,"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":null,"AdditionalProperties":{"Allows":true,"Schema":{"ID":"","Schema":"","Ref":null,"Description":"","Type":"string","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"^a$","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":null,"Required":null,"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":null,"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":null}},"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":null},"n":{"ID":"","Schema":"","Ref":null,"Description":"","Type":"number","Nullable":true,"Format":"","Title":"","Default":null,"Maximum":1e+21,"ExclusiveMaximum":true,"Minimum":1e-7,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":0.5,"Enum":null,"MaxProperties":null,"MinProperties":null,"Required":null,"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":null,"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":null},"p":{"ID":"","Schema":"","Ref":null,"Description":"","Type":"","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":null,"Required":null,"Items":null,"AllOf":null,"OneOf":null,"AnyOf":[{"ID":"","Schema":"","Ref":null,"Description":"","Type":"integer","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":null,"Required":null,"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":null,"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":null},{"ID":"","Schema":"","Ref":null,"Description":"","Type":"string","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":null,"Required":null,"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":null,"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":null}],"Not":null,"Properties":null,"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":true,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":null}},"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":"atomic","XValidations":null},"status":{"ID":"","Schema":"","Ref":null,"Description":"","Type":"object","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":null,"Required":null,"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":null,"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":true,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":[{"Rule":"self.size() \u003e 0","Message":"","MessageExpression":"'x'","Reason":"FieldValueInvalid","FieldPath":".a","OptionalOldSelf":true}]}},"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":{"Description":"","URL":"https://x/y?a=1\u0026b=2"},"Example":{"spec":{"n":1.5}},"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":null}: only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled"#;

    #[test]
    fn a_root_field_the_status_subresource_forbids_is_refused_with_the_root_printed_as_go_marshals_it() {
        assert_eq!(
            errors(MIN_PROPERTIES_ROOT, true),
            [(
                MIN_PROPERTIES_ANSWER.to_string(),
                "spec.versions[0].schema.openAPIV3Schema.minProperties".to_string()
            )]
        );
        // kubectl-validate 1.35 then refuses the rule's `fieldPath` ([`super::super::crd_rules`]).
        let found = errors(EVERY_MEMBER_ROOT, true);
        assert_eq!(found[0].0, EVERY_MEMBER_ANSWER);
        assert_eq!(
            found[1].0,
            r#"spec.validation.openAPIV3Schema.properties[status].x-kubernetes-validations[0].fieldPath: Invalid value: ".a": must be a valid path"#
        );
        assert_eq!(found.len(), 2);
        // Without the status subresource, nothing.
        assert!(errors(MIN_PROPERTIES_ROOT, false).is_empty());
    }

    #[test]
    fn a_root_type_other_than_object_is_refused_first_and_the_walk_stops_there() {
        // kubectl-validate 1.35: the type, then `nullable` and the structural schema's error.
        let found: Vec<String> = errors(r#"{"type":"string","nullable":true}"#, true)
            .into_iter()
            .map(|(text, _)| text)
            .collect();
        assert_eq!(
            found,
            [
                r#"spec.validation.openAPIV3Schema.type: Invalid value: "string": only "object" is allowed as the type at the root of the schema if the status subresource is enabled"#,
                "spec.validation.openAPIV3Schema.nullable: Forbidden: nullable cannot be true at the root",
                r#"spec.validation.openAPIV3Schema.type: Invalid value: "string": must be object at the root"#,
            ]
        );
    }

    #[test]
    fn the_root_may_say_what_survives_extracting_status_and_empty_collections_do_not_count_alone() {
        for fine in [
            r#"{"type":"object","description":"d","required":["spec"],"x-kubernetes-preserve-unknown-fields":true,"properties":{"spec":{"type":"object"}},"x-kubernetes-validations":[{"rule":"true"}]}"#,
            r#"{"type":"object","enum":[],"allOf":[]}"#,
        ] {
            assert!(errors(fine, true).is_empty(), "{fine}");
        }
        // An empty collection beside a member that certainly breaks the rule: printed as sent.
        let found = errors(
            r#"{"type":"object","enum":[],"x-kubernetes-list-map-keys":["a"]}"#,
            true,
        );
        assert!(found[0].0.contains(r#""Enum":[],"#), "{found:?}");
        assert_eq!(
            found[0].1,
            "spec.versions[0].schema.openAPIV3Schema.x-kubernetes-list-map-keys"
        );
    }

    #[test]
    fn a_schema_keyword_at_the_root_is_said_without_the_status_subresource_and_refused_with_it() {
        // kubectl-validate 1.35 on both.
        assert_eq!(
            errors(r#"{"type":"object","$schema":"x"}"#, false)[0].0,
            r#"spec.validation.openAPIV3Schema: Invalid value: "": OpenAPIV3Schema 'schema' is not supported"#
        );
        let found = errors(r#"{"type":"object","$schema":"x"}"#, true);
        assert_eq!(found.len(), 1);
        assert!(
            found[0]
                .0
                .starts_with(r#"spec.validation.openAPIV3Schema: Invalid value: {"ID":"","Schema":"x","Ref":null,"#),
            "{found:?}"
        );
    }
}
