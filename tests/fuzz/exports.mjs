// The table of exports the fuzzer, the oracle suite and the leak script drive. Each entry says how
// to build a valid call, how to call the package, what the reference answers and how to compare.
//
// Adding an export (e.g. the MultiHeadAttention layer) is one more entry: `valid` builds arguments
// from a seeded generator, `call` invokes the package (for a class: construct, call, free), and
// `reference` answers from tests/oracle/reference.mjs or throws `Invalid` for input that must be refused.
import * as G from './generate.mjs';
import * as R from '../oracle/reference.mjs';
import * as LR from '../oracle/layer.mjs';
import * as TR from '../oracle/typed.mjs';
import * as PR from '../oracle/projection.mjs';
import * as MR from '../oracle/modern.mjs';
import { Invalid } from '../oracle/reference.mjs';
import { MODEL_EXPORTS } from './transformer.mjs';
// only to leave out the entries of exports the package does not have yet (MODERN_EXPORTS below)
import lab from '../js/support/lab.mjs';

/** Options of a valid mask-taking call: none, {}, causal, mask or both. */
function maskOptions(r, t) {
  return r.weighted([
    [3, () => undefined],
    [1, () => ({})],
    [1, () => null],
    [3, () => ({ causal: true })],
    [2, () => ({ mask: G.mask(r, t, t) })],
    [2, () => ({ causal: r.bool(), mask: G.mask(r, t, t) })],
  ])();
}

/** The arguments of a valid multi-head call: T×C matrices with C = h·d, options or positional form. */
function multiHeadArgs(r, { positional }) {
  const t = G.size(r);
  const h = r.weighted([[4, () => r.int(1, 3)], [1, () => r.int(4, 6)]])();
  const d = r.weighted([[4, () => r.int(1, 3)], [1, () => r.int(4, 8)]])();
  const c = h * d;
  const odd = r.pick([0, 0.02, 0.2]);
  const [Q, K, V] = [0, 1, 2].map(() => G.matrix(r, t, c, odd));
  if (positional) return [Q, K, V, h, d];
  const options = { numberOfHeads: h, headDimensions: d, ...(maskOptions(r, t) ?? {}) };
  if (r.bool(0.3)) options.W_O = G.matrix(r, c, c, odd);
  return [Q, K, V, options];
}

/** Compares a returned `number[][]` with the reference: same shape, finite, within the error bound. */
export function compareMatrix(actual, reference, what = 'result') {
  const { value: expected, bound } = reference;
  if (!Array.isArray(actual) || actual.length !== expected.length) return `${what} has ${actual?.length} rows, expected ${expected.length}`;
  for (let i = 0; i < expected.length; i += 1) {
    const row = actual[i];
    if (!Array.isArray(row) || row.length !== expected[i].length) return `${what}[${i}] has the wrong length`;
    for (let j = 0; j < row.length; j += 1) {
      const a = row[j];
      const b = expected[i][j];
      if (typeof a !== 'number' || !Number.isFinite(a)) return `${what}[${i}][${j}] is ${a}, a silent non-finite answer (reference ${b})`;
      // at the overflow edge the reference's own rounding may cross it where the package's does not
      if (!Number.isFinite(b) && reference.nearOverflow && Math.sign(a) === Math.sign(b) && Math.abs(a) >= Number.MAX_VALUE * (1 - 1e-12)) continue;
      if (!(Math.abs(a - b) <= bound[i][j])) return `${what}[${i}][${j}] is ${a}, reference ${b}, error ${Math.abs(a - b)} > bound ${bound[i][j]}`;
    }
  }
  return null;
}

/** Checks a trace: output as multiHeadAttention, 8 steps per head + 2, each head's weights within their bound. */
function compareTrace(actual, reference) {
  if (actual === null || typeof actual !== 'object') return 'the trace is not an object';
  const bad = compareMatrix(actual.output, reference, 'trace.output');
  if (bad) return bad;
  const h = reference.heads.length;
  if (!Array.isArray(actual.steps) || actual.steps.length !== 8 * h + 2) return `the trace has ${actual.steps?.length} steps, expected ${8 * h + 2}`;
  const eps = 2 ** -53;
  for (let head = 0; head < h; head += 1) {
    const step = actual.steps.find((s) => s.name === `weights_${head}`);
    const { weights, scoreError } = reference.heads[head];
    if (!step) return `no weights_${head} step`;
    for (let i = 0; i < weights.length; i += 1) {
      const w = weights[i];
      const mean = R.sum(w.map((x, l) => R.times(x, scoreError[i][l])));
      for (let j = 0; j < w.length; j += 1) {
        const bound = 8 * R.times(w[j], scoreError[i][j] + mean + (w.length + 4) * eps) + 1e-300;
        const got = step.values[i][j];
        if (!(Math.abs(got - w[j]) <= bound)) return `weights_${head}[${i}][${j}] is ${got}, reference ${w[j]}`;
      }
    }
  }
  return null;
}

export const EXPORTS = [
  {
    name: 'dotProductAttention',
    matrixArgs: [0, 1, 2],
    optionsArg: 3,
    options: { causal: 'flag', mask: 'mask' },
    valid(r) {
      const t = G.size(r);
      const [dk, dv] = [G.size(r), G.size(r)];
      const odd = r.pick([0, 0.02, 0.2]);
      const args = [G.matrix(r, t, dk, odd), G.matrix(r, t, dk, odd), G.matrix(r, t, dv, odd)];
      const options = maskOptions(r, t);
      if (options !== undefined || r.bool(0.3)) args.push(options);
      return args;
    },
    call: (lab, args) => lab.dotProductAttention(...args),
    reference: (args) => R.dotProductAttention(...args),
    compare: compareMatrix,
  },
  {
    name: 'multiHeadAttention (options)',
    matrixArgs: [0, 1, 2],
    optionsArg: 3,
    options: { numberOfHeads: 'count', headDimensions: 'count', W_O: 'matrix', causal: 'flag', mask: 'mask' },
    valid: (r) => multiHeadArgs(r, { positional: false }),
    call: (lab, args) => lab.multiHeadAttention(...args),
    reference: (args) => R.multiHeadAttention(args[0], args[1], args[2], args[3], args[4]),
    compare: compareMatrix,
  },
  {
    name: 'multiHeadAttention (positional)',
    matrixArgs: [0, 1, 2],
    countArgs: [3, 4],
    valid: (r) => multiHeadArgs(r, { positional: true }),
    call: (lab, args) => lab.multiHeadAttention(...args),
    reference: (args) => R.multiHeadAttention(args[0], args[1], args[2], args[3], args[4]),
    compare: compareMatrix,
  },
  {
    name: 'traceMultiHeadAttention',
    matrixArgs: [0, 1, 2],
    optionsArg: 3,
    options: { numberOfHeads: 'count', headDimensions: 'count', W_O: 'matrix', causal: 'flag', mask: 'mask' },
    valid: (r) => multiHeadArgs(r, { positional: false }),
    call: (lab, args) => lab.traceMultiHeadAttention(...args),
    // the export has four parameters: a fifth argument is ignored
    reference: (args) => R.multiHeadAttention(args[0], args[1], args[2], args[3], undefined, { trace: true }),
    compare: compareTrace,
  },
];

// ---- the MultiHeadAttention layer -----------------------------------------------------------
// Each case builds a fresh layer (by its constructor, fromFusedQKV or fromPyTorch), runs it and
// frees it. The reference (tests/oracle/layer.mjs) rebuilds the same layer from the arguments
// alone (the seeded weights from the documented SplitMix64 + Xavier algorithm, the dropout mask
// from the documented stream) and answers with values and per-entry error bounds.

const ETA_BOUND = 2 ** -1074;

/** A layer's shape: h heads of d columns, occasionally larger. */
function layerShape(r) {
  const h = r.weighted([[4, () => r.int(1, 3)], [1, () => r.int(4, 6)]])();
  const d = r.weighted([[4, () => r.int(1, 3)], [1, () => r.int(4, 6)]])();
  return { h, d, C: h * d };
}

/** query, key, value (null for self-attention, sometimes another T_k: cross-attention), options; odd entries from `odds`. */
function layerInputs(r, C, odd, odds = G.ODD_FINITE) {
  const tq = G.size(r);
  const cross = r.bool(0.4);
  const tk = cross ? G.size(r) : tq;
  const batch = r.bool(0.3) ? r.int(1, 3) : 0;
  const one = (t) => G.matrix(r, t, C, odd, odds);
  const make = (t) => (batch ? Array.from({ length: batch }, () => one(t)) : one(t));
  const query = make(tq);
  let key = null;
  let value = null;
  if (cross) {
    key = make(tk);
    value = make(tk);
  } else if (r.bool(0.3)) {
    key = r.pick([undefined, null]);
  }
  const options = r.weighted([[2, () => undefined], [1, () => ({})], [4, () => ({})]])();
  if (options && r.bool(0.7)) {
    if (r.bool(0.4)) options.causal = r.bool(0.8);
    if (r.bool(0.3)) options.mask = G.mask(r, tq, tk);
    if (r.bool(0.4)) {
      options.needWeights = true;
      if (r.bool(0.5)) options.averageWeights = true;
    }
    if (r.bool(0.3)) options.training = true;
  }
  const gradOutput = batch ? Array.from({ length: batch }, () => G.matrix(r, tq, C, odd, odds)) : G.matrix(r, tq, C, odd, odds);
  return { query, key, value, options, gradOutput };
}

