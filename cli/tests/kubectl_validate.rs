//! kubectl-validate's own test suite (`cli/tests/data/kubectl-validate/`, its README says where
//! from) through `syncguard scan` and the built object-validation module: every document must get
//! the answer the API server gives, read from the `Status` in the document's leading comment as
//! kubectl-validate's `pkg/cmd/validate_test.go` reads it.
//!
//! - `status: Success`: object-validation refuses nothing (a warning, such as an unknown kind,
//!   is not a refusal).
//! - `Failure` with code 422 (`Invalid`): object-validation refuses the document with exactly one
//!   finding per cause, at the cause's field, whose text holds the cause as the API server prints
//!   it (`<field>: <message>`) word for word.
//! - Failures that are kubectl-validate's own, not the API server's validation (code 400 or 500:
//!   a YAML document it cannot read, a kind it has no schema for, a value its Go types cannot
//!   decode) are answered by syncguard as [`DIVERGENCES`] says, each with the reason; so are
//!   the refusals kubectl-validate words its own way for an unknown field of a built-in kind,
//!   which no GitOps sync refuses ([`UNKNOWN_FIELD`]).
//!
//! Every shipped policy runs, as a user's scan runs them (`make build` first); only
//! object-validation's findings are judged. A case the policy cannot answer yet is listed in [`KNOWN_GAPS`] with the reason; the test
//! prints that list, and fails when a listed case passes, so the list only shrinks.

mod common;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The policy under test.
const POLICY: &str = "object-validation";

/// Cases (`<file>#<document>`) the policy does not answer as the API server does yet, and why.
const KNOWN_GAPS: &[(&str, &str)] = &[];

/// Why an unknown field of a built-in kind is no refusal of its own (object-validation's
/// `unknownField` is off by default) although kubectl-validate expects one, in its own wording (`Invalid value:
/// value provided for unknown field`; the API server's is `strict decoding error: unknown field
/// "spec.contAIN3rz"`, and only under strict field validation): `kubectl apply` asks for strict
/// field validation, but no GitOps sync fails on it. Argo CD's apply (gitops-engine
/// `newApplyOptions`) sets a strict client-side validator that kubectl's `paramVerifyingSchema`
/// skips on an API server that supports `fieldValidation`, and sends no directive, which the API
/// server reads as `Warn`: the field is dropped with a warning. Flux converts built-in kinds to
/// their Go types before its apply, which drops it. sync-drift names the field, as a warning;
/// what the API server then refuses in the object the dropped field leaves (a Pod without its
/// misspelled `containers`: `spec.containers: Required value`) object-validation refuses, as the
/// API server does when a GitOps sync applies it.
const UNKNOWN_FIELD: &str =
    "an unknown field of a built-in kind: a warning (sync-drift), and a refusal only of what its dropping leaves";

/// What the API server refuses in a Pod whose `containers` a misspelling or an indentation
/// dropped.
const CONTAINERS_REQUIRED: (&str, &str) = ("spec.containers", "Required value");

/// Cases whose Status is kubectl-validate's own error rather than the API server's validation,
/// or a refusal no GitOps sync gives, and what syncguard answers instead.
const DIVERGENCES: &[(&str, Divergence)] = &[
    // [`UNKNOWN_FIELD`]: `containers` at the top level, `spec` left empty.
    (
        "error_indentation.yaml#0",
        Divergence::UnknownField("containers", CONTAINERS_REQUIRED),
    ),
    // [`UNKNOWN_FIELD`]: `spec.contAIN3rz` for `spec.containers`.
    (
        "error_misspelled_key.yaml#0",
        Divergence::UnknownField("spec.contAIN3rz", CONTAINERS_REQUIRED),
    ),
    (
        "error_multiple_resources_all_invalid.yaml#0",
        Divergence::UnknownField("spec.contAIN3rz", CONTAINERS_REQUIRED),
    ),
    (
        "error_multiple_resources_one_invalid.yaml#0",
        Divergence::UnknownField("spec.contAIN3rz", CONTAINERS_REQUIRED),
    ),
    // kubectl-validate cannot read a YAML mapping with a key twice (400); `syncguard scan` reports
    // the file's invalid YAML at the repeated key, as an input error, and judges nothing in it.
    (
        "error_multiple_fields.yaml#0",
        Divergence::InputError("duplicate entry with key \"containers\""),
    ),
    // kubectl-validate has no schema for kind `configmap` (500). The API server serves no such
    // kind either; object-validation reports a kind whose schema it does not know without
    // validating it, and never refuses it (issue 46).
    ("error_invalid_kind.yaml#0", Divergence::NotRefused),
    // kubectl-validate's Go types cannot decode `metadata.finalizers` given as a mapping (500);
    // the schema says it is an array of strings, which object-validation reports as a type
    // error at that field.
    (
        "error_map_instead_of_array.yaml#0",
        Divergence::Refused(
            "metadata.finalizers",
            "Invalid value: \"object\": metadata.finalizers in body must be of type array: \"object\"",
        ),
    ),
];

