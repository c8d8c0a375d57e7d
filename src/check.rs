//! The contract every check implements, and the payload handling shared by all policies.
//!
//! A check declares what it applies to (its admission rules, the kinds it judges, whether it
//! needs the old object) and returns findings ([`crate::finding`]); everything around that is
//! here, the same for every check: reading the payload and the settings, routing by rule and
//! kind, the one rule for a request without an object, and rendering ([`crate::render`]).
//!
//! [`handle_validate`] and [`handle_validate_settings`] are what the waPC operations of a
//! policy do; they are plain functions over bytes so they are tested natively too.

pub mod shared_walk;

use crate::admission::{
    self, GroupVersionKind, ObjectJson, ObjectReader, Request, Response, ValidationRequest, ValidationResponse,
};
use crate::cluster::Cluster;
use crate::finding::{Malformed, Report, RuleDoc};
use crate::json::{self, Node};
use crate::render::{self, Answer, Part};
use crate::rules::{self, Rule};
use crate::settings;
use serde::de::DeserializeOwned;
use std::cell::OnceCell;

/// Largest `validate` payload a policy reads (request plus settings). Kubernetes caps a request
/// body at 3 MiB and an object in etcd at 1.5 MiB; anything larger is refused unread.
pub const MAX_PAYLOAD_BYTES: usize = 16 * 1024 * 1024;

/// A kind a check judges: its API group (`""` for the core group) and kind.
pub type GroupKind = (&'static str, &'static str);

/// A resource a check looks up in the cluster: its `apiVersion` and kind, as metadata.yml's
/// `contextAwareResources` lists it.
pub type Lookup = (&'static str, &'static str);

/// A resource a deployment grants a policy to look up, `(apiVersion, kind)`, as its
/// `contextAwareResources` names it (one its settings chose: [`Check::settings_lookups`]).
pub type Grant = (String, String);

/// The objects of one request as every check that judges it reads them: the request's object
/// and old object as their text (a check that reads only their first members, which Kubewarden's
/// sorted keys put first, reads that far and stops), and each read whole at most once, into the
/// one tree ([`Node`], read by [`json::Everything`]) every check that reads it judges. A module
/// whose checks read an object whole has it read into that tree in the request's own pass
/// ([`read_request`]), so its text is read once; otherwise the first check that needs the tree
/// reads it. The all-in-one hands the same `Objects` to every check of a request, so a CRD or a
/// Deployment is read once whatever the number of checks.
pub struct Objects<'a> {
    /// The new object, unread.
    pub object: ObjectJson<'a>,
    /// The old object (UPDATE, DELETE), unread.
    pub old_object: Option<ObjectJson<'a>>,
    /// The object read whole, and the deepest level a container was read at.
    tree: OnceCell<Read<'a>>,
    /// The old object read whole, likewise.
    old_tree: OnceCell<Read<'a>>,
}

/// An object read whole: its tree and the deepest level read ([`json::read_noting_depth`]).
pub type Tree<'a> = (Node<'a>, usize);

/// An object read whole, or serde_json's error (its reader stops at 128 levels).
type Read<'a> = Result<Tree<'a>, serde_json::Error>;

impl<'a> Objects<'a> {
    /// The objects of `request`, with `object` as its object (the request's own, or one a check
    /// before changed); unread.
    pub fn new(object: ObjectJson<'a>, old_object: Option<ObjectJson<'a>>) -> Objects<'a> {
        Objects {
            object,
            old_object,
            tree: OnceCell::new(),
            old_tree: OnceCell::new(),
        }
    }

    /// The objects of a request whose reader read them into trees already (`None`: not read).
    pub fn with_trees(
        object: ObjectJson<'a>,
        old_object: Option<ObjectJson<'a>>,
        object_tree: Option<Tree<'a>>,
        old_tree: Option<Tree<'a>>,
    ) -> Objects<'a> {
        Objects {
            object,
            old_object,
            tree: object_tree.map(Ok).map(OnceCell::from).unwrap_or_default(),
            old_tree: old_tree.map(Ok).map(OnceCell::from).unwrap_or_default(),
        }
    }

    /// The object read whole, every part, nested as deep as serde_json reads (128 levels), and
    /// the deepest level a container was read at: read on the first call (or in the request's
    /// pass), borrowed after.
    pub fn tree(&self) -> Result<(&Node<'a>, usize), &serde_json::Error> {
        read_whole(&self.tree, self.object)
    }

    /// The old object read whole, as [`Objects::tree`]; `None` when the request has none.
    pub fn old_tree(&self) -> Option<Result<(&Node<'a>, usize), &serde_json::Error>> {
        self.old_object.map(|old| read_whole(&self.old_tree, old))
    }

    /// The object's tree if a check has read it already (the all-in-one reads it first when a
    /// check that applies reads the whole object): a check that reads only the start of the
    /// object looks there before it reads the text.
    pub fn read_tree(&self) -> Option<&Node<'a>> {
        match self.tree.get() {
            Some(Ok((node, _))) => Some(node),
            _ => None,
        }
    }
}

