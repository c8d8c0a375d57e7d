//! Cluster facts for context-aware checks, answered by Kubewarden's host callbacks in a
//! cluster, by a replay file under kwctl or `syncguard run`, and by the scanned set offline
//! (the host side of the last two is in the syncguard-scan crate).

use crate::k8s::view_list;
use kubewarden_policy_sdk::host_capabilities::kubernetes::{GetResourceRequest, ListAllResourcesRequest};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;
use std::thread::LocalKey;

/// Objects as the cluster answered them: the text of a Kubernetes List, unread until a check
/// reads its items into the view it needs with [`Items::read`].
#[derive(Debug, Clone)]
pub struct Items {
    /// The List's JSON text.
    body: String,
}

/// Why the items of a List could not be read.
#[derive(Debug)]
pub enum ItemsError {
    /// The answer is not a List (`the cluster's answer is not a List: ...`).
    NotAList(String),
    /// Item `.0` does not fit the view; the error's position is in the item's own text.
    Item(usize, serde_json::Error),
}

impl Items {
    /// The items read as `T`, in one pass over the List (a `null` item reads as `T::default()`,
    /// as a `null` field does). Only when that fails is the List read again, item by item, for
    /// the error to name the item and a position inside it.
    pub fn read<T: DeserializeOwned + Default>(&self) -> Result<Vec<T>, ItemsError> {
        // A List is an object; serde's derive would also read a struct from an array.
        if self.body.trim_start().starts_with('{')
            && let Ok(list) = serde_json::from_str::<ListOf<T>>(&self.body)
        {
            return Ok(list.items);
        }
        let raw = parse_list(&self.body).map_err(ItemsError::NotAList)?;
        let mut items = Vec::with_capacity(raw.len());
        for (i, item) in raw.into_iter().enumerate() {
            let item = serde_json::from_str::<Option<T>>(item.get()).map_err(|e| ItemsError::Item(i, e))?;
            items.push(item.unwrap_or_default());
        }
        Ok(items)
    }

    /// [`Items::read`], reusing the items of the last List read into `last` when this List's
    /// text is the same, byte for byte. An engine that keeps one module instance for many
    /// requests (`syncguard scan` does, for every document of a tree) hands the same List to
    /// each of them; reading it again each time would make a scan quadratic in the List's
    /// size. The answer never depends on the cache: the items are those the text reads as.
    /// An engine that starts every evaluation from a fresh instance never finds anything here.
    pub fn read_reusing<T: DeserializeOwned + Default>(
        self,
        last: &'static LocalKey<LastList<T>>,
    ) -> Result<Rc<Vec<T>>, ItemsError> {
        if let Some(items) = last.with_borrow(|last| match last {
            Some((body, items)) if same_text(body, &self.body) => Some(items.clone()),
            _ => None,
        }) {
            return Ok(items);
        }
        let items = Rc::new(self.read::<T>()?);
        last.set(Some((self.body, items.clone())));
        Ok(items)
    }
}

/// A List's text and its items as read, kept for [`Items::read_reusing`] in a `thread_local!`.
pub type LastList<T> = RefCell<Option<(String, Rc<Vec<T>>)>>;

/// Read access to the cluster's objects.
pub trait Cluster {
    /// Every object of `kind` in `api_version`, across namespaces (`list_resources_all`), each
    /// pruned to `field_masks` (dot-separated paths; none: whole objects) as Kubewarden's
    /// reflector does (`syncguard_scan::reflector` reproduces it).
    fn list_all(&self, api_version: &str, kind: &str, field_masks: &[&str]) -> Result<Items, String>;

    /// The object of `kind` in `api_version` named `name` (in `namespace` when the kind is
    /// namespaced), as JSON text (`get_resource`), pruned to `field_masks` where the host honours
    /// them. An object that does not exist is an error that [`is_not_found`] recognises.
    fn get(
        &self,
        api_version: &str,
        kind: &str,
        name: &str,
        namespace: Option<&str>,
        field_masks: &[&str],
    ) -> Result<String, String>;
}

