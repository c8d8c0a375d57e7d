//! `syncguard scan` end to end: the built binary over the fixture trees of
//! `cli/tests/data/scan/` with the built, annotated policy modules (`make build` first).
//!
//! Most tests pass `--policies` with a temporary folder holding only the modules they are
//! about, so policies added later do not change their expectations.

use serde_json::Value;
use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

const BASE: &[&str] = &["crd-safe-upgrade", "hook-job-safety", "ownership-markers"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli sits in the repository")
        .to_path_buf()
}

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/scan")
}

fn module(name: &str) -> PathBuf {
    let path = root().join("policies").join(name).join("annotated-policy.wasm");
    assert!(path.is_file(), "{} is missing: run `make build` first", path.display());
    path
}

/// A temporary folder, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "syncguard-scan-test-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A `--policies` folder with the annotated modules of `names`.
fn policies(names: &[&str]) -> TempDir {
    let dir = TempDir::new();
    for name in names {
        std::fs::create_dir_all(dir.path().join(name)).unwrap();
        std::fs::copy(module(name), dir.path().join(name).join("annotated-policy.wasm")).unwrap();
    }
    dir
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn scan_in(cwd: &Path, args: &[&str], stdin: Option<&str>) -> Run {
    scan_env(cwd, args, stdin, &[])
}

/// [`scan_in`] with environment variables set (on top of the test's, less the color ones).
fn scan_env(cwd: &Path, args: &[&str], stdin: Option<&str>, env: &[(&str, &std::ffi::OsStr)]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_syncguard"));
    command
        .arg("scan")
        .args(args)
        .current_dir(cwd)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .envs(env.iter().copied())
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("the syncguard binary runs");
    if let Some(text) = stdin {
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    }
    let output = child.wait_with_output().unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// Scans in the fixture folder with the modules of `names`.
fn scan_with(names: &[&str], args: &[&str]) -> Run {
    let dir = policies(names);
    let mut all = vec!["--policies", dir.path().to_str().unwrap()];
    all.extend_from_slice(args);
    scan_in(&data(), &all, None)
}

fn json_of(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", run.stdout, run.stderr))
}

/// `(file, line, policy, verdict)` of every JSON result.
fn verdicts(report: &Value) -> Vec<(String, u64, String, String)> {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["file"].as_str().unwrap().to_string(),
                r["line"].as_u64().unwrap(),
                r["policy"].as_str().unwrap().to_string(),
                r["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn v(file: &str, line: u64, policy: &str, verdict: &str) -> (String, u64, String, String) {
    (file.into(), line, policy.into(), verdict.into())
}

#[test]
fn clean_tree_exits_0() {
    let run = scan_with(BASE, &["clean", "list"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout,
        "3 files, 6 documents, 8 evaluations: 0 rejected, 0 mutated, 0 warned, 8 accepted\n"
    );
    assert_eq!(run.stderr, "");
}

#[test]
fn verbose_lists_accepted_and_unmatched_documents() {
    let run = scan_with(BASE, &["--verbose", "clean/app.yaml", "list"]);
    assert_eq!(run.code, 0);
    let expected = "clean/app.yaml:3:1: ownership-markers: accepted\n\
                    clean/app.yaml:33:1: ownership-markers: accepted\n\
                    clean/app.yaml:53:1: hook-job-safety: accepted\n\
                    clean/app.yaml:53:1: ownership-markers: accepted\n\
                    list/configmaps.json:1:1 items[0]: ownership-markers: accepted\n\
                    list/configmaps.json:1:1 items[1]: ownership-markers: accepted\n\
                    2 files, 5 documents, 6 evaluations: 0 rejected, 0 mutated, 0 warned, 6 accepted\n";
    assert_eq!(run.stdout, expected);
    let run = scan_with(&["hook-job-safety"], &["-v", "list"]);
    assert_eq!(
        run.stdout,
        "list/configmaps.json:1:1 items[0]: no policy applies to v1 ConfigMap\n\
         list/configmaps.json:1:1 items[1]: no policy applies to v1 ConfigMap\n\
         1 file, 2 documents, 0 evaluations: 0 rejected, 0 mutated, 0 warned, 0 accepted\n"
    );
}

#[test]
fn findings_in_text_with_lines_of_each_document() {
    let run = scan_with(BASE, &["findings"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 8, "{}", run.stdout);
    // One finding for the clash of one release, at its first document, naming every place.
    assert!(lines[0].starts_with(
        "findings/clash/beta.yaml:9:1: kind-group-clash/sameKindAndName: rejected: Shirt \"shirt\" in namespace \"default\" is defined in 2 API groups in Helm release \"shop\" in namespace \"default\" (by their meta.helm.sh annotations): beta.example.com/v1 at findings/clash/beta.yaml:9, stable.example.com/v1 at findings/clash/stable.yaml:2. Helm before 3.17.1"
    ));
    assert!(lines[1].starts_with(
        "findings/rendered.yaml:36:3: hook-job-safety/ttlSecondsAfterFinished: warned: Job kyverno/kyverno-clean-reports: hook (helm.sh/hook: post-upgrade, which ArgoCD runs as a PostSync hook) sets spec.ttlSecondsAfterFinished: 900."
    ));
    assert!(lines[2].starts_with(
        "findings/rendered.yaml:49:1: ownership-markers/helmCompleteness: rejected: ClusterIssuer letsencrypt-prod: carries Helm release metadata but metadata.labels[app.kubernetes.io/managed-by] is missing or wrong"
    ));
    assert_eq!(
        lines[3..],
        [
            "3 files, 6 documents, 8 evaluations: 2 rejected, 0 mutated, 1 warned, 5 accepted",
            "3 findings: 2 rejecting, 1 warning",
            "  hook-job-safety/ttlSecondsAfterFinished: 1 warning",
            "  kind-group-clash/sameKindAndName: 1 rejecting",
            "  ownership-markers/helmCompleteness: 1 rejecting",
        ]
    );
    assert!(!run.stdout.contains('\x1b'), "no colors when stdout is not a terminal");
}

#[test]
fn colors_on_request() {
    let run = scan_with(BASE, &["--color", "always", "findings/rendered.yaml"]);
    assert!(
        run.stdout
            .contains("\x1b[1mfindings/rendered.yaml:49:1\x1b[0m: ownership-markers/helmCompleteness: \x1b[1m\x1b[31mrejected\x1b[0m: "),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("\x1b[33mwarned\x1b[0m"));
    let run = scan_with(BASE, &["--color", "never", "findings/rendered.yaml"]);
    assert!(!run.stdout.contains('\x1b'));
}

/// `--color auto` is anstream's detection: `NO_COLOR` (unless empty) wins over
/// `CLICOLOR_FORCE`, which colors even a pipe; `--color always|never` win over both.
#[test]
fn colors_follow_no_color_and_clicolor_force() {
    let mods = policies(BASE);
    let colored = |args: &[&str], env: &[(&str, &str)]| {
        let mut all = vec!["--policies", mods.path().to_str().unwrap()];
        all.extend_from_slice(args);
        all.push("findings/rendered.yaml");
        let env: Vec<(&str, &std::ffi::OsStr)> = env.iter().map(|(k, v)| (*k, std::ffi::OsStr::new(*v))).collect();
        let run = scan_env(&data(), &all, None, &env);
        assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
        run.stdout.contains("\x1b[")
    };
    // stdout is a pipe here.
    assert!(!colored(&[], &[]));
    assert!(colored(&[], &[("CLICOLOR_FORCE", "1")]));
    assert!(
        !colored(&[], &[("CLICOLOR_FORCE", "")]),
        "an empty CLICOLOR_FORCE is unset"
    );
    assert!(!colored(&[], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]));
    assert!(
        colored(&[], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "")]),
        "an empty NO_COLOR is unset"
    );
    assert!(colored(&["--color", "always"], &[("NO_COLOR", "1")]));
    assert!(!colored(&["--color", "never"], &[("CLICOLOR_FORCE", "1")]));
    assert!(!colored(&["--color", "auto"], &[("CLICOLOR", "0")]));
}

#[test]
fn json_report() {
    let run = scan_with(BASE, &["--format", "json", "findings"]);
    assert_eq!(run.code, 1);
    let report = json_of(&run);
    assert_eq!(report["schemaVersion"], 1);
    assert_eq!(report["tool"]["name"], "syncguard");
    let names: Vec<&str> = report["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec![
            "crd-safe-upgrade",
            "hook-job-safety",
            "ownership-markers",
            "kind-group-clash",
            "duplicate-object"
        ]
    );
    assert_eq!(report["policies"][3]["origin"], "built-in");
    assert_eq!(
        report["summary"],
        serde_json::json!({"files": 3, "documents": 6, "evaluations": 8, "rejected": 2, "mutated": 0, "warned": 1, "accepted": 5, "errors": 0,
                           "findings": {"reject": 2, "warn": 1, "suppressed": 0, "rules": {
                               "hook-job-safety/ttlSecondsAfterFinished": {"reject": 0, "warn": 1},
                               "kind-group-clash/sameKindAndName": {"reject": 1, "warn": 0},
                               "ownership-markers/helmCompleteness": {"reject": 1, "warn": 0}}}})
    );
    assert_eq!(
        verdicts(&report),
        vec![
            v("findings/clash/beta.yaml", 9, "kind-group-clash", "rejected"),
            v("findings/rendered.yaml", 19, "hook-job-safety", "warned"),
            v("findings/rendered.yaml", 47, "ownership-markers", "rejected"),
        ]
    );
    let clash = &report["results"][0];
    assert_eq!(
        clash["related"],
        serde_json::json!([{"file": "findings/clash/stable.yaml", "line": 2, "apiVersion": "stable.example.com/v1", "kind": "Shirt"}])
    );
    assert_eq!(
        (
            clash["kind"].as_str(),
            clash["name"].as_str(),
            clash["namespace"].as_str()
        ),
        (Some("Shirt"), Some("shirt"), Some("default"))
    );
    assert_eq!(clash["apiVersion"], "beta.example.com/v1");
    assert_eq!(clash["document"], 1);
    let warned = &report["results"][1];
    assert_eq!(warned["message"], Value::Null);
    assert_eq!(warned["warnings"].as_array().unwrap().len(), 1);
    let rejected = &report["results"][2];
    assert_eq!(rejected["namespace"], Value::Null);
    assert!(
        rejected["message"]
            .as_str()
            .unwrap()
            .contains("Fix: kubectl label clusterissuers.cert-manager.io letsencrypt-prod")
    );
    assert_eq!(report["errors"], serde_json::json!([]));
    let verbose = json_of(&scan_with(BASE, &["--format", "json", "--verbose", "findings"]));
    assert_eq!(verbose["results"].as_array().unwrap().len(), 8);
}

#[test]
fn json_output_follows_its_documented_schema() {
    use syncguard_cli::scan::report::Output;
    // The schema, generated from the types the command serialises, is the documented one.
    let schema = serde_json::to_string_pretty(&schemars::schema_for!(Output)).unwrap() + "\n";
    let path = root().join("docs/scan-output.schema.json");
    if std::env::var_os("SYNCGUARD_WRITE_SCHEMA").is_some() {
        std::fs::write(&path, &schema).unwrap();
    }
    let documented = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        documented == schema,
        "{} is not the schema of the command's output types; run `make json-schema` and review the diff",
        path.display()
    );
    // Real output (a clash with related documents, rejections, warnings, findings with fixes and
    // an input error) reads into those types and back to the same JSON: nothing undocumented.
    for args in [
        &["--format", "json", "--verbose", "findings"][..],
        &["--format", "json", "findings", "bad"][..],
    ] {
        let run = scan_with(BASE, args);
        let value = json_of(&run);
        let output: Output = serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{e}: {value}"));
        assert_eq!(serde_json::to_value(&output).unwrap(), value);
    }
}