/// What syncguard answers for a case where kubectl-validate answers with its own error.
enum Divergence {
    /// `syncguard scan` reports an input error for the file, holding this text.
    InputError(&'static str),
    /// object-validation refuses nothing.
    NotRefused,
    /// object-validation refuses the document with one finding at this field holding this text.
    Refused(&'static str, &'static str),
    /// An unknown field ([`UNKNOWN_FIELD`]): sync-drift warns of the field (its `unknownField`)
    /// at this path, and object-validation refuses only what the API server refuses once the
    /// field is dropped (this field and text).
    UnknownField(&'static str, (&'static str, &'static str)),
}

/// One cause of a refusal: its field path and the API server's message.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Cause {
    field: String,
    message: String,
}

/// What the API server answers for a document.
#[derive(Debug)]
enum Expected {
    Accepted,
    Refused(Vec<Cause>),
    /// kubectl-validate's own error (code, message): see [`DIVERGENCES`].
    ToolError(u64, String),
}

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kubectl-validate")
}

/// The documents of a file, split as kubectl-validate's `utils.SplitYamlDocuments` does (at
/// lines `---`), each with the outcome its leading comment states; a document with nothing
/// but comments and blank lines is accepted.
fn expectations(text: &str) -> Vec<Expected> {
    let mut documents = vec![String::new()];
    for line in text.lines() {
        if line.trim_end() == "---" {
            documents.push(String::new());
        } else {
            let current = documents.last_mut().expect("one document at least");
            current.push_str(line);
            current.push('\n');
        }
    }
    documents.iter().map(|d| expectation(d)).collect()
}

fn expectation(document: &str) -> Expected {
    let empty = document
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'));
    if empty {
        return Expected::Accepted;
    }
    let mut comment = String::new();
    for line in document.lines() {
        if comment.is_empty() && line.trim().is_empty() {
            continue;
        }
        let Some(rest) = line.strip_prefix('#') else { break };
        if !comment.is_empty() {
            comment.push('\n');
        }
        comment.push_str(rest);
    }
    let status: Value =
        serde_json::from_str(&comment).unwrap_or_else(|e| panic!("leading comment is not a Status ({e}):\n{comment}"));
    match status["status"].as_str() {
        Some("Success") => Expected::Accepted,
        Some("Failure") => {
            let code = status["code"].as_u64().expect("a Failure has a code");
            if code != 422 {
                return Expected::ToolError(code, status["message"].as_str().unwrap_or_default().to_string());
            }
            let mut causes: Vec<Cause> = status["details"]["causes"]
                .as_array()
                .expect("an Invalid Status has causes")
                .iter()
                .map(|c| Cause {
                    field: c["field"].as_str().unwrap_or_default().to_string(),
                    message: c["message"].as_str().expect("a cause has a message").to_string(),
                })
                .collect();
            causes.sort();
            Expected::Refused(causes)
        }
        other => panic!("unknown status {other:?}"),
    }
}

/// The refusing findings of object-validation for one document: (path, brief, text).
type Refusals = Vec<(String, String, String)>;

/// sync-drift's findings for one document: (path, rule, action).
type Drifts = Vec<(String, String, String)>;

/// What `syncguard scan` answers for a file: object-validation's refusals and sync-drift's
/// findings by document index, and the input errors' messages.
struct Scanned {
    refusals: BTreeMap<u64, Refusals>,
    drifts: BTreeMap<u64, Drifts>,
    errors: Vec<String>,
}

