//! `syncguard scan`: the policy modules over manifests, before they reach a cluster.
//!
//! Every Kubernetes object found in the given files, directories or standard input is
//! evaluated as a CREATE AdmissionRequest against every policy whose metadata rules match
//! its group, version and resource, through the same modules and the same engine as
//! `syncguard run`, so the verdicts are the ones admission would give. One more check needs
//! the documents together: [`clash`] (the `kind-group-clash` tree check).
//!
//! Speed: each module is compiled once per run. The scan runs on a rayon pool of `--jobs`
//! threads (reading the files, then evaluating the documents in chunks of 16). Each thread
//! keeps one instance per policy (in a thread-local: a waPC host cannot move between threads)
//! and reuses it for every document it evaluates, one call at a time. That is safe because no
//! answer of syncguard's modules depends on an earlier call: the only global of the waPC guest
//! library is the table of operations filled by `wapc_init`, and the core's one piece of
//! thread-local state is crd-kind-collision's last List read, reused only when the cluster
//! answers the same text again (every CRD of a scan gets the same List). An instance whose
//! call fails (a trap, a timeout) is dropped and replaced by a fresh one.

pub mod base;
pub mod policies;
pub mod report;
pub mod walk;

pub use syncguard_scan::evaluate::{Evaluation, Verdict};
pub use syncguard_scan::{clash, cluster, config, input};

use crate::engine::{Capabilities, Engine, Instance, Limits, Module};
use crate::evaluate::{self, EvalError, RequestDoc};
use crate::metadata::Rule;
use anyhow::{Result, anyhow, bail};
use cluster::{OfflineCluster, Plurals};
use input::{Document, InputError, Source};
use rayon::prelude::*;
use std::cell::RefCell;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use syncguard::registry::{DUPLICATE_OBJECT, KIND_GROUP_CLASH};
use syncguard_scan::Operation;
use syncguard_scan::evaluate::{AdmissionResponse, Status};
use syncguard_scan::evaluate::{Evaluator, clash_evaluations, duplicate_evaluations, evaluate_document};
use syncguard_scan::rows::PolicyRow;

/// Exit code for usage and input errors.
pub const EXIT_ERROR: u8 = 2;
/// Exit code when a policy rejected a document.
pub const EXIT_REJECTED: u8 = 1;

/// Documents from which the progress bar is shown (when stderr is a terminal).
const PROGRESS_THRESHOLD: usize = 500;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `file:line:column: policy/rule: verdict: message` lines, one per finding, and a summary.
    Text,
    /// One JSON document (schema in the README, `schemaVersion` 1).
    Json,
    /// SARIF 2.1.0, as GitHub code scanning takes it.
    Sarif,
}

/// The lowest level of finding that fails the scan (exit 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// A finding that rejects (an evaluation admission would refuse).
    Reject,
    /// Any finding that is not suppressed: a rejection, a warning or a mutation.
    Warn,
}

/// A GitOps tool sync-drift knows (its `tools` setting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ToolName {
    /// Argo CD.
    Argocd,
    /// Flux.
    Flux,
    /// Rancher Fleet.
    Fleet,
    /// kubectl apply (client- or server-side).
    Kubectl,
}

impl ToolName {
    /// Its name in sync-drift's settings.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolName::Argocd => "argocd",
            ToolName::Flux => "flux",
            ToolName::Fleet => "fleet",
            ToolName::Kubectl => "kubectl",
        }
    }
}

/// When to color text output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// When the stream is a terminal and `NO_COLOR` is unset or empty (anstream's detection,
    /// which also honours `CLICOLOR` and `CLICOLOR_FORCE`).
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl From<ColorChoice> for anstream::ColorChoice {
    fn from(choice: ColorChoice) -> Self {
        match choice {
            ColorChoice::Auto => anstream::ColorChoice::Auto,
            ColorChoice::Always => anstream::ColorChoice::AlwaysAnsi,
            ColorChoice::Never => anstream::ColorChoice::Never,
        }
    }
}

