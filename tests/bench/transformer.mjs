// `make bench`, the Transformer section: one trainStep of the default lab model (2 layers, 4 heads,
// C = 64, V = 32, batch 32, T = 49, shortformer positions, attention-only) in attention-lab (float32,
// 1 thread; and float64), against the same model written with TF.js on tfjs-backend-wasm (its
// autodiff and tf.train.adam, 1 thread, SIMD) and against a plain-JavaScript trainer on Float64Array
// (transformer-plain.mjs); the 2-thread ÷ 1-thread ratio (the packed package, each count in its own
// child process); and the time to induction over 10 seeds.
//
// The smoke run (make test) times nothing: it checks that TF.js's loss agrees with attention-lab's
// on the same weights and tokens, before and after two Adam steps, and that the plain trainer's
// loss and gradients agree with the float64 Transformer's.
//
//   node tests/bench/transformer.mjs [--smoke]               (also run by bench.mjs)
//   node tests/bench/transformer.mjs --child <threads>       internal: the thread-count child
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { plainTrainer, lossAndGradients, flatWeights } from './transformer-plain.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const require = createRequire(import.meta.url);
const smoke = process.argv.includes('--smoke');
const childThreads = process.argv.includes('--child') ? Number(process.argv[process.argv.indexOf('--child') + 1]) : null;

const MODEL = { vocabSize: 32, contextLength: 64, embedDim: 64, numHeads: 4, numLayers: 2, seed: 1 };
const TASK = { vocabSize: 32, length: 24, batch: 32 };
const LR = 1e-2;
const SMOKE_MODEL = { vocabSize: 11, contextLength: 16, embedDim: 8, numHeads: 2, numLayers: 2, seed: 3 };
const SMOKE_TASK = { vocabSize: 11, length: 6, batch: 3 };

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Median ms of `run` over `runs` timed calls after `warmup` untimed ones. */
function time(run, { runs = 15, warmup = 3 } = {}) {
  for (let i = 0; i < warmup; i++) run();
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    run();
    ms.push(performance.now() - start);
  }
  return median(ms);
}

/** The same model in TF.js: variables from attention-lab's weights, a loss function, and Adam. */
export function tfModel(tf, weights, { vocabSize: V, embedDim: C, numHeads: h }, learningRate) {
  const d = C / h;
  const v = (m) => tf.variable(tf.tensor2d(m));
  const W_E = v(weights.W_E), W_pos = v(weights.W_pos), W_U = v(weights.W_U);
  const layers = weights.layers.map((l) => ({ W_Q: v(l.W_Q), W_K: v(l.W_K), W_V: v(l.W_V), W_O: v(l.W_O) }));
  const heads = (x, B, T) => tf.transpose(tf.reshape(x, [B, T, h, d]), [0, 2, 1, 3]); // [B, h, T, d]
  function loss(tokens) {
    const B = tokens.length, T = tokens[0].length;
    const ids = tf.tensor2d(tokens, [B, T], 'int32');
    const maskBias = tf.mul(tf.sub(1, tf.linalg.bandPart(tf.ones([T, T]), -1, 0)), -1e9); // [T, T]
    const pos = tf.slice(W_pos, [0, 0], [T, C]);
    // the embedding as one-hot · W_E: gather's gradient needs UnsortedSegmentSum, which tfjs-backend-wasm lacks
    let x = tf.reshape(tf.matMul(tf.oneHot(tf.reshape(ids, [B * T]), V), W_E), [B, T, C]);
    for (const L of layers) {
      const qk = tf.reshape(tf.add(x, pos), [B * T, C]);
      const q = heads(tf.matMul(qk, L.W_Q), B, T), k = heads(tf.matMul(qk, L.W_K), B, T);
      const val = heads(tf.matMul(tf.reshape(x, [B * T, C]), L.W_V), B, T);
      const w = tf.softmax(tf.add(tf.mul(tf.matMul(q, k, false, true), 1 / Math.sqrt(d)), maskBias));
      const concat = tf.reshape(tf.transpose(tf.matMul(w, val), [0, 2, 1, 3]), [B * T, C]);
      x = tf.add(x, tf.reshape(tf.matMul(concat, L.W_O), [B, T, C]));
    }
    const logits = tf.slice(tf.reshape(tf.matMul(tf.reshape(x, [B * T, C]), W_U), [B, T, V]), [0, 0, 0], [B, T - 1, V]);
    const targets = tf.reshape(tf.oneHot(tf.reshape(tf.slice(ids, [0, 1], [B, T - 1]), [B * (T - 1)]), V), [B, T - 1, V]);
    return tf.losses.softmaxCrossEntropy(targets, logits, undefined, undefined, tf.Reduction.MEAN);
  }
  const optimizer = tf.train.adam(learningRate, 0.9, 0.999, 1e-8);
  return {
    loss: (tokens) => tf.tidy(() => loss(tokens).dataSync()[0]),
    step: (tokens) => tf.tidy(() => optimizer.minimize(() => loss(tokens), true).dataSync()[0]),
  };
}

