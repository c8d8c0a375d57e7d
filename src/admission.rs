//! The admission model: what a policy receives from Kubewarden and what it answers.
//!
//! The request is read with serde, borrowing from the payload, in one pass: `object` and
//! `oldObject` are each either read into a tree in that pass, when the module's checks read them
//! whole ([`ObjectReader`]), or stepped over as text (serde_json's [`RawValue`]) for the checks
//! that read only their start or not at all; either way the request keeps each one's exact text
//! ([`ObjectJson`]). The answer is Kubewarden's own [`ValidationResponse`] from kubewarden-policy-sdk, the
//! one response type of the modules, the `syncguard` command and the tests.

use serde::de::Visitor;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

pub use kubewarden_policy_sdk::response::ValidationResponse;
pub use kubewarden_policy_sdk::settings::SettingsValidationResponse;

/// Reads `null` as the type's default, as the API server's decoder does; views of Kubernetes
/// objects mark every field with it.
pub fn null_as_default<'de, D: Deserializer<'de>, T: Default + Deserialize<'de>>(
    deserializer: D,
) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// A JSON string borrowed from the text it is read from, or owned when it holds escapes.
///
/// serde's own `#[serde(borrow)]` borrows a `Cow<str>` field, but not one inside an `Option` nor
/// one read by a `deserialize_with` function (which the `null` rule of [`str_or_empty`] needs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text<'a>(pub Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> Visitor<'de> for Visit {
            type Value = Text<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E>(self, value: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(value)))
            }

            fn visit_str<E>(self, value: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(value.to_owned())))
            }

            fn visit_string<E>(self, value: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(value)))
            }
        }
        deserializer.deserialize_str(Visit)
    }
}

/// Reads a string borrowed from the payload (see [`Text`]), `null` as empty.
pub fn str_or_empty<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Cow<'de, str>, D::Error> {
    Ok(Option::<Text<'de>>::deserialize(deserializer)?.map_or(Cow::Borrowed(""), |text| text.0))
}

/// Reads an optional string borrowed from the payload (see [`Text`]), `null` as absent.
pub fn optional_str<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Cow<'de, str>>, D::Error> {
    Ok(Option::<Text<'de>>::deserialize(deserializer)?.map(|text| text.0))
}

/// Implements `Deserialize` for structs derived with `#[serde(remote = "Self")]` so that they
/// read only from a JSON object: serde's derive also reads a struct from an array of its field
/// values, which neither the API server nor the settings schema accept. A value of another type
/// is an error expecting `struct Name`, as the derive words it.
macro_rules! object_only {
    ($($ty:ident $(<$lt:lifetime>)?),+ $(,)?) => {$(
        impl<'de> serde::Deserialize<'de> for $ty $(<$lt>)? {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Visit;
                impl<'de> serde::de::Visitor<'de> for Visit {
                    type Value = $ty $(<$lt>)?;

                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(concat!("struct ", stringify!($ty)))
                    }

                    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                        $ty::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    }
                }
                deserializer.deserialize_map(Visit)
            }
        }
    )+};
}
pub(crate) use object_only;

/// A member a view leaves unread: its JSON text, borrowed from the request, when the view reads
/// text; when it reads the request's tree ([`crate::json::Node`], already read by the checks that
/// read the whole object), the member was read there already and its text is not at hand
/// (`InTree`), so a check that needs the text (crd-safe-upgrade comparing two CRDs' schemas)
/// reads the view from the text.
#[derive(Debug, Clone, Copy)]
pub enum Unread<'a> {
    /// The member's JSON text.
    Text(&'a RawValue),
    /// Read as part of the request's tree; its text is not at hand.
    InTree,
}

impl<'a> Unread<'a> {
    /// The name serde sees it by: the tree's reader answers it with `InTree`.
    pub const NAME: &'static str = "syncguard::admission::Unread";

    /// The member's JSON text, when the view was read from text.
    pub fn text(self) -> Option<&'a RawValue> {
        match self {
            Unread::Text(raw) => Some(raw),
            Unread::InTree => None,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Unread<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> Visitor<'de> for Visit {
            type Value = Unread<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }

            fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<Unread<'de>, D::Error> {
                <&RawValue>::deserialize(deserializer).map(Unread::Text)
            }

            fn visit_unit<E>(self) -> Result<Unread<'de>, E> {
                Ok(Unread::InTree)
            }
        }
        deserializer.deserialize_newtype_struct(Unread::NAME, Visit)
    }
}

/// Group, version and kind of the object in a request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(remote = "Self", default)]
pub struct GroupVersionKind<'a> {
    /// API group; empty for the core group.
    #[serde(borrow, deserialize_with = "str_or_empty")]
    pub group: Cow<'a, str>,
    /// API version, e.g. `v1`.
    #[serde(borrow, deserialize_with = "str_or_empty")]
    pub version: Cow<'a, str>,
    /// Kind, e.g. `CustomResourceDefinition`.
    #[serde(borrow, deserialize_with = "str_or_empty")]
    pub kind: Cow<'a, str>,
}

/// Group, version and resource (plural) addressed by a request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(remote = "Self", default)]
pub struct GroupVersionResource<'a> {
    /// API group; empty for the core group.
    #[serde(borrow, deserialize_with = "str_or_empty")]
    pub group: Cow<'a, str>,
    /// API version, e.g. `v1`.
    #[serde(borrow, deserialize_with = "str_or_empty")]
    pub version: Cow<'a, str>,
    /// Resource, e.g. `customresourcedefinitions`.
    #[serde(borrow, deserialize_with = "str_or_empty")]
    pub resource: Cow<'a, str>,
}

