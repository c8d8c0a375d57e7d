//! hook-job-safety: stops hook Jobs from stranding GitOps syncs (docs/problems.md#4-a-fast-hook-job-stuck-on-argocds-hook-finalizer).
//!
//! ArgoCD 2.14.3 and every 3.x release put `argocd.argoproj.io/hook-finalizer` on each hook
//! object they create (gitops-engine PR 646, the fix for hooks deleted early by
//! `ttlSecondsAfterFinished`, argo-cd issue 21055). When ArgoCD misses the end of a fast hook
//! Job (Kyverno's `kyverno-clean-reports`, kyverno issue 13149), the finalizer is never removed:
//! the Job keeps a `metadata.deletionTimestamp` forever and the sync never finishes.
//!
//! # What the check looks at
//! Requests for `batch/v1` Jobs, CREATE and UPDATE (its metadata.yml's rule).
//! A *hook Job* is a Job annotated `argocd.argoproj.io/hook` or `helm.sh/hook` (any value).
//! In messages a Helm hook is also named by the ArgoCD phase ArgoCD runs it in:
//! `pre-install`/`pre-upgrade` are PreSync, `post-install`/`post-upgrade` are PostSync.
//!
//! In this order, the first rule that applies decides:
//! 1. A request that is not for a `batch` Job (its kind, and the `batch/v1` `jobs` resource of
//!    the rules, without a subresource), or whose operation is not CREATE, is accepted without
//!    reading the object. UPDATE in particular is never rejected and never patched:
//!    ArgoCD must always be able to remove its finalizer with an UPDATE, and a webhook that
//!    mutates hook Jobs on UPDATE is itself a known cause of stuck finalizers (argo-cd issue
//!    24187: Jobs are largely immutable, so ArgoCD's finalizer removal then fails).
//! 2. Quick filter: an object whose raw JSON text contains neither `argocd.argoproj.io/hook`
//!    (which also covers `argocd.argoproj.io/hook-delete-policy` and the hook finalizer) nor
//!    `helm.sh/hook` is accepted unparsed: it is not a hook and carries no hook finalizer. The
//!    API server writes these keys verbatim; a hand-written request that spells a letter of
//!    them with a JSON escape (`\/` or `\u0068` ...) skips the quick filter and is parsed.
//! 3. The object is read as a Job. `null` anywhere counts as absent, as the API server's own
//!    decoder treats it. An object that cannot be read (a field of the wrong type, such as a
//!    string `spec.ttlSecondsAfterFinished`) is rejected with code 400 naming the field; the API
//!    server would not have decoded it either. With `ttlAction: remove`, a Job whose text holds
//!    `ttlSecondsAfterFinished` is read once, whole, into the value the removal edits, and the
//!    Job view is read from that value.
//! 4. An object with `metadata.deletionTimestamp` (only the audit scanner sends one as CREATE,
//!    since a real create never carries it) gets only the stuck-hook check: rejected when it
//!    holds `argocd.argoproj.io/hook-finalizer` in `metadata.finalizers` and has finished (a
//!    status condition `Complete` or `Failed` with status `"True"`), with the remedy (an ArgoCD
//!    release that fixes leaked hook finalizers, and the `kubectl patch` that releases this
//!    Job); accepted otherwise (ArgoCD is still waiting for a running hook). The TTL and delete
//!    policy findings are not reported on such an object: it is already on its way out.
//! 5. A Job that is not a hook is accepted.
//! 6. A hook Job is checked for `spec.ttlSecondsAfterFinished` (setting `ttlAction`: warn,
//!    reject, or remove, which patches the field away) and then for a missing delete policy
//!    (setting `deletePolicy`: warn, reject or ignore). Rejections are joined into one message
//!    in that order; warnings keep that order too. When anything rejects, nothing is patched.
//!
//! The `remove` mutation is idempotent: the patched object has no TTL, so it gives no patch.

