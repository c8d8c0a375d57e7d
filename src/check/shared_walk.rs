//! One traversal of a tree for two checks: the check that walks it hands each key it meets, and
//! each value it does not descend into, to another check's judgement beside it. The all-in-one
//! runs crd-schema-fields beside sync-drift's walk of a CRD this way (`all_in_one`'s
//! `crd_walked_once`); each check alone walks through [`Alone`]. The two checks never name each
//! other: both name this contract.

use crate::generated::{ApiField, ApiType};
use crate::json::{Entries, Members, Node};

/// One step from a tree's root: an object's key (a member's or a map's) or a list's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'p> {
    /// A key.
    Key(&'p str),
    /// An index.
    Index(usize),
}

/// A place in the walked tree, as the walk hands it over.
pub trait Place {
    /// The steps from the tree's root.
    fn steps(&self) -> Vec<Step<'_>>;
}

/// What judges a CRD's keys beside a walk: every key the walk meets that the CRD's Go type does
/// not declare, and every value the walk does not descend into (a CRD's `status`, an object the
/// live object lacks, a key given twice), which the judgement reads on from by itself.
pub trait Keys {
    /// The key at `place`, of an object of type `ty`, which `ty` does not declare.
    fn unknown(&mut self, key: &str, ty: ApiType, place: &dyn Place);
    /// A value of type `ty` at `place` whose keys the walk does not read.
    fn beyond(&mut self, value: &Node<'_>, ty: ApiType, place: &dyn Place);
    /// The value of `field` (a member of `owner`) at `place`, which the walk does not read.
    fn beyond_member(&mut self, value: &Node<'_>, field: ApiField, owner: ApiType, place: &dyn Place);
    /// The entries of an object at `place` (of an API type, or a map) the walk does not visit:
    /// all but the last of a key given more than once (`visited` holds the last).
    fn shadowed(&mut self, entries: Entries<'_, '_>, visited: &Members<'_, '_>, place: &dyn Place);
}

/// What reads a CRD beside a check's walk of it, and how.
pub trait Beside {
    /// Walks `applied` (the request's object, or with `last_applied` the manifest its annotation
    /// records), a CRD whose type is `root`: `walk` runs the walk, with the judgement of its keys
    /// beside it if there is one.
    fn walk(
        &mut self,
        applied: &Node<'_>,
        last_applied: bool,
        root: ApiType,
        walk: &mut dyn FnMut(Option<&mut dyn Keys>),
    );
}

/// A check alone: nothing reads beside its walk.
pub struct Alone;

impl Beside for Alone {
    fn walk(&mut self, _: &Node<'_>, _: bool, _: ApiType, walk: &mut dyn FnMut(Option<&mut dyn Keys>)) {
        walk(None)
    }
}

/// The schema nodes (JSONSchemaProps objects with members) the walks of a CRD visit, per
/// thread, by address; compiled only for tests: the all-in-one visits each once for
/// crd-schema-fields and sync-drift.
#[cfg(test)]
pub mod visits {
    use std::cell::RefCell;

    thread_local! {
        static SCHEMA_NODES: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
    }

    /// Notes a visit of the schema node whose members are `entries`.
    pub fn schema_node<T>(entries: &[T]) {
        if !entries.is_empty() {
            SCHEMA_NODES.with(|n| n.borrow_mut().push(entries.as_ptr() as usize));
        }
    }

    /// The visits noted since the last call, in order.
    pub fn take() -> Vec<usize> {
        SCHEMA_NODES.with(|n| n.take())
    }
}
