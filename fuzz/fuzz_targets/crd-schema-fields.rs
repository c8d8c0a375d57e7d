//! Fuzz target `crd-schema-fields`: the invariants of `syncguard::fuzz` on any input.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(broken) = syncguard::fuzz::check_target("crd-schema-fields", data) {
        panic!("crd-schema-fields: {broken}");
    }
});
