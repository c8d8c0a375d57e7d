//! The benchmark's second floor: reads the whole `validate` payload as JSON (skipping every
//! value, building nothing) and then accepts, like the no-op floor. The difference between the
//! two is what any policy that looks at the object pays before deciding anything, so a check's
//! time can be set against the cost of merely reading its request.

use serde::de::IgnoredAny;
use syncguard_floor::ACCEPT;
use syncguard_floor::wapc_guest::CallResult;

const REFUSE: &[u8] =
    br#"{"accepted":false,"message":"not JSON","code":400,"mutated_object":null,"audit_annotations":null,"warnings":null}"#;

fn validate(payload: &[u8]) -> CallResult {
    Ok(match serde_json::from_slice::<IgnoredAny>(payload) {
        Ok(_) => ACCEPT.to_vec(),
        Err(_) => REFUSE.to_vec(),
    })
}

syncguard_floor::floor!(validate);
