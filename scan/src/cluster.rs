//! The offline cluster of `syncguard scan`: context-aware policies ask it what they would ask
//! the API server, and it answers from the scanned objects plus a `--cluster-snapshot` file.
//!
//! - Objects are matched by API group and kind, whatever version the policy asks for: the API
//!   server serves every object of a resource at each of its versions.
//! - Objects are answered as Kubewarden answers them ([`crate::reflector`]): a listed object
//!   without `metadata.managedFields` and the `kubectl.kubernetes.io/last-applied-configuration`
//!   annotation, and every object pruned to the request's `field_masks` (all but `apiVersion`,
//!   `kind` and `metadata`).
//! - A scanned object replaces a snapshot object with the same group, kind, namespace and
//!   name: the scan describes the cluster after the manifests are applied.
//! - Every answer holds the whole tree, the document under evaluation included, as Kubewarden's
//!   audit scanner evaluates objects the cluster already holds and as the cluster answers when
//!   a manifest is applied again: the scan describes the cluster once the tree is applied. A
//!   check must skip the object's own state, as it must in a cluster (crd-kind-collision skips
//!   its own name and its own group).
//! - `list_resources_all`, `list_resources_by_namespace` and `get_resource` are answered;
//!   the host still refuses anything the module's `contextAwareResources` does not declare.
//!   Label and field selectors are not applied.
//!
//! Cost: each distinct list lookup and each distinct masked get (request and masks) is answered
//! once per scan, whatever the number of documents and threads asking it; every call then gets
//! the same bytes, copied once (the copy the host makes anyway to hand them to the module).
//! Nothing is parsed or pruned again per document, and a module that keeps what it read last
//! (crd-kind-collision the items of its List, sync-drift a CRD's schema) reads it once per
//! instance.

use crate::input::{self, Document, InputError};
use crate::reflector::{self, FieldMask};
use crate::replay::HostRequest;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};
use syncguard::cluster as core_cluster;

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

/// The objects a scan knows about, indexed by group and kind, and the answers computed so far.
#[derive(Debug, Default)]
pub struct OfflineCluster {
    by_group_kind: BTreeMap<(String, String), Vec<Entry>>,
    /// Answers of list lookups by request, each computed by the first caller.
    answers: Answers<Vec<u8>>,
    /// Answers of masked get lookups by request (`None`: not found), each computed by the first
    /// caller: a CRD of megabytes is read and pruned once per scan, not once per custom resource.
    gets: Answers<Option<Vec<u8>>>,
}

/// Answers by request, each cell filled once by the first caller.
type Answers<T> = Mutex<HashMap<String, Arc<OnceLock<T>>>>;

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
            gets: Mutex::default(),
        }
    }

    /// A cluster holding `objects` (each with `apiVersion`, `kind` and `metadata`), as the
    /// tests and the fuzz harness describe one.
    pub fn of_objects(objects: &[serde_json::Value]) -> OfflineCluster {
        let text: Vec<String> = objects.iter().map(serde_json::Value::to_string).collect();
        let contents = input::objects_of(0, "cluster", &text.join("\n"));
        OfflineCluster::new(&[], &contents.documents)
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
    /// given, each as the reflector answers it for `mask`. Computed once per distinct
    /// `request`; later calls copy it.
    pub fn list(&self, request: &HostRequest, api_version: &str, kind: &str, namespace: Option<&str>) -> Vec<u8> {
        let cell = once_per_request(&self.answers, request);
        let answer = cell.get_or_init(|| self.answer_list(api_version, kind, namespace, request.field_mask().as_ref()));
        answer.clone()
    }

    fn answer_list(&self, api_version: &str, kind: &str, namespace: Option<&str>, mask: Option<&FieldMask>) -> Vec<u8> {
        let group = group_of(api_version);
        let mut bytes = Vec::new();
        bytes.extend_from_slice(b"{\"apiVersion\":");
        bytes.extend_from_slice(serde_json::Value::from(api_version).to_string().as_bytes());
        bytes.extend_from_slice(b",\"kind\":");
        bytes.extend_from_slice(serde_json::Value::from(format!("{kind}List")).to_string().as_bytes());
        bytes.extend_from_slice(b",\"metadata\":{},\"items\":[");
        let mut first = true;
        for entry in self.entries(group, kind) {
            if namespace.is_some_and(|ns| ns != entry.namespace) {
                continue;
            }
            if !std::mem::take(&mut first) {
                bytes.push(b',');
            }
            match serde_json::from_str::<serde_json::Value>(&entry.json) {
                Ok(mut object) => {
                    reflector::reflect(&mut object, mask);
                    // Writing a Value into a Vec cannot fail.
                    let _ = serde_json::to_writer(&mut bytes, &object);
                }
                Err(_) => bytes.extend_from_slice(entry.json.as_bytes()),
            }
        }
        bytes.extend_from_slice(b"]}");
        bytes
    }

    /// The object of `kind` named `name` (in `namespace`), pruned to `mask`.
    pub fn get(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
        mask: Option<&FieldMask>,
    ) -> Option<Vec<u8>> {
        let group = group_of(api_version);
        let namespace = namespace.unwrap_or("");
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

/// The cell of `request`'s answer in `answers` (keyed by the request's tag and fields), created
/// empty by the first caller.
fn once_per_request<T>(answers: &Answers<T>, request: &HostRequest) -> Arc<OnceLock<T>> {
    let key = format!("{}{}", request.tag, serde_json::Value::Object(request.fields.clone()));
    answers
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key)
        .or_default()
        .clone()
}

/// The API group of an `apiVersion` (`""` for the core group's `v1`).
fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("")
}

