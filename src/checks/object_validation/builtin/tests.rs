use super::*;
use crate::checks::object_validation::schema::{Components, Schema};
use crate::checks::object_validation::validate::{Options, validate};
use crate::generated::builtin_resources;
use crate::json::Canonical;
use std::collections::BTreeSet;

/// The newest minor the table has documents of.
fn newest() -> u32 {
    *document_minors().end()
}

/// The strings of an array node.
fn strings<'n>(node: Option<&'n Node<'static>>) -> Vec<&'n str> {
    match node {
        Some(Node::Array(items)) => items.iter().filter_map(Node::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The schema a member's schema references, in either form (`$ref`, or `allOf: [{$ref}]`).
fn target<'s>(schema: &'s BuiltinSchema, member: &Node<'static>) -> &'s Node<'static> {
    let reference = member
        .get("$ref")
        .or_else(|| match member.get("allOf") {
            Some(Node::Array(all)) => all.first().and_then(|first| first.get("$ref")),
            _ => None,
        })
        .and_then(Node::as_str)
        .unwrap_or_else(|| panic!("no reference in {member:?}"));
    schema
        .resolve(reference)
        .unwrap_or_else(|| panic!("{reference} unresolved"))
}

/// The built-in kinds of k8s-openapi's newest version (`crate::generated::KUBERNETES_VERSION`)
/// whose group-version the newest documents have but not the kind: added after those documents.
const NEWER_THAN_THE_DOCUMENTS: &[&str] = &[
    "certificates.k8s.io/v1/ClusterTrustBundle",
    "resource.k8s.io/v1/DeviceTaintRule",
    "resource.k8s.io/v1beta2/DeviceTaintRule",
    "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy",
    "admissionregistration.k8s.io/v1/MutatingAdmissionPolicyBinding",
    "certificates.k8s.io/v1/PodCertificateRequest",
    "resource.k8s.io/v1alpha3/ResourcePoolStatusRequest",
];

#[test]
fn every_builtin_kind_the_documents_cover_has_a_schema_at_the_newest_minor() {
    let minor = newest();
    let served: BTreeSet<&str> = kinds(minor).map(|(api_version, _)| api_version).collect();
    let mut checked = 0;
    let mut missing = Vec::new();
    for resource in builtin_resources() {
        let api_version = match resource.group {
            "" => resource.version.to_string(),
            group => format!("{group}/{}", resource.version),
        };
        // Only the group-versions the documents have, and only objects the API server stores
        // (a resource with a plural of its own; subresources and discovery documents have none).
        if !served.contains(api_version.as_str()) || resource.subresource || resource.plural.is_empty() {
            continue;
        }
        let Some(found) = schema(&api_version, resource.kind, minor) else {
            missing.push(format!("{api_version}/{}", resource.kind));
            continue;
        };
        assert_eq!(
            found.root().at(&["properties", "kind"]).map(|_| ()),
            Some(()),
            "{api_version} {}",
            resource.kind
        );
        checked += 1;
    }
    assert!(checked > 60, "only {checked} built-in kinds checked");
    assert_eq!(
        missing, NEWER_THAN_THE_DOCUMENTS,
        "built-in kinds without a schema at 1.{minor}"
    );
    // Only a k8s-openapi newer than the documents may have kinds they lack.
    let table_minor: u32 = crate::generated::KUBERNETES_VERSION[2..].parse().unwrap();
    assert!(missing.is_empty() || table_minor > minor, "{table_minor}");
}

#[test]
fn a_deployment_resolves_through_pod_spec_to_the_container_port_protocol_enum() {
    for minor in document_minors() {
        let deployment = schema("apps/v1", "Deployment", minor).expect("Deployment");
        assert_eq!(deployment.name(), "io.k8s.api.apps.v1.Deployment");
        assert_eq!(deployment.minor(), minor);
        let spec = target(&deployment, deployment.root().at(&["properties", "spec"]).unwrap());
        let template = target(&deployment, spec.at(&["properties", "template"]).unwrap());
        let pod_spec = target(&deployment, template.at(&["properties", "spec"]).unwrap());
        let containers = pod_spec.at(&["properties", "containers"]).unwrap();
        assert_eq!(containers.get("type").and_then(Node::as_str), Some("array"));
        assert_eq!(
            containers.get("x-kubernetes-list-type").and_then(Node::as_str),
            (minor >= 30).then_some("map"),
            "1.{minor}"
        );
        let container = target(&deployment, containers.get("items").unwrap());
        assert_eq!(strings(container.get("required")), ["name", "image"], "1.{minor}");
        let ports = container.at(&["properties", "ports"]).unwrap();
        let port = target(&deployment, ports.get("items").unwrap());
        let protocol = port.at(&["properties", "protocol"]).unwrap();
        assert_eq!(strings(protocol.get("enum")), ["SCTP", "TCP", "UDP"], "1.{minor}");
        assert_eq!(protocol.get("default").and_then(Node::as_str), Some("TCP"));
        // The description is gone, and so is every keyword validation does not read.
        assert!(protocol.get("description").is_none() && pod_spec.get("description").is_none());
        // Only what the kind reaches: no Service, no CRD.
        assert!(deployment.resolve("io.k8s.api.core.v1.ServiceSpec").is_none());
        assert!(
            deployment
                .components()
                .contains_key("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
        );
    }
}

#[test]
fn kubectl_validates_corrections_are_applied() {
    let deployment = schema("apps/v1", "Deployment", newest()).unwrap();
    // IntOrString is x-kubernetes-int-or-string, as the API server's structural schemas have it.
    let int_or_string = deployment.resolve("#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString");
    assert_eq!(
        int_or_string.map(|node| Canonical(node).to_string()),
        Some(r#"{"x-kubernetes-int-or-string":true}"#.to_string())
    );
    // Time accepts null, and a member of that type has no `{}` default.
    let time = deployment.resolve("io.k8s.apimachinery.pkg.apis.meta.v1.Time").unwrap();
    assert_eq!(time.get("nullable").and_then(Node::as_bool), Some(true));
    let meta = deployment
        .resolve("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
        .unwrap();
    let created = meta.at(&["properties", "creationTimestamp"]).unwrap();
    assert!(created.get("default").is_none(), "{created:?}");
    // A built-in byte string also accepts "".
    let secret = schema("v1", "Secret", newest()).unwrap();
    let data = secret
        .root()
        .at(&["properties", "data", "additionalProperties"])
        .unwrap();
    assert_eq!(
        Canonical(data).to_string(),
        r#"{"allOf":[{"anyOf":[{"format":"byte"},{"maxLength":0}]}],"type":"string"}"#
    );
}

#[test]
fn kinds_removed_in_a_minor_are_absent_after_it_and_newer_minors_read_the_newest() {
    assert!(has_schema("policy/v1beta1", "PodSecurityPolicy", 24));
    assert!(schema("policy/v1beta1", "PodSecurityPolicy", 24).is_some());
    assert!(!has_schema("policy/v1beta1", "PodSecurityPolicy", 25));
    assert!(schema("policy/v1beta1", "PodSecurityPolicy", 25).is_none());
    assert!(has_schema("flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema", 28));
    assert!(!has_schema("flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema", 29));
    assert!(!has_schema("flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema", 37));
    // Lists, custom resources and unknown versions have none.
    assert!(!has_schema("v1", "PodList", newest()) && !has_schema("apps/v1", "Pod", newest()));
    assert!(schema("cert-manager.io/v1", "Certificate", newest()).is_none());
    // A minor past the newest document reads the newest, one before the oldest the oldest.
    let newest_pod = schema("v1", "Pod", newest()).unwrap();
    let later_pod = schema("v1", "Pod", newest() + 2).unwrap();
    assert_eq!(later_pod.minor(), newest());
    assert_eq!(
        Canonical(later_pod.root()).to_string(),
        Canonical(newest_pod.root()).to_string()
    );
    assert_eq!(schema("v1", "Pod", 16).unwrap().minor(), *document_minors().start());
    assert_eq!(*document_minors().start(), 24);
}

/// Every row is well formed and sorted, the ranges of a key never overlap, every definition
/// parses, and at every minor each kind's root and every reference it reaches are there.
#[test]
fn the_table_is_whole() {
    let minors = document_minors();
    assert!(*minors.start() >= 23 && minors.start() < minors.end(), "{minors:?}");
    let rows: Vec<_> = ROW_STARTS.iter().map(|&start| line_at(start)).collect();
    let body = TABLE.find("\n\n").unwrap() + 2;
    assert_eq!(rows.len(), TABLE[body..].lines().count(), "the index holds every row");
    let mut previous: Option<(&str, u32)> = None;
    for line in &rows {
        let (key, from, to, value) = parse_row(line).unwrap_or_else(|| panic!("bad row {line}"));
        assert!(from <= to && minors.contains(&from) && minors.contains(&to), "{line}");
        if let Some((previous_key, previous_to)) = previous {
            assert!(previous_key <= key, "unsorted at {key}");
            assert!(previous_key != key || previous_to < from, "overlapping ranges of {key}");
        }
        previous = Some((key, to));
        if !key.contains('/') {
            let node = json::read(value, Everything, MAX_DEPTH).unwrap_or_else(|e| panic!("{key}: {e}"));
            assert!(node.as_object().is_some(), "{key}");
        }
    }
    let mut reached = 0;
    for minor in minors {
        for (api_version, kind) in kinds(minor) {
            let found = schema(api_version, kind, minor);
            let found = found.unwrap_or_else(|| panic!("1.{minor} {api_version} {kind} does not resolve"));
            reached += found.components().len();
            for (name, definition) in found.components() {
                let text = Canonical(definition).to_string();
                assert!(!text.contains("\"@minors\""), "1.{minor} {name}: {text}");
            }
        }
    }
    assert!(reached > 10_000, "{reached}");
}

/// The generator run again on the source gives the committed table byte for byte, when the
/// source is at hand (`KUBECTL_VALIDATE`: a clone or bare mirror of
/// kubernetes-sigs/kubectl-validate at the header's commit).
#[test]
fn the_generator_reproduces_the_table() {
    let Some(source) = std::env::var_os("KUBECTL_VALIDATE") else {
        println!(
            "not regenerating builtin_schemas.tsv: KUBECTL_VALIDATE (a clone of kubernetes-sigs/kubectl-validate) is not set; the_table_is_whole checks its integrity"
        );
        return;
    };
    let commit = TABLE
        .lines()
        .find_map(|line| line.strip_prefix("# kubernetes-sigs/kubectl-validate "))
        .and_then(|rest| rest.split(' ').next())
        .expect("the header names the commit");
    let root = env!("CARGO_MANIFEST_DIR");
    let output = std::process::Command::new("python3")
        .arg(format!("{root}/tools/derive-builtin-schemas.py"))
        .arg(&source)
        .args(["--rev", commit])
        .output()
        .expect("run python3");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(
        output.stdout == TABLE.as_bytes(),
        "tools/derive-builtin-schemas.py gives another table"
    );
}

/// A kind's schema compiled whole ([`schema`], every definition it reaches) and compiled with
/// its definitions deferred ([`root`], [`definition`]), as object-validation compiles it.
fn whole_and_deferred(api_version: &str, kind: &str, minor: u32) -> (BuiltinSchema, Schema, Schema) {
    let found = schema(api_version, kind, minor).unwrap_or_else(|| panic!("1.{minor} {api_version} {kind}"));
    let whole = Schema::compile_with(found.root(), Components::Map(found.components()), minor)
        .unwrap_or_else(|e| panic!("1.{minor} {api_version} {kind}: {e}"));
    let (name, root) = root(api_version, kind, minor).unwrap();
    assert_eq!(name, found.name());
    let deferred = Schema::compile_deferred(&root, Box::new(move |name: &str| definition(name, minor)), minor)
        .unwrap_or_else(|e| panic!("1.{minor} {api_version} {kind}: {e}"));
    (found, whole, deferred)
}

/// Every definition of every kind compiles (a deferred definition that would not stands for a
/// schema that accepts anything), and a deferred schema resolved everywhere is the whole one:
/// as many nodes, each definition compiled once.
#[test]
fn every_kind_compiles_whole_and_deferred_to_the_same_arena() {
    let minors = document_minors();
    for minor in [*minors.start(), 30, *minors.end()] {
        for (api_version, kind) in kinds(minor) {
            let (found, whole, deferred) = whole_and_deferred(api_version, kind, minor);
            assert_eq!(deferred.definitions_compiled(), 0, "{kind}: nothing reached yet");
            let mut index = 0;
            while index < deferred.len() {
                deferred.resolve(index);
                index += 1;
            }
            assert_eq!(deferred.len(), whole.len(), "1.{minor} {api_version} {kind}");
            // Every definition but the root, which is compiled with the schema (and again only
            // where one of its definitions refers back to it, as the whole schema does).
            let compiled = deferred.definitions_compiled();
            let reached = found.components().len();
            assert!(
                compiled + 1 == reached || compiled == reached,
                "1.{minor} {kind}: {compiled} of {reached}"
            );
        }
    }
}

/// A Deployment's judgement compiles the definitions its fields go into, not the 120 its root
/// reaches, and finds what the whole schema finds.
#[test]
fn a_deployments_judgement_compiles_only_the_definitions_it_reaches() {
    let deployment = json::read(
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"app":"web"}},
        "spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},
        "spec":{"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":80,"protocol":"udp"}],
        "resources":{"limits":{"cpu":"500m"}},"colour":"blue"}]}}}}"#,
        Everything,
        MAX_DEPTH,
    )
    .unwrap();
    let options = Options {
        skip_status: true,
        unknown_fields: true,
        open_empty_objects: true,
        as_written: false,
        embedded_judged: false,
    };
    let (found, whole, deferred) = whole_and_deferred("apps/v1", "Deployment", newest());
    let expected = validate(&whole, &deployment, None, &options);
    let rendered: Vec<String> = expected.iter().map(ToString::to_string).collect();
    assert_eq!(
        rendered,
        [
            r#"unknown field "spec.template.spec.containers[0].colour""#,
            r#"spec.template.spec.containers[0].ports[0].protocol: Unsupported value: "udp": supported values: "SCTP", "TCP", "UDP""#,
        ],
        "{expected:#?}"
    );
    assert_eq!(validate(&deferred, &deployment, None, &options), expected);
    let compiled = deferred.definitions_compiled();
    let reached = found.components().len();
    assert!(reached >= 100, "{reached}");
    assert!(
        compiled > 5 && compiled * 4 < reached,
        "{compiled} of {reached} definitions compiled"
    );
    assert!(
        deferred.len() * 4 < whole.len(),
        "{} of {} nodes",
        deferred.len(),
        whole.len()
    );
    // Judged again, nothing more is compiled.
    assert_eq!(validate(&deferred, &deployment, None, &options), expected);
    assert_eq!(deferred.definitions_compiled(), compiled);
}
