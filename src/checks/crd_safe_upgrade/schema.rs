//! Schema compatibility: what an update of a CRD changes in the schemas that stored objects and
//! clients rely on, rule by rule as kubernetes-sigs/crdify judges it and as OLM v1's "CRD upgrade
//! safety" preflight runs it (crdify's rule names are the ids users see and configure, plus the
//! ids syncguard gives the keywords crdify leaves unhandled), with each change's effect.
//!
//! # What is compared
//! - **The CRD as a whole**: `scope` (a change of `spec.scope`); stored versions removed
//!   (`storedVersionRemoval`, reported by the check itself with the migration that fixes it).
//! - **Each version old against new** (a version present in both): every schema node of the old
//!   version is compared with the node at the same place in the new one. A node of the old schema
//!   that the new one lacks is `existingFieldRemoval` (reported once, at the topmost removed node);
//!   a node only the new schema has (an added field) is not compared on its own, only through its
//!   parent (`required`). A node's own keywords are compared with `properties` and `items` left
//!   out, as crdify does: a change inside `allOf`, `anyOf`, `not`, `additionalProperties`,
//!   `patternProperties`, `definitions`, `dependencies` or `additionalItems` is a change of the
//!   node that holds it (`unhandled`), and those subschemas are compared at their own places too.
//! - **The served versions of the new CRD with each other**, every pair in Kubernetes' version
//!   order ([`kube_version_order`]), unless `spec.conversion.strategy` is `Webhook` and the
//!   options skip them then (OLM v1 does, crdify does not): without a conversion webhook, every
//!   served version reads the same stored objects. Only differences the old CRD's own served
//!   versions did not already have are reported.
//!
//! # The rules, on one node (old value `a`, new value `b`), and their effect
//! Every change carries an [`Effect`], what it does to stored objects and clients, which the
//! `admission` profile acts on; `olm` and `crdify` act on the rule alone.
//! - `type`: any change of `type` (loses), but the type removed where the new node keeps
//!   unknown fields, or `integer` or `string` made int-or-string (neutral: every stored value
//!   stays valid and reads the same).
//! - `default`: a default added, changed or removed (alters).
//! - `enum`: an enum added where there was none, values removed (alters); the enum removed
//!   entirely (neutral); values added, only with `enumAdditions: reject` (neutral, but refused
//!   wherever it is found). Only the first of these is reported.
//! - `maximum`, `maxItems`, `maxLength`, `maxProperties`: added, or lowered; `minimum`,
//!   `minItems`, `minLength`, `minProperties`: added, or raised (alters). Loosening or removing a
//!   bound is not a change.
//! - `required`: a name added to `required` (alters).
//! - `pattern`: added, or changed (alters); removed, or changed only by reordering or repeating
//!   members of its bracket expressions ([`same_pattern`], neutral).
//! - `nullable`: turned off (alters) or on (neutral).
//! - `oneOf`: added, or entries added or removed (alters); removed entirely (neutral). Entries
//!   are compared without their own `description`, `title`, `example` and `externalDocs`.
//! - Keywords crdify has no rule for (its `unhandled`), named by what they do: `listType`
//!   (`x-kubernetes-list-type`, `-list-map-keys`; `atomic` added where there was none is
//!   neutral), `mapType` (`granular` added is neutral), `celRules` (`x-kubernetes-validations`:
//!   only removed or reworded rules are neutral), `format` (removed is neutral),
//!   `preserveUnknownFields` and `intOrString` (turned off loses, on is neutral),
//!   `embeddedResource` (off loses, on alters); every other change of them alters. CEL rules
//!   are compared by their text with whitespace and comments collapsed outside string literals
//!   ([`cel_text`]).
//! - `description`: changed (neutral).
//! - `unhandled`: any other keyword that differs (`anyOf`, `allOf`, `not`, `exclusiveMaximum`,
//!   `multipleOf`, `uniqueItems`, other `x-kubernetes-*`, ...), in either direction: unknown, or
//!   neutral when only documentation keywords differ, in subschemas too, or when the keyword is
//!   `additionalProperties` or `additionalItems` holding a schema before and after (the walk
//!   judges what changes inside at its own places).
//!
//! A change of `allOf`, `anyOf`, `oneOf` or `not` that validates stored objects as before is
//! neutral, and so is every change found inside it: the same once the entries that only require
//! a field the old node did not declare (no stored object holds it) are left out
//! ([`for_stored`]), as when Istio's generated oneOf group gains a new field.
//!
//! A field removed (`existingFieldRemoval`) loses data in a version that stores or serves
//! objects, and is neutral in one that does neither. Inside `allOf`, `anyOf`, `oneOf` and `not`,
//! subschemas only validate, so what would lose data elsewhere alters there. A field removed from
//! `status` ([`in_status`]) alters: the controller writes status from what it observes (the API
//! conventions require status to be reconstructable), so nothing is lost that it cannot write
//! again; a type changed in `status` still loses, as clients misread the stored values.
//!
//! Values compare as the API server's Go types do: `null` and an absent keyword are the same, a
//! keyword whose Go type is a value (a string, a boolean, a list, a map) is the same absent and
//! empty (`""`, `false`, `[]`, `{}`), a pointer one is not (`maximum: 0` differs from no
//! maximum), and numbers compare by value (`1` and `1.0`).
//!
//! # Where syncguard reports differently from crdify
//! In the `olm` and `crdify` profiles the verdicts are crdify's; the findings are fewer. A removed node is reported once, where
//! crdify also lists every node under it and every rule that fires against the missing node
//! (`type` changed to `""`, `default` removed, ...); in the served-version comparison, a field
//! a later served version lacks is reported as `existingFieldRemoval` for the same reason.
//!
//! Cost: the schemas of a version are not read at all when their text is the same in the old and
//! the new object; otherwise both are read once into trees whose keywords stay unread text, and
//! they are walked together, properties matched by name after sorting (nothing is quadratic in
//! the number of properties).

use crate::admission::Unread;
use crate::json;
use crate::k8s::{Crd, CrdVersion};
use crate::settings::{RuleActions, string_enum};
use crate::text::quote;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// The schema rules, by crdify's names and, after `oneOf`, the rules syncguard sorts crdify's
/// `unhandled` into, in the order findings of one node are reported.
pub const RULES: [&str; 27] = [
    "scope",
    "storedVersionRemoval",
    "existingFieldRemoval",
    "type",
    "default",
    "enum",
    "maximum",
    "maxItems",
    "maxLength",
    "maxProperties",
    "minimum",
    "minItems",
    "minLength",
    "minProperties",
    "required",
    "pattern",
    "nullable",
    "oneOf",
    "listType",
    "mapType",
    "celRules",
    "format",
    "preserveUnknownFields",
    "embeddedResource",
    "intOrString",
    "description",
    "unhandled",
];

/// The rules of keywords crdify has no validation for (its `unhandled`): syncguard names them
/// by what they do. In the `olm` and `crdify` profiles they keep crdify's verdict, which is
/// `unhandled`'s.
pub const SPLIT_FROM_UNHANDLED: [&str; 7] = [
    "listType",
    "mapType",
    "celRules",
    "format",
    "preserveUnknownFields",
    "embeddedResource",
    "intOrString",
];

/// A keyword that changed: its name, old and new values (`null` when absent).
type KeywordChange = (String, Value, Value);

/// The rule of a keyword crdify leaves `unhandled`, by what it governs.
fn keyword_rule(key: &str) -> &'static str {
    match key {
        "x-kubernetes-list-type" | "x-kubernetes-list-map-keys" => "listType",
        "x-kubernetes-map-type" => "mapType",
        "x-kubernetes-validations" => "celRules",
        "format" => "format",
        "x-kubernetes-preserve-unknown-fields" => "preserveUnknownFields",
        "x-kubernetes-embedded-resource" => "embeddedResource",
        "x-kubernetes-int-or-string" => "intOrString",
        _ => "unhandled",
    }
}

/// What a change does to stored objects and their clients: the `admission` profile acts on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Effect {
    /// Nothing changes for a stored object or a client (a loosening, documentation, the same
    /// behaviour spelled otherwise).
    Neutral,
    /// Validation tightens (ratcheting spares unchanged values) or stored objects read
    /// differently (a default), but nothing stored is lost.
    Alters,
    /// A keyword no rule knows: not shown safe, not shown harmful.
    Unknown,
    /// Stored data is lost or misread (pruned, of another type, unreachable).
    Loses,
}

