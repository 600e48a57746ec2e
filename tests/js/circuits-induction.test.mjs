// Issue 32's measurement: the lab's default run (lab.html's defaults: vocabulary 32, segment length 24,
// 2 layers of 4 heads, width 64, shortformer positions, learning rate 0.01, batch 16, float32, the
// lab's batch and evaluation seeds) over seeds 1–10. Before the phase change (step BEFORE) and after it
// (step AFTER): the K-composition of the previous-token head → induction head pair against every other
// pair and the random baseline; the induction head's OV copying score; the loss on the repeated tokens
// of the lab's fixed evaluation batch with paths cut. It prints one line per seed and a summary (the
// figures in docs/circuits.md come from this test's output) and checks what the figures show.
//   CIRCUITS_SEEDS=1,2,3 node --test tests/js/circuits-induction.test.mjs   (default: 1–10)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import lab from './support/lab.mjs';

const SEEDS = (process.env.CIRCUITS_SEEDS ?? '1,2,3,4,5,6,7,8,9,10').split(',').map(Number);
const BEFORE = 100;
const AFTER = 300;
const LAB = { vocabSize: 32, length: 24, batch: 16, learningRate: 0.01, evalBatch: 8 };
const H = 4;

/** The lab's seeds (lab.worker.js): one batch per step, and a fixed evaluation batch. */
const batchSeed = (seed, s) => (seed * 65537 + s + 1) % 2147483647;
const evalSeed = (seed) => (seed * 65537 + 1_000_000_007) % 2147483647;

/** Mean loss on the tokens whose next token repeats (lab.worker.js's splitLosses), and on the others. */
function split({ data, shape: [B, T1] }, repeated) {
  const sums = { rep: [0, 0], other: [0, 0] };
  for (let b = 0; b < B; b += 1) for (let t = 0; t < T1; t += 1) sums[repeated[b][t + 1] ? 'rep' : 'other'].forEach((_, k, a) => { a[k] += k ? 1 : data[b * T1 + t]; });
  return { repeated: sums.rep[0] / sums.rep[1], other: sums.other[0] / sums.other[1] };
}

const argmax = (a) => a.indexOf(Math.max(...a));
const mean = (a) => a.reduce((s, x) => s + x, 0) / a.length;
const pairs = Array.from({ length: H * H }, (_, n) => [Math.floor(n / H), n % H]);

/** What one model shows, with `P` the previous-token head (layer 0) and `I` the induction head (layer 1). */
function measure(m, ev, P, I) {
  const scores = m.compositionScores();
  const k = (i, j) => scores.k[0][i][1][j];
  const others = pairs.filter(([i, j]) => !(i === P && j === I)).map(([i, j]) => k(i, j));
  const loss = (pathMask) => split(m.forward(ev.tokens, { pathMask }).losses, ev.repeated).repeated;
  const cut = (from, to, input) => from.flatMap((i) => to.map((j) => ({ from: [0, i], to: [1, j], input })));
  const all = [0, 1, 2, 3];
  const single = pairs.flatMap(([i, j]) => ['query', 'key', 'value'].map((input) => ({ i, j, input, loss: loss(cut([i], [j], input)) })));
  const worstSingle = single.reduce((a, b) => (b.loss > a.loss ? b : a));
  return {
    kPair: k(P, I),
    kOthersMax: Math.max(...others),
    kOthersMean: mean(others),
    kRank: 1 + others.filter((x) => x > k(P, I)).length,
    kRowOfP: all.map((j) => k(P, j)),
    kOtherRowsMax: Math.max(...pairs.filter(([i]) => i !== P).map(([i, j]) => k(i, j))),
    qPair: scores.q[0][P][1][I],
    vPair: scores.v[0][P][1][I],
    baseline: scores.baseline,
    copying: m.circuits({ layer: 1, head: I }).copyingScore,
    uncut: loss([]),
    cutKey: loss(cut([P], [I], 'key')),
    cutQuery: loss(cut([P], [I], 'query')),
    cutValue: loss(cut([P], [I], 'value')),
    cutKeyAllLater: loss(cut([P], all, 'key')),
    cutQueryAllLater: loss(cut([P], all, 'query')),
    cutValueAllLater: loss(cut([P], all, 'value')),
    cutEveryKey: loss(cut(all, all, 'key')),
    worstSingle,
  };
}

