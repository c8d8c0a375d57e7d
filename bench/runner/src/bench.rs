//! `syncguard-bench` (`make bench`): the figures behind the project's performance goals,
//! measured side by side in one run: module size, cold start (wasmtime compile, no cache), and
//! warm `validate` time (median and p95, the lowest of three sweeps over every module and
//! fixture) on every fixture, beside the no-op floor module and the read floor on the same
//! payload; each single check beside its module at commit d811579 (built by the bench, see
//! [`crate::baseline`]), timed in the same sweeps, fixture after fixture; the all-in-one beside
//! the shared read plus the work of the checks that apply (from the single checks' figures on
//! the same request); crd-safe-upgrade on an UPDATE of the Prometheus operator's CRD beside
//! crd-schema-fields on its CREATE; `syncguard scan` throughput over generated trees of
//! manifests (few CRDs, and a quarter CRDs) and over a folder of 500 real CRDs; and the cost of
//! crd-kind-collision's context lookup in a cluster of 5,000 CRDs (bytes handed to the module,
//! warm validate time); and sync-drift on a custom resource of the Prometheus operator's CRD,
//! the CRD fetched through the host, on a fresh instance per call and on one reused.

use crate::baseline::{self, Baseline};
use crate::inputs;
use crate::scan::{ScanFigures, default_jobs, scan_throughput};
use anyhow::{Context, Result, anyhow};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use syncguard::registry::CHECKS;
use syncguard_cli::engine::{Capabilities, Engine, Instance, Limits, Lookups, Module};
use syncguard_cli::evaluate;
use syncguard_scan::replay::{HostRequest, Replay};
use syncguard_testkit::cases::Cases;

/// Arguments of `syncguard-bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// Folder of the policies (each with policy.wasm or annotated-policy.wasm and test_data/).
    #[arg(long, value_name = "DIR", default_value = "policies")]
    policies_dir: PathBuf,
    /// The all-in-one module, measured on every fixture of every policy.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "policies/syncguard/annotated-policy.wasm"
    )]
    all_in_one: PathBuf,
    /// The floor module (accepts without reading the request).
    #[arg(long, value_name = "FILE", default_value = "bench/noop/policy.wasm")]
    floor: PathBuf,
    /// The read floor module (parses the whole request as JSON, then accepts).
    #[arg(long, value_name = "FILE", default_value = "bench/read-floor/policy.wasm")]
    read_floor: PathBuf,
    /// Timed `validate` calls per fixture.
    #[arg(long, value_name = "N", default_value_t = 50)]
    iterations: usize,
    /// Where to write the results as JSON.
    #[arg(long, value_name = "FILE", default_value = "target/bench.json")]
    json_out: PathBuf,
    /// Where the single-check modules of d811579 are built and kept (a later run reuses them).
    #[arg(long, value_name = "DIR", default_value = "target/bench-d811579")]
    baseline_dir: PathBuf,
    /// The size pass given to d811579's modules, as the Makefile gives it to today's: a command
    /// to which the input module and `-o <output>` are added (`make bench` passes its own).
    #[arg(long, value_name = "COMMAND", default_value = WASM_OPT)]
    wasm_opt: String,
    /// Where the scan throughput's generated tree of manifests goes (replaced on each run).
    #[arg(long, value_name = "DIR", default_value = "target/bench-tree")]
    scan_tree: PathBuf,
    /// Manifests in that tree; 0 skips the scan throughput.
    #[arg(long, value_name = "N", default_value_t = SCAN_MANIFESTS)]
    scan_manifests: usize,
    /// Where the tree of custom resources (cert-manager Certificates beside their CRD) goes
    /// (replaced on each run); it holds as many documents as the tree of manifests.
    #[arg(long, value_name = "DIR", default_value = "target/bench-tree-certificates")]
    scan_certificate_tree: PathBuf,
    /// The CRD of that tree.
    #[arg(long, value_name = "FILE", default_value = inputs::CERTIFICATE_CRD)]
    certificate_crd: PathBuf,
    /// Where the tree of manifests of which a quarter are CRDs goes (replaced on each run).
    #[arg(long, value_name = "DIR", default_value = "target/bench-tree-crds")]
    scan_crd_tree: PathBuf,
    /// The real CRDs (a gzipped JSON array, see bench/real-crds/build.py).
    #[arg(long, value_name = "FILE", default_value = "bench/real-crds/crds.json.gz")]
    real_crds: PathBuf,
    /// Where the real CRDs are written as a folder of YAML files to scan (replaced on each run).
    #[arg(long, value_name = "DIR", default_value = "target/bench-real-crds")]
    real_crds_dir: PathBuf,
    /// CRDs in the cluster of the context lookup case; 0 skips it.
    #[arg(long, value_name = "N", default_value_t = CLUSTER_CRDS)]
    cluster_crds: usize,
}

/// The Makefile's size pass (`WASM_OPT`).
const WASM_OPT: &str =
    "wasm-opt -Oz --enable-bulk-memory --enable-sign-ext --enable-mutable-globals --enable-nontrapping-float-to-int";
/// Goal: every single-check fixture's warm validate at most this multiple of the same fixture's
/// with the module of [`baseline::COMMIT`].
const BASELINE_RATIO_GOAL: f64 = 1.05;
/// Goal: the all-in-one's warm validate on each fixture at most this multiple of the shared
/// read plus the work of the checks that apply (see [`checks_sum`]).
const ALL_IN_ONE_RATIO_GOAL: f64 = 1.1;
/// Goal: warm validate on the Prometheus CRD at most this multiple of the floor.
const FLOOR_RATIO_GOAL: f64 = 1.1;
/// Goal: crd-safe-upgrade on an UPDATE of the Prometheus CRD at most this multiple of
/// crd-schema-fields on its CREATE.
const UPGRADE_RATIO_GOAL: f64 = 3.0;
/// Goal: sync-drift, which applies to every kind, on a Deployment without drift at most this
/// multiple of the read floor (the module that parses the whole request and accepts).
const DRIFT_READ_FLOOR_GOAL: f64 = 2.0;
/// sync-drift's Deployments without drift: its manifest (a CREATE), and the live object with
/// its last-applied copy (an UPDATE, as admission and the audit scanner see it).
const DRIFT_CLEAN_FIXTURES: [&str; 2] = [
    "sync-drift/metrics-server-clean",
    "sync-drift/metrics-server-live-clean",
];
/// The Prometheus operator's `prometheuses` CRD, a CREATE request (crd-schema-fields' fixture).
const PROMETHEUS_CRD: &str = "crd-schema-fields/test_data/prometheuses-crd.json";
/// Manifests in the scan throughput's tree.
const SCAN_MANIFESTS: usize = 10_000;
/// Goal: `syncguard scan` of that tree at least this many manifests per second.
const SCAN_RATE_GOAL: f64 = 2_000.0;
/// In the second tree, every this many manifests one is a CRD (a quarter).
const CRD_HEAVY_EVERY: usize = 4;
/// Goal: `syncguard scan` of the folder of real CRDs within this many seconds.
const REAL_CRDS_SECONDS_GOAL: f64 = 3.0;
/// CRDs in the cluster of the context lookup case.
const CLUSTER_CRDS: usize = 5_000;
/// Goal: at most this many bytes handed to the module per lookup in that cluster.
const LOOKUP_BYTES_GOAL: usize = 4 * 1024 * 1024;
/// The policy whose lookup is measured.
const LOOKUP_POLICY: &str = "crd-kind-collision";
/// The all-in-one's name in the report.
const ALL_IN_ONE: &str = "syncguard (all-in-one)";
/// Sweeps over every module and fixture; each figure is the lowest of its sweeps, so that a
/// slow spell of the machine during one of them decides no goal (on a shared 2-core machine,
/// figures of the same module moved by up to 2x between runs of a single sweep).
const SWEEPS: usize = 3;

#[derive(Serialize)]
struct ModuleFigures {
    module: String,
    bytes: u64,
    cold_start_ms: f64,
    fixtures: Vec<FixtureFigures>,
}

#[derive(Serialize)]
struct FixtureFigures {
    fixture: String,
    request_bytes: usize,
    median_us: f64,
    p95_us: f64,
    floor_median_us: f64,
    ratio_to_floor: f64,
    read_floor_median_us: f64,
    ratio_to_read_floor: f64,
    /// Single checks: the same fixture's median with the module of the baseline commit,
    /// measured in the same sweeps.
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline_median_us: Option<f64>,
    /// Single checks: why the fixture has no baseline figure (n/a), or that the baseline module
    /// answers it otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline_note: Option<String>,
    /// All-in-one only: the shared read plus each check's own work, from the single checks'
    /// medians (see [`checks_sum`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    checks_sum_us: Option<f64>,
    /// All-in-one only: each single check's median on this request, by check.
    #[serde(skip_serializing_if = "Option::is_none")]
    single_checks_us: Option<BTreeMap<String, f64>>,
}

