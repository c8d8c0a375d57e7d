// The page: reads the four inputs, has the worker (worker.js) evaluate them with the module,
// renders its JSON report, and keeps the state in share links and files.
//
// Share links: `#z=` + base64url (no padding) of the UTF-8 JSON state compressed with
// deflate-raw (the browser's CompressionStream); links of the first form, `#state=` + base64url
// of the uncompressed JSON, are still read.

const FIELDS = ["manifests", "snapshot", "config", "old"];
const VERDICTS = ["rejected", "mutated", "warned", "accepted"];
const RANK = { rejected: 0, mutated: 1, warned: 2, accepted: 3 };
// Chromium opens URLs up to 2 MiB; longer ones give a blank page. A link longer than this is
// refused with an offer of the file instead.
export const MAX_LINK = 2_000_000;
const $ = (id) => document.getElementById(id);

// ---- The worker --------------------------------------------------------------------------

const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
const waiting = new Map();
let nextId = 0;

function ask(message) {
  const id = ++nextId;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    worker.postMessage({ ...message, id });
  });
}

worker.onmessage = (event) => {
  const pending = waiting.get(event.data.id);
  if (!pending) return;
  waiting.delete(event.data.id);
  if (event.data.failure !== undefined) pending.reject(new Error(event.data.failure));
  else pending.resolve(event.data);
};

worker.onerror = (event) => {
  problem(`The evaluation could not start: ${event.message ?? "the worker failed to load"}`);
};

// ---- State, links and files ----------------------------------------------------------------

function currentState() {
  const state = {};
  for (const field of FIELDS) state[field] = $(field).value;
  return state;
}

