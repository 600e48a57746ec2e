// The lab's Circuit panel (issue 32), in Chromium (playwright-core) and Firefox ESR (puppeteer over
// WebDriver BiDi): after training to an induction head, the composition tables show a K-composition
// well above the random baseline, the induction head's OV copying score is high, cutting the
// previous-token head's output from every layer-2 head's keys raises the repeated-token loss far more
// than cutting it from their queries or values, the K-composition chart rose over training, and the
// panel follows the scrubber back to step 0 (the untrained model: about the baseline). The whole page's
// axe and width checks at desktop and phone sizes are lab.test.mjs's and lab-firefox.test.mjs's, which
// now include this panel.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startSite, openPage, axeViolations, wideElements, SIZES, SCREENSHOTS } from './harness.mjs';
import { launchFirefox } from '../package/support.mjs';

const INDUCTION = 0.4;
const TRAIN_TIMEOUT_MS = 240000; // behaviour, not speed

let site;
let firefox;
before(async () => { site = await startSite(); firefox = await launchFirefox(); });
after(async () => { await firefox?.close(); await site?.close(); });

/** What the panel shows, read from the page (the same function in both browsers). */
function readPanel() {
  const scores = [...document.querySelectorAll('#head-scores td')].map((td) => ({ layer: Number(td.dataset.layer), head: Number(td.dataset.head), previousToken: Number(td.dataset.previousToken), induction: Number(td.dataset.induction) }));
  const summary = document.querySelector('#composition-summary');
  const paths = [...document.querySelectorAll('#path-ablation td')].map((td) => ({ from: Number(td.dataset.from), to: td.dataset.to, input: td.dataset.input, loss: Number(td.dataset.loss) }));
  const chart = document.querySelector('#k-composition-chart');
  return {
    viewStep: Number(document.body.dataset.viewStep),
    scores,
    strongest: Number(summary?.dataset.strongest),
    baseline: Number(summary?.dataset.baseline),
    kCells: [...document.querySelectorAll('#composition-k td.composition-cell')].map((td) => Number(td.dataset.value)),
    copying: Number(document.querySelector('#copying-score')?.dataset.copyingScore),
    uncut: Number(document.querySelector('#path-summary')?.dataset.uncut),
    pathStep: Number(document.querySelector('#path-summary')?.dataset.step),
    paths,
    chartStrongest: Number(chart?.dataset.strongest),
    summaryText: summary?.textContent ?? '',
  };
}

/** The checks after training: `panel` read once the paused view is drawn. */
function checkTrained(panel, browser) {
  const layer1 = panel.scores.filter((s) => s.layer === 1);
  const prev = layer1.reduce((a, b) => (b.previousToken > a.previousToken ? b : a));
  assert.equal(panel.kCells.length, 16, `${browser}: a 4 × 4 K-composition table`);
  assert.ok(panel.strongest > 1.5 * panel.baseline, `${browser}: the strongest K-composition ${panel.strongest} against the baseline ${panel.baseline}`);
  assert.ok(panel.copying > 0.9, `${browser}: the focused induction head's copying score ${panel.copying}`);
  const cut = (input) => panel.paths.find((p) => p.from === prev.head && p.to === 'every' && p.input === input).loss;
  assert.equal(panel.pathStep, panel.viewStep, `${browser}: the path ablation is of the model on view`);
  assert.ok(cut('key') > 2 * panel.uncut, `${browser}: cutting layer 1 head ${prev.head} (the previous-token head) from every layer-2 key: ${cut('key')} against ${panel.uncut} uncut`);
  assert.ok(cut('key') > 2 * Math.max(cut('query'), cut('value')), `${browser}: the key cut ${cut('key')} against query ${cut('query')} and value ${cut('value')}`);
  assert.ok(panel.chartStrongest > 1.5 * panel.baseline, `${browser}: the chart's last strongest K-composition ${panel.chartStrongest}`);
}

/** The scrubber at its first snapshot (step 0): the panel shows the untrained model. */
function checkUntrained(panel, browser) {
  assert.equal(panel.viewStep, 0);
  assert.match(panel.summaryText, /at step 0:/);
  assert.ok(panel.strongest < 1.5 * panel.baseline, `${browser}: at step 0 the strongest K-composition ${panel.strongest} is near the baseline ${panel.baseline}`);
}

