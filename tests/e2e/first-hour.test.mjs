// Issue 33's site items, as a learner meets them in the first hour (headless Chromium, see harness.mjs):
// the challenge navigation, the editor's wrapping and when the reference answer is offered, challenge
// 10's lesson, the walkthrough's default example, new rows, mask step, layout and projections note,
// and the lab's phase change, attention-map labels and head-score text.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startSite, openPage, lab, SIZES, SCREENSHOTS, CHALLENGE_IDS } from './harness.mjs';

let site;
before(async () => { site = await startSite(); });
after(async () => { await site?.close(); });

const values = (page, selector) => page.$$eval(`${selector} tbody tr`, (rows) => rows.map((r) => [...r.querySelectorAll('td:not(.sum)')].map((td) => Number(td.dataset.value))));
const editorValues = (page, name) => page.$$eval(`#editor-${name} tbody tr`, (rows) => rows.map((r) => [...r.querySelectorAll('input')].map((i) => Number(i.value))));
/**
 * The part of an element's box that can be seen, as a share of its height (1: wholly in view): inside
 * the viewport and inside every ancestor that clips it (a scrolling card).
 */
const inView = (page, selector) => page.$eval(selector, (e) => {
  const r = e.getBoundingClientRect();
  let [top, bottom] = [Math.max(r.top, 0), Math.min(r.bottom, innerHeight)];
  for (let n = e.parentElement; n && n !== document.body; n = n.parentElement) {
    if (getComputedStyle(n).overflowY === 'visible') continue;
    const box = n.getBoundingClientRect();
    [top, bottom] = [Math.max(top, box.top), Math.min(bottom, box.bottom)];
  }
  return r.height > 0 && r.right > 0 && r.left < innerWidth ? Math.max(0, bottom - top) / r.height : 0;
});

