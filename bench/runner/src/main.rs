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

mod baseline;
mod bench;
mod inputs;
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Scan(args)) => scan::scan_bench(args),
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
