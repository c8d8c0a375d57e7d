//! Fuzz target `crd-kind-collision`: the invariants of `syncguard::fuzz` on any input.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(broken) = syncguard::fuzz::check_target("crd-kind-collision", data) {
        panic!("crd-kind-collision: {broken}");
    }
});
