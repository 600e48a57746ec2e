// The lab page: settings (kept in the address), Train / Pause / Step / Reset, and the views of
// what lab.worker.js reports: loss curves (uPlot), the head-score table, the attention heatmaps
// of every head on one example sequence (cividis, from d3-scale-chromatic), the loss at each
// position, a scrubber over snapshots and ablation by head. The lesson is rendered at build time.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import 'katex/dist/katex.min.css';
import lessonHtml from './lab-lesson.md?lesson';
import textLessonHtml from './lab-text-lesson.md?lesson';
import { el, formatNumber, heatColour, HEAD_COLOURS } from './common.js';
import { visibleChar, WINDOW_RANGE } from './lab-text.js';
import { renderCircuits, addCircuitTrace, resetCircuitTrace, drawTraceChart, resizeCircuits } from './lab-circuits.js';

const $ = (id) => document.getElementById(id);
export const DEFAULTS = { task: 'induction', vocab: 32, length: 24, window: 64, layers: 2, heads: 4, width: 64, positions: 'shortformer', lr: 0.01, batch: 16, seed: 1 };
const INTEGER = ['vocab', 'length', 'window', 'layers', 'heads', 'width', 'batch', 'seed'];
const CHOICES = { task: ['induction', 'text'], positions: ['shortformer', 'learned', 'rope', 'none'] };
const SCORES = [['previousToken', 'prev', 'previous token'], ['induction', 'ind', 'induction'], ['firstToken', 'first', 'first token'], ['self', 'self', 'self']];
const SCORE_COLOURS = { previousToken: '#E69F00', induction: '#0072B2', firstToken: '#999999', self: '#CC79A7' };
const LOSS_COLOURS = { repeated: '#0072B2', other: '#D55E00' };
/** A token's label: in the induction task its number (token 0, the beginning token, is B); in the text task its character (space ␣, newline ↵). */
const tokenLabel = (v, t) => (v.vocabulary ? visibleChar(v.vocabulary[t]) : t === 0 ? 'B' : String(t));
/** What the split of the loss calls the predictable tokens, by task. */
const repeatedWord = () => (config.task === 'text' ? 'copyable' : 'repeated');

// ---- settings -------------------------------------------------------------------------------

/** The settings in the address, checked; { config } or { error } (the defaults are used then). */
export function parseSettings(search) {
  const params = new URLSearchParams(search);
  const config = { ...DEFAULTS };
  for (const key of Object.keys(DEFAULTS)) {
    if (!params.has(key)) continue;
    const raw = params.get(key);
    if (CHOICES[key]) {
      if (!CHOICES[key].includes(raw)) return { config: { ...DEFAULTS }, error: `${key}=${raw}: pick ${CHOICES[key].slice(0, -1).join(', ')} or ${CHOICES[key].at(-1)}` };
      config[key] = raw;
      continue;
    }
    const x = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(x) || (INTEGER.includes(key) && !Number.isInteger(x))) return { config: { ...DEFAULTS }, error: `${key}=${raw} is not ${INTEGER.includes(key) ? 'an integer' : 'a number'}` };
    config[key] = x;
  }
  const problem = checkSettings(config);
  return problem ? { config: { ...DEFAULTS }, error: problem } : { config };
}

function checkSettings(c) {
  if (c.layers < 1 || c.layers > 4) return 'layers must be 1 to 4';
  if (c.heads < 1 || c.width % c.heads) return `the width (${c.width}) must be a multiple of the number of heads (${c.heads})`;
  if (c.vocab < 4 || c.vocab > 256) return 'the vocabulary size must be 4 to 256';
  if (c.length < 2 || c.length > c.vocab - 1) return `the segment length must be 2 to vocabulary size − 1 (${c.vocab - 1}): its tokens are distinct`;
  if (c.window < WINDOW_RANGE[0] || c.window > WINDOW_RANGE[1]) return `the window must be ${WINDOW_RANGE[0]} to ${WINDOW_RANGE[1]} characters`;
  if (!(c.lr > 0 && c.lr <= 0.1)) return 'the learning rate must be in (0, 0.1]';
  if (c.batch < 1 || c.batch > 128) return 'the batch must be 1 to 128';
  if (c.seed < 0 || c.seed > 2147483646) return 'the seed must be 0 to 2147483646';
  return null;
}

/** The address of these settings: the ones that differ from the defaults, and the view's log-scaled step axis. */
function settingsSearch(c) {
  const params = new URLSearchParams(Object.entries(c).filter(([k, v]) => v !== DEFAULTS[k]).map(([k, v]) => [k, String(v)]));
  if ($('log-steps').checked) params.set('logSteps', '1');
  return `?${params}`;
}

function updateAddress() {
  // threads= stays as asked (the same bits on any number of threads, so not a setting of the run)
  const settings = settingsSearch(config);
  const search = settings + (threadsAsked.threads ? `${settings === '?' ? '' : '&'}threads=${threadsAsked.threads}` : '');
  history.replaceState(null, '', search === '?' ? location.pathname : search);
}

/** Shows the controls and explanations of the task in use ([data-task] elements), hides the other's. */
function showTask() {
  for (const node of document.querySelectorAll('[data-task]')) node.hidden = node.dataset.task !== config.task;
  document.body.dataset.labTask = config.task; // (not data-task: that marks what showTask shows and hides)
}

/**
 * The address's `threads=`: how many threads to train on (lab-model.js), kept apart from the
 * settings because the package gives the same bits on any number. { threads } (undefined: the
 * lab's choice) or { error }.
 */
