//! Fuzz target `crd-safe-upgrade`: the invariants of `syncguard::fuzz` on any input.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(broken) = syncguard::fuzz::check_target("crd-safe-upgrade", data) {
        panic!("crd-safe-upgrade: {broken}");
    }
});
