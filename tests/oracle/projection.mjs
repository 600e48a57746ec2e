// References for `linear(X, W, b?)` and `projectedSelfAttention(X, options)`, from the math:
//
//   linear: Y[t][j] = Σ_k X[t][k]·W[k][j] + b[j]   (W is [in, out]); X number[][] or typed.
//   projectedSelfAttention: Q = X·W_Q, K = X·W_K, V = X·W_V, then
//     multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal, mask }) from reference.mjs.
//
// Sums are Neumaier-compensated (reference.mjs `sum`), so the reference's own error is negligible;
// each answer carries a per-entry bound on the package's error.
import * as R from './reference.mjs';
import * as LR from './layer.mjs';
import { Invalid } from './reference.mjs';
import { floatKind, isTypedCandidate, readTyped, items, elements, viewLength } from './typed.mjs';

const typeError = (why) => new Invalid('TypeError', why);
const rangeError = (why) => new Invalid('RangeError', why);
const EPS64 = 2 ** -53;
const EPS32 = 2 ** -24;

/** b: undefined, number[], Float32Array or Float64Array with `out` finite entries. */
function readBias(b, out) {
  if (b === undefined) return undefined;
  const kind = floatKind(b);
  let values;
  if (kind === 32 || kind === 64) {
    viewLength(b, 'b');
    values = elements(b);
  } else if (Array.isArray(b)) {
    [values] = R.readMatrix([b], 'b');
  } else {
    throw typeError('b is not number[], Float32Array or Float64Array');
  }
  if (!values.every(Number.isFinite)) throw rangeError('b has a value that is not finite');
  if (values.length !== out) throw rangeError('b does not have one entry per column of W');
  return values;
}

/** X·W + b over rows, with the bound of a sum of `in` products in precision `eps`. */
function product(X, W, b, eps, round) {
  const n = W.length;
  const value = [];
  const bound = [];
  let nearOverflow = false;
  for (const x of X) {
    const row = [];
    const rowBound = [];
    for (let j = 0; j < W[0].length; j += 1) {
      const terms = x.map((xk, k) => xk * W[k][j]);
      if (b) terms.push(b[j]);
      const y = R.sum(terms);
      const magnitude = R.sum(terms.map(Math.abs));
      if (!(magnitude < 2 ** 1000)) nearOverflow = true;
      row.push(y);
      // each of the n + 1 additions and n products rounds once, and the result is rounded to the output precision
      rowBound.push(2 * ((n + 2) * eps * magnitude + eps * Math.abs(round(y))) + (eps === EPS32 ? 2 ** -140 : 1e-300));
    }
    value.push(row);
    bound.push(rowBound);
  }
  return { value, bound, nearOverflow };
}

/** The reference for `linear(X, W, b?)`. */
export function linear(Xx, Wx, b) {
  if (!isTypedCandidate(Xx)) {
    const X = R.readMatrix(Xx, 'X');
    const W = R.readMatrix(Wx, 'W');
    if (W.length !== X[0].length) throw rangeError('W does not have a row per column of X');
    const bias = readBias(b, W[0].length);
    return { form: 'nested', ...product(X, W, bias, EPS64, (y) => y) };
  }
  const x = readTyped(Xx, 'X', [2, 3]);
  if (!isTypedCandidate(Wx)) throw typeError('W is not a typed matrix but X is');
  const w = readTyped(Wx, 'W', [2]);
  if (w.kind !== x.kind) throw typeError('W.data has another precision than X.data');
  const [W] = items(w);
  if (W.length !== x.shape[x.shape.length - 1]) throw rangeError('W does not have a row per column of X');
  let bias = readBias(b, W[0].length);
  if (bias && x.kind === 32) bias = bias.map(Math.fround);
  if (bias && !bias.every(Number.isFinite)) throw rangeError('b is beyond the f32 range');
  const rows = items(x).flat();
  const shape = x.shape.slice();
  shape[shape.length - 1] = W[0].length;
  const result = x.kind === 32 ? product(rows, W, bias, EPS32, Math.fround) : product(rows, W, bias, EPS64, (y) => y);
  if (x.kind === 32 && result.value.flat().some((y) => !(Math.abs(y) < 2 ** 127))) result.nearOverflow = true;
  return { form: 'typed', kind: x.kind, shape, ...result };
}

const PROJECTED_KEYS = ['numberOfHeads', 'headDimensions', 'W_Q', 'W_K', 'W_V', 'W_O', 'causal', 'mask'];

/**
 * The reference for `projectedSelfAttention(X, options)`: value from X·W then reference.mjs's
 * multi-head attention; bound from tests/oracle/layer.mjs, which tracks each entry's error
 * through the projections (the export is documented to be a bias-free layer's forward).
 */
