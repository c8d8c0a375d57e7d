// The page: reads the four inputs, calls the module's `evaluate`, renders its JSON report, and
// keeps the state in the URL fragment (`#state=` + base64url, no padding, of UTF-8 JSON).
import init, { evaluate, example } from "./syncguard_playground.js";

const FIELDS = ["manifests", "snapshot", "config", "old"];
const $ = (id) => document.getElementById(id);

function encodeState(state) {
  const bytes = new TextEncoder().encode(JSON.stringify(state));
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function decodeState(text) {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const binary = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  const state = JSON.parse(new TextDecoder().decode(bytes));
  if (state === null || typeof state !== "object") throw new Error("the state is not a JSON object");
  return state;
}

function currentState() {
  const state = {};
  for (const field of FIELDS) state[field] = $(field).value;
  return state;
}

function shareLink() {
  const url = new URL(window.location.href);
  url.hash = "state=" + encodeState(currentState());
  return url.toString();
}

function cell(row, text, className) {
  const td = row.insertCell();
  if (className) td.className = className;
  td.textContent = text;
  return td;
}

function pre(parent, text) {
  const block = document.createElement("pre");
  block.textContent = text;
  parent.appendChild(block);
}

function render(report) {
  const errors = $("errors");
  errors.replaceChildren();
  for (const e of report.errors) {
    const p = document.createElement("p");
    p.className = "error";
    p.dataset.input = e.input;
    if (e.line !== null) p.dataset.line = e.line;
    p.textContent = `${e.input}${e.line !== null ? ":" + e.line : ""}: ${e.message}`;
    errors.appendChild(p);
  }
  const body = $("results").tBodies[0];
  body.replaceChildren();
  for (const r of report.results) {
    const doc = report.documents[r.document];
    const row = body.insertRow();
    row.dataset.document = r.document;
    row.dataset.policy = r.policy;
    row.dataset.verdict = r.verdict;
    row.dataset.operation = r.operation;
    cell(row, String(r.line));
    const place = doc.namespace ? `${doc.namespace}/` : "";
    cell(row, `${doc.kind} ${place}${doc.name ?? "(no name)"} (${doc.apiVersion})`);
    cell(row, r.policy);
    cell(row, r.operation === "UPDATE" ? "UPDATE from the old version" : r.operation, "operation");
    cell(row, r.verdict, "verdict");
    const details = row.insertCell();
    if (r.message) pre(details, r.message + (r.code ? ` (code ${r.code})` : ""));
    for (const w of r.warnings) pre(details, "warning: " + w);
    if (r.patch) pre(details, "JSON Patch: " + JSON.stringify(r.patch, null, 2));
    if (r.related.length) {
      pre(details, "also: " + r.related.map((i) => `line ${report.documents[i].line}`).join(", "));
    }
  }
  $("empty").hidden = report.results.length > 0 || report.documents.length === 0;
  const policies = $("policies");
  policies.replaceChildren();
  for (const p of report.policies) {
    const dt = document.createElement("dt");
    const link = document.createElement("a");
    link.href = p.readme;
    link.textContent = p.name;
    dt.appendChild(link);
    const dd = document.createElement("dd");
    dd.textContent = p.description ?? "";
    policies.append(dt, dd);
  }
}

function run() {
  const state = currentState();
  const report = JSON.parse(evaluate(state.manifests, state.snapshot, state.config, state.old));
  render(report);
  const updates = report.documents.filter((d) => d.old).length;
  const old = state.old.trim() ? ` (${updates} with an old version)` : "";
  $("status").textContent = `${report.documents.length} objects${old}, ${report.results.length} results`;
  document.body.dataset.evaluated = "true";
}

function show(state) {
  for (const field of FIELDS) $(field).value = typeof state[field] === "string" ? state[field] : "";
  if (state.snapshot) $("snapshot-box").open = true;
  if (state.old) $("old-box").open = true;
  if (state.config) $("config-box").open = true;
}

function loadFragment() {
  const match = window.location.hash.match(/^#state=([A-Za-z0-9_-]*)$/);
  if (!match) return false;
  try {
    show(decodeState(match[1]));
    return true;
  } catch (e) {
    $("status").textContent = `The link's state cannot be read: ${e.message}`;
    return false;
  }
}

async function main() {
  await init();
  $("evaluate").addEventListener("click", run);
  $("example-update").addEventListener("click", () => {
    show(JSON.parse(example()));
    run();
  });
  $("copy-link").addEventListener("click", async () => {
    const link = shareLink();
    history.replaceState(null, "", link);
    try {
      await navigator.clipboard.writeText(link);
      $("status").textContent = "Link copied.";
    } catch {
      $("status").textContent = "Link in the address bar (the clipboard is not available).";
    }
  });
  window.addEventListener("hashchange", () => loadFragment() && run());
  loadFragment();
  run();
}

main();
