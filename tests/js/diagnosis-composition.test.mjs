// Challenge 11's diagnosis (challenges/11-find-the-circuit/diagnosis.json, the form `composition` of
// www/src/diagnosis/composition.js): one-line slips of the solution, as a learner makes them, each get the
// step at fault named, and the line of the slip (where the diagnosis names another line, the test says so
// with t.todo and what it said: nothing is loosened to pass); right answers in two styles build every step
// as the reference does; the starter gets a clear message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { challengeData, diagnose, traced } from './support/diagnose.mjs';
import { alignAnswer, traceCalls } from '../../www/src/diagnosis/first-line.js';
import { referenceSteps } from '../../www/src/diagnosis/reference.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const lab = createRequire(import.meta.url)(join(ROOT, 'target/pkg-node/attention_lab.js'));
const FOLDER = '11-find-the-circuit';
const read = (file) => readFileSync(join(ROOT, 'challenges', FOLDER, file), 'utf8');
const solution = read('solution.js');

// [what the learner did, the line as written, the slip, the step at fault]
const SLIPS = [
  ['K computed as Q: the transpose of W_QK forgotten', 'k: (h) => transpose(qk(second, h))', 'k: (h) => qk(second, h)', 'reader'],
  ['V-composition read through W_QK', 'v: (h) => ov(second, h)', 'v: (h) => qk(second, h)', 'reader'],
  ['W_K sliced by rows (its head\'s rows, not its columns transposed)', 'matMul(columns(layer.W_Q, h), transpose(columns(layer.W_K, h)))', 'matMul(columns(layer.W_Q, h), rows(layer.W_K, h))', 'slice'],
  ['W_QK built from W_Q twice (K computed as Q)', 'matMul(columns(layer.W_Q, h), transpose(columns(layer.W_K, h)))', 'matMul(columns(layer.W_Q, h), transpose(columns(layer.W_Q, h)))', 'circuit-qk'],
  ['W_O\'s columns of the head instead of its rows', 'matMul(columns(layer.W_V, h), rows(layer.W_O, h))', 'matMul(columns(layer.W_V, h), transpose(columns(layer.W_O, h)))', 'slice'],
  ['the head\'s columns start at h, not h·d', 'row.slice(h * d, (h + 1) * d)', 'row.slice(h, h + d)', 'slice'],
  ['the product in the wrong order (B·A)', 'norm(matMul(a, b)) / (norm(a) * norm(b))', 'norm(matMul(b, a)) / (norm(a) * norm(b))', 'product'],
  ['the Frobenius norm without its square root', 'return Math.sqrt(M.reduce((sum, row) => sum + row.reduce((s, x) => s + x * x, 0), 0));', 'return M.reduce((sum, row) => sum + row.reduce((s, x) => s + x * x, 0), 0);', 'norms'],
  ['the norms added in the denominator, not multiplied', 'norm(matMul(a, b)) / (norm(a) * norm(b))', 'norm(matMul(a, b)) / (norm(a) + norm(b))', 'ratio'],
];

const lineOf = (source, text) => source.split('\n').findIndex((l) => l.includes(text)) + 1;

for (const [what, right, slip, step] of SLIPS) {
  test(`11, ${what}: the step ${step} is named, with a line`, async (t) => {
    const source = solution.replace(right, slip);
    assert.notEqual(source, solution, 'the slip applies');
    const { failing, found } = await diagnose(FOLDER, source, lab);
    assert.ok(failing.length > 0, 'the slip fails a fixed case');
    assert.ok(found, 'a finding');
    assert.equal(found.step, step, found.title);
    assert.ok(Number.isInteger(found.line), `a line: ${found.title}`);
    assert.match(found.title, new RegExp(`^Line ${found.line}: `));
    const line = lineOf(source, slip);
    if (found.line !== line) t.todo(`the slip is on line ${line}; the diagnosis names line ${found.line}: ${found.lineText}`);
  });
}