#[test]
fn output_is_deterministic() {
    let dir = policies(BASE);
    let scan = |extra: &[&str]| {
        let mut args = vec!["--policies", dir.path().to_str().unwrap()];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["findings", "clean", "list"]);
        scan_in(&data(), &args, None).stdout
    };
    let one = scan(&["--format", "json", "--verbose", "--jobs", "1"]);
    assert_eq!(one, scan(&["--format", "json", "--verbose", "--jobs", "2"]));
    assert_eq!(one, scan(&["--format", "json", "--verbose", "--jobs", "3"]));
    assert_eq!(
        scan(&["--format", "sarif", "--jobs", "1"]),
        scan(&["--format", "sarif", "--jobs", "2"])
    );
}

/// The SARIF 2.1.0 properties GitHub code scanning relies on.
fn check_sarif(sarif: &Value) {
    assert_eq!(sarif["version"], "2.1.0");
    assert!(sarif["$schema"].as_str().unwrap().ends_with("sarif-2.1.0.json"));
    let runs = sarif["runs"].as_array().expect("runs is a list");
    assert_eq!(runs.len(), 1);
    let driver = &runs[0]["tool"]["driver"];
    assert_eq!(driver["name"], "syncguard");
    assert!(driver["version"].is_string());
    let rules = driver["rules"].as_array().expect("rules is a list");
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().expect("rule id")).collect();
    assert_eq!(
        ids.iter().collect::<BTreeSet<_>>().len(),
        ids.len(),
        "rule ids are unique"
    );
    for rule in rules {
        assert!(!rule["shortDescription"]["text"].as_str().unwrap().is_empty());
    }
    let check_location = |location: &Value| {
        let physical = &location["physicalLocation"];
        let uri = physical["artifactLocation"]["uri"].as_str().expect("uri");
        assert!(
            !uri.starts_with('/') && !uri.contains("://") && !uri.contains('\\'),
            "relative uri: {uri}"
        );
        assert!(physical["region"]["startLine"].as_u64().expect("startLine") >= 1);
    };
    for result in runs[0]["results"].as_array().expect("results is a list") {
        let rule_id = result["ruleId"].as_str().expect("ruleId");
        assert!(ids.contains(&rule_id), "{rule_id}");
        let index = result["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(ids[index], rule_id);
        assert!(["error", "warning", "note"].contains(&result["level"].as_str().unwrap()));
        assert!(!result["message"]["text"].as_str().unwrap().is_empty());
        let locations = result["locations"].as_array().unwrap();
        assert!(!locations.is_empty());
        locations.iter().for_each(check_location);
        if let Some(related) = result.get("relatedLocations") {
            related.as_array().unwrap().iter().for_each(check_location);
        }
    }
}

