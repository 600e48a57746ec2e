// Two (or more) Node builds' GPT-2-small-shaped decoding step side by side in one process (issue 30's decode
// with 127 cached, f32): the checkpoint of tests/perf/pretrained.mjs (seed 124, random F32, never on disk)
// loaded into each build, then `generate(prompt of 127, { maxNewTokens: 2 })` alternating between the builds
// round by round (and which goes first), timing the gap between the two onToken calls (the one-token forward
// of position 127 through every layer's KV cache, its logits and the argmax), as tests/bench/ort-gpt2-peer.mjs
// does. With --threads N (threads builds, e.g. target/pkg-node-threads) each build runs initThreadPool(N) first.
// Checks that every build generates the same tokens and the same last logits' bits.
// Usage: node tests/bench/gpt2-decode-ab.mjs <before dir> <after dir> [more dirs] [--rounds 15] [--threads 2]
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { gpt2Checkpoint, GPT2_SMALL } from '../pretrained/checkpoint.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => { const at = args.indexOf(name); return at >= 0 ? Number(args.splice(at, 2)[1]) : fallback; };
const rounds = option('--rounds', 15);
const threads = option('--threads', 1);
const require = createRequire(import.meta.url);
const checkpoint = gpt2Checkpoint({ ...GPT2_SMALL, seed: 124 });
const prompt = Array.from({ length: 127 }, (_, i) => (i * 7919 + 13) % GPT2_SMALL.vocab);
const builds = [];
for (const dir of args) {
  const lab = require(`${resolve(dir)}/attention_lab.js`);
  if (threads > 1) {
    const got = await lab.initThreadPool(threads);
    if (got !== threads) throw new Error(`${dir}: initThreadPool(${threads}) resolved to ${got}`);
  }
  builds.push({ dir, model: lab.Transformer.fromPretrained({ ...checkpoint, dtype: 'float32' }), ms: [] });
}
const decode = (model) => {
  const at = [];
  const ids = model.generate(prompt, { maxNewTokens: 2, onToken: () => at.push(performance.now()) });
  return { ms: at[1] - at[0], ids };
};
const first = builds.map(({ model }) => decode(model).ids.join());
if (new Set(first).size !== 1) throw new Error(`the builds generate different tokens: ${first.join(' | ')}`);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load = [loadavg()[0]];
for (let round = 0; round < rounds; round++) {
  const order = round % 2 ? [...builds].reverse() : builds;
  for (const b of order) b.ms.push(decode(b.model).ms);
  load.push(loadavg()[0]);
}
console.log(`${cpus()[0].model.trim()} ×${cpus().length}, ${threads} thread(s), ${rounds} rounds, load ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)}`);
const base = median(builds[0].ms);
for (const b of builds) console.log(`${b.dir}: decode ${median(b.ms).toFixed(1)} ms (min ${Math.min(...b.ms).toFixed(1)}), ${(median(b.ms) / base).toFixed(3)} of the first`);
for (const b of builds) b.model.free();
process.exit(0);
