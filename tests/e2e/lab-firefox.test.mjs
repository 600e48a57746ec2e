// The lab (lab.html) in Firefox ESR, at desktop and phone sizes: Puppeteer over WebDriver BiDi
// (Playwright's Firefox is a patched build; this is Debian's own). What lab.test.mjs checks in
// Chromium that matters per browser: no console errors, nothing requested off the origin (the
// Worker's requests included), training reaches an induction head, nothing is wider than a phone,
// axe passes, a URL reproduces its losses (and they are the same bits as Chromium's), and the text
// task trains.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startSite, startServer, openPage, axeViolations, wideElements, SIZES, SCREENSHOTS } from './harness.mjs';
import { launchFirefox } from '../package/support.mjs';

const INDUCTION = 0.4;
const TEXT_LOSS = 2.5;
const TRAIN_TIMEOUT_MS = 240000; // behaviour, not speed

let server;
let firefox;
before(async () => {
  server = await startServer();
  firefox = await launchFirefox();
});
after(async () => {
  await firefox?.close();
  await server?.close();
});

/** A fresh Firefox context (empty storage) and page at `size`, recording errors and requests. */
async function openFirefoxPage(size = SIZES.desktop) {
  const context = await firefox.createBrowserContext();
  const page = await context.newPage();
  // behaviour, not speed: on a loaded machine the model's first view can take longer than puppeteer's 30 s
  page.setDefaultTimeout(120000);
  await page.setViewport(size);
  const log = { errors: [], requests: [] };
  page.on('console', (message) => { if (message.type() === 'error') log.errors.push(`console: ${message.text()}`); });
  page.on('pageerror', (error) => log.errors.push(`page error: ${error.message}`));
  page.on('request', (request) => log.requests.push(request.url()));
  page.on('requestfailed', (request) => log.errors.push(`request failed: ${request.url()} ${request.failure()?.errorText}`));
  return { context, page, log, url: (path) => `${server.origin}/${path}` };
}

/** Waits for the model's first view; a page that never gets there says what its status line said. */
async function ready(page) {
  try {
    await page.waitForSelector('#head-scores td');
  } catch (error) {
    const said = typeof page.evaluate !== 'function' ? '?'
      : await page.evaluate(() => `${document.querySelector('#status')?.textContent} | ${document.querySelector('#threads')?.textContent}`).catch(() => '?');
    throw new Error(`the lab showed no head scores (status: ${said}): ${error.message}`);
  }
}

const step = (page) => page.evaluate(() => Number(document.body.dataset.step));

async function pause(page) {
  await page.click('#pause');
  await page.waitForFunction(() => document.body.dataset.running === 'no');
}

function assertOnOrigin(log) {
  assert.ok(log.requests.length > 0, 'no request was recorded');
  for (const request of log.requests) assert.ok(request.startsWith(`${server.origin}/`), `request outside the origin: ${request}`);
}

