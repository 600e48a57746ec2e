// Self-tests of tests/oracle/modern.mjs, the independent reference for issue 13 (RoPE, grouped-query
// attention, windows, the bottom-right causal alignment, the KV cache and the layer's backward). They
// need no build: the oracle is checked against the math (RoPE's invariants, known values, finite
// differences), against the other oracles (reference.mjs's multiHeadAttention, layer.mjs's layer and
// seeded init), and against deliberately wrong variants, which it must tell apart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as M from '../oracle/modern.mjs';
import * as R from '../oracle/reference.mjs';
import * as LR from '../oracle/layer.mjs';
import { Invalid } from '../oracle/reference.mjs';
import { rng, caseSeed } from '../fuzz/generate.mjs';

const BOUND = 1e-12;
const matrix = (r, rows, cols, scale = 2) => Array.from({ length: rows }, () => Array.from({ length: cols }, () => r.uniform(-scale, scale)));
const vector = (r, n, scale = 1) => Array.from({ length: n }, () => r.uniform(-scale, scale));
const positionsFrom = (p0, T) => Array.from({ length: T }, (_, t) => p0 + t);
/** Columns of head i (width d). */
const headCols = (X, i, d) => X.map((row) => row.slice(i * d, (i + 1) * d));
/** K or V with each KV head repeated g times (repeat_interleave), or tiled (head i reads i mod kv: the wrong mapping). */
const repeatHeads = (X, kv, d, g, tiled = false) =>
  X.map((row) => Array.from({ length: kv * g }, (_, i) => (tiled ? i % kv : Math.floor(i / g))).flatMap((k) => row.slice(k * d, (k + 1) * d)));
const dot = (a, b) => R.sum(a.map((x, i) => x * b[i]));

/** Asserts `fn` throws an oracle Invalid of `kind` whose message matches `pattern`. */
function refuses(fn, kind, pattern) {
  assert.throws(fn, (e) => e instanceof Invalid && e.kind === kind && pattern.test(e.message), `expected ${kind} matching ${pattern}`);
}

// ---- RoPE ----------------------------------------------------------------------------------------

/** Interleaved RoPE (GPT-J / Meta's original complex form): pairs (x[2i], x[2i+1]). A layout the oracle must NOT use. */
function interleaved(X, positions, h, d, base = 10000) {
  return X.map((row, t) => {
    const out = row.slice();
    for (let k = 0; k < h; k += 1) {
      for (let i = 0; i < d / 2; i += 1) {
        const theta = positions[t] * base ** ((-2 * i) / d);
        const [a, b] = [row[k * d + 2 * i], row[k * d + 2 * i + 1]];
        out[k * d + 2 * i] = a * Math.cos(theta) - b * Math.sin(theta);
        out[k * d + 2 * i + 1] = b * Math.cos(theta) + a * Math.sin(theta);
      }
    }
    return out;
  });
}

test('RoPE: position 0 is the identity, bit for bit (rotate and rotaryEmbedding)', () => {
  for (let c = 0; c < 50; c += 1) {
    const r = rng(caseSeed(1, c));
    const [h, d] = [r.int(1, 4), 2 * r.int(1, 4)];
    const X = matrix(r, r.int(1, 5), h * d, 10);
    const zero = M.rotate(X, X.map(() => 0), { numberOfHeads: h, headDimensions: d, base: r.pick([10000, 500000, 2]) });
    assert.ok(zero.every((row, t) => row.every((x, j) => x === X[t][j])), `case ${c}`);
    const first = M.rotaryEmbedding([X[0]], { numberOfHeads: h, headDimensions: d }).value;
    assert.deepEqual(first, [X[0]]);
  }
});

test('RoPE: known values of the rotate-half layout (pair (x[i], x[i+d/2]), angle p·base^(−2i/d))', () => {
  const options = { numberOfHeads: 1, headDimensions: 4 };
  // p = 1, d = 4: θ_0 = 1, θ_1 = 10000^(−1/2) = 0.01
  const e = (k) => [[0, 1, 2, 3].map((j) => (j === k ? 1 : 0))];
  const [c1, s1, c2, s2] = [Math.cos(1), Math.sin(1), Math.cos(0.01), Math.sin(0.01)];
  const close = (got, want) => assert.ok(M.maxRelErr(got, want) <= 1e-15, `${JSON.stringify(got)} ≠ ${JSON.stringify(want)}`);
  close(M.rotaryEmbedding(e(0), { ...options, offset: 1 }).value, [[c1, 0, s1, 0]]);
  close(M.rotaryEmbedding(e(2), { ...options, offset: 1 }).value, [[-s1, 0, c1, 0]]);
  close(M.rotaryEmbedding(e(1), { ...options, offset: 1 }).value, [[0, c2, 0, s2]]);
  close(M.rotaryEmbedding(e(3), { ...options, offset: 1 }).value, [[0, -s2, 0, c2]]);
  assert.equal(Math.cos(1), 0.5403023058681398);
  assert.equal(Math.sin(1), 0.8414709848078965);
  // row t is at offset + t; two heads are rotated alike
  const X = [[1, 0, 0, 0, 1, 0, 0, 0], [1, 0, 0, 0, 1, 0, 0, 0]];
  const out = M.rotaryEmbedding(X, { numberOfHeads: 2, headDimensions: 4, offset: 2, base: 100 }).value;
  const [c, s] = [Math.cos(3), Math.sin(3)];
  close(out[1], [c, 0, s, 0, c, 0, s, 0]);
  close([out[1][1]], [0]);
});

