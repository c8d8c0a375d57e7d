//! Every fixture of every policy through the built, annotated .wasm modules and a real engine:
//! - the verdict, message, warnings and patch match the case's expectation;
//! - the same case evaluated again in a fresh instance gives a byte-identical response;
//! - a mutation applied and evaluated again gives no further patch;
//! - the all-in-one module, with only that check enabled, gives the same verdict, message,
//!   warnings and patch, each message and warning prefixed with the check's name;
//! - both keep the API server's limits on messages and warnings.

use e2e_tests::{
    Engine, RunError, all_in_one_module, annotated_module, bare_module, check_case, parallel_map, parse_response,
    policies, section_key,
};
use serde_json::{Value, json};
use syncguard_testkit::cases::{self as testing, Case};

/// All-in-one settings that run only `policy`, with the case's settings.
fn all_in_one_settings(policy: &str, case: &Case) -> Value {
    let mut settings = json!({});
    for other in policies() {
        settings[section_key(&other)] = json!({"enabled": false});
    }
    let mut own = case.settings.clone().unwrap_or(json!({}));
    if let Some(map) = own.as_object_mut() {
        map.insert("enabled".into(), json!(true));
    }
    settings[section_key(policy)] = own;
    settings
}

/// Whether the all-in-one judges the request at `path` with object-validation, which it runs on
/// what the API server stored only (`syncguard::checks::object_validation::Judged::Stored`): a
/// CRD update (its stored objects) or a stored object the audit sends (a CREATE with a
/// `resourceVersion`).
fn stored_for_the_all_in_one(path: &std::path::Path) -> bool {
    let request = testing::admission_request(path);
    let crd_update = request["operation"] == "UPDATE"
        && request["kind"]["group"] == "apiextensions.k8s.io"
        && request["kind"]["kind"] == "CustomResourceDefinition";
    let stored = request["operation"] == "CREATE"
        && request["object"]["metadata"]["resourceVersion"]
            .as_str()
            .is_some_and(|v| !v.is_empty());
    crd_update || stored
}

fn prefixed(policy: &str, text: &str) -> String {
    format!("{policy}: {text}")
}

struct Job {
    policy: String,
    module: std::path::PathBuf,
    case: Case,
}

fn evaluate(engine: &Engine, all_in_one: &std::path::Path, job: &Job) -> Vec<String> {
    let Job { policy, module, case } = job;
    let name = format!("{policy}/{}", case.name);
    let mut problems = Vec::new();
    let outcome = match check_case(engine, policy, module, case) {
        Ok(outcome) => outcome,
        Err(e) => return vec![format!("{name}: {e}")],
    };
    let settings = case.settings.clone().unwrap_or(json!({}));
    let request = testing::request_path(policy, case).unwrap_or_default();
    let combined = engine.run_raw(policy, all_in_one, case, &all_in_one_settings(policy, case), &request);
    if let Some(expected) = &case.expect.settings_invalid {
        match combined {
            Err(refused @ RunError::SettingsRefused(_)) if refused.to_string().contains(expected.as_str()) => {}
            other => problems.push(format!(
                "{name}: the all-in-one module accepted settings it should refuse: {other:?}"
            )),
        }
        return problems;
    }
    // Determinism: a second evaluation in a fresh instance answers byte for byte the same.
    let first = engine.run_raw(policy, module, case, &settings, &request);
    let second = engine.run_raw(policy, module, case, &settings, &request);
    if first != second {
        problems.push(format!("{name}: two evaluations differ:\n  {first:?}\n  {second:?}"));
    }
    // The API server's limits on what it passes on unshortened (`syncguard::text`).
    for problem in syncguard::text::limits::limit_violations(Some(outcome.message()), outcome.all_warnings()) {
        problems.push(format!("{name}: {problem}"));
    }
    // The all-in-one module with only this check enabled.
    match combined
        .map_err(|e| e.to_string())
        .and_then(|line| parse_response(&line))
    {
        Ok(all) => {
            for problem in syncguard::text::limits::limit_violations(Some(all.message()), all.all_warnings()) {
                problems.push(format!("{name}: all-in-one: {problem}"));
            }
            // The same answer behind the check's name, and the same findings. Each text alone
            // has the API server's whole limit, in the all-in-one what the name leaves: a text
            // that only fitted alone is cut to fit there (the same finding, said shorter).
            // object-validation judges in the all-in-one only what the API server stored
            // (`Judged::Stored`): the object a request writes gets nothing said there.
            let unjudged = policy == "object-validation" && !stored_for_the_all_in_one(&request);
            if unjudged {
                if !all.allowed
                    || !all.message().is_empty()
                    || !all.all_warnings().is_empty()
                    || all.patch.is_some()
                    || all.audit_annotations.is_some()
                {
                    problems.push(format!(
                        "{name}: the all-in-one judged an object a request writes with object-validation: {all:?}"
                    ));
                }
                return problems;
            }
            let same_or_cut = |single: &str, all: &str, limit: usize| {
                let whole = prefixed(policy, single);
                all == whole || (whole.chars().count() > limit && all.starts_with(&format!("{policy}: ")))
            };
            let message_matches = if outcome.message().is_empty() {
                all.message().is_empty()
            } else {
                same_or_cut(outcome.message(), all.message(), syncguard::text::MAX_MESSAGE_CHARS)
            };
            let warnings_match = all.all_warnings().len() == outcome.all_warnings().len()
                && outcome
                    .all_warnings()
                    .iter()
                    .zip(all.all_warnings())
                    .all(|(single, all)| same_or_cut(single, all, syncguard::text::MAX_WARNING_CHARS));
            if all.allowed != outcome.allowed
                || !message_matches
                || !warnings_match
                || all.patch != outcome.patch
                || all.code() != outcome.code()
                || all.audit_annotations != outcome.audit_annotations
            {
                problems.push(format!(
                    "{name}: the all-in-one module differs:\n  single: {outcome:?}\n  all-in-one: {all:?}"
                ));
            }
        }
        Err(e) => problems.push(format!("{name}: the all-in-one module failed: {e}")),
    }
    // Idempotence: the mutated object gets no further patch.
    if let Some(patch) = &outcome.patch_ops() {
        let mut review = testing::admission_request(&request);
        let ops: json_patch::Patch = match serde_json::from_value(patch.clone()) {
            Ok(ops) => ops,
            Err(e) => return vec![format!("{name}: the patch is not RFC 6902: {e}")],
        };
        if let Err(e) = json_patch::patch(&mut review["object"], &ops) {
            problems.push(format!("{name}: the patch does not apply to the object: {e}"));
        } else {
            let path = std::env::temp_dir().join(format!(
                "syncguard-idempotence-{}-{}.json",
                std::process::id(),
                case.name
            ));
            std::fs::write(&path, review.to_string()).expect("write mutated request");
            match engine
                .run_raw(policy, module, case, &settings, &path)
                .map_err(|e| e.to_string())
                .and_then(|l| parse_response(&l))
            {
                Ok(again) if again.patch.is_none() => {}
                Ok(again) => problems.push(format!("{name}: its own output gets another patch: {:?}", again.patch)),
                Err(e) => problems.push(format!("{name}: re-evaluating the mutated object failed: {e}")),
            }
            let _ = std::fs::remove_file(path);
        }
    }
    problems
}

