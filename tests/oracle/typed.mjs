// The reference for the typed-array form `{ data: Float32Array | Float64Array, shape: [T, C] | [B, T, C] }`
// of dotProductAttention and multiHeadAttention, written from the documented contract: it reads a
// typed matrix the way the contract says (data first, then shape, then data.length, then every
// value), converts each batch item to number[][] and answers with tests/oracle/reference.mjs.
//
// Values are read with the TypedArray intrinsics (the real length and elements of the view), not
// through the object's own `length`: a subclass or Proxy that reports another length than it
// holds must be refused, never read past its end.
import * as R from './reference.mjs';
import * as LR from './layer.mjs';
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

/**
 * f32 only: the items again through tests/oracle/layer.mjs's error model in f32's unit roundoff
 * (LR.inF32; its softmax bound is not first-order, so it stays sound for score errors of any size):
 * { value, e, near } over all rows, `e` the per-entry error bound before the safety factor.
 */
function f32Model(qs, ks, vs, options) {
  const outs = qs.map((qi, b) => LR.inF32(() => LR.attentionTracked(qi, ks[b], vs[b], options)));
  return { value: outs.flatMap((o) => o.output.v), e: outs.flatMap((o) => o.output.e), near: outs.some((o) => o.near) };
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
  const out = { form: 'typed', ...joined(results, q.kind, shape, qs.map((qi, b) => f32Floor(qi.length, vs[b]))) };
  if (q.kind === 32) out.f32Model = f32Model(qs, ks, vs, { h: 1, d: qs[0][0].length, ...R.readMaskOptions(R.readOptions(options, ['causal', 'mask'])) });
  return out;
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
  const out = { form: 'typed', ...joined(results, q.kind, q.shape.slice(), qs.map((qi, b) => f32Floor(qi.length, vs[b], plain.W_O))) };
  if (q.kind === 32) out.f32Model = f32Model(qs, ks, vs, { h: plain.numberOfHeads, d: plain.headDimensions, W_O: plain.W_O, causal: plain.causal, mask: plain.mask });
  return out;
}

// ---- the MultiHeadAttention layer on typed input ----------------------------------------------
// `layer.forward(query, key?, value?, options?)` and `layer.backward(gradOutput)` with
// `{ data, shape: [T, C] | [B, T, C] }`, read in the order of src/wasm/layer.rs (query, its width,
// key, value, then the options and the core's checks, which tests/oracle/layer.mjs makes).
//   - Float64Array: the f64 forward (tests/oracle/layer.mjs as it is);
//   - Float32Array: the forward in f32, with the layer's parameters rounded to f32 once (the package
//     packs them so) and f32's error model (LR.inF32). In evaluation mode `backward` after it is
//     refused with a plain Error; with `training: true` (dropout factor 1/(1 − p) rounded to f32, as
//     the layer multiplies by) `backward` is the oracle's backward in the same f32 error model, for
//     every form of gradOutput: Float32Array (the package's f32 backward) and Float64Array or
//     number[][] (its f64 derivative of the same f32 forward, whose error the f32 model also bounds).

/** The largest f32 is just below 2^128; an f64 value from 2^127 on may round to ±Infinity. */
const F32_ROUNDS_TO_INFINITY = 2 ** 127;

const widthError = (m, name, C) => rangeError(`${name}.shape is [${m.shape}] but the layer's embedDim is ${C}`);

/** A typed key or value: null for undefined/null (the default), otherwise of `like`'s precision, rank and batch, C wide. */
function readLayerDefault(x, name, like, C) {
  if (x === undefined || x === null) return null;
  if (!isTypedCandidate(x)) throw typeError(`${name} is not a typed matrix but query is`);
  const m = readTyped(x, name, [2, 3]);
  if (m.kind !== like.kind) throw typeError(`${name}.data has another precision than query.data`);
  if (m.shape.length !== like.shape.length || (m.shape.length === 3 && m.shape[0] !== like.shape[0])) throw rangeError(`${name} has another rank or batch than query`);
  if (m.shape[m.shape.length - 1] !== C) throw widthError(m, name, C);
  return m;
}

/** A read typed matrix as the layer's number[][] form: T×C, or a batch [B][T][C] for rank 3. */
const asNested = (m) => (m.shape.length === 3 ? items(m) : items(m)[0]);

/** The layer `L` with every weight and bias rounded to f32, or null when one of them is beyond f32. */
function f32Parameters(L) {
  const W = Object.fromEntries(Object.entries(L.W).map(([name, M]) => [name, M.map((row) => row.map(Math.fround))]));
  const b = L.b && Object.fromEntries(Object.entries(L.b).map(([name, v]) => [name, v.map(Math.fround)]));
  const all = [...Object.values(W).flat(2), ...(b ? Object.values(b).flat() : [])];
  return all.every(Number.isFinite) ? { ...L, W, b } : null;
}

