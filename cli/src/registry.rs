//! `syncguard push`, `syncguard pull` and the registry side of `syncguard inspect`: policies as
//! OCI artifacts, written exactly as `kwctl push` writes them.
//!
//! The artifact: one layer `application/vnd.wasm.content.layer.v1+wasm` holding the raw module,
//! a config blob `{}` of media type `application/vnd.wasm.config.v1+json`, and a schema 2 OCI
//! image manifest whose annotations are the module's single-line metadata annotations plus
//! `org.opencontainers.image.source`.
//!
//! Transport: HTTPS with the system's trust roots (rustls). A registry the user names with
//! `--insecure-registry` is tried, as kwctl does for its insecure sources, over HTTPS, then
//! HTTPS without certificate verification, then plain HTTP; only a failure to talk to the
//! registry at all moves on to the next step. No registry, not even localhost, gets plain HTTP
//! without the flag. Credentials come from the Docker config file (`$DOCKER_CONFIG/config.json`,
//! else `~/.docker/config.json`) through the `docker_credential` crate: the registry's credential
//! helper (`credHelpers`), else its `auths` entry, else the `credsStore`; without any, access is
//! anonymous.

use crate::metadata::Metadata;
use anyhow::{Context, Result, anyhow, bail};
use docker_credential::{CredentialRetrievalError, DockerCredential};
use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::errors::OciDistributionError;
use oci_client::manifest::{self, OciImageManifest};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// The scheme of a policy stored in an OCI registry, as kwctl writes it.
pub const SCHEME: &str = "registry://";
/// Annotation of metadata.yml holding the policy's source repository.
const POLICY_SOURCE: &str = "io.kubewarden.policy.source";
/// The OCI annotation kwctl fills from [`POLICY_SOURCE`].
const OCI_SOURCE: &str = "org.opencontainers.image.source";

/// Registry options shared by push, pull and inspect.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct RegistryArgs {
    /// Registry (HOST or HOST:PORT) that may be reached over plain HTTP or HTTPS without
    /// certificate verification, after HTTPS fails. Repeatable.
    #[arg(long = "insecure-registry", value_name = "HOST")]
    pub insecure_registries: Vec<String>,
}

/// Arguments of `syncguard push`.
#[derive(clap::Args)]
pub struct PushArgs {
    /// The annotated module (`syncguard annotate` output).
    policy: PathBuf,
    /// Destination, `registry://HOST/PATH:TAG`.
    destination: String,
    #[command(flatten)]
    registry: RegistryArgs,
}

/// Arguments of `syncguard pull`.
#[derive(clap::Args)]
pub struct PullArgs {
    /// The policy, `registry://HOST/PATH:TAG` or `registry://HOST/PATH@sha256:DIGEST`.
    reference: String,
    /// Where to write the module; default: `<last path segment>.wasm` in the current directory.
    #[arg(short = 'o', long = "output-path")]
    output_path: Option<PathBuf>,
    #[command(flatten)]
    registry: RegistryArgs,
}

/// A parsed `registry://` reference.
#[derive(Debug, Clone)]
pub struct PolicyRef {
    reference: Reference,
}

impl PolicyRef {
    /// Parses `registry://HOST/PATH[:TAG][@DIGEST]`; the error says what is wrong.
    pub fn parse(text: &str) -> Result<Self> {
        let Some(rest) = text.strip_prefix(SCHEME) else {
            bail!(
                "invalid policy reference `{text}`: it must start with `{SCHEME}`, e.g. {SCHEME}ghcr.io/syncguard/policies/crd-safe-upgrade:v0.1.0"
            );
        };
        if rest.is_empty() || rest.contains("://") || rest.chars().any(char::is_whitespace) {
            bail!("invalid policy reference `{text}`: expected {SCHEME}HOST/PATH:TAG");
        }
        let reference: Reference = rest
            .parse()
            .map_err(|e| anyhow!("invalid policy reference `{text}`: {e} (expected {SCHEME}HOST/PATH:TAG)"))?;
        Ok(PolicyRef { reference })
    }

    /// The registry as written (`HOST[:PORT]`).
    pub fn registry(&self) -> &str {
        self.reference.registry()
    }

    /// `registry://HOST/PATH@DIGEST`.
    pub fn immutable(&self, digest: &str) -> String {
        format!(
            "{SCHEME}{}/{}@{digest}",
            self.reference.registry(),
            self.reference.repository()
        )
    }

