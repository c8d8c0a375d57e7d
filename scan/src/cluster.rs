//! The offline cluster of `syncguard scan`: context-aware policies ask it what they would ask
//! the API server, and it answers from the scanned objects plus a `--cluster-snapshot` file.
//!
//! - Objects are matched by API group and kind, whatever version the policy asks for: the API
//!   server serves every object of a resource at each of its versions.
//! - Objects are answered as Kubewarden answers them ([`syncguard::reflector`]): a listed object
//!   without `metadata.managedFields` and the `kubectl.kubernetes.io/last-applied-configuration`
//!   annotation, and every object pruned to the request's `field_masks` (all but `apiVersion`,
//!   `kind` and `metadata`).
//! - A scanned object replaces a snapshot object with the same group, kind, namespace and
//!   name: the scan describes the cluster after the manifests are applied.
//! - The object under evaluation is left out of the answers: it is being CREATEd, so the
//!   cluster does not hold it yet.
//! - `list_resources_all`, `list_resources_by_namespace` and `get_resource` are answered;
//!   the host still refuses anything the module's `contextAwareResources` does not declare.
//!   Label and field selectors are not applied.
//!
//! Cost: each distinct list lookup (request and masks) is answered once per scan, whatever the
//! number of documents and threads asking it; each call then gets those bytes with the document
//! under evaluation cut out, one copy of the answer (which the host makes anyway to hand it to
//! the module). Nothing is parsed or pruned again per document.

use crate::input::{self, Document, InputError};
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};
use syncguard::reflector::{self, FieldMask};
use syncguard::replay::HostRequest;

/// Group, kind, namespace (empty when cluster-scoped or unset) and name of an object.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// API group.
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Namespace, empty when none.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl ObjectKey {
    /// The key of a scanned document.
    pub fn of(doc: &Document) -> ObjectKey {
        ObjectKey {
            group: doc.info.group.clone(),
            kind: doc.info.kind.clone(),
            namespace: doc.info.namespace.clone().unwrap_or_default(),
            name: doc.info.name.clone().unwrap_or_default(),
        }
    }
}

#[derive(Debug)]
struct Entry {
    namespace: String,
    name: String,
    json: Arc<str>,
}

/// One list lookup's answer, computed once: the List as JSON and where each item is in it.
#[derive(Debug)]
struct ListAnswer {
    /// Group of the listed objects.
    group: String,
    /// Kind of the listed objects.
    kind: String,
    /// The List.
    bytes: Vec<u8>,
    /// Byte range of each item, in order.
    items: Vec<Range<usize>>,
    /// Position in `items` of each named object, by namespace and name.
    positions: HashMap<(String, String), usize>,
}

impl ListAnswer {
    /// The List without the item of `exclude` (when it holds it): the bytes around it, copied.
    fn without(&self, exclude: Option<&ObjectKey>) -> Vec<u8> {
        let position = exclude
            .filter(|k| !k.name.is_empty() && k.group == self.group && k.kind == self.kind)
            .and_then(|k| self.positions.get(&(k.namespace.clone(), k.name.clone())));
        let Some(&i) = position else {
            return self.bytes.clone();
        };
        // The item and the comma after it, or before it when it is the last of several.
        let cut = if i + 1 < self.items.len() {
            self.items[i].start..self.items[i + 1].start
        } else if i > 0 {
            self.items[i - 1].end..self.items[i].end
        } else {
            self.items[i].clone()
        };
        let mut out = Vec::with_capacity(self.bytes.len() - cut.len());
        out.extend_from_slice(&self.bytes[..cut.start]);
        out.extend_from_slice(&self.bytes[cut.end..]);
        out
    }
}

/// The objects a scan knows about, indexed by group and kind, and the answers computed so far.
#[derive(Debug, Default)]
pub struct OfflineCluster {
    by_group_kind: BTreeMap<(String, String), Vec<Entry>>,
    /// Answers of list lookups by request, each computed by the first caller.
    answers: Mutex<HashMap<String, Arc<OnceLock<ListAnswer>>>>,
}

