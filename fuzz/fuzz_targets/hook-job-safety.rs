//! Fuzz target `hook-job-safety`: the invariants of `syncguard::fuzz` on any input.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(broken) = syncguard::fuzz::check_target("hook-job-safety", data) {
        panic!("hook-job-safety: {broken}");
    }
});
