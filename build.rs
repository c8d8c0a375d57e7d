//! Generates `$OUT_DIR/k8s_tables.rs` from k8s-openapi, so no Kubernetes fact is typed by hand:
//! - `BUILTIN_NAMES` and `BUILTIN_PACKED`: every built-in resource of the newest Kubernetes version k8s-openapi
//!   knows (group, version, kind, plural, and whether it is only a subresource), read from the
//!   crate's `impl Resource` blocks;
//! - `OBJECT_TYPES`: the field graph of `CustomResourceDefinition` (every object type reachable
//!   from it, its JSON fields and their shapes), read from k8s-openapi's JSON schemas.
//!
//! `$OUT_DIR/api_fields.rs` from sync-drift's tables of how the API server writes each field of the
//! built-in kinds back (`src/checks/sync_drift/api_fields.tsv` and `api_kinds.tsv`),
//! and `$OUT_DIR/policy_rules.rs` from the `rules` of every `policies/<name>/metadata.yml` (the
//! all-in-one's is `policies/syncguard/metadata.yml`), so a policy's admission rules are declared
//! once, where Kubewarden reads them; with them `METADATA`, every metadata.yml's text.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=Cargo.lock");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    let source = k8s_openapi_source();
    let (version, resources) = builtin_resources(&source);
    let types = crd_object_types();
    let mut code = String::new();
    writeln!(code, "/// Kubernetes version the built-in tables were generated from.").unwrap();
    writeln!(code, "pub const KUBERNETES_VERSION: &str = {version:?};").unwrap();
    // Packed rather than a table of string slices: every distinct name once in one string,
    // and each resource as six u16 (offsets and lengths), a third of the slices' size in every
    // module and read without parsing.
    let mut strings = String::new();
    let mut offsets: BTreeMap<&str, usize> = BTreeMap::new();
    let mut entries = String::new();
    for r in &resources {
        let mut span = |name: &str| -> (usize, usize) {
            assert!(name.len() < 256, "built-in name too long to pack: {name}");
            if !offsets.contains_key(name) {
                offsets.insert(Box::leak(name.to_string().into_boxed_str()), strings.len());
                strings.push_str(name);
            }
            (offsets[name], name.len())
        };
        let (group, version, kind, plural) = (span(&r.0), span(&r.1), span(&r.2), span(&r.3));
        writeln!(
            entries,
            "    [{}, {}, {}, {}, {}, {}],",
            group.0,
            version.0,
            kind.0,
            plural.0 | (usize::from(r.4) << 15),
            group.1 << 8 | version.1,
            kind.1 << 8 | plural.1
        )
        .unwrap();
    }
    assert!(strings.len() < 1 << 15, "built-in names too long to pack");
    writeln!(code, "/// Every distinct name of the built-in resources, concatenated.").unwrap();
    writeln!(code, "pub static BUILTIN_NAMES: &str = {strings:?};").unwrap();
    writeln!(
        code,
        "/// Every built-in resource, sorted by kind, group and version, packed as offsets into \
         [`BUILTIN_NAMES`]: group, version, kind, plural (bit 15: only a subresource), then the \
         lengths of group and version, and of kind and plural (a byte each)."
    )
    .unwrap();
    writeln!(code, "pub static BUILTIN_PACKED: &[[u16; 6]] = &[\n{entries}];").unwrap();
    writeln!(
        code,
        "/// Object types reachable from CustomResourceDefinition, sorted by name."
    )
    .unwrap();
    writeln!(code, "pub static OBJECT_TYPES: &[ObjectType] = &[").unwrap();
    for (name, fields) in &types {
        match fields {
            None => writeln!(code, "    ObjectType {{ name: {name:?}, fields: None }},").unwrap(),
            Some(fields) => {
                writeln!(code, "    ObjectType {{ name: {name:?}, fields: Some(&[").unwrap();
                for (field, shape) in fields {
                    writeln!(code, "        Field {{ name: {field:?}, shape: {shape} }},").unwrap();
                }
                writeln!(code, "    ]) }},").unwrap();
            }
        }
    }
    writeln!(code, "];").unwrap();
    std::fs::write(out.join("k8s_tables.rs"), code).expect("write k8s_tables.rs");
    well_known_groups(&out);
    api_fields(&out);
    std::fs::write(out.join("policy_rules.rs"), policy_rules()).expect("write policy_rules.rs");
}

include!("src/checks/crd_kind_collision/well_known_key.rs");

