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
//!     field_masks:
//!     - spec.group
//!   response:
//!     type: Success
//!     payload: '{"items":[]}'
//! ```
//!
//! Requests compare as kwctl compares them (typed: unknown fields ignored, absent optional
//! fields `null`, `field_masks` a set). [`reflect_file`] rewrites a file so that its list answers
//! hold what Kubewarden really sends for the recorded request (see [`crate::reflector`]).

use serde_json::{Map, Value};
use std::sync::Mutex;
use syncguard::cluster;

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
                fields: normalize(tag, fields).map_err(|e| format!("the {tag} request: {e}"))?,
            }),
            Ok(_) => Err(format!("the {tag} request is not a JSON object")),
            Err(e) => Err(format!("the {tag} request is not JSON: {e}")),
        }
    }

    /// The request's `field_masks` as a tree, `None` when it has none.
    pub fn field_mask(&self) -> Option<crate::reflector::FieldMask> {
        self.fields.get("field_masks").and_then(crate::reflector::mask_of)
    }

    fn describe(&self) -> String {
        format!("!{} {}", self.tag, Value::Object(self.fields.clone()))
    }
}

/// The fields of each Kubernetes request kwctl knows (policy-evaluator's
/// `CallbackRequestType`), and which of them are optional.
fn known_fields(tag: &str) -> Option<&'static [(&'static str, bool)]> {
    const SELECTORS: [(&str, bool); 3] = [
        ("label_selector", true),
        ("field_selector", true),
        ("field_masks", true),
    ];
    match tag {
        "KubernetesListResourceAll" => Some(&[
            ("api_version", false),
            ("kind", false),
            SELECTORS[0],
            SELECTORS[1],
            SELECTORS[2],
        ]),
        "KubernetesListResourceNamespace" => Some(&[
            ("api_version", false),
            ("kind", false),
            ("namespace", false),
            SELECTORS[0],
            SELECTORS[1],
            SELECTORS[2],
        ]),
        "KubernetesGetResource" => Some(&[
            ("api_version", false),
            ("kind", false),
            ("name", false),
            ("namespace", true),
            ("disable_cache", false),
            ("field_masks", true),
        ]),
        _ => None,
    }
}

/// Puts a request in the form kwctl compares: it reads requests into typed structs, so fields it
/// does not know are ignored, an optional field that is absent is `null`, and `field_masks` is a
/// set (order and repeats do not count; it is kept sorted here).
fn normalize(tag: &str, mut fields: Map<String, Value>) -> Result<Map<String, Value>, String> {
    if let Some(known) = known_fields(tag) {
        fields.retain(|key, _| known.iter().any(|(name, _)| name == key));
        for (name, optional) in known {
            if *optional {
                fields.entry(*name).or_insert(Value::Null);
            }
        }
    }
    if let Some(masks) = fields.get_mut("field_masks") {
        match masks {
            Value::Null => {}
            Value::Array(paths) if paths.iter().all(Value::is_string) => {
                let set: std::collections::BTreeSet<&str> = paths.iter().filter_map(Value::as_str).collect();
                *masks = set.into_iter().map(Value::from).collect();
            }
            _ => return Err("field_masks must be null or a list of field paths".into()),
        }
    }
    Ok(fields)
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
                HostResponse::Success(body) => cluster::list_items(body.as_slice()).ok()?.read::<Value>().ok(),
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

impl cluster::HostCalls for Replay {
    fn host_call(&self, operation: &str, request: &[u8]) -> Result<Vec<u8>, String> {
        let tag = HostRequest::tag_for("kubernetes", operation)
            .ok_or_else(|| format!("host capability kubernetes/{operation} is not available"))?;
        self.answer(&HostRequest::from_call(tag, request)?)
    }
}

/// Rewrites a replay file as Kubewarden would have recorded it: every successful list answer
/// holds its objects as the reflector sends them for the recorded request's `field_masks`
/// ([`crate::reflector::reflect`]), in the list Kubewarden builds around them (`apiVersion` and
/// `kind` of the request, empty `metadata`), as indented JSON. Comment lines before an entry are
/// kept; everything else is written afresh, so a file this returns unchanged is in that form.
pub fn reflect_file(text: &str) -> Result<String, String> {
    let replay = Replay::parse(text)?;
    let mut exchanges = replay.exchanges.iter();
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if line.starts_with('#') {
            out.push_str(line);
            out.push('\n');
        } else if line.starts_with("- ") {
            let (request, response) = exchanges.next().ok_or("the file has more entries than it parses to")?;
            write_exchange(&mut out, request, response)?;
        }
    }
    if exchanges.next().is_some() {
        return Err("every entry must start a line with `- type: Exchange`".into());
    }
    Ok(out)
}

