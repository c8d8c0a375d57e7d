//! Where a finding's path is in a manifest file: the line of the key a path in the API server's
//! form (`spec.versions[0].schema.openAPIV3Schema.properties.spec`, `metadata.labels[app]`)
//! names, in one document of a YAML or JSON file, for SARIF regions and the JSON report.
//!
//! The file is read once with [yaml-rust2](https://crates.io/crates/yaml-rust2)'s event parser,
//! which knows where every key starts (serde's readers do not say), into a tree of keys and their
//! lines; a path is then matched against it. A path the file does not hold whole (a field the
//! change removed) is located at the deepest part it does hold.
//!
//! [`Locator::edit`] turns a finding's fix (remove the key, write another value) into a text
//! edit of the file, for SARIF `fixes`, only where the edit is certain to do exactly that: a key
//! that starts its line in block YAML (whole lines removed), a one-line scalar value (replaced in
//! place). Anything else (flow collections spread over lines, JSON, block scalars, a key after a
//! `- `) gets no edit, only its line.

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// A node of a document: where it is, and its children by key or index.
#[derive(Debug, Default)]
struct Node {
    /// 1-based line where the node's key (or item) starts.
    line: usize,
    /// 0-based column, in characters, where the node's key (or item) starts.
    col: usize,
    /// The last line the node's value occupies (its own line for a scalar).
    last_line: usize,
    /// Whether the node holds a literal or folded block scalar, whose last line is unknown.
    block_scalar: bool,
    /// The node's value when it is a scalar: where it starts and how it is written.
    scalar: Option<Scalar>,
    /// A mapping's entries, in document order.
    entries: Vec<(String, Node)>,
    /// A sequence's items.
    items: Vec<Node>,
}

/// The deepest node of a path a document holds.
struct Found<'a> {
    /// The node.
    node: &'a Node,
    /// The mapping or sequence that holds it.
    parent: &'a Node,
    /// Whether the node is the whole path.
    whole: bool,
}

/// Where a scalar value starts and how it is written.
#[derive(Debug)]
struct Scalar {
    /// 1-based line.
    line: usize,
    /// 0-based column, in characters.
    col: usize,
    /// Its style.
    style: TScalarStyle,
    /// Its value.
    value: String,
}

/// A text edit of a file: the characters from (`start_line`, `start_column`) up to, not
/// including, (`end_line`, `end_column`) become `text`. Lines are 1-based; columns are 1-based and
/// counted in UTF-16 code units, as SARIF counts them by default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// First line of the region.
    pub start_line: usize,
    /// Column of its first character.
    pub start_column: usize,
    /// Line where the region ends.
    pub end_line: usize,
    /// Column just past its last character.
    pub end_column: usize,
    /// What the region becomes.
    pub text: String,
}

/// What a finding's fix asks of the file (see [`syncguard::finding::Fix`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change<'a> {
    /// Remove the key and its value.
    Delete,
    /// Write this value (JSON text, which YAML reads too) instead.
    Replace(&'a str),
}

/// The documents of one file, ready to locate paths in.
#[derive(Debug, Default)]
pub struct Locator {
    documents: Vec<Node>,
    /// The file's lines, without their line ends.
    lines: Vec<String>,
    /// Whether the file is JSON (starts with `{` or `[`), where removing lines may leave a
    /// trailing comma.
    json: bool,
}

impl Locator {
    /// Reads `text` (YAML, or JSON, which YAML reads); a file that does not read gives a locator
    /// that finds nothing.
    pub fn new(text: &str) -> Locator {
        let mut builder = Builder {
            lines: text.lines().map(str::to_string).collect(),
            ..Builder::default()
        };
        let mut parser = Parser::new_from_str(text);
        if parser.load(&mut builder, true).is_err() {
            return Locator::default();
        }
        Locator {
            documents: builder.documents,
            json: text.trim_start().starts_with(['{', '[']),
            lines: builder.lines,
        }
    }

