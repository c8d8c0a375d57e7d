//! crd-schema-fields: catch CustomResourceDefinition fields the API server silently drops.
//!
//! The API server decodes a CRD into its Go types before anything else runs, and every key
//! those types do not declare is dropped (with only a warning, unless the client asked for
//! strict field validation). A manifest in Git that carries such keys (Kube-OVN's
//! `x-kubernetes-patch-strategy` / `x-kubernetes-patch-merge-key` inside `openAPIV3Schema`)
//! therefore never matches the live object, and ArgoCD shows the CRD OutOfSync forever.
//!
//! # What is checked
//! - Every key of the CRD outside the schemas (metadata, spec, names, versions, subresources,
//!   additionalPrinterColumns, selectableFields, conversion, status) against the fields of its
//!   API type, taken from the table of the API's Go types that sync-drift also reads
//!   ([`ApiType`], derived from the Go sources of apiextensions and apimachinery; the CRD's own
//!   `status` types are listed for this check). Free-form values (`fieldsV1` of managedFields)
//!   are not looked into; a struct without members (the status subresource's `status: {}`) keeps
//!   none of its keys, so each is a finding.
//! - Every JSONSchemaProps node of `spec.versions[*].schema.openAPIV3Schema` against the
//!   JSONSchemaProps fields, following `properties`, `patternProperties`, `definitions`, the
//!   schema values of `dependencies` (string arrays are fine), `items` (object or array form),
//!   `additionalProperties` and `additionalItems` when they are schemas (booleans are fine),
//!   `allOf`, `anyOf`, `oneOf` and `not`; `x-kubernetes-validations` items against
//!   ValidationRule and `externalDocs` against ExternalDocumentation.
//! - Where: the CRD in the request's `object` (offline, a manifest from Git) and, unless
//!   `checkLastApplied` is false, the manifest recorded in the
//!   `kubectl.kubernetes.io/last-applied-configuration` annotation, the only place the dropped
//!   keys survive at admission. A finding at the same path in both is reported once, saying
//!   both; findings come in the object's document order, then those only in last-applied in
//!   its document order.
//!
//! Paths are in the API server's own warning form (`spec.versions[0].schema.openAPIV3Schema.
//! properties.spec.x-kubernetes-patch-strategy`): object keys joined with `.` (a key with dots
//! or odd characters inside `properties` is written plainly, as the API server does), list
//! indexes as `[i]`.
//!
//! # Verdicts, by rule
//! - Not a `CREATE` or `UPDATE` of an `apiextensions.k8s.io/v1` CustomResourceDefinition (or a
//!   subresource request): accepted without reading the object.
//! - No object (`null`): accepted. An object that is not a JSON object: rejected with code 400.
//! - Findings: rejected (`action: reject`) with the number of findings, the first
//!   `maxFindings` in order and "and N more"; or accepted with one warning per finding
//!   (`action: warn`), capped the same way. Either way the audit annotation
//!   `syncguard.io/findings` carries the full count, and each listed finding its fix (remove
//!   the key).
//! - A last-applied annotation that is not JSON, does not hold an `apiextensions.k8s.io/v1`
//!   CustomResourceDefinition, or names another object: a warning, and only the object is
//!   checked.
//! - Values of the wrong JSON type (a string where a list belongs, ...) are not findings: the
//!   API server refuses them itself, loudly, so nothing drifts silently.
//!
//! # Hostile input
//! The object (and the annotation) is read into a tree that stops at [`MAX_DEPTH`] levels of
//! JSON nesting: a deeper value is skipped by serde_json's iterative skipper (`IgnoredAny`),
//! never recursed into, and where the walk reaches such a cut-off value it reports a finding
//! ("nesting deeper than 100 levels; not checked beyond"). Every recursion here (reading,
//! walking, dropping the tree) is therefore bounded by [`MAX_DEPTH`], whatever the input;
//! serde_json's own limit of 128 levels is never reached. The schema depth is bounded by the
//! same limit: each nested schema is at least one JSON level deeper than its parent (two through
//! `properties`), so a schema nested about 47 properties deep under `openAPIV3Schema` is the
//! deepest checked. The deepest real CRDs nest about 27 JSON levels (the Prometheus operator's).

use crate::admission::{ObjectJson, Request};
use crate::check::shared_walk::{Beside, Keys, Place, Step};
use crate::check::{Check, GroupKind, Objects};
use crate::cluster::Cluster;
use crate::finding::{Finding, Fix, List, Malformed, Report, RuleDoc, Subject};
use crate::generated::{ApiField, ApiType, Form, Leaf, api_type};
use crate::json::{self, Entries, Members, Node};
use crate::rules::{self, Rule};
use crate::settings::RejectOrWarn;
use crate::text::order::natural_cmp;
use crate::text::spelling::distance;
use crate::text::{Parts, elide, quote};
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::BTreeMap;

pub use crate::k8s::LAST_APPLIED;

/// The rules of the check's findings.
pub const FINDINGS: &[RuleDoc] = &[
    RuleDoc {
        id: "unknownField",
        summary: "a field of the CRD that the API server drops, because its type does not declare it",
        anchor: "what-it-checks",
    },
    RuleDoc {
        id: "tooDeep",
        summary: "a part of the CRD nested deeper than the check reads",
        anchor: "what-it-checks",
    },
    RuleDoc {
        id: "lastAppliedUnreadable",
        summary: "the last-applied-configuration annotation cannot be checked",
        anchor: "what-it-checks",
    },
];

/// The rules whose findings are listed together.
const LISTED: &[&str] = &["unknownField", "tooDeep"];

/// Deepest JSON nesting read from the object or the annotation; deeper values are cut off.
pub const MAX_DEPTH: usize = 100;

/// Most characters of a detail (an error, a name) quoted in a last-applied warning.
const DETAIL_CHARS: usize = 60;

/// The two keys Kube-OVN's CRDs carried: strategic-merge-patch markers of built-in types.
const PATCH_KEYS: [&str; 2] = ["x-kubernetes-patch-strategy", "x-kubernetes-patch-merge-key"];

/// Settings of the crd-schema-fields check.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Settings {
    /// `reject` (default) rejects a CRD with findings; `warn` accepts it with warnings.
    pub action: RejectOrWarn,
    /// Extra keys to tolerate anywhere in the CRD (exact key names); default none.
    pub allowed_keys: Vec<String>,
    /// Also check the manifest in the last-applied-configuration annotation; default true.
    pub check_last_applied: bool,
    /// How many findings the message (or the warnings) list, 1 to 1000; default 20.
    pub max_findings: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            action: RejectOrWarn::Reject,
            allowed_keys: Vec::new(),
            check_last_applied: true,
            max_findings: 20,
        }
    }
}

/// The crd-schema-fields check.
pub struct CrdSchemaFields;

impl Check for CrdSchemaFields {
    type Settings = Settings;
    const NAME: &'static str = "crd-schema-fields";
    const SETTINGS_KEY: &'static str = "crdSchemaFields";
    const RULES: &'static [Rule] = rules::CRD_SCHEMA_FIELDS;
    const KINDS: &'static [GroupKind] = &[("apiextensions.k8s.io", "CustomResourceDefinition")];
    const READS_WHOLE: bool = true;
    const FINDINGS: &'static [RuleDoc] = FINDINGS;

    fn validate_settings(settings: &Settings) -> Result<(), String> {
        if !(1..=1000).contains(&settings.max_findings) {
            return Err(format!(
                "`maxFindings` must be between 1 and 1000, got {}",
                settings.max_findings
            ));
        }
        if let Some(i) = settings.allowed_keys.iter().position(|k| k.is_empty()) {
            return Err(format!("`allowedKeys[{i}]` is empty; list key names to tolerate"));
        }
        Ok(())
    }

    fn check(
        request: &Request<'_>,
        objects: &Objects<'_>,
        settings: &Settings,
        _cluster: &dyn Cluster,
    ) -> Result<Report, Malformed> {
        if request.kind.version != "v1" {
            return Ok(Report::nothing());
        }
        // The request's one tree of its object; an object nested deeper than this check reads
        // (hostile input only) is read again, cut off at [`MAX_DEPTH`].
        let cut;
        let object = match objects.tree() {
            Ok((node, deepest)) if deepest <= MAX_DEPTH => node,
            _ => {
                cut = read_node(objects.object);
                match &cut {
                    Ok(node) => node,
                    Err(e) => return Err(Malformed(format!("cannot read the request's object: {e}"))),
                }
            }
        };
        if !matches!(object, Node::Object(_)) {
            return Err(not_an_object());
        }
        let manifest = if settings.check_last_applied {
            last_applied(object, None)
        } else {
            Ok(None)
        };
        Ok(judge(request, object, manifest, settings, Walked::default()))
    }
}

/// What an object that is not a JSON object gets.
fn not_an_object() -> Malformed {
    Malformed::new("the request's object is not a JSON object; a CustomResourceDefinition was expected")
}

/// The findings of trees a walk shared with sync-drift judged already
/// (`all_in_one::with_sync_drift`).
#[derive(Default)]
pub(crate) struct Walked {
    object: Option<Vec<Dropped>>,
    last_applied: Option<Vec<Dropped>>,
}

