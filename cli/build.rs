//! Embeds the annotated policy modules (`policies/<name>/annotated-policy.wasm`) that exist
//! when the command is built, so `syncguard scan` runs without `--policies`. `make build`
//! builds the modules, annotates them with a first build of the command, then builds the
//! command again to embed them. A policy folder without an annotated module is left out, and
//! so is the all-in-one, whose checks the single policies run.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR is set by cargo"));
    let policies = manifest.parent().unwrap_or(Path::new("..")).join("policies");
    // What this script reads: the folder's entries (a policy folder that appears or goes away),
    // each policy folder (an annotated module that appears in one) and each embedded module,
    // each named below on its own (with the folder alone, `make build` once left an old
    // module embedded until build.rs was touched).
    println!("cargo::rerun-if-changed={}", policies.display());
    println!("cargo::rerun-if-changed=build.rs");
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&policies) {
        for entry in entries.flatten() {
            let module = entry.path().join("annotated-policy.wasm");
            // The all-in-one (`policies/syncguard`) runs the same checks as the single policies;
            // a scan runs those one by one (each configurable), so it is not embedded.
            if entry.file_name() == "syncguard" {
                continue;
            }
            println!("cargo::rerun-if-changed={}", entry.path().display());
            if module.is_file() {
                println!("cargo::rerun-if-changed={}", module.display());
                found.push((entry.file_name().to_string_lossy().to_string(), module));
            }
        }
    }
    found.sort();
    let mut code = String::new();
    writeln!(
        code,
        "/// Annotated policy modules embedded at build time: (policy name, module bytes)."
    )
    .unwrap();
    writeln!(code, "pub static EMBEDDED_POLICIES: &[(&str, &[u8])] = &[").unwrap();
    for (name, path) in &found {
        writeln!(
            code,
            "    ({name:?}, include_bytes!({:?})),",
            path.display().to_string()
        )
        .unwrap();
    }
    writeln!(code, "];").unwrap();
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    std::fs::write(out.join("embedded_policies.rs"), code).expect("write embedded_policies.rs");
}
