//! object-validation: every object judged against the schema the API server would apply, with
//! the API server's own message and field path.
//!
//! # What it judges
//! Every kind, on CREATE and UPDATE:
//! - **A custom resource** against its CRD's structural schema for the object's version: the
//!   CRD is looked up as `<resource>.<group>` (`get_resource`, field masks
//!   [`cluster::CRD_FIELDS`]; by its likely plural, or in the list of CRDs, where the request
//!   names the resource by its kind as Kubewarden's audit scanner does:
//!   [`cluster::crd_of_resource`]), which `syncguard scan` answers from the scanned tree and the
//!   cluster snapshot, and policy-server from the cluster. A CRD that is not found, or that does not serve the object's version, is
//!   an `unknownCrd` finding (never a refusal): the object was not validated.
//! - **Every object's metadata**: `metadata.name` and `generateName` by its kind's name rule,
//!   `metadata.namespace`, label keys and values, annotation keys and their total size.
//! - **A CustomResourceDefinition's own validation** ([`crd`]), the rules of the API server's
//!   that are certain offline (a schema `type` it does not support, `uniqueItems: true`,
//!   `x-kubernetes-preserve-unknown-fields: false`, unsupported list and map types, a list map's
//!   keys), at the path its internal version names.
//! - **A CRD update against the objects it stores** ([`stored`]): for a kind the settings'
//!   `storedObjects` name (each one a lookup the deployment grants in its
//!   `contextAwareResources`), the stored objects are listed (`list_resources_all`) and judged
//!   against the new CRD's schema of their version; the finding names those it refuses.
//!
//! # Admission and CI
//! The API server validates an object against its schema (and its metadata rules) before any
//! validating webhook sees it, so at admission a finding could only repeat what the API server
//! already refused, or be wrong. A live object a request writes (one with a `uid`, a
//! `resourceVersion` or a creation time, as the API server sets them before admission) is
//! therefore not judged at all, which also spares policy-server a schema's compilation per
//! request; only a CRD update's stored objects are. A manifest (`syncguard scan`, the
//! playground, `kwctl run` on a rendered chart) gets the settings' actions, by default a
//! refusal for what the API server would refuse.
//!
//! The all-in-one runs the check on what the API server stored only ([`Judged::Stored`]): it is
//! a mutating webhook, called before the API server sets a CREATE's uid and validates it, so
//! there every object a request writes would look like a manifest, and one a later mutating
//! webhook completes would be refused.
//!
//! # Audit
//! Kubewarden's audit scanner sends each object the cluster stores as a CREATE of it, the object
//! as it is stored (with its `resourceVersion`, which the API server never lets a CREATE carry),
//! and names its resource by its kind (`Certificate`, not `certificates`); its PolicyReport
//! counts a rejection as `fail` and anything accepted, warnings included, as `pass`, with no
//! message. The API server validated a custom resource against its CRD's schema of the time,
//! not against the schema an upgrade installed since, so a stored custom resource
//! ([`is_stored`]) gets the settings' actions for its schema findings: by default a `fail` in the
//! PolicyReport, with the API server's message. Its metadata and a built-in kind, which the API
//! server's own code validated and still validates the same way, stay warnings.
//!
//! # Cost
//! The object is read whole once ([`crate::json`]). A CRD's schema is compiled once per module
//! instance and CRD version, found again by a digest of the host's answer, so a scan of many
//! custom resources compiles each CRD once. The CEL rules of a CRD the API server stored (its
//! answer has a uid, a resourceVersion or a creationTimestamp: the cluster's, a cluster
//! snapshot's, a `kubectl get` export), whose own validation compiled them
//! all, are compiled only as objects reach them ([`Compiled::rule_errors`]).

pub mod builtin;
pub mod cel;
pub mod crd;
pub mod crd_rules;
pub mod field_error;
pub mod go_formats;
pub mod metadata;
pub mod schema;
pub mod stored;
pub mod validate;

use crate::admission::{Operation, Request};
use crate::check::{Check, GroupKind, Lookup, Objects};
use crate::cluster::{self, Cluster, CrdMissing, CrdPart, LookupError};
use crate::finding::{Finding, List, Malformed, Report, RuleDoc, Subject};
use crate::json::{self, Node};
use crate::rules::{self, Rule};
use crate::settings::{Action, RejectOrWarn, RuleActions};
use crate::text::{Parts, elide, quote};
use field_error::FieldError;
use schema::{Schema, SchemaError};
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
    stored::RULE,
    stored::UNLISTED,
];

/// The rules of field errors, listed together.
const LISTED: &[&str] = &["schemaViolation", "celViolation", "unknownField", "invalidMetadata"];

/// The rules whose action cannot be `reject`: they say the object was not validated.
const NEVER_REJECT: &[&str] = &["unknownCrd", "unreadableSchema", "storedObjectsUnlisted"];

// The `kubernetesVersion` range is sync-drift's.
pub use super::sync_drift::{NEWEST_MINOR, OLDEST_MINOR};
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
    /// The custom resources whose stored objects a CRD update is judged against (default none):
    /// each one is listed in the cluster on an update of its CRD, so a deployment grants each
    /// in its `contextAwareResources`.
    pub stored_objects: Vec<StoredResource>,
}

