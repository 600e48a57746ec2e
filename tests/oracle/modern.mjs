// An independent reference for issue 13 ("modern attention"): rotary position embedding, grouped-
// query attention, sliding windows, the bottom-right causal alignment and the KV cache, as functions
// and inside the MultiHeadAttention layer (forward and backward). Plain JS from the formulas below
// and the documented contract; it shares no code with the Rust core (src/). It builds on the other
// oracles only: the reading rules and the tracked arithmetic of ./layer.mjs (every value carried
// with a bound on the package's rounding error, sums compensated with Neumaier's method) and
// ./reference.mjs's readers.
//
// Formulas (d = head dimension, h query heads, h_kv key/value heads, g = h / h_kv):
//   RoPE, rotate-half layout (Llama / GPT-NeoX in Hugging Face): for i < d/2, the pair
//     (x[i], x[i + d/2]) of each head of the row at position p is rotated by θ = p·base^(−2i/d):
//     x[i] → x[i]·cos θ − x[i+d/2]·sin θ,   x[i+d/2] → x[i+d/2]·cos θ + x[i]·sin θ.
//     Its backward is the rotation by −θ (the transpose).
//   Positions: keys at 0 … T_k − 1; query i at T_k − T_q + i (the last T_q key positions). With a
//     KV cache holding n positions the new keys are at n …, and T_k counts the cached ones.
//   allowed[i][j] = (!causal || j ≤ p_i) && (!window || |p_i − j| < window) && (mask ? mask[i][j] : true)
//     (causal: flash-attention's bottom-right alignment; causal + window: p − w < j ≤ p, Mistral).
//     A row with nothing allowed gives 0, as in the other oracles.
//   GQA: query head i reads key/value head ⌊i / g⌋ (PyTorch repeat_interleave, Llama repeat_kv);
//     head i: softmax(Q_i·K_⌊i/g⌋ᵀ/√d, allowed)·V_⌊i/g⌋; output = [heads]·W_O (identity by default).
//   Layer: Q = x_q·W_Q + b_Q (C×C), K = x_k·W_K + b_K, V = x_v·W_V + b_V (C×h_kv·d), then RoPE on Q
//     and K per head, then GQA per batch item, then ·W_O + b_O. Dropout (training) multiplies each
//     query head's weights by the documented stream's factors, drawn item by item, query head by
//     query head, row by row (as ./layer.mjs draws them for h heads).
//   Backward of Σ output ⊙ gradOutput: as ./layer.mjs, with dK and dV of a KV head summed over its
//     g query heads, and dQ, dK rotated back by −θ before the projections' gradients.
//   Init: Xavier uniform per matrix, limit √(6/(fan_in + fan_out)), from the SplitMix64 stream
//     (./layer.mjs's splitMix64), W_Q, W_K, W_V, W_O in that order, row by row (W_K, W_V: C×h_kv·d).
//   KV cache: forward with { cache } projects the new rows, rotates them at positions cache.length …,
//     appends the new keys/values and attends over everything cached.
//
// Error model of the angles: the package may compute θ as p·base^(−2i/d), p·(1/base^(2i/d)) or
// p·exp(−(2i/d)·ln base), each a few rounding errors from the exact angle: |Δθ| ≤ (16 + 4|ln base|)·ε·|θ|;
// this oracle's own θ is as far again, and cos/sin add one ulp each, so cos and sin are trusted to
// (32 + 8|ln base|)·ε·|θ| + 4ε (at most 2).
//
// Choices the issue text leaves open (the lead decides; each is one line here):
//   - config.rope: undefined or false → no rotation; true or an object { base? } → RoPE (base
//     10000 by default); anything else, null included, is a TypeError.
//   - base: a finite number > 0; offset: an integer in 0 ..= 2^32 − 1 (and offset + T ≤ 2^20, the
//     package's limit on rotary positions); window: a positive
//     integer ≤ 2^32 − 1 (like every other count).
//   - config.rope: null is a TypeError, as config.bias: null is (the package's build of 2026-11-22
//     takes rope: null as absent).
//   - a cache used with a different batch size B → RangeError (reset() forgets B); a cache of
//     another layer, and backward after a cached forward → a plain Error. A cached forward needs
//     causal: true and takes no key, value, mask or training: else a TypeError (like averageWeights
//     without needWeights, a combination of options the package does not take).
//   - with rope, the layer refuses T_q > T_k (a RangeError: the queries would sit at negative
//     positions), as the package's build of 2026-11-22 does; without rope T_q > T_k stays allowed
//     (a causal query with no key at or before its position gets a row of zeros).
//   - checks run in argument order, matrices before options, then the shape checks.
import { Invalid, sum, readMatrix, readOptions, readMaskOptions, readCount as readCountFn } from './reference.mjs';
import * as LR from './layer.mjs';

const typeError = (why) => new Invalid('TypeError', why);
const rangeError = (why) => new Invalid('RangeError', why);
/** For misuse the package answers with a plain Error (wrong cache, backward after a cached forward). */
const stateError = (why) => new Invalid('Error', why);

