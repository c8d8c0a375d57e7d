//! crd-safe-upgrade: refuses CustomResourceDefinition updates that strand or lose stored data,
//! downgrade a bundle or move it to a less stable channel, warns of tightened validation, and
//! reports CRDs with a pending storage migration (problem 5: Gateway API 3509).
//!
//! The API server checks that every entry of `status.storedVersions` is still listed in
//! `spec.versions` during object validation, after mutating admission and before validating
//! admission. A validating webhook therefore never sees such an update; the policy is
//! registered as mutating (it never patches) so it answers first, with the remedy.
//!
//! Checks on UPDATE (old object against new object), in this fixed order:
//! 1. `storedVersions`: a version of `oldObject.status.storedVersions` missing from the new
//!    `spec.versions` is rejected, with the official migration filled in. An old object without
//!    `status.storedVersions` (a manifest from git or the playground, never a live CRD) is taken
//!    to have stored its storage version, and the message says so.
//!    Then the schema comparison ([`schema`]): each change has a rule and an [`Effect`]; the
//!    `profile` setting turns them into actions. `admission` (default) rejects what loses or
//!    misreads stored data, warns of what tightens validation or changes defaults, and drops
//!    what changes nothing; `olm` and `crdify` reject by rule as OLM v1 and crdify do.
//!    `schemaRules` overrides one rule; in `olm` and `crdify`, its `unhandled` entry also covers
//!    the rules split from crdify's `unhandled` that it does not name. Installing a more stable
//!    channel of the same bundle version turns `admission`'s field removals into warnings.
//! 2. `downgrade`: an annotation of setting `versionAnnotations` whose semantic version goes
//!    down is rejected. A value that is not a semantic version gives a warning and no verdict.
//! 3. `channel`: an annotation of setting `channelAnnotations` that moves to a less stable
//!    channel is rejected. A value that is not one of the listed channels gives a warning.
//! 4. A change of the `storage: true` version is accepted with a warning, unless the previous
//!    storage version is dropped from `spec.versions` (then check 1 reports it).
//! 5. A stored version that was served and stops being served is accepted with a warning.
//!
//! An annotation absent from the old or the new object gives no finding (nothing to compare).
//!
//! On CREATE: Kubewarden's audit scanner sends live objects as CREATE requests, status
//! included; a real CREATE never carries `status.storedVersions`. A CREATE whose object has a
//! non-empty `status.storedVersions` is therefore judged as an existing CRD (`pendingMigration`):
//! more than one stored version, a stored version missing from `spec.versions`, or a stored
//! version other than the storage version that is not served is rejected with the remedy.
//! A CREATE with an empty or absent `status.storedVersions` is accepted.
//!
//! Every rejection of checks 1 to 3 and of `pendingMigration` becomes a warning when its name
//! is in setting `warnOnly`. All findings of one request are reported together: rejections in
//! one message, in the order above, and warnings in the same order.
//!
//! Requests this check does not apply to are accepted without reading the objects: those its
//! metadata.yml rules do not match (another resource than `apiextensions.k8s.io/v1`
//! `customresourcedefinitions`, a subresource, another operation than CREATE and UPDATE), and
//! those of another kind than `apiextensions.k8s.io` `CustomResourceDefinition`. Malformed input is rejected with code 400: an object or
//! old object that is not a CRD of the expected shape (for example `spec.versions` that is not
//! a list, or an annotation value that is not a string), a CREATE without `object`, or an
//! UPDATE without `object` or `oldObject`. `null` in place of a list, map or object is read
//! as empty (raw manifests carry `storedVersions: null`).

use crate::admission::{ObjectJson, Operation, Request};
use crate::check::{Check, GroupKind, Objects};
use crate::cluster::Cluster;
use crate::finding::{Finding, Malformed, Report, RuleDoc, Subject};
use crate::k8s::Crd;
use crate::rules::{self, Rule};
use crate::settings::Action;
use crate::text::spelling::closest;
use crate::text::{Parts, elide, join_and, quote};
use schema::{Change, Effect, EnumAdditions, Options, SchemaRules, Scope, What};
use serde::Deserialize;
use std::collections::BTreeMap;

pub mod schema;

/// Default of `versionAnnotations`: Gateway API's bundle version annotation.
pub const GATEWAY_BUNDLE_VERSION: &str = "gateway.networking.k8s.io/bundle-version";

/// Gateway API's channel annotation, the key of the default `channelAnnotations`.
pub const GATEWAY_CHANNEL: &str = "gateway.networking.k8s.io/channel";

/// The names of the checks whose rejections setting `warnOnly` can turn into warnings
/// (`storedVersions` is the `storedVersionRemoval` rule, also set by `schemaRules`).
pub const CHECK_NAMES: [&str; 4] = ["storedVersions", "downgrade", "channel", "pendingMigration"];

/// The README section of the schema rules.
const SCHEMA_ANCHOR: &str = "schema-compatibility";

/// The rules of the check's findings.
pub const FINDINGS: &[RuleDoc] = &[
    RuleDoc {
        id: "storedVersionRemoval",
        summary: "a version still in status.storedVersions is removed from spec.versions",
        anchor: "what-it-checks",
    },
    RuleDoc {
        id: "scope",
        summary: "spec.scope changes, so every stored object becomes unreachable",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "existingFieldRemoval",
        summary: "a field of an existing version's schema is removed",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "type",
        summary: "a field's type changes",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "default",
        summary: "a field's default is added, changed or removed",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "enum",
        summary: "an enum is added where there was none, values are removed, the enum is removed (olm, crdify), or values are added (enumAdditions: reject)",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "maximum",
        summary: "maximum is added or lowered",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "maxItems",
        summary: "maxItems is added or lowered",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "maxLength",
        summary: "maxLength is added or lowered",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "maxProperties",
        summary: "maxProperties is added or lowered",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "minimum",
        summary: "minimum is added or raised",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "minItems",
        summary: "minItems is added or raised",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "minLength",
        summary: "minLength is added or raised",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "minProperties",
        summary: "minProperties is added or raised",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "required",
        summary: "a field of an existing object becomes required",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "pattern",
        summary: "a pattern is added, changed or removed",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "nullable",
        summary: "nullable is turned on or off",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "oneOf",
        summary: "oneOf is added or removed, or entries are added or removed",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "listType",
        summary: "x-kubernetes-list-type or x-kubernetes-list-map-keys changes",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "mapType",
        summary: "x-kubernetes-map-type changes",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "celRules",
        summary: "x-kubernetes-validations (CEL rules) change",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "format",
        summary: "a field's format changes",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "preserveUnknownFields",
        summary: "x-kubernetes-preserve-unknown-fields changes (turned off, unknown fields are pruned)",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "embeddedResource",
        summary: "x-kubernetes-embedded-resource changes",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "intOrString",
        summary: "x-kubernetes-int-or-string changes",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "description",
        summary: "a field's description changes",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "unhandled",
        summary: "another schema keyword changes (anyOf, allOf, not, multipleOf, a subschema, ...)",
        anchor: SCHEMA_ANCHOR,
    },
    RuleDoc {
        id: "downgrade",
        summary: "a bundle version annotation goes down",
        anchor: "what-it-checks",
    },
    RuleDoc {
        id: "notSemver",
        summary: "a bundle version annotation is not a semantic version, so downgrades cannot be checked",
        anchor: "what-it-checks",
    },
    RuleDoc {
        id: "channel",
        summary: "a channel annotation moves to a less stable channel",
        anchor: "what-it-checks",
    },
    RuleDoc {
        id: "unknownChannel",
        summary: "a channel annotation holds a channel the settings do not list",
        anchor: "what-it-checks",
    },
    RuleDoc {
        id: "storageChange",
        summary: "the storage version changes while the previous one stays listed",
        anchor: "what-it-checks",
    },
    RuleDoc {
        id: "stopsBeingServed",
        summary: "a stored version stops being served",
        anchor: "what-it-checks",
    },
    RuleDoc {
        id: "pendingMigration",
        summary: "an installed CRD has a storage migration pending",
        anchor: "what-it-checks",
    },
];

