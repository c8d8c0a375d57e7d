//! Cluster facts for context-aware checks, answered by Kubewarden's host callbacks in a
//! cluster, by a replay file under kwctl or `syncguard run`, and by the scanned set offline.

use serde_json::Value;

/// Read access to the cluster's objects.
pub trait Cluster {
    /// Every object of `kind` in `api_version`, across namespaces (`list_resources_all`).
    fn list_all(&self, api_version: &str, kind: &str) -> Result<Vec<Value>, String>;
}

/// A cluster that answers nothing: for checks that are not context-aware.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoCluster;

impl Cluster for NoCluster {
    fn list_all(&self, api_version: &str, kind: &str) -> Result<Vec<Value>, String> {
        Err(format!(
            "no cluster lookups are available here (asked for {kind} in {api_version})"
        ))
    }
}

/// A fixed set of objects: the offline stand-in for a cluster.
#[derive(Debug, Default, Clone)]
pub struct StaticCluster {
    /// The objects, each with `apiVersion` and `kind`.
    pub objects: Vec<Value>,
}

impl Cluster for StaticCluster {
    fn list_all(&self, api_version: &str, kind: &str) -> Result<Vec<Value>, String> {
        Ok(self
            .objects
            .iter()
            .filter(|o| o["apiVersion"] == api_version && o["kind"] == kind)
            .cloned()
            .collect())
    }
}

/// The payload of Kubewarden's `kubernetes/list_resources_all` host call.
pub fn list_all_request(api_version: &str, kind: &str) -> Value {
    serde_json::json!({
        "api_version": api_version,
        "kind": kind,
        "label_selector": null,
        "field_selector": null,
        "field_masks": null,
    })
}

/// Extracts the `items` of a Kubernetes List response.
pub fn list_items(body: &[u8]) -> Result<Vec<Value>, String> {
    let list: Value = serde_json::from_slice(body).map_err(|e| format!("the cluster's answer is not JSON: {e}"))?;
    match list.get("items") {
        Some(Value::Array(items)) => Ok(items.clone()),
        Some(Value::Null) | None => Ok(Vec::new()),
        Some(_) => Err("the cluster's answer has an `items` that is not a list".to_string()),
    }
}
