//! The fuzzing harness: how fuzz input bytes become waPC calls, and the invariants every answer
//! must keep. The cargo-fuzz target under `fuzz/`, the native replay of `fuzz/regressions/`
//! (this module's tests) and its replay through the built .wasm files (`e2e-tests`) share it.
//! There is a target per check of the registry, and one for the all-in-one ([`targets`]).
//!
//! Input format (the first byte picks the mode, modulo 3):
//! - `0`: the rest is a raw `validate` payload;
//! - `1`: the rest is a raw `validate_settings` payload;
//! - `2`: a well-formed request built from parts: the next byte picks the operation
//!   (`CREATE`, `UPDATE`, `DELETE`, `CONNECT`, modulo 4), and the rest is split on `0xFF`
//!   (never part of UTF-8 text) into the object, the old object, the settings and the cluster's
//!   objects (a JSON array), each JSON or empty. A part that is not JSON is left out.

use serde_json::{Value, json};
use syncguard::admission::{Operation, SettingsValidationResponse, ValidationResponse};
use syncguard::all_in_one::AllInOne;
use syncguard::check;
use syncguard::cluster::Cluster;
use syncguard::registry::{self, CHECKS, Entry};
use syncguard::rules::Rule;
use syncguard_scan::cluster::OfflineCluster;

/// Mode byte: the rest is a raw `validate` payload.
pub const RAW_VALIDATE: u8 = 0;
/// Mode byte: the rest is a raw `validate_settings` payload.
pub const RAW_SETTINGS: u8 = 1;
/// Mode byte: a request built from parts.
pub const STRUCTURED: u8 = 2;
/// Separates the parts of a structured input.
pub const SEPARATOR: u8 = 0xFF;
/// The admission operations a structured input can carry, picked by its second byte (in this
/// order, which the corpora's inputs rely on).
pub const OPERATIONS: [Operation; 4] = Operation::ALL;

/// The waPC operations a fuzz input is sent to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WapcOperation {
    /// `validate`.
    Validate,
    /// `validate_settings`.
    ValidateSettings,
    /// `report`: the structured report of a `validate` payload.
    Report,
}

impl WapcOperation {
    /// The waPC operation name.
    pub fn name(self) -> &'static str {
        match self {
            WapcOperation::Validate => "validate",
            WapcOperation::ValidateSettings => "validate_settings",
            WapcOperation::Report => check::REPORT,
        }
    }
}

/// One waPC call derived from a fuzz input.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The waPC operation.
    pub operation: WapcOperation,
    /// The payload bytes.
    pub payload: Vec<u8>,
    /// Objects the cluster holds (structured inputs only; the built modules replayed without
    /// host capabilities see a cluster whose lookups fail instead).
    pub cluster: Vec<Value>,
}

/// Turns fuzz input into a call to a check registered for `rules` (see the module docs).
pub fn decode(rules: &[Rule], data: &[u8]) -> Call {
    let Some((&mode, rest)) = data.split_first() else {
        return Call {
            operation: WapcOperation::Validate,
            payload: Vec::new(),
            cluster: Vec::new(),
        };
    };
    match mode % 3 {
        RAW_VALIDATE => Call {
            operation: WapcOperation::Validate,
            payload: rest.to_vec(),
            cluster: Vec::new(),
        },
        RAW_SETTINGS => Call {
            operation: WapcOperation::ValidateSettings,
            payload: rest.to_vec(),
            cluster: Vec::new(),
        },
        _ => structured(rules, rest),
    }
}

fn structured(rules: &[Rule], data: &[u8]) -> Call {
    let (operation, rest) = match data.split_first() {
        Some((&op, rest)) => (OPERATIONS[usize::from(op) % OPERATIONS.len()], rest),
        None => (OPERATIONS[0], data),
    };
    let mut parts = rest.split(|b| *b == SEPARATOR).map(|part| {
        if part.is_empty() {
            None
        } else {
            serde_json::from_slice::<Value>(part).ok()
        }
    });
    let mut next = || parts.next().flatten();
    let (object, old_object, settings, cluster) = (next(), next(), next(), next());
    let identity = object.as_ref().or(old_object.as_ref());
    let (group, version, kind, resource) = resource_for(rules, identity);
    let mut request = json!({
        "uid": "fuzz",
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": resource},
        "requestKind": {"group": group, "version": version, "kind": kind},
        "name": identity.and_then(|o| o["metadata"]["name"].as_str()).unwrap_or("fuzz"),
        "operation": operation,
        "userInfo": {"username": "fuzzer"},
    });
    if let Some(namespace) = identity.and_then(|o| o["metadata"]["namespace"].as_str()) {
        request["namespace"] = json!(namespace);
    }
    if let Some(object) = object {
        request["object"] = object;
    }
    if let Some(old_object) = old_object {
        request["oldObject"] = old_object;
    }
    let cluster = match cluster {
        Some(Value::Array(objects)) => objects,
        _ => Vec::new(),
    };
    Call {
        operation: WapcOperation::Validate,
        payload: json!({"request": request, "settings": settings.unwrap_or_else(|| json!({}))})
            .to_string()
            .into_bytes(),
        cluster,
    }
}

