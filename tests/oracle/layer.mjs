// An independent reference for the MultiHeadAttention layer, in plain JS from the math and the
// documented contract (the crate docs of `layer::init` for the seeded weights and dropout
// stream; the TypeScript declarations for the JS API). It shares no code with the Rust core.
//
//   Q = x_q·W_Q + b_Q,  K = x_k·W_K + b_K,  V = x_v·W_V + b_V           (W oriented [in, out])
//   head i: w_i = softmax(Q_i·K_iᵀ/√d_head, allowed) (⊙ dropout factor when training), ctx_i = w_i·V_i
//   output = [ctx_0 | … | ctx_{h−1}]·W_O + b_O
// and the backward pass of the loss Σ output ⊙ gradOutput (summed over the batch).
//
// Every value is carried with a bound on the package's rounding error (`e`, propagated op by
// op with the standard model |fl(x ∘ y) − x ∘ y| ≤ ε|x ∘ y| + η, η for subnormals, and the exact
// sensitivity of the softmax), so the fuzzer can check odd inputs (1e300, subnormals, −0) and
// not only well-conditioned ones. Sums are compensated (Neumaier), so the reference's own error
// is negligible next to the bound.
import { Invalid, sum, readMatrix } from './reference.mjs';

const typeError = (why) => new Invalid('TypeError', why);
const rangeError = (why) => new Invalid('RangeError', why);
// The arithmetic the error model describes: f64 (unit roundoff 2^-53, η = 2^-1074 for subnormal
// results, "near the range" from 2^1000); `inF32` switches it to f32's for one call.
let EPS = 2 ** -53;
let ETA = 2 ** -1074;
let BIG = 2 ** 1000;

/**
 * Runs `fn` (e.g. a `forward`) with the error model of f32 arithmetic: unit roundoff 2^-24, η =
 * 2^-149, "near the range" (`near`, an overflow RangeError acceptable) from 2^104, within 2^-24 of
 * f32's largest value. The values are still the exact-math reference in f64; only the bounds on
 * the package's rounding error (and `near`) are f32's, propagated through every step like f64's.
 */
export function inF32(fn) {
  const saved = [EPS, ETA, BIG];
  [EPS, ETA, BIG] = [2 ** -24, 2 ** -149, 2 ** 104];
  try {
    return fn();
  } finally {
    [EPS, ETA, BIG] = saved;
  }
}
const BUDGET = 2 ** 27;

// ---- the seeded generator, from the crate docs (SplitMix64 on BigInt) -----------------------

const MASK64 = (1n << 64n) - 1n;
export const DROPOUT_STREAM = 0xd1b54a32d192ed03n;

export function splitMix64(seed) {
  let state = BigInt.asUintN(64, seed);
  const nextU64 = () => {
    state = (state + 0x9e3779b97f4a7c15n) & MASK64;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
    return z ^ (z >> 31n);
  };
  return { nextU64, nextUnit: () => Number(nextU64() >> 11n) * 2 ** -53 };
}

/** Xavier-uniform C×C weights W_Q, W_K, W_V, W_O from `seed`, row by row. */
export function initialWeights(C, seed) {
  const rng = splitMix64(seed);
  const limit = Math.sqrt(3 / C);
  const draw = () => Array.from({ length: C }, () => Array.from({ length: C }, () => limit * (2 * rng.nextUnit() - 1)));
  return { W_Q: draw(), W_K: draw(), W_V: draw(), W_O: draw() };
}

// ---- reading arguments by the contract ---------------------------------------------------

/** An options-like object: undefined/null → undefined (unless required); only `known` string keys. */
function readObject(o, name, known, required) {
  if (o === undefined || o === null) {
    if (required) throw typeError(`${name} is missing`);
    return undefined;
  }
  if (typeof o !== 'object' || Array.isArray(o)) throw typeError(`${name} is not an object`);
  for (const key of Reflect.ownKeys(o)) {
    if (typeof key === 'string' && !known.includes(key)) throw typeError(`${name}.${key} is not an option`);
  }
  return o;
}

function readCount(v, place) {
  if (v === undefined) throw typeError(`${place} is missing`);
  if (typeof v !== 'number') throw typeError(`${place} is not a number`);
  if (!(v >= 1 && Number.isInteger(v) && v <= 2 ** 32 - 1)) throw rangeError(`${place} is not a positive integer`);
  return v;
}

