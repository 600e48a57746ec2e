// The walkthrough: editable Q, K, V → traceMultiHeadAttention → one step at a time. With
// learned projections on: editable X and seeded weights → a MultiHeadAttention layer's trace,
// whose projection steps (X·W_Q, + b_Q, …) come first.
// Deep links (the challenge page's diagnosis makes them): ?Q=[[…]]&K=…&V=…&numberOfHeads=2
// &headDimensions=1&causal=1&W_O=[[…]]&step=scale&head=1 opens that step with those inputs.
// Four modern modes (`mode=decoding|grouped|rope|window`) step through traceGroupedQueryAttention
// instead: a KV cache filled token by token, grouped K/V heads, rotary positions, a sliding window.
import { el, matrixTable, formatNumber, textColourFor, HEAD_COLOURS, showFatal } from './common.js';
import { identity } from './matrix.js';
// Every number on this page comes from the package: its JavaScript loads with the page and the .wasm
// right after (common.js's wasm() imports it on first use, one round trip later, for pages that may
// never need it).
import initPackage, * as lab_ from '../pkg-attention/attention_lab.js'; // the build without the model (Makefile `build`)
import { interpolatePuOr } from 'd3-scale-chromatic';
import { seededRandom } from './cases.js';

// The default example: four tokens, two heads of width 2 that do different things. Head 0's query at
// t matches the key of t − 1 (a previous-token head; t0 matches itself); every query of head 1 matches
// key t0 (a first-token head). So the two heatmaps differ at a glance, and V's rows are easy to follow.
const DEFAULT_Q = [[2, 0, 2, 0], [2, 0, 2, 0], [0, 2, 2, 0], [-2, 0, 2, 0]];
const DEFAULT_K = [[2, 0, 2, 0], [0, 2, 0, 1], [-2, 0, 0, -1], [0, -2, 0, 0.5]];
const DEFAULT_V = [[1, 0, 1, 0], [0, 1, 0, 2], [2, 0, 0, 1], [0, 2, 3, 0]];
const DEFAULT_NOTE = 'In this example head 0\'s query at each token matches the key of the token before it (t0 matches itself), and every query of head 1 matches key t0: step to each head\'s softmax weights to see the two patterns.';
const MAX_T = 8;
const MAX_C = 8;
// a link may be larger than the +row/+column buttons go: one head of the lab's width-64, 4-head model
// on 25 tokens (the beginning token and a 12-token segment twice)
const MAX_LINK_T = 25;
const MAX_LINK_C = 16;
const MAX_MODEL_LINK_C = 128; // a head of a real model from model.html (from=model): GPT-2's and SmolLM2's are 64 wide
const RANDOM_RANGE = 3; // random entries in [−3, 3], one decimal
const MODES = {
  default: 'Every head has its own slice of Q, K and V; every query sees every key (or the earlier ones, with the causal mask).',
  decoding: 'A language model writes one token at a time. Each new token appends its key and value rows to the KV cache and compares only its own query row with everything cached; nothing earlier is recomputed.',
  grouped: 'Grouped-query attention (Llama, Mistral): numberOfHeads query heads share numberOfKVHeads key/value heads, so K and V are narrower and the KV cache smaller. Each query head is coloured by the K/V head it reads.',
  rope: 'Rotary position embedding (RoPE): each head\'s query and key rows are rotated by an angle that grows with their position, so the score of q at position m and k at position n depends only on the distance m − n.',
  window: 'Sliding-window attention (Mistral): each query sees only the keys at most window − 1 positions away, so the weights form a band and the cost grows with T·window instead of T².',
};
// Each mode's starting inputs (loaded when the mode is picked, unless the learner has edited the
// inputs): enough tokens to decode, K/V heads to share, positions to rotate, a band to see.
const EXAMPLES = {
  default: { Q: DEFAULT_Q, K: DEFAULT_K, V: DEFAULT_V, numberOfHeads: 2 },
  decoding: { Q: [[1, 0], [0, 1], [1, 1], [-1, 0.5]], K: [[1, 0], [0, 1], [1, -1], [0.5, 0.5]], V: [[1, 0], [0, 1], [2, 0], [0, 2]], numberOfHeads: 1 },
  grouped: {
    Q: [[1, 0, 0.5, -1], [0, 1, 1, 0], [1, 1, -0.5, 0.5]], K: [[1, 0, 0.5, 1], [0, 1, 1, 0], [1, -1, 0, 1]], V: [[1, 2, 3, 4], [5, 6, 7, 8], [0, 1, 0, 1]],
    numberOfHeads: 4, numberOfKVHeads: 2,
  },
  rope: { Q: [[1, 0], [0, 1], [1, 1], [0.5, -1]], K: [[1, 0.5], [0, 1], [-1, 1], [1, 0]], V: [[1, 0], [0, 1], [1, 1], [2, 0]], numberOfHeads: 1 },
  window: {
    Q: [[2, 0], [1.6, 1.2], [0.6, 2], [-0.6, 2], [-1.6, 1.2], [-2, 0]], K: [[2, 0], [1.6, 1.2], [0.6, 2], [-0.6, 2], [-1.6, 1.2], [-2, 0]],
    V: [[1, 0], [0, 1], [1, 1], [2, 0], [0, 2], [1, -1]], numberOfHeads: 1, window: 3,
  },
};
const DISTANCE_POSITIONS = 8; // the score-against-distance table: positions offset … offset + 7

const state = {
  Q: structuredClone(DEFAULT_Q),
  K: structuredClone(DEFAULT_K),
  V: structuredClone(DEFAULT_V),
  X: structuredClone(DEFAULT_Q),
  numberOfHeads: 2,
  causal: false,
  projections: false,
  seed: 0,
  bias: false,
  weights: null, // the layer's getWeights() when projections are on
  W_O: null, // W_O from a link (null: the identity), without projections
  step: 0,
  trace: null,
  mode: 'default',
  numberOfKVHeads: 1,
  ropeOffset: 0,
  ropeBase: 10000,
  window: 2,
  decode: null, // decoding: one trace per token (query row t against the cache K[0…t], V[0…t])
  distance: null, // RoPE: the scores of one q and one k at every pair of positions
  example: 'default', // the mode whose example inputs are shown; null once the learner edits them
};
const MATRICES = ['Q', 'K', 'V', 'X'];
const PROJECTIONS = [['Q', 'query'], ['K', 'key'], ['V', 'value']]; // the projection and the layer's name for its input
const $ = (id) => document.getElementById(id);
const T = () => state.Q.length;
const C = () => state.Q[0].length;
const headDimensions = () => C() / state.numberOfHeads;
const divisors = (n) => Array.from({ length: n }, (_, i) => i + 1).filter((d) => n % d === 0);
const headOf = (column) => Math.floor(column / headDimensions());
const headStyle = (head) => ({ background: `${HEAD_COLOURS[head % HEAD_COLOURS.length]}40`, boxShadow: `inset 0 -4px 0 ${HEAD_COLOURS[head % HEAD_COLOURS.length]}` });
const modern = () => state.mode !== 'default';
/** The key/value heads: numberOfKVHeads in the grouped mode, one per query head otherwise. */
const kvHeads = () => (state.mode === 'grouped' ? state.numberOfKVHeads : state.numberOfHeads);
/** The K/V head query head `head` reads: ⌊head / (numberOfHeads / numberOfKVHeads)⌋. */
const kvHeadOf = (head) => Math.floor(head / (state.numberOfHeads / kvHeads()));
/** The colour of query head `head`: in the grouped mode, the colour of the K/V head it reads. */
const queryStyle = (head) => headStyle(state.mode === 'grouped' ? kvHeadOf(head) : head);
/** The style of column c of Q (query heads) or of K and V (K/V heads). */
const columnStyle = (name) => (c) => (name === 'K' || name === 'V' ? headStyle(headOf(c)) : queryStyle(headOf(c)));
/** K and V as the grouped mode uses them: their first numberOfKVHeads·headDimensions columns. */
const inputOf = (name) => ((name === 'K' || name === 'V') && state.mode === 'grouped' ? state[name].map((row) => row.slice(0, kvHeads() * headDimensions())) : state[name]);
const causal = () => state.mode === 'decoding' || state.causal;
const ropeReady = () => state.mode !== 'rope' || headDimensions() % 2 === 0;

let lab;

// ---- inputs -------------------------------------------------------------------

