// End-to-end tests of the model checks of challenges 09 and 10 (see harness.mjs): the trained
// model on the learner's attention, the hand-built induction head graded by the package, at both
// sizes, with no console errors, no request off the origin and no serious axe violations.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startSite, openPage, axeViolations, testsOf, SIZES, SCREENSHOTS } from './harness.mjs';
import { MISTAKES, mistakenSource, solution } from '../mistakes.mjs';
import { readFileSync, readdirSync } from 'node:fs';

const C09 = '09-attention-in-a-model';
const C10 = '10-induction-head';
const ROOT = new URL('../../', import.meta.url).pathname;
const starter = (id) => readFileSync(join(ROOT, 'challenges', id, 'starter.js'), 'utf8');
const mistake = (id) => mistakenSource(MISTAKES.find((m) => m.challenge === C09 && m.id === id));
const percentOf = (x) => `${(100 * x).toFixed(1)} %`;

/**
 * harness.mjs's runCode without its reload: the code is saved from the home page once its network
 * has settled, so that no request of the challenge page (the favicon, the wasm) is cut short by a
 * reload and logged as a failed request.
 */
async function runCode(page, url, id, code) {
  await page.goto(url('index.html'), { waitUntil: 'networkidle' });
  await page.evaluate(([k, v]) => localStorage.setItem(k, v), [`attention-lab:code:${id}`, code]);
  await page.goto(url(`challenge.html?id=${id}`), { waitUntil: 'networkidle' });
  await page.locator('.cm-content').waitFor();
  await page.click('#run-tests');
  await page.waitForFunction(() => !document.querySelector('#run-tests').disabled && !/^Running/.test(document.querySelector('#run-status').textContent), null, { timeout: 20000 });
  return (await page.textContent('#run-status')).trim();
}

let site;
before(async () => { site = await startSite(); });
after(async () => { await site?.close(); });

/** Checks common to every run: no console error, every request on the origin, no serious axe violation. */
async function clean(page, log, what) {
  assert.deepEqual(log.errors, [], what);
  for (const request of log.requests) assert.ok(request.startsWith(`${site.origin}/`), `${what}: request outside the origin: ${request}`);
  assert.deepEqual(await axeViolations(page), [], what);
}

const modelCase = (page, id) => page.locator(`[data-case="${id}"]`);

describe('09 · your attention inside a trained model', () => {
  for (const [sizeName, size] of Object.entries(SIZES)) {
    test(`the solution: the model predicts what it does with the reference, both heads' patterns side by side (${sizeName})`, async () => {
      const { context, page, log, url } = await openPage(site, size);
      const status = await runCode(page, url, C09, solution(C09));
      assert.match(status, /^All tests pass\./);
      const reference = testsOf(C09).model.reference.accuracy;
      assert.equal(await page.textContent('#model-accuracy-yours strong'), percentOf(reference));
      assert.equal(await page.textContent('#model-accuracy-reference strong'), percentOf(reference));
      assert.ok(await modelCase(page, 'model-forward').evaluate((li) => li.classList.contains('pass')));
      // 2 layers × 2 heads, yours and the reference's
      assert.equal(await page.locator('.pattern-pair').count(), 4);
      assert.equal(await page.locator('.pattern-figure canvas[role="img"]').count(), 8);
      const label = await page.locator('.pattern-pair[data-layer="2"] canvas').first().getAttribute('aria-label');
      assert.match(label, /^Layer 2, head 0: yours: 25×25 attention weights; for each query, the key with the most weight: 0→0, 1→/);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `the page scrolls sideways by ${overflow}px`);
      await page.locator('[data-kind="model"]').screenshot({ path: join(SCREENSHOTS, `challenge-09-model-${sizeName}.png`) });
      await clean(page, log, `09 solution, ${sizeName}`);
      await context.close();
    });
  }

  test('a mask one key too wide: the model stops copying, the case fails, the mistake is named, the patterns differ', async () => {
    const { context, page, log, url } = await openPage(site);
    const status = await runCode(page, url, C09, mistake('mask-off-by-one'));
    assert.doesNotMatch(status, /^All/);
    const failing = modelCase(page, 'model-forward');
    assert.ok(await failing.evaluate((li) => li.classList.contains('fail')));
    const yours = Number(await page.getAttribute('#model-accuracy-yours strong', 'data-value'));
    const reference = Number(await page.getAttribute('#model-accuracy-reference strong', 'data-value'));
    assert.equal(reference, testsOf(C09).model.reference.accuracy);
    assert.ok(yours < reference - 0.3, `${yours} vs ${reference}`);
    assert.match(await failing.textContent(), /with your attention the model predicts \d+\.\d % of the repeated tokens/);
    assert.deepEqual(await page.$$eval('[data-mistake]', (items) => items.map((i) => i.dataset.mistake)), ['mask-off-by-one']);
    assert.equal(await page.getAttribute('#diagnosis .located', 'data-step'), 'mask', 'the step-located diagnosis names the mask');
    // the first query of a mask one key too wide reads key 1 as well: the text alternative says where each row looks
    const [yoursLabel, referenceLabel] = await page.locator('.pattern-pair[data-layer="1"][data-head="0"] canvas').evaluateAll((cs) => cs.map((c) => c.getAttribute('aria-label')));
    assert.notEqual(yoursLabel.split(': ').at(-1), referenceLabel.split(': ').at(-1));
    await page.screenshot({ path: join(SCREENSHOTS, 'challenge-09-mask-off-by-one-desktop.png'), fullPage: true });
    await clean(page, log, '09 mask off by one');
    await context.close();
  });

  test('the starter: the cases fail and the model check says the model could not run', async () => {
    const { context, page, log, url } = await openPage(site);
    const status = await runCode(page, url, C09, starter(C09));
    assert.match(status, /^0 of \d+ tests pass/);
    assert.match(await modelCase(page, 'model-forward').textContent(), /could not run on your function: your function threw on layer 1: Error: not written yet/);
    assert.equal(await page.textContent('#model-accuracy-yours strong'), 'did not run');
    await clean(page, log, '09 starter');
    await context.close();
  });
});

