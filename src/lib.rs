//! syncguard core: the admission model and one pure module per check.
//!
//! Every check is a function from an admission request, its settings and (for context-aware
//! checks) cluster facts to a [`admission::Verdict`]. Nothing here needs a WebAssembly host:
//! the waPC glue in [`guest`] is compiled only for `wasm32`, and the policy crates under
//! `policies/` do nothing but call [`guest::register`] with their check.

pub mod admission;
pub mod check;
pub mod checks;
pub mod cluster;
pub mod generated;
pub mod k8s;
#[cfg(not(target_arch = "wasm32"))]
pub mod replay;
pub mod rules;
pub mod settings;
pub mod text;

#[cfg(target_arch = "wasm32")]
pub mod guest;

#[cfg(any(test, feature = "testing"))]
pub mod testing;

/// The all-in-one policy's waPC entry point: every check in one module (`syncguard.wasm`).
#[cfg(all(target_arch = "wasm32", feature = "all-in-one"))]
#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    guest::register::<all_in_one::AllInOne>();
}