describe('the lab\'s Circuit panel', () => {
  test('Chromium: after the phase change the panel shows the circuit; it follows the scrubber to step 0', { timeout: TRAIN_TIMEOUT_MS + 120000 }, async () => {
    const { context, page, log, url } = await openPage(site, SIZES.desktop);
    await page.goto(url('lab.html'));
    await page.locator('#head-scores td').first().waitFor();
    // this test trains past the phase change (first-hour.test.mjs checks the pause there)
    await page.uncheck('#pause-at-phase-change');
    await page.click('#train');
    await page.waitForFunction((t) => [...document.querySelectorAll('#head-scores td[data-layer="2"]')].some((td) => Number(td.dataset.induction) > t), INDUCTION, { timeout: TRAIN_TIMEOUT_MS, polling: 200 });
    // train on a little past the first induction score, as the lab's user would
    const reached = await page.evaluate(() => Number(document.body.dataset.step));
    await page.waitForFunction((s) => Number(document.body.dataset.step) >= s + 60, reached, { timeout: TRAIN_TIMEOUT_MS });
    await page.click('#pause');
    await page.waitForFunction(() => document.body.dataset.running === 'no');
    // focus the strongest induction head: its circuits are drawn
    const best = await page.$$eval('#head-scores td[data-layer="2"]', (tds) => tds.reduce((a, b) => (Number(b.dataset.induction) > Number(a.dataset.induction) ? b : a)).dataset.head);
    await page.click(`.heat-thumb[data-layer="2"][data-head="${best}"]`);
    await page.waitForFunction((h) => document.querySelector('#copying-score')?.textContent.startsWith(`Layer 2 head ${h}`) && Number(document.querySelector('#path-summary')?.dataset.step) === Number(document.body.dataset.viewStep), best);
    const trained = await page.evaluate(readPanel);
    checkTrained(trained, 'Chromium');
    // the previous-token head's positional QK circuit (W_pos·W_QK·W_posᵀ): its row maximum just left of the diagonal
    const prev = trained.scores.filter((s) => s.layer === 1).reduce((a, b) => (b.previousToken > a.previousToken ? b : a));
    await page.click(`.heat-thumb[data-layer="1"][data-head="${prev.head}"]`);
    await page.waitForFunction((h) => document.querySelector('#copying-score')?.textContent.startsWith(`Layer 1 head ${h}`) && document.querySelector('#positional-qk canvas'), prev.head);
    const share = Number(await page.getAttribute('#positional-qk', 'data-previous-share'));
    console.log(`Chromium: layer 1 head ${prev.head} (previous-token score ${prev.previousToken}): positional QK row maximum at q − 1 in ${(100 * share).toFixed(0)} % of rows`);
    assert.ok(share > 0.25, `Chromium: the previous-token head's positional QK puts its row maximum on the previous position in only ${share} of rows`);
    await page.locator('#circuits-heading').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SCREENSHOTS, 'lab-circuits-desktop.png'), fullPage: true });
    assert.deepEqual(await axeViolations(page), []);
    // the scrubber's first position is the snapshot at step 0
    await page.locator('#scrubber').fill('0');
    await page.waitForFunction(() => document.body.dataset.viewStep === '0' && /at step 0:/.test(document.querySelector('#composition-summary')?.textContent ?? ''));
    checkUntrained(await page.evaluate(readPanel), 'Chromium');
    await page.setViewportSize(SIZES.phone);
    await page.waitForTimeout(300);
    assert.deepEqual(await wideElements(page), []);
    await page.screenshot({ path: join(SCREENSHOTS, 'lab-circuits-phone.png'), fullPage: true });
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(log.errors, []);
    await context.close();
  });

  test('Firefox: after the phase change the panel shows the circuit; it follows the scrubber to step 0', { timeout: TRAIN_TIMEOUT_MS + 120000 }, async () => {
    const context = await firefox.createBrowserContext();
    const page = await context.newPage();
    page.setDefaultTimeout(120000);
    await page.setViewport(SIZES.desktop);
    const errors = [];
    page.on('console', (message) => { if (message.type() === 'error') errors.push(`console: ${message.text()}`); });
    page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
    await page.goto(`${site.origin}/lab.html`);
    await page.waitForSelector('#head-scores td');
    await page.$eval('#pause-at-phase-change', (box) => { if (box.checked) box.click(); });
    await page.click('#train');
    await page.waitForFunction((t) => [...document.querySelectorAll('#head-scores td[data-layer="2"]')].some((td) => Number(td.dataset.induction) > t), { timeout: TRAIN_TIMEOUT_MS, polling: 200 }, INDUCTION);
    const reached = await page.evaluate(() => Number(document.body.dataset.step));
    await page.waitForFunction((s) => Number(document.body.dataset.step) >= s + 60, { timeout: TRAIN_TIMEOUT_MS, polling: 200 }, reached);
    await page.click('#pause');
    await page.waitForFunction(() => document.body.dataset.running === 'no');
    const best = await page.$$eval('#head-scores td[data-layer="2"]', (tds) => tds.reduce((a, b) => (Number(b.dataset.induction) > Number(a.dataset.induction) ? b : a)).dataset.head);
    await page.click(`.heat-thumb[data-layer="2"][data-head="${best}"]`);
    await page.waitForFunction((h) => document.querySelector('#copying-score')?.textContent.startsWith(`Layer 2 head ${h}`) && Number(document.querySelector('#path-summary')?.dataset.step) === Number(document.body.dataset.viewStep), { polling: 200 }, best);
    checkTrained(await page.evaluate(readPanel), 'Firefox');
    await page.screenshot({ path: join(SCREENSHOTS, 'lab-circuits-firefox-desktop.png'), fullPage: true });
    assert.deepEqual(await axeViolations(page), []);
    await page.$eval('#scrubber', (input) => { input.value = '0'; input.dispatchEvent(new Event('input', { bubbles: true })); });
    await page.waitForFunction(() => document.body.dataset.viewStep === '0' && /at step 0:/.test(document.querySelector('#composition-summary')?.textContent ?? ''), { polling: 200 });
    checkUntrained(await page.evaluate(readPanel), 'Firefox');
    await page.setViewport(SIZES.phone);
    await new Promise((resolve) => { setTimeout(resolve, 300); });
    assert.deepEqual(await wideElements(page), []);
    await page.screenshot({ path: join(SCREENSHOTS, 'lab-circuits-firefox-phone.png'), fullPage: true });
    assert.deepEqual(errors, []);
    await context.close();
  });
});