/// Scans one manifest file with the policies of `policies` and the CRDs as the cluster snapshot:
/// what it answers.
fn scan(policies: &Path, file: &Path) -> Scanned {
    let crds = data().join("crds");
    let mut args: Vec<PathBuf> = vec!["scan".into(), "--format".into(), "json".into(), "--policies".into()];
    args.push(policies.to_path_buf());
    let mut snapshots: Vec<PathBuf> = std::fs::read_dir(&crds)
        .expect("crds/ exists")
        .map(|e| e.expect("readable crds/").path())
        .collect();
    snapshots.sort();
    for snapshot in snapshots {
        args.push("--cluster-snapshot".into());
        args.push(snapshot);
    }
    args.push(file.to_path_buf());
    let output = common::run(&args);
    let (stdout, stderr) = common::text(&output);
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "scan of {} printed no JSON report ({e}); stderr:\n{stderr}",
            file.display()
        )
    });
    let mut refusals: BTreeMap<u64, Refusals> = BTreeMap::new();
    let mut drifts: BTreeMap<u64, Drifts> = BTreeMap::new();
    for result in report["results"].as_array().expect("results") {
        if result["policy"] == "sync-drift" {
            let document = result["document"].as_u64().expect("document index");
            for finding in result["findings"].as_array().expect("findings") {
                let text = |key: &str| finding[key].as_str().unwrap_or_default().to_string();
                drifts
                    .entry(document)
                    .or_default()
                    .push((text("path"), text("rule"), text("action")));
            }
        }
        if result["policy"] != POLICY {
            continue;
        }
        let document = result["document"].as_u64().expect("document index");
        let entry = refusals.entry(document).or_default();
        for finding in result["findings"].as_array().expect("findings") {
            if finding["action"] == "reject" {
                let text = |key: &str| finding[key].as_str().unwrap_or_default().to_string();
                entry.push((text("path"), text("brief"), text("text")));
            }
        }
        if result["verdict"] == "rejected" && entry.is_empty() {
            // A refusal without a listed finding (a malformed object): its message.
            let message = result["message"].as_str().unwrap_or_default().to_string();
            entry.push((String::new(), message.clone(), message));
        }
    }
    let errors = report["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| e["message"].as_str().unwrap_or_default().to_string())
        .collect();
    Scanned {
        refusals,
        drifts,
        errors,
    }
}

/// Whether `refusals` are exactly one finding per cause, each holding the cause as the API
/// server prints it (`<field>: <message>`) at the cause's field (a cause at `<nil>` names its
/// field in its message, and the finding may point at that field; a cause in a CRD's schema
/// that the API server's internal version hoists to `spec.validation` is at that schema in
/// the manifest, under `spec.versions[i].schema`).
fn matches(causes: &[(String, String)], refusals: &Refusals) -> Result<(), String> {
    let mut unmatched: Vec<&(String, String, String)> = refusals.iter().collect();
    for (field, message) in causes {
        let printed = format!("{field}: {message}");
        let located = |path: &str| {
            path == field
                || field.strip_prefix("spec.validation.").is_some_and(|inside| {
                    path.strip_prefix("spec.versions[")
                        .and_then(|p| p.split_once("].schema."))
                        .is_some_and(|(index, rest)| index.parse::<usize>().is_ok() && rest == inside)
                })
        };
        let found = unmatched.iter().position(|(path, brief, text)| {
            (field == "<nil>" || located(path)) && (brief.contains(&printed) || text.contains(&printed))
        });
        match found {
            Some(i) => {
                unmatched.remove(i);
            }
            None => return Err(format!("no refusal saying `{printed}`; refused: {refusals:?}")),
        }
    }
    if unmatched.is_empty() {
        Ok(())
    } else {
        Err(format!("refusals the API server does not give: {unmatched:?}"))
    }
}

