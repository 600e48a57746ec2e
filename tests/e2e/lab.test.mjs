// The lab (lab.html): training in a Worker with the package's Transformer, at desktop and phone sizes.
// Head cells: #head-scores td[data-layer (1-based, as shown)][data-head (0-based, as shown)] with
// data-previous-token / data-induction; document.body.dataset.step is the trained step and
// dataset.viewStep the step on view (a snapshot, with the scrubber).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import { startSite, openPage, axeViolations, wideElements, lab, SIZES, SCREENSHOTS, ROOT } from './harness.mjs';

const INDUCTION = 0.4;
const TEXT_LOSS = 2.5; // nats a character; an untrained model pays about ln 64 = 4.16
const TRAIN_TIMEOUT_MS = 240000; // behaviour, not speed: docs/performance.md has the time

let site;
before(async () => { site = await startSite(); });
after(async () => { await site?.close(); });

const step = (page) => page.evaluate(() => Number(document.body.dataset.step));
const scores = (page) => page.$$eval('#head-scores td', (tds) => tds.map((td) => ({
  layer: Number(td.dataset.layer), head: Number(td.dataset.head), previousToken: Number(td.dataset.previousToken), induction: Number(td.dataset.induction),
})));
const bestInduction = async (page, layer) => Math.max(...(await scores(page)).filter((s) => s.layer === layer).map((s) => s.induction));

async function trainToInduction(page) {
  const started = Date.now();
  // these tests train past the phase change (first-hour.test.mjs checks the pause there)
  await page.uncheck('#pause-at-phase-change');
  await page.click('#train');
  await page.waitForFunction((threshold) => [...document.querySelectorAll('#head-scores td[data-layer="2"]')].some((td) => Number(td.dataset.induction) > threshold),
    INDUCTION, { timeout: TRAIN_TIMEOUT_MS, polling: 200 });
  const reachedAt = await step(page);
  console.log(`induction score > ${INDUCTION} in a layer-2 head at step ${reachedAt}, ${((Date.now() - started) / 1000).toFixed(1)} s after Train`);
  return reachedAt;
}

async function pause(page) {
  await page.click('#pause');
  await page.waitForFunction(() => document.body.dataset.running === 'no');
}

