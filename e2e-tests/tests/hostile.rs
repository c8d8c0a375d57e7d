//! Hostile input through the built modules: nothing traps or panics, and every input gets the
//! outcome the README's "Hostile input" table promises: code 400 for what cannot be read
//! (`operation: 42`, a payload over 16 MiB, bytes that are not a validation request, refused
//! settings), an acceptance without reading for what no check applies to (DELETE, CONNECT,
//! another operation, a subresource), the depth finding of crd-schema-fields for JSON nested
//! 100,000 levels deep, and for an object of the wrong type the outcome each check's README
//! documents.

use e2e_tests::{Scratch, all_in_one_module, annotated_module, call_module, policies};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use syncguard_scan::Operation;

/// Every module under test: the single policies and the all-in-one.
fn modules() -> Vec<(String, PathBuf)> {
    let mut modules: Vec<(String, PathBuf)> = policies()
        .into_iter()
        .map(|p| (p.clone(), annotated_module(&p)))
        .collect();
    modules.push(("syncguard".into(), all_in_one_module()));
    modules
}

/// A request each module applies to, with markers that make every check parse the object.
fn base_request(policy: &str) -> Value {
    let (group, kind, resource) = match policy {
        "hook-job-safety" => ("batch", "Job", "jobs"),
        "ownership-markers" => ("", "ConfigMap", "configmaps"),
        _ => (
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            "customresourcedefinitions",
        ),
    };
    let version = "v1";
    json!({
        "uid": "hostile",
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": resource},
        "name": "hostile",
        "namespace": "default",
        "operation": Operation::Create,
        "userInfo": {"username": "fuzzer"},
        "object": {
            "apiVersion": if group.is_empty() { "v1".to_string() } else { format!("{group}/{version}") },
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

/// What a hostile input must get; in every case the module must answer (no trap).
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// The verdict of the well-formed base request (a field no check reads, or one whose
    /// value is of the right type): accepted or not, with the same code.
    Base,
    /// A rejection with this code.
    Rejected(u16),
    /// A rejection with this code whose message holds this text (what could not be read).
    RejectedSaying(u16, &'static str),
    /// A rejection without a code whose message holds this text.
    RejectedWith(&'static str),
    /// A rejection, with any code, whose message holds this text.
    MessageHolds(&'static str),
    /// An acceptance.
    Allowed,
}

fn check(expect: Expect, answer: &Result<Value, String>, base: &Value) -> Result<(), String> {
    let answer = answer
        .as_ref()
        .map_err(|e| format!("the module trapped or failed: {e}"))?;
    let accepted = answer["accepted"]
        .as_bool()
        .ok_or_else(|| format!("not a validation response: {answer}"))?;
    let met = match expect {
        Expect::Base => answer["accepted"] == base["accepted"] && answer["code"] == base["code"],
        Expect::Rejected(code) => !accepted && answer["code"] == code,
        Expect::RejectedSaying(code, text) => {
            !accepted && answer["code"] == code && answer["message"].as_str().is_some_and(|m| m.contains(text))
        }
        Expect::RejectedWith(text) => {
            !accepted && answer["code"].is_null() && answer["message"].as_str().is_some_and(|m| m.contains(text))
        }
        Expect::MessageHolds(text) => !accepted && answer["message"].as_str().is_some_and(|m| m.contains(text)),
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

/// The README's outcome for an object that is not a JSON object, or is missing: the CRD checks
/// cannot read a CRD (code 400); hook-job-safety and ownership-markers accept unparsed an
/// object without their markers (their quick filter).
fn not_an_object(policy: &str) -> Expect {
    match policy {
        "hook-job-safety" | "ownership-markers" => Expect::Allowed,
        _ => Expect::Rejected(400),
    }
}

/// The README's outcome for an object without any field a check reads (`{}`, or `{"x": 1}`
/// when `unknown` is set): no CRD check finds a kind to check, crd-schema-fields reports the
/// unknown field `x` (the API server drops it), and no marker of the other checks is there.
fn no_known_field(policy: &str, unknown: bool) -> Expect {
    match (policy, unknown) {
        ("crd-schema-fields", true) => Expect::RejectedWith("1 field the API server drops"),
        ("syncguard", true) => Expect::RejectedWith("crd-schema-fields: "),
        ("crd-safe-upgrade" | "crd-schema-fields", _) => Expect::Base,
        _ => Expect::Allowed,
    }
}

/// The README's outcome for a field of the object of the wrong JSON type (`null` counts as
/// absent everywhere):
/// - crd-safe-upgrade cannot read a CRD whose `metadata`, `spec` or `status` has the wrong type
///   (code 400); crd-kind-collision reads only `metadata` and `spec` (code 400), not `status`,
///   and a CRD without `spec` serves no kind, which it accepts;
/// - crd-schema-fields does not report values of the wrong type (the API server refuses them);
/// - hook-job-safety cannot read a Job whose `spec` or `status` has the wrong type (code 400);
/// - ownership-markers reads `apiVersion`, `kind` and `metadata` (code 400 when they have the
///   wrong type), and accepts unparsed an object whose markers are gone with its `metadata`;
/// - the all-in-one gives the first check's code, and without one the rejection of
///   ownership-markers, which the base object's markers trigger.
fn object_field(policy: &str, field: &str, wrong: &Value) -> Expect {
    let crd_part = matches!(field, "metadata" | "spec" | "status");
    match policy {
        "crd-kind-collision" if field == "status" => Expect::Base,
        "crd-safe-upgrade" | "crd-kind-collision" | "syncguard" if crd_part && !wrong.is_null() => {
            Expect::Rejected(400)
        }
        "crd-kind-collision" if field == "spec" => Expect::Allowed,
        "syncguard" if field == "spec" => Expect::RejectedWith("ownership-markers: "),
        "hook-job-safety" if matches!(field, "spec" | "status") && !wrong.is_null() => Expect::Rejected(400),
        "ownership-markers" if field == "metadata" => Expect::Allowed,
        "ownership-markers" if matches!(field, "apiVersion" | "kind") && !wrong.is_null() && !wrong.is_string() => {
            Expect::Rejected(400)
        }
        _ => Expect::Base,
    }
}

/// The README's outcome for JSON nested 100,000 levels deep inside `spec.versions` (arrays,
/// not schemas): crd-safe-upgrade cannot read `spec.versions` as a CRD's (code 400), alone or
/// first in the all-in-one; crd-schema-fields does not report values of the wrong type, and the
/// other checks (crd-kind-collision among them) do not read that part.
fn deeply_nested(policy: &str) -> Expect {
    match policy {
        "crd-safe-upgrade" | "syncguard" => Expect::Rejected(400),
        _ => Expect::Base,
    }
}

/// The README's outcome for a schema nested 100,000 levels deep (`not` in `not`):
/// crd-schema-fields, alone or in the all-in-one, reports the depth finding.
fn deep_schema(policy: &str) -> Expect {
    match policy {
        "crd-schema-fields" => Expect::RejectedWith("nesting deeper than 100 levels"),
        "syncguard" => Expect::MessageHolds("nesting deeper than 100 levels"),
        _ => Expect::Base,
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
        // A resource that names nothing: only the rule of ownership-markers (`*`) covers it.
        ("resource", true) => Expect::Allowed,
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
        let base = base_request(&policy);
        let mut inputs: Vec<(String, Vec<u8>, Expect)> = Vec::new();
        // First the well-formed request, whose answer some inputs must keep.
        inputs.push(("base".into(), payload(&base.to_string()), Expect::Base));
        // JSON nested 100,000 levels deep inside the object.
        let deep = base
            .to_string()
            .replacen("\"versions\":[]", &format!("\"versions\":{}", nested(100_000)), 1);
        inputs.push(("nested-100000".into(), payload(&deep), deeply_nested(&policy)));
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
            deep_schema(&policy),
        ));
        // A 20 MB object: more than a policy reads.
        let mut big = base.clone();
        big["object"]["data"] = json!({"blob": "x".repeat(20 * 1024 * 1024)});
        inputs.push((
            "object-20MB".into(),
            payload(&big.to_string()),
            Expect::RejectedSaying(400, "bytes a policy reads"),
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
                    "object" if !wrong.is_object() => not_an_object(&policy),
                    // An object with none of the fields a check reads: CRD checks cannot read
                    // it as a CRD, and it carries no marker for the others.
                    "object" => no_known_field(&policy, true),
                    // The old object is not read on CREATE.
                    "oldObject" => Expect::Base,
                    "resource" if wrong.is_object() && policy == "ownership-markers" => Expect::Base,
                    // A kind that names nothing: a check that judges certain kinds does not
                    // judge it (ownership-markers judges every kind).
                    "kind" if wrong.is_object() && policy == "ownership-markers" => Expect::Base,
                    "kind" if wrong.is_object() && policy == "syncguard" => Expect::RejectedWith("ownership-markers: "),
                    "kind" if wrong.is_object() => Expect::Allowed,
                    "resource" if wrong.is_object() && policy == "syncguard" => {
                        Expect::RejectedWith("ownership-markers: ")
                    }
                    _ => request_field(field, &wrong),
                };
                inputs.push((
                    format!("wrong-type-{field}-{wrong}"),
                    payload(&request.to_string()),
                    expect,
                ));
            }
        }
        for field in ["apiVersion", "kind", "metadata", "spec", "status"] {
            for wrong in [json!(42), json!("x"), json!(["x"]), json!(null)] {
                let mut request = base.clone();
                request["object"][field] = wrong.clone();
                inputs.push((
                    format!("wrong-type-object.{field}-{wrong}"),
                    payload(&request.to_string()),
                    object_field(&policy, field, &wrong),
                ));
            }
        }
        // Empty and missing objects.
        let mut empty = base.clone();
        empty["object"] = json!({});
        inputs.push((
            "empty-object".into(),
            payload(&empty.to_string()),
            no_known_field(&policy, false),
        ));
        let mut missing = base.clone();
        missing.as_object_mut().expect("object").remove("object");
        // The one rule of every check for a request without an object: code 400.
        inputs.push((
            "missing-object".into(),
            payload(&missing.to_string()),
            Expect::RejectedSaying(400, "the request carries no object to check"),
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
        if !matches!(policy.as_str(), "ownership-markers" | "sync-drift" | "syncguard") {
            let mut other = unread.clone();
            other["resource"] = json!({"group": "", "version": "v1", "resource": "pods"});
            other["kind"] = json!({"group": "", "version": "v1", "kind": "Pod"});
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
            Expect::RejectedSaying(400, "the admission request is not valid UTF-8 JSON"),
        ));
        const UNREADABLE: Expect = Expect::RejectedSaying(400, "syncguard: cannot read the admission request");
        inputs.push(("not-json".into(), b"not json".to_vec(), UNREADABLE));
        inputs.push(("empty-payload".into(), Vec::new(), UNREADABLE));
        inputs.push(("array".into(), b"[1,2,3]".to_vec(), UNREADABLE));
        inputs.push((
            "truncated".into(),
            b"{\"request\":{\"object\":{\"a\":".to_vec(),
            UNREADABLE,
        ));
        inputs.push((
            "settings-not-object".into(),
            payload_with_settings(&base, "[1]"),
            Expect::RejectedSaying(400, "invalid settings"),
        ));

        let paths: Vec<PathBuf> = inputs
            .iter()
            .enumerate()
            .map(|(i, (_, bytes, _))| scratch.write(&format!("{policy}-{i}"), bytes))
            .collect();
        let answers = call(&module, "validate", &paths);
        let base_answer = answers[0].clone().unwrap_or_default();
        for ((name, _, expect), answer) in inputs.iter().zip(&answers) {
            if let Err(problem) = check(*expect, answer, &base_answer) {
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
