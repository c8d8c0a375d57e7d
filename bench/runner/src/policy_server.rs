//! `syncguard-bench policy-server` (`make bench-policy-server`): the modules in the engine users
//! run. Starts the policy-server binary named by the `POLICY_SERVER` environment variable on
//! 127.0.0.1 (plain HTTP) with three floors, the no-op module (accepts without reading), the
//! read floor (reads every byte of its payload and builds nothing: the least a check that looks
//! at the whole object can pay) and the SDK floor (a policy that reads its request as
//! Kubewarden's Rust SDK has one read it, then accepts), and every policy module (each check's
//! and the all-in-one), loaded from local files, and sends each the AdmissionReviews its webhook
//! rules (its metadata.yml's) would send it, from 4 concurrent clients (one kept-alive
//! connection each): a Deployment (metrics-server's, without drift), Kube-OVN's
//! `vpc-nat-gateways` CRD and the Prometheus operator's `prometheuses` CRD as CREATEs, that CRD's
//! UPDATE to a copy with one change deep in its schema, a Helm hook Job (Kyverno's
//! clean-reports), a ConfigMap with an owner's markers (k3s's CoreDNS) and a stored custom resource
//! of a large CRD as the audit scanner sends it (kube-prometheus's Prometheus, its CRD served by
//! the stand-in API server). Prints
//! p50 and p90 per request and the ratio of each p50 to the no-op module's on the same payload, against the goals
//! (a Deployment at most 1.15x, a CRD at most 1.2x). Without `POLICY_SERVER` it says so and
//! measures nothing.
//!
//! crd-kind-collision's lookup (`list_resources_all` of CustomResourceDefinitions) is answered as
//! in a cluster: policy-server reads a kubeconfig (`KUBECONFIG`) that points at a stand-in API
//! server the bench runs on 127.0.0.1 ([`crate::api_server`]), serving the 500 real CRDs of
//! `bench/real-crds` as a cluster holds them (managedFields, last-applied annotations, status);
//! policy-server's reflector lists and watches them, and masks them for the module.
//!
//! Beside p50 it prints what each request cost the server itself: its CPU time (all its threads)
//! and minor page faults per request, read from `/proc`, less sensitive than latency to what
//! else runs on the machine. Before starting policy-server (and without `POLICY_SERVER`) it
//! prints where a request's cost goes, measured in this process the way policy-server 1.36 runs
//! each admission (a fresh instance rehydrated from the module's `InstancePre`, waPC init, one
//! `validate`, the instance dropped; see [`in_process`]), against a reused instance.
//!
//! Last, when valgrind is installed, it counts the instructions the server executes per request
//! under callgrind ([`instructions`]): latency and CPU time move with whatever else the machine
//! runs (the no-op module's CPU per request moved by a fifth between two runs), instruction
//! counts do not; each is printed with its ratio to the no-op module's, to the SDK floor's (the
//! goals) and to the read floor's (the distance to the lower bound of a whole-object check).
//!
//! The all-in-one runs with crd-kind-collision disabled: its goal is set against the SDK floor,
//! which looks nothing up; crd-kind-collision's own module shows what the lookup costs. The
//! lookup floor runs twice, with object-validation's lookup of the audited custom resource and
//! with crd-kind-collision's list of CRDs (`crd-lookup-floor`), so that each of the two
//! context-aware checks is also printed less its lookups.

use anyhow::{Context, Result, anyhow, bail};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use serde::Deserialize;
use serde_json::{Value, json};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use syncguard_cli::evaluate;
use syncguard_cli::metadata::{self, Metadata, Rule};

use crate::api_server::ApiServer;
use syncguard_scan::cluster::OfflineCluster;

/// Arguments of `syncguard-bench policy-server`.
#[derive(clap::Args)]
pub struct PolicyServerArgs {
    /// Folder of the policies (each with annotated-policy.wasm and test_data/).
    #[arg(long, value_name = "DIR", default_value = "policies")]
    policies_dir: PathBuf,
    /// The no-op floor module (annotated by the bench, as policy-server requires).
    #[arg(long, value_name = "FILE", default_value = "bench/noop/policy.wasm")]
    floor: PathBuf,
    /// The SDK floor module: reads its request as Kubewarden's Rust SDK has a policy read it,
    /// then accepts (annotated by the bench like the no-op floor).
    #[arg(long, value_name = "FILE", default_value = "bench/sdk-floor/policy.wasm")]
    sdk_floor: PathBuf,
    /// The read floor module: reads every byte of its payload, builds nothing, then accepts
    /// (annotated by the bench like the no-op floor).
    #[arg(long, value_name = "FILE", default_value = "bench/read-floor/policy.wasm")]
    read_floor: PathBuf,
    /// The lookup floor module: makes the lookups object-validation makes for the audited
    /// custom resource, reads their answers through and accepts (annotated like the no-op floor).
    #[arg(long, value_name = "FILE", default_value = "bench/lookup-floor/policy.wasm")]
    lookup_floor: PathBuf,
    /// The real CRDs the stand-in API server serves (a gzipped JSON array, see
    /// bench/real-crds/build.py).
    #[arg(long, value_name = "FILE", default_value = "bench/real-crds/crds.json.gz")]
    real_crds: PathBuf,
    /// Where policies.yml, the annotated floor and policy-server's log go.
    #[arg(long, value_name = "DIR", default_value = "target/bench-policy-server")]
    work_dir: PathBuf,
    /// Concurrent clients.
    #[arg(long, value_name = "N", default_value_t = 4)]
    clients: usize,
    /// Timed requests per client, per policy and payload (after as many untimed ones as clients).
    #[arg(long, value_name = "N", default_value_t = 150)]
    requests: usize,
    /// Rounds over every policy and payload; each figure is the lowest p50 (and its p90) of
    /// the rounds, as `make bench` keeps the lowest of its sweeps on a shared machine.
    #[arg(long, value_name = "N", default_value_t = 2)]
    rounds: usize,
    /// Fresh requests (and calls on a reused instance) per policy and payload in the in-process
    /// breakdown printed first (no policy-server needed).
    #[arg(long, value_name = "N", default_value_t = 200)]
    in_process_calls: usize,
    /// Requests per policy and payload counted under valgrind's callgrind (0: none).
    #[arg(long, value_name = "N", default_value_t = 10)]
    instruction_requests: usize,
    /// Measure only these modules (policy folders, comma-separated; the floors are always
    /// measured, every ratio is set against them). Default: every module.
    #[arg(long, value_name = "IDS", value_delimiter = ',')]
    only: Vec<String>,
    /// Measure only the payloads whose label contains one of these words (comma-separated,
    /// case-insensitive: `deployment`, `kube-ovn`, `prometheus`...). Default: every payload.
    #[arg(long, value_name = "WORDS", value_delimiter = ',')]
    payloads: Vec<String>,
}

