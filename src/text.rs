//! Small text helpers shared by the checks' messages, and the size limits every answer keeps.
//!
//! The Kubernetes API server keeps admission warnings short: once the warnings of one response
//! pass 4,096 characters in all, it cuts every warning to 256 characters (k8s.io/apiserver
//! `pkg/endpoints/filters/warning.go`). syncguard therefore keeps each warning within
//! [`MAX_WARNING_CHARS`], all warnings of a response within [`MAX_WARNINGS_TOTAL_CHARS`] and a
//! rejection message within [`MAX_MESSAGE_CHARS`], by construction: long identifiers (names,
//! paths) are shortened in their middle with [`elide`], lists stop with "and N more", and the
//! details live in the policy's README (linked) and in audit annotations. Lengths are counted in
//! characters (Unicode scalar values), as the API server counts runes.

use std::borrow::Cow;

/// Longest warning the API server passes on unshortened, in characters.
pub const MAX_WARNING_CHARS: usize = 256;

/// Most characters all warnings of one response may hold before the API server shortens them.
pub const MAX_WARNINGS_TOTAL_CHARS: usize = 4096;

/// Longest rejection message syncguard gives, in characters.
pub const MAX_MESSAGE_CHARS: usize = 4096;

/// Room each single check leaves in a warning and a message for the all-in-one policy's
/// `<check-name>: ` prefix (the longest check name, `crd-kind-collision`, plus `: `).
pub const PREFIX_ROOM: usize = 20;

/// Longest warning a single check gives: [`MAX_WARNING_CHARS`] less [`PREFIX_ROOM`].
pub const CHECK_WARNING_CHARS: usize = MAX_WARNING_CHARS - PREFIX_ROOM;

/// Longest rejection message a single check gives: [`MAX_MESSAGE_CHARS`] less [`PREFIX_ROOM`]
/// and room for the all-in-one policy to name two more rejecting checks in a short line each (at
/// most three checks apply to one request: the three CRD checks).
pub const CHECK_MESSAGE_CHARS: usize = 3600;

/// Number of characters of `text`, as the API server counts them.
pub fn chars(text: &str) -> usize {
    text.chars().count()
}

/// Whether `needle` occurs in `haystack`: the checks' quick filters, which search an object's
/// whole text before deciding to read it. memchr's search steps several bytes at a time, where
/// `str::contains` on wasm32 compares byte by byte.
pub fn contains(haystack: &str, needle: &str) -> bool {
    memchr::memmem::find(haystack.as_bytes(), needle.as_bytes()).is_some()
}

/// Whether the JSON text holds a backslash followed by one of `next` (`\u`, `\/`, ...): an
/// escape that could spell a searched key without containing it literally.
pub fn has_escape(text: &str, next: &[u8]) -> bool {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'\\', bytes).any(|i| bytes.get(i + 1).is_some_and(|b| next.contains(b)))
}

/// `text` shortened to at most `max` characters by replacing its middle with `…`; unchanged
/// when it fits. For identifiers (names, field paths) in messages, never for sentences: the
/// start and the end of a path are what tell a reader where to look.
pub fn elide(text: &str, max: usize) -> Cow<'_, str> {
    let count = chars(text);
    if count <= max {
        return Cow::Borrowed(text);
    }
    if max == 0 {
        return Cow::Borrowed("");
    }
    let keep = max - 1;
    let head = keep.div_ceil(2);
    let tail = keep - head;
    let mut out: String = text.chars().take(head).collect();
    out.push('…');
    out.extend(text.chars().skip(count - tail));
    Cow::Owned(out)
}

/// Where the policies' READMEs are published; warnings link to their sections.
pub const README_BASE: &str = "https://github.com/syncguard/syncguard/tree/main/policies/";

/// The link to section `anchor` of `policy`'s README.
pub fn readme_link(policy: &str, anchor: &str) -> String {
    format!("{README_BASE}{policy}#{anchor}")
}

/// Fewest characters [`fit`] leaves an identifier when the fixed text of a caller is long.
pub const MIN_IDENTIFIER_CHARS: usize = 16;

