//! Well-known projects and owners: which API groups widely used projects and platforms serve,
//! so that crd-kind-collision tells their deliberate coexistences (Istio's Gateway beside Gateway
//! API's, Knative's Service beside the built-in one, OpenShift's Ingress beside the built-in one)
//! apart from a new clash nobody has vetted; and which groups belong to one owner.
//!
//! - A group is *well-known* when the table lists it or a parent domain of it: whoever owns a
//!   domain owns its subdomains, so `crd.projectcalico.org` is well-known as `projectcalico.org`
//!   is. A well-known group is well-known for any kind it serves, not only the kinds one catalog
//!   happened to list. Groups that only share a parent (`stable.example.com` and
//!   `beta.example.com`) get nothing from each other.
//! - A group of the Kubernetes project itself is well-known by rule, listed or not: `k8s.io`
//!   and every group under it (`gateway.networking.k8s.io`, `*.sigs.k8s.io`), and every group
//!   under `x-k8s.io` (`kwok.x-k8s.io`, `cluster.x-k8s.io`), the domain the project's SIG
//!   subprojects name their experimental APIs under. The project owns both domains (the API
//!   server refuses a CRD of a `*.k8s.io` group without an `api-approved.kubernetes.io`
//!   annotation), so no catalog needs to have met a group there for it to be the project's.
//! - A group under a name reserved for examples, tests or private use (`example.com`,
//!   `example.net`, `example.org`, `.example`, `.test`, `.invalid`, `.localhost`, `.local`,
//!   `.internal`, `.home.arpa`) is never well-known and has no owner, whatever the table says.
//! - Two groups have *one owner* when they share their registrable domain, as the Public Suffix
//!   List decides it (the list in `public_suffix_list.txt`, compiled by
//!   `build/public_suffix.rs` into a sorted table of the nodes of its tree of rules, read by
//!   the [psl-types](https://crates.io/crates/psl-types) crate's algorithm): `config.openshift.io`
//!   and `operator.openshift.io` (`openshift.io`), `serving.knative.dev` and
//!   `networking.internal.knative.dev` (`knative.dev`), but not `a.github.io` and `b.github.io`
//!   (`github.io` is a public suffix). Nothing is parsed at run time.
//!
//! The table is `well_known_groups.tsv`: API groups read from the datree CRDs catalog, OpenShift's
//! payload, the CRDs Rancher, RKE2 and k3s install, GKE's, EKS's and AKS's add-ons and CNCF
//! projects the catalog lacks, each source at the commit the file records
//! (`tools/refresh-well-known.py`, run by `make well-known`); `build/well_known.rs` compiles it into sorted 64-bit
//! keys ([`well_known_key`]), 8 bytes a group.

include!("well_known_key.rs");
include!(concat!(env!("OUT_DIR"), "/well_known_groups.rs"));
include!("public_suffix_key.rs");
include!(concat!(env!("OUT_DIR"), "/public_suffix.rs"));

use psl_types::List as _;

/// Domains reserved for documentation, tests and private use (RFC 2606, RFC 6761, RFC 6762,
/// RFC 8375, ICANN's `.internal`): a group under one is never well-known and has no owner.
const RESERVED: &[&str] = &[
    "example.com",
    "example.net",
    "example.org",
    "example",
    "test",
    "invalid",
    "localhost",
    "local",
    "internal",
    "home.arpa",
];

/// What crd-kind-collision does with a kind clash that is a coexistence of well-known projects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WellKnownProjects {
    /// Accept it with one short warning (default).
    #[default]
    Warn,
    /// Accept it silently.
    Allow,
    /// No exemption: `builtinCollisions` and `crdCollisions` decide, as for any other clash.
    Strict,
}

crate::settings::string_enum!(WellKnownProjects {
    "warn" => WellKnownProjects::Warn,
    "allow" => WellKnownProjects::Allow,
    "strict" => WellKnownProjects::Strict,
});

