//! The all-in-one policy: every check in one module, one webhook round trip per admission.
//!
//! Settings hold one section per check (`crdSchemaFields`, `crdSafeUpgrade`,
//! `crdKindCollision`, `ownershipMarkers`, `hookJobSafety`), each with that check's own settings
//! plus `enabled` (default true). A request goes only to the enabled checks whose rules match
//! it, in that fixed order. It is rejected if any of them rejects; messages and warnings carry
//! the check's name as a prefix (`crd-schema-fields: ...`); mutations are chained, each check
//! seeing the object as the checks before it changed it, so the result is one object.

use crate::admission::{Request, Verdict};
use crate::check::{self, Check};
use crate::checks::{
    crd_kind_collision::CrdKindCollision, crd_safe_upgrade::CrdSafeUpgrade, crd_schema_fields::CrdSchemaFields,
    hook_job_safety::HookJobSafety, ownership_markers::OwnershipMarkers,
};
use crate::cluster::Cluster;
use crate::json::{self, FromJson, Json, Kind};
use crate::rules::{Rule, any_matches};
use crate::text::{MAX_MESSAGE_CHARS, MAX_WARNINGS_TOTAL_CHARS, chars};

/// One check's section of the all-in-one settings: `enabled` plus the check's settings.
pub struct Section<C: Check> {
    /// Whether the check runs (default true).
    pub enabled: bool,
    /// The check's own settings.
    pub settings: C::Settings,
}

impl<C: Check> Default for Section<C> {
    fn default() -> Self {
        Section {
            enabled: true,
            settings: C::Settings::default(),
        }
    }
}

impl<C: Check> Section<C> {
    /// Reads a section: an object (or `null`) holding `enabled` and the check's settings.
    fn read(key: &str, value: Json<'_>) -> Result<Self, String> {
        if !matches!(value.kind(), Kind::Object | Kind::Null) {
            return Err(format!(
                "`{key}`: must be an object of {} settings, not {}",
                C::NAME,
                value.text()
            ));
        }
        let mut enabled = true;
        // The section without `enabled`: the check's own settings, read by its own parser.
        let mut own = String::from("{");
        for (name, member) in value.members() {
            if name == "enabled" {
                match member.kind() {
                    Kind::Null => {}
                    Kind::Bool => enabled = member.text() == "true",
                    _ => return Err(format!("`{key}.enabled` must be true or false, not {}", member.text())),
                }
                continue;
            }
            if own.len() > 1 {
                own.push(',');
            }
            json::write_string(&mut own, &name);
            own.push(':');
            own.push_str(member.text());
        }
        own.push('}');
        let settings = check::parse_settings::<C>(Some(&own)).map_err(|e| format!("`{key}`: {e}"))?;
        Ok(Section { enabled, settings })
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

impl<'a> FromJson<'a> for Settings {
    // Read by hand: each section is handed to its check's own settings parser, so its errors
    // read exactly as the single policy's, behind the section's name.
    fn from_json(value: Json<'a>) -> Result<Self, json::Error> {
        if value.kind() != Kind::Object {
            return Err(value.invalid_type("a map"));
        }
        let mut settings = Settings::default();
        for (key, section) in value.members() {
            let result = match key.as_ref() {
                CrdSchemaFields::SETTINGS_KEY => Section::read(&key, section).map(|s| settings.crd_schema_fields = s),
                CrdSafeUpgrade::SETTINGS_KEY => Section::read(&key, section).map(|s| settings.crd_safe_upgrade = s),
                CrdKindCollision::SETTINGS_KEY => Section::read(&key, section).map(|s| settings.crd_kind_collision = s),
                OwnershipMarkers::SETTINGS_KEY => Section::read(&key, section).map(|s| settings.ownership_markers = s),
                HookJobSafety::SETTINGS_KEY => Section::read(&key, section).map(|s| settings.hook_job_safety = s),
                _ => Err(json::unknown_field(&key, &SECTIONS)),
            };
            result.map_err(|message| section.error(message))?;
        }
        Ok(settings)
    }
}

/// Every check in one policy.
pub struct AllInOne;

/// The union of the checks' rules, as the all-in-one metadata.yml registers it.
pub const RULES: &[Rule] = &[
    crate::rules::CRD_RULE,
    crate::checks::ownership_markers::ALL_RESOURCES_RULE,
    crate::checks::hook_job_safety::JOB_RULE,
];

/// Runs check `C` if enabled and matching, folding its verdict into `combined`. Only the call
/// is generic; the rest is shared by the five checks.
fn step<C: Check>(
    section: &Section<C>,
    request: &Request<'_>,
    mutated: &mut Option<String>,
    cluster: &dyn Cluster,
    combined: &mut Verdict,
) {
    if !section.enabled || !any_matches(C::RULES, request) {
        return;
    }
    // A mutation is JSON text written by a check, so it parses; if it did not, the next check
    // would see the request's own object.
    let document = mutated.as_deref().and_then(|text| json::parse(text).ok());
    let verdict = C::validate(&with_object(request, document.as_ref()), &section.settings, cluster);
    fold(C::NAME, verdict, mutated, combined);
}

/// The request as the next check sees it: with the object as the checks before it changed it.
fn with_object<'b>(request: &Request<'b>, mutated: Option<&'b json::Document<'_>>) -> Request<'b> {
    let mut current = request.clone();
    if let Some(document) = mutated {
        current.object = Some(document.root());
    }
    current
}

/// Folds the verdict of check `name` into `combined` and keeps its mutation, if accepted.
fn fold(name: &str, verdict: Verdict, mutated: &mut Option<String>, combined: &mut Verdict) {
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
        match check::parse_settings::<AllInOne>(Some(settings)) {
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
            let settings = check::parse_settings::<AllInOne>(raw).unwrap();
            assert!(settings.crd_schema_fields.enabled && settings.hook_job_safety.enabled);
            assert_eq!(settings.crd_schema_fields.settings.max_findings, 20);
        }
        let settings = check::parse_settings::<AllInOne>(Some(r#"{"ownershipMarkers": {"enabled": false}}"#)).unwrap();
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