function run(seed) {
  const m = new lab.Transformer({ vocabSize: LAB.vocabSize, contextLength: 1 + 2 * LAB.length, embedDim: 64, numHeads: H, numLayers: 2, positions: 'shortformer', seed });
  try {
    const ev = lab.repeatedTokens({ vocabSize: LAB.vocabSize, length: LAB.length, batch: LAB.evalBatch, seed: evalSeed(seed) });
    const recent = [];
    let phase = null;
    let before = null;
    for (let s = 0; s < AFTER; s += 1) {
      if (s === BEFORE) before = m.getState();
      const { tokens, repeated } = lab.repeatedTokens({ vocabSize: LAB.vocabSize, length: LAB.length, batch: LAB.batch, seed: batchSeed(seed, s) });
      recent.push(split(m.trainStep(tokens, { learningRate: LAB.learningRate }).losses, repeated));
      // the lab's phase change: the last 10 steps' mean repeated-token loss below a quarter of the others'
      if (phase === null && recent.length >= 10 && mean(recent.slice(-10).map((x) => x.repeated)) < mean(recent.slice(-10).map((x) => x.other)) / 4) phase = s + 1;
    }
    // the heads are named on the trained model: layer 1's strongest previous-token head, layer 2's strongest induction head
    const heads = m.headScores(ev.tokens);
    const P = argmax(heads[0].map((h) => h.previousToken));
    const I = argmax(heads[1].map((h) => h.induction));
    const after = measure(m, ev, P, I);
    const inductionHeads = heads[1].filter((h) => h.induction > 0.4).length;
    m.setState(before);
    return { seed, phase, P, I, prevScore: heads[0][P].previousToken, indScore: heads[1][I].induction, inductionHeads, before: measure(m, ev, P, I), after };
  } finally {
    m.free();
  }
}

const f = (x) => x.toFixed(3);