    /// The last segment of the repository path, e.g. `crd-safe-upgrade`.
    pub fn name(&self) -> &str {
        let repository = self.reference.repository();
        repository.rsplit('/').next().unwrap_or(repository)
    }
}

impl std::fmt::Display for PolicyRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{SCHEME}{}", self.reference.whole())
    }
}

/// One way of talking to a registry.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Transport {
    Https,
    HttpsNoVerify,
    Http,
}

impl Transport {
    fn describe(self) -> &'static str {
        match self {
            Transport::Https => "https",
            Transport::HttpsNoVerify => "https without certificate verification",
            Transport::Http => "plain http",
        }
    }
}

/// A pulled policy.
pub struct Pulled {
    /// The module bytes (the only layer).
    pub wasm: Vec<u8>,
    /// The image manifest.
    pub manifest: OciImageManifest,
    /// The manifest's digest, `sha256:...`.
    pub digest: String,
}

/// Talks to registries for one command: the tokio runtime, credentials and insecure registries.
pub struct Registry {
    runtime: tokio::runtime::Runtime,
    insecure: Vec<String>,
}

impl Registry {
    /// A registry client on a current-thread runtime (created here, used only by this command).
    pub fn new(args: &RegistryArgs) -> Result<Self> {
        // reqwest is built without a default crypto provider: use ring (no C toolchain beyond a
        // small build, no OpenSSL). Installing twice in one process is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        Ok(Registry {
            runtime,
            insecure: args.insecure_registries.clone(),
        })
    }

    fn is_insecure(&self, registry: &str) -> bool {
        let host = host_of(registry);
        self.insecure
            .iter()
            .any(|i| i == registry || (!i.contains(':') && i == host))
    }

    fn transports(&self, policy: &PolicyRef) -> Vec<Transport> {
        if self.is_insecure(policy.registry()) {
            vec![Transport::Https, Transport::HttpsNoVerify, Transport::Http]
        } else {
            vec![Transport::Https]
        }
    }

    fn client(transport: Transport) -> Result<Client> {
        let config = ClientConfig {
            protocol: match transport {
                Transport::Http => ClientProtocol::Http,
                Transport::Https | Transport::HttpsNoVerify => ClientProtocol::Https,
            },
            accept_invalid_certificates: transport == Transport::HttpsNoVerify,
            connect_timeout: Some(Duration::from_secs(10)),
            read_timeout: Some(Duration::from_secs(120)),
            ..Default::default()
        };
        Client::try_from(config).map_err(|e| anyhow!("cannot create the registry client: {e}"))
    }

    /// Runs `operation` over each allowed transport until one reaches the registry.
    fn with_transports<T, F, Fut>(&self, policy: &PolicyRef, what: &str, operation: F) -> Result<T>
    where
        F: Fn(Client, RegistryAuth) -> Fut,
        Fut: std::future::Future<Output = Result<T, OciDistributionError>>,
    {
        let auth = docker_auth(policy);
        let transports = self.transports(policy);
        let mut failures = Vec::new();
        for transport in &transports {
            let client = Self::client(*transport)?;
            match self.runtime.block_on(operation(client, auth.clone())) {
                Ok(value) => return Ok(value),
                Err(OciDistributionError::RequestError(e)) => {
                    failures.push(format!("{}: {}", transport.describe(), error_chain(&e)));
                }
                Err(e) => return Err(anyhow!("cannot {what} {policy}: {}", registry_error(&e))),
            }
        }
        let hint = if transports.len() == 1 {
            format!(
                " (a registry served over plain HTTP or with a certificate the system does not trust, such as a local test registry, needs --insecure-registry {})",
                policy.registry()
            )
        } else {
            String::new()
        };
        bail!(
            "cannot {what} {policy}: the registry {} cannot be reached (tried {}){hint}",
            policy.registry(),
            failures.join("; ")
        )
    }

    /// Pushes an annotated module; returns the immutable `registry://...@sha256:...` reference.
    pub fn push(&self, wasm: &[u8], annotations: BTreeMap<String, String>, destination: &PolicyRef) -> Result<String> {
        let layers = vec![ImageLayer::new(
            wasm.to_vec(),
            manifest::WASM_LAYER_MEDIA_TYPE.to_string(),
            None,
        )];
        let config = Config {
            data: b"{}".to_vec().into(),
            media_type: manifest::WASM_CONFIG_MEDIA_TYPE.to_string(),
            annotations: None,
        };
        let image_manifest = OciImageManifest::build(&layers, &config, Some(annotations));
        let reference = destination.reference.clone();
        let manifest_url = self.with_transports(destination, "push to", |client, auth| {
            let reference = reference.clone();
            let layers = layers.clone();
            let config = config.clone();
            let image_manifest = image_manifest.clone();
            async move {
                client
                    .push(&reference, &layers, config, &auth, Some(image_manifest))
                    .await
                    .map(|response| response.manifest_url)
            }
        })?;
        let digest = digest_from_manifest_url(&manifest_url)?;
        Ok(destination.immutable(&digest))
    }

    /// Pulls a policy: its only layer must be a Wasm module.
    pub fn pull(&self, policy: &PolicyRef) -> Result<Pulled> {
        let reference = policy.reference.clone();
        let image = self.with_transports(policy, "pull", |client, auth| {
            let reference = reference.clone();
            async move {
                client
                    .pull(&reference, &auth, vec![manifest::WASM_LAYER_MEDIA_TYPE])
                    .await
            }
        })?;
        let manifest = image
            .manifest
            .ok_or_else(|| anyhow!("{policy}: the registry returned no image manifest"))?;
        let digest = image
            .digest
            .ok_or_else(|| anyhow!("{policy}: the registry returned no manifest digest"))?;
        let mut layers = image.layers.into_iter();
        let (Some(layer), None) = (layers.next(), layers.next()) else {
            bail!("{policy} is not a Kubewarden policy: a policy artifact has exactly one layer");
        };
        if !layer.data.starts_with(b"\0asm") {
            bail!("{policy}: the layer is not a WebAssembly module");
        }
        Ok(Pulled {
            wasm: layer.data.to_vec(),
            manifest,
            digest,
        })
    }
}

