// The challenges as data: tests.json is up to date with the reference, every solution.js passes
// every case, and every listed mistake is both detectable and diagnosed from realistic wrong code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { readdirSync, readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { callReference, compareMatrices, randomArgs, referenceCall, seededRandom } from '../../www/src/cases.js';
import { diagnose, detectable, VARIANTS } from '../../www/src/variants.js';
import { MISTAKES, mistakenSource } from '../mistakes.mjs';
import { forward, repeatAccuracy, readoutCalls, readWeights } from '../../challenges/09-attention-in-a-model/forward.js';
import { grade as grade10, basisOf, dense, fixedEmbeddings, headHint, modelConfig } from '../../challenges/10-induction-head/grade.js';
import { circuitsCalls, circuitsCases, packageScores } from '../../challenges/11-find-the-circuit/model-check.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const lab = createRequire(import.meta.url)(join(ROOT, 'target/pkg-node/attention_lab.js'));
const FOLDERS = readdirSync(join(ROOT, 'challenges')).filter((f) => /^\d\d-/.test(f)).sort();
const testsOf = (folder) => JSON.parse(readFileSync(join(ROOT, 'challenges', folder, 'tests.json'), 'utf8'));
const scratch = mkdtempSync(join(tmpdir(), 'attention-lab-'));

