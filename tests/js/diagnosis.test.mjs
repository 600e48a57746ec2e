// The step locator (www/src/diagnosis.js) on a corpus of learner answers: tests/corpus/NN/*.js,
// each one answer whose first line says the step the diagnosis must locate (`// expect: scale`)
// or `// expect: none` for a right answer. Every wrong answer must also fail a fixed case (so
// the corpus holds real mistakes) and every right one pass them all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readdirSync, readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { compareMatrices } from '../../www/src/cases.js';
import { locate, probeCalls, STEPS, TABLES, walkthroughHref } from '../../www/src/diagnosis.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const lab = createRequire(import.meta.url)(join(ROOT, 'target/pkg-node/attention_lab.js'));
const CHALLENGES = Object.fromEntries(readdirSync(join(ROOT, 'challenges')).filter((f) => /^\d\d-/.test(f)).map((f) => [f.slice(0, 2), f]));
const testsOf = (folder) => JSON.parse(readFileSync(join(ROOT, 'challenges', folder, 'tests.json'), 'utf8'));
const scratch = mkdtempSync(join(tmpdir(), 'attention-lab-corpus-'));
const CORPUS = join(ROOT, 'tests/corpus');

async function load(source, name) {
  const file = join(scratch, `${name}-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, source);
  return import(pathToFileURL(file));
}

/** What the worker does: call the function on each case, keep the output or the error. */
function run(fn, calls) {
  return new Map(calls.map(({ id, args }) => {
    try {
      return [id, { output: fn(...structuredClone(args)) }];
    } catch (error) {
      return [id, { error: { name: error?.name ?? 'thrown value', message: String(error?.message ?? error) } }];
    }
  }));
}

/** The reference function: the package's, or the challenge's solution.js when the package has none (slidingWindowAttention). */
async function referenceOf(id, table) {
  if (typeof lab[table.function] === 'function') return (...args) => lab[table.function](...args);
  return (await import(pathToFileURL(join(ROOT, 'challenges', id, 'solution.js'))))[table.function];
}

export function corpusOf(number) {
  const dir = join(CORPUS, number);
  return readdirSync(dir).filter((f) => f.endsWith('.js')).sort().map((file) => {
    const source = readFileSync(join(dir, file), 'utf8');
    const match = source.match(/^\/\/ expect: ([\w-]+)/);
    if (!match) throw new Error(`${number}/${file}: the first line must be "// expect: <step>" or "// expect: none"`);
    return { file, source, expect: match[1] };
  });
}

for (const number of readdirSync(CORPUS).sort()) {
  const folder = CHALLENGES[number];
  const tests = testsOf(folder);
  for (const entry of corpusOf(number)) {
    test(`corpus ${number}/${entry.file}: ${entry.expect === 'none' ? 'right, no diagnosis' : `located at ${entry.expect}`}`, async () => {
      assert.ok(entry.expect === 'none' || STEPS[entry.expect], `unknown step ${entry.expect}`);
      const fn = (await load(entry.source, entry.file.replace(/\W/g, '_')))[tests.function];
      assert.equal(typeof fn, 'function');
      const fixed = tests.fixed.map((c) => {
        try {
          return compareMatrices(fn(...structuredClone(c.args)), c.expected, tests.tolerance).pass;
        } catch {
          return false;
        }
      });
      const found = locate(folder, run(fn, probeCalls(folder)), lab);
      if (entry.expect === 'none') {
        assert.ok(fixed.every(Boolean), 'a right answer must pass every fixed case');
        assert.equal(found, null, `no diagnosis expected, got: ${JSON.stringify(found)}`);
        return;
      }
      assert.ok(fixed.some((pass) => !pass), 'a wrong answer must fail a fixed case');
      assert.ok(found, 'expected a located step, got none');
      assert.equal(found.step, entry.expect, `located: ${found.step}: ${found.title} — ${found.detail}`);
      assert.ok(found.title && found.detail && found.stepLabel);
    });
  }
}

test('every table names known steps, runs its probes through the reference, and the reference answers get no diagnosis', async () => {
  for (const [id, table] of Object.entries(TABLES)) {
    assert.ok(CHALLENGES[id.slice(0, 2)] === id, `${id}: no such challenge folder`);
    assert.equal(testsOf(id).function, table.function, `${id}: the table's function is the challenge's`);
    for (const step of table.steps) assert.ok(STEPS[step], `${id}: unknown step ${step}`);
    const calls = probeCalls(id);
    assert.ok(calls.length > 0 && calls.length <= 40, `${id}: ${calls.length} probe calls`);
    assert.equal(new Set(calls.map((c) => c.id)).size, calls.length, `${id}: probe call ids are unique`);
    const fn = (await load(readFileSync(join(ROOT, 'challenges', id, 'solution.js'), 'utf8'), `solution-${id}`))[table.function];
    assert.equal(locate(id, run(fn, calls), lab), null, `${id}: solution.js`);
    // the package itself, called like a learner's function, is right too
    assert.equal(locate(id, run(await referenceOf(id, table), calls), lab), null, `${id}: the package`);
  }
});

test('odd outputs on the probes (undefined, strings, NaN, ragged rows, huge arrays, throws) never make the diagnosis throw', () => {
  const odd = [
    () => undefined,
    () => 'not a matrix',
    () => [[NaN]],
    () => [[1, 2], [3]],
    () => Array.from({ length: 100 }, () => [1]),
    () => [[{ unexpected: 'an object' }]],
    () => { throw new TypeError('x is not a function'); },
  ];
  for (const id of Object.keys(TABLES)) {
    for (const fn of odd) {
      const found = locate(id, run(fn, probeCalls(id)), lab);
      assert.ok(found === null || (typeof found.title === 'string' && typeof found.detail === 'string'), `${id}: ${fn}`);
    }
  }
  // no results at all (the probes were stopped): nothing located, nothing thrown
  assert.equal(locate('02-multi-head-attention', new Map(), lab), null);
});

test('a located step links to the walkthrough with the probe inputs, and the link carries them back exactly', async () => {
  const entry = corpusOf('02').find((e) => e.file.startsWith('03-scale-by-C'));
  const fn = (await load(entry.source, 'link'))[testsOf(CHALLENGES['02']).function];
  const found = locate(CHALLENGES['02'], run(fn, probeCalls(CHALLENGES['02'])), lab);
  assert.equal(found.step, 'scale');
  assert.ok(found.walkthrough, 'a link');
  const href = walkthroughHref(found.walkthrough);
  const params = new URL(href, 'http://localhost/').searchParams;
  assert.deepEqual(JSON.parse(params.get('Q')), found.walkthrough.Q);
  assert.deepEqual(JSON.parse(params.get('V')), found.walkthrough.V);
  assert.equal(params.get('numberOfHeads'), '2');
  assert.equal(params.get('headDimensions'), '3');
  assert.equal(params.get('step'), 'scale');
  assert.ok(!params.has('causal'));
  // expected and actual are for the step (the weights of one head), not the final output
  assert.equal(found.expected.label, 'weights_0');
  assert.deepEqual([found.expected.matrix.length, found.actual.matrix.length], [3, 3]);
});
