//! The benchmark floor: accepts every request without reading it, so the engine's own cost of
//! a `validate` call (instance, payload copy, response) can be measured beside each policy.

use syncguard_floor::wapc_guest::CallResult;

fn validate(_payload: &[u8]) -> CallResult {
    Ok(syncguard_floor::ACCEPT.to_vec())
}

syncguard_floor::floor!(validate);