impl WellKnownProjects {
    /// Whether the setting exempts a kind clash between the CRD's `group` and `other_group` (a
    /// built-in resource's group when `other_builtin`).
    pub fn exempts(self, group: &str, other_group: &str, other_builtin: bool) -> bool {
        self != WellKnownProjects::Strict && coexistence(group, other_group, other_builtin)
    }
}

/// Whether a clash between a CRD of `group` and a resource of `other_group` (built-in when
/// `other_builtin`) is a coexistence of well-known projects.
pub fn coexistence(group: &str, other_group: &str, other_builtin: bool) -> bool {
    is_well_known(group) && (other_builtin || is_well_known(other_group))
}

/// Whether `group` is under a reserved domain.
pub fn is_reserved(group: &str) -> bool {
    RESERVED.iter().any(|reserved| within(group, reserved))
}

/// Domains only the Kubernetes project publishes API groups under: each, and every group under
/// it, is well-known by rule.
pub const KUBERNETES_DOMAINS: &[&str] = &["k8s.io", "x-k8s.io"];

/// Whether `group` is the Kubernetes project's own: `k8s.io`, `x-k8s.io` or a group under one.
pub fn is_kubernetes_project(group: &str) -> bool {
    KUBERNETES_DOMAINS.iter().any(|domain| within(group, domain))
}

/// Whether `group` is well-known: the Kubernetes project's, listed, or under a listed domain,
/// and not reserved.
pub fn is_well_known(group: &str) -> bool {
    if group.is_empty() || is_reserved(group) {
        return false;
    }
    if is_kubernetes_project(group) {
        return true;
    }
    // The group itself, then each parent domain of at least two labels.
    let mut domain = group;
    loop {
        if listed(domain) {
            return true;
        }
        match domain.split_once('.') {
            Some((_, parent)) if parent.contains('.') => domain = parent,
            _ => return false,
        }
    }
}

/// Whether `group` is `domain` or a subdomain of it.
fn within(group: &str, domain: &str) -> bool {
    group == domain || group.strip_suffix(domain).is_some_and(|head| head.ends_with('.'))
}

/// Whether the table lists exactly `group`.
fn listed(group: &str) -> bool {
    WELL_KNOWN_GROUPS.binary_search(&well_known_key(group)).is_ok()
}

/// The registrable domain of `group` by the Public Suffix List (`openshift.io` for
/// `config.openshift.io`); `None` for a name without one (`apps`, a public suffix itself) and
/// for a reserved group.
pub fn registrable_domain(group: &str) -> Option<String> {
    if is_reserved(group) || !group.contains('.') {
        return None;
    }
    let domain = PublicSuffixList.domain(group.as_bytes())?;
    std::str::from_utf8(domain.as_bytes()).ok().map(str::to_string)
}

/// The Public Suffix List compiled at build time (`SUFFIX_NODES`), as a list the psl-types
/// crate's `suffix` and `domain` read. psl-types takes any list that finds a name's suffix;
/// no crate finds it in a table built at build time, so [`find`](Self::find) is written here:
/// the walk of the `publicsuffix` crate's tree of rules (down by each label, or by a `*` rule
/// where no rule names the label, stopping at an exception), over the table's keys. A key is 62
/// bits of a hash: the build refuses two nodes of one key, and a name that no rule names meets a
/// node's key with a chance of about one in 2^49 per label.
struct PublicSuffixList;

impl PublicSuffixList {
    /// The leaf kind of the node `key` of the tree (see `SUFFIX_LEAF`), if the tree has it.
    fn node(key: u64) -> Option<u64> {
        SUFFIX_NODES
            .binary_search_by(|entry| (entry >> 2).cmp(&(key >> 2)))
            .ok()
            .map(|index| SUFFIX_NODES[index] & 3)
    }
}