function renderEditors() {
  const editors = $('editors');
  // X's columns are features, not heads: the heads read columns of X·W, so X is not coloured.
  const grouped = state.mode === 'grouped';
  editors.replaceChildren(...(state.projections ? ['X'] : ['Q', 'K', 'V']).map((name) => {
    const byHead = name !== 'X';
    const kv = grouped && name !== 'Q'; // the grouped mode's K and V: columns of K/V heads
    const style = byHead ? columnStyle(name) : () => undefined;
    const tag = (c) => (!grouped ? `head ${headOf(c)}` : kv ? `K/V head ${headOf(c)}` : `query head ${headOf(c)}, reads K/V head ${kvHeadOf(headOf(c))}`);
    const shown = inputOf(name);
    const rows = shown.map((row, r) => el('tr', {},
      el('th', { scope: 'row' }, `t${r}`),
      row.map((x, c) => el('td', { style: style(c) }, el('input', {
        type: 'text', inputmode: 'decimal', value: String(x), size: 5, 'data-matrix': name, 'data-row': r, 'data-col': c,
        'aria-label': `${name} row ${r} column ${c}${byHead ? ` (${tag(c)})` : ''}`,
        oninput: (e) => editCell(e.target, name, r, c),
      })))));
    const headTag = (c) => (!grouped ? `h${headOf(c)}` : kv ? `kv${headOf(c)}` : `h${headOf(c)}→kv${kvHeadOf(headOf(c))}`);
    const head = el('tr', {}, el('th', { scope: 'col' }, el('span', { class: 'visually-hidden', text: 'token' })),
      shown[0].map((_, c) => el('th', { scope: 'col', style: style(c) }, `c${c}`, byHead ? el('span', { class: 'head-tag' }, headTag(c)) : null)));
    return el('div', { class: 'matrix-wrap' }, el('table', { class: 'matrix editor-table', id: `editor-${name}` },
      el('caption', {}, name, el('span', { class: 'shape' }, ` ${T()}×${shown[0].length}`)), el('thead', {}, head), el('tbody', {}, rows)));
  }));
  renderPickers();
  $('add-row').disabled = T() >= MAX_T;
  $('remove-row').disabled = T() <= 1;
  $('add-column').disabled = C() >= MAX_C;
  $('remove-column').disabled = C() <= 1;
}

function editCell(input, name, r, c) {
  const text = input.value.trim().replace('−', '-').replace(',', '.');
  const x = Number(text);
  const valid = text !== '' && Number.isFinite(x);
  input.setAttribute('aria-invalid', String(!valid));
  if (!valid) {
    $('input-status').textContent = `${name}[${r}][${c}]: "${input.value}" is not a number; the last valid value is used.`;
    return;
  }
  $('input-status').textContent = '';
  state[name][r][c] = x;
  state.example = null;
  recompute();
}

function renderPickers() {
  // RoPE rotates pairs of columns: only splits with an even headDimensions
  const even = divisors(C()).filter((h) => state.mode !== 'rope' || (C() / h) % 2 === 0);
  const options = even.length ? even : divisors(C()); // an odd C: recompute says why nothing is shown
  const fill = (select, values, selected) => select.replaceChildren(...values.map((v) => el('option', { value: v, selected: v === selected }, String(v))));
  fill($('number-of-heads'), options, state.numberOfHeads);
  fill($('head-dimensions'), options.map((h) => C() / h).sort((a, b) => a - b), headDimensions());
  fill($('number-of-kv-heads'), divisors(state.numberOfHeads), state.numberOfKVHeads);
  $('window').max = String(T());
  $('window').value = String(state.window);
  $('window-value').textContent = String(state.window);
}

/** Keeps numberOfHeads, numberOfKVHeads and the window valid for the current size and mode. */
function fitSettings() {
  if (C() % state.numberOfHeads !== 0) state.numberOfHeads = 1;
  if (state.mode === 'rope' && headDimensions() % 2 !== 0) {
    // the most heads that leave an even headDimensions (none when C is odd)
    const even = divisors(C()).filter((h) => (C() / h) % 2 === 0);
    if (even.length) state.numberOfHeads = even[even.length - 1];
  }
  if (state.numberOfHeads % state.numberOfKVHeads !== 0) state.numberOfKVHeads = 1;
  state.window = Math.max(1, Math.min(state.window, T()));
}

/** A random entry, as the Random button draws them: uniform in [−3, 3], one decimal. */
const randomEntry = () => Math.round((Math.random() * 2 - 1) * RANDOM_RANGE * 10) / 10;

function resize(change) {
  for (const name of MATRICES) {
    const M = state[name];
    // a new row or column gets random values: zeros would make a new head all zeros and its weights all 1/T
    if (change === 'add-row') M.push(M[0].map(randomEntry));
    if (change === 'remove-row') M.pop();
    if (change === 'add-column') M.forEach((row) => row.push(randomEntry()));
    if (change === 'remove-column') M.forEach((row) => row.pop());
  }
  fitSettings();
  state.W_O = null;
  state.example = null;
  renderEditors();
  recompute();
}

function randomize() {
  for (const name of MATRICES) state[name] = state[name].map((row) => row.map(randomEntry));
  state.example = null;
  renderEditors();
  recompute();
}

// ---- the trace and its steps ----------------------------------------------------

/** Biases for the layer, drawn from the seed (uniform in [−1, 1), one decimal): visible, unlike its zero initial biases. */
function seededBiases(c, seed) {
  const next = seededRandom(seed);
  const vector = () => Array.from({ length: c }, () => Math.round((next() * 2 - 1) * 10) / 10);
  return { b_Q: vector(), b_K: vector(), b_V: vector(), b_O: vector() };
}

/** The options of traceGroupedQueryAttention for the current mode (without rope: see `ropeOption`). */
function modernOptions() {
  const options = { numberOfHeads: state.numberOfHeads, numberOfKVHeads: kvHeads(), headDimensions: headDimensions(), causal: causal() };
  if (state.mode === 'window') options.window = state.window;
  if (state.mode === 'rope') options.rope = { base: state.ropeBase, offset: state.ropeOffset };
  return options;
}

/** The options as code, for the output's caption: `{ numberOfHeads: 2, … }`. */
const optionsText = (options) => `{ ${Object.entries(options).map(([k, v]) => `${k}: ${typeof v === 'object' ? optionsText(v) : v}`).join(', ')} }`;

/**
 * A modern mode's traces: the whole pass, and for decoding one trace per token (its query row
 * against the cache rows 0 … t: with T_q = 1 < T_k the queries are the last positions, so that one
 * row is what a KV-cached forward computes), and for RoPE the distance table.
 */
function computeModern() {
  const options = modernOptions();
  const Q = inputOf('Q');
  const K = inputOf('K');
  const V = inputOf('V');
  const trace = lab.traceGroupedQueryAttention(Q, K, V, options);
  state.decode = state.mode !== 'decoding' ? null
    : Q.map((_, t) => lab.traceGroupedQueryAttention([Q[t]], K.slice(0, t + 1), V.slice(0, t + 1), options));
  state.distance = state.mode === 'rope' ? distanceScores() : null;
  return trace;
}

/**
 * RoPE's score against distance: q (row 0 of Q_0) at every position m and k (row 0 of K_0) at every
 * position n, m and n in offset … offset + 7. The package computes it: Q' repeats q and K' repeats k,
 * so traceGroupedQueryAttention's scores_0[m][n] is rotate(q, m)·rotate(k, n). The rows of the
 * rotations come from rotaryEmbedding.
 */
function distanceScores() {
  const d = headDimensions();
  const q = inputOf('Q')[0].slice(0, d);
  const k = inputOf('K')[0].slice(0, d);
  const repeat = (row) => Array.from({ length: DISTANCE_POSITIONS }, () => row.slice());
  const rope = { base: state.ropeBase, offset: state.ropeOffset };
  const trace = lab.traceGroupedQueryAttention(repeat(q), repeat(k), repeat(k.map(() => 0)), { numberOfHeads: 1, numberOfKVHeads: 1, headDimensions: d, rope });
  const options = { numberOfHeads: 1, headDimensions: d, base: state.ropeBase, offset: state.ropeOffset };
  return {
    q, k,
    scores: trace.steps.find((s) => s.name === 'scores_0').values,
    qRotated: lab.rotaryEmbedding(repeat(q), options),
    kRotated: lab.rotaryEmbedding(repeat(k), options),
    unrotated: lab.traceGroupedQueryAttention([q], [k], [k], { numberOfHeads: 1, numberOfKVHeads: 1, headDimensions: d }).steps.find((s) => s.name === 'scores_0').values[0][0],
  };
}