use crate::admission::{ObjectJson, Request};
use crate::check::{Check, GroupKind, Objects};
use crate::cluster::Cluster;
use crate::finding::{Finding, Fix, Malformed, Report, RuleDoc, Subject};
use crate::k8s::Job;
use crate::rules::Rule;
use crate::settings::{Action, RejectOrWarn, string_enum};
use crate::text::Parts;
use crate::text::search::contains;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// ArgoCD's hook annotation (`PreSync`, `Sync`, `PostSync`, ...).
pub const ARGOCD_HOOK: &str = "argocd.argoproj.io/hook";
/// ArgoCD's hook delete policy annotation.
pub const ARGOCD_DELETE_POLICY: &str = "argocd.argoproj.io/hook-delete-policy";
/// Helm's hook annotation (`pre-install`, `post-upgrade`, ...).
pub const HELM_HOOK: &str = "helm.sh/hook";
/// Helm's hook delete policy annotation.
pub const HELM_DELETE_POLICY: &str = "helm.sh/hook-delete-policy";
/// The finalizer ArgoCD puts on every hook object it creates.
pub const HOOK_FINALIZER: &str = "argocd.argoproj.io/hook-finalizer";

/// The rules of the check's findings.
pub const FINDINGS: &[RuleDoc] = &[
    RuleDoc {
        id: "ttlSecondsAfterFinished",
        summary: "a hook Job sets spec.ttlSecondsAfterFinished",
        anchor: "what-it-checks",
    },
    RuleDoc {
        id: "deletePolicy",
        summary: "a hook Job has no hook delete policy",
        anchor: "what-it-checks",
    },
    RuleDoc {
        id: "stuckHook",
        summary: "a finished, deleted hook Job is held by ArgoCD's hook finalizer",
        anchor: "what-it-checks",
    },
];

/// What to do with a hook Job that sets `spec.ttlSecondsAfterFinished`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TtlAction {
    /// Accept with a warning (the default).
    #[default]
    Warn,
    /// Reject the Job.
    Reject,
    /// Accept and patch `spec.ttlSecondsAfterFinished` away (on CREATE only).
    Remove,
}

/// Settings of the hook-job-safety check.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Settings {
    /// What to do with a hook Job that sets `spec.ttlSecondsAfterFinished`: `warn` (default),
    /// `reject` or `remove`.
    pub ttl_action: TtlAction,
    /// What to do with a hook Job without a hook delete policy: `warn` (default), `reject` or
    /// `ignore`.
    pub delete_policy: Action,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            ttl_action: TtlAction::Warn,
            delete_policy: Action::Warn,
        }
    }
}

string_enum!(TtlAction {
    "warn" => TtlAction::Warn,
    "reject" => TtlAction::Reject,
    "remove" => TtlAction::Remove,
});

/// The hook-job-safety check.
pub struct HookJobSafety;

impl Check for HookJobSafety {
    type Settings = Settings;
    const NAME: &'static str = "hook-job-safety";
    const SETTINGS_KEY: &'static str = "hookJobSafety";
    const RULES: &'static [Rule] = crate::rules::HOOK_JOB_SAFETY;

    const KINDS: &'static [GroupKind] = &[("batch", "Job")];
    const FINDINGS: &'static [RuleDoc] = FINDINGS;

    fn check(
        request: &Request<'_>,
        objects: &Objects<'_>,
        settings: &Settings,
        _cluster: &dyn Cluster,
    ) -> Result<Report, Malformed> {
        // Only the text is searched, and a Job read as its view (whole when it may be edited):
        // hook Jobs are a few, and the text search passes over every other Job unread.
        let object = objects.object;
        // An UPDATE, which the rules cover, is never judged (the README says why).
        if !request.is_create() {
            return Ok(Report::nothing());
        }
        // An object a check before built (all-in-one) has no text to search: it is read.
        if object.text().is_some_and(|text| !may_be_hook(text)) {
            return Ok(Report::nothing());
        }
        // A Job that may lose its TTL is read once, whole: the view comes from the value the
        // removal edits. The text search only decides how it is read (a miss costs a second
        // read for the edit, never a wrong answer).
        // Otherwise the view is read from the request's one tree when a check of the all-in-one
        // read it already (issue 47: every check judges the same borrowed tree), else from the
        // text; a Job that does not fit is read again from the text, for the path of the error.
        // The edit needs an owned `Value` (the answer carries the mutated object as one).
        let (whole, view) = match object.text() {
            Some(text) if settings.ttl_action == TtlAction::Remove && contains(text, TTL_FIELD) => {
                object.read_for_edit::<Job>()
            }
            _ => match objects.read_tree().and_then(|tree| Job::deserialize(tree).ok()) {
                Some(job) => (None, Ok(job)),
                None => (None, object.read_with_path::<Job>()),
            },
        };
        let job = job_of(view)?;
        let subject = Subject::new(
            request,
            &job.metadata.name,
            &job.metadata.generate_name,
            &job.metadata.namespace,
        );
        if let Some(deleted_at) = &job.metadata.deletion_timestamp {
            let name = job.metadata.name.as_str();
            let name = if name.is_empty() {
                request.name.as_deref().unwrap_or_default()
            } else {
                name
            };
            let namespace = job.metadata.namespace.as_str();
            let namespace = if namespace.is_empty() {
                request.namespace.as_deref().unwrap_or_default()
            } else {
                namespace
            };
            let findings = stuck(&job, name, namespace, deleted_at).into_iter().collect();
            return Ok(Report::new(subject, findings));
        }
        let Some(hook) = Hook::of(&job.metadata.annotations) else {
            return Ok(Report::nothing());
        };
        Ok(decide_hook(subject, &job, &hook, settings, object, whole))
    }
}