/// An object carried by a request: the JSON the request holds (its text), or (in the all-in-one
/// policy) the object as a check before changed it.
#[derive(Debug, Clone, Copy)]
pub enum ObjectJson<'a> {
    /// The request's own JSON: exactly the object's text in the payload (the reader may have read
    /// it into a tree already, in the request's own pass: [`ObjectReader`]).
    Raw(&'a str),
    /// An object a mutating check built.
    Parsed(&'a Value),
}

impl<'de: 'a, 'a> Deserialize<'de> for ObjectJson<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&RawValue>::deserialize(deserializer).map(|raw| ObjectJson::Raw(raw.get()))
    }
}

impl<'a> ObjectJson<'a> {
    /// Reads the object as `T` (a view, a [`Value`], ...); the error carries serde_json's
    /// `line L column C` in the object's text when the object is the request's own.
    pub fn read<T: Deserialize<'a>>(&self) -> Result<T, serde_json::Error> {
        #[cfg(test)]
        reads::note();
        match self {
            ObjectJson::Raw(text) => serde_json::from_str(text),
            ObjectJson::Parsed(value) => T::deserialize(*value),
        }
    }

    /// Reads the object as `T`; an error names the path of the value that does not fit
    /// (`spec.ttlSecondsAfterFinished`) beside serde_json's message, never a position in the text,
    /// so it does not depend on the order of keys in the JSON (Kubewarden sorts them).
    pub fn read_with_path<T: Deserialize<'a>>(&self) -> Result<T, (String, String)> {
        self.read().map_err(|error| {
            let path = match self {
                // Worked out from where serde_json stopped, once reading has failed: a second,
                // path-tracking instance of every view's deserializer (serde_path_to_error) would
                // cost each module tens of kilobytes for the same answer.
                ObjectJson::Raw(text) => crate::settings::path_of_error(text, &error),
                ObjectJson::Parsed(_) => String::new(),
            };
            (path, crate::settings::message(&error))
        })
    }

    /// [`ObjectJson::read_with_path`] with the path and the message in one text
    /// (`` `spec.versions`: invalid type ... ``).
    pub fn read_described<T: Deserialize<'a>>(&self) -> Result<T, String> {
        self.read_with_path().map_err(describe)
    }

    /// For a check that may edit the object: the object read whole, into the value the edit
    /// changes, and view `T` read from that value, so the text is read once. The SDK's response
    /// carries a mutated object as a [`Value`], so an edit needs the whole object as one.
    ///
    /// The value is `None` for an object a check built (there is no text; the edit copies it) and
    /// when the text does not read as a value (nesting over serde_json's limit); the view is then
    /// read as [`ObjectJson::read_with_path`] reads it. When the view does not fit the value, the
    /// error is [`ObjectJson::read_with_path`]'s on the text, so it names the path.
    pub fn read_for_edit<T: serde::de::DeserializeOwned>(&self) -> (Option<Value>, Result<T, (String, String)>) {
        #[cfg(test)]
        reads::note();
        let whole = match self {
            ObjectJson::Raw(text) => serde_json::from_str::<Value>(text).ok(),
            ObjectJson::Parsed(_) => None,
        };
        let view = match &whole {
            Some(value) => T::deserialize(value).or_else(|_| self.read_with_path()),
            None => self.read_with_path(),
        };
        (whole, view)
    }

    /// The texts of the object's members at `paths` (`["metadata"]`, `["spec", "names"]`; `None`
    /// for one it does not have), read from the request's JSON without stepping over what follows
    /// the last of them: Kubewarden sorts keys, so `kind`, `metadata` and `spec.names` come before
    /// the rest of an object however large it is. `None` for an object a check built, for a text
    /// that is not a JSON object, and when an object on a path is not an object. No path may be
    /// the start of another. Only a shortcut: with duplicated keys the first is taken, and what
    /// follows is not checked (the request was read whole once already, so it is well-formed
    /// JSON).
    pub fn members<const N: usize>(&self, paths: [&[&str]; N]) -> Option<[Option<&'a str>; N]> {
        const { assert!(N <= 64, "members: at most 64 paths") };
        debug_assert!(
            paths
                .iter()
                .all(|a| !a.is_empty() && paths.iter().all(|b| a == b || !b.starts_with(a))),
            "members: every path is non-empty and none is the start of another"
        );
        let ObjectJson::Raw(text) = self else {
            return None;
        };
        #[cfg(test)]
        reads::note();
        let mut found = [None; N];
        let mut reader = serde_json::Deserializer::from_str(text);
        let read = reader.deserialize_map(Members {
            paths: &paths,
            depth: 0,
            wanted: (0..N).fold(0, |mask, i| mask | 1 << i),
            found: &mut found,
        });
        // serde_json reports the members left unread as an error once the visitor has stopped.
        let complete = found.iter().all(Option::is_some);
        (complete || read.is_ok()).then(|| found.map(|member| member.map(RawValue::get)))
    }

    /// The request's own JSON text; `None` for an object a check built.
    pub fn text(&self) -> Option<&'a str> {
        match self {
            ObjectJson::Raw(text) => Some(text),
            ObjectJson::Parsed(_) => None,
        }
    }
}

/// How many times the objects of requests were read (whole or in part, as text or into a tree),
/// on this thread; compiled only for tests: the all-in-one reads an object once for every check.
#[cfg(test)]
pub mod reads {
    use std::cell::Cell;

    thread_local! {
        static READS: Cell<usize> = const { Cell::new(0) };
    }

    /// Notes one reading of an object.
    pub fn note() {
        READS.with(|n| n.set(n.get() + 1));
    }

    /// The readings noted since the last call.
    pub fn take() -> usize {
        READS.with(|n| n.replace(0))
    }
}

