//! One evaluation of `syncguard scan` and the playground: the request a document becomes, the
//! policies it goes to, and the verdict each gives. How a policy decides is the caller's
//! [`Evaluator`]: the command runs the annotated modules through wasmtime, the playground the
//! core checks compiled into it.

use crate::Operation;
use crate::clash;
use crate::cluster::Plurals;
use crate::duplicates;
use crate::input::{Document, Source};
use base64::Engine as _;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::hash::Hasher;
use syncguard::admission::ValidationResponse;
use syncguard::checks::object_validation::{self, ObjectValidation};
use syncguard::render::{Annotation, FINDINGS_ANNOTATION, Reported};

/// The verdict of one evaluation; written in lower case (`rejected`) in every output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Admission would refuse the object.
    Rejected,
    /// Admission would change the object (a mutating policy's patch).
    Mutated,
    /// Admission would accept the object with warnings.
    Warned,
    /// Admission would accept the object as it is.
    Accepted,
}

impl Verdict {
    /// The word used in every output format.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Rejected => "rejected",
            Verdict::Mutated => "mutated",
            Verdict::Warned => "warned",
            Verdict::Accepted => "accepted",
        }
    }
}

/// One document evaluated by one policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Index of the document.
    pub document: usize,
    /// Index of the policy in the scan's policy list.
    pub policy: usize,
    /// The verdict.
    pub verdict: Verdict,
    /// The rejection message.
    pub message: Option<String>,
    /// The rejection code.
    pub code: Option<u16>,
    /// Warnings, accepted or not.
    pub warnings: Vec<String>,
    /// The JSON Patch a mutation would apply.
    pub patch: Option<Value>,
    /// Other documents the finding involves.
    pub related: Vec<usize>,
    /// The operation of the request the policy judged: CREATE, or UPDATE from the document's
    /// old object.
    pub operation: Operation,
    /// Every finding behind the answer, whole, from the policy's structured report (its `report`
    /// operation); for a module without one, those its [`FINDINGS_ANNOTATION`] audit annotation
    /// lists. Empty when it has none (a refusal of a malformed request, the `kind-group-clash`
    /// tree check, a module other than syncguard's).
    pub findings: Vec<Reported>,
    /// Findings the answer counts but does not give: those a module without a `report`
    /// operation left out of its capped audit annotation.
    pub unlisted: usize,
}

impl Evaluation {
    /// An evaluation from a policy's answer: rejected unless `allowed`, else mutated when it
    /// has a patch, warned when it has warnings, accepted otherwise. A message and a code are
    /// kept only for rejections.
    pub fn new(
        document: usize,
        policy: usize,
        allowed: bool,
        message: Option<String>,
        code: Option<u16>,
        warnings: Vec<String>,
        patch: Option<Value>,
    ) -> Evaluation {
        let (verdict, message, code) = if !allowed {
            (Verdict::Rejected, message, code)
        } else if patch.is_some() {
            (Verdict::Mutated, None, None)
        } else if !warnings.is_empty() {
            (Verdict::Warned, None, None)
        } else {
            (Verdict::Accepted, None, None)
        };
        Evaluation {
            document,
            policy,
            verdict,
            message,
            code,
            warnings,
            patch,
            related: Vec::new(),
            operation: Operation::Create,
            findings: Vec::new(),
            unlisted: 0,
        }
    }

    /// The evaluation with `findings`, the policy's structured report.
    pub fn with_findings(mut self, findings: Vec<Reported>) -> Evaluation {
        self.findings = findings;
        self.unlisted = 0;
        self
    }

    /// The evaluation with the findings listed in `annotations` (an answer's audit annotations),
    /// for a module without a `report` operation: each without its long text, and those the
    /// capped annotation leaves out counted in [`Evaluation::unlisted`]. An annotation that does
    /// not read as syncguard's lists none.
    pub fn with_audit_annotations<'a>(
        mut self,
        annotations: impl IntoIterator<Item = (&'a String, &'a String)>,
    ) -> Evaluation {
        let annotation: Option<Annotation> = annotations
            .into_iter()
            .find(|(key, _)| key.as_str() == FINDINGS_ANNOTATION)
            .and_then(|(_, value)| serde_json::from_str(value).ok());
        let Some(annotation) = annotation else {
            return self;
        };
        self.unlisted = annotation.total.saturating_sub(annotation.findings.len());
        self.findings = annotation
            .findings
            .into_iter()
            .map(|listed| Reported {
                listed,
                kind: String::new(),
                label: String::new(),
                text: String::new(),
                note: None,
            })
            .collect();
        self
    }
}

