//! syncguard core: the admission model and one pure module per check.
//!
//! Every check is a function from an admission request, its settings and (for context-aware
//! checks) cluster facts to findings ([`finding`]), which one renderer ([`render`]) turns into
//! Kubewarden's answer. The contract is in [`check`], the list of checks in [`registry`].
//! Nothing here needs a WebAssembly host: the waPC glue in [`guest`] is compiled only for WASI
//! (`wasm32-wasip1`, the policy modules; the playground builds the core for
//! `wasm32-unknown-unknown` without it), and the policy crates under `policies/` do nothing but
//! [`export_policy!`] their check.

pub mod admission;
pub mod all_in_one;
pub mod check;
pub mod checks;
pub mod cluster;
pub mod finding;
pub mod generated;
pub mod json;
pub mod k8s;
pub mod registry;
pub mod render;
pub mod rules;
pub mod settings;
pub mod text;

#[cfg(target_os = "wasi")]
pub mod guest;

/// Defines the `wapc_init` entry point of a policy module that runs `$policy`, a check or the
/// all-in-one (a no-op outside WASI, so the policy crates also build natively for clippy and
/// docs).
#[macro_export]
macro_rules! export_policy {
    ($policy:ty) => {
        /// waPC entry point: registers the policy's operations with the host.
        #[cfg(target_os = "wasi")]
        #[unsafe(no_mangle)]
        pub extern "C" fn wapc_init() {
            $crate::guest::register::<$policy>();
        }
    };
}