function readFlag(v, place, fallback = false) {
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') throw typeError(`${place} is not a boolean`);
  return v;
}

function readProbability(v, place) {
  if (v === undefined) return 0;
  if (typeof v !== 'number') throw typeError(`${place} is not a number`);
  if (!(v >= 0 && v < 1)) throw rangeError(`${place} is not in [0, 1)`);
  return v;
}

function readSeed(v, place) {
  if (v === undefined) return 0n;
  if (typeof v === 'bigint') {
    if (v < 0n || v > MASK64) throw rangeError(`${place} is outside 0 ..= 2^64 − 1`);
    return v;
  }
  if (typeof v !== 'number') throw typeError(`${place} is not a number or bigint`);
  if (!(v >= 0 && Number.isInteger(v) && v <= 2 ** 53 - 1)) throw rangeError(`${place} is not an integer in 0 ..= 2^53 − 1`);
  return BigInt(v);
}

function readVector(x, name) {
  if (!Array.isArray(x)) throw typeError(`${name} is not an array`);
  const n = x.length;
  if (n === 0) throw rangeError(`${name} is empty`);
  if (n > BUDGET) throw rangeError(`${name} is too long`);
  const out = [];
  for (let i = 0; i < n; i += 1) {
    const v = x[i];
    if (typeof v !== 'number') throw typeError(`${name}[${i}] is not a number`);
    if (!Number.isFinite(v)) throw rangeError(`${name}[${i}] is not finite`);
    out.push(v);
  }
  return out;
}

function readBoolMatrix(x, name) {
  if (!Array.isArray(x)) throw typeError(`${name} is not an array`);
  if (x.length === 0) throw rangeError(`${name} is empty`);
  const out = [];
  let cols = 0;
  for (let i = 0; i < x.length; i += 1) {
    const row = x[i];
    if (!Array.isArray(row)) throw typeError(`${name}[${i}] is not an array`);
    if (i === 0) {
      if (row.length === 0) throw rangeError(`${name}[0] is empty`);
      if (x.length * row.length > BUDGET) throw rangeError(`${name} is too large`);
      cols = row.length;
    } else if (row.length !== cols) throw rangeError(`${name} is ragged`);
    const values = [];
    for (let j = 0; j < cols; j += 1) {
      if (typeof row[j] !== 'boolean') throw typeError(`${name}[${i}][${j}] is not a boolean`);
      values.push(row[j]);
    }
    out.push(values);
  }
  return out;
}

/** `[T, C]` or `[B, T, C]` (a batch when x[0][0] is an array): { items, batched }. */
export function readBatch(x, name) {
  if (Array.isArray(x) && x.length > 0 && Array.isArray(x[0]) && x[0].length > 0 && Array.isArray(x[0][0])) {
    const items = [];
    for (let b = 0; b < x.length; b += 1) items.push(readMatrix(x[b], `${name}[${b}]`));
    return { items, batched: true };
  }
  return { items: [readMatrix(x, name)], batched: false };
}

/** key/value: undefined/null → the default; otherwise batched exactly when the query is. */
function readDefault(x, name, fallback, batched) {
  if (x === undefined || x === null) return fallback;
  const { items, batched: isBatched } = readBatch(x, name);
  if (isBatched !== batched) throw rangeError(`${name} and the query differ in rank`);
  return items;
}

// ---- constructing layers -------------------------------------------------------------------

function checkSplit(C, h) {
  if (C % h !== 0) throw rangeError('C is not divisible by numHeads');
  if (8 * C * C + 8 * C > BUDGET) throw rangeError('the layer does not fit');
  return C / h;
}

const zeros = (C) => new Array(C).fill(0);

/** The layer as a plain record { C, h, d, dropout, seed, W: { W_Q, … }, b: { b_Q, … } | null }. */
function layer(C, h, dropout, seed, W, b) {
  const d = checkSplit(C, h);
  for (const name of ['W_Q', 'W_K', 'W_V', 'W_O']) {
    if (W[name].length !== C || W[name][0].length !== C) throw rangeError(`${name} is not C×C`);
  }
  if (b) for (const name of ['b_Q', 'b_K', 'b_V', 'b_O']) if (b[name].length !== C) throw rangeError(`${name} does not have C entries`);
  return { C, h, d, dropout, seed, W, b };
}

