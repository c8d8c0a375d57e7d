//! The all-in-one policy: every check in one module, one webhook round trip per admission.
//!
//! Settings hold one section per check (`crdSchemaFields`, `crdSafeUpgrade`,
//! `crdKindCollision`, `ownershipMarkers`, `hookJobSafety`), each with that check's own settings
//! plus `enabled` (default true). A request goes only to the enabled checks whose rules match
//! it, in that fixed order. It is rejected if any of them rejects; messages and warnings carry
//! the check's name as a prefix (`crd-schema-fields: ...`); mutations are chained, each check
//! seeing the object as the checks before it changed it, so the result is one object.

use crate::admission::{ObjectJson, Request, Verdict};
use crate::check::Check;
use crate::checks::{
    crd_kind_collision::CrdKindCollision, crd_safe_upgrade::CrdSafeUpgrade, crd_schema_fields::CrdSchemaFields,
    hook_job_safety::HookJobSafety, ownership_markers::OwnershipMarkers,
};
use crate::cluster::Cluster;
use crate::rules::{Rule, any_matches};
use crate::settings;
use crate::text::{MAX_MESSAGE_CHARS, MAX_WARNINGS_TOTAL_CHARS, chars};
use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, Visitor};
use serde_json::Value;

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

impl<C: Check> Section<C> {
    /// Reads a section from its parsed value: an object (or `null`) holding `enabled` and the
    /// check's settings, which the check's own settings reader reads, so its errors read
    /// exactly as the single policy's, behind the section's name.
    fn read(key: &str, value: Value) -> Result<Self, String> {
        let mut members = match value {
            Value::Null => return Ok(Section::default()),
            Value::Object(members) => members,
            other => {
                return Err(format!(
                    "`{key}`: must be an object of {} settings, not {other}",
                    C::NAME
                ));
            }
        };
        let enabled = match members.remove("enabled") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(enabled)) => enabled,
            Some(other) => return Err(format!("`{key}.enabled` must be true or false, not {other}")),
        };
        let settings = settings::from_value::<C::Settings>(Value::Object(members))
            .and_then(|settings| C::validate_settings(&settings).map(|()| settings))
            .map_err(|e| format!("`{key}`: {e}"))?;
        Ok(Section {
            enabled,
            settings: Some(settings),
        })
    }
}

/// Settings of the all-in-one policy.
#[derive(Default)]
pub struct Settings {
    /// crd-schema-fields.
    pub crd_schema_fields: Section<CrdSchemaFields>,
    /// crd-safe-upgrade.
    pub crd_safe_upgrade: Section<CrdSafeUpgrade>,
    /// crd-kind-collision.
    pub crd_kind_collision: Section<CrdKindCollision>,
    /// ownership-markers.
    pub ownership_markers: Section<OwnershipMarkers>,
    /// hook-job-safety.
    pub hook_job_safety: Section<HookJobSafety>,
}

/// The settings sections, in the order the checks run.
const SECTIONS: [&str; 5] = [
    CrdSchemaFields::SETTINGS_KEY,
    CrdSafeUpgrade::SETTINGS_KEY,
    CrdKindCollision::SETTINGS_KEY,
    OwnershipMarkers::SETTINGS_KEY,
    HookJobSafety::SETTINGS_KEY,
];