impl psl_types::List for PublicSuffixList {
    fn find<'a, T>(&self, mut labels: T) -> psl_types::Info
    where
        T: Iterator<Item = &'a [u8]>,
    {
        let Some(first) = labels.next() else {
            return psl_types::Info { len: 0, typ: None };
        };
        // The top-level domain is the suffix whether a rule names it or not (the list's implicit
        // `*` rule). The table does not keep the list's sections (a registrable domain does not
        // depend on them), so no suffix has a type.
        let mut info = psl_types::Info {
            len: first.len(),
            typ: None,
        };
        let mut node = suffix_node_key(SUFFIX_ROOT, first);
        if Self::node(node).is_none() {
            return info;
        }
        let mut so_far = info.len;
        for label in labels {
            let named = suffix_node_key(node, label);
            let (key, leaf) = match Self::node(named) {
                Some(leaf) => (named, leaf),
                None => {
                    let wildcard = suffix_node_key(node, b"*");
                    match Self::node(wildcard) {
                        Some(leaf) => (wildcard, leaf),
                        None => break,
                    }
                }
            };
            node = key;
            if leaf == SUFFIX_LEAF[2] {
                info.len = so_far;
                break;
            }
            if leaf == SUFFIX_LEAF[1] {
                info.len = so_far + label.len() + 1;
            }
            so_far += label.len() + 1;
        }
        info
    }
}

