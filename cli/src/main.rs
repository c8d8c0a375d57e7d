//! `syncguard`: runs syncguard's policy modules the way Kubewarden does, on a laptop or in CI.

mod annotate;
mod artifacthub;
mod engine;
mod evaluate;
mod metadata;
mod registry;
mod scaffold;

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
        Command::Push(args) => registry::push(args),
        Command::Pull(args) => registry::pull(args),
        Command::Artifacthub(args) => artifacthub::artifacthub(args),
        Command::Scaffold(command) => scaffold::scaffold(command),
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
                syncguard::replay::Replay::parse(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?,
            ))
        }
        None => None,
    };
    if !(args.timeout_seconds > 0.0 && args.timeout_seconds.is_finite()) {
        bail!("--timeout-seconds must be a positive number");
    }
    let engine = engine::Engine::new(engine::Limits {
        timeout: Duration::from_secs_f64(args.timeout_seconds),
        max_memory: args.max_memory_mib.saturating_mul(1024 * 1024),
    })?;
    let module = engine.compile(&engine::read_module(&args.policy)?)?;
    let instance = module.instantiate(engine::Capabilities {
        allow_context_aware: args.allow_context_aware,
        replay,
    })?;
    if let Err(e) = evaluate::validate_settings(&instance, &settings) {
        eprintln!("Error: {e}");
        return Ok(ExitCode::FAILURE);
    }
    let response = evaluate::validate(&instance, module.metadata.as_ref(), &request, &settings);
    println!("{}", serde_json::to_string(&response)?);
    Ok(ExitCode::SUCCESS)
}
