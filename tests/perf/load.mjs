// Page weight and time to interactive of the course pages, in Debian's Chromium through
// playwright-core with a throttled profile (Lighthouse's mobile one: 150 ms round trip, 1.6 Mbit/s
// down, 750 kbit/s up, CPU slowed 4×), served by `vite preview` of a built www/dist.
//   node tests/perf/load.mjs [--root <www dir>] [--runs 3] [--pages index,lab]
// Transfer: every response of the page and its workers until the network is quiet and the last request done, gzipped here
// (level 6, what a gzip-serving host sends), and as `vite preview` sent it (it compresses some types).
// Time to interactive (TTI), after Lighthouse: the end of the last long task (≥ 50 ms) before a
// 3 s window with no long task and at most 2 requests in flight, and never before
// DOMContentLoaded or before the page's own ready element is there. Median of the runs.
import { gzipSync } from 'node:zlib';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, a, i, all) => (a.startsWith('--') ? [...pairs, [a.slice(2), all[i + 1]]] : pairs), []));
const ROOT = resolve(args.root ?? new URL('../../www', import.meta.url).pathname);
const RUNS = Number(args.runs ?? 3);
const PAGES = [
  ['home', 'index.html', '#challenge-list li'],
  ['walkthrough', 'walkthrough.html', '#output-matrix'],
  ['challenge 01', 'challenge.html?id=01-dot-product-attention', '.cm-content'],
  ['challenge 07', 'challenge.html?id=07-rope', '.cm-content'],
  // lab.js has run (the model loads in its worker meanwhile); "model ready" is its first view (Train works)
  ['lab', 'lab.html', '.uplot', '#head-scores td'],
  ['lab, threads=1', 'lab.html?threads=1', '.uplot', '#head-scores td'], // the single-threaded build (the lab's default on a page that is not cross-origin isolated)
].filter(([name, path]) => !args.pages || args.pages.split(',').some((p) => path.startsWith(p)));
const QUIET_MS = 3000;
const NETWORK = { offline: false, latency: 150, downloadThroughput: (1.6 * 1024 * 1024) / 8, uploadThroughput: (750 * 1024) / 8 };
const CPU_SLOWDOWN = 4;

const { preview } = await import(pathToFileURL(join(ROOT, 'node_modules/vite/dist/node/index.js')));
const server = await preview({ root: ROOT, logLevel: 'silent', preview: { host: '127.0.0.1', port: 0, strictPort: false } });
const origin = `http://127.0.0.1:${server.httpServer.address().port}`;
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'] });

