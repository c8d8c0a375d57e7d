//! Where a finding's path is in a manifest file: the line of the key a path in the API server's
//! form (`spec.versions[0].schema.openAPIV3Schema.properties.spec`, `metadata.labels[app]`)
//! names, in one document of a YAML or JSON file, for SARIF regions and the JSON report.
//!
//! The file is read once with [yaml-rust2](https://crates.io/crates/yaml-rust2)'s event parser,
//! which knows where every key starts (serde's readers do not say), into a tree of keys and their
//! lines; a path is then matched against it. A path the file does not hold whole (a field the
//! change removed) is located at the deepest part it does hold.

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

/// A node of a document: its line, and its children by key or index.
#[derive(Debug, Default)]
struct Node {
    /// 1-based line where the node's key (or item) starts.
    line: usize,
    /// A mapping's entries, in document order.
    entries: Vec<(String, Node)>,
    /// A sequence's items.
    items: Vec<Node>,
}

/// The documents of one file, ready to locate paths in.
#[derive(Debug, Default)]
pub struct Locator {
    documents: Vec<Node>,
}

impl Locator {
    /// Reads `text` (YAML, or JSON, which YAML reads); a file that does not read gives a locator
    /// that finds nothing.
    pub fn new(text: &str) -> Locator {
        let mut builder = Builder::default();
        let mut parser = Parser::new_from_str(text);
        if parser.load(&mut builder, true).is_err() {
            return Locator::default();
        }
        Locator {
            documents: builder.documents,
        }
    }

    /// The line of `path` in document `document` (0-based), in item `item` of a List document
    /// when given; the line of the deepest part of the path the document holds, `None` when it
    /// holds none of it.
    pub fn line(&self, document: usize, item: Option<usize>, path: &str) -> Option<usize> {
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
            node = next;
            found = Some(node.line);
            rest = remaining;
        }
        found
    }
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
    /// A mapping, and the key read that awaits its value (with the key's line).
    Map(Node, Option<(String, usize)>),
    /// A sequence.
    Seq(Node),
}

/// Builds the trees of a file's documents from the parser's events.
#[derive(Default)]
struct Builder {
    documents: Vec<Node>,
    stack: Vec<Open>,
}

impl Builder {
    /// Adds a finished node that starts at `line` to the container it belongs to: a key's value
    /// takes the key's line, an item its own.
    fn add(&mut self, mut node: Node, line: usize) {
        match self.stack.last_mut() {
            None => self.documents.push(node),
            Some(Open::Seq(sequence)) => {
                node.line = line;
                sequence.items.push(node);
            }
            Some(Open::Map(map, pending)) => {
                // A complex key (a mapping or a sequence used as a key) has no line to give.
                if let Some((key, key_line)) = pending.take() {
                    node.line = key_line;
                    map.entries.push((key, node));
                }
            }
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, event: Event, mark: Marker) {
        let line = mark.line();
        match event {
            Event::MappingStart(..) => self.stack.push(Open::Map(
                Node {
                    line,
                    ..Node::default()
                },
                None,
            )),
            Event::SequenceStart(..) => self.stack.push(Open::Seq(Node {
                line,
                ..Node::default()
            })),
            Event::MappingEnd | Event::SequenceEnd => {
                if let Some(Open::Map(node, _) | Open::Seq(node)) = self.stack.pop() {
                    let start = node.line;
                    self.add(node, start);
                }
            }
            Event::Scalar(value, ..) => match self.stack.last_mut() {
                Some(Open::Map(_, pending @ None)) => *pending = Some((value, line)),
                _ => self.add(Node::default(), line),
            },
            Event::Alias(_) => self.add(Node::default(), line),
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
    fn json_reads_too() {
        let locator = Locator::new("{\"metadata\": {\n  \"name\": \"x\",\n  \"labels\": {\"a\": \"b\"}}}\n");
        assert_eq!(locator.line(0, None, "metadata.labels[a]"), Some(3));
    }
}
