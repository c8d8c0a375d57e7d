//! Keeps CONTRIBUTING.md's walkthrough of adding a check true: every check of the registry is
//! laid out exactly as it says, its template files included, and the files that ship it
//! (metadata.yml's lookups, the all-in-one's metadata and questions) agree with the registry.

use std::collections::BTreeSet;
use std::path::Path;
use syncguard::registry::CHECKS;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The fenced code blocks of a Markdown text tagged `lang`, without their indentation.
fn blocks(text: &str, lang: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut current: Option<(usize, Vec<String>)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        match &mut current {
            None if trimmed == format!("```{lang}") => current = Some((line.len() - trimmed.len(), Vec::new())),
            Some(_) if trimmed == "```" => {
                let (_, lines) = current.take().unwrap();
                found.push(lines.join("\n") + "\n");
            }
            Some((indent, lines)) => lines.push(line.get(*indent..).unwrap_or("").to_string()),
            None => {}
        }
    }
    found
}

/// `my-check` written as `my_check` and as `MyCheck`.
fn spellings(name: &str) -> (String, String) {
    let snake = name.replace('-', "_");
    let camel = name
        .split('-')
        .map(|word| word[..1].to_uppercase() + &word[1..])
        .collect();
    (snake, camel)
}

fn fill(template: &str, name: &str) -> String {
    let (snake, camel) = spellings(name);
    template
        .replace("my-check", name)
        .replace("my_check", &snake)
        .replace("MyCheck", &camel)
}

/// GitHub's anchor of a Markdown heading.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == ' ' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn every_check_is_laid_out_as_contributing_md_says() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let guide = read(&root.join("CONTRIBUTING.md"));
    let toml = blocks(&guide, "toml");
    let rust = blocks(&guide, "rust");
    let cargo_toml = toml
        .iter()
        .find(|b| b.contains("[package]"))
        .expect("the Cargo.toml template");
    let lib_rs = rust
        .iter()
        .find(|b| b.contains("export_policy!"))
        .expect("the src/lib.rs template");
    let registry_line = rust
        .iter()
        .find(|b| b.contains("my_check: MyCheck"))
        .expect("the registry line");
    let registry = read(&root.join("src/registry.rs"));
    let modules = read(&root.join("src/checks/mod.rs"));
    let mut problems = Vec::new();
    for entry in CHECKS {
        let name = entry.name;
        let (snake, _) = spellings(name);
        let folder = root.join("policies").join(name);
        if !registry.contains(&fill(registry_line, name)) {
            problems.push(format!(
                "{name}: src/registry.rs lacks `{}`",
                fill(registry_line, name).trim()
            ));
        }
        if !modules.contains(&format!("pub mod {snake};")) {
            problems.push(format!("{name}: src/checks/mod.rs lacks `pub mod {snake};`"));
        }
        if !root.join("src/checks").join(format!("{snake}.rs")).is_file() {
            problems.push(format!("{name}: src/checks/{snake}.rs is missing"));
        }
        for (file, template) in [("Cargo.toml", cargo_toml), ("src/lib.rs", lib_rs)] {
            let path = folder.join(file);
            if !path.is_file() || read(&path) != fill(template, name) {
                problems.push(format!(
                    "{name}: policies/{name}/{file} is not CONTRIBUTING.md's template"
                ));
            }
        }
        for file in [
            "metadata.yml",
            "questions-ui.yml",
            "README.md",
            "test_data/cases.yml",
            "test_data/answers.snap",
            "test_data/hostile.yml",
        ] {
            if !folder.join(file).is_file() {
                problems.push(format!("{name}: policies/{name}/{file} is missing"));
            }
        }
        let generated = syncguard::rules::POLICIES.iter().find(|(policy, _)| *policy == name);
        if generated.map(|(_, rules)| *rules) != Some(entry.rules) {
            problems.push(format!(
                "{name}: its RULES are not those build/policy_rules.rs generates from its metadata.yml"
            ));
        }
        let readme = read(&folder.join("README.md"));
        let anchors: Vec<String> = readme
            .lines()
            .filter_map(|line| line.strip_prefix('#'))
            .map(|heading| anchor(heading.trim_start_matches('#')))
            .collect();
        for doc in entry.findings {
            if !anchors.contains(&doc.anchor.to_string()) {
                problems.push(format!(
                    "{name}: rule {} links to README section #{}, which policies/{name}/README.md lacks",
                    doc.id, doc.anchor
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The `contextAwareResources` of a metadata.yml, as `(apiVersion, kind)` pairs.
fn context_aware(metadata: &Path) -> BTreeSet<(String, String)> {
    let value: serde_json::Value = serde_yaml_ng::from_str(&read(metadata)).expect("metadata.yml is YAML");
    value["contextAwareResources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            (
                r["apiVersion"].as_str().unwrap_or_default().to_string(),
                r["kind"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_registry_and_the_shipped_files_agree() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let all_in_one = root.join("policies").join(syncguard::registry::ALL_IN_ONE);
    let questions = read(&all_in_one.join("questions-ui.yml"));
    let mut problems = Vec::new();
    let mut union = BTreeSet::new();
    for entry in CHECKS {
        let name = entry.name;
        let declared: BTreeSet<(String, String)> = entry
            .lookups
            .iter()
            .map(|(version, kind)| (version.to_string(), kind.to_string()))
            .collect();
        let listed = context_aware(&root.join("policies").join(name).join("metadata.yml"));
        if listed != declared {
            problems.push(format!(
                "{name}: metadata.yml's contextAwareResources {listed:?} are not the check's LOOKUPS {declared:?}"
            ));
        }
        union.extend(declared);
        let enabled = format!("variable: {}.enabled", entry.settings_key);
        if !questions.contains(&enabled) {
            problems.push(format!(
                "{name}: policies/{}/questions-ui.yml lacks `{enabled}`",
                syncguard::registry::ALL_IN_ONE
            ));
        }
        let description = questions.split_whitespace().collect::<Vec<_>>().join(" ");
        if !description.contains(name) || !description.contains(entry.settings_key) {
            problems.push(format!(
                "{name}: the all-in-one's questions-ui.yml description does not name it and its section {}",
                entry.settings_key
            ));
        }
    }
    let readme = read(&root.join("README.md"));
    for entry in CHECKS {
        let row = format!("| [{0}](policies/{0}/README.md) |", entry.name);
        if !readme.contains(&row) {
            problems.push(format!(
                "{}: the README's table of policies has no row `{row} ...`",
                entry.name
            ));
        }
    }
    let listed = context_aware(&all_in_one.join("metadata.yml"));
    if listed != union {
        problems.push(format!(
            "the all-in-one's contextAwareResources {listed:?} are not the union of the checks' LOOKUPS {union:?}"
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
