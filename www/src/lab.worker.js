// The lab's training loop, off the main thread. It owns the model (the package's Transformer),
// trains on fresh batches of the task (repeatedTokens, or windows of real text: lab-text.js), and
// posts what the page draws:
//  - 'losses': per trained step, the mean loss on the repeated (or copyable) tokens and on the others;
//  - 'view':   head scores, attention weights and per-position losses on one example sequence,
//              and the loss on a fixed evaluation batch with and without the ablated heads,
//              for the live model or for a snapshot (getState) chosen with the scrubber;
//  - 'snapshots': the steps of the snapshots kept so far;
//  - 'circuitTrace': per post, [step, the live model's strongest K-composition, the random baseline]
//    (the view itself carries the Circuit panel's data: lab-circuits-data.js).
// Every batch is seeded from (seed, step), so the same settings give the same losses bit for bit.
import { loadModel } from './lab-model.js';
import { nested } from './cases.js';
import { textTask, copyable, splitMix64 } from './lab-text.js';
import TEXT from './texts/alice-chapter-1.txt?raw';
import { circuitView, pathAblation, strongestK } from './lab-circuits-data.js';

const text = textTask(TEXT);
const SCORE_BATCH = 8; // repeated random characters the text task's heads are scored on

const POST_EVERY_MS = 150; // several views a second while training
const MAX_SNAPSHOTS = 48; // past that, every other one is dropped and the interval doubles
const EVAL_BATCH = 8;

let lab;
let config;
let model;
let viewer; // a second model for snapshots, so viewing the past never disturbs training
let running = false;
let step = 0;
let snapshots = []; // [{ step, state }]
let snapshotEvery = 5;
let headMask = null; // [layer][head] false = ablated
let shown = 'live'; // 'live' or the step of a snapshot
let evalSet; // { tokens, repeated }: the example sequence first, then fixed others
let scoreSet; // the tokens headScores is measured on
let scoreRepeated; // in the text task, which of scoreSet's tokens repeat (the copying test)
let pending = [];
let focus = null; // { layer, head } (0-based): the head the page shows large, and links to the walkthrough
const PATHS_EVERY_MS = 4000; // while training, the path-ablation matrix (3·h·(h + 1) forwards) at most this often
let paths = null; // { step, at, paths }: the last path-ablation matrix

const batchSeed = (s) => (config.seed * 65537 + s + 1) % 2147483647;

function modelConfig(c) {
  const [vocabSize, contextLength] = c.task === 'text' ? [text.vocabulary.length, c.window] : [c.vocab, 1 + 2 * c.length];
  return { vocabSize, contextLength, embedDim: c.width, numHeads: c.heads, numLayers: c.layers, positions: c.positions, seed: c.seed };
}

/** Mean loss over positions whose next token is (or is not) a repeat: losses[b][t] predicts token t + 1. */
function splitLosses(losses, repeated) {
  let rep = 0; let nRep = 0; let other = 0; let nOther = 0;
  losses.forEach((row, b) => row.forEach((x, t) => {
    if (repeated[b][t + 1]) { rep += x; nRep++; } else { other += x; nOther++; }
  }));
  return { repeated: nRep ? rep / nRep : NaN, other: nOther ? other / nOther : NaN };
}

