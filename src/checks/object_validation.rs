//! object-validation: objects judged against the schema the API server applies.

pub mod cel;
