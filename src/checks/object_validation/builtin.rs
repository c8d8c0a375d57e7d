//! The built-in kinds' schemas: Kubernetes' published OpenAPI v3 documents of every minor release
//! from 1.24 that kubectl-validate vendors, as one compact table (`builtin_schemas.tsv`, written by
//! `tools/derive-builtin-schemas.py`, `make builtin-schemas`; its header names the source commit
//! and what the script changes). Only the keywords validation reads are kept, each definition
//! once for each run of minors that have it.
//!
//! The table is a text of sorted rows, `KEY\tFROM\tTO\tVALUE`, embedded whole with an index of
//! where each row starts (`build/builtin_schemas.rs`); a lookup finds its rows by a binary search
//! over that index and reads (with [`crate::json::read`]) only the
//! definitions the kind reaches, never the others: a Deployment reads its 120 definitions, not
//! the table's ~1,000 rows. object-validation reads fewer still: the kind's root alone
//! ([`root`]), then each definition ([`definition`]) when its validation first reaches a `$ref`
//! to it. A definition's row holds it for a run of minors, merged: a member
//! that differs between them is `{"@minors": [[FIRST, LAST, VALUE], ...]}`, of which the lookup
//! keeps the VALUE of its minor (or drops the member). Written by hand because the merge is the
//! table's own, which no crate reads.

use crate::json::{self, Everything, Node};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::RangeInclusive;

/// The table: `#` header lines, a blank line, then the rows sorted by key bytes, then `FROM`.
static TABLE: &str = include_str!("builtin_schemas.tsv");

include!(concat!(env!("OUT_DIR"), "/builtin_schemas.rs"));

/// How deep a definition of the table may nest (the deepest, JSONSchemaProps', is 5 levels).
const MAX_DEPTH: usize = 64;

/// The prefix of a `$ref` to a definition.
pub const REF_PREFIX: &str = "#/components/schemas/";

/// The schema of one built-in kind at one Kubernetes minor, with every definition it reaches.
///
/// Each schema is a [`Node`] read whole (every member, as serde_json's `Value` would hold it)
/// from the table, borrowing from it (`'static`), holding only these keywords of the published
/// document (the others are dropped): `type`, `format`, `enum`, `required`, `nullable`,
/// `default`, `properties`, `items`, `additionalProperties`, `$ref`, `allOf`, `anyOf`, `oneOf`,
/// `not`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`,
/// `minLength`, `maxLength`, `pattern`, `minItems`, `maxItems`, `uniqueItems`,
/// `minProperties`, `maxProperties` and the `x-kubernetes-` keywords `int-or-string`,
/// `preserve-unknown-fields`, `embedded-resource`, `list-type`, `list-map-keys`, `map-type`
/// and `validations` (of which the documents up to 1.35 use `type`, `format`, `required`,
/// `default`, `properties`, `items`, `additionalProperties`, `$ref`, `allOf`, `oneOf`,
/// `list-type`, `list-map-keys` and `map-type`; `enum`, `nullable`, `anyOf`, `maxLength` and
/// `int-or-string` come from kubectl-validate's corrections, see the table's header and the
/// script; no built-in schema has `x-kubernetes-validations`).
///
/// References are as the documents write them, in two forms, both to
/// `#/components/schemas/<name>` ([`REF_PREFIX`]), which [`BuiltinSchema::resolve`] takes:
/// - `{"allOf": [{"$ref": "#/components/schemas/<name>"}], "default": ...}` where the member
///   has a default (or, in the older documents, any keyword) beside the reference;
/// - `{"$ref": "#/components/schemas/<name>"}` alone.
///
/// References may be cyclic (JSONSchemaProps references itself), so a compiler that follows them
/// must stop at a definition it is already compiling.
#[derive(Debug, Clone)]
pub struct BuiltinSchema {
    /// The definition name of the kind's root, e.g. `io.k8s.api.apps.v1.Deployment`.
    name: &'static str,
    /// The minor of the documents the schema comes from.
    minor: u32,
    /// Every definition the root reaches, the root included, by name.
    components: BTreeMap<&'static str, Node<'static>>,
}