/// Generates `$OUT_DIR/well_known_groups.rs` from crd-kind-collision's table of well-known API
/// groups (`well_known_groups.tsv`, a group and its sources a line): the sorted keys
/// ([`well_known_key`]) of every group, 8 bytes a group instead of its text in every module.
fn well_known_groups(out: &Path) {
    const TABLE: &str = "src/checks/crd_kind_collision/well_known_groups.tsv";
    println!("cargo::rerun-if-changed={TABLE}");
    println!("cargo::rerun-if-changed=src/checks/crd_kind_collision/well_known_key.rs");
    let text = std::fs::read_to_string(TABLE).expect("read well_known_groups.tsv");
    let mut keys = BTreeSet::new();
    for line in text
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
    {
        let group = line.split('\t').next().expect("a line starts with its group");
        assert!(
            keys.insert(well_known_key(group)),
            "{group}: listed twice, or a key collision"
        );
    }
    let mut code = String::new();
    writeln!(code, "/// Keys of the well-known API groups, sorted.").unwrap();
    writeln!(code, "static WELL_KNOWN_GROUPS: &[u64] = &[").unwrap();
    for key in &keys {
        writeln!(code, "    {key:#018x},").unwrap();
    }
    writeln!(code, "];").unwrap();
    std::fs::write(out.join("well_known_groups.rs"), code).expect("write well_known_groups.rs");
}

/// The leaves of `api_fields.tsv`, in the order of `generated::Leaf`'s codes.
const API_LEAVES: [&str; 17] = [
    "object",
    "string",
    "bool",
    "int",
    "float",
    "bytes",
    "quantity",
    "time",
    "microtime",
    "duration",
    "intorstring",
    "free",
    "fieldsv1",
    "schema-or-bool",
    "schema-or-array",
    "schema-or-strings",
    "status",
];
/// The forms of `api_fields.tsv`, in the order of `generated::Form`'s codes.
const API_FORMS: [&str; 5] = ["value", "pointer", "list", "map", "map-of-lists"];
// A field packs its leaf in 5 bits and its form in 3.
const _: () = assert!(API_LEAVES.len() <= 1 << 5 && API_FORMS.len() <= 1 << 3);

