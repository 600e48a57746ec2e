// The real-model page (model.html, issue 31) in Chromium (Playwright) and Firefox ESR (Puppeteer over
// WebDriver BiDi), at desktop and phone sizes. The hub is this test's own: model-fixtures.mjs writes a
// tiny GPT-2 and a tiny Llama checkpoint and a byte-level BPE tokenizer.json, and serves them in the hub's
// layout (/hub/<repo>/resolve/main/<file>) from the site's own preview server, with the site's CSP.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { ROOT, SIZES, SCREENSHOTS, openPage, axeViolations, wideElements } from './harness.mjs';
import { launchFirefox } from '../package/support.mjs';
import { hubFiles, hubPlugin } from './model-fixtures.mjs';

const files = hubFiles();
const lab = createRequire(import.meta.url)(join(ROOT, 'target/pkg-node/attention_lab.js'));
const hub = { requests: [], mode: 'ok' };
let server;
let site;
let firefox;

before(async () => {
  const { preview } = await import(pathToFileURL(join(ROOT, 'www/node_modules/vite/dist/node/index.js')));
  server = await preview({ root: join(ROOT, 'www'), logLevel: 'silent', plugins: [hubPlugin(files, hub)], preview: { host: '127.0.0.1', port: 0, strictPort: false } });
  mkdirSync(SCREENSHOTS, { recursive: true });
  const origin = `http://127.0.0.1:${server.httpServer.address().port}`;
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
  site = { origin, browser };
});
after(async () => {
  await site?.browser.close();
  await firefox?.close();
  await new Promise((resolve) => (server ? server.httpServer.close(resolve) : resolve()));
});

const pageUrl = (repo) => `${site.origin}/model.html?hub=${encodeURIComponent(`${site.origin}/hub`)}&model=${repo}`;
const modelGets = (repo) => hub.requests.filter((r) => r === `GET ${repo}/model.safetensors`);
/** What the page keeps in Cache Storage: its URLs. */
const kept = (page) => page.evaluate(async () => { const cache = await caches.open('attention-lab-models'); return (await cache.keys()).map((r) => r.url); });
const statusOf = (page) => page.evaluate(() => document.querySelector('#status').textContent);

/** page.waitForFunction with one argument, in Playwright (Chromium) or Puppeteer (Firefox), which take it differently. */
const waitUntil = (page, fn, arg) => (typeof page.setInputFiles === 'function' ? page.waitForFunction(fn, arg) : page.waitForFunction(fn, {}, arg));

/** Waits until the views show `layers × heads` heads; a page that never gets there says its status. */
async function views(page, layers, heads) {
  try {
    await waitUntil(page, (n) => document.querySelector('#status').classList.contains('error')
      || (document.querySelectorAll('#grid [data-layer][data-head]').length === n && document.querySelectorAll('#predictions li').length === 10 && document.querySelectorAll('#detectors-probe button').length > 0), layers * heads);
  } catch (error) {
    throw new Error(`the views did not render (status: ${await statusOf(page).catch(() => '?')}): ${error.message}`);
  }
  const failed = await page.evaluate(() => document.querySelector('#status').classList.contains('error'));
  assert.ok(!failed, `the page says: ${await statusOf(page)}`);
}

/** Opens the page on a repo of the test hub, downloads it (checking the size offered first). */
async function downloadModel(page, repo) {
  const gets = modelGets(repo).length;
  await page.goto(pageUrl(repo));
  await page.waitForSelector('#download:not([hidden])');
  await page.waitForFunction(() => !document.querySelector('#offer').hidden);
  const offer = await page.evaluate(() => document.querySelector('#download').textContent);
  const total = Object.values(files[repo]).reduce((a, b) => a + b.length, 0);
  assert.match(offer, new RegExp(`${(total / 1e6).toFixed(2)} MB`), 'the size is said before the download');
  assert.equal(modelGets(repo).length, gets, 'nothing downloaded before the learner says so');
  await page.click('#download');
}