    /// The line of `path` in document `document` (0-based), in item `item` of a List document
    /// when given; the line of the deepest part of the path the document holds, `None` when it
    /// holds none of it.
    pub fn line(&self, document: usize, item: Option<usize>, path: &str) -> Option<usize> {
        self.deepest(document, item, path).map(|found| found.node.line)
    }

    /// The line and column of `path` in document `document` (0-based), in item `item` of a List
    /// document when given: where the key (or the item) of the deepest part of the path the
    /// document holds starts, as [`Locator::line`] finds it. The column is 1-based and counted
    /// in UTF-16 code units, as SARIF and editors count it; `None` when the document holds none
    /// of the path.
    pub fn position(&self, document: usize, item: Option<usize>, path: &str) -> Option<(usize, usize)> {
        let node = self.deepest(document, item, path)?.node;
        let before: String = self.text_of(node.line).chars().take(node.col).collect();
        Some((node.line, utf16_len(&before) + 1))
    }

    /// The edit of the file that applies `change` at `path`, when the document holds the whole
    /// path and the edit is certain to do exactly that (see the module's notes); `None` otherwise.
    pub fn edit(&self, document: usize, item: Option<usize>, path: &str, change: &Change) -> Option<Edit> {
        let found = self.deepest(document, item, path)?;
        if !found.whole {
            return None;
        }
        match change {
            Change::Delete => self.deletion(found.node, found.parent),
            Change::Replace(text) => self.replacement(found.node, text),
        }
    }

    /// The deepest node of `path` the document holds.
    fn deepest(&self, document: usize, item: Option<usize>, path: &str) -> Option<Found<'_>> {
        let mut node = self.documents.get(document)?;
        if let Some(item) = item {
            node = entry(node, "items")?.items.get(item)?;
        }
        let mut rest = path;
        let mut found = None;
        while !rest.is_empty() {
            let Some((next, remaining)) = step(node, rest) else {
                break;
            };
            found = Some(Found {
                node: next,
                parent: node,
                whole: remaining.is_empty(),
            });
            node = next;
            rest = remaining;
        }
        found
    }

    /// The line `number` (1-based), empty past the end.
    fn text_of(&self, number: usize) -> &str {
        number
            .checked_sub(1)
            .and_then(|i| self.lines.get(i))
            .map_or("", String::as_str)
    }

    /// Removes the node's lines, when its key starts its line in block YAML, nothing it holds
    /// ends out of sight (a block scalar), the next line with content is not part of it, and its
    /// parent keeps another entry (an emptied block mapping would read as null).
    fn deletion(&self, node: &Node, parent: &Node) -> Option<Edit> {
        if self.json || node.block_scalar || parent.entries.len() + parent.items.len() < 2 {
            return None;
        }
        let first = self.text_of(node.line);
        let starts_line = first.chars().take(node.col).all(char::is_whitespace);
        if !starts_line || node.last_line < node.line {
            return None;
        }
        let next_content = (node.last_line + 1..=self.lines.len())
            .map(|n| self.text_of(n))
            .find(|line| !line.trim().is_empty() && !line.trim_start().starts_with('#'));
        if let Some(next) = next_content
            && next.chars().take_while(|c| *c == ' ').count() > node.col
        {
            return None;
        }
        // Whole lines, their line end included; the last line of the file has none to take.
        let (end_line, end_column) = if node.last_line < self.lines.len() {
            (node.last_line + 1, 1)
        } else {
            (node.last_line, utf16_len(self.text_of(node.last_line)) + 1)
        };
        Some(Edit {
            start_line: node.line,
            start_column: 1,
            end_line,
            end_column,
            text: String::new(),
        })
    }

    /// Replaces a one-line scalar value as written (plain, or quoted) with `text`.
    fn replacement(&self, node: &Node, text: &str) -> Option<Edit> {
        let scalar = node.scalar.as_ref()?;
        let line = self.text_of(scalar.line);
        let rest: String = line.chars().skip(scalar.col).collect();
        let written = match scalar.style {
            TScalarStyle::Plain => scalar.value.clone(),
            TScalarStyle::SingleQuoted => format!("'{}'", scalar.value.replace('\'', "''")),
            TScalarStyle::DoubleQuoted => double_quoted_prefix(&rest)?.to_string(),
            _ => return None,
        };
        let after = rest.strip_prefix(written.as_str())?;
        // Past the value: nothing, a comment, or what closes it in flow style or JSON.
        let closed = after.trim_start();
        if !(closed.is_empty() || closed.starts_with(['#', ',', '}', ']'])) {
            return None;
        }
        let before: String = line.chars().take(scalar.col).collect();
        let start_column = utf16_len(&before) + 1;
        Some(Edit {
            start_line: scalar.line,
            start_column,
            end_line: scalar.line,
            end_column: start_column + utf16_len(&written),
            text: text.to_string(),
        })
    }
}

