//! object-validation: every object judged against the schema the API server would apply, with
//! the API server's own message and field path.
//!
//! # What it judges
//! Every kind, on CREATE and UPDATE:
//! - **A custom resource** against its CRD's structural schema for the object's version: the
//!   CRD is looked up as `<resource>.<group>` (`get_resource`, field masks [`CRD_FIELDS`]), which
//!   `syncguard scan` answers from the scanned tree and the cluster snapshot, and policy-server
//!   from the cluster. A CRD that is not found, or that does not serve the object's version, is
//!   an `unknownCrd` finding (never a refusal): the object was not validated.
//! - **Every object's metadata**: `metadata.name` and `generateName` by its kind's name rule,
//!   `metadata.namespace`, label keys and values, annotation keys and their total size.
//!
//! # Admission and CI
//! The API server validates an object against its schema before any validating webhook sees it,
//! so at admission a finding can only repeat what the API server already refused, or be wrong.
//! A live object (one with a `uid`, a `resourceVersion` or a creation time: admission, the
//! audit scanner) therefore gets every finding as a warning; a manifest (`syncguard scan`, the
//! playground, `kwctl run` on a rendered chart) gets the settings' actions, by default a
//! refusal for what the API server would refuse.
//!
//! # Cost
//! The object is read whole once ([`crate::json`]). A CRD's schema is compiled once per module
//! instance and CRD version, found again by a digest of the host's answer, so a scan of many
//! custom resources compiles each CRD once.

pub mod builtin;
pub mod cel;
pub mod field_error;
pub mod metadata;
pub mod schema;
pub mod validate;

use crate::admission::Request;
use crate::check::{Check, GroupKind, Lookup, Objects};
use crate::cluster::{Cluster, LookupError};
use crate::finding::{Finding, List, Malformed, Report, RuleDoc, Subject};
use crate::json::{self, Node};
use crate::rules::{self, Rule};
use crate::settings::{Action, RejectOrWarn, RuleActions};
use crate::text::{Parts, elide, quote};
use field_error::FieldError;
use schema::Schema;
use serde::Deserialize;
use std::cell::RefCell;
use std::rc::Rc;

/// The rules of the check's findings.
pub const FINDINGS: &[RuleDoc] = &[
    RuleDoc {
        id: "schemaViolation",
        summary: "a value the object's schema refuses (type, enum, required, bounds, pattern, format, list duplicates), with the API server's message",
        anchor: "schema-violations",
    },
    RuleDoc {
        id: "celViolation",
        summary: "a CEL rule of the CRD (x-kubernetes-validations) the object breaks, with the rule's message",
        anchor: "cel-rules",
    },
    RuleDoc {
        id: "unknownField",
        summary: "a field the schema does not declare: the API server prunes it, and refuses it under strict field validation",
        anchor: "unknown-fields",
    },
    RuleDoc {
        id: "invalidMetadata",
        summary: "a metadata.name, generateName, namespace, label or annotation the API server refuses",
        anchor: "object-metadata",
    },
    RuleDoc {
        id: "unknownCrd",
        summary: "a custom resource whose CRD (or version) is not known, so it was not validated",
        anchor: "unknown-crds",
    },
    RuleDoc {
        id: "unreadableSchema",
        summary: "the CRD's schema cannot be read, so the object was not validated",
        anchor: "unknown-crds",
    },
];

/// The rules of field errors, listed together.
const LISTED: &[&str] = &["schemaViolation", "celViolation", "unknownField", "invalidMetadata"];

/// The rules whose action cannot be `reject`: they say the object was not validated.
const NEVER_REJECT: &[&str] = &["unknownCrd", "unreadableSchema"];

// The CRD's fields read (`get_resource` field masks: the same as sync-drift asks, so a host that
// keeps answers serves both from one) and the `kubernetesVersion` range are sync-drift's.
pub use super::sync_drift::{CRD_FIELDS, NEWEST_MINOR, OLDEST_MINOR};
use super::sync_drift::{check_kubernetes_version, minor_of};

