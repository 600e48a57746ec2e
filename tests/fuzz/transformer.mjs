// The fuzz table's entries for issue 21: `new Transformer`, its methods and `repeatedTokens`.
//
// Each entry builds a small valid call (a few of them then broken on purpose: tokens out of range,
// non-integer, NaN, T > contextLength, a bad typed shape, bad AdamW options, a bad weights or state
// tree), the generic mutators of cases.mjs break them further, and the reference below says what
// the package must do: answer (then compared with tests/oracle/transformer.mjs) or refuse with a
// TypeError / RangeError, in the order the documented contract reads the arguments. On top of
// judge()'s checks, every refusal must name its argument (never wasm-bindgen's or the engine's own
// message), and a refused trainStep / setWeights / setState must change nothing: weights, moments
// and step are compared bit for bit before and after, and the model must still answer as before.
import * as G from './generate.mjs';
import * as R from '../oracle/reference.mjs';
import * as LR from '../oracle/layer.mjs';
import * as O from '../oracle/transformer.mjs';
import * as CO from '../oracle/circuits.mjs';
import { Invalid } from '../oracle/reference.mjs';

const typeError = (why) => new Invalid('TypeError', why);
const rangeError = (why) => new Invalid('RangeError', why);
const BUDGET = 2 ** 27;

const CONFIG_KEYS = ['vocabSize', 'contextLength', 'embedDim', 'numHeads', 'numLayers', 'positions', 'mlp', 'layerNorm', 'bias', 'seed', 'dtype',
  'norm', 'normEps', 'mlpWidth', 'mlpBias', 'numKVHeads', 'ropeBase', 'tiedEmbeddings'];
const POSITIONS = ['shortformer', 'learned', 'rope', 'none'];
const LAYER_KEYS = ['W_Q', 'W_K', 'W_V', 'W_O', 'b_Q', 'b_K', 'b_V', 'b_O', 'ln1_w', 'ln1_b', 'ln2_w', 'ln2_b', 'W_in', 'b_in', 'W_out', 'b_out', 'W_gate', 'b_gate', 'W_up', 'b_up', 'W_down', 'b_down'];

/** Kinds of the config's keys for cases.mjs's mutateObject. */
export const MODEL_CONFIG_KINDS = {
  vocabSize: 'count', contextLength: 'count', embedDim: 'count', numHeads: 'count', numLayers: 'count', positions: 'positions', mlp: 'mlp', layerNorm: 'flag', bias: 'flag', seed: 'seed', dtype: 'dtype',
  norm: 'norm', normEps: 'rate', mlpWidth: 'count', mlpBias: 'flag', numKVHeads: 'count', ropeBase: 'rate', tiedEmbeddings: 'flag',
};
const FORWARD_KINDS = { needWeights: 'flag', headMask: 'mask' };
const PATH_KINDS = { needWeights: 'flag', headMask: 'mask', pathMask: 'vector' };
const CIRCUITS_KINDS = { layer: 'count', head: 'count' };
const TRAIN_KINDS = { learningRate: 'rate', betas: 'vector', eps: 'rate', weightDecay: 'rate' };
const TASK_KINDS = { vocabSize: 'count', length: 'count', batch: 'count', seed: 'seed' };
const STATE_KINDS = { dtype: 'dtype', step: 'count', weights: 'matrix', m: 'matrix', v: 'matrix' };

/** What a refusal must name: an argument, an option or config key, or the tensor that overflowed. */
const NAMES = /\b(config|tokens|options|weights|state|vocabSize|length|batch|seed|logits|W_[A-Za-z]+|b_[A-Za-z]+|ln\w+|layers|scores_\d+|residual|AdamW)\b/;
/** Messages that are not the package's own (wasm-bindgen glue, the engine, a Rust panic). */
const FOREIGN = /unreachable|RuntimeError|null pointer passed to rust|recursive use of an object|expected a (string|number|boolean) argument|Cannot read properties|is not a function|panicked|already (mutably )?borrowed/;

/** Rethrows a refusal after checking its message; anything else is rethrown as it is. */
function checkRefusal(e) {
  if ((e instanceof TypeError || e instanceof RangeError) && !(e instanceof WebAssembly.RuntimeError)) {
    if (FOREIGN.test(e.message)) return new Error(`a ${e.name} with a foreign message: ${e.message}`);
    if (!NAMES.test(e.message)) return new Error(`a ${e.name} that names no argument: ${e.message}`);
  }
  return e;
}

// ---- shapes of the parameters (the getWeights tree, in the package's order) ---------------------

/** [[layer | null, name, shape]] in the order the model lists its parameters. */
export function parameterShapes(c) {
  const C = c.embedDim;
  const out = [[null, 'W_E', [c.vocabSize, C]]];
  if (c.positions === 'shortformer' || c.positions === 'learned') out.push([null, 'W_pos', [c.contextLength, C]]);
  const Ckv = (c.numKVHeads ?? c.numHeads) * (C / c.numHeads);
  const F = c.mlpWidth ?? 4 * C;
  const rms = c.norm === 'rms';
  const norm = (l, prefix) => (rms ? [[l, `${prefix}_w`, [C]]] : [[l, `${prefix}_w`, [C]], [l, `${prefix}_b`, [C]]]);
  for (let l = 0; l < c.numLayers; l += 1) {
    out.push([l, 'W_Q', [C, C]], [l, 'W_K', [C, Ckv]], [l, 'W_V', [C, Ckv]], [l, 'W_O', [C, C]]);
    if (c.bias) out.push([l, 'b_Q', [C]], [l, 'b_K', [Ckv]], [l, 'b_V', [Ckv]], [l, 'b_O', [C]]);
    if (c.layerNorm) out.push(...norm(l, 'ln1'));
    if (c.layerNorm && c.mlp) out.push(...norm(l, 'ln2'));
    if (c.mlp) {
      const parts = c.mlp === 'silu_gated' ? [['W_gate', 'b_gate', C, F], ['W_up', 'b_up', C, F], ['W_down', 'b_down', F, C]] : [['W_in', 'b_in', C, F], ['W_out', 'b_out', F, C]];
      for (const [w, b, rows, cols] of parts) {
        out.push([l, w, [rows, cols]]);
        if (c.mlpBias ?? true) out.push([l, b, [cols]]);
      }
    }
  }
  if (c.layerNorm) out.push(...norm(null, 'ln_final'));
  if (!c.tiedEmbeddings) out.push([null, 'W_U', [C, c.vocabSize]]);
  return out;
}

// ---- the reference's reading of the arguments -----------------------------------------------------

