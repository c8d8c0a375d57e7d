//! Admission rules as the policies register them (the `rules` of metadata.yml), and the one
//! matcher that decides, as the API server does, whether a request falls under them: the
//! all-in-one policy routes requests with it and `syncguard scan` picks the policies of a
//! document with it.
//!
//! Each policy's rules are declared once, in its metadata.yml (what Kubewarden reads):
//! `build/policy_rules.rs` turns every `policies/<name>/metadata.yml` and the all-in-one's `metadata.yml` into
//! the constants below ([`CRD_SCHEMA_FIELDS`], ..., [`SYNCGUARD`]).

use crate::admission::{Operation, Request};
use serde::{Deserialize, Serialize};
use std::ops::Deref;

/// One admission rule: which groups, versions, resources and operations a policy sees.
///
/// `L` is how each list is held: static slices in the tables generated from metadata.yml,
/// `Vec<String>` in metadata read at run time (the `syncguard` command).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rule<L = &'static [&'static str]> {
    /// API groups (`""` is the core group, `"*"` any).
    pub api_groups: L,
    /// API versions (`"*"` any).
    pub api_versions: L,
    /// Resources: `"*"` any resource (not subresources), `"*/*"` any resource and subresource,
    /// `"pods/*"` pods and their subresources, `"*/scale"` the scale subresource of any resource.
    pub resources: L,
    /// Operations (`CREATE`, `UPDATE`, `DELETE`, `CONNECT`, `"*"` any).
    pub operations: L,
}

/// What a rule is matched against: the attributes of a request as the API server names them
/// (k8s.io/apiserver's `admission.Attributes`: resource, subresource, operation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attributes<'a> {
    /// API group, `""` for the core group.
    pub group: &'a str,
    /// API version.
    pub version: &'a str,
    /// Resource (plural), e.g. `jobs`.
    pub resource: &'a str,
    /// Subresource, `""` for none.
    pub subresource: &'a str,
    /// Operation; `None` for a request without one of the API server's (no rule matches it).
    pub operation: Option<Operation>,
}

impl<'a> Attributes<'a> {
    /// The target of a request.
    ///
    /// Kubewarden's audit scanner puts the object's kind where the resource belongs
    /// (`resource.resource: CustomResourceDefinition`); such a request is matched by the
    /// built-in resource its group and kind name.
    pub fn of(request: &'a Request<'_>) -> Attributes<'a> {
        let resource = if request.resource.resource == request.kind.kind {
            crate::generated::builtin_kinds(&request.kind.kind)
                .find(|r| r.group == request.kind.group && !r.subresource)
                .map_or(request.resource.resource.as_ref(), |r| r.plural)
        } else {
            request.resource.resource.as_ref()
        };
        Attributes {
            group: &request.resource.group,
            version: &request.resource.version,
            resource,
            subresource: request.sub_resource.as_deref().unwrap_or(""),
            operation: request.operation,
        }
    }
}

fn any_or<S: AsRef<str>>(list: &[S], value: &str) -> bool {
    list.iter().any(|item| item.as_ref() == "*" || item.as_ref() == value)
}

impl<L, S> Rule<L>
where
    L: Deref<Target = [S]>,
    S: AsRef<str>,
{
    /// Whether the rule covers `target`, with the API server's matching of webhook rules
    /// (`k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules`): a resource entry
    /// `res/sub` matches when `res` is `*` or the resource and `sub` is `*` or the
    /// subresource, an entry without `/` having the empty subresource.
    pub fn applies_to(&self, target: &Attributes<'_>) -> bool {
        let resource_matches = self.resources.iter().any(|entry| {
            let (resource, subresource) = entry.as_ref().split_once('/').unwrap_or((entry.as_ref(), ""));
            (resource == "*" || resource == target.resource)
                && (subresource == "*" || subresource == target.subresource)
        });
        any_or(&self.api_groups, target.group)
            && any_or(&self.api_versions, target.version)
            && resource_matches
            && target
                .operation
                .is_some_and(|operation| any_or(&self.operations, operation.as_str()))
    }

    /// Whether a request falls under this rule (see [`Attributes::of`] and [`Rule::applies_to`]).
    pub fn matches(&self, request: &Request<'_>) -> bool {
        self.applies_to(&Attributes::of(request))
    }
}

/// Whether any of `rules` matches the request.
pub fn any_matches(rules: &[Rule], request: &Request<'_>) -> bool {
    let target = Attributes::of(request);
    rules.iter().any(|rule| rule.applies_to(&target))
}

