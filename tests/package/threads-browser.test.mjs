// Threads in browsers (issue 15): `attention-lab/web` on a plain page in a fresh project, served
// with and without cross-origin isolation (COOP/COEP), in Chromium and Firefox. Isolated: init()
// loads the threads build, initThreadPool(2) starts a worker and resolves to 2, and the paths give
// the same bits before and after. Not isolated: the single-threaded build, initThreadPool resolves
// to 1 and threadsInfo says why. Both give the bytes Node gives on 2 threads (SHA-256).
// The isolated pages are served under a Content-Security-Policy whose worker-src is 'self' (as the
// course site's): the pool's workers are the package's own module file, not blob: URLs. And the
// same page bundled by Vite and by webpack (fixtures/threads-app) starts its pool too: each emits
// the package's worker module as a worker and bundles the glue into it, with no configuration.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FIXTURES, ISOLATION_HEADERS, TOOLS, freshProject, launchChromium, launchFirefox, pageResult, run, serve } from './support.mjs';

/** A policy as strict about workers as the course site's: scripts and workers from the origin only (the fixture page's two inline scripts aside). */
const csp = (inline) => `default-src 'self'; script-src 'self'${inline ? " 'unsafe-inline'" : ''} 'wasm-unsafe-eval'; worker-src 'self'; connect-src 'self'; img-src 'self' data:`;

let project, isolated, plain, stalled, bundled, webpacked, inNode;
before(async () => {
  project = freshProject('threads-page');
  isolated = await serve(project, { ...ISOLATION_HEADERS, 'Content-Security-Policy': csp(true) });
  plain = await serve(project);
  // the same isolated page, but a worker's script is never answered (the page's own import of
  // threads.js, a module script, is: the glue imports it)
  stalled = await serve(project, { ...ISOLATION_HEADERS, 'Content-Security-Policy': csp(true) }, { hold: (request) => request.headers['sec-fetch-dest'] === 'worker' });
  const app = freshProject('threads-app', { type: 'module' });
  copyFileSync(join(FIXTURES, 'threads-page', 'paths.js'), join(app, 'src', 'paths.js'));
  const build = spawnSync(join(TOOLS, 'vite'), ['build', '--logLevel', 'warn'], { cwd: app, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`vite build failed: ${build.stderr}`);
  bundled = await serve(join(app, 'dist'), { ...ISOLATION_HEADERS, 'Content-Security-Policy': csp(false) });
  bundled.assets = readdirSync(join(app, 'dist/assets'));
  bundled.stderr = build.stderr;
  run(join(TOOLS, 'webpack'), ['--no-color'], { cwd: app });
  webpacked = await serve(app, { ...ISOLATION_HEADERS, 'Content-Security-Policy': csp(false) });
  webpacked.url += 'webpack.html';
  // the same paths in Node, with the installed package's threads build on 2 threads
  const code = `import { paths } from ${JSON.stringify(pathToFileURL(join(FIXTURES, 'threads-page', 'paths.js')).href)};
const { default: lab } = await import(${JSON.stringify(pathToFileURL(join(project, 'node_modules', 'attention-lab', 'node.cjs')).href)});
const inUse = await lab.initThreadPool(2);
console.log(JSON.stringify({ inUse, hashes: await paths(lab) }));`;
  inNode = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: project, encoding: 'utf8', timeout: 60_000 }));
});
after(async () => {
  await isolated?.close();
  await plain?.close();
  await stalled?.close();
  await bundled?.close();
  await webpacked?.close();
});

test('Vite bundles attention-lab/web\'s threads build without a warning about it: the pool\'s worker module is an asset, and no Node module or stray file comes along', () => {
  // (not every warning: under load Vite may print its plugin timings)
  assert.doesNotMatch(bundled.stderr, /externalized|node:|attention.lab|threads\.js/, 'vite build warned about the package');
  assert.ok(bundled.assets.some((f) => /^threads-.*\.js$/.test(f)), `the workers' module (threads.js) is emitted: ${bundled.assets}`);
  assert.equal(bundled.assets.filter((f) => f.endsWith('.wasm')).length, 2, `the two .wasm (single-threaded and threads): ${bundled.assets}`);
  assert.deepEqual(bundled.assets.filter((f) => /browser-external|\.d\.|\.cjs/.test(f)), [], 'Node-module stubs, declarations or the Node glue in the bundle');
});

for (const [name, launch] of [['Chromium', launchChromium], ['Firefox', launchFirefox]]) {
  for (const [kind, server] of [['page', () => isolated], ['Vite-built page', () => bundled], ['webpack-built page', () => webpacked]]) test(`${name}: on a cross-origin isolated ${kind} (CSP worker-src 'self'), initThreadPool(2) starts 2 threads with the same bits`, async () => {
    const browser = await launch();
    try {
      const { result, errors } = await pageResult(browser, server().url);
      assert.deepEqual(errors, []);
      assert.equal(result.error, undefined, result.error);
      assert.equal(result.isolated, true);
      assert.deepEqual(result.before, { threads: 1, threadsBuild: true, reason: 'initThreadPool has not been called' });
      assert.equal(result.inUse, 2);
      assert.deepEqual(result.after, { threads: 2, threadsBuild: true, reason: null });
      assert.deepEqual(result.two, result.one);
      assert.equal(inNode.inUse, 2);
      assert.deepEqual(result.two, inNode.hashes, 'the same bytes as Node on 2 threads');
    } finally {
      await browser.close();
    }
  });

  test(`${name}: when the workers' module never arrives, initThreadPool gives up after its limit, resolves to 1, threadsInfo says why, and the calls run on 1 thread`, async () => {
    const browser = await launch();
    try {
      const { result, errors } = await pageResult(browser, stalled.url, { timeout: 60_000 });
      assert.deepEqual(errors, []);
      assert.equal(result.error, undefined, result.error);
      assert.equal(result.isolated, true);
      assert.equal(result.inUse, 1);
      assert.equal(result.after.threads, 1);
      assert.match(result.after.reason, /the workers did not start: a thread's worker did not report in within 20 s/);
      assert.deepEqual(result.two, result.one);
      assert.deepEqual(result.one, inNode.hashes, 'the same bytes as Node');
    } finally {
      await browser.close();
    }
  });

  test(`${name}: without isolation, the single-threaded build, initThreadPool resolves to 1 and threadsInfo says why`, async () => {
    const browser = await launch();
    try {
      const { result, errors } = await pageResult(browser, plain.url);
      assert.deepEqual(errors, []);
      assert.equal(result.error, undefined, result.error);
      assert.equal(result.isolated, false);
      assert.equal(result.inUse, 1);
      assert.equal(result.after.threads, 1);
      assert.equal(result.after.threadsBuild, false);
      assert.match(result.after.reason, /single-threaded/);
      assert.deepEqual(result.two, result.one);
    } finally {
      await browser.close();
    }
  });
}