/** `new Transformer(config)`: the full config, or throws Invalid. */
export function readConfig(config) {
  if (config === undefined || config === null) throw typeError('config is missing');
  const o = LR.readObject(config, 'config', CONFIG_KEYS, true);
  const positions = o.positions === undefined ? 'shortformer' : o.positions;
  if (typeof positions !== 'string' || !POSITIONS.includes(positions)) throw typeError('config.positions is not one of the four');
  const L = o.numLayers;
  if (typeof L !== 'number') throw typeError('config.numLayers is not a number');
  if (!(L >= 0 && Number.isInteger(L) && L <= 1024)) throw rangeError('config.numLayers is not an integer 0 … 1024');
  const c = {
    vocabSize: R.readCount(o.vocabSize, 'config.vocabSize'),
    contextLength: R.readCount(o.contextLength, 'config.contextLength'),
    embedDim: R.readCount(o.embedDim, 'config.embedDim'),
    numHeads: R.readCount(o.numHeads, 'config.numHeads'),
    numLayers: L === 0 ? 0 : L,
    positions,
  };
  const flag = (k, fallback) => {
    if (o[k] !== undefined && typeof o[k] !== 'boolean') throw typeError(`config.${k} is not a boolean`);
    return o[k] ?? fallback;
  };
  const positive = (k, fallback) => {
    if (o[k] === undefined) return fallback;
    if (typeof o[k] !== 'number') throw typeError(`config.${k} is not a number`);
    if (!(Number.isFinite(o[k]) && o[k] > 0)) throw rangeError(`config.${k} is not a finite number > 0`);
    return o[k];
  };
  // the order src/wasm/transformer.rs reads them in
  if (o.mlp !== undefined && typeof o.mlp !== 'boolean' && o.mlp !== 'gelu_new' && o.mlp !== 'silu_gated') throw typeError('config.mlp is not false, true, gelu_new or silu_gated');
  c.mlp = o.mlp === 'silu_gated' ? 'silu_gated' : o.mlp === 'gelu_new' ? true : (o.mlp ?? false);
  c.layerNorm = flag('layerNorm', false);
  if (o.norm !== undefined && o.norm !== 'layer' && o.norm !== 'rms') throw typeError('config.norm is not layer or rms');
  c.norm = o.norm ?? 'layer';
  c.normEps = positive('normEps', O.LN_EPS);
  c.mlpWidth = o.mlpWidth === undefined ? 4 * c.embedDim : R.readCount(o.mlpWidth, 'config.mlpWidth');
  c.mlpBias = flag('mlpBias', true);
  c.numKVHeads = o.numKVHeads === undefined ? c.numHeads : R.readCount(o.numKVHeads, 'config.numKVHeads');
  c.ropeBase = positive('ropeBase', O.ROPE_BASE);
  c.bias = flag('bias', false);
  c.seed = readSeed(o.seed, 'config.seed');
  c.tiedEmbeddings = flag('tiedEmbeddings', false);
  // an option of a part the model lacks, set to other than its default
  if (!c.layerNorm && (c.norm !== 'layer' || c.normEps !== O.LN_EPS)) throw rangeError('a norm option without layerNorm');
  if (!c.mlp && (c.mlpWidth !== 4 * c.embedDim || !c.mlpBias)) throw rangeError('an MLP option without mlp');
  if (c.positions !== 'rope' && c.ropeBase !== O.ROPE_BASE) throw rangeError('ropeBase without rope positions');
  const dtype = o.dtype === undefined ? 'float32' : o.dtype;
  if (dtype !== 'float32' && dtype !== 'float64') throw typeError('config.dtype is not float32 or float64');
  c.dtype = dtype;
  // the core's checks (all RangeErrors)
  if (c.vocabSize < 2) throw rangeError('vocabSize < 2');
  if (c.contextLength < 2) throw rangeError('contextLength < 2');
  if (c.embedDim % c.numHeads !== 0) throw rangeError('embedDim is not a multiple of numHeads');
  if (c.positions === 'rope' && (c.embedDim / c.numHeads) % 2 !== 0) throw rangeError('rope with an odd headDim');
  if (c.numHeads % c.numKVHeads !== 0) throw rangeError('numKVHeads does not divide numHeads');
  const C = c.embedDim;
  const F = c.mlpWidth;
  const mlpTerm = c.mlp === 'silu_gated' ? 3 * C * F + 2 * F + C : 2 * C * F + F + C;
  const perLayer = 4 * C * C + 4 * C + (c.mlp ? mlpTerm : 0) + 4 * C;
  const parameters = 2 * c.vocabSize * C + c.contextLength * C + c.numLayers * perLayer + 2 * C;
  if (4 * parameters > BUDGET) throw rangeError('the model does not fit the working set');
  return c;
}

function readSeed(v, place) {
  if (v === undefined) return 0n;
  if (typeof v === 'bigint') {
    if (v < 0n || v > 2n ** 64n - 1n) throw rangeError(`${place} is outside 0 … 2^64 − 1`);
    return v;
  }
  if (typeof v !== 'number') throw typeError(`${place} is not a number or bigint`);
  if (!(v >= 0 && Number.isInteger(v) && v <= 2 ** 53 - 1)) throw rangeError(`${place} is not an integer 0 … 2^53 − 1`);
  return BigInt(v);
}

const TOKEN_ARRAYS = [Int32Array, Uint32Array, Uint16Array, Uint8Array];

/** `tokens` as number[][] or { data, shape }: [B][T] integers, or throws Invalid. */
export function readTokens(x, c) {
  let values;
  let B;
  let T = 0;
  if (Array.isArray(x)) {
    B = x.length;
    values = [];
    for (let i = 0; i < B; i += 1) {
      const row = x[i];
      if (!Array.isArray(row)) throw typeError(`tokens[${i}] is not an array`);
      if (i === 0) T = row.length;
      else if (row.length !== T) throw rangeError(`tokens[${i}] has another T`);
      for (let j = 0; j < T; j += 1) {
        const v = row[j];
        if (typeof v !== 'number') throw typeError(`tokens[${i}][${j}] is not a number`);
        values.push(v);
      }
    }
  } else {
    if (x === null || typeof x !== 'object') throw typeError('tokens is not an array or object');
    const data = x.data;
    if (!TOKEN_ARRAYS.some((A) => data instanceof A)) throw typeError('tokens.data is not an integer typed array');
    values = Array.from(data);
    const shape = x.shape;
    const dims = Array.isArray(shape) && shape.length === 2 ? shape.filter((s) => typeof s === 'number') : null;
    if (!(dims && dims.length === 2 && dims.every((s) => Number.isInteger(s) && s >= 0) && dims[0] * dims[1] === values.length)) throw rangeError('tokens.shape does not fit');
    [B, T] = dims;
  }
  if (B === 0) throw rangeError('tokens is empty');
  if (T < 2 || T > c.contextLength) throw rangeError('T is not in 2 … contextLength');
  values.forEach((v) => {
    if (!(Number.isInteger(v) && v >= 0 && v < c.vocabSize)) throw rangeError('a token is out of range');
  });
  return Array.from({ length: B }, (_, b) => values.slice(b * T, (b + 1) * T));
}

/** forward's options: { needWeights, headMask, pathMask } (the counts checked against the config). */
export function readForwardOptions(options, c) {
  const o = LR.readObject(options, 'options', ['needWeights', 'headMask', 'pathMask'], false) ?? {};
  if (o.needWeights !== undefined && typeof o.needWeights !== 'boolean') throw typeError('options.needWeights is not a boolean');
  const raw = o.headMask;
  let headMask;
  if (raw !== undefined) {
    if (!Array.isArray(raw)) throw typeError('options.headMask is not an array');
    // the counts before the entries: numLayers rows (before any row is read, so that a huge declared
    // length is refused at once), then each row's numHeads entries before its values
    if (raw.length !== c.numLayers) throw rangeError(`options.headMask has ${raw.length} rows`);
    headMask = [];
    for (let l = 0; l < raw.length; l += 1) {
      const row = raw[l];
      if (!Array.isArray(row)) throw typeError(`options.headMask[${l}] is not an array`);
      if (row.length !== c.numHeads) throw rangeError(`options.headMask[${l}] has ${row.length} entries`);
      const flags = [];
      for (let i = 0; i < row.length; i += 1) {
        if (typeof row[i] !== 'boolean') throw typeError(`options.headMask[${l}][${i}] is not a boolean`);
        flags.push(row[i]);
      }
      headMask.push(flags);
    }
  }
  return { needWeights: o.needWeights ?? false, headMask, pathMask: readPathMask(o.pathMask, c) };
}