/// Whether added enum values are allowed (OLM v1's default) or rejected (crdify's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum EnumAdditions {
    /// Adding values to an existing enum is fine (default, as in OLM v1).
    #[default]
    Allow,
    /// Adding values is reported under the `enum` rule (crdify's own default).
    Reject,
}

string_enum!(EnumAdditions {
    "allow" => EnumAdditions::Allow,
    "reject" => EnumAdditions::Reject,
});

/// What each schema rule does: the `schemaRules` setting.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(transparent)]
pub struct SchemaRules {
    /// The rules the settings name, with their action; the others have their default.
    pub actions: RuleActions,
}

impl SchemaRules {
    /// Refuses a rule name that is not one of [`RULES`], suggesting the nearest.
    pub fn check(&self) -> Result<(), String> {
        self.actions.check("schemaRules", &RULES)
    }
}

// ---------------------------------------------------------------------------------------------
// Changes: what the comparison finds, before any wording.

/// Where a change was found.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// The CRD as a whole.
    Crd,
    /// One version, old against new.
    Version(String),
    /// Two served versions of the new CRD (earlier, later).
    Served(String, String),
}

/// One thing the comparison found: the rule, where, and what changed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Change {
    /// The rule (one of [`RULES`]).
    pub rule: &'static str,
    /// Where: the CRD, a version, or a pair of served versions.
    pub scope: Scope,
    /// The index in the new CRD's `spec.versions` of the version the path is in.
    pub index: usize,
    /// The node's path inside the version's `openAPIV3Schema`, as a field path of the CRD
    /// object (`.properties.spec.properties.mode`; empty for the root).
    pub at: String,
    /// What changed, in the rule's own terms.
    pub what: What,
    /// What the change does to stored objects and clients.
    pub effect: Effect,
}

/// What a change is, in the terms of its rule.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum What {
    /// A keyword added: its new value.
    Added(String),
    /// A keyword removed: its old value.
    Removed(String),
    /// A keyword changed: old and new values.
    Changed(String, String),
    /// A bound made stricter: old and new values.
    Tightened(String, String),
    /// Members of a list added (`required`, `enum`, `oneOf`).
    Members(Vec<String>),
    /// Members of a list removed (`enum`, `oneOf`).
    Dropped(Vec<String>),
    /// A node of the old schema the new one lacks.
    Gone,
    /// Keywords no rule covers that differ: each with old and new values.
    Keywords(Vec<(String, String, String)>),
}

/// How the comparison runs: what the profile and settings ask of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Whether added enum values are reported.
    pub additions: EnumAdditions,
    /// Whether served versions are compared even when a conversion webhook converts between
    /// them (crdify's default; OLM v1 skips them).
    pub served_with_webhook: bool,
}

