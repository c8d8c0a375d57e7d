//! Cluster facts for context-aware checks, answered by Kubewarden's host callbacks in a
//! cluster, by a replay file under kwctl or `syncguard run`, and by the scanned set offline
//! (the host side of the last two is in the syncguard-scan crate).

use crate::admission::Text;
use crate::k8s::view_list;
use kubewarden_policy_sdk::host_capabilities::kubernetes::{GetResourceRequest, ListAllResourcesRequest};
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::BTreeSet;
use std::marker::PhantomData;

/// Objects as the cluster answered them: the text of a Kubernetes List, unread until a check
/// reads its items into the view it needs with [`Items::read`].
#[derive(Debug, Clone)]
pub struct Items {
    /// The List's JSON text.
    body: String,
}

/// Why the items of a List could not be read.
#[derive(Debug)]
pub enum ItemsError {
    /// The answer is not a List (`the cluster's answer is not a List: ...`).
    NotAList(String),
    /// Item `.0` does not fit the view; the error's position is in the item's own text.
    Item(usize, serde_json::Error),
}

impl Items {
    /// The List's JSON text, for a check that reads it into the core's tree ([`crate::json`])
    /// rather than into a serde view.
    pub fn text(&self) -> &str {
        &self.body
    }

    /// The items read as `T`, in one pass over the List (a `null` item reads as `T::default()`,
    /// as a `null` field does). Only when that fails is the List read again, item by item, for
    /// the error to name the item and a position inside it.
    pub fn read<'a, T: Deserialize<'a> + Default>(&'a self) -> Result<Vec<T>, ItemsError> {
        // A List is an object; serde's derive would also read a struct from an array.
        if self.body.trim_start().starts_with('{')
            && let Ok(list) = serde_json::from_str::<ListOf<T>>(&self.body)
        {
            return Ok(list.items);
        }
        let raw = parse_list(&self.body).map_err(ItemsError::NotAList)?;
        let mut items = Vec::with_capacity(raw.len());
        for (i, item) in raw.into_iter().enumerate() {
            let item = serde_json::from_str::<Option<T>>(item.get()).map_err(|e| ItemsError::Item(i, e))?;
            items.push(item.unwrap_or_default());
        }
        Ok(items)
    }

    /// Calls `each` with every item read as `T`, in one pass over the List, keeping none: a
    /// view that borrows its strings from the text (as [`crate::k8s::CrdIdentity`] does) reads
    /// a List of thousands without building it. A `null` item reads as `T::default()`, as a
    /// `null` field does. When the pass fails, `each` has seen some items, and the answer is
    /// [`Items::read`]'s: its error (naming the item), or, were the items to read one by one,
    /// every item given to `each` again (a caller that collects a set is not misled).
    pub fn each<'a, T: Deserialize<'a> + Default>(&'a self, mut each: impl FnMut(T)) -> Result<(), ItemsError> {
        // A List is an object; serde's derive would also read a struct from an array.
        if self.body.trim_start().starts_with('{') {
            let mut reader = serde_json::Deserializer::from_str(&self.body);
            let seed = ListSeed {
                each: &mut each,
                item: PhantomData,
            };
            if seed.deserialize(&mut reader).and_then(|()| reader.end()).is_ok() {
                return Ok(());
            }
        }
        self.read::<T>()?.into_iter().for_each(each);
        Ok(())
    }

    /// Whether the List's text is `text`, byte for byte (compared a word at a time), for a check that
    /// keeps what it read of the last List (a scan hands each document the same List).
    pub fn is_text(&self, text: &str) -> bool {
        same_text(&self.body, text)
    }

    /// The List's text, taken.
    pub fn into_text(self) -> String {
        self.body
    }
}

/// Why a cluster lookup failed, as the checks tell failures apart. Its text (`Display`) is the
/// host's error as a policy quotes it ([`host_error`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LookupError {
    /// The object asked for does not exist (`get_resource`'s [`not_found`] words).
    NotFound(String),
    /// The host refused the lookup before asking the cluster: the policy was not granted access
    /// to that resource (it is not among its `contextAwareResources`, or lookups are off).
    Forbidden(String),
    /// Any other failure: the cluster's or the host's error, or an answer that cannot be read.
    Other(String),
}

impl LookupError {
    /// The failure a host's error message describes (with or without the guest library's and
    /// the evaluator's prefixes, which [`host_error`] drops).
    pub fn from_host(message: &str) -> LookupError {
        let message = host_error(message);
        if message.starts_with(NOT_FOUND) {
            LookupError::NotFound(message)
        } else if message.starts_with(FORBIDDEN) {
            LookupError::Forbidden(message)
        } else {
            LookupError::Other(message)
        }
    }