/// The OCI manifest annotations of a module, as kwctl computes them: every single-line metadata
/// annotation (trimmed; multi-line ones such as the README usage are left out) plus
/// `org.opencontainers.image.source` from `io.kubewarden.policy.source` when not set already.
pub fn oci_annotations(metadata: &Metadata) -> BTreeMap<String, String> {
    let mut annotations: BTreeMap<String, String> = metadata
        .annotations
        .iter()
        .flatten()
        .filter(|(_, value)| value.lines().count() <= 1)
        .map(|(key, value)| (key.clone(), value.trim().to_string()))
        .collect();
    if let Some(source) = annotations.get(POLICY_SOURCE).cloned() {
        annotations.entry(OCI_SOURCE.to_string()).or_insert(source);
    }
    annotations
}

/// `syncguard push`.
pub fn push(args: PushArgs) -> Result<ExitCode> {
    let destination = PolicyRef::parse(&args.destination)?;
    let wasm = std::fs::read(&args.policy).with_context(|| format!("cannot read {}", args.policy.display()))?;
    let metadata = Metadata::from_wasm(&wasm).with_context(|| format!("{}", args.policy.display()))?;
    let Some(metadata) = metadata else {
        bail!(
            "{} is not annotated: Kubewarden cannot run a policy without embedded metadata. Annotate it first: \
             syncguard annotate -m metadata.yml -u README.md -o annotated-policy.wasm {}",
            args.policy.display(),
            args.policy.display()
        );
    };
    if metadata.protocol_version.as_deref() != Some("v1") {
        bail!(
            "{}: the embedded metadata lacks protocolVersion v1, which policy-server requires: annotate it again with syncguard annotate",
            args.policy.display()
        );
    }
    let registry = Registry::new(&args.registry)?;
    let immutable = registry.push(&wasm, oci_annotations(&metadata), &destination)?;
    eprintln!("Policy pushed to {destination}");
    println!("{immutable}");
    Ok(ExitCode::SUCCESS)
}

