//! Small text helpers shared by the checks' messages.

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
    fn joins() {
        assert_eq!(join_and(&["a".into(), "b".into(), "c".into()]), "a, b and c");
    }
}
