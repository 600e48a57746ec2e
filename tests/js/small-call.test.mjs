// The one-JS-call fast path for small, well-formed calls (convert.rs `readSmallCall`): it must give
// the bits of the careful path, and hand every call it does not fully understand to the careful path,
// which reads it again and names what is wrong.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import lab from './support/lab.mjs';

const { multiHeadAttention, dotProductAttention } = lab;
const Q = [[1, 2], [3, 4]];
const V = [[5, 6], [7, 8]];
// a symbol key makes the fast path step aside; the careful path ignores symbol keys
const careful = (options) => ({ ...options, [Symbol('careful')]: true });

function sameBits(a, b) {
  assert.deepEqual(a.map((row) => row.map((x) => Object.is(x, -0) ? '-0' : x)), b.map((row) => row.map((x) => Object.is(x, -0) ? '-0' : x)));
}

test('fast and careful paths give the same bits', () => {
  const rows = (t, c, s) => Array.from({ length: t }, (_, i) => Array.from({ length: c }, (_, j) => Math.sin(s + i * c + j) * 3));
  for (const [t, c, h] of [[2, 2, 2], [5, 6, 3], [16, 64, 4]]) {
    const [q, k, v] = [rows(t, c, 1), rows(t, c, 2), rows(t, c, 3)];
    for (const causal of [undefined, false, true]) {
      const options = { numberOfHeads: h, headDimensions: c / h, ...(causal === undefined ? {} : { causal }) };
      sameBits(multiHeadAttention(q, k, v, options), multiHeadAttention(q, k, v, careful(options)));
      sameBits(dotProductAttention(q, k, v, causal === undefined ? undefined : { causal }), dotProductAttention(q, k, v, careful({ causal })));
    }
    sameBits(multiHeadAttention(q, k, v, h, c / h), multiHeadAttention(q, k, v, careful({ numberOfHeads: h, headDimensions: c / h })));
  }
  // too large for the fast path's buffer (3·T·C > 4096): the per-matrix reader, same bits
  const [q, k, v] = [rows(40, 64, 1), rows(40, 64, 2), rows(40, 64, 3)];
  sameBits(multiHeadAttention(q, k, v, { numberOfHeads: 4, headDimensions: 16 }), multiHeadAttention(q, k, v, careful({ numberOfHeads: 4, headDimensions: 16 })));
});

test('options the fast path does not read itself still count: inherited W_O and mask, Proxy traps', () => {
  const W_O = [[0, 1], [1, 0]];
  const mask = [[true, false], [true, true]];
  const withW = multiHeadAttention(Q, Q, V, { numberOfHeads: 2, headDimensions: 1, W_O });
  sameBits(multiHeadAttention(Q, Q, V, Object.assign(Object.create({ W_O }), { numberOfHeads: 2, headDimensions: 1 })), withW);
  const masked = dotProductAttention(Q, Q, V, { mask });
  sameBits(dotProductAttention(Q, Q, V, Object.create({ mask })), masked);
  // a Proxy whose ownKeys lists only the head split but whose get answers W_O
  const proxy = new Proxy({ numberOfHeads: 2, headDimensions: 1 }, { get: (target, key) => (key === 'W_O' ? W_O : target[key]) });
  sameBits(multiHeadAttention(Q, Q, V, proxy), withW);
  // a getter that throws: the careful path's message, and the module keeps working
  const throwing = { numberOfHeads: 2, get headDimensions() { throw new Error('boom'); } };
  assert.throws(() => multiHeadAttention(Q, Q, V, throwing), { name: 'TypeError', message: 'options.headDimensions could not be read (reading it threw: boom)' });
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  assert.throws(() => multiHeadAttention(Q, Q, V, revoked.proxy), { name: 'TypeError' });
  assert.throws(() => multiHeadAttention([[1, 2], [3, NaN]], Q, V, 2, 1), { name: 'RangeError', message: 'Q[1][1] is NaN; expected a finite number' });
  assert.throws(() => multiHeadAttention(Q, Q, V, { numberOfHeads: 2, headDimensions: 1, casual: true }), { name: 'TypeError', message: /^options.casual is not an option \(did you mean causal\?\)/ });
  assert.throws(() => multiHeadAttention(Q, Q, V, 2, 2), { name: 'RangeError', message: /^Q\/K\/V matrix dimensions must match the numberOfHeads \* headDimensions/ });
  sameBits(multiHeadAttention(Q, Q, V, 2, 1), multiHeadAttention(Q, Q, V, { numberOfHeads: 2, headDimensions: 1 }));
});
