// Builds fuzz case (seed, index) from the export table and checks one call of the package:
// a correct result (against the reference, within its error bound) or a TypeError/RangeError
// with a non-empty message; never a wasm trap, never a slow call; and afterwards the module
// still answers a known-good call bit for bit.
import { types } from 'node:util';
import * as G from './generate.mjs';
import { FUZZ_EXPORTS } from './exports.mjs';
import { RATE_VALUES, POSITIONS_VALUES, DTYPE_VALUES } from './transformer.mjs';
import { Invalid, dotProductAttention as referenceAttention } from '../oracle/reference.mjs';
import * as LR from '../oracle/layer.mjs';

/** Slowest a single case may be before it counts as a hang (ms). */
export const CASE_TIME_LIMIT_MS = 2000;

/** True for a value mutators may read freely: no Proxy, no getter that throws. */
function readable(x) {
  if (x === null || typeof x !== 'object' || types.isProxy(x)) return false;
  try {
    return Object.values(Object.getOwnPropertyDescriptors(x)).every((d) => !d.get && readable2(d.value));
  } catch {
    return false;
  }
}
const readable2 = (v) => v === null || typeof v !== 'object' || readable(v);

/** A plain `T[][]` a matrix mutator can start from, or [[1]]. */
function matrixBase(x) {
  if (!readable(x) || !Array.isArray(x) || x.length === 0 || x.length > 64) return [[1]];
  for (let i = 0; i < x.length; i += 1) {
    const row = x[i];
    if (!Array.isArray(row) || row.length === 0 || row.length > 64) return [[1]];
    for (let j = 0; j < row.length; j += 1) if (!(j in row)) return [[1]];
  }
  return x;
}

/** A plain `number[]` a vector mutator can start from, or [1]. */
function vectorBase(x) {
  if (!readable(x) || !Array.isArray(x) || x.length === 0 || x.length > 4096) return [1];
  for (let j = 0; j < x.length; j += 1) if (!(j in x)) return [1];
  return x;
}

/** A plain `{ data: Float32Array | Float64Array, shape: number[] }` a typed mutator can start from, or a 1×1 one. */
function typedBase(x) {
  const plain = x !== null && typeof x === 'object' && !types.isProxy(x) && Object.getPrototypeOf(x) === Object.prototype;
  const own = (key) => plain && Object.getOwnPropertyDescriptor(x, key);
  const data = own('data');
  const shape = own('shape');
  const ok = data && 'value' in data && !types.isProxy(data.value) && [Float32Array, Float64Array].includes(data.value?.constructor)
    && !(data.value.buffer instanceof SharedArrayBuffer) && data.value.buffer.byteLength > 0
    && shape && 'value' in shape && !types.isProxy(shape.value) && Array.isArray(shape.value) && shape.value.length <= 4
    && Object.values(Object.getOwnPropertyDescriptors(shape.value)).every((desc) => 'value' in desc);
  return ok ? x : { data: new Float64Array([1]), shape: [1, 1] };
}

/**
 * Replaces an object argument (options, a layer's config, weights or state), or one of its keys,
 * with something odd or wrong. `keyKinds` says what each key holds.
 */
