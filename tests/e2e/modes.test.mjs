// End-to-end tests of the walkthrough's four modern modes (decoding with a KV cache, grouped heads,
// RoPE, sliding window): after edits, every number the page shows is the package's, computed here
// in Node from target/pkg-node; the numberOfKVHeads picker offers divisors only; links open a mode;
// every mode at both sizes loads without console errors, off-origin requests or serious axe findings.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startSite, openPage, axeViolations, lab, SIZES, SCREENSHOTS } from './harness.mjs';

let site;
before(async () => { site = await startSite(); });
after(async () => { await site?.close(); });

/** A table's cells as numbers (null for the empty cells decoding has not reached). */
const valuesOf = (page, selector) => page.$$eval(`${selector} tbody tr`, (rows) => rows.map((r) => [...r.querySelectorAll('td:not(.sum)')].map((td) => (td.dataset.value === '' ? null : Number(td.dataset.value)))));
const editorValues = (page, name) => page.$$eval(`#editor-${name} tbody tr`, (rows) => rows.map((r) => [...r.querySelectorAll('input')].map((i) => Number(i.value))));
const stepOf = (trace, name) => {
  const step = trace.steps.find((s) => s.name === name);
  assert.ok(step, `the trace has a step ${name}`);
  return step;
};
const divisors = (n) => Array.from({ length: n }, (_, i) => i + 1).filter((d) => n % d === 0).map(String);

async function openMode(query, size) {
  const opened = await openPage(site, size);
  await opened.page.goto(opened.url(`walkthrough.html${query}`));
  await opened.page.locator('#output-matrix').waitFor();
  return opened;
}

/** Clicks the step whose title starts with `title` in the step list. */
async function goToStep(page, title) {
  await page.locator('#step-list button', { hasText: title }).first().click();
  assert.ok((await page.textContent('#step-counter')).includes(title), `on the step "${title}"`);
}

async function inputs(page) {
  return { Q: await editorValues(page, 'Q'), K: await editorValues(page, 'K'), V: await editorValues(page, 'V') };
}

