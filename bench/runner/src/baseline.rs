//! The single-check modules of the baseline commit, built by the bench itself so that their
//! figures are measured in the same run, on the same machine, as today's.
//!
//! The commit's tree is written out with `git archive` under `target/bench-<commit>/src` (the
//! repository's history must hold the commit), each check that has a policy folder there is
//! built as the Makefile of that commit builds it (`cargo build --locked --release --target
//! wasm32-wasip1 -p <package>`, into `target/bench-<commit>/target`), passed through the same
//! wasm-opt pass as today's modules and annotated with that commit's metadata.yml and README.md
//! by today's `syncguard annotate` (as that Makefile annotated them: the engine answers a
//! module's context-aware lookups only for the resources its metadata declares), into
//! `target/bench-<commit>/modules/<policy>.wasm`.
//! All of it is kept: a later run that finds the modules built from the same commit with the
//! same wasm-opt command builds nothing.

use anyhow::{Context, Result, anyhow, bail};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The commit whose single-check modules today's are compared with.
pub const COMMIT: &str = "d811579";

/// The wasm target the policies are built for.
const TARGET: &str = "wasm32-wasip1";

/// Written into the source folder once the tree is complete (holds the full commit id).
const SOURCE_MARKER: &str = ".syncguard-bench-source";

/// Written into the modules folder once every module is built (the commit, the wasm-opt
/// command and the policies).
const STAMP: &str = "stamp";

/// What the baseline commit offers for each check.
pub struct Baseline {
    /// The module of each check the commit had, by policy name.
    pub modules: BTreeMap<String, PathBuf>,
    /// The names of each policy's cases at the commit (its `test_data/cases.yml`).
    pub cases: BTreeMap<String, BTreeSet<String>>,
}

/// Builds (or finds, already built) the modules of `policies` at [`COMMIT`] under `dir`;
/// `wasm_opt` is the size pass, a command line to which the input and `-o <output>` are added.
pub fn prepare(dir: &Path, policies: &[&str], wasm_opt: &str) -> Result<Baseline> {
    let commit = git(&["rev-parse", "--verify", &format!("{COMMIT}^{{commit}}")])
        .with_context(|| format!("commit {COMMIT} is not in this repository's history (a shallow clone?)"))?;
    let source = dir.join("src");
    if std::fs::read_to_string(source.join(SOURCE_MARKER)).ok().as_deref() != Some(commit.as_str()) {
        extract(&commit, &source)?;
    }
    let mut packages = BTreeMap::new();
    let mut cases = BTreeMap::new();
    for policy in policies {
        let folder = source.join("policies").join(policy);
        let Ok(manifest) = std::fs::read_to_string(folder.join("Cargo.toml")) else {
            continue;
        };
        let package = manifest
            .lines()
            .find_map(|line| line.strip_prefix("name = \"")?.strip_suffix('"'))
            .ok_or_else(|| anyhow!("{}: no package name", folder.join("Cargo.toml").display()))?
            .to_string();
        packages.insert(policy.to_string(), package);
        cases.insert(policy.to_string(), case_names(&folder.join("test_data/cases.yml"))?);
    }
    let modules_dir = dir.join("modules");
    let modules: BTreeMap<String, PathBuf> = packages
        .keys()
        .map(|policy| (policy.clone(), modules_dir.join(format!("{policy}.wasm"))))
        .collect();
    let stamp = format!(
        "commit {commit}\nwasm-opt {wasm_opt}\nannotated\npolicies {}\n",
        packages.keys().cloned().collect::<Vec<_>>().join(" ")
    );
    let built = std::fs::read_to_string(modules_dir.join(STAMP)).ok().as_deref() == Some(stamp.as_str())
        && modules.values().all(|path| path.is_file());
    if !built && !packages.is_empty() {
        build(dir, &source, &packages, &modules, wasm_opt)?;
        std::fs::write(modules_dir.join(STAMP), stamp)?;
    }
    Ok(Baseline { modules, cases })
}

