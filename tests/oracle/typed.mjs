// The reference for the typed-array form `{ data: Float32Array | Float64Array, shape: [T, C] | [B, T, C] }`
// of dotProductAttention and multiHeadAttention, written from the documented contract: it reads a
// typed matrix the way the contract says (data first, then shape, then data.length, then every
// value), converts each batch item to number[][] and answers with tests/oracle/reference.mjs.
//
// Values are read with the TypedArray intrinsics (the real length and elements of the view), not
// through the object's own `length`: a subclass or Proxy that reports another length than it
// holds must be refused, never read past its end.
import * as R from './reference.mjs';
import { Invalid } from './reference.mjs';

const typeError = (why) => new Invalid('TypeError', why);
const rangeError = (why) => new Invalid('RangeError', why);

/** The most values one matrix may hold (src/limits.rs MAX_WORKING_VALUES). */
export const MAX_ELEMENTS = 2 ** 27;

const TypedArray = Object.getPrototypeOf(Float32Array);
const intrinsicLength = Object.getOwnPropertyDescriptor(TypedArray.prototype, 'length').get;
const intrinsicValues = TypedArray.prototype.values;

/** 32 for a Float32Array, 64 for a Float64Array, 1 for another view, 0 otherwise, -1 when asking throws. */
export function floatKind(x) {
  try {
    return x instanceof Float32Array ? 32 : x instanceof Float64Array ? 64 : ArrayBuffer.isView(x) ? 1 : 0;
  } catch {
    return -1;
  }
}

/** An object that can only be meant as a typed matrix: not an array, not a function, not a revoked Proxy. */
export function isTypedCandidate(x) {
  if (x === null || typeof x !== 'object') return false;
  try {
    return !Array.isArray(x);
  } catch {
    return false;
  }
}

/**
 * `data.length` when it is what the view really holds: reading it may throw (a TypeError); a Proxy
 * (no view inside) is a TypeError; a length that differs from the view's own is a RangeError.
 */
export function viewLength(data, place) {
  const reported = data.length;
  let real;
  try {
    real = intrinsicLength.call(data);
  } catch {
    throw typeError(`${place} is not itself a typed array (a Proxy?)`);
  }
  if (real !== reported) throw rangeError(`${place} reports length ${String(reported)} but holds ${real} values`);
  return real;
}

/** The real elements of a Float32Array/Float64Array (throws a TypeError for a Proxy, like the engine). */
export function elements(data) {
  return Array.from(intrinsicValues.call(data));
}

/**
 * Reads `{ data, shape }` with a shape of one of the lengths in `ranks`. Returns
 * { kind: 32 | 64, shape, values } or throws Invalid (a property read that throws is a TypeError).
 */
export function readTyped(x, name, ranks) {
  if (!isTypedCandidate(x)) throw typeError(`${name} is not a typed matrix`);
  // 1. data
  const data = x.data;
  const kind = floatKind(data);
  if (kind !== 32 && kind !== 64) throw typeError(`${name}.data is not a Float32Array or Float64Array`);
  // 2. shape
  const shapeValue = x.shape;
  if (!Array.isArray(shapeValue)) throw typeError(`${name}.shape is not an array`);
  const rank = shapeValue.length;
  if (!ranks.includes(rank)) throw rangeError(`${name}.shape has ${rank} entries`);
  const shape = [];
  for (let i = 0; i < rank; i += 1) shape.push(R.readCount(shapeValue[i], `${name}.shape[${i}]`));
  const perItem = shape[rank - 2] * shape[rank - 1];
  if (perItem > MAX_ELEMENTS) throw rangeError(`${name} is too large`);
  const total = perItem * (rank === 3 ? shape[0] : 1);
  if (total > MAX_ELEMENTS) throw rangeError(`${name} is too large`);
  // 3. data.length, which must be what the view really holds, and the shape's product
  if (viewLength(data, `${name}.data`) !== total) throw rangeError(`${name}.data does not have ${total} values`);
  // 4. the values, all finite
  const values = elements(data);
  if (!values.every(Number.isFinite)) throw rangeError(`${name}.data has a value that is not finite`);
  return { kind, shape, values };
}

/** The (T, C) items of a read typed matrix, as number[][]. */
export function items({ shape, values }) {
  const [T, C] = shape.slice(-2);
  const B = shape.length === 3 ? shape[0] : 1;
  return Array.from({ length: B }, (_, b) => Array.from({ length: T }, (__, t) => values.slice((b * T + t) * C, (b * T + t + 1) * C)));
}

