//! `$OUT_DIR/well_known_groups.rs`, from crd-kind-collision's table of well-known API groups.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

include!("../src/checks/crd_kind_collision/well_known_key.rs");

/// Generates `$OUT_DIR/well_known_groups.rs` from crd-kind-collision's table of well-known API
/// groups (`well_known_groups.tsv`, a group and its sources a line): the sorted keys
/// ([`well_known_key`]) of every group, 8 bytes a group instead of its text in every module.
pub fn well_known_groups(out: &Path) {
    const TABLE: &str = "src/checks/crd_kind_collision/well_known_groups.tsv";
    println!("cargo::rerun-if-changed={TABLE}");
    println!("cargo::rerun-if-changed=src/checks/crd_kind_collision/well_known_key.rs");
    let text = std::fs::read_to_string(TABLE).expect("read well_known_groups.tsv");
    let mut keys = BTreeSet::new();
    for line in text
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
    {
        let group = line.split('\t').next().expect("a line starts with its group");
        assert!(
            keys.insert(well_known_key(group)),
            "{group}: listed twice, or a key collision"
        );
    }
    let mut code = String::new();
    writeln!(code, "/// Keys of the well-known API groups, sorted.").unwrap();
    writeln!(code, "static WELL_KNOWN_GROUPS: &[u64] = &[").unwrap();
    for key in &keys {
        writeln!(code, "    {key:#018x},").unwrap();
    }
    writeln!(code, "];").unwrap();
    std::fs::write(out.join("well_known_groups.rs"), code).expect("write well_known_groups.rs");
}
