//! duplicate-object's entry and rule: a check of a whole tree of documents (the same object
//! defined more than once in it), which `syncguard scan` and the playground run and no admission
//! request can carry, so no module does. Its logic reads the scanned tree and lives beside it, in
//! `scan/src/duplicates.rs`, which says what Argo CD, kustomize, Flux and kubectl do with such a
//! tree; the registry lists it ([`crate::registry::TREE_CHECKS`]). It has no settings.

use crate::finding::RuleDoc;
use serde_json::Value;

/// The check's name, in scan's config file and its outputs.
pub const NAME: &str = "duplicate-object";

/// One-line description (SARIF rule, JSON policy list).
pub const DESCRIPTION: &str = "The same object (group, kind, namespace, name) defined more than once in a tree: Argo CD keeps the last (RepeatedResourceWarning), kustomize and Flux refuse to build";

/// Where it is documented.
pub const DOCS: &str = "https://github.com/syncguard/syncguard/blob/main/docs/scan.md#duplicate-object";

/// The rule of its findings, named after Argo CD's condition.
pub const FINDINGS: &[RuleDoc] = &[RuleDoc {
    id: "repeatedResource",
    summary: "the same object (group, kind, namespace, name) is defined more than once in the tree",
    anchor: "duplicate-object",
}];

/// Checks its settings: it has none, so anything but nothing, `null` or an empty mapping is
/// refused (`enabled` is read by whoever runs it, not here).
pub fn check_settings(value: Option<&Value>) -> Result<(), String> {
    match value {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Object(members)) if members.is_empty() => Ok(()),
        Some(_) => Err("it has no settings (only `enabled`)".to_string()),
    }
}
