//! The host side that `syncguard scan`, `syncguard run`, the playground and the tests share,
//! with no WebAssembly host in it: reading manifests ([`input`]), the offline cluster that
//! answers context-aware lookups ([`cluster`]) as Kubewarden's reflector would ([`reflector`]),
//! kwctl's replay files ([`replay`]), the `kind-group-clash` and `duplicate-object`
//! tree checks ([`clash`], [`duplicates`]), the
//! `--config` file ([`config`]), the request each object becomes and the verdicts it gets
//! ([`evaluate`]), where a finding's path is in a file ([`locate`]), and the rows the
//! command's JSON and the playground write of them ([`rows`]).
//!
//! The command runs the policy modules through wasmtime; the playground (built with
//! wasm-bindgen for a browser) runs the core checks compiled into it. Both read, answer and
//! report through this crate, so they give the same verdicts.

pub mod clash;
pub mod cluster;
pub mod config;
pub mod copies;
pub mod duplicates;
pub mod evaluate;
pub mod input;
pub mod locate;
pub mod reflector;
pub mod replay;
pub mod rows;
pub mod scalars;

/// The admission operations host code writes and checks: the core's.
pub use syncguard::admission::Operation;