impl PolicyServerArgs {
    /// Whether the module `id` is measured (`--only`).
    fn measures(&self, id: &str) -> bool {
        is_floor(id)
            || self.only.is_empty()
            || self.only.iter().any(|only| only == id)
            || (id == ALL_IN_ONE && self.measures(WITHOUT_OBJECT_VALIDATION))
    }

    /// Whether the payload `label` is measured (`--payloads`).
    fn measures_payload(&self, label: &str) -> bool {
        let label = label.to_lowercase();
        self.payloads.is_empty() || self.payloads.iter().any(|word| label.contains(&word.to_lowercase()))
    }
}

/// A module loaded in the server.
struct Loaded {
    /// Its id in policies.yml (the policy's folder, or the floor's name).
    id: &'static str,
    /// The module, annotated.
    module: PathBuf,
    /// Its settings.
    settings: Value,
    /// Its metadata.yml (`None` for a floor: every kind, CREATE and UPDATE).
    metadata: Option<Metadata>,
}

impl Loaded {
    /// Whether a webhook of the module's rules sends it `payload`.
    fn applies(&self, payload: &Payload) -> bool {
        self.metadata
            .as_ref()
            .is_none_or(|m| m.rules.iter().any(|rule| payload.matched_by(rule)))
    }

    /// The context-aware resources the module may look up, as policies.yml lists them.
    fn context_aware(&self) -> Value {
        let resources = self.metadata.as_ref().map_or(Vec::new(), |m| {
            m.context_aware_resources
                .iter()
                .map(|r| json!({"apiVersion": r.api_version, "kind": r.kind}))
                .collect()
        });
        Value::Array(resources)
    }
}

/// The floors, in the order they are measured (first the one every ratio is set against).
const FLOORS: [&str; 4] = ["noop", "sdk-floor", "read-floor", LOOKUP_FLOOR];

/// The floor that makes object-validation's lookups of the audited custom resource.
const LOOKUP_FLOOR: &str = "lookup-floor";

/// The lookup floor's settings: the host calls object-validation makes for the audited
/// Prometheus (its resource named by its kind): the CRD read by its likely name, with the field
/// masks that carry its kind.
fn lookup_floor_settings() -> Value {
    use syncguard::cluster::{CRD_KIND_FIELDS, likely_plural};
    let name = format!("{}.monitoring.coreos.com", likely_plural("Prometheus"));
    let request = syncguard::cluster::get_request(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        &name,
        None,
        CRD_KIND_FIELDS,
    );
    json!({"lookups": [{"operation": syncguard::cluster::GET_RESOURCE, "request": request}]})
}

/// The lookup floor once more, with crd-kind-collision's lookup: the cluster's CRDs listed with
/// the check's field masks, answered by policy-server's reflector as the module's is.
const CRD_LOOKUP_FLOOR: &str = "crd-lookup-floor";

/// The settings of [`CRD_LOOKUP_FLOOR`]: the one host call crd-kind-collision makes.
fn crd_lookup_floor_settings() -> Value {
    use syncguard::checks::crd_kind_collision::LISTED_CRD_FIELDS;
    let request =
        syncguard::cluster::list_all_request("apiextensions.k8s.io/v1", "CustomResourceDefinition", LISTED_CRD_FIELDS);
    json!({"lookups": [{"operation": syncguard::cluster::LIST_RESOURCES_ALL, "request": request}]})
}

/// The metadata of [`CRD_LOOKUP_FLOOR`]: sent the CRDs crd-kind-collision is sent, granted its
/// lookup.
const CRD_LOOKUP_FLOOR_METADATA: &str = "rules:\n  - apiGroups: [apiextensions.k8s.io]\n    apiVersions: [v1]\n    resources: [customresourcedefinitions]\n    operations: [CREATE, UPDATE]\ncontextAwareResources:\n  - apiVersion: apiextensions.k8s.io/v1\n    kind: CustomResourceDefinition\nhostCapabilities: [kubernetes/list_resources_all]\nmutating: false\nexecutionMode: kubewarden-wapc\npolicyType: kubernetes\n";

/// The lookup floor that makes the lookups of context-aware check `id`, if it has one.
fn lookup_floor_of(id: &str) -> Option<&'static str> {
    match id {
        "object-validation" => Some(LOOKUP_FLOOR),
        "crd-kind-collision" => Some(CRD_LOOKUP_FLOOR),
        _ => None,
    }
}

/// The goal of check `id` less its lookups on the payload `label`, against the SDK floor: a
/// single check's (1.1x: crd-kind-collision reads only the start of the object, but the list of
/// CRDs its lookup answers is read, by the module, into what it compares), object-validation's
/// on a custom resource as [`instruction_goal`].
fn less_lookups_goal(id: &str, label: &str) -> f64 {
    match id {
        "crd-kind-collision" => 1.1,
        _ => instruction_goal(id, label),
    }
}

/// The lookup floor's metadata: sent only the audited custom resource, granted the CRD lookups.
const LOOKUP_FLOOR_METADATA: &str = "rules:\n  - apiGroups: [monitoring.coreos.com]\n    apiVersions: [v1]\n    resources: [Prometheus]\n    operations: [CREATE, UPDATE]\ncontextAwareResources:\n  - apiVersion: apiextensions.k8s.io/v1\n    kind: CustomResourceDefinition\nhostCapabilities: [kubernetes/get_resource, kubernetes/list_resources_all]\nmutating: false\nexecutionMode: kubewarden-wapc\npolicyType: kubernetes\n";

