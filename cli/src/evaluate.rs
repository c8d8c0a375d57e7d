//! One evaluation as kwctl and policy-server do it: settings first, then `validate`, then the
//! guest's answer turned into an AdmissionResponse (JSON Patch for mutations, code 500 for
//! guest failures).

use crate::engine::Instance;
use crate::metadata::Metadata;
use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use syncguard::admission::{SettingsValidationResponse, ValidationResponse};
use syncguard_scan::evaluate::AdmissionResponse;

/// A request read from a file: the raw AdmissionRequest JSON and the fields the host needs.
pub struct RequestDoc {
    /// The AdmissionRequest as JSON text, keys sorted as Kubewarden hands it to a module.
    pub raw: String,
    /// Its uid.
    pub uid: String,
}

/// Reads a bare AdmissionRequest or a whole AdmissionReview (its `.request`) the way kwctl and
/// policy-server do: into policy-evaluator's `AdmissionRequest` type ([`AdmissionRequest`]), so
/// that a request kwctl refuses is refused here in kwctl's words (`cannot build
/// AdmissionRequest object from given input: missing field `userInfo``), and written out again
/// from that type for the module: fields it does not declare are dropped, and every object
/// reaches the policy with its keys sorted. Like kwctl, a request nested deeper than
/// serde_json's recursion limit (128 levels) is refused here; `syncguard call` sends any bytes
/// verbatim.
pub fn read_request(text: &str) -> Result<RequestDoc> {
    let top: Value = serde_json::from_str(text).map_err(|e| anyhow!("the request is not JSON: {e}"))?;
    let Value::Object(mut top) = top else {
        return Err(anyhow!("Invalid request object"));
    };
    let request = if top.get("kind").and_then(Value::as_str) == Some("AdmissionReview") {
        top.remove("request")
            .ok_or_else(|| anyhow!("invalid AdmissionReview object"))?
    } else {
        Value::Object(top)
    };
    let request: AdmissionRequest = serde_json::from_value(request)
        .map_err(|e| anyhow!("cannot build AdmissionRequest object from given input: {e}"))?;
    let raw = serde_json::to_string(&request)?;
    Ok(RequestDoc { raw, uid: request.uid })
}

/// policy-evaluator's `AdmissionRequest` (kubewarden/adm-controller,
/// `crates/policy-evaluator/src/admission_request.rs`): what kwctl and policy-server read a
/// request into before a policy sees it. The same fields are required (`uid`, `kind`,
/// `resource`, `operation`, `userInfo`), the same optional ones are left out when absent, and
/// the request a module receives is this type written out again, as Kubewarden writes it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AdmissionRequest {
    uid: String,
    kind: GroupVersionKind,
    resource: GroupVersionResource,
    #[serde(skip_serializing_if = "Option::is_none")]
    sub_resource: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_kind: Option<GroupVersionKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_resource: Option<GroupVersionResource>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_sub_resource: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<String>,
    operation: String,
    user_info: k8s_openapi::api::authentication::v1::UserInfo,
    #[serde(skip_serializing_if = "Option::is_none")]
    object: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    old_object: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dry_run: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    options: Option<Value>,
}

/// An API group, version and kind, each required (policy-evaluator's `GroupVersionKind`).
#[derive(Debug, Serialize, Deserialize)]
struct GroupVersionKind {
    group: String,
    version: String,
    kind: String,
}

/// An API group, version and resource, each required (policy-evaluator's `GroupVersionResource`).
#[derive(Debug, Serialize, Deserialize)]
struct GroupVersionResource {
    group: String,
    version: String,
    resource: String,
}

/// Why an evaluation could not produce a response.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The settings were refused by the policy (kwctl exits 1).
    #[error("Provided settings are not valid: {0}")]
    InvalidSettings(String),
    /// Anything else that stops the run.
    #[error("{0:#}")]
    Other(anyhow::Error),
}

/// A `validate` call that gave no answer of the policy's: the guest trapped, timed out or
/// returned an error, or answered something that is not a validation response. Kubewarden
/// answers such a request with code 500; the instance may be left broken.
#[derive(Debug, thiserror::Error)]
pub enum GuestFailure {
    /// The call failed (the engine's description).
    #[error("internal server error: {0}")]
    Call(String),
    /// The answer is not a `ValidationResponse`.
    #[error("internal server error: the policy's answer is not a validation response: {0}")]
    Answer(serde_json::Error),
}

impl GuestFailure {
    /// The AdmissionResponse Kubewarden gives: a rejection with code 500.
    pub fn response(&self, uid: &str) -> AdmissionResponse {
        AdmissionResponse::reject(uid, self.to_string(), Some(500))
    }
}

