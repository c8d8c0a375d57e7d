//! Every input under `fuzz/regressions/<target>/` (inputs a fuzzer once broke a check with),
//! replayed through the built module of its target with the invariants of `syncguard::fuzz`:
//! an answer (no trap), well-formed, no code 500 but a documented lookup failure, identical in a
//! fresh instance, mutations that settle. The built modules run without host capabilities, so
//! context-aware lookups fail here; the core's own test replays the same inputs natively with
//! their cluster objects.

use e2e_tests::{Scratch, annotated_module, call_module, root};
use std::cell::Cell;
use std::path::PathBuf;
use syncguard::fuzz;

/// The built module a fuzz target exercises.
fn module(target: &str) -> PathBuf {
    if target == "all-in-one" {
        let path = root().join("annotated-syncguard.wasm");
        assert!(path.is_file(), "{} is missing: run `make build` first", path.display());
        path
    } else {
        annotated_module(target)
    }
}

#[test]
fn fuzz_regressions_replay_through_the_built_modules() {
    let scratch = Scratch::new("fuzz-regressions");
    let written = Cell::new(0usize);
    let mut failures = Vec::new();
    let mut replayed = 0;
    for target in fuzz::TARGETS {
        let module = module(target);
        for (name, bytes) in fuzz::regressions(target) {
            let call = fuzz::decode_for(target, &bytes).expect("a known target");
            let mut evaluate = |operation: fuzz::Operation, payload: &[u8]| {
                written.set(written.get() + 1);
                let path = scratch.write(&format!("payload-{}", written.get()), payload);
                call_module(&module, operation.name(), &[path])
                    .pop()
                    .expect("one answer")
            };
            if let Err(broken) = fuzz::check_call(&call, &mut evaluate) {
                failures.push(format!("fuzz/regressions/{target}/{name}: {broken}"));
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
