//! syncguard in the browser: the evaluation of `syncguard scan`, compiled with wasm-bindgen for
//! `wasm32-unknown-unknown` and driven by a static page (`make playground`).
//!
//! Everything but the policies' decisions is `syncguard scan`'s own code, from the
//! `syncguard-scan` crate: the multi-document YAML and JSON reading, the AdmissionRequest each
//! object becomes, the offline cluster that answers context-aware lookups from the pasted
//! objects and the optional snapshot, `kind-group-clash`, the `--config` file, and the UPDATE
//! from an object's old version (the optional old objects) for the checks that judge updates.
//! Where the
//! command runs each policy's WebAssembly module through wasmtime, the playground runs the same
//! core check compiled into this module ([`CoreEvaluator`]), on the same `validate` payload.
//!
//! The page calls [`evaluate`] and renders the JSON it returns (see [`report`]).

use serde::Serialize;
use serde_json::Value;
use syncguard::cluster::Cluster;
use syncguard::registry::{CHECKS, Entry};
use syncguard::render::ReportAnswer;
use syncguard_scan::cluster::{OfflineCluster, Plurals};
use syncguard_scan::config::Config;
use syncguard_scan::evaluate::{self, Evaluation, Evaluator};
use syncguard_scan::locate::Locator;
use syncguard_scan::rows::{self, CrdRow, ErrorRow, FindingRow, PolicyRow, ResultRow};
use syncguard_scan::{Operation, clash, copies, input};
use wasm_bindgen::prelude::wasm_bindgen;

/// Where the policies' documentation lives (each policy's README is `policies/<name>/README.md`).
const REPOSITORY: &str = "https://github.com/syncguard/syncguard";
/// The origin of every policy on the page: compiled into it.
const BUILT_IN: &str = "built-in";

/// Name the pasted manifests have in messages (`syncguard scan` names the file).
pub const MANIFESTS: &str = "manifests";

/// Name the pasted old objects (the previous versions of the manifests' objects) have in errors.
pub const OLD: &str = "old";

/// One policy of the playground: a core check of the registry and its metadata.yml.
pub struct Policy {
    /// Policy name (its folder under `policies/`).
    pub name: &'static str,
    metadata: &'static str,
    rules: &'static [syncguard::rules::Rule],
    report: fn(&[u8], &dyn Cluster) -> Vec<u8>,
    validate_settings: fn(Option<&str>) -> Result<(), String>,
    reads_old_object: bool,
}

impl Policy {
    /// The playground's policy for a check of the registry.
    fn of(entry: &Entry) -> Policy {
        let metadata = syncguard::rules::METADATA
            .iter()
            .find(|(name, _)| *name == entry.name)
            .map_or("", |(_, text)| *text);
        Policy {
            name: entry.name,
            metadata,
            rules: entry.rules,
            report: entry.report,
            validate_settings: entry.check_settings,
            reads_old_object: entry.reads_old_object,
        }
    }
}

/// The policies `syncguard scan` embeds, in its order (by name): every check of the registry.
pub fn policies() -> Vec<Policy> {
    let mut all: Vec<Policy> = CHECKS.iter().map(Policy::of).collect();
    all.sort_by_key(|policy| policy.name);
    all
}

/// The annotations of a metadata.yml that the page shows.
#[derive(serde::Deserialize, Default)]
struct Metadata {
    #[serde(default)]
    annotations: std::collections::BTreeMap<String, String>,
}

impl Policy {
    fn annotation(&self, key: &str) -> Option<String> {
        // The metadata files are the repository's own, parsed by a test: never malformed here.
        serde_yaml_ng::from_str::<Metadata>(self.metadata)
            .unwrap_or_default()
            .annotations
            .remove(key)
    }
}

/// A policy that runs, with its settings as JSON text.
struct Active {
    policy: Policy,
    settings: String,
}

/// The playground's [`Evaluator`]: each policy's core check on the `validate` payload the
/// command sends its module, lookups answered by the offline cluster.
pub struct CoreEvaluator {
    active: Vec<Active>,
    cluster: OfflineCluster,
}

impl Evaluator for CoreEvaluator {
    fn policy_count(&self) -> usize {
        self.active.len()
    }

    fn matches(&self, policy: usize, group: &str, version: &str, resource: &str, operation: Operation) -> bool {
        let mut request = syncguard::admission::Request::default();
        request.resource.group = group.into();
        request.resource.version = version.into();
        request.resource.resource = resource.into();
        request.operation = Some(operation);
        syncguard::rules::any_matches(self.active[policy].policy.rules, &request)
    }

