//! The fixture runner: every policy's `test_data/cases.yml` evaluated natively through the same
//! payload handling the waPC module uses. The end-to-end suite runs the same table through the
//! built .wasm files; the format is described in `e2e-tests/README.md`.

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use syncguard::admission::Operation;
use syncguard::all_in_one::AllInOne;
use syncguard::check;
use syncguard::cluster::{Cluster, GET_RESOURCE, Items, LIST_RESOURCES_ALL, LookupError, NoCluster};
use syncguard::registry::Entry;
use syncguard::render::{Annotation, FINDINGS_ANNOTATION};
use syncguard_scan::evaluate::AdmissionResponse;
use syncguard_scan::replay::Replay;

/// A policy's table of cases.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cases {
    /// The cases, in order.
    pub cases: Vec<Case>,
}

/// One fixture and what the policy must decide about it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Case {
    /// Short unique name.
    pub name: String,
    /// What the case shows.
    #[serde(default)]
    pub description: String,
    /// Request file (AdmissionRequest or AdmissionReview JSON), relative to test_data/.
    pub request: Option<String>,
    /// Or an UPDATE of a CRD from one manifest to another, which the runner builds.
    #[serde(default)]
    pub upgrade: Option<Upgrade>,
    /// Or a CREATE of a CRD from a manifest, which the runner builds.
    #[serde(default)]
    pub create: Option<Create>,
    /// Or a CREATE of any object from a manifest, which the runner builds.
    #[serde(default)]
    pub manifest: Option<Manifest>,
    /// Settings, inline.
    #[serde(default)]
    pub settings: Option<Value>,
    /// kwctl replay file relative to test_data/.
    #[serde(default)]
    pub replay: Option<String>,
    /// Lookups the case's deployment grants beyond its metadata.yml's `contextAwareResources`
    /// (as a policy.yaml's `contextAwareResources` does): those its settings name. Any other
    /// lookup is refused as Kubewarden refuses it.
    #[serde(default)]
    pub grant: Vec<Grant>,
    /// The expected outcome.
    pub expect: Expect,
}

/// A resource a deployment lets a policy look up, as `contextAwareResources` names it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Grant {
    /// `<group>/<version>`.
    pub api_version: String,
    /// The kind.
    pub kind: String,
}

/// The `contextAwareResources` of `policy`'s metadata.yml, then `grant`, as `(apiVersion, kind)`.
pub fn granted(policy: &str, grant: &[Grant]) -> Vec<(String, String)> {
    let metadata = metadata(policy);
    let text = |v: &Value, key: &str| v[key].as_str().unwrap_or_default().to_string();
    metadata["contextAwareResources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| (text(r, "apiVersion"), text(r, "kind")))
        .chain(grant.iter().map(|g| (g.api_version.clone(), g.kind.clone())))
        .collect()
}

/// The `hostCapabilities` of `policy`'s metadata.yml (`kubernetes/get_resource`...), which
/// policy-server copies into the policy's entry and checks every host call against.
pub fn host_capabilities(policy: &str) -> Vec<String> {
    metadata(policy)["hostCapabilities"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c.as_str().map(str::to_string))
        .collect()
}

/// `policy`'s metadata.yml.
fn metadata(policy: &str) -> Value {
    let path = crate::root().join("policies").join(policy).join("metadata.yml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A cluster that answers only the lookups a deployment grants, and refuses any other in
/// Kubewarden's words, before asking `inner` (as policy-evaluator refuses them before a replay
/// file is read): first the host capability (`kubernetes/list_resources_all`...), then the
/// resource (policy-evaluator's `host_callback` checks them in that order).
pub struct Granted<'c> {
    /// What answers the granted lookups.
    pub inner: &'c dyn Cluster,
    /// The granted `(apiVersion, kind)` pairs.
    pub allowed: Vec<(String, String)>,
    /// The granted host capabilities, as metadata.yml's `hostCapabilities` name them.
    pub capabilities: Vec<String>,
}

impl Granted<'_> {
    fn check(&self, operation: &str, api_version: &str, kind: &str) -> Result<(), LookupError> {
        let capability = format!("kubernetes/{operation}");
        if !self.capabilities.contains(&capability) {
            return Err(LookupError::Forbidden(format!(
                "Policy has not been granted access to the '{capability}' host capability. The violation has been reported."
            )));
        }
        if self.allowed.iter().any(|(v, k)| v == api_version && k == kind) {
            Ok(())
        } else {
            Err(LookupError::Forbidden(format!(
                "Policy has not been granted access to Kubernetes {api_version}/{kind} resources. The violation has been reported."
            )))
        }
    }
}

impl Cluster for Granted<'_> {
    fn list_all(&self, api_version: &str, kind: &str, field_masks: &[&str]) -> Result<Items, LookupError> {
        self.check(LIST_RESOURCES_ALL, api_version, kind)?;
        self.inner.list_all(api_version, kind, field_masks)
    }

    fn get(
        &self,
        api_version: &str,
        kind: &str,
        name: &str,
        namespace: Option<&str>,
        field_masks: &[&str],
    ) -> Result<String, LookupError> {
        self.check(GET_RESOURCE, api_version, kind)?;
        self.inner.get(api_version, kind, name, namespace, field_masks)
    }
}

