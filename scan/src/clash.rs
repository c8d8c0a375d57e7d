//! `kind-group-clash`: a check of several documents at once (the objects of one Helm release),
//! run by `syncguard scan` and the playground.
//!
//! Helm 3 before 3.17.1 told the objects of one release apart by kind, name and namespace only
//! (`isMatchingInfo` in Helm's `pkg/kube/resource.go`; 3.17.1 compares the API group too, Helm
//! PR 13644, the v3 backport of PR 13583, and every Helm 4 release does): two objects of one
//! release with the same kind, name and namespace in different API groups got one identity, and
//! installing the release again after an uninstall that kept them failed (Helm issue 13582,
//! docs/problems.md#2-the-same-kind-in-two-api-groups). Nothing else mixes them up: Argo CD,
//! Flux, Fleet, kubectl and kustomize key objects by group, and two releases each keep their own.
//!
//! So a clash counts only among objects one Helm release installs together:
//! - objects with the same `meta.helm.sh/release-name` and `meta.helm.sh/release-namespace`
//!   annotations (what Helm 3.2 and later writes on every object it installs, so what
//!   `kubectl get -o yaml` of a release shows);
//! - else the documents of one `helm template` output: the documents of one file that carry the
//!   `# Source: <chart>/templates/...` comments Helm writes, of the same chart
//!   ([`crate::input::helm_source`]), or the files `helm template --output-dir DIR` writes, whose
//!   paths end with their `# Source:` path (`DIR/<chart>/templates/...`): one release per
//!   `DIR` and chart.
//!
//! Objects of no release, or of different releases, are never compared: the Istio samples'
//! `bookinfo-gateway` of `networking.istio.io` beside its Gateway API twin are alternatives,
//! and no tool confuses them. A set of one release is one finding, at its first document, naming
//! every place and listing the others as related locations; it rejects, except when every two
//! of its groups are a pair crd-kind-collision accepts as deliberate (well-known projects'
//! coexistence, such as Istio's Gateway beside Gateway API's, or one owner's groups), which
//! warns: neither check refuses what the other lets be. Objects without a name (generateName)
//! are not compared.
//!
//! Its entry, settings and rule are the core's (`syncguard::checks::kind_group_clash`, listed in
//! `syncguard::registry::TREE_CHECKS`); this module is its logic over the scanned tree.

use crate::cluster::Plurals;
use crate::input::{Document, Source};
use serde_json::Value;
use std::collections::BTreeMap;
use syncguard::checks::crd_kind_collision::well_known;
pub use syncguard::checks::kind_group_clash::{NAME, Settings};

/// One finding: a set of objects of one release, reported at its first document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clash {
    /// The document reported: the set's first.
    pub document: usize,
    /// Whether it rejects (else it warns: a deliberate pair of groups).
    pub reject: bool,
    /// The message.
    pub message: String,
    /// The same in a few words, within a warning's 256 characters.
    pub brief: String,
    /// The other documents of the set.
    pub related: Vec<usize>,
}

/// The Helm release a document belongs to, as far as the scan can tell.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Release {
    /// `meta.helm.sh/release-name` and `meta.helm.sh/release-namespace`.
    Annotated { name: String, namespace: String },
    /// One `helm template` output (a file, or an `--output-dir` folder), by the chart its
    /// `# Source:` comments name.
    Stream { root: String, chart: String },
}

impl Release {
    /// How a message names the release.
    fn describe(&self) -> String {
        match self {
            Release::Annotated { name, namespace } => {
                format!("Helm release \"{name}\" in namespace \"{namespace}\" (by their meta.helm.sh annotations)")
            }
            Release::Stream { root, chart } => {
                format!("one Helm release (the helm template output of chart \"{chart}\" in {root})")
            }
        }
    }
}

/// The release of `doc`: its annotations, else its `# Source:` comment.
fn release_of(doc: &Document, sources: &[Source]) -> Option<Release> {
    let object: Value = serde_json::from_str(&doc.object).ok()?;
    let annotations = object.get("metadata").and_then(|m| m.get("annotations"));
    let annotation = |key: &str| {
        annotations
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
    };
    if let (Some(name), Some(namespace)) = (
        annotation("meta.helm.sh/release-name"),
        annotation("meta.helm.sh/release-namespace"),
    ) {
        return Some(Release::Annotated {
            name: name.to_string(),
            namespace: namespace.to_string(),
        });
    }
    if doc.item.is_some() {
        return None;
    }
    let source = sources.get(doc.source)?;
    let path = crate::input::helm_source(source.text.as_deref()?, doc.line)?;
    let chart = path.split('/').next()?;
    // `helm template --output-dir DIR` writes each template to `DIR/<its Source path>`.
    let root = match source.display.strip_suffix(path) {
        Some("") => "./".to_string(),
        Some(dir) if dir.ends_with('/') => dir.to_string(),
        _ => source.display.clone(),
    };
    Some(Release::Stream {
        root,
        chart: chart.to_string(),
    })
}

