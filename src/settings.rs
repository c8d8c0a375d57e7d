//! Strict settings parsing shared by every check.
//!
//! Settings structs use `#[serde(default, deny_unknown_fields, rename_all = "camelCase")]`;
//! [`parse`] adds the path of the offending key to every error (`` `allowedKeys[1]`: invalid
//! type ... ``), so a wrong type or an unknown key is reported by name. The path is found by
//! re-reading the settings text up to where serde_json stopped, which costs a few hundred
//! bytes of code instead of a second, path-tracking instance of every settings deserializer.

use serde::de::DeserializeOwned;
use serde_json::error::Category;

/// Parses settings from raw JSON; absent, empty or `null` means all defaults.
pub fn parse<T: DeserializeOwned + Default>(raw: Option<&str>) -> Result<T, String> {
    let text = match raw.map(str::trim) {
        None | Some("") | Some("null") => return Ok(T::default()),
        Some(text) => text,
    };
    if !text.starts_with('{') {
        return Err("settings must be a JSON object".to_string());
    }
    serde_json::from_str(text).map_err(|e| describe_error(text, &e))
}

/// A serde_json error on `text` as `` `path`: message ``, without serde_json's position suffix.
pub fn describe_error(text: &str, error: &serde_json::Error) -> String {
    let path = error_path(text, error);
    let message = error_message(error);
    if path.is_empty() {
        message
    } else {
        format!("`{path}`: {message}")
    }
}

/// serde_json's message for `error`, without its ` at line L column C` suffix.
pub fn error_message(error: &serde_json::Error) -> String {
    let mut message = error.to_string();
    if let Some(i) = message.find(" at line ") {
        message.truncate(i);
    }
    message
}

/// The JSON path (`a.b[2].c`) in `text` of the value serde_json was reading when it failed
/// with `error`; empty for the document itself.
pub fn error_path(text: &str, error: &serde_json::Error) -> String {
    // serde_json's position is just past the token it stopped on; for a syntax error that token
    // is the offending character itself, which belongs to no key.
    let mut end = line_offset(text, error.line()).saturating_add(error.column());
    if error.classify() == Category::Syntax {
        end = end.saturating_sub(1);
    }
    path_at(text.as_bytes(), end.min(text.len()))
}

/// Byte offset of the start of 1-based `line` in `text`.
fn line_offset(text: &str, line: usize) -> usize {
    if line <= 1 {
        return 0;
    }
    text.match_indices('\n')
        .nth(line - 2)
        .map_or(text.len(), |(i, _)| i + 1)
}

/// One open JSON container while scanning for a path.
enum Frame<'a> {
    /// An object and the key whose value is being read, if any.
    Object(Option<&'a [u8]>),
    /// An array and the index of the element being read.
    Array(usize),
}

/// The JSON path (`a.b[2].c`) of the value being read at byte `end` of `text`: the key or
/// element whose value ends at `end`, or the key just read there.
fn path_at(text: &[u8], end: usize) -> String {
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < end {
        match text[i] {
            b'{' => stack.push(Frame::Object(None)),
            b'[' => stack.push(Frame::Array(0)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object(key)) => *key = None,
                Some(Frame::Array(index)) => *index += 1,
                None => {}
            },
            b'"' => {
                let start = i + 1;
                i = start;
                while i < end && text[i] != b'"' {
                    i += if text[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Object(key @ None)) = stack.last_mut() {
                    *key = Some(&text[start..i.min(end)]);
                }
            }
            _ => {}
        }
        i += 1;
    }
    let mut path = String::new();
    for frame in &stack {
        match frame {
            Frame::Object(Some(key)) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&String::from_utf8_lossy(key));
            }
            Frame::Object(None) => {}
            Frame::Array(index) => {
                path.push('[');
                path.push_str(&index.to_string());
                path.push(']');
            }
        }
    }
    path
}

/// What to do with a finding: the common three-way setting of syncguard checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Action {
    /// Reject the request.
    Reject,
    /// Accept the request with a warning.
    Warn,
    /// Say nothing.
    Ignore,
}

/// Reject or warn: for findings that cannot be ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum RejectOrWarn {
    /// Reject the request.
    Reject,
    /// Accept the request with a warning.
    Warn,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, serde::Deserialize)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    struct Example {
        max_findings: u32,
        allowed_keys: Vec<String>,
    }

    #[test]
    fn defaults_for_absent_and_null() {
        for raw in [None, Some(""), Some("null"), Some("{}")] {
            let parsed: Example = parse(raw).unwrap();
            assert_eq!(parsed.max_findings, 0);
        }
    }

    #[test]
    fn unknown_key_is_named() {
        let err = parse::<Example>(Some(r#"{"maxFinding": 3}"#)).unwrap_err();
        assert!(err.contains("unknown field `maxFinding`"), "{err}");
    }

    #[test]
    fn wrong_type_names_the_key() {
        let err = parse::<Example>(Some(r#"{"maxFindings": "three"}"#)).unwrap_err();
        assert!(err.starts_with("`maxFindings`: invalid type"), "{err}");
        let err = parse::<Example>(Some(r#"{"allowedKeys": ["a", 3]}"#)).unwrap_err();
        assert!(err.starts_with("`allowedKeys[1]`"), "{err}");
    }

    #[test]
    fn path_of_unknown_and_missing_fields_and_syntax_errors() {
        #[derive(Debug, Default, serde::Deserialize)]
        #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
        struct Outer {
            releases: Vec<Inner>,
            enabled: bool,
        }
        #[derive(Debug, Default, serde::Deserialize)]
        #[serde(deny_unknown_fields, rename_all = "camelCase")]
        struct Inner {
            #[allow(dead_code)]
            set_id: String,
        }
        let cases = [
            (
                r#"{"releases": [{"setId": "a"}, {"setID": "b"}]}"#,
                "`releases[1].setID`: unknown field `setID`",
            ),
            (r#"{"releases": [{}]}"#, "`releases[0]`: missing field `setId`"),
            (r#"{"enabled": }"#, "`enabled`: expected value"),
            (r#"{"enabled": tru}"#, "`enabled`: expected ident"),
            (
                "{\"releases\": [{\"setId\": \"a\\\"}]\"}],\n  \"enabled\": \"é\"}",
                "`enabled`: invalid type: string \"é\"",
            ),
            (
                r#"{"releases": [{"setId": "a"}], "enabled": "#,
                "`enabled`: EOF while parsing a value",
            ),
            (r#"{"releases": [{"setId": "a"}]} x"#, "trailing characters"),
        ];
        for (text, expected) in cases {
            let err = parse::<Outer>(Some(text)).unwrap_err();
            assert!(err.starts_with(expected), "{text}: {err}");
        }
    }

    #[test]
    fn non_object_is_refused() {
        assert_eq!(
            parse::<Example>(Some("[1]")).unwrap_err(),
            "settings must be a JSON object"
        );
    }
}
