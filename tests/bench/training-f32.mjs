// A Float32Array training step (forward with training: true, then backward) against the f32
// evaluation forward, at T=128, C=768, h=12 with W_Q, W_K, W_V, W_O and biases (self-attention), in
// one Node process, the variants alternating run by run so that load on the machine hits all alike.
//
//   node tests/bench/training-f32.mjs [--old path/to/pkg-node] [--rounds N]
//
// Rows: eval (f32 forward), train-fwd (the f32 training forward alone), step (f32 training forward + f32 backward), step-f64 (the same step on
// Float64Array: f64 forward and backward), and with --old a package built before the f32 backward
// (its Float32Array training step widened to f64, ran the f64 step and rounded): old-fwd (its training
// forward alone) and old-step. Medians in ms.
import { createRequire } from 'node:module';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { seeded as seededValues } from '../js/support/mulberry32.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const require = createRequire(import.meta.url);
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : process.argv[i + 1];
};
const lab = require(join(root, 'target/pkg-node/attention_lab.js'));
const oldPath = arg('--old', null);
const old = oldPath ? require(resolve(oldPath, 'attention_lab.js')) : null;
const rounds = Number(arg('--rounds', 15));
const [T, C, h] = [128, 768, 12];

const seeded = (len, seed, scale = 1) => seededValues(len, seed, { scale, Array: Float32Array });
const rowsOf = (flat, t, c) => Array.from({ length: t }, (_, i) => Array.from(flat.subarray(i * c, (i + 1) * c)));
const x = seeded(T * C, 1);
const g = seeded(T * C, 2);
const ws = [0, 1, 2, 3].map((i) => rowsOf(seeded(C * C, 10 + i, 1 / Math.sqrt(C)), C, C));
const bs = [0, 1, 2, 3].map((i) => Array.from(seeded(C, 20 + i, 0.1)));

function layerOf(pkg) {
  const layer = new pkg.MultiHeadAttention({ embedDim: C, numHeads: h });
  const [W_Q, W_K, W_V, W_O] = ws;
  const [b_Q, b_K, b_V, b_O] = bs;
  layer.setWeights({ W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O });
  return layer;
}

const f32 = (data) => ({ data, shape: [T, C] });
const variants = {
  eval: (layer) => () => layer.forward(f32(x)).output.data,
  'train-fwd': (layer) => () => layer.forward(f32(x), null, null, { training: true }).output.data,
  step: (layer) => () => {
    layer.forward(f32(x), null, null, { training: true });
    return layer.backward(f32(g)).query.data;
  },
  'step-f64': (layer) => {
    const [x64, g64] = [Float64Array.from(x), Float64Array.from(g)];
    return () => {
      layer.forward({ data: x64, shape: [T, C] }, null, null, { training: true });
      return layer.backward({ data: g64, shape: [T, C] }).query.data;
    };
  },
};
const runs = Object.entries(variants).map(([name, make]) => ({ name, run: make(layerOf(lab)), ms: [] }));
if (old) {
  runs.push({ name: 'old-fwd', run: variants['train-fwd'](layerOf(old)), ms: [] });
  runs.push({ name: 'old-step', run: variants.step(layerOf(old)), ms: [] });
}

for (const r of runs) r.run(); // warm-up: packs the weights, grows the memory
for (let i = 0; i < rounds; i += 1) {
  for (const r of runs) {
    const start = performance.now();
    r.run();
    r.ms.push(performance.now() - start);
  }
}
const median = (a) => [...a].sort((p, q) => p - q)[Math.floor(a.length / 2)];
const evalMs = median(runs[0].ms);
console.log(`T=${T}, C=${C}, h=${h} with projections; ${rounds} alternating rounds, medians (min–max)`);
for (const r of runs) {
  const m = median(r.ms);
  console.log(`${r.name.padEnd(9)} ${m.toFixed(2).padStart(8)} ms  (${Math.min(...r.ms).toFixed(2)}–${Math.max(...r.ms).toFixed(2)})  ${(m / evalMs).toFixed(2)}× eval`);
}