/// Compares the schemas of `old` and `new` (an UPDATE): scope, each version old against new,
/// then the served versions of the new CRD with each other. `stored` is the old CRD's stored
/// versions. Changes come in a fixed order.
pub fn compare(old: &Crd<'_>, new: &Crd<'_>, stored: &[String], options: Options) -> Vec<Change> {
    let mut changes = Vec::new();
    if old.spec.scope != new.spec.scope {
        changes.push(Change {
            rule: "scope",
            scope: Scope::Crd,
            index: 0,
            at: String::new(),
            what: What::Changed(quote(&old.spec.scope), quote(&new.spec.scope)),
            effect: Effect::Loses,
        });
    }
    let compare = Comparison {
        additions: options.additions,
    };
    for (index, version) in new.spec.versions.iter().enumerate() {
        let Some((_, before)) = old.version(&version.name) else {
            continue;
        };
        let start = changes.len();
        compare.schemas(
            before.schema.open_api_v3_schema.and_then(Unread::text),
            version.schema.open_api_v3_schema.and_then(Unread::text),
            &Scope::Version(version.name.clone()),
            index,
            &mut changes,
        );
        // A version that neither holds stored objects nor is served loses nothing.
        let in_use = before.served || version.served || stored.contains(&version.name);
        if !in_use {
            for change in &mut changes[start..] {
                if change.rule == "existingFieldRemoval" {
                    change.effect = Effect::Neutral;
                }
            }
        }
    }
    if options.served_with_webhook || new.spec.conversion.strategy != "Webhook" {
        let already: BTreeSet<(Scope, String, &'static str, What)> = compare
            .served(old)
            .into_iter()
            .map(|c| (c.scope, c.at, c.rule, c.what))
            .collect();
        changes.extend(
            compare
                .served(new)
                .into_iter()
                .filter(|c| !already.contains(&(c.scope.clone(), c.at.clone(), c.rule, c.what.clone()))),
        );
    }
    changes
}

/// The comparison's settings: a rule's action only decides what becomes of its findings, the
/// comparison itself is the same whatever the actions.
struct Comparison {
    additions: EnumAdditions,
}

impl Comparison {
    /// Compares two schemas (`None`: the version has none) of one version or of a served pair.
    fn schemas(
        &self,
        old: Option<&RawValue>,
        new: Option<&RawValue>,
        scope: &Scope,
        index: usize,
        out: &mut Vec<Change>,
    ) {
        let Some(old) = old else { return };
        if new.is_some_and(|new| new.get() == old.get()) {
            return;
        }
        let (Ok(before), Ok(after)) = (
            parse(old.get()),
            new.map_or_else(|| Ok(json::Node::Null), |new| parse(new.get())),
        ) else {
            // A schema that is not a JSON object: the API server refuses it, loudly.
            return;
        };
        if new.is_none() {
            out.push(Change {
                rule: "existingFieldRemoval",
                scope: scope.clone(),
                index,
                at: String::new(),
                what: What::Gone,
                effect: Effect::Loses,
            });
            return;
        }
        let mut walk = Walk {
            comparison: self,
            scope,
            index,
            path: String::new(),
            junctor: false,
            out,
        };
        walk.nodes(&before, &after);
    }

    /// The changes between every pair of served versions of `crd`, earlier against later.
    fn served(&self, crd: &Crd<'_>) -> Vec<Change> {
        let mut served: Vec<(usize, &CrdVersion<'_>)> =
            crd.spec.versions.iter().enumerate().filter(|(_, v)| v.served).collect();
        served.sort_by(|(_, a), (_, b)| kube_version_order(&a.name, &b.name));
        let mut out = Vec::new();
        for (i, (_, earlier)) in served.iter().enumerate() {
            for (index, later) in &served[i + 1..] {
                let scope = Scope::Served(earlier.name.clone(), later.name.clone());
                self.schemas(
                    earlier.schema.open_api_v3_schema.and_then(Unread::text),
                    later.schema.open_api_v3_schema.and_then(Unread::text),
                    &scope,
                    *index,
                    &mut out,
                );
            }
        }
        out
    }
}

/// A walk of two schema trees together.
struct Walk<'c> {
    comparison: &'c Comparison,
    scope: &'c Scope,
    index: usize,
    /// The current node's path, grown and truncated as the walk goes.
    path: String,
    /// Whether the walk is inside `allOf`, `anyOf`, `oneOf` or `not`: subschemas there only
    /// validate (structural schemas declare fields and types outside them), so what would lose
    /// data elsewhere only changes validation there.
    junctor: bool,
    out: &'c mut Vec<Change>,
}

impl Walk<'_> {
    fn push(&mut self, rule: &'static str, what: What, effect: Effect) {
        // A field removed from `status` alone: the controller writes status again from what it
        // observes (a type changed there stays a loss: clients misread what is stored).
        let effect =
            if effect == Effect::Loses && (self.junctor || (rule == "existingFieldRemoval" && in_status(&self.path))) {
                Effect::Alters
            } else {
                effect
            };
        self.out.push(Change {
            rule,
            scope: self.scope.clone(),
            index: self.index,
            at: self.path.clone(),
            what,
            effect,
        });
    }

    /// Runs `f` with `segment` appended to the path.
    fn at(&mut self, segment: &str, f: impl FnOnce(&mut Self)) {
        let mark = self.path.len();
        self.path.push_str(segment);
        f(self);
        self.path.truncate(mark);
    }

    /// Runs `f` with `.properties.<name>` appended to the path (the walk's most common step,
    /// written without a `format!`).
    fn at_property(&mut self, name: &str, f: impl FnOnce(&mut Self)) {
        let mark = self.path.len();
        self.path.push_str(".properties.");
        self.path.push_str(name);
        f(self);
        self.path.truncate(mark);
    }

    /// Compares one node of the old schema with the node at the same place in the new one.
    fn nodes(&mut self, a: &Node<'_>, b: &Node<'_>) {
        self.keywords(a, b);
        // Properties, matched by name (both lists are sorted).
        let mut news = properties(b).iter().peekable();
        for (name, old) in properties(a) {
            while news.peek().is_some_and(|(n, _)| n < name) {
                news.next();
            }
            match news.peek() {
                Some((n, new)) if n == name => self.at_property(name, |w| w.nodes(old, new)),
                _ => self.at_property(name, |w| w.push("existingFieldRemoval", What::Gone, Effect::Loses)),
            }
        }
        match (items(a), items(b)) {
            (Items::One(old), Items::One(new)) => self.at(".items", |w| w.nodes(old, new)),
            (Items::Many(old), Items::Many(new)) => {
                for (i, old) in old.iter().enumerate() {
                    match new.get(i) {
                        Some(new) => self.at(&format!(".items[{i}]"), |w| w.nodes(old, new)),
                        None => self.at(&format!(".items[{i}]"), |w| {
                            w.push("existingFieldRemoval", What::Gone, Effect::Loses)
                        }),
                    }
                }
            }
            (Items::One(_), _) => self.at(".items", |w| w.push("existingFieldRemoval", What::Gone, Effect::Loses)),
            (Items::Many(old), _) => {
                for i in 0..old.len() {
                    self.at(&format!(".items[{i}]"), |w| {
                        w.push("existingFieldRemoval", What::Gone, Effect::Loses)
                    });
                }
            }
            (Items::None, _) => {}
        }
    }

    /// Compares the node's own keywords (everything but `properties` and `items`), rule by rule,
    /// then what no rule covers; subschemas under other keywords are compared at their places.
    fn keywords(&mut self, a: &Node<'_>, b: &Node<'_>) {
        let changed = merged(keywords(a), keywords(b));
        if changed.is_empty() {
            return;
        }
        // The keywords crdify leaves unhandled, gathered by the rule syncguard gives them.
        let mut others: Vec<(&'static str, Vec<KeywordChange>)> = Vec::new();
        // The junctors that validate stored objects as before (see `for_stored`): whatever
        // changed in them is about fields only the new schema has.
        let new_fields = added_fields(a, b);
        let mut moot: Vec<&str> = Vec::new();
        for (key, old, new) in changed {
            let (old, new) = (parsed(old), parsed(new));
            let start = self.out.len();
            let same_for_stored = matches!(key, "allOf" | "anyOf" | "oneOf" | "not")
                && !new_fields.is_empty()
                && for_stored(&junctor(key, &old), &new_fields) == for_stored(&junctor(key, &new), &new_fields);
            if same_for_stored {
                moot.push(key);
            }
            match key {
                "type" => {
                    let (x, y) = (old.as_str().unwrap_or(""), new.as_str().unwrap_or(""));
                    if x != y {
                        self.push("type", What::Changed(quote(x), quote(y)), type_effect(x, y, b));
                    }
                }
                "pattern" => self.pattern(&old, &new),
                "description" => {
                    let (x, y) = (old.as_str().unwrap_or(""), new.as_str().unwrap_or(""));
                    if x != y {
                        let what = match (x.is_empty(), y.is_empty()) {
                            (true, false) => What::Added(quote(y)),
                            (false, true) => What::Removed(quote(x)),
                            _ => What::Changed(quote(x), quote(y)),
                        };
                        self.push("description", what, Effect::Neutral);
                    }
                }
                "default" => match (absent(&old), absent(&new)) {
                    (true, false) => self.push("default", What::Added(short(&new)), Effect::Alters),
                    (false, true) => self.push("default", What::Removed(short(&old)), Effect::Alters),
                    (false, false) if !same_json(&old, &new) => {
                        self.push("default", What::Changed(short(&old), short(&new)), Effect::Alters)
                    }
                    _ => {}
                },
                "enum" => self.enumeration(&old, &new),
                "maximum" | "maxItems" | "maxLength" | "maxProperties" => self.bound(key, &old, &new, true),
                "minimum" | "minItems" | "minLength" | "minProperties" => self.bound(key, &old, &new, false),
                "required" => {
                    let before = strings(&old);
                    let added: Vec<String> = strings(&new).into_iter().filter(|n| !before.contains(n)).collect();
                    if !added.is_empty() {
                        self.push("required", What::Members(added), Effect::Alters);
                    }
                }
                "nullable" => match (truthy(&old), truthy(&new)) {
                    // Turned on: a loosening. Turned off: stored nulls are pruned or refused.
                    (false, true) => self.push("nullable", What::Added("true".into()), Effect::Neutral),
                    (true, false) => self.push("nullable", What::Removed("true".into()), Effect::Alters),
                    _ => {}
                },
                "oneOf" => {
                    self.one_of(&old, &new);
                    self.subschemas(key, &old, &new);
                }
                _ => {
                    if !same_keyword(key, &old, &new) {
                        let rule = keyword_rule(key);
                        match others.iter_mut().find(|(r, _)| *r == rule) {
                            Some((_, keys)) => keys.push((key.to_string(), old.clone(), new.clone())),
                            None => others.push((rule, vec![(key.to_string(), old.clone(), new.clone())])),
                        }
                    }
                    self.subschemas(key, &old, &new);
                }
            }
            if same_for_stored {
                for change in &mut self.out[start..] {
                    change.effect = Effect::Neutral;
                }
            }
        }
        others.sort_by_key(|(rule, _)| RULES.iter().position(|r| r == rule));
        for (rule, keys) in others {
            let effect = if keys.iter().all(|(key, _, _)| moot.contains(&key.as_str())) {
                Effect::Neutral
            } else {
                keyword_effect(rule, &keys)
            };
            let shown = keys
                .iter()
                .map(|(key, old, new)| (key.clone(), short(old), short(new)))
                .collect();
            self.push(rule, What::Keywords(shown), effect);
        }
    }

    /// `pattern`: added or changed (unless the same strings match, as far as the text shows),
    /// or removed (a loosening).
    fn pattern(&mut self, old: &Value, new: &Value) {
        let (a, b) = (old.as_str().unwrap_or(""), new.as_str().unwrap_or(""));
        if a == b {
            return;
        }
        let (what, effect) = match (a.is_empty(), b.is_empty()) {
            (true, false) => (What::Added(quote(b)), Effect::Alters),
            (false, true) => (What::Removed(quote(a)), Effect::Neutral),
            _ if same_pattern(a, b) => (What::Changed(quote(a), quote(b)), Effect::Neutral),
            _ => (What::Changed(quote(a), quote(b)), Effect::Alters),
        };
        self.push("pattern", what, effect);
    }

    fn enumeration(&mut self, old: &Value, new: &Value) {
        let (a, b) = (json_set(old), json_set(new));
        if a.is_empty() && !b.is_empty() {
            self.push("enum", What::Added(list(&b)), Effect::Alters);
            return;
        }
        if !a.is_empty() && b.is_empty() {
            // The enum removed entirely: every value is valid now, a loosening.
            self.push("enum", What::Removed(list(&a)), Effect::Neutral);
            return;
        }
        let removed: Vec<String> = a.difference(&b).cloned().collect();
        if !removed.is_empty() {
            self.push("enum", What::Dropped(removed), Effect::Alters);
            return;
        }
        let added: Vec<String> = b.difference(&a).cloned().collect();
        if !added.is_empty() && self.comparison.additions == EnumAdditions::Reject {
            self.push("enum", What::Members(added), Effect::Neutral);
        }
    }

    /// A `max*` (`upper`) or `min*` bound: added, or made stricter.
    fn bound(&mut self, key: &str, old: &Value, new: &Value, upper: bool) {
        let rule = rule_name(key);
        match (old.as_f64(), new.as_f64()) {
            (None, Some(_)) => self.push(rule, What::Added(short(new)), Effect::Alters),
            (Some(a), Some(b)) if (upper && b < a) || (!upper && b > a) => {
                self.push(rule, What::Tightened(short(old), short(new)), Effect::Alters)
            }
            _ => {}
        }
    }

    fn one_of(&mut self, old: &Value, new: &Value) {
        let entries = |value: &Value| -> BTreeSet<String> {
            value
                .as_array()
                .map(|items| {
                    items
                        .iter()
                        .map(|item| {
                            let mut item = item.clone();
                            if let Value::Object(map) = &mut item {
                                for key in ["description", "title", "example", "externalDocs"] {
                                    map.remove(key);
                                }
                            }
                            normalized(&item, true).to_string()
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        let (a, b) = (entries(old), entries(new));
        if a.is_empty() && !b.is_empty() {
            self.push("oneOf", What::Added(format!("{} entries", b.len())), Effect::Alters);
        } else if !a.is_empty() && b.is_empty() {
            // oneOf removed entirely: a loosening.
            self.push(
                "oneOf",
                What::Dropped(a.iter().map(|e| short_text(e)).collect()),
                Effect::Neutral,
            );
        } else if a.difference(&b).next().is_some() {
            self.push(
                "oneOf",
                What::Dropped(a.difference(&b).map(|e| short_text(e)).collect()),
                Effect::Alters,
            );
        } else if b.difference(&a).next().is_some() {
            self.push(
                "oneOf",
                What::Members(b.difference(&a).map(|e| short_text(e)).collect()),
                Effect::Alters,
            );
        }
    }

    /// The subschemas under keyword `key` (`allOf`, `additionalProperties`, ...), compared at
    /// their own places: nodes the new schema lacks are removed, the others compared.
    fn subschemas(&mut self, key: &str, old: &Value, new: &Value) {
        match key {
            "allOf" | "anyOf" | "oneOf" => {
                let (olds, news) = (old.as_array(), new.as_array());
                // An entry gone: allOf loosens, and so does a whole list gone; otherwise anyOf
                // and oneOf change what validates.
                let emptied = news.is_none_or(|n| n.is_empty());
                let gone = if key == "allOf" || emptied {
                    Effect::Neutral
                } else {
                    Effect::Alters
                };
                let junctor = std::mem::replace(&mut self.junctor, true);
                for (i, item) in olds.into_iter().flatten().enumerate() {
                    let later = news.and_then(|n| n.get(i));
                    self.at(&format!(".{key}[{i}]"), |w| w.subschema(item, later, gone));
                }
                self.junctor = junctor;
            }
            "not" if old.is_object() => {
                let later = Some(new).filter(|n| n.is_object());
                let junctor = std::mem::replace(&mut self.junctor, true);
                self.at(".not", |w| w.subschema(old, later, Effect::Neutral));
                self.junctor = junctor;
            }
            "additionalProperties" | "additionalItems" if old.is_object() => {
                let later = Some(new).filter(|n| n.is_object());
                // The schema of a map's values gone: the values are pruned.
                self.at(&format!(".{key}"), |w| w.subschema(old, later, Effect::Loses));
            }
            "patternProperties" | "definitions" | "dependencies" => {
                for (name, item) in old.as_object().into_iter().flatten() {
                    if !item.is_object() {
                        continue;
                    }
                    let later = new.get(name).filter(|n| n.is_object());
                    self.at(&format!(".{key}.{name}"), |w| w.subschema(item, later, Effect::Unknown));
                }
            }
            _ => {}
        }
    }

    /// A subschema read as a value, compared with its counterpart (`None`: gone, which does
    /// `gone`).
    fn subschema(&mut self, old: &Value, new: Option<&Value>, gone: Effect) {
        let Some(new) = new else {
            self.push("existingFieldRemoval", What::Gone, gone);
            return;
        };
        if old == new {
            return;
        }
        let (a, b) = (old.to_string(), new.to_string());
        if let (Ok(a), Ok(b)) = (parse(&a), parse(&b)) {
            self.nodes(&a, &b);
        }
    }
}

/// The rule named `key` (a keyword with a rule of its own).
fn rule_name(key: &str) -> &'static str {
    RULES.iter().find(|rule| **rule == key).copied().unwrap_or("unhandled")
}

/// What a change of the keywords crdify leaves unhandled does, by the rule they belong to
/// (old and new values of each keyword, `null` when absent).
fn keyword_effect(rule: &str, keys: &[KeywordChange]) -> Effect {
    let value = |name: &str| keys.iter().find(|(key, _, _)| key == name).map(|(_, a, b)| (a, b));
    match rule {
        // A list without a list type is atomic already; `set` and `map` add uniqueness checks
        // and change how server-side apply merges, as other map keys do.
        "listType" => match (keys.len(), value("x-kubernetes-list-type")) {
            (1, Some((a, b))) if is_zero(a) && b.as_str() == Some("atomic") => Effect::Neutral,
            _ => Effect::Alters,
        },
        // A map without a map type is granular already.
        "mapType" => match value("x-kubernetes-map-type") {
            Some((a, b)) if is_zero(a) && b.as_str() == Some("granular") => Effect::Neutral,
            _ => Effect::Alters,
        },
        // Rules only removed (or their messages changed): a loosening.
        "celRules" => {
            let Some((a, b)) = value("x-kubernetes-validations") else {
                return Effect::Alters;
            };
            let before: BTreeSet<String> = cel_rules(a);
            if cel_rules(b).is_subset(&before) {
                Effect::Neutral
            } else {
                Effect::Alters
            }
        }
        "format" => match value("format") {
            Some((_, b)) if is_zero(b) => Effect::Neutral,
            _ => Effect::Alters,
        },
        // Turned off, unknown fields are pruned from stored objects on their next write.
        "preserveUnknownFields" | "intOrString" => match value(keys[0].0.as_str()) {
            Some((a, b)) if truthy(a) && !truthy(b) => Effect::Loses,
            _ => Effect::Neutral,
        },
        // Turned off, the embedded object's apiVersion, kind and metadata are no longer kept
        // implicitly; turned on, they are validated.
        "embeddedResource" => match value("x-kubernetes-embedded-resource") {
            Some((a, b)) if truthy(a) && !truthy(b) => Effect::Loses,
            Some((a, b)) if !truthy(a) && truthy(b) => Effect::Alters,
            _ => Effect::Neutral,
        },
        // Documentation inside subschemas, or documentation keywords themselves; or the schema
        // of a map's values or of further items, whose changes the walk judges at their own
        // places (`.additionalProperties...`), so the keyword itself changes nothing more.
        _ if keys.iter().all(|(key, a, b)| {
            (matches!(key.as_str(), "additionalProperties" | "additionalItems") && a.is_object() && b.is_object())
                || same_keyword(key, &without_docs(a), &without_docs(b))
        }) =>
        {
            Effect::Neutral
        }
        _ => Effect::Unknown,
    }
}

/// What a change of `type` from `old` to `new` does, `node` being the new node. The type
/// removed where the new node keeps unknown fields (any value is valid and kept whole), or an
/// integer or a string made int-or-string (either is valid): every stored value stays valid and
/// reads the same, a loosening. Any other change: stored values of the old type no longer
/// validate and clients decode them wrongly.
fn type_effect(old: &str, new: &str, node: &Node<'_>) -> Effect {
    let on = |key: &str| truthy(&parsed(keyword(node, key)));
    let widened = new.is_empty()
        && (on("x-kubernetes-preserve-unknown-fields")
            || (matches!(old, "integer" | "string") && on("x-kubernetes-int-or-string")));
    if widened { Effect::Neutral } else { Effect::Loses }
}

/// The fields the new node `b` declares and the old node `a` did not, which no stored object
/// holds: the API server pruned them (none when `a` kept unknown fields).
fn added_fields(a: &Node<'_>, b: &Node<'_>) -> Vec<String> {
    if truthy(&parsed(keyword(a, "x-kubernetes-preserve-unknown-fields"))) {
        return Vec::new();
    }
    let before = properties(a);
    properties(b)
        .iter()
        .filter(|(name, _)| before.binary_search_by(|(old, _)| old.cmp(name)).is_err())
        .map(|(name, _)| name.to_string())
        .collect()
}

/// A node holding only `key: value`.
fn junctor(key: &str, value: &Value) -> Value {
    serde_json::json!({ key: value })
}

/// A schema as it validates an object that holds none of the fields `absent`: the entries of
/// its `anyOf` and `oneOf` that only require one of those fields are false for such an object,
/// and neither junctor counts a false entry, so they are left out (in `allOf` and `not` too,
/// which apply to the same object; documentation left out as well). Two schemas the same after
/// this validate such objects alike: Istio's generated `oneOf` of required fields, for instance,
/// gains an entry for a new field of the group.
fn for_stored(value: &Value, absent: &[String]) -> Value {
    let Value::Object(map) = value else {
        return value.clone();
    };
    let only_absent = |entry: &&Value| {
        entry.as_object().is_some_and(|entry| {
            entry
                .keys()
                .all(|key| key == "required" || DOC_KEYWORDS.contains(&key.as_str()))
                && strings(entry.get("required").unwrap_or(&Value::Null))
                    .iter()
                    .any(|name| absent.contains(name))
        })
    };
    map.iter()
        .filter(|(key, _)| !DOC_KEYWORDS.contains(&key.as_str()))
        .map(|(key, item)| {
            let item = match (key.as_str(), item) {
                ("anyOf" | "oneOf", Value::Array(entries)) => Value::Array(
                    entries
                        .iter()
                        .filter(|entry| !only_absent(entry))
                        .map(|entry| for_stored(entry, absent))
                        .collect(),
                ),
                ("allOf", Value::Array(entries)) => {
                    Value::Array(entries.iter().map(|entry| for_stored(entry, absent)).collect())
                }
                ("not", _) => for_stored(item, absent),
                _ => item.clone(),
            };
            (key.clone(), item)
        })
        .collect()
}

/// Whether a node's path (`.properties.status.properties.ready`) is in the object's `status`: the
/// root schema's `status` property or anything under it. Status is written by the object's
/// controller from what it observes (the API conventions require it to be reconstructable), so a
/// status field removed loses nothing the controller cannot write again.
pub fn in_status(at: &str) -> bool {
    at.strip_prefix(".properties.status")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

/// The CEL expressions of an `x-kubernetes-validations` list, each as [`cel_text`] spells it.
fn cel_rules(value: &Value) -> BTreeSet<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|rule| rule.get("rule").and_then(Value::as_str))
        .map(cel_text)
        .collect()
}

/// CEL's whitespace (cel-spec langdef.md: `WHITESPACE ::= [\t\n\f\r ]+`).
fn cel_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0C)
}

/// A CEL expression with its layout made canonical and nothing else: outside string literals,
/// every run of CEL's whitespace and comments (`//` to the end of the line) is one space, none at
/// either end; string and bytes literals are kept exactly as written, since a space inside one
/// (`'^a b$'` against `'^a  b$'`) changes what the rule accepts. Literals are read as cel-spec's
/// lexical grammar (langdef.md) writes them: quoted by `'`, `"`, `'''` or `"""`, raw with an `r`
/// or `R` prefix (a backslash is then itself), bytes with a `b` or `B` prefix before it; in the
/// others a backslash escapes the next character. An unterminated literal runs to the end.
pub fn cel_text(rule: &str) -> String {
    let bytes = rule.as_bytes();
    let mut out = String::with_capacity(rule.len());
    // Whether a separator is owed before the next token (whitespace or a comment was skipped).
    let mut gap = false;
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        let c = bytes[i];
        if cel_space(c) {
            gap = true;
            i += 1;
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            gap = true;
            i = bytes[i..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |n| i + n);
            continue;
        }
        if c.is_ascii_alphanumeric() || c == b'_' {
            // A word (identifier, keyword, number), or the prefix of a literal right before its
            // quote: `r`, `b` or `br`, in either case (any longer word before a quote is a word).
            let prefix = match (
                bytes.get(i).map(u8::to_ascii_lowercase),
                bytes.get(i + 1).map(u8::to_ascii_lowercase),
            ) {
                (Some(b'r' | b'b'), Some(b'\'' | b'"')) => Some((1, c.eq_ignore_ascii_case(&b'r'))),
                (Some(b'b'), Some(b'r')) if matches!(bytes.get(i + 2), Some(b'\'' | b'"')) => Some((2, true)),
                _ => None,
            };
            i = match prefix {
                Some((length, raw)) => literal_end(bytes, i + length, raw),
                None => {
                    while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                        i += 1;
                    }
                    i
                }
            };
        } else if c == b'\'' || c == b'"' {
            i = literal_end(bytes, i, false);
        } else {
            // Anything else (an operator, a bracket, a byte of a multi-byte character), up to
            // what the loop reads otherwise.
            i += 1;
            while i < bytes.len()
                && !bytes[i].is_ascii_alphanumeric()
                && !cel_space(bytes[i])
                && !matches!(bytes[i], b'_' | b'\'' | b'"' | b'/')
            {
                i += 1;
            }
        }
        if gap && !out.is_empty() {
            out.push(' ');
        }
        gap = false;
        // Every boundary is an ASCII byte or the end, so the slice is whole characters.
        out.push_str(&rule[start..i]);
    }
    out
}