/** `new MultiHeadAttention(config)`. */
export function construct(config) {
  const o = readObject(config, 'config', ['embedDim', 'numHeads', 'bias', 'dropout', 'seed'], true);
  const C = readCount(o.embedDim, 'config.embedDim');
  const h = readCount(o.numHeads, 'config.numHeads');
  const bias = readFlag(o.bias, 'config.bias', true);
  const dropout = readProbability(o.dropout, 'config.dropout');
  const seed = readSeed(o.seed, 'config.seed');
  checkSplit(C, h);
  const b = bias ? { b_Q: zeros(C), b_K: zeros(C), b_V: zeros(C), b_O: zeros(C) } : null;
  return layer(C, h, dropout, seed, initialWeights(C, seed), b);
}

/**
 * A flat Float32Array / Float64Array tensor of `rows`×`cols` entries (`cols` 0: a vector of `rows`), as
 * `setWeights` reads one: the wrong length or a non-finite entry is a RangeError; values widened exactly.
 */
export function readFlat(raw, place, rows, cols) {
  const n = cols === 0 ? rows : rows * cols;
  if (raw.length !== n) throw rangeError(`${place} has ${raw.length} entries; expected ${n}`);
  const flat = Array.from(raw);
  if (!flat.every(Number.isFinite)) throw rangeError(`${place} has a non-finite entry`);
  return cols === 0 ? flat : Array.from({ length: rows }, (_, i) => flat.slice(i * cols, (i + 1) * cols));
}

export const isFlat = (x) => x instanceof Float32Array || x instanceof Float64Array;

/** The options of `getWeights(options)` and `grads(options)`: undefined for the nested form, else 'float32' or 'float64'. */
export function readDtypeOptions(options) {
  const dtype = readObject(options, 'options', ['dtype'], false)?.dtype;
  if (dtype !== undefined && dtype !== 'float32' && dtype !== 'float64') throw typeError('options.dtype is not float32 or float64');
  return dtype;
}

/** `layer.setWeights(update)`: a new record (the old one is unchanged). Each tensor nested, or flat typed. */
export function setWeights(L, update) {
  const o = readObject(update, 'weights', ['W_Q', 'W_K', 'W_V', 'W_O', 'b_Q', 'b_K', 'b_V', 'b_O'], true);
  const W = { ...L.W };
  for (const name of ['W_Q', 'W_K', 'W_V', 'W_O']) {
    if (isFlat(o[name])) W[name] = readFlat(o[name], `weights.${name}`, L.C, L.C);
    else if (o[name] !== undefined) W[name] = readMatrix(o[name], `weights.${name}`);
  }
  let b = L.b;
  if (b) {
    b = { ...b };
    for (const name of ['b_Q', 'b_K', 'b_V', 'b_O']) {
      if (isFlat(o[name])) b[name] = readFlat(o[name], `weights.${name}`, L.C, 0);
      else if (o[name] !== undefined) b[name] = readVector(o[name], `weights.${name}`);
    }
  } else {
    for (const name of ['b_Q', 'b_K', 'b_V', 'b_O']) if (o[name] !== undefined) throw typeError(`weights.${name}: the layer has no biases`);
  }
  return layer(L.C, L.h, L.dropout, L.seed, W, b);
}

const columns = (M, from, to) => M.map((row) => row.slice(from, to));
const transpose = (M) => M[0].map((_, j) => M.map((row) => row[j]));

/** Both biases or neither; split the fused one into Q, K, V. */
function fusedBiases(bQKV, bO, C) {
  if (bQKV === undefined && bO === undefined) return null;
  if (bQKV === undefined || bO === undefined) throw typeError('give both biases or neither');
  if (bQKV.length !== 3 * C) throw rangeError('the fused bias does not have 3C entries');
  if (bO.length !== C) throw rangeError('the output bias does not have C entries');
  return { b_Q: bQKV.slice(0, C), b_K: bQKV.slice(C, 2 * C), b_V: bQKV.slice(2 * C), b_O: bO };
}