test('RoPE preserves each pair\'s norm and is undone by the inverse rotation', () => {
  for (let c = 0; c < 100; c += 1) {
    const r = rng(caseSeed(2, c));
    const [h, d, T] = [r.int(1, 3), 2 * r.int(1, 4), r.int(1, 6)];
    const X = matrix(r, T, h * d, 5);
    const positions = X.map(() => r.int(0, 5000));
    const options = { numberOfHeads: h, headDimensions: d, base: r.pick([10000, 1e6, 3]) };
    const Y = M.rotate(X, positions, options);
    for (let t = 0; t < T; t += 1) {
      for (let k = 0; k < h; k += 1) {
        for (let i = 0; i < d / 2; i += 1) {
          const [a, b] = [k * d + i, k * d + i + d / 2];
          const before = Math.hypot(X[t][a], X[t][b]);
          assert.ok(Math.abs(Math.hypot(Y[t][a], Y[t][b]) - before) <= 1e-14 * Math.max(1, before), `case ${c}`);
        }
      }
    }
    assert.ok(M.maxRelErr(M.rotate(Y, positions, options, true), X) <= 1e-13, `case ${c}: the inverse rotation does not undo it`);
  }
});

test('RoPE: the score q(m)·k(n) after rotation depends only on m − n (and does change with it)', () => {
  for (let c = 0; c < 100; c += 1) {
    const r = rng(caseSeed(3, c));
    const d = 2 * r.int(1, 8);
    const [q, k] = [vector(r, d, 2), vector(r, d, 2)];
    const options = { numberOfHeads: 1, headDimensions: d, base: r.pick([10000, 100, 1e6]) };
    const score = (m, n) => dot(M.rotate([q], [m], options)[0], M.rotate([k], [n], options)[0]);
    const [m, n, shift] = [r.int(0, 300), r.int(0, 300), r.int(1, 300)];
    const scale = Math.hypot(...q) * Math.hypot(...k);
    assert.ok(Math.abs(score(m, n) - score(m + shift, n + shift)) <= 1e-12 * scale, `case ${c}: shifting both positions changed the score`);
    // and against the unrotated score at m − n: q·R(n − m)k
    assert.ok(Math.abs(score(m, n) - score(0, n - m)) <= 1e-12 * scale, `case ${c}`);
  }
  // non-vacuous: another distance gives another score
  const r = rng(7);
  const [q, k] = [vector(r, 8, 2), vector(r, 8, 2)];
  const options = { numberOfHeads: 1, headDimensions: 8 };
  const score = (m, n) => dot(M.rotate([q], [m], options)[0], M.rotate([k], [n], options)[0]);
  assert.ok(Math.abs(score(5, 2) - score(5, 3)) > 1e-3);
});

test('RoPE: rotate-half differs from the interleaved layout (a mix-up is caught), except at d = 2 where they coincide', () => {
  for (let c = 0; c < 30; c += 1) {
    const r = rng(caseSeed(4, c));
    const [h, d, T] = [r.int(1, 3), 2 * r.int(2, 4), r.int(2, 5)];
    const X = matrix(r, T, h * d);
    const positions = positionsFrom(1, T);
    const ours = M.rotate(X, positions, { numberOfHeads: h, headDimensions: d });
    assert.ok(M.maxRelErr(interleaved(X, positions, h, d), ours) > 1e-3, `case ${c}: the interleaved layout went unnoticed`);
  }
  const X = matrix(rng(5), 3, 4);
  assert.ok(M.maxRelErr(interleaved(X, [1, 2, 3], 2, 2), M.rotate(X, [1, 2, 3], { numberOfHeads: 2, headDimensions: 2 })) <= 1e-15);
});

test('rotaryEmbedding: offset k gives the rows of positions k … (as the tail of a longer input)', () => {
  const r = rng(6);
  const X = matrix(r, 4, 6);
  const padded = [...matrix(r, 3, 6), ...X];
  const options = { numberOfHeads: 3, headDimensions: 2 };
  const tail = M.rotaryEmbedding(padded, options).value.slice(3);
  assert.deepEqual(M.rotaryEmbedding(X, { ...options, offset: 3 }).value, tail);
});

test('rotaryEmbedding refuses what the contract refuses, naming the argument', () => {
  const X = [[1, 2, 3, 4]];
  refuses(() => M.rotaryEmbedding(X, { numberOfHeads: 1, headDimensions: 3 }), 'RangeError', /headDimensions is odd/);
  refuses(() => M.rotaryEmbedding(X, { numberOfHeads: 2, headDimensions: 4 }), 'RangeError', /X does not have/);
  refuses(() => M.rotaryEmbedding(X, { numberOfHeads: 1, headDimensions: 4, base: 0 }), 'RangeError', /options\.base/);
  refuses(() => M.rotaryEmbedding(X, { numberOfHeads: 1, headDimensions: 4, base: Infinity }), 'RangeError', /options\.base/);
  refuses(() => M.rotaryEmbedding(X, { numberOfHeads: 1, headDimensions: 4, base: '10' }), 'TypeError', /options\.base/);
  refuses(() => M.rotaryEmbedding(X, { numberOfHeads: 1, headDimensions: 4, offset: 1.5 }), 'RangeError', /options\.offset/);
  refuses(() => M.rotaryEmbedding(X, { numberOfHeads: 1, headDimensions: 4, offset: -1 }), 'RangeError', /options\.offset/);
  refuses(() => M.rotaryEmbedding(X, { numberOfHeads: 1, headDimensions: 4, offset: 2 ** 32 }), 'RangeError', /options\.offset/);
  refuses(() => M.rotaryEmbedding(X, { numberOfHeads: 1, headDimensions: 4, offset: 1n }), 'TypeError', /options\.offset/);
  refuses(() => M.rotaryEmbedding(X, { numberOfHeads: 1, headDimensions: 4, theta: 1 }), 'TypeError', /options\.theta is not an option/);
  refuses(() => M.rotaryEmbedding(X), 'TypeError', /options is missing/);
  refuses(() => M.rotaryEmbedding([[NaN, 1, 2, 3]], { numberOfHeads: 1, headDimensions: 4 }), 'RangeError', /X\[0\]\[0\] is not finite/);
});

