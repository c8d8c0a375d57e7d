//! Hostile input through the built modules: nothing traps or panics, and every input gets the
//! outcome the README's "Hostile input" table promises: code 400 for what cannot be read
//! (`operation: 42`, a payload over 16 MiB, bytes that are not a validation request, refused
//! settings), an acceptance without reading for what no check applies to (DELETE, CONNECT,
//! another operation, a subresource), the depth finding of crd-schema-fields for JSON nested
//! 100,000 levels deep, and for an object of the wrong type the outcome each check's README
//! documents.
//!
//! Nothing here names a check: the modules are the registry's checks and the all-in-one, each
//! judged on a request of the first kind it judges (`Check::KINDS`), and what depends on the
//! check is data in its folder, `test_data/hostile.yml` ([`Outcomes`]). That data stays test
//! data (a module never carries what its tests expect); the registry is held to it instead
//! ([`the_expectations_agree_with_the_registry`]: the kinds, the admission rules and the checks'
//! names the expectations rely on are the registry's).

use e2e_tests::{Scratch, all_in_one_module, annotated_module, call_module, policies};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use syncguard::registry::{ALL_IN_ONE, CHECKS};
use syncguard_scan::Operation;

/// Every module under test: the single policies and the all-in-one.
fn modules() -> Vec<(String, PathBuf)> {
    let mut modules: Vec<(String, PathBuf)> = policies()
        .into_iter()
        .map(|p| (p.clone(), annotated_module(&p)))
        .collect();
    modules.push((ALL_IN_ONE.into(), all_in_one_module()));
    modules
}

/// The request a module is judged on, from its [`Outcomes::request`] or the first kind it judges,
/// with markers that make every check parse the object.
fn base_request(policy: &str, outcomes: &Outcomes) -> Value {
    let (group, kind) = match &outcomes.request {
        Some(kind) => (kind.group.clone(), kind.kind.clone()),
        None => {
            let entry = CHECKS
                .iter()
                .find(|e| e.name == policy)
                .unwrap_or_else(|| panic!("{policy}: its hostile.yml names no `request`, and it is not a check"));
            let (group, kind) = entry
                .kinds
                .first()
                .unwrap_or_else(|| panic!("{policy} judges every kind: its hostile.yml must name a `request`"));
            (group.to_string(), kind.to_string())
        }
    };
    let builtin = syncguard::generated::builtin_kinds(&kind)
        .find(|r| r.group == group && !r.subresource)
        .unwrap_or_else(|| panic!("{policy}: {group}/{kind} is not a built-in resource"));
    let (version, resource) = (builtin.version, builtin.plural);
    json!({
        "uid": "hostile",
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": resource},
        "name": "hostile",
        "namespace": "default",
        "operation": Operation::Create,
        "userInfo": {"username": "fuzzer"},
        "object": {
            "apiVersion": if group.is_empty() { version.to_string() } else { format!("{group}/{version}") },
            "kind": kind,
            "metadata": {
                "name": "hostile",
                "annotations": {
                    "helm.sh/hook": "post-install",
                    "meta.helm.sh/release-name": "r",
                    "objectset.rio.cattle.io/id": "x",
                    "kubectl.kubernetes.io/last-applied-configuration": "{"
                }
            },
            "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "versions": []}
        }
    })
}

/// Sends each payload to `operation` in a fresh instance; the guest's JSON, or `Err` when the
/// guest trapped or failed.
fn call(module: &Path, operation: &str, payloads: &[PathBuf]) -> Vec<Result<Value, String>> {
    call_module(module, operation, payloads)
        .into_iter()
        .map(|answer| {
            answer.and_then(|bytes| {
                serde_json::from_slice(&bytes)
                    .map_err(|e| format!("answer is not JSON ({e}): {}", String::from_utf8_lossy(&bytes)))
            })
        })
        .collect()
}

fn nested(levels: usize) -> String {
    format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
}

/// The `validate` payload for a request.
fn payload(request: &str) -> Vec<u8> {
    format!("{{\"request\":{request},\"settings\":{{}}}}").into_bytes()
}

/// What a hostile input must get; in every case the module must answer (no trap). Read from
/// `hostile.yml` as `base`, `allowed`, `{rejected: 400}`, `{rejectedWith: text}`,
/// `{messageHolds: text}`.
#[derive(Clone, Debug, Deserialize)]
#[serde(try_from = "Written")]
enum Expect {
    /// The verdict of the well-formed base request (a field no check reads, or one whose
    /// value is of the right type): accepted or not, with the same code.
    Base,
    /// A rejection with this code.
    Rejected(u16),
    /// A rejection with this code whose message holds this text (what could not be read).
    RejectedSaying(u16, String),
    /// A rejection without a code whose message holds this text.
    RejectedWith(String),
    /// A rejection, with any code, whose message holds this text.
    MessageHolds(String),
    /// An acceptance.
    Allowed,
}

