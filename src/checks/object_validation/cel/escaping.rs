//! How a property name becomes a CEL field name, as the API server escapes it
//! (`k8s.io/apiserver/pkg/cel/escaping.go`): a name CEL cannot spell is written with
//! `__dash__`, `__dot__`, `__slash__` and `__underscores__`, a reserved word as `__word__`, and a
//! name that still cannot be spelt (it starts with a digit or holds another character) is not
//! reachable from a rule at all.
//!
//! By hand: a dozen lines, and the rules are Kubernetes', not CEL's.

/// The words CEL reserves, escaped as `__word__` (escaping.go's `celReservedSymbols`).
const RESERVED: [&str; 21] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// The CEL name of the property `name`, or `None` when a rule cannot name it.
pub fn escape(name: &str) -> Option<String> {
    if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("__") {
            out.push_str("__underscores__");
            rest = &rest[2..];
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            _ => return None,
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::escape;

    /// Cases of `k8s.io/apiserver/pkg/cel/escaping_test.go` (`TestEscaping`).
    #[test]
    fn escapes_as_the_api_server() {
        for (name, escaped) in [
            ("self", Some("self")),
            ("_if", Some("_if")),
            ("_has", Some("_has")),
            ("_int", Some("_int")),
            ("_anything", Some("_anything")),
            ("true", Some("__true__")),
            ("false", Some("__false__")),
            ("null", Some("__null__")),
            ("in", Some("__in__")),
            ("namespace", Some("__namespace__")),
            ("int", Some("int")),
            ("has", Some("has")),
            ("a__b", Some("a__underscores__b")),
            ("a.b", Some("a__dot__b")),
            ("a-b", Some("a__dash__b")),
            ("a/b", Some("a__slash__b")),
            ("-", Some("__dash__")),
            ("a.b-c/d__e", Some("a__dot__b__dash__c__slash__d__underscores__e")),
            ("__", Some("__underscores__")),
            ("___", Some("__underscores___")),
            ("1a", None),
            ("a:b", None),
            ("", None),
            ("a b", None),
            ("ü", None),
        ] {
            assert_eq!(escape(name).as_deref(), escaped, "{name}");
        }
    }
}