    /// The error's text.
    pub fn message(&self) -> &str {
        match self {
            LookupError::NotFound(m) | LookupError::Forbidden(m) | LookupError::Other(m) => m,
        }
    }
}

impl std::fmt::Display for LookupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl From<LookupError> for String {
    fn from(error: LookupError) -> String {
        error.message().to_string()
    }
}

/// How [`not_found`] starts.
const NOT_FOUND: &str = "Cannot find ";

/// How Kubewarden's policy-evaluator starts its refusal of a lookup the policy may not make
/// (`Policy has not been granted access to Kubernetes <apiVersion>/<kind> resources. The
/// violation has been reported.`); `syncguard run` refuses in the same words.
const FORBIDDEN: &str = "Policy has not been granted access to Kubernetes ";

/// Read access to the cluster's objects. Its one implementation goes over [`HostCalls`], the
/// Kubewarden host calls: a module's host (policy-server, kwctl, `syncguard run`), a replay file
/// and the offline cluster of `syncguard scan` differ only in how they answer a call.
pub trait Cluster {
    /// Every object of `kind` in `api_version`, across namespaces (`list_resources_all`), each
    /// pruned to `field_masks` (dot-separated paths; none: whole objects) as Kubewarden's
    /// reflector does (`syncguard_scan::reflector` reproduces it).
    fn list_all(&self, api_version: &str, kind: &str, field_masks: &[&str]) -> Result<Items, LookupError>;

    /// The object of `kind` in `api_version` named `name` (in `namespace` when the kind is
    /// namespaced), as JSON text (`get_resource`), pruned to `field_masks` where the host honours
    /// them; [`LookupError::NotFound`] when it does not exist.
    fn get(
        &self,
        api_version: &str,
        kind: &str,
        name: &str,
        namespace: Option<&str>,
        field_masks: &[&str],
    ) -> Result<String, LookupError>;
}

/// A [`Cluster`] that asks another for each object once: the all-in-one's checks that look up the
/// same object with the same field masks (sync-drift and object-validation read a custom
/// resource's CRD) share one `get_resource`, as Kubewarden's own cache would answer the second
/// from the first.
pub struct Remembered<'c> {
    inner: &'c dyn Cluster,
    /// The `get` answers so far, by their arguments.
    gets: std::cell::RefCell<Vec<(GetKey, Result<String, LookupError>)>>,
}

/// The arguments of a `get`: apiVersion, kind, name, namespace and field masks.
type GetKey = (String, String, String, Option<String>, Vec<String>);

impl<'c> Remembered<'c> {
    /// Remembers the answers of `inner`.
    pub fn new(inner: &'c dyn Cluster) -> Remembered<'c> {
        Remembered {
            inner,
            gets: std::cell::RefCell::new(Vec::new()),
        }
    }
}

impl Cluster for Remembered<'_> {
    fn list_all(&self, api_version: &str, kind: &str, field_masks: &[&str]) -> Result<Items, LookupError> {
        self.inner.list_all(api_version, kind, field_masks)
    }

    fn get(
        &self,
        api_version: &str,
        kind: &str,
        name: &str,
        namespace: Option<&str>,
        field_masks: &[&str],
    ) -> Result<String, LookupError> {
        let key: GetKey = (
            api_version.to_string(),
            kind.to_string(),
            name.to_string(),
            namespace.map(str::to_string),
            field_masks.iter().map(|m| m.to_string()).collect(),
        );
        if let Some((_, answer)) = self.gets.borrow().iter().find(|(k, _)| *k == key) {
            return answer.clone();
        }
        let answer = self.inner.get(api_version, kind, name, namespace, field_masks);
        self.gets.borrow_mut().push((key, answer.clone()));
        answer
    }
}

/// One way of answering Kubewarden's `kubernetes` host calls: the waPC host of a module, a
/// replay file, the offline cluster. Every `HostCalls` is a [`Cluster`].
pub trait HostCalls {
    /// Answers the host call `kubewarden/kubernetes/<operation>` (`list_resources_all`,
    /// `get_resource`) of JSON `request` with the answer's bytes, or the host's error message.
    fn host_call(&self, operation: &str, request: &[u8]) -> Result<Vec<u8>, String>;
}

/// The operation of `list_resources_all`.
pub const LIST_RESOURCES_ALL: &str = "list_resources_all";

/// The operation of `get_resource`.
pub const GET_RESOURCE: &str = "get_resource";

impl<T: HostCalls + ?Sized> Cluster for T {
    fn list_all(&self, api_version: &str, kind: &str, field_masks: &[&str]) -> Result<Items, LookupError> {
        let request = serde_json::to_vec(&list_all_request(api_version, kind, field_masks))
            .map_err(|e| LookupError::Other(e.to_string()))?;
        let answer = self
            .host_call(LIST_RESOURCES_ALL, &request)
            .map_err(|e| LookupError::from_host(&e))?;
        list_items(answer).map_err(LookupError::Other)
    }