impl<'de> Deserialize<'de> for Settings {
    // Each section is parsed into a value once and handed to its check's own settings reader
    // (see `Section::read`); sections are read in document order, the first error wins.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Sections;
        impl<'de> Visitor<'de> for Sections {
            type Value = Settings;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Settings, A::Error> {
                let mut settings = Settings::default();
                while let Some(key) = map.next_key::<String>()? {
                    if !SECTIONS.contains(&key.as_str()) {
                        return Err(A::Error::unknown_field(&key, &SECTIONS));
                    }
                    let value: Value = map.next_value()?;
                    let result = match key.as_str() {
                        CrdSchemaFields::SETTINGS_KEY => {
                            Section::read(&key, value).map(|s| settings.crd_schema_fields = s)
                        }
                        CrdSafeUpgrade::SETTINGS_KEY => {
                            Section::read(&key, value).map(|s| settings.crd_safe_upgrade = s)
                        }
                        CrdKindCollision::SETTINGS_KEY => {
                            Section::read(&key, value).map(|s| settings.crd_kind_collision = s)
                        }
                        OwnershipMarkers::SETTINGS_KEY => {
                            Section::read(&key, value).map(|s| settings.ownership_markers = s)
                        }
                        _ => Section::read(&key, value).map(|s| settings.hook_job_safety = s),
                    };
                    result.map_err(A::Error::custom)?;
                }
                Ok(settings)
            }
        }
        deserializer.deserialize_map(Sections)
    }
}

/// Every check in one policy.
pub struct AllInOne;

/// The union of the checks' rules: the all-in-one metadata.yml's, generated from it (a test in
/// `rules` proves it is the union of the checks' own).
pub const RULES: &[Rule] = crate::rules::SYNCGUARD;

/// Runs check `C` if enabled and matching, folding its verdict into `combined`. Every check
/// gets the same parsed request; only the object changes, once a check before has mutated it.
/// Only the call is generic; the rest is shared by the five checks.
fn step<C: Check>(
    section: &Section<C>,
    request: &Request<'_>,
    mutated: &mut Option<Value>,
    cluster: &dyn Cluster,
    combined: &mut Verdict,
) {
    if !section.enabled || !any_matches(C::RULES, request) {
        return;
    }
    let defaults;
    let settings = match &section.settings {
        Some(settings) => settings,
        None => {
            defaults = C::Settings::default();
            &defaults
        }
    };
    let verdict = match mutated.as_ref() {
        Some(object) => {
            let mut current = request.clone();
            current.object = Some(ObjectJson::Parsed(object));
            C::validate(&current, settings, cluster)
        }
        None => C::validate(request, settings, cluster),
    };
    fold(C::NAME, verdict, mutated, combined);
}

/// Folds the verdict of check `name` into `combined` and keeps its mutation, if accepted.
fn fold(name: &str, verdict: Verdict, mutated: &mut Option<Value>, combined: &mut Verdict) {
    let prefix = |text: String| format!("{name}: {text}");
    if !verdict.accepted {
        combined.accepted = false;
        let mut message = prefix(verdict.message.unwrap_or_default());
        let previous = combined.message.take();
        let used = previous.as_deref().map_or(0, |p| chars(p) + 1);
        // Each check keeps its own message within the limit; two of them together may not fit,
        // and then the later one is only named (the API server would cut the whole answer).
        if used + chars(&message) > MAX_MESSAGE_CHARS {
            message = format!(
                "{name}: also rejects this request; its message is left out to keep the answer within the API server's limits (run the {name} policy alone to read it)"
            );
        }
        combined.message = Some(match previous {
            Some(previous) => format!("{previous}\n{message}"),
            None => message,
        });
        combined.code = combined.code.or(verdict.code);
    }
    combined.warnings.extend(verdict.warnings.into_iter().map(prefix));
    combined.audit_annotations.extend(verdict.audit_annotations);
    if let (true, Some(object)) = (verdict.accepted, verdict.mutated_object) {
        *mutated = Some(object);
    }
}

/// Room kept in the warnings' total for the one saying how many were left out.
const LEFT_OUT_ROOM: usize = 160;