/// The check's report on `object` (a JSON object) and `manifest`, its last-applied manifest to
/// check (or why it cannot be); each tree is walked here unless `walked` holds its findings.
pub(crate) fn judge(
    request: &Request<'_>,
    object: &Node<'_>,
    manifest: Result<Option<Cow<'_, Node<'_>>>, String>,
    settings: &Settings,
    walked: Walked,
) -> Report {
    let name = object.at(&["metadata", "name"]).and_then(Node::as_str).unwrap_or("");
    let subject = Subject::new(request, name, "", "");
    let mut unreadable = None;
    let in_object = walked.object.unwrap_or_else(|| walk(object, &settings.allowed_keys));
    let in_last_applied = match manifest {
        Ok(Some(manifest)) => walked.last_applied.unwrap_or_else(|| {
            let mut found = walk(&manifest, &settings.allowed_keys);
            if spec_is_the_objects(&manifest) {
                // The manifest's `spec` is the object's own, member for member ([`read_manifest`]):
                // walked, it would give the object's findings under `spec`, at the same paths.
                found.extend(in_object.iter().filter(|d| under_spec(&d.path)).cloned());
            }
            found
        }),
        Ok(None) => Vec::new(),
        Err(problem) => {
            let text = format!("the last-applied-configuration annotation {problem}");
            unreadable = Some(Finding::warn(
                "lastAppliedUnreadable",
                format!("metadata.annotations[{LAST_APPLIED}]"),
                text.clone(),
                text,
            ));
            Vec::new()
        }
    };
    let dropped = merge(in_object, in_last_applied);
    let mut report = report(subject, &dropped, settings);
    report.findings.extend(unreadable);
    report
}

/// The manifest of the last-applied annotation, if there is one to check; `Err` is the
/// warning to give when it cannot be checked. `read`: the annotation already read by the
/// caller as [`parse_node`] reads it, if it was.
pub(crate) fn last_applied<'a>(
    object: &'a Node<'a>,
    read: Option<&'a Result<Node<'a>, serde_json::Error>>,
) -> Result<Option<Cow<'a, Node<'a>>>, String> {
    let name = object.at(&["metadata", "name"]).and_then(Node::as_str).unwrap_or("");
    let Some(annotation) = object.at(&["metadata", "annotations", LAST_APPLIED]) else {
        return Ok(None);
    };
    let Some(text) = annotation.as_str() else {
        return Err("is not a string; only the object was checked".to_string());
    };
    let unreadable = |e: &serde_json::Error| {
        format!(
            "is not JSON ({}); only the object was checked (the next `kubectl apply` rewrites it)",
            elide(&e.to_string(), DETAIL_CHARS)
        )
    };
    let manifest = match read {
        Some(Ok(manifest)) => Cow::Borrowed(manifest),
        Some(Err(e)) => return Err(unreadable(e)),
        None => Cow::Owned(
            read_manifest(object, text, MAX_DEPTH)
                .map(|(manifest, _)| manifest)
                .map_err(|e| unreadable(&e))?,
        ),
    };
    let field = |key: &str| manifest.at(&[key]).and_then(Node::as_str).unwrap_or("");
    let (api_version, kind) = (field("apiVersion"), field("kind"));
    if api_version != "apiextensions.k8s.io/v1" || kind != "CustomResourceDefinition" {
        return Err(format!(
            "records kind {} (apiVersion {}), not an apiextensions.k8s.io/v1 CRD; only the object was checked",
            elide(display_name_or(kind, "(none)"), DETAIL_CHARS / 2),
            elide(display_name_or(api_version, "(none)"), DETAIL_CHARS / 2)
        ));
    }
    let recorded = manifest.at(&["metadata", "name"]).and_then(Node::as_str).unwrap_or("");
    if recorded != name {
        return Err(format!(
            "records the manifest of {}, not of this object; only the object was checked",
            elide(&quote(recorded), DETAIL_CHARS)
        ));
    }
    Ok(Some(manifest))
}

fn display_name_or<'a>(value: &'a str, empty: &'a str) -> &'a str {
    if value.is_empty() { empty } else { value }
}

/// Where a finding was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Object,
    LastApplied,
    Both,
}

impl Seen {
    fn label(self) -> &'static str {
        match self {
            Seen::Object => "in the object",
            Seen::LastApplied => "in last-applied",
            Seen::Both => "in the object and last-applied",
        }
    }
}

/// One key the API server would drop (or a value too deep to check), as the walk finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Dropped {
    /// `unknownField` or `tooDeep`.
    rule: &'static str,
    /// Path in the API server's warning form, ending with the key.
    path: String,
    /// What is wrong and the fix, for the rejection message.
    text: String,
    /// What is wrong in a few words, for a warning (which the API server keeps short).
    brief: String,
}

/// The findings of the object and of last-applied, one per path (marked `Both` when both have
/// it), ordered by path ([`natural_cmp`]: list indexes by number): an order intrinsic to the
/// findings, so the answer does not depend on the order of keys in the JSON, which Kubewarden
/// sorts before a policy sees it. Repeated paths (a key given twice in one object) count once.
fn merge(object: Vec<Dropped>, last_applied: Vec<Dropped>) -> Vec<(Dropped, Seen)> {
    let mut merged: BTreeMap<PathKey, (Dropped, Seen)> = BTreeMap::new();
    for finding in object {
        merged
            .entry(PathKey(finding.path.clone()))
            .or_insert((finding, Seen::Object));
    }
    for finding in last_applied {
        match merged.get_mut(&PathKey(finding.path.clone())) {
            Some(entry) => {
                if entry.1 == Seen::Object {
                    entry.1 = Seen::Both;
                }
            }
            None => {
                merged.insert(PathKey(finding.path.clone()), (finding, Seen::LastApplied));
            }
        }
    }
    merged.into_values().collect()
}

/// A finding's path, ordered with [`natural_cmp`].
#[derive(Debug, PartialEq, Eq)]
struct PathKey(String);

impl Ord for PathKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        natural_cmp(&self.0, &other.0)
    }
}

impl PartialOrd for PathKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The findings of the dropped fields, listed: what and why once, then each path.
fn report(subject: Subject, dropped: &[(Dropped, Seen)], settings: &Settings) -> Report {
    let total = dropped.len();
    let fields = if total == 1 { "field" } else { "fields" };
    let findings = dropped
        .iter()
        .map(|(field, seen)| {
            let at = |text: &str| {
                Parts::default()
                    .elidable(field.path.as_str())
                    .fixed(format!(" ({}): {text}", seen.label()))
            };
            let finding = Finding::new(
                field.rule,
                settings.action,
                field.path.clone(),
                at(&field.text),
                at(&field.brief),
            );
            // A dropped field's fix is its removal from the manifest.
            finding.with_fix((field.rule == "unknownField").then_some(Fix::Delete))
        })
        .collect();
    let mut report = Report::new(subject, findings);
    if total > 0 {
        report.list = Some(List {
            rules: LISTED,
            limit: settings.max_findings as usize,
            intro: format!(
                "{total} {fields} the API server drops. It silently drops unknown fields of a CRD, so the live CRD never matches its manifest and GitOps tools (ArgoCD) show it OutOfSync forever; fix the manifest in Git (`kubectl apply --validate=strict` lists the same paths):"
            ),
            intro_brief: format!(
                "{total} {fields} the API server drops, so GitOps tools show it OutOfSync forever; fix the manifest in Git."
            ),
            more: "fields the API server drops".to_string(),
            more_hint: "`kubectl apply --validate=strict` lists them all".to_string(),
        });
    }
    report
}

// ---------------------------------------------------------------------------------------------
// Reading: the whole object, a depth-limited tree that keeps keys in document order
// (`crate::json`, reading every part).

/// Parses JSON text into a [`Node`] tree cut off at [`MAX_DEPTH`].
fn parse_node(text: &str) -> Result<Node<'_>, serde_json::Error> {
    json::read(text, json::Everything, MAX_DEPTH)
}

/// Reads a last-applied manifest's `text` as [`parse_node`] does (nesting cut off at `max_depth`;
/// the deepest level read noted), except its `spec` when it is the object's own, member for
/// member: then it is compared as it is read, not built, and left [`Node::Skipped`]
/// ([`json::read_unless_known`]), and [`judge`] counts the object's findings under `spec` as the
/// manifest's too. Kubewarden hands a policy the object with its keys sorted, and `kubectl apply`
/// records the manifest with sorted keys too, so a CRD applied as written usually has the same
/// `spec` in both: its second tree would cost as much to build and walk as the object's.
/// Only where each of the object's findings under `spec` can only come from its `spec`: the object
/// has one `spec`, and no other member whose name starts as a path under it does.
pub(crate) fn read_manifest<'t>(
    object: &Node<'_>,
    text: &'t str,
    max_depth: usize,
) -> Result<(Node<'t>, usize), serde_json::Error> {
    let entries = object.as_object().unwrap_or_default();
    let mut specs = entries.iter().filter(|(key, _)| key == "spec" || under_spec(key));
    match (specs.next(), specs.next()) {
        (Some((key, spec)), None) if key == "spec" => {
            json::read_unless_known(text, "spec", spec, max_depth).map(|(node, deepest, _)| (node, deepest))
        }
        _ => json::read_noting_depth(text, json::Everything, max_depth),
    }
}

/// Whether a manifest read by [`read_manifest`] had the object's own `spec`.
fn spec_is_the_objects(manifest: &Node<'_>) -> bool {
    // A manifest read whole holds no skipped value.
    manifest
        .as_object()
        .and_then(|entries| entries.iter().find(|(key, _)| key == "spec"))
        .is_some_and(|(_, spec)| matches!(spec, Node::Skipped))
}

/// Whether a finding's path is under the object's `spec`.
fn under_spec(path: &str) -> bool {
    path.strip_prefix("spec")
        .is_some_and(|rest| rest.starts_with(['.', '[']))
}

