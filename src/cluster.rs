//! Cluster facts for context-aware checks, answered by Kubewarden's host callbacks in a
//! cluster, by a replay file under kwctl or `syncguard run`, and by the scanned set offline.

use crate::json;
use serde_json::Value;

/// Objects as the cluster answered them: JSON text, read by each check into its own view.
pub type Items = Vec<String>;

/// Read access to the cluster's objects.
pub trait Cluster {
    /// Every object of `kind` in `api_version`, across namespaces (`list_resources_all`).
    fn list_all(&self, api_version: &str, kind: &str) -> Result<Items, String>;
}

/// A cluster that answers nothing: for checks that are not context-aware.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoCluster;

impl Cluster for NoCluster {
    fn list_all(&self, api_version: &str, kind: &str) -> Result<Items, String> {
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
    fn list_all(&self, api_version: &str, kind: &str) -> Result<Items, String> {
        let matching: Vec<&Value> = self
            .objects
            .iter()
            .filter(|o| o["apiVersion"] == api_version && o["kind"] == kind)
            .collect();
        Ok(to_items(matching))
    }
}

/// The payload of Kubewarden's `kubernetes/list_resources_all` host call, as JSON text (keys
/// sorted, no selectors).
pub fn list_all_request(api_version: &str, kind: &str) -> String {
    format!(
        "{{\"api_version\":{},\"field_masks\":null,\"field_selector\":null,\"kind\":{},\"label_selector\":null}}",
        json::quoted(api_version),
        json::quoted(kind)
    )
}

/// Objects as [`Items`].
pub fn to_items<'a>(objects: impl IntoIterator<Item = &'a Value>) -> Items {
    objects.into_iter().map(|o| o.to_string()).collect()
}

/// Extracts the `items` of a Kubernetes List response, each as its JSON text.
pub fn list_items(body: &[u8]) -> Result<Items, String> {
    let not_a_list = |e: String| format!("the cluster's answer is not a List: {e}");
    let text = std::str::from_utf8(body).map_err(|e| not_a_list(e.to_string()))?;
    let document = json::parse(text).map_err(|e| not_a_list(e.located(text)))?;
    let root = document.root();
    let mut items = Vec::new();
    root.read_members("struct List", &["items"], false, |_, value| {
        if !value.is_null() {
            items = value
                .read::<Vec<json::Json>>()?
                .iter()
                .map(|item| item.text().to_string())
                .collect();
        }
        Ok(())
    })
    .map_err(|e| not_a_list(e.located(text)))?;
    Ok(items)
}