describe('challenge pages', () => {
  test('"previous" and "next" link the neighbours on the first, a middle and the last challenge', async () => {
    const { context, page, log, url } = await openPage(site);
    const nav = async (id) => {
      await page.goto(url(`challenge.html?id=${id}`));
      await page.locator('#challenge-nav a[aria-current="page"]').waitFor();
      return page.$$eval('#challenge-nav a', (links) => links.map((a) => [a.textContent, new URL(a.href).search]));
    };
    const [first, middle, last] = [CHALLENGE_IDS[0], CHALLENGE_IDS[4], CHALLENGE_IDS.at(-1)];
    assert.deepEqual(await nav(first), [['Challenge 01', `?id=${first}`], ['02 →', `?id=${CHALLENGE_IDS[1]}`]]);
    assert.deepEqual(await nav(middle), [['← 04', `?id=${CHALLENGE_IDS[3]}`], ['Challenge 05', `?id=${middle}`], ['06 →', `?id=${CHALLENGE_IDS[5]}`]]);
    const n = CHALLENGE_IDS.length;
    assert.deepEqual(await nav(last), [[`← ${CHALLENGE_IDS[n - 2].slice(0, 2)}`, `?id=${CHALLENGE_IDS[n - 2]}`], [`Challenge ${last.slice(0, 2)}`, `?id=${last}`]]);
    // and they go there: next from 05 is 06, previous from 06 is 05 again
    await nav(middle);
    await page.click('#challenge-nav a:last-child');
    await page.waitForURL(/id=06-/);
    await page.locator('#challenge-nav a[aria-current="page"]', { hasText: 'Challenge 06' }).waitFor();
    await page.click('#challenge-nav a:first-child');
    await page.waitForURL(/id=05-/);
    assert.deepEqual(log.errors, []);
    await context.close();
  });

  for (const [sizeName, size] of Object.entries(SIZES)) {
    test(`the editor wraps long lines at ${size.width}×${size.height}: no starter line runs off the edge`, async () => {
      const { context, page, url } = await openPage(site, size);
      const cut = [];
      for (const id of CHALLENGE_IDS) {
        await page.goto(url(`challenge.html?id=${id}`));
        await page.locator('.cm-content').waitFor();
        await page.evaluate(() => document.fonts.ready);
        const { scroll, client, lines } = await page.$eval('.cm-scroller', (s) => ({
          scroll: s.scrollWidth, client: s.clientWidth,
          lines: [...s.querySelectorAll('.cm-line')].filter((l) => l.getBoundingClientRect().right > s.getBoundingClientRect().right + 1).map((l) => l.textContent.slice(0, 40)),
        }));
        if (scroll > client + 1 || lines.length) cut.push(`${id}: scrolls ${scroll - client}px sideways; cut lines: ${lines.join(' | ')}`);
        if (id === '10-induction-head') await page.locator('#editor').screenshot({ path: join(SCREENSHOTS, `editor-wrapped-10-${sizeName}.png`) });
      }
      assert.deepEqual(cut, []);
      await context.close();
    });
  }

  test('the reference answer is offered after three runs of the tests, or earlier on a deliberate request; two confirmations either way', async () => {
    const { context, page, url } = await openPage(site);
    const id = CHALLENGE_IDS[2];
    await page.goto(url(`challenge.html?id=${id}`));
    await page.locator('.cm-content').waitFor();
    const offered = () => page.isVisible('#show-answer');
    assert.equal(await offered(), false, 'offered before any run');
    for (let run = 1; run <= 3; run++) {
      await page.click('#run-tests');
      await page.waitForFunction(() => !document.querySelector('#run-tests').disabled && /pass|Error/.test(document.querySelector('#run-status').textContent));
      assert.equal(await offered(), run >= 3, `after ${run} failed run(s)`);
      if (run < 3) assert.match(await page.textContent('#answer-offer'), new RegExp(`after ${3 - run} more run`));
    }
    assert.ok(!(await page.isDisabled('#show-answer')));
    assert.ok(!(await page.isVisible('#answer-offer')));
    await page.click('#show-answer');
    await page.click('text=Yes, show it');
    assert.equal(await page.locator('.answer').count(), 0);
    await page.click('text=Yes, I am sure');
    assert.match(await page.textContent('.answer pre'), /causal && j > i \? -Infinity/);
    await page.reload();
    await page.locator('.cm-content').waitFor();
    assert.ok(await offered(), 'the runs are remembered');
    await page.click('#show-answer');
    await page.click('text=No, keep trying');
    assert.equal(await page.locator('.confirm, .answer').count(), 0);
    // another challenge, no run yet: the early request, then two confirmations
    await page.goto(url(`challenge.html?id=${CHALLENGE_IDS[0]}`));
    await page.locator('.cm-content').waitFor();
    assert.equal(await offered(), false);
    assert.match(await page.textContent('#answer-offer'), /offered after 3 runs/);
    await page.click('#answer-early');
    await page.click('text=Yes, show it');
    await page.click('text=Yes, I am sure');
    assert.match(await page.textContent('.answer pre'), /export function dotProductAttention/);
    await context.close();
  });

  test('lessons: table cells wrap between words only, and no lesson names a file the site cannot open', async () => {
    for (const [sizeName, size] of Object.entries(SIZES)) {
      const { context, page, url } = await openPage(site, size);
      const problems = [];
      for (const id of CHALLENGE_IDS) {
        await page.goto(url(`challenge.html?id=${id}`));
        await page.locator('#lesson h1').waitFor();
        await page.evaluate(() => document.fonts.ready);
        // a word split over two lines ("verdic t") has more than one line box
        problems.push(...(await page.$$eval('#lesson table th, #lesson table td', (cells) => cells.flatMap((cell) => {
          const text = cell.textContent;
          const split = [];
          for (const match of text.matchAll(/[^\s-]+-?/g)) { // a break after a hyphen ("one-|hot") is a normal one
            const node = [...cell.childNodes].find((n) => n.nodeType === 3 && n.textContent.includes(match[0]));
            if (!node) continue;
            const range = document.createRange();
            const at = node.textContent.indexOf(match[0]);
            range.setStart(node, at);
            range.setEnd(node, at + match[0].length);
            const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
            if (tops.size > 1) split.push(`"${match[0]}" in "${text}"`);
          }
          return split;
        }))).map((p) => `${id} at ${sizeName}: ${p}`));
        const files = await page.$$eval('#lesson code', (codes) => codes.map((c) => c.textContent).filter((t) => /^[\w./-]+\.(m?js|json)$/.test(t) && !t.startsWith('http')));
        problems.push(...files.map((f) => `${id}: names ${f}, which the site does not serve`));
        if (id === '10-induction-head') await page.locator('#lesson table').last().screenshot({ path: join(SCREENSHOTS, `lesson-10-numbers-${sizeName}.png`) });
      }
      assert.deepEqual(problems, []);
      await context.close();
    }
  });
});