/// Every policy module of `policies_dir` (the folders with a metadata.yml, the all-in-one last),
/// after the floors.
fn policies(args: &PolicyServerArgs, floors: [&Path; 4]) -> Result<Vec<Loaded>> {
    let mut loaded: Vec<Loaded> = Vec::new();
    for (id, module) in FLOORS.iter().zip(floors) {
        let (settings, metadata) = if *id == LOOKUP_FLOOR {
            (
                lookup_floor_settings(),
                Some(Metadata::from_yaml(LOOKUP_FLOOR_METADATA)?),
            )
        } else {
            (json!({}), None)
        };
        loaded.push(Loaded {
            id,
            module: module.to_path_buf(),
            settings,
            metadata,
        });
        if *id == LOOKUP_FLOOR {
            loaded.push(Loaded {
                id: CRD_LOOKUP_FLOOR,
                module: module.to_path_buf(),
                settings: crd_lookup_floor_settings(),
                metadata: Some(Metadata::from_yaml(CRD_LOOKUP_FLOOR_METADATA)?),
            });
        }
    }
    let mut names: Vec<String> = std::fs::read_dir(&args.policies_dir)
        .with_context(|| format!("cannot read {}", args.policies_dir.display()))?
        .flatten()
        .filter(|entry| entry.path().join("metadata.yml").is_file())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| args.measures(name))
        .collect();
    names.sort_by_key(|name| (name == ALL_IN_ONE, name.clone()));
    for name in names {
        let dir = args.policies_dir.join(&name);
        let path = dir.join("metadata.yml");
        let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let settings = if name == ALL_IN_ONE {
            json!({"crdKindCollision": {"enabled": false}})
        } else {
            json!({})
        };
        let metadata = Metadata::from_yaml(&text).with_context(|| path.display().to_string())?;
        if name == ALL_IN_ONE && args.measures(WITHOUT_OBJECT_VALIDATION) {
            // The all-in-one once more without object-validation, whose compiling of a built-in
            // kind's schema on every fresh instance is most of its count (docs/benchmarks.md).
            loaded.push(Loaded {
                id: WITHOUT_OBJECT_VALIDATION,
                module: dir.join("annotated-policy.wasm"),
                settings: json!({"crdKindCollision": {"enabled": false}, "objectValidation": {"enabled": false}}),
                metadata: Some(metadata.clone()),
            });
        }
        loaded.push(Loaded {
            id: Box::leak(name.into_boxed_str()),
            module: dir.join("annotated-policy.wasm"),
            settings,
            metadata: Some(metadata),
        });
    }
    Ok(loaded)
}

/// The id of the all-in-one run without object-validation.
const WITHOUT_OBJECT_VALIDATION: &str = "syncguard-no-ov";

/// The all-in-one policy's folder.
const ALL_IN_ONE: &str = "syncguard";

/// The goal for policy `id` on the payload `label` in the instructions policy-server executes
/// per request: at most this multiple of the SDK floor's on the same payload (the least a policy
/// built on Kubewarden's Rust SDK executes: docs/benchmarks.md says why goals against the no-op
/// module cannot be met by any such policy). Issue 47: the all-in-one at most 1.2x, every single
/// check at most 1.1x, and at most 1.0x for a check that reads only the start of the object
/// (ownership-markers reads `apiVersion`, `kind` and `metadata`; crd-kind-collision a CRD up to
/// `spec.names`, though its lookup is work the SDK floor does not do); issue 46: object-validation
/// at most 1.2x on a custom resource of a large CRD (it reads and compiles the CRD's schema).
fn instruction_goal(id: &str, label: &str) -> f64 {
    match id {
        ALL_IN_ONE | WITHOUT_OBJECT_VALIDATION => 1.2,
        "object-validation" if label.contains(CUSTOM_RESOURCE) => 1.2,
        "ownership-markers" | "crd-kind-collision" => 1.0,
        _ => 1.1,
    }
}

/// What the label of the payload of a custom resource says.
const CUSTOM_RESOURCE: &str = "custom resource";

/// Whether `id` is one of the floors the checks are set against (no goal of its own).
fn is_floor(id: &str) -> bool {
    FLOORS.contains(&id) || id == CRD_LOOKUP_FLOOR
}

/// Goal: a Deployment's p50 at most this multiple of the no-op module's.
const DEPLOYMENT_GOAL: f64 = 1.15;
/// Goal: a CRD's p50 at most this multiple of the no-op module's.
const CRD_GOAL: f64 = 1.2;
/// Goal for the other kinds' p50 against the no-op module's (a Job, a ConfigMap), as a Deployment's.
const OTHER_GOAL: f64 = DEPLOYMENT_GOAL;

/// One payload of the bench.
struct Payload {
    /// What it is, in words.
    label: String,
    /// The AdmissionReview.
    body: String,
    /// The goal of its p50 against the no-op module's.
    goal: f64,
    /// Its request's resource (group, version, plural), subresource and operation, which
    /// decide which webhooks receive it.
    resource: (String, String, String, String),
    operation: Option<syncguard::admission::Operation>,
}

impl Payload {
    /// A payload of the AdmissionReview `body`.
    fn new(label: impl Into<String>, body: String, goal: f64) -> Result<Payload> {
        let review: Value = serde_json::from_str(&body)?;
        let request = &review["request"];
        let text = |v: &Value| v.as_str().unwrap_or("").to_string();
        let resource = (
            text(&request["resource"]["group"]),
            text(&request["resource"]["version"]),
            text(&request["resource"]["resource"]),
            text(&request["subResource"]),
        );
        let operation = serde_json::from_value(request["operation"].clone()).ok();
        Ok(Payload {
            label: label.into(),
            body,
            goal,
            resource,
            operation,
        })
    }

    /// Whether the webhook rule `rule` sends this payload (the API server's matching).
    fn matched_by(&self, rule: &Rule) -> bool {
        rule.applies_to(&syncguard::rules::Attributes {
            group: &self.resource.0,
            version: &self.resource.1,
            resource: &self.resource.2,
            subresource: &self.resource.3,
            operation: self.operation,
        })
    }
}

