//! The admission model: what a policy receives from Kubewarden and what it answers.
//!
//! The request keeps `object` and `oldObject` as raw JSON so a check that does not apply to a
//! request never builds a tree for them (serde only scans past them).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::BTreeMap;

/// Group, version and kind of the object in a request.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct GroupVersionKind {
    /// API group; empty for the core group.
    pub group: String,
    /// API version, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `CustomResourceDefinition`.
    pub kind: String,
}

/// Group, version and resource (plural) addressed by a request.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct GroupVersionResource {
    /// API group; empty for the core group.
    pub group: String,
    /// API version, e.g. `v1`.
    pub version: String,
    /// Resource, e.g. `customresourcedefinitions`.
    pub resource: String,
}

/// A Kubernetes AdmissionRequest as Kubewarden hands it to a policy.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Request<'a> {
    /// Request uid, echoed in the response by the host.
    pub uid: String,
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
    /// The new object, kept raw.
    #[serde(borrow)]
    pub object: Option<&'a RawValue>,
    /// The existing object on UPDATE and DELETE, kept raw.
    #[serde(borrow)]
    pub old_object: Option<&'a RawValue>,
    /// Whether the request is a dry run.
    pub dry_run: Option<bool>,
}

/// The payload of the waPC `validate` operation.
#[derive(Debug, Deserialize)]
pub struct ValidationRequest<'a> {
    /// The admission request.
    #[serde(borrow)]
    pub request: Request<'a>,
    /// The policy settings, `{}` or absent when none.
    #[serde(borrow, default)]
    pub settings: Option<&'a RawValue>,
}

impl Request<'_> {
    /// The object parsed as `T`; `Ok(None)` when the request carries no object (or `null`).
    pub fn object_as<T: DeserializeOwned>(&self) -> Result<Option<T>, String> {
        parse_raw(self.object, "object")
    }

    /// The old object parsed as `T`; `Ok(None)` when the request carries none.
    pub fn old_object_as<T: DeserializeOwned>(&self) -> Result<Option<T>, String> {
        parse_raw(self.old_object, "oldObject")
    }

    /// The raw JSON text of the object, or `""` when there is none.
    pub fn object_text(&self) -> &str {
        self.object.map(|raw| raw.get()).unwrap_or("")
    }

    /// The raw JSON text of the old object, or `""` when there is none.
    pub fn old_object_text(&self) -> &str {
        self.old_object.map(|raw| raw.get()).unwrap_or("")
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

fn parse_raw<T: DeserializeOwned>(raw: Option<&RawValue>, what: &str) -> Result<Option<T>, String> {
    match raw {
        None => Ok(None),
        Some(raw) if raw.get() == "null" => Ok(None),
        Some(raw) => serde_json::from_str(raw.get())
            .map(Some)
            .map_err(|e| format!("cannot read the request's {what}: {e}")),
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
    /// The object as the check would change it (mutating checks only).
    pub mutated_object: Option<Value>,
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

    /// Sets the mutated object.
    pub fn mutate(mut self, object: Value) -> Self {
        self.mutated_object = Some(object);
        self
    }

    /// The wire form Kubewarden expects from `validate`.
    pub fn into_response(self) -> ValidationResponse {
        ValidationResponse {
            accepted: self.accepted,
            message: self.message,
            code: self.code,
            mutated_object: self.mutated_object,
            audit_annotations: (!self.audit_annotations.is_empty()).then_some(self.audit_annotations),
            warnings: (!self.warnings.is_empty()).then_some(self.warnings),
        }
    }
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