export function parseThreads(search) {
  const raw = new URLSearchParams(search).get('threads');
  if (raw === null) return { threads: undefined };
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isInteger(n) || n < 1 || n > 64) return { threads: undefined, error: `threads=${raw} is not a whole number from 1 to 64, so the lab chooses` };
  return { threads: n };
}
const threadsAsked = parseThreads(location.search);

/** The line under the controls: how many threads train, on which build, and why one when it is one. */
function showThreads({ threads, build, reason }) {
  const line = $('threads');
  line.dataset.threads = String(threads);
  line.dataset.build = build;
  line.textContent = (threads > 1 ? `Training on ${threads} threads (the package's threads build; this page is cross-origin isolated).`
    : `Training on 1 thread: ${reason}.`) + (threadsAsked.error ? ` (${threadsAsked.error}.)` : '');
  line.hidden = false;
}

function fillForm(c) {
  const form = $('settings');
  for (const [key, value] of Object.entries(c)) form.elements.namedItem(key).value = String(value);
}

function readForm() {
  const form = $('settings');
  const c = {};
  for (const key of Object.keys(DEFAULTS)) c[key] = CHOICES[key] ? form.elements.namedItem(key).value : Number(form.elements.namedItem(key).value);
  return c;
}

// ---- state ---------------------------------------------------------------------------------------

let config;
let worker;
let running = false;
let losses = { steps: [], repeated: [], other: [], total: [] };
let chart;
let snapshotSteps = [0];
let view = null;
let headMask = null;
let focus = { layer: 1, head: 0 }; // 0-based layer index of the focused heatmap
let loaded = false; // the worker has loaded the model ('ready')
let phaseChange = null; // the first step where the repeated-token loss falls below a quarter of the other's
let phasePause = null; // 'asked' when the lab paused itself at the phase change, 'shown' once it has said so

// ---- the worker ------------------------------------------------------------------------------

/**
 * How long the threads build may take to load and start its pool before the lab gives it up and
 * loads the single-threaded build in a new worker (the same bits, on one thread). Alone, it starts
 * in well under a second; once, in Firefox on a loaded 2-core machine, it never settled, and the
 * page said "Loading the model…" for ever. The pool's own workers have a shorter limit (threads.js).
 */
const THREADS_START_MS = 30000;

/** Starts the training worker on `threads` (the address's, or 1 when the threads build is given up: `fallback` says why). */
function startWorker(threads = threadsAsked.threads, fallback = null) {
  worker = new Worker(new URL('./lab.worker.js', import.meta.url), { type: 'module' });
  const own = worker;
  const giveUp = (why) => {
    if (loaded || worker !== own) return;
    own.terminate();
    startWorker(1, `${why}, so the lab uses the single-threaded build`);
  };
  // loadModel reports stages only on the threads build's path, so the first one arms the limit: a
  // single-threaded build it picked itself (one core, no nested Worker) is never given up
  let watchdog = null;
  worker.onmessage = ({ data }) => {
    if (data.type === 'ready') {
      clearTimeout(watchdog);
      loaded = true;
      showThreads(fallback ? { ...data.threads, reason: fallback } : data.threads);
      resetRun();
    } else if (data.type === 'stage') {
      watchdog ??= setTimeout(() => giveUp(`the threads build did not start within ${THREADS_START_MS / 1000} s`), THREADS_START_MS);
      if (!loaded) $('status').textContent = `Loading the model… (${data.text})`;
    } else if (data.type === 'losses') addLosses(data.rows);
    else if (data.type === 'snapshots') updateScrubber(data.steps);
    else if (data.type === 'circuitTrace') addCircuitTrace(data.rows);
    else if (data.type === 'view') showView(data);
    else if (data.type === 'sample') showSample(data);
    else if (data.type === 'error' && !loaded && watchdog !== null) giveUp(`the threads build did not load (${data.message})`);
    else if (data.type === 'error') {
      setRunning(false);
      $('status').textContent = `The model stopped: ${data.message}`;
      $('status').classList.add('error');
    }
  };
  worker.onerror = (event) => { $('status').textContent = `The training worker failed: ${event.message}`; };
  worker.postMessage({ type: 'load', threads });
}

function resetRun() {
  setRunning(false);
  losses = { steps: [], repeated: [], other: [], total: [] };
  snapshotSteps = [0];
  headMask = null;
  phaseChange = null;
  phasePause = null;
  $('phase-change').hidden = true;
  $('scrubber').closest('.scrub').classList.remove('pointed');
  view = null;
  focus = { layer: Math.min(1, config.layers - 1), head: 0 };
  document.body.dataset.step = '0';
  showTask();
  drawChart();
  resetCircuitTrace($('log-steps').checked);
  $('status').classList.remove('error');
  $('status').textContent = loaded ? 'Ready: press Train.' : 'Loading the model…';
  $('one-layer').textContent = config.layers === 1 ? 'Back to two layers' : 'Try a one-layer model';
  worker.postMessage({ type: 'reset', config });
  worker.postMessage({ type: 'focus', focus });
}

function setRunning(on) {
  running = on;
  // Train, Step and Reset wait for the model: a click before it has loaded would be lost
  $('train').disabled = on || !loaded;
  $('step').disabled = !loaded;
  $('reset').disabled = !loaded;
  $('pause').disabled = !on;
  document.body.dataset.running = on ? 'yes' : 'no';
}

// ---- loss chart --------------------------------------------------------------------------------

