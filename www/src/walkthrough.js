// The walkthrough: editable Q, K, V → traceMultiHeadAttention → one step at a time. With
// learned projections on: editable X and seeded weights → a MultiHeadAttention layer's trace,
// whose projection steps (X·W_Q, + b_Q, …) come first.
// Deep links (the challenge page's diagnosis makes them): ?Q=[[…]]&K=…&V=…&numberOfHeads=2
// &headDimensions=1&causal=1&W_O=[[…]]&step=scale&head=1 opens that step with those inputs.
import { wasm, el, matrixTable, formatNumber, HEAD_COLOURS, showFatal } from './common.js';
import { seededRandom } from './cases.js';

const CHALLENGE_Q = [[1, 2], [3, 4]];
const CHALLENGE_V = [[5, 6], [7, 8]];
const MAX_T = 8;
const MAX_C = 8;
const RANDOM_RANGE = 3; // random entries in [−3, 3], one decimal

const state = {
  Q: structuredClone(CHALLENGE_Q),
  K: structuredClone(CHALLENGE_Q),
  V: structuredClone(CHALLENGE_V),
  X: structuredClone(CHALLENGE_Q),
  numberOfHeads: 2,
  causal: false,
  projections: false,
  seed: 0,
  bias: false,
  weights: null, // the layer's getWeights() when projections are on
  W_O: null, // W_O from a link (null: the identity), without projections
  step: 0,
  trace: null,
};
const MATRICES = ['Q', 'K', 'V', 'X'];
const PROJECTIONS = [['Q', 'query'], ['K', 'key'], ['V', 'value']]; // the projection and the layer's name for its input
const $ = (id) => document.getElementById(id);
const T = () => state.Q.length;
const C = () => state.Q[0].length;
const headDimensions = () => C() / state.numberOfHeads;
const divisors = (n) => Array.from({ length: n }, (_, i) => i + 1).filter((d) => n % d === 0);
const identity = (n) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
const headOf = (column) => Math.floor(column / headDimensions());
const headStyle = (head) => ({ background: `${HEAD_COLOURS[head % HEAD_COLOURS.length]}40`, boxShadow: `inset 0 -4px 0 ${HEAD_COLOURS[head % HEAD_COLOURS.length]}` });

let lab;

// ---- inputs -------------------------------------------------------------------