test('11: the reader\'s slips are named by the probes in words (the other kind\'s scores), the norm\'s by the squares', async () => {
  const k = (await diagnose(FOLDER, solution.replace(SLIPS[0][1], SLIPS[0][2]), lab)).found;
  assert.match(k.title, /Your K-composition scores are the Q-composition scores: the reader of kind 'k' is W_QKᵀ, yours is W_QK$/);
  assert.match(k.foundBy, /C = 4, numberOfHeads = 2, kind 'k'/);
  const v = (await diagnose(FOLDER, solution.replace(SLIPS[1][1], SLIPS[1][2]), lab)).found;
  assert.match(v.title, /Your V-composition scores are the Q-composition scores: the reader of kind 'v' is W_OV of the second layer, yours is W_QK$/);
  const norms = (await diagnose(FOLDER, solution.replace(SLIPS[7][1], SLIPS[7][2]), lab)).found;
  assert.match(norms.title, /the squares of the package's: a Frobenius norm without its square root$/);
  // a slip the probes cannot word is told by the traced run, with its head
  const qk = (await diagnose(FOLDER, solution.replace(SLIPS[3][1], SLIPS[3][2]), lab)).found;
  assert.equal(qk.head, 'L2 h0');
  assert.match(qk.title, /departs from the reference at the QK circuit W_QK = W_Q\^h·\(W_K\^h\)ᵀ \(head L2 h0\)$/);
});

// a right answer in another style: loops, every circuit of both layers built, norms with Math.hypot
const LOOPS = `export function compositionScores(weights, { numberOfHeads, kind }) {
  const [first, second] = weights.layers;
  const C = first.W_Q.length;
  weights.layers.forEach((layer, l) => {
    for (const name of ['W_Q', 'W_K', 'W_V', 'W_O']) {
      const M = layer[name];
      if (M.length !== C || M.some((row) => row.length !== C)) throw new RangeError(\`weights.layers[\${l}].\${name} is \${M.length}×\${M[0]?.length ?? 0} but must be \${C}×\${C}\`);
    }
  });
  const d = C / numberOfHeads;
  const circuits = (layer) => {
    const ov = [];
    const qk = [];
    for (let h = 0; h < numberOfHeads; h++) {
      const o = [];
      const q = [];
      for (let a = 0; a < C; a++) {
        o.push([]);
        q.push([]);
        for (let b = 0; b < C; b++) {
          let s = 0;
          let t = 0;
          for (let c = h * d; c < (h + 1) * d; c++) {
            s += layer.W_V[a][c] * layer.W_O[c][b];
            t += layer.W_Q[a][c] * layer.W_K[b][c];
          }
          o[a].push(s);
          q[a].push(t);
        }
      }
      ov.push(o);
      qk.push(q);
    }
    return { ov, qk };
  };
  const one = circuits(first);
  const two = circuits(second);
  const readers = two.qk.map((M, j) => (kind === 'q' ? M : kind === 'k' ? M.map((_, a) => M.map((row) => row[a])) : two.ov[j]));
  const frobenius = (M) => Math.hypot(...M.flat());
  const out = [];
  for (const A of one.ov) {
    const row = [];
    for (const B of readers) {
      const P = A.map((r) => B[0].map((_, j) => r.reduce((s, x, k) => s + x * B[k][j], 0)));
      row.push(frobenius(P) / (frobenius(A) * frobenius(B)));
    }
    out.push(row);
  }
  return out;
}
`;

test('11: right answers (the solution; loops that build every circuit, norms by Math.hypot) pass and build every step as the reference does', async () => {
  const { data } = challengeData(FOLDER);
  // the loops index the weights in place: they build no slice (a step that says nothing there, not a wrong one)
  for (const [name, source, unbuilt] of [['solution', solution, []], ['loops', LOOPS, ['slice']]]) {
    const { failing, found } = await diagnose(FOLDER, source, lab);
    assert.deepEqual(failing, [], name);
    assert.equal(found, null, name);
    const aligned = alignAnswer(data, traced(source, 'compositionScores', traceCalls(data)), lab, 'compositionScores');
    assert.equal(aligned.wrong, null, `${name}: ${aligned.wrong?.step}`);
    // every other step is matched by some value of the run, on the three kinds together
    assert.deepEqual(aligned.statuses.filter((s) => s.status !== 'ok').map((s) => [s.step, s.status]), unbuilt.map((step) => [step, 'unknown']), name);
  }
});

test('11: the starter gets a clear message (its function throws "not written yet" on the first probe)', async () => {
  const { failing, found } = await diagnose(FOLDER, read('starter.js'), lab);
  assert.ok(failing.length > 0);
  assert.equal(found.step, null);
  assert.match(found.title, /Your function throws on a probe input \(C = 4, numberOfHeads = 2, kind 'q'/);
  assert.equal(found.detail, 'Error: not written yet');
});

test('11: the reference steps are the formula\'s, and the last is the package\'s scores', () => {
  const { data } = challengeData(FOLDER);
  for (const { args } of data.probes) {
    const { steps } = referenceSteps(data.reference, args, lab);
    const ratio = steps.find((s) => s.step === 'ratio').matrix;
    const [A] = steps.filter((s) => s.step === 'circuit-ov').map((s) => s.matrix);
    const [B] = steps.filter((s) => s.step === 'reader').map((s) => s.matrix);
    const [P] = steps.filter((s) => s.step === 'product').map((s) => s.matrix);
    const norm = (M) => Math.sqrt(M.flat().reduce((s, x) => s + x * x, 0));
    assert.ok(Math.abs(ratio[0][0] - norm(P) / (norm(A) * norm(B))) < 1e-12, args[1].kind);
    assert.deepEqual(steps.map((s) => s.step).filter((s, i, all) => all.indexOf(s) === i), ['slice', 'circuit-ov', ...(args[1].kind === 'k' ? ['circuit-qk'] : []), 'reader', 'product', 'norms', 'ratio']);
  }
});

test('11: when only nameHeads fails, the probes of compositionScores are not told a failing case (nothing to locate there)', async () => {
  const { locateOptions } = await import('../../www/src/report.js');
  const { circuitsCalls, circuitsCases } = await import('../../challenges/11-find-the-circuit/model-check.js');
  const { tests } = challengeData(FOLDER);
  const model = JSON.parse(read('model.json'));
  const scores = (await import(`data:text/javascript,${encodeURIComponent(solution)}`)).compositionScores;
  // compositionScores right, nameHeads answering one fixed pair
  const results = circuitsCalls(tests, model, lab).map(({ id, args, function: other }) => ({ id, output: other ? { previousToken: [0, 3], induction: [] } : scores(...structuredClone(args)) }));
  const judged = circuitsCases(lab, tests, model, results, String);
  assert.ok(judged.filter((c) => c.id.startsWith('naming-')).every((c) => !c.verdict.pass && c.function === 'nameHeads'));
  assert.ok(judged.filter((c) => c.id.startsWith('circuits-')).every((c) => c.verdict.pass));
  assert.deepEqual(locateOptions(judged).failing, []);
});
