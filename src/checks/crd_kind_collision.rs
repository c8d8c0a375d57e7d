//! crd-kind-collision: refuses a CustomResourceDefinition whose kind, or one of whose names,
//! another API group already serves.
//!
//! Kubernetes lets two groups serve the same kind, but tools that match objects by kind and
//! name without their group mix them up. Helm before 3.17.1 matched a release's resources that
//! way: after `helm uninstall` kept two `Shirt` objects of different groups
//! (`helm.sh/resource-policy: keep`), `helm install` failed with
//! `cannot patch "shirt" with kind Shirt: shirts.stable.example.com "shirt" is invalid:
//! metadata.resourceVersion: Invalid value: 0x0: must be specified for an update` (Helm issue
//! 13582). kubectl and other tools that resolve a kind or a resource name to one resource become
//! ambiguous the same way.
//!
//! What is checked, on CREATE and UPDATE of a CRD (background audit included):
//! - **built-in kinds**: `spec.names.kind` equals the kind of a built-in resource of another
//!   group, from [`builtin_resources`] (generated from k8s-openapi; kinds served only as a
//!   subresource, such as `Scale`, and discovery documents such as `APIGroup` are not resources
//!   and do not count);
//! - **CRD kinds**: `spec.names.kind` equals the kind of a CRD of another `spec.group` listed
//!   from the cluster (the CRD's own earlier state, same `metadata.name`, is skipped);
//! - **names**: `spec.names.plural`, `spec.names.singular` or a `spec.names.shortNames` entry
//!   equals the plural or singular (the lowercase kind) of a built-in resource of another group,
//!   or the plural, singular or a short name of a CRD of another group. Built-in short names
//!   (`po`, `svc`, `deploy`) are not in k8s-openapi and are not checked.
//!
//! Kinds compare exactly, as Helm and the API server compare them; names are lowercase by API
//! validation and compare exactly too.
//!
//! A kind clash that is a coexistence of well-known projects ([`well_known`]: Istio's Gateway
//! beside Gateway API's, Knative's Service or OpenShift's Ingress beside the built-in one) is
//! accepted with one short warning (`wellKnownProjects: warn`, default), silently (`allow`), or
//! decided like any other clash (`strict`); the names two resources of that kind share come with
//! it. Two groups of one owner (one registrable domain by the Public Suffix List:
//! `config.openshift.io` and `operator.openshift.io`) never clash.
//!
//! An UPDATE is refused only for a clash it adds: a kind and names the live CRD (`oldObject`)
//! already served in the same group were there before, and their clashes give one warning
//! (`preExistingCollision`); what the update adds (a changed kind, a new name) is decided as on
//! CREATE, and a failed lookup decides nothing when it adds nothing.
//!
//! A built-in resource or CRD in the same group as the CRD never counts: the API server itself
//! refuses conflicting names inside one group. Groups listed together in `allowedGroupSets` may
//! share kinds and names; a kind in `allowedKinds` may be served by any number of groups, and
//! the names two resources of that kind share are then allowed too.
//!
//! The cluster's CRDs are listed once per request (`list_resources_all`), and only for a request
//! the check applies to and only when something needs them. When the list cannot be read, the
//! request is rejected (code 500, `onLookupFailure: reject`) or accepted with a warning
//! (`onLookupFailure: accept`); built-in collisions are still checked either way.
//!
//! Input rules:
//! - requests outside the CRD rule (other resources, subresources such as `status`, DELETE)
//!   are accepted without reading the object;
//! - an object that is missing, or whose `metadata.name`, `spec.group` or `spec.names` has a
//!   wrong type, is rejected with code 400 (the check reads nothing else of it: a wrong type
//!   elsewhere is for the API server and the other checks to refuse);
//! - a CRD without `spec.group` or `spec.names.kind` is accepted without a lookup: it serves no
//!   kind, and the API server refuses it itself;
//! - a listed item that is not a readable CRD makes the whole lookup count as failed.

use crate::admission::{ObjectJson, Request};
use crate::check::{Check, GroupKind, Lookup, Objects};
use crate::cluster::{CRD_API_VERSION, CRD_KIND, Cluster, ItemsError};
use crate::finding::{Finding, Malformed, Report, RuleDoc, Subject};
use crate::generated::builtin_resources;
use crate::k8s::CrdIdentity;
use crate::rules::{self, Rule};
use crate::settings::{Action, RejectOrWarn, string_enum};
use crate::text::{Parts, elide, join_within, quote};
use serde::Deserialize;
use serde::de::{Deserializer, SeqAccess, Visitor};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use well_known::{WellKnownProjects, same_owner, why_strict};

pub mod well_known;

/// Part of every rejection for a failed cluster lookup under `onLookupFailure: reject`: the one
/// outcome with code 500 (the fuzz invariants recognise it by this text).
pub const LOOKUP_FAILURE_MARK: &str = "(onLookupFailure: reject)";

/// Most characters a list (of groups, of names) takes in a rejection message, which keeps the
/// message within the API server's limits whatever the cluster holds.
const LIST_CHARS: usize = 1500;
/// Most characters of a failed lookup's error quoted in a message.
const LOOKUP_ERROR_CHARS: usize = 600;

/// The rules of the check's findings.
pub const FINDINGS: &[RuleDoc] = &[
    RuleDoc {
        id: "kindCollision",
        summary: "the CRD's kind is already served by another API group",
        anchor: "what-it-checks",
    },
    RuleDoc {
        id: "wellKnownCoexistence",
        summary: "the CRD's kind is also served by another well-known project's group",
        anchor: "well-known-projects",
    },
    RuleDoc {
        id: "nameCollision",
        summary: "a plural, singular or short name of the CRD is used by another API group",
        anchor: "what-it-checks",
    },
    RuleDoc {
        id: "preExistingCollision",
        summary: "an UPDATE keeps a clash the CRD already had, which only warns",
        anchor: "updates",
    },
    RuleDoc {
        id: "lookupFailure",
        summary: "the cluster's CRDs could not be listed, so the CRD was not checked against them",
        anchor: "the-cluster-lookup",
    },
];

/// How settings and messages write the core group, whose real name is `""`.
const CORE: &str = "core";

/// What to do when the cluster's CRDs cannot be listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnLookupFailure {
    /// Reject the request: what cannot be checked is not admitted (fail closed).
    #[default]
    Reject,
    /// Accept the request with a warning saying the lookup failed.
    Accept,
}

string_enum!(OnLookupFailure {
    "reject" => OnLookupFailure::Reject,
    "accept" => OnLookupFailure::Accept,
});

