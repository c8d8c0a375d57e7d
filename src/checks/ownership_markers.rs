//! ownership-markers: keep Helm and Fleet ownership metadata whole.
//!
//! Fleet deploys bundles through Helm and finds the objects of a bundle deployment by the label
//! `objectset.rio.cattle.io/hash`, whose value is wrangler's hash of the annotation
//! `objectset.rio.cattle.io/id` (plus the owner annotations, when present). When Helm's
//! takeOwnership adopted existing custom resources, they got Helm's ownership metadata but not
//! Fleet's markers, and Fleet reported them as `missing` (Fleet issue 2134). Helm in turn refuses
//! to adopt or upgrade an object whose ownership metadata is incomplete.
//!
//! What the check decides, on CREATE and UPDATE of every resource:
//! 1. **Fleet markers.** When the annotation `objectset.rio.cattle.io/id` or the label
//!    `objectset.rio.cattle.io/hash` is present, the label must equal wrangler's hash: the
//!    lowercase hex SHA-1 of the values of the annotations `objectset.rio.cattle.io/id`,
//!    `owner-gvk`, `owner-name` and `owner-namespace`, concatenated in that order with no
//!    separator, a missing annotation counting as empty. A mismatch, a missing hash label, or a
//!    hash label without the id annotation is rejected with the expected hash.
//! 2. **Helm completeness** (setting `helmCompleteness`, `reject` by default). An object with
//!    `meta.helm.sh/release-name` or `meta.helm.sh/release-namespace` must carry both and the
//!    label `app.kubernetes.io/managed-by: Helm`; the message quotes the error Helm would give.
//!    An empty annotation value is accepted (Fleet itself writes an empty release namespace for
//!    bundles without a default namespace). The label alone is accepted: `helm template`, as
//!    ArgoCD renders charts, sets it without the annotations.
//! 3. **Fleet adoption** (setting `fleetReleases`, the check's only mutation). An object whose
//!    two release annotations equal a listed release and that has neither the id annotation nor
//!    the hash label gets the id annotation (the entry's `setId`) and the matching hash label.
//!    Applied on CREATE and UPDATE (Helm adopts through updates). Its own output has both markers
//!    and so gets no patch.
//! 4. **Ownership change** (setting `ownershipChange`, `warn` by default). On UPDATE, a release
//!    name, release namespace or Fleet id going from one non-empty value to another is reported.
//!
//! Rules that keep the check cheap and safe:
//! - **Fast path.** Every marker is a key of `metadata`, so the raw JSON text of the object's
//!   `metadata` is scanned for `objectset.rio.cattle.io/` and, unless checks 2 to 4 are all off
//!   (`helmCompleteness: ignore`, `ownershipChange: ignore`, no `fleetReleases`), for
//!   `meta.helm.sh/release-`. Without them the request is accepted unparsed. Any `\u` or `\/`
//!   escape in that text also counts as a hit, because an escaped key could spell a marker
//!   without containing it literally; the API server sends canonical JSON where these keys are
//!   never escaped, so this only costs a parse. When a check before read the object whole (the
//!   all-in-one, for sync-drift), its metadata is read from that tree instead and the decoded
//!   annotation and label keys are searched. The old object is not scanned: every finding
//!   needs a marker in the new object (an ownership change needs a non-empty new value).
//! - **Only metadata is read**, with `apiVersion` and `kind`: Kubewarden sorts an object's keys,
//!   so they come first, and reading stops after `metadata`; the rest of the object, however
//!   large (a dashboard ConfigMap, a CRD's schema), is not even stepped over. `null` labels,
//!   annotations or values count as empty, as Kubernetes decodes them. Metadata of another
//!   shape (a label value that is a number, say) cannot come from the API server and is
//!   rejected with code 400. An object that may be adopted (the name of a listed release is in
//!   its metadata, Fleet's markers are not) is read once, whole, into the `serde_json::Value`
//!   whose `metadata.annotations` and `metadata.labels` the mutation edits, and the metadata
//!   view is read from that value.
//! - **Pre-existing problems on UPDATE are warnings.** When an UPDATE leaves the offending
//!   values exactly as they were in `oldObject`, findings 1 and 2 are returned as warnings
//!   instead of rejections: rejecting would block every controller that writes the object
//!   (finalizers, spec updates) for a problem the write did not cause. Background audit, which
//!   sends CREATE requests, still rejects them, so they appear in policy reports.
//! - Objects in `exemptNamespaces` (by the request's namespace), subresource requests and
//!   operations other than CREATE and UPDATE are accepted untouched.

use crate::admission::Request;
use crate::check::{Check, GroupKind, Objects};
use crate::cluster::Cluster;
use crate::finding::{Finding, Malformed, Report, RuleDoc, Subject};
use crate::k8s::Object;
use crate::rules::Rule;
use crate::settings::{Action, RejectOrWarn};
use crate::text::Parts;
use crate::text::search::{contains, has_escape};
use serde::Deserialize;
use serde_json::{Map, Value};
use sha1::{Digest, Sha1};
use std::collections::BTreeMap;