function addLosses(rows) {
  for (const [step, total, repeated, other] of rows) {
    losses.steps.push(step);
    losses.total.push(total);
    losses.repeated.push(repeated);
    losses.other.push(other);
  }
  // the phase change: a smoothed repeated-token loss below a quarter of the other's
  if (config.task === 'induction' && phaseChange === null && losses.steps.length >= 10) {
    const mean = (a) => a.slice(-10).reduce((s, x) => s + x, 0) / 10;
    if (mean(losses.repeated) < mean(losses.other) / 4) {
      phaseChange = losses.steps.at(-1);
      // stop here so the learner can look (the worker finishes its current ~150 ms of steps)
      if (running && $('pause-at-phase-change').checked) { phasePause = 'asked'; worker.postMessage({ type: 'pause' }); }
    }
  }
  const started = performance.now();
  chart?.setData([losses.steps, losses.repeated, losses.other]);
  performance.measure('lab:chart', { start: started, end: performance.now() });
  const n = losses.steps.length;
  if (n) {
    $('loss-summary').dataset.step = String(losses.steps[n - 1]);
    $('loss-summary').dataset.loss = String(losses.total[n - 1]);
    $('loss-summary').textContent = `Step ${losses.steps[n - 1]}: ${repeatedWord()} ${formatNumber(losses.repeated[n - 1])}, others ${formatNumber(losses.other[n - 1])}`
      + (phaseChange !== null ? `; the repeated-token loss fell below a quarter of the others' at step ${phaseChange}.` : '.');
  }
}

function drawChart() {
  const box = $('loss-chart');
  chart?.destroy();
  const log = $('log-steps').checked;
  const width = Math.max(260, box.clientWidth || 600);
  chart = new uPlot({
    width,
    height: 240,
    scales: { x: log ? { time: false, distr: 3 } : { time: false }, y: { range: (u, min, max) => [0, Math.max(max ?? 1, 0.5)] } },
    axes: [{ label: 'step', stroke: '#1b1f24' }, { label: 'loss', stroke: '#1b1f24' }],
    series: [
      { label: 'step' },
      { label: repeatedWord(), stroke: LOSS_COLOURS.repeated, width: 2, value: (u, v) => (v == null ? '–' : v.toFixed(3)) },
      { label: 'others', stroke: LOSS_COLOURS.other, width: 2, dash: [6, 3], value: (u, v) => (v == null ? '–' : v.toFixed(3)) },
    ],
    legend: { live: true },
  }, [losses.steps, losses.repeated, losses.other], box);
  box.dataset.stepDistr = String(chart.scales.x.distr); // 1 linear, 3 log (uPlot's scale distr), for the tests
}

// ---- head scores, ablation ---------------------------------------------------------------------

function maskOf() {
  return headMask ?? Array.from({ length: config.layers }, () => Array(config.heads).fill(true));
}

function toggleHead(layer, head) {
  const mask = maskOf().map((row) => [...row]);
  mask[layer][head] = !mask[layer][head];
  headMask = mask.flat().every(Boolean) ? null : mask;
  worker.postMessage({ type: 'mask', headMask });
}

// The table is rebuilt only when its shape, the ablated heads or the focused head change; otherwise
// each view updates the numbers in place (less layout work while training).
let scoreTable = null; // { signature, cells: [layer][head] → { td, parts: { key: [bar, value] } } }

function renderScores(v) {
  const table = $('head-scores');
  const mask = maskOf();
  const signature = JSON.stringify([v.scores.length, v.scores[0].length, mask, focus]);
  if (scoreTable?.signature !== signature) {
    const cells = [];
    // explicit roles: on a phone the table is laid out as a grid (styles.css), which would drop its table semantics
    const head = el('tr', { role: 'row' }, el('th', { scope: 'col', role: 'columnheader' }, el('span', { class: 'visually-hidden' }, 'layer')),
      Array.from({ length: config.heads }, (_, h) => el('th', { scope: 'col', role: 'columnheader' }, `head ${h}`)));
    const rows = v.scores.map((layer, l) => el('tr', { role: 'row' }, el('th', { scope: 'row', role: 'rowheader' }, `layer ${l + 1}`),
      layer.map((s, h) => {
        const off = mask[l]?.[h] === false;
        const parts = {};
        const td = el('td', {
          class: `head-cell${off ? ' ablated' : ''}${focus.layer === l && focus.head === h ? ' focused' : ''}`,
          'data-layer': String(l + 1), 'data-head': String(h), role: 'cell',
        }, el('button', {
          // the name is the visible text with its context (axe: label-content-name-mismatch); pressed = switched off
          type: 'button', class: 'head-toggle', 'aria-pressed': String(off),
          onclick: () => toggleHead(l, h),
        }, el('span', { class: 'visually-hidden' }, `Switch off layer ${l + 1}, `), el('span', { class: 'cell-head' }, `head ${h}`),
        el('span', { class: 'visually-hidden' }, ': '),
        SCORES.map(([key, short]) => {
          parts[key] = [el('span', { style: { background: SCORE_COLOURS[key] } }), el('span', { class: 'score-value' })];
          return el('span', { class: 'score' }, el('span', { class: 'score-name' }, short),
            el('span', { class: 'bar', 'aria-hidden': 'true' }, parts[key][0]), parts[key][1]);
        }),
        off ? el('span', { class: 'off-tag' }, 'switched off') : null));
        (cells[l] ??= [])[h] = { td, parts };
        return td;
      })));
    table.setAttribute('role', 'table');
    table.replaceChildren(el('caption', { class: 'visually-hidden' }, 'Head scores by layer and head'), el('thead', { role: 'rowgroup' }, head), el('tbody', { role: 'rowgroup' }, rows));
    scoreTable = { signature, cells };
  }
  v.scores.forEach((layer, l) => layer.forEach((s, h) => {
    const { td, parts } = scoreTable.cells[l][h];
    td.dataset.previousToken = String(s.previousToken);
    td.dataset.induction = String(s.induction);
    td.dataset.firstToken = String(s.firstToken);
    td.dataset.self = String(s.self);
    td.title = `layer ${l + 1}, head ${h}: ${SCORES.map(([key, , name]) => `${name} ${formatNumber(s[key])}`).join(', ')}`;
    for (const [key] of SCORES) {
      parts[key][0].style.width = `${Math.round(100 * Math.min(1, Math.max(0, s[key])))}%`;
      parts[key][1].textContent = s[key].toFixed(2);
    }
  }));
  const ablation = $('ablation');
  if (v.ablatedLoss) {
    const off = v.headMask.flatMap((row, l) => row.map((on, h) => (on ? null : `layer ${l + 1} head ${h}`))).filter(Boolean);
    ablation.textContent = `With ${off.join(', ')} switched off, the loss on a fixed batch goes from ${formatNumber(v.evalLoss.repeated)} to ${formatNumber(v.ablatedLoss.repeated)} on the ${repeatedWord()} tokens and from ${formatNumber(v.evalLoss.other)} to ${formatNumber(v.ablatedLoss.other)} on the others.`;
    ablation.dataset.repeated = String(v.evalLoss.repeated);
    ablation.dataset.other = String(v.evalLoss.other);
    ablation.dataset.ablatedRepeated = String(v.ablatedLoss.repeated);
  } else {
    ablation.textContent = `Loss on a fixed batch: ${formatNumber(v.evalLoss.repeated)} on the ${repeatedWord()} tokens, ${formatNumber(v.evalLoss.other)} on the others.`;
    ablation.dataset.repeated = String(v.evalLoss.repeated);
    ablation.dataset.other = String(v.evalLoss.other);
    delete ablation.dataset.ablatedRepeated;
  }
}

