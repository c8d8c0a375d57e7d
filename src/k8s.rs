//! Minimal typed views of the Kubernetes objects the checks read, shared by every check so a
//! module that holds several checks holds one reader per object. Only the fields some check
//! uses are declared; everything else is skipped unread. Like the API server's decoder, every
//! view reads JSON `null` as absent (raw manifests carry `annotations: null` or
//! `status: {storedVersions: null}`), and a wrong type is an error.

use crate::json::{Error, Json, Kind, from_json_members};
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

from_json_members!(lenient ObjectMeta {
    "name" => name,
    "generateName" => generate_name,
    "namespace" => namespace,
    "labels" => labels with string_map,
    "annotations" => annotations with string_map,
    "finalizers" => finalizers,
    "deletionTimestamp" => deletion_timestamp,
});

from_json_members!(lenient Object {
    "apiVersion" => api_version,
    "kind" => kind,
    "metadata" => metadata,
});

from_json_members!(lenient Crd {
    "metadata" => metadata,
    "spec" => spec,
    "status" => status,
});

from_json_members!(lenient CrdSpec {
    "group" => group,
    "names" => names,
    "scope" => scope,
    "versions" => versions,
});

from_json_members!(lenient CrdNames {
    "kind" => kind,
    "plural" => plural,
    "singular" => singular,
    "shortNames" => short_names,
    "listKind" => list_kind,
});

from_json_members!(lenient CrdVersion {
    "name" => name,
    "served" => served,
    "storage" => storage,
});

from_json_members!(lenient CrdStatus {
    "storedVersions" => stored_versions,
});

from_json_members!(lenient Job {
    "metadata" => metadata,
    "spec" => spec,
    "status" => status,
});

from_json_members!(lenient JobSpec {
    "ttlSecondsAfterFinished" => ttl_seconds_after_finished,
});

from_json_members!(lenient JobStatus {
    "conditions" => conditions,
});

from_json_members!(lenient JobCondition {
    "type" => kind,
    "status" => status,
    "lastTransitionTime" => last_transition_time,
});
