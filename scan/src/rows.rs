//! The rows `syncguard scan --format json` and the playground write: one per evaluation
//! ([`ResultRow`]) and one per finding ([`FindingRow`]). Both outputs serialise these types, and
//! nothing else writes a row, so the command and the page cannot disagree; the command's whole
//! document is described by `docs/scan-output.schema.json`, generated from the types (a test of
//! the command keeps the two equal).

use crate::clash;
use crate::evaluate::{Evaluation, Verdict};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use syncguard::admission::Operation;
use syncguard::finding::{Fix, RuleDoc};
use syncguard::registry::Entry;
use syncguard::render::Reported;

/// Where kind-group-clash, the command's built-in pseudo-policy, is documented.
pub const CLASH_DOCS: &str = "https://github.com/syncguard/syncguard/blob/main/docs/scan.md#kind-group-clash";

/// The documentation of `rule` of `policy`: its [`RuleDoc`] and the link to its section, for a
/// rule a syncguard check (alone or in the all-in-one) or kind-group-clash documents.
pub fn rule_doc(policy: &str, rule: &str) -> Option<(&'static RuleDoc, String)> {
    if policy == clash::NAME {
        let doc = clash::FINDINGS.iter().find(|doc| doc.id == rule)?;
        return Some((doc, CLASH_DOCS.to_string()));
    }
    let entries: Vec<&Entry> = match Entry::named(policy) {
        Some(entry) => vec![entry],
        None if policy == syncguard::registry::ALL_IN_ONE => syncguard::registry::CHECKS.iter().collect(),
        None => Vec::new(),
    };
    entries.into_iter().find_map(|entry| {
        let doc = entry.findings.iter().find(|doc| doc.id == rule)?;
        Some((doc, syncguard::text::readme_link(entry.name, doc.anchor)))
    })
}

/// The README section of `rule` of `policy` ([`rule_doc`]); the policy's README for a rule a
/// syncguard check does not document; `None` for a policy that is not syncguard's.
pub fn rule_link(policy: &str, rule: &str) -> Option<String> {
    if let Some((_, link)) = rule_doc(policy, rule) {
        return Some(link);
    }
    Entry::named(policy).map(|entry| syncguard::text::readme_link(entry.name, "readme"))
}

/// One finding of an evaluation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FindingRow {
    /// The rule's id, as the policy's README documents it.
    pub rule: String,
    /// `reject` or `warn`.
    pub action: String,
    /// The path of the field in the object (`spec.template.spec.containers[0].env[1].value`);
    /// empty for the object as a whole.
    pub path: String,
    /// The line of that path's key in the file (of the deepest part of it the file holds), else
    /// the document's line.
    pub line: usize,
    /// The finding in a few words, as a warning gives it.
    pub brief: String,
    /// What, where, why and the fix, as a rejection gives it; empty for a module without a
    /// `report` operation, whose findings are read from its audit annotation.
    pub text: String,
    /// The fix, when it is one edit of the manifest at `path`.
    pub fix: Option<Fix>,
    /// The README section of the rule; `null` for a policy that is not syncguard's.
    pub readme: Option<String>,
}

impl FindingRow {
    /// The row of `finding`, a finding of `policy` whose path is at `line`.
    pub fn new(policy: &str, finding: &Reported, line: usize) -> FindingRow {
        let listed = &finding.listed;
        FindingRow {
            rule: listed.rule.clone(),
            action: listed.action.clone(),
            path: listed.path.clone(),
            line,
            brief: listed.brief.clone(),
            text: finding.text.clone(),
            fix: listed.fix.clone(),
            readme: rule_link(policy, &listed.rule),
        }
    }
}

/// One document judged by one policy. `P` is where the document is (the command names its file;
/// the page, whose documents are listed apart, its index), `R` how the other documents of a
/// kind-group-clash are named.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ResultRow<P, R> {
    /// Where the document is.
    #[serde(flatten)]
    pub place: P,
    /// The policy's name.
    pub policy: String,
    /// `CREATE`, or `UPDATE` from the document's old version (`--base`, the page's old objects).
    pub operation: Operation,
    /// What admission would do.
    pub verdict: Verdict,
    /// The rejection message; `null` unless rejected.
    pub message: Option<String>,
    /// The rejection's status code, when the policy gave one.
    pub code: Option<u16>,
    /// The warnings, as the API server would pass them on.
    pub warnings: Vec<String>,
    /// The RFC 6902 JSON Patch a mutation would apply; `null` unless mutated.
    pub patch: Option<Value>,
    /// The other documents of a kind-group-clash.
    pub related: Vec<R>,
    /// Every finding behind the answer.
    pub findings: Vec<FindingRow>,
    /// Findings the answer counts but does not give: only for a module without a `report`
    /// operation, whose capped audit annotation left them out.
    pub unlisted_findings: usize,
}

impl<P, R> ResultRow<P, R> {
    /// The row of `evaluation` by `policy`, with its document's `place`, the `related` documents
    /// and the rows of its findings.
    pub fn new(evaluation: &Evaluation, policy: &str, place: P, related: Vec<R>, findings: Vec<FindingRow>) -> Self {
        ResultRow {
            place,
            policy: policy.to_string(),
            operation: evaluation.operation,
            verdict: evaluation.verdict,
            message: evaluation.message.clone(),
            code: evaluation.code,
            warnings: evaluation.warnings.clone(),
            patch: evaluation.patch.clone(),
            related,
            findings,
            unlisted_findings: evaluation.unlisted,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_go_to_the_rules_sections() {
        let drift = rule_link("sync-drift", "nullOrEmpty").unwrap();
        assert!(
            drift.starts_with("https://github.com/syncguard/syncguard/tree/main/policies/sync-drift#"),
            "{drift}"
        );
        assert!(
            !drift.ends_with("#readme"),
            "a documented rule has its own section: {drift}"
        );
        assert_eq!(rule_link("syncguard", "nullOrEmpty").as_deref(), Some(drift.as_str()));
        assert!(
            rule_link("sync-drift", "noSuchRule")
                .unwrap()
                .ends_with("sync-drift#readme")
        );
        assert_eq!(rule_link(clash::NAME, "sameKindAndName").as_deref(), Some(CLASH_DOCS));
        assert_eq!(
            rule_doc(clash::NAME, "sameKindAndName").unwrap().0.id,
            "sameKindAndName"
        );
        assert_eq!(rule_link("someone-elses-policy", "x"), None);
    }
}
