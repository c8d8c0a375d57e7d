//! sync-drift over real install manifests: every document other than a CRD of the published
//! install manifests of widely used projects (`policies/sync-drift/test_data/corpus/`, each file
//! naming the repositories, commits and paths it comes from), sent as a CREATE as `syncguard scan`
//! sends it. Every finding is recorded in `corpus/findings.txt` and compared line for line: a
//! change in what the check reports on real manifests is seen and reviewed
//! (`SYNCGUARD_RECORD_CORPUS=1 cargo test -p syncguard --test corpus` records it again). The same
//! documents without a finding are sent again as the cluster holds them after `kubectl apply`,
//! with the values the API server fills in ([`defaults`]), and must stay without one.

#[path = "corpus/defaults.rs"]
mod defaults;

use serde::Deserialize;
use serde_json::Value;
use syncguard::render::{Annotation, FINDINGS_ANNOTATION};

/// Every document of the corpus, named `<file>#<index>`.
fn corpus() -> Vec<(String, Value)> {
    let dir = syncguard_testkit::root().join("policies/sync-drift/test_data/corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let mut objects = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        for (i, document) in serde_yaml_ng::Deserializer::from_str(&text).enumerate() {
            let object = Value::deserialize(document).unwrap_or_else(|e| panic!("{name} document {i}: {e}"));
            if object.is_object() {
                objects.push((format!("{name}#{i}"), object));
            }
        }
    }
    objects
}

/// The sync-drift answer for `object` in a request of `operation`, with every tool in `tools`
/// (kubectl included): the corpus judges every cause, not only those the GitOps tools show.
fn answer(object: &Value, operation: &str, cluster: &syncguard_scan::cluster::OfflineCluster) -> Value {
    answer_with(
        object,
        operation,
        cluster,
        serde_json::json!({"tools": ["argocd", "flux", "fleet", "kubectl"]}),
    )
}

/// The sync-drift answer for `object` with `settings`.
fn answer_with(
    object: &Value,
    operation: &str,
    cluster: &syncguard_scan::cluster::OfflineCluster,
    settings: Value,
) -> Value {
    let entry = syncguard::registry::Entry::named("sync-drift").unwrap();
    let request = syncguard_testkit::object_request(operation, object, &syncguard_testkit::resource_of(object));
    let answer = (entry.validate)(syncguard_testkit::payload(&request, &settings).as_bytes(), cluster);
    serde_json::from_slice(&answer).unwrap()
}

/// The last-applied annotation `kubectl apply` writes for `manifest` (kubectl's
/// GetModifiedConfiguration): the manifest with its own annotations map, created when absent,
/// written by Go's encoding/json Encoder (keys sorted, `<`, `>` and `&` escaped, a newline).
fn last_applied(manifest: &Value) -> String {
    let mut manifest = manifest.clone();
    let metadata = manifest["metadata"].as_object_mut().unwrap();
    let annotations = metadata.entry("annotations").or_insert_with(|| serde_json::json!({}));
    if annotations.is_null() {
        *annotations = serde_json::json!({});
    }
    let text = serde_json::to_string(&manifest)
        .unwrap()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026");
    format!("{text}\n")
}

/// The kinds every object of which the API server fills in (a pod template's `dnsPolicy`, a
/// Service's `clusterIP`).
const ALWAYS_DEFAULTED: &[&str] = &[
    "CronJob",
    "DaemonSet",
    "Deployment",
    "Job",
    "Pod",
    "ReplicaSet",
    "Service",
    "StatefulSet",
];