/// crd-kind-collision on one CRD CREATE in a cluster of many CRDs, its lookup answered as
/// Kubewarden answers it (the module's field masks applied).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LookupFigures {
    /// CRDs in the cluster.
    crds: usize,
    /// The List of the whole objects, as the API server holds them.
    whole_bytes: usize,
    /// The List Kubewarden sends without field masks (managedFields and last-applied removed).
    unmasked_bytes: usize,
    /// The List Kubewarden sends for the module's field masks: what the module receives.
    bytes_per_lookup: usize,
    /// Time to compute that answer once (what `syncguard scan` does once per scan).
    answer_ms: f64,
    /// Warm validate, each call on a fresh instance as policy-server runs every admission: the
    /// module reads the whole List.
    median_us: f64,
    p95_us: f64,
    /// Warm validate on one instance called again and again with the same List, as
    /// `syncguard scan` calls it for every CRD of a tree: the List is read once.
    reused_median_us: f64,
    /// The no-op floor module on the same request (no lookup).
    floor_median_us: f64,
}

/// sync-drift on a custom resource of a large CRD (the Prometheus operator's `prometheuses`), its
/// CRD fetched through the host (`get_resource` with the module's field masks), beside the read
/// floor on the same request.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CustomResourceFigures {
    /// The custom resource under admission.
    resource: String,
    /// The request's size.
    request_bytes: usize,
    /// The CRD as the host hands it to the module (the field masks applied).
    crd_bytes: usize,
    /// What sync-drift answers.
    answer: String,
    /// Warm validate, each call on a fresh instance (as policy-server runs every admission):
    /// the CRD is read and its schema parsed on every call.
    fresh_median_us: f64,
    fresh_p95_us: f64,
    /// Warm validate on one instance called again and again (as `syncguard scan`, kwctl and
    /// the audit scanner call one instance for many objects): the schema is parsed once.
    reused_median_us: f64,
    reused_p95_us: f64,
    /// The read floor (parses the whole request, no lookup) and the no-op floor on the same
    /// request.
    read_floor_median_us: f64,
    floor_median_us: f64,
    /// The read floor on a request holding the CRD (its CREATE): what reading the bytes the
    /// host hands the module costs at the least.
    crd_read_floor_median_us: f64,
}

/// crd-safe-upgrade on an UPDATE of the Prometheus operator's `prometheuses` CRD to a copy with
/// one deep change, beside crd-schema-fields on the CREATE of the same CRD.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UpgradeFigures {
    /// The change of the new object.
    change: String,
    /// Payload sizes.
    update_bytes: usize,
    create_bytes: usize,
    /// What crd-safe-upgrade answers on the UPDATE.
    answer: String,
    /// Warm validate medians.
    safe_upgrade_median_us: f64,
    schema_fields_median_us: f64,
}

#[derive(Serialize)]
struct Report {
    /// The commit of the single checks' baseline figures.
    baseline_commit: &'static str,
    /// Why there are no baseline figures at all (the commit could not be built).
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline_unavailable: Option<String>,
    modules: Vec<ModuleFigures>,
    upgrade: Option<UpgradeFigures>,
    /// Scan throughput: the generated tree (few CRDs), the tree of which a quarter are CRDs,
    /// and the folder of real CRDs.
    scans: Vec<ScanFigures>,
    /// Scan throughput on as many custom resources of a real CRD (cert-manager Certificates).
    custom_resource_scan: Option<ScanFigures>,
    lookup: Option<LookupFigures>,
    custom_resource: Option<CustomResourceFigures>,
    goals: Vec<Goal>,
}

#[derive(Serialize)]
struct Goal {
    goal: String,
    measured: String,
    met: bool,
}

#[derive(Clone)]
pub(crate) struct Fixture {
    label: String,
    /// The `validate` payload: `{"request": ..., "settings": ...}`.
    pub(crate) payload: String,
    /// The case's settings (`{}` when it has none).
    settings: Value,
    replay: Option<String>,
}

/// A single check: its module and its fixtures.
struct Policy {
    name: String,
    /// Its section of the all-in-one's settings.
    settings_key: String,
    module: PathBuf,
    fixtures: Vec<Fixture>,
}

/// The baseline commit's modules, compiled, and what each fixture gets from them.
struct Old {
    /// The module of each check the commit had.
    modules: BTreeMap<String, Module>,
    /// Fixtures without a baseline figure, by label: why (n/a).
    missing: BTreeMap<String, String>,
    /// Fixtures the baseline module accepts and today's does not, or the other way round.
    differs: BTreeSet<String>,
    /// Why there is no baseline at all.
    unavailable: Option<String>,
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

/// The capabilities a fixture's calls get: its replay file, rewound (a fresh parse), if any.
fn capabilities(fixture: &Fixture) -> Result<Capabilities> {
    Ok(Capabilities {
        allow_context_aware: fixture.replay.is_some(),
        granted: Vec::new(),
        replay: match &fixture.replay {
            Some(text) => Some(Arc::new(Replay::parse(text).map_err(|e| anyhow!(e))?)),
            None => None,
        },
        lookups: None,
    })
}

/// Times `iterations` calls; a fresh instance per call when a replay file must be rewound.
fn time_validate(module: &Module, fixture: &Fixture, iterations: usize) -> Result<(Duration, Duration)> {
    let mut shared: Option<Instance> = None;
    let mut samples = Vec::with_capacity(iterations);
    for i in 0..iterations + 1 {
        let fresh;
        let instance = if fixture.replay.is_some() {
            fresh = module.instantiate(capabilities(fixture)?)?;
            &fresh
        } else {
            shared.get_or_insert(module.instantiate(capabilities(fixture)?)?)
        };
        let elapsed = timed_validate(instance, fixture)?;
        if i > 0 {
            samples.push(elapsed);
        }
    }
    samples.sort();
    Ok((percentile(&samples, 0.5), percentile(&samples, 0.95)))
}

/// How long one `validate` call of `instance` on `fixture` takes.
fn timed_validate(instance: &Instance, fixture: &Fixture) -> Result<Duration> {
    let start = Instant::now();
    instance
        .call("validate", fixture.payload.as_bytes())
        .map_err(|e| anyhow!("{}: {e}", fixture.label))?;
    Ok(start.elapsed())
}

/// The module's answer to one `validate` call on a fresh instance.
fn answer_of(module: &Module, fixture: &Fixture) -> Result<Value> {
    let instance = module.instantiate(capabilities(fixture)?)?;
    let answer = instance
        .call("validate", fixture.payload.as_bytes())
        .map_err(|e| anyhow!("{}: {e}", fixture.label))?;
    Ok(serde_json::from_slice(&answer)?)
}

/// A module's answer in a few words: `rejected` or `accepted`, with its findings as its
/// `syncguard.io/findings` audit annotation lists them (`rule at path`), else its warnings'
/// count.
fn answer_in_words(answer: &Value) -> String {
    let verdict = if answer["accepted"] == true {
        "accepted"
    } else {
        "rejected"
    };
    let listed: Option<Value> = answer["audit_annotations"][syncguard::render::FINDINGS_ANNOTATION]
        .as_str()
        .and_then(|text| serde_json::from_str(text).ok());
    if let Some(listed) = listed {
        let findings: Vec<String> = listed["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| {
                let (rule, path) = (f["rule"].as_str().unwrap_or("?"), f["path"].as_str().unwrap_or(""));
                if path.is_empty() {
                    rule.to_string()
                } else {
                    format!("{rule} at {path}")
                }
            })
            .collect();
        return format!("{verdict}, {} finding(s): {}", listed["total"], findings.join(", "));
    }
    match answer["warnings"].as_array().map_or(0, Vec::len) {
        0 => verdict.to_string(),
        n => format!("{verdict} with {n} warnings"),
    }
}