/// Where the string literal whose opening quote is at `start` ends (just past its closing quote,
/// or the end of `text` when it has none): triple-quoted when it opens with three quotes, a
/// backslash escaping the next character unless `raw`.
fn literal_end(text: &[u8], start: usize, raw: bool) -> usize {
    let quote = text[start];
    let tripled = |at: usize| text.get(at..at + 3).is_some_and(|q| q.iter().all(|&b| b == quote));
    let triple = tripled(start);
    let mut i = start + if triple { 3 } else { 1 };
    while i < text.len() {
        match text[i] {
            b'\\' if !raw => i += 2,
            b if b == quote && !triple => return i + 1,
            b if b == quote && tripled(i) => return i + 3,
            _ => i += 1,
        }
    }
    text.len()
}

/// The documentation keywords of a schema: they change nothing a stored object or a client
/// does.
const DOC_KEYWORDS: [&str; 4] = ["description", "title", "example", "externalDocs"];

/// `value` with every documentation keyword of the schemas in it left out.
fn without_docs(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| !DOC_KEYWORDS.contains(&key.as_str()))
                .map(|(key, v)| {
                    let inner = if DATA_KEYWORDS.contains(&key.as_str()) {
                        v.clone()
                    } else {
                        without_docs(v)
                    };
                    (key.clone(), inner)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_docs).collect()),
        other => other.clone(),
    }
}

