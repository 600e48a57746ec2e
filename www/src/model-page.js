// The real-model page (issue 31): choose a checkpoint (a hub repo or local files), download it with
// progress into Cache Storage (model-hub.js), tokenize with @huggingface/tokenizers, and draw what
// model.worker.js computes: every head's pattern, one head enlarged, the head detectors, the next-token
// predictions and the logit lens, ablation and streaming generation.
//
// Tokenizer: @huggingface/tokenizers (Hugging Face's own JavaScript tokenizers, the ones transformers.js
// uses; zero dependencies, about 11.5 KB gzipped) reads tokenizer.json as the hub ships it, byte-level BPE
// included, so GPT-2's and SmolLM2's tokenizers need no code of ours.
import { Tokenizer } from '@huggingface/tokenizers';
import lessonHtml from './model-lesson.md?lesson';
import { el, heatColour } from './common.js';
import { DETECTORS, rankHeads } from './model-detectors.js';
import { MAX_THREADS } from './lab-model.js';
import { DEFAULT_HUB, FILES, PRESETS, hubBase, checkRepo, fileSizes, cachedModel, download, keptModels, deleteModel, megabytes } from './model-hub.js';

const $ = (id) => document.getElementById(id);
const EXAMPLE = 'When Mary and John went to the store, John gave a drink to Mary. When Mary and John went to the park, John gave a ball to';
const WALKTHROUGH_TOKENS = 12; // the walkthrough shows at most 25 rows; a dozen tokens keep its pages readable
const DETECTOR_NAMES = { previousToken: 'previous-token', induction: 'induction', duplicateToken: 'duplicate-token', firstToken: 'first-token' };

const params = new URLSearchParams(location.search);
let hub = DEFAULT_HUB;
let worker = null;
let calls = 0;
const waiting = new Map();
let tokenizer = null;
let model = null; // { name, info }
let tokens = [];
let analysis = null;
let probe = null;
let mask = null; // [layer][head] false = ablated
let focus = { layer: 0, head: 0 };
let position = null;
let abort = null;

// ---- the worker -----------------------------------------------------------------------------------

function call(type, data = {}, onToken) {
  worker ??= startWorker();
  const id = ++calls;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject, onToken });
    worker.postMessage({ id, type, ...data }, data.weights ? [data.weights] : []);
  });
}

function startWorker() {
  const w = new Worker(new URL('./model.worker.js', import.meta.url), { type: 'module', name: 'real-model' });
  w.onmessage = ({ data }) => {
    const job = waiting.get(data.id);
    if (!job) return;
    if (data.type === 'token' || data.type === 'stage') { job.onToken?.(data); return; }
    waiting.delete(data.id);
    if (data.type === 'done') job.resolve(data.result); else job.reject(new Error(data.message));
  };
  w.onerror = (event) => {
    event.preventDefault();
    for (const job of waiting.values()) job.reject(new Error(`the model's worker stopped: ${event.message ?? 'out of memory?'}; reload the page`));
    waiting.clear();
  };
  return w;
}

// ---- status ---------------------------------------------------------------------------------------

function status(text, kind = '') {
  $('status').textContent = text;
  $('status').className = `status ${kind}`.trim();
}

const seconds = (s) => (s < 90 ? `${Math.max(1, Math.round(s))} s` : `${Math.round(s / 60)} min`);

// ---- choosing and loading ---------------------------------------------------------------------------

function renderPresets(selected) {
  $('presets').replaceChildren(...PRESETS.map((p, i) => el('label', { class: 'preset' },
    el('input', { type: 'radio', name: 'preset', value: p.repo, checked: selected === p.repo || (!selected && i === 0) }), ` ${p.label} `, el('code', {}, p.repo))));
}

function chosenRepo() {
  const other = $('repo').value.trim();
  return other || document.querySelector('input[name="preset"]:checked')?.value;
}