/// The fixtures of `policy`: every case of its cases.yml with a request (a request file, or one
/// the test kit builds from a manifest, an upgrade or a create) and valid settings.
fn fixtures(dir: &Path, policy: &str) -> Result<Vec<Fixture>> {
    let data = dir.join(policy).join("test_data");
    let text = std::fs::read_to_string(data.join("cases.yml")).with_context(|| format!("{policy}: cases.yml"))?;
    let cases: Cases = serde_yaml_ng::from_str(&text).map_err(|e| anyhow!("{policy}/test_data/cases.yml: {e}"))?;
    let mut out = Vec::new();
    for case in cases.cases {
        if case.expect.settings_invalid.is_some() {
            continue;
        }
        let text = match &case.request {
            Some(request) => {
                std::fs::read_to_string(data.join(request)).with_context(|| format!("{policy}/{request}"))?
            }
            // The test kit reads the repository's own test data for the other forms.
            None => match syncguard_testkit::cases::request_of(policy, &case) {
                Some(request) => request.to_string(),
                None => continue,
            },
        };
        let doc = evaluate::read_request(&text)?;
        let settings = case.settings.clone().unwrap_or(json!({}));
        let replay = match &case.replay {
            Some(file) => Some(std::fs::read_to_string(data.join(file)).with_context(|| format!("{policy}/{file}"))?),
            None => None,
        };
        out.push(Fixture {
            label: format!("{policy}/{}", case.name),
            payload: evaluate::payload(&doc, &settings),
            settings,
            replay,
        });
    }
    Ok(out)
}

/// The same request with the settings moved into the check's section of the all-in-one.
fn all_in_one_payload(settings_key: &str, fixture: &Fixture) -> Result<String> {
    let mut value: Value = serde_json::from_str(&fixture.payload)?;
    let own = value["settings"].take();
    value["settings"] = json!({ settings_key: own });
    Ok(value.to_string())
}

/// Runs the benchmark and prints the table.
pub fn bench(args: BenchArgs) -> Result<()> {
    let engine = Engine::new(Limits {
        timeout: Duration::from_secs(30),
        ..Limits::default()
    })?;
    let load = |path: &Path| -> Result<Module> {
        engine.compile(&std::fs::read(path).with_context(|| format!("{}: run `make build`", path.display()))?)
    };
    let floor = load(&args.floor)?;
    let read_floor = load(&args.read_floor)?;
    let mut policies = Vec::new();
    for entry in CHECKS {
        let dir = args.policies_dir.join(entry.name);
        let module = if dir.join("annotated-policy.wasm").is_file() {
            dir.join("annotated-policy.wasm")
        } else {
            dir.join("policy.wasm")
        };
        policies.push(Policy {
            name: entry.name.to_string(),
            settings_key: entry.settings_key.to_string(),
            module,
            fixtures: fixtures(&args.policies_dir, entry.name)?,
        });
    }
    let old = old_modules(&engine, &args, &policies);
    let mut upgrade = upgrade_fixtures(&args.policies_dir)?;
    if let Some(policy) = policies.iter().find(|p| p.name == "crd-safe-upgrade") {
        let module = load(&policy.module)?;
        upgrade.answer = answer_in_words(&answer_of(&module, &upgrade.update)?);
    }
    let mut sweeps = (0..SWEEPS).map(|i| {
        eprintln!("bench: sweep {} of {SWEEPS}", i + 1);
        sweep(&engine, &floor, &read_floor, &args, &policies, &old, &upgrade)
    });
    let mut best = sweeps.next().unwrap_or_else(|| Err(anyhow!("no sweep")))?;
    for next in sweeps {
        best.keep_best(next?);
    }
    let upgrade_figures = best.upgrade.take().map(|(safe, schema)| UpgradeFigures {
        change: upgrade.change.clone(),
        update_bytes: upgrade.update.payload.len(),
        create_bytes: upgrade.create.payload.len(),
        answer: upgrade.answer.clone(),
        safe_upgrade_median_us: safe,
        schema_fields_median_us: schema,
    });
    let mut report = Report {
        baseline_commit: baseline::COMMIT,
        baseline_unavailable: old.unavailable.clone(),
        modules: best.figures(&old),
        upgrade: upgrade_figures,
        scans: Vec::new(),
        custom_resource_scan: None,
        lookup: None,
        custom_resource: None,
        goals: Vec::new(),
    };
    report.custom_resource = Some(custom_resource_cost(
        &engine,
        &args.policies_dir,
        &floor,
        &read_floor,
        args.iterations,
    )?);
    let jobs = default_jobs();
    if args.scan_manifests > 0 {
        for (tree, every, label) in [
            (&args.scan_tree, inputs::FEW_CRDS, "one in a hundred a CRD"),
            (&args.scan_crd_tree, CRD_HEAVY_EVERY, "a quarter CRDs"),
        ] {
            let files = inputs::generate(tree, args.scan_manifests, every)?;
            let input = format!("{} generated manifests, {label}", args.scan_manifests);
            report
                .scans
                .push(scan_throughput(&args.policies_dir, tree, files, input, jobs)?);
        }
        let tree = &args.scan_certificate_tree;
        let files = inputs::generate_certificates(tree, args.scan_manifests, &args.certificate_crd)?;
        let input = format!(
            "{} generated cert-manager Certificates and their CRD",
            args.scan_manifests
        );
        report.custom_resource_scan = Some(scan_throughput(&args.policies_dir, tree, files, input, jobs)?);
    }
    if args.real_crds.is_file() {
        let crds = inputs::real_crds(&args.real_crds)?;
        let files = inputs::write_real_crds(&args.real_crds_dir, &crds)?;
        let input = format!("{files} real CRDs of widely used projects");
        report.scans.push(scan_throughput(
            &args.policies_dir,
            &args.real_crds_dir,
            files,
            input,
            jobs,
        )?);
        if args.cluster_crds > 0 {
            report.lookup = Some(lookup_cost(
                &engine,
                &args.policies_dir,
                &floor,
                &crds,
                args.cluster_crds,
                args.iterations,
            )?);
        }
    }
    goals(&mut report, policies.len());
    custom_resource_goal(&mut report);
    print_table(&report);
    if let Some(dir) = args.json_out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&args.json_out, serde_json::to_string_pretty(&report)?)?;
    println!("\nwritten to {}", args.json_out.display());
    Ok(())
}

/// The modules of the baseline commit (built when missing, see [`crate::baseline`]), and for
/// each fixture whether it gets a baseline figure: not when the commit had no such policy or no
/// such case, or when its module refuses the case's settings (settings keys added since).
fn old_modules(engine: &Engine, args: &BenchArgs, policies: &[Policy]) -> Old {
    let names: Vec<&str> = policies.iter().map(|p| p.name.as_str()).collect();
    let mut old = Old {
        modules: BTreeMap::new(),
        missing: BTreeMap::new(),
        differs: BTreeSet::new(),
        unavailable: None,
    };
    let built = baseline::prepare(&args.baseline_dir, &names, &args.wasm_opt).and_then(|built: Baseline| {
        let mut modules = BTreeMap::new();
        for (policy, path) in &built.modules {
            let wasm = std::fs::read(path).with_context(|| format!("{}", path.display()))?;
            modules.insert(policy.clone(), engine.compile(&wasm)?);
        }
        Ok((built, modules))
    });
    let (built, modules) = match built {
        Ok(built) => built,
        Err(e) => {
            eprintln!("bench: no figures of {}: {e:#}", baseline::COMMIT);
            old.unavailable = Some(format!("{e:#}"));
            return old;
        }
    };
    for policy in policies {
        let Some(module) = modules.get(&policy.name) else {
            for f in &policy.fixtures {
                old.missing
                    .insert(f.label.clone(), format!("{} had no {}", baseline::COMMIT, policy.name));
            }
            continue;
        };
        let today = std::fs::read(&policy.module)
            .map_err(anyhow::Error::from)
            .and_then(|wasm| engine.compile(&wasm));
        for f in &policy.fixtures {
            let case = f.label.rsplit('/').next().unwrap_or_default();
            if !built.cases.get(&policy.name).is_some_and(|names| names.contains(case)) {
                old.missing
                    .insert(f.label.clone(), format!("case new since {}", baseline::COMMIT));
                continue;
            }
            let refused = module
                .instantiate(Capabilities::default())
                .map_err(|e| format!("{e:#}"))
                .and_then(|instance| {
                    evaluate::validate_settings(&instance, &f.settings).map_err(|e| match e {
                        evaluate::EvalError::InvalidSettings(message) => message,
                        evaluate::EvalError::Other(e) => format!("{e:#}"),
                    })
                });
            if let Err(why) = refused {
                old.missing.insert(
                    f.label.clone(),
                    format!("settings refused at {}: {why}", baseline::COMMIT),
                );
                continue;
            }
            if let (Ok(today), Ok(then)) = (&today, answer_of(module, f))
                && let Ok(now) = answer_of(today, f)
                && now["accepted"] != then["accepted"]
            {
                old.differs.insert(f.label.clone());
            }
        }
    }
    old.modules = modules;
    old
}