/// Arguments of `syncguard scan`.
#[derive(clap::Args)]
pub struct ScanArgs {
    /// Files, directories (searched recursively for .yaml, .yml and .json files, skipping what
    /// .gitignore and .ignore files say) and `-` for standard input.
    paths: Vec<PathBuf>,
    /// Reads what ignore files (.gitignore, .ignore, .git/info/exclude, git's global excludes)
    /// would skip in a directory walk, as ripgrep's --no-ignore does.
    #[arg(long)]
    no_ignore: bool,
    /// Folder of policy folders, each holding an annotated-policy.wasm (default: the modules
    /// embedded in this binary).
    #[arg(long, value_name = "DIR")]
    policies: Option<PathBuf>,
    /// YAML file choosing the policies that run and their settings.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// A git ref (branch, tag, commit) of the tree the scanned paths are in: every object the
    /// ref holds under those paths (same group, kind, namespace and name) is its old version,
    /// and the checks that judge updates (crd-safe-upgrade, crd-kind-collision) see the scanned
    /// object as an UPDATE from it, as the cluster will; read through git, no checkout.
    #[arg(long, value_name = "REF")]
    base: Option<String>,
    /// Objects of the cluster for context-aware policies (`kubectl get -o yaml` output or
    /// multi-document YAML); may be repeated.
    #[arg(long, value_name = "FILE")]
    cluster_snapshot: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// The lowest level of finding that fails the scan with exit 1: `reject` (default) or `warn`
    /// (any finding not suppressed). Input errors exit 2 either way.
    #[arg(long, value_enum, default_value_t = FailOn::Reject, value_name = "LEVEL")]
    fail_on: FailOn,
    /// The GitOps tools in use, comma-separated (argocd, flux, fleet, kubectl): sync-drift
    /// reports only drift one of them shows. Overrides sync-drift's `tools` setting in --config.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "TOOL,...")]
    tools: Vec<ToolName>,
    /// Also list accepted evaluations and documents no policy applies to.
    #[arg(short, long)]
    verbose: bool,
    /// Colors in text output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    /// Worker threads (default: the number of CPUs).
    #[arg(short, long, value_name = "N")]
    jobs: Option<usize>,
    /// Evaluation time limit per call, in seconds.
    #[arg(long, default_value_t = 2.0)]
    timeout_seconds: f64,
}

