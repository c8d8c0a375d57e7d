//! What the API server adds to an object it stores, for the live forms of the corpus test: the
//! values Kubernetes' defaulting functions fill in (`SetDefaults_*` in kubernetes/kubernetes
//! `pkg/apis/<group>/<version>/defaults.go`, and the `+default=` tags of `k8s.io/api`), what the
//! registry and the admission plugins of a default cluster write on create, what Go's
//! `encoding/json` writes for a struct member the manifest left out, and quantities in their
//! canonical form. Only values are added or rewritten where the API server does so; nothing the
//! manifest set is removed. [`fill`] counts what it changed, so a test can tell it did something.
//!
//! Filled, by kind and source (kubernetes/kubernetes unless named):
//! - every pod template (Deployment, DaemonSet, StatefulSet, ReplicaSet, ReplicationController,
//!   Job, CronJob's job template, PodTemplate) and Pod: `SetDefaults_PodSpec` (dnsPolicy,
//!   restartPolicy, securityContext `{}`, terminationGracePeriodSeconds, schedulerName);
//!   `SetDefaults_Container` (imagePullPolicy by the image's tag, terminationMessagePath and
//!   Policy); `+default="TCP"` of ContainerPort's protocol; `SetDefaults_Probe` (timeout, period,
//!   thresholds) and `SetDefaults_HTTPGetAction` (path, scheme) in probes and lifecycle handlers,
//!   `+default=""` of GRPCAction's service; `SetDefaults_ObjectFieldSelector` (fieldRef's
//!   apiVersion); `SetDefaults_Volume` (a volume without a source is an emptyDir),
//!   `SetDefaults_{Secret,ConfigMap,DownwardAPI,Projected}VolumeSource` (defaultMode 420),
//!   `SetDefaults_ServiceAccountTokenProjection` (expirationSeconds),
//!   `SetDefaults_HostPathVolumeSource` (type `""`), `SetDefaults_PersistentVolumeClaimSpec` in
//!   ephemeral volumes (volumeMode); `serviceAccount` written beside `serviceAccountName`
//!   (`pkg/apis/core/v1/conversion.go`); a container's `resources: {}` and a resourceFieldRef's
//!   `divisor: "0"` (struct members `encoding/json` always writes);
//! - Pods only: `SetDefaults_Pod` (requests from limits, enableServiceLinks, host ports under
//!   hostNetwork), the ServiceAccount admission plugin (`plugin/pkg/admission/serviceaccount`:
//!   serviceAccountName `default`, the `kube-api-access-*` projected volume and its mount in every
//!   container), DefaultTolerationSeconds (the not-ready and unreachable tolerations), Priority
//!   (priority 0 without a class);
//! - `pkg/apis/apps/v1/defaults.go`: `SetDefaults_Deployment` (replicas, strategy, revision
//!   history, progress deadline), `SetDefaults_DaemonSet` (updateStrategy, revision history),
//!   `SetDefaults_StatefulSet` (podManagementPolicy, updateStrategy and partition, PVC retention
//!   policy, replicas, revision history; each volumeClaimTemplate's volumeMode and
//!   `status.phase`), `SetDefaults_ReplicaSet`; ReplicationController's `+default=1` replicas and
//!   `SetDefaults_ReplicationController`'s selector;
//! - `pkg/apis/batch/v1/defaults.go`: `SetDefaults_Job` (completions, parallelism, backoffLimit,
//!   completionMode, suspend, labels) and the Job strategy's selector and template labels
//!   (`pkg/registry/batch/job/strategy.go`); `SetDefaults_CronJob`;
//! - `pkg/apis/core/v1/defaults.go` `SetDefaults_Service` (sessionAffinity, type, ports' protocol
//!   and targetPort, externalTrafficPolicy, internalTrafficPolicy,
//!   allocateLoadBalancerNodePorts) and the allocator (`pkg/registry/core/service/storage/alloc.go`:
//!   clusterIP, clusterIPs, ipFamilies, ipFamilyPolicy, nodePorts; one IPv4 cluster), with
//!   `status: {loadBalancer: {}}`; `SetDefaults_Secret` (type), `SetDefaults_PersistentVolume`,
//!   `SetDefaults_PersistentVolumeClaim(Spec)`, `SetDefaults_Namespace` (its name label) and the
//!   namespace strategy's `kubernetes` finalizer and Active phase;
//! - `pkg/apis/networking/v1/defaults.go` (NetworkPolicy's policyTypes and ports' protocol,
//!   IngressClass's parameters scope; an Ingress's `status: {loadBalancer: {}}`),
//!   `pkg/apis/rbac/v1/defaults.go` (roleRef's and subjects' apiGroup),
//!   `pkg/apis/scheduling/v1/defaults.go` (preemptionPolicy), `pkg/apis/storage/v1/defaults.go`
//!   (StorageClass's reclaimPolicy and volumeBindingMode; CSIDriver's attachRequired,
//!   podInfoOnMount, storageCapacity, fsGroupPolicy, volumeLifecycleModes, requiresRepublish),
//!   `pkg/apis/admissionregistration/v1/defaults.go` (each webhook's failurePolicy, matchPolicy,
//!   selectors, timeoutSeconds 10 as `k8s.io/api` documents it for v1, reinvocationPolicy; rules'
//!   scope; the service's port), `pkg/apis/autoscaling/v2/defaults.go` (minReplicas, the default
//!   CPU metric, a behavior's scale-up and scale-down rules);
//! - `SetDefaults_ResourceList` and Go's `resource.Quantity`: every quantity of a resource list,
//!   an emptyDir's sizeLimit, a PersistentVolume's capacity, a resourceFieldRef's divisor, written
//!   back in the form the API server stores, taken from `stored-quantities.tsv` and never from
//!   the check's own quantity model (which would make the test circular): each row is either
//!   asserted by k8s.io/apimachinery's `pkg/api/resource/quantity_test.go` or, for the corpus's
//!   plain quantities (`100m`, `128Mi`), given by the canonical-form rule of `Quantity`'s doc
//!   comment, held first to every asserted row it applies to (`tools/derive-quantity-table.py`,
//!   whose header names the commit). A quantity the table lacks is [`Filled::unknown`].
//!
//! The status of a new object is what Go writes for its zero value (`{}`; the counters without
//! `omitempty` of a DaemonSet's, StatefulSet's, ReplicaSet's and HPA's status). Left out: status a
//! controller writes later, `generation` and `managedFields` (metadata the check never compares),
//! and defaults behind alpha feature gates.