/// Annotation naming the Fleet (wrangler) object set an object belongs to.
pub const FLEET_ID: &str = "objectset.rio.cattle.io/id";
/// Annotation with the GVK of the object set's owner, part of the hash.
pub const FLEET_OWNER_GVK: &str = "objectset.rio.cattle.io/owner-gvk";
/// Annotation with the name of the object set's owner, part of the hash.
pub const FLEET_OWNER_NAME: &str = "objectset.rio.cattle.io/owner-name";
/// Annotation with the namespace of the object set's owner, part of the hash.
pub const FLEET_OWNER_NAMESPACE: &str = "objectset.rio.cattle.io/owner-namespace";
/// Label Fleet selects the objects of a set by.
pub const FLEET_HASH: &str = "objectset.rio.cattle.io/hash";
/// Annotation with the Helm release name.
pub const HELM_RELEASE_NAME: &str = "meta.helm.sh/release-name";
/// Annotation with the Helm release namespace.
pub const HELM_RELEASE_NAMESPACE: &str = "meta.helm.sh/release-namespace";
/// Label Helm requires on every object of a release.
pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
/// The value Helm requires for [`MANAGED_BY`].
pub const MANAGED_BY_HELM: &str = "Helm";

/// The annotations wrangler hashes, in hash order.
const HASH_ORDER: [&str; 4] = [FLEET_ID, FLEET_OWNER_GVK, FLEET_OWNER_NAME, FLEET_OWNER_NAMESPACE];
/// Text whose presence sends a request past the fast path when Fleet markers matter.
const FLEET_MARKER: &str = "objectset.rio.cattle.io/";
/// Text whose presence sends a request past the fast path when Helm metadata matters.
const HELM_MARKER: &str = "meta.helm.sh/release-";

/// The rules of the check's findings.
pub const FINDINGS: &[RuleDoc] = &[
    RuleDoc {
        id: "fleetMarkers",
        summary: "Fleet's object set hash label does not match the annotations it hashes",
        anchor: "what-it-checks",
    },
    RuleDoc {
        id: "helmCompleteness",
        summary: "Helm's ownership metadata is incomplete, so Helm refuses to adopt or upgrade the object",
        anchor: "what-it-checks",
    },
    RuleDoc {
        id: "ownershipChange",
        summary: "an UPDATE moves the object to another Helm release or Fleet set",
        anchor: "what-it-checks",
    },
];

/// One Helm release whose objects Fleet should own.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields, rename_all = "camelCase")]
pub struct FleetRelease {
    /// Value of `meta.helm.sh/release-name` (required, non-empty).
    pub release_name: String,
    /// Value of `meta.helm.sh/release-namespace` (required, non-empty).
    pub release_namespace: String,
    /// Fleet set id to write into `objectset.rio.cattle.io/id`, e.g.
    /// `default-<bundleDeploymentName>` (required, non-empty).
    pub set_id: String,
}

crate::admission::object_only!(FleetRelease);

/// Settings of the ownership-markers check.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Settings {
    /// Helm releases whose objects get Fleet's markers when they lack them. Default: empty
    /// (the check never mutates).
    pub fleet_releases: Vec<FleetRelease>,
    /// What to do when an UPDATE moves an object to another release or Fleet set. Default:
    /// `warn`.
    pub ownership_change: Action,
    /// What to do with incomplete Helm ownership metadata. Default: `reject`.
    pub helm_completeness: Action,
    /// Namespaces whose objects are accepted untouched. Default: empty.
    pub exempt_namespaces: Vec<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            fleet_releases: Vec::new(),
            ownership_change: Action::Warn,
            helm_completeness: Action::Reject,
            exempt_namespaces: Vec::new(),
        }
    }
}

/// The ownership-markers check.
pub struct OwnershipMarkers;

impl Check for OwnershipMarkers {
    type Settings = Settings;
    const NAME: &'static str = "ownership-markers";
    const SETTINGS_KEY: &'static str = "ownershipMarkers";
    const RULES: &'static [Rule] = crate::rules::OWNERSHIP_MARKERS;
    const KINDS: &'static [GroupKind] = &[];
    const FINDINGS: &'static [RuleDoc] = FINDINGS;

    fn validate_settings(settings: &Settings) -> Result<(), String> {
        let mut seen: Vec<(&str, &str)> = Vec::new();
        for (i, release) in settings.fleet_releases.iter().enumerate() {
            for (key, value) in [
                ("releaseName", &release.release_name),
                ("releaseNamespace", &release.release_namespace),
                ("setId", &release.set_id),
            ] {
                if value.trim().is_empty() {
                    return Err(format!("`fleetReleases[{i}].{key}` must not be empty"));
                }
            }
            let key = (release.release_name.as_str(), release.release_namespace.as_str());
            if let Some(first) = seen.iter().position(|k| *k == key) {
                return Err(format!(
                    "`fleetReleases[{i}]` repeats release {}/{} of `fleetReleases[{first}]`; \
                     a release belongs to one Fleet set",
                    release.release_namespace, release.release_name
                ));
            }
            seen.push(key);
        }
        for (i, namespace) in settings.exempt_namespaces.iter().enumerate() {
            if namespace.trim().is_empty() {
                return Err(format!("`exemptNamespaces[{i}]` must not be empty"));
            }
        }
        Ok(())
    }

    fn check(
        request: &Request<'_>,
        objects: &Objects<'_>,
        settings: &Settings,
        _cluster: &dyn Cluster,
    ) -> Result<Report, Malformed> {
        evaluate(request, objects, settings)
    }
}