/// Group, version, kind and resource of a request about `object`: the built-in resource its
/// `apiVersion` and `kind` name, a custom resource's lowercase plural, or, for an object that
/// says neither, the first resource `rules` name.
fn resource_for(rules: &[Rule], object: Option<&Value>) -> (String, String, String, String) {
    let api_version = object.and_then(|o| o["apiVersion"].as_str());
    let kind = object.and_then(|o| o["kind"].as_str());
    if let (Some(api_version), Some(kind)) = (api_version, kind) {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let plural = syncguard::generated::builtin_kinds(kind)
            .find(|r| r.group == group && !r.subresource && !r.plural.is_empty())
            .map_or_else(|| format!("{}s", kind.to_lowercase()), |r| r.plural.to_string());
        return (group.into(), version.into(), kind.into(), plural);
    }
    let named = rules.iter().find_map(|rule| {
        let resource = rule.resources.iter().find(|r| **r != "*" && !r.contains('/'))?;
        let group = rule.api_groups.iter().find(|g| **g != "*")?;
        let version = rule.api_versions.iter().find(|v| **v != "*")?;
        let kind = syncguard::generated::builtin_resources()
            .find(|r| r.group == *group && r.plural == *resource)?
            .kind;
        Some(((*group).into(), (*version).into(), kind.into(), (*resource).into()))
    });
    named.unwrap_or_else(|| ("".into(), "v1".into(), "ConfigMap".into(), "configmaps".into()))
}

/// Checks every invariant of `target` on one call, evaluated natively with its cluster.
pub fn check_native(target: &Target, call: &Call) -> Result<(), String> {
    let cluster = OfflineCluster::of_objects(&call.cluster);
    check_call(call, &mut |operation, payload| {
        Ok(match operation {
            WapcOperation::Validate => (target.validate)(payload, &cluster),
            WapcOperation::ValidateSettings => (target.validate_settings)(payload),
            WapcOperation::Report => (target.report)(payload, &cluster),
        })
    })
}

/// The evaluator [`check_call`] drives: answers one operation on one payload in a fresh
/// instance, or says why the guest gave no answer (a trap, a guest error).
pub type Evaluate<'a> = dyn FnMut(WapcOperation, &[u8]) -> Result<Vec<u8>, String> + 'a;

/// Checks the invariants every answer keeps, whatever the input:
/// - the guest answers (no trap, no panic) with a well-formed response;
/// - no code 500: bad input is the sender's fault (400) or a decision, never an internal
///   error; the one exception is a documented cluster-lookup failure that fails closed;
/// - every rejection and every refused settings document says why;
/// - messages and warnings keep the API server's size limits (`syncguard::text::limits`);
/// - the same payload in a fresh instance gets byte-identical answers;
/// - settings `validate_settings` accepts are also accepted by `validate`;
/// - a mutated object, sent back, is accepted with no further change;
/// - the `report` of a `validate` payload holds `validate`'s answer byte for byte, and every
///   finding its audit annotation counts.
pub fn check_call(call: &Call, evaluate: &mut Evaluate<'_>) -> Result<(), String> {
    let first = evaluate(call.operation, &call.payload)?;
    let second = evaluate(call.operation, &call.payload)?;
    if first != second {
        return Err(format!(
            "two fresh evaluations differ:\n{}\n{}",
            String::from_utf8_lossy(&first),
            String::from_utf8_lossy(&second)
        ));
    }
    match call.operation {
        WapcOperation::ValidateSettings => check_settings_answer(&call.payload, &first, evaluate),
        WapcOperation::Validate => {
            let response = validation_response(&first)?;
            check_report(&call.payload, &first, &response, evaluate)?;
            match response.mutated_object {
                Some(mutated) => check_mutation_settles(&call.payload, &mutated, evaluate),
                None => Ok(()),
            }
        }
        WapcOperation::Report => Ok(()),
    }
}

