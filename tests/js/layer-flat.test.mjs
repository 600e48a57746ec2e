// The layer's parameters in the flat typed form (issue 33): getWeights({ dtype }), grads({ dtype }) and
// setWeights with Float32Array / Float64Array tensors, row-major. The flat values are the nested ones:
// float64 exactly, float32 each rounded once (Math.fround); after an f32 backward, grads({ dtype:
// 'float32' }) are the f32 gradients themselves. Before issue 33 all three spoke only number[][].
import { test } from 'node:test';
import assert from 'node:assert/strict';
import lab from './support/lab.mjs';
import { seeded } from './support/mulberry32.mjs';

const { MultiHeadAttention } = lab;

const KEYS = ['W_Q', 'W_K', 'W_V', 'W_O', 'b_Q', 'b_K', 'b_V', 'b_O'];
const flatten = (nested, Typed = Float64Array) => Typed.from([nested].flat(2));

function assertSameBits(got, want, what) {
  assert.equal(got.constructor, want.constructor, `${what}: ${got.constructor.name}, expected ${want.constructor.name}`);
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < want.length; i++) {
    if (!Object.is(got[i], want[i])) assert.fail(`${what}[${i}]: ${got[i]} vs ${want[i]}`);
  }
}

/** A layer whose biases are not zero (the initial ones are), and a forward and backward on it. */
function trained(config, typed) {
  const c = config.embedDim;
  const layer = new MultiHeadAttention({ seed: 7, ...config });
  const kv = (c / config.numHeads) * (config.numKVHeads ?? config.numHeads); // b_K and b_V: numKVHeads·headDim
  if (config.bias !== false) layer.setWeights(Object.fromEntries(['b_Q', 'b_K', 'b_V', 'b_O'].map((k, i) => [k, Array.from(seeded(k === 'b_K' || k === 'b_V' ? kv : c, 30 + i))])));
  const t = 5;
  if (typed) {
    const x = { data: Float32Array.from(seeded(t * c, 1)), shape: [t, c] };
    layer.forward(x, null, null, { training: true, causal: true });
    layer.backward({ data: Float32Array.from(seeded(t * c, 2)), shape: [t, c] });
  } else {
    const rows = (flat) => Array.from({ length: t }, (_, i) => Array.from(flat.subarray(i * c, (i + 1) * c)));
    layer.forward(rows(seeded(t * c, 1)), null, null, { causal: true });
    layer.backward(rows(seeded(t * c, 2)));
  }
  return layer;
}

test('getWeights({ dtype }) is getWeights() flat: float64 exactly, float32 rounded once; with and without biases, grouped K/V', () => {
  for (const config of [{ embedDim: 12, numHeads: 3 }, { embedDim: 8, numHeads: 4, bias: false }, { embedDim: 12, numHeads: 4, numKVHeads: 2 }]) {
    const layer = trained(config, false);
    const nested = layer.getWeights();
    for (const [dtype, Typed] of [['float64', Float64Array], ['float32', Float32Array]]) {
      const flat = layer.getWeights({ dtype });
      assert.deepEqual(Object.keys(flat), Object.keys(nested), `${dtype}: the same keys in the same order`);
      for (const key of Object.keys(nested)) assertSameBits(flat[key], flatten(nested[key], Typed), `${JSON.stringify(config)} getWeights({ dtype: '${dtype}' }).${key}`);
    }
    // no dtype (or no options): the nested form, as before
    assert.deepEqual(layer.getWeights({}), nested);
    assert.deepEqual(layer.getWeights(undefined), nested);
    layer.free();
  }
});

test('grads({ dtype }) is grads() flat; after an f32 backward, float32 gives the f32 gradients themselves', () => {
  for (const typed of [false, true]) {
    const layer = trained({ embedDim: 12, numHeads: 3 }, typed);
    const nested = layer.grads();
    assert.deepEqual(Object.keys(nested), KEYS);
    for (const [dtype, Typed] of [['float64', Float64Array], ['float32', Float32Array]]) {
      const flat = layer.grads({ dtype });
      assert.deepEqual(Object.keys(flat), KEYS);
      // after the f32 backward grads() widens f32 values exactly, so Float32Array.from gives them back unchanged
      for (const key of KEYS) assertSameBits(flat[key], flatten(nested[key], Typed), `grads({ dtype: '${dtype}' }).${key} after the ${typed ? 'f32' : 'f64'} backward`);
    }
    if (typed) {
      for (const key of KEYS) assert.ok(flatten(nested[key]).every((x) => Math.fround(x) === x), `${key}: the f32 backward's gradients are f32 values`);
    }
    layer.free();
  }
});