/// The payloads (those `--payloads` names).
fn payloads(args: &PolicyServerArgs) -> Result<Vec<Payload>> {
    let policies_dir = args.policies_dir.as_path();
    let review_of = |request: &Value| {
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}).to_string()
    };
    let review = |path: &Path| -> Result<String> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        let doc = evaluate::read_request(&text)?;
        let request: Value = serde_json::from_str(&doc.raw)?;
        Ok(review_of(&request))
    };
    // The Deployment: sync-drift's case metrics-server-clean (real/metrics-server.yaml, document 7).
    let cases = policies_dir.join("sync-drift/test_data/cases.yml");
    let text = std::fs::read_to_string(&cases).with_context(|| format!("cannot read {}", cases.display()))?;
    let parsed: syncguard_testkit::cases::Cases = serde_yaml_ng::from_str(&text)?;
    let case = parsed
        .cases
        .iter()
        .find(|c| c.name == "metrics-server-clean")
        .ok_or_else(|| anyhow!("sync-drift has no case metrics-server-clean"))?;
    let request = syncguard_testkit::cases::request_of("sync-drift", case)
        .ok_or_else(|| anyhow!("metrics-server-clean: no request"))?;
    let deployment = review_of(&request);
    let data = policies_dir.join("crd-schema-fields/test_data");
    // crd-safe-upgrade's UPDATE: the one `make bench` times (one bound tightened deep in the schema).
    let upgrade = crate::bench::upgrade_fixtures(policies_dir)?;
    let update: Value = serde_json::from_str(&upgrade.update.payload)?;
    // A custom resource of a large CRD (issue 46): kube-prometheus's Prometheus `k8s`, whose CRD
    // (prometheuses.monitoring.coreos.com, 112 KB in `bench/real-crds`) the stand-in API server
    // serves, so that object-validation looks it up (`get_resource`) as in a cluster. It is sent
    // as Kubewarden's audit scanner sends a stored object (a CREATE of it, its resource named by its kind, with the uid,
    // resourceVersion and creation time the cluster gave it), the one case object-validation
    // judges a custom resource in a cluster: at admission the API server has validated the live
    // object a request writes, and the check skips it.
    let corpus = policies_dir.join("sync-drift/test_data/corpus/kube-prometheus.yaml");
    let text = std::fs::read_to_string(&corpus).with_context(|| format!("cannot read {}", corpus.display()))?;
    let mut prometheus = serde_yaml_ng::Deserializer::from_str(&text)
        .map(Value::deserialize)
        .filter_map(Result::ok)
        .find(|doc| doc["kind"] == "Prometheus")
        .ok_or_else(|| anyhow!("{}: no Prometheus", corpus.display()))?;
    if let Some(metadata) = prometheus["metadata"].as_object_mut() {
        metadata.insert("uid".into(), "5b0e6b4e-6f43-4bb4-9c55-0f0c3e1f5a21".into());
        metadata.insert("resourceVersion".into(), "48213".into());
        metadata.insert("creationTimestamp".into(), "2026-01-05T09:12:44Z".into());
    }
    let custom_resource = review_of(&syncguard_testkit::object_request(
        "CREATE",
        &prometheus,
        // The audit scanner names the resource by the object's kind (docs/design.md), so the
        // check first lists the cluster's CRDs to find the name of the one to read.
        "Prometheus",
    ));
    let all = vec![
        Payload::new("a Deployment (metrics-server)", deployment, DEPLOYMENT_GOAL)?,
        Payload::new(
            "Kube-OVN's vpc-nat-gateways CRD",
            review(&data.join("kube-ovn-fixed.json"))?,
            CRD_GOAL,
        )?,
        Payload::new(
            "the Prometheus operator's prometheuses CRD",
            review(&data.join("prometheuses-crd.json"))?,
            CRD_GOAL,
        )?,
        Payload::new(
            "prometheuses CRD UPDATE, one deep change",
            review_of(&update["request"]),
            CRD_GOAL,
        )?,
        // hook-job-safety's case kyverno-clean-reports-accepted.
        Payload::new(
            "a Helm hook Job (Kyverno's clean-reports)",
            review(&policies_dir.join("hook-job-safety/test_data/kyverno-clean-reports.json"))?,
            OTHER_GOAL,
        )?,
        // ownership-markers' case k3s-addon-owner-annotations-accepted.
        Payload::new(
            "a ConfigMap with owner markers (k3s CoreDNS)",
            review(&policies_dir.join("ownership-markers/test_data/k3s-coredns-configmap.json"))?,
            OTHER_GOAL,
        )?,
        Payload::new(
            "an audited Prometheus (custom resource of a 112 KB CRD)",
            custom_resource,
            OTHER_GOAL,
        )?,
    ];
    Ok(all.into_iter().filter(|p| args.measures_payload(&p.label)).collect())
}

/// The CRDs of the stand-in cluster: the real CRDs of `bench/real-crds`, as a cluster holds them.
fn cluster_crds(args: &PolicyServerArgs) -> Result<Vec<String>> {
    let real = crate::inputs::real_crds(&args.real_crds)?;
    Ok(crate::inputs::cluster_crds(&real, real.len()))
}

