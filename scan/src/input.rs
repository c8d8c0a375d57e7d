//! Reading the manifests of `syncguard scan` and the playground: multi-document YAML split at
//! its document markers with line numbers kept, JSON streams, `kind: List` expanded, and every
//! problem turned into a per-file error instead of a stop. (`syncguard scan` walks directories
//! itself, with the `ignore` crate: `cli/src/scan/walk.rs`.)

use serde_json::Value;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// Extensions a directory walk of `syncguard scan` picks up. Files named on the command line
/// are read whatever their extension.
pub const EXTENSIONS: &[&str] = &["yaml", "yml", "json"];

/// Display name of standard input.
pub const STDIN_NAME: &str = "<stdin>";

/// A file (or standard input) the scan read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The path as shown to people: as given, joined with the walked names, `/`-separated.
    pub display: String,
    /// The path as a SARIF artifact URI: relative to the current directory when the file is
    /// under it, else a `file://` URI; `stdin` for standard input.
    pub uri: String,
    /// The file's text, when it was read as text: where reports locate findings' paths.
    pub text: Option<Arc<str>>,
}

/// One Kubernetes object found in the input.
#[derive(Debug, Clone)]
pub struct Document {
    /// Index of its file in the scan's sources.
    pub source: usize,
    /// Line (1-based) where the document's content starts.
    pub line: usize,
    /// Index of the document in its file (0-based, counting only non-empty documents).
    pub index: usize,
    /// Index in the `items` of a `kind: List` document, when it came from one.
    pub item: Option<usize>,
    /// Its apiVersion, kind, name and namespace.
    pub info: ObjectInfo,
    /// The object as compact JSON.
    pub object: Arc<str>,
    /// For a CustomResourceDefinition: its `spec.group`, `spec.names.kind`, `spec.names.plural`
    /// and whether its `spec.scope` is `Cluster`.
    pub crd_names: Option<CrdNames>,
    /// The object this document replaces, as compact JSON: the same object in the base the
    /// scan compares with (`syncguard scan --base`, the playground's old objects), if it has one
    /// there. Checks that judge updates ([`syncguard::registry::Entry::reads_old_object`]) then
    /// get an UPDATE from it.
    pub old: Option<Arc<str>>,
    /// Whether its kind is known to be cluster-scoped ([`crate::cluster::Plurals::mark`]): it is
    /// then named without the namespace its manifest gives, which the API server clears.
    pub cluster_scoped: bool,
    /// What it is to kustomize, when a kustomization of the scan lists its file
    /// ([`mark_kustomize_inputs`]): then it is not applied as it stands.
    pub kustomize: Option<KustomizeInput>,
}

/// What a file a kustomization lists is to `kustomize build` (object-validation's model).
pub use syncguard::checks::object_validation::KustomizeInput;

/// The files the kustomization `text` (in folder `dir`) lists, as paths under `dir`
/// (normalised), with what each is to kustomize: its `resources` and `crds` that are not URLs,
/// and the files of its `patches`, `patchesStrategicMerge` and `patchesJson6902`. Folders it
/// lists (`resources`, `bases`, `components`) are kustomizations of their own, whose files their
/// own kustomization lists. A kustomization that does not read lists nothing.
pub fn kustomize_inputs(dir: &Path, text: &str) -> Vec<(PathBuf, KustomizeInput)> {
    let Ok(value) = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut add = |entry: Option<&str>, role: KustomizeInput| {
        // An inline patch is YAML text, a remote resource a URL: neither is a file.
        if let Some(entry) = entry.filter(|e| !e.contains('\n') && !e.contains("://") && !e.is_empty()) {
            out.push((normalize(&dir.join(entry)), role));
        }
    };
    let list = |key: &str| {
        value
            .get(key)
            .and_then(serde_yaml_ng::Value::as_sequence)
            .cloned()
            .unwrap_or_default()
    };
    for key in ["resources", "crds"] {
        for entry in list(key) {
            add(entry.as_str(), KustomizeInput::Resource);
        }
    }
    for entry in list("patchesStrategicMerge") {
        add(entry.as_str(), KustomizeInput::Patch);
    }
    for key in ["patches", "patchesJson6902"] {
        for entry in list(key) {
            add(
                entry.get("path").and_then(serde_yaml_ng::Value::as_str),
                KustomizeInput::Patch,
            );
        }
    }
    out
}

