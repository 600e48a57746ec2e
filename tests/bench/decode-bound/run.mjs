// make bench-decode-bound: GPT-2 small's decoding products through src/kernels/ against a SIMD sum
// that only reads the same 494 MB (see Cargo.toml), alternated, median of 11 rounds of each, wall
// clock and CPU time. When the products take about the read's time, a decoding step cannot get faster
// without reading fewer bytes. Also each part alone: the layers' products (W read where it lies), the tied
// unembedding (W_E's rows), and the packed kernel on one row (the layer's prepacked W_Q, W_K, W_V, W_O).
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';

const wasm = process.argv[2] ?? 'target/decode-bound/wasm32-unknown-unknown/release/decode_bound.wasm';
const { instance } = await WebAssembly.instantiate(readFileSync(wasm), {});
const { setup, products, read_only: readOnly, layer_products: layers, unembedding, prepacked_products: prepacked, prepacked_bytes: prepackedBytes } = instance.exports;
const bytes = setup();
const unembeddingBytes = 50257 * 768 * 4;
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const parts = [
  ['products', products, bytes],
  ['read only', readOnly, bytes],
  ['layers', layers, bytes - unembeddingBytes],
  ['unembedding', unembedding, unembeddingBytes],
  ['prepacked', prepacked, prepackedBytes()],
];
const runs = Object.fromEntries(parts.map(([name]) => [name, [[], []]]));
for (let round = 0; round < 11; round += 1) {
  for (const [name, f] of parts) {
    const [t, c] = [performance.now(), cpu()];
    f();
    runs[name][0].push(performance.now() - t);
    runs[name][1].push(cpu() - c);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`${cpus()[0].model}, load ${loadavg()[0].toFixed(1)}; ${(bytes / 1e6).toFixed(0)} MB of f32 weights`);
for (const [name, , n] of parts) {
  const [wall, time] = runs[name];
  console.log(`${name.padEnd(12)} ${median(wall).toFixed(1)} ms (CPU ${median(time).toFixed(1)} ms), ${(n / 1e6).toFixed(0)} MB, ${(n / median(wall) / 1e6).toFixed(1)} GB/s`);
}
console.log(`products / read only: ${(median(runs.products[0]) / median(runs['read only'][0])).toFixed(2)}`);
