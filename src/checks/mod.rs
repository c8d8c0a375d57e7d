//! One module per check: the whole logic of each syncguard policy.
pub mod crd_kind_collision;
pub mod crd_safe_upgrade;
pub mod crd_schema_fields;
pub mod hook_job_safety;
pub mod object_validation;
pub mod ownership_markers;
pub mod sync_drift;
