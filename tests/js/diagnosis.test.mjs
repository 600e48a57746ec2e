// The step locator (www/src/diagnosis/locate.js, with each challenge's diagnosis.json) on a corpus of learner answers: tests/corpus/NN/*.js,
// each one answer whose first line says the step the diagnosis must locate (`// expect: scale`)
// or `// expect: none` for a right answer. Every wrong answer must also fail a fixed or an error
// case (so the corpus holds real mistakes) and every right one pass them all. The error cases are
// passed to locate() as the page passes them: when only they fail, the step is 'check'.
// Below the first line, `// title: …`, `// detail: …`, `// probe: …` (the "Found by" line) and
// `// link: …` (the walkthrough address, decoded) say what the learner must read there (a part of
// the text), `// link-lacks: …` what the address must not hold: the wording is data, like the step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { existsSync, readdirSync, readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { compareMatrices } from '../../www/src/cases.js';
import { locate, probeCalls, STEPS, tableOf, walkthroughHref } from '../../www/src/diagnosis/locate.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const lab = createRequire(import.meta.url)(join(ROOT, 'target/pkg-node/attention_lab.js'));
const CHALLENGES = Object.fromEntries(readdirSync(join(ROOT, 'challenges')).filter((f) => /^\d\d-/.test(f)).map((f) => [f.slice(0, 2), f]));
const testsOf = (folder) => JSON.parse(readFileSync(join(ROOT, 'challenges', folder, 'tests.json'), 'utf8'));
/** A challenge's diagnosis.json (its probes: `locate`), or null. */
const dataOf = (folder) => (existsSync(join(ROOT, 'challenges', folder, 'diagnosis.json')) ? JSON.parse(readFileSync(join(ROOT, 'challenges', folder, 'diagnosis.json'), 'utf8')) : null);
/** The challenges with a probe diagnosis: folder → diagnosis.json. */
const PROBED = Object.fromEntries(Object.values(CHALLENGES).map((f) => [f, dataOf(f)]).filter(([, data]) => data?.locate));
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

/** The error cases of tests.json with the learner's result for each, as the page hands them to locate(). */
function errorCasesRun(fn, tests) {
  const results = run(fn, tests.errors.map((c, i) => ({ id: `error-${i}`, args: c.args })));
  return tests.errors.map((c, i) => ({ name: c.name, args: c.args, throws: c.throws, result: results.get(`error-${i}`) }));
}

/** The reference function: the package's, or the challenge's solution.js when the package has none (slidingWindowAttention). */
async function referenceOf(id) {
  const name = testsOf(id).function;
  if (typeof lab[name] === 'function') return (...args) => lab[name](...args);
  return (await import(pathToFileURL(join(ROOT, 'challenges', id, 'solution.js'))))[name];
}

export function corpusOf(number) {
  const dir = join(CORPUS, number);
  return readdirSync(dir).filter((f) => f.endsWith('.js')).sort().map((file) => {
    const source = readFileSync(join(dir, file), 'utf8');
    const match = source.match(/^\/\/ expect: ([\w-]+)/);
    if (!match) throw new Error(`${number}/${file}: the first line must be "// expect: <step>" or "// expect: none"`);
    // what the learner reads, as data: `// title: …`, `// detail: …`, `// probe: …` (the "Found by"
    // line), `// link: …` (the walkthrough address, decoded) must contain the text; `// link-lacks: …` must not
    const reads = [...source.matchAll(/^\/\/ (title|detail|probe|link|link-lacks): (.+)$/gm)].map(([, field, text]) => ({ field, text }));
    return { file, source, expect: match[1], reads };
  });
}

/** The located finding as the page shows it: headline, detail, "Found by" line and walkthrough address. */
function readable(found) {
  return { title: found.title, detail: found.detail, probe: found.foundBy, link: found.walkthrough ? decodeURIComponent(walkthroughHref(found.walkthrough)) : '(no link)' };
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
      const errors = errorCasesRun(fn, tests);
      const errorsPass = errors.map(({ result, throws }) => Boolean(result.error) && result.error.name === throws.name && result.error.message.startsWith(throws.messageStartsWith));
      const found = locate(PROBED[folder], run(fn, probeCalls(PROBED[folder])), lab, { errors });
      if (entry.expect === 'none') {
        assert.ok(fixed.every(Boolean), 'a right answer must pass every fixed case');
        assert.ok(errorsPass.every(Boolean), 'a right answer must pass every error case');
        assert.equal(found, null, `no diagnosis expected, got: ${JSON.stringify(found)}`);
        return;
      }
      assert.ok(fixed.some((pass) => !pass) || errorsPass.some((pass) => !pass), 'a wrong answer must fail a fixed or an error case');
      // the step 'check' only when the math is right: then only error cases fail
      if (entry.expect === 'check' && fixed.every(Boolean)) assert.ok(errorsPass.some((pass) => !pass));
      assert.ok(found, 'expected a located step, got none');
      assert.equal(found.step, entry.expect, `located: ${found.step}: ${found.title} — ${found.detail}`);
      assert.ok(found.title && found.detail && found.stepLabel);
      const shown = readable(found);
      for (const { field, text } of entry.reads) {
        if (field === 'link-lacks') assert.ok(!shown.link.includes(text), `the walkthrough link must not contain “${text}”: ${shown.link}`);
        else assert.ok(shown[field].includes(text), `the ${field} must contain “${text}”; it is: ${shown[field]}`);
      }
    });
  }
}