function layerConfig(r, { C, h }) {
  const config = { embedDim: C, numHeads: h };
  if (r.bool(0.3)) config.bias = r.bool(0.6);
  if (r.bool(0.3)) config.dropout = r.pick([0, 0.1, 0.5]);
  if (r.bool(0.5)) config.seed = r.bool(0.7) ? r.int(0, 2 ** 31) : BigInt(r.int(0, 2 ** 31)) * 2n ** 32n + 12345n;
  return config;
}

const vector = (r, n, odd, odds) => Array.from({ length: n }, () => G.entry(r, odd, odds));

/** Compares one tracked reference matrix { v, e } with a returned `number[][]`. */
function compareTracked(actual, { v, e }, near, what) {
  if (!Array.isArray(actual) || actual.length !== v.length) return `${what} has ${actual?.length} rows, expected ${v.length}`;
  for (let i = 0; i < v.length; i += 1) {
    const row = actual[i];
    if (!Array.isArray(row) || row.length !== v[i].length) return `${what}[${i}] has the wrong length`;
    for (let j = 0; j < row.length; j += 1) {
      const [a, b, bound] = [row[j], v[i][j], 8 * e[i][j] + 4 * ETA_BOUND];
      if (typeof a !== 'number' || !Number.isFinite(a)) return `${what}[${i}][${j}] is ${a}, a silent non-finite answer (reference ${b})`;
      if (near && !(Number.isFinite(b) && Number.isFinite(bound))) continue; // the reference itself left f64's range
      if (!(Math.abs(a - b) <= bound)) return `${what}[${i}][${j}] is ${a}, reference ${b}, error ${Math.abs(a - b)} > bound ${bound}`;
    }
  }
  return null;
}

/** A batch `[B, …]` of tracked matrices, or the one matrix when not batched. */
function compareItems(actual, items, batched, near, what) {
  if (!batched) return compareTracked(actual, items[0], near, what);
  if (!Array.isArray(actual) || actual.length !== items.length) return `${what} has ${actual?.length} items, expected ${items.length}`;
  for (let b = 0; b < items.length; b += 1) {
    const bad = compareTracked(actual[b], items[b], near, `${what}[${b}]`);
    if (bad) return bad;
  }
  return null;
}

/** forward's result { output, weights? } against the reference's. */
function compareForward(actual, F) {
  if (actual === null || typeof actual !== 'object') return 'forward did not return an object';
  const bad = compareItems(actual.output, F.output, F.batched, F.near, 'output');
  if (bad) return bad;
  if (!F.weights) return 'weights' in actual ? 'weights returned without needWeights' : null;
  const perItem = (got, heads, where) => (F.averageWeights ? compareTracked(got, heads, F.near, where) : compareItems(got, heads, true, F.near, where));
  if (!F.batched) return perItem(actual.weights, F.weights[0], 'weights');
  if (!Array.isArray(actual.weights) || actual.weights.length !== F.weights.length) return 'weights has the wrong batch size';
  for (let b = 0; b < F.weights.length; b += 1) {
    const worse = perItem(actual.weights[b], F.weights[b], `weights[${b}]`);
    if (worse) return worse;
  }
  return null;
}

/** backward's { query, key, value } and grads() against the reference's. */
function compareBackward(backward, grads, Bk) {
  for (const name of ['query', 'key', 'value']) {
    const bad = compareItems(backward?.[name], Bk.inputs[name], Bk.batched, Bk.near, `backward.${name}`);
    if (bad) return bad;
  }
  const names = Object.keys(Bk.params);
  if (grads === null || typeof grads !== 'object' || Object.keys(grads).sort().join() !== names.sort().join()) return `grads() has the keys ${Object.keys(grads ?? {})}, expected ${names}`;
  for (const name of names) {
    const got = name.startsWith('b_') ? [grads[name]] : grads[name];
    const bad = compareTracked(got, Bk.params[name], Bk.near, `grads().${name}`);
    if (bad) return bad;
  }
  return null;
}

/** getWeights() equals the reference's parameters bit for bit (seeded init, or what was set); `oracle` is layer.mjs or modern.mjs. */
function compareParameters(weights, L, oracle = LR) {
  const expected = oracle.parameters(L);
  if (weights === null || typeof weights !== 'object' || Object.keys(weights).sort().join() !== Object.keys(expected).sort().join()) return `getWeights() has the keys ${Object.keys(weights ?? {})}`;
  for (const [name, rows] of Object.entries(expected)) {
    const got = name.startsWith('b_') ? [weights[name]] : weights[name];
    if (!Array.isArray(got) || !got.every(Array.isArray)) return `getWeights().${name} is not a number[][]`;
    const [a, b] = [got.flat(), rows.flat()];
    // Object.is: bit for bit, -0 and +0 told apart
    if (got.length !== rows.length || got.some((row, i) => row.length !== rows[i].length) || a.some((x, i) => !Object.is(x, b[i]))) return `getWeights().${name} differs from the reference`;
  }
  return null;
}

/**
 * The reference's backward after forward `F`. When the forward comes near overflow, the package
 * may refuse it (RangeError) before it reads gradOutput: either verdict is then correct.
 */
function withBackward(L, F, gradOutput, oracle = LR) {
  try {
    const Bk = oracle.backward(L, F, gradOutput);
    return { L, F, Bk, nearOverflow: Bk.near };
  } catch (e) {
    if (!F.near) throw e;
    return { L, F, nearOverflow: true, refusedLater: e instanceof Invalid ? e.kind : 'TypeError' };
  }
}

/**
 * Runs `build(lab)` → layer, then `use(layer)`; always frees the layer. When `use` throws, its error
 * is the one reported: after a wasm trap the layer stays borrowed and `free()` throws an Error of its
 * own ("attempted to take ownership of Rust value while it was borrowed"), which would hide the trap.
 */
function withLayer(build, use) {
  const layer = build();
  let result;
  try {
    result = use(layer);
  } catch (e) {
    try {
      layer.free();
    } catch {
      // the trap (or other error) below is the finding
    }
    throw e;
  }
  layer.free();
  return result;
}

const FORWARD_OPTIONS = { mask: 'mask', causal: 'flag', needWeights: 'flag', averageWeights: 'flag', training: 'flag' };
const CONFIG_KEYS = { embedDim: 'count', numHeads: 'count', bias: 'flag', dropout: 'probability', seed: 'seed' };

