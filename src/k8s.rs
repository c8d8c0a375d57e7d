//! Minimal typed views of the Kubernetes objects the checks read, shared by every check so a
//! module that holds several checks holds one reader per object. Only the fields some check
//! uses are declared; serde skips everything else without building it (`IgnoredAny`). Like the
//! API server's decoder, every view reads JSON `null` as absent (raw manifests carry
//! `annotations: null` or `status: {storedVersions: null}`), and a wrong type is an error.

use crate::admission::{ObjectJson, null_as_default, object_only};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;

/// The annotation in which client-side apply (`kubectl apply`, Argo CD's default sync) records
/// the manifest it applied last.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Reads a string map in which `null` (the map or a value) is empty, as the API server does.
pub fn string_map<'de, D: Deserializer<'de>>(deserializer: D) -> Result<BTreeMap<String, String>, D::Error> {
    let map = Option::<BTreeMap<String, Option<String>>>::deserialize(deserializer)?;
    Ok(map
        .unwrap_or_default()
        .into_iter()
        .map(|(key, value)| (key, value.unwrap_or_default()))
        .collect())
}

/// Reads a list of views in which `null` (the list or an item) is empty, as the API server does.
pub fn view_list<'de, D: Deserializer<'de>, T: Default + Deserialize<'de>>(
    deserializer: D,
) -> Result<Vec<T>, D::Error> {
    let items = Option::<Vec<Option<T>>>::deserialize(deserializer)?;
    Ok(items
        .unwrap_or_default()
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect())
}

object_only!(
    ObjectMeta,
    Object,
    Crd<'de>,
    CrdIdentity,
    NameOnly,
    CrdIdentitySpec,
    CrdSpec<'de>,
    CrdNames,
    CrdVersion<'de>,
    CrdValidation<'de>,
    CrdConversion,
    CrdStatus,
    Job,
    JobSpec,
    JobStatus,
    JobCondition
);

/// The parts of `metadata` the checks read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(remote = "Self", default, rename_all = "camelCase")]
pub struct ObjectMeta {
    /// Object name.
    #[serde(deserialize_with = "null_as_default")]
    pub name: String,
    /// Prefix the API server completes into a name when `name` is empty.
    #[serde(deserialize_with = "null_as_default")]
    pub generate_name: String,
    /// Namespace, empty for cluster-scoped objects.
    #[serde(deserialize_with = "null_as_default")]
    pub namespace: String,
    /// Labels.
    #[serde(deserialize_with = "string_map")]
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    #[serde(deserialize_with = "string_map")]
    pub annotations: BTreeMap<String, String>,
    /// Finalizers.
    #[serde(deserialize_with = "null_as_default")]
    pub finalizers: Vec<String>,
    /// Set when the object is being deleted.
    pub deletion_timestamp: Option<String>,
}

/// An object of which only the metadata is read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(remote = "Self", default, rename_all = "camelCase")]
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

impl Object {
    /// The members the view reads, for [`ObjectJson::members`].
    pub const MEMBERS: [&'static [&'static str]; 3] = [&["apiVersion"], &["kind"], &["metadata"]];

    /// Reads the view from the texts of its [`Object::MEMBERS`] alone, so what follows them in
    /// the object, however large, is not stepped over; `None` when a member does not fit (the
    /// caller then reads the whole object, whose error names the path).
    pub fn from_members([api_version, kind, metadata]: [Option<&str>; 3]) -> Option<Object> {
        Some(Object {
            api_version: member(api_version)?,
            kind: member(kind)?,
            metadata: member(metadata)?,
        })
    }

    /// Reads the view from its members when the text allows (see [`Object::from_members`]),
    /// else from the whole object as [`ObjectJson::read_with_path`] does, so an error names the
    /// path. `members` is `object.members(Object::MEMBERS)`, for a caller that has it already.
    pub fn read(object: ObjectJson<'_>, members: Option<[Option<&str>; 3]>) -> Result<Object, (String, String)> {
        match members.and_then(Object::from_members) {
            Some(view) => Ok(view),
            None => object.read_with_path(),
        }
    }
}

/// A member read by [`ObjectJson::members`] as `T`: absent or `null` as the default, as every
/// view reads them; `None` when it does not fit (the caller then reads the whole object, whose
/// error names the path).
fn member<T: DeserializeOwned + Default>(text: Option<&str>) -> Option<T> {
    match text {
        None => Some(T::default()),
        Some(text) => serde_json::from_str::<Option<T>>(text)
            .ok()
            .map(Option::unwrap_or_default),
    }
}

/// A CustomResourceDefinition, as far as the checks read it; each version's schema is left
/// unread, its text borrowed from the object's.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(remote = "Self", default, rename_all = "camelCase")]
pub struct Crd<'a> {
    /// `metadata`.
    #[serde(deserialize_with = "null_as_default")]
    pub metadata: ObjectMeta,
    /// `spec`.
    #[serde(borrow, deserialize_with = "null_as_default")]
    pub spec: CrdSpec<'a>,
    /// `status`.
    #[serde(deserialize_with = "null_as_default")]
    pub status: CrdStatus,
}

/// `spec` of a CRD.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(remote = "Self", default, rename_all = "camelCase")]
pub struct CrdSpec<'a> {
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
    #[serde(borrow, deserialize_with = "view_list")]
    pub versions: Vec<CrdVersion<'a>>,
    /// How objects are converted between versions.
    #[serde(deserialize_with = "null_as_default")]
    pub conversion: CrdConversion,
}

/// `spec.conversion` of a CRD.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(remote = "Self", default)]
pub struct CrdConversion {
    /// `None` (the default) or `Webhook`.
    #[serde(deserialize_with = "null_as_default")]
    pub strategy: String,
}

