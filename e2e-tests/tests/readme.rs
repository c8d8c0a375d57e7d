//! The README examples are the fixtures' answers: every message a policy's README quotes is
//! checked against what the built module answers on the named case of `test_data/cases.yml`.
//!
//! The convention, in `policies/<name>/README.md`: a quote of an answer is preceded by a link
//! naming its case, ``([case `NAME`](test_data/cases.yml))``, which labels the first quote after
//! it: a code span, a block quote (`> ` lines) or a fenced block. A quote must appear in the
//! case's answer (its message, a warning, or the refusal of its settings), whitespace runs
//! counting as one space and backticks not at all (a code span cannot hold them); `...` stands
//! for text left out, so the parts around it must appear in that order. Each line of a fenced
//! block must appear that way. A quote of JSON (an array) must equal the answer's JSON Patch.
//! In an Examples section, a quoted answer without a case link fails the test: a block quote,
//! a fenced block without a language, or a code span of 60 characters and 6 words or more that
//! is not JSON.

use e2e_tests::{Engine, annotated_module, parallel_map, policies, root};
use syncguard_scan::evaluate::AdmissionResponse;
use syncguard_testkit::cases as testing;

/// The link that names a case.
const OPEN: &str = "[case `";
const CLOSE: &str = "`](test_data/cases.yml)";
/// A code span at least this long is an answer's text and needs a case link.
const LONG_QUOTE: usize = 60;
/// ... and at least this many words (file names and annotations are not answers).
const LONG_QUOTE_WORDS: usize = 6;

/// How a quote is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// A code span.
    Span,
    /// `>` lines.
    Block,
    /// A fenced block; `true` when it names a language (`yaml`, `console`, ...).
    Fence(bool),
}

/// One quote of a README: where it is, the text, and the case it names (if any).
#[derive(Debug)]
struct Quote {
    line: usize,
    text: String,
    case: Option<String>,
    form: Form,
}

/// Whether line `line` (1-based) of `readme` is in a section whose heading names examples.
fn in_examples(readme: &str, line: usize) -> bool {
    readme
        .lines()
        .take(line)
        .filter(|l| l.starts_with('#'))
        .last()
        .is_some_and(|heading| heading.to_lowercase().contains("example"))
}