export const LAYER_EXPORTS = [
  {
    name: 'new MultiHeadAttention + forward + getWeights',
    matrixArgs: [1, 2, 3],
    objects: { 0: CONFIG_KEYS, 4: FORWARD_OPTIONS },
    valid(r) {
      const shape = layerShape(r);
      const { query, key, value, options } = layerInputs(r, shape.C, r.pick([0, 0.02, 0.2]));
      return [layerConfig(r, shape), query, key, value, options];
    },
    call: (lab, a) => withLayer(() => new lab.MultiHeadAttention(a[0]), (layer) => {
      const forward = layer.forward(a[1], a[2], a[3], a[4]);
      return { forward, weights: layer.getWeights(), sizes: [layer.embedDim, layer.numHeads, layer.headDim, layer.numParameters] };
    }),
    reference(a) {
      const L = LR.construct(a[0]);
      const F = LR.forward(L, a[1], a[2], a[3], a[4]);
      return { L, F, nearOverflow: F.near };
    },
    compare(actual, { L, F }) {
      const sizes = [L.C, L.h, L.d, 4 * L.C * L.C + (L.b ? 4 * L.C : 0)];
      if (JSON.stringify(actual.sizes) !== JSON.stringify(sizes)) return `embedDim/numHeads/headDim/numParameters are ${actual.sizes}, expected ${sizes}`;
      return compareParameters(actual.weights, L) ?? compareForward(actual.forward, F);
    },
  },
  {
    // setWeights with each tensor nested or (issue 33) flat typed, and getWeights/grads in both forms: the
    // flat results must be the nested ones' values (float64 exactly, float32 each rounded once: Math.fround)
    name: 'MultiHeadAttention setWeights + forward + backward + grads',
    matrixArgs: [2, 3, 4, 6],
    objects: { 0: CONFIG_KEYS, 1: { W_Q: 'matrix', W_K: 'matrix', W_V: 'matrix', W_O: 'matrix', b_Q: 'vector', b_K: 'vector', b_V: 'vector', b_O: 'vector' }, 5: FORWARD_OPTIONS, 7: { dtype: 'dtype' } },
    valid(r) {
      const shape = layerShape(r);
      const odd = r.pick([0, 0.02, 0.2]);
      const config = layerConfig(r, shape);
      // each tensor nested, or flat (Float32Array or Float64Array; rarely one entry short)
      const flat = (values) => r.weighted([
        [4, () => values],
        [2, () => Float64Array.from(values.flat())],
        [2, () => Float32Array.from(values.flat())],
        [1, () => Float64Array.from(values.flat().slice(0, -1))],
      ])();
      const update = {};
      for (const name of ['W_Q', 'W_K', 'W_V', 'W_O']) if (r.bool(0.8)) update[name] = flat(G.matrix(r, shape.C, shape.C, odd / 4));
      if (config.bias !== false) for (const name of ['b_Q', 'b_K', 'b_V', 'b_O']) if (r.bool(0.7)) update[name] = flat(vector(r, shape.C, odd / 4));
      const { query, key, value, options, gradOutput } = layerInputs(r, shape.C, odd);
      return [config, update, query, key, value, options, gradOutput, r.pick([undefined, { dtype: 'float32' }, { dtype: 'float64' }])];
    },
    call: (lab, a) => withLayer(() => new lab.MultiHeadAttention(a[0]), (layer) => {
      layer.setWeights(a[1]);
      const forward = layer.forward(a[2], a[3], a[4], a[5]);
      const backward = layer.backward(a[6]);
      return { forward, backward, grads: layer.grads(), weights: layer.getWeights(), flatWeights: layer.getWeights(a[7]), flatGrads: layer.grads(a[7]) };
    }),
    reference(a) {
      const L = LR.setWeights(LR.construct(a[0]), a[1]);
      const F = LR.forward(L, a[2], a[3], a[4], a[5]);
      const verdict = withBackward(L, F, a[6]);
      let dtype;
      try {
        dtype = LR.readDtypeOptions(a[7]);
      } catch (e) {
        // the forward may be refused first (near overflow), else getWeights(options) must refuse
        if (verdict.nearOverflow) return { ...verdict, refusedLater: e instanceof Invalid ? e.kind : 'TypeError' };
        throw e;
      }
      // a weight or gradient beyond the largest f32 may be refused in float32
      return { ...verdict, dtype, mayRefuse: dtype === 'float32' ? /beyond the largest f32/ : undefined };
    },
    compare(actual, { L, F, Bk, dtype }) {
      const wrong = compareParameters(actual.weights, L) ?? compareForward(actual.forward, F) ?? compareBackward(actual.backward, actual.grads, Bk);
      if (wrong) return wrong;
      for (const [what, flat, nested] of [['getWeights', actual.flatWeights, actual.weights], ['grads', actual.flatGrads, actual.grads]]) {
        if (dtype === undefined) {
          // no dtype: the nested form again
          if (JSON.stringify(flat) !== JSON.stringify(nested)) return `${what}({}) is not the nested form`;
          continue;
        }
        const Typed = dtype === 'float32' ? Float32Array : Float64Array;
        if (flat === null || typeof flat !== 'object' || Object.keys(flat).sort().join() !== Object.keys(nested).sort().join()) return `${what}({ dtype }) has the keys ${Object.keys(flat ?? {})}, the nested form ${Object.keys(nested)}`;
        for (const [name, value] of Object.entries(nested)) {
          const want = Typed.from([value].flat(2));
          if (!(flat[name] instanceof Typed) || flat[name].length !== want.length || flat[name].some((x, i) => !Object.is(x, want[i]))) return `${what}({ dtype: '${dtype}' }).${name} is not the nested values, flat, in ${Typed.name}`;
        }
      }
      return null;
    },
  },
  {
    name: 'MultiHeadAttention.fromFusedQKV + forward + backward',
    matrixArgs: [1, 2, 3, 5],
    objects: { 0: { W_QKV: 'matrix', b_QKV: 'vector', W_O: 'matrix', b_O: 'vector', numHeads: 'count', dropout: 'probability', seed: 'seed' }, 4: FORWARD_OPTIONS },
    valid(r) {
      const { C, h } = layerShape(r);
      const odd = r.pick([0, 0.02, 0.2]);
      const weights = { W_QKV: G.matrix(r, C, 3 * C, odd / 4), W_O: G.matrix(r, C, C, odd / 4), numHeads: h };
      if (r.bool(0.7)) Object.assign(weights, { b_QKV: vector(r, 3 * C, odd / 4), b_O: vector(r, C, odd / 4) });
      if (r.bool(0.2)) Object.assign(weights, { dropout: 0.25, seed: r.int(0, 1000) });
      const { query, key, value, options, gradOutput } = layerInputs(r, C, odd);
      return [weights, query, key, value, options, gradOutput];
    },
    call: (lab, a) => withLayer(() => lab.MultiHeadAttention.fromFusedQKV(a[0]), (layer) => {
      const forward = layer.forward(a[1], a[2], a[3], a[4]);
      return { forward, backward: layer.backward(a[5]), grads: layer.grads() };
    }),
    reference(a) {
      const L = LR.fromFusedQKV(a[0]);
      const F = LR.forward(L, a[1], a[2], a[3], a[4]);
      return withBackward(L, F, a[5]);
    },
    compare: (actual, { F, Bk }) => compareForward(actual.forward, F) ?? compareBackward(actual.backward, actual.grads, Bk),
  },
  {
    name: 'MultiHeadAttention.fromPyTorch + forward + getWeights',
    matrixArgs: [1, 2, 3],
    objects: {
      0: { in_proj_weight: 'matrix', in_proj_bias: 'vector', out_proj_weight: 'matrix', out_proj_bias: 'vector', 'out_proj.weight': 'matrix', 'out_proj.bias': 'vector', numHeads: 'count', dropout: 'probability', seed: 'seed' },
      4: FORWARD_OPTIONS,
    },
    valid(r) {
      const { C, h } = layerShape(r);
      const odd = r.pick([0, 0.02, 0.2]);
      const dotted = r.bool(0.3);
      const state = { in_proj_weight: G.matrix(r, 3 * C, C, odd / 4), [dotted ? 'out_proj.weight' : 'out_proj_weight']: G.matrix(r, C, C, odd / 4), numHeads: h };
      if (r.bool(0.7)) Object.assign(state, { in_proj_bias: vector(r, 3 * C, odd / 4), [dotted ? 'out_proj.bias' : 'out_proj_bias']: vector(r, C, odd / 4) });
      const { query, key, value, options } = layerInputs(r, C, odd);
      return [state, query, key, value, options];
    },
    call: (lab, a) => withLayer(() => lab.MultiHeadAttention.fromPyTorch(a[0]), (layer) => ({ forward: layer.forward(a[1], a[2], a[3], a[4]), weights: layer.getWeights() })),
    reference(a) {
      const L = LR.fromPyTorch(a[0]);
      const F = LR.forward(L, a[1], a[2], a[3], a[4]);
      return { L, F, nearOverflow: F.near };
    },
    compare: (actual, { L, F }) => compareParameters(actual.weights, L) ?? compareForward(actual.forward, F),
  },
];

// ---- typed input, linear and projectedSelfAttention ---------------------------------------
// Typed calls return `{ data, shape }`. A Float64Array result must equal the number[][] call on
// the same values bit for bit (the call also makes that call and returns both); every result is
// checked against the oracle: f64 within its bound; f32 results of dotProductAttention and
// multiHeadAttention within the layer oracle's error model run in f32 (f32Judged below), those of
// linear within its own f32 bound.

/** The (T, C) items of a typed argument the package accepted, as number[][]. */
const itemsOf = (x) => TR.items(TR.readTyped(x, 'x', [2, 3]));

/**
 * T×C, or a batch of B of them, in precision `kind`: `{ data, shape }`. f32 input has no odd values
 * unless `f32Odd` (then f32 numbers near f32's range, G.ODD_FINITE_F32).
 */
function typedInput(r, kind, batch, t, c, odd, f32Odd = false) {
  const one = () => (kind === 32 ? G.matrix(r, t, c, f32Odd ? odd : 0, G.ODD_FINITE_F32) : G.matrix(r, t, c, odd));
  return batch ? G.typed(kind, Array.from({ length: batch }, one), true) : G.typed(kind, one());
}

/** The package's Float64Array result (per batch item) from number[][] calls `nested(q, k, v)` on the items. */
function nestedTwin(result, args, nested) {
  if (!(result?.data instanceof Float64Array)) return undefined;
  let items;
  try {
    items = args.slice(0, 3).map(itemsOf);
  } catch {
    return undefined; // the oracle refuses these arguments: the judge reports the accepted value
  }
  const [qs, ks, vs] = items;
  return qs.flatMap((q, b) => nested(q, ks[b], vs[b]));
}

/**
 * The reference of a typed attention function with its f32 results judged by the layer oracle's
 * error model in f32 (typed.mjs `f32Model`): bounds 8e + 4η plus the floor for weights f32's exp
 * flushes to zero, and "near f32's range" (a RangeError for overflow acceptable) from that model.
 * (compareAny's f32Scaled bound, the f64 first-order bound times 2^29, is not sound once f32 score
 * errors reach the softmax's non-linear range, as they do for inputs near f32's range.)
 */
function f32Judged(ref) {
  if (ref.form !== 'typed' || ref.kind !== 32) return ref;
  const { value, e, near } = ref.f32Model;
  return { ...ref, value, bound: e.map((row, i) => row.map((x, j) => 8 * x + 4 * 2 ** -149 + ref.f32Floor[i][j])), nearOverflow: near, f32Scaled: false };
}

