//! The rows `syncguard scan --format json` and the playground write: one per evaluation
//! ([`ResultRow`]) and one per finding ([`FindingRow`]). Both outputs serialise these types, and
//! nothing else writes a row, so the command and the page cannot disagree; the command's whole
//! document is described by `docs/scan-output.schema.json`, generated from the types (a test of
//! the command keeps the two equal).

use crate::evaluate::{Evaluation, Verdict};
use crate::input::Document;
use crate::locate::Locator;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use syncguard::admission::Operation;
use syncguard::finding::{Fix, RuleDoc};
use syncguard::registry::{Entry, TreeEntry};
use syncguard::render::Reported;

/// The documentation of `rule` of `policy`: its [`RuleDoc`] and the link to its section, for a
/// rule a syncguard check documents: a module's (alone or in the all-in-one) or a tree check's.
pub fn rule_doc(policy: &str, rule: &str) -> Option<(&'static RuleDoc, String)> {
    if let Some(tree) = TreeEntry::named(policy) {
        let doc = tree.findings.iter().find(|doc| doc.id == rule)?;
        return Some((doc, tree.docs.to_string()));
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
    /// The column (1-based, in UTF-16 code units) where that key starts; 1 with the document's
    /// line.
    pub column: usize,
    /// The finding in a few words, as a warning gives it.
    pub brief: String,
    /// What, where, why and the fix, as a rejection gives it; empty for a module without a
    /// `report` operation, whose findings are read from its audit annotation.
    pub text: String,
    /// The fix, when it is one edit of the manifest at `path`.
    pub fix: Option<Fix>,
    /// The README section of the rule; `null` for a policy that is not syncguard's.
    pub readme: Option<String>,
    /// The reason the object gives for suppressing it (its annotation
    /// `ignore-check.syncguard.io/<policy>` or `ignore-check.syncguard.io/<policy>.<rule>`);
    /// `null` when it is not suppressed.
    pub suppressed: Option<String>,
}

impl FindingRow {
    /// The row of `finding`, a finding of `policy` whose path is at `(line, column)`
    /// ([`position`]).
    pub fn new(policy: &str, finding: &Reported, (line, column): (usize, usize)) -> FindingRow {
        let listed = &finding.listed;
        FindingRow {
            rule: listed.rule.clone(),
            action: listed.action.clone(),
            path: listed.path.clone(),
            line,
            column,
            brief: listed.brief.clone(),
            text: finding.text.clone(),
            fix: listed.fix.clone(),
            readme: rule_link(policy, &listed.rule),
            suppressed: None,
        }
    }
}

/// Where the field at `path` of `doc` is in its file, read by `locator` (the file's; `None` when
/// the caller has not read it, which it need not for an empty path): the line and column of the
/// key of the deepest part of the path the file holds, else the document's line and column 1.
pub fn position(doc: &Document, path: &str, locator: Option<&Locator>) -> (usize, usize) {
    match locator {
        Some(locator) if !path.is_empty() => locator.position(doc.index, doc.item, path).unwrap_or((doc.line, 1)),
        _ => (doc.line, 1),
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
    /// Identical copies of the document elsewhere in the scan (same group, kind, namespace,
    /// name and content), judged once with it: every finding is theirs too.
    pub copies: Vec<R>,
    /// For a custom resource judged by a check that reads its CRD, when the scan holds several
    /// copies of that CRD: which one it was judged against, and whether they differ.
    pub crd: Option<CrdRow<R>>,
    /// Every finding behind the answer.
    pub findings: Vec<FindingRow>,
    /// Findings the answer counts but does not give: only for a module without a `report`
    /// operation, whose capped audit annotation left them out.
    pub unlisted_findings: usize,
}

impl<P, R> ResultRow<P, R> {
    /// Whether the row says nothing: accepted as it is, which the outputs list only on request.
    pub fn quiet(&self) -> bool {
        self.verdict == Verdict::Accepted && self.warnings.is_empty()
    }

    /// What the row says, one [`Said`] a line: each finding; for an answer without listed
    /// findings, its rejection, mutation and warnings; and for a module whose capped annotation
    /// left findings out, how many.
    pub fn said(&self) -> Vec<Said<'_>> {
        let mut out: Vec<Said<'_>> = self
            .findings
            .iter()
            .filter(|f| f.suppressed.is_none())
            .map(Said::Finding)
            .collect();
        if self.findings.is_empty() {
            match self.verdict {
                Verdict::Rejected => out.push(Said::Answer {
                    verdict: Verdict::Rejected,
                    message: self.message.clone().unwrap_or_else(|| "(no message)".into()),
                }),
                Verdict::Mutated => out.push(Said::Answer {
                    verdict: Verdict::Mutated,
                    message: self.patch.as_ref().map(describe_patch).unwrap_or_default(),
                }),
                Verdict::Warned | Verdict::Accepted => {}
            }
            out.extend(self.warnings.iter().map(|w| Said::Answer {
                verdict: Verdict::Warned,
                message: w.clone(),
            }));
        } else if self.unlisted_findings > 0 {
            let unlisted = self.unlisted_findings;
            out.push(Said::Answer {
                verdict: Verdict::Warned,
                message: format!(
                    "{unlisted} more {} than the answer lists (it lists the first {})",
                    if unlisted == 1 { "finding" } else { "findings" },
                    self.findings.len()
                ),
            });
        }
        out
    }

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
            copies: Vec::new(),
            crd: None,
            findings,
            unlisted_findings: evaluation.unlisted,
        }
    }

    /// The findings the object suppresses ([`FindingRow::suppressed`]).
    pub fn suppressed(&self) -> impl Iterator<Item = &FindingRow> {
        self.findings.iter().filter(|f| f.suppressed.is_some())
    }

    /// The row with the findings `suppressions` (the object's, [`suppressions`]) suppress: a
    /// finding of this row's policy whose key is the policy's name or `<policy>.<rule>`, with a
    /// reason.
    pub fn suppress(mut self, suppressions: &[Suppression]) -> Self {
        for finding in &mut self.findings {
            let by_rule = format!("{}.{}", self.policy, finding.rule);
            finding.suppressed = suppressions
                .iter()
                .find(|s| !s.reason.is_empty() && (s.target == self.policy || s.target == by_rule))
                .map(|s| s.reason.clone());
        }
        self
    }

    /// The row with the places of the document's identical copies.
    pub fn with_copies(self, copies: Vec<R>) -> Self {
        ResultRow { copies, ..self }
    }

    /// The row with the CRD copies it was judged against, when `policy` reads CRDs
    /// ([`crate::copies::reads_crds`]).
    pub fn with_crd(self, crd: Option<CrdRow<R>>) -> Self {
        if crd.is_some() && crate::copies::reads_crds(&self.policy) {
            ResultRow { crd, ..self }
        } else {
            self
        }
    }

    /// What the outputs add to each line of the row to name the other places it concerns:
    /// ` (identical copies: <places>)`, ` (judged against the CRD at <place>; ...)`; `name`
    /// writes a place.
    pub fn places_note(&self, name: impl Fn(&R) -> String) -> String {
        let mut note = String::new();
        if !self.copies.is_empty() {
            let places: Vec<String> = self.copies.iter().map(&name).collect();
            note.push_str(&format!(
                " (the same object, identical, is also at {}: judged once)",
                places.join(", ")
            ));
        }
        if let Some(crd) = &self.crd {
            let others: Vec<String> = crd.others.iter().map(&name).collect();
            let copies = if crd.differ {
                "they differ, so the answer depends on which one is installed"
            } else {
                "they are identical"
            };
            note.push_str(&format!(
                " (judged against the CRD at {}; other copies at {}: {copies})",
                name(&crd.used),
                others.join(", ")
            ));
        }
        note
    }
}