/// Collapses whitespace runs to one space, drops backticks and trims.
fn squash(text: &str) -> String {
    text.replace('`', "").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reads links and code spans in `text` (a run of ordinary lines starting at line `first`).
fn inline(text: &str, first: usize, pending: &mut Option<String>, out: &mut Vec<Quote>) {
    let line_of = |offset: usize| first + text[..offset].matches('\n').count();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        if let Some(after) = rest.strip_prefix(OPEN)
            && let Some(end) = after.find(CLOSE)
        {
            *pending = Some(after[..end].to_string());
            i += OPEN.len() + end + CLOSE.len();
            continue;
        }
        if bytes[i] == b'`' {
            let ticks = rest.len() - rest.trim_start_matches('`').len();
            let fence = &rest[..ticks];
            if let Some(end) = rest[ticks..].find(fence) {
                out.push(Quote {
                    line: line_of(i),
                    text: rest[ticks..ticks + end].trim().to_string(),
                    case: pending.take(),
                    form: Form::Span,
                });
                i += ticks + end + ticks;
                continue;
            }
            i += ticks;
            continue;
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
}

/// Every quote of `readme`, each with the case link right before it.
fn quotes(readme: &str) -> Vec<Quote> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut out = Vec::new();
    let mut pending: Option<String> = None;
    let mut paragraph = String::new();
    let mut paragraph_start = 1;
    let mut n = 0;
    while n < lines.len() {
        let trimmed = lines[n].trim_start();
        let fence = trimmed.starts_with("```");
        let block = trimmed.starts_with('>');
        if !fence && !block {
            if paragraph.is_empty() {
                paragraph_start = n + 1;
            }
            paragraph.push_str(lines[n]);
            paragraph.push('\n');
            n += 1;
            continue;
        }
        inline(&paragraph, paragraph_start, &mut pending, &mut out);
        paragraph.clear();
        let start = n;
        let mut body = Vec::new();
        let form = if fence {
            n += 1;
            while n < lines.len() && !lines[n].trim_start().starts_with("```") {
                body.push(lines[n].trim());
                n += 1;
            }
            n += 1;
            Form::Fence(!trimmed.trim_start_matches('`').trim().is_empty())
        } else {
            while let Some(content) = lines.get(n).and_then(|l| l.trim_start().strip_prefix('>')) {
                body.push(content.trim());
                n += 1;
            }
            Form::Block
        };
        let case = pending.take();
        if case.is_some() || form != Form::Fence(true) {
            out.push(Quote {
                line: start + 1,
                text: body.join("\n"),
                case,
                form,
            });
        }
    }
    inline(&paragraph, paragraph_start, &mut pending, &mut out);
    out
}

/// Whether `quote` appears in `answer`, `...` standing for left-out text.
fn appears(quote: &str, answer: &str) -> bool {
    let mut rest = answer;
    for part in quote.split(['…']).flat_map(|p| p.split("...")) {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Everything the module answered that a README may quote, whitespace squashed: the message,
/// each warning, or the refusal of the case's settings.
fn answer_texts(answer: &Result<AdmissionResponse, String>) -> Vec<String> {
    match answer {
        Ok(response) => std::iter::once(response.message())
            .chain(response.all_warnings().iter().map(String::as_str))
            .map(squash)
            .collect(),
        Err(refusal) => vec![squash(refusal)],
    }
}

/// Why `quote` is not what `answer` says, if it is not.
fn differs(quote: &Quote, answer: &Result<AdmissionResponse, String>) -> Option<String> {
    let texts = answer_texts(answer);
    let found = |wanted: &str| texts.iter().any(|text| appears(&squash(wanted), text));
    if let Ok(quoted @ serde_json::Value::Array(_)) = serde_json::from_str::<serde_json::Value>(&quote.text) {
        let patch = answer.as_ref().ok().and_then(AdmissionResponse::patch_ops);
        return (patch.as_ref() != Some(&quoted))
            .then(|| format!("the quoted JSON Patch differs from the answer's: {patch:?}"));
    }
    let missing: Vec<&str> = match quote.form {
        Form::Fence(_) => quote
            .text
            .lines()
            .filter(|l| !l.trim().is_empty() && !found(l))
            .collect(),
        Form::Span | Form::Block => (!found(&quote.text))
            .then_some(quote.text.as_str())
            .into_iter()
            .collect(),
    };
    (!missing.is_empty()).then(|| {
        format!(
            "not in the answer:\n    {}\n  answer:\n    {}",
            missing.iter().map(|m| squash(m)).collect::<Vec<_>>().join("\n    "),
            texts.join("\n    ")
        )
    })
}

#[test]
fn readme_examples_are_the_fixtures_answers() {
    let engine = Engine::syncguard();
    let mut jobs = Vec::new();
    let mut problems = Vec::new();
    for policy in policies() {
        let path = root().join("policies").join(&policy).join("README.md");
        let readme = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let cases = testing::load(&policy).cases;
        for quote in quotes(&readme) {
            let place = format!("policies/{policy}/README.md:{}", quote.line);
            match &quote.case {
                Some(name) => match cases.iter().position(|c| &c.name == name) {
                    Some(index) => jobs.push((policy.clone(), index, place, quote)),
                    None => problems.push(format!("{place}: no case `{name}` in test_data/cases.yml")),
                },
                None if in_examples(&readme, quote.line) => {
                    let long_span = quote.form == Form::Span
                        && quote.text.chars().count() >= LONG_QUOTE
                        && quote.text.split_whitespace().count() >= LONG_QUOTE_WORDS
                        && !quote.text.starts_with(['{', '[']);
                    if long_span || quote.form == Form::Block || quote.form == Form::Fence(false) {
                        problems.push(format!(
                            "{place}: a quoted answer without a case link (write [case `NAME`](test_data/cases.yml) before it): {}",
                            quote.text.chars().take(80).collect::<String>()
                        ));
                    }
                }
                None => {}
            }
        }
    }
    assert!(!jobs.is_empty(), "no README quotes a case");
    let answers = parallel_map(&jobs, |(policy, index, _, _)| {
        let case = &testing::load(policy).cases[*index];
        engine
            .run_case(policy, &annotated_module(policy), case)
            .map_err(|e| e.to_string())
    });
    for ((_, _, place, quote), answer) in jobs.iter().zip(answers) {
        let case = quote.case.as_deref().unwrap_or_default();
        if let Some(problem) = differs(quote, &answer) {
            problems.push(format!("{place}: case `{case}`: {problem}"));
        }
    }
    assert!(
        problems.is_empty(),
        "{} README examples differ from their fixtures:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn quotes_follow_their_case_links() {
    let readme = "- a ([case `x`](test_data/cases.yml)): with `first\n  quote`, then `free`\n\n\
                  [case `y`](test_data/cases.yml):\n\n> block\n> quote\n\n```console\n`skipped`\n```\n\
                  [case `z`](test_data/cases.yml):\n```\nline one\nline two\n```\n";
    let found: Vec<(Option<String>, String, Form)> = quotes(readme)
        .into_iter()
        .map(|q| (q.case, squash(&q.text), q.form))
        .collect();
    let quote = |case: Option<&str>, text: &str, form| (case.map(str::to_string), text.to_string(), form);
    assert_eq!(
        found,
        vec![
            quote(Some("x"), "first quote", Form::Span),
            quote(None, "free", Form::Span),
            quote(Some("y"), "block quote", Form::Block),
            quote(Some("z"), "line one line two", Form::Fence(false)),
        ]
    );
    assert!(appears("a ... c", "a b c"));
    assert!(!appears("c ... a", "a b c"));
}
