//! Kubernetes' format library (`library/format.go`, Kubernetes 1.31): `format.named(name)`,
//! one constructor per named format (`format.dns1123Label()`...) and `<Format>.validate(s)`,
//! which is none when `s` is valid and otherwise the validator's messages. The validators are
//! the ones object validation already has: apimachinery's name and label rules
//! ([`metadata`]) and kube-openapi's `strfmt` formats ([`format_valid`]).

use super::library::{no_overload, string_arg};
use super::url;
use crate::checks::object_validation::metadata::{self, NameRule};
use crate::checks::object_validation::schema::Format;
use crate::checks::object_validation::validate::format_valid;
use cel::objects::{Opaque, OptionalValue};
use cel::{ExecutionError, Value};
use std::sync::Arc;

/// The CEL type name of a format (`apiservercel.FormatType`).
pub const TYPE: &str = "kubernetes.NamedFormat";

/// The library's formats, by the names `format.named` takes (`ConstantFormats`).
pub const NAMES: [&str; 13] = [
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

/// The constructors' function names, `format.<name>`, in [`NAMES`]' order.
pub const CONSTRUCTORS: [&str; 13] = [
    "format.dns1123Label",
    "format.dns1123Subdomain",
    "format.dns1035Label",
    "format.qualifiedName",
    "format.dns1123LabelPrefix",
    "format.dns1123SubdomainPrefix",
    "format.dns1035LabelPrefix",
    "format.labelValue",
    "format.uri",
    "format.uuid",
    "format.byte",
    "format.date",
    "format.datetime",
];

/// The regular-expression size `validate` is charged for when the format is not known before the
/// rule runs: the largest of the library's `MaxRegexSize`s (the URI format's, govalidator's URL
/// pattern's length, which format.go writes as 1103), so the cost bound stays at least cel-go's.
pub const MAX_REGEX_SIZE: u64 = 1103;

/// The library's `MaxRegexSize` of the format `name` (a [`NAMES`] entry), as format.go sets it:
/// the name formats' own figures, the lengths of govalidator's Base64 pattern (84) and of
/// strfmt's UUID (70) and date-time (71) patterns, the URL pattern's for `uri`.
pub fn max_regex_size(name: &str) -> u64 {
    match name {
        "dns1123Label" | "dns1035Label" | "dns1123LabelPrefix" | "dns1035LabelPrefix" => 30,
        "dns1123Subdomain" | "qualifiedName" | "dns1123SubdomainPrefix" => 60,
        "labelValue" => 40,
        "uuid" => 70,
        "byte" => 84,
        "date" | "datetime" => 71,
        _ => MAX_REGEX_SIZE,
    }
}

/// One of the library's formats (its index in [`NAMES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamedFormat(usize);

impl Opaque for NamedFormat {
    fn runtime_type_name(&self) -> &str {
        TYPE
    }
}

impl NamedFormat {
    /// Its name, a [`NAMES`] entry.
    pub fn name(self) -> &'static str {
        NAMES[self.0]
    }

    /// The validator's messages for `text`, none when it is valid.
    fn messages(self, text: &str) -> Vec<String> {
        // Object validation judges with the latest minor's messages (label lengths in bytes).
        let minor = super::LATEST;
        let strfmt = |format: Format, message: &str| {
            if format_valid(format, text) {
                Vec::new()
            } else {
                vec![message.to_owned()]
            }
        };
        match NAMES[self.0] {
            "dns1123Label" => NameRule::Label.check(text, false),
            "dns1123Subdomain" => NameRule::Subdomain.check(text, false),
            "dns1035Label" => NameRule::Dns1035.check(text, false),
            "qualifiedName" => metadata::is_qualified_name(text, minor),
            "dns1123LabelPrefix" => NameRule::Label.check(text, true),
            "dns1123SubdomainPrefix" => NameRule::Subdomain.check(text, true),
            "dns1035LabelPrefix" => NameRule::Dns1035.check(text, true),
            "labelValue" => metadata::is_label_value(text, minor),
            // `url.ParseRequestURI`'s error.
            "uri" => url::parse_request_uri(text).err().into_iter().collect(),
            "uuid" => strfmt(Format::Uuid, "does not match the UUID format"),
            "byte" => strfmt(Format::Byte, "invalid base64"),
            "date" => strfmt(Format::Date, "invalid date"),
            _ => strfmt(Format::DateTime, "invalid datetime"),
        }
    }
}

/// A format as a value.
fn value(index: usize) -> Value {
    Value::Opaque(Arc::new(NamedFormat(index)))
}

/// `format.named(name)`: the format, or none for a name the library does not have.
pub fn named(args: &[Value]) -> Result<Value, ExecutionError> {
    let name = string_arg(args, 0, "format.named")?;
    let found = NAMES.iter().position(|n| *n == name);
    Ok(Value::Opaque(Arc::new(
        found.map_or_else(OptionalValue::none, |i| OptionalValue::of(value(i))),
    )))
}

/// `format.<name>()`: the format [`NAMES`]`[I]`.
pub fn constant<const I: usize>(_: &[Value]) -> Result<Value, ExecutionError> {
    Ok(value(I))
}

/// `<Format>.validate(s)`: none when `s` is valid, else the validator's messages.
pub fn validate(args: &[Value]) -> Result<Value, ExecutionError> {
    let format = match args.first() {
        Some(Value::Opaque(o)) => o.downcast_ref::<NamedFormat>().copied(),
        _ => None,
    }
    .ok_or_else(|| no_overload("validate"))?;
    let messages = format.messages(string_arg(args, 1, "validate")?);
    let result = if messages.is_empty() {
        OptionalValue::none()
    } else {
        OptionalValue::of(Value::List(Arc::new(
            messages.into_iter().map(|m| Value::String(Arc::new(m))).collect(),
        )))
    };
    Ok(Value::Opaque(Arc::new(result)))
}
