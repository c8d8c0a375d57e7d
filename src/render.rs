//! The one place findings become Kubewarden's answer: the warn/reject mapping, the object's
//! label, the README links, the all-in-one's `<check>: ` prefix, the audit annotation of the
//! findings and the API server's size limits ([`crate::text::limits`]).
//!
//! A policy's answer is [`answer`] of its checks' [`Part`]s: one for a check alone, one per check
//! that applied in the all-in-one. They are rendered once, together, so each check's texts have
//! exactly the room the answer leaves them (its prefix in the all-in-one, the other rejecting
//! checks' lines), and a check says the same alone and in the all-in-one wherever that fits.
//!
//! # Layout
//! - A warning is `<short noun> <label>: <brief>[ (<note>)][ See <link>]`, within
//!   [`MAX_WARNING_CHARS`] less the prefix: `CRD widgets.example.com: ...`, `Job ns/name: ...`.
//! - A rejection with one finding is `<noun> <label>: <text>`; with several,
//!   `<noun> <label>: N problems. (1) <text> (2) <text>`, the findings that share a cause
//!   ([`crate::finding::Grouped`]) listed after the others, under their heading said once; when
//!   the long texts do not fit, the last ones fall back to their brief form, and when even those
//!   do not, the list ends `and N more.`; then the report's notes.
//! - A [`List`] is an introduction and one line (or warning) per finding, at most its limit,
//!   then how many more there are.
//! - Every finding is listed in the audit annotation [`FINDINGS_ANNOTATION`] (see
//!   [`annotation`]).

use crate::admission::Response;
use crate::finding::{Finding, Fix, Grouped, List, Report, RuleDoc, Subject};
use crate::text::limits::{MAX_MESSAGE_CHARS, MAX_WARNING_CHARS, MAX_WARNINGS_TOTAL_CHARS};
use crate::text::{Parts, chars, elide, join_fitting, readme_link};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The audit annotation that lists an answer's findings (see [`annotation`]).
pub const FINDINGS_ANNOTATION: &str = "syncguard.io/findings";

/// Most characters of the [`FINDINGS_ANNOTATION`] value: findings that do not fit are counted in
/// `total` but not listed.
pub const ANNOTATION_CHARS: usize = 4096;

/// Most characters of an object's label in a rejection message (real names are far shorter).
const LABEL_CHARS: usize = 120;
/// Most characters of one line of a [`List`] in a rejection message.
const LIST_LINE_CHARS: usize = 600;
/// Room for the closing `and N more` line of a listed rejection.
const MORE_CHARS: usize = 24;
/// Room kept in the warnings' total for the one saying how many were left out.
const LEFT_OUT_ROOM: usize = 160;
/// The README section a finding links to when its rule has none of its own.
const DEFAULT_ANCHOR: &str = "what-it-checks";

/// One finding as the audit annotation and `syncguard scan` list it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listed {
    /// The check (policy) that found it.
    pub policy: String,
    /// The rule's id.
    pub rule: String,
    /// `reject` or `warn`.
    pub action: String,
    /// The field's path in the object; empty for the object as a whole.
    pub path: String,
    /// The finding as a warning names it (`CRD x: ...`), without the all-in-one's prefix.
    pub brief: String,
    /// The fix, when it is one edit of the manifest at `path`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<Fix>,
}

/// The value of [`FINDINGS_ANNOTATION`]: every finding of the answer counted, and as many
/// listed, in order, as fit [`ANNOTATION_CHARS`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Annotation {
    /// How many findings the answer has.
    pub total: usize,
    /// The first of them.
    pub findings: Vec<Listed>,
}

/// One finding whole, as the structured report of a request gives it ([`Answer::report_json`]):
/// what the audit annotation lists of it, plus the object it is about and its long text. The
/// report lists every finding, never cut to the API server's limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reported {
    /// The finding as the audit annotation lists it.
    #[serde(flatten)]
    pub listed: Listed,
    /// The kind of the object it is about (`CustomResourceDefinition`); empty when unknown.
    pub kind: String,
    /// The object's label (`namespace/name`, or `name`).
    pub label: String,
    /// What, where, why and the fix, as a rejection gives it, in full (`<kind> <label>: ...`).
    pub text: String,
    /// The setting that made a rejection a warning (`warnOnly: channel`), when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What a policy decides about one request: the verdict Kubewarden reads from `validate`, and