describe('decoding (KV cache)', () => {
  test('each token adds one cache row; scores, weights, context and output rows are the package\'s after edits', async () => {
    const { context, page, log } = await openMode('?mode=decoding');
    assert.ok(await page.isChecked('input[name="mode"][value="decoding"]'));
    assert.ok(await page.isChecked('#causal') && await page.isDisabled('#causal'), 'decoding is causal');
    await page.fill('#editor-Q input[data-row="2"][data-col="0"]', '-2');
    await page.fill('#editor-K input[data-row="1"][data-col="1"]', '0.5');
    await page.click('#add-row');
    await page.fill('#editor-V input[data-row="4"][data-col="1"]', '3');
    await page.fill('#editor-K input[data-row="4"][data-col="0"]', '1.5');
    const { Q, K, V } = await inputs(page);
    assert.equal(Q.length, 5);
    assert.equal(Q[2][0], -2);
    const h = Number(await page.inputValue('#number-of-heads'));
    const options = { numberOfHeads: h, numberOfKVHeads: h, headDimensions: Q[0].length / h, causal: true };
    const perToken = Q.map((_, t) => lab.traceGroupedQueryAttention([Q[t]], K.slice(0, t + 1), V.slice(0, t + 1), options));
    assert.match(await page.textContent('#step-counter'), /of 6:/); // 5 tokens and the comparison
    for (let t = 0; t < Q.length; t++) {
      await goToStep(page, `Token ${t}:`);
      for (let head = 0; head < h; head++) {
        const trace = perToken[t];
        assert.deepEqual(await valuesOf(page, `#decode-K_${head}`), stepOf(trace, `K_${head}^T`).values, `token ${t}: the cached keys`);
        assert.equal((await valuesOf(page, `#decode-K_${head}`))[0].length, t + 1, 'the cache holds t + 1 keys');
        assert.deepEqual(await valuesOf(page, `#decode-Kcache_${head}`), stepOf(trace, `K_${head}`).values, `token ${t}: the cache's key rows`);
        assert.deepEqual(await valuesOf(page, `#decode-Kcache_${head}`), K.slice(0, t + 1).map((row) => row.slice(head * options.headDimensions, (head + 1) * options.headDimensions)));
        assert.deepEqual(await page.$$eval(`#decode-Kcache_${head} tbody tr`, (rows) => rows.map((r) => r.querySelectorAll('td.new-row').length)),
          K.slice(0, t + 1).map((_, r) => (r === t ? options.headDimensions : 0)), 'the new cache row is outlined');
        assert.deepEqual(await valuesOf(page, `#decode-V_${head}`), stepOf(trace, `V_${head}`).values);
        assert.deepEqual(await valuesOf(page, `#decode-scores_${head}`), stepOf(trace, `scores_${head}`).values);
        assert.deepEqual(await valuesOf(page, `#decode-weights_${head}`), stepOf(trace, `weights_${head}`).values);
        assert.deepEqual(await valuesOf(page, `#decode-context_${head}`), stepOf(trace, `context_${head}`).values);
        // the weights so far: row r is token r's weights, later cells empty; row t is outlined
        const soFar = await valuesOf(page, `#decode-sofar-${head}`);
        soFar.forEach((row, r) => assert.deepEqual(row, r > t ? row.map(() => null)
          : [...stepOf(perToken[r], `weights_${head}`).values[0], ...Array(Q.length - r - 1).fill(null)], `token ${t}, weights row ${r}`));
        const outlined = await page.$$eval(`#decode-sofar-${head} tbody tr`, (rows) => rows.map((r) => r.querySelectorAll('td.new-row').length));
        assert.deepEqual(outlined, outlined.map((_, r) => (r === t ? Q.length : 0)));
      }
      const output = await valuesOf(page, '#decode-output');
      output.forEach((row, r) => assert.deepEqual(row, r > t ? row.map(() => null) : perToken[r].output[0]));
    }
    await goToStep(page, 'All tokens at once');
    const full = lab.groupedQueryAttention(Q, K, V, options);
    assert.deepEqual(await valuesOf(page, '#decode-stacked'), perToken.map((trace) => trace.output[0]));
    assert.deepEqual(await valuesOf(page, '#decode-full'), full);
    assert.deepEqual(await valuesOf(page, '#output-matrix'), full);
    assert.deepEqual(log.errors, []);
    await context.close();
  });
});

describe('decoding against the layer\'s KV cache', () => {
  test('with Q = K = V = X the rows decoded on the page are those of MultiHeadAttention.createCache() + forward({ cache }) (identity projections)', async () => {
    const X = [[1, 0.5, -1, 2], [0, 1, 1, -0.5], [2, -1, 0.5, 0], [0.3, 0.7, -0.2, 1], [-1, 0, 0.5, 0.5]];
    const link = `?mode=decoding&Q=${JSON.stringify(X)}&K=${JSON.stringify(X)}&V=${JSON.stringify(X)}&numberOfHeads=2&step=check`;
    const { context, page, log } = await openMode(link);
    assert.match(await page.textContent('#step-counter'), /All tokens at once/);
    const shown = await valuesOf(page, '#decode-stacked');
    // the real cache: one token per forward, the layer's projections the identity (so Q = K = V = X)
    const C = 4;
    const I = Array.from({ length: C }, (_, i) => Array.from({ length: C }, (__, j) => (i === j ? 1 : 0)));
    const layer = new lab.MultiHeadAttention({ embedDim: C, numHeads: 2, bias: false });
    try {
      layer.setWeights({ W_Q: I, W_K: I, W_V: I, W_O: I });
      const cache = layer.createCache();
      const rows = X.map((x) => layer.forward([x], undefined, undefined, { cache, causal: true }).output[0]);
      assert.equal(cache.length, X.length);
      cache.free();
      // two code paths (the layer, the course function): compared to 1e-12, not bit for bit
      rows.forEach((row, t) => row.forEach((x, c) => assert.ok(Math.abs(shown[t][c] - x) < 1e-12, `token ${t}, column ${c}: page ${shown[t][c]}, cache ${x}`)));
    } finally {
      layer.free();
    }
    assert.deepEqual(log.errors, []);
    await context.close();
  });
});