/// Whether two regular expressions match the same strings as far as their text shows: the same
/// sequence of atoms, bracket expressions compared as sets of their members (reordered or
/// repeated members are the same class). Anything this reading does not understand (a bracket
/// inside a class, a class left open) is not shown the same.
pub fn same_pattern(a: &str, b: &str) -> bool {
    match (pattern_atoms(a), pattern_atoms(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// An atom of a regular expression, as [`same_pattern`] compares them.
#[derive(Debug, PartialEq, Eq)]
enum Atom {
    /// A character or an escape (`\.`), outside brackets.
    Literal(String),
    /// A bracket expression: negated or not, and its members (characters, escapes, ranges).
    Class(bool, BTreeSet<String>),
}

fn pattern_atoms(pattern: &str) -> Option<Vec<Atom>> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut atoms = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                atoms.push(Atom::Literal(chars.get(i..i + 2)?.iter().collect()));
                i += 2;
            }
            '[' => {
                i += 1;
                let negated = chars.get(i) == Some(&'^');
                if negated {
                    i += 1;
                }
                // A `]` first is a member in POSIX and an error in RE2: not read here.
                if chars.get(i) == Some(&']') {
                    return None;
                }
                let mut members = Vec::new();
                loop {
                    let c = *chars.get(i)?;
                    match c {
                        ']' => {
                            i += 1;
                            break;
                        }
                        '[' => return None,
                        '\\' => {
                            members.push(chars.get(i..i + 2)?.iter().collect::<String>());
                            i += 2;
                        }
                        _ => {
                            members.push(c.to_string());
                            i += 1;
                        }
                    }
                }
                // Ranges: a member, `-`, a member (a `-` first or last is itself).
                let mut set = BTreeSet::new();
                let mut j = 0;
                while j < members.len() {
                    if j + 2 < members.len() && members[j + 1] == "-" {
                        if members[j].starts_with('\\') || members[j + 2].starts_with('\\') {
                            return None;
                        }
                        set.insert(format!("{}-{}", members[j], members[j + 2]));
                        j += 3;
                    } else {
                        set.insert(members[j].clone());
                        j += 1;
                    }
                }
                atoms.push(Atom::Class(negated, set));
            }
            c => {
                atoms.push(Atom::Literal(c.to_string()));
                i += 1;
            }
        }
    }
    Some(atoms)
}