#[test]
fn sarif_report() {
    let run = scan_with(BASE, &["--format", "sarif", "findings"]);
    assert_eq!(run.code, 1);
    let sarif = json_of(&run);
    check_sarif(&sarif);
    let run0 = &sarif["runs"][0];
    let ids: Vec<&str> = run0["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        vec![
            "crd-safe-upgrade",
            "hook-job-safety",
            "ownership-markers",
            "kind-group-clash",
            "duplicate-object",
            "kind-group-clash/sameKindAndName",
            "hook-job-safety/ttlSecondsAfterFinished",
            "ownership-markers/helmCompleteness"
        ]
    );
    let results: Vec<(String, String, String, u64)> = run0["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let place = &r["locations"][0]["physicalLocation"];
            (
                r["ruleId"].as_str().unwrap().to_string(),
                r["level"].as_str().unwrap().to_string(),
                place["artifactLocation"]["uri"].as_str().unwrap().to_string(),
                place["region"]["startLine"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected = [
        (
            "kind-group-clash/sameKindAndName",
            "error",
            "findings/clash/beta.yaml",
            9,
        ),
        // A finding is at its path's key: the TTL's, the labels' (the missing label's parent).
        (
            "hook-job-safety/ttlSecondsAfterFinished",
            "warning",
            "findings/rendered.yaml",
            36,
        ),
        (
            "ownership-markers/helmCompleteness",
            "error",
            "findings/rendered.yaml",
            49,
        ),
    ];
    let expected: Vec<(String, String, String, u64)> = expected
        .iter()
        .map(|(a, b, c, d)| (a.to_string(), b.to_string(), c.to_string(), *d))
        .collect();
    assert_eq!(results, expected);
    // The whole text, as the text output prints it: never the brief cut to a warning's size.
    let message = run0["results"][0]["message"]["text"].as_str().unwrap();
    assert!(
        message.starts_with(
            "Shirt \"shirt\" in namespace \"default\" is defined in 2 API groups in Helm release \"shop\" in namespace \"default\" (by their meta.helm.sh annotations): beta.example.com/v1 at findings/clash/beta.yaml:9, stable.example.com/v1 at findings/clash/stable.yaml:2. Helm before 3.17.1"
        ) && message.contains("Fix: "),
        "{message}"
    );
    let clash_rule = &run0["tool"]["driver"]["rules"][5];
    assert_eq!(
        clash_rule["helpUri"],
        "https://github.com/syncguard/syncguard/blob/main/docs/scan.md#kind-group-clash"
    );
    let related = &run0["results"][0]["relatedLocations"][0]["physicalLocation"];
    assert_eq!(related["artifactLocation"]["uri"], "findings/clash/stable.yaml");
    assert_eq!(related["region"]["startLine"], 2);
    assert_eq!(run0["invocations"][0]["executionSuccessful"], true);
}

/// `text` with the replacements of SARIF `fixes` applied (columns in UTF-16 code units, as the
/// report's `columnKind` says; the fixtures are ASCII, where those are bytes), last first.
fn apply_fixes(text: &str, fixes: &[&Value]) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let offset = |line: u64, column: u64| -> usize {
        let before: usize = lines[..line as usize - 1].iter().map(|l| l.len()).sum();
        before + column as usize - 1
    };
    let mut edits: Vec<(usize, usize, String)> = fixes
        .iter()
        .flat_map(|fix| fix["artifactChanges"][0]["replacements"].as_array().unwrap())
        .map(|r| {
            let region = &r["deletedRegion"];
            let at =
                |line: &str, column: &str| offset(region[line].as_u64().unwrap(), region[column].as_u64().unwrap());
            (
                at("startLine", "startColumn"),
                at("endLine", "endColumn"),
                r["insertedContent"]["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    edits.sort_by_key(|edit| std::cmp::Reverse(edit.0));
    let mut out = text.to_string();
    for (start, end, inserted) in edits {
        out.replace_range(start..end, &inserted);
    }
    out
}

#[test]
fn sarif_results_per_finding_with_fixes_that_clear_them() {
    // The fixture's drift is what `kubectl apply` shows: kubectl among the tools.
    let config = kubectl_config();
    let config = config.path().join("kubectl.yaml");
    let run = scan_with(
        &["sync-drift"],
        &["--format", "sarif", "--config", config.to_str().unwrap(), "drift"],
    );
    assert_eq!(run.code, 0, "sync-drift warns by default: {}", run.stderr);
    let sarif = json_of(&run);
    check_sarif(&sarif);
    let run0 = &sarif["runs"][0];
    assert_eq!(run0["columnKind"], "utf16CodeUnits");
    let rules: Vec<&str> = run0["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules,
        [
            "sync-drift",
            "kind-group-clash",
            "duplicate-object",
            "sync-drift/nullOrEmpty",
            "sync-drift/quantity"
        ]
    );
    let results = run0["results"].as_array().unwrap();
    let seen: Vec<(&str, u64, &str)> = results
        .iter()
        .map(|r| {
            let place = &r["locations"][0];
            (
                r["ruleId"].as_str().unwrap(),
                place["physicalLocation"]["region"]["startLine"].as_u64().unwrap(),
                place["logicalLocations"][0]["fullyQualifiedName"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                "sync-drift/nullOrEmpty",
                20,
                "Deployment shop/web spec.template.spec.containers[0].env"
            ),
            (
                "sync-drift/quantity",
                23,
                "Deployment shop/web spec.template.spec.containers[0].resources.limits[cpu]"
            ),
        ]
    );
    for result in results {
        assert_eq!(result["level"], "warning");
        assert_eq!(
            result["ruleIndex"].as_u64().unwrap() as usize,
            rules.iter().position(|id| *id == result["ruleId"]).unwrap()
        );
    }
    // Applying every fix gives a manifest with nothing left to find.
    let fixes: Vec<&Value> = results.iter().map(|r| &r["fixes"][0]).collect();
    assert!(
        fixes.iter().all(|fix| fix.is_object()),
        "every finding has a fix: {results:?}"
    );
    let original = std::fs::read_to_string(data().join("drift/deployment.yaml")).unwrap();
    let fixed = apply_fixes(&original, &fixes);
    assert!(
        fixed.contains("          image: nginx:1.27\n          resources:\n"),
        "{fixed}"
    );
    assert!(fixed.contains("              cpu: \"1\"\n"), "{fixed}");
    let dir = policies(&["sync-drift"]);
    let again = scan_in(
        &data(),
        &[
            "--policies",
            dir.path().to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--format",
            "json",
            "-",
        ],
        Some(&fixed),
    );
    let report = json_of(&again);
    assert_eq!(report["summary"]["warned"], 0, "{}", again.stdout);
    assert_eq!(report["summary"]["accepted"], 1, "{}", again.stdout);

    // The JSON rows list the same findings with their lines.
    let run = scan_with(
        &["sync-drift"],
        &["--format", "json", "--config", config.to_str().unwrap(), "drift"],
    );
    let report = json_of(&run);
    let findings = report["results"][0]["findings"].as_array().unwrap();
    let rows: Vec<(&str, &str, u64)> = findings
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap(),
                f["action"].as_str().unwrap(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(rows, [("nullOrEmpty", "warn", 20), ("quantity", "warn", 23)]);
    assert_eq!(findings[0]["fix"], "delete");
    assert_eq!(findings[1]["fix"], serde_json::json!({"replace": "\"1\""}));
    assert_eq!(report["results"][0]["unlistedFindings"], 0);
}

#[test]
fn every_finding_reaches_json_and_sarif_past_the_annotation_cap() {
    // 60 empty env values: 60 drift findings, far more than the 4,096-character audit annotation
    // lists. The command reads the module's structured report, so every one is in the JSON rows
    // and in SARIF, each at its own line and with its long text.
    let env: String = (0..60)
        .map(|i| format!("            - name: VAR_{i:02}\n              value: \"\"\n"))
        .collect();
    let manifest = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  selector:\n    matchLabels: {{app: web}}\n  template:\n    metadata:\n      labels: {{app: web}}\n    spec:\n      containers:\n        - name: web\n          image: nginx:1.27\n          env:\n{env}"
    );
    let dir = policies(&["sync-drift"]);
    let config = kubectl_config();
    let config = config.path().join("kubectl.yaml");
    let scan = |format: &str| {
        scan_in(
            &data(),
            &[
                "--policies",
                dir.path().to_str().unwrap(),
                "--config",
                config.to_str().unwrap(),
                "--format",
                format,
                "-",
            ],
            Some(&manifest),
        )
    };
    let report = json_of(&scan("json"));
    let row = &report["results"][0];
    let findings = row["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 60, "{row}");
    assert_eq!(row["unlistedFindings"], 0);
    let annotation_lists = row["warnings"].as_array().unwrap().len();
    assert!(
        annotation_lists < 60,
        "the answer itself stays within the API server's limits"
    );
    let lines: std::collections::BTreeSet<u64> = findings.iter().map(|f| f["line"].as_u64().unwrap()).collect();
    assert_eq!(lines.len(), 60, "each finding at its own line: {findings:?}");
    assert!(
        findings
            .iter()
            .all(|f| f["text"].as_str().unwrap().starts_with("Deployment shop/web: ")),
        "{findings:?}"
    );
    let sarif = json_of(&scan("sarif"));
    check_sarif(&sarif);
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 60);
    let rule = sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "sync-drift/nullOrEmpty")
        .expect("the finding's rule is described");
    let help = rule["helpUri"].as_str().unwrap();
    assert!(help.contains("sync-drift#") && !help.ends_with('#'), "{rule}");
    assert!(
        rule["shortDescription"]["text"]
            .as_str()
            .unwrap()
            .starts_with("nullOrEmpty: "),
        "the rule's documented summary: {rule}"
    );
}

/// A folder holding `kubectl.yaml`, a scan config that adds kubectl to sync-drift's tools (its
/// default is the GitOps tools alone, which show none of an `env[].value: ""`).
fn kubectl_config() -> TempDir {
    let dir = TempDir::new();
    std::fs::write(
        dir.path().join("kubectl.yaml"),
        "policies:\n  sync-drift:\n    settings: {tools: [argocd, flux, fleet, kubectl]}\n",
    )
    .unwrap();
    dir
}

/// `git args...` in `dir`, which must succeed.
fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=syncguard-test",
            "-c",
            "user.email=test@syncguard.invalid",
        ])
        .args(["-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

#[test]
fn base_ref_judges_changed_objects_as_updates() {
    let repo = TempDir::new();
    let fixture = |name: &str| std::fs::read_to_string(data().join("base").join(name)).unwrap();
    std::fs::create_dir_all(repo.path().join("crds/moved")).unwrap();
    std::fs::write(repo.path().join("crds/widgets.yaml"), fixture("widgets-old.yaml")).unwrap();
    git(repo.path(), &["init", "-q"]);
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-q", "-m", "widgets v1"]);
    // The pull request moves the CRD to another file and changes it.
    std::fs::remove_file(repo.path().join("crds/widgets.yaml")).unwrap();
    std::fs::write(repo.path().join("crds/moved/widgets.yaml"), fixture("widgets-new.yaml")).unwrap();
    let names = ["crd-kind-collision", "crd-safe-upgrade", "sync-drift"];
    let dir = policies(&names);
    let policies = dir.path().to_str().unwrap();

    let run = scan_in(repo.path(), &["--policies", policies, "--base", "HEAD", "crds"], None);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.starts_with("crds/moved/widgets.yaml:"), "{}", run.stdout);
    let sarif = scan_in(
        repo.path(),
        &["--policies", policies, "--base", "main", "--format", "sarif", "crds"],
        None,
    );
    let sarif = json_of(&sarif);
    check_sarif(&sarif);
    let results: Vec<(&str, u64)> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["ruleId"].as_str().unwrap(),
                r["locations"][0]["physicalLocation"]["region"]["startLine"]
                    .as_u64()
                    .unwrap(),
            )
        })
        .collect();
    // The removed field is located at the `properties` that held it, the retyped one at its key.
    assert_eq!(
        results,
        [
            ("crd-safe-upgrade/existingFieldRemoval", 23),
            ("crd-safe-upgrade/type", 24)
        ]
    );
    let report = json_of(&scan_in(
        repo.path(),
        &[
            "--policies",
            policies,
            "--base",
            "HEAD",
            "--format",
            "json",
            "-v",
            "crds",
        ],
        None,
    ));
    let operations: Vec<(&str, &str)> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["policy"].as_str().unwrap(), r["operation"].as_str().unwrap()))
        .collect();
    assert_eq!(
        operations,
        [
            ("crd-kind-collision", "UPDATE"),
            ("crd-safe-upgrade", "UPDATE"),
            ("sync-drift", "CREATE")
        ],
        "checks that do not judge updates still read the manifest as a CREATE"
    );

    // Without a base, or against a base that does not have the object, it is a new CRD.
    let run = scan_in(repo.path(), &["--policies", policies, "crds"], None);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-q", "-m", "widgets v2"]);
    let run = scan_in(repo.path(), &["--policies", policies, "--base", "HEAD", "crds"], None);
    assert_eq!(
        run.code, 0,
        "HEAD holds the same CRD: nothing changes. {}{}",
        run.stdout, run.stderr
    );

    // Errors say what is wrong.
    let refused = |cwd: &Path, args: &[&str], says: &str| {
        let run = scan_in(cwd, &[&["--policies", policies][..], args].concat(), None);
        assert_eq!(run.code, 2, "{}", run.stdout);
        assert!(run.stderr.contains(says), "{}", run.stderr);
    };
    refused(
        repo.path(),
        &["--base", "no-such-branch", "crds"],
        "--base no-such-branch: not a commit in",
    );
    let outside = TempDir::new();
    std::fs::write(outside.path().join("a.yaml"), fixture("widgets-new.yaml")).unwrap();
    refused(
        outside.path(),
        &["--base", "HEAD", "a.yaml"],
        "--base needs the scanned paths in a git work tree",
    );
}

#[test]
fn stdin_and_multi_document_lines() {
    let text = std::fs::read_to_string(data().join("findings/rendered.yaml")).unwrap();
    let dir = policies(BASE);
    let run = scan_in(&data(), &["--policies", dir.path().to_str().unwrap(), "-"], Some(&text));
    assert_eq!(run.code, 1);
    assert!(
        run.stdout
            .contains("<stdin>:36:3: hook-job-safety/ttlSecondsAfterFinished: warned: "),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("<stdin>:49:1: ownership-markers/helmCompleteness: rejected: ")
    );
    let run = scan_in(
        &data(),
        &["--policies", dir.path().to_str().unwrap(), "--format", "sarif", "-"],
        Some(&text),
    );
    let sarif = json_of(&run);
    assert_eq!(
        sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "stdin"
    );
    // A JSON stream on stdin, as `kubectl get -o json` pipelines print it.
    let stream = "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\",\n \"metadata\": {\"name\": \"a\"}}\n\n{\"apiVersion\": \"v1\",\n \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"b\"}}\n";
    let run = scan_in(
        &data(),
        &["--policies", dir.path().to_str().unwrap(), "-v", "-"],
        Some(stream),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "<stdin>:1:1: ownership-markers: accepted\n<stdin>:4:1: ownership-markers: accepted\n1 file, 2 documents, 2 evaluations: 0 rejected, 0 mutated, 0 warned, 2 accepted\n"
    );
}