describe('grouped heads', () => {
  test('the numberOfKVHeads picker offers only divisors of numberOfHeads, whatever C and numberOfHeads become', async () => {
    const { context, page } = await openMode('?mode=grouped');
    const offered = () => page.$$eval('#number-of-kv-heads option', (o) => o.map((x) => x.value));
    const heads = () => page.inputValue('#number-of-heads');
    assert.equal(await heads(), '4');
    assert.deepEqual(await offered(), ['1', '2', '4']);
    await page.selectOption('#number-of-heads', '2');
    assert.deepEqual(await offered(), ['1', '2']);
    await page.click('#add-column'); // C = 5: numberOfHeads 2 no longer fits
    assert.deepEqual(await offered(), divisors(Number(await heads())));
    await page.selectOption('#number-of-heads', '5');
    assert.deepEqual(await offered(), ['1', '5']);
    for (let i = 0; i < 3; i++) await page.click('#add-column'); // C = 8
    for (const h of ['1', '2', '4', '8']) {
      await page.selectOption('#number-of-heads', h);
      assert.deepEqual(await offered(), divisors(Number(h)), `numberOfHeads = ${h}`);
    }
    await context.close();
  });

  test('K and V narrow to numberOfKVHeads·headDimensions; every number and each query head\'s K/V head are the package\'s', async () => {
    const { context, page, log } = await openMode('?mode=grouped');
    await page.selectOption('#number-of-kv-heads', '1');
    await page.fill('#editor-Q input[data-row="1"][data-col="3"]', '2.5');
    await page.fill('#editor-K input[data-row="2"][data-col="0"]', '-1.5');
    await page.fill('#editor-V input[data-row="0"][data-col="0"]', '4');
    let { Q, K, V } = await inputs(page);
    assert.deepEqual([Q[0].length, K[0].length, V[0].length], [4, 1, 1], 'numberOfHeads 4 of width 1; one K/V head');
    assert.equal(Q[1][3], 2.5);
    assert.equal(K[2][0], -1.5);
    let options = { numberOfHeads: 4, numberOfKVHeads: 1, headDimensions: 1, causal: false };
    assert.deepEqual(await valuesOf(page, '#output-matrix'), lab.groupedQueryAttention(Q, K, V, options));
    await page.selectOption('#number-of-kv-heads', '2');
    await page.check('#causal');
    ({ Q, K, V } = await inputs(page));
    assert.equal(K[0].length, 2);
    options = { ...options, numberOfKVHeads: 2, causal: true };
    const trace = lab.traceGroupedQueryAttention(Q, K, V, options);
    assert.deepEqual(await valuesOf(page, '#output-matrix'), trace.output);
    await goToStep(page, 'Slice Q, K and V');
    const colour = (selector) => page.$eval(selector, (e) => getComputedStyle(e).boxShadow);
    for (let head = 0; head < 4; head++) {
      const kvHead = stepOf(trace, `K_${head}`).kvHead;
      assert.equal(kvHead, Math.floor(head / 2));
      assert.equal(await page.getAttribute(`.head-group[data-head="${head}"]`, 'data-kv-head'), String(kvHead));
      for (const name of ['Q', 'K', 'V']) assert.deepEqual(await valuesOf(page, `#slice-${name}_${head}`), stepOf(trace, `${name}_${head}`).values);
      // query head `head` (Q column `head`) wears the colour of K/V head kvHead (K column kvHead)
      assert.equal(await colour(`#editor-Q thead th:nth-child(${head + 2})`), await colour(`#editor-K thead th:nth-child(${kvHead + 2})`));
      assert.match(await page.textContent(`#editor-Q thead th:nth-child(${head + 2})`), new RegExp(`h${head}→kv${kvHead}`));
    }
    assert.notEqual(await colour('#editor-K thead th:nth-child(2)'), await colour('#editor-K thead th:nth-child(3)'));
    assert.deepEqual(await page.$$eval('#kv-map .kv-chip', (chips) => chips.map((c) => c.textContent)), ['h0 h1 → kv0', 'h2 h3 → kv1']);
    await goToStep(page, 'Head 3: scores');
    assert.match(await page.textContent('#step-counter'), /\(K\/V head 1\)/);
    assert.deepEqual(await valuesOf(page, '#trace-scores_3'), stepOf(trace, 'scores_3').values);
    await goToStep(page, 'Head 3: softmax');
    assert.deepEqual(await valuesOf(page, '#heatmap-3'), stepOf(trace, 'weights_3').values);
    assert.deepEqual(log.errors, []);
    await context.close();
  });
});

