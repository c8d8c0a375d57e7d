//! The benchmark's third floor: the least a policy written with Kubewarden's Rust SDK does. It
//! reads its request as the SDK has every policy read one (`ValidationRequest::new`: the
//! AdmissionReview request, its object and old object as `serde_json::Value` trees, the
//! settings) and accepts. Between the no-op floor and this one lies what any Rust policy
//! built on the SDK pays before deciding anything; syncguard's checks are set against both.

use kubewarden_policy_sdk::request::ValidationRequest;
use kubewarden_policy_sdk::settings::Validatable;
use kubewarden_policy_sdk::wapc_guest::{self, CallResult};
use serde::Deserialize;

/// No settings: an empty object.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Settings {}

impl Validatable for Settings {
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }
}

fn validate(payload: &[u8]) -> CallResult {
    let request = ValidationRequest::<Settings>::new(payload)?;
    std::hint::black_box(&request);
    kubewarden_policy_sdk::accept_request()
}

/// waPC entry point: registers the three operations Kubewarden calls.
#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    wapc_guest::register_function("validate", validate);
    wapc_guest::register_function(
        "validate_settings",
        kubewarden_policy_sdk::validate_settings::<Settings>,
    );
    wapc_guest::register_function("protocol_version", kubewarden_policy_sdk::protocol_version_guest);
}