test(`the lab's default run, seeds ${SEEDS.join(', ')}: composition, copying score and path ablation before (step ${BEFORE}) and after (step ${AFTER}) the phase change`, { timeout: 3_600_000 }, () => {
  const results = SEEDS.map((seed) => {
    const r = run(seed);
    const { before: b, after: a } = r;
    console.log(`seed ${r.seed}: phase change at step ${r.phase}; L1 h${r.P} (prev ${f(r.prevScore)}) → L2 h${r.I} (induction ${f(r.indScore)}; ${r.inductionHeads} layer-2 heads above 0.4)`
      + ` | K pair ${f(b.kPair)} → ${f(a.kPair)} (rank ${a.kRank}/16), others max ${f(b.kOthersMax)} → ${f(a.kOthersMax)}, mean ${f(b.kOthersMean)} → ${f(a.kOthersMean)}, P's row ${a.kRowOfP.map(f).join(' ')} (other layer-1 heads' max ${f(a.kOtherRowsMax)}), Q ${f(a.qPair)}, V ${f(a.vPair)}, baseline ${f(a.baseline)}`
      + ` | copying ${f(b.copying)} → ${f(a.copying)}`
      + ` | repeated-token loss ${f(b.uncut)} → ${f(a.uncut)}; cut P→I key ${f(a.cutKey)} query ${f(a.cutQuery)} value ${f(a.cutValue)}; P→all L2 key ${f(a.cutKeyAllLater)} query ${f(a.cutQueryAllLater)} value ${f(a.cutValueAllLater)}; every L1→L2 key ${f(a.cutEveryKey)}; worst single path L1 h${a.worstSingle.i}→L2 h${a.worstSingle.j} ${a.worstSingle.input} ${f(a.worstSingle.loss)}`);
    return r;
  });
  const summary = (pick) => { const xs = results.map(pick); return `${f(Math.min(...xs))}–${f(Math.max(...xs))} (mean ${f(mean(xs))})`; };
  console.log(`summary over ${results.length} seeds: phase change at steps ${results.map((r) => r.phase).join(', ')}`);
  console.log(`  K(prev → induction) before ${summary((r) => r.before.kPair)}, after ${summary((r) => r.after.kPair)}; other pairs' max after ${summary((r) => r.after.kOthersMax)}, mean after ${summary((r) => r.after.kOthersMean)}; baseline ${f(results[0].after.baseline)}; rank 1 in ${results.filter((r) => r.after.kRank === 1).length} of ${results.length}`);
  console.log(`  previous-token head's strongest K after ${summary((r) => Math.max(...r.after.kRowOfP))}, other layer-1 heads' strongest ${summary((r) => r.after.kOtherRowsMax)}; Q(pair) after ${summary((r) => r.after.qPair)}, V(pair) after ${summary((r) => r.after.vPair)}; layer-2 heads with induction > 0.4: ${results.map((r) => r.inductionHeads).join(', ')}`);
  console.log(`  copying score before ${summary((r) => r.before.copying)}, after ${summary((r) => r.after.copying)}`);
  console.log(`  repeated-token loss after: uncut ${summary((r) => r.after.uncut)}, cut P→I key ${summary((r) => r.after.cutKey)}, query ${summary((r) => r.after.cutQuery)}, value ${summary((r) => r.after.cutValue)}; P→every L2 head key ${summary((r) => r.after.cutKeyAllLater)}, query ${summary((r) => r.after.cutQueryAllLater)}, value ${summary((r) => r.after.cutValueAllLater)}; every L1→L2 key ${summary((r) => r.after.cutEveryKey)}`);
  for (const r of results) {
    const { before: b, after: a } = r;
    const where = `seed ${r.seed}`;
    assert.ok(r.phase !== null && r.phase > BEFORE && r.phase <= AFTER, `${where}: the phase change (step ${r.phase}) falls between the two measurements`);
    // K-composition: the pair rises from about the baseline to well above it, and above the other pairs' mean
    assert.ok(b.kPair < 1.5 * b.baseline, `${where}: before, K(prev → induction) ${b.kPair} is near the baseline ${b.baseline}`);
    assert.ok(a.kPair > 1.5 * a.baseline, `${where}: after, K(prev → induction) ${a.kPair} is well above the baseline ${a.baseline}`);
    assert.ok(a.kPair > a.kOthersMean, `${where}: after, K(prev → induction) ${a.kPair} is above the other pairs' mean ${a.kOthersMean}`);
    // the induction head copies
    assert.ok(a.copying > 0.9, `${where}: the induction head's copying score ${a.copying}`);
    // cutting the previous-token head's output from every layer-2 head's keys hurts copying (several layer-2 heads
    // become induction heads, so cutting it from one of them alone does little), far more than from their queries
    // or values; cutting every layer-1 head from every layer-2 key undoes copying: no better than guessing (ln 31)
    assert.ok(a.cutKeyAllLater > 2 * a.uncut, `${where}: cutting prev → every layer-2 key: ${a.cutKeyAllLater} against ${a.uncut} uncut`);
    assert.ok(a.cutKeyAllLater > 2 * Math.max(a.cutQueryAllLater, a.cutValueAllLater), `${where}: the key cut (${a.cutKeyAllLater}) hurts more than the query (${a.cutQueryAllLater}) or value (${a.cutValueAllLater}) cut`);
    assert.ok(a.cutEveryKey > Math.log(LAB.vocabSize - 1), `${where}: with every layer-1 → layer-2 key path cut the repeated-token loss ${a.cutEveryKey} is no better than guessing`);
  }
});