test('setWeights takes flat Float64Array / Float32Array tensors (row-major), mixed with nested ones', () => {
  const c = 8;
  const values = Object.fromEntries(KEYS.map((k, i) => [k, seeded(k.startsWith('W') ? c * c : c, 50 + i)]));
  const nested = Object.fromEntries(KEYS.map((k) => [k, k.startsWith('W') ? Array.from({ length: c }, (_, i) => Array.from(values[k].subarray(i * c, (i + 1) * c))) : Array.from(values[k])]));
  for (const Typed of [Float64Array, Float32Array]) {
    const a = new MultiHeadAttention({ embedDim: c, numHeads: 2 });
    const b = new MultiHeadAttention({ embedDim: c, numHeads: 2 });
    // a: W_Q and b_K flat, the rest nested; b: all nested, of the same (rounded, for f32) values
    a.setWeights({ ...nested, W_Q: Typed.from(values.W_Q), b_K: Typed.from(values.b_K) });
    const rounded = (k) => (Typed === Float32Array ? nested[k].map((x) => (Array.isArray(x) ? x.map(Math.fround) : Math.fround(x))) : nested[k]);
    b.setWeights({ ...nested, W_Q: rounded('W_Q'), b_K: rounded('b_K') });
    assert.deepEqual(a.getWeights(), b.getWeights(), `${Typed.name}: widened exactly`);
    const x = Array.from({ length: 3 }, (_, i) => Array.from(seeded(c, 70 + i)));
    assert.deepEqual(a.forward(x).output, b.forward(x).output);
    a.free();
    b.free();
  }
});

test('an SGD step through the flat form gives the bits of the same step through number[][]', () => {
  const config = { embedDim: 16, numHeads: 4 };
  const [viaNested, viaFlat] = [trained(config, false), trained(config, false)];
  const lr = 0.05;
  const w = viaNested.getWeights();
  const g = viaNested.grads();
  const step = (wv, gv) => (Array.isArray(wv) ? wv.map((x, i) => step(x, gv[i])) : wv - lr * gv);
  viaNested.setWeights(Object.fromEntries(Object.keys(w).map((k) => [k, step(w[k], g[k])])));
  const wf = viaFlat.getWeights({ dtype: 'float64' });
  const gf = viaFlat.grads({ dtype: 'float64' });
  for (const k of Object.keys(wf)) wf[k].forEach((x, i) => { wf[k][i] = x - lr * gf[k][i]; });
  viaFlat.setWeights(wf);
  assert.deepEqual(viaFlat.getWeights(), viaNested.getWeights());
  viaNested.free();
  viaFlat.free();
});

test('the flat forms refuse bad input with a TypeError or RangeError naming it', () => {
  const layer = new MultiHeadAttention({ embedDim: 4, numHeads: 2 });
  assert.throws(() => layer.grads({ dtype: 'float32' }), (e) => e.constructor === Error && /grads\(\) has nothing to return yet/.test(e.message));
  assert.throws(() => layer.getWeights({ dtype: 'float16' }), { name: 'TypeError', message: "options.dtype is a string; expected 'float32' or 'float64'" });
  assert.throws(() => layer.getWeights({ dtyp: 'float32' }), (e) => e instanceof TypeError && /options\.dtyp/.test(e.message) && /dtype/.test(e.message));
  assert.throws(() => layer.grads({ dtype: 64 }), { name: 'TypeError', message: "options.dtype is the number 64; expected 'float32' or 'float64'" });
  assert.throws(() => layer.setWeights({ W_Q: new Float64Array(15) }), { name: 'RangeError', message: 'weights.W_Q has 15 entries; expected 16' });
  assert.throws(() => layer.setWeights({ b_O: new Float32Array([0, 1, NaN, 2]) }), { name: 'RangeError', message: 'weights.b_O entry 2 is NaN; expected a finite number' });
  const noBias = new MultiHeadAttention({ embedDim: 4, numHeads: 2, bias: false });
  assert.throws(() => noBias.setWeights({ b_Q: new Float64Array(4) }), (e) => e instanceof TypeError && /weights\.b_Q: this layer has no biases/.test(e.message));
  // a weight beyond the largest f32 cannot be read as float32
  layer.setWeights({ W_V: [[1e300, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]] });
  assert.throws(() => layer.getWeights({ dtype: 'float32' }), { name: 'RangeError', message: "getWeights().W_V entry 0 is beyond the largest f32 (about 3.4e38): read it with dtype 'float64'" });
  assert.equal(layer.getWeights({ dtype: 'float64' }).W_V[0], 1e300);
  layer.free();
  noBias.free();
});
