//! The contract every check implements, and the payload handling shared by all policies.
//!
//! [`handle_validate`] and [`handle_validate_settings`] are what the waPC operations of a
//! policy do; they are plain functions over bytes so they are tested natively too.

use crate::admission::{self, ValidationRequest, ValidationResponse, Verdict};
use crate::cluster::Cluster;
use crate::rules::{self, Rule};
use crate::settings;
use serde::de::DeserializeOwned;

/// Largest `validate` payload a policy reads (request plus settings). Kubernetes caps a request
/// body at 3 MiB and an object in etcd at 1.5 MiB; anything larger is refused unread.
pub const MAX_PAYLOAD_BYTES: usize = 16 * 1024 * 1024;

/// One syncguard check: its name, its admission rules, its settings and its decision.
pub trait Check {
    /// The check's settings; `Default` gives every documented default.
    type Settings: DeserializeOwned + Default;

    /// Policy name, e.g. `crd-schema-fields`.
    const NAME: &'static str;

    /// Section of the all-in-one policy's settings that configures this check, e.g.
    /// `crdSchemaFields`.
    const SETTINGS_KEY: &'static str;

    /// The admission rules the policy registers for, generated from its metadata.yml; the
    /// check sees only the requests they match.
    const RULES: &'static [Rule];

    /// Checks the settings beyond their shape (ranges, duplicates, ...).
    fn validate_settings(_settings: &Self::Settings) -> Result<(), String> {
        Ok(())
    }

    /// Decides one request, one that [`Check::RULES`] match (operation, resource, subresource);
    /// what the rules cannot say, such as the request's kind, is the check's to test.
    fn validate(request: &crate::admission::Request<'_>, settings: &Self::Settings, cluster: &dyn Cluster) -> Verdict;
}

/// What a `validate` rejection says when the settings in its payload do not validate.
pub const INVALID_SETTINGS: &str = "invalid settings";

/// Parses and checks a check's settings from raw JSON (absent or `null` means defaults).
pub fn parse_settings<C: Check>(raw: Option<&str>) -> Result<C::Settings, String> {
    let parsed: C::Settings = settings::parse(raw)?;
    C::validate_settings(&parsed)?;
    Ok(parsed)
}

/// Runs the `validate` operation of check `C` on a waPC payload and returns the response bytes.
///
/// Outcomes for input that is not a well-formed request, by rule:
/// - a payload over [`MAX_PAYLOAD_BYTES`] or one that is not a validation request is rejected
///   with code 400 and a message saying what could not be read;
/// - settings that do not validate are rejected with code 400 (the engine normally refuses
///   them before any request is sent);
/// - a request the check's rules do not match is accepted without reading its object: kwctl
///   sends any request, and the module then answers as it would behind policy-server's
///   webhook, which never sends it (the all-in-one routes requests the same way).
pub fn handle_validate<C: Check>(payload: &[u8], cluster: &dyn Cluster) -> Vec<u8> {
    decide::<C>(payload, cluster).to_json()
}

/// Decides a raw `validate` payload with check `C` (see [`handle_validate`]).
pub fn decide<C: Check>(payload: &[u8], cluster: &dyn Cluster) -> Verdict {
    let request = match read_request(payload) {
        Ok(request) => request,
        Err(verdict) => return verdict,
    };
    let settings = match parse_settings::<C>(request.settings.map(|raw| raw.get())) {
        Ok(settings) => settings,
        Err(message) => {
            return Verdict::reject_with_code(format!("{}: {INVALID_SETTINGS}: {message}", C::NAME), 400);
        }
    };
    if !rules::any_matches(C::RULES, &request.request) {
        return Verdict::accept();
    }
    C::validate(&request.request, &settings, cluster)
}

/// Reads a `validate` payload (borrowing from it), or gives the rejection documented in
/// [`handle_validate`].
pub fn read_request(payload: &[u8]) -> Result<ValidationRequest<'_>, Verdict> {
    if payload.len() > MAX_PAYLOAD_BYTES {
        return Err(Verdict::reject_with_code(
            format!(
                "syncguard: the admission request is {} bytes, more than the {} bytes a policy reads; Kubernetes itself caps a request at 3 MiB",
                payload.len(),
                MAX_PAYLOAD_BYTES
            ),
            400,
        ));
    }
    let text = std::str::from_utf8(payload).map_err(|e| {
        Verdict::reject_with_code(
            format!("syncguard: the admission request is not valid UTF-8 JSON: {e}"),
            400,
        )
    })?;
    serde_json::from_str(text)
        .map_err(|e| Verdict::reject_with_code(format!("syncguard: cannot read the admission request: {e}"), 400))
}

/// Runs the `validate_settings` operation of check `C` on a waPC payload (the bare settings).
pub fn handle_validate_settings<C: Check>(payload: &[u8]) -> Vec<u8> {
    let result = std::str::from_utf8(payload)
        .map_err(|e| format!("settings are not valid UTF-8: {e}"))
        .and_then(|text| parse_settings::<C>(Some(text)).map(|_| ()));
    admission::settings_response_json(result)
}

/// Parses a response produced by [`handle_validate`] (for the tests, the fuzz targets and the playground).
pub fn decode_response(bytes: &[u8]) -> Result<ValidationResponse, String> {
    serde_json::from_slice(bytes).map_err(|e| e.to_string())
}