/// Marks the documents whose file a kustomization among `files` lists ([`kustomize_inputs`]):
/// `files[doc.source]` is each document's file as read (none: standard input) with its text. A
/// file listed both as a resource and as a patch counts as a patch.
pub fn mark_kustomize_inputs(documents: &mut [Document], files: &[(Option<&Path>, Option<&str>)]) {
    let mut listed: std::collections::HashMap<PathBuf, KustomizeInput> = std::collections::HashMap::new();
    for (path, text) in files {
        let (Some(path), Some(text)) = (path, text) else {
            continue;
        };
        if !is_kustomization(path) {
            continue;
        }
        let dir = path.parent().unwrap_or(Path::new(""));
        for (file, role) in kustomize_inputs(dir, text) {
            let at = listed.entry(file).or_insert(role);
            *at = (*at).max(role);
        }
    }
    if listed.is_empty() {
        return;
    }
    for doc in documents {
        if let Some((Some(path), _)) = files.get(doc.source) {
            doc.kustomize = listed.get(&normalize(path)).copied();
        }
    }
}

/// What identifies an object across two versions of a tree: group, kind, namespace and name.
pub type ObjectKey = (String, String, Option<String>, String);

impl Document {
    /// Its [`ObjectKey`], when it has a name.
    pub fn key(&self) -> Option<ObjectKey> {
        let name = self.info.name.clone()?;
        Some((
            self.info.group.clone(),
            self.info.kind.clone(),
            self.info.namespace.clone(),
            name,
        ))
    }
}

/// Gives each of `documents` the object of the same group, kind, namespace and name among
/// `base` as its [`Document::old`]; returns how many got one. When `base` holds an object twice,
/// the last one counts, as `kubectl apply` of the whole base would leave it.
pub fn attach_old(documents: &mut [Document], base: &[Document]) -> usize {
    let by_key: std::collections::HashMap<ObjectKey, &Arc<str>> =
        base.iter().filter_map(|doc| Some((doc.key()?, &doc.object))).collect();
    let mut attached = 0;
    for doc in documents {
        doc.old = doc.key().and_then(|key| by_key.get(&key)).map(|old| Arc::clone(old));
        attached += usize::from(doc.old.is_some());
    }
    attached
}

/// The names a CustomResourceDefinition gives its resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrdNames {
    /// `spec.group`.
    pub group: String,
    /// `spec.names.kind`.
    pub kind: String,
    /// `spec.names.plural`.
    pub plural: String,
    /// Whether `spec.scope` is `Cluster`: its objects have no namespace.
    pub cluster_scoped: bool,
}

/// A problem with the input: a file that cannot be read, or a document that is not a
/// Kubernetes object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// Index of the file in the scan's sources, or `None` for a path that could not be read
    /// at all (then `path` names it).
    pub source: Option<usize>,
    /// The path as given, for errors without a source.
    pub path: String,
    /// Line (1-based), when the problem has one.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// What a path argument names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A file.
    File(PathBuf),
    /// Standard input (`-`).
    Stdin,
}

/// The OS reason of an I/O error without Rust's ` (os error N)` suffix.
pub fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// A path as shown to people: `/`-separated, without a leading `./`.
pub fn display_path(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let mut rest = text.as_str();
    while let Some(stripped) = rest.strip_prefix("./") {
        rest = stripped.trim_start_matches('/');
    }
    if rest.is_empty() {
        ".".to_string()
    } else {
        rest.to_string()
    }
}

/// The SARIF artifact URI of a file: a relative, percent-encoded path when it is under the
/// current directory, else an absolute `file://` URI.
pub fn artifact_uri(input: &Input, cwd: Option<&Path>) -> String {
    let path = match input {
        Input::Stdin => return "stdin".to_string(),
        Input::File(path) => path,
    };
    let absolute = if path.is_absolute() {
        normalize(path)
    } else if let Some(cwd) = cwd {
        normalize(&cwd.join(path))
    } else {
        return encode_uri_path(&display_path(&normalize(path)));
    };
    if let Some(cwd) = cwd
        && let Ok(relative) = absolute.strip_prefix(normalize(cwd))
    {
        return encode_uri_path(&display_path(relative));
    }
    format!(
        "file://{}",
        encode_uri_path(&absolute.to_string_lossy().replace('\\', "/"))
    )
}

/// Removes `.` components and resolves `..` lexically.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// What a SARIF artifact path keeps as it is: RFC 3986's unreserved characters and `/`.
const URI_PATH_KEEP: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// Percent-encodes everything but unreserved characters and `/`.
fn encode_uri_path(path: &str) -> String {
    percent_encoding::utf8_percent_encode(path, URI_PATH_KEEP).to_string()
}

/// The file that makes a folder a Helm chart (Helm's `chartutil.ChartfileName`).
pub const CHART_FILE: &str = "Chart.yaml";