async function choose(repo) {
  try {
    checkRepo(repo);
  } catch (error) { status(error.message, 'error'); return; }
  $('offer').hidden = true;
  const url = new URL(location.href);
  url.searchParams.set('model', repo);
  if (hub !== DEFAULT_HUB) url.searchParams.set('hub', params.get('hub'));
  history.replaceState(null, '', url);
  const kept = await cachedModel(hub, repo).catch(() => null);
  if (kept) { await open(repo, kept, 'from this browser (no network)'); return; }
  status(`Asking ${hub} for the size of ${repo}…`);
  try {
    const sizes = await fileSizes(hub, repo);
    const total = FILES.reduce((a, f) => a + sizes[f], 0);
    $('download').textContent = `Download ${repo} (${megabytes(total)})`;
    $('offer-note').textContent = `config.json ${megabytes(sizes['config.json'])}, tokenizer.json ${megabytes(sizes['tokenizer.json'])}, model.safetensors ${megabytes(sizes['model.safetensors'])}; kept in this browser afterwards.`;
    $('offer').hidden = false;
    $('download').onclick = () => fetchModel(repo, sizes);
    status(`${repo} is ${megabytes(total)}. Nothing has been downloaded yet.`);
  } catch (error) {
    status(error.message, 'error');
  }
}

async function fetchModel(repo, sizes) {
  $('offer').hidden = true;
  $('downloading').hidden = false;
  abort = new AbortController();
  const started = performance.now();
  const show = ({ loaded, total }) => {
    const s = (performance.now() - started) / 1000;
    const rate = loaded / Math.max(s, 1e-3);
    $('progress').max = total;
    $('progress').value = loaded;
    $('progress-text').textContent = `${megabytes(loaded)} of ${megabytes(total)} · ${(rate / 1e6).toFixed(1)} MB/s · ${loaded < total ? `about ${seconds((total - loaded) / rate)} left` : 'done'}`;
  };
  show({ loaded: 0, total: FILES.reduce((a, f) => a + sizes[f], 0) });
  status(`Downloading ${repo}…`);
  try {
    const files = await download(hub, repo, sizes, { signal: abort.signal, onProgress: show });
    $('downloading').hidden = true;
    await renderKept();
    await open(repo, files, 'downloaded and kept in this browser');
  } catch (error) {
    $('downloading').hidden = true;
    if (error.name === 'AbortError') status(`The download of ${repo} was cancelled; nothing was kept.`, 'error');
    else if (error.cause?.['model.safetensors']) await open(repo, error.cause, `downloaded, but ${error.message.replace(/^the browser/, 'this browser')}`);
    else status(error.message, 'error');
    await renderKept();
  } finally {
    abort = null;
  }
}

async function open(name, files, how) {
  status(`Loading ${name} (${how})…`);
  try {
    const decoder = new TextDecoder();
    const config = JSON.parse(decoder.decode(files['config.json']));
    const tokenizerJson = JSON.parse(decoder.decode(files['tokenizer.json']));
    tokenizer = new Tokenizer(tokenizerJson, {});
    const started = performance.now();
    const info = await call('load', { config, weights: files['model.safetensors'], threadsWanted: threadsAsked() },
      ({ text }) => status(`Loading ${name} (${how}): ${text}…`));
    model = { name, info };
    mask = Array.from({ length: info.layers }, () => Array(info.heads).fill(true));
    focus = { layer: 0, head: 0 };
    status(`${name} is ready (${how}): ${info.kind}, ${info.layers} layers × ${info.heads} heads${info.kvHeads !== info.heads ? ` (${info.kvHeads} key/value heads)` : ''}, width ${info.width}, ${info.vocab.toLocaleString('en')} tokens; loaded in ${((performance.now() - started) / 1000).toFixed(1)} s.`, 'pass');
    $('threads').hidden = false;
    $('threads').textContent = info.threads > 1 ? `Running on ${info.threads} threads.` : `Running on one thread: ${(info.reason ?? '').replace('the lab uses', 'this page uses')}`;
    $('views').hidden = false;
    if (!$('text').value) $('text').value = EXAMPLE;
    probe = null;
    await run();
  } catch (error) {
    status(`${name} could not be loaded: ${error.message}`, 'error');
  }
}

/** `threads=` in the address: an integer 1 … MAX_THREADS, or undefined (the lab's default: the cores, at most 4). */
function threadsAsked() {
  const n = Number(params.get('threads'));
  return Number.isInteger(n) && n >= 1 && n <= MAX_THREADS ? n : undefined;
}

async function openLocal(fileList) {
  const byName = {};
  for (const file of fileList) {
    if (file.name.endsWith('.safetensors')) byName['model.safetensors'] = file;
    else if (file.name === 'config.json' || file.name === 'tokenizer.json') byName[file.name] = file;
  }
  const missing = FILES.filter((f) => !byName[f]);
  if (missing.length) { status(`Local files: ${missing.join(', ')} missing. Pick all three at once (config.json, model.safetensors, tokenizer.json).`, 'error'); return; }
  const files = {};
  for (const f of FILES) files[f] = await byName[f].arrayBuffer();
  await open(`local files (${byName['model.safetensors'].name})`, files, 'from this device');
}

