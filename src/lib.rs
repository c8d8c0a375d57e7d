//! syncguard core: the admission model and one pure module per check.
//!
//! Every check is a function from an admission request, its settings and (for context-aware
//! checks) cluster facts to a [`admission::Verdict`]. Nothing here needs a WebAssembly host:
//! the waPC glue in [`guest`] is compiled only for WASI (`wasm32-wasip1`, the policy modules;
//! the playground builds the core for `wasm32-unknown-unknown` without it), and the policy crates under
//! `policies/` do nothing but call [`guest::register`] with their check.

pub mod admission;
pub mod all_in_one;
pub mod check;
pub mod checks;
pub mod cluster;
#[cfg(any(test, feature = "testing"))]
pub mod fuzz;
pub mod generated;
pub mod k8s;
pub mod reflector;
#[cfg(not(target_os = "wasi"))]
pub mod replay;
pub mod rules;
pub mod settings;
pub mod text;

#[cfg(target_os = "wasi")]
pub mod guest;

#[cfg(any(test, feature = "testing"))]
pub mod testing;

/// The all-in-one policy's waPC entry point: every check in one module (`syncguard.wasm`).
#[cfg(all(target_os = "wasi", feature = "all-in-one"))]
#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    guest::register::<all_in_one::AllInOne>();
}

/// Defines the `wapc_init` entry point of a policy module that runs check `$check` (a no-op
/// outside WASI, so the policy crates also build natively for clippy and docs).
#[macro_export]
macro_rules! export_policy {
    ($check:ty) => {
        /// waPC entry point: registers the policy's operations with the host.
        #[cfg(target_os = "wasi")]
        #[unsafe(no_mangle)]
        pub extern "C" fn wapc_init() {
            $crate::guest::register::<$check>();
        }
    };
}