/// The names kustomize reads as a folder's kustomization (kustomize's
/// `konfig.RecognizedKustomizationFileNames`).
pub const KUSTOMIZATION_FILES: &[&str] = &["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// The API group of kustomize's own files (`Kustomization`, `Component`), which `kustomize
/// build` reads and no cluster serves. Flux's `Kustomization` (`kustomize.toolkit.fluxcd.io`) is a
/// Kubernetes object like any other, whatever its file is called.
pub const KUSTOMIZE_GROUP: &str = "kustomize.config.k8s.io";

/// Whether a file is named as kustomize's kustomization files are ([`KUSTOMIZATION_FILES`]).
pub fn is_kustomization(path: &Path) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| KUSTOMIZATION_FILES.contains(&name))
}

/// Whether a scan reads an entry of a Helm chart, by its path relative to the chart's folder (the
/// nearest folder above it holding a [`CHART_FILE`]): only what is under `crds/` is YAML as Helm
/// applies it (plain CustomResourceDefinitions, never templated); `Chart.yaml`, the values files
/// and `templates/` (Go templates, not YAML until rendered) are not read. Folders under `charts/`
/// are walked into, since each subchart there is a chart with its own `crds/`.
pub fn read_in_chart(relative: &Path, is_dir: bool) -> bool {
    match relative.components().next() {
        Some(Component::Normal(first)) if first == "crds" => true,
        Some(Component::Normal(first)) if first == "charts" => is_dir,
        _ => false,
    }
}

/// Reads a file's bytes (standard input for [`Input::Stdin`]).
pub fn read(input: &Input) -> Result<Vec<u8>, String> {
    match input {
        Input::Stdin => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .lock()
                .read_to_end(&mut bytes)
                .map_err(|e| format!("cannot read standard input: {}", io_reason(&e)))?;
            Ok(bytes)
        }
        Input::File(path) => std::fs::read(path).map_err(|e| format!("cannot read: {}", io_reason(&e))),
    }
}

/// A document of a file before it is checked as a Kubernetes object.
#[derive(Debug)]
pub struct RawDocument {
    /// Line where its content starts.
    pub line: usize,
    /// The parsed value.
    pub value: Value,
}

/// A parse failure with the line it happened on, when known.
#[derive(Debug, PartialEq, Eq)]
pub struct ParseError {
    /// Line (1-based) in the file.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// Turns a file's bytes into text: binary data (a NUL byte) and invalid UTF-8 are refused,
/// a UTF-8 byte order mark is dropped.
pub fn text_of(bytes: &[u8]) -> Result<&str, String> {
    if bytes.iter().take(8192).any(|b| *b == 0) {
        return Err("binary file (it holds NUL bytes), not YAML or JSON".to_string());
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (invalid byte at offset {}), so not YAML or JSON",
            e.valid_up_to()
        )
    })?;
    Ok(text.strip_prefix('\u{feff}').unwrap_or(text))
}

/// Whether text should be read as a JSON stream: `.json` files, and anything whose first
/// non-blank character opens a JSON object or array.
pub fn looks_like_json(name: &str, text: &str) -> bool {
    name.to_ascii_lowercase().ends_with(".json") || text.trim_start().starts_with(['{', '['])
}

/// Parses a file's text into its non-empty documents. Documents that fail to parse are
/// reported with their line and the others are still returned; a JSON stream stops at its
/// first syntax error (nothing after it can be located reliably).
pub fn parse(name: &str, text: &str) -> (Vec<RawDocument>, Vec<ParseError>) {
    if looks_like_json(name, text) {
        parse_json(text)
    } else {
        parse_yaml(text)
    }
}

fn parse_json(text: &str) -> (Vec<RawDocument>, Vec<ParseError>) {
    let mut docs = Vec::new();
    let mut errors = Vec::new();
    let lines = LineIndex::new(text);
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let mut start = 0;
    loop {
        let offset = start + text[start..].len() - text[start..].trim_start().len();
        match stream.next() {
            None => break,
            Some(Ok(value)) => {
                docs.push(RawDocument {
                    line: lines.line_of(offset),
                    value,
                });
                start = stream.byte_offset();
            }
            Some(Err(e)) => {
                errors.push(ParseError {
                    line: (e.line() > 0).then_some(e.line()),
                    message: format!("invalid JSON: {}", strip_json_location(&e.to_string())),
                });
                break;
            }
        }
    }
    (docs, errors)
}

/// serde_json appends ` at line L column C`; the line is reported separately.
fn strip_json_location(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// Line numbers of byte offsets.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    fn line_of(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }
}

/// One document's text inside a YAML stream.
#[derive(Debug, PartialEq, Eq)]
pub struct Chunk<'a> {
    /// The text, markers included.
    pub text: &'a str,
    /// Line of the chunk's first line.
    pub first_line: usize,
    /// Line of the document's first content, `None` for an empty document.
    pub content_line: Option<usize>,
}

