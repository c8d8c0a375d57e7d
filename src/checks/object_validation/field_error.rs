//! The API server's field error (`k8s.io/apimachinery/pkg/util/validation/field`, `errors.go`):
//! a field path, an error type, the bad value and a detail, printed exactly as `field.Error`
//! prints (`spec.replicas: Invalid value: "string": spec.replicas in body must be of type
//! integer: "string"`).
//!
//! The printing rules, from `(*Error).ErrorBody`: `Required value`, `Forbidden`, `Too long` (and
//! `Internal error`) print no value; the other types print it after the type, a string as Go's
//! `%q` quotes it, an `int64`, `float64` or `bool` as `%v` prints it, anything else as
//! `encoding/json` marshals it; a non-empty detail follows after `: `.

use crate::json::{Canonical, Node, Number};
use std::fmt;

/// The type of a field error, as `field.ErrorType` prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorType {
    /// `Not found`.
    NotFound,
    /// `Required value`.
    Required,
    /// `Duplicate value`.
    Duplicate,
    /// `Invalid value` (`field.Invalid`).
    Invalid,
    /// `Invalid value` (`field.TypeInvalid`, reason `FieldValueTypeInvalid`).
    TypeInvalid,
    /// `Unsupported value`.
    NotSupported,
    /// `Forbidden`.
    Forbidden,
    /// `Too long`.
    TooLong,
    /// `Too many`.
    TooMany,
    /// A field the schema does not declare, as strict field validation reports it: printed
    /// `unknown field "<path>"` (apiextensions-apiserver's `schemaCoercingDecoder`), not as a
    /// `field.Error`.
    UnknownField,
}

impl ErrorType {
    /// The type as `field.ErrorType.String` prints it.
    pub fn text(self) -> &'static str {
        match self {
            ErrorType::NotFound => "Not found",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::UnknownField => "unknown field",
        }
    }

    /// The reason the API server's Status gives a cause of this type (`FieldValueInvalid`).
    pub fn reason(self) -> &'static str {
        match self {
            ErrorType::NotFound => "FieldValueNotFound",
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::UnknownField => "FieldValueUnknown",
        }
    }
}

/// A field error's bad value, already in the form `ErrorBody` prints.
#[derive(Debug, Clone, PartialEq)]
pub enum BadValue {
    /// No value printed (the types that print none, or `field.OmitValueType`).
    Omit,
    /// A Go string: printed as `%q`.
    Str(String),
    /// A Go `int64`: printed as `%v`.
    Int(i64),
    /// A Go `float64`: printed as `%v`.
    Float(f64),
    /// A Go `bool`.
    Bool(bool),
    /// Any other value, as `encoding/json` marshals it.
    Json(String),
}

impl BadValue {
    /// The value of a JSON node as the API server's unstructured decoder holds it (integers as
    /// `int64`, other numbers as `float64`, strings, booleans; objects, arrays and `null`
    /// marshalled).
    pub fn of(node: &Node<'_>) -> BadValue {
        match node {
            Node::Str(s) => BadValue::Str(s.to_string()),
            Node::Bool(b) => BadValue::Bool(*b),
            _ => match node.number() {
                Some(Number::I64(n)) => BadValue::Int(n),
                Some(Number::U64(n)) => match i64::try_from(n) {
                    Ok(n) => BadValue::Int(n),
                    Err(_) => BadValue::Float(n as f64),
                },
                Some(Number::F64(x)) => BadValue::Float(x),
                None => BadValue::Json(go_json(node)),
            },
        }
    }
}

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadValue::Omit => Ok(()),
            BadValue::Str(s) => f.write_str(&go_quote(s)),
            BadValue::Int(n) => write!(f, "{n}"),
            BadValue::Float(x) => f.write_str(&go_float(*x)),
            BadValue::Bool(b) => write!(f, "{b}"),
            BadValue::Json(text) => f.write_str(text),
        }
    }
}

/// One field error.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// Its type.
    pub kind: ErrorType,
    /// The field path as the message prints it (`spec.containers[0].ports[0].protocol`; the
    /// API server prints `<nil>` for the errors its schema validator reports without a path).
    pub field: String,
    /// The path of the field in the object, to locate it (the same as `field` except for the
    /// errors printed at `<nil>`, which name the field in their detail).
    pub at: String,
    /// The bad value.
    pub value: BadValue,
    /// The detail after the value.
    pub detail: String,
    /// Whether a CEL rule (`x-kubernetes-validations`) reported it.
    pub cel: bool,
}

