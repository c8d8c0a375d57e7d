//! `kind-group-clash`: the one check that needs several documents at once, built into
//! `syncguard scan` as a pseudo-policy.
//!
//! Two scanned objects with the same kind, name and namespace (absent namespaces count as
//! equal) in different API groups are what broke Helm reinstalls before Helm 3.17.1 (Helm
//! issue 13582, docs/problems.md#2-the-same-kind-in-two-api-groups): Helm told a release's objects apart by kind, name
//! and namespace only, so the second object got the first one's identity. Every document of
//! such a set is rejected, each with a message naming every location of the set and with the
//! others as related locations. Objects without a name (generateName) are not compared.
//!
//! Settings (`policies.kind-group-clash.settings` in the config file), unknown keys rejected:
//! - `allowedKinds` (default `[]`): kinds never reported, e.g. `[Gateway]`;
//! - `allowedGroupSets` (default `[]`): lists of groups allowed to share kinds, e.g.
//!   `[[networking.istio.io, gateway.networking.k8s.io]]`; a set is allowed when all its
//!   groups are in one list.

use crate::cluster::Plurals;
use crate::input::{Document, Source};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use syncguard::finding::RuleDoc;

/// Name of the pseudo-policy.
pub const NAME: &str = "kind-group-clash";

/// One-line description (SARIF rule, JSON policy list).
pub const DESCRIPTION: &str = "Objects with the same kind, name and namespace in different API groups, which Helm before 3.17.1 confuses (Helm issue 13582)";

/// The rule of its findings (as a check's `FINDINGS`): `docs/scan.md` documents it, under
/// [`crate::rows::CLASH_DOCS`]. kind-group-clash is not in the core's registry of checks: it
/// judges a tree of documents, never one admission request, so no engine can run it.
pub const FINDINGS: &[RuleDoc] = &[RuleDoc {
    id: "sameKindAndName",
    summary: "another object of the scan has the same kind, name and namespace in a different API group",
    anchor: "kind-group-clash",
}];

/// Settings of the pseudo-policy.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Settings {
    /// Kinds never reported (default: none).
    pub allowed_kinds: Vec<String>,
    /// Sets of groups allowed to share kinds (default: none).
    pub allowed_group_sets: Vec<Vec<String>>,
}

/// Reads the settings; errors name the key.
pub fn parse_settings(value: Option<&Value>) -> Result<Settings, String> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(Settings::default());
    };
    serde_path_to_error::deserialize(value.clone()).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            e.inner().to_string()
        } else {
            format!("`{path}`: {}", e.inner())
        }
    })
}

/// One finding: a document, the message, and the other documents of its set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clash {
    /// The document reported.
    pub document: usize,
    /// The message.
    pub message: String,
    /// The same in a few words, within a warning's 256 characters.
    pub brief: String,
    /// The other documents of the set.
    pub related: Vec<usize>,
}

/// Finds every clash among `documents`, in document order. A set of cluster-scoped objects
/// (`plurals` knows the kinds' scopes) is named without the namespace their manifests give.
pub fn find(documents: &[Document], sources: &[Source], settings: &Settings, plurals: &Plurals) -> Vec<Clash> {
    let mut sets: BTreeMap<(&str, &str, &str), Vec<usize>> = BTreeMap::new();
    for (i, doc) in documents.iter().enumerate() {
        let Some(name) = doc.info.name.as_deref() else {
            continue;
        };
        if settings.allowed_kinds.contains(&doc.info.kind) {
            continue;
        }
        sets.entry((
            doc.info.kind.as_str(),
            doc.info.namespace.as_deref().unwrap_or(""),
            name,
        ))
        .or_default()
        .push(i);
    }
    let mut clashes = Vec::new();
    for ((kind, namespace, name), members) in sets {
        let mut groups: Vec<&str> = members.iter().map(|&i| documents[i].info.group.as_str()).collect();
        groups.sort_unstable();
        groups.dedup();
        if groups.len() < 2 {
            continue;
        }
        let allowed = settings
            .allowed_group_sets
            .iter()
            .any(|set| groups.iter().all(|g| set.iter().any(|s| s == g)));
        if allowed {
            continue;
        }
        let places: Vec<String> = members
            .iter()
            .map(|&i| {
                let doc = &documents[i];
                let core = if doc.info.group.is_empty() { " (core group)" } else { "" };
                format!("{}{core} at {}", doc.info.api_version, location(doc, sources))
            })
            .collect();
        let cluster_scoped = members.iter().all(|&i| {
            let info = &documents[i].info;
            plurals.cluster_scoped(&info.group, &info.version, &info.kind)
        });
        let scope = if namespace.is_empty() || cluster_scoped {
            String::new()
        } else {
            format!(" in namespace \"{namespace}\"")
        };
        let message = format!(
            "{kind} \"{name}\"{scope} is defined in {} API groups: {}. Helm before 3.17.1 tells the objects of a release apart by kind, name and namespace only, not by API group, so it mixes these objects up: installing the release again after an uninstall that kept them fails with `cannot patch \"{name}\" with kind {kind}: ... metadata.resourceVersion: Invalid value: 0x0: must be specified for an update` (Helm issue 13582). Fix: rename one of the objects, or deploy with Helm 3.17.1 or later and allow the kind with `policies.{NAME}.settings.allowedKinds: [{kind}]` in the scan config.",
            groups.len(),
            places.join(", "),
        );
        let brief = format!(
            "{kind} {}{scope} is defined in {} API groups ({}); Helm before 3.17.1 mixes them up.",
            syncguard::text::elide(&syncguard::text::quote(name), 80),
            groups.len(),
            syncguard::text::elide(
                &groups
                    .iter()
                    .map(|g| if g.is_empty() { "core" } else { g })
                    .collect::<Vec<_>>()
                    .join(", "),
                80
            ),
        );
        for &i in &members {
            clashes.push(Clash {
                document: i,
                message: message.clone(),
                brief: brief.clone(),
                related: members.iter().copied().filter(|&j| j != i).collect(),
            });
        }
    }
    clashes.sort_by_key(|c| c.document);
    clashes
}

