//! Kubewarden policy metadata: read from metadata.yml, validated, embedded in a module's
//! `io.kubewarden.metadata` custom section (what `kwctl annotate` does) and read back.

use anyhow::{Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use syncguard_scan::Operation;

/// Name of the custom section Kubewarden reads metadata from.
pub const SECTION: &str = "io.kubewarden.metadata";
/// Annotation holding the policy's README.
pub const USAGE_ANNOTATION: &str = "io.kubewarden.policy.usage";

/// One admission rule of metadata.yml: the core's rule, with owned lists.
pub type Rule = syncguard::rules::Rule<Vec<String>>;

/// A resource a context-aware policy may read.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextAwareResource {
    /// apiVersion, e.g. `apiextensions.k8s.io/v1`.
    pub api_version: String,
    /// Kind.
    pub kind: String,
}

fn default_true() -> bool {
    true
}

fn default_execution_mode() -> String {
    "kubewarden-wapc".into()
}

fn default_policy_type() -> String {
    "kubernetes".into()
}

/// Policy metadata, with the fields and defaults of Kubewarden's own `Metadata`. Read from a
/// module, keys it does not declare are ignored (another kwctl may write more); read from
/// metadata.yml, they are refused ([`Metadata::from_yaml`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// Filled in by annotate from the module's `protocol_version` operation.
    #[serde(default)]
    pub protocol_version: Option<String>,
    /// Admission rules.
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// Annotations (sorted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// Whether the policy may mutate.
    pub mutating: bool,
    /// Whether the audit scanner evaluates existing objects.
    #[serde(default = "default_true")]
    pub background_audit: bool,
    /// Always `kubewarden-wapc` here.
    #[serde(default = "default_execution_mode")]
    pub execution_mode: String,
    /// `kubernetes` or `raw`.
    #[serde(default = "default_policy_type")]
    pub policy_type: String,
    /// Resources the policy may read.
    #[serde(default)]
    pub context_aware_resources: BTreeSet<ContextAwareResource>,
    /// Oldest Kubewarden able to run the policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum_kubewarden_version: Option<String>,
    /// Host capabilities the policy needs (kept as written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_capabilities: Option<serde_json::Value>,
}

impl Metadata {
    /// Reads and validates metadata.yml text; errors name the offending field.
    pub fn from_yaml(text: &str) -> Result<Self> {
        let value: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(text).map_err(|e| anyhow!("metadata is not valid YAML: {e}"))?;
        let json = serde_json::to_value(&value).map_err(|e| anyhow!("metadata cannot be represented as JSON: {e}"))?;
        let Some(map) = json.as_object() else {
            bail!("metadata must be a mapping");
        };
        // Kubewarden defaults a missing `rules` to none; a policy that means to match requests
        // must say which, so syncguard asks for the key even where it may be empty.
        let has_rules = map.contains_key("rules");
        // A key Kubewarden's metadata does not declare is refused, since a misspelt `mutating`
        // or `rules` would otherwise go unnoticed; serde_ignored reports it with its path.
        let mut unknown = Vec::new();
        let mut track = |path: serde_ignored::Path<'_>| unknown.push(path.to_string());
        let lenient = serde_ignored::Deserializer::new(json, &mut track);
        let read: Result<Metadata, _> = serde_path_to_error::deserialize(lenient);
        // An unknown key first: a misspelt field is also a missing one.
        if let Some(path) = unknown.first() {
            bail!("metadata field `{path}` is unknown to Kubewarden's policy metadata");
        }
        let metadata = read.map_err(|e| match e.path().to_string() {
            // serde_path_to_error's path of the document itself (a missing field such as `mutating`).
            root if root == "." => anyhow!("metadata: {}", e.inner()),
            path => anyhow!("metadata field `{path}`: {}", e.inner()),
        })?;
        if !has_rules {
            bail!("metadata field `rules` is required");
        }
        metadata.validate()?;
        Ok(metadata)
    }

    /// Checks what Kubewarden checks: rule shapes, wildcards, execution mode, resources.
    pub fn validate(&self) -> Result<()> {
        if self.execution_mode != "kubewarden-wapc" {
            bail!(
                "metadata field `executionMode`: syncguard policies are waPC policies, so it must be `kubewarden-wapc`, not `{}`",
                self.execution_mode
            );
        }
        if !["kubernetes", "raw"].contains(&self.policy_type.as_str()) {
            bail!(
                "metadata field `policyType` must be `kubernetes` or `raw`, not `{}`",
                self.policy_type
            );
        }
        if self.policy_type == "kubernetes" && self.rules.is_empty() {
            bail!("metadata field `rules` must hold at least one rule for a kubernetes policy");
        }
        for (i, rule) in self.rules.iter().enumerate() {
            let lists = [
                ("apiGroups", &rule.api_groups),
                ("apiVersions", &rule.api_versions),
                ("resources", &rule.resources),
                ("operations", &rule.operations),
            ];
            for (name, list) in lists {
                if list.is_empty() {
                    bail!("metadata field `rules[{i}].{name}` must not be empty");
                }
                if list.len() > 1 && list.iter().any(|v| v == "*") && name != "resources" {
                    bail!("metadata field `rules[{i}].{name}`: no other elements can be given when `*` is used");
                }
            }
            if rule.resources.iter().any(String::is_empty) {
                bail!("metadata field `rules[{i}].resources`: an empty resource is not allowed");
            }
            if rule.resources.iter().any(|r| r == "*/*") && rule.resources.len() > 1 {
                bail!("metadata field `rules[{i}].resources`: if `*/*` is present, no other resource may be given");
            }
            if rule.resources.iter().any(|r| r == "*") && rule.resources.iter().any(|r| r != "*" && !r.contains('/')) {
                bail!(
                    "metadata field `rules[{i}].resources`: if `*` is present, no other resource without a subresource may be given"
                );
            }
            if let Some(op) = rule
                .operations
                .iter()
                .find(|op| *op != "*" && op.parse::<Operation>().is_err())
            {
                let known: Vec<&str> = Operation::ALL.iter().map(|o| o.as_str()).chain(["*"]).collect();
                bail!(
                    "metadata field `rules[{i}].operations`: `{op}` is not one of {}",
                    known.join(", ")
                );
            }
        }
        for (i, resource) in self.context_aware_resources.iter().enumerate() {
            if resource.api_version.is_empty() || resource.kind.is_empty() {
                bail!("metadata field `contextAwareResources[{i}]` needs a non-empty apiVersion and kind");
            }
        }
        if let Some(version) = &self.minimum_kubewarden_version
            && let Err(e) = semver::Version::parse(version)
        {
            bail!("metadata field `minimumKubewardenVersion` must be a version like 1.10.0, not `{version}` ({e})");
        }
        Ok(())
    }