/// `spec.names` of a CRD.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(remote = "Self", default, rename_all = "camelCase")]
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
#[serde(remote = "Self", default, rename_all = "camelCase")]
pub struct CrdVersion<'a> {
    /// Version name, e.g. `v1beta1`.
    #[serde(deserialize_with = "null_as_default")]
    pub name: String,
    /// Whether it is served.
    #[serde(deserialize_with = "null_as_default")]
    pub served: bool,
    /// Whether it is the storage version.
    #[serde(deserialize_with = "null_as_default")]
    pub storage: bool,
    /// `schema`, holding the version's `openAPIV3Schema`.
    #[serde(borrow, deserialize_with = "null_as_default")]
    pub schema: CrdValidation<'a>,
}

/// `spec.versions[*].schema` of a CRD.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(remote = "Self", default)]
pub struct CrdValidation<'a> {
    /// The version's structural schema, unread (its text; none when the view was read from
    /// the request's tree, which holds it read).
    #[serde(borrow, rename = "openAPIV3Schema")]
    pub open_api_v3_schema: Option<crate::admission::Unread<'a>>,
}

/// `status` of a CRD.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(remote = "Self", default, rename_all = "camelCase")]
pub struct CrdStatus {
    /// Versions objects have ever been stored as and not yet migrated from.
    #[serde(deserialize_with = "null_as_default")]
    pub stored_versions: Vec<String>,
}

impl<'a> Crd<'a> {
    /// The `spec.versions` entry named `name`, with its index.
    pub fn version(&self, name: &str) -> Option<(usize, &CrdVersion<'a>)> {
        self.spec.versions.iter().enumerate().find(|(_, v)| v.name == name)
    }

    /// The version marked `storage: true`, with its index.
    pub fn storage(&self) -> Option<(usize, &str)> {
        self.spec
            .versions
            .iter()
            .enumerate()
            .find(|(_, v)| v.storage)
            .map(|(i, v)| (i, v.name.as_str()))
    }

    /// The value of annotation `key`, if set.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.metadata.annotations.get(key).map(String::as_str)
    }
}

/// A CustomResourceDefinition's identity: its name, group and names, all crd-kind-collision
/// reads of the CRD it admits and of every CRD the cluster lists (the fields its lookup asks
/// for with field masks). Nothing else is built, not even the labels and annotations that come
/// with `metadata`, so a list of thousands reads fast.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(remote = "Self", default)]
pub struct CrdIdentity {
    /// `metadata`, of which only the name is read.
    #[serde(deserialize_with = "null_as_default")]
    pub metadata: NameOnly,
    /// `spec`, of which only the group and the names are read.
    #[serde(deserialize_with = "null_as_default")]
    pub spec: CrdIdentitySpec,
}

impl CrdIdentity {
    /// The members the view reads, for [`ObjectJson::members`]: reading stops before
    /// `spec.versions` and their schemas.
    pub const MEMBERS: [&'static [&'static str]; 3] = [&["metadata", "name"], &["spec", "group"], &["spec", "names"]];

    /// Reads the view from the texts of its [`CrdIdentity::MEMBERS`] alone; `None` when a
    /// member does not fit (the caller then reads the whole object, whose error names the path).
    pub fn from_members([name, group, names]: [Option<&str>; 3]) -> Option<CrdIdentity> {
        Some(CrdIdentity {
            metadata: NameOnly { name: member(name)? },
            spec: CrdIdentitySpec {
                group: member(group)?,
                names: member(names)?,
            },
        })
    }
}

/// `metadata` read for its name alone.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(remote = "Self", default)]
pub struct NameOnly {
    /// Object name.
    #[serde(deserialize_with = "null_as_default")]
    pub name: String,
}

/// `spec` of a [`CrdIdentity`]: the group and the names.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(remote = "Self", default)]
pub struct CrdIdentitySpec {
    /// API group served.
    #[serde(deserialize_with = "null_as_default")]
    pub group: String,
    /// Names of the resource.
    #[serde(deserialize_with = "null_as_default")]
    pub names: CrdNames,
}

/// A batch/v1 Job, as far as the checks read it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(remote = "Self", default, rename_all = "camelCase")]
pub struct Job {
    /// `metadata`.
    #[serde(deserialize_with = "null_as_default")]
    pub metadata: ObjectMeta,
    /// `spec`.
    #[serde(deserialize_with = "null_as_default")]
    pub spec: JobSpec,
    /// `status`.
    #[serde(deserialize_with = "null_as_default")]
    pub status: JobStatus,
}

/// `spec` of a Job.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(remote = "Self", default, rename_all = "camelCase")]
pub struct JobSpec {
    /// Seconds after the Job finishes before the TTL controller deletes it.
    pub ttl_seconds_after_finished: Option<i64>,
}

/// `status` of a Job.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(remote = "Self", default, rename_all = "camelCase")]
pub struct JobStatus {
    /// Conditions such as `Complete` and `Failed`.
    #[serde(deserialize_with = "view_list")]
    pub conditions: Vec<JobCondition>,
}

/// One entry of a Job's `status.conditions`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(remote = "Self", default, rename_all = "camelCase")]
pub struct JobCondition {
    /// Condition type, e.g. `Complete`.
    #[serde(rename = "type", deserialize_with = "null_as_default")]
    pub kind: String,
    /// `True`, `False` or `Unknown`.
    #[serde(deserialize_with = "null_as_default")]
    pub status: String,
    /// When the condition last changed.
    pub last_transition_time: Option<String>,
}
