//! `syncguard-bench`: syncguard's benchmark, its own unpublished binary (`make bench`,
//! `make bench-scan`), built on the `syncguard` command's library (the same wasmtime engine,
//! evaluation and scan).
//!
//! - `syncguard-bench` (`make bench`): one run, one table (and `target/bench.json`): module
//!   sizes, cold start, warm validate beside the floors and beside the single-check modules of
//!   commit d811579 (built by the bench itself, see [`baseline`]), scan throughput, the context
//!   lookup in a cluster of 5,000 CRDs, and the goals (see [`bench`]).
//! - `syncguard-bench scan` (`make bench-scan`): a generated tree of manifests, scanned once;
//!   prints one JSON line of counts and throughput (see [`scan`]).
//! - `syncguard-bench policy-server` (`make bench-policy-server`): the modules in a real
//!   policy-server, `POLICY_SERVER`, against the floors, their lookups answered by a stand-in
//!   API server (see [`policy_server`] and [`api_server`]).

mod api_server;
mod baseline;
mod bench;
mod inputs;
mod policy_server;
mod scan;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Measures syncguard's policy modules and `syncguard scan` against the project's goals.
#[derive(Parser)]
#[command(name = "syncguard-bench", version, about, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    bench: bench::BenchArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Generates a tree of manifests and scans it once with every policy module at its default
    /// settings; prints one JSON line of counts and throughput.
    Scan(scan::ScanBenchArgs),
    /// Every policy module and the three floors in a real policy-server (the binary named by
    /// `POLICY_SERVER`; skipped when unset): p50 and p90 per request from 4 concurrent clients,
    /// against the no-op module on the same payload, and the instructions per request.
    PolicyServer(policy_server::PolicyServerArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Scan(args)) => scan::scan_bench(args),
        Some(Command::PolicyServer(args)) => policy_server::policy_server_bench(args),
        None => bench::bench(cli.bench),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
