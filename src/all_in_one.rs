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
//!
//! object-validation judges here only what the API server stored (a CRD update's stored objects,
//! the audit's stored custom resources: [`Judged::Stored`]), never the object a request writes:
//! the all-in-one is a mutating webhook, which sees a CREATE before the API server has set its
//! uid and validated it, and before the mutating webhooks after it have filled it in.
//!
//! crd-schema-fields and sync-drift, when both are enabled and judge a request (a CRD's), read
//! its object once and walk each of its trees once for the two
//! ([`with_sync_drift`]): at sync-drift's turn, so that it sees
//! the object as the checks between them changed it, crd-schema-fields' part keeping its place.

use crate::admission::{GroupVersionKind, ObjectJson, Request};
use crate::check::{self, Check, Module, Objects};
use crate::checks::crd_schema_fields::{self, CrdSchemaFields};
use crate::checks::object_validation::{self, Judged, ObjectValidation};
use crate::checks::sync_drift::{self, SyncDrift};
use crate::cluster::Cluster;
use crate::finding::{Malformed, Report};
use crate::json::{self, Node};
use crate::k8s::LAST_APPLIED;
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
    /// The request's own objects, each read at most once for every check that judges them
    /// (`None`: the request has none).
    objects: Option<&'r Objects<'a>>,
    cluster: &'r dyn Cluster,
    settings: &'r Settings,
    /// The object as the checks so far changed it. Owned and editable, unlike the request's
    /// borrowed [`crate::json::Node`] tree: a mutating check edits it in place (a finalizer
    /// added, a field set), the next checks judge the edited object, and the answer carries it
    /// whole as the SDK's `mutated_object` (a `serde_json::Value`), from which the engine
    /// computes the patch.
    mutated: Option<Value>,
    /// What the checks that applied found, rendered together at the end.
    parts: Vec<Part>,
    /// Where crd-schema-fields' part goes in `parts`, when it is judged with sync-drift's, at
    /// sync-drift's turn ([`Run::crd_walked_once`]).
    shared: Option<usize>,
}

impl Visit for Run<'_, '_> {
    /// Runs check `C` if its section enables it and it applies to the request: every check gets
    /// the same parsed request; only the object changes, once a check before has mutated it.
    /// crd-schema-fields and sync-drift, both judging a CRD, are run together at sync-drift's
    /// turn ([`Run::crd_walked_once`]), crd-schema-fields' part in its own place.
    fn visit<C: Check>(&mut self, section: &Section<C>) {
        if !section.enabled {
            return;
        }
        if C::NAME == <CrdSchemaFields as Check>::NAME && self.crd_walked_once() {
            self.shared = Some(self.parts.len());
            return;
        }
        if C::NAME == <SyncDrift as Check>::NAME
            && let Some(at) = self.shared.take()
        {
            return self.both(at);
        }
        if C::NAME == <ObjectValidation as Check>::NAME {
            return self.stored_only();
        }
        let defaults;
        let settings = match &section.settings {
            Some(settings) => settings,
            None => {
                defaults = C::Settings::default();
                &defaults
            }
        };
        self.run::<C>(settings);
    }
}

impl Run<'_, '_> {
    /// Runs check `C` with `settings` on the object as the checks so far changed it: the
    /// request's own objects, read once for every check, or, once a check has changed the
    /// object, the changed one (read for each check after it; only a mutation costs that).
    fn run<C: Check>(&mut self, settings: &C::Settings) {
        self.run_with::<C>(settings, C::check);
    }

    /// [`Run::run`] with `judge` in place of [`Check::check`].
    fn run_with<C: Check>(
        &mut self,
        settings: &C::Settings,
        judge: impl FnOnce(&Request<'_>, &Objects<'_>, &C::Settings, &dyn Cluster) -> Result<Report, Malformed>,
    ) {
        let part = match self.mutated.as_ref() {
            Some(object) => {
                let mut current = self.request.clone();
                current.object = Some(ObjectJson::Parsed(object));
                let objects = current.object.map(|object| Objects::new(object, current.old_object));
                check::evaluate_with::<C>(&current, objects.as_ref(), settings, self.cluster, judge)
            }
            None => check::evaluate_with::<C>(self.request, self.objects, settings, self.cluster, judge),
        };
        if let Some(part) = part {
            self.add(part);
        }
    }

