// Memory and decoding speed of a GPT-2-small-shaped checkpoint loaded by Transformer.fromPretrained (issue 30)
// in Node, through the Node build (target/pkg-node, `make build`):
//   node tests/perf/pretrained.mjs [--dtype float32] [--tokens 16] [--prompt 8]
// Writes the checkpoint in memory (C = 768, 12 layers, 12 heads, V = 50,257, 1024 positions, tied W_U,
// random F32 weights: tests/pretrained/checkpoint.mjs, never committed), then reports
// - the load's time against the time to copy the file's bytes in JS (the yardstick: ≤ 2×);
// - memory: the growth of the module's wasm memory over fromPretrained (wasm memory never shrinks, so this
//   is the load's peak: the parameters, what the model keeps beside them, the loader's buffers),
//   and again after a forward and a generate; each over the parameters' own bytes (numParameters × 4 in f32);
// - decoding: greedy generate of --tokens tokens after a --prompt-token prompt, the time between onToken
//   calls after the first (the KV cache's one-token forwards), median and mean, and the first token's
//   latency (the prompt's pass).
import { performance } from 'node:perf_hooks';
import lab, { wasmMemoryBytes } from '../js/support/lab.mjs';
import { gpt2Checkpoint, GPT2_SMALL } from '../pretrained/checkpoint.mjs';

const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, a, i, all) => (a.startsWith('--') ? [...pairs, [a.slice(2), all[i + 1]]] : pairs), []));
const dtype = args.dtype ?? 'float32';
const newTokens = Number(args.tokens ?? 16);
const promptLength = Number(args.prompt ?? 8);
const MB = (b) => (b / 2 ** 20).toFixed(1);

let t0 = performance.now();
const checkpoint = gpt2Checkpoint({ ...GPT2_SMALL, seed: 124 });
console.log(`checkpoint written in memory: ${MB(checkpoint.weights.length)} MB in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

// the yardstick for the load: the time to copy the file's bytes (median of 3 copies in JS)
const copies = [0, 1, 2].map(() => {
  const start = performance.now();
  const copy = checkpoint.weights.slice();
  const ms = performance.now() - start;
  if (copy.length !== checkpoint.weights.length) throw new Error('copy');
  return ms;
}).sort((a, b) => a - b);
const copySeconds = copies[1] / 1000;

const before = wasmMemoryBytes();
t0 = performance.now();
const model = lab.Transformer.fromPretrained({ ...checkpoint, dtype });
const loadSeconds = (performance.now() - t0) / 1000;
const afterLoad = wasmMemoryBytes();
const weightBytes = model.numParameters * (dtype === 'float32' ? 4 : 8);
console.log(`fromPretrained (${dtype}): ${loadSeconds.toFixed(2)} s; ${model.numParameters.toLocaleString('en')} parameters = ${MB(weightBytes)} MB`);
console.log(`copying the file's bytes in JS: ${copySeconds.toFixed(3)} s (median of 3): the load takes ${(loadSeconds / copySeconds).toFixed(1)}× that`);
console.log(`wasm memory: ${MB(before)} MB before, ${MB(afterLoad)} MB after the load: growth ${MB(afterLoad - before)} MB = ${((afterLoad - before) / weightBytes).toFixed(2)}× the weights`);

const prompt = Array.from({ length: promptLength }, (_, i) => (i * 7919 + 13) % GPT2_SMALL.vocab);
const times = [];
t0 = performance.now();
model.generate(prompt, { maxNewTokens: newTokens, onToken: () => times.push(performance.now()) });
const gaps = times.slice(1).map((t, i) => t - times[i]).sort((a, b) => a - b);
const median = gaps[Math.floor(gaps.length / 2)];
const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
console.log(`generate: first token ${(times[0] - t0).toFixed(0)} ms (the ${promptLength}-token prompt's pass); then per token median ${median.toFixed(1)} ms, mean ${mean.toFixed(1)} ms (${(1000 / mean).toFixed(2)} tokens/s) over ${gaps.length}`);
const afterGenerate = wasmMemoryBytes();
console.log(`wasm memory after generate: ${MB(afterGenerate)} MB: ${((afterGenerate - before) / weightBytes).toFixed(2)}× the weights`);
model.free();
