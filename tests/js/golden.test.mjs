// The golden fixtures (tests/golden/golden.json): every export's results over seeded cases, bit for
// bit (Float32Array results: bits or within 1e-6 relative), against the Node build. The self-tests
// flip one bit of one computed result and check that the checker names that group and case.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GROUPS, attempt, compare, compute, loadPackage, readFixture } from '../golden/golden.mjs';

const lab = loadPackage();
const fixture = readFixture();

/** Flips bit `bit` (0 = lowest mantissa bit) of element `i` of a Float64Array/Float32Array or number[]. */
function flip(array, i, bit = 0) {
  if (array instanceof Float32Array) {
    new Uint32Array(array.buffer, array.byteOffset, array.length)[i] ^= 1 << bit;
    return;
  }
  const cell = new Float64Array([array[i]]);
  new BigUint64Array(cell.buffer)[0] ^= 1n << BigInt(bit);
  array[i] = cell[0];
}

/** The report line of `group` after recomputing it alone with `tamper` applied to case `index`. */
function tampered(group, index, change) {
  const computed = compute(lab, {
    only: [group],
    tamper: (name, i, record) => {
      if (name === group && i === index) change(record);
    },
  });
  const report = compare(fixture, computed, { all: false });
  assert.equal(report.length, 1);
  return report[0];
}

test('every group of golden.json is reproduced: f64 bit for bit, f32 bits or within 1e-6 relative', (t) => {
  const started = performance.now();
  const report = compare(fixture, compute(lab));
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const cases = report.reduce((s, line) => s + (fixture.groups[line.group]?.cases ?? 0), 0);
  t.diagnostic(`${report.length} groups, ${cases} cases in ${seconds} s (fixture from ${fixture.generatedFrom})`);
  for (const line of report) if (line.how !== 'bits') t.diagnostic(`${line.group}: ${line.how}; ${line.detail}`);
  const failed = report.filter((line) => !line.ok);
  assert.deepEqual(failed.map((line) => `${line.group}: ${line.how}; ${line.detail}`), []);
  assert.deepEqual(Object.keys(fixture.groups), Object.keys(GROUPS), 'golden.json has one entry per group, in order');
});

test('self-test: one flipped bit of an f64 output is reported with its group and case', () => {
  const line = tampered('multiHeadAttention options', 37, (record) => flip(record.result.ok[0], 0));
  assert.deepEqual([line.ok, line.how, line.firstBadCase], [false, 'differs', 37], line.detail);
  assert.match(line.detail, /^1 of 600 cases differ, the first is case 37$/);
});

test('self-test: one flipped bit in a trace step, in layer gradients and in grads() is reported', () => {
  let line = tampered('traceMultiHeadAttention', 5, (record) => flip(record.result.ok.steps[3].values[0], 0));
  assert.deepEqual([line.ok, line.firstBadCase], [false, 5], line.detail);
  const step = (record, label) => record.record.steps.find(([name]) => name === label)[1].ok;
  line = tampered('MultiHeadAttention new: forward, backward, grads, trace, setWeights', 2, (record) => flip(step(record, 'backward').query[0], 0, 51));
  assert.deepEqual([line.ok, line.firstBadCase], [false, 2], line.detail);
  line = tampered('MultiHeadAttention Float64Array', 9, (record) => flip(step(record, 'grads').W_Q[0], 0));
  assert.deepEqual([line.ok, line.firstBadCase], [false, 9], line.detail);
});

test('self-test: a changed error message or error class is reported', () => {
  let line = tampered('errors (fixed)', 3, (record) => { record.result.threw.message += '.'; });
  assert.deepEqual([line.ok, line.firstBadCase], [false, 3], line.detail);
  line = tampered('errors (fixed)', 0, (record) => { record.result.threw.class = 'RangeError'; });
  assert.deepEqual([line.ok, line.firstBadCase], [false, 0], line.detail);
});

test('self-test: Float32Array results pass within 1e-6 relative, and fail beyond it', () => {
  const group = 'dotProductAttention Float32Array';
  // the lowest mantissa bit: at most 2^-23 relative to the entry, so within 1e-6 of the largest
  let line = tampered(group, 11, (record) => flip(record.result.ok.data, 0, 0));
  assert.deepEqual([line.ok, line.how], [true, 'within 1e-6'], line.detail);
  assert.match(line.detail, /^1 of 200 cases differ in Float32 bits, largest relative difference /);
  // the top mantissa bit of the largest entry: a change of about half of it
  line = tampered(group, 11, (record) => {
    const data = record.result.ok.data;
    let at = 0;
    data.forEach((x, i) => { if (Math.abs(x) > Math.abs(data[at])) at = i; });
    flip(data, at, 22);
  });
  assert.deepEqual([line.ok, line.how, line.firstBadCase], [false, 'differs', 11], line.detail);
  // f64 values in an f32 group (grads() after an f32 training step) stay bit for bit
  line = tampered('MultiHeadAttention Float32Array training + backward', 4, (record) => {
    flip(record.record.steps.find(([name]) => name === 'grads')[1].ok.W_O[0], 0);
  });
  assert.deepEqual([line.ok, line.firstBadCase], [false, 4], line.detail);
});

test('a bug in the harness itself is thrown, not recorded as an answer', () => {
  assert.throws(() => attempt(() => null.x), TypeError);
  assert.deepEqual(attempt(() => lab.dotProductAttention([[NaN]], [[1]], [[1]])), {
    threw: { class: 'RangeError', name: 'RangeError', message: 'Q[0][0] is NaN; expected a finite number' },
  });
});

test('self-test: one flipped bit of a Transformer gradient (f64) or state (f32, beyond 1e-6) is reported', () => {
  const f64 = tampered('Transformer float64', 5, (record) => {
    const grads = record.record.find(([label]) => label === 'gradients')[1].ok.grads;
    flip(grads.W_E[0], 0);
  });
  assert.deepEqual([f64.ok, f64.how, f64.firstBadCase], [false, 'differs', 5], f64.detail);
  const f32 = tampered('Transformer float32', 3, (record) => {
    const state = record.record.find(([label]) => label === 'getState')[1].ok;
    flip(state.weights.W_U, 0, 22);
  });
  assert.equal(f32.ok, false, f32.detail);
});