/// Settings of the crd-safe-upgrade check.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Settings {
    /// Annotation keys whose values are semantic versions that must not go down on UPDATE.
    /// Default: `["gateway.networking.k8s.io/bundle-version"]`; `[]` turns the check off.
    pub version_annotations: Vec<String>,
    /// Annotation key to its channels, from most to least stable; moving to a later channel is
    /// rejected. Default: `{"gateway.networking.k8s.io/channel": ["standard", "experimental"]}`;
    /// `{}` turns the check off.
    pub channel_annotations: BTreeMap<String, Vec<String>>,
    /// Check names (`storedVersions`, `downgrade`, `channel`, `pendingMigration`) whose
    /// rejections become warnings. Default: `[]` (every finding of these checks rejects).
    pub warn_only: Vec<String>,
    /// How schema changes are judged: `admission` (default: refuse what loses or misreads
    /// stored data, warn what tightens validation or changes defaults), `olm` (OLM v1's
    /// preflight) or `crdify` (crdify's own defaults).
    pub profile: Profile,
    /// The schema rules to their action, `reject`, `warn` or `ignore`, over the profile's. In
    /// `olm` and `crdify`, a rule crdify calls `unhandled` that is not named takes `unhandled`'s.
    pub schema_rules: SchemaRules,
    /// Whether values added to an existing enum are `allow`ed or `reject`ed under the `enum`
    /// rule; default: `reject` in the `crdify` profile (crdify's default), `allow` otherwise.
    pub enum_additions: Option<EnumAdditions>,
}

/// How schema changes are judged: the `profile` setting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Profile {
    /// Refuse what loses or misreads stored data; warn what tightens validation or changes
    /// defaults; say nothing of what changes nothing for stored objects and clients.
    #[default]
    Admission,
    /// OLM v1's preflight: crdify's rules, descriptions ignored, enum additions allowed, served
    /// versions not compared when a conversion webhook converts between them.
    Olm,
    /// crdify's own defaults: every rule refuses, descriptions and enum additions included, and
    /// served versions are compared even with a conversion webhook.
    Crdify,
}

/// The names of the profiles, as settings write them.
pub const PROFILES: [&str; 3] = ["admission", "olm", "crdify"];

impl<'de> Deserialize<'de> for Profile {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        match text.as_ref() {
            "admission" => Ok(Profile::Admission),
            "olm" => Ok(Profile::Olm),
            "crdify" => Ok(Profile::Crdify),
            other => {
                let hint = closest(other, PROFILES, 3)
                    .map(|near| format!(" (did you mean {}?)", quote(near)))
                    .unwrap_or_default();
                Err(serde::de::Error::custom(format!(
                    "unknown profile {}{hint}; the profiles are {}",
                    quote(other),
                    join_and(&PROFILES.map(quote))
                )))
            }
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            version_annotations: vec![GATEWAY_BUNDLE_VERSION.to_string()],
            channel_annotations: BTreeMap::from([(
                GATEWAY_CHANNEL.to_string(),
                vec!["standard".to_string(), "experimental".to_string()],
            )]),
            warn_only: Vec::new(),
            profile: Profile::Admission,
            schema_rules: SchemaRules::default(),
            enum_additions: None,
        }
    }
}

impl Settings {
    fn warn_only(&self, check: &str) -> bool {
        self.warn_only.iter().any(|name| name == check)
    }

    /// The action of a finding of `rule` that is not a schema comparison's (those have
    /// [`Settings::schema_action`]): `schemaRules` for `storedVersionRemoval`, with `warnOnly`
    /// turning a rejection into a warning (`storedVersions` for `storedVersionRemoval`).
    fn action(&self, rule: &str) -> Action {
        let warn_only = match rule {
            "storedVersionRemoval" => self.warn_only("storedVersions"),
            other => self.warn_only(other),
        };
        let action = match rule {
            "storedVersionRemoval" => self.schema_rules.actions.get(rule).unwrap_or(Action::Reject),
            _ => Action::Reject,
        };
        match action {
            Action::Reject if warn_only => Action::Warn,
            action => action,
        }
    }

    /// A finding that is not a schema comparison's, with its action from the settings
    /// ([`Settings::action`]); `None` when ignored.
    fn apply(&self, finding: Finding) -> Option<Finding> {
        let rule = finding.rule;
        match self.action(rule) {
            Action::Ignore => None,
            Action::Warn if finding.rejects() => Some(finding.warn_if(true, || {
                if self.schema_rules.actions.get(rule).is_some() {
                    format!("schemaRules: {rule}: warn")
                } else if rule == "storedVersionRemoval" {
                    "warnOnly: storedVersions".to_string()
                } else {
                    format!("warnOnly: {rule}")
                }
            })),
            _ => Some(finding),
        }
    }

    /// Whether an update installs a more stable channel of the same bundle: a channel
    /// annotation moves to an earlier channel while every version annotation present on both
    /// sides (at least one) keeps its value. Gateway API's upgrade policy allows it.
    fn channel_switch(&self, old: &Crd<'_>, new: &Crd<'_>) -> bool {
        let more_stable = self.channel_annotations.iter().any(|(key, channels)| {
            let position = |value: Option<&str>| value.and_then(|v| channels.iter().position(|c| c == v));
            matches!((position(old.annotation(key)), position(new.annotation(key))), (Some(a), Some(b)) if b < a)
        });
        let versions: Vec<(Option<&str>, Option<&str>)> = self
            .version_annotations
            .iter()
            .map(|key| (old.annotation(key), new.annotation(key)))
            .filter(|(a, b)| a.is_some() && b.is_some())
            .collect();
        more_stable && !versions.is_empty() && versions.iter().all(|(a, b)| a == b)
    }

    /// How the schema comparison runs under these settings.
    fn options(&self) -> Options {
        Options {
            additions: self.enum_additions.unwrap_or(match self.profile {
                Profile::Crdify => EnumAdditions::Reject,
                _ => EnumAdditions::Allow,
            }),
            served_with_webhook: self.profile == Profile::Crdify,
        }
    }

    /// The action on a schema change, and the setting that made a rejection a warning (its
    /// note): the rule's `schemaRules` entry, else the profile's verdict. `channel_switch`: the
    /// update installs a more stable channel of the same bundle version.
    fn schema_action(&self, change: &Change, channel_switch: bool) -> (Action, Option<String>) {
        let rule = change.rule;
        if let Some(action) = self.schema_rules.actions.get(rule) {
            return (action, Some(format!("schemaRules: {rule}: {}", action_name(action))));
        }
        // Enum additions are found only when enumAdditions (or the crdify profile) rejects them.
        if rule == "enum" && matches!(change.what, What::Members(_)) {
            return (Action::Reject, None);
        }
        let unhandled = self.schema_rules.actions.get("unhandled");
        match self.profile {
            Profile::Olm | Profile::Crdify => match (rule, unhandled) {
                (_, Some(action)) if schema::SPLIT_FROM_UNHANDLED.contains(&rule) => {
                    (action, Some(format!("schemaRules: unhandled: {}", action_name(action))))
                }
                ("description", _) if self.profile == Profile::Olm => (Action::Ignore, None),
                _ => (Action::Reject, None),
            },
            Profile::Admission => match change.effect {
                Effect::Loses if channel_switch && rule == "existingFieldRemoval" => (Action::Warn, None),
                Effect::Loses => (Action::Reject, None),
                Effect::Alters => (Action::Warn, None),
                Effect::Unknown => (unhandled.unwrap_or(Action::Warn), None),
                Effect::Neutral => (Action::Ignore, None),
            },
        }
    }
}

/// An action as settings write it.
fn action_name(action: Action) -> &'static str {
    match action {
        Action::Reject => "reject",
        Action::Warn => "warn",
        Action::Ignore => "ignore",
    }
}

/// The crd-safe-upgrade check.
pub struct CrdSafeUpgrade;

impl Check for CrdSafeUpgrade {
    type Settings = Settings;
    const NAME: &'static str = "crd-safe-upgrade";
    const SETTINGS_KEY: &'static str = "crdSafeUpgrade";
    const RULES: &'static [Rule] = rules::CRD_SAFE_UPGRADE;
    const KINDS: &'static [GroupKind] = &[("apiextensions.k8s.io", "CustomResourceDefinition")];
    const NEEDS_OLD_OBJECT: bool = true;
    const FINDINGS: &'static [RuleDoc] = FINDINGS;

    fn validate_settings(settings: &Settings) -> Result<(), String> {
        check_settings(settings)
    }

