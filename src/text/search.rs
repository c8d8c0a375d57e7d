//! Searches of an object's raw JSON text: the checks' quick filters, which look for a key in the
//! text before deciding to read the object at all.

/// Whether `needle` occurs in `haystack`. memchr's search steps several bytes at a time, where
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
}