/** The trace to show: the course function on Q, K, V, or the layer (seeded weights) on X. */
function computeTrace() {
  if (modern()) {
    state.weights = null;
    return computeModern();
  }
  if (!state.projections) {
    state.weights = null;
    return lab.traceMultiHeadAttention(state.Q, state.K, state.V, {
      numberOfHeads: state.numberOfHeads, headDimensions: headDimensions(), W_O: state.W_O ?? identity(C()), causal: state.causal,
    });
  }
  const layer = new lab.MultiHeadAttention({ embedDim: C(), numHeads: state.numberOfHeads, bias: state.bias, seed: state.seed });
  try {
    if (state.bias) layer.setWeights(seededBiases(C(), state.seed));
    state.weights = layer.getWeights();
    return layer.trace(state.X, null, null, { causal: state.causal });
  } finally {
    layer.free();
  }
}

function recompute() {
  if (!ropeReady()) {
    const message = `RoPE rotates pairs of columns, so headDimensions must be even; C = ${C()} has no even split. Add or remove a column.`;
    $('input-status').textContent = message;
    // nothing from the last valid inputs stays on screen
    state.trace = null;
    $('step-list').replaceChildren();
    $('step-counter').textContent = '';
    $('prev-step').disabled = true;
    $('next-step').disabled = true;
    $('step-view').replaceChildren(el('p', { class: 'status fail' }, message));
    $('output').replaceChildren();
    $('output-formula').textContent = '';
    return;
  }
  try {
    state.trace = computeTrace();
  } catch (error) {
    $('input-status').textContent = `${error.name}: ${error.message}`;
    return;
  }
  if ($('input-status').textContent.startsWith('RoPE rotates pairs')) $('input-status').textContent = '';
  const exampleNote = state.example === 'default' && !state.projections ? DEFAULT_NOTE : '';
  $('example-note').textContent = exampleNote;
  $('example-note').hidden = !exampleNote;
  const steps = stepList();
  state.step = Math.min(state.step, steps.length - 1);
  renderSteps();
  if (state.mode === 'grouped') renderKvMap();
  if (modern()) {
    const name = state.mode === 'rope' ? 'traceGroupedQueryAttention' : 'groupedQueryAttention';
    $('output-formula').textContent = `${name}(Q, K, V, ${optionsText(modernOptions())})${state.mode === 'rope' ? '.output' : ''} =`;
    $('output').replaceChildren(matrixTable('output', state.trace.output, { id: 'output-matrix', rowLabel: (r) => `t${r}`, colStyle: (c) => queryStyle(headOf(c)) }));
    return;
  }
  $('output-formula').textContent = state.projections
    ? `new MultiHeadAttention({ embedDim: ${C()}, numHeads: ${state.numberOfHeads}, bias: ${state.bias}, seed: ${state.seed} }).forward(X).output =`
    : 'multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions }) =';
  $('output').replaceChildren(matrixTable('output', state.trace.output, { id: 'output-matrix', rowLabel: (r) => `t${r}`, colStyle: state.projections ? undefined : (c) => headStyle(headOf(c)) }));
}

const stepByName = (name) => state.trace.steps.find((s) => s.name === name);

/** The pages of the walkthrough: [title, render(), key, head]; key and head name a page in a link. */
function stepList() {
  if (modern()) return modernStepList();
  const h = state.numberOfHeads;
  const pages = [];
  if (state.projections) {
    for (const [name] of PROJECTIONS) pages.push([`Project: ${name} = X·W_${name}${state.bias ? ` + b_${name}` : ''}`, () => renderProjection(name), `project-${name}`]);
  }
  pages.push(['Slice Q, K and V into heads', renderSlicing, 'slice']);
  for (let head = 0; head < h; head++) {
    pages.push([`Head ${head}: scores Q_${head}·K_${head}ᵀ`, () => renderScores(head), 'scores', head]);
    pages.push([`Head ${head}: scale by 1/√headDimensions`, () => renderScaled(head), 'scale', head]);
    if (maskedStep(head)) pages.push([`Head ${head}: mask the later keys`, () => renderMask(head), 'mask', head]);
    pages.push([`Head ${head}: softmax weights`, () => renderWeights(head), 'weights', head]);
    pages.push([`Head ${head}: weighted sum with V_${head}`, () => renderContext(head), 'context', head]);
  }
  pages.push(['Concatenate the heads side by side', renderConcat, 'concat']);
  pages.push([state.projections && state.bias ? 'Multiply by W_O, add b_O' : 'Multiply by W_O', renderOutput, 'output']);
  return pages;
}

/** Which query heads read which K/V head, from the trace's K slices (their kvHead), as coloured chips. */
function renderKvMap() {
  const groups = Array.from({ length: kvHeads() }, (_, kv) => Array.from({ length: state.numberOfHeads }, (__, i) => i).filter((i) => stepByName(`K_${i}`).kvHead === kv));
  $('kv-map').replaceChildren(...groups.map((heads, kv) => el('span', { class: 'kv-chip', style: headStyle(kv) }, `${heads.map((i) => `h${i}`).join(' ')} → kv${kv}`)));
}

/** The pages of a modern mode, each drawn from traceGroupedQueryAttention's steps. */
function modernStepList() {
  if (state.mode === 'decoding') {
    const pages = state.decode.map((_, t) => [`Token ${t}: add K and V row ${t} to the cache, attend with Q row ${t}`, () => renderDecode(t), 'token', t]);
    pages.push(['All tokens at once: the same rows as one causal pass', renderDecodeCheck, 'check']);
    return pages;
  }
  const pages = [['Slice Q, K and V into heads', renderSlicing, 'slice']];
  for (let head = 0; head < state.numberOfHeads; head++) {
    const scores = stepByName(`scores_${head}`);
    const [q, k] = scores.inputs.map(label);
    const kv = state.mode === 'grouped' ? ` (K/V head ${stepByName(`K_${head}`).kvHead})` : '';
    if (state.mode === 'rope') pages.push([`Head ${head}: rotate Q_${head} and K_${head} by position`, () => renderRotate(head), 'rotate', head]);
    pages.push([`Head ${head}: scores ${q}·${k}${kv}`, () => renderScores(head), 'scores', head]);
    pages.push([`Head ${head}: scale by 1/√headDimensions`, () => renderScaled(head), 'scale', head]);
    if (maskedStep(head)) pages.push([`Head ${head}: mask the ${state.mode === 'window' ? 'keys outside the window' : 'later keys'}`, () => renderMask(head), 'mask', head]);
    pages.push([`Head ${head}: softmax weights${state.mode === 'window' ? ` in a window of ${state.window}` : ''}`, () => renderWeights(head), 'weights', head]);
    pages.push([`Head ${head}: weighted sum with V_${head}${kv}`, () => renderContext(head), 'context', head]);
  }
  pages.push(['Concatenate the heads side by side', renderConcat, 'concat']);
  pages.push(['Multiply by W_O', renderOutput, 'output']);
  if (state.mode === 'rope') pages.push(['Score against distance m − n', renderDistance, 'distance']);
  return pages;
}

/** A trace step's name as a label: K_0^T → K_0ᵀ. */
const label = (name) => name.replace('^T', 'ᵀ');

function renderSteps() {
  const steps = stepList();
  $('step-list').replaceChildren(...steps.map(([title], i) => el('li', {},
    el('button', { type: 'button', class: 'link', 'aria-current': i === state.step ? 'step' : null, onclick: () => goTo(i) }, title))));
  $('step-counter').textContent = `Step ${state.step + 1} of ${steps.length}: ${steps[state.step][0]}`;
  $('prev-step').disabled = state.step === 0;
  $('next-step').disabled = state.step === steps.length - 1;
  const view = $('step-view');
  view.dataset.step = String(state.step);
  view.dataset.mode = state.mode;
  view.replaceChildren(el('h3', {}, steps[state.step][0]), ...steps[state.step][1]());
}

function goTo(i) {
  if (!state.trace) return;
  const count = stepList().length;
  state.step = Math.max(0, Math.min(count - 1, i));
  renderSteps();
}

const equation = (...parts) => el('div', { class: 'equation' }, parts);
const op = (text) => el('span', { class: 'op', 'aria-hidden': 'true' }, text);
const tokenLabel = (r) => `t${r}`;
const headCols = (head) => () => queryStyle(head);
/** The colour of the K/V slices query head `head` reads. */
const kvCols = (head) => () => headStyle(kvHeadOf(head));
const byHead = (c) => headStyle(headOf(c));
/** Q, K or V as the heads receive it: the input itself, or with projections the trace's projection. */
const headInput = (name) => (state.projections ? stepByName(name).values : state[name]);

