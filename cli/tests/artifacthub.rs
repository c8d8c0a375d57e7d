//! Every committed artifacthub-pkg.yml (each policy's and the all-in-one's at the root) is
//! fresh (what `make artifacthub` writes now) and keeps Artifact Hub's rules for the kubewarden
//! repository kind. The rules are checked here independently of the generator.

mod common;

use common::{TempDir, committed, root, run, shipped_policies, text};
use serde_yaml_ng::Value;
use std::path::{Path, PathBuf};

/// Every key Artifact Hub's package metadata file accepts (it rejects any other).
const ALLOWED_KEYS: &[&str] = &[
    "version",
    "name",
    "alternativeName",
    "category",
    "displayName",
    "createdAt",
    "description",
    "logoPath",
    "logoURL",
    "digest",
    "license",
    "homeURL",
    "appVersion",
    "containersImages",
    "containsSecurityUpdates",
    "operator",
    "deprecated",
    "prerelease",
    "keywords",
    "links",
    "readme",
    "install",
    "changes",
    "maintainers",
    "provider",
    "ignore",
    "recommendations",
    "screenshots",
    "annotations",
];

/// A package to check: its folder and inputs.
struct Package {
    dir: PathBuf,
    questions: Option<PathBuf>,
}

fn packages() -> Vec<Package> {
    shipped_policies()
        .into_iter()
        .map(|p| {
            let dir = root().join("policies").join(p);
            let questions = dir.join("questions-ui.yml");
            assert!(
                questions.is_file(),
                "{} is missing: every policy has a questions form",
                questions.display()
            );
            Package {
                dir,
                questions: Some(questions),
            }
        })
        .collect()
}

/// Runs `syncguard artifacthub` for `package` into `output`.
fn generate(package: &Package, output: &Path, epoch: Option<&str>) -> std::process::Output {
    let mut command = common::syncguard();
    command
        .arg("artifacthub")
        .arg("--metadata-path")
        .arg(package.dir.join("metadata.yml"))
        .arg("--readme-path")
        .arg(package.dir.join("README.md"))
        .arg("--output")
        .arg(output);
    if let Some(questions) = &package.questions {
        command.arg("--questions-path").arg(questions);
    }
    match epoch {
        Some(epoch) => command.env("SOURCE_DATE_EPOCH", epoch),
        None => command.env_remove("SOURCE_DATE_EPOCH"),
    };
    command.output().expect("cannot start syncguard")
}

#[test]
fn committed_packages_are_fresh() {
    let dir = TempDir::new("artifacthub");
    for (i, package) in packages().iter().enumerate() {
        let path = package.dir.join("artifacthub-pkg.yml");
        let committed = committed(&path, "artifacthub");
        let output = dir.path().join(format!("{i}.yml"));
        std::fs::write(&output, &committed).unwrap();
        let result = generate(package, &output, None);
        assert!(result.status.success(), "{}: {}", path.display(), text(&result).1);
        let fresh = std::fs::read_to_string(&output).unwrap();
        assert!(
            fresh == committed,
            "{} is stale: run `make artifacthub` and commit the result\n--- regenerated:\n{fresh}",
            path.display()
        );
    }
}

