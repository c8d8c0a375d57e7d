//! Fuzz target `all-in-one`: the invariants of `syncguard::fuzz` on any input.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(broken) = syncguard::fuzz::check_target("all-in-one", data) {
        panic!("all-in-one: {broken}");
    }
});
