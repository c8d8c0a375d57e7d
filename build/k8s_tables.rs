//! `$OUT_DIR/k8s_tables.rs`, from k8s-openapi, so no Kubernetes fact is typed by hand:
//! `BUILTIN_NAMES` and `BUILTIN_PACKED`, every built-in resource of the newest Kubernetes
//! version k8s-openapi knows (group, version, kind, plural, and whether it is only a
//! subresource), read from the crate's `impl Resource` blocks. (The fields of the API types are
//! in `api_fields.rs`, from the Go sources.)

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Writes `$OUT_DIR/k8s_tables.rs` into `out`.
pub fn k8s_tables(out: &Path) {
    let source = k8s_openapi_source();
    let (version, resources) = builtin_resources(&source);
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
    std::fs::write(out.join("k8s_tables.rs"), code).expect("write k8s_tables.rs");
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