/// every finding behind it, which only the structured report ([`Answer::report_json`]) writes out
/// (the whole texts are put together only then: `validate` never pays for them).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    /// The response, as `validate` returns it.
    pub response: Response,
    /// The rendered reports of the checks that applied, in the answer's order.
    parts: Vec<Rendered>,
}

impl From<Response> for Answer {
    fn from(response: Response) -> Answer {
        Answer {
            response,
            parts: Vec::new(),
        }
    }
}

impl Answer {
    /// Every finding of every check that applied, whole, in the answer's order.
    pub fn findings(&self) -> Vec<Reported> {
        self.parts
            .iter()
            .flat_map(|part| {
                let title = title(&part.subject);
                part.findings.iter().map(move |whole| Reported {
                    listed: whole.listed.clone(),
                    kind: part.subject.kind.clone(),
                    label: part.subject.label.clone(),
                    text: format!("{title}: {}", whole.text.whole()),
                    note: whole.note.clone(),
                })
            })
            .collect()
    }

    /// The answer of the `report` operation: `{"response": <what validate returns, byte for
    /// byte>, "findings": [<every finding whole>]}`.
    pub fn report_json(self) -> Vec<u8> {
        let findings = self.findings();
        let mut out = b"{\"response\":".to_vec();
        out.extend(self.response.to_json());
        out.extend(b",\"findings\":");
        // Plain structs of strings: this cannot fail.
        out.extend(serde_json::to_vec(&findings).unwrap_or_else(|_| b"[]".to_vec()));
        out.push(b'}');
        out
    }
}

/// One finding as a check's rendered report keeps it: what the annotation lists, and its long
/// text and note, put together into a [`Reported`] only for the structured report.
#[derive(Debug, Clone, PartialEq)]
struct Whole {
    listed: Listed,
    text: Parts,
    note: Option<String>,
}

/// The structured report of one request, as the `report` operation returns it (see
/// [`Answer::report_json`]).
#[derive(Debug, Serialize, Deserialize)]
pub struct ReportAnswer {
    /// What `validate` returns for the same payload.
    pub response: crate::admission::ValidationResponse,
    /// Every finding, whole.
    pub findings: Vec<Reported>,
}

/// What one check made of a request, before anything is rendered: its report, or a refusal of
/// the request itself. A policy's answer is [`answer`] of its parts (one for a check alone, one
/// per check that applied in the all-in-one), rendered once, when every part is known.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// The check's name.
    check: &'static str,
    /// The check's rules, for the README links.
    docs: &'static [RuleDoc],
    /// What it found.
    outcome: Outcome,
}

/// What a check made of a request.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    /// Its findings (possibly none); boxed, as a refusal holds far less.
    Report(Box<Report>),
    /// A request it cannot judge (malformed, or without the object it needs): the message as
    /// it is, with its status code.
    Refusal { message: String, code: u16 },
}

impl Part {
    /// The findings of `check`, whose rules `docs` documents.
    pub fn report(check: &'static str, docs: &'static [RuleDoc], report: Report) -> Part {
        Part {
            check,
            docs,
            outcome: Outcome::Report(Box::new(report)),
        }
    }

    /// A refusal of the request by `check` with `code` and `message` as they are (a malformed
    /// request): no label, no findings.
    pub fn refusal(check: &'static str, message: String, code: u16) -> Part {
        Part {
            check,
            docs: &[],
            outcome: Outcome::Refusal { message, code },
        }
    }

    /// Whether the check rejects the request.
    pub fn rejects(&self) -> bool {
        match &self.outcome {
            Outcome::Report(report) => report.findings.iter().any(Finding::rejects),
            Outcome::Refusal { .. } => true,
        }
    }

    /// The check's name.
    pub fn check(&self) -> &'static str {
        self.check
    }

    /// Whether the check reported a finding of `rule`.
    pub fn has_finding(&self, rule: &str) -> bool {
        match &self.outcome {
            Outcome::Report(report) => report.findings.iter().any(|f| f.rule == rule),
            Outcome::Refusal { .. } => false,
        }
    }

    /// Leaves out the findings of `rule`: another check's finding says the same thing.
    pub fn drop_findings(&mut self, rule: &str) {
        if let Outcome::Report(report) = &mut self.outcome {
            report.findings.retain(|f| f.rule != rule);
        }
    }

    /// Takes the object as the check changes it, when it changes it and rejects nothing.
    pub fn take_mutation(&mut self) -> Option<Value> {
        if self.rejects() {
            return None;
        }
        match &mut self.outcome {
            Outcome::Report(report) => report.mutation.take(),
            Outcome::Refusal { .. } => None,
        }
    }
}

