//! Cluster facts for context-aware checks, answered by Kubewarden's host callbacks in a
//! cluster, by a replay file under kwctl or `syncguard run`, and by the scanned set offline.

use crate::{json, reflector};
use serde_json::Value;

/// Objects as the cluster answered them: a checked Kubernetes List, whose [`items`] each check
/// reads into its own view (so the answer is checked once and never copied item by item).
pub type Items = json::Document<'static>;

/// Read access to the cluster's objects.
pub trait Cluster {
    /// Every object of `kind` in `api_version`, across namespaces (`list_resources_all`), each
    /// pruned to `field_masks` (dot-separated paths; none: whole objects) as Kubewarden's
    /// reflector does (see [`crate::reflector`]).
    fn list_all(&self, api_version: &str, kind: &str, field_masks: &[&str]) -> Result<Items, String>;
}

/// A cluster that answers nothing: for checks that are not context-aware.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoCluster;

impl Cluster for NoCluster {
    fn list_all(&self, api_version: &str, kind: &str, _field_masks: &[&str]) -> Result<Items, String> {
        Err(format!(
            "no cluster lookups are available here (asked for {kind} in {api_version})"
        ))
    }
}

/// A fixed set of objects: the offline stand-in for a cluster. It answers as Kubewarden does:
/// each listed object goes through [`reflector::reflect`] with the lookup's field masks.
#[derive(Debug, Default, Clone)]
pub struct StaticCluster {
    /// The objects, each with `apiVersion` and `kind`.
    pub objects: Vec<Value>,
}

impl Cluster for StaticCluster {
    fn list_all(&self, api_version: &str, kind: &str, field_masks: &[&str]) -> Result<Items, String> {
        let mask = (!field_masks.is_empty()).then(|| reflector::FieldMask::new(field_masks.iter().copied()));
        let matching: Vec<Value> = self
            .objects
            .iter()
            .filter(|o| o["apiVersion"] == api_version && o["kind"] == kind)
            .map(|o| {
                let mut object = o.clone();
                reflector::reflect(&mut object, mask.as_ref());
                object
            })
            .collect();
        to_items(&matching)
    }
}

/// The payload of Kubewarden's `kubernetes/list_resources_all` host call, as JSON text (keys
/// sorted, no selectors): `field_masks` is `null` when `field_masks` is empty, else the paths in
/// the order given (the host reads them as a set; callers pass them sorted).
pub fn list_all_request(api_version: &str, kind: &str, field_masks: &[&str]) -> String {
    let mut masks = String::from(if field_masks.is_empty() { "null" } else { "[" });
    for (i, path) in field_masks.iter().enumerate() {
        if i > 0 {
            masks.push(',');
        }
        json::write_string(&mut masks, path);
    }
    if !field_masks.is_empty() {
        masks.push(']');
    }
    format!(
        "{{\"api_version\":{},\"field_masks\":{masks},\"field_selector\":null,\"kind\":{},\"label_selector\":null}}",
        json::quoted(api_version),
        json::quoted(kind)
    )
}

/// Objects as [`Items`].
pub fn to_items<'a>(objects: impl IntoIterator<Item = &'a Value>) -> Result<Items, String> {
    let items: Vec<&Value> = objects.into_iter().collect();
    list_items(serde_json::json!({ "items": items }).to_string().as_bytes())
}

/// The items of a List, in order (none when it has no `items` or they are `null`).
pub fn items(list: &Items) -> impl Iterator<Item = json::Json<'_>> {
    list.root().get("items").into_iter().flat_map(|items| items.elements())
}

/// Checks a Kubernetes List response: a JSON object whose `items`, if set, are an array.
pub fn list_items(body: &[u8]) -> Result<Items, String> {
    let not_a_list = |e: String| format!("the cluster's answer is not a List: {e}");
    let text = String::from_utf8(body.to_vec()).map_err(|e| not_a_list(e.to_string()))?;
    let list = json::parse_owned(text).map_err(not_a_list)?;
    let root = list.root();
    root.read_members("struct List", &["items"], false, |_, items| match items.kind() {
        json::Kind::Array => Ok(()),
        _ => Err(items.invalid_type("a sequence")),
    })
    .map_err(|e| not_a_list(e.located(list.text())))?;
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_answers_are_checked_once_and_read_in_place() {
        let list = list_items(br#"{"kind": "List", "items": [{"a": 1}, {"b": [2]}]}"#).unwrap();
        let texts: Vec<&str> = items(&list).map(|item| item.text()).collect();
        assert_eq!(texts, [r#"{"a": 1}"#, r#"{"b": [2]}"#]);
        for empty in [&br#"{"items": null}"#[..], br#"{"kind": "List"}"#] {
            assert_eq!(items(&list_items(empty).unwrap()).count(), 0);
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
        let pods = cluster.list_all("v1", "Pod", &[]).unwrap();
        assert_eq!(items(&pods).count(), 1);
        assert_eq!(items(&pods).next().unwrap().get("kind").unwrap().text(), "\"Pod\"");
    }

    #[test]
    fn static_cluster_answers_as_the_reflector_does() {
        let cluster = StaticCluster {
            objects: vec![serde_json::json!({
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "a", "managedFields": [{"manager": "kubectl"}]},
                "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "i"}]},
            })],
        };
        let pods = cluster.list_all("v1", "Pod", &["spec.containers.image"]).unwrap();
        let pod: Value = serde_json::from_str(items(&pods).next().unwrap().text()).unwrap();
        assert_eq!(
            pod,
            serde_json::json!({
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "a", "annotations": {}, "managedFields": []},
                "spec": {"containers": [{"image": "i"}]},
            })
        );
    }

    #[test]
    fn list_all_requests_carry_the_masks() {
        assert_eq!(
            list_all_request("v1", "Pod", &[]),
            r#"{"api_version":"v1","field_masks":null,"field_selector":null,"kind":"Pod","label_selector":null}"#
        );
        assert_eq!(
            list_all_request("v1", "Pod", &["spec.a", "spec.b"]),
            r#"{"api_version":"v1","field_masks":["spec.a","spec.b"],"field_selector":null,"kind":"Pod","label_selector":null}"#
        );
    }
}