/// Lowercase hex SHA-1 of `data`, as wrangler writes its object set hash.
pub fn sha1_hex(data: &[u8]) -> String {
    // Two digits a byte from a table, not a `format!` (and a string) per byte: this runs on
    // every write of an object with Fleet's markers (every k3s add-on's).
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut hex = String::with_capacity(40);
    for byte in Sha1::digest(data) {
        hex.push(char::from(DIGITS[usize::from(byte >> 4)]));
        hex.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
    hex
}

/// Wrangler's object set hash of an object's annotations (see the module doc).
pub fn objectset_hash(annotations: &BTreeMap<String, String>) -> String {
    let mut text = String::new();
    for key in HASH_ORDER {
        text.push_str(annotations.get(key).map(String::as_str).unwrap_or(""));
    }
    sha1_hex(text.as_bytes())
}

/// Whether the raw text of an object's metadata may hold a marker the settings make relevant
/// (the fast path's test; see the module doc).
pub fn may_hold_markers(text: &str, settings: &Settings) -> bool {
    let helm_matters = settings.helm_completeness != Action::Ignore
        || settings.ownership_change != Action::Ignore
        || !settings.fleet_releases.is_empty();
    contains(text, FLEET_MARKER) || (helm_matters && contains(text, HELM_MARKER)) || has_escape(text, b"u/")
}

/// Whether an annotation or label key holds a marker the settings make relevant: the test of
/// [`may_hold_markers`] on metadata already read (the keys decoded, so no escape can hide one).
fn keys_hold_markers(metadata: &crate::k8s::ObjectMeta, settings: &Settings) -> bool {
    let helm_matters = settings.helm_completeness != Action::Ignore
        || settings.ownership_change != Action::Ignore
        || !settings.fleet_releases.is_empty();
    let keys = || metadata.annotations.keys().chain(metadata.labels.keys());
    keys().any(|key| contains(key, FLEET_MARKER)) || (helm_matters && keys().any(|key| contains(key, HELM_MARKER)))
}

/// The metadata of one object as the checks use it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Meta {
    kind: String,
    name: String,
    namespace: String,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
}

impl Meta {
    fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations.get(key).map(String::as_str)
    }

    fn label(&self, key: &str) -> Option<&str> {
        self.labels.get(key).map(String::as_str)
    }

    /// The values of Fleet's markers and hashed annotations, for "unchanged" comparisons.
    fn fleet_values(&self) -> [Option<&str>; 5] {
        [
            self.annotation(FLEET_ID),
            self.annotation(FLEET_OWNER_GVK),
            self.annotation(FLEET_OWNER_NAME),
            self.annotation(FLEET_OWNER_NAMESPACE),
            self.label(FLEET_HASH),
        ]
    }

    /// The values of Helm's ownership metadata, for "unchanged" comparisons.
    fn helm_values(&self) -> [Option<&str>; 3] {
        [
            self.label(MANAGED_BY),
            self.annotation(HELM_RELEASE_NAME),
            self.annotation(HELM_RELEASE_NAMESPACE),
        ]
    }
}

/// The metadata of a view read with [`ObjectJson::read_with_path`] (or `read_for_edit`), or the
/// 400 message of one that does not fit.
fn meta_of(read: Result<Object, (String, String)>, what: &str) -> Result<Meta, Malformed> {
    let raw = read.map_err(|e| {
        Malformed(format!(
            "cannot read the metadata of the request's {what} (Kubernetes requires \
             metadata.labels and metadata.annotations to map strings to strings; quote \
             numbers and booleans in the manifest): {}",
            crate::admission::describe(e)
        ))
    })?;
    Ok(Meta {
        kind: raw.kind,
        name: raw.metadata.name,
        namespace: raw.metadata.namespace,
        labels: raw.metadata.labels,
        annotations: raw.metadata.annotations,
    })
}

/// Whether Fleet adoption (check 3) may apply to the object whose metadata has this text: a
/// listed release's name is in it and Fleet's markers are not. It only decides how the object
/// is read: whole when it may be edited, else only its metadata (a miss, say through an escaped
/// name, costs a second read for the edit, never a wrong answer).
fn may_be_adopted(text: &str, settings: &Settings) -> bool {
    settings
        .fleet_releases
        .iter()
        .any(|release| contains(text, &release.release_name))
        && !contains(text, FLEET_MARKER)
}

/// How fix commands address the object: `kubectl <verb> <resource> <name> [-n <namespace>]`.
struct KubectlAddress {
    /// `kubectl` resource argument, e.g. `cephfilesystems.ceph.rook.io`.
    resource: String,
    /// Kind, as Helm names it in its errors.
    kind: String,
    /// Object name; `<name>` when the API server has not generated it yet.
    name: String,
    /// Namespace, empty for cluster-scoped objects.
    namespace: String,
}

impl KubectlAddress {
    fn new(request: &Request<'_>, meta: &Meta) -> Self {
        let resource = match (request.resource.resource.as_ref(), request.resource.group.as_ref()) {
            ("", _) if !meta.kind.is_empty() => meta.kind.to_ascii_lowercase(),
            ("", _) => "<resource>".to_string(),
            (resource, "") => resource.to_string(),
            (resource, group) => format!("{resource}.{group}"),
        };
        let kind = [request.kind.kind.as_ref(), meta.kind.as_str()]
            .into_iter()
            .find(|k| !k.is_empty())
            .unwrap_or("<kind>")
            .to_string();
        let name = [meta.name.as_str(), request.name.as_deref().unwrap_or("")]
            .into_iter()
            .find(|n| !n.is_empty())
            .unwrap_or("<name>")
            .to_string();
        // None for a cluster-scoped object, whatever its manifest says: `kubectl` takes no `-n`.
        let namespace = crate::finding::namespace_of(request, &meta.namespace).to_string();
        KubectlAddress {
            resource,
            kind,
            name,
            namespace,
        }
    }