function reset(newConfig) {
  running = false;
  model?.free?.();
  viewer?.free?.();
  config = newConfig;
  model = new lab.Transformer(modelConfig(config));
  viewer = new lab.Transformer(modelConfig(config));
  step = 0;
  snapshots = [{ step: 0, state: model.getState() }];
  snapshotEvery = 5;
  headMask = null;
  shown = 'live';
  paths = null;
  const evalSeed = (config.seed * 65537 + 1_000_000_007) % 2147483647;
  if (config.task === 'text') {
    // the example window (a passage that repeats itself), then windows drawn with a seed no batch uses
    const tokens = [text.example(config.window), ...text.windows({ window: config.window, batch: EVAL_BATCH - 1, seed: evalSeed })];
    evalSet = { tokens, repeated: tokens.map(copyable) };
    // the scores need sequences where each is well defined: a newline, then distinct random characters, repeated
    const length = Math.min(text.vocabulary.length - 1, Math.floor((config.window - 1) / 2));
    const probe = lab.repeatedTokens({ vocabSize: text.vocabulary.length, length, batch: SCORE_BATCH, seed: evalSeed });
    scoreSet = nested(probe.tokens);
    scoreRepeated = nested(probe.repeated);
  } else {
    const data = lab.repeatedTokens({ vocabSize: config.vocab, length: config.length, batch: EVAL_BATCH, seed: evalSeed });
    evalSet = { tokens: nested(data.tokens), repeated: nested(data.repeated) };
    scoreSet = evalSet.tokens;
    scoreRepeated = null;
  }
  pending = [];
}

/** One batch of the task: { tokens [B][T], repeated [B][T] } (for text: the copyable characters). */
function batchAt(s) {
  if (config.task === 'text') {
    const tokens = text.windows({ window: config.window, batch: config.batch, seed: batchSeed(s) });
    return { tokens, repeated: tokens.map(copyable) };
  }
  const data = lab.repeatedTokens({ vocabSize: config.vocab, length: config.length, batch: config.batch, seed: batchSeed(s) });
  return { tokens: nested(data.tokens), repeated: nested(data.repeated) };
}

function trainOne() {
  const { tokens, repeated } = batchAt(step);
  const { loss, losses } = model.trainStep(tokens, { learningRate: config.lr });
  const split = splitLosses(nested(losses), repeated);
  step++;
  pending.push([step, loss, split.repeated, split.other]);
  if (step % snapshotEvery === 0) {
    snapshots.push({ step, state: model.getState() });
    if (snapshots.length > MAX_SNAPSHOTS) {
      snapshots = snapshots.filter((s, i) => i === 0 || i === snapshots.length - 1 || s.step % (snapshotEvery * 2) === 0);
      snapshotEvery *= 2;
    }
  }
}

/**
 * One head's real inputs for the walkthrough: a short sequence (the beginning token, then the first
 * n ≤ 12 tokens of the example, twice: a period the model trained on, and an induction head at the
 * repeats looks one past their first copy; for the text task, the example window's first 24 characters),
 * its residual stream at this layer's input (embedding, + the earlier layers, computed
 * with the package's MultiHeadAttention on this model's weights), and the head's Q, K and V
 * (`linear` of the layer's query/key input and value input by the head's columns of W_Q, W_K, W_V).
 * The walkthrough recomputes scores and weights from Q, K, V (f64); `maxDifference` is how far its
 * weights are from this float32 model's own, on the same tokens.
 */