impl OfflineCluster {
    /// Answers a context-aware lookup of a policy, or gives the error the policy receives.
    pub fn answer(&self, request: &HostRequest) -> Result<Vec<u8>, String> {
        let text = |key: &str| request.fields.get(key).and_then(|v| v.as_str());
        let api_version = text("api_version").ok_or("the lookup has no api_version")?;
        let kind = text("kind").ok_or("the lookup has no kind")?;
        match request.tag.as_str() {
            "KubernetesListResourceAll" => Ok(self.list(request, api_version, kind, None)),
            "KubernetesListResourceNamespace" => {
                let namespace = text("namespace").ok_or("the namespaced lookup has no namespace")?;
                Ok(self.list(request, api_version, kind, Some(namespace)))
            }
            "KubernetesGetResource" => {
                let name = text("name").ok_or("the lookup has no name")?;
                let namespace = text("namespace").filter(|n| !n.is_empty());
                let mask = request.field_mask();
                // An unmasked answer is a copy of the object's text; a masked one is computed once.
                let answer = match mask {
                    None => self.get(api_version, kind, namespace, name, None),
                    Some(mask) => once_per_request(&self.gets, request)
                        .get_or_init(|| self.get(api_version, kind, namespace, name, Some(&mask)))
                        .clone(),
                };
                match answer {
                    Some(json) => Ok(json),
                    None => Err(core_cluster::not_found(api_version, kind, name, namespace)),
                }
            }
            other => Err(format!("lookup {other} is not available offline")),
        }
    }
}