/** An integer ≥ 0 (circuits' layer and head, a path's [layer, head]). */
function readIndex(v, place) {
  if (typeof v !== 'number') throw typeError(`${place} is not a number`);
  if (!(v >= 0 && Number.isInteger(v) && v <= 2 ** 32 - 1)) throw rangeError(`${place} is not an integer ≥ 0`);
  return v;
}

/** `[layer, head]` of a path. */
function readHead(v, place) {
  if (!Array.isArray(v)) throw typeError(`${place} is not an array`);
  if (v.length !== 2) throw rangeError(`${place} has ${v.length} entries`);
  return [readIndex(v[0], `${place}[0]`), readIndex(v[1], `${place}[1]`)];
}

/** forward's `options.pathMask` (docs/api.md): entries read in order, each { input, from, to } in that order, then checked against the config. */
function readPathMask(raw, c) {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw typeError('options.pathMask is not an array');
  return Array.from({ length: raw.length }, (_, k) => {
    const place = `options.pathMask[${k}]`;
    const o = LR.readObject(raw[k], place, ['from', 'to', 'input'], true);
    if (!['query', 'key', 'value'].includes(o.input)) throw typeError(`${place}.input is not 'query', 'key' or 'value'`);
    const cut = { input: o.input, from: readHead(o.from, `${place}.from`), to: readHead(o.to, `${place}.to`) };
    for (const [l, i] of [cut.from, cut.to]) if (l >= c.numLayers || i >= c.numHeads) throw rangeError(`${place} names a head the model lacks`);
    if (cut.from[0] >= cut.to[0]) throw rangeError(`${place}.from is not in an earlier layer than to`);
    return cut;
  });
}

/** circuits' options { layer, head }, checked against the config. */
function readCircuitsOptions(options, c) {
  const o = LR.readObject(options, 'options', ['layer', 'head'], true);
  const layer = readIndex(o.layer, 'options.layer');
  const head = readIndex(o.head, 'options.head');
  if (layer >= c.numLayers || head >= c.numHeads) throw rangeError('options names a head the model lacks');
  return { layer, head };
}

const baselines = new Map();
/** The oracle's baseline for (C, d_head), computed once. */
function baselineOf(C, d) {
  const key = `${C},${d}`;
  if (!baselines.has(key)) baselines.set(key, CO.baseline(C, d));
  return baselines.get(key);
}

/** trainStep's options, or throws Invalid. */
export function readTrainOptions(options) {
  if (options === undefined || options === null) throw typeError('options is missing');
  const o = LR.readObject(options, 'options', ['learningRate', 'betas', 'eps', 'weightDecay'], true);
  let betas = [0.9, 0.999];
  if (o.betas !== undefined) {
    let pair;
    try {
      pair = LR.readVector(o.betas, 'options.betas');
    } catch (e) {
      if (e instanceof Invalid) throw typeError('options.betas is not [beta1, beta2]');
      throw e;
    }
    if (pair.length !== 2) throw rangeError('options.betas does not have two entries');
    betas = pair;
  }
  const number = (key, fallback) => {
    const v = o[key];
    if (typeof v === 'number') return v;
    if (v === undefined && fallback !== undefined) return fallback;
    throw typeError(`options.${key} is not a number`);
  };
  const out = { learningRate: number('learningRate'), betas, eps: number('eps', 1e-8), weightDecay: number('weightDecay', 0.01) };
  for (const k of ['learningRate', 'weightDecay', 'eps']) if (!(Number.isFinite(out[k]) && out[k] >= 0)) throw rangeError(`options.${k} is not finite ≥ 0`);
  betas.forEach((b, i) => {
    if (!(b >= 0 && b < 1)) throw rangeError(`options.betas[${i}] is not in [0, 1)`);
  });
  return out;
}

/** One tensor of `shape` from number[][] / number[] / Float32Array / Float64Array: a flat array. */
function readTensor(raw, place, shape) {
  let flat;
  if (raw instanceof Float32Array || raw instanceof Float64Array) flat = Array.from(raw);
  else if (shape.length === 2) {
    const m = R.readMatrix(raw, place);
    if (m.length !== shape[0] || m[0].length !== shape[1]) throw rangeError(`${place} has the wrong shape`);
    flat = m.flat();
  } else flat = LR.readVector(raw, place);
  if (flat.length !== shape.reduce((a, b) => a * b, 1)) throw rangeError(`${place} has the wrong length`);
  if (!flat.every(Number.isFinite)) throw rangeError(`${place} has a non-finite entry`);
  return flat;
}

/** A weights tree (setWeights: any subset; `full`: every parameter): Map 'layer/name' → flat values. */
function readTree(value, name, c, full) {
  if (value === undefined || value === null || (typeof value !== 'object' && typeof value !== 'function')) throw typeError(`${name} is not an object`);
  const shapes = parameterShapes(c);
  const top = LR.readObject(value, name, [...shapes.filter(([l]) => l === null).map(([, n]) => n), 'layers'], true);
  const layerKeys = shapes.filter(([l]) => l === 0).map(([, n]) => n);
  const raw = top.layers;
  const layerObjects = [];
  if (raw === undefined) for (let l = 0; l < c.numLayers; l += 1) layerObjects.push(undefined);
  else {
    if (!Array.isArray(raw)) throw typeError(`${name}.layers is not an array`);
    if (raw.length > c.numLayers || (full && raw.length !== c.numLayers)) throw rangeError(`${name}.layers has the wrong length`);
    for (let l = 0; l < c.numLayers; l += 1) {
      const item = raw[l];
      if ((item === undefined || item === null) && !full) layerObjects.push(undefined);
      else layerObjects.push(LR.readObject(item, `${name}.layers[${l}]`, layerKeys, false) ?? {});
    }
  }
  const out = new Map();
  for (const [l, n, shape] of shapes) {
    const object = l === null ? top : layerObjects[l];
    const v = object === undefined ? undefined : object[n];
    if (v === undefined) {
      if (full) throw typeError(`${name}.${n} is missing`);
      continue;
    }
    out.set(`${l}/${n}`, readTensor(v, `${name}.${n}`, shape));
  }
  return out;
}

/** Finite f64 values beyond f32's range are refused by an f32 model once read (a RangeError). */
function refuseOutOfDtype(map, c) {
  if (c.dtype === 'float64') return;
  for (const values of map.values()) if (values.some((x) => !Number.isFinite(Math.fround(x)))) throw rangeError('a value beyond f32\'s range');
}

/** setState's argument for a model of config `c`: { weights, m, v, step } or throws Invalid. */
function readState(state, c) {
  if (state === undefined || state === null) throw typeError('state is missing');
  const o = LR.readObject(state, 'state', ['dtype', 'step', 'weights', 'm', 'v'], true);
  if (o.dtype !== c.dtype) throw typeError('state.dtype is not the model\'s');
  const s = o.step;
  if (typeof s !== 'number') throw typeError('state.step is not a number');
  if (!(s >= 0 && Number.isInteger(s) && s <= 2 ** 53 - 1)) throw rangeError('state.step is not an integer ≥ 0');
  const weights = readTree(o.weights, 'state.weights', c, true);
  const m = readTree(o.m, 'state.m', c, true);
  const v = readTree(o.v, 'state.v', c, true);
  for (const map of [weights, m, v]) refuseOutOfDtype(map, c);
  const round = c.dtype === "float64" ? (x) => x : Math.fround;
  for (const values of v.values()) if (values.some((x) => round(x) < 0)) throw rangeError('state.v has a negative entry');
  return { weights, m, v, step: s };
}

