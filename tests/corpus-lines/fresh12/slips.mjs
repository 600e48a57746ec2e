// A twelfth held-out batch for the first wrong line (issue 28), written blind (without reading the
// diagnosis) and before the diagnosis was run on it: a right answer per challenge 01–09 in a style
// none of the corpus, fresh/ … fresh11/ has for that challenge (an object of named operations
// dispatched by string, the answer a program of op names run over one state object; an OOP pipeline,
// a Step base class with one subclass per stage, each run(ctx) returning a new context; tagged tensor
// objects { data, shape, strides } over a Float64Array, the transpose a swap of strides and every
// product one einsum-like contract helper, softmax rows written through subarray views; "kernels" over
// flat Float64Array buffers, the projections a flat gemm and every head written by index math into one
// flat T×C buffer; a cache made by a closure with a counter and string-keyed entries 'k' + n / 'v' + n,
// read back by a counter-based iterator with next(); a tiny functional library, range, sum, zipWith,
// transpose, dot and columns, every step composed from it; RoPE in while loops with manual indices
// over a flat Float64Array copy, the angles memoised in a string-keyed object `${p}|${i}`; a tiny stack
// machine, the attention a list of [op, arg] instructions, push, transpose, matmul, scale, band,
// softmax, run by an interpreter; Array.prototype.reduce building objects, the logits an object keyed
// by key index, the heads an object keyed `head${h}` joined by for…in), and one- or two-line slips of
// it as a learner would make them, 15 of the 80 more than a one-token change (a term or a
// call left out, a statement moved, a step done twice or in the wrong order). Each slip: the step at
// fault, the edit [from, to], and the half (A or B, alternating within a challenge, fixed before any
// run: rules may be fitted on half A's misses only, half B measures whether they generalise); the
// line at fault is the line of `from` in fresh12/NN.js.
import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { half: 'A', step: 'scores', edit: ['for (let c = 0; c < q.length; c++) s += q[c] * k[c];', 'for (let c = 0; c < q.length; c++) s += q[c] * q[c];'] },
    { half: 'B', step: 'scale', edit: ['const f = 1 / Math.sqrt(st.Q[0].length);', 'const f = 1 / Math.sqrt(st.Q.length);'] },
    { half: 'A', step: 'softmax', edit: ['const ex = row.map((x) => Math.exp(x - top));', 'const ex = row.map((x) => Math.exp(x));'] },
    { half: 'B', step: 'weighted-sum', edit: ['for (let c = 0; c < dv; c++) out[c] += w[j] * st.V[j][c];', 'for (let c = 0; c < dv; c++) out[c] += w[j] * st.V[c][j];'] },
    { half: 'A', step: 'scale', edit: ["const PROGRAM = ['scores', 'scale', 'softmax', 'mix'];", "const PROGRAM = ['scores', 'softmax', 'scale', 'mix'];"] },
    { half: 'B', step: 'softmax', edit: ['let z = 0;', 'let z = 1;'] },
    { half: 'A', step: 'scores', edit: ['st.m = st.Q.map((q) => st.K.map((k) => {', 'st.m = st.Q.map((q) => st.Q.map((k) => {'] },
    { half: 'B', step: 'weighted-sum', edit: ['const out = new Array(dv).fill(0);', 'const out = new Array(dv).fill(1);'] },
    { half: 'A', step: 'softmax', edit: ['return ex.map((e) => e / z);', 'return ex;'] },
  ],
  '02': [
    { half: 'A', step: 'slice', edit: ['row.slice(h * d, (h + 1) * d)', 'row.slice(h * d, h + 1 * d)'] },
    { half: 'B', step: 'scores', edit: ['qi.reduce((a, x, c) => a + x * kj[c], 0)', 'qi.reduce((a, x, c) => a + x * qi[c], 0)'] },
    { half: 'A', step: 'scale', edit: ['const f = 1 / Math.sqrt(ctx.d);', 'const f = 1 / ctx.d;'] },
    { half: 'B', step: 'softmax', edit: ['const ex = row.map((x) => Math.exp(x - top));', 'const ex = row.map((x) => Math.exp(top - x));'] },
    { half: 'A', step: 'weighted-sum', edit: ['w.reduce((a, wj, j) => a + wj * hd.v[j][c], 0)', 'w.reduce((a, wj, j) => a + wj * hd.v[c][j], 0)'] },
    { half: 'B', step: 'concat', edit: ['ctx.heads.reduce((row, hd) => row.concat(hd.out[t]), [])', 'ctx.heads.reduce((row, hd) => hd.out[t].concat(row), [])'] },
    { half: 'A', step: 'w-o', edit: ['row.reduce((a, x, i) => a + x * W_O[i][j], 0)', 'row.reduce((a, x, i) => a + x * W_O[j][i], 0)'] },
    { half: 'B', step: 'scale', edit: ['new SliceHeads(), new Scores(), new Scale(), new Softmax()', 'new SliceHeads(), new Scores(), new Softmax(), new Scale()'] },
    { half: 'A', step: 'slice', edit: ['for (let h = 0; h < H; h++) heads.push({ q: cut(Q, h), k: cut(K, h), v: cut(V, h) });', 'for (let h = 0; h < H; h++) heads.push({ q: cut(Q, h), k: cut(K, h), v: cut(V, 0) });'] },
  ],
  '03': [
    { half: 'A', step: 'mask', edit: ['(j > i ? -Infinity : x)', '(j >= i ? -Infinity : x)'] },
    { half: 'B', step: 'scale', edit: ['map(scores, (x) => x / Math.sqrt(q.shape[1]))', 'map(scores, (x) => x / Math.sqrt(q.shape[0]))'] },
    { half: 'A', step: 'scores', edit: ['const scores = contract(q, T_(k));', 'const scores = contract(q, k);'] },
    { half: 'B', step: 'softmax', edit: ['for (let j = 0; j < m; j++) row[j] /= z;', 'for (let j = 0; j < m; j++) row[j] /= m;'] },
    { half: 'A', step: 'weighted-sum', edit: ['return toRows(contract(weights, v));', 'return toRows(contract(weights, T_(v)));'] },
    { half: 'B', step: 'mask', edit: ['(j > i ? -Infinity : x)', '(j > i ? 0 : x)'] },
    { half: 'A', step: 'softmax', edit: ['row[j] = Math.exp(at(t, i, j) - top);', 'row[j] = Math.exp(at(t, i, j)) - top;'] },
    { half: 'B', step: 'mask', edit: ['const weights = softmaxRows(masked);', 'const weights = softmaxRows(scaled);'] },
    { half: 'A', step: 'scores', edit: ['for (let k = 0; k < a.shape[1]; k++) s += at(a, i, k) * at(b, k, j);', 'for (let k = 0; k < a.shape[1]; k++) s += at(a, i, k) * at(b, j, k);'] },
  ],
  '04': [
    { half: 'A', step: 'project-Q', edit: ['const Qf = gemm(x, flat(W_Q), T, C, C);', 'const Qf = gemm(x, flat(W_K), T, C, C);'] },
    { half: 'B', step: 'project-V', edit: ['const Vf = gemm(x, flat(W_V), T, C, C);', 'const Vf = x;'] },
    { half: 'A', step: 'scores', edit: ['acc += Qf[i * C + off + c] * Kf[j * C + off + c];', 'acc += Qf[i * C + off + c] * Kf[i * C + off + c];'] },
    { half: 'B', step: 'scale', edit: ['const inv = 1 / Math.sqrt(d);', 'const inv = 1 / Math.sqrt(C);'] },
    { half: 'A', step: 'softmax', edit: ['s[j] = Math.exp(s[j] - top);', 's[j] = Math.exp(s[j]);\n      top = 0;'] },
    { half: 'B', step: 'weighted-sum', edit: ['for (let c = 0; c < d; c++) dst[c] += w * Vf[j * C + off + c];', 'for (let c = 0; c < d; c++) dst[c] += w * Vf[i * C + off + c];'] },
    { half: 'A', step: 'w-o', edit: ['const y = gemm(joined, flat(W_O), T, C, C);', 'const y = joined;'] },
    { half: 'B', step: 'slice', edit: ['const off = h * d;', 'const off = h;'] },
    { half: 'A', step: 'project-K', edit: ['const Kf = gemm(x, flat(W_K), T, C, C);', 'const Kf = gemm(x, flat(W_K.map((_, i) => W_K.map((row) => row[i]))), T, C, C);'] },
  ],
  '05': [
    { half: 'A', step: 'cache', edit: ["store['v' + count] = value;", "store['v' + count] = key;"] },
    { half: 'B', step: 'scores', edit: ['for (let c = 0; c < d; c++) s += query[lo + c] * step.value.key[lo + c];', 'for (let c = 0; c < d; c++) s += query[lo + c] * step.value.key[c];'] },
    { half: 'A', step: 'scale', edit: ['logits.push(s / Math.sqrt(d));', 'logits.push(s);'] },
    { half: 'B', step: 'softmax', edit: ['const z = ex.reduce((a, b) => a + b, 0);', 'const z = ex.reduce((a, b) => a + b, 1);'] },
    { half: 'A', step: 'weighted-sum', edit: ['for (let c = 0; c < d; c++) out[c] += (ex[j] / z) * values[j][lo + c];', 'for (let c = 0; c < d; c++) out[c] = (ex[j] / z) * values[j][lo + c];'] },
    { half: 'B', step: 'cache', edit: ['    cache.append(K[t], V[t]);\n    const row = [];\n', '    const row = [];\n'] },
    { half: 'A', step: 'concat', edit: ['row.push(...headOutput(Q[t], cache, h * headDimensions, headDimensions));', 'row.unshift(...headOutput(Q[t], cache, h * headDimensions, headDimensions));'] },
    { half: 'B', step: 'slice', edit: ['row.push(...headOutput(Q[t], cache, h * headDimensions, headDimensions));', 'row.push(...headOutput(Q[t], cache, h, headDimensions));'] },
    { half: 'A', step: 'cache', edit: ['if (n >= count) return { done: true };', 'if (n >= count - 1) return { done: true };'] },
  ],
  '06': [
    { half: 'A', step: 'kv-head', edit: ['const g = Math.floor(h / group);', 'const g = h % numberOfKVHeads;'] },
    { half: 'B', step: 'slice', edit: ['columns(Q, h * d, d)', 'columns(Q, h, d)'] },
    { half: 'A', step: 'scale', edit: ['scores.map((s) => s / Math.sqrt(d))', 'scores.map((s) => s / Math.sqrt(Q[0].length))'] },
    { half: 'B', step: 'softmax', edit: ['const z = sum(ex);', 'const z = sum(row);'] },
    { half: 'A', step: 'weighted-sum', edit: ['return vt.map((col) => dot(weights, col));', 'return v.map((col) => dot(weights, col));'] },
    { half: 'B', step: 'scores', edit: ['const scores = k.map((kj) => dot(qi, kj));', 'const scores = k.map((kj) => dot(kj, kj));'] },
    { half: 'A', step: 'concat', edit: ['heads.flatMap((out) => out[t])', 'heads.map((out) => out[t])'] },
    { half: 'B', step: 'kv-head', edit: ['columns(V, g * d, d)', 'columns(V, h * d, d)'] },
    { half: 'A', step: 'kv-head', edit: ['const group = numberOfHeads / numberOfKVHeads;', 'const group = numberOfKVHeads;'] },
  ],
  '07': [
    { half: 'A', step: 'frequency', edit: ['p * Math.pow(base, (-2 * i) / headDimensions)', 'p * Math.pow(base, -i / headDimensions)'] },
    { half: 'B', step: 'position', edit: ['const p = offset + r;', 'const p = r;'] },
    { half: 'A', step: 'pairs', edit: ['const b = buf[start + i + half];', 'const b = buf[start + i + 1];'] },
    { half: 'B', step: 'rotation', edit: ['buf[start + i] = a * Math.cos(th) - b * Math.sin(th);', 'buf[start + i] = a * Math.cos(th) + b * Math.sin(th);'] },
    { half: 'A', step: 'pairs', edit: ['const start = r * C + h * headDimensions;', 'const start = r * C + h;'] },
    { half: 'B', step: 'frequency', edit: ['if (!(key in angles)) angles[key] =', 'if (!(key in angles)) angles[i] ='] },
    { half: 'A', step: 'rotation', edit: ['buf[start + i + half] = a * Math.sin(th) + b * Math.cos(th);', 'buf[start + i + half] = buf[start + i] * Math.sin(th) + b * Math.cos(th);'] },
    { half: 'B', step: 'pairs', edit: ['while (i < half) {', 'while (i < headDimensions - half - 1) {'] },
    { half: 'A', step: 'frequency', edit: ['(-2 * i) / headDimensions)', '(-2 * i) / C)'] },
  ],
  '08': [
    { half: 'A', step: 'mask', edit: ['j <= p && j > p - w', 'j <= p && j >= p - w'] },
    { half: 'B', step: 'scale', edit: ["['scale', 1 / Math.sqrt(d)],", "['scale', 1 / d],"] },
    { half: 'A', step: 'mask', edit: ['j <= p && j > p - w', 'j < p && j > p - w'] },
    { half: 'B', step: 'scores', edit: ["    ['push', K],\n    ['transpose'],\n", "    ['push', K],\n"] },
    { half: 'A', step: 'softmax', edit: ['return ex.map((e) => e / z);', 'return ex.map((e) => e / row.length);'] },
    { half: 'B', step: 'weighted-sum', edit: ["['push', V],", "['push', K],"] },
    { half: 'A', step: 'mask', edit: ["    ['band', w],\n", ''] },
    { half: 'B', step: 'softmax', edit: ["    ['softmax'],\n", "    ['softmax'],\n    ['softmax'],\n"] },
    { half: 'A', step: 'weighted-sum', edit: ['const A = stack.pop();', 'const A = stack[0];'] },
  ],
  '09': [
    { half: 'A', step: 'mask', edit: ['if (causal && j > i) return o;', 'if (causal && j >= i) return o;'] },
    { half: 'B', step: 'slice', edit: ['const lo = h * d;', 'const lo = h;'] },
    { half: 'A', step: 'scale', edit: ['o[j] = s / Math.sqrt(d);', 'o[j] = s / Math.sqrt(C);'] },
    { half: 'B', step: 'softmax', edit: ['const z = Object.values(exps).reduce((a, b) => a + b, 0);', 'const z = Object.values(logits).reduce((a, b) => a + b, 0);'] },
    { half: 'A', step: 'weighted-sum', edit: ['out[c] += (exps[j] / z) * V[j][lo + c];', 'out[c] += (exps[j] / z) * V[i][lo + c];'] },
    { half: 'B', step: 'w-o', edit: ['row.reduce((s, x, i) => s + x * W_O[i][j], 0)', 'row.reduce((s, x, i) => s + x * W_O[j][i], 0)'] },
    { half: 'A', step: 'concat', edit: ['for (const name in heads) row.push(...heads[name][t]);', 'for (const name in heads) row.unshift(...heads[name][t]);'] },
    { half: 'B', step: 'scores', edit: ['for (let c = lo; c < lo + d; c++) s += q[c] * k[c];', 'for (let c = lo; c < lo + d; c++) s += q[c] * q[c];'] },
  ],
};

/** Every slip as { number, index, half, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