/// One piece of a message built with [`fit`].
#[derive(Debug, Clone, Copy)]
pub enum Part<'a> {
    /// Text kept whole: the sentence around the identifiers.
    Fixed(&'a str),
    /// An identifier (a name, a path, a value) that [`elide`] may shorten in its middle.
    Elidable(&'a str),
    /// Text given only when everything fits without shortening an identifier, such as a link
    /// to the README section with the details.
    Optional(&'a str),
}

/// Joins `parts` into at most `max` characters: fixed parts are kept whole and the elidable
/// ones share what room is left, each shortened in its middle only as much as needed (a short
/// identifier keeps its room, the long ones split the rest evenly). The fixed parts of every
/// caller are far below `max`; should they not be, the result is still cut to `max` at the end
/// rather than break the API server's limit.
pub fn fit(parts: &[Part<'_>], max: usize) -> String {
    let whole: usize = parts
        .iter()
        .map(|part| match part {
            Part::Fixed(text) | Part::Elidable(text) | Part::Optional(text) => chars(text),
        })
        .sum();
    if whole <= max {
        return parts
            .iter()
            .map(|part| match part {
                Part::Fixed(text) | Part::Elidable(text) | Part::Optional(text) => *text,
            })
            .collect();
    }
    let fixed: usize = parts
        .iter()
        .map(|part| match part {
            Part::Fixed(text) => chars(text),
            Part::Elidable(_) | Part::Optional(_) => 0,
        })
        .sum();
    let mut lengths: Vec<(usize, usize)> = parts
        .iter()
        .enumerate()
        .filter_map(|(i, part)| match part {
            Part::Elidable(text) => Some((i, chars(text))),
            Part::Fixed(_) | Part::Optional(_) => None,
        })
        .collect();
    // Every caller leaves its identifiers room to stay recognisable; tests and fuzzing (built
    // with debug assertions) hold the callers to it.
    debug_assert!(
        fixed + MIN_IDENTIFIER_CHARS * lengths.len() <= max,
        "fixed text of {fixed} characters leaves no room for {} identifiers within {max}",
        lengths.len()
    );
    // Water-filling: the shortest identifiers take what they need, the rest share evenly.
    lengths.sort_by_key(|&(i, length)| (length, i));
    let mut room = max.saturating_sub(fixed);
    let mut budget = vec![usize::MAX; parts.len()];
    let mut left = lengths.len();
    for &(i, length) in &lengths {
        let share = room / left;
        let take = length.min(share);
        budget[i] = take;
        room -= take;
        left -= 1;
    }
    let mut out = String::new();
    for (i, part) in parts.iter().enumerate() {
        match part {
            Part::Fixed(text) => out.push_str(text),
            Part::Elidable(text) => out.push_str(&elide(text, budget[i])),
            Part::Optional(_) => {}
        }
    }
    if chars(&out) > max {
        out = out.chars().take(max).collect();
    }
    out
}

/// An owned text in [`Part`]s, for a message built in one place and fitted in another.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parts(Vec<(PartKind, String)>);

/// Which [`Part`] an owned piece of [`Parts`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PartKind {
    Fixed,
    Elidable,
    Optional,
}

impl Parts {
    /// Appends text kept whole.
    pub fn fixed(mut self, text: impl Into<String>) -> Self {
        self.0.push((PartKind::Fixed, text.into()));
        self
    }

    /// Appends an identifier that may be shortened in its middle.
    pub fn elidable(mut self, text: impl Into<String>) -> Self {
        self.0.push((PartKind::Elidable, text.into()));
        self
    }

    /// Appends text given only when everything fits unshortened.
    pub fn optional(mut self, text: impl Into<String>) -> Self {
        self.0.push((PartKind::Optional, text.into()));
        self
    }

    /// The text within `max` characters, as [`fit`] makes it.
    pub fn fit(&self, max: usize) -> String {
        let parts: Vec<Part<'_>> = self
            .0
            .iter()
            .map(|(kind, text)| match kind {
                PartKind::Fixed => Part::Fixed(text),
                PartKind::Elidable => Part::Elidable(text),
                PartKind::Optional => Part::Optional(text),
            })
            .collect();
        fit(&parts, max)
    }
}

/// Joins `items` with `separator`, stopping before the text would pass `max` characters and
/// then saying how many were left out (`, and 3 more`); always at least one item in full.
pub fn join_within(items: &[String], separator: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        let rest = items.len() - i;
        let tail = if rest > 1 { chars(separator) + 16 } else { 0 };
        let needed = if i == 0 {
            chars(item)
        } else {
            chars(separator) + chars(item)
        };
        if i > 0 && chars(&out) + needed + tail > max {
            out.push_str(&format!("{separator}and {rest} more"));
            return out;
        }
        if i > 0 {
            out.push_str(separator);
        }
        out.push_str(item);
    }
    out
}

/// Joins texts given in a long and a short form with `separator` within `max` characters:
/// every long form when they fit, else the last ones in their short form, one by one, until the
/// whole fits (short forms are warning-sized, so it does).
pub fn join_fitting(parts: &[(String, String)], separator: &str, max: usize) -> String {
    let mut short = parts.len();
    loop {
        let texts: Vec<&str> = parts
            .iter()
            .enumerate()
            .map(|(i, (long, brief))| if i < short { long.as_str() } else { brief.as_str() })
            .collect();
        let joined = texts.join(separator);
        if short == 0 || chars(&joined) <= max {
            return if chars(&joined) <= max {
                joined
            } else {
                joined.chars().take(max).collect()
            };
        }
        short -= 1;
    }
}

/// Which limit a verdict's texts break, if any, as readable lines (for tests and fuzzing).
pub fn limit_violations(message: Option<&str>, warnings: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(message) = message.filter(|m| chars(m) > MAX_MESSAGE_CHARS) {
        problems.push(format!(
            "the message has {} characters, over {MAX_MESSAGE_CHARS}",
            chars(message)
        ));
    }
    for (i, warning) in warnings.iter().enumerate() {
        if chars(warning) > MAX_WARNING_CHARS {
            problems.push(format!(
                "warning {i} has {} characters, over {MAX_WARNING_CHARS}: {warning}",
                chars(warning)
            ));
        }
    }
    let total: usize = warnings.iter().map(|w| chars(w)).sum();
    if total > MAX_WARNINGS_TOTAL_CHARS {
        problems.push(format!(
            "the warnings hold {total} characters in all, over {MAX_WARNINGS_TOTAL_CHARS}"
        ));
    }
    problems
}

/// Levenshtein distance between two strings, bounded: returns `limit + 1` as soon as the
/// distance is known to exceed `limit`.
pub fn edit_distance(a: &str, b: &str, limit: usize) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > limit {
        return limit + 1;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        let mut row_min = current[0];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
            row_min = row_min.min(current[j + 1]);
        }
        if row_min > limit {
            return limit + 1;
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// The closest candidate within `limit` edits, ties broken by candidate order.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>, limit: usize) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (edit_distance(word, c, limit), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Compares two strings with runs of ASCII digits compared as numbers (`[2]` before `[10]`),
/// everything else byte by byte: a total order for sorting paths the way people read them.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].is_ascii_digit() && b[j].is_ascii_digit() {
            let (start_a, start_b) = (i, j);
            while i < a.len() && a[i].is_ascii_digit() {
                i += 1;
            }
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            // Compare the numbers without parsing them: strip leading zeros, then length, then
            // digits; equal values with different zero padding fall back to the padding.
            let (da, db) = (&a[start_a..i], &b[start_b..j]);
            let (ta, tb) = (trim_zeros(da), trim_zeros(db));
            let order = ta
                .len()
                .cmp(&tb.len())
                .then_with(|| ta.cmp(tb))
                .then_with(|| da.len().cmp(&db.len()));
            if order != Ordering::Equal {
                return order;
            }
        } else {
            if a[i] != b[j] {
                return a[i].cmp(&b[j]);
            }
            i += 1;
            j += 1;
        }
    }
    (a.len() - i).cmp(&(b.len() - j))
}