    fn check(
        request: &Request<'_>,
        objects: &Objects<'_>,
        settings: &Settings,
        _cluster: &dyn Cluster,
    ) -> Result<Report, Malformed> {
        // An UPDATE compares the two CRDs' schemas as text, not from the request's shared tree:
        // each keyword's text is compared byte for byte first, so the unchanged part of the
        // schemas (most of a CRD upgrade) is stepped over and never built. In the all-in-one the
        // new CRD is then read twice (its tree for the other checks, its text here); comparing
        // keywords on the shared tree would save that reading and is not done. Any other
        // operation reads no schema, and takes the CRD from the request's tree when a check
        // before read it whole (the all-in-one), else from the text (and an error names its path
        // from there).
        let from_tree = objects
            .read_tree()
            .filter(|_| !request.is_update())
            .and_then(|tree| Crd::deserialize(tree).ok());
        let new_text;
        let new = match from_tree {
            Some(crd) => crd,
            None => {
                new_text = text_of(objects.object)?;
                read(&new_text, "object")?
            }
        };
        let subject = Subject::new(request, &new.metadata.name, &new.metadata.generate_name, "");
        let mut notes = Vec::new();
        let findings = match (request.operation, objects.old_object) {
            (Some(Operation::Update), Some(old)) => {
                let old_text = text_of(old)?;
                update(
                    &subject.label,
                    &read(&old_text, "oldObject")?,
                    &new,
                    settings,
                    &mut notes,
                )
            }
            (Some(Operation::Update), None) => Vec::new(),
            _ => audit(&subject.label, &new),
        };
        let findings = findings
            .into_iter()
            .filter_map(|f| settings.apply(f))
            .collect::<Vec<Finding>>();
        let mut report = Report::new(subject, findings);
        report.notes = notes
            .into_iter()
            .filter(|(rule, _)| report.findings.iter().any(|f| f.rule == *rule && f.rejects()))
            .map(|(_, note)| note)
            .collect();
        Ok(report)
    }
}

fn check_settings(settings: &Settings) -> Result<(), String> {
    for (i, key) in settings.version_annotations.iter().enumerate() {
        if key.is_empty() {
            return Err(format!("`versionAnnotations[{i}]`: an annotation key cannot be empty"));
        }
        if settings.version_annotations[..i].contains(key) {
            return Err(format!("`versionAnnotations[{i}]`: {} is listed twice", quote(key)));
        }
        if settings.channel_annotations.contains_key(key) {
            return Err(format!(
                "`versionAnnotations[{i}]`: {} is also a key of `channelAnnotations`; an annotation holds either a version or a channel",
                quote(key)
            ));
        }
    }
    for (key, channels) in &settings.channel_annotations {
        if key.is_empty() {
            return Err("`channelAnnotations`: an annotation key cannot be empty".to_string());
        }
        if channels.is_empty() {
            return Err(format!(
                "`channelAnnotations.{key}`: the list of channels is empty; list them from most to least stable, e.g. [\"standard\", \"experimental\"]"
            ));
        }
        for (i, channel) in channels.iter().enumerate() {
            if channel.is_empty() {
                return Err(format!(
                    "`channelAnnotations.{key}[{i}]`: a channel name cannot be empty"
                ));
            }
            if channels[..i].contains(channel) {
                return Err(format!(
                    "`channelAnnotations.{key}[{i}]`: channel {} is listed twice",
                    quote(channel)
                ));
            }
        }
    }
    settings.schema_rules.check()?;
    for (i, name) in settings.warn_only.iter().enumerate() {
        if !CHECK_NAMES.contains(&name.as_str()) {
            let hint = closest(name, CHECK_NAMES, 3)
                .map(|near| format!(" (did you mean {}?)", quote(near)))
                .unwrap_or_default();
            return Err(format!(
                "`warnOnly[{i}]`: unknown check name {}{hint}; the names are {}",
                quote(name),
                join_and(&CHECK_NAMES.map(String::from))
            ));
        }
        if settings.warn_only[..i].contains(name) {
            return Err(format!("`warnOnly[{i}]`: {} is listed twice", quote(name)));
        }
    }
    Ok(())
}

/// The JSON text of an object: the request's own, or, for an object a check before built
/// (the all-in-one), written out (a CRD's schemas are read borrowing from text).
fn text_of(object: ObjectJson<'_>) -> Result<std::borrow::Cow<'_, str>, Malformed> {
    match object {
        ObjectJson::Raw(text) => Ok(std::borrow::Cow::Borrowed(text)),
        ObjectJson::Parsed(value) => serde_json::to_string(value)
            .map(std::borrow::Cow::Owned)
            .map_err(|e| Malformed(format!("cannot read the request's object: {e}"))),
    }
}

/// The request's `what` (`object`, `oldObject`) read as a CRD, or why it cannot be.
fn read<'a>(text: &'a str, what: &str) -> Result<Crd<'a>, Malformed> {
    ObjectJson::Raw(text).read_described().map_err(|e| {
        Malformed(format!(
            "cannot read the request's {what}: {e}; expected a CustomResourceDefinition of apiextensions.k8s.io/v1"
        ))
    })
}

/// A value quoted for a brief text, shortened in its middle when long.
fn short_quote(value: &str) -> String {
    elide(&quote(value), VALUE_CHARS).into_owned()
}

/// The commands that migrate every object of CRD `name` to `storage` and record it.
fn migration_commands(name: &str, storage: &str) -> String {
    format!(
        "read `kubectl get crd {name} -o jsonpath='{{.status.storedVersions}}'`, re-write every object (a storage migration, or `kubectl get {name} -A -o json | kubectl replace -f -`), then run `kubectl patch customresourcedefinitions {name} --subresource=status --type=merge -p '{{\"status\":{{\"storedVersions\":[{}]}}}}'`",
        quote(storage)
    )
}

fn api_server_errors(entries: &[(usize, &str)]) -> String {
    let errors: Vec<String> = entries
        .iter()
        .map(|(i, v)| {
            format!(
                "status.storedVersions[{i}]: Invalid value: {}: must appear in spec.versions",
                quote(v)
            )
        })
        .collect();
    format!("`{}`", errors.join(", "))
}

fn version_names(crd: &Crd<'_>) -> String {
    let names: Vec<String> = crd.spec.versions.iter().map(|v| v.name.clone()).collect();
    if names.is_empty() {
        "no versions".to_string()
    } else {
        join_and(&names)
    }
}

const NO_STORAGE: &str = "<storage version>";
/// Most characters of a quoted value (a version, an annotation) in a warning.
const VALUE_CHARS: usize = 24;
/// Most characters of a list or a path in a warning.
const LIST_CHARS: usize = 80;

// ---------------------------------------------------------------------------------------------
// UPDATE.