impl OfflineCluster {
    /// Builds the cluster from snapshot objects and scanned documents (scanned ones win).
    pub fn new(snapshot: &[Document], scanned: &[Document]) -> OfflineCluster {
        let mut objects: BTreeMap<ObjectKey, Arc<str>> = BTreeMap::new();
        let mut unnamed: Vec<(ObjectKey, Arc<str>)> = Vec::new();
        for doc in snapshot.iter().chain(scanned) {
            let key = ObjectKey::of(doc);
            if key.name.is_empty() {
                unnamed.push((key, doc.object.clone()));
            } else {
                objects.insert(key, doc.object.clone());
            }
        }
        let mut by_group_kind: BTreeMap<(String, String), Vec<Entry>> = BTreeMap::new();
        for (key, json) in objects.into_iter().chain(unnamed) {
            by_group_kind.entry((key.group, key.kind)).or_default().push(Entry {
                namespace: key.namespace,
                name: key.name,
                json,
            });
        }
        OfflineCluster {
            by_group_kind,
            answers: Mutex::default(),
        }
    }

    /// How many objects it holds.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.by_group_kind.values().map(Vec::len).sum()
    }

    fn entries(&self, group: &str, kind: &str) -> &[Entry] {
        self.by_group_kind
            .get(&(group.to_string(), kind.to_string()))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// A List of the objects of `kind` in the group of `api_version`, in `namespace` when
    /// given, each as the reflector answers it for `mask`, without `exclude`. Computed once per
    /// distinct `request`; later calls copy it.
    pub fn list(
        &self,
        request: &HostRequest,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        exclude: Option<&ObjectKey>,
    ) -> Vec<u8> {
        let key = format!("{}{}", request.tag, serde_json::Value::Object(request.fields.clone()));
        let cell = self
            .answers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_default()
            .clone();
        let answer = cell.get_or_init(|| self.answer_list(api_version, kind, namespace, request.field_mask().as_ref()));
        answer.without(exclude)
    }

    fn answer_list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        mask: Option<&FieldMask>,
    ) -> ListAnswer {
        let group = group_of(api_version);
        let mut bytes = Vec::new();
        bytes.extend_from_slice(b"{\"apiVersion\":");
        bytes.extend_from_slice(serde_json::Value::from(api_version).to_string().as_bytes());
        bytes.extend_from_slice(b",\"kind\":");
        bytes.extend_from_slice(serde_json::Value::from(format!("{kind}List")).to_string().as_bytes());
        bytes.extend_from_slice(b",\"metadata\":{},\"items\":[");
        let mut items = Vec::new();
        let mut positions = HashMap::new();
        for entry in self.entries(group, kind) {
            if namespace.is_some_and(|ns| ns != entry.namespace) {
                continue;
            }
            if !items.is_empty() {
                bytes.push(b',');
            }
            let start = bytes.len();
            match serde_json::from_str::<serde_json::Value>(&entry.json) {
                Ok(mut object) => {
                    reflector::reflect(&mut object, mask);
                    // Writing a Value into a Vec cannot fail.
                    let _ = serde_json::to_writer(&mut bytes, &object);
                }
                Err(_) => bytes.extend_from_slice(entry.json.as_bytes()),
            }
            if !entry.name.is_empty() {
                positions.insert((entry.namespace.clone(), entry.name.clone()), items.len());
            }
            items.push(start..bytes.len());
        }
        bytes.extend_from_slice(b"]}");
        ListAnswer {
            group: group.to_string(),
            kind: kind.to_string(),
            bytes,
            items,
            positions,
        }
    }

    /// The object of `kind` named `name` (in `namespace`), pruned to `mask`, unless it is
    /// `exclude`.
    pub fn get(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
        mask: Option<&FieldMask>,
        exclude: Option<&ObjectKey>,
    ) -> Option<Vec<u8>> {
        let group = group_of(api_version);
        let namespace = namespace.unwrap_or("");
        let excluded =
            exclude.is_some_and(|k| k.group == group && k.kind == kind && k.namespace == namespace && k.name == name);
        if excluded {
            return None;
        }
        let entry = self
            .entries(group, kind)
            .iter()
            .find(|e| e.name == name && e.namespace == namespace)?;
        let Some(mask) = mask else {
            return Some(entry.json.as_bytes().to_vec());
        };
        match serde_json::from_str::<serde_json::Value>(&entry.json) {
            Ok(mut object) => {
                reflector::apply_mask(&mut object, mask);
                Some(object.to_string().into_bytes())
            }
            Err(_) => Some(entry.json.as_bytes().to_vec()),
        }
    }
}

/// The API group of an `apiVersion` (`""` for the core group's `v1`).
fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("")
}

