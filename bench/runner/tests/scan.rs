//! `syncguard-bench scan` end to end, with the built, annotated policy modules (`make build`
//! first): the JSON line it prints, and that its generated trees are clean under the policies'
//! defaults (so that a scan of them measures evaluation, not reporting).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use syncguard_cli::engine::Limits;
use syncguard_cli::scan::{self, PolicySet, ScanOptions, ScanReport, Verdict};

const BASE: &[&str] = &["crd-safe-upgrade", "hook-job-safety", "ownership-markers"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("bench/runner sits in the repository")
        .to_path_buf()
}

/// A temporary folder, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "syncguard-bench-test-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A `--policies` folder with the annotated modules of `names`; fails (never skips) when they
/// are not built.
fn policies(names: &[&str]) -> TempDir {
    let dir = TempDir::new();
    for name in names {
        let module = root().join("policies").join(name).join("annotated-policy.wasm");
        assert!(
            module.is_file(),
            "{} is missing: run `make build` first",
            module.display()
        );
        std::fs::create_dir_all(dir.path().join(name)).unwrap();
        std::fs::copy(&module, dir.path().join(name).join("annotated-policy.wasm")).unwrap();
    }
    dir
}

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_syncguard-bench"))
        .args(args)
        .output()
        .expect("cannot start syncguard-bench")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `tree` scanned by the command's own scan with the modules of `mods`, at their defaults.
fn scan_tree(mods: &Path, tree: &Path) -> ScanReport {
    let modules = scan::policies::from_dir(mods).unwrap();
    let set = PolicySet::prepare(modules, &scan::config::Config::default(), "", Limits::default()).unwrap();
    let options = ScanOptions {
        jobs: 2,
        progress: false,
        walk: scan::walk::WalkOptions::default(),
    };
    scan::scan_paths(&[tree.to_path_buf()], &set, &[], &[], &options)
}

#[test]
fn generated_tree_is_scanned_and_clean() {
    let dir = TempDir::new();
    let tree = dir.path().join("tree");
    let mods = policies(BASE);
    let run = bench(&[
        "scan",
        "--tree",
        tree.to_str().unwrap(),
        "--count",
        "205",
        "--policies",
        mods.path().to_str().unwrap(),
        "--jobs",
        "2",
    ]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert_eq!(
        text(&run.stderr),
        format!("wrote 205 generated manifests in 21 files under {}\n", tree.display())
    );
    let stdout = text(&run.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let stats: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(stats["files"], 21, "{stats}");
    assert_eq!(stats["documents"], 205, "{stats}");
    assert_eq!(stats["evaluations"], 227, "{stats}");
    assert_eq!(stats["jobs"], 2, "{stats}");
    assert!(stats["seconds"].as_f64().unwrap() > 0.0, "{stats}");
    assert!(stats["documentsPerSecond"].as_f64().unwrap() > 0.0, "{stats}");
    // Clean: every evaluation accepted as it is.
    let report = scan_tree(mods.path(), &tree);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let counts = report.counts();
    assert_eq!((counts.evaluations, counts.accepted), (227, 227), "{counts:?}");
    // A generated tree is replaced by the next run; another folder is refused.
    let again = bench(&[
        "scan",
        "--tree",
        tree.to_str().unwrap(),
        "--count",
        "10",
        "--policies",
        mods.path().to_str().unwrap(),
    ]);
    assert!(again.status.success(), "{}", text(&again.stderr));
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("keep.yaml"), "a: 1\n").unwrap();
    let refused = bench(&["scan", "--tree", other.to_str().unwrap(), "--count", "10"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("is not empty"),
        "{}",
        text(&refused.stderr)
    );
    assert!(other.join("keep.yaml").is_file());
}

#[test]
fn crd_heavy_tree_is_clean() {
    // The tree of which a quarter are CRDs: each CRD is checked against all the others through
    // the one shared answer to crd-kind-collision's lookup, and none collides.
    let dir = TempDir::new();
    let tree = dir.path().join("crds");
    let lookup = policies(&["crd-kind-collision"]);
    let run = bench(&[
        "scan",
        "--tree",
        tree.to_str().unwrap(),
        "--count",
        "40",
        "--crd-every",
        "4",
        "--policies",
        lookup.path().to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let report = scan_tree(lookup.path(), &tree);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let checked: Vec<_> = report.evaluations.iter().filter(|e| e.policy == 0).collect();
    assert_eq!(checked.len(), 10);
    assert!(checked.iter().all(|e| e.verdict == Verdict::Accepted), "{checked:?}");
    assert_eq!(report.counts().rejected, 0);
    assert_eq!(report.counts().warned, 0);
}