function renderProjection(name) {
  const [, input] = PROJECTIONS.find(([n]) => n === name);
  const w = `W_${name}`;
  // the trace's MatMul step: "query·W_Q" then an Add "Q" with biases, or the MatMul "Q" itself without
  const product = stepByName(state.bias ? `${input}·${w}` : name);
  const productName = state.bias ? `X·${w}` : name;
  const d = headDimensions();
  const note = el('p', {}, `Row t of ${name} is row t of X times ${w}. Column j of ${w} decides what goes into column j of ${name}: `
    + `a weighted mix of all ${C()} features of X. The colours mark which head will read each column, so every head reads its own `
    + `${d} learned combination${d === 1 ? '' : 's'} of the features instead of a fixed slice of X. ${w} is ${C()}×${C()}, stored [in, out]: `
    + `row f belongs to feature f of X, column c to column c of ${name}. Seed ${state.seed}.`);
  const column = (c) => `c${c}`;
  const feature = (f) => `f${f}`;
  const headed = { colLabel: column, colStyle: byHead, cellStyle: (r, c) => byHead(c) };
  const parts = [note, equation(
    matrixTable('X', state.X, { rowLabel: tokenLabel, colLabel: feature }), op('·'),
    matrixTable(w, state.weights[w], { id: `weights-${w}`, rowLabel: feature, ...headed }), op('='),
    matrixTable(productName, product.values, { id: `product-${name}`, rowLabel: tokenLabel, ...headed }))];
  if (state.bias) {
    const b = `b_${name}`;
    parts.push(el('p', {}, `Then the bias ${b} is added to every row (the same ${C()} numbers for every token).`), equation(
      matrixTable(productName, product.values, { rowLabel: tokenLabel, ...headed }), op('+'),
      matrixTable(b, [state.weights[b]], { id: `bias-${b}`, rowLabel: () => 'all', ...headed }), op('='),
      matrixTable(name, stepByName(name).values, { id: `projected-${name}`, rowLabel: tokenLabel, ...headed })));
  }
  return parts;
}

function renderSlicing() {
  const d = headDimensions();
  const h = state.numberOfHeads;
  const grouped = state.mode === 'grouped';
  const note = grouped
    ? el('p', {}, `Q has C = ${C()} columns: numberOfHeads = ${h} query heads of headDimensions = ${d}. K and V have only numberOfKVHeads · headDimensions = ${kvHeads()} · ${d} = ${kvHeads() * d} columns: ${kvHeads()} K/V head${kvHeads() === 1 ? '' : 's'}. `
      + `Query head i reads K/V head ⌊i / (numberOfHeads / numberOfKVHeads)⌋ = ⌊i / ${h / kvHeads()}⌋, so ${h / kvHeads() === 1 ? 'each query head has its own' : `every ${h / kvHeads()} consecutive query heads share one`}: `
      + `${Array.from({ length: kvHeads() }, (_, kv) => `${Array.from({ length: h }, (__, i) => i).filter((i) => stepByName(`K_${i}`).kvHead === kv).map((i) => `h${i}`).join(', ')} → kv${kv}`).join('; ')}. `
      + 'Each colour is one K/V head; a query head wears the colour of the K/V head it reads. '
      + `A KV cache stores ${kvHeads() * d} numbers of K and ${kvHeads() * d} of V per token instead of C = ${C()} each: ${kvHeads() === h ? 'no saving with one K/V head per query head' : `${h / kvHeads()} times less`}.`)
    : el('p', {}, `C = ${C()} columns split into numberOfHeads = ${h} heads of headDimensions = ${d} columns. Head i takes columns i·${d} to (i+1)·${d} − 1 of every row; each colour is one head.`
      + (state.projections ? ' Q, K and V are the projections of X from the previous steps.' : ''));
  const whole = el('div', { class: 'matrix-row' }, ['Q', 'K', 'V'].map((name) => matrixTable(name, modern() ? inputOf(name) : headInput(name), { rowLabel: tokenLabel, colStyle: columnStyle(name), cellStyle: (r, c) => columnStyle(name)(c) })));
  const slices = Array.from({ length: h }, (_, head) => {
    const colour = HEAD_COLOURS[(grouped ? kvHeadOf(head) : head) % HEAD_COLOURS.length];
    const k = stepByName(`K_${head}`);
    const first = Array.from({ length: h }, (_, i) => i).find((i) => stepByName(`K_${i}`).kvHead === k.kvHead);
    const title = grouped
      ? `Head ${head}: Q columns ${stepByName(`Q_${head}`).columns.join(' to ')} (exclusive); K/V head ${k.kvHead}: K and V columns ${k.columns.join(' to ')} (exclusive)${first < head ? `, the same K and V as head ${first}` : ''}`
      : `Head ${head}: columns ${stepByName(`Q_${head}`).columns.join(' to ')} (exclusive)`;
    return el('div', { class: 'head-group', style: { borderColor: colour }, 'data-head': head, 'data-kv-head': k.kvHead ?? head },
      el('h4', {}, title),
      el('div', { class: 'matrix-row' }, ['Q', 'K', 'V'].map((n) => matrixTable(`${n}_${head}`, stepByName(`${n}_${head}`).values, { id: modern() ? `slice-${n}_${head}` : undefined, rowLabel: tokenLabel, cellStyle: n === 'Q' ? headCols(head) : kvCols(head) }))));
  });
  return [note, whole, ...slices];
}

function renderScores(head) {
  const scores = stepByName(`scores_${head}`);
  const [q, k] = scores.inputs; // Q_0 and K_0^T, or with RoPE Q_0_rot and K_0_rot^T
  const note = state.mode === 'rope'
    ? `scores_${head}[i][j] is the dot product of the rotated query row i with the rotated key row j: the rotation by position is the only change from plain attention.`
    : `scores_${head}[i][j] is the dot product of query row i with key row j (over head ${head}'s ${headDimensions()} column${headDimensions() === 1 ? '' : 's'}).`
      + (state.mode === 'grouped' ? ` The keys are K/V head ${stepByName(`K_${head}`).kvHead}'s, shared with the other query heads of its group.` : '');
  return [
    el('p', {}, note),
    equation(matrixTable(label(q), stepByName(q).values, { id: modern() ? `trace-${head}-q` : undefined, rowLabel: tokenLabel, cellStyle: headCols(head) }), op('·'),
      matrixTable(label(k), stepByName(k).values, { id: modern() ? `trace-${head}-kT` : undefined, colLabel: (c) => `k${c}`, cellStyle: kvCols(head) }), op('='),
      matrixTable(`scores_${head}`, scores.values, { id: modern() ? `trace-scores_${head}` : undefined, rowLabel: (r) => `q${r}`, colLabel: (c) => `k${c}` })),
  ];
}

function renderScaled(head) {
  const step = stepByName(`scaled_${head}`);
  return [
    el('p', {}, `Multiply by 1/√headDimensions = 1/√${headDimensions()} = ${formatNumber(step.scalar)}, so that the scores stay about the same size whatever the head width.`),
    equation(matrixTable(`scores_${head}`, stepByName(`scores_${head}`).values, { rowLabel: (r) => `q${r}`, colLabel: (c) => `k${c}` }), op(`× ${formatNumber(step.scalar)} =`),
      matrixTable(`scaled_${head}`, step.values, { rowLabel: (r) => `q${r}`, colLabel: (c) => `k${c}` })),
  ];
}

/**
 * The softmax step of head `head` when it masks anything (its `allowed`: the causal rule, the window),
 * else null. The trace records the mask on that step (StableSoftmax of scaled_h with `allowed`), so the
 * mask page shows scaled_h with −∞ where `allowed` is false: what the softmax exponentiates.
 */
function maskedStep(head) {
  const step = stepByName(`weights_${head}`);
  return step?.allowed && step.allowed.some((row) => row.some((ok) => !ok)) ? step : null;
}