/// The room one check's texts have in the answer: the API server's limits, less what the
/// answer puts around them (the all-in-one's `<check>: ` prefix, the short lines of the other
/// rejecting checks).
#[derive(Debug, Clone, Copy)]
struct Budget {
    /// Most characters of one warning.
    warning: usize,
    /// Most characters of the rejection message.
    message: usize,
}

/// A check's report, rendered within its [`Budget`]: its part of the answer.
#[derive(Debug, Clone, Default, PartialEq)]
struct Rendered {
    /// The check's name.
    check: &'static str,
    /// The rejection message, long and short (one line), when a finding rejects.
    message: Option<(String, String)>,
    /// The rejection's status code, if not the default.
    code: Option<u16>,
    /// The warnings, in order.
    warnings: Vec<String>,
    /// The object the findings are about.
    subject: Subject,
    /// Every finding (the annotation lists what [`Listed`] holds of each).
    findings: Vec<Whole>,
}

/// The short, one-line form of a rejection: the first rejecting finding's brief, and how many
/// more there are; `None` when nothing rejects.
fn short_line(part: &Part, warning: usize) -> Option<String> {
    match &part.outcome {
        Outcome::Refusal { message, .. } => Some(message.clone()),
        Outcome::Report(report) => {
            let mut rejecting = report.findings.iter().filter(|f| f.rejects());
            let first = rejecting.next()?;
            let more = match rejecting.count() {
                0 => None,
                n => Some(format!(" (+{n} more)")),
            };
            Some(warning_line(
                &report.subject,
                &first.brief,
                more.as_deref(),
                "",
                warning,
            ))
        }
    }
}

/// Renders one check's part within `budget`; `short` is its one-line rejection.
fn render_part(part: Part, short: Option<String>, budget: Budget) -> Rendered {
    let Part { check, docs, outcome } = part;
    let report = match outcome {
        Outcome::Refusal { message, code } => {
            return Rendered {
                check,
                message: Some((message, short.unwrap_or_default())),
                code: Some(code),
                ..Rendered::default()
            };
        }
        Outcome::Report(report) => *report,
    };
    let Report {
        subject,
        findings,
        list,
        mutation: _,
        notes,
    } = report;
    let link = |finding: &Finding| {
        let anchor = docs
            .iter()
            .find(|doc| doc.id == finding.rule)
            .map_or(DEFAULT_ANCHOR, |doc| doc.anchor);
        format!(" See {}", readme_link(check, anchor))
    };
    let listed = |finding: &Finding| list.as_ref().is_some_and(|list| list.rules.contains(&finding.rule));
    let rejecting: Vec<&Finding> = findings.iter().filter(|f| f.rejects()).collect();
    let code = rejecting.first().and_then(|f| f.code);

    let message = short.filter(|_| !rejecting.is_empty()).map(|short| {
        let (in_list, alone): (Vec<&Finding>, Vec<&Finding>) = rejecting.iter().partition(|f| listed(f));
        let long = match (&list, in_list.is_empty()) {
            (Some(list), false) => {
                let mut text = listed_message(&subject, list, &in_list, &notes, budget.message);
                for finding in &alone {
                    text.push('\n');
                    text.push_str(&finding.text.fit(budget.message));
                }
                crate::text::fit(&[crate::text::Part::Fixed(&text)], budget.message)
            }
            _ => numbered_message(&subject, &rejecting, &notes, &link, budget),
        };
        (long, short)
    });

    let mut warnings = Vec::new();
    let warned: Vec<&Finding> = findings.iter().filter(|f| !f.rejects()).collect();
    let (in_list, alone): (Vec<&Finding>, Vec<&Finding>) = warned.iter().partition(|f| listed(f));
    if let (Some(list), false) = (&list, in_list.is_empty()) {
        warnings.extend(listed_warnings(
            &subject,
            list,
            &in_list,
            &link(in_list[0]),
            budget.warning,
        ));
    }
    for finding in alone {
        let note = finding.note.as_ref().map(|note| format!(" ({note})"));
        warnings.push(warning_line(
            &subject,
            &finding.brief,
            note.as_deref(),
            &link(finding),
            budget.warning,
        ));
    }

    let findings = findings
        .into_iter()
        .map(|finding| Whole {
            listed: Listed {
                policy: check.to_string(),
                rule: finding.rule.to_string(),
                action: if finding.rejects() { "reject" } else { "warn" }.to_string(),
                brief: warning_line(&subject, &finding.brief, None, "", MAX_WARNING_CHARS),
                path: finding.path,
                fix: finding.fix,
            },
            text: finding.text,
            note: finding.note,
        })
        .collect();
    Rendered {
        check,
        message,
        code,
        warnings,
        subject,
        findings,
    }
}

