//! hook-job-safety (scaffold: to be replaced by the check's implementation).

use crate::admission::{Request, Verdict};
use crate::check::Check;
use crate::cluster::Cluster;
use crate::rules::{CRD_RULE, Rule};
use serde::Deserialize;

/// Settings of the hook-job-safety check.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Settings {}

/// The hook-job-safety check.
pub struct HookJobSafety;

impl Check for HookJobSafety {
    type Settings = Settings;
    const NAME: &'static str = "hook-job-safety";
    const SETTINGS_KEY: &'static str = "hookJobSafety";
    const RULES: &'static [Rule] = &[CRD_RULE];

    fn validate(_request: &Request<'_>, _settings: &Settings, _cluster: &dyn Cluster) -> Verdict {
        Verdict::accept()
    }
}
