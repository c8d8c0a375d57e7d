//! Cluster facts for context-aware checks, answered by Kubewarden's host callbacks in a
//! cluster, by a replay file under kwctl or `syncguard run`, and by the scanned set offline.

use kubewarden_policy_sdk::host_capabilities::kubernetes::ListAllResourcesRequest;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// Objects as the cluster answered them: the items of a Kubernetes List, each kept as its JSON
/// text for the check to read into its own view (the answer is read once, its items unread).
pub type Items = Vec<Box<RawValue>>;

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
        to_items(matching)
    }
}

/// The request of Kubewarden's `kubernetes/list_resources_all` host call (no selectors, no
/// field masks), as kubewarden-policy-sdk defines it.
pub fn list_all_request(api_version: &str, kind: &str) -> ListAllResourcesRequest {
    ListAllResourcesRequest {
        api_version: api_version.to_string(),
        kind: kind.to_string(),
        label_selector: None,
        field_selector: None,
        field_masks: None,
    }
}

/// Objects as [`Items`].
pub fn to_items<'a>(objects: impl IntoIterator<Item = &'a Value>) -> Result<Items, String> {
    objects
        .into_iter()
        .map(|object| serde_json::value::to_raw_value(object).map_err(|e| e.to_string()))
        .collect()
}

/// A Kubernetes List as far as a policy reads it.
#[derive(Deserialize)]
#[serde(remote = "Self")]
struct List {
    /// The listed objects, unread; `null` or absent reads as none.
    #[serde(default)]
    items: Option<Items>,
}

crate::admission::object_only!(List);

/// Reads a Kubernetes List response: a JSON object whose `items`, if set, are an array.
pub fn list_items(body: &[u8]) -> Result<Items, String> {
    let not_a_list = |e: String| format!("the cluster's answer is not a List: {e}");
    let text = std::str::from_utf8(body).map_err(|e| not_a_list(e.to_string()))?;
    let list: List = serde_json::from_str(text).map_err(|e| not_a_list(e.to_string()))?;
    Ok(list.items.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_answers_are_read_once_with_their_items_unread() {
        let list = list_items(br#"{"kind": "List", "items": [{"a": 1}, {"b": [2]}]}"#).unwrap();
        let texts: Vec<&str> = list.iter().map(|item| item.get()).collect();
        assert_eq!(texts, [r#"{"a": 1}"#, r#"{"b": [2]}"#]);
        for empty in [&br#"{"items": null}"#[..], br#"{"kind": "List"}"#] {
            assert!(list_items(empty).unwrap().is_empty());
        }
        let wrong = list_items(br#"{"items": {}}"#).unwrap_err();
        assert!(
            wrong.starts_with("the cluster's answer is not a List: invalid type: map, expected a sequence"),
            "{wrong}"
        );
        assert!(list_items(b"[1]").unwrap_err().contains("expected struct List"));
        assert!(
            list_items(b"{\"items\": [")
                .unwrap_err()
                .contains("EOF while parsing a list")
        );
        assert!(list_items(b"\xff").unwrap_err().contains("not a List"));
    }

    #[test]
    fn static_cluster_lists_by_api_version_and_kind() {
        let cluster = StaticCluster {
            objects: vec![
                serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}),
                serde_json::json!({"apiVersion": "v1", "kind": "Service"}),
            ],
        };
        let pods = cluster.list_all("v1", "Pod").unwrap();
        assert_eq!(pods.len(), 1);
        assert!(pods[0].get().contains("\"kind\":\"Pod\""));
    }
}
