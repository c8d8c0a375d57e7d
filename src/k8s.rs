//! Minimal typed views of the Kubernetes objects the checks read, shared by every check so a
//! module that holds several checks holds one reader per object. Only the fields some check
//! uses are declared; everything else is skipped unread. Like the API server's decoder, every
//! view reads JSON `null` as absent (raw manifests carry `annotations: null` or
//! `status: {storedVersions: null}`), and a wrong type is an error.

use crate::json::{Error, FromJson, Json, Kind};
use std::collections::BTreeMap;

/// Reads a string map in which `null` (the map or a value) is empty, as the API server does.
pub fn string_map(value: Json<'_>) -> Result<BTreeMap<String, String>, Error> {
    let mut map = BTreeMap::new();
    if value.is_null() {
        return Ok(map);
    }
    if value.kind() != Kind::Object {
        return Err(value.invalid_type("a map"));
    }
    for (key, member) in value.members() {
        let text = if member.is_null() {
            String::new()
        } else {
            member.read().map_err(|e| e.in_key(&key))?
        };
        map.insert(key.into_owned(), text);
    }
    Ok(map)
}

/// The parts of `metadata` the checks read.
#[derive(Debug, Clone, Default)]
pub struct ObjectMeta {
    /// Object name.
    pub name: String,
    /// Prefix the API server completes into a name when `name` is empty.
    pub generate_name: String,
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
#[derive(Debug, Clone, Default)]
pub struct Object {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata`.
    pub metadata: ObjectMeta,
}

/// A CustomResourceDefinition, as far as the checks read it.
#[derive(Debug, Clone, Default)]
pub struct Crd {
    /// `metadata`.
    pub metadata: ObjectMeta,
    /// `spec`.
    pub spec: CrdSpec,
    /// `status`.
    pub status: CrdStatus,
}

/// `spec` of a CRD.
#[derive(Debug, Clone, Default)]
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
#[derive(Debug, Clone, Default)]
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
#[derive(Debug, Clone, Default)]
pub struct CrdVersion {
    /// Version name, e.g. `v1beta1`.
    pub name: String,
    /// Whether it is served.
    pub served: bool,
    /// Whether it is the storage version.
    pub storage: bool,
}

/// `status` of a CRD.
#[derive(Debug, Clone, Default)]
pub struct CrdStatus {
    /// Versions objects have ever been stored as and not yet migrated from.
    pub stored_versions: Vec<String>,
}

impl Crd {
    /// The `spec.versions` entry named `name`, with its index.
    pub fn version(&self, name: &str) -> Option<(usize, &CrdVersion)> {
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

/// A batch/v1 Job, as far as the checks read it.
#[derive(Debug, Clone, Default)]
pub struct Job {
    /// `metadata`.
    pub metadata: ObjectMeta,
    /// `spec`.
    pub spec: JobSpec,
    /// `status`.
    pub status: JobStatus,
}

/// `spec` of a Job.
#[derive(Debug, Clone, Default)]
pub struct JobSpec {
    /// Seconds after the Job finishes before the TTL controller deletes it.
    pub ttl_seconds_after_finished: Option<i64>,
}

/// `status` of a Job.
#[derive(Debug, Clone, Default)]
pub struct JobStatus {
    /// Conditions such as `Complete` and `Failed`.
    pub conditions: Vec<JobCondition>,
}

/// One entry of a Job's `status.conditions`.
#[derive(Debug, Clone, Default)]
pub struct JobCondition {
    /// Condition type, e.g. `Complete`.
    pub kind: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// When the condition last changed.
    pub last_transition_time: Option<String>,
}

/// Reads an object view: `set(field index, value)` for each member named in `fields`, `null`
/// members left at their defaults.
fn read_view<'a>(
    value: Json<'a>,
    view: &str,
    fields: &[&str],
    set: impl FnMut(usize, Json<'a>) -> Result<(), Error>,
) -> Result<(), Error> {
    value.read_members(view, fields, false, set)
}

impl<'a> FromJson<'a> for ObjectMeta {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        let mut meta = ObjectMeta::default();
        let fields = [
            "name",
            "generateName",
            "namespace",
            "labels",
            "annotations",
            "finalizers",
            "deletionTimestamp",
        ];
        read_view(value, "struct ObjectMeta", &fields, |i, v| {
            match i {
                0 => meta.name = v.read()?,
                1 => meta.generate_name = v.read()?,
                2 => meta.namespace = v.read()?,
                3 => meta.labels = string_map(v)?,
                4 => meta.annotations = string_map(v)?,
                5 => meta.finalizers = v.read()?,
                _ => meta.deletion_timestamp = v.read()?,
            }
            Ok(())
        })?;
        Ok(meta)
    }
}

impl<'a> FromJson<'a> for Object {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        let mut object = Object::default();
        read_view(value, "struct Object", &["apiVersion", "kind", "metadata"], |i, v| {
            match i {
                0 => object.api_version = v.read()?,
                1 => object.kind = v.read()?,
                _ => object.metadata = v.read()?,
            }
            Ok(())
        })?;
        Ok(object)
    }
}

impl<'a> FromJson<'a> for Crd {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        let mut crd = Crd::default();
        read_view(value, "struct Crd", &["metadata", "spec", "status"], |i, v| {
            match i {
                0 => crd.metadata = v.read()?,
                1 => crd.spec = v.read()?,
                _ => crd.status = v.read()?,
            }
            Ok(())
        })?;
        Ok(crd)
    }
}

impl<'a> FromJson<'a> for CrdSpec {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        let mut spec = CrdSpec::default();
        read_view(
            value,
            "struct CrdSpec",
            &["group", "names", "scope", "versions"],
            |i, v| {
                match i {
                    0 => spec.group = v.read()?,
                    1 => spec.names = v.read()?,
                    2 => spec.scope = v.read()?,
                    _ => spec.versions = v.read()?,
                }
                Ok(())
            },
        )?;
        Ok(spec)
    }
}

impl<'a> FromJson<'a> for CrdNames {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        let mut names = CrdNames::default();
        let fields = ["kind", "plural", "singular", "shortNames", "listKind"];
        read_view(value, "struct CrdNames", &fields, |i, v| {
            match i {
                0 => names.kind = v.read()?,
                1 => names.plural = v.read()?,
                2 => names.singular = v.read()?,
                3 => names.short_names = v.read()?,
                _ => names.list_kind = v.read()?,
            }
            Ok(())
        })?;
        Ok(names)
    }
}

impl<'a> FromJson<'a> for CrdVersion {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        let mut version = CrdVersion::default();
        read_view(value, "struct CrdVersion", &["name", "served", "storage"], |i, v| {
            match i {
                0 => version.name = v.read()?,
                1 => version.served = v.read()?,
                _ => version.storage = v.read()?,
            }
            Ok(())
        })?;
        Ok(version)
    }
}

impl<'a> FromJson<'a> for CrdStatus {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        let mut status = CrdStatus::default();
        read_view(value, "struct CrdStatus", &["storedVersions"], |_, v| {
            status.stored_versions = v.read()?;
            Ok(())
        })?;
        Ok(status)
    }
}

impl<'a> FromJson<'a> for Job {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        let mut job = Job::default();
        read_view(value, "struct Job", &["metadata", "spec", "status"], |i, v| {
            match i {
                0 => job.metadata = v.read()?,
                1 => job.spec = v.read()?,
                _ => job.status = v.read()?,
            }
            Ok(())
        })?;
        Ok(job)
    }
}

impl<'a> FromJson<'a> for JobSpec {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        let mut spec = JobSpec::default();
        read_view(value, "struct JobSpec", &["ttlSecondsAfterFinished"], |_, v| {
            spec.ttl_seconds_after_finished = v.read()?;
            Ok(())
        })?;
        Ok(spec)
    }
}

impl<'a> FromJson<'a> for JobStatus {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        let mut status = JobStatus::default();
        read_view(value, "struct JobStatus", &["conditions"], |_, v| {
            status.conditions = v.read()?;
            Ok(())
        })?;
        Ok(status)
    }
}

impl<'a> FromJson<'a> for JobCondition {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        let mut condition = JobCondition::default();
        let fields = ["type", "status", "lastTransitionTime"];
        read_view(value, "struct JobCondition", &fields, |i, v| {
            match i {
                0 => condition.kind = v.read()?,
                1 => condition.status = v.read()?,
                _ => condition.last_transition_time = v.read()?,
            }
            Ok(())
        })?;
        Ok(condition)
    }
}
