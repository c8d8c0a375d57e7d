// The playground's editor: CodeMirror 6 over each text box, with line numbers, YAML
// highlighting, no soft wrap, search and "go to line" (Ctrl+Alt+G). Bundled at build time
// (`make playground`, esbuild, versions pinned by package-lock.json) into editor.js.
//
// The text box stays the page's source of truth and keeps its label: it is hidden, and its
// `value`, `selectionStart`, `setSelectionRange` and `focus` are served by the editor, so the
// page (and its tests) read and write it as before; an edit in the editor fires the box's
// `input` event.
import { basicSetup } from "codemirror";
import { EditorView, keymap } from "@codemirror/view";
import { EditorState, Prec } from "@codemirror/state";
import { yaml } from "@codemirror/lang-yaml";

/// Puts an editor in place of `box` (a textarea with an id and a label).
export function attach(box) {
  let quiet = false;
  const view = new EditorView({
    parent: box.parentElement,
    state: EditorState.create({
      doc: box.value,
      extensions: [
        // Ctrl+Enter evaluates (the page's handler); the editor must not insert a line.
        Prec.highest(keymap.of([{ key: "Mod-Enter", run: () => true }])),
        basicSetup,
        yaml(),
        EditorView.contentAttributes.of({ "aria-labelledby": labelId(box) }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged && !quiet) box.dispatchEvent(new Event("input", { bubbles: true }));
        }),
      ],
    }),
  });
  box.after(view.dom);
  view.dom.dataset.editorFor = box.id;
  box.hidden = true;
  const native = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value");
  Object.defineProperty(box, "value", {
    configurable: true,
    get: () => view.state.doc.toString(),
    set: (text) => {
      quiet = true;
      try {
        view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: String(text) } });
      } finally {
        quiet = false;
      }
      native.set.call(box, text);
    },
  });
  Object.defineProperty(box, "selectionStart", {
    configurable: true,
    get: () => view.state.selection.main.from,
  });
  box.setSelectionRange = (from, to) => {
    view.dispatch({ selection: { anchor: from, head: to }, scrollIntoView: true });
  };
  box.focus = () => view.focus();
  for (const label of box.labels) label.addEventListener("click", () => view.focus());
  return view;
}

function labelId(box) {
  const label = box.labels[0];
  if (!label.id) label.id = `${box.id}-label`;
  return label.id;
}