/// Runs `syncguard scan`: 0 clean, 1 on any rejection, 2 on usage or input errors.
pub fn scan(args: ScanArgs) -> ExitCode {
    match run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("Error: {e:#}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn run(args: ScanArgs) -> Result<ExitCode> {
    if args.paths.is_empty() {
        bail!(
            "nothing to scan: name files or directories, or - for standard input (e.g. `helm template ... | syncguard scan -`)"
        );
    }
    if !(args.timeout_seconds > 0.0 && args.timeout_seconds.is_finite()) {
        bail!("--timeout-seconds must be a positive number");
    }
    let jobs = match args.jobs {
        Some(0) => bail!("--jobs must be at least 1"),
        Some(n) => n,
        None => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
    };
    let modules = match &args.policies {
        Some(dir) => policies::from_dir(dir)?,
        None => require_embedded(policies::embedded()?)?,
    };
    let mut config = match &args.config {
        Some(path) => config::Config::load(path)?,
        None => config::Config::default(),
    };
    if !args.tools.is_empty() {
        let mut tools: Vec<&str> = args.tools.iter().map(|t| t.as_str()).collect();
        tools.sort_unstable();
        tools.dedup();
        config.set_setting(SYNC_DRIFT, "tools", serde_json::json!(tools));
    }
    let config_name = args
        .config
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let limits = Limits {
        timeout: Duration::from_secs_f64(args.timeout_seconds),
        ..Limits::default()
    };
    let set = PolicySet::prepare(modules, &config, &config_name, limits)?;
    let mut snapshot = Vec::new();
    for path in &args.cluster_snapshot {
        match cluster::read_snapshot(path) {
            Ok(docs) => snapshot.extend(docs),
            Err(errors) => {
                for e in errors {
                    eprintln!("{}", report::error_line(&e, &[], false));
                }
                return Ok(ExitCode::from(EXIT_ERROR));
            }
        }
    }
    let options = ScanOptions {
        jobs,
        progress: std::io::stderr().is_terminal(),
        walk: walk::WalkOptions {
            ignore_files: !args.no_ignore,
        },
    };
    let base = match &args.base {
        Some(reference) => base::read(reference, &args.paths)?.documents,
        None => Vec::new(),
    };
    let result = scan_paths(&args.paths, &set, &snapshot, &base, &options);
    let color = use_color(args.color, std::io::stdout());
    let stderr_color = use_color(args.color, std::io::stderr());
    for e in &result.errors {
        eprintln!("{}", report::error_line(e, &result.sources, stderr_color));
    }
    // The rows are built once; each printer writes them in its own form.
    let rows = report::rows(&result);
    let code = report::exit_code(&result, &rows, args.fail_on);
    let output = match args.format {
        Format::Text => report::text(&result, &rows, args.verbose, color),
        Format::Json => report::json(&result, rows, args.verbose),
        Format::Sarif => report::sarif(&result, &rows),
    };
    crate::print_out(&output);
    Ok(ExitCode::from(code))
}

/// The policy whose `tools` setting `--tools` sets.
const SYNC_DRIFT: &str = "sync-drift";

/// The embedded modules, or the error saying how to get some.
fn require_embedded(modules: Vec<policies::PolicyModule>) -> Result<Vec<policies::PolicyModule>> {
    if modules.is_empty() {
        bail!(
            "this syncguard binary embeds no policy modules (it was built before policies/*/annotated-policy.wasm existed): pass --policies DIR (a folder of <name>/annotated-policy.wasm), or rebuild with `make build`"
        );
    }
    Ok(modules)
}

/// Whether to color what is written to `stream`: `always`, `never`, or as anstream decides for
/// `auto`: never when `NO_COLOR` is set and not empty (<https://no-color.org>), else always when
/// `CLICOLOR_FORCE` is set and not empty, else never when `CLICOLOR` is `0`, else when the
/// stream is a terminal whose `TERM` is set and not `dumb` (or `CLICOLOR` is set, or `CI` is).
pub fn use_color(choice: ColorChoice, stream: impl anstream::stream::RawStream) -> bool {
    anstream::AutoStream::new(stream, choice.into()).current_choice() != anstream::ColorChoice::Never
}

/// A compiled policy ready to run, with its settings.
pub struct ActivePolicy {
    /// The compiled module.
    pub module: Module,
    /// Admission rules from its metadata.
    pub rules: Vec<Rule>,
    /// Settings as JSON text.
    pub settings_text: String,
    /// Whether it judges an UPDATE by what it changes: a syncguard check that does (by the
    /// module's name), never another module.
    pub reads_old_object: bool,
    /// The lookups its settings name beyond its metadata's `contextAwareResources` (a syncguard
    /// policy's, by the module's name: object-validation's `storedObjects`), granted as a
    /// deployment that names them in its `contextAwareResources` grants them.
    pub granted: Vec<(String, String)>,
}

impl ActivePolicy {
    /// Whether `operation` of `resource` in `group`/`version` falls under the policy's rules,
    /// decided by the core's matcher, the one the all-in-one policy routes requests with.
    pub fn matches(&self, group: &str, version: &str, resource: &str, operation: Operation) -> bool {
        let target = syncguard::rules::Attributes {
            group,
            version,
            resource,
            subresource: "",
            operation: Some(operation),
        };
        self.rules.iter().any(|rule| rule.applies_to(&target))
    }
}

/// The policies of a run: compiled, configured, settings checked.
pub struct PolicySet {
    _engine: Engine,
    /// The module policies that run.
    pub policies: Vec<ActivePolicy>,
    /// Settings of `kind-group-clash`, `None` when disabled.
    pub clash: Option<clash::Settings>,
    /// Whether `duplicate-object` runs.
    pub duplicates: bool,
    /// Reporting facts: the module policies in order, then the tree checks that run.
    pub infos: Vec<PolicyRow>,
}

impl PolicySet {
    /// Applies the config, compiles each enabled module once and checks its settings with the
    /// module's own `validate_settings`.
    pub fn prepare(
        modules: Vec<policies::PolicyModule>,
        config: &config::Config,
        config_name: &str,
        limits: Limits,
    ) -> Result<PolicySet> {
        let known: Vec<&str> = modules.iter().map(|m| m.name.as_str()).collect();
        config.check_names(&known, config_name)?;
        let engine = Engine::new(limits)?;
        let mut policies = Vec::new();
        let mut infos = Vec::new();
        for module in modules {
            let Some(settings) = config.settings_of(&module.name) else {
                continue;
            };
            let compiled = engine
                .compile(&module.wasm)
                .map_err(|e| anyhow!("policy {} ({}): {e:#}", module.name, module.origin))?;
            let instance = compiled
                .instantiate(Capabilities::default())
                .map_err(|e| anyhow!("policy {} ({}): {e:#}", module.name, module.origin))?;
            match evaluate::validate_settings(&instance, &settings) {
                Ok(()) => {}
                Err(EvalError::InvalidSettings(message)) => {
                    let place = if config_name.is_empty() {
                        "default settings".to_string()
                    } else {
                        format!("settings in {config_name}")
                    };
                    bail!("policy {}: invalid {place}: {message}", module.name);
                }
                Err(EvalError::Other(e)) => bail!("policy {}: {e:#}", module.name),
            }
            let annotation = |key: &str| module.metadata.annotation(key).map(str::to_string);
            infos.push(PolicyRow {
                name: module.name.clone(),
                origin: module.origin.clone(),
                version: annotation("io.kubewarden.policy.version"),
                description: annotation("io.kubewarden.policy.description"),
                readme: annotation("io.kubewarden.policy.url"),
            });
            let settings_text = settings.to_string();
            let granted = if module.name == syncguard::registry::ALL_IN_ONE {
                syncguard::check::settings_lookups::<syncguard::all_in_one::AllInOne>(Some(&settings_text))
            } else {
                syncguard::registry::Entry::named(&module.name)
                    .map_or(Ok(Vec::new()), |entry| (entry.settings_lookups)(Some(&settings_text)))
            }
            .map_err(|e| anyhow!("policy {}: {e}", module.name))?;
            policies.push(ActivePolicy {
                reads_old_object: syncguard::registry::Entry::named(&module.name)
                    .is_some_and(|entry| entry.reads_old_object),
                granted,
                rules: module.metadata.rules.clone(),
                module: compiled,
                settings_text,
            });
        }
        let clash = config.clash_settings(config_name)?;
        if clash.is_some() {
            infos.push(PolicyRow::of_tree_check(&KIND_GROUP_CLASH));
        }
        let duplicates = config.duplicates_enabled(config_name)?;
        if duplicates {
            infos.push(PolicyRow::of_tree_check(&DUPLICATE_OBJECT));
        }
        Ok(PolicySet {
            _engine: engine,
            policies,
            clash,
            duplicates,
            infos,
        })
    }
}

/// How a scan runs.
#[derive(Debug, Clone, Copy)]
pub struct ScanOptions {
    /// Worker threads.
    pub jobs: usize,
    /// Whether a progress bar may be drawn on stderr (large scans only).
    pub progress: bool,
    /// How directories are walked.
    pub walk: walk::WalkOptions,
}

/// The evaluation of an AdmissionResponse the engine gave, with the module's structured report
/// of its findings when it gave one (else the findings its audit annotation lists).
fn from_response(
    document: usize,
    policy: usize,
    response: AdmissionResponse,
    reported: evaluate::Reported,
) -> Evaluation {
    let patch = response.patch_ops();
    let annotations = response.audit_annotations.unwrap_or_default();
    let warnings = response.warnings.unwrap_or_default();
    let status = response.status.unwrap_or(Status {
        message: None,
        code: None,
    });
    let evaluation = Evaluation::new(
        document,
        policy,
        response.allowed,
        status.message,
        status.code,
        warnings,
        patch,
    );
    match reported {
        Some(findings) => evaluation.with_findings(findings),
        None => evaluation.with_audit_annotations(&annotations),
    }
}

/// Counts of a scan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Evaluations (documents times matching policies, plus clash findings).
    pub evaluations: usize,
    /// Rejected evaluations.
    pub rejected: usize,
    /// Mutated evaluations.
    pub mutated: usize,
    /// Evaluations accepted with warnings.
    pub warned: usize,
    /// Evaluations accepted as they are.
    pub accepted: usize,
}