/** `MultiHeadAttention.fromFusedQKV(weights)`. */
export function fromFusedQKV(weights) {
  const o = readObject(weights, 'weights', ['W_QKV', 'b_QKV', 'W_O', 'b_O', 'numHeads', 'dropout', 'seed'], true);
  if (o.W_QKV === undefined) throw typeError('weights.W_QKV is missing');
  const WQKV = readMatrix(o.W_QKV, 'weights.W_QKV');
  if (o.W_O === undefined) throw typeError('weights.W_O is missing');
  const WO = readMatrix(o.W_O, 'weights.W_O');
  const bQKV = o.b_QKV === undefined ? undefined : readVector(o.b_QKV, 'weights.b_QKV');
  const bO = o.b_O === undefined ? undefined : readVector(o.b_O, 'weights.b_O');
  const h = readCount(o.numHeads, 'weights.numHeads');
  const dropout = readProbability(o.dropout, 'weights.dropout');
  const seed = readSeed(o.seed, 'weights.seed');
  const C = WQKV.length;
  if (WQKV[0].length !== 3 * C) throw rangeError('W_QKV is not C×3C');
  const b = fusedBiases(bQKV, bO, C);
  const W = { W_Q: columns(WQKV, 0, C), W_K: columns(WQKV, C, 2 * C), W_V: columns(WQKV, 2 * C, 3 * C), W_O: WO };
  return layer(C, h, dropout, seed, W, b);
}

/** `MultiHeadAttention.fromPyTorch(state)` (weights [out, in]: ours are their transposes). */
export function fromPyTorch(state) {
  const keys = ['in_proj_weight', 'in_proj_bias', 'out_proj_weight', 'out_proj_bias', 'out_proj.weight', 'out_proj.bias', 'numHeads', 'dropout', 'seed'];
  const o = readObject(state, 'state', keys, true);
  if (o.in_proj_weight === undefined) throw typeError('state.in_proj_weight is missing');
  const inW = readMatrix(o.in_proj_weight, 'state.in_proj_weight');
  const outA = o.out_proj_weight === undefined ? undefined : readMatrix(o.out_proj_weight, 'state.out_proj_weight');
  const outB = o['out_proj.weight'] === undefined ? undefined : readMatrix(o['out_proj.weight'], 'state["out_proj.weight"]');
  if (outA && outB) throw typeError('both spellings of out_proj_weight');
  const outW = outA ?? outB;
  if (!outW) throw typeError('state.out_proj_weight is missing');
  const inB = o.in_proj_bias === undefined ? undefined : readVector(o.in_proj_bias, 'state.in_proj_bias');
  const biasA = o.out_proj_bias === undefined ? undefined : readVector(o.out_proj_bias, 'state.out_proj_bias');
  const biasB = o['out_proj.bias'] === undefined ? undefined : readVector(o['out_proj.bias'], 'state["out_proj.bias"]');
  if (biasA && biasB) throw typeError('both spellings of out_proj_bias');
  const h = readCount(o.numHeads, 'state.numHeads');
  const dropout = readProbability(o.dropout, 'state.dropout');
  const seed = readSeed(o.seed, 'state.seed');
  const C = inW[0].length;
  if (inW.length !== 3 * C) throw rangeError('in_proj_weight is not 3C×C');
  if (outW.length !== C || outW[0].length !== C) throw rangeError('out_proj_weight is not C×C');
  const b = fusedBiases(inB, biasA ?? biasB, C);
  const ours = transpose(inW); // (C, 3C)
  const W = { W_Q: columns(ours, 0, C), W_K: columns(ours, C, 2 * C), W_V: columns(ours, 2 * C, 3 * C), W_O: transpose(outW) };
  return layer(C, h, dropout, seed, W, b);
}

// ---- tracked arithmetic: values with a bound on the package's rounding error -----------------
// A tracked matrix is { v, e }: values and error bounds of the same shape. `state.near` is set
// when a magnitude comes within 2^-24 of f64's range (an overflow RangeError is then acceptable).

/** a·b with 0·∞ = 0: an exactly-zero factor contributes no error, however large the other bound. */
const tm = (a, b) => (a === 0 || b === 0 ? 0 : a * b);
const exact = (v) => ({ v, e: v.map((row) => row.map(() => 0)) });
const round = (x, ops, state) => {
  if (!(Math.abs(x) < BIG)) state.near = true;
  return ops * (EPS * Math.abs(x) + ETA);
};

