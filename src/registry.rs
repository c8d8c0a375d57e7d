//! The one list of checks. Everything that goes over every check follows from it: the
//! all-in-one policy's settings and steps ([`Settings`], [`visit_sections`], which
//! [`crate::all_in_one`] runs), the fuzz targets, the playground's policies and the end-to-end
//! lists ([`CHECKS`]); and the checks of a whole tree of documents, which `syncguard scan` and
//! the playground run beside the modules ([`TREE_CHECKS`]).
//!
//! Adding a check is its module under `src/checks/`, one line in the `registry!` call below
//! and its folder under `policies/` (CONTRIBUTING.md walks through it); a test fails when the
//! policy folders and this list disagree.

use crate::check::{self, Check, GroupKind, Lookup};
use crate::checks::{
    crd_kind_collision::CrdKindCollision, crd_safe_upgrade::CrdSafeUpgrade, crd_schema_fields::CrdSchemaFields,
    duplicate_object, hook_job_safety::HookJobSafety, kind_group_clash, object_validation::ObjectValidation,
    ownership_markers::OwnershipMarkers, sync_drift::SyncDrift,
};
use crate::cluster::Cluster;
use crate::finding::RuleDoc;
use crate::rules::Rule;
use crate::settings;
use serde::de::{Deserialize, Deserializer, Error as _};
use serde_json::Value;

/// One check as the registry lists it: what code that goes over every check needs of it.
#[derive(Clone, Copy)]
pub struct Entry {
    /// The policy's name, also its folder under `policies/`.
    pub name: &'static str,
    /// Its section of the all-in-one settings.
    pub settings_key: &'static str,
    /// Its admission rules (its metadata.yml's).
    pub rules: &'static [Rule],
    /// The kinds it judges; empty: every kind.
    pub kinds: &'static [GroupKind],
    /// The rules of its findings.
    pub findings: &'static [RuleDoc],
    /// The resources it looks up in the cluster ([`Check::LOOKUPS`]).
    pub lookups: &'static [Lookup],
    /// Its `validate` operation over a waPC payload.
    pub validate: fn(&[u8], &dyn Cluster) -> Vec<u8>,
    /// Its `report` operation over a waPC payload (see [`check::handle_report`]).
    pub report: fn(&[u8], &dyn Cluster) -> Vec<u8>,
    /// Its `validate_settings` operation over a waPC payload.
    pub validate_settings: fn(&[u8]) -> Vec<u8>,
    /// Reads and checks its settings as JSON text (absent: defaults).
    pub check_settings: fn(Option<&str>) -> Result<(), String>,
    /// The resources its settings, as JSON text, name for it to look up
    /// ([`Check::settings_lookups`]).
    pub settings_lookups: fn(Option<&str>) -> Result<Vec<check::Grant>, String>,
    /// Whether it judges an UPDATE by what it changes ([`Check::READS_OLD_OBJECT`]).
    pub reads_old_object: bool,
}

impl Entry {
    /// The entry of check `C`.
    pub const fn of<C: Check>() -> Entry {
        Entry {
            name: C::NAME,
            settings_key: C::SETTINGS_KEY,
            rules: C::RULES,
            kinds: C::KINDS,
            findings: C::FINDINGS,
            lookups: C::LOOKUPS,
            validate: check::handle_validate::<C>,
            report: check::handle_report::<C>,
            validate_settings: check::handle_validate_settings::<C>,
            check_settings: |raw| check::parse_settings::<C>(raw).map(|_| ()),
            settings_lookups: check::settings_lookups::<C>,
            reads_old_object: C::READS_OLD_OBJECT,
        }
    }

    /// The entry of the check called `name`.
    pub fn named(name: &str) -> Option<&'static Entry> {
        CHECKS.iter().find(|entry| entry.name == name)
    }
}

/// What goes over the sections of the all-in-one's [`Settings`], one check at a time
/// ([`visit_sections`]).
pub trait Visit {
    /// Called with the section of check `C`.
    fn visit<C: Check>(&mut self, section: &Section<C>);
}

/// One check's section of the all-in-one settings: `enabled` plus the check's settings.
pub struct Section<C: Check> {
    /// Whether the check runs (default true).
    pub enabled: bool,
    /// The check's own settings; `None` for a section the settings leave out, whose defaults
    /// are built only for a request the check decides (most requests go to one or two checks).
    pub settings: Option<C::Settings>,
}

