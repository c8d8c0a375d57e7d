//! Text for the checks' messages, by concern: this module lays messages out within a size
//! ([`fit`], [`Parts`], [`elide`], lists that stop with "and N more"); [`limits`] holds the API
//! server's limits every answer keeps; [`search`] the quick filters over an object's raw text;
//! [`spelling`] suggestions for misspelt names; [`order`] the natural order of field paths.
//!
//! Lengths are counted in characters (Unicode scalar values), as the API server counts runes.

pub mod limits;
pub mod order;
pub mod search;
pub mod spelling;

pub use limits::{MAX_MESSAGE_CHARS, MAX_WARNING_CHARS, MAX_WARNINGS_TOTAL_CHARS};

use std::borrow::Cow;

/// Number of characters of `text`, as the API server counts them.
pub fn chars(text: &str) -> usize {
    text.chars().count()
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

    /// Appends every piece of `other`, each kept as it is there.
    pub fn then(mut self, other: &Parts) -> Self {
        self.0.extend(other.0.iter().cloned());
        self
    }

    /// The whole text, nothing shortened and optional pieces included.
    pub fn whole(&self) -> String {
        self.0.iter().map(|(_, text)| text.as_str()).collect()
    }

    /// Whether there is no text at all.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|(_, text)| text.is_empty())
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

impl From<String> for Parts {
    fn from(text: String) -> Parts {
        Parts::default().fixed(text)
    }
}

impl From<&str> for Parts {
    fn from(text: &str) -> Parts {
        Parts::default().fixed(text)
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
    fn joins() {
        assert_eq!(join_and(&["a".into(), "b".into(), "c".into()]), "a, b and c");
    }
}
