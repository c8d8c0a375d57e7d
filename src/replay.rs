//! kwctl's recording/replay file of host-capability exchanges
//! (`--replay-host-capabilities-interactions`), read natively by `syncguard run` and the tests.
//!
//! The file is a YAML list consumed in order. Each entry holds the request the policy must make,
//! as a YAML document tagged with its kind, and the answer:
//! ```yaml
//! - type: Exchange
//!   request: |
//!     !KubernetesListResourceAll
//!     api_version: apiextensions.k8s.io/v1
//!     kind: CustomResourceDefinition
//!     label_selector: null
//!     field_selector: null
//!   response:
//!     type: Success
//!     payload: '{"items":[]}'
//! ```

use crate::cluster::{self, Cluster};
use serde_json::{Map, Value};
use std::sync::Mutex;

/// A host request a policy makes, in the replay file's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct HostRequest {
    /// The tag: `KubernetesListResourceAll`, `KubernetesListResourceNamespace` or
    /// `KubernetesGetResource`.
    pub tag: String,
    /// The request's fields (`api_version`, `kind`, ...).
    pub fields: Map<String, Value>,
}

impl HostRequest {
    /// The replay tag of a waPC host call, or `None` for calls the replay file does not cover.
    pub fn tag_for(namespace: &str, operation: &str) -> Option<&'static str> {
        match (namespace, operation) {
            ("kubernetes", "list_resources_all") => Some("KubernetesListResourceAll"),
            ("kubernetes", "list_resources_by_namespace") => Some("KubernetesListResourceNamespace"),
            ("kubernetes", "get_resource") => Some("KubernetesGetResource"),
            _ => None,
        }
    }

    /// Builds a request from a waPC host call payload.
    pub fn from_call(tag: &str, payload: &[u8]) -> Result<Self, String> {
        match serde_json::from_slice(payload) {
            Ok(Value::Object(fields)) => Ok(HostRequest {
                tag: tag.to_string(),
                fields: normalize(fields),
            }),
            Ok(_) => Err(format!("the {tag} request is not a JSON object")),
            Err(e) => Err(format!("the {tag} request is not JSON: {e}")),
        }
    }

    fn describe(&self) -> String {
        format!("!{} {}", self.tag, Value::Object(self.fields.clone()))
    }
}

/// Optional fields count as `null` when absent, on both sides of the comparison.
fn normalize(mut fields: Map<String, Value>) -> Map<String, Value> {
    fields.entry("field_masks").or_insert(Value::Null);
    fields
}

/// One recorded answer.
#[derive(Debug, Clone, PartialEq)]
pub enum HostResponse {
    /// The host answered with this payload.
    Success(Vec<u8>),
    /// The host failed with this message.
    Error(String),
}

/// A replay session: the recorded exchanges and how many have been consumed.
#[derive(Debug, Default)]
pub struct Replay {
    exchanges: Vec<(HostRequest, HostResponse)>,
    next: Mutex<usize>,
}

impl Replay {
    /// Parses a replay file's text.
    pub fn parse(text: &str) -> Result<Self, String> {
        let entries: Vec<serde_yaml_ng::Value> =
            serde_yaml_ng::from_str(text).map_err(|e| format!("the replay file is not a YAML list: {e}"))?;
        let mut exchanges = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            exchanges.push(parse_exchange(entry).map_err(|e| format!("replay entry {i}: {e}"))?);
        }
        Ok(Replay {
            exchanges,
            next: Mutex::new(0),
        })
    }

    /// Every object the recorded answers list (answers that are not a List are skipped).
    pub fn listed_objects(&self) -> Vec<Value> {
        self.exchanges
            .iter()
            .filter_map(|(_, response)| match response {
                HostResponse::Success(body) => cluster::list_items(body).ok()?.read::<Value>().ok(),
                HostResponse::Error(_) => None,
            })
            .flatten()
            .collect()
    }

    /// Answers the next request, which must equal the next recorded one.
    pub fn answer(&self, request: &HostRequest) -> Result<Vec<u8>, String> {
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        let Some((recorded, response)) = self.exchanges.get(*next) else {
            return Err(format!(
                "the replay file has no entry left for request {}",
                request.describe()
            ));
        };
        if recorded != request {
            return Err(format!(
                "the policy made request {} but entry {} of the replay file records {}",
                request.describe(),
                *next,
                recorded.describe()
            ));
        }
        *next += 1;
        match response {
            HostResponse::Success(payload) => Ok(payload.clone()),
            HostResponse::Error(message) => Err(message.clone()),
        }
    }
}

