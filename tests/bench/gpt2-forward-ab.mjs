// Two (or more) Node builds' GPT-2-small-shaped forward side by side in one process (issue 30's T = 128 forward, f32,
// one thread): the checkpoint of tests/perf/pretrained.mjs (seed 124, random F32, never on disk) loaded into
// each build, then `model.forward([tokens])` alternating between the builds round by round (and which goes
// first), CPU time (process.cpuUsage) and wall clock, medians. Checks that every build's logits and loss have
// the same bits (a hash of every f32).
// Usage: node tests/bench/gpt2-forward-ab.mjs <before pkg-node dir> <after pkg-node dir> [more dirs] [--rounds 9] [--t 128]
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { gpt2Checkpoint, GPT2_SMALL } from '../pretrained/checkpoint.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => { const at = args.indexOf(name); return at >= 0 ? Number(args.splice(at, 2)[1]) : fallback; };
const rounds = option('--rounds', 9);
const T = option('--t', 128);
const require = createRequire(import.meta.url);
const checkpoint = gpt2Checkpoint({ ...GPT2_SMALL, seed: 124 });
const tokens = Array.from({ length: T }, (_, i) => (i * 7919 + 13) % GPT2_SMALL.vocab);
const builds = args.map((d) => {
  const lab = require(`${resolve(d)}/attention_lab.js`);
  return { dir: d, model: lab.Transformer.fromPretrained({ ...checkpoint, dtype: 'float32' }), cpu: [], wall: [] };
});
const hash = (f32) => {
  const u = new Uint32Array(f32.buffer, f32.byteOffset, f32.length);
  let h = 0x811c9dc5;
  for (let i = 0; i < u.length; i += 1) h = Math.imul(h ^ u[i], 0x01000193) >>> 0;
  return h;
};
const outs = builds.map(({ model }) => {
  const out = model.forward([tokens]);
  return `${hash(out.logits.data).toString(16)} loss ${out.loss}`;
});
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const load = [loadavg()[0]];
for (let round = 0; round < rounds; round += 1) {
  for (const b of round % 2 ? [...builds].reverse() : builds) {
    const [c, w] = [cpu(), performance.now()];
    b.model.forward([tokens]);
    b.cpu.push(cpu() - c);
    b.wall.push(performance.now() - w);
  }
}
load.push(loadavg()[0]);
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`${cpus()[0].model}, load ${load.map((l) => l.toFixed(1)).join(' → ')}; GPT-2 small forward, T = ${T}, f32, 1 thread, medians of ${rounds} alternating rounds`);
for (const b of builds) console.log(`${b.dir}: CPU ${median(b.cpu).toFixed(1)} ms (min ${Math.min(...b.cpu).toFixed(1)}), wall ${median(b.wall).toFixed(1)} ms`);
for (const b of builds.slice(1)) console.log(`${b.dir} / ${builds[0].dir}, CPU: ${(median(b.cpu) / median(builds[0].cpu)).toFixed(3)}`);
const same = outs.every((o) => o === outs[0]);
console.log(same ? `same bits (logits hash ${outs[0]})` : `DIFFERENT BITS: ${outs.join(' vs ')}`);
if (!same) process.exitCode = 1;
