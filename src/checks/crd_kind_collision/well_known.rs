//! Well-known projects: the (API group, kind) pairs that widely used projects publish, so that
//! crd-kind-collision tells their deliberate coexistences (Istio's Gateway beside Gateway API's,
//! Knative's Service beside the built-in one, Kyverno's PolicyException in two of its groups)
//! apart from a new clash nobody has vetted.
//!
//! The rule (`wellKnownProjects`, default `warn`):
//! - a CRD's (group, kind) is *well-known* when the table lists the kind in its group, or in a
//!   parent domain of its group: whoever owns a domain owns its subdomains, so
//!   `crd.projectcalico.org` serves what `projectcalico.org` is listed with and
//!   `policies.kyverno.io` what `kyverno.io` is listed with. Groups that only share a parent
//!   (`stable.example.com` and `beta.example.com`) get nothing from each other;
//! - a group under a name reserved for examples, tests or private use (`example.com`,
//!   `example.net`, `example.org`, `.example`, `.test`, `.invalid`, `.localhost`, `.local`,
//!   `.internal`, `.home.arpa`) is never well-known, whatever the table says;
//! - a clash with a built-in resource is a well-known coexistence when the CRD's (group, kind)
//!   is well-known; a clash with another CRD when both sides are.
//!
//! The table is `well_known_kinds.txt`: API group and kind names read from
//! github.com/datreeio/CRDs-catalog (one folder per group, one file per kind and version) by
//! `refresh-well-known.sh`; `build.rs` compiles it into sorted 64-bit keys
//! ([`well_known_key`]), 8 bytes a pair.

include!("well_known_key.rs");
include!(concat!(env!("OUT_DIR"), "/well_known_kinds.rs"));

/// Domains reserved for documentation, tests and private use (RFC 2606, RFC 6761, RFC 6762,
/// RFC 8375, ICANN's `.internal`): a group under one is never well-known.
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
    /// Whether the setting exempts the clash of kind `kind` between the CRD's `group` and
    /// `other_group` (a built-in resource's group when `other_builtin`).
    pub fn exempts(self, group: &str, kind: &str, other_group: &str, other_builtin: bool) -> bool {
        self != WellKnownProjects::Strict && coexistence(group, kind, other_group, other_builtin)
    }
}

/// Whether the clash of kind `kind` between a CRD of `group` and a resource of `other_group`
/// (built-in when `other_builtin`) is a coexistence of well-known projects.
pub fn coexistence(group: &str, kind: &str, other_group: &str, other_builtin: bool) -> bool {
    is_well_known(group, kind) && (other_builtin || is_well_known(other_group, kind))
}

