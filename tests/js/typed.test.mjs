// Typed-array input ({ data: Float32Array | Float64Array, shape }) and the number[][] fast path,
// against the Node build of the package.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const lab = require('../../target/pkg-node/attention_lab.js');

const Q = [[1, 2], [3, 4]];
const V = [[5, 6], [7, 8]];
const typed = (rows, A = Float32Array) => ({ data: A.from(rows.flat()), shape: [rows.length, rows[0].length] });
const rowsOf = ({ data, shape: [t, c] }) => Array.from({ length: t }, (_, i) => Array.from(data.subarray(i * c, (i + 1) * c)));

/** Deterministic values in [-1, 1). */
function values(t, c, seed) {
  let s = seed;
  return Array.from({ length: t }, () => Array.from({ length: c }, () => ((s = (s * 1103515245 + 12345) % 2147483648) / 1073741824) - 1));
}

test('Float32Array in, Float32Array out, within 1e-4 of the f64 result, masks included', () => {
  const [q, k, v] = [1, 2, 3].map((seed) => values(70, 12, seed));
  for (const extra of [{}, { causal: true }, { W_O: values(12, 12, 4) }]) {
    const options = { numberOfHeads: 3, headDimensions: 4, ...extra };
    const want = lab.multiHeadAttention(q, k, v, options);
    const got = lab.multiHeadAttention(typed(q), typed(k), typed(v), options);
    assert.ok(got.data instanceof Float32Array);
    assert.deepEqual(got.shape, [70, 12]);
    rowsOf(got).forEach((row, i) => row.forEach((x, j) => assert.ok(Math.abs(x - want[i][j]) <= 1e-4, `[${i}][${j}]`)));
  }
  const single = lab.dotProductAttention(typed(q), typed(k), typed(v), { causal: true });
  const want = lab.dotProductAttention(q, k, v, { causal: true });
  rowsOf(single).forEach((row, i) => row.forEach((x, j) => assert.ok(Math.abs(x - want[i][j]) <= 1e-4)));
});

test('Float64Array gives the number[][] bits, and the trace accepts it', () => {
  const [q, k, v] = [1, 2, 3].map((seed) => values(9, 6, seed));
  const options = { numberOfHeads: 2, headDimensions: 3, causal: true };
  const got = lab.multiHeadAttention(typed(q, Float64Array), typed(k, Float64Array), typed(v, Float64Array), options);
  assert.ok(got.data instanceof Float64Array);
  assert.deepEqual(rowsOf(got), lab.multiHeadAttention(q, k, v, options));
  const trace = lab.traceMultiHeadAttention(typed(q, Float64Array), typed(k, Float64Array), typed(v, Float64Array), options);
  assert.deepEqual(trace.output, rowsOf(got));
});

test('a batch [B, T, C] is B independent sequences', () => {
  const batch = (A) => ({ data: A.from([...Q.flat(), ...V.flat()]), shape: [2, 2, 2] });
  const out = lab.multiHeadAttention(batch(Float32Array), batch(Float32Array), batch(Float32Array), 2, 1);
  assert.deepEqual(out.shape, [2, 2, 2]);
  const first = lab.multiHeadAttention(typed(Q), typed(Q), typed(Q), 2, 1).data;
  const second = lab.multiHeadAttention(typed(V), typed(V), typed(V), 2, 1).data;
  assert.deepEqual(out.data, Float32Array.from([...first, ...second]));
});

