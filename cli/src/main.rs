//! `syncguard`: runs syncguard's policy modules the way Kubewarden does, on a laptop or in CI.

mod annotate;
mod artifacthub;
mod bench;
mod cache;
mod engine;
mod evaluate;
mod metadata;
mod registry;
mod scaffold;
mod scan;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Runs syncguard's Kubewarden policies (or any waPC Kubewarden policy) locally.
#[derive(Parser)]
#[command(name = "syncguard", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Evaluates one request with a policy module, like `kwctl run`.
    Run(RunArgs),
    /// Embeds metadata.yml (and a README as usage) into a module, like `kwctl annotate`.
    Annotate(annotate::AnnotateArgs),
    /// Shows the metadata embedded in a module file or a policy in a registry, like `kwctl inspect`.
    Inspect(annotate::InspectArgs),
    /// Pushes an annotated module to an OCI registry as kwctl does; prints the `@sha256:` reference.
    Push(registry::PushArgs),
    /// Pulls a policy module from an OCI registry.
    Pull(registry::PullArgs),
    /// Writes a policy's artifacthub-pkg.yml from its metadata.yml, README.md and questions-ui.yml.
    Artifacthub(artifacthub::ArtifactHubArgs),
    /// Writes Kubernetes resources for a policy, like `kwctl scaffold`.
    #[command(subcommand)]
    Scaffold(scaffold::ScaffoldCommand),
    /// Sends a payload verbatim to one waPC operation of a module and prints the raw answer
    /// (for testing a policy on input the API server would never send).
    Call(CallArgs),
    /// Measures module sizes, cold start and warm validate times beside the floor module.
    Bench(bench::BenchArgs),
    /// Checks manifests (files, directories, `-` for stdin) with every matching policy.
    Scan(scan::ScanArgs),
}

/// Arguments of `syncguard call`.
#[derive(clap::Args)]
struct CallArgs {
    /// The waPC operation: `validate`, `validate_settings` or `protocol_version`.
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
struct RunArgs {
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
    /// Evaluation time limit in seconds (policy-server's default is 2).
    #[arg(long, default_value_t = 2.0)]
    timeout_seconds: f64,
    /// Memory cap of the module in MiB.
    #[arg(long, default_value_t = 256)]
    max_memory_mib: usize,
    /// The policy module (.wasm).
    policy: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run(args),
        Command::Annotate(args) => annotate::annotate(args),
        Command::Inspect(args) => annotate::inspect(args),
        Command::Call(args) => call(args),
        Command::Bench(args) => bench::bench(args),
        Command::Push(args) => registry::push(args),
        Command::Pull(args) => registry::pull(args),
        Command::Artifacthub(args) => artifacthub::artifacthub(args),
        Command::Scaffold(command) => scaffold::scaffold(command),
        Command::Scan(args) => return scan::scan(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("Error: {e:#}");
            ExitCode::FAILURE
        }
    }
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

/// Writes to stdout; a closed pipe (`syncguard ... | head`) ends the output quietly.
pub fn print_out(text: &str) {
    use std::io::Write as _;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
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
fn call(args: CallArgs) -> Result<ExitCode> {
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

fn run(args: RunArgs) -> Result<ExitCode> {
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
        replay,
        lookups: None,
    })?;
    if let Err(e) = evaluate::validate_settings(&instance, &settings) {
        eprintln!("Error: {e}");
        return Ok(ExitCode::FAILURE);
    }
    let response = evaluate::validate(&instance, module.metadata.as_ref(), &request, &settings);
    print_out(&format!("{}\n", serde_json::to_string(&response)?));
    Ok(ExitCode::SUCCESS)
}