function mutateObject(r, spec, args, i, keyKinds, misspellings) {
  const base = readable(args[i]) && !Array.isArray(args[i]) ? { ...args[i] } : {};
  const keys = Object.keys(keyKinds);
  const key = r.pick(keys);
  const kinds = {
    vector: () => G.VECTOR_MUTATIONS[r.pick(Object.keys(G.VECTOR_MUTATIONS))](r, vectorBase(base[key])),
    probability: () => r.pick(G.PROBABILITY_VALUES),
    seed: () => r.pick(G.SEED_VALUES),
    count: () => r.pick(G.COUNT_VALUES),
    flag: () => r.pick(G.FLAG_VALUES),
    mask: () => G.MATRIX_MUTATIONS[r.pick(Object.keys(G.MATRIX_MUTATIONS))](r, base.mask === undefined ? [[true]] : matrixBase(base.mask)),
    matrix: () => G.MATRIX_MUTATIONS[r.pick(Object.keys(G.MATRIX_MUTATIONS))](r, matrixBase(base[key])),
    // the Transformer's (tests/fuzz/transformer.mjs)
    rate: () => r.pick(RATE_VALUES),
    positions: () => r.pick(POSITIONS_VALUES),
    mlp: () => r.pick([...G.FLAG_VALUES, 'gelu_new', 'silu_gated', 'gelu', 'swiglu']),
    norm: () => r.pick(['layer', 'rms', 'RMS', 'batch', 1, null, true]),
    dtype: () => r.pick(DTYPE_VALUES),
  };
  const out = args.slice();
  out[i] = r.weighted([
    [3, () => ({ ...base, [key]: kinds[keyKinds[key]]() })],
    [2, () => ({ ...base, [r.pick(misspellings)]: base[key] ?? true })],
    [1, () => ({ ...base, [Symbol('extra')]: 1 })],
    [1, () => Object.assign(Object.create({ [key]: base[key] }), Object.fromEntries(Object.entries(base).filter(([k]) => k !== key)))],
    [2, () => Object.fromEntries(Object.entries(base).filter(([k]) => k !== key))],
    [1, () => Object.defineProperty({ ...base }, key, { get: () => { throw new Error(`fuzz: options.${key} throws`); }, enumerable: true })],
    [1, () => G.forwardingProxy(base)],
    [1, () => G.throwingProxy(base, r.pick([undefined, key]))],
    [1, () => new Proxy(base, { ownKeys: () => { throw new Error('fuzz: ownKeys throws'); } })],
    [1, () => G.revokedProxy(base)],
    [1, () => Object.freeze(base)],
    [2, () => r.pick([...G.WRONG_TYPES, 2, 0, NaN, [base]])],
    [1, () => ({ ...base, mask: G.mask(r, r.int(1, 5), r.int(1, 5)) })],
  ])();
  if (spec.name.startsWith('multiHeadAttention') && r.bool(0.1)) out[4] = r.pick([1, 2, undefined, '2']);
  return out;
}

/** Replaces the options argument of a function (or one of its keys) with something odd or wrong. */
const mutateOptions = (r, spec, args) => mutateObject(r, spec, args, spec.optionsArg, spec.options, G.MISSPELLINGS);

