//! What a check finds: structured findings, which [`crate::render`] alone turns into
//! Kubewarden's answer, the audit annotation and `syncguard scan`'s rows.
//!
//! A check returns a [`Report`]: the object it judged ([`Subject`]) and its [`Finding`]s, each
//! with a stable rule id (documented by a [`RuleDoc`] in the check's `FINDINGS`), the action the
//! settings give it, the path of the field in the object, a brief text (for a
//! warning) and a long one (for a rejection). Labels, links, prefixes and the API server's size
//! limits are the renderer's business, never the check's.

use crate::admission::Request;
use crate::settings::RejectOrWarn;
use crate::text::Parts;
use serde_json::Value;

/// One rule a check reports, as users see it in answers and configure it in settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleDoc {
    /// Stable id (`storedVersions`, `unknownField`): the peers' id where a peer has the rule.
    pub id: &'static str,
    /// What the rule finds, in one line (SARIF's `shortDescription`).
    pub summary: &'static str,
    /// The section of the check's README that explains the rule and its fixes.
    pub anchor: &'static str,
}

/// The label an unnamed object gets in every answer.
pub const UNNAMED: &str = "<unnamed>";

/// How answers name the object a check judged: its kind and `namespace/name`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subject {
    /// Kind, e.g. `CustomResourceDefinition`; empty when unknown.
    pub kind: String,
    /// `namespace/name`, or `name` for a cluster-scoped object (see [`Subject::new`]).
    pub label: String,
}

impl Subject {
    /// The subject of `request`'s object, from the object's own metadata: the name, else the
    /// request's name, else `generateName` followed by `<generated>`, else [`UNNAMED`]; the
    /// namespace as [`namespace_of`] gives it (none for a cluster-scoped object). The kind is the
    /// request's.
    pub fn new(request: &Request<'_>, name: &str, generate_name: &str, namespace: &str) -> Subject {
        let or_request = |own: &str, from_request: Option<&str>| -> String {
            if own.is_empty() {
                from_request.unwrap_or_default().to_string()
            } else {
                own.to_string()
            }
        };
        let mut name = or_request(name, request.name.as_deref());
        if name.is_empty() {
            name = if generate_name.is_empty() {
                UNNAMED.to_string()
            } else {
                format!("{generate_name}<generated>")
            };
        }
        let namespace = namespace_of(request, namespace);
        Subject {
            kind: request.kind.kind.to_string(),
            label: if namespace.is_empty() {
                name
            } else {
                format!("{namespace}/{name}")
            },
        }
    }

    /// How a rejection message names the kind: the kind itself, or `object`.
    pub fn noun(&self) -> &str {
        if self.kind.is_empty() { "object" } else { &self.kind }
    }

    /// How a warning names the kind, where every character counts: `CRD` for a
    /// CustomResourceDefinition, else as [`Subject::noun`].
    pub fn short_noun(&self) -> &str {
        match self.kind.as_str() {
            "CustomResourceDefinition" => "CRD",
            _ => self.noun(),
        }
    }
}

/// The namespace of `request`'s object whose own `metadata.namespace` is `own`: `own`, else the
/// request's; none for a cluster-scoped object, which the API server stores without one (it
/// clears the namespace a manifest gives, and names no namespace in the request, except the
/// Namespace's own name for a Namespace). An object is cluster-scoped when its kind is a built-in
/// cluster-scoped one (`ClusterRole`, `Namespace`, `CustomResourceDefinition`: the generated
/// table), or when the request names a kind that is not built in and no namespace: the API
/// server sends every namespaced object's namespace (its URL holds it), and `syncguard scan`
/// sends none for the kinds it knows to be cluster-scoped (a CRD's `spec.scope: Cluster`).
pub fn namespace_of<'a>(request: &'a Request<'_>, own: &'a str) -> &'a str {
    let from_request = request.namespace.as_deref().unwrap_or_default();
    let kind = &request.kind;
    let cluster_scoped = match crate::generated::api_cluster_scoped(&kind.group, &kind.version, &kind.kind) {
        Some(cluster_scoped) => cluster_scoped,
        None => !kind.kind.is_empty() && from_request.is_empty(),
    };
    match (cluster_scoped, own) {
        (true, _) => "",
        (false, "") => from_request,
        (false, own) => own,
    }
}

/// One thing a check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The rule's id, one of the check's `FINDINGS`.
    pub rule: &'static str,
    /// What the settings make of it.
    pub action: RejectOrWarn,
    /// Where: the field's path in the object, as field-validation warnings write it
    /// (`spec.versions[1].schema...`), empty for the object as a whole.
    pub path: String,
    /// What and where in a few words, for a warning; the renderer adds the object's label
    /// before it and the README link after it when they fit.
    pub brief: Parts,
    /// What, where, why and the fix, for a rejection message; the renderer adds the label.
    pub text: Parts,
    /// A note the renderer adds to the warning, such as the setting that turned a rejection
    /// into a warning (`warnOnly: channel`).
    pub note: Option<String>,
    /// The status code of a rejection, when it is not the default (500 for a failed lookup).
    pub code: Option<u16>,
    /// The fix, when it is one edit of the manifest at `path` (SARIF's `fixes`).
    pub fix: Option<Fix>,
    /// The cause it shares with other findings, when it has one: a rejection of several
    /// findings says the cause once and lists the findings under it ([`Grouped`]).
    pub grouped: Option<Grouped>,
}