#[test]
fn unquoted_numbers_are_read_as_kubectl_reads_them() {
    // `defaultMode: 0644` is the octal 420 to kubectl, Helm, Argo CD and kustomize (Go's YAML
    // readers), and so is a ConfigMap's `mode: 0644`, which the API server then refuses as an
    // integer where a string belongs (kubectl-validate 1.35's answer, word for word).
    let text = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
      volumes:
      - name: config
        configMap: {name: web, defaultMode: 0644}
      - name: tls
        secret: {secretName: web-tls, defaultMode: 0o600}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web, namespace: shop}
data:
  mode: 0644
  quoted: \"0644\"
";
    let dir = policies(&["object-validation"]);
    let run = scan_in(&data(), &["--policies", dir.path().to_str().unwrap(), "-"], Some(text));
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout
            .lines()
            .filter(|l| l.starts_with("<stdin>:"))
            .collect::<Vec<_>>(),
        [
            "<stdin>:20:3: object-validation/schemaViolation: rejected: ConfigMap shop/web: data.mode: Invalid value: \"integer\": data.mode in body must be of type string: \"integer\""
        ],
        "{}",
        run.stdout
    );
}

#[test]
fn config_settings_and_disabling() {
    let run = scan_with(BASE, &["--config", "config/ttl-reject.yaml", "findings/rendered.yaml"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout
            .contains("findings/rendered.yaml:36:3: hook-job-safety/ttlSecondsAfterFinished: rejected: Job kyverno/kyverno-clean-reports: hook (helm.sh/hook: post-upgrade"),
        "{}",
        run.stdout
    );

    let run = scan_with(
        BASE,
        &[
            "--config",
            "config/ttl-remove.yaml",
            "--format",
            "json",
            "findings/rendered.yaml",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    let report = json_of(&run);
    assert_eq!(
        verdicts(&report),
        vec![v("findings/rendered.yaml", 19, "hook-job-safety", "mutated")]
    );
    assert_eq!(
        report["results"][0]["patch"],
        serde_json::json!([{"op": "remove", "path": "/spec/ttlSecondsAfterFinished"}])
    );
    let names: Vec<&str> = report["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec![
            "crd-safe-upgrade",
            "hook-job-safety",
            "kind-group-clash",
            "duplicate-object"
        ]
    );
    let text = scan_with(BASE, &["--config", "config/ttl-remove.yaml", "findings/rendered.yaml"]);
    assert!(text.stdout.starts_with(
        "findings/rendered.yaml:36:3: hook-job-safety/ttlSecondsAfterFinished: warned: Job kyverno/kyverno-clean-reports: removed spec.ttlSecondsAfterFinished: 900"
    ), "{}", text.stdout);

    for config in ["config/allow-shirts.yaml", "config/clash-off.yaml"] {
        let run = scan_with(BASE, &["--config", config, "findings/clash"]);
        assert_eq!(run.code, 0, "{config}: {}", run.stdout);
        assert_eq!(
            run.stdout,
            "2 files, 3 documents, 3 evaluations: 0 rejected, 0 mutated, 0 warned, 3 accepted\n"
        );
    }
}

#[test]
fn config_errors_exit_2_naming_the_key_or_policy() {
    let cases = [
        (
            "config/unknown-key.yaml",
            "Error: config file config/unknown-key.yaml: `policies.hook-job-safety.enable`: unknown field `enable`, expected `enabled` or `settings`\n",
        ),
        (
            "config/unknown-policy.yaml",
            "Error: config file config/unknown-policy.yaml: `policies.hook-jobs-safety`: there is no policy named hook-jobs-safety (known: crd-safe-upgrade, hook-job-safety, ownership-markers, kind-group-clash, duplicate-object)\n",
        ),
        (
            "config/invalid-settings.yaml",
            "Error: policy hook-job-safety: invalid settings in config/invalid-settings.yaml: `ttlAction`: unknown variant `delete`, expected one of `warn`, `reject`, `remove`\n",
        ),
        (
            "config/invalid-clash-settings.yaml",
            "Error: policy kind-group-clash: invalid settings in config/invalid-clash-settings.yaml: `allowedKind`: unknown field `allowedKind`, expected one of `helmVersion`, `allowedKinds`, `allowedGroupSets`\n",
        ),
        (
            "config/missing.yaml",
            "Error: cannot read config file config/missing.yaml: No such file or directory\n",
        ),
    ];
    for (config, message) in cases {
        let run = scan_with(BASE, &["--config", config, "findings"]);
        assert_eq!(run.code, 2, "{config}");
        assert_eq!(run.stderr, message);
        assert_eq!(run.stdout, "");
    }
}

#[test]
fn bad_input_is_reported_per_file_and_the_scan_goes_on() {
    let dir = TempDir::new();
    for name in ["broken.yaml", "not-objects.yaml"] {
        std::fs::copy(data().join("bad").join(name), dir.path().join(name)).unwrap();
    }
    std::fs::write(dir.path().join("binary.yaml"), b"apiVersion: v1\n\0\x01\x02kind").unwrap();
    std::fs::write(
        dir.path().join("latin1.yaml"),
        b"apiVersion: v1\nkind: ConfigMap\ndata: {a: caf\xe9}\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(dir.path().join("gone.yaml"), dir.path().join("dangling.yaml")).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a manifest, skipped by the walk").unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::write(dir.path().join(".git/config.yaml"), "not: scanned").unwrap();
    let mods = policies(BASE);
    let args = ["--policies", mods.path().to_str().unwrap(), ".", "missing.yaml"];
    let run = scan_in(dir.path(), &args, None);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stderr,
        "dangling.yaml: error: cannot read: No such file or directory\n\
         missing.yaml: error: cannot read: No such file or directory\n\
         binary.yaml: error: binary file (it holds NUL bytes), not YAML or JSON\n\
         broken.yaml:11: error: invalid YAML: did not find expected ',' or ']' at line 11 column 1, while parsing a flow sequence at line 10 column 11\n\
         latin1.yaml: error: not UTF-8 text (invalid byte at offset 44), so not YAML or JSON\n\
         not-objects.yaml:14: error: the object has kind `ConfigMap` but no apiVersion: add the apiVersion of its API group\n\
         not-objects.yaml:18: error: kind is a list, not a string\n"
    );
    // The string, the list and the mapping without apiVersion and kind are not Kubernetes
    // objects: skipped, not errors.
    assert_eq!(
        run.stdout,
        "4 files, 3 documents, 3 evaluations: 0 rejected, 0 mutated, 0 warned, 3 accepted; 7 input errors (on stderr)\n\
         3 documents skipped: not Kubernetes objects (listed with --verbose)\n"
    );
    let run = scan_in(dir.path(), &[&args[..], &["--format", "json", "-v"]].concat(), None);
    assert_eq!(run.code, 2);
    let report = json_of(&run);
    assert_eq!(report["summary"]["errors"], 7);
    assert_eq!(
        report["errors"][3],
        serde_json::json!({"file": "broken.yaml", "line": 11, "message": "invalid YAML: did not find expected ',' or ']' at line 11 column 1, while parsing a flow sequence at line 10 column 11"})
    );
    assert_eq!(
        report["errors"][0],
        serde_json::json!({"file": "dangling.yaml", "line": null, "message": "cannot read: No such file or directory"})
    );
    assert_eq!(
        verdicts(&report),
        vec![
            v("broken.yaml", 1, "ownership-markers", "accepted"),
            v("broken.yaml", 12, "ownership-markers", "accepted"),
            v("not-objects.yaml", 9, "ownership-markers", "accepted"),
        ]
    );
    let run = scan_in(dir.path(), &[&args[..], &["--format", "sarif"]].concat(), None);
    let sarif = json_of(&run);
    check_sarif(&sarif);
    let invocation = &sarif["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    assert_eq!(invocation["toolExecutionNotifications"].as_array().unwrap().len(), 7);
    assert_eq!(
        invocation["toolExecutionNotifications"][3]["locations"][0]["physicalLocation"]["region"]["startLine"],
        11
    );
}

#[test]
fn a_repository_root_is_scanned_for_its_manifests_only() {
    // `syncguard scan .` at the root of a repository holding a Helm chart (with a subchart, a
    // values schema and CRDs), values files, CI configuration (hidden and not), a
    // docker-compose file, a Renovate configuration, a kustomization and manifests.
    let tree = data().join("repo");
    let mods = policies(BASE);
    let args = ["--policies", mods.path().to_str().unwrap(), "."];
    let run = scan_in(&tree, &args, None);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.stderr, "");
    assert_eq!(
        run.stdout,
        "8 files, 4 documents, 6 evaluations: 0 rejected, 0 mutated, 0 warned, 6 accepted\n\
         5 files skipped: not Kubernetes objects (listed with --verbose)\n\
         Helm chart charts/app skipped: its templates are not YAML until rendered; scan it with `helm template <release> charts/app | syncguard scan -`\n\
         kustomization overlays/prod/kustomization.yaml skipped: scan what it builds with `kustomize build overlays/prod | syncguard scan -`\n"
    );
    let run = scan_in(&tree, &[&args[..], &["--verbose"]].concat(), None);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[..lines.len() - 2],
        [
            "charts/app/crds/widgets.example.com.yaml:2:1: crd-safe-upgrade: accepted",
            "charts/app/crds/widgets.example.com.yaml:2:1: ownership-markers: accepted",
            "deploy/app.yaml:3:1: ownership-markers: accepted",
            "deploy/app.yaml:33:1: ownership-markers: accepted",
            "deploy/app.yaml:53:1: hook-job-safety: accepted",
            "deploy/app.yaml:53:1: ownership-markers: accepted",
            "azure-pipelines.yml:2: skipped: the document has no apiVersion and no kind",
            "ci/pipeline.yml:2: skipped: the document has no apiVersion and no kind",
            "docker-compose.yaml:1: skipped: the document has no apiVersion and no kind",
            "environments/prod/values.yaml:2: skipped: the document has no apiVersion and no kind",
            "overlays/prod/kustomization.yaml:1: skipped: a kustomize Kustomization, which `kustomize build` reads, not a Kubernetes object",
            "renovate.json:1: skipped: the document has no apiVersion and no kind",
            "8 files, 4 documents, 6 evaluations: 0 rejected, 0 mutated, 0 warned, 6 accepted",
            "5 files skipped: not Kubernetes objects",
        ]
    );
    // The same files named one by one, as pre-commit hands them to its hook: the chart's and the
    // hidden ones are left out or skipped alike.
    let mut named: Vec<String> = [
        ".github/workflows/ci.yaml",
        ".pre-commit-config.yaml",
        "azure-pipelines.yml",
        "charts/app/Chart.yaml",
        "charts/app/charts/cache/Chart.yaml",
        "charts/app/charts/cache/templates/statefulset.yaml",
        "charts/app/charts/cache/values.yaml",
        "charts/app/crds/widgets.example.com.yaml",
        "charts/app/templates/deployment.yaml",
        "charts/app/values.schema.json",
        "charts/app/values.yaml",
        "ci/pipeline.yml",
        "deploy/app.yaml",
        "docker-compose.yaml",
        "environments/prod/values.yaml",
        "overlays/prod/kustomization.yaml",
        "renovate.json",
    ]
    .map(String::from)
    .to_vec();
    named.insert(0, mods.path().to_str().unwrap().to_string());
    named.insert(0, "--policies".to_string());
    let named: Vec<&str> = named.iter().map(String::as_str).collect();
    let run = scan_in(&tree, &named, None);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout,
        "10 files, 4 documents, 6 evaluations: 0 rejected, 0 mutated, 0 warned, 6 accepted\n\
         7 files skipped: not Kubernetes objects (listed with --verbose)\n\
         Helm chart charts/app skipped: its templates are not YAML until rendered; scan it with `helm template <release> charts/app | syncguard scan -`\n\
         kustomization overlays/prod/kustomization.yaml skipped: scan what it builds with `kustomize build overlays/prod | syncguard scan -`\n"
    );
    // A folder inside a chart is the chart's: its templates are still not read.
    let run = scan_in(
        &tree,
        &[&args[..2], &["charts/app/templates", "charts/app/charts"]].concat(),
        None,
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout,
        "0 files, 0 documents, 0 evaluations: 0 rejected, 0 mutated, 0 warned, 0 accepted\n\
         Helm chart charts/app skipped: its templates are not YAML until rendered; scan it with `helm template <release> charts/app | syncguard scan -`\n"
    );
    // Every embedded policy at its defaults finds nothing to reject either.
    let run = scan_in(&tree, &["."], None);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.stderr, "");
    // Without the chart's Chart.yaml its templates are files like any other: not YAML.
    let copy = TempDir::new();
    copy_tree(&tree.join("charts/app"), copy.path());
    std::fs::remove_file(copy.path().join("Chart.yaml")).unwrap();
    let run = scan_in(copy.path(), &[&args[..2], &["."]].concat(), None);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.starts_with("templates/deployment.yaml:"), "{}", run.stderr);
    assert!(run.stderr.contains(": error: "), "{}", run.stderr);
}