describe('RoPE', () => {
  test('offset and base: the rotated Q and K, the scores and the output are the package\'s', async () => {
    const { context, page, log } = await openMode('?mode=rope');
    await page.fill('#rope-offset', '5');
    await page.fill('#rope-base', '100');
    await page.fill('#editor-Q input[data-row="1"][data-col="0"]', '2');
    const { Q, K, V } = await inputs(page);
    const h = Number(await page.inputValue('#number-of-heads'));
    const d = Q[0].length / h;
    assert.equal(d % 2, 0, 'RoPE offers even headDimensions only');
    assert.ok((await page.$$eval('#head-dimensions option', (o) => o.map((x) => Number(x.value)))).every((x) => x % 2 === 0));
    const options = { numberOfHeads: h, numberOfKVHeads: h, headDimensions: d, causal: false, rope: { base: 100, offset: 5 } };
    const trace = lab.traceGroupedQueryAttention(Q, K, V, options);
    assert.deepEqual(await valuesOf(page, '#output-matrix'), trace.output);
    await goToStep(page, 'Head 0: rotate');
    for (const name of ['Q_0', 'Q_0_rot', 'K_0', 'K_0_rot']) assert.deepEqual(await valuesOf(page, `#trace-${name}`), stepOf(trace, name).values, name);
    assert.deepEqual(stepOf(trace, 'Q_0_rot').rotation, { base: 100, position: 5 });
    // a row keeps its position through the turn: the tables before and after name the same one
    for (const name of ['Q_0', 'Q_0_rot', 'K_0', 'K_0_rot']) {
      assert.deepEqual(await page.$$eval(`#trace-${name} tbody th`, (ths) => ths.map((th) => th.textContent)), Q.map((_, t) => `t${t} at ${5 + t}`), name);
    }
    // the rotation is rotaryEmbedding's
    assert.deepEqual(await valuesOf(page, '#trace-Q_0_rot'), lab.rotaryEmbedding(Q.map((row) => row.slice(0, d)), { numberOfHeads: 1, headDimensions: d, base: 100, offset: 5 }));
    await goToStep(page, 'Head 0: scores');
    assert.match(await page.textContent('#step-counter'), /Q_0_rot·K_0_rotᵀ/);
    assert.deepEqual(await valuesOf(page, '#trace-scores_0'), stepOf(trace, 'scores_0').values);
    // an odd C has no even headDimensions: the page says so and shows no stale numbers
    await page.click('#add-column');
    assert.match(await page.textContent('#input-status'), /headDimensions must be even; C = 3 has no even split/);
    assert.equal(await page.locator('#output-matrix').count(), 0);
    assert.equal(await page.locator('#step-view table').count(), 0);
    await page.click('#remove-column');
    assert.equal(await page.textContent('#input-status'), '');
    assert.deepEqual(await valuesOf(page, '#output-matrix'), trace.output);
    // a bad base is refused with a message and the last valid one stays
    await page.fill('#rope-base', '0');
    assert.equal(await page.getAttribute('#rope-base', 'aria-invalid'), 'true');
    assert.match(await page.textContent('#input-status'), /base: "0" is not a number > 0/);
    assert.deepEqual(await valuesOf(page, '#output-matrix'), trace.output);
    assert.deepEqual(log.errors, []);
    await context.close();
  });

  test('score against distance: the package\'s scores of q at m and k at n, one value per m − n', async () => {
    const { context, page, log } = await openMode('?mode=rope&offset=3&base=50&step=distance');
    assert.match(await page.textContent('#step-counter'), /Score against distance/);
    await page.fill('#editor-K input[data-row="0"][data-col="1"]', '-0.75');
    const { Q, K } = await inputs(page);
    const d = Number(await page.inputValue('#head-dimensions'));
    const [q, k] = [Q[0].slice(0, d), K[0].slice(0, d)];
    const shown = await valuesOf(page, '#distance-scores');
    assert.equal(shown.length, 8);
    // rotate q and k with the package at positions 3 … 10, then the dot products
    const rotate = (x) => lab.rotaryEmbedding(Array(8).fill(x), { numberOfHeads: 1, headDimensions: d, base: 50, offset: 3 });
    const [qs, ks] = [rotate(q), rotate(k)];
    for (let m = 0; m < 8; m++) {
      for (let n = 0; n < 8; n++) {
        const expected = qs[m].reduce((sum, x, i) => sum + x * ks[n][i], 0);
        assert.ok(Math.abs(shown[m][n] - expected) < 1e-12, `score at m = ${m + 3}, n = ${n + 3}: ${shown[m][n]} vs ${expected}`);
        // the same distance, the same score
        if (m > 0 && n > 0) assert.ok(Math.abs(shown[m][n] - shown[m - 1][n - 1]) < 1e-12, `diagonal m − n = ${m - n}`);
      }
    }
    // exactly the trace's scores_0 on repeated q and k
    const trace = lab.traceGroupedQueryAttention(Array(8).fill(q), Array(8).fill(k), Array(8).fill(q.map(() => 0)), { numberOfHeads: 1, numberOfKVHeads: 1, headDimensions: d, rope: { base: 50, offset: 3 } });
    assert.deepEqual(shown, stepOf(trace, 'scores_0').values);
    // at m = n the score is the unrotated q·k
    assert.ok(Math.abs(shown[0][0] - q.reduce((s, x, i) => s + x * k[i], 0)) < 1e-12);
    const byGap = await valuesOf(page, '#distance-by-gap');
    assert.equal(byGap.length, 15);
    byGap.forEach(([score], i) => {
      const gap = 7 - i;
      const [m, n] = gap >= 0 ? [gap, 0] : [0, -gap];
      assert.equal(score, shown[m][n], `m − n = ${gap}`);
    });
    assert.deepEqual(log.errors, []);
    await context.close();
  });
});