/// A warning: `<short noun> <label>: <brief>[<note>][<link>]`, within `max` characters; the link
/// only when everything fits unshortened.
fn warning_line(subject: &Subject, brief: &Parts, note: Option<&str>, link: &str, max: usize) -> String {
    let mut parts = Parts::default()
        .fixed(format!("{} ", subject.short_noun()))
        .elidable(subject.label.as_str())
        .fixed(": ")
        .then(brief);
    if let Some(note) = note {
        parts = parts.fixed(note);
    }
    if !link.is_empty() {
        parts = parts.optional(link);
    }
    parts.fit(max)
}

/// `<noun> <label>` for a rejection message.
fn title(subject: &Subject) -> String {
    format!("{} {}", subject.noun(), elide(&subject.label, LABEL_CHARS))
}

/// The rejection of findings that stand alone: one in full, or several numbered, the last ones
/// in their brief form when the whole does not fit, and as many as fit with how many more there
/// are when even that is too long; then the report's notes.
fn numbered_message(
    subject: &Subject,
    rejecting: &[&Finding],
    notes: &[String],
    link: &dyn Fn(&Finding) -> String,
    budget: Budget,
) -> String {
    let notes = notes.join(" ");
    let room = Budget {
        message: budget
            .message
            .saturating_sub(if notes.is_empty() { 0 } else { chars(&notes) + 1 }),
        ..budget
    };
    let body = numbered_findings(subject, rejecting, link, room);
    if notes.is_empty() {
        body
    } else {
        format!("{body} {notes}")
    }
}

/// `rejecting` in the order a numbered rejection lists them, each with the group it is listed
/// under: the findings without a cause they share with another first, in their order, then each
/// group of findings under the same heading ([`Grouped`]), in the order of their first finding.
/// A finding alone under its heading is given whole.
fn grouped_order<'f>(rejecting: &[&'f Finding]) -> Vec<(&'f Finding, Option<&'f Grouped>)> {
    let shared = |finding: &'f Finding| {
        finding.grouped.as_ref().filter(|grouped| {
            rejecting
                .iter()
                .filter(|other| other.grouped.as_ref().is_some_and(|g| g.heading == grouped.heading))
                .count()
                > 1
        })
    };
    let mut order: Vec<(&Finding, Option<&Grouped>)> = rejecting
        .iter()
        .filter(|f| shared(f).is_none())
        .map(|f| (*f, None))
        .collect();
    let mut headings: Vec<&str> = Vec::new();
    for finding in rejecting {
        if let Some(grouped) = shared(finding).filter(|g| !headings.contains(&g.heading.as_str())) {
            headings.push(&grouped.heading);
            order.extend(
                rejecting
                    .iter()
                    .filter(|f| f.grouped.as_ref().is_some_and(|g| g.heading == grouped.heading))
                    .map(|f| (*f, f.grouped.as_ref())),
            );
        }
    }
    order
}

/// The findings of [`numbered_message`] within `budget`.
fn numbered_findings(
    subject: &Subject,
    rejecting: &[&Finding],
    link: &dyn Fn(&Finding) -> String,
    budget: Budget,
) -> String {
    let title = title(subject);
    if let [one] = rejecting {
        let room = budget.message.saturating_sub(chars(&title) + 2);
        return join_fitting(
            &[(
                format!("{title}: {}", one.text.fit(room)),
                warning_line(subject, &one.brief, None, &link(one), budget.warning),
            )],
            " ",
            budget.message,
        );
    }
    let many = grouped_order(rejecting);
    let head = format!("{title}: {} problems.", many.len());
    // Each finding numbered, long and short; a group's heading goes before its first finding.
    let lines: Vec<(String, String)> = many
        .iter()
        .enumerate()
        .map(|(i, (finding, grouped))| {
            let long = match grouped {
                Some(grouped) => grouped.line.fit(budget.message),
                None => finding.text.fit(budget.message),
            };
            let short = finding.brief.fit(budget.warning);
            let heading = match (grouped, i.checked_sub(1).map(|j| many[j].1)) {
                (Some(grouped), Some(Some(before))) if before.heading == grouped.heading => String::new(),
                (Some(grouped), _) => format!("{} ", grouped.heading),
                (None, _) => String::new(),
            };
            (
                format!("{heading}({}) {long}", i + 1),
                format!("{heading}({}) {short}", i + 1),
            )
        })
        .collect();
    // Even the brief forms may not all fit: as many as do, and how many more there are.
    let mut shown = many.len();
    let mut used = chars(&head);
    for (i, (_, short)) in lines.iter().enumerate() {
        let more = format!(" and {} more.", many.len() - i);
        if used + 1 + chars(short) + chars(&more) > budget.message {
            shown = i;
            break;
        }
        used += 1 + chars(short);
    }
    let mut parts = vec![(head, String::new())];
    parts.extend(lines.into_iter().take(shown));
    if shown < many.len() {
        let more = format!("and {} more.", many.len() - shown);
        parts.push((more.clone(), more));
    }
    join_fitting(&parts, " ", budget.message)
}