#[test]
fn committed_packages_keep_artifact_hub_rules() {
    for package in packages() {
        let path = package.dir.join("artifacthub-pkg.yml");
        let at = path.display().to_string();
        let pkg: Value =
            serde_yaml_ng::from_str(&committed(&path, "artifacthub")).unwrap_or_else(|e| panic!("{at}: {e}"));
        let map = pkg.as_mapping().unwrap_or_else(|| panic!("{at}: not a mapping"));
        for key in map.keys() {
            let key = key.as_str().unwrap_or_else(|| panic!("{at}: non-string key {key:?}"));
            assert!(
                ALLOWED_KEYS.contains(&key),
                "{at}: Artifact Hub rejects the unknown key `{key}`"
            );
        }
        let string = |key: &str| -> String {
            let value = pkg[key]
                .as_str()
                .unwrap_or_else(|| panic!("{at}: `{key}` is required (a string)"));
            assert!(!value.trim().is_empty(), "{at}: `{key}` is empty");
            value.to_string()
        };
        let version = string("version");
        semver::Version::parse(&version).unwrap_or_else(|e| panic!("{at}: version `{version}` is not semver: {e}"));
        let name = string("name");
        assert!(
            name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'),
            "{at}: name `{name}` may hold only letters, digits and dashes"
        );
        string("displayName");
        string("description");
        let created_at = string("createdAt");
        chrono::DateTime::parse_from_rfc3339(&created_at)
            .unwrap_or_else(|e| panic!("{at}: createdAt `{created_at}` is not RFC 3339: {e}"));

        let maintainers = pkg["maintainers"]
            .as_sequence()
            .unwrap_or_else(|| panic!("{at}: maintainers are required"));
        assert!(!maintainers.is_empty(), "{at}: no maintainer");
        for m in maintainers {
            let email = m["email"]
                .as_str()
                .unwrap_or_else(|| panic!("{at}: maintainer {m:?} has no email"));
            let (local, domain) = email
                .split_once('@')
                .unwrap_or_else(|| panic!("{at}: `{email}` is not an email"));
            assert!(
                !local.is_empty() && domain.contains('.'),
                "{at}: `{email}` is not an email"
            );
            assert!(
                m["name"].as_str().is_some_and(|n| !n.is_empty()),
                "{at}: maintainer {m:?} has no name"
            );
        }

        // exactly one image named `policy` (plus at most one `policy-alternative-location`)
        let metadata: Value =
            serde_yaml_ng::from_str(&std::fs::read_to_string(package.dir.join("metadata.yml")).unwrap()).unwrap();
        let annotation = |key: &str| {
            metadata["annotations"][key]
                .as_str()
                .unwrap_or_default()
                .trim()
                .to_string()
        };
        let images = pkg["containersImages"]
            .as_sequence()
            .unwrap_or_else(|| panic!("{at}: containersImages is required"));
        let names: Vec<&str> = images.iter().map(|i| i["name"].as_str().unwrap_or_default()).collect();
        assert_eq!(
            names.iter().filter(|n| **n == "policy").count(),
            1,
            "{at}: needs exactly one image named `policy`: {names:?}"
        );
        assert!(
            names
                .iter()
                .all(|n| *n == "policy" || *n == "policy-alternative-location")
                && names.len() <= 2,
            "{at}: only `policy` and `policy-alternative-location` images are allowed: {names:?}"
        );
        let policy_image = images.iter().find(|i| i["name"] == "policy").unwrap();
        assert_eq!(
            policy_image["image"].as_str(),
            Some(format!("{}:v{version}", annotation("io.kubewarden.policy.ociUrl")).as_str()),
            "{at}"
        );

        // it describes the metadata.yml beside it
        assert_eq!(version, annotation("io.kubewarden.policy.version"), "{at}");
        assert_eq!(name, annotation("io.kubewarden.policy.title"), "{at}");
        let annotations = pkg["annotations"]
            .as_mapping()
            .unwrap_or_else(|| panic!("{at}: annotations are required"));
        for (key, value) in annotations {
            assert!(value.is_string(), "{at}: annotation {key:?} must be a string");
        }
        let mutating = metadata["mutating"].as_bool().unwrap();
        assert_eq!(
            pkg["annotations"]["kubewarden/mutation"].as_str(),
            Some(mutating.to_string().as_str()),
            "{at}"
        );
        assert_eq!(
            pkg["annotations"]["kubewarden/resources"].as_str(),
            Some(annotation("io.artifacthub.resources").as_str()),
            "{at}"
        );
        let rules: Value = serde_yaml_ng::from_str(pkg["annotations"]["kubewarden/rules"].as_str().unwrap()).unwrap();
        assert_eq!(rules, metadata["rules"], "{at}: kubewarden/rules");
        let context: Value =
            serde_yaml_ng::from_str(pkg["annotations"]["kubewarden/contextAwareResources"].as_str().unwrap()).unwrap();
        let declared = match &metadata["contextAwareResources"] {
            Value::Null => Value::Sequence(Vec::new()),
            v => v.clone(),
        };
        assert_eq!(context, declared, "{at}: kubewarden/contextAwareResources");
        if let Some(questions) = &package.questions {
            assert_eq!(
                pkg["annotations"]["kubewarden/questions-ui"].as_str(),
                Some(std::fs::read_to_string(questions).unwrap().as_str()),
                "{at}: kubewarden/questions-ui is questions-ui.yml"
            );
        }
        assert_eq!(
            pkg["readme"].as_str(),
            Some(std::fs::read_to_string(package.dir.join("README.md")).unwrap().as_str()),
            "{at}"
        );
    }
}