/// The findings of an UPDATE, in their fixed order, with their actions, and the note of each
/// schema rule found (see [`Report::notes`]).
fn update(
    name: &str,
    old: &Crd<'_>,
    new: &Crd<'_>,
    settings: &Settings,
    notes: &mut Vec<(&'static str, String)>,
) -> Vec<Finding> {
    // A CRD read from a file (a manifest in git, a pasted one) has no status; the API server
    // records a CRD's storage version in status.storedVersions when it creates it, and it stays
    // there until a migration removes it, so the storage version is stored.
    let assumed = old.status.stored_versions.is_empty();
    let stored: Vec<String> = if assumed {
        old.storage().map(|(_, v)| vec![v.to_string()]).unwrap_or_default()
    } else {
        old.status.stored_versions.clone()
    };
    let mut findings = Vec::new();
    findings.extend(stored_versions(name, &stored, assumed, old, new).and_then(|f| settings.apply(f)));
    if assumed && settings.action("storedVersionRemoval") != Action::Ignore {
        findings.extend(removed_versions(name, &stored, old, new));
    }
    let switch = settings.channel_switch(old, new);
    for change in schema::compare(old, new, &stored, settings.options()) {
        let (action, note) = settings.schema_action(&change, switch);
        let mut finding = match action {
            Action::Ignore => continue,
            Action::Reject => {
                // Said once: why the rule matters (why served versions that differ do is the
                // heading of their findings, see `schema_finding`).
                let note = schema_note(&change, settings.profile);
                if !notes.iter().any(|(_, text)| *text == note) {
                    notes.push((change.rule, note));
                }
                schema_finding(&change, switch, false)
            }
            Action::Warn => schema_finding(&change, switch, true),
        };
        if action == Action::Warn {
            finding.action = crate::settings::RejectOrWarn::Warn;
            finding.note = note;
        }
        findings.push(finding);
    }
    let mut others = Vec::new();
    for key in &settings.version_annotations {
        others.extend(downgrade(key, old.annotation(key), new.annotation(key)));
    }
    for (key, channels) in &settings.channel_annotations {
        others.extend(channel(key, channels, old.annotation(key), new.annotation(key)));
    }
    others.extend(storage_change(name, old, new));
    others.extend(stops_being_served(name, &stored, old, new));
    findings.extend(others.into_iter().filter_map(|f| settings.apply(f)));
    findings
}

/// A schema change as a finding: what changed, where (version, and the path of the field in the
/// CRD object) and the old and new values where they are short; why it breaks stored objects or
/// their clients, and what to do instead, is its rule's note ([`schema_note`]). `switch`: the
/// update installs a more stable channel of the same bundle; `warned`: the finding is a warning.
fn schema_finding(change: &Change, switch: bool, warned: bool) -> Finding {
    let path = match change.scope {
        Scope::Crd => "spec.scope".to_string(),
        _ => format!("spec.versions[{}].schema.openAPIV3Schema{}", change.index, change.at),
    };
    let field = if change.at.is_empty() {
        "the schema".to_string()
    } else {
        path.clone()
    };
    let what = schema_what(change, false);
    let short_why = short_reason(change, switch, warned);
    let place = match &change.scope {
        Scope::Crd => String::new(),
        Scope::Version(version) => format!(" ({version})"),
        // Said once for the pair when several findings share it (the group's heading, below).
        Scope::Served(earlier, later) => format!(
            " (served {earlier} vs {later}: they differ without a conversion webhook, so objects written as {earlier} are read as {later})"
        ),
    };
    let brief_place = match &change.scope {
        Scope::Crd => String::new(),
        Scope::Version(version) => format!(" ({version})"),
        Scope::Served(earlier, later) => format!(" (served {earlier} vs {later}, no conversion webhook)"),
    };
    let text = Parts::default().fixed(format!("{field}{place}: {what}."));
    // In a rejection of several findings, those of one version, or of one pair of served
    // versions, are listed under one heading that says where they are and, for a pair, why it
    // matters; each then names only its field.
    let schema = format!("spec.versions[{}].schema.openAPIV3Schema", change.index);
    let heading = match &change.scope {
        Scope::Crd => None,
        Scope::Version(version) => Some(format!("In {version} ({schema}):")),
        Scope::Served(earlier, later) => Some(format!(
            "Served {earlier} and {later} differ without a conversion webhook, so objects written as {earlier} are read as {later}; in {later} ({schema}):"
        )),
    };
    let line = match change.at.strip_prefix('.') {
        Some(rest) => Parts::default().elidable(rest),
        None => Parts::default().fixed("the schema"),
    }
    .fixed(format!(": {what}."));
    // Cut first: the path's prefix, which every finding of the version shares and the version
    // in parentheses names anyway; then the rest of the path, in its middle.
    let brief = match (&change.scope, change.at.strip_prefix('.')) {
        (Scope::Crd, _) | (_, None) => Parts::default().elidable(field),
        (_, Some(rest)) => Parts::default()
            .optional(format!("spec.versions[{}].schema.openAPIV3Schema.", change.index))
            .elidable(rest),
    };
    let brief = brief
        .fixed(format!("{brief_place}: "))
        .elidable(schema_what(change, true))
        .fixed(format!("; {short_why}."));
    let finding = Finding::reject(change.rule, path, text, brief);
    match heading {
        Some(heading) => finding.under(heading, line),
        None => finding,
    }
}

/// Since when validation ratcheting spares unchanged values (the CRDValidationRatcheting
/// feature gate: beta and on by default in Kubernetes 1.30, GA in 1.33).
const RATCHETING: &str = "ratcheting (Kubernetes 1.30+) spares unchanged values";

/// Why a schema change matters, in a few words, for a warning. `switch`: the update installs a
/// more stable channel of the same bundle; `warned`: the finding is a warning (a field removed
/// from status is one because the controller writes status again; refused, by `olm` or
/// `crdify`, it is pruned as any field is).
fn short_reason(change: &Change, switch: bool, warned: bool) -> String {
    let text = match (change.rule, &change.what, change.effect) {
        ("existingFieldRemoval", _, Effect::Loses) if switch => {
            "a field only the less stable channel has: its stored values are pruned on their next write"
        }
        ("scope", _, _) => "every stored object becomes unreachable",
        ("existingFieldRemoval", _, Effect::Neutral) => "no object is stored or served in this version",
        ("existingFieldRemoval", _, Effect::Alters) if warned && schema::in_status(&change.at) => {
            "a status field: the controller writes status again from what it observes"
        }
        ("existingFieldRemoval", _, _) => "stored values are pruned on their next write",
        ("type", _, _) => "stored values of the old type no longer validate",
        ("preserveUnknownFields", _, Effect::Loses) => {
            "unknown fields are pruned from stored objects on their next write"
        }
        ("intOrString", _, Effect::Loses) => "stored values of the other type no longer validate",
        ("embeddedResource", _, Effect::Loses) => "embedded apiVersion, kind and metadata may be pruned",
        ("default", _, _) => "stored objects read differently without a write",
        ("enum", What::Members(_), _) => "clients may not know the new values",
        ("nullable", What::Added(_), _) => "clients may now read null",
        ("description", _, _) => "documentation only",
        ("listType", _, Effect::Alters) => {
            "server-side apply merges it differently and stored values may no longer validate"
        }
        // A map type validates nothing: only how server-side apply merges the map changes.
        ("mapType", _, Effect::Alters) => "server-side apply merges it differently",
        ("unhandled", _, Effect::Unknown) => "not shown safe for stored objects",
        (_, _, Effect::Neutral) => "nothing stored changes; crdify's rules refuse it",
        _ => return format!("validation tightens; {RATCHETING}"),
    };
    text.to_string()
}

/// The note a rejection gives once for the schema findings of `rule`: why they break stored
/// objects or their clients, and what to do instead.
fn schema_note(change: &Change, profile: Profile) -> String {
    let (why, fix) = schema_reason(change, profile);
    let mut why = why.to_string();
    if let Some(first) = why.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    format!("{} ({}): {why}. {fix}.", change.rule, describe_rule(change))
}

/// How a note names the kind of change it explains.
fn describe_rule(change: &Change) -> &'static str {
    match (change.rule, &change.what) {
        ("existingFieldRemoval", _) => "a field removed",
        ("type", _) => "a type changed",
        ("enum", What::Removed(_)) => "an enum removed",
        ("pattern", What::Removed(_)) => "a pattern removed",
        ("oneOf", What::Removed(_)) => "a oneOf removed",
        ("oneOf", What::Dropped(_)) => "oneOf entries removed",
        ("listType", _) => "a list type changed",
        ("mapType", _) => "a map type changed",
        ("celRules", _) => "CEL validation rules changed",
        ("format", _) => "a format changed",
        ("preserveUnknownFields", _) => "x-kubernetes-preserve-unknown-fields changed",
        ("embeddedResource", _) => "x-kubernetes-embedded-resource changed",
        ("intOrString", _) => "x-kubernetes-int-or-string changed",
        ("default", What::Added(_)) => "a default added",
        ("default", _) => "a default changed or removed",
        ("enum", What::Members(_)) => "enum values added",
        ("nullable", What::Added(_)) => "nullable turned on",
        ("unhandled", _) => "other keywords",
        ("scope", _) => "the scope",
        ("description", _) => "descriptions",
        ("required", _) => "fields made required",
        _ => "a constraint added or tightened",
    }
}

/// What a schema change is: its values in full, or (`brief`) in a few words.
fn schema_what(change: &Change, brief: bool) -> String {
    let rule = change.rule;
    match (&change.what, rule) {
        (What::Gone, _) => "removed".to_string(),
        (What::Changed(a, b), "scope") => format!("the scope changes from {a} to {b}"),
        (What::Changed(a, b), _) => format!("{rule} changes from {a} to {b}"),
        (What::Added(b), "enum") => format!("an enum is added where there was none: {b}"),
        (What::Added(b), "oneOf") => format!("oneOf is added ({b})"),
        (What::Added(_), "nullable") => "nullable is turned on".to_string(),
        (What::Added(b), _) => format!("{rule} is added: {b}"),
        (What::Removed(_), "nullable") => "nullable is turned off".to_string(),
        (What::Removed(a), _) => format!("{rule} is removed (it was {a})"),
        (What::Tightened(a, b), _) if rule.starts_with("max") => format!("{rule} is lowered from {a} to {b}"),
        (What::Tightened(a, b), _) => format!("{rule} is raised from {a} to {b}"),
        (What::Members(names), "required") => {
            format!(
                "{} become{} required",
                join_and(names),
                if names.len() == 1 { "s" } else { "" }
            )
        }
        (What::Members(values), _) => format!("{rule} gains {}", join_and(values)),
        (What::Dropped(values), _) => format!("{rule} loses {}", join_and(values)),
        (What::Keywords(keywords), _) => {
            // Values are shown when whole, and in a brief only when short.
            let shown = |v: &str| !v.contains('…') && (!brief || v.chars().count() <= 12);
            match keywords.as_slice() {
                [(key, a, b)] if shown(a) && shown(b) => format!("{key} changes from {a} to {b}"),
                [(key, _, _)] => format!("{key} changes"),
                many => {
                    let keys: Vec<String> = many
                        .iter()
                        .map(|(key, a, b)| {
                            if !brief && shown(a) && shown(b) {
                                format!("{key} ({a} to {b})")
                            } else {
                                key.clone()
                            }
                        })
                        .collect();
                    format!("{} change", join_and(&keys))
                }
            }
        }
    }
}