/** A typed (or nested) result against the reference `{ form, kind, shape, value, bound, f32Scaled }`. */
export function compareAny(actual, ref) {
  const { result, twin } = actual;
  if (ref.form === 'nested') return compareMatrix(result, ref);
  const Ctor = ref.kind === 32 ? Float32Array : Float64Array;
  if (result === null || typeof result !== 'object' || !(result.data instanceof Ctor)) return `the result is not { data: ${Ctor.name}, shape }`;
  if (JSON.stringify(result.shape) !== JSON.stringify(ref.shape)) return `result.shape is ${JSON.stringify(result.shape)}, expected ${JSON.stringify(ref.shape)}`;
  const C = ref.shape[ref.shape.length - 1];
  if (result.data.length !== ref.value.length * C) return `result.data has ${result.data.length} values, expected ${ref.value.length * C}`;
  const rows = ref.value.map((_, i) => Array.from(result.data.subarray(i * C, (i + 1) * C)));
  const bound = ref.kind === 32 && ref.f32Scaled
    ? ref.bound.map((row, i) => row.map((b, j) => b * 2 ** 29 + 2 ** -24 * Math.abs(ref.value[i][j]) + ref.f32Floor[i][j] + 2 ** -140))
    : ref.bound;
  const bad = compareMatrix(rows, { ...ref, bound }, 'result.data');
  if (bad) return bad;
  if (ref.kind === 64 && !ref.noTwin) {
    const flat = twin?.flat();
    if (!flat || flat.length !== result.data.length || flat.some((x, i) => !Object.is(x, result.data[i]))) return 'the Float64Array result differs from the number[][] call on the same values';
  }
  return null;
}

const ATTENTION_OPTIONS = { causal: 'flag', mask: 'mask' };
const MULTI_HEAD_OPTIONS = { numberOfHeads: 'count', headDimensions: 'count', W_O: 'matrix', causal: 'flag', mask: 'mask' };

export const TYPED_EXPORTS = [
  {
    name: 'dotProductAttention (typed)',
    matrixArgs: [0, 1, 2],
    typedArgs: [0, 1, 2],
    optionsArg: 3,
    options: ATTENTION_OPTIONS,
    valid(r) {
      const kind = r.pick([32, 64]);
      const batch = r.bool(0.3) ? r.int(1, 3) : 0;
      const t = G.size(r);
      const [dk, dv] = [G.size(r), G.size(r)];
      const odd = r.pick([0, 0.02, 0.2]);
      const args = [typedInput(r, kind, batch, t, dk, odd, true), typedInput(r, kind, batch, t, dk, odd, true), typedInput(r, kind, batch, t, dv, odd, true)];
      const options = maskOptions(r, t);
      if (options !== undefined || r.bool(0.3)) args.push(options);
      return args;
    },
    call(lab, a) {
      const result = lab.dotProductAttention(...a);
      return { result, twin: nestedTwin(result, a, (q, k, v) => lab.dotProductAttention(q, k, v, a[3])) };
    },
    reference: (a) => f32Judged(TR.dotProductAttention(...a)),
    compare: compareAny,
  },
  {
    name: 'multiHeadAttention (typed)',
    matrixArgs: [0, 1, 2],
    typedArgs: [0, 1, 2],
    optionsArg: 3,
    options: MULTI_HEAD_OPTIONS,
    valid(r) {
      const kind = r.pick([32, 64]);
      const batch = r.bool(0.3) ? r.int(1, 3) : 0;
      const t = G.size(r);
      const { h, d, C } = layerShape(r);
      const odd = r.pick([0, 0.02, 0.2]);
      const [Q, K, V] = [0, 1, 2].map(() => typedInput(r, kind, batch, t, C, odd, true));
      if (r.bool(0.2)) return [Q, K, V, h, d];
      const options = { numberOfHeads: h, headDimensions: d, ...(maskOptions(r, t) ?? {}) };
      // in f32, W_O's odd values are f32 numbers (near f32's range: its product may overflow f32)
      const odds = kind === 32 ? G.ODD_FINITE_F32 : G.ODD_FINITE;
      if (r.bool(0.3)) options.W_O = r.bool() ? G.typed(kind, G.matrix(r, C, C, odd / 4, odds)) : G.matrix(r, C, C, odd / 4, odds);
      return [Q, K, V, options];
    },
    call(lab, a) {
      const result = lab.multiHeadAttention(...a);
      const options = typeof a[3] === 'object' && a[3] !== null && TR.isTypedCandidate(a[3].W_O) ? Object.assign(Object.create(Object.getPrototypeOf(a[3])), a[3], { W_O: itemsOf(a[3].W_O)[0] }) : a[3];
      return { result, twin: nestedTwin(result, a, (q, k, v) => lab.multiHeadAttention(q, k, v, options, a[4])) };
    },
    reference: (a) => f32Judged(TR.multiHeadAttention(a[0], a[1], a[2], a[3], a[4])),
    compare: compareAny,
  },
  {
    name: 'linear',
    matrixArgs: [0, 1],
    typedArgs: [0, 1],
    vectorArgs: [2],
    valid(r) {
      const form = r.pick(['nested', 32, 64]);
      const [t, n, out] = [G.size(r), G.size(r), G.size(r)];
      const odd = r.pick([0, 0.02, 0.2]);
      const batch = form !== 'nested' && r.bool(0.3) ? r.int(1, 3) : 0;
      const X = form === 'nested' ? G.matrix(r, t, n, odd) : typedInput(r, form, batch, t, n, odd);
      const W = form === 'nested' ? G.matrix(r, n, out, odd / 4) : G.typed(form, G.matrix(r, n, out, form === 32 ? 0 : odd / 4));
      const b = vector(r, out, form === 32 ? 0 : odd / 4);
      return r.weighted([
        [2, () => [X, W]],
        [2, () => [X, W, b]],
        [1, () => [X, W, Float64Array.from(b)]],
        [1, () => [X, W, Float32Array.from(b)]],
        [1, () => [X, W, undefined]],
      ])();
    },
    call(lab, a) {
      const result = lab.linear(...a);
      if (!(result?.data instanceof Float64Array)) return { result };
      let rows;
      try {
        rows = [itemsOf(a[0]).flat(), itemsOf(a[1])[0]];
      } catch {
        return { result }; // the oracle refuses these arguments: the judge reports the accepted value
      }
      return { result, twin: lab.linear(rows[0], rows[1], a[2]) };
    },
    reference: (a) => PR.linear(a[0], a[1], a[2]),
    compare: compareAny,
  },
  {
    name: 'projectedSelfAttention',
    matrixArgs: [0],
    optionsArg: 1,
    options: { numberOfHeads: 'count', headDimensions: 'count', W_Q: 'matrix', W_K: 'matrix', W_V: 'matrix', W_O: 'matrix', causal: 'flag', mask: 'mask' },
    valid(r) {
      const t = G.size(r);
      const { h, d, C } = layerShape(r);
      const odd = r.pick([0, 0.02, 0.2]);
      const options = { numberOfHeads: h, headDimensions: d, ...(maskOptions(r, t) ?? {}) };
      for (const name of ['W_Q', 'W_K', 'W_V', 'W_O']) options[name] = G.matrix(r, C, C, odd / 4);
      return [G.matrix(r, t, C, odd), options];
    },
    call: (lab, a) => ({ result: lab.projectedSelfAttention(...a) }),
    reference: (a) => ({ form: 'nested', ...PR.projectedSelfAttention(a[0], a[1]) }),
    compare: compareAny,
  },
];

// ---- the MultiHeadAttention layer on typed input ---------------------------------------------
// Arguments: [config, weights for setWeights, warm-up input or null, query, key, value, options,
// gradOutput]. Each case builds a layer (constructor, then setWeights: the initial biases are zero
// and would hide bias mistakes), optionally runs a number[][] forward first, then the typed forward
// and backward, and frees it. The reference is tests/oracle/typed.mjs's layerForward/layerBackward.
//   - Float64Array: output, weights, input gradients and grads() must be the bits of a twin layer
//     (same config and weights) driven with number[][] on the same values, and the twin must agree
//     with the oracle;
//   - Float32Array, training: true: output and weights as in evaluation mode (below); the input
//     gradients and grads() against the oracle's backward in the same f32 error model (LR.inF32, the
//     bound 8e + 4η per entry), whatever gradOutput's form (Float32Array: the package's f32 backward;
//     Float64Array or number[][]: its f64 derivative of the same f32 forward);
//   - Float32Array, evaluation mode: against the oracle on the f32-rounded parameters, within the
//     bound of its error model run with f32's unit roundoff (LR.inF32: the f64 bound scaled by 2^29
//     afterwards, as compareAny's f32Scaled, is only first-order and fails once f32 score errors
//     reach the softmax's non-linear range, e.g. inputs near 1e18); `backward` after it must throw
//     a plain Error (caught by the call and checked here: the judge accepts only TypeError/RangeError
//     from a call).
// Mutations reach every typed argument (typed and nested ones: mixed forms must be refused), the
// config, the weights and the options.

const WEIGHT_KEYS = { W_Q: 'matrix', W_K: 'matrix', W_V: 'matrix', W_O: 'matrix', b_Q: 'vector', b_K: 'vector', b_V: 'vector', b_O: 'vector' };

/** The flat values of a number[][] (or deeper) result. */
const flatValues = (x) => (Array.isArray(x) ? x.flat(Infinity) : []);

