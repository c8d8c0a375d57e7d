//! waPC glue: registers a check's operations with the host. Compiled only for `wasm32`.

use crate::check::{self, Module};
use crate::cluster::HostCalls;
use kubewarden_policy_sdk::wapc_guest::{self, CallResult};

/// Registers `validate`, `validate_settings` and `protocol_version` for policy `P`, and
/// [`check::REPORT`], which Kubewarden never calls: the structured report `syncguard scan` reads.
pub fn register<P: Module>() {
    wapc_guest::register_function("validate", validate::<P>);
    wapc_guest::register_function(check::REPORT, report::<P>);
    wapc_guest::register_function("validate_settings", validate_settings::<P>);
    wapc_guest::register_function("protocol_version", kubewarden_policy_sdk::protocol_version_guest);
}

fn validate<P: Module>(payload: &[u8]) -> CallResult {
    Ok(check::handle_validate::<P>(payload, &HostCluster))
}

fn report<P: Module>(payload: &[u8]) -> CallResult {
    Ok(check::handle_report::<P>(payload, &HostCluster))
}

fn validate_settings<P: Module>(payload: &[u8]) -> CallResult {
    Ok(check::handle_validate_settings::<P>(payload))
}

/// The cluster as Kubewarden's host capabilities answer it.
struct HostCluster;

impl HostCalls for HostCluster {
    // The SDK's `list_all_resources` would read the answer into k8s-openapi's typed List; the
    // checks read each item into their own small view instead, so only the SDK's request types
    // are used and the call is made here.
    fn host_call(&self, operation: &str, request: &[u8]) -> Result<Vec<u8>, String> {
        wapc_guest::host_call("kubewarden", "kubernetes", operation, request).map_err(|e| e.to_string())
    }
}