async function renderKept() {
  const kept = await keptModels().catch(() => []);
  $('kept').replaceChildren(...(kept.length ? kept.map((m) => el('li', {},
    `${m.repo} (${megabytes(m.bytes)}${m.hub === DEFAULT_HUB ? '' : `, from ${m.hub}`}${m.complete ? '' : ', incomplete'}) `,
    el('button', { type: 'button', class: 'link', 'data-delete': m.repo, onclick: async () => { await deleteModel(m.hub, m.repo); await renderKept(); status(`${m.repo} was deleted from this browser.`); } }, `Delete ${m.repo}`)))
    : [el('li', {}, 'Nothing yet.')]));
}

// ---- the text ---------------------------------------------------------------------------------------

/** A token's text with spaces and new lines visible. */
const visible = (text) => text.replace(/ /g, '·').replace(/\n/g, '↵').replace(/\t/g, '⇥') || '∅';
const tokenText = (id) => visible(tokenizer.decode([id]));

function chip(id, i, extra = {}) {
  return el('button', { type: 'button', class: `chip${i === position ? ' chosen' : ''}`, 'data-index': String(i), 'aria-pressed': String(i === position), ...extra },
    el('span', { class: 'chip-text' }, tokenText(id)), el('span', { class: 'chip-id' }, String(id)));
}

async function run() {
  const text = $('text').value;
  const ids = tokenizer.encode(text, { add_special_tokens: false }).ids;
  const limit = Math.min(model.info.context, 256);
  if (ids.length < 2) { status('The text needs at least two tokens.', 'error'); return; }
  tokens = ids.slice(0, limit);
  if (ids.length > limit) status(`The text is ${ids.length} tokens; the page reads the first ${limit}.`, 'error');
  position = tokens.length - 1;
  $('run').disabled = true;
  try {
    analysis = await call('analyze', { tokens });
    renderChips();
    renderGrid();
    renderFocus();
    probe ??= await call('probe', {});
    renderDetectors();
    await renderAblation();
    await renderNext();
  } catch (error) {
    status(error.message, 'error');
  } finally {
    $('run').disabled = false;
  }
}

function renderChips() {
  $('chips').replaceChildren(...tokens.map((id, i) => chip(id, i, { onclick: () => { position = i; renderChips(); renderNext(); } })));
  $('loss').textContent = `${tokens.length} tokens. Mean loss predicting each next token: ${analysis.loss.toFixed(3)} nats.`;
}

// ---- the heads --------------------------------------------------------------------------------------

const CIVIDIS = Array.from({ length: 256 }, (_, i) => heatColour(i / 255).match(/\d+/g).map(Number));

/** Head `h` of a layer's weights [1, H, T, T] drawn one pixel per weight onto a T × T canvas. */
function paintHead(canvas, data, h, T) {
  canvas.width = T; canvas.height = T;
  const image = new ImageData(T, T);
  const base = h * T * T;
  for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) {
    const [r, g, b] = j > i ? [238, 238, 238] : CIVIDIS[Math.round(255 * Math.min(1, Math.max(0, data[base + i * T + j])))];
    const o = 4 * (i * T + j);
    image.data[o] = r; image.data[o + 1] = g; image.data[o + 2] = b; image.data[o + 3] = 255;
  }
  canvas.getContext('2d').putImageData(image, 0, 0);
}

const headName = (l, h) => `L${l} H${h}`;

function renderGrid() {
  const T = tokens.length;
  const { layers, heads } = model.info;
  $('grid').style.setProperty('--heads', String(heads));
  $('grid').replaceChildren(...Array.from({ length: layers }, (_, l) => el('div', { class: 'grid-row', role: 'group', 'aria-label': `Layer ${l}` },
    el('span', { class: 'grid-layer' }, `L${l}`),
    Array.from({ length: heads }, (_, h) => {
      const canvas = el('canvas', { 'aria-hidden': 'true' });
      paintHead(canvas, analysis.weights[l], h, T);
      const off = mask[l][h] === false;
      return el('button', {
        type: 'button', class: `cell${off ? ' ablated' : ''}`, 'data-layer': String(l), 'data-head': String(h),
        'aria-pressed': String(focus.layer === l && focus.head === h),
        'aria-label': `${off ? 'Switched off: ' : ''}layer ${l}, head ${h}`,
        title: headName(l, h),
        onclick: () => clickHead(l, h),
      }, canvas);
    }))));
}

