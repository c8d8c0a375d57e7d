//! The README examples are the fixtures' answers: every message a policy's README quotes is
//! checked against what the built module answers on the named case of `test_data/cases.yml`.
//!
//! The convention, in `policies/<name>/README.md`: a quote of an answer is introduced by a link
//! naming its case, ``[case `NAME`](test_data/cases.yml)``, and is the quote right after it
//! (only spaces, line breaks, `:`, `,` and `)` in between): a code span, or a block quote
//! (`> ...` lines). The quote must appear in the case's answer (its message, a warning or the
//! JSON Patch), whitespace runs counting as one space; `...` in a quote stands for text left
//! out, so the parts around it must appear in that order. A long quote without a case link
//! (a code span of 60 characters or more that is not JSON, or a block quote) fails the test,
//! so no answer is quoted without being checked.

use e2e_tests::{Engine, annotated_module, parallel_map, policies, root};
use syncguard::testing::{self, Outcome};

/// The link that names a case.
const OPEN: &str = "[case `";
const CLOSE: &str = "`](test_data/cases.yml)";
/// A code span at least this long is an answer's text and needs a case link.
const LONG_QUOTE: usize = 60;

/// One quote of a README: where it is, the text, and the case it names (if any).
#[derive(Debug)]
struct Quote {
    line: usize,
    text: String,
    case: Option<String>,
    block: bool,
}

/// Collapses whitespace runs to one space and trims.
fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every code span and block quote of `readme` outside fenced code blocks, each with the case
/// link right before it.
fn quotes(readme: &str) -> Vec<Quote> {
    // Fenced code blocks are commands and manifests, not answers: blank them out, keeping lines.
    let mut text = String::new();
    let mut fenced = false;
    for line in readme.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            text.push('\n');
            continue;
        }
        if !fenced {
            text.push_str(line);
        }
        text.push('\n');
    }
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    let mut out = Vec::new();
    let mut pending: Option<String> = None;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        if let Some(after) = rest.strip_prefix(OPEN)
            && let Some(end) = after.find(CLOSE)
        {
            pending = Some(after[..end].to_string());
            i += OPEN.len() + end + CLOSE.len();
            continue;
        }
        let at_line_start = i == 0 || bytes[i - 1] == b'\n';
        if at_line_start && rest.trim_start_matches(' ').starts_with('>') {
            // A block quote: this line and the `>` lines after it.
            let mut quoted = Vec::new();
            let start = i;
            for line in rest.split_inclusive('\n') {
                let Some(content) = line.trim_start_matches(' ').strip_prefix('>') else {
                    break;
                };
                quoted.push(content.trim().to_string());
                i += line.len();
            }
            out.push(Quote {
                line: line_of(start),
                text: quoted.join(" "),
                case: pending.take(),
                block: true,
            });
            continue;
        }
        if bytes[i] == b'`' {
            let ticks = rest.len() - rest.trim_start_matches('`').len();
            let fence = &rest[..ticks];
            if let Some(end) = rest[ticks..].find(fence) {
                let content = &rest[ticks..ticks + end];
                out.push(Quote {
                    line: line_of(i),
                    text: content.trim().to_string(),
                    case: pending.take(),
                    block: false,
                });
                i += ticks + end + ticks;
                continue;
            }
            i += ticks;
            continue;
        }
        // Only these may stand between a case link and its quote.
        if !matches!(bytes[i], b' ' | b'\n' | b':' | b',' | b')') {
            pending = None;
        }
        i += text[i..].chars().next().map_or(1, char::len_utf8);
    }
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

/// Everything the module answered that a README may quote, whitespace squashed.
fn answer_texts(outcome: &Outcome) -> Vec<String> {
    let mut texts = vec![squash(&outcome.message)];
    texts.extend(outcome.warnings.iter().map(|w| squash(w)));
    if let Some(patch) = &outcome.patch {
        texts.push(patch.to_string());
    }
    texts
}

#[test]
fn readme_examples_are_the_fixtures_answers() {
    let engine = Engine::syncguard();
    let mut jobs = Vec::new();
    let mut problems = Vec::new();
    let mut checked = 0;
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
                None => {
                    let json = quote.text.starts_with(['{', '[']);
                    if quote.block || (quote.text.chars().count() >= LONG_QUOTE && !json) {
                        problems.push(format!(
                            "{place}: a quoted answer without a case link (write [case `NAME`](test_data/cases.yml) before it): {}",
                            quote.text.chars().take(80).collect::<String>()
                        ));
                    }
                }
            }
        }
    }
    let answers = parallel_map(&jobs, |(policy, index, _, _)| {
        let case = &testing::load(policy).cases[*index];
        engine.run_case(policy, &annotated_module(policy), case)
    });
    for ((_, _, place, quote), answer) in jobs.iter().zip(answers) {
        checked += 1;
        let case = quote.case.as_deref().unwrap_or_default();
        match answer {
            Err(e) => problems.push(format!("{place}: case `{case}` did not run: {e}")),
            Ok(outcome) => {
                let wanted = squash(&quote.text);
                if !answer_texts(&outcome).iter().any(|text| appears(&wanted, text)) {
                    problems.push(format!(
                        "{place}: case `{case}` does not answer the quoted text\n  quoted:   {wanted}\n  answered: {:?}",
                        answer_texts(&outcome)
                    ));
                }
            }
        }
    }
    assert!(checked > 0, "no README quotes a case");
    assert!(
        problems.is_empty(),
        "{} README examples differ from their fixtures:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn quotes_follow_their_case_links() {
    let readme = "- a ([case `x`](test_data/cases.yml)): `first quote`, then `free`\n\n\
                  [case `y`](test_data/cases.yml):\n\n> block\n> quote\n\n```\n`fenced`\n```\n";
    let found: Vec<(Option<String>, String, bool)> = quotes(readme)
        .into_iter()
        .map(|q| (q.case, q.text, q.block))
        .collect();
    let quote = |case: Option<&str>, text: &str, block| (case.map(str::to_string), text.to_string(), block);
    assert_eq!(
        found,
        vec![
            quote(Some("x"), "first quote", false),
            quote(None, "free", false),
            quote(Some("y"), "block quote", true)
        ]
    );
    assert!(appears("a ... c", "a b c"));
    assert!(!appears("c ... a", "a b c"));
}
