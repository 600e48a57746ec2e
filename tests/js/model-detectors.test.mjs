// The real-model page's detectors (www/src/model-detectors.js) against the package's headScores on the
// same model and tokens, and topK against a sort.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { headDetectors, rankHeads, topK } from '../../www/src/model-detectors.js';

const lab = createRequire(import.meta.url)('../../target/pkg-node/attention_lab.js');

test('previousToken, induction and firstToken equal the package\'s headScores; duplicateToken is the weight on earlier copies', () => {
  const model = new lab.Transformer({ vocabSize: 11, contextLength: 24, embedDim: 16, numHeads: 4, numLayers: 2, seed: 5, dtype: 'float64' });
  const { tokens } = lab.repeatedTokens({ vocabSize: 11, length: 8, batch: 3, seed: 9 });
  const out = model.forward(tokens, { needWeights: true });
  const expected = model.headScores(tokens);
  out.weights.forEach((w, l) => {
    const got = headDetectors(w, tokens);
    got.forEach((s, i) => {
      for (const k of ['previousToken', 'induction', 'firstToken']) assert.ok(Math.abs(s[k] - expected[l][i][k]) < 1e-12, `layer ${l} head ${i} ${k}: ${s[k]} vs ${expected[l][i][k]}`);
      assert.ok(s.duplicateToken > 0 && s.duplicateToken < 1);
    });
  });
  // duplicateToken by hand on one head: row t's weights on the earlier copies of token t
  const w = out.weights[1];
  const [B, h, T] = w.shape;
  let sum = 0; let n = 0;
  for (let b = 0; b < B; b++) for (let t = 1; t < T; t++) {
    const copies = tokens[b].slice(0, t).map((x, s) => (x === tokens[b][t] ? s : -1)).filter((s) => s >= 0);
    if (!copies.length) continue;
    n++;
    for (const s of copies) sum += w.data[((b * h + 2) * T + t) * T + s];
  }
  assert.ok(Math.abs(headDetectors(w, tokens)[2].duplicateToken - sum / n) < 1e-12);
  model.free();
});

test('a sequence with no repeated token has no induction or duplicate score (NaN), and ranking leaves it out', () => {
  const A = { data: new Float64Array(1 * 1 * 3 * 3), shape: [1, 1, 3, 3] };
  for (let t = 0; t < 3; t++) A.data[t * 3 + Math.max(0, t - 1)] = 1; // a previous-token head
  const [s] = headDetectors(A, [[4, 5, 6]]);
  assert.equal(s.previousToken, 1);
  assert.equal(s.firstToken, 0.5);
  assert.ok(Number.isNaN(s.induction) && Number.isNaN(s.duplicateToken));
  assert.deepEqual(rankHeads([[s]], 'induction'), []);
  assert.deepEqual(rankHeads([[s]], 'previousToken'), [{ layer: 0, head: 0, score: 1 }]);
  assert.throws(() => headDetectors(A, [[1, 2]]), RangeError);
});

test('topK is the k largest probabilities of a softmax, largest first', () => {
  const logits = Float32Array.from({ length: 500 }, (_, i) => Math.sin(i * 12.9898) * 7);
  const got = topK(logits, 10);
  const z = [...logits].reduce((a, x) => a + Math.exp(x), 0);
  const want = [...logits].map((x, id) => ({ id, p: Math.exp(x) / z })).sort((a, b) => b.p - a.p).slice(0, 10);
  assert.deepEqual(got.map((x) => x.id), want.map((x) => x.id));
  got.forEach((x, i) => assert.ok(Math.abs(x.p - want[i].p) < 1e-12));
});