export const DEFAULT_BASE = 10000;
/** Whether `rope: true` means `rope: {}` (the package's declarations say it does). */
export const ROPE_TRUE_MEANS_DEFAULT = true;
/**
 * Whether groupedQueryAttention and rotaryEmbedding read their options before their matrices. false:
 * matrices first, as multiHeadAttention does (and reference.mjs for it); the package's build of
 * 2026-11-22 reads the new functions' options first. Only the error class of input wrong in two
 * places at once depends on it.
 */
export const OPTIONS_BEFORE_MATRICES = false;
/** Rotary positions stay below 2^20: the package computes its own sin/cos, accurate up to there. */
export const MAX_POSITION = 2 ** 20;
/** The largest offset (and window): counts are u32 in the core, as numberOfHeads is. */
export const MAX_COUNT = 2 ** 32 - 1;

// ---- small helpers ---------------------------------------------------------------------------

/** |a − e| / max(1, |e|): relative error above 1, absolute below (the suites' 1e-12 measure). */
export const relErr = (a, e) => Math.abs(a - e) / Math.max(1, Math.abs(e));

/** Largest relErr over same-shape nested arrays (any depth); Infinity on a shape mismatch or a non-number. */
export function maxRelErr(actual, expected) {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return Infinity;
    let worst = 0;
    for (let i = 0; i < expected.length; i += 1) worst = Math.max(worst, maxRelErr(actual[i], expected[i]));
    return worst;
  }
  return typeof actual === 'number' && Number.isFinite(actual) ? relErr(actual, expected) : Infinity;
}

/** Query head i's key/value head: consecutive query heads share one (repeat_interleave). */
export const kvHeadOf = (i, h, kv) => Math.floor(i / (h / kv));

/** The angle of pair i of a head of width d at position p. */
export const ropeAngle = (p, i, d, base) => p * base ** ((-2 * i) / d);

/** How far the package's cos θ and sin θ may be from this oracle's (see the header); at most 2. */
function trigError(theta, base) {
  const e = (32 + 8 * Math.abs(Math.log(base))) * LR.EPS * Math.abs(theta) + 4 * LR.EPS;
  return e <= 2 ? e : 2;
}

/** Positions of the queries: the last T_q of T_k key positions. */
export const queryPositions = (Tq, Tk) => Array.from({ length: Tq }, (_, i) => Tk - Tq + i);

/** The allowed table (see the header). */
export function allowedTable(Tq, Tk, { causal = false, window, mask } = {}) {
  return Array.from({ length: Tq }, (_, i) => {
    const p = Tk - Tq + i;
    return Array.from({ length: Tk }, (__, j) => (!causal || j <= p) && (window === undefined || Math.abs(p - j) < window) && (mask ? mask[i][j] : true));
  });
}

// ---- RoPE on tracked matrices ------------------------------------------------------------------

/**
 * Rotates the tracked matrix X (rows at `positions`, h heads of d columns) by θ, or by −θ when
 * `inverse` (the backward). Returns a new tracked matrix; `state.near` is set near f64's range.
 */
export function rotateTracked(X, positions, h, d, base, state, inverse = false) {
  const half = d / 2;
  const v = X.v.map((row) => row.slice());
  const e = X.e.map((row) => row.slice());
  for (let t = 0; t < X.v.length; t += 1) {
    for (let k = 0; k < h; k += 1) {
      for (let i = 0; i < half; i += 1) {
        const theta = ropeAngle(positions[t], i, d, base);
        // θ = 0 (position 0) is the identity in any implementation: cos 0 = 1 and sin 0 = 0 exactly
        if (theta === 0) continue;
        if (!Number.isFinite(theta)) state.near = true;
        const c = Math.cos(theta);
        const s = inverse ? -Math.sin(theta) : Math.sin(theta);
        const trig = trigError(theta, base);
        const [ja, jb] = [k * d + i, k * d + i + half];
        const [a, b, ea, eb] = [X.v[t][ja], X.v[t][jb], X.e[t][ja], X.e[t][jb]];
        const rounding = (x, y) => {
          const mag = Math.abs(x) + Math.abs(y);
          if (!(mag < LR.BIG)) state.near = true;
          return 3 * (LR.EPS * mag + LR.ETA);
        };
        const spread = LR.tm(Math.abs(a) + ea, trig) + LR.tm(Math.abs(b) + eb, trig);
        // x[i] → x[i]·c − x[i+d/2]·s ;  x[i+d/2] → x[i+d/2]·c + x[i]·s
        v[t][ja] = sum([a * c, -(b * s)]);
        e[t][ja] = LR.tm(ea, Math.abs(c)) + LR.tm(eb, Math.abs(s)) + spread + rounding(a * c, b * s);
        v[t][jb] = sum([b * c, a * s]);
        e[t][jb] = LR.tm(eb, Math.abs(c)) + LR.tm(ea, Math.abs(s)) + spread + rounding(b * c, a * s);
      }
    }
  }
  return { v, e };
}