use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::LazyLock;

/// What [`fill`] changed in one object: values added and quantities rewritten.
#[derive(Debug, Default, Clone)]
pub struct Filled {
    /// Values added where the manifest had none.
    pub added: usize,
    /// Quantities written back in another form than the manifest's.
    pub quantities: usize,
    /// Quantities whose stored form was taken from the table (rewritten or not).
    pub looked_up: usize,
    /// Quantities the table has no stored form for, as JSON (left as the manifest wrote them).
    pub unknown: Vec<String>,
}

/// `stored-quantities.tsv`: the form the API server stores each quantity in, by the JSON value
/// the manifest holds (a quoted string or a bare number).
static STORED: LazyLock<HashMap<String, String>> = LazyLock::new(|| {
    include_str!("stored-quantities.tsv")
        .lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| {
            let mut columns = line.split('\t');
            let (Some(value), Some(stored)) = (columns.next(), columns.next()) else {
                panic!("stored-quantities.tsv: a row without two columns: {line:?}");
            };
            (value.to_string(), stored.to_string())
        })
        .collect()
});

/// The stored form of the quantity the manifest writes as the JSON value `value`, counted.
fn stored(value: &Value, f: &mut Filled) -> Option<&'static str> {
    let key = value.to_string();
    match STORED.get(&key) {
        Some(stored) => {
            f.looked_up += 1;
            Some(stored)
        }
        None => {
            f.unknown.push(key);
            None
        }
    }
}