/// The offline cluster as one policy instance sees it: the document under evaluation is
/// set before each call and left out of the answers.
pub struct DocumentScope {
    cluster: Arc<OfflineCluster>,
    current: Mutex<Option<ObjectKey>>,
}

impl DocumentScope {
    /// A scope over `cluster` with no current document.
    pub fn new(cluster: Arc<OfflineCluster>) -> DocumentScope {
        DocumentScope {
            cluster,
            current: Mutex::new(None),
        }
    }

    /// Sets the document under evaluation.
    pub fn set_current(&self, key: Option<ObjectKey>) {
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = key;
    }
}

impl DocumentScope {
    /// Answers a context-aware lookup of a policy, or gives the error the policy receives.
    pub fn answer(&self, request: &HostRequest) -> Result<Vec<u8>, String> {
        let current = self.current.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let text = |key: &str| request.fields.get(key).and_then(|v| v.as_str());
        let api_version = text("api_version").ok_or("the lookup has no api_version")?;
        let kind = text("kind").ok_or("the lookup has no kind")?;
        match request.tag.as_str() {
            "KubernetesListResourceAll" => Ok(self.cluster.list(request, api_version, kind, None, current.as_ref())),
            "KubernetesListResourceNamespace" => {
                let namespace = text("namespace").ok_or("the namespaced lookup has no namespace")?;
                Ok(self
                    .cluster
                    .list(request, api_version, kind, Some(namespace), current.as_ref()))
            }
            "KubernetesGetResource" => {
                let name = text("name").ok_or("the lookup has no name")?;
                let namespace = text("namespace").filter(|n| !n.is_empty());
                let mask = request.field_mask();
                match self
                    .cluster
                    .get(api_version, kind, namespace, name, mask.as_ref(), current.as_ref())
                {
                    Some(json) => Ok(json),
                    None => Err(match namespace {
                        Some(ns) => format!("{kind} {ns}/{name} ({api_version}) not found"),
                        None => format!("{kind} {name} ({api_version}) not found"),
                    }),
                }
            }
            other => Err(format!("lookup {other} is not available offline")),
        }
    }
}

/// Reads a `--cluster-snapshot` file: a `kubectl get -o yaml` List, multi-document YAML or
/// JSON. Any problem is returned (a snapshot is all or nothing).
pub fn read_snapshot(path: &std::path::Path) -> Result<Vec<Document>, Vec<InputError>> {
    let display = input::display_path(path);
    let fail = |message: String| {
        vec![InputError {
            source: None,
            path: display.clone(),
            line: None,
            message,
        }]
    };
    let bytes =
        std::fs::read(path).map_err(|e| fail(format!("cannot read the cluster snapshot: {}", input::io_reason(&e))))?;
    let text = input::text_of(&bytes).map_err(|e| fail(format!("cluster snapshot: {e}")))?;
    snapshot_of(&display, text)
}

/// The objects of a cluster snapshot's text, named `display` in errors (see [`read_snapshot`]).
pub fn snapshot_of(display: &str, text: &str) -> Result<Vec<Document>, Vec<InputError>> {
    let contents = input::objects_of(usize::MAX, display, text);
    if !contents.errors.is_empty() {
        return Err(contents
            .errors
            .into_iter()
            .map(|e| InputError {
                source: None,
                message: format!("cluster snapshot: {}", e.message),
                ..e
            })
            .collect());
    }
    Ok(contents.documents)
}

/// Resolves the resource (plural) of a kind: the built-in table generated from k8s-openapi,
/// then CustomResourceDefinitions among the scanned and snapshot objects, else the lowercase
/// kind plus `s`.
pub struct Plurals {
    crds: BTreeMap<(String, String), String>,
}