async function measure(path, ready, usable) {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  await page.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push([e.startTime, e.startTime + e.duration]); })
      .observe({ type: 'longtask', buffered: true });
  });
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  await cdp.send('Network.emulateNetworkConditions', NETWORK);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU_SLOWDOWN });
  const responses = [];
  let inFlight = 0;
  let lastChange = 0;
  context.on('request', () => { inFlight++; lastChange = Date.now(); });
  const done = () => { inFlight--; lastChange = Date.now(); };
  context.on('requestfailed', done);
  context.on('requestfinished', async (request) => {
    done();
    const response = await request.response();
    const body = await response?.body().catch(() => null); // decoded
    const sizes = await request.sizes().catch(() => null);
    if (body) responses.push({ url: request.url(), bytes: sizes?.responseBodySize ?? body.length, gzip: gzipSync(body, { level: 6 }).length, encoding: response.headers()['content-encoding'] ?? '' });
  });
  const started = Date.now();
  await page.goto(`${origin}/${path}`, { waitUntil: 'domcontentloaded' });
  await page.locator(ready).first().waitFor({ timeout: 120000 });
  const readyAt = await page.evaluate(() => performance.now());
  // the page's second milestone, if it has one: when what it loads in the background is there
  const usableAt = usable ? page.locator(usable).first().waitFor({ timeout: 180000 }).then(() => page.evaluate(() => performance.now())) : null;
  // wait for quiet: no long task and ≤ 2 requests in flight for QUIET_MS
  for (;;) {
    await page.waitForTimeout(250);
    const lastTaskEnd = await page.evaluate(() => Math.max(0, ...window.__longTasks.map(([, end]) => end)));
    const now = await page.evaluate(() => performance.now());
    if (now - lastTaskEnd >= QUIET_MS && inFlight <= 2 && Date.now() - lastChange >= QUIET_MS) break;
    if (Date.now() - started > 180000) throw new Error(`${path}: never quiet`);
  }
  const timing = await page.evaluate(() => ({ dcl: performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd, tasks: window.__longTasks }));
  // the transfer counts every response, so wait for the ≤ 2 still in flight too (the lab's worker
  // may still be fetching a .wasm of 0.4–0.8 MB at 1.6 Mbit/s); TTI is taken above, before this
  while (inFlight > 0) {
    await page.waitForTimeout(250);
    if (Date.now() - started > 300000) throw new Error(`${path}: requests never finished`);
  }
  await page.waitForTimeout(500); // the last requestfinished handler reads its body
  const lastTask = Math.max(0, ...timing.tasks.map(([, end]) => end));
  const tti = Math.max(timing.dcl, readyAt, lastTask);
  const usableMs = usableAt ? await usableAt : null;
  await context.close();
  const sum = (key, filter = () => true) => responses.filter(filter).reduce((s, r) => s + r[key], 0);
  const biggestJs = responses.filter((r) => r.url.endsWith('.js')).sort((a, b) => b.gzip - a.gzip)[0];
  return {
    tti, usable: usableMs, requests: responses.length, bytes: sum('bytes'), gzip: sum('gzip'),
    jsGzip: sum('gzip', (r) => r.url.endsWith('.js')), wasmGzip: sum('gzip', (r) => r.url.endsWith('.wasm')),
    biggestJs: biggestJs ? { name: biggestJs.url.split('/').pop(), gzip: biggestJs.gzip } : null,
    compressedByServer: responses.some((r) => r.encoding),
  };
}

const kb = (b) => (b / 1024).toFixed(0);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows = [];
for (const [name, path, ready, usable] of PAGES) {
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await measure(path, ready, usable));
  const r = runs[0];
  rows.push({ name, ...r, tti: median(runs.map((x) => x.tti)), ttis: runs.map((x) => Math.round(x.tti)), usable: usable ? median(runs.map((x) => x.usable)) : null, usables: runs.map((x) => x.usable) });
  console.error(`${name}: ${kb(r.gzip)} KB gzipped, TTI ${Math.round(median(runs.map((x) => x.tti)))} ms (${runs.map((x) => Math.round(x.tti)).join(', ')})`);
}
console.log('| page | requests | transfer, gzipped (KB) | as served (KB) | of it JS, gzipped (KB) | wasm, gzipped (KB) | largest JS chunk, gzipped (KB) | TTI, median of ' + RUNS + ' (s) | model ready, median (s) |');
console.log('|---|---:|---:|---:|---:|---:|---|---:|---:|');
for (const r of rows) {
  console.log(`| ${r.name} | ${r.requests} | ${kb(r.gzip)} | ${kb(r.bytes)} | ${kb(r.jsGzip)} | ${kb(r.wasmGzip)} | ${r.biggestJs ? `${kb(r.biggestJs.gzip)} (${r.biggestJs.name})` : '–'} | ${(r.tti / 1000).toFixed(2)} (${r.ttis.map((t) => (t / 1000).toFixed(2)).join(', ')}) | ${r.usable === null ? '–' : `${(r.usable / 1000).toFixed(2)} (${r.usables.map((t) => (t / 1000).toFixed(2)).join(', ')})`} |`);
}

await browser.close();
await new Promise((r) => server.httpServer.close(r));