describe('10 · build an induction head by hand', () => {
  for (const [sizeName, size] of Object.entries(SIZES)) {
    test(`the starter: both heads named as not doing their job, each pattern next to the expected one (${sizeName})`, async () => {
      const { context, page, log, url } = await openPage(site, size);
      const status = await runCode(page, url, C10, starter(C10));
      const tests = testsOf(C10);
      assert.match(status, new RegExp(`^0 of ${3 * tests.model.configs.length} tests pass`));
      const text = await page.textContent('#results');
      assert.match(text, /the previous-token head is not doing its job: layer 1, head 0 has a previous-token score of 0\.\d+/);
      assert.match(text, /the induction head is not doing its job: layer 2, head 0 has an induction score of 0\.\d+/);
      const captions = await page.locator('[data-case="weights-0-induction"] figcaption').allTextContents();
      assert.deepEqual(captions.map((c) => c.replace(/ \(tokens.*$/, '')), ['Layer 2, head 0: yours', 'Expected of an induction head']);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `the page scrolls sideways by ${overflow}px`);
      await page.locator('[data-case="weights-0-previous-token"]').screenshot({ path: join(SCREENSHOTS, `challenge-10-starter-${sizeName}.png`) });
      await clean(page, log, `10 starter, ${sizeName}`);
      await context.close();
    });
  }

  test('the solution passes every check with the numbers of the lesson, and marks the challenge solved', async () => {
    const { context, page, log, url } = await openPage(site);
    const status = await runCode(page, url, C10, solution(C10));
    assert.match(status, /^All tests pass\./);
    const tests = testsOf(C10);
    const values = await page.$$eval('[data-kind="model"] .model-score strong', (s) => s.map((x) => Number(x.dataset.value)));
    const stated = tests.model.reference.flatMap((r) => [r.previousToken, r.induction, r.loss]);
    assert.equal(values.length, stated.length);
    values.forEach((v, i) => assert.ok(Math.abs(v - stated[i]) <= 1e-5 * Math.max(1, v), `${v} vs ${stated[i]}`));
    assert.ok(await page.isVisible('#solved-badge'));
    await page.locator('[data-kind="model"]').screenshot({ path: join(SCREENSHOTS, 'challenge-10-solution-desktop.png') });
    await clean(page, log, '10 solution');
    await context.close();
  });

  test('a broken K-composition fails only the induction head and the loss; weights of the wrong shape are refused with the tensor named', async () => {
    const { context, page, log, url } = await openPage(site);
    const broken = solution(C10).replace('two.W_K[previous(i)][token + i] = 1;', 'two.W_K[token + i][token + i] = 1;');
    await runCode(page, url, C10, broken);
    const verdicts = await page.$$eval('[data-kind="model"] .case', (cs) => cs.map((c) => [c.dataset.case, c.classList.contains('pass')]));
    assert.deepEqual(verdicts.filter(([id]) => id.startsWith('weights-0')), [['weights-0-previous-token', true], ['weights-0-induction', false], ['weights-0-loss', false]]);
    // the failing head is read from its pattern: it looks elsewhere, and the hint points at K-composition
    assert.equal(await page.getAttribute('[data-case="weights-0-induction"] [data-hint]', 'data-hint'), 'elsewhere');
    assert.match(await page.textContent('[data-case="weights-0-induction"] [data-hint]'), /K-composition/);
    const shapes = 'export function inductionWeights() { return { W_U: [[1]], layers: [] }; }\n';
    await runCode(page, url, C10, shapes);
    assert.match(await page.textContent('[data-case="weights-0"]'), /the model refused your weights: RangeError: .*W_U/);
    await clean(page, log, '10 broken');
    await context.close();
  });
});

test('the home page lists every challenge in the challenges folder, in order (01 → 11)', async () => {
  const { context, page, log, url } = await openPage(site, SIZES.phone);
  await page.goto(url('index.html'));
  await page.locator('#challenge-list li').first().waitFor();
  const numbers = await page.$$eval('#challenge-list li a', (links) => links.map((a) => a.textContent.slice(0, 2)));
  const folders = readdirSync(join(ROOT, 'challenges')).filter((name) => /^\d\d-/.test(name)).sort().map((name) => name.slice(0, 2));
  assert.ok(folders.length >= 11, folders.join(' '));
  assert.deepEqual(numbers, folders);
  await page.screenshot({ path: join(SCREENSHOTS, 'home-phone-challenges.png'), fullPage: true });
  await clean(page, log, 'home');
  await context.close();
});