/// Fills in `object` (a manifest of a built-in kind, as a JSON object) what the API server adds
/// when it stores it; other kinds are left as they are.
pub fn fill(object: &mut Value) -> Filled {
    let mut filled = Filled::default();
    let api_version = object["apiVersion"].as_str().unwrap_or_default().to_string();
    let kind = object["kind"].as_str().unwrap_or_default().to_string();
    let name = object["metadata"]["name"].as_str().unwrap_or_default().to_string();
    let Some(root) = object.as_object_mut() else {
        return filled;
    };
    let f = &mut filled;
    match (api_version.as_str(), kind.as_str()) {
        ("v1", "Pod") => {
            let spec = entry(root, "spec", f);
            pod_spec(spec, f);
            pod(spec, f);
        }
        ("v1", "PodTemplate") => template(root, f),
        ("v1", "ReplicationController") => {
            let spec = entry(root, "spec", f);
            put(spec, "replicas", json!(1), f);
            if let Some(labels) = spec.get("template").and_then(|t| t["metadata"].get("labels")).cloned() {
                put(spec, "selector", labels.clone(), f);
                let metadata = entry(root, "metadata", f);
                put(metadata, "labels", labels, f);
            }
            template(entry(root, "spec", f), f);
        }
        ("apps/v1", "Deployment") => {
            let spec = entry(root, "spec", f);
            put(spec, "replicas", json!(1), f);
            let strategy = entry(spec, "strategy", f);
            put(strategy, "type", json!("RollingUpdate"), f);
            if strategy["type"] == "RollingUpdate" {
                let rolling = entry(strategy, "rollingUpdate", f);
                put(rolling, "maxUnavailable", json!("25%"), f);
                put(rolling, "maxSurge", json!("25%"), f);
            }
            put(spec, "revisionHistoryLimit", json!(10), f);
            put(spec, "progressDeadlineSeconds", json!(600), f);
            template(spec, f);
            put(root, "status", json!({}), f);
        }
        ("apps/v1", "DaemonSet") => {
            let spec = entry(root, "spec", f);
            let strategy = entry(spec, "updateStrategy", f);
            put(strategy, "type", json!("RollingUpdate"), f);
            if strategy["type"] == "RollingUpdate" {
                let rolling = entry(strategy, "rollingUpdate", f);
                put(rolling, "maxUnavailable", json!(1), f);
                put(rolling, "maxSurge", json!(0), f);
            }
            put(spec, "revisionHistoryLimit", json!(10), f);
            template(spec, f);
            put(
                root,
                "status",
                json!({"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0}),
                f,
            );
        }
        ("apps/v1", "StatefulSet") => {
            let spec = entry(root, "spec", f);
            put(spec, "podManagementPolicy", json!("OrderedReady"), f);
            let strategy = entry(spec, "updateStrategy", f);
            if absent(strategy, "type") {
                put(strategy, "type", json!("RollingUpdate"), f);
                entry(strategy, "rollingUpdate", f);
            }
            if strategy["type"] == "RollingUpdate"
                && let Some(Value::Object(rolling)) = strategy.get_mut("rollingUpdate")
            {
                put(rolling, "partition", json!(0), f);
            }
            let retention = entry(spec, "persistentVolumeClaimRetentionPolicy", f);
            put(retention, "whenDeleted", json!("Retain"), f);
            put(retention, "whenScaled", json!("Retain"), f);
            put(spec, "replicas", json!(1), f);
            put(spec, "revisionHistoryLimit", json!(10), f);
            for claim in items(spec, "volumeClaimTemplates") {
                claim_spec(entry(claim, "spec", f), f);
                put(entry(claim, "status", f), "phase", json!("Pending"), f);
            }
            template(spec, f);
            put(root, "status", json!({"replicas": 0, "availableReplicas": 0}), f);
        }
        ("apps/v1", "ReplicaSet") => {
            let spec = entry(root, "spec", f);
            put(spec, "replicas", json!(1), f);
            template(spec, f);
            put(root, "status", json!({"replicas": 0}), f);
        }
        ("batch/v1", "Job") => {
            let spec = entry(root, "spec", f);
            if absent(spec, "completions") && absent(spec, "parallelism") {
                put(spec, "completions", json!(1), f);
            }
            put(spec, "parallelism", json!(1), f);
            put(spec, "backoffLimit", json!(6), f);
            put(spec, "completionMode", json!("NonIndexed"), f);
            put(spec, "suspend", json!(false), f);
            // The Job strategy labels its pods and selects them by the Job's uid.
            let selector = json!({"matchLabels": {"batch.kubernetes.io/controller-uid": UID}});
            put(spec, "selector", selector, f);
            let template_labels = entry(entry(entry(spec, "template", f), "metadata", f), "labels", f);
            for (key, value) in [
                ("batch.kubernetes.io/controller-uid", UID),
                ("batch.kubernetes.io/job-name", name.as_str()),
                ("controller-uid", UID),
                ("job-name", name.as_str()),
            ] {
                put(template_labels, key, json!(value), f);
            }
            let labels = Value::Object(template_labels.clone());
            template(spec, f);
            let metadata = entry(root, "metadata", f);
            put(metadata, "labels", labels, f);
            put(root, "status", json!({}), f);
        }
        ("batch/v1", "CronJob") => {
            let spec = entry(root, "spec", f);
            put(spec, "concurrencyPolicy", json!("Allow"), f);
            put(spec, "suspend", json!(false), f);
            put(spec, "successfulJobsHistoryLimit", json!(3), f);
            put(spec, "failedJobsHistoryLimit", json!(1), f);
            let job = entry(entry(spec, "jobTemplate", f), "spec", f);
            template(job, f);
            put(root, "status", json!({}), f);
        }
        ("v1", "Service") => service(root, f),
        ("v1", "Secret") => put(root, "type", json!("Opaque"), f),
        ("v1", "Namespace") => {
            let labels = entry(entry(root, "metadata", f), "labels", f);
            put(labels, "kubernetes.io/metadata.name", json!(name), f);
            put(entry(root, "spec", f), "finalizers", json!(["kubernetes"]), f);
            put(entry(root, "status", f), "phase", json!("Active"), f);
        }
        ("v1", "PersistentVolume") => {
            let spec = entry(root, "spec", f);
            put(spec, "persistentVolumeReclaimPolicy", json!("Retain"), f);
            put(spec, "volumeMode", json!("Filesystem"), f);
            if let Some(Value::Object(capacity)) = spec.get_mut("capacity") {
                canonical_list(capacity, f);
            }
            put(entry(root, "status", f), "phase", json!("Pending"), f);
        }
        ("v1", "PersistentVolumeClaim") => {
            claim_spec(entry(root, "spec", f), f);
            put(entry(root, "status", f), "phase", json!("Pending"), f);
        }
        ("networking.k8s.io/v1", "NetworkPolicy") => {
            let spec = entry(root, "spec", f);
            if spec
                .get("policyTypes")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty)
            {
                let egress = spec
                    .get("egress")
                    .and_then(Value::as_array)
                    .is_some_and(|e| !e.is_empty());
                let types = if egress {
                    json!(["Ingress", "Egress"])
                } else {
                    json!(["Ingress"])
                };
                spec.insert("policyTypes".into(), types);
                f.added += 1;
            }
            for direction in ["ingress", "egress"] {
                for rule in items(spec, direction) {
                    for port in items(rule, "ports") {
                        put(port, "protocol", json!("TCP"), f);
                    }
                }
            }
        }
        ("networking.k8s.io/v1", "IngressClass") => {
            if let Some(Value::Object(parameters)) = root.get_mut("spec").and_then(|s| s.get_mut("parameters")) {
                put(parameters, "scope", json!("Cluster"), f);
            }
        }
        ("networking.k8s.io/v1", "Ingress") => put(root, "status", json!({"loadBalancer": {}}), f),
        ("rbac.authorization.k8s.io/v1", "RoleBinding" | "ClusterRoleBinding") => {
            put(
                entry(root, "roleRef", f),
                "apiGroup",
                json!("rbac.authorization.k8s.io"),
                f,
            );
            for subject in items(root, "subjects") {
                let group = match subject["kind"].as_str() {
                    Some("User" | "Group") => "rbac.authorization.k8s.io",
                    _ => "",
                };
                if absent(subject, "apiGroup") && !group.is_empty() {
                    put(subject, "apiGroup", json!(group), f);
                }
            }
        }
        ("scheduling.k8s.io/v1", "PriorityClass") => put(root, "preemptionPolicy", json!("PreemptLowerPriority"), f),
        ("storage.k8s.io/v1", "StorageClass") => {
            put(root, "reclaimPolicy", json!("Delete"), f);
            put(root, "volumeBindingMode", json!("Immediate"), f);
        }
        ("storage.k8s.io/v1", "CSIDriver") => {
            let spec = entry(root, "spec", f);
            put(spec, "attachRequired", json!(true), f);
            put(spec, "podInfoOnMount", json!(false), f);
            put(spec, "storageCapacity", json!(false), f);
            put(spec, "fsGroupPolicy", json!("ReadWriteOnceWithFSType"), f);
            put(spec, "volumeLifecycleModes", json!(["Persistent"]), f);
            put(spec, "requiresRepublish", json!(false), f);
        }
        ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration") => {
            let mutating = kind.starts_with("Mutating");
            for webhook in items(root, "webhooks") {
                put(webhook, "failurePolicy", json!("Fail"), f);
                put(webhook, "matchPolicy", json!("Equivalent"), f);
                put(webhook, "namespaceSelector", json!({}), f);
                put(webhook, "objectSelector", json!({}), f);
                put(webhook, "timeoutSeconds", json!(10), f);
                if mutating {
                    put(webhook, "reinvocationPolicy", json!("Never"), f);
                }
                for rule in items(webhook, "rules") {
                    put(rule, "scope", json!("*"), f);
                }
                if let Some(Value::Object(service)) = webhook.get_mut("clientConfig").and_then(|c| c.get_mut("service"))
                {
                    put(service, "port", json!(443), f);
                }
            }
        }
        ("autoscaling/v2", "HorizontalPodAutoscaler") => {
            let spec = entry(root, "spec", f);
            put(spec, "minReplicas", json!(1), f);
            let cpu = json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]);
            if spec.get("metrics").and_then(Value::as_array).is_none_or(Vec::is_empty) {
                spec.insert("metrics".into(), cpu);
                f.added += 1;
            }
            if let Some(Value::Object(behavior)) = spec.get_mut("behavior") {
                let up = json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
                    {"type": "Pods", "value": 4, "periodSeconds": 15},
                    {"type": "Percent", "value": 100, "periodSeconds": 15}]});
                let down = json!({"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]});
                for (key, rules) in [("scaleUp", up), ("scaleDown", down)] {
                    let Value::Object(rules) = rules else { unreachable!() };
                    let have = entry(behavior, key, f);
                    for (member, value) in rules {
                        put(have, &member, value, f);
                    }
                }
            }
            put(root, "status", json!({"desiredReplicas": 0, "currentMetrics": null}), f);
        }
        _ => {}
    }
    filled
}

