//! The walk that finds drift: the applied manifest, key by key, against what the API server does
//! with it, and, when the live object is at hand, against what it stored.
//!
//! What the API server does comes from two models:
//! - a built-in kind (or a CRD object) is decoded into its Go type and written back by Go's
//!   `encoding/json`: fields the type does not declare are dropped, `omitempty` drops nulls and
//!   empty values, quantities come back in their canonical form ([`crate::generated`]'s table of
//!   the API types, [`super::quantity`]);
//! - a custom resource is pruned to its CRD's structural schema: fields no `properties` or
//!   `additionalProperties` declare are dropped unless `x-kubernetes-preserve-unknown-fields`
//!   keeps them, nulls are dropped where the schema is neither `nullable` nor defaulted, and its
//!   `metadata` is decoded as an ObjectMeta.
//!
//! With the live object (admission, the audit scanner), the models only name the cause: a path
//! is drift when the live object does not hold the applied value, and a path the live object
//! holds as applied is never drift, whatever the models say (a cluster newer than the tables
//! knows fields they do not). A difference no model explains is [`Cause::Mutated`].
//!
//! The walk reads the borrowing tree of [`crate::json`] ([`Node`]), each object's members as
//! serde_json's `Value` would hold them ([`Members`]: sorted by key, the last of duplicates), so
//! findings come out as they did from a `Value`. It recurses once per JSON level of the applied
//! manifest, which serde_json's reader read with its limit of 128 levels, so its depth is
//! bounded whatever the input.

use super::cause::{Cause, Class};
use super::path::{Path, Step};
use super::quantity;
use crate::check::shared_walk::{self, Keys, Place};
use crate::generated::{ApiField, ApiType, Form, Leaf};
use crate::json::{Canonical, Members, Node, Number};
use crate::text::{elide, spelling::closest};

pub use crate::json::Entries;

/// Most characters of a value quoted in a finding.
const VALUE_CHARS: usize = 40;

/// What the cluster stores at a drifting path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stored {
    /// Nothing: the path is dropped.
    Nothing,
    /// This value (JSON text, cut to [`VALUE_CHARS`]).
    Value(String),
}

/// One path whose applied value the cluster does not keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// Why.
    pub cause: Cause,
    /// Where.
    pub path: Path,
    /// The applied value (JSON text, cut to [`VALUE_CHARS`]).
    pub applied: String,
    /// What the cluster keeps instead.
    pub stored: Stored,
    /// The applied value is null.
    pub null: bool,
    /// A more precise fix than the cause's (`did you mean`, where to declare a field).
    pub hint: Option<String>,
}

/// What the live object holds at a path: nothing known (a manifest alone), nothing, or a value.
#[derive(Debug, Clone, Copy)]
pub enum Live<'a> {
    /// No live object: the models decide alone.
    Unknown,
    /// The live object lacks the path.
    Missing,
    /// The live object's value.
    Has(&'a Node<'a>),
}

impl<'a> Live<'a> {
    /// What the live object holds at each key of this object, looked up by key.
    fn keys(self) -> LiveKeys<'a> {
        match self {
            Live::Unknown => LiveKeys::Unknown,
            Live::Has(Node::Object(entries)) => LiveKeys::Has(Members::of(entries)),
            Live::Missing | Live::Has(_) => LiveKeys::Missing,
        }
    }

    /// Whether the live object holds exactly `applied`.
    fn holds(self, applied: &Node<'_>) -> bool {
        matches!(self, Live::Has(value) if same(value, applied))
    }
}

/// What the live object holds at the keys of one object ([`Live::keys`]).
enum LiveKeys<'a> {
    /// No live object.
    Unknown,
    /// The live object lacks the object (or holds something else there).
    Missing,
    /// The live object's members there.
    Has(Members<'a, 'a>),
}

impl<'a> LiveKeys<'a> {
    /// What the live object holds at `key`.
    fn key(&self, key: &str) -> Live<'a> {
        match self {
            LiveKeys::Unknown => Live::Unknown,
            LiveKeys::Missing => Live::Missing,
            LiveKeys::Has(members) => members.get(key).map_or(Live::Missing, Live::Has),
        }
    }
}

/// Whether two JSON values are equal as serde_json's `Value`s are, but numbers by value (`1`
/// and `1.0`).
fn same(a: &Node<'_>, b: &Node<'_>) -> bool {
    match (a, b) {
        (Node::Array(x), Node::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Node::Object(x), Node::Object(y)) => {
            let (x, y) = (Members::of(x), Members::of(y));
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => same_scalar(a, b),
    }
}

/// Whether two values that are not both arrays or both objects are equal, numbers by value.
pub fn same_scalar(a: &Node<'_>, b: &Node<'_>) -> bool {
    match (a, b) {
        (Node::Null, Node::Null) => true,
        (Node::Bool(x), Node::Bool(y)) => x == y,
        (Node::Str(x), Node::Str(y)) => x == y,
        _ => match (a.number(), b.number()) {
            (Some(x), Some(y)) => x == y || x.as_f64() == y.as_f64(),
            _ => false,
        },
    }
}

/// JSON text of a value (as serde_json prints it), cut to [`VALUE_CHARS`].
pub fn short(value: &Node<'_>) -> String {
    elide(&Canonical(value).to_string(), VALUE_CHARS).into_owned()
}

/// The structural schema of a custom resource's version, as the walk reads it.
#[derive(Debug, Clone, Copy)]
pub struct CrdSchema<'a> {
    /// The version's `openAPIV3Schema`.
    pub root: &'a Node<'a>,
    /// Whether the version has the status subresource (then `status` is not written with the
    /// object).
    pub status_subresource: bool,
}

/// The text shown instead of a Secret's values.
pub const HIDDEN: &str = "(secret value)";

/// The kinds whose every stored object holds objects in its `status` (`api_status.tsv`, derived
/// with the other tables: group, version, kind, the JSON of the status type's zero value).
const STORED_STATUS: &str = include_str!("api_status.tsv");

/// What every stored object of a kind holds in its `status`: the JSON Go writes for the zero
/// value of its status type, for the kinds where that holds an object (Service's
/// `{"loadBalancer":{}}`).
pub fn stored_status(group: &str, version: &str, kind: &str) -> Option<Node<'static>> {
    STORED_STATUS
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let mut cells = line.split('\t');
            Some((cells.next()?, cells.next()?, cells.next()?, cells.next()?))
        })
        .find(|&(g, v, k, _)| (g, v, k) == (group, version, kind))
        .and_then(|(_, _, _, status)| crate::json::read(status, crate::json::Everything, usize::MAX).ok())
}

/// Whether `applied` holds nothing but objects the stored status always holds: every key of it
/// names an object of `floor`, and holds an object within it. A three-way patch of such a
/// stanza is empty whatever the controllers filled in, so no tool sees it.
fn within_floor(applied: &Node<'_>, floor: &Node<'_>) -> bool {
    match (applied, floor) {
        (Node::Object(applied), Node::Object(_)) => Members::of(applied).iter().all(|(key, value)| {
            floor
                .get(key)
                .is_some_and(|f| matches!(f, Node::Object(_)) && within_floor(value, f))
        }),
        _ => false,
    }
}

