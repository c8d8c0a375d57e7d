//! `syncguard scan --base <ref>`: the scanned objects as they were at a git ref, so that a pull
//! request is judged as the updates it makes. Every object of the scan whose group, kind,
//! namespace and name the base holds becomes an UPDATE from that version for the checks that
//! judge updates (crd-safe-upgrade's schema compatibility, crd-kind-collision's rule that an
//! update is refused only for a clash it adds); the others still see a CREATE.
//!
//! The base is read through the `git` command of the tree, without a checkout: `git ls-tree`
//! lists the YAML and JSON files at the ref under the scanned paths, and one `git cat-file
//! --batch` reads them all. Objects are matched by name, not by file, so a CRD moved to another
//! file under the scanned paths is still compared with its old version. Standard input has no
//! base. A file in git carries no `status`, so a CRD of the base has no `status.storedVersions`;
//! with `--cluster-snapshot`, [`with_cluster_status`] gives it the one the cluster holds, and
//! crd-safe-upgrade then judges the versions an update removes by what the cluster really stored,
//! as at admission. The git plumbing is driven by hand because the commands are stable and few, and a git
//! library would add far more to the binary than the two calls need.

use anyhow::{Context, Result, anyhow, bail};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use syncguard_scan::input::{self, Document};

/// The objects of the base.
#[derive(Debug, Default)]
pub struct Base {
    /// The commit the ref names.
    pub commit: String,
    /// How many YAML and JSON files the base holds under the scanned paths.
    pub files: usize,
    /// Their objects (files that do not read as manifests there add none).
    pub documents: Vec<Document>,
}

/// `git -C dir args...`, its standard output; an error with git's own message when it fails.
fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| anyhow!("--base needs the git command: cannot run git ({e})"))?;
    if !output.status.success() {
        let message = String::from_utf8_lossy(&output.stderr);
        bail!("git {}: {}", args.join(" "), message.trim());
    }
    Ok(output.stdout)
}