/// Calls `validate_settings`; `Err` carries the policy's message.
pub fn validate_settings(instance: &Instance, settings: &Value) -> Result<(), EvalError> {
    let payload = serde_json::to_vec(settings).map_err(|e| EvalError::Other(e.into()))?;
    let answer = instance
        .call("validate_settings", &payload)
        .map_err(|e| EvalError::InvalidSettings(format!("the policy failed to validate its settings: {e}")))?;
    let answer: SettingsValidationResponse = serde_json::from_slice(&answer)
        .map_err(|e| EvalError::Other(anyhow!("the policy's settings answer is not valid: {e}")))?;
    if answer.valid {
        Ok(())
    } else {
        Err(EvalError::InvalidSettings(answer.message.unwrap_or_default()))
    }
}

/// The `validate` payload: the raw request and the settings, without re-encoding the request.
pub fn payload(request: &RequestDoc, settings: &Value) -> String {
    payload_with_settings_text(request, &settings.to_string())
}

/// [`payload`] with the settings already serialized as JSON.
pub fn payload_with_settings_text(request: &RequestDoc, settings_text: &str) -> String {
    syncguard_scan::evaluate::validate_payload(&request.raw, settings_text)
}

/// Calls `validate` and builds the AdmissionResponse.
pub fn validate(
    instance: &Instance,
    metadata: Option<&Metadata>,
    request: &RequestDoc,
    settings: &Value,
) -> AdmissionResponse {
    validate_with_settings_text(instance, metadata, request, &settings.to_string())
}

/// [`validate`] with the settings already serialized as JSON, for callers that evaluate many
/// requests with the same settings.
pub fn validate_with_settings_text(
    instance: &Instance,
    metadata: Option<&Metadata>,
    request: &RequestDoc,
    settings_text: &str,
) -> AdmissionResponse {
    try_validate_with_settings_text(instance, metadata, request, settings_text)
        .unwrap_or_else(|failure| failure.response(&request.uid))
}

/// [`validate_with_settings_text`], telling a guest failure (see [`GuestFailure`]) from an
/// answer of the policy's.
pub fn try_validate_with_settings_text(
    instance: &Instance,
    metadata: Option<&Metadata>,
    request: &RequestDoc,
    settings_text: &str,
) -> Result<AdmissionResponse, GuestFailure> {
    let payload = payload_with_settings_text(request, settings_text);
    let answer = instance
        .call("validate", payload.as_bytes())
        .map_err(GuestFailure::Call)?;
    let answer: ValidationResponse = serde_json::from_slice(&answer).map_err(GuestFailure::Answer)?;
    Ok(respond(metadata, request, answer))
}

/// The findings of a [`try_report_with_settings_text`] call: every finding whole, or `None` when
/// the module has no `report` operation (a policy that is not syncguard's, or one built before
/// it existed), whose answer was read from `validate` instead.
pub type Reported = Option<Vec<syncguard::render::Reported>>;

/// Calls the module's `report` operation (syncguard's structured report: the answer `validate`
/// gives, byte for byte, and every finding whole), falling back to `validate` when the module
/// does not export it. The response is built exactly as [`try_validate_with_settings_text`]
/// builds it.
pub fn try_report_with_settings_text(
    instance: &Instance,
    metadata: Option<&Metadata>,
    request: &RequestDoc,
    settings_text: &str,
) -> Result<(AdmissionResponse, Reported), GuestFailure> {
    let payload = payload_with_settings_text(request, settings_text);
    match instance.call(syncguard::check::REPORT, payload.as_bytes()) {
        Ok(answer) => {
            let answer: syncguard::render::ReportAnswer =
                serde_json::from_slice(&answer).map_err(GuestFailure::Answer)?;
            Ok((respond(metadata, request, answer.response), Some(answer.findings)))
        }
        Err(e) if e.contains(NO_HANDLER) => {
            try_validate_with_settings_text(instance, metadata, request, settings_text).map(|r| (r, None))
        }
        Err(e) => Err(GuestFailure::Call(e)),
    }
}

/// How a waPC guest answers a call of an operation it did not register (wapc-guest's words).
const NO_HANDLER: &str = "No handler registered for function";

fn respond(metadata: Option<&Metadata>, request: &RequestDoc, answer: ValidationResponse) -> AdmissionResponse {
    let mutates = answer.accepted && answer.mutated_object.is_some();
    if mutates && metadata.is_some_and(|m| !m.mutating) {
        let name = metadata
            .and_then(|m| m.annotation("io.kubewarden.policy.title"))
            .unwrap_or("policy");
        return AdmissionResponse::reject(
            &request.uid,
            format!(
                "Request rejected by policy {name}. The policy attempted to mutate the request, but it is currently configured to not allow mutations."
            ),
            None,
        );
    }
    AdmissionResponse::of_answer(&request.uid, &request.raw, answer)
}