    /// Runs object-validation on what the API server stored only ([`Judged::Stored`]: the
    /// all-in-one is a mutating webhook, which sees a CREATE before the API server has
    /// validated it and before the mutating webhooks after it have filled it in).
    fn stored_only(&mut self) {
        let defaults;
        let settings = match &self.settings.object_validation.settings {
            Some(settings) => settings,
            None => {
                defaults = object_validation::Settings::default();
                &defaults
            }
        };
        self.run_with::<ObjectValidation>(settings, |request, objects, settings, cluster| {
            ObjectValidation::judge(request, objects, settings, Judged::Stored, cluster)
        });
    }

    /// Adds a check's part, and the object as it changed it.
    fn add(&mut self, mut part: Part) {
        if let Some(object) = part.take_mutation() {
            self.mutated = Some(object);
        }
        self.parts.push(part);
    }

    /// Whether crd-schema-fields and sync-drift (both enabled) both judge the request, a CRD's:
    /// then the object is read, and each of its trees walked, once for the two
    /// ([`with_sync_drift`]), at sync-drift's turn, so that sync-drift sees
    /// the object as the checks between them changed it.
    fn crd_walked_once(&self) -> bool {
        self.settings.sync_drift.enabled
            && self.request.object.is_some()
            && check::applies::<CrdSchemaFields>(self.request)
            && check::applies::<SyncDrift>(self.request)
    }

    /// Runs crd-schema-fields and sync-drift together, crd-schema-fields' part going at `at`.
    fn both(&mut self, at: usize) {
        let defaults = (crd_schema_fields::Settings::default(), sync_drift::Settings::default());
        let schema_fields = self.settings.crd_schema_fields.settings.as_ref().unwrap_or(&defaults.0);
        let drift = self.settings.sync_drift.settings.as_ref().unwrap_or(&defaults.1);
        let Some(objects) = self.objects.filter(|_| self.mutated.is_none()) else {
            // A check between them changed the object: crd-schema-fields judges the request's
            // own, as at its turn, and sync-drift the object as changed.
            if let Some(part) =
                check::evaluate_on::<CrdSchemaFields>(self.request, self.objects, schema_fields, self.cluster)
            {
                self.parts.insert(at, part);
            }
            return self.run::<SyncDrift>(drift);
        };
        let (schema_fields, drift) = with_sync_drift(self.request, objects, schema_fields, drift, self.cluster);
        self.parts.insert(at, check::part::<CrdSchemaFields>(schema_fields));
        self.add(check::part::<SyncDrift>(drift));
    }
}

