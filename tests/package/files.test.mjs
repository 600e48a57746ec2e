// `npm pack` in pkg/ gives exactly the package's runtime files: no tests, no Rust sources,
// no wasm-pack leftovers; and the manifest's version is Cargo.toml's.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PKG, ROOT, run, temporaryDirectory } from './support.mjs';

const EXPECTED_FILES = [
  'LICENSE', // MIT, as pkg.json and Cargo.toml say
  'README.md',
  'attention_lab_bg.js', // the bundler build's glue, imported by bundler.js
  'attention_lab_bg.wasm', // one module, shared by the three builds
  'bundler.d.ts',
  'bundler.js',
  'node.cjs',
  'node.d.cts',
  'package.json',
  'web.d.ts',
  'web.js',
];

test('npm pack lists exactly the expected files', () => {
  const [report] = JSON.parse(run('npm', ['pack', '--dry-run', '--json', '--loglevel=error'], { cwd: PKG }));
  const paths = report.files.map((f) => f.path).sort();
  // wasm-bindgen names the snippet folder after the crate and a hash of it
  const snippets = paths.filter((p) => p.startsWith('snippets/'));
  assert.equal(snippets.length, 1, 'the readers (src/wasm/convert.js) are packed as the one snippet');
  for (const path of snippets) assert.match(path, /^snippets\/attention-lab-[0-9a-f]{16}\/src\/wasm\/convert\.js$/);
  assert.deepEqual(paths.filter((p) => !p.startsWith('snippets/')), EXPECTED_FILES);
  assert.equal(report.name, 'attention-lab');
});

test('the packed manifest is pkg.json, with Cargo.toml\'s version', () => {
  const packed = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8'));
  assert.deepEqual(packed, JSON.parse(readFileSync(join(ROOT, 'pkg.json'), 'utf8')));
  const cargoVersion = readFileSync(join(ROOT, 'Cargo.toml'), 'utf8').match(/^version = "([^"]+)"/m)[1];
  assert.equal(packed.version, cargoVersion);
});

test('assembling refuses a pkg.json whose version is not Cargo.toml\'s', () => {
  // A copy of the script in a scratch tree whose pkg.json is one patch version ahead.
  const scratch = temporaryDirectory('version');
  mkdirSync(join(scratch, 'tests/package'), { recursive: true });
  copyFileSync(join(ROOT, 'tests/package/assemble.mjs'), join(scratch, 'tests/package/assemble.mjs'));
  copyFileSync(join(ROOT, 'Cargo.toml'), join(scratch, 'Cargo.toml'));
  const manifest = JSON.parse(readFileSync(join(ROOT, 'pkg.json'), 'utf8'));
  const [major, minor, patch] = manifest.version.split('.').map(Number);
  const ahead = `${major}.${minor}.${patch + 1}`;
  writeFileSync(join(scratch, 'pkg.json'), JSON.stringify({ ...manifest, version: ahead }));
  assert.throws(() => run(process.execPath, [join(scratch, 'tests/package/assemble.mjs')]),
    (error) => error.status === 1 && error.stderr.includes(`pkg.json has version ${ahead} but Cargo.toml has ${manifest.version}`));
  assert.ok(!existsSync(join(scratch, 'pkg')), 'no pkg/ was written');
});
