//! The built playground (`make playground`, target/playground/) in a real browser: Debian's
//! chromium, headless, driven by chromedriver over W3C WebDriver, the page served from
//! 127.0.0.1 by this test.

use base64::Engine as _;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn site() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/playground");
    assert!(
        dir.join("index.html").is_file(),
        "{} has no index.html: build the playground first (`make playground`)",
        dir.display()
    );
    dir
}

/// Serves `dir` over HTTP/1.0 on a free port of 127.0.0.1, one request per connection, each
/// connection on its own thread (browsers open connections they send nothing on).
/// Hand-written: a handful of static files for one test need no server crate.
fn serve(dir: PathBuf) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let dir = dir.clone();
            std::thread::spawn(move || answer(&dir, stream));
        }
    });
    port
}

fn answer(dir: &Path, mut stream: TcpStream) -> std::io::Result<()> {
    let mut line = String::new();
    let mut reader = BufReader::new(stream.try_clone()?);
    reader.read_line(&mut line)?;
    // Drain the headers.
    let mut header = String::new();
    while reader.read_line(&mut header)? > 2 {
        header.clear();
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/");
    let path = path.split(['?', '#']).next().unwrap_or("/");
    let name = if path == "/" {
        "index.html"
    } else {
        path.trim_start_matches('/')
    };
    let file = dir.join(name);
    let inside = !name.contains("..") && file.is_file();
    let (status, body) = if inside {
        ("200 OK", std::fs::read(&file)?)
    } else {
        ("404 Not Found", b"not found".to_vec())
    };
    let kind = match file.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript",
        Some("css") => "text/css",
        Some("wasm") => "application/wasm",
        _ => "application/octet-stream",
    };
    write!(
        stream,
        "HTTP/1.0 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(&body)
}

/// chromedriver on a free port, killed when dropped.
struct Driver {
    child: Child,
    port: u16,
    profile: PathBuf,
}

impl Driver {
    fn start() -> Driver {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver is not installed: run `make setup` (Debian's chromium and chromium-driver)");
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        let profile = std::env::temp_dir().join(format!("syncguard-chromium-{}-{port}", std::process::id()));
        Driver { child, port, profile }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

async fn browser(driver: &Driver) -> Client {
    let args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
    ]
    .map(String::from)
    .into_iter()
    .chain([format!("--user-data-dir={}", driver.profile.display())])
    .collect::<Vec<_>>();
    let mut capabilities = serde_json::Map::new();
    capabilities.insert("goog:chromeOptions".into(), json!({"args": args}));
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(capabilities)
        .connect(&format!("http://127.0.0.1:{}", driver.port))
        .await
        .expect("cannot start chromium through chromedriver")
}

/// Waits until the page has evaluated, then returns every result row's data attributes.
async fn rows(client: &Client) -> Vec<(String, String, String)> {
    let evaluated = client
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Css("body[data-evaluated='true']"))
        .await;
    if let Err(e) = evaluated {
        let page = client.source().await.unwrap_or_default();
        let loaded = client
            .execute_async(
                "const done = arguments[0]; import('./playground.js').then(() => done('loaded'), (e) => done(String(e)));",
                vec![],
            )
            .await;
        let fetched = client
            .execute(
                "return performance.getEntriesByType('resource').map(e => e.name + ' ' + e.responseStatus);",
                vec![],
            )
            .await;
        panic!("the page never evaluated ({e}): script {loaded:?}, fetched {fetched:?}; it holds:\n{page}");
    }
    let value = client
        .execute(
            "return [...document.querySelectorAll('#results tbody tr')].map(r => [r.dataset.document, r.dataset.policy, r.dataset.verdict]);",
            vec![],
        )
        .await
        .unwrap();
    serde_json::from_value(value).unwrap()
}

async fn text_of(client: &Client, css: &str) -> String {
    client.find(Locator::Css(css)).await.unwrap().text().await.unwrap()
}

/// Types `text` into the manifests editor and evaluates.
async fn paste(client: &Client, text: &str) {
    client
        .execute(
            "document.getElementById('manifests').value = arguments[0]; document.body.dataset.evaluated = 'false';",
            vec![Value::from(text)],
        )
        .await
        .unwrap();
    client
        .find(Locator::Id("evaluate"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// Waits until the page has evaluated, then returns every result row's document, policy,
/// verdict and operation (`CREATE`, or `UPDATE` from the object's old version).
async fn judged(client: &Client) -> Vec<(String, String, String, String)> {
    rows(client).await;
    let value = client
        .execute(
            "return [...document.querySelectorAll('#results tbody tr')].map(r => [r.dataset.document, r.dataset.policy, r.dataset.verdict, r.dataset.operation]);",
            vec![],
        )
        .await
        .unwrap();
    serde_json::from_value(value).unwrap()
}

/// Opens the old versions pane as a user does (a click on its title), types `text` into it
/// key by key, and evaluates.
async fn type_old(client: &Client, text: &str) {
    let open = client
        .execute("return document.getElementById('old-box').open;", vec![])
        .await
        .unwrap();
    if open != Value::Bool(true) {
        client
            .find(Locator::Css("#old-box summary"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
    }
    let pane = client.find(Locator::Id("old")).await.unwrap();
    pane.clear().await.unwrap();
    pane.send_keys(text).await.unwrap();
    client
        .execute("document.body.dataset.evaluated = 'false';", vec![])
        .await
        .unwrap();
    client
        .find(Locator::Id("evaluate"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// Clicks "Copy link": the link it leaves in the address bar, and the state that link carries.
async fn copy_link(client: &Client) -> (String, Value) {
    client
        .find(Locator::Id("copy-link"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let link = client.current_url().await.unwrap().to_string();
    let encoded = link.split_once("#state=").expect("the link carries the state").1;
    let state: Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(encoded)
            .unwrap(),
    )
    .unwrap();
    (link, state)
}

fn preset(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("presets/crd-field-removed")
            .join(name),
    )
    .unwrap()
}

fn kube_ovn_crd() -> String {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../policies/crd-schema-fields/test_data/kube-ovn-offline.json");
    let request: Value = serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    serde_json::to_string_pretty(&request["object"]).unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn the_page_evaluates_in_a_real_browser() {
    let port = serve(site());
    let page = format!("http://127.0.0.1:{port}/");
    let driver = Driver::start();
    let client = browser(&driver).await;
    // The checks run as their own task so that the browser is closed even when one fails
    // (killing chromedriver alone would leave chromium running).
    let checks = tokio::spawn({
        let client = client.clone();
        async move { check_the_page(&client, &page).await }
    });
    let outcome = checks.await;
    client.close().await.unwrap();
    if let Err(failure) = outcome {
        std::panic::resume_unwind(failure.into_panic());
    }
}

async fn check_the_page(client: &Client, page: &str) {
    client.goto(page).await.unwrap();
    // Empty: no results, every policy described with a link to its README.
    assert!(rows(client).await.is_empty());
    let policies = text_of(client, "#policies").await;
    assert!(
        policies.contains("crd-schema-fields") && policies.contains("kind-group-clash"),
        "{policies}"
    );

    // The Kube-OVN CRD with strategic-merge-patch keys: rejected by crd-schema-fields.
    let crd = kube_ovn_crd();
    paste(client, &crd).await;
    let found = rows(client).await;
    let rejected = ("0".to_string(), "crd-schema-fields".to_string(), "rejected".to_string());
    assert!(found.contains(&rejected), "{found:?}");
    let details = text_of(client, "tr[data-policy='crd-schema-fields'] td:last-child").await;
    assert!(details.contains("x-kubernetes-patch-strategy"), "{details}");

    // "Copy link" puts the state in the address bar; opening it evaluates at once.
    let (link, state) = copy_link(client).await;
    assert_eq!(state["manifests"], Value::from(crd.as_str()));

    // A link written by hand (keys left out mean empty) gives the same result.
    let by_hand = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json!({"manifests": crd}).to_string());
    client.goto("about:blank").await.unwrap();
    client.goto(&format!("{page}#state={by_hand}")).await.unwrap();
    assert!(rows(client).await.contains(&rejected));
    client.goto("about:blank").await.unwrap();
    client.goto(&link).await.unwrap();
    assert!(rows(client).await.contains(&rejected));

    // A clean manifest is accepted by every policy that applies.
    let clean =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/data/scan/clean/app.yaml"))
            .unwrap();
    paste(client, &clean).await;
    let found = rows(client).await;
    assert!(
        !found.is_empty() && found.iter().all(|(_, _, verdict)| verdict == "accepted"),
        "{found:?}"
    );

    // Broken YAML (the scan fixture `syncguard scan` reports at line 11): the error with its line.
    let broken =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/data/scan/bad/broken.yaml"))
            .unwrap();
    paste(client, &broken).await;
    rows(client).await;
    let error = text_of(client, "#errors .error[data-line='11']").await;
    assert!(error.starts_with("manifests:11: invalid YAML"), "{error}");

    check_old_versions(client, page).await;
}

/// The old versions pane: a CRD typed there makes the manifest's CRD an UPDATE for the checks
/// that judge updates, in the page, in its share link, and in the example.
async fn check_old_versions(client: &Client, page: &str) {
    let (new, old) = (preset("new.yaml"), preset("old.yaml"));
    // Alone, the new CRD is a CREATE, which crd-safe-upgrade accepts.
    paste(client, &new).await;
    let created = ("0", "crd-safe-upgrade", "accepted", "CREATE").into_owned();
    assert!(judged(client).await.contains(&created));

    // With the installed version typed in the old pane: an UPDATE, rejected for the removed
    // field; the checks that do not judge updates still see a CREATE.
    type_old(client, &old).await;
    let found = judged(client).await;
    let updated = ("0", "crd-safe-upgrade", "rejected", "UPDATE").into_owned();
    assert!(found.contains(&updated), "{found:?}");
    assert!(
        found.contains(&("0", "crd-kind-collision", "accepted", "UPDATE").into_owned()),
        "{found:?}"
    );
    assert!(
        found.contains(&("0", "crd-schema-fields", "accepted", "CREATE").into_owned()),
        "{found:?}"
    );
    let row = "tr[data-policy='crd-safe-upgrade']";
    assert_eq!(
        text_of(client, &format!("{row} td.operation")).await,
        "UPDATE from the old version"
    );
    let details = text_of(client, &format!("{row} td:last-child")).await;
    assert!(
        details.contains("properties.count (v1): removed. existingFieldRemoval"),
        "{details}"
    );
    let status = text_of(client, "#status").await;
    assert!(status.contains("1 with an old version"), "{status}");

    // The share link carries the old pane, and opening it gives the UPDATE again.
    let (link, state) = copy_link(client).await;
    assert_eq!(state["old"], Value::from(old.as_str()));
    client.goto("about:blank").await.unwrap();
    client.goto(&link).await.unwrap();
    assert!(judged(client).await.contains(&updated));
    let open = client
        .execute("return document.getElementById('old-box').open;", vec![])
        .await
        .unwrap();
    assert_eq!(open, Value::Bool(true), "a link with old objects opens their pane");

    // Unreadable old objects stop the evaluation with their line, as a broken snapshot does.
    let broken =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/data/scan/bad/broken.yaml"))
            .unwrap();
    type_old(client, &broken).await;
    assert!(judged(client).await.is_empty());
    let error = text_of(client, "#errors .error[data-input='old']").await;
    assert!(error.starts_with("old:11: old objects: invalid YAML"), "{error}");

    // The example button fills both panes with the same update.
    client.goto("about:blank").await.unwrap();
    client.goto(page).await.unwrap();
    rows(client).await;
    client
        .execute("document.body.dataset.evaluated = 'false';", vec![])
        .await
        .unwrap();
    client
        .find(Locator::Id("example-update"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    assert!(judged(client).await.contains(&updated));
    let pane = client
        .find(Locator::Id("old"))
        .await
        .unwrap()
        .prop("value")
        .await
        .unwrap();
    assert_eq!(pane.as_deref(), Some(old.as_str()));
}

/// Owned strings of a row's four fields.
trait IntoOwned {
    fn into_owned(self) -> (String, String, String, String);
}

impl IntoOwned for (&str, &str, &str, &str) {
    fn into_owned(self) -> (String, String, String, String) {
        (self.0.into(), self.1.into(), self.2.into(), self.3.into())
    }
}