describe('walkthrough', () => {
  test('the default example has several tokens and heads of width > 1 whose patterns differ', async () => {
    const { context, page, url } = await openPage(site);
    await page.goto(url('walkthrough.html'));
    await page.locator('#output-matrix').waitFor();
    const [Q, K, V] = [await editorValues(page, 'Q'), await editorValues(page, 'K'), await editorValues(page, 'V')];
    const h = Number(await page.inputValue('#number-of-heads'));
    const d = Number(await page.inputValue('#head-dimensions'));
    assert.ok(Q.length >= 3 && h >= 2 && d >= 2, `T = ${Q.length}, ${h} heads of ${d}`);
    const trace = lab.traceMultiHeadAttention(Q, K, V, { numberOfHeads: h, headDimensions: d });
    const weights = (i) => trace.steps.find((s) => s.name === `weights_${i}`).values;
    const argmax = (row) => row.indexOf(Math.max(...row));
    // each head puts most of its weight somewhere (not 1/T everywhere), and not where the other does
    for (let i = 0; i < h; i++) assert.ok(weights(i).every((row) => Math.max(...row) > 2 / Q.length), `head ${i} is nearly uniform`);
    assert.notDeepEqual(weights(0).map(argmax), weights(1).map(argmax), 'the two heads look at the same keys');
    assert.match(await page.textContent('#example-note'), /head 0/);
    assert.deepEqual(await values(page, '#output-matrix'), lab.multiHeadAttention(Q, K, V, { numberOfHeads: h, headDimensions: d }));
    await page.screenshot({ path: join(SCREENSHOTS, 'walkthrough-default-desktop.png'), fullPage: true });
    await context.close();
  });

  test('"Add row" and "Add column" fill in random values, not zeros', async () => {
    const { context, page, url } = await openPage(site);
    await page.goto(url('walkthrough.html?Q=[[1,2],[3,4]]&K=[[1,2],[3,4]]&V=[[5,6],[7,8]]&numberOfHeads=2'));
    await page.locator('#output-matrix').waitFor();
    await page.click('#add-row');
    await page.click('#add-column');
    for (const name of ['Q', 'K', 'V']) {
      const M = await editorValues(page, name);
      assert.equal(M.length, 3);
      assert.ok(M[2].some((x) => x !== 0), `${name}'s new row is all zeros`);
      assert.ok(M.some((row) => row[2] !== 0), `${name}'s new column is all zeros`);
      assert.ok([...M[2], ...M.map((row) => row[2])].every((x) => Number.isFinite(x) && Math.abs(x) <= 3), 'new values are in [−3, 3]');
    }
    const [Q, K, V] = [await editorValues(page, 'Q'), await editorValues(page, 'K'), await editorValues(page, 'V')];
    const h = Number(await page.inputValue('#number-of-heads'));
    assert.deepEqual(await values(page, '#output-matrix'), lab.multiHeadAttention(Q, K, V, { numberOfHeads: h, headDimensions: 3 / h }));
    await context.close();
  });

  test('the mask is a step of its own: scaled scores, then the masked scores (−∞ where the trace forbids), then softmax', async () => {
    const { context, page, url } = await openPage(site);
    await page.goto(url('walkthrough.html'));
    await page.locator('#output-matrix').waitFor();
    const titles = () => page.$$eval('#step-list button', (b) => b.map((x) => x.textContent));
    assert.ok(!(await titles()).some((t) => /mask/.test(t)), 'no mask step without a mask');
    await page.check('#causal');
    const list = await titles();
    const at = list.findIndex((t) => t.startsWith('Head 0: mask'));
    assert.ok(at > 0 && /^Head 0: scale/.test(list[at - 1]) && /^Head 0: softmax/.test(list[at + 1]), list.join(' | '));
    await page.click(`#step-list li:nth-child(${at + 1}) button`);
    const [Q, K, V] = [await editorValues(page, 'Q'), await editorValues(page, 'K'), await editorValues(page, 'V')];
    const h = Number(await page.inputValue('#number-of-heads'));
    const trace = lab.traceMultiHeadAttention(Q, K, V, { numberOfHeads: h, headDimensions: Q[0].length / h, causal: true });
    const step = (name) => trace.steps.find((s) => s.name === name);
    const { allowed } = step('weights_0');
    const expected = step('scaled_0').values.map((row, i) => row.map((x, j) => (allowed[i][j] ? x : -Infinity)));
    assert.deepEqual(await values(page, '#masked-0'), expected);
    assert.deepEqual(await page.$$eval('#masked-0 tbody tr', (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.classList.contains('masked')))),
      allowed.map((row) => row.map((a) => !a)));
    assert.ok((await page.textContent('#masked-0')).includes('−∞'));
    await page.locator('#step-view').screenshot({ path: join(SCREENSHOTS, 'walkthrough-mask-desktop.png') });
    // the sliding window has its mask step too
    await page.goto(url('walkthrough.html?mode=window'));
    await page.locator('#output-matrix').waitFor();
    assert.ok((await titles()).some((t) => t.startsWith('Head 0: mask the keys outside the window')));
    await context.close();
  });

  test('on a desktop screen, the step\'s result stays in view while a cell of V is edited', async () => {
    const { context, page, url } = await openPage(site, SIZES.desktop);
    // four tokens, two heads of two (a link, so the layout is judged, whatever the default example)
    const M = JSON.stringify([[2, 0, 2, 0], [2, 0, 2, 0], [0, 2, 2, 0], [-2, 0, 2, 0]]);
    await page.goto(url(`walkthrough.html?Q=${M}&K=${M}&V=${M}&numberOfHeads=2&step=context&head=0`));
    await page.locator('#output-matrix').waitFor();
    assert.match(await page.textContent('#step-counter'), /Head 0: weighted sum with V_0/);
    const cell = '#editor-V input[data-row="3"][data-col="0"]';
    await page.locator(cell).scrollIntoViewIfNeeded();
    await page.fill(cell, '9');
    assert.equal(await inView(page, cell), 1);
    const result = '#step-view .equation > .matrix-wrap:last-child';
    assert.ok(await inView(page, result) === 1, `the result of "${await page.textContent('#step-counter')}" is ${Math.round(100 * (await inView(page, result)))}% in view`);
    const [Q, K, V] = [await editorValues(page, 'Q'), await editorValues(page, 'K'), await editorValues(page, 'V')];
    const trace = lab.traceMultiHeadAttention(Q, K, V, { numberOfHeads: 2, headDimensions: Q[0].length / 2 });
    assert.deepEqual(await values(page, `${result} table`), trace.steps.find((s) => s.name === 'context_0').values);
    await page.screenshot({ path: join(SCREENSHOTS, 'walkthrough-edit-in-view-desktop.png') });
    await context.close();
  });

  test('the learned-projections note shows only with projections on', async () => {
    const { context, page, url } = await openPage(site);
    await page.goto(url('walkthrough.html'));
    await page.locator('#output-matrix').waitFor();
    assert.equal(await page.isVisible('#projections-note'), false);
    await page.check('#projections');
    assert.equal(await page.isVisible('#projections-note'), true);
    await page.uncheck('#projections');
    assert.equal(await page.isVisible('#projections-note'), false);
    await context.close();
  });
});

