//! The benchmark floor: accepts every request without reading it, so the engine's own cost of
//! a `validate` call (instance, payload copy, response) can be measured beside each policy.

use wapc_guest::{CallResult, register_function};

fn validate(_payload: &[u8]) -> CallResult {
    Ok(br#"{"accepted":true,"message":null,"code":null,"mutated_object":null,"audit_annotations":null,"warnings":null}"#.to_vec())
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