// ---- valid arguments ---------------------------------------------------------------------------

/** A small valid config. */
function modelConfig(r) {
  const positions = r.pick(POSITIONS);
  const numHeads = r.int(1, 3);
  const d = positions === 'rope' ? 2 * r.int(1, 2) : r.int(1, 3);
  const config = { vocabSize: r.int(2, 9), contextLength: r.int(2, 7), embedDim: numHeads * d, numHeads, numLayers: r.int(0, 2) };
  if (positions !== 'shortformer' || r.bool()) config.positions = positions;
  for (const k of ['mlp', 'layerNorm', 'bias']) if (r.bool(0.5)) config[k] = r.bool();
  // the architecture options a loaded checkpoint uses (each only with its part, as the contract requires)
  if (config.mlp && r.bool(0.4)) config.mlp = r.pick(['gelu_new', 'silu_gated']);
  if (config.mlp && r.bool(0.3)) config.mlpWidth = r.int(1, 9);
  if (config.mlp && r.bool(0.3)) config.mlpBias = r.bool();
  if (config.layerNorm && r.bool(0.4)) config.norm = r.pick(['layer', 'rms']);
  if (config.layerNorm && r.bool(0.3)) config.normEps = r.pick([1e-5, 1e-6, 0.1]);
  if (r.bool(0.3)) config.numKVHeads = r.pick([1, numHeads]);
  if (positions === 'rope' && r.bool(0.3)) config.ropeBase = r.pick([10000, 500000, 37.5]);
  if (r.bool(0.25)) config.tiedEmbeddings = r.bool();
  if (r.bool(0.7)) config.seed = r.pick([r.int(0, 1000), 2 ** 53 - 1, 7n, 2n ** 64n - 1n]);
  config.dtype = r.weighted([[3, 'float64'], [2, 'float32'], [1, undefined]]);
  if (config.dtype === undefined) delete config.dtype;
  return config;
}

/** Valid tokens for `c`, as number[][] or (sometimes) a typed { data, shape }; sometimes broken on purpose. */
function tokensFor(r, c) {
  const B = r.int(1, 3);
  const T = r.int(2, c.contextLength);
  const rows = Array.from({ length: B }, () => Array.from({ length: T }, () => r.int(0, c.vocabSize - 1)));
  if (r.bool(0.3)) {
    const b = r.int(0, B - 1);
    const t = r.int(0, T - 1);
    const broken = r.weighted([
      [3, () => { rows[b][t] = r.pick([c.vocabSize, c.vocabSize + 1, -1, -0, 0.5, 1.5, NaN, Infinity, -Infinity, 2 ** 32, 2 ** 53, 1e300]); return rows; }],
      [1, () => { rows[b][t] = r.pick(['1', null, undefined, true, 1n, new Number(1), [1]]); return rows; }],
      [2, () => rows.map((row) => [...row, ...Array.from({ length: c.contextLength + 1 - row.length }, () => 0)])],
      [1, () => rows.map((row) => row.slice(0, 1))],
    ])();
    return broken;
  }
  if (r.bool(0.25)) {
    const Ctor = r.pick([Int32Array, Uint32Array, Uint16Array, Uint8Array, Float32Array, Float64Array, Int8Array, Array]);
    const data = Ctor === Array ? rows.flat() : Ctor.from(rows.flat());
    const shape = r.weighted([[6, () => [B, T]], [1, () => [T, B]], [1, () => [B * T]], [1, () => [B, T, 1]], [1, () => [B, r.pick([T + 1, -T, T + 0.5, NaN, String(T)])]], [1, () => 'BT']])();
    if (r.bool(0.15) && Ctor !== Array) data[0] = r.pick([c.vocabSize, 255, 65535]);
    return { data, shape };
  }
  return rows;
}

/** A tensor of `shape` as number[][] / number[] or a typed array of the dtype. */
function tensorFor(r, shape, scale = 0.6, nonNegative = false) {
  const n = shape.reduce((a, b) => a * b, 1);
  const values = Array.from({ length: n }, () => { const x = r.uniform(-scale, scale); return nonNegative ? Math.abs(x) : x; });
  const form = r.weighted([[3, 'array'], [1, 'f64'], [1, 'f32']]);
  if (form === 'f64') return Float64Array.from(values);
  if (form === 'f32') return Float32Array.from(values);
  return shape.length === 2 ? Array.from({ length: shape[0] }, (_, i) => values.slice(i * shape[1], (i + 1) * shape[1])) : values;
}

/** A weights tree for `c`: every parameter (`full`) or a random subset. */
function treeFor(r, c, { full, nonNegative = false }) {
  const tree = {};
  if (c.numLayers > 0 && (full || r.bool(0.7))) tree.layers = Array.from({ length: c.numLayers }, () => (full || r.bool(0.7) ? {} : r.pick([undefined, null])));
  for (const [l, n, shape] of parameterShapes(c)) {
    if (!full && !r.bool(0.5)) continue;
    const target = l === null ? tree : tree.layers?.[l];
    if (target) target[n] = tensorFor(r, shape, 0.6, nonNegative);
  }
  return tree;
}

/** Breaks a tree in one of the ways setWeights/setState must refuse (or, rarely, a legal odd one). */
function breakTree(r, tree, c) {
  const shapes = parameterShapes(c);
  const [l, n, shape] = r.pick(shapes);
  const target = l === null ? tree : (tree.layers ??= Array.from({ length: c.numLayers }, () => ({})))[l] ?? (tree.layers[l] = {});
  r.weighted([
    [3, () => { target[n] = tensorFor(r, shape.length === 2 ? [shape[0] + 1, shape[1]] : [shape[0] + 1]); }],
    [3, () => { const t = tensorFor(r, shape); const flat = ArrayBuffer.isView(t) ? t : Array.isArray(t[0]) ? t[0] : t; flat[0] = r.pick([NaN, Infinity, -Infinity]); target[n] = t; }],
    [1, () => { target[n] = r.pick([new Int32Array(shape.reduce((a, b) => a * b, 1)), 'W', null, 1, {}]); }],
    [1, () => { target[r.pick(['W_q', 'W_pos2', 'bias', 'ln_w', 'layer'])] = tensorFor(r, shape); }],
    [1, () => { tree.layers = [...(tree.layers ?? []), {}]; }],
    [1, () => { tree.layers = r.pick(['layers', {}, 1]); }],
    [1, () => { if (tree.layers) tree.layers[0] = r.pick([1, 'x', [], null]); }],
    [1, () => { delete target[n]; }],
  ])();
  return tree;
}

// ---- running the package -------------------------------------------------------------------------

/** getState as plain arrays (for bit-for-bit comparison). */
const snapshot = (model) => JSON.stringify(model.getState(), (k, v) => (ArrayBuffer.isView(v) ? Array.from(v, (x) => (Object.is(x, -0) ? '-0' : x)) : typeof v === 'bigint' ? `${v}n` : v));

/**
 * Builds the model, runs `use(model)` and frees it. Any TypeError/RangeError is checked (it must
 * name its argument) and rethrown; with `guard`, a refused call must leave the state as it was and
 * the model answering a fixed forward as before.
 */
