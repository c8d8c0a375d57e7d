//! The fuzz target of every policy: the invariants of `syncguard_testkit::fuzz` on any input,
//! for the check named by `SYNCGUARD_FUZZ_TARGET` (a check of the registry, or `syncguard` for
//! the all-in-one). `make fuzz` runs it once per target, each with its own corpus, so a check
//! added to the registry is fuzzed without a target of its own.
#![no_main]

use std::sync::OnceLock;
use syncguard_testkit::fuzz::Target;

/// The target this process fuzzes, read once.
fn target() -> &'static Target {
    static TARGET: OnceLock<Target> = OnceLock::new();
    TARGET.get_or_init(|| {
        let name = std::env::var("SYNCGUARD_FUZZ_TARGET").unwrap_or_else(|_| {
            panic!("set SYNCGUARD_FUZZ_TARGET to a check of the registry or to the all-in-one (`make fuzz` does)")
        });
        Target::named(&name).unwrap_or_else(|| panic!("SYNCGUARD_FUZZ_TARGET: no fuzz target named {name}"))
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let target = target();
    if let Err(broken) = syncguard_testkit::fuzz::check_native(target, &target.decode(data)) {
        panic!("{}: {broken}", target.name);
    }
});