/**
 * The f32 forward's floor per output entry: a weight below f32's normal range (2^-126) may be lost
 * entirely, up to 2^-125·max_j |V[j][c]| in context column c, times |W_O| into the output.
 * Rows of all items' outputs, as compareAny takes them.
 */
function f32OutputFloor(L, F) {
  return F.items.flatMap((item) => {
    const V = item.V.v;
    const column = V[0].map((_, c) => 2 ** -125 * Math.max(...V.map((row) => Math.abs(row[c]))));
    const out = L.W.W_O[0].map((_, j) => R.sum(column.map((f, k) => R.times(f, Math.abs(L.W.W_O[k][j])))));
    return item.output.v.map(() => out);
  });
}

/** |value| + 8·bound of a tracked matrix reaching 2^127: rounding it to f32 may overflow. */
const beyondF32 = (M) => M.v.some((row, i) => row.some((x, j) => !(Math.abs(x) + 8 * M.e[i][j] < F32_ROUNDS_TO_INFINITY)));

/**
 * The reference for `layer.forward(query, key, value, options)` on layer `L` (fresh dropout
 * stream). Returns { form: 'nested' | 'typed', kind, mode: 'f64' | 'training' | 'eval', F, nearOverflow }
 * with `F` as tests/oracle/layer.mjs's forward returns it (for 'eval', computed with the f32-rounded
 * parameters `L32` and f32's error bounds, plus `outputFloor`); throws Invalid for arguments the
 * package must refuse.
 */
export function layerForward(L, query, key, value, options) {
  if (!isTypedCandidate(query)) {
    const F = LR.forward(L, query, key, value, options);
    return { form: 'nested', kind: 64, mode: 'f64', F, nearOverflow: F.near };
  }
  const q = readTyped(query, 'query', [2, 3]);
  if (q.shape[q.shape.length - 1] !== L.C) throw widthError(q, 'query', L.C);
  const k = readLayerDefault(key, 'key', q, L.C);
  const v = readLayerDefault(value, 'value', k ?? q, L.C);
  const args = [asNested(q), k && asNested(k), v && asNested(v), options];
  // the f64 forward makes every check of the package's, in its order
  const F = LR.forward(L, ...args);
  if (q.kind === 64) return { form: 'typed', kind: 64, mode: 'f64', F, nearOverflow: F.near };
  // f32, in evaluation mode or training: the oracle on the parameters rounded to f32, with f32's error model
  // (its `near` flags magnitudes within 2^-24 of f32's range). (Its memory limit differs from the
  // f64 forward's, which made the check above; no generated case comes near either.)
  const L32 = f32Parameters(L);
  if (!L32) throw rangeError('a weight or bias of the layer is beyond f32: the f32 projections overflow');
  const F32 = LR.inF32(() => LR.forward(L32, ...args));
  const mode = F.training ? 'training' : 'eval';
  return { form: 'typed', kind: 32, mode, F: F32, L32, outputFloor: f32OutputFloor(L32, F32), nearOverflow: F32.near };
}

/**
 * The reference for `layer.backward(gradOutput)` after the forward `forward` (layerForward's
 * answer). Returns { form, kind, Bk, nearOverflow } (Bk as tests/oracle/layer.mjs's backward), or
 * { state: true } after an evaluation-mode Float32Array forward (a plain Error, once gradOutput
 * has been read); throws Invalid for a gradOutput the package must refuse.
 */
export function layerBackward(L, forward, gradOutput) {
  if (!isTypedCandidate(gradOutput)) {
    if (forward.mode === 'eval') {
      LR.readBatch(gradOutput, 'gradOutput');
      return { state: true };
    }
    const Bk = forward.mode === 'training' ? LR.inF32(() => LR.backward(forward.L32, forward.F, gradOutput)) : LR.backward(L, forward.F, gradOutput);
    return { form: 'nested', kind: 64, Bk, nearOverflow: Bk.near };
  }
  const g = readTyped(gradOutput, 'gradOutput', [2, 3]);
  if (g.shape[g.shape.length - 1] !== L.C) throw widthError(g, 'gradOutput', L.C);
  if (forward.mode === 'eval') return { state: true };
  const Bk = forward.mode === 'training' ? LR.inF32(() => LR.backward(forward.L32, forward.F, asNested(g))) : LR.backward(L, forward.F, asNested(g));
  const beyond = g.kind === 32 && (Object.values(Bk.inputs).some((list) => list.some(beyondF32)) || (forward.mode === 'training' && Object.values(Bk.params).some(beyondF32)));
  return { form: 'typed', kind: g.kind, Bk, nearOverflow: Bk.near || beyond };
}
