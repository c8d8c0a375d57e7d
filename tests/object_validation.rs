//! object-validation, rule by rule: every rule of what the check judges (issue 46's list, in
//! [`RULES`]) has at least one case it accepts and one it refuses, in
//! `tests/object_validation/cases.yml`, each case with the API server's answer taken from the
//! sources it names. [`every_case_gets_the_api_servers_answer`] judges each case with the
//! object-validation module as `syncguard scan` runs it (the whole check, through its `report`
//! waPC operation, over an offline cluster holding the case's CRD and stored objects), and
//! [`every_rule_is_covered_both_ways`] is the table: it fails when a rule loses its accepted or its
//! refused case, or when a case names a rule the list does not have.

use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The rules of the list, each with what it is; a case names the ones it exercises.
const RULES: &[(&str, &str)] = &[
    // A custom resource against its CRD's structural schema.
    ("type", "`type`"),
    ("format:int32", "`format: int32`"),
    ("format:int64", "`format: int64`"),
    ("format:float", "`format: float`"),
    ("format:double", "`format: double`"),
    ("format:byte", "`format: byte`"),
    ("format:date", "`format: date`"),
    ("format:date-time", "`format: date-time`"),
    ("format:duration", "`format: duration`"),
    ("format:uri", "`format: uri`"),
    ("format:email", "`format: email`"),
    ("format:hostname", "`format: hostname`"),
    ("format:ipv4", "`format: ipv4`"),
    ("format:ipv6", "`format: ipv6`"),
    ("format:cidr", "`format: cidr`"),
    ("format:mac", "`format: mac`"),
    ("format:uuid", "`format: uuid`"),
    ("format:uuid3", "`format: uuid3`"),
    ("format:uuid4", "`format: uuid4`"),
    ("format:uuid5", "`format: uuid5`"),
    ("format:bsonobjectid", "`format: bsonobjectid`"),
    ("format:isbn", "`format: isbn`"),
    ("format:isbn10", "`format: isbn10`"),
    ("format:isbn13", "`format: isbn13`"),
    ("format:creditcard", "`format: creditcard`"),
    ("format:ssn", "`format: ssn`"),
    ("format:hexcolor", "`format: hexcolor`"),
    ("format:rgbcolor", "`format: rgbcolor`"),
    ("enum", "`enum`"),
    ("required", "`required`"),
    ("nullable", "`nullable`"),
    ("minimum", "`minimum`"),
    ("maximum", "`maximum`"),
    ("exclusiveMinimum", "`exclusiveMinimum`"),
    ("exclusiveMaximum", "`exclusiveMaximum`"),
    ("multipleOf", "`multipleOf`"),
    ("minLength", "`minLength`"),
    ("maxLength", "`maxLength`"),
    ("pattern", "`pattern`"),
    ("minItems", "`minItems`"),
    ("maxItems", "`maxItems`"),
    ("minProperties", "`minProperties`"),
    ("maxProperties", "`maxProperties`"),
    ("uniqueItems", "`uniqueItems` (a CRD may not set it true)"),
    ("additionalProperties", "`additionalProperties`"),
    ("allOf", "`allOf`"),
    ("anyOf", "`anyOf`"),
    ("oneOf", "`oneOf`"),
    ("not", "`not`"),
    ("int-or-string", "`x-kubernetes-int-or-string`"),
    ("preserve-unknown-fields", "`x-kubernetes-preserve-unknown-fields`"),
    ("embedded-resource", "`x-kubernetes-embedded-resource`"),
    ("list-type-set", "`x-kubernetes-list-type: set`"),
    (
        "list-type-map",
        "`x-kubernetes-list-type: map` with `x-kubernetes-list-map-keys`",
    ),
    ("map-type", "`x-kubernetes-map-type`"),
    (
        "unknown-fields",
        "unknown fields, as strict field validation reports them",
    ),
    ("defaults", "defaults applied before validation"),
    // CEL rules.
    ("cel:rule", "`x-kubernetes-validations` `rule`"),
    ("cel:message", "`message`"),
    ("cel:messageExpression", "`messageExpression`"),
    ("cel:reason", "`reason`"),
    ("cel:fieldPath", "`fieldPath`"),
    ("cel:optionalOldSelf", "`optionalOldSelf`"),
    (
        "cel:transition",
        "transition rules (`oldSelf`), only with an old object",
    ),
    ("cel:strings", "the strings library"),
    ("cel:lists", "the lists library"),
    ("cel:regex", "the regex library"),
    ("cel:urls", "the URLs library"),
    ("cel:ip", "the IP library"),
    ("cel:cidr", "the CIDR library"),
    ("cel:quantity", "the quantity library"),
    (
        "cel:string-format",
        "the string `format` function (ext.Strings version 2)",
    ),
    ("cel:semver", "the semver library"),
    (
        "cel:format",
        "the format library (`format.named`, `format.dns1123Label()`...; Kubernetes 1.31)",
    ),
    ("cel:cost", "the CEL cost limits"),
    // Built-in kinds and every object's metadata.
    ("builtin", "a built-in kind against Kubernetes' published schema"),
    ("metadata.name", "`metadata.name`"),
    ("metadata.generateName", "`metadata.generateName`"),
    ("metadata.labels", "label keys and values"),
    ("metadata.annotations", "annotation keys and size"),
    // A CRD's own validation, stored objects and the audit.
    ("crd", "a CRD's own validation (ValidateCustomResourceDefinition)"),
    ("stored", "stored objects against a CRD update"),
    ("audit", "a stored custom resource as the audit scanner sends it"),
];

/// The file of cases.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Cases {
    cases: Vec<Case>,
}

