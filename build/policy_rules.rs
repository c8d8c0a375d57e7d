//! `$OUT_DIR/policy_rules.rs`, from the `rules` of every `policies/<name>/metadata.yml` (the
//! all-in-one's is `policies/syncguard/metadata.yml`), so a policy's admission rules are
//! declared once, where Kubewarden reads them; with them `METADATA`, every metadata.yml's text.

use std::fmt::Write as _;
use std::path::PathBuf;

/// `pub const <NAME>: &[Rule]` for each policy's metadata.yml (the all-in-one's is `SYNCGUARD`),
/// `POLICIES`, every policy name with its rules, and `METADATA`, every policy name with the text
/// of its metadata.yml.
pub fn policy_rules() -> String {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR is set by cargo"));
    println!("cargo::rerun-if-changed=policies");
    let mut sources = Vec::new();
    let mut names: Vec<String> = std::fs::read_dir(root.join("policies"))
        .expect("read policies/")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("metadata.yml").is_file())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    sources.extend(names.into_iter().map(|name| {
        let path = root.join("policies").join(&name).join("metadata.yml");
        (name, path)
    }));
    let mut code = String::new();
    let mut index = String::new();
    let mut texts = String::new();
    for (name, path) in &sources {
        println!("cargo::rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let metadata: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: not YAML: {e}", path.display()));
        let rules = metadata
            .get("rules")
            .and_then(serde_yaml_ng::Value::as_sequence)
            .unwrap_or_else(|| panic!("{}: `rules` is not a list", path.display()));
        let constant = name.to_uppercase().replace('-', "_");
        let shown = path.strip_prefix(&root).unwrap_or(path).display();
        writeln!(code, "/// The admission rules of `{shown}`.").unwrap();
        writeln!(code, "pub const {constant}: &[Rule] = &[").unwrap();
        for (i, rule) in rules.iter().enumerate() {
            let list = |key: &str| -> String {
                let items: Vec<String> = rule
                    .get(key)
                    .and_then(serde_yaml_ng::Value::as_sequence)
                    .unwrap_or_else(|| panic!("{shown}: `rules[{i}].{key}` is not a list"))
                    .iter()
                    .map(|item| {
                        let item = item
                            .as_str()
                            .unwrap_or_else(|| panic!("{shown}: `rules[{i}].{key}` holds a non-string"));
                        format!("{item:?}")
                    })
                    .collect();
                format!("&[{}]", items.join(", "))
            };
            writeln!(
                code,
                "    Rule {{ api_groups: {}, api_versions: {}, resources: {}, operations: {} }},",
                list("apiGroups"),
                list("apiVersions"),
                list("resources"),
                list("operations")
            )
            .unwrap();
        }
        writeln!(code, "];").unwrap();
        writeln!(index, "    ({name:?}, {constant}),").unwrap();
        writeln!(texts, "    ({name:?}, include_str!({:?})),", path.display().to_string()).unwrap();
    }
    writeln!(
        code,
        "/// Every policy (`syncguard` is the all-in-one) with its admission rules."
    )
    .unwrap();
    writeln!(code, "pub const POLICIES: &[(&str, &[Rule])] = &[\n{index}];").unwrap();
    writeln!(code, "/// Every policy with the text of its metadata.yml.").unwrap();
    writeln!(code, "pub const METADATA: &[(&str, &str)] = &[\n{texts}];").unwrap();
    code
}
