// The .d.ts files as a checked contract: `tsc --noEmit --strict` against the packed tarball,
// with TypeScript 7 and TypeScript 5, under each way a project resolves the package.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, freshProject, run } from './support.mjs';

const project = freshProject('types');

const COMPILERS = {
  'TypeScript 7': join(ROOT, 'tests/node_modules/typescript/bin/tsc'),
  'TypeScript 5': join(ROOT, 'tests/node_modules/typescript5/bin/tsc'),
};

/** Runs tsc on one of the fixture's tsconfig files; returns { status, output }. */
function tsc(compiler, config) {
  try {
    const output = run(process.execPath, [compiler, '-p', `tsconfig.${config}.json`, '--noEmit', '--strict', '--pretty', 'false', '--listFiles'], { cwd: project });
    return { status: 0, output };
  } catch (error) {
    return { status: error.status, output: error.stdout + error.stderr };
  }
}

/** Each tsconfig, what it compiles, and the package's declaration files it must resolve to. */
const COMPILING = {
  node: { what: 'every export from Node ESM (.mts) and CommonJS (.cts), no DOM types', declarations: ['node.d.cts'] },
  web: { what: "the 'attention-lab/web' subpath: init, initSync and the API", declarations: ['web.d.ts'] },
  bundler: { what: 'a bundler project (moduleResolution bundler), with the light entry attention-lab/attention', declarations: ['attention/bundler.d.ts', 'attention/web.d.ts', 'bundler.d.ts', 'web.d.ts'] },
  browser: { what: 'a bundler project with the browser condition, with the light entry', declarations: ['attention/bundler.d.ts', 'attention/web.d.ts', 'bundler.d.ts', 'web.d.ts'] },
};

/** The package's files in tsc's --listFiles output. */
const packageFiles = (output) =>
  [...output.matchAll(/node_modules[\\/]attention-lab[\\/](.+)$/gm)].map((m) => m[1].trim()).sort();

/** `{ line → sorted codes }` from `// expect-error TSxxxx` markers in bad-input.mts. */
function expectedErrors() {
  const expected = {};
  readFileSync(join(project, 'bad-input.mts'), 'utf8').split('\n').forEach((text, index) => {
    const codes = [...text.matchAll(/expect-error ((?:TS\d+ ?)+)/g)].flatMap((m) => m[1].trim().split(' '));
    if (codes.length) expected[index + 1] = codes.sort();
  });
  return expected;
}

/** `{ line → text }` from `expect-message <text>` markers in bad-input.mts: the text tsc's error on that line must contain. */
function expectedMessages() {
  const expected = {};
  readFileSync(join(project, 'bad-input.mts'), 'utf8').split('\n').forEach((text, index) => {
    const message = text.match(/expect-message (.+)$/)?.[1].trim();
    if (message) expected[index + 1] = message;
  });
  return expected;
}

/** `{ line → the whole text of its errors }` (the first line and the indented lines under it). */
function errorTexts(output) {
  const texts = {};
  let line = null;
  for (const text of output.split('\n')) {
    const start = text.match(/^.+?\((\d+),\d+\): error TS\d+:/);
    if (start) line = start[1];
    else if (!/^\s/.test(text)) line = null;
    if (line !== null) texts[line] = (texts[line] ?? '') + text + '\n';
  }
  return texts;
}

/** `{ line → sorted distinct codes }` from tsc's `file(line,col): error TSxxxx: …` lines. */
function reportedErrors(output, file) {
  const reported = {};
  for (const [, name, line, code] of output.matchAll(/^(.+?)\((\d+),\d+\): error (TS\d+):/gm)) {
    assert.equal(name, file, `an error outside ${file}:\n${output}`);
    reported[line] = [...new Set([...(reported[line] ?? []), code])].sort();
  }
  return reported;
}

for (const [compilerName, compiler] of Object.entries(COMPILERS)) {
  for (const [config, { what, declarations }] of Object.entries(COMPILING)) {
    test(`${compilerName}: ${what} compiles with --strict`, () => {
      const { status, output } = tsc(compiler, config);
      assert.equal(status, 0, output);
      assert.deepEqual(packageFiles(output), declarations);
    });
  }

  test(`${compilerName}: a string or flat array for a matrix, a misspelled numberOfHeads, fail with the expected codes`, () => {
    const expected = expectedErrors();
    assert.ok(Object.keys(expected).length >= 6, 'the fixture marks its bad lines');
    const { status, output } = tsc(compiler, 'bad');
    assert.notEqual(status, 0, `tsc must fail:\n${output}`);
    assert.deepEqual(reportedErrors(output, 'bad-input.mts'), expected, output);
  });

  test(`${compilerName}: a misspelled option on layer.forward, or mixed precisions, are named in the error (not a matrix form)`, () => {
    const expected = expectedMessages();
    assert.ok(Object.keys(expected).length >= 3, 'the fixture marks the messages it expects');
    const texts = errorTexts(tsc(compiler, 'bad').output);
    for (const [line, message] of Object.entries(expected)) {
      assert.ok(texts[line]?.includes(message), `bad-input.mts line ${line}: the error must say ${message}; tsc said:\n${texts[line]}`);
    }
  });
}
