//! The object-metadata rules every kind has, as the API server checks them
//! (`k8s.io/apimachinery/pkg/api/validation/objectmeta.go`, `generic.go`,
//! `pkg/util/validation/validation.go`, `pkg/api/validate/content`): `metadata.name` and
//! `generateName` by the kind's name rule, `metadata.namespace`, label keys and values,
//! annotation keys and their total size.
//!
//! The checks are plain character tests rather than the regular expressions the messages quote:
//! each expression is a short DNS or label grammar whose test is a few lines, and the messages
//! quote the expressions as Kubernetes writes them.

use super::field_error::{BadValue, FieldError};
use crate::json::{Members, Node};

/// The total size of a `metadata.annotations` map, keys and values, the API server accepts.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: i64 = 256 * 1024;

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_ERR: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_ERR: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_ERR: &str =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// `validation.RegexError`.
fn regex_error(message: &str, format: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{message} (regex used for validation is '{format}')");
    }
    let mut out = format!("{message} (e.g. ");
    for (i, example) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push_str(&format!("'{example}', "));
    }
    out.push_str(&format!("regex used for validation is '{format}')"));
    out
}

/// `MaxLenError`: `characters` in `pkg/util/validation`, `bytes` in `pkg/api/validate/content`
/// (which checks label keys and values from Kubernetes 1.35).
fn max_len_error(length: usize, unit: &str) -> String {
    format!("must be no more than {length} {unit}")
}