/// Writes one entry of a replay file (see [`reflect_file`]).
fn write_exchange(out: &mut String, request: &HostRequest, response: &HostResponse) -> Result<(), String> {
    let mut mapping = serde_yaml_ng::Mapping::new();
    let order: Vec<&str> = match known_fields(&request.tag) {
        Some(known) => known.iter().map(|(name, _)| *name).collect(),
        None => request.fields.keys().map(String::as_str).collect(),
    };
    for name in order {
        if let Some(value) = request.fields.get(name) {
            let value = serde_yaml_ng::to_value(value).map_err(|e| e.to_string())?;
            mapping.insert(name.into(), value);
        }
    }
    let tagged = serde_yaml_ng::Value::Tagged(Box::new(serde_yaml_ng::value::TaggedValue {
        tag: serde_yaml_ng::value::Tag::new(&request.tag),
        value: serde_yaml_ng::Value::Mapping(mapping),
    }));
    let request_text = serde_yaml_ng::to_string(&tagged).map_err(|e| e.to_string())?;
    out.push_str("- type: Exchange\n  request: |\n");
    push_indented(out, &request_text, 4);
    out.push_str("  response:\n");
    match response {
        HostResponse::Error(message) => {
            out.push_str("    type: Error\n    message: ");
            out.push_str(&serde_json::to_string(message).map_err(|e| e.to_string())?);
            out.push('\n');
        }
        HostResponse::Success(payload) => {
            out.push_str("    type: Success\n    payload: |\n");
            let text = String::from_utf8_lossy(payload);
            let listing = matches!(
                request.tag.as_str(),
                "KubernetesListResourceAll" | "KubernetesListResourceNamespace"
            );
            let parsed = serde_json::from_str::<Value>(&text).ok();
            match (parsed, request.field_mask()) {
                (Some(list), _) if listing => push_indented(out, &reflected_list(request, list)?, 6),
                // A get answer is the object itself, pruned to the request's field masks as the
                // offline cluster answers it.
                (Some(mut object @ Value::Object(_)), Some(mask)) => {
                    crate::reflector::apply_mask(&mut object, &mask);
                    let pretty = serde_json::to_string_pretty(&object).map_err(|e| e.to_string())?;
                    push_indented(out, &pretty, 6)
                }
                _ => push_indented(out, &text, 6),
            }
        }
    }
    Ok(())
}

/// The List Kubewarden sends for `request`, from the objects of a recorded List.
fn reflected_list(request: &HostRequest, list: Value) -> Result<String, String> {
    let Value::Object(mut list) = list else {
        return Err("a list answer must be a JSON object".into());
    };
    let mut items = match list.remove("items") {
        Some(Value::Array(items)) => items,
        Some(Value::Null) | None => Vec::new(),
        Some(_) => return Err("the items of a list answer must be an array".into()),
    };
    let mask = request.field_mask();
    for item in &mut items {
        crate::reflector::reflect(item, mask.as_ref());
    }
    let text = |key: &str| request.fields.get(key).and_then(Value::as_str).unwrap_or("");
    let mut out = String::from("{\n");
    out.push_str(&format!("  \"apiVersion\": {},\n", Value::from(text("api_version"))));
    out.push_str(&format!(
        "  \"kind\": {},\n",
        Value::from(format!("{}List", text("kind")))
    ));
    out.push_str("  \"metadata\": {},\n  \"items\": ");
    let items = serde_json::to_string_pretty(&items).map_err(|e| e.to_string())?;
    let mut lines = items.lines();
    out.push_str(lines.next().unwrap_or("[]"));
    for line in lines {
        out.push_str("\n  ");
        out.push_str(line);
    }
    out.push_str("\n}\n");
    Ok(out)
}

