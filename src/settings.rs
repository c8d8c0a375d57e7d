//! Strict settings parsing shared by every check.
//!
//! Settings structs use `#[serde(default, deny_unknown_fields, rename_all = "camelCase")]`;
//! [`parse`] adds the path of the offending key to every error, so a wrong type or an unknown
//! key is reported by name.

use serde::de::DeserializeOwned;

/// Parses settings from raw JSON; absent, empty or `null` means all defaults.
pub fn parse<T: DeserializeOwned + Default>(raw: Option<&str>) -> Result<T, String> {
    let text = match raw.map(str::trim) {
        None | Some("") | Some("null") => return Ok(T::default()),
        Some(text) => text,
    };
    if !text.starts_with('{') {
        return Err("settings must be a JSON object".to_string());
    }
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        let inner = strip_position(&inner);
        if path.is_empty() || path == "." {
            inner.to_string()
        } else {
            format!("`{path}`: {inner}")
        }
    })
}

fn strip_position(message: &str) -> &str {
    match message.find(" at line ") {
        Some(i) => &message[..i],
        None => message,
    }
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
    fn non_object_is_refused() {
        assert_eq!(
            parse::<Example>(Some("[1]")).unwrap_err(),
            "settings must be a JSON object"
        );
    }
}