/// An [`Expect`] as `hostile.yml` writes it.
#[derive(Deserialize)]
#[serde(untagged)]
enum Written {
    /// `base` or `allowed`.
    Word(String),
    /// `{rejected: <code>}`.
    Rejected { rejected: u16 },
    /// `{rejectedWith: <text>}`.
    #[serde(rename_all = "camelCase")]
    RejectedWith { rejected_with: String },
    /// `{messageHolds: <text>}`.
    #[serde(rename_all = "camelCase")]
    MessageHolds { message_holds: String },
}

impl TryFrom<Written> for Expect {
    type Error = String;

    fn try_from(written: Written) -> Result<Expect, String> {
        Ok(match written {
            Written::Word(word) if word == "base" => Expect::Base,
            Written::Word(word) if word == "allowed" => Expect::Allowed,
            Written::Word(word) => return Err(format!("`{word}` is not an outcome (base, allowed, or a map)")),
            Written::Rejected { rejected } => Expect::Rejected(rejected),
            Written::RejectedWith { rejected_with } => Expect::RejectedWith(rejected_with),
            Written::MessageHolds { message_holds } => Expect::MessageHolds(message_holds),
        })
    }
}

/// A kind a module is judged on.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Kind {
    group: String,
    kind: String,
}

/// The outcomes of one field of the object set to a value of each wrong JSON type (`wrongType`
/// for a number, a string and an array alike, each of which may be given apart) and to `null`
/// (which counts as absent); `base` when left out.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
struct FieldOutcomes {
    wrong_type: Option<Expect>,
    number: Option<Expect>,
    string: Option<Expect>,
    array: Option<Expect>,
    null: Option<Expect>,
}

impl FieldOutcomes {
    fn of(&self, wrong: &Value) -> Expect {
        let own = match wrong {
            Value::Null => return self.null.clone().unwrap_or(Expect::Base),
            Value::Number(_) => &self.number,
            Value::String(_) => &self.string,
            _ => &self.array,
        };
        own.clone().or_else(|| self.wrong_type.clone()).unwrap_or(Expect::Base)
    }
}

fn rejected_400() -> Expect {
    Expect::Rejected(400)
}
fn allowed() -> Expect {
    Expect::Allowed
}
fn base() -> Expect {
    Expect::Base
}

/// What a module's `test_data/hostile.yml` says it does with the inputs whose outcome depends on
/// the check; each default is the outcome of a check that reads only its own kind's fields.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Outcomes {
    /// The kind of the request it is judged on; default: the first of the check's `KINDS`.
    #[serde(default)]
    request: Option<Kind>,
    /// An object that is not a JSON object (`42`, `"x"`, `["x"]`); default: code 400.
    #[serde(default = "rejected_400")]
    not_an_object: Expect,
    /// An object holding only a field no check reads (`{"x": 1}`); default: allowed.
    #[serde(default = "allowed")]
    unknown_fields_only: Expect,
    /// An empty object; default: allowed.
    #[serde(default = "allowed")]
    empty_object: Expect,
    /// `apiVersion`, `kind`, `metadata`, `spec`, `status` of the wrong type or `null`.
    #[serde(default)]
    object_fields: BTreeMap<String, FieldOutcomes>,
    /// JSON nested 100,000 levels deep where a CRD holds `spec.versions`; default: base.
    #[serde(default = "base")]
    deeply_nested: Expect,
    /// A CRD schema nested 100,000 levels deep (`not` in `not`); default: base.
    #[serde(default = "base")]
    deep_schema: Expect,
    /// A request `kind` that names nothing (`{"x": 1}`); default: allowed (not a kind it judges).
    #[serde(default = "allowed")]
    kind_names_nothing: Expect,
    /// A request `resource` that names nothing; default: allowed (no rule of it matches).
    #[serde(default = "allowed")]
    resource_names_nothing: Expect,
}

impl Outcomes {
    /// The outcomes of module `policy`, from its folder.
    fn of(policy: &str) -> Outcomes {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../policies")
            .join(policy)
            .join("test_data/hostile.yml");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (every policy folder holds one, CONTRIBUTING.md)",
                path.display()
            )
        });
        serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }
}