/// The `report` of `payload` holds `answer`, `validate`'s, byte for byte, and as many findings
/// as its audit annotation counts.
fn check_report(
    payload: &[u8],
    answer: &[u8],
    response: &ValidationResponse,
    evaluate: &mut Evaluate<'_>,
) -> Result<(), String> {
    let report = evaluate(WapcOperation::Report, payload)?;
    let head = [b"{\"response\":".as_slice(), answer, b",\"findings\":"].concat();
    if !report.starts_with(&head) {
        return Err(format!(
            "the report does not hold validate's answer:\n{}\n{}",
            String::from_utf8_lossy(answer),
            String::from_utf8_lossy(&report)
        ));
    }
    let report: syncguard::render::ReportAnswer = serde_json::from_slice(&report)
        .map_err(|e| format!("not a report ({e}): {}", String::from_utf8_lossy(&report)))?;
    let counted = response
        .audit_annotations
        .as_ref()
        .and_then(|annotations| annotations.get(syncguard::render::FINDINGS_ANNOTATION))
        .and_then(|value| serde_json::from_str::<syncguard::render::Annotation>(value).ok())
        .map_or(0, |annotation| annotation.total);
    if report.findings.len() != counted {
        return Err(format!(
            "the report gives {} findings, the audit annotation counts {counted}",
            report.findings.len()
        ));
    }
    Ok(())
}

/// Reads a `validate` answer and checks it is a proper decision.
fn validation_response(answer: &[u8]) -> Result<ValidationResponse, String> {
    let response = check::decode_response(answer)
        .map_err(|e| format!("not a validation response ({e}): {}", String::from_utf8_lossy(answer)))?;
    let lookup_failure = response
        .message
        .as_deref()
        .is_some_and(|m| m.contains(syncguard::checks::crd_kind_collision::LOOKUP_FAILURE_MARK));
    if response.code == Some(500) && !lookup_failure {
        return Err(format!("internal error: {}", String::from_utf8_lossy(answer)));
    }
    if !response.accepted && response.message.as_deref().is_none_or(str::is_empty) {
        return Err(format!(
            "a rejection without a message: {}",
            String::from_utf8_lossy(answer)
        ));
    }
    let too_long = syncguard::text::limits::limit_violations(
        response.message.as_deref(),
        response.warnings.as_deref().unwrap_or_default(),
    );
    if !too_long.is_empty() {
        return Err(format!("{}: {}", too_long.join("; "), String::from_utf8_lossy(answer)));
    }
    if response.accepted && response.code.is_some() {
        return Err(format!(
            "an acceptance with a code: {}",
            String::from_utf8_lossy(answer)
        ));
    }
    Ok(response)
}

fn check_settings_answer(payload: &[u8], answer: &[u8], evaluate: &mut Evaluate<'_>) -> Result<(), String> {
    let response: SettingsValidationResponse = serde_json::from_slice(answer).map_err(|e| {
        format!(
            "not a settings validation response ({e}): {}",
            String::from_utf8_lossy(answer)
        )
    })?;
    if !response.valid {
        return match response.message.as_deref() {
            Some(message) if !message.is_empty() => Ok(()),
            _ => Err(format!(
                "settings refused without a message: {}",
                String::from_utf8_lossy(answer)
            )),
        };
    }
    // Settings that validate must be usable: `validate` reads them the same way.
    let settings = std::str::from_utf8(payload).map_err(|e| format!("accepted settings that are not UTF-8: {e}"))?;
    let request = format!("{{\"request\":{{\"uid\":\"fuzz\",\"operation\":\"CONNECT\"}},\"settings\":{settings}}}");
    let response = validation_response(&evaluate(WapcOperation::Validate, request.as_bytes())?)?;
    match response.message {
        Some(message) if !response.accepted && message.contains(check::INVALID_SETTINGS) => Err(format!(
            "validate_settings accepted settings that validate refuses: {message}"
        )),
        _ => Ok(()),
    }
}

fn check_mutation_settles(payload: &[u8], mutated: &Value, evaluate: &mut Evaluate<'_>) -> Result<(), String> {
    let mut again: Value =
        serde_json::from_slice(payload).map_err(|e| format!("a mutation of a request that is not JSON: {e}"))?;
    again["request"]["object"] = mutated.clone();
    let response = validation_response(&evaluate(WapcOperation::Validate, again.to_string().as_bytes())?)?;
    if !response.accepted {
        return Err(format!(
            "the mutated object is rejected: {}",
            response.message.unwrap_or_default()
        ));
    }
    match response.mutated_object {
        Some(further) if &further != mutated => Err(format!(
            "the mutated object is mutated again:\nfirst:  {mutated}\nsecond: {further}"
        )),
        _ => Ok(()),
    }
}