    /// `kubectl <verb> <resource> <name> [-n <ns>] <args>`.
    fn kubectl(&self, verb: &str, args: &str) -> String {
        let namespace = if self.namespace.is_empty() {
            String::new()
        } else {
            format!(" -n {}", self.namespace)
        };
        format!("kubectl {verb} {} {}{namespace} {args}", self.resource, self.name)
    }
}

/// Decides a request the rules matched: a CREATE or UPDATE of any resource, not a subresource.
fn evaluate(request: &Request<'_>, objects: &Objects<'_>, settings: &Settings) -> Result<Report, Malformed> {
    let object = objects.object;
    if let Some(namespace) = request.namespace.as_deref()
        && settings.exempt_namespaces.iter().any(|n| n == namespace)
    {
        return Ok(Report::nothing());
    }
    // When a check before read the object whole (the all-in-one), its metadata is read from
    // that tree, and keys without a marker end here as the text search below would: no
    // finding. Metadata the view cannot read from the tree (of another shape, a key given
    // twice) goes on to the text, whose error names the path.
    let from_tree = objects.read_tree().and_then(|tree| Object::deserialize(tree).ok());
    if let Some(meta) = &from_tree
        && !keys_hold_markers(&meta.metadata, settings)
    {
        return Ok(Report::nothing());
    }
    let (whole, view) = match from_tree {
        // Read from the tree, with markers: that view is the one the text would give, unless
        // the object may be adopted (read whole below, to be edited).
        Some(view) if settings.fleet_releases.is_empty() => (None, Ok(view)),
        _ => {
            // Every marker is a key of `metadata`, so only its text is searched, read without
            // stepping over the rest of the object. An object a check before built (all-in-one)
            // has no text to search: it is read.
            let members = object.members(Object::MEMBERS);
            let text = match members {
                Some([_, _, metadata]) => Some(metadata.unwrap_or_default()),
                None => object.text(),
            };
            if text.is_some_and(|text| !may_hold_markers(text, settings)) {
                return Ok(Report::nothing());
            }
            // An object that may be adopted is read once, whole: the metadata view comes from
            // the value the adoption edits.
            match text {
                Some(text) if may_be_adopted(text, settings) => object.read_for_edit::<Object>(),
                _ => (None, Object::read(object, members)),
            }
        }
    };
    let new = meta_of(view, "object")?;
    let old = match objects.old_object.filter(|_| request.is_update()) {
        Some(old) => Some(meta_of(Object::read(old, old.members(Object::MEMBERS)), "oldObject")?),
        None => None,
    };
    let address = KubectlAddress::new(request, &new);
    let subject = Subject::new(request, &new.name, "", &new.namespace);

    // Check 3 first: the other checks judge the object as it will be stored.
    let adoption = adoption(&new, settings);
    let effective = match &adoption {
        Some((id, hash)) => {
            let mut meta = new.clone();
            meta.annotations.insert(FLEET_ID.to_string(), id.clone());
            meta.labels.insert(FLEET_HASH.to_string(), hash.clone());
            meta
        }
        None => new,
    };

    let mut findings = Vec::new();
    if let Some((path, message, brief)) = fleet_markers(&effective, old.as_ref(), &address) {
        let unchanged = old
            .as_ref()
            .is_some_and(|o| o.fleet_values() == effective.fleet_values());
        findings.push(
            Finding::reject("fleetMarkers", path, pre_existing(message, unchanged), brief)
                .warn_if(unchanged, || PRE_EXISTING.to_string()),
        );
    }
    if settings.helm_completeness != Action::Ignore
        && let Some((path, message, brief)) = helm_completeness(&effective, &address, settings)
    {
        let unchanged = old.as_ref().is_some_and(|o| o.helm_values() == effective.helm_values());
        let action = match settings.helm_completeness {
            Action::Reject => RejectOrWarn::Reject,
            _ => RejectOrWarn::Warn,
        };
        findings.push(
            Finding::new(
                "helmCompleteness",
                action,
                path,
                pre_existing(message, action == RejectOrWarn::Reject && unchanged),
                brief,
            )
            .warn_if(unchanged, || PRE_EXISTING.to_string()),
        );
    }
    if settings.ownership_change != Action::Ignore
        && let Some(old) = &old
        && let Some((path, message, brief)) = ownership_change(old, &effective, &address)
    {
        let action = match settings.ownership_change {
            Action::Reject => RejectOrWarn::Reject,
            _ => RejectOrWarn::Warn,
        };
        findings.push(Finding::new("ownershipChange", action, path, message, brief));
    }

    let mut report = Report::new(subject, findings);
    if report.findings.iter().any(Finding::rejects) {
        return Ok(report);
    }
    if let Some((id, hash)) = adoption {
        // The object read whole above, or (when the text search missed, or for an object a
        // check before built) read or copied now.
        let object = whole
            .map_or_else(|| object.read::<Value>(), Ok)
            .map_err(|e| Malformed(format!("cannot read the request's object: {e}")))?;
        report.mutation = Some(mutated_object(object, &id, &hash).map_err(Malformed)?);
    }
    Ok(report)
}