/// `syncguard pull`.
pub fn pull(args: PullArgs) -> Result<ExitCode> {
    let policy = PolicyRef::parse(&args.reference)?;
    let registry = Registry::new(&args.registry)?;
    let pulled = registry.pull(&policy)?;
    let output = args
        .output_path
        .unwrap_or_else(|| PathBuf::from(format!("{}.wasm", policy.name())));
    write_file(&output, &pulled.wasm)?;
    eprintln!(
        "Policy {} written to {}",
        policy.immutable(&pulled.digest),
        output.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn write_file(path: &Path, data: &[u8]) -> Result<()> {
    std::fs::write(path, data).with_context(|| format!("cannot write {}", path.display()))
}

/// `sha256:<hex>` from the manifest URL a registry returns after a push.
fn digest_from_manifest_url(url: &str) -> Result<String> {
    let digest = url.rsplit('/').next().unwrap_or_default();
    let valid = digest
        .strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()));
    if !valid {
        bail!("the registry answered the push with an unexpected manifest location `{url}` (no sha256 digest)");
    }
    Ok(digest.to_ascii_lowercase())
}

/// The host part of `HOST[:PORT]` (IPv6 in brackets kept whole).
fn host_of(registry: &str) -> &str {
    if let Some(end) = registry.find(']') {
        return &registry[..=end];
    }
    registry.split(':').next().unwrap_or(registry)
}

/// An error and its sources, joined: reqwest's own message alone hides the cause.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut parts = vec![error.to_string()];
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    parts.join(": ")
}

fn registry_error(error: &OciDistributionError) -> String {
    let denied = match error {
        OciDistributionError::AuthenticationFailure(_) | OciDistributionError::UnauthorizedError { .. } => true,
        OciDistributionError::ServerError { code, .. } => *code == 401 || *code == 403,
        _ => false,
    };
    if denied {
        format!(
            "{}; the registry refused the credentials (or their absence): log in with `docker login HOST` \
             (syncguard reads $DOCKER_CONFIG/config.json or ~/.docker/config.json and its credential helpers)",
            error_chain(error)
        )
    } else {
        error_chain(error)
    }
}

/// Credentials for the policy's registry from the Docker config file
/// (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`): its credential helper or store,
/// or its `auths` entry; anonymous when there is none.
fn docker_auth(policy: &PolicyRef) -> RegistryAuth {
    let registry = policy.registry();
    match auth_from_docker_config(
        registry,
        policy.reference.resolve_registry(),
        docker_credential::get_credential,
    ) {
        Ok(auth) => auth,
        Err(e) => {
            eprintln!("Warning: the Docker credentials of {registry}: {e}; using anonymous access");
            RegistryAuth::Anonymous
        }
    }
}