export function projectedSelfAttention(Xx, options) {
  const X = R.readMatrix(Xx, 'X');
  const { h, d, C, W, causal, mask } = readProjectedOptions(options, [X.length, X[0].length], (raw, place) => R.readMatrix(raw, place));
  const [Q, K, V] = ['W_Q', 'W_K', 'W_V'].map((name) => product(X, W[name], undefined, EPS64, (y) => y).value);
  const projected = [Q, K, V].flat(2);
  if (!projected.every(Number.isFinite)) {
    // the exact projection leaves f64: the package must refuse (a RangeError for overflow)
    return { value: Q.map((row) => row.map(() => NaN)), bound: Q.map((row) => row.map(() => 0)), nearOverflow: true };
  }
  const attention = R.multiHeadAttention(Q, K, V, { numberOfHeads: h, headDimensions: d, W_O: W.W_O, causal, mask });
  let bound;
  let nearOverflow = attention.nearOverflow || projected.some((y) => !(Math.abs(y) < 2 ** 1000));
  try {
    const L = LR.setWeights(LR.construct({ embedDim: C, numHeads: h, bias: false }), W);
    const F = LR.forward(L, X, null, null, { causal, mask });
    bound = F.output[0].e.map((row) => row.map((e) => 8 * e + 4 * 2 ** -1074));
    nearOverflow ||= F.near;
  } catch (e) {
    if (!(e instanceof Invalid) || !nearOverflow) throw e;
    bound = attention.bound;
  }
  return { value: attention.value, bound, nearOverflow };
}

/**
 * Reads the typed form of `projectedSelfAttention(X, options)` in the package's order: X (a typed
 * `[T, C]` or `[B, T, C]`), the options object and its keys, numberOfHeads, headDimensions, then
 * W_Q, W_K, W_V, W_O one after the other (each `number[][]` or a typed `[C, C]` of X's precision; for
 * Float32Array X a number[][] entry beyond f32 is a RangeError, and the values are rounded to f32),
 * causal and mask, then the shapes. Returns { x, h, d, C, W, causal, mask } or throws Invalid.
 */
export function readProjectedTyped(Xx, options) {
  const x = readTyped(Xx, 'X', [2, 3]);
  const readWeight = (raw, place) => {
    if (isTypedCandidate(raw)) {
      const w = readTyped(raw, place, [2]);
      if (w.kind !== x.kind) throw typeError(`${place}.data has another precision than X.data`);
      return items(w)[0];
    }
    const M = R.readMatrix(raw, place);
    if (x.kind === 32 && !M.every((row) => row.every((v) => Number.isFinite(Math.fround(v))))) throw rangeError(`${place} has an entry beyond the f32 range`);
    return x.kind === 32 ? M.map((row) => row.map(Math.fround)) : M;
  };
  return { x, ...readProjectedOptions(options, x.shape.slice(-2), readWeight) };
}

/**
 * The options of both forms, in the package's order: the object and its keys, numberOfHeads,
 * headDimensions, W_Q, W_K, W_V and W_O (each read by `readWeight(raw, place)`), causal and mask;
 * then the shapes against X's `[T, cols]`. Returns { h, d, C, W, causal, mask } or throws Invalid.
 */
function readProjectedOptions(options, [T, cols], readWeight) {
  if (options === undefined || options === null) throw typeError('options is missing');
  const o = R.readOptions(options, PROJECTED_KEYS);
  const h = R.readCount(o.numberOfHeads, 'options.numberOfHeads');
  const d = R.readCount(o.headDimensions, 'options.headDimensions');
  const W = {};
  for (const name of ['W_Q', 'W_K', 'W_V', 'W_O']) {
    const raw = o[name];
    if (raw === undefined) throw typeError(`options.${name} is missing`);
    W[name] = readWeight(raw, `options.${name}`);
  }
  const { causal, mask } = R.readMaskOptions(o);
  const C = h * d;
  if (cols !== C) throw rangeError('X does not have C columns');
  for (const name of ['W_Q', 'W_K', 'W_V', 'W_O']) if (W[name].length !== C || W[name][0].length !== C) throw rangeError(`${name} is not C×C`);
  if (mask && (mask.length !== T || mask[0].length !== T)) throw rangeError('mask is not T×T');
  return { h, d, C, W, causal, mask };
}

/** The layer's forward options for projectedSelfAttention's causal and mask. */
export const projectedForwardOptions = ({ causal, mask }) => (mask === undefined ? { causal } : { causal, mask });

/**
 * The reference for the Float64Array form: projectedSelfAttention on each batch item as number[][]
 * (the package must give those bits), joined over all rows, with the item's shape. (The Float32Array
 * form is the layer's f32 forward: tests/oracle/typed.mjs `layerForward` on a bias-free layer.)
 */
export function projectedSelfAttentionF64(p) {
  const results = items(p.x).map((X) => projectedSelfAttention(X, {
    numberOfHeads: p.h,
    headDimensions: p.d,
    ...p.W,
    ...projectedForwardOptions(p),
  }));
  return {
    form: 'typed',
    kind: 64,
    shape: p.x.shape.slice(),
    value: results.flatMap((r) => r.value),
    bound: results.flatMap((r) => r.bound),
    nearOverflow: results.some((r) => r.nearOverflow),
  };
}
