//! A CustomResourceDefinition's CEL rules (`x-kubernetes-validations`) judged at the CRD, as
//! `ValidateCustomResourceDefinitionOpenAPISchema` (apiextensions-apiserver
//! `pkg/apis/apiextensions/validation/validation.go`) judges them; [`super::crd`] calls it where
//! validation.go does.
//!
//! - [`keywords`], each rule's own keywords, among a schema's errors after its list and map
//!   keywords (`SchemaErrors`): an empty `rule` ("rule is not specified"), else a `message` only
//!   of whitespace, with a line break, or missing beside a `rule` with one; a `messageExpression`
//!   only of whitespace; a `reason` none of `FieldValueDuplicate`, `FieldValueForbidden`,
//!   `FieldValueInvalid` and `FieldValueRequired`; a `fieldPath` only of whitespace, with a line
//!   break, or that does not name a field of the schema (`pathValid`, `ValidFieldPath` of
//!   `pkg/apiserver/schema/cel/validation.go`, ported here over the schema as written);
//! - [`compilation`], the rules compiled (`CELErrors`, after every schema error of the
//!   `openAPIV3Schema`, a node's after those of the nodes it holds): only when the structural
//!   schema and its defaults have no error (`celContext`), and at a node only when it and the
//!   nodes it holds have no schema error. For each rule, in validation.go's order: a compile error
//!   (`compilation failed: ERROR: <input>:1:5: undefined field 'b'` and the other errors of
//!   [`super::cel::check`], "cel expression must evaluate to a bool"), said only where cel-go's
//!   words are certain ([`check::Failure`]); then its `messageExpression`'s; then a rule reading
//!   `oldSelf` under a list that is not a `map` list or a map whose `x-kubernetes-map-type` is
//!   neither `granular` nor `atomic` ("oldSelf cannot be used on the uncorrelatable portion of
//!   the schema within <the list>"), or an `optionalOldSelf` beside a rule that does not read it
//!   (a rule that does not compile does not). A rule the old CRD of an update already had
//!   compiles with every library (`StoredExpressionsEnv`), a new one with the configured
//!   Kubernetes minor's.
//!
//! The value printed for a compile error is the internal `ValidationRule`'s JSON
//! ([`check::rule_json`]). Each message is checked against kubectl-validate (Kubernetes 1.35) on
//! the CRDs of the tests.

use super::cel::{LATEST, check, estimate};
use super::field_error::{BadValue, FieldError};
use super::schema::{Additional, Schema, View};
use crate::json::Node;
use std::cell::Cell;

/// The reasons a rule may give (`supportedValidationReason`), sorted as `sets.String.List` gives.
const REASONS: [&str; 4] = [
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// Whether `s` holds a line break (`hasNewlines`: `[\n\r]+`).
fn has_newlines(s: &str) -> bool {
    s.contains(['\n', '\r'])
}

/// The `x-kubernetes-validations` of a schema, when it is a list.
fn validations<'n, 'j>(schema: &'n Node<'j>) -> &'n [Node<'j>] {
    match schema.get("x-kubernetes-validations") {
        Some(Node::Array(rules)) => rules,
        _ => &[],
    }
}

/// A string member of a rule: `Some("")` when absent or `null`, none when it is not a string
/// (the API server would not decode the CRD: nothing is said of that rule).
fn member<'n>(rule: &'n Node<'_>, key: &str) -> Option<&'n str> {
    match rule.get(key) {
        None | Some(Node::Null) => Some(""),
        Some(value) => value.as_str(),
    }
}

/// An error at `<path>.x-kubernetes-validations[i].<key>`, located at the same steps under `at`.
fn at_rule(mut error: FieldError, at: &str, i: usize, key: &str) -> FieldError {
    error.at = format!("{at}.x-kubernetes-validations[{i}].{key}");
    error
}

/// The path of a rule's member as the API server names it.
fn rule_path(path: &str, i: usize, key: &str) -> String {
    format!("{path}.x-kubernetes-validations[{i}].{key}")
}

