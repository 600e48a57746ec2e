// The real-model page with a GPT-2-small-shaped checkpoint (docs/performance.md, issue 31): C = 768,
// 12 layers, 12 heads, V = 50,257, random weights (tests/pretrained/checkpoint.mjs, written in memory,
// never committed), with model-fixtures.mjs's small tokenizer, served in the hub's layout by the site's
// preview server. In Debian's Chromium: download once (not timed), then for each thread count, load the
// page with the files in Cache Storage and time it to the first view (every head drawn, the top 10 shown),
// then generate 32 tokens greedily and read the first token's latency and the tokens per second the page
// reports.
//   node tests/perf/model-page.mjs [--threads 1,2]     (needs a built www/dist with the threads build)
import { loadavg, cpus, tmpdir } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { gpt2Checkpoint, GPT2_SMALL } from '../pretrained/checkpoint.mjs';
import { bpeTokenizer, hubPlugin } from '../e2e/model-fixtures.mjs';

const ROOT = new URL('../../', import.meta.url).pathname;
const i = process.argv.indexOf('--threads');
const THREADS = (i > 0 ? process.argv[i + 1] : '1,2').split(',').map(Number);
const started = Date.now();
const checkpoint = gpt2Checkpoint({ ...GPT2_SMALL, seed: 124 });
const tokenizer = bpeTokenizer('When Mary and John went to the store, John gave a drink to Mary.', 64);
const text = (o) => new TextEncoder().encode(JSON.stringify(o));
const files = { 'test/gpt2-small': { 'config.json': text(checkpoint.config), 'model.safetensors': checkpoint.weights, 'tokenizer.json': text(tokenizer) } };
console.log(`checkpoint: ${(checkpoint.weights.length / 1e6).toFixed(1)} MB written in ${((Date.now() - started) / 1000).toFixed(1)} s`);

const { preview } = await import(pathToFileURL(join(ROOT, 'www/node_modules/vite/dist/node/index.js')));
const server = await preview({ root: join(ROOT, 'www'), logLevel: 'silent', plugins: [hubPlugin(files)], preview: { host: '127.0.0.1', port: 0, strictPort: false } });
const origin = `http://127.0.0.1:${server.httpServer.address().port}`;
// a persistent profile: an incognito-like context's storage quota is too small to keep 500 MB
const profile = mkdtempSync(join(tmpdir(), 'attention-lab-model-perf-'));
const context = await chromium.launchPersistentContext(profile, { executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'], viewport: { width: 1280, height: 800 } });
context.setDefaultTimeout(600000);
const page = context.pages()[0] ?? await context.newPage();
const url = (threads) => `${origin}/model.html?hub=${encodeURIComponent(`${origin}/hub`)}&model=test/gpt2-small${threads ? `&threads=${threads}` : ''}`;
const views = () => page.waitForFunction(() => document.querySelectorAll('#grid [data-layer][data-head]').length === 144 && document.querySelectorAll('#predictions li').length === 10
  || document.querySelector('#status').classList.contains('error'));
const check = async () => { if (await page.evaluate(() => document.querySelector('#status').classList.contains('error'))) throw new Error(await page.textContent('#status')); };

await page.goto(url(1));
await page.click('#download');
await views();
await check();
if (!/kept in this browser\)/.test(await page.textContent('#status'))) throw new Error(`the model was not kept: ${await page.textContent('#status')}`);
console.log(`downloaded and shown once (not timed): ${await page.textContent('#status')}`);
console.log(`CPU: ${cpus()[0].model}, ${cpus().length} cores; load ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
for (const threads of THREADS) {
  const t0 = Date.now();
  await page.goto(url(threads));
  await views();
  await check();
  const firstView = (Date.now() - t0) / 1000;
  const status = await page.textContent('#status');
  const used = await page.textContent('#threads');
  await page.fill('#max-new', '32');
  await page.click('#generate');
  await page.waitForFunction(() => /tokens\/s|first after/.test(document.querySelector('#speed').textContent));
  const speed = await page.textContent('#speed');
  console.log(`threads=${threads}: first view ${firstView.toFixed(1)} s after navigation (files in Cache Storage); ${used.trim()} ${/loaded in [\d.]+ s/.exec(status)?.[0] ?? ''}; ${speed.trim()}`);
}
await context.close();
rmSync(profile, { recursive: true, force: true });
await new Promise((resolve) => server.httpServer.close(resolve));