/// Generates `$OUT_DIR/api_fields.rs` from sync-drift's `api_fields.tsv` and `api_kinds.tsv`
/// (written by `make api-fields`), packed like `BUILTIN_PACKED`: every name once in
/// `API_NAMES` (a name that is part of a longer one is not repeated), and three or four u16 a
/// package, type, field or kind.
fn api_fields(out: &Path) {
    const FIELDS: &str = "src/checks/sync_drift/api_fields.tsv";
    const KINDS: &str = "src/checks/sync_drift/api_kinds.tsv";
    println!("cargo::rerun-if-changed={FIELDS}");
    println!("cargo::rerun-if-changed={KINDS}");
    let rows = |path: &str, columns: &str| -> Vec<Vec<String>> {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {path}: {e}"));
        let mut lines = text.lines().filter(|line| !line.starts_with('#'));
        assert_eq!(lines.next(), Some(columns), "{path}: unexpected columns");
        let width = columns.split('\t').count();
        lines
            .map(|line| {
                let cells: Vec<String> = line.split('\t').map(str::to_string).collect();
                assert_eq!(cells.len(), width, "{path}: {line}");
                cells
            })
            .collect()
    };
    let fields = rows(
        FIELDS,
        "package\tstruct\tfield\tomitempty\tomitzero\tform\tleaf\ttarget\tkeeps_null",
    );
    let kinds = rows(KINDS, "group\tversion\tkind\ttype");
    let split = |qualified: &str| -> (String, String) {
        let (package, name) = qualified
            .rsplit_once('.')
            .unwrap_or_else(|| panic!("{qualified}: not package.Struct"));
        (package.to_string(), name.to_string())
    };
    // Every type: those with rows, and the targets (a struct without members has no rows).
    let mut types: BTreeMap<(String, String), Vec<&Vec<String>>> = BTreeMap::new();
    for row in &fields {
        types.entry((row[0].clone(), row[1].clone())).or_default().push(row);
        if row[7] != "-" {
            types.entry(split(&row[7])).or_default();
        }
    }
    let index: BTreeMap<&(String, String), usize> = types.keys().enumerate().map(|(i, t)| (t, i)).collect();
    let packages: BTreeSet<&str> = types.keys().map(|(package, _)| package.as_str()).collect();
    let packages: Vec<&str> = packages.into_iter().collect();
    assert!(
        types.len() < 1 << 15 && packages.len() < 1 << 8,
        "too many API types to pack"
    );
    // Names, longest first, so that a name inside a longer one is found rather than added.
    let mut names: Vec<&str> = packages.clone();
    for ((_, name), members) in &types {
        names.push(name);
        names.extend(members.iter().map(|row| row[2].as_str()));
    }
    names.extend(kinds.iter().flat_map(|row| [row[0].as_str(), row[1].as_str()]));
    names.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    names.dedup();
    let mut strings = String::new();
    let mut offsets: BTreeMap<&str, usize> = BTreeMap::new();
    for name in names {
        let offset = strings.find(name).unwrap_or_else(|| {
            strings.push_str(name);
            strings.len() - name.len()
        });
        offsets.insert(name, offset);
    }
    assert!(strings.len() < 1 << 16, "API names too long to pack");
    let span = |name: &str, bits: u32| -> (usize, usize) {
        assert!(name.len() < 1 << bits, "API name too long to pack: {name}");
        (offsets[name], name.len())
    };
    let mut code = String::new();
    let sources: Vec<String> = std::fs::read_to_string(FIELDS)
        .expect("read api_fields.tsv")
        .lines()
        .filter_map(|line| line.strip_prefix("# k8s.io/"))
        .map(|line| {
            format!(
                "k8s.io/{}",
                line.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
            )
        })
        .collect();
    writeln!(
        code,
        "/// The Go modules and commits the API field tables were derived from."
    )
    .unwrap();
    writeln!(code, "pub const API_SOURCES: &[&str] = &{sources:?};").unwrap();
    writeln!(
        code,
        "/// Every name of the API field tables, each once (or inside a longer one)."
    )
    .unwrap();
    writeln!(code, "static API_NAMES: &str = {strings:?};").unwrap();
    writeln!(
        code,
        "/// The packages of the API types, sorted: offset and length in [`API_NAMES`]."
    )
    .unwrap();
    writeln!(code, "static API_PACKAGES: &[[u16; 2]] = &[").unwrap();
    for package in &packages {
        let (offset, length) = span(package, 16);
        writeln!(code, "    [{offset}, {length}],").unwrap();
    }
    writeln!(code, "];").unwrap();
    writeln!(
        code,
        "/// The API types sorted by package and name: name offset, package index << 8 | name length, \
         index of the first field in [`API_FIELDS`] (the next type's first ends them; a last entry \
         ends the last type's)."
    )
    .unwrap();
    writeln!(code, "static API_TYPES: &[[u16; 3]] = &[").unwrap();
    let mut packed = String::new();
    let mut count = 0usize;
    for ((package, name), members) in &types {
        let (offset, length) = span(name, 8);
        let package = packages.binary_search(&package.as_str()).expect("listed package");
        writeln!(code, "    [{offset}, {}, {count}],", package << 8 | length).unwrap();
        let mut members = members.clone();
        members.sort_by(|a, b| a[2].cmp(&b[2]));
        for pair in members.windows(2) {
            assert_ne!(pair[0][2], pair[1][2], "{package}.{name}: field listed twice");
        }
        for row in members {
            let (offset, length) = span(&row[2], 6);
            let flag = |cell: &str| -> usize {
                match cell {
                    "0" => 0,
                    "1" => 1,
                    _ => panic!("{name}.{}: flag {cell:?} is neither 0 nor 1", row[2]),
                }
            };
            let code_of = |list: &[&str], cell: &str| -> usize {
                list.iter()
                    .position(|item| *item == cell)
                    .unwrap_or_else(|| panic!("{name}.{}: unknown {cell:?}", row[2]))
            };
            let (form, leaf) = (code_of(&API_FORMS, &row[5]), code_of(&API_LEAVES, &row[6]));
            let target = match (row[6].as_str(), row[7].as_str()) {
                ("object" | "schema-or-bool" | "schema-or-array" | "schema-or-strings", target) => {
                    assert_ne!(target, "-", "{name}.{}: {} without a target", row[2], row[6]);
                    index[&split(target)]
                }
                (_, "-") => 0,
                (leaf, target) => panic!("{name}.{}: a {leaf} leaf has no target, not {target}", row[2]),
            };
            let bits = length | leaf << 6 | form << 11 | flag(&row[3]) << 14 | flag(&row[4]) << 15;
            writeln!(packed, "    [{offset}, {bits}, {}],", target | flag(&row[8]) << 15).unwrap();
            count += 1;
        }
    }
    writeln!(code, "    [0, 0, {count}],").unwrap();
    writeln!(code, "];").unwrap();
    assert!(count < 1 << 16, "too many API fields to pack");
    writeln!(
        code,
        "/// The fields of each type, sorted by name: name offset, name length | leaf << 6 | form << 11 \
         | omitempty << 14 | omitzero << 15, target type | keeps_null << 15."
    )
    .unwrap();
    writeln!(code, "static API_FIELDS: &[[u16; 3]] = &[\n{packed}];").unwrap();
    let mut kinds: Vec<(&str, &str, (String, String))> = kinds
        .iter()
        .map(|row| {
            let (package, name) = split(&row[3]);
            assert_eq!(name, row[2], "{}: the kind is not the type's name", row[3]);
            (row[0].as_str(), row[1].as_str(), (package, name))
        })
        .collect();
    kinds.sort_by(|a, b| (a.0, a.1, &a.2.1).cmp(&(b.0, b.1, &b.2.1)));
    writeln!(
        code,
        "/// The kinds sorted by group, version and kind: group offset, group length << 8 | version \
         length, version offset, type (whose name is the kind)."
    )
    .unwrap();
    writeln!(code, "static API_KINDS: &[[u16; 4]] = &[").unwrap();
    for (group, version, qualified) in &kinds {
        let (group_offset, group_length) = span(group, 8);
        let (version_offset, version_length) = span(version, 8);
        let root = *index
            .get(qualified)
            .unwrap_or_else(|| panic!("{qualified:?}: a kind without fields"));
        writeln!(
            code,
            "    [{group_offset}, {}, {version_offset}, {root}],",
            group_length << 8 | version_length
        )
        .unwrap();
    }
    writeln!(code, "];").unwrap();
    std::fs::write(out.join("api_fields.rs"), code).expect("write api_fields.rs");
}