/// crd-schema-fields and sync-drift on one CRD request, as the all-in-one runs them when both
/// are enabled and apply: their two reports, the same as each check's own ([`Check::check`]),
/// from one reading of the object and of its last-applied manifest, and one traversal of each
/// tree sync-drift walks.
///
/// Which traversal serves whom:
/// - the tree sync-drift walks (the object of a manifest, or the last-applied manifest of a live
///   object) is traversed once, by sync-drift's walk; it hands each key of the CRD its type does
///   not declare to crd-schema-fields' judgement beside it ([`crd_schema_fields::Shared`], a
///   [`crate::check::shared_walk::Beside`]), and each value it does not descend into (the CRD's
///   `status`, an object the live object lacks, a key given twice), which crd-schema-fields walks
///   on from alone;
/// - a tree sync-drift does not walk (the live object, a last-applied manifest of an object
///   sync-drift judges as a manifest) is walked by crd-schema-fields alone.
///
/// Each check reads JSON nested up to its own depth (crd-schema-fields
/// [`crd_schema_fields::MAX_DEPTH`], sync-drift serde_json's 128 levels): an object or a manifest
/// nested deeper than that is read and walked by each check on its own, as it would be alone.
pub(crate) fn with_sync_drift(
    request: &Request<'_>,
    objects: &Objects<'_>,
    settings: &crd_schema_fields::Settings,
    drift: &sync_drift::Settings,
    cluster: &dyn Cluster,
) -> (Result<Report, Malformed>, Result<Report, Malformed>) {
    let alone = || {
        (
            CrdSchemaFields::check(request, objects, settings, cluster),
            SyncDrift::check(request, objects, drift, cluster),
        )
    };
    if request.kind.version != "v1" {
        return alone();
    }
    let tree = match objects.tree() {
        Ok((tree @ Node::Object(_), deepest)) if deepest <= crd_schema_fields::MAX_DEPTH => tree,
        _ => return alone(),
    };
    let metadata = tree.get("metadata").filter(|m| m.as_object().is_some());
    // The annotation is read once, whole, if either check reads it.
    let wanted = settings.check_last_applied || request.is_update() || sync_drift::is_live(metadata);
    let mut manifest_depth = 0;
    let manifest_read = tree
        .at(&["metadata", "annotations", LAST_APPLIED])
        .and_then(Node::as_str)
        .filter(|_| wanted)
        .map(|text| {
            // sync-drift compares the manifest with a live object; otherwise crd-schema-fields
            // alone reads it, and need not build its `spec` where it is the object's.
            let read = if request.is_update() || sync_drift::is_live(metadata) {
                json::read_noting_depth(text, json::Everything, usize::MAX)
            } else {
                crd_schema_fields::read_manifest(tree, text, usize::MAX)
            };
            read.map(|(node, deepest)| {
                manifest_depth = deepest;
                node
            })
        });
    let manifest = if settings.check_last_applied {
        // Deeper than crd-schema-fields reads: it reads its own, cut off.
        crd_schema_fields::last_applied(
            tree,
            manifest_read
                .as_ref()
                .filter(|_| manifest_depth <= crd_schema_fields::MAX_DEPTH),
        )
    } else {
        Ok(None)
    };
    let mut shared = crd_schema_fields::Shared::new(settings, tree, manifest.as_ref().ok().and_then(Option::as_deref));
    let drift_report = sync_drift::judge(request, tree, manifest_read.as_ref(), drift, cluster, &mut shared);
    let walked = shared.walked;
    let schema_fields_report = crd_schema_fields::judge(request, tree, manifest, settings, walked);
    (Ok(schema_fields_report), drift_report)
}

/// Leaves out sync-drift's `schemaUnavailable` when object-validation says of the same object
/// that its CRD is unknown or unreadable ([`sync_drift::SAID_BY_OBJECT_VALIDATION`]): both speak
/// of the one CRD the request names, and object-validation's finding (the object was not
/// validated at all, pruning included) says more. Each check alone still says it.
fn said_once(parts: &mut [Part]) {
    let said = parts.iter().any(|part| {
        part.check() == <ObjectValidation as Check>::NAME
            && sync_drift::SAID_BY_OBJECT_VALIDATION
                .1
                .iter()
                .any(|rule| part.has_finding(rule))
    });
    if said {
        for part in parts
            .iter_mut()
            .filter(|part| part.check() == <SyncDrift as Check>::NAME)
        {
            part.drop_findings(sync_drift::SAID_BY_OBJECT_VALIDATION.0);
        }
    }
}

/// Finds whether an enabled check that applies to the request reads the whole object
/// ([`Check::READS_WHOLE`]).
struct ReadsWhole<'r, 'a> {
    request: &'r Request<'a>,
    any: bool,
}

impl Visit for ReadsWhole<'_, '_> {
    fn visit<C: Check>(&mut self, section: &Section<C>) {
        self.any |=
            section.enabled && reads_whole_here::<C>(&self.request.kind, false) && check::applies::<C>(self.request);
    }
}