/// The first Kubernetes minor version whose ObjectMeta tags `creationTimestamp` `omitzero`
/// (so a null one inside a template is dropped rather than stored as null).
pub const OMITZERO_SINCE: u32 = 34;

/// Where the walk is: the steps from the object's root, a chain borrowed from the walk's own
/// stack frames and the object's keys, so that visiting a value allocates nothing. It is made
/// into a [`Path`] only for a drift found there: copying the path at every value visited (a
/// vector and a shared name per step) was a fifth of the walk's time, most of it in the
/// allocator.
#[derive(Clone, Copy)]
struct At<'a> {
    /// The path one step shorter (`None` at the root).
    parent: Option<&'a At<'a>>,
    /// The last step (`None` at the root).
    step: Option<StepAt<'a>>,
    /// The number of steps.
    depth: usize,
}

/// One step of an [`At`], borrowed.
#[derive(Clone, Copy)]
enum StepAt<'a> {
    Field(&'a str),
    Key(&'a str),
    Index(usize),
}

impl<'a> At<'a> {
    /// The object's root.
    const ROOT: At<'static> = At {
        parent: None,
        step: None,
        depth: 0,
    };

    /// One step further.
    fn then<'b>(&'b self, step: StepAt<'b>) -> At<'b> {
        At {
            parent: Some(self),
            step: Some(step),
            depth: self.depth + 1,
        }
    }

    /// The path, owned.
    fn path(&self) -> Path {
        let mut steps = Vec::with_capacity(self.depth);
        let mut at = Some(self);
        while let Some(node) = at {
            match node.step {
                Some(StepAt::Field(name)) => steps.push(Step::Field(name.into())),
                Some(StepAt::Key(key)) => steps.push(Step::Key(key.into())),
                Some(StepAt::Index(i)) => steps.push(Step::Index(i)),
                None => {}
            }
            at = node.parent;
        }
        steps.reverse();
        Path(steps)
    }
}

impl Place for At<'_> {
    fn steps(&self) -> Vec<shared_walk::Step<'_>> {
        let mut steps = Vec::with_capacity(self.depth);
        let mut at = Some(self);
        while let Some(node) = at {
            match node.step {
                Some(StepAt::Field(key) | StepAt::Key(key)) => steps.push(shared_walk::Step::Key(key)),
                Some(StepAt::Index(i)) => steps.push(shared_walk::Step::Index(i)),
                None => {}
            }
            at = node.parent;
        }
        steps.reverse();
        steps
    }
}

/// The walk over one object.
pub struct Walker<'a> {
    /// How the tools handle the kind.
    class: Class,
    /// The object is a Secret: values under `data` and `stringData` are never quoted.
    secret: bool,
    /// The group, version and kind of the object ([`Walker::of_kind`]).
    kind: (&'a str, &'a str, &'a str),
    /// What every stored object of the kind holds in `status` ([`stored_status`]), looked up
    /// only for an object that sets a status: nearly none does, and every write is walked.
    status_floor: std::cell::OnceCell<Option<Node<'static>>>,
    /// The minor version of the target Kubernetes (1.MINOR).
    minor: u32,
    /// The kind is cluster-scoped: the API server clears the object's `metadata.namespace`.
    cluster_scoped: bool,
    /// The object is a Service, whose defaulting (`SetDefaults_Service`) replaces or removes a
    /// few applied values.
    service: bool,
    /// ObjectMeta's type, for every kind's `metadata`.
    object_meta: Option<ApiType>,
    /// The custom resource's schema, when the kind is one and its CRD was read.
    schema: Option<CrdSchema<'a>>,
    /// What judges a CRD's keys beside the walk ([`Keys`]).
    keys: Option<&'a mut dyn Keys>,
    /// The next value [`Walker::schema_node`] walks is an item of a list with
    /// `x-kubernetes-preserve-unknown-fields` (or an item of such an item): the API server's
    /// pruning hands it to `skipPrune` (`pruning/algorithm.go`), which keeps its unknown keys.
    kept_item: bool,
    /// What the walk found, in walk order.
    pub drifts: Vec<Drift>,
}

