//! The files `syncguard scan` reads: its path arguments expanded, each directory walked with the
//! `ignore` crate (ripgrep's walker).
//!
//! A walk goes down every directory in byte order of names and takes the files ending in
//! [`input::EXTENSIONS`]. It skips every entry whose name starts with `.` (`.git`, `.github`),
//! whatever an ignore file says, and does not follow symbolic links to directories (no loops);
//! a symbolic link to a file is read. Unless `--no-ignore` is given it also skips what ripgrep
//! skips by default: what `.ignore` files say anywhere, and, inside a git repository only (a
//! `.git`, or jj's `.jj`, in the scanned folder or one above it: ripgrep's default,
//! `require_git`), what `.gitignore` files, `.git/info/exclude` and git's global excludes file
//! (`core.excludesFile`, else `$XDG_CONFIG_HOME/git/ignore`) say. Ignore files of the folders
//! above the scanned one count too, as they do for git and ripgrep. Files named on the command
//! line are read whatever their name and whatever an ignore file says.
//!
//! The files of a Helm chart (a folder holding `Chart.yaml`, or under one) other than its
//! `crds/` are not YAML as it will be applied: they are left out, walked or named
//! ([`input::read_in_chart`]), and the charts are told in [`Unrendered`].

use crate::scan::input::{self, Input, InputError, STDIN_NAME, display_path, io_reason};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What the scan leaves unread because it is not YAML until Helm renders it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unrendered {
    /// The folders of the Helm charts whose files were left out (subcharts are their parent's),
    /// as shown: relative to the current directory when under it, sorted.
    pub charts: Vec<String>,
}

/// The folder of a file as shown (`.` for a file of the current directory), for the
/// `kustomize build <folder>` hint.
pub fn folder_of(shown: &str) -> &str {
    match shown.rfind('/') {
        Some(0) => "/",
        Some(i) => &shown[..i],
        None => ".",
    }
}

/// Which folders are Helm charts, each asked of the file system once, and the charts whose files
/// a walk left out.
#[derive(Default)]
struct Charts {
    /// Whether a folder (absolute, normalised) holds a `Chart.yaml`.
    known: Mutex<HashMap<PathBuf, bool>>,
    /// The chart folders something was left out of.
    met: Mutex<BTreeSet<PathBuf>>,
}

impl Charts {
    fn is_chart(&self, dir: &Path) -> bool {
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        *known
            .entry(dir.to_path_buf())
            .or_insert_with(|| dir.join(input::CHART_FILE).is_file())
    }

    /// Whether an entry (`absolute`, normalised) is read (a file) or walked into (a folder):
    /// always outside charts, inside one as [`input::read_in_chart`] says. A chart something is
    /// left out of is remembered.
    fn keeps(&self, absolute: &Path, is_dir: bool) -> bool {
        let Some(root) = absolute.ancestors().skip(1).find(|dir| self.is_chart(dir)) else {
            return true;
        };
        let relative = absolute.strip_prefix(root).unwrap_or(absolute);
        let keep = input::read_in_chart(relative, is_dir);
        if !keep {
            self.met
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(root.to_path_buf());
        }
        keep
    }

    /// The charts met, subcharts left out (`helm template` renders them with their parent), as
    /// shown.
    fn shown(&self, cwd: Option<&Path>) -> Vec<String> {
        let met = self.met.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<String> = met
            .iter()
            .filter(|root| !root.ancestors().skip(1).any(|above| met.contains(above)))
            .map(|root| match cwd.and_then(|cwd| root.strip_prefix(cwd).ok()) {
                Some(relative) => display_path(relative),
                None => display_path(root),
            })
            .collect();
        out.sort();
        out
    }
}

/// `path` as an absolute, lexically normalised path.
fn absolute(path: &Path, cwd: Option<&Path>) -> PathBuf {
    match cwd {
        Some(cwd) if path.is_relative() => input::normalize(&cwd.join(path)),
        _ => input::normalize(path),
    }
}

/// How directories are walked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkOptions {
    /// Whether ignore files (`.gitignore`, `.ignore`, `.git/info/exclude`, git's global
    /// excludes) are honoured; `--no-ignore` turns it off.
    pub ignore_files: bool,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions { ignore_files: true }
    }
}

/// The files a scan reads, the problems met finding them, and what it leaves unrendered.
#[derive(Debug, Default)]
pub struct Expanded {
    /// The files to read, in order: as shown, and where to read them.
    pub files: Vec<(String, Input)>,
    /// Paths that cannot be read.
    pub errors: Vec<InputError>,
    /// Charts left out.
    pub unrendered: Unrendered,
}

