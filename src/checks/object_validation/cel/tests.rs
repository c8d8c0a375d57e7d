//! Rules compiled and run over plain OpenAPI schemas, with the API server's answers.

use super::{Rules, SchemaView, Shown, Violation};
use crate::json::{self, Everything, Node};

/// A plain OpenAPI schema (JSON) as a [`SchemaView`].
#[derive(Clone, Copy)]
struct Plain<'a>(&'a Node<'a>);

impl<'a> Plain<'a> {
    fn str(self, key: &str) -> Option<&'a str> {
        self.0.get(key).and_then(Node::as_str)
    }
    fn flag(self, key: &str) -> bool {
        self.0.get(key).and_then(Node::as_bool).unwrap_or(false)
    }
    fn count(self, key: &str) -> Option<u64> {
        match self.0.get(key)?.number()? {
            json::Number::U64(n) => Some(n),
            _ => None,
        }
    }
}

impl<'a> SchemaView<'a> for Plain<'a> {
    fn type_name(self) -> Option<&'a str> {
        self.str("type")
    }
    fn format(self) -> Option<&'a str> {
        self.str("format")
    }
    fn int_or_string(self) -> bool {
        self.flag("x-kubernetes-int-or-string")
    }
    fn preserve_unknown_fields(self) -> bool {
        self.flag("x-kubernetes-preserve-unknown-fields")
    }
    fn embedded_resource(self) -> bool {
        self.flag("x-kubernetes-embedded-resource")
    }
    fn nullable(self) -> bool {
        self.flag("nullable")
    }
    fn has_properties(self) -> bool {
        self.0.get("properties").is_some()
    }
    fn property(self, name: &str) -> Option<Plain<'a>> {
        self.0.get("properties")?.get(name).map(Plain)
    }
    fn additional_properties(self) -> Option<Plain<'a>> {
        self.0
            .get("additionalProperties")
            .filter(|n| n.as_object().is_some())
            .map(Plain)
    }
    fn items(self) -> Option<Plain<'a>> {
        self.0.get("items").map(Plain)
    }
    fn list_type(self) -> Option<&'a str> {
        self.str("x-kubernetes-list-type")
    }
    fn list_map_keys(self) -> Vec<&'a str> {
        match self.0.get("x-kubernetes-list-map-keys") {
            Some(Node::Array(keys)) => keys.iter().filter_map(Node::as_str).collect(),
            _ => Vec::new(),
        }
    }
    fn max_length(self) -> Option<u64> {
        self.count("maxLength")
    }
    fn max_items(self) -> Option<u64> {
        self.count("maxItems")
    }
    fn max_properties(self) -> Option<u64> {
        self.count("maxProperties")
    }
}

/// Reads JSON text.
fn read(text: &str) -> Node<'_> {
    json::read(text, Everything, 128).expect("test JSON")
}

/// Compiles the schema's own `x-kubernetes-validations` and runs them on `value` (and `old`).
fn run(schema: &str, value: &str, old: Option<&str>) -> Vec<Violation> {
    let schema = read(schema);
    let view = Plain(&schema);
    let rules = Rules::compile(schema.get("x-kubernetes-validations").expect("rules"), view).expect("compiles");
    let value = read(value);
    let old = old.map(read);
    rules.check(view, &value, old.as_ref())
}

/// The messages of the violations.
fn messages(violations: &[Violation]) -> Vec<String> {
    violations.iter().map(|v| v.message.clone()).collect()
}

/// The compile errors of a schema's rules.
fn compile_errors(schema: &str) -> Vec<String> {
    let schema = read(schema);
    let view = Plain(&schema);
    Rules::compile(schema.get("x-kubernetes-validations").expect("rules"), view).expect_err("refused")
}

/// A rule on an integer and its message (validation_test.go `TestValidationExpressions`, "ints").
#[test]
fn scalar_rules_answer_with_their_message_or_the_rule() {
    let schema = r#"{"type":"integer","x-kubernetes-validations":[
        {"rule":"self == 7"},
        {"rule":"self > 10","message":"must be more than ten"},
        {"rule":"self < 10"}]}"#;
    assert_eq!(messages(&run(schema, "7", None)), ["must be more than ten"]);
    let v = run(schema, "12", None);
    assert_eq!(messages(&v), ["failed rule: self == 7", "failed rule: self < 10"]);
    assert!(
        v.iter()
            .all(|v| v.value == Shown::Value && v.field_path.is_empty() && v.reason.is_none())
    );
}