/// The note of a finding this UPDATE leaves as it was, which therefore only warns.
const PRE_EXISTING: &str = "pre-existing: not rejected";

/// The long text of a finding, with the note for a value this UPDATE leaves as it was.
fn pre_existing(message: String, unchanged: bool) -> String {
    if unchanged {
        format!(
            "{message} (This UPDATE leaves these values as they were, so it is not rejected; \
             background audit reports the object until it is fixed.)"
        )
    } else {
        message
    }
}

/// The set id and hash to add when the object belongs to a listed release and has no Fleet
/// markers (check 3).
fn adoption(meta: &Meta, settings: &Settings) -> Option<(String, String)> {
    if meta.annotation(FLEET_ID).is_some() || meta.label(FLEET_HASH).is_some() {
        return None;
    }
    let name = meta.annotation(HELM_RELEASE_NAME)?;
    let namespace = meta.annotation(HELM_RELEASE_NAMESPACE)?;
    let release = settings
        .fleet_releases
        .iter()
        .find(|r| r.release_name == name && r.release_namespace == namespace)?;
    let mut annotations = meta.annotations.clone();
    annotations.insert(FLEET_ID.to_string(), release.set_id.clone());
    Some((release.set_id.clone(), objectset_hash(&annotations)))
}

/// The object with the adoption markers added to `metadata.annotations` and `metadata.labels`
/// (created when absent or `null`); everything else is left as it is.
fn mutated_object(mut object: Value, id: &str, hash: &str) -> Result<Value, String> {
    let Value::Object(fields) = &mut object else {
        return Err("the request's object is not a JSON object".to_string());
    };
    let metadata = fields.entry("metadata").or_insert(Value::Null);
    if metadata.is_null() {
        *metadata = Value::Object(Map::new());
    }
    let Value::Object(metadata) = metadata else {
        return Err("the request's object.metadata is not an object".to_string());
    };
    for (field, key, value) in [("annotations", FLEET_ID, id), ("labels", FLEET_HASH, hash)] {
        let map = metadata.entry(field).or_insert(Value::Null);
        if map.is_null() {
            *map = Value::Object(Map::new());
        }
        let Value::Object(map) = map else {
            return Err(format!("the request's object.metadata.{field} is not an object"));
        };
        map.insert(key.to_string(), Value::String(value.to_string()));
    }
    Ok(object)
}

fn annotation_path(key: &str) -> String {
    format!("metadata.annotations[{key}]")
}

fn label_path(key: &str) -> String {
    format!("metadata.labels[{key}]")
}

/// Check 1: the hash label agrees with the annotations it hashes. `old` only adds a hint when
/// the label still holds the hash of the previous markers.
fn fleet_markers(meta: &Meta, old: Option<&Meta>, address: &KubectlAddress) -> Option<(String, String, Parts)> {
    let id = meta.annotation(FLEET_ID);
    let hash = meta.label(FLEET_HASH);
    if id.is_none() && hash.is_none() {
        return None;
    }
    let expected = objectset_hash(&meta.annotations);
    // The usual case, the label agreeing with the annotations: nothing to word.
    if id.is_some() && hash == Some(expected.as_str()) {
        return None;
    }
    let hashed: Vec<String> = HASH_ORDER
        .iter()
        .filter_map(|key| meta.annotation(key).map(|v| format!("{} {v:?}", annotation_path(key))))
        .collect();
    let label_fix = address.kubectl("label", &format!("{FLEET_HASH}={expected} --overwrite"));
    let why = "Fleet finds the objects of a bundle deployment by this label, so it reports this \
               object as missing or not owned by it (Fleet issue 2134) and tries to create or \
               take it over again";
    match (id, hash) {
        (Some(_), Some(hash)) => {
            let stale = match old {
                Some(old)
                    if old.annotation(FLEET_ID) != meta.annotation(FLEET_ID)
                        && objectset_hash(&old.annotations) == hash =>
                {
                    format!(
                        " (it is still the hash of the previous id {:?}: the id changed, the label did not)",
                        old.annotation(FLEET_ID).unwrap_or("")
                    )
                }
                _ => String::new(),
            };
            Some((
                label_path(FLEET_HASH),
                format!(
                    "{} is {hash:?}{stale} but wrangler's hash of {} is {expected:?}; {why}. \
                     Fix: {label_fix}, or set {} to {expected:?} in the manifest.",
                    label_path(FLEET_HASH),
                    crate::text::join_and(&hashed),
                    label_path(FLEET_HASH),
                ),
                Parts::from(format!(
                    "label {FLEET_HASH} should be {expected:?}, or Fleet reports the object missing (Fleet issue 2134)."
                )),
            ))
        }
        (Some(_), None) => Some((
            label_path(FLEET_HASH),
            format!(
                "{} is set but {} is missing; it must be {expected:?}, wrangler's hash of {}; \
                 {why}. Fix: {label_fix}, or set {} to {expected:?} in the manifest.",
                annotation_path(FLEET_ID),
                label_path(FLEET_HASH),
                crate::text::join_and(&hashed),
                label_path(FLEET_HASH),
            ),
            Parts::from(format!(
                "label {FLEET_HASH} is missing; set it to {expected:?}, or Fleet reports the object missing (Fleet issue 2134)."
            )),
        )),
        (None, _) => Some((
            label_path(FLEET_HASH),
            format!(
                "{} is set but {} is missing; wrangler writes both, and without the id the \
             hash can only be {expected:?} (the hash of an empty id{}), so the label points at \
             no Fleet bundle deployment. Fix: remove the label ({}), or add {} with the set id \
             of the owning bundle deployment (`default-<bundleDeploymentName>`) and set the label \
             to the SHA-1 of it.",
                label_path(FLEET_HASH),
                annotation_path(FLEET_ID),
                if hashed.is_empty() {
                    String::new()
                } else {
                    format!(" and {}", crate::text::join_and(&hashed))
                },
                address.kubectl("label", &format!("{FLEET_HASH}-")),
                annotation_path(FLEET_ID),
            ),
            Parts::from(format!(
                "label {FLEET_HASH} is set without annotation {FLEET_ID}, so it points at no Fleet bundle; remove it or add the id."
            )),
        )),
    }
}