/// The keywords of two nodes (each sorted by name), merged by name: each with its old and new
/// raw value, those whose text is the same in both left out.
fn merged<'n, 'a>(
    a: impl Iterator<Item = (&'n str, &'a RawValue)>,
    b: impl Iterator<Item = (&'n str, &'a RawValue)>,
) -> Vec<(&'n str, Option<&'a RawValue>, Option<&'a RawValue>)> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    let mut out = Vec::new();
    loop {
        let order = match (a.peek(), b.peek()) {
            (None, None) => break,
            (Some((ka, _)), Some((kb, _))) => ka.cmp(kb),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
        };
        let next = match order {
            std::cmp::Ordering::Less => a.next().map(|(key, old)| (key, Some(old), None)),
            std::cmp::Ordering::Greater => b.next().map(|(key, new)| (key, None, Some(new))),
            std::cmp::Ordering::Equal => a
                .next()
                .zip(b.next())
                .map(|((key, old), (_, new))| (key, Some(old), Some(new))),
        };
        let Some(next) = next else { break };
        if next.1.map(RawValue::get) != next.2.map(RawValue::get) {
            out.push(next);
        }
    }
    out
}

/// A raw keyword value read, `Null` when absent. Owned (`serde_json::Value`, not the request's
/// borrowed [`crate::json::Node`]) because only the keywords whose texts differ between the two
/// versions get here, and each is then rewritten before it is compared ([`normalized`],
/// [`without_docs`], [`for_stored`] build new trees: numbers as floats, Go's zero values and the
/// documentation left out, entries of `anyOf` dropped), which a tree borrowing the request's
/// text cannot be.
fn parsed(raw: Option<&RawValue>) -> Value {
    raw.and_then(|raw| serde_json::from_str(raw.get()).ok())
        .unwrap_or(Value::Null)
}

fn absent(value: &Value) -> bool {
    value.is_null()
}

fn truthy(value: &Value) -> bool {
    value.as_bool().unwrap_or(false)
}

/// The strings of a list (`required`).
fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| items.iter().filter_map(|i| i.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// The members of a list as canonical JSON texts (`enum`).
fn json_set(value: &Value) -> BTreeSet<String> {
    value
        .as_array()
        .map(|items| items.iter().map(|item| normalized(item, false).to_string()).collect())
        .unwrap_or_default()
}

/// `[a b c]`, as crdify lists values.
fn list(values: &BTreeSet<String>) -> String {
    format!("[{}]", values.iter().cloned().collect::<Vec<_>>().join(" "))
}

/// Most characters of a value shown in a finding.
const VALUE_CHARS: usize = 40;

/// A value as a finding shows it: its JSON, shortened in its middle when long.
fn short(value: &Value) -> String {
    if value.is_null() {
        return "none".to_string();
    }
    short_text(&value.to_string())
}

fn short_text(text: &str) -> String {
    crate::text::elide(text, VALUE_CHARS).into_owned()
}

/// Whether two JSON values are the same, numbers compared by value.
fn same_json(a: &Value, b: &Value) -> bool {
    normalized(a, false) == normalized(b, false)
}

/// Whether two values of keyword `key` are the same for the API server's Go types (see the
/// module doc).
fn same_keyword(key: &str, a: &Value, b: &Value) -> bool {
    let zero = |value: &Value| value.is_null() || (!POINTER_KEYWORDS.contains(&key) && is_zero(value));
    if zero(a) && zero(b) {
        return true;
    }
    let schema = SCHEMA_KEYWORDS.contains(&key);
    normalized(a, schema) == normalized(b, schema)
}

/// Keywords whose Go type is a pointer in JSONSchemaProps (apiextensions/v1
/// `types_jsonschema.go`): absent differs from every value, the zero one included.
const POINTER_KEYWORDS: &[&str] = &[
    "$ref",
    "maximum",
    "minimum",
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "multipleOf",
    "maxProperties",
    "minProperties",
    "items",
    "not",
    "additionalProperties",
    "additionalItems",
    "externalDocs",
    "example",
    "default",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
];

/// Keywords whose values are schemas, or lists or maps of schemas.
const SCHEMA_KEYWORDS: &[&str] = &[
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "additionalProperties",
    "additionalItems",
    "items",
    "properties",
    "patternProperties",
    "definitions",
    "dependencies",
];

/// Keywords whose values are JSON data, compared as they are.
const DATA_KEYWORDS: &[&str] = &["default", "example", "enum"];

/// The zero value of a Go value type: `false`, `""`, `[]`, `{}`.
fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Number(_) => false,
    }
}

/// `value` in a canonical form: numbers as floats, and, in a schema (`schema`), keywords that
/// are absent for Go (null, or the zero value of a value type) left out, recursively.
fn normalized(value: &Value, schema: bool) -> Value {
    match value {
        Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| value.clone(), Value::Number),
        Value::Array(items) => Value::Array(items.iter().map(|i| normalized(i, schema)).collect()),
        Value::Object(map) if schema => Value::Object(
            map.iter()
                .filter(|(key, v)| !(v.is_null() || (!POINTER_KEYWORDS.contains(&key.as_str()) && is_zero(v))))
                .map(|(key, v)| {
                    let inner = if DATA_KEYWORDS.contains(&key.as_str()) {
                        normalized(v, false)
                    } else if matches!(
                        key.as_str(),
                        "properties" | "patternProperties" | "definitions" | "dependencies"
                    ) {
                        match v {
                            Value::Object(children) => {
                                Value::Object(children.iter().map(|(k, c)| (k.clone(), normalized(c, true))).collect())
                            }
                            other => normalized(other, false),
                        }
                    } else {
                        normalized(
                            v,
                            SCHEMA_KEYWORDS.contains(&key.as_str()) || key == "x-kubernetes-validations",
                        )
                    };
                    (key.clone(), inner)
                })
                .collect(),
        ),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), normalized(v, false))).collect()),
        other => other.clone(),
    }
}

/// Kubernetes' order of version names, as `k8s.io/apimachinery` `CompareKubeAwareVersionStrings`
/// orders them: names that are not Kubernetes versions first, in reverse alphabetical order,
/// then alpha before beta before GA, then by major and minor number. A Kubernetes version is
/// `v`, digits, and optionally `alpha` or `beta` and digits (its `^v(\d+)(?:(alpha|beta)(\d+))?$`):
/// `v0alpha1`, `v1beta0` and `v01` are Kubernetes versions, `v01` the same as `v1`.
pub fn kube_version_order(a: &str, b: &str) -> std::cmp::Ordering {
    if a == b {
        return std::cmp::Ordering::Equal;
    }
    match (kube_version(a), kube_version(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Greater,
        (None, Some(_)) => std::cmp::Ordering::Less,
        (None, None) => b.cmp(a),
    }
}

/// (stability, major, minor) of a Kubernetes version name: `v1alpha2` is (0, 1, 2), `v1beta1`
/// (1, 1, 1), `v2` (2, 2, 0). Numbers are read as Go's `strconv.Atoi` reads them on a 64-bit
/// platform: one that does not fit an `i64` makes the name not a Kubernetes version.
fn kube_version(name: &str) -> Option<(u8, i64, i64)> {
    let rest = name.strip_prefix('v')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let major: i64 = rest[..digits].parse().ok()?;
    let tail = &rest[digits..];
    if tail.is_empty() {
        return Some((2, major, 0));
    }
    let (stability, minor) = if let Some(m) = tail.strip_prefix("alpha") {
        (0, m)
    } else if let Some(m) = tail.strip_prefix("beta") {
        (1, m)
    } else {
        return None;
    };
    if minor.is_empty() || !minor.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some((stability, major, minor.parse().ok()?))
}

// ---------------------------------------------------------------------------------------------
// Reading: a schema tree whose keywords stay unread text.

/// Deepest schema nesting walked; deeper `properties` and `items` are compared as text.
pub const MAX_DEPTH: usize = 40;

/// A JSONSchemaProps node as the comparison reads it: [`json::Node`], read as [`SchemaPart`]
/// says and put in order by [`parse`]. Every member but `properties` and `items` is a keyword,
/// its value left unread ([`keywords`]); the walk reads the tree as read, without building
/// another.
type Node<'a> = json::Node<'a>;

/// Reads a schema from JSON text: `properties` and `items` down to [`MAX_DEPTH`] schema levels,
/// every other keyword left unread ([`crate::json`], with [`SchemaPart`]), each object's members
/// sorted by name with the last of a repeated name kept, as the API server's decoder keeps it.
/// A node of another JSON type (the API server refuses it) reads as an empty schema;
/// `properties` or `items` holding neither a schema nor null is an error.
fn parse(text: &str) -> Result<Node<'_>, serde_json::Error> {
    let mut node = json::read(text, SchemaPart::Schema(0), usize::MAX)?;
    prepare(&mut node)?;
    Ok(node)
}

