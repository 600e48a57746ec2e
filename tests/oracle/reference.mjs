// An independent reference for attention-lab, written from the math in plain JS. It shares no
// code with the Rust core: it validates input by the documented contract, sums with Neumaier's
// compensated summation (so its own rounding error is negligible next to the core's), and
// answers either { ok: true, value, ... } or { ok: false, why } for input the package must refuse.
//
//   dotProductAttention(Q, K, V, { causal?, mask? })     = softmax(Q·Kᵀ/√d_k, allowed) · V
//   multiHeadAttention(Q, K, V, { numberOfHeads: h, headDimensions: d, W_O?, causal?, mask? })
//     = concat_i( attention(Q[:, i·d:(i+1)·d], K[...], V[...]) with scale 1/√d ) · W_O
// allowed[i][j] = (!causal || j <= i) && (mask ? mask[i][j] : true); a row with nothing allowed is 0.

/** Thrown for input the package must refuse; `kind` is the JS error class it should use. */
export class Invalid extends Error {
  constructor(kind, why) {
    super(why);
    this.kind = kind;
  }
}
const typeError = (why) => new Invalid('TypeError', why);
const rangeError = (why) => new Invalid('RangeError', why);

/** Σ xs with Neumaier's compensation; exact to within a few ulps of the true sum. */
export function sum(xs) {
  let s = 0;
  let c = 0;
  for (const x of xs) {
    const t = s + x;
    c += Math.abs(s) >= Math.abs(x) ? (s - t) + x : (x - t) + s;
    s = t;
  }
  // with an infinite term the compensation is ∞ − ∞ = NaN; the plain sum is then the answer
  return Number.isFinite(s) ? s + c : s;
}

// ---- input, by the documented contract --------------------------------------

/** Reads a rectangular table of `cell`s; property reads that throw make the input invalid. */
function readTable(x, name, cell) {
  if (!Array.isArray(x)) throw typeError(`${name} is not an array`);
  const rows = x.length;
  if (rows === 0) throw rangeError(`${name} is empty`);
  const out = [];
  let cols = 0;
  for (let i = 0; i < rows; i += 1) {
    const row = x[i];
    if (!Array.isArray(row)) throw typeError(`${name}[${i}] is not an array`);
    const n = row.length;
    if (i === 0) {
      if (n === 0) throw rangeError(`${name}[0] is empty`);
      if (rows * n > 2 ** 27) throw rangeError(`${name} is too large`);
      cols = n;
    } else if (n !== cols) {
      throw rangeError(`${name} is ragged`);
    }
    const values = [];
    for (let j = 0; j < n; j += 1) values.push(cell(row[j], `${name}[${i}][${j}]`));
    out.push(values);
  }
  return out;
}

export function readMatrix(x, name) {
  return readTable(x, name, (v, place) => {
    if (typeof v !== 'number') throw typeError(`${place} is not a number`);
    if (!Number.isFinite(v)) throw rangeError(`${place} is not finite`);
    return v;
  });
}

function readMask(x, name) {
  return readTable(x, name, (v, place) => {
    if (typeof v !== 'boolean') throw typeError(`${place} is not a boolean`);
    return v;
  });
}

/** An options object: undefined/null → {}, otherwise a non-array, non-function object with only `known` string keys. */
export function readOptions(o, known) {
  if (o === undefined || o === null) return undefined;
  if (typeof o !== 'object' || Array.isArray(o)) throw typeError('options is not an object');
  for (const key of Reflect.ownKeys(o)) {
    if (typeof key === 'string' && !known.includes(key)) throw typeError(`options.${key} is not an option`);
  }
  return o;
}

function readFlag(v, place) {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw typeError(`${place} is not a boolean`);
  return v;
}

/** A positive integer no larger than 2^32 − 1. */
export function readCount(v, place) {
  if (typeof v !== 'number') throw typeError(`${place} is not a number`);
  if (!(v >= 1 && Number.isInteger(v) && v <= 2 ** 32 - 1)) throw rangeError(`${place} is not a positive integer`);
  return v;
}