async function loadTf() {
  // the union package: its Node bundle registers the gradients (tfjs-core's own registration is an ESM
  // file that Node cannot load); the same tfjs-core instance as the wasm backend's
  const tf = require('@tensorflow/tfjs');
  const wasm = require('@tensorflow/tfjs-backend-wasm');
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
  wasm.setThreadsCount(1);
  await tf.setBackend('wasm');
  await tf.ready();
  return tf;
}

/** Steps and seconds until some last-layer head's induction score passes 0.4 and the mean loss on
 * repeated tokens is below a quarter of the mean loss on the others (checked every 5 steps, on the
 * step's own batch and a fixed probe batch; the checks are inside the time). */
export function timeToInduction(lab, seed, { maxSteps = 600, learningRate = LR, config = {} } = {}) {
  const model = new lab.Transformer({ ...MODEL, ...config, seed });
  const probe = lab.repeatedTokens({ ...TASK, batch: 16, seed: 1_000_000 + seed }).tokens;
  const start = performance.now();
  try {
    for (let step = 1; step <= maxSteps; step++) {
      const { tokens, repeated } = lab.repeatedTokens({ ...TASK, seed: seed * 100_000 + step });
      const { losses } = model.trainStep(tokens, { learningRate });
      if (step % 5) continue;
      const T = tokens[0].length;
      const sums = { rep: [0, 0], other: [0, 0] };
      for (let b = 0; b < tokens.length; b++) {
        for (let t = 0; t < T - 1; t++) {
          const s = repeated[b][t + 1] ? sums.rep : sums.other;
          s[0] += losses.data[b * (T - 1) + t];
          s[1] += 1;
        }
      }
      const scores = model.headScores(probe);
      const induction = Math.max(...scores[scores.length - 1].map((s) => s.induction));
      if (induction > 0.4 && sums.rep[0] / sums.rep[1] < 0.25 * (sums.other[0] / sums.other[1])) {
        return { step, seconds: (performance.now() - start) / 1000, induction };
      }
    }
    return { step: null, seconds: (performance.now() - start) / 1000 };
  } finally {
    model.free();
  }
}

/** The thread-count child: trainStep's median ms on the packed package with initThreadPool(threads). */
async function child(threads) {
  const lab = require(join(root, 'pkg', 'node.cjs'));
  const got = await lab.initThreadPool(threads);
  const model = new lab.Transformer(MODEL);
  const batches = Array.from({ length: 8 }, (_, i) => lab.repeatedTokens({ ...TASK, seed: 50 + i }).tokens);
  let i = 0;
  const ms = time(() => model.trainStep(batches[i++ % 8], { learningRate: LR }), { runs: 20 });
  console.log(JSON.stringify({ threads: got, ms, loss: model.forward(batches[0]).loss }));
  process.exit(0);
}

