//! The Kubernetes API server `syncguard-bench policy-server` points policy-server at, so that a
//! context-aware policy's lookups are answered in the server as in a cluster: policy-server
//! answers `list_resources_all` from a reflector (a kube-rs watcher: it discovers the resource's
//! plural from `/apis/<group>/<version>`, LISTs it, then WATCHes from the list's
//! resourceVersion), so this serves exactly those three requests over plain HTTP on 127.0.0.1,
//! and a GET of one by name (`get_resource`: object-validation's lookup of a custom resource's
//! CRD), for the CustomResourceDefinitions it is given, and a kubeconfig that names it. The watch
//! stays open and quiet (nothing changes in the bench's cluster). Every request it receives is
//! written to `apiserver.log` in the work folder, so a run shows what policy-server asked.
//!
//! Written by hand: no crate serves a stand-in for the API server's discovery, list and watch
//! endpoints without a real cluster (kube-rs's own test mocks answer in its client, not over
//! HTTP to another process).

use anyhow::{Context, Result};
use http_body_util::{Either, Full};
use hyper::body::{Body, Bytes, Frame};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};

/// The group and version of the resource served.
const GROUP_VERSION: &str = "apiextensions.k8s.io/v1";
/// Its plural.
const PLURAL: &str = "customresourcedefinitions";

/// A response body that never ends: an open watch on which nothing changes.
struct Quiet;

impl Body for Quiet {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, _: &mut TaskContext<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Pending
    }
}

/// The stand-in API server, running on the runtime it was started on until the runtime stops.
pub struct ApiServer {
    /// The kubeconfig that points at it (`KUBECONFIG` for policy-server).
    pub kubeconfig: PathBuf,
    /// How many CRDs it serves.
    pub crds: usize,
}

/// What the server answers, computed once.
struct Answers {
    discovery: Bytes,
    /// Each CRD by its name, for a GET of one (`get_resource`).
    by_name: std::collections::HashMap<String, Bytes>,
    list: Bytes,
    version: Bytes,
    log: Mutex<std::fs::File>,
}

/// Starts the stand-in API server on 127.0.0.1 (a free port) on `runtime`, serving `crds` (JSON
/// texts of CustomResourceDefinitions as a cluster holds them), and writes its kubeconfig into
/// `work`.
pub fn start(runtime: &tokio::runtime::Runtime, work: &Path, crds: &[String]) -> Result<ApiServer> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let port = listener.local_addr()?.port();
    // The list's resourceVersion is the highest of its items', as the API server's is at least that.
    let resource_version = crds
        .iter()
        .filter_map(|text| serde_json::from_str::<Value>(text).ok())
        .filter_map(|crd| crd["metadata"]["resourceVersion"].as_str()?.parse::<u64>().ok())
        .max()
        .unwrap_or(1);
    let list = format!(
        r#"{{"apiVersion":"{GROUP_VERSION}","kind":"CustomResourceDefinitionList","metadata":{{"resourceVersion":"{resource_version}"}},"items":[{}]}}"#,
        crds.join(",")
    );
    let discovery = json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": GROUP_VERSION,
        "resources": [
            {
                "name": PLURAL,
                "singularName": "customresourcedefinition",
                "namespaced": false,
                "kind": "CustomResourceDefinition",
                "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
                "shortNames": ["crd", "crds"],
            },
            {
                "name": format!("{PLURAL}/status"),
                "singularName": "",
                "namespaced": false,
                "kind": "CustomResourceDefinition",
                "verbs": ["get", "patch", "update"],
            },
        ],
    });
    let version = json!({
        "major": "1", "minor": "34", "gitVersion": "v1.34.0", "gitCommit": "bench", "gitTreeState": "clean",
        "buildDate": "2025-08-27T00:00:00Z", "goVersion": "go1.24.6", "compiler": "gc", "platform": "linux/amd64",
    });
    let log_path = work.join("apiserver.log");
    let answers = Arc::new(Answers {
        discovery: Bytes::from(discovery.to_string()),
        by_name: crds
            .iter()
            .filter_map(|text| {
                let crd: Value = serde_json::from_str(text).ok()?;
                Some((crd["metadata"]["name"].as_str()?.to_string(), Bytes::from(text.clone())))
            })
            .collect(),
        list: Bytes::from(list),
        version: Bytes::from(version.to_string()),
        log: Mutex::new(
            std::fs::File::create(&log_path).with_context(|| format!("cannot write {}", log_path.display()))?,
        ),
    });
    let listener = {
        let _guard = runtime.enter();
        tokio::net::TcpListener::from_std(listener)?
    };
    runtime.spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let answers = answers.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    let answers = answers.clone();
                    async move { Ok::<_, Infallible>(answer(&answers, &request)) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    let kubeconfig = work.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: bench\n  cluster:\n    server: http://127.0.0.1:{port}\nusers:\n- name: bench\n  user:\n    token: bench\ncontexts:\n- name: bench\n  context:\n    cluster: bench\n    user: bench\ncurrent-context: bench\n"
        ),
    )?;
    Ok(ApiServer {
        kubeconfig,
        crds: crds.len(),
    })
}

/// The answer to one request: discovery of the group version, the list, a quiet watch, the
/// server's version, or 404 with a Kubernetes Status.
fn answer<B>(answers: &Answers, request: &hyper::Request<B>) -> hyper::Response<Either<Full<Bytes>, Quiet>> {
    let path = request.uri().path();
    let query = request.uri().query().unwrap_or("");
    if let Ok(mut log) = answers.log.lock() {
        let _ = writeln!(log, "{} {}", request.method(), request.uri());
    }
    let json = |status: u16, body: Bytes| {
        hyper::Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(Either::Left(Full::new(body)))
            .expect("a valid response")
    };
    let watching = query.split('&').any(|pair| pair == "watch=true" || pair == "watch=1");
    let one = path
        .strip_prefix(&format!("/apis/{GROUP_VERSION}/{PLURAL}/"))
        .and_then(|name| answers.by_name.get(name));
    match path {
        "/version" => json(200, answers.version.clone()),
        _ if path == format!("/apis/{GROUP_VERSION}") => json(200, answers.discovery.clone()),
        _ if path == format!("/apis/{GROUP_VERSION}/{PLURAL}") && watching => hyper::Response::builder()
            .status(200)
            .header("content-type", "application/json")
            .body(Either::Right(Quiet))
            .expect("a valid response"),
        _ if path == format!("/apis/{GROUP_VERSION}/{PLURAL}") => json(200, answers.list.clone()),
        _ if one.is_some() => json(200, one.cloned().unwrap_or_default()),
        _ => json(
            404,
            Bytes::from(
                json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": "the server could not find the requested resource", "reason": "NotFound", "code": 404})
                .to_string(),
            ),
        ),
    }
}
