//! Every fixture of every policy through the built, annotated .wasm modules and a real engine.

use e2e_tests::{Engine, annotated_module, check_case, policies};
use syncguard::testing;

#[test]
fn every_fixture_of_every_policy() {
    let engine = Engine::from_env();
    let mut failures = Vec::new();
    let mut count = 0;
    for policy in policies() {
        let module = annotated_module(&policy);
        for case in testing::load(&policy).cases {
            count += 1;
            if let Err(e) = check_case(&engine, &policy, &module, &case) {
                failures.push(format!("{policy}/{}: {e}", case.name));
            }
        }
    }
    assert!(count > 0, "no cases found");
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed with {}:\n{}",
        failures.len(),
        engine.name,
        failures.join("\n")
    );
}