/// The copies of a CRD a custom resource was judged against ([`crate::copies::CrdCopies`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CrdRow<R> {
    /// The copy the resource was judged against: the last in scan order, which the offline
    /// cluster answers with (a later object of the same name replaces an earlier one).
    pub used: R,
    /// The other copies.
    pub others: Vec<R>,
    /// Whether the copies differ, so that the answer depends on which one is installed.
    pub differ: bool,
}

impl<R> CrdRow<R> {
    /// The row of `copies`, each document named by `place`.
    pub fn new(copies: &crate::copies::CrdCopies, place: impl Fn(usize) -> R) -> CrdRow<R> {
        CrdRow {
            used: place(copies.used),
            others: copies.others.iter().map(|&i| place(i)).collect(),
            differ: copies.differ,
        }
    }
}

/// The annotation prefix that suppresses findings on the object that carries it, in
/// kube-linter's style (`ignore-check.kube-linter.io/<check>: "<reason>"`):
/// `ignore-check.syncguard.io/<policy>: "<reason>"` suppresses every finding of the policy,
/// `ignore-check.syncguard.io/<policy>.<rule>: "<reason>"` those of one rule. The reason is
/// required.
pub const IGNORE_PREFIX: &str = "ignore-check.syncguard.io/";

/// One suppression an object declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suppression {
    /// `<policy>` or `<policy>.<rule>`.
    pub target: String,
    /// Why (the annotation's value, trimmed); empty when none was given, which suppresses
    /// nothing.
    pub reason: String,
}