/// Why a schema change breaks stored objects or their clients, and what to do instead.
fn schema_reason(change: &Change, profile: Profile) -> (&'static str, &'static str) {
    const NEW_VERSION: &str =
        "Make the change in a new version of the CRD, with a conversion webhook that converts stored objects";
    const RATCHET: &str = "Tighten it in a new version instead, or with an x-kubernetes-validations rule that spares unchanged values (`self == oldSelf || ...`)";
    const INVALID: &str = "stored objects that break it no longer validate, and any update that changes the field is refused (validation ratcheting, on by default since Kubernetes 1.30, spares only unchanged values)";
    const UNHANDLED: &str = "Make it in a new version with a conversion webhook, or, after checking it yourself, set schemaRules: {unhandled: warn}; profile: admission judges it by what it does to stored objects";
    let rule = change.rule;
    let (why, fix) = match (rule, &change.what) {
        ("scope", _) => (
            "objects stored under one scope cannot be read under the other: every stored object becomes unreachable",
            "Never change the scope: create a CRD of another group or kind with the new scope and migrate the objects",
        ),
        ("existingFieldRemoval", _) => (
            "the API server prunes it from stored objects on their next write, and clients that set it lose it without an error",
            "Keep the field (say in its description that it is deprecated), or drop it in a new version with a conversion webhook",
        ),
        ("type", _) => (
            "stored objects hold values of the old type, which no longer validate and which clients decode wrongly",
            NEW_VERSION,
        ),
        ("default", What::Added(_)) => (
            "the API server applies defaults when it reads objects, so every stored object without the field changes for its clients without any write",
            "Set the value in the objects that need it, or add the default in a new version",
        ),
        ("default", _) => (
            "stored objects without the field were read with the old default; their clients now read something else without any write",
            NEW_VERSION,
        ),
        ("enum", What::Members(_)) => (
            "clients that know only the old values may not handle the new ones",
            "Set enumAdditions: allow if the clients accept new values, as OLM v1 does",
        ),
        ("enum", What::Removed(_)) => (
            "every value is valid now; clients that relied on the enum may read values it excluded",
            "Keep the enum, or use profile: admission, which lets a loosening pass",
        ),
        ("enum" | "pattern" | "oneOf", What::Removed(_) | What::Dropped(_)) if rule != "enum" => (
            "clients that relied on the constraint may now read values it excluded",
            NEW_VERSION,
        ),
        ("enum" | "pattern" | "oneOf" | "required", _) => (INVALID, RATCHET),
        (r, _) if r.starts_with("max") || r.starts_with("min") => (INVALID, RATCHET),
        ("nullable", What::Added(_)) => ("clients that never saw null may now read null", NEW_VERSION),
        ("nullable", _) => ("stored null values no longer validate", RATCHET),
        ("description", _) => (
            "only the documentation changes",
            "Set schemaRules: {description: ignore} (the admission and olm profiles ignore it) to allow it",
        ),
        ("preserveUnknownFields", _) if change.effect == Effect::Loses => (
            "with x-kubernetes-preserve-unknown-fields turned off, the API server prunes every field the schema does not list from stored objects on their next write",
            "Keep it on, or list every field stored objects hold before turning it off",
        ),
        ("intOrString", _) if change.effect == Effect::Loses => (
            "stored values of the type no longer allowed no longer validate, and clients decode them wrongly",
            NEW_VERSION,
        ),
        ("embeddedResource", _) if change.effect == Effect::Loses => (
            "the embedded object's apiVersion, kind and metadata are no longer kept implicitly and may be pruned from stored objects",
            "Keep x-kubernetes-embedded-resource, or list those fields in the schema first",
        ),
        (r, _) if profile != Profile::Admission && schema::SPLIT_FROM_UNHANDLED.contains(&r) => (
            "no rule of crdify covers this keyword (crdify calls such changes unhandled), so OLM v1 refuses any change of it",
            UNHANDLED,
        ),
        ("mapType", _) if change.effect == Effect::Alters => (
            "server-side apply merges the map otherwise: atomic, an apply replaces the keys other managers set; granular, each key has its own owner",
            "Change how the map merges in a new version of the CRD",
        ),
        ("celRules" | "format" | "listType", _) if change.effect == Effect::Alters => (INVALID, RATCHET),
        _ => (
            "no rule of crdify covers this keyword (crdify calls such changes unhandled), so OLM v1 refuses any change of it",
            UNHANDLED,
        ),
    };
    (why, fix)
}

/// Check 1 without status: the versions the old CRD listed and the new one drops, other than
/// the storage version taken as stored (`stored`). The old CRD is a manifest, so nothing says
/// whether a cluster ever stored objects at them: a cluster that installed a release whose
/// storage version one of them was still lists it in `status.storedVersions` (the Gateway API
/// failure of problem 5), and refuses the update. A warning, with the command that tells;
/// `syncguard scan --cluster-snapshot` gives the old CRD the cluster's status, and then check 1
/// decides.
fn removed_versions(name: &str, stored: &[String], old: &Crd<'_>, new: &Crd<'_>) -> Option<Finding> {
    let removed: Vec<String> = old
        .spec
        .versions
        .iter()
        .map(|v| v.name.clone())
        .filter(|v| new.version(v).is_none() && !stored.contains(v))
        .collect();
    if removed.is_empty() {
        return None;
    }
    let storage = new.storage().map(|(_, v)| v).unwrap_or(NO_STORAGE);
    let (verb, pronoun, them) = if removed.len() == 1 {
        ("is", "it", "that version")
    } else {
        ("are", "them", "these versions")
    };
    let quoted: Vec<String> = removed.iter().map(|v| quote(v)).collect();
    let errors: Vec<String> = removed
        .iter()
        .map(|v| {
            format!(
                "status.storedVersions[N]: Invalid value: {}: must appear in spec.versions",
                quote(v)
            )
        })
        .collect();
    let check = format!("kubectl get crd {name} -o jsonpath='{{.status.storedVersions}}'");
    Some(Finding::warn(
        "storedVersionRemoval",
        "spec.versions",
        format!(
            "{} {verb} removed from spec.versions (which lists {}). The old CRD has no status.storedVersions (a manifest, not the live object), so whether a cluster ever stored objects at {them} is unknown: a cluster that installed a release whose storage version was {} still lists {pronoun} in status.storedVersions, and the API server refuses this update there with `{}`. Check each cluster with `{check}`; where it lists {pronoun}, migrate the stored objects to {storage} first ({}), then apply this update. Scanned with `--cluster-snapshot` (`kubectl get crd -o yaml` of the cluster), the CRD's real status.storedVersions decides.",
            join_and(&quoted),
            version_names(new),
            join_or(&quoted),
            errors.join(", "),
            migration_commands(name, storage),
        ),
        format!(
            "{} {verb} removed from spec.versions; clusters that once stored objects at {pronoun} refuse this update. Check: {}",
            elide(&join_and(&quoted), VALUE_CHARS * 2),
            elide(&check, 140),
        ),
    ))
}

/// `a`, `a or b`, `a, b or c`.
fn join_or(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [head @ .., last] => format!("{} or {last}", head.join(", ")),
    }
}

