//! `syncguard scan`'s throughput, measured through the command's own scan
//! (`syncguard_cli::scan::scan_paths`): over a tree of generated manifests
//! (`syncguard-bench scan`, `make bench-scan`, and the scans of `make bench`) and over the folder
//! of real CRDs (`make bench`).

use crate::inputs;
use anyhow::{Result, anyhow, bail};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;
use syncguard_cli::engine::Limits;
use syncguard_cli::scan::{self, PolicySet, ScanOptions};

/// Arguments of `syncguard-bench scan`.
#[derive(clap::Args)]
pub struct ScanBenchArgs {
    /// Where the tree of generated manifests goes (replaced on each run; a folder that is not
    /// an earlier generated tree must be absent or empty).
    #[arg(long, value_name = "DIR", default_value = "target/bench-tree")]
    tree: PathBuf,
    /// How many manifests the tree holds.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    count: usize,
    /// Every how many manifests one is a CustomResourceDefinition (100: one in a hundred; 4: a
    /// quarter).
    #[arg(long, value_name = "K", default_value_t = inputs::FEW_CRDS)]
    crd_every: usize,
    /// Instead of the applications' manifests, `count` custom resources of a real CRD:
    /// cert-manager's Certificates beside their CRD (see `inputs::generate_certificates`).
    #[arg(long)]
    custom_resources: bool,
    /// The Certificate CRD of `--custom-resources` (cert-manager's).
    #[arg(long, value_name = "FILE", default_value = inputs::CERTIFICATE_CRD)]
    crd: PathBuf,
    /// Folder of the policies, each with its annotated-policy.wasm (`make build`); every one
    /// runs at its default settings.
    #[arg(long, value_name = "DIR", default_value = "policies")]
    policies: PathBuf,
    /// Worker threads (default: the number of CPUs).
    #[arg(short, long, value_name = "N")]
    jobs: Option<usize>,
}

/// `syncguard-bench scan`: writes the tree, scans it once and prints one JSON line: `files`,
/// `documents`, `evaluations`, `jobs`, `seconds` (the scan alone, not the writing of the tree)
/// and `documentsPerSecond`.
pub fn scan_bench(args: ScanBenchArgs) -> Result<()> {
    let jobs = match args.jobs {
        Some(0) => bail!("--jobs must be at least 1"),
        Some(n) => n,
        None => default_jobs(),
    };
    let (files, input) = if args.custom_resources {
        let files = inputs::generate_certificates(&args.tree, args.count, &args.crd)?;
        (files, format!("{} generated Certificates and their CRD", args.count))
    } else {
        let files = inputs::generate(&args.tree, args.count, args.crd_every)?;
        (files, format!("{} generated manifests", args.count))
    };
    eprintln!("wrote {input} in {files} files under {}", args.tree.display());
    let figures = scan_throughput(&args.policies, &args.tree, files, input, jobs)?;
    println!(
        "{}",
        serde_json::json!({
            "files": figures.files,
            "documents": figures.documents,
            "evaluations": figures.evaluations,
            "jobs": figures.jobs,
            "seconds": figures.seconds,
            "documentsPerSecond": figures.documents_per_second,
        })
    );
    Ok(())
}

/// One thread per CPU.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `syncguard scan` over one input, with every policy module at its defaults.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScanFigures {
    /// What was scanned.
    pub input: String,
    pub files: usize,
    pub documents: usize,
    pub evaluations: usize,
    pub jobs: usize,
    pub seconds: f64,
    pub documents_per_second: f64,
}

/// Scans `tree` (of `files` files) once with every module of `policies_dir` (its annotated
/// modules, default settings) on `jobs` threads, as `syncguard scan --policies DIR` does; the
/// time is the scan's alone (the modules are compiled before the clock starts).
pub fn scan_throughput(
    policies_dir: &Path,
    tree: &Path,
    files: usize,
    input: String,
    jobs: usize,
) -> Result<ScanFigures> {
    let modules = scan::policies::from_dir(policies_dir)?;
    let set = PolicySet::prepare(modules, &scan::config::Config::default(), "", Limits::default())?;
    let options = ScanOptions {
        jobs,
        progress: false,
        walk: scan::walk::WalkOptions::default(),
    };
    let start = Instant::now();
    let result = scan::scan_paths(&[tree.to_path_buf()], &set, &[], &[], &options);
    let seconds = start.elapsed().as_secs_f64();
    if let Some(error) = result.errors.first() {
        return Err(anyhow!("scanning {}: {}", tree.display(), error.message));
    }
    let documents = result.documents.len();
    Ok(ScanFigures {
        input,
        files,
        documents,
        evaluations: result.counts().evaluations,
        jobs,
        seconds,
        documents_per_second: documents as f64 / seconds.max(1e-9),
    })
}
