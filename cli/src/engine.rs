//! Hosts policy modules the way Kubewarden's policy-evaluator does: wasmtime with a waPC host,
//! WASI preview 1, epoch-based time limits, a memory cap, and the `kubewarden` host callbacks
//! answered from a kwctl replay file or from any other [`Lookups`] (the offline cluster of
//! `syncguard scan`). A replayed request must equal the recorded one as kwctl compares them,
//! `field_masks` included (see [`syncguard_scan::replay`]); the recorded answer is returned as it is,
//! so a replay file holds what Kubewarden sends for those masks.

use crate::metadata::Metadata;
use anyhow::{Context, Result, anyhow};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use syncguard_scan::replay::{HostRequest, Replay};
use wapc::WapcHost;
use wasmtime_provider::{EpochDeadlines, ResourceLimits, WasmtimeEngineProviderBuilder, WasmtimeEngineProviderPre};

/// How long one epoch tick lasts; deadlines are counted in ticks.
const TICK: Duration = Duration::from_millis(10);

/// Limits applied to every evaluation.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Longest a `validate` or `validate_settings` call may run (policy-server's default: 2 s).
    pub timeout: Duration,
    /// Largest linear memory a module may grow to, in bytes.
    pub max_memory: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: Duration::from_secs(2),
            max_memory: 256 * 1024 * 1024,
        }
    }
}

/// A wasmtime engine shared by all modules of a run, with a thread ticking its epoch.
pub struct Engine {
    engine: wasmtime::Engine,
    limits: Limits,
    stop: Arc<AtomicBool>,
}

impl Engine {
    /// Compiles a module without the cache (for measuring cold starts).
    pub fn compile_uncached(&self, wasm: &[u8]) -> Result<wasmtime::Module> {
        wasmtime::Module::new(&self.engine, wasm).map_err(|e| anyhow!("cannot compile the policy module: {e}"))
    }

    /// Creates the engine and starts its epoch ticker.
    pub fn new(limits: Limits) -> Result<Self> {
        let mut config = wasmtime::Config::new();
        config.epoch_interruption(true);
        if std::env::var_os("SYNCGUARD_PERFMAP").is_some() {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        let engine = wasmtime::Engine::new(&config).map_err(|e| anyhow!("cannot start wasmtime: {e}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let ticker = engine.clone();
        let flag = stop.clone();
        std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                std::thread::sleep(TICK);
                ticker.increment_epoch();
            }
        });
        Ok(Engine { engine, limits, stop })
    }