/// Reads `object` whole into `cell`, once.
fn read_whole<'c, 'a>(
    cell: &'c OnceCell<Read<'a>>,
    object: ObjectJson<'a>,
) -> Result<(&'c Node<'a>, usize), &'c serde_json::Error> {
    let read = cell.get_or_init(|| {
        #[cfg(test)]
        admission::reads::note();
        match object {
            ObjectJson::Raw(text) => json::read_noting_depth(text, json::Everything, usize::MAX),
            ObjectJson::Parsed(value) => json::read_value_noting_depth(value, usize::MAX),
        }
    });
    match read {
        Ok((node, deepest)) => Ok((node, *deepest)),
        Err(e) => Err(e),
    }
}

/// One syncguard check: its name, what it applies to, its settings and its findings.
pub trait Check {
    /// The check's settings; `Default` gives every documented default.
    type Settings: DeserializeOwned + Default;

    /// Policy name, e.g. `crd-schema-fields`.
    const NAME: &'static str;

    /// Section of the all-in-one policy's settings that configures this check, e.g.
    /// `crdSchemaFields`.
    const SETTINGS_KEY: &'static str;

    /// The admission rules the policy registers for, generated from its metadata.yml; the
    /// check sees only the requests they match.
    const RULES: &'static [Rule];

    /// The kinds the check judges (the request's `kind`); a request of another kind is
    /// accepted unread. Empty: every kind.
    const KINDS: &'static [GroupKind];

    /// Whether an UPDATE must carry `oldObject` for the check to judge it (see [`evaluate`]).
    const NEEDS_OLD_OBJECT: bool = false;

    /// Whether the check judges an UPDATE by what it changes (reads `oldObject` when there is
    /// one): `syncguard scan --base` and the playground's old objects send such checks an UPDATE
    /// from the old object, and every other check the CREATE of the new one.
    const READS_OLD_OBJECT: bool = Self::NEEDS_OLD_OBJECT;

    /// The rules of the check's findings, with the README section of each.
    const FINDINGS: &'static [RuleDoc];

    /// Whether the check reads the whole object ([`Objects::tree`]) of the requests it judges:
    /// the module's reader then reads it into the tree in the request's own pass (for a request
    /// of a kind in [`Check::KINDS`]), and the checks that read only its start
    /// ([`Objects::read_tree`]) use that tree rather than read the text again.
    const READS_WHOLE: bool = false;

    /// Whether the check reads the whole old object ([`Objects::old_tree`]); likewise.
    const READS_OLD_WHOLE: bool = false;

    /// The resources the check looks up in the cluster (its metadata.yml's
    /// `contextAwareResources`; the all-in-one's lists them all). Empty: it asks nothing.
    const LOOKUPS: &'static [Lookup] = &[];

    /// Checks the settings beyond their shape (ranges, duplicates, ...).
    fn validate_settings(_settings: &Self::Settings) -> Result<(), String> {
        Ok(())
    }

    /// The resources `settings` name for the check to look up beyond [`Check::LOOKUPS`], as
    /// `(apiVersion, kind)`: a deployment grants each in its `contextAwareResources`, and
    /// `syncguard scan` grants them too. Default: none.
    fn settings_lookups(_settings: &Self::Settings) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Judges `objects`, the objects of a request that [`Check::RULES`] and [`Check::KINDS`]
    /// match, read as far as the check needs (their text, or the one tree of each, read once
    /// for every check of the request); what the rules cannot say (the operations a check
    /// judges within its rules, ...) is the check's to test. An object of the wrong shape is
    /// [`Malformed`].
    fn check(
        request: &Request<'_>,
        objects: &Objects<'_>,
        settings: &Self::Settings,
        cluster: &dyn Cluster,
    ) -> Result<Report, Malformed>;
}