/// Everything a scan found.
#[derive(Debug, Default)]
pub struct ScanReport {
    /// The files read, in order.
    pub sources: Vec<Source>,
    /// The objects found, in order.
    pub documents: Vec<Document>,
    /// Every evaluation, by document then policy.
    pub evaluations: Vec<Evaluation>,
    /// Input problems, in order.
    pub errors: Vec<InputError>,
    /// Documents left out as not Kubernetes objects (values files, CI configuration), in order.
    pub skipped: Vec<input::Skipped>,
    /// Helm charts left out, to be rendered first.
    pub unrendered: walk::Unrendered,
    /// The policies that ran, in report order.
    pub policies: Vec<PolicyRow>,
    /// For each document, the earlier identical copy it was judged with
    /// ([`syncguard_scan::copies::identical`]); empty when the report was built otherwise.
    pub copy_of: Vec<Option<usize>>,
}

impl ScanReport {
    /// Counts by verdict.
    pub fn counts(&self) -> Counts {
        let mut counts = Counts {
            evaluations: self.evaluations.len(),
            ..Counts::default()
        };
        for e in &self.evaluations {
            match e.verdict {
                Verdict::Rejected => counts.rejected += 1,
                Verdict::Mutated => counts.mutated += 1,
                Verdict::Warned => counts.warned += 1,
                Verdict::Accepted => counts.accepted += 1,
            }
        }
        counts
    }

