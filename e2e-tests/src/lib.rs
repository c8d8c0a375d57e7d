//! The end-to-end harness: evaluates every policy's `test_data/cases.yml` through a real engine
//! command line, `syncguard run` by default or kwctl when `KWCTL` names one (or `kwctl` is on
//! PATH and `SYNCGUARD_E2E_ENGINE=kwctl`). Both speak kwctl's `run` contract, so the same
//! expectations hold for both.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use syncguard_scan::evaluate::AdmissionResponse;
use syncguard_testkit::cases::{self as testing, Case};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("e2e-tests sits in the repository")
        .to_path_buf()
}

/// Names of the single-check policies: the checks of the registry (`syncguard::registry`),
/// each with its folder under `policies/`, sorted.
pub fn policies() -> Vec<String> {
    let mut names: Vec<String> = syncguard::registry::CHECKS
        .iter()
        .map(|entry| entry.name.to_string())
        .collect();
    names.sort();
    names
}

/// The all-in-one's section of the settings of check `policy` (`crdSchemaFields` for
/// `crd-schema-fields`).
pub fn section_key(policy: &str) -> &'static str {
    syncguard::registry::Entry::named(policy)
        .unwrap_or_else(|| panic!("{policy} is not a check of the registry"))
        .settings_key
}

/// A file removed when dropped.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Why an engine gave no response for a case.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The policy refused its settings (the engine printed `Provided settings are not valid`);
    /// holds what the engine printed.
    #[error("settings refused: {0}")]
    SettingsRefused(String),
    /// Anything else: the engine could not start, failed, or printed no response.
    #[error("{0}")]
    Failed(String),
}

/// An engine command line that follows kwctl's `run` contract.
#[derive(Debug, Clone)]
pub struct Engine {
    /// The program.
    pub program: PathBuf,
    /// `kwctl` or `syncguard`, for messages.
    pub name: String,
}

impl Engine {
    /// The engine the suite runs against: `$KWCTL` if set, else the built `syncguard`.
    pub fn from_env() -> Engine {
        match std::env::var_os("KWCTL").filter(|v| !v.is_empty()) {
            Some(kwctl) => Engine {
                program: PathBuf::from(kwctl),
                name: "kwctl".into(),
            },
            None => Engine::syncguard(),
        }
    }

    /// The `syncguard` binary built by `make build` (host profile).
    pub fn syncguard() -> Engine {
        let program = std::env::var_os("SYNCGUARD_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| root().join("target/host/syncguard"));
        assert!(
            program.is_file(),
            "{} is missing: run `make build` first (the README's test command does)",
            program.display()
        );
        Engine {
            program,
            name: "syncguard".into(),
        }
    }

    /// Evaluates one case of `policy` with the module at `module`.
    pub fn run_case(&self, policy: &str, module: &Path, case: &Case) -> Result<AdmissionResponse, RunError> {
        let settings = case.settings.clone().unwrap_or(Value::Object(Default::default()));
        let request = testing::request_path(policy, case).unwrap_or_default();
        parse_response(&self.run_raw(policy, module, case, &settings, &request)?).map_err(RunError::Failed)
    }

    /// Evaluates a case with the given settings and request file; returns the response line
    /// exactly as printed, or why there is none ([`RunError::SettingsRefused`] for refused
    /// settings).
    pub fn run_raw(
        &self,
        policy: &str,
        module: &Path,
        case: &Case,
        settings: &Value,
        request: &Path,
    ) -> Result<String, RunError> {
        let dir = testing::test_data(policy);
        let mut command = Command::new(&self.program);
        command.arg("run").arg("--settings-json").arg(settings.to_string());
        let request =
            if case.request.is_some() || case.upgrade.is_some() || case.create.is_some() || case.manifest.is_some() {
                request.to_path_buf()
            } else {
                root().join("e2e-tests/data/empty-request.json")
            };
        command.arg("--request-path").arg(&request);
        if let Some(replay) = &case.replay {
            command.arg("--allow-context-aware");
            command
                .arg("--replay-host-capabilities-interactions")
                .arg(dir.join(replay));
        }
        // Lookups the case's deployment grants beyond the metadata's: kwctl reads them from a
        // ClusterAdmissionPolicy file (with the module and the settings), `syncguard run` from
        // its flag.
        let _policy_file;
        if case.grant.is_empty() {
            command.arg(module);
        } else if self.name == "kwctl" {
            let path = std::env::temp_dir().join(format!(
                "syncguard-e2e-{}-{policy}-{}-{}.yaml",
                std::process::id(),
                case.name,
                module.file_name().and_then(|n| n.to_str()).unwrap_or_default()
            ));
            let resources: Vec<Value> = testing::granted(policy, &case.grant)
                .into_iter()
                .map(|(api_version, kind)| serde_json::json!({"apiVersion": api_version, "kind": kind}))
                .collect();
            let manifest = serde_json::json!({
                "apiVersion": "policies.kubewarden.io/v1",
                "kind": "ClusterAdmissionPolicy",
                "metadata": {"name": policy},
                "spec": {
                    "module": format!("file://{}", module.display()),
                    "settings": settings,
                    "rules": [],
                    "mutating": false,
                    "contextAwareResources": resources,
                },
            });
            std::fs::write(&path, manifest.to_string()).map_err(|e| RunError::Failed(e.to_string()))?;
            command.arg(&path);
            _policy_file = TempFile(path);
        } else {
            for grant in &case.grant {
                command
                    .arg("--context-aware-resource")
                    .arg(format!("{}/{}", grant.api_version, grant.kind));
            }
            command.arg(module);
        }
        let output = command
            .output()
            .map_err(|e| RunError::Failed(format!("cannot start {}: {e}", self.program.display())))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            // The engine is another process: its words are all there is to go by.
            if stderr.contains("Provided settings are not valid") {
                return Err(RunError::SettingsRefused(stderr.trim().to_string()));
            }
            return Err(RunError::Failed(format!(
                "{} exited with {}: {}",
                self.name,
                output.status,
                stderr.trim()
            )));
        }
        stdout
            .lines()
            .rev()
            .find(|l| l.trim_start().starts_with('{'))
            .map(str::to_string)
            .ok_or_else(|| RunError::Failed(format!("{} printed no response: {stdout}", self.name)))
    }
}