/// Copies the files under `from` to `to`, folders included.
fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn rejection_and_input_error_together_exit_2() {
    let run = scan_with(BASE, &["findings", "bad/not-objects.yaml"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stdout.contains("ownership-markers/helmCompleteness: rejected"),
        "{}",
        run.stdout
    );
}

#[test]
fn usage_errors_exit_2() {
    let run = scan_with(BASE, &[]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("nothing to scan"), "{}", run.stderr);
    let run = scan_with(BASE, &["--format", "xml", "findings"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("invalid value 'xml'"), "{}", run.stderr);
    let run = scan_with(BASE, &["--jobs", "0", "findings"]);
    assert_eq!(run.code, 2);
    let empty = TempDir::new();
    let run = scan_in(
        &data(),
        &["--policies", empty.path().to_str().unwrap(), "findings"],
        None,
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("no policy folder holds an annotated-policy.wasm"),
        "{}",
        run.stderr
    );
}

#[test]
fn embedded_modules_are_the_built_ones() {
    let mut built: Vec<String> = std::fs::read_dir(root().join("policies"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("annotated-policy.wasm").is_file())
        .map(|e| e.file_name().to_string_lossy().to_string())
        // The all-in-one runs the same checks as the single policies: a scan leaves it out.
        .filter(|name| name != syncguard::registry::ALL_IN_ONE)
        .collect();
    built.sort();
    assert!(
        !built.is_empty(),
        "no policies/*/annotated-policy.wasm: run `make build` first"
    );
    let run = scan_in(&data(), &["--format", "json", "clean"], None);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = json_of(&run);
    let embedded: Vec<String> = report["policies"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["origin"] == "embedded")
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        embedded, built,
        "the binary embeds the modules that exist when it is built"
    );
    // And each as it is now: the bytes of every policies/*/annotated-policy.wasm are in the
    // binary (`include_bytes!` keeps a module whole), so a binary still holding a module that a
    // build has since replaced fails here.
    let binary = std::fs::read(env!("CARGO_BIN_EXE_syncguard")).unwrap();
    for name in &built {
        let module = std::fs::read(root().join("policies").join(name).join("annotated-policy.wasm")).unwrap();
        let head = &module[..module.len().min(64)];
        let whole = binary
            .windows(head.len())
            .enumerate()
            .filter(|(_, window)| *window == head)
            .any(|(at, _)| binary.get(at..at + module.len()) == Some(&module[..]));
        assert!(
            whole,
            "the binary embeds an older policies/{name}/annotated-policy.wasm than the one built: rebuild it (cli/build.rs names each module for cargo)"
        );
    }
}

#[test]
fn cluster_snapshot() {
    let run = scan_with(BASE, &["--cluster-snapshot", "bad/broken.yaml", "clean"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .starts_with("bad/broken.yaml:11: error: cluster snapshot: invalid YAML"),
        "{}",
        run.stderr
    );
    let run = scan_with(BASE, &["--cluster-snapshot", "missing.yaml", "clean"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "missing.yaml: error: cannot read the cluster snapshot: No such file or directory\n"
    );
    let run = scan_with(
        BASE,
        &[
            "--cluster-snapshot",
            "snapshot/cluster.yaml",
            "snapshot/stable-crd.yaml",
        ],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);

    // crd-kind-collision, context-aware, asks for the cluster's CRDs: the snapshot and the
    // scanned set answer, never the object under evaluation itself.
    let alone = scan_with(&["crd-kind-collision"], &["snapshot/stable-crd.yaml"]);
    assert_eq!(
        alone.code, 0,
        "no other Shirt anywhere: {}{}",
        alone.stdout, alone.stderr
    );
    assert_eq!(
        alone.stdout,
        "1 file, 1 document, 1 evaluation: 0 rejected, 0 mutated, 0 warned, 1 accepted\n"
    );
    let against = scan_with(
        &["crd-kind-collision"],
        &[
            "--cluster-snapshot",
            "snapshot/cluster.yaml",
            "snapshot/stable-crd.yaml",
        ],
    );
    assert_eq!(against.code, 1, "{}{}", against.stdout, against.stderr);
    assert!(
        against.stdout.starts_with("snapshot/stable-crd.yaml:9:5: crd-kind-collision/kindCollision: rejected: CustomResourceDefinition shirts.stable.example.com: serves kind Shirt (spec.names.kind) in group stable.example.com, but another API group already serves that kind: beta.example.com (CustomResourceDefinition shirts.beta.example.com): stable.example.com is under a reserved domain."),
        "{}",
        against.stdout
    );
    // Both CRDs scanned together: each sees the other through the scanned set.
    let together = scan_with(&["crd-kind-collision"], &["--format", "json", "snapshot"]);
    assert_eq!(together.code, 1);
    assert_eq!(
        verdicts(&json_of(&together)),
        vec![
            v("snapshot/cluster.yaml", 2, "crd-kind-collision", "rejected"),
            v("snapshot/stable-crd.yaml", 2, "crd-kind-collision", "rejected"),
        ]
    );
}

#[test]
fn the_benchmark_is_not_part_of_the_command() {
    // `make bench` and `make bench-scan` run their own binary (bench/runner): the command has no
    // `bench` subcommand and `scan` no hidden options for it.
    let dir = TempDir::new();
    for args in [
        &["--stats", "tree"][..],
        &["--generate-bench-tree", "tree", "--count", "5", "--crd-every", "4"],
    ] {
        let run = scan_in(dir.path(), args, None);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("unexpected argument"), "{}", run.stderr);
    }
    assert!(!dir.path().join("tree").exists());
    let bench = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .arg("bench")
        .output()
        .unwrap();
    assert_eq!(bench.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bench.stderr).contains("unrecognized subcommand 'bench'"),
        "{}",
        String::from_utf8_lossy(&bench.stderr)
    );
}

/// A folder of manifests for the walk's tests: `<name>` files each holding one ConfigMap,
/// ignore files as given, and a home of its own so that the machine's git configuration
/// (its global excludes) plays no part.
struct Tree {
    dir: TempDir,
    mods: TempDir,
}

impl Tree {
    fn new() -> Tree {
        let tree = Tree {
            dir: TempDir::new(),
            mods: policies(&["ownership-markers"]),
        };
        std::fs::create_dir_all(tree.dir.path().join("home")).unwrap();
        std::fs::create_dir_all(tree.dir.path().join("xdg")).unwrap();
        tree
    }

    fn write(&self, name: &str, text: &str) -> &Tree {
        let path = self.dir.path().join("repo").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    /// A ConfigMap named after the file, so that no two files hold the same object (identical
    /// copies would be judged once).
    fn manifest(&self, name: &str) -> &Tree {
        let object = name.replace(['/', '.', '_'], "-").to_lowercase();
        if name.ends_with(".json") {
            self.write(
                name,
                &format!(r#"{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {{"name": "{object}"}}}}"#),
            )
        } else {
            self.write(
                name,
                &format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {object}}}\n"),
            )
        }
    }

    /// The files a scan of `path` (in `repo/`) reads, in order, with `args`.
    fn scanned(&self, path: &str, args: &[&str]) -> Vec<String> {
        let mut all = vec![
            "--policies",
            self.mods.path().to_str().unwrap(),
            "--format",
            "json",
            "-v",
            path,
        ];
        all.extend_from_slice(args);
        let home = self.dir.path().join("home");
        let xdg = self.dir.path().join("xdg");
        // The compile cache stays where it was, HOME moving.
        let cache = std::env::var_os("SYNCGUARD_CACHE_DIR").unwrap_or_else(|| {
            std::env::var_os("XDG_CACHE_HOME")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .map(|base| base.join("syncguard").into_os_string())
                .unwrap_or_else(|| "off".into())
        });
        let env = [
            ("HOME", home.as_os_str()),
            ("XDG_CONFIG_HOME", xdg.as_os_str()),
            ("SYNCGUARD_CACHE_DIR", cache.as_os_str()),
            ("GIT_CONFIG_NOSYSTEM", std::ffi::OsStr::new("1")),
        ];
        let run = scan_env(&self.dir.path().join("repo"), &all, None, &env);
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        let mut files: Vec<String> = Vec::new();
        for result in json_of(&run)["results"].as_array().unwrap() {
            let file = result["file"].as_str().unwrap().to_string();
            if files.last() != Some(&file) {
                files.push(file);
            }
        }
        assert_eq!(
            json_of(&run)["summary"]["files"].as_u64().unwrap() as usize,
            files.len(),
            "{}",
            run.stdout
        );
        files
    }
}

#[test]
fn gitignored_files_are_skipped_in_a_git_repository_unless_no_ignore() {
    let tree = Tree::new();
    tree.manifest("a.yaml")
        .manifest("rendered/chart.yaml")
        .manifest("secret.yaml")
        .manifest("deploy/b.yaml")
        .manifest("deploy/generated.json")
        .manifest(".github/workflow.yaml")
        .write(".gitignore", "rendered/\nsecret.yaml\n!.github\n")
        .write("deploy/.gitignore", "generated.json\n");
    // Not a git repository yet: .gitignore files do not count (ripgrep's `require_git`).
    let everything = [
        "a.yaml",
        "deploy/b.yaml",
        "deploy/generated.json",
        "rendered/chart.yaml",
        "secret.yaml",
    ];
    assert_eq!(tree.scanned(".", &[]), everything);
    std::fs::create_dir(tree.dir.path().join("repo/.git")).unwrap();
    assert_eq!(tree.scanned(".", &[]), ["a.yaml", "deploy/b.yaml"]);
    // A folder inside the repository: the root's .gitignore and its own count.
    assert_eq!(tree.scanned("deploy", &[]), ["deploy/b.yaml"]);
    // Named on the command line, an ignored file is read.
    assert_eq!(tree.scanned("secret.yaml", &[]), ["secret.yaml"]);
    // --no-ignore reads them all; hidden entries stay skipped, whatever `!.github` says.
    assert_eq!(tree.scanned(".", &["--no-ignore"]), everything);
}

#[test]
fn ignore_files_and_git_global_excludes() {
    let tree = Tree::new();
    tree.manifest("a.yaml")
        .manifest("b.yaml")
        .manifest("c.yaml")
        .manifest("sub/d.yaml")
        .write(".ignore", "b.yaml\n");
    std::fs::create_dir_all(tree.dir.path().join("xdg/git")).unwrap();
    std::fs::write(tree.dir.path().join("xdg/git/ignore"), "c.yaml\n").unwrap();
    // `.ignore` counts outside a git repository too; git's global excludes only inside one.
    assert_eq!(tree.scanned(".", &[]), ["a.yaml", "c.yaml", "sub/d.yaml"]);
    std::fs::create_dir(tree.dir.path().join("repo/.git")).unwrap();
    assert_eq!(tree.scanned(".", &[]), ["a.yaml", "sub/d.yaml"]);
    tree.write(".git/info/exclude", "sub/\n");
    assert_eq!(tree.scanned(".", &[]), ["a.yaml"]);
    assert_eq!(
        tree.scanned(".", &["--no-ignore"]),
        ["a.yaml", "b.yaml", "c.yaml", "sub/d.yaml"]
    );
}

/// kind-group-clash judges only what one Helm release installs together: a `helm template`
/// stream (its `# Source:` comments) is one release, the Istio samples' two versions of one
/// Gateway are not, and `helmVersion` 3.17.1 or later reports nothing.
#[test]
fn kind_group_clash_only_within_one_helm_release() {
    let dir = TempDir::new();
    let pair = |comments: [&str; 2]| {
        format!(
            "---\n{}apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata:\n  name: bookinfo-gateway\n---\n{}apiVersion: stable.example.com/v1\nkind: Gateway\nmetadata:\n  name: bookinfo-gateway\n",
            comments[0], comments[1]
        )
    };
    std::fs::write(dir.path().join("samples.yaml"), pair(["", ""])).unwrap();
    let stream = pair([
        "# Source: shop/templates/istio.yaml\n",
        "# Source: shop/templates/stable.yaml\n",
    ]);
    std::fs::write(dir.path().join("rendered.yaml"), &stream).unwrap();
    std::fs::write(
        dir.path().join("fixed.yaml"),
        "policies:\n  kind-group-clash:\n    settings: {helmVersion: v3.17.1}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("bad.yaml"),
        "policies:\n  kind-group-clash:\n    settings: {helmVersion: latest}\n",
    )
    .unwrap();
    let mods = policies(&["hook-job-safety"]);
    let mods = mods.path().to_str().unwrap();

    let run = scan_in(dir.path(), &["--policies", mods, "samples.yaml"], None);
    assert_eq!(run.code, 0, "no release, no clash: {}{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains("kind-group-clash"), "{}", run.stdout);

    let run = scan_in(dir.path(), &["--policies", mods, "rendered.yaml"], None);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let clashes: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains(": kind-group-clash/"))
        .collect();
    assert_eq!(clashes.len(), 1, "one finding for the set: {}", run.stdout);
    assert!(
        clashes[0].starts_with("rendered.yaml:3:1: kind-group-clash/sameKindAndName: rejected: Gateway \"bookinfo-gateway\" is defined in 2 API groups in one Helm release (the helm template output of chart \"shop\" in rendered.yaml): networking.istio.io/v1 at rendered.yaml:3, stable.example.com/v1 at rendered.yaml:9."),
        "{}",
        clashes[0]
    );
    // The same stream on standard input.
    let run = scan_in(dir.path(), &["--policies", mods, "-"], Some(&stream));
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);

    let run = scan_in(
        dir.path(),
        &["--policies", mods, "--config", "fixed.yaml", "rendered.yaml"],
        None,
    );
    assert_eq!(
        run.code, 0,
        "Helm 3.17.1 tells them apart: {}{}",
        run.stdout, run.stderr
    );
    let run = scan_in(
        dir.path(),
        &["--policies", mods, "--config", "bad.yaml", "rendered.yaml"],
        None,
    );
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stderr.contains("`helmVersion`: \"latest\" is not a Helm version"),
        "{}",
        run.stderr
    );
}

