//! `$OUT_DIR/api_fields.rs`, from sync-drift's tables of how the API server writes each field of
//! the built-in kinds back (`src/checks/sync_drift/api_fields.tsv` and `api_kinds.tsv`).

use crate::name_hash::name_hash;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

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
pub fn api_fields(out: &Path) {
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
    let kinds = rows(KINDS, "group\tversion\tkind\ttype\tscope");
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
    let mut hashes = String::new();
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
            writeln!(hashes, "    {},", name_hash(row[2].as_bytes())).unwrap();
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
    writeln!(
        code,
        "/// The hash of each field's name (`name_hash`), in the order of `API_FIELDS`."
    )
    .unwrap();
    writeln!(code, "static API_FIELD_HASHES: &[u16] = &[\n{hashes}];").unwrap();
    let mut kinds: Vec<(&str, &str, (String, String), usize)> = kinds
        .iter()
        .map(|row| {
            let (package, name) = split(&row[3]);
            assert_eq!(name, row[2], "{}: the kind is not the type's name", row[3]);
            let cluster = match row[4].as_str() {
                "Namespaced" => 0,
                "Cluster" => 1,
                scope => panic!("{}: scope {scope:?} is neither Namespaced nor Cluster", row[3]),
            };
            (row[0].as_str(), row[1].as_str(), (package, name), cluster)
        })
        .collect();
    kinds.sort_by(|a, b| (a.0, a.1, &a.2.1).cmp(&(b.0, b.1, &b.2.1)));
    writeln!(
        code,
        "/// The kinds sorted by group, version and kind: group offset, group length << 8 | version \
         length, version offset, type (whose name is the kind) | cluster-scoped << 15."
    )
    .unwrap();
    writeln!(code, "static API_KINDS: &[[u16; 4]] = &[").unwrap();
    for (group, version, qualified, cluster) in &kinds {
        let (group_offset, group_length) = span(group, 8);
        let (version_offset, version_length) = span(version, 8);
        let root = *index
            .get(qualified)
            .unwrap_or_else(|| panic!("{qualified:?}: a kind without fields"));
        writeln!(
            code,
            "    [{group_offset}, {}, {version_offset}, {}],",
            group_length << 8 | version_length,
            root | cluster << 15
        )
        .unwrap();
    }
    writeln!(code, "];").unwrap();
    std::fs::write(out.join("api_fields.rs"), code).expect("write api_fields.rs");
}