/** Plain (untracked) rotate-half RoPE of a T×(h·d) number[][], row t at positions[t]. */
export function rotate(X, positions, { numberOfHeads, headDimensions, base = DEFAULT_BASE }, inverse = false) {
  return rotateTracked(LR.exact(X), positions, numberOfHeads, headDimensions, base, { near: false }, inverse).v;
}

// ---- reading the new arguments -------------------------------------------------------------------

function readBase(v, place) {
  if (v === undefined) return DEFAULT_BASE;
  if (typeof v !== 'number') throw typeError(`${place} is not a number`);
  if (!(Number.isFinite(v) && v > 0)) throw rangeError(`${place} is not a finite number > 0`);
  return v;
}

/**
 * The documented limit on the angles (docs/api.md, rotaryEmbedding): sine and cosine are computed for
 * angles below 2^20 radians; the largest angle of positions up to `last` is last·base^(−2i/d) at pair
 * i = d/2 − 1 when base < 1, else at pair 0 (the position itself).
 */
function checkAngles(base, last, d, place) {
  const i = base < 1 ? Math.max(d / 2 - 1, 0) : 0;
  if (last >= 0 && ropeAngle(last, i, d, base) >= MAX_POSITION) throw rangeError(`${place} is too small for these positions`);
}

function readOffset(v, place) {
  if (v === undefined) return 0;
  if (typeof v !== 'number') throw typeError(`${place} is not a number`);
  if (!(Number.isInteger(v) && v >= 0 && v <= MAX_COUNT)) throw rangeError(`${place} is not an integer in 0 ..= 2^32 − 1`);
  return v === 0 ? 0 : v;
}

function readWindow(v, place) {
  if (v === undefined) return undefined;
  return readCountFn(v, place);
}

function readRope(v, place) {
  if (v === undefined || v === false) return null;
  if (v === true && ROPE_TRUE_MEANS_DEFAULT) return { base: DEFAULT_BASE };
  // boxed primitives (new Boolean(true), new Number(1), new String('')) are refused, as the package does
  const boxed = v instanceof Boolean || v instanceof Number || v instanceof String;
  if (v === null || typeof v !== 'object' || Array.isArray(v) || boxed) throw typeError(`${place} is not an object (or false)`);
  const o = LR.readObject(v, place, ['base'], true);
  return { base: readBase(o.base, `${place}.base`) };
}

const track = (M) => M.map((row) => row.map(() => 0));
/** 8e + 4η, the fuzzer's bound from a tracked error (as its compareTracked). */
const boundOf = (e) => e.map((row) => row.map((x) => 8 * x + 4 * 2 ** -1074));

// ---- the functions ---------------------------------------------------------------------------------

/**
 * The reference for `rotaryEmbedding(X, { numberOfHeads, headDimensions, base = 10000, offset = 0 })`:
 * { value, bound, nearOverflow }. Throws Invalid for input the package must refuse.
 */
export function rotaryEmbedding(Xx, options) {
  const readOpts = () => {
    if (options === undefined || options === null) throw typeError('options is missing');
    const o = readOptions(options, ['numberOfHeads', 'headDimensions', 'base', 'offset']);
    const h = readCountFn(o.numberOfHeads, 'options.numberOfHeads');
    const d = readCountFn(o.headDimensions, 'options.headDimensions');
    return { h, d, base: readBase(o.base, 'options.base'), offset: readOffset(o.offset, 'options.offset') };
  };
  const early = OPTIONS_BEFORE_MATRICES ? readOpts() : undefined;
  const X = readMatrix(Xx, 'X');
  const { h, d, base, offset } = early ?? readOpts();
  if (d % 2 !== 0) throw rangeError('options.headDimensions is odd');
  if (X[0].length !== h * d) throw rangeError('X does not have numberOfHeads·headDimensions columns');
  if (offset + X.length > MAX_POSITION) throw rangeError('rotary positions must stay below 2^20');
  checkAngles(base, offset + X.length - 1, d, 'options.base');
  if (2 * X.length * X[0].length > 2 ** 27) throw rangeError('too large');
  const state = { near: false };
  const positions = X.map((_, t) => offset + t);
  const out = rotateTracked(LR.exact(X), positions, h, d, base, state);
  return { value: out.v, bound: boundOf(out.e), tracked: out, nearOverflow: state.near, inputs: { X, h, d, base, offset } };
}

/**
 * The reference for `groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions,
 * W_O?, causal?, mask?, window? })`: { value, bound, nearOverflow, heads: [{ kv, weights }] }.
 */