/// A CRD version that `--base` shows removed is a warning when the files carry no status, and
/// the cluster snapshot's `status.storedVersions` decides when one is given.
#[test]
fn base_removed_version_warns_and_the_snapshot_decides() {
    let repo = TempDir::new();
    let crd = |versions: &str| {
        format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.example.org\nspec:\n  group: example.org\n  scope: Namespaced\n  names: {{kind: Thing, plural: things, singular: thing}}\n  versions:\n{versions}"
        )
    };
    let version = |name: &str, storage: bool| {
        format!(
            "    - name: {name}\n      served: true\n      storage: {storage}\n      schema:\n        openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}\n"
        )
    };
    std::fs::create_dir_all(repo.path().join("crds")).unwrap();
    std::fs::write(
        repo.path().join("crds/things.yaml"),
        crd(&format!("{}{}", version("v1alpha1", false), version("v1", true))),
    )
    .unwrap();
    git(repo.path(), &["init", "-q"]);
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-q", "-m", "things with v1alpha1"]);
    std::fs::write(repo.path().join("crds/things.yaml"), crd(&version("v1", true))).unwrap();
    let snapshot = |stored: &str| {
        format!(
            "{}status:\n  storedVersions: {stored}\n",
            crd(&format!("{}{}", version("v1alpha1", false), version("v1", true)))
        )
    };
    std::fs::write(repo.path().join("stored-both.yaml"), snapshot("[v1alpha1, v1]")).unwrap();
    std::fs::write(repo.path().join("stored-v1.yaml"), snapshot("[v1]")).unwrap();
    let mods = policies(&["crd-safe-upgrade"]);
    let mods = mods.path().to_str().unwrap();

    let run = scan_in(repo.path(), &["--policies", mods, "--base", "HEAD", "crds"], None);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("crds/things.yaml:9:3: crd-safe-upgrade/storedVersionRemoval (UPDATE): warned")
            && run.stdout.contains("\"v1alpha1\" is removed from spec.versions")
            && run.stdout.contains(
                "Check each cluster with `kubectl get crd things.example.org -o jsonpath='{.status.storedVersions}'`"
            ),
        "{}",
        run.stdout
    );

    let args = |file: &'static str| ["--policies", mods, "--base", "HEAD", "--cluster-snapshot", file, "crds"];
    let run = scan_in(repo.path(), &args("stored-both.yaml"), None);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("status.storedVersions[0] \"v1alpha1\" is not in the new spec.versions"),
        "{}",
        run.stdout
    );
    let run = scan_in(repo.path(), &args("stored-v1.yaml"), None);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        !run.stdout.contains("v1alpha1"),
        "the cluster never stored it: {}",
        run.stdout
    );
}

