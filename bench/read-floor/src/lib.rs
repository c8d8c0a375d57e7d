//! The benchmark's second floor: reads the whole `validate` payload as JSON (skipping every
//! value, building nothing) and then accepts, like the no-op floor. The difference between the
//! two is what any policy that looks at the object pays before deciding anything, so a check's
//! time can be set against the cost of merely reading its request.

use serde::de::IgnoredAny;
use wapc_guest::{CallResult, register_function};

const ACCEPT: &[u8] =
    br#"{"accepted":true,"message":null,"code":null,"mutated_object":null,"audit_annotations":null,"warnings":null}"#;
const REFUSE: &[u8] =
    br#"{"accepted":false,"message":"not JSON","code":400,"mutated_object":null,"audit_annotations":null,"warnings":null}"#;

fn validate(payload: &[u8]) -> CallResult {
    Ok(match serde_json::from_slice::<IgnoredAny>(payload) {
        Ok(_) => ACCEPT.to_vec(),
        Err(_) => REFUSE.to_vec(),
    })
}

fn validate_settings(_payload: &[u8]) -> CallResult {
    Ok(br#"{"valid":true,"message":null}"#.to_vec())
}

fn protocol_version(_payload: &[u8]) -> CallResult {
    Ok(br#""v1""#.to_vec())
}

/// waPC entry point: registers the three operations Kubewarden calls.
#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    register_function("validate", validate);
    register_function("validate_settings", validate_settings);
    register_function("protocol_version", protocol_version);
}