test('every table names known steps, runs its probes through the reference, and the reference answers get no diagnosis', async () => {
  for (const [id, data] of Object.entries(PROBED)) {
    const table = tableOf(data); // throws on an unknown form, step, check or probe
    for (const step of table.steps) assert.ok(STEPS[step], `${id}: unknown step ${step}`);
    const calls = probeCalls(data);
    assert.ok(calls.length > 0 && calls.length <= 40, `${id}: ${calls.length} probe calls`);
    assert.equal(new Set(calls.map((c) => c.id)).size, calls.length, `${id}: probe call ids are unique`);
    const fn = (await load(readFileSync(join(ROOT, 'challenges', id, 'solution.js'), 'utf8'), `solution-${id}`))[testsOf(id).function];
    assert.equal(locate(data, run(fn, calls), lab), null, `${id}: solution.js`);
    // the package itself, called like a learner's function, is right too
    assert.equal(locate(data, run(await referenceOf(id), calls), lab), null, `${id}: the package`);
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
  for (const [id, data] of Object.entries(PROBED)) {
    for (const fn of odd) {
      const found = locate(data, run(fn, probeCalls(data)), lab);
      assert.ok(found === null || (typeof found.title === 'string' && typeof found.detail === 'string'), `${id}: ${fn}`);
    }
  }
  // no results at all (the probes were stopped): nothing located, nothing thrown
  assert.equal(locate(PROBED['02-multi-head-attention'], new Map(), lab), null);
});

test('a located step links to the walkthrough with the probe inputs, and the link carries them back exactly', async () => {
  const entry = corpusOf('02').find((e) => e.file.startsWith('03-scale-by-C'));
  const fn = (await load(entry.source, 'link'))[testsOf(CHALLENGES['02']).function];
  const data = PROBED[CHALLENGES['02']];
  const found = locate(data, run(fn, probeCalls(data)), lab);
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

test('every challenge has a step table with probes, or a written reason in its folder why it cannot be probed', () => {
  for (const folder of Object.values(CHALLENGES)) {
    const reason = join(ROOT, 'challenges', folder, 'NO-PROBES.md');
    let written = '';
    try { written = readFileSync(reason, 'utf8'); } catch { /* no reason file */ }
    const data = PROBED[folder];
    assert.ok(data || written.trim().length > 0, `${folder}: no probes in diagnosis.json and no NO-PROBES.md`);
    if (data) assert.ok(probeCalls(data).length > 0 && tableOf(data).checks.length > 0, `${folder}: a table without probes or checks`);
  }
});

test('when only error cases fail, the headline names the case, what happened, and the error expected', async () => {
  const id = CHALLENGES['01'];
  const data = PROBED[id];
  const tests = testsOf(id);
  const right = (await load(readFileSync(join(ROOT, 'challenges', id, 'solution.js'), 'utf8'), 'solution-01'))[tests.function];
  const probes = run(right, probeCalls(data));
  const kCase = tests.errors.findIndex((c) => c.args[1][0].length !== c.args[0][0].length);
  assert.ok(kCase >= 0, 'challenge 01 has an error case with K narrower or wider than Q');
  const as = (result) => tests.errors.map((c, i) => ({ ...c, result: i === kCase ? result : { error: { name: c.throws.name, message: c.throws.referenceMessage } } }));
  // accepted: the case, the shapes, the error expected
  const accepted = locate(data, probes, lab, { errors: as({ output: [[1, 2], [3, 4]] }) });
  assert.equal(accepted.step, 'check');
  assert.match(accepted.title, new RegExp(`“${tests.errors[kCase].name}” was accepted; expected a RangeError`));
  assert.match(accepted.foundBy, /K 2×3/);
  assert.match(accepted.detail, /returned a 2×2 matrix instead of throwing/);
  // a crash (TypeError) is not a check
  const crashed = locate(data, probes, lab, { errors: as({ error: { name: 'TypeError', message: "Cannot read properties of undefined (reading '0')" } }) });
  assert.match(crashed.title, /threw TypeError, expected RangeError/);
  assert.match(crashed.detail, /a crash inside the computation, not a check/);
  // the right error with another message
  const worded = locate(data, probes, lab, { errors: as({ error: { name: 'RangeError', message: 'bad shapes' } }) });
  assert.match(worded.title, /the right error \(RangeError\) with another message/);
  // every error case right: nothing to say
  assert.equal(locate(data, probes, lab, { errors: as({ error: { name: 'RangeError', message: tests.errors[kCase].throws.referenceMessage } }) }), null);
  // a wrong step found by the probes comes first: the check is only the headline when the math is right
  const noScale = (await load(readFileSync(join(CORPUS, '01', '06-no-scaling.js'), 'utf8'), 'noscale'))[tests.function];
  assert.equal(locate(data, run(noScale, probeCalls(data)), lab, { errors: as({ output: [[1]] }) }).step, 'scale');
});

test('a failing answer that every probe answers right still gets a headline naming the failing case', () => {
  const id = CHALLENGES['02'];
  const data = PROBED[id];
  const found = locate(data, run(() => { throw new Error('unused'); }, []), lab, { failing: ['one token'] });
  assert.equal(found, null, 'no probe results at all: nothing to say');
  const name = testsOf(id).function;
  const rightResults = new Map(probeCalls(data).map(({ id: callId, args }) => [callId, { output: lab[name](...structuredClone(args)) }]));
  const fallback = locate(data, rightResults, lab, { failing: ['one token'] });
  assert.equal(fallback.step, null);
  assert.match(fallback.title, /Every probe input is answered right, yet a case fails: “one token”/);
});