/// A free port on 127.0.0.1.
fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// The running policy-server and its ports (requests, readiness), stopped when dropped.
struct Server(Child, (u16, u16));

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts policy-server (`command`: the binary, or a wrapper running it) in `work` on `ports`
/// (requests, readiness), with the bench's policies.yml and the kubeconfig of the stand-in API
/// server `api`, its output to the file `log` there.
fn start(mut command: Command, work: &Path, api: &ApiServer, ports: (u16, u16), log: &str) -> Result<Server> {
    let (port, ready_port) = ports;
    let log = std::fs::File::create(work.join(log))?;
    let program = command.get_program().to_string_lossy().into_owned();
    let child = command
        .current_dir(work)
        .env("KUBECONFIG", &api.kubeconfig)
        .args(["--policies", "policies.yml", "--addr", "127.0.0.1"])
        .args([
            "--port",
            &port.to_string(),
            "--readiness-probe-port",
            &ready_port.to_string(),
        ])
        .args([
            "--ignore-kubernetes-connection-failure",
            "--log-level",
            "warn",
            "--log-no-color",
        ])
        .args(["--policies-download-dir", ".", "--sigstore-cache-dir", "sigstore-data"])
        // Under callgrind on a busy machine a request on the 0.5 MB CRD passes the default 2 s;
        // the deadline changes nothing the module executes (the epoch checks stay compiled in).
        .args(["--policy-timeout", "300"])
        .stdout(log.try_clone()?)
        .stderr(log)
        .stdin(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot run {program}"))?;
    Ok(Server(child, ports))
}

/// Runs the benchmark, or says why it is skipped.
pub fn policy_server_bench(args: PolicyServerArgs) -> Result<()> {
    let crds = cluster_crds(&args)?;
    in_process(&args, &crds)?;
    let Some(binary) = std::env::var_os("POLICY_SERVER").filter(|v| !v.is_empty()) else {
        println!(
            "bench-policy-server: skipped: set POLICY_SERVER to a policy-server binary (Kubewarden 1.33 or later) to measure the modules in it"
        );
        return Ok(());
    };
    std::fs::create_dir_all(&args.work_dir)?;
    let work = std::fs::canonicalize(&args.work_dir)?;
    let mut floors = Vec::new();
    for (name, module) in FLOORS
        .iter()
        .zip([&args.floor, &args.sdk_floor, &args.read_floor, &args.lookup_floor])
    {
        let annotated = work.join(format!("{name}.wasm"));
        annotate_floor(module, &annotated)?;
        floors.push(annotated);
    }
    let loaded = policies(&args, [&floors[0], &floors[1], &floors[2], &floors[3]])?;
    let mut yaml = serde_json::Map::new();
    for policy in &loaded {
        let module = std::fs::canonicalize(&policy.module)
            .with_context(|| format!("{}: run `make build`", policy.module.display()))?;
        let mut entry = json!({"module": format!("file://{}", module.display()), "settings": policy.settings});
        if policy.metadata.as_ref().is_some_and(|m| m.mutating) {
            entry["allowedToMutate"] = true.into();
        }
        let context_aware = policy.context_aware();
        if context_aware.as_array().is_some_and(|list| !list.is_empty()) {
            entry["contextAwareResources"] = context_aware;
        }
        // policy-server 1.36 grants a module only the host capabilities its entry lists (its
        // metadata.yml's), `kubernetes/list_resources_all` among them.
        if let Some(capabilities) = policy.metadata.as_ref().and_then(|m| m.host_capabilities.clone()) {
            entry["hostCapabilities"] = capabilities;
        }
        yaml.insert(policy.id.to_string(), entry);
    }
    std::fs::write(work.join("policies.yml"), serde_yaml_ng::to_string(&yaml)?)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.clients.max(1))
        .enable_all()
        .build()?;
    let api = crate::api_server::start(&runtime, &work, &crds)?;
    println!(
        "Lookups answered by a stand-in API server of {} CRDs (policy-server's KUBECONFIG; requests it received: {}/apiserver.log)",
        api.crds,
        work.display()
    );
    let server = start(
        Command::new(&binary),
        &work,
        &api,
        (free_port()?, free_port()?),
        "policy-server.log",
    )?;
    let (port, ready_port) = server.1;
    let version = Command::new(&binary)
        .arg("--version")
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        })
        .unwrap_or_default();
    runtime.block_on(wait_ready(
        ready_port,
        &work,
        "policy-server.log",
        Duration::from_secs(60),
    ))?;
    let payloads = payloads(&args)?;
    // Kept beside policies.yml, to replay a payload with any client (or under a profiler).
    for (n, payload) in payloads.iter().enumerate() {
        std::fs::write(work.join(format!("payload-{}.json", n + 1)), &payload.body)?;
    }
    if args.rounds == 0 || args.requests == 0 {
        drop(server);
        println!("{version}: latency not measured (--rounds 0 or --requests 0)");
        return instructions(&args, &binary, &work, &api, &loaded, &payloads, &runtime);
    }
    println!(
        "{version}: {} clients, {} timed requests each per policy and payload, lowest p50 of {} rounds",
        args.clients, args.requests, args.rounds
    );
    let mut best: Vec<Vec<Option<Figures>>> = vec![vec![None; loaded.len()]; payloads.len()];
    // policy-server's CPU time and page faults per request, the lowest of the rounds: what the
    // request costs the server whatever else runs on the machine.
    let mut least_cpu: Vec<Vec<Option<Usage>>> = vec![vec![None; loaded.len()]; payloads.len()];
    for round in 0..args.rounds {
        eprintln!("bench-policy-server: round {} of {}", round + 1, args.rounds);
        for (p, payload) in payloads.iter().enumerate() {
            let (label, body) = (&payload.label, &payload.body);
            for (i, policy) in loaded.iter().enumerate() {
                let id = policy.id;
                if !policy.applies(payload) {
                    continue;
                }
                let before = ProcessUsage::of(server.0.id());
                let figures = runtime
                    .block_on(load(port, id, body.clone(), args.clients, args.requests))
                    .with_context(|| format!("{id} on {label}"))?;
                let used = ProcessUsage::of(server.0.id()).since(before, args.clients * (args.requests + 1));
                let slot = &mut best[p][i];
                if slot.is_none_or(|f| figures.0 < f.p50) {
                    *slot = Some(Figures {
                        p50: figures.0,
                        p90: figures.1,
                    });
                }
                let low = &mut least_cpu[p][i];
                if low.is_none_or(|u: Usage| used.cpu < u.cpu) {
                    *low = Some(used);
                }
            }
        }
    }
    drop(server);
    println!(
        "\n{:<45} {:>9} {:<18} {:>10} {:>10} {:>7} {:>8} {:>7} {:>8}  goal",
        "payload", "bytes", "policy", "p50 ms", "p90 ms", "x no-op", "cpu us", "x no-op", "faults"
    );
    let mut unmet = Vec::new();
    for (p, payload) in payloads.iter().enumerate() {
        let (label, body, goal) = (&payload.label, &payload.body, &payload.goal);
        let floor_p50 = best[p][0].map_or(Duration::ZERO, |f| f.p50);
        let floor_cpu = least_cpu[p][0].map_or(0.0, |u| u.cpu);
        for (i, policy) in loaded.iter().enumerate() {
            let id = policy.id;
            let (Some(Figures { p50, p90, .. }), Some(usage)) = (best[p][i], least_cpu[p][i]) else {
                println!(
                    "{label:<45} {:>9} {id:<18}  n/a: its rules do not match this payload",
                    body.len()
                );
                continue;
            };
            let ratio = p50.as_secs_f64() / floor_p50.as_secs_f64().max(1e-9);
            let verdict = if is_floor(id) {
                String::new()
            } else if ratio <= *goal {
                format!("met (<= {goal}x)")
            } else {
                unmet.push(format!("{id} on {label}: {ratio:.2}x (goal {goal}x)"));
                format!("NOT MET (<= {goal}x)")
            };
            println!(
                "{:<45} {:>9} {:<18} {:>10.3} {:>10.3} {:>7.2} {:>8.0} {:>7.2} {:>8.0}  {verdict}",
                label,
                body.len(),
                id,
                p50.as_secs_f64() * 1e3,
                p90.as_secs_f64() * 1e3,
                ratio,
                usage.cpu,
                usage.cpu / floor_cpu.max(1e-9),
                usage.faults,
            );
        }
    }
    if !unmet.is_empty() {
        println!("\nGoals not met (a finding to explain, not a failure of the run):");
        for line in unmet {
            println!("  {line}");
        }
    }
    instructions(&args, &binary, &work, &api, &loaded, &payloads, &runtime)
}