/// The rules' own keywords of one schema (at `path` as the API server names it, `at` in the
/// manifest), in validation.go's order.
pub(super) fn keywords(schema: &Node<'_>, path: &str, at: &str, errors: &mut Vec<FieldError>) {
    for (i, rule) in validations(schema).iter().enumerate() {
        let (Some(source), Some(message), Some(message_expression), Some(field_path)) = (
            member(rule, "rule"),
            member(rule, "message"),
            member(rule, "messageExpression"),
            member(rule, "fieldPath"),
        ) else {
            continue;
        };
        let mut push = |error: FieldError, key: &str| errors.push(at_rule(error, at, i, key));
        let trimmed_rule = source.trim();
        let trimmed_message = message.trim();
        if trimmed_rule.is_empty() {
            push(
                FieldError::required(rule_path(path, i, "rule"), "rule is not specified"),
                "rule",
            );
        } else if !message.is_empty() && trimmed_message.is_empty() {
            push(
                FieldError::invalid(
                    rule_path(path, i, "message"),
                    BadValue::Str(message.to_owned()),
                    "must be non-empty if specified",
                ),
                "message",
            );
        } else if has_newlines(trimmed_message) {
            push(
                FieldError::invalid(
                    rule_path(path, i, "message"),
                    BadValue::Str(message.to_owned()),
                    "must not contain line breaks",
                ),
                "message",
            );
        } else if has_newlines(trimmed_rule) && trimmed_message.is_empty() {
            push(
                FieldError::required(
                    rule_path(path, i, "message"),
                    "message must be specified if rule contains line breaks",
                ),
                "message",
            );
        }
        if !message_expression.is_empty() && message_expression.trim().is_empty() {
            push(
                FieldError::required(
                    rule_path(path, i, "messageExpression"),
                    "messageExpression must be non-empty if specified",
                ),
                "messageExpression",
            );
        }
        if let Some(reason) = rule.get("reason").and_then(Node::as_str)
            && !REASONS.contains(&reason)
        {
            let valid: Vec<String> = REASONS.iter().map(|r| r.to_string()).collect();
            push(
                FieldError::not_supported(rule_path(path, i, "reason"), BadValue::Str(reason.to_owned()), &valid),
                "reason",
            );
        }
        let invalid_path = |detail: &str| {
            FieldError::invalid(
                rule_path(path, i, "fieldPath"),
                BadValue::Str(field_path.to_owned()),
                detail,
            )
        };
        if !field_path.is_empty() && field_path.trim().is_empty() {
            push(invalid_path("must be non-empty if specified"), "fieldPath");
        }
        if has_newlines(field_path) {
            push(invalid_path("must not contain line breaks"), "fieldPath");
        }
        if !field_path.is_empty() && super::crd::converts(schema) && path_valid(schema, field_path) == Some(false) {
            push(invalid_path("must be a valid path"), "fieldPath");
        }
    }
}

/// The tokens of a JSON path as `ValidFieldPath`'s scanner splits it: `.`, `[` and `]` alone, a
/// single-quoted string (to its first unescaped quote, or the end), and the text between.
fn tokens(path: &str) -> Vec<&str> {
    let bytes = path.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let data = &bytes[start..];
        let mut len = data.len();
        if data[0] == b'\'' {
            if let Some(end) = (1..data.len()).find(|&i| data[i] == b'\'' && data[i - 1] != b'\\') {
                len = end + 1;
            }
        } else if let Some(i) = data.iter().position(|b| matches!(b, b'.' | b'[' | b']')) {
            len = if i == 0 { 1 } else { i };
        }
        out.push(&path[start..start + len]);
        start += len;
    }
    out
}

/// `pathValid`: whether `path` names a field of `schema` (`ValidFieldPath`); none when the API
/// server's walk would step into an `additionalProperties: true` (a nil schema) and not answer.
fn path_valid(schema: &Node<'_>, path: &str) -> Option<bool> {
    let mut current: Option<&Node<'_>> = Some(schema);
    let mut tokens = tokens(path).into_iter();
    while let Some(token) = tokens.next() {
        let name = match token {
            "[" => {
                let Some(quoted) = tokens.next() else {
                    return Some(false);
                };
                if quoted.len() < 2 || !quoted.starts_with('\'') || !quoted.ends_with('\'') {
                    return Some(false);
                }
                let Some(name) = unescape_single_quote(&quoted[1..quoted.len() - 1]) else {
                    return Some(false);
                };
                match step(current, &name)? {
                    Ok(next) => current = next,
                    Err(()) => return Some(false),
                }
                if tokens.next() != Some("]") {
                    return Some(false);
                }
                continue;
            }
            "." => match tokens.next() {
                Some(name) => name.to_owned(),
                None => return Some(false),
            },
            _ => return Some(false),
        };
        match step(current, &name)? {
            Ok(next) => current = next,
            Err(()) => return Some(false),
        }
    }
    Some(true)
}