/// The uid the live forms carry.
pub const UID: &str = "0b6f3a9e-2c41-4d5e-9a87-5e1f6b2c8d04";

/// Whether `map` lacks `key` (or holds null or `""` there, which the API server reads as unset).
fn absent(map: &Map<String, Value>, key: &str) -> bool {
    match map.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::String(text)) => text.is_empty(),
        Some(_) => false,
    }
}

/// Sets `key` to `value` where the manifest left it unset.
fn put(map: &mut Map<String, Value>, key: &str, value: Value, filled: &mut Filled) {
    if absent(map, key) {
        map.insert(key.to_string(), value);
        filled.added += 1;
    }
}

/// The object at `key`, created (`{}`) when unset.
fn entry<'a>(map: &'a mut Map<String, Value>, key: &str, filled: &mut Filled) -> &'a mut Map<String, Value> {
    if !map.get(key).is_some_and(Value::is_object) {
        put(map, key, json!({}), filled);
    }
    match map.get_mut(key) {
        Some(Value::Object(inner)) => inner,
        // Only a manifest the API server refuses holds something else there.
        other => panic!("`{key}` is not an object: {other:?}"),
    }
}

/// The objects of the list at `key`.
fn items<'a>(map: &'a mut Map<String, Value>, key: &str) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    map.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