impl<'a> Walker<'a> {
    /// A walk over an object of `class` (`schema`: a custom resource's CRD schema, if read).
    pub fn new(class: Class, schema: Option<CrdSchema<'a>>) -> Walker<'a> {
        Walker {
            class,
            secret: false,
            kind: ("", "", ""),
            status_floor: std::cell::OnceCell::new(),
            minor: super::NEWEST_MINOR,
            cluster_scoped: false,
            service: false,
            object_meta: crate::generated::api_type("meta/v1", "ObjectMeta"),
            schema,
            keys: None,
            kept_item: false,
            drifts: Vec::new(),
        }
    }

    /// The walk with `keys` judging a CRD's keys beside it ([`Keys`]).
    pub fn with_keys(mut self, keys: Option<&'a mut dyn Keys>) -> Walker<'a> {
        self.keys = keys;
        self
    }

    /// The walk for an object of this group, version and kind on Kubernetes 1.`minor`.
    pub fn of_kind(mut self, group: &'a str, version: &'a str, kind: &'a str, minor: u32) -> Walker<'a> {
        self.secret = group.is_empty() && kind == "Secret";
        self.service = group.is_empty() && version == "v1" && kind == "Service";
        self.kind = (group, version, kind);
        self.cluster_scoped = crate::generated::api_cluster_scoped(group, version, kind).unwrap_or(false);
        self.minor = minor;
        self
    }

    /// The walk for a kind whose scope is known otherwise (a custom resource's, from its CRD).
    pub fn cluster_scoped(mut self, cluster_scoped: bool) -> Walker<'a> {
        self.cluster_scoped = cluster_scoped;
        self
    }

    /// Whether `path` holds a Secret's value, never quoted.
    fn hidden(&self, path: &Path) -> bool {
        self.secret && matches!(path.0.first(), Some(Step::Field(f)) if matches!(&**f, "data" | "stringData"))
    }

    /// Reports a drift at `at`, unless the live object holds the applied value; whether it did.
    fn report(&mut self, cause: Cause, at: At<'_>, applied: &Node<'_>, live: Live<'_>, stored: Stored) -> bool {
        if live.holds(applied) {
            return false;
        }
        let path = at.path();
        let hidden = self.hidden(&path);
        let show = |value: &Node<'_>| {
            if hidden && !is_empty(value) {
                HIDDEN.to_string()
            } else {
                short(value)
            }
        };
        let stored = match (live, stored) {
            (Live::Unknown, Stored::Value(_)) if hidden => Stored::Value(HIDDEN.to_string()),
            (Live::Unknown, stored) => stored,
            (Live::Missing, _) => Stored::Nothing,
            (Live::Has(value), _) => Stored::Value(show(value)),
        };
        self.drifts.push(Drift {
            cause,
            path,
            applied: show(applied),
            stored,
            null: applied.is_null(),
            hint: None,
        });
        true
    }

    /// Adds `hint` to the drift just reported.
    fn hint(&mut self, hint: String) {
        if let Some(last) = self.drifts.last_mut() {
            last.hint = Some(hint);
        }
    }

    /// A value the models keep as applied: drift only when the live object holds another.
    fn kept(&mut self, path: At<'_>, applied: &Node<'_>, live: Live<'_>) {
        if !matches!(live, Live::Unknown) {
            self.report(Cause::Mutated, path, applied, live, Stored::Nothing);
        }
    }

    // -----------------------------------------------------------------------------------------
    // Go types.

    /// Walks an object of a built-in kind (or a CRD) from its root.
    pub fn typed_root(&mut self, applied: Entries<'_, '_>, live: Live<'_>, root: ApiType) {
        self.object(applied, live, root, At::ROOT);
    }

    /// The members of the object at `path` as the walk visits them (the last of a key given
    /// twice); the entries it skips go to the judgement beside the walk, if there is one.
    fn members<'n, 'j>(&mut self, entries: Entries<'n, 'j>, path: &At<'_>) -> Members<'n, 'j> {
        let members = Members::of(entries);
        if members.len() != entries.len()
            && let Some(keys) = self.keys.as_deref_mut()
        {
            keys.shadowed(entries, &members, path);
        }
        members
    }

    /// An object of API type `ty`.
    fn object(&mut self, applied: Entries<'_, '_>, live: Live<'_>, ty: ApiType, path: At<'_>) {
        #[cfg(test)]
        if ty.name() == "JSONSchemaProps" {
            crate::check::shared_walk::visits::schema_node(applied);
        }
        let members = self.members(applied, &path);
        let live = live.keys();
        for (key, value) in members.iter() {
            let at = path.then(StepAt::Field(key));
            let live_value = live.key(key);
            if self.rewritten(&members, key, value, live_value, ty, at) {
                continue;
            }
            match ty.field(key) {
                Some(field) => self.member(value, live_value, field, ty, at, path.depth == 0),
                // A CRD's unknown fields are crd-schema-fields' findings.
                None if self.class == Class::Untyped => {
                    if let Some(keys) = self.keys.as_deref_mut() {
                        keys.unknown(key, ty, &at);
                    }
                }
                None => {
                    if self.report(Cause::UnknownField, at, value, live_value, Stored::Nothing) {
                        let names = ty.fields().map(|f| f.name);
                        if let Some(near) = closest(key, names, 2) {
                            self.hint(format!("did you mean `{near}`?"));
                        }
                    }
                }
            }
        }
    }

    /// Whether `key` of `applied` (an object of type `ty` at `path`'s parent) is a value the API
    /// server rewrites whatever its type says, reported here: the object's own
    /// `metadata.namespace` in a cluster-scoped kind (known from the kind, or, on a live object
    /// of any kind, because the live object has none: a namespaced object always keeps one), and
    /// what `SetDefaults_Service` replaces or removes.
    fn rewritten(
        &mut self,
        applied: &Members<'_, '_>,
        key: &str,
        value: &Node<'_>,
        live: Live<'_>,
        ty: ApiType,
        path: At<'_>,
    ) -> bool {
        let at_root_metadata = path.depth == 2
            && path
                .parent
                .is_some_and(|parent| matches!(parent.step, Some(StepAt::Field("metadata"))));
        if at_root_metadata
            && key == "namespace"
            && value.as_str().is_some_and(|ns| !ns.is_empty())
            && (self.cluster_scoped || matches!(live, Live::Missing))
        {
            self.report(Cause::Namespace, path, value, live, Stored::Nothing);
            return true;
        }
        if !self.service {
            return false;
        }
        match (ty.name(), key) {
            // `sessionAffinity` absent (or `None`) is `None`, which drops the config.
            ("ServiceSpec", "sessionAffinityConfig") if !value.is_null() => {
                let affinity = applied.get("sessionAffinity").and_then(Node::as_str).unwrap_or("");
                if affinity == "ClientIP" {
                    return false;
                }
                if self.report(Cause::Defaulted, path, value, live, Stored::Nothing) {
                    self.hint("`sessionAffinity` is not `ClientIP`".to_string());
                }
                true
            }
            // `targetPort` 0 or "" (a null decodes to 0) is replaced by the port.
            ("ServicePort", "targetPort")
                if value.is_null() || matches!(value.number(), Some(Number::U64(0))) || value.as_str() == Some("") =>
            {
                let Some(port) = applied.get("port").filter(|p| p.number().is_some()) else {
                    return false;
                };
                if self.report(Cause::Defaulted, path, value, live, Stored::Value(short(port))) {
                    self.hint("replaced by the port".to_string());
                }
                true
            }
            _ => false,
        }
    }

    /// A member of API type `owner`; `top`: a member of the object's root.
    fn member(&mut self, applied: &Node<'_>, live: Live<'_>, field: ApiField, owner: ApiType, path: At<'_>, top: bool) {
        if field.leaf == Leaf::Status {
            if let Some(keys) = self.keys.as_deref_mut() {
                keys.beyond_member(applied, field, owner, &path);
            }
            // An empty stanza (`status: {}`), or one holding only the objects every stored
            // status holds (a Service's `loadBalancer: {}`), patches nothing: no tool sees it.
            let held = || {
                let (group, version, kind) = self.kind;
                self.status_floor
                    .get_or_init(|| stored_status(group, version, kind))
                    .as_ref()
                    .is_some_and(|floor| within_floor(applied, floor))
            };
            if top && !is_empty(applied) && !held() {
                self.report(Cause::Status, path, applied, live, Stored::Nothing);
            }
            return;
        }
        if applied.is_null() {
            if field.name == "creationTimestamp" && field.leaf == Leaf::Time {
                // The object's own is set on create; a template's null is dropped by the
                // `omitzero` of Kubernetes 1.34 on, and kept as null before.
                let own = path.depth == 2;
                if own || (field.omitzero && self.minor >= OMITZERO_SINCE) {
                    self.report(Cause::CreationTimestamp, path, applied, live, Stored::Nothing);
                } else {
                    self.kept(path, applied, live);
                }
            } else if field.omitted_when_zero() {
                self.report(Cause::NullOrEmpty, path, applied, live, Stored::Nothing);
            } else if !field.keeps_null {
                self.report(
                    Cause::NullOrEmpty,
                    path,
                    applied,
                    live,
                    Stored::Value(zero(field).into()),
                );
            }
            return;
        }
        // A Secret's `stringData` is merged into `data` and never stored.
        if self.secret && top && field.name == "stringData" && !is_empty(applied) {
            self.report(Cause::StringData, path, applied, live, Stored::Nothing);
            return;
        }
        if self.class == Class::Untyped
            && field.name == "preserveUnknownFields"
            && matches!(applied, Node::Bool(false))
            && path.path().api() == "spec.preserveUnknownFields"
        {
            self.report(Cause::PreserveUnknownFields, path, applied, live, Stored::Nothing);
            return;
        }
        // A pointer is empty only when null; `0`, `""`, `false` and `{}` behind it are kept.
        if field.omitted_when_zero() && field.form != Form::Pointer && is_empty(applied) {
            self.report(Cause::NullOrEmpty, path, applied, live, Stored::Nothing);
            return;
        }
        match (field.form, applied) {
            (Form::List, Node::Array(items)) => {
                let lives = matched(items, live);
                for (i, (item, live_item)) in items.iter().zip(lives).enumerate() {
                    self.leaf(item, live_item, field.leaf, path.then(StepAt::Index(i)));
                }
            }
            (Form::Map, Node::Object(entries)) => {
                let members = self.members(entries, &path);
                let live = live.keys();
                for (key, value) in members.iter() {
                    self.leaf(value, live.key(key), field.leaf, path.then(StepAt::Key(key)));
                }
            }
            (Form::Value | Form::Pointer, _) => self.leaf(applied, live, field.leaf, path),
            _ => self.kept(path, applied, live),
        }
    }

    /// A value of `leaf`.
    fn leaf(&mut self, applied: &Node<'_>, live: Live<'_>, leaf: Leaf, path: At<'_>) {
        match (leaf, applied) {
            (Leaf::Object(ty), Node::Object(_)) => self.container(applied, live, ty, path),
            (Leaf::SchemaOrBool(ty) | Leaf::SchemaOrArray(ty) | Leaf::SchemaOrStrings(ty), Node::Object(_)) => {
                self.container(applied, live, ty, path)
            }
            (Leaf::SchemaOrArray(_) | Leaf::SchemaOrStrings(_), Node::Array(items)) if items.is_empty() => {
                self.report(Cause::NullOrEmpty, path, applied, live, Stored::Nothing);
            }
            (Leaf::SchemaOrArray(ty), Node::Array(items)) => {
                let lives = matched(items, live);
                for (i, (item, live_item)) in items.iter().zip(lives).enumerate() {
                    match item {
                        Node::Object(_) => self.container(item, live_item, ty, path.then(StepAt::Index(i))),
                        _ => self.kept(path.then(StepAt::Index(i)), item, live_item),
                    }
                }
            }
            (Leaf::Quantity, Node::Str(_) | Node::U64(_) | Node::I64(_) | Node::F64(_)) => {
                self.quantity(applied, live, path)
            }
            (Leaf::Bytes, Node::Str(text)) => self.bytes(applied, text, live, path),
            // Times are written back in one format; a manifest rarely sets one, and its
            // reformatting is not what this check is about.
            (Leaf::Time | Leaf::MicroTime, _) => {}
            _ => self.kept(path, applied, live),
        }
    }

    /// An object of type `ty` at `path` (`applied`, a JSON object), or its absence from the live
    /// object.
    fn container(&mut self, applied: &Node<'_>, live: Live<'_>, ty: ApiType, path: At<'_>) {
        match (applied, live) {
            (Node::Object(entries), Live::Missing) if !entries.is_empty() => {
                if let Some(keys) = self.keys.as_deref_mut() {
                    keys.beyond(applied, ty, &path);
                }
                self.kept(path, applied, live)
            }
            (Node::Object(entries), _) => self.object(entries, live, ty, path),
            _ => self.kept(path, applied, live),
        }
    }

    /// A quantity: drift when the API server writes it back otherwise.
    fn quantity(&mut self, applied: &Node<'_>, live: Live<'_>, path: At<'_>) {
        let literal;
        let stored = match (applied, applied.number()) {
            (Node::Str(text), _) => quantity::stored(text),
            (_, Some(number)) => {
                literal = number_text(number);
                quantity::stored_number(&literal)
            }
            _ => return,
        };
        // A quantity the API server refuses, or one outside what the model judges: no verdict.
        let stored = stored.ok().and_then(|s| s.text().map(str::to_string));
        match stored {
            None => {}
            Some(stored) if applied.as_str() == Some(stored.as_str()) => self.kept(path, applied, live),
            Some(stored) => {
                let live = match live {
                    Live::Has(Node::Str(text)) if **text == *stored => Live::Unknown,
                    other => other,
                };
                self.report(
                    Cause::Quantity,
                    path,
                    applied,
                    live,
                    Stored::Value(format!("\"{stored}\"")),
                );
            }
        }
    }

    /// Base64 text (`[]byte`): drift when the API server, which decodes it as Go's
    /// `base64.StdEncoding` does (line breaks skipped, padding bits ignored), writes it back
    /// otherwise. Text it refuses is no verdict.
    fn bytes(&mut self, applied: &Node<'_>, text: &str, live: Live<'_>, path: At<'_>) {
        match canonical_base64(text) {
            Some(canonical) if canonical != text => {
                let live = match live {
                    Live::Has(Node::Str(have)) if **have == *canonical => Live::Unknown,
                    other => other,
                };
                let why = if text.contains(['\r', '\n']) {
                    "its line breaks are dropped"
                } else {
                    "its padding bits are not zero"
                };
                let stored = Stored::Value(elide(&format!("\"{canonical}\""), VALUE_CHARS).into_owned());
                if self.report(Cause::Base64, path, applied, live, stored) {
                    self.hint(why.to_string());
                }
            }
            _ => self.kept(path, applied, live),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Custom resources.

    /// Walks a custom resource from its root: `metadata` as an ObjectMeta, `status` as its
    /// subresource decides, the rest against the CRD's schema when it was read.
    pub fn custom_root(&mut self, applied: Entries<'_, '_>, live: Live<'_>) {
        let schema = self.schema;
        let root = At::ROOT;
        let live = live.keys();
        for (key, value) in Members::of(applied).iter() {
            let at = root.then(StepAt::Field(key));
            let live_value = live.key(key);
            match key {
                "apiVersion" | "kind" => {}
                "metadata" => match (value, self.object_meta) {
                    (Node::Object(entries), Some(meta)) => self.object(entries, live_value, meta, at),
                    (Node::Null, _) => {}
                    _ => self.kept(at, value, live_value),
                },
                "status" if schema.is_some_and(|s| s.status_subresource) => {
                    if !is_empty(value) {
                        self.report(Cause::Status, at, value, live_value, Stored::Nothing);
                    }
                }
                _ => match schema {
                    Some(schema) => {
                        let property = schema.root.get("properties").and_then(|p| p.get(key));
                        let at_schema = match property {
                            Some(_) => format!("openAPIV3Schema.properties.{key}"),
                            None => "openAPIV3Schema".to_string(),
                        };
                        self.schema_node(value, live_value, property, at, &at_schema);
                    }
                    None => self.unexplained(at, value, live_value),
                },
            }
        }
    }

    /// A difference in a custom resource whose CRD could not be read: pruned by its schema, or
    /// changed after apply; the first when the live object lacks the path.
    fn unexplained(&mut self, path: At<'_>, applied: &Node<'_>, live: Live<'_>) {
        match (applied, live) {
            (Node::Object(entries), Live::Has(_)) => {
                let live = live.keys();
                for (key, value) in Members::of(entries).iter() {
                    self.unexplained(path.then(StepAt::Field(key)), value, live.key(key));
                }
            }
            (_, Live::Missing) => {
                self.report(Cause::PrunedField, path, applied, live, Stored::Nothing);
            }
            _ => self.kept(path, applied, live),
        }
    }

    /// A value of a custom resource against its schema node (`None`: the schema does not declare
    /// it); `parent` is the path of that node in the CRD, or of the node that does not declare
    /// it, for the fix.
    fn schema_node(
        &mut self,
        applied: &Node<'_>,
        live: Live<'_>,
        schema: Option<&Node<'_>>,
        path: At<'_>,
        parent: &str,
    ) {
        let kept_item = std::mem::take(&mut self.kept_item);
        let Some(schema) = schema else {
            if self.report(Cause::PrunedField, path, applied, live, Stored::Nothing) {
                self.hint(format!(
                    "declare it under `properties` of `{parent}` in the CRD, or set `x-kubernetes-preserve-unknown-fields: true` there"
                ));
            }
            return;
        };
        let flag = |key: &str| schema.get(key).and_then(Node::as_bool).unwrap_or(false);
        if applied.is_null() {
            if !flag("nullable") && schema.get("default").is_none() {
                self.report(Cause::NullOrEmpty, path, applied, live, Stored::Nothing);
            }
            return;
        }
        match applied {
            Node::Object(entries) => {
                let embedded = flag("x-kubernetes-embedded-resource");
                let preserve = flag("x-kubernetes-preserve-unknown-fields") || kept_item;
                let properties = schema.get("properties").and_then(Node::as_object).map(Members::of);
                let additional = schema.get("additionalProperties");
                let live = live.keys();
                for (key, value) in Members::of(entries).iter() {
                    let live_value = live.key(key);
                    if embedded && matches!(key, "apiVersion" | "kind" | "metadata") {
                        self.kept(path.then(StepAt::Field(key)), value, live_value);
                    } else if let Some(property) = properties.as_ref().and_then(|p| p.get(key)) {
                        let at = path.then(StepAt::Field(key));
                        self.schema_node(
                            value,
                            live_value,
                            Some(property),
                            at,
                            &format!("{parent}.properties.{key}"),
                        );
                    } else if let Some(additional @ Node::Object(_)) = additional {
                        let at = path.then(StepAt::Key(key));
                        let inner = format!("{parent}.additionalProperties");
                        self.schema_node(value, live_value, Some(additional), at, &inner);
                    } else if preserve || matches!(additional, Some(Node::Bool(true))) {
                        self.kept(path.then(StepAt::Field(key)), value, live_value);
                    } else {
                        // An object schema that declares nothing for the key keeps nothing of it.
                        self.schema_node(value, live_value, None, path.then(StepAt::Field(key)), parent);
                    }
                }
            }
            Node::Array(items) => match schema.get("items") {
                Some(item_schema @ Node::Object(_)) => {
                    let lives = matched(items, live);
                    let inner = format!("{parent}.items");
                    let keep = flag("x-kubernetes-preserve-unknown-fields") || kept_item;
                    for (i, (item, live_item)) in items.iter().zip(lives).enumerate() {
                        self.kept_item = keep;
                        self.schema_node(item, live_item, Some(item_schema), path.then(StepAt::Index(i)), &inner);
                    }
                }
                _ => self.kept(path, applied, live),
            },
            _ => self.kept(path, applied, live),
        }
    }
}

/// The JSON the API server writes for a member that is null (its Go zero value), when that is
/// neither dropped nor null.
fn zero(field: ApiField) -> &'static str {
    match (field.form, field.leaf) {
        (Form::Value, Leaf::Object(_)) => "{}",
        (Form::Value, Leaf::Quantity) => "\"0\"",
        (Form::Value, Leaf::String | Leaf::Bytes) => "\"\"",
        (Form::Value, Leaf::Int | Leaf::Float | Leaf::IntOrString) => "0",
        (Form::Value, Leaf::Bool) => "false",
        (Form::Value, Leaf::Duration) => "\"0s\"",
        // Pointers, lists and maps without omitempty keep null; what else is left is rare.
        _ => "its zero value",
    }
}

/// Go's `base64.StdEncoding` as the API server decodes `[]byte`: padding required, padding bits
/// ignored (`\r` and `\n` are skipped before it).
const GO_BASE64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::RequireCanonical),
);

