//! The outputs of `syncguard scan`: text for people, JSON for scripts, SARIF 2.1.0 for
//! GitHub code scanning, and the progress bar.

use crate::scan::input::{Document, InputError, Source};
use crate::scan::{Evaluation, ScanReport, Verdict};
use serde_json::{Value, json};
use serde_sarif::sarif;
use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};

const BOLD: Style = Style::new().bold();
const DIM: Style = Style::new().dimmed();
const RED: Style = AnsiColor::Red.on_default().bold();
const YELLOW: Style = AnsiColor::Yellow.on_default();
const CYAN: Style = AnsiColor::Cyan.on_default();
const GREEN: Style = AnsiColor::Green.on_default();

/// `text` in `style` when `color` (see [`crate::scan::use_color`]), else as it is.
fn paint(text: &str, style: Style, color: bool) -> String {
    if color {
        format!("{style}{text}{style:#}")
    } else {
        text.to_string()
    }
}

fn verdict_style(verdict: Verdict) -> Style {
    match verdict {
        Verdict::Rejected => RED,
        Verdict::Mutated => CYAN,
        Verdict::Warned => YELLOW,
        Verdict::Accepted => GREEN,
    }
}

/// `file:line` of a document, with `items[i]` for objects read from a List.
pub fn location(doc: &Document, sources: &[Source]) -> String {
    let file = sources.get(doc.source).map(|s| s.display.as_str()).unwrap_or("?");
    match doc.item {
        Some(i) => format!("{file}:{} items[{i}]", doc.line),
        None => format!("{file}:{}", doc.line),
    }
}

/// `file:line: error: message` for an input problem.
pub fn error_line(error: &InputError, sources: &[Source], color: bool) -> String {
    let file = error
        .source
        .and_then(|i| sources.get(i))
        .map(|s| s.display.as_str())
        .unwrap_or(error.path.as_str());
    let place = match error.line {
        Some(line) => format!("{file}:{line}"),
        None => file.to_string(),
    };
    format!(
        "{}: {}: {}",
        paint(&place, BOLD, color),
        paint("error", RED, color),
        error.message
    )
}

/// A JSON Patch as `op path` pairs.
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

/// The lines of one evaluation: `(verdict, message)` pairs.
fn findings(e: &Evaluation) -> Vec<(Verdict, String)> {
    let mut out = Vec::new();
    match e.verdict {
        Verdict::Rejected => out.push((
            Verdict::Rejected,
            e.message.clone().unwrap_or_else(|| "(no message)".into()),
        )),
        Verdict::Mutated => out.push((
            Verdict::Mutated,
            e.patch.as_ref().map(describe_patch).unwrap_or_default(),
        )),
        Verdict::Warned | Verdict::Accepted => {}
    }
    out.extend(e.warnings.iter().map(|w| (Verdict::Warned, w.clone())));
    out
}