function renderMask(head) {
  const { allowed } = maskedStep(head);
  const scaled = stepByName(`scaled_${head}`);
  const masked = scaled.values.map((row, r) => row.map((x, c) => (allowed[r][c] ? x : -Infinity)));
  const outside = (r, c) => !allowed[r][c];
  const rule = state.mode === 'window'
    ? `query i keeps key j only when ${causal() ? `i − ${state.window} < j ≤ i` : `|i − j| < ${state.window}`} (a window of ${state.window})`
    : 'query i keeps key j only when j ≤ i (causal: no token sees a later one)';
  return [
    el('p', {}, `Before the softmax, the mask replaces every score the query may not see with −∞: ${rule}. `
      + 'e^−∞ = 0, so those keys get weight exactly 0 and the remaining weights of each row still add up to 1. '
      + `The trace keeps this mask with the softmax step (weights_${head}'s allowed keys).`),
    equation(matrixTable(`scaled_${head}`, scaled.values, { rowLabel: (r) => `q${r}`, colLabel: (c) => `k${c}` }), op('mask →'),
      matrixTable(`scaled_${head}, masked`, masked, {
        id: `masked-${head}`, rowLabel: (r) => `q${r}`, colLabel: (c) => `k${c}`,
        cellClass: (r, c) => (outside(r, c) ? `masked${modern() ? ' outside' : ''}` : ''),
        cellTitle: (r, c) => (outside(r, c) ? `query ${r} may not see key ${c}: −∞` : undefined),
      })),
  ];
}

function renderWeights(head) {
  const step = stepByName(`weights_${head}`);
  const masked = (r, c) => step.allowed && !step.allowed[r][c];
  return [
    el('p', {}, 'Softmax along each row: every query row turns into weights over the keys that are positive and add up to 1 (the Σ column). Lighter cells weigh more.'
      + (state.mode === 'window'
        ? ` The window is ${state.window}: query i sees key j only when ${causal() ? `i − ${state.window} < j ≤ i (causal: the key itself and the ${state.window - 1} before it)` : `|i − j| < ${state.window} (up to ${state.window - 1} keys on each side)`}. Every other key gets weight 0 and is marked ⊘, so the weights form a band along the diagonal.`
        : causal() ? ' The causal mask gives every later key (above the diagonal) weight 0; those cells are marked ⊘.' : '')),
    matrixTable(`weights_${head} (query rows × key columns)`, step.values, {
      id: `heatmap-${head}`, class: 'heatmap', heat: true, rowSums: true,
      rowLabel: (r) => `query ${r}`, colLabel: (c) => `key ${c}`,
      cellClass: (r, c) => (masked(r, c) ? `masked${modern() ? ' outside' : ''}` : ''),
      cellTitle: (r, c, x) => `query ${r} → key ${c}: ${formatNumber(x)}${masked(r, c) ? ' (masked)' : ''}`,
    }),
    el('div', { class: 'legend', 'aria-hidden': 'true' }, el('span', {}, '0'), el('span', { class: 'legend-bar' }), el('span', {}, '1')),
  ];
}

function renderContext(head) {
  return [
    el('p', {}, `Row i of context_${head} is the average of V_${head}'s rows, weighted by row i of weights_${head}.`),
    equation(matrixTable(`weights_${head}`, stepByName(`weights_${head}`).values, { heat: true, rowLabel: (r) => `q${r}`, colLabel: (c) => `k${c}` }), op('·'),
      matrixTable(`V_${head}`, stepByName(`V_${head}`).values, { rowLabel: (r) => `k${r}`, cellStyle: kvCols(head) }), op('='),
      matrixTable(`context_${head}`, stepByName(`context_${head}`).values, { rowLabel: tokenLabel, cellStyle: headCols(head) })),
  ];
}

function renderConcat() {
  const d = headDimensions();
  const parts = Array.from({ length: state.numberOfHeads }, (_, head) => matrixTable(`context_${head}`, stepByName(`context_${head}`).values, { rowLabel: tokenLabel, cellStyle: headCols(head) }));
  return [
    el('p', {}, `Row r of concat is row r of every head, side by side: ${state.numberOfHeads} × ${d} = ${C()} columns again.`),
    equation(...parts.flatMap((p, i) => (i ? [op('|'), p] : [p])), op('='),
      matrixTable('concat', stepByName('concat').values, { rowLabel: tokenLabel, colStyle: (c) => queryStyle(headOf(c)), cellStyle: (r, c) => queryStyle(headOf(c)) })),
  ];
}

function renderOutput() {
  if (state.projections) {
    const product = stepByName(state.bias ? 'concat·W_O' : 'output');
    const parts = [
      el('p', {}, `W_O mixes the heads: column j of the output is a weighted mix of every head's columns. Here W_O is the layer's seeded ${C()}×${C()} weight (seed ${state.seed}).`),
      equation(matrixTable('concat', stepByName('concat').values, { rowLabel: tokenLabel, cellStyle: (r, c) => byHead(c) }), op('·'),
        matrixTable('W_O', state.weights.W_O, { id: 'weights-W_O', rowLabel: (r) => `c${r}` }), op('='), matrixTable(product.name, product.values, { rowLabel: tokenLabel })),
    ];
    if (state.bias) {
      parts.push(equation(matrixTable('concat·W_O', product.values, { rowLabel: tokenLabel }), op('+'),
        matrixTable('b_O', [state.weights.b_O], { id: 'bias-b_O', rowLabel: () => 'all' }), op('='), matrixTable('output', stepByName('output').values, { rowLabel: tokenLabel })));
    }
    return parts;
  }
  return [
    el('p', {}, state.W_O
      ? 'W_O mixes the heads: column j of the output is a weighted mix of every head\'s columns. This W_O came with the link; editing the size goes back to the identity.'
      : 'W_O mixes the heads. A trained model learns it; here it is the identity, so the output equals concat.'),
    equation(matrixTable('concat', stepByName('concat').values, { rowLabel: tokenLabel, cellStyle: (r, c) => queryStyle(headOf(c)) }), op('·'),
      matrixTable('W_O', state.W_O ?? identity(C()), { id: 'weights-W_O', rowLabel: (r) => `c${r}` }), op('='), matrixTable('output', stepByName('output').values, { rowLabel: tokenLabel })),
  ];
}

// ---- the modern modes' own pages --------------------------------------------------

function renderRotate(head) {
  const d = headDimensions();
  // a row's position is the same before and after the turn: both tables take it from the rotated step
  const table = (name, role, rotated) => {
    const step = stepByName(name);
    const { rotation } = stepByName(rotated);
    const position = (r) => (rotation ? rotation.position + r : r);
    return matrixTable(label(name), step.values, {
      id: `trace-${name}`, rowLabel: (r) => `t${r} at ${position(r)}`, cellStyle: role === 'Q' ? headCols(head) : kvCols(head),
    });
  };
  const { base, position } = stepByName(`Q_${head}_rot`).rotation;
  const pairs = Array.from({ length: d / 2 }, (_, j) => `(c${j}, c${j + d / 2})`).join(', ');
  return [
    el('p', {}, `RoPE turns every pair of columns ${pairs} of a row like the hand of a clock. The row at position p turns pair j by the angle p · base^(−2j / headDimensions), with base = ${base} and headDimensions = ${d}: `
      + `pair 0 turns fastest (1 radian per position), later pairs slower. Row t is at position offset + t = ${position} + t (shown after "at"). A turn keeps each pair's length; only the direction changes.`),
    equation(table(`Q_${head}`, 'Q', `Q_${head}_rot`), op('rotate →'), table(`Q_${head}_rot`, 'Q', `Q_${head}_rot`)),
    equation(table(`K_${head}`, 'K', `K_${head}_rot`), op('rotate →'), table(`K_${head}_rot`, 'K', `K_${head}_rot`)),
    el('p', { class: 'hint' }, 'At position 0 nothing turns, so with offset 0 the first row is unchanged. V is not rotated.'),
  ];
}

/** A diverging colour (PuOr) for a score in [−limit, limit]. */
const divergingStyle = (x, limit) => {
  const background = interpolatePuOr(0.5 + (limit ? x / limit : 0) / 2);
  return { background, color: textColourFor(background) };
};

/** A spread along a diagonal: 0 exactly, or its size (a rounding error) in exponent form. */
const spreadText = (x) => (x === 0 ? '0 (exactly)' : x.toExponential(1).replace('e-', 'e−'));