/// The rejection of a [`List`]: label and introduction, one line per finding (at most the
/// list's limit, and as many as `max` characters have room for), then how many more there are,
/// then the report's notes.
fn listed_message(subject: &Subject, list: &List, findings: &[&Finding], notes: &[String], max: usize) -> String {
    let mut message = format!("{}: {}", title(subject), list.intro);
    let notes = notes.join(" ");
    let budget = max.saturating_sub(MORE_CHARS + chars(&notes) + 1);
    let mut shown = 0;
    for finding in findings.iter().take(list.limit) {
        let line = Parts::default().fixed("\n- ").then(&finding.text).fit(LIST_LINE_CHARS);
        if chars(&message) + chars(&line) > budget {
            break;
        }
        message.push_str(&line);
        shown += 1;
    }
    if findings.len() > shown {
        message.push_str(&format!("\nand {} more", findings.len() - shown));
    }
    if !notes.is_empty() {
        message.push('\n');
        message.push_str(&notes);
    }
    message
}

/// The warnings of a [`List`]: the introduction (with `link`), one per finding (at most the
/// list's limit, and within the API server's total for all warnings), then how many more; each
/// within `max` characters.
fn listed_warnings(subject: &Subject, list: &List, findings: &[&Finding], link: &str, max: usize) -> Vec<String> {
    let mut warnings = vec![warning_line(
        subject,
        &Parts::from(list.intro_brief.as_str()),
        None,
        link,
        max,
    )];
    let mut used = chars(&warnings[0]);
    let budget = MAX_WARNINGS_TOTAL_CHARS - max;
    let mut shown = 0;
    for finding in findings.iter().take(list.limit) {
        let warning = warning_line(subject, &finding.brief, None, "", max);
        if used + chars(&warning) > budget {
            break;
        }
        used += chars(&warning);
        warnings.push(warning);
        shown += 1;
    }
    if findings.len() > shown {
        let more = format!(
            "and {} more {} ({} in total); {}",
            findings.len() - shown,
            list.more,
            findings.len(),
            list.more_hint
        );
        warnings.push(warning_line(subject, &Parts::from(more), None, "", max));
    }
    warnings
}

/// The answer of one or more checks' parts, rendered once against the API server's limits.
/// With `prefixed` (the all-in-one), every message and warning starts with its check's name
/// (`crd-schema-fields: ...`) and each check's texts have the room its prefix leaves; the
/// messages of the rejecting checks are joined one a line, each check's long message sized to
/// leave room for the others' short lines, and the later ones given in their short form when the
/// whole would pass [`MAX_MESSAGE_CHARS`]. Warnings past the API server's total are left out,
/// and a last warning says how many. The mutation is the caller's (the all-in-one chains them).
pub fn answer(parts: Vec<Part>, prefixed: bool) -> Answer {
    let prefixes: Vec<String> = parts
        .iter()
        .map(|part| {
            if prefixed {
                format!("{}: ", part.check)
            } else {
                String::new()
            }
        })
        .collect();
    let shorts: Vec<Option<String>> = parts
        .iter()
        .zip(&prefixes)
        .map(|(part, prefix)| short_line(part, MAX_WARNING_CHARS - chars(prefix)))
        .collect();
    // What each rejecting check's short line takes of the message, with its prefix and newline.
    let short_room: Vec<usize> = shorts
        .iter()
        .zip(&prefixes)
        .map(|(short, prefix)| short.as_ref().map_or(0, |short| chars(prefix) + chars(short) + 1))
        .collect();
    let all_short: usize = short_room.iter().sum();
    let rendered: Vec<Rendered> = parts
        .into_iter()
        .zip(shorts)
        .enumerate()
        .map(|(i, (part, short))| {
            let budget = Budget {
                warning: MAX_WARNING_CHARS - chars(&prefixes[i]),
                message: MAX_MESSAGE_CHARS.saturating_sub(chars(&prefixes[i]) + all_short - short_room[i]),
            };
            render_part(part, short, budget)
        })
        .collect();
    let verdict = verdict_of(&rendered, &prefixes);
    Answer {
        response: verdict,
        parts: rendered,
    }
}

