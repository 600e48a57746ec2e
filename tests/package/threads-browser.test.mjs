// Threads in browsers (issue 15): `attention-lab/web` on a plain page in a fresh project, served
// with and without cross-origin isolation (COOP/COEP), in Chromium and Firefox. Isolated: init()
// loads the threads build, initThreadPool(2) starts a worker and resolves to 2, and the paths give
// the same bits before and after. Not isolated: the single-threaded build, initThreadPool resolves
// to 1 and threadsInfo says why. Both give the bytes Node gives on 2 threads (SHA-256).
// The isolated pages are served under a Content-Security-Policy whose worker-src is 'self' (as the
// course site's): the pool's workers are the package's own module file, not blob: URLs. And the
// same page bundled by Vite and by webpack (fixtures/threads-app) starts its pool too: each emits
// the package's worker module as a worker and bundles the glue into it, with no configuration.
// And the pool's worker computes: on Linux, the browser's per-thread CPU times show that a worker
// thread of the page's process ran part of large products (a worker that dies on its start, as
// binaryen's -O3 made Node's, leaves every call to the page's thread with the same bits).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FIXTURES, ISOLATION_HEADERS, TOOLS, freshProject, launchChromium, launchFirefox, pageResult, run, serve } from './support.mjs';

/** A policy as strict about workers as the course site's: scripts and workers from the origin only (the fixture page's two inline scripts aside). */
const csp = (inline) => `default-src 'self'; script-src 'self'${inline ? " 'unsafe-inline'" : ''} 'wasm-unsafe-eval'; worker-src 'self'; connect-src 'self'; img-src 'self' data:`;

/**
 * The CPU time (utime + stime, in clock ticks) of every thread of every process under this one (the
 * browser this test launched and its renderer or content processes), by "pid/tid", with the
 * thread's name (`comm`).
 */
function browserThreadTicks() {
  const field = (stat, i) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[i]);
  const read = (path) => { try { return readFileSync(path, 'utf8'); } catch { return null; } }; // a process or thread may end meanwhile
  const childrenOf = new Map();
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    const stat = read(`/proc/${pid}/stat`);
    if (stat === null) continue;
    const parent = field(stat, 1);
    childrenOf.set(parent, [...(childrenOf.get(parent) ?? []), Number(pid)]);
  }
  const ticks = new Map();
  const pending = [...(childrenOf.get(process.pid) ?? [])];
  while (pending.length > 0) {
    const pid = pending.pop();
    pending.push(...(childrenOf.get(pid) ?? []));
    let tasks;
    try { tasks = readdirSync(`/proc/${pid}/task`); } catch { continue; }
    for (const tid of tasks) {
      const [stat, comm] = [read(`/proc/${pid}/task/${tid}/stat`), read(`/proc/${pid}/task/${tid}/comm`)];
      if (stat !== null && comm !== null) ticks.set(`${pid}/${tid}`, { pid, comm: comm.trim(), ticks: field(stat, 11) + field(stat, 12) });
    }
  }
  return ticks;
}

/** How the browsers on Linux name a dedicated worker's thread (`comm`: at most 15 characters). */
const WORKER_THREAD = { Chromium: /^DedicatedWorker/, Firefox: /^DOM Worker$/ };

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

  test(`${name}: a worker of the pool runs part of large f32 products on the isolated page (not the page's thread alone)`, { skip: process.platform !== 'linux' && 'needs /proc' }, async (context) => {
    const browser = await launch();
    try {
      // 40 products of 1024×256×1024 after initThreadPool(2): a fixed amount of work (about 1.5 s of CPU
      // on one thread, AMD EPYC), not a time, so a loaded machine makes it slower but no smaller
      const { result, errors, then } = await pageResult(browser, `${isolated.url}busy.html?threads=2`, {
        timeout: 60_000,
        andThen: async (page) => {
          const before = browserThreadTicks();
          // (a pool that waits for a thread that never comes would hang the page: give up, and close the browser)
          let timer;
          const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error('the 40 products did not finish within 3 minutes')), 180_000); });
          const times = await Promise.race([page.evaluate(() => window.products(40)), late]).finally(() => clearTimeout(timer));
          const after = browserThreadTicks();
          return { before, after, times };
        },
      });
      assert.equal(result.error, undefined, result.error);
      assert.equal(result.inUse, 2);
      assert.equal(then.times.length, 40);
      const gained = [...then.after].map(([key, { pid, comm, ticks }]) => ({ key, pid, comm, gained: ticks - (then.before.get(key)?.ticks ?? 0) }));
      // the page's process (Chromium's renderer, Firefox's content process): the one whose threads gained most
      const perProcess = new Map();
      for (const { pid, gained: g } of gained) perProcess.set(pid, (perProcess.get(pid) ?? 0) + g);
      const [pagePid] = [...perProcess].sort((a, b) => b[1] - a[1])[0];
      const threads = gained.filter((t) => t.pid === pagePid).sort((a, b) => b.gained - a.gained);
      const workers = threads.filter((t) => WORKER_THREAD[name].test(t.comm));
      const figures = `the page's process ${pagePid}, its busiest threads: ${JSON.stringify(threads.slice(0, 6).map((t) => `${t.comm} ${t.gained}`))}`;
      context.diagnostic(figures);
      assert.ok(workers.length > 0, `no thread named as a worker (${WORKER_THREAD[name]}) in ${figures}`);
      // a dead worker gets 0 ticks; a live one, about half the work (tens of ticks)
      assert.ok(workers[0].gained >= 10, `no worker computed: the busiest worker thread got ${workers[0].gained} clock ticks in 40 products (${figures})`);
      assert.ok(threads.some((t) => !WORKER_THREAD[name].test(t.comm) && t.gained >= 10), `the page's own thread did not compute? (${figures})`);
      // (after the figures: a worker that traps may also log an error)
      assert.deepEqual(errors, []);
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