/// One step of `ValidFieldPath` to `name`: by property when the schema has properties, else into
/// `additionalProperties` (a nil schema for `additionalProperties: true`); `Err` when there is
/// no such field, none when the API server's walk would read a nil schema.
#[allow(clippy::type_complexity)]
fn step<'n, 'j>(current: Option<&'n Node<'j>>, name: &str) -> Option<Result<Option<&'n Node<'j>>, ()>> {
    let schema = current?;
    match schema.get("properties").and_then(Node::as_object) {
        Some(properties) if !properties.is_empty() => Some(
            properties
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, s)| Some(s))
                .ok_or(()),
        ),
        _ => match schema.get("additionalProperties") {
            None | Some(Node::Null) => Some(Err(())),
            Some(value @ Node::Object(_)) => Some(Ok(Some(value))),
            Some(_) => Some(Ok(None)),
        },
    }
}

/// `unescapeSingleQuote`: Go's `strconv.Unquote` of the text in single quotes, none when it
/// refuses it. Only the escapes a one-character quoted string may hold are read; anything else
/// (a multi-character string is not a rune literal) is refused as Go refuses it.
fn unescape_single_quote(s: &str) -> Option<String> {
    let mut chars = s.chars();
    let c = chars.next()?;
    let out = if c == '\\' {
        super::cel::check::simple_escape(chars.next()?)?
    } else if c == '\'' || c == '\n' {
        return None;
    } else {
        c
    };
    chars.next().is_none().then(|| out.to_string())
}

/// How the compile step meets one `openAPIV3Schema`.
pub(super) struct Compilation<'a> {
    /// The Kubernetes minor whose libraries a new rule may call.
    pub minor: u32,
    /// The rules and message expressions of the old CRD of an update (compiled with every
    /// library).
    pub preexisting: &'a [String],
    /// The schema errors of the `openAPIV3Schema` (`SchemaErrors`): a node with one at or under
    /// it is not compiled.
    pub schema_errors: &'a [FieldError],
    /// The version's schema is the old CRD's (`suppressPerExpressionCost`): a rule's cost is not
    /// held to the limit.
    pub unchanged: bool,
}

/// The rules' compile errors of `schema` (at `path` as the API server names it, `at` in the
/// manifest), when its structural schema and defaults have no error.
pub(super) fn compilation(schema: &Node<'_>, path: &str, at: &str, how: &Compilation<'_>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if !has_rules(schema) {
        return errors;
    }
    let Ok(compiled) = Schema::compile(schema, None, how.minor) else {
        return errors;
    };
    let node = NodeAt {
        schema,
        index: Some(compiled.root),
        path,
        at,
        root: true,
        uncorrelatable: None,
        cardinality: Some(1),
    };
    let total = Cell::new(0u64);
    node.compile(&compiled, how, &total, &mut errors);
    // `StaticEstimatedCRDCostLimit`, said only where the API server's factor is "more than 100x"
    // whatever its exact total above this bound; the rules it names as the most expensive are
    // not said (their exact costs are not known here).
    if total.get() > 100 * STATIC_ESTIMATED_CRD_COST_LIMIT {
        let mut error = FieldError::forbidden(
            path,
            "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
        );
        error.at = at.to_owned();
        errors.push(error);
    }
    errors
}

/// `StaticEstimatedCRDCostLimit`: the largest estimated cost of all the rules of a schema.
const STATIC_ESTIMATED_CRD_COST_LIMIT: u64 = 100_000_000;

/// Whether a schema holds a rule anywhere.
fn has_rules(schema: &Node<'_>) -> bool {
    match schema {
        Node::Object(entries) => entries
            .iter()
            .any(|(key, value)| key == "x-kubernetes-validations" || has_rules(value)),
        Node::Array(items) => items.iter().any(has_rules),
        _ => false,
    }
}

/// One schema node on the compile step's walk.
struct NodeAt<'n, 'j, 'p> {
    schema: &'n Node<'j>,
    /// The node in the compiled schema, none where it did not follow.
    index: Option<usize>,
    path: &'p str,
    at: &'p str,
    root: bool,
    /// The highest list or map above that old and new values do not correlate through.
    uncorrelatable: Option<&'p str>,
    /// How many times the node's rules may run (`MaxCardinality`), none when a list or map above
    /// is unbounded.
    cardinality: Option<u64>,
}