#[test]
fn every_fixture_of_every_policy() {
    let engine = Engine::from_env();
    let all_in_one = all_in_one_module();
    let jobs: Vec<Job> = policies()
        .into_iter()
        .flat_map(|policy| {
            let module = annotated_module(&policy);
            testing::load(&policy).cases.into_iter().map(move |case| Job {
                policy: policy.clone(),
                module: module.clone(),
                case,
            })
        })
        .collect();
    assert!(!jobs.is_empty(), "no cases found");
    let failures: Vec<String> = parallel_map(&jobs, |job| evaluate(&engine, &all_in_one, job))
        .into_iter()
        .flatten()
        .collect();
    assert!(
        failures.is_empty(),
        "{} problems in {} cases with {}:\n{}",
        failures.len(),
        jobs.len(),
        engine.name,
        failures.join("\n")
    );
}

/// Size guards (not goals): a single-check module over 512 KiB fails, object-validation's over
/// 2058 KiB and an all-in-one module over 2360 KiB (the guards issue 29 set were 512 KiB and 1 MiB;
/// they were 256 and 512 KiB until schema compatibility and the public suffix list).
/// object-validation carries the built-in kinds' schemas of Kubernetes 1.24 to 1.35 (about 400 KB)
/// and the CEL engine of `x-kubernetes-validations` (the `cel` crate's interpreter and ANTLR
/// parser), which put it over the 1 MiB issue 46 set. The all-in-one runs object-validation only on
/// stored custom resources and a CRD update's stored objects, so it links neither the built-in
/// kinds' schemas nor their compile, and is over the 2 MiB by the CEL engine alone. The guards are
/// what they weigh plus a few KiB (docs/benchmarks.md says where the bytes go).
/// Kubewarden's own policies weigh 0.7 to 1.7 MB; a module's size is paid once, when the engine
/// compiles it. What is measured is the compiled module; the annotated one that ships adds its
/// metadata and README as a custom section (about 13 to 41 KB of text), which the engine reads
/// but does not compile.
#[test]
fn module_sizes() {
    const SINGLE_LIMIT: u64 = 512 * 1024;
    const OBJECT_VALIDATION_LIMIT: u64 = 2058 * 1024;
    const ALL_IN_ONE_LIMIT: u64 = 2360 * 1024;
    let size_of = |path: std::path::PathBuf| {
        std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; run `make build`", path.display()))
            .len()
    };
    let mut over = Vec::new();
    for policy in policies() {
        let size = size_of(bare_module(&policy));
        let limit = match policy.as_str() {
            "object-validation" => OBJECT_VALIDATION_LIMIT,
            _ => SINGLE_LIMIT,
        };
        if size > limit {
            over.push(format!(
                "{policy}: policy.wasm is {size} bytes, over the {limit}-byte guard"
            ));
        }
    }
    let all_in_one = size_of(bare_module(syncguard::registry::ALL_IN_ONE));
    if all_in_one > ALL_IN_ONE_LIMIT {
        over.push(format!(
            "the all-in-one's policy.wasm is {all_in_one} bytes, over the {ALL_IN_ONE_LIMIT}-byte guard"
        ));
    }
    assert!(over.is_empty(), "{}", over.join("\n"));
}