/// `spec.template` (a PodTemplateSpec) of a workload's `spec`, or of a PodTemplate.
fn template(spec: &mut Map<String, Value>, filled: &mut Filled) {
    if let Some(Value::Object(template)) = spec.get_mut("template")
        && let Some(Value::Object(pod)) = template.get_mut("spec")
    {
        pod_spec(pod, filled);
    }
}

/// `SetDefaults_PodSpec` and what it reaches: containers, volumes.
fn pod_spec(spec: &mut Map<String, Value>, f: &mut Filled) {
    put(spec, "dnsPolicy", json!("ClusterFirst"), f);
    put(spec, "restartPolicy", json!("Always"), f);
    put(spec, "securityContext", json!({}), f);
    put(spec, "terminationGracePeriodSeconds", json!(30), f);
    put(spec, "schedulerName", json!("default-scheduler"), f);
    // The v1 conversion writes the deprecated alias and the name from each other.
    if let Some(account) = spec
        .get("serviceAccountName")
        .filter(|a| a.as_str().is_some_and(|a| !a.is_empty()))
        .cloned()
    {
        put(spec, "serviceAccount", account, f);
    } else if let Some(account) = spec
        .get("serviceAccount")
        .filter(|a| a.as_str().is_some_and(|a| !a.is_empty()))
        .cloned()
    {
        put(spec, "serviceAccountName", account, f);
    }
    for list in ["containers", "initContainers", "ephemeralContainers"] {
        for c in items(spec, list) {
            container(c, f);
        }
    }
    for volume in items(spec, "volumes") {
        self::volume(volume, f);
    }
    for (key, quantities) in [("overhead", true), ("resources", false)] {
        match spec.get_mut(key) {
            Some(Value::Object(list)) if quantities => canonical_list(list, f),
            Some(Value::Object(resources)) => requirements(resources, f),
            _ => {}
        }
    }
}

