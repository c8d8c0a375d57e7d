//! `syncguard annotate`: the embedded metadata is metadata.yml plus protocolVersion and the
//! README as usage, as kwctl embeds it; a broken metadata.yml is refused with the field named.

mod common;

use common::{TempDir, built, root, run, shipped_policies, text};
use serde_json::Value;

#[test]
fn annotated_modules_embed_metadata_and_readme() {
    for policy in shipped_policies() {
        let module = built(&format!("policies/{policy}/annotated-policy.wasm"));
        let output = run([
            "inspect".as_ref(),
            module.as_os_str(),
            "--output".as_ref(),
            "json".as_ref(),
        ]);
        assert!(output.status.success(), "{policy}: {}", text(&output).1);
        let embedded: Value = serde_json::from_str(&text(&output).0).unwrap();
        let folder = root().join("policies").join(&policy);
        let yaml: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(&std::fs::read_to_string(folder.join("metadata.yml")).unwrap()).unwrap();
        let declared: Value = serde_json::to_value(yaml).unwrap();
        assert_eq!(embedded["protocolVersion"], "v1", "{policy}");
        assert_eq!(embedded["rules"], declared["rules"], "{policy}");
        assert_eq!(embedded["mutating"], declared["mutating"], "{policy}");
        assert_eq!(embedded["executionMode"], "kubewarden-wapc", "{policy}");
        let readme = std::fs::read_to_string(folder.join("README.md")).unwrap();
        assert_eq!(
            embedded["annotations"]["io.kubewarden.policy.usage"].as_str(),
            Some(readme.as_str()),
            "{policy}"
        );
        for (key, value) in declared["annotations"].as_object().unwrap() {
            assert_eq!(&embedded["annotations"][key], value, "{policy}: annotation {key}");
        }
    }
}

#[test]
fn broken_metadata_is_refused_with_the_field_named() {
    // A policy whose metadata.yml holds every line the cases below break.
    let policy = "crd-safe-upgrade";
    assert!(shipped_policies().iter().any(|p| p == policy), "{policy} ships");
    let folder = root().join("policies").join(policy);
    let module = built(&format!("policies/{policy}/policy.wasm"));
    let metadata = std::fs::read_to_string(folder.join("metadata.yml")).unwrap();
    let dir = TempDir::new("annotate");
    let cases: [(&str, &str, &str); 7] = [
        ("mutating: true", "mutating: maybe", "`mutating`"),
        ("mutating: true", "", "metadata: missing field `mutating`"),
        ("mutating: true", "mutatin: true", "metadata field `mutatin` is unknown"),
        (
            "executionMode: kubewarden-wapc",
            "executionMode: opa",
            "`executionMode`",
        ),
        ("      - UPDATE", "      - PATCH", "`rules[0].operations`"),
        (
            "      - customresourcedefinitions",
            "      - \"\"",
            "`rules[0].resources`",
        ),
        (
            "minimumKubewardenVersion: 1.10.0",
            "minimumKubewardenVersion: latest",
            "`minimumKubewardenVersion`",
        ),
    ];
    for (from, to, expected) in cases {
        assert!(metadata.contains(from), "{policy}/metadata.yml: expected `{from}`");
        let broken = dir.path().join("metadata.yml");
        std::fs::write(&broken, metadata.replacen(from, to, 1)).unwrap();
        let output = run([
            "annotate".as_ref(),
            "-m".as_ref(),
            broken.as_os_str(),
            "-o".as_ref(),
            dir.path().join("out.wasm").as_os_str(),
            module.as_os_str(),
        ]);
        let (_, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(1), "{to}: {stderr}");
        assert!(
            stderr.contains(expected),
            "{to}: the error should name {expected}: {stderr}"
        );
        assert!(!dir.path().join("out.wasm").exists(), "{to}: nothing is written");
    }
}
