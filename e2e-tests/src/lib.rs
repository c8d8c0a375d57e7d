//! End-to-end tests over the built .wasm files; see the tests/ folder.