function renderDistance() {
  const { q, k, scores, unrotated } = state.distance;
  const positions = Array.from({ length: DISTANCE_POSITIONS }, (_, i) => state.ropeOffset + i);
  const limit = Math.max(...scores.flat().map(Math.abs));
  // the scores along each diagonal m − n: one value each, up to rounding
  const byDistance = [];
  for (let distance = DISTANCE_POSITIONS - 1; distance >= -(DISTANCE_POSITIONS - 1); distance--) {
    const values = positions.flatMap((_, i) => (i - distance >= 0 && i - distance < DISTANCE_POSITIONS ? [scores[i][i - distance]] : []));
    byDistance.push({ distance, values });
  }
  const vector = (v) => `[${v.map(formatNumber).join(', ')}]`;
  return [
    el('p', {}, `Take q = row 0 of Q_0 = ${vector(q)} and k = row 0 of K_0 = ${vector(k)}. Put q at position m and k at position n, rotate both, and take their dot product. `
      + 'Each cell below is that score. Cells with the same colour run along the diagonals: the score depends only on the distance m − n, not on where the pair sits, because turning q by m and k by n leaves only the difference (m − n) between their angles. Edit row t0 of Q or K, the offset or the base: the diagonals stay constant.'),
    matrixTable('rotated q at m · rotated k at n', scores, {
      id: 'distance-scores', rowLabel: (r) => `m = ${positions[r]}`, colLabel: (c) => `n = ${positions[c]}`,
      cellStyle: (r, c, x) => divergingStyle(x, limit), cellClass: (r, c) => (r === c ? 'diagonal' : ''),
      cellTitle: (r, c, x) => `q at ${positions[r]}, k at ${positions[c]}, m − n = ${r - c}: ${formatNumber(x)}`,
    }),
    el('div', { class: 'legend', 'aria-hidden': 'true' }, el('span', {}, formatNumber(-limit)), el('span', { class: 'legend-bar', style: { background: `linear-gradient(90deg, ${[0, 0.25, 0.5, 0.75, 1].map(interpolatePuOr).join(', ')})` } }), el('span', {}, formatNumber(limit))),
    el('p', {}, `On the main diagonal (m = n, outlined) the angles cancel and the score is q·k = ${formatNumber(unrotated)}, the score without RoPE. One value per distance:`),
    matrixTable('score for each distance m − n', byDistance.map(({ values }) => [values[0], spreadText(Math.max(...values) - Math.min(...values))]), {
      id: 'distance-by-gap', rowLabel: (r) => `m − n = ${byDistance[r].distance}`.replace('= -', '= −'), colLabel: (c) => (c === 0 ? 'score' : 'largest − smallest on that diagonal'),
    }),
    el('p', { class: 'hint' }, 'Every number here is the package\'s: the scores_0 step of traceGroupedQueryAttention on 8 copies of q and 8 copies of k with rope { base, offset }; the second column is the spread of those numbers along each diagonal (0, or a rounding error near 1e−15).'),
  ];
}

/** Cells of the rows and columns decoding has not reached: shown empty, not as numbers. */
const pending = (rows, cols) => Array.from({ length: rows }, () => Array.from({ length: cols }, () => ''));

function renderDecode(t) {
  const trace = state.decode[t];
  const at = (name) => trace.steps.find((s) => s.name === name);
  const newRow = (r) => (r === t ? 'new-row' : '');
  const rows = T();
  const heads = Array.from({ length: state.numberOfHeads }, (_, head) => {
    // the weights of every token so far: row r is token r's own trace (its keys 0 … r)
    const soFar = Array.from({ length: rows }, (_, r) => (r > t ? pending(1, rows)[0]
      : [...state.decode[r].steps.find((s) => s.name === `weights_${head}`).values[0], ...pending(1, rows - r - 1)[0]]));
    const cacheRow = (prefix) => (r) => (r === t ? `${prefix}${r} new` : `${prefix}${r}`);
    return el('div', { class: 'head-group', style: { borderColor: HEAD_COLOURS[head % HEAD_COLOURS.length] } },
      el('h4', {}, `Head ${head}`),
      el('div', { class: 'matrix-row cache' },
        matrixTable(`K_${head} cache`, at(`K_${head}`).values, { id: `decode-Kcache_${head}`, rowLabel: cacheRow('k'), cellStyle: kvCols(head), cellClass: newRow }),
        matrixTable(`V_${head} cache`, at(`V_${head}`).values, { id: `decode-V_${head}`, rowLabel: cacheRow('v'), cellStyle: kvCols(head), cellClass: newRow })),
      equation(
        matrixTable(`Q_${head}, row ${t}`, at(`Q_${head}`).values, { id: `decode-Q_${head}`, rowLabel: () => `t${t}`, cellStyle: headCols(head) }), op('·'),
        matrixTable(`(K_${head} cache)ᵀ`, at(`K_${head}^T`).values, { id: `decode-K_${head}`, colLabel: (c) => (c === t ? `k${c} new` : `k${c}`), cellStyle: kvCols(head), cellClass: (r, c) => (c === t ? 'new-row' : '') }),
        op('='),
        matrixTable(`scores_${head}, row ${t}`, at(`scores_${head}`).values, { id: `decode-scores_${head}`, rowLabel: () => `q${t}`, colLabel: (c) => `k${c}` }),
        op(`× ${formatNumber(at(`scaled_${head}`).scalar)}, softmax →`),
        matrixTable(`weights_${head}, row ${t}`, at(`weights_${head}`).values, { id: `decode-weights_${head}`, heat: true, rowLabel: () => `q${t}`, colLabel: (c) => `k${c}` })),
      equation(
        matrixTable(`weights_${head}, row ${t}`, at(`weights_${head}`).values, { heat: true, rowLabel: () => `q${t}`, colLabel: (c) => `k${c}` }), op('·'),
        matrixTable(`V_${head} cache`, at(`V_${head}`).values, { rowLabel: cacheRow('v'), cellStyle: kvCols(head), cellClass: newRow }), op('='),
        matrixTable(`context_${head}, row ${t}`, at(`context_${head}`).values, { id: `decode-context_${head}`, rowLabel: () => `t${t}`, cellStyle: headCols(head) })),
      matrixTable(`weights_${head}: the rows so far`, soFar, {
        id: `decode-sofar-${head}`, class: 'heatmap', heat: true, rowLabel: (r) => `query ${r}`, colLabel: (c) => `key ${c}`,
        cellClass: (r, c, x) => [r === t ? 'new-row' : '', x === '' ? 'empty' : ''].join(' ').trim(),
        cellTitle: (r, c, x) => (x === '' ? (r > t ? `token ${r} has not arrived yet` : `key ${c} was not in the cache yet`) : `query ${r} → key ${c}: ${formatNumber(x)}`),
      }));
  });
  const outputSoFar = Array.from({ length: rows }, (_, r) => (r > t ? pending(1, C())[0] : state.decode[r].output[0]));
  return [
    el('p', {}, `Token ${t} arrives. Its key row and value row are appended to the KV cache, which now holds ${t + 1} row${t ? 's' : ''} per head (the new one is outlined). `
      + `Only its query row is new work: it is compared with every cached key (scores = Q row · cached Kᵀ), and its weights mix the cached values. The rows of earlier tokens stay as they were: the "rows so far" grow by one outlined row.`),
    ...heads,
    matrixTable('output: the rows so far', outputSoFar, { id: 'decode-output', rowLabel: (r) => `t${r}`, cellClass: (r, c, x) => [r === t ? 'new-row' : '', x === '' ? 'empty' : ''].join(' ').trim() }),
    el('p', { class: 'hint' }, `Empty cells: keys not yet in the cache, and tokens not yet decoded. Each page is traceGroupedQueryAttention on Q row ${t} against K and V rows 0 … ${t} with causal: true; a query that comes after the keys sees all of them (the queries are the last positions).`),
  ];
}

function renderDecodeCheck() {
  const stacked = state.decode.map((trace) => trace.output[0]);
  const full = state.trace.output;
  const difference = Math.max(...stacked.flatMap((row, r) => row.map((x, c) => Math.abs(x - full[r][c]))));
  return [
    el('p', {}, `Decoding token by token with the cache gives exactly the rows of one causal pass over all ${T()} tokens: the causal mask hides from each query precisely the keys that were not yet in the cache. `
      + `Largest difference between the two: ${formatNumber(difference)}${difference === 0 ? ' (the same bits)' : ''}.`),
    equation(
      matrixTable('rows from the cache, stacked', stacked, { id: 'decode-stacked', rowLabel: tokenLabel }), op(difference === 0 ? '=' : '≈'),
      matrixTable('one causal pass: output', full, { id: 'decode-full', rowLabel: tokenLabel })),
    matrixTable('one causal pass: weights_0', stepByName('weights_0').values, {
      class: 'heatmap', heat: true, rowLabel: (r) => `query ${r}`, colLabel: (c) => `key ${c}`,
      cellClass: (r, c) => (stepByName('weights_0').allowed && !stepByName('weights_0').allowed[r][c] ? 'masked outside' : ''),
    }),
    el('p', { class: 'hint' }, 'Without the cache, every new token would recompute the keys and values of all earlier tokens; with it, each token adds one row and reads the rest.'),
  ];
}