/// Reads the members at `paths` of an object (at `depth` in them, `wanted` the paths that go
/// through this object, as bits) as unread text, and stops once it has them all (see
/// [`ObjectJson::members`]).
struct Members<'k, 'a, const N: usize> {
    paths: &'k [&'k [&'k str]; N],
    depth: usize,
    wanted: u64,
    found: &'k mut [Option<&'a RawValue>; N],
}

impl<'de, const N: usize> serde::de::Visitor<'de> for Members<'_, 'de, N> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Members {
            paths,
            depth,
            wanted,
            found,
        } = self;
        while let Some(key) = map.next_key_seed(KeyMatch { paths, depth, wanted })? {
            // The paths through this key still missing: ending here, or going deeper.
            let (mut here, mut deeper) = (0u64, 0u64);
            for i in (0..N).filter(|&i| key & 1 << i != 0 && found[i].is_none()) {
                if paths[i].len() == depth + 1 {
                    here |= 1 << i;
                } else {
                    deeper |= 1 << i;
                }
            }
            if here != 0 {
                let value: &RawValue = map.next_value()?;
                for (i, slot) in found.iter_mut().enumerate() {
                    if here & 1 << i != 0 {
                        *slot = Some(value);
                    }
                }
            } else if deeper != 0 {
                map.next_value_seed(Members {
                    paths,
                    depth: depth + 1,
                    wanted: deeper,
                    found: &mut *found,
                })?;
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
            if found.iter().all(Option::is_some) {
                return Ok(());
            }
        }
        Ok(())
    }
}

impl<'de, const N: usize> serde::de::DeserializeSeed<'de> for Members<'_, 'de, N> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

/// Reads a key as the set of wanted paths (as bits) that go through it at `depth`, without
/// allocating (an escaped key included).
struct KeyMatch<'k, const N: usize> {
    paths: &'k [&'k [&'k str]; N],
    depth: usize,
    wanted: u64,
}

impl<'de, const N: usize> serde::de::DeserializeSeed<'de> for KeyMatch<'_, N> {
    type Value = u64;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<u64, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de, const N: usize> serde::de::Visitor<'de> for KeyMatch<'_, N> {
    type Value = u64;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E>(self, key: &str) -> Result<u64, E> {
        Ok((0..N)
            .filter(|&i| self.wanted & 1 << i != 0 && self.paths[i].get(self.depth) == Some(&key))
            .fold(0, |mask, i| mask | 1 << i))
    }
}

/// The path and the message of a read error in one text (`` `spec.versions`: invalid type ... ``),
/// the message alone when the path is the whole object.
pub fn describe((path, message): (String, String)) -> String {
    if path.is_empty() {
        message
    } else {
        format!("`{path}`: {message}")
    }
}

/// An admission operation (`CREATE`, `UPDATE`, `DELETE`, `CONNECT`); serialised as the API
/// server writes it (`"CREATE"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "UPPERCASE")]
pub enum Operation {
    /// `CREATE`.
    Create,
    /// `UPDATE`.
    Update,
    /// `DELETE`.
    Delete,
    /// `CONNECT`.
    Connect,
}

impl Operation {
    /// Every operation, in the order Kubernetes documents them.
    pub const ALL: [Operation; 4] = [
        Operation::Create,
        Operation::Update,
        Operation::Delete,
        Operation::Connect,
    ];