/// Whether a CRD serving `kind` in `group` is well-known: listed in its group or in a parent
/// domain of it, and not under a reserved domain.
pub fn is_well_known(group: &str, kind: &str) -> bool {
    if group.is_empty() || RESERVED.iter().any(|reserved| within(group, reserved)) {
        return false;
    }
    // The group itself, then each parent domain of at least two labels.
    let mut domain = group;
    loop {
        if listed(domain, kind) {
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

/// Whether the table lists `kind` (compared in lowercase) in exactly `group`.
fn listed(group: &str, kind: &str) -> bool {
    WELL_KNOWN_KINDS.binary_search(&well_known_key(group, kind)).is_ok()
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
    use crate::text::CHECK_WARNING_CHARS;

    /// Every (group, kind) line of the table as committed.
    fn table() -> Vec<(String, String)> {
        include_str!("well_known_kinds.txt")
            .lines()
            .filter(|line| !line.starts_with('#'))
            .flat_map(|line| {
                let mut words = line.split_whitespace();
                let group = words.next().unwrap_or("").to_string();
                words.map(move |kind| (group.clone(), kind.to_string()))
            })
            .collect()
    }

    #[test]
    fn every_pair_of_the_table_is_found_and_the_keys_are_sorted() {
        let pairs = table();
        assert_eq!(pairs.len(), WELL_KNOWN_KINDS.len());
        assert!(pairs.len() > 3000, "{}", pairs.len());
        for (group, kind) in &pairs {
            assert!(listed(group, kind), "{group} {kind}");
        }
        assert!(WELL_KNOWN_KINDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn kinds_compare_in_lowercase_and_groups_exactly() {
        assert!(listed("networking.istio.io", "Gateway"));
        assert!(listed("networking.istio.io", "gateway"));
        assert!(!listed("Networking.istio.io", "Gateway"));
        assert!(!listed("networking.istio.io", "Gateways"));
        assert!(!listed("istio.io", "Gateway"));
    }

    #[test]
    fn the_issue_examples_are_coexistences() {
        assert!(coexistence("serving.knative.dev", "Service", "", true));
        assert!(coexistence(
            "networking.internal.knative.dev",
            "Ingress",
            "networking.k8s.io",
            true
        ));
        assert!(coexistence(
            "networking.istio.io",
            "Gateway",
            "gateway.networking.k8s.io",
            false
        ));
        assert!(coexistence(
            "gateway.networking.k8s.io",
            "Gateway",
            "networking.istio.io",
            false
        ));
        assert!(coexistence(
            "kyverno.io",
            "PolicyException",
            "policies.kyverno.io",
            false
        ));
        assert!(coexistence(
            "policies.kyverno.io",
            "PolicyException",
            "kyverno.io",
            false
        ));
        // Calico's crd.projectcalico.org is not in the catalog: its parent projectcalico.org is.
        assert!(!listed("crd.projectcalico.org", "NetworkPolicy"));
        assert!(coexistence(
            "crd.projectcalico.org",
            "NetworkPolicy",
            "networking.k8s.io",
            true
        ));
    }

    #[test]
    fn unknown_and_reserved_groups_are_not() {
        assert!(!coexistence("stable.example.com", "Shirt", "beta.example.com", false));
        assert!(!coexistence("flux.local", "Deployment", "apps", true));
        assert!(!is_well_known("example.com", "Shirt"));
        assert!(!is_well_known("", "Service"));
        // A well-known CRD beside an unknown one is still a clash nobody has vetted.
        assert!(!coexistence(
            "networking.istio.io",
            "Gateway",
            "gateways.acme.example",
            false
        ));
        assert!(!coexistence("networking.istio.io", "Gateway", "acme.io", false));
        // A parent domain passes its kinds down, not sideways and not its other kinds.
        assert!(is_well_known("v2.networking.istio.io", "Gateway"));
        assert!(!is_well_known("security.istio.io", "Gateway"));
        assert!(!is_well_known("crd.projectcalico.org", "Deployment"));
    }

    #[test]
    fn reserved_names_match_whole_labels() {
        assert!(within("flux.local", "local"));
        assert!(within("example.com", "example.com"));
        assert!(within("a.b.example.org", "example.org"));
        assert!(!within("notexample.com", "example.com"));
        assert!(!within("networking.internal.knative.dev", "internal"));
        assert!(is_well_known("networking.internal.knative.dev", "Ingress"));
        for (group, _) in table() {
            assert!(
                !RESERVED.iter().any(|reserved| within(&group, reserved)),
                "{group} is reserved: the catalog lists an example group"
            );
        }
    }

    #[test]
    fn settings_values() {
        let read = |text: &str| serde_json::from_str::<WellKnownProjects>(text);
        assert_eq!(read("\"warn\"").unwrap(), WellKnownProjects::Warn);
        assert_eq!(read("\"allow\"").unwrap(), WellKnownProjects::Allow);
        assert_eq!(read("\"strict\"").unwrap(), WellKnownProjects::Strict);
        assert!(read("\"reject\"").is_err());
        assert!(!WellKnownProjects::Strict.exempts("serving.knative.dev", "Service", "", true));
        assert!(WellKnownProjects::Allow.exempts("serving.knative.dev", "Service", "", true));
    }

    /// The warning of a CRD `name` of kind `kind` accepted beside `others`, as the renderer
    /// writes it.
    fn warning(name: &str, kind: &str, others: &[String]) -> String {
        let mut request = crate::admission::Request::default();
        request.kind.kind = "CustomResourceDefinition".into();
        let subject = crate::finding::Subject::new(&request, name, "", "");
        let finding = crate::finding::Finding::warn("wellKnownCoexistence", "", "", brief(kind, others));
        let report = crate::finding::Report::new(subject, vec![finding]);
        let rendered = crate::render::render_check("crd-kind-collision", super::super::FINDINGS, report);
        rendered.warnings[0].clone()
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
                "CRD gateways.networking.istio.io: kind Gateway is also served by gateway.networking.k8s.io, accepted"
            ),
            "{short}"
        );
        assert!(short.chars().count() <= CHECK_WARNING_CHARS, "{short}");
        let long_name = format!("{}.example.io", "x".repeat(240));
        let many = ["a.example.io", "b.example.io", "c.example.io", "d.example.io"].map(String::from);
        for (name, others) in [
            ("certificates.networking.internal.knative.dev", &many[..1]),
            ("certificates.networking.internal.knative.dev", &many[..]),
            (long_name.as_str(), &many[..]),
        ] {
            let text = warning(name, "Certificate", others);
            assert!(text.chars().count() <= CHECK_WARNING_CHARS, "{} {text}", text.len());
            assert!(text.ends_with('.') || text.contains("#well-known-projects"), "{text}");
        }
        let one = warning(&long_name, "Certificate", &many[..1]);
        assert!(one.contains("…"), "a long name is shortened in its middle: {one}");
        assert!(
            one.contains(": kind Certificate is also served by a.example.io, accepted"),
            "{one}"
        );
    }

    /// The acceptance set: `(project, CRD)` for every CRD in `test_data/well-known/`.
    fn acceptance_set() -> Vec<(String, serde_json::Value)> {
        use serde::Deserialize as _;
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("policies/crd-kind-collision/test_data")
            .join("well-known");
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
                let crd =
                    serde_json::Value::deserialize(document).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                crds.push((project.clone(), crd));
            }
        }
        crds
    }

    /// Every kind clash of the acceptance set, one line each: the CRD, its kind and group, and
    /// the other group serving that kind (a built-in resource or another project's CRD).
    fn clashes(crds: &[(String, serde_json::Value)]) -> Vec<String> {
        let mut lines = std::collections::BTreeSet::new();
        for (project, crd) in crds {
            let (group, kind) = (
                crd["spec"]["group"].as_str().unwrap(),
                crd["spec"]["names"]["kind"].as_str().unwrap(),
            );
            for builtin in crate::generated::builtin_resources() {
                if builtin.kind == kind && builtin.group != group && !builtin.subresource && !builtin.plural.is_empty()
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
                if other["spec"]["names"]["kind"] == kind && other_group != group && group < other_group {
                    lines.insert(format!("{kind}: {group} ({project}) ~ {other_group} ({other_project})"));
                }
            }
        }
        lines.into_iter().collect()
    }

    /// The acceptance test of the default settings: every CRD of 27 widely used projects, installed into a cluster that holds all the others, is accepted, and each of
    /// its kind clashes gives one short warning. The clashes are listed in
    /// `test_data/well-known/clashes.txt` (regenerate it from this test's output when the set
    /// changes).
    #[test]
    fn acceptance_set_installs_at_default_settings() {
        use crate::check;
        use crate::checks::crd_kind_collision::CrdKindCollision;
        use crate::cluster::Objects;
        let crds = acceptance_set();
        assert!(crds.len() > 300, "{}", crds.len());
        let projects: std::collections::BTreeSet<&str> = crds.iter().map(|(p, _)| p.as_str()).collect();
        assert!(projects.len() >= 20, "{projects:?}");
        let mut failures = Vec::new();
        for (i, (project, crd)) in crds.iter().enumerate() {
            let others: Vec<serde_json::Value> = crds
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
            let kind = &crd["spec"]["names"]["kind"];
            let clashing = crds
                .iter()
                .any(|(_, o)| o["spec"]["names"]["kind"] == *kind && o["spec"]["group"] != crd["spec"]["group"])
                || crate::generated::builtin_resources().any(|b| {
                    *kind == b.kind && crd["spec"]["group"] != b.group && !b.subresource && !b.plural.is_empty()
                });
            let notes: Vec<&String> = verdict
                .warnings
                .iter()
                .filter(|w| w.contains("wellKnownProjects"))
                .collect();
            assert_eq!(
                notes.len(),
                usize::from(clashing),
                "{project} {name}: {:?}",
                verdict.warnings
            );
            for warning in notes {
                assert!(warning.chars().count() <= CHECK_WARNING_CHARS, "{warning}");
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
            "Ingress: networking.internal.knative.dev (knative-serving) ~ networking.k8s.io (built-in)",
            "Gateway: gateway.networking.k8s.io (gateway-api) ~ networking.istio.io (istio)",
            "PolicyException: kyverno.io (kyverno) ~ policies.kyverno.io (kyverno)",
            "NetworkPolicy: crd.projectcalico.org (calico) ~ networking.k8s.io (built-in)",
        ] {
            assert!(found.iter().any(|line| line == example), "{example}");
        }
        assert!(found.len() >= 30, "{}", found.len());
    }
}