/// Splits a YAML stream into documents at `---` and `...` lines. Per the YAML spec a
/// document marker at the start of a line ends any scalar, so this matches what a YAML
/// parser sees, and each document keeps its line numbers. Directives (`%YAML`) stay with the
/// document that follows them.
pub fn split_yaml(text: &str) -> Vec<Chunk<'_>> {
    struct Span {
        start: usize,
        end: usize,
        first_line: usize,
        content_line: Option<usize>,
        directive: bool,
    }
    let mut spans: Vec<Span> = Vec::new();
    let mut current = Span {
        start: 0,
        end: 0,
        first_line: 1,
        content_line: None,
        directive: false,
    };
    let mut offset = 0;
    for (i, raw_line) in text.split_inclusive('\n').enumerate() {
        let line_no = i + 1;
        let line = raw_line.trim_end_matches(['\n', '\r']);
        if is_marker(line, "---") {
            current.end = offset;
            spans.push(current);
            let rest = line[3..].trim();
            current = Span {
                start: offset,
                end: offset,
                first_line: line_no,
                content_line: (!rest.is_empty() && !rest.starts_with('#')).then_some(line_no),
                directive: false,
            };
        } else if is_marker(line, "...") {
            current.end = offset;
            spans.push(current);
            current = Span {
                start: offset + raw_line.len(),
                end: offset + raw_line.len(),
                first_line: line_no + 1,
                content_line: None,
                directive: false,
            };
        } else if line.starts_with('%') && current.content_line.is_none() {
            current.directive = true;
        } else if current.content_line.is_none() {
            let trimmed = line.trim();
            if !trimmed.is_empty() && !trimmed.starts_with('#') {
                current.content_line = Some(line_no);
            }
        }
        offset += raw_line.len();
    }
    current.end = text.len();
    spans.push(current);
    // A span holding only directives belongs to the document its `---` starts.
    let mut merged: Vec<Span> = Vec::new();
    let mut carry: Option<(usize, usize)> = None;
    for mut span in spans {
        if let Some((start, first_line)) = carry.take() {
            span.start = start;
            span.first_line = first_line;
        }
        if span.directive && span.content_line.is_none() {
            carry = Some((span.start, span.first_line));
            continue;
        }
        merged.push(span);
    }
    merged
        .into_iter()
        .filter(|s| s.end > s.start || s.content_line.is_some())
        .map(|s| Chunk {
            text: &text[s.start..s.end],
            first_line: s.first_line,
            content_line: s.content_line,
        })
        .collect()
}

fn is_marker(line: &str, marker: &str) -> bool {
    line.starts_with(marker) && matches!(line.as_bytes().get(3), None | Some(b' ' | b'\t'))
}

fn parse_yaml(text: &str) -> (Vec<RawDocument>, Vec<ParseError>) {
    let mut docs = Vec::new();
    let mut errors = Vec::new();
    for chunk in split_yaml(text) {
        let Some(content_line) = chunk.content_line else {
            continue;
        };
        let parsed = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(chunk.text).and_then(|mut value| {
            crate::scalars::go_numbers(chunk.text, &mut value);
            value.apply_merge()?;
            Ok(value)
        });
        let value = match parsed {
            Ok(value) => value,
            Err(e) => {
                let offset = chunk.first_line - 1;
                errors.push(ParseError {
                    line: Some(e.location().map(|l| l.line() + offset).unwrap_or(content_line)),
                    message: format!("invalid YAML: {}", shift_yaml_lines(&e.to_string(), offset)),
                });
                continue;
            }
        };
        if value.is_null() {
            continue;
        }
        match serde_json::to_value(&value) {
            Ok(value) => docs.push(RawDocument {
                line: content_line,
                value,
            }),
            Err(e) => errors.push(ParseError {
                line: Some(content_line),
                message: format!("the document cannot be represented as JSON: {e}"),
            }),
        }
    }
    (docs, errors)
}