// ---- grouped-query attention ----------------------------------------------------------------------

/** A seeded GQA case with T_q = T_k (so reference.mjs's multiHeadAttention applies). */
function squareCase(r) {
  const kv = r.int(1, 3);
  const g = r.int(1, 3);
  const [h, d, T] = [kv * g, r.int(1, 4), r.int(1, 7)];
  const options = { numberOfHeads: h, numberOfKVHeads: kv, headDimensions: d };
  const kind = r.int(0, 3);
  if (kind === 1 || kind === 3) options.causal = true;
  if (kind >= 2) options.mask = Array.from({ length: T }, () => Array.from({ length: T }, () => r.bool(0.7)));
  if (r.bool(0.4)) options.W_O = matrix(r, h * d, h * d, 1);
  return { h, kv, g, d, T, Q: matrix(r, T, h * d), K: matrix(r, T, kv * d), V: matrix(r, T, kv * d, r.pick([1, 10])), options };
}

test('GQA with numberOfKVHeads = numberOfHeads equals reference.mjs\'s multiHeadAttention', () => {
  for (let c = 0; c < 200; c += 1) {
    const r = rng(caseSeed(10, c));
    const { h, d, T, options } = squareCase(r);
    const [Q, K, V] = [matrix(r, T, h * d), matrix(r, T, h * d), matrix(r, T, h * d)];
    const opts = { ...options, numberOfKVHeads: h };
    const { numberOfKVHeads, ...mha } = opts;
    void numberOfKVHeads;
    const err = M.maxRelErr(M.groupedQueryAttention(Q, K, V, opts).value, R.multiHeadAttention(Q, K, V, mha).value);
    assert.ok(err <= 1e-14, `case ${c}: ${err}`);
  }
});

test('GQA equals multi-head attention with the K/V heads repeated (repeat_interleave); the tiled mapping i mod h_kv is told apart', () => {
  let told = 0;
  for (let c = 0; c < 200; c += 1) {
    const r = rng(caseSeed(11, c));
    const { h, kv, g, d, Q, K, V, options } = squareCase(r);
    const { numberOfKVHeads, ...mha } = options;
    void numberOfKVHeads;
    const got = M.groupedQueryAttention(Q, K, V, options).value;
    const repeated = R.multiHeadAttention(Q, repeatHeads(K, kv, d, g), repeatHeads(V, kv, d, g), mha).value;
    assert.ok(M.maxRelErr(got, repeated) <= 1e-14, `case ${c}`);
    if (kv >= 2 && g >= 2 && !options.mask) {
      const tiled = R.multiHeadAttention(Q, repeatHeads(K, kv, d, g, true), repeatHeads(V, kv, d, g, true), mha).value;
      assert.ok(M.maxRelErr(tiled, got) > 1e-6, `case ${c}: the i mod h_kv mapping went unnoticed`);
      told += 1;
    }
  }
  assert.ok(told >= 10, `only ${told} cases could tell the mappings apart`);
});

test('multi-query attention (numberOfKVHeads = 1): every head reads the one K/V head', () => {
  const r = rng(12);
  const [h, d, T] = [3, 2, 4];
  const [Q, K, V] = [matrix(r, T, h * d), matrix(r, T, d), matrix(r, T, d)];
  const got = M.groupedQueryAttention(Q, K, V, { numberOfHeads: h, numberOfKVHeads: 1, headDimensions: d, causal: true }).value;
  for (let i = 0; i < h; i += 1) {
    const head = R.dotProductAttention(headCols(Q, i, d), K, V, { causal: true }).value;
    assert.ok(M.maxRelErr(headCols(got, i, d), head) <= 1e-14);
  }
});

test('window ≥ T changes nothing (bit for bit); a smaller window does; causal + window is p − w < j ≤ p', () => {
  for (let c = 0; c < 100; c += 1) {
    const r = rng(caseSeed(13, c));
    const { T, Q, K, V, options } = squareCase(r);
    const plain = M.groupedQueryAttention(Q, K, V, options).value;
    assert.deepEqual(M.groupedQueryAttention(Q, K, V, { ...options, window: T + r.int(0, 3) }).value, plain);
    const w = r.int(1, T);
    const windowed = M.groupedQueryAttention(Q, K, V, { ...options, window: w });
    const explicit = Array.from({ length: T }, (_, i) => Array.from({ length: T }, (__, j) => Math.abs(i - j) < w && (options.mask ? options.mask[i][j] : true) && (!options.causal || j <= i)));
    const { window, causal, ...rest } = { ...options, window: w };
    void window;
    void causal;
    assert.deepEqual(windowed.allowed, explicit, `case ${c}`);
    assert.deepEqual(windowed.value, M.groupedQueryAttention(Q, K, V, { ...rest, mask: explicit }).value, `case ${c}`);
  }
  // a window of 1 without causal: each query sees only itself, so the output is V (identity W_O, one head)
  const r = rng(14);
  const [Q, K, V] = [matrix(r, 5, 3), matrix(r, 5, 3), matrix(r, 5, 3)];
  assert.ok(M.maxRelErr(M.groupedQueryAttention(Q, K, V, { numberOfHeads: 1, numberOfKVHeads: 1, headDimensions: 3, window: 1 }).value, V) <= 1e-15);
  assert.ok(M.maxRelErr(M.groupedQueryAttention(Q, K, V, { numberOfHeads: 1, numberOfKVHeads: 1, headDimensions: 3, window: 2 }).value, V) > 1e-3);
});