/// Writes the tree of `commit` into `source` (replaced).
fn extract(commit: &str, source: &Path) -> Result<()> {
    eprintln!("bench: writing the tree of {COMMIT} to {}", source.display());
    if source.exists() {
        std::fs::remove_dir_all(source).with_context(|| format!("cannot replace {}", source.display()))?;
    }
    std::fs::create_dir_all(source).with_context(|| format!("cannot create {}", source.display()))?;
    let mut archive = Command::new("git")
        .args(["archive", "--format=tar", commit])
        .stdout(Stdio::piped())
        .spawn()
        .context("cannot run git archive")?;
    let tar = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(source)
        .stdin(
            archive
                .stdout
                .take()
                .ok_or_else(|| anyhow!("git archive has no output"))?,
        )
        .status()
        .context("cannot run tar")?;
    let archived = archive.wait()?;
    if !archived.success() || !tar.success() {
        bail!("cannot write the tree of {COMMIT} to {}", source.display());
    }
    std::fs::write(source.join(SOURCE_MARKER), commit)?;
    Ok(())
}

/// Builds every module of `packages` in the commit's tree, then the wasm-opt pass and the
/// annotation into `modules`.
fn build(
    dir: &Path,
    source: &Path,
    packages: &BTreeMap<String, String>,
    modules: &BTreeMap<String, PathBuf>,
    wasm_opt: &str,
) -> Result<()> {
    let target_dir = std::path::absolute(dir.join("target"))?;
    eprintln!(
        "bench: building the single-check modules of {COMMIT} ({}) in {} (once: they are kept)",
        packages.keys().cloned().collect::<Vec<_>>().join(", "),
        dir.display()
    );
    let mut cargo = Command::new("cargo");
    cargo.current_dir(source).env("CARGO_TARGET_DIR", &target_dir).args([
        "build",
        "--locked",
        "--release",
        "--target",
        TARGET,
    ]);
    for package in packages.values() {
        cargo.args(["-p", package]);
    }
    let status = cargo.status().context("cannot run cargo")?;
    if !status.success() {
        bail!("building the modules of {COMMIT} failed ({status})");
    }
    let mut words = wasm_opt.split_whitespace();
    let program = words.next().ok_or_else(|| anyhow!("--wasm-opt is empty"))?;
    let options: Vec<&str> = words.collect();
    let modules_dir = dir.join("modules");
    std::fs::create_dir_all(&modules_dir)?;
    for (policy, package) in packages {
        let built = target_dir
            .join(TARGET)
            .join("release")
            .join(format!("{}.wasm", package.replace('-', "_")));
        let optimized = modules_dir.join(format!("{policy}.policy.wasm"));
        let status = Command::new(program)
            .args(&options)
            .arg(&built)
            .arg("-o")
            .arg(&optimized)
            .status()
            .with_context(|| format!("cannot run {program}"))?;
        if !status.success() {
            bail!("{program} failed on {} ({status})", built.display());
        }
        annotate(&source.join("policies").join(policy), &optimized, &modules[policy])?;
    }
    Ok(())
}

/// `syncguard annotate -m <folder>/metadata.yml -u <folder>/README.md -o <out> <module>`.
fn annotate(folder: &Path, module: &Path, out: &Path) -> Result<()> {
    #[derive(clap::Parser)]
    struct Annotate {
        #[command(flatten)]
        args: syncguard_cli::annotate::AnnotateArgs,
    }
    let mut line = vec![
        "annotate".into(),
        "-m".into(),
        folder.join("metadata.yml").into_os_string(),
    ];
    if folder.join("README.md").is_file() {
        line.extend(["-u".into(), folder.join("README.md").into_os_string()]);
    }
    line.extend(["-o".into(), out.as_os_str().to_owned(), module.as_os_str().to_owned()]);
    let parsed = <Annotate as clap::Parser>::try_parse_from(line)?;
    syncguard_cli::annotate::annotate(parsed.args).with_context(|| {
        format!(
            "annotating {} with {}",
            module.display(),
            folder.join("metadata.yml").display()
        )
    })?;
    Ok(())
}

/// The names of the cases of a `cases.yml` (read loosely: only `cases[].name`, whatever else
/// the format of the commit held).
fn case_names(path: &Path) -> Result<BTreeSet<String>> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(BTreeSet::new());
    };
    let value: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    Ok(value["cases"]
        .as_sequence()
        .into_iter()
        .flatten()
        .filter_map(|case| case["name"].as_str().map(str::to_string))
        .collect())
}

/// Runs git with `args` and returns its output, trimmed.
fn git(args: &[&str]) -> Result<String> {
    let output = Command::new("git").args(args).output().context("cannot run git")?;
    if !output.status.success() {
        bail!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}
