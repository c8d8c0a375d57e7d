//! Minimal typed views of the Kubernetes objects the checks read, shared by every check so a
//! module that holds several checks holds one reader per object. Only the fields some check
//! uses are declared; serde skips everything else without building it (`IgnoredAny`). Like the
//! API server's decoder, every view reads JSON `null` as absent (raw manifests carry
//! `annotations: null` or `status: {storedVersions: null}`), and a wrong type is an error.

use crate::admission::{ObjectJson, Text, null_as_default, object_only, str_or_empty};
use serde::{Deserialize, Deserializer};
use std::borrow::Cow;
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
    CrdIdentity<'de>,
    NameOnly<'de>,
    CrdIdentitySpec<'de>,
    CrdSpec<'de>,
    CrdNames<'de>,
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
fn member<'a, T: Deserialize<'a> + Default>(text: Option<&'a str>) -> Option<T> {
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
    #[serde(borrow, deserialize_with = "null_as_default")]
    pub names: CrdNames<'a>,
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

/// `spec.names` of a CRD, its strings borrowed from the text read (see [`Text`]).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(remote = "Self", default, rename_all = "camelCase")]
pub struct CrdNames<'a> {
    /// Kind.
    #[serde(borrow, deserialize_with = "str_or_empty")]
    pub kind: Cow<'a, str>,
    /// Plural resource name.
    #[serde(borrow, deserialize_with = "str_or_empty")]
    pub plural: Cow<'a, str>,
    /// Singular resource name.
    #[serde(borrow, deserialize_with = "str_or_empty")]
    pub singular: Cow<'a, str>,
    /// Short names.
    #[serde(borrow, deserialize_with = "str_list")]
    pub short_names: Vec<Cow<'a, str>>,
    /// List kind.
    #[serde(borrow, deserialize_with = "str_or_empty")]
    pub list_kind: Cow<'a, str>,
}

impl CrdNames<'_> {
    /// The same names, owned.
    pub fn into_owned(self) -> CrdNames<'static> {
        let owned = |text: Cow<'_, str>| Cow::Owned(text.into_owned());
        CrdNames {
            kind: owned(self.kind),
            plural: owned(self.plural),
            singular: owned(self.singular),
            short_names: self.short_names.into_iter().map(owned).collect(),
            list_kind: owned(self.list_kind),
        }
    }
}

/// Reads a list of strings borrowed from the text (see [`Text`]), `null` as empty; a `null`
/// entry is an error, as it is for a list of `String`.
fn str_list<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Cow<'de, str>>, D::Error> {
    let list = Option::<Vec<Text<'de>>>::deserialize(deserializer)?;
    Ok(list.unwrap_or_default().into_iter().map(|text| text.0).collect())
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
/// with `metadata`, and its strings are borrowed from the text read (owned only where they hold
/// escapes), so a list of thousands reads with next to no allocation.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(remote = "Self", default)]
pub struct CrdIdentity<'a> {
    /// `metadata`, of which only the name is read.
    #[serde(borrow, deserialize_with = "null_as_default")]
    pub metadata: NameOnly<'a>,
    /// `spec`, of which only the group and the names are read.
    #[serde(borrow, deserialize_with = "null_as_default")]
    pub spec: CrdIdentitySpec<'a>,
}

impl<'a> CrdIdentity<'a> {
    /// The members the view reads, for [`ObjectJson::members`]: reading stops before
    /// `spec.versions` and their schemas.
    pub const MEMBERS: [&'static [&'static str]; 3] = [&["metadata", "name"], &["spec", "group"], &["spec", "names"]];

    /// Reads the view from the texts of its [`CrdIdentity::MEMBERS`] alone; `None` when a
    /// member does not fit (the caller then reads the whole object, whose error names the path).
    pub fn from_members([name, group, names]: [Option<&'a str>; 3]) -> Option<CrdIdentity<'a>> {
        Some(CrdIdentity {
            metadata: NameOnly {
                name: member::<Option<Text<'a>>>(name)?.map_or(Cow::Borrowed(""), |text| text.0),
            },
            spec: CrdIdentitySpec {
                group: member::<Option<Text<'a>>>(group)?.map_or(Cow::Borrowed(""), |text| text.0),
                names: member(names)?,
            },
        })
    }

    /// The same identity, owned, for a reader that keeps it beyond the text it was read from.
    pub fn into_owned(self) -> CrdIdentity<'static> {
        CrdIdentity {
            metadata: NameOnly {
                name: Cow::Owned(self.metadata.name.into_owned()),
            },
            spec: CrdIdentitySpec {
                group: Cow::Owned(self.spec.group.into_owned()),
                names: self.spec.names.into_owned(),
            },
        }
    }
}

/// `metadata` read for its name alone.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(remote = "Self", default)]
pub struct NameOnly<'a> {
    /// Object name.
    #[serde(borrow, deserialize_with = "str_or_empty")]
    pub name: Cow<'a, str>,
}

/// `spec` of a [`CrdIdentity`]: the group and the names.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(remote = "Self", default)]
pub struct CrdIdentitySpec<'a> {
    /// API group served.
    #[serde(borrow, deserialize_with = "str_or_empty")]
    pub group: Cow<'a, str>,
    /// Names of the resource.
    #[serde(borrow, deserialize_with = "null_as_default")]
    pub names: CrdNames<'a>,
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
