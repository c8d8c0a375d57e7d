//! The admission model: what a policy receives from Kubewarden and what it answers.
//!
//! The request keeps `object` and `oldObject` as unread [`Json`] so a check that does not
//! apply to a request never reads them; the answer is written by hand, field for field as
//! Kubewarden's SDK serializes it.

use crate::json::{self, Error, FromJson, Json, from_json_members};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Group, version and kind of the object in a request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupVersionKind {
    /// API group; empty for the core group.
    pub group: String,
    /// API version, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `CustomResourceDefinition`.
    pub kind: String,
}

from_json_members!(lenient GroupVersionKind {
    "group" => group,
    "version" => version,
    "kind" => kind,
});

/// Group, version and resource (plural) addressed by a request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupVersionResource {
    /// API group; empty for the core group.
    pub group: String,
    /// API version, e.g. `v1`.
    pub version: String,
    /// Resource, e.g. `customresourcedefinitions`.
    pub resource: String,
}

from_json_members!(lenient GroupVersionResource {
    "group" => group,
    "version" => version,
    "resource" => resource,
});

/// A Kubernetes AdmissionRequest as Kubewarden hands it to a policy.
#[derive(Debug, Clone, Default)]
pub struct Request<'a> {
    /// Kind of the object.
    pub kind: GroupVersionKind,
    /// Resource addressed.
    pub resource: GroupVersionResource,
    /// Subresource addressed, if any (`status`, `scale`, ...).
    pub sub_resource: Option<String>,
    /// Name of the object (may be empty on CREATE with generateName).
    pub name: Option<String>,
    /// Namespace of the object, absent for cluster-scoped objects.
    pub namespace: Option<String>,
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub operation: String,
    /// The new object, unread; `None` when absent or `null`.
    pub object: Option<Json<'a>>,
    /// The existing object on UPDATE and DELETE, unread; `None` when absent or `null`.
    pub old_object: Option<Json<'a>>,
}

// The members policies read; the uid and the rest are the host's.
from_json_members!(lenient Request<'a> {
    "kind" => kind,
    "resource" => resource,
    "subResource" => sub_resource,
    "name" => name,
    "namespace" => namespace,
    "operation" => operation,
    "object" => object,
    "oldObject" => old_object,
});

/// The payload of the waPC `validate` operation.
#[derive(Debug)]
pub struct ValidationRequest<'a> {
    /// The admission request.
    pub request: Request<'a>,
    /// The policy settings, `{}` or absent when none.
    pub settings: Option<Json<'a>>,
}

impl<'a> FromJson<'a> for ValidationRequest<'a> {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        if value.is_null() {
            return Err(value.invalid_type("struct ValidationRequest"));
        }
        let mut request = None;
        let mut settings = None;
        value.read_members("struct ValidationRequest", &["request", "settings"], false, |i, v| {
            match i {
                0 => request = Some(v.read()?),
                _ => settings = v.read()?,
            }
            Ok(())
        })?;
        match request {
            Some(request) => Ok(ValidationRequest { request, settings }),
            None => Err(value.error("missing field `request`")),
        }
    }
}

impl<'a> Request<'a> {
    /// The object read as `T`; `Ok(None)` when the request carries no object (or `null`).
    pub fn object_as<T: FromJson<'a>>(&self) -> Result<Option<T>, String> {
        read_object(self.object, "object")
    }

    /// The old object read as `T`; `Ok(None)` when the request carries none.
    pub fn old_object_as<T: FromJson<'a>>(&self) -> Result<Option<T>, String> {
        read_object(self.old_object, "oldObject")
    }

    /// The raw JSON text of the object, or `""` when there is none.
    pub fn object_text(&self) -> &'a str {
        self.object.map(|value| value.text()).unwrap_or("")
    }

    /// The raw JSON text of the old object, or `""` when there is none.
    pub fn old_object_text(&self) -> &'a str {
        self.old_object.map(|value| value.text()).unwrap_or("")
    }

    /// True for `CREATE`.
    pub fn is_create(&self) -> bool {
        self.operation == "CREATE"
    }

    /// True for `UPDATE`.
    pub fn is_update(&self) -> bool {
        self.operation == "UPDATE"
    }
}

fn read_object<'a, T: FromJson<'a>>(value: Option<Json<'a>>, what: &str) -> Result<Option<T>, String> {
    match value {
        None => Ok(None),
        Some(value) => value
            .read()
            .map(Some)
            .map_err(|e| format!("cannot read the request's {what}: {}", e.located(value.text()))),
    }
}