/// Runs `work` over `items` on rayon's global pool (as many threads as the machine has cores),
/// the results in the order of `items`.
pub fn parallel_map<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    use rayon::prelude::*;
    items.par_iter().with_max_len(1).map(work).collect()
}

/// Reads an AdmissionResponse as kwctl prints it.
pub fn parse_response(line: &str) -> Result<AdmissionResponse, String> {
    serde_json::from_str(line).map_err(|e| format!("response is not an AdmissionResponse ({e}): {line}"))
}

/// The annotated module of a policy, as `make build` leaves it.
pub fn annotated_module(policy: &str) -> PathBuf {
    let path = root().join("policies").join(policy).join("annotated-policy.wasm");
    assert!(path.is_file(), "{} is missing: run `make build` first", path.display());
    path
}

/// The annotated all-in-one module, as `make build` leaves it.
pub fn all_in_one_module() -> PathBuf {
    annotated_module(syncguard::registry::ALL_IN_ONE)
}

/// The bare (not annotated) module of a policy, as `make build` leaves it.
pub fn bare_module(policy: &str) -> PathBuf {
    let path = root().join("policies").join(policy).join("policy.wasm");
    assert!(path.is_file(), "{} is missing: run `make build` first", path.display());
    path
}

/// Checks one case's engine result against its expectation.
pub fn check_case(engine: &Engine, policy: &str, module: &Path, case: &Case) -> Result<AdmissionResponse, String> {
    let result = engine.run_case(policy, module, case);
    match (&case.expect.settings_invalid, result) {
        (Some(expected), Err(refused @ RunError::SettingsRefused(_))) => {
            let message = refused.to_string();
            if message.contains(expected.as_str()) {
                Ok(AdmissionResponse::default())
            } else {
                Err(format!("{message}; expected it to contain {expected:?}"))
            }
        }
        (Some(_), Ok(_)) => Err("settings were accepted, expected them refused".into()),
        (_, Err(e)) => Err(e.to_string()),
        (None, Ok(outcome)) => testing::compare(&case.expect, &outcome).map(|()| outcome),
    }
}

/// A scratch directory under the system's temp dir, removed when dropped.
pub struct Scratch(PathBuf);

impl Scratch {
    /// Creates `syncguard-<name>-<pid>`.
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("syncguard-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch(dir)
    }

    /// Writes `bytes` to the file `name` in the directory and returns its path.
    pub fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).expect("write scratch file");
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Sends each payload file to `operation` of `module`, each in a fresh instance, with
/// `syncguard call`; one answer per payload: the guest's bytes, or `Err` when the guest trapped
/// or failed.
pub fn call_module(module: &Path, operation: &str, payloads: &[PathBuf]) -> Vec<Result<Vec<u8>, String>> {
    let mut command = Command::new(&Engine::syncguard().program);
    command.args(["call", "--operation", operation]);
    for payload in payloads {
        command.arg("--payload-path").arg(payload);
    }
    let output = command.arg(module).output().expect("start syncguard call");
    let answers: Vec<Result<Vec<u8>, String>> = output
        .stdout
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| match line.strip_prefix(b"ERROR: ") {
            Some(error) => Err(String::from_utf8_lossy(error).into_owned()),
            None => Ok(line.to_vec()),
        })
        .collect();
    assert_eq!(
        answers.len(),
        payloads.len(),
        "syncguard call answered {} of {} payloads: {}",
        answers.len(),
        payloads.len(),
        String::from_utf8_lossy(&output.stderr)
    );
    answers
}