    fn get(
        &self,
        api_version: &str,
        kind: &str,
        name: &str,
        namespace: Option<&str>,
        field_masks: &[&str],
    ) -> Result<String, LookupError> {
        let request = serde_json::to_vec(&get_request(api_version, kind, name, namespace, field_masks))
            .map_err(|e| LookupError::Other(e.to_string()))?;
        let answer = self
            .host_call(GET_RESOURCE, &request)
            .map_err(|e| LookupError::from_host(&e))?;
        String::from_utf8(answer).map_err(|e| LookupError::Other(format!("the cluster's answer is not text: {e}")))
    }
}

/// How Kubewarden's `get_resource` says that the object does not exist (policy-evaluator's
/// Kubernetes client: `Cannot find <apiVersion>/<kind> named '<name>' inside of namespace
/// '<namespace as Rust debug>'`); the offline cluster answers the same.
pub fn not_found(api_version: &str, kind: &str, name: &str, namespace: Option<&str>) -> String {
    format!("{NOT_FOUND}{api_version}/{kind} named '{name}' inside of namespace '{namespace:?}'")
}

/// How Kubewarden's policy-evaluator words a host call that failed, before the error itself.
pub const CALLBACK_FAILURE: &str = "Callback evaluation failure: ";

/// The request of Kubewarden's `kubernetes/get_resource` host call, as kubewarden-policy-sdk
/// defines it: the cache kept (Kubewarden keeps answers five seconds), `field_masks` absent
/// (`null`) when none are given.
pub fn get_request(
    api_version: &str,
    kind: &str,
    name: &str,
    namespace: Option<&str>,
    field_masks: &[&str],
) -> GetResourceRequest {
    GetResourceRequest {
        api_version: api_version.to_string(),
        kind: kind.to_string(),
        name: name.to_string(),
        namespace: namespace.map(str::to_string),
        disable_cache: false,
        field_masks: (!field_masks.is_empty()).then(|| field_masks.iter().map(|p| p.to_string()).collect()),
    }
}

/// What a policy quotes of a failed host call: the host's error without the guest library's
/// `Host error: ` prefix and the evaluator's [`CALLBACK_FAILURE`] (the same words on every
/// failure, which would take the room of the error itself in a 256-character warning), and only
/// its first paragraph. kwctl's error carries anyhow's `Stack backtrace:` after a blank line,
/// twenty frames long, which has no place in a rejection or a warning. A module and the native
/// checks then quote a failure alike.
pub fn host_error(message: &str) -> String {
    let message = message.strip_prefix("Host error: ").unwrap_or(message).trim_start();
    let message = message.strip_prefix(CALLBACK_FAILURE).unwrap_or(message);
    let first = message.split("\n\n").next().unwrap_or(message);
    first.trim_end().to_string()
}

/// A cluster that answers nothing: for checks that are not context-aware.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoCluster;