/// The verdict of rendered parts, each text behind its prefix.
fn verdict_of(parts: &[Rendered], prefixes: &[String]) -> Response {
    let mut verdict = Response::accept();
    let messages: Vec<(String, String)> = parts
        .iter()
        .zip(prefixes)
        .filter_map(|(part, prefix)| {
            let (long, short) = part.message.as_ref()?;
            Some((format!("{prefix}{long}"), format!("{prefix}{short}")))
        })
        .collect();
    if !messages.is_empty() {
        verdict.accepted = false;
        verdict.message = Some(join_fitting(&messages, "\n", MAX_MESSAGE_CHARS));
        verdict.code = parts.iter().filter(|p| p.message.is_some()).find_map(|p| p.code);
    }
    verdict.warnings = parts
        .iter()
        .zip(prefixes)
        .flat_map(|(part, prefix)| part.warnings.iter().map(move |w| format!("{prefix}{w}")))
        .collect();
    keep_within_limits(&mut verdict.warnings);
    let listed: Vec<&Listed> = parts
        .iter()
        .flat_map(|part| part.findings.iter().map(|whole| &whole.listed))
        .collect();
    if !listed.is_empty() {
        verdict = verdict.annotate(FINDINGS_ANNOTATION, annotation(&listed));
    }
    verdict
}

/// The [`FINDINGS_ANNOTATION`] value: compact JSON `{"total":N,"findings":[{"policy",
/// "rule","action","path","brief"}...]}`, as many listed, in order, as fit
/// [`ANNOTATION_CHARS`].
pub fn annotation(listed: &[&Listed]) -> String {
    let mut value = Annotation {
        total: listed.len(),
        findings: Vec::new(),
    };
    let mut used = chars(&serde_json::to_string(&value).unwrap_or_default());
    for finding in listed {
        let size = chars(&serde_json::to_string(finding).unwrap_or_default()) + 1;
        if used + size > ANNOTATION_CHARS {
            break;
        }
        used += size;
        value.findings.push((*finding).clone());
    }
    // Plain structs of strings and numbers: this cannot fail.
    serde_json::to_string(&value).unwrap_or_default()
}