test('causal, bottom-right: with T_q = T_k the usual causal mask; with T_q < T_k query i sees j ≤ T_k − T_q + i (not top-left)', () => {
  for (let c = 0; c < 100; c += 1) {
    const r = rng(caseSeed(15, c));
    const { h, d, T, Q, K, V, options } = squareCase(r);
    const { numberOfKVHeads, ...mha } = { ...options, numberOfKVHeads: h, causal: true };
    void numberOfKVHeads;
    const [Kh, Vh] = [matrix(r, T, h * d), matrix(r, T, h * d)];
    assert.ok(M.maxRelErr(M.groupedQueryAttention(Q, Kh, Vh, { ...mha, numberOfKVHeads: h }).value, R.multiHeadAttention(Q, Kh, Vh, mha).value) <= 1e-14);
    void K;
    void V;
  }
  let told = 0;
  for (let c = 0; c < 100; c += 1) {
    const r = rng(caseSeed(16, c));
    const [kv, g, d] = [r.int(1, 2), r.int(1, 2), r.int(1, 3)];
    const h = kv * g;
    const [Tq, Tk] = [r.int(1, 4), r.int(1, 8)];
    const [Q, K, V] = [matrix(r, Tq, h * d), matrix(r, Tk, kv * d), matrix(r, Tk, kv * d)];
    const base = { numberOfHeads: h, numberOfKVHeads: kv, headDimensions: d };
    const got = M.groupedQueryAttention(Q, K, V, { ...base, causal: true }).value;
    const bottomRight = Array.from({ length: Tq }, (_, i) => Array.from({ length: Tk }, (__, j) => j <= Tk - Tq + i));
    assert.deepEqual(got, M.groupedQueryAttention(Q, K, V, { ...base, mask: bottomRight }).value, `case ${c}`);
    if (Tq < Tk) {
      const topLeft = Array.from({ length: Tq }, (_, i) => Array.from({ length: Tk }, (__, j) => j <= i));
      assert.ok(M.maxRelErr(M.groupedQueryAttention(Q, K, V, { ...base, mask: topLeft }).value, got) > 1e-6, `case ${c}: top-left alignment went unnoticed`);
      told += 1;
    }
  }
  assert.ok(told >= 20);
});

test('groupedQueryAttention refuses what the contract refuses, naming the argument', () => {
  const [Q, K] = [[[1, 2, 3, 4]], [[1, 2]]];
  const o = { numberOfHeads: 2, numberOfKVHeads: 1, headDimensions: 2 };
  assert.equal(M.groupedQueryAttention(Q, K, K, o).value.length, 1);
  refuses(() => M.groupedQueryAttention(Q, K, K, { ...o, numberOfHeads: 3, headDimensions: 1, numberOfKVHeads: 2 }), 'RangeError', /numberOfKVHeads does not divide/);
  refuses(() => M.groupedQueryAttention(Q, [[1, 2, 3]], K, o), 'RangeError', /^K does not have/);
  refuses(() => M.groupedQueryAttention(Q, K, [[1, 2], [3, 4]], o), 'RangeError', /^V is not/);
  refuses(() => M.groupedQueryAttention(Q, K, K, { numberOfHeads: 2, headDimensions: 2 }), 'TypeError', /numberOfKVHeads/);
  refuses(() => M.groupedQueryAttention(Q, K, K, { ...o, window: 0 }), 'RangeError', /options\.window/);
  refuses(() => M.groupedQueryAttention(Q, K, K, { ...o, window: '2' }), 'TypeError', /options\.window/);
  refuses(() => M.groupedQueryAttention(Q, K, K, { ...o, mask: [[true], [true]] }), 'RangeError', /options\.mask/);
  refuses(() => M.groupedQueryAttention(Q, K, K, { ...o, W_O: [[1]] }), 'RangeError', /options\.W_O/);
  refuses(() => M.groupedQueryAttention(Q, K, K, { ...o, numKVHeads: 1 }), 'TypeError', /options\.numKVHeads is not an option/);
});

// ---- the layer: init ------------------------------------------------------------------------------

test('init with numKVHeads = numHeads reproduces layer.mjs\'s initialWeights bit for bit; with fewer KV heads each matrix has its own limit and the stream continues', () => {
  for (const [C, h, seed] of [[1, 1, 0n], [6, 2, 123n], [8, 4, 2n ** 64n - 1n], [12, 3, 42n], [16, 8, 7n]]) {
    const ours = M.initialWeights(C, C, seed);
    const theirs = LR.initialWeights(C, seed);
    for (const name of ['W_Q', 'W_K', 'W_V', 'W_O']) assert.ok(ours[name].flat().every((x, i) => Object.is(x, theirs[name].flat()[i])), `C=${C} ${name}`);
    const L = M.construct({ embedDim: C, numHeads: h, seed });
    assert.deepEqual(M.parameters(L), LR.parameters(LR.construct({ embedDim: C, numHeads: h, seed })));
    assert.equal(M.numParameters(L), 4 * C * C + 4 * C);
  }
  // C = 8, 4 heads of 2, 1 KV head: W_K, W_V are 8×2 with limit √(6/10); the draws follow W_Q's
  const L = M.construct({ embedDim: 8, numHeads: 4, numKVHeads: 1, seed: 9 });
  const stream = LR.splitMix64(9n);
  const draws = (n, limit) => Array.from({ length: n }, () => limit * (2 * stream.nextUnit() - 1));
  const expected = [draws(64, Math.sqrt(6 / 16)), draws(16, Math.sqrt(6 / 10)), draws(16, Math.sqrt(6 / 10)), draws(64, Math.sqrt(6 / 16))];
  ['W_Q', 'W_K', 'W_V', 'W_O'].forEach((name, k) => assert.deepEqual(L.W[name].flat(), expected[k], name));
  assert.deepEqual([L.W.W_K.length, L.W.W_K[0].length, L.b.b_K.length, L.b.b_O.length], [8, 2, 2, 8]);
  assert.ok(L.W.W_K.flat().some((x) => Math.abs(x) > Math.sqrt(6 / 16)), 'the KV limit is the C×C one');
  assert.equal(M.numParameters(L), 2 * 64 + 2 * 16 + 2 * 8 + 2 * 2);
  assert.equal(Object.values(M.parameters(L)).flat(2).length, M.numParameters(L));
});