/// Settings of the object-validation check.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Settings {
    /// Each rule to `reject`, `warn` or `ignore` (for a manifest; a live object only ever gets
    /// warnings). Defaults: `schemaViolation`, `celViolation` and `invalidMetadata` reject,
    /// `unknownField` is ignored (sync-drift reports the same fields as `prunedField`: one
    /// finding per field), the others warn; `unknownCrd` and `unreadableSchema` never reject.
    pub rules: RuleActions,
    /// How many findings the message (or the warnings) list, 1 to 1000; default 20.
    pub max_findings: u32,
    /// The Kubernetes version of the cluster, `1.MINOR` (default: the newest supported): the
    /// formats and messages that changed between versions follow it.
    pub kubernetes_version: String,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            rules: RuleActions::default(),
            max_findings: 20,
            kubernetes_version: format!("1.{NEWEST_MINOR}"),
        }
    }
}

impl Settings {
    /// The Kubernetes minor version (the newest when it does not read; validated before).
    pub fn minor(&self) -> u32 {
        minor_of(&self.kubernetes_version).unwrap_or(NEWEST_MINOR)
    }

    /// The action of `rule`.
    fn action(&self, rule: &str) -> Action {
        self.rules.get(rule).unwrap_or(match rule {
            "schemaViolation" | "celViolation" | "invalidMetadata" => Action::Reject,
            // Said once: sync-drift's `prunedField` names the same field at the same line.
            "unknownField" => Action::Ignore,
            _ => Action::Warn,
        })
    }
}

/// The object-validation check.
pub struct ObjectValidation;

impl Check for ObjectValidation {
    type Settings = Settings;
    const NAME: &'static str = "object-validation";
    const SETTINGS_KEY: &'static str = "objectValidation";
    const RULES: &'static [Rule] = rules::OBJECT_VALIDATION;
    const KINDS: &'static [GroupKind] = &[];
    const READS_OLD_OBJECT: bool = true;
    const READS_WHOLE: bool = true;
    const FINDINGS: &'static [RuleDoc] = FINDINGS;
    const LOOKUPS: &'static [Lookup] = &[("apiextensions.k8s.io/v1", "CustomResourceDefinition")];

    fn validate_settings(settings: &Settings) -> Result<(), String> {
        let ids: Vec<&str> = FINDINGS.iter().map(|f| f.id).collect();
        settings.rules.check("rules", &ids)?;
        for rule in NEVER_REJECT {
            if settings.rules.get(rule) == Some(Action::Reject) {
                return Err(format!(
                    "`rules`: {} cannot be `reject`: it says the object was not validated, which is no reason to refuse it; use `warn` or `ignore`",
                    quote(rule)
                ));
            }
        }
        if !(1..=1000).contains(&settings.max_findings) {
            return Err(format!(
                "`maxFindings`: {} is out of range; allowed: 1 to 1000",
                settings.max_findings
            ));
        }
        check_kubernetes_version(&settings.kubernetes_version)
    }