/// Settings of the crd-kind-collision check.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Settings {
    /// A kind that a built-in resource of another group has: `reject` (default) or `warn`.
    pub builtin_collisions: RejectOrWarn,
    /// A kind that a CRD of another group has: `reject` (default) or `warn`.
    pub crd_collisions: RejectOrWarn,
    /// A plural, singular or short name another group's resource uses: `warn` (default),
    /// `reject` or `ignore`.
    pub name_collisions: Action,
    /// Sets of groups allowed to share kinds and names, e.g.
    /// `[["networking.istio.io", "gateway.networking.k8s.io"]]`; the core group is written
    /// `core`. A set may also be one comma-separated string (what the Rancher UI form writes).
    /// Default: none.
    pub allowed_group_sets: Vec<GroupSet>,
    /// Kinds any number of groups may serve, e.g. `["Gateway"]`. Default: none.
    pub allowed_kinds: Vec<String>,
    /// When the cluster's CRDs cannot be listed: `reject` (default) or `accept` with a warning.
    pub on_lookup_failure: OnLookupFailure,
    /// A kind clash between well-known projects: `warn` (default), `allow` or `strict`.
    pub well_known_projects: WellKnownProjects,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            builtin_collisions: RejectOrWarn::Reject,
            crd_collisions: RejectOrWarn::Reject,
            name_collisions: Action::Warn,
            allowed_group_sets: Vec::new(),
            allowed_kinds: Vec::new(),
            on_lookup_failure: OnLookupFailure::Reject,
            well_known_projects: WellKnownProjects::Warn,
        }
    }
}

impl Settings {
    /// Whether `a` and `b` (real group names, `""` for core) appear together in a group set.
    fn allowed_pair(&self, a: &str, b: &str) -> bool {
        self.allowed_group_sets.iter().any(|set| {
            let has = |group: &str| set.0.iter().any(|entry| real_group(entry) == group);
            has(a) && has(b)
        })
    }

    /// Whether `kind` may be served by several groups.
    fn allowed_kind(&self, kind: &str) -> bool {
        self.allowed_kinds.iter().any(|k| k == kind)
    }
}

/// One entry of `allowedGroupSets`: a list of groups, read from a JSON list or from one
/// comma-separated string.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupSet(pub Vec<String>);

impl<'de> Deserialize<'de> for GroupSet {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Groups;
        impl<'de> Visitor<'de> for Groups {
            type Value = GroupSet;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of API groups, or one string of groups separated by commas")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<GroupSet, E> {
                Ok(GroupSet(text.split(',').map(|g| g.trim().to_string()).collect()))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<GroupSet, A::Error> {
                let mut groups = Vec::new();
                while let Some(group) = seq.next_element::<String>()? {
                    groups.push(group);
                }
                Ok(GroupSet(groups))
            }
        }
        deserializer.deserialize_any(Groups)
    }
}

/// The group a settings entry names: `core` is the core group `""`.
fn real_group(entry: &str) -> &str {
    if entry == CORE { "" } else { entry }
}

/// How messages and settings write a group.
fn group_label(group: &str) -> &str {
    if group.is_empty() { CORE } else { group }
}

/// The crd-kind-collision check.
pub struct CrdKindCollision;

impl Check for CrdKindCollision {
    type Settings = Settings;
    const NAME: &'static str = "crd-kind-collision";
    const SETTINGS_KEY: &'static str = "crdKindCollision";
    const RULES: &'static [Rule] = rules::CRD_KIND_COLLISION;
    const KINDS: &'static [GroupKind] = &[("apiextensions.k8s.io", "CustomResourceDefinition")];
    // An UPDATE is refused only for a clash it adds, which the old object tells.
    const READS_OLD_OBJECT: bool = true;
    const FINDINGS: &'static [RuleDoc] = FINDINGS;
    const LOOKUPS: &'static [Lookup] = &[(CRD_API_VERSION, CRD_KIND)];

    fn validate_settings(settings: &Settings) -> Result<(), String> {
        for (i, set) in settings.allowed_group_sets.iter().enumerate() {
            let mut seen = BTreeSet::new();
            for (j, group) in set.0.iter().enumerate() {
                if group.is_empty() {
                    return Err(format!(
                        "`allowedGroupSets[{i}][{j}]` is empty: name an API group, and write the core group as \"core\""
                    ));
                }
                if !is_group_name(group) {
                    return Err(format!(
                        "`allowedGroupSets[{i}][{j}]` {} is not an API group name: groups are lowercase DNS names such as \"gateway.networking.k8s.io\" (the core group is \"core\")",
                        quote(group)
                    ));
                }
                if !seen.insert(group.as_str()) {
                    return Err(format!("`allowedGroupSets[{i}]` lists {} twice", quote(group)));
                }
            }
            if seen.len() < 2 {
                return Err(format!(
                    "`allowedGroupSets[{i}]` needs at least two different groups, the groups allowed to share kinds and names, e.g. [\"networking.istio.io\", \"gateway.networking.k8s.io\"]"
                ));
            }
        }
        let mut seen = BTreeSet::new();
        for (i, kind) in settings.allowed_kinds.iter().enumerate() {
            if !is_kind_name(kind) {
                return Err(format!(
                    "`allowedKinds[{i}]` {} is not a kind: kinds are written as in spec.names.kind, e.g. \"Gateway\"",
                    quote(kind)
                ));
            }
            if !seen.insert(kind.as_str()) {
                return Err(format!("`allowedKinds` lists {} twice", quote(kind)));
            }
        }
        Ok(())
    }

    fn check(
        request: &Request<'_>,
        objects: &Objects<'_>,
        settings: &Settings,
        cluster: &dyn Cluster,
    ) -> Result<Report, Malformed> {
        // From the request's tree when a check before read it whole (the all-in-one); else read
        // up to `spec.names` only, when the text allows; else whole, for the error's path.
        let crd = match objects.read_tree().and_then(|tree| CrdIdentity::deserialize(tree).ok()) {
            Some(crd) => crd,
            None => identity(objects.object, "object")?,
        };
        // On UPDATE, what the live CRD already had: its clashes are not this update's doing.
        let old = match objects.old_object.filter(|_| request.is_update()) {
            Some(old) => Some(identity(old, "oldObject")?),
            None => None,
        };
        let subject = Subject::new(request, &crd.metadata.name, "", "");
        Ok(Report::new(
            subject,
            evaluate(
                &crd,
                old.as_ref(),
                request.name.as_deref().unwrap_or(""),
                settings,
                cluster,
            ),
        ))
    }
}

/// The identity of the request's `what` (`object`, `oldObject`), read up to `spec.names` only
/// when the text allows, else whole, for the error's path.
fn identity<'a>(object: ObjectJson<'a>, what: &str) -> Result<CrdIdentity<'a>, Malformed> {
    match object.members(CrdIdentity::MEMBERS).and_then(CrdIdentity::from_members) {
        Some(crd) => Ok(crd),
        None => object
            .read_described::<CrdIdentity>()
            .map_err(|e| Malformed(format!("cannot read the request's {what}: {e}"))),
    }
}

/// A lowercase DNS name (`a-z`, `0-9`, `-`, `.`), or `core`.
fn is_group_name(group: &str) -> bool {
    group.len() <= 253
        && group.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && group
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
}

/// Letters and digits, starting with a letter, as Kubernetes kinds are.
fn is_kind_name(kind: &str) -> bool {
    kind.len() <= 63
        && kind.starts_with(|c: char| c.is_ascii_alphabetic())
        && kind.chars().all(|c| c.is_ascii_alphanumeric())
}