#[test]
fn each_finding_is_one_line_at_its_field_with_counts_by_rule() {
    let run = scan_with(BASE, &["findings/rendered.yaml"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    // The hook's TTL at its own key (line 36, column 3), the ClusterIssuer's missing label at
    // the deepest part of its path the file holds (`metadata`, line 49, column 1).
    assert!(
        lines[0].starts_with("findings/rendered.yaml:36:3: hook-job-safety/ttlSecondsAfterFinished: warned: Job kyverno/kyverno-clean-reports: "),
        "{}",
        run.stdout
    );
    assert!(
        lines[1].starts_with("findings/rendered.yaml:49:1: ownership-markers/"),
        "{}",
        run.stdout
    );
    assert!(
        lines[1].contains(": rejected: ClusterIssuer letsencrypt-prod: "),
        "{}",
        run.stdout
    );
    // Every line carries the whole path of its field.
    assert!(lines[0].contains("spec.ttlSecondsAfterFinished"), "{}", lines[0]);
    assert!(
        lines[1].contains("metadata.labels[app.kubernetes.io/managed-by]"),
        "{}",
        lines[1]
    );
    assert_eq!(
        lines[2],
        "1 file, 3 documents, 4 evaluations: 1 rejected, 0 mutated, 1 warned, 2 accepted"
    );
    assert_eq!(lines[3], "2 findings: 1 rejecting, 1 warning");
    assert_eq!(lines[4], "  hook-job-safety/ttlSecondsAfterFinished: 1 warning");
    assert!(
        lines[5].starts_with("  ownership-markers/") && lines[5].ends_with(": 1 rejecting"),
        "{}",
        lines[5]
    );
    assert_eq!(lines.len(), 6, "{}", run.stdout);
    // JSON counts the same, and gives each finding's column.
    let report = json_of(&scan_with(BASE, &["--format", "json", "findings/rendered.yaml"]));
    assert_eq!(report["summary"]["findings"]["reject"], 1);
    assert_eq!(report["summary"]["findings"]["warn"], 1);
    assert_eq!(
        report["summary"]["findings"]["rules"]["hook-job-safety/ttlSecondsAfterFinished"],
        serde_json::json!({"reject": 0, "warn": 1})
    );
    let ttl = &report["results"][0]["findings"][0];
    assert_eq!(
        (ttl["line"].as_u64(), ttl["column"].as_u64()),
        (Some(36), Some(3)),
        "{ttl}"
    );
}

#[test]
fn no_admission_limit_cuts_the_scan_output() {
    // sync-drift's findings on one object: each is a line, whole, however many the warning
    // limits of admission would leave out.
    let run = scan_with(&["sync-drift"], &["drift"]);
    let findings = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("drift/deployment.yaml:"))
        .count();
    let report = json_of(&scan_with(&["sync-drift"], &["--format", "json", "drift"]));
    let listed: usize = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["findings"].as_array().unwrap().len())
        .sum();
    assert_eq!(findings, listed, "{}", run.stdout);
    assert!(!run.stdout.contains('…'), "nothing is shortened: {}", run.stdout);
    assert!(!run.stdout.contains(" more"), "{}", run.stdout);
}

#[test]
fn a_custom_resource_names_the_crd_copy_it_was_judged_against() {
    let run = scan_with(&["sync-drift"], &["copies/differ"]);
    let widget: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("copies/differ/widget.yaml:"))
        .collect();
    assert_eq!(widget.len(), 1, "{}", run.stdout);
    assert!(
        widget[0].starts_with("copies/differ/widget.yaml:8:3: sync-drift/prunedField: "),
        "{}",
        widget[0]
    );
    assert!(
        widget[0].ends_with(
            " (judged against the CRD at copies/differ/b-crd.yaml:2; other copies at copies/differ/a-crd.yaml:2: they differ, so the answer depends on which one is installed)"
        ),
        "{}",
        widget[0]
    );
    let report = json_of(&scan_with(&["sync-drift"], &["--format", "json", "copies/differ"]));
    let row = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "Widget")
        .unwrap();
    assert_eq!(row["crd"]["used"]["file"], "copies/differ/b-crd.yaml");
    assert_eq!(row["crd"]["differ"], true);
    // Identical copies: named, and the same answer whichever is installed.
    let run = scan_with(&["sync-drift"], &["copies/same"]);
    assert!(
        run.stdout.contains(
            "(judged against the CRD at copies/same/b-crd.yaml:2; other copies at copies/same/a-crd.yaml:2: they are identical)"
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn identical_copies_are_judged_once_and_named() {
    let dir = policies(&["sync-drift", "crd-schema-fields"]);
    let json = scan_in(
        &data(),
        &[
            "--policies",
            dir.path().to_str().unwrap(),
            "--format",
            "json",
            "--verbose",
            "copies/same",
        ],
        None,
    );
    let report = json_of(&json);
    let crd_rows: Vec<&Value> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "CustomResourceDefinition" && r["policy"] != "duplicate-object")
        .collect();
    assert!(!crd_rows.is_empty());
    for row in &crd_rows {
        assert_eq!(
            row["file"], "copies/same/a-crd.yaml",
            "judged once, as the first copy: {row}"
        );
        assert_eq!(row["copies"][0]["file"], "copies/same/b-crd.yaml", "{row}");
    }
    // The duplicate itself is one warning naming both places.
    let duplicates: Vec<&Value> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["policy"] == "duplicate-object")
        .collect();
    assert_eq!(duplicates.len(), 1, "{report}");
    assert_eq!(duplicates[0]["verdict"], "warned");
    assert!(
        duplicates[0]["findings"][0]["text"]
            .as_str()
            .unwrap()
            .contains("is defined 2 times (identical definitions): copies/same/a-crd.yaml:2, copies/same/b-crd.yaml:2")
    );
}

#[test]
fn the_same_object_twice_is_reported_once_with_every_place() {
    let run = scan_with(BASE, &["dup"]);
    assert_eq!(run.code, 0, "a duplicate warns: {}{}", run.stdout, run.stderr);
    let lines: Vec<&str> = run.stdout.lines().filter(|l| l.contains("duplicate-object")).collect();
    assert_eq!(lines.len(), 2, "one finding, then its count: {}", run.stdout);
    assert!(
        lines[0].starts_with(
            "dup/again.yaml:2:1: duplicate-object/repeatedResource: warned: ConfigMap shop/settings is defined 2 times (definitions that differ): dup/again.yaml:2, dup/configmaps.yaml:1. Argo CD applies only the last one"
        ),
        "{}",
        lines[0]
    );
    assert_eq!(lines[1], "  duplicate-object/repeatedResource: 1 warning");
    let failed = scan_with(BASE, &["--fail-on", "warn", "dup"]);
    assert_eq!(failed.code, 1, "{}", failed.stdout);
    // Turned off in the config.
    let dir = TempDir::new();
    let config = dir.path().join("off.yaml");
    std::fs::write(&config, "policies:\n  duplicate-object: {enabled: false}\n").unwrap();
    let off = scan_with(BASE, &["--config", config.to_str().unwrap(), "dup"]);
    assert!(!off.stdout.contains("duplicate-object"), "{}", off.stdout);
    std::fs::write(&config, "policies:\n  duplicate-object: {settings: {x: 1}}\n").unwrap();
    let bad = scan_with(BASE, &["--config", config.to_str().unwrap(), "dup"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("policy duplicate-object: invalid settings in"),
        "{}",
        bad.stderr
    );
}

#[test]
fn findings_are_suppressed_on_the_object_with_a_reason() {
    let run = scan_with(BASE, &["suppress/rendered.yaml"]);
    assert_eq!(
        run.code, 0,
        "both findings are suppressed: {}{}",
        run.stdout, run.stderr
    );
    assert_eq!(
        run.stdout,
        "1 file, 3 documents, 4 evaluations: 1 rejected, 0 mutated, 1 warned, 2 accepted\n\
         0 findings: 0 rejecting, 0 warning; 2 suppressed by the objects' ignore-check.syncguard.io/<policy> annotations (--verbose lists them)\n"
    );
    let verbose = scan_with(BASE, &["--verbose", "suppress/rendered.yaml"]);
    assert!(
        verbose.stdout.contains(
            "suppress/rendered.yaml:37:3: hook-job-safety/ttlSecondsAfterFinished: suppressed: Job kyverno/kyverno-clean-reports: "
        ),
        "{}",
        verbose.stdout
    );
    assert!(
        verbose
            .stdout
            .contains("(reason: Kyverno's cleanup controller deletes it, Argo CD never runs this chart)"),
        "{}",
        verbose.stdout
    );
    let report = json_of(&scan_with(BASE, &["--format", "json", "suppress/rendered.yaml"]));
    assert_eq!(report["summary"]["findings"]["suppressed"], 2);
    let sarif = json_of(&scan_with(BASE, &["--format", "sarif", "suppress/rendered.yaml"]));
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for result in results {
        assert_eq!(result["suppressions"][0]["kind"], "inSource", "{result}");
    }
    // An annotation without a reason, or naming no policy or rule, suppresses nothing and is an
    // input error.
    let bad = scan_with(BASE, &["suppress/bad-annotations.yaml"]);
    assert_eq!(bad.code, 2, "{}{}", bad.stdout, bad.stderr);
    let errors: Vec<&str> = bad.stderr.lines().collect();
    assert_eq!(errors.len(), 3, "{}", bad.stderr);
    assert!(errors.iter().any(|e| e.starts_with(
        "suppress/bad-annotations.yaml:1: error: annotation ignore-check.syncguard.io/ownership-markers suppresses nothing without a reason"
    )), "{}", bad.stderr);
    assert!(
        errors.iter().any(|e| e.contains("there is no policy named sync-drif")),
        "{}",
        bad.stderr
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("policy sync-drift has no rule quantiy")),
        "{}",
        bad.stderr
    );
}

