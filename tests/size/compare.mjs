// Two builds' speed side by side in one process (alternating rounds, so that a shared machine's load falls on
// both): the challenge's 2×2 multiHeadAttention (number[][] in, `.flat()` out, as bench.mjs's small call) and
// the f32 T=128, C=768, h=12 layer forward with projections (t128.mjs's case). Prints each build's median of
// the rounds' medians and the ratio after/before.
// Usage: node tests/size/compare.mjs <before pkg-node dir> <after pkg-node dir> [rounds, default 7]
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { cpus } from "node:os";
import { seeded } from "../js/support/mulberry32.mjs";

const [beforeDir, afterDir, roundsArg] = process.argv.slice(2);
const rounds = Number(roundsArg ?? 7);
const require = createRequire(import.meta.url);
const builds = [beforeDir, afterDir].map((d) => require(`${resolve(d)}/attention_lab.js`));

const [t, c, h] = [128, 768, 12];
const f32 = (len, seed, scale = 1) => seeded(len, seed, { scale, Array: Float32Array });
const rows = (data, r, k) => Array.from({ length: r }, (_, i) => Array.from(data.subarray(i * k, (i + 1) * k)));
const [W_Q, W_K, W_V, W_O] = [0, 1, 2, 3].map((i) => rows(f32(c * c, 10 + i, 1 / Math.sqrt(c)), c, c));
const [b_Q, b_K, b_V, b_O] = [0, 1, 2, 3].map((i) => Array.from(f32(c, 20 + i, 0.1)));
const X = { data: f32(t * c, 1), shape: [t, c] };
const Q = [[1, 2], [3, 4]], V = [[5, 6], [7, 8]];

const cases = builds.map((lab) => {
  const layer = new lab.MultiHeadAttention({ embedDim: c, numHeads: h });
  layer.setWeights({ W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O });
  return {
    small: () => lab.multiHeadAttention(Q, Q, V, { numberOfHeads: 2, headDimensions: 1 }).flat(),
    t128: () => layer.forward(X),
  };
});

// the outputs agree bit for bit
for (const name of ["small", "t128"]) {
  const [a, b] = cases.map((k) => Array.from(name === "small" ? k[name]() : k[name]().output.data ?? k[name]().output));
  if (a.length !== b.length || a.some((x, i) => !Object.is(x, b[i]))) throw new Error(`${name}: the builds disagree`);
}

function median(xs) { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]; }
function time(run, inner, count) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const s = performance.now();
    for (let j = 0; j < inner; j++) run();
    times.push((performance.now() - s) / inner);
  }
  return median(times);
}

const results = { small: [[], []], t128: [[], []] };
for (const k of cases) { time(k.small, 2000, 5); time(k.t128, 1, 10); } // warm-up
for (let r = 0; r < rounds; r++) {
  for (const b of r % 2 ? [1, 0] : [0, 1]) {
    results.small[b].push(time(cases[b].small, 2000, 15) * 1000);
    results.t128[b].push(time(cases[b].t128, 1, 15));
  }
}
console.log(`${cpus()[0].model} ×${cpus().length}, Node ${process.version}, ${rounds} alternating rounds`);
for (const [name, unit] of [["small", "µs (2×2 multiHeadAttention, number[][])"], ["t128", "ms (f32 T=128 layer forward)"]]) {
  const [b, a] = results[name].map(median);
  console.log(`${name}: before ${b.toFixed(3)} after ${a.toFixed(3)} ${unit}; after/before ${(a / b).toFixed(3)}`);
}
