//! `syncguard push`, `pull` and `inspect REF` against a real registry: Debian's
//! `docker-registry` (CNCF distribution) on 127.0.0.1, a free port, storage in a temp dir.

mod common;

use common::{TestRegistry, built, free_port, http_get, root, run, sha256, text};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

const POLICY: &str = "crd-safe-upgrade";
/// A fixture the policy rejects: proves the pulled module really evaluates.
const FIXTURE: &str = "policies/crd-safe-upgrade/test_data/grpcroute-v1.2-to-v1.1-standard-downgrade.json";
const WASM_LAYER: &str = "application/vnd.wasm.content.layer.v1+wasm";
const WASM_CONFIG: &str = "application/vnd.wasm.config.v1+json";
const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";

/// The annotations kwctl puts on the manifest: metadata.yml's single-line annotations plus
/// `org.opencontainers.image.source` (computed here from metadata.yml, independently of the
/// command).
fn expected_annotations(policy: &str) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(root().join("policies").join(policy).join("metadata.yml")).unwrap();
    let metadata: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
    let mut annotations: BTreeMap<String, String> = serde_yaml_ng::from_value(metadata["annotations"].clone()).unwrap();
    annotations.retain(|_, v| v.lines().count() <= 1);
    let source = annotations["io.kubewarden.policy.source"].clone();
    annotations.insert("org.opencontainers.image.source".into(), source);
    annotations
}

fn run_fixture(module: &Path) -> String {
    let output = run([
        "run".as_ref(),
        "--request-path".as_ref(),
        root().join(FIXTURE).as_os_str(),
        module.as_os_str(),
    ]);
    let (stdout, stderr) = text(&output);
    assert!(
        output.status.success(),
        "syncguard run {} failed: {stderr}",
        module.display()
    );
    stdout
}

