//! Minimal typed views of the Kubernetes objects the checks read. Only the fields a check
//! uses are declared; everything else is skipped without building a tree.

use serde::Deserialize;
use std::collections::BTreeMap;

/// The parts of `metadata` the checks read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ObjectMeta {
    /// Object name.
    pub name: String,
    /// Namespace, empty for cluster-scoped objects.
    pub namespace: String,
    /// Labels.
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    pub annotations: BTreeMap<String, String>,
    /// Finalizers.
    pub finalizers: Vec<String>,
    /// Set when the object is being deleted.
    pub deletion_timestamp: Option<String>,
}

/// An object of which only the metadata is read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Object {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata`.
    pub metadata: ObjectMeta,
}

/// A CustomResourceDefinition, as far as the checks read it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Crd {
    /// `metadata`.
    pub metadata: ObjectMeta,
    /// `spec`.
    pub spec: CrdSpec,
    /// `status`.
    pub status: CrdStatus,
}

/// `spec` of a CRD.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CrdSpec {
    /// API group served.
    pub group: String,
    /// Names of the resource.
    pub names: CrdNames,
    /// `Namespaced` or `Cluster`.
    pub scope: String,
    /// Versions served.
    pub versions: Vec<CrdVersion>,
}

/// `spec.names` of a CRD.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CrdNames {
    /// Kind.
    pub kind: String,
    /// Plural resource name.
    pub plural: String,
    /// Singular resource name.
    pub singular: String,
    /// Short names.
    pub short_names: Vec<String>,
    /// List kind.
    pub list_kind: String,
}

/// One entry of `spec.versions`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CrdVersion {
    /// Version name, e.g. `v1beta1`.
    pub name: String,
    /// Whether it is served.
    pub served: bool,
    /// Whether it is the storage version.
    pub storage: bool,
}

/// `status` of a CRD.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CrdStatus {
    /// Versions objects have ever been stored as and not yet migrated from.
    pub stored_versions: Vec<String>,
}

impl Crd {
    /// The version marked `storage: true`, if any.
    pub fn storage_version(&self) -> Option<&str> {
        self.spec.versions.iter().find(|v| v.storage).map(|v| v.name.as_str())
    }
}