#[test]
fn created_at_changes_only_with_the_version() {
    let package = &packages()[0];
    let dir = TempDir::new("created-at");
    let output = dir.path().join("artifacthub-pkg.yml");
    let created_at = |path: &Path| -> String {
        let pkg: Value = serde_yaml_ng::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        pkg["createdAt"].as_str().unwrap().to_string()
    };

    // no previous file: the build time
    assert!(generate(package, &output, Some("1700000000")).status.success());
    assert_eq!(created_at(&output), "2023-11-14T22:13:20Z");
    let first = std::fs::read(&output).unwrap();

    // same version, later run: createdAt and the whole file unchanged (deterministic)
    assert!(generate(package, &output, Some("1800000000")).status.success());
    assert!(
        std::fs::read(&output).unwrap() == first,
        "regenerating the same version changed the file"
    );

    // the previous file held another version: createdAt moves
    let previous = String::from_utf8(first).unwrap();
    let version_line = previous
        .lines()
        .find(|l| l.starts_with("version: "))
        .unwrap()
        .to_string();
    std::fs::write(&output, previous.replacen(&version_line, "version: 0.0.1", 1)).unwrap();
    assert!(generate(package, &output, Some("1800000000")).status.success());
    assert_eq!(created_at(&output), "2027-01-15T08:00:00Z");

    let bad = generate(package, &dir.path().join("x.yml"), Some("yesterday"));
    assert!(!bad.status.success());
    assert!(text(&bad).1.contains("SOURCE_DATE_EPOCH"), "{}", text(&bad).1);
}

#[test]
fn broken_metadata_names_the_annotation() {
    let package = &packages()[0];
    let metadata = std::fs::read_to_string(package.dir.join("metadata.yml")).unwrap();
    let dir = TempDir::new("artifacthub-broken");
    let cases = [
        (
            "io.kubewarden.policy.version: 0.1.0",
            "io.kubewarden.policy.version: v0.1",
            "io.kubewarden.policy.version",
        ),
        (
            "io.kubewarden.policy.author: \"syncguard developers <syncguard@users.noreply.github.com>\"",
            "io.kubewarden.policy.author: syncguard developers",
            "io.kubewarden.policy.author",
        ),
        (
            "io.kubewarden.policy.ociUrl:",
            "io.kubewarden.policy.nothing:",
            "io.kubewarden.policy.ociUrl",
        ),
        (
            "io.artifacthub.displayName:",
            "io.artifacthub.nothing:",
            "io.artifacthub.displayName",
        ),
    ];
    for (from, to, field) in cases {
        assert!(metadata.contains(from), "{}: expected `{from}`", package.dir.display());
        let broken = dir.path().join("metadata.yml");
        std::fs::write(&broken, metadata.replacen(from, to, 1)).unwrap();
        let output = run([
            "artifacthub".as_ref(),
            "--metadata-path".as_ref(),
            broken.as_os_str(),
            "--readme-path".as_ref(),
            package.dir.join("README.md").as_os_str(),
            "--output".as_ref(),
            dir.path().join("out.yml").as_os_str(),
        ]);
        let (_, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(1), "{to}: {stderr}");
        assert!(
            stderr.contains(&format!("`{field}`")),
            "{to}: the error should name `{field}`: {stderr}"
        );
    }
}
