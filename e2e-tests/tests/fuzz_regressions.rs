//! Every input under `fuzz/regressions/<target>/` (inputs a fuzzer once broke a check with),
//! replayed through the built module of its target with the invariants of `syncguard::fuzz`:
//! an answer (no trap), well-formed, no code 500 but a documented lookup failure, identical in a
//! fresh instance, mutations that settle. The built modules run without host capabilities, so
//! context-aware lookups fail here; the core's own test replays the same inputs natively with
//! their cluster objects.

use e2e_tests::{Scratch, all_in_one_module, annotated_module, call_module};
use syncguard_testkit::fuzz;

#[test]
fn fuzz_regressions_replay_through_the_built_modules() {
    let scratch = Scratch::new("fuzz-regressions");
    let mut written = 0;
    let mut failures = Vec::new();
    let mut replayed = 0;
    for target in &fuzz::targets() {
        let module = if target.name == fuzz::ALL_IN_ONE {
            all_in_one_module()
        } else {
            annotated_module(target.name)
        };
        for (name, bytes) in fuzz::regressions(target) {
            let mut evaluate = |operation: fuzz::WapcOperation, payload: &[u8]| {
                written += 1;
                let path = scratch.write(&format!("payload-{written}"), payload);
                call_module(&module, operation.name(), &[path])
                    .pop()
                    .expect("one answer")
            };
            if let Err(broken) = fuzz::check_call(&target.decode(&bytes), &mut evaluate) {
                failures.push(format!("fuzz/regressions/{}/{name}: {broken}", target.name));
            }
            replayed += 1;
        }
    }
    assert!(replayed > 0, "fuzz/regressions/ holds no input");
    assert!(
        failures.is_empty(),
        "{} regressions broke an invariant:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
