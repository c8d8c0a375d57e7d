//! sync-drift: catch every value the API server stores differently from what was applied, in
//! any kind, before it leaves a GitOps tool OutOfSync forever.
//!
//! # Where it looks
//! - **A manifest** (the request's object has no `uid`, `resourceVersion` or creation time:
//!   `syncguard scan`, the playground, kwctl on a rendered chart): the object itself is what will
//!   be applied, judged by the models of [`walk`] alone.
//! - **A live object** (an UPDATE, or an object with those fields: admission, Kubewarden's
//!   audit scanner): the API server has already
//!   decoded, pruned and canonicalised it, so it is compared with the manifest client-side apply
//!   recorded in `kubectl.kubernetes.io/last-applied-configuration`; a live object without that
//!   annotation (server-side apply, Helm, a controller) has nothing to compare and is accepted.
//!
//! # What it finds
//! One finding per drifting path, with its [`Cause`] (the rule), what the cluster keeps instead,
//! which of the tools in use report it and how ([`cause::effect`]), and the fix: the manifest
//! edit, and for the tools that report it OutOfSync the ignore entry that silences exactly those
//! paths. A CRD's fields its type does not declare are crd-schema-fields' findings, never this
//! check's, so the all-in-one reports them once; there its walk of a CRD hands them to
//! crd-schema-fields as it meets them ([`Beside`], [`Keys`]), one traversal for both.
//!
//! # Cost
//! Built-in kinds and CRDs need no lookup. A custom resource is judged against its CRD's
//! structural schema, read with one `get_resource` of `<resource>.<group>` (with field masks; a
//! request that names the resource by its kind, as the audit scanner's do, reads it by its likely
//! name first: [`cluster::crd_of_resource`]), and only when there is something the schema could prune: a manifest with a field besides
//! `apiVersion`, `kind`, `metadata` and `status`, or a live object that does not hold everything
//! last-applied holds there. The answer is read straight into the few members the walk needs
//! ([`Slim`]), and a module instance keeps the last few CRD versions it read, found again by a
//! digest of the answer: an engine that calls one instance for many objects (`syncguard scan`,
//! kwctl, the audit scanner) parses each CRD once.
//!
//! The object, its last-applied manifest and the CRD are read with [`crate::json`]: keys and
//! strings borrow from the request's text (the manifest's from the annotation's), and the walk
//! reads each object's members as serde_json's `Value` would hold them.

use crate::admission::Request;
use crate::check::shared_walk::{Alone, Beside, Keys};
use crate::check::{Check, GroupKind, Lookup, Objects};
use crate::cluster::{self, Cluster, CrdMissing};
use crate::finding::{Finding, Fix, List, Malformed, Report, RuleDoc, Subject};
use crate::generated::api_type_of;
use crate::json::{self, Members, Node};
use crate::k8s::LAST_APPLIED;
use crate::rules::{self, Rule};
use crate::settings::{Action, RejectOrWarn, RuleActions};
use crate::text::order::natural_cmp;
use crate::text::{Parts, elide, join_and, quote};
use cause::{Cause, Class, Effect, Facts, Tool};
use path::Pattern;
use serde::Deserialize;
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use walk::{CrdSchema, Drift, Live, Stored, Walker};

pub mod cause;
pub mod path;
pub mod quantity;
pub mod walk;

/// The README section of the causes.
const CAUSES_ANCHOR: &str = "what-it-finds";

/// The rules of the check's findings.
pub const FINDINGS: &[RuleDoc] = &[
    RuleDoc {
        id: "nullOrEmpty",
        summary: "a null or empty value the API server drops (omitempty), so the stored object lacks it",
        anchor: CAUSES_ANCHOR,
    },
    RuleDoc {
        id: "preserveUnknownFields",
        summary: "spec.preserveUnknownFields: false in a CRD, the default, which the API server drops",
        anchor: CAUSES_ANCHOR,
    },
    RuleDoc {
        id: "quantity",
        summary: "a quantity the API server stores in another form (1000m as 1)",
        anchor: CAUSES_ANCHOR,
    },
    RuleDoc {
        id: "unknownField",
        summary: "a field the built-in kind does not declare, dropped when the API server decodes it",
        anchor: CAUSES_ANCHOR,
    },
    RuleDoc {
        id: "prunedField",
        summary: "a field of a custom resource its CRD's structural schema prunes",
        anchor: CAUSES_ANCHOR,
    },
    RuleDoc {
        id: "creationTimestamp",
        summary: "creationTimestamp: null, which the API server drops or replaces",
        anchor: CAUSES_ANCHOR,
    },
    RuleDoc {
        id: "status",
        summary: "a status stanza beyond what every stored object holds, which the API server does not write with the object",
        anchor: CAUSES_ANCHOR,
    },
    RuleDoc {
        id: "stringData",
        summary: "a Secret's stringData, which the API server merges into data and never stores",
        anchor: CAUSES_ANCHOR,
    },
    RuleDoc {
        id: "base64",
        summary: "base64 text the API server decodes and writes back otherwise (line breaks, padding bits)",
        anchor: CAUSES_ANCHOR,
    },
    RuleDoc {
        id: "namespace",
        summary: "metadata.namespace of a cluster-scoped object, which the API server clears",
        anchor: CAUSES_ANCHOR,
    },
    RuleDoc {
        id: "defaulted",
        summary: "a value the API server's defaulting replaces or removes (a Service port's targetPort: 0)",
        anchor: CAUSES_ANCHOR,
    },
    RuleDoc {
        id: "mutated",
        summary: "a live value that differs from the applied one: a webhook, a controller or an edit changed it",
        anchor: CAUSES_ANCHOR,
    },
    RuleDoc {
        id: "lastAppliedUnreadable",
        summary: "the last-applied-configuration annotation cannot be compared with the object",
        anchor: "where-it-looks",
    },
    RuleDoc {
        id: "tooDeep",
        summary: "the object nests deeper than 128 levels of JSON, so it was not checked",
        anchor: "where-it-looks",
    },
    RuleDoc {
        id: "schemaUnavailable",
        summary: "the custom resource's CRD could not be read, so pruning was not judged",
        anchor: "where-it-looks",
    },
];

/// The rules of drifting paths, listed together.
const LISTED: &[&str] = &[
    "nullOrEmpty",
    "preserveUnknownFields",
    "quantity",
    "unknownField",
    "prunedField",
    "creationTimestamp",
    "status",
    "stringData",
    "base64",
    "namespace",
    "defaulted",
    "mutated",
];

