// The lab's Circuit panel, the page's half (issue 32): the composition scores as three tables (Q, K,
// V; earlier-layer heads × later-layer heads, the excess over the random baseline under each score),
// the strongest K-composition over training (uPlot, on the loss chart's step axis), the focused head's
// OV and QK circuits as token-labelled heatmaps (a diverging scale from d3-scale-chromatic) with its
// copying score, and the path-ablation matrix. lab-circuits-data.js computes it all in the worker; the
// panel follows the scrubber because each view carries the circuits of the model on view.
import uPlot from 'uplot';
import { interpolatePuOr } from 'd3-scale-chromatic';
import { el, formatNumber, heatColour, textColourFor } from './common.js';
import { INPUTS } from './lab-circuits-data.js';

const $ = (id) => document.getElementById(id);
const KEYS = [['q', 'Q'], ['k', 'K'], ['v', 'V']];
const TRACE_COLOURS = { strongest: '#0072B2', baseline: '#6b7480' };

let trace = { steps: [], strongest: [], baseline: [] };
let chart = null;

/** `layer 1 head 0`: the page counts layers from 1, heads from 0 (as the head grid does). */
const headName = ([l, i]) => `layer ${l + 1} head ${i}`;

// ---- the strongest K-composition over training ---------------------------------------------------

/** Starts a new run's chart (the step axis linear or log, as the loss chart's). */
export function resetCircuitTrace(logSteps) {
  trace = { steps: [], strongest: [], baseline: [] };
  drawTraceChart(logSteps);
}

/** Rows [step, strongest K, baseline] from the worker, in step order. */
export function addCircuitTrace(rows) {
  for (const [step, strongest, baseline] of rows) {
    if (trace.steps.length && step <= trace.steps.at(-1)) continue;
    trace.steps.push(step);
    trace.strongest.push(strongest);
    trace.baseline.push(baseline);
  }
  chart?.setData([trace.steps, trace.strongest, trace.baseline]);
  const box = $('k-composition-chart');
  if (box && trace.steps.length) {
    box.dataset.step = String(trace.steps.at(-1));
    box.dataset.strongest = String(trace.strongest.at(-1));
    box.setAttribute('aria-label', `The strongest K-composition score over training: ${formatNumber(trace.strongest[0])} at step ${trace.steps[0]}, ${formatNumber(trace.strongest.at(-1))} at step ${trace.steps.at(-1)}; the random baseline is ${formatNumber(trace.baseline.at(-1))}`);
  }
}

export function drawTraceChart(logSteps) {
  const box = $('k-composition-chart');
  if (!box) return;
  chart?.destroy();
  const width = Math.max(260, box.clientWidth || 600);
  chart = new uPlot({
    width,
    height: 200,
    scales: { x: logSteps ? { time: false, distr: 3 } : { time: false }, y: { range: (u, min, max) => [0, Math.max(max ?? 0.5, 0.3)] } },
    axes: [{ label: 'step', stroke: '#1b1f24' }, { label: 'K-composition', stroke: '#1b1f24' }],
    series: [
      { label: 'step' },
      { label: 'strongest pair', stroke: TRACE_COLOURS.strongest, width: 2, value: (u, x) => (x == null ? '–' : x.toFixed(3)) },
      { label: 'random baseline', stroke: TRACE_COLOURS.baseline, width: 1, dash: [4, 4], value: (u, x) => (x == null ? '–' : x.toFixed(3)) },
    ],
    legend: { live: true },
  }, [trace.steps, trace.strongest, trace.baseline], box);
  box.dataset.stepDistr = String(chart.scales.x.distr);
}

export function resizeCircuits() {
  const box = $('k-composition-chart');
  if (box && chart) chart.setSize({ width: Math.max(260, box.clientWidth), height: 200 });
}

// ---- composition tables -----------------------------------------------------------------------------

/** The earlier heads (rows) and later heads (columns) of an L-layer, h-head model. */
function pairsOf(L, h) {
  const heads = (from, to) => Array.from({ length: (to - from) * h }, (_, n) => [from + Math.floor(n / h), n % h]);
  return { rows: heads(0, L - 1), cols: heads(1, L) };
}