    /// 2 when the input had errors, else 1 when anything was rejected, else 0.
    pub fn exit_code(&self) -> u8 {
        if !self.errors.is_empty() {
            EXIT_ERROR
        } else if self.evaluations.iter().any(|e| e.verdict == Verdict::Rejected) {
            EXIT_REJECTED
        } else {
            0
        }
    }
}

/// Scans `paths` (files, directories, `-`) with the policies of `set`, context-aware lookups
/// answered from the scanned objects plus `snapshot`, each object that `base` holds (the
/// objects of `--base`) judged as an update from it by the checks that judge updates. The entry
/// point for benchmarks too.
pub fn scan_paths(
    paths: &[PathBuf],
    set: &PolicySet,
    snapshot: &[Document],
    base: &[Document],
    options: &ScanOptions,
) -> ScanReport {
    let walk::Expanded {
        files,
        mut errors,
        unrendered,
    } = walk::expand(paths, options.walk);
    let cwd = std::env::current_dir().ok();
    let pool = thread_pool(options.jobs);
    let contents = read_all(&files, &pool);
    let mut documents = Vec::new();
    let mut skipped = Vec::new();
    let mut sources = Vec::with_capacity(files.len());
    for ((display, input), (file, text)) in files.iter().zip(contents) {
        sources.push(Source {
            display: display.clone(),
            uri: input::artifact_uri(input, cwd.as_deref()),
            text,
        });
        documents.extend(file.documents);
        errors.extend(file.errors);
        skipped.extend(file.skipped);
    }
    // The files a kustomization of the scan lists are kustomize's input, not applied as they stand.
    let listed: Vec<(Option<&Path>, Option<&str>)> = files
        .iter()
        .zip(&sources)
        .map(|((_, input), source)| {
            let path = match input {
                input::Input::File(path) => Some(path.as_path()),
                input::Input::Stdin => None,
            };
            (path, source.text.as_deref())
        })
        .collect();
    input::mark_kustomize_inputs(&mut documents, &listed);
    if !base.is_empty() {
        input::attach_old(&mut documents, &base::with_cluster_status(base, snapshot));
    }
    // A suppression without a reason, or naming no policy or rule, is an input error.
    let names: Vec<&str> = set.infos.iter().map(|p| p.name.as_str()).collect();
    for (i, message) in syncguard_scan::rows::suppression_problems(&documents, &names) {
        let doc = &documents[i];
        errors.push(InputError {
            source: Some(doc.source),
            path: sources.get(doc.source).map(|s| s.display.clone()).unwrap_or_default(),
            line: Some(doc.line),
            message,
        });
    }
    let plurals = Plurals::new(snapshot.iter().chain(&documents));
    plurals.mark(&mut documents);
    let cluster = Arc::new(OfflineCluster::new(snapshot, &documents));
    // Identical copies of an object are judged once, with the first (the rows name them all).
    let copy_of = syncguard_scan::copies::identical(&documents);
    let mut evaluations = evaluate_all(&documents, &copy_of, &sources, set, &plurals, &cluster, options, &pool);
    if let Some(settings) = &set.clash {
        evaluations.extend(clash_evaluations(
            &documents,
            &sources,
            settings,
            &plurals,
            set.policies.len(),
        ));
    }
    if set.duplicates {
        let policy = set.policies.len() + usize::from(set.clash.is_some());
        evaluations.extend(duplicate_evaluations(&documents, &sources, policy));
    }
    evaluations.sort_by_key(|e| (e.document, e.policy));
    ScanReport {
        sources,
        documents,
        evaluations,
        errors,
        skipped,
        unrendered,
        policies: set.infos.clone(),
        copy_of,
    }
}