/// The base64 text the API server writes back for `text`, or `None` when it refuses it.
pub fn canonical_base64(text: &str) -> Option<String> {
    use base64::Engine as _;
    let bytes = if text.contains(['\r', '\n']) {
        let compact: String = text.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
        GO_BASE64.decode(compact).ok()?
    } else {
        GO_BASE64.decode(text).ok()?
    };
    Some(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// Whether a value is what `omitempty` drops: `""`, `false`, `0`, `[]` or `{}`.
fn is_empty(value: &Node<'_>) -> bool {
    match value {
        Node::Str(text) => text.is_empty(),
        Node::Bool(b) => !b,
        Node::U64(_) | Node::I64(_) | Node::F64(_) => value.number().is_some_and(|n| n.as_f64() == 0.0),
        Node::Array(items) => items.is_empty(),
        Node::Object(entries) => entries.is_empty(),
        Node::Null => true,
        // Not in a tree read whole.
        Node::Raw(_) | Node::Skipped | Node::TooDeep => false,
    }
}

/// The literal text the API server receives for a JSON number: the integer as written, a
/// fraction in its shortest form (serde_json keeps no literal text; `1.50` reads as `1.5`).
fn number_text(number: Number) -> String {
    match number {
        Number::F64(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
        _ => number.to_string(),
    }
}

/// The live item each applied item is compared with: the item of the same `name` when every
/// item of both lists is an object with a string `name`, unique in its list (containers, env,
/// volumes, ports: how the API server's strategic merge keys them), else the item at the same
/// index (volume mounts share a volume's name, and the API server keeps a list's order).
fn matched<'a>(items: &[Node<'_>], live: Live<'a>) -> Vec<Live<'a>> {
    let live_items = match live {
        Live::Unknown => return vec![Live::Unknown; items.len()],
        Live::Has(Node::Array(live_items)) => live_items,
        _ => return vec![Live::Missing; items.len()],
    };
    // Each list's items by name, when every item has one and no two share it.
    let by_name = |list: &'a [Node<'a>]| -> Option<std::collections::BTreeMap<&'a str, &'a Node<'a>>> {
        let mut names = std::collections::BTreeMap::new();
        for item in list {
            let name = item.get("name").and_then(Node::as_str)?;
            if names.insert(name, item).is_some() {
                return None;
            }
        }
        Some(names)
    };
    let applied_named = !items.is_empty() && items.iter().all(|item| matches!(item.get("name"), Some(Node::Str(_))));
    let unique_applied = applied_named && {
        let mut seen = std::collections::BTreeSet::new();
        items
            .iter()
            .all(|item| seen.insert(item.get("name").and_then(Node::as_str)))
    };
    if let (true, Some(live_names)) = (unique_applied, by_name(live_items)) {
        items
            .iter()
            .map(|item| {
                item.get("name")
                    .and_then(Node::as_str)
                    .and_then(|name| live_names.get(name))
                    .map_or(Live::Missing, |l| Live::Has(l))
            })
            .collect()
    } else {
        (0..items.len())
            .map(|i| live_items.get(i).map_or(Live::Missing, Live::Has))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// A value as the check reads it.
    fn node(value: &Value) -> Node<'_> {
        crate::json::read_value(value, usize::MAX).unwrap()
    }

    /// A node as a value, to compare.
    fn value(node: &Node<'_>) -> Value {
        serde_json::to_value(Canonical(node)).unwrap()
    }

    fn walk(class: Class, group: &str, version: &str, kind: &str, applied: Value, live: Option<Value>) -> Vec<Drift> {
        let ty = crate::generated::api_type_of(group, version, kind).unwrap();
        let mut walker = Walker::new(class, None);
        let (applied, live) = (node(&applied), live.as_ref().map(node));
        let live = live.as_ref().map_or(Live::Unknown, Live::Has);
        walker.typed_root(applied.as_object().unwrap(), live, ty);
        walker.drifts
    }

    fn found(drifts: &[Drift]) -> Vec<(Cause, String)> {
        drifts.iter().map(|d| (d.cause, d.path.api())).collect()
    }

    fn deployment(container: Value) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "annotations": null, "labels": {}},
            "spec": {"template": {"metadata": {"creationTimestamp": null}, "spec": {"containers": [container]}}},
        })
    }

    #[test]
    fn a_hint_goes_only_to_a_drift_reported() {
        // The live object holds the misspelt key as applied (no drift there), so its "did you
        // mean" must not land on the drift reported before it (`spec.replicas`).
        let container = |replicas: u64| {
            json!({
                "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                "spec": {"replicas": replicas, "template": {"spec": {"containers": [
                    {"name": "app", "image": "app:1", "ports": [{"containerPort": 80, "protocoll": "TCP"}]},
                ]}}},
            })
        };
        let drifts = walk(
            Class::Typed,
            "apps",
            "v1",
            "Deployment",
            container(2),
            Some(container(3)),
        );
        assert_eq!(found(&drifts), [(Cause::Mutated, "spec.replicas".to_string())]);
        assert_eq!(drifts[0].hint, None);
    }

    #[test]
    fn a_manifest_drifts_where_the_go_types_drop_or_rewrite() {
        let applied = deployment(json!({
            "name": "app", "image": "app:1", "env": [], "command": [],
            "resources": {"requests": {}, "limits": {"cpu": "1000m", "memory": "500Mi"}},
            "securityContext": {}, "imagePullPolicy": "",
            "ports": [{"containerPort": 80, "hostPort": 0, "protocoll": "TCP"}],
        }));
        let drifts = walk(Class::Typed, "apps", "v1", "Deployment", applied, None);
        let mut found = found(&drifts);
        found.sort();
        assert_eq!(
            found,
            [
                (Cause::NullOrEmpty, "metadata.annotations".into()),
                (Cause::NullOrEmpty, "metadata.labels".into()),
                (Cause::NullOrEmpty, "spec.template.spec.containers[0].command".into()),
                (Cause::NullOrEmpty, "spec.template.spec.containers[0].env".into()),
                (
                    Cause::NullOrEmpty,
                    "spec.template.spec.containers[0].imagePullPolicy".into()
                ),
                (
                    Cause::NullOrEmpty,
                    "spec.template.spec.containers[0].ports[0].hostPort".into()
                ),
                (
                    Cause::NullOrEmpty,
                    "spec.template.spec.containers[0].resources.requests".into()
                ),
                (
                    Cause::Quantity,
                    "spec.template.spec.containers[0].resources.limits[cpu]".into()
                ),
                (
                    Cause::UnknownField,
                    "spec.template.spec.containers[0].ports[0].protocoll".into()
                ),
                (
                    Cause::CreationTimestamp,
                    "spec.template.metadata.creationTimestamp".into()
                ),
            ]
        );
        let quantity = drifts.iter().find(|d| d.cause == Cause::Quantity).unwrap();
        assert_eq!(
            (quantity.applied.as_str(), &quantity.stored),
            ("\"1000m\"", &Stored::Value("\"1\"".into()))
        );
        let unknown = drifts.iter().find(|d| d.cause == Cause::UnknownField).unwrap();
        assert_eq!(unknown.hint.as_deref(), Some("did you mean `protocol`?"));
    }

    #[test]
    fn values_the_api_server_keeps_are_no_drift() {
        // A struct is never empty, a pointer keeps zero values, and canonical quantities stay.
        let applied = deployment(json!({
            "name": "app", "resources": {}, "securityContext": {"privileged": false, "runAsUser": 0},
            "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "100m"}},
        }));
        let mut applied = applied;
        applied["metadata"] = json!({"name": "web"});
        applied["spec"]["template"]["metadata"] = json!({});
        applied["spec"]["replicas"] = json!(0);
        assert_eq!(
            found(&walk(Class::Typed, "apps", "v1", "Deployment", applied, None)),
            []
        );
    }

    #[test]
    fn a_crd_drifts_on_defaults_and_empties_but_not_on_unknown_keys() {
        let applied = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com", "preserveUnknownFields": false, "scope": "Namespaced",
                "names": {"kind": "Widget", "plural": "widgets", "categories": [], "shortNames": []},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                    "type": "object", "nullable": false, "x-kubernetes-patch-strategy": "merge",
                    "properties": {"spec": {"type": "object", "required": [], "description": ""}},
                }}}],
            },
            "status": {"acceptedNames": {"kind": "", "plural": ""}, "storedVersions": []},
        });
        let mut found = found(&walk(
            Class::Untyped,
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            applied,
            None,
        ));
        found.sort();
        assert_eq!(
            found,
            [
                (Cause::NullOrEmpty, "spec.names.categories".into()),
                (Cause::NullOrEmpty, "spec.names.shortNames".into()),
                (
                    Cause::NullOrEmpty,
                    "spec.versions[0].schema.openAPIV3Schema.nullable".into()
                ),
                (
                    Cause::NullOrEmpty,
                    "spec.versions[0].schema.openAPIV3Schema.properties[spec].description".into()
                ),
                (
                    Cause::NullOrEmpty,
                    "spec.versions[0].schema.openAPIV3Schema.properties[spec].required".into()
                ),
                (Cause::PreserveUnknownFields, "spec.preserveUnknownFields".into()),
                (Cause::Status, "status".into()),
            ]
        );
    }

    #[test]
    fn with_the_live_object_only_what_it_lacks_is_drift() {
        let applied =
            deployment(json!({"name": "app", "env": [], "resources": {"limits": {"cpu": "1000m"}}, "newField": 1}));
        let mut live = deployment(json!({"name": "app", "resources": {"limits": {"cpu": "1"}}, "newField": 1}));
        live["metadata"] = json!({"name": "web", "uid": "u"});
        live["spec"]["template"]["metadata"] = json!({});
        let drifts = walk(
            Class::Typed,
            "apps",
            "v1",
            "Deployment",
            applied.clone(),
            Some(live.clone()),
        );
        let mut found = found(&drifts);
        found.sort();
        // `newField` is unknown to the tables but the cluster kept it: not drift.
        assert_eq!(
            found,
            [
                (Cause::NullOrEmpty, "metadata.annotations".into()),
                (Cause::NullOrEmpty, "metadata.labels".into()),
                (Cause::NullOrEmpty, "spec.template.spec.containers[0].env".into()),
                (
                    Cause::Quantity,
                    "spec.template.spec.containers[0].resources.limits[cpu]".into()
                ),
                (
                    Cause::CreationTimestamp,
                    "spec.template.metadata.creationTimestamp".into()
                ),
            ]
        );
        // A webhook that changed the image and a controller that scaled: mutated.
        let mut applied = applied;
        applied["spec"]["replicas"] = json!(2);
        applied["spec"]["template"]["spec"]["containers"][0]["image"] = json!("app:1");
        live["spec"]["replicas"] = json!(5);
        live["spec"]["template"]["spec"]["containers"][0]["image"] = json!("registry.local/app:1");
        live["spec"]["template"]["spec"]["containers"]
            .as_array_mut()
            .unwrap()
            .insert(0, json!({"name": "sidecar", "image": "proxy"}));
        let drifts = walk(Class::Typed, "apps", "v1", "Deployment", applied, Some(live));
        let mutated: Vec<_> = drifts.iter().filter(|d| d.cause == Cause::Mutated).collect();
        assert_eq!(
            mutated.iter().map(|d| d.path.api()).collect::<Vec<_>>(),
            ["spec.replicas", "spec.template.spec.containers[0].image"]
        );
        assert_eq!(mutated[0].stored, Stored::Value("5".into()));
    }

    #[test]
    fn custom_resources_are_pruned_to_their_schema() {
        let schema = json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "size": {"type": "integer"},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "template": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                    // A list that keeps unknown fields keeps its items' (`skipPrune`), not those
                    // under their known fields.
                    "rules": {"type": "array", "x-kubernetes-preserve-unknown-fields": true, "items": {
                        "type": "object", "properties": {"match": {"type": "object", "properties": {"a": {"type": "string"}}}}}},
                    "opaque": {"type": "object"},
                    "maybe": {"type": "string", "nullable": true},
                }},
            },
        });
        let applied = json!({
            "apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w", "labels": {}, "creationTimestamp": null},
            "spec": {
                "size": 3, "colour": "red", "labels": {"a": "b"}, "template": {"anything": 1},
                "items": [{"name": "x", "port": 80}], "opaque": {"k": "v"}, "maybe": null,
                "rules": [{"extra": 1, "match": {"a": "x", "b": 2}}],
            },
            "status": {"ready": true},
        });
        let (schema, applied) = (node(&schema), node(&applied));
        let mut walker = Walker::new(
            Class::Custom,
            Some(CrdSchema {
                root: &schema,
                status_subresource: true,
            }),
        );
        walker.custom_root(applied.as_object().unwrap(), Live::Unknown);
        let mut found = found(&walker.drifts);
        found.sort();
        assert_eq!(
            found,
            [
                (Cause::NullOrEmpty, "metadata.labels".into()),
                (Cause::PrunedField, "spec.colour".into()),
                (Cause::PrunedField, "spec.items[0].port".into()),
                (Cause::PrunedField, "spec.opaque.k".into()),
                (Cause::PrunedField, "spec.rules[0].match.b".into()),
                (Cause::CreationTimestamp, "metadata.creationTimestamp".into()),
                (Cause::Status, "status".into()),
            ]
        );
        let colour = walker.drifts.iter().find(|d| d.path.api() == "spec.colour").unwrap();
        assert!(
            colour
                .hint
                .as_deref()
                .unwrap()
                .contains("`openAPIV3Schema.properties.spec`"),
            "{colour:?}"
        );
    }

    #[test]
    fn list_items_sharing_a_name_are_matched_by_position() {
        // Istio's Grafana mounts one volume at several paths: its mounts share the volume's name.
        let mounts = json!([
            {"name": "config", "mountPath": "/etc/a", "subPath": "a"},
            {"name": "config", "mountPath": "/etc/b", "subPath": "b"},
        ]);
        let applied = deployment(json!({"name": "app", "volumeMounts": mounts}));
        let mut live = applied.clone();
        live["metadata"] = json!({"name": "web", "uid": "u"});
        live["spec"]["template"]["metadata"] = json!({});
        let drifts = walk(Class::Typed, "apps", "v1", "Deployment", applied, Some(live));
        assert!(drifts.iter().all(|d| d.cause != Cause::Mutated), "{drifts:?}");
    }

    #[test]
    fn base64_is_written_back_as_go_writes_it() {
        assert_eq!(canonical_base64("QQ==").as_deref(), Some("QQ=="));
        // Line breaks are skipped, padding bits ignored.
        assert_eq!(canonical_base64("QUJD\nREVG\r\n").as_deref(), Some("QUJDREVG"));
        assert_eq!(canonical_base64("QR==").as_deref(), Some("QQ=="));
        // Refused by the API server: no padding, a character outside the alphabet.
        assert_eq!(canonical_base64("QQ"), None);
        assert_eq!(canonical_base64("Q Q=="), None);
        assert_eq!(canonical_base64("").as_deref(), Some(""));
    }

    #[test]
    fn status_stanzas_every_stored_object_holds_are_no_drift() {
        let service = stored_status("", "v1", "Service").unwrap();
        assert_eq!(value(&service), json!({"loadBalancer": {}}));
        let within = |applied: Value, floor: &Node<'_>| within_floor(&node(&applied), floor);
        assert!(within(json!({"loadBalancer": {}}), &service));
        assert!(!within(json!({"loadBalancer": {"ingress": []}}), &service));
        assert!(!within(json!({"conditions": []}), &service));
        assert!(stored_status("networking.k8s.io", "v1", "Ingress").is_some());
        assert!(stored_status("apps", "v1", "Deployment").is_none());
        // A scalar member of the zero status is a value a controller changes, never a floor.
        let crd = stored_status("apiextensions.k8s.io", "v1", "CustomResourceDefinition").unwrap();
        assert!(within(json!({"acceptedNames": {}}), &crd));
        assert!(!within(json!({"acceptedNames": {"kind": ""}}), &crd));
    }

    #[test]
    fn numbers_reach_the_quantity_parser_as_written() {
        let text = |v: Value| number_text(node(&v).number().unwrap());
        assert_eq!(text(json!(3072)), "3072");
        assert_eq!(text(json!(0.5)), "0.5");
        assert_eq!(text(json!(2.0)), "2");
        assert_eq!(text(json!(-1)), "-1");
    }

    /// Walks a Deployment read from JSON text, as the check reads the request.
    fn walk_text(applied: &str, live: Option<&str>) -> Vec<Drift> {
        let read = |text| crate::json::read(text, crate::json::Everything, usize::MAX).unwrap();
        let (applied, live) = (read(applied), live.map(read));
        let ty = crate::generated::api_type_of("apps", "v1", "Deployment").unwrap();
        let mut walker =
            Walker::new(Class::Typed, None).of_kind("apps", "v1", "Deployment", super::super::NEWEST_MINOR);
        walker.typed_root(
            applied.as_object().unwrap(),
            live.as_ref().map_or(Live::Unknown, Live::Has),
            ty,
        );
        walker.drifts
    }

    /// The text is walked as serde_json's `Value` of it would be: the last of duplicated keys,
    /// keys unescaped, members in key order (the order drifts are found in), numbers compared by
    /// value and quoted as serde_json prints them.
    #[test]
    fn the_text_is_walked_as_its_value() {
        let applied = r#"{"spec":{"template":{"spec":{"containers":[{"resources":{"limits":{"memory":"1Gi","cpu":"1000m"}},
            "env":[],"env":[{"name":"A","value":"x"}],"name":"app","ports":[{"containerPort":80,"hostPort":0}]}]}},
            "replicas":2,"paused":false},"metadata":{"labels":{},"labels":{"a":"b"},"name":"web"},
            "kind":"Deployment","apiVersion":"apps/v1"}"#;
        let drifts = walk_text(applied, None);
        assert_eq!(
            found(&drifts),
            [
                (Cause::NullOrEmpty, "spec.paused".into()),
                (
                    Cause::NullOrEmpty,
                    "spec.template.spec.containers[0].ports[0].hostPort".into()
                ),
                (
                    Cause::Quantity,
                    "spec.template.spec.containers[0].resources.limits[cpu]".into()
                ),
            ]
        );
        // `1` and `1.0` are one value; another one is quoted as serde_json prints it.
        let live = |replicas: &str| applied.replace(r#""replicas":2"#, &format!(r#""replicas":{replicas}"#));
        for (applied_replicas, live_replicas, stored) in [
            ("1", "1.0", None),
            ("1e2", "100", None),
            ("2", "2.50", Some("2.5")),
            ("2", "1e21", Some("1e+21")),
            ("2", "-0.0", Some("-0.0")),
            ("2", "18446744073709551615", Some("18446744073709551615")),
            ("2", "0.1", Some("0.1")),
        ] {
            let applied = live(applied_replicas);
            let drifts = walk_text(&applied, Some(&live(live_replicas)));
            let mutated: Vec<_> = drifts.iter().filter(|d| d.cause == Cause::Mutated).collect();
            match stored {
                None => assert!(mutated.is_empty(), "{live_replicas}: {mutated:?}"),
                Some(stored) => {
                    assert_eq!(mutated.len(), 1, "{live_replicas}: {drifts:?}");
                    assert_eq!(mutated[0].stored, Stored::Value(stored.into()));
                    let value: Value = serde_json::from_str(live_replicas).unwrap();
                    assert_eq!(stored, value.to_string());
                }
            }
        }
        // A quantity written as a number reaches the quantity model as written.
        let quantity = applied.replace(r#""cpu":"1000m""#, r#""cpu":0.5"#);
        let drift = walk_text(&quantity, None)
            .into_iter()
            .find(|d| d.cause == Cause::Quantity)
            .unwrap();
        assert_eq!(
            (drift.applied.as_str(), &drift.stored),
            ("0.5", &Stored::Value("\"500m\"".into()))
        );
    }

    fn walk_kind(
        group: &str,
        version: &str,
        kind: &str,
        applied: Value,
        live: Option<Value>,
    ) -> Vec<(Cause, String, Stored)> {
        let ty = crate::generated::api_type_of(group, version, kind).unwrap();
        let mut walker = Walker::new(Class::Typed, None).of_kind(group, version, kind, super::super::NEWEST_MINOR);
        let (applied, live) = (node(&applied), live.as_ref().map(node));
        let live = live.as_ref().map_or(Live::Unknown, Live::Has);
        walker.typed_root(applied.as_object().unwrap(), live, ty);
        walker
            .drifts
            .into_iter()
            .map(|d| (d.cause, d.path.api(), d.stored))
            .collect()
    }

    #[test]
    fn a_cluster_scoped_objects_namespace_is_cleared() {
        let role = |kind: &str| {
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
                   "metadata": {"name": "reader", "namespace": "monitoring"}, "rules": []})
        };
        let found = walk_kind(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRole",
            role("ClusterRole"),
            None,
        );
        assert!(
            found.contains(&(Cause::Namespace, "metadata.namespace".into(), Stored::Nothing)),
            "{found:?}"
        );
        let found = walk_kind("rbac.authorization.k8s.io", "v1", "Role", role("Role"), None);
        assert!(!found.iter().any(|d| d.0 == Cause::Namespace), "{found:?}");
        // A live object without the namespace last-applied holds is cluster-scoped, whatever
        // the kind (a custom resource whose CRD was not read included).
        let applied = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                             "metadata": {"name": "w", "namespace": "team"}});
        let live = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                          "metadata": {"name": "w", "uid": "1"}});
        let (applied, live) = (node(&applied), node(&live));
        let mut walker = Walker::new(Class::Custom, None).of_kind("example.com", "v1", "Widget", 37);
        walker.custom_root(applied.as_object().unwrap(), Live::Has(&live));
        assert_eq!(
            found_of(&walker.drifts),
            [(Cause::Namespace, "metadata.namespace".into())]
        );
        // A manifest of a custom resource: only when its CRD says `Cluster`.
        let mut walker = Walker::new(Class::Custom, None).of_kind("example.com", "v1", "Widget", 37);
        walker.custom_root(applied.as_object().unwrap(), Live::Unknown);
        assert!(walker.drifts.is_empty());
        let mut walker = Walker::new(Class::Custom, None)
            .of_kind("example.com", "v1", "Widget", 37)
            .cluster_scoped(true);
        walker.custom_root(applied.as_object().unwrap(), Live::Unknown);
        assert_eq!(
            found_of(&walker.drifts),
            [(Cause::Namespace, "metadata.namespace".into())]
        );
    }

    fn found_of(drifts: &[Drift]) -> Vec<(Cause, String)> {
        found(drifts)
    }

    #[test]
    fn service_defaults_that_replace_or_drop_an_applied_value() {
        let service =
            |spec: Value| json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": spec});
        let port = |target: Value| json!([{"name": "http", "port": 8080, "targetPort": target}]);
        for target in [json!(0), json!(""), Value::Null] {
            let found = walk_kind(
                "",
                "v1",
                "Service",
                service(json!({"ports": port(target.clone())})),
                None,
            );
            assert_eq!(
                found,
                [(
                    Cause::Defaulted,
                    "spec.ports[0].targetPort".into(),
                    Stored::Value("8080".into())
                )],
                "{target}"
            );
        }
        for target in [json!(80), json!("http")] {
            assert!(walk_kind("", "v1", "Service", service(json!({"ports": port(target)})), None).is_empty());
        }
        let config = json!({"clientIP": {"timeoutSeconds": 300}});
        for affinity in [None, Some("None")] {
            let mut spec = json!({"sessionAffinityConfig": config});
            if let Some(affinity) = affinity {
                spec["sessionAffinity"] = json!(affinity);
            }
            let found = walk_kind("", "v1", "Service", service(spec), None);
            assert_eq!(
                found,
                [(Cause::Defaulted, "spec.sessionAffinityConfig".into(), Stored::Nothing)],
                "{affinity:?}"
            );
        }
        let kept = service(json!({"sessionAffinity": "ClientIP", "sessionAffinityConfig": config}));
        assert!(walk_kind("", "v1", "Service", kept, None).is_empty());
        // Live: the stored value is the live object's.
        let live = service(json!({"ports": port(json!(8080)), "sessionAffinity": "None"}));
        let applied = service(json!({"ports": port(json!(0))}));
        assert_eq!(
            walk_kind("", "v1", "Service", applied, Some(live)),
            [(
                Cause::Defaulted,
                "spec.ports[0].targetPort".into(),
                Stored::Value("8080".into())
            )]
        );
    }
}