impl BuiltinSchema {
    /// The definition name of the kind's root schema (`io.k8s.api.apps.v1.Deployment`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The kind's root schema: an object schema whose `properties` hold `apiVersion`, `kind`,
    /// `metadata` (a reference to ObjectMeta) and the kind's own members (`spec`, `status`, ...).
    pub fn root(&self) -> &Node<'static> {
        &self.components[self.name]
    }

    /// The minor of the documents the schema comes from: the minor asked for, or the nearest one
    /// the table holds when it is older or newer than every document ([`document_minors`]).
    pub fn minor(&self) -> u32 {
        self.minor
    }

    /// The schema a reference names: `#/components/schemas/<name>` as the documents write it, or
    /// the bare `<name>`; `None` for any other reference (the table has no dangling one).
    pub fn resolve(&self, reference: &str) -> Option<&Node<'static>> {
        self.components
            .get(reference.strip_prefix(REF_PREFIX).unwrap_or(reference))
    }

    /// Every definition the root reaches (the root included), by name (without
    /// [`REF_PREFIX`]), sorted.
    pub fn components(&self) -> &BTreeMap<&'static str, Node<'static>> {
        &self.components
    }
}

/// The schema of the built-in kind `kind` of `api_version` (`v1`, `apps/v1`) at Kubernetes
/// `1.<minor>`, or `None` when that minor's documents have no such kind (a custom resource, a
/// kind removed before or added after it, a list). A minor older or newer than every document
/// the table holds ([`document_minors`]) reads the oldest or the newest. Reads only the
/// definitions the kind reaches.
pub fn schema(api_version: &str, kind: &str, minor: u32) -> Option<BuiltinSchema> {
    let minor = clamp(minor);
    let (_, root) = row(&format!("{api_version}/{kind}"), minor)?;
    let (name, text) = row(root, minor)?;
    // Each definition's row is searched once, when it is first referenced.
    let mut queued = BTreeSet::from([name]);
    let mut todo = vec![(name, text)];
    let mut components = BTreeMap::new();
    while let Some((wanted, text)) = todo.pop() {
        let node = read_definition(text, minor)?;
        let mut missing = false;
        references(&node, &mut |reference| {
            let target = reference.strip_prefix(REF_PREFIX).unwrap_or(reference);
            if !queued.contains(target) {
                match row(target, minor) {
                    Some((key, text)) => {
                        queued.insert(key);
                        todo.push((key, text));
                    }
                    None => missing = true,
                }
            }
        });
        if missing {
            return None;
        }
        components.insert(wanted, node);
    }
    Some(BuiltinSchema {
        name,
        minor,
        components,
    })
}

/// The root of the built-in kind `kind` of `api_version` at Kubernetes `1.<minor>` (clamped as
/// [`schema`] does): its definition name and its definition, read alone, its `$ref`s left for
/// [`definition`] to read when something reaches them; `None` as [`schema`].
pub fn root(api_version: &str, kind: &str, minor: u32) -> Option<(&'static str, Node<'static>)> {
    let minor = clamp(minor);
    let (_, root) = row(&format!("{api_version}/{kind}"), minor)?;
    let (name, text) = row(root, minor)?;
    Some((name, read_definition(text, minor)?))
}

/// The definition `name` (without [`REF_PREFIX`]) at Kubernetes `1.<minor>` (clamped as
/// [`schema`] does), read from its row alone; `None` when that minor has no such definition.
pub fn definition(name: &str, minor: u32) -> Option<Node<'static>> {
    let minor = clamp(minor);
    let (_, text) = row(name, minor)?;
    read_definition(text, minor)
}

/// A definition's row read, with the members merged over minors taken at `minor`.
fn read_definition(text: &'static str, minor: u32) -> Option<Node<'static>> {
    let mut node = json::read(text, Everything, MAX_DEPTH).ok()?;
    // Most rows hold one definition for all their minors: nothing to select.
    if text.contains(MINORS_MEMBER) {
        select(&mut node, minor);
    }
    Some(node)
}

/// Whether [`schema`] has the kind, without reading its definitions.
pub fn has_schema(api_version: &str, kind: &str, minor: u32) -> bool {
    row(&format!("{api_version}/{kind}"), clamp(minor)).is_some()
}

/// Every kind the documents of `1.<minor>` have (clamped as [`schema`] does), as (apiVersion,
/// kind), sorted.
pub fn kinds(minor: u32) -> impl Iterator<Item = (&'static str, &'static str)> {
    let minor = clamp(minor);
    rows().filter_map(move |(key, from, to, _)| {
        let (api_version, kind) = key.rsplit_once('/')?;
        (from..=to).contains(&minor).then_some((api_version, kind))
    })
}

/// The oldest and newest minors the table has documents of (its header's `# minors: FIRST LAST`).
pub fn document_minors() -> RangeInclusive<u32> {
    FIRST_MINOR..=LAST_MINOR
}

/// `minor` within [`document_minors`].
fn clamp(minor: u32) -> u32 {
    minor.clamp(FIRST_MINOR, LAST_MINOR)
}

/// The row starting at byte `start` of the table, without its newline.
fn line_at(start: u32) -> &'static str {
    let rest = TABLE.get(start as usize..).unwrap_or_default();
    &rest[..rest.find('\n').unwrap_or(rest.len())]
}

