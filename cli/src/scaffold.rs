//! `syncguard scaffold manifest`: a ready ClusterAdmissionPolicy (or AdmissionPolicy) for a
//! policy, shaped like `kwctl scaffold manifest` output: the same keys in the same order, the
//! rules, `mutating` and `contextAwareResources` from metadata.yml, the severity and category
//! annotations, the settings given (default `{}`).
//!
//! Two deliberate differences, both spelling out Kubewarden's own defaults so the file reads
//! completely: `backgroundAudit` is always written (kwctl leaves it out when true) and
//! `mode: protect` is written (kwctl leaves `mode` unset, which the controller reads as protect).

use crate::metadata::{ContextAwareResource, Metadata, Rule};
use anyhow::{Context, Result, anyhow, bail};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::ExitCode;

/// `syncguard scaffold ...`.
#[derive(clap::Subcommand)]
pub enum ScaffoldCommand {
    /// Writes a ClusterAdmissionPolicy or AdmissionPolicy manifest, like `kwctl scaffold manifest`.
    Manifest(ManifestArgs),
}

/// Arguments of `syncguard scaffold manifest`.
#[derive(clap::Args)]
pub struct ManifestArgs {
    /// The policy's metadata.yml.
    #[arg(short = 'm', long)]
    metadata_path: PathBuf,
    /// `ClusterAdmissionPolicy` or `AdmissionPolicy`.
    #[arg(short = 't', long = "type")]
    resource_type: String,
    /// Settings file (YAML or JSON mapping); default `{}`, every setting at its default.
    #[arg(long)]
    settings_path: Option<PathBuf>,
    /// metadata.name of the policy; default: the `io.kubewarden.policy.title` annotation.
    #[arg(long)]
    policy_title: Option<String>,
    /// Grant the Kubernetes lookups the metadata declares (`contextAwareResources`); without it
    /// they are left out, as kwctl does.
    #[arg(long)]
    allow_context_aware: bool,
    /// Where to write the manifest; default: standard output.
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
    /// The module, e.g. `registry://ghcr.io/syncguard/policies/crd-safe-upgrade:v0.1.0`; default:
    /// `registry://<io.kubewarden.policy.ociUrl>:v<io.kubewarden.policy.version>`.
    module_url: Option<String>,
}

/// A Kubewarden policy resource, in kwctl's key order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PolicyResource {
    api_version: &'static str,
    kind: String,
    metadata: ObjectMeta,
    spec: Spec,
}

/// The part of ObjectMeta kwctl writes (k8s-openapi's order: annotations before name).
#[derive(Serialize)]
struct ObjectMeta {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    annotations: BTreeMap<String, String>,
    name: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    module: String,
    settings: serde_yaml_ng::Mapping,
    rules: Vec<Rule>,
    mutating: bool,
    background_audit: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    context_aware_resources: Option<BTreeSet<ContextAwareResource>>,
    mode: &'static str,
}

