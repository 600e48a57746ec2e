// Times `matmul` of each variant (argv: name=path.wasm …) on the projection shapes of the benchmark
// and prints speed and size. Node, one thread.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const SHAPES = [[128, 768, 768], [1024, 768, 768], [1024, 64, 1024]];
const rows = [];
let reference;
for (const arg of process.argv.slice(2)) {
  const [name, file] = arg.split('=');
  const bytes = readFileSync(file);
  const { instance } = await WebAssembly.instantiate(bytes, {});
  const { alloc, matmul, memory } = instance.exports;
  const row = { variant: name, 'wasm KiB': (bytes.length / 1024).toFixed(1), 'gzip KiB': (gzipSync(bytes, { level: 9 }).length / 1024).toFixed(1) };
  for (const [m, k, n] of SHAPES) {
    const [a, b, c] = [m * k, k * n, m * n].map((len) => alloc(len));
    const view = (ptr, len) => new Float32Array(memory.buffer, ptr, len);
    view(a, m * k).forEach((_, i, x) => { x[i] = Math.sin(i) ; });
    view(b, k * n).forEach((_, i, x) => { x[i] = Math.cos(i * 0.7); });
    for (let i = 0; i < 3; i++) matmul(m, k, n, a, b, c);
    const times = [];
    for (let i = 0; i < 15; i++) { const s = performance.now(); matmul(m, k, n, a, b, c); times.push(performance.now() - s); }
    times.sort((x, y) => x - y);
    const ms = times[7];
    const out = view(c, m * n).slice(0, 64);
    if (reference?.[`${m}x${k}x${n}`]) {
      const worst = Math.max(...out.map((x, i) => Math.abs(x - reference[`${m}x${k}x${n}`][i])));
      if (worst > 1e-2) throw new Error(`${name} disagrees on ${m}×${k}×${n}: ${worst}`);
    } else { (reference ??= {})[`${m}x${k}x${n}`] = out; }
    row[`${m}×${k}×${n} ms`] = ms.toFixed(2);
    row[`${m}×${k}×${n} GFLOP/s`] = (2 * m * k * n / ms / 1e6).toFixed(1);
  }
  rows.push(row);
}
console.table(rows);