/** Every view of a loaded model, and what the learner can do there; returns the greedy tokens generated. */
async function exercise(page, { layers, heads }) {
  await views(page, layers, heads);
  const chips = await page.$$eval('#chips .chip', (cs) => cs.map((c) => [c.querySelector('.chip-text').textContent, Number(c.querySelector('.chip-id').textContent)]));
  assert.ok(chips.length > 20 && chips.every(([text, id]) => text.length > 0 && Number.isInteger(id)), 'token chips with ids');
  assert.ok(chips.some(([text]) => text.startsWith('·')), 'spaces are visible');
  // enlarge a head
  await page.click(`#grid [data-layer="${layers - 1}"][data-head="1"]`);
  await waitUntil(page, (l) => document.querySelector('#focus h3')?.textContent === `Layer ${l}, head 1`, layers - 1);
  // detectors: four columns, five ranks, on the text and on the probe
  assert.equal(await page.$$eval('#detectors-text thead th', (th) => th.length), 4);
  assert.equal(await page.$$eval('#detectors-probe tbody tr', (tr) => tr.length), 5);
  // next token and the logit lens: one row per hidden state (embeddings, each layer)
  const lensRows = await page.$$eval('#lens tbody tr', (tr) => tr.length);
  assert.equal(lensRows, layers + 1);
  const probabilities = await page.$$eval('#predictions li', (li) => li.map((x) => Number(/([\d.]+)%$/.exec(x.textContent)[1])));
  assert.ok(probabilities.every((p, i) => i === 0 || p <= probabilities[i - 1]), 'top 10, largest first');
  // pick another position: its predictions follow
  await page.click('#chips .chip[data-index="3"]');
  await page.waitForFunction(() => /^After token 3 /.test(document.querySelector('#next p')?.textContent ?? ''));
  // generation streams token by token
  await page.evaluate(() => { document.querySelector('#max-new').value = '8'; });
  await page.click('#generate');
  await page.waitForFunction(() => /tokens\/s/.test(document.querySelector('#speed').textContent));
  const generated = await page.$$eval('#generated .new-token', (s) => s.map((x) => Number(x.dataset.id)));
  assert.equal(generated.length, 8);
  return { tokens: chips.map(([, id]) => id), generated };
}

/**
 * The enlarged head's walkthrough link: the head's own Q, K, V on the text's first tokens, whose weights
 * (recomputed by the package in f64) are the model's own to float32 precision; the walkthrough opens on it.
 */
