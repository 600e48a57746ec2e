// The MultiHeadAttention layer on typed arrays: { data: Float32Array | Float64Array, shape }.
// Float64Array must give exactly the number[][] bits (forward, weights, backward); Float32Array is
// computed in f32 and must agree to 1e-4 and keep memory bounded; in training it runs the same f32 kernels
// (the f64 path's dropout entries) and backward differentiates it in f32 (the entry-by-entry bound of
// docs/api.md is checked in src/layer/backward_f32.rs and, on fuzzed cases, against the oracle).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import lab, { wasmMemoryBytes } from './support/lab.mjs';
import { seeded } from './support/mulberry32.mjs';

const { MultiHeadAttention } = lab;

const rows = (flat, t, c) => Array.from({ length: t }, (_, i) => Array.from(flat.subarray(i * c, (i + 1) * c)));
const batchRows = (flat, b, t, c) => Array.from({ length: b }, (_, i) => rows(flat.subarray(i * t * c, (i + 1) * t * c), t, c));
const flatten = (nested) => Float64Array.from(nested.flat(Infinity));

/** A layer with non-zero biases (the initial ones are zero, which would hide bias mistakes). */
function layer(c, h, seed, config = {}) {
  const l = new MultiHeadAttention({ embedDim: c, numHeads: h, seed, ...config });
  if (config.bias !== false) {
    const b = (i) => Array.from(seeded(c, seed + 40 + i));
    l.setWeights({ b_Q: b(0), b_K: b(1), b_V: b(2), b_O: b(3) });
  }
  return l;
}

function assertSameBits(got, want, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < want.length; i++) {
    if (!Object.is(got[i], want[i])) assert.fail(`${what}[${i}]: ${got[i]} vs ${want[i]}`);
  }
}

function assertNear(got, want, tolerance, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
  assert.ok(worst <= tolerance, `${what}: max |Δ| = ${worst} > ${tolerance}`);
}

test('Float64Array forward and backward give exactly the number[][] bits, batched and not', () => {
  const [c, h, tq, tk, b] = [12, 3, 7, 9, 2];
  const [xq, xk, xv] = [seeded(b * tq * c, 1), seeded(b * tk * c, 2), seeded(b * tk * c, 3)];
  const mask = Array.from({ length: tq }, (_, i) => Array.from({ length: tk }, (_, j) => (i * 7 + j * 3) % 5 !== 0));
  for (const options of [{}, { causal: true, needWeights: true }, { mask, needWeights: true, averageWeights: true }]) {
    // unbatched [T, C], cross-attention
    const [q1, k1, v1] = [xq.subarray(0, tq * c), xk.subarray(0, tk * c), xv.subarray(0, tk * c)];
    const nested = layer(c, h, 5).forward(rows(q1, tq, c), rows(k1, tk, c), rows(v1, tk, c), options);
    const typed = layer(c, h, 5).forward({ data: q1, shape: [tq, c] }, { data: k1, shape: [tk, c] }, { data: v1, shape: [tk, c] }, options);
    assert.ok(typed.output.data instanceof Float64Array);
    assert.deepEqual(typed.output.shape, [tq, c]);
    assertSameBits(typed.output.data, flatten(nested.output), 'output');
    if (options.needWeights) {
      assert.deepEqual(typed.weights.shape, options.averageWeights ? [tq, tk] : [h, tq, tk]);
      assertSameBits(typed.weights.data, flatten(nested.weights), 'weights');
    } else {
      assert.equal(typed.weights, undefined);
    }
    // batched [B, T, C]
    const nestedBatch = layer(c, h, 5).forward(batchRows(xq, b, tq, c), batchRows(xk, b, tk, c), batchRows(xv, b, tk, c), options);
    const typedBatch = layer(c, h, 5).forward({ data: xq, shape: [b, tq, c] }, { data: xk, shape: [b, tk, c] }, { data: xv, shape: [b, tk, c] }, options);
    assert.deepEqual(typedBatch.output.shape, [b, tq, c]);
    assertSameBits(typedBatch.output.data, flatten(nestedBatch.output), 'batched output');
    if (options.needWeights) {
      assert.deepEqual(typedBatch.weights.shape, options.averageWeights ? [b, tq, tk] : [b, h, tq, tk]);
      assertSameBits(typedBatch.weights.data, flatten(nestedBatch.weights), 'batched weights');
    }
  }
  // backward: gradients and parameter gradients, bit for bit
  const grad = seeded(b * tq * c, 9);
  const [a, t] = [layer(c, h, 5), layer(c, h, 5)];
  a.forward(batchRows(xq, b, tq, c), batchRows(xk, b, tk, c), batchRows(xv, b, tk, c));
  t.forward({ data: xq, shape: [b, tq, c] }, { data: xk, shape: [b, tk, c] }, { data: xv, shape: [b, tk, c] });
  const want = a.backward(batchRows(grad, b, tq, c));
  const got = t.backward({ data: grad, shape: [b, tq, c] });
  for (const key of ['query', 'key', 'value']) {
    assert.ok(got[key].data instanceof Float64Array);
    assert.deepEqual(got[key].shape, [b, key === 'query' ? tq : tk, c]);
    assertSameBits(got[key].data, flatten(want[key]), `d ${key}`);
  }
  const [gw, gt] = [a.grads(), t.grads()];
  for (const key of Object.keys(gw)) assertSameBits(flatten(gt[key]), flatten(gw[key]), `grads ${key}`);
});