/// One fuzz target: a check of the registry, or the all-in-one.
#[derive(Clone, Copy)]
pub struct Target {
    /// The target's name: the check's, or the all-in-one's ([`ALL_IN_ONE`]).
    pub name: &'static str,
    /// The admission rules, which shape structured requests.
    pub rules: &'static [Rule],
    /// The check's section of the all-in-one settings (empty for the all-in-one itself).
    pub settings_key: &'static str,
    /// The `validate` operation.
    pub validate: fn(&[u8], &dyn Cluster) -> Vec<u8>,
    /// The `validate_settings` operation.
    pub validate_settings: fn(&[u8]) -> Vec<u8>,
    /// The `report` operation.
    pub report: fn(&[u8], &dyn Cluster) -> Vec<u8>,
}

impl Target {
    /// The target of a check of the registry.
    pub fn of(entry: &Entry) -> Target {
        Target {
            name: entry.name,
            rules: entry.rules,
            settings_key: entry.settings_key,
            validate: entry.validate,
            validate_settings: entry.validate_settings,
            report: entry.report,
        }
    }
}

/// The all-in-one policy's target name.
pub const ALL_IN_ONE: &str = registry::ALL_IN_ONE;

/// The fuzz targets: one per check of the registry, then the all-in-one policy.
pub fn targets() -> Vec<Target> {
    let mut targets: Vec<Target> = CHECKS.iter().map(Target::of).collect();
    targets.push(Target {
        name: ALL_IN_ONE,
        rules: syncguard::all_in_one::RULES,
        settings_key: "",
        validate: check::handle_validate::<AllInOne>,
        validate_settings: check::handle_validate_settings::<AllInOne>,
        report: check::handle_report::<AllInOne>,
    });
    targets
}

impl Target {
    /// The target called `name`.
    pub fn named(name: &str) -> Option<Target> {
        targets().into_iter().find(|t| t.name == name)
    }

    /// Turns fuzz input into this target's call.
    pub fn decode(&self, data: &[u8]) -> Call {
        decode(self.rules, data)
    }
}

/// Checks fuzz input for the target called `name` natively, as the cargo-fuzz target does.
pub fn check_target(name: &str, data: &[u8]) -> Result<(), String> {
    let target = Target::named(name).ok_or_else(|| format!("unknown fuzz target {name}"))?;
    check_native(&target, &target.decode(data))
}

/// Encodes a structured input (the inverse of [`decode`] for mode [`STRUCTURED`]).
pub fn structured_input(operation: Operation, parts: [Option<&Value>; 4]) -> Vec<u8> {
    let op = OPERATIONS.iter().position(|o| *o == operation).unwrap_or(0);
    let mut bytes = vec![STRUCTURED, op as u8];
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            bytes.push(SEPARATOR);
        }
        if let Some(value) = part {
            bytes.extend_from_slice(value.to_string().as_bytes());
        }
    }
    bytes
}

/// Seed inputs for `target` from the fixtures of its policy (every policy's for the all-in-one,
/// settings moved into the check's section): each case as a raw payload, as a structured input,
/// and its settings alone. Inputs over `max_len` bytes are left out.
pub fn seeds(target: &Target, max_len: usize) -> Vec<Vec<u8>> {
    let checks: Vec<Target> = if target.name == ALL_IN_ONE {
        CHECKS.iter().map(Target::of).collect()
    } else {
        vec![*target]
    };
    let mut seeds = Vec::new();
    for check in checks {
        let policy = check.name;
        let dir = crate::cases::test_data(policy);
        for case in crate::cases::load(policy).cases {
            let mut settings = case.settings.clone().unwrap_or_else(|| json!({}));
            if target.name == ALL_IN_ONE {
                // The all-in-one reads each check's settings from that check's section.
                settings = json!({ check.settings_key: settings });
            }
            let mut raw = vec![RAW_SETTINGS];
            raw.extend_from_slice(settings.to_string().as_bytes());
            seeds.push(raw);
            let Some(request) = crate::cases::request_of(policy, &case) else {
                continue;
            };
            let cluster = case
                .replay
                .as_ref()
                .and_then(|replay| std::fs::read_to_string(dir.join(replay)).ok())
                .and_then(|text| syncguard_scan::replay::Replay::parse(&text).ok())
                .map(|replay| Value::Array(replay.listed_objects()));
            let mut raw = vec![RAW_VALIDATE];
            raw.extend_from_slice(json!({"request": request, "settings": settings}).to_string().as_bytes());
            seeds.push(raw);
            seeds.push(structured_input(
                serde_json::from_value(request["operation"].clone()).unwrap_or(Operation::Create),
                [
                    request.get("object"),
                    request.get("oldObject"),
                    Some(&settings),
                    cluster.as_ref(),
                ],
            ));
        }
    }
    seeds.retain(|seed| seed.len() <= max_len);
    seeds.sort();
    seeds.dedup();
    seeds
}