/// Whether crd-kind-collision lets two groups serve one kind: one owner, or a coexistence of
/// well-known projects (the core group counts as built-in).
fn deliberate(a: &str, b: &str) -> bool {
    well_known::same_owner(a, b)
        || well_known::coexistence(a, b, b.is_empty())
        || well_known::coexistence(b, a, a.is_empty())
}

/// Finds every clash among `documents`, in document order. A set of cluster-scoped objects
/// (`plurals` knows the kinds' scopes) is named without the namespace their manifests give.
pub fn find(documents: &[Document], sources: &[Source], settings: &Settings, plurals: &Plurals) -> Vec<Clash> {
    if !settings.helm_affected() {
        return Vec::new();
    }
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
        if !several_groups(documents, &members) {
            continue;
        }
        // Only the documents read now, the few that share a kind and a name, are parsed again.
        let mut releases: BTreeMap<Release, Vec<usize>> = BTreeMap::new();
        for &i in &members {
            if let Some(release) = release_of(&documents[i], sources) {
                releases.entry(release).or_default().push(i);
            }
        }
        for (release, members) in releases {
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
            let reject = !groups
                .iter()
                .enumerate()
                .all(|(i, a)| groups[i + 1..].iter().all(|b| deliberate(a, b)));
            // A cluster-scoped object is named without the namespace its manifest gives.
            let cluster_scoped = members.iter().all(|&i| {
                let info = &documents[i].info;
                plurals.cluster_scoped(&info.group, &info.version, &info.kind)
            });
            let shown = if cluster_scoped { "" } else { namespace };
            clashes.push(clash(
                (kind, shown, name),
                &release,
                &groups,
                &members,
                reject,
                documents,
                sources,
            ));
        }
    }
    clashes.sort_by_key(|c| c.document);
    clashes
}

/// Whether `members` span more than one API group.
fn several_groups(documents: &[Document], members: &[usize]) -> bool {
    members
        .iter()
        .any(|&i| documents[i].info.group != documents[members[0]].info.group)
}