/// A deterministic request uid from the document's place, shaped like a UUID.
pub fn uid(source: &str, index: usize, item: Option<usize>) -> String {
    let key = format!(
        "{source}\u{0}{index}\u{0}{}",
        item.map(|i| i.to_string()).unwrap_or_default()
    );
    // FNV-1a from two seeds: the standard offset basis, and its halves swapped.
    let hash = |seed: u64| {
        let mut hasher = fnv::FnvHasher::with_key(seed);
        hasher.write(key.as_bytes());
        hasher.finish()
    };
    let (a, b) = (hash(0xcbf2_9ce4_8422_2325), hash(0x8422_2325_cbf2_9ce4));
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

/// The AdmissionRequest JSON of a document, dry run, by user `syncguard-scan`: a CREATE of the
/// object as written, or with `operation` UPDATE, its update from [`Document::old`] (the
/// request's `oldObject`; none when the document has none). The request names the object's
/// namespace unless the object is `cluster_scoped`: the API server names none for such an object
/// (and clears the one its manifest gives, which the object keeps here, for the checks that
/// report it).
pub fn request_json(doc: &Document, resource: &str, uid: &str, operation: Operation, cluster_scoped: bool) -> String {
    let gvk = serde_json::json!({"group": doc.info.group, "version": doc.info.version, "kind": doc.info.kind});
    let gvr = serde_json::json!({"group": doc.info.group, "version": doc.info.version, "resource": resource});
    let mut head = serde_json::json!({
        "uid": uid,
        "kind": gvk,
        "resource": gvr,
        "requestKind": gvk,
        "requestResource": gvr,
        "name": doc.info.name.clone().unwrap_or_default(),
        "operation": operation,
        "userInfo": {"username": "syncguard-scan", "groups": ["system:authenticated"]},
        "dryRun": true,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": if operation == Operation::Update { "UpdateOptions" } else { "CreateOptions" }},
    });
    if let Some(namespace) = doc.info.namespace.as_ref().filter(|_| !cluster_scoped) {
        head["namespace"] = Value::from(namespace.as_str());
    }
    let mut text = head.to_string();
    text.pop();
    text.push_str(",\"object\":");
    text.push_str(&doc.object);
    if let (Operation::Update, Some(old)) = (operation, &doc.old) {
        text.push_str(",\"oldObject\":");
        text.push_str(old);
    }
    text.push('}');
    text
}

/// How the policies of a scan decide, by index in the scan's policy list.
pub trait Evaluator {
    /// How many policies there are.
    fn policy_count(&self) -> usize;

    /// Whether policy `policy` sees `operation` of `resource` in `group`/`version` (its rules).
    fn matches(&self, policy: usize, group: &str, version: &str, resource: &str, operation: Operation) -> bool;

    /// Whether policy `policy` judges an UPDATE by what it changes, so that a document with an
    /// old object goes to it as an UPDATE (see [`Document::old`]).
    fn reads_old_object(&self, policy: usize) -> bool;

    /// Policy `policy`'s evaluation of the AdmissionRequest `request` (JSON text, uid `uid`)
    /// of document `document`.
    fn evaluate(&mut self, policy: usize, document: usize, request: &str, uid: &str) -> Evaluation;
}

/// Evaluates document `index` with every policy whose rules match it, appending to `out`: a
/// CREATE of the document, or for a policy that reads old objects when the document has one
/// ([`Document::old`]), its UPDATE from that.
pub fn evaluate_document<E: Evaluator + ?Sized>(
    evaluator: &mut E,
    index: usize,
    doc: &Document,
    sources: &[Source],
    plurals: &Plurals,
    out: &mut Vec<Evaluation>,
) {
    let resource = plurals.resource(&doc.info.group, &doc.info.version, &doc.info.kind);
    let cluster_scoped = plurals.cluster_scoped(&doc.info.group, &doc.info.version, &doc.info.kind);
    let operation_for = |evaluator: &E, policy: usize| {
        if doc.old.is_some() && evaluator.reads_old_object(policy) {
            Operation::Update
        } else {
            Operation::Create
        }
    };
    let matching: Vec<(usize, Operation)> = (0..evaluator.policy_count())
        .map(|p| (p, operation_for(evaluator, p)))
        .filter(|&(p, op)| evaluator.matches(p, &doc.info.group, &doc.info.version, &resource, op))
        .collect();
    if matching.is_empty() {
        return;
    }
    let source = sources.get(doc.source).map(|s| s.display.as_str()).unwrap_or("");
    let uid = uid(source, doc.index, doc.item);
    let (mut create, mut update) = (None, None);
    let start = out.len();
    for (policy, operation) in matching {
        let slot = if operation == Operation::Update {
            &mut update
        } else {
            &mut create
        };
        let request = slot.get_or_insert_with(|| request_json(doc, &resource, &uid, operation, cluster_scoped));
        let mut evaluation = evaluator.evaluate(policy, index, request, &uid);
        evaluation.operation = operation;
        out.push(evaluation);
    }
    say_once(&mut out[start..]);
    if let Some(input) = doc.kustomize {
        let validation = <ObjectValidation as syncguard::check::Check>::NAME;
        for evaluation in &mut out[start..] {
            leave_out(evaluation, |f| {
                f.listed.policy == validation
                    && !object_validation::stands_on_kustomize_input(&f.listed.rule, &f.listed.brief, input)
            });
        }
    }
}

/// Leaves the findings `dropped` picks out of `evaluation`, with their warnings; a rejection
/// none of the remaining findings makes is a warning (or an acceptance) again.
fn leave_out(evaluation: &mut Evaluation, dropped: impl Fn(&Reported) -> bool) {
    let (gone, kept): (Vec<Reported>, Vec<Reported>) = std::mem::take(&mut evaluation.findings)
        .into_iter()
        .partition(|f| dropped(f));
    evaluation.findings = kept;
    if gone.is_empty() {
        return;
    }
    // A warning is the finding's brief, and its README link after it.
    evaluation
        .warnings
        .retain(|w| !gone.iter().any(|f| w.starts_with(&f.listed.brief)));
    let rejecting: Vec<&Reported> = evaluation
        .findings
        .iter()
        .filter(|f| f.listed.action == "reject")
        .collect();
    if evaluation.verdict == Verdict::Rejected {
        if rejecting.is_empty() {
            evaluation.verdict = Verdict::Accepted;
            evaluation.message = None;
            evaluation.code = None;
        } else {
            // The policy's message lists the findings left out too: it is said again of the
            // rejecting findings that remain, in the policy's layout for one finding (its whole
            // text) or for several (numbered after the object's title).
            evaluation.message = Some(rejection_of(&rejecting));
        }
    }
    if evaluation.verdict == Verdict::Accepted && !evaluation.warnings.is_empty() {
        evaluation.verdict = Verdict::Warned;
    } else if evaluation.verdict == Verdict::Warned && evaluation.warnings.is_empty() {
        evaluation.verdict = Verdict::Accepted;
    }
}

/// The rejection message of `rejecting` (at least one finding, each text `<title>: <text>`): the
/// one finding's text, or `<title>: N problems. (1) <text> (2) <text>`. Not cut to the API
/// server's limits: scan shows it whole.
fn rejection_of(rejecting: &[&Reported]) -> String {
    if let [one] = rejecting {
        return one.text.clone();
    }
    let first = rejecting[0];
    let head = format!("{}: ", first.label);
    let common = first
        .text
        .find(&head)
        .map(|at| &first.text[..at + head.len()])
        .filter(|t| rejecting.iter().all(|f| f.text.starts_with(t)));
    let mut message = match common {
        Some(title) => format!("{title}{} problems.", rejecting.len()),
        None => format!("{} problems.", rejecting.len()),
    };
    for (i, finding) in rejecting.iter().enumerate() {
        let text = common
            .and_then(|title| finding.text.strip_prefix(title))
            .unwrap_or(&finding.text);
        message.push_str(&format!(" ({}) {text}", i + 1));
    }
    message
}

/// Among one document's evaluations, leaves out what one check's finding says that another's
/// already says of the same object: sync-drift's `schemaUnavailable` when object-validation
/// reports the object's CRD unknown or unreadable
/// ([`syncguard::checks::sync_drift::SAID_BY_OBJECT_VALIDATION`]), as the all-in-one does. A
/// module other than syncguard's, with no structured findings, is left as it answered.
fn say_once(evaluations: &mut [Evaluation]) {
    let (rule, said_by) = syncguard::checks::sync_drift::SAID_BY_OBJECT_VALIDATION;
    let validation = <ObjectValidation as syncguard::check::Check>::NAME;
    let drift = <syncguard::checks::sync_drift::SyncDrift as syncguard::check::Check>::NAME;
    let said = evaluations.iter().any(|e| {
        e.findings
            .iter()
            .any(|f| f.listed.policy == validation && said_by.contains(&f.listed.rule.as_str()))
    });
    if !said {
        return;
    }
    for evaluation in evaluations.iter_mut() {
        leave_out(evaluation, |f| f.listed.policy == drift && f.listed.rule == rule);
    }
}

/// The `kind-group-clash` findings among `documents` by policy `policy`: one evaluation per
/// clash, at its first document, rejected (or warned, for a deliberate pair of groups).
pub fn clash_evaluations(
    documents: &[Document],
    sources: &[Source],
    settings: &clash::Settings,
    plurals: &Plurals,
    policy: usize,
) -> Vec<Evaluation> {
    clash::find(documents, sources, settings, plurals)
        .into_iter()
        .map(|found| {
            let info = &documents[found.document].info;
            let cluster_scoped = plurals.cluster_scoped(&info.group, &info.version, &info.kind);
            let label = match (info.namespace.as_ref().filter(|_| !cluster_scoped), &info.name) {
                (Some(namespace), Some(name)) => format!("{namespace}/{name}"),
                (_, name) => name.clone().unwrap_or_default(),
            };
            let finding = Reported {
                listed: syncguard::render::Listed {
                    policy: clash::NAME.to_string(),
                    rule: syncguard::registry::KIND_GROUP_CLASH.findings[0].id.to_string(),
                    action: if found.reject { "reject" } else { "warn" }.to_string(),
                    path: String::new(),
                    brief: found.brief.clone(),
                    fix: None,
                },
                kind: info.kind.clone(),
                label,
                text: found.message.clone(),
                note: None,
            };
            let evaluation = if found.reject {
                Evaluation::new(
                    found.document,
                    policy,
                    false,
                    Some(found.message),
                    None,
                    Vec::new(),
                    None,
                )
            } else {
                Evaluation::new(found.document, policy, true, None, None, vec![found.brief], None)
            };
            Evaluation {
                related: found.related,
                ..evaluation
            }
            .with_findings(vec![finding])
        })
        .collect()
}

/// The `duplicate-object` findings among `documents` as warnings by policy `policy`: one per
/// object defined more than once, at its first definition, the others related.
pub fn duplicate_evaluations(documents: &[Document], sources: &[Source], policy: usize) -> Vec<Evaluation> {
    duplicates::find(documents, sources)
        .into_iter()
        .map(|found| {
            let info = &documents[found.document].info;
            let label = match (&info.namespace, &info.name) {
                (Some(namespace), Some(name)) if !namespace.is_empty() => format!("{namespace}/{name}"),
                (_, name) => name.clone().unwrap_or_default(),
            };
            let finding = Reported {
                listed: syncguard::render::Listed {
                    policy: duplicates::NAME.to_string(),
                    rule: syncguard::registry::DUPLICATE_OBJECT.findings[0].id.to_string(),
                    action: "warn".to_string(),
                    path: String::new(),
                    brief: found.brief.clone(),
                    fix: None,
                },
                kind: info.kind.clone(),
                label,
                text: found.message,
                note: None,
            };
            Evaluation {
                related: found.related,
                ..Evaluation::new(found.document, policy, true, None, None, vec![found.brief], None)
            }
            .with_findings(vec![finding])
        })
        .collect()
}

/// The `validate` payload of a policy: the AdmissionRequest `request` and the settings, both
/// JSON text, without re-encoding the request.
pub fn validate_payload(request: &str, settings: &str) -> String {
    let mut payload = String::with_capacity(request.len() + settings.len() + 32);
    payload.push_str("{\"request\":");
    payload.push_str(request);
    payload.push_str(",\"settings\":");
    payload.push_str(settings);
    payload.push('}');
    payload
}

/// The JSON Patch (RFC 6902) that turns the object of AdmissionRequest `request` into
/// `mutated`, or `None` when they are equal.
pub fn mutation_patch(request: &str, mutated: &Value) -> Option<Value> {
    let original = serde_json::from_str::<std::collections::BTreeMap<String, Value>>(request)
        .ok()
        .and_then(|mut fields| fields.remove("object"))
        .unwrap_or(Value::Null);
    let patch = json_patch::diff(&original, mutated);
    if patch.0.is_empty() {
        return None;
    }
    serde_json::to_value(&patch).ok()
}

/// The AdmissionResponse an engine gives for one request, field for field as kwctl prints it:
/// what `syncguard run` prints and scan reads, and what the tests compare with the cases'
/// expectations (from an engine's output, or made in process with [`AdmissionResponse::of_answer`]).
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    /// Echo of the request uid.
    #[serde(default)]
    pub uid: String,
    /// Whether the request is allowed.
    pub allowed: bool,
    /// `JSONPatch` when there is a patch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<String>,
    /// Base64 of the RFC 6902 patch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// Rejection details.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// Audit annotations.
    pub audit_annotations: Option<BTreeMap<String, String>>,
    /// Warnings.
    pub warnings: Option<Vec<String>>,
}