/// The key of the row starting at byte `start`.
fn key_at(start: u32) -> &'static str {
    let rest = TABLE.get(start as usize..).unwrap_or_default();
    &rest[..rest.find('\t').unwrap_or(rest.len())]
}

/// Every row of the table, as (key, from, to, value).
fn rows() -> impl Iterator<Item = (&'static str, u32, u32, &'static str)> {
    ROW_STARTS.iter().filter_map(|&start| parse_row(line_at(start)))
}

/// A row's fields.
fn parse_row(line: &'static str) -> Option<(&'static str, u32, u32, &'static str)> {
    let mut fields = line.splitn(4, '\t');
    let key = fields.next()?;
    let from = fields.next()?.parse().ok()?;
    let to = fields.next()?.parse().ok()?;
    Some((key, from, to, fields.next()?))
}

/// The row of `key` whose range holds `minor`: (the table's copy of the key, value). A binary
/// search over the rows' starts ([`ROW_STARTS`], the build script's index of the table).
fn row(key: &str, minor: u32) -> Option<(&'static str, &'static str)> {
    let first = ROW_STARTS.partition_point(|&start| key_at(start) < key);
    ROW_STARTS[first..]
        .iter()
        .map_while(|&start| parse_row(line_at(start)).filter(|(k, ..)| *k == key))
        .find(|(_, from, to, _)| (*from..=*to).contains(&minor))
        .map(|(key, _, _, value)| (key, value))
}

/// The member of a node merged over minors.
const MINORS: &str = "@minors";

/// [`MINORS`] as a row's JSON text writes it.
const MINORS_MEMBER: &str = "\"@minors\"";

/// Replaces every member of a merged object that differs between minors
/// (`{"@minors": [[FIRST, LAST, VALUE], ...]}`) by its VALUE at `minor`, or drops it when no run
/// holds `minor`; the runs' values are whole, and arrays are never merged.
fn select(node: &mut Node<'static>, minor: u32) {
    let Node::Object(entries) = node else {
        return;
    };
    entries.retain_mut(|(_, value)| {
        let runs = match value {
            Node::Object(members) => match members.as_mut_slice() {
                [(key, Node::Array(runs))] if key == MINORS => runs,
                _ => {
                    select(value, minor);
                    return true;
                }
            },
            _ => return true,
        };
        let chosen = runs.iter_mut().find_map(|run| match run {
            Node::Array(run) => match run.as_mut_slice() {
                [first, last, value] if holds(first, last, minor) => Some(std::mem::replace(value, Node::Null)),
                _ => None,
            },
            _ => None,
        });
        match chosen {
            Some(chosen) => {
                *value = chosen;
                true
            }
            None => false,
        }
    });
}

/// Whether the run from minor `first` to minor `last` holds `minor`.
fn holds(first: &Node<'_>, last: &Node<'_>, minor: u32) -> bool {
    let bound = |node: &Node<'_>| match node.number() {
        Some(json::Number::U64(n)) => n,
        _ => u64::MAX,
    };
    (bound(first)..=bound(last)).contains(&u64::from(minor))
}

/// Calls `found` with every `$ref` of a schema and its subschemas (`properties`, `items`,
/// `additionalProperties`, `allOf`, `anyOf`, `oneOf`, `not`), never inside a `default` or an
/// `enum`.
fn references<'n>(schema: &'n Node<'static>, found: &mut impl FnMut(&'n str)) {
    let Some(entries) = schema.as_object() else {
        return;
    };
    for (key, value) in entries {
        match key.as_ref() {
            "$ref" => {
                if let Some(reference) = value.as_str() {
                    found(reference);
                }
            }
            "properties" => {
                for (_, property) in value.as_object().unwrap_or_default() {
                    references(property, found);
                }
            }
            "items" | "additionalProperties" | "not" => references(value, found),
            "allOf" | "anyOf" | "oneOf" => {
                if let Node::Array(schemas) = value {
                    for schema in schemas {
                        references(schema, found);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