// ---- modes ------------------------------------------------------------------------

/** Shows the controls of the current mode and its note; the default mode looks as before. */
function renderMode() {
  for (const radio of document.querySelectorAll('input[name="mode"]')) radio.checked = radio.value === state.mode;
  $('mode-note').textContent = MODES[state.mode];
  $('kv-controls').hidden = state.mode !== 'grouped';
  $('rope-controls').hidden = state.mode !== 'rope';
  $('window-controls').hidden = state.mode !== 'window';
  $('projections-group').hidden = modern();
  $('projections-note').hidden = modern() || !state.projections;
  $('causal').disabled = state.mode === 'decoding';
  $('causal').checked = causal();
  $('causal').title = state.mode === 'decoding' ? 'Decoding is causal: a token sees only the tokens before it.' : '';
  $('output-heading').textContent = state.mode === 'decoding' ? 'Output (one causal pass)' : 'Output';
  $('reset-inputs').textContent = 'Example values';
  $('mode-controls').hidden = !modern() || state.mode === 'decoding';
}

/** A mode's example inputs (the challenge's values for the default mode) and its settings. */
function loadExample(mode) {
  const example = EXAMPLES[mode];
  Object.assign(state, {
    Q: structuredClone(example.Q), K: structuredClone(example.K), V: structuredClone(example.V), X: structuredClone(example.Q),
    numberOfHeads: example.numberOfHeads, numberOfKVHeads: example.numberOfKVHeads ?? state.numberOfKVHeads, window: example.window ?? state.window,
    W_O: null, example: mode,
  });
  fitSettings();
}

function setMode(mode) {
  state.mode = mode;
  if (state.example !== null && state.example !== mode) loadExample(mode);
  if (modern()) {
    state.projections = false;
    $('projections').checked = false;
    $('projection-controls').hidden = true;
    state.W_O = null;
  }
  fitSettings();
  renderMode();
  renderEditors();
  state.step = 0;
  recompute();
  // the window's point is the band: open its first heatmap
  if (state.mode === 'window' && state.trace) goTo(stepIndex('weights', 0));
  const params = new URLSearchParams(location.search);
  if (mode === 'default') params.delete('mode'); else params.set('mode', mode);
  params.delete('step');
  params.delete('head');
  history.replaceState(null, '', `${location.pathname}${params.size ? `?${params}` : ''}`);
}

/** A whole number ≥ min (and ≤ max) from a text field, or null. */
function wholeNumber(text, min, max = Number.MAX_SAFE_INTEGER) {
  const x = Number(text);
  return text.trim() !== '' && Number.isSafeInteger(x) && x >= min && x <= max ? x : null;
}

function wireModes() {
  for (const radio of document.querySelectorAll('input[name="mode"]')) radio.addEventListener('change', (e) => { if (e.target.checked) setMode(e.target.value); });
  $('number-of-kv-heads').addEventListener('change', (e) => { state.numberOfKVHeads = Number(e.target.value); renderEditors(); recompute(); });
  $('window').addEventListener('input', (e) => {
    state.window = Number(e.target.value);
    $('window-value').textContent = String(state.window);
    recompute();
  });
  $('rope-offset').addEventListener('input', (e) => {
    const offset = wholeNumber(e.target.value, 0, 2 ** 20 - 1 - Math.max(T(), DISTANCE_POSITIONS));
    e.target.setAttribute('aria-invalid', String(offset === null));
    if (offset === null) {
      $('input-status').textContent = `offset: "${e.target.value}" is not a whole number from 0 to ${2 ** 20 - 1 - Math.max(T(), DISTANCE_POSITIONS)} (positions stay below 2^20); the last valid offset is used.`;
      return;
    }
    $('input-status').textContent = '';
    state.ropeOffset = offset;
    recompute();
  });
  $('rope-base').addEventListener('input', (e) => {
    const base = Number(e.target.value);
    const valid = e.target.value.trim() !== '' && Number.isFinite(base) && base > 0;
    e.target.setAttribute('aria-invalid', String(!valid));
    if (!valid) {
      $('input-status').textContent = `base: "${e.target.value}" is not a number > 0; the last valid base is used.`;
      return;
    }
    $('input-status').textContent = '';
    state.ropeBase = base;
    recompute();
  });
}

/**
 * A link's mode and its settings: mode=decoding|grouped|rope|window, numberOfKVHeads, window,
 * base and offset (RoPE). Unknown or invalid values are named in the status line and ignored.
 */
function applyModeLink() {
  const params = new URLSearchParams(location.search);
  const mode = params.get('mode');
  if (mode === null) return;
  if (!Object.hasOwn(MODES, mode)) {
    $('input-status').textContent = `The link's mode "${mode}" is not one of ${Object.keys(MODES).join(', ')}.`;
    return;
  }
  state.mode = mode;
  if (state.example !== null) loadExample(mode);
  const problems = [];
  const setting = (name, min, apply) => {
    if (!params.has(name)) return;
    const x = name === 'base' ? Number(params.get(name)) : wholeNumber(params.get(name), min);
    if (x === null || !Number.isFinite(x) || x < min || (name === 'base' && x <= 0)) problems.push(`${name} = ${params.get(name)}`);
    else apply(x);
  };
  setting('numberOfKVHeads', 1, (x) => { state.numberOfKVHeads = x; });
  setting('window', 1, (x) => { state.window = x; });
  setting('offset', 0, (x) => { state.ropeOffset = x; });
  setting('base', 0, (x) => { state.ropeBase = x; });
  if (mode === 'grouped' && state.numberOfHeads % state.numberOfKVHeads !== 0) problems.push(`numberOfKVHeads = ${state.numberOfKVHeads} does not divide numberOfHeads = ${state.numberOfHeads}`);
  if (problems.length) $('input-status').textContent = `${$('input-status').textContent} The link's ${problems.join(', ')} ${problems.length === 1 ? 'was' : 'were'} not used.`.trim();
  $('rope-offset').value = String(state.ropeOffset);
  $('rope-base').value = String(state.ropeBase);
}

// ---- wiring ---------------------------------------------------------------------

function wire() {
  for (const id of ['add-row', 'remove-row', 'add-column', 'remove-column']) $(id).addEventListener('click', () => resize(id));
  $('randomize').addEventListener('click', randomize);
  $('reset-inputs').addEventListener('click', () => {
    loadExample(state.mode);
    renderMode();
    renderEditors();
    recompute();
  });
  $('number-of-heads').addEventListener('change', (e) => { state.numberOfHeads = Number(e.target.value); state.example = null; fitSettings(); renderPickers(); renderEditors(); recompute(); });
  $('head-dimensions').addEventListener('change', (e) => { state.numberOfHeads = C() / Number(e.target.value); state.example = null; fitSettings(); renderPickers(); renderEditors(); recompute(); });
  $('causal').addEventListener('change', (e) => { state.causal = e.target.checked; recompute(); });
  $('projections').addEventListener('change', (e) => {
    state.projections = e.target.checked;
    $('projection-controls').hidden = !state.projections;
    $('projections-note').hidden = !state.projections;
    state.step = 0;
    renderEditors();
    recompute();
  });
  $('seed').addEventListener('input', (e) => {
    const seed = Number(e.target.value);
    const valid = e.target.value.trim() !== '' && Number.isSafeInteger(seed) && seed >= 0;
    e.target.setAttribute('aria-invalid', String(!valid));
    if (!valid) {
      $('input-status').textContent = `seed: "${e.target.value}" is not a whole number ≥ 0; the last valid seed is used.`;
      return;
    }
    $('input-status').textContent = '';
    state.seed = seed;
    recompute();
  });
  $('next-seed').addEventListener('click', () => {
    state.seed += 1;
    $('seed').value = String(state.seed);
    $('seed').setAttribute('aria-invalid', 'false');
    recompute();
  });
  $('bias').addEventListener('change', (e) => { state.bias = e.target.checked; recompute(); });
  $('prev-step').addEventListener('click', () => goTo(state.step - 1));
  $('next-step').addEventListener('click', () => goTo(state.step + 1));
  document.addEventListener('keydown', (e) => {
    if (e.target.closest?.('input, select, textarea, [contenteditable]') || e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === 'ArrowRight') { goTo(state.step + 1); e.preventDefault(); }
    if (e.key === 'ArrowLeft') { goTo(state.step - 1); e.preventDefault(); }
  });
}