/// The double-quoted scalar at the start of `text`, quotes included, as written.
fn double_quoted_prefix(text: &str) -> Option<&str> {
    let mut escaped = false;
    for (i, c) in text.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some(&text[..=i]),
            _ => {}
        }
    }
    None
}

/// Whether `node` is a plain null scalar (what an empty document reads as).
fn is_null(node: &Node) -> bool {
    node.scalar.as_ref().is_some_and(|s| {
        s.style == TScalarStyle::Plain && matches!(s.value.as_str(), "" | "~" | "null" | "Null" | "NULL")
    })
}

/// Length of `text` in UTF-16 code units.
fn utf16_len(text: &str) -> usize {
    text.encode_utf16().count()
}

/// The value of `key` in a mapping node.
fn entry<'n>(node: &'n Node, key: &str) -> Option<&'n Node> {
    node.entries.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// One step along `path` from `node`: the child it names and the rest of the path. Keys may
/// hold dots (`a.b/c` in `properties`), so the longest key of the node that starts the path and
/// ends at a `.`, a `[` or the path's end is taken; `[N]` is an item, `[key]` a key.
fn step<'n, 'p>(node: &'n Node, path: &'p str) -> Option<(&'n Node, &'p str)> {
    let path = path.strip_prefix('.').unwrap_or(path);
    if let Some(inner) = path.strip_prefix('[') {
        let end = inner.find(']')?;
        let (inside, rest) = (&inner[..end], &inner[end + 1..]);
        let child = match inside.parse::<usize>() {
            Ok(index) if !node.items.is_empty() => node.items.get(index)?,
            _ => entry(node, inside)?,
        };
        return Some((child, rest));
    }
    node.entries
        .iter()
        .filter(|(key, _)| {
            path.strip_prefix(key.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('.') || rest.starts_with('['))
        })
        .max_by_key(|(key, _)| key.len())
        .map(|(key, child)| (child, &path[key.len()..]))
}

/// A container the parser has opened and not yet closed.
enum Open {
    /// A mapping, and the key read that awaits its value (with the key's line and column).
    Map(Node, Option<(String, usize, usize)>),
    /// A sequence.
    Seq(Node),
}

/// Builds the trees of a file's documents from the parser's events.
#[derive(Default)]
struct Builder {
    documents: Vec<Node>,
    stack: Vec<Open>,
    /// The file's lines: a collection whose end marker is on a `}` or `]` is a flow one, which
    /// ends on that line (a block collection's end marker is the next token's place instead).
    lines: Vec<String>,
}