function withModel(pkg, config, use, guard = false) {
  let model;
  try {
    model = new pkg.Transformer(config);
  } catch (e) {
    throw checkRefusal(e);
  }
  let thrown = null;
  try {
    if (!guard) return use(model, () => {});
    const probe = Array.from({ length: 1 }, () => Array.from({ length: Math.min(3, model.config.contextLength) }, (_, t) => t % model.config.vocabSize));
    // one step first, so that moments and step are not zero
    model.trainStep(probe, { learningRate: 1e-3 });
    const before = snapshot(model);
    const answer = JSON.stringify(Array.from(model.forward(probe).logits.data));
    const unchanged = () => {
      if (snapshot(model) !== before) throw new Error('a refused call changed the weights, moments or step');
      if (JSON.stringify(Array.from(model.forward(probe).logits.data)) !== answer) throw new Error('the model answers differently after a refused call');
    };
    return use(model, unchanged, before);
  } catch (e) {
    thrown = checkRefusal(e);
    throw thrown;
  } finally {
    try {
      model.free();
    } catch (e) {
      // a model that cannot be freed after a call is a finding of its own; keep what the call threw
      const first = thrown ? `${thrown.name}: ${thrown.message}; then ` : '';
      // eslint-disable-next-line no-unsafe-finally
      throw new Error(`${first}free() threw ${e?.name}: ${e?.message}`);
    }
  }
}

/** Calls `f`; on a refusal, checks `unchanged()` and rethrows. */
function guarded(f, unchanged) {
  try {
    return f();
  } catch (e) {
    unchanged();
    throw e;
  }
}

// ---- comparing -----------------------------------------------------------------------------------

const F32_TOL = 1e-4;
const F64_TOL = 1e-12;
const tolOf = (c) => (c.dtype === 'float64' ? F64_TOL : F32_TOL);
const huge = (P) => O.leaves(P).some(([, v]) => v.some((x) => !(Math.abs(x) < 1e6)));

function close(actual, expected, tol, what) {
  const e = O.scaledError(actual, expected);
  return e <= tol ? null : `${what}: scaled error ${e} > ${tol}`;
}

/** max |a − e| within tol·scale. */
function closeAt(actual, expected, scale, tol, what) {
  let worst = 0;
  for (let i = 0; i < expected.length; i += 1) worst = Math.max(worst, Math.abs(actual[i] - expected[i]));
  return actual.length === expected.length && worst <= tol * scale ? null : `${what}: error ${worst} > ${tol} × the gradient's scale ${scale}`;
}

/**
 * The refusals a valid trainStep may give (a RangeError the contract allows but does not require):
 * a step beyond the dtype's range (a learning rate, or learning rate × weight decay, above 1e30) names
 * options.learningRate (or options.weightDecay, when learningRate × weightDecay > 1 and the decay is the larger); eps = 0 divides by zero where v is 0, and the package refuses that step and says so.
 */
export function adamwMayRefuse(o) {
  const big = o.learningRate > 1e30 || o.weightDecay * o.learningRate > 1e30;
  const tooLarge = /^options\.(learningRate|weightDecay) = \S+ is too large: (the AdamW step overflows|this AdamW step would move)/;
  if (o.eps === 0) return new RegExp(`the AdamW step makes .* with eps = 0, m / \\(√v \\+ eps\\) divides by zero|${tooLarge.source}`);
  return big ? tooLarge : undefined;
}

export function compareGradientTree(actual, expected, c, tol) {
  const exp = Object.fromEntries(O.leaves(expected));
  const treeScale = Math.max(...Object.values(exp).flat().map(Math.abs));
  for (const [k, v] of O.leaves(actual)) {
    if (!(k in exp)) return `grads has ${k}, which getWeights lacks`;
    if (k.endsWith('.b_K') && c.positions !== 'rope') {
      // exactly 0 in exact arithmetic without RoPE (softmax ignores a shift): what is left is the
      // rounding of Σ_j dS_ij = 0, held to the gradient's overall scale like every other tensor below
      // (not to W_K's: when every key is nearly the same, W_K's gradient is that same cancellation;
      // seed 7 case 21164 had b_K 3e-9 beside W_K 6e-9 and a tree scale of 0.74)
      if (!v.every((x) => Math.abs(x) <= tol * treeScale)) return `grads.${k} is not 0 to ${tol} of the gradients' scale ${treeScale}`;
      continue;
    }
    // The fuzzer's odd configs include ill-conditioned ones: a 1×1 W_Q on C = 1 sums T² terms of both
    // signs; LN over C = 2 entries outputs ±w + b whatever x, so W_E's gradient through it is a
    // near-total cancellation. A tensor's error is then bounded by the gradient's overall scale, not by
    // its own entries (tests/js/oracle-transformer.test.mjs holds each tensor to its own scale on
    // well-conditioned configs).
    const bad = closeAt(v, exp[k], treeScale, tol, `grads.${k}`);
    if (bad) return bad;
  }
  return O.leaves(actual).length === Object.keys(exp).length ? null : 'grads lacks some keys of getWeights';
}

/** The config getter's answer: a part's options only with the part. */
function fullConfigOf(c) {
  const out = { ...c, seed: c.seed <= 2n ** 53n - 1n ? Number(c.seed) : c.seed };
  if (!c.layerNorm) { delete out.norm; delete out.normEps; }
  if (!c.mlp) { delete out.mlpWidth; delete out.mlpBias; }
  if (c.positions !== 'rope') delete out.ropeBase;
  return out;
}

function compareConfig(model, c) {
  const expected = fullConfigOf(c);
  for (const k of CONFIG_KEYS) if (model.config[k] !== expected[k]) return `config.${k} is ${String(model.config[k])}, expected ${String(expected[k])}`;
  const n = parameterShapes(c).reduce((s, [, , shape]) => s + shape.reduce((a, b) => a * b, 1), 0);
  if (model.numParameters !== n) return `numParameters is ${model.numParameters}, expected ${n}`;
  return null;
}

// ---- the entries -------------------------------------------------------------------------------------

/** Applies a readTree Map to a getWeights tree (values rounded to f32 for an f32 model). */
function applyUpdates(P, updates, c) {
  const out = structuredClone(P);
  const round = c.dtype === 'float64' ? (x) => x : Math.fround;
  for (const [key, flat] of updates) {
    const [l, n] = key.split('/');
    const holder = l === 'null' ? out : out.layers[Number(l)];
    const t = holder[n];
    holder[n] = Array.isArray(t[0]) ? t.map((row, i) => row.map((_, j) => round(flat[i * row.length + j]))) : t.map((_, j) => round(flat[j]));
  }
  return out;
}

