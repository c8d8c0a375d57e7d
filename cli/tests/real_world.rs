//! `syncguard scan` over a real platform repository: the plain install manifests and CRDs of
//! widely used projects at released versions (`cli/tests/data/real-world/`, one folder per
//! project, every file naming its repository, tag, commit and path on its first line, the whole
//! listed in `SOURCES.tsv` and re-extracted from local git mirrors by
//! `tools/real-world-suite.py`), scanned all together at default settings as a user runs it
//! (`syncguard scan real-world`, the embedded modules: `make build` first).
//!
//! Every rejection and every warning (level, policy and rule, file, object, field path) and every
//! input error is recorded in `real-world/findings.txt`, sorted, one a line, and compared line for
//! line: a change in what the scan reports on real manifests fails the test until it is reviewed
//! (`real-world/review.md` judges each one) and recorded again with
//! `SYNCGUARD_RECORD_REAL_WORLD=1 cargo test --locked --profile host -p syncguard-cli --test real_world`.

mod common;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Instant;

/// The folder holding the suite's folder.
fn data() -> PathBuf {
    common::root().join("cli/tests/data")
}

/// The suite.
fn suite() -> PathBuf {
    data().join("real-world")
}

/// The rows of `SOURCES.tsv`, by column name.
fn sources() -> Vec<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(suite().join("SOURCES.tsv")).expect("real-world/SOURCES.tsv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    assert_eq!(
        header,
        ["project", "repository", "tag", "commit", "paths", "license", "edit"]
    );
    lines
        .map(|line| {
            let cells: Vec<&str> = line.split('\t').collect();
            assert_eq!(cells.len(), header.len(), "SOURCES.tsv: {line}");
            header
                .iter()
                .zip(cells)
                .map(|(h, c)| (h.to_string(), c.to_string()))
                .collect()
        })
        .collect()
}

/// Every file of the suite names where it comes from, as `SOURCES.tsv` says, and the suite is
/// what the issue asks for: at least 15 projects, each at a commit.
#[test]
fn every_file_names_its_source() {
    let rows = sources();
    assert!(rows.len() >= 15, "only {} projects", rows.len());
    let mut projects = BTreeSet::new();
    for row in &rows {
        assert!(
            row["commit"].len() == 40 && row["commit"].bytes().all(|b| b.is_ascii_hexdigit()),
            "{}: commit {}",
            row["project"],
            row["commit"]
        );
        assert!(projects.insert(row["project"].clone()), "{} twice", row["project"]);
    }
    let mut folders = BTreeSet::new();
    let mut files = 0;
    for entry in std::fs::read_dir(suite()).unwrap() {
        let path = entry.unwrap().path();
        if !path.is_dir() {
            continue;
        }
        let project = path.file_name().unwrap().to_string_lossy().to_string();
        let row = rows
            .iter()
            .find(|r| r["project"] == project)
            .unwrap_or_else(|| panic!("real-world/{project} is not in SOURCES.tsv"));
        let mut stack = vec![path.clone()];
        let mut count = 0;
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let file = entry.unwrap().path();
                if file.is_dir() {
                    stack.push(file);
                    continue;
                }
                let relative = file.strip_prefix(&path).unwrap().to_string_lossy().replace('\\', "/");
                let text = std::fs::read_to_string(&file).unwrap();
                let first = text.lines().next().unwrap_or_default();
                let expected = format!(
                    "# {} {} {} {} ({})",
                    row["repository"], row["tag"], row["commit"], relative, row["license"]
                );
                assert_eq!(first, expected, "real-world/{project}/{relative}: first line");
                count += 1;
            }
        }
        assert!(count > 0, "real-world/{project} is empty");
        files += count;
        folders.insert(project);
    }
    assert_eq!(folders, projects, "a folder per project of SOURCES.tsv");
    assert!(files >= 100, "only {files} files");
}

/// One line of the record: `<level> <policy>/<rule> <file> <apiVersion> <kind> <namespace/name> <path>`.
fn finding_line(result: &Value, level: &str, rule: Option<&str>, path: &str) -> String {
    let file = result["file"].as_str().unwrap();
    let file = file.strip_prefix("real-world/").unwrap_or(file);
    let place = match result["item"].as_u64() {
        Some(item) => format!("{file}#{}.items[{item}]", result["document"]),
        None => format!("{file}#{}", result["document"]),
    };
    let name = match (result["namespace"].as_str(), result["name"].as_str()) {
        (Some(namespace), Some(name)) => format!("{namespace}/{name}"),
        (None, Some(name)) => name.to_string(),
        _ => "-".to_string(),
    };
    let policy = result["policy"].as_str().unwrap();
    let operation = match result["operation"].as_str() {
        Some("CREATE") | None => String::new(),
        Some(other) => format!(" ({other})"),
    };
    format!(
        "{level} {policy}{}{operation} {place} {} {} {name} {}",
        rule.map(|r| format!("/{r}")).unwrap_or_default(),
        result["apiVersion"].as_str().unwrap_or("-"),
        result["kind"].as_str().unwrap_or("-"),
        if path.is_empty() { "-" } else { path },
    )
}

