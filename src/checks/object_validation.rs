//! object-validation: every object checked against its schema as the API server checks it.
//!
//! The validator is in the submodules: [`schema`] compiles an OpenAPI v3 schema once,
//! [`validate`] judges an object against it as apiextensions-apiserver does, [`metadata`] holds
//! the object-metadata rules every kind has, and [`field_error`] prints what they find as the
//! API server's `field.Error` prints; [`stored`] judges the objects a CRD already stores against
//! the schemas of its update.

pub mod field_error;
pub mod metadata;
pub mod schema;
pub mod stored;
pub mod validate;
