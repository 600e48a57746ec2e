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

// Challenges whose function has no softmax (so no large-score case): 07's rotaryEmbedding.
const NO_SOFTMAX = new Set(['rotaryEmbedding']);

test('there are at least the three required challenges, each with a large-score case', () => {
  assert.deepEqual(FOLDERS.slice(0, 3), ['01-dot-product-attention', '02-multi-head-attention', '03-causal-mask']);
  for (const folder of FOLDERS) {
    const tests = testsOf(folder);
    assert.ok(tests.random.count > 0 && tests.errors.length > 0 && tests.fixed.length > 0, folder);
    if (NO_SOFTMAX.has(tests.function)) continue; // nothing to overflow
    assert.ok(tests.variants.includes('no-max-subtraction') && detectable(tests, 'no-max-subtraction'), `${folder}: a case must overflow a softmax without max-subtraction`);
  }
});

for (const folder of FOLDERS) {
  test(`${folder}: solution.js passes every fixed, error and random case`, async () => {
    const tests = testsOf(folder);
    const fn = (await load(readFileSync(join(ROOT, 'challenges', folder, 'solution.js'), 'utf8'), folder))[tests.function];
    for (const c of tests.fixed) {
      const result = compareMatrices(fn(...structuredClone(c.args)), c.expected, tests.tolerance);
      assert.ok(result.pass, `${c.name}: ${result.reason}`);
    }
    for (const c of tests.errors) {
      assert.throws(() => fn(...structuredClone(c.args)), (e) => e.name === c.throws.name && e.message.startsWith(c.throws.messageStartsWith), c.name);
    }
    const next = seededRandom(20241121);
    for (let i = 0; i < 200; i++) {
      const args = randomArgs(tests.random, next);
      const result = compareMatrices(fn(...structuredClone(args)), callReference(lab, tests, args), tests.tolerance);
      assert.ok(result.pass, `random case ${i}: ${result.reason}`);
    }
  });

  test(`${folder}: the starter exports the function and does not pass`, async () => {
    const tests = testsOf(folder);
    const fn = (await load(readFileSync(join(ROOT, 'challenges', folder, 'starter.js'), 'utf8'), folder))[tests.function];
    assert.equal(typeof fn, 'function');
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