/// Keeps the combined warnings within the API server's total: every check's warning fits its
/// prefix (`text::PREFIX_ROOM`), but the checks together may give more than 4,096 characters;
/// then the first ones that fit are kept and a last warning says how many were left out.
fn keep_within_limits(warnings: &mut Vec<String>) {
    let total: usize = warnings.iter().map(|w| chars(w)).sum();
    if total <= MAX_WARNINGS_TOTAL_CHARS {
        return;
    }
    let mut used = 0;
    let mut kept = 0;
    for warning in warnings.iter() {
        if used + chars(warning) > MAX_WARNINGS_TOTAL_CHARS - LEFT_OUT_ROOM {
            break;
        }
        used += chars(warning);
        kept += 1;
    }
    let left_out = warnings.len() - kept;
    warnings.truncate(kept);
    warnings.push(format!(
        "syncguard: {left_out} more warning{} left out to keep the answer within the API server's limits (run the policies alone to read them all)",
        if left_out == 1 { "" } else { "s" }
    ));
}

impl Check for AllInOne {
    type Settings = Settings;
    const NAME: &'static str = "syncguard";
    const SETTINGS_KEY: &'static str = "";
    const RULES: &'static [Rule] = RULES;

    fn validate(request: &Request<'_>, settings: &Settings, cluster: &dyn Cluster) -> Verdict {
        let mut combined = Verdict::accept();
        let mut mutated = None;
        step(
            &settings.crd_schema_fields,
            request,
            &mut mutated,
            cluster,
            &mut combined,
        );
        step(
            &settings.crd_safe_upgrade,
            request,
            &mut mutated,
            cluster,
            &mut combined,
        );
        step(
            &settings.crd_kind_collision,
            request,
            &mut mutated,
            cluster,
            &mut combined,
        );
        step(
            &settings.ownership_markers,
            request,
            &mut mutated,
            cluster,
            &mut combined,
        );
        step(&settings.hook_job_safety, request, &mut mutated, cluster, &mut combined);
        keep_within_limits(&mut combined.warnings);
        if combined.accepted {
            combined.mutated_object = mutated;
        }
        combined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(settings: &str) -> String {
        match crate::check::parse_settings::<AllInOne>(Some(settings)) {
            Ok(_) => panic!("accepted {settings}"),
            Err(e) => e,
        }
    }

    #[test]
    fn sections_default_to_enabled_with_the_checks_defaults() {
        for raw in [
            None,
            Some("{}"),
            Some(r#"{"crdSchemaFields": null, "hookJobSafety": {}}"#),
        ] {
            let settings = crate::check::parse_settings::<AllInOne>(raw).unwrap();
            assert!(settings.crd_schema_fields.enabled && settings.hook_job_safety.enabled);
            assert!(settings.crd_schema_fields.settings.is_none());
        }
        let settings = crate::check::parse_settings::<AllInOne>(Some(r#"{"crdSchemaFields": {}}"#)).unwrap();
        assert_eq!(settings.crd_schema_fields.settings.unwrap().max_findings, 20);
        let settings =
            crate::check::parse_settings::<AllInOne>(Some(r#"{"ownershipMarkers": {"enabled": false}}"#)).unwrap();
        assert!(!settings.ownership_markers.enabled);
        assert!(settings.crd_kind_collision.enabled);
    }

    #[test]
    fn errors_name_the_section() {
        assert!(
            refused(r#"{"crdSchemaField": {}}"#)
                .starts_with("unknown field `crdSchemaField`, expected one of `crdSchemaFields`,"),
            "{}",
            refused(r#"{"crdSchemaField": {}}"#)
        );
        assert_eq!(
            refused(r#"{"hookJobSafety": {"enabled": "yes"}}"#),
            "`hookJobSafety.enabled` must be true or false, not \"yes\""
        );
        assert_eq!(
            refused(r#"{"crdSafeUpgrade": [1]}"#),
            "`crdSafeUpgrade`: must be an object of crd-safe-upgrade settings, not [1]"
        );
        assert_eq!(
            refused(r#"{"crdSchemaFields": {"maxFindings": "3"}}"#),
            "`crdSchemaFields`: `maxFindings`: invalid type: string \"3\", expected u32"
        );
    }
}