function compositionTables(c) {
  const L = c.k.length;
  const h = c.k[0]?.length ?? 0;
  const { rows, cols } = pairsOf(L, h);
  const defined = KEYS.flatMap(([key]) => c[key].flat(3).filter((x) => !Number.isNaN(x)));
  const top = Math.max(c.baseline * 1.5, ...defined) - c.baseline;
  const strongest = c.strongestK;
  return el('div', { class: 'composition-tables' }, KEYS.map(([key, letter]) => {
    const caption = `${letter}-composition: how much each later head's ${letter === 'Q' ? 'queries' : letter === 'K' ? 'keys' : 'values'} read what an earlier head writes`;
    const head = el('tr', {}, el('th', { scope: 'col' }, el('span', { class: 'visually-hidden' }, 'earlier head')),
      cols.map((b) => el('th', { scope: 'col' }, `L${b[0] + 1} h${b[1]}`)));
    const body = rows.map((a) => el('tr', {}, el('th', { scope: 'row' }, `L${a[0] + 1} h${a[1]}`), cols.map((b) => {
      const x = c[key][a[0]][a[1]][b[0]][b[1]];
      if (Number.isNaN(x)) return el('td', { class: 'undefined', title: 'not defined: the later head is not in a later layer' }, '–');
      const excess = x - c.baseline;
      const background = heatColour(Math.max(0, excess) / top);
      const isStrongest = key === 'k' && strongest && strongest.from[0] === a[0] && strongest.from[1] === a[1] && strongest.to[0] === b[0] && strongest.to[1] === b[1];
      return el('td', {
        class: `composition-cell${isStrongest ? ' strongest' : ''}`, 'data-value': String(x), 'data-excess': String(excess),
        style: { background, color: textColourFor(background) },
        title: `${letter}-composition of ${headName(a)} → ${headName(b)}: ${formatNumber(x)}, ${excess >= 0 ? `${formatNumber(excess)} above` : `${formatNumber(-excess)} below`} the random baseline ${formatNumber(c.baseline)}`,
      }, el('span', { class: 'score-value' }, x.toFixed(2)), el('span', { class: 'excess' }, `${excess >= 0 ? '+' : '−'}${Math.abs(excess).toFixed(2)}`));
    })));
    return el('div', { class: 'matrix-wrap', role: 'region', 'aria-label': `${letter}-composition scores`, tabindex: '0' },
      el('table', { class: 'composition', id: `composition-${key}` }, el('caption', {}, caption), el('thead', {}, head), el('tbody', {}, body)));
  }));
}

// ---- the focused head's circuits --------------------------------------------------------------------

/** A V × V matrix as a labelled heatmap on a canvas: PuOr, white at 0, symmetric about 0. */
function circuitCanvas(matrix, label, labelOf, description) {
  const [n] = matrix.shape;
  const cell = n > 40 ? 8 : 11;
  const margin = 22;
  const size = margin + n * cell;
  const ratio = window.devicePixelRatio || 1;
  const canvas = el('canvas', { role: 'img', 'aria-label': description });
  canvas.width = size * ratio;
  canvas.height = size * ratio;
  canvas.style.width = `${size}px`;
  const context = canvas.getContext('2d');
  context.scale(ratio, ratio);
  context.fillStyle = '#fff';
  context.fillRect(0, 0, size, size);
  const top = Math.max(1e-12, ...Array.from(matrix.data, Math.abs));
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      context.fillStyle = interpolatePuOr(0.5 - 0.5 * matrix.data[r * n + c] / top); // orange < 0 < purple
      context.fillRect(margin + c * cell, margin + r * cell, cell, cell);
    }
  }
  context.fillStyle = '#1b1f24';
  context.font = `${n > 40 ? 7 : 8}px "IBM Plex Mono", monospace`;
  context.textAlign = 'center';
  context.textBaseline = 'middle';
  for (let t = 0; t < n; t++) {
    context.fillText(labelOf(t), margin + t * cell + cell / 2, margin / 2);
    context.fillText(labelOf(t), margin / 2, margin + t * cell + cell / 2);
  }
  canvas.dataset.max = String(top);
  return el('figure', { class: 'circuit-figure' }, el('figcaption', {}, label), el('div', { class: 'focus-canvas', role: 'region', 'aria-label': label, tabindex: '0' }, canvas));
}