#[test]
fn push_pull_inspect_run_round_trip() {
    let module = built(&format!("policies/{POLICY}/annotated-policy.wasm"));
    let bytes = std::fs::read(&module).unwrap();
    let registry = TestRegistry::start();
    let addr = registry.addr.clone();
    let tagged = format!("registry://{addr}/syncguard/{POLICY}:v0.1.0");

    // push prints the immutable reference
    let output = run([
        "push".as_ref(),
        module.as_os_str(),
        tagged.as_ref(),
        "--insecure-registry".as_ref(),
        addr.as_ref(),
    ]);
    let (stdout, stderr) = text(&output);
    assert!(
        output.status.success(),
        "push failed: {stderr}\nregistry log:\n{}",
        registry.log()
    );
    let immutable = stdout.trim().to_string();
    let prefix = format!("registry://{addr}/syncguard/{POLICY}@sha256:");
    let hex = immutable
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("push printed `{immutable}`, expected {prefix}<hex>"));
    assert!(
        hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
        "{immutable}"
    );
    let digest = format!("sha256:{hex}");

    // the manifest as the registry stores it, read without the OCI client under test
    let manifest_path = format!("/v2/syncguard/{POLICY}/manifests/v0.1.0");
    let response = http_get(&addr, &manifest_path, &[("Accept", OCI_MANIFEST)]).unwrap();
    assert_eq!(response.status, 200, "{}", String::from_utf8_lossy(&response.body));
    assert_eq!(response.header("content-type"), Some(OCI_MANIFEST));
    assert_eq!(sha256(&response.body), digest, "the printed digest is the manifest's");
    let manifest: Value = serde_json::from_slice(&response.body).unwrap();
    assert_eq!(manifest["schemaVersion"], 2);
    // as kwctl's: the media type travels as the Content-Type of the PUT, not in the body
    assert!(manifest.get("mediaType").is_none(), "{manifest}");
    assert_eq!(manifest["config"]["mediaType"], WASM_CONFIG);
    assert_eq!(manifest["config"]["size"], 2);
    assert_eq!(manifest["config"]["digest"], sha256(b"{}"));
    let layers = manifest["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1, "{manifest}");
    assert_eq!(layers[0]["mediaType"], WASM_LAYER);
    assert_eq!(layers[0]["size"], bytes.len() as u64);
    assert_eq!(layers[0]["digest"], sha256(&bytes));
    let annotations: BTreeMap<String, String> = serde_json::from_value(manifest["annotations"].clone()).unwrap();
    assert_eq!(annotations, expected_annotations(POLICY));
    assert!(
        !annotations.contains_key("io.kubewarden.policy.usage"),
        "multi-line annotations stay out of the manifest"
    );

    let config = http_get(&addr, &format!("/v2/syncguard/{POLICY}/blobs/{}", sha256(b"{}")), &[]).unwrap();
    assert_eq!((config.status, config.body.as_slice()), (200, b"{}".as_slice()));
    let layer = http_get(&addr, &format!("/v2/syncguard/{POLICY}/blobs/{}", sha256(&bytes)), &[]).unwrap();
    assert_eq!(layer.status, 200);
    assert!(layer.body == bytes, "the stored layer is the module, byte for byte");

    // pull back, by digest and by tag: byte-identical
    let dir = common::TempDir::new("pull");
    for (reference, file) in [(immutable.as_str(), "by-digest.wasm"), (tagged.as_str(), "by-tag.wasm")] {
        let out = dir.path().join(file);
        let output = run([
            "pull".as_ref(),
            reference.as_ref(),
            "-o".as_ref(),
            out.as_os_str(),
            "--insecure-registry".as_ref(),
            addr.as_ref(),
        ]);
        assert!(output.status.success(), "pull {reference} failed: {}", text(&output).1);
        assert!(
            std::fs::read(&out).unwrap() == bytes,
            "pulled {reference} differs from the pushed module"
        );
    }

    // the pulled module runs, and decides as the local one does
    let pulled = dir.path().join("by-digest.wasm");
    let verdict = run_fixture(&pulled);
    assert!(
        verdict.contains("\"allowed\":false") && verdict.contains("goes down from"),
        "{verdict}"
    );
    assert_eq!(verdict, run_fixture(&module));

    // inspect REF shows what inspect FILE shows, plus the artifact
    let inspect = |target: &str, output: &str| {
        let out = run(["inspect", target, "--output", output, "--insecure-registry", &addr]);
        assert!(out.status.success(), "inspect {target} failed: {}", text(&out).1);
        text(&out).0
    };
    let local = inspect(module.to_str().unwrap(), "json");
    assert_eq!(inspect(&tagged, "json"), local);
    let metadata: Value = serde_json::from_str(&local).unwrap();
    assert_eq!(metadata["protocolVersion"], "v1");
    let human = inspect(&tagged, "human");
    assert!(human.contains(&immutable), "{human}");
    assert!(human.contains(WASM_LAYER) && human.contains(WASM_CONFIG), "{human}");

    kwctl_reads_it(&addr, &tagged, &dir, &verdict);
}

/// When kwctl is present (`KWCTL` names it), kwctl itself pulls, inspects and runs what
/// `syncguard push` published. Without kwctl this part says so on stderr.
fn kwctl_reads_it(addr: &str, tagged: &str, dir: &common::TempDir, syncguard_verdict: &str) {
    let Some(kwctl) = std::env::var_os("KWCTL").filter(|k| !k.is_empty()) else {
        eprintln!("note: KWCTL is not set: kwctl's own pull/inspect/run of the pushed policy was not exercised");
        return;
    };
    let sources = dir.path().join("sources.yml");
    std::fs::write(&sources, format!("insecure_sources:\n  - \"{addr}\"\n")).unwrap();
    let kwctl = |args: &[&str]| {
        let output = std::process::Command::new(&kwctl)
            .args(args)
            .output()
            .expect("cannot start kwctl");
        let (stdout, stderr) = text(&output);
        assert!(output.status.success(), "kwctl {args:?} failed: {stderr}");
        stdout
    };
    let sources = sources.to_str().unwrap();
    kwctl(&["pull", "--sources-path", sources, tagged]);
    let inspect = kwctl(&["inspect", "--sources-path", sources, tagged]);
    assert!(inspect.contains(POLICY), "{inspect}");
    let request = root().join(FIXTURE);
    let verdict = kwctl(&[
        "run",
        "--sources-path",
        sources,
        "--request-path",
        request.to_str().unwrap(),
        tagged,
    ]);
    let kw: Value = serde_json::from_str(verdict.lines().rev().find(|l| l.starts_with('{')).unwrap()).unwrap();
    let sg: Value = serde_json::from_str(syncguard_verdict.trim()).unwrap();
    assert_eq!(kw["allowed"], sg["allowed"]);
    assert_eq!(kw["status"]["message"], sg["status"]["message"]);
}