    /// The name as the API server writes it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of the API server's operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownOperation(pub String);

impl std::fmt::Display for UnknownOperation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` is not an admission operation", self.0)
    }
}

impl std::error::Error for UnknownOperation {}

impl std::str::FromStr for Operation {
    type Err = UnknownOperation;

    /// Reads a name as the API server writes it (upper case only, as it compares them).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Operation::ALL
            .into_iter()
            .find(|op| op.as_str() == name)
            .ok_or_else(|| UnknownOperation(name.to_string()))
    }
}

/// A Kubernetes AdmissionRequest as Kubewarden hands it to a policy: the members policies read
/// (the uid and the rest are the host's and skipped unread). Like the views of objects, it reads
/// `null` as absent. Read only as part of a `validate` payload ([`read_validation_request`]).
#[derive(Debug, Clone, Default)]
pub struct Request<'a> {
    /// Kind of the object.
    pub kind: GroupVersionKind<'a>,
    /// Resource addressed.
    pub resource: GroupVersionResource<'a>,
    /// Subresource addressed, if any (`status`, `scale`, ...).
    pub sub_resource: Option<Cow<'a, str>>,
    /// Name of the object (may be empty on CREATE with generateName).
    pub name: Option<Cow<'a, str>>,
    /// Namespace of the object, absent for cluster-scoped objects.
    pub namespace: Option<Cow<'a, str>>,
    /// The operation; `None` when absent or not one the API server sends (no rule matches it).
    pub operation: Option<Operation>,
    /// The new object's text; `None` when absent or `null`.
    pub object: Option<ObjectJson<'a>>,
    /// The existing object's text on UPDATE and DELETE; `None` when absent or `null`.
    pub old_object: Option<ObjectJson<'a>>,
}

object_only!(GroupVersionKind<'de>, GroupVersionResource<'de>);

/// The payload of the waPC `validate` operation, and the trees its reader read the request's
/// objects into ([`ObjectReader`]; `T`: what it reads one into).
#[derive(Debug)]
pub struct ValidationRequest<'a, T> {
    /// The admission request.
    pub request: Request<'a>,
    /// The policy settings, unread; `None` when absent or `null`.
    pub settings: Option<&'a RawValue>,
    /// The request's object as the reader read it in the request's pass; `None` where it only
    /// found its text.
    pub object_tree: Option<T>,
    /// The old object, likewise.
    pub old_object_tree: Option<T>,
}

/// What the reader of a `validate` payload does with the request's `object` and `oldObject`
/// beyond finding their text: a module whose checks read an object whole has it read into their
/// tree in the request's own pass, so that the object's text is read once, not stepped over
/// first and read again. Kubewarden sorts keys, so the request's `kind` comes before `object`
/// and `oldObject`, and the reader decides by it; `operation`, the resource and the settings come
/// after them, so a module reads an object whole when any of its checks would for that kind.
pub trait ObjectReader<'de>: Copy {
    /// What an object is read into.
    type Tree;
    /// Whether the object (`old`: the old object) of a request of `kind` is read into a tree.
    fn reads(self, kind: &GroupVersionKind<'_>, old: bool) -> bool;
    /// Reads one object (not `null`) into its tree.
    fn read<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Tree, D::Error>;
}

/// The reader that reads no object: it finds each one's text, and the checks read it later.
#[derive(Debug, Clone, Copy)]
pub struct TextOnly;

impl<'de> ObjectReader<'de> for TextOnly {
    type Tree = std::convert::Infallible;

    fn reads(self, _: &GroupVersionKind<'_>, _: bool) -> bool {
        false
    }

    fn read<D: Deserializer<'de>>(self, _: D) -> Result<Self::Tree, D::Error> {
        Err(serde::de::Error::custom("the text-only reader reads no object"))
    }
}

/// Reads a `validate` payload, borrowing from `text`, its objects read as `reader` says. Read
/// as serde would read the structs of its members (the same errors, at the same places), by
/// hand because serde's derive cannot hand the objects' members a reader (a `DeserializeSeed`).
pub fn read_validation_request<'a, R: ObjectReader<'a>>(
    text: &'a str,
    reader: R,
) -> Result<ValidationRequest<'a, R::Tree>, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let read = deserializer.deserialize_map(PayloadVisitor { text, reader })?;
    deserializer.end()?;
    Ok(read)
}

/// Reads the payload's members (`request`, `settings`; any other skipped).
struct PayloadVisitor<'a, R> {
    text: &'a str,
    reader: R,
}

impl<'de, R: ObjectReader<'de>> Visitor<'de> for PayloadVisitor<'de, R> {
    type Value = ValidationRequest<'de, R::Tree>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct ValidationRequest")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        use serde::de::Error;
        let (mut request, mut settings) = (None, None);
        while let Some(Text(key)) = map.next_key()? {
            match &*key {
                "request" => {
                    if request.is_some() {
                        return Err(A::Error::duplicate_field("request"));
                    }
                    request = Some(map.next_value_seed(RequestSeed {
                        text: self.text,
                        reader: self.reader,
                    })?);
                }
                "settings" => {
                    if settings.is_some() {
                        return Err(A::Error::duplicate_field("settings"));
                    }
                    settings = Some(map.next_value::<Option<&'de RawValue>>()?);
                }
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        let (request, object_tree, old_object_tree) = request.ok_or_else(|| A::Error::missing_field("request"))?;
        Ok(ValidationRequest {
            request,
            settings: settings.flatten(),
            object_tree,
            old_object_tree,
        })
    }
}

/// A request and the trees of its objects.
type RequestRead<'a, T> = (Request<'a>, Option<T>, Option<T>);

/// Reads the admission request, `null` as an empty one.
struct RequestSeed<'a, R> {
    text: &'a str,
    reader: R,
}

impl<'de, R: ObjectReader<'de>> serde::de::DeserializeSeed<'de> for RequestSeed<'de, R> {
    type Value = RequestRead<'de, R::Tree>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de, R: ObjectReader<'de>> Visitor<'de> for RequestSeed<'de, R> {
    type Value = RequestRead<'de, R::Tree>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("option")
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok((Request::default(), None, None))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok((Request::default(), None, None))
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(RequestVisitor {
            text: self.text,
            reader: self.reader,
        })
    }
}

/// Reads the request's members (serde's derive of [`Request`], with `#[serde(default)]` and
/// its fields' `null` rules, would read the same).
struct RequestVisitor<'a, R> {
    text: &'a str,
    reader: R,
}

/// An object read into a tree, whose text ends where the next member's key begins.
struct Pending {
    /// Where the object's text starts in the payload.
    start: usize,
    /// Whether it is the old object.
    old: bool,
}

/// serde's error for a member given twice, when `seen` says it was.
fn once<E: serde::de::Error>(seen: &mut bool, name: &'static str) -> Result<(), E> {
    if std::mem::replace(seen, true) {
        Err(E::duplicate_field(name))
    } else {
        Ok(())
    }
}