export const MODEL_EXPORTS = [
  {
    name: 'new Transformer + forward + headScores',
    requires: (pkg) => typeof pkg.Transformer === 'function',
    matrixArgs: [1],
    objects: { 0: MODEL_CONFIG_KINDS, 2: FORWARD_KINDS },
    valid(r) {
      const config = modelConfig(r);
      const c = { ...config, positions: config.positions ?? 'shortformer', mlp: !!config.mlp, layerNorm: !!config.layerNorm, bias: !!config.bias };
      const options = r.weighted([
        [2, () => undefined],
        [1, () => ({})],
        [2, () => ({ needWeights: true })],
        [2, () => ({ needWeights: r.bool(), headMask: Array.from({ length: c.numLayers }, () => Array.from({ length: c.numHeads }, () => r.bool())) })],
        [1, () => ({ headMask: Array.from({ length: c.numLayers + r.pick([-1, 1]) }, () => Array.from({ length: c.numHeads }, () => true)) })],
        [1, () => ({ headMask: Array.from({ length: c.numLayers }, () => Array.from({ length: c.numHeads + 1 }, () => true)) })],
      ])();
      return [config, tokensFor(r, c), options];
    },
    call: (pkg, a) => withModel(pkg, a[0], (model) => {
      const forward = model.forward(a[1], a[2]);
      const scores = model.headScores(a[1]);
      return { forward, scores, weights: model.getWeights(), configBad: compareConfig(model, readConfig(a[0])) };
    }),
    reference(a) {
      const c = readConfig(a[0]);
      const tokens = readTokens(a[1], c);
      const o = readForwardOptions(a[2], c);
      if (o.headMask && (o.headMask.length !== c.numLayers || o.headMask.some((row) => row.length !== c.numHeads))) throw rangeError('headMask does not match');
      return { c, tokens, o };
    },
    compare(actual, { c, tokens, o }) {
      if (actual.configBad) return actual.configBad;
      const P = actual.weights;
      const ref = O.forward(c, P, tokens, { headMask: o.headMask });
      const [B, T] = [tokens.length, tokens[0].length];
      if (JSON.stringify(actual.forward.logits.shape) !== JSON.stringify([B, T, c.vocabSize])) return `logits.shape is ${actual.forward.logits.shape}`;
      if (!(actual.forward.logits.data instanceof (c.dtype === 'float64' ? Float64Array : Float32Array))) return 'logits are not in the model\'s dtype';
      const tol = tolOf(c);
      const bad = close(actual.forward.logits.data, ref.logits.flat(2), tol, 'logits') ?? close(actual.forward.losses.data, ref.losses.flat(), c.dtype === 'float64' ? tol : 1e-5, 'losses');
      if (bad) return bad;
      if (o.needWeights !== (actual.forward.weights !== undefined)) return `weights ${actual.forward.weights ? 'present' : 'absent'} with needWeights ${o.needWeights}`;
      if (o.needWeights) {
        for (let l = 0; l < c.numLayers; l += 1) {
          const w = close(actual.forward.weights[l].data, ref.weights[l].flat(3), tol, `weights[${l}]`);
          if (w) return w;
        }
      }
      // headScores: the documented means of the unmasked weights
      const unmasked = O.forward(c, P, tokens);
      const flatWeights = unmasked.weights.map((w) => ({ data: w.flat(3), shape: [B, c.numHeads, T, T] }));
      const scores = O.headScores(flatWeights, tokens);
      for (let l = 0; l < c.numLayers; l += 1) {
        for (let i = 0; i < c.numHeads; i += 1) {
          for (const k of ['previousToken', 'induction', 'firstToken', 'self']) {
            const s = close([actual.scores[l][i][k]], [scores[l][i][k]], tol, `headScores[${l}][${i}].${k}`);
            if (s) return s;
          }
        }
      }
      return actual.scores.length === c.numLayers ? null : 'headScores has the wrong number of layers';
    },
  },
  {
    name: 'Transformer setWeights + gradients (a refused setWeights changes nothing)',
    requires: (pkg) => typeof pkg.Transformer === 'function',
    matrixArgs: [2],
    objects: { 0: MODEL_CONFIG_KINDS, 1: { W_E: 'matrix', W_pos: 'matrix', W_U: 'matrix', layers: 'vector', ln_final_w: 'vector' } },
    valid(r) {
      const config = modelConfig(r);
      const c = readConfig(config);
      let tree = r.bool(0.1) ? r.pick([undefined, null, 1, 'w', []]) : treeFor(r, c, { full: false });
      if (tree && typeof tree === 'object' && !Array.isArray(tree) && r.bool(0.35)) tree = breakTree(r, tree, c);
      return [config, tree, tokensFor(r, c)];
    },
    call: (pkg, a) => withModel(pkg, a[0], (model, unchanged) => {
      guarded(() => model.setWeights(a[1]), unchanged);
      const weights = model.getWeights();
      return { weights, gradients: model.gradients(a[2]) };
    }, true),
    reference(a) {
      const c = readConfig(a[0]);
      if (a[1] === undefined || a[1] === null) throw typeError('weights is missing');
      const updates = readTree(a[1], 'weights', c, false);
      refuseOutOfDtype(updates, c);
      const tokens = readTokens(a[2], c);
      // huge weights may overflow the residual stream: a RangeError naming the entry is then fine
      const nearOverflow = [...updates.values()].some((v) => v.some((x) => !(Math.abs(x) < 1e6)));
      return { c, updates, tokens, nearOverflow };
    },
    compare(actual, { c, updates, tokens }) {
      // every updated tensor holds the new values (rounded to the dtype); the gradients are the oracle's at them
      const P = actual.weights;
      const got = Object.fromEntries(O.leaves(P));
      const round = c.dtype === 'float64' ? (x) => x : Math.fround;
      for (const [key, flat] of updates) {
        const [l, n] = key.split('/');
        const path = l === 'null' ? n : `layers[${l}].${n}`;
        if (!flat.every((x, i) => Object.is(round(x), got[path][i]) || (round(x) === 0 && got[path][i] === 0))) return `getWeights().${path} is not what setWeights set`;
      }
      if (huge(P)) return null;
      const ref = O.gradients(c, P, tokens);
      return close([actual.gradients.loss], [ref.loss], c.dtype === 'float64' ? F64_TOL : 1e-5, 'loss') ?? compareGradientTree(actual.gradients.grads, ref.grads, c, tolOf(c));
    },
  },
  {
    name: 'Transformer trainStep (a refused step changes nothing)',
    requires: (pkg) => typeof pkg.Transformer === 'function',
    matrixArgs: [1],
    objects: { 0: MODEL_CONFIG_KINDS, 2: TRAIN_KINDS },
    valid(r) {
      const config = modelConfig(r);
      const c = readConfig(config);
      const options = { learningRate: r.pick([1e-3, 0.01, 0, 0.1]) };
      if (r.bool(0.3)) options.betas = [r.pick([0.9, 0, 0.5]), r.pick([0.999, 0.9, 0])];
      if (r.bool(0.2)) options.eps = r.pick([1e-8, 0, 1e-3]);
      if (r.bool(0.2)) options.weightDecay = r.pick([0.01, 0, 0.5]);
      if (r.bool(0.3)) {
        r.weighted([
          [2, () => { options.learningRate = r.pick([NaN, -1e-3, Infinity, -Infinity, -0, 1e308, '0.1', null, undefined, 1n]); }],
          [2, () => { options.betas = r.pick([[1, 0.999], [0.9, 1], [-0.1, 0.9], [0.9, NaN], [0.9], [0.9, 0.99, 0.5], [], 'b', [0.9, '0.9'], new Float64Array([0.9, 0.99])]); }],
          [1, () => { options.eps = r.pick([-1, NaN, Infinity, '1e-8', null]); }],
          [1, () => { options.weightDecay = r.pick([-0.01, NaN, Infinity, true]); }],
          [1, () => { options[r.pick(['lr', 'learning_rate', 'beta1', 'momentum', 'weight_decay'])] = 0.1; }],
        ])();
      }
      return [config, tokensFor(r, c), r.bool(0.03) ? undefined : options];
    },
    call: (pkg, a) => withModel(pkg, a[0], (model, unchanged, before) => {
      let grads = null;
      try {
        grads = model.gradients(a[1]);
      } catch {
        // the step below must refuse the same tokens
      }
      const stepped = guarded(() => model.trainStep(a[1], a[2]), unchanged);
      return { stepped, grads, before: model.step, stateBefore: before, state: model.getState(), beforeStep: JSON.parse(before).step };
    }, true),
    reference(a) {
      const c = readConfig(a[0]);
      const o = readTrainOptions(a[2]);
      const tokens = readTokens(a[1], c);
      // an eps > 0 that is 0 in float32 is refused before the step (it would divide 0 by 0 where v is 0)
      if (c.dtype !== 'float64' && o.eps > 0 && Math.fround(o.eps) === 0) throw rangeError('options.eps rounds to 0 in float32');
      const mayRefuse = adamwMayRefuse(o);
      return { c, o, tokens, mayRefuse };
    },
    compare(actual, { c, o }) {
      if (actual.grads === null) return 'gradients refused tokens that trainStep took';
      if (actual.stepped.loss !== actual.grads.loss) return `trainStep's loss ${actual.stepped.loss} is not the loss before the step ${actual.grads.loss}`;
      if (actual.state.step !== actual.beforeStep + 1 || actual.before !== actual.beforeStep + 1) return `step went from ${actual.beforeStep} to ${actual.state.step}`;
      const before = JSON.parse(actual.stateBefore);
      const flatTree = (t) => Object.fromEntries(O.leaves(t).map(([k, v]) => [k, v.map((x) => (x === '-0' ? -0 : x))]));
      const [w0, m0, v0] = ['weights', 'm', 'v'].map((k) => flatTree(before[k]));
      const [w1, m1, v1] = ['weights', 'm', 'v'].map((k) => flatTree(actual.state[k]));
      const g = Object.fromEntries(O.leaves(actual.grads.grads));
      const twoD = Object.fromEntries(parameterShapes(c).map(([l, n, shape]) => [l === null ? n : `layers[${l}].${n}`, shape.length === 2]));
      // f64: the formula to 1e-12; f32: the update is computed in f32 element-wise, so a few ulps of f32 of the step
      for (const k of Object.keys(w0)) {
        // f32: the formula's element-wise operations rounded to f32 (g² of a tiny g underflows there)
        const ref = O.adamwStep(w0[k], g[k], m0[k], v0[k], actual.beforeStep + 1, o, twoD[k], c.dtype === 'float64' ? undefined : Math.fround);
        const tol = c.dtype === 'float64' ? F64_TOL : 1e-6;
        const bad = close(w1[k], ref.p, tol, `weights ${k} after the step`) ?? close(m1[k], ref.m, tol, `m ${k}`) ?? close(v1[k], ref.v, tol, `v ${k}`);
        if (bad) return bad;
      }
      return null;
    },
  },
  {
    name: 'Transformer setState (a refused state changes nothing)',
    requires: (pkg) => typeof pkg.Transformer === 'function',
    matrixArgs: [],
    objects: { 0: MODEL_CONFIG_KINDS, 1: STATE_KINDS },
    valid(r) {
      const config = modelConfig(r);
      const c = readConfig(config);
      const state = { dtype: c.dtype, step: r.pick([0, 1, 7, 2 ** 53 - 1]), weights: treeFor(r, c, { full: true }), m: treeFor(r, c, { full: true }), v: treeFor(r, c, { full: true, nonNegative: true }) };
      if (r.bool(0.7)) {
        r.weighted([
          [4, () => { const k = r.pick(['weights', 'm', 'v']); state[k] = breakTree(r, state[k], c); }],
          [1, () => { state.dtype = c.dtype === 'float64' ? 'float32' : 'float64'; }],
          [1, () => { state.step = r.pick([-1, 1.5, NaN, 2 ** 53, '1', 1n, undefined]); }],
          [8, () => { const [l, n, shape] = r.pick(parameterShapes(c)); const t = tensorFor(r, shape, 0.6, true); (ArrayBuffer.isView(t) ? t : Array.isArray(t[0]) ? t[0] : t)[0] = -r.pick([1, 1e-300, 5e-324]); (l === null ? state.v : state.v.layers[l])[n] = t; }],
          [1, () => { delete state[r.pick(['weights', 'm', 'v', 'step', 'dtype'])]; }],
          [1, () => { state.extra = 1; }],
        ])();
      }
      return [config, state];
    },
    call: (pkg, a) => withModel(pkg, a[0], (model, unchanged) => {
      guarded(() => model.setState(a[1]), unchanged);
      return { state: model.getState() };
    }, true),
    reference(a) {
      const c = readConfig(a[0]);
      return { c, ...readState(a[1], c) };
    },
    compare(actual, { c, weights, m, v, step }) {
      if (actual.state.step !== step) return `step is ${actual.state.step}, expected ${step}`;
      const round = c.dtype === 'float64' ? (x) => x : Math.fround;
      for (const [name, map] of [['weights', weights], ['m', m], ['v', v]]) {
        const got = Object.fromEntries(O.leaves(actual.state[name]));
        for (const [key, flat] of map) {
          const [l, n] = key.split('/');
          const path = l === 'null' ? n : `layers[${l}].${n}`;
          if (!flat.every((x, i) => round(x) === got[path][i])) return `getState().${name}.${path} is not what setState restored`;
        }
      }
      return null;
    },
  },
  {
    name: 'repeatedTokens',
    requires: (pkg) => typeof pkg.repeatedTokens === 'function',
    matrixArgs: [],
    objects: { 0: TASK_KINDS },
    valid(r) {
      const vocabSize = r.int(2, 40);
      const o = { vocabSize, length: r.int(1, vocabSize - 1), batch: r.int(1, 6) };
      if (r.bool(0.7)) o.seed = r.pick([r.int(0, 1e6), 2 ** 53 - 1, 5n, 2n ** 64n - 1n]);
      if (r.bool(0.3)) o.length = vocabSize + r.int(0, 2);
      else if (r.bool(0.1)) o[r.pick(['vocabSize', 'length', 'batch'])] = r.pick([0, 1, -1, 1.5, NaN, 2 ** 32]);
      return [o];
    },
    call: (pkg, a) => {
      try {
        return pkg.repeatedTokens(a[0]);
      } catch (e) {
        throw checkRefusal(e);
      }
    },
    reference(a) {
      const opts = a[0];
      if (opts === undefined || opts === null) throw typeError('options is missing');
      const o = LR.readObject(opts, 'options', ['vocabSize', 'length', 'batch', 'seed'], true);
      const vocabSize = R.readCount(o.vocabSize, 'options.vocabSize');
      const length = R.readCount(o.length, 'options.length');
      const batch = R.readCount(o.batch, 'options.batch');
      const seed = readSeed(o.seed, 'options.seed');
      if (vocabSize < 2) throw rangeError('vocabSize < 2');
      if (length > vocabSize - 1 || length > 2 ** 20) throw rangeError('length > vocabSize − 1');
      if (batch * (1 + 2 * length) * 2 + vocabSize > BUDGET) throw rangeError('too large');
      return { expected: O.repeatedTokens({ vocabSize, length, batch, seed }) };
    },
    compare(actual, { expected }) {
      return JSON.stringify(actual) === JSON.stringify(expected) ? null : 'repeatedTokens differs from the documented algorithm';
    },
  },
];

