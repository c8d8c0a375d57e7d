//! The compile cache: wasmtime's machine code for a module, kept on disk so a second
//! `syncguard run` of the same module starts in milliseconds (policy-server caches the same way).
//!
//! Location: `$SYNCGUARD_CACHE_DIR`, else `$XDG_CACHE_HOME/syncguard`, else
//! `~/.cache/syncguard`; `SYNCGUARD_CACHE_DIR=off` disables it. Entries are keyed by the SHA-256
//! of the module and wasmtime's compatibility hash of the engine, written atomically into a
//! directory only the user can read. Any cache problem falls back to compiling.

use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

fn directory() -> Option<PathBuf> {
    match std::env::var_os("SYNCGUARD_CACHE_DIR") {
        Some(dir) if dir == "off" => None,
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => std::env::var_os("XDG_CACHE_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
            .map(|base| base.join("syncguard")),
    }
}

fn entry(engine: &wasmtime::Engine, wasm: &[u8]) -> Option<PathBuf> {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let digest = Sha256::digest(wasm);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Some(directory()?.join(format!("{hex}-{:016x}.cwasm", hasher.finish())))
}

/// The cached compilation of `wasm`, if there is a usable one.
pub fn load(engine: &wasmtime::Engine, wasm: &[u8]) -> Option<wasmtime::Module> {
    let path = entry(engine, wasm)?;
    if !path.is_file() {
        return None;
    }
    // SAFETY: the file was written by `store` below from wasmtime's own serialization, into a
    // directory created private to this user; wasmtime checks the engine compatibility header.
    unsafe { wasmtime::Module::deserialize_file(engine, &path) }.ok()
}

/// Stores the compilation of `wasm`; failures are ignored (the cache is an optimisation).
pub fn store(engine: &wasmtime::Engine, wasm: &[u8], module: &wasmtime::Module) {
    let Some(path) = entry(engine, wasm) else { return };
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    let Ok(bytes) = module.serialize() else { return };
    let temporary = dir.join(format!(
        ".{}.{}",
        std::process::id(),
        path.file_name().map_or("tmp".into(), |n| n.to_string_lossy())
    ));
    if std::fs::write(&temporary, bytes).is_ok() && std::fs::rename(&temporary, &path).is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
}