export function groupedQueryAttention(Qx, Kx, Vx, options, { withRope = false } = {}) {
  let ropeOption;
  const readOpts = () => {
    if (options === undefined || options === null) throw typeError('options is missing');
    const o = readOptions(options, ['numberOfHeads', 'numberOfKVHeads', 'headDimensions', 'W_O', 'causal', 'mask', 'window', ...(withRope ? ['rope'] : [])]);
    const h = readCountFn(o.numberOfHeads, 'options.numberOfHeads');
    const kv = readCountFn(o.numberOfKVHeads, 'options.numberOfKVHeads');
    const d = readCountFn(o.headDimensions, 'options.headDimensions');
    const W_O = o.W_O === undefined ? undefined : readMatrix(o.W_O, 'options.W_O');
    const { causal, mask } = readMaskOptions(o);
    const window = readWindow(o.window, 'options.window');
    if (withRope) ropeOption = readTraceRope(o.rope);
    return { h, kv, d, W_O, causal, mask, window };
  };
  const early = OPTIONS_BEFORE_MATRICES ? readOpts() : undefined;
  const Q = readMatrix(Qx, 'Q');
  const K = readMatrix(Kx, 'K');
  const V = readMatrix(Vx, 'V');
  const { h, kv, d, W_O, causal, mask, window } = early ?? readOpts();
  const rope = ropeOption; // the trace's rope option, read with the other options
  if (h % kv !== 0) throw rangeError('options.numberOfKVHeads does not divide options.numberOfHeads');
  const [C, kvC, Tq, Tk] = [h * d, kv * d, Q.length, K.length];
  if (Q[0].length !== C) throw rangeError('Q does not have numberOfHeads·headDimensions columns');
  if (K[0].length !== kvC) throw rangeError('K does not have numberOfKVHeads·headDimensions columns');
  if (V.length !== Tk || V[0].length !== kvC) throw rangeError('V is not T_k×(numberOfKVHeads·headDimensions)');
  if (mask && (mask.length !== Tq || mask[0].length !== Tk)) throw rangeError('options.mask is not T_q×T_k');
  if (W_O && (W_O.length !== C || W_O[0].length !== C)) throw rangeError('options.W_O is not C×C');
  if (4 * Tq * C + 2 * Tk * kvC + (W_O ? C * C : 0) + 2 * (Tq + Tk) * d + 3 * Tq * Tk > 2 ** 27) throw rangeError('too large');
  const state = { near: false };
  const allowed = allowedTable(Tq, Tk, { causal, window, mask });
  const [q, k, v] = [Q, K, V].map(LR.exact);
  if (rope) {
    if (d % 2 !== 0) throw rangeError('headDimensions is odd');
    if (Tq > Tk) throw rangeError('with rope T_q ≤ T_k');
    if (rope.offset + Tk > MAX_POSITION) throw rangeError('rotary positions must stay below 2^20');
    checkAngles(rope.base, rope.offset + Tk - 1, d, 'options.rope.base');
    const kPos = Array.from({ length: Tk }, (_, j) => rope.offset + j);
    const qPos = queryPositions(Tq, Tk).map((p) => rope.offset + p);
    return finish(rotateTracked(q, qPos, h, d, rope.base, state), rotateTracked(k, kPos, kv, d, rope.base, state));
  }
  return finish(q, k);
  function finish(q, k) {
  const heads = [];
  for (let i = 0; i < h; i += 1) {
    const g = kvHeadOf(i, h, kv);
    const scores = LR.scale(LR.mm(LR.cols(q, i * d, (i + 1) * d), LR.tr(LR.cols(k, g * d, (g + 1) * d)), state), 1 / Math.sqrt(d), state);
    const weights = LR.softmax(scores, allowed);
    heads.push({ kv: g, weights, context: LR.mm(weights, LR.cols(v, g * d, (g + 1) * d), state) });
  }
  const concat = LR.hcat(heads.map((hd) => hd.context));
  const out = W_O ? LR.mm(concat, LR.exact(W_O), state) : concat;
  return { value: out.v, bound: boundOf(out.e), tracked: out, nearOverflow: state.near, heads, allowed, inputs: { Q, K, V, W_O, h, kv, d } };
  }
}

/**
 * The reference for `traceGroupedQueryAttention(Q, K, V, { …groupedQueryAttention's options, rope })`'s
 * output: with `rope` (true or { base = 10000, offset = 0 }) Q and K are rotated first — key j at
 * offset + j, query i at offset + T_k − T_q + i — with the rotation's error tracked, then the same heads.
 */
export function traceGroupedQueryAttention(Qx, Kx, Vx, options) {
  return groupedQueryAttention(Qx, Kx, Vx, options, { withRope: true });
}

/** The trace's `rope` option: absent or false → none; true → base 10000 at offset 0; `{ base?, offset? }`. */
function readTraceRope(rope) {
  if (rope === undefined || rope === false) return undefined;
  // boxed primitives (new Boolean(true)) are refused, not read as an options object
  const boxed = rope instanceof Boolean || rope instanceof Number || rope instanceof String;
  if (rope === null || boxed || (rope !== true && (typeof rope !== 'object' || Array.isArray(rope)))) throw typeError('options.rope is not true, false or an object');
  if (rope === true) return { base: DEFAULT_BASE, offset: 0 };
  const r = readOptions(rope, ['base', 'offset']);
  return { base: readBase(r.base, 'options.rope.base'), offset: readOffset(r.offset, 'options.rope.offset') };
}

