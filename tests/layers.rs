//! Keeps the core's modules in the layers CONTRIBUTING.md lists ("Where code goes"): a module
//! uses only modules of lower layers, so the `use` graph of `src/` has no cycle.
//!
//! The graph is read from the sources: every `crate::<module>` path outside comments and test
//! modules (`#[cfg(test)] mod tests`, which may use anything). The core names other modules only
//! through `crate::` paths (`super::` stays within a module's own folder), so this is the whole
//! graph; a tool such as cargo-modules would load the crate through rust-analyzer for the same
//! answer, minutes on the CI machine.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The layers, lowest first. A module of the core is a file or folder of `src/` (`text` with its
/// submodules is one); each check under `src/checks/` is a module of its own, `checks::<name>`.
const LAYERS: &[(&str, &[&str])] = &[
    ("text layout and limits", &["text"]),
    ("settings shapes and generated tables", &["settings", "generated"]),
    ("the admission request and answer", &["admission"]),
    ("Kubernetes objects and admission rules", &["k8s", "rules"]),
    ("findings and cluster lookups", &["finding", "cluster"]),
    ("rendering findings into answers", &["render"]),
    ("the check contract", &["check"]),
    ("the checks, never each other", &["checks::*"]),
    ("the registry of checks", &["registry"]),
    ("the all-in-one policy", &["all_in_one"]),
    ("the waPC glue", &["guest"]),
];

/// The layer of module `name`, if the table lists it.
fn layer(name: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, modules)| {
        modules
            .iter()
            .any(|m| *m == name || (m.ends_with("::*") && name.starts_with(&m[..m.len() - 1])))
    })
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        if path.is_dir() {
            files.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The module a file of `src/` belongs to (`None` for `lib.rs` and `checks/mod.rs`, which only
/// declare modules).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    match parts.as_slice() {
        [lib] if lib == "lib" => None,
        [checks, module] if checks == "checks" && module == "mod" => None,
        [checks, check, ..] if checks == "checks" => Some(format!("checks::{check}")),
        [first, ..] => Some(first.clone()),
        [] => None,
    }
}

/// The code of a file without comments and without its test module.
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" && lines.peek().is_some_and(|next| next.trim() == "mod tests {") {
            break;
        }
        out.push_str(line.split("//").next().unwrap_or(""));
        out.push('\n');
    }
    out
}

/// The modules `code` names through `crate::` paths, as [`module_of`] names them
/// (`crate::checks::{a::X, b::Y}` names `checks::a` and `checks::b`).
fn used_modules(code: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut used = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let first = ident(rest);
        if first != "checks" {
            used.push(first);
            continue;
        }
        let after = rest[first.len()..].trim_start_matches("::");
        if let Some(group) = after.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            used.extend(
                group
                    .split(',')
                    .map(|item| ident(item.trim()))
                    .filter(|name| !name.is_empty())
                    .map(|name| format!("checks::{name}")),
            );
        } else {
            used.push(format!("checks::{}", ident(after)));
        }
    }
    used
}

#[test]
fn every_module_uses_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut uses: BTreeMap<String, BTreeMap<String, PathBuf>> = BTreeMap::new();
    for file in sources(&src) {
        let Some(module) = module_of(&src, &file) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        let entry = uses.entry(module.clone()).or_default();
        for used in used_modules(&code(&text)) {
            if used != module {
                entry.entry(used).or_insert_with(|| file.clone());
            }
        }
    }
    assert!(uses.len() > 15, "the sources were not found: {uses:?}");
    let mut problems = Vec::new();
    for (module, used) in &uses {
        let Some(own) = layer(module) else {
            problems.push(format!(
                "{module} is in no layer: add it to LAYERS here and to CONTRIBUTING.md"
            ));
            continue;
        };
        for (other, file) in used {
            match layer(other) {
                Some(theirs) if theirs < own => {}
                theirs => problems.push(format!(
                    "{} ({module}, layer {}: {}) uses crate::{other} (layer {}); a module uses only lower layers",
                    file.strip_prefix(&src).unwrap().display(),
                    own + 1,
                    LAYERS[own].0,
                    theirs.map_or("none".to_string(), |l| (l + 1).to_string()),
                )),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_reader_finds_what_it_must() {
    let text = "use crate::checks::{\n a::X, b::Y,\n};\n// crate::render\nlet x = crate::text::chars(y); // crate::guest\n#[cfg(test)]\nmod tests {\n use crate::registry;\n}\n";
    assert_eq!(used_modules(&code(text)), ["checks::a", "checks::b", "text"]);
    assert_eq!(layer("checks::sync_drift"), layer("checks::a"));
    assert!(layer("render") < layer("check") && layer("nothing").is_none());
}

#[test]
fn contributing_lists_the_layers() {
    let contributing = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("CONTRIBUTING.md")).unwrap();
    for (i, (what, modules)) in LAYERS.iter().enumerate() {
        let names: Vec<String> = modules.iter().map(|m| format!("`{m}`")).collect();
        let line = format!("{}. {}: {what}", i + 1, names.join(", "));
        assert!(
            contributing.contains(&line),
            "CONTRIBUTING.md lists the layers, one line each; missing: {line}"
        );
    }
}
