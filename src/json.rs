//! The lazy JSON reader of the checks that walk large objects (a CRD's schemas run to megabytes):
//! one pass over the text builds a tree of just the parts a check reads, as its [`Grammar`]
//! says, and leaves every other value as its unread text ([`Node::Raw`]) or skips it
//! ([`Node::Skipped`]). Keys and strings
//! borrow from the text unless they hold escapes; nesting past a limit is skipped, not recursed
//! into ([`Node::TooDeep`]). A tree read whole ([`Everything`]) holds what serde_json's `Value`
//! would: [`Members`] sees an object's members as `Value`'s map does, and [`Canonical`] prints
//! a node as `Value` prints.
//!
//! It is the core's one model of a JSON document: every check of a request judges the same tree
//! of its object (`crate::check::Objects`), and the serde views of Kubernetes objects read a tree
//! as they read text (`&Node` is a serde [`Deserializer`]).
//!
//! Written by hand because no crate reads part of a document lazily by a grammar while
//! borrowing the rest: serde_json's `Value` copies everything, and its `RawValue` alone leaves
//! everything unread. crd-schema-fields reads every part ([`Everything`]), crd-safe-upgrade only
//! the schema's `properties` and `items`, comparing the other keywords as text, and sync-drift
//! the whole object and its last-applied manifest, and only what pruning reads of a CRD's schemas,
//! skipping the rest (descriptions, validations).

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::fmt;

/// A 64-bit number kept 4-byte aligned: a plain `u64` or `f64` aligns to 8 bytes on wasm32,
/// which would align every [`Node`] to 8 and grow each object entry (key and node) from 28
/// bytes to 32 in a policy module.
#[derive(Clone, Copy)]
#[repr(C, packed(4))]
pub struct Bits(u64);

impl fmt::Debug for Bits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bits = self.0;
        write!(f, "{bits:#x}")
    }
}

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
    /// A non-negative integer (as serde_json's `Value` keeps it: a `u64`).
    U64(Bits),
    /// A negative integer (an `i64`'s bits).
    I64(Bits),
    /// Any other number (an `f64`'s bits, finite: serde_json refuses what overflows).
    F64(Bits),
    /// A string.
    Str(Cow<'j, str>),
    /// An array.
    Array(Vec<Node<'j>>),
    /// An object, keys in document order (duplicates kept).
    Object(Vec<(Cow<'j, str>, Node<'j>)>),
    /// A container nested deeper than the reader's limit; its content was skipped unread.
    TooDeep,
}

// A number keeps a node at 16 bytes and an object entry at 28 in a policy module.
#[cfg(target_arch = "wasm32")]
const _: () = assert!(std::mem::size_of::<Node<'_>>() == 16 && std::mem::size_of::<(Cow<'_, str>, Node<'_>)>() == 28);

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

    /// The boolean, when the node is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Node::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number, when the node is one.
    pub fn number(&self) -> Option<Number> {
        match *self {
            Node::U64(Bits(bits)) => Some(Number::U64(bits)),
            Node::I64(Bits(bits)) => Some(Number::I64(bits as i64)),
            Node::F64(Bits(bits)) => Some(Number::F64(f64::from_bits(bits))),
            _ => None,
        }
    }

    /// Whether the node is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Node::Null)
    }

    /// The entries of an object, in document order (duplicates kept).
    pub fn as_object(&self) -> Option<&[(Cow<'j, str>, Node<'j>)]> {
        match self {
            Node::Object(entries) => Some(entries),
            _ => None,
        }
    }
}

/// A number of a [`Node`], as serde_json's `Value` keeps it.
#[derive(Debug, Clone, Copy)]
pub enum Number {
    /// A non-negative integer.
    U64(u64),
    /// A negative integer.
    I64(i64),
    /// Any other number.
    F64(f64),
}

impl Number {
    /// The number as an `f64` (integers rounded as `as` rounds them, as serde_json's
    /// `Number::as_f64` does).
    pub fn as_f64(self) -> f64 {
        match self {
            Number::U64(n) => n as f64,
            Number::I64(n) => n as f64,
            Number::F64(f) => f,
        }
    }

    /// Whether the number is neither integer kind (it was written with a fraction or an
    /// exponent, or does not fit 64 bits).
    pub fn is_f64(self) -> bool {
        matches!(self, Number::F64(_))
    }
}