// ---- the layer: construction and parameters ----------------------------------------------------

/** Xavier-uniform W_Q (C×C), W_K, W_V (C×kvC), W_O (C×C) from `seed`: each its own √(6/(fan_in+fan_out)). */
export function initialWeights(C, kvC, seed) {
  const rng = LR.splitMix64(BigInt(seed));
  const draw = (rows, columns) => {
    const limit = Math.sqrt(6 / (rows + columns));
    return Array.from({ length: rows }, () => Array.from({ length: columns }, () => limit * (2 * rng.nextUnit() - 1)));
  };
  return { W_Q: draw(C, C), W_K: draw(C, kvC), W_V: draw(C, kvC), W_O: draw(C, C) };
}

const WEIGHT_NAMES = ['W_Q', 'W_K', 'W_V', 'W_O'];
const BIAS_NAMES = ['b_Q', 'b_K', 'b_V', 'b_O'];

/** The split C = h·d, h = h_kv·g, d even with RoPE; the layer fits the budget. */
function checkShape(C, h, kv, rope) {
  if (C % h !== 0) throw rangeError('config.embedDim is not divisible by config.numHeads');
  if (h % kv !== 0) throw rangeError('config.numKVHeads does not divide config.numHeads');
  const d = C / h;
  if (rope && d % 2 !== 0) throw rangeError('config.rope needs an even head dimension (embedDim / numHeads)');
  const kvC = kv * d;
  if (4 * C * C + 4 * C * kvC + 4 * C + 4 * kvC > LR.BUDGET) throw rangeError('the layer does not fit');
  return { d, kvC };
}

/** Shapes of each parameter: [rows, columns] (biases: [1, n]). */
function shapes({ C, kvC }) {
  return { W_Q: [C, C], W_K: [C, kvC], W_V: [C, kvC], W_O: [C, C], b_Q: [1, C], b_K: [1, kvC], b_V: [1, kvC], b_O: [1, C] };
}

function layer(base, W, b) {
  const s = shapes(base);
  for (const name of WEIGHT_NAMES) if (W[name].length !== s[name][0] || W[name][0].length !== s[name][1]) throw rangeError(`${name} is not ${s[name][0]}×${s[name][1]}`);
  if (b) for (const name of BIAS_NAMES) if (b[name].length !== s[name][1]) throw rangeError(`${name} does not have ${s[name][1]} entries`);
  return { ...base, W, b };
}

/**
 * `new MultiHeadAttention({ embedDim, numHeads, numKVHeads = numHeads, bias = true, dropout = 0, seed = 0, rope })`:
 * the layer as a record { id, C, h, kv, d, kvC, dropout, seed, rope: { base } | null, W, b | null }.
 * `id` is kept by setWeights: a cache belongs to the layer it was created for.
 */
export function construct(config) {
  const o = LR.readObject(config, 'config', ['embedDim', 'numHeads', 'numKVHeads', 'bias', 'dropout', 'seed', 'rope'], true);
  const C = LR.readCount(o.embedDim, 'config.embedDim');
  const h = LR.readCount(o.numHeads, 'config.numHeads');
  const kv = o.numKVHeads === undefined ? h : LR.readCount(o.numKVHeads, 'config.numKVHeads');
  const bias = LR.readFlag(o.bias, 'config.bias', true);
  const dropout = LR.readProbability(o.dropout, 'config.dropout');
  const seed = LR.readSeed(o.seed, 'config.seed');
  const rope = readRope(o.rope, 'config.rope');
  const { d, kvC } = checkShape(C, h, kv, rope);
  const zeros = (n) => new Array(n).fill(0);
  const b = bias ? { b_Q: zeros(C), b_K: zeros(kvC), b_V: zeros(kvC), b_O: zeros(C) } : null;
  return layer({ id: Symbol('layer'), C, h, kv, d, kvC, dropout, seed, rope }, initialWeights(C, kvC, seed), b);
}

/** `layer.setWeights(update)`: a new record with the same id (the old one is unchanged). */
export function setWeights(L, update) {
  const o = LR.readObject(update, 'weights', [...WEIGHT_NAMES, ...BIAS_NAMES], true);
  const W = { ...L.W };
  // each tensor nested, or flat typed (issue 33) of the current tensor's size
  for (const name of WEIGHT_NAMES) {
    if (LR.isFlat(o[name])) W[name] = LR.readFlat(o[name], `weights.${name}`, L.W[name].length, L.W[name][0].length);
    else if (o[name] !== undefined) W[name] = readMatrix(o[name], `weights.${name}`);
  }
  let b = L.b;
  if (b) {
    b = { ...b };
    for (const name of BIAS_NAMES) {
      if (LR.isFlat(o[name])) b[name] = LR.readFlat(o[name], `weights.${name}`, L.b[name].length, 0);
      else if (o[name] !== undefined) b[name] = LR.readVector(o[name], `weights.${name}`);
    }
  } else {
    for (const name of BIAS_NAMES) if (o[name] !== undefined) throw typeError(`weights.${name}: the layer has no biases`);
  }
  return layer(L, W, b);
}