/// The oldest and the newest Kubernetes minor versions (1.MINOR) the `kubernetesVersion`
/// setting accepts; the newest is the default, the release of the API tables.
pub const OLDEST_MINOR: u32 = 16;
/// See [`OLDEST_MINOR`].
pub const NEWEST_MINOR: u32 = 37;

/// Most characters of a detail (an error, a name) quoted in a warning.
const DETAIL_CHARS: usize = 60;

/// Settings of the sync-drift check.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Settings {
    /// Each cause (rule) to `reject`, `warn` or `ignore`; a cause not named is `warn`.
    pub causes: RuleActions,
    /// The tools in use: only drift one of them reports (or fails on) is a finding. Default:
    /// the GitOps tools, `argocd`, `flux`, `fleet`; `kubectl` adds what only `kubectl apply`
    /// shows.
    pub tools: Vec<Tool>,
    /// Paths never reported, per kind.
    pub ignore_paths: Vec<IgnorePaths>,
    /// How many findings the message (or the warnings) list, 1 to 1000; default 20.
    pub max_findings: u32,
    /// The Kubernetes version of the cluster, `1.MINOR` (default: the newest supported); the
    /// findings that depend on it are listed in the README.
    pub kubernetes_version: String,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            causes: RuleActions::default(),
            tools: Tool::GITOPS.to_vec(),
            ignore_paths: Vec::new(),
            max_findings: 20,
            kubernetes_version: format!("1.{NEWEST_MINOR}"),
        }
    }
}

/// One entry of `ignorePaths`: JSON Pointers (`*` for any one step) of objects of a kind.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct IgnorePaths {
    /// The API group (`""` for the core group, `*` for any); absent: any.
    #[serde(default)]
    pub group: Option<String>,
    /// The kind, or `*` for any.
    pub kind: String,
    /// The paths, as JSON Pointers (`/spec/replicas`); everything under them is ignored too.
    pub paths: Vec<String>,
}

impl IgnorePaths {
    fn matches(&self, group: &str, kind: &str) -> bool {
        let fits = |want: &str, have: &str| want == "*" || want == have;
        fits(&self.kind, kind) && self.group.as_deref().is_none_or(|g| fits(g, group))
    }
}

impl Settings {
    /// The minor version of `kubernetesVersion` (the newest when it does not read; validated
    /// settings always read).
    pub fn minor(&self) -> u32 {
        minor_of(&self.kubernetes_version).unwrap_or(NEWEST_MINOR)
    }

    /// The action of `cause`: the settings', else `warn`.
    fn action(&self, cause: Cause) -> Action {
        self.causes.get(cause.rule()).unwrap_or(Action::Warn)
    }
}

/// The minor version of a `1.MINOR` text within the supported range (object-validation's
/// `kubernetesVersion` reads the same).
pub(crate) fn minor_of(version: &str) -> Option<u32> {
    let minor = version.strip_prefix("1.")?;
    if minor.is_empty() || !minor.bytes().all(|b| b.is_ascii_digit()) || (minor.len() > 1 && minor.starts_with('0')) {
        return None;
    }
    minor.parse().ok().filter(|m| (OLDEST_MINOR..=NEWEST_MINOR).contains(m))
}

/// Checks a `kubernetesVersion` setting: a supported `1.MINOR` (object-validation's too).
pub(crate) fn check_kubernetes_version(version: &str) -> Result<(), String> {
    match minor_of(version) {
        Some(_) => Ok(()),
        None => Err(format!(
            "`kubernetesVersion`: {} is not a supported Kubernetes version; allowed: `1.{OLDEST_MINOR}` to `1.{NEWEST_MINOR}` (1.MINOR, as a string)",
            quote(&elide(version, DETAIL_CHARS))
        )),
    }
}

/// The sync-drift check.
pub struct SyncDrift;

impl Check for SyncDrift {
    type Settings = Settings;
    const NAME: &'static str = "sync-drift";
    const SETTINGS_KEY: &'static str = "syncDrift";
    const RULES: &'static [Rule] = rules::SYNC_DRIFT;
    const KINDS: &'static [GroupKind] = &[];
    const READS_WHOLE: bool = true;
    const FINDINGS: &'static [RuleDoc] = FINDINGS;
    const LOOKUPS: &'static [Lookup] = &[("apiextensions.k8s.io/v1", "CustomResourceDefinition")];

