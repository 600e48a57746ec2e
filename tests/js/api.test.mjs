// The Node build of the package, called the way an npm user calls it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { assertClose } from './support/numbers.mjs';

const require = createRequire(import.meta.url);
const lab = require('../../target/pkg-node/attention_lab.js');

const Q = [[1, 2], [3, 4]];
const V = [[5, 6], [7, 8]];
const EXPECTED = [[6.761594, 7.964028], [6.995055, 7.999329]];


test('the challenge example, options and positional forms', () => {
  assertClose(lab.multiHeadAttention(Q, Q, V, { numberOfHeads: 2, headDimensions: 1 }), EXPECTED, 1e-6);
  assertClose(lab.multiHeadAttention(Q, Q, V, 2, 1), EXPECTED, 1e-6);
});

test('errors are TypeError/RangeError with the challenge message, and the module keeps working', () => {
  assert.throws(() => lab.multiHeadAttention(Q, [[1, 2], [3, 4], [5, 6]], V, 2, 1),
    { name: 'RangeError', message: /^Q\/K\/V matrix dimensions must match the numberOfHeads \* headDimensions: K is 3×2 but Q is 2×2/ });
  assert.throws(() => lab.dotProductAttention('Q', Q, V), { name: 'TypeError', message: 'Q is a string; expected an array of rows (number[][])' });
  assert.throws(() => lab.dotProductAttention([[1, NaN]], [[1, 2]], [[1]]), { name: 'RangeError', message: 'Q[0][1] is NaN; expected a finite number' });
  assert.throws(() => lab.multiHeadAttention(Q, Q, V, { numberOfHeads: 2, headDimensions: 1, casual: true }),
    { name: 'TypeError', message: /^options\.casual is not an option \(did you mean causal\?\)/ });
  assertClose(lab.multiHeadAttention(Q, Q, V, 2, 1), EXPECTED, 1e-6);
});

test('the trace replays to the output in plain JS, bit for bit', () => {
  const W_O = [[1, 0], [0, 1]];
  const { output, steps } = lab.traceMultiHeadAttention(Q, Q, V, { numberOfHeads: 2, headDimensions: 1 });
  const env = new Map([['Q', Q], ['K', Q], ['V', V], ['W_O', W_O]]);
  const matMul = (a, b) => a.map((row) => b[0].map((_, j) => row.reduce((s, x, k) => s + x * b[k][j], 0)));
  const ops = {
    Slice: (s, [m]) => m.map((row) => row.slice(s.columns[0], s.columns[1])),
    Transpose: (s, [m]) => m[0].map((_, j) => m.map((row) => row[j])),
    MatMul: (s, [a, b]) => matMul(a, b),
    Mul: (s, [m]) => m.map((row) => row.map((x) => x * s.scalar)),
    StableSoftmax: (s, [m]) => m.map((row) => {
      const max = Math.max(...row);
      const e = row.map((x) => Math.exp(x - max));
      const sum = e.reduce((a, b) => a + b, 0);
      return e.map((x) => x / sum);
    }),
    Concat: (s, parts) => parts[0].map((_, r) => parts.flatMap((p) => p[r])),
  };
  let last;
  for (const step of steps) {
    last = ops[step.op](step, step.inputs.map((n) => env.get(n)));
    assert.deepEqual(last, step.values, `step ${step.name}`);
    env.set(step.name, last);
  }
  assert.deepEqual(last, output);
});