function walkthroughInputs(m, layer, head) {
  const { embedDim: C, numHeads: h, positions } = modelConfig(config);
  if (positions === 'rope') return { unavailable: 'with rope positions the walkthrough\'s plain mode would not rotate Q and K' };
  const d = C / h;
  let tokens;
  if (config.task === 'text') {
    tokens = evalSet.tokens[0].slice(0, Math.min(24, config.window)); // the example's first characters
  } else {
    const n = Math.min(12, Math.ceil(config.length / 2)); // the example's first n tokens are distinct (period ≥ ⌈length/2⌉)
    const segment = evalSet.tokens[0].slice(1, 1 + n);
    tokens = [0, ...segment, ...segment];
  }
  const W = m.getWeights();
  const add = (A, B) => A.map((row, i) => row.map((x, j) => x + B[i][j]));
  const P = W.W_pos ? tokens.map((_, i) => W.W_pos[i]) : null;
  let x = tokens.map((token) => [...W.W_E[token]]);
  if (positions === 'learned') x = add(x, P);
  const queryKeyInput = (residual) => (positions === 'shortformer' ? add(residual, P) : residual);
  for (let l = 0; l < layer; l++) {
    const attention = new lab.MultiHeadAttention({ embedDim: C, numHeads: h });
    const { W_Q, W_K, W_V, W_O } = W.layers[l];
    attention.setWeights({ W_Q, W_K, W_V, W_O });
    const qk = queryKeyInput(x);
    x = add(x, attention.forward(qk, qk, x, { causal: true }).output);
    attention.free();
  }
  const columns = (M) => M.map((row) => row.slice(head * d, (head + 1) * d));
  const { W_Q, W_K, W_V } = W.layers[layer];
  const Q = lab.linear(queryKeyInput(x), columns(W_Q));
  const K = lab.linear(queryKeyInput(x), columns(W_K));
  const V = lab.linear(x, columns(W_V));
  const traced = lab.traceMultiHeadAttention(Q, K, V, { numberOfHeads: 1, headDimensions: d, causal: true }).steps.find((s) => s.op === 'StableSoftmax').values;
  const own = nested(m.forward([tokens], { needWeights: true }).weights[layer])[0][head];
  const maxDifference = Math.max(...traced.flatMap((row, i) => row.map((w, j) => Math.abs(w - own[i][j]))));
  return { layer, head, tokens, Q, K, V, maxDifference };
}

function viewOf(m) {
  const example = [evalSet.tokens[0]];
  const out = m.forward(example, headMask ? { needWeights: true, headMask } : { needWeights: true });
  // per layer { data, shape: [1, h, T, T] }: typed arrays, cheap to post (the page slices the rows)
  const weights = out.weights.map((w) => (ArrayBuffer.isView(w.data) ? { data: Float32Array.from(w.data), shape: w.shape } : { data: Float32Array.from(nested(w).flat(3)), shape: [1, w[0].length, w[0][0].length, w[0][0].length] }));
  const scores = m.headScores(scoreSet);
  const evaluate = (mask) => splitLosses(nested(m.forward(evalSet.tokens, mask ? { headMask: mask } : {}).losses), evalSet.repeated);
  return {
    tokens: evalSet.tokens[0],
    vocabulary: config.task === 'text' ? text.vocabulary : null,
    repeatedPositions: evalSet.repeated[0],
    weights,
    perPosition: nested(out.losses)[0],
    scores: scores.map((layer) => layer.map((h) => ({ previousToken: h.previousToken, induction: h.induction, firstToken: h.firstToken, self: h.self }))),
    walkthrough: focus && focus.layer < config.layers && focus.head < config.heads ? walkthroughInputs(m, focus.layer, focus.head) : null,
    evalLoss: evaluate(null),
    ablatedLoss: headMask ? evaluate(headMask) : null,
    // the text task's test of copying: the loss on random characters (not the chapter's) the first time and repeated
    copyTest: scoreRepeated ? splitLosses(nested(m.forward(scoreSet, headMask ? { headMask } : {}).losses), scoreRepeated) : null,
    circuits: circuitView(m, focus),
  };
}

/** The path-ablation matrix of the model on view at `viewStep`: always when paused, every PATHS_EVERY_MS while training. */
function pathsOf(m, viewStep) {
  const now = performance.now();
  if (paths && (paths.step === viewStep || (running && now - paths.at < PATHS_EVERY_MS))) return paths;
  const lossOf = (out) => splitLosses(nested(out.losses), evalSet.repeated).repeated;
  const result = pathAblation(m, evalSet.tokens, lossOf, headMask);
  paths = result && { step: viewStep, at: now, paths: result };
  return paths;
}