/// What a request without `object` gets, whatever the check: a rejection with code 400 (the
/// API server always sends the object a CREATE or UPDATE writes; a request without one was
/// written by hand).
pub const NO_OBJECT: &str =
    "the request carries no object to check (the API server always sends the object a CREATE or UPDATE writes)";

/// What an UPDATE without `oldObject` gets from a check that compares the two.
pub const NO_OLD_OBJECT: &str =
    "the UPDATE carries no oldObject, so the change cannot be checked (the API server always sends it)";

/// Whether `request` is one check `C` judges: its rules match it (operation, resource,
/// subresource) and its kind is one of `C::KINDS`.
pub fn applies<C: Check>(request: &Request<'_>) -> bool {
    rules::any_matches(C::RULES, request) && is_one_of(C::KINDS, &request.kind)
}

/// Judges a request with check `C`: its part of the answer, to be rendered, or `None` when the
/// check does not apply (accepted unread). A request without `object`, or an UPDATE without
/// `oldObject` for a check that needs it, is refused with code 400 ([`NO_OBJECT`],
/// [`NO_OLD_OBJECT`]).
pub fn evaluate<C: Check>(request: &Request<'_>, settings: &C::Settings, cluster: &dyn Cluster) -> Option<Part> {
    let objects = request.object.map(|object| Objects::new(object, request.old_object));
    evaluate_on::<C>(request, objects.as_ref(), settings, cluster)
}

/// [`evaluate`] on the request's objects as read so far (`None`: the request has no object), so
/// that every check of the all-in-one judges the same trees.
pub fn evaluate_on<C: Check>(
    request: &Request<'_>,
    objects: Option<&Objects<'_>>,
    settings: &C::Settings,
    cluster: &dyn Cluster,
) -> Option<Part> {
    evaluate_with::<C>(request, objects, settings, cluster, C::check)
}

/// [`evaluate_on`] with `judge` in place of [`Check::check`]: the all-in-one runs
/// object-validation so, on what the API server stored only.
pub fn evaluate_with<C: Check>(
    request: &Request<'_>,
    objects: Option<&Objects<'_>>,
    settings: &C::Settings,
    cluster: &dyn Cluster,
    judge: impl FnOnce(&Request<'_>, &Objects<'_>, &C::Settings, &dyn Cluster) -> Result<Report, Malformed>,
) -> Option<Part> {
    if !applies::<C>(request) {
        return None;
    }
    let Some(objects) = objects else {
        return Some(Part::refusal(C::NAME, NO_OBJECT.to_string(), 400));
    };
    if C::NEEDS_OLD_OBJECT && request.is_update() && objects.old_object.is_none() {
        return Some(Part::refusal(C::NAME, NO_OLD_OBJECT.to_string(), 400));
    }
    Some(part::<C>(judge(request, objects, settings, cluster)))
}

/// Check `C`'s part of the answer, from what it made of a request it judges: its report, or a
/// refusal with code 400 of an object of the wrong shape.
pub fn part<C: Check>(result: Result<Report, Malformed>) -> Part {
    match result {
        Ok(report) => Part::report(C::NAME, C::FINDINGS, report),
        Err(Malformed(message)) => Part::refusal(C::NAME, message, 400),
    }
}

/// The waPC operation every syncguard module exports beside `validate`: the structured report of
/// a request ([`handle_report`]).
pub const REPORT: &str = "report";

/// What a `validate` rejection says when the settings in its payload do not validate.
pub const INVALID_SETTINGS: &str = "invalid settings";

/// What a policy module runs: one check (every [`Check`] is a module, run alone) or the
/// all-in-one (every check of the registry, [`crate::all_in_one::AllInOne`]). Its items are a
/// check's, by the same names: the waPC operations below take any module.
pub trait Module {
    /// The module's settings; `Default` gives every documented default.
    type Settings: DeserializeOwned + Default;

    /// The module's name (its folder under `policies/`).
    const NAME: &'static str;

    /// The admission rules it registers for (its metadata.yml's).
    const RULES: &'static [Rule];

    /// Checks the settings beyond their shape.
    fn validate_settings(settings: &Self::Settings) -> Result<(), String>;