/// The Job of a view read with [`ObjectJson::read_with_path`] (or `read_for_edit`), or the 400
/// message of one that does not fit, naming the field in the API server's path form.
fn job_of(read: Result<Job, (String, String)>) -> Result<Job, Malformed> {
    read.map_err(|(path, message)| {
        let at = if path.is_empty() {
            String::new()
        } else {
            format!(" at {path}")
        };
        Malformed(format!(
            "cannot read the Job{at}: {message}; a batch/v1 Job must match its schema (the API server \
             would not decode this one either)"
        ))
    })
}

/// Whether the raw object may be a hook Job or carry the hook finalizer (see the module doc).
fn may_be_hook(text: &str) -> bool {
    contains(text, ARGOCD_HOOK) || contains(text, HELM_HOOK) || escapes_key_char(text)
}

/// Whether the JSON text escapes a character that occurs in the hook keys (`\/` or a `\u`
/// escape of a lowercase letter, `.`, `-` or `/`), which would hide a key from a plain search.
fn escapes_key_char(text: &str) -> bool {
    text.match_indices('\\').any(|(i, _)| {
        let rest = text.get(i + 1..).unwrap_or("");
        if rest.starts_with('/') {
            return true;
        }
        let Some(hex) = rest.strip_prefix('u').and_then(|r| r.get(..4)) else {
            return false;
        };
        u32::from_str_radix(hex, 16)
            .ok()
            .and_then(char::from_u32)
            .is_some_and(|c| c.is_ascii_lowercase() || matches!(c, '.' | '-' | '/'))
    })
}

/// The decision on a hook Job that is not being deleted: TTL first, then the delete policy.
/// `whole` is the object already read as a value, if it was (see `check`).
fn decide_hook(
    subject: Subject,
    job: &Job,
    hook: &Hook,
    settings: &Settings,
    object: ObjectJson<'_>,
    whole: Option<Value>,
) -> Report {
    let mut findings = Vec::new();
    let mut removal = None;
    if let Some(ttl) = job.spec.ttl_seconds_after_finished {
        let finding = |action| {
            Finding::new(
                "ttlSecondsAfterFinished",
                action,
                "spec.ttlSecondsAfterFinished",
                ttl_message(hook, ttl),
                ttl_brief(ttl),
            )
            // The fix is to remove the field from the manifest.
            .with_fix(Some(Fix::Delete))
        };
        match settings.ttl_action {
            TtlAction::Warn => findings.push(finding(RejectOrWarn::Warn)),
            TtlAction::Reject => findings.push(finding(RejectOrWarn::Reject)),
            TtlAction::Remove => removal = Some((findings.len(), ttl)),
        }
    }
    if !hook.has_delete_policy {
        let action = match settings.delete_policy {
            Action::Reject => Some(RejectOrWarn::Reject),
            Action::Warn => Some(RejectOrWarn::Warn),
            Action::Ignore => None,
        };
        if let Some(action) = action {
            findings.push(Finding::new(
                "deletePolicy",
                action,
                "metadata.annotations",
                delete_policy_message(hook),
                delete_policy_brief(hook),
            ));
        }
    }
    let mut report = Report::new(subject, findings);
    // Nothing is patched on a rejection, so the removal notice is left out then.
    if report.findings.iter().any(Finding::rejects) {
        return report;
    }
    if let Some((position, ttl)) = removal
        && let Some(mutated) = without_ttl(object, whole)
    {
        let notice = ttl_removed_brief(ttl);
        report.findings.insert(
            position,
            Finding::warn(
                "ttlSecondsAfterFinished",
                "spec.ttlSecondsAfterFinished",
                notice.clone(),
                notice,
            )
            .with_fix(Some(Fix::Delete)),
        );
        report.mutation = Some(mutated);
    }
    report
}