impl PartialEq for Number {
    /// Equal as serde_json's `Number`s are: the same kind and value (`1` and `1.0` differ).
    fn eq(&self, other: &Number) -> bool {
        match (*self, *other) {
            (Number::U64(a), Number::U64(b)) => a == b,
            (Number::I64(a), Number::I64(b)) => a == b,
            (Number::F64(a), Number::F64(b)) => a == b,
            _ => false,
        }
    }
}

impl fmt::Display for Number {
    /// The number as serde_json prints it (integers exactly, other numbers as its `f64`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let number = match *self {
            Number::U64(n) => serde_json::Number::from(n),
            Number::I64(n) => serde_json::Number::from(n),
            Number::F64(x) => serde_json::Number::from_f64(x).ok_or(fmt::Error)?,
        };
        fmt::Display::fmt(&number, f)
    }
}

/// An object's members as serde_json's `Value` map holds them: sorted by key (its map is a
/// `BTreeMap`), the last of duplicated keys. Borrowed when the document has them so already
/// (Kubewarden sorts keys), else a sorted list of references.
#[derive(Debug, Clone)]
pub enum Members<'n, 'j> {
    /// The entries themselves, strictly sorted.
    InOrder(&'n [(Cow<'j, str>, Node<'j>)]),
    /// References to the entries, sorted, duplicates dropped.
    Sorted(Vec<&'n (Cow<'j, str>, Node<'j>)>),
}

impl<'n, 'j> Members<'n, 'j> {
    /// The members of an object's entries.
    pub fn of(entries: &'n [(Cow<'j, str>, Node<'j>)]) -> Members<'n, 'j> {
        if entries.windows(2).all(|pair| pair[0].0 < pair[1].0) {
            return Members::InOrder(entries);
        }
        let mut sorted: Vec<_> = entries.iter().collect();
        sort_keeping_last(&mut sorted, |entry| &*entry.0);
        Members::Sorted(sorted)
    }

    /// The members of `node`, or none when it is not an object.
    pub fn of_node(node: &'n Node<'j>) -> Members<'n, 'j> {
        Members::of(node.as_object().unwrap_or_default())
    }

    /// How many members.
    pub fn len(&self) -> usize {
        match self {
            Members::InOrder(entries) => entries.len(),
            Members::Sorted(sorted) => sorted.len(),
        }
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The member at `index` in key order.
    fn at(&self, index: usize) -> &'n (Cow<'j, str>, Node<'j>) {
        match self {
            Members::InOrder(entries) => &entries[index],
            Members::Sorted(sorted) => sorted[index],
        }
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&'n Node<'j>> {
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let middle = low + (high - low) / 2;
            let (k, value) = self.at(middle);
            match k.as_ref().cmp(key) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Some(value),
            }
        }
        None
    }

    /// The members, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&'n str, &'n Node<'j>)> + '_ {
        (0..self.len()).map(|i| {
            let (key, value) = self.at(i);
            (key.as_ref(), value)
        })
    }
}

/// Sorts an object's entries (or any keyed pairs) as serde_json's `Value` map holds them: by key,
/// the last of duplicated keys, as the API server's decoder keeps it (a tree kept for many
/// lookups, sorted once, reads through [`Members`] without a copy).
pub fn sort_members<T>(entries: &mut Vec<(Cow<'_, str>, T)>) {
    sort_keeping_last(entries, |entry| &*entry.0);
}

/// Sorts `items` by `key`, keeping the last of items with equal keys.
fn sort_keeping_last<T>(items: &mut Vec<T>, key: impl Fn(&T) -> &str) {
    // Stable: items of equal keys stay in document order.
    items.sort_by(|a, b| key(a).cmp(key(b)));
    items.dedup_by(|later, kept| {
        let same = key(later) == key(kept);
        if same {
            std::mem::swap(later, kept);
        }
        same
    });
}

/// A node printed (serialized) as serde_json prints the `Value` read from the same text:
/// members sorted by key, the last of duplicates, numbers as [`Number`] prints them. An unread
/// value prints as its text; a skipped one, or one nested too deep, as `null`.
#[derive(Debug, Clone, Copy)]
pub struct Canonical<'n, 'j>(pub &'n Node<'j>);

impl Serialize for Canonical<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Node::Raw(raw) => raw.serialize(serializer),
            Node::Skipped | Node::Null | Node::TooDeep => serializer.serialize_unit(),
            Node::Bool(b) => serializer.serialize_bool(*b),
            Node::U64(_) | Node::I64(_) | Node::F64(_) => match self.0.number() {
                Some(Number::U64(n)) => serializer.serialize_u64(n),
                Some(Number::I64(n)) => serializer.serialize_i64(n),
                Some(Number::F64(x)) => serializer.serialize_f64(x),
                None => serializer.serialize_unit(),
            },
            Node::Str(text) => serializer.serialize_str(text),
            Node::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&Canonical(item))?;
                }
                seq.end()
            }
            Node::Object(entries) => {
                let members = Members::of(entries);
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (key, value) in members.iter() {
                    map.serialize_entry(key, &Canonical(value))?;
                }
                map.end()
            }
        }
    }
}