/// Reads the request's object into a [`Node`] tree cut off at [`MAX_DEPTH`].
fn read_node(object: ObjectJson<'_>) -> Result<Node<'_>, serde_json::Error> {
    match object {
        ObjectJson::Raw(text) => parse_node(text),
        ObjectJson::Parsed(value) => json::read_value(value, MAX_DEPTH),
    }
}

// ---------------------------------------------------------------------------------------------
// Walking: the CRD's type graph, then JSONSchemaProps.

/// The package of the CRD's API types in the table.
const PACKAGE: &str = "apiextensions/v1";

/// Every finding in one CRD (object or last-applied manifest), in document order.
fn walk(root: &Node, allowed_keys: &[String]) -> Vec<Dropped> {
    let (Some(crd), Some(schema)) = (
        api_type(PACKAGE, "CustomResourceDefinition"),
        api_type(PACKAGE, "JSONSchemaProps"),
    ) else {
        // The table always has both (a test proves it).
        return Vec::new();
    };
    let mut walker = Walker::new(allowed_keys, schema, String::new());
    walker.typed(root, crd);
    walker.findings
}

/// How a field's value is walked: as a JSONSchemaProps tree, or as an object of an API type
/// whose fields are known.
#[derive(Clone, Copy)]
enum Walk {
    Schema,
    Typed(ApiType),
}

/// The nearest array schema around a node: the node, and where its name starts and its path
/// ends in the walker's path.
#[derive(Clone, Copy)]
struct ArrayContext<'a> {
    node: &'a Node<'a>,
    name_start: usize,
    path_len: usize,
}

/// How a JSONSchemaProps member nests schemas: the one table of it, for the walk
/// ([`Walker::schema`]) and for finding a schema node from the root ([`Walker::enter`]).
#[derive(Clone, Copy)]
enum Nest {
    /// A map of names to schemas (`properties`, ...); `enclosing`: its schemas keep the nearest
    /// array schema around the node (not those of `definitions` and `dependencies`, which stand
    /// alone; a `dependencies` value that lists names is no schema and is not walked).
    Map { enclosing: bool },
    /// `items`: a schema or a list of them, whose nearest array schema is the node.
    Items,
    /// One schema (`additionalProperties`, `additionalItems` when not a boolean, `not`).
    One,
    /// A list of schemas (`allOf`, `anyOf`, `oneOf`).
    List,
    /// A member of an API type (`x-kubernetes-validations`, `externalDocs`).
    Typed,
}

impl Nest {
    fn of(key: &str) -> Option<Nest> {
        Some(match key {
            "properties" | "patternProperties" => Nest::Map { enclosing: true },
            "definitions" | "dependencies" => Nest::Map { enclosing: false },
            "items" => Nest::Items,
            "additionalProperties" | "additionalItems" | "not" => Nest::One,
            "allOf" | "anyOf" | "oneOf" => Nest::List,
            "x-kubernetes-validations" | "externalDocs" => Nest::Typed,
            _ => return None,
        })
    }
}

/// How the walk reads a node it reaches ([`Walker::enter`]).
#[derive(Clone, Copy)]
enum Mode<'a> {
    /// An object of an API type.
    Typed(ApiType),
    /// A schema node, and the nearest array schema around it.
    Schema(Option<ArrayContext<'a>>),
}

/// Walks one tree; recursion depth is bounded by the tree's depth, which is at most
/// [`MAX_DEPTH`] (every call descends at least one JSON level).
struct Walker<'s> {
    allowed_keys: &'s [String],
    /// JSONSchemaProps, looked up once for every schema node of the walk.
    schema_type: ApiType,
    /// The path of the current position, grown and truncated as the walk goes.
    path: String,
    /// Where the last key pushed starts in `path` (list indexes count as part of their key).
    name_start: usize,
    findings: Vec<Dropped>,
}

impl<'s> Walker<'s> {
    fn new(allowed_keys: &'s [String], schema_type: ApiType, path: String) -> Self {
        Walker {
            allowed_keys,
            schema_type,
            path,
            name_start: 0,
            findings: Vec::new(),
        }
    }

    fn push_key(&mut self, key: &str) -> usize {
        let mark = self.path.len();
        if !self.path.is_empty() {
            self.path.push('.');
        }
        self.name_start = self.path.len();
        self.path.push_str(key);
        mark
    }

    fn push_index(&mut self, index: usize) -> usize {
        let mark = self.path.len();
        self.path.push_str(&format!("[{index}]"));
        mark
    }

    fn report(&mut self, text: String, brief: impl Into<String>) {
        self.found("unknownField", text, brief.into());
    }

    fn found(&mut self, rule: &'static str, text: String, brief: String) {
        self.findings.push(Dropped {
            rule,
            path: self.path.clone(),
            text,
            brief,
        });
    }

    fn too_deep(&mut self) {
        self.found(
            "tooDeep",
            format!(
                "nesting deeper than {MAX_DEPTH} levels; not checked beyond (no real CRD nests this deep: flatten the schema)"
            ),
            "nesting deeper than 100 levels, not checked beyond".to_string(),
        );
    }

    /// An object of an API type.
    fn typed(&mut self, node: &Node, ty: ApiType) {
        let entries = match node {
            Node::Object(entries) => entries,
            Node::TooDeep => return self.too_deep(),
            _ => return,
        };
        for (key, value) in entries {
            let mark = self.push_key(key);
            self.typed_member(key, value, ty);
            self.path.truncate(mark);
        }
    }

    /// The member `key` of an object of API type `ty` (the path ends with the key).
    fn typed_member(&mut self, key: &str, value: &Node, ty: ApiType) {
        match ty.field(key) {
            Some(field) => self.field(value, field, ty),
            None => self.unknown(key, ty),
        }
    }

    /// How the values of `leaf` (a member of `owner`) are walked; `None` for scalars and free-form
    /// values (apiextensions' JSON, FieldsV1), which are not looked into. A struct without members
    /// (CustomResourceSubresourceStatus) is walked like any other: Go's decoder drops every key
    /// of it. The schema unions (JSONSchemaPropsOrBool, ...) are members of JSONSchemaProps only,
    /// which [`Walker::schema`] reads by name.
    fn walk_of(&self, leaf: Leaf, owner: ApiType) -> Option<Walk> {
        let ty = match leaf {
            Leaf::Object(ty) => ty,
            // The kind's own status (the CRD's: the only kind walked).
            Leaf::Status => owner.status_type()?,
            _ => return None,
        };
        Some(if ty == self.schema_type {
            Walk::Schema
        } else {
            Walk::Typed(ty)
        })
    }