#[test]
fn fail_on_and_tools_flags() {
    // hook-job-safety warns: exit 0 at the default threshold, 1 with --fail-on warn.
    assert_eq!(scan_with(&["hook-job-safety"], &["findings/rendered.yaml"]).code, 0);
    assert_eq!(
        scan_with(&["hook-job-safety"], &["--fail-on", "warn", "findings/rendered.yaml"]).code,
        1
    );
    let bad = scan_with(
        &["hook-job-safety"],
        &["--fail-on", "warning", "findings/rendered.yaml"],
    );
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("invalid value 'warning' for '--fail-on <LEVEL>'"),
        "{}",
        bad.stderr
    );
    // --tools sets sync-drift's tools: `globalDefault: false` dropped is drift only kubectl shows.
    let with = |args: &[&str]| {
        let mut all = vec!["--format", "json"];
        all.extend_from_slice(args);
        all.push("tools");
        json_of(&scan_with(&["sync-drift"], &all))["summary"]["findings"]["warn"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(with(&["--tools", "kubectl"]), 1);
    assert_eq!(with(&["--tools", "argocd,flux"]), 0);
    // Over the config's tools, keeping its other settings.
    let dir = TempDir::new();
    let config = dir.path().join("tools.yaml");
    std::fs::write(&config, "policies:\n  sync-drift:\n    settings: {tools: [argocd]}\n").unwrap();
    let config = config.to_str().unwrap();
    assert_eq!(with(&["--config", config]), 0);
    assert_eq!(with(&["--config", config, "--tools", "argocd,kubectl"]), 1);
    let unknown = scan_with(&["sync-drift"], &["--tools", "argo,flux", "tools"]);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.contains("invalid value 'argo' for '--tools <TOOL,...>'") && unknown.stderr.contains("argocd"),
        "{}",
        unknown.stderr
    );
}

/// object-validation in a tree: a custom resource beside its CRD is judged against the CRD's
/// schema, and each field error is reported at its field's line with the API server's message.
#[test]
fn object_validation_finds_each_error_at_its_line() {
    let dir = TempDir::new();
    let crd = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [size]
              properties:
                size: {type: integer, maximum: 10}
                mode: {type: string, enum: [Fast, Slow]}
"#;
    let widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: default\nspec:\n  size: 12\n  mode: fast\n";
    std::fs::write(dir.path().join("crd.yaml"), crd).unwrap();
    std::fs::write(dir.path().join("widget.yaml"), widget).unwrap();
    let modules = policies(&["object-validation"]);
    let run = scan_in(dir.path(), &["--policies", modules.path().to_str().unwrap(), "."], None);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "widget.yaml:7:3: object-validation/schemaViolation: rejected: Widget default/w: spec.size: Invalid value: 12: spec.size in body should be less than or equal to 10"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            r#"widget.yaml:8:3: object-validation/schemaViolation: rejected: Widget default/w: spec.mode: Unsupported value: "fast": supported values: "Fast", "Slow""#
        ),
        "{}",
        run.stdout
    );
}

/// kwok's layout: a kustomization that adds the Deployment's selector (`labels:
/// includeSelectors`), its base Deployment without one, and a patch of a container without an
/// image. The base and the patch are kustomize's input: what kustomize or an overlay fills is not
/// held against them, a wrong value they give still is; the same Deployment outside any
/// kustomization is refused as the API server would refuse it.
#[test]
fn kustomize_inputs_are_not_refused_for_what_kustomize_fills() {
    let dir = TempDir::new();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: kwok-controller\n  namespace: kube-system\n\
                      spec:\n  replicas: 1\n  template:\n    metadata:\n      labels: {app: kwok-controller}\n\
                      \x20   spec:\n      containers:\n      - name: kwok-controller\n        image: registry.k8s.io/kwok/kwok\n";
    write(
        "kwok/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nlabels:\n- includeSelectors: true\n  pairs: {app: kwok-controller}\n\
         resources:\n- deployment.yaml\n- https://example.com/remote.yaml\npatches:\n- path: patch.yaml\n",
    );
    write("kwok/deployment.yaml", deployment);
    write(
        "kwok/patch.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: kwok-controller}\nspec:\n  template:\n    spec:\n      containers:\n\
         \x20     - name: kwok-controller\n        args: [--manage-all-nodes]\n",
    );
    // A wrong value in a listed resource stays a refusal: kustomize passes it on as it is.
    write("typo/kustomization.yaml", "resources: [deployment.yaml]\n");
    // Each its own object: identical copies of one object would be judged once.
    write(
        "typo/deployment.yaml",
        &deployment
            .replace("replicas: 1", "replicas: one")
            .replace("name: kwok-controller\n  namespace", "name: typo\n  namespace"),
    );
    write(
        "loose/deployment.yaml",
        &deployment.replace("name: kwok-controller\n  namespace", "name: loose\n  namespace"),
    );
    let mods = policies(&["object-validation"]);
    let run = scan_in(
        dir.path(),
        &["--policies", mods.path().to_str().unwrap(), "--format", "json", "."],
        None,
    );
    let report = json_of(&run);
    let rows: Vec<(String, String, Vec<String>)> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let briefs = r["findings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["brief"].as_str().unwrap().to_string())
                .collect();
            (
                r["file"].as_str().unwrap().to_string(),
                r["verdict"].as_str().unwrap().to_string(),
                briefs,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (
                "loose/deployment.yaml".to_string(),
                "rejected".to_string(),
                vec!["Deployment kube-system/loose: spec.selector: Required value".to_string()]
            ),
            (
                "typo/deployment.yaml".to_string(),
                "rejected".to_string(),
                vec![
                    "Deployment kube-system/typo: spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\"".to_string()
                ]
            ),
        ],
        "{}",
        run.stdout
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
}

/// Under `--base`, a CRD whose update tightens its schema is judged against the stored objects
/// the cluster snapshot holds of its kind, when object-validation's `storedObjects` names it:
/// the one the new schema refuses is named with the API server's message, the one it accepts is
/// not, and the finding is at the changed version's schema in the CRD's file.
#[test]
fn base_crd_update_is_judged_against_the_snapshots_stored_objects() {
    let repo = TempDir::new();
    let crd = |maximum: u32| {
        format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  scope: Namespaced\n  names: {{kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}}\n  versions:\n    - name: v1\n      served: true\n      storage: true\n      schema:\n        openAPIV3Schema:\n          type: object\n          properties:\n            spec:\n              type: object\n              properties:\n                size: {{type: integer, maximum: {maximum}}}\n"
        )
    };
    std::fs::create_dir_all(repo.path().join("crds")).unwrap();
    std::fs::write(repo.path().join("crds/widgets.yaml"), crd(10)).unwrap();
    git(repo.path(), &["init", "-q"]);
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-q", "-m", "widgets up to 10"]);
    std::fs::write(repo.path().join("crds/widgets.yaml"), crd(5)).unwrap();
    // What `kubectl get widgets -A -o yaml` gives: two stored Widgets, one of size 8.
    let widget = |name: &str, size: u32| {
        format!(
            "- apiVersion: example.com/v1\n  kind: Widget\n  metadata: {{name: {name}, namespace: shop, uid: u-{name}, resourceVersion: \"7\"}}\n  spec: {{size: {size}}}\n"
        )
    };
    std::fs::write(
        repo.path().join("widgets-stored.yaml"),
        format!(
            "apiVersion: v1\nkind: List\nitems:\n{}{}",
            widget("big", 8),
            widget("small", 3)
        ),
    )
    .unwrap();
    std::fs::write(
        repo.path().join("syncguard.yaml"),
        "policies:\n  object-validation:\n    settings:\n      storedObjects: [{apiVersion: example.com/v1, kind: Widget}]\n",
    )
    .unwrap();
    let mods = policies(&["object-validation"]);
    let mods = mods.path().to_str().unwrap();
    let args = |config: bool| {
        let mut args = vec![
            "--policies",
            mods,
            "--base",
            "HEAD",
            "--cluster-snapshot",
            "widgets-stored.yaml",
        ];
        if config {
            args.extend(["--config", "syncguard.yaml"]);
        }
        args.push("crds");
        args
    };
    let run = scan_in(repo.path(), &args(true), None);
    assert_eq!(run.code, 0, "a warning by default: {}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "crds/widgets.yaml:14:9: object-validation/storedObjectInvalid (UPDATE): warned: CustomResourceDefinition widgets.example.com: 1 of 2 stored Widgets no longer validates"
        ) && run.stdout.contains(
            "shop/big (spec.size: Invalid value: 8: spec.size in body should be less than or equal to 5)"
        ),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("shop/small"), "{}", run.stdout);
    // Without the setting, the stored objects are not looked up.
    let run = scan_in(repo.path(), &args(false), None);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains("storedObject"), "{}", run.stdout);
}