/// Rejection details of an AdmissionResponse.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct Status {
    /// Message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
}

impl AdmissionResponse {
    /// A rejection.
    pub fn reject(uid: &str, message: String, code: Option<u16>) -> Self {
        AdmissionResponse {
            uid: uid.to_string(),
            allowed: false,
            patch_type: None,
            patch: None,
            status: Some(Status {
                message: Some(message),
                code,
            }),
            audit_annotations: None,
            warnings: None,
        }
    }

    /// The response an engine gives for a policy's `answer` to AdmissionRequest `request` (its
    /// JSON text) of uid `uid`: the answer's status when it refuses, and a mutation of an accepted
    /// request as the JSON Patch from the request's object to the mutated one
    /// ([`mutation_patch`]), base64-encoded as kwctl writes it. Whether the policy may mutate is
    /// for the caller to decide.
    pub fn of_answer(uid: &str, request: &str, answer: ValidationResponse) -> Self {
        let mut response = AdmissionResponse {
            uid: uid.to_string(),
            allowed: answer.accepted,
            patch_type: None,
            patch: None,
            status: (!answer.accepted).then(|| Status {
                message: answer.message.clone(),
                code: answer.code,
            }),
            // Sorted here: the SDK's response keeps them in a HashMap.
            audit_annotations: answer.audit_annotations.map(|a| a.into_iter().collect()),
            warnings: answer.warnings,
        };
        let patch = answer
            .mutated_object
            .filter(|_| answer.accepted)
            .and_then(|mutated| mutation_patch(request, &mutated));
        if let Some(patch) = patch {
            let json = serde_json::to_vec(&patch).unwrap_or_default();
            response.patch_type = Some("JSONPatch".into());
            response.patch = Some(base64::engine::general_purpose::STANDARD.encode(json));
        }
        response
    }