/// Judges one case: `Ok` when syncguard answers as expected.
fn judge(case: &str, expected: &Expected, scanned: &Scanned, index: u64) -> Result<(), String> {
    let none = Refusals::new();
    let refusals = scanned.refusals.get(&index).unwrap_or(&none);
    let errors = &scanned.errors;
    if let Some((_, divergence)) = DIVERGENCES.iter().find(|(name, _)| *name == case) {
        match (divergence, expected) {
            (Divergence::UnknownField(field, _), Expected::Refused(causes)) => assert!(
                causes.len() == 1
                    && causes[0].field == *field
                    && causes[0].message == "Invalid value: value provided for unknown field",
                "{case} is listed as an unknown field {field} but its Status says otherwise: {expected:?}"
            ),
            (Divergence::UnknownField(..), _) | (_, Expected::Accepted | Expected::Refused(_)) => {
                panic!("{case} is listed in DIVERGENCES but its Status is the API server's: {expected:?}")
            }
            _ => {}
        }
        return match divergence {
            Divergence::UnknownField(field, (left_field, left_message)) => {
                let drifts = scanned.drifts.get(&index).map(Vec::as_slice).unwrap_or_default();
                let warned = drifts
                    .iter()
                    .any(|(path, rule, action)| path == field && rule == "unknownField" && action == "warn");
                match warned {
                    true => matches(&[(left_field.to_string(), left_message.to_string())], refusals)
                        .map_err(|e| format!("{UNKNOWN_FIELD}: {e}")),
                    false => Err(format!(
                        "{UNKNOWN_FIELD}, but sync-drift gives no unknownField warning at {field}: {drifts:?}"
                    )),
                }
            }
            Divergence::InputError(text) => {
                if errors.iter().any(|e| e.contains(text)) {
                    Ok(())
                } else {
                    Err(format!("no input error saying `{text}`: {errors:?}"))
                }
            }
            Divergence::NotRefused => match refusals.is_empty() {
                true => Ok(()),
                false => Err(format!("refused: {refusals:?}")),
            },
            Divergence::Refused(field, message) => matches(&[(field.to_string(), message.to_string())], refusals),
        };
    }
    if !errors.is_empty() {
        return Err(format!("input errors: {errors:?}"));
    }
    match expected {
        Expected::Accepted => match refusals.is_empty() {
            true => Ok(()),
            false => Err(format!("the API server accepts it; refused: {refusals:?}")),
        },
        Expected::Refused(causes) => {
            let causes: Vec<(String, String)> = causes.iter().map(|c| (c.field.clone(), c.message.clone())).collect();
            matches(&causes, refusals)
        }
        Expected::ToolError(code, message) => {
            panic!("{case}: kubectl-validate's own error ({code}: {message}) is not in DIVERGENCES")
        }
    }
}

#[test]
fn answers_as_the_api_server_does() {
    let policies = common::TempDir::new("kubectl-validate-policies");
    for name in common::shipped_policies() {
        let dir = policies.path().join(&name);
        std::fs::create_dir_all(&dir).unwrap();
        let module = common::built(&format!("policies/{name}/annotated-policy.wasm"));
        std::fs::copy(module, dir.join("annotated-policy.wasm")).unwrap();
    }

    let mut files: Vec<PathBuf> = std::fs::read_dir(data().join("manifests"))
        .expect("manifests/ exists")
        .map(|e| e.expect("readable manifests/").path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 31, "kubectl-validate's suite holds 31 manifest files");

    let mut cases = 0;
    let mut failures = Vec::new();
    let mut gaps_passing = Vec::new();
    let mut seen = Vec::new();
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(file).unwrap();
        let scanned = scan(policies.path(), file);
        for (index, expected) in expectations(&text).iter().enumerate() {
            let case = format!("{name}#{index}");
            cases += 1;
            seen.push(case.clone());
            let outcome = judge(&case, expected, &scanned, index as u64);
            let gap = KNOWN_GAPS.iter().find(|(c, _)| *c == case);
            match (outcome, gap) {
                (Ok(()), Some(_)) => gaps_passing.push(case),
                (Ok(()), None) => {}
                (Err(_), Some(_)) => {}
                (Err(why), None) => failures.push(format!("{case}: {why}")),
            }
        }
    }
    let listed = KNOWN_GAPS
        .iter()
        .map(|(c, _)| *c)
        .chain(DIVERGENCES.iter().map(|(c, _)| *c));
    for case in listed {
        assert!(
            seen.iter().any(|s| s == case),
            "{case} is listed but is no case of the suite"
        );
    }
    if !KNOWN_GAPS.is_empty() {
        eprintln!("{} of {cases} cases are known gaps:", KNOWN_GAPS.len());
        for (case, why) in KNOWN_GAPS {
            eprintln!("  {case}: {why}");
        }
    }
    assert!(
        gaps_passing.is_empty(),
        "listed as known gaps but answered as the API server does (remove them from KNOWN_GAPS): {gaps_passing:?}"
    );
    assert!(
        failures.is_empty(),
        "answered otherwise than the API server:\n{}",
        failures.join("\n")
    );
}

#[test]
fn reads_every_status_of_the_suite() {
    // The parser itself, on the suite: 31 files, and the refusals it must find.
    let mut refused = 0;
    let mut accepted = 0;
    let mut tool = 0;
    for entry in std::fs::read_dir(data().join("manifests")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for expected in expectations(&text) {
            match expected {
                Expected::Accepted => accepted += 1,
                Expected::Refused(causes) => {
                    assert!(!causes.is_empty());
                    refused += 1;
                }
                Expected::ToolError(..) => tool += 1,
            }
        }
    }
    assert_eq!(
        (accepted, refused, tool),
        (16, 19, 3),
        "accepted, refused and kubectl-validate's own errors in the suite"
    );
}
