//! What the benchmark's floors (`bench/noop`, `bench/read-floor`, `bench/lookup-floor`) share:
//! the answers to `validate_settings` and `protocol_version`, which every floor gives alike, the
//! accepting `validate` answer, and the waPC entry point that registers them with the floor's own
//! `validate` ([`floor!`]). Each floor's `validate` stays in its own crate: what it does is what
//! the floor measures. Nothing here runs on a `validate` call but the registered function
//! itself, so sharing it changes no floor's count.

pub use wapc_guest;

/// A `validate` answer that accepts, as Kubewarden's SDK writes one.
pub const ACCEPT: &[u8] =
    br#"{"accepted":true,"message":null,"code":null,"mutated_object":null,"audit_annotations":null,"warnings":null}"#;

/// `validate_settings`: every settings are valid.
pub fn validate_settings(_payload: &[u8]) -> wapc_guest::CallResult {
    Ok(br#"{"valid":true,"message":null}"#.to_vec())
}

/// `protocol_version`: waPC policy protocol v1.
pub fn protocol_version(_payload: &[u8]) -> wapc_guest::CallResult {
    Ok(br#""v1""#.to_vec())
}

/// Defines the floor's waPC entry point, `wapc_init`, registering `validate` (a
/// `fn(&[u8]) -> CallResult` of the floor's crate) and the two operations every floor answers
/// alike. A macro because the entry point must be defined in the module's own crate.
#[macro_export]
macro_rules! floor {
    ($validate:path) => {
        /// waPC entry point: registers the three operations Kubewarden calls.
        #[unsafe(no_mangle)]
        pub extern "C" fn wapc_init() {
            $crate::wapc_guest::register_function("validate", $validate);
            $crate::wapc_guest::register_function("validate_settings", $crate::validate_settings);
            $crate::wapc_guest::register_function("protocol_version", $crate::protocol_version);
        }
    };
}