    /// A member's value; free-form values are not looked into, not even when cut off.
    fn field(&mut self, value: &Node, field: ApiField, owner: ApiType) {
        let Some(walk) = self.walk_of(field.leaf, owner) else {
            return;
        };
        match (field.form, value) {
            (_, Node::TooDeep) => self.too_deep(),
            (Form::Value | Form::Pointer, _) => self.descend(value, walk),
            (Form::List, Node::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    let mark = self.push_index(i);
                    self.descend(item, walk);
                    self.path.truncate(mark);
                }
            }
            (Form::Map, Node::Object(entries)) => {
                for (key, item) in entries {
                    let mark = self.push_key(key);
                    self.descend(item, walk);
                    self.path.truncate(mark);
                }
            }
            // Values of the wrong JSON type are the API server's to refuse; maps of lists hold
            // only strings (the `extra` of user infos), which are never walked.
            _ => {}
        }
    }

    fn descend(&mut self, node: &Node, walk: Walk) {
        match walk {
            Walk::Schema => self.schema(node, None),
            Walk::Typed(ty) => self.typed(node, ty),
        }
    }

    /// A key the type does not declare.
    fn unknown(&mut self, key: &str, ty: ApiType) {
        if self.allowed_keys.iter().any(|k| k == key) {
            return;
        }
        match near_miss(key, ty) {
            Some(valid) => {
                let text = format!("unknown field, dropped by the API server: did you mean `{valid}`?");
                self.report(text.clone(), text);
            }
            None => self.report(
                "unknown field, dropped by the API server: remove it".to_string(),
                "unknown field, dropped by the API server: remove it",
            ),
        }
    }

    /// A JSONSchemaProps node; `enclosing` is the nearest array schema around it.
    fn schema<'a>(&mut self, node: &'a Node, enclosing: Option<ArrayContext<'a>>) {
        let entries = match node {
            Node::Object(entries) => entries,
            Node::TooDeep => return self.too_deep(),
            _ => return,
        };
        #[cfg(test)]
        crate::check::shared_walk::visits::schema_node(entries);
        let here = self.here(node);
        for (key, value) in entries {
            let mark = self.push_key(key);
            self.schema_member(node, here, enclosing, key, value);
            self.path.truncate(mark);
        }
    }

    /// `node` as the nearest array schema of what it nests, at the current path.
    fn here<'a>(&self, node: &'a Node<'a>) -> ArrayContext<'a> {
        ArrayContext {
            node,
            name_start: self.name_start.min(self.path.len()),
            path_len: self.path.len(),
        }
    }

    /// The member `key` of schema `node` (the path ends with the key); `here` is `node` as an
    /// array context, `enclosing` the nearest array schema around it.
    fn schema_member<'a>(
        &mut self,
        node: &'a Node,
        here: ArrayContext<'a>,
        enclosing: Option<ArrayContext<'a>>,
        key: &str,
        value: &'a Node,
    ) {
        let schema_type = self.schema_type;
        match Nest::of(key) {
            Some(Nest::Map { enclosing: keeps }) => self.schema_map(value, if keeps { enclosing } else { None }),
            Some(Nest::Items) => match value {
                Node::Array(items) => self.schema_list(items, Some(here)),
                _ => self.schema(value, Some(here)),
            },
            Some(Nest::One) => self.schema(value, enclosing),
            Some(Nest::List) => match value {
                Node::Array(items) => self.schema_list(items, enclosing),
                Node::TooDeep => self.too_deep(),
                _ => {}
            },
            Some(Nest::Typed) => {
                if let Some(field) = schema_type.field(key) {
                    self.field(value, field, schema_type);
                }
            }
            // The keys nearly every schema node holds, known without searching the table
            // (a test proves they are JSONSchemaProps fields).
            None if matches!(key, "type" | "description" | "format" | "required" | "enum" | "default") => {}
            None if schema_type.field(key).is_some() => {}
            None => self.undeclared(node, here, enclosing, key),
        }
    }

    /// A key JSONSchemaProps does not declare, of schema `node` (the path ends with the key).
    fn undeclared(&mut self, node: &Node, here: ArrayContext<'_>, enclosing: Option<ArrayContext<'_>>, key: &str) {
        if self.allowed_keys.iter().any(|k| k == key) {
            return;
        }
        if PATCH_KEYS.contains(&key) {
            let text = self.patch_remedy(node, here, enclosing);
            self.report(
                text,
                "strategic-merge-patch marker, dropped by the API server: use x-kubernetes-list-type",
            );
        } else {
            self.unknown(key, self.schema_type);
        }
    }

    /// A map from names to schemas (`properties`, `definitions`, ...).
    fn schema_map<'a>(&mut self, value: &'a Node, enclosing: Option<ArrayContext<'a>>) {
        match value {
            Node::Object(entries) => {
                for (name, schema) in entries {
                    let mark = self.push_key(name);
                    self.schema(schema, enclosing);
                    self.path.truncate(mark);
                }
            }
            Node::TooDeep => self.too_deep(),
            _ => {}
        }
    }

    fn schema_list<'a>(&mut self, items: &'a [Node], enclosing: Option<ArrayContext<'a>>) {
        for (i, item) in items.iter().enumerate() {
            let mark = self.push_index(i);
            self.schema(item, enclosing);
            self.path.truncate(mark);
        }
    }

    /// What to do about a strategic-merge-patch key on schema `node`.
    fn patch_remedy(&self, node: &Node, here: ArrayContext<'_>, enclosing: Option<ArrayContext<'_>>) -> String {
        const WHY: &str = "strategic-merge-patch marker, unsupported in CRDs and dropped by the API server";
        let is_array = node.get("type").and_then(Node::as_str) == Some("array") || node.get("items").is_some();
        let (array, place) = match (is_array, enclosing) {
            (true, _) => (here, "on this array".to_string()),
            (false, Some(outer)) => {
                let name = self.path.get(outer.name_start..outer.path_len).unwrap_or("");
                (outer, format!("on the enclosing array `{name}`"))
            }
            (false, None) => {
                return format!(
                    "{WHY}: remove it (there is no enclosing array to declare `x-kubernetes-list-type` on)"
                );
            }
        };
        if let Some(list_type) = array.node.get("x-kubernetes-list-type").and_then(Node::as_str) {
            let place = place.strip_prefix("on ").unwrap_or(&place);
            return format!("{WHY}: remove it ({place} already declares `x-kubernetes-list-type: {list_type}`)");
        }
        let merge_key = node.get("x-kubernetes-patch-merge-key").and_then(Node::as_str);
        let items = array.node.get("items");
        let items_type = items.and_then(|i| i.get("type")).and_then(Node::as_str);
        let scalar_items = matches!(items_type, Some("string" | "integer" | "number" | "boolean"))
            || items.and_then(|i| i.get("x-kubernetes-int-or-string")).is_some();
        let object_items = items_type == Some("object") || items.and_then(|i| i.get("properties")).is_some();
        match (scalar_items, object_items, merge_key) {
            (true, _, _) => {
                format!("{WHY}: remove it and declare `x-kubernetes-list-type: set` {place} (its items are scalars)")
            }
            (false, true, Some(key)) => {
                let required = items
                    .and_then(|i| i.get("required"))
                    .is_some_and(|r| matches!(r, Node::Array(names) if names.iter().any(|n| n.as_str() == Some(key))));
                let defaulted = items.and_then(|i| i.at(&["properties", key, "default"])).is_some();
                let note = if required || defaulted {
                    String::new()
                } else {
                    format!(" and list `{key}` in its items' `required` (map keys must be required or have a default)")
                };
                format!(
                    "{WHY}: remove it and declare `x-kubernetes-list-type: map` with `x-kubernetes-list-map-keys: [{key}]` {place}{note}"
                )
            }
            (false, true, None) => format!(
                "{WHY}: remove it and declare `x-kubernetes-list-type: map` with `x-kubernetes-list-map-keys` naming the item fields that identify an entry {place}"
            ),
            (false, false, _) => format!(
                "{WHY}: remove it and declare {place} `x-kubernetes-list-type: map` with `x-kubernetes-list-map-keys: [{}]` if its items are objects, or `x-kubernetes-list-type: set` if they are scalars",
                merge_key.unwrap_or("<key field>")
            ),
        }
    }
}

/// The valid key `key` most likely misspells: within one edit, or two edits of a key of four
/// or more characters (so `foo` does not suggest `not`); ties go to the first in name order.
fn near_miss(key: &str, ty: ApiType) -> Option<&'static str> {
    let mut best: Option<(usize, &'static str)> = None;
    for field in ty.fields() {
        let distance = distance(key, field.name);
        let close = distance == 1 || (distance == 2 && field.name.len() >= 4);
        if close && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, field.name));
        }
    }
    best.map(|(_, name)| name)
}

// ---------------------------------------------------------------------------------------------
// One traversal for crd-schema-fields and sync-drift (the all-in-one).

/// What crd-schema-fields shares of sync-drift's walk (`all_in_one::with_sync_drift`): it
/// judges the object, or the last-applied manifest it checks, as sync-drift walks it.
pub(crate) struct Shared<'s, 't> {
    allowed_keys: &'s [String],
    /// The object, as read.
    object: &'t Node<'t>,
    /// The last-applied manifest crd-schema-fields checks, if any.
    manifest: Option<&'t Node<'t>>,
    /// The findings of the trees judged in sync-drift's walk.
    pub(crate) walked: Walked,
}

impl<'s, 't> Shared<'s, 't> {
    /// crd-schema-fields with `settings` beside sync-drift's walk of `object` or of `manifest`,
    /// the last-applied manifest it checks.
    pub(crate) fn new(settings: &'s Settings, object: &'t Node<'t>, manifest: Option<&'t Node<'t>>) -> Self {
        Shared {
            allowed_keys: &settings.allowed_keys,
            object,
            manifest,
            walked: Walked::default(),
        }
    }
}

impl Beside for Shared<'_, '_> {
    fn walk(
        &mut self,
        applied: &Node<'_>,
        last_applied: bool,
        root: ApiType,
        walk: &mut dyn FnMut(Option<&mut dyn Keys>),
    ) {
        let ours = if last_applied {
            self.manifest.is_some_and(|m| std::ptr::eq(m, applied))
        } else {
            std::ptr::eq(self.object, applied)
        };
        let (Some(crd), Some(schema)) = (
            api_type(PACKAGE, "CustomResourceDefinition"),
            api_type(PACKAGE, "JSONSchemaProps"),
        ) else {
            return walk(None);
        };
        if !ours || root != crd {
            return walk(None);
        }
        let mut judge = Judge {
            root: applied,
            walker: Walker::new(self.allowed_keys, schema, String::new()),
        };
        walk(Some(&mut judge));
        let found = Some(judge.walker.findings);
        if last_applied {
            self.walked.last_applied = found;
        } else {
            self.walked.object = found;
        }
    }
}

/// crd-schema-fields' judgement of the keys sync-drift's walk meets in a CRD ([`Keys`]): a
/// key the walk hands over is judged as [`Walker`] judges it, and a value the walk does not
/// descend into is walked by a [`Walker`] from there. The findings are those of [`walk`] on the
/// same tree (in another order, which [`merge`] does not depend on).
struct Judge<'t, 's> {
    /// The tree walked.
    root: &'t Node<'t>,
    /// The walker at the place of each call, holding the findings.
    walker: Walker<'s>,
}

impl Keys for Judge<'_, '_> {
    fn unknown(&mut self, key: &str, ty: ApiType, place: &dyn Place) {
        let steps = place.steps();
        if ty == self.walker.schema_type && PATCH_KEYS.contains(&key) {
            // The remedy reads the schema node and the array schema around it.
            let parent = &steps[..steps.len().saturating_sub(1)];
            if let Some((node, Mode::Schema(enclosing))) = self.walker.enter(self.root, parent) {
                let here = self.walker.here(node);
                let mark = self.walker.push_key(key);
                self.walker.undeclared(node, here, enclosing, key);
                self.walker.path.truncate(mark);
                return;
            }
        }
        self.walker.set_path(&steps);
        self.walker.unknown(key, ty);
    }

    fn beyond(&mut self, value: &Node<'_>, ty: ApiType, place: &dyn Place) {
        let steps = place.steps();
        if ty == self.walker.schema_type {
            if let Some((node, Mode::Schema(enclosing))) = self.walker.enter(self.root, &steps) {
                self.walker.schema(node, enclosing);
            }
        } else {
            self.walker.set_path(&steps);
            self.walker.typed(value, ty);
        }
    }