/// The UPDATE of the Prometheus CRD (crd-safe-upgrade, default settings) and its CREATE
/// (crd-schema-fields, default settings).
pub(crate) struct Upgrade {
    /// The UPDATE.
    pub(crate) update: Fixture,
    create: Fixture,
    /// The change, in words.
    change: String,
    /// crd-safe-upgrade's answer, in words (see [`answer_in_words`]).
    answer: String,
}

/// The Prometheus operator's `prometheuses` CRD as a CREATE, and an UPDATE from it to a copy
/// with one change deep in the schema ([`deep_change`]); both installed objects carry
/// `status.storedVersions` (the storage version), as the API server sends an update of a CRD.
pub(crate) fn upgrade_fixtures(policies_dir: &Path) -> Result<Upgrade> {
    let path = policies_dir.join(PROMETHEUS_CRD);
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let create = evaluate::read_request(&text)?;
    let request: Value = serde_json::from_str(&create.raw)?;
    let mut old = request["object"].clone();
    let storage = old["spec"]["versions"]
        .as_array()
        .and_then(|versions| versions.iter().find(|v| v["storage"] == true))
        .map(|v| v["name"].clone())
        .unwrap_or(Value::Null);
    old["status"] = json!({"storedVersions": [storage]});
    let mut new = old.clone();
    let change = deep_change(&mut new).ok_or_else(|| anyhow!("{}: no schema node to change", path.display()))?;
    let update = syncguard_testkit::crd_request(syncguard_scan::Operation::Update.as_str(), &new, Some(&old));
    let update = evaluate::read_request(&update.to_string())?;
    Ok(Upgrade {
        update: Fixture {
            label: "crd-safe-upgrade/prometheuses UPDATE".into(),
            payload: evaluate::payload(&update, &json!({})),
            settings: json!({}),
            replay: None,
        },
        create: Fixture {
            label: "crd-schema-fields/prometheuses CREATE".into(),
            payload: evaluate::payload(&create, &json!({})),
            settings: json!({}),
            replay: None,
        },
        change,
        answer: String::new(),
    })
}

/// Tightens a bound of the deepest schema node of `crd` that has one (in the first version that
/// has one): its `maximum` lowered by one, or else its `minimum` raised by one; returns the
/// change in words, the node named by its field path (`[*]` for a list's items) and its depth
/// (a field or a list's items is one level).
fn deep_change(crd: &mut Value) -> Option<String> {
    /// The deepest node with a bound under `node`: (depth, field path, the node's JSON pointer).
    fn deepest(node: &Value, depth: usize, path: &str, pointer: &str, best: &mut Option<(usize, String, String)>) {
        let Some(map) = node.as_object() else {
            return;
        };
        let bounded = ["maximum", "minimum"]
            .iter()
            .any(|k| map.get(*k).is_some_and(Value::is_number));
        if bounded && best.as_ref().is_none_or(|(d, _, _)| depth > *d) {
            *best = Some((depth, path.to_string(), pointer.to_string()));
        }
        if let Some(properties) = map.get("properties").and_then(Value::as_object) {
            for (name, child) in properties {
                let field = if path.is_empty() {
                    name.clone()
                } else {
                    format!("{path}.{name}")
                };
                let escaped = name.replace('~', "~0").replace('/', "~1");
                deepest(
                    child,
                    depth + 1,
                    &field,
                    &format!("{pointer}/properties/{escaped}"),
                    best,
                );
            }
        }
        if let Some(items) = map.get("items") {
            deepest(
                items,
                depth + 1,
                &format!("{path}[*]"),
                &format!("{pointer}/items"),
                best,
            );
        }
    }
    let versions = crd["spec"]["versions"].as_array()?.len();
    for v in 0..versions {
        let root = format!("/spec/versions/{v}/schema/openAPIV3Schema");
        let mut best = None;
        deepest(crd.pointer(&root)?, 0, "", &root, &mut best);
        let Some((depth, path, pointer)) = best else {
            continue;
        };
        let version = crd["spec"]["versions"][v]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let node = crd.pointer_mut(&pointer)?.as_object_mut()?;
        let (key, step) = if node.get("maximum").is_some_and(Value::is_number) {
            ("maximum", -1.0)
        } else {
            ("minimum", 1.0)
        };
        let before = node[key].clone();
        let after = match before.as_i64() {
            Some(n) => Value::from(n + step as i64),
            None => Value::from(before.as_f64()? + step),
        };
        node.insert(key.to_string(), after.clone());
        let verb = if step < 0.0 { "lowered" } else { "raised" };
        return Some(format!(
            "{key} {verb} from {before} to {after} at {path} of version {version}, {depth} levels deep"
        ));
    }
    None
}

/// The fixture figures of one sweep.
struct Sweep {
    modules: Vec<ModuleFigures>,
    /// Median of each single check on each fixture, by fixture label and check name.
    singles: BTreeMap<(String, String), f64>,
    /// crd-safe-upgrade's median on the Prometheus UPDATE, crd-schema-fields' on its CREATE.
    upgrade: Option<(f64, f64)>,
}

impl Sweep {
    /// Keeps, figure by figure, the lower of this sweep's and `other`'s.
    fn keep_best(&mut self, other: Sweep) {
        for (module, next) in self.modules.iter_mut().zip(other.modules) {
            module.cold_start_ms = module.cold_start_ms.min(next.cold_start_ms);
            for (f, n) in module.fixtures.iter_mut().zip(next.fixtures) {
                if n.median_us < f.median_us {
                    f.median_us = n.median_us;
                    f.p95_us = n.p95_us;
                }
                f.floor_median_us = f.floor_median_us.min(n.floor_median_us);
                f.read_floor_median_us = f.read_floor_median_us.min(n.read_floor_median_us);
                f.ratio_to_floor = f.median_us / f.floor_median_us.max(1e-3);
                f.ratio_to_read_floor = f.median_us / f.read_floor_median_us.max(1e-3);
                f.baseline_median_us = match (f.baseline_median_us, n.baseline_median_us) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
            }
        }
        for (key, median) in other.singles {
            let kept = self.singles.entry(key).or_insert(median);
            *kept = kept.min(median);
        }
        self.upgrade = match (self.upgrade, other.upgrade) {
            (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.min(b.1))),
            (a, b) => a.or(b),
        };
    }

    /// The modules' figures: the single checks' with the notes of their baseline figures, the
    /// all-in-one's with each single check on each fixture and the sum of their own work.
    fn figures(mut self, old: &Old) -> Vec<ModuleFigures> {
        let mut by_fixture: BTreeMap<&str, Vec<(&str, f64)>> = BTreeMap::new();
        for ((label, check), median) in &self.singles {
            by_fixture.entry(label).or_default().push((check, *median));
        }
        for module in &mut self.modules {
            for f in &mut module.fixtures {
                if module.module == ALL_IN_ONE {
                    let Some(singles) = by_fixture.get(f.fixture.as_str()) else {
                        continue;
                    };
                    f.checks_sum_us = checks_sum(singles);
                    f.single_checks_us = Some(singles.iter().map(|(c, m)| (c.to_string(), *m)).collect());
                } else if let Some(why) = old.missing.get(&f.fixture) {
                    f.baseline_note = Some(format!("n/a: {why}"));
                } else if old.differs.contains(&f.fixture) {
                    f.baseline_note = Some(format!("{} answers otherwise", baseline::COMMIT));
                }
            }
        }
        self.modules
    }
}