/// One of the CRD's own names and where it is written.
struct OwnName<'a> {
    /// Field path, e.g. `spec.names.shortNames[0]`.
    path: String,
    /// The name.
    value: &'a str,
}

impl OwnName<'_> {
    /// Whether it is the CRD's plural or singular, the names that come with its kind.
    fn of_kind(&self) -> bool {
        self.path.starts_with("spec.names.plural") || self.path.starts_with("spec.names.singular")
    }
}

/// Another resource that already serves the CRD's kind, in one group.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Server {
    /// Whether it is a built-in resource (otherwise a CRD).
    builtin: bool,
    /// How the message names it, e.g. `built-in deployments.apps`.
    label: String,
}

/// One of the CRD's names that another group's resource uses too.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct NameClash {
    /// Position of the CRD's own name (plural, singular, short names in order).
    position: usize,
    /// Field path of the CRD's own name.
    path: String,
    /// The name.
    value: String,
    /// The other resource, as the message names it.
    other: String,
    /// What the name is for the other resource: `plural`, `singular` or `short name`.
    role: &'static str,
    /// The other resource's group.
    group: String,
}

/// What the check found about one CRD.
#[derive(Debug, Default)]
struct Findings {
    /// Group (real name) -> what serves the kind there.
    kind: BTreeMap<String, BTreeSet<Server>>,
    /// The same for servers exempted as coexistences of well-known projects.
    well_known: BTreeMap<String, BTreeSet<Server>>,
    /// Names used by other groups, in the order of the CRD's own names.
    names: BTreeSet<NameClash>,
}

impl Findings {
    /// Adds what `other` found.
    fn add(&mut self, other: Findings) {
        for (mine, theirs) in [(&mut self.kind, other.kind), (&mut self.well_known, other.well_known)] {
            for (group, servers) in theirs {
                mine.entry(group).or_default().extend(servers);
            }
        }
        self.names.extend(other.names);
    }

    /// Where a kind finding goes: among the well-known coexistences or the clashes.
    fn kind_servers(&mut self, well_known: bool) -> &mut BTreeMap<String, BTreeSet<Server>> {
        if well_known {
            &mut self.well_known
        } else {
            &mut self.kind
        }
    }