fn is_alnum_lower(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// Whether `text` matches `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
fn is_label_shape(text: &str) -> bool {
    let b = text.as_bytes();
    !b.is_empty()
        && is_alnum_lower(b[0])
        && is_alnum_lower(b[b.len() - 1])
        && b.iter().all(|&c| is_alnum_lower(c) || c == b'-')
}

fn is_subdomain_shape(text: &str) -> bool {
    text.split('.').all(is_label_shape)
}

/// `validation.IsDNS1123Label`: its messages, none when valid.
pub fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push(max_len_error(63, "characters"));
    }
    if !is_label_shape(value) {
        if is_subdomain_shape(value) {
            errors.push("must not contain dots".to_string());
        } else {
            errors.push(regex_error(
                DNS1123_LABEL_ERR,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errors
}

/// `validation.IsDNS1123Subdomain`: its messages, none when valid.
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    subdomain_errors(value, "characters")
}

fn subdomain_errors(value: &str, unit: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 253 {
        errors.push(max_len_error(253, unit));
    }
    if !is_subdomain_shape(value) {
        errors.push(regex_error(
            DNS1123_SUBDOMAIN_ERR,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errors
}

/// `validation.IsDNS1035Label`.
pub fn is_dns1035_label(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push(max_len_error(63, "characters"));
    }
    let b = value.as_bytes();
    if !(is_label_shape(value) && b[0].is_ascii_lowercase()) {
        errors.push(regex_error(
            DNS1035_LABEL_ERR,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errors
}

/// `content.IsPathSegmentName` (the names of RBAC objects).
pub fn is_path_segment_name(value: &str, prefix: bool) -> Vec<String> {
    if !prefix {
        for illegal in [".", ".."] {
            if value == illegal {
                return vec![format!("may not be '{illegal}'")];
            }
        }
    }
    ["/", "%"]
        .iter()
        .filter(|illegal| value.contains(*illegal))
        .map(|illegal| format!("may not contain '{illegal}'"))
        .collect()
}

fn is_label_key_char(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

/// Whether `text` matches `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
fn is_label_name_shape(text: &str) -> bool {
    let b = text.as_bytes();
    !b.is_empty()
        && is_label_key_char(b[0])
        && is_label_key_char(b[b.len() - 1])
        && b.iter()
            .all(|&c| is_label_key_char(c) || matches!(c, b'-' | b'_' | b'.'))
}

/// The unit of the label rules' length messages for Kubernetes 1.`minor`.
fn label_unit(minor: u32) -> &'static str {
    if minor >= 35 { "bytes" } else { "characters" }
}

/// `IsQualifiedName` (a label key, an annotation key): its messages.
pub fn is_qualified_name(value: &str, minor: u32) -> Vec<String> {
    let unit = label_unit(minor);
    let mut errors = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errors.push("prefix part must be non-empty".to_string());
            } else {
                errors.extend(
                    subdomain_errors(prefix, unit)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            errors.push(format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(LABEL_KEY_ERR, LABEL_KEY_FMT, &["MyName", "my.name", "123-abc"])
            ));
            return errors;
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errors.push(format!("name part {}", max_len_error(63, unit)));
    }
    if !is_label_name_shape(name) {
        errors.push(format!(
            "name part {}",
            regex_error(LABEL_KEY_ERR, LABEL_KEY_FMT, &["MyName", "my.name", "123-abc"])
        ));
    }
    errors
}

/// `IsValidLabelValue`: its messages.
pub fn is_label_value(value: &str, minor: u32) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push(max_len_error(63, label_unit(minor)));
    }
    if !(value.is_empty() || is_label_name_shape(value)) {
        errors.push(regex_error(
            LABEL_VALUE_ERR,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errors
}

/// How a kind's names are checked (the `ValidateNameFunc` its registry strategy uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// `NameIsDNSSubdomain`: most kinds, and every custom resource.
    Subdomain,
    /// `NameIsDNSLabel`: Namespace.
    Label,
    /// `NameIsDNS1035Label`: Service.
    Dns1035,
    /// `ValidatePathSegmentName`: the RBAC kinds.
    PathSegment,
}

impl NameRule {
    /// The rule of `kind` in API group `group`.
    pub fn of(group: &str, kind: &str) -> NameRule {
        match (group, kind) {
            ("", "Namespace") => NameRule::Label,
            ("", "Service") => NameRule::Dns1035,
            ("rbac.authorization.k8s.io", "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding") => {
                NameRule::PathSegment
            }
            _ => NameRule::Subdomain,
        }
    }

    /// The messages of `name` (a `generateName` prefix when `prefix`).
    pub fn check(self, name: &str, prefix: bool) -> Vec<String> {
        // `maskTrailingDash`: a prefix may end with `-` (its last two bytes become `a`). Go cuts
        // bytes: a character cut in two leaves bytes no name pattern allows, written here as the
        // same number of `_`, which no pattern masked here allows either: lengths and messages
        // stay Go's.
        let masked;
        let name = if prefix && self != NameRule::PathSegment && name.len() > 1 && name.ends_with('-') {
            let cut = name.len() - 2;
            let whole = (0..=cut).rev().find(|&i| name.is_char_boundary(i)).unwrap_or(0);
            masked = format!("{}{}a", &name[..whole], "_".repeat(cut - whole));
            masked.as_str()
        } else {
            name
        };
        match self {
            NameRule::Subdomain => is_dns1123_subdomain(name),
            NameRule::Label => is_dns1123_label(name),
            NameRule::Dns1035 => is_dns1035_label(name),
            NameRule::PathSegment => is_path_segment_name(name, prefix),
        }
    }
}

/// Validates `metadata` (the object's) for a kind whose names follow `rule`, for Kubernetes
/// 1.`minor`: the field errors `ValidateObjectMetaAccessor` gives, in its order (generateName,
/// name, namespace, labels, annotations); label and annotation keys in key order. A `name` the
/// request gives (a manifest without one, named by its request) counts as the object's.
pub fn validate(
    metadata: Option<&Node<'_>>,
    request_name: Option<&str>,
    rule: NameRule,
    minor: u32,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let field = |key: &str| metadata.and_then(|m| m.get(key));
    let text = |key: &str| field(key).and_then(Node::as_str).unwrap_or_default();
    let generate_name = text("generateName");
    if !generate_name.is_empty() {
        for message in rule.check(generate_name, true) {
            errors.push(FieldError::invalid(
                "metadata.generateName",
                BadValue::Str(generate_name.to_string()),
                message,
            ));
        }
    }
    let name = match text("name") {
        "" => request_name.unwrap_or_default(),
        name => name,
    };
    if name.is_empty() {
        if generate_name.is_empty() {
            errors.push(FieldError::required(
                "metadata.name",
                "name or generateName is required",
            ));
        }
    } else {
        for message in rule.check(name, false) {
            errors.push(FieldError::invalid(
                "metadata.name",
                BadValue::Str(name.to_string()),
                message,
            ));
        }
    }
    let namespace = text("namespace");
    if !namespace.is_empty() {
        for message in is_dns1123_label(namespace) {
            errors.push(FieldError::invalid(
                "metadata.namespace",
                BadValue::Str(namespace.to_string()),
                message,
            ));
        }
    }
    if let Some(labels) = field("labels").filter(|l| matches!(l, Node::Object(_))) {
        for (key, value) in Members::of_node(labels).iter() {
            for message in is_qualified_name(key, minor) {
                errors.push(FieldError::invalid(
                    "metadata.labels",
                    BadValue::Str(key.to_string()),
                    message,
                ));
            }
            let value = value.as_str().unwrap_or_default();
            for message in is_label_value(value, minor) {
                errors.push(FieldError::invalid(
                    "metadata.labels",
                    BadValue::Str(value.to_string()),
                    message,
                ));
            }
        }
    }
    if let Some(annotations) = field("annotations").filter(|a| matches!(a, Node::Object(_))) {
        let members = Members::of_node(annotations);
        let mut total: i64 = 0;
        for (key, value) in members.iter() {
            for message in is_qualified_name(&key.to_lowercase(), minor) {
                errors.push(FieldError::invalid(
                    "metadata.annotations",
                    BadValue::Str(key.to_string()),
                    message,
                ));
            }
            total += key.len() as i64 + value.as_str().map_or(0, str::len) as i64;
        }
        if total > TOTAL_ANNOTATION_SIZE_LIMIT {
            errors.push(FieldError::too_long(
                "metadata.annotations",
                TOTAL_ANNOTATION_SIZE_LIMIT,
            ));
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{self, Everything};

    fn errors(metadata: &str, rule: NameRule, minor: u32) -> Vec<String> {
        let node = json::read(metadata, Everything, 16).unwrap();
        validate(Some(&node), None, rule, minor)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_prefix_cut_inside_a_character_is_judged_as_go_judges_its_bytes() {
        // `maskTrailingDash` cuts "é-" (bytes c3 a9 2d) to "\xc3a": two bytes the pattern refuses.
        let subdomain = NameRule::Subdomain.check("é-", true);
        assert_eq!(subdomain, is_dns1123_subdomain("_a"));
        assert!(!subdomain.is_empty());
        assert_eq!(NameRule::Label.check("ab-", true), Vec::<String>::new());
        assert_eq!(NameRule::Dns1035.check("xé-", true), is_dns1035_label("x_a"));
    }

    #[test]
    fn names() {
        // kubectl-validate testcases/manifests/error_invalid_name.yaml.
        assert_eq!(
            errors(r#"{"name":"x.com^2"}"#, NameRule::Subdomain, 35),
            [
                r#"metadata.name: Invalid value: "x.com^2": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#
            ]
        );
        // testcases/manifests/error_name_exceeds_max_length.yaml.
        let long = "thisisaveryveryveryveryveryveryverylongname".repeat(6);
        assert_eq!(
            errors(&format!(r#"{{"name":"{long}"}}"#), NameRule::Subdomain, 35),
            [format!(
                r#"metadata.name: Invalid value: "{long}": must be no more than 253 characters"#
            )]
        );
        // testcases/manifests/error_missing_name.yaml.
        assert_eq!(
            errors("{}", NameRule::Subdomain, 35),
            ["metadata.name: Required value: name or generateName is required"]
        );
        assert!(errors(r#"{"generateName":"web-"}"#, NameRule::Subdomain, 35).is_empty());
        assert_eq!(errors(r#"{"generateName":"Web-"}"#, NameRule::Subdomain, 35).len(), 1);
        assert_eq!(
            errors(r#"{"name":"a.b"}"#, NameRule::Label, 35),
            [r#"metadata.name: Invalid value: "a.b": must not contain dots"#]
        );
        assert_eq!(errors(r#"{"name":"1abc"}"#, NameRule::Dns1035, 35).len(), 1);
        assert!(errors(r#"{"name":"system:controller:x"}"#, NameRule::PathSegment, 35).is_empty());
        assert_eq!(
            errors(r#"{"name":"a/b"}"#, NameRule::PathSegment, 35),
            [r#"metadata.name: Invalid value: "a/b": may not contain '/'"#]
        );
    }

    #[test]
    fn labels() {
        // kubectl-validate testcases/manifests/error_invalid_label.yaml.
        assert_eq!(
            errors(r#"{"name":"x","labels":{"owner":"_"}}"#, NameRule::Subdomain, 35),
            [
                r#"metadata.labels: Invalid value: "_": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"#
            ]
        );
        assert!(
            errors(
                r#"{"name":"x","labels":{"app.kubernetes.io/name":"web","empty":""}}"#,
                NameRule::Subdomain,
                35
            )
            .is_empty()
        );
        let long = "a".repeat(64);
        assert_eq!(
            errors(
                &format!(r#"{{"name":"x","labels":{{"k":"{long}"}}}}"#),
                NameRule::Subdomain,
                35
            ),
            [format!(
                r#"metadata.labels: Invalid value: "{long}": must be no more than 63 bytes"#
            )]
        );
        assert_eq!(
            errors(
                &format!(r#"{{"name":"x","labels":{{"k":"{long}"}}}}"#),
                NameRule::Subdomain,
                34
            ),
            [format!(
                r#"metadata.labels: Invalid value: "{long}": must be no more than 63 characters"#
            )]
        );
        assert_eq!(
            errors(r#"{"name":"x","labels":{"/a":"b"}}"#, NameRule::Subdomain, 35),
            [r#"metadata.labels: Invalid value: "/a": prefix part must be non-empty"#]
        );
        assert_eq!(
            errors(r#"{"name":"x","labels":{"a/b/c":"d"}}"#, NameRule::Subdomain, 35).len(),
            1
        );
    }

    #[test]
    fn annotations() {
        assert!(
            errors(
                r#"{"name":"x","annotations":{"Example.com/Note":"anything at all"}}"#,
                NameRule::Subdomain,
                35
            )
            .is_empty()
        );
        assert_eq!(
            errors(r#"{"name":"x","annotations":{"bad key":"v"}}"#, NameRule::Subdomain, 35).len(),
            1
        );
        let big = "x".repeat(300 * 1024);
        assert_eq!(
            errors(
                &format!(r#"{{"name":"x","annotations":{{"a":"{big}"}}}}"#),
                NameRule::Subdomain,
                35
            ),
            ["metadata.annotations: Too long: may not be more than 262144 bytes"]
        );
    }
}