/// `syncguard scaffold manifest`.
pub fn scaffold(command: ScaffoldCommand) -> Result<ExitCode> {
    let ScaffoldCommand::Manifest(args) = command;
    let text = std::fs::read_to_string(&args.metadata_path)
        .with_context(|| format!("cannot read {}", args.metadata_path.display()))?;
    let metadata = Metadata::from_yaml(&text).map_err(|e| anyhow!("{}: {e}", args.metadata_path.display()))?;
    let settings = match &args.settings_path {
        None => serde_yaml_ng::Mapping::new(),
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
            match serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&text)
                .map_err(|e| anyhow!("{} is not YAML or JSON: {e}", path.display()))?
            {
                serde_yaml_ng::Value::Mapping(mapping) => mapping,
                serde_yaml_ng::Value::Null => serde_yaml_ng::Mapping::new(),
                _ => bail!("{}: settings must be a mapping", path.display()),
            }
        }
    };
    let yaml = manifest(
        &metadata,
        &args.resource_type,
        settings,
        args.policy_title.as_deref(),
        args.allow_context_aware,
        args.module_url.as_deref(),
    )?;
    match &args.output {
        Some(path) => std::fs::write(path, yaml).with_context(|| format!("cannot write {}", path.display()))?,
        None => print!("{yaml}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// The manifest's YAML text.
pub fn manifest(
    metadata: &Metadata,
    resource_type: &str,
    settings: serde_yaml_ng::Mapping,
    policy_title: Option<&str>,
    allow_context_aware: bool,
    module_url: Option<&str>,
) -> Result<String> {
    let cluster_wide = match resource_type {
        "ClusterAdmissionPolicy" => true,
        "AdmissionPolicy" => false,
        other => bail!("--type must be ClusterAdmissionPolicy or AdmissionPolicy, not `{other}`"),
    };
    let name = match policy_title.or_else(|| metadata.annotation("io.kubewarden.policy.title")) {
        Some(name) => name.trim().to_string(),
        None => bail!("no policy name: pass --policy-title or set the `io.kubewarden.policy.title` annotation"),
    };
    if !is_dns_subdomain(&name) {
        bail!(
            "invalid policy title `{name}`: it must conform to RFC 1123 (lowercase letters, digits, `-` or `.`, starting and ending with a letter or digit)"
        );
    }
    let module = match module_url {
        Some(url) => url.to_string(),
        None => {
            let oci_url = metadata
                .annotation("io.kubewarden.policy.ociUrl")
                .ok_or_else(|| anyhow!("no module URL given and no `io.kubewarden.policy.ociUrl` annotation"))?;
            let version = metadata
                .annotation("io.kubewarden.policy.version")
                .ok_or_else(|| anyhow!("no module URL given and no `io.kubewarden.policy.version` annotation"))?;
            format!("registry://{}:v{}", oci_url.trim(), version.trim())
        }
    };
    let mut annotations = BTreeMap::new();
    for key in ["io.kubewarden.policy.severity", "io.kubewarden.policy.category"] {
        if let Some(value) = metadata.annotation(key) {
            annotations.insert(key.to_string(), value.to_string());
        }
    }
    let context_aware_resources = if !cluster_wide || metadata.context_aware_resources.is_empty() {
        None
    } else if allow_context_aware {
        Some(metadata.context_aware_resources.clone())
    } else {
        eprintln!(
            "Warning: the policy reads Kubernetes resources at evaluation time; for safety, contextAwareResources has been left empty. \
             Review them with `syncguard inspect` and pass --allow-context-aware to grant them."
        );
        None
    };
    let resource = PolicyResource {
        api_version: "policies.kubewarden.io/v1",
        kind: resource_type.to_string(),
        metadata: ObjectMeta { annotations, name },
        spec: Spec {
            module,
            settings,
            rules: metadata.rules.clone(),
            mutating: metadata.mutating,
            background_audit: metadata.background_audit,
            context_aware_resources,
            mode: "protect",
        },
    };
    Ok(serde_yaml_ng::to_string(&resource)?)
}

/// RFC 1123 subdomain, as Kubernetes requires of object names.
fn is_dns_subdomain(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata() -> Metadata {
        Metadata::from_yaml(
            r#"
rules:
- {apiGroups: [apiextensions.k8s.io], apiVersions: [v1], resources: [customresourcedefinitions], operations: [CREATE, UPDATE]}
mutating: true
backgroundAudit: true
contextAwareResources: [{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition}]
annotations:
  io.kubewarden.policy.title: crd-x
  io.kubewarden.policy.version: 0.1.0
  io.kubewarden.policy.ociUrl: ghcr.io/syncguard/policies/crd-x
  io.kubewarden.policy.severity: high
  io.kubewarden.policy.category: Resource validation
"#,
        )
        .unwrap()
    }

    #[test]
    fn kwctl_shape() {
        let yaml = manifest(
            &metadata(),
            "ClusterAdmissionPolicy",
            Default::default(),
            None,
            true,
            None,
        )
        .unwrap();
        assert_eq!(
            yaml,
            "apiVersion: policies.kubewarden.io/v1\nkind: ClusterAdmissionPolicy\nmetadata:\n  annotations:\n    \
             io.kubewarden.policy.category: Resource validation\n    io.kubewarden.policy.severity: high\n  name: crd-x\n\
             spec:\n  module: registry://ghcr.io/syncguard/policies/crd-x:v0.1.0\n  settings: {}\n  rules:\n  \
             - apiGroups:\n    - apiextensions.k8s.io\n    apiVersions:\n    - v1\n    resources:\n    - customresourcedefinitions\n    \
             operations:\n    - CREATE\n    - UPDATE\n  mutating: true\n  backgroundAudit: true\n  contextAwareResources:\n  \
             - apiVersion: apiextensions.k8s.io/v1\n    kind: CustomResourceDefinition\n  mode: protect\n"
        );
        let without = manifest(
            &metadata(),
            "ClusterAdmissionPolicy",
            Default::default(),
            None,
            false,
            None,
        )
        .unwrap();
        assert!(!without.contains("contextAwareResources"));
        let namespaced = manifest(
            &metadata(),
            "AdmissionPolicy",
            Default::default(),
            Some("x"),
            true,
            Some("registry://h/x:v1"),
        )
        .unwrap();
        assert!(namespaced.contains("kind: AdmissionPolicy\n") && namespaced.contains("name: x\n"));
        assert!(!namespaced.contains("contextAwareResources"));
    }

    #[test]
    fn refuses_bad_titles_and_types() {
        assert!(
            manifest(
                &metadata(),
                "ClusterAdmissionPolicy",
                Default::default(),
                Some("My_policy"),
                true,
                None
            )
            .is_err()
        );
        assert!(manifest(&metadata(), "Policy", Default::default(), None, true, None).is_err());
    }
}