    /// Records each of `own` that equals one of `others` (a name and its role) of resource
    /// `other` in `group`; with `fold`, not the CRD's plural or singular against the other's,
    /// which the kind's finding covers.
    fn clash_names(
        &mut self,
        own: &[OwnName<'_>],
        others: &[(&str, &'static str)],
        other: &str,
        group: &str,
        fold: bool,
    ) {
        for (position, name) in own.iter().enumerate() {
            for (value, role) in others {
                let of_kind = matches!(*role, "plural" | "singular") && name.of_kind();
                if !value.is_empty() && *value == name.value && !(fold && of_kind) {
                    self.names.insert(NameClash {
                        position,
                        path: name.path.clone(),
                        value: name.value.to_string(),
                        other: other.to_string(),
                        role,
                        group: group.to_string(),
                    });
                }
            }
        }
    }
}

/// The names a CRD serves: plural, singular (the lowercase kind when unset) and short names.
fn names_of(crd: &CrdIdentity<'_>) -> Vec<String> {
    let names = &crd.spec.names;
    let singular = if names.singular.is_empty() {
        names.kind.to_ascii_lowercase()
    } else {
        names.singular.to_string()
    };
    let mut all = vec![names.plural.to_string(), singular];
    all.extend(names.short_names.iter().map(|name| name.to_string()));
    all.retain(|n| !n.is_empty());
    all
}

/// Decides one CRD: built-in collisions first, then (when needed) the cluster's CRDs. `old` is the
/// live CRD of an UPDATE: a clash of a kind or a name it already served in the same group was
/// there before this update, which only warns (an upgrade of a CRD must never be what breaks a
/// cluster); only what the update adds is decided as a new clash.
fn evaluate(
    crd: &CrdIdentity<'_>,
    old: Option<&CrdIdentity<'_>>,
    request_name: &str,
    settings: &Settings,
    cluster: &dyn Cluster,
) -> Vec<Finding> {
    let group = &*crd.spec.group;
    let names = &crd.spec.names;
    let kind = &*names.kind;
    if group.is_empty() || kind.is_empty() {
        return Vec::new();
    }
    let name = if !crd.metadata.name.is_empty() {
        crd.metadata.name.to_string()
    } else if !request_name.is_empty() {
        request_name.to_string()
    } else {
        format!("{}.{group}", names.plural)
    };
    let kind_allowed = settings.allowed_kind(kind);
    let check_names = settings.name_collisions != Action::Ignore;
    if kind_allowed && !check_names {
        return Vec::new();
    }

    let lowercase_kind = kind.to_ascii_lowercase();
    let mut own = Vec::new();
    if check_names {
        own.push(OwnName {
            path: "spec.names.plural".into(),
            value: &names.plural,
        });
        if names.singular.is_empty() {
            own.push(OwnName {
                path: "spec.names.singular (defaulted from spec.names.kind)".into(),
                value: lowercase_kind.as_str(),
            });
        } else {
            own.push(OwnName {
                path: "spec.names.singular".into(),
                value: &names.singular,
            });
        }
        for (i, short) in names.short_names.iter().enumerate() {
            own.push(OwnName {
                path: format!("spec.names.shortNames[{i}]"),
                value: short,
            });
        }
        own.retain(|n| !n.value.is_empty());
    }

    // What the live CRD already served, in the same group (on UPDATE).
    let before = old.filter(|old| old.spec.group == group);
    let kind_before = before.is_some_and(|old| old.spec.names.kind == kind);
    let names_before: Vec<String> = before.map(names_of).unwrap_or_default();
    let adds_names = own.iter().any(|n| !names_before.iter().any(|b| b == n.value));

    let mut findings = Findings::default();
    builtin_findings(group, kind, &own, settings, &mut findings);

    // What the list gives counts only once every item has read.
    let mut listed = Findings::default();
    let lookup_error = match list_crds(cluster, |other| {
        crd_findings(&name, group, kind, &own, other, settings, &mut listed);
    }) {
        Ok(()) => {
            findings.add(listed);
            None
        }
        Err(error) => Some(error),
    }
    // A lookup an update needs for nothing it adds decides nothing.
    .filter(|_| before.is_none() || !kind_before || adds_names);

    // The clashes the live CRD already had: one warning, no rejection.
    let mut pre_existing = Vec::new();
    if kind_before {
        pre_existing.extend(findings.kind.keys().map(|g| group_label(g).to_string()));
        pre_existing.extend(findings.well_known.keys().map(|g| group_label(g).to_string()));
        findings.kind.clear();
        findings.well_known.clear();
    }
    let (old_names, new_names): (BTreeSet<NameClash>, BTreeSet<NameClash>) = std::mem::take(&mut findings.names)
        .into_iter()
        .partition(|clash| names_before.contains(&clash.value));
    findings.names = new_names;
    pre_existing.sort();
    pre_existing.dedup();

    let mut out = Vec::new();
    if !pre_existing.is_empty() || !old_names.is_empty() {
        out.push(pre_existing_finding(kind, &pre_existing, &old_names));
    }
    if let Some(action) = kind_action(&findings, settings) {
        out.push(Finding::new(
            "kindCollision",
            action,
            "spec.names.kind",
            kind_message(group, kind, &findings),
            kind_brief(kind, &findings),
        ));
    }
    if !findings.well_known.is_empty() && settings.well_known_projects == WellKnownProjects::Warn {
        let others: Vec<String> = findings
            .well_known
            .iter()
            .map(|(group, servers)| match servers.iter().any(|s| s.builtin) {
                true => format!("{} (built-in)", group_label(group)),
                false => group_label(group).to_string(),
            })
            .collect();
        out.push(Finding::warn(
            "wellKnownCoexistence",
            "spec.names.kind",
            well_known::brief(kind, &others),
            well_known::brief(kind, &others),
        ));
    }
    if let Some(first) = findings.names.iter().next() {
        let action = match settings.name_collisions {
            Action::Reject => Some(RejectOrWarn::Reject),
            Action::Warn => Some(RejectOrWarn::Warn),
            Action::Ignore => None,
        };
        if let Some(action) = action {
            out.push(Finding::new(
                "nameCollision",
                action,
                first.path.clone(),
                names_message(&name, group, &names.plural, &findings.names),
                names_brief(&findings.names),
            ));
        }
    }
    if let Some(error) = lookup_error {
        let failed = |suffix: &str| {
            Parts::default()
                .fixed("not checked against the cluster's CRDs: listing them failed: ")
                .elidable(error.as_str())
                .fixed(suffix)
        };
        out.push(match settings.on_lookup_failure {
            OnLookupFailure::Reject => Finding::reject(
                "lookupFailure",
                "",
                format!(
                    "cannot be checked against the cluster's other CustomResourceDefinitions: listing {CRD_KIND} in {CRD_API_VERSION} failed: {}. The policy rejects what it cannot check {LOOKUP_FAILURE_MARK}. Fix: let the policy list CustomResourceDefinitions (its metadata.yml declares them in contextAwareResources; the policy-server's service account needs RBAC permission to list customresourcedefinitions.apiextensions.k8s.io; kwctl needs --allow-context-aware), or set {{\"onLookupFailure\":\"accept\"}} to accept with a warning instead.",
                    elide(&error, LOOKUP_ERROR_CHARS)
                ),
                failed(&format!(" {LOOKUP_FAILURE_MARK}.")),
            )
            .with_code(500),
            OnLookupFailure::Accept => Finding::warn(
                "lookupFailure",
                "",
                failed(". Accepted (onLookupFailure: accept)."),
                failed(". Accepted (onLookupFailure: accept)."),
            ),
        });
    }
    out
}

/// Collisions with the built-in resources of other groups.
fn builtin_findings(group: &str, kind: &str, own: &[OwnName<'_>], settings: &Settings, findings: &mut Findings) {
    let kind_allowed = settings.allowed_kind(kind);
    for resource in builtin_resources() {
        // Subresource kinds and discovery documents have no endpoint of their own.
        if resource.subresource || resource.plural.is_empty() {
            continue;
        }
        let same_kind = resource.kind == kind;
        let kind_clash = same_kind && !kind_allowed;
        let well_known = kind_clash && settings.well_known_projects.exempts(group, resource.group, true);
        // Two resources of an allowed kind, or of a well-known coexistence, may share the names
        // that come with it. Otherwise the plural and singular two resources of one kind share
        // are part of the kind's finding, never a second finding of the same pair, unless only
        // they reject (`nameCollisions: reject` beside a kind clash that warns).
        let names_exempt = same_kind && (kind_allowed || well_known);
        let fold = same_kind && names_come_with_kind(settings, settings.builtin_collisions);
        let name_clash = !names_exempt
            && own.iter().any(|name| {
                !(fold && name.of_kind())
                    && (name.value == resource.plural || is_lowercase_of(name.value, resource.kind))
            });
        // Most built-in resources share nothing with the CRD: skip them before building labels.
        if !kind_clash && !name_clash {
            continue;
        }
        if resource.group == group || settings.allowed_pair(group, resource.group) || same_owner(group, resource.group)
        {
            continue;
        }
        let qualified = if resource.group.is_empty() {
            resource.plural.to_string()
        } else {
            format!("{}.{}", resource.plural, resource.group)
        };
        let label = format!("built-in {qualified}");
        if kind_clash {
            findings
                .kind_servers(well_known)
                .entry(resource.group.to_string())
                .or_default()
                .insert(Server {
                    builtin: true,
                    label: label.clone(),
                });
        }
        if name_clash {
            let singular = resource.kind.to_ascii_lowercase();
            findings.clash_names(
                own,
                &[(resource.plural, "plural"), (singular.as_str(), "singular")],
                &label,
                resource.group,
                fold,
            );
        }
    }
}

/// Whether the plural and singular two resources of one kind share are said by the kind's
/// finding rather than by a finding of their own: always, unless the kind clash warns
/// (`kind_action`) while `nameCollisions` rejects, the one case where a name finding says more
/// than the kind's.
fn names_come_with_kind(settings: &Settings, kind_action: RejectOrWarn) -> bool {
    kind_action == RejectOrWarn::Reject || settings.name_collisions != Action::Reject
}

/// Whether `name` is `kind` in lowercase (a built-in resource's singular name), compared
/// exactly and without allocating.
fn is_lowercase_of(name: &str, kind: &str) -> bool {
    name.len() == kind.len() && name.bytes().zip(kind.bytes()).all(|(n, k)| n == k.to_ascii_lowercase())
}

/// Collisions with one CRD listed from the cluster.
fn crd_findings(
    name: &str,
    group: &str,
    kind: &str,
    own: &[OwnName<'_>],
    other: &CrdIdentity<'_>,
    settings: &Settings,
    findings: &mut Findings,
) {
    let other_group = &*other.spec.group;
    if other.metadata.name == name || other_group == group || settings.allowed_pair(group, other_group) {
        return;
    }
    let kind_allowed = settings.allowed_kind(kind);
    let other_names = &other.spec.names;
    let same_kind = other_names.kind == kind;
    let shares_a_name = own.iter().any(|n| {
        let value = n.value;
        value == other_names.plural
            || value == other_names.singular
            || (other_names.singular.is_empty() && is_lowercase_of(value, &other_names.kind))
            || other_names.short_names.iter().any(|s| s == value)
    });
    // Most listed CRDs share nothing with this one: skip them before building labels.
    if !same_kind && !shares_a_name {
        return;
    }
    // One owner publishes both groups: its clashes are deliberate.
    if same_owner(group, other_group) {
        return;
    }
    let label = format!("CustomResourceDefinition {}", other.metadata.name);
    let well_known = same_kind && !kind_allowed && settings.well_known_projects.exempts(group, other_group, false);
    if same_kind && !kind_allowed {
        findings
            .kind_servers(well_known)
            .entry(other_group.to_string())
            .or_default()
            .insert(Server {
                builtin: false,
                label: label.clone(),
            });
    }
    if own.is_empty() || (same_kind && (kind_allowed || well_known)) {
        return;
    }
    // The plural and singular of one kind come with it (see `builtin_findings`).
    let fold = same_kind && names_come_with_kind(settings, settings.crd_collisions);
    let lowercase_kind = other_names.kind.to_ascii_lowercase();
    let singular = if other_names.singular.is_empty() {
        lowercase_kind.as_str()
    } else {
        &*other_names.singular
    };
    let mut others = vec![(&*other_names.plural, "plural"), (singular, "singular")];
    others.extend(other_names.short_names.iter().map(|s| (&**s, "short name")));
    findings.clash_names(own, &others, &label, other_group, fold);
}

/// The fields of the cluster's CRDs the check reads ([`crd_findings`]), asked for as Kubewarden
/// field masks so that the host sends only these (plus `apiVersion`, `kind` and `metadata`,
/// which always come whole; `metadata.name` is read from there). Whole CRDs with their schemas
/// are tens of kilobytes each; these fields are a few hundred bytes.
pub const LISTED_CRD_FIELDS: &[&str] = &[
    "spec.group",
    "spec.names.kind",
    "spec.names.plural",
    "spec.names.shortNames",
    "spec.names.singular",
];

/// What [`list_crds`] keeps of the last List of CRDs the cluster answered: its text and, once
/// the same text came again, its items owned. An engine that keeps one instance for many
/// requests (`syncguard scan` does, for every document of a tree) hands each the same List:
/// reading it again for each would cost a scan far more than it compares. An engine that starts
/// every evaluation from a fresh instance (policy-server) reads the List once, borrowing from its
/// text, and keeps nothing but the text, moved here.
struct LastList {
    /// The List's text.
    text: String,
    /// Its items, owned, read when the same text came a second time.
    items: Option<Rc<Vec<CrdIdentity<'static>>>>,
}

thread_local! {
    /// The last List of CRDs, for [`list_crds`] to reuse when the cluster answers the same.
    static LAST_LIST: RefCell<Option<LastList>> = const { RefCell::new(None) };
}

/// Lists the cluster's CRDs, pruned to [`LISTED_CRD_FIELDS`], and calls `each` with every one
/// read as a [`CrdIdentity`], as it is read: an unreadable item fails the whole lookup, and the
/// caller then drops what `each` was given. The answer never depends on [`LAST_LIST`]: the
/// items are those the text reads as.
fn list_crds(cluster: &dyn Cluster, mut each: impl FnMut(&CrdIdentity<'_>)) -> Result<(), String> {
    let items = cluster.list_all(CRD_API_VERSION, CRD_KIND, LISTED_CRD_FIELDS)?;
    let unreadable = |e| match e {
        ItemsError::NotAList(message) => message,
        ItemsError::Item(i, e) => format!("item {i} of the list is not a readable CustomResourceDefinition: {e}"),
    };
    let again = LAST_LIST.with_borrow(|last| match last {
        Some(last) if items.is_text(&last.text) => Some(last.items.clone()),
        _ => None,
    });
    match again {
        Some(Some(listed)) => listed.iter().for_each(each),
        // The same List a second time: an instance that serves many requests.
        Some(None) => {
            let listed = items.read::<CrdIdentity<'_>>().map_err(unreadable)?;
            let listed = Rc::new(listed.into_iter().map(CrdIdentity::into_owned).collect::<Vec<_>>());
            listed.iter().for_each(&mut each);
            LAST_LIST.with_borrow_mut(|last| {
                if let Some(last) = last {
                    last.items = Some(listed);
                }
            });
        }
        None => {
            items.each(|crd: CrdIdentity<'_>| each(&crd)).map_err(unreadable)?;
            LAST_LIST.set(Some(LastList {
                text: items.into_text(),
                items: None,
            }));
        }
    }
    Ok(())
}

/// The action for the kind finding: the strictest among the kinds of servers found.
fn kind_action(findings: &Findings, settings: &Settings) -> Option<RejectOrWarn> {
    let servers = findings.kind.values().flatten();
    let mut action = None;
    for server in servers {
        let this = if server.builtin {
            settings.builtin_collisions
        } else {
            settings.crd_collisions
        };
        if this == RejectOrWarn::Reject {
            return Some(RejectOrWarn::Reject);
        }
        action = Some(this);
    }
    action
}

/// The settings that would allow `group` to share with `others`, as JSON.
fn allowance(group: &str, others: impl IntoIterator<Item = String>) -> String {
    let mut set = BTreeSet::new();
    for other in others {
        set.insert(other);
    }
    set.insert(group_label(group).to_string());
    let groups: Vec<String> = set.iter().map(|group| quote(group)).collect();
    format!("{{\"allowedGroupSets\":[[{}]]}}", groups.join(","))
}

fn kind_message(group: &str, kind: &str, findings: &Findings) -> String {
    let servers: Vec<String> = findings
        .kind
        .iter()
        .map(|(other, servers)| {
            let labels: Vec<String> = servers.iter().map(|s| s.label.clone()).collect();
            let builtin = servers.iter().all(|s| s.builtin);
            format!(
                "{} ({}): {}",
                group_label(other),
                join_within(&labels, ", ", LIST_CHARS / 4),
                why_strict(group, other, builtin)
            )
        })
        .collect();
    let groups = findings.kind.keys().map(|g| group_label(g).to_string());
    let by_groups = allowance(group, groups);
    let by_kind = format!("{{\"allowedKinds\":[{}]}}", quote(kind));
    let noun = if servers.len() == 1 {
        "another API group"
    } else {
        "other API groups"
    };
    format!(
        "serves kind {kind} (spec.names.kind) in group {}, but {noun} already serve{} that kind: {}. Tools that match objects by kind and name without their group mix such kinds up: Helm before 3.17.1 cannot reinstall a release that kept objects of these kinds (helm.sh/resource-policy: keep) and fails with `cannot patch \"<name>\" with kind {kind}: ... metadata.resourceVersion: Invalid value: 0x0: must be specified for an update`, and kubectl and other tools that resolve resources by kind become ambiguous. Fix: give the resource a kind no other group serves (spec.names.kind), or, if the groups are meant to share it, allow it in the policy settings: {by_groups} or {by_kind}.",
        group_label(group),
        if servers.len() == 1 { "s" } else { "" },
        join_within(&servers, "; ", LIST_CHARS)
    )
}

/// The clashes an UPDATE leaves as they were, in one warning: the groups that also serve the
/// kind, and the names other groups also use.
fn pre_existing_finding(kind: &str, groups: &[String], names: &BTreeSet<NameClash>) -> Finding {
    let mut what = Vec::new();
    if !groups.is_empty() {
        what.push(format!(
            "kind {kind} is also served by {}",
            crate::text::join_and(groups)
        ));
    }
    if let Some(first) = names.iter().next() {
        let more = match names.len() - 1 {
            0 => String::new(),
            n => format!(" (+{n} more)"),
        };
        what.push(format!(
            "{} {} is also the {} of {}{more}",
            first.path,
            quote(&first.value),
            first.role,
            brief_label(&first.other)
        ));
    }
    let what = what.join("; ");
    Finding::warn(
        "preExistingCollision",
        if groups.is_empty() {
            names.iter().next().map(|n| n.path.clone()).unwrap_or_default()
        } else {
            "spec.names.kind".to_string()
        },
        format!(
            "{what}, as before this update: the clash was there before, so this update is accepted (an update is refused only for a clash it adds)."
        ),
        Parts::default()
            .elidable(what)
            .fixed(", as before this update: accepted, the update adds no clash."),
    )
}

/// The kind finding in a few words: who else serves the kind.
fn kind_brief(kind: &str, findings: &Findings) -> Parts {
    let servers: Vec<String> = findings
        .kind
        .values()
        .flat_map(|servers| servers.iter().map(|server| brief_label(&server.label)))
        .collect();
    Parts::default()
        .fixed("kind ")
        .elidable(kind)
        .fixed(" is also served by ")
        .elidable(join_within(&servers, ", ", 80))
        .fixed("; Helm < 3.17.1 and kubectl mix such kinds up. Rename it or allow the groups (allowedGroupSets).")
}

/// The names finding in a few words: the first name another group uses and how many more.
fn names_brief(clashes: &BTreeSet<NameClash>) -> Parts {
    let Some(first) = clashes.iter().next() else {
        return Parts::default();
    };
    let more = match clashes.len() - 1 {
        0 => String::new(),
        n => format!(" (+{n} more)"),
    };
    Parts::default()
        .fixed(format!("{} ", first.path))
        .elidable(quote(&first.value))
        .fixed(format!(" is also the {} of ", first.role))
        .elidable(brief_label(&first.other))
        .fixed(more)
        .fixed("; kubectl picks one of them. Rename it or allow the groups (allowedGroupSets).")
}

/// How a warning names another resource: `CRD <name>` rather than the message's
/// `CustomResourceDefinition <name>`, built-in resources as they are.
fn brief_label(label: &str) -> String {
    match label.strip_prefix("CustomResourceDefinition ") {
        Some(name) => format!("CRD {name}"),
        None => label.to_string(),
    }
}

fn names_message(name: &str, group: &str, plural: &str, clashes: &BTreeSet<NameClash>) -> String {
    let items: Vec<String> = clashes
        .iter()
        .map(|c| {
            let article = if c.role == "short name" { "a" } else { "the" };
            format!(
                "{} {} is {article} {} of {} (group {})",
                c.path,
                quote(&c.value),
                c.role,
                c.other,
                group_label(&c.group)
            )
        })
        .collect();
    let first = clashes.iter().next().map(|c| c.value.as_str()).unwrap_or(plural);
    let by_groups = allowance(group, clashes.iter().map(|c| group_label(&c.group).to_string()));
    let qualified = if plural.is_empty() {
        name.to_string()
    } else {
        format!("{plural}.{group}")
    };
    format!(
        "uses names another API group already uses: {}. kubectl resolves such a name to only one of the resources, so `kubectl get {first}` may show or change the other group's objects. Fix: choose names no other group uses (rename or remove the entries above), address the resource by its full name (`kubectl get {qualified}`), or, if the groups are meant to share names, allow them in the policy settings: {by_groups}.",
        join_within(&items, "; ", LIST_CHARS)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::Response;
    use crate::check;
    use crate::cluster::Objects;
    use serde_json::{Value, json};
    use std::cell::Cell;

    /// A cluster that counts its lookups and answers from a fixed list.
    struct Counting {
        calls: Cell<usize>,
        answer: Result<Vec<Value>, String>,
    }

    impl Counting {
        fn new(answer: Result<Vec<Value>, String>) -> Self {
            Counting {
                calls: Cell::new(0),
                answer,
            }
        }
    }

    impl crate::cluster::HostCalls for Counting {
        fn host_call(&self, operation: &str, request: &[u8]) -> Result<Vec<u8>, String> {
            assert_eq!(
                operation,
                crate::cluster::LIST_RESOURCES_ALL,
                "crd-kind-collision only lists"
            );
            let asked: Value = serde_json::from_slice(request).unwrap();
            assert_eq!(
                (&asked["api_version"], &asked["kind"]),
                (&json!(CRD_API_VERSION), &json!(CRD_KIND))
            );
            let masks: std::collections::BTreeSet<&str> = asked["field_masks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m.as_str().unwrap())
                .collect();
            assert_eq!(masks, LISTED_CRD_FIELDS.iter().copied().collect());
            self.calls.set(self.calls.get() + 1);
            self.answer
                .clone()
                .map(|objects| json!({"items": objects}).to_string().into_bytes())
        }
    }

    fn crd(group: &str, kind: &str, plural: &str, short: &[&str]) -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {
                    "kind": kind,
                    "listKind": format!("{kind}List"),
                    "plural": plural,
                    "singular": kind.to_ascii_lowercase(),
                    "shortNames": short,
                },
                "versions": [{"name": "v1", "served": true, "storage": true}],
            },
        })
    }

    fn request(operation: &str, object: &Value) -> Value {
        syncguard_testkit::crd_request(operation, object, None)
    }

    fn decide(request: &Value, settings: Value, cluster: &dyn Cluster) -> Response {
        check::decide::<CrdKindCollision>(syncguard_testkit::payload(request, &settings).as_bytes(), cluster)
    }

    fn settings_error(settings: Value) -> String {
        check::parse_settings::<CrdKindCollision>(Some(&settings.to_string())).unwrap_err()
    }

    #[test]
    fn defaults() {
        let s = check::parse_settings::<CrdKindCollision>(Some("{}")).unwrap();
        assert_eq!(s.builtin_collisions, RejectOrWarn::Reject);
        assert_eq!(s.crd_collisions, RejectOrWarn::Reject);
        assert_eq!(s.name_collisions, Action::Warn);
        assert_eq!(s.on_lookup_failure, OnLookupFailure::Reject);
        assert_eq!(s.well_known_projects, WellKnownProjects::Warn);
        assert!(s.allowed_group_sets.is_empty() && s.allowed_kinds.is_empty());
    }

    #[test]
    fn settings_are_validated() {
        let err = settings_error(json!({"allowedGroupSets": [["a.example.com"]]}));
        assert!(err.contains("`allowedGroupSets[0]` needs at least two"), "{err}");
        let err = settings_error(json!({"allowedGroupSets": [["a.example.com", "a.example.com"]]}));
        assert!(err.contains("lists \"a.example.com\" twice"), "{err}");
        let err = settings_error(json!({"allowedGroupSets": [["a.example.com", ""]]}));
        assert!(err.contains("`allowedGroupSets[0][1]` is empty"), "{err}");
        let err = settings_error(json!({"allowedGroupSets": [["a.example.com", "B.example.com"]]}));
        assert!(err.contains("is not an API group name"), "{err}");
        let err = settings_error(json!({"allowedKinds": ["Gateway", "Gateway"]}));
        assert!(err.contains("lists \"Gateway\" twice"), "{err}");
        let err = settings_error(json!({"allowedKinds": ["gate way"]}));
        assert!(err.contains("`allowedKinds[0]`"), "{err}");
        let err = settings_error(json!({"nameCollisions": "block"}));
        assert!(err.starts_with("`nameCollisions`"), "{err}");
        let err = settings_error(json!({"builtinCollisions": "ignore"}));
        assert!(err.starts_with("`builtinCollisions`"), "{err}");
        let err = settings_error(json!({"allowedGroup": []}));
        assert!(err.contains("unknown field `allowedGroup`"), "{err}");
    }

    #[test]
    fn group_sets_read_lists_and_comma_separated_strings() {
        let settings = json!({"allowedGroupSets": [["core", "serving.knative.dev"], " a.example.com ,b.example.com"]});
        let s = check::parse_settings::<CrdKindCollision>(Some(&settings.to_string())).unwrap();
        assert_eq!(
            s.allowed_group_sets[1],
            GroupSet(vec!["a.example.com".into(), "b.example.com".into()])
        );
        assert!(s.allowed_pair("", "serving.knative.dev"));
        assert!(s.allowed_pair("b.example.com", "a.example.com"));
        assert!(!s.allowed_pair("a.example.com", "serving.knative.dev"));
        let err = settings_error(json!({"allowedGroupSets": ["a.example.com,"]}));
        assert!(err.contains("`allowedGroupSets[0][1]` is empty"), "{err}");
        let err = settings_error(json!({"allowedGroupSets": [["a.example.com", 3]]}));
        assert!(
            err.starts_with("`allowedGroupSets[0][1]`: invalid type: integer"),
            "{err}"
        );
    }

    #[test]
    fn no_lookup_for_requests_the_check_does_not_apply_to() {
        let cluster = Counting::new(Ok(Vec::new()));
        let object = crd("stable.example.com", "Shirt", "shirts", &[]);
        let mut status = request("UPDATE", &object);
        status["subResource"] = json!("status");
        assert!(decide(&status, json!({}), &cluster).accepted);
        let delete = request("DELETE", &object);
        assert!(decide(&delete, json!({}), &cluster).accepted);
        let mut pod = request("CREATE", &json!({"metadata": {"name": "p"}, "spec": "not a CRD"}));
        pod["resource"] = json!({"group": "", "version": "v1", "resource": "pods"});
        assert!(decide(&pod, json!({}), &cluster).accepted);
        assert_eq!(cluster.calls.get(), 0);
    }

    #[test]
    fn one_lookup_per_request_and_none_when_nothing_needs_it() {
        let cluster = Counting::new(Ok(Vec::new()));
        let object = crd("stable.example.com", "Shirt", "shirts", &[]);
        assert!(decide(&request("CREATE", &object), json!({}), &cluster).accepted);
        assert_eq!(cluster.calls.get(), 1);
        let settings = json!({"allowedKinds": ["Shirt"], "nameCollisions": "ignore"});
        assert!(decide(&request("CREATE", &object), settings, &cluster).accepted);
        assert_eq!(cluster.calls.get(), 1);
    }

    #[test]
    fn builtin_in_the_same_group_is_not_another_group() {
        let object = crd("apps", "Deployment", "deployments", &[]);
        let verdict = decide(&request("CREATE", &object), json!({}), &Objects::default());
        assert!(verdict.accepted, "{verdict:?}");
        assert!(verdict.warnings.is_empty(), "{verdict:?}");
    }

    #[test]
    fn subresource_kinds_and_discovery_documents_are_not_resources() {
        for (kind, plural) in [("Scale", "scales"), ("Status", "statuses"), ("APIGroup", "apigroups")] {
            let object = crd("example.com", kind, plural, &["token", "scale"]);
            let verdict = decide(&request("CREATE", &object), json!({}), &Objects::default());
            assert!(verdict.accepted && verdict.warnings.is_empty(), "{kind}: {verdict:?}");
        }
    }

    #[test]
    fn every_group_is_listed_sorted_whatever_the_list_order() {
        let object = crd("example.com", "Event", "events", &[]);
        let mut others = vec![
            crd("z.example.org", "Event", "events", &[]),
            crd("a.example.org", "Event", "events", &["ev"]),
        ];
        let first = decide(&request("CREATE", &object), json!({}), &Objects(others.clone()));
        others.reverse();
        let second = decide(&request("CREATE", &object), json!({}), &Objects(others));
        assert_eq!(first, second);
        let message = first.message.unwrap();
        let order = [
            "core (built-in events)",
            "a.example.org (CustomResourceDefinition events.a.example.org)",
            "events.k8s.io (built-in events.events.k8s.io)",
            "z.example.org",
        ];
        let mut rest = message.as_str();
        for part in order {
            let i = rest
                .find(part)
                .unwrap_or_else(|| panic!("{part} missing or out of order in {message}"));
            rest = &rest[i + part.len()..];
        }
        assert!(
            message.contains(
                r#"{"allowedGroupSets":[["a.example.org","core","events.k8s.io","example.com","z.example.org"]]}"#
            ),
            "{message}"
        );
    }

    #[test]
    fn core_in_a_group_set_allows_the_core_group() {
        let object = crd("serving.knative.dev", "Service", "services", &["kservice", "ksvc"]);
        let strict = json!({"wellKnownProjects": "strict"});
        let verdict = decide(&request("CREATE", &object), strict, &Objects::default());
        assert!(!verdict.accepted);
        assert!(
            verdict
                .message
                .as_deref()
                .unwrap_or("")
                .contains("core (built-in services)"),
            "{verdict:?}"
        );
        let settings = json!({"allowedGroupSets": [["core", "serving.knative.dev"]]});
        let verdict = decide(&request("CREATE", &object), settings, &Objects::default());
        assert!(verdict.accepted && verdict.warnings.is_empty(), "{verdict:?}");
    }

    #[test]
    fn allowed_kind_exempts_shared_names_of_that_kind_only() {
        let object = crd("networking.istio.io", "Gateway", "gateways", &["gw"]);
        let others = vec![
            crd("gateway.networking.k8s.io", "Gateway", "gateways", &["gtw"]),
            crd("gateway.solo.example", "GatewayPolicy", "gatewaypolicies", &["gw"]),
        ];
        let settings = json!({"allowedKinds": ["Gateway"]});
        let verdict = decide(&request("CREATE", &object), settings, &Objects(others));
        assert!(verdict.accepted, "{verdict:?}");
        assert_eq!(verdict.warnings.len(), 1, "{verdict:?}");
        let warning = &verdict.warnings[0];
        assert!(
            warning.contains(
                "spec.names.shortNames[0] \"gw\" is also the short name of CRD gatewaypolicies.gateway.solo.example"
            ),
            "{warning}"
        );
        assert!(!warning.contains("gateways.gateway.networking.k8s.io"), "{warning}");
    }

    #[test]
    fn own_earlier_state_is_skipped() {
        let object = crd("stable.example.com", "Shirt", "shirts", &["sh"]);
        let verdict = decide(&request("UPDATE", &object), json!({}), &Objects(vec![object.clone()]));
        assert!(verdict.accepted && verdict.warnings.is_empty(), "{verdict:?}");
    }

    #[test]
    fn the_same_list_again_is_read_once_owned_and_answers_the_same() {
        let kept = || LAST_LIST.with_borrow(|last| last.as_ref().map(|last| last.items.is_some()));
        let object = crd("stable.example.com", "Shirt", "shirts", &["sh"]);
        let others = Objects(vec![crd("beta.example.com", "Shirt", "shirts", &["sh"])]);
        LAST_LIST.set(None);
        let first = decide(&request("CREATE", &object), json!({}), &others);
        assert!(!first.accepted, "{first:?}");
        assert_eq!(kept(), Some(false), "a first List keeps its text only");
        let second = decide(&request("CREATE", &object), json!({}), &others);
        assert_eq!(kept(), Some(true), "the same List again is kept read");
        let third = decide(&request("CREATE", &object), json!({}), &others);
        assert_eq!((&first, &second), (&third, &third));
        let empty = decide(&request("CREATE", &object), json!({}), &Objects::default());
        assert!(empty.accepted, "another List is read again: {empty:?}");
        assert_eq!(kept(), Some(false));
        // A List that fails to read leaves the last one in place, and fails every time.
        let bad = Objects(vec![
            json!({"apiVersion": CRD_API_VERSION, "kind": CRD_KIND, "metadata": {"name": 7}}),
        ]);
        for _ in 0..2 {
            assert_eq!(decide(&request("CREATE", &object), json!({}), &bad).code, Some(500));
        }
    }

    #[test]
    fn listed_fields_are_sorted_without_repeats() {
        // The host reads the masks as a set; the request writes them as given.
        assert!(LISTED_CRD_FIELDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn listed_crds_are_read_from_the_masked_fields_only() {
        // What the masks leave out never reaches the check: a listed CRD whose schema, scope,
        // versions and status would not read as a CRD still counts by its group and names.
        let object = crd("stable.example.com", "Shirt", "shirts", &[]);
        let mut other = crd("beta.example.com", "Shirt", "shirts", &["sh"]);
        other["spec"]["versions"] = json!("not a list");
        other["spec"]["scope"] = json!(3);
        other["spec"]["names"]["categories"] = json!({"not": "a list"});
        other["status"] = json!({"storedVersions": "v1"});
        let verdict = decide(&request("CREATE", &object), json!({}), &Objects(vec![other]));
        assert!(!verdict.accepted, "{verdict:?}");
        assert!(
            verdict
                .message
                .unwrap()
                .contains("beta.example.com (CustomResourceDefinition shirts.beta.example.com)")
        );
    }

    #[test]
    fn unreadable_list_item_is_a_lookup_failure() {
        let object = crd("stable.example.com", "Shirt", "shirts", &[]);
        let bad = json!({
            "apiVersion": CRD_API_VERSION,
            "kind": CRD_KIND,
            "metadata": {"name": "x.example.com"},
            "spec": {"names": {"shortNames": "x"}},
        });
        let verdict = decide(&request("CREATE", &object), json!({}), &Objects(vec![bad]));
        assert!(!verdict.accepted);
        assert_eq!(verdict.code, Some(500));
        assert!(
            verdict
                .message
                .unwrap()
                .contains("item 0 of the list is not a readable CustomResourceDefinition")
        );
    }

    #[test]
    fn builtin_findings_survive_a_failed_lookup() {
        let object = crd("flux.local", "Deployment", "deployments", &[]);
        let cluster = Counting::new(Err("forbidden".into()));
        let verdict = decide(
            &request("CREATE", &object),
            json!({"onLookupFailure": "accept"}),
            &cluster,
        );
        assert!(!verdict.accepted);
        assert_eq!(verdict.code, None);
        assert!(verdict.message.unwrap().contains("apps (built-in deployments.apps)"));
        // The plural and singular deployments.apps shares come with the refused kind: the one
        // warning is the lookup's.
        assert_eq!(verdict.warnings.len(), 1, "the lookup only: {:?}", verdict.warnings);
        assert!(
            verdict.warnings[0].contains("listing them failed: forbidden. Accepted (onLookupFailure: accept)"),
            "{:?}",
            verdict.warnings
        );
    }

    #[test]
    fn strictest_action_wins_for_the_kind() {
        let object = crd("example.com", "Event", "events", &[]);
        let others = vec![crd("a.example.org", "Event", "events", &[])];
        let settings = json!({"builtinCollisions": "warn", "crdCollisions": "reject", "nameCollisions": "ignore"});
        let verdict = decide(&request("CREATE", &object), settings, &Objects(others.clone()));
        assert!(!verdict.accepted, "{verdict:?}");
        let settings = json!({"builtinCollisions": "warn", "crdCollisions": "warn", "nameCollisions": "ignore"});
        let verdict = decide(&request("CREATE", &object), settings, &Objects(others));
        assert!(verdict.accepted && verdict.warnings.len() == 1, "{verdict:?}");
    }

    #[test]
    fn defaulted_singular_is_checked() {
        let mut object = crd("example.com", "Widget", "widgets", &[]);
        object["spec"]["names"]["singular"] = json!("");
        let others = vec![crd("other.example.org", "Gadget", "gadgets", &["widget"])];
        let verdict = decide(&request("CREATE", &object), json!({}), &Objects(others));
        assert!(verdict.accepted);
        assert!(
            verdict.warnings[0]
                .contains("spec.names.singular (defaulted from spec.names.kind) \"widget\" is also the short name"),
            "{verdict:?}"
        );
    }

    #[test]
    fn kinds_compare_exactly_names_still_collide() {
        let object = crd("cpln.io", "deployment", "deployments", &[]);
        let verdict = decide(&request("CREATE", &object), json!({}), &Objects::default());
        assert!(verdict.accepted, "{verdict:?}");
        assert_eq!(verdict.warnings.len(), 1, "{verdict:?}");
        assert!(
            verdict.warnings[0].contains(
                "spec.names.plural \"deployments\" is also the plural of built-in deployments.apps (+1 more)"
            ),
            "{verdict:?}"
        );
        let rejected = decide(
            &request("CREATE", &object),
            json!({"nameCollisions": "reject"}),
            &Objects::default(),
        );
        assert!(
            rejected
                .message
                .unwrap()
                .contains("spec.names.singular \"deployment\" is the singular of built-in deployments.apps")
        );
    }

    #[test]
    fn malformed_objects_are_rejected_with_400() {
        let mut req = request("CREATE", &crd("example.com", "Widget", "widgets", &[]));
        req["object"]["spec"]["names"]["shortNames"] = json!("w");
        let verdict = decide(&req, json!({}), &Objects::default());
        assert_eq!((verdict.accepted, verdict.code), (false, Some(400)));
        req["object"] = Value::Null;
        let verdict = decide(&req, json!({}), &Objects::default());
        assert_eq!((verdict.accepted, verdict.code), (false, Some(400)));
    }

    #[test]
    fn crd_without_kind_or_group_is_left_to_the_api_server() {
        let cluster = Counting::new(Ok(Vec::new()));
        let mut object = crd("example.com", "Widget", "widgets", &[]);
        object["spec"]["names"]["kind"] = json!("");
        assert!(decide(&request("CREATE", &object), json!({}), &cluster).accepted);
        assert_eq!(cluster.calls.get(), 0);
    }
}