/** Controls a reload may have restored (form state) become the starting state. */
function syncFromControls() {
  state.causal = $('causal').checked;
  state.projections = $('projections').checked;
  state.bias = $('bias').checked;
  const seed = Number($('seed').value);
  if ($('seed').value.trim() !== '' && Number.isSafeInteger(seed) && seed >= 0) state.seed = seed;
  else $('seed').value = String(state.seed);
  $('projection-controls').hidden = !state.projections;
  $('projections-note').hidden = !state.projections;
  const offset = wholeNumber($('rope-offset').value, 0, 2 ** 20 - 1 - MAX_T);
  if (offset !== null) state.ropeOffset = offset; else $('rope-offset').value = String(state.ropeOffset);
  const base = Number($('rope-base').value);
  if ($('rope-base').value.trim() !== '' && Number.isFinite(base) && base > 0) state.ropeBase = base; else $('rope-base').value = String(state.ropeBase);
}

/**
 * The inputs and step of a deep link, or { error } naming the parameter that is wrong, or null
 * without a link. Q, K and V (and W_O) are JSON arrays of rows.
 */
function parseLink(search) {
  const params = new URLSearchParams(search);
  if (!params.has('Q')) return null;
  const matrix = (name) => {
    let M;
    try {
      M = JSON.parse(params.get(name));
    } catch {
      throw new Error(`${name} is not a JSON array of rows`);
    }
    if (!Array.isArray(M) || !M.length || !M.every((row) => Array.isArray(row) && row.length === M[0].length && row.length && row.every((x) => typeof x === 'number' && Number.isFinite(x)))) {
      throw new Error(`${name} must be a non-empty array of equal rows of finite numbers`);
    }
    return M;
  };
  try {
    const [Q, K, V] = ['Q', 'K', 'V'].map((n) => (params.has(n) ? matrix(n) : null));
    if (!K || !V) throw new Error('a link needs Q, K and V');
    const shape = (M) => `${M.length}×${M[0].length}`;
    const C = Q[0].length;
    const h = Number(params.get('numberOfHeads') ?? 1);
    // the grouped mode's K and V are T×(numberOfKVHeads·headDimensions); they are kept padded to C
    const kvh = Number(params.get('numberOfKVHeads') ?? h);
    const kvWidth = params.get('mode') === 'grouped' && Number.isInteger(h) && h > 0 && C % h === 0 ? kvh * (C / h) : C;
    for (const [n, M] of [['K', K], ['V', V]]) {
      if (M.length !== Q.length || M[0].length !== kvWidth) throw new Error(`${n} is ${shape(M)} but ${kvWidth === C ? `Q is ${shape(Q)}` : `must be ${Q.length}×${kvWidth} (T × numberOfKVHeads·headDimensions)`}`);
    }
    const maxC = params.get('from') === 'model' ? MAX_MODEL_LINK_C : MAX_LINK_C;
    if (Q.length > MAX_LINK_T || Q[0].length > maxC) throw new Error(`the walkthrough shows at most ${MAX_LINK_T} rows and ${maxC} columns; Q is ${shape(Q)}`);
    if (!Number.isInteger(h) || h < 1 || C % h !== 0) throw new Error(`numberOfHeads = ${params.get('numberOfHeads')} does not divide C = ${C}`);
    if (params.has('headDimensions') && Number(params.get('headDimensions')) * h !== C) throw new Error(`numberOfHeads · headDimensions must be C = ${C}`);
    const W_O = params.has('W_O') ? matrix('W_O') : null;
    if (W_O && (W_O.length !== C || W_O[0].length !== C)) throw new Error(`W_O is ${shape(W_O)} but must be C×C = ${C}×${C}`);
    const head = Number(params.get('head') ?? 0);
    const pad = (M) => M.map((row) => [...row, ...Array(C - row.length).fill(0)]);
    return { Q, K: pad(K), V: pad(V), numberOfHeads: h, numberOfKVHeads: Number.isInteger(kvh) && kvh > 0 ? kvh : h, W_O, causal: params.get('causal') === '1' || params.get('causal') === 'true', step: params.get('step'), head: Number.isInteger(head) && head >= 0 && head < h ? head : 0 };
  } catch (error) {
    return { error: error.message };
  }
}

/** A link's parameters: the query, or for a link too long for a server (the lab's), the fragment. */
const linkSearch = () => (new URLSearchParams(location.search).has('Q') ? location.search : location.hash.slice(1));

function applyLink() {
  const link = parseLink(linkSearch());
  if (!link) return false;
  if (link.error) {
    $('input-status').textContent = `The link's inputs were not used: ${link.error}.`;
    return false;
  }
  Object.assign(state, { Q: link.Q, K: link.K, V: link.V, X: structuredClone(link.Q), numberOfHeads: link.numberOfHeads, numberOfKVHeads: link.numberOfKVHeads, W_O: link.W_O, causal: link.causal, projections: false, example: null });
  $('causal').checked = link.causal;
  $('projections').checked = false;
  $('projection-controls').hidden = true;
  const params = new URLSearchParams(linkSearch());
  if (params.get('from') === 'lab') {
    // a head of a model trained in the lab: say which, and on which tokens
    const tokens = (params.get('tokens') ?? '').split(' ');
    $('input-status').before(el('p', { class: 'from-lab', id: 'from-lab' },
      el('strong', {}, `From the lab: layer ${params.get('labLayer')}, head ${params.get('labHead')} at step ${params.get('labStep')}. `),
      ...(params.get('labTask') === 'text'
        ? [`Q, K and V are that head's own, on the characters ${tokens.map((t, i) => `t${i} = ${t}`).join(', ')} (␣: a space, ↵: a new line). `,
          'A previous-token head puts its weight just left of the diagonal. ', el('a', { href: './lab.html?task=text' }, 'Back to the lab')]
        : [`Q, K and V are that head's own, on the tokens ${tokens.map((t, i) => `t${i} = ${t}`).join(', ')} (B: the beginning token). `,
          'An induction head at a repeated token looks one past its first copy. ', el('a', { href: './lab.html' }, 'Back to the lab')])));
  }
  if (params.get('from') === 'model') {
    // a head of a real model (model.html): say which, and on which tokens (a JSON array: tokens hold spaces)
    let tokens = [];
    try { tokens = JSON.parse(params.get('tokens') ?? '[]').map(String); } catch { /* the note then names no tokens */ }
    $('input-status').before(el('p', { class: 'from-lab', id: 'from-model' },
      el('strong', {}, `From ${params.get('modelName')}: layer ${params.get('modelLayer')}, head ${params.get('modelHead')}. `),
      `Q, K and V are that head's own, on the first ${tokens.length} tokens of your text: ${tokens.map((t, i) => `t${i} = ${t}`).join(', ')} (· a space, ↵ a new line). `,
      params.get('rotated') === '1' ? 'Q and K are after the rotary embedding (RoPE), as the model\'s scores use them. ' : '',
      el('a', { href: './model.html' }, 'Back to the real model')));
  }
  return link;
}

/** The page of a link's step ('scale', 'weights', … with head), or the first page. */
function stepIndex(key, head) {
  const i = stepList().findIndex(([, , k, hd]) => k === key && (hd === undefined || hd === head));
  return Math.max(0, i);
}

try {
  await initPackage();
  lab = lab_;
  wire();
  wireModes();
  syncFromControls();
  const link = applyLink();
  applyModeLink();
  fitSettings();
  renderMode();
  renderEditors();
  recompute();
  if (link && !modern()) {
    goTo(stepIndex(link.step, link.head));
  } else if (modern() && state.trace) {
    const key = new URLSearchParams(location.search).get('step');
    const index = Number(new URLSearchParams(location.search).get(state.mode === 'decoding' ? 'token' : 'head') ?? 0);
    goTo(key ? stepIndex(key, index) : state.mode === 'window' ? stepIndex('weights', 0) : 0);
  }
  if (link || (modern() && new URLSearchParams(location.search).has('step'))) {
    $('step-view').focus({ preventScroll: true });
    $('step-view').scrollIntoView({ block: 'start' });
  }
} catch (error) {
  showFatal(`The WebAssembly reference could not be loaded: ${error.message}`);
}