/// The object with `spec.ttlSecondsAfterFinished` removed; `None` if it has no such field. The
/// object is `whole` when it was read as a value already, else read (or, built by a check
/// before, copied) now.
fn without_ttl(object: ObjectJson<'_>, whole: Option<Value>) -> Option<Value> {
    let mut object: Value = match whole {
        Some(value) => value,
        None => object.read().ok()?,
    };
    object.get_mut("spec")?.as_object_mut()?.remove(TTL_FIELD)?;
    Some(object)
}

/// The Job field the `remove` TTL action takes away.
const TTL_FIELD: &str = "ttlSecondsAfterFinished";

/// What makes a Job a hook, for messages and the delete policy finding.
struct Hook {
    /// `key: value` of the hook annotations present, ArgoCD's first.
    annotations: Vec<String>,
    /// ArgoCD phases of the Helm hook types (only when ArgoCD reads the Helm annotation).
    helm_phases: Vec<&'static str>,
    /// Whether the hook is declared with ArgoCD's own annotation.
    argocd: bool,
    /// Whether a delete policy annotation is set to a non-empty value.
    has_delete_policy: bool,
}

impl Hook {
    fn of(annotations: &BTreeMap<String, String>) -> Option<Hook> {
        let argocd = annotations.get(ARGOCD_HOOK);
        let helm = annotations.get(HELM_HOOK);
        if argocd.is_none() && helm.is_none() {
            return None;
        }
        let mut shown = Vec::new();
        if let Some(value) = argocd {
            shown.push(format!("{ARGOCD_HOOK}: {value}"));
        }
        let mut helm_phases = Vec::new();
        if let Some(value) = helm {
            shown.push(format!("{HELM_HOOK}: {value}"));
            // ArgoCD ignores Helm hook types when its own annotation is present.
            if argocd.is_none() {
                for phase in value.split(',').filter_map(|t| argocd_phase(t.trim())) {
                    if !helm_phases.contains(&phase) {
                        helm_phases.push(phase);
                    }
                }
            }
        }
        let set = |key: &str| annotations.get(key).is_some_and(|v| !v.trim().is_empty());
        Some(Hook {
            annotations: shown,
            helm_phases,
            argocd: argocd.is_some(),
            has_delete_policy: set(ARGOCD_DELETE_POLICY) || set(HELM_DELETE_POLICY),
        })
    }

    /// `argocd.argoproj.io/hook: PostSync`, or `helm.sh/hook: post-upgrade, which ArgoCD runs
    /// as a PostSync hook`.
    fn describe(&self) -> String {
        let mut text = self.annotations.join(", ");
        if !self.helm_phases.is_empty() {
            text.push_str(&format!(
                ", which ArgoCD runs as a {} hook",
                self.helm_phases.join(" and ")
            ));
        }
        text
    }

    /// The delete policy annotation to suggest, in the hook's own flavour first.
    fn suggested_delete_policy(&self) -> String {
        let argocd = format!("`{ARGOCD_DELETE_POLICY}: BeforeHookCreation`");
        let helm = format!("`{HELM_DELETE_POLICY}: before-hook-creation`");
        if self.argocd {
            format!("{argocd} (the Helm equivalent is {helm})")
        } else {
            format!("{helm} (ArgoCD reads it as BeforeHookCreation; its own form is {argocd})")
        }
    }
}

/// The ArgoCD phase ArgoCD runs a Helm hook type in, as gitops-engine maps them.
pub fn argocd_phase(helm_hook: &str) -> Option<&'static str> {
    match helm_hook {
        "pre-install" | "pre-upgrade" => Some("PreSync"),
        "post-install" | "post-upgrade" => Some("PostSync"),
        _ => None,
    }
}

fn ttl_reason() -> &'static str {
    "The TTL-after-finished controller can delete the Job before ArgoCD records that it \
     finished: older ArgoCD releases then wait forever for a hook that is gone (argo-cd issue \
     21055), and the releases that fixed that (2.14.3 and 3.x, gitops-engine PR 646) hold \
     the Job with argocd.argoproj.io/hook-finalizer, which, when ArgoCD misses the end of the \
     Job, leaves it stuck with a deletionTimestamp and the sync unfinished (kyverno issue \
     13149)."
}