/// `SetDefaults_Pod` and the admission plugins of a default cluster, on a Pod's spec.
fn pod(spec: &mut Map<String, Value>, f: &mut Filled) {
    for list in ["containers", "initContainers"] {
        for c in items(spec, list) {
            let resources = entry(c, "resources", f);
            if let Some(Value::Object(limits)) = resources.get("limits").cloned() {
                let requests = entry(resources, "requests", f);
                for (key, value) in limits {
                    put(requests, &key, value, f);
                }
            }
        }
    }
    put(spec, "enableServiceLinks", json!(true), f);
    if spec.get("hostNetwork") == Some(&json!(true)) {
        for list in ["containers", "initContainers"] {
            for c in items(spec, list) {
                for port in items(c, "ports") {
                    if let Some(number) = port.get("containerPort").cloned() {
                        put(port, "hostPort", number, f);
                    }
                }
            }
        }
    }
    if absent(spec, "priorityClassName") {
        put(spec, "priority", json!(0), f);
    }
    // The ServiceAccount admission plugin.
    put(spec, "serviceAccountName", json!("default"), f);
    put(spec, "serviceAccount", json!("default"), f);
    if spec.get("automountServiceAccountToken") != Some(&json!(false)) {
        let name = "kube-api-access-x7k2p";
        let volume = json!({"name": name, "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}});
        push(spec, "volumes", volume, f);
        let mount =
            json!({"name": name, "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"});
        for list in ["containers", "initContainers"] {
            for c in items(spec, list) {
                push(c, "volumeMounts", mount.clone(), f);
            }
        }
    }
    // DefaultTolerationSeconds.
    for taint in ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"] {
        let toleration = json!({"key": taint, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300});
        push(spec, "tolerations", toleration, f);
    }
}

/// Appends `item` to the list at `key` (created when unset).
fn push(map: &mut Map<String, Value>, key: &str, item: Value, f: &mut Filled) {
    put(map, key, json!([]), f);
    if let Some(Value::Array(list)) = map.get_mut(key) {
        list.push(item);
        f.added += 1;
    }
}

/// `SetDefaults_Container` and what a container holds: ports, probes, handlers, env.
fn container(c: &mut Map<String, Value>, f: &mut Filled) {
    let image = c.get("image").and_then(Value::as_str).unwrap_or_default();
    let policy = if image_tag(image) == "latest" {
        "Always"
    } else {
        "IfNotPresent"
    };
    put(c, "imagePullPolicy", json!(policy), f);
    put(c, "terminationMessagePath", json!("/dev/termination-log"), f);
    put(c, "terminationMessagePolicy", json!("File"), f);
    for port in items(c, "ports") {
        put(port, "protocol", json!("TCP"), f);
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(Value::Object(probe)) = c.get_mut(probe) {
            put(probe, "timeoutSeconds", json!(1), f);
            put(probe, "periodSeconds", json!(10), f);
            put(probe, "successThreshold", json!(1), f);
            put(probe, "failureThreshold", json!(3), f);
            handler(probe, f);
        }
    }
    if let Some(Value::Object(lifecycle)) = c.get_mut("lifecycle") {
        for hook in ["postStart", "preStop"] {
            if let Some(Value::Object(hook)) = lifecycle.get_mut(hook) {
                handler(hook, f);
            }
        }
    }
    for env in items(c, "env") {
        if let Some(Value::Object(source)) = env.get_mut("valueFrom") {
            selectors(source, f);
        }
    }
    // ResourceRequirements is a struct member: Go always writes it.
    let resources = entry(c, "resources", f);
    requirements(resources, f);
}

/// The tag of an image reference as the kubelet's parser reads it: `latest` when neither a tag
/// nor a digest is given.
fn image_tag(image: &str) -> &str {
    let (name, digest) = match image.split_once('@') {
        Some((name, _)) => (name, true),
        None => (image, false),
    };
    let last = name.rsplit('/').next().unwrap_or(name);
    match last.split_once(':') {
        Some((_, tag)) => tag,
        None if digest => "",
        None => "latest",
    }
}

/// A probe's or lifecycle hook's handler.
fn handler(handler: &mut Map<String, Value>, f: &mut Filled) {
    if let Some(Value::Object(get)) = handler.get_mut("httpGet") {
        put(get, "path", json!("/"), f);
        put(get, "scheme", json!("HTTP"), f);
    }
    if let Some(Value::Object(grpc)) = handler.get_mut("grpc")
        && !grpc.contains_key("service")
    {
        grpc.insert("service".into(), json!(""));
        f.added += 1;
    }
}

/// A fieldRef's apiVersion and a resourceFieldRef's divisor.
fn selectors(source: &mut Map<String, Value>, f: &mut Filled) {
    if let Some(Value::Object(field)) = source.get_mut("fieldRef") {
        put(field, "apiVersion", json!("v1"), f);
    }
    if let Some(Value::Object(resource)) = source.get_mut("resourceFieldRef") {
        // A zero Quantity is written as "0" (the member is a struct, not a pointer).
        put(resource, "divisor", json!("0"), f);
        if let Some(Value::String(divisor)) = resource.get_mut("divisor") {
            canonical(divisor, f);
        }
    }
}

/// A volume: its source's defaults.
fn volume(v: &mut Map<String, Value>, f: &mut Filled) {
    if v.keys().all(|key| key == "name") {
        v.insert("emptyDir".into(), json!({}));
        f.added += 1;
    }
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(Value::Object(source)) = v.get_mut(source) {
            put(source, "defaultMode", json!(420), f);
        }
    }
    if let Some(Value::Object(downward)) = v.get_mut("downwardAPI") {
        for item in items(downward, "items") {
            selectors(item, f);
        }
    }
    if let Some(Value::Object(projected)) = v.get_mut("projected") {
        for source in items(projected, "sources") {
            if let Some(Value::Object(token)) = source.get_mut("serviceAccountToken") {
                put(token, "expirationSeconds", json!(3600), f);
            }
            if let Some(Value::Object(downward)) = source.get_mut("downwardAPI") {
                for item in items(downward, "items") {
                    selectors(item, f);
                }
            }
        }
    }
    if let Some(Value::Object(host)) = v.get_mut("hostPath")
        && !host.contains_key("type")
    {
        host.insert("type".into(), json!(""));
        f.added += 1;
    }
    if let Some(Value::Object(empty)) = v.get_mut("emptyDir")
        && let Some(Value::String(limit)) = empty.get_mut("sizeLimit")
    {
        canonical(limit, f);
    }
    if let Some(Value::Object(ephemeral)) = v.get_mut("ephemeral")
        && let Some(Value::Object(template)) = ephemeral.get_mut("volumeClaimTemplate")
    {
        claim_spec(entry(template, "spec", f), f);
    }
}