impl<C: Check> Default for Section<C> {
    fn default() -> Self {
        Section {
            enabled: true,
            settings: None,
        }
    }
}

impl<'de, C: Check> Deserialize<'de> for Section<C> {
    /// Reads a section: an object (or `null`) holding `enabled` and the check's settings, which
    /// the check's own settings reader reads, so its errors read exactly as the single
    /// policy's, behind the section's name.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut members = match Value::deserialize(deserializer)? {
            Value::Null => return Ok(Section::default()),
            Value::Object(members) => members,
            other => {
                return Err(D::Error::custom(format!(
                    "must be an object of {} settings, not {other}",
                    C::NAME
                )));
            }
        };
        let enabled = match members.remove("enabled") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(enabled)) => enabled,
            Some(other) => {
                return Err(D::Error::custom(format!(
                    "`enabled` must be true or false, not {other}"
                )));
            }
        };
        let settings = settings::from_value::<C::Settings>(Value::Object(members))
            .and_then(|settings| C::validate_settings(&settings).map(|()| settings))
            .map_err(D::Error::custom)?;
        Ok(Section {
            enabled,
            settings: Some(settings),
        })
    }
}

/// Declares the registry: `field: Check` pairs, in the order the all-in-one runs them; `field`
/// is the check's section of the all-in-one settings in snake case.
macro_rules! registry {
    ($($field:ident: $check:ty),+ $(,)?) => {
        /// Settings of the all-in-one policy: one section per check, each with the check's own
        /// settings plus `enabled`; unknown sections are refused.
        #[derive(Default, serde::Deserialize)]
        #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
        pub struct Settings {
            $(
                #[doc = concat!("The section of `", stringify!($check), "`.")]
                pub $field: Section<$check>,
            )+
        }

        /// Every check, in the order the all-in-one runs them.
        pub const CHECKS: &[Entry] = &[$(Entry::of::<$check>()),+];

        /// Hands every section of `settings` to `visitor`, in the registry's order (the
        /// all-in-one runs its checks so).
        pub fn visit_sections(settings: &Settings, visitor: &mut impl Visit) {
            $(visitor.visit(&settings.$field);)+
        }

        #[cfg(test)]
        /// The sections of [`Settings`] as serde names them, in order.
        const SECTION_KEYS: &[&str] = &[$(stringify!($field)),+];
    };
}

registry! {
    crd_schema_fields: CrdSchemaFields,
    crd_safe_upgrade: CrdSafeUpgrade,
    crd_kind_collision: CrdKindCollision,
    ownership_markers: OwnershipMarkers,
    hook_job_safety: HookJobSafety,
    sync_drift: SyncDrift,
    object_validation: ObjectValidation,
}

/// A check of a whole tree of documents at once (a repository, a `helm template` output), as the
/// registry lists it: `syncguard scan` and the playground run it beside the modules; no admission
/// request carries a tree, so no module does. Its logic reads the scanned tree (the scan crate);
/// its entry, settings and rules are here, as a module check's are.
#[derive(Clone, Copy)]
pub struct TreeEntry {
    /// Its name, in scan's config file (`policies.<name>`) and its outputs.
    pub name: &'static str,
    /// One line on what it finds (SARIF rule, JSON policy list, the playground).
    pub description: &'static str,
    /// Where it is documented.
    pub docs: &'static str,
    /// The rules of its findings.
    pub findings: &'static [RuleDoc],
    /// Checks its settings as scan's config file gives them (absent or `null`: defaults).
    pub check_settings: fn(Option<&Value>) -> Result<(), String>,
}

impl TreeEntry {
    /// The entry of the tree check called `name`.
    pub fn named(name: &str) -> Option<&'static TreeEntry> {
        TREE_CHECKS.iter().find(|entry| entry.name == name)
    }
}

/// kind-group-clash's entry ([`kind_group_clash`]).
pub const KIND_GROUP_CLASH: TreeEntry = TreeEntry {
    name: kind_group_clash::NAME,
    description: kind_group_clash::DESCRIPTION,
    docs: kind_group_clash::DOCS,
    findings: kind_group_clash::FINDINGS,
    check_settings: |value| kind_group_clash::parse_settings(value).map(|_| ()),
};