/** The parameters as getWeights() returns them (b_* as 1×n rows here, like ./layer.mjs's parameters). */
export function parameters(L) {
  const out = { W_Q: L.W.W_Q, W_K: L.W.W_K, W_V: L.W.W_V, W_O: L.W.W_O };
  if (L.b) for (const name of BIAS_NAMES) out[name] = [L.b[name]];
  return out;
}

/** numParameters: 2C² + 2C·kvC (+ 2C + 2kvC with biases). */
export const numParameters = (L) => 2 * L.C * L.C + 2 * L.C * L.kvC + (L.b ? 2 * L.C + 2 * L.kvC : 0);

// ---- the KV cache ------------------------------------------------------------------------------------

/** `layer.createCache()`: { length, reset() } plus the cached rotated keys and values per batch item. */
export function createCache(L) {
  const cache = {
    layerId: L.id,
    length: 0,
    B: undefined,
    K: [],
    V: [],
    reset() {
      Object.assign(cache, { length: 0, B: undefined, K: [], V: [] });
    },
  };
  return cache;
}

const isCache = (x) => x !== null && typeof x === 'object' && typeof x.layerId === 'symbol' && Array.isArray(x.K);
const vcat = (A, Bm) => ({ v: [...A.v, ...Bm.v], e: [...A.e, ...Bm.e] });

// ---- forward ---------------------------------------------------------------------------------------

function readForwardOptions(options, L) {
  const o = LR.readObject(options, 'options', ['mask', 'causal', 'needWeights', 'averageWeights', 'training', 'window', 'cache'], false) ?? {};
  const causal = LR.readFlag(o.causal, 'options.causal');
  const mask = o.mask === undefined ? undefined : LR.readBoolMatrix(o.mask, 'options.mask');
  const read = {
    causal,
    mask,
    needWeights: LR.readFlag(o.needWeights, 'options.needWeights'),
    averageWeights: LR.readFlag(o.averageWeights, 'options.averageWeights'),
    training: LR.readFlag(o.training, 'options.training'),
    window: readWindow(o.window, 'options.window'),
    cache: undefined,
  };
  if (o.cache !== undefined) {
    if (!isCache(o.cache)) throw typeError('options.cache is not a cache from createCache()');
    if (o.cache.layerId !== L.id) throw stateError('options.cache belongs to another layer');
    if (!causal) throw typeError('options.cache needs options.causal: true');
    if (mask) throw typeError('options.cache takes no options.mask');
    if (read.training) throw typeError('options.cache takes no options.training');
    read.cache = o.cache;
  }
  return read;
}

/**
 * `layer.forward(query, key?, value?, options?)` on a layer `L` whose dropout stream is at its start.
 * options: { mask, causal, needWeights, averageWeights, training, window, cache }. With a cache
 * (createCache(L)) the new keys and values are appended to it. Returns { output, weights?, batched,
 * items, near, dims: { B, Tq, Tk, past }, cached, averageWeights, training } with tracked values,
 * or throws Invalid.
 */