/** A·B with A n×k, B k×m (both tracked). */
function mm(A, B, state) {
  const k = B.v.length;
  const m = B.v[0].length;
  const v = [];
  const e = [];
  for (let i = 0; i < A.v.length; i += 1) {
    const vr = [];
    const er = [];
    for (let j = 0; j < m; j += 1) {
      const terms = [];
      let mag = 0;
      let err = 0;
      for (let l = 0; l < k; l += 1) {
        const a = A.v[i][l];
        const b = B.v[l][j];
        terms.push(a * b);
        mag += Math.abs(a * b);
        err += tm(A.e[i][l], Math.abs(b)) + tm(Math.abs(a), B.e[l][j]) + tm(A.e[i][l], B.e[l][j]);
      }
      const x = sum(terms);
      if (!(mag < BIG)) state.near = true;
      vr.push(x);
      er.push(err + (k + 2) * (EPS * mag + ETA));
    }
    v.push(vr);
    e.push(er);
  }
  return { v, e };
}

const tr = (A) => ({ v: transpose(A.v), e: transpose(A.e) });
const cols = (A, from, to) => ({ v: columns(A.v, from, to), e: columns(A.e, from, to) });
const hcat = (parts) => ({ v: parts[0].v.map((_, i) => parts.flatMap((p) => p.v[i])), e: parts[0].e.map((_, i) => parts.flatMap((p) => p.e[i])) });
const map2 = (A, B, f) => A.map((row, i) => row.map((x, j) => f(x, B[i][j], i, j)));

/** A + row vector b (exact). */
function addRow(A, b, state) {
  const v = A.v.map((row) => row.map((x, j) => x + b[j]));
  return { v, e: map2(A.e, v, (err, x) => err + round(x, 1, state)) };
}

function scale(A, s, state) {
  const v = A.v.map((row) => row.map((x) => x * s));
  return { v, e: map2(A.e, v, (err, x) => tm(err, s) + round(x, 1, state)) };
}

/** Element-wise A ⊙ B. */
function had(A, B, state) {
  const v = map2(A.v, B.v, (a, b) => a * b);
  return { v, e: A.v.map((row, i) => row.map((a, j) => {
    const b = B.v[i][j];
    return tm(A.e[i][j], Math.abs(b)) + tm(Math.abs(a), B.e[i][j]) + tm(A.e[i][j], B.e[i][j]) + round(v[i][j], 1, state);
  })) };
}

/** Σ over rows of A (a row vector, tracked). */
function colSums(A, state) {
  const m = A.v[0].length;
  const v = [];
  const e = [];
  for (let j = 0; j < m; j += 1) {
    const column = A.v.map((row) => row[j]);
    const mag = sum(column.map(Math.abs));
    v.push(sum(column));
    e.push(sum(A.e.map((row) => row[j])) + (A.v.length + 1) * (EPS * mag + ETA));
    if (!(mag < BIG)) state.near = true;
  }
  return { v, e };
}

/** Adds tracked B into the accumulator A (same shape), in place. */
function accumulate(A, B, state) {
  for (let i = 0; i < A.v.length; i += 1) {
    for (let j = 0; j < A.v[i].length; j += 1) {
      A.v[i][j] += B.v[i][j];
      A.e[i][j] += B.e[i][j] + round(A.v[i][j], 1, state);
    }
  }
}

/**
 * Softmax along rows under `allowed`. A score perturbation |δ_l| ≤ e_l moves w_j by a factor in
 * [exp(−(e_j + max e)), exp(e_j + max e)], so |Δw_j| ≤ w_j·expm1(e_j + max e), plus the package's
 * own rounding in exp, the sum and the division; weights stay in [0, 1] whatever happens.
 */
function softmax(S, allowed) {
  const Tk = S.v[0].length;
  const v = [];
  const e = [];
  S.v.forEach((row, i) => {
    const keep = row.map((_, j) => allowed[i][j]);
    if (!keep.includes(true)) {
      v.push(row.map(() => 0));
      e.push(row.map(() => 0));
      return;
    }
    const max = Math.max(...row.filter((_, j) => keep[j]));
    const ex = row.map((s, j) => (keep[j] ? Math.exp(s - max) : 0));
    const total = sum(ex);
    const w = ex.map((x) => x / total);
    const maxErr = Math.max(...S.e[i].filter((_, j) => keep[j]));
    v.push(w);
    // in f32's model (inF32) also the weights f32's exp flushes to 0 (e^x below about 2^-126, from
    // x < -87.3): such a weight may be lost entirely, which the backward then carries on
    const flushed = (j) => (EPS === 2 ** -24 && ex[j] < 2 ** -125 ? w[j] : 0);
    e.push(w.map((wj, j) => (keep[j] ? atMostOne(spread(wj, row[j] - max, total, 2 * (S.e[i][j] + maxErr)) + (Tk + 6) * (EPS * wj + ETA) + flushed(j)) : 0)));
  });
  return { v, e };
}