/// The instructions policy-server executes per request (all its threads), counted by valgrind's
/// callgrind: the one figure of the server that other work on the machine does not move. It runs
/// policy-server under `valgrind --tool=callgrind` with instrumentation off until the server is
/// ready (so compiling the modules is not slowed), then per policy and payload sends untimed
/// warm-up requests, zeroes the counters (`callgrind_control --zero`), sends
/// `--instruction-requests` sequential requests on one connection and dumps the counters
/// (`callgrind_control --dump`), whose `totals:` line is the count. Skipped, with a line saying
/// so, when valgrind is not installed (`make bench-policy-server` installs Debian's).
fn instructions(
    args: &PolicyServerArgs,
    binary: &std::ffi::OsStr,
    work: &Path,
    api: &ApiServer,
    loaded: &[Loaded],
    payloads: &[Payload],
    runtime: &tokio::runtime::Runtime,
) -> Result<()> {
    let found = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if args.instruction_requests == 0 {
        return Ok(());
    }
    if !found("valgrind") || !found("callgrind_control") {
        println!(
            "\nInstructions per request: skipped (valgrind is not installed; `make bench-policy-server` installs it)"
        );
        return Ok(());
    }
    let out = work.join("callgrind");
    std::fs::create_dir_all(&out)?;
    for old in std::fs::read_dir(&out)?.flatten() {
        std::fs::remove_file(old.path())?;
    }
    let mut valgrind = Command::new("valgrind");
    valgrind
        .args(["--tool=callgrind", "--instr-atstart=no"])
        .arg(format!("--callgrind-out-file={}", out.join("out").display()))
        .arg(binary);
    let server = start(
        valgrind,
        work,
        api,
        (free_port()?, free_port()?),
        "policy-server-callgrind.log",
    )?;
    let (port, ready_port) = server.1;
    let pid = server.0.id().to_string();
    runtime.block_on(wait_ready(
        ready_port,
        work,
        "policy-server-callgrind.log",
        Duration::from_secs(900),
    ))?;
    let control = |flag: &str| -> Result<()> {
        let output = Command::new("callgrind_control").args([flag, &pid]).output()?;
        if !output.status.success() {
            bail!(
                "callgrind_control {flag} {pid} failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(())
    };
    control("--instr=on")?;
    let requests = args.instruction_requests;
    println!(
        "\nInstructions policy-server executes per request (all threads, valgrind's callgrind), {requests} sequential requests after 3 untimed:"
    );
    println!(
        "{:<45} {:<18} {:>14} {:>8} {:>8} {:>8}  goal",
        "payload", "policy", "instructions", "x no-op", "x sdk", "x read"
    );
    let mut dumps = 0;
    let mut unmet = Vec::new();
    for payload in payloads {
        let (label, body) = (&payload.label, &payload.body);
        let (mut floor, mut sdk_floor, mut read_floor) = (None, None, None);
        let mut lookup_floors: Vec<(&str, f64)> = Vec::new();
        for policy in loaded {
            let id = policy.id;
            if !policy.applies(payload) {
                continue;
            }
            runtime
                .block_on(load(port, id, body.clone(), 1, 2))
                .with_context(|| format!("{id} on {label} under callgrind"))?;
            control("--zero")?;
            runtime
                .block_on(load(port, id, body.clone(), 1, requests - 1))
                .with_context(|| format!("{id} on {label} under callgrind"))?;
            control("--dump")?;
            dumps += 1;
            let dump = out.join(format!("out.{dumps}"));
            let text = std::fs::read_to_string(&dump).with_context(|| format!("cannot read {}", dump.display()))?;
            let total: f64 = text
                .lines()
                .find_map(|l| l.strip_prefix("totals:"))
                .and_then(|v| v.trim().parse().ok())
                .ok_or_else(|| anyhow!("{}: no totals line", dump.display()))?;
            let per_request = total / requests as f64;
            let floor_count = *floor.get_or_insert(per_request);
            match id {
                "sdk-floor" => sdk_floor = Some(per_request),
                "read-floor" => read_floor = Some(per_request),
                LOOKUP_FLOOR | CRD_LOOKUP_FLOOR => lookup_floors.push((id, per_request)),
                _ => {}
            }
            let ratio = per_request / floor_count;
            let sdk_ratio = sdk_floor.map_or(f64::NAN, |sdk| per_request / sdk);
            let read_ratio = read_floor.map_or(f64::NAN, |read| per_request / read);
            // The goal (issue 47) is set against the SDK floor; the no-op ratio is printed beside.
            let mut verdict = String::new();
            if !is_floor(id) {
                let goal = instruction_goal(id, label);
                if sdk_ratio <= goal {
                    verdict = format!("met (<= {goal}x SDK floor)");
                } else {
                    unmet.push(format!("{id} on {label}: {sdk_ratio:.2}x the SDK floor (goal {goal}x)"));
                    verdict = format!("NOT MET (<= {goal}x SDK floor)");
                }
            }
            let column = |ratio: f64| {
                if ratio.is_nan() {
                    "-".to_string()
                } else {
                    format!("{ratio:.2}")
                }
            };
            let (sdk_column, read_column) = (column(sdk_ratio), column(read_ratio));
            println!(
                "{label:<45} {id:<18} {per_request:>14.0} {ratio:>8.2} {sdk_column:>8} {read_column:>8}  {verdict}"
            );
            // A context-aware check's goal set apart from its lookups: the check less what its
            // lookups cost (its lookup floor less the read floor: both step over the payload, the
            // lookup floor also makes the calls and reads their answers), against the SDK floor.
            let lookups = lookup_floor_of(id)
                .and_then(|floor_id| lookup_floors.iter().find(|(f, _)| *f == floor_id))
                .map(|(_, count)| *count);
            if let (Some(lookups), Some(sdk), Some(read)) = (lookups, sdk_floor, read_floor) {
                let own = per_request - (lookups - read);
                let own_ratio = own / sdk;
                let goal = less_lookups_goal(id, label);
                let verdict = if own_ratio <= goal {
                    format!("met (<= {goal}x SDK floor)")
                } else {
                    unmet.push(format!(
                        "{id} less its lookups on {label}: {own_ratio:.2}x the SDK floor (goal {goal}x)"
                    ));
                    format!("NOT MET (<= {goal}x SDK floor)")
                };
                let less = "  less lookups";
                println!(
                    "{label:<45} {less:<18} {own:>14.0} {:>8.2} {own_ratio:>8.2} {:>8}  {verdict}",
                    own / floor_count,
                    "-"
                );
            }
        }
    }
    drop(server);
    if !unmet.is_empty() {
        println!("\nGoals not met by the instruction counts (a finding to explain, not a failure of the run):");
        for line in unmet {
            println!("  {line}");
        }
    }
    Ok(())
}

/// One policy on one payload in policy-server: the latency the clients saw.
#[derive(Clone, Copy)]
struct Figures {
    p50: Duration,
    p90: Duration,
}

/// policy-server's CPU time (microseconds, all its threads) and minor page faults per request.
#[derive(Clone, Copy)]
struct Usage {
    cpu: f64,
    faults: f64,
}

/// policy-server's CPU time (nanoseconds, summed over its threads from each one's
/// `/proc/<pid>/task/<tid>/schedstat`) and minor page faults (`/proc/<pid>/stat`) so far (Linux;
/// zeros elsewhere).
#[derive(Clone, Copy)]
struct ProcessUsage {
    cpu_ns: u64,
    faults: u64,
}

impl ProcessUsage {
    fn of(pid: u32) -> ProcessUsage {
        let mut cpu_ns = 0;
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for task in tasks.flatten() {
                let schedstat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
                cpu_ns += schedstat
                    .split_whitespace()
                    .next()
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
        let faults = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                s.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(7)?.parse().ok())
            })
            .unwrap_or(0);
        ProcessUsage { cpu_ns, faults }
    }

    /// Per request, over `requests` requests since `before`.
    fn since(self, before: ProcessUsage, requests: usize) -> Usage {
        let n = requests.max(1) as f64;
        Usage {
            cpu: self.cpu_ns.saturating_sub(before.cpu_ns) as f64 / 1e3 / n,
            faults: self.faults.saturating_sub(before.faults) as f64 / n,
        }
    }
}

