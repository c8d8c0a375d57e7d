//! `syncguard annotate` and `syncguard inspect`: Kubewarden metadata in and out of a module.

use crate::engine::{Capabilities, Engine, Limits, read_module};
use crate::metadata::{self, Metadata};
use crate::registry::{self, PolicyRef, Pulled, Registry, RegistryArgs};
use anyhow::{Context, Result, anyhow, bail};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `syncguard annotate`, the same as `kwctl annotate`'s.
#[derive(clap::Args)]
pub struct AnnotateArgs {
    /// metadata.yml of the policy.
    #[arg(short = 'm', long)]
    metadata_path: PathBuf,
    /// README to embed as the `io.kubewarden.policy.usage` annotation.
    #[arg(short = 'u', long)]
    usage_path: Option<PathBuf>,
    /// Where to write the annotated module.
    #[arg(short = 'o', long)]
    output_path: PathBuf,
    /// The module to annotate.
    wasm_path: PathBuf,
}

/// Arguments of `syncguard inspect`.
#[derive(clap::Args)]
pub struct InspectArgs {
    /// `human` or `json` (the embedded metadata, the same for a file and a registry reference).
    #[arg(short = 'o', long, default_value = "human")]
    output: String,
    /// The annotated module: a file, or `registry://HOST/PATH:TAG`.
    policy: String,
    #[command(flatten)]
    registry: RegistryArgs,
}

/// Annotates a module: validated metadata, protocol version asked from the module, usage.
pub fn annotate(args: AnnotateArgs) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.metadata_path)
        .with_context(|| format!("cannot read {}", args.metadata_path.display()))?;
    let mut metadata = Metadata::from_yaml(&text).map_err(|e| anyhow!("{}: {e}", args.metadata_path.display()))?;
    let wasm = read_module(&args.wasm_path)?;
    metadata.protocol_version = Some(protocol_version(&wasm)?);
    if let Some(usage) = &args.usage_path {
        let readme = std::fs::read_to_string(usage).with_context(|| format!("cannot read {}", usage.display()))?;
        metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(metadata::USAGE_ANNOTATION.to_string(), readme);
    }
    let json = serde_json::to_vec(&metadata)?;
    let annotated = metadata::with_custom_section(&wasm, metadata::SECTION, &json)?;
    std::fs::write(&args.output_path, annotated)
        .with_context(|| format!("cannot write {}", args.output_path.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// Asks the module for its waPC protocol version; only `v1` is accepted.
fn protocol_version(wasm: &[u8]) -> Result<String> {
    let engine = Engine::new(Limits::default())?;
    let module = engine.compile(wasm)?;
    let instance = module.instantiate(Capabilities::default())?;
    let answer = instance
        .call("protocol_version", &[])
        .map_err(|e| anyhow!("the module did not answer protocol_version: {e}"))?;
    let version: String = serde_json::from_slice(&answer)
        .map_err(|e| anyhow!("the module's protocol_version answer is not a JSON string: {e}"))?;
    if version != "v1" {
        bail!("the module speaks protocol {version:?}; Kubewarden needs \"v1\"");
    }
    Ok(version)
}

/// Prints the metadata embedded in a module, read from a file or pulled from a registry.
pub fn inspect(args: InspectArgs) -> Result<ExitCode> {
    if !["human", "json"].contains(&args.output.as_str()) {
        bail!("--output must be `human` or `json`, not `{}`", args.output);
    }
    let (wasm, artifact) = if args.policy.starts_with(registry::SCHEME) {
        let policy = PolicyRef::parse(&args.policy)?;
        let pulled = Registry::new(&args.registry)?.pull(&policy)?;
        let artifact = artifact_summary(&policy, &pulled);
        (pulled.wasm, Some(artifact))
    } else {
        (read_module(Path::new(&args.policy))?, None)
    };
    let Some(metadata) = Metadata::from_wasm(&wasm)? else {
        bail!(
            "{} has no {} section: annotate it first",
            args.policy,
            metadata::SECTION
        );
    };
    if args.output == "json" {
        crate::print_out(&format!("{}\n", serde_json::to_string_pretty(&metadata)?));
    } else {
        crate::print_out(&human(&metadata));
        if let Some(artifact) = artifact {
            crate::print_out(&artifact.to_string());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The OCI side of a pulled policy, for the human output.
fn artifact_summary(policy: &PolicyRef, pulled: &Pulled) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let manifest = &pulled.manifest;
    let _ = writeln!(out, "\nOCI artifact");
    let _ = writeln!(out, "reference:          {}", policy.immutable(&pulled.digest));
    let _ = match &manifest.media_type {
        Some(media_type) => writeln!(
            out,
            "manifest:           {media_type}, schemaVersion {}",
            manifest.schema_version
        ),
        None => writeln!(out, "manifest:           schemaVersion {}", manifest.schema_version),
    };
    let _ = writeln!(
        out,
        "config:             {} ({} bytes)",
        manifest.config.media_type, manifest.config.size
    );
    for layer in &manifest.layers {
        let _ = writeln!(
            out,
            "layer:              {} ({} bytes, {})",
            layer.media_type, layer.size, layer.digest
        );
    }
    if let Some(annotations) = &manifest.annotations {
        let _ = writeln!(out, "\nManifest annotations");
        for (key, value) in annotations {
            let _ = writeln!(out, "{key}: {value}");
        }
    }
    out
}

fn human(metadata: &Metadata) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let annotation = |key: &str| metadata.annotation(key).unwrap_or("-").to_string();
    let _ = writeln!(out, "Details");
    let _ = writeln!(out, "title:              {}", annotation("io.kubewarden.policy.title"));
    let _ = writeln!(
        out,
        "version:            {}",
        annotation("io.kubewarden.policy.version")
    );
    let _ = writeln!(
        out,
        "description:        {}",
        annotation("io.kubewarden.policy.description")
    );
    let _ = writeln!(out, "source:             {}", annotation("io.kubewarden.policy.source"));
    let _ = writeln!(
        out,
        "license:            {}",
        annotation("io.kubewarden.policy.license")
    );
    let _ = writeln!(
        out,
        "protocol version:   {}",
        metadata.protocol_version.as_deref().unwrap_or("-")
    );
    let _ = writeln!(out, "execution mode:     {}", metadata.execution_mode);
    let _ = writeln!(out, "mutating:           {}", metadata.mutating);
    let _ = writeln!(out, "background audit:   {}", metadata.background_audit);
    let resources: Vec<String> = metadata
        .context_aware_resources
        .iter()
        .map(|r| format!("{} {}", r.api_version, r.kind))
        .collect();
    let _ = writeln!(
        out,
        "context aware:      {}",
        if resources.is_empty() {
            "no".to_string()
        } else {
            resources.join(", ")
        }
    );
    let _ = writeln!(out, "\nRules");
    let _ = writeln!(
        out,
        "{}",
        serde_yaml_ng::to_string(&metadata.rules).unwrap_or_default().trim_end()
    );
    if let Some(annotations) = &metadata.annotations {
        let _ = writeln!(out, "\nAnnotations");
        for (key, value) in annotations {
            if key != metadata::USAGE_ANNOTATION {
                let _ = writeln!(out, "{key}: {value}");
            }
        }
        if let Some(usage) = annotations.get(metadata::USAGE_ANNOTATION) {
            let _ = writeln!(out, "\nUsage\n{usage}");
        }
    }
    out
}
