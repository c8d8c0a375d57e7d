//! `duplicate-object`: the same object (API group, kind, namespace, name) defined more than
//! once in the scanned tree, run by `syncguard scan` and the playground as kind-group-clash is.
//! Its entry and rule are the core's (`syncguard::checks::duplicate_object`, listed in
//! `syncguard::registry::TREE_CHECKS`); this module is its logic over the tree.
//!
//! What the tools do with such a tree, from their sources:
//! - Argo CD (`controller/state.go`, `DeduplicateTargetObjects`) keeps the last definition,
//!   drops the others, and sets the Application condition `RepeatedResourceWarning`: "Resource
//!   <group>/<kind>/<namespace>/<name> appeared 2 times among application resources." The sync
//!   goes on, with the earlier definitions silently ignored.
//! - kustomize refuses to build ("may not add resource with an already registered id"), and so
//!   does Flux's kustomize-controller, which builds every plain folder through kustomize.
//! - kubectl applies each in turn: the last wins.
//!
//! So the finding warns (a tree Argo CD and kubectl apply is not refused): one finding per set,
//! at its first definition, naming every place; the others are its related places. Objects
//! without a name (generateName) are not compared; an absent namespace and an empty one are the
//! same. No settings; `enabled: false` in the scan config turns it off.

use crate::input::{Document, Source};
use std::collections::BTreeMap;
pub use syncguard::checks::duplicate_object::NAME;

/// One set of definitions of one object, reported once at its first definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    /// The first definition.
    pub document: usize,
    /// The others, in scan order.
    pub related: Vec<usize>,
    /// What, where, why and the fix.
    pub message: String,
    /// The same in a few words, within a warning's 256 characters.
    pub brief: String,
}

/// Every object defined more than once among `documents`, in document order.
pub fn find(documents: &[Document], sources: &[Source]) -> Vec<Duplicate> {
    let mut sets: BTreeMap<(&str, &str, &str, &str), Vec<usize>> = BTreeMap::new();
    for (i, doc) in documents.iter().enumerate() {
        let Some(name) = doc.info.name.as_deref() else {
            continue;
        };
        sets.entry((
            doc.info.group.as_str(),
            doc.info.kind.as_str(),
            doc.info.namespace.as_deref().unwrap_or(""),
            name,
        ))
        .or_default()
        .push(i);
    }
    let mut found: Vec<Duplicate> = sets
        .into_iter()
        .filter(|(_, members)| members.len() > 1)
        .map(|((group, kind, namespace, name), members)| {
            let places: Vec<String> = members
                .iter()
                .map(|&i| crate::clash::location(&documents[i], sources))
                .collect();
            let first = &documents[members[0]];
            let identical = members.iter().all(|&i| documents[i].object == first.object);
            let same = if identical {
                "identical definitions"
            } else {
                "definitions that differ"
            };
            let label = if namespace.is_empty() {
                name.to_string()
            } else {
                format!("{namespace}/{name}")
            };
            let count = members.len();
            let message = format!(
                "{kind} {label} is defined {count} times ({same}): {}. Argo CD applies only the last one and warns \"Resource {group}/{kind}/{namespace}/{name} appeared {count} times among application resources\" (RepeatedResourceWarning); kustomize and Flux refuse to build the tree (\"may not add resource with an already registered id\"); kubectl applies each in turn, so the last one wins. Fix: keep one definition and delete the others.",
                places.join(", "),
            );
            let brief = format!(
                "{kind} {} is defined {count} times ({same}); Argo CD keeps only the last.",
                syncguard::text::elide(&label, 120)
            );
            Duplicate {
                document: members[0],
                related: members[1..].to_vec(),
                message,
                brief,
            }
        })
        .collect();
    found.sort_by_key(|d| d.document);
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input;

    fn scan(text: &str) -> (Vec<Document>, Vec<Source>) {
        let contents = input::objects_of(0, "tree.yaml", text);
        assert!(contents.errors.is_empty());
        (
            contents.documents,
            vec![Source {
                display: "tree.yaml".into(),
                uri: "tree.yaml".into(),
                text: None,
            }],
        )
    }

    #[test]
    fn each_object_defined_twice_is_reported_once_with_every_place() {
        let (docs, sources) = scan(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: ns}\ndata: {x: '1'}\n---\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: other}\n---\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: ns}\ndata: {x: '2'}\n---\n\
             apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a, namespace: ns}\n---\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: a-}\n---\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: a-}\n",
        );
        let found = find(&docs, &sources);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].document, found[0].related.clone()), (0, vec![2]));
        assert!(
            found[0].message.starts_with(
                "ConfigMap ns/a is defined 2 times (definitions that differ): tree.yaml:1, tree.yaml:10. Argo CD applies only the last one and warns \"Resource /ConfigMap/ns/a appeared 2 times among application resources\""
            ),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn versions_of_one_group_are_one_object() {
        let (docs, sources) = scan(
            "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\n---\n\
             apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h, namespace: ''}\n",
        );
        let found = find(&docs, &sources);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].brief.contains("(definitions that differ)"),
            "{}",
            found[0].brief
        );
    }
}
