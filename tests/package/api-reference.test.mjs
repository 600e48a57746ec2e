// The API reference in docs/api-reference/ is TypeDoc's rendering of the packed package's own
// declarations (pkg/bundler.d.ts, see tests/typedoc/typedoc.json), so it cannot drift from them:
// regenerated here, it must equal the committed copy file for file, and TypeDoc must find a doc
// comment on every export (its notDocumented validation, treated as an error).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PKG, ROOT, run, temporaryDirectory } from './support.mjs';

const TYPEDOC_DIR = join(ROOT, 'tests/typedoc');
const TYPEDOC = join(TYPEDOC_DIR, 'node_modules/.bin/typedoc');
const COMMITTED = join(ROOT, 'docs/api-reference');

/** Every file under `dir`, relative to it. */
const filesUnder = (dir) => readdirSync(dir, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile())
  .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
  .sort();

/** Runs TypeDoc with tests/typedoc/typedoc.json and `args`; returns { status, output }. */
function typedoc(args) {
  assert.ok(existsSync(TYPEDOC), 'TypeDoc is not installed; run `make tests/typedoc/node_modules`');
  try {
    const output = run(TYPEDOC, ['--logLevel', 'Warn', ...args], { cwd: TYPEDOC_DIR });
    return { status: 0, output };
  } catch (error) {
    return { status: error.status, output: `${error.stdout}${error.stderr}` };
  }
}

test('docs/api-reference is what `make docs` renders from pkg/bundler.d.ts today', () => {
  const fresh = temporaryDirectory('api-reference');
  const { status, output } = typedoc(['--markdown', fresh]);
  assert.equal(status, 0, `TypeDoc failed (an export without a doc comment?):\n${output}`);
  const expected = filesUnder(fresh);
  assert.ok(expected.includes('functions/multiHeadAttention.md') && expected.includes('classes/MultiHeadAttention.md'),
    `TypeDoc rendered only [${expected.join(', ')}]`);
  assert.deepEqual(filesUnder(COMMITTED), expected, 'docs/api-reference has other files than TypeDoc renders; run `make docs`');
  for (const file of expected) {
    assert.equal(readFileSync(join(COMMITTED, file), 'utf8'), readFileSync(join(fresh, file), 'utf8'),
      `docs/api-reference/${file} is stale; run \`make docs\` and commit the result`);
  }
});

test('the reference carries no timestamp, machine path or source link', () => {
  for (const file of filesUnder(COMMITTED)) {
    const text = readFileSync(join(COMMITTED, file), 'utf8');
    assert.doesNotMatch(text, /\/work\/|\/home\/|\/tmp\/|Defined in|github\.com|Generated (on|at)/, file);
  }
});

test('an export without a doc comment fails the build of the reference', () => {
  // pkg/bundler.d.ts with the doc comment of wasmMemoryBytes removed, in a scratch tsconfig
  const scratch = temporaryDirectory('undocumented');
  const declarations = readFileSync(join(PKG, 'bundler.d.ts'), 'utf8');
  const undocumented = declarations.replace(/\/\*\*(?:(?!\*\/)[\s\S])*\*\/\s*(export function wasmMemoryBytes\b)/, '$1');
  assert.notEqual(undocumented, declarations, 'bundler.d.ts no longer documents wasmMemoryBytes with a /** */ comment');
  writeFileSync(join(scratch, 'bundler.d.ts'), undocumented);
  // TypeDoc reads the tsconfig named in the options file before the command line, so the scratch
  // copy gets its own options file (the same settings) rather than --entryPoints/--tsconfig flags.
  const tsconfig = JSON.parse(readFileSync(join(TYPEDOC_DIR, 'tsconfig.json'), 'utf8'));
  writeFileSync(join(scratch, 'tsconfig.json'), JSON.stringify({ ...tsconfig, files: ['./bundler.d.ts'] }));
  const options = JSON.parse(readFileSync(join(TYPEDOC_DIR, 'typedoc.json'), 'utf8'));
  writeFileSync(join(scratch, 'typedoc.json'), JSON.stringify({ ...options, entryPoints: ['./bundler.d.ts'],
    tsconfig: './tsconfig.json', readme: 'none' }));
  const { status, output } = typedoc(['--options', join(scratch, 'typedoc.json'), '--markdown', join(scratch, 'out')]);
  assert.notEqual(status, 0, `TypeDoc accepted an undocumented export:\n${output}`);
  assert.match(output, /wasmMemoryBytes.*does not have any documentation/);
});

test('the reference covers every entry point: node.d.cts is bundler.d.ts, web.d.ts adds only wasm-bindgen\'s loaders', () => {
  const bundler = readFileSync(join(PKG, 'bundler.d.ts'), 'utf8');
  assert.equal(readFileSync(join(PKG, 'node.d.cts'), 'utf8'), bundler);
  const web = readFileSync(join(PKG, 'web.d.ts'), 'utf8');
  assert.ok(web.startsWith(bundler.trimEnd()), 'web.d.ts does not begin with bundler.d.ts');
  const added = [...web.slice(bundler.trimEnd().length).matchAll(/^export (?:default )?(?:type|interface|function) (\w+)/gm)]
    .map((m) => m[1]);
  assert.deepEqual(added.sort(), ['InitInput', 'InitOutput', 'SyncInitInput', '__wbg_init', 'initSync']);
});
