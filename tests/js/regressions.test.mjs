// Bugs the fuzzer and the memory tests found, each pinned by the input that showed it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import lab, { externrefSlots, wasmMemoryBytes } from './support/lab.mjs';

const ok = () => assert.deepEqual(lab.dotProductAttention([[1]], [[2]], [[3]]), [[3]]);

test('1e308 entries: the overflowing score is a RangeError naming it, not a silent NaN', () => {
  assert.throws(() => lab.dotProductAttention([[1e308, 1e308]], [[1e308, 1e308]], [[1]]), {
    name: 'RangeError',
    message: /^scores\[0\]\[0\] overflows to Infinity: the dot product of Q row 0 and K row 0 is too large/,
  });
  assert.throws(() => lab.multiHeadAttention([[1, 1e200]], [[1, 1e200]], [[1, 2]], 2, 1), {
    name: 'RangeError',
    message: /^scores_1\[0\]\[0\] overflows to Infinity/,
  });
  assert.throws(() => lab.traceMultiHeadAttention([[1, 1e200]], [[1, 1e200]], [[1, 2]], { numberOfHeads: 2, headDimensions: 1 }), {
    name: 'RangeError',
    message: /^scores_1\[0\]\[0\] overflows to Infinity/,
  });
  ok();
});

test('an output beyond f64 (through W_O) is a RangeError, not Infinity', () => {
  assert.throws(() => lab.multiHeadAttention([[1]], [[1]], [[1e308]], { numberOfHeads: 1, headDimensions: 1, W_O: [[10]] }), {
    name: 'RangeError',
    message: /^output\[0\]\[0\] overflows to Infinity: concat row 0 · W_O column 0 is too large/,
  });
  // the largest finite values still come back exactly: softmax weights of equal scores are exact halves
  const MAX = Number.MAX_VALUE;
  assert.deepEqual(lab.multiHeadAttention([[1], [1]], [[1], [1]], [[MAX], [MAX]], 1, 1), [[MAX], [MAX]]);
  ok();
});

test('a sparse row of declared length 2^28 is a RangeError, not a capacity-overflow trap', () => {
  assert.throws(() => lab.dotProductAttention([new Array(2 ** 28)], [[1]], [[1]]), {
    name: 'RangeError',
    message: 'Q would be 1×268435456, more than the 134217728 elements one matrix may hold',
  });
  ok();
});

test('a sparse row of declared length 2^27 does not make wasm memory grow by 1 GiB', () => {
  const before = wasmMemoryBytes();
  assert.throws(() => lab.dotProductAttention([[1]], [new Array(2 ** 27)], [[1]]), {
    name: 'TypeError',
    message: 'K[0][0] is undefined; expected a number',
  });
  assert.ok(wasmMemoryBytes() - before < 2 ** 20, `memory grew from ${before} to ${wasmMemoryBytes()}`);
  ok();
});

