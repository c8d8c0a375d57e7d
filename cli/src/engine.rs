//! Hosts policy modules the way Kubewarden's policy-evaluator does: wasmtime with a waPC host,
//! WASI preview 1, epoch-based time limits, a memory cap, and the `kubewarden` host callbacks
//! answered from a kwctl replay file or from any other [`Lookups`] (the offline cluster of
//! `syncguard scan`). A replayed request must equal the recorded one as kwctl compares them,
//! `field_masks` included (see [`syncguard_scan::replay`]); the recorded answer is returned as it is,
//! so a replay file holds what Kubewarden sends for those masks.
//!
//! A lookup that fails once the host has let it through (a recorded error, a replay that does
//! not match, an offline cluster that cannot answer) reaches the guest as
//! `Callback evaluation failure: <error>`, the words of Kubewarden's policy-evaluator for an
//! error its callback handler sends back (see [`callback_failure`]). Refusals made before the
//! lookup is asked (a capability that does not exist, a resource the metadata does not declare)
//! are not prefixed, as in Kubewarden.

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
    /// `(apiVersion, kind)` lookups granted beyond the metadata's, as a deployment's
    /// `contextAwareResources` grants them (the kinds a policy's settings name).
    pub granted: Vec<(String, String)>,
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
        let mut allowed: Vec<(String, String)> = self
            .metadata
            .as_ref()
            .map(|m| {
                m.context_aware_resources
                    .iter()
                    .map(|r| (r.api_version.clone(), r.kind.clone()))
                    .collect()
            })
            .unwrap_or_default();
        allowed.extend(capabilities.granted.iter().cloned());
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
    // Refused as Kubewarden's policy-evaluator refuses it, in its words (the policy quotes them);
    // why, for the person running the command, on stderr.
    let denied = || {
        format!(
            "Policy has not been granted access to Kubernetes {api_version}/{kind} resources. The violation has been reported."
        )
    };
    if !capabilities.allow_context_aware {
        eprintln!(
            "syncguard: the policy asked for {kind} in {api_version}; run with --allow-context-aware to allow the resources its metadata declares"
        );
        return Err(denied());
    }
    if !allowed.iter().any(|(v, k)| v == api_version && k == kind) {
        eprintln!(
            "syncguard: the policy asked for {kind} in {api_version}, which is not among the contextAwareResources of its metadata"
        );
        return Err(denied());
    }
    if let Some(replay) = &capabilities.replay {
        return replay.answer(&request).map_err(callback_failure);
    }
    let lookups = capabilities.lookups.as_ref().ok_or_else(|| {
        callback_failure(format!(
            "no cluster to ask for {kind} in {api_version}: pass --replay-host-capabilities-interactions FILE"
        ))
    })?;
    lookups.answer(&request).map_err(callback_failure)
}

/// The error a guest receives when the answer to a lookup is an error: Kubewarden's
/// policy-evaluator words it `format!("Callback evaluation failure: {e:?}")` with `e` the
/// `anyhow::Error` its callback handler sent back (kubewarden/adm-controller,
/// `crates/policy-evaluator/src/runtimes/callback.rs`, `send_request_and_wait_for_response`). The `Debug` form of an `anyhow::Error` made from a
/// message is that message alone, unless a backtrace was captured (kwctl run with
/// `RUST_BACKTRACE` or `RUST_LIB_BACKTRACE` set appends one); syncguard never appends one.
pub fn callback_failure(error: String) -> String {
    format!("{}{error}", syncguard::cluster::CALLBACK_FAILURE)
}

/// Reads a module file with a clear error.
pub fn read_module(path: &std::path::Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read policy module {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CRDS: (&str, &str) = ("apiextensions.k8s.io/v1", "CustomResourceDefinition");

    fn list_crds(capabilities: &Capabilities) -> Result<Vec<u8>, String> {
        let payload = serde_json::json!({
            "api_version": CRDS.0,
            "kind": CRDS.1,
            "label_selector": null,
            "field_selector": null,
            "field_masks": ["spec.group", "spec.names.kind", "spec.names.plural", "spec.names.shortNames", "spec.names.singular"],
        });
        let allowed = [(CRDS.0.to_string(), CRDS.1.to_string())];
        host_call(
            capabilities,
            &allowed,
            "kubewarden",
            "kubernetes",
            "list_resources_all",
            payload.to_string().as_bytes(),
        )
    }

    struct Failing;

    impl Lookups for Failing {
        fn answer(&self, _request: &HostRequest) -> Result<Vec<u8>, String> {
            Err("the cluster is away".into())
        }
    }

    #[test]
    fn failed_lookups_reach_the_guest_as_kubewarden_words_them() {
        let replay = Replay::parse(include_str!(
            "../../policies/crd-kind-collision/test_data/replay-lookup-forbidden.yml"
        ))
        .expect("the fixture's replay file");
        let replayed = Capabilities {
            allow_context_aware: true,
            granted: Vec::new(),
            replay: Some(Arc::new(replay)),
            lookups: None,
        };
        let error = list_crds(&replayed).unwrap_err();
        assert!(
            error.starts_with(
                "Callback evaluation failure: customresourcedefinitions.apiextensions.k8s.io is forbidden: User"
            ),
            "{error}"
        );
        // The replay file holds one exchange: the next request finds none left.
        let error = list_crds(&replayed).unwrap_err();
        assert!(
            error.starts_with("Callback evaluation failure: the replay file has no entry left"),
            "{error}"
        );

        let offline = Capabilities {
            allow_context_aware: true,
            granted: Vec::new(),
            replay: None,
            lookups: Some(Arc::new(Failing)),
        };
        assert_eq!(
            list_crds(&offline).unwrap_err(),
            "Callback evaluation failure: the cluster is away"
        );

        let nowhere = Capabilities {
            allow_context_aware: true,
            ..Capabilities::default()
        };
        assert_eq!(
            list_crds(&nowhere).unwrap_err(),
            "Callback evaluation failure: no cluster to ask for CustomResourceDefinition in apiextensions.k8s.io/v1: pass --replay-host-capabilities-interactions FILE"
        );
    }

    #[test]
    fn refusals_before_the_lookup_are_not_callback_failures() {
        // In Kubewarden's words, whether lookups are off or the resource is not declared.
        let denied = "Policy has not been granted access to Kubernetes apiextensions.k8s.io/v1/CustomResourceDefinition resources. The violation has been reported.";
        assert_eq!(list_crds(&Capabilities::default()).unwrap_err(), denied);
        let undeclared = host_call(
            &Capabilities {
                allow_context_aware: true,
                ..Capabilities::default()
            },
            &[("v1".to_string(), "ConfigMap".to_string())],
            "kubewarden",
            "kubernetes",
            "list_resources_all",
            br#"{"api_version":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition"}"#,
        )
        .unwrap_err();
        assert_eq!(undeclared, denied);
        let error = host_call(
            &Capabilities::default(),
            &[],
            "kubewarden",
            "net",
            "v1/dns_lookup_host",
            b"\"x\"",
        )
        .unwrap_err();
        assert_eq!(
            error,
            "host capability kubewarden/net/v1/dns_lookup_host is not available"
        );
    }
}