/**
 * Issue 32's exports (compositionScores, circuits, forward's pathMask), in a table of their own so that
 * MODEL_EXPORTS' seeded case streams stay as they were (tests/js/fuzz.test.mjs runs both).
 */
export const CIRCUITS_EXPORTS = [
  {
    name: 'Transformer compositionScores + circuits + forward pathMask',
    requires: (pkg) => typeof pkg.Transformer === 'function' && typeof pkg.Transformer.prototype.circuits === 'function',
    matrixArgs: [1],
    objects: { 0: MODEL_CONFIG_KINDS, 2: CIRCUITS_KINDS, 3: PATH_KINDS },
    valid(r) {
      const config = modelConfig(r);
      const c = readConfig(config);
      const pick = () => [r.int(0, Math.max(0, c.numLayers - 1)), r.int(0, c.numHeads - 1)];
      const head = pick();
      const circuits = r.bool(0.9) ? { layer: head[0], head: head[1] } : r.pick([undefined, null, { layer: c.numLayers, head: 0 }, { layer: 0, head: c.numHeads }, { layer: 0 }, { layer: -1, head: 0 }, { layer: 0.5, head: 0 }, { layer: '0', head: 0 }]);
      const pathMask = [];
      for (let k = r.int(0, 3); k > 0 && c.numLayers > 1; k -= 1) {
        const l2 = r.int(1, c.numLayers - 1);
        pathMask.push({ from: [r.int(0, l2 - 1), r.int(0, c.numHeads - 1)], to: [l2, r.int(0, c.numHeads - 1)], input: r.pick(['query', 'key', 'value']) });
      }
      if (r.bool(0.25)) {
        const broken = r.pick([
          () => ({ from: pick(), to: pick(), input: 'key' }),
          () => ({ from: [0, 0], to: [1, 0], input: r.pick(['keys', 'Query', 1, undefined]) }),
          () => ({ from: r.pick([[0], [0, 0, 0], '0,0', [0, -1], [0, 1.5], [0, NaN], [0, '0']]), to: [1, 0], input: 'value' }),
          () => ({ from: [0, 0], to: [c.numLayers, 0], input: 'query' }),
          () => r.pick([null, undefined, 1, [0, 0], 'key']),
          () => ({ from: [0, 0], to: [1, 0], input: 'key', extra: true }),
        ]);
        pathMask.splice(r.int(0, pathMask.length), 0, broken());
      }
      const options = { pathMask };
      if (r.bool(0.5)) options.needWeights = r.bool();
      if (r.bool(0.3)) options.headMask = Array.from({ length: c.numLayers }, () => Array.from({ length: c.numHeads }, () => r.bool(0.7)));
      return [config, tokensFor(r, c), circuits, options];
    },
    call: (pkg, a) => withModel(pkg, a[0], (model) => {
      let scores, circuits, refusedArchitecture;
      try {
        scores = model.compositionScores();
        circuits = model.circuits(a[2]);
      } catch (e) {
        // the documented state Error of a tied or grouped model (circuits read W_U and one K/V head per query head)
        if (e instanceof TypeError || e instanceof RangeError || !/^compositionScores reads W_U and one K\/V head per query head; this model /.test(e?.message)) throw e;
        refusedArchitecture = e.message;
      }
      return { scores, circuits, refusedArchitecture, forward: model.forward(a[1], a[3]), weights: model.getWeights() };
    }),
    reference(a) {
      const c = readConfig(a[0]);
      // a tied W_U or grouped K/V heads: compositionScores refuses (an Error) before circuits reads its options
      const noCircuits = c.tiedEmbeddings || c.numKVHeads < c.numHeads;
      let head = null;
      if (!noCircuits) {
        if (a[2] === undefined || a[2] === null) throw typeError('options is missing');
        head = readCircuitsOptions(a[2], c);
      }
      const tokens = readTokens(a[1], c);
      const o = readForwardOptions(a[3], c);
      if (o.pathMask?.length > 0 && c.numKVHeads < c.numHeads) throw rangeError('options.pathMask cuts single heads\' paths: it needs one K/V head per query head');
      return { c, head, tokens, o, noCircuits };
    },
    compare(actual, { c, head, tokens, o, noCircuits }) {
      const P = actual.weights;
      if (noCircuits) {
        const why = c.tiedEmbeddings ? /ties W_U to W_E/ : /shares its K\/V heads between query heads/;
        if (!actual.refusedArchitecture || !why.test(actual.refusedArchitecture)) return `compositionScores of a ${c.tiedEmbeddings ? 'tied' : 'grouped'} model: ${actual.refusedArchitecture ?? 'answered'}`;
        const f = O.forward(c, P, tokens, { headMask: o.headMask, pathMask: o.pathMask });
        return close(actual.forward.logits.data, f.logits.flat(2), tolOf(c), 'logits');
      }
      if (actual.refusedArchitecture) return `compositionScores refused: ${actual.refusedArchitecture}`;
      // compositionScores: the oracle's, NaN exactly where l1 ≥ l2 (computed in f64 in both dtypes)
      const ref = CO.compositionScores(P, c.numHeads);
      for (const key of ['q', 'k', 'v']) {
        const got = actual.scores[key].flat(3);
        const want = ref[key].flat(3);
        if (got.length !== want.length) return `compositionScores.${key} has ${got.length} entries; expected ${want.length}`;
        for (let i = 0; i < got.length; i += 1) {
          if (Number.isNaN(got[i]) !== Number.isNaN(want[i]) || Math.abs(got[i] - want[i]) > 1e-10) return `compositionScores.${key} entry ${i}: ${got[i]} vs ${want[i]}`;
        }
      }
      if (!(Math.abs(actual.scores.baseline - baselineOf(c.embedDim, c.embedDim / c.numHeads)) <= 1e-12)) return `baseline ${actual.scores.baseline} is not the documented draw`;
      const circuits = CO.circuits(P, c, head);
      const matrixTol = c.dtype === 'float64' ? 1e-10 : 2 ** -23;
      for (const key of ['ov', 'qk', 'qkPositional']) {
        if (circuits[key] === null) {
          if (actual.circuits[key] !== null) return `circuits.${key} is not null with positions ${c.positions}`;
          continue;
        }
        const bad = close(actual.circuits[key].data, circuits[key].flat(), matrixTol, `circuits.${key}`);
        if (bad) return bad;
      }
      if (!(Math.abs(actual.circuits.copyingScore - circuits.copyingScore) <= 1e-9) && !(Number.isNaN(actual.circuits.copyingScore) && Number.isNaN(circuits.copyingScore))) {
        return `copyingScore ${actual.circuits.copyingScore} vs ${circuits.copyingScore}`;
      }
      const f = O.forward(c, P, tokens, { headMask: o.headMask, pathMask: o.pathMask });
      const tol = tolOf(c);
      return close(actual.forward.logits.data, f.logits.flat(2), tol, 'pathMask logits')
        ?? close(actual.forward.losses.data, f.losses.flat(), c.dtype === 'float64' ? tol : 1e-5, 'pathMask losses')
        ?? (o.needWeights ? f.weights.map((w, l) => close(actual.forward.weights[l].data, w.flat(3), tol, `pathMask weights[${l}]`)).find(Boolean) ?? null : null);
    },
  },
];

/** Values for the `rate`, `positions` and `dtype` kinds of cases.mjs's object mutator. */
export const RATE_VALUES = [0, -0, 1e-3, -1e-3, 0.5, NaN, Infinity, -Infinity, 1e308, 5e-324, '0.1', null, true, 1n, [0.1]];
export const POSITIONS_VALUES = ['shortformer', 'learned', 'rope', 'none', 'Rope', 'alibi', '', 1, null, true, new String('rope')];
export const DTYPE_VALUES = ['float32', 'float64', 'float16', 'Float64', 'f32', 64, null, true];