/// One case: an object (as a CREATE, or an UPDATE from `old`) and what the API server answers.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    /// The rules of [`RULES`] it exercises.
    rules: Vec<String>,
    /// Where its answer comes from.
    source: String,
    /// The `openAPIV3Schema` of the version `v1` of a Widget CRD (`widgets.example.com`,
    /// namespaced) the cluster holds.
    #[serde(default)]
    schema: Option<Value>,
    /// Whether that version has the status subresource.
    #[serde(default)]
    status: bool,
    /// The object (a Widget when it names no kind; a Widget's `apiVersion`, `kind` and a
    /// `metadata` are filled in when left out).
    object: Value,
    /// The old object of an UPDATE.
    #[serde(default)]
    old: Option<Value>,
    /// Other objects the cluster stores.
    #[serde(default)]
    stored: Vec<Value>,
    /// Sent as Kubewarden's audit scanner sends a stored object.
    #[serde(default)]
    audit: bool,
    /// The policy's settings (default: `unknownField: reject`, every other rule at its default).
    #[serde(default)]
    settings: Option<Value>,
    /// What the policy finds, each finding's text after its object's label (`<field>: <the API
    /// server's message>`); none: accepted as the API server accepts it.
    errors: Vec<String>,
}

fn cases() -> Vec<Case> {
    let path = syncguard_testkit::root().join("tests/object_validation/cases.yml");
    let text = std::fs::read_to_string(&path).unwrap();
    let cases: Cases = serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    cases.cases
}

/// The Widget CRD with `schema` as its `v1` schema.
fn crd(schema: &Value, status: bool) -> Value {
    let mut version = json!({"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": schema}});
    if status {
        version["subresources"] = json!({"status": {}});
    }
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
      "metadata": {"name": "widgets.example.com"},
      "spec": {"group": "example.com", "scope": "Namespaced",
        "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
        "versions": [version]}})
}

/// `object` with a Widget's `apiVersion`, `kind` and `metadata` where it leaves them out.
fn filled(object: &Value) -> Value {
    let mut object = object.clone();
    let map = object.as_object_mut().expect("an object");
    map.entry("apiVersion").or_insert_with(|| json!("example.com/v1"));
    map.entry("kind").or_insert_with(|| json!("Widget"));
    map.entry("metadata")
        .or_insert_with(|| json!({"name": "w", "namespace": "shop"}));
    object
}

/// The texts of the findings object-validation reports for `case`.
fn judged(case: &Case) -> Vec<String> {
    let object = filled(&case.object);
    let mut cluster_objects: Vec<Value> = case.stored.iter().map(filled).collect();
    if let Some(schema) = &case.schema {
        cluster_objects.push(crd(schema, case.status));
    }
    let cluster = syncguard_scan::cluster::OfflineCluster::of_objects(&cluster_objects);
    let resource = syncguard_testkit::resource_of(&object);
    let mut request = match (&case.old, object["kind"].as_str()) {
        (old, Some("CustomResourceDefinition")) => {
            let operation = if old.is_some() { "UPDATE" } else { "CREATE" };
            syncguard_testkit::crd_request(operation, &object, old.as_ref())
        }
        (Some(old), _) => {
            let mut request = syncguard_testkit::object_request("UPDATE", &object, &resource);
            request["oldObject"] = filled(old);
            request
        }
        (None, _) => syncguard_testkit::object_request("CREATE", &object, &resource),
    };
    if case.audit {
        // kubewarden audit-scanner's internal/scanner/admission_request.go: the resource named by
        // the kind, the stored object's uid, no user.
        request["resource"]["resource"] = object["kind"].clone();
        request["uid"] = object["metadata"]["uid"].clone();
        request["userInfo"] = json!({});
    }
    let settings = case
        .settings
        .clone()
        .unwrap_or_else(|| json!({"rules": {"unknownField": "reject"}}));
    let entry = syncguard::registry::Entry::named("object-validation").unwrap();
    let report = (entry.report)(syncguard_testkit::payload(&request, &settings).as_bytes(), &cluster);
    let report: Value = serde_json::from_slice(&report).unwrap();
    let label = |finding: &Value| {
        format!(
            "{} {}: ",
            finding["kind"].as_str().unwrap_or_default(),
            finding["label"].as_str().unwrap_or_default()
        )
    };
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| {
            let text = finding["text"].as_str().unwrap_or_default();
            text.strip_prefix(&label(finding)).unwrap_or(text).to_string()
        })
        .collect()
}

#[test]
fn every_case_gets_the_api_servers_answer() {
    let mut failures = Vec::new();
    for (i, case) in cases().iter().enumerate() {
        assert!(!case.source.trim().is_empty(), "case {i} names no source");
        let got = judged(case);
        if got != case.errors {
            failures.push(format!(
                "case {i} ({}): expected {:#?}, got {got:#?}",
                case.rules.join(", "),
                case.errors
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_rule_is_covered_both_ways() {
    let mut covered: BTreeMap<&str, (usize, usize)> = RULES.iter().map(|(rule, _)| (*rule, (0, 0))).collect();
    for (i, case) in cases().iter().enumerate() {
        for rule in &case.rules {
            let Some((accepted, refused)) = covered.get_mut(rule.as_str()) else {
                panic!("case {i} names {rule:?}, which is no rule of the list");
            };
            if case.errors.is_empty() {
                *accepted += 1;
            } else {
                *refused += 1;
            }
        }
    }
    let missing: Vec<String> = RULES
        .iter()
        .filter_map(|(rule, what)| match covered[rule] {
            (0, 0) => Some(format!("{what}: no case")),
            (0, _) => Some(format!("{what}: no case it accepts")),
            (_, 0) => Some(format!("{what}: no case it refuses")),
            _ => None,
        })
        .collect();
    assert!(
        missing.is_empty(),
        "rules not covered both ways:\n{}",
        missing.join("\n")
    );
}