/**
 * How often a query position's largest entry among the keys it may see (0 … q) is the previous
 * position q − 1, over the positions q ≥ 1 of a positional QK circuit: the mark of a head that
 * attends to the previous token by position.
 */
export function previousShare(matrix) {
  const [n] = matrix.shape;
  let hits = 0;
  for (let q = 1; q < n; q++) {
    let best = 0;
    for (let k = 1; k <= q; k++) if (matrix.data[q * n + k] > matrix.data[q * n + best]) best = k;
    if (best === q - 1) hits++;
  }
  return n > 1 ? hits / (n - 1) : 0;
}

/** How often the largest entry of each row sits on the diagonal (an OV circuit that copies: each token raises its own logit). */
export function diagonalShare(matrix) {
  const [n] = matrix.shape;
  let hits = 0;
  for (let r = 0; r < n; r++) {
    let best = 0;
    for (let c = 1; c < n; c++) if (matrix.data[r * n + c] > matrix.data[r * n + best]) best = c;
    if (best === r) hits++;
  }
  return hits / n;
}

/** The positional QK circuit (rows: the query's position, columns: the key's), or a note when the model has none. */
function positionalCircuit(matrix, name) {
  if (!matrix) return el('p', { class: 'hint', id: 'positional-qk' }, 'No positional QK circuit: this model\'s positions do not enter the queries and keys through W_pos (rotary or no positions).');
  const [L] = matrix.shape;
  const share = previousShare(matrix);
  const figure = circuitCanvas(matrix, `Positional QK circuit of ${name}: W_pos·W_QK·W_posᵀ (rows: the query's position; columns: the key's position; above the diagonal is masked in use). A head that attends to the previous token by position has its row maximum just left of the diagonal: here in ${Math.round(share * (L - 1))} of ${L - 1} rows.`,
    (t) => (t % 8 === 0 ? String(t) : ''), `Positional QK circuit of ${name}, ${L} by ${L}; among the keys a query position may see, the largest entry is the previous position in ${Math.round(share * (L - 1))} of ${L - 1} rows`);
  figure.id = 'positional-qk';
  figure.dataset.previousShare = String(share);
  return figure;
}

function headCircuits(c, labelOf, word) {
  const { head } = c;
  if (!head) return el('p', { class: 'hint' }, 'Pick a head in the grid above to see its circuits.');
  const name = headName([head.layer, head.head]);
  const n = head.ov.shape[0];
  const diagonal = diagonalShare(head.ov);
  const summary = el('p', { id: 'copying-score', 'data-copying-score': String(head.copyingScore), 'data-diagonal': String(diagonal) },
    `${name[0].toUpperCase()}${name.slice(1)}: OV copying score ${Number.isNaN(head.copyingScore) ? 'undefined' : head.copyingScore.toFixed(2)} `,
    `(1 = every eigenvalue of its OV circuit positive: attending to a ${word} raises that ${word}'s own logit); `,
    `the largest entry of ${Math.round(diagonal * n)} of its ${n} rows is on the diagonal.`);
  return el('div', { class: 'head-circuits' }, summary, el('div', { class: 'circuit-figures' },
    circuitCanvas(head.ov, `OV circuit of ${name}: W_E·W_OV·W_U (rows: the ${word} attended to; columns: the logit it raises)`, labelOf,
      `OV circuit of ${name}, ${n} by ${n}; copying score ${formatNumber(head.copyingScore)}; the row maximum is on the diagonal in ${Math.round(diagonal * n)} of ${n} rows`),
    circuitCanvas(head.qk, `QK circuit of ${name}: W_E·W_QK·W_Eᵀ (rows: the query's ${word}; columns: the key's ${word})`, labelOf,
      `Token QK circuit of ${name}, ${n} by ${n}`),
    positionalCircuit(head.qkPositional, name)),
  el('p', { class: 'hint' }, 'Purple: positive, orange: negative, white: 0; each map scaled to its own largest entry. These are the direct paths, the embeddings straight into this head: for a layer-2 head the key side that matters is what the previous-token head wrote, which the K-composition above measures.'));
}

// ---- path ablation ----------------------------------------------------------------------------------