export async function transformerBench(lab) {
  const tf = await loadTf();
  let failures = 0;
  if (smoke) {
    // the same weights and tokens: TF.js's loss, and after two Adam steps (no weight decay in either)
    const model = new lab.Transformer({ ...SMOKE_MODEL });
    const tokens = lab.repeatedTokens({ ...SMOKE_TASK, seed: 2 }).tokens;
    const tfm = tfModel(tf, model.getWeights(), SMOKE_MODEL, LR);
    const pairs = [[model.forward(tokens).loss, tfm.loss(tokens)]];
    for (let i = 0; i < 2; i++) pairs.push([model.trainStep(tokens, { learningRate: LR, weightDecay: 0 }).loss, tfm.step(tokens)]);
    pairs.push([model.forward(tokens).loss, tfm.loss(tokens)]);
    const worst = Math.max(...pairs.map(([a, b]) => Math.abs(a - b)));
    if (!(worst <= 1e-4)) {
      failures++;
      console.error(`DISAGREES: TF.js Transformer loss vs attention-lab: ${JSON.stringify(pairs)}`);
    }
    // the plain trainer against the float64 model
    const exact = new lab.Transformer({ ...SMOKE_MODEL, dtype: 'float64' });
    const ours = exact.gradients(tokens);
    const plain = lossAndGradients(flatWeights(exact.getWeights()), tokens, { V: SMOKE_MODEL.vocabSize, C: SMOKE_MODEL.embedDim, h: SMOKE_MODEL.numHeads });
    let worstGrad = Math.abs(ours.loss - plain.loss);
    const compare = (a, b) => a.flat().forEach((x, i) => { worstGrad = Math.max(worstGrad, Math.abs(x - b[i])); });
    for (const k of ['W_E', 'W_pos', 'W_U']) compare(ours.grads[k], plain.grads[k]);
    ours.grads.layers.forEach((l, i) => ['W_Q', 'W_K', 'W_V', 'W_O'].forEach((k) => compare(l[k], plain.grads.layers[i][k])));
    if (!(worstGrad <= 1e-12)) {
      failures++;
      console.error(`DISAGREES: the plain trainer's loss or gradients vs the float64 Transformer: max |Δ| = ${worstGrad}`);
    }
    model.free();
    exact.free();
    console.log(`transformer smoke: TF.js loss within ${worst.toExponential(1)}, plain trainer within ${worstGrad.toExponential(1)}`);
    return failures;
  }
  console.log(`\nTransformer trainStep — the default lab model (2 layers, 4 heads, C = 64, V = 32, batch 32, T = 49), ` +
    `${cpus()[0].model.trim()}, Node ${process.version}; median ms of 15 steps after 3:`);
  const batches = Array.from({ length: 8 }, (_, i) => lab.repeatedTokens({ ...TASK, seed: 50 + i }).tokens);
  const rows = [];
  const f32 = new lab.Transformer(MODEL);
  const weights = f32.getWeights();
  let i = 0;
  const ours = time(() => f32.trainStep(batches[i++ % 8], { learningRate: LR }));
  const f64 = new lab.Transformer({ ...MODEL, dtype: 'float64' });
  const ours64 = time(() => f64.trainStep(batches[i++ % 8], { learningRate: LR }), { runs: 7, warmup: 1 });
  const tfm = tfModel(tf, weights, MODEL, LR);
  const tfMs = time(() => tfm.step(batches[i++ % 8]), { runs: 10, warmup: 2 });
  const plain = plainTrainer(weights, { V: MODEL.vocabSize, C: MODEL.embedDim, h: MODEL.numHeads }, { learningRate: LR });
  const plainMs = time(() => plain.step(batches[i++ % 8]), { runs: 3, warmup: 1 });
  rows.push({ implementation: 'attention-lab float32', 'median ms': ours.toFixed(1), '÷ TF.js': (ours / tfMs).toFixed(3), 'plain JS ÷': (plainMs / ours).toFixed(1) });
  rows.push({ implementation: 'attention-lab float64', 'median ms': ours64.toFixed(1), '÷ TF.js': (ours64 / tfMs).toFixed(3), 'plain JS ÷': (plainMs / ours64).toFixed(1) });
  rows.push({ implementation: 'TF.js wasm (autodiff, tf.train.adam), 1 thread', 'median ms': tfMs.toFixed(1), '÷ TF.js': '1', 'plain JS ÷': (plainMs / tfMs).toFixed(1) });
  rows.push({ implementation: 'plain JS, Float64Array', 'median ms': plainMs.toFixed(0), '÷ TF.js': (plainMs / tfMs).toFixed(2), 'plain JS ÷': '1' });
  console.table(rows);
  f32.free();
  f64.free();
  if (existsSync(join(root, 'pkg', 'node.cjs'))) {
    const counts = [1, 2].map((n) => JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', String(n)], { encoding: 'utf8' }).trim().split('\n').pop()));
    const same = counts[0].loss === counts[1].loss;
    console.log(`threads (pkg/node.cjs, initThreadPool): 1 thread ${counts[0].ms.toFixed(1)} ms, ${counts[1].threads} threads ${counts[1].ms.toFixed(1)} ms: ` +
      `2 ÷ 1 = ${(counts[1].ms / counts[0].ms).toFixed(2)}; the same loss bits: ${same}`);
    if (!same) failures++;
  }
  console.log(`time to induction (some layer-${MODEL.numLayers} head's induction score > 0.4 and repeated-token loss < ¼ of the others', ` +
    `learningRate ${LR}, float32, 1 thread, checked every 5 steps), seeds 1–10:`);
  const runs = [];
  for (let seed = 1; seed <= 10; seed++) {
    const r = timeToInduction(lab, seed);
    runs.push(r);
    console.log(`  seed ${seed}: ${r.step ? `step ${r.step}, ${r.seconds.toFixed(1)} s` : `not within 600 steps (${r.seconds.toFixed(1)} s)`}`);
  }
  const reached = runs.filter((r) => r.step);
  console.log(`  ${reached.length}/10 reached it; ${runs.filter((r) => r.step && r.seconds <= 10).length}/10 within 10 s; median step ${median(reached.map((r) => r.step))}`);
  return failures;
}

if (childThreads) {
  await child(childThreads);
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const lab = require(join(root, 'target', 'pkg-node', 'attention_lab.js'));
  process.exit(await transformerBench(lab));
}