/// The suppressions of an object (compact JSON), from its `metadata.annotations`; none for an
/// object that does not mention [`IGNORE_PREFIX`] (not even parsed then).
pub fn suppressions(object: &str) -> Vec<Suppression> {
    if !object.contains(IGNORE_PREFIX) {
        return Vec::new();
    }
    let Ok(value) = serde_json::from_str::<Value>(object) else {
        return Vec::new();
    };
    let Some(annotations) = value.pointer("/metadata/annotations").and_then(Value::as_object) else {
        return Vec::new();
    };
    annotations
        .iter()
        .filter_map(|(key, value)| {
            let target = key.strip_prefix(IGNORE_PREFIX)?;
            Some(Suppression {
                target: target.to_string(),
                reason: value.as_str().unwrap_or("").trim().to_string(),
            })
        })
        .collect()
}

/// What is wrong with a suppression among `policies` (the names of the policies that can run):
/// no reason, an unknown policy, or a rule its policy does not document; `None` when it is
/// right.
pub fn suppression_problem(suppression: &Suppression, policies: &[&str]) -> Option<String> {
    let key = format!("{IGNORE_PREFIX}{}", suppression.target);
    let (policy, rule) = match suppression.target.split_once('.') {
        Some((policy, rule)) => (policy, Some(rule)),
        None => (suppression.target.as_str(), None),
    };
    if !policies.contains(&policy) {
        return Some(format!(
            "annotation {key}: there is no policy named {policy} (known: {}); write {IGNORE_PREFIX}<policy> or {IGNORE_PREFIX}<policy>.<rule>",
            policies.join(", ")
        ));
    }
    if let Some(rule) = rule {
        let documented = rule_doc(policy, rule).is_some();
        let anyone_documents = Entry::named(policy).is_some() || TreeEntry::named(policy).is_some();
        if anyone_documents && !documented {
            return Some(format!(
                "annotation {key}: policy {policy} has no rule {rule} (its README lists its rules)"
            ));
        }
    }
    if suppression.reason.is_empty() {
        return Some(format!(
            "annotation {key} suppresses nothing without a reason: write why, e.g. {key}: \"the operator rewrites this field\""
        ));
    }
    None
}

/// The problems of every document's suppressions ([`suppression_problem`]), as `(document
/// index, message)` in document order. `policies` are the names of the scan's policies; every
/// check the registry lists is known too (an annotation for a policy turned off is
/// no mistake).
pub fn suppression_problems(documents: &[Document], policies: &[&str]) -> Vec<(usize, String)> {
    let mut known: Vec<&str> = syncguard::registry::names().collect::<Vec<_>>();
    known.extend(policies);
    known.sort_unstable();
    known.dedup();
    let mut out = Vec::new();
    for (i, doc) in documents.iter().enumerate() {
        for suppression in suppressions(&doc.object) {
            if let Some(problem) = suppression_problem(&suppression, &known) {
                out.push((i, problem));
            }
        }
    }
    out
}

/// One thing a row says, as the text and SARIF outputs print it and the summary counts it:
/// each of its findings, or, for an answer without listed findings, its rejection, its mutation
/// and each of its warnings.
#[derive(Debug, Clone, PartialEq)]
pub enum Said<'r> {
    /// A finding, at its own field.
    Finding(&'r FindingRow),
    /// A line of the answer itself, at the document's line: what admission would do and why.
    Answer {
        /// `rejected`, `mutated` or `warned`.
        verdict: Verdict,
        /// The message, a mutation's operations or the warning.
        message: String,
    },
}