/** `{ causal, mask }` from an options object (or undefined). */
export function readMaskOptions(o) {
  if (o === undefined) return { causal: false, mask: undefined };
  const causal = readFlag(o.causal, 'options.causal');
  const raw = o.mask;
  return { causal, mask: raw === undefined ? undefined : readMask(raw, 'options.mask') };
}

// ---- the math ---------------------------------------------------------------

/**
 * softmax(Q·Kᵀ · scale, allowed) · V, with every intermediate. `nearOverflow` is set when some
 * product or sum came within 2^-23 of the f64 range, where a RangeError for overflow is acceptable.
 */
export function attention(Q, K, V, scale, causal, mask) {
  const T = Q.length;
  const Tk = K.length;
  let nearOverflow = false;
  const big = 2 ** 1000;
  const note = (x) => {
    if (!(Math.abs(x) < big)) nearOverflow = true;
    return x;
  };
  const scores = Q.map((q) => K.map((k) => note(sum(q.map((x, c) => note(x * k[c]))))));
  const scaled = scores.map((row) => row.map((s) => s * scale));
  const allowed = Q.map((_, i) => K.map((__, j) => (!causal || j <= i) && (mask ? mask[i][j] : true)));
  const weights = scaled.map((row, i) => {
    const keep = row.map((_, j) => allowed[i][j]);
    if (!keep.includes(true)) return row.map(() => 0);
    const max = Math.max(...row.filter((_, j) => keep[j]));
    const e = row.map((s, j) => (keep[j] ? Math.exp(s - max) : 0));
    const total = sum(e);
    return e.map((x) => x / total);
  });
  const dv = V[0].length;
  // Σ_j w_j·V[j][c] is a convex combination, so it lies in [min_j V[j][c], max_j V[j][c]]: summing
  // w_j·(V/4) and then multiplying by 4 keeps the weights' rounding from overflowing near ±MAX_VALUE,
  // and the clamp restores the exact bound that rounding may cross by an ulp.
  const columns = Array.from({ length: dv }, (_, c) => V.map((row) => row[c]));
  const output = weights.map((w) => columns.map((column) => {
    if (!w.some((x) => x !== 0)) return 0;
    const x = 4 * sum(w.map((wj, j) => wj * (column[j] / 4)));
    return note(Math.min(Math.max(x, Math.min(...column)), Math.max(...column)));
  }));
  // |Δs| ≤ (d+2)·ε·Σ|q·k|·scale: the core's rounding error in each scaled score, used by the fuzzer's bounds
  const eps = 2 ** -53;
  const scoreError = Q.map((q) => K.map((k) => sum(q.map((x, c) => Math.abs(x) * ((q.length + 2) * eps) * Math.abs(k[c]))) * scale));
  void Tk;
  return { scores, scaled, allowed, weights, output, scoreError, nearOverflow };
}

/**
 * A bound on |core − exact| for each output entry of `attention`, from forward error analysis
 * (score error through softmax, then the weighted sum), times a safety factor of 8.
 */
export function attentionErrorBound({ weights, scoreError }, V) {
  const eps = 2 ** -53;
  const T = V.length;
  return weights.map((w, i) => {
    // softmax: Δw_j ≤ w_j·(|Δs_j| + Σ_l w_l|Δs_l| + (T+4)ε); a weight of 0 has no error whatever its score's
    const mean = sum(w.map((wl, l) => times(wl, scoreError[i][l])));
    const dw = w.map((wj, j) => times(wj, scoreError[i][j] + mean + (T + 4) * eps));
    return V[0].map((_, c) => 8 * sum(w.map((wj, j) => times(dw[j] + (T + 2) * eps * wj, Math.abs(V[j][c])))) + 1e-300);
  });
}

/** a·b with 0·∞ = 0 (an exactly-zero factor makes the term vanish). */
export const times = (a, b) => (a === 0 || b === 0 ? 0 : a * b);

const matMul = (A, B) => A.map((row) => B[0].map((_, j) => sum(row.map((x, k) => x * B[k][j]))));

// ---- the exports ------------------------------------------------------------

