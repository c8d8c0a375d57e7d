//! kind-group-clash's entry, settings and rule: a check of a whole tree of documents (the objects
//! one Helm release installs together), which `syncguard scan` and the playground run and no
//! admission request can carry, so no module does. Its logic reads the scanned tree and lives
//! beside it, in `scan/src/clash.rs`, which says what it reports and why; the registry lists it
//! ([`crate::registry::TREE_CHECKS`]).
//!
//! Settings (`policies.kind-group-clash.settings` in scan's config file), unknown keys refused:
//! - `helmVersion` (default: unset, an affected Helm is assumed): the Helm that installs the
//!   releases, e.g. `"3.16.4"` or `"v3.17.1"`; from 3.17.1 on nothing is reported;
//! - `allowedKinds` (default `[]`): kinds never reported, e.g. `[Gateway]`;
//! - `allowedGroupSets` (default `[]`): lists of groups allowed to share kinds, e.g.
//!   `[[networking.istio.io, gateway.networking.k8s.io]]`; a set is allowed when all its
//!   groups are in one list.

use crate::finding::RuleDoc;
use serde::Deserialize;
use serde_json::Value;

/// The check's name, in scan's config file and its outputs.
pub const NAME: &str = "kind-group-clash";

/// One-line description (SARIF rule, JSON policy list).
pub const DESCRIPTION: &str = "Objects of one Helm release with the same kind, name and namespace in different API groups, which Helm before 3.17.1 confuses (Helm issue 13582)";

/// Where it is documented.
pub const DOCS: &str = "https://github.com/syncguard/syncguard/blob/main/docs/scan.md#kind-group-clash";

/// The rule of its findings, documented in `docs/scan.md`.
pub const FINDINGS: &[RuleDoc] = &[RuleDoc {
    id: "sameKindAndName",
    summary: "another object of the same Helm release has the same kind, name and namespace in a different API group",
    anchor: "kind-group-clash",
}];

/// The first Helm release that tells a release's objects apart by API group too.
pub const FIXED_HELM: (u64, u64, u64) = (3, 17, 1);

/// Settings of kind-group-clash.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Settings {
    /// The Helm version that installs the releases (default: unset, an affected one assumed).
    pub helm_version: Option<String>,
    /// Kinds never reported (default: none).
    pub allowed_kinds: Vec<String>,
    /// Sets of groups allowed to share kinds (default: none).
    pub allowed_group_sets: Vec<Vec<String>>,
}

impl Settings {
    /// Whether the Helm that installs the releases mixes up a release's objects of one kind
    /// and name in different groups: unset, or before 3.17.1.
    pub fn helm_affected(&self) -> bool {
        match self.helm_version.as_deref().and_then(helm_version) {
            None => true,
            Some((version, pre)) => version < FIXED_HELM || (version == FIXED_HELM && pre),
        }
    }
}

/// Reads a Helm version, `3.16.4`, `v3.17.1` or `3.17.1-rc.1` (`3.17` is `3.17.0`): the
/// numbers and whether it is a pre-release.
fn helm_version(text: &str) -> Option<((u64, u64, u64), bool)> {
    let text = text.trim();
    let text = text.strip_prefix('v').unwrap_or(text);
    let (core, pre) = match text.split_once(['-', '+']) {
        Some((core, rest)) => (core, text.as_bytes()[core.len()] == b'-' && !rest.is_empty()),
        None => (text, false),
    };
    let mut numbers = core.split('.').map(|n| {
        (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .then(|| n.parse::<u64>().ok())
            .flatten()
    });
    let major = numbers.next()??;
    let minor = numbers.next().unwrap_or(Some(0))?;
    let patch = numbers.next().unwrap_or(Some(0))?;
    if numbers.next().is_some() {
        return None;
    }
    Some(((major, minor, patch), pre))
}

/// Reads the settings (`None` or `null`: the defaults); errors name the key.
pub fn parse_settings(value: Option<&Value>) -> Result<Settings, String> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(Settings::default());
    };
    let settings: Settings = serde_path_to_error::deserialize(value.clone()).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            e.inner().to_string()
        } else {
            format!("`{path}`: {}", e.inner())
        }
    })?;
    if let Some(version) = &settings.helm_version
        && helm_version(version).is_none()
    {
        return Err(format!(
            "`helmVersion`: {} is not a Helm version: write the version `helm version --short` prints, such as \"3.16.4\" or \"v3.17.1\" (Helm before 3.17.1 mixes up a release's objects of one kind and name in different API groups)",
            crate::text::quote(version)
        ));
    }
    Ok(settings)
}
