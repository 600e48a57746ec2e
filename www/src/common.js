// Shared by every page: fonts and styles, the wasm package, progress in localStorage and the
// matrix tables. Numbers are shown rounded; every cell keeps its exact value in data-value.
import '@fontsource/atkinson-hyperlegible/400.css';
import '@fontsource/atkinson-hyperlegible/700.css';
import '@fontsource/ibm-plex-mono/400.css';
import './styles.css';
import { interpolateCividis } from 'd3-scale-chromatic';
import { formatNumber } from './matrix.js';

export { formatNumber };
export const STORAGE_PREFIX = 'attention-lab:';
// Okabe–Ito: a palette that stays distinguishable with every common colour-vision deficiency.
export const HEAD_COLOURS = ['#E69F00', '#56B4E9', '#009E73', '#F0E442', '#CC79A7', '#0072B2', '#D55E00', '#999999'];

const ready = {};
/**
 * The wasm package, instantiated once (its JavaScript and .wasm load on the first call): the
 * attention-only build (www/pkg-attention: no Transformer, a third smaller), or with `{ model: true }`
 * the whole one (www/pkg), for the challenges graded in a model.
 */
export function wasm({ model = false } = {}) {
  const load = model ? () => import('../pkg/attention_lab.js') : () => import('../pkg-attention/attention_lab.js');
  ready[model] ??= load().then(async (lab) => { await lab.default(); return lab; });
  return ready[model];
}

// ---- progress ---------------------------------------------------------------

const key = (kind, id) => `${STORAGE_PREFIX}${kind}:${id}`;
export const progress = {
  solved: (id) => localStorage.getItem(key('solved', id)) === 'yes',
  attempted: (id) => localStorage.getItem(key('attempted', id)) === 'yes',
  markSolved: (id) => localStorage.setItem(key('solved', id), 'yes'),
  markAttempted: (id) => localStorage.setItem(key('attempted', id), 'yes'),
  /** How many times the tests of challenge `id` have been run (the reference answer is offered after a few). */
  runs: (id) => Number(localStorage.getItem(key('runs', id)) ?? 0) || 0,
  countRun: (id) => localStorage.setItem(key('runs', id), String(progress.runs(id) + 1)),
  code: (id) => localStorage.getItem(key('code', id)),
  saveCode: (id, code) => localStorage.setItem(key('code', id), code),
  clearCode: (id) => localStorage.removeItem(key('code', id)),
  /** Forgets solved and attempted marks and run counts (saved code stays). */
  reset() {
    for (const k of Object.keys(localStorage)) {
      if (['solved', 'attempted', 'runs'].some((kind) => k.startsWith(`${STORAGE_PREFIX}${kind}:`))) localStorage.removeItem(k);
    }
  },
};

// ---- numbers and matrices (the helpers and formatNumber: ./matrix.js) -------------------------

/** Black or white text, whichever contrasts more with the background colour `rgb(r, g, b)`/`#rrggbb`. */
export function textColourFor(background) {
  const m = background.match(/\d+/g);
  const [r, g, b] = background.startsWith('#')
    ? [1, 3, 5].map((i) => parseInt(background.slice(i, i + 2), 16))
    : m.slice(0, 3).map(Number);
  const lin = (c) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  const luminance = 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  return (luminance + 0.05) / 0.05 > 1.05 / (luminance + 0.05) ? '#000000' : '#ffffff';
}

/** The heatmap colour of a weight in [0, 1] (cividis: colour-blind safe, light = large). */
export const heatColour = (w) => interpolateCividis(Math.min(1, Math.max(0, w)));

export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attributes)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else if (k === 'style') Object.assign(node.style, v);
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : v);
  }
  for (const child of children.flat()) if (child !== undefined && child !== null && child !== false) node.append(child);
  return node;
}

/**
 * A matrix as an accessible table: a caption, row and column headers, one number per cell.
 * options: rowLabel(r), colLabel(c), cellStyle(r, c, x) → style object, cellClass(r, c, x),
 * cellTitle(r, c, x), heat (weights heatmap), rowSums (an extra Σ column), id.
 */
export function matrixTable(name, values, options = {}) {
  const { rowLabel = (r) => `${r}`, colLabel = (c) => `${c}`, caption = name } = options;
  const cols = values[0]?.length ?? 0;
  const head = el('tr', {}, el('th', { scope: 'col', class: 'corner' }, el('span', { class: 'visually-hidden', text: 'row' })),
    Array.from({ length: cols }, (_, c) => el('th', { scope: 'col', style: options.colStyle?.(c) }, colLabel(c))),
    options.rowSums ? el('th', { scope: 'col', title: 'row sum' }, 'Σ') : null);
  const body = values.map((row, r) => el('tr', {},
    el('th', { scope: 'row' }, rowLabel(r)),
    row.map((x, c) => {
      const style = { ...(options.cellStyle?.(r, c, x) ?? {}) };
      let cls = options.cellClass?.(r, c, x) ?? '';
      if (options.heat && typeof x === 'number' && Number.isFinite(x)) {
        style.background = heatColour(x);
        style.color = textColourFor(heatColour(x));
        cls += ' heat';
      }
      return el('td', { class: cls.trim() || null, style, 'data-value': String(x), title: options.cellTitle?.(r, c, x) }, formatNumber(x));
    }),
    options.rowSums ? el('td', { class: 'sum', 'data-value': String(row.reduce((a, b) => a + b, 0)) }, formatNumber(row.reduce((a, b) => a + b, 0))) : null));
  const table = el('table', { class: `matrix ${options.class ?? ''}`.trim(), id: options.id },
    el('caption', {}, caption, el('span', { class: 'shape' }, ` ${values.length}×${cols}`)),
    el('thead', {}, head), el('tbody', {}, body));
  return el('div', { class: 'matrix-wrap', role: 'region', 'aria-label': `${name}, ${values.length}×${cols}`, tabindex: '0' }, table);
}

/** Shows an error banner for a failure that must not pass silently. */
export function showFatal(message) {
  const main = document.getElementById('main');
  main.prepend(el('p', { class: 'error', role: 'alert' }, message));
}