/// The regression inputs of `target` under `fuzz/regressions/<name>/`, with their file names.
pub fn regressions(target: &Target) -> Vec<(String, Vec<u8>)> {
    let dir = crate::root().join("fuzz/regressions").join(target.name);
    let mut inputs: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| entry.path().is_file())
        .map(|entry| {
            let bytes = std::fs::read(entry.path()).unwrap_or_else(|e| panic!("{}: {e}", entry.path().display()));
            (entry.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    inputs.sort();
    inputs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structured_inputs_round_trip_through_decode() {
        let object = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "n"}});
        let settings = json!({"a": 1});
        let bytes = structured_input(Operation::Update, [Some(&object), None, Some(&settings), None]);
        let call = decode(syncguard::all_in_one::RULES, &bytes);
        assert_eq!(call.operation, WapcOperation::Validate);
        let payload: Value = serde_json::from_slice(&call.payload).unwrap();
        assert_eq!(payload["settings"], settings);
        assert_eq!(payload["request"]["object"], object);
        assert_eq!(payload["request"]["operation"], "UPDATE");
        assert_eq!(payload["request"]["resource"]["resource"], "jobs");
        assert_eq!(payload["request"]["namespace"], "n");
        assert!(payload["request"].get("oldObject").is_none());
    }

    #[test]
    fn objects_without_identity_get_the_checks_own_resource() {
        let call = decode(syncguard::rules::CRD_SCHEMA_FIELDS, &[STRUCTURED, 0]);
        let payload: Value = serde_json::from_slice(&call.payload).unwrap();
        assert_eq!(payload["request"]["resource"]["resource"], "customresourcedefinitions");
        assert_eq!(payload["request"]["kind"]["kind"], "CustomResourceDefinition");
    }

    #[test]
    fn raw_modes_pass_bytes_through() {
        assert_eq!(decode(&[], b"\x00abc").payload, b"abc");
        let settings = decode(&[], b"\x04{}");
        assert_eq!(settings.operation, WapcOperation::ValidateSettings);
        assert_eq!(settings.payload, b"{}");
    }

    #[test]
    fn the_invariants_catch_a_misbehaving_guest() {
        let call = decode(&[], b"\x00{}");
        let mut flaky = 0;
        let mut nondeterministic = |_: WapcOperation, _: &[u8]| {
            flaky += 1;
            Ok(format!("{{\"accepted\":true,\"n\":{flaky}}}").into_bytes())
        };
        assert!(check_call(&call, &mut nondeterministic).unwrap_err().contains("differ"));
        let mut internal =
            |_: WapcOperation, _: &[u8]| Ok(b"{\"accepted\":false,\"message\":\"x\",\"code\":500}".to_vec());
        assert!(check_call(&call, &mut internal).unwrap_err().contains("internal error"));
        let mut silent = |_: WapcOperation, _: &[u8]| Ok(b"{\"accepted\":false}".to_vec());
        assert!(
            check_call(&call, &mut silent)
                .unwrap_err()
                .contains("without a message")
        );
        let mut trap = |_: WapcOperation, _: &[u8]| Err("wasm trap: unreachable".to_string());
        assert!(check_call(&call, &mut trap).unwrap_err().contains("trap"));
    }

    #[test]
    fn seeds_cover_every_target() {
        for target in &targets() {
            let seeds = seeds(target, usize::MAX);
            assert!(
                seeds.iter().any(|s| s[0] == STRUCTURED),
                "{} has no structured seed",
                target.name
            );
            for seed in &seeds {
                check_target(target.name, seed)
                    .unwrap_or_else(|e| panic!("{}: a seed breaks an invariant: {e}", target.name));
            }
        }
    }

    /// Every input a fuzzer once broke a check with, replayed natively (the end-to-end suite
    /// replays them through the built modules).
    #[test]
    fn regressions_replay_natively() {
        let mut replayed = 0;
        for target in &targets() {
            for (name, bytes) in regressions(target) {
                check_target(target.name, &bytes)
                    .unwrap_or_else(|e| panic!("fuzz/regressions/{}/{name}: {e}", target.name));
                replayed += 1;
            }
        }
        assert!(replayed > 0, "fuzz/regressions/ holds no input");
    }
}