test('the layer refuses bad configurations and weights, naming the argument', () => {
  refuses(() => M.construct({ embedDim: 12, numHeads: 4, numKVHeads: 3 }), 'RangeError', /config\.numKVHeads does not divide/);
  refuses(() => M.construct({ embedDim: 12, numHeads: 4, numKVHeads: 0 }), 'RangeError', /config\.numKVHeads/);
  refuses(() => M.construct({ embedDim: 12, numHeads: 4, numKVHeads: '2' }), 'TypeError', /config\.numKVHeads/);
  refuses(() => M.construct({ embedDim: 12, numHeads: 4, rope: {} }), 'RangeError', /config\.rope needs an even head dimension/);
  refuses(() => M.construct({ embedDim: 8, numHeads: 2, rope: { base: -1 } }), 'RangeError', /config\.rope\.base/);
  refuses(() => M.construct({ embedDim: 8, numHeads: 2, rope: { theta: 1 } }), 'TypeError', /config\.rope\.theta is not an option/);
  refuses(() => M.construct({ embedDim: 8, numHeads: 2, rope: 1 }), 'TypeError', /config\.rope/);
  refuses(() => M.construct({ embedDim: 8, numHeads: 2, rope: null }), 'TypeError', /config\.rope/);
  assert.deepEqual(M.construct({ embedDim: 8, numHeads: 2, rope: true }).rope, { base: 10000 });
  assert.equal(M.construct({ embedDim: 8, numHeads: 2, rope: false }).rope, null);
  assert.deepEqual(M.construct({ embedDim: 8, numHeads: 2, rope: {} }).rope, { base: 10000 });
  const L = M.construct({ embedDim: 8, numHeads: 4, numKVHeads: 2 });
  refuses(() => M.setWeights(L, { W_K: matrix(rng(1), 8, 8) }), 'RangeError', /W_K is not 8×4/);
  refuses(() => M.setWeights(L, { b_V: [1, 2, 3, 4, 5, 6, 7, 8] }), 'RangeError', /b_V does not have 4 entries/);
  assert.equal(M.setWeights(L, { W_K: matrix(rng(1), 8, 4) }).id, L.id);
  refuses(() => M.forward(L, matrix(rng(2), 3, 8), null, null, { window: 1.5 }), 'RangeError', /options\.window/);
  const roped = M.construct({ embedDim: 8, numHeads: 2, rope: true });
  refuses(() => M.forward(roped, matrix(rng(2), 3, 8), matrix(rng(3), 2, 8)), 'RangeError', /T_q = 3 > T_k = 2/);
  assert.equal(M.forward(L, matrix(rng(2), 3, 8), matrix(rng(3), 2, 8), null, { causal: true }).output[0].v.length, 3);
});

// ---- the layer: forward ------------------------------------------------------------------------------

/** A seeded layer case: config (numKVHeads, rope, bias), weights set, inputs and forward options. */
function layerCase(r, { rope = r.bool(0.5), cross = r.bool(0.3), batch = r.bool(0.3) ? r.int(1, 3) : 0, dropout = 0 } = {}) {
  const kv = r.int(1, 3);
  const h = kv * r.int(1, 3);
  const d = rope ? 2 * r.int(1, 2) : r.int(1, 3);
  const C = h * d;
  const config = { embedDim: C, numHeads: h, numKVHeads: kv, seed: r.int(0, 1000), bias: r.bool(0.7), dropout };
  if (rope) config.rope = r.bool(0.5) ? {} : { base: r.pick([100, 10000, 500000]) };
  let L = M.construct(config);
  const update = { W_O: matrix(r, C, C, 1) };
  if (L.b) Object.assign(update, { b_Q: vector(r, C), b_K: vector(r, kv * d), b_V: vector(r, kv * d), b_O: vector(r, C) });
  L = M.setWeights(L, update);
  const tq = r.int(1, 6);
  const tk = cross ? r.int(rope ? tq : 1, 7) : tq;
  const make = (t) => (batch ? Array.from({ length: batch }, () => matrix(r, t, C)) : matrix(r, t, C));
  const query = make(tq);
  const [key, value] = cross ? [make(tk), make(tk)] : [null, null];
  const options = {};
  if (r.bool(0.5)) options.causal = true;
  if (r.bool(0.4)) options.window = r.int(1, 4);
  if (r.bool(0.2)) options.mask = Array.from({ length: tq }, () => Array.from({ length: tk }, () => r.bool(0.8)));
  return { config, update, L, query, key, value, options, gradOutput: make(tq), C, h, kv, d, tq, tk, batch };
}

