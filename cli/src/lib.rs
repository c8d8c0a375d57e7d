//! The `syncguard` command as a library: the wasmtime host that runs policy modules the way
//! Kubewarden does ([`engine`], [`evaluate`]), `syncguard scan` ([`scan`]) and every other
//! subcommand. The binary (`src/main.rs`) only parses the command line; the benchmark
//! (`bench/runner`, `make bench`) drives the same engine and scan through this library.

pub mod annotate;
pub mod artifacthub;
mod cache;
pub mod engine;
pub mod evaluate;
pub mod metadata;
pub mod registry;
pub mod run;
pub mod scaffold;
pub mod scan;

/// Writes to stdout; a closed pipe (`syncguard ... | head`) ends the output quietly.
pub fn print_out(text: &str) {
    use std::io::Write as _;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}