/// An UPDATE of a CustomResourceDefinition from the manifest `from` to the manifest `to` (JSON
/// or YAML files relative to test_data/): the old object is `from` with
/// `status.storedVersions` (by default its storage version), the new one `to` with the same
/// status, as the API server sends an update of a CRD.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Upgrade {
    /// The CRD installed.
    pub from: String,
    /// The CRD applied over it.
    pub to: String,
    /// The installed CRD's `status.storedVersions`; default: its storage version.
    #[serde(default)]
    pub stored_versions: Option<Vec<String>>,
    /// An RFC 6902 JSON Patch applied to `from` first (one fixture, many installed states).
    #[serde(default)]
    pub from_change: Option<Value>,
    /// An RFC 6902 JSON Patch applied to `to` (one fixture, many changes).
    #[serde(default)]
    pub change: Option<Value>,
}

/// A CREATE of the CustomResourceDefinition in `crd` (a JSON or YAML file relative to test_data/),
/// changed by `change` (an RFC 6902 JSON Patch) when given.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Create {
    /// The CRD.
    pub crd: String,
    /// An RFC 6902 JSON Patch applied to it.
    #[serde(default)]
    pub change: Option<Value>,
}

/// A CREATE of the object in document `document` of `file` (YAML or JSON, relative to
/// test_data/), changed by `change` (an RFC 6902 JSON Patch) when given, served under resource
/// `resource` (default: the built-in table's plural, else the kind in lower case plus `s`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Manifest {
    /// The manifest file.
    pub file: String,
    /// The document of the file (0-based; default 0).
    #[serde(default)]
    pub document: usize,
    /// An RFC 6902 JSON Patch applied to it.
    #[serde(default)]
    pub change: Option<Value>,
    /// The resource (plural) the request names.
    #[serde(default)]
    pub resource: Option<String>,
}

/// The expected outcome of a case.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Expect {
    /// `false` when the settings must be refused; the request is then not evaluated.
    #[serde(default)]
    pub settings_invalid: Option<String>,
    /// Whether the request is allowed.
    #[serde(default)]
    pub allowed: Option<bool>,
    /// Substrings the rejection message must contain, in order.
    #[serde(default)]
    pub message: Vec<String>,
    /// Rejection code, when it matters.
    #[serde(default)]
    pub code: Option<u16>,
    /// Substrings, each contained in the warning at the same position.
    #[serde(default)]
    pub warnings: Option<Vec<String>>,
    /// The exact JSON Patch the engine must produce (absent: no patch).
    #[serde(default)]
    pub patch: Option<Value>,
    /// Audit annotations that must be present with these values.
    #[serde(default)]
    pub audit_annotations: BTreeMap<String, String>,
    /// The findings the answer lists (its `syncguard.io/findings` annotation), in order, each
    /// as `rule` or `rule at path`; absent: not compared.
    #[serde(default)]
    pub findings: Option<Vec<String>>,
    /// How many findings the answer counts (its `syncguard.io/findings` annotation's `total`).
    #[serde(default)]
    pub finding_count: Option<usize>,
}

/// The test_data/ directory of policy `name`.
pub fn test_data(name: &str) -> PathBuf {
    crate::root().join("policies").join(name).join("test_data")
}

