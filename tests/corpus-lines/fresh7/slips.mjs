// A seventh held-out batch for the first wrong line (issue 28), written after the fixes the sixth
// batch (../fresh6/) led to and before the diagnosis was run on it: a right answer per challenge
// 01–09 in a style none of the corpus, fresh/ … fresh6/ has for that challenge (compose() by
// reduceRight over per-row steps with K and V as arrays of columns; a memoised key-cutting helper
// with heads by Object.fromEntries/entries and dot products by for…in; a class of getters fed by a
// row generator; an einsum-like sum(n, f) helper over Float64Array rows from Array.from; a reduce
// over the tokens carrying { cache, rows } with the heads walked by recursion; K and V as arrays of
// columns with heads by for…in; a row generator with the inverse frequencies memoised in a
// module-level Map; labelled loops with `break keys` / `continue keys` over [j, score] pairs; a Head
// constructor with its steps on Head.prototype), and one- or two-line slips of it as a learner would
// make them. Each slip: the step at fault and the edit [from, to]; the line at fault is the line of
// `from` in fresh7/NN.js.
import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { step: 'scores', edit: ['Kc[0].map((_, j) =>', 'Kc.map((_, j) =>'] },
    { step: 'scale', edit: ['const d = Q[0].length;', 'const d = Kc[0].length;'] },
    { step: 'softmax', edit: ['row.map((x) => Math.exp(x - top))', 'row.map((x) => Math.exp(x) - top)'] },
    { step: 'weighted-sum', edit: ['const Vc = columns(V);', 'const Vc = V;'] },
    { step: 'softmax', edit: ['const z = e.reduceRight((a, b) => a + b, 0);', 'const z = row.reduceRight((a, b) => a + b, 0);'] },
  ],
  '02': [
    { step: 'slice', edit: ['if (!seen.has(key)) seen.set(key, f(key));', 'if (!seen.size) seen.set(key, f(key));'] },
    { step: 'scale', edit: ['return dot / Math.sqrt(d);', 'return dot * Math.sqrt(d);'] },
    { step: 'softmax', edit: ['const z = e.reduce((a, b) => a + b, 0);', 'const z = e.reduce((a, b) => a + Math.exp(b), 0);'] },
    { step: 'concat', edit: ['Object.values(outputs).flatMap((o) => o[t])', 'outputs.h0[t].flatMap((_, c) => Object.values(outputs).map((o) => o[t][c]))'] },
    { step: 'w-o', edit: ['acc + x * W_O[c][j]', 'acc + x * W_O[row.length - 1 - c][j]'] },
  ],
  '03': [
    { step: 'mask', edit: ['return [...this.rowsOf(this.masked, (row) => {', 'return [...this.rowsOf(this.scaled, (row) => {'] },
    { step: 'mask', edit: ['j > i ? -Infinity : x', 'j > i ? 0 : x'] },
    { step: 'scale', edit: ['const f = 1 / Math.sqrt(this.Q[0].length);', 'const f = 1 / Math.sqrt(this.Q.length);'] },
    { step: 'softmax', edit: ['return e.map((x) => x / z);', 'return row.map((x) => x / z);'] },
    { step: 'scores', edit: ['k.reduce((s, x, c) => s + x * q[c], 0)', 'k.reduce((s, x, c) => s + x * q[c])'] },
  ],
  '04': [
    { step: 'project-V', edit: ['const V = project(X, W_V);', 'const V = project(Q, W_V);'] },
    { step: 'slice', edit: ['const at = (M, t, c) => M[t][h * d + c];', 'const at = (M, t, c) => M[t][c * numberOfHeads + h];'] },
    { step: 'scale', edit: [' / Math.sqrt(d);', ';'] },
    { step: 'softmax', edit: ['const z = sum(T, (j) => row[j]);', 'const z = sum(d, (j) => row[j]);'] },
    { step: 'concat', edit: ['concat[i][h * d + c] =', 'concat[i][c * numberOfHeads + h] ='] },
  ],
  '05': [
    { step: 'cache', edit: ['attendHeads(q, next, 0)', 'attendHeads(q, cache, 0)'] },
    { step: 'slice', edit: ['s += q[c] * k[c];', 's += q[c - lo] * k[c];'] },
    { step: 'scale', edit: ['return s / Math.sqrt(d);', 'return s / Math.sqrt(cache.length);'] },
    { step: 'softmax', edit: ['acc + (e[j] / z) * v[c]', 'acc + e[j] * v[c]'] },
    { step: 'concat', edit: ['return [...part, ...attendHeads(q, cache, h + 1)];', 'return [...attendHeads(q, cache, h + 1), ...part];'] },
  ],
  '06': [
    { step: 'kv-head', edit: ['const g = Math.trunc(h / perKV);', 'const g = h % numberOfKVHeads;'] },
    { step: 'weighted-sum', edit: ['acc + (e[j] / z) * v', 'acc + (e[i] / z) * v'] },
    { step: 'slice', edit: ['q[h * d + c] * Kc', 'q[g * d + c] * Kc'] },
    { step: 'scale', edit: ['return dot / Math.sqrt(d);', 'return dot / d;'] },
    { step: 'softmax', edit: ['Math.exp(x - top)', 'Math.exp(x / top)'] },
  ],
  '07': [
    { step: 'frequency', edit: ['1 / base ** ((2 * i) / d)', '1 / 10000 ** ((2 * i) / d)'] },
    { step: 'frequency', edit: ['1 / base ** ((2 * i) / d)', '1 / base ** ((2 * (i + 1)) / d)'] },
    { step: 'position', edit: ['const p = offset + r;', 'const p = r;'] },
    { step: 'rotation', edit: ['b * Math.cos(theta) + a * Math.sin(theta)', 'b * Math.cos(theta) - a * Math.sin(theta)'] },
    { step: 'pairs', edit: ['const b = X[r][h * d + i + d / 2];', 'const b = X[r][h * d + i + 1];'] },
  ],
  '08': [
    { step: 'mask', edit: ['if (p - j >= w) continue keys;', 'if (p - j > w) continue keys;'] },
    { step: 'mask', edit: ['if (j > p) break keys;', 'if (j >= p) break keys;'] },
    { step: 'scale', edit: ['band.push([j, s / Math.sqrt(d)]);', 'band.push([j, s / Math.sqrt(w)]);'] },
    { step: 'softmax', edit: ['e.reduceRight((acc, [, x]) => acc + x, 0)', 'e.reduceRight((acc, [x]) => acc + x, 0)'] },
    { step: 'weighted-sum', edit: ['e.reduce((acc, [j, x]) =>', 'e.reduce((acc, [x, j]) =>'] },
  ],
  '09': [
    { step: 'scores', edit: ['this.q.map((qi, i) => this.k.map((kj, j) => {', 'this.q.map((qi, i) => this.q.map((kj, j) => {'] },
    { step: 'mask', edit: ['if (causal && j > i) return -Infinity;', 'if (causal && j > i) return Number.MIN_VALUE;'] },
    { step: 'w-o', edit: ['s + row[c] * Wc[j]', 's + row[c] * W_O[j][c]'] },
  ],
};

/** Every slip as { number, index, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
