//! `syncguard`: runs syncguard's policy modules the way Kubewarden does, on a laptop or in CI.
//! The commands live in the `syncguard_cli` library; this binary parses the command line.

use clap::{Parser, Subcommand};
use std::process::ExitCode;
use syncguard_cli::{annotate, artifacthub, registry, run, scaffold, scan};

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
    Run(run::RunArgs),
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
    Call(run::CallArgs),
    /// Checks manifests (files, directories, `-` for stdin) with every matching policy.
    Scan(scan::ScanArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Annotate(args) => annotate::annotate(args),
        Command::Inspect(args) => annotate::inspect(args),
        Command::Call(args) => run::call(args),
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