/// Every document of the corpus without a finding as a manifest, as the cluster holds it after
/// `kubectl apply`, sent as the audit scanner sends it: none may drift. The live form carries
/// uid, resourceVersion, creationTimestamp, the last-applied annotation as kubectl writes it,
/// and what the API server fills in on create ([`defaults`]: the defaulting functions of
/// kubernetes/kubernetes `pkg/apis/*/v1/defaults.go` for pod templates, workloads, Services,
/// Jobs, RBAC bindings, webhooks, storage and the rest, the Service allocator's addresses and
/// ports, the Pod admission plugins, struct members Go always writes, and every quantity in the
/// form the API server stores, from `corpus/stored-quantities.tsv`: apimachinery's own test
/// expectations and the documented canonical form, never sync-drift's quantity code, so a quantity
/// the check wrongly takes for canonical drifts here). The defaulter must have changed every
/// workload and Service, and more than 300 objects, and looked up more than 200 quantities, all
/// of them in the table, so the test cannot pass without it.
#[test]
fn live_forms_of_clean_manifests_stay_clean() {
    let objects = corpus();
    let all: Vec<Value> = objects.iter().map(|(_, object)| object.clone()).collect();
    let cluster = syncguard_scan::cluster::OfflineCluster::of_objects(&all);
    let mut checked = 0;
    let (mut defaulted, mut added, mut quantities, mut looked_up) = (0, 0, 0, 0);
    let mut problems = Vec::new();
    for (place, manifest) in &objects {
        if !manifest["metadata"]["name"].is_string()
            || answer(manifest, "CREATE", &cluster)["audit_annotations"].is_object()
        {
            continue;
        }
        let mut live = manifest.clone();
        let filled = defaults::fill(&mut live);
        if filled.added + filled.quantities > 0 {
            defaulted += 1;
        } else if ALWAYS_DEFAULTED.contains(&manifest["kind"].as_str().unwrap_or_default()) {
            problems.push(format!("{place}: the defaulter filled in nothing"));
        }
        added += filled.added;
        quantities += filled.quantities;
        looked_up += filled.looked_up;
        for unknown in &filled.unknown {
            problems.push(format!(
                "{place}: quantity {unknown} is not in tests/corpus/stored-quantities.tsv (regenerate it with tools/derive-quantity-table.py --corpus)"
            ));
        }
        let annotation = last_applied(manifest);
        let metadata = live["metadata"].as_object_mut().unwrap();
        let annotations = metadata.entry("annotations").or_insert_with(|| serde_json::json!({}));
        if !annotations.is_object() {
            *annotations = serde_json::json!({});
        }
        annotations["kubectl.kubernetes.io/last-applied-configuration"] = Value::String(annotation);
        metadata.insert("uid".into(), defaults::UID.into());
        metadata.insert("resourceVersion".into(), "40377".into());
        metadata.insert("creationTimestamp".into(), "2026-11-20T08:02:11Z".into());
        let answer = answer(&live, "CREATE", &cluster);
        checked += 1;
        if answer["audit_annotations"].is_object() || answer["accepted"] != true {
            problems.push(format!("{place}: {answer}"));
        }
    }
    eprintln!(
        "{checked} clean documents sent live, {defaulted} of them with {added} values filled in and {looked_up} quantities looked up, {quantities} of them rewritten"
    );
    assert!(checked > 800, "only {checked} clean documents");
    assert!(
        defaulted > 300,
        "the defaulter changed only {defaulted} of {checked} objects"
    );
    assert!(looked_up > 200, "only {looked_up} quantities looked up");
    assert!(problems.is_empty(), "live forms that drift:\n{}", problems.join("\n"));
}

#[test]
fn real_install_manifests_report_only_real_drift() {
    let dir = syncguard_testkit::root().join("policies/sync-drift/test_data/corpus");
    let objects = corpus();
    let all: Vec<Value> = objects.iter().map(|(_, object)| object.clone()).collect();
    let cluster = syncguard_scan::cluster::OfflineCluster::of_objects(&all);
    let mut lines = Vec::new();
    let mut at_defaults = Vec::new();
    for (place, object) in &objects {
        let kind = object["kind"].as_str().unwrap_or_default();
        let default = answer_with(object, "CREATE", &cluster, serde_json::json!({}));
        if let Some(listed) = default["audit_annotations"][FINDINGS_ANNOTATION].as_str() {
            let listed: Annotation = serde_json::from_str(listed).unwrap();
            for finding in &listed.findings {
                at_defaults.push(format!("{place} {}: {} at {}", kind, finding.rule, finding.path));
            }
        }
        let answer = answer(object, "CREATE", &cluster);
        assert_eq!(answer["accepted"], true, "{place}: {answer}");
        let Some(listed) = answer["audit_annotations"][FINDINGS_ANNOTATION].as_str() else {
            continue;
        };
        let listed: Annotation = serde_json::from_str(listed).unwrap();
        for finding in &listed.findings {
            lines.push(format!("{place} {}: {} at {}", kind, finding.rule, finding.path));
        }
        if listed.total > listed.findings.len() {
            lines.push(format!(
                "{place} {kind}: and {} more",
                listed.total - listed.findings.len()
            ));
        }
    }
    let record = dir.join("findings.txt");
    let text = format!(
        "# sync-drift's findings on corpus/*.yaml with every tool, kubectl included ({} documents, {} findings).\n{}\n# At the default tools (argocd, flux, fleet): {} findings.\n{}",
        objects.len(),
        lines.len(),
        lines.join("\n"),
        at_defaults.len(),
        at_defaults.iter().map(|line| format!("{line}\n")).collect::<String>()
    );
    if std::env::var_os("SYNCGUARD_RECORD_CORPUS").is_some() {
        std::fs::write(&record, &text).unwrap();
    }
    let recorded = std::fs::read_to_string(&record).unwrap_or_default();
    assert!(
        recorded == text,
        "sync-drift's findings on the corpus changed; review them and record them with SYNCGUARD_RECORD_CORPUS=1:\n{}",
        text
    );
}