/** The layer forward rebuilt from the functions: projections, rotaryEmbedding, groupedQueryAttention, + b_O. */
function composed(L, x, xk, xv, options) {
  const project = (X, W, b) => X.map((row) => W[0].map((_, j) => R.sum(row.map((v, k) => v * W[k][j])) + (b ? b[j] : 0)));
  let Q = project(x, L.W.W_Q, L.b?.b_Q);
  let K = project(xk, L.W.W_K, L.b?.b_K);
  const V = project(xv, L.W.W_V, L.b?.b_V);
  if (L.rope) {
    Q = M.rotaryEmbedding(Q, { numberOfHeads: L.h, headDimensions: L.d, base: L.rope.base, offset: K.length - Q.length }).value;
    K = M.rotaryEmbedding(K, { numberOfHeads: L.kv, headDimensions: L.d, base: L.rope.base }).value;
  }
  const { mask, causal, window } = options;
  const out = M.groupedQueryAttention(Q, K, V, { numberOfHeads: L.h, numberOfKVHeads: L.kv, headDimensions: L.d, W_O: L.W.W_O, mask, causal, window }).value;
  return L.b ? out.map((row) => row.map((v, j) => v + L.b.b_O[j])) : out;
}

test('the layer forward equals projections → rotaryEmbedding → groupedQueryAttention → + b_O (200 cases)', () => {
  for (let c = 0; c < 200; c += 1) {
    const r = rng(caseSeed(20, c));
    const k = layerCase(r, { batch: 0 });
    const F = M.forward(k.L, k.query, k.key, k.value, k.options);
    const expected = composed(k.L, k.query, k.key ?? k.query, k.value ?? k.key ?? k.query, k.options);
    const err = M.maxRelErr(F.output[0].v, expected);
    assert.ok(err <= BOUND, `case ${c}: ${err}`);
  }
});

test('with numKVHeads = numHeads, no rope and no window the layer is layer.mjs\'s (values and bounds, cross-attention included); causal is bottom-right, not top-left', () => {
  let cross = 0;
  for (let c = 0; c < 100; c += 1) {
    const r = rng(caseSeed(21, c));
    const [h, d] = [r.int(1, 3), r.int(1, 3)];
    const C = h * d;
    const config = { embedDim: C, numHeads: h, seed: r.int(0, 99), bias: r.bool(), dropout: r.pick([0, 0.3]) };
    const L = M.construct(config);
    const L0 = LR.construct(config);
    const batch = r.bool(0.5) ? 2 : 0;
    const [tq, tk] = [r.int(1, 6), r.int(1, 6)];
    const make = (t) => (batch ? [matrix(r, t, C), matrix(r, t, C)] : matrix(r, t, C));
    const [query, key, value] = [make(tq), make(tk), make(tk)];
    const options = { causal: r.bool(), needWeights: r.bool(), training: r.bool() };
    if (options.needWeights) options.averageWeights = r.bool();
    const [F, F0] = [M.forward(L, query, key, value, options), LR.forward(L0, query, key, value, options)];
    assert.deepEqual(F.output, F0.output, `case ${c}`);
    assert.deepEqual(F.weights, F0.weights, `case ${c}`);
    const g = make(tq);
    const [Bk, Bk0] = [M.backward(L, F, g), LR.backward(L0, F0, g)];
    assert.deepEqual(Bk.inputs, Bk0.inputs, `case ${c}`);
    for (const name of Object.keys(Bk0.params)) assert.deepEqual(Bk.params[name], Bk0.params[name], `case ${c} ${name}`);
    cross += tq !== tk && options.causal ? 1 : 0;
  }
  assert.ok(cross >= 20, `only ${cross} causal cross-attention cases`);
  // cross-attention, T_q = 2 < T_k = 5, causal: query i sees j ≤ 3 + i, not j ≤ i
  const r = rng(22);
  const L = M.construct({ embedDim: 4, numHeads: 2, seed: 1 });
  const [q, kv] = [matrix(r, 2, 4), matrix(r, 5, 4)];
  const F = M.forward(L, q, kv, kv, { causal: true });
  const bottomRight = [[true, true, true, true, false], [true, true, true, true, true]];
  const topLeft = [[true, false, false, false, false], [true, true, false, false, false]];
  assert.deepEqual(F.output[0].v, M.forward(L, q, kv, kv, { mask: bottomRight }).output[0].v);
  assert.ok(M.maxRelErr(F.output[0].v, M.forward(L, q, kv, kv, { mask: topLeft }).output[0].v) > 1e-3, 'the alignment makes no difference here: the test is blind');
});

test('the layer: rope at position 0 only (T = 1) and window ≥ T change nothing, bit for bit', () => {
  for (let c = 0; c < 50; c += 1) {
    const r = rng(caseSeed(23, c));
    const k = layerCase(r, { rope: true });
    const { rope, ...plainConfig } = k.config;
    void rope;
    const plain = M.setWeights(M.construct(plainConfig), k.update);
    const one = (x) => (k.batch ? x.map((m) => m.slice(0, 1)) : x.slice(0, 1));
    if (!k.key) assert.deepEqual(M.forward(k.L, one(k.query)).output, M.forward(plain, one(k.query)).output, `case ${c}: rope at position 0`);
    const { window, ...rest } = k.options;
    void window;
    const wide = { ...rest, window: Math.max(k.tq, k.tk) + r.int(0, 2) };
    assert.deepEqual(M.forward(k.L, k.query, k.key, k.value, wide).output, M.forward(k.L, k.query, k.key, k.value, rest).output, `case ${c}: wide window`);
  }
});

// ---- the KV cache ------------------------------------------------------------------------------------

/** Splits T rows into chunks of random sizes (for a batch: the same split of every item). */
function chunked(r, x, batch) {
  const T = batch ? x[0].length : x.length;
  const cuts = [];
  for (let t = 0; t < T;) {
    const n = r.int(1, Math.min(3, T - t));
    cuts.push([t, t + n]);
    t += n;
  }
  return cuts.map(([a, b]) => (batch ? x.map((m) => m.slice(a, b)) : x.slice(a, b)));
}