    /// The refusal's message; empty when there is none.
    pub fn message(&self) -> &str {
        self.status
            .as_ref()
            .and_then(|s| s.message.as_deref())
            .unwrap_or_default()
    }

    /// The refusal's code, when it has one.
    pub fn code(&self) -> Option<u16> {
        self.status.as_ref().and_then(|s| s.code)
    }

    /// The warnings; empty when there are none.
    pub fn all_warnings(&self) -> &[String] {
        self.warnings.as_deref().unwrap_or_default()
    }

    /// The decoded JSON Patch, if any.
    pub fn patch_ops(&self) -> Option<Value> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(self.patch.as_ref()?)
            .ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{self, KustomizeInput};

    /// Evaluates through the core's checks with no cluster to ask (every lookup fails as a host
    /// that cannot reach the API server fails): policy 0 is sync-drift, policy 1
    /// object-validation, or policy 0 alone object-validation (`validation_only`).
    struct CoreChecks {
        /// How many policies the scan runs.
        count: usize,
        /// Whether the one policy is object-validation.
        validation_only: bool,
    }

    impl Evaluator for CoreChecks {
        fn policy_count(&self) -> usize {
            self.count
        }
        fn matches(&self, _: usize, _: &str, _: &str, _: &str, _: Operation) -> bool {
            true
        }
        fn reads_old_object(&self, _: usize) -> bool {
            false
        }
        fn evaluate(&mut self, policy: usize, document: usize, request: &str, _: &str) -> Evaluation {
            use syncguard::check;
            use syncguard::checks::object_validation::ObjectValidation;
            use syncguard::checks::sync_drift::SyncDrift;
            use syncguard::cluster::{Cluster, Items, LookupError};

            /// Every lookup fails.
            struct Unreachable;
            impl Cluster for Unreachable {
                fn list_all(&self, _: &str, _: &str, _: &[&str]) -> Result<Items, LookupError> {
                    Err(LookupError::Other("connection refused".into()))
                }
                fn get(&self, _: &str, _: &str, _: &str, _: Option<&str>, _: &[&str]) -> Result<String, LookupError> {
                    Err(LookupError::Other("connection refused".into()))
                }
            }
            let payload = validate_payload(request, "{}");
            let answer = match policy {
                0 if !self.validation_only => check::answer::<SyncDrift>(payload.as_bytes(), &Unreachable),
                _ => check::answer::<ObjectValidation>(payload.as_bytes(), &Unreachable),
            };
            let response = &answer.response;
            Evaluation::new(
                document,
                policy,
                response.accepted,
                response.message.clone(),
                response.code,
                response.warnings.clone(),
                None,
            )
            .with_findings(answer.findings())
        }
    }

