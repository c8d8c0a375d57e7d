//! The admission model: what a policy receives from Kubewarden and what it answers.
//!
//! The request is read with serde, borrowing from the payload: `object` and `oldObject` stay
//! unread [`RawValue`]s (serde_json only steps over them), so a check that does not apply to a
//! request never reads them, and each check that does reads the object once, into the view it
//! needs. The answer is Kubewarden's own [`ValidationResponse`] from kubewarden-policy-sdk, the
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

/// An object carried by a request: the JSON the request holds, unread, or (in the all-in-one
/// policy) the object as a check before changed it.
#[derive(Debug, Clone, Copy)]
pub enum ObjectJson<'a> {
    /// The request's own JSON, not yet read.
    Raw(&'a RawValue),
    /// An object a mutating check built.
    Parsed(&'a Value),
}

impl<'de: 'a, 'a> Deserialize<'de> for ObjectJson<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&RawValue>::deserialize(deserializer).map(ObjectJson::Raw)
    }
}

impl<'a> ObjectJson<'a> {
    /// Reads the object as `T` (a view, a [`Value`], ...); the error carries serde_json's
    /// `line L column C` in the object's text when the object is the request's own.
    pub fn read<T: Deserialize<'a>>(&self) -> Result<T, serde_json::Error> {
        #[cfg(test)]
        reads::note();
        match self {
            ObjectJson::Raw(raw) => serde_json::from_str(raw.get()),
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
                ObjectJson::Raw(raw) => crate::settings::path_of_error(raw.get(), &error),
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
            ObjectJson::Raw(raw) => serde_json::from_str::<Value>(raw.get()).ok(),
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
        let ObjectJson::Raw(raw) = self else {
            return None;
        };
        #[cfg(test)]
        reads::note();
        let mut found = [None; N];
        let mut reader = serde_json::Deserializer::from_str(raw.get());
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
            ObjectJson::Raw(raw) => Some(raw.get()),
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

/// Reads a request's `operation`: one of the API server's, else `None` (absent, `null`, or a
/// name the API server never sends, which no rule matches).
fn operation_or_none<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Operation>, D::Error> {
    Ok(str_or_empty(deserializer)?.parse().ok())
}

/// A Kubernetes AdmissionRequest as Kubewarden hands it to a policy: the members policies read
/// (the uid and the rest are the host's and skipped unread). Like the views of objects, it reads
/// `null` as absent.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(remote = "Self", default, rename_all = "camelCase")]
pub struct Request<'a> {
    /// Kind of the object.
    #[serde(borrow, deserialize_with = "null_as_default")]
    pub kind: GroupVersionKind<'a>,
    /// Resource addressed.
    #[serde(borrow, deserialize_with = "null_as_default")]
    pub resource: GroupVersionResource<'a>,
    /// Subresource addressed, if any (`status`, `scale`, ...).
    #[serde(borrow, deserialize_with = "optional_str")]
    pub sub_resource: Option<Cow<'a, str>>,
    /// Name of the object (may be empty on CREATE with generateName).
    #[serde(borrow, deserialize_with = "optional_str")]
    pub name: Option<Cow<'a, str>>,
    /// Namespace of the object, absent for cluster-scoped objects.
    #[serde(borrow, deserialize_with = "optional_str")]
    pub namespace: Option<Cow<'a, str>>,
    /// The operation; `None` when absent or not one the API server sends (no rule matches it).
    #[serde(deserialize_with = "operation_or_none")]
    pub operation: Option<Operation>,
    /// The new object, unread; `None` when absent or `null`.
    #[serde(borrow)]
    pub object: Option<ObjectJson<'a>>,
    /// The existing object on UPDATE and DELETE, unread; `None` when absent or `null`.
    #[serde(borrow)]
    pub old_object: Option<ObjectJson<'a>>,
}

object_only!(
    GroupVersionKind<'de>,
    GroupVersionResource<'de>,
    Request<'de>,
    ValidationRequest<'de>
);

/// Reads the admission request, `null` as an empty one.
fn request_or_default<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Request<'de>, D::Error> {
    Ok(Option::<Request<'de>>::deserialize(deserializer)?.unwrap_or_default())
}

/// The payload of the waPC `validate` operation.
#[derive(Debug, Deserialize)]
#[serde(remote = "Self")]
pub struct ValidationRequest<'a> {
    /// The admission request.
    #[serde(borrow, deserialize_with = "request_or_default")]
    pub request: Request<'a>,
    /// The policy settings, unread; `None` when absent or `null`.
    #[serde(borrow, default)]
    pub settings: Option<&'a RawValue>,
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

    fn raw(text: &str) -> &RawValue {
        serde_json::from_str(text).unwrap()
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
        let members = |text: &'static str| ObjectJson::Raw(raw(text)).members([&["kind"], &["metadata"]]);
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
        let members =
            |text: &'static str| ObjectJson::Raw(raw(text)).members([&["metadata", "name"], &["spec", "names"]]);
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
        let text = raw(r#"{"metadata":{"name":"j"},"spec":{"ttlSecondsAfterFinished":5}}"#);
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
        let text = raw(r#"{"metadata":{"name":"j"},"spec":{"ttlSecondsAfterFinished":"5"}}"#);
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
