//! Minimal typed views of the Kubernetes objects the checks read. Only the fields a check
//! uses are declared; everything else is skipped without building a tree.

use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;

/// Reads `null` as the type's default, as the API server does for lists and maps.
pub fn null_as_default<'de, D: Deserializer<'de>, T: Default + Deserialize<'de>>(
    deserializer: D,
) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// The parts of `metadata` the checks read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ObjectMeta {
    /// Object name.
    #[serde(deserialize_with = "null_as_default")]
    pub name: String,
    /// Namespace, empty for cluster-scoped objects.
    #[serde(deserialize_with = "null_as_default")]
    pub namespace: String,
    /// Labels.
    #[serde(deserialize_with = "null_as_default")]
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    #[serde(deserialize_with = "null_as_default")]
    pub annotations: BTreeMap<String, String>,
    /// Finalizers.
    #[serde(deserialize_with = "null_as_default")]
    pub finalizers: Vec<String>,
    /// Set when the object is being deleted.
    pub deletion_timestamp: Option<String>,
}

/// An object of which only the metadata is read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Object {
    /// `apiVersion`.
    #[serde(deserialize_with = "null_as_default")]
    pub api_version: String,
    /// `kind`.
    #[serde(deserialize_with = "null_as_default")]
    pub kind: String,
    /// `metadata`.
    #[serde(deserialize_with = "null_as_default")]
    pub metadata: ObjectMeta,
}

/// A CustomResourceDefinition, as far as the checks read it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Crd {
    /// `metadata`.
    #[serde(deserialize_with = "null_as_default")]
    pub metadata: ObjectMeta,
    /// `spec`.
    #[serde(deserialize_with = "null_as_default")]
    pub spec: CrdSpec,
    /// `status`.
    #[serde(deserialize_with = "null_as_default")]
    pub status: CrdStatus,
}

/// `spec` of a CRD.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CrdSpec {
    /// API group served.
    #[serde(deserialize_with = "null_as_default")]
    pub group: String,
    /// Names of the resource.
    #[serde(deserialize_with = "null_as_default")]
    pub names: CrdNames,
    /// `Namespaced` or `Cluster`.
    #[serde(deserialize_with = "null_as_default")]
    pub scope: String,
    /// Versions served.
    #[serde(deserialize_with = "null_as_default")]
    pub versions: Vec<CrdVersion>,
}

/// `spec.names` of a CRD.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CrdNames {
    /// Kind.
    #[serde(deserialize_with = "null_as_default")]
    pub kind: String,
    /// Plural resource name.
    #[serde(deserialize_with = "null_as_default")]
    pub plural: String,
    /// Singular resource name.
    #[serde(deserialize_with = "null_as_default")]
    pub singular: String,
    /// Short names.
    #[serde(deserialize_with = "null_as_default")]
    pub short_names: Vec<String>,
    /// List kind.
    #[serde(deserialize_with = "null_as_default")]
    pub list_kind: String,
}

/// One entry of `spec.versions`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CrdVersion {
    /// Version name, e.g. `v1beta1`.
    #[serde(deserialize_with = "null_as_default")]
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
    #[serde(deserialize_with = "null_as_default")]
    pub stored_versions: Vec<String>,
}

impl Crd {
    /// The version marked `storage: true`, if any.
    pub fn storage_version(&self) -> Option<&str> {
        self.spec.versions.iter().find(|v| v.storage).map(|v| v.name.as_str())
    }
}