/// Whether `a` and `b` have one owner: the same registrable domain, neither reserved.
pub fn same_owner(a: &str, b: &str) -> bool {
    if a.is_empty() || b.is_empty() {
        return false;
    }
    match (registrable_domain(a), registrable_domain(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// Why two groups that serve one kind are not let be, in a few words: a group under a reserved
/// domain, a group no well-known project serves, or (two well-known groups refused under
/// `wellKnownProjects: strict`) a different owner.
pub fn why_strict(group: &str, other_group: &str, other_builtin: bool) -> String {
    let label = |g: &str| {
        if g.is_empty() {
            "core".to_string()
        } else {
            g.to_string()
        }
    };
    if let Some(reserved) = [group, other_group].into_iter().find(|g| is_reserved(g)) {
        return format!("{} is under a reserved domain", label(reserved));
    }
    let unknown: Vec<String> = [(group, false), (other_group, other_builtin)]
        .into_iter()
        .filter(|(g, builtin)| !builtin && !is_well_known(g))
        .map(|(g, _)| label(g))
        .collect();
    if !unknown.is_empty() {
        return format!(
            "{} {} no well-known project's group",
            crate::text::join_and(&unknown),
            if unknown.len() == 1 { "is" } else { "are" }
        );
    }
    "a different owner (wellKnownProjects: strict)".to_string()
}

/// The finding of a CRD of kind `kind` accepted beside the well-known `others` (group labels,
/// sorted), in a few words.
pub fn brief(kind: &str, others: &[String]) -> crate::text::Parts {
    crate::text::Parts::default()
        .fixed("kind ")
        .elidable(kind)
        .fixed(" is also served by ")
        .elidable(crate::text::join_and(others))
        .fixed(
            ", accepted as a coexistence of well-known projects (wellKnownProjects: warn); use full resource names with kubectl.",
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check;
    use crate::checks::crd_kind_collision::CrdKindCollision;
    use crate::cluster::Objects;
    use crate::text::MAX_WARNING_CHARS;
    use serde_json::Value;

    /// Every group of the table as committed.
    fn table() -> Vec<String> {
        include_str!("well_known_groups.tsv")
            .lines()
            .filter(|line| !line.starts_with('#') && !line.is_empty())
            .map(|line| line.split('\t').next().unwrap_or("").to_string())
            .collect()
    }

    #[test]
    fn every_group_of_the_table_is_found_and_the_keys_are_sorted() {
        let groups = table();
        assert_eq!(groups.len(), WELL_KNOWN_GROUPS.len());
        assert!(groups.len() > 700, "{}", groups.len());
        for group in &groups {
            assert!(listed(group), "{group}");
        }
        assert!(WELL_KNOWN_GROUPS.windows(2).all(|w| w[0] < w[1]));
        // Platforms and projects the datree catalog lacks.
        for group in [
            "config.openshift.io",
            "operator.openshift.io",
            "kubeovn.io",
            "tekton.dev",
            "k3s.cattle.io",
        ] {
            assert!(listed(group), "{group}");
        }
    }

    #[test]
    fn the_issue_examples_are_coexistences() {
        assert!(coexistence("serving.knative.dev", "", true));
        assert!(coexistence(
            "networking.internal.knative.dev",
            "networking.k8s.io",
            true
        ));
        assert!(coexistence("networking.istio.io", "gateway.networking.k8s.io", false));
        assert!(coexistence("config.openshift.io", "networking.k8s.io", true));
        // Calico's crd.projectcalico.org is under projectcalico.org.
        assert!(coexistence("crd.projectcalico.org", "networking.k8s.io", true));
        // A well-known group is well-known for a kind no catalog listed yet.
        assert!(is_well_known("cert-manager.io"));
    }

    #[test]
    fn the_kubernetes_projects_groups_are_well_known_by_rule() {
        for group in [
            "kwok.x-k8s.io",
            "x-k8s.io",
            "k8s.io",
            "some-new-sig.x-k8s.io",
            "policy.sigs.k8s.io",
            "new.sigs.k8s.io",
            "anything.k8s.io",
        ] {
            assert!(is_kubernetes_project(group), "{group}");
            assert!(is_well_known(group), "{group}");
        }
        // Knative's metrics beside kwok's (issue 45).
        assert!(coexistence("autoscaling.internal.knative.dev", "kwok.x-k8s.io", false));
        // Look-alikes are not the project's.
        for group in ["k8s.io.evil.com", "notk8s.io", "x-k8s.io.example.org", "fake-k8s.io"] {
            assert!(!is_kubernetes_project(group), "{group}");
        }
        assert!(!is_well_known("notk8s.io"));
        assert!(!is_well_known("fake-k8s.io"));
    }

    #[test]
    fn unknown_and_reserved_groups_are_not() {
        assert!(!coexistence("stable.example.com", "beta.example.com", false));
        assert!(!coexistence("flux.local", "apps", true));
        assert!(!is_well_known("example.com"));
        assert!(!is_well_known(""));
        // An in-house group and a misspelt one are not a project's.
        assert!(!coexistence("certificates.pki.acme.com", "cert-manager.io", false));
        assert!(!coexistence("cert-manger.io", "cert-manager.io", false));
        assert!(!coexistence("networking.istio.io", "acme.io", false));
    }

    #[test]
    fn one_owner_by_the_public_suffix_list() {
        assert!(same_owner("config.openshift.io", "operator.openshift.io"));
        assert!(same_owner("serving.knative.dev", "networking.internal.knative.dev"));
        assert!(same_owner("kyverno.io", "policies.kyverno.io"));
        assert!(same_owner("pki.corp.example.co.uk", "other.example.co.uk"));
        assert!(
            !same_owner("stable.example.com", "beta.example.com"),
            "reserved: no owner"
        );
        assert!(
            !same_owner("a.github.io", "b.github.io"),
            "github.io is a public suffix"
        );
        assert!(!same_owner("corp.co.uk", "other.co.uk"), "not the last two labels");
        assert!(!same_owner("cert-manager.io", "cert-manger.io"));
        assert!(!same_owner("apps", "batch"));
        assert!(!same_owner("", "networking.k8s.io"));
        assert_eq!(
            registrable_domain("gateway.networking.k8s.io").as_deref(),
            Some("k8s.io")
        );
    }

    #[test]
    fn refusals_say_which_case() {
        assert!(why_strict("stable.example.com", "beta.example.com", false).contains("reserved"));
        assert_eq!(
            why_strict("pki.acme.com", "cert-manager.io", false),
            "pki.acme.com is no well-known project's group"
        );
        assert_eq!(
            why_strict("flux.local", "apps", true),
            "flux.local is under a reserved domain"
        );
        assert_eq!(
            why_strict("serving.knative.dev", "", true),
            "a different owner (wellKnownProjects: strict)"
        );
    }

    #[test]
    fn reserved_names_match_whole_labels() {
        assert!(within("flux.local", "local"));
        assert!(within("example.com", "example.com"));
        assert!(within("a.b.example.org", "example.org"));
        assert!(!within("notexample.com", "example.com"));
        assert!(!within("networking.internal.knative.dev", "internal"));
        assert!(is_well_known("networking.internal.knative.dev"));
    }

    #[test]
    fn settings_values() {
        let read = |text: &str| serde_json::from_str::<WellKnownProjects>(text);
        assert_eq!(read("\"warn\"").unwrap(), WellKnownProjects::Warn);
        assert_eq!(read("\"allow\"").unwrap(), WellKnownProjects::Allow);
        assert_eq!(read("\"strict\"").unwrap(), WellKnownProjects::Strict);
        assert!(read("\"reject\"").is_err());
        assert!(!WellKnownProjects::Strict.exempts("serving.knative.dev", "", true));
        assert!(WellKnownProjects::Allow.exempts("serving.knative.dev", "", true));
    }

    /// The warning of a CRD `name` of kind `kind` accepted beside `others`, as the renderer
    /// writes it in the all-in-one (behind the check's name, where it has the least room).
    fn warning(name: &str, kind: &str, others: &[String]) -> String {
        let mut request = crate::admission::Request::default();
        request.kind.kind = "CustomResourceDefinition".into();
        let subject = crate::finding::Subject::new(&request, name, "", "");
        let finding = crate::finding::Finding::warn("wellKnownCoexistence", "", "", brief(kind, others));
        let report = crate::finding::Report::new(subject, vec![finding]);
        let part = crate::render::Part::report("crd-kind-collision", super::super::FINDINGS, report);
        crate::render::answer(vec![part], true).response.warnings[0].clone()
    }

    #[test]
    fn warnings_fit_the_api_server() {
        let short = warning(
            "gateways.networking.istio.io",
            "Gateway",
            &["gateway.networking.k8s.io".into()],
        );
        assert!(
            short.starts_with(
                "crd-kind-collision: CRD gateways.networking.istio.io: kind Gateway is also served by gateway.networking.k8s.io, accepted"
            ),
            "{short}"
        );
        assert!(short.chars().count() <= MAX_WARNING_CHARS, "{short}");
        let long_name = format!("{}.example.io", "x".repeat(240));
        let many = ["a.example.io", "b.example.io", "c.example.io", "d.example.io"].map(String::from);
        for (name, others) in [
            ("certificates.networking.internal.knative.dev", &many[..1]),
            ("certificates.networking.internal.knative.dev", &many[..]),
            (long_name.as_str(), &many[..]),
        ] {
            let text = warning(name, "Certificate", others);
            assert!(text.chars().count() <= MAX_WARNING_CHARS, "{} {text}", text.len());
        }
        let one = warning(&long_name, "Certificate", &many[..1]);
        assert!(one.contains("…"), "a long name is shortened in its middle: {one}");
    }

    /// The CRDs of the YAML files of `test_data/well-known/` (`previous/` when `previous`), with
    /// their project.
    fn acceptance_set(previous: bool) -> Vec<(String, Value)> {
        use serde::Deserialize as _;
        let mut dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/crd-kind-collision/test_data/well-known");
        if previous {
            dir = dir.join("previous");
        }
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
            .collect();
        files.sort();
        let mut crds = Vec::new();
        for path in files {
            let project = path.file_stem().unwrap().to_string_lossy().to_string();
            let text = std::fs::read_to_string(&path).unwrap();
            for document in serde_yaml_ng::Deserializer::from_str(&text) {
                let crd = Value::deserialize(document).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                crds.push((project.clone(), crd));
            }
        }
        crds
    }

    /// Every kind clash of the acceptance set between groups of different owners, one line
    /// each: the CRD, its kind and group, and the other group serving that kind (a built-in
    /// resource or another project's CRD).
    fn clashes(crds: &[(String, Value)]) -> Vec<String> {
        let mut lines = std::collections::BTreeSet::new();
        for (project, crd) in crds {
            let (group, kind) = (
                crd["spec"]["group"].as_str().unwrap(),
                crd["spec"]["names"]["kind"].as_str().unwrap(),
            );
            for builtin in crate::generated::builtin_resources() {
                if builtin.kind == kind
                    && builtin.group != group
                    && !builtin.subresource
                    && !builtin.plural.is_empty()
                    && !same_owner(group, builtin.group)
                {
                    let other = if builtin.group.is_empty() {
                        "core"
                    } else {
                        builtin.group
                    };
                    lines.insert(format!("{kind}: {group} ({project}) ~ {other} (built-in)"));
                }
            }
            for (other_project, other) in crds {
                let other_group = other["spec"]["group"].as_str().unwrap();
                if other["spec"]["names"]["kind"] == kind
                    && other_group != group
                    && group < other_group
                    && !same_owner(group, other_group)
                {
                    lines.insert(format!("{kind}: {group} ({project}) ~ {other_group} ({other_project})"));
                }
            }
        }
        lines.into_iter().collect()
    }

    /// The acceptance test of the default settings: OpenShift's payload CRDs and every CRD of
    /// the widely used projects of `test_data/well-known/`, each created into a cluster that
    /// holds all the others (any order), none refused; each kind clash between different owners
    /// gives one short warning. The clashes are listed in `test_data/well-known/clashes.txt`
    /// (regenerate it from this test's output when the set changes).
    #[test]
    fn acceptance_set_installs_at_default_settings() {
        let crds = acceptance_set(false);
        assert!(crds.len() > 500, "{}", crds.len());
        let projects: std::collections::BTreeSet<&str> = crds.iter().map(|(p, _)| p.as_str()).collect();
        assert!(projects.len() >= 30 && projects.contains("openshift"), "{projects:?}");
        let mut failures = Vec::new();
        for (i, (project, crd)) in crds.iter().enumerate() {
            let others: Vec<Value> = crds
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, (_, other))| other.clone())
                .collect();
            let request = syncguard_testkit::crd_request("CREATE", crd, None);
            let payload = syncguard_testkit::payload(&request, &serde_json::json!({}));
            let verdict = check::decide::<CrdKindCollision>(payload.as_bytes(), &Objects(others));
            let name = crd["metadata"]["name"].as_str().unwrap();
            if !verdict.accepted {
                failures.push(format!("{project} {name}: {:?}", verdict.message));
            }
            for warning in &verdict.warnings {
                assert!(warning.chars().count() <= MAX_WARNING_CHARS, "{warning}");
            }
        }
        assert!(
            failures.is_empty(),
            "rejected at default settings:\n{}",
            failures.join("\n")
        );
        let found = clashes(&crds);
        let listed = include_str!("../../../policies/crd-kind-collision/test_data/well-known/clashes.txt");
        let expected: Vec<&str> = listed
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .collect();
        assert_eq!(
            found,
            expected,
            "test_data/well-known/clashes.txt is stale; the clashes of the acceptance set are:\n{}",
            found.join("\n")
        );
        for example in [
            "Service: serving.knative.dev (knative-serving) ~ core (built-in)",
            "Ingress: config.openshift.io (openshift) ~ networking.k8s.io (built-in)",
            "Node: config.openshift.io (openshift) ~ core (built-in)",
            "Gateway: gateway.networking.k8s.io (gateway-api-standard) ~ networking.istio.io (istio)",
            "NetworkPolicy: crd.projectcalico.org (calico) ~ networking.k8s.io (built-in)",
        ] {
            assert!(found.iter().any(|line| line == example), "{example}");
        }
        // One owner publishes both: not a clash at all.
        for deliberate in ["Network: config.openshift.io", "PolicyException: kyverno.io"] {
            assert!(!found.iter().any(|line| line.starts_with(deliberate)), "{deliberate}");
        }
    }

    /// Every CRD of the acceptance set updated from its previous release (the files of
    /// `test_data/well-known/previous/`), into a cluster that holds the current set: none
    /// refused at default settings.
    #[test]
    fn every_update_from_the_previous_release_is_accepted() {
        let current = acceptance_set(false);
        let previous = acceptance_set(true);
        let cluster = Objects(current.iter().map(|(_, crd)| crd.clone()).collect());
        let mut updates = 0;
        let mut failures = Vec::new();
        for (project, old) in &previous {
            let name = old["metadata"]["name"].as_str().unwrap();
            let Some((_, new)) = current
                .iter()
                .find(|(p, crd)| p == project && crd["metadata"]["name"] == name)
            else {
                continue;
            };
            let request = syncguard_testkit::crd_request("UPDATE", new, Some(old));
            let payload = syncguard_testkit::payload(&request, &serde_json::json!({}));
            let verdict = check::decide::<CrdKindCollision>(payload.as_bytes(), &cluster);
            if !verdict.accepted {
                failures.push(format!("{project} {name}: {:?}", verdict.message));
            }
            updates += 1;
        }
        assert!(updates > 400, "{updates}");
        assert!(
            failures.is_empty(),
            "updates refused at default settings:\n{}",
            failures.join("\n")
        );
    }

    /// The names the compiled table is held to: every rule of the list as a name, under one and
    /// two more labels and without its first label; every group of the well-known table; and
    /// names that exercise the algorithm's corners.
    fn names_to_compare() -> Vec<String> {
        let mut names = table();
        for line in include_str!("public_suffix_list.txt").lines() {
            if line.starts_with("//") || line.trim().is_empty() {
                continue;
            }
            let rule = line.split_whitespace().next().unwrap();
            let bare = rule.trim_start_matches('!').replace('*', "x");
            names.push(bare.clone());
            names.push(format!("a.{bare}"));
            names.push(format!("b.a.{bare}"));
            if let Some((_, parent)) = bare.split_once('.') {
                names.push(format!("a.{parent}"));
            }
        }
        names.extend(
            [
                // Wildcards and their exceptions.
                "ck",
                "x.ck",
                "a.x.ck",
                "www.ck",
                "a.www.ck",
                "b.a.www.ck",
                "x.kawasaki.jp",
                "a.x.kawasaki.jp",
                "city.kawasaki.jp",
                "a.city.kawasaki.jp",
                "x.city.kobe.jp",
                "city.kobe.jp",
                "a.b.c.kobe.jp",
                // Unknown top-level domains and case.
                "a.b.unknowntld",
                "unknowntld",
                "x.NO",
                "a.b.CO.UK",
                "Co.uk",
                // The private section.
                "ops.foo.github.io",
                "github.io",
                "a.github.io",
                "k8s.compute.amazonaws.com",
                "x.s3.amazonaws.com",
                "a.blogspot.com",
                // Odd shapes.
                "",
                ".",
                "a.",
                "a.com.",
                ".com",
                "a..com",
                "..",
                "a.b.co.uk.",
                "config.openshift.io",
                "a.b.example.co.uk",
                "pki.corp.com",
                "cert-manger.io",
                "single",
            ]
            .map(String::from),
        );
        names
    }

    /// The compiled table answers exactly as the publicsuffix crate over the whole list, the
    /// suffix and the registrable domain of every name.
    #[test]
    fn the_compiled_table_answers_as_the_publicsuffix_crate() {
        use publicsuffix::Psl as _;
        let whole: publicsuffix::List = include_str!("public_suffix_list.txt").parse().unwrap();
        let names = names_to_compare();
        assert!(names.len() > 40_000, "{}", names.len());
        let text = |bytes: Option<&[u8]>| bytes.map(<[u8]>::to_vec);
        for name in &names {
            let bytes = name.as_bytes();
            assert_eq!(
                text(PublicSuffixList.suffix(bytes).map(|s| s.as_bytes())),
                text(whole.suffix(bytes).map(|s| s.as_bytes())),
                "suffix of {name:?}"
            );
            assert_eq!(
                text(PublicSuffixList.domain(bytes).map(|d| d.as_bytes())),
                text(whole.domain(bytes).map(|d| d.as_bytes())),
                "domain of {name:?}"
            );
        }
        assert_eq!(registrable_domain("a.www.ck").as_deref(), Some("www.ck"));
        assert_eq!(registrable_domain("a.x.ck").as_deref(), Some("a.x.ck"));
        assert_eq!(registrable_domain("x.ck"), None);
        assert_eq!(registrable_domain("a.b.unknowntld").as_deref(), Some("b.unknowntld"));
        assert_eq!(
            registrable_domain("ops.foo.github.io").as_deref(),
            Some("foo.github.io")
        );
    }
}