function pathTable(p, h, word) {
  if (!p) return el('p', { class: 'hint' }, 'Path ablation needs two layers.');
  const { uncut, cuts } = p.paths; // cuts[i][j][k]: from layer-1 head i into layer-2 head j (j = h: every one), input k
  const worst = Math.max(...cuts.flat(2));
  // the colour: the rise over the uncut loss, on a scale of at least the uncut loss itself (so that an
  // untrained model's tiny differences stay dark); the outline: the worst cut, when it adds half or more
  const span = Math.max(worst - uncut, uncut, 1e-9);
  const marked = worst >= 1.5 * uncut ? worst : null;
  // one row per (later head, input), one column per layer-1 head: narrow enough for a phone
  const head = el('tr', {}, el('th', { scope: 'col' }, 'cut into'), cuts.map((_, i) => el('th', { scope: 'col' }, `from L1 h${i}`)));
  const body = Array.from({ length: h + 1 }, (_, j) => INPUTS.map((input, k) => el('tr', { class: j === h && k === 0 ? 'every' : null },
    el('th', { scope: 'row' }, `${j < h ? `L2 h${j}` : 'every L2 head'}: ${input}`),
    cuts.map((row, i) => {
      const loss = row[j][k];
      const background = heatColour((loss - uncut) / span);
      const target = j < h ? `layer 2 head ${j}'s ${input}` : `every layer-2 head's ${input}`;
      return el('td', {
        class: `path-cell${loss === marked ? ' strongest' : ''}`, 'data-from': String(i), 'data-to': j < h ? String(j) : 'every', 'data-input': input, 'data-loss': String(loss),
        style: { background, color: textColourFor(background) },
        title: `cut layer 1 head ${i} → ${target}: loss ${formatNumber(loss)} on the ${word} tokens (uncut ${formatNumber(uncut)})`,
      }, loss.toFixed(2));
    })))).flat();
  return el('div', {},
    el('p', { class: 'hint', id: 'path-summary', 'data-uncut': String(uncut), 'data-step': String(p.step) },
      `Loss on the ${word} tokens of a fixed batch with one path cut, at step ${p.step}; uncut: ${formatNumber(uncut)}. `,
      'Each cell removes one layer-1 head\'s output from one input (query, key or value) of one layer-2 head (the last rows: of every layer-2 head at once), and nothing else. Lighter: a larger rise over the uncut loss; outlined: the worst cut, where it raises the loss by half or more.'),
    el('div', { class: 'matrix-wrap', role: 'region', 'aria-label': 'Path ablation', tabindex: '0' },
      el('table', { class: 'composition paths', id: 'path-ablation' }, el('caption', {}, 'Loss with each layer 1 → layer 2 path cut'),
        el('thead', {}, head), el('tbody', {}, body))));
}

/**
 * Draws the panel for view `v` (its `circuits` and `paths` from the worker). `labelOf(t)` is a
 * token's label; `word` is 'token' or 'character'; `repeatedWord` 'repeated' or 'copyable'.
 */
export function renderCircuits(v, { labelOf, word, repeatedWord }) {
  const box = $('circuits');
  const c = v.circuits;
  if (!box || !c) return;
  const parts = [];
  if (c.k.length < 2) {
    parts.push(el('p', { class: 'hint' }, 'A one-layer model has no composition: no head reads another head\'s output.'));
  } else {
    const s = c.strongestK;
    parts.push(el('p', { id: 'composition-summary', 'data-baseline': String(c.baseline), 'data-strongest': String(s.score), 'data-from': s.from.join(','), 'data-to': s.to.join(',') },
      `Strongest K-composition at step ${v.viewStep}: ${headName(s.from)} → ${headName(s.to)}, ${s.score.toFixed(2)} against a random baseline of ${c.baseline.toFixed(2)}. `,
      'Each cell: the score, and under it its excess over the baseline (the colour).'));
    parts.push(compositionTables(c));
  }
  parts.push(el('h3', {}, 'The focused head\'s circuits'), headCircuits(c, labelOf, word));
  parts.push(el('h3', {}, 'Path ablation'), pathTable(v.paths, v.scores[0].length, repeatedWord));
  box.replaceChildren(...parts);
}