/** The reference for `dotProductAttention(Q, K, V, options?)`. Throws `Invalid` for refused input. */
export function dotProductAttention(Qx, Kx, Vx, options) {
  const Q = readMatrix(Qx, 'Q');
  const K = readMatrix(Kx, 'K');
  const V = readMatrix(Vx, 'V');
  const { causal, mask } = readMaskOptions(readOptions(options, ['causal', 'mask']));
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw rangeError('K and Q differ in shape');
  if (V.length !== Q.length) throw rangeError('V has a different T');
  if (mask && (mask.length !== Q.length || mask[0].length !== K.length)) throw rangeError('mask is not T×T');
  const T = Q.length;
  if (Q.length * Q[0].length + 2 * K.length * K[0].length + V.length * V[0].length + 3 * T * T + T * V[0].length > 2 ** 27) {
    throw rangeError('too large');
  }
  const result = attention(Q, K, V, 1 / Math.sqrt(Q[0].length), causal, mask);
  return { ...result, value: result.output, bound: attentionErrorBound(result, V), inputs: { Q, K, V } };
}

/** Options (or the positional pair) of multiHeadAttention, read by the contract. */
function readMultiHead(options, fifth) {
  if (typeof options === 'number') {
    return { h: readCount(options, 'numberOfHeads'), d: readCount(fifth, 'headDimensions'), causal: false };
  }
  if (fifth !== undefined) throw typeError('argument 5 with an options object');
  if (options === undefined || options === null) throw typeError('options missing');
  const o = readOptions(options, ['numberOfHeads', 'headDimensions', 'W_O', 'causal', 'mask']);
  const h = readCount(o.numberOfHeads, 'options.numberOfHeads');
  const d = readCount(o.headDimensions, 'options.headDimensions');
  const rawW = o.W_O;
  const W_O = rawW === undefined ? undefined : readMatrix(rawW, 'options.W_O');
  return { h, d, W_O, ...readMaskOptions(o) };
}

/** The reference for `multiHeadAttention` (both forms) and the output of `traceMultiHeadAttention`. */
export function multiHeadAttention(Qx, Kx, Vx, options, fifth, { trace = false } = {}) {
  const Q = readMatrix(Qx, 'Q');
  const K = readMatrix(Kx, 'K');
  const V = readMatrix(Vx, 'V');
  const { h, d, W_O, causal, mask } = readMultiHead(options, fifth);
  const C = h * d;
  const T = Q.length;
  if (Q[0].length !== C) throw rangeError('Q does not have h·d columns');
  for (const M of [K, V]) if (M.length !== T || M[0].length !== C) throw rangeError('K or V differs from Q');
  if (W_O && (W_O.length !== C || W_O[0].length !== C)) throw rangeError('W_O is not C×C');
  if (mask && (mask.length !== T || mask[0].length !== T)) throw rangeError('mask is not T×T');
  let need = 6 * T * C + (W_O ? C * C : 0) + 4 * T * d + 3 * T * T;
  if (trace) need = Math.max(need, 13 * T * C + 3 * T * T + 3 * h * T * T);
  if (need > 2 ** 27) throw rangeError('too large');
  const slice = (M, i) => M.map((row) => row.slice(i * d, (i + 1) * d));
  const heads = Array.from({ length: h }, (_, i) => {
    const Vi = slice(V, i);
    const r = attention(slice(Q, i), slice(K, i), Vi, 1 / Math.sqrt(d), causal, mask);
    return { ...r, bound: attentionErrorBound(r, Vi) };
  });
  const concat = Q.map((_, t) => heads.flatMap((r) => r.output[t]));
  const concatBound = Q.map((_, t) => heads.flatMap((r) => r.bound[t]));
  const value = W_O ? matMul(concat, W_O) : concat;
  const eps = 2 ** -53;
  const bound = W_O
    ? concat.map((row, t) => W_O[0].map((_, j) => sum(row.map((x, k) => times(concatBound[t][k] + (C + 2) * eps * Math.abs(x), Math.abs(W_O[k][j])))) * 2 + 1e-300))
    : concatBound;
  let nearOverflow = heads.some((r) => r.nearOverflow);
  if (W_O && value.flat().some((x) => !(Math.abs(x) < 2 ** 1000))) nearOverflow = true;
  return { value, bound, heads, concat, nearOverflow, inputs: { Q, K, V, W_O } };
}