/// The record of a JSON report: a header with the counts, then every finding, sorted.
fn record(report: &Value, seconds: f64) -> (String, String) {
    let mut lines = Vec::new();
    let mut per_rule: BTreeMap<String, usize> = BTreeMap::new();
    for result in report["results"].as_array().unwrap() {
        let verdict = result["verdict"].as_str().unwrap();
        let findings = result["findings"].as_array().unwrap();
        if findings.is_empty() {
            // an answer without listed findings: a refusal of a malformed document, a mutation,
            // a module that is not syncguard's
            let level = match verdict {
                "rejected" => "reject",
                "mutated" => "mutate",
                "warned" => "warn",
                _ => continue,
            };
            lines.push(finding_line(result, level, None, ""));
            *per_rule
                .entry(format!("{level} {}", result["policy"].as_str().unwrap()))
                .or_default() += 1;
        }
        for finding in findings {
            let level = finding["action"].as_str().unwrap();
            let rule = finding["rule"].as_str().unwrap();
            lines.push(finding_line(
                result,
                level,
                Some(rule),
                finding["path"].as_str().unwrap_or_default(),
            ));
            *per_rule
                .entry(format!("{level} {}/{rule}", result["policy"].as_str().unwrap()))
                .or_default() += 1;
        }
    }
    for error in report["errors"].as_array().unwrap() {
        let file = error["file"].as_str().unwrap();
        lines.push(format!(
            "error {}:{} {}",
            file.strip_prefix("real-world/").unwrap_or(file),
            error["line"],
            error["message"].as_str().unwrap()
        ));
    }
    lines.sort();
    let summary = &report["summary"];
    let policies: Vec<&str> = report["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    let mut text = String::new();
    text.push_str(
        "# `syncguard scan real-world` at default settings: every rejection, warning and input error, sorted.\n\
         # <level> <policy>/<rule> <file>#<document> <apiVersion> <kind> <namespace/name> <field path>\n\
         # Reviewed in review.md; recorded with SYNCGUARD_RECORD_REAL_WORLD=1 (cli/tests/real_world.rs).\n",
    );
    text.push_str(&format!("# policies: {}\n", policies.join(", ")));
    text.push_str(&format!(
        "# {} files, {} documents, {} evaluations: {} rejected, {} mutated, {} warned, {} accepted, {} errors\n",
        summary["files"],
        summary["documents"],
        summary["evaluations"],
        summary["rejected"],
        summary["mutated"],
        summary["warned"],
        summary["accepted"],
        summary["errors"]
    ));
    for (rule, count) in &per_rule {
        text.push_str(&format!("# {count} {rule}\n"));
    }
    for line in &lines {
        text.push_str(line);
        text.push('\n');
    }
    let timing = format!("{seconds:.2} s");
    (text, timing)
}

/// The whole suite scanned together at default settings: every rejection and warning is the
/// recorded one.
#[test]
fn scan_of_real_install_manifests_is_the_recorded_one() {
    let start = Instant::now();
    let output = common::syncguard()
        .current_dir(data())
        .args(["scan", "--format", "json", "real-world"])
        .output()
        .expect("the syncguard binary runs");
    let seconds = start.elapsed().as_secs_f64();
    let (stdout, stderr) = common::text(&output);
    let report: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}); run `make build` first?\n{stderr}"));
    assert!(
        report["policies"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["origin"] == "embedded"),
        "the binary embeds no module: run `make build` first"
    );
    let (text, timing) = record(&report, seconds);
    eprintln!("the scan of the real-world suite took {timing}");
    let path = suite().join("findings.txt");
    if std::env::var_os("SYNCGUARD_RECORD_REAL_WORLD").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let recorded = std::fs::read_to_string(&path).unwrap_or_default();
    if recorded != text {
        let old: BTreeSet<&str> = recorded.lines().collect();
        let new: BTreeSet<&str> = text.lines().collect();
        let mut diff = String::new();
        for line in old.difference(&new) {
            diff.push_str(&format!("- {line}\n"));
        }
        for line in new.difference(&old) {
            diff.push_str(&format!("+ {line}\n"));
        }
        panic!(
            "the scan of the real-world suite changed (- recorded, + now); review every change in \
             cli/tests/data/real-world/review.md and record it with SYNCGUARD_RECORD_REAL_WORLD=1:\n{diff}"
        );
    }
    // exit 1 exactly when something is rejected, never 2: every file of the suite reads
    let rejected = report["summary"]["rejected"].as_u64().unwrap();
    let errors = report["summary"]["errors"].as_u64().unwrap();
    let expected = if errors > 0 { 2 } else { i32::from(rejected > 0) };
    assert_eq!(output.status.code(), Some(expected), "{stderr}");
}
