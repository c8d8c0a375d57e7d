// The evaluation, off the page's main thread: loads the module once, then answers each message
// `{id, kind: "evaluate", state}` with `{id, report, ms}` (the module's JSON report as text: a
// string crosses to the page at once, where a parsed object would be copied field by field) and
// `{id, kind: "examples"}` with `{id, examples}`. Typing and scrolling stay smooth while a big
// input is judged; the page keeps only the answer to its latest request.
import init, { evaluate, examples_json } from "./syncguard_playground.js";

const ready = init();

self.onmessage = async (event) => {
  const { id, kind, state } = event.data;
  try {
    await ready;
    if (kind === "examples") {
      self.postMessage({ id, examples: JSON.parse(examples_json()) });
      return;
    }
    const started = performance.now();
    const text = evaluate(state.manifests, state.snapshot, state.config, state.old);
    self.postMessage({ id, report: text, ms: performance.now() - started });
  } catch (e) {
    self.postMessage({ id, failure: String(e && e.message ? e.message : e) });
  }
};