impl HostCalls for NoCluster {
    fn host_call(&self, operation: &str, request: &[u8]) -> Result<Vec<u8>, String> {
        let asked: Value = serde_json::from_slice(request).unwrap_or_default();
        let text = |key: &str| asked[key].as_str().unwrap_or_default().to_string();
        let name = match operation {
            GET_RESOURCE => format!(" {}", text("name")),
            _ => String::new(),
        };
        Err(format!(
            "no cluster lookups are available here (asked for {}{name} in {})",
            text("kind"),
            text("api_version")
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// The CRD of a custom resource.

/// The CRD fields the checks that judge a custom resource against its CRD read (`get_resource`
/// field masks): sync-drift's pruning and object-validation's schema. One set for both, so that a
/// host that keeps answers (Kubewarden's cache, [`Remembered`] in the all-in-one) serves both
/// from one lookup.
pub const CRD_FIELDS: &[&str] = &["spec.preserveUnknownFields", "spec.scope", "spec.versions"];

/// [`CRD_FIELDS`] and the kind the CRD defines: the masks of the lookup by the likely name
/// ([`crd_of_resource`]), whose answer must show it defines the kind.
pub const CRD_KIND_FIELDS: &[&str] = &[
    "spec.names.kind",
    "spec.preserveUnknownFields",
    "spec.scope",
    "spec.versions",
];

/// The CRD fields read of every CRD when the CRD of a kind is found by listing them.
pub const CRD_NAME_FIELDS: &[&str] = &["spec.group", "spec.names.kind"];

/// The plural the API server most likely serves `kind` as: the lowercase kind in English
/// plural, as kubebuilder's generated CRDs (gobuffalo/flect) and kube-rs's `ApiResource` form
/// it for regular nouns (`Prometheus` `prometheuses`, `NetworkPolicy` `networkpolicies`,
/// `Gateway` `gateways`). The 500 real CRDs of the bench all follow it; a CRD named by hand
/// (Kube-OVN's `iptables-eips`, Gatekeeper's `assign`) does not, and is then found by listing.
/// Written by hand: a guess that misses only costs the list it saves, and an inflection crate's
/// irregular nouns would not make it a better guess of names people chose.
pub fn likely_plural(kind: &str) -> String {
    let word = kind.to_ascii_lowercase();
    let ends = |suffix: &str| word.ends_with(suffix);
    if ["s", "x", "z", "ch", "sh"].into_iter().any(ends) {
        format!("{word}es")
    } else if let Some(stem) = word.strip_suffix('y')
        && stem.chars().next_back().is_some_and(|c| !"aeiou".contains(c))
    {
        format!("{stem}ies")
    } else {
        format!("{word}s")
    }
}

/// The parts of a CRD answer the custom-resource checks read, everything else stepped over (the
/// `metadata` Kubewarden always sends whole, the other versions' schemas): from
/// [`CrdPart::KindRoot`], `spec.names.kind` alone; from [`CrdPart::VersionsRoot`], what
/// compiling a version needs, `spec.versions` with each version's `name` and `subresources` read
/// and its `schema` left as text, and of `metadata` what says the API server stored the CRD
/// (`uid`, `resourceVersion`, `creationTimestamp`); and a version's schema compiled part by part
/// (object-validation's `Schema::compile_parts`): from [`CrdPart::SchemaText`], its
/// `openAPIV3Schema` as text; from [`CrdPart::Schema`], a schema's keywords, its sub-schemas
/// left as text. One grammar for all, so a module holds one reader for them.
#[derive(Clone, Copy)]
pub enum CrdPart {
    /// The answer, read for `spec.names.kind`.
    KindRoot,
    /// Its `spec`.
    KindSpec,
    /// Its `spec.names`.
    Names,
    /// The answer, read for `spec.versions`.
    VersionsRoot,
    /// Its `spec`.
    VersionsSpec,
    /// Its `metadata`: what the API server sets when it stores an object.
    Stored,
    /// `spec.versions`.
    List,
    /// One version: `name` and `subresources` read, `schema` kept as text.
    Version,
    /// A version's `schema`: `openAPIV3Schema` kept as text.
    SchemaText,
    /// A schema: its keywords read, its sub-schemas (`properties`' members, `items`,
    /// `additionalProperties`, `not`) kept as text; `allOf`, `anyOf` and `oneOf` (small where a
    /// CRD has them) read whole.
    Schema,
    /// A schema's `properties`: each kept as text.
    SchemaMembers,
    /// A value read whole.
    All,
}

impl crate::json::Grammar for CrdPart {
    fn member(self, key: &str) -> crate::json::Read<Self> {
        use crate::json::Read::{Parse, Raw, Skip};
        match (self, key) {
            (CrdPart::KindRoot, "spec") => Parse(CrdPart::KindSpec),
            (CrdPart::KindSpec, "names") => Parse(CrdPart::Names),
            (CrdPart::Names, "kind") => Parse(CrdPart::All),
            (CrdPart::VersionsRoot, "spec") => Parse(CrdPart::VersionsSpec),
            (CrdPart::VersionsRoot, "metadata") => Parse(CrdPart::Stored),
            (CrdPart::Stored, "uid" | "resourceVersion" | "creationTimestamp") => Parse(CrdPart::All),
            (CrdPart::VersionsSpec, "versions") => Parse(CrdPart::List),
            (CrdPart::Version, "name" | "subresources") => Parse(CrdPart::All),
            (CrdPart::Version, "schema") | (CrdPart::SchemaText, "openAPIV3Schema") => Raw,
            (CrdPart::Schema, "properties") => Parse(CrdPart::SchemaMembers),
            (CrdPart::Schema, "additionalProperties" | "items" | "not") | (CrdPart::SchemaMembers, _) => Raw,
            (CrdPart::All | CrdPart::Schema, _) => Parse(CrdPart::All),
            _ => Skip,
        }
    }
    fn element(self) -> crate::json::Read<Self> {
        match self {
            CrdPart::List => crate::json::Read::Parse(CrdPart::Version),
            CrdPart::All | CrdPart::Schema | CrdPart::SchemaMembers => crate::json::Read::Parse(CrdPart::All),
            _ => crate::json::Read::Skip,
        }
    }
}

/// Why the CRD of a custom resource is not at hand ([`crd_of_resource`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CrdMissing {
    /// No CRD of that name exists.
    NotFound {
        /// The CRD's name.
        name: String,
    },
    /// The cluster's CRDs (listed for a resource named by its kind) hold none of that group and
    /// kind.
    NoneOfKind,
    /// The CRDs could not be listed: the host's error.
    Unlisted(String),
    /// The list of CRDs is not JSON: the reader's error.
    ListNotJson(String),
    /// The CRD could not be read: its name and the host's error.
    Unreadable {
        /// The CRD's name.
        name: String,
        /// The host's error.
        error: String,
    },
}

/// The API version of the CustomResourceDefinitions the checks read from the cluster.
pub const CRD_API_VERSION: &str = "apiextensions.k8s.io/v1";
/// The kind of the CustomResourceDefinitions the checks read from the cluster.
pub const CRD_KIND: &str = "CustomResourceDefinition";

/// The CRD (its name and the answer's text, pruned to [`CRD_FIELDS`] or [`CRD_KIND_FIELDS`]) of a
/// custom resource of `kind` in `group` that the request names as `resource`.
///
/// Admission requests name the resource by its plural, which with the group is the CRD's name.
/// Kubewarden's audit scanner names it by the object's kind (audit-scanner's
/// `internal/scanner/admission_request.go` sets `Resource` to the kind), so the CRD's name is not
/// in the request: it is first read by its likely name ([`likely_plural`]), its answer carrying
/// `spec.names.kind` to check it defines that kind, and only when that misses found in the list
/// of every CRD. Listing costs far more than reading the CRD (in policy-server about 31 million
/// instructions per audited object for a cluster of 500 CRDs, against 1 million for the whole
/// request of the SDK floor: docs/benchmarks.md).
pub fn crd_of_resource(
    resource: &str,
    group: &str,
    kind: &str,
    cluster: &dyn Cluster,
) -> Result<(String, String), CrdMissing> {
    let name = if resource == kind {
        let guess = format!("{}.{group}", likely_plural(kind));
        if let Ok(text) = cluster.get(CRD_API_VERSION, CRD_KIND, &guess, None, CRD_KIND_FIELDS)
            && defined_kind(&text).as_deref() == Some(kind)
        {
            return Ok((guess, text));
        }
        crd_named_in_list(group, kind, cluster)?
    } else {
        format!("{resource}.{group}")
    };
    match cluster.get(CRD_API_VERSION, CRD_KIND, &name, None, CRD_FIELDS) {
        Ok(text) => Ok((name, text)),
        Err(LookupError::NotFound(_)) => Err(CrdMissing::NotFound { name }),
        Err(e) => Err(CrdMissing::Unreadable { name, error: e.into() }),
    }
}

/// The kind a CRD answer defines (`spec.names.kind`), reading nothing else of it.
fn defined_kind(text: &str) -> Option<String> {
    let crd = crate::json::read(text, CrdPart::KindRoot, 8).ok()?;
    crd.at(&["spec", "names", "kind"])
        .and_then(crate::json::Node::as_str)
        .map(str::to_string)
}

/// The name of the CRD that serves `kind` in `group`, from the list of the cluster's CRDs.
fn crd_named_in_list(group: &str, kind: &str, cluster: &dyn Cluster) -> Result<String, CrdMissing> {
    use crate::json::Node;
    let items = cluster
        .list_all(CRD_API_VERSION, CRD_KIND, CRD_NAME_FIELDS)
        .map_err(|e| CrdMissing::Unlisted(e.into()))?;
    let list = crate::json::read(items.text(), crate::json::Everything, usize::MAX)
        .map_err(|e| CrdMissing::ListNotJson(e.to_string()))?;
    let crds: &[Node<'_>] = match list.get("items") {
        Some(Node::Array(items)) => items,
        _ => &[],
    };
    let field = |crd: &Node<'_>, keys: &[&str]| crd.at(keys).and_then(Node::as_str).map(str::to_string);
    crds.iter()
        .find(|crd| {
            field(crd, &["spec", "group"]).as_deref() == Some(group)
                && field(crd, &["spec", "names", "kind"]).as_deref() == Some(kind)
        })
        .and_then(|crd| field(crd, &["metadata", "name"]))
        .ok_or(CrdMissing::NoneOfKind)
}

/// A cluster that lists fixed objects as they are, for the core's unit tests (the host side's
/// offline cluster, which also prunes them as Kubewarden does, is syncguard-scan's).
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct Objects(pub Vec<Value>);

#[cfg(test)]
impl HostCalls for Objects {
    fn host_call(&self, operation: &str, request: &[u8]) -> Result<Vec<u8>, String> {
        let asked: Value = serde_json::from_slice(request).map_err(|e| e.to_string())?;
        let of_kind = |o: &&Value| o["apiVersion"] == asked["api_version"] && o["kind"] == asked["kind"];
        match operation {
            LIST_RESOURCES_ALL => Ok(
                serde_json::json!({"items": self.0.iter().filter(of_kind).collect::<Vec<_>>()})
                    .to_string()
                    .into_bytes(),
            ),
            _ => {
                let namespace = asked["namespace"].as_str();
                self.0
                    .iter()
                    .filter(of_kind)
                    .find(|o| {
                        o["metadata"]["name"] == asked["name"] && o["metadata"]["namespace"].as_str() == namespace
                    })
                    .map(|o| o.to_string().into_bytes())
                    .ok_or_else(|| {
                        not_found(
                            asked["api_version"].as_str().unwrap_or_default(),
                            asked["kind"].as_str().unwrap_or_default(),
                            asked["name"].as_str().unwrap_or_default(),
                            namespace,
                        )
                    })
            }
        }
    }
}

/// The request of Kubewarden's `kubernetes/list_resources_all` host call, as
/// kubewarden-policy-sdk defines it: no selectors, and `field_masks` absent (`null`) when none
/// are given, else the set of paths.
pub fn list_all_request(api_version: &str, kind: &str, field_masks: &[&str]) -> ListAllResourcesRequest {
    ListAllResourcesRequest {
        api_version: api_version.to_string(),
        kind: kind.to_string(),
        label_selector: None,
        field_selector: None,
        field_masks: (!field_masks.is_empty()).then(|| {
            field_masks
                .iter()
                .map(|path| path.to_string())
                .collect::<BTreeSet<String>>()
        }),
    }
}

/// Objects as [`Items`].
pub fn to_items<'a>(objects: impl IntoIterator<Item = &'a Value>) -> Result<Items, String> {
    let items: Vec<&Value> = objects.into_iter().collect();
    let body = serde_json::to_string(&serde_json::json!({ "items": items })).map_err(|e| e.to_string())?;
    Ok(Items { body })
}

/// A Kubernetes List as far as a policy checks it: its items unread.
#[derive(Deserialize)]
#[serde(remote = "Self")]
struct List<'a> {
    /// The listed objects, unread; `null` or absent reads as none.
    #[serde(borrow, default)]
    items: Option<Vec<&'a RawValue>>,
}

crate::admission::object_only!(List<'de>);

/// A Kubernetes List read in one pass, its items as views.
#[derive(Deserialize)]
#[serde(bound = "T: Deserialize<'de> + Default")]
struct ListOf<T> {
    /// The listed objects; `null` (the list or an item) reads as empty.
    #[serde(default, deserialize_with = "view_list")]
    items: Vec<T>,
}

/// A Kubernetes List read in one pass, each item given to `each` as it is read (the `items` of
/// [`ListOf`] without the `Vec`). Written with serde's visitors since serde's derive has no
/// way to hand a field's elements over one by one.
struct ListSeed<'f, T, F> {
    /// What is done with each item.
    each: &'f mut F,
    /// The items' view.
    item: PhantomData<T>,
}

impl<'de, T: Deserialize<'de> + Default, F: FnMut(T)> DeserializeSeed<'de> for ListSeed<'_, T, F> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, T: Deserialize<'de> + Default, F: FnMut(T)> Visitor<'de> for ListSeed<'_, T, F> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("struct ListOf")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = false;
        while let Some(key) = map.next_key::<Text<'de>>()? {
            if key.0 != "items" {
                map.next_value::<IgnoredAny>()?;
            } else if std::mem::replace(&mut seen, true) {
                return Err(serde::de::Error::duplicate_field("items"));
            } else {
                map.next_value_seed(ItemsSeed {
                    each: &mut *self.each,
                    item: PhantomData,
                })?;
            }
        }
        Ok(())
    }
}