fn ttl_fix(hook: &Hook) -> String {
    let cleanup = if hook.has_delete_policy {
        "let the hook delete policy clean the Job up".to_string()
    } else {
        format!(
            "use a hook delete policy instead, e.g. {}",
            hook.suggested_delete_policy()
        )
    };
    format!(
        "Fix: remove spec.ttlSecondsAfterFinished from the Job's manifest and {cleanup}; if a \
         mutating policy adds the TTL (such as Kyverno's add-ttl-jobs), exclude hook Jobs from it."
    )
}

fn ttl_message(hook: &Hook, ttl: i64) -> String {
    format!(
        "hook ({}) sets spec.ttlSecondsAfterFinished: {ttl}. {} {}",
        hook.describe(),
        ttl_reason(),
        ttl_fix(hook)
    )
}

/// The TTL finding in a few words, for a warning (and a rejection with no room for more).
fn ttl_brief(ttl: i64) -> Parts {
    Parts::from(format!(
        "hook sets spec.ttlSecondsAfterFinished: {ttl}; the TTL controller can delete it before ArgoCD sees it finish, and the sync gets stuck. Remove the TTL."
    ))
}

/// The notice of the TTL's removal (`ttlAction: remove`).
fn ttl_removed_brief(ttl: i64) -> Parts {
    Parts::from(format!(
        "removed spec.ttlSecondsAfterFinished: {ttl} from this hook: the TTL controller can delete a hook before ArgoCD sees it finish. Remove it from the manifest too."
    ))
}

/// The missing delete policy in a few words.
fn delete_policy_brief(hook: &Hook) -> Parts {
    let annotation = if hook.argocd {
        format!("{ARGOCD_DELETE_POLICY}: BeforeHookCreation")
    } else {
        format!("{HELM_DELETE_POLICY}: before-hook-creation")
    };
    Parts::from(format!(
        "hook has no delete policy, so it stays until the next sync; set {annotation}."
    ))
}

fn delete_policy_message(hook: &Hook) -> String {
    format!(
        "hook ({}) has no delete policy: neither \
         metadata.annotations[{ARGOCD_DELETE_POLICY}] nor \
         metadata.annotations[{HELM_DELETE_POLICY}] is set. ArgoCD and Helm then fall back \
         to BeforeHookCreation, so the finished Job stays until the next sync (with \
         generateName, for good), which is what leads people and policies to add \
         ttlSecondsAfterFinished, a known cause of stuck hooks. Fix: state the cleanup in the \
         manifest, e.g. metadata.annotations {}; add HookSucceeded (hook-succeeded) to delete \
         the Job as soon as it succeeds.",
        hook.describe(),
        hook.suggested_delete_policy()
    )
}

/// The rejection of a stuck hook Job, or `None` when the Job is not stuck.
fn stuck(job: &Job, name: &str, namespace: &str, deleted_at: &str) -> Option<Finding> {
    let finalizer_index = job.metadata.finalizers.iter().position(|f| f == HOOK_FINALIZER)?;
    let (condition_index, condition) = job
        .status
        .conditions
        .iter()
        .enumerate()
        .find(|(_, c)| (c.kind == "Complete" || c.kind == "Failed") && c.status == "True")?;
    let name = shell_word(name);
    let namespace = shell_word(namespace);
    let others: Vec<String> = job
        .metadata
        .finalizers
        .iter()
        .filter(|f| *f != HOOK_FINALIZER)
        .map(|f| crate::text::quote(f))
        .collect();
    let release = if others.is_empty() {
        format!(
            "kubectl patch job {name} -n {namespace} --type=merge -p \
             '{{\"metadata\":{{\"finalizers\":null}}}}'"
        )
    } else {
        let path = format!("/metadata/finalizers/{finalizer_index}");
        let path = crate::text::quote(&path);
        let ops = format!(
            "[{{\"op\":\"test\",\"path\":{path},\"value\":{}}},{{\"op\":\"remove\",\"path\":{path}}}]",
            crate::text::quote(HOOK_FINALIZER)
        );
        format!(
            "kubectl patch job {name} -n {namespace} --type=json -p '{ops}' (this removes only \
             ArgoCD's finalizer and keeps {}; `--type=merge -p \
             '{{\"metadata\":{{\"finalizers\":null}}}}'` would drop them all)",
            crate::text::join_and(&others)
        )
    };
    let since = match &condition.last_transition_time {
        Some(time) => format!(" since {time}"),
        None => String::new(),
    };
    let text = format!(
        "a stuck ArgoCD hook: it finished (status.conditions[{condition_index}]: {} is \
         True{since}) and was deleted at {deleted_at} (metadata.deletionTimestamp), but \
         metadata.finalizers[{finalizer_index}] still holds {HOOK_FINALIZER}, which only ArgoCD \
         removes, so the Job never goes away and the sync or application deletion waiting for it \
         never finishes (kyverno issue 13149). Fix: upgrade ArgoCD to a release that fixes \
         leaked hook finalizers (3.0.16 or a later 3.0 patch, a fixed 3.1 release, or 3.4.0 and \
         later; argo-cd PR 25916; one leak, argo-cd issue 29464, is still open), then release \
         the Job: {release}",
        condition.kind,
    );
    Some(Finding::reject(
        "stuckHook",
        format!("metadata.finalizers[{finalizer_index}]"),
        text,
        "a stuck ArgoCD hook: finished, deleted, but held by argocd.argoproj.io/hook-finalizer. Upgrade ArgoCD, then remove the finalizer.",
    ))
}