test('bad typed input: precise TypeError / RangeError, and the module keeps working', () => {
  const cases = [
    [() => lab.multiHeadAttention({ data: new Float32Array([1, NaN, 3, 4]), shape: [2, 2] }, typed(Q), typed(V), 2, 1), 'RangeError', 'Q.data[1] (Q[0][1]) is NaN; expected a finite number'],
    [() => lab.multiHeadAttention({ data: new Float32Array(3), shape: [2, 2] }, typed(Q), typed(V), 2, 1), 'RangeError', 'Q.data has 3 values but Q.shape [2, 2] needs 4'],
    [() => lab.multiHeadAttention({ data: [1, 2, 3, 4], shape: [2, 2] }, typed(Q), typed(V), 2, 1), 'TypeError', 'Q.data is an array; expected a Float32Array or Float64Array'],
    [() => lab.multiHeadAttention({ data: new Int32Array(4), shape: [2, 2] }, typed(Q), typed(V), 2, 1), 'TypeError', /^Q\.data is a typed array of another kind/],
    [() => lab.multiHeadAttention({ data: new Float32Array(4), shape: [2, 0] }, typed(Q), typed(V), 2, 1), 'RangeError', 'Q.shape[1] is 0; expected a positive integer'],
    [() => lab.multiHeadAttention({ data: new Float32Array(4), shape: [4] }, typed(Q), typed(V), 2, 1), 'RangeError', 'Q.shape has 1 entries; expected [T, C] or [B, T, C]'],
    [() => lab.multiHeadAttention(typed(Q), Q, typed(V), 2, 1), 'TypeError', /^K is an array but Q is \{ data: Float32Array, shape: \[2, 2\] \}/],
    [() => lab.multiHeadAttention(Q, typed(Q), V, 2, 1), 'TypeError', 'K is an object but Q is number[][]; pass Q, K and V in the same form'],
    [() => lab.multiHeadAttention(typed(Q), typed(Q, Float64Array), typed(V), 2, 1), 'TypeError', /^K\.data is a Float64Array but Q\.data is a Float32Array/],
    [() => lab.multiHeadAttention(typed(Q), typed(Q), typed(V), 3, 1), 'RangeError', /^Q\/K\/V matrix dimensions must match the numberOfHeads \* headDimensions/],
    [() => lab.multiHeadAttention({ get data() { throw new Error('boom'); }, shape: [2, 2] }, typed(Q), typed(V), 2, 1), 'TypeError', 'Q.data could not be read (reading it threw: boom)'],
    [() => lab.traceMultiHeadAttention(typed(Q), typed(Q), typed(V), { numberOfHeads: 2, headDimensions: 1 }), 'TypeError', /^Q, K and V are Float32Array matrices; traceMultiHeadAttention records exact f64 steps/],
  ];
  for (const [call, name, message] of cases) assert.throws(call, { name, message });
  assert.ok(Math.abs(lab.multiHeadAttention(typed(Q), typed(Q), typed(V), 2, 1).data[0] - 6.761594) < 1e-5);
});

test('the number[][] fast path still names every problem and survives hostile input', () => {
  const getterRow = [1, 2];
  Object.defineProperty(getterRow, 1, { get() { throw new Error('boom'); } });
  assert.throws(() => lab.multiHeadAttention([getterRow, [3, 4]], Q, V, 2, 1), { name: 'TypeError', message: 'Q[0][1] could not be read (reading it threw: boom)' });
  const proxy = new Proxy([[1, 2], [3, 4]], { get(target, key) { if (key === '1') throw new Error('trap'); return Reflect.get(target, key); } });
  assert.throws(() => lab.multiHeadAttention(proxy, Q, V, 2, 1), { name: 'TypeError', message: 'Q[1] could not be read (reading it threw: trap)' });
  assert.throws(() => lab.multiHeadAttention([[1, 2], [3]], Q, V, 2, 1), { name: 'RangeError', message: /^Q\[1\] has 1 entries but Q\[0\] has 2/ });
  // eslint-disable-next-line no-sparse-arrays
  assert.throws(() => lab.multiHeadAttention([[1, , ], [3, 4]], Q, V, 2, 1), { name: 'TypeError', message: 'Q[0][1] is undefined; expected a number' });
  assert.throws(() => lab.multiHeadAttention([[1, Infinity], [3, 4]], Q, V, 2, 1), { name: 'RangeError', message: 'Q[0][1] is Infinity; expected a finite number' });
  const withGetter = [[1, 2], [3, 4]];
  Object.defineProperty(withGetter[0], 0, { get: () => 1 });
  assert.deepEqual(lab.multiHeadAttention(withGetter, Q, V, 2, 1), lab.multiHeadAttention(Q, Q, V, 2, 1));
});

test('linear: X·W + b in every form', () => {
  assert.deepEqual(lab.linear(Q, V, [1, 2]), [[20, 24], [44, 52]]);
  assert.deepEqual(Array.from(lab.linear(typed(Q), typed(V), new Float32Array([1, 2])).data), [20, 24, 44, 52]);
  assert.deepEqual(Array.from(lab.linear(typed(Q, Float64Array), typed(V, Float64Array)).data), [19, 22, 43, 50]);
  assert.throws(() => lab.linear(Q, [[1, 2, 3]]), { name: 'RangeError', message: 'W is 1×3 but X is 2×2: W must be [in, out] with in = 2, the columns of X' });
  assert.throws(() => lab.linear(Q, V, [1]), { name: 'RangeError', message: 'b has 1 entries but W has 2 columns' });
});

test('wasmMemoryBytes reports the linear memory', () => {
  assert.ok(lab.wasmMemoryBytes() >= 65536 && lab.wasmMemoryBytes() % 65536 === 0);
});