describe('the lab in Firefox', () => {
  for (const [sizeName, size] of Object.entries(SIZES)) {
    test(`trains to an induction head at ${size.width}×${size.height}: no console errors, requests stay on the origin, nothing wider than the page, axe passes`, { timeout: TRAIN_TIMEOUT_MS + 60000 }, async () => {
      const { context, page, log, url } = await openFirefoxPage(size);
      await page.goto(url('lab.html'));
      await ready(page);
      assert.equal(await step(page), 0);
      const started = Date.now();
      await page.click('#pause-at-phase-change'); // train past the phase change (first-hour.test.mjs checks the pause there)
      assert.equal(await page.$eval('#pause-at-phase-change', (box) => box.checked), false);
      await page.click('#train');
      await page.waitForFunction((threshold) => [...document.querySelectorAll('#head-scores td[data-layer="2"]')].some((td) => Number(td.dataset.induction) > threshold),
        { timeout: TRAIN_TIMEOUT_MS, polling: 200 }, INDUCTION);
      console.log(`Firefox ${sizeName}: induction score > ${INDUCTION} in a layer-2 head at step ${await step(page)}, ${((Date.now() - started) / 1000).toFixed(1)} s after Train`);
      await pause(page);
      assert.deepEqual(await wideElements(page), []);
      await page.screenshot({ path: join(SCREENSHOTS, `lab-firefox-trained-${sizeName}.png`), fullPage: true });
      // axe-core evaluated through BiDi's script.evaluate, which the page's CSP does not govern
      assert.deepEqual(await axeViolations(page), []);
      assert.deepEqual(log.errors, []);
      assertOnOrigin(log);
      // the Worker's own requests are seen too: it alone fetches the .wasm
      assert.ok(log.requests.some((r) => r.endsWith('.wasm')), `the Worker's .wasm request was not recorded: ${log.requests.join(', ')}`);
      await context.close();
    });
  }

  test('a URL reproduces the same losses, step by step, and they are the bits Chromium computes (both tasks)', { timeout: 300000 }, async () => {
    const steps = 6;
    async function lossesOf(page, url) {
      await page.goto(url);
      await ready(page);
      const out = [];
      for (let i = 1; i <= steps; i++) {
        await page.click('#step');
        await page.waitForFunction((n) => document.querySelector('#loss-summary').dataset.step === String(n), {}, i);
        out.push(await page.$eval('#loss-summary', (p) => p.dataset.loss));
      }
      return out;
    }
    const chromium = await startSite(); // its own server: the same build
    try {
      for (const query of ['?seed=5&lr=0.003&batch=8&heads=2&width=32', '?task=text&window=48&seed=5&batch=8']) {
        const runs = [];
        for (let i = 0; i < 2; i++) {
          const { context, page, log, url } = await openFirefoxPage();
          runs.push(await lossesOf(page, url(`lab.html${query}`)));
          assert.deepEqual(log.errors, []);
          await context.close();
        }
        assert.ok(runs[0].every((x) => Number.isFinite(Number(x))), runs[0].join());
        assert.deepEqual(runs[1], runs[0], `${query}: two Firefox runs differ`);
        const { context, page, log, url } = await openPage(chromium);
        const inChromium = await lossesOf({
          goto: (u) => page.goto(u), waitForSelector: (s) => page.locator(s).first().waitFor(), click: (s) => page.click(s),
          waitForFunction: (f, options, arg) => page.waitForFunction(f, arg), $eval: (s, f) => page.$eval(s, f),
        }, url(`lab.html${query}`));
        assert.deepEqual(log.errors, []);
        await context.close();
        assert.deepEqual(runs[0], inChromium, `${query}: Firefox and Chromium computed different losses`);
        console.log(`${query}: Firefox twice and Chromium give the same ${steps} losses (${runs[0].slice(0, 2).join(', ')}, …)`);
      }
    } finally {
      await chromium.close();
    }
  });

  test('the text task trains at 390×844: the loss falls, the views are labelled with characters, nothing is wider than the phone', { timeout: TRAIN_TIMEOUT_MS + 60000 }, async () => {
    const { context, page, log, url } = await openFirefoxPage(SIZES.phone);
    await page.goto(url('lab.html'));
    await ready(page);
    await page.select('select[name="task"]', 'text');
    await page.waitForFunction(() => document.body.dataset.labTask === 'text' && document.querySelector('#repeat-summary'));
    assert.match(page.url(), /[?&]task=text(&|$)/);
    const first = await page.$eval('#ablation', (p) => Number(p.dataset.other));
    const started = Date.now();
    await page.click('#train');
    await page.waitForFunction((limit) => Number(document.querySelector('#loss-summary').dataset.loss) < limit, { timeout: TRAIN_TIMEOUT_MS, polling: 200 }, TEXT_LOSS);
    console.log(`Firefox text task: batch loss < ${TEXT_LOSS} at step ${await step(page)}, ${((Date.now() - started) / 1000).toFixed(1)} s after Train`);
    await pause(page);
    const [repeated, other] = await page.$eval('#ablation', (p) => [Number(p.dataset.repeated), Number(p.dataset.other)]);
    assert.ok(other < first - 1, `the others' loss on fixed windows went from ${first} to ${other}`);
    assert.ok(repeated < other, `copyable characters cost ${repeated}, the others ${other}`);
    assert.match(await page.$eval('.focus-canvas canvas', (c) => c.getAttribute('aria-label')), /“ D o ␣ c a t s/);
    assert.deepEqual(await wideElements(page), []);
    await page.screenshot({ path: join(SCREENSHOTS, 'lab-firefox-text-phone.png'), fullPage: true });
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(log.errors, []);
    assertOnOrigin(log);
    await context.close();
  });
});