/// `SetDefaults_PersistentVolumeClaimSpec`, and its quantities.
fn claim_spec(spec: &mut Map<String, Value>, f: &mut Filled) {
    put(spec, "volumeMode", json!("Filesystem"), f);
    if let Some(Value::Object(resources)) = spec.get_mut("resources") {
        requirements(resources, f);
    }
}

/// A ResourceRequirements' lists, canonical.
fn requirements(resources: &mut Map<String, Value>, f: &mut Filled) {
    for list in ["limits", "requests"] {
        if let Some(Value::Object(list)) = resources.get_mut(list) {
            canonical_list(list, f);
        }
    }
}

/// Every quantity of a resource list, as stored.
fn canonical_list(list: &mut Map<String, Value>, f: &mut Filled) {
    for value in list.values_mut() {
        match value {
            Value::String(text) => canonical(text, f),
            // A bare number is stored as a string.
            Value::Number(_) => {
                if let Some(stored) = stored(value, f) {
                    *value = json!(stored);
                    f.quantities += 1;
                }
            }
            _ => {}
        }
    }
}

/// A quantity's text, as stored.
fn canonical(text: &mut String, f: &mut Filled) {
    if let Some(stored) = stored(&Value::String(text.clone()), f)
        && stored != text
    {
        *text = stored.to_string();
        f.quantities += 1;
    }
}