async function walkthroughLink(page, name, note = /./) {
  await page.waitForSelector('#open-walkthrough');
  const difference = Number(await page.evaluate(() => document.querySelector('[data-max-difference]').dataset.maxDifference));
  assert.ok(difference < 1e-4, `the walkthrough's weights are ${difference} from the model's own`);
  const href = await page.evaluate(() => document.querySelector('#open-walkthrough').href);
  await page.goto(href);
  await page.waitForSelector('#from-model');
  const said = await page.evaluate(() => document.querySelector('#from-model').textContent);
  assert.match(said, /layer \d+, head 1\. Q, K and V are that head's own, on the first 12 tokens/);
  assert.match(said, note);
  await page.waitForSelector('#step-view table');
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

/** Ablation by click: the mean loss and some tokens' losses change; switching every head back on clears it. */
async function ablate(page, tokenCount, name) {
  await page.click('input[name="click"][value="ablate"]');
  await page.click('#grid [data-layer="0"][data-head="1"]');
  await page.waitForFunction(() => /Switched off: L0 H1/.test(document.querySelector('#ablation').textContent));
  const changes = await page.$$eval('#ablation-tokens .loss-chip', (cs) => cs.map((c) => Number(c.dataset.change)));
  assert.equal(changes.length, tokenCount - 1);
  assert.ok(changes.some((d) => Math.abs(d) > 1e-4), 'switching a head off changes the loss of some token');
  const [before, afterLoss] = (await page.evaluate(() => document.querySelector('#ablation').textContent)).match(/Mean loss ([\d.]+) → ([\d.]+)/).slice(1).map(Number);
  assert.notEqual(before, afterLoss);
  await page.locator('section[aria-labelledby="ablation-heading"]').screenshot({ path: join(SCREENSHOTS, `model-ablation-${name}.png`) });
  await page.click('#restore');
  await page.waitForFunction(() => /No head is switched off/.test(document.querySelector('#ablation').textContent));
}

async function checkPage(page, log, name) {
  await page.evaluate(() => document.fonts.ready);
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  assert.deepEqual(await wideElements(page), [], 'nothing wider than the viewport');
  assert.deepEqual(log.errors, []);
}

describe('the real-model page in Chromium', () => {
  test('without a model it loads offline: no request leaves the origin, axe is clean', async () => {
    const { context, page, log, url } = await openPage(site, SIZES.phone);
    await page.goto(url('model.html'), { waitUntil: 'networkidle' });
    await checkPage(page, log, 'model-empty-phone');
    assert.deepEqual(await axeViolations(page), []);
    for (const request of log.requests) assert.ok(request.startsWith(`${site.origin}/`), `request outside the origin: ${request}`);
    await context.close();
  });

  test('GPT-2: size first, progress, every view, streaming generation; the second visit downloads nothing; delete', async () => {
    const { context, page, log } = await openPage(site);
    await downloadModel(page, 'test/tiny-gpt2');
    const { tokens, generated } = await exercise(page, { layers: 3, heads: 4 });
    assert.match(await page.evaluate(() => document.querySelector('#progress-text').textContent), /MB of [\d.]+ MB · [\d.]+ MB\/s · done/);
    // greedy generation gives the package's tokens in Node (f32: the same bits in every runtime)
    const config = JSON.parse(Buffer.from(files['test/tiny-gpt2']['config.json']).toString());
    const model = lab.Transformer.fromPretrained({ config, weights: files['test/tiny-gpt2']['model.safetensors'], dtype: 'float32' });
    assert.deepEqual(Array.from(model.generate(tokens, { maxNewTokens: 8, temperature: 0 })).slice(tokens.length), generated);
    model.free();
    assert.deepEqual(await axeViolations(page), []);
    await checkPage(page, log, 'model-gpt2-desktop');
    assert.equal(modelGets('test/tiny-gpt2').length, 1);
    await page.click('input[name="click"][value="enlarge"]');
    await page.click('#grid [data-layer="2"][data-head="1"]');
    await walkthroughLink(page, 'model-gpt2-walkthrough-desktop');
    // the second visit: from Cache Storage, no request to the hub at all
    const before = hub.requests.length;
    await page.goto(pageUrl('test/tiny-gpt2'));
    await views(page, 3, 4);
    assert.match(await statusOf(page), /from this browser \(no network\)/);
    assert.deepEqual(hub.requests.slice(before), []);
    // what is kept is listed, and deleted on request
    await page.click('#kept-box summary');
    await page.waitForSelector('[data-delete="test/tiny-gpt2"]');
    assert.match(await page.evaluate(() => document.querySelector('#kept').textContent), /test\/tiny-gpt2 \(0\.22 MB, from http/);
    await page.click('[data-delete="test/tiny-gpt2"]');
    await page.waitForFunction(() => /Nothing yet/.test(document.querySelector('#kept').textContent));
    assert.deepEqual(await kept(page), []);
    assert.deepEqual(log.errors, []);
    await context.close();
  });

  test('ablation by click changes the loss, per token (GPT-2 and Llama)', async () => {
    const { context, page, log } = await openPage(site);
    for (const [repo, layers] of [['test/tiny-gpt2', 3], ['test/tiny-llama', 2]]) {
      await downloadModel(page, repo);
      await views(page, layers, 4);
      await ablate(page, await page.$$eval('#chips .chip', (cs) => cs.length), repo.split('/')[1]);
    }
    assert.deepEqual(log.errors, []);
    await context.close();
  });

  test('a failed, a cut and a cancelled download each say so and keep nothing; then the Llama loads', async () => {
    const { context, page, log } = await openPage(site);
    for (const [mode, message] of [['fail', /HTTP 500/], ['cut', /stopped after \d+ of \d+ bytes.*nothing was kept/]]) {
      hub.mode = mode;
      await downloadModel(page, 'test/tiny-llama');
      await page.waitForFunction(() => document.querySelector('#status').classList.contains('error'));
      assert.match(await statusOf(page), message);
      assert.deepEqual(await kept(page), []);
    }
    hub.mode = 'slow';
    await downloadModel(page, 'test/tiny-llama');
    await page.waitForFunction(() => document.querySelector('#progress').value > 0);
    assert.match(await page.evaluate(() => document.querySelector('#progress-text').textContent), /MB of .* MB\/s · about \d+ (s|min) left/);
    await page.click('#cancel');
    await page.waitForFunction(() => /cancelled; nothing was kept/.test(document.querySelector('#status').textContent));
    assert.deepEqual(await kept(page), []);
    hub.mode = 'ok';
    await downloadModel(page, 'test/tiny-llama');
    await views(page, 2, 4);
    assert.match(await statusOf(page), /llama, 2 layers × 4 heads \(2 key\/value heads\)/);
    await page.click('#grid [data-layer="1"][data-head="1"]');
    await walkthroughLink(page, 'model-llama-walkthrough-desktop', /after the rotary embedding \(RoPE\)/); // RoPE and grouped heads rebuilt by the page
    // the console errors a failed fetch leaves are the browser's own report of the 500 and the cut body
    assert.deepEqual(log.errors.filter((e) => !/hub\/test\/tiny-llama\/resolve\/main\/model\.safetensors|status of 500|ERR_CONTENT_LENGTH_MISMATCH/.test(e)), []);
    await context.close();
  });

  test('local files: the three picked files load with no request to any hub (phone size)', async () => {
    const dir = join(tmpdir(), `attention-lab-local-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    for (const [name, bytes] of Object.entries(files['test/tiny-gpt2'])) writeFileSync(join(dir, name), bytes);
    const { context, page, log, url } = await openPage(site, SIZES.phone);
    await page.goto(url('model.html'));
    const before = hub.requests.length;
    await page.click('details.local summary');
    await page.setInputFiles('#local-files', ['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => join(dir, f)));
    await exercise(page, { layers: 3, heads: 4 });
    assert.deepEqual(hub.requests.slice(before), []);
    assert.deepEqual(await axeViolations(page), []);
    await checkPage(page, log, 'model-local-phone');
    await context.close();
  });
});

describe('the real-model page in Firefox', () => {
  for (const [sizeName, size] of Object.entries(SIZES)) {
    test(`downloads, shows every view and generates at ${size.width}×${size.height}, no console errors, nothing too wide`, async () => {
      firefox ??= await launchFirefox();
      const context = await firefox.createBrowserContext();
      const page = await context.newPage();
      page.setDefaultTimeout(120000);
      await page.setViewport(size);
      const log = { errors: [] };
      page.on('console', (message) => { if (message.type() === 'error') log.errors.push(`console: ${message.text()}`); });
      page.on('pageerror', (error) => log.errors.push(`page error: ${error.message}`));
      await downloadModel(page, 'test/tiny-gpt2');
      await exercise(page, { layers: 3, heads: 4 });
      await checkPage(page, log, `model-firefox-${sizeName}`);
      await page.evaluate(async () => { await caches.delete('attention-lab-models'); });
      await context.close();
    });
  }
});