/// Object fields, `has`, escaped property names, maps and lists.
#[test]
fn objects_maps_and_lists_follow_the_schema() {
    let schema = r#"{"type":"object","properties":{
        "replicas":{"type":"integer"},
        "min-replicas":{"type":"integer"},
        "namespace":{"type":"string"},
        "ratio":{"type":"number"},
        "labels":{"type":"object","additionalProperties":{"type":"string"}},
        "ports":{"type":"array","items":{"type":"integer"}},
        "port":{"x-kubernetes-int-or-string":true}},
      "x-kubernetes-validations":[
        {"rule":"self.replicas >= self.min__dash__replicas","message":"replicas below minimum"},
        {"rule":"!has(self.__namespace__) || self.__namespace__ != 'kube-system'","message":"no kube-system"},
        {"rule":"self.ratio < 1.0","message":"ratio"},
        {"rule":"!('a/b' in self.labels) || self.labels['a/b'] == 'x'","message":"label"},
        {"rule":"self.ports.all(p, p > 0 && p < 65536)","message":"ports"},
        {"rule":"type(self.port) == string || self.port > 0","message":"port"}]}"#;
    let good = r#"{"replicas":3,"min-replicas":1,"ratio":0.5,"labels":{"a/b":"x"},"ports":[80,443],"port":"http"}"#;
    assert_eq!(run(schema, good, None), []);
    let bad = r#"{"replicas":1,"min-replicas":2,"namespace":"kube-system","ratio":1,"labels":{"a/b":"y"},"ports":[0],"port":-1}"#;
    let v = run(schema, bad, None);
    assert_eq!(
        messages(&v),
        [
            "replicas below minimum",
            "no kube-system",
            "ratio",
            "label",
            "ports",
            "port"
        ]
    );
    assert!(v.iter().all(|v| v.value == Shown::Omitted));
}

/// A missing field is a runtime error (validation_test.go: `no such key`).
#[test]
fn a_missing_field_is_no_such_key() {
    let schema = r#"{"type":"object","properties":{"a":{"type":"string"}},
      "x-kubernetes-validations":[{"rule":"self.a == 'x'"}]}"#;
    let v = run(schema, "{}", None);
    assert_eq!(messages(&v), ["no such key: a evaluating rule: self.a == 'x'"]);
    assert_eq!(v[0].value, Shown::SchemaType);
}