/** One mutation of a case's arguments. */
function mutate(r, spec, args) {
  const choices = spec.matrixArgs.length > 0 ? [[6, 'matrix']] : [];
  if (spec.optionsArg !== undefined) choices.push([4, 'options']);
  if (spec.objects !== undefined) choices.push([5, 'object']);
  if (spec.countArgs) choices.push([3, 'count']);
  if (spec.typedArgs) choices.push([10, 'typed']);
  if (spec.vectorArgs) choices.push([3, 'vector']);
  if (spec.weightKeys) choices.push([6, 'weight']);
  choices.push([1, 'arity']);
  const what = r.weighted(choices);
  const out = args.slice();
  if (what === 'matrix') {
    const i = r.pick(spec.matrixArgs);
    if (spec.objects !== undefined && readable(args[i]) && Array.isArray(args[i]) && args[i].length > 0 && args[i].length <= 64 && args[i].every((m) => Array.isArray(m) && Array.isArray(m[0])) && r.bool(0.5)) {
      // a batch [B, T, C]: mutate one item
      const b = r.int(0, args[i].length - 1);
      out[i] = args[i].map((m, k) => (k === b ? G.MATRIX_MUTATIONS[r.pick(Object.keys(G.MATRIX_MUTATIONS))](r, matrixBase(m)) : m));
      return out;
    }
    out[i] = G.MATRIX_MUTATIONS[r.pick(Object.keys(G.MATRIX_MUTATIONS))](r, matrixBase(args[i]));
    return out;
  }
  if (what === 'typed') {
    const i = r.pick(spec.typedArgs);
    out[i] = G.TYPED_MUTATIONS[r.pick(Object.keys(G.TYPED_MUTATIONS))](r, typedBase(args[i]));
    return out;
  }
  if (what === 'vector') {
    const i = r.pick(spec.vectorArgs);
    out[i] = G.VECTOR_MUTATIONS[r.pick(Object.keys(G.VECTOR_MUTATIONS))](r, vectorBase(args[i]));
    return out;
  }
  if (what === 'weight') {
    // one weight inside the options: typed mutations on a typed one (sometimes matrix ones), matrix ones on number[][]
    const o = spec.optionsArg;
    const base = readable(args[o]) && !Array.isArray(args[o]) ? { ...args[o] } : {};
    const key = r.pick(spec.weightKeys);
    const w = base[key];
    const typed = w !== undefined && typedBase(w) === w;
    base[key] = typed && r.bool(0.75)
      ? G.TYPED_MUTATIONS[r.pick(Object.keys(G.TYPED_MUTATIONS))](r, w)
      : G.MATRIX_MUTATIONS[r.pick(Object.keys(G.MATRIX_MUTATIONS))](r, matrixBase(w));
    out[o] = base;
    return out;
  }
  if (what === 'options') return mutateOptions(r, spec, args);
  if (what === 'object') {
    const i = Number(r.pick(Object.keys(spec.objects)));
    return mutateObject(r, spec, args, i, spec.objects[i], G.LAYER_MISSPELLINGS);
  }
  if (what === 'count') {
    out[r.pick(spec.countArgs)] = r.pick(G.COUNT_VALUES);
    if (r.bool(0.2)) [out[3], out[4]] = [out[4], out[3]];
    return out;
  }
  // arity: too few or too many arguments
  return r.bool() ? out.slice(0, r.int(0, out.length - 1)) : [...out, r.pick(G.WRONG_TYPES)];
}

/** The export and arguments of case `index` under master seed `seed`. */
export function makeCase(seed, index, table = FUZZ_EXPORTS) {
  const r = G.rng(G.caseSeed(seed, index));
  const spec = table[index % table.length];
  let args = spec.valid(r);
  const mutations = r.weighted([[3, 0], [5, 1], [2, 2], [1, 3]]);
  for (let m = 0; m < mutations; m += 1) args = mutate(r, spec, args);
  return { spec, args, mutations };
}

const KNOWN_Q = [[0.5, -1.25, 2], [3, 0.125, -0.75], [1, 1, 1]];
const KNOWN_V = [[5, 6], [7, 8], [-1, 0.5]];
const KNOWN_OPTIONS = { causal: true };
const KNOWN_LAYER = { embedDim: 4, numHeads: 2, seed: 3 };
const KNOWN_X = [[0.5, -1, 2, 0.25], [1, 1, -0.5, 3], [-2, 0.75, 1, 1]];

/** The known-good call and its first answer; later answers must be identical to the bit. */
export function knownGood(lab) {
  const first = lab.dotProductAttention(KNOWN_Q, KNOWN_Q, KNOWN_V, KNOWN_OPTIONS);
  const reference = referenceAttention(KNOWN_Q, KNOWN_Q, KNOWN_V, KNOWN_OPTIONS);
  first.forEach((row, i) => row.forEach((x, j) => {
    if (!(Math.abs(x - reference.value[i][j]) <= 1e-12 * Math.max(1, Math.abs(reference.value[i][j])))) {
      throw new Error(`the known-good call is wrong: [${i}][${j}] is ${x}, reference ${reference.value[i][j]}`);
    }
  }));
  const bits = JSON.stringify(first);
  // and one long-lived layer, which every case's layers (built, used and freed) must not disturb
  const layer = new lab.MultiHeadAttention(KNOWN_LAYER);
  const layerCall = () => JSON.stringify(layer.forward(KNOWN_X, null, null, KNOWN_OPTIONS));
  const expected = LR.forward(LR.construct(KNOWN_LAYER), KNOWN_X, null, null, KNOWN_OPTIONS).output[0].v;
  JSON.parse(layerCall()).output.forEach((row, i) => row.forEach((x, j) => {
    if (!(Math.abs(x - expected[i][j]) <= 1e-12 * Math.max(1, Math.abs(expected[i][j])))) {
      throw new Error(`the known-good layer call is wrong: [${i}][${j}] is ${x}, reference ${expected[i][j]}`);
    }
  }));
  const layerBits = layerCall();
  return () => JSON.stringify(lab.dotProductAttention(KNOWN_Q, KNOWN_Q, KNOWN_V, KNOWN_OPTIONS)) === bits && layerCall() === layerBits;
}