// ---- heatmaps ---------------------------------------------------------------------------------------

// cividis as 256 [r, g, b] entries, computed once: a heatmap is thousands of cells, many times a second
const CIVIDIS = Array.from({ length: 256 }, (_, i) => heatColour(i / 255).match(/\d+/g).map(Number));
const MASKED = [238, 238, 238];

/** The weights [T][T] as a T × T image, one pixel per weight (the causal mask's cells grey). */
function weightsImage(weights) {
  const T = weights.length;
  const image = new ImageData(T, T);
  for (let i = 0; i < T; i++) {
    const row = weights[i];
    for (let j = 0; j < T; j++) {
      const [r, g, b] = j > i ? MASKED : CIVIDIS[Math.round(255 * Math.min(1, Math.max(0, row[j])))];
      const o = 4 * (i * T + j);
      image.data[o] = r; image.data[o + 1] = g; image.data[o + 2] = b; image.data[o + 3] = 255;
    }
  }
  return image;
}

function paint(canvas, weights) {
  canvas.width = weights.length;
  canvas.height = weights.length;
  canvas.getContext('2d').putImageData(weightsImage(weights), 0, 0);
}

function headSummary(v, l, h) {
  const s = v.scores[l][h];
  return `layer ${l + 1}, head ${h}: previous-token score ${s.previousToken.toFixed(2)}, induction score ${s.induction.toFixed(2)}, first-token ${s.firstToken.toFixed(2)}, self ${s.self.toFixed(2)}`;
}

// Thumbnails: rebuilt when the shape, the ablated heads or the focus change; repainted otherwise.
let thumbnails = null; // { signature, canvases: [layer][head], buttons: [layer][head] }

function renderHeatmaps(v) {
  const box = $('heatmaps');
  const mask = maskOf();
  const signature = JSON.stringify([v.weights.length, v.weights[0].length, mask, focus]);
  if (thumbnails?.signature !== signature) {
    const canvases = [];
    const buttons = [];
    box.replaceChildren(...v.weights.map((layer, l) => el('div', { class: 'heat-row' },
      el('span', { class: 'heat-layer' }, `layer ${l + 1}`),
      layer.map((w, h) => {
        const canvas = el('canvas', { 'aria-hidden': 'true' });
        (canvases[l] ??= [])[h] = canvas;
        const button = el('button', {
          type: 'button', class: `heat-thumb${mask[l]?.[h] === false ? ' ablated' : ''}`, 'aria-pressed': String(focus.layer === l && focus.head === h),
          'data-layer': String(l + 1), 'data-head': String(h),
          style: { borderColor: HEAD_COLOURS[h % HEAD_COLOURS.length] },
          onclick: () => { focus = { layer: l, head: h }; worker.postMessage({ type: 'focus', focus }); renderHeatmaps(view); renderScores(view); },
        }, canvas, el('span', {}, `head ${h}`));
        (buttons[l] ??= [])[h] = button;
        return button;
      }))));
    thumbnails = { signature, canvases, buttons };
  }
  v.weights.forEach((layer, l) => layer.forEach((w, h) => {
    paint(thumbnails.canvases[l][h], w);
    thumbnails.buttons[l][h].setAttribute('aria-label', `Show ${headSummary(v, l, h)} larger`);
  }));
  renderFocus(v);
}

let focusView = null; // { signature, canvas, hint, link, sequence }: rebuilt when the focused head, T or the map's size changes

/** The smallest label the large map draws, in CSS pixels (smaller cells label every k-th position). */
const LABEL_PX = 10;

/**
 * The large map's geometry for T positions in `available` CSS pixels: the cell size (fit to the
 * card, 4–14 px), which positions get a label (every one when a label fits in a cell, else every k-th)
 * and the label font. The key labels are drawn turned a quarter, so two keys' labels never overlap
 * however long they are; the margins fit the longest label.
 */
