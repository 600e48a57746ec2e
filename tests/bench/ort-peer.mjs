// One thread count of the onnxruntime-web comparison (bench.mjs runs this once per count, in a child
// process each: ORT reads env.wasm.numThreads when its wasm starts, so one process has one count).
//
//   node tests/bench/ort-peer.mjs --threads 1|2 [--rounds128 N] [--rounds1024 N]   timings, one JSON line
//   node tests/bench/ort-peer.mjs --threads 1 --smoke                                agreement only, not timed
//
// attention-lab: with --threads 1 the default build (target/pkg-node, the one the rest of bench.mjs
// measures); with more, the packed package (pkg/, whose Node entry is the threads build) after
// `await initThreadPool(threads)`. ORT: env.wasm.numThreads = threads, SIMD.
//
// The layer is `new MultiHeadAttention({ embedDim: C, numHeads: h, seed: 3 })` with biases; ORT runs the
// ONNX model built from its getWeights() (tests/bench/ort.mjs). Per shape the variants alternate round
// by round (so that load from other processes on the machine hits all alike); medians over the rounds.
// Every ORT output is checked against attention-lab's Float32Array forward of the same input.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { seeded as seededValues } from '../js/support/mulberry32.mjs';
import { attentionModel, loadOrt, ortRunner } from './ort.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const require = createRequire(import.meta.url);
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const threads = arg('--threads', 1);
const smoke = process.argv.includes('--smoke');
if (!Number.isInteger(threads) || threads < 1) throw new RangeError(`ort-peer.mjs: --threads must be an integer ≥ 1, got ${threads}`);

// pkg/ with its slash: without it require() would load the repository's pkg.json
const lab = threads === 1 ? require(join(root, 'target/pkg-node/attention_lab.js')) : require(`${join(root, 'pkg')}/`);
const labBuild = threads === 1 ? 'target/pkg-node (default build)' : 'pkg/ (threads build)';
let labThreads = 1;
if (threads > 1) {
  labThreads = await lab.initThreadPool(threads);
  if (labThreads !== threads) throw new Error(`attention-lab initThreadPool(${threads}) resolved to ${labThreads}: ${lab.threadsInfo().reason}`);
}
// at 1 thread also the threads build without a pool (when pkg/ is there), so that the 2-thread/1-thread
// ratio can be read with the same build on both sides
const labThreadsBuild = threads === 1 && existsSync(join(root, 'pkg/threads')) ? require(`${join(root, 'pkg')}/`) : null;
const ort = await loadOrt(threads);

const seeded = (len, seed, scale = 1) => seededValues(len, seed, { scale, Array: Float32Array });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const maxAbsDiff = (a, b) => {
  if (a.length !== b.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
};

const CASES = smoke
  ? [{ t: 8, c: 16, h: 4, rounds: 0 }]
  : [
    { t: 128, c: 768, h: 12, rounds: arg('--rounds128', 61), training: true },
    { t: 1024, c: 768, h: 12, rounds: arg('--rounds1024', 9) },
  ];
// ORT (f32, its own summation order) against attention-lab's f32 forward, smoke and full run alike
// (seen: 6e-8 at T=8, 3.3e-7 at T=128, 1.5e-7 at T=1024; a wrong scale 1.001/√d in the ops graph gives 4e-4 at
// T=8 and 9e-5 at T=128, and fails)
const TOLERANCE = 1e-5;

const rows = [];
let failures = 0;
for (const cs of CASES) {
  const { t, c, h } = cs;
  const layer = new lab.MultiHeadAttention({ embedDim: c, numHeads: h, seed: 3 });
  const w = layer.getWeights();
  const x = seeded(t * c, 1);
  const g = seeded(t * c, 2);
  const input = { data: x, shape: [t, c] };
  const expected = layer.forward(input).output.data; // also packs the f32 weights (once per set of weights)
  const variants = [{ impl: 'attention-lab', what: 'forward', async: false, run: () => layer.forward(input).output.data }];
  if (labThreadsBuild && !smoke) {
    const other = new labThreadsBuild.MultiHeadAttention({ embedDim: c, numHeads: h, seed: 3 });
    variants.push({ impl: 'attention-lab threads build', what: 'forward', async: false, run: () => other.forward(input).output.data });
  }
  for (const variant of ['ops', 'fused']) {
    const r = await ortRunner(ort, attentionModel(w, { c, h, variant }), { t, c });
    variants.push({ impl: `ORT ${variant}`, what: 'forward', async: true, run: () => r.run(x) });
  }
  if (cs.training) {
    variants.push({
      impl: 'attention-lab', what: 'training step', async: false,
      run: () => {
        layer.forward(input, null, null, { training: true });
        return layer.backward({ data: g, shape: [t, c] }).query.data;
      },
    });
  }
  for (const v of variants) {
    v.ms = [];
    const output = v.async ? await v.run() : v.run(); // warm-up, and the agreement check
    if (v.what === 'forward') {
      v.worst = maxAbsDiff(output, expected);
      const tolerance = TOLERANCE;
      if (!(v.worst <= tolerance)) {
        failures++;
        console.error(`DISAGREES: ${v.impl} at T=${t}, C=${c}, h=${h}, ${threads} thread(s): max |Δ| = ${v.worst} vs attention-lab's f32 forward (tolerance ${tolerance})`);
      }
    }
  }
  for (let round = 0; round < cs.rounds; round++) {
    for (const v of variants) {
      const start = performance.now();
      if (v.async) await v.run();
      else v.run();
      v.ms.push(performance.now() - start);
    }
  }
  for (const v of variants) {
    rows.push({
      t, c, h, threads, impl: v.impl, what: v.what, worst: v.worst ?? null, rounds: cs.rounds,
      ...(cs.rounds ? { ms: median(v.ms), min: Math.min(...v.ms), max: Math.max(...v.ms) } : {}),
    });
  }
  layer.free();
}
console.log(JSON.stringify({
  threads, labThreads, labBuild, ortThreads: ort.env.wasm.numThreads, ortVersion: ort.env.versions.web,
  tolerance: TOLERANCE, failures, rows,
}));
process.exit(failures ? 1 : 0);