/// Sorts the members of `node` and of the schemas under it (see [`parse`]).
fn prepare(node: &mut Node<'_>) -> Result<(), serde_json::Error> {
    let json::Node::Object(entries) = node else {
        return Ok(());
    };
    json::sort_members(entries);
    for (key, value) in entries.iter_mut() {
        match (key.as_ref(), value) {
            (_, json::Node::Raw(_)) => {}
            ("properties", json::Node::Object(names)) => {
                json::sort_members(names);
                for (_, child) in names.iter_mut() {
                    prepare(child)?;
                }
            }
            ("items", items @ json::Node::Object(_)) => prepare(items)?,
            ("items", json::Node::Array(items)) => {
                for item in items {
                    prepare(item)?;
                }
            }
            ("properties", json::Node::Null) | ("items", json::Node::Null | json::Node::Bool(_)) => {}
            (key, _) => {
                return Err(serde::de::Error::custom(format!(
                    "`{key}` holds neither a schema nor null"
                )));
            }
        }
    }
    Ok(())
}

/// The members of a schema node, sorted by name (none for a value that is not an object).
fn members<'n, 'a>(node: &'n Node<'a>) -> &'n [(Cow<'a, str>, Node<'a>)] {
    match node {
        json::Node::Object(entries) => entries,
        _ => &[],
    }
}

/// The member `key` of a schema node.
fn member<'n, 'a>(node: &'n Node<'a>, key: &str) -> Option<&'n Node<'a>> {
    let entries = members(node);
    entries
        .binary_search_by(|(k, _)| k.as_ref().cmp(key))
        .ok()
        .map(|i| &entries[i].1)
}

/// The keywords of a schema node: every member left unread, sorted by name.
fn keywords<'n, 'a>(node: &'n Node<'a>) -> impl Iterator<Item = (&'n str, &'a RawValue)> + 'n {
    members(node).iter().filter_map(|(key, value)| match value {
        json::Node::Raw(raw) => Some((key.as_ref(), *raw)),
        _ => None,
    })
}

/// The unread value of keyword `key` of a schema node.
fn keyword<'a>(node: &Node<'a>, key: &str) -> Option<&'a RawValue> {
    match member(node, key) {
        Some(json::Node::Raw(raw)) => Some(raw),
        _ => None,
    }
}

/// `properties` of a schema node, sorted by name.
fn properties<'n, 'a>(node: &'n Node<'a>) -> &'n [(Cow<'a, str>, Node<'a>)] {
    match member(node, "properties") {
        Some(json::Node::Object(names)) => names,
        _ => &[],
    }
}

/// `items` of a schema node.
enum Items<'n, 'a> {
    /// None, or a value that is not a schema.
    None,
    /// One schema for every item.
    One(&'n Node<'a>),
    /// A schema per position.
    Many(&'n [Node<'a>]),
}

/// `items` of a schema node.
fn items<'n, 'a>(node: &'n Node<'a>) -> Items<'n, 'a> {
    match member(node, "items") {
        Some(one @ json::Node::Object(_)) => Items::One(one),
        Some(json::Node::Array(many)) => Items::Many(many),
        _ => Items::None,
    }
}

/// What the comparison reads of a schema ([`json::Grammar`]): `properties` (a map of names to
/// schemas) and `items` (a schema, or a list of them) down to [`MAX_DEPTH`] schema levels.
#[derive(Debug, Clone, Copy)]
enum SchemaPart {
    /// A schema at this depth.
    Schema(usize),
    /// The `properties` of a schema: names to schemas of this depth.
    Properties(usize),
    /// The `items` of a schema: a schema of this depth, or a list of them.
    Items(usize),
}

impl json::Grammar for SchemaPart {
    fn member(self, key: &str) -> json::Read<Self> {
        match self {
            SchemaPart::Schema(depth) | SchemaPart::Items(depth) => match key {
                "properties" if depth < MAX_DEPTH => json::Read::Parse(SchemaPart::Properties(depth + 1)),
                "items" if depth < MAX_DEPTH => json::Read::Parse(SchemaPart::Items(depth + 1)),
                _ => json::Read::Raw,
            },
            SchemaPart::Properties(depth) => json::Read::Parse(SchemaPart::Schema(depth)),
        }
    }

