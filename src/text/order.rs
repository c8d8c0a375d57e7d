//! A natural order for field paths, so that findings come in the order people read them
//! (`items[2]` before `items[10]`) whatever the order of keys in the JSON.
//!
//! Kept by hand rather than taken from a crate (natord, alphanumeric-sort): forty lines, where a
//! dependency would be linked into every policy module, and the order must be total (two
//! different paths never compare equal) for answers to be deterministic.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order_reads_numbers_as_numbers() {
        let mut paths = vec!["a[10].b", "a[2].b", "a[2]", "a.b", "a[02].b"];
        paths.sort_by(|x, y| natural_cmp(x, y));
        assert_eq!(paths, ["a.b", "a[2]", "a[2].b", "a[02].b", "a[10].b"]);
    }
}