function focusLayout(T, available, longest) {
  const marginFor = (font) => Math.ceil(font * 0.62 * longest) + 8; // a monospace glyph is about 0.6 em wide
  const cell = Math.max(4, Math.min(14, Math.floor((available - marginFor(12)) / T)));
  const font = Math.min(12, Math.max(LABEL_PX, cell - 2));
  return { cell, font, margin: marginFor(font) };
}

/**
 * How far two neighbouring labels can reach towards each other across the key axis when turned a
 * quarter: the largest ascent of any label plus the largest descent of any (ink, CSS px; a comma sits
 * low, a quote high, so they are taken apart).
 */
function labelThickness(labels, font) {
  const context = document.createElement('canvas').getContext('2d');
  context.font = `${font}px "IBM Plex Mono", monospace`;
  context.textBaseline = 'middle';
  const ink = labels.map((text) => context.measureText(text));
  return Math.max(...ink.map((m) => m.actualBoundingBoxAscent)) + Math.max(...ink.map((m) => m.actualBoundingBoxDescent));
}

function renderFocus(v) {
  const { layer: l, head: h } = focus;
  const w = v.weights[l]?.[h];
  if (!w) { $('focus').replaceChildren(); focusView = null; return; }
  const T = w.length;
  const labels = v.tokens.map((t) => tokenLabel(v, t));
  const available = $('focus').clientWidth || 600;
  const { cell, font, margin } = focusLayout(T, available, Math.max(...labels.map((s) => s.length)));
  // every position labelled when a turned label leaves 2 px to the next, else every k-th
  const every = Math.ceil((labelThickness(labels, font) + 2) / cell);
  const size = margin + T * cell;
  const signature = JSON.stringify([l, h, T, size]);
  if (focusView?.signature !== signature) {
    const canvas = el('canvas', { role: 'img' });
    const ratio = window.devicePixelRatio || 1;
    canvas.width = size * ratio;
    canvas.height = size * ratio;
    canvas.style.width = `${size}px`;
    canvas.getContext('2d').scale(ratio, ratio);
    const hint = el('p', { class: 'hint' });
    const link = el('div');
    const sequence = el('p', { class: 'sequence' });
    $('focus').replaceChildren(el('h3', {}, `Layer ${l + 1}, head ${h}`), hint, link,
      el('div', { class: 'focus-canvas', role: 'region', 'aria-label': `Layer ${l + 1}, head ${h} heatmap`, tabindex: '0' }, canvas), sequence);
    focusView = { signature, canvas, hint, link, sequence };
  }
  const { canvas, hint, link, sequence } = focusView;
  canvas.setAttribute('aria-label', `Attention weights of ${headSummary(v, l, h)}, on the sequence ${labels.join(' ')}`);
  const what = v.vocabulary ? 'Characters' : 'Tokens';
  hint.textContent = `${headSummary(v, l, h)}. ${what} label the rows (queries) and columns (keys)${every > 1 ? `, every ${['', '', 'other', 'third', 'fourth', 'fifth'][every] ?? `${every}th`} position on this screen (the whole sequence, by position, is under the map)` : ''}; `
    + `${v.vocabulary ? '␣ is a space, ↵ a new line.' : 'B is the beginning token.'}`;
  // when the map labels only every k-th position: the whole sequence under it, each token under its
  // position, readable on any screen
  sequence.hidden = every === 1;
  sequence.replaceChildren(...(every === 1 ? [] : [el('span', { class: 'visually-hidden' }, 'The sequence, by position: '),
    ...labels.map((text, i) => el('span', { class: `seq-token${i % every === 0 ? ' labelled' : ''}` }, el('span', { class: 'seq-position' }, String(i)), el('span', { class: 'seq-text' }, text)))]));
  link.replaceChildren(walkthroughLink(v, l, h));
  const context = canvas.getContext('2d');
  context.fillStyle = '#fff';
  context.fillRect(0, 0, size, size);
  const small = document.createElement('canvas');
  paint(small, w);
  context.imageSmoothingEnabled = false;
  context.drawImage(small, margin, margin, T * cell, T * cell);
  context.fillStyle = '#1b1f24';
  context.font = `${font}px "IBM Plex Mono", monospace`;
  context.textBaseline = 'middle';
  const drawn = [];
  labels.forEach((text, i) => {
    if (i % every !== 0) return;
    const centre = margin + i * cell + cell / 2;
    // queries down the side, right-aligned against the map
    context.textAlign = 'right';
    context.fillText(text, margin - 4, centre);
    // keys along the top, turned a quarter (read bottom to top), ending just above the map
    context.save();
    context.translate(centre, margin - 4);
    context.rotate(-Math.PI / 2);
    context.textAlign = 'left';
    context.fillText(text, 0, 0);
    context.restore();
    // what a turned label covers across the key axis: its glyphs' height (for the tests, in CSS pixels)
    const m = context.measureText(text);
    drawn.push([i, centre - m.actualBoundingBoxAscent, centre + m.actualBoundingBoxDescent]); // turned: the ascent points left
  });
  canvas.dataset.labels = JSON.stringify({ font, cell, every, size, keys: drawn });
}

