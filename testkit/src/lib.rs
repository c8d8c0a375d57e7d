//! What syncguard's tests share, and nothing that ships links: the runner of every policy's
//! `test_data/cases.yml` with its answer records ([`cases`]), the request builders the tests and
//! the benchmark use ([`crd_request`], [`payload`]), and the fuzz harness with the invariants
//! every answer keeps ([`fuzz`]).
//!
//! The core's own unit tests may use the builders (they deal in JSON only); anything generic
//! over the core's traits runs from integration tests (`tests/`), which link the same core. So
//! the builders take the request's operation as the API server writes it (`CREATE`,
//! `admission::Operation::as_str`): a unit test of the core links a second copy of the core
//! through this crate, whose `Operation` is another type than the test's own.

pub mod cases;
pub mod fuzz;

use serde_json::Value;

/// A CustomResourceDefinition admission request as the API server sends it: `operation` of
/// `object`, with `old` as `oldObject` when given, named after the object.
pub fn crd_request(operation: &str, object: &Value, old: Option<&Value>) -> Value {
    let mut request = serde_json::json!({
        "uid": "u",
        "kind": {"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition"},
        "resource": {"group": "apiextensions.k8s.io", "version": "v1", "resource": "customresourcedefinitions"},
        "name": object["metadata"]["name"],
        "operation": operation,
        "userInfo": user_info(),
        "object": object,
    });
    if let Some(old) = old {
        request["oldObject"] = old.clone();
    }
    request
}

/// An admission request of any kind as the API server sends it: `operation` of `object`, its
/// kind from the object's `apiVersion` and `kind`, its resource `resource` (the plural the API
/// server serves it under), named after the object.
pub fn object_request(operation: &str, object: &Value, resource: &str) -> Value {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    serde_json::json!({
        "uid": "u",
        "kind": {"group": group, "version": version, "kind": object["kind"]},
        "resource": {"group": group, "version": version, "resource": resource},
        "name": object["metadata"]["name"],
        "namespace": object["metadata"]["namespace"],
        "operation": operation,
        "userInfo": user_info(),
        "object": object,
    })
}

/// The `userInfo` of the requests the builders write: a cluster administrator, as kubeadm names
/// one. Every AdmissionRequest carries one (kwctl refuses a request without it).
pub fn user_info() -> Value {
    serde_json::json!({"username": "kubernetes-admin", "groups": ["kubeadm:cluster-admins", "system:authenticated"]})
}

/// The resource (plural) the API server serves `object`'s kind under: the built-in table's, else
/// the kind in lower case plus `s`.
pub fn resource_of(object: &Value) -> String {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    let kind = object["kind"].as_str().unwrap_or_default();
    syncguard::generated::builtin_kinds(kind)
        .find(|r| r.group == group)
        .map_or_else(|| format!("{}s", kind.to_lowercase()), |r| r.plural.to_string())
}

/// The `validate` payload Kubewarden hands a policy: `request` and the policy's `settings`.
pub fn payload(request: &Value, settings: &Value) -> String {
    serde_json::json!({"request": request, "settings": settings}).to_string()
}

/// The repository's root directory.
pub fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("testkit sits in the repository")
        .to_path_buf()
}