/// Expands the command line's paths into the files to read, in order: arguments in the order
/// given (standard input once, however often `-` is given), each directory walked as the module
/// documentation says. Paths that do not exist are errors. Files of Helm charts (but their
/// `crds/`) are left out, walked or named, and the charts listed in [`Expanded::unrendered`].
pub fn expand(paths: &[PathBuf], options: WalkOptions) -> Expanded {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    let charts = Arc::new(Charts::default());
    let cwd = std::env::current_dir().ok();
    let mut stdin_seen = false;
    for path in paths {
        if path.as_os_str() == "-" {
            if !stdin_seen {
                files.push((STDIN_NAME.to_string(), Input::Stdin));
                stdin_seen = true;
            }
            continue;
        }
        let display = display_path(path);
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => {
                let walk = Walk {
                    dir: path,
                    display: &display,
                    options,
                    charts: &charts,
                    cwd: cwd.as_deref(),
                };
                walk.run(&mut files, &mut errors);
            }
            Ok(_) => {
                if charts.keeps(&absolute(path, cwd.as_deref()), false) {
                    files.push((display, Input::File(path.clone())));
                }
            }
            Err(e) => errors.push(InputError {
                source: None,
                path: display,
                line: None,
                message: format!("cannot read: {}", io_reason(&e)),
            }),
        }
    }
    Expanded {
        files,
        errors,
        unrendered: Unrendered {
            charts: charts.shown(cwd.as_deref()),
        },
    }
}

/// Whether a walked file (or a file of `--base`) is one to read, by its extension.
pub(crate) fn wanted(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| input::EXTENSIONS.iter().any(|x| x.eq_ignore_ascii_case(e)))
}

/// `display` (the directory as shown) joined with `path`'s place under `root`, `/`-separated.
fn display_under(root: &Path, display: &str, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let relative: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let relative = relative.join("/");
    if relative.is_empty() {
        display.to_string()
    } else if display == "." {
        relative
    } else if display.ends_with('/') {
        format!("{display}{relative}")
    } else {
        format!("{display}/{relative}")
    }
}

/// The path an error of the walk is about, if it names one.
fn error_path(error: &ignore::Error) -> Option<&Path> {
    match error {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => error_path(err),
        ignore::Error::Partial(errors) if errors.len() == 1 => error_path(&errors[0]),
        _ => None,
    }
}

/// The walk of one folder argument.
struct Walk<'a> {
    dir: &'a Path,
    display: &'a str,
    options: WalkOptions,
    charts: &'a Arc<Charts>,
    cwd: Option<&'a Path>,
}

impl Walk<'_> {
    fn run(&self, files: &mut Vec<(String, Input)>, errors: &mut Vec<InputError>) {
        let Walk {
            dir, display, options, ..
        } = *self;
        let charts = Arc::clone(self.charts);
        let cwd = self.cwd.map(Path::to_path_buf);
        let mut builder = ignore::WalkBuilder::new(dir);
        builder
            // `.ignore`, `.gitignore`, `.git/info/exclude`, git's global excludes and the ignore
            // files of the folders above `dir`, or none of them.
            .standard_filters(options.ignore_files)
            // Hidden entries are skipped by the filter below, so that no ignore file's `!` rule
            // brings one back.
            .hidden(false)
            .require_git(true)
            .follow_links(false)
            .sort_by_file_name(|a, b| a.cmp(b))
            .filter_entry(move |entry| {
                !entry.file_name().to_string_lossy().starts_with('.')
                    && charts.keeps(
                        &absolute(entry.path(), cwd.as_deref()),
                        entry.file_type().is_some_and(|t| t.is_dir()),
                    )
            });
        for entry in builder.build() {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    let path = error_path(&e).map_or_else(|| display.to_string(), |p| display_under(dir, display, p));
                    let message = match e.io_error() {
                        Some(io) => format!("cannot read the directory: {}", io_reason(io)),
                        None => format!("cannot read the directory: {e}"),
                    };
                    errors.push(InputError {
                        source: None,
                        path,
                        line: None,
                        message,
                    });
                    continue;
                }
            };
            if entry.depth() == 0 || !wanted(entry.path()) {
                continue;
            }
            let is_dir = if entry.path_is_symlink() {
                // A link is read when it leads to a file; one to a directory is not followed, and a
                // dangling one is reported since it looks like a manifest.
                match std::fs::metadata(entry.path()) {
                    Ok(meta) => meta.is_dir(),
                    Err(e) => {
                        errors.push(InputError {
                            source: None,
                            path: display_under(dir, display, entry.path()),
                            line: None,
                            message: format!("cannot read: {}", io_reason(&e)),
                        });
                        continue;
                    }
                }
            } else {
                entry.file_type().is_some_and(|t| t.is_dir())
            };
            if !is_dir {
                files.push((
                    display_under(dir, display, entry.path()),
                    Input::File(entry.into_path()),
                ));
            }
        }
    }
}