async function clickHead(l, h) {
  if (document.querySelector('input[name="click"]:checked').value === 'ablate') {
    mask[l][h] = !mask[l][h];
    renderGrid();
    await renderAblation();
  } else {
    focus = { layer: l, head: h };
    renderGrid();
    renderFocus();
    $('focus').scrollIntoView({ block: 'nearest' });
  }
}

function renderFocus() {
  const { layer: l, head: h } = focus;
  const T = tokens.length;
  const data = analysis.weights[l];
  const labels = tokens.map(tokenText);
  const cell = Math.max(6, Math.min(22, Math.floor((Math.min($('focus').clientWidth || 600, 900) - 90) / T)));
  const margin = 84;
  const size = margin + cell * T;
  const canvas = el('canvas', { role: 'img', 'aria-label': `Attention weights of layer ${l}, head ${h} on the text, queries down, keys across` });
  const ratio = window.devicePixelRatio || 1;
  canvas.width = size * ratio; canvas.height = size * ratio;
  canvas.style.width = `${size}px`;
  const context = canvas.getContext('2d');
  context.scale(ratio, ratio);
  context.fillStyle = '#fff';
  context.fillRect(0, 0, size, size);
  const small = document.createElement('canvas');
  paintHead(small, data, h, T);
  context.imageSmoothingEnabled = false;
  context.drawImage(small, margin, margin, T * cell, T * cell);
  context.fillStyle = '#1b1f24';
  const font = Math.min(12, Math.max(8, cell - 2));
  context.font = `${font}px "IBM Plex Mono", monospace`;
  context.textBaseline = 'middle';
  const every = Math.ceil((font + 2) / cell);
  const clip = (s) => (s.length > 10 ? `${s.slice(0, 9)}…` : s);
  labels.forEach((text, i) => {
    if (i % every) return;
    const centre = margin + i * cell + cell / 2;
    context.textAlign = 'right';
    context.fillText(clip(text), margin - 4, centre);
    context.save();
    context.translate(centre, margin - 4);
    context.rotate(-Math.PI / 2);
    context.textAlign = 'left';
    context.fillText(clip(text), 0, 0);
    context.restore();
  });
  const readout = el('p', { class: 'hint', id: 'focus-readout', 'aria-live': 'polite' }, 'Point at a cell to read its weight.');
  canvas.addEventListener('mousemove', (event) => {
    const box = canvas.getBoundingClientRect();
    const scale = box.width / size;
    const j = Math.floor(((event.clientX - box.left) / scale - margin) / cell);
    const i = Math.floor(((event.clientY - box.top) / scale - margin) / cell);
    if (i < 0 || j < 0 || i >= T || j >= T) return;
    readout.textContent = j > i ? `query ${i} (${labels[i]}) cannot see key ${j} (${labels[j]}): causal mask`
      : `query ${i} (${labels[i]}) → key ${j} (${labels[j]}): weight ${data[h * T * T + i * T + j].toFixed(3)}`;
  });
  const s = analysis.detectors[l][h];
  const scores = DETECTORS.map((k) => `${DETECTOR_NAMES[k]} ${Number.isFinite(s[k]) ? s[k].toFixed(2) : '—'}`).join(', ');
  const link = el('p', { class: 'hint', id: 'walkthrough-link' }, 'Preparing this head for the walkthrough…');
  $('focus').replaceChildren(el('h3', {}, `Layer ${l}, head ${h}`), el('p', { class: 'hint' }, `On your text: ${scores}.`), link,
    el('div', { class: 'focus-canvas', role: 'region', 'aria-label': `Layer ${l}, head ${h}, large`, tabindex: '0' }, canvas), readout);
  walkthroughLink(l, h, link);
}

