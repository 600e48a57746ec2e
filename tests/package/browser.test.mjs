// The packed tarball in headless Chromium: through a Vite build and a webpack 5 build (the `browser`
// condition picks the bundler build), the light entry `attention-lab/attention` through Vite, and from a
// plain <script type="module"> page importing `attention-lab/web`.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHALLENGE, PKG, TOOLS, assertCloseMatrix, freshProject, launchChromium, pageResult, run, serve } from './support.mjs';

let browser;
before(async () => { browser = await launchChromium(); });
after(async () => { await browser?.close(); });

/** Serves `root` on 127.0.0.1 and checks that its page computes the challenge's values, with no errors. */
async function showsTheChallengeValues(root) {
  const server = await serve(root);
  try {
    const { result, errors } = await pageResult(browser, server.url);
    assert.deepEqual(errors, []);
    assert.equal(result.error, undefined);
    assertCloseMatrix(assert, result.output, CHALLENGE.expected, CHALLENGE.tolerance);
  } finally {
    await server.close();
  }
}

test('a Vite app built with `vite build` shows the challenge values', { timeout: 120_000 }, async () => {
  const project = freshProject('vite-app', { type: 'module' });
  run(join(TOOLS, 'vite'), ['build', '--logLevel', 'warn'], { cwd: project });

  const assets = readdirSync(join(project, 'dist/assets'));
  assert.ok(assets.some((f) => /^attention_lab_bg-.*\.wasm$/.test(f)), `the .wasm is emitted as an asset: ${assets}`);
  const code = assets.filter((f) => f.endsWith('.js')).map((f) => readFileSync(join(project, 'dist/assets', f), 'utf8')).join();
  assert.ok(!code.includes('readFileSync'), 'the Node build did not leak into the browser bundle');

  await showsTheChallengeValues(join(project, 'dist'));
});

test('the same Vite app importing the light entry, attention-lab/attention, ships the attention-only .wasm and shows the challenge values', { timeout: 120_000 }, async () => {
  const project = freshProject('vite-app', { type: 'module' });
  const main = join(project, 'src/main.js');
  writeFileSync(main, readFileSync(main, 'utf8').replace("from 'attention-lab';", "from 'attention-lab/attention';"));
  run(join(TOOLS, 'vite'), ['build', '--logLevel', 'warn'], { cwd: project });

  const wasm = readdirSync(join(project, 'dist/assets')).filter((f) => f.endsWith('.wasm'));
  assert.equal(wasm.length, 1, `one .wasm asset: ${wasm}`);
  const emitted = readFileSync(join(project, 'dist/assets', wasm[0]));
  assert.ok(emitted.equals(readFileSync(join(PKG, 'attention/attention_lab_bg.wasm'))), 'the asset is the attention-only build');
  assert.ok(emitted.length < statSync(join(PKG, 'attention_lab_bg.wasm')).size, 'smaller than the whole build');

  await showsTheChallengeValues(join(project, 'dist'));
});

test('a webpack 5 app built with `experiments.asyncWebAssembly` and nothing else shows the challenge values', { timeout: 120_000 }, async () => {
  const project = freshProject('webpack-app', { type: 'module' });
  const config = readFileSync(join(project, 'webpack.config.js'), 'utf8');
  assert.match(config, /experiments: \{ asyncWebAssembly: true \}/);
  assert.doesNotMatch(config, /module:|plugins:|loader/, 'the fixture needs no loader or plugin');
  run(join(TOOLS, 'webpack'), ['--no-color'], { cwd: project });

  const emitted = readdirSync(join(project, 'dist'));
  const wasm = emitted.filter((f) => f.endsWith('.wasm'));
  assert.equal(wasm.length, 1, `one .wasm emitted: ${emitted}`);
  const packed = readFileSync(join(project, 'node_modules/attention-lab/attention_lab_bg.wasm'));
  assert.ok(readFileSync(join(project, 'dist', wasm[0])).equals(packed), 'webpack emits the package\'s .wasm unchanged');
  const code = emitted.filter((f) => f.endsWith('.js')).map((f) => readFileSync(join(project, 'dist', f), 'utf8')).join();
  assert.ok(!code.includes('readFileSync'), 'the Node build did not leak into the browser bundle');

  await showsTheChallengeValues(project); // index.html loads dist/main.js, which fetches the .wasm beside it
});

test('a plain <script type="module"> page, no bundler: import init from attention-lab/web, await init()', { timeout: 120_000 }, async () => {
  const project = freshProject('plain-page');
  assert.ok(existsSync(join(project, 'node_modules/attention-lab/web.js')));
  await showsTheChallengeValues(project);
});