/// Check 1: every stored version must stay in `spec.versions`. `stored` is the old CRD's
/// `status.storedVersions`, or (`assumed`) its storage version when it has none.
fn stored_versions(name: &str, stored: &[String], assumed: bool, old: &Crd<'_>, new: &Crd<'_>) -> Option<Finding> {
    let missing: Vec<(usize, &str)> = stored
        .iter()
        .enumerate()
        .filter(|(_, v)| new.version(v).is_none())
        .map(|(i, v)| (i, v.as_str()))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let storage = new.storage().map(|(_, v)| v).unwrap_or(NO_STORAGE);
    let listed: Vec<String> = missing
        .iter()
        .map(|(i, v)| {
            if assumed {
                format!("storage version {}", quote(v))
            } else {
                format!("status.storedVersions[{i}] {}", quote(v))
            }
        })
        .collect();
    let assumption = if assumed {
        format!(
            "The old CRD has no status.storedVersions (a manifest, not the live object), so its storage version {} is taken as stored: the API server records it there when it creates the CRD and keeps it until a migration. ",
            quote(missing[0].1)
        )
    } else {
        String::new()
    };
    let versions: Vec<String> = missing.iter().map(|(_, v)| v.to_string()).collect();
    let (verb, pronoun) = if missing.len() == 1 {
        ("is", "it")
    } else {
        ("are", "them")
    };
    let first_step = if old.storage().map(|(_, v)| v) == Some(storage) {
        String::new()
    } else {
        format!(
            "first apply a version of this CRD that still lists {} in spec.versions and has {storage} as its storage version (`storage: true`), then ",
            join_and(&versions)
        )
    };
    Some(Finding::reject(
        "storedVersionRemoval",
        format!("status.storedVersions[{}]", missing[0].0),
        format!(
            "{} {verb} not in the new spec.versions (which lists {}). {assumption}The API server refuses this update with {}, because objects may still be stored in etcd as {} and could no longer be read. Migrate {pronoun} to {storage}: {first_step}{}, and apply this update again.",
            join_and(&listed),
            version_names(new),
            api_server_errors(&missing),
            join_and(&versions),
            migration_commands(name, storage),
        ),
        format!(
            "{} {verb} not in the new spec.versions, so the API server will refuse this update; migrate the stored objects first{}.",
            elide(&join_and(&listed), LIST_CHARS),
            if assumed {
                " (no status in the old CRD: its storage version taken as stored)"
            } else {
                ""
            }
        ),
    ))
}

/// Check 2: a version annotation must not go down.
fn downgrade(key: &str, old: Option<&str>, new: Option<&str>) -> Option<Finding> {
    let (old, new) = (old?, new?);
    let path = format!("metadata.annotations[{key}]");
    match (bundle_version(old), bundle_version(new)) {
        // A development build (`v0.0.0-dev`, what Gateway API's `main` carries) has no place
        // in the release order: never a downgrade, from it or to it.
        (Some(before), Some(after)) if is_development(&before) || is_development(&after) => None,
        (Some(before), Some(after)) => (after < before).then(|| {
            Finding::reject(
                "downgrade",
                path.clone(),
                format!(
                    "{path} goes down from {} to {}. Applying older CRDs over newer ones removes versions, fields and validation that stored objects and controllers already use (fields the old schema lacks are pruned on the next write). Apply the manifests of {old} or a later release instead; if the downgrade is intended, add `downgrade` to this policy's warnOnly setting while you apply it.",
                    quote(old),
                    quote(new),
                ),
                format!(
                    "{} goes down from {} to {}; older CRDs drop versions and fields in use. Apply {} or later.",
                    elide(&path, LIST_CHARS),
                    short_quote(old),
                    short_quote(new),
                    elide(old, VALUE_CHARS)
                ),
            )
        }),
        (before, after) => {
            let bad: Vec<String> = [(before.is_none(), "old", old), (after.is_none(), "new", new)]
                .iter()
                .filter(|(bad, _, _)| *bad)
                .map(|(_, which, value)| format!("{} in the {which} object", quote(value)))
                .collect();
            Some(Finding::warn(
                "notSemver",
                path.clone(),
                format!(
                    "{path} is {}, not a semantic version (MAJOR.MINOR.PATCH with an optional leading `v`, pre-release and build), so the downgrade check cannot compare {} with {}; set it to the bundle's real version, e.g. \"v1.2.0\".",
                    join_and(&bad),
                    quote(old),
                    quote(new)
                ),
                format!(
                    "{} is not a semantic version ({}), so downgrades cannot be checked; set the bundle's real version.",
                    elide(&path, LIST_CHARS),
                    elide(&join_and(&bad), LIST_CHARS)
                ),
            ))
        }
    }
}

/// Check 3: a channel annotation must not move to a less stable channel.
fn channel(key: &str, channels: &[String], old: Option<&str>, new: Option<&str>) -> Option<Finding> {
    let (old, new) = (old?, new?);
    let path = format!("metadata.annotations[{key}]");
    let order = join_and(&channels.iter().map(|c| quote(c)).collect::<Vec<_>>());
    let position = |value: &str| channels.iter().position(|c| c == value);
    match (position(old), position(new)) {
        (Some(before), Some(after)) => (after > before).then(|| {
            Finding::reject(
                "channel",
                path.clone(),
                format!(
                    "{path} moves from {} to {}, a less stable channel (this policy orders them {order}, most stable first). Installing {} CRDs over {} ones adds versions and fields that clients start to use; going back later drops those fields and can strand objects stored in versions the {} channel does not serve. Apply the {} channel's manifests instead; if you mean to switch, add `channel` to this policy's warnOnly setting while you apply it.",
                    quote(old),
                    quote(new),
                    new,
                    old,
                    old,
                    old
                ),
                format!(
                    "{} moves from {} to {}, a less stable channel. Apply the {} channel's manifests.",
                    elide(&path, LIST_CHARS),
                    short_quote(old),
                    short_quote(new),
                    elide(old, VALUE_CHARS)
                ),
            )
        }),
        (before, after) => {
            let unknown: Vec<String> = [(before.is_none(), "old", old), (after.is_none(), "new", new)]
                .iter()
                .filter(|(unknown, _, _)| *unknown)
                .map(|(_, which, value)| format!("{} in the {which} object", quote(value)))
                .collect();
            Some(Finding::warn(
                "unknownChannel",
                path.clone(),
                format!(
                    "{path} is {}, not one of the channels this policy knows for it ({order}), so the channel check cannot order {} and {}; add the channel to `channelAnnotations` in the policy settings.",
                    join_and(&unknown),
                    quote(old),
                    quote(new)
                ),
                format!(
                    "{} is {}, a channel this policy does not know; add it to channelAnnotations.",
                    elide(&path, LIST_CHARS),
                    elide(&join_and(&unknown), LIST_CHARS)
                ),
            ))
        }
    }
}

/// Warning 4: the storage version changes (and the previous one stays listed).
fn storage_change(name: &str, old: &Crd<'_>, new: &Crd<'_>) -> Option<Finding> {
    let (_, before) = old.storage()?;
    let (index, after) = new.storage()?;
    if before == after || new.version(before).is_none() {
        return None;
    }
    Some(Finding::warn(
        "storageChange",
        format!("spec.versions[{index}].storage"),
        format!(
            "the storage version changes from {before} to {after} (spec.versions[{index}].storage). Objects written from now on are stored as {after}; existing ones stay stored as {before} until re-written, and {before} stays in status.storedVersions. Before a later version of this CRD drops {before} from spec.versions, {}.",
            migration_commands(name, after)
        ),
        format!(
            "the storage version changes from {} to {}; migrate the objects stored as {} before a later version drops it.",
            elide(before, VALUE_CHARS),
            elide(after, VALUE_CHARS),
            elide(before, VALUE_CHARS)
        ),
    ))
}