/// How Kubewarden's `get_resource` says that the object does not exist (policy-evaluator's
/// Kubernetes client: `Cannot find <apiVersion>/<kind> named '<name>' inside of namespace
/// '<namespace as Rust debug>'`); the offline cluster answers the same.
pub fn not_found(api_version: &str, kind: &str, name: &str, namespace: Option<&str>) -> String {
    format!("Cannot find {api_version}/{kind} named '{name}' inside of namespace '{namespace:?}'")
}

/// How Kubewarden's policy-evaluator words a host call that failed, before the error itself.
pub const CALLBACK_FAILURE: &str = "Callback evaluation failure: ";

/// Whether a failed `get` (its message as [`host_error`] gives it, so without Kubewarden's
/// [`CALLBACK_FAILURE`]) says the object does not exist.
pub fn is_not_found(error: &str) -> bool {
    error.starts_with("Cannot find ")
}

/// The request of Kubewarden's `kubernetes/get_resource` host call, as kubewarden-policy-sdk
/// defines it: the cache kept (Kubewarden keeps answers five seconds), `field_masks` absent
/// (`null`) when none are given.
pub fn get_request(
    api_version: &str,
    kind: &str,
    name: &str,
    namespace: Option<&str>,
    field_masks: &[&str],
) -> GetResourceRequest {
    GetResourceRequest {
        api_version: api_version.to_string(),
        kind: kind.to_string(),
        name: name.to_string(),
        namespace: namespace.map(str::to_string),
        disable_cache: false,
        field_masks: (!field_masks.is_empty()).then(|| field_masks.iter().map(|p| p.to_string()).collect()),
    }
}

/// What a policy quotes of a failed host call: the host's error without the guest library's
/// `Host error: ` prefix and the evaluator's [`CALLBACK_FAILURE`] (the same words on every
/// failure, which would take the room of the error itself in a 256-character warning), and only
/// its first paragraph. kwctl's error carries anyhow's `Stack backtrace:` after a blank line,
/// twenty frames long, which has no place in a rejection or a warning. A module and the native
/// checks then quote a failure alike.
pub fn host_error(message: &str) -> String {
    let message = message.strip_prefix("Host error: ").unwrap_or(message).trim_start();
    let message = message.strip_prefix(CALLBACK_FAILURE).unwrap_or(message);
    let first = message.split("\n\n").next().unwrap_or(message);
    first.trim_end().to_string()
}

/// A cluster that answers nothing: for checks that are not context-aware.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoCluster;

impl Cluster for NoCluster {
    fn list_all(&self, api_version: &str, kind: &str, _field_masks: &[&str]) -> Result<Items, String> {
        Err(format!(
            "no cluster lookups are available here (asked for {kind} in {api_version})"
        ))
    }

    fn get(&self, api_version: &str, kind: &str, name: &str, _: Option<&str>, _: &[&str]) -> Result<String, String> {
        Err(format!(
            "no cluster lookups are available here (asked for {kind} {name} in {api_version})"
        ))
    }
}

/// A cluster that lists fixed objects as they are, for the core's unit tests (the host side's
/// offline cluster, which also prunes them as Kubewarden does, is syncguard-scan's).
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct Objects(pub Vec<Value>);

#[cfg(test)]
impl Cluster for Objects {
    fn list_all(&self, api_version: &str, kind: &str, _field_masks: &[&str]) -> Result<Items, String> {
        to_items(
            self.0
                .iter()
                .filter(|o| o["apiVersion"] == api_version && o["kind"] == kind),
        )
    }

    fn get(
        &self,
        api_version: &str,
        kind: &str,
        name: &str,
        namespace: Option<&str>,
        _field_masks: &[&str],
    ) -> Result<String, String> {
        self.0
            .iter()
            .find(|o| {
                o["apiVersion"] == api_version
                    && o["kind"] == kind
                    && o["metadata"]["name"] == name
                    && o["metadata"]["namespace"].as_str() == namespace
            })
            .map(Value::to_string)
            .ok_or_else(|| not_found(api_version, kind, name, namespace))
    }
}