    /// The resources its settings name for it to look up ([`Check::settings_lookups`]).
    fn settings_lookups(settings: &Self::Settings) -> Vec<(String, String)>;

    /// Whether a check of the module reads the object (`old`: the old object) of a request of
    /// `kind` whole ([`Check::READS_WHOLE`], [`Check::READS_OLD_WHOLE`]), whatever the settings
    /// and the operation (the request's reader decides before it has read them).
    fn reads_whole(kind: &GroupVersionKind<'_>, old: bool) -> bool;

    /// Decides one request, one that [`Module::RULES`] match, with its objects as read so far
    /// (`None`: the request has none): the response and every finding behind it.
    fn decide<'a>(
        request: &Request<'a>,
        objects: Option<&Objects<'a>>,
        settings: &Self::Settings,
        cluster: &dyn Cluster,
    ) -> Answer;
}

/// Whether `kind` is one of `kinds` (empty: every kind).
pub fn is_one_of(kinds: &[GroupKind], kind: &GroupVersionKind<'_>) -> bool {
    kinds.is_empty()
        || kinds
            .iter()
            .any(|(group, name)| kind.group == *group && kind.kind == *name)
}

impl<C: Check> Module for C {
    type Settings = <C as Check>::Settings;
    const NAME: &'static str = <C as Check>::NAME;
    const RULES: &'static [Rule] = <C as Check>::RULES;

    fn validate_settings(settings: &Self::Settings) -> Result<(), String> {
        <C as Check>::validate_settings(settings)
    }

    fn settings_lookups(settings: &Self::Settings) -> Vec<(String, String)> {
        <C as Check>::settings_lookups(settings)
    }

    fn reads_whole(kind: &GroupVersionKind<'_>, old: bool) -> bool {
        (if old { C::READS_OLD_WHOLE } else { C::READS_WHOLE }) && is_one_of(C::KINDS, kind)
    }

    fn decide<'a>(
        request: &Request<'a>,
        objects: Option<&Objects<'a>>,
        settings: &Self::Settings,
        cluster: &dyn Cluster,
    ) -> Answer {
        match evaluate_on::<C>(request, objects, settings, cluster) {
            None => Response::accept().into(),
            Some(mut part) => {
                let mutation = part.take_mutation();
                let mut answer = render::answer(vec![part], false);
                answer.response.mutated_object = mutation;
                answer
            }
        }
    }
}

/// Parses and checks a policy's settings from raw JSON (absent or `null` means defaults).
pub fn parse_settings<P: Module>(raw: Option<&str>) -> Result<P::Settings, String> {
    let parsed: P::Settings = settings::parse(raw)?;
    P::validate_settings(&parsed)?;
    Ok(parsed)
}

/// The resources policy `P`'s settings, as JSON text (absent: defaults), name for it to look
/// up beyond its metadata's `contextAwareResources` ([`Check::settings_lookups`]), or why the
/// settings do not read.
pub fn settings_lookups<P: Module>(raw: Option<&str>) -> Result<Vec<(String, String)>, String> {
    parse_settings::<P>(raw).map(|settings| P::settings_lookups(&settings))
}

/// Runs the `validate` operation of policy `P` on a waPC payload and returns the response bytes.
///
/// Outcomes for input that is not a well-formed request, by rule:
/// - a payload over [`MAX_PAYLOAD_BYTES`] or one that is not a validation request is rejected
///   with code 400 and a message saying what could not be read;
/// - settings that do not validate are rejected with code 400 (the engine normally refuses
///   them before any request is sent);
/// - a request the policy's rules do not match is accepted without reading its object: kwctl
///   sends any request, and the module then answers as it would behind policy-server's
///   webhook, which never sends it (the all-in-one routes requests to its checks the same way).
pub fn handle_validate<P: Module>(payload: &[u8], cluster: &dyn Cluster) -> Vec<u8> {
    decide::<P>(payload, cluster).to_json()
}

/// Runs the `report` operation of policy `P`: the same payload as `validate`, answered with the
/// structured report of the request ([`Answer::report_json`]): exactly what `validate` returns,
/// and every finding whole (the admission answer and its audit annotation cut them to the API
/// server's limits). Kubewarden never calls it; `syncguard scan` and the playground do.
pub fn handle_report<P: Module>(payload: &[u8], cluster: &dyn Cluster) -> Vec<u8> {
    answer::<P>(payload, cluster).report_json()
}