function post() {
  if (pending.length) { postMessage({ type: 'losses', rows: pending }); pending = [];}
  postMessage({ type: 'snapshots', steps: snapshots.map((s) => s.step) });
  let m = model;
  let viewStep = step;
  if (shown !== 'live') {
    const snap = snapshots.find((s) => s.step === shown) ?? snapshots.at(-1);
    viewer.setState(snap.state);
    m = viewer;
    viewStep = snap.step;
  }
  const view = viewOf(m);
  view.paths = pathsOf(m, viewStep);
  const live = m === model ? view.circuits : { ...model.compositionScores(), strongestK: null };
  const strongest = live.strongestK ?? strongestK(live);
  if (strongest) postMessage({ type: 'circuitTrace', rows: [[step, strongest.score, live.baseline]] });
  postMessage({ type: 'view', step, viewStep, live: shown === 'live', running, headMask, ...view }, view.weights.map((w) => w.data.buffer));
}

/**
 * The text model's continuation of `prompt`: `length` characters, each from the logits at the last
 * position of the last `window` characters (the model on view: live or the snapshot). Temperature 0
 * takes the most likely character; above 0 it samples softmax(logits / temperature) with SplitMix64
 * seeded from the run's seed, so the same settings write the same text.
 */
function sample(m, { prompt, length, temperature }) {
  if (config.task !== 'text') throw new Error('sampling is for the text task');
  const tokens = text.encode(prompt);
  if (tokens.length < 2) throw new RangeError('the prompt needs at least 2 characters');
  const next = splitMix64(config.seed);
  const out = [];
  for (let i = 0; i < length; i++) {
    const context = tokens.slice(-config.window);
    const { logits } = m.forward([context]);
    const V = text.vocabulary.length;
    const row = logits.data.subarray((context.length - 1) * V, context.length * V);
    let choice = 0;
    if (temperature === 0) {
      for (let v = 1; v < V; v++) if (row[v] > row[choice]) choice = v;
    } else {
      const top = Math.max(...row);
      const weights = Array.from(row, (x) => Math.exp((x - top) / temperature));
      let r = next() * weights.reduce((a, b) => a + b, 0);
      choice = V - 1;
      for (let v = 0; v < V; v++) { r -= weights[v]; if (r < 0) { choice = v; break; } }
    }
    tokens.push(choice);
    out.push(choice);
  }
  return text.decode(out);
}

let generation = 0; // one loop at a time: a Pause then Train in quick succession starts a new one
async function loop(mine) {
  while (running && mine === generation) {
    const started = performance.now();
    do trainOne(); while (running && performance.now() - started < POST_EVERY_MS);
    post();
    await new Promise((resolve) => setTimeout(resolve, 0)); // let 'pause' and the scrubber in
  }
}

function handle(message) {
  switch (message.type) {
    case 'reset':
      reset(message.config);
      post();
      break;
    case 'train':
      if (!running) { running = true; loop(++generation); }
      break;
    case 'pause':
      running = false;
      post();
      break;
    case 'step':
      running = false;
      trainOne();
      post();
      break;
    case 'show':
      shown = message.step;
      if (!running) post();
      break;
    case 'focus':
      focus = message.focus;
      if (!running) post();
      break;
    case 'sample': {
      let m = model;
      if (shown !== 'live') {
        const snap = snapshots.find((x) => x.step === shown) ?? snapshots.at(-1);
        viewer.setState(snap.state);
        m = viewer;
      }
      postMessage({ type: 'sample', prompt: message.prompt, temperature: message.temperature, step: shown === 'live' ? step : shown, text: sample(m, message) });
      break;
    }
    case 'mask':
      headMask = message.headMask;
      paths = null;
      if (!running) post();
      break;
    default:
      throw new Error(`unknown message ${message.type}`);
  }
}

let ready; // the model loads on the first message, { type: 'load', threads } (threads: the address's threads=, or undefined)
onmessage = async ({ data }) => {
  try {
    if (data.type === 'load') {
      ready = loadModel(data.threads, (text) => postMessage({ type: 'stage', text })).then(({ lab: module, ...threads }) => { lab = module; postMessage({ type: 'ready', threads }); });
      await ready;
      return;
    }
    await ready;
    handle(data);
  } catch (error) {
    running = false;
    postMessage({ type: 'error', message: error.message });
  }
};