impl fmt::Display for Canonical<'_, '_> {
    /// The compact JSON text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&serde_json::to_string(self).map_err(|_| fmt::Error)?)
    }
}

/// A tree read as a serde [`Deserializer`], so that the checks' serde views (a Job, a CRD's
/// versions, an object's metadata) read the request's one tree instead of its text again. A
/// value left unread ([`Node::Raw`]) is read from its text by serde_json, so a view's borrowed
/// [`RawValue`] fields borrow from the request where the grammar left them unread. A skipped
/// value reads as `null`; one nested too deep is an error, as serde_json's reader gives.
impl<'de> Deserializer<'de> for &Node<'de> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self {
            Node::Raw(raw) => serde_json::Deserializer::from_str(raw.get()).deserialize_any(visitor),
            Node::Skipped | Node::Null => visitor.visit_unit(),
            Node::Bool(b) => visitor.visit_bool(*b),
            Node::U64(_) | Node::I64(_) | Node::F64(_) => match self.number() {
                Some(Number::U64(n)) => visitor.visit_u64(n),
                Some(Number::I64(n)) => visitor.visit_i64(n),
                Some(Number::F64(x)) => visitor.visit_f64(x),
                None => visitor.visit_unit(),
            },
            Node::Str(Cow::Borrowed(text)) => visitor.visit_borrowed_str(text),
            Node::Str(Cow::Owned(text)) => visitor.visit_str(text),
            Node::Array(items) => {
                let mut seq = serde::de::value::SeqDeserializer::new(items.iter());
                let value = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(value)
            }
            Node::Object(entries) => visitor.visit_map(EntriesAccess {
                entries: entries.iter(),
                value: None,
            }),
            Node::TooDeep => Err(serde::de::Error::custom("recursion limit exceeded")),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self {
            Node::Raw(raw) => serde_json::Deserializer::from_str(raw.get()).deserialize_option(visitor),
            Node::Skipped | Node::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self {
            // serde_json's `RawValue` is a newtype only its own reader gives.
            Node::Raw(raw) => serde_json::Deserializer::from_str(raw.get()).deserialize_newtype_struct(name, visitor),
            // A member a view leaves unread was read into the tree: there is no text to give.
            _ if name == crate::admission::Unread::NAME => visitor.visit_unit(),
            _ => visitor.visit_newtype_struct(self),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self {
            Node::Raw(raw) => serde_json::Deserializer::from_str(raw.get()).deserialize_enum(name, variants, visitor),
            Node::Str(text) => visitor.visit_enum(serde::de::value::StrDeserializer::<serde_json::Error>::new(text)),
            _ => self.deserialize_any(visitor),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

impl<'de> serde::de::IntoDeserializer<'de, serde_json::Error> for &Node<'de> {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

/// An object's entries as a serde map, keys borrowed from the text where the tree does.
struct EntriesAccess<'n, 'de> {
    entries: std::slice::Iter<'n, (Cow<'de, str>, Node<'de>)>,
    value: Option<&'n Node<'de>>,
}

impl<'n, 'de> MapAccess<'de> for EntriesAccess<'n, 'de> {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Self::Error> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        match key {
            Cow::Borrowed(key) => seed
                .deserialize(serde::de::value::BorrowedStrDeserializer::<serde_json::Error>::new(key))
                .map(Some),
            Cow::Owned(key) => seed
                .deserialize(serde::de::value::StrDeserializer::<serde_json::Error>::new(key))
                .map(Some),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Self::Error> {
        let value = self
            .value
            .take()
            .ok_or_else(|| <serde_json::Error as serde::de::Error>::custom("a value before its key"))?;
        seed.deserialize(value)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
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

/// An object's entries, as [`read`] reads them (document order, duplicates kept).
pub type Entries<'n, 'j> = &'n [(Cow<'j, str>, Node<'j>)];

/// Reads JSON text as `grammar` says, containers nested deeper than `max_depth` levels (the root
/// is level 1) skipped as [`Node::TooDeep`].
pub fn read<G: Grammar>(text: &str, grammar: G, max_depth: usize) -> Result<Node<'_>, serde_json::Error> {
    read_noting_depth(text, grammar, max_depth).map(|(node, _)| node)
}

/// [`read`], and the deepest level a container was read at (0: the text is a scalar): a tree
/// read with a larger `max_depth` is the tree [`read`] with `max_depth` at least that deep gives
/// (the all-in-one reads a CRD once for two checks with different limits).
pub fn read_noting_depth<G: Grammar>(
    text: &str,
    grammar: G,
    max_depth: usize,
) -> Result<(Node<'_>, usize), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let read = read_from(&mut de, grammar, max_depth)?;
    de.end()?;
    Ok(read)
}

/// [`read_noting_depth`] of the value `deserializer` holds: the request's reader reads its object
/// so, in the request's own pass (`crate::check`'s reader).
pub fn read_from<'de, D: Deserializer<'de>, G: Grammar>(
    deserializer: D,
    grammar: G,
    max_depth: usize,
) -> Result<(Node<'de>, usize), D::Error> {
    let (deepest, scratch) = (Cell::new(0), Scratch::default());
    let node = Seed {
        grammar,
        level: 1,
        max_depth,
        deepest: &deepest,
        scratch: &scratch,
    }
    .deserialize(deserializer)?;
    Ok((node, deepest.get()))
}

/// [`read_noting_depth`] of `text` with [`Everything`], except the root's first member `key` when
/// its value is exactly `known` (the same tree: the same members in the same order, duplicates
/// included, and strings and numbers as [`Node`] holds them): that value is compared with `known`
/// as it is read, nothing built, and left [`Node::Skipped`]; `true` says so. The depth noted is
/// the one [`read_noting_depth`] would note. When the value differs (or the text is no object, or
/// no JSON), the text is read again whole, as [`read_noting_depth`] reads it, errors included: a
/// last-applied manifest whose `spec` is the object's own is thus read once, not built twice.
pub fn read_unless_known<'j>(
    text: &'j str,
    key: &str,
    known: &Node<'_>,
    max_depth: usize,
) -> Result<(Node<'j>, usize, bool), serde_json::Error> {
    if max_depth >= 2 {
        let (deepest, scratch) = (Cell::new(0), Scratch::default());
        let root = Unless {
            key,
            known,
            seed: Seed {
                grammar: Everything,
                level: 1,
                max_depth,
                deepest: &deepest,
                scratch: &scratch,
            },
        };
        let mut de = serde_json::Deserializer::from_str(text);
        // Any error (the value differs, or the text is not JSON) is found again, or not, by the
        // whole read below.
        if let Ok((node, skipped)) = de.deserialize_map(root)
            && de.end().is_ok()
        {
            return Ok((node, deepest.get(), skipped));
        }
    }
    read_noting_depth(text, Everything, max_depth).map(|(node, deepest)| (node, deepest, false))
}

/// The root of [`read_unless_known`]: an object, its first member `key` compared with `known`.
struct Unless<'c, 'k, 'j> {
    key: &'c str,
    known: &'c Node<'k>,
    seed: Seed<'c, 'j, Everything>,
}

impl<'de> Visitor<'de> for Unless<'_, '_, 'de> {
    type Value = (Node<'de>, bool);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let seed = self.seed;
        seed.deepest.set(seed.deepest.get().max(seed.level));
        let mut entries = Vec::new();
        let mut skipped = false;
        while let Some(crate::admission::Text(key)) = map.next_key()? {
            let value = if !skipped && key == self.key {
                skipped = true;
                map.next_value_seed(Same {
                    known: self.known,
                    level: seed.level + 1,
                    max_depth: seed.max_depth,
                    deepest: seed.deepest,
                })?;
                Node::Skipped
            } else {
                map.next_value_seed(seed.child(Everything))?
            };
            entries.push((key, value));
        }
        Ok((Node::Object(entries), skipped))
    }
}