/// Annotates the floor module with a metadata of its own (every kind, CREATE and UPDATE):
/// policy-server refuses a module without embedded metadata.
fn annotate_floor(wasm: &Path, out: &Path) -> Result<()> {
    let module = std::fs::read(wasm).with_context(|| format!("{}: run `make build`", wasm.display()))?;
    let mut metadata = Metadata::from_yaml(
        "rules:\n  - apiGroups: [\"*\"]\n    apiVersions: [\"*\"]\n    resources: [\"*\"]\n    operations: [CREATE, UPDATE]\nmutating: false\nexecutionMode: kubewarden-wapc\npolicyType: kubernetes\n",
    )?;
    metadata.protocol_version = Some("v1".into());
    let annotated = metadata::with_custom_section(&module, metadata::SECTION, &serde_json::to_vec(&metadata)?)?;
    std::fs::write(out, annotated).with_context(|| format!("cannot write {}", out.display()))
}

/// Waits (up to a minute: every module is compiled at start) until policy-server says it is
/// ready.
async fn wait_ready(port: u16, work: &Path, log: &str, within: Duration) -> Result<()> {
    let started = Instant::now();
    while started.elapsed() < within {
        if let Ok(status) = get_status(port, "/readiness").await
            && status == 200
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let log = std::fs::read_to_string(work.join(log)).unwrap_or_default();
    bail!(
        "policy-server was not ready within {} s; its log:\n{log}",
        within.as_secs()
    )
}

async fn get_status(port: u16, path: &str) -> Result<u16> {
    let mut sender = connect(port).await?;
    let request = hyper::Request::get(path)
        .header("host", "127.0.0.1")
        .body(Full::new(Bytes::new()))?;
    Ok(sender.send_request(request).await?.status().as_u16())
}

/// One kept-alive HTTP/1.1 connection to policy-server.
async fn connect(port: u16) -> Result<hyper::client::conn::http1::SendRequest<Full<Bytes>>> {
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
    stream.set_nodelay(true)?;
    let (sender, connection) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    Ok(sender)
}

/// `clients` concurrent clients each sending `requests` timed AdmissionReviews (after one
/// untimed) to policy `id`; the p50 and p90 of all the timed requests.
async fn load(port: u16, id: &str, body: String, clients: usize, requests: usize) -> Result<(Duration, Duration)> {
    let body = Bytes::from(body);
    let path = format!("/validate/{id}");
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (body, path) = (body.clone(), path.clone());
        tasks.push(tokio::spawn(async move {
            let mut sender = connect(port).await?;
            let mut samples = Vec::with_capacity(requests);
            for i in 0..requests + 1 {
                let request = hyper::Request::post(path.as_str())
                    .header("host", "127.0.0.1")
                    .header("content-type", "application/json")
                    .body(Full::new(body.clone()))?;
                let start = Instant::now();
                let response = sender.send_request(request).await?;
                let status = response.status();
                let answer = response.into_body().collect().await?.to_bytes();
                let elapsed = start.elapsed();
                if status != 200 || !answer.starts_with(b"{") {
                    bail!("{path}: HTTP {status}: {}", String::from_utf8_lossy(&answer));
                }
                // The module must have answered, not failed (a guest error is code 500).
                if i == 0 {
                    let review: Value = serde_json::from_slice(&answer)?;
                    if review["response"]["status"]["code"] == 500 {
                        bail!("{path}: the policy failed: {}", review["response"]["status"]["message"]);
                    }
                }
                if i > 0 {
                    samples.push(elapsed);
                }
            }
            Ok::<_, anyhow::Error>(samples)
        }));
    }
    let mut samples = Vec::new();
    for task in tasks {
        samples.extend(task.await??);
    }
    samples.sort();
    let at = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
    Ok((at(0.5), at(0.9)))
}