/// Text output: one `file:line: policy: verdict: message` line per rejection, mutation and
/// warning (accepted evaluations and documents no policy applies to with `verbose`), then a
/// summary line.
pub fn text(report: &ScanReport, verbose: bool, color: bool) -> String {
    let mut out = String::new();
    let mut evaluations = report.evaluations.iter().peekable();
    for (index, doc) in report.documents.iter().enumerate() {
        let place = paint(&location(doc, &report.sources), BOLD, color);
        let mut any = false;
        while let Some(e) = evaluations.next_if(|e| e.document == index) {
            any = true;
            let policy = report.policies.get(e.policy).map(|p| p.name.as_str()).unwrap_or("?");
            if e.verdict == Verdict::Accepted && e.warnings.is_empty() {
                if verbose {
                    let _ = writeln!(out, "{place}: {policy}: {}", paint("accepted", GREEN, color));
                }
                continue;
            }
            for (verdict, message) in findings(e) {
                let _ = writeln!(
                    out,
                    "{place}: {policy}: {}: {message}",
                    paint(verdict.as_str(), verdict_style(verdict), color)
                );
            }
        }
        if !any && verbose {
            let what = paint(
                &format!("no policy applies to {} {}", doc.info.api_version, doc.info.kind),
                DIM,
                color,
            );
            let _ = writeln!(out, "{place}: {what}");
        }
    }
    let counts = report.counts();
    let mut summary = format!(
        "{} {}, {} {}, {} {}: {} rejected, {} mutated, {} warned, {} accepted",
        report.sources.len(),
        plural(report.sources.len(), "file", "files"),
        report.documents.len(),
        plural(report.documents.len(), "document", "documents"),
        counts.evaluations,
        plural(counts.evaluations, "evaluation", "evaluations"),
        counts.rejected,
        counts.mutated,
        counts.warned,
        counts.accepted,
    );
    if !report.errors.is_empty() {
        let _ = write!(
            summary,
            "; {} input {} (on stderr)",
            report.errors.len(),
            plural(report.errors.len(), "error", "errors")
        );
    }
    let _ = writeln!(out, "{}", paint(&summary, BOLD, color));
    out
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

fn doc_place(doc: &Document, sources: &[Source]) -> Value {
    json!({
        "file": sources.get(doc.source).map(|s| s.display.as_str()).unwrap_or(""),
        "line": doc.line,
    })
}

/// JSON output, `schemaVersion` 1 (documented in the README). Accepted evaluations are
/// listed only with `verbose`; the summary always counts them.
pub fn json(report: &ScanReport, verbose: bool) -> String {
    let counts = report.counts();
    let results: Vec<Value> = report
        .evaluations
        .iter()
        .filter(|e| verbose || e.verdict != Verdict::Accepted || !e.warnings.is_empty())
        .map(|e| {
            let doc = &report.documents[e.document];
            json!({
                "file": report.sources.get(doc.source).map(|s| s.display.as_str()).unwrap_or(""),
                "line": doc.line,
                "document": doc.index,
                "item": doc.item,
                "apiVersion": doc.info.api_version,
                "kind": doc.info.kind,
                "namespace": doc.info.namespace,
                "name": doc.info.name,
                "policy": report.policies.get(e.policy).map(|p| p.name.as_str()).unwrap_or(""),
                "verdict": e.verdict.as_str(),
                "message": e.message,
                "code": e.code,
                "warnings": e.warnings,
                "patch": e.patch,
                "related": e.related.iter().map(|&r| doc_place(&report.documents[r], &report.sources)).collect::<Vec<_>>(),
            })
        })
        .collect();
    let errors: Vec<Value> = report
        .errors
        .iter()
        .map(|e| {
            json!({
                "file": e.source.and_then(|i| report.sources.get(i)).map(|s| s.display.as_str()).unwrap_or(e.path.as_str()),
                "line": e.line,
                "message": e.message,
            })
        })
        .collect();
    let value = json!({
        "schemaVersion": 1,
        "tool": {"name": "syncguard", "version": env!("CARGO_PKG_VERSION")},
        "policies": report.policies.iter().map(|p| json!({
            "name": p.name,
            "origin": p.origin,
            "version": p.version,
        })).collect::<Vec<_>>(),
        "summary": {
            "files": report.sources.len(),
            "documents": report.documents.len(),
            "evaluations": counts.evaluations,
            "rejected": counts.rejected,
            "mutated": counts.mutated,
            "warned": counts.warned,
            "accepted": counts.accepted,
            "errors": report.errors.len(),
        },
        "results": results,
        "errors": errors,
    });
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text
}

/// A SARIF location in `uri` (relative to `%SRCROOT%` unless it is `stdin` or has a scheme),
/// at `line` when known.
fn location_in(uri: &str, line: Option<usize>) -> sarif::Location {
    let artifact = if !uri.contains(':') && uri != "stdin" {
        sarif::ArtifactLocation::builder()
            .uri(uri)
            .uri_base_id("%SRCROOT%")
            .build()
    } else {
        sarif::ArtifactLocation::builder().uri(uri).build()
    };
    let physical = match line {
        Some(line) => sarif::PhysicalLocation::builder()
            .artifact_location(artifact)
            .region(sarif::Region::builder().start_line(line.max(1) as i64).build())
            .build(),
        None => sarif::PhysicalLocation::builder().artifact_location(artifact).build(),
    };
    sarif::Location::builder().physical_location(physical).build()
}

fn text_message(text: impl Into<String>) -> sarif::Message {
    sarif::Message::builder().text(text.into()).build()
}

/// SARIF 2.1.0 output as GitHub code scanning takes it: a rule per policy that ran, a result
/// per rejection (`error`), mutation and warning (`warning`), each located at the document's
/// first line; input errors as tool execution notifications. Written with the types of
/// `serde-sarif`, generated from the SARIF 2.1.0 JSON schema.
pub fn sarif(report: &ScanReport) -> String {
    let rules: Vec<sarif::ReportingDescriptor> = report
        .policies
        .iter()
        .map(|p| {
            let description = p
                .description
                .clone()
                .unwrap_or_else(|| format!("syncguard policy {}", p.name));
            let text = |text: String| sarif::MultiformatMessageString::builder().text(text).build();
            let configuration = sarif::ReportingConfiguration::builder()
                .level(serde_json::json!("error"))
                .build();
            let properties = sarif::PropertyBag::builder()
                .tags(vec!["kubernetes".to_string(), "gitops".into(), "syncguard".into()])
                .build();
            let rule = sarif::ReportingDescriptor::builder()
                .id(p.name.clone())
                .name(p.name.clone())
                .short_description(text(description.clone()))
                .full_description(text(description.clone()))
                .default_configuration(configuration)
                .properties(properties);
            match &p.url {
                Some(url) => rule
                    .help_uri(url.clone())
                    .help(text(format!("{description}. Documentation: {url}")))
                    .build(),
                None => rule.build(),
            }
        })
        .collect();
    let mut results = Vec::new();
    for e in &report.evaluations {
        let doc = &report.documents[e.document];
        let Some(source) = report.sources.get(doc.source) else {
            continue;
        };
        let policy = report.policies.get(e.policy).map(|p| p.name.as_str()).unwrap_or("");
        for (verdict, message) in findings(e) {
            let level = if verdict == Verdict::Rejected {
                sarif::ResultLevel::Error
            } else {
                sarif::ResultLevel::Warning
            };
            let object = match (&doc.info.namespace, &doc.info.name) {
                (Some(ns), Some(name)) => format!("{} {ns}/{name}", doc.info.kind),
                (None, Some(name)) => format!("{} {name}", doc.info.kind),
                _ => doc.info.kind.clone(),
            };
            let related: Vec<sarif::Location> = e
                .related
                .iter()
                .enumerate()
                .filter_map(|(i, &r)| {
                    let other = &report.documents[r];
                    let uri = &report.sources.get(other.source)?.uri;
                    let mut place = location_in(uri, Some(other.line));
                    place.id = Some((i + 1) as i64);
                    place.message = Some(text_message(format!("{} {}", other.info.api_version, other.info.kind)));
                    Some(place)
                })
                .collect();
            let result = sarif::Result::builder()
                .rule_id(policy)
                .rule_index(e.policy as i64)
                .level(level)
                .message(text_message(format!("{object} ({}): {message}", verdict.as_str())))
                .locations(vec![location_in(&source.uri, Some(doc.line))]);
            results.push(if related.is_empty() {
                result.build()
            } else {
                result.related_locations(related).build()
            });
        }
    }
    let notifications: Vec<sarif::Notification> = report
        .errors
        .iter()
        .map(|e| {
            let source = e.source.and_then(|i| report.sources.get(i));
            let uri = source.map(|s| s.uri.clone()).unwrap_or_else(|| e.path.clone());
            sarif::Notification::builder()
                .level(serde_json::json!("error"))
                .message(text_message(e.message.clone()))
                .locations(vec![location_in(&uri, e.line)])
                .build()
        })
        .collect();
    let driver = sarif::ToolComponent::builder()
        .name("syncguard")
        .version(env!("CARGO_PKG_VERSION"))
        .semantic_version(env!("CARGO_PKG_VERSION"))
        .information_uri("https://github.com/syncguard/syncguard")
        .rules(rules)
        .build();
    let invocation = sarif::Invocation::builder()
        .execution_successful(report.errors.is_empty())
        .tool_execution_notifications(notifications)
        .build();
    let run = sarif::Run::builder()
        .tool(sarif::Tool::builder().driver(driver).build())
        .invocations(vec![invocation])
        .results(results)
        .build();
    let log = sarif::Sarif::builder()
        .schema("https://json.schemastore.org/sarif-2.1.0.json")
        .version(serde_json::json!("2.1.0"))
        .runs(vec![run])
        .build();
    let mut text = serde_json::to_string_pretty(&log).unwrap_or_default();
    text.push('\n');
    text
}

/// The progress bar of a large scan, on stderr (indicatif draws it at most 20 times a second
/// and not at all when stderr is not a terminal): `[####      ] 1200/10000 documents`.
pub fn progress_bar(total: usize) -> indicatif::ProgressBar {
    let style = indicatif::ProgressStyle::with_template("[{bar:30}] {pos}/{len} documents")
        .map(|style| style.progress_chars("## "))
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    indicatif::ProgressBar::new(total as u64).with_style(style)
}
