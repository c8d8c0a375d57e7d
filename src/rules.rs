//! Admission rules as the policies register them (the `rules` of metadata.yml), and the
//! matching the API server does, used to route requests inside the all-in-one policy.

use crate::admission::Request;

/// One admission rule: which groups, versions, resources and operations a check sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// API groups (`""` is the core group, `"*"` any).
    pub api_groups: &'static [&'static str],
    /// API versions (`"*"` any).
    pub api_versions: &'static [&'static str],
    /// Resources (`"*"` any resource, not subresources).
    pub resources: &'static [&'static str],
    /// Operations (`CREATE`, `UPDATE`, ...).
    pub operations: &'static [&'static str],
}

/// The rule of the three CRD checks.
pub const CRD_RULE: Rule = Rule {
    api_groups: &["apiextensions.k8s.io"],
    api_versions: &["v1"],
    resources: &["customresourcedefinitions"],
    operations: &["CREATE", "UPDATE"],
};

fn any_or(list: &[&str], value: &str) -> bool {
    list.iter().any(|item| *item == "*" || *item == value)
}

impl Rule {
    /// Whether a request falls under this rule, as the API server decides it.
    ///
    /// Kubewarden's audit scanner puts the object's kind where the resource belongs
    /// (`resource.resource: CustomResourceDefinition`); such a request is matched by the
    /// built-in resource its group and kind name.
    pub fn matches(&self, request: &Request<'_>) -> bool {
        let plural = if request.resource.resource == request.kind.kind {
            crate::generated::builtin_kinds(&request.kind.kind)
                .find(|r| r.group == request.kind.group && !r.subresource)
                .map_or(request.resource.resource.as_str(), |r| r.plural)
        } else {
            request.resource.resource.as_str()
        };
        let resource = match request.sub_resource.as_deref() {
            Some(sub) if !sub.is_empty() => format!("{plural}/{sub}"),
            _ => plural.to_string(),
        };
        let resource_matches = self.resources.iter().any(|r| match r.split_once('/') {
            None => *r == "*" && !resource.contains('/') || *r == resource,
            Some(("*", "*")) => true,
            Some(_) => *r == resource,
        });
        any_or(self.api_groups, &request.resource.group)
            && any_or(self.api_versions, &request.resource.version)
            && resource_matches
            && any_or(self.operations, &request.operation)
    }
}

/// Whether any of `rules` matches the request.
pub fn any_matches(rules: &[Rule], request: &Request<'_>) -> bool {
    rules.iter().any(|rule| rule.matches(request))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::GroupVersionResource;

    fn request(group: &str, resource: &str, sub: Option<&str>, op: &str) -> Request<'static> {
        Request {
            resource: GroupVersionResource {
                group: group.into(),
                version: "v1".into(),
                resource: resource.into(),
            },
            sub_resource: sub.map(Into::into),
            operation: op.into(),
            ..Request::default()
        }
    }

    #[test]
    fn crd_rule() {
        assert!(CRD_RULE.matches(&request(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            None,
            "UPDATE"
        )));
        assert!(!CRD_RULE.matches(&request(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            None,
            "DELETE"
        )));
        assert!(!CRD_RULE.matches(&request(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            Some("status"),
            "UPDATE"
        )));
        assert!(!CRD_RULE.matches(&request("apps", "deployments", None, "CREATE")));
    }

    #[test]
    fn audit_scanner_form_matches_by_kind() {
        let mut audit = request("apiextensions.k8s.io", "CustomResourceDefinition", None, "CREATE");
        audit.kind.group = "apiextensions.k8s.io".into();
        audit.kind.kind = "CustomResourceDefinition".into();
        assert!(CRD_RULE.matches(&audit));
        audit.kind.group = "example.com".into();
        assert!(!CRD_RULE.matches(&audit));
    }

    #[test]
    fn wildcard_resource_skips_subresources() {
        let rule = Rule {
            api_groups: &["*"],
            api_versions: &["*"],
            resources: &["*"],
            operations: &["CREATE"],
        };
        assert!(rule.matches(&request("apps", "deployments", None, "CREATE")));
        assert!(!rule.matches(&request("apps", "deployments", Some("scale"), "CREATE")));
    }
}