/** What the reference says about `args`: { ok: true, ... } or { ok: false, kind }. */
function referenceVerdict(spec, args) {
  try {
    return { ok: true, ...spec.reference(args) };
  } catch (e) {
    if (e instanceof Invalid) return { ok: false, kind: e.kind, why: e.message };
    // the reference's own reads hit a throwing getter, trap or revoked proxy: the package must refuse
    return { ok: false, kind: 'TypeError', why: `reading the input threw: ${e?.message}` };
  }
}

/**
 * Runs case (seed, index) against `lab`. Returns { outcome: 'value' | 'TypeError' | 'RangeError' }
 * or { failure: 'what went wrong' }. `stillGood` is the closure `knownGood(lab)` returned.
 */
export function runCase(lab, seed, index, stillGood, table = FUZZ_EXPORTS) {
  const { spec, args } = makeCase(seed, index, table);
  const started = performance.now();
  let result;
  let thrown;
  try {
    result = spec.call(lab, args);
  } catch (e) {
    thrown = e;
  }
  const elapsed = performance.now() - started;
  const failure = judge(spec, args, result, thrown);
  const where = `${spec.name}, case ${index} (seed ${seed})`;
  if (failure) return { failure: `${where}: ${failure}` };
  if (elapsed > CASE_TIME_LIMIT_MS) return { failure: `${where}: took ${elapsed.toFixed(0)} ms` };
  if (!stillGood()) return { failure: `${where}: the known-good call no longer returns the right answer` };
  return { outcome: thrown ? thrown.name : 'value', export: spec.name };
}

function judge(spec, args, result, thrown) {
  if (thrown !== undefined) {
    if (thrown instanceof WebAssembly.RuntimeError) return `a wasm trap: ${thrown.message}`;
    if (!(thrown instanceof TypeError || thrown instanceof RangeError)) return `threw ${thrown?.name ?? typeof thrown}: ${thrown?.message ?? thrown}`;
    if (typeof thrown.message !== 'string' || thrown.message.length === 0) return `threw a ${thrown.name} with an empty message`;
    const verdict = referenceVerdict(spec, args);
    if (verdict.ok) {
      if (verdict.nearOverflow && thrown instanceof RangeError && / overflows to /.test(thrown.message)) return null;
      // the forward may overflow (a RangeError) or the later call's arguments be refused first
      if (verdict.refusedLater === thrown.name) return null;
      // a refusal the contract allows but does not require (e.g. an AdamW step beyond the dtype's range)
      if (verdict.mayRefuse && thrown instanceof RangeError && verdict.mayRefuse.test(thrown.message)) return null;
      return `refused valid input with ${thrown.name}: ${thrown.message}`;
    }
    if (thrown.name !== verdict.kind) return `threw ${thrown.name} (${thrown.message}) where the reference expects a ${verdict.kind} (${verdict.why})`;
    return null;
  }
  const verdict = referenceVerdict(spec, args);
  if (!verdict.ok) return `returned a value for input the reference refuses (${verdict.kind}: ${verdict.why})`;
  if (verdict.refusedLater) return `returned a value for input the reference refuses after the forward pass (${verdict.refusedLater})`;
  return spec.compare(result, verdict);
}