/// The worker threads of one scan: `jobs` of them, shared by reading and evaluating.
fn thread_pool(jobs: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .thread_name(|i| format!("syncguard-scan-{i}"))
        .build()
        .expect("cannot start the scan's worker threads")
}

/// Reads and parses the files on the pool's threads, keeping each file's text for the
/// reports; the result is in file order.
fn read_all(
    files: &[(String, input::Input)],
    pool: &rayon::ThreadPool,
) -> Vec<(input::FileContents, Option<Arc<str>>)> {
    let read_one = |index: usize| -> (input::FileContents, Option<Arc<str>>) {
        let (name, input) = &files[index];
        let fail = |message: String| {
            let contents = input::FileContents {
                documents: Vec::new(),
                errors: vec![InputError {
                    source: Some(index),
                    path: name.clone(),
                    line: None,
                    message,
                }],
                skipped: Vec::new(),
            };
            (contents, None)
        };
        let bytes = match input::read(input) {
            Ok(bytes) => bytes,
            Err(message) => return fail(message),
        };
        match input::text_of(&bytes) {
            Ok(text) => (input::objects_of(index, name, text), Some(Arc::from(text))),
            Err(message) => fail(message),
        }
    };
    // An indexed parallel iterator collects in index order, whichever thread read what.
    pool.install(|| (0..files.len()).into_par_iter().with_max_len(1).map(read_one).collect())
}

/// Documents a thread takes at a time.
const CHUNK: usize = 16;

/// Evaluates every document on the pool's threads, each thread with its own instances
/// ([`INSTANCES`]); the result is in document order.
#[allow(clippy::too_many_arguments)]
fn evaluate_all(
    documents: &[Document],
    copy_of: &[Option<usize>],
    sources: &[Source],
    set: &PolicySet,
    plurals: &Plurals,
    cluster: &Arc<OfflineCluster>,
    options: &ScanOptions,
    pool: &rayon::ThreadPool,
) -> Vec<Evaluation> {
    let total = documents.len();
    let progress = (options.progress && total >= PROGRESS_THRESHOLD).then(|| report::progress_bar(total));
    let scan = NEXT_SCAN.fetch_add(1, Ordering::Relaxed);
    let chunks: Vec<Vec<Evaluation>> = pool.install(|| {
        documents
            .par_chunks(CHUNK)
            .enumerate()
            .with_max_len(1)
            .map(|(chunk, docs)| {
                let mut worker = Worker {
                    set,
                    cluster: cluster.clone(),
                    scan,
                };
                let mut out = Vec::new();
                for (offset, doc) in docs.iter().enumerate() {
                    let index = chunk * CHUNK + offset;
                    if copy_of.get(index).is_none_or(Option::is_none) {
                        evaluate_document(&mut worker, index, doc, sources, plurals, &mut out);
                    }
                    if let Some(bar) = &progress {
                        bar.inc(1);
                    }
                }
                out
            })
            .collect()
    });
    // The instances of this scan are of no further use: drop them now on every thread.
    pool.broadcast(|_| INSTANCES.with_borrow_mut(|(_, slots)| slots.clear()));
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    chunks.into_iter().flatten().collect()
}