/// Check 2: Helm's ownership metadata is complete.
fn helm_completeness(meta: &Meta, address: &KubectlAddress, settings: &Settings) -> Option<(String, String, Parts)> {
    let name = meta.annotation(HELM_RELEASE_NAME);
    let namespace = meta.annotation(HELM_RELEASE_NAMESPACE);
    if name.is_none() && namespace.is_none() {
        return None;
    }
    // The values Helm would compare with: from the object; for a missing namespace, from the
    // fleetReleases entry naming the same release, else the object's own namespace.
    let mut notes = Vec::new();
    let release_name = match name {
        Some(name) => name.to_string(),
        None => {
            notes.push("use the name of the release that installs it");
            "<release name>".to_string()
        }
    };
    let from_fleet = || {
        let mut entries = settings
            .fleet_releases
            .iter()
            .filter(|r| Some(r.release_name.as_str()) == name);
        match (entries.next(), entries.next()) {
            (Some(entry), None) => Some(entry.release_namespace.clone()),
            _ => None,
        }
    };
    let release_namespace = match (namespace, from_fleet()) {
        (Some(namespace), _) => namespace.to_string(),
        (None, Some(namespace)) => {
            notes.push("release namespace from the fleetReleases entry of this release");
            namespace
        }
        (None, None) if !address.namespace.is_empty() => {
            notes.push("release namespace assumed to be the object's; use the one the release was installed into");
            address.namespace.clone()
        }
        (None, None) => {
            notes.push("use the namespace the release was installed into");
            "<release namespace>".to_string()
        }
    };

    let mut errors = Vec::new();
    let mut fixes = Vec::new();
    let mut paths = Vec::new();
    match meta.label(MANAGED_BY) {
        Some(MANAGED_BY_HELM) => {}
        Some(other) => {
            errors.push(format!(
                "label validation error: key {MANAGED_BY:?} must equal {MANAGED_BY_HELM:?}: current value is {other:?}"
            ));
            paths.push(label_path(MANAGED_BY));
            fixes.push(address.kubectl("label", &format!("{MANAGED_BY}={MANAGED_BY_HELM} --overwrite")));
        }
        None => {
            errors.push(format!(
                "label validation error: missing key {MANAGED_BY:?}: must be set to {MANAGED_BY_HELM:?}"
            ));
            paths.push(label_path(MANAGED_BY));
            fixes.push(address.kubectl("label", &format!("{MANAGED_BY}={MANAGED_BY_HELM} --overwrite")));
        }
    }
    let mut annotate = Vec::new();
    for (key, present, value) in [
        (HELM_RELEASE_NAME, name.is_some(), &release_name),
        (HELM_RELEASE_NAMESPACE, namespace.is_some(), &release_namespace),
    ] {
        if !present {
            errors.push(format!(
                "annotation validation error: missing key {key:?}: must be set to {value:?}"
            ));
            paths.push(annotation_path(key));
            annotate.push(format!("{key}={value}"));
        }
    }
    if errors.is_empty() {
        return None;
    }
    if !annotate.is_empty() {
        fixes.push(address.kubectl("annotate", &annotate.join(" ")));
    }
    let notes = if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join("; "))
    };
    let verb = if paths.len() == 1 { "is" } else { "are" };
    let brief = Parts::default()
        .fixed("carries Helm release metadata but ")
        .elidable(crate::text::join_and(&paths))
        .fixed(format!(
            " {verb} missing or wrong, so Helm refuses to adopt or upgrade it. Set {}.",
            if paths.len() == 1 { "it" } else { "them" }
        ));
    let message = format!(
        "carries Helm release metadata but {} {} missing or wrong, so Helm will refuse to \
         adopt or upgrade it with: {} {:?} in namespace {:?} exists and cannot be imported into \
         the current release: invalid ownership metadata; {}{notes}. Fix: {}, or set the \
         same metadata in the manifest.",
        crate::text::join_and(&paths),
        if paths.len() == 1 { "is" } else { "are" },
        address.kind,
        address.name,
        address.namespace,
        errors.join("; "),
        fixes.join("; "),
    );
    Some((paths[0].clone(), message, brief))
}