/// Transition rules run only with an old value; `optionalOldSelf` gives an optional.
#[test]
fn transition_rules_need_an_old_value() {
    let schema = r#"{"type":"string","x-kubernetes-validations":[
        {"rule":"self == oldSelf","message":"immutable"},
        {"rule":"!oldSelf.hasValue() || oldSelf.value() == self","message":"optional immutable","optionalOldSelf":true}]}"#;
    assert_eq!(run(schema, r#""a""#, None), []);
    assert_eq!(
        messages(&run(schema, r#""a""#, Some(r#""b""#))),
        ["immutable", "optional immutable"]
    );
    assert_eq!(run(schema, r#""a""#, Some(r#""a""#)), []);
}

/// `messageExpression`, `reason` and `fieldPath`.
#[test]
fn message_expression_reason_and_field_path() {
    let schema = r#"{"type":"object","properties":{"x":{"type":"object","properties":{"a.b":{"type":"integer"}}},
        "m":{"type":"object","additionalProperties":{"type":"integer"}}},
      "x-kubernetes-validations":[
        {"rule":"self.x.a__dot__b < 5","messageExpression":"'a.b is ' + string(self.x.a__dot__b)","reason":"FieldValueForbidden","fieldPath":".x['a.b']"},
        {"rule":"false","message":"fallback","messageExpression":"''"},
        {"rule":"false","message":"kept","fieldPath":".m['k']"}]}"#;
    let v = run(schema, r#"{"x":{"a.b":7},"m":{}}"#, None);
    assert_eq!(messages(&v), ["a.b is 7", "fallback", "kept"]);
    assert_eq!(v[0].reason.as_deref(), Some("FieldValueForbidden"));
    assert_eq!(v[0].field_path, "x.a.b");
    assert_eq!(v[2].field_path, "m[k]");
}

/// What the API server refuses when it compiles the rules.
#[test]
fn compile_errors_are_the_api_servers() {
    let errors = compile_errors(
        r#"{"type":"object","properties":{"a":{"type":"integer"}},"x-kubernetes-validations":[
        {"rule":"self.b == 1"},
        {"rule":"foo == 1"},
        {"rule":"self.a +"},
        {"rule":"self.a"},
        {"rule":"self.a == 1","fieldPath":".c"},
        {"rule":"self.a == 1","optionalOldSelf":true}]}"#,
    );
    assert_eq!(
        errors,
        [
            "x-kubernetes-validations[0].rule: Invalid value: {\"rule\":\"self.b == 1\"}: compilation failed: ERROR: <input>:1:5: undefined field 'b'\n | self.b == 1\n | ....^",
            "x-kubernetes-validations[1].rule: Invalid value: {\"rule\":\"foo == 1\"}: compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')\n | foo == 1\n | ^",
            errors[2].as_str(),
            "x-kubernetes-validations[3].rule: Invalid value: {\"rule\":\"self.a\"}: cel expression must evaluate to a bool",
            "x-kubernetes-validations[4].fieldPath: Invalid value: \".c\": must be a valid path",
            "x-kubernetes-validations[5].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule",
        ]
    );
    assert!(errors[2].starts_with("x-kubernetes-validations[2].rule: Invalid value: {\"rule\":\"self.a +\"}: compilation failed: ERROR: <input>:1:"), "{}", errors[2]);
}

/// Kubernetes' list and regex libraries.
#[test]
fn kubernetes_lists_and_regex() {
    for (rule, want) in [
        ("[1, 2, 3].isSorted()", true),
        ("[3, 1].isSorted()", false),
        ("['a', 'b'].isSorted()", true),
        ("[1, 2, 3].sum() == 6", true),
        ("[1.5, 2.5].sum() == 4.0", true),
        ("[3, 1, 2].min() == 1", true),
        ("[3, 1, 2].max() == 3", true),
        ("[1, 2, 1].indexOf(1) == 0", true),
        ("[1, 2, 1].lastIndexOf(1) == 2", true),
        ("[1, 2].indexOf(3) == -1", true),
        ("'abc 123'.find('[0-9]+') == '123'", true),
        ("'abc'.find('[0-9]+') == ''", true),
        ("'123 abc 456'.findAll('[0-9]+') == ['123', '456']", true),
        ("'123 abc 456'.findAll('[0-9]+', 1) == ['123']", true),
    ] {
        let schema = format!(
            r#"{{"type":"string","x-kubernetes-validations":[{{"rule":{}}}]}}"#,
            crate::text::quote(rule)
        );
        assert_eq!(run(&schema, r#""x""#, None).is_empty(), want, "{rule}");
    }
    let schema = r#"{"type":"string","x-kubernetes-validations":[{"rule":"[].min() == 1"}]}"#;
    assert_eq!(
        messages(&run(schema, r#""x""#, None)),
        ["min called on empty list evaluating rule: [].min() == 1"]
    );
}

/// A rule whose cost would pass the per-call limit is stopped with the API server's message.
#[test]
fn a_costly_rule_is_stopped() {
    let schema = r#"{"type":"array","items":{"type":"integer"},"x-kubernetes-validations":[
        {"rule":"self.all(x, self.all(y, self.all(z, x + y + z >= 0)))"},
        {"rule":"self.size() > 100000"}]}"#;
    let value = format!("[{}]", vec!["1"; 200].join(","));
    assert_eq!(
        messages(&run(schema, &value, None)),
        [
            "'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.all(x, self.all(y, self.all(z, x + y + z >= 0)))"
        ]
    );
    let small = "[1,2,3]";
    assert_eq!(
        messages(&run(schema, small, None)),
        ["failed rule: self.size() > 100000"]
    );
}
