// The challenge page's CodeMirror setup: `codemirror`'s basicSetup less what the page does not use
// (autocompletion, the search panel, lint and code folding, which were about half of the page's
// JavaScript), and JavaScript highlighting and indentation without lang-javascript's completions.
// What stays: line numbers, undo history, bracket matching and closing, auto-indent, multiple selections.
import { lineNumbers, highlightActiveLineGutter, highlightSpecialChars, drawSelection, dropCursor, rectangularSelection, crosshairCursor, highlightActiveLine, keymap, EditorView } from '@codemirror/view';
import { EditorState } from '@codemirror/state';
import { indentOnInput, syntaxHighlighting, defaultHighlightStyle, bracketMatching, LanguageSupport } from '@codemirror/language';
import { history, defaultKeymap, historyKeymap } from '@codemirror/commands';
import { closeBrackets, closeBracketsKeymap } from '@codemirror/autocomplete';
import { javascriptLanguage } from '@codemirror/lang-javascript';

export { EditorView };

/** The editor's extensions, as basicSetup lists them, without autocompletion, search, lint and folding. */
export const editorSetup = [
  lineNumbers(),
  highlightActiveLineGutter(),
  highlightSpecialChars(),
  history(),
  drawSelection(),
  dropCursor(),
  EditorState.allowMultipleSelections.of(true),
  indentOnInput(),
  syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
  bracketMatching(),
  closeBrackets(),
  rectangularSelection(),
  crosshairCursor(),
  highlightActiveLine(),
  // the active line (the cursor's, and the line the diagnosis names) is marked by a bar at its left, not by a
  // tinted background: on the tint, the default highlight style's lighter token colours fell below WCAG AA
  // contrast (axe, on the line a failing run moves the cursor to)
  EditorView.theme({ '.cm-activeLine': { backgroundColor: 'transparent', boxShadow: 'inset 3px 0 0 #1d4ed8' } }),
  keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap]),
];

/** JavaScript: the parser, highlighting and indentation (no completions). */
export const javascript = () => new LanguageSupport(javascriptLanguage);