    fn element(self) -> json::Read<Self> {
        match self {
            SchemaPart::Items(depth) => json::Read::Parse(SchemaPart::Schema(depth)),
            SchemaPart::Schema(_) | SchemaPart::Properties(_) => json::Read::Raw,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_as_kubernetes_orders_them() {
        let mut names = vec![
            "v2", "v1", "v1beta2", "v1beta1", "v2alpha1", "v1alpha1", "foo", "bar", "v10",
        ];
        names.sort_by(|a, b| kube_version_order(a, b));
        assert_eq!(
            names,
            [
                "foo", "bar", "v1alpha1", "v2alpha1", "v1beta1", "v1beta2", "v1", "v2", "v10"
            ]
        );
        // apimachinery's regular expression accepts leading zeros and a zero minor.
        assert_eq!(kube_version("v01"), Some((2, 1, 0)));
        assert_eq!(kube_version("v1beta0"), Some((1, 1, 0)));
        assert_eq!(kube_version("v0alpha1"), Some((0, 0, 1)));
        assert_eq!(kube_version("v0beta1"), Some((1, 0, 1)));
        assert_eq!(kube_version_order("v01", "v1"), std::cmp::Ordering::Equal);
        let mut names = vec!["v1", "v0beta1", "v0alpha1", "v0alpha2", "v1alpha1", "v1beta0", "zeta"];
        names.sort_by(|a, b| kube_version_order(a, b));
        assert_eq!(
            names,
            ["zeta", "v0alpha1", "v0alpha2", "v1alpha1", "v0beta1", "v1beta0", "v1"]
        );
        // Not Kubernetes versions: Go's \d is ASCII, Atoi fails past i64, no other suffix.
        for name in [
            "v",
            "1",
            "V1",
            "v1gamma1",
            "v1alpha",
            "v1beta1a",
            "v١",
            "v99999999999999999999",
            "v1 ",
        ] {
            assert_eq!(kube_version(name), None, "{name}");
        }
        assert_eq!(kube_version("v9223372036854775807"), Some((2, i64::MAX, 0)));
    }

    #[test]
    fn the_rules_split_from_unhandled_are_rules_of_their_own() {
        // RULES lists them, in the same order, between crdify's rules and `description`.
        let start = RULES.iter().position(|rule| *rule == "oneOf").expect("oneOf is a rule") + 1;
        let end = RULES
            .iter()
            .position(|rule| *rule == "description")
            .expect("description is a rule");
        assert_eq!(RULES[start..end], SPLIT_FROM_UNHANDLED);
        // Each is the rule of some keyword, and a keyword's rule is one of them or unhandled.
        let keywords = [
            "x-kubernetes-list-type",
            "x-kubernetes-list-map-keys",
            "x-kubernetes-map-type",
            "x-kubernetes-validations",
            "format",
            "x-kubernetes-preserve-unknown-fields",
            "x-kubernetes-embedded-resource",
            "x-kubernetes-int-or-string",
            "anyOf",
            "uniqueItems",
        ];
        let rules: BTreeSet<&str> = keywords.iter().map(|key| keyword_rule(key)).collect();
        let expected: BTreeSet<&str> = SPLIT_FROM_UNHANDLED.into_iter().chain(["unhandled"]).collect();
        assert_eq!(rules, expected);
    }

    #[test]
    fn junctors_about_new_fields_only_are_the_same_for_stored_objects() {
        let new = ["phone".to_string()];
        let value = |text: &str| serde_json::from_str::<Value>(text).unwrap();
        let same = |a: &str, b: &str| for_stored(&value(a), &new) == for_stored(&value(b), &new);
        // An entry requiring the new field is false for stored objects, in anyOf and oneOf.
        assert!(same(
            r#"{"oneOf": [{"not": {"anyOf": [{"required": ["a"]}]}}, {"required": ["a"]}]}"#,
            r#"{"oneOf": [{"not": {"anyOf": [{"required": ["a"]}, {"required": ["phone"]}]}}, {"required": ["a"]}, {"required": ["phone"], "description": "x"}]}"#
        ));
        // Not in allOf (a false entry makes it false), nor with another keyword beside.
        assert!(!same(r#"{"allOf": []}"#, r#"{"allOf": [{"required": ["phone"]}]}"#));
        assert!(!same(
            r#"{"anyOf": [{"required": ["a"]}]}"#,
            r#"{"anyOf": [{"required": ["a"]}, {"required": ["phone"], "minProperties": 1}]}"#
        ));
        // Nor a new list whose only entry requires the new field: nothing stored validates.
        assert!(!same(r#"{}"#, r#"{"anyOf": [{"required": ["phone"]}]}"#));
        // Nor under properties: their required names are the fields of another object.
        assert!(!same(
            r#"{"anyOf": [{"properties": {"x": {"anyOf": [{"required": ["a"]}]}}}]}"#,
            r#"{"anyOf": [{"properties": {"x": {"anyOf": [{"required": ["a"]}, {"required": ["phone"]}]}}}]}"#
        ));
    }

    #[test]
    fn patterns_with_the_same_classes_are_the_same() {
        for (a, b) in [
            ("^[a-z0-9.]+$", "^[.0-9a-z]+$"),
            ("^[a-zA-Z]$", "^[A-Za-zA-Z]$"),
            ("[-_a]", "[a_-]"),
            ("^[^a-z]\\.x$", "^[^a-za-z]\\.x$"),
            ("[\\w.]", "[.\\w]"),
        ] {
            assert!(same_pattern(a, b), "{a} {b}");
        }
        for (a, b) in [
            ("^[a-z]+$", "^[a-z]*$"),
            ("[a-z]", "[^a-z]"),
            ("[a-c]", "[a-cd]"),
            ("[a-z]", "[z-a]"),
            ("[[:alpha:]]", "[[:alpha:]]x"),
            ("[]a]", "[a]]"),
            ("[a", "[a"),
            ("a-z", "z-a"),
            ("(a|b)", "(b|a)"),
            ("\\", "\\"),
        ] {
            assert!(!same_pattern(a, b), "{a} {b}");
        }
    }

    #[test]
    fn keywords_compare_as_go_does() {
        let same = |key: &str, a: &str, b: &str| {
            same_keyword(
                key,
                &serde_json::from_str(a).unwrap(),
                &serde_json::from_str(b).unwrap(),
            )
        };
        assert!(same("format", "null", "\"\""));
        assert!(same("x-kubernetes-list-map-keys", "null", "[]"));
        assert!(!same("x-kubernetes-preserve-unknown-fields", "null", "false"));
        assert!(!same("maximum", "null", "0"));
        assert!(same("maximum", "1", "1.0"));
        assert!(same(
            "allOf",
            r#"[{"required": [], "type": "object"}]"#,
            r#"[{"type": "object"}]"#
        ));
        assert!(!same("allOf", r#"[{"maximum": 0}]"#, r#"[{}]"#));
        assert!(!same("anyOf", r#"[{"description": "a"}]"#, r#"[{"description": "b"}]"#));
    }

    #[test]
    fn repeated_keys_keep_the_last() {
        let node =
            parse(r#"{"type": "string", "type": "integer", "properties": {"a": {}, "a": {"type": "x"}}}"#).unwrap();
        let kept: Vec<_> = keywords(&node).map(|(key, value)| (key, value.get())).collect();
        assert_eq!(kept, [("type", "\"integer\"")]);
        assert_eq!(properties(&node).len(), 1);
        let kept: Vec<_> = keywords(&properties(&node)[0].1)
            .map(|(_, value)| value.get())
            .collect();
        assert_eq!(kept, ["\"x\""]);
    }

    #[test]
    fn cel_rules_collapse_whitespace_only_outside_string_literals() {
        // Layout outside literals is the same rule: whitespace runs, line breaks, comments.
        for (a, b) in [
            ("self.size() < 10", "self.size()  <\n\t10"),
            ("  self.a  ", "self.a"),
            ("self.a // why\n&& self.b", "self.a && self.b"),
            ("self.matches('^a b$')", "self.matches('^a b$')  "),
            ("self == 'x'", "self  ==\r\n'x'"),
            (
                r#"self.startsWith(r'\') && true"#,
                r#"self.startsWith(r'\')   &&   true"#,
            ),
            ("x == '''a\n b'''  || y", "x == '''a\n b''' || y"),
            ("self.f()\u{0C}== 1", "self.f() == 1"),
        ] {
            assert_eq!(cel_text(a), cel_text(b), "{a:?} {b:?}");
        }
        // Inside a literal every character counts, whatever its quotes, prefix or escapes.
        for (a, b) in [
            ("self.matches('^a b$')", "self.matches('^a  b$')"),
            (r#"self.matches("^a b$")"#, r#"self.matches("^a  b$")"#),
            ("self == '''a\n b'''", "self == '''a\n  b'''"),
            (r#"self == """a b""""#, r#"self == """a  b""""#),
            (r#"self == r'\d b'"#, r#"self == r'\d  b'"#),
            (r#"self == R"a b""#, r#"self == R"a  b""#),
            (r#"self == b'a b'"#, r#"self == b'a  b'"#),
            (r#"self == bR'a b'"#, r#"self == bR'a  b'"#),
            // An escaped quote does not end the literal; in a raw one a backslash is itself.
            (r#"self == 'it\'s a b'"#, r#"self == 'it\'s a  b'"#),
            (r#"self == r'\' + ' a'"#, r#"self == r'\' + '  a'"#),
            // A comment marker inside a literal is text.
            ("self == 'a // b'", "self == 'a //  b'"),
            // Whitespace between two words separates them.
            ("a in b", "ain b"),
            // A literal left open runs to the end.
            ("self == 'a b", "self == 'a  b"),
        ] {
            assert_ne!(cel_text(a), cel_text(b), "{a:?} {b:?}");
        }
        assert_eq!(
            cel_text(" self.matches('^a  b$') //x\n&&\n  true "),
            "self.matches('^a  b$') && true"
        );
        // A word ending in r or b before a quote is a word: the literal after it is not raw.
        assert_eq!(cel_text(r#"xr'\'  b'"#), r#"xr'\'  b'"#);
        assert_eq!(cel_text("rb'a  b'"), "rb'a  b'");
        assert_eq!(cel_text("'é  ü'  +  'ß'"), "'é  ü' + 'ß'");
        assert_eq!(cel_text(""), "");
        assert_eq!(cel_text("a\\"), "a\\");
    }

    #[test]
    fn status_is_the_root_status_and_what_it_holds() {
        for at in [
            ".properties.status",
            ".properties.status.properties.ready",
            ".properties.status.properties.x.items",
        ] {
            assert!(in_status(at), "{at}");
        }
        for at in [
            "",
            ".properties.statuses",
            ".properties.spec.properties.status",
            ".properties.spec",
        ] {
            assert!(!in_status(at), "{at}");
        }
    }

    #[test]
    fn deep_schemas_are_read_without_recursing_past_the_limit() {
        let mut text = String::from("{\"type\": \"string\"}");
        for _ in 0..100 {
            text = format!("{{\"type\": \"object\", \"properties\": {{\"a\": {text}}}}}");
        }
        // 200 levels of JSON, past serde_json's 128: the walk stops at MAX_DEPTH and keeps the
        // rest as unread text, which serde_json steps over without recursing.
        let read = parse(&text).expect("a deep schema reads");
        let mut node = &read;
        let mut depth = 0;
        while let Some((_, child)) = properties(node).first() {
            node = child;
            depth += 1;
        }
        assert_eq!(depth, MAX_DEPTH);
        assert!(keywords(node).any(|(key, _)| key == "properties"));
    }
}
