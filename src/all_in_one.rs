//! The all-in-one policy: every check of the registry in one module, one webhook round trip per
//! admission.
//!
//! Settings hold one section per check (`crdSchemaFields`, `crdSafeUpgrade`, ...: see
//! [`crate::registry::Settings`]), each with that check's own settings plus `enabled` (default
//! true). A request goes only to the enabled checks that apply to it, in the registry's order.
//! It is rejected if any of them rejects; messages and warnings carry the check's name as a
//! prefix (`crd-schema-fields: ...`); mutations are chained, each check seeing the object as the
//! checks before it changed it, so the result is one object. The checks' findings are rendered
//! together, once, by [`crate::render::answer`], each within the room its prefix leaves.

use crate::admission::{ObjectJson, Request};
use crate::check::{self, Check, Module};
use crate::cluster::Cluster;
use crate::registry::{self, Section, Settings, Visit};
use crate::render::{self, Answer, Part};
use crate::rules::Rule;
use serde_json::Value;

/// Every check in one policy.
pub struct AllInOne;

/// The union of the checks' rules: the all-in-one metadata.yml's, generated from it (a test in
/// `rules` proves it is the union of the checks' own).
pub const RULES: &[Rule] = crate::rules::SYNCGUARD;

/// One request going through the checks: what each step reads and adds to.
struct Run<'r, 'a> {
    request: &'r Request<'a>,
    cluster: &'r dyn Cluster,
    /// The object as the checks so far changed it.
    mutated: Option<Value>,
    /// What the checks that applied found, rendered together at the end.
    parts: Vec<Part>,
}

impl Visit for Run<'_, '_> {
    /// Runs check `C` if its section enables it and it applies to the request: every check gets
    /// the same parsed request; only the object changes, once a check before has mutated it.
    fn visit<C: Check>(&mut self, section: &Section<C>) {
        if !section.enabled {
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
        let part = match self.mutated.as_ref() {
            Some(object) => {
                let mut current = self.request.clone();
                current.object = Some(ObjectJson::Parsed(object));
                check::evaluate::<C>(&current, settings, self.cluster)
            }
            None => check::evaluate::<C>(self.request, settings, self.cluster),
        };
        if let Some(mut part) = part {
            if let Some(object) = part.take_mutation() {
                self.mutated = Some(object);
            }
            self.parts.push(part);
        }
    }
}

impl Module for AllInOne {
    type Settings = Settings;
    const NAME: &'static str = registry::ALL_IN_ONE;
    const RULES: &'static [Rule] = RULES;

    fn validate_settings(_settings: &Settings) -> Result<(), String> {
        // Every section was checked by its check's own rules as it was read.
        Ok(())
    }

    fn decide(request: &Request<'_>, settings: &Settings, cluster: &dyn Cluster) -> Answer {
        let mut run = Run {
            request,
            cluster,
            mutated: None,
            parts: Vec::new(),
        };
        registry::visit_sections(settings, &mut run);
        let mut answer = render::answer(run.parts, true);
        if answer.response.accepted {
            answer.response.mutated_object = run.mutated;
        }
        answer
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
            assert!(settings.crd_schema_fields.settings.is_none());
        }
        let settings = check::parse_settings::<AllInOne>(Some(r#"{"crdSchemaFields": {}}"#)).unwrap();
        assert_eq!(settings.crd_schema_fields.settings.unwrap().max_findings, 20);
        let settings = check::parse_settings::<AllInOne>(Some(r#"{"ownershipMarkers": {"enabled": false}}"#)).unwrap();
        assert!(!settings.ownership_markers.enabled);
        assert!(settings.crd_kind_collision.enabled);
    }

    #[test]
    fn errors_name_the_section() {
        assert!(
            refused(r#"{"crdSchemaField": {}}"#)
                .starts_with("`crdSchemaField`: unknown field `crdSchemaField`, expected one of `crdSchemaFields`,"),
            "{}",
            refused(r#"{"crdSchemaField": {}}"#)
        );
        assert_eq!(
            refused(r#"{"hookJobSafety": {"enabled": "yes"}}"#),
            "`hookJobSafety`: `enabled` must be true or false, not \"yes\""
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
