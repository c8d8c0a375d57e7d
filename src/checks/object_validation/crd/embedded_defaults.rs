//! A default of an embedded resource, or holding one (`ValidateDefaults`,
//! `pkg/apiserver/schema/defaulting/validation.go`): before kube-openapi sees it, the API server
//! coerces and validates the `apiVersion`, `kind` and `metadata` of every embedded resource in it
//! (`objectmeta.Coerce`, then `objectmeta.Validate`, `pkg/apiserver/schema/objectmeta`), and
//! judges nothing more of the default when either finds something:
//! - coercion stops at the first `apiVersion` or `kind` that is not a string
//!   (`...default.apiVersion: Invalid value: 1: must be a string`), so it is said only when there
//!   is one such;
//! - validation (`validateEmbeddedResource`) requires both (`...default.kind: Required value`), and
//!   refuses an empty one (`Invalid value: "": must not be empty`), an `apiVersion` that is no
//!   group version (`unexpected GroupVersion string: a/b/c`) and a `kind` whose lower case is no
//!   DNS-1035 label (`may have mixed case, but should otherwise match: ...`).
//!
//! Not judged (the default says nothing): an embedded resource with `metadata` (decoded into
//! `ObjectMeta`, rewritten, then validated by `ValidateObjectMeta`, none of it followed here) or
//! with CEL rules of its own (compiled with it as their root).

use super::super::field_error::{BadValue, FieldError};
use super::super::metadata::is_dns1035_label;
use super::super::schema::{Additional, Schema};
use crate::json::Node;

/// What the API server's object-meta steps make of a default.
pub(super) enum Meta {
    /// Not followed here: nothing is said of the default.
    Uncertain,
    /// Refused: these errors, and nothing more of the default.
    Refused(Vec<FieldError>),
    /// Nothing found (or no embedded resource reached): kube-openapi judges it next.
    Clean,
}

/// The object-meta steps on `value`, the default of schema node `index`, at `path` (the node's
/// path as the API server names it; the errors are under `path.default`).
pub(super) fn judge(schema: &Schema, index: usize, value: &Node<'_>, path: &str) -> Meta {
    let mut found = Found::default();
    if visit(schema, index, value, &format!("{path}.default"), &mut found).is_none() {
        return Meta::Uncertain;
    }
    match found.coerced.len() {
        0 if found.invalid.is_empty() => Meta::Clean,
        0 => Meta::Refused(found.invalid),
        1 => Meta::Refused(found.coerced),
        // Coercion stops at the first of them in Go's map order.
        _ => Meta::Uncertain,
    }
}

/// The errors of the two steps.
#[derive(Default)]
struct Found {
    /// `Coerce`'s (it stops at the first).
    coerced: Vec<FieldError>,
    /// `Validate`'s.
    invalid: Vec<FieldError>,
}

/// Walks `value` with schema node `index` as `coerce` and `validate` do (properties, then
/// `additionalProperties`, items); none when it reaches what is not followed here.
fn visit(schema: &Schema, index: usize, value: &Node<'_>, field: &str, found: &mut Found) -> Option<()> {
    let at = schema.resolve(index);
    let node = schema.node(at);
    match value {
        Node::Object(entries) => {
            if node.embedded_resource {
                embedded(schema, index, at, value, field, found)?;
            }
            for (key, member) in entries {
                if let Some(child) = node.property(key) {
                    visit(schema, child, member, &format!("{field}.{key}"), found)?;
                } else if let Additional::Schema(child) = node.additional_properties {
                    visit(schema, child, member, &format!("{field}[{key}]"), found)?;
                }
            }
        }
        Node::Array(items) => {
            if let Some(child) = node.items {
                for (i, item) in items.iter().enumerate() {
                    visit(schema, child, item, &format!("{field}[{i}]"), found)?;
                }
            }
        }
        _ => {}
    }
    Some(())
}

/// One embedded resource's `apiVersion` and `kind` (`coerce`, `validateEmbeddedResource`).
fn embedded(schema: &Schema, index: usize, at: usize, value: &Node<'_>, field: &str, found: &mut Found) -> Option<()> {
    if value.get("metadata").is_some() || schema.has_rules(index) || schema.has_rules(at) {
        return None;
    }
    for key in ["apiVersion", "kind"] {
        let path = format!("{field}.{key}");
        match value.get(key) {
            None => found.invalid.push(FieldError::required(path, "")),
            Some(Node::Str(text)) => {
                let detail = if text.is_empty() {
                    Some("must not be empty".to_string())
                } else if key == "apiVersion" {
                    (text.matches('/').count() > 1).then(|| format!("unexpected GroupVersion string: {text}"))
                } else {
                    let errors = is_dns1035_label(&text.to_lowercase());
                    (!errors.is_empty())
                        .then(|| format!("may have mixed case, but should otherwise match: {}", errors.join(",")))
                };
                if let Some(detail) = detail {
                    found
                        .invalid
                        .push(FieldError::invalid(path, BadValue::Str(text.to_string()), detail));
                }
            }
            Some(other) => {
                found.coerced.push(FieldError::invalid(
                    path.clone(),
                    BadValue::of(other),
                    "must be a string",
                ));
                found
                    .invalid
                    .push(FieldError::invalid(path, BadValue::of(other), "must be a string"));
            }
        }
    }
    Some(())
}
