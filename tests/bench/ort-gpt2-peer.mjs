// One thread count of the GPT-2 comparison with onnxruntime-web (issue 30's benchmark; bench.mjs --gpt2 runs
// this once per count, each in its own child process: ORT reads env.wasm.numThreads when its wasm starts).
//
//   node tests/bench/ort-gpt2-peer.mjs --threads 1|2 [--rounds N] [--decode-rounds N]   timings, one JSON line
//   node tests/bench/ort-gpt2-peer.mjs --threads 1 --smoke                               a small checkpoint, agreement only
//   node tests/bench/ort-gpt2-peer.mjs --threads 1 --vocab 256                           GPT-2 small's body, a small vocabulary
//
// The checkpoint: GPT-2-small-shaped (C = 768, 12 layers, 12 heads, V = 50,257, 1024 positions, tied), random
// F32 weights written in memory by tests/pretrained/checkpoint.mjs (seed 124, as tests/perf/pretrained.mjs),
// never on disk. attention-lab: Transformer.fromPretrained({ config, weights, dtype: 'float32' }) through
// target/pkg-node at 1 thread, and through the threads build (target/pkg-node-threads, else pkg/) after
// `await initThreadPool(threads)` at more. ORT: the ONNX graph of tests/bench/ort-gpt2.mjs built from the
// same file's tensors, env.wasm.numThreads = threads, SIMD, graphOptimizationLevel 'all'.
//
// What is timed (the variants alternate round by round, so that load from other processes hits all alike;
// medians over the rounds):
// - forward, T = 128: ours model.forward([tokens]) (logits [1, 128, V] back in JS, and the loss); ORT one
//   run with P = 0 (logits and the present key/values back in JS). When ours refuses T = 128 (its working-set
//   bound: a RangeError before any work; GPT-2 small at f2cb9e9 accepts at most T = 90), both at the largest
//   T ours accepts, and ORT at 128 alone as well.
// - decode, one token with 127 cached: ORT one run of T = 1 fed the present key/values of the 127-token
//   prompt (made once; feeding them copies them into ORT's memory on every run, as transformers.js does
//   with the wasm EP). Ours: the package has no public one-token forward, so model.generate(prompt, {
//   maxNewTokens }) and the time between the onToken calls around the one-token forward of position 127
//   through every layer's KV cache (127 positions cached), its logits and the greedy argmax. The prompt is
//   127 tokens, or as long as ours accepts (then greedy tokens up to position 127).
//
// Checked every time (smoke and full): ORT's logits against our forward's (max |Δ| over max |logit|); ORT's
// cached step against its own full pass; every token our generate picked is ORT's argmax.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gpt2Checkpoint, GPT2_SMALL } from '../pretrained/checkpoint.mjs';
import { gpt2Model, gpt2Runner } from './ort-gpt2.mjs';
import { loadOrt } from './ort.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const require = createRequire(import.meta.url);
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : process.argv[i + 1];
};
const threads = Number(arg('--threads', 1));
const smoke = process.argv.includes('--smoke');
const rounds = smoke ? 0 : Number(arg('--rounds', 11));
const decodeRounds = smoke ? 0 : Number(arg('--decode-rounds', rounds));
const gelu = arg('--gelu', 'tanh');
if (!Number.isInteger(threads) || threads < 1) throw new RangeError(`ort-gpt2-peer.mjs: --threads must be an integer ≥ 1, got ${threads}`);

let labBuild;
if (threads === 1) labBuild = 'target/pkg-node';
else if (existsSync(join(root, 'target/pkg-node-threads/attention_lab.js'))) labBuild = 'target/pkg-node-threads';
else labBuild = 'pkg/';
// pkg/ with its slash: without it require() would load the repository's pkg.json
const lab = labBuild === 'pkg/' ? require(`${join(root, 'pkg')}/`) : require(join(root, labBuild, 'attention_lab.js'));
let labThreads = 1;
if (threads > 1) {
  labThreads = await lab.initThreadPool(threads);
  if (labThreads !== threads) throw new Error(`attention-lab initThreadPool(${threads}) resolved to ${labThreads}: ${lab.threadsInfo().reason}`);
}
const ort = await loadOrt(threads);

// --vocab N: GPT-2 small's body with another vocabulary (to see what the unembedding costs each side)
const shape = smoke ? { vocab: 97, positions: 160, embd: 48, layers: 2, heads: 4, tied: true } : { ...GPT2_SMALL, vocab: Number(arg('--vocab', GPT2_SMALL.vocab)) };
const T = 128;
const seconds = (ms) => (ms / 1000).toFixed(1);
let t0 = performance.now();
const checkpoint = gpt2Checkpoint({ ...shape, seed: 124 });
const setup = { checkpointMs: performance.now() - t0 };
t0 = performance.now();
const model = lab.Transformer.fromPretrained({ ...checkpoint, dtype: 'float32' });
setup.loadMs = performance.now() - t0;
t0 = performance.now();
let modelBytes = gpt2Model(checkpoint, { gelu });
setup.onnxBytes = modelBytes.length;
setup.graphMs = performance.now() - t0;
t0 = performance.now();
const runner = await gpt2Runner(ort, modelBytes, { layers: shape.layers, heads: shape.heads, headDim: shape.embd / shape.heads });
setup.sessionMs = performance.now() - t0;
modelBytes = null;

