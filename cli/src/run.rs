//! `syncguard run` (one request through a module, like `kwctl run`) and `syncguard call` (a
//! payload sent verbatim to one waPC operation).

use crate::{engine, evaluate};
use anyhow::{Context, Result, anyhow, bail};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `syncguard call`.
#[derive(clap::Args)]
pub struct CallArgs {
    /// The waPC operation: `validate`, `validate_settings`, `protocol_version`, or `report` (the
    /// structured report syncguard's modules export beside `validate`).
    #[arg(long, default_value = "validate")]
    operation: String,
    /// Files whose bytes are sent as payloads (any bytes, not only JSON), each to a fresh
    /// instance; one answer line per file, in order.
    #[arg(long, required = true)]
    payload_path: Vec<PathBuf>,
    /// Evaluation time limit in seconds.
    #[arg(long, default_value_t = 2.0)]
    timeout_seconds: f64,
    /// Memory cap of the module in MiB.
    #[arg(long, default_value_t = 256)]
    max_memory_mib: usize,
    /// The policy module (.wasm).
    policy: PathBuf,
}

/// Arguments of `syncguard run`, the same as `kwctl run`'s.
#[derive(clap::Args)]
pub struct RunArgs {
    /// AdmissionRequest or AdmissionReview JSON file.
    #[arg(short = 'r', long)]
    request_path: PathBuf,
    /// Settings as a JSON string.
    #[arg(short = 's', long, conflicts_with = "settings_path")]
    settings_json: Option<String>,
    /// Settings file, YAML or JSON.
    #[arg(long)]
    settings_path: Option<PathBuf>,
    /// Allow the Kubernetes lookups the module's metadata declares in contextAwareResources.
    #[arg(long)]
    allow_context_aware: bool,
    /// kwctl recording/replay file answering the policy's Kubernetes lookups.
    #[arg(long)]
    replay_host_capabilities_interactions: Option<PathBuf>,
    /// Also allow this lookup, `<apiVersion>/<kind>` (`cert-manager.io/v1/Certificate`), as a
    /// deployment's `contextAwareResources` grants one its metadata does not declare (what kwctl
    /// reads from a ClusterAdmissionPolicy file); with --allow-context-aware; repeatable.
    #[arg(long, value_name = "APIVERSION/KIND")]
    context_aware_resource: Vec<String>,
    /// Evaluation time limit in seconds (policy-server's default is 2).
    #[arg(long, default_value_t = 2.0)]
    timeout_seconds: f64,
    /// Memory cap of the module in MiB.
    #[arg(long, default_value_t = 256)]
    max_memory_mib: usize,
    /// The policy module (.wasm).
    policy: PathBuf,
}

/// Reads settings from `--settings-json` or `--settings-path`; `{}` when neither is given.
fn load_settings(json: Option<&str>, path: Option<&Path>) -> Result<serde_json::Value> {
    if let Some(json) = json {
        return serde_json::from_str(json).map_err(|e| anyhow!("--settings-json is not valid JSON: {e}"));
    }
    let Some(path) = path else {
        return Ok(serde_json::json!({}));
    };
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read settings file {}", path.display()))?;
    let value: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text)
        .map_err(|e| anyhow!("settings file {} is not YAML or JSON: {e}", path.display()))?;
    let value = serde_json::to_value(value).map_err(|e| anyhow!("settings file {}: {e}", path.display()))?;
    Ok(if value.is_null() { serde_json::json!({}) } else { value })
}

/// The engine limits from the command line.
fn limits(timeout_seconds: f64, max_memory_mib: usize) -> Result<engine::Limits> {
    if !(timeout_seconds > 0.0 && timeout_seconds.is_finite()) {
        bail!("--timeout-seconds must be a positive number");
    }
    Ok(engine::Limits {
        timeout: Duration::from_secs_f64(timeout_seconds),
        max_memory: max_memory_mib.saturating_mul(1024 * 1024),
    })
}

/// `syncguard call`: prints the guest's answer to each payload on its own line, or
/// `ERROR: <why>` when the guest trapped, timed out or returned an error; exits 1 if any did.
pub fn call(args: CallArgs) -> Result<ExitCode> {
    use std::io::Write as _;
    let engine = engine::Engine::new(limits(args.timeout_seconds, args.max_memory_mib)?)?;
    let module = engine.compile(&engine::read_module(&args.policy)?)?;
    let mut stdout = std::io::stdout().lock();
    let mut failed = false;
    for path in &args.payload_path {
        let payload = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        let instance = module.instantiate(engine::Capabilities::default())?;
        match instance.call(&args.operation, &payload) {
            Ok(answer) => stdout.write_all(&answer)?,
            Err(e) => {
                failed = true;
                write!(stdout, "ERROR: {}", e.replace('\n', " "))?;
            }
        }
        stdout.write_all(b"\n")?;
    }
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

pub fn run(args: RunArgs) -> Result<ExitCode> {
    let settings = load_settings(args.settings_json.as_deref(), args.settings_path.as_deref())?;
    let request_text = std::fs::read_to_string(&args.request_path)
        .with_context(|| format!("cannot read request {}", args.request_path.display()))?;
    let request = evaluate::read_request(&request_text)?;
    let replay = match &args.replay_host_capabilities_interactions {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("cannot read replay file {}", path.display()))?;
            Some(Arc::new(
                syncguard_scan::replay::Replay::parse(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?,
            ))
        }
        None => None,
    };
    let engine = engine::Engine::new(limits(args.timeout_seconds, args.max_memory_mib)?)?;
    let module = engine.compile(&engine::read_module(&args.policy)?)?;
    let instance = module.instantiate(engine::Capabilities {
        allow_context_aware: args.allow_context_aware,
        granted: args
            .context_aware_resource
            .iter()
            .map(|resource| {
                resource
                    .rsplit_once('/')
                    .filter(|(api_version, kind)| !api_version.is_empty() && !kind.is_empty())
                    .map(|(api_version, kind)| (api_version.to_string(), kind.to_string()))
                    .ok_or_else(|| anyhow!("--context-aware-resource {resource}: expected <apiVersion>/<kind>"))
            })
            .collect::<Result<_>>()?,
        replay,
        lookups: None,
    })?;
    if let Err(e) = evaluate::validate_settings(&instance, &settings) {
        eprintln!("Error: {e}");
        return Ok(ExitCode::FAILURE);
    }
    let response = evaluate::validate(&instance, module.metadata.as_ref(), &request, &settings);
    crate::print_out(&format!("{}\n", serde_json::to_string(&response)?));
    Ok(ExitCode::SUCCESS)
}