impl NodeAt<'_, '_, '_> {
    /// The node's own and its children's compile errors, theirs first.
    fn compile(&self, compiled: &Schema, how: &Compilation<'_>, total: &Cell<u64>, errors: &mut Vec<FieldError>) {
        let node = self.index.map(|index| compiled.resolved(index));
        let child = |schema: Option<&Node<'_>>,
                     index: Option<usize>,
                     step: &str,
                     uncorrelatable: Option<&str>,
                     errors: &mut Vec<FieldError>| {
            let (path, at) = (format!("{}{step}", self.path), format!("{}{step}", self.at));
            if let Some(schema) = schema.filter(|s| matches!(s, Node::Object(_))) {
                NodeAt {
                    schema,
                    index,
                    path: &path,
                    at: &at,
                    root: false,
                    uncorrelatable,
                    cardinality: self
                        .cardinality
                        .zip(estimate::max_children(self.schema))
                        .map(|(above, here)| above.saturating_mul(here)),
                }
                .compile(compiled, how, total, errors);
            }
        };
        let additional = node.and_then(|n| match n.additional_properties {
            Additional::Schema(index) => Some(index),
            _ => None,
        });
        child(
            self.schema.get("additionalProperties"),
            additional,
            ".additionalProperties",
            self.uncorrelatable,
            errors,
        );
        let correlatable_map = matches!(
            self.schema.get("x-kubernetes-map-type").and_then(Node::as_str),
            None | Some("granular" | "atomic")
        ) || self.schema.get("x-kubernetes-map-type").is_some_and(Node::is_null);
        if let Some(properties) = self.schema.get("properties").and_then(Node::as_object) {
            for (key, value) in properties {
                let index = node.and_then(|n| n.property(key));
                let uncorrelatable = self.uncorrelatable.or((!correlatable_map).then_some(self.path));
                child(
                    Some(value),
                    index,
                    &format!(".properties[{key}]"),
                    uncorrelatable,
                    errors,
                );
            }
        }
        let map_list = self.schema.get("x-kubernetes-list-type").and_then(Node::as_str) == Some("map");
        let uncorrelatable = self.uncorrelatable.or((!map_list).then_some(self.path));
        child(
            self.schema.get("items"),
            node.and_then(|n| n.items),
            ".items",
            uncorrelatable,
            errors,
        );
        let rules = validations(self.schema);
        let (Some(index), false) = (self.index, rules.is_empty()) else {
            return;
        };
        let prefix = self.path;
        let under = |field: &str| {
            field
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
        };
        if how.schema_errors.iter().any(|e| under(&e.field)) {
            return;
        }
        let view = View::new(compiled, index, self.root);
        for (i, rule) in rules.iter().enumerate() {
            self.rule(view, i, rule, how, total, errors);
        }
    }

    /// One rule's compile errors.
    fn rule(
        &self,
        view: View<'_>,
        i: usize,
        rule: &Node<'_>,
        how: &Compilation<'_>,
        total: &Cell<u64>,
        errors: &mut Vec<FieldError>,
    ) {
        let (Some(source), Some(message_expression)) = (member(rule, "rule"), member(rule, "messageExpression")) else {
            return;
        };
        let minor = |expression: &str| {
            if how.preexisting.iter().any(|e| e == expression) {
                LATEST
            } else {
                how.minor
            }
        };
        let shown = || BadValue::Json(check::rule_json(rule));
        let mut push = |error: FieldError, key: &str| errors.push(at_rule(error, self.at, i, key));
        let optional_old_self = rule.get("optionalOldSelf").and_then(Node::as_bool);
        let uses_old_self = match check::compile_judged(source, view, check::Want::Bool, minor(source)) {
            Err(failure) if failure.certain => {
                push(
                    FieldError::invalid(rule_path(self.path, i, "rule"), shown(), failure.detail),
                    "rule",
                );
                false
            }
            // Not known here for certain: nothing is said of the rule.
            Err(_) => return,
            Ok(program) => {
                let runs = self
                    .cardinality
                    .unwrap_or_else(|| estimate::unbounded_cardinality(self.schema));
                let cost = estimate::lower_bound(&program, self.schema).saturating_mul(runs);
                total.set(total.get().saturating_add(cost));
                if !how.unchanged {
                    // Only where the API server's factor is "more than 100x" whatever its exact
                    // estimate above this bound.
                    if cost > 100 * estimate::STATIC_ESTIMATED_COST_LIMIT {
                        push(
                            FieldError::forbidden(
                                rule_path(self.path, i, "rule"),
                                "estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
                            ),
                            "rule",
                        );
                    }
                }
                if !message_expression.is_empty() {
                    match check::compile_judged(
                        message_expression,
                        view,
                        check::Want::String,
                        minor(message_expression),
                    ) {
                        Err(failure) if failure.certain => push(
                            FieldError::invalid(
                                rule_path(self.path, i, "messageExpression"),
                                shown(),
                                format!("messageExpression {}", failure.detail),
                            ),
                            "messageExpression",
                        ),
                        _ => {}
                    }
                }
                program.references().has_variable("oldSelf")
            }
        };
        if uses_old_self {
            if let Some(within) = self.uncorrelatable {
                push(
                    FieldError::invalid(
                        rule_path(self.path, i, "rule"),
                        BadValue::Str(source.to_owned()),
                        format!("oldSelf cannot be used on the uncorrelatable portion of the schema within {within}"),
                    ),
                    "rule",
                );
            }
        } else if let Some(optional) = optional_old_self {
            push(
                FieldError::invalid(
                    rule_path(self.path, i, "optionalOldSelf"),
                    BadValue::Bool(optional),
                    "may not be set if oldSelf is not used in rule",
                ),
                "optionalOldSelf",
            );
        }
    }
}

