//! The playground gives `syncguard scan`'s verdicts: every scan fixture (cli/tests/data/scan/,
//! with every config file there) and every policy fixture (policies/*/test_data/cases.yml: the
//! request's object as the manifest, the case's settings as the config, the objects of its
//! replay file as the cluster snapshot) is evaluated by both, and the verdicts compared.
//!
//! Needs the built command with its embedded modules (`make build`).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use syncguard_playground::{State, report};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn syncguard() -> PathBuf {
    let binary = root().join("target/host/syncguard");
    assert!(
        binary.is_file(),
        "{} is missing: build the command with its modules first (`make build`)",
        binary.display()
    );
    binary
}

/// What either side decided: refused to run (config or snapshot errors), or the verdicts (by
/// line, kind, name, policy, with the findings: rule, action, path, field line, brief, fix) and
/// the lines of the input errors.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Refused,
    Ran {
        verdicts: Vec<(u64, String, String, String, String, String)>,
        error_lines: Vec<Option<u64>>,
    },
}

/// One result: line, kind, name, policy, verdict, and its findings as JSON (both write the same
/// rows, `syncguard_scan::rows`). A kind-group-clash finding's text names where each object of
/// the clash is, a file and line for the command and the page's one input for the playground,
/// so it is left out.
fn row(result: &Value, doc: &Value) -> (u64, String, String, String, String, String) {
    let text = |v: &Value| v.as_str().unwrap_or("").to_string();
    let clash = result["policy"] == syncguard_scan::clash::NAME;
    let findings: Vec<Value> = result["findings"]
        .as_array()
        .expect("every row lists its findings")
        .iter()
        .map(|f| {
            let mut f = f.clone();
            if clash {
                f.as_object_mut().unwrap().remove("text");
            }
            f
        })
        .collect();
    (
        result["line"].as_u64().unwrap_or(0),
        text(&doc["kind"]),
        text(&doc["name"]),
        text(&result["policy"]),
        text(&result["verdict"]),
        serde_json::to_string(&findings).unwrap(),
    )
}

fn scan(manifests: &Path, snapshot: Option<&Path>, config: Option<&Path>) -> Outcome {
    let mut command = Command::new(syncguard());
    command.args(["scan", "--format", "json", "--verbose", "--jobs", "1"]);
    if let Some(snapshot) = snapshot {
        command.arg("--cluster-snapshot").arg(snapshot);
    }
    if let Some(config) = config {
        command.arg("--config").arg(config);
    }
    let output = command.arg(manifests).output().unwrap();
    if output.stdout.is_empty() {
        assert_eq!(
            output.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        return Outcome::Refused;
    }
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut verdicts: Vec<_> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| row(r, r))
        .collect();
    verdicts.sort();
    let error_lines = report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["line"].as_u64())
        .collect();
    Outcome::Ran { verdicts, error_lines }
}

fn playground(state: &State) -> Outcome {
    let report = report(state);
    let errors = report["errors"].as_array().unwrap();
    if errors.iter().any(|e| e["input"] != "manifests") {
        return Outcome::Refused;
    }
    let documents = report["documents"].as_array().unwrap();
    let mut verdicts: Vec<_> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let doc = &documents[r["document"].as_u64().unwrap() as usize];
            row(r, doc)
        })
        .collect();
    verdicts.sort();
    let error_lines = errors.iter().map(|e| e["line"].as_u64()).collect();
    Outcome::Ran { verdicts, error_lines }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// How many findings [`compare`] found equal on both sides (a check that the comparison of
/// findings is not vacuous).
static FINDINGS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Panics when they differ; true when both ran and gave verdicts.
fn compare(what: &str, manifests: &Path, snapshot: Option<&Path>, config: Option<&Path>) -> bool {
    let state = State {
        manifests: read(manifests),
        snapshot: snapshot.map(read).unwrap_or_default(),
        config: config.map(read).unwrap_or_default(),
        // No old objects: every document is a CREATE, as the command sends it.
        ..State::default()
    };
    let expected = scan(manifests, snapshot, config);
    let got = playground(&state);
    if let Outcome::Ran { verdicts, .. } = &got {
        let listed: usize = verdicts
            .iter()
            .map(|v| serde_json::from_str::<Vec<Value>>(&v.5).unwrap().len())
            .sum();
        FINDINGS.fetch_add(listed, std::sync::atomic::Ordering::Relaxed);
    }
    assert_eq!(
        expected, got,
        "{what}: syncguard scan's outcome (left) and the playground's (right)"
    );
    matches!(got, Outcome::Ran { ref verdicts, .. } if !verdicts.is_empty())
}

/// How many comparisons of the scan fixtures must give verdicts on both sides: every input under
/// each valid config (none, and the four valid files of `config/`), with and without the snapshot.
const DECIDED: usize = 5 * 8 * 2;

