//! The real CRDs of `bench/real-crds` (API servers serve them all) hold 7,011 defaults and 6,053
//! patterns: object-validation's own validation of a CRD finds no error in any of them, so it
//! refuses none the API server accepts.

use std::io::Read;
use syncguard::checks::object_validation::schema::{Additional, Schema};
use syncguard::checks::object_validation::{NEWEST_MINOR, crd};
use syncguard::json::{self, Node};

/// The 500 real CRDs (`bench/real-crds`, a JSON array, gzipped).
const REAL_CRDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../real-crds/crds.json.gz");

/// The text of [`REAL_CRDS`].
fn real_crds_text() -> String {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(REAL_CRDS).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text
}

#[test]
fn real_crds_defaults_and_patterns_are_not_refused() {
    let text = real_crds_text();
    let all = json::read(&text, json::Everything, usize::MAX).unwrap();
    let Node::Array(crds) = &all else {
        panic!("{REAL_CRDS} is not a JSON array");
    };
    assert_eq!(crds.len(), 500);
    let found: Vec<String> = crds
        .iter()
        .flat_map(|crd| crd::validate(crd, None, NEWEST_MINOR))
        .map(|error| error.to_string())
        .filter(|text| {
            text.contains(".default") || text.contains(".pattern") || text.contains("x-kubernetes-validations")
        })
        .collect();
    assert!(found.is_empty(), "{found:#?}");
}

/// A node of a compiled schema and everything under it, indexes aside: what the eager compile and
/// the compile part by part ([`Schema::compile_parts`], resolved everywhere) must agree on.
fn shape(schema: &Schema, index: usize, out: &mut String) {
    use std::fmt::Write;
    let at = schema.resolve(index);
    let node = schema.node(at);
    let mut own = node.clone();
    own.properties.clear();
    own.items = None;
    own.all_of.clear();
    own.any_of.clear();
    own.one_of.clear();
    own.not = None;
    if let Additional::Schema(_) = own.additional_properties {
        own.additional_properties = Additional::Unset;
    }
    write!(out, "{{{own:?} rules {:?}", schema.rule_path(at)).unwrap();
    for (name, child) in &node.properties {
        write!(out, " {name}:").unwrap();
        shape(schema, *child, out);
    }
    let single = |label: &str, child: Option<usize>, out: &mut String| {
        if let Some(child) = child {
            out.push_str(label);
            shape(schema, child, out);
        }
    };
    single(" items:", node.items, out);
    if let Additional::Schema(child) = node.additional_properties {
        single(" additionalProperties:", Some(child), out);
    }
    for (label, list) in [
        (" allOf:", &node.all_of),
        (" anyOf:", &node.any_of),
        (" oneOf:", &node.one_of),
    ] {
        for child in list {
            single(label, Some(*child), out);
        }
    }
    single(" not:", node.not, out);
    out.push('}');
}

/// Every served version's schema of every real CRD compiled part by part, as object-validation
/// compiles a stored CRD's, and resolved everywhere is the schema compiled whole: the same nodes
/// (each part's stand-in aside) with the same keywords and CEL rules at the same paths, nothing
/// unreadable; before anything is resolved, only the root is compiled.
#[test]
fn real_crds_compile_part_by_part_to_the_whole_schema() {
    let text = real_crds_text();
    let all = json::read(&text, json::Everything, usize::MAX).unwrap();
    let Node::Array(crds) = &all else {
        panic!("{REAL_CRDS} is not a JSON array");
    };
    let (mut compared, mut unreadable_whole) = (0, 0);
    for crd in crds {
        let Some(Node::Array(versions)) = crd.at(&["spec", "versions"]) else {
            continue;
        };
        for version in versions {
            let Some(source) = version.at(&["schema", "openAPIV3Schema"]) else {
                continue;
            };
            let name = format!(
                "{} {}",
                crd.at(&["metadata", "name"]).and_then(Node::as_str).unwrap_or_default(),
                version.get("name").and_then(Node::as_str).unwrap_or_default()
            );
            let whole = Schema::compile(source, None, NEWEST_MINOR);
            let source_text = serde_json::to_string(&json::Canonical(source)).unwrap();
            let parts =
                Schema::compile_parts(&source_text, NEWEST_MINOR, 113).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(parts.definitions_compiled(), 0, "{name}");
            let root = parts.node(parts.root);
            assert!(
                root.properties.iter().all(|(_, i)| parts.node(*i).deferred.is_some()),
                "{name}: a property compiled before it is reached"
            );
            let mut index = 0;
            let mut unreadable = Vec::new();
            while index < parts.len() {
                parts.resolve(index);
                unreadable.extend(parts.node(index).unreadable.as_deref().cloned());
                index += 1;
            }
            // A schema that does not compile whole has that error in a part.
            let whole = match whole {
                Ok(whole) => whole,
                Err(error) => {
                    assert!(unreadable.contains(&error), "{name}: {error} not in {unreadable:?}");
                    unreadable_whole += 1;
                    continue;
                }
            };
            assert!(unreadable.is_empty(), "{name}: {unreadable:?}");
            // Each part is its stand-in and its nodes.
            let stand_ins = (0..parts.len()).filter(|i| parts.node(*i).deferred.is_some()).count();
            assert_eq!(parts.len() - stand_ins, whole.len(), "{name}");
            let (mut a, mut b) = (String::new(), String::new());
            shape(&whole, whole.root, &mut a);
            shape(&parts, parts.root, &mut b);
            assert!(a == b, "{name}: the schema compiled part by part differs");
            compared += 1;
        }
    }
    assert!(compared >= 500, "{compared} versions compared");
    // 19 versions (Kyverno's and wgpolicyk8s' report CRDs, OLM's InstallPlan) have, as this
    // file holds them, a property named `additionalProperties` whose schema is `false`: the
    // compiler refuses it whole (every object unreadable) and part by part (the objects that
    // reach `results` or `bundleLookups`).
    assert_eq!(unreadable_whole, 19, "versions that do not compile");
}
