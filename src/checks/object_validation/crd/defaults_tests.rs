//! The defaults of a CRD's schemas (`ValidateDefaults`) beyond what `crd.rs`'s tests hold: the
//! CEL cost budget their rules share, and the prune check of an old CRD.

use crate::json;

/// The texts of the errors of a CRD of one version whose root's properties are `properties`,
/// the old CRD's being `old`.
fn errors(properties: &str, old: Option<&str>) -> Vec<String> {
    let crd = |properties: &str| {
        format!(
            r#"{{"spec":{{"versions":[{{"name":"v1","schema":{{"openAPIV3Schema":{{"type":"object","properties":{properties}}}}}}}]}}}}"#
        )
    };
    let new = crd(properties);
    let new = json::read(&new, json::Everything, usize::MAX).unwrap();
    let old = old.map(crd);
    let old = old
        .as_deref()
        .map(|old| json::read(old, json::Everything, usize::MAX).unwrap());
    super::validate(&new, old.as_ref(), 35)
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// `count` properties each defaulting to a list of 300 integers under a rule that costs 631,502
/// (`cel/tests.rs`: 15 fit in the 10,000,000 budget, the 16th runs out), the first `broken` of
/// them with a `maxItems` their default breaks (so kube-openapi refuses it and its rule does not
/// run), then `zz`, whose default breaks its `maximum`.
fn costly(count: usize, broken: usize) -> String {
    let row = format!("[{}]", vec!["1"; 300].join(","));
    let mut properties: Vec<String> = (0..count)
        .map(|i| {
            let max_items = if i < broken { r#","maxItems":10"# } else { "" };
            format!(
                r#""p{i:02}":{{"type":"array","items":{{"type":"integer"}}{max_items},"default":{row},"x-kubernetes-validations":[{{"rule":"self.all(x, self.all(y, x + y >= 0))"}}]}}"#
            )
        })
        .collect();
    properties.push(r#""zz":{"type":"integer","maximum":3,"default":5}"#.to_string());
    format!("{{{}}}", properties.join(","))
}

const ZZ: &str = "spec.validation.openAPIV3Schema.properties[zz].default: Invalid value: 5:  in body should be less than or equal to 3";

#[test]
fn the_defaults_rules_share_one_budget_and_none_is_judged_once_it_is_spent() {
    // 15 rules fit: every default is judged.
    assert_eq!(errors(&costly(15, 0), None), [ZZ]);
    // 17 do not: the API server runs out of its budget at a default of Go's map order and judges
    // none after it, so whether it reaches `zz` depends on that order, and where it runs out
    // too. Nothing is said (each default with a budget of its own said `zz`'s error).
    assert!(errors(&costly(17, 0), None).is_empty());
    // A default kube-openapi refuses does not run its rule, and costs nothing: two such leave
    // 15 rules, which fit.
    let found = errors(&costly(17, 2), None);
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!(found[2], ZZ);
    assert!(found[0].ends_with("must have at most 10 items"), "{found:?}");
}

#[test]
fn an_old_crds_defaults_are_only_pruned_to_learn_whether_pruned_defaults_are_required() {
    // The old CRD's default reaches a transition rule, which a validation of the default could
    // not judge; `schemaHasUnprunedDefaults` only prunes it (no rule runs), so it is pruned and
    // the new CRD's unpruned default is refused.
    let old = r#"{"n":{"type":"integer","default":1,"x-kubernetes-validations":[{"rule":"self >= oldSelf"}]}}"#;
    let new = r#"{"n":{"type":"integer","default":1,"x-kubernetes-validations":[{"rule":"self >= oldSelf"}]},
      "tls":{"type":"object","properties":{"port":{"type":"integer"}},"default":{"port":2,"extra":1}}}"#;
    assert_eq!(
        errors(new, Some(old)),
        [
            r#"spec.validation.openAPIV3Schema.properties[tls].default: Invalid value: {"extra":1,"port":2}: must not have unknown fields"#
        ]
    );
    // An old CRD with an unpruned default lets the new one keep its own.
    let unpruned = r#"{"tls":{"type":"object","properties":{"port":{"type":"integer"}},"default":{"extra":1}}}"#;
    assert!(errors(new, Some(unpruned)).is_empty());
}

/// An embedded resource's schema (`properties`, or keeping unknown fields).
const EMBEDDED: &str = r#""type":"object","x-kubernetes-embedded-resource":true"#;

#[test]
fn an_embedded_resources_default_has_its_api_version_and_kind_judged_first() {
    // kubectl-validate 1.35's answers.
    let at = "spec.validation.openAPIV3Schema.properties";
    let preserve = |default: &str| {
        format!(r#"{{"r":{{{EMBEDDED},"x-kubernetes-preserve-unknown-fields":true,"default":{default}}}}}"#)
    };
    assert_eq!(
        errors(&preserve(r#"{"kind":""}"#), None),
        [
            format!("{at}[r].default.apiVersion: Required value"),
            format!(r#"{at}[r].default.kind: Invalid value: "": must not be empty"#),
        ]
    );
    assert_eq!(
        errors(&preserve(r#"{"apiVersion":"a/b/c","kind":"Foo_Bar"}"#), None),
        [
            format!(r#"{at}[r].default.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c"#),
            format!(
                r#"{at}[r].default.kind: Invalid value: "Foo_Bar": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#
            ),
        ]
    );
    // Coercion stops at the first that is not a string.
    assert_eq!(
        errors(&preserve(r#"{"apiVersion":1,"kind":"X"}"#), None),
        [format!(
            "{at}[r].default.apiVersion: Invalid value: 1: must be a string"
        )]
    );
    // Then pruning and kube-openapi, as for any default; `apiVersion` and `kind` are kept.
    let typed = |properties: &str, default: &str| {
        format!(r#"{{"r":{{{EMBEDDED},"properties":{properties},"default":{default}}}}}"#)
    };
    assert_eq!(
        errors(
            &typed(
                r#"{"spec":{"type":"object","properties":{"y":{"type":"string"}}}}"#,
                r#"{"apiVersion":"v1","kind":"Pod","spec":{"x":1}}"#
            ),
            None
        ),
        [format!(
            r#"{at}[r].default: Invalid value: {{"apiVersion":"v1","kind":"Pod","spec":{{"x":1}}}}: must not have unknown fields"#
        )]
    );
    let integer = r#"{"n":{"type":"integer"}}"#;
    assert_eq!(
        errors(&typed(integer, r#"{"apiVersion":"v1","kind":"Pod","n":"str"}"#), None),
        [format!(
            r#"{at}[r].default.n: Invalid value: "string": n in body must be of type integer: "string""#
        )]
    );
    // kube-openapi is not reached when the object-meta steps refuse it.
    assert_eq!(
        errors(&typed(integer, r#"{"n":"str"}"#), None),
        [
            format!("{at}[r].default.apiVersion: Required value"),
            format!("{at}[r].default.kind: Required value"),
        ]
    );
    // An embedded resource inside a default, at its index.
    assert_eq!(
        errors(
            &format!(
                r#"{{"l":{{"type":"array","items":{{{EMBEDDED},"x-kubernetes-preserve-unknown-fields":true}},"default":[{{"kind":"K"}}]}}}}"#
            ),
            None
        ),
        [format!("{at}[l].default[0].apiVersion: Required value")]
    );
    // Valid, and not followed: `metadata` (decoded, rewritten and validated first), and two
    // values coercion may stop at first.
    for quiet in [
        preserve(r#"{"apiVersion":"v1","kind":"Pod"}"#),
        preserve(r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"}}"#),
        preserve(r#"{"apiVersion":1,"kind":2}"#),
    ] {
        assert!(errors(&quiet, None).is_empty(), "{quiet}");
    }
}
