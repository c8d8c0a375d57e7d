//! `$OUT_DIR/public_suffix.rs`, crd-kind-collision's Public Suffix List compiled into a table.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

include!("../src/checks/crd_kind_collision/public_suffix_key.rs");

/// Generates `$OUT_DIR/public_suffix.rs` from crd-kind-collision's copy of the Public Suffix
/// List: every node of the tree of its rules (labels read from the top-level domain inwards, `*`
/// a label of its own), as a sorted array of keys ([`suffix_node_key`]) whose two low bits say
/// whether a rule or an exception rule ends there. The list is read as the `publicsuffix` crate
/// reads it (rules between the section markers, the first word of a line, `//` comments
/// skipped, the last of two identical rules winning), so that the table answers as the crate
/// over the whole list did, with no parse in a module: 8 bytes a node.
pub fn public_suffix(out: &Path) {
    const LIST: &str = "src/checks/crd_kind_collision/public_suffix_list.txt";
    println!("cargo::rerun-if-changed={LIST}");
    println!("cargo::rerun-if-changed=src/checks/crd_kind_collision/public_suffix_key.rs");
    let text = std::fs::read_to_string(LIST).expect("read public_suffix_list.txt");
    // Node key (low bits clear) -> its leaf kind.
    let mut nodes: BTreeMap<u64, u64> = BTreeMap::new();
    let mut paths: BTreeMap<u64, String> = BTreeMap::new();
    let mut in_section = false;
    let mut rules = 0;
    for line in text.lines() {
        if line.contains("BEGIN ICANN DOMAINS") || line.contains("BEGIN PRIVATE DOMAINS") {
            in_section = true;
            continue;
        }
        if line.starts_with("//") || !in_section {
            continue;
        }
        let Some(mut rule) = line.split_whitespace().next() else {
            continue;
        };
        let exception = rule.starts_with('!');
        if exception {
            assert!(rule.contains('.'), "{rule}: an exception at the first label");
            rule = &rule[1..];
        }
        let mut key = SUFFIX_ROOT;
        let mut path = String::new();
        for label in rule.rsplit('.') {
            assert!(!label.is_empty(), "{rule}: an empty label");
            key = suffix_node_key(key, label.as_bytes());
            path = format!("{label}.{path}");
            let node = key & !3;
            match paths.get(&node) {
                Some(other) => assert_eq!(other, &path, "a key collision"),
                None => {
                    paths.insert(node, path.clone());
                }
            }
            nodes.entry(node).or_insert(SUFFIX_LEAF[0]);
        }
        nodes.insert(key & !3, SUFFIX_LEAF[if exception { 2 } else { 1 }]);
        rules += 1;
    }
    assert!(rules > 5_000, "{rules} rules: not the Public Suffix List");
    let mut code = String::new();
    writeln!(
        code,
        "/// The nodes of the Public Suffix List's tree of rules ({rules} rules), sorted."
    )
    .unwrap();
    writeln!(code, "static SUFFIX_NODES: &[u64] = &[").unwrap();
    for (node, leaf) in &nodes {
        writeln!(code, "    {:#018x},", node | leaf).unwrap();
    }
    writeln!(code, "];").unwrap();
    std::fs::write(out.join("public_suffix.rs"), code).expect("write public_suffix.rs");
}