const v = shape.vocab;
const ids = (n) => Array.from({ length: n }, (_, i) => (i * 7919 + 13) % v);
const argmax = (a) => { let best = 0; for (let i = 1; i < a.length; i++) if (a[i] > a[best]) best = i; return best; };
const scaledError = (actual, expected) => {
  if (actual.length !== expected.length) return Infinity;
  let worst = 0, scale = 0;
  for (let i = 0; i < expected.length; i++) {
    worst = Math.max(worst, Math.abs(actual[i] - expected[i]));
    scale = Math.max(scale, Math.abs(expected[i]));
  }
  return worst / (scale || 1);
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Our forward at T = 128, or, when the package refuses it (its working-set bound: a RangeError before any
// work), at the largest T it accepts; ORT at that T too, and at 128 alone.
let forwardT = T;
let refused = null;
for (; forwardT >= 2; forwardT--) {
  try {
    model.forward([ids(forwardT)]);
    break;
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    refused ??= error.message;
  }
}
// Our decode step with 127 cached: generate(prompt, { maxNewTokens }) and the gap between the onToken calls
// around the one-token forward of position 127 (127 positions in every layer's KV cache). The prompt is 127
// tokens, or the longest the package's prompt pass accepts (forwardT), the rest generated greedily.
const promptLength = Math.min(T - 1, forwardT);
const maxNewTokens = T + 1 - promptLength; // tokens promptLength … T; token k ≥ 1 comes from feeding position promptLength + k − 1
const ourDecode = () => {
  const at = [];
  const out = model.generate(ids(promptLength), { maxNewTokens, onToken: () => at.push(performance.now()) });
  return { ms: at[maxNewTokens - 1] - at[maxNewTokens - 2], out };
};

// agreement (also the warm-up of every variant)
const TOLERANCE = 1e-4; // max |Δ| / max |logit|, f32 in two summation orders (seen ~5e-7)
let failures = 0;
const forwardTokens = ids(forwardT);
const ours = model.forward([forwardTokens]).logits.data;
const ortForward = await runner.run(forwardTokens);
runner.dispose(ortForward.present);
const { out: generated } = ourDecode(); // T + 1 tokens: the prompt, then greedy up to position T
const ortAll = await runner.run(generated.slice(0, T)); // ORT's logits of positions 0 … T − 1 at once
runner.dispose(ortAll.present);
const ortPrompt = await runner.run(generated.slice(0, T - 1)); // the 127 cached positions ORT's decode step is fed
const ortStep = await runner.run([generated[T - 1]], ortPrompt.present);
runner.dispose(ortStep.present);
const greedyMismatch = [];
for (let r = promptLength - 1; r < T; r++) {
  if (argmax(ortAll.logits.subarray(r * v, (r + 1) * v)) !== generated[r + 1]) greedyMismatch.push(r + 1);
}
const agreement = {
  forward: scaledError(ortForward.logits, ours), // ORT vs our forward, T = forwardT
  decodeStep: scaledError(ortStep.logits, ortAll.logits.subarray((T - 1) * v)), // ORT's cached step vs its own full pass
  greedy: greedyMismatch.length === 0 && argmax(ortStep.logits) === generated[T], // our generate's tokens are ORT's argmax
};
for (const [what, e] of Object.entries(agreement)) {
  const ok = what === 'greedy' ? e : e <= TOLERANCE;
  if (!ok) {
    failures++;
    console.error(`DISAGREES: ${what}: ${what === 'greedy' ? `our generate's tokens at ${greedyMismatch} are not ORT's argmax` : `${e} > ${TOLERANCE}`} (${threads} thread(s))`);
  }
}

const timeOrt = async (tokens, past) => {
  const s = performance.now();
  const r = await runner.run(tokens, past);
  const ms = performance.now() - s;
  runner.dispose(r.present);
  return ms;
};
const decodeToken = [generated[T - 1]];
const variants = [
  { impl: 'attention-lab', what: 'forward', t: forwardT, n: rounds, run: async () => { const s = performance.now(); model.forward([forwardTokens]); return performance.now() - s; } },
  { impl: 'ORT', what: 'forward', t: forwardT, n: rounds, run: () => timeOrt(forwardTokens) },
  ...(forwardT < T ? [{ impl: 'ORT', what: 'forward', t: T, n: rounds, run: () => timeOrt(ids(T)) }] : []),
  { impl: 'attention-lab', what: 'decode', t: 1, n: decodeRounds, run: async () => ourDecode().ms },
  { impl: 'ORT', what: 'decode', t: 1, n: decodeRounds, run: () => timeOrt(decodeToken, ortPrompt.present) },
];
for (const x of variants) { x.ms = []; if (x.what === 'forward') await x.run(); } // warm-up
for (let round = 0; round < Math.max(rounds, decodeRounds); round++) {
  for (const x of variants) if (round < x.n) x.ms.push(await x.run());
}
runner.dispose(ortPrompt.present);
await runner.session.release();
model.free();

const rows = variants.map((x) => ({ impl: x.impl, what: x.what, t: x.t, threads, rounds: x.n, ...(x.n ? { ms: median(x.ms), min: Math.min(...x.ms), max: Math.max(...x.ms) } : {}) }));
console.error(`ort-gpt2-peer --threads ${threads}: checkpoint ${seconds(setup.checkpointMs)} s, fromPretrained ${seconds(setup.loadMs)} s, ONNX graph ${seconds(setup.graphMs)} s (${(setup.onnxBytes / 2 ** 20).toFixed(0)} MB), ORT session ${seconds(setup.sessionMs)} s`);
console.log(JSON.stringify({
  threads, labThreads, labBuild, ortThreads: ort.env.wasm.numThreads, ortVersion: ort.env.versions.web, gelu,
  shape, forwardT, refused, promptLength, tolerance: TOLERANCE, agreement, failures, setup, rows,
}));
process.exit(failures ? 1 : 0);