    /// The metadata embedded in a module, if it has been annotated.
    pub fn from_wasm(wasm: &[u8]) -> Result<Option<Self>> {
        match custom_section(wasm, SECTION)? {
            None => Ok(None),
            Some(data) => serde_json::from_slice(data)
                .map(Some)
                .map_err(|e| anyhow!("the module's {SECTION} section is not valid metadata: {e}")),
        }
    }

    /// The annotations, empty when none.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations.as_ref()?.get(key).map(String::as_str)
    }
}

/// The data of the first custom section named `name`.
pub fn custom_section<'a>(wasm: &'a [u8], name: &str) -> Result<Option<&'a [u8]>> {
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        let payload = payload.map_err(|e| anyhow!("not a WebAssembly module: {e}"))?;
        if let wasmparser::Payload::CustomSection(reader) = payload
            && reader.name() == name
        {
            return Ok(Some(reader.data()));
        }
    }
    Ok(None)
}

/// The module with every custom section named `name` removed and one holding `data` appended.
/// Every other section is copied byte for byte, in order.
pub fn with_custom_section(wasm: &[u8], name: &str, data: &[u8]) -> Result<Vec<u8>> {
    let mut module = wasm_encoder::Module::new();
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        let payload = payload.map_err(|e| anyhow!("not a WebAssembly module: {e}"))?;
        match &payload {
            wasmparser::Payload::Version {
                encoding: wasmparser::Encoding::Component,
                ..
            } => bail!("a WebAssembly component, not a module: Kubewarden runs waPC modules"),
            wasmparser::Payload::CustomSection(reader) if reader.name() == name => continue,
            _ => {}
        }
        if let Some((id, range)) = payload.as_section() {
            module.section(&wasm_encoder::RawSection { id, data: &wasm[range] });
        }
    }
    module.section(&wasm_encoder::CustomSection {
        name: name.into(),
        data: data.into(),
    });
    Ok(module.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module with one type, one function and a custom section `keep`.
    fn module() -> Vec<u8> {
        let mut module = wasm_encoder::Module::new();
        let mut types = wasm_encoder::TypeSection::new();
        types.ty().function([], []);
        module.section(&types);
        let mut functions = wasm_encoder::FunctionSection::new();
        functions.function(0);
        module.section(&functions);
        module.section(&wasm_encoder::CustomSection {
            name: "keep".into(),
            data: b"kept".into(),
        });
        let mut code = wasm_encoder::CodeSection::new();
        let mut body = wasm_encoder::Function::new([]);
        body.instruction(&wasm_encoder::Instruction::End);
        code.function(&body);
        module.section(&code);
        module.finish()
    }

    #[test]
    fn custom_section_is_replaced_and_the_rest_kept() {
        let original = module();
        let once = with_custom_section(&original, SECTION, b"first").unwrap();
        assert_eq!(
            &once[..original.len()],
            &original[..],
            "the module's own sections are copied as they are"
        );
        assert_eq!(custom_section(&once, SECTION).unwrap(), Some(&b"first"[..]));
        let big = vec![b'x'; 200];
        let twice = with_custom_section(&once, SECTION, &big).unwrap();
        assert_eq!(custom_section(&twice, SECTION).unwrap(), Some(&big[..]));
        assert_eq!(custom_section(&twice, "keep").unwrap(), Some(&b"kept"[..]));
        let sections = wasmparser::Parser::new(0)
            .parse_all(&twice)
            .filter(|p| matches!(p, Ok(wasmparser::Payload::CustomSection(r)) if r.name() == SECTION))
            .count();
        assert_eq!(sections, 1);
        wasmparser::Validator::new().validate_all(&twice).unwrap();
        assert!(with_custom_section(b"not wasm", SECTION, b"").is_err());
    }

    #[test]
    fn unknown_keys_are_refused_in_metadata_yml_and_ignored_in_a_module() {
        let yaml = "rules: []\npolicyType: raw\nmutating: false\nlabels: {a: b}\n";
        let error = Metadata::from_yaml(yaml).unwrap_err().to_string();
        assert_eq!(
            error,
            "metadata field `labels` is unknown to Kubewarden's policy metadata"
        );
        let json = br#"{"rules":[],"policyType":"raw","mutating":false,"labels":{"a":"b"}}"#;
        let annotated = with_custom_section(&module(), SECTION, json).unwrap();
        let metadata = Metadata::from_wasm(&annotated).unwrap().unwrap();
        assert_eq!(metadata.policy_type, "raw");
    }
}