/// `SetDefaults_Service` and the allocator's fields, for a single-stack IPv4 cluster.
fn service(root: &mut Map<String, Value>, f: &mut Filled) {
    let spec = entry(root, "spec", f);
    put(spec, "sessionAffinity", json!("None"), f);
    put(spec, "type", json!("ClusterIP"), f);
    let kind = spec["type"].as_str().unwrap_or_default().to_string();
    let node_ports = matches!(kind.as_str(), "NodePort" | "LoadBalancer");
    let mut next_node_port = 30080;
    for port in items(spec, "ports") {
        put(port, "protocol", json!("TCP"), f);
        let number = port.get("port").cloned().unwrap_or(json!(0));
        if matches!(port.get("targetPort"), None | Some(Value::Null)) || port["targetPort"] == json!(0) {
            port.insert("targetPort".into(), number);
            f.added += 1;
        }
        if node_ports {
            put(port, "nodePort", json!(next_node_port), f);
            next_node_port += 1;
        }
    }
    let external_ips = spec
        .get("externalIPs")
        .and_then(Value::as_array)
        .is_some_and(|ips| !ips.is_empty());
    if node_ports || (kind == "ClusterIP" && external_ips) {
        put(spec, "externalTrafficPolicy", json!("Cluster"), f);
    }
    if matches!(kind.as_str(), "ClusterIP" | "NodePort" | "LoadBalancer") {
        put(spec, "internalTrafficPolicy", json!("Cluster"), f);
    }
    if kind == "LoadBalancer" {
        put(spec, "allocateLoadBalancerNodePorts", json!(true), f);
    }
    if kind != "ExternalName" {
        let headless = spec.get("clusterIP") == Some(&json!("None"));
        let selectorless = spec
            .get("selector")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty);
        if headless && selectorless {
            put(spec, "ipFamilyPolicy", json!("RequireDualStack"), f);
            put(spec, "ipFamilies", json!(["IPv4", "IPv6"]), f);
        } else {
            put(spec, "ipFamilyPolicy", json!("SingleStack"), f);
            put(spec, "ipFamilies", json!(["IPv4"]), f);
        }
        put(spec, "clusterIP", json!("10.96.148.21"), f);
        let ip = spec["clusterIP"].clone();
        put(spec, "clusterIPs", json!([ip]), f);
    }
    put(root, "status", json!({"loadBalancer": {}}), f);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_tags_are_read_as_the_kubelet_reads_them() {
        assert_eq!(image_tag("nginx"), "latest");
        assert_eq!(image_tag("registry:5000/team/app"), "latest");
        assert_eq!(image_tag("registry:5000/team/app:1.2"), "1.2");
        assert_eq!(image_tag("app@sha256:abc"), "");
        assert_eq!(image_tag("app:latest@sha256:abc"), "latest");
    }

    #[test]
    fn a_deployment_gets_its_defaults_and_keeps_what_it_set() {
        let mut deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "web", "image": "nginx",
                "ports": [{"containerPort": 80}], "resources": {"limits": {"cpu": "1000m"}},
                "readinessProbe": {"httpGet": {"port": 80}, "periodSeconds": 5}}]}}}});
        let filled = fill(&mut deployment);
        assert!(
            filled.added > 10 && filled.quantities == 1 && filled.looked_up == 1,
            "{filled:?}"
        );
        assert!(filled.unknown.is_empty(), "{filled:?}");
        let spec = &deployment["spec"];
        assert_eq!(spec["replicas"], 3);
        assert_eq!(spec["strategy"]["rollingUpdate"]["maxSurge"], "25%");
        let container = &spec["template"]["spec"]["containers"][0];
        assert_eq!(container["imagePullPolicy"], "Always");
        assert_eq!(container["ports"][0]["protocol"], "TCP");
        assert_eq!(container["resources"]["limits"]["cpu"], "1");
        assert_eq!(container["readinessProbe"]["periodSeconds"], 5);
        assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/");
    }
}