    fn validate_settings(settings: &Settings) -> Result<(), String> {
        settings.causes.check("causes", LISTED)?;
        if settings.tools.is_empty() {
            return Err("`tools` is empty; name the GitOps tools in use (`argocd`, `flux`, `fleet`, `kubectl`)".into());
        }
        if !(1..=1000).contains(&settings.max_findings) {
            return Err(format!(
                "`maxFindings` must be between 1 and 1000, got {}",
                settings.max_findings
            ));
        }
        check_kubernetes_version(&settings.kubernetes_version)?;
        for (i, entry) in settings.ignore_paths.iter().enumerate() {
            if entry.kind.is_empty() {
                return Err(format!("`ignorePaths[{i}].kind` is empty; name a kind, or `*` for any"));
            }
            for (j, path) in entry.paths.iter().enumerate() {
                Pattern::parse(path).map_err(|e| format!("`ignorePaths[{i}].paths[{j}]`: {e}"))?;
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
        // The request's one tree of its object, read whole (an object a check before built,
        // from its value). Only serde_json's reader's own limit of 128 levels bounds the text.
        let object = match objects.tree() {
            Ok((object, _)) => object,
            // serde_json's reader stops at 128 levels of nesting; no manifest comes near, and the
            // walk never goes deeper than what was read.
            Err(e) if is_too_deep(e) => return Ok(too_deep(request)),
            Err(e) => return Err(Malformed(format!("cannot read the request's object: {e}"))),
        };
        judge(request, object, None, settings, cluster, &mut Alone)
    }
}

/// sync-drift's rule that object-validation's rules say too, and those rules: the custom
/// resource's CRD could not be read (sync-drift: its pruning was not judged; object-validation:
/// the object was not validated at all). Where both checks judge the object (the all-in-one,
/// `syncguard scan` with both policies), only object-validation's finding is given.
pub const SAID_BY_OBJECT_VALIDATION: (&str, &[&str]) = ("schemaUnavailable", &["unknownCrd", "unreadableSchema"]);

/// The answer to an object nested deeper than serde_json reads (128 levels).
pub(crate) fn too_deep(request: &Request<'_>) -> Report {
    let text = "the object nests deeper than 128 levels of JSON; it was not checked.";
    let deep = Finding::warn("tooDeep", "", text, text);
    Report::new(Subject::new(request, "", "", ""), vec![deep])
}

/// Whether a reading failed at serde_json's nesting limit.
pub(crate) fn is_too_deep(error: &serde_json::Error) -> bool {
    error.to_string().starts_with("recursion limit exceeded")
}

/// Judges the request's `object` as read ([`read_object`]); `manifest` is its last-applied
/// annotation already read by the caller (with [`json::read`] whole, as [`last_applied`] reads
/// it), if it was. A built-in kind (a CRD) is walked through `beside` ([`Beside`]).
pub(crate) fn judge<'a>(
    request: &Request<'_>,
    object: &'a Node<'a>,
    manifest: Option<&'a Result<Node<'a>, serde_json::Error>>,
    settings: &Settings,
    cluster: &dyn Cluster,
    beside: &mut dyn Beside,
) -> Result<Report, Malformed> {
    if object.as_object().is_none() {
        return Err(Malformed::new("the request's object is not a JSON object"));
    }
    let metadata = object.get("metadata").filter(|m| m.as_object().is_some());
    let meta = |key: &str| metadata.and_then(|m| m.get(key)).and_then(Node::as_str).unwrap_or("");
    let subject = Subject::new(request, meta("name"), meta("generateName"), meta("namespace"));
    // `kubectl apply` refuses an object without a name: one with only `generateName` is always
    // created (`kubectl create`), never applied, so nothing `kubectl apply` shows concerns it.
    let create_only = meta("name").is_empty() && !meta("generateName").is_empty();
    let identity = Identity::of(object, request);

    // The manifest to judge, and the live object when there is one.
    let recorded;
    let (applied, live) = if request.is_update() || is_live(metadata) {
        match last_applied(metadata, &identity, meta("name"), manifest) {
            Ok(Some(manifest)) => {
                recorded = manifest;
                (&*recorded, Live::Has(object))
            }
            Ok(None) => return Ok(Report::new(subject, Vec::new())),
            Err(problem) => {
                let text = format!("the last-applied-configuration annotation {problem}.");
                let unreadable = Finding::warn(
                    "lastAppliedUnreadable",
                    format!("metadata.annotations[{LAST_APPLIED}]"),
                    text.clone(),
                    text,
                );
                return Ok(Report::new(subject, vec![unreadable]));
            }
        }
    } else {
        (object, Live::Unknown)
    };
    let walks_last_applied = !std::ptr::eq(applied, object);
    let Some(applied_map) = applied.as_object() else {
        return Ok(Report::new(subject, Vec::new()));
    };

    let class = identity.class();
    let mut extra = Vec::new();
    let drifts = match (class, identity.api_type) {
        (Class::Custom, _) => {
            let crd = if needs_schema(applied_map, live) {
                read_crd(request, &identity, cluster).unwrap_or_else(|problem| {
                    let text = format!(
                        "its CRD could not be read ({}), so fields its schema prunes were not looked for",
                        elide(&problem, DETAIL_CHARS)
                    );
                    extra.push(Finding::warn("schemaUnavailable", "", text.clone(), text));
                    None
                })
            } else {
                None
            };
            let schema = crd.as_deref().map(Pruning::schema);
            let mut walker = Walker::new(class, schema)
                .of_kind(&identity.group, &identity.version, &identity.kind, settings.minor())
                .cluster_scoped(crd.as_deref().is_some_and(|crd| crd.cluster_scoped));
            walker.custom_root(applied_map, live);
            walker.drifts
        }
        (_, Some(root)) => {
            let mut drifts = Vec::new();
            beside.walk(applied, walks_last_applied, root, &mut |keys| {
                let mut walker = Walker::new(class, None)
                    .of_kind(&identity.group, &identity.version, &identity.kind, settings.minor())
                    // Reborrowed for as long as the walk, which borrows the identity too.
                    .with_keys(keys.map(|keys| -> &mut dyn Keys { keys }));
                walker.typed_root(applied_map, live, root);
                drifts = std::mem::take(&mut walker.drifts);
            });
            drifts
        }
        (_, None) => Vec::new(),
    };
    let mut report = report(subject, &identity, drifts, settings, create_only);
    report.findings.extend(extra);
    Ok(report)
}

/// The object's apiVersion and kind, and what they make of it.
struct Identity {
    group: String,
    version: String,
    kind: String,
    api_type: Option<crate::generated::ApiType>,
}

impl Identity {
    fn of(object: &Node<'_>, request: &Request<'_>) -> Identity {
        let text = |key: &str| object.get(key).and_then(Node::as_str).filter(|s| !s.is_empty());
        let (group, version) = match text("apiVersion") {
            Some(api_version) => match api_version.split_once('/') {
                Some((group, version)) => (group.to_string(), version.to_string()),
                None => (String::new(), api_version.to_string()),
            },
            None => (request.kind.group.to_string(), request.kind.version.to_string()),
        };
        let kind = text("kind").map_or_else(|| request.kind.kind.to_string(), str::to_string);
        let api_type = api_type_of(&group, &version, &kind);
        Identity {
            group,
            version,
            kind,
            api_type,
        }
    }

    fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    fn class(&self) -> Class {
        match self.api_type {
            None => Class::Custom,
            // Typed on the server, but not in client-go's scheme: compared as JSON.
            Some(_) if matches!(self.group.as_str(), "apiextensions.k8s.io" | "apiregistration.k8s.io") => {
                Class::Untyped
            }
            Some(_) => Class::Typed,
        }
    }
}

/// Reads a last-applied annotation's text as this check does: whole, with only serde_json's
/// own nesting limit.
pub(crate) fn read_last_applied(text: &str) -> Result<Node<'_>, serde_json::Error> {
    json::read(text, json::Everything, usize::MAX)
}

/// Whether the object is one the API server stored (or is storing): it has a `uid`, a
/// `resourceVersion` or a creation time, which a manifest never has.
pub(crate) fn is_live(metadata: Option<&Node<'_>>) -> bool {
    let Some(metadata) = metadata else {
        return false;
    };
    let set = |key: &str| metadata.get(key).and_then(Node::as_str).is_some_and(|s| !s.is_empty());
    set("uid") || set("resourceVersion") || set("creationTimestamp")
}