    fn reads_old_object(&self, policy: usize) -> bool {
        self.active[policy].policy.reads_old_object
    }

    fn evaluate(&mut self, policy: usize, document: usize, request: &str, _uid: &str) -> Evaluation {
        let active = &self.active[policy];
        let payload = evaluate::validate_payload(request, &active.settings);
        // The check's structured report: its `validate` answer and every finding whole, as the
        // command reads it from the modules.
        let report = (active.policy.report)(payload.as_bytes(), &self.cluster);
        match serde_json::from_slice::<ReportAnswer>(&report) {
            Ok(ReportAnswer {
                response: answer,
                findings,
            }) => {
                // syncguard's non-mutating policies never return a mutated object, so the
                // command's refusal of such a mutation has no counterpart here.
                let patch = answer
                    .mutated_object
                    .as_ref()
                    .filter(|_| answer.accepted)
                    .and_then(|mutated| evaluate::mutation_patch(request, mutated));
                Evaluation::new(
                    document,
                    policy,
                    answer.accepted,
                    answer.message,
                    answer.code,
                    answer.warnings.unwrap_or_default(),
                    patch,
                )
                .with_findings(findings)
            }
            Err(e) => Evaluation::new(
                document,
                policy,
                false,
                Some(format!(
                    "internal error: the check's answer is not a validation response: {e}"
                )),
                Some(500),
                Vec::new(),
                None,
            ),
        }
    }
}

/// The page's inputs: the four text areas (each may be empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct State {
    /// Manifests: YAML or JSON, any number of documents, `List`s expanded.
    pub manifests: String,
    /// Objects of the cluster (`kubectl get -o yaml` output), for context-aware policies.
    pub snapshot: String,
    /// What `syncguard scan --config FILE` reads: which policies run, with which settings.
    pub config: String,
    /// Old objects: what the cluster holds now. A manifest of the same group, kind, namespace
    /// and name is judged as an UPDATE from it by the checks that judge updates.
    pub old: String,
}

/// Evaluates a state as `syncguard scan --config C --cluster-snapshot S -v manifests` would,
/// and describes the result as JSON:
///
/// - `policies`: every policy that runs, in report order: `name`, `description`, `version`,
///   `readme` (the link to its documentation);
/// - `documents`: every object found: `line`, `apiVersion`, `kind`, `name`, `namespace`, and
///   `old` (whether the old objects hold its previous version);
/// - `results`: every evaluation, by document then policy, each a
///   [`syncguard_scan::rows::ResultRow`], the row `syncguard scan --format json` writes (with
///   its findings' rows), placed by `document` (index in `documents`) and `line` where the
///   command names the file; `related` lists the indexes of the other documents of a
///   `kind-group-clash` finding, `copies` those of the document's identical copies (judged once,
///   with it), and `crd` the CRD copies a custom resource was judged against when there are
///   several (`used`, `others`, `differ`);
/// - `errors`: input problems, each with `input` (`manifests`, `snapshot`, `old` or
///   `config`), `line` (or `null`) and `message`. A configuration, snapshot or old-objects
///   problem stops the evaluation, as the first two stop the command (an unreadable old
///   object would silently turn an update into a create).
pub fn report(state: &State) -> Value {
    serde_json::to_value(page_report(state)).unwrap_or_default()
}

/// The page's whole answer, as [`report`] describes it.
#[derive(Debug, Default, Serialize)]
pub struct PageReport {
    /// Every policy that runs, in report order.
    pub policies: Vec<PolicyRow>,
    /// Every object found.
    pub documents: Vec<PageDocument>,
    /// Every evaluation: the rows `syncguard scan --format json` writes, placed on the page.
    pub results: Vec<ResultRow<PagePlace, usize>>,
    /// Input problems.
    pub errors: Vec<ErrorRow<PageInput>>,
}

/// An object found in the manifests.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageDocument {
    /// The line its content starts on.
    pub line: usize,
    /// Its `apiVersion`.
    pub api_version: String,
    /// Its `kind`.
    pub kind: String,
    /// Its `metadata.name`.
    pub name: Option<String>,
    /// Its `metadata.namespace`.
    pub namespace: Option<String>,
    /// Whether the old objects hold its previous version.
    pub old: bool,
}