impl Cluster for Replay {
    fn list_all(&self, api_version: &str, kind: &str) -> Result<cluster::Items, String> {
        let Ok(Value::Object(fields)) = serde_json::to_value(cluster::list_all_request(api_version, kind)) else {
            unreachable!("the SDK's list request serializes to an object")
        };
        let request = HostRequest {
            tag: "KubernetesListResourceAll".into(),
            fields: normalize(fields),
        };
        cluster::list_items(&self.answer(&request)?)
    }
}

fn parse_exchange(entry: &serde_yaml_ng::Value) -> Result<(HostRequest, HostResponse), String> {
    let kind = entry.get("type").and_then(|t| t.as_str()).unwrap_or("");
    if kind != "Exchange" {
        return Err(format!("type must be Exchange, found {kind:?}"));
    }
    let request_text = entry
        .get("request")
        .and_then(|r| r.as_str())
        .ok_or("request must be a string holding a tagged YAML document")?;
    let request: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(request_text).map_err(|e| format!("request is not YAML: {e}"))?;
    let serde_yaml_ng::Value::Tagged(tagged) = request else {
        return Err("request must start with a tag such as !KubernetesListResourceAll".into());
    };
    let tag = tagged.tag.to_string().trim_start_matches('!').to_string();
    let fields: Value = serde_json::to_value(&tagged.value).map_err(|e| format!("request fields: {e}"))?;
    let Value::Object(fields) = fields else {
        return Err("request fields must be a mapping".into());
    };
    let response = entry.get("response").ok_or("response is missing")?;
    let response = match response.get("type").and_then(|t| t.as_str()) {
        Some("Success") => HostResponse::Success(
            response
                .get("payload")
                .and_then(|p| p.as_str())
                .ok_or("a Success response needs a payload string")?
                .as_bytes()
                .to_vec(),
        ),
        Some("Error") => HostResponse::Error(
            response
                .get("message")
                .and_then(|m| m.as_str())
                .unwrap_or("error")
                .to_string(),
        ),
        other => return Err(format!("response type must be Success or Error, found {other:?}")),
    };
    Ok((
        HostRequest {
            tag,
            fields: normalize(fields),
        },
        response,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
- type: Exchange
  request: |
    !KubernetesListResourceAll
    api_version: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    label_selector: null
    field_selector: null
  response:
    type: Success
    payload: '{"items":[{"kind":"CustomResourceDefinition"}]}'
- type: Exchange
  request: |
    !KubernetesListResourceAll
    api_version: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    label_selector: null
    field_selector: null
  response:
    type: Error
    message: forbidden
"#;

    #[test]
    fn consumes_in_order() {
        let replay = Replay::parse(FILE).unwrap();
        let items = replay
            .list_all("apiextensions.k8s.io/v1", "CustomResourceDefinition")
            .unwrap();
        assert_eq!(items.read::<Value>().unwrap().len(), 1);
        let err = replay
            .list_all("apiextensions.k8s.io/v1", "CustomResourceDefinition")
            .unwrap_err();
        assert_eq!(err, "forbidden");
        let err = replay
            .list_all("apiextensions.k8s.io/v1", "CustomResourceDefinition")
            .unwrap_err();
        assert!(err.contains("no entry left"), "{err}");
    }

    #[test]
    fn mismatch_is_an_error() {
        let replay = Replay::parse(FILE).unwrap();
        let err = replay.list_all("v1", "Pod").unwrap_err();
        assert!(err.contains("entry 0 of the replay file records"), "{err}");
    }
}