/// Finds the credentials of `registry` (as written, or as resolved, e.g. `index.docker.io`)
/// with `lookup`, which asks the Docker config for one server key. `docker login` keys most
/// registries by host and Docker Hub by `https://index.docker.io/v1/`, so each name is also
/// tried with that scheme and path.
pub fn auth_from_docker_config(
    registry: &str,
    resolved: &str,
    lookup: impl Fn(&str) -> Result<DockerCredential, CredentialRetrievalError>,
) -> Result<RegistryAuth> {
    let mut keys = Vec::new();
    for name in [registry, resolved] {
        for key in [
            name.to_string(),
            format!("https://{name}"),
            format!("https://{name}/v1/"),
        ] {
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    for key in &keys {
        match lookup(key) {
            Ok(DockerCredential::UsernamePassword(user, password)) => return Ok(RegistryAuth::Basic(user, password)),
            Ok(DockerCredential::IdentityToken(_)) => {
                bail!("the entry of {key} holds an identity token, which the registry client does not support")
            }
            // A helper or store answers "not found" with a failure: try the next key.
            Err(CredentialRetrievalError::NoCredentialConfigured | CredentialRetrievalError::HelperFailure { .. }) => {
                continue;
            }
            // No config file (or an unreadable one): anonymous access, as docker does.
            Err(CredentialRetrievalError::ConfigNotFound | CredentialRetrievalError::ConfigReadError) => {
                return Ok(RegistryAuth::Anonymous);
            }
            Err(e) => bail!("{key}: {e}"),
        }
    }
    Ok(RegistryAuth::Anonymous)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references() {
        let r = PolicyRef::parse("registry://127.0.0.1:5000/syncguard/crd-safe-upgrade:v0.1.0").unwrap();
        assert_eq!(r.registry(), "127.0.0.1:5000");
        assert_eq!(r.name(), "crd-safe-upgrade");
        assert_eq!(
            r.to_string(),
            "registry://127.0.0.1:5000/syncguard/crd-safe-upgrade:v0.1.0"
        );
        let digest = format!("sha256:{}", "a".repeat(64));
        assert_eq!(
            r.immutable(&digest),
            format!("registry://127.0.0.1:5000/syncguard/crd-safe-upgrade@{digest}")
        );
        for bad in [
            "127.0.0.1:5000/x:v1",
            "https://ghcr.io/x:v1",
            "registry://",
            "registry://ghcr.io/Upper:v1",
            "registry://ghcr.io/x:bad tag",
            "registry://ghcr.io/x@sha256:zz",
        ] {
            let e = PolicyRef::parse(bad).unwrap_err().to_string();
            assert!(e.contains("invalid policy reference"), "{bad}: {e}");
        }
    }

    #[test]
    fn insecure_registries_match_host_or_host_and_port() {
        let registry = |flags: &[&str]| Registry {
            runtime: tokio::runtime::Builder::new_current_thread().build().unwrap(),
            insecure: flags.iter().map(|s| s.to_string()).collect(),
        };
        assert!(registry(&["127.0.0.1:5000"]).is_insecure("127.0.0.1:5000"));
        assert!(registry(&["127.0.0.1"]).is_insecure("127.0.0.1:5000"));
        assert!(!registry(&["127.0.0.1:5001"]).is_insecure("127.0.0.1:5000"));
        assert!(!registry(&[]).is_insecure("localhost:5000"));
        assert!(!registry(&["localhost"]).is_insecure("127.0.0.1:5000"));
    }

    #[test]
    fn docker_config_auths() {
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD.encode("bob:s3cret:with:colons");
        let config = format!(
            r#"{{"auths":{{"https://index.docker.io/v1/":{{"auth":"{b64}"}},"ghcr.io":{{"username":"u","password":"p"}}}}}}"#
        );
        let auth = |config: &str, registry: &str, resolved: &str| {
            auth_from_docker_config(registry, resolved, |key| {
                docker_credential::get_credential_from_reader(config.as_bytes(), key)
            })
        };
        let basic = |auth: RegistryAuth| match auth {
            RegistryAuth::Basic(u, p) => (u, p),
            _ => panic!("expected basic auth"),
        };
        assert_eq!(
            basic(auth(&config, "docker.io", "index.docker.io").unwrap()),
            ("bob".to_string(), "s3cret:with:colons".to_string())
        );
        assert_eq!(
            basic(auth(&config, "ghcr.io", "ghcr.io").unwrap()),
            ("u".into(), "p".into())
        );
        assert!(matches!(
            auth(&config, "quay.io", "quay.io").unwrap(),
            RegistryAuth::Anonymous
        ));
        assert!(auth(r#"{"auths":{"x.io":{"auth":"!!"}}}"#, "x.io", "x.io").is_err());
        let token = auth(r#"{"auths":{"x.io":{"identitytoken":"t"}}}"#, "x.io", "x.io").unwrap_err();
        assert!(token.to_string().contains("identity token"), "{token}");
    }

    #[test]
    fn oci_annotations_drop_multi_line_and_add_source() {
        let mut metadata = Metadata::from_yaml(
            "rules: [{apiGroups: [''], apiVersions: [v1], resources: [pods], operations: [CREATE]}]\nmutating: false\n\
             annotations:\n  io.kubewarden.policy.source: https://github.com/syncguard/syncguard\n  io.kubewarden.policy.title: ' t '\n",
        )
        .unwrap();
        metadata
            .annotations
            .as_mut()
            .unwrap()
            .insert("io.kubewarden.policy.usage".into(), "# README\n\ntext".into());
        let annotations = oci_annotations(&metadata);
        assert_eq!(
            annotations.get("io.kubewarden.policy.title").map(String::as_str),
            Some("t")
        );
        assert_eq!(
            annotations.get(OCI_SOURCE).map(String::as_str),
            Some("https://github.com/syncguard/syncguard")
        );
        assert!(!annotations.contains_key("io.kubewarden.policy.usage"));
    }

    #[test]
    fn manifest_location_digest() {
        let hex = "0123456789abcdef".repeat(4);
        assert_eq!(
            digest_from_manifest_url(&format!("http://h/v2/a/b/manifests/sha256:{hex}")).unwrap(),
            format!("sha256:{hex}")
        );
        assert!(digest_from_manifest_url("http://h/v2/a/manifests/v1").is_err());
    }
}