/// Whether check `C` reads the object (`old`: the old object) of a request of `kind` whole in the
/// all-in-one: as it does alone ([`Module::reads_whole`]), but object-validation, which judges
/// here only what the API server stored ([`Judged::Stored`]), rarely, and reads that itself when
/// it does.
fn reads_whole_here<C: Check>(kind: &GroupVersionKind<'_>, old: bool) -> bool {
    C::NAME != <ObjectValidation as Check>::NAME && <C as Module>::reads_whole(kind, old)
}

/// Finds whether any check reads the whole object (`old`: the old object) of a request of
/// `kind` in the all-in-one, enabled or not ([`Module::reads_whole`]).
struct ReadsWholeOfKind<'k, 'a> {
    kind: &'k GroupVersionKind<'a>,
    old: bool,
    any: bool,
}

impl Visit for ReadsWholeOfKind<'_, '_> {
    fn visit<C: Check>(&mut self, _: &Section<C>) {
        self.any |= reads_whole_here::<C>(self.kind, self.old);
    }
}

/// Collects the lookups the settings of every enabled check name.
struct SettingsLookups(Vec<(String, String)>);

impl registry::Visit for SettingsLookups {
    fn visit<C: Check>(&mut self, section: &registry::Section<C>) {
        if section.enabled
            && let Some(settings) = &section.settings
        {
            for lookup in C::settings_lookups(settings) {
                if !self.0.contains(&lookup) {
                    self.0.push(lookup);
                }
            }
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

    fn settings_lookups(settings: &Settings) -> Vec<(String, String)> {
        let mut lookups = SettingsLookups(Vec::new());
        registry::visit_sections(settings, &mut lookups);
        lookups.0
    }

    fn reads_whole(kind: &GroupVersionKind<'_>, old: bool) -> bool {
        // Whatever the settings enable: they come after the request in the payload. Asked of
        // the checks' types over default sections, not of `registry::CHECKS`: its entries hold
        // each check's single-module operations as function pointers, which would link every one
        // of them into this module (about 90 KB, docs/benchmarks.md).
        let mut any = ReadsWholeOfKind { kind, old, any: false };
        registry::visit_sections(&Settings::default(), &mut any);
        any.any
    }

    fn decide<'a>(
        request: &Request<'a>,
        objects: Option<&Objects<'a>>,
        settings: &Settings,
        cluster: &dyn Cluster,
    ) -> Answer {
        // When a check that applies reads the whole object, it is read first, once (in the
        // request's pass, unless the payload's keys were not in Kubewarden's order), and the
        // checks that read only its start look at that tree rather than read the text again.
        if let Some(objects) = objects {
            let mut whole = ReadsWhole { request, any: false };
            registry::visit_sections(settings, &mut whole);
            if whole.any {
                let _ = objects.tree();
            }
        }
        // Checks that look up the same object share one lookup.
        let remembered = crate::cluster::Remembered::new(cluster);
        let mut run = Run {
            request,
            objects,
            cluster: &remembered,
            settings,
            mutated: None,
            parts: Vec::new(),
            shared: None,
        };
        registry::visit_sections(settings, &mut run);
        said_once(&mut run.parts);
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

    /// How many schema nodes deciding `settings` on a CREATE of `object` visits, and whether it
    /// visited one twice.
    fn visits<P: Module>(object: &Value, settings: Value) -> (usize, bool) {
        use crate::check::shared_walk::visits;
        let payload = syncguard_testkit::payload(&syncguard_testkit::crd_request("CREATE", object, None), &settings);
        visits::take();
        check::decide::<P>(payload.as_bytes(), &crate::cluster::NoCluster);
        let mut nodes = visits::take();
        let count = nodes.len();
        nodes.sort_unstable();
        nodes.dedup();
        (count, nodes.len() != count)
    }

    #[test]
    fn a_crd_schema_is_walked_once_for_crd_schema_fields_and_sync_drift() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "spec": {"type": "object", "x-kubernetes-patch-strategy": "merge", "properties": {
                "list": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}},
            "status": {"type": "object", "nullable": false}}});
        let object = serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"}, "scope": "Namespaced",
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": schema}}]},
        });
        // The schema nodes: the root, spec, list, list's items, name and status.
        let nodes = 6;
        assert_eq!(
            visits::<CrdSchemaFields>(&object, serde_json::json!({})),
            (nodes, false)
        );
        assert_eq!(visits::<SyncDrift>(&object, serde_json::json!({})), (nodes, false));
        assert_eq!(visits::<AllInOne>(&object, serde_json::json!({})), (nodes, false));
        for alone in ["crdSchemaFields", "syncDrift"] {
            let settings = serde_json::json!({ alone: {"enabled": false} });
            assert_eq!(
                visits::<AllInOne>(&object, settings),
                (nodes, false),
                "{alone} disabled"
            );
        }
    }

    /// How many times deciding `request` with `P` read its object (whole or in part).
    fn reads<P: Module>(request: &Value) -> usize {
        let payload = syncguard_testkit::payload(request, &serde_json::json!({}));
        crate::admission::reads::take();
        check::decide::<P>(payload.as_bytes(), &crate::cluster::NoCluster);
        crate::admission::reads::take()
    }

    #[test]
    fn every_check_judges_the_one_tree_of_the_request() {
        use crate::checks::ownership_markers::OwnershipMarkers;
        // Kube-OVN's CRD, with its last-applied manifest: five checks judge it, one reading.
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/policies/crd-schema-fields/test_data/kube-ovn-fixed.json"
        );
        let crd: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let deployment = serde_json::json!({
            "uid": "1", "operation": "CREATE", "name": "web", "namespace": "shop",
            "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "object": {"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
                "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}});
        // A Helm hook Job: hook-job-safety reads its Job from the tree object-validation read.
        let job_path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/policies/hook-job-safety/test_data/kyverno-clean-reports.json"
        );
        let job: Value = serde_json::from_str(&std::fs::read_to_string(job_path).unwrap()).unwrap();
        assert_eq!(reads::<AllInOne>(&job), 1);
        // An UPDATE's old object is not read whole for object-validation, which judges no
        // object a request writes in the all-in-one.
        let mut update = deployment.clone();
        update["operation"] = serde_json::json!("UPDATE");
        update["oldObject"] = deployment["object"].clone();
        assert_eq!(reads::<AllInOne>(&update), 1);
        assert_eq!(reads::<ObjectValidation>(&update), 2);
        for request in [&crd, &deployment] {
            assert_eq!(reads::<AllInOne>(request), 1);
            assert_eq!(reads::<SyncDrift>(request), 1);
            // Alone, a check that reads only the start of the object reads only that.
            assert_eq!(reads::<OwnershipMarkers>(request), 1);
        }
    }

    #[test]
    fn the_object_is_read_in_the_requests_pass_unless_that_pass_cannot_read_it() {
        let payload = |object: &str| {
            format!(
                r#"{{"request":{{"kind":{{"group":"apps","kind":"Deployment","version":"v1"}},"object":{object},"oldObject":null,"operation":"CREATE"}},"settings":{{}}}}"#
            )
        };
        let plain = r#"{"metadata":{"name":"web"}}"#;
        let text = payload(plain);
        let read = check::read_request::<AllInOne>(text.as_bytes()).unwrap();
        assert_eq!(read.request.object.and_then(|o| o.text()), Some(plain));
        assert!(read.object_tree.is_some());
        // A check that reads only the start of the object has it found as text.
        use crate::checks::ownership_markers::OwnershipMarkers;
        let read = check::read_request::<OwnershipMarkers>(text.as_bytes()).unwrap();
        assert!(read.object_tree.is_none() && read.request.object.is_some());
        // A number serde_json reads as no `f64`, and an object nested as deep as serde_json reads
        // alone (127 levels) but not two levels down in the payload: read as text, each check
        // meeting it as it would alone.
        let deep = format!(r#"{{"a":{}1{}}}"#, "[".repeat(126), "]".repeat(126));
        for object in [r#"{"a":1e400}"#, deep.as_str()] {
            let text = payload(object);
            let read = check::read_request::<AllInOne>(text.as_bytes()).unwrap();
            assert_eq!(read.request.object.and_then(|o| o.text()), Some(object));
            assert!(read.object_tree.is_none());
        }
        assert!(json::read(&deep, json::Everything, usize::MAX).is_ok());
    }

    /// A cluster whose every lookup fails (a host that cannot reach the API server).
    struct Unreachable;

    impl Cluster for Unreachable {
        fn list_all(&self, _: &str, _: &str, _: &[&str]) -> Result<crate::cluster::Items, crate::cluster::LookupError> {
            Err(crate::cluster::LookupError::Other("connection refused".into()))
        }
        fn get(
            &self,
            _: &str,
            _: &str,
            _: &str,
            _: Option<&str>,
            _: &[&str],
        ) -> Result<String, crate::cluster::LookupError> {
            Err(crate::cluster::LookupError::Other("connection refused".into()))
        }
    }

    #[test]
    fn an_unreadable_crd_is_said_once_by_object_validation() {
        // A stored Certificate as the audit sends it (a CREATE with its `resourceVersion`), the
        // one custom resource object-validation judges in the all-in-one; sync-drift judges the
        // manifest last applied to it, which holds a field the stored object lacks (pruned?).
        let manifest = serde_json::json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
            "metadata": {"name": "api", "namespace": "shop"}, "spec": {"secretName": "api-tls", "isCa": true}});
        let request = serde_json::json!({
            "uid": "1", "operation": "CREATE", "name": "api", "namespace": "shop",
            "kind": {"group": "cert-manager.io", "version": "v1", "kind": "Certificate"},
            "resource": {"group": "cert-manager.io", "version": "v1", "resource": "certificates"},
            "object": {"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
                "metadata": {"name": "api", "namespace": "shop", "resourceVersion": "42",
                    "annotations": {LAST_APPLIED: manifest.to_string()}},
                "spec": {"secretName": "api-tls"}}});
        let warnings = |settings: Value, alone: Option<&str>| {
            let payload = syncguard_testkit::payload(&request, &settings);
            let response = match alone {
                Some("sync-drift") => check::decide::<SyncDrift>(payload.as_bytes(), &Unreachable),
                Some(_) => check::decide::<ObjectValidation>(payload.as_bytes(), &Unreachable),
                None => check::decide::<AllInOne>(payload.as_bytes(), &Unreachable),
            };
            assert!(response.accepted, "{response:?}");
            response.warnings.join("\n")
        };
        let drift = "its CRD could not be read";
        let validation = "the CRD certificates.cert-manager.io could not be read";
        // Each alone says it.
        assert!(warnings(serde_json::json!({}), Some("sync-drift")).contains(drift));
        assert!(warnings(serde_json::json!({}), Some("object-validation")).contains(validation));
        // Together, object-validation says it once.
        let both = warnings(serde_json::json!({}), None);
        assert!(both.contains(validation) && !both.contains(drift), "{both}");
        // Without object-validation's finding (disabled, or its rule ignored), sync-drift says it.
        for settings in [
            serde_json::json!({"objectValidation": {"enabled": false}}),
            serde_json::json!({"objectValidation": {"rules": {"unknownCrd": "ignore"}}}),
        ] {
            let said = warnings(settings.clone(), None);
            assert!(said.contains(drift) && !said.contains(validation), "{settings}: {said}");
        }
    }

    /// A CRD of MachineDeployment-like objects whose `spec.selector` is required, as Cluster
    /// API's is (its defaulting webhook fills it in).
    fn machine_deployment_crd() -> Value {
        serde_json::json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "machinedeployments.cluster.x-k8s.io", "uid": "c1", "resourceVersion": "7"},
            "spec": {"group": "cluster.x-k8s.io", "scope": "Namespaced",
                "names": {"kind": "MachineDeployment", "plural": "machinedeployments"},
                "versions": [{"name": "v1beta1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "required": ["clusterName", "selector"], "properties": {
                            "clusterName": {"type": "string", "minLength": 1},
                            "selector": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                            "replicas": {"type": "integer", "maximum": 3}}}}}}}]}})
    }

    /// A request for a MachineDeployment of `replicas` without `spec.selector`.
    fn machine_deployment(operation: &str, metadata: Value, replicas: u32) -> Value {
        serde_json::json!({
            "uid": "1", "operation": operation, "name": "md", "namespace": "shop",
            "kind": {"group": "cluster.x-k8s.io", "version": "v1beta1", "kind": "MachineDeployment"},
            "resource": {"group": "cluster.x-k8s.io", "version": "v1beta1", "resource": "machinedeployments"},
            "object": {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment",
                "metadata": metadata, "spec": {"clusterName": "prod", "replicas": replicas}}})
    }

    #[test]
    fn a_create_a_later_mutating_webhook_completes_is_never_refused() {
        // As a mutating webhook sees it: no uid, no creation time yet, and Cluster API's
        // defaulting webhook, which fills `spec.selector`, may still come.
        let cluster = crate::cluster::Objects(vec![machine_deployment_crd()]);
        let request = machine_deployment("CREATE", serde_json::json!({"name": "md", "namespace": "shop"}), 5);
        let payload = syncguard_testkit::payload(&request, &serde_json::json!({}));
        let alone = check::decide::<ObjectValidation>(payload.as_bytes(), &cluster);
        assert!(
            !alone.accepted,
            "object-validation alone judges the manifest: {alone:?}"
        );
        assert!(
            alone
                .message
                .unwrap_or_default()
                .contains("spec.selector: Required value")
        );
        let all = check::decide::<AllInOne>(payload.as_bytes(), &cluster);
        assert!(all.accepted, "{all:?}");
        let said = all.warnings.join("\n");
        assert!(!said.contains("object-validation"), "{said}");
        // Nor judged, any more than a manifest `kwctl run` sends, or an UPDATE of it.
        let update = machine_deployment("UPDATE", serde_json::json!({"name": "md", "namespace": "shop"}), 5);
        let mut update = update;
        update["oldObject"] = update["object"].clone();
        let payload = syncguard_testkit::payload(&update, &serde_json::json!({}));
        assert!(check::decide::<AllInOne>(payload.as_bytes(), &cluster).accepted);
    }

    #[test]
    fn a_stored_custom_resource_is_still_judged_in_the_audit() {
        let cluster = crate::cluster::Objects(vec![machine_deployment_crd()]);
        // As the audit scanner sends it: a CREATE of the stored object, `resourceVersion` and all.
        let stored = serde_json::json!({"name": "md", "namespace": "shop", "uid": "u1", "resourceVersion": "42",
            "creationTimestamp": "2026-01-01T00:00:00Z"});
        let mut request = machine_deployment("CREATE", stored, 5);
        request["object"]["spec"]["selector"] = serde_json::json!({"matchLabels": {"app": "md"}});
        let payload = syncguard_testkit::payload(&request, &serde_json::json!({}));
        let all = check::decide::<AllInOne>(payload.as_bytes(), &cluster);
        assert!(!all.accepted, "{all:?}");
        let message = all.message.unwrap_or_default();
        assert!(
            message.contains("object-validation: ")
                && message.contains(
                    "spec.replicas: Invalid value: 5: spec.replicas in body should be less than or equal to 3"
                ),
            "{message}"
        );
        // Within its new schema, it passes.
        request["object"]["spec"]["replicas"] = serde_json::json!(2);
        let payload = syncguard_testkit::payload(&request, &serde_json::json!({}));
        assert!(check::decide::<AllInOne>(payload.as_bytes(), &cluster).accepted);
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
