//! waPC glue: registers a check's operations with the host. Compiled only for `wasm32`.

use crate::check::{self, Policy};
use crate::cluster::{self, Cluster};
use kubewarden_policy_sdk::wapc_guest::{self, CallResult};

/// Registers `validate`, `validate_settings` and `protocol_version` for policy `P`.
pub fn register<P: Policy>() {
    wapc_guest::register_function("validate", validate::<P>);
    wapc_guest::register_function("validate_settings", validate_settings::<P>);
    wapc_guest::register_function("protocol_version", kubewarden_policy_sdk::protocol_version_guest);
}

fn validate<P: Policy>(payload: &[u8]) -> CallResult {
    Ok(check::handle_validate::<P>(payload, &HostCluster))
}

fn validate_settings<P: Policy>(payload: &[u8]) -> CallResult {
    Ok(check::handle_validate_settings::<P>(payload))
}

/// The cluster as Kubewarden's host capabilities answer it.
struct HostCluster;

impl Cluster for HostCluster {
    fn list_all(&self, api_version: &str, kind: &str, field_masks: &[&str]) -> Result<cluster::Items, String> {
        let request = serde_json::to_vec(&cluster::list_all_request(api_version, kind, field_masks))
            .map_err(|e| e.to_string())?;
        // The SDK's `list_all_resources` would read the answer into k8s-openapi's typed List;
        // the checks read each item into their own small view instead, so only its request
        // type is used and the call is made here.
        let answer = wapc_guest::host_call("kubewarden", "kubernetes", "list_resources_all", &request)
            .map_err(|e| cluster::host_error(&e.to_string()))?;
        cluster::list_items(answer)
    }

    fn get(
        &self,
        api_version: &str,
        kind: &str,
        name: &str,
        namespace: Option<&str>,
        field_masks: &[&str],
    ) -> Result<String, String> {
        let request = serde_json::to_vec(&cluster::get_request(api_version, kind, name, namespace, field_masks))
            .map_err(|e| e.to_string())?;
        let answer = wapc_guest::host_call("kubewarden", "kubernetes", "get_resource", &request)
            .map_err(|e| cluster::host_error(&e.to_string()))?;
        String::from_utf8(answer).map_err(|e| format!("the cluster's answer is not text: {e}"))
    }
}