/** A typed argument as the number[][] form the layer also takes (the same values); others unchanged. */
function nestedOf(x) {
  if (!TR.isTypedCandidate(x)) return x;
  const m = TR.readTyped(x, 'x', [2, 3]);
  return m.shape.length === 3 ? TR.items(m) : TR.items(m)[0];
}

/**
 * The twin: a layer built the same way, driven with number[][] on the same values (forward,
 * backward and grads()). Undefined when the oracle cannot read the arguments (the judge then
 * reports the package's accepted value).
 */
function layerTwin(build, a) {
  let args;
  try {
    args = [a[3], a[4], a[5], a[7]].map(nestedOf);
  } catch {
    return undefined;
  }
  return withLayer(build, (twin) => {
    const forward = twin.forward(args[0], args[1], args[2], a[6]);
    return { forward, backward: twin.backward(args[3]), grads: twin.grads() };
  });
}

/** The call of a typed-layer case: { forward, backward | stateError, grads, twin }. */
function typedLayerCall(lab, a) {
  const build = () => {
    const layer = new lab.MultiHeadAttention(a[0]);
    try {
      layer.setWeights(a[1]);
    } catch (e) {
      layer.free();
      throw e;
    }
    return layer;
  };
  return withLayer(build, (layer) => {
    // the warm-up input is moderate and never mutated, but mutated weights can make it overflow:
    // that RangeError is recorded (compare checks the reference agrees) and the case goes on
    let warmOverflow = false;
    if (a[2] !== undefined && a[2] !== null) {
      try {
        layer.forward(a[2]);
      } catch (e) {
        if (!(e instanceof RangeError && / overflows to /.test(e.message))) throw e;
        warmOverflow = true;
      }
    }
    const forward = layer.forward(a[3], a[4], a[5], a[6]);
    let backward;
    let stateError;
    try {
      backward = layer.backward(a[7]);
    } catch (e) {
      // only a plain Error (the package's "wrong state" class) is kept for compare to judge
      if (e?.constructor !== Error) throw e;
      stateError = e;
    }
    const grads = backward === undefined ? undefined : layer.grads();
    // no twin after an evaluation-mode f32 forward: it is checked against the oracle alone
    const twin = stateError ? undefined : layerTwin(build, a);
    return { forward, backward, stateError, grads, twin, warmOverflow };
  });
}

/** The reference of a typed-layer case: { L, fwd, bwd, nearOverflow } (refusedLater as withBackward). */
function typedLayerReference(a) {
  const L = LR.setWeights(LR.construct(a[0]), a[1]);
  const warmNear = a[2] !== undefined && a[2] !== null ? LR.forward(L, a[2]).near : false;
  const fwd = TR.layerForward(L, a[3], a[4], a[5], a[6]);
  try {
    const bwd = TR.layerBackward(L, fwd, a[7]);
    return { L, fwd, bwd, warmNear, nearOverflow: fwd.nearOverflow || Boolean(bwd.nearOverflow) };
  } catch (e) {
    if (!fwd.nearOverflow) throw e;
    return { L, fwd, warmNear, nearOverflow: true, refusedLater: e instanceof Invalid ? e.kind : 'TypeError' };
  }
}

/** A typed result equal to the number[][] values `expected` bit for bit (each rounded to f32 first for kind 32). */
function compareTypedBits(actual, expected, kind, shape, what) {
  const Ctor = kind === 32 ? Float32Array : Float64Array;
  if (actual === null || typeof actual !== 'object' || !(actual.data instanceof Ctor)) return `${what} is not { data: ${Ctor.name}, shape }`;
  if (JSON.stringify(actual.shape) !== JSON.stringify(shape)) return `${what}.shape is ${JSON.stringify(actual.shape)}, expected ${JSON.stringify(shape)}`;
  if (actual.data.length !== expected.length) return `${what}.data has ${actual.data.length} values, the number[][] call ${expected.length}`;
  for (let i = 0; i < expected.length; i += 1) {
    const got = actual.data[i];
    const want = kind === 32 ? Math.fround(expected[i]) : expected[i];
    if (!Number.isFinite(got)) return `${what}.data[${i}] is ${got}, a silent non-finite answer (the number[][] call: ${expected[i]})`;
    if (!Object.is(got, want)) return `${what}.data[${i}] is ${got}, the number[][] call gives ${expected[i]}${kind === 32 ? ` (rounded to f32: ${want})` : ''}`;
  }
  return null;
}

/** The shapes of the forward's and backward's typed results, from the reference's forward `F`. */
function layerShapes(F, L) {
  const { B, Tq, Tk } = F.dims;
  const lead = F.batched ? [B] : [];
  return {
    output: [...lead, Tq, L.C],
    weights: [...lead, ...(F.averageWeights ? [Tq, Tk] : [L.h, Tq, Tk])],
    query: [...lead, Tq, L.C],
    key: [...lead, Tk, L.C],
    value: [...lead, Tk, L.C],
  };
}

/**
 * Tracked matrices computed with f32's error model (LR.inF32) as compareAny's reference: their rows,
 * bounds 8e + 4η (as compareTracked, with f32's η) plus a floor for what f32's exp may flush to zero:
 * `floor` rows, or 2^-125 per attention weight.
 */
function f32Reference(tracked, shape, floor, nearOverflow, kind = 32) {
  const floors = floor ?? tracked.flatMap((m) => m.v.map((row) => row.map(() => 2 ** -125)));
  return {
    form: 'typed',
    kind,
    shape,
    value: tracked.flatMap((m) => m.v),
    bound: tracked.flatMap((m) => m.e).map((row, i) => row.map((e, j) => 8 * e + 4 * 2 ** -149 + floors[i][j])),
    nearOverflow,
  };
}

function compareTypedForward(actual, { L, fwd }) {
  const { F } = fwd;
  if (fwd.form === 'nested') return compareForward(actual.forward, F);
  const out = actual.forward;
  if (out === null || typeof out !== 'object') return 'forward did not return an object';
  const shapes = layerShapes(F, L);
  if (fwd.mode === 'eval' || fwd.mode === 'training') {
    const bad = compareAny({ result: out.output }, f32Reference(F.output, shapes.output, fwd.outputFloor, fwd.nearOverflow));
    if (bad) return `output: ${bad}`;
    if (!F.weights) return 'weights' in out ? 'weights returned without needWeights' : null;
    // a weight below f32's normal range may be lost entirely (2^-125, as in the floor above)
    const heads = F.weights.flatMap((w) => (F.averageWeights ? [w] : w));
    const worse = compareAny({ result: out.weights }, f32Reference(heads, shapes.weights, undefined, fwd.nearOverflow));
    return worse && `weights: ${worse}`;
  }
  const twin = actual.twin?.forward;
  if (!twin) return 'no number[][] twin to compare with';
  const bad = compareTypedBits(out.output, flatValues(twin.output), fwd.kind, shapes.output, 'output');
  if (bad) return bad;
  if (F.weights) {
    const worse = compareTypedBits(out.weights, flatValues(twin.weights), fwd.kind, shapes.weights, 'weights');
    if (worse) return worse;
  } else if ('weights' in out) return 'weights returned without needWeights';
  const wrong = compareForward(twin, F);
  return wrong && `the number[][] twin: ${wrong}`;
}

function compareTypedBackward(actual, { L, fwd, bwd }) {
  if (bwd.state) {
    if (actual.backward !== undefined) return 'backward after an evaluation-mode Float32Array forward returned a value';
    const e = actual.stateError;
    if (e?.constructor !== Error || !/^backward cannot differentiate a Float32Array forward in evaluation mode/.test(e.message)) {
      return `backward after an evaluation-mode Float32Array forward threw ${e?.name}: ${e?.message}, expected the plain Error that says so`;
    }
    return null;
  }
  if (actual.stateError) return `backward threw ${actual.stateError.name}: ${actual.stateError.message}`;
  if (bwd.form === 'nested') return compareBackward(actual.backward, actual.grads, bwd.Bk);
  if (fwd.mode === 'training') return compareF32TrainingBackward(actual, L, fwd, bwd);
  const twin = actual.twin;
  if (!twin?.backward) return 'no number[][] twin to compare with';
  const shapes = layerShapes(fwd.F, L);
  for (const name of ['query', 'key', 'value']) {
    const bad = compareTypedBits(actual.backward?.[name], flatValues(twin.backward[name]), bwd.kind, shapes[name], `backward.${name}`);
    if (bad) return bad;
  }
  // grads() are f64 whatever the precision: exactly the twin's
  const names = Object.keys(twin.grads);
  if (actual.grads === null || typeof actual.grads !== 'object' || Object.keys(actual.grads).sort().join() !== names.sort().join()) return `grads() has the keys ${Object.keys(actual.grads ?? {})}, the twin's ${names}`;
  for (const name of names) {
    const [got, want] = [flatValues(actual.grads[name]), flatValues(twin.grads[name])];
    if (got.length !== want.length || got.some((x, i) => !Object.is(x, want[i]))) return `grads().${name} differs from the number[][] twin's`;
  }
  const wrong = compareBackward(twin.backward, twin.grads, bwd.Bk);
  return wrong && `the number[][] twin: ${wrong}`;
}

