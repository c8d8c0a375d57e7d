//! A JSON value as the CEL value its schema makes of it, as the API server converts it
//! (`k8s.io/apiserver/pkg/cel/common/valuesunstructured.go`): `integer` as `int`, `number` as
//! `double`, `x-kubernetes-int-or-string` as `int` or `string`, strings of `format: byte` as
//! `bytes`, of `duration` as a `duration`, of `date` and `date-time` as a `timestamp`, objects
//! with properties (and embedded resources) as objects whose fields are the escaped property
//! names, objects with `additionalProperties` as maps, arrays as lists.

use super::SchemaView;
use super::escaping::escape;
use crate::json::Node;
use cel::Value;
use cel::objects::{Key, Map};
use std::collections::HashMap;
use std::sync::Arc;

/// A value the API server's conversion refuses, with its message.
pub type Invalid = String;

/// The CEL value of `node` under `schema`.
pub fn to_value<'s, S: SchemaView<'s>>(node: &Node<'_>, schema: S) -> Result<Value, Invalid> {
    if node.is_null() {
        return if schema.nullable() {
            Ok(Value::Null)
        } else {
            Err("invalid data, got null for schema with nullable=false".to_owned())
        };
    }
    if schema.int_or_string() {
        return match node {
            Node::Str(s) => Ok(Value::String(Arc::new(s.to_string()))),
            _ => match node.number().and_then(integer) {
                Some(i) => Ok(Value::Int(i)),
                None => Err("invalid data, expected XIntOrString value to be either a string or integer".to_owned()),
            },
        };
    }
    match schema.type_name() {
        Some("object") => {
            let Node::Object(entries) = node else {
                return Err("invalid data, expected a map for the provided schema with type=object".to_owned());
            };
            let mut map = HashMap::with_capacity(entries.len());
            if schema.embedded_resource() || schema.has_properties() {
                // An embedded resource (and a resource's root, which its view reports as one)
                // has apiVersion, kind and metadata's name and generateName whatever its
                // schema declares (`WithTypeAndObjectMeta`).
                for (key, value) in crate::json::Members::of(entries).iter() {
                    let Some(name) = escape(key) else { continue };
                    let converted = match (schema.property(key), schema.embedded_resource(), key) {
                        (_, true, "apiVersion" | "kind") => match value {
                            Node::Str(s) => Value::String(Arc::new(s.to_string())),
                            _ => return Err(format!("invalid data, expected string, got {}", go_type(value))),
                        },
                        (_, true, "metadata") => object_meta(value)?,
                        (Some(property), _, _) => to_value(value, property)?,
                        (None, _, _) => continue,
                    };
                    map.insert(Key::String(Arc::new(name)), converted);
                }
            } else if let Some(values) = schema.additional_properties() {
                for (key, value) in crate::json::Members::of(entries).iter() {
                    map.insert(Key::String(Arc::new(key.to_owned())), to_value(value, values)?);
                }
            }
            Ok(Value::Map(Map { map: Arc::new(map) }))
        }
        Some("array") => {
            let Node::Array(elements) = node else {
                return Err("invalid data, expected an array for the provided schema with type=array".to_owned());
            };
            let Some(items) = schema.items() else {
                return Err("invalid array type, expected Items with a non-empty Schema".to_owned());
            };
            let list = elements
                .iter()
                .map(|e| to_value(e, items))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Value::List(Arc::new(list)))
        }
        Some("string") => {
            let Node::Str(s) = node else {
                return Err(format!("invalid data, expected string, got {}", go_type(node)));
            };
            string(s, schema.format())
        }
        Some("number") => match node.number() {
            Some(n) => Ok(Value::Float(n.as_f64())),
            None => Err(format!("invalid data, expected float, got {}", go_type(node))),
        },
        Some("integer") => match node.number().and_then(integer) {
            Some(i) => Ok(Value::Int(i)),
            None => Err(format!("invalid data, expected int, got {}", go_type(node))),
        },
        Some("boolean") => match node {
            Node::Bool(b) => Ok(Value::Bool(*b)),
            _ => Err(format!("invalid data, expected bool, got {}", go_type(node))),
        },
        _ => Err(format!("unsupported type: {}", schema.type_name().unwrap_or(""))),
    }
}

/// An embedded resource's `metadata`: its `name` and `generateName` only.
fn object_meta(node: &Node<'_>) -> Result<Value, Invalid> {
    let Node::Object(entries) = node else {
        return Err("invalid data, expected a map for the provided schema with type=object".to_owned());
    };
    let mut map = HashMap::new();
    for (key, value) in crate::json::Members::of(entries).iter() {
        if key == "name" || key == "generateName" {
            let Node::Str(s) = value else {
                return Err(format!("invalid data, expected string, got {}", go_type(value)));
            };
            map.insert(
                Key::String(Arc::new(key.to_owned())),
                Value::String(Arc::new(s.to_string())),
            );
        }
    }
    Ok(Value::Map(Map { map: Arc::new(map) }))
}

/// A JSON integer as an `int`, when it is one that fits.
fn integer(n: crate::json::Number) -> Option<i64> {
    match n {
        crate::json::Number::U64(u) => i64::try_from(u).ok(),
        crate::json::Number::I64(i) => Some(i),
        crate::json::Number::F64(_) => None,
    }
}

/// The Go type the API server names for a JSON value it did not expect.
fn go_type(node: &Node<'_>) -> &'static str {
    match node {
        Node::Str(_) => "string",
        Node::Bool(_) => "bool",
        Node::U64(_) | Node::I64(_) => "int64",
        Node::F64(_) => "float64",
        Node::Array(_) => "[]interface {}",
        Node::Object(_) => "map[string]interface {}",
        _ => "<nil>",
    }
}

/// A string under its `format`.
fn string(s: &str, format: Option<&str>) -> Result<Value, Invalid> {
    match format {
        Some("duration") => parse_duration(s)
            .map(Value::Duration)
            .ok_or_else(|| format!("Invalid duration {s}: time: invalid duration \"{s}\"")),
        Some("date") => chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .ok()
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|t| Value::Timestamp(t.and_utc().fixed_offset()))
            .ok_or_else(|| format!("Invalid date formatted string {s}")),
        Some("date-time") => parse_date_time(s)
            .map(Value::Timestamp)
            .ok_or_else(|| format!("Invalid date-time formatted string {s}")),
        Some("byte") => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .decode(s)
                .map(|b| Value::Bytes(Arc::new(b)))
                .map_err(|e| format!("Invalid byte formatted string {s}: {e}"))
        }
        _ => Ok(Value::String(Arc::new(s.to_owned()))),
    }
}

/// A date-time as go-openapi's `strfmt.ParseDateTime` reads it: RFC 3339, with or without
/// fractional seconds, `T` or a space between date and time (a lenient subset: the layouts it
/// tries all parse as RFC 3339 with chrono).
pub fn parse_date_time(s: &str) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    chrono::DateTime::parse_from_rfc3339(s).ok()
}

/// A duration as Go's `time.ParseDuration` reads it (`1h30m`, `-1.5s`, `300ms`): the form
/// `strfmt.ParseDuration` tries first. By hand: the `cel` crate keeps its parser private.
pub fn parse_duration(s: &str) -> Option<chrono::Duration> {
    let (negative, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Some(chrono::Duration::zero());
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 {
            return None;
        }
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let nanos = match &rest[..unit] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        rest = &rest[unit..];
        total += number * nanos;
    }
    if total > i64::MAX as f64 {
        return None;
    }
    let nanos = total as i64;
    Some(chrono::Duration::nanoseconds(if negative { -nanos } else { nanos }))
}