/// Loads a policy's cases.
pub fn load(name: &str) -> Cases {
    let path = test_data(name).join("cases.yml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The AdmissionRequest of a case of `policy`: its request file's, or the UPDATE its `upgrade`
/// describes; `None` for a case that checks settings alone.
pub fn request_of(policy: &str, case: &Case) -> Option<Value> {
    let dir = test_data(policy);
    if let Some(file) = &case.request {
        return Some(admission_request(&dir.join(file)));
    }
    let read = |file: &str| -> Value {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let patched = |mut crd: Value, change: &Option<Value>, what: &str| -> Value {
        if let Some(change) = change {
            let ops: json_patch::Patch = serde_json::from_value(change.clone())
                .unwrap_or_else(|e| panic!("{}: `{what}` is not a JSON Patch: {e}", case.name));
            json_patch::patch(&mut crd, &ops).unwrap_or_else(|e| panic!("{}: `{what}`: {e}", case.name));
        }
        crd
    };
    if let Some(create) = &case.create {
        let crd = patched(read(&create.crd), &create.change, "change");
        return Some(crate::crd_request(Operation::Create.as_str(), &crd, None));
    }
    if let Some(manifest) = &case.manifest {
        let path = dir.join(&manifest.file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let document = serde_yaml_ng::Deserializer::from_str(&text)
            .nth(manifest.document)
            .unwrap_or_else(|| panic!("{}: no document {}", path.display(), manifest.document));
        let object = Value::deserialize(document).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let object = patched(object, &manifest.change, "change");
        let resource = manifest.resource.clone().unwrap_or_else(|| crate::resource_of(&object));
        return Some(crate::object_request(Operation::Create.as_str(), &object, &resource));
    }
    let upgrade = case.upgrade.as_ref()?;
    let mut old = patched(read(&upgrade.from), &upgrade.from_change, "fromChange");
    let mut new = patched(read(&upgrade.to), &upgrade.change, "change");
    let stored = upgrade.stored_versions.clone().unwrap_or_else(|| {
        let storage = old["spec"]["versions"]
            .as_array()
            .and_then(|versions| versions.iter().find(|v| v["storage"] == true))
            .and_then(|v| v["name"].as_str())
            .unwrap_or_default();
        vec![storage.to_string()]
    });
    old["status"] = serde_json::json!({"storedVersions": stored});
    new["status"] = old["status"].clone();
    Some(crate::crd_request(Operation::Update.as_str(), &new, Some(&old)))
}

/// A file holding the AdmissionRequest of a case of `policy` (see [`request_of`]): its request
/// file, or one written under `target/testkit/` for an upgrade; `None` without a request.
pub fn request_path(policy: &str, case: &Case) -> Option<PathBuf> {
    if let Some(file) = &case.request {
        return Some(test_data(policy).join(file));
    }
    let request = request_of(policy, case)?;
    let dir = crate::root().join("target/testkit/requests").join(policy);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let path = dir.join(format!("{}.json", case.name));
    let text = request.to_string();
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    Some(path)
}

/// The AdmissionRequest inside a request file (bare or wrapped in an AdmissionReview).
pub fn admission_request(file: &Path) -> Value {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let value: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    if value["kind"] == "AdmissionReview" {
        value["request"].clone()
    } else {
        value
    }
}

/// Runs every case of the check `entry` of the registry and panics with all failures listed; then compares every
/// case's exact answers, byte for byte, with the record in `test_data/answers.snap`: the
/// module's, and the all-in-one's with the case's settings in the check's section and every
/// other check at its defaults.
///
/// The cases say what an answer must hold; the record says what it was, so that no change
/// alters an answer unseen. When an answer changes on purpose, `make answers` records the new
/// ones (review the diff of the `.snap` files before committing it).
pub fn run_cases(entry: &Entry) {
    let cases = load(entry.name);
    assert!(!cases.cases.is_empty(), "{} has no cases", entry.name);
    let mut failures = Vec::new();
    let mut answers = String::new();
    for case in &cases.cases {
        match run_case(entry, case) {
            Ok(answer) => answers.push_str(&format!("{}\n{answer}\n\n", case.name)),
            Err(e) => failures.push(format!("{}: {e}", case.name)),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing cases:\n{}",
        entry.name,
        failures.join("\n")
    );
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(test_data(entry.name));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.set_description(format!(
        "Every case of test_data/cases.yml, in order: its name, the {} module's exact answer (or \
         why its settings are refused), then the all-in-one's with the case's settings and the \
         other checks at their defaults. Written by `make answers`.",
        entry.name
    ));
    settings.bind(|| insta::assert_snapshot!("answers", answers));
}

/// Runs one case: its problems, or its exact answers, the module's and the all-in-one's (the
/// refusal, for refused settings).
fn run_case(entry: &Entry, case: &Case) -> Result<String, String> {
    let dir = test_data(entry.name);
    let settings = case.settings.clone().unwrap_or(Value::Object(Default::default()));
    let settings_text = settings.to_string();
    let settings_result = (entry.check_settings)(Some(&settings_text));
    match (&case.expect.settings_invalid, settings_result) {
        (Some(expected), Err(message)) => {
            return if message.contains(expected.as_str()) {
                Ok(format!("settings refused: {message}"))
            } else {
                Err(format!(
                    "settings refused with {message:?}, expected it to contain {expected:?}"
                ))
            };
        }
        (Some(_), Ok(_)) => return Err("settings were accepted, expected them refused".into()),
        (None, Err(message)) => return Err(format!("settings refused: {message}")),
        (None, Ok(_)) => {}
    }
    let request = request_of(entry.name, case).ok_or("a case that evaluates a request needs `request` or `upgrade`")?;
    let payload = serde_json::json!({"request": request, "settings": settings}).to_string();
    let cluster = |replay: &mut Option<Replay>| -> Result<(), String> {
        if let Some(file) = &case.replay {
            let text = std::fs::read_to_string(dir.join(file)).map_err(|e| format!("{file}: {e}"))?;
            *replay = Some(Replay::parse(&text)?);
        }
        Ok(())
    };
    // Each evaluation gets a fresh replay: a replay file is consumed in order.
    let evaluate = |payload: &str, all_in_one: bool| -> Result<Vec<u8>, String> {
        let mut replay = None;
        cluster(&mut replay)?;
        let inner: &dyn Cluster = match &replay {
            Some(replay) => replay,
            None => &NoCluster,
        };
        let granted = Granted {
            inner,
            allowed: granted(entry.name, &case.grant),
            capabilities: host_capabilities(entry.name),
        };
        let cluster: &dyn Cluster = if replay.is_some() { &granted } else { inner };
        Ok(if all_in_one {
            check::handle_validate::<AllInOne>(payload.as_bytes(), cluster)
        } else {
            (entry.validate)(payload.as_bytes(), cluster)
        })
    };
    let answer = evaluate(&payload, false)?;
    let response = check::decode_response(&answer)?;
    let mut problems = limit_problems("", &response);
    // The all-in-one with this case's settings in the check's section and every other check at
    // its defaults: the combined answer keeps the limits too.
    let mut sections = serde_json::Map::new();
    sections.insert(entry.settings_key.to_string(), settings.clone());
    let combined_payload = serde_json::json!({"request": request, "settings": sections}).to_string();
    let combined_answer = evaluate(&combined_payload, true)?;
    let combined = check::decode_response(&combined_answer)?;
    problems.extend(limit_problems("all-in-one: ", &combined));
    // No answer may depend on the order of keys in a JSON object: the same request with every
    // object's keys sorted, and reversed, gives byte-identical answers.
    let ordered = |reverse: bool| {
        let mut text = String::from("{\"request\":");
        write_with_key_order(&request, reverse, &mut text);
        text.push_str(",\"settings\":");
        text.push_str(&settings_text);
        text.push('}');
        text
    };
    let sorted = evaluate(&ordered(false), false)?;
    let reversed = evaluate(&ordered(true), false)?;
    if sorted != reversed {
        problems.push(format!(
            "the answer depends on key order:\n    sorted:   {}\n    reversed: {}",
            String::from_utf8_lossy(&sorted),
            String::from_utf8_lossy(&reversed)
        ));
    }
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).map_err(|e| format!("an answer is not UTF-8: {e}"));
    let record = format!("{}\nall-in-one: {}", text(answer)?, text(combined_answer)?);
    compare(
        &case.expect,
        &AdmissionResponse::of_answer("u", &request.to_string(), response),
    )
    .map(|()| record)
}

/// The size limits an answer breaks (see `syncguard::text::limits`), each line prefixed with
/// `what`.
fn limit_problems(what: &str, response: &syncguard::admission::ValidationResponse) -> Vec<String> {
    syncguard::text::limits::limit_violations(
        response.message.as_deref(),
        response.warnings.as_deref().unwrap_or_default(),
    )
    .into_iter()
    .map(|problem| format!("{what}{problem}"))
    .collect()
}

/// Writes `value` as JSON with every object's keys in sorted order, or in reverse sorted order.
pub fn write_with_key_order(value: &Value, reverse: bool, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            if reverse {
                entries.reverse();
            }
            out.push('{');
            for (i, (key, member)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_with_key_order(member, reverse, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_with_key_order(item, reverse, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// Compares an engine's response with the expectation; the error lists every difference.
pub fn compare(expect: &Expect, got: &AdmissionResponse) -> Result<(), String> {
    let mut problems = Vec::new();
    let no_annotations = BTreeMap::new();
    let audit_annotations = got.audit_annotations.as_ref().unwrap_or(&no_annotations);
    let warnings_got = got.all_warnings();
    let code_got = got.code();
    let patch_got = got.patch_ops();
    let annotation = audit_annotations
        .get(FINDINGS_ANNOTATION)
        .and_then(|value| serde_json::from_str::<Annotation>(value).ok());
    if let Some(count) = expect.finding_count
        && annotation.as_ref().map(|a| a.total) != Some(count)
    {
        problems.push(format!(
            "{} findings counted, expected {count}",
            annotation.as_ref().map_or(0, |a| a.total)
        ));
    }
    if let Some(expected) = &expect.findings {
        let listed: Vec<String> = annotation
            .as_ref()
            .map(|annotation| annotation.findings.as_slice())
            .unwrap_or_default()
            .iter()
            .map(|finding| format!("{} at {}", finding.rule, finding.path))
            .collect();
        let matches = expected.len() == listed.len()
            && expected
                .iter()
                .zip(&listed)
                .all(|(want, have)| have == want || have.starts_with(&format!("{want} at ")));
        if !matches {
            problems.push(format!("findings are {listed:?}, expected {expected:?}"));
        }
    }
    if let Some(allowed) = expect.allowed
        && allowed != got.allowed
    {
        problems.push(format!("allowed is {}, expected {allowed}", got.allowed));
    }
    let mut rest = got.message();
    for part in &expect.message {
        match rest.find(part.as_str()) {
            Some(i) => rest = &rest[i + part.len()..],
            None => problems.push(format!("message lacks {part:?} (in order)")),
        }
    }
    if expect.message.is_empty() && !got.allowed && expect.allowed == Some(false) {
        problems.push("a rejection case must state what its message contains".into());
    }
    if let Some(code) = expect.code
        && code_got != Some(code)
    {
        problems.push(format!("code is {:?}, expected {code}", code_got));
    }
    match &expect.warnings {
        Some(warnings) => {
            if warnings.len() != warnings_got.len() {
                problems.push(format!("{} warnings, expected {}", warnings_got.len(), warnings.len()));
            }
            for (want, have) in warnings.iter().zip(warnings_got) {
                if !have.contains(want.as_str()) {
                    problems.push(format!("warning {have:?} lacks {want:?}"));
                }
            }
        }
        None if !warnings_got.is_empty() => problems.push(format!("unexpected warnings {:?}", warnings_got)),
        None => {}
    }
    if expect.patch != patch_got {
        problems.push(format!(
            "patch is {}, expected {}",
            patch_got.as_ref().map(Value::to_string).unwrap_or("none".into()),
            expect.patch.as_ref().map(Value::to_string).unwrap_or("none".into())
        ));
    }
    for (key, value) in &expect.audit_annotations {
        if audit_annotations.get(key) != Some(value) {
            problems.push(format!(
                "audit annotation {key} is {:?}, expected {value:?}",
                audit_annotations.get(key)
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}\n    message: {:?}\n    warnings: {:?}",
            problems.join("; "),
            got.message(),
            warnings_got
        ))
    }
}
