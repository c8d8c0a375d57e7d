//! Every policy's committed policy.yaml is fresh (what `make manifests` writes now), is the
//! ClusterAdmissionPolicy its metadata.yml asks for, and its settings are accepted by the module.

mod common;

use common::{TempDir, built, committed, root, run, shipped_policies, text};
use serde_yaml_ng::Value;

#[test]
fn committed_manifests_are_fresh_and_match_the_metadata() {
    let dir = TempDir::new("manifests");
    for policy in shipped_policies() {
        let folder = root().join("policies").join(&policy);
        let path = folder.join("policy.yaml");
        let at = path.display().to_string();
        let committed = committed(&path, "manifests");
        let fresh_path = dir.path().join(format!("{policy}.yaml"));
        let output = run([
            "scaffold".as_ref(),
            "manifest".as_ref(),
            "--metadata-path".as_ref(),
            folder.join("metadata.yml").as_os_str(),
            "--type".as_ref(),
            "ClusterAdmissionPolicy".as_ref(),
            "--allow-context-aware".as_ref(),
            "--output".as_ref(),
            fresh_path.as_os_str(),
        ]);
        assert!(output.status.success(), "{at}: {}", text(&output).1);
        let fresh = std::fs::read_to_string(&fresh_path).unwrap();
        assert!(
            fresh == committed,
            "{at} is stale: run `make manifests` and commit it\n--- regenerated:\n{fresh}"
        );

        let manifest: Value = serde_yaml_ng::from_str(&committed).unwrap();
        let metadata: Value =
            serde_yaml_ng::from_str(&std::fs::read_to_string(folder.join("metadata.yml")).unwrap()).unwrap();
        let annotation = |key: &str| metadata["annotations"][key].as_str().unwrap().trim().to_string();
        assert_eq!(manifest["apiVersion"], "policies.kubewarden.io/v1", "{at}");
        assert_eq!(manifest["kind"], "ClusterAdmissionPolicy", "{at}");
        assert_eq!(manifest["metadata"]["name"].as_str(), Some(policy.as_str()), "{at}");
        let spec = &manifest["spec"];
        let module = format!(
            "registry://{}:v{}",
            annotation("io.kubewarden.policy.ociUrl"),
            annotation("io.kubewarden.policy.version")
        );
        assert_eq!(spec["module"].as_str(), Some(module.as_str()), "{at}");
        assert_eq!(spec["rules"], metadata["rules"], "{at}");
        assert_eq!(spec["mutating"], metadata["mutating"], "{at}");
        let background_audit = metadata["backgroundAudit"].as_bool().unwrap_or(true);
        assert_eq!(spec["backgroundAudit"].as_bool(), Some(background_audit), "{at}");
        match metadata["contextAwareResources"].as_sequence() {
            Some(resources) if !resources.is_empty() => {
                assert_eq!(
                    &spec["contextAwareResources"], &metadata["contextAwareResources"],
                    "{at}"
                )
            }
            _ => assert!(spec.get("contextAwareResources").is_none(), "{at}"),
        }
        assert_eq!(spec["mode"], "protect", "{at}");
        assert_eq!(
            spec["settings"],
            Value::Mapping(Default::default()),
            "{at}: default settings are {{}}"
        );
        for key in ["io.kubewarden.policy.severity", "io.kubewarden.policy.category"] {
            assert_eq!(
                manifest["metadata"]["annotations"][key].as_str(),
                Some(annotation(key).as_str()),
                "{at}"
            );
        }

        // the module accepts the manifest's settings
        let settings = dir.path().join(format!("{policy}-settings.json"));
        std::fs::write(&settings, serde_json::to_string(&spec["settings"]).unwrap()).unwrap();
        let module = built(&format!("policies/{policy}/annotated-policy.wasm"));
        let output = run([
            "run".as_ref(),
            "--settings-path".as_ref(),
            settings.as_os_str(),
            "--request-path".as_ref(),
            root().join("e2e-tests/data/empty-request.json").as_os_str(),
            module.as_os_str(),
        ]);
        assert!(
            output.status.success(),
            "{at}: the module refuses the manifest's settings: {}",
            text(&output).1
        );
    }
}

#[test]
fn scaffold_refuses_what_kwctl_refuses() {
    let metadata = root()
        .join("policies")
        .join(&shipped_policies()[0])
        .join("metadata.yml");
    for (args, error) in [
        (
            vec!["--type", "ClusterAdmissionPolicy", "--policy-title", "Not_Valid"],
            "invalid policy title `Not_Valid`",
        ),
        (
            vec!["--type", "Policy"],
            "--type must be ClusterAdmissionPolicy or AdmissionPolicy",
        ),
    ] {
        let mut all = vec!["scaffold", "manifest", "--metadata-path", metadata.to_str().unwrap()];
        all.extend(args);
        let output = run(&all);
        let (_, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(error), "{stderr}");
    }
}