/// How a finding reads under a heading it shares with other findings of the same cause (two
/// served versions that differ, one version's schema): the heading is said once, then each
/// finding's line. The finding's own `text` stays whole for every other place it is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grouped {
    /// The cause and the place the findings share, said once
    /// (`Served v1beta1 and v2 differ without a conversion webhook: ... In v2's schema:`).
    pub heading: String,
    /// The finding under the heading: what it leaves out of `text` is in the heading.
    pub line: Parts,
}

/// A fix that is one edit of the manifest at the finding's path.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum Fix {
    /// Remove the key (or item).
    Delete,
    /// Write this value instead (JSON text).
    Replace(String),
}

impl Finding {
    /// A finding of `rule` at `path` with its long and brief texts.
    pub fn new(
        rule: &'static str,
        action: RejectOrWarn,
        path: impl Into<String>,
        text: impl Into<Parts>,
        brief: impl Into<Parts>,
    ) -> Finding {
        Finding {
            rule,
            action,
            path: path.into(),
            brief: brief.into(),
            text: text.into(),
            note: None,
            code: None,
            fix: None,
            grouped: None,
        }
    }

    /// A rejecting finding.
    pub fn reject(
        rule: &'static str,
        path: impl Into<String>,
        text: impl Into<Parts>,
        brief: impl Into<Parts>,
    ) -> Finding {
        Finding::new(rule, RejectOrWarn::Reject, path, text, brief)
    }

    /// A warning finding.
    pub fn warn(
        rule: &'static str,
        path: impl Into<String>,
        text: impl Into<Parts>,
        brief: impl Into<Parts>,
    ) -> Finding {
        Finding::new(rule, RejectOrWarn::Warn, path, text, brief)
    }

    /// The same finding as a warning when `warn` holds, with `note` saying why (the
    /// `warnOnly`-style overrides of the checks' settings); unchanged otherwise.
    pub fn warn_if(mut self, warn: bool, note: impl FnOnce() -> String) -> Finding {
        if warn && self.action == RejectOrWarn::Reject {
            self.action = RejectOrWarn::Warn;
            self.note = Some(note());
        }
        self
    }

    /// The same finding with `fix`.
    pub fn with_fix(mut self, fix: Option<Fix>) -> Finding {
        self.fix = fix;
        self
    }

    /// The same finding listed under `heading` as `line` when a rejection gives several
    /// findings (see [`Grouped`]).
    pub fn under(mut self, heading: impl Into<String>, line: impl Into<Parts>) -> Finding {
        self.grouped = Some(Grouped {
            heading: heading.into(),
            line: line.into(),
        });
        self
    }

    /// The same finding with `code` for its rejection.
    pub fn with_code(mut self, code: u16) -> Finding {
        self.code = Some(code);
        self
    }

    /// Whether the finding rejects the request.
    pub fn rejects(&self) -> bool {
        self.action == RejectOrWarn::Reject
    }
}

/// A check's whole answer about one request, before rendering.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// The object judged.
    pub subject: Subject,
    /// The findings, in the check's documented order.
    pub findings: Vec<Finding>,
    /// Findings reported as one list (see [`List`]); `None`: each finding on its own.
    pub list: Option<List>,
    /// The object as the check changes it (mutating checks only); dropped when anything rejects.
    pub mutation: Option<Value>,
    /// Sentences a rejection message gives once, after its findings: why findings of the same
    /// rule matter and what to do instead, rather than in each of them.
    pub notes: Vec<String>,
}

impl Report {
    /// A report on `subject` with `findings`.
    pub fn new(subject: Subject, findings: Vec<Finding>) -> Report {
        Report {
            subject,
            findings,
            ..Report::default()
        }
    }

    /// Nothing found: the request is accepted as it is.
    pub fn nothing() -> Report {
        Report::default()
    }
}

/// Many findings of the same few rules (fields the API server drops, drifting paths), reported
/// as one list: an introduction said once, then one line (in a rejection) or one warning per
/// finding, at most `limit` of them, then how many more there are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct List {
    /// The rules whose findings make up the list; the check's other findings stand alone.
    pub rules: &'static [&'static str],
    /// Most findings listed; the rest are counted.
    pub limit: usize,
    /// What the rejecting findings are and why they matter, after the label (`3 fields the API
    /// server drops. ...:`).
    pub intro: String,
    /// The same for the warning findings, in a few words.
    pub intro_brief: String,
    /// How the last warning names the findings left out (`fields the API server drops`).
    pub more: String,
    /// Where to read them all (`` `kubectl apply --validate=strict` lists them all ``).
    pub more_hint: String,
}

/// Why a check could not judge a request: it is rejected with code 400 and this message (an
/// object of the wrong shape, which the API server would not have decoded either).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub String);

impl Malformed {
    /// A refusal saying `message`.
    pub fn new(message: impl Into<String>) -> Malformed {
        Malformed(message.into())
    }
}

impl From<String> for Malformed {
    fn from(message: String) -> Malformed {
        Malformed(message)
    }
}
