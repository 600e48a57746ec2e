// make bench-gemm: GPT-2 small's T = 128 products (see Cargo.toml) through one or more builds of
// src/kernels/, alternated round by round in one process (so the machine's load falls on each alike),
// CPU time (process.cpuUsage), medians. Usage: node run.mjs [name=]file.wasm ... [--rounds N] [--only <text in the case's label>]
// Checks that every build gives the same bits (a hash of each output).
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';

const args = process.argv.slice(2);
const at = args.indexOf('--rounds');
const rounds = at >= 0 ? Number(args.splice(at, 2)[1]) : 9;
const atOnly = args.indexOf('--only'); // only the cases whose label contains this text
const only = atOnly >= 0 ? args.splice(atOnly, 2)[1] : '';
const files = args.length ? args : ['target/gemm-shapes/wasm32-unknown-unknown/release/gemm_shapes.wasm'];
const builds = [];
for (const arg of files) {
  const [name, file] = arg.includes('=') ? arg.split('=') : [arg.split('/').slice(-4)[0], arg];
  const { instance } = await WebAssembly.instantiate(readFileSync(file), {});
  instance.exports.setup();
  const wrong = instance.exports.check_pack_transposed?.() ?? 0;
  if (wrong) throw new Error(`${file}: pack_transposed put ${wrong} values in the wrong place`);
  builds.push({ name, x: instance.exports });
}
const names = ['c_attn 768×2304', 'attn c_proj 768×768', 'c_fc 768×3072', 'mlp c_proj 3072×768', 'unembedding 768×50257'];
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const cases = [];
for (let s = 0; s < names.length; s += 1) {
  cases.push({ label: `${names[s]} (packing as it goes)`, s, prepacked: false });
  cases.push({ label: `${names[s].split(' ').slice(0, -1).join(' ')} ${s === 4 ? '768×2048' : names[s].split(' ').at(-1)} prepacked`, s, prepacked: true });
  cases.push({ label: `${names[s]}: packing alone`, s, packOnly: true });
}
if (only) cases.splice(0, cases.length, ...cases.filter(({ label }) => label.includes(only)));
const times = cases.map(() => builds.map(() => []));
const hashes = cases.map(() => builds.map(() => new Set()));
const load = [loadavg()[0]];
for (let round = 0; round < rounds; round += 1) {
  const order = round % 2 ? [...builds.keys()].reverse() : [...builds.keys()];
  cases.forEach(({ s, prepacked, packOnly }, c) => {
    for (const b of order) {
      const f = packOnly ? builds[b].x.pack : prepacked ? builds[b].x.packed : builds[b].x.product;
      const t = cpu();
      hashes[c][b].add(f(s) >>> 0);
      times[c][b].push(cpu() - t);
    }
  });
}
load.push(loadavg()[0]);
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`${cpus()[0].model}, load ${load.map((l) => l.toFixed(1)).join(' → ')}; T = 128, CPU ms (Gmadd/s), medians of ${rounds}`);
const totals = builds.map((_, b) => cases.reduce((sum, { s, prepacked, packOnly }, c) => sum + (prepacked || packOnly ? 0 : median(times[c][b]) * (s === 4 ? 1 : 12)), 0));
console.log(`one forward's products (12 layers + the unembedding, packing as they go): ${totals.map((t) => t.toFixed(1)).join(' / ')} ms`);
console.log(`| product | ${builds.map((b) => b.name).join(' | ')} |${builds.length > 1 ? ' ratio |' : ''}`);
console.log(`| --- |${builds.map(() => ' ---: |').join('')}${builds.length > 1 ? ' ---: |' : ''}`);
let same = true;
cases.forEach(({ label, s, prepacked, packOnly }, c) => {
  const madds = builds[0].x.madds(s, prepacked);
  const ms = times[c].map(median);
  const cells = ms.map((m) => (packOnly ? `${m.toFixed(2)}` : `${m.toFixed(2)} (${(madds / m / 1e6).toFixed(1)})`));
  const hs = new Set(hashes[c].flatMap((h) => [...h]));
  if (hs.size !== 1) same = false;
  console.log(`| ${label} | ${cells.join(' | ')} |${builds.length > 1 ? ` ${(ms.at(-1) / ms[0]).toFixed(3)} |` : ''}`);
});
console.log(same ? 'same bits in every build and round' : 'THE BUILDS GIVE DIFFERENT BITS');
if (!same) process.exitCode = 1;