test('T = 2^21 (a score block of 64 × 2^21 with the inputs, beyond the 2^27-value budget) is a RangeError before allocating, not an allocation trap', () => {
  const q = Array.from({ length: 2 ** 21 }, (_, i) => [i % 7]);
  assert.throws(() => lab.dotProductAttention(q, q, q), {
    name: 'RangeError',
    message: /^dotProductAttention with T = 2097152 \(inputs, outputs and what is kept, plus one head's packed K and V and a block of scores\) needs \d+ values in memory at once/,
  });
  assert.throws(() => lab.multiHeadAttention(q, q, q, 1, 1), { name: 'RangeError', message: /^multiHeadAttention with T = 2097152 and C = 1/ });
  ok();
});

test('numbers in messages are printed the JS way (Infinity, 1e+21), not the Rust way (inf, 22 digits)', () => {
  assert.throws(() => lab.multiHeadAttention([[1]], [[1]], [[1]], Infinity, 1), {
    name: 'RangeError',
    message: 'numberOfHeads (argument 4) is Infinity; expected a positive integer',
  });
  assert.throws(() => lab.multiHeadAttention([[1]], [[1]], [[1]], 1e21, 1), {
    name: 'RangeError',
    message: 'numberOfHeads (argument 4) is 1e+21; expected a positive integer',
  });
  assert.throws(() => lab.dotProductAttention([[-Infinity]], [[1]], [[1]]), {
    name: 'RangeError',
    message: 'Q[0][0] is -Infinity; expected a finite number',
  });
  ok();
});

test('a revoked Proxy is a TypeError naming the argument, and nothing leaks across the unwound call', () => {
  const revoked = (target) => {
    const { proxy, revoke } = Proxy.revocable(target, {});
    revoke();
    return proxy;
  };
  assert.throws(() => lab.dotProductAttention(revoked([[1]]), [[1]], [[1]]), { name: 'TypeError', message: 'Q could not be read (it is a revoked Proxy)' });
  assert.throws(() => lab.dotProductAttention([[1]], [[1], revoked([2])], [[1], [2]]), { name: 'TypeError', message: 'K[1] could not be read (it is a revoked Proxy)' });
  assert.throws(() => lab.multiHeadAttention([[1]], [[1]], [[1]], revoked({})), { name: 'TypeError', message: 'options could not be read (it is a revoked Proxy)' });
  // before the fix, Array.isArray threw through wasm: each call leaked an externref slot and heap memory
  const [slots, bytes] = [externrefSlots(), wasmMemoryBytes()];
  for (let i = 0; i < 20000; i += 1) assert.throws(() => lab.dotProductAttention([revoked([1])], [[1]], [[1]]), TypeError);
  assert.equal(externrefSlots(), slots);
  assert.equal(wasmMemoryBytes(), bytes);
  ok();
});

test('a getter that throws an Error whose own message getter throws is still a TypeError naming the place', () => {
  const hostile = Object.create(Error.prototype, { message: { get() { throw new Error('message getter throws'); } } });
  const row = [1];
  Object.defineProperty(row, 0, { get() { throw hostile; } });
  assert.throws(() => lab.dotProductAttention([row], [[1]], [[1]]), {
    name: 'TypeError',
    message: 'Q[0][0] could not be read (reading it threw: an object)',
  });
  ok();
});

test('throwing getters and ownKeys traps do not grow the externref table (a catch-import slot leak)', () => {
  const row = [1];
  Object.defineProperty(row, 0, { get() { throw new Error('getter throws'); } });
  const keysThrow = new Proxy({}, { ownKeys() { throw new Error('ownKeys throws'); } });
  assert.throws(() => lab.dotProductAttention([row], [[1]], [[1]]), { name: 'TypeError', message: 'Q[0][0] could not be read (reading it threw: getter throws)' });
  assert.throws(() => lab.dotProductAttention([[1]], [[1]], [[1]], keysThrow), { name: 'TypeError', message: 'options: its keys could not be listed' });
  const slots = externrefSlots();
  for (let i = 0; i < 20000; i += 1) {
    assert.throws(() => lab.dotProductAttention([row], [[1]], [[1]]), TypeError);
    assert.throws(() => lab.multiHeadAttention([[1]], [[1]], [[1]], keysThrow), TypeError);
  }
  // before the fix: 1,028 → 33,796 slots over 20,000 calls
  assert.equal(externrefSlots(), slots);
  ok();
});

// fuzz3 (typed-input fuzz entries): a Float64Array subclass whose `length` getter reported more
// than the view held was copied with that length, so the tail of the copy was never written and
// the call returned an answer computed from uninitialized wasm memory; a shorter report threw the
// engine's bare "offset is out of bounds"; a Proxy over a Float64Array was read through.
test('a typed array whose length lies, or a Proxy posing as one, is refused before it is copied', () => {
  class Longer extends Float64Array {
    get length() {
      return 4;
    }
  }
  const longer = { data: new Longer([1, 2]), shape: [2, 2] };
  assert.throws(() => lab.dotProductAttention(longer, longer, longer), { name: 'RangeError', message: /^Q\.data\.length is 4 but Q\.data holds 2 values/ });
  class Shorter extends Float32Array {
    get length() {
      return 2;
    }
  }
  const fine = { data: new Float32Array([1, 2]), shape: [1, 2] };
  assert.throws(() => lab.multiHeadAttention(fine, { data: new Shorter(8), shape: [1, 2] }, fine, 1, 2), { name: 'RangeError', message: /^K\.data\.length is 2 but K\.data holds 8 values/ });
  const proxy = new Proxy(new Float64Array([1, 2, 3, 4]), { get: (t, k) => (k === 'length' ? t.length : Reflect.get(t, k)) });
  assert.throws(() => lab.linear({ data: proxy, shape: [2, 2] }, { data: new Float64Array(4), shape: [2, 2] }), { name: 'TypeError', message: /^X\.data is not itself a Float32Array or Float64Array/ });
  assert.throws(() => lab.linear({ data: new Float64Array(2), shape: [1, 2] }, { data: new Float64Array(2), shape: [2, 1] }, new Longer([1])), { name: 'RangeError', message: /^b\.length is 4 but b holds 1 values/ });
  ok();
});

// fuzz3: linear returned ±Infinity/NaN when X·W + b left the f64 (or, for Float32Array, the f32)
// range, and a number[][] W_O with an entry beyond f32's range became Infinity in a Float32Array
// multiHeadAttention call and NaN in its output.
test('linear and f32 multiHeadAttention: an overflowing result or W_O is a RangeError, not a silent Infinity or NaN', () => {
  assert.throws(() => lab.linear([[1e308, 1e308]], [[10], [10]]), { name: 'RangeError', message: /^\(X·W \+ b\)\[0\]\[0\] overflows to Infinity: .*beyond the largest f64/ });
  assert.throws(() => lab.linear([[1e308, -1e308]], [[10, 1], [10, 1]]), { name: 'RangeError', message: /^\(X·W \+ b\)\[0\]\[0\] overflows to Infinity − Infinity/ });
  const x = { data: new Float32Array([1e38, 1e38]), shape: [1, 2] };
  assert.throws(() => lab.linear(x, { data: new Float32Array([10, 10]), shape: [2, 1] }), { name: 'RangeError', message: /beyond the largest f32/ });
  const one = { data: new Float32Array([1, 1]), shape: [1, 2] };
  assert.throws(() => lab.linear(one, { data: new Float32Array([1, 1]), shape: [2, 1] }, [1e300]), { name: 'RangeError', message: /^\(X·W \+ b\)\[0\]\[0\] overflows to Infinity/ });
  const g = { data: new Float32Array([1, 2, 3, 4]), shape: [2, 2] };
  assert.throws(() => lab.multiHeadAttention(g, g, g, { numberOfHeads: 1, headDimensions: 2, W_O: [[1e300, 0], [0, 1]] }), { name: 'RangeError', message: /^options\.W_O\[0\]\[0\] is 1e\+300, beyond the range of Float32Array/ });
  // in range the same calls answer
  assert.deepEqual(Array.from(lab.linear(one, { data: new Float32Array([1, 1]), shape: [2, 1] }, [1]).data), [3]);
  assert.equal(lab.multiHeadAttention(g, g, g, { numberOfHeads: 1, headDimensions: 2, W_O: [[1, 0], [0, 1]] }).data.every(Number.isFinite), true);
  ok();
});

test('a Float64Array forward whose value has another T than key is the RangeError number[][] gives, not a trap or dropped rows', () => {
  const layer = new lab.MultiHeadAttention({ embedDim: 2, numHeads: 1 });
  const typed = (t) => ({ data: Float64Array.from({ length: t * 2 }, (_, i) => i / 7), shape: [t, 2] });
  // shorter than key (was a wasm trap, then "recursive use of an object" on every later call)
  assert.throws(() => layer.forward(typed(3), typed(3), typed(1)), { name: 'RangeError', message: /^value has T = 1 rows but key has T_k = 3/ });
  // longer than key (was a silent answer from value's first 3 rows)
  assert.throws(() => layer.forward(typed(3), typed(3), typed(5)), { name: 'RangeError', message: /^value has T = 5 rows but key has T_k = 3/ });
  // Float32Array names the mismatch the same way
  const f32 = (t) => ({ data: new Float32Array(t * 2), shape: [t, 2] });
  assert.throws(() => layer.forward(f32(3), f32(3), f32(5)), { name: 'RangeError', message: /^value has T = 5 rows but key has T_k = 3/ });
  assert.deepEqual(layer.forward(typed(3)).output.shape, [3, 2]);
  layer.free();
});

test('f32: a score whose dot product passes f32 on the way is a RangeError, not a key silently treated as masked', () => {
  // identity projections, so Q = query and K = key: 1e19 · (−3.5e19) overflows f32 although the sum, 2.5e38, does not
  const I = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
  const layer = new lab.MultiHeadAttention({ embedDim: 3, numHeads: 1, bias: false });
  layer.setWeights({ W_Q: I, W_K: I, W_V: I, W_O: I });
  const f32 = (rows) => ({ data: Float32Array.from(rows.flat()), shape: [rows.length, 3] });
  const [query, key, value] = [[[1e19, 1e19, 1e19]], [[-3.5e19, 3e19, 3e19], [1, 1, 1]], [[1, 0, 0], [0, 1, 0]]];
  const message = /^scores_0\[0\]\[0\] overflows to -Infinity in f32: computing the dot product of Q_0 row 0 and K_0 row 0 went beyond the largest f32/;
  assert.throws(() => layer.forward(f32(query), f32(key), f32(value)), { name: 'RangeError', message });
  // number[][] (f64) gets the right answer: all the weight on key 0
  assert.deepEqual(layer.forward(query, key, value).output, [[1, 0, 0]]);
  // the functions' typed forms (Q, K and V all T×3) refuse it too
  const Q = [...query, [0, 0, 1]];
  assert.throws(() => lab.dotProductAttention(f32(Q), f32(key), f32(value)), { name: 'RangeError', message: /^scores\[0\]\[0\] overflows to -Infinity in f32/ });
  assert.throws(() => lab.multiHeadAttention(f32(Q), f32(key), f32(value), 1, 3), { name: 'RangeError', message });
  layer.free();
  ok();
});

test('linear: a W that does not fit X is reported before b is read (fuzz seed 7, case 4546)', () => {
  const throwing = new Proxy([1], { get: (t, k) => { if (k === '0') throw new Error('get 0 throws'); return Reflect.get(t, k); } });
  assert.throws(() => lab.linear([[1, 1]], [[1]], throwing), { name: 'RangeError', message: /^W is 1×1 but X is 1×2/ });
  assert.throws(() => lab.linear({ data: new Float64Array(2), shape: [1, 2] }, { data: new Float64Array(1), shape: [1, 1] }, {}), { name: 'RangeError', message: /^W is 1×1 but X is 1×2/ });
  ok();
});

test('a float32 Transformer refuses an eps that is 0 in float32, naming eps, not the learning rate (fuzz seed 7, case 23811)', () => {
  const model = new lab.Transformer({ vocabSize: 2, contextLength: 3, embedDim: 4, numHeads: 2, numLayers: 2, positions: 'learned', bias: true, seed: 646 });
  const before = model.getState();
  assert.throws(() => model.trainStep([[0, 0], [0, 0], [0, 0]], { learningRate: 1e-3, eps: 5e-324 }), {
    name: 'RangeError',
    message: /^options\.eps is 4\.94e-324, which rounds to 0 in a float32 model/,
  });
  assert.deepEqual(model.getState(), before);
  // 1e-45 is a float32 subnormal: taken
  assert.ok(Number.isFinite(model.trainStep([[0, 1], [1, 0]], { learningRate: 1e-3, eps: 1e-45 }).loss));
  model.free();
  ok();
});

test("traceGroupedQueryAttention's rope option refuses a boxed Boolean as the other boxed primitives (fuzz seed 7, case 27425)", () => {
  const X = [[1, 2, 3, 4]];
  assert.throws(() => lab.traceGroupedQueryAttention(X, X, X, { numberOfHeads: 1, numberOfKVHeads: 1, headDimensions: 4, rope: new Boolean(true) }), { name: 'TypeError', message: /^options\.rope is / });
  ok();
});