    fn check(
        request: &Request<'_>,
        objects: &Objects<'_>,
        settings: &Settings,
        cluster: &dyn Cluster,
    ) -> Result<Report, Malformed> {
        let (node, _) = objects
            .tree()
            .map_err(|e| Malformed::new(format!("the object is not JSON: {e}")))?;
        if !matches!(node, Node::Object(_)) {
            return Err(Malformed::new("the object is not a JSON object"));
        }
        let old = match objects.old_tree() {
            Some(Ok((old, _))) if request.is_update() => Some(old),
            _ => None,
        };
        let metadata = node.get("metadata");
        let text = |key: &str| {
            metadata
                .and_then(|m| m.get(key))
                .and_then(Node::as_str)
                .unwrap_or_default()
        };
        let subject = Subject::new(request, text("name"), text("generateName"), text("namespace"));
        let live = is_live(metadata);
        let minor = settings.minor();
        let (group, version) = api_version(node, request);
        let kind = node
            .get("kind")
            .and_then(Node::as_str)
            .unwrap_or(&request.kind.kind)
            .to_string();

        let mut errors: Vec<(&'static str, FieldError)> = Vec::new();
        let mut others: Vec<Finding> = Vec::new();
        let built_in = crate::generated::api_cluster_scoped(&group, &version, &kind).is_some();
        let api_version = if group.is_empty() {
            version.clone()
        } else {
            format!("{group}/{version}")
        };
        let compiled = if built_in {
            builtin_schema(&api_version, &kind, minor).map(Ok)
        } else if !group.is_empty() {
            Some(crd_schema(request, &group, &version, &kind, minor, cluster))
        } else {
            None
        };
        // An object of a kind nobody defines (no built-in kind, no CRD known) is not judged at
        // all, its metadata included: it says only that it was not validated. It is often
        // another tool's input (istioctl's `IstioOperator`), and a name rule depends on the kind.
        let unknown_kind = matches!(&compiled, Some(Err(Unvalidated { rule: "unknownCrd", .. })));
        if !unknown_kind {
            let rule = metadata::NameRule::of(&group, &kind);
            let request_name = request.name.as_deref();
            for error in metadata::validate(metadata, request_name, rule, minor) {
                errors.push(("invalidMetadata", error));
            }
        }
        if let Some(compiled) = compiled {
            match compiled {
                Ok(compiled) => {
                    let options = validate::Options {
                        skip_status: compiled.status_subresource,
                        unknown_fields: true,
                        open_empty_objects: built_in,
                    };
                    for error in validate::validate(&compiled.schema, node, old, &options) {
                        let rule = if error.kind == field_error::ErrorType::UnknownField {
                            "unknownField"
                        } else if error.cel {
                            "celViolation"
                        } else {
                            "schemaViolation"
                        };
                        errors.push((rule, error));
                    }
                    if let Some(first) = compiled.schema.rule_errors.first()
                        && let Some(action) = reject_or_warn(settings.action("unreadableSchema"))
                    {
                        let more = compiled.schema.rule_errors.len() - 1;
                        let text = format!(
                            "a CEL rule of the schema does not compile ({first}{}), so the API server would refuse the CRD; its rules were not checked",
                            if more > 0 {
                                format!(", and {more} more")
                            } else {
                                String::new()
                            }
                        );
                        let parts = Parts::default().elidable(text);
                        others.push(Finding::new("unreadableSchema", action, "", parts.clone(), parts));
                    }
                }
                Err(Unvalidated { rule, text }) => {
                    if let Some(action) = reject_or_warn(settings.action(rule)) {
                        let parts = Parts::default().elidable(text);
                        others.push(Finding::new(rule, action, "", parts.clone(), parts));
                    }
                }
            }
        }
        let mut findings = others;
        for (rule, error) in errors {
            let Some(action) = reject_or_warn(settings.action(rule)) else {
                continue;
            };
            // The field and the body each shortened in their middle when a warning needs it.
            let parts = if error.kind == field_error::ErrorType::UnknownField {
                Parts::default().elidable(error.to_string())
            } else {
                Parts::default()
                    .elidable(error.field.clone())
                    .fixed(": ")
                    .elidable(error.body())
            };
            findings.push(Finding::new(rule, action, error.at.clone(), parts.clone(), parts));
        }
        if live {
            findings = findings
                .into_iter()
                .map(|f| {
                    f.warn_if(true, || {
                        "a live object: the API server validated it before syncguard".to_string()
                    })
                })
                .collect();
        }
        let listed = findings.iter().filter(|f| LISTED.contains(&f.rule)).count();
        let mut report = Report::new(subject, findings);
        if listed > 0 {
            let errors = if listed == 1 { "error" } else { "errors" };
            report.list = Some(List {
                rules: LISTED,
                limit: settings.max_findings as usize,
                intro: format!(
                    "{listed} field {errors} the API server answers to this object (its apply fails with `is invalid`); fix the manifest:"
                ),
                intro_brief: format!("{listed} field {errors} the API server answers."),
                more: "field errors".into(),
                more_hint: "`syncguard scan` lists them all".into(),
            });
        }
        Ok(report)
    }
}

/// What a file is to kustomize when a kustomization lists it: it is not applied as it stands,
/// so what kustomize or an overlay adds to it is not held against it. Ordered: a file listed as
/// both is a patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum KustomizeInput {
    /// A resource the kustomization builds on: kustomize adds labels and selectors
    /// (`labels: includeSelectors`), the namespace and name prefixes, and an overlay's patches may
    /// add any field.
    Resource,
    /// A patch: a partial object, merged into a resource and never applied itself.
    Patch,
}

/// Whether a finding of this check (its `rule` and its brief, `<kind> <label>: <field>: <the
/// API server's words>`) still stands on a kustomize input of role `input`: a value the input
/// gives that the API server refuses (a wrong type, an enum, a pattern) stands, since nothing
/// kustomize does changes it; a missing value (`Required value`, which kustomize or an overlay
/// may add) does not, nor any metadata finding of a patch, which names the object it patches
/// rather than an object of its own. A finding that says the object was not validated stands.
pub fn stands_on_kustomize_input(rule: &str, brief: &str, input: KustomizeInput) -> bool {
    let missing = brief.contains(&format!(": {}", field_error::ErrorType::Required.text()));
    match rule {
        "invalidMetadata" if input == KustomizeInput::Patch => false,
        "schemaViolation" | "invalidMetadata" | "celViolation" => !missing,
        _ => true,
    }
}