/**
 * w_j·expm1(E): how far score errors up to E (in the exponent) move the weight w_j = exp(gap)/total.
 * When w_j underflowed (below 2^-1022, or to 0) that product loses the weight that E can still
 * raise: then exp(gap + E)/total, which is at least w_j·expm1(E) and does not underflow while it matters.
 */
const spread = (wj, gap, total, E) => (wj >= 2 ** -1022 ? tm(wj, Math.expm1(E)) : Math.exp(gap + E) / total);

/** min(x, 1), and 1 for NaN (an undefined error bound: the weight may be anything in [0, 1]). */
const atMostOne = (x) => (x <= 1 ? x : 1);

/** Backward of the softmax: w_j·(g_j − Σ_l w_l g_l), row by row. */
function softmaxBackward(W, G, state) {
  const v = [];
  const e = [];
  W.v.forEach((w, i) => {
    const g = G.v[i];
    const dot = sum(w.map((x, l) => x * g[l]));
    const dotMag = sum(w.map((x, l) => Math.abs(x * g[l])));
    const dotErr = sum(w.map((x, l) => tm(W.e[i][l], Math.abs(g[l])) + tm(x, G.e[i][l]) + tm(W.e[i][l], G.e[i][l]))) + (w.length + 2) * (EPS * dotMag + ETA);
    if (!(dotMag < BIG)) state.near = true;
    const row = [];
    const rowErr = [];
    w.forEach((wj, j) => {
      const diff = g[j] - dot;
      const diffErr = G.e[i][j] + dotErr + round(diff, 1, state) + EPS * (Math.abs(g[j]) + Math.abs(dot));
      const x = wj * diff;
      row.push(x);
      rowErr.push(tm(W.e[i][j], Math.abs(diff)) + tm(wj, diffErr) + tm(W.e[i][j], diffErr) + round(x, 1, state));
    });
    v.push(row);
    e.push(rowErr);
  });
  return { v, e };
}

// ---- forward and backward --------------------------------------------------------------------

/** Reads forward's options: { mask, causal, needWeights, averageWeights, training }. */
function readForwardOptions(options) {
  const o = readObject(options, 'options', ['mask', 'causal', 'needWeights', 'averageWeights', 'training'], false) ?? {};
  const causal = readFlag(o.causal, 'options.causal');
  const mask = o.mask === undefined ? undefined : readBoolMatrix(o.mask, 'options.mask');
  return {
    causal,
    mask,
    needWeights: readFlag(o.needWeights, 'options.needWeights'),
    averageWeights: readFlag(o.averageWeights, 'options.averageWeights'),
    training: readFlag(o.training, 'options.training'),
  };
}

/**
 * `layer.forward(query, key?, value?, options?)` on a freshly built layer `L` (its dropout
 * stream at the start). Returns { output, weights?, batched, cache, near } with tracked values,
 * or throws Invalid.
 */
/**
 * Attention of given Q, K, V (no projections, no biases) with this module's error model: what the
 * function exports compute (dotProductAttention: h = 1, d = Q's width; multiHeadAttention: h heads
 * of d columns, V split the same way, then W_O when given). Run it inside `inF32` for their f32
 * cores. Returns { output: tracked T×(V's width or W_O's), near }.
 */
export function attentionTracked(Q, K, V, { h, d, W_O, causal, mask }) {
  const state = { near: false };
  const allowed = Q.map((_, i) => K.map((__, j) => (!causal || j <= i + K.length - Q.length) && (mask ? mask[i][j] : true)));
  const dv = V[0].length / h;
  const [q, k, v] = [Q, K, V].map(exact);
  const heads = [];
  for (let i = 0; i < h; i += 1) {
    const scaled = scale(mm(cols(q, i * d, (i + 1) * d), tr(cols(k, i * d, (i + 1) * d)), state), 1 / Math.sqrt(d), state);
    heads.push(mm(softmax(scaled, allowed), cols(v, i * dv, (i + 1) * dv), state));
  }
  const concat = hcat(heads);
  return { output: W_O ? mm(concat, exact(W_O), state) : concat, near: state.near };
}