impl<'de, R: ObjectReader<'de>> Visitor<'de> for RequestVisitor<'de, R> {
    type Value = RequestRead<'de, R::Tree>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct Request")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        use serde::de::Error;
        let text = self.text;
        let mut request = Request::default();
        let mut seen = [false; 8];
        let mut trees = (None, None);
        let mut pending: Option<Pending> = None;
        loop {
            let key = map.next_key::<Text<'de>>()?;
            if let Some(object) = pending.take() {
                let span = span_before(text, object.start, key.as_ref());
                let slot = if object.old {
                    &mut request.old_object
                } else {
                    &mut request.object
                };
                *slot = Some(ObjectJson::Raw(span.map_err(A::Error::custom)?));
            }
            let Some(Text(key)) = key else { break };
            match &*key {
                "kind" => {
                    once::<A::Error>(&mut seen[0], "kind")?;
                    request.kind = map.next_value::<Option<GroupVersionKind<'de>>>()?.unwrap_or_default();
                }
                "resource" => {
                    once::<A::Error>(&mut seen[1], "resource")?;
                    request.resource = map
                        .next_value::<Option<GroupVersionResource<'de>>>()?
                        .unwrap_or_default();
                }
                "subResource" => {
                    once::<A::Error>(&mut seen[2], "subResource")?;
                    request.sub_resource = map.next_value::<Option<Text<'de>>>()?.map(|t| t.0);
                }
                "name" => {
                    once::<A::Error>(&mut seen[3], "name")?;
                    request.name = map.next_value::<Option<Text<'de>>>()?.map(|t| t.0);
                }
                "namespace" => {
                    once::<A::Error>(&mut seen[4], "namespace")?;
                    request.namespace = map.next_value::<Option<Text<'de>>>()?.map(|t| t.0);
                }
                "operation" => {
                    once::<A::Error>(&mut seen[5], "operation")?;
                    // Absent, `null`, or a name the API server never sends: `None` (no rule
                    // matches it).
                    let name = map.next_value::<Option<Text<'de>>>()?;
                    request.operation = name.and_then(|name| name.0.parse().ok());
                }
                "object" | "oldObject" => {
                    let old = &*key == "oldObject";
                    if old {
                        once::<A::Error>(&mut seen[7], "oldObject")?;
                    } else {
                        once::<A::Error>(&mut seen[6], "object")?;
                    }
                    // Read into a tree when the module's checks read it whole and the key shows
                    // where the value starts (a key written with escapes is not the text's).
                    let start = value_start(text, &key).filter(|_| self.reader.reads(&request.kind, old));
                    let Some(start) = start else {
                        let object = map.next_value::<Option<ObjectJson<'de>>>()?;
                        if old {
                            request.old_object = object;
                        } else {
                            request.object = object;
                        }
                        continue;
                    };
                    let tree = map.next_value_seed(TreeSeed(self.reader))?;
                    if tree.is_some() {
                        pending = Some(Pending { start, old });
                    }
                    if old {
                        request.old_object = None;
                        trees.1 = tree;
                    } else {
                        request.object = None;
                        trees.0 = tree;
                    }
                }
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok((request, trees.0, trees.1))
    }
}

/// Reads an object into its tree, `null` as none.
#[derive(Clone, Copy)]
struct TreeSeed<R>(R);

impl<'de, R: ObjectReader<'de>> serde::de::DeserializeSeed<'de> for TreeSeed<R> {
    type Value = Option<R::Tree>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de, R: ObjectReader<'de>> Visitor<'de> for TreeSeed<R> {
    type Value = Option<R::Tree>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("option")
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.0.read(deserializer).map(Some)
    }
}

/// Where `part` (a key borrowed from `text`) sits in `text`, if it is a slice of it.
fn offset_in(text: &str, part: &str) -> Option<usize> {
    let (base, at) = (text.as_ptr() as usize, part.as_ptr() as usize);
    (at >= base && at + part.len() <= base + text.len()).then(|| at - base)
}

/// Whether a byte is JSON whitespace (as serde_json skips it).
fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\n' | b'\t' | b'\r')
}

/// Where the value of member `key` starts, when `key` is borrowed from `text` (as the reader
/// gives a key written without escapes; one with escapes is a copy, and gives `None`): past the
/// key's closing quote, the colon and the whitespace around it.
fn value_start(text: &str, key: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = offset_in(text, key)? + key.len();
    (bytes.get(at) == Some(&b'"')).then_some(())?;
    at += 1;
    while bytes.get(at).copied().is_some_and(is_space) {
        at += 1;
    }
    (bytes.get(at) == Some(&b':')).then_some(())?;
    at += 1;
    while bytes.get(at).copied().is_some_and(is_space) {
        at += 1;
    }
    Some(at)
}

/// The text of a value that starts at `start` in `text` and was read whole: up to the comma
/// before `next`, the key of the member that follows it, when that key is the text's own (no
/// escapes); else found by stepping over the value again (a request whose object is its last
/// member, or a hand-written key).
fn span_before<'a>(text: &'a str, start: usize, next: Option<&Text<'a>>) -> Result<&'a str, serde_json::Error> {
    let bytes = text.as_bytes();
    let end = next.and_then(|Text(key)| match key {
        Cow::Borrowed(key) => {
            let mut at = offset_in(text, key)?.checked_sub(1)?;
            (bytes[at] == b'"').then_some(())?;
            while at > start && is_space(bytes[at - 1]) {
                at -= 1;
            }
            (at > start && bytes[at - 1] == b',').then_some(())?;
            at -= 1;
            while at > start && is_space(bytes[at - 1]) {
                at -= 1;
            }
            (at > start).then_some(at)
        }
        Cow::Owned(_) => None,
    });
    match end {
        Some(end) => Ok(&text[start..end]),
        None => {
            let mut rest = serde_json::Deserializer::from_str(&text[start..]);
            <&RawValue>::deserialize(&mut rest).map(RawValue::get)
        }
    }
}

impl<'a> Request<'a> {
    /// The object read as `T`; `Ok(None)` when the request carries no object (or `null`).
    pub fn object_as<T: Deserialize<'a>>(&self) -> Result<Option<T>, String> {
        read_object(self.object, "object")
    }

    /// The old object read as `T`; `Ok(None)` when the request carries none.
    pub fn old_object_as<T: Deserialize<'a>>(&self) -> Result<Option<T>, String> {
        read_object(self.old_object, "oldObject")
    }

    /// True for `CREATE`.
    pub fn is_create(&self) -> bool {
        self.operation == Some(Operation::Create)
    }

    /// True for `UPDATE`.
    pub fn is_update(&self) -> bool {
        self.operation == Some(Operation::Update)
    }
}

