// Time to an induction head in the lab (docs/performance.md): for each seed, open lab.html?seed=N in
// Debian's Chromium (playwright-core), press Train, and poll #head-scores every 100 ms until a layer-2
// head's induction score passes 0.4; print the step, the seconds and the main-thread tasks ≥ 50 ms.
//   node tests/perf/induction.mjs [--seeds 1,2,3,4,5]     (needs a built www/dist)
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = new URL('../../', import.meta.url).pathname;
const i = process.argv.indexOf('--seeds');
const SEEDS = (i > 0 ? process.argv[i + 1] : '1,2,3,4,5').split(',').map(Number);
const { preview } = await import(pathToFileURL(join(ROOT, 'www/node_modules/vite/dist/node/index.js')));
const server = await preview({ root: join(ROOT, 'www'), logLevel: 'silent', preview: { host: '127.0.0.1', port: 0, strictPort: false } });
const origin = `http://127.0.0.1:${server.httpServer.address().port}`;
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
for (const seed of SEEDS) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${origin}/lab.html?seed=${seed}`);
  await page.locator('#head-scores td').first().waitFor();
  await page.evaluate(() => { window.longTasks = []; new PerformanceObserver((l) => { for (const e of l.getEntries()) window.longTasks.push(Math.round(e.duration)); }).observe({ type: 'longtask' }); });
  const started = Date.now();
  await page.click('#train');
  await page.waitForFunction(() => [...document.querySelectorAll('#head-scores td[data-layer="2"]')].some((td) => Number(td.dataset.induction) > 0.4), null, { timeout: 180000, polling: 100 });
  const seconds = (Date.now() - started) / 1000;
  const step = await page.evaluate(() => document.body.dataset.step);
  const longTasks = await page.evaluate(() => window.longTasks);
  console.log(`seed ${seed}: step ${step}, ${seconds.toFixed(1)} s after Train; main-thread tasks ≥ 50 ms: ${longTasks.length}${longTasks.length ? ` (longest ${Math.max(...longTasks)} ms)` : ''}; load average ${loadavg()[0].toFixed(1)}`);
  await context.close();
}
await browser.close();
server.httpServer.close();
