//! What Kubewarden does to the objects a `list_resources_all` or `list_resources_by_namespace`
//! lookup returns, so that every stand-in for a cluster (replay files, `syncguard scan`, the
//! tests) hands a module the same shape a real policy-server does.
//!
//! Kubewarden answers list lookups from a reflector (policy-evaluator, in the
//! kubewarden/adm-controller repository: `crates/policy-evaluator/src/callback_handler/kubernetes/
//! reflector.rs`, `modify_object`, Kubewarden 1.33 and later), which
//! changes every object it caches:
//! - `metadata.managedFields` is emptied (the object is typed there, so it then reads `[]`);
//! - the `kubectl.kubernetes.io/last-applied-configuration` annotation is removed (and
//!   `metadata.annotations` reads `{}` when nothing is left, for the same reason);
//! - when the request carries `field_masks`, everything but `apiVersion`, `kind` and `metadata`
//!   is pruned to the masked paths (`field_mask.rs`, `prune_in_place`): a path is dot-separated,
//!   a masked field comes whole, and arrays are transparent (`spec.versions.name` keeps `name`
//!   in every element of `spec.versions`). An empty set of masks prunes nothing.
//!
//! `metadata` passes through Kubernetes' typed `ObjectMeta`, so unknown metadata fields and
//! `null` values do not survive either.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The annotation `kubectl apply` writes and the reflector removes.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The fields of Kubernetes' `ObjectMeta`: the only ones `metadata` keeps.
const OBJECT_META_FIELDS: &[&str] = &[
    "annotations",
    "creationTimestamp",
    "deletionGracePeriodSeconds",
    "deletionTimestamp",
    "finalizers",
    "generateName",
    "generation",
    "labels",
    "managedFields",
    "name",
    "namespace",
    "ownerReferences",
    "resourceVersion",
    "selfLink",
    "uid",
];

/// Field masks as a tree of path segments (policy-evaluator's `FieldMaskNode`): a node without
/// children keeps everything below it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldMask {
    children: BTreeMap<String, FieldMask>,
}

impl FieldMask {
    /// The tree of dot-separated `paths` (e.g. `spec.names.kind`).
    pub fn new<'a>(paths: impl IntoIterator<Item = &'a str>) -> FieldMask {
        let mut root = FieldMask::default();
        for path in paths {
            let mut node = &mut root;
            for part in path.split('.') {
                node = node.children.entry(part.to_string()).or_default();
            }
        }
        root
    }

    /// Prunes `value` in place to the masked fields (policy-evaluator's `prune_in_place`).
    pub fn prune(&self, value: &mut Value) {
        if self.children.is_empty() {
            return;
        }
        match value {
            Value::Object(map) => map.retain(|key, member| match self.children.get(key) {
                Some(child) => {
                    child.prune(member);
                    true
                }
                None => false,
            }),
            Value::Array(items) => items.iter_mut().for_each(|item| self.prune(item)),
            _ => {}
        }
    }
}

/// Changes one listed object the way Kubewarden's reflector does (see the module docs); `mask`
/// is the request's `field_masks`, `None` when it has none.
pub fn reflect(object: &mut Value, mask: Option<&FieldMask>) {
    let Value::Object(map) = object else {
        return;
    };
    let metadata = map.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
    if !metadata.is_object() {
        *metadata = Value::Object(Map::new());
    }
    if let Value::Object(meta) = metadata {
        meta.retain(|key, value| !value.is_null() && OBJECT_META_FIELDS.contains(&key.as_str()));
        meta.insert("managedFields".into(), Value::Array(Vec::new()));
        let annotations = meta.entry("annotations").or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(annotations) = annotations {
            annotations.remove(LAST_APPLIED);
        }
    }
    if let Some(mask) = mask {
        apply_mask(object, mask);
    }
}

/// Prunes an object to `mask` except its `apiVersion`, `kind` and `metadata`, which stay whole:
/// what Kubewarden does with the `field_masks` of every lookup (`get_resource` too, whose
/// object does not go through the reflector and keeps its managedFields).
pub fn apply_mask(object: &mut Value, mask: &FieldMask) {
    let Value::Object(map) = object else {
        return;
    };
    if mask.children.is_empty() {
        return;
    }
    map.retain(|key, value| {
        if matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
            return true;
        }
        match mask.children.get(key) {
            Some(child) => {
                child.prune(value);
                true
            }
            None => false,
        }
    });
}

/// The `field_masks` of a lookup request (`null` or a list of paths) as a [`FieldMask`].
pub fn mask_of(field_masks: &Value) -> Option<FieldMask> {
    let paths = field_masks.as_array()?;
    Some(FieldMask::new(paths.iter().filter_map(Value::as_str)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn masked(mut value: Value, paths: &[&str]) -> Value {
        FieldMask::new(paths.iter().copied()).prune(&mut value);
        value
    }

    #[test]
    fn masks_prune_like_policy_evaluator() {
        // The cases of policy-evaluator's own field_mask.rs tests.
        let data = json!({"a": {"b": 1, "c": 2}, "d": 3});
        assert_eq!(masked(data, &["a.b", "d"]), json!({"a": {"b": 1}, "d": 3}));
        let users = json!({
            "users": [{"name": "Alice", "age": 30, "metadata": {"id": 1}}, {"name": "Bob", "age": 25}],
            "metadata": {"count": 2},
        });
        assert_eq!(
            masked(users.clone(), &["users.name"]),
            json!({"users": [{"name": "Alice"}, {"name": "Bob"}]})
        );
        assert_eq!(
            masked(users.clone(), &["users.name", "users.metadata"]),
            json!({"users": [{"name": "Alice", "metadata": {"id": 1}}, {"name": "Bob"}]})
        );
        assert_eq!(masked(users.clone(), &["users"]), json!({"users": users["users"]}));
        assert_eq!(masked(users.clone(), &[]), users);
    }

    #[test]
    fn reflect_strips_managed_fields_and_last_applied_and_keeps_metadata_whole() {
        let mut object = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {
                "name": "shirts.stable.example.com",
                "labels": {"app": "shirts"},
                "annotations": {LAST_APPLIED: "{}", "keep": "me"},
                "managedFields": [{"manager": "kubectl"}],
                "unknownField": 1,
                "finalizers": null,
            },
            "spec": {"group": "stable.example.com", "names": {"kind": "Shirt", "categories": ["all"]}, "scope": "Namespaced"},
            "status": {"storedVersions": ["v1"]},
        });
        let mask = FieldMask::new(["spec.group", "spec.names.kind"]);
        reflect(&mut object, Some(&mask));
        assert_eq!(
            object,
            json!({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {
                    "name": "shirts.stable.example.com",
                    "labels": {"app": "shirts"},
                    "annotations": {"keep": "me"},
                    "managedFields": [],
                },
                "spec": {"group": "stable.example.com", "names": {"kind": "Shirt"}},
            })
        );
        // Without masks only metadata changes, and an object without annotations gets `{}`.
        let mut plain = json!({"kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}});
        reflect(&mut plain, None);
        assert_eq!(
            plain,
            json!({"kind": "ConfigMap", "metadata": {"name": "a", "annotations": {}, "managedFields": []}, "data": {"k": "v"}})
        );
        // Reflecting twice changes nothing more.
        let again = {
            let mut copy = object.clone();
            reflect(&mut copy, Some(&mask));
            copy
        };
        assert_eq!(again, object);
    }

    #[test]
    fn masks_of_a_request() {
        assert_eq!(mask_of(&Value::Null), None);
        assert_eq!(mask_of(&json!(["a.b", "c"])), Some(FieldMask::new(["c", "a.b"])));
    }
}