function toBase64url(bytes) {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64url(text) {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const binary = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

async function pipe(bytes, stream) {
  const piped = new Blob([bytes]).stream().pipeThrough(stream);
  return new Uint8Array(await new Response(piped).arrayBuffer());
}

async function encodeState(state) {
  const json = new TextEncoder().encode(JSON.stringify(state));
  return toBase64url(await pipe(json, new CompressionStream("deflate-raw")));
}

function parseState(json) {
  const state = JSON.parse(json);
  if (state === null || typeof state !== "object" || Array.isArray(state)) {
    throw new Error("the state is not a JSON object");
  }
  return state;
}

async function decodeFragment(hash) {
  const compressed = hash.match(/^#z=([A-Za-z0-9_-]*)$/);
  if (compressed) {
    const bytes = await pipe(fromBase64url(compressed[1]), new DecompressionStream("deflate-raw"));
    return parseState(new TextDecoder().decode(bytes));
  }
  const plain = hash.match(/^#state=([A-Za-z0-9_-]*)$/);
  if (plain) return parseState(new TextDecoder().decode(fromBase64url(plain[1])));
  return null;
}

async function shareLink() {
  const url = new URL(window.location.href);
  url.hash = "z=" + (await encodeState(currentState()));
  return url.toString();
}

// ---- Status ---------------------------------------------------------------------------------

function say(text) {
  $("status").textContent = text;
  delete $("status").dataset.kind;
}

function problem(text) {
  $("status").textContent = text;
  $("status").dataset.kind = "problem";
}

// ---- Rendering ------------------------------------------------------------------------------

function element(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "dataset") Object.assign(node.dataset, value);
    else if (key in node) node[key] = value;
    else node.setAttribute(key, value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

function jumpButton(line, what) {
  return element("button", {
    type: "button",
    className: "jump",
    dataset: { line: String(line) },
    title: `Select line ${line} of the manifests`,
    textContent: what ?? `line ${line}`,
  });
}

/// Selects line `line` (1-based) of the manifests and scrolls it into view.
function jumpTo(line) {
  const box = $("manifests");
  const text = box.value;
  let start = 0;
  for (let n = 1; n < line; n++) {
    const next = text.indexOf("\n", start);
    if (next < 0) break;
    start = next + 1;
  }
  let end = text.indexOf("\n", start);
  if (end < 0) end = text.length;
  box.focus({ preventScroll: true });
  box.setSelectionRange(start, end);
  const height = parseFloat(getComputedStyle(box).lineHeight) || 16;
  box.scrollTop = Math.max(0, (line - 1) * height - box.clientHeight / 3);
  box.scrollLeft = 0;
  (document.querySelector("[data-editor-for='manifests']") ?? box).scrollIntoView({ block: "nearest" });
}

/// The editor (editor.js, CodeMirror) in place of each text box; without it the boxes stay.
async function attachEditors() {
  try {
    const { attach } = await import("./editor.js");
    for (const field of FIELDS) attach($(field));
    document.body.dataset.editor = "codemirror";
  } catch (e) {
    document.body.dataset.editor = "textarea";
    console.warn("the editor did not load; plain text boxes are used", e);
  }
}

function describeFix(fix) {
  if (fix === "delete") return ["Fix: remove this field."];
  if (fix && typeof fix === "object" && "replace" in fix) {
    return ["Fix: set it to ", element("code", { textContent: fix.replace }), "."];
  }
  return null;
}

function findingItem(f) {
  const fix = describeFix(f.fix);
  return element(
    "li",
    { className: "finding", dataset: { rule: f.rule, line: String(f.line), action: f.action } },
    element(
      "div",
      { className: "head" },
      element("a", { className: "rule", href: f.readme, target: "_blank", rel: "noopener", textContent: f.rule }),
      f.path ? element("code", { className: "path", textContent: f.path }) : null,
      jumpButton(f.line),
    ),
    element("p", { className: "brief", textContent: f.brief }),
    fix ? element("p", { className: "fix" }, ...fix) : null,
    f.suppressed ? element("p", { className: "suppressed", textContent: `Suppressed on the object: ${f.suppressed}` }) : null,
  );
}

function details(r, report) {
  const cell = element("td", { className: "details" });
  const answer = [];
  if (r.message) answer.push(r.message + (r.code ? ` (code ${r.code})` : ""));
  for (const w of r.warnings) answer.push("warning: " + w);
  if (r.findings.length) {
    cell.append(element("ul", { className: "findings" }, ...r.findings.map(findingItem)));
    if (r.unlistedFindings > 0) {
      cell.append(element("p", { textContent: `${r.unlistedFindings} more findings were counted but not listed.` }));
    }
    if (answer.length) {
      cell.append(
        element(
          "details",
          {},
          element("summary", { textContent: "The answer admission gives" }),
          ...answer.map((text) => element("pre", { textContent: text })),
        ),
      );
    }
  } else {
    for (const text of answer) cell.append(element("pre", { textContent: text }));
  }
  if (r.patch) cell.append(element("pre", { textContent: "JSON Patch: " + JSON.stringify(r.patch, null, 2) }));
  if (r.related.length) {
    cell.append(
      element(
        "p",
        { className: "related" },
        "Also: ",
        ...r.related.map((i) => jumpButton(report.documents[i].line, `line ${report.documents[i].line}`)),
      ),
    );
  }
  if (r.copies.length) {
    cell.append(
      element(
        "p",
        { className: "copies" },
        "Identical copies, judged once with it: ",
        ...r.copies.map((i) => jumpButton(report.documents[i].line, `line ${report.documents[i].line}`)),
      ),
    );
  }
  if (r.crd) {
    const line = (i) => jumpButton(report.documents[i].line, `line ${report.documents[i].line}`);
    cell.append(
      element(
        "p",
        { className: "crd" },
        "Judged against the CRD at ",
        line(r.crd.used),
        r.crd.differ ? "; other copies, which differ (the answer depends on which one is installed): " : "; identical copies: ",
        ...r.crd.others.map(line),
      ),
    );
  }
  return cell;
}

function objectTitle(doc) {
  const place = doc.namespace ? `${doc.namespace}/` : "";
  return `${doc.kind || "(no kind)"} ${place}${doc.name ?? "(no name)"}`;
}

let lastReport = null;

function render(report) {
  lastReport = report;
  const errors = $("errors");
  errors.replaceChildren();
  for (const e of report.errors) {
    const p = element("p", { className: "error", dataset: { input: e.input } });
    if (e.line !== null) p.dataset.line = e.line;
    p.textContent = `${e.input}${e.line !== null ? ":" + e.line : ""}: ${e.message}`;
    errors.appendChild(p);
  }

  const counts = Object.fromEntries(VERDICTS.map((v) => [v, 0]));
  for (const r of report.results) counts[r.verdict] += 1;
  $("counts").replaceChildren(
    ...VERDICTS.filter((v) => v !== "mutated" || counts.mutated > 0).map((v) =>
      element("li", { dataset: { count: v, n: String(counts[v]) }, textContent: `${counts[v]} ${v}` }),
    ),
  );

  const byDocument = new Map();
  for (const r of report.results) {
    if (!byDocument.has(r.document)) byDocument.set(r.document, []);
    byDocument.get(r.document).push(r);
  }
  const worst = (rows) => Math.min(...rows.map((r) => RANK[r.verdict]));
  const objects = [...byDocument.entries()].sort(([a, ra], [b, rb]) => worst(ra) - worst(rb) || a - b);

  const table = $("results");
  for (const body of [...table.tBodies]) body.remove();
  for (const [index, rows] of objects) {
    const doc = report.documents[index];
    const body = table.createTBody();
    body.className = "object-group";
    body.dataset.document = index;
    body.dataset.verdict = VERDICTS[worst(rows)];
    const head = element(
      "tr",
      { className: "object" },
      element(
        "th",
        { colSpan: 3, scope: "rowgroup" },
        `${objectTitle(doc)} `,
        element("span", { className: "api", textContent: `(${doc.apiVersion}) ` }),
        jumpButton(doc.line),
      ),
    );
    body.append(head);
    rows.sort((a, b) => RANK[a.verdict] - RANK[b.verdict] || a.policy.localeCompare(b.policy));
    for (const r of rows) {
      const policy = element("td", { className: "policy" }, r.policy);
      if (r.operation === "UPDATE") {
        policy.append(element("br"), element("span", { className: "operation", textContent: "UPDATE from the old version" }));
      }
      body.append(
        element(
          "tr",
          { dataset: { document: String(r.document), policy: r.policy, verdict: r.verdict, operation: r.operation } },
          policy,
          element("td", { className: "verdict", textContent: r.verdict }),
          details(r, report),
        ),
      );
    }
  }
  applyFilter();
  const empty = $("empty");
  empty.hidden = false;
  if (report.documents.length === 0 && report.errors.length === 0) {
    const blank = $("manifests").value.trim() === "";
    empty.dataset.reason = blank ? "empty" : "no-objects";
    empty.textContent = blank
      ? "The manifests are empty: paste some, load a file, or pick an example."
      : "The manifests hold no Kubernetes object (only comments or empty documents).";
  } else if (report.results.length === 0 && report.documents.length > 0) {
    empty.dataset.reason = "no-policy";
    empty.textContent = "No policy applies to these objects.";
  } else {
    empty.hidden = true;
  }

  const policies = $("policies");
  policies.replaceChildren();
  for (const p of report.policies) {
    policies.append(
      element("dt", {}, element("a", { href: p.readme, textContent: p.name })),
      element("dd", { textContent: p.description ?? "" }),
    );
  }
}

/// Hides accepted rows (and objects with nothing else) unless "Show accepted" is checked.
function applyFilter() {
  const show = $("show-accepted").checked;
  let hidden = 0;
  for (const body of $("results").tBodies) {
    body.hidden = !show && body.dataset.verdict === "accepted";
    for (const row of body.querySelectorAll("tr[data-verdict='accepted']")) {
      row.hidden = !show;
      hidden += 1;
    }
  }
  $("show-accepted").parentElement.lastChild.textContent = ` Show accepted (${hidden})`;
}

// ---- Evaluation -----------------------------------------------------------------------------

let latest = 0;
let edited = false;

function markStale(stale) {
  $("outputs").dataset.stale = stale ? "true" : "false";
  $("stale").hidden = !stale;
}

async function run() {
  const state = currentState();
  const ticket = ++latest;
  say("Evaluating…");
  let answer;
  try {
    answer = await ask({ kind: "evaluate", state });
  } catch (e) {
    if (ticket === latest) problem(`The evaluation failed: ${e.message}`);
    return;
  }
  if (ticket !== latest) return;
  // When the answer reached the page (before rendering it): the tests measure that the page
  // stayed responsive until then.
  document.body.dataset.answeredAt = String(performance.now());
  const report = JSON.parse(answer.report);
  render(report);
  markStale(false);
  const updates = report.documents.filter((d) => d.old).length;
  const old = state.old.trim() ? ` (${updates} with an old version)` : "";
  say(`${report.documents.length} objects${old}, ${report.results.length} results, in ${Math.round(answer.ms)} ms`);
  document.body.dataset.evaluated = "true";
}

function show(state) {
  for (const field of FIELDS) $(field).value = typeof state[field] === "string" ? state[field] : "";
  $("snapshot-box").open = Boolean(state.snapshot);
  $("old-box").open = Boolean(state.old);
  $("config-box").open = Boolean(state.config);
  edited = false;
}

async function loadFragment() {
  try {
    const state = await decodeFragment(window.location.hash);
    if (state === null) return false;
    show(state);
    return true;
  } catch (e) {
    problem(`The link's state cannot be read: ${e.message}`);
    return false;
  }
}

// ---- Examples -------------------------------------------------------------------------------

let pendingExample = null;

function useExample(example) {
  $("replace-prompt").hidden = true;
  pendingExample = null;
  show(example.state);
  run();
}

function offerExample(example) {
  const typed = FIELDS.some((f) => $(f).value.trim() !== "");
  if (!edited || !typed) {
    useExample(example);
    return;
  }
  pendingExample = example;
  $("replace-name").textContent = example.title;
  $("replace-prompt").hidden = false;
  $("replace-yes").focus();
}

async function loadExamples() {
  const { examples } = await ask({ kind: "examples" });
  const group = $("examples");
  for (const example of examples) {
    const button = element("button", {
      type: "button",
      dataset: { example: example.id, policy: example.policy },
      title: `${example.policy}: ${example.verdict} (from ${example.source})`,
      textContent: `${example.policy}: ${example.title}`,
    });
    button.addEventListener("click", () => offerExample(example));
    group.append(button);
  }
}

// ---- Wiring ---------------------------------------------------------------------------------

async function copyLink() {
  const link = await shareLink();
  if (link.length > MAX_LINK) {
    problem(
      `This input makes a link of ${link.length.toLocaleString("en")} characters, more than browsers open ` +
        `(${MAX_LINK.toLocaleString("en")}). Use "Download input" to save it as a file, and "Load input file" to open it.`,
    );
    $("download-state").focus();
    return;
  }
  history.replaceState(null, "", link);
  try {
    await navigator.clipboard.writeText(link);
    say(`Link copied (${link.length.toLocaleString("en")} characters).`);
  } catch {
    say(`Link in the address bar (${link.length.toLocaleString("en")} characters; the clipboard is not available).`);
  }
}

let downloadUrl = null;

function prepareDownload() {
  if (downloadUrl) URL.revokeObjectURL(downloadUrl);
  const blob = new Blob([JSON.stringify(currentState(), null, 2)], { type: "application/json" });
  downloadUrl = URL.createObjectURL(blob);
  $("download-state").href = downloadUrl;
}

async function loadFile(file) {
  const text = await file.text();
  let state;
  try {
    const parsed = parseState(text);
    state = FIELDS.some((f) => typeof parsed[f] === "string") ? parsed : { manifests: text };
  } catch {
    // Not a saved state: a manifests file.
    state = { manifests: text };
  }
  show(state);
  say(`Loaded ${file.name}.`);
  run();
}

async function main() {
  $("evaluate").addEventListener("click", run);
  $("copy-link").addEventListener("click", copyLink);
  $("download-state").addEventListener("click", prepareDownload);
  $("download-state").addEventListener("keydown", (e) => {
    if (e.key === " ") {
      e.preventDefault();
      $("download-state").click();
    }
  });
  $("load-state").addEventListener("change", (e) => {
    const [file] = e.target.files;
    if (file) loadFile(file);
    e.target.value = "";
  });
  $("show-accepted").addEventListener("change", applyFilter);
  $("replace-yes").addEventListener("click", () => pendingExample && useExample(pendingExample));
  $("replace-no").addEventListener("click", () => {
    pendingExample = null;
    $("replace-prompt").hidden = true;
  });
  for (const field of FIELDS) {
    $(field).addEventListener("input", () => {
      edited = true;
      if (lastReport) markStale(true);
    });
  }
  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter") {
      e.preventDefault();
      run();
    }
  });
  $("results").addEventListener("click", (e) => {
    const button = e.target.closest("button.jump");
    if (button) jumpTo(Number(button.dataset.line));
  });
  window.addEventListener("hashchange", async () => (await loadFragment()) && run());
  loadExamples().catch((e) => problem(`The examples could not be loaded: ${e.message}`));
  await attachEditors();
  await loadFragment();
  await run();
}

main();