/// One sweep: every single-check module on its own fixtures, each fixture timed with today's
/// module and then with the baseline commit's (when it has a figure), then the floors; the
/// all-in-one (when built) on all of them; every single check at its defaults on the others'
/// fixtures; and the Prometheus UPDATE beside its CREATE.
fn sweep(
    engine: &Engine,
    floor: &Module,
    read_floor: &Module,
    args: &BenchArgs,
    policies: &[Policy],
    old: &Old,
    upgrade: &Upgrade,
) -> Result<Sweep> {
    let mut modules = Vec::new();
    let measure = |name: &str, path: &Path, fixtures: &[Fixture], baseline: Option<&Module>| -> Result<ModuleFigures> {
        let wasm = std::fs::read(path).with_context(|| format!("{}: run `make build`", path.display()))?;
        let mut cold = Vec::new();
        for _ in 0..3 {
            let start = Instant::now();
            engine.compile_uncached(&wasm)?;
            cold.push(start.elapsed());
        }
        cold.sort();
        let module = engine.compile(&wasm)?;
        let mut figures = Vec::new();
        for fixture in fixtures {
            let (median, p95) = time_validate(&module, fixture, args.iterations)?;
            let baseline_median = match baseline {
                Some(then) if !old.missing.contains_key(&fixture.label) => {
                    Some(micros(time_validate(then, fixture, args.iterations)?.0))
                }
                _ => None,
            };
            let floor_fixture = Fixture {
                replay: None,
                ..fixture.clone()
            };
            let (floor_median, _) = time_validate(floor, &floor_fixture, args.iterations)?;
            let (read_floor_median, _) = time_validate(read_floor, &floor_fixture, args.iterations)?;
            figures.push(FixtureFigures {
                fixture: fixture.label.clone(),
                request_bytes: fixture.payload.len(),
                median_us: micros(median),
                p95_us: micros(p95),
                floor_median_us: micros(floor_median),
                ratio_to_floor: median.as_secs_f64() / floor_median.as_secs_f64().max(1e-9),
                read_floor_median_us: micros(read_floor_median),
                ratio_to_read_floor: median.as_secs_f64() / read_floor_median.as_secs_f64().max(1e-9),
                baseline_median_us: baseline_median,
                baseline_note: None,
                checks_sum_us: None,
                single_checks_us: None,
            });
        }
        let bytes = std::fs::metadata(
            path.with_file_name(
                path.file_name()
                    .map_or("".into(), |n| n.to_string_lossy().replace("annotated-", "")),
            ),
        )
        .or_else(|_| std::fs::metadata(path))?
        .len();
        Ok(ModuleFigures {
            module: name.to_string(),
            bytes,
            cold_start_ms: cold[1].as_secs_f64() * 1e3,
            fixtures: figures,
        })
    };
    let mut all_fixtures = Vec::new();
    for policy in policies {
        modules.push(measure(
            &policy.name,
            &policy.module,
            &policy.fixtures,
            old.modules.get(&policy.name),
        )?);
        for f in &policy.fixtures {
            all_fixtures.push(Fixture {
                payload: all_in_one_payload(&policy.settings_key, f)?,
                ..f.clone()
            });
        }
    }
    let mut singles = BTreeMap::new();
    if args.all_in_one.is_file() {
        modules.push(measure(ALL_IN_ONE, &args.all_in_one, &all_fixtures, None)?);
        singles = single_checks(engine, &modules, policies, args.iterations)?;
    }
    let upgrade = upgrade_pair(engine, policies, upgrade, args.iterations)?;
    Ok(Sweep {
        modules,
        singles,
        upgrade,
    })
}

/// crd-safe-upgrade's median on the Prometheus UPDATE and crd-schema-fields' on its CREATE,
/// their calls interleaved (one of each in turn), so that both see the machine in the same state
/// and their ratio holds on a shared machine whose speed moves from second to second; `None`
/// when either check is missing.
fn upgrade_pair(
    engine: &Engine,
    policies: &[Policy],
    upgrade: &Upgrade,
    iterations: usize,
) -> Result<Option<(f64, f64)>> {
    let module = |name: &str| -> Result<Option<Module>> {
        let Some(policy) = policies.iter().find(|p| p.name == name) else {
            return Ok(None);
        };
        let wasm = std::fs::read(&policy.module).with_context(|| format!("{}", policy.module.display()))?;
        Ok(Some(engine.compile(&wasm)?))
    };
    let (Some(safe_upgrade), Some(schema_fields)) = (module("crd-safe-upgrade")?, module("crd-schema-fields")?) else {
        return Ok(None);
    };
    let medians = time_interleaved(
        &[(&safe_upgrade, &upgrade.update), (&schema_fields, &upgrade.create)],
        iterations,
    )?;
    Ok(Some((micros(medians[0]), micros(medians[1]))))
}

/// The median of `iterations` `validate` calls of each module on its fixture (each on one
/// instance, after a first call), the modules called in turn.
fn time_interleaved(pairs: &[(&Module, &Fixture)], iterations: usize) -> Result<Vec<Duration>> {
    let instances = pairs
        .iter()
        .map(|(module, fixture)| module.instantiate(capabilities(fixture)?))
        .collect::<Result<Vec<_>>>()?;
    let mut samples = vec![Vec::with_capacity(iterations); pairs.len()];
    for i in 0..iterations + 1 {
        for ((instance, (_, fixture)), samples) in instances.iter().zip(pairs).zip(&mut samples) {
            let elapsed = timed_validate(instance, fixture)?;
            if i > 0 {
                samples.push(elapsed);
            }
        }
    }
    Ok(samples
        .into_iter()
        .map(|mut samples| {
            samples.sort();
            percentile(&samples, 0.5)
        })
        .collect())
}

/// What the all-in-one would cost if it added nothing to its checks: the shared read (the part
/// every check pays: reading the request, the settings, the answer), taken as the cheapest
/// single check on the request, plus each single check's time beyond it, which is the work of
/// the checks that apply. Every fixture has a check whose rules do not match it (hook-job-safety
/// on a CRD, the CRD checks on anything else), and that check's time is the shared read alone.
fn checks_sum(singles: &[(&str, f64)]) -> Option<f64> {
    let shared = singles.iter().map(|s| s.1).min_by(f64::total_cmp)?;
    Some(shared + singles.iter().map(|s| s.1 - shared).sum::<f64>())
}

/// Each single check's median on each fixture (by label and check): the fixture's own check
/// with the case's settings (already measured, in `measured`), every other check at its
/// defaults with the same replay, as the all-in-one runs them.
fn single_checks(
    engine: &Engine,
    measured: &[ModuleFigures],
    policies: &[Policy],
    iterations: usize,
) -> Result<BTreeMap<(String, String), f64>> {
    let mut medians = BTreeMap::new();
    for module in measured.iter().filter(|m| m.module != ALL_IN_ONE) {
        for f in &module.fixtures {
            medians.insert((f.fixture.clone(), module.module.clone()), f.median_us);
        }
    }
    for check in policies {
        let wasm = std::fs::read(&check.module).with_context(|| format!("{}", check.module.display()))?;
        let module = engine.compile(&wasm)?;
        for policy in policies.iter().filter(|p| p.name != check.name) {
            for fixture in &policy.fixtures {
                let mut value: Value = serde_json::from_str(&fixture.payload)?;
                value["settings"] = json!({});
                let at_defaults = Fixture {
                    payload: value.to_string(),
                    ..fixture.clone()
                };
                let (median, _) = time_validate(&module, &at_defaults, iterations)?;
                medians.insert((fixture.label.clone(), check.name.clone()), micros(median));
            }
        }
    }
    Ok(medians)
}