/**
 * The backward after a Float32Array training forward against the oracle's backward in f32's error
 * model (`bwd.Bk`, typed.mjs): the input gradients as typed matrices of gradOutput's precision, within
 * 8e + 4η (+ 2^-125 per entry for what f32 flushes below its normal range, as the forward's weights),
 * and grads() (numbers holding f32 values) within the same bounds.
 */
function compareF32TrainingBackward(actual, L, fwd, bwd) {
  const shapes = layerShapes(fwd.F, L);
  for (const name of ['query', 'key', 'value']) {
    // (a Float64Array gradient has no number[][] twin here: it is judged by the same model)
    const ref = { ...f32Reference(bwd.Bk.inputs[name], shapes[name], undefined, bwd.nearOverflow, bwd.kind), noTwin: true };
    const bad = compareAny({ result: actual.backward?.[name] }, ref);
    if (bad) return `backward.${name}: ${bad}`;
  }
  const names = Object.keys(bwd.Bk.params);
  const grads = actual.grads;
  if (grads === null || typeof grads !== 'object' || Object.keys(grads).sort().join() !== names.sort().join()) return `grads() has the keys ${Object.keys(grads ?? {})}, expected ${names}`;
  for (const name of names) {
    const got = name.startsWith('b_') ? [grads[name]] : grads[name];
    const { v, e } = bwd.Bk.params[name];
    if (!Array.isArray(got) || got.length !== v.length) return `grads().${name} has ${got?.length} rows, expected ${v.length}`;
    for (let i = 0; i < v.length; i += 1) {
      for (let j = 0; j < v[i].length; j += 1) {
        const [a, b, bound] = [got[i]?.[j], v[i][j], 8 * e[i][j] + 4 * 2 ** -149 + 2 ** -125];
        if (typeof a !== 'number' || !Number.isFinite(a)) return `grads().${name}[${i}][${j}] is ${a}, a silent non-finite answer (reference ${b})`;
        if (bwd.kind === 32 && Math.fround(a) !== a) return `grads().${name}[${i}][${j}] = ${a} is not an f32 value after a Float32Array training step`;
        if (bwd.nearOverflow && !(Number.isFinite(b) && Number.isFinite(bound))) continue;
        if (!(Math.abs(a - b) <= bound)) return `grads().${name}[${i}][${j}] is ${a}, reference ${b}, error ${Math.abs(a - b)} > bound ${bound}`;
      }
    }
  }
  return null;
}

/**
 * Valid arguments of a typed-layer case with inputs of precision `kind`; `training`: true forces
 * training, false forbids it (evaluation mode), undefined leaves it to layerInputs.
 */
function typedLayerArgs(r, kind, { training, warmUp = false }) {
  const shape = layerShape(r);
  const { C } = shape;
  // in f32 the odd values are f32 numbers (1e300 would be Infinity)
  const odd = r.pick([0, 0.02, 0.2]);
  const odds = kind === 32 ? G.ODD_FINITE_F32 : G.ODD_FINITE;
  const config = layerConfig(r, shape);
  if (training && r.bool(0.7)) config.dropout = r.pick([0.1, 0.25, 0.5]);
  const update = {};
  for (const name of ['W_Q', 'W_K', 'W_V', 'W_O']) if (r.bool(0.3)) update[name] = G.matrix(r, C, C, odd / 4, odds);
  if (config.bias !== false) for (const name of ['b_Q', 'b_K', 'b_V', 'b_O']) if (r.bool(0.8)) update[name] = vector(r, C, odd / 4, odds);
  const { query, key, value, options, gradOutput } = layerInputs(r, C, odd, odds);
  const batched = Array.isArray(query[0][0]);
  const typed = (m, k = kind) => (m === undefined || m === null ? m : G.typed(k, m, batched));
  let opts = options;
  if (training === true) opts = { ...(options ?? {}), training: true };
  if (training === false && opts?.training !== undefined) {
    if (r.bool(0.5)) delete opts.training;
    else opts.training = false;
  }
  // gradOutput: mostly the inputs' precision, sometimes the other one or number[][]
  const gradForm = r.weighted([[4, kind], [2, 96 - kind], [1, 'nested']]);
  const moderate = () => {
    const one = () => G.matrix(r, batched ? query[0].length : query.length, C, 0);
    return batched ? query.map(one) : one();
  };
  const grad = gradForm === 'nested' ? gradOutput : typed(gradForm === 32 && kind === 64 ? moderate() : gradOutput, gradForm);
  const warm = warmUp && r.bool(0.4) ? G.matrix(r, G.size(r), C, 0) : null;
  return [config, update, warm, typed(query), typed(key), typed(value), opts, grad];
}

const TYPED_LAYER_SPEC = {
  matrixArgs: [3, 4, 5, 7],
  typedArgs: [3, 4, 5, 7],
  objects: { 0: CONFIG_KEYS, 1: WEIGHT_KEYS, 6: FORWARD_OPTIONS },
  call: typedLayerCall,
  reference: typedLayerReference,
  compare: (actual, ref) =>
    (actual.warmOverflow && !ref.warmNear ? 'the warm-up forward overflowed where the reference stays well inside the range' : null) ??
    compareTypedForward(actual, ref) ?? compareTypedBackward(actual, ref),
};

export const TYPED_LAYER_EXPORTS = [
  {
    name: 'MultiHeadAttention forward + backward (Float64Array)',
    ...TYPED_LAYER_SPEC,
    valid: (r) => typedLayerArgs(r, 64, {}),
  },
  {
    name: 'MultiHeadAttention forward (Float32Array, evaluation), backward refused',
    ...TYPED_LAYER_SPEC,
    valid: (r) => typedLayerArgs(r, 32, { training: false, warmUp: true }),
  },
  {
    name: 'MultiHeadAttention forward + backward (Float32Array, training: true)',
    ...TYPED_LAYER_SPEC,
    valid: (r) => typedLayerArgs(r, 32, { training: true }),
  },
];

// ---- projectedSelfAttention on typed input -------------------------------------------------
// X is `{ data, shape: [T, C] | [B, T, C] }`; each of W_Q, W_K, W_V, W_O is number[][] or a typed
// [C, C] of X's precision. The call also runs the twin the contract names, on the values the
// oracle read from the arguments:
//   - Float64Array: projectedSelfAttention on each item as number[][] (the result must be those
//     bits), and the result against the oracle (projection.mjs, f64 bounds);
//   - Float32Array: a bias-free MultiHeadAttention with those weights (setWeights, number[][] of the
//     f32 values) running forward on the same Float32Array with { causal, mask } (bit for bit), and
//     the result against the layer oracle run with f32's error model (typed.mjs layerForward, as the
//     typed-layer entries' evaluation mode), where a RangeError for overflow is acceptable only
//     when that model says the computation comes near f32's range.
// Mutations: typed ones on X and (through `weightKeys`) on each typed W, matrix ones on number[][]
// W, and the options' own.

const PROJECTED_WEIGHTS = ['W_Q', 'W_K', 'W_V', 'W_O'];

/** The twin of an accepted typed projectedSelfAttention call: { twin } or { twinError }; {} when the oracle cannot read the arguments. */
function projectedTwin(lab, a, result) {
  let p;
  try {
    p = PR.readProjectedTyped(a[0], a[1]);
  } catch {
    return {}; // the oracle refuses these arguments: the judge reports the accepted value
  }
  const forwardOptions = PR.projectedForwardOptions(p);
  try {
    if (result?.data instanceof Float64Array) {
      const options = { numberOfHeads: p.h, headDimensions: p.d, ...p.W, ...forwardOptions };
      return { twin: TR.items(p.x).flatMap((X) => lab.projectedSelfAttention(X, options)) };
    }
    if (result?.data instanceof Float32Array) {
      const build = () => {
        const layer = new lab.MultiHeadAttention({ embedDim: p.C, numHeads: p.h, bias: false });
        layer.setWeights(p.W);
        return layer;
      };
      const X = { data: Float32Array.from(p.x.values), shape: p.x.shape.slice() };
      return { twin: withLayer(build, (layer) => layer.forward(X, null, null, forwardOptions).output) };
    }
  } catch (e) {
    return { twinError: e };
  }
  return {};
}

/** The reference of a typed projectedSelfAttention case (Float64Array: compareAny's form; Float32Array: the f32 layer model). */
function projectedTypedReference(a) {
  // a mutation may have made X number[][] (or something else an array): the number[][] form
  if (!TR.isTypedCandidate(a[0])) return { form: 'nested', ...PR.projectedSelfAttention(a[0], a[1]) };
  const p = PR.readProjectedTyped(a[0], a[1]);
  if (p.x.kind === 64) return PR.projectedSelfAttentionF64(p);
  const L = LR.setWeights(LR.construct({ embedDim: p.C, numHeads: p.h, bias: false }), p.W);
  const X = { data: Float32Array.from(p.x.values), shape: p.x.shape.slice() };
  const fwd = TR.layerForward(L, X, null, null, PR.projectedForwardOptions(p));
  return { kind: 32, shape: p.x.shape.slice(), f32: f32Reference(fwd.F.output, p.x.shape.slice(), fwd.outputFloor, fwd.nearOverflow), nearOverflow: fwd.nearOverflow };
}