/// Minor page faults of the calling thread so far (Linux; 0 elsewhere): every page of a fresh
/// instance's linear memory that the module touches costs one.
fn thread_minor_faults() -> u64 {
    // /proc/thread-self/stat: "pid (comm) state ..."; minflt is the 10th field, the 8th after
    // the command's closing parenthesis (which may itself hold spaces).
    std::fs::read_to_string("/proc/thread-self/stat")
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(7)?.parse().ok())
        })
        .unwrap_or(0)
}

/// One policy on one payload, run in this process the way policy-server 1.36 runs each admission:
/// an instance rehydrated from the module's `InstancePre` (waPC init included), one `validate`
/// call, the instance dropped; beside the same call repeated on one reused instance.
#[derive(Clone, Copy)]
struct Phases {
    instantiate: Duration,
    fresh_call: Duration,
    drop: Duration,
    reused_call: Duration,
    /// Minor page faults per fresh request (instantiate, call and drop).
    fresh_faults: f64,
    /// Minor page faults per call on the reused instance.
    reused_faults: f64,
}

impl Phases {
    fn fresh_total(&self) -> Duration {
        self.instantiate + self.fresh_call + self.drop
    }
}

/// Medians of each phase over `calls` fresh requests and `calls` calls on one reused instance.
fn phases(
    module: &syncguard_cli::engine::Module,
    payload: &[u8],
    calls: usize,
    cluster: &Arc<OfflineCluster>,
) -> Result<Phases> {
    use syncguard_cli::engine::Capabilities;
    // Lookups answered as the stand-in API server and policy-server's reflector answer them.
    let capabilities = || Capabilities {
        allow_context_aware: true,
        granted: Vec::new(),
        replay: None,
        lookups: Some(cluster.clone()),
    };
    let check = |answer: &[u8]| -> Result<()> {
        let response: Value = serde_json::from_slice(answer)?;
        if response["code"] == 500 || response.get("accepted").is_none() {
            bail!("the module did not answer: {response}");
        }
        Ok(())
    };
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let (mut instantiate, mut fresh_call, mut drop_times) = (Vec::new(), Vec::new(), Vec::new());
    let mut fresh_faults = 0;
    for i in 0..calls + 1 {
        let faults = thread_minor_faults();
        let start = Instant::now();
        let instance = module.instantiate(capabilities())?;
        let made = Instant::now();
        let answer = instance.call("validate", payload).map_err(|e| anyhow!(e))?;
        let called = Instant::now();
        drop(instance);
        let dropped = Instant::now();
        if i == 0 {
            check(&answer)?;
            continue;
        }
        fresh_faults += thread_minor_faults() - faults;
        instantiate.push(made - start);
        fresh_call.push(called - made);
        drop_times.push(dropped - called);
    }
    let instance = module.instantiate(capabilities())?;
    instance.call("validate", payload).map_err(|e| anyhow!(e))?;
    let faults = thread_minor_faults();
    let mut reused = Vec::new();
    for _ in 0..calls {
        let start = Instant::now();
        instance.call("validate", payload).map_err(|e| anyhow!(e))?;
        reused.push(start.elapsed());
    }
    let reused_faults = thread_minor_faults() - faults;
    Ok(Phases {
        instantiate: median(instantiate),
        fresh_call: median(fresh_call),
        drop: median(drop_times),
        reused_call: median(reused),
        fresh_faults: fresh_faults as f64 / calls as f64,
        reused_faults: reused_faults as f64 / calls as f64,
    })
}

/// Where a policy-server request's cost goes, measured in this process through the command's
/// wasmtime engine (the waPC host policy-server uses, rehydrated from an `InstancePre` per
/// request, wasmtime's default on-demand allocator with copy-on-write memory images): per policy
/// and payload, the median of instantiation (waPC init included), the `validate` call on the
/// fresh instance and the instance's drop, the same call on one reused instance, and the minor
/// page faults of each (load-independent: one per page of linear memory first touched).
fn in_process(args: &PolicyServerArgs, crds: &[String]) -> Result<()> {
    use syncguard_cli::engine::{Engine, Limits};
    if args.in_process_calls == 0 || args.rounds == 0 {
        return Ok(());
    }
    let engine = Engine::new(Limits::default())?;
    let loaded = policies(
        args,
        [&args.floor, &args.sdk_floor, &args.read_floor, &args.lookup_floor],
    )?;
    let mut modules = Vec::new();
    for policy in &loaded {
        let path = &policy.module;
        let wasm = std::fs::read(path).with_context(|| format!("{}: run `make build`", path.display()))?;
        modules.push((policy, engine.compile(&wasm)?));
    }
    let objects: Vec<Value> = crds
        .iter()
        .map(|text| serde_json::from_str(text))
        .collect::<Result<_, _>>()?;
    let cluster = Arc::new(OfflineCluster::of_objects(&objects));
    let payloads = payloads(args)?;
    println!(
        "In this process, as policy-server runs each admission (a fresh instance from the module's InstancePre), median of {} requests, lowest of {} rounds:",
        args.in_process_calls, args.rounds
    );
    println!(
        "{:<45} {:<18} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>10}",
        "payload", "policy", "inst us", "call us", "drop us", "fresh us", "reused", "faults", "reused f", "+fresh us"
    );
    for bench_payload in &payloads {
        let label = &bench_payload.label;
        let review: Value = serde_json::from_str(&bench_payload.body)?;
        let mut floor: Option<Phases> = None;
        for (policy, module) in &modules {
            let id = policy.id;
            if !policy.applies(bench_payload) {
                continue;
            }
            let payload = json!({"request": review["request"], "settings": policy.settings}).to_string();
            let mut best: Option<Phases> = None;
            for _ in 0..args.rounds {
                let figures = phases(module, payload.as_bytes(), args.in_process_calls, &cluster)
                    .with_context(|| format!("{id} on {label}"))?;
                if best.is_none_or(|b| figures.fresh_total() < b.fresh_total()) {
                    best = Some(figures);
                }
            }
            let best = best.expect("at least one round");
            let floor = *floor.get_or_insert(best);
            let us = |d: Duration| d.as_secs_f64() * 1e6;
            println!(
                "{:<45} {:<18} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>9.1} {:>9.1} {:>10.1}",
                label,
                id,
                us(best.instantiate),
                us(best.fresh_call),
                us(best.drop),
                us(best.fresh_total()),
                us(best.reused_call),
                best.fresh_faults,
                best.reused_faults,
                us(best.fresh_total()) - us(floor.fresh_total()),
            );
        }
    }
    println!();
    Ok(())
}