/// Appends `text` with every line indented by `by` spaces.
fn push_indented(out: &mut String, text: &str, by: usize) {
    for line in text.lines() {
        if !line.is_empty() {
            out.extend(std::iter::repeat_n(' ', by));
        }
        out.push_str(line);
        out.push('\n');
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
    let fields = normalize(&tag, fields).map_err(|e| format!("request: {e}"))?;
    Ok((HostRequest { tag, fields }, response))
}

#[cfg(test)]
mod tests {
    use super::*;
    use syncguard::cluster::Cluster;

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

    const CRDS: (&str, &str) = ("apiextensions.k8s.io/v1", "CustomResourceDefinition");

    #[test]
    fn consumes_in_order() {
        let replay = Replay::parse(FILE).unwrap();
        let list = replay.list_all(CRDS.0, CRDS.1, &[]).unwrap();
        assert_eq!(list.read::<Value>().unwrap().len(), 1);
        let err = replay.list_all(CRDS.0, CRDS.1, &[]).unwrap_err().to_string();
        assert_eq!(err, "forbidden");
        let err = replay.list_all(CRDS.0, CRDS.1, &[]).unwrap_err().to_string();
        assert!(err.contains("no entry left"), "{err}");
    }

    #[test]
    fn mismatch_is_an_error() {
        let replay = Replay::parse(FILE).unwrap();
        let err = replay.list_all("v1", "Pod", &[]).unwrap_err().to_string();
        assert!(err.contains("entry 0 of the replay file records"), "{err}");
    }

    /// A one-entry file whose request has `masks` (YAML lines) and answers an empty List.
    fn masked_file(masks: &str) -> String {
        format!(
            "- type: Exchange\n  request: |\n    !KubernetesListResourceAll\n    api_version: {}\n    kind: {}\n    label_selector: null\n    field_selector: null\n{masks}  response:\n    type: Success\n    payload: '{{\"items\":[]}}'\n",
            CRDS.0, CRDS.1
        )
    }

    #[test]
    fn field_masks_match_as_kwctl_compares_them() {
        let recorded = "    field_masks:\n    - spec.names\n    - spec.group\n";
        // A set: order and repeats do not count.
        let replay = Replay::parse(&masked_file(recorded)).unwrap();
        assert!(
            replay
                .list_all(CRDS.0, CRDS.1, &["spec.group", "spec.names", "spec.group"])
                .is_ok()
        );
        // Other masks, or none, are another request.
        for asked in [&["spec.group"][..], &[]] {
            let replay = Replay::parse(&masked_file(recorded)).unwrap();
            let err = replay.list_all(CRDS.0, CRDS.1, asked).unwrap_err().to_string();
            assert!(err.contains("entry 0 of the replay file records"), "{err}");
        }
        // A recording without field_masks, or with `null`, matches a request without masks.
        for none in ["", "    field_masks: null\n"] {
            let replay = Replay::parse(&masked_file(none)).unwrap();
            assert!(replay.list_all(CRDS.0, CRDS.1, &[]).is_ok());
            let replay = Replay::parse(&masked_file(none)).unwrap();
            assert!(replay.list_all(CRDS.0, CRDS.1, &["spec.group"]).is_err());
        }
        let err = Replay::parse(&masked_file("    field_masks: spec.group\n"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("field_masks must be null or a list"), "{err}");
        // Fields kwctl does not know are ignored, as its typed requests ignore them.
        let extra = HostRequest::from_call(
            "KubernetesListResourceAll",
            br#"{"api_version":"v1","kind":"Pod","field_masks":["b","a"],"extra":1}"#,
        )
        .unwrap();
        assert_eq!(
            Value::Object(extra.fields).to_string(),
            r#"{"api_version":"v1","field_masks":["a","b"],"field_selector":null,"kind":"Pod","label_selector":null}"#
        );
    }

    #[test]
    fn reflect_file_writes_what_kubewarden_sends() {
        let file = "# A comment.\n".to_string()
            + &masked_file("    field_masks:\n    - spec.group\n").replace(
                r#"'{"items":[]}'"#,
                r#"'{"items":[{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"a.example.com","managedFields":[{"manager":"m"}]},"spec":{"group":"example.com","scope":"Cluster"},"status":{}}]}'"#,
            );
        let reflected = reflect_file(&file).unwrap();
        let expected = r#"# A comment.
- type: Exchange
  request: |
    !KubernetesListResourceAll
    api_version: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    label_selector: null
    field_selector: null
    field_masks:
    - spec.group
  response:
    type: Success
    payload: |
      {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinitionList",
        "metadata": {},
        "items": [
          {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {
              "annotations": {},
              "managedFields": [],
              "name": "a.example.com"
            },
            "spec": {
              "group": "example.com"
            }
          }
        ]
      }
"#;
        assert_eq!(reflected, expected);
        assert_eq!(reflect_file(&reflected).unwrap(), reflected);
        let errors = reflect_file(FILE).unwrap();
        assert!(
            errors.ends_with("    type: Error\n    message: \"forbidden\"\n"),
            "{errors}"
        );
        assert_eq!(
            Replay::parse(&errors).unwrap().exchanges[1],
            Replay::parse(FILE).unwrap().exchanges[1]
        );
    }

    /// Every replay file of the fixtures holds exactly what Kubewarden sends for its recorded
    /// requests. `SYNCGUARD_REGENERATE_REPLAYS=1 cargo test -p syncguard-scan replay_files` rewrites
    /// them with [`reflect_file`] instead of failing.
    #[test]
    fn replay_files_hold_what_kubewarden_sends() {
        let regenerate = std::env::var_os("SYNCGUARD_REGENERATE_REPLAYS").is_some();
        let policies = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("scan/ sits in the repository")
            .join("policies");
        let mut checked = 0;
        for policy in std::fs::read_dir(&policies).unwrap() {
            let data = policy.unwrap().path().join("test_data");
            let Ok(files) = std::fs::read_dir(&data) else { continue };
            for file in files {
                let path = file.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().to_string();
                if !(name.starts_with("replay-") && name.ends_with(".yml")) {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                let reflected = reflect_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                if regenerate {
                    std::fs::write(&path, &reflected).unwrap();
                } else {
                    assert!(
                        reflected == text,
                        "{} does not hold what Kubewarden sends for its requests (managedFields and the last-applied annotation removed, field masks applied); regenerate it with SYNCGUARD_REGENERATE_REPLAYS=1 cargo test --locked -p syncguard-scan replay_files",
                        path.display()
                    );
                }
                checked += 1;
            }
        }
        assert!(checked > 0, "no replay files under {}", policies.display());
    }
}