function compareProjectedTyped(actual, ref) {
  if (ref.form === 'nested') return compareMatrix(actual.result, ref);
  if (actual.twinError) return `the twin call threw ${actual.twinError?.name}: ${actual.twinError?.message}`;
  if (ref.kind === 64) return compareAny(actual, ref);
  const twin = actual.twin;
  if (!(twin?.data instanceof Float32Array)) return 'no f32 layer twin to compare with';
  const bad = compareTypedBits(actual.result, Array.from(twin.data), 32, ref.shape, 'result');
  if (bad) return `against the bias-free f32 layer: ${bad}`;
  return compareAny({ result: actual.result }, ref.f32);
}

/** Valid arguments: X typed of precision `kind` (odd values of that precision), each W typed or number[][]. */
function projectedTypedArgs(r) {
  const kind = r.pick([32, 64]);
  const batch = r.bool(0.3) ? r.int(1, 3) : 0;
  const t = G.size(r);
  const { h, d, C } = layerShape(r);
  const odd = r.pick([0, 0.02, 0.2]);
  const odds = kind === 32 ? G.ODD_FINITE_F32 : G.ODD_FINITE;
  const one = () => G.matrix(r, t, C, odd, odds);
  const X = batch ? G.typed(kind, Array.from({ length: batch }, one), true) : G.typed(kind, one());
  const options = { numberOfHeads: h, headDimensions: d, ...(maskOptions(r, t) ?? {}) };
  // number[][] weights are f64 numbers even for Float32Array X (the package rounds them to f32).
  // Half the cases scale them by 1/C: scores stay moderate, where f32's error model is tight
  // enough to catch small errors (with weights up to 30 its bound is several percent).
  const scale = r.pick([1, 1 / C]);
  for (const name of PROJECTED_WEIGHTS) {
    const M = G.matrix(r, C, C, odd / 4, odds).map((row) => row.map((v) => v * scale));
    options[name] = r.bool(0.5) ? G.typed(kind, M) : M;
  }
  return [X, options];
}

export const PROJECTED_TYPED_EXPORTS = [
  {
    name: 'projectedSelfAttention (typed)',
    matrixArgs: [0],
    typedArgs: [0],
    optionsArg: 1,
    options: { numberOfHeads: 'count', headDimensions: 'count', W_Q: 'matrix', W_K: 'matrix', W_V: 'matrix', W_O: 'matrix', causal: 'flag', mask: 'mask' },
    weightKeys: PROJECTED_WEIGHTS,
    valid: projectedTypedArgs,
    call(lab, a) {
      const result = lab.projectedSelfAttention(...a);
      return { result, ...projectedTwin(lab, a, result) };
    },
    reference: projectedTypedReference,
    compare: compareProjectedTyped,
  },
];

// ---- issue 13: groupedQueryAttention, rotaryEmbedding, the layer's numKVHeads/rope/window and KV cache ----
// The reference is tests/oracle/modern.mjs (values with bounds on the package's rounding error, the
// angle's error model included). Each entry has `requires(lab)`: entries whose exports the package
// lacks are left out of FUZZ_EXPORTS (with a warning), so the suite runs before and after they land.

const hasFunctions = (pkg) => typeof pkg.groupedQueryAttention === 'function' && typeof pkg.rotaryEmbedding === 'function';
const hasModernLayer = (pkg) => typeof pkg.MultiHeadAttention?.prototype?.createCache === 'function';

const MODERN_CONFIG_KEYS = { ...CONFIG_KEYS, numKVHeads: 'count', rope: 'flag' };
const MODERN_FORWARD_OPTIONS = { ...FORWARD_OPTIONS, window: 'count' };

/** h = h_kv·g query heads of d columns (d even with rope), occasionally larger. */
function modernShape(r, rope) {
  const kv = r.weighted([[4, () => r.int(1, 2)], [1, () => r.int(3, 4)]])();
  const h = kv * r.weighted([[4, () => r.int(1, 2)], [1, () => r.int(3, 4)]])();
  const d = rope ? 2 * r.weighted([[4, () => r.int(1, 2)], [1, () => r.int(3, 4)]])() : r.weighted([[4, () => r.int(1, 3)], [1, () => r.int(4, 6)]])();
  return { kv, h, d, C: h * d, kvC: kv * d };
}

/** A layer config with numKVHeads (omitted now and then when it equals numHeads) and rope. */
function modernConfig(r, { C, h, kv }, rope) {
  const config = layerConfig(r, { C, h });
  if (kv !== h || r.bool(0.7)) config.numKVHeads = kv;
  if (rope) config.rope = r.weighted([[2, () => true], [1, () => ({})], [2, () => ({ base: r.pick([10000, 500000, 100, 2]) })]])();
  else if (r.bool(0.2)) config.rope = false;
  return config;
}

/** A weight update of the right shapes (W_K, W_V: C×kvC; b_K, b_V: kvC entries). */
function modernUpdate(r, { C, kvC }, config, odd) {
  const update = {};
  const dims = { W_Q: [C, C], W_K: [C, kvC], W_V: [C, kvC], W_O: [C, C] };
  for (const [name, [rows, cols]] of Object.entries(dims)) if (r.bool(0.6)) update[name] = G.matrix(r, rows, cols, odd / 4);
  if (config.bias !== false) for (const [name, n] of [['b_Q', C], ['b_K', kvC], ['b_V', kvC], ['b_O', C]]) if (r.bool(0.7)) update[name] = vector(r, n, odd / 4);
  return update;
}

/** As layerInputs, with T_k ≥ T_q under rope (the layer refuses T_q > T_k there) and sometimes a window. */
function modernInputs(r, C, odd, rope) {
  const tq = G.size(r);
  const cross = r.bool(0.4);
  const tk = cross ? (rope ? tq + r.int(0, 4) : G.size(r)) : tq;
  const batch = r.bool(0.3) ? r.int(1, 3) : 0;
  const one = (t) => G.matrix(r, t, C, odd);
  const make = (t) => (batch ? Array.from({ length: batch }, () => one(t)) : one(t));
  const query = make(tq);
  let key = null;
  let value = null;
  if (cross) {
    key = make(tk);
    value = make(tk);
  } else if (r.bool(0.3)) {
    key = r.pick([undefined, null]);
  }
  const options = r.weighted([[1, () => undefined], [4, () => ({})]])();
  if (options) {
    if (r.bool(0.5)) options.causal = r.bool(0.8);
    if (r.bool(0.5)) options.window = r.int(1, 6);
    if (r.bool(0.2)) options.mask = G.mask(r, tq, tk);
    if (r.bool(0.3)) {
      options.needWeights = true;
      if (r.bool(0.5)) options.averageWeights = true;
    }
    if (r.bool(0.3)) options.training = true;
  }
  return { query, key, value, options, gradOutput: make(tq) };
}


/** The package's layer from `config`, with `update` set (freed if setWeights throws). */
function buildModern(pkg, config, update) {
  const layer = new pkg.MultiHeadAttention(config);
  try {
    layer.setWeights(update);
  } catch (e) {
    layer.free();
    throw e;
  }
  return layer;
}

/** The chunks of a decoding case: a[2], a[3], a[4]; the window (never mutated) is a[5]. */
const decodeOptions = (cache, window) => (window === undefined ? { cache, causal: true } : { cache, causal: true, window });

