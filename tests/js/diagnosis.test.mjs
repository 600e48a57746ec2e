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