fn goals(report: &mut Report, singles: usize) {
    for m in &report.modules[..singles.min(report.modules.len())] {
        let compared: Vec<(&FixtureFigures, f64)> = m
            .fixtures
            .iter()
            .filter_map(|f| Some((f, f.median_us / f.baseline_median_us?.max(1e-9))))
            .collect();
        let over = compared
            .iter()
            .filter(|(_, ratio)| *ratio > BASELINE_RATIO_GOAL)
            .count();
        let worst = compared.iter().max_by(|a, b| a.1.total_cmp(&b.1));
        let left_out = m.fixtures.len() - compared.len();
        // A check that did not exist at the baseline commit (sync-drift) has no fixture to be
        // compared on: the goal is not its.
        if compared.is_empty() && report.baseline_unavailable.is_none() {
            continue;
        }
        report.goals.push(Goal {
            goal: format!(
                "{} warm validate on every fixture at most {BASELINE_RATIO_GOAL}x its figure at {} (same run)",
                m.module,
                baseline::COMMIT
            ),
            measured: match (worst, &report.baseline_unavailable) {
                (_, Some(why)) => format!("not measured: {why}"),
                (Some((f, ratio)), None) => format!(
                    "{over} of {} fixtures over; worst {ratio:.2}x on {} ({:.1} us vs {:.1} us){}",
                    compared.len(),
                    f.fixture,
                    f.median_us,
                    f.baseline_median_us.unwrap_or_default(),
                    if left_out > 0 {
                        format!("; {left_out} fixtures n/a")
                    } else {
                        String::new()
                    }
                ),
                (None, None) => format!("no fixture has a figure at {}", baseline::COMMIT),
            },
            met: over == 0 && !compared.is_empty(),
        });
    }
    if let Some(all) = report.modules.get(singles) {
        let mut against_sum: Vec<(&FixtureFigures, f64)> = all
            .fixtures
            .iter()
            .filter_map(|f| Some((f, f.median_us / f.checks_sum_us?.max(1e-9))))
            .collect();
        against_sum.sort_by(|a, b| a.1.total_cmp(&b.1));
        let over = against_sum.iter().filter(|(_, r)| *r > ALL_IN_ONE_RATIO_GOAL).count();
        report.goals.push(Goal {
            goal: format!(
                "all-in-one warm validate at most {ALL_IN_ONE_RATIO_GOAL}x the shared read plus the work of the checks that apply, on every fixture"
            ),
            measured: match (against_sum.get(against_sum.len() / 2), against_sum.last()) {
                (Some((_, median)), Some((worst, ratio))) => format!(
                    "{over} of {} fixtures over; median {median:.2}x; worst {ratio:.2}x on {} ({:.1} us vs {:.1} us)",
                    against_sum.len(),
                    worst.fixture,
                    worst.median_us,
                    worst.checks_sum_us.unwrap_or_default()
                ),
                _ => "no fixture measured".into(),
            },
            met: over == 0 && !against_sum.is_empty(),
        });
    }
    for m in &report.modules[..singles.min(report.modules.len())] {
        // The Prometheus operator's `prometheuses` CRD itself (not every fixture that names
        // Prometheus: Istio's Prometheus add-on, the operator's upgrades).
        if let Some(f) = m
            .fixtures
            .iter()
            .find(|f| f.fixture.contains("prometheus-operator-prometheuses"))
        {
            report.goals.push(Goal {
                goal: format!(
                    "{} warm validate on the Prometheus CRD at most {FLOOR_RATIO_GOAL}x the floor",
                    m.module
                ),
                measured: format!(
                    "{:.2}x ({:.0} us vs {:.0} us); {:.2}x the read floor ({:.0} us, parsing the request and nothing else)",
                    f.ratio_to_floor, f.median_us, f.floor_median_us, f.ratio_to_read_floor, f.read_floor_median_us
                ),
                met: f.ratio_to_floor <= FLOOR_RATIO_GOAL,
            });
        }
    }
    let drift = report.modules[..singles.min(report.modules.len())]
        .iter()
        .find(|m| m.module == "sync-drift");
    for label in DRIFT_CLEAN_FIXTURES {
        let figures = drift.and_then(|m| m.fixtures.iter().find(|f| f.fixture == label));
        report.goals.push(Goal {
            goal: format!(
                "sync-drift warm validate on {label} (a Deployment without drift) at most {DRIFT_READ_FLOOR_GOAL}x the read floor"
            ),
            measured: match figures {
                Some(f) => format!(
                    "{:.2}x ({:.1} us vs {:.1} us; the no-op floor {:.1} us)",
                    f.ratio_to_read_floor, f.median_us, f.read_floor_median_us, f.floor_median_us
                ),
                None => "not measured: the fixture is missing".into(),
            },
            met: figures.is_some_and(|f| f.ratio_to_read_floor <= DRIFT_READ_FLOOR_GOAL),
        });
    }
    if let Some(upgrade) = &report.upgrade {
        let ratio = upgrade.safe_upgrade_median_us / upgrade.schema_fields_median_us.max(1e-9);
        report.goals.push(Goal {
            goal: format!(
                "crd-safe-upgrade warm validate on an UPDATE of the Prometheus CRD to a changed copy within {UPGRADE_RATIO_GOAL}x crd-schema-fields' on its CREATE"
            ),
            measured: format!(
                "{ratio:.2}x ({:.0} us vs {:.0} us; {}; {})",
                upgrade.safe_upgrade_median_us, upgrade.schema_fields_median_us, upgrade.change, upgrade.answer
            ),
            met: ratio <= UPGRADE_RATIO_GOAL,
        });
    }
    scan_goal(report);
}

fn scan_goal(report: &mut Report) {
    let generated = report.scans.len().min(2);
    for (i, scan) in report.scans.iter().enumerate() {
        let measured = format!(
            "{:.0} per second, {:.2} s ({} documents, {} evaluations, {} jobs)",
            scan.documents_per_second, scan.seconds, scan.documents, scan.evaluations, scan.jobs
        );
        let goal = if i < generated {
            Goal {
                goal: format!(
                    "scan of {} at {SCAN_RATE_GOAL:.0} manifests per second or more",
                    scan.input
                ),
                measured,
                met: scan.documents_per_second >= SCAN_RATE_GOAL,
            }
        } else {
            Goal {
                goal: format!("scan of {} in {REAL_CRDS_SECONDS_GOAL:.0} s or less", scan.input),
                measured,
                met: scan.seconds <= REAL_CRDS_SECONDS_GOAL,
            }
        };
        report.goals.push(goal);
    }
    if let (Some(custom), Some(manifests)) = (&report.custom_resource_scan, report.scans.first()) {
        // Per CPU: both scans run on the same number of threads.
        let per_cpu = |scan: &ScanFigures| scan.documents_per_second / scan.jobs.max(1) as f64;
        report.goals.push(Goal {
            goal: format!(
                "scan of {} per CPU at least as fast as of {} (the CRD's schema compiled once per scan)",
                custom.input, manifests.input
            ),
            measured: format!(
                "{:.0} vs {:.0} documents per second per CPU ({:.2}x; {} and {} evaluations, {} jobs)",
                per_cpu(custom),
                per_cpu(manifests),
                per_cpu(custom) / per_cpu(manifests).max(1e-9),
                custom.evaluations,
                manifests.evaluations,
                custom.jobs
            ),
            met: per_cpu(custom) >= per_cpu(manifests),
        });
    }
    if let Some(lookup) = &report.lookup {
        report.goals.push(Goal {
            goal: format!(
                "{LOOKUP_POLICY} with {} CRDs in the cluster: at most {} MiB handed to the module per lookup",
                lookup.crds,
                LOOKUP_BYTES_GOAL / (1024 * 1024)
            ),
            measured: format!(
                "{:.2} MiB (without field masks {:.1} MiB, whole objects {:.1} MiB); warm validate {:.1} ms vs the floor's {:.3} ms",
                mib(lookup.bytes_per_lookup),
                mib(lookup.unmasked_bytes),
                mib(lookup.whole_bytes),
                lookup.median_us / 1e3,
                lookup.floor_median_us / 1e3
            ),
            met: lookup.bytes_per_lookup <= LOOKUP_BYTES_GOAL,
        });
    }
}

/// Goal: sync-drift on a custom resource of a large CRD, on one instance reused (the schema
/// parsed once), at most this multiple of the read floor on what the module receives: the
/// request, and the CRD the host hands it (the read floor on the CRD's own CREATE).
const CUSTOM_RESOURCE_READ_FLOOR_GOAL: f64 = 2.0;

