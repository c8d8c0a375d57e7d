//! The API server's limits on admission answers, which every syncguard answer keeps.
//!
//! The Kubernetes API server keeps admission warnings short: once the warnings of one response
//! pass 4,096 characters in all, it cuts every warning to 256 characters (k8s.io/apiserver
//! `pkg/endpoints/filters/warning.go`). syncguard therefore keeps each warning within
//! [`MAX_WARNING_CHARS`], all warnings of a response within [`MAX_WARNINGS_TOTAL_CHARS`] and a
//! rejection message within [`MAX_MESSAGE_CHARS`], by construction: long identifiers (names,
//! paths) are shortened in their middle, lists stop with "and N more", and the details live in
//! the policy's README (linked) and in the audit annotation of the findings. What a check's
//! texts may take of these (less the all-in-one's `<check>: ` prefix, less the other checks'
//! lines) is the renderer's to work out, once per answer (`crate::render::answer`).

use super::chars;

/// Longest warning the API server passes on unshortened, in characters.
pub const MAX_WARNING_CHARS: usize = 256;

/// Most characters all warnings of one response may hold before the API server shortens them.
pub const MAX_WARNINGS_TOTAL_CHARS: usize = 4096;

/// Longest rejection message syncguard gives, in characters.
pub const MAX_MESSAGE_CHARS: usize = 4096;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_counted_in_characters() {
        assert!(limit_violations(Some(&"x".repeat(4096)), &["é".repeat(256)]).is_empty());
        let problems = limit_violations(Some(&"x".repeat(4097)), &["x".repeat(257)]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        let many = vec!["x".repeat(256); 17];
        assert_eq!(limit_violations(None, &many).len(), 1);
    }
}
