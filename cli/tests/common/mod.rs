//! Shared helpers of the command's integration tests: the built binary, the repository's files,
//! temporary directories, and a real registry (Debian's `docker-registry`) on 127.0.0.1.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ sits in the repository")
        .to_path_buf()
}

/// The `syncguard` command under test.
pub fn syncguard() -> Command {
    Command::new(env!("CARGO_BIN_EXE_syncguard"))
}

/// Runs `syncguard args...` and returns its output.
pub fn run<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    syncguard().args(args).output().expect("cannot start syncguard")
}

/// stdout and stderr as text.
pub fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Names of the policies that ship (folders of `policies/` with a metadata.yml), sorted.
pub fn shipped_policies() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("policies"))
        .expect("policies/ exists")
        .filter_map(Result::ok)
        .filter(|e| e.path().join("metadata.yml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no policy with a metadata.yml under policies/");
    names
}

/// A file `make build` leaves; the test fails (never skips) when it is missing.
pub fn built(relative: &str) -> PathBuf {
    let path = root().join(relative);
    assert!(path.is_file(), "{} is missing: run `make build` first", path.display());
    path
}

/// A file that must be committed; `make_target` regenerates it.
pub fn committed(path: &Path, make_target: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "{} is missing ({e}): run `make {make_target}` and commit it",
            path.display()
        )
    })
}

/// A directory removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    /// A fresh, empty directory under the system's temp dir.
    pub fn new(label: &str) -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let path = std::env::temp_dir().join(format!("syncguard-{label}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("cannot create a temp dir");
        TempDir(path)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("cannot bind 127.0.0.1:0")
        .local_addr()
        .unwrap()
        .port()
}

/// A real OCI registry (distribution's `docker-registry`) on 127.0.0.1, killed on drop.
pub struct TestRegistry {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    dir: TempDir,
}

impl TestRegistry {
    /// Starts the registry with filesystem storage in a temp dir, and waits until it answers.
    pub fn start() -> TestRegistry {
        TestRegistry::start_with("")
    }

    /// Starts a registry that requires basic authentication (users of `htpasswd`, bcrypt).
    pub fn start_with_htpasswd(htpasswd: &Path) -> TestRegistry {
        TestRegistry::start_with(&format!(
            "auth:\n  htpasswd:\n    realm: syncguard-tests\n    path: {}\n",
            htpasswd.display()
        ))
    }

    /// Starts a registry served over HTTPS with a self-signed certificate for 127.0.0.1.
    pub fn start_with_tls(certificate: &Path, key: &Path) -> TestRegistry {
        TestRegistry::start_with(&format!(
            "  tls:\n    certificate: {}\n    key: {}\n",
            certificate.display(),
            key.display()
        ))
    }

    fn start_with(extra_config: &str) -> TestRegistry {
        let program = ["/usr/bin/docker-registry", "/usr/sbin/docker-registry"]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| p.is_file())
            .or_else(|| {
                std::env::var_os("PATH").and_then(|path| {
                    std::env::split_paths(&path)
                        .map(|d| d.join("docker-registry"))
                        .find(|p| p.is_file())
                })
            })
            .expect(
                "docker-registry is not installed: run `make setup` (it installs Debian's docker-registry package)",
            );
        let dir = TempDir::new("registry");
        let port = free_port();
        let addr = format!("127.0.0.1:{port}");
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\n  \
                 delete:\n    enabled: true\nhttp:\n  addr: {addr}\n  secret: syncguard-tests\n{extra_config}",
                dir.path().join("data").display()
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.path().join("registry.log")).unwrap();
        let child = Command::new(&program)
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
        let mut registry = TestRegistry { child, addr, dir };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            // it listens once it is ready to serve (plain HTTP or HTTPS)
            if TcpStream::connect(&registry.addr).is_ok() {
                return registry;
            }
            if let Ok(Some(status)) = registry.child.try_wait() {
                panic!("docker-registry exited with {status}:\n{}", registry.log());
            }
            assert!(
                Instant::now() < deadline,
                "docker-registry did not answer on {} within 20 s:\n{}",
                registry.addr,
                registry.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The registry's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("registry.log")).unwrap_or_default()
    }
}

impl Drop for TestRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP response.
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// Body.
    pub body: Vec<u8>,
}

impl Response {
    /// The first header named `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// A plain HTTP/1.1 GET (tests only: reads what the registry really stores, independently of
/// the OCI client under test).
pub fn http_get(addr: &str, path: &str, headers: &[(&str, &str)]) -> std::io::Result<Response> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes())?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| std::io::Error::other("no end of headers"))?;
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other("no status line"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    if chunked {
        body = dechunk(&body)?;
    }
    Ok(Response { status, headers, body })
}

fn dechunk(mut data: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or_else(|| std::io::Error::other("bad chunk"))?;
        let size_text = String::from_utf8_lossy(&data[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| std::io::Error::other("bad chunk size"))?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        let chunk = data.get(..size).ok_or_else(|| std::io::Error::other("short chunk"))?;
        out.extend_from_slice(chunk);
        data = data
            .get(size + 2..)
            .ok_or_else(|| std::io::Error::other("short chunk"))?;
    }
}

/// `sha256:<hex>` of `data`.
pub fn sha256(data: &[u8]) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(data);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}