/// Check 4: an UPDATE moving the object from one owner to another.
fn ownership_change(old: &Meta, new: &Meta, address: &KubectlAddress) -> Option<(String, String, Parts)> {
    let mut changes = Vec::new();
    let mut brief = Parts::default().fixed("this UPDATE moves it to a new owner: ");
    let mut restore = Vec::new();
    let mut first = None;
    for key in [HELM_RELEASE_NAME, HELM_RELEASE_NAMESPACE, FLEET_ID] {
        match (old.annotation(key), new.annotation(key)) {
            (Some(before), Some(after)) if !before.is_empty() && !after.is_empty() && before != after => {
                changes.push(format!("{} from {before:?} to {after:?}", annotation_path(key)));
                if first.is_some() {
                    brief = brief.fixed(", ");
                }
                first.get_or_insert_with(|| annotation_path(key));
                let short = match key {
                    HELM_RELEASE_NAME => "release-name",
                    HELM_RELEASE_NAMESPACE => "release-namespace",
                    _ => "Fleet id",
                };
                brief = brief
                    .fixed(format!("{short} "))
                    .elidable(format!("{before:?} to {after:?}"));
                restore.push(format!("{key}={before}"));
            }
            _ => {}
        }
    }
    if changes.is_empty() {
        return None;
    }
    let mut previous = Vec::new();
    if let (Some(name), Some(namespace)) = (
        old.annotation(HELM_RELEASE_NAME),
        old.annotation(HELM_RELEASE_NAMESPACE),
    ) {
        previous.push(format!("Helm release {namespace}/{name}"));
    }
    if let Some(id) = old.annotation(FLEET_ID) {
        previous.push(format!("Fleet set {id:?}"));
    }
    let mut restore_fix = address.kubectl("annotate", &format!("{} --overwrite", restore.join(" ")));
    if old.annotation(FLEET_ID) != new.annotation(FLEET_ID)
        && let Some(hash) = old.label(FLEET_HASH)
    {
        restore_fix.push_str(&format!(
            "; {}",
            address.kubectl("label", &format!("{FLEET_HASH}={hash} --overwrite"))
        ));
    }
    let message = format!(
        "this UPDATE changes its owner: {}; its previous owner ({}) will report it as \
         missing or not owned and may delete or overwrite it on its next sync. If the move is \
         intended, remove the object from the previous release or bundle first; otherwise \
         restore the previous values: {restore_fix}.",
        changes.join(", "),
        crate::text::join_and(&previous),
    );
    let brief = brief.fixed("; the old owner may report it missing or delete it.");
    Some((first.unwrap_or_default(), message, brief))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::Response;

    #[test]
    fn sha1_standard_vectors() {
        // FIPS 180-2 appendix A and the empty message.
        assert_eq!(sha1_hex(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(sha1_hex(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(
            sha1_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
        assert_eq!(
            sha1_hex(&vec![b'a'; 1_000_000]),
            "34aa973cd4c4daa4f61eeb2bdbad27316534016f"
        );
        assert_eq!(
            sha1_hex(b"The quick brown fox jumps over the lazy dog"),
            "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12"
        );
    }

    #[test]
    fn sha1_padding_boundaries() {
        // 55, 56 and 64 bytes straddle the one-block / two-block padding boundary.
        assert_eq!(sha1_hex(&[b'a'; 55]), "c1c8bbdc22796e28c0e15163d20899b65621d65a");
        assert_eq!(sha1_hex(&[b'a'; 56]), "c2db330f6083854c99d4b5bfb6e8f29f201be699");
        assert_eq!(sha1_hex(&[b'a'; 64]), "0098ba824b5c16427bd7a1122a5a442a25ec644d");
    }

    fn annotations(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn fleet_test_vector() {
        let a = annotations(&[
            (FLEET_ID, "default-remove-metadata"),
            (HELM_RELEASE_NAME, "remove-metadata"),
        ]);
        assert_eq!(objectset_hash(&a), "0f3e1d9d146fa8b290c0de403881184751430e59");
    }

    #[test]
    fn hash_concatenates_owner_annotations_in_order() {
        let a = annotations(&[
            (FLEET_OWNER_NAMESPACE, "ns"),
            (FLEET_ID, "id"),
            (FLEET_OWNER_NAME, "name"),
            (FLEET_OWNER_GVK, "gvk"),
        ]);
        assert_eq!(objectset_hash(&a), sha1_hex(b"idgvknamens"));
        // k3s's RuntimeClass set, as applied by k3s's addon controller.
        let k3s = annotations(&[
            (FLEET_ID, ""),
            (FLEET_OWNER_GVK, "k3s.cattle.io/v1, Kind=Addon"),
            (FLEET_OWNER_NAME, "runtimes"),
            (FLEET_OWNER_NAMESPACE, "kube-system"),
        ]);
        assert_eq!(objectset_hash(&k3s), "57231bea9658cf25fcdac23f1c5685ac7bbcf983");
        let missing_gvk = annotations(&[(FLEET_ID, "id"), (FLEET_OWNER_NAME, "name")]);
        assert_eq!(objectset_hash(&missing_gvk), sha1_hex(b"idname"));
    }

    #[test]
    fn fast_path_rules() {
        let defaults = Settings::default();
        let quiet = Settings {
            helm_completeness: Action::Ignore,
            ownership_change: Action::Ignore,
            ..Settings::default()
        };
        let plain = r#"{"metadata":{"labels":{"app.kubernetes.io/managed-by":"Helm"}}}"#;
        assert!(!may_hold_markers(plain, &defaults));
        let helm = r#"{"metadata":{"annotations":{"meta.helm.sh/release-name":"x"}}}"#;
        assert!(may_hold_markers(helm, &defaults));
        assert!(!may_hold_markers(helm, &quiet));
        let fleet = r#"{"metadata":{"labels":{"objectset.rio.cattle.io/hash":"x"}}}"#;
        assert!(may_hold_markers(fleet, &quiet));
        // Escaped spellings of a key are not matched literally, so any escape means "parse".
        let escaped = r#"{"metadata":{"labels":{"objectset.rio.cattle.io\/hash":"x"}}}"#;
        assert!(may_hold_markers(escaped, &quiet));
        let unicode = r#"{"metadata":{"labels":{"objectset.rio.cattle.io\u002fhash":"x"}}}"#;
        assert!(may_hold_markers(unicode, &quiet));
        let with_fleet = Settings {
            fleet_releases: vec![FleetRelease {
                release_name: "a".into(),
                release_namespace: "b".into(),
                set_id: "c".into(),
            }],
            ..quiet.clone()
        };
        assert!(may_hold_markers(helm, &with_fleet));
    }

    fn request(object: &str) -> String {
        format!(
            r#"{{"request":{{"uid":"1","kind":{{"group":"","version":"v1","kind":"ConfigMap"}},
            "resource":{{"group":"","version":"v1","resource":"configmaps"}},"name":"cm1",
            "namespace":"ns","operation":"CREATE","object":{object}}},"settings":{{}}}}"#
        )
    }

    fn decide(payload: &str) -> Response {
        crate::check::decide::<OwnershipMarkers>(payload.as_bytes(), &crate::cluster::NoCluster)
    }

    #[test]
    fn unrelated_object_is_not_parsed() {
        // Metadata of a shape Kubernetes never sends: accepted unread without markers...
        let odd = r#"{"metadata":{"labels":{"app":7}}}"#;
        assert_eq!(decide(&request(odd)), Response::accept());
        // ...and refused with 400 once a marker makes the check read it.
        let odd_marked = r#"{"metadata":{"labels":{"app":7,"objectset.rio.cattle.io/hash":"x"}}}"#;
        let verdict = decide(&request(odd_marked));
        assert_eq!(verdict.code, Some(400), "{verdict:?}");
        assert!(verdict.message.unwrap_or_default().contains("cannot read the metadata"));
    }

    #[test]
    fn escaped_key_is_still_checked() {
        let escaped = r#"{"metadata":{"name":"cm1","labels":{"objectset.rio.cattle.io\/hash":"0f3e1d9d146fa8b290c0de403881184751430e59"}}}"#;
        let verdict = decide(&request(escaped));
        assert!(!verdict.accepted, "{verdict:?}");
        assert!(
            verdict
                .message
                .unwrap_or_default()
                .contains("metadata.annotations[objectset.rio.cattle.io/id] is missing")
        );
    }

    #[test]
    fn null_metadata_maps_read_as_empty() {
        let object = r#"{"metadata":{"name":"cm1","labels":null,"annotations":{"objectset.rio.cattle.io/id":null}}}"#;
        let verdict = decide(&request(object));
        // An id annotation read as "" still needs the hash of the empty id.
        assert!(!verdict.accepted);
        assert!(
            verdict
                .message
                .unwrap_or_default()
                .contains("da39a3ee5e6b4b0d3255bfef95601890afd80709")
        );
    }

    #[test]
    fn mutation_creates_missing_maps() {
        let edit = |text: &str| mutated_object(serde_json::from_str(text).unwrap(), "id", "h");
        let mutated = |text: &str| edit(text).unwrap();
        let object = mutated(r#"{"kind":"X","metadata":{"annotations":null,"name":"n"}}"#);
        assert_eq!(object["metadata"]["annotations"][FLEET_ID], "id");
        assert_eq!(object["metadata"]["labels"][FLEET_HASH], "h");
        assert_eq!(object["metadata"]["name"], "n");
        assert_eq!(object["kind"], "X");
        let object = mutated(r#"{"kind":"X"}"#);
        assert_eq!(object["metadata"]["labels"][FLEET_HASH], "h");
        let object = mutated(r#"{"metadata":{"labels":{"a":"b","objectset.rio.cattle.io/hash":"old"}}}"#);
        assert_eq!(
            object["metadata"]["labels"],
            serde_json::json!({"a": "b", FLEET_HASH: "h"})
        );
        assert!(edit(r#"{"metadata":{"labels":[]}}"#).is_err());
        assert!(edit("[]").is_err());
    }

    #[test]
    fn other_operations_and_subresources_pass() {
        let object = r#"{"metadata":{"labels":{"objectset.rio.cattle.io/hash":"x"}}}"#;
        let delete = request(object).replace("\"CREATE\"", "\"DELETE\"");
        assert_eq!(decide(&delete), Response::accept());
        let status = request(object).replace("\"operation\"", "\"subResource\":\"status\",\"operation\"");
        assert_eq!(decide(&status), Response::accept());
    }

    #[test]
    fn defaults() {
        let settings = crate::check::parse_settings::<OwnershipMarkers>(None).unwrap();
        assert_eq!(settings.ownership_change, Action::Warn);
        assert_eq!(settings.helm_completeness, Action::Reject);
        assert!(settings.fleet_releases.is_empty() && settings.exempt_namespaces.is_empty());
    }
}