fn check(expect: &Expect, answer: &Result<Value, String>, base: &Value) -> Result<(), String> {
    let answer = answer
        .as_ref()
        .map_err(|e| format!("the module trapped or failed: {e}"))?;
    let accepted = answer["accepted"]
        .as_bool()
        .ok_or_else(|| format!("not a validation response: {answer}"))?;
    let met = match expect {
        Expect::Base => answer["accepted"] == base["accepted"] && answer["code"] == base["code"],
        Expect::Rejected(code) => !accepted && answer["code"] == *code,
        Expect::RejectedSaying(code, text) => {
            !accepted
                && answer["code"] == *code
                && answer["message"].as_str().is_some_and(|m| m.contains(text.as_str()))
        }
        Expect::RejectedWith(text) => {
            !accepted
                && answer["code"].is_null()
                && answer["message"].as_str().is_some_and(|m| m.contains(text.as_str()))
        }
        Expect::MessageHolds(text) => {
            !accepted && answer["message"].as_str().is_some_and(|m| m.contains(text.as_str()))
        }
        Expect::Allowed => accepted,
    };
    if met {
        Ok(())
    } else {
        let brief = |v: &Value| {
            let message: String = v["message"].as_str().unwrap_or("").chars().take(160).collect();
            format!("accepted {}, code {}, {message:?}", v["accepted"], v["code"])
        };
        Err(format!(
            "expected {expect:?} (the base request: {}), got {}",
            brief(base),
            brief(answer)
        ))
    }
}

/// The fields of the object the suite sets to values of the wrong type (`objectFields`).
const OBJECT_FIELDS: [&str; 5] = ["apiVersion", "kind", "metadata", "spec", "status"];

/// The texts an outcome requires of the answer's message.
fn texts(expect: &Expect) -> Option<&str> {
    match expect {
        Expect::RejectedSaying(_, text) | Expect::RejectedWith(text) | Expect::MessageHolds(text) => Some(text),
        Expect::Base | Expect::Rejected(_) | Expect::Allowed => None,
    }
}

/// The hostile expectations held to the registry, without running a module: every check and the
/// all-in-one has its `hostile.yml`; a check of every kind (empty `KINDS`) names the request it
/// is judged on, and a check of some kinds names none or one of its `KINDS`; the request is one
/// its admission rules (metadata.yml's, as the registry holds them) send it, so the suite never
/// judges a module on a request its webhook would not deliver; every field named under
/// `objectFields` is one the suite sets; and every check an expected message names (`<check>: `,
/// the all-in-one's prefix of each check's text) is a check of the registry. A check added to,
/// renamed in or narrowed in the registry thus fails here before any module is built.
#[test]
fn the_expectations_agree_with_the_registry() {
    for policy in policies().into_iter().chain([ALL_IN_ONE.to_string()]) {
        let outcomes = Outcomes::of(&policy);
        let entry = syncguard::registry::Entry::named(&policy);
        let rules: &[syncguard::rules::Rule] = match entry {
            Some(entry) => entry.rules,
            None => syncguard::rules::SYNCGUARD,
        };
        if let Some(entry) = entry {
            match (&outcomes.request, entry.kinds) {
                (None, []) => panic!("{policy} judges every kind: its hostile.yml must name a `request`"),
                (Some(kind), kinds) if !kinds.is_empty() => assert!(
                    kinds
                        .iter()
                        .any(|(group, name)| *group == kind.group && *name == kind.kind),
                    "{policy}: hostile.yml names {}/{}, which is not one of its KINDS {kinds:?}",
                    kind.group,
                    kind.kind
                ),
                _ => {}
            }
        }
        let request = base_request(&policy, &outcomes);
        let text = |v: &Value| v.as_str().unwrap_or("").to_string();
        let (group, version, resource) = (
            text(&request["resource"]["group"]),
            text(&request["resource"]["version"]),
            text(&request["resource"]["resource"]),
        );
        let target = syncguard::rules::Attributes {
            group: &group,
            version: &version,
            resource: &resource,
            subresource: "",
            operation: Some(Operation::Create),
        };
        assert!(
            rules.iter().any(|rule| rule.applies_to(&target)),
            "{policy}: its admission rules never send it the request hostile.yml judges it on ({group}/{version} {resource})"
        );
        for field in outcomes.object_fields.keys() {
            assert!(
                OBJECT_FIELDS.contains(&field.as_str()),
                "{policy}: objectFields names {field}, which the suite never sets (it sets {OBJECT_FIELDS:?})"
            );
        }
        let mut expects = vec![
            &outcomes.not_an_object,
            &outcomes.unknown_fields_only,
            &outcomes.empty_object,
            &outcomes.deeply_nested,
            &outcomes.deep_schema,
            &outcomes.kind_names_nothing,
            &outcomes.resource_names_nothing,
        ];
        for field in outcomes.object_fields.values() {
            expects.extend(
                [
                    &field.wrong_type,
                    &field.number,
                    &field.string,
                    &field.array,
                    &field.null,
                ]
                .into_iter()
                .flatten(),
            );
        }
        for text in expects.into_iter().filter_map(texts) {
            if let Some(check) = text.strip_suffix(": ") {
                assert!(
                    syncguard::registry::Entry::named(check).is_some(),
                    "{policy}: hostile.yml expects a message of {check}, which is not a check of the registry"
                );
            }
        }
    }
}