/// The directory git is asked about: the first scanned path's (its parent for a file), else
/// the current directory.
fn probe_dir(paths: &[PathBuf]) -> PathBuf {
    paths
        .iter()
        .find(|p| p.as_os_str() != "-")
        .map(|p| {
            if p.is_dir() {
                p.clone()
            } else {
                p.parent().map(Path::to_path_buf).unwrap_or_default()
            }
        })
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Reads the objects at `reference` under `paths` (standard input, `-`, has none).
pub fn read(reference: &str, paths: &[PathBuf]) -> Result<Base> {
    if reference.is_empty() || reference.starts_with('-') {
        bail!("--base {reference:?}: name a git ref (a branch, a tag, a commit such as origin/main or HEAD~1)");
    }
    let probe = probe_dir(paths);
    let top = git(&probe, &["rev-parse", "--show-toplevel"])
        .map_err(|e| anyhow!("--base needs the scanned paths in a git work tree: {e:#}"))?;
    let top = PathBuf::from(String::from_utf8_lossy(&top).trim_end_matches(['\n', '\r']));
    let canonical_top = top
        .canonicalize()
        .with_context(|| format!("--base: cannot read the work tree {}", top.display()))?;
    let commit = git(
        &top,
        &["rev-parse", "--verify", "--quiet", &format!("{reference}^{{commit}}")],
    )
    .map_err(|_| anyhow!("--base {reference}: not a commit in {}", top.display()))?;
    let commit = String::from_utf8_lossy(&commit).trim().to_string();
    let mut specs = Vec::new();
    for path in paths.iter().filter(|p| p.as_os_str() != "-") {
        let canonical = path
            .canonicalize()
            .with_context(|| format!("--base: cannot read {}", path.display()))?;
        let relative = canonical.strip_prefix(&canonical_top).map_err(|_| {
            anyhow!(
                "--base: {} is outside the git work tree {}",
                path.display(),
                top.display()
            )
        })?;
        specs.push(if relative.as_os_str().is_empty() {
            ".".to_string()
        } else {
            relative.to_string_lossy().into_owned()
        });
    }
    if specs.is_empty() {
        return Ok(Base {
            commit,
            ..Base::default()
        });
    }
    let mut args = vec!["ls-tree", "-r", "-z", "--name-only", commit.as_str(), "--"];
    args.extend(specs.iter().map(String::as_str));
    let listing = git(&top, &args)?;
    let names: Vec<String> = listing
        .split(|b| *b == 0)
        .filter(|name| !name.is_empty())
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .filter(|name| super::walk::wanted(Path::new(name)))
        .collect();
    let blobs = cat_files(&top, &commit, &names)?;
    let mut documents = Vec::new();
    for (index, (name, bytes)) in names.iter().zip(blobs).enumerate() {
        let Some(bytes) = bytes else { continue };
        if let Ok(text) = input::text_of(&bytes) {
            documents.extend(input::objects_of(index, name, text).documents);
        }
    }
    Ok(Base {
        commit,
        files: names.len(),
        documents,
    })
}

/// The base's objects, each CustomResourceDefinition without `status.storedVersions` given the
/// one of the CRD of the same name in `snapshot` (a cluster's `kubectl get crd -o yaml`), so
/// that the update from it is judged against what that cluster stored, as admission judges it
/// against the live CRD. Other objects, and CRDs the snapshot lacks, are kept as they are.
pub fn with_cluster_status(base: &[Document], snapshot: &[Document]) -> Vec<Document> {
    let crd = |doc: &Document| doc.crd_names.is_some().then(|| doc.key()).flatten();
    let stored: std::collections::HashMap<input::ObjectKey, serde_json::Value> = snapshot
        .iter()
        .filter_map(|doc| {
            let object: serde_json::Value = serde_json::from_str(&doc.object).ok()?;
            let versions = object.pointer("/status/storedVersions")?.as_array()?;
            (!versions.is_empty()).then(|| (crd(doc), serde_json::Value::Array(versions.clone())))
        })
        .filter_map(|(key, versions)| Some((key?, versions)))
        .collect();
    base.iter()
        .map(|doc| {
            let Some(versions) = crd(doc).and_then(|key| stored.get(&key)) else {
                return doc.clone();
            };
            let Ok(mut object) = serde_json::from_str::<serde_json::Value>(&doc.object) else {
                return doc.clone();
            };
            let has_status = object
                .pointer("/status/storedVersions")
                .and_then(serde_json::Value::as_array)
                .is_some_and(|v| !v.is_empty());
            let Some(map) = object.as_object_mut().filter(|_| !has_status) else {
                return doc.clone();
            };
            let status = map.entry("status").or_insert_with(|| serde_json::json!({}));
            if !status.is_object() {
                *status = serde_json::json!({});
            }
            status["storedVersions"] = versions.clone();
            Document {
                object: object.to_string().into(),
                ..doc.clone()
            }
        })
        .collect()
}

/// The contents of `names` at `commit`, in order, through one `git cat-file --batch` (`None`
/// for an object git reports missing).
fn cat_files(top: &Path, commit: &str, names: &[String]) -> Result<Vec<Option<Vec<u8>>>> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let mut child = Command::new("git")
        .arg("-C")
        .arg(top)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| anyhow!("--base needs the git command: cannot run git ({e})"))?;
    let mut stdin = child.stdin.take().context("git cat-file: no stdin")?;
    let requests: String = names.iter().map(|name| format!("{commit}:{name}\n")).collect();
    // Written from another thread: git answers while it reads, and both pipes are bounded.
    let writer = std::thread::spawn(move || stdin.write_all(requests.as_bytes()));
    let mut stdout = BufReader::new(child.stdout.take().context("git cat-file: no stdout")?);
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let mut header = String::new();
        stdout.read_line(&mut header)?;
        let fields: Vec<&str> = header.split_whitespace().collect();
        match fields.as_slice() {
            [_, "blob", size] => {
                let size: usize = size
                    .parse()
                    .map_err(|_| anyhow!("git cat-file: unexpected header {header:?}"))?;
                let mut bytes = vec![0; size];
                stdout.read_exact(&mut bytes)?;
                let mut newline = [0; 1];
                stdout.read_exact(&mut newline)?;
                out.push(Some(bytes));
            }
            [_, "missing"] => out.push(None),
            [_, _, size] => {
                // Not a blob (a submodule's commit, say): no text to read, but its content
                // follows the header and is skipped.
                let size: u64 = size.parse().unwrap_or(0);
                std::io::copy(&mut (&mut stdout).take(size + 1), &mut std::io::sink())?;
                out.push(None);
            }
            _ => bail!("git cat-file: unexpected answer {header:?} for {name}"),
        }
    }
    writer
        .join()
        .map_err(|_| anyhow!("git cat-file: the writer thread panicked"))?
        .context("git cat-file: cannot send the requests")?;
    let status = child.wait()?;
    if !status.success() {
        let mut message = String::new();
        if let Some(mut stderr) = child.stderr.take() {
            let _ = stderr.read_to_string(&mut message);
        }
        bail!("git cat-file: {}", message.trim());
    }
    Ok(out)
}
