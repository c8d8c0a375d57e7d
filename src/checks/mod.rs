//! One module per check: the whole logic of each syncguard policy; and the entries, settings and
//! rules of the two checks of a whole tree (kind-group-clash, duplicate-object), whose logic reads
//! the scanned tree in the scan crate.
pub mod crd_kind_collision;
pub mod crd_safe_upgrade;
pub mod crd_schema_fields;
pub mod duplicate_object;
pub mod hook_job_safety;
pub mod kind_group_clash;
pub mod object_validation;
pub mod ownership_markers;
pub mod sync_drift;
