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
            "return [...document.querySelectorAll('#results tr[data-policy]')].map(r => [r.dataset.document, r.dataset.policy, r.dataset.verdict]);",
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
            "return [...document.querySelectorAll('#results tr[data-policy]')].map(r => [r.dataset.document, r.dataset.policy, r.dataset.verdict, r.dataset.operation]);",
            vec![],
        )
        .await
        .unwrap();
    serde_json::from_value(value).unwrap()
}

/// Opens the old versions pane as a user does (a click on its title), puts `text` into it,
/// types a comment at its end in the editor, and evaluates.
async fn type_old(client: &Client, text: &str) {
    if js(client, "return document.getElementById('old-box').open;").await != Value::Bool(true) {
        click(client, "#old-box summary").await;
    }
    client
        .execute(
            "document.getElementById('old').value = arguments[0];",
            vec![Value::from(text)],
        )
        .await
        .unwrap();
    type_into(client, "old", "\n# typed\n").await;
    expect_evaluation(client).await;
    click(client, "#evaluate").await;
}

/// Types `keys` at the end of the editor of text box `field`, as a user does.
async fn type_into(client: &Client, field: &str, keys: &str) {
    let editor = client
        .find(Locator::Css(&format!("[data-editor-for='{field}'] .cm-content")))
        .await
        .unwrap_or_else(|e| panic!("no editor for {field}: {e}"));
    editor.click().await.unwrap();
    let control = char::from(fantoccini::key::Key::Control);
    let end = char::from(fantoccini::key::Key::End);
    editor.send_keys(&format!("{control}{end}{control}")).await.unwrap();
    editor.send_keys(keys).await.unwrap();
}

