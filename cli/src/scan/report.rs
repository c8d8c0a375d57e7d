//! The outputs of `syncguard scan`: text for people, JSON for scripts, SARIF 2.1.0 for
//! GitHub code scanning, and the progress bar.

use crate::scan::input::{Document, InputError, Source};
use crate::scan::{ScanReport, Verdict};
use serde::{Deserialize, Serialize};
use serde_sarif::sarif;
use std::collections::HashMap;
use std::fmt::Write as _;
use syncguard::finding::Fix;
use syncguard_scan::locate::{Change, Edit, Locator};
use syncguard_scan::rows::{CrdRow, ErrorRow, FindingCounts, FindingRow, PolicyRow, ResultRow, Said};

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

/// `file:line:1` of a document, with ` items[i]` for objects read from a List.
pub fn location(doc: &Document, sources: &[Source]) -> String {
    let file = sources.get(doc.source).map(|s| s.display.as_str()).unwrap_or("?");
    match doc.item {
        Some(i) => format!("{file}:{}:1 items[{i}]", doc.line),
        None => format!("{file}:{}:1", doc.line),
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

/// The scanned files' [`Locator`]s, each read on first use (only files with findings need one).
struct Locators<'a> {
    sources: &'a [Source],
    read: HashMap<usize, Locator>,
}

impl<'a> Locators<'a> {
    fn new(sources: &'a [Source]) -> Locators<'a> {
        Locators {
            sources,
            read: HashMap::new(),
        }
    }

    /// The locator of `doc`'s file.
    fn of(&mut self, doc: &Document) -> &Locator {
        let sources = self.sources;
        self.read.entry(doc.source).or_insert_with(|| {
            let text = sources.get(doc.source).and_then(|s| s.text.as_deref()).unwrap_or("");
            Locator::new(text)
        })
    }

    /// The line and column of a finding at `path` in `doc`'s file
    /// ([`syncguard_scan::rows::position`]).
    fn position(&mut self, doc: &Document, path: &str) -> (usize, usize) {
        let locator = (!path.is_empty()).then(|| self.of(doc));
        syncguard_scan::rows::position(doc, path, locator)
    }

    /// The edit of `doc`'s file that applies `finding`'s fix, when it can be made safely.
    fn edit(&mut self, doc: &Document, finding: &FindingRow) -> Option<Edit> {
        let change = match finding.fix.as_ref()? {
            Fix::Delete => Change::Delete,
            Fix::Replace(text) => Change::Replace(text),
        };
        self.of(doc).edit(doc.index, doc.item, &finding.path, &change)
    }
}

/// One evaluation's row as the JSON output writes it, with the indexes of its document, through
/// which the printers reach its file (its text, for SARIF's fixes) and place, and of its policy.
pub struct Row {
    /// Index of the document in the scan's documents.
    pub document: usize,
    /// Index of the policy in the scan's policies.
    pub policy: usize,
    /// The row.
    pub row: ResultRow<DocumentPlace, FilePlace>,
}

impl Row {
    /// Whether the row says nothing ([`ResultRow::quiet`]).
    fn quiet(&self) -> bool {
        self.row.quiet()
    }
}

/// Every evaluation of the scan as a row ([`ResultRow`], shared with the playground), in the
/// scan's order (documents in input order, each with its policies): what the three printers
/// write, each in its own form. Each finding's line is found here, once.
pub fn rows(report: &ScanReport) -> Vec<Row> {
    let mut locators = Locators::new(&report.sources);
    let copies = syncguard_scan::copies::copies_of(&report.copy_of);
    let crds = syncguard_scan::copies::CrdIndex::new(&report.documents);
    let file_at = |i: usize| file_place(&report.documents[i], &report.sources);
    report
        .evaluations
        .iter()
        .map(|e| {
            let doc = &report.documents[e.document];
            let policy = report.policies.get(e.policy).map(|p| p.name.as_str()).unwrap_or("");
            let findings = e
                .findings
                .iter()
                .map(|f| FindingRow::new(policy, f, locators.position(doc, &f.listed.path)))
                .collect();
            let place = DocumentPlace {
                file: report
                    .sources
                    .get(doc.source)
                    .map(|s| s.display.clone())
                    .unwrap_or_default(),
                line: doc.line,
                document: doc.index,
                item: doc.item,
                api_version: doc.info.api_version.clone(),
                kind: doc.info.kind.clone(),
                namespace: doc.info.namespace.clone(),
                name: doc.info.name.clone(),
            };
            let related = e
                .related
                .iter()
                .map(|&r| file_place(&report.documents[r], &report.sources))
                .collect();
            Row {
                document: e.document,
                policy: e.policy,
                row: ResultRow::new(e, policy, place, related, findings)
                    .suppress(&syncguard_scan::rows::suppressions(&doc.object))
                    .with_copies(
                        copies
                            .get(&e.document)
                            .map_or_else(Vec::new, |c| c.iter().map(|&i| file_at(i)).collect()),
                    )
                    .with_crd(crds.copies(doc, &report.documents).map(|c| CrdRow::new(&c, file_at))),
            }
        })
        .collect()
}

/// Text output, as compilers and linters print: one line per finding at its own field,
/// `file:line:column: policy/rule: verdict: text`, with the finding's whole text (what, where,
/// why and the fix) and its whole path; an answer without listed findings (a refusal of a
/// malformed document, a mutation, another project's module) one line per rejection, mutation
/// and warning at the document's line, `file:line:1: policy: verdict: message`. Objects read from
/// a List add ` items[N]` to the place of their answer's lines. Accepted evaluations and
/// documents no policy applies to only with `verbose`. Then the summary: the evaluations by
/// verdict, and the findings by level and by rule.
pub fn text(report: &ScanReport, rows: &[Row], verbose: bool, color: bool) -> String {
    let mut out = String::new();
    let mut findings = FindingCounts::default();
    let mut rows = rows.iter().peekable();
    for (index, doc) in report.documents.iter().enumerate() {
        let file = report
            .sources
            .get(doc.source)
            .map(|s| s.display.as_str())
            .unwrap_or("?");
        let mut any = false;
        while let Some(row) = rows.next_if(|r| r.document == index) {
            any = true;
            let policy = row.row.policy.as_str();
            if row.quiet() {
                if verbose {
                    let place = paint(&location(doc, &report.sources), BOLD, color);
                    let _ = writeln!(out, "{place}: {policy}: {}", paint("accepted", GREEN, color));
                }
                continue;
            }
            findings.add(&row.row);
            // An update from the `--base` version says so.
            let operation = if row.row.operation == syncguard_scan::Operation::Update {
                " (UPDATE)"
            } else {
                ""
            };
            let note = row.row.places_note(|p| format!("{}:{}", p.file, p.line));
            if verbose {
                for finding in row.row.suppressed() {
                    let _ = writeln!(
                        out,
                        "{}: {policy}/{}{operation}: {}: {} (reason: {})",
                        paint(&format!("{file}:{}:{}", finding.line, finding.column), BOLD, color),
                        finding.rule,
                        paint("suppressed", DIM, color),
                        finding_text(finding),
                        finding.suppressed.as_deref().unwrap_or_default()
                    );
                }
            }
            for said in row.row.said() {
                let (place, rule, verdict, message) = match said {
                    Said::Finding(finding) => (
                        format!("{file}:{}:{}", finding.line, finding.column),
                        format!("{policy}/{}", finding.rule),
                        if finding.action == "reject" {
                            Verdict::Rejected
                        } else {
                            Verdict::Warned
                        },
                        finding_text(finding),
                    ),
                    Said::Answer { verdict, message } => {
                        (location(doc, &report.sources), policy.to_string(), verdict, message)
                    }
                };
                let _ = writeln!(
                    out,
                    "{}: {rule}{operation}: {}: {message}{note}",
                    paint(&place, BOLD, color),
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
            let place = paint(&location(doc, &report.sources), BOLD, color);
            let _ = writeln!(out, "{place}: {what}");
        }
    }
    if verbose {
        for skipped in &report.skipped {
            let file = report.sources.get(skipped.source).map_or("?", |s| s.display.as_str());
            let place = paint(&format!("{file}:{}", skipped.line), BOLD, color);
            let what = paint(&format!("skipped: {}", skipped.reason), DIM, color);
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
    let total = findings.reject + findings.warn;
    if total > 0 || findings.suppressed > 0 {
        let mut line = format!(
            "{total} {}: {} rejecting, {} warning",
            plural(total, "finding", "findings"),
            findings.reject,
            findings.warn
        );
        if findings.suppressed > 0 {
            let _ = write!(
                line,
                "; {} suppressed by the objects' {}<policy> annotations{}",
                findings.suppressed,
                syncguard_scan::rows::IGNORE_PREFIX,
                if verbose { "" } else { " (--verbose lists them)" }
            );
        }
        let _ = writeln!(out, "{}", paint(&line, BOLD, color));
        for (rule, n) in &findings.rules {
            let mut parts = Vec::new();
            if n.reject > 0 {
                parts.push(format!("{} rejecting", n.reject));
            }
            if n.warn > 0 {
                parts.push(format!("{} warning", n.warn));
            }
            let _ = writeln!(out, "  {rule}: {}", parts.join(", "));
        }
    }
    for line in skipped_lines(report, verbose) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// The lines after the summary that say what the scan left out: the files (and documents of
/// other files) that are not Kubernetes objects, each Helm chart and kustomization with the
/// command that renders it for a scan.
fn skipped_lines(report: &ScanReport, verbose: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut holds_more = vec![false; report.sources.len()];
    for source in report
        .documents
        .iter()
        .map(|d| Some(d.source))
        .chain(report.errors.iter().map(|e| e.source))
        .flatten()
    {
        if let Some(flag) = holds_more.get_mut(source) {
            *flag = true;
        }
    }
    // kustomize's files have their own line below.
    let mut kustomizations: Vec<usize> = report
        .skipped
        .iter()
        .filter(|s| s.kustomization)
        .map(|s| s.source)
        .collect();
    kustomizations.dedup();
    let others = || report.skipped.iter().filter(|s| !s.kustomization);
    let mut files: Vec<usize> = others()
        .map(|s| s.source)
        .filter(|&source| !holds_more.get(source).copied().unwrap_or(true))
        .collect();
    files.dedup();
    let documents = others()
        .filter(|s| holds_more.get(s.source).copied().unwrap_or(true))
        .count();
    let what = match (files.len(), documents) {
        (0, 0) => None,
        (f, 0) => Some(format!(
            "{f} {} skipped: not Kubernetes objects",
            plural(f, "file", "files")
        )),
        (0, 1) => Some("1 document skipped: not a Kubernetes object".to_string()),
        (0, d) => Some(format!("{d} documents skipped: not Kubernetes objects")),
        (f, d) => Some(format!(
            "{f} {} and {d} {} skipped: not Kubernetes objects",
            plural(f, "file", "files"),
            plural(d, "document", "documents")
        )),
    };
    if let Some(what) = what {
        out.push(if verbose {
            what
        } else {
            format!("{what} (listed with --verbose)")
        });
    }
    for chart in &report.unrendered.charts {
        out.push(format!(
            "Helm chart {chart} skipped: its templates are not YAML until rendered; scan it with `helm template <release> {chart} | syncguard scan -`"
        ));
    }
    for source in kustomizations {
        let file = report.sources.get(source).map_or("?", |s| s.display.as_str());
        out.push(format!(
            "kustomization {file} skipped: scan what it builds with `kustomize build {} | syncguard scan -`",
            crate::scan::walk::folder_of(file)
        ));
    }
    out
}

/// What the text output says of a finding: its whole text (its brief for a module without a
/// `report` operation), and its whole path when the text does not hold it.
fn finding_text(finding: &FindingRow) -> String {
    let mut text = if finding.text.is_empty() {
        finding.brief.clone()
    } else {
        finding.text.clone()
    };
    if !finding.path.is_empty() && !text.contains(finding.path.as_str()) {
        let _ = write!(text, " (at {})", finding.path);
    }
    text
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

// Serialised from these types only (the rows are the playground's too, `syncguard_scan::rows`);
// the JSON Schema generated from them is docs/scan-output.schema.json (`make json-schema`).
/// The document `syncguard scan --format json` writes (`schemaVersion` 1).
#[derive(Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Output {
    /// The version of this schema: 1.
    pub schema_version: u32,
    /// The command that wrote it.
    pub tool: Tool,
    /// The policies that ran, in the order of `results`' `policy`.
    pub policies: Vec<PolicyRow>,
    /// How many files, documents, evaluations of each verdict and input errors.
    pub summary: Summary,
    /// One row per document and policy (accepted ones only with `--verbose`).
    pub results: Vec<ResultRow<DocumentPlace, FilePlace>>,
    /// Input problems: files or documents that could not be read.
    pub errors: Vec<ErrorRow<FileName>>,
}

/// The command that wrote an [`Output`].
#[derive(Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    /// `syncguard`.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// The counts of a scan.
#[derive(Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// Files read.
    pub files: usize,
    /// Documents read.
    pub documents: usize,
    /// Documents judged by a policy, each pair once.
    pub evaluations: usize,
    /// Evaluations rejected.
    pub rejected: usize,
    /// Evaluations mutated.
    pub mutated: usize,
    /// Evaluations accepted with warnings.
    pub warned: usize,
    /// Evaluations accepted as they are.
    pub accepted: usize,
    /// Input errors.
    pub errors: usize,
    /// The findings of the results, each line of the text output once (a finding, or a line of
    /// an answer without listed findings), by level and by rule; accepted evaluations have none.
    pub findings: FindingCounts,
}

/// Where a judged document is.
#[derive(Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocumentPlace {
    /// Its file, as given on the command line.
    pub file: String,
    /// The line its content starts on.
    pub line: usize,
    /// Its 0-based index among the file's documents.
    pub document: usize,
    /// Its index in a `List`'s `items`, when it came from one.
    pub item: Option<usize>,
    /// Its `apiVersion`.
    pub api_version: String,
    /// Its `kind`.
    pub kind: String,
    /// Its `metadata.namespace`.
    pub namespace: Option<String>,
    /// Its `metadata.name`.
    pub name: Option<String>,
}

/// A place in a file: another document of a kind-group-clash.
#[derive(Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FilePlace {
    /// The file.
    pub file: String,
    /// The line.
    pub line: usize,
    /// The document's `apiVersion`.
    pub api_version: String,
    /// Its `kind`.
    pub kind: String,
}

/// The file of an input problem (or the path as given, when it could not be read at all).
#[derive(Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct FileName {
    /// The file, as given on the command line or found under a folder given.
    pub file: String,
}

fn file_place(doc: &Document, sources: &[Source]) -> FilePlace {
    FilePlace {
        file: sources.get(doc.source).map(|s| s.display.clone()).unwrap_or_default(),
        line: doc.line,
        api_version: doc.info.api_version.clone(),
        kind: doc.info.kind.clone(),
    }
}

/// JSON output, `schemaVersion` 1 ([`Output`], documented in docs/scan.md). Accepted
/// evaluations are listed only with `verbose`; the summary always counts them.
pub fn json(report: &ScanReport, rows: Vec<Row>, verbose: bool) -> String {
    let counts = report.counts();
    let mut findings = FindingCounts::default();
    let results: Vec<_> = rows
        .into_iter()
        .filter(|row| verbose || !row.quiet())
        .map(|row| row.row)
        .collect();
    for row in &results {
        findings.add(row);
    }
    let errors = report
        .errors
        .iter()
        .map(|e| ErrorRow {
            place: FileName {
                file: e
                    .source
                    .and_then(|i| report.sources.get(i))
                    .map_or_else(|| e.path.clone(), |s| s.display.clone()),
            },
            line: e.line,
            message: e.message.clone(),
        })
        .collect();
    let value = Output {
        schema_version: 1,
        tool: Tool {
            name: "syncguard".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        },
        policies: report.policies.clone(),
        summary: Summary {
            files: report.sources.len(),
            documents: report.documents.len(),
            evaluations: counts.evaluations,
            rejected: counts.rejected,
            mutated: counts.mutated,
            warned: counts.warned,
            accepted: counts.accepted,
            errors: report.errors.len(),
            findings,
        },
        results,
        errors,
    };
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

/// A SARIF location in `uri` at `line` and `column` (UTF-16 code units, the run's `columnKind`).
fn location_at(uri: &str, line: usize, column: usize) -> sarif::Location {
    let mut place = location_in(uri, Some(line));
    if let Some(region) = place.physical_location.as_mut().and_then(|p| p.region.as_mut()) {
        region.start_column = Some(column.max(1) as i64);
    }
    place
}

fn text_message(text: impl Into<String>) -> sarif::Message {
    sarif::Message::builder().text(text.into()).build()
}

/// A SARIF region from a locator's edit.
fn region_of(edit: &Edit) -> sarif::Region {
    sarif::Region::builder()
        .start_line(edit.start_line as i64)
        .start_column(edit.start_column as i64)
        .end_line(edit.end_line as i64)
        .end_column(edit.end_column as i64)
        .build()
}

/// The SARIF `fixes` entry of a finding whose fix the file can take as one edit.
fn sarif_fix(uri: &str, finding: &FindingRow, edit: &Edit) -> sarif::Fix {
    let description = match &finding.fix {
        Some(Fix::Replace(text)) => format!("Write {text} at {}", finding.path),
        _ => format!("Remove {}", finding.path),
    };
    let artifact = location_in(uri, None)
        .physical_location
        .and_then(|p| p.artifact_location)
        .unwrap_or_else(|| sarif::ArtifactLocation::builder().uri(uri).build());
    let replacement = sarif::Replacement::builder()
        .deleted_region(region_of(edit))
        .inserted_content(sarif::ArtifactContent::builder().text(edit.text.clone()).build())
        .build();
    sarif::Fix::builder()
        .description(text_message(description))
        .artifact_changes(vec![
            sarif::ArtifactChange::builder()
                .artifact_location(artifact)
                .replacements(vec![replacement])
                .build(),
        ])
        .build()
}

/// SARIF 2.1.0 output as GitHub code scanning takes it. Every finding of a syncguard policy (its
/// structured report) or of kind-group-clash is a result of rule `<policy>/<rule>`
/// (`error` when it rejects, else `warning`) at the line of its path's key, with a `fixes` entry
/// when its fix is one deletion or one replacement the file can take safely. Other answers
/// (a refusal of a malformed document, a mutation, another module) give a
/// result of rule `<policy>` per rejection, mutation and warning at the document's first line.
/// Input errors are tool execution notifications. Columns count UTF-16 code units. Written
/// with the types of `serde-sarif`, generated from the SARIF 2.1.0 JSON schema.
pub fn sarif(report: &ScanReport, rows: &[Row]) -> String {
    let text = |text: String| sarif::MultiformatMessageString::builder().text(text).build();
    let descriptor = |id: String, description: String, url: Option<&String>, level: &str| {
        let configuration = sarif::ReportingConfiguration::builder()
            .level(serde_json::json!(level))
            .build();
        let properties = sarif::PropertyBag::builder()
            .tags(vec!["kubernetes".to_string(), "gitops".into(), "syncguard".into()])
            .build();
        let rule = sarif::ReportingDescriptor::builder()
            .id(id.clone())
            .name(id)
            .short_description(text(description.clone()))
            .full_description(text(description.clone()))
            .default_configuration(configuration)
            .properties(properties);
        match url {
            Some(url) => rule
                .help_uri(url.clone())
                .help(text(format!("{description}. Documentation: {url}")))
                .build(),
            None => rule.build(),
        }
    };
    let description_of = |policy: usize| {
        let p = &report.policies[policy];
        p.description
            .clone()
            .unwrap_or_else(|| format!("syncguard policy {}", p.name))
    };
    let mut rules: Vec<sarif::ReportingDescriptor> = report
        .policies
        .iter()
        .enumerate()
        .map(|(i, p)| descriptor(p.name.clone(), description_of(i), p.readme.as_ref(), "error"))
        .collect();
    // The findings' rules, after the policies', each once, in the order first met.
    let mut finding_rules: HashMap<(usize, String), usize> = HashMap::new();
    for row in rows {
        let index = row.policy;
        let Some(policy) = report.policies.get(index) else {
            continue;
        };
        for finding in &row.row.findings {
            finding_rules.entry((index, finding.rule.clone())).or_insert_with(|| {
                // A rule syncguard documents: its summary and README section.
                let (summary, url) = match syncguard_scan::rows::rule_doc(&policy.name, &finding.rule) {
                    Some((doc, link)) => (format!("{}: {}", finding.rule, doc.summary), Some(link)),
                    None => (
                        format!("{}: rule {}", description_of(index), finding.rule),
                        policy.readme.clone(),
                    ),
                };
                rules.push(descriptor(
                    format!("{}/{}", policy.name, finding.rule),
                    summary,
                    url.as_ref(),
                    if finding.action == "reject" { "error" } else { "warning" },
                ));
                rules.len() - 1
            });
        }
    }
    // The other documents of a kind-group-clash are named by their files' display paths.
    let uris: HashMap<&str, &str> = report
        .sources
        .iter()
        .map(|s| (s.display.as_str(), s.uri.as_str()))
        .collect();
    let mut locators = Locators::new(&report.sources);
    let mut results = Vec::new();
    for row in rows {
        let doc = &report.documents[row.document];
        let Some(source) = report.sources.get(doc.source) else {
            continue;
        };
        let policy = row.row.policy.as_str();
        let index = row.policy;
        let object = match (
            doc.info.namespace.as_ref().filter(|_| !doc.cluster_scoped),
            &doc.info.name,
        ) {
            (Some(ns), Some(name)) => format!("{} {ns}/{name}", doc.info.kind),
            (None, Some(name)) => format!("{} {name}", doc.info.kind),
            _ => doc.info.kind.clone(),
        };
        // The other documents of a kind-group-clash, on every result of the evaluation.
        // Then the identical copies of the document, and the copies of the CRD it was judged
        // against.
        let mut others: Vec<(&FilePlace, String)> = row
            .row
            .related
            .iter()
            .map(|other| (other, format!("{} {}", other.api_version, other.kind)))
            .collect();
        others.extend(
            row.row
                .copies
                .iter()
                .map(|copy| (copy, "an identical copy of the object".to_string())),
        );
        if let Some(crd) = &row.row.crd {
            others.push((&crd.used, "the CRD copy it was judged against".to_string()));
            others.extend(
                crd.others
                    .iter()
                    .map(|copy| (copy, "another copy of the CRD".to_string())),
            );
        }
        let related: Vec<sarif::Location> = others
            .into_iter()
            .enumerate()
            .filter_map(|(i, (other, message))| {
                let uri = uris.get(other.file.as_str())?;
                let mut place = location_in(uri, Some(other.line));
                place.id = Some((i + 1) as i64);
                place.message = Some(text_message(message));
                Some(place)
            })
            .collect();
        let note = row.row.places_note(|p| format!("{}:{}", p.file, p.line));
        let with_related = |result: sarif::Result| {
            if related.is_empty() {
                result
            } else {
                sarif::Result {
                    related_locations: Some(related.clone()),
                    ..result
                }
            }
        };
        // What the row says, then the findings the object suppresses, as suppressed results
        // (`suppressions`, kind `inSource`, with the annotation's reason).
        let mut said: Vec<(Said<'_>, Option<&str>)> = row.row.said().into_iter().map(|s| (s, None)).collect();
        said.extend(
            row.row
                .suppressed()
                .map(|f| (Said::Finding(f), f.suppressed.as_deref())),
        );
        for (said, suppressed) in said {
            let level = if said.rejects() {
                sarif::ResultLevel::Error
            } else {
                sarif::ResultLevel::Warning
            };
            let finding = match said {
                Said::Finding(finding) => finding,
                Said::Answer { verdict, message } => {
                    let result = sarif::Result::builder()
                        .rule_id(policy)
                        .rule_index(index as i64)
                        .level(level)
                        .message(text_message(format!(
                            "{object} ({}): {message}{note}",
                            verdict.as_str()
                        )))
                        .locations(vec![location_in(&source.uri, Some(doc.line))]);
                    results.push(with_related(result.build()));
                    continue;
                }
            };
            let mut place = location_at(&source.uri, finding.line, finding.column);
            if !finding.path.is_empty() {
                place.logical_locations = Some(vec![
                    sarif::LogicalLocation::builder()
                        .fully_qualified_name(format!("{object} {}", finding.path))
                        .kind("member")
                        .build(),
                ]);
            }
            let result = sarif::Result::builder()
                .rule_id(format!("{policy}/{}", finding.rule))
                .rule_index(finding_rules[&(index, finding.rule.clone())] as i64)
                .level(level)
                .message(text_message(finding_text(finding) + &note))
                .locations(vec![place]);
            let mut result = match locators.edit(doc, finding) {
                Some(edit) => result.fixes(vec![sarif_fix(&source.uri, finding, &edit)]).build(),
                None => result.build(),
            };
            if let Some(reason) = suppressed {
                result.suppressions = Some(vec![
                    sarif::Suppression::builder()
                        .kind(serde_json::json!("inSource"))
                        .justification(reason)
                        .build(),
                ]);
            }
            results.push(with_related(result));
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
        .column_kind(serde_json::json!("utf16CodeUnits"))
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

/// The exit code of a scan: 2 on input errors, else 1 when something is said at `fail_on`'s
/// level or above (a rejecting finding; with `warn`, any finding or mutation), suppressed
/// findings aside, else 0.
pub fn exit_code(report: &ScanReport, rows: &[Row], fail_on: crate::scan::FailOn) -> u8 {
    if !report.errors.is_empty() {
        return crate::scan::EXIT_ERROR;
    }
    let fails = rows.iter().any(|row| {
        row.row
            .said()
            .iter()
            .any(|said| fail_on == crate::scan::FailOn::Warn || said.rejects())
    });
    if fails { crate::scan::EXIT_REJECTED } else { 0 }
}

/// The progress bar of a large scan, on stderr (indicatif draws it at most 20 times a second
/// and not at all when stderr is not a terminal): `[####      ] 1200/10000 documents`.
pub fn progress_bar(total: usize) -> indicatif::ProgressBar {
    let style = indicatif::ProgressStyle::with_template("[{bar:30}] {pos}/{len} documents")
        .map(|style| style.progress_chars("## "))
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    indicatif::ProgressBar::new(total as u64).with_style(style)
}
