//! waPC glue: registers a check's operations with the host. Compiled only for `wasm32`.

use crate::check::{self, Check};
use crate::cluster::{self, Cluster};
use wapc_guest::CallResult;

/// Registers `validate`, `validate_settings` and `protocol_version` for check `C`.
pub fn register<C: Check>() {
    wapc_guest::register_function("validate", validate::<C>);
    wapc_guest::register_function("validate_settings", validate_settings::<C>);
    wapc_guest::register_function("protocol_version", protocol_version);
}

/// The answer of `protocol_version`: Kubewarden's `ProtocolVersion::V1` as its SDK serializes
/// it. Written out rather than calling the SDK's `protocol_version_guest`, whose serde_json
/// error handling alone costs every module 2.5 KiB.
fn protocol_version(_payload: &[u8]) -> CallResult {
    Ok(crate::check::PROTOCOL_VERSION_ANSWER.to_vec())
}

fn validate<C: Check>(payload: &[u8]) -> CallResult {
    Ok(check::handle_validate::<C>(payload, &HostCluster))
}

fn validate_settings<C: Check>(payload: &[u8]) -> CallResult {
    Ok(check::handle_validate_settings::<C>(payload))
}

/// The cluster as Kubewarden's host capabilities answer it.
struct HostCluster;

impl Cluster for HostCluster {
    fn list_all(&self, api_version: &str, kind: &str, field_masks: &[&str]) -> Result<cluster::Items, String> {
        let body = cluster::list_all_request(api_version, kind, field_masks);
        let answer =
            wapc_guest::host_call("kubewarden", "kubernetes", "list_resources_all", body.as_bytes()).map_err(|e| {
                let message = e.to_string();
                message.strip_prefix("Host error: ").unwrap_or(&message).to_string()
            })?;
        cluster::list_items(&answer)
    }
}