/// Clicks "Copy link": the link it leaves in the address bar, and the state that link carries
/// (`#z=`: base64url of the deflate-raw compressed JSON).
async fn copy_link(client: &Client) -> (String, Value) {
    js(client, "history.replaceState(null, '', location.pathname);").await;
    click(client, "#copy-link").await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let link = loop {
        let link = client.current_url().await.unwrap().to_string();
        if link.contains("#z=") {
            break link;
        }
        assert!(Instant::now() < deadline, "no link in the address bar: {link}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let encoded = link.split_once("#z=").unwrap().1;
    let compressed = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(encoded)
        .unwrap();
    let mut json = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::DeflateDecoder::new(&compressed[..]), &mut json).unwrap();
    (link, serde_json::from_slice(&json).unwrap())
}

/// Clicks the element `css` (the first that matches).
async fn click(client: &Client, css: &str) {
    client
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .click()
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"));
}

/// Runs `script` in the page and returns its value.
async fn js(client: &Client, script: &str) -> Value {
    client
        .execute(script, vec![])
        .await
        .unwrap_or_else(|e| panic!("{script}: {e}"))
}

/// Marks the page as not evaluated, so that [`rows`] waits for the next evaluation.
async fn expect_evaluation(client: &Client) {
    js(client, "document.body.dataset.evaluated = 'false';").await;
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
    client.set_window_size(1400, 1000).await.unwrap();
    client.goto(page).await.unwrap();
    // Empty: no results, a word on what to do, every policy described with a link to its README.
    assert!(rows(client).await.is_empty());
    assert_eq!(
        js(client, "return document.getElementById('empty').dataset.reason;").await,
        "empty"
    );
    let policies = text_of(client, "#policies").await;
    assert!(
        policies.contains("crd-schema-fields") && policies.contains("kind-group-clash"),
        "{policies}"
    );
    check_accessibility(client).await;

    // The Kube-OVN CRD with strategic-merge-patch keys: rejected by crd-schema-fields.
    let crd = kube_ovn_crd();
    paste(client, &crd).await;
    let found = rows(client).await;
    let rejected = ("0".to_string(), "crd-schema-fields".to_string(), "rejected".to_string());
    assert!(found.contains(&rejected), "{found:?}");
    check_findings(client, &crd).await;
    check_editor(client).await;
    check_results_layout(client).await;
    check_stale_and_keyboard(client).await;
    check_share_links(client, page, &crd, &rejected).await;

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
    check_input_errors(client).await;
    check_old_versions(client, page).await;
    check_examples(client, page).await;
    check_wide_input(client).await;
    check_big_input(client).await;
}

/// Labels, the announced errors area, the table's caption, visible disclosure markers.
async fn check_accessibility(client: &Client) {
    let unlabelled = js(
        client,
        "return [...document.querySelectorAll('textarea, input, select')].filter(e => e.labels.length === 0).map(e => e.id);",
    )
    .await;
    assert_eq!(unlabelled, json!([]), "every text box has a label");
    assert_eq!(
        js(
            client,
            "return document.getElementById('errors').getAttribute('aria-live');"
        )
        .await,
        "assertive"
    );
    let caption = text_of(client, "#results caption").await;
    assert!(caption.contains("Verdicts"), "{caption}");
    let markers = js(
        client,
        "return [...document.querySelectorAll('details > summary')].map(s => getComputedStyle(s).display);",
    )
    .await;
    assert_eq!(
        markers,
        json!(["list-item", "list-item", "list-item"]),
        "disclosure markers shown"
    );
    // Each text box is an editor labelled by the box's label.
    let editors = js(
        client,
        "return [document.body.dataset.editor, ...[...document.querySelectorAll('textarea')].map(t => { const e = document.querySelector(`[data-editor-for='${t.id}'] .cm-content`); return [t.id, e !== null && document.getElementById(e.getAttribute('aria-labelledby')) === t.labels[0]]; })];",
    )
    .await;
    assert_eq!(
        editors,
        json!([
            "codemirror",
            ["manifests", true],
            ["old", true],
            ["snapshot", true],
            ["config", true]
        ])
    );
}

/// The editor: line numbers, YAML highlighting, no soft wrap, go to line (Ctrl+Alt+G).
async fn check_editor(client: &Client) {
    let editor = "[data-editor-for='manifests']";
    let shape = js(
        client,
        &format!(
            "const e = document.querySelector(\"{editor}\"); return [e.querySelectorAll('.cm-lineNumbers .cm-gutterElement').length > 10, e.querySelector('.cm-lineWrapping') === null, new Set([...e.querySelectorAll('.cm-line span')].map(s => getComputedStyle(s).color)).size > 1];"
        ),
    )
    .await;
    assert_eq!(
        shape,
        json!([true, true, true]),
        "line numbers, no soft wrap, highlighting"
    );
    let content = client
        .find(Locator::Css(&format!("{editor} .cm-content")))
        .await
        .unwrap();
    content.click().await.unwrap();
    let control = char::from(fantoccini::key::Key::Control);
    let alt = char::from(fantoccini::key::Key::Alt);
    content
        .send_keys(&format!("{control}{alt}g{alt}{control}"))
        .await
        .unwrap();
    let field = client
        .find(Locator::Css(&format!("{editor} .cm-goto-line input[name='line']")))
        .await
        .expect("Ctrl+Alt+G opens the go-to-line field");
    field
        .send_keys(&format!("12{}", char::from(fantoccini::key::Key::Enter)))
        .await
        .unwrap();
    let line = js(
        client,
        "const box = document.getElementById('manifests'); return box.value.slice(0, box.selectionStart).split('\\n').length;",
    )
    .await;
    assert_eq!(line, json!(12));
}

/// Each finding is its own line: rule (linked to its README section), path, the line of the
/// field (which selects that line in the input) and the fix; the counts head the results.
async fn check_findings(client: &Client, crd: &str) {
    let findings = js(
        client,
        "return [...document.querySelectorAll(\"tr[data-policy='crd-schema-fields'] li.finding\")].map(f => [f.dataset.rule, Number(f.dataset.line), f.querySelector('a.rule').href, f.querySelector('.path').textContent, f.textContent]);",
    )
    .await;
    let findings = findings.as_array().unwrap();
    assert!(!findings.is_empty(), "the rejection lists its findings");
    let lines: Vec<&str> = crd.lines().collect();
    for finding in findings {
        let (rule, line, link, path, text) = (&finding[0], &finding[1], &finding[2], &finding[3], &finding[4]);
        assert!(rule.as_str().is_some_and(|r| !r.is_empty()), "{finding}");
        let link = link.as_str().unwrap();
        assert!(link.contains("/policies/crd-schema-fields#"), "{link}");
        // The line is the field's, not the document's first.
        let line = line.as_u64().unwrap() as usize;
        let last = path.as_str().unwrap().rsplit('.').next().unwrap().to_string();
        let key = last.split('[').next().unwrap();
        assert!(
            line > 1 && lines[line - 1].contains(key),
            "line {line} {:?} for {path}",
            lines[line - 1]
        );
        assert!(text.as_str().unwrap().contains("Fix:"), "{text}");
    }
    // The button of the first finding selects its line in the manifests.
    let line = findings[0][1].as_u64().unwrap();
    click(client, "tr[data-policy='crd-schema-fields'] li.finding button.jump").await;
    let selected = js(
        client,
        "const box = document.getElementById('manifests'); return [document.activeElement.closest('[data-editor-for]')?.dataset.editorFor, box.value.slice(0, box.selectionStart).split('\\n').length];",
    )
    .await;
    assert_eq!(selected, json!(["manifests", line]));

    let counts = js(
        client,
        "return Object.fromEntries([...document.querySelectorAll('#counts li')].map(c => [c.dataset.count, Number(c.dataset.n)]));",
    )
    .await;
    let verdicts = rows(client).await;
    for verdict in ["rejected", "warned", "accepted"] {
        let n = verdicts.iter().filter(|(_, _, v)| v == verdict).count();
        assert_eq!(counts[verdict], json!(n), "{counts}");
    }
}

/// Rejected objects first; accepted rows hidden behind one toggle.
async fn check_results_layout(client: &Client) {
    let first = js(
        client,
        "return document.querySelector('#results tbody').dataset.verdict;",
    )
    .await;
    assert_eq!(first, "rejected");
    let visible_accepted = "return [...document.querySelectorAll(\"#results tr[data-verdict='accepted']\")].filter(r => r.offsetParent !== null).length;";
    assert_eq!(js(client, visible_accepted).await, json!(0));
    let accepted = js(
        client,
        "return document.querySelectorAll(\"#results tr[data-verdict='accepted']\").length;",
    )
    .await;
    assert!(accepted.as_u64().unwrap() > 0);
    click(client, "#show-accepted").await;
    assert_eq!(js(client, visible_accepted).await, accepted);
    click(client, "#show-accepted").await;
    assert_eq!(js(client, visible_accepted).await, json!(0));
}

/// An edit marks the results stale; Ctrl+Enter evaluates again.
async fn check_stale_and_keyboard(client: &Client) {
    let stale = "return [document.getElementById('outputs').dataset.stale, document.getElementById('stale').hidden];";
    assert_eq!(js(client, stale).await, json!(["false", true]));
    type_into(client, "manifests", "\n# edited\n").await;
    assert_eq!(js(client, stale).await, json!(["true", false]));
    let manifests = client
        .find(Locator::Css("[data-editor-for='manifests'] .cm-content"))
        .await
        .unwrap();
    expect_evaluation(client).await;
    let chord = format!(
        "{}{}{}",
        char::from(fantoccini::key::Key::Control),
        char::from(fantoccini::key::Key::Enter),
        char::from(fantoccini::key::Key::Control)
    );
    manifests.send_keys(&chord).await.unwrap();
    rows(client).await;
    assert_eq!(js(client, stale).await, json!(["false", true]));
}

/// Share links: compressed, reopened, the first uncompressed form still read, links too long
/// for a browser refused with the file offered instead, and that file loaded again.
async fn check_share_links(client: &Client, page: &str, crd: &str, rejected: &(String, String, String)) {
    paste(client, crd).await;
    rows(client).await;
    let (link, state) = copy_link(client).await;
    assert_eq!(state["manifests"], Value::from(crd));
    assert!(
        link.len() < crd.len() / 3,
        "compressed: {} for {}",
        link.len(),
        crd.len()
    );

    // A link of the first form (uncompressed JSON; keys left out mean empty) is still read.
    let by_hand = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json!({"manifests": crd}).to_string());
    client.goto("about:blank").await.unwrap();
    client.goto(&format!("{page}#state={by_hand}")).await.unwrap();
    assert!(rows(client).await.contains(rejected));
    client.goto("about:blank").await.unwrap();
    client.goto(&link).await.unwrap();
    assert!(rows(client).await.contains(rejected));

    // 2.6 MB that does not compress: the link would pass 2,000,000 characters.
    js(
        client,
        "const a = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
         const bytes = crypto.getRandomValues(new Uint8Array(65536)); const parts = [];
         for (let i = 0; i < 2600000; i++) { if (i % 65536 === 0) crypto.getRandomValues(bytes); parts.push(a[bytes[i % 65536] % 64]); }
         document.getElementById('manifests').value = '# ' + parts.join('');
         history.replaceState(null, '', location.pathname);",
    )
    .await;
    click(client, "#copy-link").await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while js(client, "return document.getElementById('status').dataset.kind ?? '';").await != "problem" {
        assert!(
            Instant::now() < deadline,
            "no word on the long link: {}",
            text_of(client, "#status").await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let status = text_of(client, "#status").await;
    assert!(
        status.contains("more than browsers open") && status.contains("Download input"),
        "{status}"
    );
    assert!(!client.current_url().await.unwrap().to_string().contains("#z="));
    // "Download input" holds the whole state as JSON.
    click(client, "#download-state").await;
    let saved = client
        .execute_async(
            "const done = arguments[0]; fetch(document.getElementById('download-state').href).then(r => r.json()).then(s => done(s.manifests.length), e => done(String(e)));",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(saved, json!(2_600_002));

    // "Load input file" reads such a file back and evaluates it.
    let file = std::env::temp_dir().join(format!("syncguard-playground-{}.json", std::process::id()));
    std::fs::write(&file, json!({"manifests": crd}).to_string()).unwrap();
    expect_evaluation(client).await;
    let input = client.find(Locator::Id("load-state")).await.unwrap();
    input.send_keys(&file.display().to_string()).await.unwrap();
    assert!(rows(client).await.contains(rejected));
    let _ = std::fs::remove_file(&file);
}

/// Invalid YAML, invalid JSON, a document without apiVersion (the others still judged).
async fn check_input_errors(client: &Client) {
    // Broken YAML (the scan fixture `syncguard scan` reports at line 11): the error with its line.
    let broken =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/data/scan/bad/broken.yaml"))
            .unwrap();
    paste(client, &broken).await;
    rows(client).await;
    let error = text_of(client, "#errors .error[data-line='11']").await;
    assert!(error.starts_with("manifests:11: invalid YAML"), "{error}");

    paste(client, "{\"apiVersion\": \"v1\", \"kind\": ").await;
    rows(client).await;
    let error = text_of(client, "#errors .error").await;
    assert!(error.contains("invalid JSON"), "{error}");

    let mixed = "kind: ConfigMap\nmetadata: {name: lost}\n---\n".to_string() + &kube_ovn_crd();
    paste(client, &mixed).await;
    let found = rows(client).await;
    let error = text_of(client, "#errors .error[data-line='1']").await;
    assert!(error.contains("no apiVersion"), "{error}");
    assert!(
        found
            .iter()
            .any(|(_, policy, verdict)| policy == "crd-schema-fields" && verdict == "rejected"),
        "{found:?}"
    );

    paste(client, "# only a comment\n").await;
    assert!(rows(client).await.is_empty());
    assert_eq!(
        js(client, "return document.getElementById('empty').dataset.reason;").await,
        "no-objects"
    );
}

/// One example per policy at least, each giving its policy's verdict; an edited input is
/// replaced only after the user says so.
async fn check_examples(client: &Client, page: &str) {
    client.goto("about:blank").await.unwrap();
    client.goto(page).await.unwrap();
    rows(client).await;
    let examples = js(
        client,
        "return [...document.querySelectorAll('[data-example]')].map(b => [b.dataset.example, b.dataset.policy]);",
    )
    .await;
    let examples: Vec<(String, String)> = serde_json::from_value(examples).unwrap();
    let mut policies: Vec<&str> = examples.iter().map(|(_, p)| p.as_str()).collect();
    policies.sort_unstable();
    policies.dedup();
    assert_eq!(
        policies,
        [
            "crd-kind-collision",
            "crd-safe-upgrade",
            "crd-schema-fields",
            "hook-job-safety",
            "kind-group-clash",
            "object-validation",
            "ownership-markers",
            "sync-drift"
        ]
    );
    for (id, policy) in &examples {
        expect_evaluation(client).await;
        click(client, &format!("[data-example='{id}']")).await;
        let found = rows(client).await;
        assert!(
            found.iter().any(|(_, p, verdict)| p == policy && verdict != "accepted"),
            "{id}: {found:?}"
        );
    }
    // After an edit, an example asks first; "Keep my input" keeps it.
    type_into(client, "manifests", "\n# mine\n").await;
    let mine = js(client, "return document.getElementById('manifests').value;").await;
    click(client, "[data-example='kube-ovn-crd']").await;
    assert_eq!(
        js(client, "return document.getElementById('replace-prompt').hidden;").await,
        json!(false)
    );
    click(client, "#replace-no").await;
    assert_eq!(
        js(client, "return document.getElementById('manifests').value;").await,
        mine
    );
    click(client, "[data-example='kube-ovn-crd']").await;
    expect_evaluation(client).await;
    click(client, "#replace-yes").await;
    assert!(
        rows(client)
            .await
            .iter()
            .any(|(_, p, v)| p == "crd-schema-fields" && v == "rejected")
    );
}

/// A CRD shaped like Agones' (long names, deep paths, long URLs): nothing scrolls sideways at
/// 1400 and at 800 px, accepted rows shown or not.
async fn check_wide_input(client: &Client) {
    let mut properties = json!({"type": "string", "x-kubernetes-patch-strategy": "merge",
        "description": format!("See https://agones.dev/site/docs/reference/{}/fleetautoscaler-webhook-policy-with-a-very-long-path", "x".repeat(160))});
    for depth in (0..14).rev() {
        properties = json!({"type": "object", "properties": {format!("gameServerAllocationPolicySelectorsMetadataLabels{depth}"): properties}});
    }
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gameserverallocationpolicies.multicluster.agones.dev",
                     "annotations": {"helm.sh/chart": format!("agones-{}", "1".repeat(200))}},
        "spec": {"group": "multicluster.agones.dev", "scope": "Namespaced",
                 "names": {"kind": "GameServerAllocationPolicy", "plural": "gameserverallocationpolicies",
                           "singular": "gameserverallocationpolicy", "listKind": "GameServerAllocationPolicyList"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": properties}}]}
    });
    let input = serde_json::to_string_pretty(&crd).unwrap() + "\n" + &kube_ovn_crd();
    paste(client, &input).await;
    let found = rows(client).await;
    assert!(found.iter().any(|(_, _, v)| v == "rejected"), "{found:?}");
    let fits = "return [document.documentElement.scrollWidth, window.innerWidth];";
    for width in [1400, 800] {
        client.set_window_size(width, 1000).await.unwrap();
        for _ in 0..2 {
            let sizes = js(client, fits).await;
            assert!(
                sizes[0].as_u64() <= sizes[1].as_u64(),
                "at {width} px the page is wider than the window: {sizes}"
            );
            click(client, "#show-accepted").await;
        }
    }
    client.set_window_size(1400, 1000).await.unwrap();
}

/// sync-drift's settings with `kubectl apply` among the tools (its default is the GitOps tools).
const KUBECTL_TOO: &str = "policies:\n  sync-drift:\n    settings: {tools: [argocd, flux, fleet, kubectl]}\n";

/// A 4.4 MB input (KEDA's Deployments, 600 times) is judged off the main thread: timers keep
/// firing while the worker evaluates.
async fn check_big_input(client: &Client) {
    let keda = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../policies/sync-drift/test_data/real/keda-deployments.yaml"),
    )
    .unwrap();
    let big = vec![keda.as_str(); 600].join("---\n");
    client
        .execute(
            // KEDA's drift (empty env values, `cpu: 1000m`) is what `kubectl apply` shows: the
            // config names it among the tools, as the example does.
            "document.getElementById('manifests').value = arguments[0];
             document.getElementById('config').value = arguments[1];",
            vec![Value::from(big.as_str()), Value::from(KUBECTL_TOO)],
        )
        .await
        .unwrap();
    let timing = client
        .execute_async(
            "const done = arguments[0]; const ticks = [];
             const start = () => {
               const timer = setInterval(() => ticks.push(performance.now()), 10);
               document.body.dataset.evaluated = 'false';
               const started = performance.now();
               document.getElementById('evaluate').click();
               const wait = () => {
                 if (document.body.dataset.evaluated !== 'true') { setTimeout(wait, 20); return; }
                 clearInterval(timer);
                 const answered = Number(document.body.dataset.answeredAt);
                 const before = [started, ...ticks.filter((t) => t < answered), answered];
                 let worst = 0;
                 for (let i = 1; i < before.length; i++) worst = Math.max(worst, before[i] - before[i - 1]);
                 done([answered - started, worst]);
               };
               wait();
             };
             // After the editor has drawn the new text.
             requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(start, 100)));",
            vec![],
        )
        .await
        .unwrap();
    let (evaluation, worst) = (timing[0].as_f64().unwrap(), timing[1].as_f64().unwrap());
    eprintln!("4.4 MB input: answered in {evaluation:.0} ms, longest pause of the page meanwhile {worst:.0} ms");
    assert!(
        // Evaluated on the main thread, the page would pause for the whole evaluation.
        evaluation > 2.0 * worst,
        "the page paused {worst:.0} ms during an evaluation of {evaluation:.0} ms"
    );
    let found = rows(client).await;
    // The 600 copies are identical objects, judged once each (the first copy's row names the
    // others): KEDA's Deployments warn, each once.
    let warned = found
        .iter()
        .filter(|(_, p, v)| p == "sync-drift" && v == "warned")
        .count();
    assert!((1..600).contains(&warned), "{warned} sync-drift rows warned");
    client
        .execute("document.getElementById('config').value = '';", vec![])
        .await
        .unwrap();
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
        text_of(client, &format!("{row} .operation")).await,
        "UPDATE from the old version"
    );
    let finding = text_of(client, &format!("{row} li.finding[data-rule='existingFieldRemoval']")).await;
    assert!(finding.contains("properties.count"), "{finding}");
    let status = text_of(client, "#status").await;
    assert!(status.contains("1 with an old version"), "{status}");

    // The share link carries the old pane, and opening it gives the UPDATE again.
    let (link, state) = copy_link(client).await;
    assert_eq!(state["old"], Value::from(format!("{old}\n# typed\n")));
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

    // The example fills both panes with the same update.
    client.goto("about:blank").await.unwrap();
    client.goto(page).await.unwrap();
    rows(client).await;
    expect_evaluation(client).await;
    click(client, "[data-example='crd-field-removed']").await;
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