describe('sliding window', () => {
  test('the window slider bands the weights exactly as the trace\'s allowed; causal and edits recompute', async () => {
    const { context, page, log } = await openMode('?mode=window');
    assert.match(await page.textContent('#step-counter'), /Head 0: softmax weights in a window of 3/);
    await page.focus('#window');
    await page.keyboard.press('ArrowLeft');
    assert.equal(await page.textContent('#window-value'), '2');
    assert.match(await page.textContent('#step-counter'), /in a window of 2/);
    await page.fill('#editor-Q input[data-row="3"][data-col="1"]', '-2');
    const { Q, K, V } = await inputs(page);
    assert.equal(await page.getAttribute('#window', 'max'), String(Q.length));
    for (const causal of [false, true]) {
      if (causal) await page.check('#causal');
      for (const window of [2, 4]) {
        await page.$eval('#window', (input, w) => { input.value = String(w); input.dispatchEvent(new Event('input', { bubbles: true })); }, window);
        const options = { numberOfHeads: 1, numberOfKVHeads: 1, headDimensions: 2, causal, window };
        const trace = lab.traceGroupedQueryAttention(Q, K, V, options);
        const weights = stepOf(trace, 'weights_0');
        assert.deepEqual(await valuesOf(page, '#heatmap-0'), weights.values, `window ${window}, causal ${causal}`);
        const masked = await page.$$eval('#heatmap-0 tbody tr', (rows) => rows.map((r) => [...r.querySelectorAll('td:not(.sum)')].map((td) => td.classList.contains('masked'))));
        assert.deepEqual(masked, weights.allowed.map((row) => row.map((a) => !a)));
        // the band: query i sees key j when |i − j| < window (and j ≤ i when causal)
        assert.deepEqual(masked, Q.map((_, i) => Q.map((__, j) => !(Math.abs(i - j) < window && (!causal || j <= i)))));
        assert.deepEqual(await valuesOf(page, '#output-matrix'), trace.output);
      }
    }
    assert.deepEqual(log.errors, []);
    await context.close();
  });
});

