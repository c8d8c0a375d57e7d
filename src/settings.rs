//! Strict settings parsing shared by every check.
//!
//! Settings structs derive serde's `Deserialize` with `#[serde(default, deny_unknown_fields,
//! rename_all = "camelCase")]`: unknown keys are refused and absent keys keep their documented
//! defaults. [`parse`] reads them through `serde_path_to_error`, so every error names the key it
//! concerns (`` `allowedKeys[1]`: invalid type ... ``), and gives serde_json's message without
//! its position (settings are short, and the key says where).

use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeMap;

/// Parses settings from raw JSON; absent, empty or `null` means all defaults.
pub fn parse<T: DeserializeOwned + Default>(raw: Option<&str>) -> Result<T, String> {
    let text = match raw.map(str::trim) {
        None | Some("") | Some("null") => return Ok(T::default()),
        Some(text) => text,
    };
    if !text.starts_with('{') {
        return Err("settings must be a JSON object".to_string());
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let settings = serde_path_to_error::deserialize(&mut deserializer).map_err(|e| describe(&e))?;
    deserializer.end().map_err(|e| message(&e))?;
    Ok(settings)
}

/// Reads settings from a parsed JSON value (a section of the all-in-one policy's settings);
/// `null` means all defaults. Errors read as [`parse`]'s.
pub fn from_value<T: DeserializeOwned + Default>(value: Value) -> Result<T, String> {
    match value {
        Value::Null => Ok(T::default()),
        value => serde_path_to_error::deserialize(value).map_err(|e| describe(&e)),
    }
}

/// An error as `` `path`: message `` (the message alone at the document's root).
fn describe(error: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = path_text(error.path());
    let message = message(error.inner());
    if path.is_empty() {
        message
    } else {
        format!("`{path}`: {message}")
    }
}

/// A path as `a.b[2].c`: empty at the root, and without the segments of keys that could not be
/// read (a syntax error where a key was expected belongs to the object around it).
pub fn path_text(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut text = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => text.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !text.is_empty() {
                    text.push('.');
                }
                text.push_str(key);
            }
            Segment::Unknown => {}
        }
    }
    text
}

/// serde_json's message for `error`, without the ` at line L column C` it appends.
pub fn message(error: &serde_json::Error) -> String {
    let mut text = error.to_string();
    if error.line() != 0 {
        let suffix = format!(" at line {} column {}", error.line(), error.column());
        if text.ends_with(&suffix) {
            text.truncate(text.len() - suffix.len());
        }
    }
    text
}

/// Implements `Deserialize` for a settings enum read from one of a fixed set of strings. Written
/// out rather than derived so a value of another type reads `expected a string` (a derived enum
/// would say `expected enum Action`), as the policies document.
macro_rules! string_enum {
    ($ty:ty { $($text:literal => $variant:expr),+ $(,)? }) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                const NAMES: &[&str] = &[$($text),+];
                let text = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(deserializer)?;
                match text.as_ref() {
                    $($text => Ok($variant),)+
                    other => Err(<D::Error as serde::de::Error>::unknown_variant(other, NAMES)),
                }
            }
        }
    };
}
pub(crate) use string_enum;

/// The JSON path (`spec.versions[0].name`) in `text` of the value serde_json was reading when it
/// failed with `error`; empty for the document itself.
pub fn path_of_error(text: &str, error: &serde_json::Error) -> String {
    // serde_json's position is just past the token it stopped on; for a syntax error that token
    // is the offending character itself, which belongs to no key.
    let mut end = line_offset(text, error.line()).saturating_add(error.column());
    if error.classify() == serde_json::error::Category::Syntax {
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Reject the request.
    Reject,
    /// Accept the request with a warning.
    Warn,
    /// Say nothing.
    Ignore,
}

string_enum!(Action {
    "reject" => Action::Reject,
    "warn" => Action::Warn,
    "ignore" => Action::Ignore,
});

/// An action per rule, as settings name them (`{"quantity": "reject", "status": "ignore"}`):
/// each check gives the rules it does not name their default.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RuleActions(pub BTreeMap<String, Action>);

impl<'de> serde::Deserialize<'de> for RuleActions {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(RuleActions(BTreeMap::deserialize(deserializer)?))
    }
}

impl RuleActions {
    /// The action the settings give `rule`, if they name it.
    pub fn get(&self, rule: &str) -> Option<Action> {
        self.0.get(rule).copied()
    }

    /// Refuses a rule name that is not one of `rules`, naming the setting `key` and suggesting
    /// the nearest rule.
    pub fn check(&self, key: &str, rules: &[&str]) -> Result<(), String> {
        for rule in self.0.keys() {
            if !rules.contains(&rule.as_str()) {
                let hint = crate::text::spelling::closest(rule, rules.iter().copied(), 3)
                    .map(|near| format!(" (did you mean {}?)", crate::text::quote(near)))
                    .unwrap_or_default();
                let names: Vec<String> = rules.iter().map(|r| r.to_string()).collect();
                return Err(format!(
                    "`{key}.{rule}`: unknown rule{hint}; the rules are {}",
                    crate::text::join_and(&names)
                ));
            }
        }
        Ok(())
    }
}

/// Reject or warn: for findings that cannot be ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectOrWarn {
    /// Reject the request.
    Reject,
    /// Accept the request with a warning.
    Warn,
}

string_enum!(RejectOrWarn {
    "reject" => RejectOrWarn::Reject,
    "warn" => RejectOrWarn::Warn,
});

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, serde::Deserialize)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    struct Example {
        max_findings: u32,
        allowed_keys: Vec<String>,
        releases: Vec<Release>,
        enabled: bool,
    }

    #[derive(Debug, Default, serde::Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct Release {
        set_id: String,
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
            let err = parse::<Example>(Some(text)).unwrap_err();
            assert!(err.starts_with(expected), "{text}: {err}");
        }
        let parsed = parse::<Example>(Some(r#"{"releases": [{"setId": "a"}], "enabled": true}"#)).unwrap();
        assert_eq!(parsed.releases[0].set_id, "a");
        assert!(parsed.enabled);
    }

    #[test]
    fn non_object_is_refused() {
        assert_eq!(
            parse::<Example>(Some("[1]")).unwrap_err(),
            "settings must be a JSON object"
        );
    }

    #[test]
    fn actions_name_their_choices() {
        let read = |text: &str| serde_json::from_str::<Action>(text).map_err(|e| message(&e));
        assert_eq!(read("\"ignore\""), Ok(Action::Ignore));
        assert_eq!(
            read("\"Reject\""),
            Err("unknown variant `Reject`, expected one of `reject`, `warn`, `ignore`".to_string())
        );
        assert_eq!(
            read("true"),
            Err("invalid type: boolean `true`, expected a string".to_string())
        );
    }
}