    #[test]
    fn an_unreadable_crd_is_said_once_by_object_validation() {
        let text = "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: api, namespace: shop}\nspec: {secretName: api-tls}\n";
        let documents = input::objects_of(0, "c.yaml", text).documents;
        let sources = [Source {
            display: "c.yaml".into(),
            uri: "c.yaml".into(),
            text: None,
        }];
        let plurals = Plurals::new(&documents);
        let rules = |policies: usize| {
            let mut out = Vec::new();
            evaluate_document(
                &mut CoreChecks {
                    count: policies,
                    validation_only: false,
                },
                0,
                &documents[0],
                &sources,
                &plurals,
                &mut out,
            );
            out.iter()
                .map(|e| {
                    let rules: Vec<&str> = e.findings.iter().map(|f| f.listed.rule.as_str()).collect();
                    format!("{} {} {}", e.verdict.as_str(), e.warnings.len(), rules.join(","))
                })
                .collect::<Vec<_>>()
        };
        // sync-drift alone says it; beside object-validation, object-validation does.
        assert_eq!(rules(1), ["warned 1 schemaUnavailable"]);
        assert_eq!(rules(2), ["accepted 0 ", "warned 1 unknownCrd"]);
    }

    #[test]
    fn a_rejection_left_with_some_findings_of_a_kustomize_input_names_only_them() {
        // A resource a kustomization lists, without the selector kustomize adds (left out) and
        // with a replica count of the wrong type (kept), and a second wrong value (kept).
        let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: typo, namespace: kube-system}\n\
                    spec:\n  replicas: one\n  minReadySeconds: soon\n  template:\n    metadata:\n      labels: {app: typo}\n\
                    \x20   spec:\n      containers:\n      - {name: typo, image: typo}\n";
        let mut documents = input::objects_of(0, "d.yaml", text).documents;
        let sources = [Source {
            display: "d.yaml".into(),
            uri: "d.yaml".into(),
            text: None,
        }];
        let plurals = Plurals::new(&documents);
        let judge = |documents: &[Document]| {
            let mut out = Vec::new();
            evaluate_document(
                &mut CoreChecks {
                    count: 1,
                    validation_only: true,
                },
                0,
                &documents[0],
                &sources,
                &plurals,
                &mut out,
            );
            out.remove(0)
        };
        let whole = judge(&documents);
        assert_eq!(whole.findings.len(), 3, "{:?}", whole.findings);
        assert!(whole.message.as_deref().unwrap().contains("spec.selector"));
        documents[0].kustomize = Some(KustomizeInput::Resource);
        let kept = judge(&documents);
        assert_eq!(kept.verdict, Verdict::Rejected);
        let briefs: Vec<&str> = kept.findings.iter().map(|f| f.listed.brief.as_str()).collect();
        assert_eq!(briefs.len(), 2, "{briefs:?}");
        assert_eq!(
            kept.message.as_deref(),
            Some(
                "Deployment kube-system/typo: 2 problems. \
                 (1) spec.minReadySeconds: Invalid value: \"string\": spec.minReadySeconds in body must be of type integer: \"string\" \
                 (2) spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\""
            )
        );
        // With one finding kept, the message is that finding's text.
        let text = text.replace("  minReadySeconds: soon\n", "");
        let mut documents = input::objects_of(0, "d.yaml", &text).documents;
        documents[0].kustomize = Some(KustomizeInput::Resource);
        let kept = judge(&documents);
        assert_eq!(kept.message.as_deref(), Some(kept.findings[0].text.as_str()));
        assert!(!kept.message.unwrap().contains("spec.selector"));
    }

    #[test]
    fn documents_with_an_old_object_are_updates_for_the_checks_that_read_it() {
        let new = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: n}\ndata: {k: new}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: n}\n";
        let old = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: n}\ndata: {k: old}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: other}\n";
        let mut documents = input::objects_of(0, "new.yaml", new).documents;
        let base = input::objects_of(0, "old.yaml", old).documents;
        // Same group, kind, namespace and name: only the first has an old object.
        assert_eq!(input::attach_old(&mut documents, &base), 1);
        assert!(documents[1].old.is_none());
        let update: Value = serde_json::from_str(&request_json(
            &documents[0],
            "configmaps",
            "u",
            Operation::Update,
            false,
        ))
        .unwrap();
        assert_eq!(update["operation"], "UPDATE");
        assert_eq!(update["options"]["kind"], "UpdateOptions");
        assert_eq!(update["object"]["data"]["k"], "new");
        assert_eq!(update["oldObject"]["data"]["k"], "old");

        /// Policy 0 reads old objects, policy 1 does not; both see every operation.
        struct Two(Vec<(usize, Operation, Value)>);
        impl Evaluator for Two {
            fn policy_count(&self) -> usize {
                2
            }
            fn matches(&self, _: usize, _: &str, _: &str, _: &str, _: Operation) -> bool {
                true
            }
            fn reads_old_object(&self, policy: usize) -> bool {
                policy == 0
            }
            fn evaluate(&mut self, policy: usize, document: usize, request: &str, _: &str) -> Evaluation {
                let request: Value = serde_json::from_str(request).unwrap();
                let operation = serde_json::from_value(request["operation"].clone()).unwrap();
                self.0.push((policy, operation, request["oldObject"].clone()));
                Evaluation::new(document, policy, true, None, None, Vec::new(), None)
            }
        }
        let sources = [Source {
            display: "new.yaml".into(),
            uri: "new.yaml".into(),
            text: None,
        }];
        let plurals = Plurals::new(&documents);
        let mut seen = Two(Vec::new());
        let mut out = Vec::new();
        for (index, doc) in documents.iter().enumerate() {
            evaluate_document(&mut seen, index, doc, &sources, &plurals, &mut out);
        }
        let operations: Vec<(usize, Operation, bool)> =
            seen.0.iter().map(|(p, op, old)| (*p, *op, old.is_object())).collect();
        assert_eq!(
            operations,
            [
                (0, Operation::Update, true),
                (1, Operation::Create, false),
                (0, Operation::Create, false),
                (1, Operation::Create, false),
            ]
        );
        let recorded: Vec<Operation> = out.iter().map(|e| e.operation).collect();
        assert_eq!(
            recorded,
            [
                Operation::Update,
                Operation::Create,
                Operation::Create,
                Operation::Create
            ]
        );
    }

    #[test]
    fn requests_are_creates_of_the_object() {
        let contents = input::objects_of(
            0,
            "a.yaml",
            "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: n}\n",
        );
        let doc = &contents.documents[0];
        let request: Value = serde_json::from_str(&request_json(doc, "jobs", "u", Operation::Create, false)).unwrap();
        assert_eq!(request["operation"], "CREATE");
        assert!(request.get("oldObject").is_none());
        assert_eq!(
            request["kind"],
            serde_json::json!({"group": "batch", "version": "v1", "kind": "Job"})
        );
        assert_eq!(request["resource"]["resource"], "jobs");
        assert_eq!(request["namespace"], "n");
        assert_eq!(request["name"], "j");
        assert_eq!(request["object"]["metadata"]["name"], "j");
        assert!(request.get("oldObject").is_none());
    }

    #[test]
    fn cluster_scoped_objects_are_sent_without_a_namespace() {
        // As the API server sends them: the request names no namespace; the object keeps the
        // manifest's (sync-drift reports it).
        let contents = input::objects_of(
            0,
            "a.yaml",
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: admin, namespace: default}\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\nspec: {group: example.com, scope: Cluster, names: {kind: Widget, plural: widgets}}\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: team}\n---\napiVersion: other.example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: team}\n",
        );
        let plurals = Plurals::new(&contents.documents);
        let scoped: Vec<bool> = contents
            .documents
            .iter()
            .map(|d| plurals.cluster_scoped(&d.info.group, &d.info.version, &d.info.kind))
            .collect();
        assert_eq!(scoped, [true, true, true, false]);
        let doc = &contents.documents[0];
        let request: Value =
            serde_json::from_str(&request_json(doc, "clusterroles", "u", Operation::Create, true)).unwrap();
        assert!(request.get("namespace").is_none(), "{request}");
        assert_eq!(request["object"]["metadata"]["namespace"], "default");
    }

    #[test]
    fn uids_are_stable_and_distinct() {
        assert_eq!(uid("a.yaml", 0, None), uid("a.yaml", 0, None));
        assert_ne!(uid("a.yaml", 0, None), uid("a.yaml", 1, None));
        assert_ne!(uid("a.yaml", 0, None), uid("a.yaml", 0, Some(0)));
        assert_eq!(uid("a.yaml", 0, None).len(), 36);
        // The value earlier releases gave, so SARIF and JSON reports keep their uids.
        assert_eq!(uid("a.yaml", 0, None), "634a8df5-e757-a307-7df6-361218175cec");
    }

    #[test]
    fn verdicts_follow_the_response() {
        let verdict = |allowed, warnings: &[&str], patch: Option<Value>| {
            let warnings = warnings.iter().map(|w| w.to_string()).collect();
            Evaluation::new(0, 0, allowed, None, None, warnings, patch).verdict
        };
        assert_eq!(verdict(false, &["w"], None), Verdict::Rejected);
        assert_eq!(verdict(true, &["w"], Some(serde_json::json!([]))), Verdict::Mutated);
        assert_eq!(verdict(true, &["w"], None), Verdict::Warned);
        assert_eq!(verdict(true, &[], None), Verdict::Accepted);
    }

    #[test]
    fn patches_turn_the_object_into_the_mutation() {
        let request = r#"{"uid":"u","object":{"metadata":{"name":"a"}}}"#;
        assert_eq!(
            mutation_patch(request, &serde_json::json!({"metadata": {"name": "a"}})),
            None
        );
        assert_eq!(
            mutation_patch(
                request,
                &serde_json::json!({"metadata": {"name": "a", "labels": {"x": "y"}}})
            ),
            Some(serde_json::json!([{"op": "add", "path": "/metadata/labels", "value": {"x": "y"}}]))
        );
    }
}
