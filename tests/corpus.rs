//! sync-drift over real install manifests: every document other than a CRD of the published
//! install manifests of widely used projects (`policies/sync-drift/test_data/corpus/`, each file
//! naming the repositories, commits and paths it comes from), sent as a CREATE as `syncguard scan`
//! sends it. Every finding is recorded in `corpus/findings.txt` and compared line for line: a
//! change in what the check reports on real manifests is seen and reviewed
//! (`SYNCGUARD_RECORD_CORPUS=1 cargo test -p syncguard --test corpus` records it again).

use serde::Deserialize;
use serde_json::Value;
use syncguard::render::{Annotation, FINDINGS_ANNOTATION};

#[test]
fn real_install_manifests_report_only_real_drift() {
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
    let all: Vec<Value> = objects.iter().map(|(_, object)| object.clone()).collect();
    let cluster = syncguard_scan::cluster::OfflineCluster::of_objects(&all);
    let entry = syncguard::registry::Entry::named("sync-drift").unwrap();
    let mut lines = Vec::new();
    for (place, object) in &objects {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
        let kind = object["kind"].as_str().unwrap_or_default();
        let resource = syncguard::generated::builtin_kinds(kind)
            .find(|r| r.group == group)
            .map_or_else(|| format!("{}s", kind.to_lowercase()), |r| r.plural.to_string());
        let request = syncguard_testkit::object_request("CREATE", object, &resource);
        let answer = (entry.validate)(
            syncguard_testkit::payload(&request, &serde_json::json!({})).as_bytes(),
            &cluster,
        );
        let answer: Value = serde_json::from_slice(&answer).unwrap();
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
        "# sync-drift's findings on corpus/*.yaml at its default settings ({} documents, {} findings).\n{}\n",
        objects.len(),
        lines.len(),
        lines.join("\n")
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