#[test]
fn scan_fixtures_get_the_same_verdicts() {
    let data = root().join("cli/tests/data/scan");
    let mut configs: Vec<Option<PathBuf>> = vec![None];
    let mut entries: Vec<PathBuf> = std::fs::read_dir(data.join("config"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    configs.extend(entries.into_iter().map(Some));
    let inputs: [(&str, Option<&str>); 8] = [
        ("clean/app.yaml", None),
        ("clean/grpcroutes.json", None),
        ("findings/rendered.yaml", None),
        ("findings/clash/stable.yaml", Some("findings/clash/beta.yaml")),
        ("bad/broken.yaml", None),
        ("bad/not-objects.yaml", None),
        ("list/configmaps.json", None),
        ("snapshot/stable-crd.yaml", None),
    ];
    let scratch = std::env::temp_dir().join(format!("syncguard-playground-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let (mut compared, mut decided, mut failures) = (0, 0, 0);
    for (input, second) in inputs {
        // Two files scanned together are one text in the playground.
        let manifests = match second {
            Some(second) => {
                let joined = scratch.join("joined.yaml");
                let text = format!("{}\n---\n{}", read(&data.join(input)), read(&data.join(second)));
                std::fs::write(&joined, text).unwrap();
                joined
            }
            None => data.join(input),
        };
        for config in &configs {
            for snapshot in [None, Some(data.join("snapshot/cluster.yaml"))] {
                let what = format!("{input} with config {config:?} and snapshot {snapshot:?}");
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    compare(&what, &manifests, snapshot.as_deref(), config.as_deref())
                })) {
                    Ok(ran) => {
                        compared += 1;
                        decided += usize::from(ran);
                    }
                    Err(_) => failures += 1,
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert_eq!(failures, 0, "{failures} of {compared} scan fixtures differ (see above)");
    // Both sides refusing a config (4 of the 9 are invalid) agree without deciding anything: the
    // comparisons must include verdicts, DECIDED of them at least.
    assert!(
        compared >= 8 * 9 * 2 && decided >= DECIDED,
        "{compared} compared, {decided} with verdicts"
    );
}

/// The objects a kwctl replay file's answers hold, as one List (a cluster snapshot).
fn replay_snapshot(path: &Path) -> String {
    let entries: Vec<Value> = serde_yaml_ng::from_str(&read(path)).unwrap();
    let mut items = Vec::new();
    for entry in entries {
        let Some(payload) = entry["response"]["payload"].as_str() else {
            continue;
        };
        let answer: Value = serde_json::from_str(payload).unwrap_or(Value::Null);
        match answer["items"].as_array() {
            Some(list) => items.extend(list.iter().cloned()),
            None if answer.is_object() => items.push(answer),
            None => {}
        }
    }
    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string()
}

#[test]
fn policy_fixtures_get_the_same_verdicts() {
    let scratch = std::env::temp_dir().join(format!("syncguard-playground-cases-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let mut policies: Vec<PathBuf> = std::fs::read_dir(root().join("policies"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("test_data/cases.yml").is_file())
        .collect();
    policies.sort();
    let (mut compared, mut decided, mut failures) = (0, 0, 0);
    for dir in &policies {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let data = dir.join("test_data");
        let cases: Value = serde_yaml_ng::from_str(&read(&data.join("cases.yml"))).unwrap();
        for case in cases["cases"].as_array().unwrap() {
            // An UPDATE from one CRD to another is not a manifest to scan (scan --base is).
            if case.get("upgrade").is_some() || case.get("create").is_some() {
                continue;
            }
            // A case without a request checks the settings alone: nothing to scan.
            let object = match case["request"].as_str() {
                Some(file) => {
                    let request: Value = serde_json::from_str(&read(&data.join(file))).unwrap();
                    request["object"].clone()
                }
                None => Value::Null,
            };
            if case.get("request").is_some() && !object.is_object() {
                continue;
            }
            let manifests = scratch.join("object.json");
            std::fs::write(
                &manifests,
                if object.is_null() {
                    String::new()
                } else {
                    object.to_string()
                },
            )
            .unwrap();
            let config = scratch.join("config.yaml");
            let settings = case.get("settings").cloned().unwrap_or(Value::Null);
            let config_text = serde_json::json!({"policies": {name.as_str(): {"settings": settings}}}).to_string();
            std::fs::write(&config, config_text).unwrap();
            let snapshot = case["replay"].as_str().map(|replay| {
                let path = scratch.join("snapshot.json");
                std::fs::write(&path, replay_snapshot(&data.join(replay))).unwrap();
                path
            });
            let what = format!("{name} case {}", case["name"]);
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                compare(&what, &manifests, snapshot.as_deref(), Some(&config))
            })) {
                Ok(ran) => {
                    compared += 1;
                    decided += usize::from(ran);
                }
                Err(_) => failures += 1,
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert_eq!(
        failures, 0,
        "{failures} of {compared} policy fixtures differ (see above)"
    );
    assert!(
        compared >= 100 && decided >= 100,
        "{compared} compared, {decided} with verdicts"
    );
    let findings = FINDINGS.load(std::sync::atomic::Ordering::Relaxed);
    assert!(findings >= 100, "only {findings} findings compared");
}
