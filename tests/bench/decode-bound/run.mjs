// make bench-decode-bound: GPT-2 small's decoding products through src/kernels/ against a SIMD sum
// that only reads the same 494 MB (see Cargo.toml), alternated, median of 11 rounds of each, wall
// clock and CPU time. When the products take about the read's time, a decoding step cannot get faster
// without reading fewer bytes.
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';

const wasm = process.argv[2] ?? 'target/decode-bound/wasm32-unknown-unknown/release/decode_bound.wasm';
const { instance } = await WebAssembly.instantiate(readFileSync(wasm), {});
const { setup, products, read_only: readOnly } = instance.exports;
const bytes = setup();
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const runs = { products: [[], []], 'read only': [[], []] };
for (let round = 0; round < 11; round += 1) {
  for (const [name, f] of [['products', products], ['read only', readOnly]]) {
    const [t, c] = [performance.now(), cpu()];
    f();
    runs[name][0].push(performance.now() - t);
    runs[name][1].push(cpu() - c);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`${cpus()[0].model}, load ${loadavg()[0].toFixed(1)}; ${(bytes / 1e6).toFixed(0)} MB of f32 weights`);
for (const [name, [wall, time]] of Object.entries(runs)) {
  console.log(`${name.padEnd(10)} ${median(wall).toFixed(1)} ms (CPU ${median(time).toFixed(1)} ms), ${(bytes / median(wall) / 1e6).toFixed(1)} GB/s`);
}
console.log(`products / read only: ${(median(runs.products[0]) / median(runs['read only'][0])).toFixed(2)}`);