test('KV cache: feeding the sequence in any chunking gives the rows of one causal forward (rope, GQA, window, batches)', () => {
  let exact = 0;
  for (let c = 0; c < 150; c += 1) {
    const r = rng(caseSeed(30, c));
    const k = layerCase(r, { cross: false });
    const window = r.bool(0.5) ? r.int(1, 4) : undefined;
    const chunks = chunked(r, k.query, k.batch);
    const dec = M.decode(k.L, chunks, { window });
    const whole = M.forward(k.L, M.concatChunks(chunks), null, null, window === undefined ? { causal: true } : { causal: true, window });
    const expected = whole.batched ? whole.output.map((m) => m.v) : whole.output[0].v;
    const err = M.maxRelErr(dec.rows, expected);
    assert.ok(err <= BOUND, `case ${c}: ${err}`);
    exact += err === 0 ? 1 : 0;
    assert.equal(dec.cache.length, k.tq);
  }
  console.log(`oracle-modern: ${exact} of 150 chunked decodings equal the one causal pass bit for bit`);
});

test('KV cache rules: another layer\'s cache and backward after a cached forward are Errors; another B is a RangeError; causal only, no key/mask/training; a refused call leaves the cache as it was; reset() starts over', () => {
  const r = rng(31);
  const L = M.construct({ embedDim: 8, numHeads: 4, numKVHeads: 2, rope: {}, seed: 3 });
  const other = M.construct({ embedDim: 8, numHeads: 4, numKVHeads: 2, rope: {}, seed: 3 });
  const x = matrix(r, 5, 8);
  const cache = M.createCache(L);
  refuses(() => M.forward(other, x.slice(0, 2), undefined, undefined, { cache, causal: true }), 'Error', /another layer/);
  const F = M.forward(L, x.slice(0, 2), undefined, undefined, { cache, causal: true });
  refuses(() => M.backward(L, F, x.slice(0, 2)), 'Error', /KV cache/);
  refuses(() => M.forward(L, [x.slice(2, 3), x.slice(2, 3)], undefined, undefined, { cache, causal: true }), 'RangeError', /options\.cache holds 1/);
  refuses(() => M.forward(L, [[1, 2, 3]], undefined, undefined, { cache, causal: true }), 'RangeError', /T×C/);
  refuses(() => M.forward(L, x.slice(2, 3), undefined, undefined, { cache, causal: true, mask: [[true, true, true]] }), 'TypeError', /takes no options\.mask/);
  refuses(() => M.forward(L, x.slice(2, 3), undefined, undefined, { cache, causal: true, training: true }), 'TypeError', /takes no options\.training/);
  refuses(() => M.forward(L, x.slice(2, 3), undefined, undefined, { cache }), 'TypeError', /needs options\.causal/);
  refuses(() => M.forward(L, x.slice(2, 3), x.slice(2, 3), undefined, { cache, causal: true }), 'TypeError', /key and value are omitted/);
  refuses(() => M.forward(L, x.slice(2, 3), undefined, undefined, { cache: {}, causal: true }), 'TypeError', /options\.cache is not a cache/);
  assert.equal(cache.length, 2);
  M.forward(L, x.slice(2), undefined, undefined, { cache, causal: true });
  assert.equal(cache.length, 5);
  const whole = M.forward(L, x, null, null, { causal: true }).output[0].v;
  // after reset the cache starts at position 0 again, with any batch size
  cache.reset();
  const again = M.forward(L, [x.slice(0, 3), x.slice(0, 3)], undefined, undefined, { cache, causal: true });
  assert.deepEqual(again.output[0].v, whole.slice(0, 3));
  assert.equal(cache.length, 3);
  // a setWeights copy is the same layer: its cache is accepted
  assert.equal(M.forward(M.setWeights(L, {}), [x.slice(3), x.slice(3)], undefined, undefined, { cache, causal: true }).dims.Tk, 5);
});

// ---- the layer: backward ------------------------------------------------------------------------------

/** Σ output ⊙ G of the oracle's forward (values only). */
function loss(L, query, key, value, options, G) {
  const F = M.forward(L, query, key, value, options);
  const out = F.batched ? F.output.map((m) => m.v) : F.output[0].v;
  return R.sum([out, G].map((x) => x.flat(Infinity)).reduce((a, g) => a.map((v, i) => v * g[i])));
}

/** Central difference of f at x[idx…] (a nested array, modified in place and restored). */
function central(f, holder, path) {
  const at = path.slice(0, -1).reduce((o, k) => o[k], holder);
  const last = path[path.length - 1];
  const x = at[last];
  const step = 1e-5 * Math.max(1, Math.abs(x));
  at[last] = x + step;
  const plus = f();
  at[last] = x - step;
  const minus = f();
  at[last] = x;
  return (plus - minus) / (2 * step);
}

/** Every index path of a nested array. */
const paths = (x, prefix = []) => (Array.isArray(x) ? x.flatMap((v, i) => paths(v, [...prefix, i])) : [prefix]);

