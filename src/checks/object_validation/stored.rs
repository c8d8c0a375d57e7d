//! Stored objects against a CRD update: the objects a CRD already stores, judged against the
//! schemas of its new version, as the API server will judge each of them at its next write.
//!
//! The API server keeps serving a stored object that its CRD's new schema refuses (it validates
//! only what is written). From Kubernetes 1.30 (validation ratcheting, on by default) a write
//! that leaves the failing field as it was passes too, so such an object breaks later: at the
//! first write that changes the field, and at every CREATE of the same manifest (a reinstall, a
//! restore, another cluster). Before 1.30 every update of the object is refused. Before the
//! update, this names them: `2 of 340 stored Certificates no longer validate: shop/api
//! (spec.duration: ...)`.
//!
//! Each object is validated against the new schema of the version its `apiVersion` names (as a
//! lookup answers it: the API server converts every stored object to the version asked for),
//! as a CREATE of it would be: its unknown fields are not reported (the API server prunes them
//! on read), its `status` is left out when that version has the status subresource. A version
//! the new CRD no longer serves is crd-safe-upgrade's finding, not this one's; an object of
//! another group or kind is not the CRD's and is skipped. Each version's schema is compiled
//! once, whatever the number of objects.

use super::field_error::FieldError;
use super::schema::{Schema, SchemaError};
use super::validate::{Options, validate};
use crate::finding::{Finding, RuleDoc};
use crate::json::Node;
use crate::settings::RejectOrWarn;
use crate::text::Parts;
use crate::text::order::natural_cmp;

/// The rule of the stored objects the new schema of a CRD refuses.
pub const RULE: RuleDoc = RuleDoc {
    id: "storedObjectInvalid",
    summary: "a CRD update whose new schema refuses objects the cluster stores (of a kind the settings' storedObjects name)",
    anchor: "stored-objects",
};

/// The rule of a CRD update whose stored objects could not be listed, so were not judged.
pub const UNLISTED: RuleDoc = RuleDoc {
    id: "storedObjectsUnlisted",
    summary: "the stored objects of a CRD being updated could not be listed (not granted, or the lookup failed), so they were not judged",
    anchor: "stored-objects",
};

/// The first Kubernetes minor whose API server ratchets CRD validation by default (KEP-4008:
/// beta in 1.30, GA in 1.33): an update that leaves an invalid value as it was passes.
pub const RATCHETING_MINOR: u32 = 30;

/// How many refused objects a finding's text names; the rest are counted.
pub const NAMED: usize = 3;

/// A stored object the new schema refuses, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    /// `namespace/name`, or `name` for a cluster-scoped object.
    pub label: String,
    /// The version of the schema it was judged against.
    pub version: String,
    /// The API server's errors, in the order it finds them.
    pub errors: Vec<FieldError>,
}

/// What the new schemas of a CRD make of the objects it stores.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    /// The CRD's kind (`Certificate`).
    pub kind: String,
    /// How many stored objects were judged.
    pub checked: usize,
    /// Those the new schema refuses, by label.
    pub refused: Vec<Refused>,
    /// Where the schema of the first refused object's version is in the CRD
    /// (`spec.versions[<i>].schema.openAPIV3Schema`), for a scan to point at.
    pub path: String,
}

/// One served version of the new CRD: its name, where its schema is in the CRD, whether it has
/// the status subresource, and its schema, compiled when an object first needs it.
struct Version<'n, 'j> {
    name: &'n str,
    index: usize,
    schema: Option<&'n Node<'j>>,
    status: bool,
    compiled: Option<Result<Schema, SchemaError>>,
}

/// The error of a version whose schema cannot be compiled: the path of the schema in the CRD
/// and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// `spec.versions[<i>].schema.openAPIV3Schema`.
    pub path: String,
    /// The compiler's error.
    pub error: String,
}

