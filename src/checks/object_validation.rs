//! object-validation: every object judged against the schema the API server would apply.
pub mod builtin;