/// The `items` of a [`ListSeed`]: `null` reads as none, a `null` item as `T::default()`.
struct ItemsSeed<'f, T, F> {
    /// What is done with each item.
    each: &'f mut F,
    /// The items' view.
    item: PhantomData<T>,
}

impl<'de, T: Deserialize<'de> + Default, F: FnMut(T)> DeserializeSeed<'de> for ItemsSeed<'_, T, F> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de, T: Deserialize<'de> + Default, F: FnMut(T)> Visitor<'de> for ItemsSeed<'_, T, F> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(item) = seq.next_element::<Option<T>>()? {
            (self.each)(item.unwrap_or_default());
        }
        Ok(())
    }
}

/// The items of a List, unread, or why the text is not a List.
fn parse_list(text: &str) -> Result<Vec<&RawValue>, String> {
    let list: List = serde_json::from_str(text).map_err(|e| format!("the cluster's answer is not a List: {e}"))?;
    Ok(list.items.unwrap_or_default())
}

/// Takes a Kubernetes List response: JSON text (its items are read by [`Items::read`]). A `Vec`
/// is kept as it is, not copied: a List of thousands of CRDs is megabytes.
pub fn list_items(body: impl Into<Vec<u8>>) -> Result<Items, String> {
    let body = String::from_utf8(body.into()).map_err(|e| format!("the cluster's answer is not a List: {e}"))?;
    Ok(Items { body })
}