/// `pub const <NAME>: &[Rule]` for each policy's metadata.yml (the all-in-one's is `SYNCGUARD`),
/// `POLICIES`, every policy name with its rules, and `METADATA`, every policy name with the text
/// of its metadata.yml.
fn policy_rules() -> String {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR is set by cargo"));
    println!("cargo::rerun-if-changed=policies");
    let mut sources = Vec::new();
    let mut names: Vec<String> = std::fs::read_dir(root.join("policies"))
        .expect("read policies/")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("metadata.yml").is_file())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    sources.extend(names.into_iter().map(|name| {
        let path = root.join("policies").join(&name).join("metadata.yml");
        (name, path)
    }));
    let mut code = String::new();
    let mut index = String::new();
    let mut texts = String::new();
    for (name, path) in &sources {
        println!("cargo::rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let metadata: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: not YAML: {e}", path.display()));
        let rules = metadata
            .get("rules")
            .and_then(serde_yaml_ng::Value::as_sequence)
            .unwrap_or_else(|| panic!("{}: `rules` is not a list", path.display()));
        let constant = name.to_uppercase().replace('-', "_");
        let shown = path.strip_prefix(&root).unwrap_or(path).display();
        writeln!(code, "/// The admission rules of `{shown}`.").unwrap();
        writeln!(code, "pub const {constant}: &[Rule] = &[").unwrap();
        for (i, rule) in rules.iter().enumerate() {
            let list = |key: &str| -> String {
                let items: Vec<String> = rule
                    .get(key)
                    .and_then(serde_yaml_ng::Value::as_sequence)
                    .unwrap_or_else(|| panic!("{shown}: `rules[{i}].{key}` is not a list"))
                    .iter()
                    .map(|item| {
                        let item = item
                            .as_str()
                            .unwrap_or_else(|| panic!("{shown}: `rules[{i}].{key}` holds a non-string"));
                        format!("{item:?}")
                    })
                    .collect();
                format!("&[{}]", items.join(", "))
            };
            writeln!(
                code,
                "    Rule {{ api_groups: {}, api_versions: {}, resources: {}, operations: {} }},",
                list("apiGroups"),
                list("apiVersions"),
                list("resources"),
                list("operations")
            )
            .unwrap();
        }
        writeln!(code, "];").unwrap();
        writeln!(index, "    ({name:?}, {constant}),").unwrap();
        writeln!(texts, "    ({name:?}, include_str!({:?})),", path.display().to_string()).unwrap();
    }
    writeln!(
        code,
        "/// Every policy (`syncguard` is the all-in-one) with its admission rules."
    )
    .unwrap();
    writeln!(code, "pub const POLICIES: &[(&str, &[Rule])] = &[\n{index}];").unwrap();
    writeln!(code, "/// Every policy with the text of its metadata.yml.").unwrap();
    writeln!(code, "pub const METADATA: &[(&str, &str)] = &[\n{texts}];").unwrap();
    code
}

