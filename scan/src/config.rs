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

    /// Refuses entries for policies not in `known` (the tree checks are always known);
    /// `config_name` names the file in the message.
    pub fn check_names(&self, known: &[&str], config_name: &str) -> Result<()> {
        let known: Vec<&str> = known
            .iter()
            .copied()
            .chain(syncguard::registry::TREE_CHECKS.iter().map(|entry| entry.name))
            .collect();
        for name in self.policies.keys() {
            if !known.contains(&name.as_str()) {
                return Err(anyhow!(
                    "config file {config_name}: `policies.{name}`: there is no policy named {name} (known: {})",
                    known.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// The settings policy `name` runs with (`{}` when the file gives none), or `None` when
    /// the file disables it.
    pub fn settings_of(&self, name: &str) -> Option<Value> {
        let entry = self.policies.get(name);
        if entry.is_some_and(|e| !e.enabled) {
            return None;
        }
        Some(
            entry
                .and_then(|e| e.settings.clone())
                .filter(|s| !s.is_null())
                .unwrap_or_else(|| Value::Object(Default::default())),
        )
    }

    /// The settings of `kind-group-clash`, `None` when disabled; `config_name` names the
    /// file in the message.
    pub fn clash_settings(&self, config_name: &str) -> Result<Option<crate::clash::Settings>> {
        let entry = self.policies.get(crate::clash::NAME);
        if entry.is_some_and(|e| !e.enabled) {
            return Ok(None);
        }
        syncguard::checks::kind_group_clash::parse_settings(entry.and_then(|e| e.settings.as_ref()))
            .map(Some)
            .map_err(|message| {
                anyhow!(
                    "policy {}: invalid settings in {config_name}: {message}",
                    crate::clash::NAME
                )
            })
    }

    /// Sets `key` of `policy`'s settings to `value` (a command-line flag over the file), keeping
    /// its other settings and whether it is enabled.
    pub fn set_setting(&mut self, policy: &str, key: &str, value: Value) {
        let entry = self.policies.entry(policy.to_string()).or_insert(PolicyConfig {
            enabled: true,
            settings: None,
        });
        let settings = entry.settings.get_or_insert_with(|| Value::Object(Default::default()));
        if !settings.is_object() {
            *settings = Value::Object(Default::default());
        }
        if let Some(map) = settings.as_object_mut() {
            map.insert(key.to_string(), value);
        }
    }

    /// Whether the `duplicate-object` tree check runs (`enabled: false` turns it off); it has no
    /// settings, so any but an empty mapping is refused.
    pub fn duplicates_enabled(&self, config_name: &str) -> Result<bool> {
        let check = &syncguard::registry::DUPLICATE_OBJECT;
        let Some(entry) = self.policies.get(check.name) else {
            return Ok(true);
        };
        (check.check_settings)(entry.settings.as_ref())
            .map_err(|message| anyhow!("policy {}: invalid settings in {config_name}: {message}", check.name))?;
        Ok(entry.enabled)
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