include!(concat!(env!("OUT_DIR"), "/policy_rules.rs"));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::GroupVersionResource;

    fn request<'a>(group: &'a str, resource: &'a str, sub: Option<&'a str>, op: &'a str) -> Request<'a> {
        Request {
            resource: GroupVersionResource {
                group: group.into(),
                version: "v1".into(),
                resource: resource.into(),
            },
            sub_resource: sub.map(Into::into),
            operation: op.parse().ok(),
            ..Request::default()
        }
    }

    fn target<'a>(group: &'a str, resource: &'a str, subresource: &'a str, operation: &'a str) -> Attributes<'a> {
        Attributes {
            group,
            version: "v1",
            resource,
            subresource,
            operation: operation.parse().ok(),
        }
    }

    #[test]
    fn crd_rule() {
        assert!(CRD_SCHEMA_FIELDS[0].matches(&request(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            None,
            "UPDATE"
        )));
        assert!(!CRD_SCHEMA_FIELDS[0].matches(&request(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            None,
            "DELETE"
        )));
        assert!(!CRD_SCHEMA_FIELDS[0].matches(&request(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            Some("status"),
            "UPDATE"
        )));
        assert!(!CRD_SCHEMA_FIELDS[0].matches(&request("apps", "deployments", None, "CREATE")));
    }

    #[test]
    fn audit_scanner_form_matches_by_kind() {
        let mut audit = request("apiextensions.k8s.io", "CustomResourceDefinition", None, "CREATE");
        audit.kind.group = "apiextensions.k8s.io".into();
        audit.kind.kind = "CustomResourceDefinition".into();
        assert!(CRD_SCHEMA_FIELDS[0].matches(&audit));
        audit.kind.group = "example.com".into();
        assert!(!CRD_SCHEMA_FIELDS[0].matches(&audit));
    }

    #[test]
    fn resources_match_like_the_api_server() {
        let rule = |resources: &'static [&'static str]| -> Rule {
            Rule {
                api_groups: &["*"],
                api_versions: &["*"],
                resources,
                operations: &["CREATE"],
            }
        };
        let any = rule(&["*"]);
        assert!(any.applies_to(&target("apps", "deployments", "", "CREATE")));
        assert!(!any.applies_to(&target("apps", "deployments", "scale", "CREATE")));
        assert!(!any.applies_to(&target("apps", "deployments", "", "UPDATE")));
        let all = rule(&["*/*"]);
        assert!(all.applies_to(&target("apps", "deployments", "", "CREATE")));
        assert!(all.applies_to(&target("apps", "deployments", "scale", "CREATE")));
        let deployments_and_subresources = rule(&["deployments/*"]);
        assert!(deployments_and_subresources.applies_to(&target("apps", "deployments", "", "CREATE")));
        assert!(deployments_and_subresources.applies_to(&target("apps", "deployments", "scale", "CREATE")));
        assert!(!deployments_and_subresources.applies_to(&target("apps", "statefulsets", "", "CREATE")));
        let any_scale = rule(&["*/scale"]);
        assert!(any_scale.applies_to(&target("apps", "statefulsets", "scale", "CREATE")));
        assert!(!any_scale.applies_to(&target("apps", "statefulsets", "", "CREATE")));
        let status = rule(&["jobs/status"]);
        assert!(!status.applies_to(&target("batch", "jobs", "", "CREATE")));
        assert!(status.applies_to(&target("batch", "jobs", "status", "CREATE")));
    }

    #[test]
    fn owned_rules_match_like_static_ones() {
        let owned = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let rule = Rule {
            api_groups: owned(&["batch"]),
            api_versions: owned(&["v1"]),
            resources: owned(&["jobs"]),
            operations: owned(&["CREATE", "UPDATE"]),
        };
        assert!(rule.applies_to(&target("batch", "jobs", "", "UPDATE")));
        assert!(!rule.applies_to(&target("", "jobs", "", "CREATE")));
        assert!(!rule.applies_to(&target("batch", "jobs", "", "DELETE")));
        let version = Attributes {
            version: "v2",
            ..target("batch", "jobs", "", "CREATE")
        };
        assert!(!rule.applies_to(&version));
    }

    /// Whether every request `inner` covers, `outer` covers too.
    fn includes(outer: &Rule, inner: &Rule) -> bool {
        let lists = |outer: &[&str], inner: &[&str]| inner.iter().all(|item| any_or(outer, item));
        let resources = inner.resources.iter().all(|entry| {
            let (resource, subresource) = entry.split_once('/').unwrap_or((entry, ""));
            outer.resources.iter().any(|wide| {
                let (wide_resource, wide_subresource) = wide.split_once('/').unwrap_or((wide, ""));
                (wide_resource == "*" || wide_resource == resource)
                    && (wide_subresource == "*" || wide_subresource == subresource)
            })
        });
        lists(outer.api_groups, inner.api_groups)
            && lists(outer.api_versions, inner.api_versions)
            && resources
            && lists(outer.operations, inner.operations)
    }

    #[test]
    fn all_in_one_rules_are_the_union_of_the_checks() {
        let checks: Vec<&Rule> = POLICIES
            .iter()
            .filter(|(name, _)| *name != "syncguard")
            .flat_map(|(_, rules)| rules.iter())
            .collect();
        assert!(checks.len() >= 5, "every check has rules");
        for rule in &checks {
            assert!(
                SYNCGUARD.iter().any(|wide| includes(wide, rule)),
                "the all-in-one metadata.yml misses {rule:?}"
            );
        }
        for rule in SYNCGUARD {
            assert!(
                checks.iter().any(|check| includes(check, rule)),
                "the all-in-one metadata.yml registers {rule:?}, which no check does"
            );
        }
    }
}