/// What object-validation judges of a request, as the module that runs it chooses (not a
/// setting: [`ObjectValidation::judge`] takes it beside the settings).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Judged {
    /// Every object, a manifest as a stored one: the object-validation module (a validating
    /// webhook), `syncguard scan` and the playground.
    #[default]
    Every,
    /// Only what the API server stored: a CRD update's stored objects (`storedObjects`) and a
    /// stored custom resource the audit sends ([`is_stored`]), never the request's own object
    /// otherwise. The all-in-one runs the check so, because it is a mutating webhook: the API
    /// server calls mutating webhooks before its registry sets the object's uid and creation
    /// time and validates it (the create handler, `createHandler` in the apiserver's
    /// `endpoints/handlers/create.go`, runs the mutating `Admit` before the registry's `Create`,
    /// whose `FillObjectMetaSystemFields` and `BeforeCreate` follow), so every CREATE reaches it
    /// looking like a manifest, and a field a later mutating webhook fills (Cluster API's
    /// defaulting of `MachineDeployment.spec.selector`) would be refused as missing. Nor can a
    /// mutating webhook tell a `kwctl run` manifest from such a CREATE: manifests are for the
    /// object-validation module, `syncguard scan` and the playground.
    Stored,
}

/// A custom resource whose stored objects an update of its CRD is judged against, named as a
/// policy's `contextAwareResources` names it: the lookup lists its objects at `api_version`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct StoredResource {
    /// `<group>/<version>` (`cert-manager.io/v1`).
    pub api_version: String,
    /// The kind (`Certificate`).
    pub kind: String,
}

impl StoredResource {
    /// The API group and version.
    fn group_version(&self) -> (&str, &str) {
        self.api_version.rsplit_once('/').unwrap_or(("", &self.api_version))
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            rules: RuleActions::default(),
            max_findings: 20,
            kubernetes_version: format!("1.{NEWEST_MINOR}"),
            stored_objects: Vec::new(),
        }
    }
}

impl Settings {
    /// The Kubernetes minor version (the newest when it does not read; validated before).
    pub fn minor(&self) -> u32 {
        minor_of(&self.kubernetes_version).unwrap_or(NEWEST_MINOR)
    }

    /// The lookups `storedObjects` asks for, each as a deployment grants it in its
    /// `contextAwareResources`: `(apiVersion, kind)`.
    pub fn lookups(&self) -> Vec<(String, String)> {
        self.stored_objects
            .iter()
            .map(|r| (r.api_version.clone(), r.kind.clone()))
            .collect()
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
    const READS_OLD_WHOLE: bool = true;
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
        check_kubernetes_version(&settings.kubernetes_version)?;
        check_stored_objects(&settings.stored_objects)
    }

    fn settings_lookups(settings: &Settings) -> Vec<(String, String)> {
        settings.lookups()
    }

    fn check(
        request: &Request<'_>,
        objects: &Objects<'_>,
        settings: &Settings,
        cluster: &dyn Cluster,
    ) -> Result<Report, Malformed> {
        Self::judge(request, objects, settings, Judged::Every, cluster)
    }
}