describe('the lab', () => {
  for (const [sizeName, size] of Object.entries(SIZES)) {
    test(`trains to an induction head at ${size.width}×${size.height}: no console errors, requests stay on the origin, axe passes`, { timeout: TRAIN_TIMEOUT_MS + 60000 }, async () => {
      const { context, page, log, url } = await openPage(site, size);
      await page.goto(url('lab.html'));
      await page.locator('#head-scores td').first().waitFor();
      await page.evaluate(() => document.fonts.ready);
      await page.screenshot({ path: join(SCREENSHOTS, `lab-start-${sizeName}.png`), fullPage: true });
      assert.equal(await step(page), 0);
      const before = await bestInduction(page, 2);
      assert.ok(before < INDUCTION, `an untrained model already has an induction score ${before}`);
      await page.evaluate(() => {
        window.longTasks = [];
        new PerformanceObserver((list) => { for (const e of list.getEntries()) window.longTasks.push(Math.round(e.duration)); }).observe({ type: 'longtask' });
      });
      await trainToInduction(page);
      const longTasks = await page.evaluate(() => window.longTasks);
      console.log(`${sizeName}: main-thread tasks over 50 ms while training: ${longTasks.length ? longTasks.join(', ') + ' ms' : 'none'}`);
      await pause(page);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `the page scrolls sideways by ${overflow}px`);
      // nor does anything need a sideways scroll in its own box (the head table, the heatmaps, the per-position bars)
      assert.deepEqual(await wideElements(page), []);
      await page.screenshot({ path: join(SCREENSHOTS, `lab-trained-${sizeName}.png`), fullPage: true });
      assert.deepEqual(await axeViolations(page), []);
      assert.deepEqual(log.errors, []);
      for (const request of log.requests) assert.ok(request.startsWith(`${site.origin}/`), `request outside the origin: ${request}`);
      await context.close();
    });
  }

  test('pause stops training; the scrubber shows an earlier snapshot and comes back to live', { timeout: TRAIN_TIMEOUT_MS + 60000 }, async () => {
    const { context, page, log, url } = await openPage(site);
    await page.goto(url('lab.html'));
    await page.locator('#head-scores td').first().waitFor();
    await trainToInduction(page);
    await pause(page);
    const paused = await step(page);
    await page.waitForTimeout(1500);
    assert.equal(await step(page), paused, 'the step moved while paused');
    const trained = await scores(page);
    // the first snapshot: step 0, untrained
    await page.locator('#scrubber').fill('0');
    await page.waitForFunction(() => document.body.dataset.viewStep === '0');
    assert.match(await page.textContent('#scrubber-label'), /step 0 of/);
    assert.ok(await bestInduction(page, 2) < INDUCTION, 'the step-0 snapshot shows an induction head');
    assert.equal(await step(page), paused, 'viewing a snapshot changed the trained step');
    await page.locator('#lab-attention, .lab-attention').first().screenshot({ path: join(SCREENSHOTS, 'lab-snapshot-0-desktop.png') });
    // back to live: the trained scores again, exactly
    await page.click('#live');
    await page.waitForFunction((s) => document.body.dataset.viewStep === String(s), paused);
    assert.deepEqual(await scores(page), trained);
    assert.deepEqual(log.errors, []);
    await context.close();
  });

  test('a URL reproduces the same losses, step by step; another seed does not (both tasks)', { timeout: 240000 }, async () => {
    const lossesOf = async (query, steps) => {
      const { context, page, log, url } = await openPage(site);
      await page.goto(url(`lab.html${query}`));
      await page.locator('#head-scores td').first().waitFor();
      const out = [];
      for (let i = 1; i <= steps; i++) {
        await page.click('#step');
        await page.waitForFunction((n) => document.querySelector('#loss-summary').dataset.step === String(n), i);
        out.push(await page.$eval('#loss-summary', (p) => p.dataset.loss));
      }
      assert.deepEqual(log.errors, []);
      await context.close();
      return out;
    };
    const query = '?seed=5&lr=0.003&batch=8&heads=2&width=32';
    const first = await lossesOf(query, 6);
    const second = await lossesOf(query, 6);
    assert.equal(first.length, 6);
    assert.ok(first.every((x) => Number.isFinite(Number(x))), first.join());
    assert.deepEqual(second, first);
    const other = await lossesOf('?seed=6&lr=0.003&batch=8&heads=2&width=32', 6);
    assert.notDeepEqual(other, first);
    // the text task too: the windows are seeded from (seed, step)
    const text = await lossesOf('?task=text&window=48&seed=5&batch=8', 6);
    assert.deepEqual(await lossesOf('?task=text&window=48&seed=5&batch=8', 6), text);
    assert.notDeepEqual(await lossesOf('?task=text&window=48&seed=6&batch=8', 6), text);
  });

  test('on the cross-origin isolated site the lab trains on the threads build, on more than one thread, with the same losses and scores as the single-threaded build (threads=1); no console error, no CSP violation on the page', { timeout: 180000 }, async () => {
    const STEPS = 8;
    const run = async (query, after = async () => {}) => {
      const { context, page, log, url } = await openPage(site);
      await page.addInitScript(() => {
        window.violations = [];
        addEventListener('securitypolicyviolation', (e) => window.violations.push(`${e.violatedDirective}: ${e.blockedURI}`));
      });
      await page.goto(url(`lab.html${query}`));
      await page.locator('#head-scores td').first().waitFor();
      const line = await page.$eval('#threads', (p) => ({ threads: Number(p.dataset.threads), build: p.dataset.build, text: p.textContent, hidden: p.hidden }));
      const losses = [];
      for (let i = 1; i <= STEPS; i++) {
        await page.click('#step');
        await page.waitForFunction((n) => document.querySelector('#loss-summary').dataset.step === String(n) && document.body.dataset.step === String(n), i);
        losses.push(await page.$eval('#loss-summary', (p) => p.dataset.loss));
      }
      const page_ = await page.evaluate(() => ({ isolated: globalThis.crossOriginIsolated, cores: navigator.hardwareConcurrency, violations: window.violations }));
      const trained = await scores(page);
      await after(page);
      await page.locator('.lab-controls').screenshot({ path: join(SCREENSHOTS, `lab-threads-${line.build}-${line.threads}-desktop.png`) });
      assert.deepEqual(log.errors, []);
      assert.deepEqual(page_.violations, []);
      for (const request of log.requests) assert.ok(request.startsWith(`${site.origin}/`), `request outside the origin: ${request}`);
      await context.close();
      return { line, losses, scores: trained, ...page_ };
    };
    const settings = '?seed=3&batch=24&width=32';
    const single = await run(`${settings}&threads=1`);
    // a new setting keeps threads= in the address (the page reloaded from it trains on as many threads)
    const pool = await run(`${settings}&threads=2`, async (page) => {
      await page.selectOption('select[name="layers"]', '3');
      await page.waitForFunction(() => document.querySelectorAll('#head-scores tbody tr').length === 3);
      const params = new URL(page.url()).searchParams;
      assert.deepEqual([params.get('layers'), params.get('threads')], ['3', '2'], page.url());
    });
    assert.equal(pool.isolated, true);
    assert.equal(single.line.build, 'single');
    assert.equal(single.line.threads, 1);
    assert.match(single.line.text, /^Training on 1 thread: the address asks for one thread/);
    assert.equal(pool.line.build, 'threads');
    assert.equal(pool.line.threads, 2);
    assert.equal(pool.line.hidden, false);
    assert.match(pool.line.text, /^Training on 2 threads/);
    assert.ok(single.losses.every((x) => Number.isFinite(Number(x))) && new Set(single.losses).size === STEPS, single.losses.join());
    assert.deepEqual(pool.losses, single.losses, 'the losses on 2 threads differ from the single-threaded build\'s');
    assert.deepEqual(pool.scores, single.scores, 'the head scores on 2 threads differ from the single-threaded build\'s');
    // no threads= (here a refused one): the device's cores, at most 4, on the threads build where there are two or more
    const chosen = await run(`${settings}&threads=0`);
    const expected = Math.min(chosen.cores, 4);
    console.log(`the lab's own choice: ${chosen.line.text} (navigator.hardwareConcurrency ${chosen.cores})`);
    assert.equal(chosen.line.threads, expected);
    assert.equal(chosen.line.build, expected > 1 ? 'threads' : 'single');
    assert.match(chosen.line.text, /threads=0 is not a whole number from 1 to 64, so the lab chooses/);
    assert.deepEqual(chosen.losses, single.losses);
  });

  test('a threads build that never starts is given up after 30 s: the lab loads the single-threaded build, says why, and trains', { timeout: 180000 }, async () => {
    // the threads build is the one .wasm that imports its (shared) memory
    const assets = join(ROOT, 'www/dist/assets');
    const threadsWasm = readdirSync(assets).filter((f) => f.endsWith('.wasm'))
      .filter((f) => WebAssembly.Module.imports(new WebAssembly.Module(readFileSync(join(assets, f)))).some((i) => i.kind === 'memory'));
    assert.equal(threadsWasm.length, 1, `the threads build's .wasm among ${readdirSync(assets).join(', ')}`);
    const { context, page, log, url } = await openPage(site);
    let held = 0; // asked for, never answered: a start that never settles (seen once, in Firefox)
    await context.route((u) => u.pathname.endsWith(`/${threadsWasm[0]}`), () => { held += 1; });
    await page.goto(url('lab.html?seed=3&batch=24&width=32&threads=2'));
    await page.waitForFunction(() => document.querySelector('#status').textContent === 'Loading the model… (loading the threads build)');
    assert.deepEqual(await page.evaluate(() => ['train', 'step', 'reset'].map((id) => document.getElementById(id).disabled)), [true, true, true]);
    const waited = Date.now();
    await page.locator('#head-scores td').first().waitFor();
    const line = await page.$eval('#threads', (p) => ({ threads: p.dataset.threads, build: p.dataset.build, text: p.textContent }));
    console.log(`the threads build given up after ${((Date.now() - waited) / 1000).toFixed(1)} s: ${line.text}`);
    assert.equal(held, 1);
    assert.deepEqual([line.threads, line.build], ['1', 'single']);
    assert.equal(line.text, 'Training on 1 thread: the threads build did not start within 30 s, so the lab uses the single-threaded build.');
    assert.match(await page.textContent('#status'), /^Ready/);
    await page.click('#step');
    await page.waitForFunction(() => document.querySelector('#loss-summary').dataset.step === '1');
    assert.ok(Number.isFinite(Number(await page.$eval('#loss-summary', (p) => p.dataset.loss))));
    assert.deepEqual(log.errors, []);
    await context.close();
  });

  test('the 30 s limit is for the threads build alone: a single-threaded build loadModel picks itself (a page not cross-origin isolated) may take longer, and is loaded once', { timeout: 180000 }, async () => {
    const assets = join(ROOT, 'www/dist/assets');
    // the single-threaded builds (the lab's and the challenge pages' lighter one): every .wasm that does not import its memory
    const singleWasm = readdirSync(assets).filter((f) => f.endsWith('.wasm'))
      .filter((f) => !WebAssembly.Module.imports(new WebAssembly.Module(readFileSync(join(assets, f)))).some((i) => i.kind === 'memory'));
    assert.ok(singleWasm.length >= 1, `a single-threaded build's .wasm among ${readdirSync(assets).join(', ')}`);
    const { context, page, log, url } = await openPage(site);
    // the page without COOP and COEP: no shared memory, so loadModel takes the single-threaded build though threads=2
    await context.route((u) => u.pathname.endsWith('/lab.html'), async (route) => {
      const response = await route.fetch();
      const headers = Object.fromEntries(Object.entries(response.headers()).filter(([k]) => !/^cross-origin-(opener|embedder)-policy$/i.test(k)));
      await route.fulfill({ response, headers });
    });
    const asked = [];
    await context.route((u) => singleWasm.some((f) => u.pathname.endsWith(`/${f}`)), async (route) => {
      asked.push(new URL(route.request().url()).pathname);
      await new Promise((resolve) => setTimeout(resolve, 33000)); // longer than the threads build's limit
      await route.continue();
    });
    await page.goto(url('lab.html?seed=3&batch=24&width=32&threads=2'));
    assert.equal(await page.evaluate(() => globalThis.crossOriginIsolated), false);
    await page.locator('#head-scores td').first().waitFor({ timeout: 90000 });
    const line = await page.$eval('#threads', (p) => ({ threads: p.dataset.threads, build: p.dataset.build, text: p.textContent }));
    assert.equal(asked.length, 1, `the single-threaded build is fetched once, not given up and loaded again: ${asked.join(', ')}`);
    assert.deepEqual([line.threads, line.build], ['1', 'single']);
    assert.equal(line.text, 'Training on 1 thread: this page is not cross-origin isolated (no shared memory), so the lab uses the single-threaded build.');
    assert.deepEqual(log.errors, []);
    await context.close();
  });

  test('Train, Step and Reset wait for the model: while its .wasm loads they are disabled, a settings change keeps them so, and then Train trains', { timeout: 120000 }, async () => {
    const { context, page, log, url } = await openPage(site);
    // hold the worker's .wasm back until the checks below have run (a learner on a slow connection)
    let release;
    const held = new Promise((resolve) => { release = resolve; });
    await context.route(/\.wasm$/, async (route) => { await held; await route.continue(); });
    await page.goto(url('lab.html'));
    await page.waitForFunction(() => performance.getEntriesByType('resource').length > 0 || document.readyState === 'complete');
    const disabled = () => page.evaluate(() => ['train', 'step', 'reset'].map((id) => document.getElementById(id).disabled));
    assert.deepEqual(await disabled(), [true, true, true]);
    assert.match(await page.textContent('#status'), /Loading the model/);
    await page.selectOption('select[name="heads"]', '2'); // a new run before the model is there
    assert.deepEqual(await disabled(), [true, true, true]);
    assert.match(await page.textContent('#status'), /Loading the model/);
    release();
    await page.waitForFunction(() => !document.getElementById('train').disabled, null, { timeout: 60000 });
    assert.deepEqual(await disabled(), [false, false, false]);
    await page.click('#train');
    await page.waitForFunction(() => Number(document.body.dataset.step) >= 5, null, { timeout: 60000 });
    assert.equal(await page.locator('#head-scores tbody tr:first-child td').count() > 0, true);
    assert.deepEqual(log.errors, []);
    await context.close();
  });

  test('settings live in the address; a bad one is refused with a message and the defaults are used', async () => {
    const { context, page, log, url } = await openPage(site);
    await page.goto(url('lab.html'));
    await page.locator('#head-scores td').first().waitFor();
    await page.selectOption('select[name="layers"]', '3');
    await page.waitForFunction(() => document.querySelectorAll('#head-scores tbody tr').length === 3);
    assert.match(page.url(), /[?&]layers=3(&|$)/);
    await page.goto(url('lab.html?length=40&vocab=16'));
    await page.locator('#head-scores td').first().waitFor();
    assert.match(await page.textContent('#settings-error'), /segment length/);
    assert.equal(await page.inputValue('input[name="length"]'), '24');
    // the one-layer model, one click away, says why it cannot form an induction head
    await page.click('#one-layer');
    await page.waitForFunction(() => document.querySelectorAll('#head-scores tbody tr').length === 1);
    assert.match(await page.textContent('#one-layer-why'), /earlier layer/);
    assert.deepEqual(log.errors, []);
    await context.close();
  });

  test('switching off the induction heads raises the loss on repeated tokens', { timeout: TRAIN_TIMEOUT_MS + 60000 }, async () => {
    const { context, page, log, url } = await openPage(site);
    await page.goto(url('lab.html'));
    await page.locator('#head-scores td').first().waitFor();
    await trainToInduction(page);
    await pause(page);
    const layer2 = (await scores(page)).filter((s) => s.layer === 2).sort((a, b) => b.induction - a.induction);
    const before = Number(await page.$eval('#ablation', (p) => p.dataset.repeated));
    const ablatedLoss = () => page.$eval('#ablation', (p) => Number(p.dataset.ablatedRepeated));
    const toggle = (head) => page.click(`#head-scores td[data-layer="2"][data-head="${head}"] button`);
    // the best induction head alone (others in layer 2 may share the work)
    await toggle(layer2[0].head);
    await page.waitForFunction(() => document.querySelector('#ablation').dataset.ablatedRepeated !== undefined);
    const one = await ablatedLoss();
    assert.equal(Number(await page.$eval('#ablation', (p) => p.dataset.repeated)), before, 'the unablated loss moved');
    assert.ok(one > before * 1.2, `switching off layer 2 head ${layer2[0].head} took the repeated-token loss from ${before} to ${one}`);
    assert.equal(await page.getAttribute(`#head-scores td[data-layer="2"][data-head="${layer2[0].head}"] button`, 'aria-pressed'), 'true');
    await page.locator('.lab-heads').screenshot({ path: join(SCREENSHOTS, 'lab-ablated-desktop.png') });
    // every layer-2 head: no induction left, the repeated tokens are as hard as the others
    for (const { head } of layer2.slice(1)) {
      await toggle(head);
      await page.waitForFunction((n) => document.querySelectorAll('#head-scores td[data-layer="2"] button[aria-pressed="true"]').length === n, layer2.findIndex((s) => s.head === head) + 1);
    }
    await page.waitForFunction((prev) => Number(document.querySelector('#ablation').dataset.ablatedRepeated) !== prev, one);
    const all = await ablatedLoss();
    console.log(`repeated-token loss ${before.toFixed(3)}; layer 2 head ${layer2[0].head} off: ${one.toFixed(3)}; all layer-2 heads off: ${all.toFixed(3)}`);
    assert.ok(all > before * 2 && all > one, `all layer-2 heads off: the repeated-token loss ${all} (from ${before})`);
    // all back on: no ablation
    for (const { head } of layer2) await toggle(head);
    await page.waitForFunction(() => document.querySelector('#ablation').dataset.ablatedRepeated === undefined);
    assert.deepEqual(log.errors, []);
    await context.close();
  });
  test('"open in the walkthrough" shows that head\'s own Q, K, V and exactly the package\'s weights; an induction head looks one past the first copy', { timeout: TRAIN_TIMEOUT_MS + 60000 }, async () => {
    const { context, page, log, url } = await openPage(site);
    await page.goto(url('lab.html'));
    await page.locator('#head-scores td').first().waitFor();
    await trainToInduction(page);
    await pause(page);
    const best = (await scores(page)).filter((s) => s.layer === 2).sort((a, b) => b.induction - a.induction)[0];
    await page.click(`.heat-thumb[data-layer="2"][data-head="${best.head}"]`);
    await page.locator('#open-walkthrough').waitFor();
    const difference = Number(await page.$eval('[data-max-difference]', (e) => e.dataset.maxDifference));
    assert.ok(difference < 1e-5, `the walkthrough's weights are ${difference} from the model's own`);
    const href = await page.getAttribute('#open-walkthrough', 'href');
    const params = new URLSearchParams(new URL(href, url('')).hash.slice(1));
    assert.equal(params.get('labLayer'), '2');
    assert.equal(params.get('labHead'), String(best.head));
    await page.goto(new URL(href, url('')).href);
    await page.locator('#from-lab').waitFor();
    await page.locator('#heatmap-0').waitFor();
    assert.match(await page.textContent('#step-counter'), /softmax weights/);
    const shown = await page.$$eval('#heatmap-0 tbody tr', (rows) => rows.map((r) => [...r.querySelectorAll('td.heat, td.masked')].map((td) => Number(td.dataset.value))));
    const [Q, K, V] = ['Q', 'K', 'V'].map((n) => JSON.parse(params.get(n)));
    const expected = lab.traceMultiHeadAttention(Q, K, V, { numberOfHeads: 1, headDimensions: Q[0].length, causal: true }).steps.find((s) => s.name === 'weights_0').values;
    assert.deepEqual(shown, expected);
    // the induction stripe: at a repeated token, most weight one past its first copy
    const tokens = params.get('tokens').split(' ');
    const n = (tokens.length - 1) / 2;
    const rows = Array.from({ length: n }, (_, i) => n + 1 + i);
    const hits = rows.filter((t) => expected[t].indexOf(Math.max(...expected[t])) === t - n + 1).length;
    console.log(`walkthrough: layer 2 head ${best.head}, ${hits} of ${rows.length} repeated tokens look one past their first copy; weights within ${difference.toExponential(1)} of the model's`);
    assert.ok(hits >= rows.length / 2, `only ${hits} of ${rows.length} repeated tokens look one past their first copy`);
    await page.locator('#step-view').screenshot({ path: join(SCREENSHOTS, 'lab-walkthrough-head-desktop.png') });
    assert.deepEqual(log.errors, []);
    await context.close();
  });
  for (const [sizeName, size] of Object.entries(SIZES)) {
    test(`the text task at ${size.width}×${size.height}: characters label the views, the loss falls, copyable characters get cheaper; axe passes`, { timeout: TRAIN_TIMEOUT_MS + 60000 }, async () => {
      const { context, page, log, url } = await openPage(site, size);
      await page.goto(url('lab.html'));
      await page.locator('#head-scores td').first().waitFor();
      // chosen by the Task control, kept in the address
      await page.selectOption('select[name="task"]', 'text');
      await page.waitForFunction(() => document.body.dataset.labTask === 'text' && document.querySelector('#repeat-summary'));
      assert.match(page.url(), /[?&]task=text(&|$)/);
      assert.equal(await page.isVisible('input[name="window"]'), true);
      assert.equal(await page.isVisible('input[name="vocab"]'), false);
      assert.equal(await page.inputValue('input[name="window"]'), '64');
      // the example window, labelled with its characters (a space shown as ␣)
      const label = await page.getAttribute('.focus-canvas canvas', 'aria-label');
      assert.match(label, /“ D o ␣ c a t s ␣ e a t ␣ b a t s \?/);
      assert.match(await page.textContent('#per-position'), /copyable/);
      const started = Date.now();
      await page.click('#train');
      await page.waitForFunction((limit) => Number(document.querySelector('#loss-summary').dataset.loss) < limit, TEXT_LOSS, { timeout: TRAIN_TIMEOUT_MS, polling: 200 });
      console.log(`text task: batch loss < ${TEXT_LOSS} at step ${await step(page)}, ${((Date.now() - started) / 1000).toFixed(1)} s after Train`);
      await page.waitForTimeout(5000); // a few seconds more, for the screenshots
      await pause(page);
      const repeated = Number(await page.$eval('#ablation', (p) => p.dataset.repeated));
      const other = Number(await page.$eval('#ablation', (p) => p.dataset.other));
      console.log(`text task at step ${await step(page)}: fixed windows' loss ${repeated.toFixed(3)} on copyable characters, ${other.toFixed(3)} on the others; ${await page.textContent('#repeat-summary')}`);
      assert.ok(repeated < other, `copyable characters cost ${repeated}, the others ${other}`);
      assert.ok(other < Math.log(64), `the other characters still cost ${other}`);
      // the copying test beside the example: random characters, the first time and repeated
      const copy = await page.$eval('#repeat-summary', (p) => [Number(p.dataset.randomFirst), Number(p.dataset.randomRepeat)]);
      assert.ok(copy.every(Number.isFinite) && copy[0] > 0, copy.join());
      assert.match(await page.textContent('#repeat-summary'), /On random characters repeated \(strings not in the chapter\)/);
      assert.match(await page.textContent('.lab-heads'), /measured on 8 strings of random characters/);
      // the model writes: 200 characters after the prompt, the same twice (most likely characters)
      const write = async () => {
        await page.$eval('#sample-output', (p) => { delete p.dataset.text; });
        await page.click('#sample-write');
        await page.waitForFunction(() => document.querySelector('#sample-output').dataset.text !== undefined);
        return page.$eval('#sample-output', (p) => p.dataset.text);
      };
      const written = await write();
      console.log(`text task, ${sizeName}: "Alice was beginning to " → ${JSON.stringify(written.slice(0, 80))}…`);
      assert.equal([...written].length, 200);
      assert.equal(await write(), written);
      // drawn at temperature 1: seeded, so the same again, and not the most likely characters
      await page.selectOption('#sample-temperature', '1');
      const drawn = await write();
      assert.equal(await write(), drawn);
      assert.notEqual(drawn, written);
      await page.selectOption('#sample-temperature', '0');
      await page.fill('#sample-prompt', 'Alice €');
      await page.click('#sample-write');
      assert.match(await page.textContent('#sample-error'), /"€" is not in the chapter/);
      await page.fill('#sample-prompt', 'Alice was beginning to ');
      // the walkthrough link carries the head's Q, K, V on the example's first 24 characters
      await page.locator('#open-walkthrough').waitFor();
      const difference = Number(await page.$eval('[data-max-difference]', (e) => e.dataset.maxDifference));
      assert.ok(difference < 1e-5, `the walkthrough's weights are ${difference} from the model's own`);
      const href = new URL(await page.getAttribute('#open-walkthrough', 'href'), url('')).href;
      const params = new URLSearchParams(new URL(href).hash.slice(1));
      assert.equal(params.get('labTask'), 'text');
      assert.equal(params.get('tokens'), [...'“Do cats eat bats? Do ca'].map((c) => (c === ' ' ? '␣' : c)).join(' '));
      assert.equal(JSON.parse(params.get('Q')).length, 24);
      assert.deepEqual(await wideElements(page), []);
      await page.screenshot({ path: join(SCREENSHOTS, `lab-text-${sizeName}.png`), fullPage: true });
      assert.deepEqual(await axeViolations(page), []);
      await page.goto(href);
      await page.locator('#from-lab').waitFor();
      assert.match(await page.textContent('#from-lab'), /on the characters t0 = “, t1 = D, t2 = o, t3 = ␣/);
      assert.deepEqual(log.errors, []);
      for (const request of log.requests) assert.ok(request.startsWith(`${site.origin}/`), `request outside the origin: ${request}`);
      await context.close();
    });
  }

  test('the log-scaled step axis: the chart\'s x scale becomes logarithmic, the address says so, and a reload keeps it', async () => {
    const { context, page, log, url } = await openPage(site);
    await page.goto(url('lab.html?seed=3'));
    await page.locator('#head-scores td').first().waitFor();
    const distr = () => page.$eval('#loss-chart', (e) => e.dataset.stepDistr); // uPlot's scales.x.distr: 1 linear, 3 log
    assert.equal(await distr(), '1');
    assert.equal(await page.isChecked('#log-steps'), false);
    for (let i = 1; i <= 3; i++) {
      await page.click('#step');
      await page.waitForFunction((n) => document.querySelector('#loss-summary').dataset.step === String(n), i);
    }
    await page.check('#log-steps');
    assert.equal(await distr(), '3');
    assert.match(page.url(), /[?&]logSteps=1(&|$)/);
    assert.match(page.url(), /[?&]seed=3(&|$)/, 'the run\'s settings stay in the address');
    await page.reload();
    await page.locator('#head-scores td').first().waitFor();
    assert.equal(await page.isChecked('#log-steps'), true);
    assert.equal(await distr(), '3');
    assert.equal(await page.inputValue('input[name="seed"]'), '3');
    // a setting changed with the log axis on keeps it
    await page.selectOption('select[name="heads"]', '2');
    await page.waitForFunction(() => document.querySelectorAll('#head-scores tbody td').length === 4);
    assert.match(page.url(), /[?&]logSteps=1(&|$)/);
    assert.equal(await distr(), '3');
    await page.uncheck('#log-steps');
    assert.equal(await distr(), '1');
    assert.doesNotMatch(page.url(), /logSteps/);
    await page.reload();
    await page.locator('#head-scores td').first().waitFor();
    assert.equal(await page.isChecked('#log-steps'), false);
    assert.equal(await distr(), '1');
    assert.deepEqual(log.errors, []);
    await context.close();
  });
});