    fn beyond_member(&mut self, value: &Node<'_>, field: ApiField, owner: ApiType, place: &dyn Place) {
        self.walker.set_path(&place.steps());
        self.walker.field(value, field, owner);
    }

    fn shadowed(&mut self, entries: Entries<'_, '_>, visited: &Members<'_, '_>, place: &dyn Place) {
        let steps = place.steps();
        let shadowed = entries
            .iter()
            .filter(|(key, value)| !visited.get(key).is_some_and(|kept| std::ptr::eq(kept, value)));
        let walker = &mut self.walker;
        if let Some((node, mode)) = walker.enter(self.root, &steps) {
            // An object of an API type, or a schema node.
            let here = walker.here(node);
            for (key, value) in shadowed {
                let mark = walker.push_key(key);
                match mode {
                    Mode::Typed(ty) => walker.typed_member(key, value, ty),
                    Mode::Schema(enclosing) => walker.schema_member(node, here, enclosing, key, value),
                }
                walker.path.truncate(mark);
            }
            return;
        }
        // A map: a member of an API type, or of a schema node (`properties`, ...).
        let Some((Step::Key(name), parent)) = steps.split_last() else {
            return;
        };
        let Some((_, mode)) = walker.enter(self.root, parent) else {
            return;
        };
        walker.push_key(name);
        let (walk, enclosing) = match mode {
            Mode::Typed(owner) => match owner.field(name).and_then(|field| walker.walk_of(field.leaf, owner)) {
                Some(walk) => (walk, None),
                None => return,
            },
            Mode::Schema(enclosing) => match Nest::of(name) {
                Some(Nest::Map { enclosing: keeps }) => (Walk::Schema, if keeps { enclosing } else { None }),
                _ => return,
            },
        };
        for (key, value) in shadowed {
            let mark = walker.push_key(key);
            match walk {
                Walk::Schema => walker.schema(value, enclosing),
                Walk::Typed(ty) => walker.typed(value, ty),
            }
            walker.path.truncate(mark);
        }
    }
}

