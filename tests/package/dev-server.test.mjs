// The packed tarball under the bundlers' dev servers, not only their builds, in headless Chromium: `vite`
// (its dependency optimizer pre-bundles `attention-lab` on the first request) and webpack-dev-server, each
// with the default import `import { multiHeadAttention } from 'attention-lab'` and no configuration for
// the package (the same fixtures as the builds in browser.test.mjs).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CHALLENGE, ROOT, assertCloseMatrix, freshProject, launchChromium, pageResult } from './support.mjs';

const tools = createRequire(join(ROOT, 'tests/package.json'));

let browser;
before(async () => { browser = await launchChromium(); });
after(async () => { await browser?.close(); });

/** Opens `url` and checks that the page computes the challenge's values, with no errors. */
async function showsTheChallengeValues(url) {
  const { result, errors } = await pageResult(browser, url);
  assert.deepEqual(errors, []);
  assert.equal(result.error, undefined);
  assertCloseMatrix(assert, result.output, CHALLENGE.expected, CHALLENGE.tolerance);
}

test('`vite` (the dev server, dependency optimizer on) serves an app with the default import', { timeout: 120_000 }, async () => {
  const project = freshProject('vite-app', { type: 'module' });
  const { createServer } = await import(pathToFileURL(tools.resolve('vite')).href);
  const server = await createServer({ root: project, configFile: false, logLevel: 'warn', server: { host: '127.0.0.1', port: 0, strictPort: false } });
  try {
    await server.listen();
    await showsTheChallengeValues(server.resolvedUrls.local[0]);
    // the optimizer ran, and did what the package asks: attention-lab is served from the package itself
    const deps = join(project, 'node_modules/.vite/deps');
    assert.ok(existsSync(deps), 'the dependency optimizer ran');
    assert.ok(!readdirSync(deps).some((f) => /attention/.test(f)), `attention-lab was not pre-bundled: ${readdirSync(deps)}`);
  } finally {
    await server.close();
  }
});

test('webpack-dev-server serves an app built with `experiments.asyncWebAssembly` and nothing else', { timeout: 120_000 }, async () => {
  const project = freshProject('webpack-app', { type: 'module' });
  const { default: config } = await import(pathToFileURL(join(project, 'webpack.config.js')).href);
  const { default: webpack } = await import(pathToFileURL(tools.resolve('webpack')).href);
  const { default: WebpackDevServer } = await import(pathToFileURL(tools.resolve('webpack-dev-server')).href);
  // `webpack serve --mode development` as an app does; the fixture's index.html loads dist/main.js
  const compiler = webpack({ ...config, mode: 'development', context: project, infrastructureLogging: { level: 'warn' } });
  const server = new WebpackDevServer({
    host: '127.0.0.1', port: 'auto', hot: false, liveReload: false, client: false,
    static: { directory: project, watch: false }, devMiddleware: { publicPath: '/dist/' },
  }, compiler);
  try {
    await server.start();
    await showsTheChallengeValues(`http://127.0.0.1:${server.options.port}/`);
  } finally {
    await server.stop();
  }
});
