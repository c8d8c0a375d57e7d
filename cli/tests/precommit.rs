//! The pre-commit hook of this repository (`.pre-commit-hooks.yaml`) as a user runs it: the real
//! `pre-commit` (from PyPI; `make setup` installs it) in a temporary git repository whose
//! `.pre-commit-config.yaml` names a hook repository holding this checkout's
//! `.pre-commit-hooks.yaml`, as the README shows, with the `syncguard` under test first on the
//! `PATH` (it must embed the policy modules: `make build` first). No network: the hook is
//! `language: system`, and pre-commit clones the hook repository from its local path.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// How to run pre-commit: `pre-commit` when it is on the PATH, else `python3 -m pre_commit`
/// (pyenv's shims may lack the command).
fn pre_commit() -> Vec<String> {
    let works = |program: &str, args: &[&str]| {
        Command::new(program)
            .args(args)
            .arg("--version")
            .output()
            .is_ok_and(|out| out.status.success())
    };
    if works("pre-commit", &[]) {
        vec!["pre-commit".to_string()]
    } else if works("python3", &["-m", "pre_commit"]) {
        vec!["python3".into(), "-m".into(), "pre_commit".into()]
    } else {
        panic!("pre-commit is not installed: run `make setup` (tools/setup.sh) or `python3 -m pip install pre-commit`")
    }
}

/// A temporary repository's world: the hook repository, the user's repository, pre-commit's
/// cache, all under one temporary folder.
struct World {
    dir: common::TempDir,
    path: std::ffi::OsString,
}

impl World {
    fn new() -> World {
        let dir = common::TempDir::new("pre-commit");
        let bin = Path::new(env!("CARGO_BIN_EXE_syncguard"))
            .parent()
            .expect("the binary is in a folder")
            .to_path_buf();
        let mut paths = vec![bin];
        paths.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
        let path = std::env::join_paths(paths).expect("a PATH");
        World { dir, path }
    }

    fn hooks(&self) -> PathBuf {
        self.dir.path().join("hooks")
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    /// `program args...` in `cwd` with this world's PATH and pre-commit cache.
    fn run(&self, cwd: &Path, program: &[String], args: &[&str]) -> Output {
        Command::new(&program[0])
            .args(&program[1..])
            .args(args)
            .current_dir(cwd)
            .env("PATH", &self.path)
            .env("PRE_COMMIT_HOME", self.dir.path().join("cache"))
            .env("PRE_COMMIT_COLOR", "never")
            .env("GIT_AUTHOR_NAME", "syncguard-test")
            .env("GIT_AUTHOR_EMAIL", "test@syncguard.invalid")
            .env("GIT_COMMITTER_NAME", "syncguard-test")
            .env("GIT_COMMITTER_EMAIL", "test@syncguard.invalid")
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE")
            .output()
            .expect("the command runs")
    }

    /// `git args...` in `cwd`, which must succeed; its stdout.
    fn git(&self, cwd: &Path, args: &[&str]) -> String {
        let mut all = vec!["-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"];
        all.extend_from_slice(args);
        let out = self.run(cwd, &["git".to_string()], &all);
        assert!(out.status.success(), "git {args:?}: {}", both(&out));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

/// stdout and stderr together.
fn both(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A ClusterIssuer with Helm release metadata but no `app.kubernetes.io/managed-by`, which
/// ownership-markers rejects at default settings (`cli/tests/data/scan/findings/rendered.yaml`).
const REJECTED: &str = "# Source: cert-manager-issuers/templates/clusterissuer.yaml
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata:
  name: letsencrypt-prod
  annotations:
    meta.helm.sh/release-name: cert-manager-issuers
    meta.helm.sh/release-namespace: cert-manager
spec:
  acme:
    email: platform@example.com
    server: https://acme-v02.api.letsencrypt.org/directory
    privateKeySecretRef:
      name: letsencrypt-prod
";

#[test]
fn the_hook_passes_clean_commits_and_stops_rejected_manifests() {
    let pre_commit = pre_commit();
    let world = World::new();
    // The hook repository: this checkout's .pre-commit-hooks.yaml, committed.
    let hooks = world.hooks();
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::copy(
        common::root().join(".pre-commit-hooks.yaml"),
        hooks.join(".pre-commit-hooks.yaml"),
    )
    .unwrap();
    world.git(&hooks, &["init", "-q"]);
    world.git(&hooks, &["add", "."]);
    world.git(&hooks, &["commit", "-q", "-m", "hooks"]);
    let rev = world.git(&hooks, &["rev-parse", "HEAD"]);

    // The user's repository: its pre-commit configuration as the README shows it, and clean
    // manifests; the configuration is itself a staged YAML file the hook is given.
    let project = world.project();
    std::fs::create_dir_all(project.join("deploy")).unwrap();
    std::fs::write(
        project.join(".pre-commit-config.yaml"),
        format!(
            "repos:\n  - repo: {}\n    rev: {rev}\n    hooks:\n      - id: syncguard-scan\n",
            hooks.display()
        ),
    )
    .unwrap();
    std::fs::copy(
        common::root().join("cli/tests/data/scan/clean/app.yaml"),
        project.join("deploy/app.yaml"),
    )
    .unwrap();
    world.git(&project, &["init", "-q"]);
    let install = world.run(&project, &pre_commit, &["install"]);
    assert!(install.status.success(), "{}", both(&install));
    world.git(&project, &["add", "."]);
    let commit = world.run(
        &project,
        &["git".to_string()],
        &["-c", "commit.gpgsign=false", "commit", "-m", "clean manifests"],
    );
    let output = both(&commit);
    assert!(commit.status.success(), "{output}");
    assert!(
        output
            .lines()
            .any(|l| l.starts_with("syncguard scan") && l.ends_with("Passed")),
        "{output}"
    );
    // What the hook printed: the configuration skipped, the manifests judged.
    let run = world.run(
        &project,
        &pre_commit,
        &[
            "run",
            "--verbose",
            "--files",
            ".pre-commit-config.yaml",
            "deploy/app.yaml",
        ],
    );
    let output = both(&run);
    assert_eq!(run.status.code(), Some(0), "{output}");
    assert!(
        output.contains("2 files, 3 documents") && output.contains("1 file skipped: not Kubernetes objects"),
        "{output}"
    );

    // A staged manifest that a policy rejects fails the hook with exit code 1, and the commit
    // does not happen.
    std::fs::write(project.join("deploy/issuer.yaml"), REJECTED).unwrap();
    world.git(&project, &["add", "deploy/issuer.yaml"]);
    let commit = world.run(
        &project,
        &["git".to_string()],
        &["-c", "commit.gpgsign=false", "commit", "-m", "an issuer"],
    );
    let output = both(&commit);
    assert!(!commit.status.success(), "{output}");
    assert!(output.contains("- hook id: syncguard-scan"), "{output}");
    assert!(output.contains("- exit code: 1"), "{output}");
    assert!(
        output.contains(
            "deploy/issuer.yaml:4:1: ownership-markers/helmCompleteness: rejected: ClusterIssuer letsencrypt-prod"
        ),
        "{output}"
    );
    assert_eq!(world.git(&project, &["rev-list", "--count", "HEAD"]), "1");
    let run = world.run(&project, &pre_commit, &["run"]);
    assert_eq!(run.status.code(), Some(1), "{}", both(&run));
}