/// Which of the page's inputs a problem is in: `manifests`, `snapshot`, `old` or `config`.
#[derive(Debug, Serialize)]
pub struct PageInput {
    /// The input's name.
    pub input: &'static str,
}

/// An error of `input` at `line`.
fn page_error(input: &'static str, line: Option<usize>, message: String) -> ErrorRow<PageInput> {
    ErrorRow {
        place: PageInput { input },
        line,
        message,
    }
}

/// [`report`]'s answer, typed.
pub fn page_report(state: &State) -> PageReport {
    let fail = |source: &'static str, line: Option<usize>, message: String| PageReport {
        errors: vec![page_error(source, line, message)],
        ..PageReport::default()
    };
    let config = match Config::parse(&state.config) {
        Ok(config) => config,
        Err(e) => return fail("config", None, format!("configuration: {e}")),
    };
    let all = policies();
    let known: Vec<&str> = all.iter().map(|p| p.name).collect();
    if let Err(e) = config.check_names(&known, "configuration") {
        return fail("config", None, e.to_string());
    }
    let mut active = Vec::new();
    for policy in all {
        let Some(settings) = config.settings_of(policy.name) else {
            continue;
        };
        let settings = settings.to_string();
        if let Err(message) = (policy.validate_settings)(Some(&settings)) {
            let place = if state.config.trim().is_empty() {
                "default settings"
            } else {
                "settings in the configuration"
            };
            return fail(
                "config",
                None,
                format!("policy {}: invalid {place}: {message}", policy.name),
            );
        }
        active.push(Active { policy, settings });
    }
    let clash_settings = match config.clash_settings("configuration") {
        Ok(settings) => settings,
        Err(e) => return fail("config", None, e.to_string()),
    };
    let duplicates_enabled = match config.duplicates_enabled("configuration") {
        Ok(enabled) => enabled,
        Err(e) => return fail("config", None, e.to_string()),
    };
    let snapshot = match syncguard_scan::cluster::snapshot_of("snapshot", &state.snapshot) {
        Ok(documents) => documents,
        Err(errors) => {
            return PageReport {
                errors: errors
                    .into_iter()
                    .map(|e| page_error("snapshot", e.line, e.message))
                    .collect(),
                ..PageReport::default()
            };
        }
    };
    let old = input::objects_of(usize::MAX, OLD, &state.old);
    if !old.errors.is_empty() {
        return PageReport {
            errors: old
                .errors
                .into_iter()
                .map(|e| page_error(OLD, e.line, format!("old objects: {}", e.message)))
                .collect(),
            ..PageReport::default()
        };
    }
    let contents = input::objects_of(0, MANIFESTS, &state.manifests);
    let mut documents = contents.documents;
    input::attach_old(&mut documents, &old.documents);
    let sources = vec![input::Source {
        display: MANIFESTS.to_string(),
        uri: MANIFESTS.to_string(),
        text: Some(state.manifests.as_str().into()),
    }];
    let plurals = Plurals::new(snapshot.iter().chain(&documents));
    plurals.mark(&mut documents);
    let mut evaluator = CoreEvaluator {
        active,
        cluster: OfflineCluster::new(&snapshot, &documents),
    };
    let mut evaluations = Vec::new();
    // Identical copies of an object are judged once, with the first, as the command does.
    let copy_of = copies::identical(&documents);
    for (index, doc) in documents.iter().enumerate() {
        if copy_of[index].is_none() {
            evaluate::evaluate_document(&mut evaluator, index, doc, &sources, &plurals, &mut evaluations);
        }
    }
    let copies = copies::copies_of(&copy_of);
    let crds = copies::CrdIndex::new(&documents);
    let mut infos: Vec<PolicyRow> = evaluator
        .active
        .iter()
        .map(|a| PolicyRow {
            name: a.policy.name.to_string(),
            origin: BUILT_IN.to_string(),
            description: a.policy.annotation("io.kubewarden.policy.description"),
            version: a.policy.annotation("io.kubewarden.policy.version"),
            readme: Some(format!("{REPOSITORY}/tree/main/policies/{}#readme", a.policy.name)),
        })
        .collect();
    if let Some(settings) = &clash_settings {
        evaluations.extend(evaluate::clash_evaluations(
            &documents,
            &sources,
            settings,
            &plurals,
            infos.len(),
        ));
        infos.push(PolicyRow::of_tree_check(&syncguard::registry::KIND_GROUP_CLASH));
    }
    if duplicates_enabled {
        evaluations.extend(evaluate::duplicate_evaluations(&documents, &sources, infos.len()));
        infos.push(PolicyRow::of_tree_check(&syncguard::registry::DUPLICATE_OBJECT));
    }
    evaluations.sort_by_key(|e| (e.document, e.policy));
    // Read only when a finding needs a line (as the command reads only files with findings).
    let mut locator: Option<Locator> = None;
    let results: Vec<ResultRow<PagePlace, usize>> = evaluations
        .iter()
        .map(|e| {
            let doc = &documents[e.document];
            let policy = infos.get(e.policy).map(|p| p.name.clone()).unwrap_or_default();
            let findings = e
                .findings
                .iter()
                .map(|reported| {
                    let path = &reported.listed.path;
                    let read =
                        (!path.is_empty()).then(|| &*locator.get_or_insert_with(|| Locator::new(&state.manifests)));
                    let position = rows::position(doc, path, read);
                    FindingRow::new(&policy, reported, position)
                })
                .collect();
            let place = PagePlace {
                document: e.document,
                line: doc.line,
            };
            ResultRow::new(e, &policy, place, e.related.clone(), findings)
                .suppress(&rows::suppressions(&doc.object))
                .with_copies(copies.get(&e.document).cloned().unwrap_or_default())
                .with_crd(crds.copies(doc, &documents).map(|c| CrdRow::new(&c, |i| i)))
        })
        .collect();
    let described = documents
        .iter()
        .map(|d| PageDocument {
            line: d.line,
            api_version: d.info.api_version.clone(),
            kind: d.info.kind.clone(),
            name: d.info.name.clone(),
            namespace: d.info.namespace.clone().filter(|_| !d.cluster_scoped),
            old: d.old.is_some(),
        })
        .collect();
    let names: Vec<&str> = infos.iter().map(|p| p.name.as_str()).collect();
    let suppression_errors: Vec<_> = rows::suppression_problems(&documents, &names)
        .into_iter()
        .map(|(i, message)| page_error(MANIFESTS, Some(documents[i].line), message))
        .collect();
    let errors = contents
        .errors
        .into_iter()
        .map(|e| page_error(MANIFESTS, e.line, e.message))
        .chain(suppression_errors)
        .collect();
    PageReport {
        policies: infos,
        documents: described,
        results,
        errors,
    }
}