/** The walkthrough on this head's own Q, K and V for the first tokens of the text (model.worker.js). */
async function walkthroughLink(l, h, box) {
  const count = Math.min(tokens.length, WALKTHROUGH_TOKENS);
  try {
    const w = await call('walkthrough', { layer: l, head: h, count });
    if (focus.layer !== l || focus.head !== h || !box.isConnected) return;
    const labels = w.tokens.map(tokenText);
    const params = new URLSearchParams({
      Q: JSON.stringify(w.Q), K: JSON.stringify(w.K), V: JSON.stringify(w.V), numberOfHeads: '1', causal: '1', step: 'weights',
      from: 'model', modelName: model.name, modelLayer: String(l), modelHead: String(h), tokens: JSON.stringify(labels),
      ...(model.info.kind === 'llama' ? { rotated: '1' } : {}),
    });
    // in the fragment: the matrices make the link tens of KB, more than servers take in a request line
    box.className = '';
    box.replaceChildren(el('a', { href: `./walkthrough.html#${params}`, id: 'open-walkthrough', target: '_blank', rel: 'noopener' }, `Open layer ${l}, head ${h} in the walkthrough`),
      ` (new tab): its own Q, K and V (${w.Q[0].length} wide) on the first ${count} tokens, step by step. `,
      el('span', { class: 'hint', 'data-max-difference': String(w.maxDifference) }, `The walkthrough's weights are within ${w.maxDifference.toExponential(1)} of this float32 model's.`));
  } catch (error) {
    box.textContent = `Not in the walkthrough: ${error.message}`;
  }
}

// ---- detectors --------------------------------------------------------------------------------------

function renderDetectors() {
  const table = (title, scores, id) => el('div', { class: 'detector-table' },
    el('h3', {}, title),
    el('div', { class: 'table-wrap', role: 'region', 'aria-label': title, tabindex: '0' }, el('table', { class: 'ranks', id },
      el('thead', {}, el('tr', {}, DETECTORS.map((k) => el('th', { scope: 'col' }, DETECTOR_NAMES[k])))),
      el('tbody', {}, Array.from({ length: 5 }, (_, r) => el('tr', {}, DETECTORS.map((k) => {
        const x = rankHeads(scores, k)[r];
        return el('td', {}, x ? el('button', { type: 'button', class: 'link', onclick: () => { focus = { layer: x.layer, head: x.head }; renderGrid(); renderFocus(); $('focus').scrollIntoView({ block: 'nearest' }); } }, el('span', { class: 'rank-name' }, headName(x.layer, x.head)), ' ', el('span', { class: 'rank-score' }, x.score.toFixed(2))) : '—');
      })))))));
  $('detectors').replaceChildren(
    table('On your text (the 5 highest of each)', analysis.detectors, 'detectors-text'),
    table(`On repeated random tokens (${probe.batch} sequences of ${probe.length})`, probe.detectors, 'detectors-probe'),
    el('p', { class: 'hint' }, 'Where no token of your text repeats, the induction and duplicate-token scores are left out (—). ',
      el('a', { href: './lab.html' }, 'Watch these heads form in the lab'), '.'));
}

// ---- ablation -----------------------------------------------------------------------------------------

async function renderAblation() {
  const off = mask.flatMap((row, l) => row.flatMap((on, h) => (on ? [] : [headName(l, h)])));
  $('restore').hidden = !off.length;
  if (!off.length) {
    $('ablation').textContent = 'No head is switched off. Set a click to “switch it off” above, then pick heads.';
    $('ablation-tokens').replaceChildren();
    return;
  }
  let result;
  try {
    result = await call('ablate', { tokens, headMask: mask });
  } catch (error) {
    $('ablation').textContent = `Switching heads off failed: ${error.message}`;
    $('ablation').className = 'error';
    return;
  }
  $('ablation').className = 'hint';
  const change = result.loss - analysis.loss;
  $('ablation').textContent = `Switched off: ${off.join(', ')}. Mean loss ${analysis.loss.toFixed(3)} → ${result.loss.toFixed(3)} nats (${change >= 0 ? '+' : ''}${change.toFixed(3)}). Per token (predicting it from what comes before), the change in loss:`;
  $('ablation-tokens').replaceChildren(...tokens.slice(1).map((id, i) => {
    const d = result.losses[i] - analysis.losses[i];
    const strength = Math.min(1, Math.abs(d) / 2);
    return el('span', { class: 'chip loss-chip', 'data-change': d.toFixed(4), style: { background: d > 0 ? `rgba(213, 94, 0, ${strength})` : `rgba(0, 114, 178, ${strength})`, color: strength > 0.5 ? '#fff' : '#1b1f24' } },
      el('span', { class: 'chip-text' }, tokenText(id)), el('span', { class: 'chip-id' }, `${d >= 0 ? '+' : ''}${d.toFixed(2)}`));
  }));
}

// ---- next token and the logit lens ------------------------------------------------------------------