/// The README's outcome for a request field of the given JSON type: code 400 when the field
/// is read and the type is wrong; `uid` and `dryRun` are never read.
fn request_field(field: &str, wrong: &Value) -> Expect {
    let right_type = match field {
        "uid" | "dryRun" => return Expect::Base,
        "kind" | "resource" => wrong.is_object(),
        _ => wrong.is_string(),
    };
    match (field, right_type) {
        (_, false) => Expect::Rejected(400),
        // A subresource, or an operation no check registers for: accepted without reading.
        ("subResource" | "operation", true) => Expect::Allowed,
        _ => Expect::Base,
    }
}

#[test]
fn hostile_requests_never_trap() {
    let scratch = Scratch::new("hostile");
    let mut failures = Vec::new();
    for (policy, module) in modules() {
        let outcomes = Outcomes::of(&policy);
        let base = base_request(&policy, &outcomes);
        let mut inputs: Vec<(String, Vec<u8>, Expect)> = Vec::new();
        // First the well-formed request, whose answer some inputs must keep.
        inputs.push(("base".into(), payload(&base.to_string()), Expect::Base));
        // JSON nested 100,000 levels deep inside the object.
        let deep = base
            .to_string()
            .replacen("\"versions\":[]", &format!("\"versions\":{}", nested(100_000)), 1);
        inputs.push(("nested-100000".into(), payload(&deep), outcomes.deeply_nested.clone()));
        // A schema nested 100,000 levels deep.
        let schema = format!(
            "{}{{\"type\":\"object\"}}{}",
            "{\"not\":".repeat(100_000),
            "}".repeat(100_000)
        );
        let version = format!(
            "[{{\"name\":\"v1\",\"served\":true,\"storage\":true,\"schema\":{{\"openAPIV3Schema\":{schema}}}}}]"
        );
        let deep_schema_request = base
            .to_string()
            .replacen("\"versions\":[]", &format!("\"versions\":{version}"), 1);
        inputs.push((
            "schema-nested-100000".into(),
            payload(&deep_schema_request),
            outcomes.deep_schema.clone(),
        ));
        // A 20 MB object: more than a policy reads.
        let mut big = base.clone();
        big["object"]["data"] = json!({"blob": "x".repeat(20 * 1024 * 1024)});
        inputs.push((
            "object-20MB".into(),
            payload(&big.to_string()),
            Expect::RejectedSaying(400, "bytes a policy reads".into()),
        ));
        // Every field of the request and of the object with a wrong JSON type.
        for field in [
            "uid",
            "kind",
            "resource",
            "subResource",
            "name",
            "namespace",
            "operation",
            "dryRun",
            "object",
            "oldObject",
        ] {
            for wrong in [json!(42), json!("x"), json!(["x"]), json!({"x": 1})] {
                let mut request = base.clone();
                request[field] = wrong.clone();
                let expect = match field {
                    "object" if !wrong.is_object() => outcomes.not_an_object.clone(),
                    // An object with none of the fields a check reads: CRD checks cannot read
                    // it as a CRD, and it carries no marker for the others.
                    "object" => outcomes.unknown_fields_only.clone(),
                    // The old object is not read on CREATE.
                    "oldObject" => Expect::Base,
                    // A kind, or a resource, that names nothing.
                    "kind" if wrong.is_object() => outcomes.kind_names_nothing.clone(),
                    "resource" if wrong.is_object() => outcomes.resource_names_nothing.clone(),
                    _ => request_field(field, &wrong),
                };
                inputs.push((
                    format!("wrong-type-{field}-{wrong}"),
                    payload(&request.to_string()),
                    expect,
                ));
            }
        }
        for field in OBJECT_FIELDS {
            for wrong in [json!(42), json!("x"), json!(["x"]), json!(null)] {
                let mut request = base.clone();
                request["object"][field] = wrong.clone();
                inputs.push((
                    format!("wrong-type-object.{field}-{wrong}"),
                    payload(&request.to_string()),
                    outcomes.object_fields.get(field).map_or(Expect::Base, |f| f.of(&wrong)),
                ));
            }
        }
        // Empty and missing objects.
        let mut empty = base.clone();
        empty["object"] = json!({});
        inputs.push((
            "empty-object".into(),
            payload(&empty.to_string()),
            outcomes.empty_object.clone(),
        ));
        let mut missing = base.clone();
        missing.as_object_mut().expect("object").remove("object");
        // The one rule of every check for a request without an object: code 400.
        inputs.push((
            "missing-object".into(),
            payload(&missing.to_string()),
            Expect::RejectedSaying(400, "the request carries no object to check".into()),
        ));
        inputs.push(("empty-request".into(), payload("{}"), Expect::Allowed));
        // A subresource, and a resource the check does not register for; each with an object
        // and old object no check could read, so an acceptance shows they were not read.
        let mut unread = base.clone();
        unread["object"] = json!(42);
        unread["oldObject"] = json!(42);
        let mut status = unread.clone();
        status["subResource"] = json!("status");
        inputs.push(("subresource".into(), payload(&status.to_string()), Expect::Allowed));
        // For a module whose rules do not cover Pods (from the registry).
        let mut other = unread.clone();
        other["resource"] = json!({"group": "", "version": "v1", "resource": "pods"});
        other["kind"] = json!({"group": "", "version": "v1", "kind": "Pod"});
        let rules = CHECKS
            .iter()
            .find(|e| e.name == policy)
            .map_or(syncguard::all_in_one::RULES, |e| e.rules);
        let pods = syncguard::rules::Attributes {
            group: "",
            version: "v1",
            resource: "pods",
            subresource: "",
            operation: Some(Operation::Create),
        };
        if !rules.iter().any(|rule| rule.applies_to(&pods)) {
            inputs.push(("another-resource".into(), payload(&other.to_string()), Expect::Allowed));
        }
        // Operations none of the checks registers for.
        for operation in [Operation::Delete, Operation::Connect] {
            let mut request = unread.clone();
            request["operation"] = json!(operation);
            inputs.push((
                format!("operation-{operation}"),
                payload(&request.to_string()),
                Expect::Allowed,
            ));
        }
        // Bytes that are not a validation request at all.
        inputs.push((
            "invalid-utf8".into(),
            b"{\"request\":{\"uid\":\"\xff\xfe\"},\"settings\":{}}".to_vec(),
            Expect::RejectedSaying(400, "the admission request is not valid UTF-8 JSON".into()),
        ));
        let unreadable = || Expect::RejectedSaying(400, "syncguard: cannot read the admission request".into());
        inputs.push(("not-json".into(), b"not json".to_vec(), unreadable()));
        inputs.push(("empty-payload".into(), Vec::new(), unreadable()));
        inputs.push(("array".into(), b"[1,2,3]".to_vec(), unreadable()));
        inputs.push((
            "truncated".into(),
            b"{\"request\":{\"object\":{\"a\":".to_vec(),
            unreadable(),
        ));
        inputs.push((
            "settings-not-object".into(),
            payload_with_settings(&base, "[1]"),
            Expect::RejectedSaying(400, "invalid settings".into()),
        ));

        let paths: Vec<PathBuf> = inputs
            .iter()
            .enumerate()
            .map(|(i, (_, bytes, _))| scratch.write(&format!("{policy}-{i}"), bytes))
            .collect();
        let answers = call(&module, "validate", &paths);
        let base_answer = answers[0].clone().unwrap_or_default();
        for ((name, _, expect), answer) in inputs.iter().zip(&answers) {
            if let Err(problem) = check(expect, answer, &base_answer) {
                failures.push(format!("{policy}/{name}: {problem}"));
            }
        }

        // validate_settings: garbage is refused with a message, never a trap.
        let settings: [&[u8]; 6] = [
            b"\xff\xfe",
            b"not json",
            b"[1]",
            b"42",
            b"{\"unknownKey\":1}",
            &[b'['; 100_000],
        ];
        let paths: Vec<PathBuf> = settings
            .iter()
            .enumerate()
            .map(|(i, bytes)| scratch.write(&format!("{policy}-settings-{i}"), bytes))
            .collect();
        for (i, answer) in call(&module, "validate_settings", &paths).into_iter().enumerate() {
            match answer {
                Ok(answer) if answer["valid"] == false && answer["message"].is_string() => {}
                other => failures.push(format!(
                    "{policy}/settings-{i}: expected refused settings, got {other:?}"
                )),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} hostile inputs mishandled:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn payload_with_settings(request: &Value, settings: &str) -> Vec<u8> {
    format!("{{\"request\":{request},\"settings\":{settings}}}").into_bytes()
}
