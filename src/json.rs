//! The lazy JSON reader of the checks that walk large objects (a CRD's schemas run to megabytes):
//! one pass over the text builds a tree of just the parts a check reads, as its [`Grammar`]
//! says, and leaves every other value as its unread text ([`Node::Raw`]) or skips it
//! ([`Node::Skipped`]). Keys and strings
//! borrow from the text unless they hold escapes; nesting past a limit is skipped, not recursed
//! into ([`Node::TooDeep`]).
//!
//! Written by hand because no crate reads part of a document lazily by a grammar while
//! borrowing the rest: serde_json's `Value` copies everything, and its `RawValue` alone leaves
//! everything unread. crd-schema-fields reads every part ([`Everything`]), crd-safe-upgrade only
//! the schema's `properties` and `items`, comparing the other keywords as text, and sync-drift
//! only what pruning reads of a CRD's schemas, skipping the rest (descriptions, validations).

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// A JSON value as far as a check reads it.
#[derive(Debug, Clone)]
pub enum Node<'j> {
    /// A value its grammar leaves unread: its JSON text.
    Raw(&'j RawValue),
    /// A value its grammar skips: stepped over, neither read nor kept.
    Skipped,
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A number, its value not kept (no check reads one; keeping it would double the size of
    /// every node in a 32-bit module).
    Number,
    /// A string.
    Str(Cow<'j, str>),
    /// An array.
    Array(Vec<Node<'j>>),
    /// An object, keys in document order (duplicates kept).
    Object(Vec<(Cow<'j, str>, Node<'j>)>),
    /// A container nested deeper than the reader's limit; its content was skipped unread.
    TooDeep,
}

impl<'j> Node<'j> {
    /// The value of `key` (the last one, as the API server's decoder keeps the last duplicate).
    pub fn get(&self, key: &str) -> Option<&Node<'j>> {
        match self {
            Node::Object(entries) => entries.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value at a path of object keys.
    pub fn at(&self, keys: &[&str]) -> Option<&Node<'j>> {
        keys.iter().try_fold(self, |node, key| node.get(key))
    }

    /// The string, when the node is one that was read.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// How a value is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read<G> {
    /// Read into a [`Node`], its parts as `G` says.
    Parse(G),
    /// Left as its JSON text ([`Node::Raw`]).
    Raw,
    /// Stepped over ([`Node::Skipped`]).
    Skip,
}

/// Which parts of a document a check reads: given how a container is read, how each of its
/// members (or elements) is.
pub trait Grammar: Copy {
    /// How the value of `key` in an object read as `self` is read.
    fn member(self, key: &str) -> Read<Self>;
    /// How each element of an array read as `self` is read.
    fn element(self) -> Read<Self>;
}

/// The grammar that reads every part.
#[derive(Debug, Clone, Copy)]
pub struct Everything;

impl Grammar for Everything {
    fn member(self, _: &str) -> Read<Self> {
        Read::Parse(Everything)
    }
    fn element(self) -> Read<Self> {
        Read::Parse(Everything)
    }
}

/// Reads JSON text as `grammar` says, containers nested deeper than `max_depth` levels (the root
/// is level 1) skipped as [`Node::TooDeep`].
pub fn read<G: Grammar>(text: &str, grammar: G, max_depth: usize) -> Result<Node<'_>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let node = Seed {
        grammar,
        level: 1,
        max_depth,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok(node)
}

/// Reads an already parsed value whole (the all-in-one hands a check the object a check before
/// it changed), containers nested deeper than `max_depth` skipped as [`Node::TooDeep`].
pub fn read_value(value: &serde_json::Value, max_depth: usize) -> Result<Node<'_>, serde_json::Error> {
    Seed {
        grammar: Everything,
        level: 1,
        max_depth,
    }
    .deserialize(value)
}

/// Reads the value at nesting `level` as `grammar` says.
#[derive(Clone, Copy)]
struct Seed<G> {
    grammar: G,
    level: usize,
    max_depth: usize,
}

impl<G: Grammar> Seed<G> {
    fn child(self, grammar: G) -> Seed<G> {
        Seed {
            grammar,
            level: self.level + 1,
            ..self
        }
    }
}

impl<G: Grammar> Seed<G> {
    /// Reads the next element of `seq` as `read` says.
    fn element<'de, A: SeqAccess<'de>>(self, seq: &mut A, read: Read<G>) -> Result<Option<Node<'de>>, A::Error> {
        match read {
            Read::Parse(grammar) => seq.next_element_seed(self.child(grammar)),
            Read::Raw => Ok(seq.next_element::<&RawValue>()?.map(Node::Raw)),
            Read::Skip => Ok(seq.next_element::<IgnoredAny>()?.map(|_| Node::Skipped)),
        }
    }

    /// Reads the next value of `map` as `read` says.
    fn value<'de, A: MapAccess<'de>>(self, map: &mut A, read: Read<G>) -> Result<Node<'de>, A::Error> {
        match read {
            Read::Parse(grammar) => map.next_value_seed(self.child(grammar)),
            Read::Raw => map.next_value::<&RawValue>().map(Node::Raw),
            Read::Skip => map.next_value::<IgnoredAny>().map(|_| Node::Skipped),
        }
    }
}