/// Rewrites the `line N` mentions of a YAML error from chunk lines to file lines.
fn shift_yaml_lines(message: &str, offset: usize) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find("line ") {
        out.push_str(&rest[..i + 5]);
        rest = &rest[i + 5..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        match rest[..digits].parse::<usize>() {
            Ok(n) => out.push_str(&(n + offset).to_string()),
            Err(_) => out.push_str(&rest[..digits]),
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

/// What a document names: the request fields `syncguard scan` needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectInfo {
    /// `apiVersion`.
    pub api_version: String,
    /// Group part of `apiVersion`.
    pub group: String,
    /// Version part of `apiVersion`.
    pub version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata.name`.
    pub name: Option<String>,
    /// `metadata.namespace`.
    pub namespace: Option<String>,
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// Why a document of a file is plainly not a Kubernetes object, so that a scan skips it rather
/// than report it: it is not a mapping (a list, a string), or it is a mapping without a `kind`
/// key (a Helm values file, a `Chart.yaml` with its `apiVersion: v2`, a pre-commit, docker-compose
/// or CI configuration). `None` when it has a `kind`: it then means to be an object, and
/// [`object_info`] reports what is wrong with it (no `apiVersion`, a `kind` that is not a string).
pub fn not_an_object(value: &Value) -> Option<String> {
    let Value::Object(map) = value else {
        return Some(format!("the document is {}, not a mapping", type_name(value)));
    };
    if map.contains_key("kind") {
        return None;
    }
    Some(match map.get("apiVersion") {
        None => "the document has no apiVersion and no kind".to_string(),
        Some(Value::String(version)) => format!("the document has apiVersion `{version}` but no kind"),
        Some(_) => "the document has no kind".to_string(),
    })
}

/// Checks that a document is a Kubernetes object and reads its identity.
pub fn object_info(value: &Value) -> Result<ObjectInfo, String> {
    let Value::Object(map) = value else {
        return Err(format!(
            "the document is {}, not a Kubernetes object (a mapping with apiVersion and kind)",
            type_name(value)
        ));
    };
    let api_version = match map.get("apiVersion") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(Value::String(_)) | None => {
            return Err(match map.get("kind") {
                Some(Value::String(kind)) if !kind.is_empty() => {
                    format!("the object has kind `{kind}` but no apiVersion: add the apiVersion of its API group")
                }
                _ => "the object has no apiVersion, so it is not a Kubernetes object".to_string(),
            });
        }
        Some(other) => return Err(format!("apiVersion is {}, not a string", type_name(other))),
    };
    let kind = match map.get("kind") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(Value::String(_)) | None => {
            return Err("the object has no kind, so it is not a Kubernetes object".to_string());
        }
        Some(other) => return Err(format!("kind is {}, not a string", type_name(other))),
    };
    let (group, version) = match api_version.split_once('/') {
        None => (String::new(), api_version.clone()),
        Some((group, version)) if !group.is_empty() && !version.is_empty() && !version.contains('/') => {
            (group.to_string(), version.to_string())
        }
        Some(_) => {
            return Err(format!(
                "apiVersion `{api_version}` is not of the form GROUP/VERSION or VERSION"
            ));
        }
    };
    let (name, namespace) = match map.get("metadata") {
        None | Some(Value::Null) => (None, None),
        Some(Value::Object(metadata)) => {
            let field = |key: &str| -> Result<Option<String>, String> {
                match metadata.get(key) {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::String(s)) if s.is_empty() => Ok(None),
                    Some(Value::String(s)) => Ok(Some(s.clone())),
                    Some(other) => Err(format!("metadata.{key} is {}, not a string", type_name(other))),
                }
            };
            (field("name")?, field("namespace")?)
        }
        Some(other) => return Err(format!("metadata is {}, not a mapping", type_name(other))),
    };
    Ok(ObjectInfo {
        api_version,
        group,
        version,
        kind,
        name,
        namespace,
    })
}

/// The names of a CustomResourceDefinition (any `apiextensions.k8s.io` version).
pub fn crd_names(info: &ObjectInfo, value: &Value) -> Option<CrdNames> {
    if info.group != "apiextensions.k8s.io" || info.kind != "CustomResourceDefinition" {
        return None;
    }
    let spec = value.get("spec")?;
    let names = spec.get("names")?;
    let text = |v: Option<&Value>| v.and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
    Some(CrdNames {
        group: text(spec.get("group"))?,
        kind: text(names.get("kind"))?,
        plural: text(names.get("plural"))?,
        cluster_scoped: spec.get("scope").and_then(Value::as_str) == Some("Cluster"),
    })
}

/// Whether a document is a `v1` `List` whose items are to be read one by one (what
/// `kubectl get -o yaml` prints).
pub fn list_items(value: &Value) -> Option<&Vec<Value>> {
    let map = value.as_object()?;
    if map.get("kind")?.as_str()? != "List" || map.get("apiVersion")?.as_str()? != "v1" {
        return None;
    }
    match map.get("items") {
        Some(Value::Array(items)) => Some(items),
        _ => None,
    }
}

/// A document a scan leaves out because it is plainly not a Kubernetes object
/// ([`not_an_object`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Index of its file in the scan's sources.
    pub source: usize,
    /// Line (1-based) where its content starts.
    pub line: usize,
    /// Why it is not one.
    pub reason: String,
    /// Whether it is kustomize's own file (a `kustomize.config.k8s.io` object, or a document
    /// without `kind` in a file named as kustomizations are): what it builds is judged from
    /// `kustomize build <folder> | syncguard scan -`.
    pub kustomization: bool,
}

/// The kind of a document of kustomize's own API group ([`KUSTOMIZE_GROUP`]), if it is one.
fn kustomize_kind(value: &Value) -> Option<&str> {
    let api_version = value.get("apiVersion")?.as_str()?;
    let (group, _) = api_version.split_once('/')?;
    (group == KUSTOMIZE_GROUP).then(|| value.get("kind").and_then(Value::as_str).unwrap_or("file"))
}

/// The documents and errors of one file.
#[derive(Debug, Default)]
pub struct FileContents {
    /// Kubernetes objects, in order.
    pub documents: Vec<Document>,
    /// Problems, in order.
    pub errors: Vec<InputError>,
    /// Documents that are not Kubernetes objects, in order.
    pub skipped: Vec<Skipped>,
}

/// Reads one file's objects: parse, expand Lists, check every document. A document that is
/// plainly not a Kubernetes object ([`not_an_object`]) is skipped; one that means to be an object
/// but is broken (a `kind` without `apiVersion`), and every item of a `List` that is not an
/// object, is an error.
pub fn objects_of(source: usize, name: &str, text: &str) -> FileContents {
    let (raw, parse_errors) = parse(name, text);
    let mut out = FileContents::default();
    let error = |line: Option<usize>, message: String| InputError {
        source: Some(source),
        path: name.to_string(),
        line,
        message,
    };
    for e in parse_errors {
        out.errors.push(error(e.line, e.message));
    }
    let kustomization_file = is_kustomization(Path::new(name));
    for (index, doc) in raw.into_iter().enumerate() {
        let skip = match not_an_object(&doc.value) {
            Some(reason) => Some((reason, kustomization_file)),
            None => kustomize_kind(&doc.value).map(|kind| {
                (
                    format!("a kustomize {kind}, which `kustomize build` reads, not a Kubernetes object"),
                    true,
                )
            }),
        };
        if let Some((reason, kustomization)) = skip {
            out.skipped.push(Skipped {
                source,
                line: doc.line,
                reason,
                kustomization,
            });
            continue;
        }
        let entries: Vec<(Option<usize>, &Value)> = match list_items(&doc.value) {
            Some(items) => items.iter().enumerate().map(|(i, v)| (Some(i), v)).collect(),
            None => vec![(None, &doc.value)],
        };
        for (item, value) in entries {
            match object_info(value) {
                Ok(info) => {
                    let crd_names = crd_names(&info, value);
                    out.documents.push(Document {
                        source,
                        line: doc.line,
                        index,
                        item,
                        info,
                        object: Arc::from(value.to_string()),
                        crd_names,
                        old: None,
                        cluster_scoped: false,
                        kustomize: None,
                    });
                }
                Err(message) => {
                    let message = match item {
                        Some(i) => format!("items[{i}] of the List: {message}"),
                        None => message,
                    };
                    out.errors.push(error(Some(doc.line), message));
                }
            }
        }
    }
    out.errors.sort_by_key(|e| e.line);
    out
}

/// The template a `helm template` (or `helm get manifest`) document came from: Helm writes
/// `# Source: <chart>/templates/<file>` (a subchart's `<chart>/charts/<sub>/templates/...`)
/// between the `---` that starts each document and its first key. `text` is the whole file and
/// `line` the document's first content line ([`Document::line`]); the answer is that path,
/// whose first segment is the chart the release installs, or `None` when the comments between
/// the document's `---` (or the start of the file) and `line` hold no such path.
pub fn helm_source(text: &str, line: usize) -> Option<&str> {
    let before: Vec<&str> = text.lines().take(line.saturating_sub(1)).collect();
    for raw in before.iter().rev() {
        let trimmed = raw.trim();
        if is_marker(raw, "---") || is_marker(raw, "...") {
            return None;
        }
        if trimmed.is_empty() {
            continue;
        }
        let comment = trimmed.strip_prefix('#')?.trim();
        if let Some(path) = comment.strip_prefix("Source:") {
            let path = path.trim();
            return path
                .split_once('/')
                .filter(|(chart, _)| !chart.is_empty())
                .map(|_| path);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_line_numbers() {
        let text = "# leading comment\napiVersion: v1\nkind: A\n---\n# Source: x\n\nkind: B\n--- {kind: C}\n...\n---\n";
        let chunks = split_yaml(text);
        let lines: Vec<Option<usize>> = chunks.iter().map(|c| c.content_line).collect();
        assert_eq!(lines, vec![Some(2), Some(7), Some(8), None]);
        assert_eq!(chunks[1].first_line, 4);
        assert!(chunks[2].text.starts_with("--- {kind: C}"));
    }

    #[test]
    fn markers_need_a_separator() {
        let chunks = split_yaml("a: 1\n----\nb: |\n  ---x\n---\tc\n");
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[1].content_line, Some(5));
    }

    #[test]
    fn directives_stay_with_their_document() {
        let chunks = split_yaml("%YAML 1.2\n---\nkind: A\n...\n%YAML 1.2\n---\nkind: B\n");
        assert_eq!(chunks.len(), 2);
        assert!(chunks[0].text.starts_with("%YAML"));
        assert!(chunks[1].text.starts_with("%YAML"));
        assert_eq!(chunks[1].content_line, Some(7));
        let (docs, errors) = parse_yaml("%YAML 1.2\n---\nkind: A\n...\n%YAML 1.2\n---\nkind: B\n");
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(docs.len(), 2);
    }

    #[test]
    fn yaml_errors_carry_file_lines() {
        let text = "kind: A\n---\nkind: B\n  bad: [\n---\nkind: C\n";
        let (docs, errors) = parse_yaml(text);
        assert_eq!(docs.len(), 2);
        assert_eq!(errors.len(), 1);
        let line = errors[0].line.unwrap();
        assert!((3..=5).contains(&line), "{errors:?}");
        assert!(errors[0].message.contains(&format!("line {line}")), "{errors:?}");
    }

    #[test]
    fn json_stream_lines() {
        let text = "\n{\"kind\": \"A\"}\n\n  {\"kind\":\n \"B\"}\n{bad";
        let (docs, errors) = parse_json(text);
        assert_eq!(docs.iter().map(|d| d.line).collect::<Vec<_>>(), vec![2, 4]);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].line, Some(6));
        assert!(!errors[0].message.contains("at line"), "{errors:?}");
    }

    #[test]
    fn object_checks() {
        let info =
            object_info(&serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}}))
                .unwrap();
        assert_eq!(
            (info.group.as_str(), info.version.as_str(), info.name.as_deref()),
            ("apps", "v1", Some("x"))
        );
        assert!(
            object_info(&serde_json::json!("text"))
                .unwrap_err()
                .contains("is a string")
        );
        assert!(
            object_info(&serde_json::json!({"kind": "A"}))
                .unwrap_err()
                .contains("no apiVersion")
        );
        assert!(
            object_info(&serde_json::json!({"apiVersion": "a/b/c", "kind": "A"}))
                .unwrap_err()
                .contains("GROUP/VERSION")
        );
        assert!(
            object_info(&serde_json::json!({"apiVersion": "v1", "kind": "A", "metadata": {"name": 3}}))
                .unwrap_err()
                .contains("metadata.name")
        );
    }

    #[test]
    fn documents_that_are_no_objects_are_skipped_and_broken_objects_are_errors() {
        // A Chart.yaml, a values file, a pre-commit configuration (a mapping, and a list of
        // hooks), a string; then objects that are broken: a kind without apiVersion, a kind that
        // is not a string, an empty kind.
        let text = "apiVersion: v2\nname: app\nversion: 1.0.0\n---\nreplicaCount: 1\n---\nrepos: []\n\
                    ---\n- id: hook\n---\njust text\n---\nkind: Deployment\nmetadata: {name: a}\n\
                    ---\napiVersion: v1\nkind: 3\n---\napiVersion: v1\nkind: ''\n---\n\
                    apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n";
        let contents = objects_of(0, "mixed.yaml", text);
        let skipped: Vec<(usize, &str)> = contents.skipped.iter().map(|s| (s.line, s.reason.as_str())).collect();
        assert_eq!(
            skipped,
            vec![
                (1, "the document has apiVersion `v2` but no kind"),
                (5, "the document has no apiVersion and no kind"),
                (7, "the document has no apiVersion and no kind"),
                (9, "the document is a list, not a mapping"),
                (11, "the document is a string, not a mapping"),
            ]
        );
        let errors: Vec<(Option<usize>, &str)> = contents.errors.iter().map(|e| (e.line, e.message.as_str())).collect();
        assert_eq!(
            errors,
            vec![
                (
                    Some(13),
                    "the object has kind `Deployment` but no apiVersion: add the apiVersion of its API group"
                ),
                (Some(16), "kind is a number, not a string"),
                (Some(19), "the object has no kind, so it is not a Kubernetes object"),
            ]
        );
        assert_eq!(contents.documents.len(), 1);
        assert_eq!(contents.documents[0].line, 22);
        // Invalid YAML stays an error.
        let contents = objects_of(0, "values.yaml", "image: {tag: [\n");
        assert_eq!(contents.errors.len(), 1);
        assert!(
            contents.errors[0].message.starts_with("invalid YAML"),
            "{:?}",
            contents.errors
        );
        assert!(contents.skipped.is_empty());
    }

    #[test]
    fn charts_are_read_only_under_crds_and_kustomizations_not_at_all() {
        assert!(read_in_chart(Path::new("crds"), true));
        assert!(read_in_chart(Path::new("crds/widgets.yaml"), false));
        assert!(read_in_chart(Path::new("crds/nested/widgets.yaml"), false));
        assert!(read_in_chart(Path::new("charts"), true));
        assert!(read_in_chart(Path::new("charts/sub"), true));
        assert!(!read_in_chart(Path::new("charts/stray.yaml"), false));
        assert!(!read_in_chart(Path::new("Chart.yaml"), false));
        assert!(!read_in_chart(Path::new("values.yaml"), false));
        assert!(!read_in_chart(Path::new("values.schema.json"), false));
        assert!(!read_in_chart(Path::new("templates"), true));
        assert!(!read_in_chart(Path::new("templates/deployment.yaml"), false));
        assert!(!read_in_chart(Path::new("ci"), true));
        // kustomize's files are skipped by their API group; Flux's Kustomization is an object.
        let text = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n---\n\
                    apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps}\n";
        let contents = objects_of(0, "kustomization.yaml", text);
        assert_eq!(contents.documents.len(), 1);
        assert_eq!(contents.documents[0].info.group, "kustomize.toolkit.fluxcd.io");
        assert_eq!(
            contents.skipped,
            vec![Skipped {
                source: 0,
                line: 1,
                reason: "a kustomize Kustomization, which `kustomize build` reads, not a Kubernetes object".into(),
                kustomization: true,
            }]
        );
        // A kustomization without apiVersion and kind (kustomize accepts it) is one by its name.
        let contents = objects_of(0, "base/kustomization.yml", "resources: [a.yaml]\n");
        assert!(contents.skipped[0].kustomization);
        let contents = objects_of(0, "values.yaml", "resources: [a.yaml]\n");
        assert!(!contents.skipped[0].kustomization);
        assert!(is_kustomization(Path::new("overlays/prod/kustomization.yaml")));
        assert!(is_kustomization(Path::new("kustomization.yml")));
        assert!(is_kustomization(Path::new("base/Kustomization")));
        assert!(!is_kustomization(Path::new("base/kustomization.json")));
        assert!(!is_kustomization(Path::new("base/deployment.yaml")));
    }

    #[test]
    fn lists_are_expanded() {
        let text =
            "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- 3\n";
        let contents = objects_of(0, "l.yaml", text);
        assert_eq!(contents.documents.len(), 1);
        assert_eq!(contents.documents[0].item, Some(0));
        assert_eq!(contents.errors.len(), 1);
        assert!(contents.errors[0].message.starts_with("items[1] of the List"));
    }

    #[test]
    fn helm_source_comments() {
        let text = "---\n# Source: istio/templates/gw.yaml\napiVersion: v1\nkind: A\n---\n# Source: istio/charts/sub/templates/b.yaml\n# another comment\n\napiVersion: v1\n---\napiVersion: v1\n---\n# Source: notapath\napiVersion: v1\n";
        assert_eq!(helm_source(text, 3), Some("istio/templates/gw.yaml"));
        assert_eq!(helm_source(text, 9), Some("istio/charts/sub/templates/b.yaml"));
        assert_eq!(helm_source(text, 11), None, "no comment after its own ---");
        assert_eq!(helm_source(text, 14), None, "a Source comment that is no chart path");
        assert_eq!(
            helm_source("# Source: c/templates/x.yaml\nkind: A\n", 2),
            Some("c/templates/x.yaml")
        );
        assert_eq!(helm_source("kind: A\n", 1), None);
    }

    #[test]
    fn binary_and_utf8() {
        assert!(text_of(b"a\0b").unwrap_err().contains("binary"));
        assert!(text_of(b"a: \xff").unwrap_err().contains("UTF-8"));
        assert_eq!(text_of("\u{feff}a: 1".as_bytes()).unwrap(), "a: 1");
    }

    #[test]
    fn uris() {
        let cwd = Path::new("/repo");
        assert_eq!(
            artifact_uri(&Input::File("./a b/c.yaml".into()), Some(cwd)),
            "a%20b/c.yaml"
        );
        assert_eq!(
            artifact_uri(&Input::File("./é#~_-.x/c.yaml".into()), Some(cwd)),
            "%C3%A9%23~_-.x/c.yaml"
        );
        assert_eq!(
            artifact_uri(&Input::File("/repo/x/../y.yaml".into()), Some(cwd)),
            "y.yaml"
        );
        assert_eq!(
            artifact_uri(&Input::File("/elsewhere/y.yaml".into()), Some(cwd)),
            "file:///elsewhere/y.yaml"
        );
        assert_eq!(artifact_uri(&Input::Stdin, Some(cwd)), "stdin");
        assert_eq!(display_path(Path::new("./manifests/")), "manifests/");
    }
}