function renderEditors() {
  const editors = $('editors');
  // X's columns are features, not heads: the heads read columns of X·W, so X is not coloured.
  editors.replaceChildren(...(state.projections ? ['X'] : ['Q', 'K', 'V']).map((name) => {
    const byHead = name !== 'X';
    const rows = state[name].map((row, r) => el('tr', {},
      el('th', { scope: 'row' }, `t${r}`),
      row.map((x, c) => el('td', { style: byHead ? headStyle(headOf(c)) : undefined }, el('input', {
        type: 'text', inputmode: 'decimal', value: String(x), size: 5, 'data-matrix': name, 'data-row': r, 'data-col': c,
        'aria-label': `${name} row ${r} column ${c}${byHead ? ` (head ${headOf(c)})` : ''}`,
        oninput: (e) => editCell(e.target, name, r, c),
      })))));
    const head = el('tr', {}, el('th', { scope: 'col' }, el('span', { class: 'visually-hidden', text: 'token' })),
      state[name][0].map((_, c) => el('th', { scope: 'col', style: byHead ? headStyle(headOf(c)) : undefined }, `c${c}`, byHead ? el('span', { class: 'head-tag' }, `h${headOf(c)}`) : null)));
    return el('div', { class: 'matrix-wrap' }, el('table', { class: 'matrix editor-table', id: `editor-${name}` },
      el('caption', {}, name, el('span', { class: 'shape' }, ` ${T()}×${C()}`)), el('thead', {}, head), el('tbody', {}, rows)));
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
  recompute();
}

function renderPickers() {
  const options = divisors(C());
  const fill = (select, values, selected) => select.replaceChildren(...values.map((v) => el('option', { value: v, selected: v === selected }, String(v))));
  fill($('number-of-heads'), options, state.numberOfHeads);
  fill($('head-dimensions'), options, headDimensions());
}

function resize(change) {
  for (const name of MATRICES) {
    const M = state[name];
    if (change === 'add-row') M.push(M[0].map(() => 0));
    if (change === 'remove-row') M.pop();
    if (change === 'add-column') M.forEach((row) => row.push(0));
    if (change === 'remove-column') M.forEach((row) => row.pop());
  }
  if (C() % state.numberOfHeads !== 0) state.numberOfHeads = 1;
  state.W_O = null;
  renderEditors();
  recompute();
}

function randomize() {
  const value = () => Math.round((Math.random() * 2 - 1) * RANDOM_RANGE * 10) / 10;
  for (const name of MATRICES) state[name] = state[name].map((row) => row.map(value));
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

/** The trace to show: the course function on Q, K, V, or the layer (seeded weights) on X. */
function computeTrace() {
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
  try {
    state.trace = computeTrace();
  } catch (error) {
    $('input-status').textContent = `${error.name}: ${error.message}`;
    return;
  }
  const steps = stepList();
  state.step = Math.min(state.step, steps.length - 1);
  renderSteps();
  $('output-formula').textContent = state.projections
    ? `new MultiHeadAttention({ embedDim: ${C()}, numHeads: ${state.numberOfHeads}, bias: ${state.bias}, seed: ${state.seed} }).forward(X).output =`
    : 'multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions }) =';
  $('output').replaceChildren(matrixTable('output', state.trace.output, { id: 'output-matrix', rowLabel: (r) => `t${r}`, colStyle: state.projections ? undefined : (c) => headStyle(headOf(c)) }));
}

const stepByName = (name) => state.trace.steps.find((s) => s.name === name);

/** The pages of the walkthrough: [title, render(), key, head]; key and head name a page in a link. */
function stepList() {
  const h = state.numberOfHeads;
  const pages = [];
  if (state.projections) {
    for (const [name] of PROJECTIONS) pages.push([`Project: ${name} = X·W_${name}${state.bias ? ` + b_${name}` : ''}`, () => renderProjection(name), `project-${name}`]);
  }
  pages.push(['Slice Q, K and V into heads', renderSlicing, 'slice']);
  for (let head = 0; head < h; head++) {
    pages.push([`Head ${head}: scores Q_${head}·K_${head}ᵀ`, () => renderScores(head), 'scores', head]);
    pages.push([`Head ${head}: scale by 1/√headDimensions`, () => renderScaled(head), 'scale', head]);
    pages.push([`Head ${head}: softmax weights`, () => renderWeights(head), 'weights', head]);
    pages.push([`Head ${head}: weighted sum with V_${head}`, () => renderContext(head), 'context', head]);
  }
  pages.push(['Concatenate the heads side by side', renderConcat, 'concat']);
  pages.push([state.projections && state.bias ? 'Multiply by W_O, add b_O' : 'Multiply by W_O', renderOutput, 'output']);
  return pages;
}

function renderSteps() {
  const steps = stepList();
  $('step-list').replaceChildren(...steps.map(([title], i) => el('li', {},
    el('button', { type: 'button', class: 'link', 'aria-current': i === state.step ? 'step' : null, onclick: () => goTo(i) }, title))));
  $('step-counter').textContent = `Step ${state.step + 1} of ${steps.length}: ${steps[state.step][0]}`;
  $('prev-step').disabled = state.step === 0;
  $('next-step').disabled = state.step === steps.length - 1;
  const view = $('step-view');
  view.dataset.step = String(state.step);
  view.replaceChildren(el('h3', {}, steps[state.step][0]), ...steps[state.step][1]());
}

function goTo(i) {
  const count = stepList().length;
  state.step = Math.max(0, Math.min(count - 1, i));
  renderSteps();
}

const equation = (...parts) => el('div', { class: 'equation' }, parts);
const op = (text) => el('span', { class: 'op', 'aria-hidden': 'true' }, text);
const tokenLabel = (r) => `t${r}`;
const headCols = (head) => (c) => headStyle(head);
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
  const note = el('p', {}, `C = ${C()} columns split into numberOfHeads = ${state.numberOfHeads} heads of headDimensions = ${d} columns. Head i takes columns i·${d} to (i+1)·${d} − 1 of every row; each colour is one head.`
    + (state.projections ? ' Q, K and V are the projections of X from the previous steps.' : ''));
  const whole = el('div', { class: 'matrix-row' }, ['Q', 'K', 'V'].map((name) => matrixTable(name, headInput(name), { rowLabel: tokenLabel, colStyle: (c) => headStyle(headOf(c)), cellStyle: (r, c) => headStyle(headOf(c)) })));
  const slices = Array.from({ length: state.numberOfHeads }, (_, head) => el('div', { class: 'head-group', style: { borderColor: HEAD_COLOURS[head % HEAD_COLOURS.length] } },
    el('h4', {}, `Head ${head}: columns ${stepByName(`Q_${head}`).columns.join(' to ')} (exclusive)`),
    el('div', { class: 'matrix-row' }, ['Q', 'K', 'V'].map((n) => matrixTable(`${n}_${head}`, stepByName(`${n}_${head}`).values, { rowLabel: tokenLabel, cellStyle: headCols(head) })))));
  return [note, whole, ...slices];
}

function renderScores(head) {
  return [
    el('p', {}, `scores_${head}[i][j] is the dot product of query row i with key row j (over head ${head}'s ${headDimensions()} columns).`),
    equation(matrixTable(`Q_${head}`, stepByName(`Q_${head}`).values, { rowLabel: tokenLabel, cellStyle: headCols(head) }), op('·'),
      matrixTable(`K_${head}ᵀ`, stepByName(`K_${head}^T`).values, { colLabel: (c) => `k${c}`, cellStyle: headCols(head) }), op('='),
      matrixTable(`scores_${head}`, stepByName(`scores_${head}`).values, { rowLabel: (r) => `q${r}`, colLabel: (c) => `k${c}` })),
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

function renderWeights(head) {
  const step = stepByName(`weights_${head}`);
  const masked = (r, c) => step.allowed && !step.allowed[r][c];
  return [
    el('p', {}, 'Softmax along each row: every query row turns into weights over the keys that are positive and add up to 1 (the Σ column). Lighter cells weigh more.'
      + (state.causal ? ' The causal mask gives every later key (above the diagonal) weight 0; those cells are marked ⊘.' : '')),
    matrixTable(`weights_${head} (query rows × key columns)`, step.values, {
      id: `heatmap-${head}`, class: 'heatmap', heat: true, rowSums: true,
      rowLabel: (r) => `query ${r}`, colLabel: (c) => `key ${c}`,
      cellClass: (r, c) => (masked(r, c) ? 'masked' : ''),
      cellTitle: (r, c, x) => `query ${r} → key ${c}: ${formatNumber(x)}${masked(r, c) ? ' (masked)' : ''}`,
    }),
    el('div', { class: 'legend', 'aria-hidden': 'true' }, el('span', {}, '0'), el('span', { class: 'legend-bar' }), el('span', {}, '1')),
  ];
}

function renderContext(head) {
  return [
    el('p', {}, `Row i of context_${head} is the average of V_${head}'s rows, weighted by row i of weights_${head}.`),
    equation(matrixTable(`weights_${head}`, stepByName(`weights_${head}`).values, { heat: true, rowLabel: (r) => `q${r}`, colLabel: (c) => `k${c}` }), op('·'),
      matrixTable(`V_${head}`, stepByName(`V_${head}`).values, { rowLabel: (r) => `k${r}`, cellStyle: headCols(head) }), op('='),
      matrixTable(`context_${head}`, stepByName(`context_${head}`).values, { rowLabel: tokenLabel, cellStyle: headCols(head) })),
  ];
}

function renderConcat() {
  const d = headDimensions();
  const parts = Array.from({ length: state.numberOfHeads }, (_, head) => matrixTable(`context_${head}`, stepByName(`context_${head}`).values, { rowLabel: tokenLabel, cellStyle: headCols(head) }));
  return [
    el('p', {}, `Row r of concat is row r of every head, side by side: ${state.numberOfHeads} × ${d} = ${C()} columns again.`),
    equation(...parts.flatMap((p, i) => (i ? [op('|'), p] : [p])), op('='),
      matrixTable('concat', stepByName('concat').values, { rowLabel: tokenLabel, colStyle: (c) => headStyle(headOf(c)), cellStyle: (r, c) => headStyle(headOf(c)) })),
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
    equation(matrixTable('concat', stepByName('concat').values, { rowLabel: tokenLabel, cellStyle: (r, c) => headStyle(headOf(c)) }), op('·'),
      matrixTable('W_O', state.W_O ?? identity(C()), { id: 'weights-W_O', rowLabel: (r) => `c${r}` }), op('='), matrixTable('output', stepByName('output').values, { rowLabel: tokenLabel })),
  ];
}

// ---- wiring ---------------------------------------------------------------------

function wire() {
  for (const id of ['add-row', 'remove-row', 'add-column', 'remove-column']) $(id).addEventListener('click', () => resize(id));
  $('randomize').addEventListener('click', randomize);
  $('reset-inputs').addEventListener('click', () => {
    Object.assign(state, { Q: structuredClone(CHALLENGE_Q), K: structuredClone(CHALLENGE_Q), V: structuredClone(CHALLENGE_V), X: structuredClone(CHALLENGE_Q), numberOfHeads: 2, W_O: null });
    renderEditors();
    recompute();
  });
  $('number-of-heads').addEventListener('change', (e) => { state.numberOfHeads = Number(e.target.value); renderPickers(); renderEditors(); recompute(); });
  $('head-dimensions').addEventListener('change', (e) => { state.numberOfHeads = C() / Number(e.target.value); renderPickers(); renderEditors(); recompute(); });
  $('causal').addEventListener('change', (e) => { state.causal = e.target.checked; recompute(); });
  $('projections').addEventListener('change', (e) => {
    state.projections = e.target.checked;
    $('projection-controls').hidden = !state.projections;
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
    for (const [n, M] of [['K', K], ['V', V]]) if (shape(M) !== shape(Q)) throw new Error(`${n} is ${shape(M)} but Q is ${shape(Q)}`);
    if (Q.length > MAX_T || Q[0].length > MAX_C) throw new Error(`the walkthrough shows at most ${MAX_T} rows and ${MAX_C} columns; Q is ${shape(Q)}`);
    const C = Q[0].length;
    const h = Number(params.get('numberOfHeads') ?? 1);
    if (!Number.isInteger(h) || h < 1 || C % h !== 0) throw new Error(`numberOfHeads = ${params.get('numberOfHeads')} does not divide C = ${C}`);
    if (params.has('headDimensions') && Number(params.get('headDimensions')) * h !== C) throw new Error(`numberOfHeads · headDimensions must be C = ${C}`);
    const W_O = params.has('W_O') ? matrix('W_O') : null;
    if (W_O && (W_O.length !== C || W_O[0].length !== C)) throw new Error(`W_O is ${shape(W_O)} but must be C×C = ${C}×${C}`);
    const head = Number(params.get('head') ?? 0);
    return { Q, K, V, numberOfHeads: h, W_O, causal: params.get('causal') === '1' || params.get('causal') === 'true', step: params.get('step'), head: Number.isInteger(head) && head >= 0 && head < h ? head : 0 };
  } catch (error) {
    return { error: error.message };
  }
}

function applyLink() {
  const link = parseLink(location.search);
  if (!link) return false;
  if (link.error) {
    $('input-status').textContent = `The link's inputs were not used: ${link.error}.`;
    return false;
  }
  Object.assign(state, { Q: link.Q, K: link.K, V: link.V, X: structuredClone(link.Q), numberOfHeads: link.numberOfHeads, W_O: link.W_O, causal: link.causal, projections: false });
  $('causal').checked = link.causal;
  $('projections').checked = false;
  $('projection-controls').hidden = true;
  return link;
}

/** The page of a link's step ('scale', 'weights', … with head), or the first page. */
function stepIndex(key, head) {
  const i = stepList().findIndex(([, , k, hd]) => k === key && (hd === undefined || hd === head));
  return Math.max(0, i);
}

try {
  lab = await wasm();
  wire();
  syncFromControls();
  const link = applyLink();
  renderEditors();
  recompute();
  if (link) {
    goTo(stepIndex(link.step, link.head));
    $('step-view').focus({ preventScroll: true });
    $('step-view').scrollIntoView({ block: 'start' });
  }
} catch (error) {
  showFatal(`The WebAssembly reference could not be loaded: ${error.message}`);
}