test('Float32Array forward agrees with the f64 layer to 1e-4, across blocks, masks, batches and weights', () => {
  const [c, h, tq, tk, b] = [24, 4, 70, 90, 2]; // 70 query rows: two blocks of 64
  const [xq, xk, xv] = [seeded(b * tq * c, 11), seeded(b * tk * c, 12), seeded(b * tk * c, 13)];
  const l = layer(c, h, 3);
  const f32 = (x, t) => ({ data: Float32Array.from(x), shape: [b, t, c] });
  for (const options of [{}, { causal: true }, { causal: true, needWeights: true }, { needWeights: true, averageWeights: true }]) {
    const want = l.forward(batchRows(xq, b, tq, c), batchRows(xk, b, tk, c), batchRows(xv, b, tk, c), options);
    const got = l.forward(f32(xq, tq), f32(xk, tk), f32(xv, tk), options);
    assert.ok(got.output.data instanceof Float32Array);
    assert.deepEqual(got.output.shape, [b, tq, c]);
    assertNear(got.output.data, flatten(want.output), 1e-4, `output ${JSON.stringify(options)}`);
    if (options.needWeights) {
      assert.ok(got.weights.data instanceof Float32Array);
      assertNear(got.weights.data, flatten(want.weights), 1e-5, 'weights');
    }
  }
  // self-attention with key and value defaulted, unbatched
  const x = xq.subarray(0, tq * c);
  const want = l.forward(rows(x, tq, c)).output;
  assertNear(l.forward({ data: Float32Array.from(x), shape: [tq, c] }).output.data, flatten(want), 1e-4, 'self-attention');
  // setWeights: the next f32 forward uses the new weights
  const W_O = rows(seeded(c * c, 77), c, c);
  l.setWeights({ W_O });
  assertNear(l.forward({ data: Float32Array.from(x), shape: [tq, c] }).output.data, flatten(l.forward(rows(x, tq, c)).output), 1e-4, 'after setWeights');
});

test('backward after an evaluation-mode Float32Array forward is an Error naming training: true', () => {
  const l = layer(4, 2, 1);
  const x = { data: Float32Array.from(seeded(12, 4)), shape: [3, 4] };
  l.forward(x);
  assert.throws(() => l.backward(rows(seeded(12, 5), 3, 4)), (e) => e.constructor === Error && /^backward cannot differentiate a Float32Array forward in evaluation mode .*\{ training: true \}/.test(e.message));
  assert.throws(() => l.backward({ data: new Float32Array(12), shape: [3, 4] }), (e) => e.constructor === Error && /Float32Array forward/.test(e.message));
  // an f64 forward makes backward work again, with gradients of either precision
  l.forward({ data: seeded(12, 4), shape: [3, 4] });
  assert.ok(l.backward({ data: new Float32Array(12), shape: [3, 4] }).query.data instanceof Float32Array);
  assert.deepEqual(l.backward({ data: seeded(12, 5), shape: [3, 4] }).query.shape, [3, 4]);
});