/// A word safe to paste into a POSIX shell: bare when it holds only `[A-Za-z0-9._-]` (every
/// valid Kubernetes name does), single-quoted otherwise.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::Response;
    use crate::check::{decide, parse_settings};
    use crate::cluster::NoCluster;
    use serde_json::{Value, json};

    fn run(operation: &str, object: Value, settings: Value) -> Response {
        let payload = json!({
            "request": {
                "uid": "1",
                "kind": {"group": "batch", "version": "v1", "kind": "Job"},
                "resource": {"group": "batch", "version": "v1", "resource": "jobs"},
                "operation": operation,
                "object": object,
            },
            "settings": settings,
        });
        decide::<HookJobSafety>(payload.to_string().as_bytes(), &NoCluster)
    }

    fn hook_job(annotations: Value, spec: Value) -> Value {
        json!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "migrate", "namespace": "shop", "annotations": annotations},
            "spec": spec,
        })
    }

    fn stuck_job(finalizers: Value) -> Value {
        json!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": "migrate",
                "namespace": "shop",
                "annotations": {"argocd.argoproj.io/hook": "PreSync"},
                "finalizers": finalizers,
                "deletionTimestamp": "2025-05-15T10:00:00Z",
            },
            "spec": {"ttlSecondsAfterFinished": 0},
            "status": {"conditions": [{"type": "Failed", "status": "True"}]},
        })
    }

    #[test]
    fn quick_filter() {
        assert!(!may_be_hook(r#"{"metadata":{"annotations":{"a":"b & c \u0026"}}}"#));
        assert!(may_be_hook(
            r#"{"metadata":{"finalizers":["argocd.argoproj.io/hook-finalizer"]}}"#
        ));
        assert!(may_be_hook(r#"{"metadata":{"annotations":{"helm.sh\/hook":"x"}}}"#));
        assert!(may_be_hook(r#"{"metadata":{"annotations":{"helm.sh/\u0068ook":"x"}}}"#));
        assert!(!may_be_hook(r#"{"s":"\u00"}"#));
        assert!(!may_be_hook("\\"));
    }

    #[test]
    fn escaped_key_is_still_a_hook() {
        let object = concat!(
            r#"{"metadata":{"name":"m","namespace":"s","#,
            r#""annotations":{"helm.sh\/hook":"pre-install"}},"#,
            r#""spec":{"ttlSecondsAfterFinished":5}}"#
        );
        let verdict = run(
            "CREATE",
            serde_json::from_str(object).unwrap(),
            json!({"ttlAction": "reject", "deletePolicy": "ignore"}),
        );
        assert!(!verdict.accepted);
        assert!(verdict.message.unwrap().contains("which ArgoCD runs as a PreSync hook"));
    }

    #[test]
    fn helm_phases_are_mapped_once_and_ignored_under_argocd_hook() {
        let annotations: BTreeMap<String, String> = [(
            "helm.sh/hook".to_string(),
            "pre-install, pre-upgrade,post-upgrade,test".to_string(),
        )]
        .into();
        let hook = Hook::of(&annotations).unwrap();
        assert_eq!(hook.helm_phases, ["PreSync", "PostSync"]);
        assert!(
            hook.describe()
                .ends_with("which ArgoCD runs as a PreSync and PostSync hook")
        );
        let mut both = annotations.clone();
        both.insert(ARGOCD_HOOK.into(), "Sync".into());
        let hook = Hook::of(&both).unwrap();
        assert!(hook.helm_phases.is_empty());
        assert!(
            hook.describe()
                .starts_with("argocd.argoproj.io/hook: Sync, helm.sh/hook:")
        );
        assert!(Hook::of(&BTreeMap::new()).is_none());
    }

    #[test]
    fn empty_delete_policy_counts_as_missing() {
        let verdict = run(
            "CREATE",
            hook_job(
                json!({
                    "argocd.argoproj.io/hook": "PostSync",
                    "argocd.argoproj.io/hook-delete-policy": " ",
                }),
                json!({}),
            ),
            json!({}),
        );
        assert!(verdict.accepted);
        assert_eq!(verdict.warnings.len(), 1);
        assert!(verdict.warnings[0].contains("has no delete policy"));
    }

    #[test]
    fn both_findings_reject_in_fixed_order() {
        let verdict = run(
            "CREATE",
            hook_job(
                json!({"argocd.argoproj.io/hook": "PostSync"}),
                json!({"ttlSecondsAfterFinished": 60}),
            ),
            json!({"ttlAction": "reject", "deletePolicy": "reject"}),
        );
        let message = verdict.message.unwrap();
        let ttl = message.find("sets spec.ttlSecondsAfterFinished: 60").unwrap();
        let policy = message.find("has no delete policy").unwrap();
        assert!(ttl < policy);
        assert!(verdict.warnings.is_empty());
    }

    #[test]
    fn remove_is_dropped_when_something_rejects() {
        let verdict = run(
            "CREATE",
            hook_job(
                json!({"argocd.argoproj.io/hook": "PostSync"}),
                json!({"ttlSecondsAfterFinished": 60}),
            ),
            json!({"ttlAction": "remove", "deletePolicy": "reject"}),
        );
        assert!(!verdict.accepted);
        assert!(verdict.mutated_object.is_none());
        assert!(verdict.warnings.is_empty());
        assert!(verdict.message.unwrap().contains("has no delete policy"));
    }

    #[test]
    fn remove_is_idempotent() {
        let object = hook_job(
            json!({"helm.sh/hook": "post-upgrade", "helm.sh/hook-delete-policy": "hook-succeeded"}),
            json!({"ttlSecondsAfterFinished": 900, "backoffLimit": 2}),
        );
        let first = run("CREATE", object, json!({"ttlAction": "remove"}));
        assert!(first.accepted);
        let mutated: Value = first.mutated_object.unwrap();
        assert_eq!(mutated["spec"], json!({"backoffLimit": 2}));
        let second = run("CREATE", mutated, json!({"ttlAction": "remove"}));
        assert!(second.accepted);
        assert!(second.mutated_object.is_none());
        assert!(second.warnings.is_empty());
    }

    #[test]
    fn null_ttl_is_absent() {
        let verdict = run(
            "CREATE",
            hook_job(
                json!({"helm.sh/hook": "pre-install", "helm.sh/hook-delete-policy": null}),
                json!({"ttlSecondsAfterFinished": null}),
            ),
            json!({"ttlAction": "remove", "deletePolicy": "ignore"}),
        );
        assert_eq!(verdict, Response::accept());
    }

    #[test]
    fn update_is_never_rejected_nor_patched() {
        let object = hook_job(
            json!({"argocd.argoproj.io/hook": "PostSync"}),
            json!({"ttlSecondsAfterFinished": 1}),
        );
        for settings in [
            json!({"ttlAction": "reject", "deletePolicy": "reject"}),
            json!({"ttlAction": "remove"}),
        ] {
            assert_eq!(run("UPDATE", object.clone(), settings), Response::accept());
        }
        assert_eq!(
            run("UPDATE", stuck_job(json!([HOOK_FINALIZER])), json!({})),
            Response::accept()
        );
    }

    #[test]
    fn stuck_job_reports_only_the_stuck_finding() {
        let verdict = run(
            "CREATE",
            stuck_job(json!([HOOK_FINALIZER])),
            json!({"ttlAction": "reject", "deletePolicy": "reject"}),
        );
        let message = verdict.message.unwrap();
        assert!(message.contains("status.conditions[0]: Failed is True)"), "{message}");
        let release = concat!(
            "kubectl patch job migrate -n shop --type=merge -p ",
            r#"'{"metadata":{"finalizers":null}}'"#
        );
        assert!(message.contains(release), "{message}");
        assert!(!message.contains("ttlSecondsAfterFinished"));
        assert!(!message.contains("delete policy"));
    }

    #[test]
    fn stuck_job_with_other_finalizers_gets_a_targeted_patch() {
        let verdict = run(
            "CREATE",
            stuck_job(json!(["foregroundDeletion", HOOK_FINALIZER])),
            json!({}),
        );
        let message = verdict.message.unwrap();
        let release = concat!(
            r#"kubectl patch job migrate -n shop --type=json -p '["#,
            r#"{"op":"test","path":"/metadata/finalizers/1","#,
            r#""value":"argocd.argoproj.io/hook-finalizer"},"#,
            r#"{"op":"remove","path":"/metadata/finalizers/1"}]'"#
        );
        assert!(message.contains(release), "{message}");
        assert!(message.contains(r#"keeps "foregroundDeletion""#));
    }

    #[test]
    fn deleted_job_without_the_finalizer_or_unfinished_is_accepted() {
        assert_eq!(
            run("CREATE", stuck_job(json!([])), json!({"ttlAction": "reject"})),
            Response::accept()
        );
        let mut running = stuck_job(json!([HOOK_FINALIZER]));
        running["status"] = json!({"active": 1, "conditions": [{"type": "Complete", "status": "False"}]});
        assert_eq!(run("CREATE", running, json!({})), Response::accept());
    }

    #[test]
    fn generate_name_and_odd_names() {
        let object = json!({
            "metadata": {
                "generateName": "after-",
                "namespace": "default",
                "annotations": {"argocd.argoproj.io/hook": "PostSync"},
            },
            "spec": {},
        });
        let verdict = run("CREATE", object, json!({}));
        assert!(
            verdict.warnings[0].starts_with("Job default/after-<generated>: hook has no delete policy"),
            "{:?}",
            verdict.warnings
        );
        assert_eq!(shell_word("kyverno-clean-reports"), "kyverno-clean-reports");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn malformed_objects_are_rejected_with_400() {
        let verdict = run(
            "CREATE",
            hook_job(
                json!({"helm.sh/hook": "post-upgrade"}),
                json!({"ttlSecondsAfterFinished": "900"}),
            ),
            json!({}),
        );
        assert!(!verdict.accepted);
        assert_eq!(verdict.code, Some(400));
        let message = verdict.message.unwrap();
        let expected = "cannot read the Job at spec.ttlSecondsAfterFinished: invalid type: \
                        string \"900\", expected i64; ";
        assert!(message.starts_with(expected), "{message}");
        let verdict = run(
            "CREATE",
            json!({"metadata": {"annotations": ["helm.sh/hook"]}}),
            json!({}),
        );
        assert_eq!(verdict.code, Some(400));
    }

    #[test]
    fn other_kinds_and_operations_are_accepted_unread() {
        let payload = json!({
            "request": {
                // A kind other than the resource's: the rules match, the check's kind test does not.
                "kind": {"group": "", "version": "v1", "kind": "Pod"},
                "resource": {"group": "batch", "version": "v1", "resource": "jobs"},
                "operation": "CREATE",
                "object": {
                    "metadata": {"annotations": {"helm.sh/hook": "test"}},
                    "spec": {"ttlSecondsAfterFinished": "x"},
                },
            },
            "settings": {"ttlAction": "reject"},
        });
        assert_eq!(
            decide::<HookJobSafety>(payload.to_string().as_bytes(), &NoCluster),
            Response::accept()
        );
        let object = hook_job(json!({"helm.sh/hook": "test"}), json!({"ttlSecondsAfterFinished": "x"}));
        assert_eq!(
            run("DELETE", object, json!({"ttlAction": "reject"})),
            Response::accept()
        );
    }

    #[test]
    fn settings() {
        let defaults = parse_settings::<HookJobSafety>(None).unwrap();
        assert_eq!(defaults.ttl_action, TtlAction::Warn);
        assert_eq!(defaults.delete_policy, Action::Warn);
        let err = parse_settings::<HookJobSafety>(Some(r#"{"deletePolicy": "remove"}"#)).unwrap_err();
        assert!(err.starts_with("`deletePolicy`: unknown variant `remove`"), "{err}");
    }
}