impl Plurals {
    /// Collects the CRDs of the scan and the snapshot.
    pub fn new<'a>(documents: impl IntoIterator<Item = &'a Document>) -> Plurals {
        let mut crds = BTreeMap::new();
        for doc in documents {
            if let Some(names) = &doc.crd_names {
                crds.entry((names.group.clone(), names.kind.clone()))
                    .or_insert_with(|| names.plural.clone());
            }
        }
        Plurals { crds }
    }

    /// The plural resource name of `kind` in `group` (served at `version`).
    pub fn resource(&self, group: &str, version: &str, kind: &str) -> String {
        let builtin = syncguard::generated::builtin_kinds(kind).filter(|r| r.group == group);
        let mut fallback = None;
        for r in builtin {
            if r.version == version {
                return r.plural.to_string();
            }
            fallback.get_or_insert(r.plural);
        }
        if let Some(plural) = fallback {
            return plural.to_string();
        }
        if let Some(plural) = self.crds.get(&(group.to_string(), kind.to_string())) {
            return plural.clone();
        }
        format!("{}s", kind.to_lowercase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(text: &str) -> Vec<Document> {
        let contents = input::objects_of(0, "t.yaml", text);
        assert!(contents.errors.is_empty(), "{:?}", contents.errors);
        contents.documents
    }

    const CRDS: &str = "
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: shirts.stable.example.com}
spec: {group: stable.example.com, names: {kind: Shirt, plural: shirts}}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: shirts.beta.example.com}
spec: {group: beta.example.com, names: {kind: Shirt, plural: shirts}}
";

    fn request(tag: &str, fields: serde_json::Value) -> HostRequest {
        HostRequest::from_call(tag, fields.to_string().as_bytes()).unwrap()
    }

    fn names(body: &[u8]) -> Vec<String> {
        let list: serde_json::Value = serde_json::from_slice(body).unwrap();
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn answers_list_all_without_the_current_document() {
        let scanned = docs(CRDS);
        let snapshot = docs(
            "apiVersion: v1\nkind: List\nitems:\n- apiVersion: apiextensions.k8s.io/v1\n  kind: CustomResourceDefinition\n  metadata: {name: gateways.networking.istio.io}\n  spec: {group: networking.istio.io, names: {kind: Gateway, plural: gateways}}\n- apiVersion: apiextensions.k8s.io/v1\n  kind: CustomResourceDefinition\n  metadata: {name: shirts.beta.example.com, labels: {from: snapshot}}\n",
        );
        let cluster = Arc::new(OfflineCluster::new(&snapshot, &scanned));
        assert_eq!(cluster.len(), 3);
        let scope = DocumentScope::new(cluster);
        let list = request(
            "KubernetesListResourceAll",
            serde_json::json!({"api_version": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "label_selector": null, "field_selector": null}),
        );
        let all = scope.answer(&list).unwrap();
        assert_eq!(
            names(&all),
            vec![
                "gateways.networking.istio.io",
                "shirts.beta.example.com",
                "shirts.stable.example.com"
            ]
        );
        // The scanned beta CRD replaced the snapshot's.
        assert!(!String::from_utf8_lossy(&all).contains("snapshot"));
        let body: serde_json::Value = serde_json::from_slice(&all).unwrap();
        assert_eq!(body["kind"], "CustomResourceDefinitionList");
        scope.set_current(Some(ObjectKey::of(&scanned[0])));
        assert_eq!(
            names(&scope.answer(&list).unwrap()),
            vec!["gateways.networking.istio.io", "shirts.beta.example.com"]
        );
        // Any version of the group answers: the API server converts.
        let v1beta1 = request(
            "KubernetesListResourceAll",
            serde_json::json!({"api_version": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition"}),
        );
        assert_eq!(names(&scope.answer(&v1beta1).unwrap()).len(), 2);
        let pods = request(
            "KubernetesListResourceAll",
            serde_json::json!({"api_version": "v1", "kind": "Pod"}),
        );
        assert!(names(&scope.answer(&pods).unwrap()).is_empty());
    }

    #[test]
    fn answers_as_kubewarden_once_per_lookup() {
        let scanned = docs(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: shirts.stable.example.com\n  annotations: {kubectl.kubernetes.io/last-applied-configuration: '{}', team: a}\n  managedFields: [{manager: kubectl}]\nspec: {group: stable.example.com, scope: Namespaced, names: {kind: Shirt, plural: shirts}, versions: [{name: v1, served: true}]}\nstatus: {storedVersions: [v1]}\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: shirts.beta.example.com}\nspec: {group: beta.example.com, names: {kind: Shirt, plural: shirts}}\n",
        );
        let cluster = Arc::new(OfflineCluster::new(&[], &scanned));
        let scope = DocumentScope::new(cluster.clone());
        let masked = request(
            "KubernetesListResourceAll",
            serde_json::json!({"api_version": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "field_masks": ["spec.names.kind", "spec.group"]}),
        );
        let body: serde_json::Value = serde_json::from_slice(&scope.answer(&masked).unwrap()).unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinitionList",
                "metadata": {},
                "items": [
                    {
                        "apiVersion": "apiextensions.k8s.io/v1",
                        "kind": "CustomResourceDefinition",
                        "metadata": {"name": "shirts.beta.example.com", "annotations": {}, "managedFields": []},
                        "spec": {"group": "beta.example.com", "names": {"kind": "Shirt"}},
                    },
                    {
                        "apiVersion": "apiextensions.k8s.io/v1",
                        "kind": "CustomResourceDefinition",
                        "metadata": {"name": "shirts.stable.example.com", "annotations": {"team": "a"}, "managedFields": []},
                        "spec": {"group": "stable.example.com", "names": {"kind": "Shirt"}},
                    },
                ],
            })
        );
        // The same lookup from another document reuses the answer, cut around that document
        // wherever it sits; another set of masks is another answer.
        // (scanned[0] is the stable CRD, second in the sorted List; scanned[1] the first.)
        for (i, other) in [(0, 0), (1, 1)] {
            scope.set_current(Some(ObjectKey::of(&scanned[i])));
            let cut: serde_json::Value = serde_json::from_slice(&scope.answer(&masked).unwrap()).unwrap();
            assert_eq!(cut["items"], serde_json::json!([body["items"][other]]));
        }
        let whole = request(
            "KubernetesListResourceAll",
            serde_json::json!({"api_version": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"}),
        );
        let unmasked: serde_json::Value = serde_json::from_slice(&scope.answer(&whole).unwrap()).unwrap();
        assert_eq!(
            unmasked["items"][0]["status"],
            serde_json::json!({"storedVersions": ["v1"]})
        );
        assert_eq!(cluster.answers.lock().unwrap().len(), 2);
        // Only the document itself is ever cut out: a lone item, and none for other kinds.
        let only = Arc::new(OfflineCluster::new(&[], &scanned[..1]));
        let alone = DocumentScope::new(only);
        alone.set_current(Some(ObjectKey::of(&scanned[0])));
        assert!(names(&alone.answer(&masked).unwrap()).is_empty());
        let get = request(
            "KubernetesGetResource",
            serde_json::json!({"api_version": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "name": "shirts.stable.example.com", "disable_cache": false, "field_masks": ["spec.group"]}),
        );
        scope.set_current(None);
        let object: serde_json::Value = serde_json::from_slice(&scope.answer(&get).unwrap()).unwrap();
        assert_eq!(object["spec"], serde_json::json!({"group": "stable.example.com"}));
        assert!(object.get("status").is_none());
        // A get does not go through the reflector: metadata stays as the object has it.
        assert_eq!(
            object["metadata"]["managedFields"],
            serde_json::json!([{"manager": "kubectl"}])
        );
    }

    #[test]
    fn answers_namespaced_and_get() {
        let scanned = docs(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: x}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: y}\n",
        );
        let scope = DocumentScope::new(Arc::new(OfflineCluster::new(&[], &scanned)));
        let by_ns = request(
            "KubernetesListResourceNamespace",
            serde_json::json!({"api_version": "v1", "kind": "ConfigMap", "namespace": "y"}),
        );
        assert_eq!(names(&scope.answer(&by_ns).unwrap()), vec!["b"]);
        let get = request(
            "KubernetesGetResource",
            serde_json::json!({"api_version": "v1", "kind": "ConfigMap", "name": "a", "namespace": "x", "disable_cache": false}),
        );
        let object: serde_json::Value = serde_json::from_slice(&scope.answer(&get).unwrap()).unwrap();
        assert_eq!(object["metadata"]["name"], "a");
        let missing = request(
            "KubernetesGetResource",
            serde_json::json!({"api_version": "v1", "kind": "ConfigMap", "name": "a", "namespace": "y"}),
        );
        assert_eq!(scope.answer(&missing).unwrap_err(), "ConfigMap y/a (v1) not found");
    }

    #[test]
    fn plurals() {
        let scanned = docs(CRDS);
        let plurals = Plurals::new(&scanned);
        assert_eq!(plurals.resource("apps", "v1", "Deployment"), "deployments");
        assert_eq!(plurals.resource("", "v1", "Endpoints"), "endpoints");
        assert_eq!(plurals.resource("networking.k8s.io", "v1", "Ingress"), "ingresses");
        assert_eq!(plurals.resource("stable.example.com", "v1", "Shirt"), "shirts");
        assert_eq!(plurals.resource("example.org", "v1", "Widget"), "widgets");
    }
}