/// `digits` without its leading zeros.
fn trim_zeros(digits: &[u8]) -> &[u8] {
    let start = digits.iter().position(|&c| c != b'0').unwrap_or(digits.len());
    &digits[start..]
}

/// Joins items as `a, b and c`.
pub fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// A JSON string literal for embedding a value in a message.
pub fn quote(value: &str) -> String {
    // Serializing a string cannot fail.
    serde_json::to_string(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn searches() {
        let text = r#"{"metadata":{"annotations":{"meta.helm.sh/release-name":"x"}}}"#;
        assert!(contains(text, "meta.helm.sh/release-"));
        assert!(!contains(text, "objectset.rio.cattle.io/"));
        assert!(contains(text, ""));
        assert!(!has_escape(text, b"u/"));
        assert!(has_escape(r#"{"a\/b":1}"#, b"u/"));
        assert!(has_escape(r#"{"\u0061":1}"#, b"u/"));
        assert!(!has_escape(r#"{"a\"b":1}"#, b"u/"));
        assert!(!has_escape("ends with \\", b"u/"));
    }

    #[test]
    fn distances() {
        assert_eq!(edit_distance("minLenght", "minLength", 2), 2);
        assert_eq!(edit_distance("x-kubernetes-list-typ", "x-kubernetes-list-type", 2), 1);
        assert_eq!(edit_distance("abc", "abc", 2), 0);
        assert_eq!(edit_distance("a", "abcdef", 2), 3);
    }

    #[test]
    fn closest_prefers_smaller_distance() {
        assert_eq!(closest("typ", ["type", "title"], 2), Some("type"));
        assert_eq!(closest("zzzzzz", ["type"], 2), None);
    }

    #[test]
    fn elides_the_middle_of_long_identifiers() {
        assert_eq!(elide("spec.names", 20), "spec.names");
        assert_eq!(elide("abcdefghij", 5), "ab…ij");
        assert_eq!(chars(&elide("é".repeat(300).as_str(), 256)), 256);
        assert_eq!(elide("abc", 1), "…");
    }

    #[test]
    fn fit_keeps_fixed_text_and_shares_room() {
        use Part::{Elidable, Fixed};
        let long = "a".repeat(300);
        let text = fit(
            &[Fixed("CRD "), Elidable(&long), Fixed(": kind "), Elidable("Shirt")],
            60,
        );
        assert_eq!(chars(&text), 60);
        assert!(text.starts_with("CRD aaa") && text.ends_with(": kind Shirt"), "{text}");
        let short = fit(&[Fixed("CRD "), Elidable("x.example.com")], 60);
        assert_eq!(short, "CRD x.example.com");
        let link = Part::Optional(". See https://example.com/readme#section");
        assert_eq!(
            fit(&[Fixed("CRD "), Elidable("x"), link], 60),
            "CRD x. See https://example.com/readme#section"
        );
        assert_eq!(
            fit(&[Fixed("CRD "), Elidable("x.example.com"), link], 40),
            "CRD x.example.com"
        );
        let two = fit(&[Elidable(&long), Fixed(" / "), Elidable(&long)], 43);
        assert_eq!(chars(&two), 43);
        assert_eq!(two.matches('…').count(), 2);
    }

    #[test]
    fn join_fitting_shortens_the_last_parts_first() {
        let parts = vec![
            ("a".repeat(30), "short a".to_string()),
            ("b".repeat(30), "short b".to_string()),
        ];
        assert_eq!(
            join_fitting(&parts, " ", 61),
            format!("{} {}", "a".repeat(30), "b".repeat(30))
        );
        assert_eq!(join_fitting(&parts, " ", 50), format!("{} short b", "a".repeat(30)));
        assert_eq!(join_fitting(&parts, " ", 20), "short a short b");
    }

    #[test]
    fn join_within_counts_what_it_leaves_out() {
        let items: Vec<String> = (0..10).map(|i| format!("item{i}")).collect();
        assert_eq!(join_within(&items[..2], ", ", 100), "item0, item1");
        let joined = join_within(&items, ", ", 30);
        assert!(joined.ends_with("more"), "{joined}");
        assert!(chars(&joined) <= 30, "{joined}");
        assert_eq!(join_within(&["x".repeat(50)], ", ", 10), "x".repeat(50));
    }

    #[test]
    fn limits_are_counted_in_characters() {
        assert!(limit_violations(Some(&"x".repeat(4096)), &["é".repeat(256)]).is_empty());
        let problems = limit_violations(Some(&"x".repeat(4097)), &["x".repeat(257)]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        let many = vec!["x".repeat(256); 17];
        assert_eq!(limit_violations(None, &many).len(), 1);
    }

    #[test]
    fn natural_order_reads_numbers_as_numbers() {
        let mut paths = vec!["a[10].b", "a[2].b", "a[2]", "a.b", "a[02].b"];
        paths.sort_by(|x, y| natural_cmp(x, y));
        assert_eq!(paths, ["a.b", "a[2]", "a[2].b", "a[02].b", "a[10].b"]);
    }

    #[test]
    fn joins() {
        assert_eq!(join_and(&["a".into(), "b".into(), "c".into()]), "a, b and c");
    }
}