async function renderNext() {
  const t = position;
  const predictions = analysis.predictions[t];
  const lens = await call('lens', { position: t });
  const actual = tokens[t + 1];
  $('next').replaceChildren(
    el('p', {}, `After token ${t} (${tokenText(tokens[t])})${actual !== undefined ? `, the text has ${tokenText(actual)}` : ''}. The model's 10 likeliest next tokens:`),
    el('ol', { class: 'predictions', id: 'predictions' }, predictions.map((p) => el('li', { class: p.id === actual ? 'actual' : null },
      el('span', { class: 'bar', style: { width: `${Math.max(1, Math.round(p.p * 100))}%` } }),
      el('span', {}, `${tokenText(p.id)} `, el('span', { class: 'chip-id' }, `${p.id}`), ` ${(100 * p.p).toFixed(1)}%`)))),
    el('h3', {}, 'The logit lens: what each layer would predict'),
    el('div', { class: 'table-wrap', role: 'region', 'aria-label': 'The logit lens', tabindex: '0' }, el('table', { class: 'ranks', id: 'lens' },
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'after'), Array.from({ length: 5 }, (_, i) => el('th', { scope: 'col' }, `#${i + 1}`)))),
      el('tbody', {}, lens.map((row, l) => el('tr', {}, el('th', { scope: 'row' }, l === 0 ? 'embedding' : l === lens.length - 1 ? `layer ${l - 1} (output)` : `layer ${l - 1}`),
        row.map((p) => el('td', { class: p.id === actual ? 'actual' : null }, el('span', { class: 'rank-name' }, tokenText(p.id)), ' ', el('span', { class: 'rank-score' }, `${(100 * p.p).toFixed(0)}%`)))))))));
}

// ---- generation -------------------------------------------------------------------------------------

async function generate(event) {
  event.preventDefault();
  const number = (id, min, max) => Math.min(max, Math.max(min, Number($(id).value) || 0));
  const maxNewTokens = Math.min(number('max-new', 1, 200), model.info.context - tokens.length);
  if (maxNewTokens < 1) { $('speed').textContent = 'The text already fills the model\'s context: shorten it to generate.'; return; }
  const temperature = number('temperature', 0, 2);
  const topK = Math.round(number('top-k', 0, 1000));
  const options = { maxNewTokens, temperature, seed: Math.round(number('seed', 0, 2147483646)), ...(topK > 0 ? { topK } : {}) };
  $('generate').disabled = true;
  const out = $('generated');
  out.replaceChildren(el('span', { class: 'prompt' }, tokenizer.decode(tokens)));
  const fresh = [];
  $('speed').textContent = 'Generating…';
  try {
    const result = await call('generate', { prompt: tokens, options }, ({ token, ms }) => {
      fresh.push(token);
      out.append(el('span', { class: 'new-token', 'data-id': String(token) }, tokenizer.decode([token])));
      $('speed').textContent = `${fresh.length} new tokens in ${(ms / 1000).toFixed(2)} s`;
    });
    const n = result.ids.length - tokens.length;
    const rest = (result.ms - result.firstMs) / 1000;
    $('speed').textContent = `${n} new tokens in ${(result.ms / 1000).toFixed(2)} s: the first after ${(result.firstMs).toFixed(0)} ms (the prompt's pass), then ${n > 1 ? `${((n - 1) / Math.max(rest, 1e-3)).toFixed(1)} tokens/s` : '—'} through the KV cache.`;
  } catch (error) {
    $('speed').textContent = error.message;
  } finally {
    $('generate').disabled = false;
  }
}

// ---- start ------------------------------------------------------------------------------------------

$('lesson').innerHTML = lessonHtml;
try {
  hub = hubBase(params.get('hub'), location.origin);
} catch (error) {
  status(error.message, 'error');
}
const asked = params.get('model');
renderPresets(PRESETS.some((p) => p.repo === asked) ? asked : null);
if (asked && !PRESETS.some((p) => p.repo === asked)) $('repo').value = asked;
$('choose').addEventListener('submit', (event) => { event.preventDefault(); choose(chosenRepo()); });
$('cancel').addEventListener('click', () => abort?.abort());
$('local-files').addEventListener('change', (event) => openLocal(event.target.files));
$('text-form').addEventListener('submit', (event) => { event.preventDefault(); run(); });
$('generate-form').addEventListener('submit', generate);
$('restore').addEventListener('click', async () => { mask = mask.map((row) => row.map(() => true)); renderGrid(); await renderAblation(); });
$('kept-box').addEventListener('toggle', renderKept);
renderKept();
if (asked) choose(asked);