/// Whether two texts are the same, compared eight bytes at a time. Written by hand because the
/// `memcmp` a wasm32 module links (compiler-builtins') compares one byte at a time, and
/// crd-kind-collision compares the List of megabytes with the last one on every call of a scan: with a
/// quarter of a 10,000-manifest tree being CRDs, that byte loop took most of the scan's time.
fn same_text(a: &str, b: &str) -> bool {
    const WORD: usize = 8;
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let word = |chunk: &[u8]| u64::from_ne_bytes(chunk.try_into().unwrap_or([0; WORD]));
    let (mut left, mut right) = (a.chunks_exact(WORD), b.chunks_exact(WORD));
    left.by_ref().zip(right.by_ref()).all(|(x, y)| word(x) == word(y)) && left.remainder() == right.remainder()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_text_compares_every_byte() {
        let text = "0123456789abcdefXYZ";
        assert!(same_text(text, String::from(text).as_str()));
        assert!(same_text("", ""));
        for other in ["0123456789abcdefXYz", "0123456_89abcdefXYZ", "0123456789abcdefXY", "x"] {
            assert!(!same_text(text, other), "{other}");
        }
    }

    #[test]
    fn list_answers_are_read_in_one_pass_and_errors_name_the_item() {
        let read = |body: &[u8]| list_items(body).and_then(|items| items.read::<Value>().map_err(|e| format!("{e:?}")));
        let items = read(br#"{"kind": "List", "items": [{"a": 1}, null, {"b": [2]}]}"#).unwrap();
        assert_eq!(
            items,
            [serde_json::json!({"a": 1}), Value::Null, serde_json::json!({"b": [2]})]
        );
        for empty in [&br#"{"items": null}"#[..], br#"{"kind": "List"}"#] {
            assert!(read(empty).unwrap().is_empty());
        }
        let wrong = read(br#"{"items": {}}"#).unwrap_err();
        assert!(
            wrong.contains("the cluster's answer is not a List: invalid type: map, expected a sequence"),
            "{wrong}"
        );
        assert!(read(b"[[1]]").unwrap_err().contains("expected struct List"));
        assert!(read(b"{\"items\": [").unwrap_err().contains("EOF while parsing a list"));
        assert!(list_items(b"\xff").unwrap_err().contains("not a List"));
        let crds = list_items(br#"{"items": [{"metadata": {"name": "a"}}, {"metadata": {"name": 7}}]}"#).unwrap();
        match crds.read::<crate::k8s::CrdIdentity>() {
            Err(ItemsError::Item(1, e)) => {
                assert_eq!(
                    e.to_string(),
                    "invalid type: integer `7`, expected a string at line 1 column 23"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_item_is_given_as_read_the_errors_as_read_gives_them() {
        let each = |body: &[u8]| {
            let items = list_items(body).unwrap();
            let mut seen = Vec::new();
            let answer = items
                .each::<Value>(|item| seen.push(item))
                .map_err(|e| format!("{e:?}"));
            (
                answer.map(|()| seen),
                items.read::<Value>().map_err(|e| format!("{e:?}")),
            )
        };
        for body in [
            &br#"{"kind": "List", "items": [{"a": 1}, null, {"b": [2]}], "metadata": {}}"#[..],
            br#"{"items": null}"#,
            br#"{"kind": "List"}"#,
            br#" {"it\u0065ms": [{"a": "\u0041"}]}"#,
        ] {
            let (streamed, read) = each(body);
            assert!(streamed.is_ok(), "{streamed:?}");
            assert_eq!(streamed, read);
        }
        for body in [
            &br#"{"items": {}}"#[..],
            b"[[1]]",
            b"{\"items\": [",
            br#"{"items": [], "items": []}"#,
            br#"{"items": [1]} x"#,
        ] {
            let (streamed, read) = each(body);
            assert!(read.is_err(), "{read:?}");
            assert_eq!(streamed.unwrap_err(), read.unwrap_err());
        }
        // Borrowed where the text allows: nothing of a plain string is copied.
        let crds = list_items(br#"{"items": [{"metadata": {"name": "a.b"}, "spec": {"names": {"kind": "K\u0041"}}}]}"#)
            .unwrap();
        crds.each::<crate::k8s::CrdIdentity>(|crd| {
            assert!(matches!(crd.metadata.name, std::borrow::Cow::Borrowed("a.b")));
            assert!(matches!(crd.spec.names.kind, std::borrow::Cow::Owned(ref kind) if kind == "KA"));
        })
        .unwrap();
        let wrong = list_items(br#"{"items": [{"metadata": {"name": "a"}}, {"metadata": {"name": 7}}]}"#).unwrap();
        let mut seen = 0;
        match wrong.each::<crate::k8s::CrdIdentity>(|_| seen += 1) {
            Err(ItemsError::Item(1, e)) => {
                assert_eq!(
                    e.to_string(),
                    "invalid type: integer `7`, expected a string at line 1 column 23"
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(seen, 1, "what was read before the error was given");
    }

    #[test]
    fn list_all_requests_carry_the_masks() {
        let text = |masks: &[&str]| serde_json::to_string(&list_all_request("v1", "Pod", masks)).unwrap();
        assert!(text(&[]).contains(r#""field_masks":null"#), "{}", text(&[]));
        assert!(
            text(&["spec.b", "spec.a"]).contains(r#""field_masks":["spec.a","spec.b"]"#),
            "{}",
            text(&["spec.b", "spec.a"])
        );
    }

    #[test]
    fn lookup_failures_are_told_apart_as_kubewarden_hands_them_to_a_module() {
        let missing = not_found(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            "x.example.com",
            None,
        );
        let kind = |message: &str| match LookupError::from_host(message) {
            LookupError::NotFound(_) => "not found",
            LookupError::Forbidden(_) => "forbidden",
            LookupError::Other(_) => "other",
        };
        assert_eq!(kind(&missing), "not found");
        // As a module receives it: the guest library's and Kubewarden's words before it.
        assert_eq!(kind(&format!("Host error: {CALLBACK_FAILURE}{missing}")), "not found");
        assert_eq!(
            kind(&format!("{CALLBACK_FAILURE}{missing}\n\nStack backtrace:\n 0: x")),
            "not found"
        );
        assert_eq!(
            kind(&format!("{CALLBACK_FAILURE}customresourcedefinitions is forbidden")),
            "other"
        );
        assert_eq!(kind("forbidden: Cannot find it"), "other");
        // Refused before the cluster is asked: Kubewarden's words (`syncguard run` uses them too).
        assert_eq!(
            kind(
                "Host error: Policy has not been granted access to Kubernetes apiextensions.k8s.io/v1/CustomResourceDefinition resources. The violation has been reported."
            ),
            "forbidden"
        );
        assert_eq!(
            kind("access to CustomResourceDefinition in apiextensions.k8s.io/v1 is not allowed"),
            "other"
        );
        // A module quotes what the host said, as the native checks do.
        let quoted = LookupError::from_host(&format!("Host error: {CALLBACK_FAILURE}{missing}\n\nStack backtrace:"));
        assert_eq!(quoted.to_string(), missing);
    }

    #[test]
    fn every_host_calls_is_a_cluster() {
        let objects = Objects(vec![serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}
        })]);
        let cluster: &dyn Cluster = &objects;
        assert_eq!(
            cluster
                .list_all("v1", "ConfigMap", &[])
                .unwrap()
                .read::<Value>()
                .unwrap()
                .len(),
            1
        );
        assert!(
            cluster
                .get("v1", "ConfigMap", "a", Some("ns"), &[])
                .unwrap()
                .contains("\"a\"")
        );
        assert!(matches!(
            cluster.get("v1", "ConfigMap", "b", Some("ns"), &[]),
            Err(LookupError::NotFound(_))
        ));
        let none: &dyn Cluster = &NoCluster;
        assert_eq!(
            none.get("v1", "ConfigMap", "a", None, &[]).unwrap_err().to_string(),
            "no cluster lookups are available here (asked for ConfigMap a in v1)"
        );
    }

    #[test]
    fn the_kind_lookup_asks_for_the_crd_fields_and_the_kind() {
        let mut fields: Vec<&str> = CRD_FIELDS.to_vec();
        fields.push("spec.names.kind");
        fields.sort_unstable();
        assert_eq!(CRD_KIND_FIELDS, fields.as_slice());
    }

    /// kube-rs's `to_plural` and kubebuilder's generated CRDs form these; a kind named otherwise
    /// (flect's irregular nouns, a plural chosen by hand) only costs the list.
    #[test]
    fn the_likely_plural_is_the_regular_english_plural() {
        let plurals = [
            ("Prometheus", "prometheuses"),
            ("NetworkPolicy", "networkpolicies"),
            ("Gateway", "gateways"),
            ("Certificate", "certificates"),
            ("Ingress", "ingresses"),
            ("Mailbox", "mailboxes"),
            ("Batch", "batches"),
            ("Mesh", "meshes"),
        ];
        for (kind, plural) in plurals {
            assert_eq!(likely_plural(kind), plural);
        }
    }
}