test('training on Float32Array runs in f32: the evaluation output, the f64 path\'s dropout, an f32 backward and f32 grads()', () => {
  const [c, h, tq, tk, b] = [8, 2, 70, 75, 2];
  // f32 values, and the very same numbers as number[][]; T_q = 70 crosses a 64-row block
  const [xq, xk, xv, g] = [[b * tq * c, 21], [b * tk * c, 22], [b * tk * c, 23], [b * tq * c, 24]].map(([n, s]) => Float32Array.from(seeded(n, s)));
  const typed = (x, t) => ({ data: x, shape: [b, t, c] });
  const options = { training: true, needWeights: true, causal: true };
  // without dropout the training forward is the evaluation forward, bit for bit
  const plain = layer(c, h, 5);
  const evaluation = plain.forward(typed(xq, tq), typed(xk, tk), typed(xv, tk), { needWeights: true, causal: true });
  const training = plain.forward(typed(xq, tq), typed(xk, tk), typed(xv, tk), options);
  assertSameBits(training.output.data, evaluation.output.data, 'output without dropout');
  assertSameBits(training.weights.data, evaluation.weights.data, 'weights without dropout');
  // with dropout: the entries the f64 path drops for the same seed
  const config = { dropout: 0.25, seed: 9 };
  const [f64, f32] = [layer(c, h, 5, config), layer(c, h, 5, config)];
  const want = f64.forward(batchRows(xq, b, tq, c), batchRows(xk, b, tk, c), batchRows(xv, b, tk, c), options);
  const got = f32.forward(typed(xq, tq), typed(xk, tk), typed(xv, tk), options);
  assert.ok(got.output.data instanceof Float32Array);
  const wantWeights = flatten(want.weights);
  let dropped = 0;
  for (let i = 0; i < wantWeights.length; i++) {
    const causallyHidden = i % tk > Math.floor(i / tk) % tq + (tk - tq);
    if (!causallyHidden && wantWeights[i] === 0) dropped += 1;
    assert.equal(got.weights.data[i] === 0, wantWeights[i] === 0, `weight ${i}: dropped in one path only`);
  }
  assert.ok(dropped > 0, 'the dropout dropped nothing: the check would be blind');
  assertNear(got.output.data, flatten(want.output), 1e-4, 'output with dropout');
  // backward in f32 after it; then in f64 (Float64Array and number[][] gradOutput): the f64 derivative of the same
  // f32 forward, which the f32 gradients approach to f32 rounding
  const gotGrads = f32.backward(typed(g, tq));
  const gotParams = f32.grads();
  for (const key of Object.keys(gotParams)) {
    for (const x of flatten(gotParams[key])) assert.equal(Math.fround(x), x, `grads().${key} holds f32 values`);
  }
  const exact = f32.backward({ data: Float64Array.from(g), shape: [b, tq, c] });
  const exactNested = f32.backward(batchRows(g, b, tq, c));
  const exactParams = f32.grads();
  for (const key of ['query', 'key', 'value']) {
    assert.ok(gotGrads[key].data instanceof Float32Array && exact[key].data instanceof Float64Array);
    assert.deepEqual(gotGrads[key].shape, [b, key === 'query' ? tq : tk, c]);
    assertSameBits(exact[key].data, flatten(exactNested[key]), `d ${key}: Float64Array and number[][] gradOutput`);
    const scale = Math.max(...exact[key].data.map(Math.abs));
    assertNear(gotGrads[key].data, exact[key].data, 1e-5 * scale, `d ${key}`);
  }
  // (not b_K: its exact gradient is 0, by the softmax's invariance to a shift of a row of scores, and its
  // f32 value is rounding noise, bounded relative to the magnitudes m as checked in src/layer/backward_f32.rs)
  for (const key of Object.keys(exactParams).filter((k) => k !== 'b_K')) {
    const [gotFlat, wantFlat] = [flatten(gotParams[key]), flatten(exactParams[key])];
    assertNear(gotFlat, wantFlat, 1e-5 * Math.max(...wantFlat.map(Math.abs)), `grads().${key}`);
  }
  // and against the f64 step on the same numbers (the forward in f64 too): f32 rounding through the softmax
  const wantGrads = f64.backward(batchRows(g, b, tq, c));
  assertNear(gotGrads.query.data, flatten(wantGrads.query), 1e-3 * Math.max(...flatten(wantGrads.query).map(Math.abs)), 'd query vs the f64 step');
});