/** Loads learner-style source (ES module text) and returns its exports. */
async function load(source, name) {
  const file = join(scratch, `${name}-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, source);
  return import(pathToFileURL(file));
}

test('tests.json files are what generate.mjs makes from cases.mjs and the reference', () => {
  execFileSync(process.execPath, [join(ROOT, 'challenges/generate.mjs'), '--check'], { stdio: 'pipe' });
});

// Challenges whose function has no softmax (so no large-score case): 07's rotaryEmbedding, 11's compositionScores.
const NO_SOFTMAX = new Set(['rotaryEmbedding', 'compositionScores']);
// Challenges graded on a model's behaviour, not on matrices (challenge 10): no cases of their own.
const isWeights = (tests) => tests.kind === 'weights';

test('there are at least the three required challenges, each with a large-score case', () => {
  assert.deepEqual(FOLDERS.slice(0, 3), ['01-dot-product-attention', '02-multi-head-attention', '03-causal-mask']);
  for (const folder of FOLDERS) {
    const tests = testsOf(folder);
    if (isWeights(tests)) {
      assert.ok(tests.model.configs.length > 0 && tests.fixed.length === 0 && tests.random.count === 0, folder);
      continue;
    }
    assert.ok(tests.random.count > 0 && tests.errors.length > 0 && tests.fixed.length > 0, folder);
    if (NO_SOFTMAX.has(tests.function)) continue; // nothing to overflow
    assert.ok(tests.variants.includes('no-max-subtraction') && detectable(tests, 'no-max-subtraction'), `${folder}: a case must overflow a softmax without max-subtraction`);
  }
});

for (const folder of FOLDERS) {
  test(`${folder}: solution.js passes every fixed, error and random case (challenge 10: the grading)`, async () => {
    const tests = testsOf(folder);
    const fn = (await load(readFileSync(join(ROOT, 'challenges', folder, 'solution.js'), 'utf8'), folder))[tests.function];
    if (isWeights(tests)) {
      // no cases: its weights pass the model's grading for every config
      for (const config of tests.model.configs) assert.ok(grade10(lab, config, tests.model.grading, fn(basisOf(config))).pass, JSON.stringify(config));
      return;
    }
    for (const c of tests.fixed) {
      const result = compareMatrices(fn(...structuredClone(c.args)), c.expected, tests.tolerance);
      assert.ok(result.pass, `${c.name}: ${result.reason}`);
    }
    for (const c of tests.errors) {
      assert.throws(() => fn(...structuredClone(c.args)), (e) => e.name === c.throws.name && e.message.startsWith(c.throws.messageStartsWith), c.name);
    }
    const next = seededRandom(20241121);
    for (let i = 0; i < (isWeights(tests) ? 0 : 200); i++) {
      const args = randomArgs(tests.random, next);
      const result = compareMatrices(fn(...structuredClone(args)), callReference(lab, tests, args), tests.tolerance);
      assert.ok(result.pass, `random case ${i}: ${result.reason}`);
    }
  });

  test(`${folder}: the starter exports the function and does not pass`, async () => {
    const tests = testsOf(folder);
    const fn = (await load(readFileSync(join(ROOT, 'challenges', folder, 'starter.js'), 'utf8'), folder))[tests.function];
    assert.equal(typeof fn, 'function');
    if (isWeights(tests)) {
      // the starter runs (zero weights of the right shapes) and fails every config's grading
      for (const config of tests.model.configs) {
        const graded = grade10(lab, config, tests.model.grading, fn(basisOf(config)));
        assert.equal(graded.error, undefined);
        assert.deepEqual(graded.checks.map((c) => c.pass), [false, false, false], JSON.stringify(config));
      }
      return;
    }
    assert.throws(() => fn(...structuredClone(tests.fixed[0].args)));
  });

  test(`${folder}: every listed mistake is detectable on the fixed cases`, () => {
    const tests = testsOf(folder);
    for (const id of tests.variants) {
      assert.ok(VARIANTS[id], `unknown mistake ${id}`);
      assert.ok(detectable(tests, id), `${id} gives the right answer on every fixed case`);
    }
  });
}

test('a tests.json reference is honoured: its options change the answer, and referenceCall merges them into the options argument', () => {
  const withReference = FOLDERS.map(testsOf).filter((t) => t.reference);
  assert.ok(withReference.length >= 2, '05 and 08 use reference');
  for (const tests of withReference) {
    assert.notEqual(tests.reference.function, tests.function, tests.challenge);
    const args = tests.fixed[0].args;
    const [name, merged] = referenceCall(tests, args);
    const at = tests.reference.optionsArgument;
    assert.equal(name, tests.reference.function);
    assert.deepEqual(merged[at], { ...merged[at], ...tests.reference.options }, 'reference.options are in the options argument');
    assert.deepEqual(merged.slice(0, at), args.slice(0, at));
    // without the reference's options the package gives another answer on some fixed case
    const plain = tests.fixed.map((c) => {
      const [, full] = referenceCall({ ...tests, reference: { ...tests.reference, options: {} } }, c.args);
      try { return lab[tests.reference.function](...full); } catch { return null; }
    });
    assert.ok(tests.fixed.some((c, i) => plain[i] === null || !compareMatrices(plain[i], c.expected, tests.tolerance).pass), `${tests.challenge}: reference.options make no difference on any fixed case`);
  }
});

/** Every argument a call passes, as paths: '0', '1', … and, inside an options object, '3.W_O'. */
const argumentPaths = (args) => args.flatMap((a, i) => (a && typeof a === 'object' && !Array.isArray(a) ? Object.keys(a).map((k) => `${i}.${k}`) : [String(i)]));
const valueAt = (args, path) => path.split('.').reduce((v, k) => v?.[k], args);

test('every challenge\'s random cases vary every argument its fixed cases pass (W_O, causal, window, base, offset…)', () => {
  for (const folder of FOLDERS) {
    const tests = testsOf(folder);
    if (isWeights(tests)) continue; // graded on a model: no random cases
    const paths = [...new Set(tests.fixed.flatMap((c) => argumentPaths(c.args)))];
    const next = seededRandom(7);
    const drawn = Array.from({ length: tests.random.count }, () => randomArgs(tests.random, next));
    for (const path of paths) {
      const values = new Set(drawn.map((args) => JSON.stringify(valueAt(args, path))));
      assert.ok(!values.has(undefined), `${folder}: the random cases never pass argument ${path}`);
      assert.ok(values.size > 1, `${folder}: argument ${path} is the same in all ${tests.random.count} random cases`);
    }
  }
});

test('02: W_O applied on the wrong side (or ignored) fails the random cases of every run', () => {
  const tests = testsOf('02-multi-head-attention');
  const transpose = (M) => M[0].map((_, j) => M.map((row) => row[j]));
  const wrongSide = (Q, K, V, options) => lab.multiHeadAttention(Q, K, V, { ...options, ...(options.W_O ? { W_O: transpose(options.W_O) } : {}) });
  const ignored = (Q, K, V, { numberOfHeads, headDimensions }) => lab.multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions });
  for (const [name, fn] of [['W_O on the wrong side', wrongSide], ['W_O ignored', ignored]]) {
    for (const seed of [1, 2, 3, 20241121, 4294967295]) {
      const next = seededRandom(seed);
      const failed = Array.from({ length: tests.random.count }, () => randomArgs(tests.random, next))
        .filter((args) => !compareMatrices(fn(...structuredClone(args)), callReference(lab, tests, args), tests.tolerance).pass).length;
      assert.ok(failed >= tests.random.count / 2, `${name}, seed ${seed}: only ${failed} of ${tests.random.count} random cases fail`);
    }
  }
});

test('the right answers are diagnosed as no mistake', async () => {
  for (const folder of FOLDERS) {
    const tests = testsOf(folder);
    const outputs = tests.fixed.map((c) => c.expected);
    assert.deepEqual(diagnose(tests, outputs), [], folder);
  }
});

for (const mistake of MISTAKES) {
  test(`${mistake.challenge}: code with "${mistake.id}" is diagnosed as exactly that`, async () => {
    const tests = testsOf(mistake.challenge);
    assert.ok(tests.variants.includes(mistake.id));
    const fn = (await load(mistakenSource(mistake), mistake.id))[tests.function];
    const outputs = tests.fixed.map((c) => {
      try {
        return fn(...structuredClone(c.args));
      } catch {
        return undefined;
      }
    });
    assert.deepEqual(diagnose(tests, outputs).map((d) => d.id), [mistake.id]);
  });
}

test('07-rope: the lesson\'s score table is what lesson-numbers.mjs computes with the package', async () => {
  const { table } = await import(pathToFileURL(join(ROOT, 'challenges/07-rope/lesson-numbers.mjs')));
  const readme = readFileSync(join(ROOT, 'challenges/07-rope/README.md'), 'utf8');
  assert.ok(readme.includes(table()), 'run node challenges/07-rope/lesson-numbers.mjs and paste its table into the README');
});

// ---- challenge 09: the trained model ------------------------------------------------------------

const C09 = '09-attention-in-a-model';
const model09 = JSON.parse(readFileSync(join(ROOT, 'challenges', C09, 'model.json'), 'utf8'));
const tests09 = testsOf(C09);
const evaluation09 = () => lab.repeatedTokens(tests09.model.evaluation);
/** The shipped weights in the package's Transformer (float64). */
function transformer09() {
  const model = new lab.Transformer(model09.config);
  model.setWeights({ W_E: model09.W_E, W_pos: model09.W_pos, W_U: model09.W_U, layers: model09.layers });
  return model;
}
const withFunction = (fn) => (calls) => calls.map((args) => fn(...structuredClone(args)));

test('09: forward.js around linear is the package Transformer\'s forward pass: same logits, same attention weights', async () => {
  const { tokens } = evaluation09();
  const model = transformer09();
  const out = model.forward(tokens, { needWeights: true });
  const { logits, calls } = await forward(lab, model09, tokens, withFunction(lab.multiHeadAttention));
  const [B, T, V] = out.logits.shape;
  assert.deepEqual([logits.length, logits[0].length, logits[0][0].length], [B, T, V]);
  for (let b = 0; b < B; b++) for (let t = 0; t < T; t++) for (let v = 0; v < V; v++) {
    const e = out.logits.data[(b * T + t) * V + v];
    assert.ok(Math.abs(logits[b][t][v] - e) <= 1e-9 * Math.max(1, Math.abs(e)), `logits[${b}][${t}][${v}]`);
  }
  // the readout of the page reads the package's attention weights exactly
  const h = model09.config.numHeads;
  for (const l of [0, 1]) {
    const read = readWeights(readoutCalls(calls[l][0]).map((args) => lab.multiHeadAttention(...args)), calls[l][0]);
    for (let i = 0; i < h; i++) for (let q = 0; q < T; q++) for (let k = 0; k < T; k++) {
      assert.ok(Math.abs(read[i][q][k] - out.weights[l].data[((0 * h + i) * T + q) * T + k]) <= 1e-12, `layer ${l} head ${i} [${q}][${k}]`);
    }
  }
  model.free();
});

test('09: the shipped model is an induction model, and tests.json holds its accuracy', async () => {
  const { tokens, repeated } = evaluation09();
  const model = transformer09();
  const scores = model.headScores(tokens);
  model.free();
  assert.ok(scores[1].some((s) => s.induction > 0.8), `layer 2 induction scores ${scores[1].map((s) => s.induction)}`);
  const { logits } = await forward(lab, model09, tokens, withFunction(lab.multiHeadAttention));
  const accuracy = repeatAccuracy(logits, tokens, repeated);
  assert.equal(accuracy, tests09.model.reference.accuracy);
  assert.ok(accuracy > 0.9, `${accuracy}`);
});

test('09: the solution predicts exactly what the reference does; a mask off by one or no mask breaks the copying', async () => {
  const { tokens, repeated } = evaluation09();
  const accuracyOf = async (source, name) => {
    const fn = (await load(source, name)).multiHeadAttention;
    return repeatAccuracy((await forward(lab, model09, tokens, withFunction(fn))).logits, tokens, repeated);
  };
  const reference = tests09.model.reference.accuracy;
  assert.equal(await accuracyOf(readFileSync(join(ROOT, 'challenges', C09, 'solution.js'), 'utf8'), 'solution-09'), reference);
  for (const id of ['mask-off-by-one', 'mask-ignored', 'w-o-skipped', 'no-scaling']) {
    const mistake = MISTAKES.find((m) => m.challenge === C09 && m.id === id);
    const accuracy = await accuracyOf(mistakenSource(mistake), id);
    assert.ok(accuracy < reference - 0.05, `${id}: ${accuracy} vs ${reference}`);
  }
});

test('09: the lesson\'s tables are what lesson-numbers.mjs computes with the package', async () => {
  const { table, scoresTable } = await import(pathToFileURL(join(ROOT, 'challenges', C09, 'lesson-numbers.mjs')));
  const readme = readFileSync(join(ROOT, 'challenges', C09, 'README.md'), 'utf8');
  assert.ok(readme.includes(await table()), 'run node challenges/09-attention-in-a-model/lesson-numbers.mjs and paste its tables into the README');
  assert.ok(readme.includes(scoresTable()));
  assert.ok(readme.includes(`(${(100 * tests09.model.reference.accuracy).toFixed(1)} %)`), 'the README states the reference accuracy');
  assert.ok(readme.includes(`(${tests09.model.reference.repeatedTokens} repeated tokens)`), 'the README states the number of repeated tokens');
  assert.ok(readme.includes(`${model09.training.steps} AdamW steps`), 'the README states the training steps');
});

// ---- challenge 10: the hand-built induction head -------------------------------------------------

const C10 = '10-induction-head';
const tests10 = testsOf(C10);
const load10 = async (source, name) => (await load(source, name)).inductionWeights;
const solution10 = () => readFileSync(join(ROOT, 'challenges', C10, 'solution.js'), 'utf8');

test('10: the solution passes every config with the numbers in tests.json; the stored weights are its weights', async () => {
  const fn = await load10(solution10(), 'solution-10');
  tests10.model.configs.forEach((config, n) => {
    const weights = fn(basisOf(config));
    const graded = grade10(lab, config, tests10.model.grading, weights);
    assert.ok(graded.pass, JSON.stringify(graded.checks));
    const stored = tests10.model.reference[n];
    graded.checks.forEach((c, i) => assert.ok(Math.abs(c.value - [stored.previousToken, stored.induction, stored.loss][i]) <= 1e-5 * Math.max(1, c.value), c.id));
    assert.deepEqual(dense(stored.weights), weights);
  });
});

test('10: one layer cannot do it: the counter-example fails every check, as tests.json says', () => {
  for (const stored of tests10.model.counterExample) {
    const graded = grade10(lab, stored.config, tests10.model.grading, dense(stored.weights));
    assert.deepEqual(graded.checks.map((c) => c.pass), [false, false, false]);
    assert.equal(stored.pass, false);
  }
});

test('10: a broken layer 2 (keys reading the token, not the previous token) fails only the induction head and the loss', async () => {
  // the learner's K-composition mistake: W_K of layer 2 matches the key's own token
  const source = solution10().replace('two.W_K[previous(i)][token + i] = 1;', 'two.W_K[token + i][token + i] = 1;');
  assert.notEqual(source, solution10());
  const fn = await load10(source, 'broken-10');
  for (const config of tests10.model.configs) {
    const graded = grade10(lab, config, tests10.model.grading, fn(basisOf(config)));
    assert.deepEqual(graded.checks.map((c) => [c.id, c.pass]), [['previous-token', true], ['induction', false], ['loss', false]]);
    assert.equal(graded.patterns[1][0].length, graded.tokens.length);
  }
});

test('10: a failing head is read from its pattern: blurred (right keys, gain too small) or looking elsewhere', async () => {
  const config = tests10.model.configs[0];
  // gains without the √C: the right keys, scores 12/√C too small to be sharp
  const blurred = await load10(solution10().replace('const sharp = 12 * Math.sqrt(C);', 'const sharp = 3;'), 'blurred-10');
  const graded = grade10(lab, config, tests10.model.grading, blurred(basisOf(config)));
  assert.deepEqual(graded.checks.map((c) => c.pass).slice(0, 2), [false, false]);
  assert.equal(headHint('previous-token', graded.patterns[0][0], graded.tokens).reason, 'blurred');
  assert.equal(headHint('induction', graded.patterns[1][0], graded.tokens).reason, 'blurred');
  // K-composition broken: layer 2 looks at the earlier copy itself, not the token after it
  const broken = await load10(solution10().replace('two.W_K[previous(i)][token + i] = 1;', 'two.W_K[token + i][token + i] = 1;'), 'elsewhere-10');
  const g2 = grade10(lab, config, tests10.model.grading, broken(basisOf(config)));
  assert.equal(headHint('induction', g2.patterns[1][0], g2.tokens).reason, 'elsewhere');
  // the reference's heads are in place
  const right = await load10(solution10(), 'right-10');
  const g3 = grade10(lab, config, tests10.model.grading, right(basisOf(config)));
  assert.equal(headHint('previous-token', g3.patterns[0][0], g3.tokens).share, 1);
  assert.equal(headHint('induction', g3.patterns[1][0], g3.tokens).share, 1);
});

test('10: weights of the wrong shape are refused by the model with a message naming the tensor', () => {
  const config = tests10.model.configs[0];
  const graded = grade10(lab, config, tests10.model.grading, { W_U: [[1]], layers: [] });
  assert.equal(graded.error.name, 'RangeError');
  assert.match(graded.error.message, /W_U/);
});

test('10: the basis and the model config agree with the package (W_E and W_pos one-hot, one head of C)', () => {
  const config = tests10.model.configs[1];
  const basis = basisOf(config);
  const model = new lab.Transformer(modelConfig(config));
  model.setWeights(fixedEmbeddings(basis));
  const w = model.getWeights();
  assert.equal(w.W_E[3][basis.token + 3], 1);
  assert.equal(w.W_pos[5][basis.position + 5], 1);
  assert.equal(model.config.embedDim, basis.embedDim);
  assert.equal(model.config.positions, 'shortformer');
  model.free();
});

test('10: the lesson\'s table is what lesson-numbers.mjs prints from tests.json', async () => {
  const { table, floor } = await import(pathToFileURL(join(ROOT, 'challenges', C10, 'lesson-numbers.mjs')));
  const readme = readFileSync(join(ROOT, 'challenges', C10, 'README.md'), 'utf8');
  assert.ok(readme.includes(table()));
  assert.ok(readme.includes(floor()), floor());
});

// ---- challenge 11: composition scores on the lab's trained model ----------------------------------

const C11 = '11-find-the-circuit';
const tests11 = testsOf(C11);
const model11 = JSON.parse(readFileSync(join(ROOT, 'challenges', C11, 'model.json'), 'utf8'));
const solution11 = () => readFileSync(join(ROOT, 'challenges', C11, 'solution.js'), 'utf8');
/** The model check's cases for a source, as the page judges them (the function called here instead of in a worker). */
async function check11(source, name) {
  const module = await load(source, name);
  const results = circuitsCalls(tests11, model11, lab).map(({ id, args, function: other }) => {
    try {
      return { id, output: module[other ?? 'compositionScores'](...structuredClone(args)) };
    } catch (error) {
      return { id, error: { name: error.name, message: error.message } };
    }
  });
  return circuitsCases(lab, tests11, model11, results, String);
}

test('11: the reference is the package\'s Transformer: its scores agree with a plain float64 computation on the trained model', async () => {
  const { compositionScores } = await load(solution11(), 'solution-11-direct');
  const scores = packageScores(lab, model11);
  for (const kind of ['q', 'k', 'v']) {
    const mine = compositionScores({ layers: model11.layers }, { numberOfHeads: model11.config.numHeads, kind });
    assert.ok(compareMatrices(mine, scores[kind], 1e-12).pass, kind);
  }
  // the baseline is about 1/√C (docs/api.md), and the shipped model is an induction model
  assert.ok(Math.abs(scores.baseline - 1 / Math.sqrt(model11.config.embedDim)) < 0.01, String(scores.baseline));
  assert.ok(model11.headScores[1].filter((s) => s.induction > 0.4).length >= 1);
});

test('11: the solution passes the model check, naming the head that behaves as the previous-token head; the starter fails every case of it', async () => {
  const right = await check11(solution11(), 'solution-11');
  assert.deepEqual(right.map((c) => [c.id, c.verdict.pass]), [['circuits-q', true], ['circuits-k', true], ['circuits-v', true], ['circuits-heads', true], ['naming-0', true], ['naming-1', true], ['naming-2', true], ['naming-3', true]]);
  const heads = right.find((c) => c.id === 'circuits-heads').model;
  assert.equal(heads.yours.row, heads.behaviour.previousToken);
  assert.deepEqual(heads.yours, tests11.model.reference.strongestK);
  const starter = await check11(readFileSync(join(ROOT, 'challenges', C11, 'starter.js'), 'utf8'), 'starter-11');
  assert.ok(starter.every((c) => !c.verdict.pass));
  assert.match(starter[0].verdict.reason, /your function threw: Error: not written yet/);
  assert.equal(starter.find((c) => c.id === 'naming-0').verdict.reason, 'your nameHeads threw: Error: nameHeads is not written yet');
});

test('11: nameHeads on the trained model returns the heads of the lesson\'s table (L1 h0; the four layer-2 heads), and its constructed cases catch a hard-coded answer, the brightest cell and a forgotten baseline', async () => {
  const right = await check11(solution11(), 'solution-11-naming');
  const model = right.find((c) => c.id === 'naming-0');
  assert.deepEqual(model.model.expected, { previousToken: [0, 0], induction: [[1, 0], [1, 1], [1, 2], [1, 3]] });
  assert.deepEqual(model.model.yours, model.model.expected);
  // the answer on the model comes from the heads' behaviour, not from the rule: the two agree
  assert.deepEqual(model.model.expected.previousToken, [0, model11.headScores[0].indexOf(model11.headScores[0].reduce((a, b) => (b.previousToken > a.previousToken ? b : a)))]);
  const verdicts = async (body, name) => (await check11(solution11().replace(/export function nameHeads\([^]*?\n}\n/, body), name)).filter((c) => c.id.startsWith('naming-')).map((c) => c.verdict);
  // hard-coded: right on the model, wrong on every constructed case
  const fixed = await verdicts('export function nameHeads() { return { previousToken: [0, 0], induction: [[1, 0], [1, 1], [1, 2], [1, 3]] }; }\n', 'naming-hard-coded');
  assert.deepEqual(fixed.map((v) => v.pass), [true, false, false, false]);
  assert.equal(fixed[1].reason, 'previousToken is [0, 0], expected [0, 2]; induction is [[1, 0], [1, 1], [1, 2], [1, 3]], expected [[1, 0], [1, 3]]');
  // the row of the largest cell instead of the largest row sum
  const brightest = await verdicts(`export function nameHeads(k, baseline) {
  const max = Math.max(...k.flat());
  const i = k.findIndex((row) => row.includes(max));
  return { previousToken: [0, i], induction: k[i].flatMap((x, j) => (x > baseline ? [[1, j]] : [])) };
}
`, 'naming-brightest');
  assert.deepEqual(brightest.map((v) => v.pass), [true, true, false, true]);
  assert.match(brightest[2].reason, /^previousToken is \[0, 0\], expected \[0, 1\]/);
  // every cell of the row named, baseline or not
  const allCells = await verdicts(`export function nameHeads(k) {
  const sums = k.map((row) => row.reduce((a, b) => a + b, 0));
  const i = sums.indexOf(Math.max(...sums));
  return { previousToken: [0, i], induction: k[i].map((_, j) => [1, j]) };
}
`, 'naming-no-baseline');
  assert.deepEqual(allCells.map((v) => v.pass), [true, false, true, false]);
  assert.equal(allCells[3].reason, 'induction is [[1, 0], [1, 1]], expected []');
  // not an object
  const pair = await verdicts('export function nameHeads() { return [0, 0]; }\n', 'naming-pair');
  assert.ok(pair.every((v) => !v.pass && /^expected an object \{ previousToken/.test(v.reason)));
});

test('11: K computed as Q (the transpose of W_QK forgotten) fails the random cases and K on the model, is named by the hint, and names the wrong head', async () => {
  const source = solution11().replace('k: (h) => transpose(qk(second, h))', 'k: (h) => qk(second, h)');
  assert.notEqual(source, solution11());
  const cases = await check11(source, 'k-as-q-11');
  const k = cases.find((c) => c.id === 'circuits-k');
  assert.equal(k.verdict.pass, false);
  assert.match(k.model.hint.text, /package's Q-composition scores: Q- and K-composition differ only by the transpose of W_QK/);
  // the K-composition read off Q's numbers names another layer-1 head: the naming case is not free
  const qScores = packageScores(lab, model11).q;
  const qRow = qScores.map((row) => row.reduce((a, b) => a + b, 0));
  const named = qRow.indexOf(Math.max(...qRow));
  const heads = cases.find((c) => c.id === 'circuits-heads');
  assert.notEqual(named, heads.model.behaviour.previousToken);
  assert.equal(heads.verdict.pass, false);
  assert.equal(heads.verdict.reason, `your K-composition's strongest row is layer-1 head ${named}, but the previous-token head is head ${heads.model.behaviour.previousToken}`);
  assert.match(heads.model.note, /^Read from your K-composition scores, which are not the package's\./);
  const fn = (await load(source, 'k-as-q-11-random')).compositionScores;
  const next = seededRandom(11);
  const kCases = Array.from({ length: 40 }, () => randomArgs(tests11.random, next)).filter(([, o]) => o.kind === 'k');
  assert.ok(kCases.length > 5 && kCases.some((args) => !compareMatrices(fn(...structuredClone(args)), callReference(lab, tests11, args), tests11.tolerance).pass));
});

test('11: scores without the norms of A and B (‖A·B‖ alone) fail the fixed and the model cases', async () => {
  const source = solution11().replace('norm(matMul(a, b)) / (norm(a) * norm(b))', 'norm(matMul(a, b))');
  assert.notEqual(source, solution11());
  const fn = (await load(source, 'no-norms-11')).compositionScores;
  assert.ok(tests11.fixed.some((c) => !compareMatrices(fn(...structuredClone(c.args)), c.expected, tests11.tolerance).pass));
  const cases = await check11(source, 'no-norms-11-model');
  assert.ok(cases.slice(0, 3).every((c) => !c.verdict.pass));
  // nameHeads is graded on the package's scores: a wrong compositionScores does not fail it
  assert.ok(cases.filter((c) => c.id.startsWith('naming-')).every((c) => c.verdict.pass));
});

test('11: the lesson\'s tables are what lesson-numbers.mjs computes with the package from model.json', async () => {
  const { scoresTables, headsTable } = await import(pathToFileURL(join(ROOT, 'challenges', C11, 'lesson-numbers.mjs')));
  const readme = readFileSync(join(ROOT, 'challenges', C11, 'README.md'), 'utf8');
  assert.ok(readme.includes(scoresTables()), 'run node challenges/11-find-the-circuit/lesson-numbers.mjs and paste its tables into the README');
  assert.ok(readme.includes(headsTable()));
  assert.ok(readme.includes(`${model11.training.steps} AdamW steps`));
  assert.ok(readme.includes(`baseline: ${tests11.model.reference.baseline.toFixed(3)}`));
});