fn reject_or_warn(action: Action) -> Option<RejectOrWarn> {
    match action {
        Action::Reject => Some(RejectOrWarn::Reject),
        Action::Warn => Some(RejectOrWarn::Warn),
        Action::Ignore => None,
    }
}

/// Whether the object is one the API server stored or is storing (a `uid`, a
/// `resourceVersion` or a creation time, which a manifest never has).
fn is_live(metadata: Option<&Node<'_>>) -> bool {
    let Some(metadata) = metadata else {
        return false;
    };
    let set = |key: &str| metadata.get(key).and_then(Node::as_str).is_some_and(|s| !s.is_empty());
    set("uid") || set("resourceVersion") || set("creationTimestamp")
}

/// The object's API group and version (its `apiVersion`, else the request's kind).
fn api_version(object: &Node<'_>, request: &Request<'_>) -> (String, String) {
    match object.get("apiVersion").and_then(Node::as_str) {
        Some(api_version) => match api_version.rsplit_once('/') {
            Some((group, version)) => (group.to_string(), version.to_string()),
            None => (String::new(), api_version.to_string()),
        },
        None => (request.kind.group.to_string(), request.kind.version.to_string()),
    }
}

/// A CRD version's compiled schema.
pub struct Compiled {
    /// The schema.
    pub schema: Schema,
    /// Whether the version has the status subresource (the API server then ignores `status`).
    pub status_subresource: bool,
}

/// How many built-in kinds' compiled schemas a module instance keeps.
const KEPT_BUILTINS: usize = 8;

/// A built-in kind's compiled schema, by apiVersion, kind and minor (none: no such kind).
type KeptBuiltin = ((String, String, u32), Option<Rc<Compiled>>);

thread_local! {
    /// The built-in kinds' schemas compiled last, newest first.
    static BUILTINS: RefCell<Vec<KeptBuiltin>> = const { RefCell::new(Vec::new()) };
}

/// The compiled schema of a built-in kind at Kubernetes 1.`minor` ([`builtin::schema`]), once
/// per module instance; none for a kind the documents lack.
fn builtin_schema(api_version: &str, kind: &str, minor: u32) -> Option<Rc<Compiled>> {
    let key = (api_version.to_string(), kind.to_string(), minor);
    if let Some(found) = BUILTINS.with_borrow(|kept| kept.iter().find(|(k, _)| *k == key).map(|(_, c)| c.clone())) {
        return found;
    }
    let compiled = builtin::schema(api_version, kind, minor).and_then(|schema| {
        let root = schema.root().clone();
        Schema::compile_with(&root, schema::Components::Map(schema.components()), minor)
            .ok()
            .map(|schema| {
                Rc::new(Compiled {
                    schema,
                    // The built-in kinds' registry strategies reset `status` on a create and keep
                    // the old one on an update.
                    status_subresource: true,
                })
            })
    });
    BUILTINS.with_borrow_mut(|kept| {
        kept.insert(0, (key, compiled.clone()));
        kept.truncate(KEPT_BUILTINS);
    });
    compiled
}

/// Why a custom resource was not validated.
struct Unvalidated {
    rule: &'static str,
    text: String,
}

/// How many CRD versions' schemas a module instance keeps.
const KEPT_SCHEMAS: usize = 8;

/// The length and two digests of a CRD answer, and the version and minor it was compiled for.
type SchemaKey = (usize, u64, u64, String, u32);

type Kept = (SchemaKey, Result<Rc<Compiled>, String>);

thread_local! {
    /// The CRD versions compiled last, newest first: an engine that keeps one module instance
    /// for many objects (`syncguard scan`, kwctl, the audit scanner) compiles each once.
    static SCHEMAS: RefCell<Vec<Kept>> = const { RefCell::new(Vec::new()) };
}

fn schema_key(text: &str, version: &str, minor: u32) -> SchemaKey {
    use std::hash::BuildHasher;
    let digest = |seed: u64| foldhash::fast::FixedState::with_seed(seed).hash_one(text.as_bytes());
    (
        text.len(),
        digest(0x4f62_6a56),
        digest(0x616c_6964),
        version.to_string(),
        minor,
    )
}