fn read_object<'a, T: Deserialize<'a>>(object: Option<ObjectJson<'a>>, what: &str) -> Result<Option<T>, String> {
    match object {
        None => Ok(None),
        Some(object) => object
            .read_described()
            .map(Some)
            .map_err(|e| format!("cannot read the request's {what}: {e}")),
    }
}

/// What a check decides about one request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Response {
    /// Whether the request is allowed.
    pub accepted: bool,
    /// Why it was rejected (only set on rejection).
    pub message: Option<String>,
    /// HTTP-like status code of a rejection.
    pub code: Option<u16>,
    /// Warnings returned to the client, accepted or not.
    pub warnings: Vec<String>,
    /// Audit annotations, sorted by key.
    pub audit_annotations: BTreeMap<String, String>,
    /// The object as the check would change it (mutating checks only).
    pub mutated_object: Option<Value>,
}

impl Response {
    /// An acceptance with nothing to say.
    pub fn accept() -> Self {
        Response {
            accepted: true,
            ..Response::default()
        }
    }

    /// A rejection with a message.
    pub fn reject(message: impl Into<String>) -> Self {
        Response {
            accepted: false,
            message: Some(message.into()),
            ..Response::default()
        }
    }

    /// A rejection with a message and a status code.
    pub fn reject_with_code(message: impl Into<String>, code: u16) -> Self {
        Response {
            code: Some(code),
            ..Response::reject(message)
        }
    }

    /// Adds a warning.
    pub fn warn(mut self, warning: impl Into<String>) -> Self {
        self.warnings.push(warning.into());
        self
    }

    /// Adds warnings.
    pub fn with_warnings(mut self, warnings: impl IntoIterator<Item = String>) -> Self {
        self.warnings.extend(warnings);
        self
    }

    /// Adds an audit annotation.
    pub fn annotate(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.audit_annotations.insert(key.into(), value.into());
        self
    }

    /// Sets the mutated object.
    pub fn mutate(mut self, object: Value) -> Self {
        self.mutated_object = Some(object);
        self
    }

    /// The wire form Kubewarden expects from `validate`: the SDK's response, absent parts as
    /// `None`.
    pub fn into_sdk(self) -> ValidationResponse {
        ValidationResponse {
            accepted: self.accepted,
            message: self.message,
            code: self.code,
            mutated_object: self.mutated_object,
            audit_annotations: (!self.audit_annotations.is_empty())
                .then(|| self.audit_annotations.into_iter().collect()),
            warnings: (!self.warnings.is_empty()).then_some(self.warnings),
        }
    }

    /// The `validate` answer as JSON bytes, byte-identical for the same verdict: the SDK's
    /// response as the SDK's own helpers (`accept_request`, `reject_request`) write it, its
    /// fields in the SDK's order.
    ///
    /// The SDK keeps audit annotations in a `HashMap`, whose order changes from one instance to
    /// the next. No check sets more than one; should a verdict carry several, the response is
    /// written through [`Value`] instead, whose objects keep their keys sorted, so the answer
    /// stays the same in every instance (its fields then come out in alphabetical order, which
    /// Kubewarden does not mind).
    pub fn to_json(self) -> Vec<u8> {
        let several_annotations = self.audit_annotations.len() > 1;
        let mut response = self.into_sdk();
        if !several_annotations {
            return encode(&response);
        }
        let mutated = response.mutated_object.take();
        let mut tree = serde_json::to_value(&response).unwrap_or(Value::Null);
        if let (Value::Object(fields), Some(object)) = (&mut tree, mutated) {
            fields.insert("mutated_object".to_string(), object);
        }
        serde_json::to_vec(&tree).unwrap_or_default()
    }
}

/// The answer of the waPC `validate_settings` operation as JSON.
pub fn settings_response_json(result: Result<(), String>) -> Vec<u8> {
    let response = SettingsValidationResponse {
        valid: result.is_ok(),
        message: result.err(),
    };
    encode(&response)
}