/** Q, K and V in one form: all typed, of Q's precision, rank and batch size. */
function readQkv(Q, K, V, ranks) {
  const q = readTyped(Q, 'Q', ranks);
  const other = (x, name) => {
    if (!isTypedCandidate(x)) throw typeError(`${name} is not a typed matrix but Q is`);
    const m = readTyped(x, name, ranks);
    if (m.kind !== q.kind) throw typeError(`${name}.data has another precision than Q.data`);
    if (m.shape.length !== q.shape.length || (m.shape.length === 3 && m.shape[0] !== q.shape[0])) throw rangeError(`${name} has another rank or batch than Q`);
    return m;
  };
  return [q, other(K, 'K'), other(V, 'V')];
}

/**
 * f32 only: an attention weight below f32's normal range (2^-126) may be lost entirely (exp
 * underflows in f32 where it does not in f64), an absolute error of up to 2^-125·max_j |V[j][c]|
 * per output entry (through W_O: Σ_k of those · |W_O[k][c]|). Rows × columns of the item's output.
 */
function f32Floor(T, V, W_O) {
  const column = V[0].map((_, c) => 2 ** -125 * Math.max(...V.map((row) => Math.abs(row[c]))));
  const out = W_O ? W_O[0].map((_, j) => R.sum(column.map((f, k) => R.times(f, Math.abs(W_O[k][j]))))) : column;
  return Array.from({ length: T }, () => out);
}

/** Joins per-item references into one { value, bound, nearOverflow } over all rows, plus kind and shape. */
function joined(results, kind, shape, floors) {
  return {
    kind,
    shape,
    value: results.flatMap((x) => x.value),
    bound: results.flatMap((x) => x.bound),
    f32Floor: kind === 32 ? floors.flat() : undefined,
    nearOverflow: results.some((x) => x.nearOverflow),
  };
}

/** f32: the core runs on the Float32Array values; W_O (number[][]) is rounded to f32 first. */
const f32Matrix = (M, name) => {
  const rounded = M.map((row) => row.map(Math.fround));
  if (!rounded.every((row) => row.every(Number.isFinite))) throw rangeError(`${name} has an entry beyond the f32 range`);
  return rounded;
};

/** The reference for `dotProductAttention` with any input form. */
export function dotProductAttention(Q, K, V, options) {
  if (!isTypedCandidate(Q)) return { form: 'nested', ...R.dotProductAttention(Q, K, V, options) };
  const [q, k, v] = readQkv(Q, K, V, [2, 3]);
  const [qs, ks, vs] = [q, k, v].map(items);
  const results = qs.map((qi, b) => R.dotProductAttention(qi, ks[b], vs[b], options));
  const shape = v.shape.slice();
  shape[shape.length - 2] = q.shape[q.shape.length - 2];
  return { form: 'typed', ...joined(results, q.kind, shape, qs.map((qi, b) => f32Floor(qi.length, vs[b]))) };
}

/** The reference for `multiHeadAttention` (both forms; W_O as number[][] or typed) with any input form. */
export function multiHeadAttention(Q, K, V, options, fifth) {
  if (!isTypedCandidate(Q)) return { form: 'nested', ...R.multiHeadAttention(Q, K, V, options, fifth) };
  const [q, k, v] = readQkv(Q, K, V, [2, 3]);
  // the options, in the contract's order: form, keys, numberOfHeads, headDimensions, W_O, causal, mask
  let plain;
  if (typeof options === 'number') {
    plain = { numberOfHeads: R.readCount(options, 'numberOfHeads'), headDimensions: R.readCount(fifth, 'headDimensions') };
  } else {
    if (fifth !== undefined) throw typeError('argument 5 with an options object');
    if (options === undefined || options === null) throw typeError('options missing');
    const o = R.readOptions(options, ['numberOfHeads', 'headDimensions', 'W_O', 'causal', 'mask']);
    const h = R.readCount(o.numberOfHeads, 'options.numberOfHeads');
    const d = R.readCount(o.headDimensions, 'options.headDimensions');
    const raw = o.W_O;
    let W_O;
    if (raw !== undefined && isTypedCandidate(raw)) {
      const w = readTyped(raw, 'options.W_O', [2]);
      if (w.kind !== q.kind) throw typeError('options.W_O.data has another precision than Q.data');
      [W_O] = items(w);
    } else if (raw !== undefined) {
      W_O = R.readMatrix(raw, 'options.W_O');
      if (q.kind === 32) W_O = f32Matrix(W_O, 'options.W_O');
    }
    const { causal, mask } = R.readMaskOptions(o);
    plain = { numberOfHeads: h, headDimensions: d, W_O, causal, mask };
  }
  const [qs, ks, vs] = [q, k, v].map(items);
  const results = qs.map((qi, b) => R.multiHeadAttention(qi, ks[b], vs[b], plain));
  return { form: 'typed', ...joined(results, q.kind, q.shape.slice(), qs.map((qi, b) => f32Floor(qi.length, vs[b], plain.W_O))) };
}