/// Warning 5: a stored version that was served stops being served.
fn stops_being_served(name: &str, stored: &[String], old: &Crd<'_>, new: &Crd<'_>) -> Vec<Finding> {
    let storage = new.storage().map(|(_, v)| v).unwrap_or(NO_STORAGE);
    stored
        .iter()
        .enumerate()
        .filter_map(|(i, stored)| {
            let was_served = old.version(stored).is_some_and(|(_, v)| v.served);
            let (index, now) = new.version(stored)?;
            (was_served && !now.served).then(|| {
                Finding::warn(
                    "stopsBeingServed",
                    format!("spec.versions[{index}].served"),
                    format!(
                        "version {stored} is no longer served (spec.versions[{index}].served: false) but is still in status.storedVersions[{i}]: clients that read or write {stored} now get 404, while objects stored as {stored} stay until migrated. Before a later version of this CRD drops {stored}, {}.",
                        migration_commands(name, storage)
                    ),
                    format!(
                        "version {} is no longer served but is still in status.storedVersions[{i}]; migrate its objects before a later version drops it.",
                        elide(stored, VALUE_CHARS)
                    ),
                )
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// CREATE: the audit scanner's view of an existing CRD.

fn audit(name: &str, crd: &Crd<'_>) -> Vec<Finding> {
    let stored = &crd.status.stored_versions;
    if stored.is_empty() {
        return Vec::new();
    }
    let storage = crd.storage().map(|(_, v)| v);
    let mut reasons = Vec::new();
    if stored.len() > 1 {
        reasons.push(format!(
            "status.storedVersions lists {} versions ({})",
            stored.len(),
            join_and(stored)
        ));
    }
    let mut missing = Vec::new();
    for (i, version) in stored.iter().enumerate() {
        match crd.version(version) {
            None => {
                missing.push((i, version.as_str()));
                reasons.push(format!(
                    "status.storedVersions[{i}] {} is not in spec.versions",
                    quote(version)
                ));
            }
            Some((index, v)) if !v.served && Some(version.as_str()) != storage => reasons.push(format!(
                "status.storedVersions[{i}] {} is not served (spec.versions[{index}].served: false)",
                quote(version)
            )),
            Some(_) => {}
        }
    }
    if reasons.is_empty() {
        return Vec::new();
    }
    let storage = storage.unwrap_or(NO_STORAGE);
    let old: Vec<String> = stored.iter().filter(|v| v.as_str() != storage).cloned().collect();
    let consequence = if missing.is_empty() {
        let errors: Vec<(usize, &str)> = stored
            .iter()
            .enumerate()
            .filter(|(_, v)| v.as_str() != storage)
            .map(|(i, v)| (i, v.as_str()))
            .collect();
        format!(
            "Objects may still be stored in etcd as {}, so an upgrade of this CRD that drops {} from spec.versions will be refused by the API server with {}.",
            join_and(&old),
            if old.len() == 1 { "it" } else { "them" },
            api_server_errors(&errors)
        )
    } else {
        format!(
            "Every update of this CRD will be refused by the API server with {} until the migration is done.",
            api_server_errors(&missing)
        )
    };
    vec![Finding::reject(
        "pendingMigration",
        "status.storedVersions",
        format!(
            "a storage migration is pending: {}. {consequence} Migrate every object to {storage} now: {}.",
            reasons.join("; "),
            migration_commands(name, storage)
        ),
        format!(
            "a storage migration is pending ({}); migrate every object to {} before an upgrade drops the old versions.",
            elide(&reasons.join("; "), LIST_CHARS),
            elide(storage, VALUE_CHARS)
        ),
    )]
}

// ---------------------------------------------------------------------------------------------
// Semantic versions (semver 2.0.0 precedence), with an optional leading `v`.

/// A bundle version annotation as a semantic version, build metadata dropped (it takes no part
/// in precedence, which the `semver` crate's own ordering would otherwise break ties with);
/// `None` for anything that is not `MAJOR.MINOR.PATCH[-PRE][+BUILD]` after an optional `v`.
fn bundle_version(text: &str) -> Option<semver::Version> {
    let mut version = semver::Version::parse(text.strip_prefix('v').unwrap_or(text)).ok()?;
    version.build = semver::BuildMetadata::EMPTY;
    Some(version)
}

/// Whether a bundle version is a development build: a pre-release of 0.0.0 (`0.0.0-dev`,
/// `v0.0.0-main`), which projects put on their unreleased branch.
fn is_development(version: &semver::Version) -> bool {
    (version.major, version.minor, version.patch) == (0, 0, 0) && !version.pre.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{decode_response, handle_validate, parse_settings};
    use crate::cluster::NoCluster;
    use serde_json::json;

    #[test]
    fn semver_precedence_follows_the_spec() {
        // The example chain of semver.org, item 11, plus core and `v` prefixes.
        let chain = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "v1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "v1.0.0",
            "1.0.1",
            "1.1.0-rc1",
            "v1.1.0",
            "1.10.0",
            "2.0.0",
            "18446744073709551615.0.0",
        ];
        for pair in chain.windows(2) {
            let (a, b) = (bundle_version(pair[0]).unwrap(), bundle_version(pair[1]).unwrap());
            assert!(a < b, "{} < {}", pair[0], pair[1]);
            assert!(b > a, "{} > {}", pair[1], pair[0]);
        }
        // Gateway API's release candidates come before the release.
        assert!(bundle_version("v1.2.0-rc2").unwrap() < bundle_version("v1.2.0").unwrap());
        assert!(bundle_version("v1.2.0-rc1").unwrap() < bundle_version("v1.2.0-rc2").unwrap());
        // Numeric identifiers of any length compare as numbers.
        assert!(bundle_version("1.0.0-99999999999999999999999").unwrap() > bundle_version("1.0.0-1000").unwrap());
        assert!(bundle_version("1.0.0-2").unwrap() < bundle_version("1.0.0-10").unwrap());
        // Build metadata does not take part in precedence.
        assert_eq!(bundle_version("1.2.3+a.1"), bundle_version("v1.2.3+b"));
        assert_eq!(
            bundle_version("1.2.3")
                .unwrap()
                .cmp(&bundle_version("1.2.3+x").unwrap()),
            std::cmp::Ordering::Equal
        );
    }

    #[test]
    fn development_versions_are_never_downgrades() {
        for (old, new) in [
            ("v1.2.0", "v0.0.0-dev"),
            ("v0.0.0-dev", "v1.2.0"),
            ("1.5.0", "0.0.0-main.20250101"),
            ("v0.0.0-dev", "v0.0.0-alpha"),
        ] {
            assert!(
                downgrade(GATEWAY_BUNDLE_VERSION, Some(old), Some(new)).is_none(),
                "{old} -> {new}"
            );
        }
        // A real 0.x release still counts, and so does 0.0.0 itself.
        for (old, new) in [("v0.2.0", "v0.1.0"), ("v0.0.1", "v0.0.0"), ("v1.0.0", "v0.0.1-rc.1")] {
            let finding = downgrade(GATEWAY_BUNDLE_VERSION, Some(old), Some(new));
            assert!(finding.is_some_and(|f| f.rule == "downgrade"), "{old} -> {new}");
        }
    }

    #[test]
    fn semver_rejects_what_is_not_semver() {
        for text in [
            "",
            "v",
            "1",
            "1.2",
            "v1.2",
            "1.2.3.4",
            "01.2.3",
            "1.02.3",
            "1.2.03",
            "1.2.3-",
            "1.2.3-01",
            "1.2.3-a..b",
            "1.2.3+",
            "1.2.3+a..b",
            "1.2.3-a_b",
            "V1.2.3",
            "vv1.2.3",
            " 1.2.3",
            "1.2.3 ",
            "-1.2.3",
            "1.2.-3",
            "1.2.x",
            "main",
            "99999999999999999999.0.0",
        ] {
            assert!(bundle_version(text).is_none(), "{text:?} parsed");
        }
        for text in [
            "0.0.0",
            "1.2.3-0",
            "1.2.3-0a",
            "1.2.3-a-b",
            "1.2.3--",
            "1.2.3+001",
            "1.2.3-rc.1+sha.5114f85",
        ] {
            assert!(bundle_version(text).is_some(), "{text:?} refused");
        }
    }

    #[test]
    fn default_settings_are_valid_and_documented_values() {
        let settings = parse_settings::<CrdSafeUpgrade>(None).unwrap();
        assert_eq!(settings.version_annotations, vec![GATEWAY_BUNDLE_VERSION]);
        assert_eq!(
            settings.channel_annotations[GATEWAY_CHANNEL],
            vec!["standard", "experimental"]
        );
        assert!(settings.warn_only.is_empty());
        assert_eq!(parse_settings::<CrdSafeUpgrade>(Some("{}")).unwrap(), settings);
    }

    #[test]
    fn settings_errors_name_the_bad_value() {
        let cases = [
            (
                json!({"warnOnly": ["storedVersion"]}),
                "`warnOnly[0]`: unknown check name \"storedVersion\" (did you mean \"storedVersions\"?)",
            ),
            (
                json!({"warnOnly": ["channel", "channel"]}),
                "`warnOnly[1]`: \"channel\" is listed twice",
            ),
            (
                json!({"versionAnnotations": [""]}),
                "`versionAnnotations[0]`: an annotation key cannot be empty",
            ),
            (
                json!({"versionAnnotations": ["a", "a"]}),
                "`versionAnnotations[1]`: \"a\" is listed twice",
            ),
            (
                json!({"versionAnnotations": [GATEWAY_CHANNEL]}),
                "is also a key of `channelAnnotations`",
            ),
            (
                json!({"channelAnnotations": {"x": []}}),
                "`channelAnnotations.x`: the list of channels is empty",
            ),
            (
                json!({"channelAnnotations": {"x": ["a", ""]}}),
                "`channelAnnotations.x[1]`: a channel name cannot be empty",
            ),
            (
                json!({"channelAnnotations": {"": ["a"]}}),
                "`channelAnnotations`: an annotation key cannot be empty",
            ),
            (
                json!({"channelAnnotations": {"x": "standard"}}),
                "`channelAnnotations.x`: invalid type",
            ),
            (json!({"warnonly": []}), "unknown field `warnonly`"),
        ];
        for (settings, expected) in cases {
            let err = parse_settings::<CrdSafeUpgrade>(Some(&settings.to_string())).unwrap_err();
            assert!(err.contains(expected), "{settings}: {err}");
        }
    }

    fn crd(
        annotations: serde_json::Value,
        versions: serde_json::Value,
        stored: serde_json::Value,
    ) -> serde_json::Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com", "annotations": annotations},
            "spec": {"group": "example.com", "versions": versions},
            "status": {"storedVersions": stored},
        })
    }

    fn run(
        operation: &str,
        object: serde_json::Value,
        old: serde_json::Value,
        settings: serde_json::Value,
    ) -> crate::admission::ValidationResponse {
        let payload = syncguard_testkit::payload(
            &syncguard_testkit::crd_request(operation, &object, Some(&old)),
            &settings,
        );
        decode_response(&handle_validate::<CrdSafeUpgrade>(payload.as_bytes(), &NoCluster)).unwrap()
    }

    fn v(name: &str, served: bool, storage: bool) -> serde_json::Value {
        json!({"name": name, "served": served, "storage": storage})
    }

    #[test]
    fn storage_version_kept_needs_no_first_step() {
        // v1 already is the storage version; only the lingering v1beta1 must be migrated.
        let old = crd(
            json!({}),
            json!([v("v1", true, true), v("v1beta1", true, false)]),
            json!(["v1beta1", "v1"]),
        );
        let new = crd(json!({}), json!([v("v1", true, true)]), json!(null));
        let response = run("UPDATE", new, old, json!({}));
        let message = response.message.unwrap();
        assert!(!response.accepted);
        assert!(message.starts_with("CustomResourceDefinition widgets.example.com: status.storedVersions[0] \"v1beta1\" is not in the new spec.versions (which lists v1)."), "{message}");
        assert!(
            message.contains("Migrate it to v1: read `kubectl get crd widgets.example.com"),
            "{message}"
        );
        assert!(!message.contains("first apply"), "{message}");
        assert!(
            message.contains(r#"-p '{"status":{"storedVersions":["v1"]}}'"#),
            "{message}"
        );
    }

    #[test]
    fn several_missing_versions_are_listed_with_their_paths() {
        let old = crd(
            json!({}),
            json!([v("v1alpha1", true, false), v("v1beta1", true, true)]),
            json!(["v1alpha1", "v1beta1"]),
        );
        let new = crd(json!({}), json!([v("v1", true, true)]), json!(null));
        let message = run("UPDATE", new, old, json!({})).message.unwrap();
        assert!(message.contains("status.storedVersions[0] \"v1alpha1\" and status.storedVersions[1] \"v1beta1\" are not in the new spec.versions"), "{message}");
        assert!(message.contains("`status.storedVersions[0]: Invalid value: \"v1alpha1\": must appear in spec.versions, status.storedVersions[1]: Invalid value: \"v1beta1\": must appear in spec.versions`"), "{message}");
        assert!(message.contains("Migrate them to v1: first apply a version of this CRD that still lists v1alpha1 and v1beta1 in spec.versions and has v1 as its storage version"), "{message}");
    }

    #[test]
    fn absent_annotations_and_equal_values_give_nothing() {
        let versions = json!([v("v1", true, true)]);
        let key = GATEWAY_BUNDLE_VERSION;
        for (before, after) in [
            (json!({}), json!({key: "v1.0.0"})),
            (json!({key: "v1.0.0"}), json!({})),
            (json!({key: "v1.0.0"}), json!({key: "1.0.0+build"})),
            (json!({GATEWAY_CHANNEL: "experimental"}), json!({})),
            (
                json!({GATEWAY_CHANNEL: "standard"}),
                json!({GATEWAY_CHANNEL: "standard"}),
            ),
        ] {
            let old = crd(before.clone(), versions.clone(), json!(["v1"]));
            let new = crd(after.clone(), versions.clone(), json!(["v1"]));
            let response = run("UPDATE", new, old, json!({}));
            assert!(
                response.accepted && response.warnings.is_none(),
                "{before} -> {after}: {response:?}"
            );
        }
    }

    #[test]
    fn malformed_objects_are_refused_with_400() {
        let good = crd(json!({}), json!([v("v1", true, true)]), json!(["v1"]));
        let cases = [
            ("UPDATE", json!({"spec": {"versions": "v1"}}), good.clone()),
            ("UPDATE", good.clone(), json!({"metadata": {"annotations": {"a": 1}}})),
            ("UPDATE", good.clone(), json!(null)),
            ("CREATE", json!(null), json!(null)),
            ("CREATE", json!([1, 2]), json!(null)),
        ];
        for (operation, object, old) in cases {
            let response = run(operation, object.clone(), old.clone(), json!({}));
            assert!(!response.accepted, "{object} / {old}");
            assert_eq!(response.code, Some(400), "{object} / {old}");
        }
    }

    #[test]
    fn nulls_read_as_empty() {
        let object = json!({"metadata": null, "spec": {"versions": [{"name": "v1", "served": null, "storage": true}]}, "status": null});
        let response = run("UPDATE", object.clone(), object, json!({}));
        assert!(response.accepted, "{response:?}");
    }

    #[test]
    fn requests_it_does_not_apply_to_are_accepted_unread() {
        let payload = |kind: &str, sub: &str, operation: &str| {
            json!({"request": {
                "uid": "u",
                "kind": {"group": "apiextensions.k8s.io", "version": "v1", "kind": kind},
                "resource": {"group": "apiextensions.k8s.io", "version": "v1", "resource": "customresourcedefinitions"},
                "subResource": sub,
                "operation": operation,
                "object": "not a CRD",
                "oldObject": 7,
            }})
            .to_string()
        };
        for (kind, sub, operation) in [
            ("APIService", "", "UPDATE"),
            ("CustomResourceDefinition", "status", "UPDATE"),
            ("CustomResourceDefinition", "", "DELETE"),
        ] {
            let response = decode_response(&handle_validate::<CrdSafeUpgrade>(
                payload(kind, sub, operation).as_bytes(),
                &NoCluster,
            ))
            .unwrap();
            assert!(response.accepted, "{kind} {sub} {operation}: {response:?}");
        }
    }

    #[test]
    fn a_stored_version_that_was_not_served_before_gives_no_new_warning() {
        let old = crd(
            json!({}),
            json!([v("v1", true, true), v("v1beta1", false, false)]),
            json!(["v1beta1", "v1"]),
        );
        let response = run("UPDATE", old.clone(), old, json!({}));
        assert!(response.accepted && response.warnings.is_none(), "{response:?}");
    }

    #[test]
    fn audit_of_unserved_storage_version_alone_is_not_a_pending_migration() {
        let live = crd(json!({}), json!([v("v1", false, true)]), json!(["v1"]));
        let response = run("CREATE", live, json!(null), json!({}));
        assert!(response.accepted, "{response:?}");
    }

    #[test]
    fn audit_of_a_stored_version_missing_from_spec() {
        let live = crd(json!({}), json!([v("v1", true, true)]), json!(["v1beta1", "v1"]));
        let message = run("CREATE", live, json!(null), json!({})).message.unwrap();
        assert!(
            message.contains("status.storedVersions[0] \"v1beta1\" is not in spec.versions"),
            "{message}"
        );
        assert!(message.contains("Every update of this CRD will be refused by the API server with `status.storedVersions[0]: Invalid value: \"v1beta1\""), "{message}");
    }

    #[test]
    fn output_is_byte_identical_across_runs() {
        let old = crd(
            json!({GATEWAY_BUNDLE_VERSION: "v2.0.0", "a/channel": "stable", "b/channel": "stable"}),
            json!([v("v1", true, true)]),
            json!(["v1"]),
        );
        let new = crd(
            json!({GATEWAY_BUNDLE_VERSION: "v1.0.0", "a/channel": "beta", "b/channel": "alpha"}),
            json!([v("v2", true, true)]),
            json!(["v1"]),
        );
        let settings =
            json!({"channelAnnotations": {"b/channel": ["stable", "beta", "alpha"], "a/channel": ["stable", "beta"]}});
        let first = run("UPDATE", new.clone(), old.clone(), settings.clone());
        let message = first.message.clone().unwrap();
        // Fixed order: storedVersions, downgrade, then channels sorted by annotation key.
        let positions: Vec<usize> = [
            "(1) status.storedVersions[0]",
            "(2) metadata.annotations[gateway",
            "(3) metadata.annotations[a/channel]",
            "(4) metadata.annotations[b/channel]",
        ]
        .iter()
        .map(|part| message.find(part).unwrap_or_else(|| panic!("{part} in {message}")))
        .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{message}");
        for _ in 0..3 {
            let again = run("UPDATE", new.clone(), old.clone(), settings.clone());
            assert_eq!(
                serde_json::to_value(again).unwrap(),
                serde_json::to_value(&first).unwrap()
            );
        }
    }
}