/// The manifest recorded in the last-applied annotation, if there is one, read with the same
/// reader as the object, borrowing from the annotation's text; `Err` says why it cannot be
/// compared with the object.
fn last_applied<'a>(
    metadata: Option<&'a Node<'a>>,
    identity: &Identity,
    name: &str,
    read: Option<&'a Result<Node<'a>, serde_json::Error>>,
) -> Result<Option<Cow<'a, Node<'a>>>, String> {
    let Some(annotation) = metadata
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(LAST_APPLIED))
    else {
        return Ok(None);
    };
    let Some(text) = annotation.as_str() else {
        return Err("is not a string; the object was not compared with it".into());
    };
    let unreadable = |e: &serde_json::Error| {
        format!(
            "is not JSON ({}); the object was not compared with it (the next `kubectl apply` rewrites it)",
            elide(&e.to_string(), DETAIL_CHARS)
        )
    };
    let manifest = match read {
        Some(Ok(manifest)) => Cow::Borrowed(manifest),
        Some(Err(e)) => return Err(unreadable(e)),
        None => Cow::Owned(read_last_applied(text).map_err(|e| unreadable(&e))?),
    };
    let field = |key: &str| manifest.get(key).and_then(Node::as_str).unwrap_or("").to_string();
    let (api_version, kind) = (field("apiVersion"), field("kind"));
    if kind != identity.kind || api_version != identity.api_version() {
        return Err(format!(
            "records {} {}, not {} {}; the object was not compared with it",
            elide(if kind.is_empty() { "(no kind)" } else { &kind }, DETAIL_CHARS / 2),
            elide(
                if api_version.is_empty() {
                    "(no apiVersion)"
                } else {
                    &api_version
                },
                DETAIL_CHARS / 2
            ),
            identity.kind,
            identity.api_version()
        ));
    }
    let recorded = manifest.at(&["metadata", "name"]).and_then(Node::as_str).unwrap_or("");
    if !recorded.is_empty() && recorded != name {
        return Err(format!(
            "records the manifest of {}, not of this object; the object was not compared with it",
            elide(&quote(recorded), DETAIL_CHARS)
        ));
    }
    Ok(Some(manifest))
}

/// Whether a custom resource has anything its CRD's schema could prune: with a live object,
/// something of last-applied outside `apiVersion`, `kind`, `metadata` and `status` that the live
/// object does not hold as applied; for a manifest, any such field.
fn needs_schema(applied: walk::Entries<'_, '_>, live: Live<'_>) -> bool {
    Members::of(applied)
        .iter()
        .filter(|(key, _)| !matches!(*key, "apiVersion" | "kind" | "metadata" | "status"))
        .any(|(key, value)| match live {
            Live::Has(object @ Node::Object(_)) => !object.get(key).is_some_and(|have| holds(have, value)),
            _ => true,
        })
}

/// Whether `live` holds everything of `applied` as applied (objects may hold more keys).
fn holds(live: &Node<'_>, applied: &Node<'_>) -> bool {
    match (live, applied) {
        (Node::Object(_), Node::Object(want)) => Members::of(want)
            .iter()
            .all(|(k, v)| live.get(k).is_some_and(|h| holds(h, v))),
        (Node::Array(have), Node::Array(want)) => {
            have.len() == want.len() && have.iter().zip(want).all(|(h, w)| holds(h, w))
        }
        (Node::Object(_) | Node::Array(_), _) | (_, Node::Object(_) | Node::Array(_)) => false,
        _ => walk::same_scalar(live, applied),
    }
}

/// What a CRD prunes of one of its versions: the structural schema reduced to the keys the walk
/// reads ([`Slim`]), or nothing when the CRD keeps unknown fields everywhere
/// (`spec.preserveUnknownFields: true`, a v1beta1 leftover) or has no schema for the version.
#[derive(Debug)]
struct Pruning {
    /// The version's `openAPIV3Schema`, slimmed; `None`: everything is kept.
    root: Option<Node<'static>>,
    /// Whether the version has the status subresource.
    status_subresource: bool,
    /// Whether the CRD's `spec.scope` is `Cluster`: the API server clears its objects' namespace.
    cluster_scoped: bool,
}

/// The schema of a CRD that keeps every field.
static KEEP_ALL: std::sync::LazyLock<Node<'static>> = std::sync::LazyLock::new(|| {
    Node::Object(vec![(
        Cow::Borrowed("x-kubernetes-preserve-unknown-fields"),
        Node::Bool(true),
    )])
});

impl Pruning {
    /// What the CRD answered as `text` prunes of `version`; `Err` when the text is not JSON.
    fn read(text: &str, version: &str) -> Result<Pruning, serde_json::Error> {
        let Slim(object) = Slim::read(text)?;
        Ok(Pruning::of(object, version))
    }

    /// What the CRD `object` ([`Slim`], as read) prunes of `version`.
    fn of(mut object: Node<'static>, version: &str) -> Pruning {
        let cluster_scoped = object.at(&["spec", "scope"]).and_then(Node::as_str) == Some("Cluster");
        let keep_all = Pruning {
            root: None,
            status_subresource: false,
            cluster_scoped,
        };
        let Some(mut spec) = take(&mut object, "spec") else {
            return keep_all;
        };
        if matches!(spec.get("preserveUnknownFields"), Some(Node::Bool(true))) {
            return keep_all;
        }
        let Some(Node::Array(versions)) = take(&mut spec, "versions") else {
            return keep_all;
        };
        let entry = versions
            .into_iter()
            .find(|v| v.get("name").and_then(Node::as_str) == Some(version));
        let Some(mut entry) = entry else {
            return keep_all;
        };
        let status_subresource = entry.at(&["subresources", "status"]).is_some_and(|s| !s.is_null());
        match take(&mut entry, "schema").and_then(|mut schema| take(&mut schema, "openAPIV3Schema")) {
            Some(root) => Pruning {
                root: Some(root),
                status_subresource,
                cluster_scoped,
            },
            None => keep_all,
        }
    }

    /// The schema as the walk reads it.
    fn schema(&self) -> CrdSchema<'_> {
        CrdSchema {
            root: self.root.as_ref().unwrap_or(&KEEP_ALL),
            status_subresource: self.status_subresource,
        }
    }
}

/// The value of `key` in an object (the last one, as [`Node::get`] finds it), taken out of it.
fn take<'j>(object: &mut Node<'j>, key: &str) -> Option<Node<'j>> {
    let Node::Object(entries) = object else {
        return None;
    };
    let (_, value) = entries.iter_mut().rev().find(|(k, _)| k == key)?;
    Some(std::mem::replace(value, Node::Null))
}

