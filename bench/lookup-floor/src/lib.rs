//! The benchmark's lookup floor: makes the host calls its settings name (each a Kubewarden
//! `kubernetes` operation and its request, as a context-aware check makes them), reads every
//! answer through (serde_json's `IgnoredAny`: every byte looked at, nothing built), drops it and
//! accepts, stepping over the request as the read floor does. Its count less the read floor's is
//! what the lookups cost, the host's side and the module's reading of the answers, so a
//! context-aware check's own work can be set against the SDK floor apart from them
//! (docs/benchmarks.md).

use serde::Deserialize;
use serde::de::IgnoredAny;
use syncguard_floor::wapc_guest::{self, CallResult};

/// One host call: `get_resource`, `list_resources_all`... and its request.
#[derive(Deserialize)]
struct Lookup {
    operation: String,
    request: serde_json::Value,
}

/// The settings: the lookups to make, in order.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Settings {
    lookups: Vec<Lookup>,
}

/// The validate payload: only its settings are read (the request is stepped over).
#[derive(Deserialize)]
struct Payload {
    #[serde(default)]
    settings: Settings,
}

fn validate(payload: &[u8]) -> CallResult {
    let payload: Payload = serde_json::from_slice(payload)?;
    for lookup in &payload.settings.lookups {
        let request = serde_json::to_vec(&lookup.request)?;
        // A failed lookup costs what it costs: the floor does not judge it.
        if let Ok(answer) = wapc_guest::host_call("kubewarden", "kubernetes", &lookup.operation, &request) {
            let read: Result<IgnoredAny, _> = serde_json::from_slice(&answer);
            std::hint::black_box(read.is_ok());
        }
    }
    Ok(syncguard_floor::ACCEPT.to_vec())
}

syncguard_floor::floor!(validate);