/** A link into the walkthrough with this head's own Q, K and V on a short sequence (lab.worker.js). */
function walkthroughLink(v, l, h) {
  const w = v.walkthrough;
  if (!w || w.layer !== l || w.head !== h) return el('p', { class: 'hint' }, 'Preparing this head for the walkthrough…');
  if (w.unavailable) return el('p', { class: 'hint' }, `Not in the walkthrough: ${w.unavailable}.`);
  const params = new URLSearchParams({
    Q: JSON.stringify(w.Q), K: JSON.stringify(w.K), V: JSON.stringify(w.V), numberOfHeads: '1', causal: '1', step: 'weights',
    from: 'lab', labLayer: String(l + 1), labHead: String(h), labStep: String(v.viewStep), labTask: config.task, tokens: w.tokens.map((t) => tokenLabel(v, t)).join(' '),
  });
  // in the fragment: the matrices make the link ~25 KB, more than servers take in a request line
  return el('p', {}, el('a', { href: `./walkthrough.html#${params}`, id: 'open-walkthrough', target: '_blank', rel: 'noopener' },
    `Open layer ${l + 1}, head ${h} in the walkthrough`), ` (new tab): its own Q, K and V on the tokens ${w.tokens.map((t) => tokenLabel(v, t)).join(' ')}, step by step.`,
  el('span', { class: 'hint', 'data-max-difference': String(w.maxDifference) }, ` The walkthrough's weights are within ${w.maxDifference.toExponential(1)} of this float32 model's.`));
}

// ---- per-position loss -------------------------------------------------------------------------------

/**
 * The loss of each next token on the example, as bars under their tokens, in rows as wide as the
 * card (on a phone the sequence wraps like a line of text, so nothing scrolls sideways).
 */
function renderPerPosition(v) {
  const values = v.perPosition; // values[t]: the loss of predicting token t + 1
  const bar = 14;
  const axis = 36;
  const height = 100;
  const rowHeight = height + 30;
  const available = $('per-position').clientWidth || 600;
  const perRow = Math.max(8, Math.min(values.length, Math.floor((available - axis - 4) / bar)));
  const rows = Math.ceil(values.length / perRow);
  const top = Math.max(1, ...values.map((x) => (Number.isFinite(x) ? x : 0)));
  const svgNS = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(svgNS, 'svg');
  const width = axis + perRow * bar + 4;
  svg.setAttribute('viewBox', `0 0 ${width} ${rows * rowHeight}`);
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', String(rows * rowHeight));
  svg.setAttribute('role', 'img');
  const word = repeatedWord();
  const repeatedMean = mean(values.filter((_, t) => v.repeatedPositions[t + 1]));
  const otherMean = mean(values.filter((_, t) => !v.repeatedPositions[t + 1]));
  svg.setAttribute('aria-label', `Loss of each next ${v.vocabulary ? 'character' : 'token'} on the example sequence: mean ${formatNumber(repeatedMean)} on ${word} ones, ${formatNumber(otherMean)} on the others`);
  const add = (tag, attrs, text) => {
    const node = document.createElementNS(svgNS, tag);
    for (const [k, x] of Object.entries(attrs)) node.setAttribute(k, String(x));
    if (text !== undefined) node.textContent = text;
    svg.append(node);
    return node;
  };
  for (let r = 0; r < rows; r++) {
    const y0 = r * rowHeight;
    add('line', { x1: axis - 2, x2: axis - 2, y1: y0 + 4, y2: y0 + height + 4, stroke: '#6b7480' });
    add('text', { x: axis - 6, y: y0 + 12, 'font-size': 10, 'text-anchor': 'end', fill: '#4a5563' }, top.toFixed(1));
    add('text', { x: axis - 6, y: y0 + height + 4, 'font-size': 10, 'text-anchor': 'end', fill: '#4a5563' }, '0');
  }
  values.forEach((x, t) => {
    const repeated = v.repeatedPositions[t + 1];
    const h = Number.isFinite(x) ? (x / top) * height : 0;
    const y0 = Math.floor(t / perRow) * rowHeight;
    const x0 = axis + (t % perRow) * bar;
    const rect = add('rect', { x: x0, y: y0 + height - h + 4, width: bar - 2, height: h, fill: repeated ? LOSS_COLOURS.repeated : LOSS_COLOURS.other });
    const title = document.createElementNS(svgNS, 'title');
    title.textContent = `position ${t + 1}, ${v.vocabulary ? 'character' : 'token'} ${tokenLabel(v, v.tokens[t + 1])}${repeated ? ` (${word})` : ''}: loss ${formatNumber(x)}`;
    rect.append(title);
    add('text', { x: x0 + (bar - 2) / 2, y: y0 + height + 18, 'font-size': v.vocabulary ? 11 : 9, 'text-anchor': 'middle', fill: '#1b1f24' }, tokenLabel(v, v.tokens[t + 1]));
  });
  $('per-position').replaceChildren(
    el('p', { class: 'hint' }, `The loss of predicting each ${v.vocabulary ? 'character' : 'token'} from the ones before it (`,
      el('span', { class: 'key key-repeated' }, word), ', ', el('span', { class: 'key key-other' }, v.vocabulary ? 'not copyable' : 'first time round'), ').'),
    svg, v.vocabulary ? repeatSummary(v) : '');
}

/**
 * On the text's example window: the mean loss of the characters of "Do cats eat bats?" (after its D)
 * the first time and the second; and the loss on random characters repeated (not the chapter's), the
 * first time and the repeat. Only the second tells copying from memory: the passage's second time can
 * be cheaper because the model knows this chapter by heart.
 */