/// The source directory of the k8s-openapi package this build uses, from `cargo metadata`
/// (which may download the workspace's other packages the first time, as `cargo fetch` would).
fn k8s_openapi_source() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR is set by cargo");
    let output = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--manifest-path"])
        .arg(Path::new(&manifest).join("Cargo.toml"))
        .output()
        .expect("run cargo metadata to locate k8s-openapi");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON");
    let package = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter(|p| p["name"] == "k8s-openapi")
        .max_by_key(|p| p["version"].as_str().unwrap_or("").to_string())
        .expect("k8s-openapi is a build dependency");
    let manifest_path = PathBuf::from(package["manifest_path"].as_str().expect("manifest_path"));
    manifest_path.parent().expect("package dir").join("src")
}

/// Group, version, kind, plural, and whether k8s-openapi marks it `SubResourceScope`.
type Resource = (String, String, String, String, bool);

/// Parses every `impl crate::Resource for X { ... }` of the newest `v1_*` module.
fn builtin_resources(source: &Path) -> (String, Vec<Resource>) {
    let newest = std::fs::read_dir(source)
        .expect("read k8s-openapi src")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let minor: u32 = name.strip_prefix("v1_")?.parse().ok()?;
            Some((minor, e.path()))
        })
        .max()
        .expect("k8s-openapi has v1_* modules");
    let mut files = Vec::new();
    collect_rs(&newest.1, &mut files);
    files.sort();
    let mut resources = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read k8s-openapi source file");
        for block in text.split("impl crate::Resource for ").skip(1) {
            let body = match block.split_once('}') {
                Some((body, _)) => body,
                None => continue,
            };
            let field = |name: &str| -> Option<String> {
                let start = body.find(&format!("const {name}: &'static str = \""))?;
                let rest = &body[start..];
                let value = rest.split('"').nth(1)?;
                Some(value.to_string())
            };
            if let (Some(group), Some(version), Some(kind), Some(plural)) = (
                field("GROUP"),
                field("VERSION"),
                field("KIND"),
                field("URL_PATH_SEGMENT"),
            ) {
                let subresource = body.contains("type Scope = crate::SubResourceScope;");
                resources.insert((kind, group, version, plural, subresource));
            }
        }
    }
    assert!(
        resources.len() > 50,
        "too few built-in resources parsed from k8s-openapi"
    );
    let list = resources.into_iter().map(|(k, g, v, p, s)| (g, v, k, p, s)).collect();
    (format!("1.{}", newest.0), list)
}

fn collect_rs(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir").filter_map(|e| e.ok()) {
        let path = entry.path();
        if path.is_dir() {
            collect_rs(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

type Fields = Option<BTreeMap<String, String>>;

/// The object types of the CRD API: name -> fields (None for free-form or scalar types).
fn crd_object_types() -> BTreeMap<String, Fields> {
    let generator = schemars::SchemaGenerator::default();
    let root = generator.into_root_schema_for::<CustomResourceDefinition>();
    let root = serde_json::to_value(&root).expect("schema to JSON");
    let mut schemas: BTreeMap<String, Value> = BTreeMap::new();
    if let Some(Value::Object(defs)) = root.get("$defs") {
        for (name, schema) in defs {
            schemas.insert(short_name(name), schema.clone());
        }
    }
    schemas.insert("CustomResourceDefinition".into(), root.clone());
    let mut types = BTreeMap::new();
    for (name, schema) in &schemas {
        let fields = schema.get("properties").and_then(Value::as_object).map(|props| {
            props
                .iter()
                .map(|(field, prop)| (field.clone(), shape(prop)))
                .collect::<BTreeMap<_, _>>()
        });
        let fields = if name == "JSONSchemaProps" || schema.get("type").is_some_and(|t| t == "object") {
            fields
        } else {
            None
        };
        assert!(
            types.insert(name.clone(), fields).is_none(),
            "duplicate short type name {name}"
        );
    }
    types
}

fn short_name(reference: &str) -> String {
    reference.rsplit(['/', '.']).next().unwrap_or(reference).to_string()
}

fn reference(schema: &Value) -> Option<String> {
    schema.get("$ref").and_then(Value::as_str).map(short_name)
}

/// Rust expression of a field's shape.
fn shape(prop: &Value) -> String {
    if let Some(name) = reference(prop) {
        return format!("Shape::One({name:?})");
    }
    if let Some(name) = prop.get("items").and_then(reference) {
        return format!("Shape::List({name:?})");
    }
    if let Some(name) = prop.get("additionalProperties").and_then(reference) {
        return format!("Shape::Map({name:?})");
    }
    "Shape::Scalar".to_string()
}
