//! Where `syncguard scan` gets its policy modules: embedded in the binary at build time (see
//! `cli/build.rs`), or the `annotated-policy.wasm` files of the folders of `--policies DIR`.

use crate::metadata::Metadata;
use anyhow::{Result, anyhow, bail};
use std::borrow::Cow;
use std::path::Path;

include!(concat!(env!("OUT_DIR"), "/embedded_policies.rs"));

/// An annotated policy module and where it came from.
pub struct PolicyModule {
    /// Policy name: its folder name.
    pub name: String,
    /// `embedded` or the module's path.
    pub origin: String,
    /// The module.
    pub wasm: Cow<'static, [u8]>,
    /// Its embedded metadata.
    pub metadata: Metadata,
}

fn with_metadata(name: &str, origin: String, wasm: Cow<'static, [u8]>) -> Result<PolicyModule> {
    let metadata = Metadata::from_wasm(&wasm)
        .map_err(|e| anyhow!("policy {name} ({origin}): {e}"))?
        .ok_or_else(|| anyhow!("policy {name} ({origin}) carries no metadata: annotate it (`make annotate`)"))?;
    Ok(PolicyModule {
        name: name.to_string(),
        origin,
        wasm,
        metadata,
    })
}

/// The modules embedded in this binary, sorted by name.
pub fn embedded() -> Result<Vec<PolicyModule>> {
    EMBEDDED_POLICIES
        .iter()
        .map(|(name, wasm)| with_metadata(name, "embedded".to_string(), Cow::Borrowed(*wasm)))
        .collect()
}

/// The modules at `DIR/<name>/annotated-policy.wasm`, sorted by name. Folders without one
/// are skipped, and so is the all-in-one's (`syncguard`), whose checks the single policies run;
/// a folder that has none at all is an error.
pub fn from_dir(dir: &Path) -> Result<Vec<PolicyModule>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| anyhow!("--policies {}: {}", dir.display(), crate::scan::input::io_reason(&e)))?;
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path().join("annotated-policy.wasm");
        if entry.file_name() == syncguard::registry::ALL_IN_ONE {
            continue;
        }
        if path.is_file() {
            found.push((entry.file_name().to_string_lossy().to_string(), path));
        }
    }
    found.sort();
    if found.is_empty() {
        bail!(
            "--policies {}: no policy folder holds an annotated-policy.wasm (expected {}/<name>/annotated-policy.wasm; `make build` creates them under policies/)",
            dir.display(),
            dir.display()
        );
    }
    found
        .into_iter()
        .map(|(name, path)| {
            let wasm = std::fs::read(&path)
                .map_err(|e| anyhow!("cannot read {}: {}", path.display(), crate::scan::input::io_reason(&e)))?;
            with_metadata(&name, path.display().to_string(), Cow::Owned(wasm))
        })
        .collect()
}