export const MODERN_EXPORTS = [
  {
    name: 'groupedQueryAttention',
    requires: hasFunctions,
    matrixArgs: [0, 1, 2],
    optionsArg: 3,
    options: { numberOfHeads: 'count', numberOfKVHeads: 'count', headDimensions: 'count', W_O: 'matrix', causal: 'flag', mask: 'mask', window: 'count' },
    valid(r) {
      const { kv, h, d, C, kvC } = modernShape(r, false);
      const tk = G.size(r);
      const tq = r.bool(0.5) ? tk : G.size(r);
      const odd = r.pick([0, 0.02, 0.2]);
      const options = { numberOfHeads: h, numberOfKVHeads: kv, headDimensions: d };
      if (r.bool(0.5)) options.causal = r.bool(0.8);
      if (r.bool(0.4)) options.window = r.int(1, 6);
      if (r.bool(0.25)) options.mask = G.mask(r, tq, tk);
      if (r.bool(0.3)) options.W_O = G.matrix(r, C, C, odd / 4);
      return [G.matrix(r, tq, C, odd), G.matrix(r, tk, kvC, odd), G.matrix(r, tk, kvC, odd), options];
    },
    call: (pkg, a) => pkg.groupedQueryAttention(...a),
    reference: (a) => MR.groupedQueryAttention(a[0], a[1], a[2], a[3]),
    compare: compareMatrix,
  },
  {
    name: 'rotaryEmbedding',
    requires: hasFunctions,
    matrixArgs: [0],
    optionsArg: 1,
    options: { numberOfHeads: 'count', headDimensions: 'count', base: 'probability', offset: 'count' },
    valid(r) {
      const { h, d, C } = modernShape(r, true);
      const odd = r.pick([0, 0.02, 0.2]);
      const options = { numberOfHeads: h, headDimensions: d };
      if (r.bool(0.4)) options.base = r.pick([10000, 500000, 100, 2, 0.5]);
      if (r.bool(0.5)) options.offset = r.weighted([[3, () => r.int(0, 64)], [1, () => r.int(0, 1e6)]])();
      return [G.matrix(r, G.size(r), C, odd), options];
    },
    call: (pkg, a) => pkg.rotaryEmbedding(...a),
    reference: (a) => MR.rotaryEmbedding(a[0], a[1]),
    compare: compareMatrix,
  },
  {
    name: 'MultiHeadAttention numKVHeads/rope/window: setWeights + forward + backward + grads',
    requires: hasModernLayer,
    matrixArgs: [2, 3, 4, 6],
    objects: { 0: MODERN_CONFIG_KEYS, 1: WEIGHT_KEYS, 5: MODERN_FORWARD_OPTIONS },
    valid(r) {
      const rope = r.bool(0.6);
      const shape = modernShape(r, rope);
      const odd = r.pick([0, 0.02, 0.2]);
      const config = modernConfig(r, shape, rope);
      const update = modernUpdate(r, shape, config, odd);
      const { query, key, value, options, gradOutput } = modernInputs(r, shape.C, odd, rope);
      return [config, update, query, key, value, options, gradOutput];
    },
    call: (pkg, a) => withLayer(() => buildModern(pkg, a[0], a[1]), (layer) => {
      const forward = layer.forward(a[2], a[3], a[4], a[5]);
      const backward = layer.backward(a[6]);
      return { forward, backward, grads: layer.grads(), weights: layer.getWeights(), sizes: [layer.embedDim, layer.numHeads, layer.numKVHeads, layer.headDim, layer.numParameters] };
    }),
    reference(a) {
      const L = MR.setWeights(MR.construct(a[0]), a[1]);
      const F = MR.forward(L, a[2], a[3], a[4], a[5]);
      return withBackward(L, F, a[6], MR);
    },
    compare(actual, { L, F, Bk }) {
      const sizes = [L.C, L.h, L.kv, L.d, MR.numParameters(L)];
      if (JSON.stringify(actual.sizes) !== JSON.stringify(sizes)) return `embedDim/numHeads/numKVHeads/headDim/numParameters are ${actual.sizes}, expected ${sizes}`;
      return compareParameters(actual.weights, L, MR) ?? compareForward(actual.forward, F) ?? compareBackward(actual.backward, actual.grads, Bk);
    },
  },
  {
    name: 'MultiHeadAttention KV-cache decoding (three chunks, causal, window)',
    requires: hasModernLayer,
    matrixArgs: [2, 3, 4],
    objects: { 0: MODERN_CONFIG_KEYS, 1: WEIGHT_KEYS },
    valid(r) {
      const rope = r.bool(0.7);
      const shape = modernShape(r, rope);
      const odd = r.pick([0, 0.02, 0.2]);
      const config = modernConfig(r, shape, rope);
      const update = modernUpdate(r, shape, config, odd);
      const batch = r.bool(0.3) ? r.int(1, 3) : 0;
      const chunk = () => {
        const t = r.weighted([[4, () => r.int(1, 3)], [1, () => r.int(4, 8)]])();
        return batch ? Array.from({ length: batch }, () => G.matrix(r, t, shape.C, odd)) : G.matrix(r, t, shape.C, odd);
      };
      return [config, update, chunk(), chunk(), chunk(), r.bool(0.5) ? r.int(1, 6) : undefined];
    },
    call: (pkg, a) => withLayer(() => buildModern(pkg, a[0], a[1]), (layer) => {
      const cache = layer.createCache();
      let result;
      try {
        const outputs = [a[2], a[3], a[4]].map((x) => layer.forward(x, undefined, undefined, decodeOptions(cache, a[5])));
        result = { outputs, length: cache.length };
      } catch (e) {
        try {
          cache.free();
        } catch {
          // the error below is the finding
        }
        throw e;
      }
      cache.free();
      return result;
    }),
    reference(a) {
      const L = MR.setWeights(MR.construct(a[0]), a[1]);
      const cache = MR.createCache(L);
      const outputs = [];
      for (const x of [a[2], a[3], a[4]]) {
        try {
          outputs.push(MR.forward(L, x, undefined, undefined, decodeOptions(cache, a[5])));
        } catch (e) {
          // a refused chunk after one near overflow: the package may refuse that one first (as withBackward)
          if (!outputs.some((F) => F.near)) throw e;
          return { outputs, nearOverflow: true, refusedLater: e instanceof Invalid ? e.kind : 'TypeError' };
        }
      }
      return { outputs, length: cache.length, nearOverflow: outputs.some((F) => F.near) };
    },
    compare(actual, { outputs, length }) {
      if (actual.length !== length) return `cache.length is ${actual.length} after the three chunks, expected ${length}`;
      for (let i = 0; i < outputs.length; i += 1) {
        const bad = compareForward(actual.outputs[i], outputs[i]);
        if (bad) return `chunk ${i}: ${bad}`;
      }
      return null;
    },
  },
  {
    name: 'traceGroupedQueryAttention',
    requires: (pkg) => typeof pkg.traceGroupedQueryAttention === 'function',
    matrixArgs: [0, 1, 2],
    optionsArg: 3,
    options: { numberOfHeads: 'count', numberOfKVHeads: 'count', headDimensions: 'count', W_O: 'matrix', causal: 'flag', mask: 'mask', window: 'count', rope: 'flag' },
    valid(r) {
      const rope = r.bool(0.7);
      const { kv, h, d, C, kvC } = modernShape(r, rope);
      const tk = G.size(r);
      const tq = rope ? r.int(1, tk) : G.size(r);
      const odd = r.pick([0, 0.02, 0.2]);
      const options = { numberOfHeads: h, numberOfKVHeads: kv, headDimensions: d };
      if (r.bool(0.5)) options.causal = r.bool(0.8);
      if (r.bool(0.4)) options.window = r.int(1, 6);
      if (r.bool(0.25)) options.mask = G.mask(r, tq, tk);
      if (r.bool(0.3)) options.W_O = G.matrix(r, C, C, odd / 4);
      if (rope) options.rope = r.weighted([[2, () => true], [3, () => ({ base: r.pick([10000, 100, 2]), offset: r.int(0, 40) })]])();
      return [G.matrix(r, tq, C, odd), G.matrix(r, tk, kvC, odd), G.matrix(r, tk, kvC, odd), options];
    },
    call: (pkg, a) => pkg.traceGroupedQueryAttention(...a).output,
    reference: (a) => MR.traceGroupedQueryAttention(a[0], a[1], a[2], a[3]),
    compare: compareMatrix,
  },
];

// Issue 13 has landed: an entry whose export is missing is an error, never left out quietly.
const modernMissing = MODERN_EXPORTS.filter((spec) => !spec.requires(lab));
if (modernMissing.length > 0) throw new Error(`fuzz: the package lacks the exports of ${modernMissing.map((spec) => spec.name).join('; ')}`);

/**
 * Issue 15's exports, in the build the fuzzer loads (the default, single-threaded one): initThreadPool
 * checks its argument (a TypeError for a non-number, a RangeError outside the integers 1..64) and
 * returns a Promise (of 1); threadsInfo says 1 thread and no threads build. The threads build's
 * pool is tested in tests/package/threads.test.mjs (a pool starts once per process).
 */
export { MODEL_EXPORTS };
export const THREAD_EXPORTS = [
  {
    name: 'initThreadPool + threadsInfo',
    requires: (pkg) => typeof pkg.initThreadPool === 'function' && typeof pkg.threadsInfo === 'function',
    matrixArgs: [],
    countArgs: [0],
    valid: (r) => (r.bool(0.3) ? [] : [r.int(1, 64)]),
    call(pkg, a) {
      const promise = pkg.initThreadPool(...a);
      const { threads, threadsBuild, reason } = pkg.threadsInfo();
      return { promise: promise instanceof Promise, threads, threadsBuild, reason: typeof reason };
    },
    reference(a) {
      const t = a[0];
      if (t !== undefined && typeof t !== 'number') throw new Invalid('TypeError', 'threads is not a number');
      if (t !== undefined && !(Number.isInteger(t) && t >= 1 && t <= 64)) throw new Invalid('RangeError', 'threads is not an integer from 1 to 64');
      return { promise: true, threads: 1, threadsBuild: false, reason: 'string' };
    },
    compare: (actual, ref) => (['promise', 'threads', 'threadsBuild', 'reason'].every((k) => actual[k] === ref[k]) ? null : `got ${JSON.stringify(actual)}, expected ${JSON.stringify(ref)}`),
  },
];
if (!THREAD_EXPORTS[0].requires(lab)) throw new Error('fuzz: the package lacks initThreadPool or threadsInfo');

/**
 * Every export the fuzzer drives: the functions, the layer, typed input, linear, projectedSelfAttention,
 * the layer's typed forms and projectedSelfAttention's, then issue 13's, issue 15's and issue 21's
 * (the Transformer and repeatedTokens, tests/fuzz/transformer.mjs). Case i
 * runs table[i % table.length], so a longer table runs other entries at old indices: a replay of a
 * failure found with the shorter table passes that table to runCase (as fuzz.test.mjs does with EXPORTS).
 */
export const FUZZ_EXPORTS = [...EXPORTS, ...LAYER_EXPORTS, ...TYPED_EXPORTS, ...TYPED_LAYER_EXPORTS, ...PROJECTED_TYPED_EXPORTS, ...MODERN_EXPORTS, ...THREAD_EXPORTS, ...MODEL_EXPORTS];