/// Where a judged document is on the page: its index in the report's `documents`, and its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PagePlace {
    /// The document's index in `documents`.
    pub document: usize,
    /// The line its content starts on.
    pub line: usize,
}

/// The page's entry point: [`report`] of the four inputs, as JSON text.
#[wasm_bindgen]
pub fn evaluate(manifests: &str, snapshot: &str, config: &str, old: &str) -> String {
    report(&State {
        manifests: manifests.to_string(),
        snapshot: snapshot.to_string(),
        config: config.to_string(),
        old: old.to_string(),
    })
    .to_string()
}

/// One of the page's examples: a seed failure of a policy, from the policy's own fixtures.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Example {
    /// Stable id (the page's `data-example`).
    pub id: &'static str,
    /// The policy it shows.
    pub policy: &'static str,
    /// What it shows, in a few words (the button's text).
    pub title: &'static str,
    /// The verdict `policy` gives on it.
    pub verdict: &'static str,
    /// Where it comes from.
    pub source: &'static str,
    /// The inputs it fills.
    pub state: State,
}

/// The object of an AdmissionRequest fixture (`{"object": ..., "oldObject": ...}`, the shape
/// of the policies' `test_data/*.json`) under `key`, as YAML.
fn object_of(request: &str, key: &str) -> String {
    // The fixtures are the repository's own, read by the tests: never malformed here.
    let request: Value = serde_json::from_str(request).unwrap_or_default();
    serde_yaml_ng::to_string(&request[key]).unwrap_or_default()
}

/// The first object a replay file's first exchange answers with (a List's first item), as
/// YAML: the cluster's state in crd-kind-collision's fixtures.
fn replayed_object(replay: &str) -> String {
    let exchanges: serde_yaml_ng::Value = serde_yaml_ng::from_str(replay).unwrap_or_default();
    let payload = exchanges[0]["response"]["payload"].as_str().unwrap_or_default();
    let list: Value = serde_json::from_str(payload).unwrap_or_default();
    serde_yaml_ng::to_string(&list["items"][0]).unwrap_or_default()
}

