// The lab's time to an induction head on 1 thread (lab.html?threads=1: the single-threaded build)
// and on N threads (lab.html?threads=N: the threads build with a pool of N), in Debian's Chromium
// (playwright-core), on `vite preview` of a built www/dist (cross-origin isolated, as the site is
// served). For each seed, the thread counts alternate (1, N, 1, N, … for --rounds rounds), so that
// load from other processes falls on both alike. Each run: open the page, check the thread line
// (#threads: data-threads, data-build) says what was asked for, press Train, poll #head-scores every
// 100 ms until a layer-2 head's induction score passes 0.4, and print the step, the seconds since
// Train, steps per second and the load average. Then the medians, and N ÷ 1 of the seconds.
//   node tests/perf/lab-threads.mjs [--threads 1,2] [--seeds 1,2,3] [--rounds 2]     (needs a built www/dist)
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = new URL('../../', import.meta.url).pathname;
const option = (name, fallback) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? process.argv[i + 1] : fallback; };
const THREADS = option('threads', '1,2').split(',').map(Number);
const SEEDS = option('seeds', '1,2,3').split(',').map(Number);
const ROUNDS = Number(option('rounds', '2'));
const INDUCTION = 0.4;

const { preview } = await import(pathToFileURL(join(ROOT, 'www/node_modules/vite/dist/node/index.js')));
const server = await preview({ root: join(ROOT, 'www'), logLevel: 'silent', preview: { host: '127.0.0.1', port: 0, strictPort: false } });
const origin = `http://127.0.0.1:${server.httpServer.address().port}`;
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });

async function run(seed, threads) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${origin}/lab.html?seed=${seed}&threads=${threads}`);
  await page.locator('#head-scores td').first().waitFor();
  const line = await page.$eval('#threads', (p) => ({ threads: Number(p.dataset.threads), build: p.dataset.build, text: p.textContent }));
  if (line.threads !== threads) throw new Error(`asked for ${threads} threads, the lab says: ${line.text}`);
  const started = Date.now();
  await page.click('#train');
  await page.waitForFunction((threshold) => [...document.querySelectorAll('#head-scores td[data-layer="2"]')].some((td) => Number(td.dataset.induction) > threshold),
    INDUCTION, { timeout: 300000, polling: 100 });
  const seconds = (Date.now() - started) / 1000;
  const step = Number(await page.evaluate(() => document.body.dataset.step));
  await context.close();
  if (errors.length) throw new Error(`console errors: ${errors.join('; ')}`);
  return { seed, threads, build: line.build, step, seconds, load: loadavg()[0] };
}

const cores = await (async () => { const c = await browser.newContext(); const p = await c.newPage(); await p.goto(`${origin}/index.html`); const n = await p.evaluate(() => navigator.hardwareConcurrency); await c.close(); return n; })();
console.log(`Chromium ${browser.version()}, navigator.hardwareConcurrency ${cores}; seeds ${SEEDS.join(', ')}; threads ${THREADS.join(' vs ')}; ${ROUNDS} round(s)`);
const results = [];
for (const seed of SEEDS) {
  for (let round = 0; round < ROUNDS; round++) {
    for (const threads of THREADS) {
      const r = await run(seed, threads);
      results.push(r);
      console.log(`seed ${seed}, ${threads} thread(s) (${r.build} build): step ${r.step}, ${r.seconds.toFixed(2)} s after Train, ${(r.step / r.seconds).toFixed(1)} steps/s; load average ${r.load.toFixed(2)}`);
    }
  }
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const summary = Object.fromEntries(THREADS.map((t) => {
  const rs = results.filter((r) => r.threads === t);
  return [t, { seconds: median(rs.map((r) => r.seconds)), stepsPerSecond: median(rs.map((r) => r.step / r.seconds)), steps: rs.map((r) => r.step) }];
}));
for (const [t, s] of Object.entries(summary)) console.log(`${t} thread(s): median ${s.seconds.toFixed(2)} s, ${s.stepsPerSecond.toFixed(1)} steps/s (steps ${s.steps.join(', ')})`);
const [one, ...others] = THREADS;
for (const t of others) console.log(`${t} threads ÷ ${one}: ${(summary[t].seconds / summary[one].seconds).toFixed(2)} of the time to induction, ${(summary[t].stepsPerSecond / summary[one].stepsPerSecond).toFixed(2)}× the steps per second`);
await browser.close();
server.httpServer.close();