/// The schema of `version` in the CRD the host answered as `text`, compiled once per instance.
fn compiled_of(text: &str, version: &str, minor: u32, name: &str) -> Result<Rc<Compiled>, String> {
    let key = schema_key(text, version, minor);
    let found = SCHEMAS.with_borrow_mut(|kept| {
        let at = kept.iter().position(|(k, _)| *k == key)?;
        let entry = kept.remove(at);
        let compiled = entry.1.clone();
        kept.insert(0, entry);
        Some(compiled)
    });
    if let Some(compiled) = found {
        return compiled;
    }
    let compiled = compile_crd(text, version, minor, name).map(Rc::new);
    SCHEMAS.with_borrow_mut(|kept| {
        kept.insert(0, (key, compiled.clone()));
        kept.truncate(KEPT_SCHEMAS);
    });
    compiled
}

/// Compiles `version`'s schema of the CRD `text`; `Err` says why it cannot be (the version is
/// not there: `Ok` is never a silent accept).
fn compile_crd(text: &str, version: &str, minor: u32, name: &str) -> Result<Compiled, String> {
    let crd = json::read(text, json::Everything, usize::MAX)
        .map_err(|e| format!("the answer for {name} is not JSON: {e}"))?;
    let versions = match crd.at(&["spec", "versions"]) {
        Some(Node::Array(versions)) => versions,
        _ => return Err(format!("CRD {name} has no spec.versions")),
    };
    let Some((index, entry)) = versions
        .iter()
        .enumerate()
        .find(|(_, v)| v.get("name").and_then(Node::as_str) == Some(version))
    else {
        return Err(format!("CRD {name} serves no version {}", quote(version)));
    };
    let status_subresource = entry
        .at(&["subresources", "status"])
        .is_some_and(|status| !status.is_null());
    let path = format!("spec.versions[{index}].schema.openAPIV3Schema");
    let schema = match entry.at(&["schema", "openAPIV3Schema"]) {
        Some(schema) => Schema::compile(schema, None, minor).map_err(|e| {
            let at = if e.path.is_empty() {
                path.clone()
            } else {
                format!("{path}.{}", e.path)
            };
            format!("CRD {name}: {at}: {}", e.message)
        })?,
        // A version without a schema (apiextensions.k8s.io/v1beta1 allowed it) validates
        // nothing and keeps every field.
        None => {
            let any = json::read(
                r#"{"type":"object","x-kubernetes-preserve-unknown-fields":true}"#,
                json::Everything,
                4,
            )
            .map_err(|e| e.to_string())?;
            Schema::compile(&any, None, minor).map_err(|e| e.to_string())?
        }
    };
    Ok(Compiled {
        schema,
        status_subresource,
    })
}

/// The compiled schema of a custom resource's CRD version, or why there is none.
fn crd_schema(
    request: &Request<'_>,
    group: &str,
    version: &str,
    kind: &str,
    minor: u32,
    cluster: &dyn Cluster,
) -> Result<Rc<Compiled>, Unvalidated> {
    let resource = &request.resource;
    let unknown = |why: String| Unvalidated {
        rule: "unknownCrd",
        text: why,
    };
    if resource.resource.is_empty() || resource.group != group {
        return Err(unknown(format!(
            "{kind} of {group}/{version}: the request names no resource of its group, so its CRD cannot be looked up and it was not validated"
        )));
    }
    let name = format!("{}.{group}", resource.resource);
    let text = match cluster.get(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        &name,
        None,
        CRD_FIELDS,
    ) {
        Ok(text) => text,
        Err(LookupError::NotFound(_)) => {
            return Err(unknown(format!(
                "no CRD {name} is known (neither in the scanned files, the cluster snapshot nor the cluster), so this {kind} was not validated"
            )));
        }
        Err(e) => {
            let e: String = e.into();
            return Err(unknown(format!(
                "the CRD {name} could not be read ({}), so this {kind} was not validated",
                elide(&e, 120)
            )));
        }
    };
    match compiled_of(&text, version, minor, &name) {
        Ok(compiled) => Ok(compiled),
        Err(why) if why.contains("serves no version") => {
            Err(unknown(format!("{why}, so this {kind} was not validated")))
        }
        Err(why) => Err(Unvalidated {
            rule: "unreadableSchema",
            text: format!("{why}; this {kind} was not validated"),
        }),
    }
}