    /// Compiles a module once (or loads it from the compile cache, see `cache.rs`); instances
    /// are then created cheaply from it.
    pub fn compile(&self, wasm: &[u8]) -> Result<Module> {
        let metadata = Metadata::from_wasm(wasm)?;
        let module = match crate::cache::load(&self.engine, wasm) {
            Some(module) => module,
            None => {
                let module = self.compile_uncached(wasm)?;
                crate::cache::store(&self.engine, wasm, &module);
                module
            }
        };
        let pre = WasmtimeEngineProviderBuilder::new()
            .engine(self.engine.clone())
            .module(module)
            .enable_resource_limits(ResourceLimits {
                max_memory_size: Some(self.limits.max_memory),
                max_table_elements: Some(100_000),
            })
            .build_pre()
            .map_err(|e| anyhow!("cannot prepare the policy module: {e}"))?;
        Ok(Module {
            pre,
            metadata,
            deadline_ticks: (self.limits.timeout.as_millis() / TICK.as_millis()).max(1) as u64,
        })
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// A compiled policy module and the metadata embedded in it (if it was annotated).
pub struct Module {
    pre: WasmtimeEngineProviderPre,
    /// Metadata from the `io.kubewarden.metadata` custom section.
    pub metadata: Option<Metadata>,
    deadline_ticks: u64,
}

/// Answers a policy's Kubernetes lookups (`kubewarden`/`kubernetes`/* host calls) once the
/// host has checked them against the module's `contextAwareResources`.
pub trait Lookups: Send + Sync {
    /// The response payload (a List or an object as JSON), or the error the policy receives.
    fn answer(&self, request: &HostRequest) -> Result<Vec<u8>, String>;
}

impl Lookups for Replay {
    fn answer(&self, request: &HostRequest) -> Result<Vec<u8>, String> {
        Replay::answer(self, request)
    }
}

impl Lookups for syncguard_scan::cluster::OfflineCluster {
    fn answer(&self, request: &HostRequest) -> Result<Vec<u8>, String> {
        syncguard_scan::cluster::OfflineCluster::answer(self, request)
    }
}

/// What the host allows a policy's callbacks to do.
#[derive(Clone, Default)]
pub struct Capabilities {
    /// `--allow-context-aware`: Kubernetes lookups allowed for the resources the module's
    /// metadata declares in `contextAwareResources`.
    pub allow_context_aware: bool,
    /// Answers to Kubernetes lookups from a kwctl replay file (takes precedence over `lookups`).
    pub replay: Option<Arc<Replay>>,
    /// Answers to Kubernetes lookups when there is no replay file, e.g. an offline cluster.
    pub lookups: Option<Arc<dyn Lookups>>,
}

/// One live instance of a module.
pub struct Instance {
    host: WapcHost,
}

impl Module {
    /// Creates a fresh instance with the given host capabilities.
    pub fn instantiate(&self, capabilities: Capabilities) -> Result<Instance> {
        let deadlines = EpochDeadlines {
            wapc_init: self.deadline_ticks,
            wapc_func: self.deadline_ticks,
        };
        let provider = self
            .pre
            .rehydrate(Some(deadlines))
            .map_err(|e| anyhow!("cannot instantiate the policy module: {e}"))?;
        let allowed: Vec<(String, String)> = self
            .metadata
            .as_ref()
            .map(|m| {
                m.context_aware_resources
                    .iter()
                    .map(|r| (r.api_version.clone(), r.kind.clone()))
                    .collect()
            })
            .unwrap_or_default();
        let callback = move |_id: u64, binding: &str, namespace: &str, operation: &str, payload: &[u8]| {
            host_call(&capabilities, &allowed, binding, namespace, operation, payload)
                .map_err(|message| -> Box<dyn std::error::Error + Send + Sync> { message.into() })
        };
        let host = WapcHost::new(Box::new(provider), Some(Box::new(callback)))
            .map_err(|e| anyhow!("the policy module failed to initialize: {e}"))?;
        Ok(Instance { host })
    }
}

impl Instance {
    /// Calls a waPC operation; a trap, timeout or guest error is returned as `Err`.
    pub fn call(&self, operation: &str, payload: &[u8]) -> Result<Vec<u8>, String> {
        self.host
            .call(operation, payload)
            .map_err(|e| describe_call_error(&e.to_string()))
    }
}

fn describe_call_error(message: &str) -> String {
    if message.contains("interrupt") || message.contains("epoch") {
        format!("the policy did not finish within the evaluation time limit ({message})")
    } else {
        message.to_string()
    }
}

/// Answers a `__host_call` from a policy.
fn host_call(
    capabilities: &Capabilities,
    allowed: &[(String, String)],
    binding: &str,
    namespace: &str,
    operation: &str,
    payload: &[u8],
) -> Result<Vec<u8>, String> {
    if binding == "kubewarden" && namespace == "tracing" && operation == "log" {
        eprintln!("policy log: {}", String::from_utf8_lossy(payload));
        return Ok(Vec::new());
    }
    let Some(tag) = HostRequest::tag_for(namespace, operation).filter(|_| binding == "kubewarden") else {
        return Err(format!(
            "host capability {binding}/{namespace}/{operation} is not available"
        ));
    };
    let request = HostRequest::from_call(tag, payload)?;
    let api_version = request.fields.get("api_version").and_then(|v| v.as_str()).unwrap_or("");
    let kind = request.fields.get("kind").and_then(|v| v.as_str()).unwrap_or("");
    if !capabilities.allow_context_aware {
        return Err(format!(
            "access to Kubernetes resources is not allowed: the policy asked for {kind} in {api_version}; run with --allow-context-aware to allow the resources its metadata declares"
        ));
    }
    if !allowed.iter().any(|(v, k)| v == api_version && k == kind) {
        return Err(format!(
            "access to {kind} in {api_version} is not allowed: it is not among the contextAwareResources of the policy's metadata"
        ));
    }
    if let Some(replay) = &capabilities.replay {
        return replay.answer(&request);
    }
    let lookups = capabilities.lookups.as_ref().ok_or_else(|| {
        format!("no cluster to ask for {kind} in {api_version}: pass --replay-host-capabilities-interactions FILE")
    })?;
    lookups.answer(&request)
}

/// Reads a module file with a clear error.
pub fn read_module(path: &std::path::Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read policy module {}", path.display()))
}