impl Said<'_> {
    /// Whether it rejects (else it warns).
    pub fn rejects(&self) -> bool {
        match self {
            Said::Finding(finding) => finding.action == "reject",
            Said::Answer { verdict, .. } => *verdict == Verdict::Rejected,
        }
    }

    /// Its rule, as SARIF and the summary name it: `<policy>/<rule>` for a finding, `<policy>`
    /// for a line of the answer.
    pub fn rule_id(&self, policy: &str) -> String {
        match self {
            Said::Finding(finding) => format!("{policy}/{}", finding.rule),
            Said::Answer { .. } => policy.to_string(),
        }
    }
}

/// A JSON Patch as `op path` pairs: `admission would change the object: add /metadata/labels`.
pub fn describe_patch(patch: &Value) -> String {
    let ops: Vec<String> = patch
        .as_array()
        .map(|ops| {
            ops.iter()
                .map(|op| {
                    format!(
                        "{} {}",
                        op.get("op").and_then(Value::as_str).unwrap_or("?"),
                        op.get("path").and_then(Value::as_str).unwrap_or("?")
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    format!("admission would change the object: {}", ops.join(", "))
}

/// How many findings a scan has ([`Said`]), by level and by rule.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FindingCounts {
    /// Findings that reject.
    pub reject: usize,
    /// Findings that warn (mutations included).
    pub warn: usize,
    /// Findings the objects suppress with a reason ([`IGNORE_PREFIX`]), counted apart.
    pub suppressed: usize,
    /// The same by rule (`<policy>/<rule>`; `<policy>` for answers without listed findings), in
    /// the rules' byte order.
    pub rules: std::collections::BTreeMap<String, RuleCounts>,
}

/// How many findings of one rule reject and warn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RuleCounts {
    /// Findings that reject.
    pub reject: usize,
    /// Findings that warn.
    pub warn: usize,
}

impl FindingCounts {
    /// Counts what `row` says, and what it suppresses.
    pub fn add<P, R>(&mut self, row: &ResultRow<P, R>) {
        self.suppressed += row.suppressed().count();
        for said in row.said() {
            let rule = self.rules.entry(said.rule_id(&row.policy)).or_default();
            if said.rejects() {
                self.reject += 1;
                rule.reject += 1;
            } else {
                self.warn += 1;
                rule.warn += 1;
            }
        }
    }
}

/// A policy that ran, as the command's JSON and the page list them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PolicyRow {
    /// Its name (its folder's, or a tree check's).
    pub name: String,
    /// `embedded` (a module built into the command), the module's path, or `built-in` (the
    /// page's checks, the tree checks).
    pub origin: String,
    /// Its `io.kubewarden.policy.version`, when it has one.
    pub version: Option<String>,
    /// Its `io.kubewarden.policy.description`, when it has one.
    pub description: Option<String>,
    /// Its documentation (`io.kubewarden.policy.url`, a syncguard policy's README), when known.
    pub readme: Option<String>,
}

impl PolicyRow {
    /// The row of a tree check (`syncguard::registry::TREE_CHECKS`): built in, of this release.
    pub fn of_tree_check(entry: &TreeEntry) -> PolicyRow {
        PolicyRow {
            name: entry.name.to_string(),
            origin: "built-in".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
            description: Some(entry.description.to_string()),
            readme: Some(entry.docs.to_string()),
        }
    }
}

/// An input problem. `P` names the input: the command's file, the page's text area.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ErrorRow<P> {
    /// Which input.
    #[serde(flatten)]
    pub place: P,
    /// The line, when the problem has one.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
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
        assert_eq!(
            rule_link("kind-group-clash", "sameKindAndName").as_deref(),
            Some("https://github.com/syncguard/syncguard/blob/main/docs/scan.md#kind-group-clash")
        );
        assert_eq!(
            rule_doc("kind-group-clash", "sameKindAndName").unwrap().0.id,
            "sameKindAndName"
        );
        assert_eq!(rule_link("someone-elses-policy", "x"), None);
    }
}