/// The finding of one set of one release.
fn clash(
    (kind, namespace, name): (&str, &str, &str),
    release: &Release,
    groups: &[&str],
    members: &[usize],
    reject: bool,
    documents: &[Document],
    sources: &[Source],
) -> Clash {
    let places: Vec<String> = members
        .iter()
        .map(|&i| {
            let doc = &documents[i];
            let core = if doc.info.group.is_empty() { " (core group)" } else { "" };
            format!("{}{core} at {}", doc.info.api_version, location(doc, sources))
        })
        .collect();
    let scope = if namespace.is_empty() {
        String::new()
    } else {
        format!(" in namespace \"{namespace}\"")
    };
    let deliberate = if reject {
        ""
    } else {
        " These groups are a deliberate pair of well-known projects (crd-kind-collision accepts them), so this only warns, but Helm still mixes them up."
    };
    let message = format!(
        "{kind} \"{name}\"{scope} is defined in {} API groups in {}: {}. Helm before 3.17.1 tells the objects of a release apart by kind, name and namespace only, not by API group, so it mixes these objects up: installing the release again after an uninstall that kept them fails with `cannot patch \"{name}\" with kind {kind}: ... metadata.resourceVersion: Invalid value: 0x0: must be specified for an update` (Helm issue 13582).{deliberate} Fix: rename one of the objects, or install with Helm 3.17.1 or later and say so with `policies.{NAME}.settings.helmVersion: \"3.17.1\"` (your version) in the scan config.",
        groups.len(),
        release.describe(),
        places.join(", "),
    );
    let brief = format!(
        "{kind} {}{scope} is defined in {} API groups ({}) in one Helm release; Helm before 3.17.1 mixes them up.",
        syncguard::text::elide(&syncguard::text::quote(name), 80),
        groups.len(),
        syncguard::text::elide(
            &groups
                .iter()
                .map(|g| if g.is_empty() { "core" } else { g })
                .collect::<Vec<_>>()
                .join(", "),
            60
        ),
    );
    Clash {
        document: members[0],
        reject,
        message,
        brief: syncguard::text::elide(&brief, 256).into_owned(),
        related: members[1..].to_vec(),
    }
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
    use syncguard::checks::kind_group_clash::parse_settings;

    fn scan_files(files: &[(&str, &str)]) -> (Vec<Document>, Vec<Source>) {
        let mut documents = Vec::new();
        let mut sources = Vec::new();
        for (i, (name, text)) in files.iter().enumerate() {
            let contents = input::objects_of(i, name, text);
            assert!(contents.errors.is_empty());
            documents.extend(contents.documents);
            sources.push(Source {
                display: name.to_string(),
                uri: name.to_string(),
                text: Some((*text).into()),
            });
        }
        (documents, sources)
    }

    fn scan(text: &str) -> (Vec<Document>, Vec<Source>) {
        scan_files(&[("chart.yaml", text)])
    }

    const RELEASE: &str = "annotations: {meta.helm.sh/release-name: shop, meta.helm.sh/release-namespace: default}";

    fn shirts(annotations: [&str; 2]) -> String {
        format!(
            "apiVersion: stable.example.com/v1\nkind: Shirt\nmetadata: {{name: shirt, namespace: default, {}}}\n---\napiVersion: beta.example.com/v1\nkind: Shirt\nmetadata: {{name: shirt, namespace: default, {}}}\n---\napiVersion: beta.example.com/v1\nkind: Shirt\nmetadata: {{name: shirt, namespace: other, {RELEASE}}}\n---\napiVersion: v1\nkind: Shirt\nmetadata: {{generateName: shirt-, {RELEASE}}}\n",
            annotations[0], annotations[1]
        )
    }

    #[test]
    fn one_finding_per_set_of_one_release() {
        let (docs, sources) = scan(&shirts([RELEASE, RELEASE]));
        let clashes = find(&docs, &sources, &Settings::default(), &Plurals::new(&docs));
        assert_eq!(clashes.len(), 1, "{clashes:?}");
        assert_eq!((clashes[0].document, clashes[0].related.clone()), (0, vec![1]));
        assert!(clashes[0].reject);
        assert!(
            clashes[0].message.starts_with(
                "Shirt \"shirt\" in namespace \"default\" is defined in 2 API groups in Helm release \"shop\" in namespace \"default\" (by their meta.helm.sh annotations): stable.example.com/v1 at chart.yaml:1, beta.example.com/v1 at chart.yaml:5."
            ),
            "{}",
            clashes[0].message
        );
        assert!(clashes[0].brief.chars().count() <= 256);
    }

    #[test]
    fn objects_of_no_release_or_of_two_releases_are_not_compared() {
        // The Istio samples: the Istio-API and Gateway-API versions of one demo, applied one or
        // the other, never by one Helm release.
        let (docs, sources) = scan(&shirts(["", ""]));
        assert_eq!(
            find(&docs, &sources, &Settings::default(), &Plurals::new(&docs)),
            vec![]
        );
        let other = "annotations: {meta.helm.sh/release-name: shop-2, meta.helm.sh/release-namespace: default}";
        let (docs, sources) = scan(&shirts([RELEASE, other]));
        assert_eq!(
            find(&docs, &sources, &Settings::default(), &Plurals::new(&docs)),
            vec![]
        );
        let (docs, sources) = scan(&shirts([RELEASE, ""]));
        assert_eq!(
            find(&docs, &sources, &Settings::default(), &Plurals::new(&docs)),
            vec![]
        );
    }

    const STREAM: &str = "---\n# Source: shop/templates/stable.yaml\napiVersion: stable.example.com/v1\nkind: Shirt\nmetadata: {name: shirt}\n---\n# Source: shop/charts/beta/templates/beta.yaml\napiVersion: beta.example.com/v1\nkind: Shirt\nmetadata: {name: shirt}\n";

    #[test]
    fn one_helm_template_stream_is_one_release() {
        let (docs, sources) = scan(STREAM);
        let clashes = find(&docs, &sources, &Settings::default(), &Plurals::new(&docs));
        assert_eq!(clashes.len(), 1, "{clashes:?}");
        assert!(
            clashes[0]
                .message
                .contains("in one Helm release (the helm template output of chart \"shop\" in chart.yaml): stable.example.com/v1 at chart.yaml:3, beta.example.com/v1 at chart.yaml:8."),
            "{}",
            clashes[0].message
        );
        // Two charts' outputs in one file are two releases.
        let (docs, sources) = scan(&STREAM.replace("shop/charts/beta", "other"));
        assert_eq!(
            find(&docs, &sources, &Settings::default(), &Plurals::new(&docs)),
            vec![]
        );
        // Without the comments, nothing says Helm installs them together.
        let (docs, sources) = scan(&STREAM.replace("# Source", "# Origin"));
        assert_eq!(
            find(&docs, &sources, &Settings::default(), &Plurals::new(&docs)),
            vec![]
        );
    }

    #[test]
    fn helm_template_output_dir_is_one_release_per_folder() {
        let stable = "---\n# Source: shop/templates/stable.yaml\napiVersion: stable.example.com/v1\nkind: Shirt\nmetadata: {name: shirt}\n";
        let beta = "---\n# Source: shop/templates/beta.yaml\napiVersion: beta.example.com/v1\nkind: Shirt\nmetadata: {name: shirt}\n";
        let (docs, sources) = scan_files(&[
            ("out/shop/templates/beta.yaml", beta),
            ("out/shop/templates/stable.yaml", stable),
        ]);
        let clashes = find(&docs, &sources, &Settings::default(), &Plurals::new(&docs));
        assert_eq!(clashes.len(), 1, "{clashes:?}");
        assert!(
            clashes[0].message.contains("chart \"shop\" in out/)"),
            "{}",
            clashes[0].message
        );
        // Two renders of the chart into two folders are two releases; files that are not under
        // their Source path are each their own stream.
        for names in [
            ["prod/shop/templates/beta.yaml", "staging/shop/templates/stable.yaml"],
            ["beta.yaml", "stable.yaml"],
        ] {
            let (docs, sources) = scan_files(&[(names[0], beta), (names[1], stable)]);
            assert_eq!(
                find(&docs, &sources, &Settings::default(), &Plurals::new(&docs)),
                vec![],
                "{names:?}"
            );
        }
    }

    #[test]
    fn deliberate_pairs_only_warn() {
        let gateways = format!(
            "apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {{name: bookinfo-gateway, {RELEASE}}}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: bookinfo-gateway, {RELEASE}}}\n"
        );
        let (docs, sources) = scan(&gateways);
        let clashes = find(&docs, &sources, &Settings::default(), &Plurals::new(&docs));
        assert_eq!(clashes.len(), 1, "{clashes:?}");
        assert!(!clashes[0].reject);
        assert!(clashes[0].message.contains("deliberate pair"), "{}", clashes[0].message);
        // A well-known project's kind beside the same kind of an unknown group is no pair.
        let (docs, sources) = scan(&gateways.replace("networking.istio.io", "gateways.unknown-vendor.com"));
        assert!(find(&docs, &sources, &Settings::default(), &Plurals::new(&docs))[0].reject);
    }

    #[test]
    fn helm_versions() {
        let (docs, sources) = scan(&shirts([RELEASE, RELEASE]));
        for (version, affected) in [
            ("3.16.4", true),
            ("v3.17.0", true),
            ("3.17.1-rc.1", true),
            ("2.17.0", true),
            ("3.17.1", false),
            ("v3.17.1", false),
            ("3.18", false),
            ("4.0.0", false),
            ("v3.17.1+g980d8ac", false),
        ] {
            let settings = parse_settings(Some(&serde_json::json!({ "helmVersion": version }))).unwrap();
            assert_eq!(settings.helm_affected(), affected, "{version}");
            assert_eq!(
                find(&docs, &sources, &settings, &Plurals::new(&docs)).len(),
                usize::from(affected),
                "{version}"
            );
        }
        assert!(
            Settings::default().helm_affected(),
            "an unknown Helm is assumed affected"
        );
        for bad in ["latest", "3.x", "", "v", "3.17.1.2", "3..1"] {
            let err = parse_settings(Some(&serde_json::json!({ "helmVersion": bad }))).unwrap_err();
            assert!(err.starts_with("`helmVersion`: "), "{err}");
            assert!(err.contains("\"3.16.4\""), "{err}");
        }
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
                "{}{}{}",
                crd("stable.example.com", "Cluster"),
                crd("beta.example.com", beta),
                shirts([RELEASE, RELEASE])
            );
            let (docs, sources) = scan(&text);
            let clashes = find(&docs, &sources, &Settings::default(), &Plurals::new(&docs));
            assert_eq!(clashes.len(), 1, "{clashes:?}");
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
        let (docs, sources) = scan(&shirts([RELEASE, RELEASE]));
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
        assert_eq!(find(&docs, &sources, &other, &Plurals::new(&docs)).len(), 1);
    }

    #[test]
    fn settings_are_strict() {
        assert_eq!(parse_settings(None).unwrap(), Settings::default());
        let err = parse_settings(Some(&serde_json::json!({"allowKinds": []}))).unwrap_err();
        assert!(err.contains("unknown field `allowKinds`"), "{err}");
        let err = parse_settings(Some(&serde_json::json!({"allowedKinds": "Gateway"}))).unwrap_err();
        assert!(err.contains("`allowedKinds`"), "{err}");
        let err = parse_settings(Some(&serde_json::json!({"helmVersion": 3.17}))).unwrap_err();
        assert!(err.contains("`helmVersion`"), "{err}");
    }
}
