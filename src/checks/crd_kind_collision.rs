//! crd-kind-collision (scaffold: to be replaced by the check's implementation).

use crate::admission::{Request, Verdict};
use crate::check::Check;
use crate::cluster::Cluster;
use crate::rules::{CRD_RULE, Rule};
use serde::Deserialize;

/// Settings of the crd-kind-collision check.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Settings {}

/// The crd-kind-collision check.
pub struct CrdKindCollision;

impl Check for CrdKindCollision {
    type Settings = Settings;
    const NAME: &'static str = "crd-kind-collision";
    const SETTINGS_KEY: &'static str = "crdKindCollision";
    const RULES: &'static [Rule] = &[CRD_RULE];

    fn validate(_request: &Request<'_>, _settings: &Settings, _cluster: &dyn Cluster) -> Verdict {
        Verdict::accept()
    }
}