#[test]
fn plain_http_needs_the_insecure_flag_even_on_localhost() {
    let module = built(&format!("policies/{POLICY}/annotated-policy.wasm"));
    let registry = TestRegistry::start();
    let destination = format!("registry://{}/syncguard/{POLICY}:v0.1.0", registry.addr);
    let output = run(["push".as_ref(), module.as_os_str(), destination.as_ref()]);
    let (_, stderr) = text(&output);
    assert!(!output.status.success());
    assert!(
        stderr.contains("cannot be reached") && stderr.contains("--insecure-registry"),
        "{stderr}"
    );
    // nothing reached the registry
    let tags = http_get(&registry.addr, &format!("/v2/syncguard/{POLICY}/tags/list"), &[]).unwrap();
    assert_eq!(tags.status, 404, "{}", String::from_utf8_lossy(&tags.body));
}

#[test]
fn unreachable_registry_is_a_clear_error() {
    let module = built(&format!("policies/{POLICY}/annotated-policy.wasm"));
    let addr = format!("127.0.0.1:{}", free_port());
    let destination = format!("registry://{addr}/syncguard/{POLICY}:v0.1.0");
    for args in [
        vec![
            "push",
            module.to_str().unwrap(),
            &destination,
            "--insecure-registry",
            &addr,
        ],
        vec!["pull", &destination, "-o", "/dev/null", "--insecure-registry", &addr],
        vec!["inspect", &destination, "--insecure-registry", &addr],
    ] {
        let output = run(&args);
        let (_, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("the registry {addr} cannot be reached")),
            "{args:?}: {stderr}"
        );
        assert!(
            stderr.to_lowercase().contains("connection refused"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn missing_tag_is_a_clear_error() {
    let registry = TestRegistry::start();
    let reference = format!("registry://{}/syncguard/nothing-here:v9.9.9", registry.addr);
    let output = run([
        "pull",
        &reference,
        "-o",
        "/dev/null",
        "--insecure-registry",
        &registry.addr,
    ]);
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("cannot pull {reference}")), "{stderr}");
    assert!(stderr.to_lowercase().contains("manifest unknown"), "{stderr}");
}

#[test]
fn bad_references_are_refused() {
    let module = built(&format!("policies/{POLICY}/annotated-policy.wasm"));
    for reference in [
        "127.0.0.1:5000/syncguard/x:v1",
        "oci://127.0.0.1:5000/syncguard/x:v1",
        "registry://127.0.0.1:5000/Syncguard/x:v1",
        "registry://127.0.0.1:5000/syncguard/x:not a tag",
        "registry://127.0.0.1:5000/syncguard/x@sha256:1234",
        "registry://",
    ] {
        for args in [
            vec!["push", module.to_str().unwrap(), reference],
            vec!["pull", reference],
            vec!["inspect", reference],
        ] {
            let output = run(&args);
            let (_, stderr) = text(&output);
            assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
            if args[0] == "inspect" && !reference.starts_with("registry://") {
                // not a registry reference: inspect reads it as a file
                assert!(stderr.contains("cannot read policy module"), "{args:?}: {stderr}");
            } else {
                assert!(
                    stderr.contains(&format!("invalid policy reference `{reference}`")),
                    "{args:?}: {stderr}"
                );
            }
        }
    }
}

#[test]
fn push_refuses_an_unannotated_module() {
    let module = built(&format!("policies/{POLICY}/policy.wasm"));
    let output = run([
        "push".as_ref(),
        module.as_os_str(),
        "registry://127.0.0.1:1/syncguard/x:v1".as_ref(),
    ]);
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("is not annotated") && stderr.contains("syncguard annotate"),
        "{stderr}"
    );
}