impl<'de, G: Grammar> DeserializeSeed<'de> for Seed<G> {
    type Value = Node<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, G: Grammar> Visitor<'de> for Seed<G> {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Node<'de>, E> {
        Ok(Node::Bool(value))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Node<'de>, E> {
        Ok(Node::Number)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Node<'de>, E> {
        Ok(Node::Number)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Node<'de>, E> {
        Ok(Node::Number)
    }

    fn visit_unit<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }

    fn visit_none<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }

    fn visit_borrowed_str<E>(self, value: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Borrowed(value)))
    }

    fn visit_str<E>(self, value: &str) -> Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Owned(value.to_owned())))
    }

    fn visit_string<E>(self, value: String) -> Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Owned(value)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        if self.level > self.max_depth {
            // serde_json skips an ignored value with a loop, not recursion.
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(Node::TooDeep);
        }
        let mut items = Vec::new();
        let read = self.grammar.element();
        while let Some(item) = self.element(&mut seq, read)? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        if self.level > self.max_depth {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(Node::TooDeep);
        }
        let mut entries = Vec::new();
        // Keys borrowed from the JSON text when they hold no escapes.
        while let Some(crate::admission::Text(key)) = map.next_key()? {
            let value = self.value(&mut map, self.grammar.member(&key))?;
            entries.push((key, value));
        }
        Ok(Node::Object(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `properties` and its members, nothing else.
    #[derive(Clone, Copy)]
    enum Props {
        Schema,
        Names,
    }

    impl Grammar for Props {
        fn member(self, key: &str) -> Read<Self> {
            match (self, key) {
                (Props::Schema, "properties") => Read::Parse(Props::Names),
                (Props::Schema, "description") => Read::Skip,
                (Props::Schema, _) => Read::Raw,
                (Props::Names, _) => Read::Parse(Props::Schema),
            }
        }
        fn element(self) -> Read<Self> {
            Read::Raw
        }
    }

    #[test]
    fn reads_what_the_grammar_names_and_borrows_the_rest() {
        let text =
            r#"{"type":"object","description":"a \"quoted\" text","properties":{"a":{"type":"string"}},"enum":[1,2]}"#;
        let node = read(text, Props::Schema, 10).unwrap();
        assert!(matches!(node.get("description"), Some(Node::Skipped)), "{node:?}");
        assert!(matches!(node.get("enum"), Some(Node::Raw(raw)) if raw.get() == "[1,2]"));
        let a = node.at(&["properties", "a"]).unwrap();
        assert!(matches!(a.get("type"), Some(Node::Raw(raw)) if raw.get() == "\"string\""));
        let all = read(text, Everything, 10).unwrap();
        assert_eq!(all.get("description").and_then(Node::as_str), Some("a \"quoted\" text"));
        assert_eq!(
            all.at(&["properties", "a", "type"]).and_then(Node::as_str),
            Some("string")
        );
        assert!(matches!(all.get("type"), Some(Node::Str(Cow::Borrowed("object")))));
        assert!(matches!(all.get("enum"), Some(Node::Array(items)) if matches!(items[1], Node::Number)));
        let flags = read(r#"{"a":true,"b":null}"#, Everything, 10).unwrap();
        assert!(matches!(flags.get("a"), Some(Node::Bool(true))) && matches!(flags.get("b"), Some(Node::Null)));
    }

    #[test]
    fn deep_nesting_is_skipped_without_recursion() {
        let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
        let node = read(&deep, Everything, 3).unwrap();
        let Node::Array(one) = &node else { panic!("{node:?}") };
        let Node::Array(two) = &one[0] else { panic!("{node:?}") };
        let Node::Array(three) = &two[0] else {
            panic!("{node:?}")
        };
        assert!(matches!(three[0], Node::TooDeep));
        let value: serde_json::Value = serde_json::from_str(r#"{"a":{"b":"c"}}"#).unwrap();
        let parsed = read_value(&value, 10).unwrap();
        assert_eq!(parsed.at(&["a", "b"]).and_then(Node::as_str), Some("c"));
    }
}