/// Keeps warnings within the API server's total: when they pass it, the first ones that fit
/// are kept and a last warning says how many were left out.
fn keep_within_limits(warnings: &mut Vec<String>) {
    let total: usize = warnings.iter().map(|w| chars(w)).sum();
    if total <= MAX_WARNINGS_TOTAL_CHARS {
        return;
    }
    let mut used = 0;
    let mut kept = 0;
    for warning in warnings.iter() {
        if used + chars(warning) > MAX_WARNINGS_TOTAL_CHARS - LEFT_OUT_ROOM {
            break;
        }
        used += chars(warning);
        kept += 1;
    }
    let left_out = warnings.len() - kept;
    warnings.truncate(kept);
    warnings.push(format!(
        "syncguard: {left_out} more warning{} left out to keep the answer within the API server's limits (run the policies alone to read them all)",
        if left_out == 1 { "" } else { "s" }
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::Request;
    use crate::finding::Finding;
    use crate::text::limits::limit_violations;

    fn subject() -> Subject {
        let mut request = Request::default();
        request.kind.kind = "CustomResourceDefinition".into();
        Subject::new(&request, "widgets.example.com", "", "")
    }

    fn finding(rule: &'static str, reject: bool) -> Finding {
        let (text, brief) = (
            format!("{rule} is wrong, because. Fix it."),
            format!("{rule} is wrong."),
        );
        if reject {
            Finding::reject(rule, "spec.x", text, brief)
        } else {
            Finding::warn(rule, "spec.x", text, brief)
        }
    }

    const DOCS: &[RuleDoc] = &[RuleDoc {
        id: "a",
        summary: "a",
        anchor: "rule-a",
    }];

    #[test]
    fn one_rejection_and_one_warning() {
        let report = Report::new(subject(), vec![finding("a", true), finding("b", false)]);
        let verdict = answer(vec![Part::report("demo", DOCS, report)], false).response;
        assert!(!verdict.accepted);
        assert_eq!(
            verdict.message.as_deref(),
            Some("CustomResourceDefinition widgets.example.com: a is wrong, because. Fix it.")
        );
        assert_eq!(
            verdict.warnings,
            [format!(
                "CRD widgets.example.com: b is wrong. See {}demo#what-it-checks",
                crate::text::README_BASE
            )]
        );
        let annotation: Annotation = serde_json::from_str(&verdict.audit_annotations[FINDINGS_ANNOTATION]).unwrap();
        assert_eq!(annotation.total, 2);
        assert_eq!(annotation.findings[0].rule, "a");
        assert_eq!(annotation.findings[1].action, "warn");
        assert_eq!(annotation.findings[1].brief, "CRD widgets.example.com: b is wrong.");
    }

    #[test]
    fn several_rejections_are_numbered_and_prefixed_in_the_all_in_one() {
        let report = Report::new(subject(), vec![finding("a", true), finding("b", true)]);
        let verdict = answer(vec![Part::report("demo", DOCS, report)], true).response;
        assert_eq!(
            verdict.message.as_deref(),
            Some(
                "demo: CustomResourceDefinition widgets.example.com: 2 problems. (1) a is wrong, because. Fix it. (2) b is wrong, because. Fix it."
            )
        );
    }

    #[test]
    fn overrides_note_the_setting_and_code_comes_from_the_first_rejection() {
        let report = Report::new(
            subject(),
            vec![
                finding("a", true).warn_if(true, || "warnOnly: a".into()),
                finding("b", true).with_code(500),
            ],
        );
        let verdict = answer(vec![Part::report("demo", DOCS, report)], false).response;
        assert_eq!(verdict.code, Some(500));
        assert!(
            verdict.warnings[0].contains("a is wrong. (warnOnly: a) See "),
            "{:?}",
            verdict.warnings
        );
        assert!(verdict.warnings[0].ends_with("demo#rule-a"), "{:?}", verdict.warnings);
    }

    #[test]
    fn lists_stay_within_the_limits() {
        let findings: Vec<Finding> = (0..500)
            .map(|i| {
                Finding::reject(
                    "x",
                    format!("spec.f{i}"),
                    Parts::default()
                        .elidable(format!("spec.{}", "p".repeat(i)))
                        .fixed(": why"),
                    Parts::default().elidable(format!("spec.f{i}")).fixed(": brief"),
                )
            })
            .collect();
        let list = List {
            rules: &["x"],
            limit: 1000,
            intro: "500 things.".into(),
            intro_brief: "500 things.".into(),
            more: "things".into(),
            more_hint: "see the docs".into(),
        };
        let mut report = Report::new(subject(), findings.clone());
        report.list = Some(list.clone());
        let verdict = answer(vec![Part::report("demo", DOCS, report)], true).response;
        assert!(limit_violations(verdict.message.as_deref(), &verdict.warnings).is_empty());
        assert!(verdict.message.unwrap().ends_with(" more"));
        let warned: Vec<Finding> = findings
            .into_iter()
            .map(|f| Finding {
                action: crate::settings::RejectOrWarn::Warn,
                ..f
            })
            .collect();
        let mut report = Report::new(subject(), warned);
        report.list = Some(list);
        let verdict = answer(vec![Part::report("demo", DOCS, report)], false).response;
        assert!(limit_violations(None, &verdict.warnings).is_empty());
        assert!(
            verdict
                .warnings
                .last()
                .unwrap()
                .contains("(500 in total); see the docs")
        );
        assert!(chars(&verdict.audit_annotations[FINDINGS_ANNOTATION]) <= ANNOTATION_CHARS);
    }

    #[test]
    fn findings_of_one_cause_are_listed_under_its_heading_said_once() {
        let served = |rule: &'static str, field: &str| {
            Finding::reject(
                rule,
                format!("spec.versions[1].schema.openAPIV3Schema.properties.{field}"),
                format!("spec.versions[1].schema.openAPIV3Schema.properties.{field} (served v1 vs v2): removed."),
                format!("{field} (served v1 vs v2): removed."),
            )
            .under("Served v1 and v2 differ.", format!(".properties.{field}: removed."))
        };
        let report = Report::new(
            subject(),
            vec![served("x", "a"), finding("alone", true), served("x", "b")],
        );
        let answer = answer(vec![Part::report("demo", DOCS, report)], false);
        assert_eq!(
            answer.response.message.as_deref(),
            Some(
                "CustomResourceDefinition widgets.example.com: 3 problems. (1) alone is wrong, because. Fix it. Served v1 and v2 differ. (2) .properties.a: removed. (3) .properties.b: removed."
            )
        );
        // Everywhere else, each finding stays whole.
        assert!(
            answer.findings()[0]
                .text
                .ends_with("openAPIV3Schema.properties.a (served v1 vs v2): removed.")
        );
    }

    #[test]
    fn every_check_has_the_room_the_answer_leaves_it() {
        let long = |rule: &'static str| {
            Finding::reject(
                rule,
                "spec.x",
                Parts::default().fixed("why: ").elidable("p".repeat(5000)),
                Parts::default().fixed("brief: ").elidable("q".repeat(500)),
            )
        };
        let part = |check| Part::report(check, DOCS, Report::new(subject(), vec![long("a")]));
        // Alone, a check has the API server's whole limits.
        let alone = answer(vec![part("demo")], false).response;
        assert_eq!(chars(alone.message.as_deref().unwrap()), MAX_MESSAGE_CHARS);
        let warned = Report::new(
            subject(),
            vec![Finding {
                action: crate::settings::RejectOrWarn::Warn,
                ..long("a")
            }],
        );
        let verdict = answer(vec![Part::report("demo", DOCS, warned.clone())], false).response;
        assert_eq!(chars(&verdict.warnings[0]), MAX_WARNING_CHARS);
        // Behind a prefix, the warning gives up exactly the prefix's room.
        let verdict = answer(vec![Part::report("demo", DOCS, warned)], true).response;
        assert_eq!(chars(&verdict.warnings[0]), MAX_WARNING_CHARS);
        assert!(verdict.warnings[0].starts_with("demo: CRD "));
        // Two rejecting checks: the first in full, the second's short line after it, within the limit.
        let both = answer(vec![part("first"), part("second")], true).response;
        let message = both.message.unwrap();
        assert_eq!(chars(&message), MAX_MESSAGE_CHARS, "{message}");
        let lines: Vec<&str> = message.lines().collect();
        assert!(lines[0].starts_with("first: CustomResourceDefinition widgets.example.com: why: "));
        assert!(lines[1].starts_with("second: CRD widgets.example.com: brief: "));
    }

    #[test]
    fn unnamed_objects_have_one_label() {
        let request = Request::default();
        assert_eq!(Subject::new(&request, "", "", "").label, crate::finding::UNNAMED);
        assert_eq!(Subject::new(&request, "", "job-", "ns").label, "ns/job-<generated>");
        assert_eq!(Subject::new(&request, "", "", "").noun(), "object");
    }

    #[test]
    fn cluster_scoped_objects_are_named_without_a_namespace() {
        let request = |group: &str, version: &str, kind: &str, namespace: Option<&str>| {
            let mut request = Request::default();
            request.kind.group = group.to_string().into();
            request.kind.version = version.to_string().into();
            request.kind.kind = kind.to_string().into();
            request.namespace = namespace.map(|n| n.to_string().into());
            request
        };
        let label = |request: &Request<'_>, namespace: &str| Subject::new(request, "admin", "", namespace).label;
        // A built-in cluster-scoped kind: the manifest's namespace and the request's are dropped
        // (a Namespace's update names the Namespace itself as the request's namespace).
        let role = request("rbac.authorization.k8s.io", "v1", "ClusterRole", Some("default"));
        assert_eq!(label(&role, "default"), "admin");
        assert_eq!(label(&request("", "v1", "Namespace", Some("admin")), ""), "admin");
        let crd = request("apiextensions.k8s.io", "v1", "CustomResourceDefinition", None);
        assert_eq!(label(&crd, "kube-system"), "admin");
        // A built-in namespaced kind keeps the object's namespace, else the request's.
        let map = request("", "v1", "ConfigMap", None);
        assert_eq!(label(&map, "kube-system"), "kube-system/admin");
        assert_eq!(label(&request("", "v1", "ConfigMap", Some("ns")), ""), "ns/admin");
        // Another kind: cluster-scoped when the request names no namespace, as the API server
        // (and syncguard scan, for a CRD of scope Cluster) sends it.
        let widget = |namespace| request("example.com", "v1", "Widget", namespace);
        assert_eq!(label(&widget(None), "team"), "admin");
        assert_eq!(label(&widget(Some("team")), "team"), "team/admin");
        assert_eq!(label(&widget(Some("team")), ""), "team/admin");
    }
}