/// What a check decides about one request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdict {
    /// Whether the request is allowed.
    pub accepted: bool,
    /// Why it was rejected (only set on rejection).
    pub message: Option<String>,
    /// HTTP-like status code of a rejection.
    pub code: Option<u16>,
    /// Warnings returned to the client, accepted or not.
    pub warnings: Vec<String>,
    /// Audit annotations, sorted by key.
    pub audit_annotations: BTreeMap<String, String>,
    /// The object as the check would change it, as JSON text (mutating checks only).
    pub mutated_object: Option<String>,
}

impl Verdict {
    /// An acceptance with nothing to say.
    pub fn accept() -> Self {
        Verdict {
            accepted: true,
            ..Verdict::default()
        }
    }

    /// A rejection with a message.
    pub fn reject(message: impl Into<String>) -> Self {
        Verdict {
            accepted: false,
            message: Some(message.into()),
            ..Verdict::default()
        }
    }

    /// A rejection with a message and a status code.
    pub fn reject_with_code(message: impl Into<String>, code: u16) -> Self {
        Verdict {
            code: Some(code),
            ..Verdict::reject(message)
        }
    }

    /// Adds a warning.
    pub fn warn(mut self, warning: impl Into<String>) -> Self {
        self.warnings.push(warning.into());
        self
    }

    /// Adds warnings.
    pub fn with_warnings(mut self, warnings: impl IntoIterator<Item = String>) -> Self {
        self.warnings.extend(warnings);
        self
    }

    /// Adds an audit annotation.
    pub fn annotate(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.audit_annotations.insert(key.into(), value.into());
        self
    }

    /// Sets the mutated object (its JSON text).
    pub fn mutate(mut self, object: String) -> Self {
        self.mutated_object = Some(object);
        self
    }

    /// The wire form Kubewarden expects from `validate`, as JSON: the fields of the SDK's
    /// `ValidationResponse` in its order, absent ones as `null`, annotations sorted by key.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"accepted\":");
        out.push_str(if self.accepted { "true" } else { "false" });
        out.push_str(",\"message\":");
        write_optional_string(&mut out, self.message.as_deref());
        out.push_str(",\"code\":");
        match self.code {
            Some(code) => out.push_str(&code.to_string()),
            None => out.push_str("null"),
        }
        out.push_str(",\"mutated_object\":");
        out.push_str(self.mutated_object.as_deref().unwrap_or("null"));
        out.push_str(",\"audit_annotations\":");
        if self.audit_annotations.is_empty() {
            out.push_str("null");
        } else {
            for (i, (key, value)) in self.audit_annotations.iter().enumerate() {
                out.push(if i == 0 { '{' } else { ',' });
                json::write_string(&mut out, key);
                out.push(':');
                json::write_string(&mut out, value);
            }
            out.push('}');
        }
        out.push_str(",\"warnings\":");
        if self.warnings.is_empty() {
            out.push_str("null");
        } else {
            for (i, warning) in self.warnings.iter().enumerate() {
                out.push(if i == 0 { '[' } else { ',' });
                json::write_string(&mut out, warning);
            }
            out.push(']');
        }
        out.push('}');
        out
    }
}

/// Writes `text` as a JSON string, or `null`.
fn write_optional_string(out: &mut String, text: Option<&str>) {
    match text {
        Some(text) => json::write_string(out, text),
        None => out.push_str("null"),
    }
}

/// The answer of the waPC `validate_settings` operation as JSON.
pub fn settings_response_json(result: &Result<(), String>) -> String {
    let mut out = String::from("{\"valid\":");
    out.push_str(if result.is_ok() { "true" } else { "false" });
    out.push_str(",\"message\":");
    write_optional_string(&mut out, result.as_ref().err().map(String::as_str));
    out.push('}');
    out
}

/// The answer of the waPC `validate` operation, as Kubewarden's SDK defines it, but with
/// sorted audit annotations so the same input always gives byte-identical output.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ValidationResponse {
    /// Whether the request is allowed.
    pub accepted: bool,
    /// Rejection message.
    pub message: Option<String>,
    /// Rejection code.
    pub code: Option<u16>,
    /// The mutated object, for mutating policies.
    pub mutated_object: Option<Value>,
    /// Audit annotations.
    pub audit_annotations: Option<BTreeMap<String, String>>,
    /// Warnings.
    pub warnings: Option<Vec<String>>,
}

/// The answer of the waPC `validate_settings` operation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SettingsValidationResponse {
    /// Whether the settings are valid.
    pub valid: bool,
    /// Why they are not.
    pub message: Option<String>,
}