describe('mode links and the default mode', () => {
  test('the default mode and its deep links are unchanged; picking a mode puts mode= in the address', async () => {
    const { context, page, url } = await openMode('');
    assert.ok(await page.isChecked('input[name="mode"][value="default"]'));
    assert.match(await page.textContent('#step-counter'), /^Step 1 of 11: Slice/);
    await page.goto(url('walkthrough.html?Q=[[1,2],[3,4]]&K=[[1,0],[0,1]]&V=[[5,6],[7,8]]&numberOfHeads=2&headDimensions=1&step=scale&head=1'));
    await page.locator('#step-view h3').waitFor();
    assert.match(await page.textContent('#step-counter'), /Head 1: scale by 1\/√headDimensions/);
    assert.ok(await page.isChecked('input[name="mode"][value="default"]'));
    const trace = lab.traceMultiHeadAttention([[1, 2], [3, 4]], [[1, 0], [0, 1]], [[5, 6], [7, 8]], { numberOfHeads: 2, headDimensions: 1 });
    assert.deepEqual(await valuesOf(page, '#step-view .equation > .matrix-wrap:last-child table'), stepOf(trace, 'scaled_1').values);
    await page.check('input[name="mode"][value="rope"]');
    assert.equal(new URL(page.url()).searchParams.get('mode'), 'rope');
    assert.ok(!(await page.isVisible('#projections')), 'learned projections belong to the default mode');
    await page.reload();
    await page.locator('#output-matrix').waitFor();
    assert.ok(await page.isChecked('input[name="mode"][value="rope"]'));
    await page.check('input[name="mode"][value="default"]');
    assert.equal(new URL(page.url()).searchParams.get('mode'), null);
    assert.ok(await page.isVisible('#projections'));
    await context.close();
  });

  test('links open a mode with its settings and step; a bad mode or setting is named', async () => {
    const { context, page, url } = await openMode('?mode=grouped&numberOfKVHeads=1&step=scores&head=2');
    assert.equal(await page.inputValue('#number-of-kv-heads'), '1');
    assert.match(await page.textContent('#step-counter'), /Head 2: scores .*\(K\/V head 0\)/);
    await page.goto(url('walkthrough.html?mode=decoding&step=token&token=2'));
    await page.locator('#step-view h3').waitFor();
    assert.match(await page.textContent('#step-counter'), /Token 2:/);
    await page.goto(url('walkthrough.html?mode=window&window=4'));
    await page.locator('#heatmap-0').waitFor();
    assert.equal(await page.textContent('#window-value'), '4');
    await page.goto(url('walkthrough.html?mode=rope&base=100&offset=3&step=rotate&head=0'));
    await page.locator('#trace-Q_0_rot').waitFor();
    assert.equal(await page.inputValue('#rope-offset'), '3');
    assert.equal(await page.inputValue('#rope-base'), '100');
    // Q, K and V in a grouped link: K and V are T × numberOfKVHeads·headDimensions
    const [Q, K, V] = [[[1, 2, 3, 4], [0, 1, 0, 1]], [[1, 0], [0, 2]], [[5, 6], [7, 8]]];
    await page.goto(url(`walkthrough.html?mode=grouped&Q=${JSON.stringify(Q)}&K=${JSON.stringify(K)}&V=${JSON.stringify(V)}&numberOfHeads=2&numberOfKVHeads=1`));
    await page.locator('#output-matrix').waitFor();
    assert.equal(await page.textContent('#input-status'), '');
    assert.deepEqual(await valuesOf(page, '#output-matrix'), lab.groupedQueryAttention(Q, K, V, { numberOfHeads: 2, numberOfKVHeads: 1, headDimensions: 2 }));
    // without numberOfKVHeads, a grouped link's K and V have every head: numberOfKVHeads = numberOfHeads
    const [K2, V2] = [[[1, 0, 2, 1], [0, 2, 1, 1]], [[5, 6, 1, 2], [7, 8, 3, 4]]];
    await page.goto(url(`walkthrough.html?mode=grouped&Q=${JSON.stringify(Q)}&K=${JSON.stringify(K2)}&V=${JSON.stringify(V2)}&numberOfHeads=2`));
    await page.locator('#output-matrix').waitFor();
    assert.equal(await page.inputValue('#number-of-kv-heads'), '2');
    assert.deepEqual(await valuesOf(page, '#output-matrix'), lab.groupedQueryAttention(Q, K2, V2, { numberOfHeads: 2, numberOfKVHeads: 2, headDimensions: 2 }));
    await page.goto(url('walkthrough.html?mode=sideways'));
    await page.locator('#output-matrix').waitFor();
    assert.match(await page.textContent('#input-status'), /mode "sideways" is not one of default, decoding, grouped, rope, window/);
    assert.ok(await page.isChecked('input[name="mode"][value="default"]'));
    await page.goto(url('walkthrough.html?mode=window&window=0'));
    await page.locator('#output-matrix').waitFor();
    assert.match(await page.textContent('#input-status'), /window = 0 was not used/);
    await context.close();
  });
});

