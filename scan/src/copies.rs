//! Copies of one object in a scan, so that each thing is said once.
//!
//! - Identical copies ([`identical`]): documents with the same group, kind, namespace and name
//!   and the same content (and the same old version under `--base`) are judged once, with the
//!   first of them, and every finding names the places of the others (OpenShift's feature-set
//!   copies of a CRD, a chart vendored twice).
//! - The CRD a custom resource is judged against ([`CrdIndex`]): when the scan holds several
//!   CustomResourceDefinitions serving the resource's group and kind, the findings of a check
//!   that reads the CRD (sync-drift's pruned fields) name the copy the offline cluster answered
//!   with (the last in scan order: a later object of the same name replaces an earlier one, as a
//!   later apply does) and say whether the copies differ, in which case the answer depends on
//!   which one the cluster ends up with.

use crate::input::Document;
use std::collections::HashMap;

/// What makes two documents identical copies: group, kind, namespace, name, content and old
/// version.
type Identity<'d> = (&'d str, &'d str, Option<&'d str>, &'d str, &'d str, Option<&'d str>);

/// For each document, the earlier document it is an identical copy of (same group, kind,
/// namespace, name, content and old version), `None` for the first of its copies and for every
/// object without a name.
pub fn identical(documents: &[Document]) -> Vec<Option<usize>> {
    let mut first: HashMap<Identity<'_>, usize> = HashMap::new();
    documents
        .iter()
        .enumerate()
        .map(|(i, doc)| {
            let name = doc.info.name.as_deref()?;
            let key = (
                doc.info.group.as_str(),
                doc.info.kind.as_str(),
                doc.info.namespace.as_deref(),
                name,
                &*doc.object,
                doc.old.as_deref(),
            );
            match first.get(&key) {
                Some(&original) => Some(original),
                None => {
                    first.insert(key, i);
                    None
                }
            }
        })
        .collect()
}

/// The identical copies of each document that has some ([`identical`]): the first copy's index,
/// then the others' in scan order.
pub fn copies_of(copy_of: &[Option<usize>]) -> HashMap<usize, Vec<usize>> {
    let mut copies: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, original) in copy_of.iter().enumerate() {
        if let Some(original) = original {
            copies.entry(*original).or_default().push(i);
        }
    }
    copies
}

/// The CRDs of a scan by the group and kind they serve.
#[derive(Debug, Default)]
pub struct CrdIndex {
    by_group_kind: HashMap<(String, String), Vec<usize>>,
}

/// The copies of the CRD serving a custom resource, when the scan holds more than one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrdCopies {
    /// The copy the resource was judged against: the last in scan order, the one the offline
    /// cluster answers with.
    pub used: usize,
    /// The other copies, in scan order.
    pub others: Vec<usize>,
    /// Whether the copies differ in content, so that the answer depends on which one is
    /// installed.
    pub differ: bool,
}

impl CrdIndex {
    /// Indexes the CustomResourceDefinitions among `documents`.
    pub fn new(documents: &[Document]) -> CrdIndex {
        let mut by_group_kind: HashMap<(String, String), Vec<usize>> = HashMap::new();
        for (i, doc) in documents.iter().enumerate() {
            if let Some(names) = &doc.crd_names {
                by_group_kind
                    .entry((names.group.clone(), names.kind.clone()))
                    .or_default()
                    .push(i);
            }
        }
        CrdIndex { by_group_kind }
    }

    /// The copies of the CRD serving `doc`'s group and kind, when there are several; `None`
    /// for a CRD itself, and for a resource with one CRD or none in the scan.
    pub fn copies(&self, doc: &Document, documents: &[Document]) -> Option<CrdCopies> {
        if doc.crd_names.is_some() {
            return None;
        }
        let all = self
            .by_group_kind
            .get(&(doc.info.group.clone(), doc.info.kind.clone()))?;
        let (&used, others) = all.split_last()?;
        if others.is_empty() {
            return None;
        }
        let differ = others.iter().any(|&i| documents[i].object != documents[used].object);
        Some(CrdCopies {
            used,
            others: others.to_vec(),
            differ,
        })
    }
}

/// Whether the findings of `policy` on a custom resource depend on its CRD: a syncguard check
/// that looks CustomResourceDefinitions up (sync-drift's pruned fields), alone or in the
/// all-in-one.
pub fn reads_crds(policy: &str) -> bool {
    let looks_up = |entry: &syncguard::registry::Entry| {
        entry
            .lookups
            .iter()
            .any(|(_, kind)| *kind == "CustomResourceDefinition")
            && entry.kinds.is_empty()
    };
    match syncguard::registry::Entry::named(policy) {
        Some(entry) => looks_up(entry),
        None => policy == syncguard::registry::ALL_IN_ONE && syncguard::registry::CHECKS.iter().any(looks_up),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(text: &str) -> Vec<Document> {
        crate::input::objects_of(0, "t.yaml", text).documents
    }

    const CRD_A: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\nspec: {group: example.com, names: {kind: Widget, plural: widgets}, scope: Namespaced}\n";
    const CRD_B: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com, labels: {copy: b}}\nspec: {group: example.com, names: {kind: Widget, plural: widgets}, scope: Namespaced}\n";
    const WIDGET: &str = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: ns}\n";

    #[test]
    fn identical_copies_point_at_the_first() {
        let documents = docs(&[CRD_A, CRD_B, CRD_A, CRD_A, WIDGET].join("---\n"));
        let copy_of = identical(&documents);
        assert_eq!(copy_of, [None, None, Some(0), Some(0), None]);
        assert_eq!(copies_of(&copy_of).get(&0), Some(&vec![2, 3]));
    }

    #[test]
    fn unnamed_objects_are_never_copies() {
        let unnamed = "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: x-}\n";
        let documents = docs(&[unnamed, unnamed].join("---\n"));
        assert_eq!(identical(&documents), [None, None]);
    }

    #[test]
    fn a_custom_resource_names_the_copy_it_was_judged_against() {
        let index_of = |documents: &[Document]| CrdIndex::new(documents);
        let documents = docs(&[CRD_A, WIDGET].join("---\n"));
        assert_eq!(index_of(&documents).copies(&documents[1], &documents), None);
        let documents = docs(&[CRD_A, CRD_A, WIDGET].join("---\n"));
        assert_eq!(
            index_of(&documents).copies(&documents[2], &documents),
            Some(CrdCopies {
                used: 1,
                others: vec![0],
                differ: false
            })
        );
        let documents = docs(&[CRD_A, WIDGET, CRD_B].join("---\n"));
        let index = index_of(&documents);
        assert_eq!(
            index.copies(&documents[1], &documents),
            Some(CrdCopies {
                used: 2,
                others: vec![0],
                differ: true
            })
        );
        assert_eq!(
            index.copies(&documents[0], &documents),
            None,
            "a CRD is no custom resource"
        );
    }

    #[test]
    fn sync_drift_reads_crds_and_the_others_do_not() {
        assert!(reads_crds("sync-drift"));
        assert!(reads_crds(syncguard::registry::ALL_IN_ONE));
        assert!(!reads_crds("hook-job-safety"));
        assert!(!reads_crds("crd-kind-collision"));
        assert!(!reads_crds("someone-elses-policy"));
    }
}