/// A CRD read into only what [`Pruning`] and the walk's custom-resource part read: the members
/// named in [`Slim::KEPT`] at every level (a `default` kept as `true`: only its presence
/// counts) and every member of a `properties` map. Descriptions, validations and examples, most
/// of a CRD's text, are skipped as they are read, never built: Argo Workflows' Workflow CRD
/// (1.2 MB as JSON) reads into 190 KB. It is kept beyond the answer's text, so it owns its
/// strings, and its objects are sorted ([`json::sort_members`]), so the walk looks a property up
/// without sorting it again.
struct Slim(Node<'static>);

impl Slim {
    /// The members kept at every level: the CRD's path to its schemas, and what the walk reads
    /// of a schema node.
    const KEPT: &[&str] = &[
        "spec",
        "preserveUnknownFields",
        "scope",
        "versions",
        "name",
        "subresources",
        "status",
        "schema",
        "openAPIV3Schema",
        "properties",
        "additionalProperties",
        "items",
        "nullable",
        "default",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
    ];
}

/// What [`Slim`] reads of a CRD ([`json::Grammar`]): in a node, the members of [`Slim::KEPT`]
/// (a `default` only stepped over: its presence is what counts); in a `properties` map, every
/// member (a property's name may be anything), each a node.
#[derive(Clone, Copy)]
enum SlimMode {
    /// Only the members of [`Slim::KEPT`].
    Node,
    /// Every member.
    Properties,
}

impl json::Grammar for SlimMode {
    fn member(self, key: &str) -> json::Read<Self> {
        match self {
            SlimMode::Properties => json::Read::Parse(SlimMode::Node),
            SlimMode::Node => match key {
                "properties" => json::Read::Parse(SlimMode::Properties),
                "default" => json::Read::Skip,
                member if Slim::KEPT.contains(&member) => json::Read::Parse(SlimMode::Node),
                _ => json::Read::Skip,
            },
        }
    }

    fn element(self) -> json::Read<Self> {
        json::Read::Parse(SlimMode::Node)
    }
}

impl Slim {
    /// Reads a CRD's JSON text ([`crate::json`] with [`SlimMode`]); only serde_json's own
    /// nesting limit bounds it, as for any object a check reads.
    fn read(text: &str) -> Result<Slim, serde_json::Error> {
        json::read(text, SlimMode::Node, usize::MAX).map(|node| Slim(slim_node(node)))
    }
}

/// The node [`Slim`] keeps of a read node: skipped members dropped, a skipped `default` kept as
/// `true`, strings owned, objects sorted.
fn slim_node(node: Node<'_>) -> Node<'static> {
    match node {
        Node::Object(entries) => {
            let mut kept: Vec<_> = entries
                .into_iter()
                .filter_map(|(key, value)| {
                    let value = match value {
                        Node::Skipped if key == "default" => Node::Bool(true),
                        Node::Skipped => return None,
                        value => slim_node(value),
                    };
                    Some((Cow::Owned(key.into_owned()), value))
                })
                .collect();
            json::sort_members(&mut kept);
            Node::Object(kept)
        }
        Node::Array(items) => Node::Array(items.into_iter().map(slim_node).collect()),
        Node::Str(text) => Node::Str(Cow::Owned(text.into_owned())),
        Node::Bool(value) => Node::Bool(value),
        // The walk reads no number of a schema (its flags are booleans).
        Node::Null | Node::U64(_) | Node::I64(_) | Node::F64(_) | Node::Raw(_) | Node::Skipped | Node::TooDeep => {
            Node::Null
        }
    }
}

/// How many CRD versions' [`Pruning`]s a module instance keeps: a tree of custom resources
/// (Argo Workflows' examples: Workflows, WorkflowTemplates, CronWorkflows,
/// ClusterWorkflowTemplates) goes back and forth between a few CRDs.
const KEPT_SCHEMAS: usize = 4;

/// A CRD version's [`Pruning`] and what it was computed from: the length and two digests of the
/// host's answer, and the version.
type KeptSchema = ((usize, u64, u64, String), Rc<Pruning>);

thread_local! {
    /// The CRD versions read last, newest first (at most [`KEPT_SCHEMAS`]). An engine that
    /// keeps one module instance for many requests (`syncguard scan`, kwctl's and the audit
    /// scanner's runs over many objects) parses each CRD once instead of once per custom
    /// resource; one that starts every evaluation afresh finds nothing here and pays one parse.
    static SCHEMAS: RefCell<Vec<KeptSchema>> = const { RefCell::new(Vec::new()) };
}

/// The key of a CRD answer `text` for `version`. Two 64-bit foldhash digests of the text under
/// different seeds (a few GB/s, against a parse of tens of MB/s): a wrong reuse needs both to
/// collide for two texts of the same length, and whoever can write a CRD to try can change its
/// schema anyway.
fn schema_key(text: &str, version: &str) -> (usize, u64, u64, String) {
    use std::hash::BuildHasher;
    let digest = |seed: u64| foldhash::fast::FixedState::with_seed(seed).hash_one(text.as_bytes());
    (
        text.len(),
        digest(0x5379_6e63),
        digest(0x4472_6966),
        version.to_string(),
    )
}

/// What the CRD answered as `text` prunes of `version`, from [`SCHEMAS`] when that answer was
/// read before.
fn pruning_of(text: &str, version: &str, name: &str) -> Result<Rc<Pruning>, String> {
    let key = schema_key(text, version);
    let found = SCHEMAS.with_borrow_mut(|kept| {
        let at = kept.iter().position(|(k, _)| *k == key)?;
        let entry = kept.remove(at);
        let pruning = entry.1.clone();
        kept.insert(0, entry);
        Some(pruning)
    });
    if let Some(pruning) = found {
        return Ok(pruning);
    }
    let pruning = Pruning::read(text, version).map_err(|e| format!("the answer for {name} is not JSON: {e}"))?;
    let pruning = Rc::new(pruning);
    SCHEMAS.with_borrow_mut(|kept| {
        kept.insert(0, (key, pruning.clone()));
        kept.truncate(KEPT_SCHEMAS);
    });
    Ok(pruning)
}

/// Reads what the custom resource's CRD (named by the request's resource:
/// [`cluster::crd_of_resource`]) prunes of its version; `Ok(None)` when the CRD does not exist or
/// the request names no resource, `Err` when the lookup failed.
fn read_crd(request: &Request<'_>, identity: &Identity, cluster: &dyn Cluster) -> Result<Option<Rc<Pruning>>, String> {
    let resource = &request.resource;
    if resource.resource.is_empty() || resource.group != identity.group.as_str() {
        return Ok(None);
    }
    match cluster::crd_of_resource(&resource.resource, &identity.group, &identity.kind, cluster) {
        Ok((name, text)) => pruning_of(&text, &identity.version, &name).map(Some),
        Err(CrdMissing::NotFound { .. } | CrdMissing::NoneOfKind) => Ok(None),
        Err(CrdMissing::Unlisted(e)) => Err(format!(
            "the CRDs could not be listed to find the one of {} in {}: {e}",
            identity.kind, identity.group
        )),
        Err(CrdMissing::ListNotJson(e)) => Err(format!("the cluster's list of CRDs is not JSON: {e}")),
        Err(CrdMissing::Unreadable { error, .. }) => Err(error),
    }
}

// ---------------------------------------------------------------------------------------------
// Findings.

/// The findings of the drifting paths: one per path (the first cause the walk found), in path
/// order, those of ignored causes and paths left out, and only those a tool in use reports.
/// The findings of `drifts` for the tools in use (without `kubectl` for a `create_only` object,
/// which `kubectl apply` never sees).
fn report(
    subject: Subject,
    identity: &Identity,
    mut drifts: Vec<Drift>,
    settings: &Settings,
    create_only: bool,
) -> Report {
    drifts.sort_by(|a, b| natural_cmp(&a.path.api(), &b.path.api()));
    drifts.dedup_by(|b, a| a.path == b.path);
    let unnormalised = identity.class() == Class::Typed && drifts.iter().any(|d| d.cause == Cause::UnknownField);
    let ignored: Vec<Pattern> = settings
        .ignore_paths
        .iter()
        .filter(|entry| entry.matches(&identity.group, &identity.kind))
        .flat_map(|entry| entry.paths.iter().filter_map(|p| Pattern::parse(p).ok()))
        .collect();
    let mut findings = Vec::new();
    let mut silence: BTreeMap<Tool, Vec<String>> = BTreeMap::new();
    // What each tool does with at least one of the findings, which the header sums up.
    let mut seen: Vec<(Tool, Effect)> = Vec::new();
    for drift in &drifts {
        let action = match settings.action(drift.cause) {
            Action::Ignore => continue,
            Action::Reject => RejectOrWarn::Reject,
            Action::Warn => RejectOrWarn::Warn,
        };
        if ignored.iter().any(|pattern| drift.path.is_under(pattern)) {
            continue;
        }
        let facts = Facts {
            class: identity.class(),
            null: drift.null,
            own_annotations: drift.path.api() == "metadata.annotations",
            unnormalised,
        };
        let effects: Vec<(Tool, Effect)> = settings
            .tools
            .iter()
            .filter(|&&tool| !(create_only && tool == Tool::Kubectl))
            .filter_map(|&tool| cause::effect(tool, drift.cause, facts).map(|e| (tool, e)))
            .collect();
        if effects.is_empty() {
            continue;
        }
        for effect in &effects {
            if !seen.contains(effect) {
                seen.push(*effect);
            }
        }
        for (tool, effect) in &effects {
            if *effect == Effect::OutOfSync {
                silence.entry(*tool).or_default().push(drift.path.pointer());
            }
        }
        findings.push(finding(drift, action, &effects));
    }
    let total = findings.len();
    let mut report = Report::new(subject, findings);
    if total > 0 {
        let paths = if total == 1 { "path" } else { "paths" };
        let consequence = consequence(&seen);
        report.list = Some(List {
            rules: LISTED,
            limit: settings.max_findings as usize,
            intro: format!("{total} {paths} the cluster does not keep as applied, so {consequence}; fix the manifest:"),
            intro_brief: format!("{total} {paths} the cluster does not keep as applied; {consequence}."),
            more: "drifting paths".into(),
            more_hint: "`syncguard scan` lists them all".into(),
        });
        report.notes = ignore_notes(identity, &report.subject, &silence);
    }
    report
}

/// What the tools do with the object, for the header of its findings: the GitOps tools that
/// never see it in sync, else what `kubectl apply` does (the only tool that shows them). It
/// names only tools that show at least one finding, so it never says more than they do.
fn consequence(seen: &[(Tool, Effect)]) -> String {
    let gitops: Vec<String> = Tool::GITOPS
        .iter()
        .filter(|tool| seen.iter().any(|(t, _)| t == *tool))
        .map(|tool| tool.name().to_string())
        .collect();
    if !gitops.is_empty() {
        let verb = if gitops.len() == 1 { "sees" } else { "see" };
        return format!("{} never {verb} the object in sync", join_and(&gitops));
    }
    if seen.contains(&(Tool::Kubectl, Effect::Fails)) {
        "`kubectl apply` refuses it (strict field validation)".to_string()
    } else {
        "`kubectl apply` says `configured` on every run (no GitOps tool in use shows it)".to_string()
    }
}

/// One drifting path as a finding.
fn finding(drift: &Drift, action: RejectOrWarn, effects: &[(Tool, Effect)]) -> Finding {
    let applied = &drift.applied;
    let stored = match &drift.stored {
        Stored::Nothing => None,
        Stored::Value(text) => Some(text.as_str()),
    };
    let what = match (drift.cause, stored) {
        (Cause::UnknownField, _) => "unknown field: refused under strict field validation, else dropped".to_string(),
        (Cause::PrunedField, _) => {
            "not in the CRD's schema: refused under strict field validation, else pruned".to_string()
        }
        (Cause::StringData, _) => "merged into `data` by the API server, never stored".to_string(),
        (Cause::Base64, stored) => {
            let why = drift.hint.as_deref().unwrap_or("not canonical");
            match stored {
                Some(stored) if stored != walk::HIDDEN => {
                    format!("base64 the API server writes back otherwise ({why}): stored as `{stored}`")
                }
                _ => format!("base64 the API server writes back otherwise ({why})"),
            }
        }
        (Cause::Status, _) => "status is not written with the object".to_string(),
        (Cause::PreserveUnknownFields, _) => "`false` is the default, dropped by the API server".to_string(),
        (Cause::Namespace, _) => format!("`{applied}` is cleared by the API server: the kind is cluster-scoped"),
        (Cause::Defaulted, Some(stored)) => format!(
            "`{applied}` is stored as `{stored}` by the API server's defaults ({})",
            drift.hint.as_deref().unwrap_or("SetDefaults")
        ),
        (Cause::Defaulted, None) => format!(
            "dropped by the API server's defaults ({})",
            drift.hint.as_deref().unwrap_or("SetDefaults")
        ),
        (Cause::Mutated, None) => format!("applied `{applied}`, then removed in the cluster"),
        (Cause::Mutated, Some(stored)) => format!("applied `{applied}`, the cluster holds `{stored}`"),
        (_, None) => format!("`{applied}` is dropped by the API server"),
        (_, Some(stored)) => format!("`{applied}` is stored as `{stored}`"),
    };
    let (fix_text, fix) = match (drift.cause, &drift.hint, stored) {
        (Cause::Quantity, _, Some(stored)) => (format!("write {stored}"), Some(Fix::Replace(stored.to_string()))),
        (Cause::Base64, _, Some(stored)) if stored != walk::HIDDEN => {
            (format!("write {stored}"), Some(Fix::Replace(stored.to_string())))
        }
        (Cause::Base64, _, _) => (
            "write the value on one line, as `base64 -w0` does".to_string(),
            None,
        ),
        (Cause::StringData, _, _) => (
            "move its values into `data`, base64-encoded (`kubectl create secret --dry-run=client -o yaml` writes them)"
                .to_string(),
            None,
        ),
        (Cause::Mutated, _, _) => (
            "keep the cluster's value in the manifest if it is meant to stay, or ignore the path in the GitOps tool"
                .to_string(),
            None,
        ),
        (Cause::UnknownField, Some(hint), _) => (format!("fix its name ({hint}) or remove it"), None),
        (Cause::PrunedField, Some(hint), _) => (format!("{hint}; or remove it"), Some(Fix::Delete)),
        (Cause::Status, _, _) => ("remove the status stanza".to_string(), Some(Fix::Delete)),
        (Cause::Defaulted, _, Some(stored)) => (format!("write {stored}"), Some(Fix::Replace(stored.to_string()))),
        (Cause::Defaulted, _, None) => (
            "remove it, or set `sessionAffinity: ClientIP` if client affinity is meant".to_string(),
            Some(Fix::Delete),
        ),
        _ => ("remove it from the manifest".to_string(), Some(Fix::Delete)),
    };
    let fix = match drift.cause {
        Cause::UnknownField => Some(Fix::Delete),
        _ => fix,
    };
    let names: Vec<String> = effects.iter().map(|(tool, _)| tool.name().to_string()).collect();
    let said: Vec<String> = effects
        .iter()
        .map(|(tool, effect)| cause::describe(*tool, *effect).to_string())
        .fold(Vec::new(), |mut all, sentence| {
            if !all.contains(&sentence) {
                all.push(sentence);
            }
            all
        });
    let path = drift.path.api();
    let brief = Parts::default()
        .elidable(path.clone())
        .fixed(format!(": {what} ({})", names.join(", ")));
    let text = Parts::default()
        .elidable(path.clone())
        .fixed(format!(": {what}; {}. Fix: {fix_text}.", join_and(&said)));
    Finding::new(drift.cause.rule(), action, path, text, brief).with_fix(fix)
}

/// For each tool in use that reports the object OutOfSync: the ignore entry that silences
/// exactly those paths, where the manifest cannot change (a third-party chart).
fn ignore_notes(identity: &Identity, subject: &Subject, silence: &BTreeMap<Tool, Vec<String>>) -> Vec<String> {
    let (name, namespace) = match subject.label.split_once('/') {
        Some((namespace, name)) => (name, Some(namespace)),
        None => (subject.label.as_str(), None),
    };
    let named = |mut entry: String| {
        if name != crate::finding::UNNAMED && !name.ends_with("<generated>") {
            entry.push_str(&format!(", name: {name}"));
            if let Some(namespace) = namespace {
                entry.push_str(&format!(", namespace: {namespace}"));
            }
        }
        entry
    };
    let list = |paths: &[String]| paths.join(", ");
    let group = if identity.group.is_empty() {
        "\"\""
    } else {
        &identity.group
    };
    let mut notes = Vec::new();
    for (tool, paths) in silence {
        let note = match tool {
            Tool::ArgoCd => format!(
                "Argo CD, where the manifest cannot change: `ignoreDifferences: [{{{}, jsonPointers: [{}]}}]`.",
                named(format!("group: {group}, kind: {}", identity.kind)),
                list(paths)
            ),
            Tool::Fleet => format!(
                "Fleet: `diff: {{comparePatches: [{{{}, jsonPointers: [{}]}}]}}` in fleet.yaml.",
                named(format!(
                    "apiVersion: {}, kind: {}",
                    identity.api_version(),
                    identity.kind
                )),
                list(paths)
            ),
            Tool::Flux => format!(
                "Flux: `ignore` (Kustomization) or `driftDetection.ignore` (HelmRelease): `[{{paths: [{}], target: {{{}}}}}]`.",
                list(paths),
                named(format!("group: {group}, kind: {}", identity.kind))
            ),
            Tool::Kubectl => continue,
        };
        notes.push(note);
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{decode_response, handle_validate};
    use crate::cluster::NoCluster;

    /// An object nested deeper than serde_json reads (kwctl and policy-server refuse such a
    /// request before a module sees it, so no fixture can carry it): one warning, unchecked.
    #[test]
    fn an_object_nested_too_deep_gets_one_warning() {
        let deep = format!("{}{}", "{\"a\":".repeat(200), "1".to_string() + &"}".repeat(200));
        let payload = format!(
            r#"{{"request":{{"uid":"1","kind":{{"group":"example.com","version":"v1","kind":"Widget"}},"resource":{{"group":"example.com","version":"v1","resource":"widgets"}},"operation":"CREATE","userInfo":{{}},"namespace":"default","name":"deep","object":{{"apiVersion":"example.com/v1","kind":"Widget","metadata":{{"name":"deep","namespace":"default"}},"spec":{deep}}}}},"settings":{{}}}}"#
        );
        let response = decode_response(&handle_validate::<SyncDrift>(payload.as_bytes(), &NoCluster)).unwrap();
        assert!(response.accepted);
        assert_eq!(
            response.warnings.unwrap_or_default(),
            [
                "Widget default/deep: the object nests deeper than 128 levels of JSON; it was not checked. See https://github.com/syncguard/syncguard/tree/main/policies/sync-drift#where-it-looks"
            ]
        );
    }

    /// Kubewarden's audit scanner names a custom resource's resource by its kind: the CRD is
    /// still found (by its likely plural, or in the list of CRDs when it was named by hand), so a
    /// field the schema declares and the cluster removed is not called pruned.
    #[test]
    fn an_audited_custom_resource_is_judged_against_its_crd() {
        use crate::cluster::Objects;
        let crd = |name: &str| {
            serde_json::json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
              "metadata": {"name": name},
              "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"kind": "Widget", "plural": name.split('.').next().unwrap()},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                  "type": "object", "properties": {"spec": {"type": "object", "properties": {"size": {"type": "string"}}}}}}}]}})
        };
        let applied = r#"{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\",\"namespace\":\"default\"},\"spec\":{\"colour\":\"red\",\"size\":\"s\"}}"#;
        let payload = format!(
            r#"{{"request":{{"uid":"1","kind":{{"group":"example.com","version":"v1","kind":"Widget"}},"resource":{{"group":"example.com","version":"v1","resource":"Widget"}},"operation":"CREATE","userInfo":{{}},"namespace":"default","name":"w","object":{{"apiVersion":"example.com/v1","kind":"Widget","metadata":{{"annotations":{{"kubectl.kubernetes.io/last-applied-configuration":"{applied}"}},"creationTimestamp":"2026-01-01T00:00:00Z","name":"w","namespace":"default","resourceVersion":"5","uid":"u1"}},"spec":{{}}}}}},"settings":{{}}}}"#
        );
        for name in ["widgets.example.com", "wdgts.example.com"] {
            let cluster = Objects(vec![crd(name)]);
            let response = decode_response(&handle_validate::<SyncDrift>(payload.as_bytes(), &cluster)).unwrap();
            let warnings = response.warnings.unwrap_or_default();
            assert!(
                warnings
                    .iter()
                    .any(|w| w.contains("spec.colour: not in the CRD's schema"))
                    && warnings
                        .iter()
                        .any(|w| w.contains("spec.size: applied `\"s\"`, then removed in the cluster")),
                "{name}: {warnings:?}"
            );
        }
        let response = decode_response(&handle_validate::<SyncDrift>(payload.as_bytes(), &Objects(vec![]))).unwrap();
        // Without the CRD every field missing from the stored object reads as pruned, the one
        // cause the schema would have told apart: what the audit said before it found the CRD.
        let warnings = response.warnings.unwrap_or_default();
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("spec.size: not in the CRD's schema")),
            "{warnings:?}"
        );
    }

    #[test]
    fn kubernetes_versions_read_as_one_minor_in_range() {
        assert_eq!(minor_of("1.34"), Some(34));
        assert_eq!(minor_of("1.16"), Some(16));
        for bad in ["1.15", "1.38", "1.034", "v1.34", "1.34.0", "1.", "1.x", "2.0", ""] {
            assert_eq!(minor_of(bad), None, "{bad}");
        }
    }

    /// The slimmed schema keeps every key the walk reads (a property named like a keyword
    /// included) and nothing else.
    #[test]
    fn a_slim_schema_keeps_what_the_walk_reads() {
        let crd = serde_json::json!({"spec": {"versions": [
            {"name": "v1", "subresources": {"status": {}}, "schema": {"openAPIV3Schema": {
                "type": "object", "description": "a widget",
                "properties": {
                    "spec": {"type": "object", "description": "long text", "required": ["size"],
                        "properties": {
                            "default": {"type": "string", "default": "x", "enum": ["x", "y"]},
                            "labels": {"type": "object", "additionalProperties": {"type": "string", "nullable": true}},
                            "any": {"type": "object", "additionalProperties": true},
                            "items": {"type": "array", "items": {"type": "object", "x-kubernetes-embedded-resource": true,
                                "x-kubernetes-preserve-unknown-fields": true, "example": {}}}
                        }}
                }}}},
            {"name": "v2"}
        ]}});
        let v1 = Pruning::read(&crd.to_string(), "v1").unwrap();
        assert!(v1.status_subresource);
        assert_eq!(
            v1.root
                .as_ref()
                .map(|root| serde_json::to_value(json::Canonical(root)).unwrap()),
            Some(serde_json::json!({"properties": {"spec": {"properties": {
                "default": {"default": true},
                "labels": {"additionalProperties": {"nullable": true}},
                "any": {"additionalProperties": true},
                "items": {"items": {"x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}
            }}}}))
        );
        // A version without a schema, or a CRD that keeps unknown fields, prunes nothing.
        for (crd, version) in [
            (&crd, "v2"),
            (&crd, "v3"),
            (
                &serde_json::json!({"spec": {"preserveUnknownFields": true, "versions": crd["spec"]["versions"]}}),
                "v1",
            ),
        ] {
            let pruning = Pruning::read(&crd.to_string(), version).unwrap();
            assert!(pruning.root.is_none() && !pruning.status_subresource, "{version}");
            assert!(std::ptr::eq(pruning.schema().root, &*KEEP_ALL));
        }
    }

    /// A CRD answer is parsed once per instance while it stays among the last few read; another
    /// text (the CRD changed) or another version is read afresh.
    #[test]
    fn a_crd_is_parsed_once_while_it_stays_kept() {
        let text = |description: &str| {
            serde_json::json!({"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": {
                "description": description, "properties": {"spec": {"type": "object"}}}}}]}})
            .to_string()
        };
        let first = pruning_of(&text("a"), "v1", "a").unwrap();
        assert!(Rc::ptr_eq(&first, &pruning_of(&text("a"), "v1", "a").unwrap()));
        assert!(!Rc::ptr_eq(&first, &pruning_of(&text("b"), "v1", "a").unwrap()));
        assert!(!Rc::ptr_eq(&first, &pruning_of(&text("a"), "v2", "a").unwrap()));
        for other in 0..KEPT_SCHEMAS {
            pruning_of(&text(&other.to_string()), "v1", "a").unwrap();
        }
        assert_eq!(SCHEMAS.with_borrow(Vec::len), KEPT_SCHEMAS);
        assert!(!Rc::ptr_eq(&first, &pruning_of(&text("a"), "v1", "a").unwrap()));
        let error = pruning_of("{", "v1", "widgets.example.com").unwrap_err();
        assert!(
            error.starts_with("the answer for widgets.example.com is not JSON: "),
            "{error}"
        );
    }
}