/// JSON bytes of a response (plain structs of strings, booleans and numbers: this cannot fail).
fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::Job;

    /// Reads every object (or none) into a `Value`.
    #[derive(Clone, Copy)]
    struct Values(bool);

    impl<'de> ObjectReader<'de> for Values {
        type Tree = Value;

        fn reads(self, kind: &GroupVersionKind<'_>, _: bool) -> bool {
            self.0 && kind.kind != "Skipped"
        }

        fn read<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
            Value::deserialize(deserializer)
        }
    }

    /// The request shown, its object's and old object's texts, and their trees.
    type Read<'a> = (String, Option<&'a str>, Option<&'a str>, [Option<Value>; 2]);

    /// The request, its objects' texts and trees, read with `Values(read)`, or the error.
    fn read_with(text: &str, read: bool) -> Result<Read<'_>, String> {
        let read = read_validation_request(text, Values(read)).map_err(|e| e.to_string())?;
        fn text_of<'a>(object: Option<ObjectJson<'a>>) -> Option<&'a str> {
            object.map(|o| o.text().unwrap())
        }
        let request = &read.request;
        let shown = format!(
            "{:?} {:?} {:?} {:?} {:?} {:?} {:?}",
            request.kind,
            request.resource,
            request.sub_resource,
            request.name,
            request.namespace,
            request.operation,
            read.settings
        );
        Ok((
            shown,
            text_of(request.object),
            text_of(request.old_object),
            [read.object_tree, read.old_object_tree],
        ))
    }

    #[test]
    fn objects_read_in_the_requests_pass_keep_their_exact_text() {
        let payloads = [
            // Kubewarden's sorted keys, compact.
            r#"{"request":{"kind":{"group":"","kind":"ConfigMap","version":"v1"},"name":"a","object":{"data":{"k":"v"},"n":[1,2.5]},"oldObject":{"data":null},"operation":"UPDATE","uid":"1"},"settings":{}}"#,
            // Spaces around every token.
            "{ \"request\" : { \"kind\" : {\"kind\":\"A\"} , \"object\" :\n {\"a\" : [ 1 , {} ] }\t,\r\n \"oldObject\" : \"text, \\\"quoted\\\"\" , \"operation\" : \"CREATE\" } }",
            // The object last, and an old object `null`.
            r#"{"settings":null,"request":{"operation":"CREATE","oldObject":null,"object":{"last":true}}}"#,
            // The key after the object written with escapes, and the object's own key so.
            r#"{"request":{"object":{"a":1},"\u006fperation":"CREATE","old\u004fbject":{"b":2}}}"#,
            // A kind the reader reads no object of.
            r#"{"request":{"kind":{"kind":"Skipped"},"object":{"a":1},"oldObject":[1]}}"#,
            r#"{"request":null}"#,
            r#"{"request":{"object":"s","oldObject":3}}"#,
        ];
        for payload in payloads {
            let (shown, object, old, trees) = read_with(payload, true).unwrap();
            let (plain, plain_object, plain_old, none) = read_with(payload, false).unwrap();
            assert_eq!((&shown, object, old), (&plain, plain_object, plain_old), "{payload}");
            assert_eq!(none, [None, None]);
            // Each tree read is the object its text holds.
            for (text, tree) in [object, old].into_iter().zip(trees) {
                if let Some(tree) = tree {
                    assert_eq!(serde_json::from_str::<Value>(text.unwrap()).unwrap(), tree, "{payload}");
                }
            }
        }
        let (_, object, old, trees) = read_with(payloads[1], true).unwrap();
        assert_eq!(
            (object, old),
            (Some("{\"a\" : [ 1 , {} ] }"), Some("\"text, \\\"quoted\\\"\""))
        );
        assert!(trees[0].is_some() && trees[1].is_some());
        let (_, object, _, trees) = read_with(payloads[3], true).unwrap();
        assert_eq!(object, Some(r#"{"a":1}"#));
        assert!(
            trees[0].is_some() && trees[1].is_none(),
            "an escaped key is not the text's: read as text {trees:?}"
        );
    }

    /// serde's derive of the request and the payload, as they were read before the reader was
    /// written by hand: the same members, the same rules.
    mod derived {
        use super::super::*;

        fn operation_or_none<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Operation>, D::Error> {
            Ok(str_or_empty(deserializer)?.parse().ok())
        }

        #[derive(Debug, Default, Deserialize)]
        #[serde(remote = "Self", default, rename_all = "camelCase")]
        pub struct Request<'a> {
            #[serde(borrow, deserialize_with = "null_as_default")]
            pub kind: GroupVersionKind<'a>,
            #[serde(borrow, deserialize_with = "null_as_default")]
            pub resource: GroupVersionResource<'a>,
            #[serde(borrow, deserialize_with = "optional_str")]
            pub sub_resource: Option<Cow<'a, str>>,
            #[serde(borrow, deserialize_with = "optional_str")]
            pub name: Option<Cow<'a, str>>,
            #[serde(borrow, deserialize_with = "optional_str")]
            pub namespace: Option<Cow<'a, str>>,
            #[serde(deserialize_with = "operation_or_none")]
            pub operation: Option<Operation>,
            #[serde(borrow)]
            pub object: Option<ObjectJson<'a>>,
            #[serde(borrow)]
            pub old_object: Option<ObjectJson<'a>>,
        }

        object_only!(Request<'de>, ValidationRequest<'de>);

        fn request_or_default<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Request<'de>, D::Error> {
            Ok(Option::<Request<'de>>::deserialize(deserializer)?.unwrap_or_default())
        }

        #[derive(Debug, Deserialize)]
        #[serde(remote = "Self")]
        pub struct ValidationRequest<'a> {
            #[serde(borrow, deserialize_with = "request_or_default")]
            pub request: Request<'a>,
            #[serde(borrow, default)]
            pub settings: Option<&'a RawValue>,
        }
    }

    #[test]
    fn the_requests_reader_reads_and_refuses_as_serdes_derive() {
        for payload in [
            r#"{"settings":{}}"#,
            r#"{"request":{"object":{},"object":{}}}"#,
            r#"{"request":{"object":{"a":1},"oldObject":{},"oldObject":null}}"#,
            r#"{"request":{},"request":{}}"#,
            r#"{"request":{},"settings":{},"settings":null}"#,
            r#"{"request":[1]}"#,
            "[1]",
            "null",
            r#"{"request":{"kind":"Pod"}}"#,
            r#"{"request":{"kind":{"kind":"A"},"kind":null}}"#,
            r#"{"request":{"name":1}}"#,
            r#"{"request":{"operation":"create","object":{"a":[1e40]}}}"#,
            r#"{"request":{"object":{"a":1}}} x"#,
            r#"{"request":{"object":{"a":1},"operation":"DELETE","subResource":"status","namespace":null,"uid":"u"},"x":[]}"#,
            r#"{"request":{"object":{"a":1}"#,
            r#"{"request":{"object":{"a":tru}}}"#,
        ] {
            let derived = serde_json::from_str::<derived::ValidationRequest<'_>>(payload)
                .map(|read| format!("{:?} {:?}", read.request, read.settings))
                .map_err(|e| e.to_string());
            for reader in [true, false] {
                let read = read_validation_request(payload, Values(reader))
                    .map(|read| {
                        format!(
                            "{:?} {:?}",
                            derived::Request {
                                kind: read.request.kind,
                                resource: read.request.resource,
                                sub_resource: read.request.sub_resource,
                                name: read.request.name,
                                namespace: read.request.namespace,
                                operation: read.request.operation,
                                object: read.request.object,
                                old_object: read.request.old_object,
                            },
                            read.settings
                        )
                    })
                    .map_err(|e| e.to_string());
                assert_eq!(read, derived, "{payload}");
            }
        }
    }

    #[test]
    fn answers_are_the_sdks_and_the_same_in_every_instance() {
        let verdict = Response::reject("no")
            .annotate("a", "1")
            .with_warnings(vec!["w".into()]);
        assert_eq!(
            String::from_utf8(verdict.to_json()).unwrap(),
            r#"{"accepted":false,"message":"no","code":null,"mutated_object":null,"audit_annotations":{"a":"1"},"warnings":["w"]}"#
        );
        // Several annotations: sorted, whatever the order of the SDK's HashMap.
        let keys = ["d", "a", "c", "b", "f", "e"];
        let verdict = keys.iter().fold(Response::accept(), |v, k| v.annotate(*k, "x"));
        let answer = String::from_utf8(verdict.to_json()).unwrap();
        assert!(
            answer.contains(r#""audit_annotations":{"a":"x","b":"x","c":"x","d":"x","e":"x","f":"x"}"#),
            "{answer}"
        );
    }

    #[test]
    fn members_stop_after_the_last_one_asked_for() {
        let members = |text: &'static str| ObjectJson::Raw(text).members([&["kind"], &["metadata"]]);
        // What follows the members is not read: a trailing member of the wrong shape for any
        // view does not matter.
        assert_eq!(
            members(r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"x":"y"}}"#),
            Some([Some(r#""ConfigMap""#), Some(r#"{"name":"a"}"#)])
        );
        assert_eq!(
            members(r#"{"metadata":null,"data":[1,2],"kind":"ConfigMap"}"#),
            Some([Some(r#""ConfigMap""#), Some("null")])
        );
        assert_eq!(members(r#"{"data":{},"kind":"A"}"#), Some([Some(r#""A""#), None]));
        assert_eq!(members(r#"{"m\u0065tadata":{}}"#), Some([None, Some("{}")]));
        assert_eq!(
            members(r#"{"kind":"A","kind":"B","metadata":1}"#),
            Some([Some(r#""A""#), Some("1")])
        );
        assert_eq!(members("[1]"), None);
        assert_eq!(members(r#""text""#), None);
        assert_eq!(ObjectJson::Parsed(&Value::Null).members([&["kind"]]), None);
    }

    #[test]
    fn members_on_paths_stop_inside_the_object() {
        let members = |text: &'static str| ObjectJson::Raw(text).members([&["metadata", "name"], &["spec", "names"]]);
        // Reading stops in `spec` after `names`: the versions that follow are not read.
        assert_eq!(
            members(r#"{"metadata":{"name":"a.b"},"spec":{"group":"b","names":{"kind":"A"},"versions":[]}}"#),
            Some([Some(r#""a.b""#), Some(r#"{"kind":"A"}"#)])
        );
        // Out of order, or with a member missing, the whole object is read.
        assert_eq!(
            members(r#"{"spec":{"names":{},"scope":"x"},"kind":"K","metadata":{"labels":{},"name":"n"}}"#),
            Some([Some(r#""n""#), Some("{}")])
        );
        assert_eq!(members(r#"{"spec":{"group":"g"},"metadata":{}}"#), Some([None, None]));
        // An object on the path that is not an object: not read here.
        assert_eq!(members(r#"{"metadata":null,"spec":{"names":{}}}"#), None);
    }

    #[test]
    fn read_for_edit_reads_the_text_once_and_the_view_from_the_value() {
        let text = r#"{"metadata":{"name":"j"},"spec":{"ttlSecondsAfterFinished":5}}"#;
        let (whole, view) = ObjectJson::Raw(text).read_for_edit::<Job>();
        assert_eq!(whole.unwrap()["spec"]["ttlSecondsAfterFinished"], 5);
        let job = view.unwrap();
        assert_eq!(
            (job.metadata.name.as_str(), job.spec.ttl_seconds_after_finished),
            ("j", Some(5))
        );
    }

    #[test]
    fn read_for_edit_names_the_path_of_a_view_that_does_not_fit() {
        let text = r#"{"metadata":{"name":"j"},"spec":{"ttlSecondsAfterFinished":"5"}}"#;
        let (whole, view) = ObjectJson::Raw(text).read_for_edit::<Job>();
        assert!(whole.is_some());
        let (path, message) = view.unwrap_err();
        assert_eq!(path, "spec.ttlSecondsAfterFinished");
        assert!(message.starts_with("invalid type: string \"5\""), "{message}");
    }

    #[test]
    fn read_for_edit_of_a_built_object_reads_only_the_view() {
        let value = serde_json::json!({"metadata": {"name": "j"}});
        let (whole, view) = ObjectJson::Parsed(&value).read_for_edit::<Job>();
        assert!(whole.is_none());
        assert_eq!(view.unwrap().metadata.name, "j");
    }

    #[test]
    fn written_and_read_as_the_api_server_does() {
        for op in Operation::ALL {
            let json = serde_json::to_value(op).unwrap();
            assert_eq!(json, op.as_str());
            assert_eq!(serde_json::from_value::<Operation>(json).unwrap(), op);
            assert_eq!(op.as_str().parse::<Operation>(), Ok(op));
            assert_eq!(op.to_string(), op.as_str());
        }
        assert_eq!(
            serde_json::to_string(&Operation::ALL).unwrap(),
            r#"["CREATE","UPDATE","DELETE","CONNECT"]"#
        );
        assert!("create".parse::<Operation>().is_err());
        assert!("*".parse::<Operation>().is_err());
        assert!(serde_json::from_str::<Operation>("\"Create\"").is_err());
    }
}