/// Numbers the scans of this process, so that a thread never reuses another scan's instances.
static NEXT_SCAN: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// This thread's instances: the scan they belong to, and one per policy of that scan,
    /// created on first use and reused for every document the thread evaluates (a waPC host
    /// cannot move between threads, so they stay on the thread that created them).
    static INSTANCES: RefCell<(u64, Vec<Option<Instance>>)> = const { RefCell::new((0, Vec::new())) };
}

/// Evaluates documents of one scan on the current thread with the thread's [`INSTANCES`].
struct Worker<'a> {
    set: &'a PolicySet,
    cluster: Arc<OfflineCluster>,
    scan: u64,
}

impl Worker<'_> {
    /// Runs `call` with this thread's instance of `policy`, created when missing; an instance
    /// left broken (`call` returns `true`) is dropped, so that the next call starts afresh.
    fn with_instance<R>(&self, policy: usize, call: impl FnOnce(Result<&Instance>) -> (R, bool)) -> R {
        INSTANCES.with_borrow_mut(|(scan, slots)| {
            if *scan != self.scan {
                *scan = self.scan;
                slots.clear();
            }
            slots.resize_with(self.set.policies.len(), || None);
            if slots[policy].is_none() {
                match self.set.policies[policy].module.instantiate(Capabilities {
                    allow_context_aware: true,
                    granted: self.set.policies[policy].granted.clone(),
                    replay: None,
                    lookups: Some(self.cluster.clone()),
                }) {
                    Ok(instance) => slots[policy] = Some(instance),
                    Err(e) => return call(Err(e)).0,
                }
            }
            let instance = slots[policy]
                .as_ref()
                .ok_or_else(|| anyhow!("the policy instance is missing"));
            let (result, broken) = call(instance);
            if broken {
                slots[policy] = None;
            }
            result
        })
    }
}

impl Evaluator for Worker<'_> {
    fn policy_count(&self) -> usize {
        self.set.policies.len()
    }

    fn matches(&self, policy: usize, group: &str, version: &str, resource: &str, operation: Operation) -> bool {
        self.set.policies[policy].matches(group, version, resource, operation)
    }

    fn reads_old_object(&self, policy: usize) -> bool {
        self.set.policies[policy].reads_old_object
    }

    fn evaluate(&mut self, policy: usize, document: usize, request: &str, uid: &str) -> Evaluation {
        let active = &self.set.policies[policy];
        let request = RequestDoc {
            raw: request.to_string(),
            uid: uid.to_string(),
        };
        let response = self.with_instance(policy, |instance| match instance {
            Ok(instance) => match evaluate::try_report_with_settings_text(
                instance,
                active.module.metadata.as_ref(),
                &request,
                &active.settings_text,
            ) {
                Ok(answer) => (answer, false),
                // A trap or a timeout may leave the instance broken: start the next call afresh.
                Err(failure) => ((failure.response(&request.uid), None), true),
            },
            Err(e) => (
                (
                    AdmissionResponse::reject(
                        &request.uid,
                        format!("internal server error: cannot instantiate the policy module: {e:#}"),
                        Some(500),
                    ),
                    None,
                ),
                true,
            ),
        });
        let (response, reported) = response;
        from_response(document, policy, response, reported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn color_choices_override_detection() {
        // `auto` reads the environment; the binary's tests (cli/tests/scan.rs) cover it.
        assert!(use_color(ColorChoice::Always, Vec::new()));
        assert!(!use_color(ColorChoice::Never, Vec::new()));
    }

    #[test]
    fn an_empty_binary_says_how_to_get_policies() {
        let Err(err) = require_embedded(Vec::new()) else {
            panic!("an empty list is refused")
        };
        let err = err.to_string();
        assert!(
            err.contains("embeds no policy modules") && err.contains("--policies DIR"),
            "{err}"
        );
    }
}