impl<'s> Walker<'s> {
    /// Sets the path to `steps` from the root, as the walk pushes them.
    fn set_path(&mut self, steps: &[Step<'_>]) {
        self.path.clear();
        self.name_start = 0;
        for step in steps {
            match *step {
                Step::Key(key) => self.push_key(key),
                Step::Index(i) => self.push_index(i),
            };
        }
    }

    /// Follows `steps` from `root` (a CRD) as [`Walker::typed`] and [`Walker::schema`] descend:
    /// the node there and how the walk reads it (for a schema node, with the nearest array
    /// schema around it, which only the way from the root tells); the path is left at the
    /// place. `None` where the walk does not reach.
    fn enter<'a>(&mut self, root: &'a Node<'a>, steps: &[Step<'_>]) -> Option<(&'a Node<'a>, Mode<'a>)> {
        self.path.clear();
        self.name_start = 0;
        let mut node = root;
        let mut mode = Mode::Typed(api_type(PACKAGE, "CustomResourceDefinition")?);
        let mut steps = steps.iter().copied();
        while let Some(step) = steps.next() {
            let Step::Key(name) = step else {
                return None;
            };
            let value = node.get(name)?;
            let here = self.here(node);
            self.push_key(name);
            let owner = match mode {
                Mode::Typed(ty) => ty,
                Mode::Schema(enclosing) => {
                    let (next, inner) = match Nest::of(name)? {
                        Nest::Typed => {
                            (node, mode) = self.enter_member(value, self.schema_type, name, &mut steps)?;
                            continue;
                        }
                        Nest::Map { enclosing: keeps } => {
                            let Step::Key(member) = steps.next()? else {
                                return None;
                            };
                            self.push_key(member);
                            (value.get(member)?, if keeps { enclosing } else { None })
                        }
                        Nest::Items => match value {
                            Node::Array(items) => (self.enter_index(items, &mut steps)?, Some(here)),
                            _ => (value, Some(here)),
                        },
                        Nest::One => (value, enclosing),
                        Nest::List => match value {
                            Node::Array(items) => (self.enter_index(items, &mut steps)?, enclosing),
                            _ => return None,
                        },
                    };
                    node = next;
                    mode = Mode::Schema(inner);
                    continue;
                }
            };
            (node, mode) = self.enter_member(value, owner, name, &mut steps)?;
        }
        Some((node, mode))
    }

    /// [`Walker::enter`] through `value`, the member `name` of an object of type `owner`, as
    /// [`Walker::field`] descends.
    fn enter_member<'a, 'p>(
        &mut self,
        value: &'a Node<'a>,
        owner: ApiType,
        name: &str,
        steps: &mut impl Iterator<Item = Step<'p>>,
    ) -> Option<(&'a Node<'a>, Mode<'a>)> {
        let field = owner.field(name)?;
        let walk = self.walk_of(field.leaf, owner)?;
        let next = match (field.form, value) {
            (Form::Value | Form::Pointer, _) => value,
            (Form::List, Node::Array(items)) => self.enter_index(items, steps)?,
            (Form::Map, Node::Object(_)) => {
                let Step::Key(key) = steps.next()? else {
                    return None;
                };
                self.push_key(key);
                value.get(key)?
            }
            _ => return None,
        };
        let mode = match walk {
            Walk::Schema => Mode::Schema(None),
            Walk::Typed(ty) => Mode::Typed(ty),
        };
        Some((next, mode))
    }

    /// [`Walker::enter`] into the item of `items` the next step names.
    fn enter_index<'a, 'p>(
        &mut self,
        items: &'a [Node<'a>],
        steps: &mut impl Iterator<Item = Step<'p>>,
    ) -> Option<&'a Node<'a>> {
        let Step::Index(i) = steps.next()? else {
            return None;
        };
        self.push_index(i);
        items.get(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::Response;
    use crate::all_in_one::with_sync_drift;
    use crate::checks::sync_drift::SyncDrift;
    use crate::render::{Annotation, FINDINGS_ANNOTATION};

    /// How many findings an answer counts.
    fn total(verdict: &Response) -> usize {
        serde_json::from_str::<Annotation>(&verdict.audit_annotations[FINDINGS_ANNOTATION])
            .unwrap()
            .total
    }
    use crate::check::{decide, parse_settings};
    use crate::checks::sync_drift;
    use crate::cluster::NoCluster;
    use serde_json::{Value, json};

    /// The JSONSchemaProps keys listed in docs/problems.md#1-crd-schema-fields-the-api-server-silently-drops.
    const PROBLEMS_SCHEMA_KEYS: &str = "id $schema $ref description type format title default maximum exclusiveMaximum minimum \
        exclusiveMinimum maxLength minLength pattern maxItems minItems uniqueItems multipleOf enum \
        maxProperties minProperties required items allOf oneOf anyOf not properties \
        additionalProperties patternProperties dependencies additionalItems definitions \
        externalDocs example nullable x-kubernetes-preserve-unknown-fields \
        x-kubernetes-embedded-resource x-kubernetes-int-or-string x-kubernetes-list-map-keys \
        x-kubernetes-list-type x-kubernetes-map-type x-kubernetes-validations";

    fn ty(name: &str) -> ApiType {
        api_type(PACKAGE, name).unwrap_or_else(|| panic!("no {PACKAGE}.{name}"))
    }

    fn field_names(type_name: &str) -> Vec<&'static str> {
        let mut names: Vec<_> = ty(type_name).fields().map(|f| f.name).collect();
        names.sort_unstable();
        names
    }

    fn sorted(list: &str) -> Vec<&str> {
        let mut names: Vec<_> = list.split_whitespace().collect();
        names.sort_unstable();
        names
    }

    #[test]
    fn generated_field_sets_match_the_api() {
        assert_eq!(field_names("JSONSchemaProps"), sorted(PROBLEMS_SCHEMA_KEYS));
        assert_eq!(
            field_names("ValidationRule"),
            sorted("rule message messageExpression reason fieldPath optionalOldSelf")
        );
        assert_eq!(field_names("ExternalDocumentation"), sorted("description url"));
        // The CRD's own status, which the table lists for this check.
        assert_eq!(
            ty("CustomResourceDefinition").status_type(),
            Some(ty("CustomResourceDefinitionStatus"))
        );
        assert_eq!(
            field_names("CustomResourceDefinitionStatus"),
            sorted("conditions acceptedNames storedVersions observedGeneration")
        );
    }

    fn crd(schema: Value) -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "names": {"kind": "Widget", "plural": "widgets"},
                "scope": "Namespaced",
                "versions": [{"name": "v1", "served": true, "storage": true,
                              "schema": {"openAPIV3Schema": schema}}]
            }
        })
    }

    fn findings(object: &Value) -> Vec<Dropped> {
        walk(&parse_node(&object.to_string()).unwrap(), &[])
    }

    fn paths(object: &Value) -> Vec<String> {
        findings(object).into_iter().map(|f| f.path).collect()
    }

    const ROOT: &str = "spec.versions[0].schema.openAPIV3Schema";

    fn run(object: &Value, settings: Value) -> Response {
        let payload = syncguard_testkit::payload(&syncguard_testkit::crd_request("CREATE", object, None), &settings);
        decide::<CrdSchemaFields>(payload.as_bytes(), &NoCluster)
    }

    #[test]
    fn follows_every_schema_position() {
        let bad = json!({"type": "string", "bogusKey": 1});
        let schema = json!({
            "type": "object",
            "properties": {"a.b/c": bad, "list": {"type": "array", "items": bad}},
            "patternProperties": {"^x": bad},
            "definitions": {"d": bad},
            "dependencies": {"dep": bad, "names": ["a", "b"]},
            "additionalProperties": bad,
            "additionalItems": false,
            "allOf": [bad], "anyOf": [bad], "oneOf": [bad],
            "not": bad,
            "x-kubernetes-validations": [{"rule": "true", "messsage": "m"}],
            "externalDocs": {"url": "u", "link": "l"},
            "default": {"bogusKey": "free-form values are not checked"},
            "example": {"bogusKey": 1},
            "enum": [{"bogusKey": 1}],
        });
        let mut tuple = schema.clone();
        tuple["items"] = json!([bad, {"type": "integer"}]);
        let mut got = paths(&crd(schema));
        got.sort();
        let mut want: Vec<String> = [
            "properties.a.b/c.bogusKey",
            "properties.list.items.bogusKey",
            "patternProperties.^x.bogusKey",
            "definitions.d.bogusKey",
            "dependencies.dep.bogusKey",
            "additionalProperties.bogusKey",
            "allOf[0].bogusKey",
            "anyOf[0].bogusKey",
            "oneOf[0].bogusKey",
            "not.bogusKey",
            "x-kubernetes-validations[0].messsage",
            "externalDocs.link",
        ]
        .iter()
        .map(|p| format!("{ROOT}.{p}"))
        .collect();
        want.sort();
        assert_eq!(got, want);
        assert!(paths(&crd(tuple)).contains(&format!("{ROOT}.items[0].bogusKey")));
    }

    #[test]
    fn checks_the_typed_parts_of_the_crd() {
        let mut object = crd(json!({"type": "object"}));
        object["spec"]["versions"][0]["subresource"] = json!({"status": {}});
        object["spec"]["versions"][0]["subresources"] =
            json!({"status": {"anything": 1}, "scale": {"specReplicaPath": "x"}});
        object["spec"]["versions"][0]["additionalPrinterColumns"] =
            json!([{"name": "A", "type": "string", "jsonPath": ".a", "colour": "red"}]);
        object["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {"clientConfig": {"service": {"name": "s", "namespace": "n", "prot": 443}}}});
        object["metadata"]["managedFields"] = json!([{"manager": "m", "fieldsV1": {"f:spec": {}}}]);
        object["status"] = json!({"storedVersions": ["v1"], "acceptedNames": {"kind": "Widget", "plural": "widgets", "listkind": "x"},
            "conditions": [{"type": "Established", "status": "True", "observedGeneration": 1}], "observedGeneration": 1});
        let found = findings(&object);
        let mut got: Vec<(&str, &str)> = found.iter().map(|f| (f.path.as_str(), f.text.as_str())).collect();
        got.sort();
        assert_eq!(
            got,
            vec![
                (
                    "spec.conversion.webhook.clientConfig.service.prot",
                    "unknown field, dropped by the API server: did you mean `port`?"
                ),
                (
                    "spec.versions[0].additionalPrinterColumns[0].colour",
                    "unknown field, dropped by the API server: remove it"
                ),
                (
                    "spec.versions[0].subresource",
                    "unknown field, dropped by the API server: did you mean `subresources`?"
                ),
                (
                    "spec.versions[0].subresources.scale.specReplicaPath",
                    "unknown field, dropped by the API server: did you mean `specReplicasPath`?"
                ),
                // CustomResourceSubresourceStatus has no members: Go's decoder drops every key.
                (
                    "spec.versions[0].subresources.status.anything",
                    "unknown field, dropped by the API server: remove it"
                ),
                (
                    "status.acceptedNames.listkind",
                    "unknown field, dropped by the API server: did you mean `listKind`?"
                ),
            ]
        );
    }

    #[test]
    fn findings_follow_document_order() {
        // Keys deliberately out of alphabetical order: the walk keeps the manifest's order.
        let text = r#"{"spec":{"versions":[{"schema":{"openAPIV3Schema":{"zeta":1,
            "properties":{"b":{"minLenght":1},"a":{"x-kubernetes-list-typ":"set"}},"alpha":2}}}]},"kind2":1}"#;
        let found = walk(&parse_node(text).unwrap(), &[]);
        let got: Vec<&str> = found.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            got,
            [
                format!("{ROOT}.zeta"),
                format!("{ROOT}.properties.b.minLenght"),
                format!("{ROOT}.properties.a.x-kubernetes-list-typ"),
                format!("{ROOT}.alpha"),
                "kind2".to_string(),
            ]
        );
        assert!(found[1].text.ends_with("did you mean `minLength`?"));
        assert!(found[2].text.ends_with("did you mean `x-kubernetes-list-type`?"));
        assert!(found[4].text.ends_with("did you mean `kind`?"));
    }

    #[test]
    fn near_misses() {
        let schema = ty("JSONSchemaProps");
        assert_eq!(near_miss("minLenght", schema), Some("minLength"));
        assert_eq!(
            near_miss("x-kubernetes-list-typ", schema),
            Some("x-kubernetes-list-type")
        );
        assert_eq!(near_miss("tpye", schema), Some("type"));
        assert_eq!(near_miss("foo", schema), None);
        assert_eq!(near_miss("readOnly", schema), None);
    }

    #[test]
    fn patch_key_remedies() {
        // Kube-OVN's form: on the `key` property of the items of an array of objects.
        let kube_ovn = json!({"type": "object", "properties": {"matchExpressions": {
            "type": "array",
            "items": {"type": "object", "required": ["key", "operator"], "properties": {
                "key": {"type": "string", "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "key"},
                "operator": {"type": "string"}}}}}});
        let found = findings(&crd(kube_ovn));
        let key = format!("{ROOT}.properties.matchExpressions.items.properties.key");
        let got: Vec<&str> = found.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            got,
            [
                format!("{key}.x-kubernetes-patch-merge-key"),
                format!("{key}.x-kubernetes-patch-strategy")
            ]
        );
        for finding in &found {
            assert!(
                finding.text.ends_with(
                    "remove it and declare `x-kubernetes-list-type: map` with `x-kubernetes-list-map-keys: [key]` on the enclosing array `matchExpressions`"
                ),
                "{}",
                finding.text
            );
        }
        // controller-gen's form: on the array itself, scalar items.
        let finalizers = json!({"properties": {"finalizers": {"type": "array", "items": {"type": "string"}, "x-kubernetes-patch-strategy": "merge"}}});
        let found = findings(&crd(finalizers));
        assert!(
            found[0]
                .text
                .ends_with("declare `x-kubernetes-list-type: set` on this array (its items are scalars)"),
            "{}",
            found[0].text
        );
        // On the array, object items, merge key not required.
        let pending = json!({"properties": {"pending": {"type": "array", "x-kubernetes-patch-merge-key": "name",
            "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}});
        let found = findings(&crd(pending));
        assert!(found[0].text.ends_with(
            "`x-kubernetes-list-map-keys: [name]` on this array and list `name` in its items' `required` (map keys must be required or have a default)"
        ), "{}", found[0].text);
        // Already fixed array, leftover key.
        let fixed = json!({"properties": {"l": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}, "x-kubernetes-patch-strategy": "merge"}}});
        assert!(
            findings(&crd(fixed))[0]
                .text
                .ends_with("remove it (this array already declares `x-kubernetes-list-type: set`)")
        );
        // No array anywhere.
        let lone = json!({"properties": {"o": {"type": "object", "x-kubernetes-patch-strategy": "merge"}}});
        assert!(findings(&crd(lone))[0].text.contains("there is no enclosing array"));
    }

    #[test]
    fn allowed_keys_are_tolerated_everywhere() {
        let mut object = crd(json!({"x-kubernetes-patch-strategy": "merge", "x-acme": 1}));
        object["spec"]["x-acme"] = json!(1);
        let verdict = run(
            &object,
            json!({"allowedKeys": ["x-acme", "x-kubernetes-patch-strategy"]}),
        );
        assert!(verdict.accepted, "{verdict:?}");
        let verdict = run(&object, json!({"allowedKeys": ["x-acme"]}));
        assert!(!verdict.accepted);
        assert_eq!(total(&verdict), 1);
    }

    fn with_last_applied(object: &mut Value, manifest: &Value) {
        object["metadata"]["annotations"] = json!({ LAST_APPLIED: format!("{manifest}\n") });
    }

    #[test]
    fn both_places_are_reported_once_ordered_by_path() {
        let manifest =
            crd(json!({"properties": {"a": {"type": "string", "typo1": 1}, "b": {"type": "string", "typo2": 1}}}));
        let mut object =
            crd(json!({"properties": {"a": {"type": "string", "typo1": 1}, "c": {"type": "string", "typo3": 1}}}));
        with_last_applied(&mut object, &manifest);
        let verdict = run(&object, json!({}));
        let message = verdict.message.unwrap();
        let lines: Vec<&str> = message.lines().skip(1).collect();
        assert_eq!(lines.len(), 3, "{message}");
        assert!(lines[0].starts_with(&format!("- {ROOT}.properties.a.typo1 (in the object and last-applied)")));
        assert!(lines[1].starts_with(&format!("- {ROOT}.properties.b.typo2 (in last-applied)")));
        assert!(lines[2].starts_with(&format!("- {ROOT}.properties.c.typo3 (in the object)")));
        assert!(message.starts_with("CustomResourceDefinition widgets.example.com: 3 fields the API server drops."));
    }

    /// JSON text of `value` with every object's keys in reverse order: the same value, which
    /// [`read_manifest`] cannot match member for member.
    fn reversed(value: &Value) -> String {
        match value {
            Value::Object(map) => {
                let members: Vec<String> = map
                    .iter()
                    .rev()
                    .map(|(k, v)| format!("{}:{}", json!(k), reversed(v)))
                    .collect();
                format!("{{{}}}", members.join(","))
            }
            Value::Array(items) => format!("[{}]", items.iter().map(reversed).collect::<Vec<_>>().join(",")),
            _ => value.to_string(),
        }
    }

    /// The verdict on `object` with `annotation` as its last-applied manifest, and whether the
    /// manifest's `spec` was taken as the object's rather than built.
    fn with_annotation(object: &Value, annotation: &str) -> (Response, bool) {
        let mut object = object.clone();
        object["metadata"]["annotations"] = json!({ LAST_APPLIED: annotation });
        let text = object.to_string();
        let tree = parse_node(&text).unwrap();
        let (manifest, _) = read_manifest(&tree, annotation, MAX_DEPTH).unwrap();
        (run(&object, json!({})), spec_is_the_objects(&manifest))
    }

    #[test]
    fn a_manifest_holding_the_objects_spec_says_what_it_would_say_read_whole() {
        // Kube-OVN's CRD (findings in its `spec`) and one with a typo, each as a CREATE whose
        // last-applied manifest is its own: the spec is not built again, and the answer is the
        // one of the same manifest read whole (its keys in another order).
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/policies/crd-schema-fields/test_data/kube-ovn-fixed.json"
        );
        let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let typo = crd(json!({"properties": {"a": {"type": "string", "typo1": 1, "description": "a <b> & c"}}}));
        for object in [&fixture["object"], &typo] {
            let mut manifest = object.clone();
            manifest["metadata"].as_object_mut().unwrap().remove("annotations");
            let (skipped, same) = with_annotation(object, &manifest.to_string());
            assert!(same);
            let (whole, same) = with_annotation(object, &reversed(&manifest));
            assert!(!same);
            assert_eq!(skipped, whole);
        }
        let (verdict, _) = with_annotation(&typo, &typo.to_string());
        let message = verdict.message.unwrap();
        assert!(
            message.contains(&format!("- {ROOT}.properties.a.typo1 (in the object and last-applied)")),
            "{message}"
        );
        // One byte apart, in a value or in a key: read whole, and its own findings still come.
        for (from, to, said) in [
            ("a <b> & c", "a <b> & d", "typo1 (in the object and last-applied)"),
            ("typo1", "typo2", "typo2 (in last-applied)"),
        ] {
            let annotation = typo.to_string().replace(from, to);
            let (verdict, same) = with_annotation(&typo, &annotation);
            assert!(!same, "{annotation}");
            let message = verdict.message.unwrap();
            assert!(message.contains(&format!("- {ROOT}.properties.a.{said}")), "{message}");
        }
        // An object with a member named as a path under `spec` (hostile): read whole.
        let mut odd = typo.clone();
        odd["spec.x"] = json!(1);
        let (verdict, same) = with_annotation(&odd, &typo.to_string());
        assert!(!same);
        assert!(verdict.message.unwrap().contains("- spec.x (in the object)"));
    }

    #[test]
    fn unusable_last_applied_gives_a_warning() {
        let cases = [
            (json!("{not json"), "is not JSON"),
            (json!(42), "is not a string"),
            (json!("[1,2]"), "records kind (none) (apiVersion (none))"),
            (
                json!(r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"widgets.example.com"}}"#),
                "records kind ConfigMap (apiVersion v1)",
            ),
            (
                json!(r#"{"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"CustomResourceDefinition"}"#),
                "records kind CustomResourceDefinition (apiVersion apiextensions.k8s.io/v1beta1)",
            ),
            (
                json!(
                    r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gadgets.example.com"},"spec":{"bogus":1}}"#
                ),
                "records the manifest of \"gadgets.example.com\"",
            ),
        ];
        for (annotation, expected) in cases {
            let mut object = crd(json!({"type": "object"}));
            object["metadata"]["annotations"] = json!({ LAST_APPLIED: annotation });
            let verdict = run(&object, json!({}));
            assert!(verdict.accepted, "{verdict:?}");
            assert_eq!(verdict.warnings.len(), 1);
            assert!(
                verdict.warnings[0].contains(expected),
                "{} lacks {expected}",
                verdict.warnings[0]
            );
        }
    }

    fn nested_not(levels: usize, leaf: &str) -> String {
        format!("{}{leaf}{}", r#"{"not":"#.repeat(levels), "}".repeat(levels))
    }

    #[test]
    fn hostile_nesting_is_a_finding_not_a_trap() {
        // 100 000 levels: far beyond any native stack.
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        assert!(matches!(parse_node(&deep), Ok(Node::Array(_))));
        let schema = nested_not(5_000, r#"{"type":"string"}"#);
        let object = crd(json!({"type": "object", "x-kubernetes-patch-strategy": "merge"}))
            .to_string()
            .replace(
                r#""type":"object","#,
                &format!(r#""type":"object","properties":{{"deep":{schema}}},"#),
            );
        // serde_json cannot build a Value this deep, so the payload is written as text.
        let payload = format!(
            r#"{{"request":{{"uid":"u","kind":{{"group":"apiextensions.k8s.io","version":"v1","kind":"CustomResourceDefinition"}},"resource":{{"group":"apiextensions.k8s.io","version":"v1","resource":"customresourcedefinitions"}},"operation":"CREATE","object":{object}}},"settings":{{}}}}"#
        );
        let verdict = decide::<CrdSchemaFields>(payload.as_bytes(), &NoCluster);
        let message = verdict.message.expect("rejected");
        assert!(message.contains(": 2 fields the API server drops."), "{message}");
        assert!(
            message.contains(&format!(
                "{ROOT}.properties.deep{} (in the object): nesting deeper than 100 levels; not checked beyond",
                ".not".repeat(MAX_DEPTH - 7)
            )),
            "{message}"
        );
        assert!(message.contains(&format!("{ROOT}.x-kubernetes-patch-strategy (in the object)")));
    }

    /// A CRD request as text (keys given twice stay so).
    fn request_text(operation: &str, object: &str) -> String {
        format!(
            r#"{{"request":{{"uid":"u","kind":{{"group":"apiextensions.k8s.io","version":"v1","kind":"CustomResourceDefinition"}},"resource":{{"group":"apiextensions.k8s.io","version":"v1","resource":"customresourcedefinitions"}},"operation":"{operation}","object":{object}}},"settings":{{}}}}"#
        )
    }

    /// The schema nodes a run visits: how many, and whether one was visited twice.
    fn visited(run: impl FnOnce()) -> (usize, bool) {
        use crate::check::shared_walk::visits;
        visits::take();
        run();
        let mut nodes = visits::take();
        let count = nodes.len();
        nodes.sort_unstable();
        nodes.dedup();
        (count, nodes.len() != count)
    }

    /// Runs the two checks on `payload` in one traversal ([`with_sync_drift`]) and one after the
    /// other: the same reports. With `one_tree` (both walk the tree sync-drift walks), the
    /// traversal visits no schema node twice, and only those crd-schema-fields alone visits,
    /// where sync-drift alone visits some again; else, the nodes of both.
    fn one_traversal(payload: &str, schema_fields: Value, drift: Value, one_tree: bool) {
        let read = crate::check::read_request::<CrdSchemaFields>(payload.as_bytes()).unwrap();
        let request = &read.request;
        // Each run reads the request's objects afresh, as a module instance does.
        let objects = || crate::check::Objects::new(request.object.unwrap(), request.old_object);
        let schema_fields: Settings = serde_json::from_value(schema_fields).unwrap();
        let drift: sync_drift::Settings = serde_json::from_value(drift).unwrap();
        let mut shared = None;
        let (once, twice) = visited(|| {
            shared = Some(with_sync_drift(request, &objects(), &schema_fields, &drift, &NoCluster));
        });
        let mut alone = None;
        let (schema_alone, _) =
            visited(|| alone = Some(CrdSchemaFields::check(request, &objects(), &schema_fields, &NoCluster)));
        let mut drift_alone = None;
        let (drift_count, _) =
            visited(|| drift_alone = Some(SyncDrift::check(request, &objects(), &drift, &NoCluster)));
        let (shared, alone) = (shared.unwrap(), (alone.unwrap(), drift_alone.unwrap()));
        let paths = |report: &Result<Report, Malformed>| match report {
            Ok(report) => report.findings.iter().map(|f| f.path.clone()).collect::<Vec<_>>(),
            Err(Malformed(message)) => vec![message.clone()],
        };
        assert_eq!(paths(&shared.0), paths(&alone.0), "{payload}");
        assert_eq!(paths(&shared.1), paths(&alone.1), "{payload}");
        assert_eq!(format!("{:#?}", shared.0), format!("{:#?}", alone.0), "{payload}");
        assert_eq!(format!("{:#?}", shared.1), format!("{:#?}", alone.1), "{payload}");
        if one_tree {
            // (Where each check reads its own tree, one may reuse the other's memory.)
            assert!(!twice, "a schema node visited twice: {payload}");
            assert!(drift_count > 0, "{payload}");
            assert_eq!(once, schema_alone, "{payload}");
        } else {
            assert_eq!(once, schema_alone + drift_count, "{payload}");
        }
    }

    /// A CRD manifest with findings everywhere the walks part: keys given twice (and out of
    /// order), patch markers inside and on arrays, the CRD's `status` and a version's
    /// `subresources.status`, schemas under `allOf`, `not` and `definitions`.
    const MANIFEST: &str = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
        "metadata":{"name":"widgets.example.com"},
        "spec":{"group":"example.com","names":{"kind":"Widget","plural":"widgets","singlar":"w"},
          "names":{"kind":"Widget","plural":"widgets","lstKind":"WidgetList"},"scope":"Namespaced",
          "versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{"anything":1}},
            "schema":{"openAPIV3Schema":{"type":"object","x-acme":1,"properties":{"spec":{"type":"object","properties":{
              "list":{"type":"array","items":{"type":"object","required":["key"],"properties":{"key":{"type":"string",
                "x-kubernetes-patch-strategy":"merge","x-kubernetes-patch-merge-key":"key"}}}},
              "fins":{"type":"array","items":{"type":"string"},"x-kubernetes-patch-strategy":"merge"},
              "dup":{"type":"string","tpye":"x","items":{"type":"array","x-kubernetes-patch-merge-key":"k","items":{"type":"object"}}},
              "dup":{"type":"integer","minLenght":1},
              "any":{"allOf":[{"not":{"bogus":1,"properties":{"deep":{"x-kubernetes-patch-strategy":"merge"}}}}]}}}},
              "definitions":{"d":{"x-kubernetes-patch-strategy":"merge"}}}}}]},
        "status":{"acceptedNames":{"kind":"Widget","listkind":"x"},"storedVersions":["v1"]}}"#;

    /// `manifest` as the API server holds it after applying it: live, pruned, the manifest in
    /// its last-applied annotation.
    fn live(manifest: &str, annotation: &str) -> String {
        let recorded = serde_json::to_string(annotation).unwrap();
        format!(
            r#"{{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
            "metadata":{{"name":"widgets.example.com","uid":"1","annotations":{{"{LAST_APPLIED}":{recorded}}}}},
            "spec":{{"group":"example.com","names":{{"kind":"Widget","plural":"widgets"}},"scope":"Namespaced",
              "versions":[{{"name":"v1","served":true,"storage":true,"schema":{{"openAPIV3Schema":{{"type":"object",
                "properties":{{"spec":{{"type":"object","properties":{{"fins":{{"type":"array","items":{{"type":"string"}},"bogus":2}}}}}}}}}}}}}}]}},
            "status":{{"acceptedNames":{{"kind":"Widget"}},"storedVersions":["v1"],"x":1}},"ignored":{manifest}}}"#
        )
    }

    #[test]
    fn one_traversal_for_both_checks_answers_as_each_alone() {
        let defaults = || json!({});
        // A manifest: one tree, walked once.
        one_traversal(&request_text("CREATE", MANIFEST), defaults(), defaults(), true);
        one_traversal(
            &request_text("CREATE", MANIFEST),
            json!({"allowedKeys": ["x-acme", "x-kubernetes-patch-strategy"], "maxFindings": 3}),
            json!({"tools": ["flux"], "kubernetesVersion": "1.20"}),
            true,
        );
        // A live object: crd-schema-fields walks it alone; last-applied, which the live object
        // lacks most of, is walked once for both.
        let manifest: String = MANIFEST.split_whitespace().collect::<Vec<_>>().join(" ");
        for operation in ["UPDATE", "CREATE"] {
            let object = live(&manifest, &manifest);
            one_traversal(&request_text(operation, &object), defaults(), defaults(), true);
            one_traversal(
                &request_text(operation, &object),
                json!({"checkLastApplied": false}),
                defaults(),
                false,
            );
        }
        // Last-applied that only sync-drift compares (no name), or neither (not JSON, another
        // kind); no last-applied.
        let nameless = manifest.replace(r#""name":"widgets.example.com""#, r#""name":"""#);
        for annotation in [
            nameless.as_str(),
            "{not json",
            r#"{"apiVersion":"v1","kind":"ConfigMap"}"#,
        ] {
            one_traversal(
                &request_text("UPDATE", &live(&manifest, annotation)),
                defaults(),
                defaults(),
                false,
            );
        }
        let unannotated = live(&manifest, "").replace(
            r#""annotations":{"kubectl.kubernetes.io/last-applied-configuration":""}"#,
            r#""annotations":{}"#,
        );
        one_traversal(&request_text("UPDATE", &unannotated), defaults(), defaults(), false);
        // Nested deeper than crd-schema-fields reads (each check reads its own), or than
        // serde_json reads; shapes that are no CRD.
        for levels in [80, 95, 200] {
            let deep = MANIFEST.replace(
                r#""bogus":1,"#,
                &format!(r#""bogus":1,"properties":{{"n":{}}},"#, nested_not(levels, "{}")),
            );
            one_traversal(&request_text("CREATE", &deep), defaults(), defaults(), levels == 80);
            let object = live(&deep.split_whitespace().collect::<Vec<_>>().join(" "), &deep);
            one_traversal(&request_text("UPDATE", &object), defaults(), defaults(), levels == 80);
        }
        for object in [
            r#""a string""#,
            r#"{"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"CustomResourceDefinition","spec":{"bogus":1}}"#,
        ] {
            one_traversal(&request_text("CREATE", object), defaults(), defaults(), false);
        }
    }

    #[test]
    fn common_schema_keys_are_schema_fields() {
        for key in ["type", "description", "format", "required", "enum", "default"] {
            assert!(ty("JSONSchemaProps").field(key).is_some(), "{key}");
        }
    }

    #[test]
    fn free_form_values_are_not_read_even_when_cut_off() {
        let member = |owner: ApiType, name: &str| (owner.field(name).unwrap(), owner);
        let entry = api_type("meta/v1", "ManagedFieldsEntry").unwrap();
        let mut walker = Walker::new(&[], ty("JSONSchemaProps"), "metadata.managedFields[0].fieldsV1".into());
        let free = [
            member(entry, "fieldsV1"),
            member(entry, "manager"),
            member(ty("JSONSchemaProps"), "default"),
        ];
        for (field, owner) in free {
            walker.field(&Node::TooDeep, field, owner);
        }
        assert!(walker.findings.is_empty());
        let read = [
            member(ty("CustomResourceValidation"), "openAPIV3Schema"),
            member(ty("JSONSchemaProps"), "x-kubernetes-validations"),
            member(ty("CustomResourceDefinition"), "status"),
            member(ty("CustomResourceSubresources"), "status"),
        ];
        for (field, owner) in read {
            walker.field(&Node::TooDeep, field, owner);
        }
        assert_eq!(walker.findings.len(), 4);
    }

    #[test]
    fn reject_message_is_capped() {
        let properties: serde_json::Map<String, Value> = (0..5)
            .map(|i| (format!("p{i}"), json!({"type": "string", "readOnly": true})))
            .collect();
        let object = crd(json!({"type": "object", "properties": properties}));
        let verdict = run(&object, json!({"maxFindings": 2}));
        let message = verdict.message.clone().unwrap();
        assert_eq!(message.lines().count(), 4, "{message}");
        assert!(message.contains(": 5 fields the API server drops."));
        assert!(message.ends_with("\nand 3 more"));
        assert_eq!(total(&verdict), 5);
        let warned = run(&object, json!({"maxFindings": 2, "action": "warn"}));
        assert!(warned.accepted);
        assert_eq!(warned.warnings.len(), 4);
        assert!(warned.warnings[0].contains(": 5 fields the API server drops"));
        assert!(warned.warnings[3].contains("and 3 more fields the API server drops (5 in total)"));
        // Deterministic: byte-identical on a second run.
        assert_eq!(run(&object, json!({"maxFindings": 2})), verdict);
    }

    #[test]
    fn shapes_and_requests_out_of_scope() {
        let verdict = run(&json!("a string"), json!({}));
        assert_eq!((verdict.accepted, verdict.code), (false, Some(400)));
        // No object: the one rule of every check (code 400).
        let verdict = run(&Value::Null, json!({}));
        assert_eq!((verdict.accepted, verdict.code), (false, Some(400)));
        assert_eq!(verdict.message.as_deref(), Some(crate::check::NO_OBJECT));
        // Wrong JSON types are left to the API server's own validation.
        let object = crd(json!({"properties": "not a map", "items": 3, "allOf": {}}));
        assert!(run(&object, json!({})).accepted);
        let payload = json!({"request": {"kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "apiextensions.k8s.io", "version": "v1", "resource": "customresourcedefinitions"},
            "operation": "CREATE", "object": crd(json!({"bogus": 1}))}});
        assert!(decide::<CrdSchemaFields>(payload.to_string().as_bytes(), &NoCluster).accepted);
    }

    #[test]
    fn settings_ranges() {
        assert!(parse_settings::<CrdSchemaFields>(Some(r#"{"maxFindings": 1000}"#)).is_ok());
        let err = parse_settings::<CrdSchemaFields>(Some(r#"{"maxFindings": 1001}"#)).unwrap_err();
        assert_eq!(err, "`maxFindings` must be between 1 and 1000, got 1001");
        let err = parse_settings::<CrdSchemaFields>(Some(r#"{"allowedKeys": ["ok", ""]}"#)).unwrap_err();
        assert!(err.starts_with("`allowedKeys[1]` is empty"), "{err}");
        let defaults = parse_settings::<CrdSchemaFields>(None).unwrap();
        assert_eq!(
            (defaults.action, defaults.check_last_applied, defaults.max_findings),
            (RejectOrWarn::Reject, true, 20)
        );
    }
}
