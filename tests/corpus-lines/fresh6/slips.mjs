// A sixth held-out batch for the first wrong line (issue 28), written after the fixes the fifth
// batch (../fresh5/) led to and before the diagnosis was run on it: a right answer per challenge
// 01–09 in a style none of the corpus, fresh/ … fresh5/ has for that challenge (a tiny tensor class
// whose methods chain, one per line; heads in objects keyed by name and every matrix by Array.from
// with an index callback; a zip/zipWith/sum/dot helper library; one big function with no helpers
// over column-major storage; a cache class that is its own iterator, with flatMap over the heads;
// the K/V heads walked first, each group's query heads inside, into Float64Array rows; halves by
// destructuring and slice, put back by spread; while loops with manual indices over a band buffer;
// flat Float64Array weights through subarray views), and one- or two-line slips of it as a learner
// would make them. Each slip: the step at fault and the edit [from, to]; the line at fault is the
// line of `from` in fresh6/NN.js.
import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { step: 'scores', edit: ['for (let k = 0; k < r.length; k++)', 'for (let k = 0; k < r.length - 1; k++)'] },
    { step: 'scale', edit: ['.times(1 / Math.sqrt(d))', '.times(1 / Math.sqrt(T))'] },
    { step: 'softmax', edit: ['for (const x of e) z += x;', 'for (const x of r) z += Math.exp(x);'] },
    { step: 'softmax', edit: ['    .softmax()\n', '    .T().softmax().T()\n'] },
    { step: 'weighted-sum', edit: ['.matmul(new Tensor(V))', '.matmul(new Tensor(K))'] },
  ],
  '02': [
    { step: 'slice', edit: ['M[t][h * d + c]', 'M[t][h + c]'] },
    { step: 'scale', edit: ['dot(i, j) / Math.sqrt(d)', 'dot(i, j) / Math.sqrt(C)'] },
    { step: 'softmax', edit: ['Math.exp(s[i][j] - top)', 'Math.exp(s[j][i] - top)'] },
    { step: 'concat', edit: ['outputs[`head${Math.floor(col / d)}`]', 'outputs[`head${col % numberOfHeads}`]'] },
    { step: 'w-o', edit: ['concat[t][c] * W_O[c][j]', 'concat[t][c] * W_O[j][c]'] },
  ],
  '03': [
    { step: 'scores', edit: ['zipWith((x, y) => x * y)', 'zipWith((x, y) => x + y)'] },
    { step: 'scale', edit: ['scaleRow(scores, 1 / Math.sqrt(d))', 'scaleRow(scores, Math.sqrt(d))'] },
    { step: 'mask', edit: ['causal && j > i ? -Infinity : s', 'causal && j >= i ? -Infinity : s'] },
    { step: 'softmax', edit: ['scaleRow(exps, 1 / sum(exps))', 'scaleRow(exps, 1 / exps.length)'] },
    { step: 'weighted-sum', edit: ['transpose(V).map((col) => dot(weights, col))', 'V.map((col) => dot(weights, col))'] },
  ],
  '04': [
    { step: 'project-K', edit: ['k[t] += X[t][c] * W_K[c][o];', 'k[t] += X[t][c] * W_K[o][c];'] },
    { step: 'slice', edit: ['for (let c = first; c < first + d; c++) for (let i = 0; i < T; i++)', 'for (let c = first; c <= first + d; c++) for (let i = 0; i < T; i++)'] },
    { step: 'scale', edit: ['col.map((s) => s / Math.sqrt(d))', 'col.map((s) => s / Math.sqrt(C))'] },
    { step: 'softmax', edit: ['for (let j = 0; j < T; j++) W[j][i] /= z;', 'for (let j = 0; j < T; j++) W[i][j] /= z;'] },
    { step: 'w-o', edit: ['row[o] += Oc[c][t] * W_O[c][o];', 'row[o] += Oc[c][t] * W_O[o][c];'] },
  ],
  '05': [
    { step: 'cache', edit: ['for (let j = 0; j < this.keys.length; j++) yield', 'for (let j = 1; j < this.keys.length; j++) yield'] },
    { step: 'slice', edit: ['.map((c) => h * d + c)', '.map((c) => h + c)'] },
    { step: 'scale', edit: ['key[c], 0) / Math.sqrt(d))', 'key[c], 0) / d)'] },
    { step: 'softmax', edit: ['Math.exp(s - top)', 'Math.exp(top - s)'] },
    { step: 'weighted-sum', edit: ['out[n] += (exps[j] / z) * value[c]', 'out[n] = (exps[j] / z) * value[c]'] },
  ],
  '06': [
    { step: 'kv-head', edit: ['const h = g * group + m;', 'const h = g + m * numberOfKVHeads;'] },
    { step: 'kv-head', edit: ['const Vg = V.map((row) => row.slice(g * d, g * d + d));', 'const Vg = V.map((row) => row.slice(g, g + d));'] },
    { step: 'slice', edit: ['row.slice(h * d, h * d + d)', 'row.slice(h * d, h + d)'] },
    { step: 'scale', edit: ['q[c], 0) / Math.sqrt(d))', 'q[c], 0) / Math.sqrt(Ckv))'] },
    { step: 'softmax', edit: ['const z = e.reduce((a, b) => a + b, 0);', 'const z = Math.max(...e);'] },
  ],
  '07': [
    { step: 'frequency', edit: ['base ** (-(2 * i) / d)', 'base ** (-i / d)'] },
    { step: 'position', edit: ['(offset + r) * f', '(offset + r + 1) * f'] },
    { step: 'pairs', edit: ['[chunk.slice(0, half), chunk.slice(half)]', '[chunk.filter((_, k) => k % 2 === 0), chunk.filter((_, k) => k % 2 === 1)]'] },
    { step: 'rotation', edit: ['x * cos[i] - b[i] * sin[i]', 'x * cos[i] + b[i] * sin[i]'] },
    { step: 'pairs', edit: ['return [...first, ...second];', 'return [...second, ...first];'] },
  ],
  '08': [
    { step: 'mask', edit: ['const lo = Math.max(0, p - w + 1);', 'const lo = Math.max(0, p - w);'] },
    { step: 'mask', edit: ['while (j <= p) {\n      let s = 0;', 'while (j < p) {\n      let s = 0;'] },
    { step: 'scale', edit: ['band[j - lo] = s / Math.sqrt(d);', 'band[j - lo] = s / d;'] },
    { step: 'softmax', edit: ['      band[n] = Math.exp(band[n] - top);\n      z += band[n];', '      z += band[n];\n      band[n] = Math.exp(band[n] - top);'] },
    { step: 'weighted-sum', edit: ['(band[j - lo] / z) * V[j][c]', '(band[j - lo] / z) * V[j - lo][c]'] },
  ],
  '09': [
    { step: 'mask', edit: ['causal && j > i ? -Infinity', 'causal && j < i ? -Infinity'] },
    { step: 'concat', edit: ['contexts.flatMap((ctx) => ctx[t])', '[...contexts].reverse().flatMap((ctx) => ctx[t])'] },
    { step: 'weighted-sum', edit: ['acc += buf[i * T + j] * V[j][h * d + c]', 'acc += buf[j * T + i] * V[j][h * d + c]'] },
  ],
};

/** Every slip as { number, index, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