/// Judges `objects` (a lookup's items, or a cluster snapshot's objects) against the new `crd`'s
/// schemas for Kubernetes 1.`minor`. A version's schema that cannot be compiled is an error:
/// nothing can be said of the objects it serves.
pub fn judge<'a, 'j: 'a>(
    crd: &Node<'_>,
    objects: impl IntoIterator<Item = &'a Node<'j>>,
    minor: u32,
) -> Result<Stored, Unreadable> {
    let text = |node: &Node<'_>, keys: &[&str]| node.at(keys).and_then(Node::as_str).unwrap_or_default().to_string();
    let group = text(crd, &["spec", "group"]);
    let kind = text(crd, &["spec", "names", "kind"]);
    let scope_cluster = text(crd, &["spec", "scope"]) == "Cluster";
    let mut versions: Vec<Version<'_, '_>> = match crd.at(&["spec", "versions"]) {
        Some(Node::Array(items)) => items
            .iter()
            .enumerate()
            .filter_map(|(index, v)| {
                Some(Version {
                    name: v.get("name")?.as_str()?,
                    index,
                    schema: v.at(&["schema", "openAPIV3Schema"]),
                    status: v.at(&["subresources", "status"]).is_some_and(|s| !s.is_null()),
                    compiled: None,
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    let mut stored = Stored {
        kind: kind.clone(),
        checked: 0,
        refused: Vec::new(),
        path: String::new(),
    };
    for object in objects {
        let api_version = text(object, &["apiVersion"]);
        let (object_group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version.as_str()));
        if object_group != group || text(object, &["kind"]) != kind {
            continue;
        }
        let Some(served) = versions.iter_mut().find(|v| v.name == version) else {
            continue;
        };
        // A version without a schema (only under `preserveUnknownFields`, gone in v1) accepts
        // anything.
        let Some(source) = served.schema else {
            stored.checked += 1;
            continue;
        };
        let compiled = served
            .compiled
            .get_or_insert_with(|| Schema::compile(source, None, minor));
        let schema = match compiled {
            Ok(schema) => schema,
            Err(e) => {
                return Err(Unreadable {
                    path: format!("spec.versions[{}].schema.openAPIV3Schema", served.index),
                    error: e.to_string(),
                });
            }
        };
        stored.checked += 1;
        let options = Options {
            skip_status: served.status,
            unknown_fields: false,
            open_empty_objects: false,
            as_written: false,
            embedded_judged: false,
        };
        let errors = validate(schema, object, None, &options);
        if !errors.is_empty() {
            let name = text(object, &["metadata", "name"]);
            let namespace = text(object, &["metadata", "namespace"]);
            let label = if scope_cluster || namespace.is_empty() {
                name
            } else {
                format!("{namespace}/{name}")
            };
            if stored.refused.is_empty() {
                stored.path = format!("spec.versions[{}].schema.openAPIV3Schema", served.index);
            }
            stored.refused.push(Refused {
                label,
                version: version.to_string(),
                errors,
            });
        }
    }
    stored
        .refused
        .sort_by(|a, b| natural_cmp(&a.label, &b.label).then_with(|| a.version.cmp(&b.version)));
    Ok(stored)
}

/// English plural of a kind, as the finding counts objects (`Certificates`, `Policies`).
pub fn plural(kind: &str) -> String {
    let consonant_y = kind.ends_with('y') && !kind.chars().rev().nth(1).is_some_and(|c| "aeiouAEIOU".contains(c));
    if consonant_y {
        format!("{}ies", &kind[..kind.len() - 1])
    } else if ["s", "x", "z", "ch", "sh"].iter().any(|end| kind.ends_with(end)) {
        format!("{kind}es")
    } else {
        format!("{kind}s")
    }
}

/// The finding of `stored`, when the new schema refuses any object: `action` is what the
/// settings make of it (a warning by default), `minor` the cluster's Kubernetes minor (whether
/// the API server ratchets validation, which decides what the objects' next write does).
pub fn finding(stored: &Stored, action: RejectOrWarn, minor: u32) -> Option<Finding> {
    if stored.refused.is_empty() {
        return None;
    }
    let noun = if stored.checked == 1 {
        stored.kind.clone()
    } else {
        plural(&stored.kind)
    };
    let head = format!(
        "{} of {} stored {noun} no longer validate{}",
        stored.refused.len(),
        stored.checked,
        if stored.refused.len() == 1 { "s" } else { "" }
    );
    let mut brief = Parts::default().fixed(format!("{head}: "));
    let mut text = Parts::default().fixed(format!("{head} against the new schema: "));
    // The objects named, those whose first error reads the same said together: a schema change
    // usually refuses many objects for the same value.
    let mut groups: Vec<(String, Vec<&str>, usize)> = Vec::new();
    for refused in stored.refused.iter().take(NAMED) {
        let first = refused.errors.first().map(ToString::to_string).unwrap_or_default();
        let more = refused.errors.len().saturating_sub(1);
        match groups.iter_mut().find(|(error, _, _)| *error == first) {
            Some((_, labels, count)) => {
                labels.push(&refused.label);
                *count += more;
            }
            None => groups.push((first, vec![&refused.label], more)),
        }
    }
    for (i, (first, labels, more)) in groups.into_iter().enumerate() {
        let more = match more {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        for parts in [&mut brief, &mut text] {
            let mut out = std::mem::take(parts);
            if i > 0 {
                out = out.fixed(", ");
            }
            for (j, label) in labels.iter().enumerate() {
                if j > 0 {
                    out = out.fixed(", ");
                }
                out = out.elidable(label.to_string());
            }
            *parts = out.fixed(" (").elidable(first.clone()).fixed(format!("{more})"));
        }
    }
    if stored.refused.len() > NAMED {
        let more = format!(" and {} more", stored.refused.len() - NAMED);
        brief = brief.fixed(more.clone());
        text = text.fixed(more);
    }
    text = text.fixed(if minor >= RATCHETING_MINOR {
        ". The API server keeps serving them and, ratcheting validation, still accepts an update that \
         leaves those values as they are, but refuses one that changes them to another invalid value and \
         every CREATE of the same manifest (a reinstall, a restore, another cluster): fix the objects, \
         or relax the schema, before the update."
    } else {
        ". The API server keeps serving them but, without validation ratcheting (Kubernetes 1.30), \
         refuses every update of them (a controller's, an apply, a sync) until they are fixed: fix the \
         objects, or relax the schema, before the update."
    });
    Some(Finding::new(RULE.id, action, stored.path.clone(), text, brief))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{self, Everything};

    /// A Widget CRD whose v1 has the status subresource, `spec.replicas` at most 5 and
    /// `spec.duration` in hours, and whose v2 is served too.
    const CRD: &str = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
      "metadata":{"name":"widgets.example.com"},
      "spec":{"group":"example.com","scope":"Namespaced","names":{"kind":"Widget","plural":"widgets"},
      "versions":[
        {"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
         "schema":{"openAPIV3Schema":{"type":"object","properties":{
           "spec":{"type":"object","properties":{
             "replicas":{"type":"integer","maximum":5},
             "duration":{"type":"string","pattern":"^[0-9]+h$"}}},
           "status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}}},
        {"name":"v2","served":true,"storage":false,
         "schema":{"openAPIV3Schema":{"type":"object","properties":{
           "spec":{"type":"object","required":["size"],"properties":{"size":{"type":"string"}}}}}}}]}}"#;

    fn widget(version: &str, namespace: &str, name: &str, spec: &str) -> String {
        format!(
            r#"{{"apiVersion":"example.com/{version}","kind":"Widget","metadata":{{"name":"{name}","namespace":"{namespace}"}},"spec":{spec}}}"#
        )
    }

    fn judged(crd: &str, objects: &[String]) -> Result<Stored, Unreadable> {
        let crd = json::read(crd, Everything, 128).unwrap();
        let objects: Vec<Node<'_>> = objects
            .iter()
            .map(|o| json::read(o, Everything, 128).unwrap())
            .collect();
        judge(&crd, &objects, 35)
    }

    #[test]
    fn names_the_stored_objects_the_new_schema_refuses() {
        let objects = [
            widget("v1", "shop", "api", r#"{"replicas":7}"#),
            widget("v1", "shop", "web", r#"{"replicas":2,"duration":"24h"}"#),
            widget("v1", "ops", "db", r#"{"duration":"1d","replicas":9}"#),
            // The status subresource's status is not the object's to write.
            widget("v1", "ops", "cache", r#"{}"#).replace(r#""spec":{}"#, r#""spec":{},"status":{"ready":"yes"}"#),
            // Served at v2, whose schema requires `size`.
            widget("v2", "ops", "queue", r#"{}"#),
            // Not the CRD's: another kind, a version it no longer serves.
            widget("v1", "ops", "x", r#"{"replicas":7}"#).replace("\"Widget\"", "\"Gadget\""),
            widget("v3", "ops", "old", r#"{"replicas":7}"#),
        ];
        let stored = judged(CRD, &objects).unwrap();
        assert_eq!(stored.kind, "Widget");
        assert_eq!(stored.checked, 5);
        let refused: Vec<(String, Vec<String>)> = stored
            .refused
            .iter()
            .map(|r| (r.label.clone(), r.errors.iter().map(ToString::to_string).collect()))
            .collect();
        assert_eq!(
            refused,
            [
                (
                    "ops/db".to_string(),
                    vec![
                        r#"spec.duration: Invalid value: "1d": spec.duration in body should match '^[0-9]+h$'"#
                            .to_string(),
                        "spec.replicas: Invalid value: 9: spec.replicas in body should be less than or equal to 5"
                            .to_string(),
                    ]
                ),
                ("ops/queue".to_string(), vec!["spec.size: Required value".to_string()]),
                (
                    "shop/api".to_string(),
                    vec![
                        "spec.replicas: Invalid value: 7: spec.replicas in body should be less than or equal to 5"
                            .to_string()
                    ]
                ),
            ]
        );

        let finding = finding(&stored, RejectOrWarn::Warn, 35).unwrap();
        assert_eq!(finding.path, "spec.versions[0].schema.openAPIV3Schema");
        assert_eq!(finding.rule, RULE.id);
        assert_eq!(finding.action, RejectOrWarn::Warn);
        assert_eq!(
            finding.brief.whole(),
            r#"3 of 5 stored Widgets no longer validate: ops/db (spec.duration: Invalid value: "1d": spec.duration in body should match '^[0-9]+h$' and 1 more), ops/queue (spec.size: Required value), shop/api (spec.replicas: Invalid value: 7: spec.replicas in body should be less than or equal to 5)"#
        );
        assert!(
            finding
                .text
                .whole()
                .starts_with("3 of 5 stored Widgets no longer validate against the new schema: ops/db (")
        );
        assert!(finding.text.whole().ends_with("before the update."));
        assert!(
            finding
                .text
                .whole()
                .contains("still accepts an update that leaves those values as they are")
        );
        // Within a warning's 256 characters, the labels and errors shortened in their middle.
        assert!(finding.brief.fit(256).chars().count() <= 256);
    }

    #[test]
    fn nothing_when_every_stored_object_validates() {
        let objects = [widget("v1", "shop", "web", r#"{"replicas":2}"#)];
        let stored = judged(CRD, &objects).unwrap();
        assert_eq!((stored.checked, stored.refused.len()), (1, 0));
        assert!(finding(&stored, RejectOrWarn::Reject, 35).is_none());
    }

    #[test]
    fn counts_what_it_does_not_name() {
        let objects: Vec<String> = (0..5)
            .map(|i| widget("v1", "shop", &format!("w{i}"), r#"{"replicas":6}"#))
            .collect();
        let stored = judged(CRD, &objects).unwrap();
        let finding = finding(&stored, RejectOrWarn::Reject, 29).unwrap();
        assert!(finding.text.whole().contains("refuses every update of them"));
        let brief = finding.brief.whole();
        assert!(
            brief.starts_with("5 of 5 stored Widgets no longer validate: shop/w0, shop/w1, shop/w2 (spec.replicas: "),
            "{brief}"
        );
        assert!(brief.ends_with(" and 2 more"), "{brief}");
        assert_eq!(brief.matches("shop/w").count(), NAMED);
    }

    #[test]
    fn a_schema_that_does_not_compile_is_an_error_not_an_accept() {
        let crd = CRD.replace(r#""maximum":5"#, r#""maximum":"five""#);
        let objects = [widget("v1", "shop", "api", r#"{"replicas":7}"#)];
        let error = judged(&crd, &objects).unwrap_err();
        assert_eq!(error.path, "spec.versions[0].schema.openAPIV3Schema");
        assert!(!error.error.is_empty());
    }

    #[test]
    fn plurals() {
        for (kind, plural_) in [
            ("Certificate", "Certificates"),
            ("Policy", "Policies"),
            ("Gateway", "Gateways"),
            ("Ingress", "Ingresses"),
            ("Box", "Boxes"),
        ] {
            assert_eq!(plural(kind), plural_);
        }
    }
}