impl FieldError {
    /// An error of `kind` at `field`.
    pub fn new(kind: ErrorType, field: impl Into<String>, value: BadValue, detail: impl Into<String>) -> FieldError {
        let field = field.into();
        FieldError {
            kind,
            at: field.clone(),
            field,
            value,
            detail: detail.into(),
            cel: false,
        }
    }

    /// `field.Required(path, detail)`.
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> FieldError {
        FieldError::new(ErrorType::Required, field, BadValue::Omit, detail)
    }

    /// `field.Invalid(path, value, detail)`.
    pub fn invalid(field: impl Into<String>, value: BadValue, detail: impl Into<String>) -> FieldError {
        FieldError::new(ErrorType::Invalid, field, value, detail)
    }

    /// `field.Forbidden(path, detail)`.
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> FieldError {
        FieldError::new(ErrorType::Forbidden, field, BadValue::Omit, detail)
    }

    /// `field.NotSupported(path, value, validValues)`: the valid values quoted as `%q`.
    pub fn not_supported(field: impl Into<String>, value: BadValue, valid: &[String]) -> FieldError {
        let detail = if valid.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = valid.iter().map(|v| go_quote(v)).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        FieldError::new(ErrorType::NotSupported, field, value, detail)
    }

    /// `field.TooLong(path, _, maxLength)`: `may not be more than N bytes`.
    pub fn too_long(field: impl Into<String>, max: i64) -> FieldError {
        let detail = if max >= 0 {
            format!("may not be more than {max} {}", if max == 1 { "byte" } else { "bytes" })
        } else {
            "value is too long".to_string()
        };
        FieldError::new(ErrorType::TooLong, field, BadValue::Omit, detail)
    }

    /// `field.TooMany(path, actual, max)`: `must have at most N items`.
    pub fn too_many(field: impl Into<String>, actual: i64, max: i64) -> FieldError {
        let detail = if max >= 0 {
            format!("must have at most {max} {}", if max == 1 { "item" } else { "items" })
        } else {
            "has too many items".to_string()
        };
        let value = if actual >= 0 {
            BadValue::Int(actual)
        } else {
            BadValue::Omit
        };
        FieldError::new(ErrorType::TooMany, field, value, detail)
    }

    /// `field.Duplicate(path, value)`.
    pub fn duplicate(field: impl Into<String>, value: BadValue) -> FieldError {
        FieldError::new(ErrorType::Duplicate, field, value, "")
    }

    /// A field strict field validation reports as unknown.
    pub fn unknown_field(field: impl Into<String>) -> FieldError {
        FieldError::new(ErrorType::UnknownField, field, BadValue::Omit, "")
    }

    /// The error without its field, as `(*Error).ErrorBody` prints it (a cause's `message`).
    pub fn body(&self) -> String {
        if self.kind == ErrorType::UnknownField {
            return format!("unknown field {}", go_quote(&self.field));
        }
        let mut body = self.kind.text().to_string();
        let prints_value = !matches!(
            self.kind,
            ErrorType::Required | ErrorType::Forbidden | ErrorType::TooLong
        );
        if prints_value && self.value != BadValue::Omit {
            body.push_str(": ");
            body.push_str(&self.value.to_string());
        }
        if !self.detail.is_empty() {
            body.push_str(": ");
            body.push_str(&self.detail);
        }
        body
    }
}

impl fmt::Display for FieldError {
    /// The error as `(*Error).Error` prints it: `<field>: <body>` (an unknown field as strict
    /// decoding prints it).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind == ErrorType::UnknownField {
            return f.write_str(&self.body());
        }
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// A string as Go's `strconv.Quote` (`%q`) writes it: in double quotes, `"` and `\` escaped,
/// the usual control escapes, other non-printable characters as `\x`, `\u` or `\U`.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}') => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A `float64` as Go's `%v` prints it: `%g` with the shortest precision, so the `%e` form
/// (`1e+06`, two exponent digits at least) when the exponent is below -4 or at least 6
/// (`strconv`'s `ftoa.go`: the shortest precision decides at 6), else plain.
pub fn go_float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    // Rust's `{:e}` gives the shortest digits that read back exactly, as Go's shortest does.
    let sci = format!("{x:e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if !(-4..6).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    } else {
        format!("{x}")
    }
}