impl Builder {
    /// Adds a finished node that starts at (`line`, `col`) to the container it belongs to: a
    /// key's value takes the key's place, an item its own.
    fn add(&mut self, mut node: Node, line: usize, col: usize) {
        match self.stack.last_mut() {
            // An empty (null) document is no document to the scan, which numbers the others.
            None if is_null(&node) => {}
            None => self.documents.push(node),
            Some(Open::Seq(sequence)) => {
                node.line = line;
                node.col = col;
                sequence.last_line = sequence.last_line.max(node.last_line);
                sequence.block_scalar |= node.block_scalar;
                sequence.items.push(node);
            }
            Some(Open::Map(map, pending)) => {
                // A complex key (a mapping or a sequence used as a key) has no line to give.
                if let Some((key, key_line, key_col)) = pending.take() {
                    node.line = key_line;
                    node.col = key_col;
                    map.last_line = map.last_line.max(node.last_line);
                    map.block_scalar |= node.block_scalar;
                    map.entries.push((key, node));
                }
            }
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, event: Event, mark: Marker) {
        let (line, col) = (mark.line(), mark.col());
        let open = |line| Node {
            line,
            col,
            last_line: line,
            ..Node::default()
        };
        match event {
            Event::MappingStart(..) => self.stack.push(Open::Map(open(line), None)),
            Event::SequenceStart(..) => self.stack.push(Open::Seq(open(line))),
            Event::MappingEnd | Event::SequenceEnd => {
                let flow_end = self
                    .lines
                    .get(line.wrapping_sub(1))
                    .and_then(|text| text.chars().nth(col))
                    .is_some_and(|c| c == '}' || c == ']');
                if let Some(Open::Map(mut node, _) | Open::Seq(mut node)) = self.stack.pop() {
                    if flow_end {
                        node.last_line = node.last_line.max(line);
                    }
                    let (start, start_col) = (node.line, node.col);
                    self.add(node, start, start_col);
                }
            }
            Event::Scalar(value, style, ..) => match self.stack.last_mut() {
                Some(Open::Map(_, pending @ None)) => *pending = Some((value, line, col)),
                _ => {
                    let node = Node {
                        last_line: line,
                        block_scalar: matches!(style, TScalarStyle::Literal | TScalarStyle::Folded),
                        scalar: Some(Scalar {
                            line,
                            col,
                            style,
                            value,
                        }),
                        ..Node::default()
                    };
                    self.add(node, line, col);
                }
            },
            Event::Alias(_) => self.add(
                Node {
                    last_line: line,
                    ..Node::default()
                },
                line,
                col,
            ),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFESTS: &str = "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  labels:
    app.kubernetes.io/name: widgets
spec:
  versions:
    - name: v1
      schema:
        openAPIV3Schema:
          properties:
            spec:
              properties:
                a.b/c:
                  type: string
                mode:
                  type: string
---
apiVersion: v1
kind: List
items:
  - kind: ConfigMap
    metadata:
      name: first
  - kind: ConfigMap
    metadata:
      name: second
";

    #[test]
    fn paths_are_found_at_their_keys() {
        let locator = Locator::new(MANIFESTS);
        let line = |path: &str| locator.line(0, None, path);
        assert_eq!(
            line("spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.mode"),
            Some(17)
        );
        assert_eq!(
            line("spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.a.b/c"),
            Some(15)
        );
        assert_eq!(line("metadata.labels[app.kubernetes.io/name]"), Some(6));
        assert_eq!(line("spec.versions[0].name"), Some(9));
        // A removed field is located at the deepest part the file holds.
        assert_eq!(
            line("spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.gone"),
            Some(14)
        );
        assert_eq!(line("status.storedVersions[0]"), None);
        assert_eq!(locator.line(1, Some(1), "metadata.name"), Some(28));
    }

    #[test]
    fn positions_have_the_keys_columns() {
        let locator = Locator::new(MANIFESTS);
        let position = |path: &str| locator.position(0, None, path);
        assert_eq!(position("metadata.labels[app.kubernetes.io/name]"), Some((6, 5)));
        assert_eq!(position("spec.versions[0].name"), Some((9, 7)));
        assert_eq!(locator.position(1, Some(1), "metadata.name"), Some((28, 7)));
        assert_eq!(position("status.storedVersions[0]"), None);
        // Columns count UTF-16 code units: a key after a non-BMP character in flow style.
        let flow = Locator::new("metadata: {\u{1F600}: 1, name: x}\n");
        assert_eq!(flow.position(0, None, "metadata.name"), Some((1, 19)));
    }

    #[test]
    fn empty_documents_are_not_counted_as_the_scan_does_not_count_them() {
        let text = "---\n# Source: chart/templates/empty.yaml\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n~\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: b\n";
        let locator = Locator::new(text);
        assert_eq!(locator.line(0, None, "metadata.name"), Some(7));
        assert_eq!(locator.line(1, None, "metadata.name"), Some(14));
        let documents = crate::input::objects_of(0, "t.yaml", text).documents;
        assert_eq!(documents.iter().map(|d| d.index).collect::<Vec<_>>(), [0, 1]);
    }

    #[test]
    fn json_reads_too() {
        let locator = Locator::new("{\"metadata\": {\n  \"name\": \"x\",\n  \"labels\": {\"a\": \"b\"}}}\n");
        assert_eq!(locator.line(0, None, "metadata.labels[a]"), Some(3));
    }

    const DRIFT: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations: null
  creationTimestamp: null
spec:
  template:
    spec:
      containers:
        - name: web
          env: []
          resources:
            limits:
              cpu: 1000m # one core
            requests: {}
          args:
            - |
              text
      volumes: []
---
kind: ConfigMap
metadata:
  name: only
data:
  a: 'it''s'
";

    /// The file after `edit`.
    fn applied(text: &str, edit: &Edit) -> String {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let offset = |line: usize, column: usize| -> usize {
            let before: usize = lines[..line - 1].iter().map(|l| l.len()).sum();
            // ASCII fixtures: columns are bytes.
            before + column - 1
        };
        let (start, end) = (
            offset(edit.start_line, edit.start_column),
            offset(edit.end_line, edit.end_column),
        );
        format!("{}{}{}", &text[..start], edit.text, &text[end..])
    }

    #[test]
    fn deletions_remove_whole_lines_of_block_yaml() {
        let locator = Locator::new(DRIFT);
        let delete = |path: &str| {
            locator
                .edit(0, None, path, &Change::Delete)
                .map(|edit| applied(DRIFT, &edit))
        };
        let without = delete("metadata.annotations").unwrap();
        assert!(
            without.contains("  name: web\n  creationTimestamp: null\n"),
            "{without}"
        );
        let without = delete("spec.template.spec.containers[0].resources").unwrap();
        assert!(without.contains("          env: []\n          args:\n"), "{without}");
        let without = delete("spec.template.spec.volumes").unwrap();
        assert!(without.contains("              text\n---\n"), "{without}");
        // The key after `- ` does not start its line; a block scalar's end is out of sight; the
        // only key of a mapping would leave it null; a path the file lacks has nothing to remove.
        assert_eq!(delete("spec.template.spec.containers[0].name"), None);
        assert_eq!(delete("spec.template.spec.containers[0].args"), None);
        assert_eq!(locator.edit(1, None, "data.a", &Change::Delete), None);
        assert_eq!(delete("metadata.labels"), None);
    }

    #[test]
    fn replacements_rewrite_one_line_scalars_as_written() {
        let locator = Locator::new(DRIFT);
        let edit = locator
            .edit(
                0,
                None,
                "spec.template.spec.containers[0].resources.limits.cpu",
                &Change::Replace("\"1\""),
            )
            .unwrap();
        assert_eq!((edit.start_line, edit.start_column, edit.end_column), (15, 20, 25));
        assert!(applied(DRIFT, &edit).contains("cpu: \"1\" # one core\n"));
        let quoted = locator.edit(1, None, "data.a", &Change::Replace("\"b\"")).unwrap();
        assert!(applied(DRIFT, &quoted).ends_with("  a: \"b\"\n"));
        // Not a scalar.
        assert_eq!(locator.edit(0, None, "metadata", &Change::Replace("1")), None);

        let json = "{\n  \"spec\": {\n    \"cpu\": \"1000m\",\n    \"x\": null\n  }\n}\n";
        let locator = Locator::new(json);
        let edit = locator.edit(0, None, "spec.cpu", &Change::Replace("\"1\"")).unwrap();
        assert!(applied(json, &edit).contains("\"cpu\": \"1\",\n"));
        // Removing lines of JSON may leave a trailing comma: no edit.
        assert_eq!(locator.edit(0, None, "spec.x", &Change::Delete), None);
    }
}
