//! The build script of the core: generates its tables from data, one module a table, so that no
//! Kubernetes fact and no policy's admission rules are typed by hand in the code.
//! - [`k8s_tables`]: the built-in resources, from k8s-openapi;
//! - [`well_known`]: crd-kind-collision's well-known API groups, from its table;
//! - [`public_suffix`]: crd-kind-collision's Public Suffix List, compiled into a table;
//! - [`api_fields`]: how the API server writes each field of the built-in kinds back, from
//!   sync-drift's tables (written by `tools/derive-api-fields.py`);
//! - [`builtin_schemas`]: the index of object-validation's table of the built-in kinds' schemas
//!   (written by `tools/derive-builtin-schemas.py`);
//! - [`policy_rules`]: every policy's admission rules and metadata.yml, from `policies/`.

mod api_fields;
mod builtin_schemas;
mod k8s_tables;
#[path = "../src/generated/name_hash.rs"]
mod name_hash;
mod policy_rules;
mod public_suffix;
mod well_known;

use std::path::PathBuf;

fn main() {
    println!("cargo::rerun-if-changed=build");
    println!("cargo::rerun-if-changed=Cargo.lock");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    k8s_tables::k8s_tables(&out);
    well_known::well_known_groups(&out);
    public_suffix::public_suffix(&out);
    api_fields::api_fields(&out);
    builtin_schemas::builtin_schemas(&out);
    std::fs::write(out.join("policy_rules.rs"), policy_rules::policy_rules()).expect("write policy_rules.rs");
}