function repeatSummary(v) {
  const phrase = 'Do cats eat bats?';
  const string = v.tokens.map((t) => v.vocabulary[t]).join('');
  const first = string.indexOf(phrase);
  const second = string.indexOf(phrase, first + 1);
  if (first < 0 || second < 0 || second + phrase.length > string.length || !v.copyTest) return '';
  // losses[t - 1] is the loss of predicting the character at t
  const cost = (start) => mean(v.perPosition.slice(start, start + phrase.length - 1));
  const [a, b] = [cost(first), cost(second)];
  const { other: once, repeated: again } = v.copyTest;
  const copies = again < once / 2;
  return el('p', { id: 'repeat-summary', 'data-first': String(a), 'data-second': String(b), 'data-random-first': String(once), 'data-random-repeat': String(again) },
    `“${phrase}” costs ${formatNumber(a)} a character the first time and ${formatNumber(b)} the second. `,
    `On random characters repeated (strings not in the chapter) the first time costs ${formatNumber(once)} and the repeat ${formatNumber(again)}: `,
    copies ? 'the model copies.'
      : `the repeat is no cheaper, so the model does not copy: what it knows is the text (which letters follow which, and much of this chapter by heart${b < a / 2 ? ', which is why the passage is cheaper the second time' : ''}).`);
}

const mean = (a) => (a.length ? a.reduce((s, x) => s + x, 0) / a.length : NaN);

// ---- the scrubber, the status, the lesson's numbers -----------------------------------------------

function updateScrubber(steps) {
  snapshotSteps = steps;
  const scrubber = $('scrubber');
  const atLive = Number(scrubber.value) >= Number(scrubber.max);
  scrubber.max = String(steps.length); // the last position is the live model
  if (atLive) scrubber.value = scrubber.max;
  scrubber.setAttribute('aria-valuetext', atLive ? 'live' : `snapshot at step ${steps[Number(scrubber.value)]}`);
}

function scrubTo(index) {
  const live = index >= snapshotSteps.length;
  worker.postMessage({ type: 'show', step: live ? 'live' : snapshotSteps[index] });
  $('live').disabled = live;
  $('scrubber').setAttribute('aria-valuetext', live ? 'live' : `snapshot at step ${snapshotSteps[index]}`);
}

let frame = null;
/** Views can arrive faster than they are worth drawing: draw the latest, once per frame. */
function showView(v) {
  // weights: per layer { data, shape: [1, h, T, T] } → [layer][head][t] rows (views, no copies)
  v.weights = v.weights.map(({ data, shape: [, h, T] }) => Array.from({ length: h }, (_, i) => Array.from({ length: T }, (_, t) => data.subarray((i * T + t) * T, (i * T + t + 1) * T))));
  view = v;
  setRunning(v.running);
  // (a reset in between sets view to null: nothing to draw then)
  frame ??= requestAnimationFrame(() => { frame = null; if (view) drawView(view); });
}

function drawView(v) {
  setRunning(v.running);
  document.body.dataset.step = String(v.step);
  document.body.dataset.viewStep = String(v.viewStep);
  $('scrubber-label').textContent = v.live ? `live, step ${v.step}` : `step ${v.viewStep} of ${v.step}`;
  $('live').disabled = v.live;
  if (!v.live && running) $('scrubber-label').textContent += ' (training continues)';
  const best = bestInduction(v);
  $('status').textContent = `${v.running ? 'Training' : v.step ? 'Paused' : 'Ready'} · step ${v.step}`
    + (config.task === 'text' ? ` · loss ${formatNumber(v.evalLoss.repeated)} on copyable characters, ${formatNumber(v.evalLoss.other)} on the others`
      : best ? ` · best induction score ${best.score.toFixed(2)} (layer ${best.layer + 1}, head ${best.head})` : '');
  // each part timed (performance.measure 'lab:…'), so a slow frame can be traced to its view
  for (const [name, render] of [['scores', renderScores], ['heatmaps', renderHeatmaps], ['positions', renderPerPosition], ['your-run', (x) => renderYourRun(x, best)],
    ['circuits', (x) => renderCircuits(x, { labelOf: (t) => tokenLabel(x, t), word: x.vocabulary ? 'character' : 'token', repeatedWord: repeatedWord() })]]) {
    const started = performance.now();
    render(v);
    performance.measure(`lab:${name}`, { start: started, end: performance.now() });
  }
  if (phasePause === 'asked' && !v.running && v.live) showPhaseChange(v, best);
}

/**
 * The lab paused itself at the phase change: say what just happened beside the chart, point to the
 * scrubber, and bring the chart and the head scores into view.
 */
function showPhaseChange(v, best) {
  phasePause = 'shown';
  const n = losses.steps.length;
  const box = $('phase-change');
  box.dataset.step = String(v.step);
  box.replaceChildren(
    el('p', {}, el('strong', {}, `Paused at step ${v.step}: the phase change. `),
      `Around step ${phaseChange} the loss on the repeated tokens fell below a quarter of the others' (now ${formatNumber(losses.repeated[n - 1])} against ${formatNumber(losses.other[n - 1])}): `
      + `an induction head has formed. Layer ${best.layer + 1}, head ${best.head} now scores ${best.score.toFixed(2)} for induction: at a token seen before, it looks at the token that came after the earlier copy, and the model copies it.`),
    el('p', {}, 'To watch it form, drag the ', el('a', { href: '#scrubber', id: 'phase-to-scrubber' }, 'Snapshot slider'),
      ' (above the head scores) back a few snapshots, then forward again. Press Train to go on.'));
  box.hidden = false;
  $('scrubber').closest('.scrub').classList.add('pointed');
  $('phase-to-scrubber').addEventListener('click', (event) => { event.preventDefault(); $('scrubber').focus(); });
  // in view together: this sentence (beside the chart on a wide screen), the chart and the best head's scores
  const cell = document.querySelector(`#head-scores td[data-layer="${best.layer + 1}"][data-head="${best.head}"]`) ?? $('head-scores');
  const rects = [box, $('loss-chart'), cell].map((e) => e.getBoundingClientRect());
  const top = Math.min(...rects.map((r) => r.top));
  const bottom = Math.max(...rects.map((r) => r.bottom));
  window.scrollBy({ top: (bottom - top <= innerHeight - 16 ? top - 8 : box.getBoundingClientRect().top - 8), behavior: 'instant' });
}