/// `file:line` of a document.
pub fn location(doc: &Document, sources: &[Source]) -> String {
    let file = sources.get(doc.source).map(|s| s.display.as_str()).unwrap_or("?");
    format!("{file}:{}", doc.line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input;

    fn scan(text: &str) -> (Vec<Document>, Vec<Source>) {
        let contents = input::objects_of(0, "chart.yaml", text);
        assert!(contents.errors.is_empty());
        (
            contents.documents,
            vec![Source {
                display: "chart.yaml".into(),
                uri: "chart.yaml".into(),
                text: None,
            }],
        )
    }

    const SHIRTS: &str = "apiVersion: stable.example.com/v1\nkind: Shirt\nmetadata: {name: shirt, namespace: default}\n---\napiVersion: beta.example.com/v1\nkind: Shirt\nmetadata: {name: shirt, namespace: default}\n---\napiVersion: beta.example.com/v1\nkind: Shirt\nmetadata: {name: shirt, namespace: other}\n---\napiVersion: v1\nkind: Shirt\nmetadata: {generateName: shirt-}\n";

    #[test]
    fn reports_each_document_with_both_locations() {
        let (docs, sources) = scan(SHIRTS);
        let clashes = find(&docs, &sources, &Settings::default(), &Plurals::new(&docs));
        assert_eq!(clashes.len(), 2);
        assert_eq!((clashes[0].document, clashes[0].related.clone()), (0, vec![1]));
        assert_eq!((clashes[1].document, clashes[1].related.clone()), (1, vec![0]));
        assert!(
            clashes[0].message.starts_with(
                "Shirt \"shirt\" in namespace \"default\" is defined in 2 API groups: stable.example.com/v1 at chart.yaml:1, beta.example.com/v1 at chart.yaml:5."
            ),
            "{}",
            clashes[0].message
        );
    }

    #[test]
    fn cluster_scoped_objects_are_named_without_a_namespace() {
        // The two Shirts are cluster-scoped, as their CRDs say: the namespace of their manifests
        // is not named; with one of the CRDs namespaced, it is.
        let crd = |group: &str, scope: &str| {
            format!(
                "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {{name: shirts.{group}}}\nspec: {{group: {group}, scope: {scope}, names: {{kind: Shirt, plural: shirts}}, versions: []}}\n---\n"
            )
        };
        for (beta, named) in [("Cluster", false), ("Namespaced", true)] {
            let text = format!(
                "{}{}{SHIRTS}",
                crd("stable.example.com", "Cluster"),
                crd("beta.example.com", beta)
            );
            let (docs, sources) = scan(&text);
            let clashes = find(&docs, &sources, &Settings::default(), &Plurals::new(&docs));
            assert_eq!(clashes.len(), 2);
            let start = if named {
                "Shirt \"shirt\" in namespace \"default\" is"
            } else {
                "Shirt \"shirt\" is"
            };
            assert!(clashes[0].message.starts_with(start), "{}", clashes[0].message);
        }
    }

    #[test]
    fn allowances() {
        let (docs, sources) = scan(SHIRTS);
        let kinds = Settings {
            allowed_kinds: vec!["Shirt".into()],
            ..Settings::default()
        };
        assert!(find(&docs, &sources, &kinds, &Plurals::new(&docs)).is_empty());
        let groups = Settings {
            allowed_group_sets: vec![vec!["beta.example.com".into(), "stable.example.com".into(), "x".into()]],
            ..Settings::default()
        };
        assert!(find(&docs, &sources, &groups, &Plurals::new(&docs)).is_empty());
        let other = Settings {
            allowed_group_sets: vec![vec!["beta.example.com".into(), "x".into()]],
            ..Settings::default()
        };
        assert_eq!(find(&docs, &sources, &other, &Plurals::new(&docs)).len(), 2);
    }

    #[test]
    fn settings_are_strict() {
        assert_eq!(parse_settings(None).unwrap(), Settings::default());
        let err = parse_settings(Some(&serde_json::json!({"allowKinds": []}))).unwrap_err();
        assert!(err.contains("unknown field `allowKinds`"), "{err}");
        let err = parse_settings(Some(&serde_json::json!({"allowedKinds": "Gateway"}))).unwrap_err();
        assert!(err.contains("`allowedKinds`"), "{err}");
    }
}