impl ObjectValidation {
    /// The check's report on a request, judging what `judged` says: [`Check::check`] judges
    /// [`Judged::Every`] object, the all-in-one only what the API server stored.
    pub fn judge(
        request: &Request<'_>,
        objects: &Objects<'_>,
        settings: &Settings,
        judged: Judged,
        cluster: &dyn Cluster,
    ) -> Result<Report, Malformed> {
        // Judging only what the API server stored, a request that can be neither a CRD update nor
        // the audit's stored custom resource is not even read.
        if judged == Judged::Stored && !may_be_stored(request) {
            return Ok(Report::nothing());
        }
        let (node, _) = objects
            .tree()
            .map_err(|e| Malformed::new(format!("the object is not JSON: {e}")))?;
        if !matches!(node, Node::Object(_)) {
            return Err(Malformed::new("the object is not a JSON object"));
        }
        let metadata = node.get("metadata");
        let text = |key: &str| {
            metadata
                .and_then(|m| m.get(key))
                .and_then(Node::as_str)
                .unwrap_or_default()
        };
        let subject = Subject::new(request, text("name"), text("generateName"), text("namespace"));
        let live = is_live(metadata);
        let stored_object = is_stored(request, metadata);
        let minor = settings.minor();
        let (group, version) = api_version(node, request);
        let kind = node
            .get("kind")
            .and_then(Node::as_str)
            .unwrap_or(&request.kind.kind)
            .to_string();

        let built_in = crate::generated::api_cluster_scoped(&group, &version, &kind).is_some();
        let crd_kind = group == "apiextensions.k8s.io" && kind == "CustomResourceDefinition";
        let crd_update = request.is_update() && crd_kind;
        // What the API server itself validated against the schema this check would apply is not
        // judged again: a live object a request writes (it validated it a moment before it called
        // any validating webhook, so a finding could only be wrong) and, in the audit, a stored
        // object of a built-in kind (its schema and metadata rules are the API server's code,
        // which an upgrade keeps compatible). Judging them would cost a schema's compilation per
        // request, for nothing: policy-server instantiates a module afresh for each. A CRD
        // update's stored objects are judged all the same.
        // Judging only what the API server stored, a CRD update's own object and an object the
        // request writes are not judged either.
        let unjudged = judged == Judged::Stored && !stored_object;
        if unjudged || (live && !stored_object) || (stored_object && (built_in || group.is_empty())) {
            let findings = if crd_update {
                stored_objects(node, settings, cluster)
            } else {
                Vec::new()
            };
            return Ok(Report::new(subject, findings));
        }
        let old = match objects.old_tree() {
            Some(Ok((old, _))) if request.is_update() => Some(old),
            _ => None,
        };
        let mut errors: Vec<(&'static str, FieldError)> = Vec::new();
        let mut others: Vec<Finding> = Vec::new();
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
        // A CRD's own validation (its schemas' types), beside its schema as a built-in kind.
        if crd_kind && version == "v1" {
            let old_crd = old.filter(|_| request.is_update());
            for error in crd::validate(node, old_crd, minor) {
                errors.push(("schemaViolation", error));
            }
        }
        if let Some(compiled) = compiled {
            match compiled {
                Ok(compiled) => {
                    let options = validate::Options {
                        skip_status: compiled.status_subresource,
                        unknown_fields: true,
                        open_empty_objects: built_in,
                        as_written: false,
                        embedded_judged: false,
                    };
                    let (mut field_errors, reached, parts) =
                        validate::validate_noting_rules(&compiled.schema, node, old, &options);
                    // A part of a stored CRD's schema that does not compile: the schema is
                    // unreadable for the objects that reach it, as it is whole for the others.
                    if let Some(part) = parts.first() {
                        field_errors.clear();
                        if let Some(action) = reject_or_warn(settings.action("unreadableSchema")) {
                            let text = format!(
                                "{}.{}: {}; this {kind} was not validated",
                                compiled.origin, part.path, part.message
                            );
                            let parts = Parts::default().elidable(text);
                            others.push(Finding::new("unreadableSchema", action, "", parts.clone(), parts));
                        }
                    }
                    // A CRD nobody validated has all its rules' errors; one the API server
                    // stored, those of the rules this object reached.
                    let rule_errors = match compiled.rule_errors.as_ref() {
                        _ if !parts.is_empty() => &Vec::new(),
                        Some(all) => all,
                        None => &reached,
                    };
                    for error in field_errors {
                        let rule = if error.kind == field_error::ErrorType::UnknownField {
                            "unknownField"
                        } else if error.cel {
                            "celViolation"
                        } else {
                            "schemaViolation"
                        };
                        errors.push((rule, error));
                    }
                    if let Some(first) = rule_errors.first()
                        && let Some(action) = reject_or_warn(settings.action("unreadableSchema"))
                    {
                        let more = rule_errors.len() - 1;
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
        // Judged against a schema the API server has not applied to it: a stored custom
        // resource's schema findings (the audit), and a CRD update's stored objects.
        let schema_judged_anew = stored_object && !built_in && !group.is_empty();
        let mut findings = others;
        if crd_update {
            findings.extend(stored_objects(node, settings, cluster));
        }
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
                    let anew = f.rule == stored::RULE.id
                        || (schema_judged_anew && matches!(f.rule, "schemaViolation" | "celViolation"));
                    f.warn_if(!anew, || {
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
                intro: if schema_judged_anew {
                    format!(
                        "{listed} field {errors} the API server answers to this stored object against its CRD's current schema, which changed since it was written (an update that changes these fields, and a CREATE of the same manifest, fail); fix the object:"
                    )
                } else {
                    format!(
                        "{listed} field {errors} the API server answers to this object (its apply fails with `is invalid`); fix the manifest:"
                    )
                },
                intro_brief: if schema_judged_anew {
                    format!("{listed} field {errors} against its CRD's current schema.")
                } else {
                    format!("{listed} field {errors} the API server answers.")
                },
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

/// Whether the request re-examines an object the cluster stores rather than writes one: a
/// CREATE of an object with a `resourceVersion`, which the API server refuses on a real CREATE
/// (`resourceVersion should not be set on objects to be created`) and which Kubewarden's audit
/// scanner sends for every stored object it audits.
pub fn is_stored(request: &Request<'_>, metadata: Option<&Node<'_>>) -> bool {
    request.operation == Some(Operation::Create)
        && metadata
            .and_then(|m| m.get("resourceVersion"))
            .and_then(Node::as_str)
            .is_some_and(|v| !v.is_empty())
}

/// Whether a request, by its operation and kind alone, may hold what the API server stored: a
/// CRD update (its stored objects) or a CREATE of a custom resource (the audit's stored object).
fn may_be_stored(request: &Request<'_>) -> bool {
    let kind = &request.kind;
    let crd = kind.group == "apiextensions.k8s.io" && kind.kind == "CustomResourceDefinition";
    match request.operation {
        Some(Operation::Update) => crd,
        Some(Operation::Create) => {
            !kind.group.is_empty()
                && crate::generated::api_cluster_scoped(&kind.group, &kind.version, &kind.kind).is_none()
        }
        _ => false,
    }
}

/// Checks `storedObjects`: each a custom resource's `apiVersion` (`<group>/<version>`) and kind,
/// named once.
fn check_stored_objects(resources: &[StoredResource]) -> Result<(), String> {
    for (i, resource) in resources.iter().enumerate() {
        let at = format!("`storedObjects[{i}]`");
        let (group, version) = resource.group_version();
        if group.is_empty() || version.is_empty() || version.contains('/') {
            return Err(format!(
                "{at}: apiVersion {} is not `<group>/<version>` of a custom resource (e.g. `cert-manager.io/v1`)",
                quote(&resource.api_version)
            ));
        }
        if resource.kind.is_empty() {
            return Err(format!("{at}: `kind` is required (e.g. `Certificate`)"));
        }
        if crate::generated::api_cluster_scoped(group, version, &resource.kind).is_some() {
            return Err(format!(
                "{at}: {} of {} is a built-in kind: only a custom resource has a CRD whose update changes its schema",
                resource.kind, resource.api_version
            ));
        }
        if resources[..i].contains(resource) {
            return Err(format!(
                "{at}: {} of {} is named twice",
                resource.kind, resource.api_version
            ));
        }
    }
    Ok(())
}

/// The findings of a CRD update (`crd`, the new object) about the objects it stores, for each
/// kind of `storedObjects` that is the CRD's: those its new schema refuses ([`stored::RULE`]), or
/// why they could not be judged.
fn stored_objects(crd: &Node<'_>, settings: &Settings, cluster: &dyn Cluster) -> Vec<Finding> {
    let field = |keys: &[&str]| crd.at(keys).and_then(Node::as_str).unwrap_or_default();
    let (crd_group, crd_kind) = (field(&["spec", "group"]), field(&["spec", "names", "kind"]));
    let served = |version: &str| match crd.at(&["spec", "versions"]) {
        Some(Node::Array(versions)) => versions
            .iter()
            .any(|v| v.get("name").and_then(Node::as_str) == Some(version)),
        _ => false,
    };
    let minor = settings.minor();
    let mut findings = Vec::new();
    let mut unjudged = |why: String| {
        if let Some(action) = reject_or_warn(settings.action(stored::UNLISTED.id)) {
            let parts = Parts::default().elidable(why);
            findings.push(Finding::new(stored::UNLISTED.id, action, "", parts.clone(), parts));
        }
    };
    let mut judged = Vec::new();
    for resource in &settings.stored_objects {
        let (group, version) = resource.group_version();
        // A version the new CRD no longer serves is crd-safe-upgrade's finding, not this one's.
        if group != crd_group || resource.kind != crd_kind || !served(version) {
            continue;
        }
        let noun = stored::plural(&resource.kind);
        let items = match cluster.list_all(&resource.api_version, &resource.kind, &[]) {
            Ok(items) => items,
            Err(LookupError::Forbidden(_)) => {
                unjudged(format!(
                    "the stored {noun} were not judged against the new schema: the policy may not list {} of {} (grant it in the policy's contextAwareResources)",
                    resource.kind, resource.api_version
                ));
                continue;
            }
            Err(e) => {
                let e: String = e.into();
                unjudged(format!(
                    "the stored {noun} could not be listed ({}), so they were not judged against the new schema",
                    elide(&e, 120)
                ));
                continue;
            }
        };
        let list = match json::read(items.text(), json::Everything, usize::MAX) {
            Ok(list) => list,
            Err(e) => {
                unjudged(format!(
                    "the cluster's list of {noun} is not JSON ({e}), so they were not judged against the new schema"
                ));
                continue;
            }
        };
        let objects: &[Node<'_>] = match list.get("items") {
            Some(Node::Array(items)) => items,
            _ => &[],
        };
        match stored::judge(crd, objects, minor) {
            Ok(stored) => judged.push(stored),
            Err(unreadable) => unjudged(format!(
                "the new schema cannot be compiled ({}: {}), so the stored {noun} were not judged",
                unreadable.path, unreadable.error
            )),
        }
    }
    if let Some(action) = reject_or_warn(settings.action(stored::RULE.id)) {
        findings.extend(judged.iter().filter_map(|s| stored::finding(s, action, minor)));
    }
    findings
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
    /// The errors of every CEL rule of the schema that does not compile, found when it was
    /// compiled: the API server would refuse the CRD whichever rule it is, and a CRD from the
    /// scanned files has not been through it. None for a CRD the API server stored
    /// ([`is_live`]), which its own validation compiled every rule of: its rules are compiled
    /// as objects reach them ([`Schema::rules_at`]), and one our CEL library cannot compile is
    /// reported for the objects that reach it.
    pub rule_errors: Option<Vec<String>>,
    /// The schema's place as its errors name it (`CRD <name>: spec.versions[<i>].schema.openAPIV3Schema`).
    pub origin: String,
}

/// How many built-in kinds' compiled schemas a module instance keeps.
const KEPT_BUILTINS: usize = 8;

/// A built-in kind's compiled schema, by apiVersion, kind and minor (none: no such kind).
type KeptBuiltin = ((String, String, u32), Option<Rc<Compiled>>);

thread_local! {
    /// The built-in kinds' schemas compiled last, newest first.
    static BUILTINS: RefCell<Vec<KeptBuiltin>> = const { RefCell::new(Vec::new()) };
}

/// The compiled schema of a built-in kind at Kubernetes 1.`minor` ([`builtin::root`]), once
/// per module instance; none for a kind the documents lack. Only the kind's root is compiled
/// here: each definition it reaches is read from the table and compiled when the validation
/// first reaches a `$ref` to it ([`Schema::compile_deferred`]), so an object pays for the
/// definitions its fields go into (a Deployment's root reaches 120, a Deployment sets fields
/// of a few dozen), which matters where every admission is a fresh module instance.
fn builtin_schema(api_version: &str, kind: &str, minor: u32) -> Option<Rc<Compiled>> {
    let key = (api_version.to_string(), kind.to_string(), minor);
    if let Some(found) = BUILTINS.with_borrow(|kept| kept.iter().find(|(k, _)| *k == key).map(|(_, c)| c.clone())) {
        return found;
    }
    let compiled = builtin::root(api_version, kind, minor).and_then(|(_, root)| {
        let definitions = Box::new(move |name: &str| builtin::definition(name, minor));
        Schema::compile_deferred(&root, definitions, minor).ok().map(|schema| {
            Rc::new(Compiled {
                schema,
                // The built-in kinds' registry strategies reset `status` on a create and keep
                // the old one on an update.
                status_subresource: true,
                // No built-in schema has CEL rules.
                rule_errors: None,
                origin: String::new(),
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

/// The nesting level of a version's `schema` in a CRD answer (the answer 1, `spec` 2,
/// `versions` 3, the version 4).
const SCHEMA_LEVEL: usize = 5;

/// The deepest level (its root 1) a part of an `openAPIV3Schema` compiled part by part may nest
/// to: what the whole read allows it (a `schema` read nested under 120 levels less
/// [`SCHEMA_LEVEL`]).
const MAX_PART_LEVEL: usize = 120 - SCHEMA_LEVEL - 2;

/// Compiles `version`'s schema of the CRD `text`; `Err` says why it cannot be (the version is
/// not there: `Ok` is never a silent accept).
///
/// Only the version's schema is read into a tree ([`CrdPart`]). An answer that does not
/// read so, or a schema nested near serde_json's 128 levels (which count from the answer's
/// root), is read whole as before, so that its error is the whole read's. (The parts stepped
/// over are not held to serde_json's nesting limit: an answer nested deeper than 128 levels only
/// in its metadata or another version now compiles, where the whole read called it not JSON.)
fn compile_crd(text: &str, version: &str, minor: u32, name: &str) -> Result<Compiled, String> {
    let read = json::read(text, CrdPart::VersionsRoot, usize::MAX)
        .ok()
        .and_then(|crd| {
            let versions = match crd.at(&["spec", "versions"]) {
                Some(Node::Array(versions)) => versions,
                _ => return Some(Err(format!("CRD {name} has no spec.versions"))),
            };
            let stored = is_live(crd.get("metadata"));
            let Some((index, entry)) = versions
                .iter()
                .enumerate()
                .find(|(_, v)| v.get("name").and_then(Node::as_str) == Some(version))
            else {
                return Some(compile_version(None, version, minor, name, stored));
            };
            let schema = match entry.get("schema") {
                // A stored CRD's schema is compiled part by part, as far as the objects go: only
                // its `openAPIV3Schema`'s text is kept.
                Some(Node::Raw(raw)) if stored => json::read(raw.get(), CrdPart::SchemaText, 2).ok()?,
                Some(Node::Raw(raw)) => {
                    let (schema, depth) = json::read_noting_depth(raw.get(), json::Everything, usize::MAX).ok()?;
                    (depth + SCHEMA_LEVEL < 120).then_some(schema)?
                }
                _ => Node::Null,
            };
            Some(compile_version(
                Some((index, entry, &schema)),
                version,
                minor,
                name,
                stored,
            ))
        });
    read.unwrap_or_else(|| {
        let crd = json::read(text, json::Everything, usize::MAX)
            .map_err(|e| format!("the answer for {name} is not JSON: {e}"))?;
        let found = match crd.at(&["spec", "versions"]) {
            Some(Node::Array(versions)) => versions
                .iter()
                .enumerate()
                .find(|(_, v)| v.get("name").and_then(Node::as_str) == Some(version)),
            _ => return Err(format!("CRD {name} has no spec.versions")),
        };
        let found = found.map(|(index, entry)| (index, entry, entry.get("schema").unwrap_or(&Node::Null)));
        compile_version(found, version, minor, name, is_live(crd.get("metadata")))
    })
}

/// Compiles the CRD version `found` (its index, its entry and its `schema`), or says the CRD
/// `name` serves no `version`. `stored`: the API server stored the CRD (it has a uid, a
/// resourceVersion or a creation time: the cluster's answer, a cluster snapshot's), so its own
/// validation compiled every CEL rule, and the rules are compiled only as objects reach them;
/// a CRD of the scanned files has every rule compiled now, for the errors of all of them.
fn compile_version(
    found: Option<(usize, &Node<'_>, &Node<'_>)>,
    version: &str,
    minor: u32,
    name: &str,
    stored: bool,
) -> Result<Compiled, String> {
    let Some((index, entry, schema)) = found else {
        return Err(format!("CRD {name} serves no version {}", quote(version)));
    };
    let status_subresource = entry
        .at(&["subresources", "status"])
        .is_some_and(|status| !status.is_null());
    let path = format!("spec.versions[{index}].schema.openAPIV3Schema");
    let unreadable = |e: SchemaError| {
        let at = if e.path.is_empty() {
            path.clone()
        } else {
            format!("{path}.{}", e.path)
        };
        format!("CRD {name}: {at}: {}", e.message)
    };
    let schema = match schema.get("openAPIV3Schema") {
        // Read as text (a stored CRD's): compiled part by part.
        Some(Node::Raw(raw)) => Schema::compile_parts(raw.get(), minor, MAX_PART_LEVEL).map_err(unreadable)?,
        Some(schema) => Schema::compile(schema, None, minor).map_err(unreadable)?,
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
    let rule_errors = (!stored).then(|| schema.rule_errors());
    Ok(Compiled {
        schema,
        status_subresource,
        rule_errors,
        origin: format!("CRD {name}: {path}"),
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
    let not_validated = |why: String| unknown(format!("{why}, so this {kind} was not validated"));
    let (name, text) = cluster::crd_of_resource(&resource.resource, group, kind, cluster).map_err(|missing| {
        not_validated(match missing {
            CrdMissing::NotFound { name } => {
                format!("no CRD {name} is known (neither in the scanned files, the cluster snapshot nor the cluster)")
            }
            CrdMissing::NoneOfKind => format!("no CRD of {kind} in {group} is known"),
            CrdMissing::Unlisted(e) => format!(
                "the CRDs could not be listed to find the one of {kind} in {group} ({})",
                elide(&e, 120)
            ),
            CrdMissing::ListNotJson(e) => format!("the cluster's list of CRDs is not JSON ({e})"),
            CrdMissing::Unreadable { name, error } => {
                format!("the CRD {name} could not be read ({})", elide(&error, 120))
            }
        })
    })?;
    match compiled_of(&text, version, minor, &name) {
        Ok(compiled) => Ok(compiled),
        Err(why) if why.contains("serves no version") => Err(not_validated(why)),
        Err(why) => Err(Unvalidated {
            rule: "unreadableSchema",
            text: format!("{why}; this {kind} was not validated"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{self, answer, decide};
    use crate::cluster::Objects as Stored;
    use serde_json::{Value, json};

    /// A Widget CRD at `maximum` replicas, as installed or as updated.
    fn crd(maximum: u32) -> Value {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
          "metadata": {"name": "widgets.example.com", "uid": "c1", "resourceVersion": "7"},
          "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
              "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {"replicas": {"type": "integer", "maximum": maximum}}}}}}}]},
          "status": {"storedVersions": ["v1"]}})
    }

    fn widget(name: &str, replicas: u32) -> Value {
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
          "metadata": {"name": name, "namespace": "shop", "uid": format!("u-{name}"), "resourceVersion": "42"},
          "spec": {"replicas": replicas}})
    }

    const GRANT: &str = r#"{"storedObjects": [{"apiVersion": "example.com/v1", "kind": "Widget"}]"#;

    fn update(settings: &str, cluster: &dyn Cluster) -> crate::render::Answer {
        let request = syncguard_testkit::crd_request("UPDATE", &crd(3), Some(&crd(10)));
        let settings: Value = serde_json::from_str(settings).unwrap();
        answer::<ObjectValidation>(syncguard_testkit::payload(&request, &settings).as_bytes(), cluster)
    }

    #[test]
    fn a_crd_update_names_the_stored_objects_its_new_schema_refuses() {
        let cluster = Stored(vec![widget("api", 5), widget("web", 2), crd(10)]);
        let warned = update(&format!("{GRANT}}}"), &cluster).response;
        assert!(warned.accepted);
        let warnings = warned.warnings;
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains(
                "1 of 2 stored Widgets no longer validates: shop/api (spec.replicas: Invalid value: 5: spec.replicas in body should be less than or equal to 3)"
            ),
            "{warnings:?}"
        );
        // A setting makes it a refusal, although the CRD is a live object.
        let refused = update(
            &format!(r#"{GRANT}, "rules": {{"storedObjectInvalid": "reject"}}}}"#),
            &cluster,
        )
        .response;
        assert!(!refused.accepted);
        let message = refused.message.unwrap_or_default();
        assert!(message.contains("against the new schema: shop/api ("), "{message}");
        assert!(message.contains("ratcheting validation"), "{message}");
        // Without `storedObjects`, nothing is listed and nothing said.
        let quiet = update("{}", &cluster).response;
        assert!(quiet.accepted && quiet.warnings.is_empty());
        // Every stored object valid: nothing said.
        let valid = update(&format!("{GRANT}}}"), &Stored(vec![widget("web", 2)])).response;
        assert!(valid.warnings.is_empty());
    }

    #[test]
    fn a_lookup_the_policy_may_not_make_is_said_never_refused() {
        struct Refusing;
        impl crate::cluster::HostCalls for Refusing {
            fn host_call(&self, _: &str, _: &[u8]) -> Result<Vec<u8>, String> {
                Err("Policy has not been granted access to Kubernetes example.com/v1/Widget resources. The violation has been reported.".into())
            }
        }
        let response = update(
            &format!(r#"{GRANT}, "rules": {{"storedObjectInvalid": "reject"}}}}"#),
            &Refusing,
        )
        .response;
        assert!(response.accepted);
        let warnings = response.warnings;
        assert!(
            warnings[0].contains("the stored Widgets were not judged against the new schema: the policy may not list Widget of example.com/v1 (grant it in the policy's contextAwareResources)"),
            "{warnings:?}"
        );
    }

    #[test]
    fn stored_objects_settings_are_checked() {
        let refused = |settings: &str| {
            check::parse_settings::<ObjectValidation>(Some(settings))
                .map(|_| ())
                .unwrap_err()
        };
        assert!(
            refused(r#"{"storedObjects": [{"apiVersion": "v1", "kind": "Widget"}]}"#)
                .contains("`storedObjects[0]`: apiVersion \"v1\" is not `<group>/<version>`")
        );
        assert!(refused(r#"{"storedObjects": [{"apiVersion": "example.com/v1"}]}"#).contains("`kind` is required"));
        assert!(
            refused(r#"{"storedObjects": [{"apiVersion": "apps/v1", "kind": "Deployment"}]}"#)
                .contains("is a built-in kind")
        );
        assert!(
            refused(
                r#"{"storedObjects": [{"apiVersion": "a.io/v1", "kind": "A"}, {"apiVersion": "a.io/v1", "kind": "A"}]}"#
            )
            .contains("`storedObjects[1]`: A of a.io/v1 is named twice")
        );
        assert!(
            refused(r#"{"storedObjects": [{"apiVersion": "a.io/v1", "kind": "A", "namespace": "x"}]}"#)
                .contains("unknown field `namespace`")
        );
        assert!(refused(r#"{"rules": {"storedObjectsUnlisted": "reject"}}"#).contains("cannot be `reject`"));
        let settings = check::parse_settings::<ObjectValidation>(Some(&format!("{GRANT}}}"))).unwrap();
        assert_eq!(
            settings.lookups(),
            [("example.com/v1".to_string(), "Widget".to_string())]
        );
        let all = check::settings_lookups::<crate::all_in_one::AllInOne>(Some(&format!(
            r#"{{"objectValidation": {GRANT}}}}}"#
        )))
        .unwrap();
        assert_eq!(all, settings.lookups());
        let off = check::settings_lookups::<crate::all_in_one::AllInOne>(Some(&format!(
            r#"{{"objectValidation": {GRANT}, "enabled": false}}}}"#
        )))
        .unwrap();
        assert!(off.is_empty());
    }

    #[test]
    fn the_audit_reads_the_crd_by_its_likely_name_and_lists_only_when_it_misses() {
        /// Answers like [`Stored`], and says which calls it answered.
        struct Counting(Stored, RefCell<Vec<String>>);
        impl crate::cluster::HostCalls for Counting {
            fn host_call(&self, operation: &str, request: &[u8]) -> Result<Vec<u8>, String> {
                let asked: Value = serde_json::from_slice(request).unwrap();
                let name = asked["name"].as_str().unwrap_or("*");
                self.1.borrow_mut().push(format!("{operation} {name}"));
                self.0.host_call(operation, request)
            }
        }
        let calls = |cluster: Stored| {
            let counting = Counting(cluster, RefCell::new(Vec::new()));
            let response = decide::<ObjectValidation>(
                syncguard_testkit::payload(&audit(&widget("api", 5)), &json!({})).as_bytes(),
                &counting,
            );
            (response, counting.1.into_inner())
        };
        // Found by its likely name: no list.
        let (response, asked) = calls(Stored(vec![crd(3)]));
        assert!(!response.accepted);
        assert_eq!(asked, ["get_resource widgets.example.com"]);
        // A CRD of that name that defines another kind is not taken for it: the list finds the
        // one that does (its plural named by hand).
        let mut other = crd(10);
        other["spec"]["names"]["kind"] = json!("Gadget");
        let mut widget_crd = crd(3);
        widget_crd["metadata"]["name"] = json!("widgetz.example.com");
        widget_crd["spec"]["names"]["plural"] = json!("widgetz");
        let (response, asked) = calls(Stored(vec![other, widget_crd]));
        assert!(!response.accepted, "{:?}", response.warnings);
        assert_eq!(
            asked,
            [
                "get_resource widgets.example.com",
                "list_resources_all *",
                "get_resource widgetz.example.com",
            ]
        );
    }

    #[test]
    fn a_stored_crds_unreadable_part_is_said_for_the_objects_that_reach_it() {
        // `spec.colour` has a type that is no string; `stored` as above.
        let crd_with = |stored: bool| {
            let mut crd = crd(10);
            crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["colour"] =
                json!({"type": 5});
            if !stored {
                crd["metadata"] = json!({"name": "widgets.example.com"});
            }
            crd
        };
        let answer = |stored: bool, colour: bool| {
            let mut object = json!({"apiVersion": "example.com/v1", "kind": "Widget",
              "metadata": {"name": "api", "namespace": "shop"}, "spec": {"replicas": 11}});
            if colour {
                object["spec"]["colour"] = json!("blue");
            }
            let request = syncguard_testkit::object_request("CREATE", &object, "widgets");
            let response = decide::<ObjectValidation>(
                syncguard_testkit::payload(&request, &json!({})).as_bytes(),
                &Stored(vec![crd_with(stored)]),
            );
            (response.accepted, response.warnings, response.message)
        };
        let said = "CRD widgets.example.com: spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.colour.type: must be a string; this Widget was not validated";
        // A CRD of the scanned files is compiled whole: unreadable whatever the object.
        let scanned = answer(false, false);
        assert!(
            scanned.0 && scanned.1.len() == 1 && scanned.1[0].contains(said),
            "{scanned:?}"
        );
        assert_eq!(answer(false, true), scanned);
        // A stored CRD, compiled as far as the object goes: an object that does not reach the
        // part is judged (its replicas over the maximum), one that does is not, in the same words.
        let (accepted, _, message) = answer(true, false);
        assert!(
            !accepted && message.as_deref().is_some_and(|m| m.contains("spec.replicas")),
            "{message:?}"
        );
        assert_eq!(answer(true, true), scanned);
    }

    #[test]
    fn a_stored_crd_compiles_only_the_rules_an_object_reaches() {
        // A rule that does not compile, at `spec.mode`; `stored`: the CRD as the cluster answers
        // it (with its uid and resourceVersion), else as a manifest of the scanned files.
        let crd_with = |stored: bool| {
            let mut crd = crd(10);
            crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["mode"] = json!({
                "type": "string", "x-kubernetes-validations": [{"rule": "self.startsWith(", "message": "bad"}]});
            if !stored {
                crd["metadata"] = json!({"name": "widgets.example.com"});
            }
            crd
        };
        let warnings = |stored: bool, mode: Option<&str>| {
            let mut object = json!({"apiVersion": "example.com/v1", "kind": "Widget",
              "metadata": {"name": "api", "namespace": "shop"}, "spec": {"replicas": 1}});
            if let Some(mode) = mode {
                object["spec"]["mode"] = json!(mode);
            }
            let request = syncguard_testkit::object_request("CREATE", &object, "widgets");
            let response = decide::<ObjectValidation>(
                syncguard_testkit::payload(&request, &json!({})).as_bytes(),
                &Stored(vec![crd_with(stored)]),
            );
            assert!(response.accepted);
            response.warnings
        };
        let said = "a CEL rule of the schema does not compile (properties.spec.properties.mode.x-kubernetes-validations[0].rule";
        // A CRD of the scanned files: every rule compiled, its error said whatever the object.
        let scanned = warnings(false, None);
        assert!(scanned.len() == 1 && scanned[0].contains(said), "{scanned:?}");
        assert_eq!(warnings(false, Some("x")), scanned);
        // A CRD the API server stored: the rule compiled, and said, only for an object reaching
        // it, in the same words.
        assert_eq!(warnings(true, None), Vec::<String>::new());
        assert_eq!(warnings(true, Some("x")), scanned);
    }

    /// A stored Widget as Kubewarden's audit scanner sends it: a CREATE of the stored object, its
    /// resource named by its kind, no user.
    fn audit(object: &Value) -> Value {
        json!({"uid": object["metadata"]["uid"], "name": object["metadata"]["name"],
          "namespace": object["metadata"]["namespace"],
          "kind": {"group": "example.com", "version": "v1", "kind": "Widget"},
          "resource": {"group": "example.com", "version": "v1", "resource": "Widget"},
          "requestKind": {"group": "example.com", "version": "v1", "kind": "Widget"},
          "operation": "CREATE", "userInfo": {}, "object": object, "oldObject": null, "options": null})
    }

    #[test]
    fn the_audit_fails_a_stored_custom_resource_its_crd_now_refuses() {
        let cluster = Stored(vec![crd(3)]);
        let judged = |object: &Value| {
            decide::<ObjectValidation>(
                syncguard_testkit::payload(&audit(object), &json!({})).as_bytes(),
                &cluster,
            )
        };
        let failed = judged(&widget("api", 5));
        assert!(!failed.accepted);
        let message = failed.message.unwrap_or_default();
        assert!(
            message
                .contains("spec.replicas: Invalid value: 5: spec.replicas in body should be less than or equal to 3"),
            "{message}"
        );
        assert!(judged(&widget("web", 2)).accepted);
        // The same object at admission (an UPDATE of it) only warns: the API server judged it.
        let mut request = audit(&widget("api", 5));
        request["operation"] = json!("UPDATE");
        request["oldObject"] = widget("api", 5);
        request["resource"]["resource"] = json!("widgets");
        let admitted =
            decide::<ObjectValidation>(syncguard_testkit::payload(&request, &json!({})).as_bytes(), &cluster);
        assert!(admitted.accepted);
        // A CRD the cluster does not have: said, never refused.
        let unknown = decide::<ObjectValidation>(
            syncguard_testkit::payload(&audit(&widget("api", 5)), &json!({})).as_bytes(),
            &Stored(Vec::new()),
        );
        assert!(unknown.accepted);
        assert!(unknown.warnings[0].contains("no CRD of Widget in example.com is known"),);
    }

    #[test]
    fn a_built_in_kinds_schema_is_compiled_as_far_as_its_objects_go() {
        let minor = 35;
        let compiled = builtin_schema("apps/v1", "Deployment", minor).expect("Deployment");
        assert_eq!(compiled.schema.definitions_compiled(), 0, "only the root compiled");
        let deployment = json::read(
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"selector":
            {"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":
            {"containers":[{"name":"web","image":"nginx","ports":[{"containerPort":80,"protocol":"udp"}]}]}}}}"#,
            json::Everything,
            64,
        )
        .unwrap();
        let options = validate::Options {
            skip_status: true,
            unknown_fields: true,
            open_empty_objects: true,
            as_written: false,
            embedded_judged: false,
        };
        let errors = validate::validate(&compiled.schema, &deployment, None, &options);
        assert_eq!(errors.len(), 1, "{errors:?}");
        let reached = compiled.schema.definitions_compiled();
        assert!(reached > 5 && reached < 30, "{reached} of the 120 definitions compiled");
        // The instance keeps the schema, with what it compiled, for the next object.
        let again = builtin_schema("apps/v1", "Deployment", minor).expect("Deployment");
        assert!(Rc::ptr_eq(&again, &compiled));
        validate::validate(&again.schema, &deployment, None, &options);
        assert_eq!(again.schema.definitions_compiled(), reached);
    }
}