/// The rules and message expressions of every schema of `crd` (`findPreexistingExpressions`).
pub(super) fn expressions(crd: &Node<'_>) -> Vec<String> {
    fn collect(schema: &Node<'_>, out: &mut Vec<String>) {
        match schema {
            Node::Object(entries) => {
                for rule in validations(schema) {
                    for key in ["rule", "messageExpression"] {
                        if let Some(text) = rule.get(key).and_then(Node::as_str).filter(|t| !t.is_empty()) {
                            out.push(text.to_owned());
                        }
                    }
                }
                for (key, value) in entries {
                    if key != "x-kubernetes-validations" {
                        collect(value, out);
                    }
                }
            }
            Node::Array(items) => items.iter().for_each(|item| collect(item, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Some(Node::Array(versions)) = crd.at(&["spec", "versions"]) {
        for version in versions {
            if let Some(schema) = version.at(&["schema", "openAPIV3Schema"]) {
                collect(schema, &mut out);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::checks::object_validation::{NEWEST_MINOR, crd};
    use crate::json;

    /// A one-version CRD whose `openAPIV3Schema` is `schema` (JSON).
    fn wrap(schema: &str) -> String {
        format!(r#"{{"spec":{{"versions":[{{"name":"v1","schema":{{"openAPIV3Schema":{schema}}}}}]}}}}"#)
    }

    /// The errors of a one-version CRD whose `openAPIV3Schema` is `schema` (JSON), as text,
    /// holding each to be located at the same steps in the manifest.
    fn errors(schema: &str) -> Vec<String> {
        let crd = wrap(schema);
        let crd = json::read(&crd, json::Everything, usize::MAX).unwrap();
        crd::validate(&crd, None, NEWEST_MINOR)
            .into_iter()
            .map(|error| {
                let steps = error.field.strip_prefix("spec.validation.openAPIV3Schema").unwrap();
                assert_eq!(error.at, format!("spec.versions[0].schema.openAPIV3Schema{steps}"));
                error.to_string()
            })
            .collect()
    }

    const SPEC: &str = "spec.validation.openAPIV3Schema.properties[spec]";

    /// A rule without other keywords as the compile errors print it, and the rest of the error.
    fn shown(rule: &str, rest: &str) -> String {
        format!(
            r#"{{"Rule":"{rule}","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}}{rest}"#
        )
    }

    #[test]
    fn each_rules_keywords_are_checked_in_validation_gos_order() {
        // kubectl-validate (Kubernetes 1.35) on this schema gives these errors (`other`'s after
        // `spec`'s: Go walks the properties in random order).
        let schema = r#"{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[
            {"rule":"  "},{"rule":"self.a == 1","message":"  "},{"rule":"self.a == 1","message":"one\ntwo"},
            {"rule":"self.a == 1 &&\n true"},{"rule":"self.a == 1","messageExpression":" ","reason":"FieldValueTooLong"},
            {"rule":"self.a == 1","fieldPath":" "},{"rule":"self.a == 1","fieldPath":".a\n"},
            {"rule":"self.a == 1","fieldPath":".b"},{"rule":"self.a == 1","fieldPath":"a"},
            {"rule":"self.a == 1","fieldPath":".m['k'].x"},{"rule":"self.a == 1","fieldPath":"['m'].k"},
            {"rule":"self.a == 1","fieldPath":".free.anything"},{"rule":"self.a == 1","fieldPath":".m.k.y"}],
          "properties":{"a":{"type":"integer"},
            "m":{"type":"object","additionalProperties":{"type":"object","properties":{"x":{"type":"string"}}}},
            "free":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"additionalProperties":true}}},
          "other":{"type":"object","x-kubernetes-validations":[{"rule":"self.zz == 1"}],
            "properties":{"inner":{"type":"object","x-kubernetes-validations":[{"rule":"self.q == 1","reason":"Bad"}],
              "properties":{"q":{"type":"integer"}}}}}}}"#;
        let reasons = r#"supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired""#;
        let rule = |i: usize| format!("{SPEC}.x-kubernetes-validations[{i}]");
        assert_eq!(
            errors(schema),
            [
                format!("{}.rule: Required value: rule is not specified", rule(0)),
                format!(
                    r#"{}.message: Invalid value: "  ": must be non-empty if specified"#,
                    rule(1)
                ),
                format!(
                    r#"{}.message: Invalid value: "one\ntwo": must not contain line breaks"#,
                    rule(2)
                ),
                format!(
                    "{}.message: Required value: message must be specified if rule contains line breaks",
                    rule(3)
                ),
                format!(
                    "{}.messageExpression: Required value: messageExpression must be non-empty if specified",
                    rule(4)
                ),
                format!(
                    r#"{}.reason: Unsupported value: "FieldValueTooLong": {reasons}"#,
                    rule(4)
                ),
                format!(
                    r#"{}.fieldPath: Invalid value: " ": must be non-empty if specified"#,
                    rule(5)
                ),
                format!(r#"{}.fieldPath: Invalid value: " ": must be a valid path"#, rule(5)),
                format!(
                    r#"{}.fieldPath: Invalid value: ".a\n": must not contain line breaks"#,
                    rule(6)
                ),
                format!(r#"{}.fieldPath: Invalid value: ".a\n": must be a valid path"#, rule(6)),
                format!(r#"{}.fieldPath: Invalid value: ".b": must be a valid path"#, rule(7)),
                format!(r#"{}.fieldPath: Invalid value: "a": must be a valid path"#, rule(8)),
                format!(
                    r#"{}.fieldPath: Invalid value: ".m.k.y": must be a valid path"#,
                    rule(12)
                ),
                // `other`'s rule does not compile, but a schema error under it stops its
                // compilation.
                format!(
                    r#"spec.validation.openAPIV3Schema.properties[other].properties[inner].x-kubernetes-validations[0].reason: Unsupported value: "Bad": {reasons}"#
                ),
            ]
        );
    }

    #[test]
    fn compile_errors_old_self_and_optional_old_self_come_after_the_schema_errors() {
        // kubectl-validate (Kubernetes 1.35) gives these, the items' before `spec`'s own.
        let schema = r#"{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[
            {"rule":"self.b == 1 && self.a < 5","message":"a < b & c"},{"rule":"self.a == 1","optionalOldSelf":true},
            {"rule":"self.a == 1","messageExpression":"1","reason":"FieldValueInvalid","fieldPath":".a"}],
          "properties":{"a":{"type":"integer"},"l":{"type":"array","maxItems":10,"items":{"type":"object",
            "properties":{"x":{"type":"string","maxLength":10}},"x-kubernetes-validations":[{"rule":"self.x == oldSelf.x"}]}}}}}}"#;
        assert_eq!(
            errors(schema),
            [
                format!(
                    r#"{SPEC}.properties[l].items.x-kubernetes-validations[0].rule: Invalid value: "self.x == oldSelf.x": oldSelf cannot be used on the uncorrelatable portion of the schema within {SPEC}.properties[l]"#
                ),
                format!(
                    r#"{SPEC}.x-kubernetes-validations[0].rule: Invalid value: {{"Rule":"self.b == 1 \u0026\u0026 self.a \u003c 5","Message":"a \u003c b \u0026 c","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}}: compilation failed: ERROR: <input>:1:5: undefined field 'b'
 | self.b == 1 && self.a < 5
 | ....^"#
                ),
                format!(
                    "{SPEC}.x-kubernetes-validations[1].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule"
                ),
                format!(
                    r#"{SPEC}.x-kubernetes-validations[2].messageExpression: Invalid value: {{"Rule":"self.a == 1","Message":"","MessageExpression":"1","Reason":"FieldValueInvalid","FieldPath":".a","OptionalOldSelf":null}}: messageExpression must evaluate to a string"#
                ),
            ]
        );
        // Fixed (and accepted by kubectl-validate): nothing.
        let fixed = schema
            .replace("self.b == 1 && ", "")
            .replace(r#","optionalOldSelf":true"#, "")
            .replace(r#""messageExpression":"1""#, r#""messageExpression":"'a is wrong'""#)
            .replace(
                r#""type":"array","maxItems":10"#,
                r#""type":"array","maxItems":10,"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["x"]"#,
            )
            .replace(r#""maxLength":10}}"#, r#""maxLength":10}},"required":["x"]"#);
        assert_eq!(errors(&fixed), Vec::<String>::new());
    }

    #[test]
    fn old_self_is_refused_under_an_uncorrelatable_map_and_optional_old_self_without_it() {
        // kubectl-validate (Kubernetes 1.35): a map type none of `granular` and `atomic` is
        // refused, and makes `oldSelf` below it refused too; a map list's items correlate.
        let schema = r#"{"type":"object","properties":{
          "gran":{"type":"object","x-kubernetes-map-type":"weird","properties":{"c":{"type":"object",
            "properties":{"v":{"type":"integer"}},"x-kubernetes-validations":[{"rule":"self.v == oldSelf.v"}]}}},
          "ml":{"type":"array","maxItems":4,"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],
            "items":{"type":"object","required":["k"],"properties":{"k":{"type":"string","maxLength":5}},
              "x-kubernetes-validations":[{"rule":"self.k == oldSelf.k"},{"rule":"self.k == 'a'","optionalOldSelf":false}]}}}}"#;
        let root = "spec.validation.openAPIV3Schema";
        assert_eq!(
            errors(schema),
            [
                format!(
                    r#"{root}.properties[gran].x-kubernetes-map-type: Unsupported value: "weird": supported values: "atomic", "granular""#
                ),
                format!(
                    r#"{root}.properties[gran].properties[c].x-kubernetes-validations[0].rule: Invalid value: "self.v == oldSelf.v": oldSelf cannot be used on the uncorrelatable portion of the schema within {root}.properties[gran]"#
                ),
                format!(
                    "{root}.properties[ml].items.x-kubernetes-validations[1].optionalOldSelf: Invalid value: false: may not be set if oldSelf is not used in rule"
                ),
            ]
        );
    }

    /// A schema whose `spec` (an integer `a`, a string `s`) has `rules`.
    fn with_rules(rules: &[&str]) -> String {
        let rules: Vec<String> = rules
            .iter()
            .map(|rule| {
                format!(
                    r#"{{"rule":{}}}"#,
                    crate::checks::object_validation::field_error::go_quote(rule)
                )
            })
            .collect();
        format!(
            r#"{{"type":"object","properties":{{"spec":{{"type":"object","properties":{{"a":{{"type":"integer"}},"s":{{"type":"string","maxLength":10}}}},"x-kubernetes-validations":[{}]}}}}}}"#,
            rules.join(",")
        )
    }

    #[test]
    fn syntax_errors_are_cel_gos_and_what_is_not_certain_is_not_said() {
        // kubectl-validate (Kubernetes 1.35), word for word.
        let expecting = "expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";
        let cases = [
            (
                "self.a ==",
                format!("ERROR: <input>:1:10: Syntax error: mismatched input '<EOF>' {expecting}\n | self.a ==\n | .........^"),
            ),
            (
                "self.a = 1",
                "ERROR: <input>:1:8: Syntax error: token recognition error at: '= '\n | self.a = 1\n | .......^\nERROR: <input>:1:10: Syntax error: extraneous input '1' expecting <EOF>\n | self.a = 1\n | .........^".to_string(),
            ),
            (
                "has(self)",
                "ERROR: <input>:1:5: invalid argument to has() macro\n | has(self)\n | ....^".to_string(),
            ),
            (
                "self.a.in(1)",
                "ERROR: <input>:1:8: Syntax error: no viable alternative at input '.in'\n | self.a.in(1)\n | .......^".to_string(),
            ),
            (
                "namespace == 1",
                "ERROR: <input>:1:1: reserved identifier: namespace\n | namespace == 1\n | ^".to_string(),
            ),
        ];
        for (rule, detail) in cases {
            assert_eq!(
                errors(&with_rules(&[rule])),
                [format!(
                    "{SPEC}.x-kubernetes-validations[0].rule: Invalid value: {}",
                    shown(rule, &format!(": compilation failed: {detail}"))
                )],
                "{rule}"
            );
        }
        // Rules the API server accepts (kubectl-validate): nothing said.
        let valid = [
            "self.?a.orValue(0) == 0",
            "[?self.?a].size() >= 0",
            r"r'\d' == '\\d'",
            "'''x''' == 'x'",
            "self.a in [1, 2,]",
            "{'a': 1,}.a == 1",
            "0x10 == 16 && 1u == 1u && 1e3 == 1000.0 && .1 == 0.1",
            "self.a == 1 // c",
            "type(1) == int && null == null",
            "self.s.startsWith('x') || self.s.size() < 3",
            // A review's: `has()` is a bool whatever the field; a two-variable comprehension and
            // the lists library's `reverse` compile.
            "has(self.a)",
            "[1, 2].all(i, x, x > 0)",
            "[1, 2].reverse() == [2, 1]",
        ];
        assert_eq!(errors(&with_rules(&valid)), Vec::<String>::new());
        // Refused by the API server, in words not known here for certain: a backquoted field
        // (placed elsewhere), a namespace of functions the library does not have.
        assert_eq!(
            errors(&with_rules(&["self.`a` == 1", "base64.decode('eA==') == b'x'"])),
            Vec::<String>::new()
        );
    }

    #[test]
    fn an_update_compiles_the_old_crds_rules_with_every_library() {
        // `isSemver` is Kubernetes 1.33's: a new rule calling it is refused by an older API
        // server, one the old CRD had is not.
        let schema = with_rules(&["isSemver(self.s)"]);
        let new = wrap(&schema);
        let new = json::read(&new, json::Everything, usize::MAX).unwrap();
        let texts = |old: Option<&json::Node<'_>>| -> Vec<String> {
            crd::validate(&new, old, 32)
                .into_iter()
                .map(|e| e.to_string())
                .collect()
        };
        assert_eq!(
            texts(None),
            [format!(
                "{SPEC}.x-kubernetes-validations[0].rule: Invalid value: {}",
                shown(
                    "isSemver(self.s)",
                    ": compilation failed: ERROR: <input>:1:9: undeclared reference to 'isSemver' (in container '')\n | isSemver(self.s)\n | ........^"
                )
            )]
        );
        let old = wrap(&schema);
        let old = json::read(&old, json::Everything, usize::MAX).unwrap();
        assert_eq!(texts(Some(&old)), Vec::<String>::new());
        assert_eq!(errors(&schema), Vec::<String>::new());
    }

    /// The schema of the cost tests: three rules over unbounded lists and strings, or bounded.
    fn costly(bounded: bool) -> String {
        let (items, length, map_items, inner) = if bounded {
            (
                r#""maxItems":100,"#,
                r#","maxLength":63"#,
                r#""maxItems":100,"#,
                r#""maxItems":10,"#,
            )
        } else {
            ("", "", "", "")
        };
        format!(
            r#"{{"type":"object","properties":{{"spec":{{"type":"object","properties":{{
              "names":{{"type":"array",{items}"items":{{"type":"string"{length}}},
                "x-kubernetes-validations":[{{"rule":"self.all(x, self.exists_one(y, x == y))","message":"names must be unique"}}]}},
              "nested":{{"type":"array",{inner}"items":{{"type":"array",{inner}"items":{{"type":"string"{length}}}}},
                "x-kubernetes-validations":[{{"rule":"self.all(l, l.all(s, s != 'x'))"}}]}},
              "keyed":{{"type":"array",{map_items}"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],
                "items":{{"type":"object","required":["k"],"properties":{{"k":{{"type":"string"{length}}}}},
                  "x-kubernetes-validations":[{{"rule":"self.k == oldSelf.k"}}]}}}}}}}}}}}}"#
        )
    }

    const HINT: &str = "(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)";

    #[test]
    fn a_rule_whose_estimated_cost_is_more_than_100_times_the_limit_is_refused() {
        // kubectl-validate (Kubernetes 1.35) gives these, and names the three rules as
        // contributing to the total (not said here: their exact costs are not known).
        let rule = |at: &str| {
            format!(
                "{SPEC}.{at}.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x {HINT}"
            )
        };
        let total = format!(
            "spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x {HINT}"
        );
        assert_eq!(
            errors(&costly(false)),
            [
                rule("properties[names]"),
                rule("properties[nested]"),
                rule("properties[keyed].items"),
                total.clone()
            ]
        );
        // With maxItems and maxLength, kubectl-validate accepts the CRD.
        assert_eq!(errors(&costly(true)), Vec::<String>::new());
        // An update that leaves the version's schema as it was is not held to the per-rule limit
        // (`suppressPerExpressionCost`), but to the total.
        let crd = wrap(&costly(false));
        let crd = json::read(&crd, json::Everything, usize::MAX).unwrap();
        let texts: Vec<String> = crd::validate(&crd, Some(&crd), NEWEST_MINOR)
            .into_iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(texts, [total]);
    }

    #[test]
    fn a_field_of_an_iteration_variable_is_not_sized() {
        // kubectl-validate 1.35 accepts this CRD: cel-go's estimator, extending `x`'s path in
        // place, sizes the inner loop by `x.s` (a review's case; with `y == 'a'` it says 52.4x).
        let schema = r#"{"type":"object","properties":{"spec":{"type":"object","properties":{
          "L":{"type":"array","maxItems":100,"items":{"type":"object","properties":{
            "s":{"type":"string","maxLength":64},
            "inner":{"type":"array","items":{"type":"string"}}}},
          "x-kubernetes-validations":[{"rule":"self.all(x, x.inner.all(y, y == x.s))"}]}}}}}"#;
        assert_eq!(errors(schema), Vec::<String>::new());
    }

    #[test]
    fn field_paths_are_tokenised_as_valid_field_path_does() {
        assert_eq!(super::tokens(".a['b.c'][x"), [".", "a", "[", "'b.c'", "]", "[", "x"]);
        assert_eq!(super::tokens(r"['it\'s']"), ["[", r"'it\'s'", "]"]);
        assert_eq!(super::tokens("['open"), ["[", "'open"]);
    }
}