/// The offline cluster as a core check asks it: its host calls answered by
/// [`OfflineCluster::answer`], as the command's modules are answered.
impl core_cluster::HostCalls for OfflineCluster {
    fn host_call(&self, operation: &str, request: &[u8]) -> Result<Vec<u8>, String> {
        let tag = HostRequest::tag_for("kubernetes", operation)
            .ok_or_else(|| format!("host capability kubernetes/{operation} is not available"))?;
        self.answer(&HostRequest::from_call(tag, request)?)
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
    /// By group and kind: the plural and whether the kind is cluster-scoped.
    crds: BTreeMap<(String, String), (String, bool)>,
}

impl Plurals {
    /// Collects the CRDs of the scan and the snapshot.
    pub fn new<'a>(documents: impl IntoIterator<Item = &'a Document>) -> Plurals {
        let mut crds = BTreeMap::new();
        for doc in documents {
            if let Some(names) = &doc.crd_names {
                crds.entry((names.group.clone(), names.kind.clone()))
                    .or_insert_with(|| (names.plural.clone(), names.cluster_scoped));
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
        if let Some((plural, _)) = self.crds.get(&(group.to_string(), kind.to_string())) {
            return plural.clone();
        }
        format!("{}s", kind.to_lowercase())
    }

    /// Marks each of `documents` whose kind is cluster-scoped ([`Plurals::cluster_scoped`]).
    pub fn mark(&self, documents: &mut [Document]) {
        for doc in documents {
            doc.cluster_scoped = self.cluster_scoped(&doc.info.group, &doc.info.version, &doc.info.kind);
        }
    }

    /// Whether objects of `kind` in `group` (served at `version`) are known to be cluster-scoped:
    /// by the built-in table, else by a CRD of the scan or the snapshot (`spec.scope: Cluster`).
    /// A kind neither knows is taken as namespaced.
    pub fn cluster_scoped(&self, group: &str, version: &str, kind: &str) -> bool {
        if let Some(cluster_scoped) = syncguard::generated::api_cluster_scoped(group, version, kind) {
            return cluster_scoped;
        }
        self.crds
            .get(&(group.to_string(), kind.to_string()))
            .is_some_and(|(_, cluster_scoped)| *cluster_scoped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syncguard::cluster::Cluster;

    #[test]
    fn a_cluster_of_objects_lists_by_api_version_and_kind_as_the_reflector_answers() {
        let cluster = OfflineCluster::of_objects(&[
            serde_json::json!({
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "a", "managedFields": [{"manager": "kubectl"}]},
                "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "i"}]},
            }),
            serde_json::json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}),
        ]);
        let pods = cluster
            .list_all("v1", "Pod", &["spec.containers.image"])
            .unwrap()
            .read::<serde_json::Value>()
            .unwrap();
        assert_eq!(
            pods,
            [serde_json::json!({
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "a", "annotations": {}, "managedFields": []},
                "spec": {"containers": [{"image": "i"}]},
            })]
        );
    }

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
    fn answers_list_all_with_every_object_of_the_tree() {
        let scanned = docs(CRDS);
        let snapshot = docs(
            "apiVersion: v1\nkind: List\nitems:\n- apiVersion: apiextensions.k8s.io/v1\n  kind: CustomResourceDefinition\n  metadata: {name: gateways.networking.istio.io}\n  spec: {group: networking.istio.io, names: {kind: Gateway, plural: gateways}}\n- apiVersion: apiextensions.k8s.io/v1\n  kind: CustomResourceDefinition\n  metadata: {name: shirts.beta.example.com, labels: {from: snapshot}}\n",
        );
        let cluster = OfflineCluster::new(&snapshot, &scanned);
        assert_eq!(cluster.len(), 3);
        let list = request(
            "KubernetesListResourceAll",
            serde_json::json!({"api_version": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "label_selector": null, "field_selector": null}),
        );
        let all = cluster.answer(&list).unwrap();
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
        // Every document gets the same answer, itself included (the scan describes the cluster
        // once the tree is applied, as the audit scanner sees it).
        assert_eq!(cluster.answer(&list).unwrap(), all);
        // Any version of the group answers: the API server converts.
        let v1beta1 = request(
            "KubernetesListResourceAll",
            serde_json::json!({"api_version": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition"}),
        );
        assert_eq!(names(&cluster.answer(&v1beta1).unwrap()).len(), 3);
        let pods = request(
            "KubernetesListResourceAll",
            serde_json::json!({"api_version": "v1", "kind": "Pod"}),
        );
        assert!(names(&cluster.answer(&pods).unwrap()).is_empty());
    }

    #[test]
    fn answers_as_kubewarden_once_per_lookup() {
        let scanned = docs(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: shirts.stable.example.com\n  annotations: {kubectl.kubernetes.io/last-applied-configuration: '{}', team: a}\n  managedFields: [{manager: kubectl}]\nspec: {group: stable.example.com, scope: Namespaced, names: {kind: Shirt, plural: shirts}, versions: [{name: v1, served: true}]}\nstatus: {storedVersions: [v1]}\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: shirts.beta.example.com}\nspec: {group: beta.example.com, names: {kind: Shirt, plural: shirts}}\n",
        );
        let cluster = OfflineCluster::new(&[], &scanned);
        let masked = request(
            "KubernetesListResourceAll",
            serde_json::json!({"api_version": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "field_masks": ["spec.names.kind", "spec.group"]}),
        );
        let body: serde_json::Value = serde_json::from_slice(&cluster.answer(&masked).unwrap()).unwrap();
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
        // The same lookup again reuses the answer; another set of masks is another answer.
        let again: serde_json::Value = serde_json::from_slice(&cluster.answer(&masked).unwrap()).unwrap();
        assert_eq!(again, body);
        let whole = request(
            "KubernetesListResourceAll",
            serde_json::json!({"api_version": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"}),
        );
        let unmasked: serde_json::Value = serde_json::from_slice(&cluster.answer(&whole).unwrap()).unwrap();
        // (items sorted by name: beta, then stable)
        assert_eq!(
            unmasked["items"][1]["status"],
            serde_json::json!({"storedVersions": ["v1"]})
        );
        assert_eq!(cluster.answers.lock().unwrap().len(), 2);
        let get = request(
            "KubernetesGetResource",
            serde_json::json!({"api_version": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "name": "shirts.stable.example.com", "disable_cache": false, "field_masks": ["spec.group"]}),
        );
        let object: serde_json::Value = serde_json::from_slice(&cluster.answer(&get).unwrap()).unwrap();
        assert_eq!(object["spec"], serde_json::json!({"group": "stable.example.com"}));
        assert!(object.get("status").is_none());
        // A get does not go through the reflector: metadata stays as the object has it.
        assert_eq!(
            object["metadata"]["managedFields"],
            serde_json::json!([{"manager": "kubectl"}])
        );
        // The masked get is computed once, into its cell; asking again, or for a missing object
        // again, reads that cell. Each cell is swapped for one holding a marker after the first
        // ask: only an answer read from the cell can be the marker.
        let marker = r#"{"from":"the cell"}"#;
        let text = |answer: Vec<u8>| String::from_utf8(answer).unwrap();
        let swap_cell = |expected: Option<Vec<u8>>| {
            let mut gets = cluster.gets.lock().unwrap();
            let (key, cell) = gets
                .iter()
                .find(|(_, cell)| cell.get() != Some(&Some(marker.as_bytes().to_vec())))
                .map(|(key, cell)| (key.clone(), cell.clone()))
                .expect("the first ask filled a cell");
            assert_eq!(cell.get(), Some(&expected));
            gets.insert(key, Arc::new(OnceLock::from(Some(marker.as_bytes().to_vec()))));
        };
        swap_cell(Some(serde_json::to_vec(&object).unwrap()));
        assert_eq!(text(cluster.answer(&get).unwrap()), marker);
        let missing = request(
            "KubernetesGetResource",
            serde_json::json!({"api_version": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "name": "hats.example.com", "disable_cache": false, "field_masks": ["spec.group"]}),
        );
        assert!(cluster.answer(&missing).unwrap_err().contains("hats.example.com"));
        swap_cell(None);
        assert_eq!(text(cluster.answer(&missing).unwrap()), marker);
        assert_eq!(cluster.gets.lock().unwrap().len(), 2);
    }

    #[test]
    fn answers_namespaced_and_get() {
        let scanned = docs(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: x}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: y}\n",
        );
        let cluster = OfflineCluster::new(&[], &scanned);
        let by_ns = request(
            "KubernetesListResourceNamespace",
            serde_json::json!({"api_version": "v1", "kind": "ConfigMap", "namespace": "y"}),
        );
        assert_eq!(names(&cluster.answer(&by_ns).unwrap()), vec!["b"]);
        let get = request(
            "KubernetesGetResource",
            serde_json::json!({"api_version": "v1", "kind": "ConfigMap", "name": "a", "namespace": "x", "disable_cache": false}),
        );
        let object: serde_json::Value = serde_json::from_slice(&cluster.answer(&get).unwrap()).unwrap();
        assert_eq!(object["metadata"]["name"], "a");
        let missing = request(
            "KubernetesGetResource",
            serde_json::json!({"api_version": "v1", "kind": "ConfigMap", "name": "a", "namespace": "y"}),
        );
        assert_eq!(
            cluster.answer(&missing).unwrap_err(),
            "Cannot find v1/ConfigMap named 'a' inside of namespace 'Some(\"y\")'"
        );
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