function bestInduction(v) {
  let best = null;
  v.scores.forEach((layer, l) => layer.forEach((s, h) => { if (!best || s.induction > best.score) best = { score: s.induction, layer: l, head: h }; }));
  return best;
}

function renderYourRun(v, best) {
  let prev = null;
  v.scores.forEach((layer, l) => layer.forEach((s, h) => { if (!prev || s.previousToken > prev.score) prev = { score: s.previousToken, layer: l, head: h }; }));
  const text = [`In your run at step ${v.viewStep}, the strongest previous-token head is layer ${prev.layer + 1}, head ${prev.head} (score ${prev.score.toFixed(2)}),`,
    `and the strongest induction head is layer ${best.layer + 1}, head ${best.head} (score ${best.score.toFixed(2)}).`,
    config.task === 'text'
      ? `On fixed windows of the text the loss is ${formatNumber(v.evalLoss.repeated)} on copyable characters and ${formatNumber(v.evalLoss.other)} on the others (guessing uniformly among the ${v.vocabulary.length} characters: ln ${v.vocabulary.length} = ${formatNumber(Math.log(v.vocabulary.length))}).`
      : `On a fixed batch the loss is ${formatNumber(v.evalLoss.repeated)} on repeated tokens and ${formatNumber(v.evalLoss.other)} on the others (ln(${config.vocab - 1}) = ${formatNumber(Math.log(config.vocab - 1))}).`];
  if (phaseChange !== null) text.push(`The phase change came at about step ${phaseChange}.`);
  $('your-run').textContent = text.join(' ');
}

// ---- the text model's writing ------------------------------------------------------------------

function showSample({ prompt, text, step: at, temperature }) {
  const out = $('sample-output');
  out.replaceChildren(el('span', { class: 'sample-prompt' }, prompt), el('span', { class: 'sample-text' }, text));
  out.dataset.text = text;
  out.dataset.step = String(at);
  out.setAttribute('aria-label', `At step ${at}, ${Number(temperature) ? `temperature ${temperature}` : 'most likely characters'}: ${prompt}${text}`);
  $('sample-write').disabled = false;
}

function requestSample(event) {
  event.preventDefault();
  const prompt = $('sample-prompt').value;
  const outside = [...prompt].find((c) => !view?.vocabulary?.includes(c));
  const problem = [...prompt].length < 2 ? 'The prompt needs at least 2 characters.'
    : outside !== undefined ? `The character ${JSON.stringify(outside)} is not in the chapter, so the model has no token for it.` : null;
  $('sample-error').hidden = !problem;
  $('sample-error').textContent = problem ?? '';
  if (problem) return;
  $('sample-write').disabled = true;
  worker.postMessage({ type: 'sample', prompt, length: 200, temperature: Number($('sample-temperature').value) });
}

// ---- start ---------------------------------------------------------------------------------------

function applySettings(next) {
  const problem = checkSettings(next);
  $('settings-error').hidden = !problem;
  $('settings-error').textContent = problem ?? '';
  if (problem) return;
  config = next;
  updateAddress();
  resetRun();
}

function start() {
  // the explanation beside the chart, the one of the task in use (showTask)
  const lesson = (html, task) => Object.assign(el('div', { 'data-task': task }), { innerHTML: html });
  $('lesson').replaceChildren(lesson(lessonHtml, 'induction'), lesson(textLessonHtml, 'text'),
    el('h3', {}, 'Your run'), el('p', { id: 'your-run' }, 'Press Train: the numbers of your own run appear here.'));
  const parsed = parseSettings(location.search);
  config = parsed.config;
  if (parsed.error) {
    $('settings-error').hidden = false;
    $('settings-error').textContent = `The address asks for a setting the lab refuses (${parsed.error}), so the default settings are used.`;
  }
  fillForm(config);
  $('log-steps').checked = new URLSearchParams(location.search).get('logSteps') === '1';
  showTask();
  $('settings').addEventListener('change', () => applySettings(readForm()));
  $('settings').addEventListener('submit', (e) => e.preventDefault());
  $('train').addEventListener('click', () => {
    $('scrubber').closest('.scrub').classList.remove('pointed');
    setRunning(true);
    worker.postMessage({ type: 'train' });
  });
  $('pause').addEventListener('click', () => { worker.postMessage({ type: 'pause' }); });
  $('step').addEventListener('click', () => worker.postMessage({ type: 'step' }));
  $('reset').addEventListener('click', () => resetRun());
  $('one-layer').addEventListener('click', () => {
    const next = { ...config, layers: config.layers === 1 ? 2 : 1 };
    fillForm(next);
    applySettings(next);
  });
  $('log-steps').addEventListener('change', () => { updateAddress(); drawChart(); drawTraceChart($('log-steps').checked); });
  $('sample-form').addEventListener('submit', requestSample);
  $('scrubber').addEventListener('input', (e) => scrubTo(Number(e.target.value)));
  $('live').addEventListener('click', () => { $('scrubber').value = $('scrubber').max; scrubTo(Number($('scrubber').max)); });
  let resizeTimer;
  addEventListener('resize', () => { clearTimeout(resizeTimer); resizeTimer = setTimeout(() => { chart?.setSize({ width: Math.max(260, $('loss-chart').clientWidth), height: 240 }); resizeCircuits(); if (view) { renderPerPosition(view); renderFocus(view); } }, 100); });
  drawChart();
  startWorker();
}

start();