/// The request of Kubewarden's `kubernetes/list_resources_all` host call, as
/// kubewarden-policy-sdk defines it: no selectors, and `field_masks` absent (`null`) when none
/// are given, else the set of paths.
pub fn list_all_request(api_version: &str, kind: &str, field_masks: &[&str]) -> ListAllResourcesRequest {
    ListAllResourcesRequest {
        api_version: api_version.to_string(),
        kind: kind.to_string(),
        label_selector: None,
        field_selector: None,
        field_masks: (!field_masks.is_empty()).then(|| {
            field_masks
                .iter()
                .map(|path| path.to_string())
                .collect::<BTreeSet<String>>()
        }),
    }
}

/// Objects as [`Items`].
pub fn to_items<'a>(objects: impl IntoIterator<Item = &'a Value>) -> Result<Items, String> {
    let items: Vec<&Value> = objects.into_iter().collect();
    let body = serde_json::to_string(&serde_json::json!({ "items": items })).map_err(|e| e.to_string())?;
    Ok(Items { body })
}

/// A Kubernetes List as far as a policy checks it: its items unread.
#[derive(Deserialize)]
#[serde(remote = "Self")]
struct List<'a> {
    /// The listed objects, unread; `null` or absent reads as none.
    #[serde(borrow, default)]
    items: Option<Vec<&'a RawValue>>,
}

