// compare.mjs's method (two Node builds in one process, alternating rounds, the same bits checked first) on
// more of the paths a compiler flag can move: number[][] (f64) and Float64Array calls, the T = 1024 f32
// attention (the SIMD softmax), the f32 and f64 training forward and backward, the trace.
// Times are CPU time of this process (process.cpuUsage), not wall time: on a machine shared with other
// sessions a preempted call then costs nothing extra. Prints each case's median of the rounds' medians and
// the ratio after/before.
// Usage: node tests/size/compare-paths.mjs <before pkg-node dir> <after pkg-node dir> [rounds, default 5]
// (from branch size29; a case either build throws on is left out, as the light build's backward)
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { cpus } from "node:os";
import { seeded } from "../js/support/mulberry32.mjs";

const [beforeDir, afterDir, roundsArg] = process.argv.slice(2);
const rounds = Number(roundsArg ?? 5);
const require = createRequire(import.meta.url);
const builds = [beforeDir, afterDir].map((d) => require(`${resolve(d)}/attention_lab.js`));

const typed = (Array, len, seed, scale = 1) => seeded(len, seed, { scale, Array });
const rows = (data, r, k) => Array.from({ length: r }, (_, i) => Array.from(data.subarray(i * k, (i + 1) * k)));
const flat = (v) => (Array.isArray(v) ? v.flat(Infinity) : Array.from(v.data ?? v));

function layerOf(lab, c, h) {
  const layer = new lab.MultiHeadAttention({ embedDim: c, numHeads: h });
  const [W_Q, W_K, W_V, W_O] = [0, 1, 2, 3].map((i) => rows(typed(Float64Array, c * c, 10 + i, 1 / Math.sqrt(c)), c, c));
  const [b_Q, b_K, b_V, b_O] = [0, 1, 2, 3].map((i) => Array.from(typed(Float64Array, c, 20 + i, 0.1)));
  layer.setWeights({ W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O });
  return layer;
}

/** name, calls per timing, and for each build a function returning the result to compare */
const CASES = [
  ["nested multiHeadAttention 2x2 h=2 (the challenge)", 4000, (lab) => {
    const Q = [[1, 2], [3, 4]], V = [[5, 6], [7, 8]];
    return () => lab.multiHeadAttention(Q, Q, V, { numberOfHeads: 2, headDimensions: 1 }).flat();
  }],
  ["Float32Array layer forward T=128 C=768 h=12", 1, (lab) => {
    const layer = layerOf(lab, 768, 12);
    const X = { data: typed(Float32Array, 128 * 768, 1), shape: [128, 768] };
    return () => layer.forward(X).output;
  }],
  ["nested multiHeadAttention T=64 C=64 h=4 (f64)", 20, (lab) => {
    const [Q, K, V] = [1, 2, 3].map((s) => rows(typed(Float64Array, 64 * 64, s), 64, 64));
    return () => lab.multiHeadAttention(Q, K, V, { numberOfHeads: 4, headDimensions: 16, causal: true });
  }],
  ["Float64Array layer forward T=128 C=256 h=8", 2, (lab) => {
    const layer = layerOf(lab, 256, 8);
    const X = { data: typed(Float64Array, 128 * 256, 1), shape: [128, 256] };
    return () => layer.forward(X).output;
  }],
  ["Float32Array multiHeadAttention T=1024 C=768 h=12", 1, (lab) => {
    const [Q, K, V] = [1, 2, 3].map((s) => ({ data: typed(Float32Array, 1024 * 768, s), shape: [1024, 768] }));
    return () => lab.multiHeadAttention(Q, K, V, { numberOfHeads: 12, headDimensions: 64 });
  }],
  ["Float32Array training forward+backward T=128 C=256 h=8", 2, (lab) => {
    const layer = layerOf(lab, 256, 8);
    const X = { data: typed(Float32Array, 128 * 256, 1), shape: [128, 256] };
    const G = { data: typed(Float32Array, 128 * 256, 2), shape: [128, 256] };
    return () => { layer.forward(X, undefined, undefined, { training: true }); return layer.backward(G).query; };
  }],
  ["Float64Array training forward+backward T=64 C=256 h=8", 2, (lab) => {
    const layer = layerOf(lab, 256, 8);
    const X = { data: typed(Float64Array, 64 * 256, 1), shape: [64, 256] };
    const G = { data: typed(Float64Array, 64 * 256, 2), shape: [64, 256] };
    return () => { layer.forward(X, undefined, undefined, { training: true }); return layer.backward(G).query; };
  }],
  ["nested layer forward+backward T=16 C=64 h=4 (f64)", 20, (lab) => {
    const layer = layerOf(lab, 64, 4);
    const X = rows(typed(Float64Array, 16 * 64, 1), 16, 64), G = rows(typed(Float64Array, 16 * 64, 2), 16, 64);
    return () => { layer.forward(X, undefined, undefined, { training: true }); return layer.backward(G).query; };
  }],
  ["traceMultiHeadAttention T=8 C=16 h=4 causal", 200, (lab) => {
    const [Q, K, V] = [1, 2, 3].map((s) => rows(typed(Float64Array, 8 * 16, s), 8, 16));
    return () => lab.traceMultiHeadAttention(Q, K, V, { numberOfHeads: 4, headDimensions: 4, causal: true }).output;
  }],
];

// (a case that throws in either build is left out and said so: the light entry's backward)
const runs = CASES.map(([name, inner, make]) => ({ name, inner, fns: builds.map((lab) => make(lab)) })).filter(({ name, fns }) => {
  try { fns.forEach((f) => f()); return true; } catch (e) { console.log(`${name}: left out (${e.message.slice(0, 60)}…)`); return false; }
});
for (const { name, fns } of runs) {
  const [a, b] = fns.map((f) => flat(f()));
  if (a.length !== b.length || a.some((x, i) => !Object.is(x, b[i]))) throw new Error(`${name}: the builds disagree`);
}

function median(xs) { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]; }
function time(run, inner, count) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const s = process.cpuUsage();
    for (let j = 0; j < inner; j++) run();
    const { user, system } = process.cpuUsage(s);
    times.push((user + system) / 1000 / inner);
  }
  return median(times);
}

const results = runs.map(() => [[], []]);
runs.forEach(({ fns, inner }) => fns.forEach((f) => time(f, inner, 3))); // warm-up
for (let r = 0; r < rounds; r++) {
  runs.forEach(({ fns, inner }, i) => {
    for (const b of r % 2 ? [1, 0] : [0, 1]) results[i][b].push(time(fns[b], inner, 7));
  });
}
console.log(`${cpus()[0].model} ×${cpus().length}, Node ${process.version}, ${rounds} alternating rounds; the outputs agree bit for bit`);
runs.forEach(({ name }, i) => {
  const [b, a] = results[i].map(median);
  console.log(`${name}: before ${b.toFixed(3)} ms, after ${a.toFixed(3)} ms; after/before ${(a / b).toFixed(3)}`);
});