export function forward(L, query, key, value, options) {
  const q = readBatch(query, 'query');
  const batched = q.batched;
  const keys = readDefault(key, 'key', q.items, batched);
  const values = readDefault(value, 'value', keys, batched);
  const opts = readForwardOptions(options);
  const { C, h, d } = L;
  const B = q.items.length;
  // the core's checks, in its order
  for (const [name, items] of [['key', keys], ['value', values]]) if (items.length !== B) throw rangeError(`${name} has another batch size`);
  for (const items of [q.items, keys, values]) {
    for (const m of items) {
      if (m[0].length !== C) throw rangeError('an item is not T×C');
      if (m.length !== items[0].length) throw rangeError('items differ in T');
    }
  }
  const Tq = q.items[0].length;
  const Tk = keys[0].length;
  if (values[0].length !== Tk) throw rangeError('value and key differ in T');
  if (opts.mask && (opts.mask.length !== Tq || opts.mask[0].length !== Tk)) throw rangeError('mask is not T_q×T_k');
  if (opts.averageWeights && !opts.needWeights) throw typeError('averageWeights without needWeights');
  const dropout = opts.training && L.dropout > 0;
  const kept = 1 + (dropout ? 2 : 0) + (opts.needWeights ? 1 : 0);
  if (B * (4 * (Tq + Tk) * C + h * Tq * Tk * kept) + 2 * Tq * Tk + Math.floor((3 * (Tq + Tk) * C) / h) + 4 * C * C > BUDGET) throw rangeError('too large');

  const state = { near: false };
  const rng = dropout ? splitMix64(L.seed ^ DROPOUT_STREAM) : null;
  // a kept weight's factor 1/(1 − p); in f32's error model (inF32) the one the f32 layer multiplies by,
  // rounded to f32 (src/layer/forward_f32.rs), so that the factor itself is exact in both
  const keepScale = EPS === 2 ** -24 ? Math.fround(1 / (1 - L.dropout)) : 1 / (1 - L.dropout);
  // causal compares positions: the queries are the last Tq of the Tk key positions (bottom-right)
  const allowed = Array.from({ length: Tq }, (_, i) => Array.from({ length: Tk }, (__, j) => (!opts.causal || j <= i + Tk - Tq) && (opts.mask ? opts.mask[i][j] : true)));
  const scaleFactor = 1 / Math.sqrt(d);
  const project = (x, W, b) => {
    const p = mm(exact(x), exact(W), state);
    return b ? addRow(p, b, state) : p;
  };
  const items = [];
  for (let n = 0; n < B; n += 1) {
    const [xq, xk, xv] = [q.items[n], keys[n], values[n]];
    const Q = project(xq, L.W.W_Q, L.b?.b_Q);
    const K = project(xk, L.W.W_K, L.b?.b_K);
    const V = project(xv, L.W.W_V, L.b?.b_V);
    const heads = [];
    for (let i = 0; i < h; i += 1) {
      const [Qh, Kh, Vh] = [Q, K, V].map((M) => cols(M, i * d, (i + 1) * d));
      const scaled = scale(mm(Qh, tr(Kh), state), scaleFactor, state);
      const weights = softmax(scaled, allowed);
      let factor = null;
      let used = weights;
      if (dropout) {
        factor = exact(weights.v.map((row) => row.map(() => (rng.nextUnit() < L.dropout ? 0 : keepScale))));
        used = had(weights, factor, state);
      }
      heads.push({ Qh, Kh, Vh, weights, factor, used, context: mm(used, Vh, state) });
    }
    const concat = hcat(heads.map((hd) => hd.context));
    let output = mm(concat, exact(L.W.W_O), state);
    if (L.b) output = addRow(output, L.b.b_O, state);
    items.push({ xq, xk, xv, Q, K, V, heads, concat, output });
  }
  let weights;
  if (opts.needWeights) {
    const perItem = items.map((item) => {
      if (!opts.averageWeights) return item.heads.map((hd) => hd.used);
      const mean = { v: item.heads[0].used.v.map((row) => row.map(() => 0)), e: item.heads[0].used.v.map((row) => row.map(() => 0)) };
      for (const hd of item.heads) accumulate(mean, hd.used, state);
      return { v: mean.v.map((row) => row.map((x) => x / h)), e: mean.e.map((row, i) => row.map((x, j) => x / h + round(mean.v[i][j] / h, 1, state))) };
    });
    weights = perItem;
  }
  return { output: items.map((item) => item.output), weights, averageWeights: opts.averageWeights, training: opts.training, batched, items, near: state.near, dims: { B, Tq, Tk } };
}

