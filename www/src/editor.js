// The challenge page's CodeMirror setup: `codemirror`'s basicSetup less what the page does not use
// (autocompletion, the search panel, lint and code folding, which were about half of the page's
// JavaScript), and JavaScript highlighting and indentation without lang-javascript's completions.
// What stays: line numbers, undo history, bracket matching and closing, auto-indent, multiple selections.
import { lineNumbers, highlightActiveLineGutter, highlightSpecialChars, drawSelection, dropCursor, rectangularSelection, crosshairCursor, highlightActiveLine, keymap, EditorView } from '@codemirror/view';
import { EditorState } from '@codemirror/state';
import { indentOnInput, syntaxHighlighting, defaultHighlightStyle, HighlightStyle, bracketMatching, LanguageSupport } from '@codemirror/language';
import { history, defaultKeymap, historyKeymap } from '@codemirror/commands';
import { closeBrackets, closeBracketsKeymap } from '@codemirror/autocomplete';
import { javascriptLanguage } from '@codemirror/lang-javascript';

export { EditorView };

// The default highlight style with its two colours that fall below WCAG AA contrast on white darkened:
// template strings and regular expressions (#e40, 3.8:1) and invalid tokens (#f00, 4.0:1). axe found the
// first once a failing run scrolled the editor to a line with a template string.
const DARKER = { '#e40': '#b33000', '#f00': '#c00' };
const accessibleHighlightStyle = HighlightStyle.define(
  defaultHighlightStyle.specs.map((spec) => (spec.color in DARKER ? { ...spec, color: DARKER[spec.color] } : spec)),
);

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
  syntaxHighlighting(accessibleHighlightStyle, { fallback: true }),
  bracketMatching(),
  closeBrackets(),
  rectangularSelection(),
  crosshairCursor(),
  highlightActiveLine(),
  // the active line (the cursor's, and the line the diagnosis names) is marked by a bar at its left, not by a
  // tinted background, so that token colours keep their contrast against plain white
  EditorView.theme({ '.cm-activeLine': { backgroundColor: 'transparent', boxShadow: 'inset 3px 0 0 #1d4ed8' } }),
  keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap]),
];

/** JavaScript: the parser, highlighting and indentation (no completions). */
export const javascript = () => new LanguageSupport(javascriptLanguage);