/// The page's examples: at least one per policy, each the failure the policy was written for.
pub fn examples() -> Vec<Example> {
    vec![
        Example {
            id: "kube-ovn-crd",
            policy: "crd-schema-fields",
            title: "Kube-OVN's CRD with keys the API server drops",
            verdict: "rejected",
            source: "policies/crd-schema-fields/test_data/kube-ovn-offline.json",
            state: State {
                manifests: object_of(
                    include_str!("../../policies/crd-schema-fields/test_data/kube-ovn-offline.json"),
                    "object",
                ),
                ..State::default()
            },
        },
        Example {
            id: "two-shirts",
            policy: "crd-kind-collision",
            title: "Two CRDs of one kind (Helm's Shirt repro)",
            verdict: "rejected",
            source: "policies/crd-kind-collision/test_data/shirts-stable-create.json, replay-beta-shirts.yml",
            state: State {
                manifests: object_of(
                    include_str!("../../policies/crd-kind-collision/test_data/shirts-stable-create.json"),
                    "object",
                ),
                snapshot: replayed_object(include_str!(
                    "../../policies/crd-kind-collision/test_data/replay-beta-shirts.yml"
                )),
                ..State::default()
            },
        },
        Example {
            id: "fleet-adoption",
            policy: "ownership-markers",
            title: "A ClusterIssuer Fleet adopts without Helm's markers",
            verdict: "rejected",
            source: "policies/ownership-markers/test_data/clusterissuer-no-managed-by-fleet-adopted.json",
            state: State {
                manifests: object_of(
                    include_str!(
                        "../../policies/ownership-markers/test_data/clusterissuer-no-managed-by-fleet-adopted.json"
                    ),
                    "object",
                ),
                ..State::default()
            },
        },
        Example {
            id: "kyverno-hook-job",
            policy: "hook-job-safety",
            title: "Kyverno's hook Job with a TTL",
            verdict: "warned",
            source: "policies/hook-job-safety/test_data/kyverno-clean-reports-ttl.json",
            state: State {
                manifests: object_of(
                    include_str!("../../policies/hook-job-safety/test_data/kyverno-clean-reports-ttl.json"),
                    "object",
                ),
                ..State::default()
            },
        },
        Example {
            id: "gateway-api-stored-versions",
            policy: "crd-safe-upgrade",
            title: "Gateway API's GRPCRoute CRD dropping a stored version",
            verdict: "rejected",
            source: "policies/crd-safe-upgrade/test_data/grpcroute-v1.0-experimental-v1alpha2-stored-to-v1.2-standard.json",
            state: {
                let request = include_str!(
                    "../../policies/crd-safe-upgrade/test_data/grpcroute-v1.0-experimental-v1alpha2-stored-to-v1.2-standard.json"
                );
                State {
                    manifests: object_of(request, "object"),
                    old: object_of(request, "oldObject"),
                    ..State::default()
                }
            },
        },
        Example {
            id: "crd-field-removed",
            policy: "crd-safe-upgrade",
            title: "A CRD update that drops a field",
            verdict: "rejected",
            source: "playground/presets/crd-field-removed/",
            state: State {
                manifests: include_str!("../presets/crd-field-removed/new.yaml").to_string(),
                old: include_str!("../presets/crd-field-removed/old.yaml").to_string(),
                ..State::default()
            },
        },
        Example {
            id: "shirts-in-two-groups",
            policy: clash::NAME,
            title: "One Shirt in two API groups (Helm issue 13582)",
            verdict: "rejected",
            source: "cli/tests/data/scan/findings/clash/",
            state: State {
                manifests: [
                    include_str!("../../cli/tests/data/scan/findings/clash/stable.yaml"),
                    include_str!("../../cli/tests/data/scan/findings/clash/beta.yaml"),
                ]
                .join("---\n"),
                ..State::default()
            },
        },
        Example {
            id: "widget-invalid",
            policy: "object-validation",
            title: "A custom resource its CRD's schema refuses",
            verdict: "rejected",
            source: "playground/presets/widget-invalid/",
            state: State {
                manifests: include_str!("../presets/widget-invalid/manifests.yaml").to_string(),
                ..State::default()
            },
        },
        Example {
            id: "keda-drift",
            policy: "sync-drift",
            title: "KEDA's Deployments, stored other than applied (kubectl apply)",
            verdict: "warned",
            source: "policies/sync-drift/test_data/real/keda-deployments.yaml",
            state: State {
                manifests: include_str!("../../policies/sync-drift/test_data/real/keda-deployments.yaml").to_string(),
                // Their drift is what `kubectl apply` shows (`configured` on every run); the
                // default tools, the GitOps ones, show none of it.
                config: "policies:\n  sync-drift:\n    settings: {tools: [argocd, flux, fleet, kubectl]}\n".to_string(),
                ..State::default()
            },
        },
    ]
}

