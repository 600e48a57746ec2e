// The f32 layer forward with projections at T=128, C=768, h=12 (bench.mjs's T128proj case), timed with
// one build's Node package: median ms of 40 runs after 1 s of warm-up. To compare builds' speed while
// shrinking the module (one build per process; run each a few times, the machine may be shared).
// Usage: node tests/size/t128.mjs [path to a pkg-node directory, default target/pkg-node]
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { seeded } from "../js/support/mulberry32.mjs";

const dir = resolve(process.argv[2] ?? "target/pkg-node");
const lab = createRequire(import.meta.url)(`${dir}/attention_lab.js`);
const [t, c, h] = [128, 768, 12];
const f32 = (len, seed, scale = 1) => seeded(len, seed, { scale, Array: Float32Array });
const rows = (data, r, k) => Array.from({ length: r }, (_, i) => Array.from(data.subarray(i * k, (i + 1) * k)));
const layer = new lab.MultiHeadAttention({ embedDim: c, numHeads: h });
const [W_Q, W_K, W_V, W_O] = [0, 1, 2, 3].map((i) => rows(f32(c * c, 10 + i, 1 / Math.sqrt(c)), c, c));
const [b_Q, b_K, b_V, b_O] = [0, 1, 2, 3].map((i) => Array.from(f32(c, 20 + i, 0.1)));
layer.setWeights({ W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O });
const X = { data: f32(t * c, 1), shape: [t, c] };
const start = performance.now();
while (performance.now() - start < 1000) layer.forward(X);
const times = [];
for (let i = 0; i < 40; i++) {
  const s = performance.now();
  layer.forward(X);
  times.push(performance.now() - s);
}
times.sort((a, b) => a - b);
console.log(`f32 T=128 C=768 h=12 with projections: median ${times[20].toFixed(2)} ms (min ${times[0].toFixed(2)}) — ${dir}`);
