//! Suggestions for a misspelt name (a settings value, a schema key), by edit distance
//! ([strsim](https://crates.io/crates/strsim)'s Levenshtein distance).

/// The candidate closest to `word` within `limit` edits; ties go to the first candidate.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>, limit: usize) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|candidate| (strsim::levenshtein(word, candidate), candidate))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// The edit distance between `a` and `b` (insertions, deletions and substitutions of characters).
pub fn distance(a: &str, b: &str) -> usize {
    strsim::levenshtein(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(distance("minLenght", "minLength"), 2);
        assert_eq!(distance("x-kubernetes-list-typ", "x-kubernetes-list-type"), 1);
        assert_eq!(distance("abc", "abc"), 0);
        assert_eq!(distance("a", "abcdef"), 5);
    }

    #[test]
    fn closest_prefers_smaller_distance() {
        assert_eq!(closest("typ", ["type", "title"], 2), Some("type"));
        assert_eq!(closest("zzzzzz", ["type"], 2), None);
        assert_eq!(closest("ab", ["ax", "xb"], 1), Some("ax"));
    }
}