// Each mode at the step that shows it best.
const VIEWS = [
  ['decoding', '?mode=decoding&step=token&token=2', '#decode-sofar-0'],
  ['grouped', '?mode=grouped', '#slice-Q_0'],
  ['rope', '?mode=rope&step=rotate&head=0', '#trace-Q_0_rot'],
  ['rope-distance', '?mode=rope&step=distance', '#distance-scores'],
  ['window', '?mode=window', '#heatmap-0'],
];

describe('every mode at both sizes', () => {
  for (const [name, query, ready] of VIEWS) {
    for (const [sizeName, size] of Object.entries(SIZES)) {
      test(`${name} at ${size.width}×${size.height}: no console errors, requests on the origin, no serious axe violations, no sideways scroll`, async () => {
        const { context, page, log } = await openMode(query, size);
        await page.locator(ready).waitFor();
        await page.evaluate(() => document.fonts.ready);
        await page.screenshot({ path: join(SCREENSHOTS, `walkthrough-mode-${name}-${sizeName}.png`), fullPage: true });
        await page.locator('#step-view').screenshot({ path: join(SCREENSHOTS, `walkthrough-mode-${name}-step-${sizeName}.png`) });
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(overflow <= 1, `the page scrolls sideways by ${overflow}px`);
        assert.deepEqual(await axeViolations(page), []);
        assert.deepEqual(log.errors, []);
        assert.ok(log.requests.length > 3);
        for (const request of log.requests) assert.ok(request.startsWith(`${site.origin}/`), `request outside the origin: ${request}`);
        await context.close();
      });
    }
  }
});