/// Reads a value at nesting `level`, building nothing, and fails as soon as it is not `known`
/// (or nests a container deeper than `max_depth`, which a whole read would cut off).
struct Same<'c, 'k> {
    known: &'c Node<'k>,
    level: usize,
    max_depth: usize,
    deepest: &'c Cell<usize>,
}

impl<'c, 'k> Same<'c, 'k> {
    /// The error that stops the read where the value differs.
    fn differs<E: serde::de::Error>() -> E {
        E::custom("not the known value")
    }

    /// `Ok` when `same`.
    fn is<E: serde::de::Error>(same: bool) -> Result<(), E> {
        if same { Ok(()) } else { Err(Self::differs()) }
    }

    /// Whether a container at this level may be read, as a whole read would read it.
    fn enter<E: serde::de::Error>(&self) -> Result<(), E> {
        if self.level > self.max_depth {
            return Err(Self::differs());
        }
        self.deepest.set(self.deepest.get().max(self.level));
        Ok(())
    }

    /// The same reader for a value `known` holds, one level down.
    fn within(&self, known: &'c Node<'k>) -> Same<'c, 'k> {
        Same {
            known,
            level: self.level + 1,
            max_depth: self.max_depth,
            deepest: self.deepest,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Same<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Same<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    // Each scalar as [`Seed`] reads it, compared with the known node.
    fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<(), E> {
        Self::is(matches!(self.known, Node::Bool(known) if *known == value))
    }

    fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<(), E> {
        match u64::try_from(value) {
            Ok(value) => self.visit_u64(value),
            Err(_) => Self::is(matches!(self.known.number(), Some(Number::I64(known)) if known == value)),
        }
    }

    fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<(), E> {
        Self::is(matches!(self.known.number(), Some(Number::U64(known)) if known == value))
    }

    fn visit_f64<E: serde::de::Error>(self, value: f64) -> Result<(), E> {
        Self::is(matches!(self.known.number(), Some(Number::F64(known)) if known.to_bits() == value.to_bits()))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Self::is(self.known.is_null())
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<(), E> {
        Self::is(self.known.is_null())
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<(), E> {
        Self::is(self.known.as_str() == Some(value))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Node::Array(items) = self.known else {
            return Err(Self::differs());
        };
        self.enter()?;
        for item in items {
            if seq.next_element_seed(self.within(item))?.is_none() {
                return Err(Self::differs());
            }
        }
        match seq.next_element::<IgnoredAny>()? {
            None => Ok(()),
            Some(_) => Err(Self::differs()),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Node::Object(entries) = self.known else {
            return Err(Self::differs());
        };
        self.enter()?;
        for (known_key, value) in entries {
            match map.next_key::<crate::admission::Text>()? {
                Some(crate::admission::Text(key)) if key == *known_key => map.next_value_seed(self.within(value))?,
                _ => return Err(Self::differs()),
            }
        }
        match map.next_key::<IgnoredAny>()? {
            None => Ok(()),
            Some(_) => Err(Self::differs()),
        }
    }
}

/// Reads an already parsed value whole (the all-in-one hands a check the object a check before
/// it changed), containers nested deeper than `max_depth` skipped as [`Node::TooDeep`].
pub fn read_value(value: &serde_json::Value, max_depth: usize) -> Result<Node<'_>, serde_json::Error> {
    read_value_noting_depth(value, max_depth).map(|(node, _)| node)
}

/// [`read_value`], and the deepest level a container was read at ([`read_noting_depth`]).
pub fn read_value_noting_depth(
    value: &serde_json::Value,
    max_depth: usize,
) -> Result<(Node<'_>, usize), serde_json::Error> {
    let (deepest, scratch) = (Cell::new(0), Scratch::default());
    let node = Seed {
        grammar: Everything,
        level: 1,
        max_depth,
        deepest: &deepest,
        scratch: &scratch,
    }
    .deserialize(value)?;
    Ok((node, deepest.get()))
}

/// The members and elements of the containers being read, one stack for the whole document: a
/// container's are pushed as they are read and moved into one allocation of their exact number
/// when it ends (a `Vec` grown by pushes reallocates at every doubling and keeps up to half its
/// room unused, which a fresh instance pays in pages first touched).
#[derive(Default)]
struct Scratch<'j> {
    entries: RefCell<Vec<(Cow<'j, str>, Node<'j>)>>,
    items: RefCell<Vec<Node<'j>>>,
}

/// Reads the value at nesting `level` as `grammar` says.
struct Seed<'c, 'j, G> {
    grammar: G,
    level: usize,
    max_depth: usize,
    /// The deepest level a container was read at so far.
    deepest: &'c Cell<usize>,
    /// The containers being read.
    scratch: &'c Scratch<'j>,
}

impl<G: Copy> Clone for Seed<'_, '_, G> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<G: Copy> Copy for Seed<'_, '_, G> {}

impl<G: Grammar> Seed<'_, '_, G> {
    fn child(self, grammar: G) -> Self {
        Seed {
            grammar,
            level: self.level + 1,
            ..self
        }
    }
}

impl<'de, G: Grammar> Seed<'_, 'de, G> {
    /// Reads the next element of `seq` as `read` says.
    fn element<A: SeqAccess<'de>>(self, seq: &mut A, read: Read<G>) -> Result<Option<Node<'de>>, A::Error> {
        match read {
            Read::Parse(grammar) => seq.next_element_seed(self.child(grammar)),
            Read::Raw => Ok(seq.next_element::<&RawValue>()?.map(Node::Raw)),
            Read::Skip => Ok(seq.next_element::<IgnoredAny>()?.map(|_| Node::Skipped)),
        }
    }

    /// Reads the next value of `map` as `read` says.
    fn value<A: MapAccess<'de>>(self, map: &mut A, read: Read<G>) -> Result<Node<'de>, A::Error> {
        match read {
            Read::Parse(grammar) => map.next_value_seed(self.child(grammar)),
            Read::Raw => map.next_value::<&RawValue>().map(Node::Raw),
            Read::Skip => map.next_value::<IgnoredAny>().map(|_| Node::Skipped),
        }
    }
}

impl<'de, G: Grammar> DeserializeSeed<'de> for Seed<'_, 'de, G> {
    type Value = Node<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, G: Grammar> Visitor<'de> for Seed<'_, 'de, G> {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Node<'de>, E> {
        Ok(Node::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Node<'de>, E> {
        // A non-negative one is a `u64`, as in serde_json's `Value` (so `0` equals `0`).
        Ok(match u64::try_from(value) {
            Ok(value) => Node::U64(Bits(value)),
            Err(_) => Node::I64(Bits(value as u64)),
        })
    }

    fn visit_u64<E>(self, value: u64) -> Result<Node<'de>, E> {
        Ok(Node::U64(Bits(value)))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Node<'de>, E> {
        Ok(Node::F64(Bits(value.to_bits())))
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
        self.deepest.set(self.deepest.get().max(self.level));
        let start = self.scratch.items.borrow().len();
        let read = self.grammar.element();
        while let Some(item) = self.element(&mut seq, read)? {
            self.scratch.items.borrow_mut().push(item);
        }
        Ok(Node::Array(self.scratch.items.borrow_mut().drain(start..).collect()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        if self.level > self.max_depth {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(Node::TooDeep);
        }
        self.deepest.set(self.deepest.get().max(self.level));
        let start = self.scratch.entries.borrow().len();
        // Keys borrowed from the JSON text when they hold no escapes.
        while let Some(crate::admission::Text(key)) = map.next_key()? {
            let value = self.value(&mut map, self.grammar.member(&key))?;
            self.scratch.entries.borrow_mut().push((key, value));
        }
        Ok(Node::Object(self.scratch.entries.borrow_mut().drain(start..).collect()))
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
        assert!(
            matches!(all.get("enum"), Some(Node::Array(items)) if matches!(items[1].number(), Some(Number::U64(2))))
        );
        let flags = read(r#"{"a":true,"b":null}"#, Everything, 10).unwrap();
        assert!(matches!(flags.get("a"), Some(Node::Bool(true))) && matches!(flags.get("b"), Some(Node::Null)));
    }

    /// Read whole, a tree holds what serde_json's `Value` holds: the same members (sorted, the
    /// last of duplicates), numbers of the same kind and value, and it prints byte for byte as
    /// the `Value` prints.
    #[test]
    fn a_tree_read_whole_prints_and_looks_up_as_a_value() {
        let texts = [
            r#"{"b":1,"a":[1,-2,0,-0,1.0,1.5,-0.0,0.1,1e20,1.5e-7,2e-308,5e-324,1.7976931348623157e308]}"#,
            r#"[18446744073709551615,18446744073709551616,-9223372036854775808,-9223372036854775809,123456789012345678901234567890,3.0e2]"#,
            "[1E400]",
            r#"{"z":{"k":"first","k":"last","a\"b":"\u0000\u001f\u2028\ud83d\ude00é\/\\"},"z":{"k":"only"},"":null,"é":true,"e":false}"#,
            r#"{"c":{},"b":[],"a":[{"y":1,"x":[{"q":"r"}]}]}"#,
        ];
        for text in texts {
            let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
                // serde_json refuses a number that overflows an f64; so does the reader.
                assert!(read(text, Everything, usize::MAX).is_err(), "{text}");
                continue;
            };
            let node = read(text, Everything, usize::MAX).unwrap();
            assert_eq!(Canonical(&node).to_string(), value.to_string(), "{text}");
            assert_eq!(
                Canonical(&read_value(&value, usize::MAX).unwrap()).to_string(),
                value.to_string()
            );
            if let (Some(entries), Some(map)) = (node.as_object(), value.as_object()) {
                let members = Members::of(entries);
                assert_eq!(
                    members.iter().map(|(k, _)| k).collect::<Vec<_>>(),
                    map.keys().collect::<Vec<_>>()
                );
                for (key, value) in map {
                    let found = members
                        .get(key)
                        .map(|node| serde_json::to_value(Canonical(node)).unwrap());
                    assert_eq!(found.as_ref(), Some(value), "{key}");
                    assert_eq!(node.get(key).map(|n| Canonical(n).to_string()), Some(value.to_string()));
                }
                assert_eq!(members.get("absent").map(|_| ()), None);
            }
        }
        let numbers = read("[1,1.0,-1,0.5]", Everything, 10).unwrap();
        let Node::Array(numbers) = &numbers else { panic!() };
        let numbers: Vec<Number> = numbers.iter().filter_map(Node::number).collect();
        assert!(
            matches!(numbers[..], [Number::U64(1), Number::F64(one), Number::I64(-1), Number::F64(half)] if one == 1.0 && half == 0.5)
        );
        // As serde_json's `Number`s: `1` and `1.0` differ in kind, equal in value.
        assert!(numbers[0] != numbers[1] && numbers[0].as_f64() == numbers[1].as_f64());
        assert_eq!(
            numbers.iter().map(Number::to_string).collect::<Vec<_>>(),
            ["1", "1.0", "-1", "0.5"]
        );
    }

    /// A view reads the same from a tree as from the text; a member the view leaves unread is
    /// the text's where the tree left it unread, and `InTree` where the tree read it.
    #[test]
    fn views_read_a_tree_as_they_read_text() {
        use crate::admission::Unread;
        use crate::k8s::{Crd, Job};
        let crd = r#"{"metadata":{"name":"a.b","annotations":{"x":"q\"uote","y":null}},
            "spec":{"group":"b","names":{"kind":"A","shortNames":["aa"]},"versions":[{"name":"v1","served":true,
            "storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}},null]},"status":{"storedVersions":["v1"]}}"#;
        let tree = read(crd, Everything, usize::MAX).unwrap();
        let (from_tree, from_text) = (
            Crd::deserialize(&tree).unwrap(),
            serde_json::from_str::<Crd>(crd).unwrap(),
        );
        assert!(matches!(
            from_tree.spec.versions[0].schema.open_api_v3_schema,
            Some(Unread::InTree)
        ));
        assert_eq!(
            from_text.spec.versions[0]
                .schema
                .open_api_v3_schema
                .and_then(Unread::text)
                .map(RawValue::get),
            Some(r#"{"type":"object"}"#)
        );
        let shown = |crd: &Crd| format!("{:?} {:?} {:?}", crd.metadata, crd.spec.names, crd.status);
        assert_eq!(shown(&from_tree), shown(&from_text));
        assert_eq!(from_tree.spec.versions.len(), 2);
        // Left unread by its grammar, the schema is the text's.
        let unread = read(crd, Props::Schema, usize::MAX).unwrap();
        let Some(Node::Raw(spec)) = unread.get("spec") else {
            panic!("{unread:?}")
        };
        let from_raw = Crd::deserialize(&Node::Object(vec![(Cow::Borrowed("spec"), Node::Raw(spec))])).unwrap();
        assert!(matches!(
            from_raw.spec.versions[0].schema.open_api_v3_schema,
            Some(Unread::Text(_))
        ));
        let job = r#"{"metadata":{"name":"j","deletionTimestamp":"2024-01-01T00:00:00Z"},"spec":{"ttlSecondsAfterFinished":5,"backoffLimit":-1}}"#;
        let tree = read(job, Everything, usize::MAX).unwrap();
        assert_eq!(
            format!("{:?}", Job::deserialize(&tree).unwrap()),
            format!("{:?}", serde_json::from_str::<Job>(job).unwrap())
        );
        // Of the wrong shape, from a tree as from text: an error.
        let wrong = read(r#"{"spec":{"ttlSecondsAfterFinished":"5"}}"#, Everything, 10).unwrap();
        assert!(Job::deserialize(&wrong).is_err());
        assert!(Crd::deserialize(&read("[1]", Everything, 10).unwrap()).is_err());
    }

    #[test]
    fn a_known_member_is_compared_not_built_and_anything_else_read_whole() {
        let known_text = r#"{"a":[1,-2,1.5,"x\"y",true,null,{}],"b":{"c":[]},"b":0}"#;
        let known = read(known_text, Everything, usize::MAX).unwrap();
        fn whole(text: &str, max_depth: usize) -> Result<(Node<'_>, usize), serde_json::Error> {
            read_noting_depth(text, Everything, max_depth)
        }
        // The same value, however written: compared, left skipped, the same depth noted.
        let same = format!(
            r#"{{"k":1, "spec" : {} ,"z":{{"w":[2]}}}}"#,
            known_text.replace(',', " , ")
        );
        let (node, deepest, skipped) = read_unless_known(&same, "spec", &known, usize::MAX).unwrap();
        assert!(skipped && matches!(node.get("spec"), Some(Node::Skipped)));
        assert_eq!(deepest, whole(&same, usize::MAX).unwrap().1);
        assert_eq!(
            node.at(&["z", "w"]).map(|w| Canonical(w).to_string()),
            Some("[2]".into())
        );
        // Only the first `spec` is compared; a second is read.
        let twice = format!(r#"{{"spec":{known_text},"spec":{known_text}}}"#);
        let (node, _, skipped) = read_unless_known(&twice, "spec", &known, usize::MAX).unwrap();
        assert!(skipped && matches!(node.as_object().unwrap()[1].1, Node::Object(_)));
        // A value one byte (or one level) apart, or text that is no object or no JSON: read
        // whole, as `read_noting_depth` reads it.
        let differing = [
            known_text.replace("1.5", "1.6"),
            known_text.replace("[1,", "[1.0,"),
            known_text.replace("-2", "2"),
            known_text.replace("x\\\"y", "x\\\"z"),
            known_text.replace("true", "false"),
            known_text.replace("null", "0"),
            known_text.replace("{}", r#"{"d":1}"#),
            known_text.replace(r#""c":[]"#, r#""c":[1]"#),
            known_text.replace(r#","b":0"#, ""),
            known_text.replace(r#""a""#, r#""A""#),
            known_text.replace(r#","b":0"#, r#","b":0,"e":1"#),
            r#"{"b":{"c":[]},"a":[1,-2,1.5,"x\"y",true,null,{}],"b":0}"#.to_string(),
            "[1]".to_string(),
        ];
        for value in &differing {
            let text = format!(r#"{{"spec":{value},"k":1}}"#);
            let (node, deepest, skipped) = read_unless_known(&text, "spec", &known, usize::MAX).unwrap();
            let (expected, expected_deepest) = whole(&text, usize::MAX).unwrap();
            assert!(!skipped, "{value}");
            assert_eq!(Canonical(&node).to_string(), Canonical(&expected).to_string());
            assert_eq!(deepest, expected_deepest);
        }
        // Deeper than the limit: cut off as a whole read cuts it.
        let (node, _, skipped) = read_unless_known(&same, "spec", &known, 3).unwrap();
        assert!(!skipped);
        assert!(matches!(node.at(&["spec", "a"]), Some(Node::Array(items)) if matches!(items[6], Node::TooDeep)));
        for text in ["[1]", "\"spec\"", r#"{"spec":"#, r#"{"spec":1}x"#] {
            let read =
                read_unless_known(text, "spec", &known, usize::MAX).map(|(node, ..)| Canonical(&node).to_string());
            let expected = whole(text, usize::MAX).map(|(node, _)| Canonical(&node).to_string());
            assert_eq!(
                read.map_err(|e| e.to_string()),
                expected.map_err(|e| e.to_string()),
                "{text}"
            );
        }
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
        assert_eq!(read_noting_depth(&deep, Everything, 3).unwrap().1, 3);
        assert_eq!(
            read_noting_depth(r#"{"a":[1,{"b":[]}],"c":{}}"#, Everything, 10)
                .unwrap()
                .1,
            4
        );
        assert_eq!(read_noting_depth("1", Everything, 10).unwrap().1, 0);
        let value: serde_json::Value = serde_json::from_str(r#"{"a":{"b":"c"}}"#).unwrap();
        assert_eq!(read_value_noting_depth(&value, 10).unwrap().1, 2);
        let parsed = read_value(&value, 10).unwrap();
        assert_eq!(parsed.at(&["a", "b"]).and_then(Node::as_str), Some("c"));
    }
}
