//! The `--config` file of `syncguard scan`: which policies run and with which settings.
//!
//! ```yaml
//! policies:
//!   hook-job-safety:
//!     settings:
//!       ttlAction: reject
//!   ownership-markers:
//!     enabled: false
//!   kind-group-clash:
//!     settings:
//!       allowedKinds: [Gateway]
//! ```
//! Every policy runs with its defaults unless the file says otherwise. Unknown keys are
//! rejected with their path.

use anyhow::{Result, anyhow};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The whole file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Per-policy entries, by policy name.
    #[serde(default)]
    pub policies: BTreeMap<String, PolicyConfig>,
}

fn yes() -> bool {
    true
}

/// One policy's entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    /// Whether the policy runs (default `true`).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// The policy's settings (default `{}`: the policy's own defaults).
    #[serde(default)]
    pub settings: Option<Value>,
}

impl Config {
    /// Reads and checks a config file.
    pub fn load(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            anyhow!(
                "cannot read config file {}: {}",
                path.display(),
                crate::input::io_reason(&e)
            )
        })?;
        Config::parse(&text).map_err(|e| anyhow!("config file {}: {e}", path.display()))
    }

    /// Parses config text (YAML or JSON); an empty file is the default config.
    pub fn parse(text: &str) -> Result<Config> {
        let value: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).map_err(|e| anyhow!("not valid YAML: {e}"))?;
        let json = serde_json::to_value(value).map_err(|e| anyhow!("cannot be read as JSON: {e}"))?;
        if json.is_null() {
            return Ok(Config::default());
        }
        if !json.is_object() {
            return Err(anyhow!("must be a mapping with a `policies` key"));
        }
        let config: Config = serde_path_to_error::deserialize(json).map_err(|e| {
            let path = e.path().to_string();
            if path == "." {
                anyhow!("{}", e.inner())
            } else {
                anyhow!("`{path}`: {}", e.inner())
            }
        })?;
        for (name, entry) in &config.policies {
            if let Some(settings) = &entry.settings
                && !settings.is_object()
                && !settings.is_null()
            {
                return Err(anyhow!("`policies.{name}.settings` must be a mapping"));
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects_unknown_keys() {
        let config = Config::parse("policies:\n  a: {enabled: false}\n  b: {settings: {x: 1}}\n").unwrap();
        assert!(!config.policies["a"].enabled);
        assert!(config.policies["b"].enabled);
        assert_eq!(config.policies["b"].settings, Some(serde_json::json!({"x": 1})));
        let err = Config::parse("policy: {}\n").unwrap_err().to_string();
        assert!(err.contains("unknown field `policy`"), "{err}");
        let err = Config::parse("policies:\n  a: {enable: false}\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "`policies.a.enable`: unknown field `enable`, expected `enabled` or `settings`"
        );
        let err = Config::parse("policies:\n  a: {settings: [1]}\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("`policies.a.settings` must be a mapping"), "{err}");
        assert!(Config::parse("").unwrap().policies.is_empty());
        assert!(Config::parse("[1]").is_err());
    }
}