export function forward(L, query, key, value, options) {
  const q = LR.readBatch(query, 'query');
  const { batched } = q;
  const keys = LR.readDefault(key, 'key', q.items, batched);
  const values = LR.readDefault(value, 'value', keys, batched);
  const opts = readForwardOptions(options, L);
  if (opts.cache && ((key !== undefined && key !== null) || (value !== undefined && value !== null))) throw typeError('options.cache is for self-attention: key and value are omitted');
  const { C, h, kv, d } = L;
  const B = q.items.length;
  for (const [name, items] of [['key', keys], ['value', values]]) if (items.length !== B) throw rangeError(`${name} has another batch size`);
  for (const items of [q.items, keys, values]) {
    for (const m of items) {
      if (m[0].length !== C) throw rangeError('an item is not T×C');
      if (m.length !== items[0].length) throw rangeError('items differ in T');
    }
  }
  const { cache } = opts;
  if (cache && cache.B !== undefined && cache.B !== B) throw rangeError(`options.cache holds ${cache.B} batch items, the query ${B}`);
  const Tq = q.items[0].length;
  const Tnew = keys[0].length;
  if (values[0].length !== Tnew) throw rangeError('value and key differ in T');
  const past = cache ? cache.length : 0;
  const Tk = past + Tnew;
  if (L.rope && Tq > Tk) throw rangeError(`with rope the queries are the last T_q of the T_k key positions: T_q = ${Tq} > T_k = ${Tk}`);
  if (opts.mask && (opts.mask.length !== Tq || opts.mask[0].length !== Tk)) throw rangeError('options.mask is not T_q×T_k');
  if (opts.averageWeights && !opts.needWeights) throw typeError('averageWeights without needWeights');
  const dropout = opts.training && L.dropout > 0;
  const kept = 1 + (dropout ? 2 : 0) + (opts.needWeights ? 1 : 0);
  if (B * (4 * (Tq + Tk) * C + h * Tq * Tk * kept) + 2 * Tq * Tk + Math.floor((3 * (Tq + Tk) * C) / h) + 4 * C * C > LR.BUDGET) throw rangeError('too large');

  const state = { near: false };
  const rng = dropout ? LR.splitMix64(L.seed ^ LR.DROPOUT_STREAM) : null;
  const keepScale = 1 / (1 - L.dropout);
  const allowed = allowedTable(Tq, Tk, opts);
  const qPos = queryPositions(Tq, Tk);
  const kPos = Array.from({ length: Tnew }, (_, j) => past + j);
  const scaleFactor = 1 / Math.sqrt(d);
  const project = (x, W, b) => {
    const p = LR.mm(LR.exact(x), LR.exact(W), state);
    return b ? LR.addRow(p, b, state) : p;
  };
  const items = [];
  for (let n = 0; n < B; n += 1) {
    const [xq, xk, xv] = [q.items[n], keys[n], values[n]];
    let Q = project(xq, L.W.W_Q, L.b?.b_Q);
    let K = project(xk, L.W.W_K, L.b?.b_K);
    const Vnew = project(xv, L.W.W_V, L.b?.b_V);
    if (L.rope) {
      Q = rotateTracked(Q, qPos, h, d, L.rope.base, state);
      K = rotateTracked(K, kPos, kv, d, L.rope.base, state);
    }
    const Kall = cache && past > 0 ? vcat(cache.K[n], K) : K;
    const Vall = cache && past > 0 ? vcat(cache.V[n], Vnew) : Vnew;
    const heads = [];
    for (let i = 0; i < h; i += 1) {
      const g = kvHeadOf(i, h, kv);
      const Qh = LR.cols(Q, i * d, (i + 1) * d);
      const Kh = LR.cols(Kall, g * d, (g + 1) * d);
      const Vh = LR.cols(Vall, g * d, (g + 1) * d);
      const weights = LR.softmax(LR.scale(LR.mm(Qh, LR.tr(Kh), state), scaleFactor, state), allowed);
      let factor = null;
      let used = weights;
      if (dropout) {
        factor = LR.exact(weights.v.map((row) => row.map(() => (rng.nextUnit() < L.dropout ? 0 : keepScale))));
        used = LR.had(weights, factor, state);
      }
      heads.push({ g, Qh, Kh, Vh, weights, factor, used, context: LR.mm(used, Vh, state) });
    }
    const concat = LR.hcat(heads.map((hd) => hd.context));
    let output = LR.mm(concat, LR.exact(L.W.W_O), state);
    if (L.b) output = LR.addRow(output, L.b.b_O, state);
    items.push({ xq, xk, xv, Q, K, Vnew, heads, concat, output });
  }
  if (cache) {
    // committed only once everything was accepted: a refused call leaves the cache as it was
    items.forEach((item, n) => {
      cache.K[n] = past > 0 ? vcat(cache.K[n], item.K) : item.K;
      cache.V[n] = past > 0 ? vcat(cache.V[n], item.Vnew) : item.Vnew;
    });
    cache.length = Tk;
    cache.B = B;
  }
  let weights;
  if (opts.needWeights) {
    weights = items.map((item) => {
      if (!opts.averageWeights) return item.heads.map((hd) => hd.used);
      const mean = { v: track(item.heads[0].used.v), e: track(item.heads[0].used.v) };
      for (const hd of item.heads) LR.accumulate(mean, hd.used, state);
      return { v: mean.v.map((row) => row.map((x) => x / h)), e: mean.e.map((row, i) => row.map((x, j) => x / h + LR.round(mean.v[i][j] / h, 1, state))) };
    });
  }
  return { output: items.map((item) => item.output), weights, averageWeights: opts.averageWeights, training: opts.training, batched, items, near: state.near, cached: Boolean(cache), dims: { B, Tq, Tk, past } };
}

// ---- backward ---------------------------------------------------------------------------------------