/// A registry with basic authentication: anonymous access is refused with a hint, and the
/// credentials of the Docker config file (`$DOCKER_CONFIG/config.json`, `auths`) are used.
#[test]
fn credentials_come_from_the_docker_config_file() {
    use base64::Engine as _;
    let module = built(&format!("policies/{POLICY}/annotated-policy.wasm"));
    let bytes = std::fs::read(&module).unwrap();
    // user `syncguard`, password `syncguard-test-password` (bcrypt)
    let registry = TestRegistry::start_with_htpasswd(&root().join("cli/tests/data/htpasswd"));
    let addr = registry.addr.clone();
    let destination = format!("registry://{addr}/syncguard/{POLICY}:v0.1.0");
    let dir = common::TempDir::new("docker-config");
    let push = |docker_config: &Path| {
        common::syncguard()
            .args([
                "push".as_ref(),
                module.as_os_str(),
                destination.as_ref(),
                "--insecure-registry".as_ref(),
                addr.as_ref(),
            ])
            .env("DOCKER_CONFIG", docker_config)
            .env("HOME", dir.path())
            .output()
            .unwrap()
    };

    // no config file: anonymous, refused
    let output = push(&dir.path().join("none"));
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("401") && stderr.contains("docker login"), "{stderr}");

    // wrong password: refused
    let config = |user_pass: &str| {
        let auth = base64::engine::general_purpose::STANDARD.encode(user_pass);
        let path = dir.path().join(user_pass.replace(':', "-"));
        std::fs::create_dir_all(&path).unwrap();
        std::fs::write(
            path.join("config.json"),
            format!(r#"{{"auths":{{"{addr}":{{"auth":"{auth}"}}}}}}"#),
        )
        .unwrap();
        path
    };
    let output = push(&config("syncguard:wrong"));
    assert_eq!(output.status.code(), Some(1), "{}", text(&output).1);

    // the right credentials: pushed, and pulled back with them
    let good = config("syncguard:syncguard-test-password");
    let output = push(&good);
    assert!(
        output.status.success(),
        "{}\nregistry log:\n{}",
        text(&output).1,
        registry.log()
    );
    let pulled = dir.path().join("pulled.wasm");
    let output = common::syncguard()
        .args([
            "pull".as_ref(),
            destination.as_ref(),
            "-o".as_ref(),
            pulled.as_os_str(),
            "--insecure-registry".as_ref(),
            addr.as_ref(),
        ])
        .env("DOCKER_CONFIG", &good)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output).1);
    assert!(std::fs::read(&pulled).unwrap() == bytes);
}

/// A registry with a self-signed certificate: refused (certificate error) unless the user marks
/// it insecure; then it is reached over HTTPS without verification (it serves no plain HTTP).
#[test]
fn self_signed_registry_needs_the_insecure_flag() {
    let module = built(&format!("policies/{POLICY}/annotated-policy.wasm"));
    let bytes = std::fs::read(&module).unwrap();
    let data = root().join("cli/tests/data");
    let registry = TestRegistry::start_with_tls(&data.join("registry-cert.pem"), &data.join("registry-key.pem"));
    let addr = registry.addr.clone();
    let destination = format!("registry://{addr}/syncguard/{POLICY}:v0.1.0");

    let output = run(["push".as_ref(), module.as_os_str(), destination.as_ref()]);
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("certificate") && stderr.contains("--insecure-registry"),
        "{stderr}"
    );

    let output = run([
        "push".as_ref(),
        module.as_os_str(),
        destination.as_ref(),
        "--insecure-registry".as_ref(),
        "127.0.0.1".as_ref(),
    ]);
    assert!(
        output.status.success(),
        "{}\nregistry log:\n{}",
        text(&output).1,
        registry.log()
    );
    let dir = common::TempDir::new("tls");
    let pulled = dir.path().join("pulled.wasm");
    let output = run([
        "pull".as_ref(),
        destination.as_ref(),
        "-o".as_ref(),
        pulled.as_os_str(),
        "--insecure-registry".as_ref(),
        addr.as_ref(),
    ]);
    assert!(output.status.success(), "{}", text(&output).1);
    assert!(std::fs::read(&pulled).unwrap() == bytes);
}
