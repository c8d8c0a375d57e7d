//! Strict settings parsing shared by every check.
//!
//! Each check declares how its settings are read with `json::from_json_members!(strict ...)`:
//! unknown keys are refused and reading starts from the settings' `Default`, so absent keys
//! keep their documented defaults. [`parse`] adds the path of the offending key to every
//! error (`` `allowedKeys[1]`: invalid type ... ``), so a wrong type or an unknown key is
//! reported by name; for a syntax error the path is found by re-reading the settings text up to
//! where the reader stopped.

use crate::json::{self, FromJson, Json};

/// Parses settings from raw JSON; absent, empty or `null` means all defaults.
pub fn parse<T: for<'a> FromJson<'a> + Default>(raw: Option<&str>) -> Result<T, String> {
    let text = match raw.map(str::trim) {
        None | Some("") | Some("null") => return Ok(T::default()),
        Some(text) => text,
    };
    if !text.starts_with('{') {
        return Err("settings must be a JSON object".to_string());
    }
    let document = json::parse(text).map_err(|mut e| {
        e.path = e
            .offset(text)
            .map(|end| path_at(text.as_bytes(), end))
            .unwrap_or_default();
        e.with_path()
    })?;
    document.root().read::<T>().map_err(|e| e.with_path())
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

impl<'a> FromJson<'a> for Action {
    fn from_json(value: Json<'a>) -> Result<Self, json::Error> {
        let values = [Action::Reject, Action::Warn, Action::Ignore];
        json::one_of(value, &["reject", "warn", "ignore"], &values)
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

impl<'a> FromJson<'a> for RejectOrWarn {
    fn from_json(value: Json<'a>) -> Result<Self, json::Error> {
        json::one_of(value, &["reject", "warn"], &[RejectOrWarn::Reject, RejectOrWarn::Warn])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default)]
    struct Example {
        max_findings: u32,
        allowed_keys: Vec<String>,
        releases: Vec<Release>,
        enabled: bool,
    }

    json::from_json_members!(strict Example {
        "maxFindings" => max_findings,
        "allowedKeys" => allowed_keys,
        "releases" => releases,
        "enabled" => enabled,
    });

    #[derive(Debug, Default)]
    struct Release {
        set_id: String,
    }

    impl<'a> FromJson<'a> for Release {
        fn from_json(value: Json<'a>) -> Result<Self, json::Error> {
            let mut set_id = None;
            value.read_members("struct Release", &["setId"], true, |_, v| {
                set_id = Some(v.read()?);
                Ok(())
            })?;
            match set_id {
                Some(set_id) => Ok(Release { set_id }),
                None => Err(value.error("missing field `setId`")),
            }
        }
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
        let read = |text: &str| json::read::<Action>(text).map_err(|e| e.message);
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