/// duplicate-object's entry ([`duplicate_object`]).
pub const DUPLICATE_OBJECT: TreeEntry = TreeEntry {
    name: duplicate_object::NAME,
    description: duplicate_object::DESCRIPTION,
    docs: duplicate_object::DOCS,
    findings: duplicate_object::FINDINGS,
    check_settings: duplicate_object::check_settings,
};

/// Every check of a whole tree, in the order scan reports them (after the modules').
pub const TREE_CHECKS: &[TreeEntry] = &[KIND_GROUP_CLASH, DUPLICATE_OBJECT];

/// The name of every check the registry lists: the module checks', then the tree checks'.
pub fn names() -> impl Iterator<Item = &'static str> {
    CHECKS
        .iter()
        .map(|entry| entry.name)
        .chain(TREE_CHECKS.iter().map(|entry| entry.name))
}

/// The name of the all-in-one policy, and of its folder under `policies/`.
pub const ALL_IN_ONE: &str = "syncguard";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_folders_and_the_registry_agree() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("policies");
        let mut folders: Vec<String> = std::fs::read_dir(&root)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.path().join("metadata.yml").is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name != ALL_IN_ONE)
            .collect();
        folders.sort();
        let mut registered: Vec<&str> = CHECKS.iter().map(|entry| entry.name).collect();
        registered.sort();
        assert_eq!(
            folders, registered,
            "policies/ holds a folder per check of src/registry.rs (plus the all-in-one, policies/{ALL_IN_ONE})"
        );
        assert!(root.join(ALL_IN_ONE).join("metadata.yml").is_file());
    }

    #[test]
    fn sections_are_the_checks_settings_keys() {
        for (entry, field) in CHECKS.iter().zip(SECTION_KEYS) {
            let camel: String = field
                .split('_')
                .enumerate()
                .map(|(i, word)| match i {
                    0 => word.to_string(),
                    _ => word[..1].to_uppercase() + &word[1..],
                })
                .collect();
            assert_eq!(camel, entry.settings_key, "{}", entry.name);
            let kebab = field.replace('_', "-");
            assert_eq!(kebab, entry.name, "the section of {} is named after it", entry.name);
        }
    }

    #[test]
    fn every_check_documents_its_rules() {
        for entry in CHECKS {
            assert!(!entry.findings.is_empty(), "{} documents no finding rules", entry.name);
            for (i, doc) in entry.findings.iter().enumerate() {
                assert!(
                    entry.findings[..i].iter().all(|other| other.id != doc.id),
                    "{}: rule {} documented twice",
                    entry.name,
                    doc.id
                );
                assert!(
                    !doc.summary.is_empty() && !doc.anchor.is_empty(),
                    "{}: {}",
                    entry.name,
                    doc.id
                );
            }
        }
    }

    #[test]
    fn tree_checks_are_named_once_documented_and_check_their_settings() {
        let mut names: Vec<&str> = names().collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "a name is given twice: {names:?}");
        assert!(!names.contains(&ALL_IN_ONE));
        let scan_docs = include_str!("../docs/scan.md");
        for entry in TREE_CHECKS {
            assert_eq!(TreeEntry::named(entry.name).map(|e| e.name), Some(entry.name));
            assert!(!entry.findings.is_empty(), "{} documents no finding rules", entry.name);
            for doc in entry.findings {
                assert!(
                    scan_docs.contains(&format!("\n## {}\n", doc.anchor)),
                    "docs/scan.md has no section {} for {}/{}",
                    doc.anchor,
                    entry.name,
                    doc.id
                );
                assert!(
                    entry.docs.ends_with(&format!("docs/scan.md#{}", doc.anchor)),
                    "{}",
                    entry.name
                );
            }
            assert_eq!((entry.check_settings)(None), Ok(()), "{}: defaults", entry.name);
            assert_eq!(
                (entry.check_settings)(Some(&Value::Null)),
                Ok(()),
                "{}: null",
                entry.name
            );
            assert!(
                (entry.check_settings)(Some(&serde_json::json!({"noSuchSetting": 1}))).is_err(),
                "{} accepts a setting it does not have",
                entry.name
            );
        }
        assert_eq!(
            (KIND_GROUP_CLASH.check_settings)(Some(&serde_json::json!({"helmVersion": "latest"})))
                .unwrap_err()
                .split(':')
                .next(),
            Some("`helmVersion`")
        );
    }
}