/** `layer.backward(gradOutput)` after `forward` returned `F`: { inputs: { query, key, value }, params, batched, near } tracked. */
export function backward(L, F, gradOutput) {
  if (F.cached) throw stateError('backward after a forward with a KV cache');
  const g = LR.readBatch(gradOutput, 'gradOutput');
  const { B, Tq, Tk } = F.dims;
  const { C, h, kv, d } = L;
  if (g.batched !== F.batched) throw rangeError('gradOutput has another rank than the output');
  if (g.items.length !== B) throw rangeError('gradOutput has another batch size');
  for (const m of g.items) if (m.length !== Tq || m[0].length !== C) throw rangeError('gradOutput is not T_q×C');
  const dropout = F.items[0].heads[0].factor !== null;
  const cacheSize = B * (4 * (Tq + Tk) * C + h * Tq * Tk * (dropout ? 3 : 1)) + 4 * C * C;
  if (cacheSize + (B + 1) * (Tq + 2 * Tk) * C + Tq * C + 4 * Tq * Tk + 4 * C * C + 4 * C > LR.BUDGET) throw rangeError('too large');
  const state = { near: F.near };
  const zero = (r, c) => LR.exact(Array.from({ length: r }, () => new Array(c).fill(0)));
  const s = shapes(L);
  const grads = Object.fromEntries(WEIGHT_NAMES.map((name) => [name, zero(...s[name])]));
  const biasGrads = L.b ? Object.fromEntries(BIAS_NAMES.map((name) => [name, zero(...s[name])])) : null;
  const addBias = (name, M) => {
    if (!biasGrads) return;
    const sums = LR.colSums(M, state);
    LR.accumulate(biasGrads[name], { v: [sums.v], e: [sums.e] }, state);
  };
  const scaleFactor = 1 / Math.sqrt(d);
  const qPos = queryPositions(Tq, Tk);
  const kPos = Array.from({ length: Tk }, (_, j) => j);
  const inputs = { query: [], key: [], value: [] };
  F.items.forEach((item, n) => {
    const dOut = LR.exact(g.items[n]);
    const dConcat = LR.mm(dOut, LR.tr(LR.exact(L.W.W_O)), state);
    LR.accumulate(grads.W_O, LR.mm(LR.tr(item.concat), dOut, state), state);
    addBias('b_O', dOut);
    const dQ = [];
    // a KV head's gradient: the sum over its query heads (the first one taken as is)
    const dK = new Array(kv).fill(null);
    const dV = new Array(kv).fill(null);
    const add = (list, k, M) => {
      if (list[k] === null) list[k] = M;
      else LR.accumulate(list[k], M, state);
    };
    item.heads.forEach((hd, i) => {
      const dContext = LR.cols(dConcat, i * d, (i + 1) * d);
      const dUsed = LR.mm(dContext, LR.tr(hd.Vh), state);
      add(dV, hd.g, LR.mm(LR.tr(hd.used), dContext, state));
      const dWeights = hd.factor ? LR.had(dUsed, hd.factor, state) : dUsed;
      const dScores = LR.scale(LR.softmaxBackward(hd.weights, dWeights, state), scaleFactor, state);
      dQ.push(LR.mm(dScores, hd.Kh, state));
      add(dK, hd.g, LR.mm(LR.tr(dScores), hd.Qh, state));
    });
    let gQ = LR.hcat(dQ);
    let gK = LR.hcat(dK);
    const gV = LR.hcat(dV);
    if (L.rope) {
      gQ = rotateTracked(gQ, qPos, h, d, L.rope.base, state, true);
      gK = rotateTracked(gK, kPos, kv, d, L.rope.base, state, true);
    }
    inputs.query.push(LR.mm(gQ, LR.tr(LR.exact(L.W.W_Q)), state));
    inputs.key.push(LR.mm(gK, LR.tr(LR.exact(L.W.W_K)), state));
    inputs.value.push(LR.mm(gV, LR.tr(LR.exact(L.W.W_V)), state));
    LR.accumulate(grads.W_Q, LR.mm(LR.tr(LR.exact(item.xq)), gQ, state), state);
    LR.accumulate(grads.W_K, LR.mm(LR.tr(LR.exact(item.xk)), gK, state), state);
    LR.accumulate(grads.W_V, LR.mm(LR.tr(LR.exact(item.xv)), gV, state), state);
    addBias('b_Q', gQ);
    addBias('b_K', gK);
    addBias('b_V', gV);
  });
  const params = { ...grads };
  if (biasGrads) Object.assign(params, biasGrads);
  return { inputs, params, batched: F.batched, near: state.near };
}

// ---- decoding with a KV cache ------------------------------------------------------------------------

/**
 * Feeds `chunks` (each [T_c, C], or [B, T_c, C] for a batch) through one cache with
 * { cache, causal: true, window } and returns { rows, tracked, outputs, cache }: `rows` the output rows of
 * every chunk stacked (number[][], or one per batch item), which must equal one causal forward over
 * the whole sequence. Training (dropout) is not modelled here: the stream would run across calls.
 */
export function decode(L, chunks, { window } = {}) {
  const cache = createCache(L);
  const outputs = chunks.map((x) => forward(L, x, undefined, undefined, window === undefined ? { cache, causal: true } : { cache, causal: true, window }));
  const B = outputs[0].output.length;
  const tracked = Array.from({ length: B }, (_, b) => outputs.map((F) => F.output[b]).reduce(vcat));
  const rows = outputs[0].batched ? tracked.map((m) => m.v) : tracked[0].v;
  return { rows, tracked, outputs, cache };
}

/** The whole sequence of `chunks` as one input (row-wise concatenation, per batch item). */
export function concatChunks(chunks) {
  const batched = Array.isArray(chunks[0][0][0]);
  if (!batched) return chunks.flat(1);
  return chunks[0].map((_, b) => chunks.flatMap((chunk) => chunk[b]));
}