/// Decides a raw `validate` payload with policy `P` (see [`handle_validate`]).
pub fn decide<P: Module>(payload: &[u8], cluster: &dyn Cluster) -> Response {
    answer::<P>(payload, cluster).response
}

/// [`decide`], with every finding behind the verdict.
pub fn answer<P: Module>(payload: &[u8], cluster: &dyn Cluster) -> Answer {
    let read = match read_request::<P>(payload) {
        Ok(read) => read,
        Err(verdict) => return verdict.into(),
    };
    let ValidationRequest {
        request,
        settings,
        object_tree,
        old_object_tree,
    } = read;
    let settings = match parse_settings::<P>(settings.map(|raw| raw.get())) {
        Ok(settings) => settings,
        Err(message) => {
            return Response::reject_with_code(format!("{}: {INVALID_SETTINGS}: {message}", P::NAME), 400).into();
        }
    };
    if !rules::any_matches(P::RULES, &request) {
        return Response::accept().into();
    }
    let objects = request
        .object
        .map(|object| Objects::with_trees(object, request.old_object, object_tree, old_object_tree));
    P::decide(&request, objects.as_ref(), &settings, cluster)
}

/// A module's reader of a request's objects ([`ObjectReader`]): an object a check of module reads
/// whole is read into the one tree ([`json::Everything`]) in the request's own pass.
#[derive(Clone, Copy)]
struct IntoTree {
    /// [`Module::reads_whole`] of the module.
    reads_whole: fn(&GroupVersionKind<'_>, bool) -> bool,
}

impl<'de> ObjectReader<'de> for IntoTree {
    type Tree = Tree<'de>;

    fn reads(self, kind: &GroupVersionKind<'_>, old: bool) -> bool {
        (self.reads_whole)(kind, old)
    }

    fn read<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Tree<'de>, D::Error> {
        #[cfg(test)]
        admission::reads::note();
        json::read_from(deserializer, json::Everything, usize::MAX)
    }
}

/// Reads a `validate` payload for module `P` (borrowing from it, the objects its checks read
/// whole read into their trees in the same pass), or gives the rejection documented in
/// [`handle_validate`].
///
/// Read in the request's pass, an object nests two levels deeper in serde_json's count (its
/// reader stops at 128 levels of the whole payload), and a number too large for an `f64` fails
/// the pass: when the pass fails, the payload is read again with every object left as text, so
/// that the request reads, and each check meets such an object, as it would alone.
pub fn read_request<P: Module>(payload: &[u8]) -> Result<ValidationRequest<'_, Tree<'_>>, Response> {
    if payload.len() > MAX_PAYLOAD_BYTES {
        return Err(Response::reject_with_code(
            format!(
                "syncguard: the admission request is {} bytes, more than the {} bytes a policy reads; Kubernetes itself caps a request at 3 MiB",
                payload.len(),
                MAX_PAYLOAD_BYTES
            ),
            400,
        ));
    }
    let text = std::str::from_utf8(payload).map_err(|e| {
        Response::reject_with_code(
            format!("syncguard: the admission request is not valid UTF-8 JSON: {e}"),
            400,
        )
    })?;
    let reader = IntoTree {
        reads_whole: P::reads_whole,
    };
    admission::read_validation_request(text, reader)
        .or_else(|_| {
            admission::read_validation_request(text, admission::TextOnly).map(|read| ValidationRequest {
                request: read.request,
                settings: read.settings,
                object_tree: None,
                old_object_tree: None,
            })
        })
        .map_err(|e| Response::reject_with_code(format!("syncguard: cannot read the admission request: {e}"), 400))
}

/// Runs the `validate_settings` operation of policy `P` on a waPC payload (the bare settings).
pub fn handle_validate_settings<P: Module>(payload: &[u8]) -> Vec<u8> {
    let result = std::str::from_utf8(payload)
        .map_err(|e| format!("settings are not valid UTF-8: {e}"))
        .and_then(|text| parse_settings::<P>(Some(text)).map(|_| ()));
    admission::settings_response_json(result)
}

/// Parses a response produced by [`handle_validate`] (for the tests, the fuzz targets and the playground).
pub fn decode_response(bytes: &[u8]) -> Result<ValidationResponse, String> {
    serde_json::from_slice(bytes).map_err(|e| e.to_string())
}