fn custom_resource_goal(report: &mut Report) {
    let Some(cr) = &report.custom_resource else {
        return;
    };
    let floor = (cr.read_floor_median_us + cr.crd_read_floor_median_us).max(1e-3);
    report.goals.push(Goal {
        goal: format!(
            "{DRIFT_POLICY} on {} (its CRD, {:.0} KB, fetched through the host) at most {CUSTOM_RESOURCE_READ_FLOOR_GOAL}x the read floor on the request and the CRD, on an instance reused",
            cr.resource,
            cr.crd_bytes as f64 / 1e3
        ),
        measured: format!(
            "{:.2}x ({:.0} us vs {:.0} + {:.0} us); on a fresh instance per call (the CRD parsed every time, as in policy-server) {:.0} us, {:.1}x",
            cr.reused_median_us / floor,
            cr.reused_median_us,
            cr.read_floor_median_us,
            cr.crd_read_floor_median_us,
            cr.fresh_median_us,
            cr.fresh_median_us / floor
        ),
        met: cr.reused_median_us <= CUSTOM_RESOURCE_READ_FLOOR_GOAL * floor,
    });
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Answers lookups with fixed bytes: the List Kubewarden would send, computed once.
struct Fixed(Vec<u8>);

impl Lookups for Fixed {
    fn answer(&self, _request: &HostRequest) -> Result<Vec<u8>, String> {
        Ok(self.0.clone())
    }
}

/// crd-kind-collision's lookup in a cluster of `count` CRDs built from the real ones: the
/// cluster answers the module's own request (its field masks) the way `syncguard scan` does;
/// the module then validates a CRD CREATE against that answer, warm, beside the floor.
fn lookup_cost(
    engine: &Engine,
    policies_dir: &Path,
    floor: &Module,
    real: &[Value],
    count: usize,
    iterations: usize,
) -> Result<LookupFigures> {
    use syncguard_scan::cluster::OfflineCluster;
    use syncguard_scan::input::{Document, ObjectInfo};
    let objects = inputs::cluster_crds(real, count);
    let whole_bytes = objects.iter().map(|o| o.len() + 1).sum::<usize>() + 1;
    let documents: Vec<Document> = objects
        .into_iter()
        .enumerate()
        .map(|(index, json)| {
            let name = serde_json::from_str::<Value>(&json)
                .ok()
                .and_then(|v| v["metadata"]["name"].as_str().map(str::to_string));
            Document {
                source: 0,
                line: 1,
                index,
                item: None,
                info: ObjectInfo {
                    api_version: "apiextensions.k8s.io/v1".into(),
                    group: "apiextensions.k8s.io".into(),
                    version: "v1".into(),
                    kind: "CustomResourceDefinition".into(),
                    name,
                    namespace: None,
                },
                object: json.into(),
                crd_names: None,
                old: None,
                cluster_scoped: false,
                kustomize: None,
            }
        })
        .collect();
    let cluster = Arc::new(OfflineCluster::new(&documents, &[]));
    drop(documents);
    // The CRD under admission: a real one's schemas under a kind and names no group serves yet,
    // so that the check reads the whole list and accepts.
    let mut crd = real[0].clone();
    crd["metadata"]["name"] = "benchwidgets.bench.example.com".into();
    crd["spec"]["group"] = "bench.example.com".into();
    crd["spec"]["names"] = json!({
        "kind": "BenchWidget",
        "listKind": "BenchWidgetList",
        "plural": "benchwidgets",
        "singular": "benchwidget",
    });
    let request = syncguard_testkit::crd_request(syncguard_scan::Operation::Create.as_str(), &crd, None);
    let payload = syncguard_testkit::payload(&request, &json!({}));
    // The module's own request, recorded from one call, answered as scan answers it.
    let (module, asked) = recorded_lookup(engine, policies_dir, LOOKUP_POLICY, &payload)?;
    let started = Instant::now();
    let answer = Lookups::answer(cluster.as_ref(), &asked).map_err(|e| anyhow!(e))?;
    let answer_ms = started.elapsed().as_secs_f64() * 1e3;
    let mut unmasked_request = asked.clone();
    unmasked_request.fields.insert("field_masks".into(), Value::Null);
    let unmasked_bytes = Lookups::answer(cluster.as_ref(), &unmasked_request)
        .map_err(|e| anyhow!(e))?
        .len();
    let bytes_per_lookup = answer.len();
    let fixture = Fixture {
        label: format!("{LOOKUP_POLICY}/{count} CRDs in the cluster"),
        payload,
        settings: json!({}),
        replay: None,
    };
    let answer = Arc::new(Fixed(answer));
    let instance = || {
        module.instantiate(Capabilities {
            allow_context_aware: true,
            granted: Vec::new(),
            replay: None,
            lookups: Some(answer.clone()),
        })
    };
    let (median, p95) = time_calls(instance, true, &fixture, iterations)?;
    let (reused_median, _) = time_calls(instance, false, &fixture, iterations)?;
    let (floor_median, _) = time_validate(floor, &fixture, iterations)?;
    Ok(LookupFigures {
        crds: count,
        whole_bytes,
        unmasked_bytes,
        bytes_per_lookup,
        answer_ms,
        median_us: micros(median),
        p95_us: micros(p95),
        reused_median_us: micros(reused_median),
        floor_median_us: micros(floor_median),
    })
}

/// The check measured on a custom resource.
const DRIFT_POLICY: &str = "sync-drift";

/// sync-drift on a CREATE of a Prometheus (kube-prometheus' own, trimmed) in a cluster holding
/// the Prometheus operator's CRD: the module's `get_resource` is answered as `syncguard scan`
/// answers it (masked once, then the same bytes on every call).
fn custom_resource_cost(
    engine: &Engine,
    policies_dir: &Path,
    floor: &Module,
    read_floor: &Module,
    iterations: usize,
) -> Result<CustomResourceFigures> {
    use syncguard_scan::cluster::OfflineCluster;
    let path = policies_dir.join(PROMETHEUS_CRD);
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let crd_fixture = Fixture {
        label: "crd-schema-fields/prometheuses CREATE".into(),
        payload: evaluate::payload(&evaluate::read_request(&text)?, &json!({})),
        settings: json!({}),
        replay: None,
    };
    let crd = serde_json::from_str::<Value>(&text)?["object"].clone();
    let cluster = Arc::new(OfflineCluster::of_objects(&[crd]));
    // kube-prometheus' manifests/prometheus-prometheus.yaml (v0.14.0), labels shortened.
    let prometheus = json!({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "Prometheus",
        "metadata": {"name": "k8s", "namespace": "monitoring", "labels": {"app.kubernetes.io/name": "prometheus"}},
        "spec": {
            "alerting": {"alertmanagers": [{"apiVersion": "v2", "name": "alertmanager-main", "namespace": "monitoring", "port": "web"}]},
            "enableFeatures": [],
            "externalLabels": {},
            "image": "quay.io/prometheus/prometheus:v2.54.1",
            "nodeSelector": {"kubernetes.io/os": "linux"},
            "podMetadata": {"labels": {"app.kubernetes.io/name": "prometheus"}},
            "podMonitorNamespaceSelector": {},
            "podMonitorSelector": {},
            "probeNamespaceSelector": {},
            "probeSelector": {},
            "replicas": 2,
            "resources": {"requests": {"memory": "400Mi"}},
            "ruleNamespaceSelector": {},
            "ruleSelector": {},
            "scrapeConfigNamespaceSelector": {},
            "scrapeConfigSelector": {},
            "securityContext": {"fsGroup": 2000, "runAsNonRoot": true, "runAsUser": 1000},
            "serviceAccountName": "prometheus-k8s",
            "serviceMonitorNamespaceSelector": {},
            "serviceMonitorSelector": {},
            "version": "2.54.1"
        }
    });
    let request =
        syncguard_testkit::object_request(syncguard_scan::Operation::Create.as_str(), &prometheus, "prometheuses");
    let fixture = Fixture {
        label: format!("{DRIFT_POLICY}/Prometheus"),
        payload: syncguard_testkit::payload(&request, &json!({})),
        settings: json!({}),
        replay: None,
    };
    let (module, asked) = recorded_lookup(engine, policies_dir, DRIFT_POLICY, &fixture.payload)?;
    let crd_bytes = Lookups::answer(cluster.as_ref(), &asked).map_err(|e| anyhow!(e))?.len();
    let instance = || {
        module.instantiate(Capabilities {
            allow_context_aware: true,
            granted: Vec::new(),
            replay: None,
            lookups: Some(cluster.clone()),
        })
    };
    let answer = instance()?
        .call("validate", fixture.payload.as_bytes())
        .map_err(|e| anyhow!("{}: {e}", fixture.label))?;
    let (fresh, fresh_p95) = time_calls(instance, true, &fixture, iterations)?;
    let (reused, reused_p95) = time_calls(instance, false, &fixture, iterations)?;
    let (read_floor_median, _) = time_validate(read_floor, &fixture, iterations)?;
    let (floor_median, _) = time_validate(floor, &fixture, iterations)?;
    let (crd_read_floor, _) = time_validate(read_floor, &crd_fixture, iterations)?;
    Ok(CustomResourceFigures {
        resource: "a Prometheus (monitoring.coreos.com/v1)".into(),
        request_bytes: fixture.payload.len(),
        crd_bytes,
        answer: answer_in_words(&serde_json::from_slice(&answer)?),
        fresh_median_us: micros(fresh),
        fresh_p95_us: micros(fresh_p95),
        reused_median_us: micros(reused),
        reused_p95_us: micros(reused_p95),
        read_floor_median_us: micros(read_floor_median),
        floor_median_us: micros(floor_median),
        crd_read_floor_median_us: micros(crd_read_floor),
    })
}

/// Keeps the last lookup request a module made and answers it with an empty List.
#[derive(Default)]
struct Recorder(std::sync::Mutex<Option<HostRequest>>);

impl Lookups for Recorder {
    fn answer(&self, request: &HostRequest) -> Result<Vec<u8>, String> {
        *self.0.lock().map_err(|_| "the lookup recorder broke".to_string())? = Some(request.clone());
        Ok(br#"{"items":[]}"#.to_vec())
    }
}

/// Times `iterations` calls of `validate` (after one warm-up call), on a fresh instance from
/// `instance` for each call when `fresh` (created before the clock starts), else on one.
fn time_calls(
    instance: impl Fn() -> Result<Instance>,
    fresh: bool,
    fixture: &Fixture,
    iterations: usize,
) -> Result<(Duration, Duration)> {
    let mut samples = Vec::with_capacity(iterations);
    let mut shared = instance()?;
    for i in 0..iterations + 1 {
        if fresh && i > 0 {
            shared = instance()?;
        }
        let instance = &shared;
        let start = Instant::now();
        let answer = instance
            .call("validate", fixture.payload.as_bytes())
            .map_err(|e| anyhow!("{}: {e}", fixture.label))?;
        if i > 0 {
            samples.push(start.elapsed());
        }
        if i == 0 {
            let response: Value = serde_json::from_slice(&answer)?;
            if response["accepted"] != true {
                return Err(anyhow!("{}: the module did not accept: {response}", fixture.label));
            }
        }
    }
    samples.sort();
    Ok((percentile(&samples, 0.5), percentile(&samples, 0.95)))
}

fn print_table(report: &Report) {
    let optional = |value: Option<f64>, precision: usize| value.map_or("-".to_string(), |v| format!("{v:.precision$}"));
    let commit = baseline::COMMIT;
    println!(
        "{:<28} {:>9} {:>9}   {:<52} {:>10} {:>10} {:>10} {:>7} {:>10} {:>7} {:>11} {:>7} {:>10} {:>7}",
        "module",
        "KiB",
        "cold ms",
        "fixture",
        "median us",
        "p95 us",
        "floor us",
        "ratio",
        "read us",
        "ratio",
        format!("{commit} us"),
        "ratio",
        "checks us",
        "ratio"
    );
    let mut notes: Vec<String> = Vec::new();
    for m in &report.modules {
        for (i, f) in m.fixtures.iter().enumerate() {
            let (name, size, cold) = if i == 0 {
                (
                    m.module.clone(),
                    format!("{:.1}", m.bytes as f64 / 1024.0),
                    format!("{:.1}", m.cold_start_ms),
                )
            } else {
                (String::new(), String::new(), String::new())
            };
            let fixture: String = f.fixture.chars().take(52).collect();
            let (then, then_ratio) = match (&f.baseline_note, f.baseline_median_us) {
                (Some(note), None) => {
                    notes.push(format!("{}: {note}", f.fixture));
                    ("n/a".to_string(), "n/a".to_string())
                }
                (note, Some(then)) => {
                    let mark = if let Some(note) = note {
                        notes.push(format!("{}: {note}", f.fixture));
                        "*"
                    } else {
                        ""
                    };
                    (
                        format!("{then:.1}{mark}"),
                        format!("{:.2}", f.median_us / then.max(1e-9)),
                    )
                }
                (None, None) if m.module != ALL_IN_ONE && report.baseline_unavailable.is_some() => {
                    ("n/a".to_string(), "n/a".to_string())
                }
                (None, None) => ("-".to_string(), "-".to_string()),
            };
            println!(
                "{name:<28} {size:>9} {cold:>9}   {fixture:<52} {:>10.1} {:>10.1} {:>10.1} {:>7.2} {:>10.1} {:>7.2} {then:>11} {then_ratio:>7} {:>10} {:>7}",
                f.median_us,
                f.p95_us,
                f.floor_median_us,
                f.ratio_to_floor,
                f.read_floor_median_us,
                f.ratio_to_read_floor,
                optional(f.checks_sum_us, 1),
                optional(f.checks_sum_us.map(|s| f.median_us / s.max(1e-9)), 2),
            );
        }
    }
    if !notes.is_empty() {
        println!("\nFigures at {commit}:");
        for note in notes {
            println!("  {note}");
        }
    }
    if let Some(upgrade) = &report.upgrade {
        println!(
            "\ncrd-safe-upgrade on an UPDATE of the Prometheus operator's prometheuses CRD ({} bytes; {}; {}): median {:.1} us; crd-schema-fields on its CREATE ({} bytes): median {:.1} us",
            upgrade.update_bytes,
            upgrade.change,
            upgrade.answer,
            upgrade.safe_upgrade_median_us,
            upgrade.create_bytes,
            upgrade.schema_fields_median_us
        );
    }
    for scan in report.scans.iter().chain(&report.custom_resource_scan) {
        println!(
            "\nsyncguard scan of {}: {} documents in {} files, {} evaluations on {} jobs: {:.2} s, {:.0} documents per second",
            scan.input,
            scan.documents,
            scan.files,
            scan.evaluations,
            scan.jobs,
            scan.seconds,
            scan.documents_per_second
        );
    }
    if let Some(lookup) = &report.lookup {
        println!(
            "\n{LOOKUP_POLICY} with {} CRDs in the cluster: {} bytes per lookup (without field masks {}, whole objects {}; answered once in {:.0} ms); warm validate on a fresh instance (as policy-server runs each admission) median {:.1} us, p95 {:.1} us; on one instance reused with the same List (as scan) median {:.1} us; floor {:.1} us",
            lookup.crds,
            lookup.bytes_per_lookup,
            lookup.unmasked_bytes,
            lookup.whole_bytes,
            lookup.answer_ms,
            lookup.median_us,
            lookup.p95_us,
            lookup.reused_median_us,
            lookup.floor_median_us
        );
    }
    if let Some(cr) = &report.custom_resource {
        println!(
            "\n{DRIFT_POLICY} on {} ({} bytes; its CRD {} bytes as the host hands it, answer: {}): warm validate on a fresh instance (as policy-server) median {:.1} us, p95 {:.1} us; on one instance reused (as scan) median {:.1} us, p95 {:.1} us; read floor {:.1} us (on the CRD's own CREATE {:.1} us), floor {:.1} us",
            cr.resource,
            cr.request_bytes,
            cr.crd_bytes,
            cr.answer,
            cr.fresh_median_us,
            cr.fresh_p95_us,
            cr.reused_median_us,
            cr.reused_p95_us,
            cr.read_floor_median_us,
            cr.crd_read_floor_median_us,
            cr.floor_median_us
        );
    }
    println!("\nGoals");
    for g in &report.goals {
        println!(
            "  [{}] {}: {}",
            if g.met { "met" } else { "NOT MET" },
            g.goal,
            g.measured
        );
    }
}

/// The built module of `policy` and the lookup it makes on `payload`, recorded from one call.
fn recorded_lookup(engine: &Engine, policies_dir: &Path, policy: &str, payload: &str) -> Result<(Module, HostRequest)> {
    let wasm = std::fs::read(policies_dir.join(policy).join("annotated-policy.wasm"))
        .with_context(|| format!("{policy}: run `make build`"))?;
    let module = engine.compile(&wasm)?;
    let recorder = Arc::new(Recorder::default());
    let probe = module.instantiate(Capabilities {
        allow_context_aware: true,
        granted: Vec::new(),
        replay: None,
        lookups: Some(recorder.clone()),
    })?;
    let _ = probe.call("validate", payload.as_bytes());
    let asked = recorder
        .0
        .lock()
        .map_err(|_| anyhow!("the lookup recorder broke"))?
        .clone()
        .ok_or_else(|| anyhow!("{policy} made no lookup"))?;
    Ok((module, asked))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_change_tightens_the_deepest_bound() {
        let mut crd = json!({"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": {
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "replicas": {"type": "integer", "minimum": 0},
                    "rules": {"type": "array", "items": {"type": "object", "properties": {
                        "weight": {"type": "integer", "minimum": 1, "maximum": 100}
                    }}}
                }}
            }
        }}}]}});
        let change = deep_change(&mut crd).unwrap();
        assert_eq!(
            change,
            "maximum lowered from 100 to 99 at spec.rules[*].weight of version v1, 4 levels deep"
        );
        let weight = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["rules"]
            ["items"]["properties"]["weight"];
        assert_eq!(weight["maximum"], 99);
        assert_eq!(weight["minimum"], 1);
        // Only minimums: the deepest is raised.
        let mut crd = json!({"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": {
            "properties": {"a": {"minimum": 0, "properties": {"b": {"minimum": 2.5}}}}
        }}}]}});
        assert_eq!(
            deep_change(&mut crd).unwrap(),
            "minimum raised from 2.5 to 3.5 at a.b of version v1, 2 levels deep"
        );
        assert!(deep_change(&mut json!({"spec": {"versions": []}})).is_none());
    }

    #[test]
    fn checks_sum_is_the_shared_read_plus_each_checks_own_work() {
        // The cheapest check (10) is the shared read; the others add 5 and 20.
        assert_eq!(checks_sum(&[("a", 10.0), ("b", 15.0), ("c", 30.0)]), Some(35.0));
        assert_eq!(checks_sum(&[]), None);
    }
}
