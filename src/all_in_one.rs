//! The all-in-one policy: every check of the registry in one module, one webhook round trip per
//! admission.
//!
//! Settings hold one section per check (`crdSchemaFields`, `crdSafeUpgrade`, ...: see
//! [`crate::registry::Settings`]), each with that check's own settings plus `enabled` (default
//! true). A request goes only to the enabled checks that apply to it, in the registry's order.
//! It is rejected if any of them rejects; messages and warnings carry the check's name as a
//! prefix (`crd-schema-fields: ...`); mutations are chained, each check seeing the object as the
//! checks before it changed it, so the result is one object. The checks' findings are rendered
//! together, by [`crate::render::answer`].

use crate::admission::{ObjectJson, Request};
use crate::check::{self, Check, Policy};
use crate::cluster::Cluster;
use crate::registry::{self, Settings};
use crate::render::{self, Answer, Rendered};
use crate::rules::Rule;
use crate::settings;
use serde::de::{Deserialize, Deserializer, Error as _};
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

/// Every check in one policy.
pub struct AllInOne;

/// The union of the checks' rules: the all-in-one metadata.yml's, generated from it (a test in
/// `rules` proves it is the union of the checks' own).
pub const RULES: &[Rule] = crate::rules::SYNCGUARD;

/// One request going through the checks: what each step reads and adds to.
pub(crate) struct Run<'r, 'a> {
    request: &'r Request<'a>,
    cluster: &'r dyn Cluster,
    /// The object as the checks so far changed it.
    mutated: Option<Value>,
    /// What the checks that applied said.
    rendered: Vec<Rendered>,
}

impl Run<'_, '_> {
    /// Runs check `C` if its section enables it and it applies to the request: every check gets
    /// the same parsed request; only the object changes, once a check before has mutated it.
    pub(crate) fn step<C: Check>(&mut self, section: &Section<C>) {
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
        let rendered = match self.mutated.as_ref() {
            Some(object) => {
                let mut current = self.request.clone();
                current.object = Some(ObjectJson::Parsed(object));
                check::evaluate::<C>(&current, settings, self.cluster)
            }
            None => check::evaluate::<C>(self.request, settings, self.cluster),
        };
        if let Some(mut rendered) = rendered {
            if let Some(object) = rendered.mutation.take() {
                self.mutated = Some(object);
            }
            self.rendered.push(rendered);
        }
    }
}

impl Policy for AllInOne {
    type Options = Settings;
    const POLICY: &'static str = registry::ALL_IN_ONE;
    const ADMISSION_RULES: &'static [Rule] = RULES;

    fn check_options(_settings: &Settings) -> Result<(), String> {
        // Every section was checked by its check's own rules as it was read.
        Ok(())
    }

    fn decide_request(request: &Request<'_>, settings: &Settings, cluster: &dyn Cluster) -> Answer {
        let mut run = Run {
            request,
            cluster,
            mutated: None,
            rendered: Vec::new(),
        };
        registry::run_checks(settings, &mut run);
        let mut answer = render::full_answer(run.rendered, true);
        if answer.verdict.accepted {
            answer.verdict.mutated_object = run.mutated;
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