/** `layer.backward(gradOutput)` after `forward` returned `F`. Returns tracked input and parameter gradients. */
export function backward(L, F, gradOutput) {
  const g = readBatch(gradOutput, 'gradOutput');
  const { B, Tq, Tk } = F.dims;
  const { C, h, d } = L;
  if (g.batched !== F.batched) throw rangeError('gradOutput has another rank than the output');
  if (g.items.length !== B) throw rangeError('gradOutput has another batch size');
  for (const m of g.items) if (m.length !== Tq || m[0].length !== C) throw rangeError('gradOutput is not T_q×C');
  const dropout = F.items[0].heads[0].factor !== null;
  const cache = B * (4 * (Tq + Tk) * C + h * Tq * Tk * (dropout ? 3 : 1)) + 4 * C * C;
  if (cache + (B + 1) * (Tq + 2 * Tk) * C + Tq * C + 4 * Tq * Tk + 4 * C * C + 4 * C > BUDGET) throw rangeError('too large');
  const state = { near: F.near };
  const zero = (r, c) => exact(Array.from({ length: r }, () => new Array(c).fill(0)));
  const grads = { W_Q: zero(C, C), W_K: zero(C, C), W_V: zero(C, C), W_O: zero(C, C) };
  const biasGrads = L.b ? { b_Q: zero(1, C), b_K: zero(1, C), b_V: zero(1, C), b_O: zero(1, C) } : null;
  const addBias = (name, M) => {
    if (!biasGrads) return;
    const s = colSums(M, state);
    accumulate(biasGrads[name], { v: [s.v], e: [s.e] }, state);
  };
  const scaleFactor = 1 / Math.sqrt(d);
  const inputs = { query: [], key: [], value: [] };
  F.items.forEach((item, n) => {
    const dOut = exact(g.items[n]);
    const dConcat = mm(dOut, tr(exact(L.W.W_O)), state);
    accumulate(grads.W_O, mm(tr(item.concat), dOut, state), state);
    addBias('b_O', dOut);
    const dQ = [];
    const dK = [];
    const dV = [];
    item.heads.forEach((hd, i) => {
      const dContext = cols(dConcat, i * d, (i + 1) * d);
      const dUsed = mm(dContext, tr(hd.Vh), state);
      dV.push(mm(tr(hd.used), dContext, state));
      const dWeights = hd.factor ? had(dUsed, hd.factor, state) : dUsed;
      const dScores = scale(softmaxBackward(hd.weights, dWeights, state), scaleFactor, state);
      dQ.push(mm(dScores, hd.Kh, state));
      dK.push(mm(tr(dScores), hd.Qh, state));
    });
    const [gQ, gK, gV] = [hcat(dQ), hcat(dK), hcat(dV)];
    inputs.query.push(mm(gQ, tr(exact(L.W.W_Q)), state));
    inputs.key.push(mm(gK, tr(exact(L.W.W_K)), state));
    inputs.value.push(mm(gV, tr(exact(L.W.W_V)), state));
    accumulate(grads.W_Q, mm(tr(exact(item.xq)), gQ, state), state);
    accumulate(grads.W_K, mm(tr(exact(item.xk)), gK, state), state);
    accumulate(grads.W_V, mm(tr(exact(item.xv)), gV, state), state);
    addBias('b_Q', gQ);
    addBias('b_K', gK);
    addBias('b_V', gV);
  });
  const params = { ...grads };
  if (biasGrads) for (const [name, M] of Object.entries(biasGrads)) params[name] = M;
  return { inputs, params, batched: F.batched, near: state.near };
}

/** The layer's parameters as getWeights() returns them (b_* as 1×C rows here). */
export function parameters(L) {
  const out = { W_Q: L.W.W_Q, W_K: L.W.W_K, W_V: L.W.W_V, W_O: L.W.W_O };
  if (L.b) for (const [name, b] of Object.entries(L.b)) out[name] = [b];
  return out;
}

// The reading rules and the tracked arithmetic, for tests/oracle/modern.mjs (grouped-query
// attention, RoPE, windows and the KV cache build on the same error model).
export { BUDGET, readObject, readCount, readFlag, readProbability, readSeed, readVector, readBoolMatrix, readDefault };
export { EPS, ETA, BIG, tm, exact, round, mm, tr, cols, hcat, addRow, scale, had, colSums, accumulate, softmax, softmaxBackward };