describe('the lab', () => {
  test('it pauses at the phase change with the chart, the head scores and what happened in view, the explanation beside the chart, and points to the scrubber', { timeout: 300000 }, async () => {
    const { context, page, log, url } = await openPage(site, SIZES.desktop);
    await page.goto(url('lab.html'));
    await page.locator('#head-scores td').first().waitFor();
    // the explanation is beside the chart: next to it, not below everything
    const box = (selector) => page.$eval(selector, (e) => { const r = e.getBoundingClientRect(); return { left: r.left, right: r.right, top: r.top + scrollY, bottom: r.bottom + scrollY }; });
    const [chart, lesson] = [await box('#loss-chart'), await box('#lesson')];
    assert.ok(lesson.right <= chart.left || lesson.left >= chart.right, 'the explanation is beside the chart');
    assert.ok(lesson.top < chart.bottom + 600, `the explanation starts ${Math.round(lesson.top - chart.bottom)}px below the chart`);
    assert.match(await page.textContent('#lesson'), /What you are watching/);
    assert.ok(await page.isChecked('#pause-at-phase-change'));
    const started = Date.now();
    await page.click('#train');
    await page.locator('#phase-change').waitFor({ state: 'visible', timeout: 280000 });
    await page.waitForFunction(() => document.body.dataset.running === 'no');
    const paused = Number(await page.evaluate(() => document.body.dataset.step));
    console.log(`paused at the phase change at step ${paused}, ${((Date.now() - started) / 1000).toFixed(1)} s after Train (AMD EPYC, shared)`);
    const text = await page.textContent('#phase-change');
    assert.match(text, new RegExp(`Paused at step ${paused}: the phase change`));
    assert.match(text, /induction head/);
    assert.match(text, /Snapshot slider/);
    await page.waitForTimeout(1000);
    assert.equal(Number(await page.evaluate(() => document.body.dataset.step)), paused, 'it stays paused');
    // in view together: the chart, the sentence and the best induction head's scores
    const best = await page.$$eval('#head-scores td', (tds) => {
      const top = tds.reduce((a, b) => (Number(b.dataset.induction) > Number(a.dataset.induction) ? b : a));
      return `#head-scores td[data-layer="${top.dataset.layer}"][data-head="${top.dataset.head}"]`;
    });
    await page.screenshot({ path: join(SCREENSHOTS, 'lab-phase-change-desktop.png') });
    for (const selector of ['#loss-chart', '#phase-change', best, '#scrubber']) assert.equal(await inView(page, selector), 1, `${selector} is not wholly in view`);
    assert.ok(await page.$eval('.scrub', (s) => s.classList.contains('pointed')), 'the scrubber is pointed to');
    // the link in the sentence takes the keyboard to the scrubber; Train goes on
    await page.click('#phase-to-scrubber');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'scrubber');
    await page.click('#train');
    await page.waitForFunction((s) => Number(document.body.dataset.step) > s + 5, paused);
    assert.deepEqual(log.errors, []);
    await context.close();
  });

  for (const [sizeName, size] of Object.entries(SIZES)) {
    test(`the large attention map's key labels do not run together and are at least 10 px at ${size.width}×${size.height}; head scores are readable`, { timeout: 120000 }, async () => {
      const { context, page, url } = await openPage(site, size);
      for (const task of ['induction', 'text']) {
        await page.goto(url(task === 'text' ? 'lab.html?task=text' : 'lab.html'));
        await page.locator('#focus canvas').waitFor();
        await page.evaluate(() => document.fonts.ready);
        const { labels, scale } = await page.$eval('#focus canvas', (c) => ({ labels: JSON.parse(c.dataset.labels ?? 'null'), scale: c.clientWidth / c.width * devicePixelRatio }));
        assert.ok(labels, 'the map records its labels');
        assert.ok(labels.font * scale >= 10, `${task}: labels are ${(labels.font * scale).toFixed(1)} px on screen`);
        const keys = labels.keys.map(([i, from, to]) => [i, from * scale, to * scale]);
        for (let k = 1; k < keys.length; k++) {
          assert.ok(keys[k][1] - keys[k - 1][2] >= 1.5, `${task}: the labels of keys ${keys[k - 1][0]} and ${keys[k][0]} are ${(keys[k][1] - keys[k - 1][2]).toFixed(1)} px apart`);
        }
        // every position can be read: labelled on the map, or (when only every k-th is) in the sequence under it, in a readable size
        const T = await page.$eval('#focus canvas', (c) => c.getAttribute('aria-label').split(' on the sequence ')[1].split(' ').length);
        const sequence = await page.$$eval('#focus .seq-text', (s) => s.filter((x) => x.offsetParent).map((x) => parseFloat(getComputedStyle(x).fontSize)));
        if (labels.every === 1) assert.equal(labels.keys.length, T, `${task}: every position is labelled`);
        else assert.equal(sequence.length, T, `${task}: the map labels every ${labels.every}th position, so the sequence is printed under it`);
        assert.ok(sequence.every((px) => px >= 14), `sequence font ${sequence[0]} px`);
        const scoreFont = await page.$eval('#head-scores .score', (s) => parseFloat(getComputedStyle(s).fontSize));
        assert.ok(scoreFont >= 13, `head-score text is ${scoreFont} px`);
        await page.locator('#focus').screenshot({ path: join(SCREENSHOTS, `lab-focus-${task}-${sizeName}.png`) });
      }
      await context.close();
    });
  }
});