crate::admission::object_only!(List<'de>);

/// A Kubernetes List read in one pass, its items as views.
#[derive(Deserialize)]
#[serde(bound = "T: DeserializeOwned + Default")]
struct ListOf<T> {
    /// The listed objects; `null` (the list or an item) reads as empty.
    #[serde(default, deserialize_with = "view_list")]
    items: Vec<T>,
}

/// The items of a List, unread, or why the text is not a List.
fn parse_list(text: &str) -> Result<Vec<&RawValue>, String> {
    let list: List = serde_json::from_str(text).map_err(|e| format!("the cluster's answer is not a List: {e}"))?;
    Ok(list.items.unwrap_or_default())
}

/// Takes a Kubernetes List response: JSON text (its items are read by [`Items::read`]). A `Vec`
/// is kept as it is, not copied: a List of thousands of CRDs is megabytes.
pub fn list_items(body: impl Into<Vec<u8>>) -> Result<Items, String> {
    let body = String::from_utf8(body.into()).map_err(|e| format!("the cluster's answer is not a List: {e}"))?;
    Ok(Items { body })
}

/// Whether two texts are the same, compared eight bytes at a time. Written by hand because the
/// `memcmp` a wasm32 module links (compiler-builtins') compares one byte at a time, and
/// [`Items::read_reusing`] compares a List of megabytes on every call of a scan: with a
/// quarter of a 10,000-manifest tree being CRDs, that byte loop took most of the scan's time.
fn same_text(a: &str, b: &str) -> bool {
    const WORD: usize = 8;
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let word = |chunk: &[u8]| u64::from_ne_bytes(chunk.try_into().unwrap_or([0; WORD]));
    let (mut left, mut right) = (a.chunks_exact(WORD), b.chunks_exact(WORD));
    left.by_ref().zip(right.by_ref()).all(|(x, y)| word(x) == word(y)) && left.remainder() == right.remainder()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_text_compares_every_byte() {
        let text = "0123456789abcdefXYZ";
        assert!(same_text(text, String::from(text).as_str()));
        assert!(same_text("", ""));
        for other in ["0123456789abcdefXYz", "0123456_89abcdefXYZ", "0123456789abcdefXY", "x"] {
            assert!(!same_text(text, other), "{other}");
        }
    }

    #[test]
    fn list_answers_are_read_in_one_pass_and_errors_name_the_item() {
        let read = |body: &[u8]| list_items(body).and_then(|items| items.read::<Value>().map_err(|e| format!("{e:?}")));
        let items = read(br#"{"kind": "List", "items": [{"a": 1}, null, {"b": [2]}]}"#).unwrap();
        assert_eq!(
            items,
            [serde_json::json!({"a": 1}), Value::Null, serde_json::json!({"b": [2]})]
        );
        for empty in [&br#"{"items": null}"#[..], br#"{"kind": "List"}"#] {
            assert!(read(empty).unwrap().is_empty());
        }
        let wrong = read(br#"{"items": {}}"#).unwrap_err();
        assert!(
            wrong.contains("the cluster's answer is not a List: invalid type: map, expected a sequence"),
            "{wrong}"
        );
        assert!(read(b"[[1]]").unwrap_err().contains("expected struct List"));
        assert!(read(b"{\"items\": [").unwrap_err().contains("EOF while parsing a list"));
        assert!(list_items(b"\xff").unwrap_err().contains("not a List"));
        let crds = list_items(br#"{"items": [{"metadata": {"name": "a"}}, {"metadata": {"name": 7}}]}"#).unwrap();
        match crds.read::<crate::k8s::CrdIdentity>() {
            Err(ItemsError::Item(1, e)) => {
                assert_eq!(
                    e.to_string(),
                    "invalid type: integer `7`, expected a string at line 1 column 23"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_same_list_text_is_read_once() {
        thread_local! {
            static LAST: LastList<Value> = const { RefCell::new(None) };
        }
        let first = list_items(br#"{"items": [{"a": 1}]}"#)
            .unwrap()
            .read_reusing(&LAST)
            .unwrap();
        let again = list_items(br#"{"items": [{"a": 1}]}"#)
            .unwrap()
            .read_reusing(&LAST)
            .unwrap();
        assert!(Rc::ptr_eq(&first, &again));
        let other = list_items(br#"{"items": [{"a": 1}, {"b": 2}]}"#)
            .unwrap()
            .read_reusing(&LAST)
            .unwrap();
        assert_eq!(other.len(), 2);
        let back = list_items(br#"{"items": [{"a": 1}]}"#)
            .unwrap()
            .read_reusing(&LAST)
            .unwrap();
        assert!(!Rc::ptr_eq(&first, &back) && first == back);
        assert!(list_items(b"[").unwrap().read_reusing(&LAST).is_err());
        let kept = list_items(br#"{"items": [{"a": 1}]}"#)
            .unwrap()
            .read_reusing(&LAST)
            .unwrap();
        assert!(Rc::ptr_eq(&back, &kept), "a failed read leaves the last list in place");
    }

    #[test]
    fn list_all_requests_carry_the_masks() {
        let text = |masks: &[&str]| serde_json::to_string(&list_all_request("v1", "Pod", masks)).unwrap();
        assert!(text(&[]).contains(r#""field_masks":null"#), "{}", text(&[]));
        assert!(
            text(&["spec.b", "spec.a"]).contains(r#""field_masks":["spec.a","spec.b"]"#),
            "{}",
            text(&["spec.b", "spec.a"])
        );
    }

    #[test]
    fn a_missing_object_is_recognised_as_kubewarden_hands_it_to_a_module() {
        let missing = not_found(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            "x.example.com",
            None,
        );
        assert!(is_not_found(&missing));
        // As a module receives it: the guest library's and Kubewarden's words before it.
        assert!(is_not_found(&host_error(&format!(
            "Host error: {CALLBACK_FAILURE}{missing}"
        ))));
        assert!(is_not_found(&host_error(&format!(
            "{CALLBACK_FAILURE}{missing}\n\nStack backtrace:\n 0: x"
        ))));
        assert!(!is_not_found(&host_error(&format!(
            "{CALLBACK_FAILURE}customresourcedefinitions is forbidden"
        ))));
        assert!(!is_not_found("forbidden: Cannot find it"));
        // A module quotes what the host said, as the native checks do.
        assert_eq!(
            host_error(&format!("Host error: {CALLBACK_FAILURE}{missing}\n\nStack backtrace:")),
            missing
        );
    }
}