/// [`examples`] for the page, as a JSON array.
#[wasm_bindgen]
pub fn examples_json() -> String {
    serde_json::to_string(&examples()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn verdicts(state: &State) -> Vec<(u64, String, String)> {
        let report = report(state);
        assert_eq!(report["errors"], json!([]), "{report}");
        report["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["document"].as_u64().unwrap(),
                    r["policy"].as_str().unwrap().to_string(),
                    r["verdict"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn every_policy_is_described_with_its_metadata() {
        let report = report(&State::default());
        let names: Vec<&str> = report["policies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "crd-kind-collision",
                "crd-safe-upgrade",
                "crd-schema-fields",
                "hook-job-safety",
                "object-validation",
                "ownership-markers",
                "sync-drift",
                "kind-group-clash",
                "duplicate-object"
            ]
        );
        assert!(
            report["policies"]
                .as_array()
                .unwrap()
                .iter()
                .all(|p| p["origin"] == "built-in")
        );
        for policy in report["policies"].as_array().unwrap() {
            assert!(policy["description"].as_str().is_some_and(|d| d.len() > 20), "{policy}");
        }
        for p in policies() {
            let metadata: serde_yaml_ng::Value = serde_yaml_ng::from_str(p.metadata).unwrap();
            let strings = |rule: &serde_yaml_ng::Value, key: &str| -> Vec<String> {
                let list = rule[key].as_sequence().unwrap();
                list.iter().map(|v| v.as_str().unwrap().to_string()).collect()
            };
            let declared: Vec<[Vec<String>; 4]> = metadata["rules"]
                .as_sequence()
                .unwrap()
                .iter()
                .map(|r| ["apiGroups", "apiVersions", "resources", "operations"].map(|key| strings(r, key)))
                .collect();
            let owned = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
            let compiled: Vec<[Vec<String>; 4]> = p
                .rules
                .iter()
                .map(|r| {
                    [
                        owned(r.api_groups),
                        owned(r.api_versions),
                        owned(r.resources),
                        owned(r.operations),
                    ]
                })
                .collect();
            assert_eq!(
                declared, compiled,
                "{}: the check's rules are its metadata.yml's",
                p.name
            );
        }
    }

    #[test]
    fn clashes_and_config() {
        // Two Shirts of one Helm release (their meta.helm.sh annotations).
        let release = "annotations: {meta.helm.sh/release-name: shop, meta.helm.sh/release-namespace: default}";
        let shirts = format!(
            "apiVersion: stable.example.com/v1\nkind: Shirt\nmetadata: {{name: s, {release}}}\n---\napiVersion: beta.example.com/v1\nkind: Shirt\nmetadata: {{name: s, {release}}}\n"
        );
        let state = State {
            manifests: shirts.clone(),
            ..State::default()
        };
        let clashes = |state: &State| -> Vec<(u64, String, String)> {
            let all = verdicts(state);
            assert!(
                all.iter().any(|(_, policy, _)| policy == "ownership-markers"),
                "{all:?}"
            );
            all.into_iter().filter(|(_, policy, _)| policy == clash::NAME).collect()
        };
        assert_eq!(
            clashes(&state),
            [(0, "kind-group-clash".to_string(), "rejected".to_string())],
            "one finding for the set"
        );
        let no_release = State {
            manifests: shirts.replace(&format!(", {release}"), ""),
            ..state.clone()
        };
        assert!(
            clashes(&no_release).is_empty(),
            "objects of no release are not compared"
        );
        let allowed = State {
            config: "policies:\n  kind-group-clash:\n    settings: {allowedKinds: [Shirt]}\n".to_string(),
            ..state.clone()
        };
        assert!(clashes(&allowed).is_empty());
        let unknown = report(&State {
            config: "policies: {nope: {}}".to_string(),
            ..state
        });
        let message = unknown["errors"][0]["message"].as_str().unwrap();
        assert!(message.contains("there is no policy named nope"), "{message}");
    }

    /// The result rows of `policy` in a report: (document, operation, verdict, message).
    fn rows_of(report: &Value, policy: &str) -> Vec<(u64, String, String, String)> {
        assert_eq!(report["errors"], json!([]), "{report}");
        report["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["policy"] == policy)
            .map(|r| {
                (
                    r["document"].as_u64().unwrap(),
                    r["operation"].as_str().unwrap().to_string(),
                    r["verdict"].as_str().unwrap().to_string(),
                    r["message"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn an_old_version_makes_the_crd_an_update() {
        // crd-safe-upgrade's case `field-removed`: spec.count leaves both versions of the
        // synthetic Widget CRD installed as it is in the fixture.
        let installed = include_str!("../../policies/crd-safe-upgrade/test_data/synthetic/widgets.json");
        let mut crd: Value = serde_json::from_str(installed).unwrap();
        for version in crd["spec"]["versions"].as_array_mut().unwrap() {
            let spec = &mut version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
            assert!(spec.as_object_mut().unwrap().remove("count").is_some());
        }
        let without_old = State {
            manifests: serde_json::to_string_pretty(&crd).unwrap(),
            ..State::default()
        };
        let with_old = State {
            old: installed.to_string(),
            ..without_old.clone()
        };

        let updated = report(&with_old);
        assert_eq!(updated["documents"][0]["old"], true);
        let judged = rows_of(&updated, "crd-safe-upgrade");
        assert_eq!(judged.len(), 1, "{judged:?}");
        let (document, operation, verdict, message) = &judged[0];
        assert_eq!(
            (*document, operation.as_str(), verdict.as_str()),
            (0, "UPDATE", "rejected")
        );
        assert!(
            message.contains("properties.count (v1): removed.") && message.contains("existingFieldRemoval"),
            "{message}"
        );
        // crd-kind-collision judges updates too (the clash they add; there is none here).
        let collision = rows_of(&updated, "crd-kind-collision");
        assert_eq!(collision.len(), 1);
        assert_eq!(
            (collision[0].1.as_str(), collision[0].2.as_str()),
            ("UPDATE", "accepted")
        );
        // The checks that do not judge updates see the CREATE they always see.
        let fields = rows_of(&updated, "crd-schema-fields");
        assert_eq!(fields.len(), 1);
        assert_eq!(fields[0].1, "CREATE");

        // Without its old version the same CRD is a CREATE, which crd-safe-upgrade accepts.
        let created = report(&without_old);
        assert_eq!(created["documents"][0]["old"], false);
        assert_eq!(
            rows_of(&created, "crd-safe-upgrade"),
            [(0, "CREATE".to_string(), "accepted".to_string(), String::new())]
        );

        // An old object of another name is not this CRD's old version.
        let other = State {
            old: installed.replace("widgets.example.com", "gadgets.example.com"),
            ..without_old
        };
        let created = report(&other);
        assert_eq!(created["documents"][0]["old"], false);
        assert_eq!(rows_of(&created, "crd-safe-upgrade")[0].1, "CREATE");
    }

    #[test]
    fn every_example_shows_its_policy_s_verdict() {
        let all = examples();
        let mut shown: Vec<&str> = all.iter().map(|e| e.policy).collect();
        shown.sort_unstable();
        shown.dedup();
        let mut named: Vec<&str> = policies().iter().map(|p| p.name).chain([clash::NAME]).collect();
        named.sort_unstable();
        assert_eq!(shown, named, "one example per policy at least");
        for example in &all {
            let report = report(&example.state);
            let judged = rows_of(&report, example.policy);
            assert!(
                judged.iter().any(|(_, _, verdict, _)| verdict == example.verdict),
                "{}: {judged:?}",
                example.id
            );
            // Every policy's findings carry their line in the manifests and their README link.
            for row in report["results"].as_array().unwrap() {
                for finding in row["findings"].as_array().unwrap() {
                    assert!(finding["line"].as_u64().is_some_and(|l| l >= 1), "{finding}");
                    let link = finding["readme"].as_str().unwrap();
                    assert!(link.contains('#') && !link.ends_with('#'), "{link}");
                }
            }
        }
        let json: Value = serde_json::from_str(&examples_json()).unwrap();
        assert_eq!(json.as_array().unwrap().len(), all.len());
    }

    #[test]
    fn findings_carry_the_line_of_their_field() {
        // KEDA's keda-operator Deployment: the cpu limit `1000m` is stored as `1`.
        let keda = examples().into_iter().find(|e| e.id == "keda-drift").unwrap();
        let report = report(&keda.state);
        let text = &keda.state.manifests;
        let quantity = report["results"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r["findings"].as_array().unwrap())
            .find(|f| f["rule"] == "quantity")
            .expect("a quantity finding");
        let line = quantity["line"].as_u64().unwrap() as usize;
        let at = text.lines().nth(line - 1).unwrap();
        assert!(at.trim_start().starts_with("cpu:"), "line {line}: {at}");
        assert_eq!(quantity["action"], "warn");
        assert_eq!(
            quantity["path"],
            "spec.template.spec.containers[0].resources.limits[cpu]"
        );
    }

    #[test]
    fn a_custom_resource_beside_its_crd_shows_the_api_server_s_messages_at_their_lines() {
        let example = examples().into_iter().find(|e| e.id == "widget-invalid").unwrap();
        let report = report(&example.state);
        let text = &example.state.manifests;
        let findings: Vec<&Value> = report["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["policy"] == "object-validation")
            .flat_map(|r| r["findings"].as_array().unwrap())
            .collect();
        let at = |path: &str| -> (&str, String) {
            let finding = findings
                .iter()
                .find(|f| f["path"] == path)
                .unwrap_or_else(|| panic!("no finding at {path}: {findings:?}"));
            let line = finding["line"].as_u64().unwrap() as usize;
            (text.lines().nth(line - 1).unwrap().trim_start(), finding.to_string())
        };
        let (line, finding) = at("spec.size");
        assert!(line.starts_with("size: 12"), "{line}");
        assert!(
            finding.contains("spec.size: Invalid value: 12: spec.size in body should be less than or equal to 10"),
            "{finding}"
        );
        let (line, finding) = at("spec.mode");
        assert!(line.starts_with("mode: fast"), "{line}");
        assert!(
            finding.contains(r#"spec.mode: Unsupported value: \"fast\": supported values: \"Fast\", \"Slow\""#),
            "{finding}"
        );
        // The CRD's CEL rule, at the object it sits on.
        let (line, finding) = at("spec");
        assert!(line.starts_with("spec:"), "{line}");
        assert!(
            finding.contains("spec: Invalid value: minReplicas must not exceed maxReplicas"),
            "{finding}"
        );
    }

    #[test]
    fn the_update_example_is_rejected_for_the_removed_field() {
        let example = examples()
            .into_iter()
            .find(|e| e.id == "crd-field-removed")
            .unwrap()
            .state;
        let judged = rows_of(&report(&example), "crd-safe-upgrade");
        assert_eq!(judged.len(), 1, "{judged:?}");
        assert_eq!((judged[0].1.as_str(), judged[0].2.as_str()), ("UPDATE", "rejected"));
        assert!(
            judged[0]
                .3
                .contains("spec.properties.count (v1): removed. existingFieldRemoval"),
            "{}",
            judged[0].3
        );
        // The new version on its own is a clean CRD for every policy.
        let alone = State {
            old: String::new(),
            ..example
        };
        assert!(verdicts(&alone).iter().all(|(_, _, verdict)| verdict == "accepted"));
    }

    #[test]
    fn broken_old_objects_stop_the_evaluation_with_their_line() {
        let broken = report(&State {
            manifests: include_str!("../presets/crd-field-removed/new.yaml").to_string(),
            old: include_str!("../../cli/tests/data/scan/bad/broken.yaml").to_string(),
            ..State::default()
        });
        assert_eq!(broken["results"], json!([]));
        assert_eq!(broken["errors"][0]["input"], "old");
        assert_eq!(broken["errors"][0]["line"], 11, "{broken}");
        let message = broken["errors"][0]["message"].as_str().unwrap();
        assert!(message.starts_with("old objects: invalid YAML"), "{message}");
    }

    #[test]
    fn broken_yaml_is_reported_with_its_line() {
        // The scan fixture whose second document is broken: `syncguard scan` reports line 11.
        let report = report(&State {
            manifests: include_str!("../../cli/tests/data/scan/bad/broken.yaml").to_string(),
            ..State::default()
        });
        assert_eq!(report["documents"].as_array().unwrap().len(), 2);
        assert_eq!(report["errors"][0]["input"], "manifests");
        assert_eq!(report["errors"][0]["line"], 11, "{report}");
        let message = report["errors"][0]["message"].as_str().unwrap();
        assert!(
            message.starts_with("invalid YAML: did not find expected ',' or ']'"),
            "{message}"
        );
    }
}