test('a Float32Array training forward or backward beyond the largest f32 is a RangeError naming the value, and the layer keeps working', () => {
  const l = layer(4, 2, 1);
  const huge = { data: new Float32Array(12).fill(3e38), shape: [3, 4] };
  assert.throws(() => l.forward(huge, null, null, { training: true }), { name: 'RangeError', message: /^[QKV]\[\d+\]\[\d+\] overflows to -?Infinity in f32: (query|key|value)·W_[QKV] \+ b_[QKV] is beyond the largest f32/ });
  const x = { data: Float32Array.from(seeded(12, 3)), shape: [3, 4] };
  assert.deepEqual(l.forward(x, null, null, { training: true }).output.shape, [3, 4]);
  // gradOutput·W_Oᵀ past f32 (finite in f64): named, no gradients stored, and f64 gradOutput still works
  l.setWeights({ W_O: [[1e30, 1e30, 1e30, 1e30], [1e30, 1e30, 1e30, 1e30], [1e30, 1e30, 1e30, 1e30], [1e30, 1e30, 1e30, 1e30]] });
  l.forward(x, null, null, { training: true });
  const big = { data: new Float32Array(12).fill(1e10), shape: [3, 4] };
  assert.throws(() => l.backward(big), { name: 'RangeError', message: /^d_concat\[0\]\[0\] overflows to Infinity in f32: this gradient/ });
  assert.throws(() => l.grads(), (e) => e.constructor === Error);
  assert.deepEqual(l.backward({ data: Float64Array.from(big.data), shape: [3, 4] }).query.shape, [3, 4]);
});

test('typed layer input errors name the argument and what was expected', () => {
  const l = layer(4, 2, 1, { dropout: 0.25 });
  const q32 = { data: new Float32Array(8), shape: [2, 4] };
  assert.throws(() => l.forward(q32, { data: new Float64Array(8), shape: [2, 4] }), {
    name: 'TypeError', message: 'key.data is a Float64Array but query.data is a Float32Array; pass query, key and value in the same precision',
  });
  assert.throws(() => l.forward(q32, [[1, 2, 3, 4]]), { name: 'TypeError', message: 'key is an array but query is { data: Float32Array, shape: [2, 4] }; pass query, key and value in the same form' });
  assert.throws(() => l.forward({ data: new Float32Array(6), shape: [2, 3] }), { name: 'RangeError', message: "query.shape is [2, 3] but the layer's embedDim is 4: query must be [T, 4]" });
  assert.throws(() => l.forward(q32, { data: new Float32Array(8), shape: [1, 2, 4] }), { name: 'RangeError', message: /^key.shape is \[1, 2, 4\] but query.shape is \[2, 4\]/ });
  assert.throws(() => l.forward({ data: new Float32Array(8), shape: [2, 5] }), { name: 'RangeError', message: 'query.data has 8 values but query.shape [2, 5] needs 10' });
  assert.throws(() => l.forward({ data: Float32Array.of(1, 2, NaN, 4, 5, 6, 7, 8), shape: [2, 4] }), { name: 'RangeError', message: /^query.data\[2\] \(query\[0\]\[2\]\) is NaN/ });
  assert.throws(() => l.forward(q32, null, null, { mask: [[true]] }), { name: 'RangeError' });
  assert.throws(() => l.forward(q32, null, null, { averageWeights: true }), { name: 'TypeError', message: /^options.averageWeights only applies/ });
  // f32 overflow is refused, not returned as Infinity or NaN
  assert.throws(() => l.forward({ data: new Float32Array(8).fill(3e38), shape: [2, 4] }), { name: 'RangeError', message: /overflows to .* in f32/ });
  // the layer keeps working
  assert.deepEqual(l.forward(q32).output.shape, [2, 4]);
});

test('a Float32Array forward without weights does not hold all heads\' T×T scores', () => {
  // h·T²·4 bytes = 16·2048²·4 = 256 MiB if all heads' scores were held at once
  const [t, c, h] = [2048, 64, 16];
  const l = layer(c, h, 2);
  const x = { data: Float32Array.from(seeded(t * c, 21)), shape: [t, c] };
  l.forward({ data: x.data.subarray(0, 64 * c), shape: [64, c] }); // packs the weights
  const before = wasmMemoryBytes();
  const out = l.forward(x, null, null, { causal: true });
  const grown = wasmMemoryBytes() - before;
  assert.deepEqual(out.output.shape, [t, c]);
  assert.ok(grown <= 16 * 2 ** 20, `wasm memory grew by ${(grown / 2 ** 20).toFixed(1)} MiB`);
  assert.ok(out.output.data.every(Number.isFinite));
});