test('the layer backward matches central finite differences (inputs and every parameter; GQA, rope, window, causal, cross, batch, dropout)', () => {
  const cases = [
    { rope: true, cross: false, batch: 0 },
    { rope: true, cross: true, batch: 0 },
    { rope: false, cross: false, batch: 2 },
    { rope: true, cross: false, batch: 2, dropout: 0.3 },
    { rope: true, cross: true, batch: 0 },
    { rope: false, cross: true, batch: 0 },
  ];
  let checked = 0;
  cases.forEach((shape, c) => {
    const r = rng(caseSeed(40, c));
    const k = layerCase(r, shape);
    const options = { ...k.options, training: Boolean(shape.dropout) };
    if (c % 2 === 0) Object.assign(options, { causal: true, window: 2 });
    const inputs = { query: k.query, key: k.key ?? JSON.parse(JSON.stringify(k.query)), value: k.value ?? JSON.parse(JSON.stringify(k.query)) };
    const F = M.forward(k.L, inputs.query, inputs.key, inputs.value, options);
    const Bk = M.backward(k.L, F, k.gradOutput);
    const fix = (tracked) => (F.batched ? tracked.map((m) => m.v) : tracked[0].v);
    const close = (fd, g, what) => {
      assert.ok(Math.abs(fd - g) <= 1e-6 * Math.max(1, Math.abs(g)), `case ${c} ${what}: finite difference ${fd}, backward ${g}`);
      checked += 1;
    };
    for (const name of ['query', 'key', 'value']) {
      const grad = fix(Bk.inputs[name]);
      for (const p of paths(inputs[name])) {
        close(central(() => loss(k.L, inputs.query, inputs.key, inputs.value, options, k.gradOutput), inputs, [name, ...p]), p.reduce((o, i) => o[i], grad), `${name}${JSON.stringify(p)}`);
      }
    }
    const params = JSON.parse(JSON.stringify(M.parameters(k.L)));
    const withParams = () => {
      const update = Object.fromEntries(Object.entries(params).map(([n, v]) => [n, n.startsWith('b_') ? v[0] : v]));
      return loss(M.setWeights(k.L, update), inputs.query, inputs.key, inputs.value, options, k.gradOutput);
    };
    for (const [name, value] of Object.entries(params)) {
      for (const p of paths(value)) close(central(withParams, params, [name, ...p]), p.reduce((o, i) => o[i], Bk.params[name].v), `${name}${JSON.stringify(p)}`);
    }
  });
  assert.ok(checked > 500, `only ${checked} derivatives checked`);
});

// ---- the oracle is not vacuous ------------------------------------------------------------------------

test('the comparisons are not vacuous: a 1e-9 error exceeds both the 1e-12 measure and the fuzzer\'s bound; a swapped KV mapping in the layer is seen', () => {
  const r = rng(50);
  const k = layerCase(r, { rope: true, cross: false, batch: 0 });
  const F = M.forward(k.L, k.query, null, null, { causal: true });
  const out = F.output[0];
  const nudged = out.v.map((row) => row.map((v) => v + 1e-9 * Math.max(1, Math.abs(v))));
  assert.ok(M.maxRelErr(nudged, out.v) > BOUND);
  assert.ok(nudged.some((row, i) => row.some((v, j) => !(Math.abs(v - out.v[i][j]) <= 8 * out.e[i][j] + 4 * 2 ** -1074))), 'the fuzz bound lets a 1e-9 error through');
  const G = M.groupedQueryAttention(matrix(r, 3, 4), matrix(r, 3, 2), matrix(r, 3, 2), { numberOfHeads: 2, numberOfKVHeads: 1, headDimensions: 2 });
  assert.ok(G.value.some((row, i) => row.some((v, j) => !(Math.abs(v * (1 + 1e-9) + 1e-9 - v) <= G.bound[i][j]))));

  // the layer with h = 4, h_kv = 2 against the same layer computed with the i mod h_kv mapping
  const L = M.setWeights(M.construct({ embedDim: 8, numHeads: 4, numKVHeads: 2, rope: {}, seed: 4 }), { b_K: vector(r, 4), b_Q: vector(r, 8) });
  const x = matrix(r, 4, 8);
  const good = M.forward(L, x, null, null, { causal: true }).output[0].v;
  const project = (X, W, b) => X.map((row) => W[0].map((_, j) => R.sum(row.map((v, i) => v * W[i][j])) + b[j]));
  const Q = M.rotate(project(x, L.W.W_Q, L.b.b_Q), [0, 1, 2, 3], { numberOfHeads: 4, headDimensions: 2 });
  const K = M.rotate(project(x, L.W.W_K, L.b.b_K), [0, 1, 2, 3], { numberOfHeads: 2, headDimensions: 2 });
  const V = project(x, L.W.W_V, L.b.b_V);
  const swapped = R.multiHeadAttention(Q, repeatHeads(K, 2, 2, 2, true), repeatHeads(V, 2, 2, 2, true), { numberOfHeads: 4, headDimensions: 2, W_O: L.W.W_O, causal: true }).value.map((row) => row.map((v, j) => v + L.b.b_O[j]));
  const right = R.multiHeadAttention(Q, repeatHeads(K, 2, 2, 2), repeatHeads(V, 2, 2, 2), { numberOfHeads: 4, headDimensions: 2, W_O: L.W.W_O, causal: true }).value.map((row) => row.map((v, j) => v + L.b.b_O[j]));
  assert.ok(M.maxRelErr(good, right) <= BOUND, 'the layer is not repeat_interleave GQA');
  assert.ok(M.maxRelErr(good, swapped) > 1e-6, 'the i mod h_kv mapping went unnoticed');
  // and a rope layer told apart from the same layer without rope, and from rope at top-left query positions
  const { rope, ...noRope } = { embedDim: 8, numHeads: 4, numKVHeads: 2, rope: {}, seed: 4 };
  void rope;
  const plain = M.setWeights(M.construct(noRope), { b_K: L.b.b_K, b_Q: L.b.b_Q });
  assert.ok(M.maxRelErr(M.forward(plain, x, null, null, { causal: true }).output[0].v, good) > 1e-6);
});