/// A JSON value as Go's `encoding/json` marshals the API server's unstructured value: compact,
/// object keys sorted, `<`, `>`, `&`, U+2028 and U+2029 escaped.
pub fn go_json(node: &Node<'_>) -> String {
    let text = Canonical(node).to_string();
    if !text.contains(['<', '>', '&', '\u{2028}', '\u{2029}']) {
        return text;
    }
    // These characters occur only inside strings in JSON text, so replacing them everywhere is
    // exactly Go's string escaping.
    text.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{self, Everything};

    #[test]
    fn errors_print_as_the_api_server_prints_them() {
        // kubectl-validate testcases/manifests/error_enum_invalid.yaml (the API server's Status).
        let valid = ["SCTP", "TCP", "UDP"].map(String::from);
        let error = FieldError::not_supported(
            "spec.containers[0].ports[0].protocol",
            BadValue::Str("udp".into()),
            &valid,
        );
        assert_eq!(
            error.to_string(),
            r#"spec.containers[0].ports[0].protocol: Unsupported value: "udp": supported values: "SCTP", "TCP", "UDP""#
        );
        assert_eq!(error.kind.reason(), "FieldValueNotSupported");
        // testcases/manifests/error_array_instead_of_map.yaml.
        let error = FieldError::new(
            ErrorType::TypeInvalid,
            "data",
            BadValue::Str("array".into()),
            r#"data in body must be of type object: "array""#,
        );
        assert_eq!(
            error.to_string(),
            r#"data: Invalid value: "array": data in body must be of type object: "array""#
        );
        // testcases/manifests/error_missing_name.yaml.
        assert_eq!(
            FieldError::required("metadata.name", "name or generateName is required").to_string(),
            "metadata.name: Required value: name or generateName is required"
        );
        assert_eq!(
            FieldError::required("spec.foo", "").to_string(),
            "spec.foo: Required value"
        );
        assert_eq!(
            FieldError::too_long("spec.name", 5).to_string(),
            "spec.name: Too long: may not be more than 5 bytes"
        );
        assert_eq!(
            FieldError::too_long("spec.name", 1).to_string(),
            "spec.name: Too long: may not be more than 1 byte"
        );
        assert_eq!(
            FieldError::too_many("spec.list", 3, 2).to_string(),
            "spec.list: Too many: 3: must have at most 2 items"
        );
        assert_eq!(
            FieldError::unknown_field("spec.contAIN3rz").to_string(),
            r#"unknown field "spec.contAIN3rz""#
        );
    }

    #[test]
    fn duplicates_print_their_value_as_go_marshals_it() {
        // kubectl-validate testcases/manifests/error_x_list_map_duplicate_key.yaml.
        let node = json::read(r#"{"protocol":"TCP","containerPort":88}"#, Everything, 64).unwrap();
        assert_eq!(
            FieldError::duplicate("spec.containers[0].ports[2]", BadValue::of(&node)).to_string(),
            r#"spec.containers[0].ports[2]: Duplicate value: {"containerPort":88,"protocol":"TCP"}"#
        );
        let node = json::read(r#"["<a&b>"]"#, Everything, 64).unwrap();
        assert_eq!(go_json(&node), r#"["\u003ca\u0026b\u003e"]"#);
    }

    #[test]
    fn values_print_as_go_prints_them() {
        assert_eq!(go_quote("a\"b\\c\n\u{1}é"), r#""a\"b\\c\n\x01é""#);
        assert_eq!(go_float(5.0), "5");
        assert_eq!(go_float(0.5), "0.5");
        assert_eq!(go_float(1e6), "1e+06");
        assert_eq!(go_float(123456789.0), "1.23456789e+08");
        assert_eq!(go_float(0.0001), "0.0001");
        assert_eq!(go_float(0.00001), "1e-05");
        assert_eq!(go_float(-2.5), "-2.5");
        assert_eq!(BadValue::Int(-3).to_string(), "-3");
        assert_eq!(BadValue::Bool(true).to_string(), "true");
    }
}
