// A ninth held-out batch for the first wrong line (issue 28), written after the fixes the eighth
// batch (../fresh8/) led to and before the diagnosis was run on it: a right answer per challenge
// 01–09 in a style none of the corpus, fresh/ … fresh8/ has for that challenge (the columns of K and
// V memoised in a WeakMap, Array.from with index callbacks and helpers nested in the function;
// Float64Array scratch buffers with explicit row strides, a reused logits buffer and W_O read
// through its own stride; recursion for the rows, the logits, the dot product, the maximum, the sum
// and the blend; arrow-function one-liners with a WeakMap-memoised transpose inside one mm helper;
// a cache split by head at append time, for…in over heads and positions, destructuring; a tiny
// matrix class whose methods chain one per line, with an owner table of key/value heads; a 2×2
// rotation matrix per position and pair applied by a matVec2 helper, pairs outer and rows inner, the
// option checks a table; visible keys from a generator, the scores reduced into an object keyed by
// key index and the blend by for…in; the heads walked by recursion carrying the rows, W_O through
// its columns), and one- or two-line slips of it as a learner would make them, several with the
// faulty value computed in a helper or a variable far from where it is used. Each slip: the step at
// fault, the edit [from, to], and the half (A or B, alternating within a challenge, fixed before any
// run: rules may be fitted on half A's misses only, half B measures whether they generalise); the
// line at fault is the line of `from` in fresh9/NN.js.
import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { half: 'A', step: 'scores', edit: ['acc + Q[i][c] * col[j], 0);', 'acc + Q[i][c] * col[i], 0);'] },
    { half: 'B', step: 'scale', edit: ['const factor = Math.sqrt(width);', 'const factor = Math.sqrt(nQ);'] },
    { half: 'A', step: 'softmax', edit: ['return Array.from(lifted, (x) => x / mass);', 'return lifted;'] },
    { half: 'B', step: 'weighted-sum', edit: ['probs.reduce((acc, p, j) => acc + p * col[j], 0)', 'probs.reduce((acc, p, j) => acc + p * col[i], 0)'] },
    { half: 'A', step: 'scores', edit: ['columnCache.set(M, Array.from({ length: M[0].length }', 'columnCache.set(M, Array.from({ length: M.length }'] },
    { half: 'B', step: 'softmax', edit: ['Array.from(logits, (x) => Math.exp(x - peak))', 'Array.from(logits, (x) => Math.exp(peak - x))'] },
    { half: 'A', step: 'scale', edit: ['const width = Q[0].length;', 'const width = V[0].length;'] },
    { half: 'B', step: 'weighted-sum', edit: ['return Array.from(Vcols, (col) =>', 'return Array.from(Kcols, (col) =>'] },
  ],
  '02': [
    { half: 'A', step: 'slice', edit: ['const kBase = j * rowStride + col0;', 'const kBase = j * rowStride;'] },
    { half: 'B', step: 'scale', edit: ['const inv = 1 / Math.sqrt(hd);', 'const inv = 1 / Math.sqrt(width);'] },
    { half: 'A', step: 'softmax', edit: ['const p = logits[j] / norm;', 'const p = logits[j] / n;'] },
    { half: 'B', step: 'concat', edit: ['const outBase = i * rowStride + col0;', 'const outBase = i * rowStride;'] },
    { half: 'A', step: 'w-o', edit: ['mixed[i * width + c] * w[c * wStride + col]', 'mixed[i * width + c] * w[col * wStride + c]'] },
    { half: 'B', step: 'slice', edit: ['const vBase = j * rowStride + col0;', 'const vBase = j * rowStride + h;'] },
    { half: 'A', step: 'scores', edit: ['s += q[qBase + c] * k[kBase + c];', 's += q[qBase + c] * k[qBase + c];'] },
    { half: 'B', step: 'slice', edit: ['const rowStride = width;', 'const rowStride = hd;'] },
  ],
  '03': [
    { half: 'A', step: 'mask', edit: ['const here = j > last ?', 'const here = j >= last ?'] },
    { half: 'B', step: 'mask', edit: ['causal ? i : K.length', 'causal ? i - 1 : K.length'] },
    { half: 'A', step: 'scale', edit: ['Math.sqrt(Q[0].length), causal);', 'Math.sqrt(Q.length), causal);'] },
    { half: 'B', step: 'scores', edit: ['a[c] * b[c] + dot(a, b, c + 1)', 'a[c] + b[c] + dot(a, b, c + 1)'] },
    { half: 'A', step: 'softmax', edit: ['const total = (xs, j = 0) => (j === xs.length ? 0', 'const total = (xs, j = 0) => (j === xs.length - 1 ? 0'] },
    { half: 'B', step: 'softmax', edit: ['const weights = lifted.map((x) => x / z);', 'const weights = logits.map((x) => x / z);'] },
    { half: 'A', step: 'weighted-sum', edit: ['return weights[j] * V[j][c] + blend', 'return weights[j] * V[c][j] + blend'] },
    { half: 'B', step: 'weighted-sum', edit: ['const row = V[0].map((_, c) => blend(weights, V, c));', 'const row = V[0].map((_, c) => blend(weights, K, c));'] },
  ],
  '04': [
    { half: 'A', step: 'project-V', edit: ['const values = mm(X, W_V);', 'const values = mm(X, W_K);'] },
    { half: 'B', step: 'project-Q', edit: ['const mm = (A, B) => A.map((a) => tr(B).map((col) => dotp(a, col)));', 'const mm = (A, B) => A.map((a) => B.map((col) => dotp(a, col)));'] },
    { half: 'A', step: 'slice', edit: ['cols(keys, at, headDimensions)', 'cols(keys, 0, headDimensions)'] },
    { half: 'B', step: 'scale', edit: ['scaleAll(logits, 1 / Math.sqrt(headDimensions))', 'scaleAll(logits, 1 / Math.sqrt(C))'] },
    { half: 'A', step: 'softmax', edit: ['(e.reduce((a, b) => a + b, 0)))(r.map', '(r.reduce((a, b) => a + b, 0)))(r.map'] },
    { half: 'B', step: 'concat', edit: ['heads.reduce((row, head) => row.concat(head[t]), [])', 'heads.reduce((row, head) => head[t].concat(row), [])'] },
    { half: 'A', step: 'w-o', edit: ['return mm(joined, W_O);', 'return mm(joined, tr(W_O));'] },
    { half: 'B', step: 'project-K', edit: ['const keys = mm(X, W_K);', 'const keys = mm(queries, W_K);'] },
  ],
  '05': [
    { half: 'A', step: 'cache', edit: ['cache.append(K[t], V[t]);', 'cache.append(query, V[t]);'] },
    { half: 'B', step: 'slice', edit: ['const idx = Number(name);', 'const idx = name;'] },
    { half: 'A', step: 'scale', edit: ['const root = Math.sqrt(headDimensions);', 'const root = Math.sqrt(width);'] },
    { half: 'B', step: 'slice', edit: ['query.slice(h * headDimensions, (h + 1) * headDimensions)', 'query.slice(h, h + headDimensions)'] },
    { half: 'A', step: 'softmax', edit: ['const { [pos]: w } = ex;', 'const { [pos]: w } = logits;'] },
    { half: 'B', step: 'weighted-sum', edit: ['values[pos].forEach((x, c) =>', 'keys[pos].forEach((x, c) =>'] },
    { half: 'A', step: 'cache', edit: ['const perHead = Array.from({ length: heads }, () => ({ keys: [], values: [] }));', 'const perHead = Array(heads).fill({ keys: [], values: [] });'] },
    { half: 'B', step: 'concat', edit: ['out.push(...mix);', 'out.push(mix);'] },
  ],
  '06': [
    { half: 'A', step: 'kv-head', edit: ['(_, h) => Math.floor(h / shareBy));', '(_, h) => h % numberOfKVHeads);'] },
    { half: 'B', step: 'kv-head', edit: ['const shareBy = numberOfHeads / numberOfKVHeads;', 'const shareBy = numberOfKVHeads;'] },
    { half: 'A', step: 'slice', edit: ['.times(v.cols(g * headDimensions, headDimensions));', '.times(v.cols(h * headDimensions, headDimensions));'] },
    { half: 'B', step: 'scale', edit: ['const invRoot = 1 / Math.sqrt(headDimensions);', 'const invRoot = 1 / Math.sqrt(C);'] },
    { half: 'A', step: 'softmax', edit: ['const sum = e.reduce((a, b) => a + b, 0);', 'const sum = r.reduce((a, b) => a + b, 0);'] },
    { half: 'B', step: 'scores', edit: ['a.reduce((s, x, c) => s + x * b[c], 0)', 'a.reduce((s, x, c) => s + x * a[c], 0)'] },
    { half: 'A', step: 'slice', edit: ['const out = q.cols(h * headDimensions, headDimensions)', 'const out = q.cols(h, headDimensions)'] },
    { half: 'B', step: 'concat', edit: ['joined = joined ? joined.hcat(out) : out;', 'joined = joined ? out.hcat(joined) : out;'] },
  ],
  '07': [
    { half: 'A', step: 'rotation', edit: ['[[Math.cos(theta), -Math.sin(theta)], [Math.sin(theta), Math.cos(theta)]]', '[[Math.cos(theta), Math.sin(theta)], [-Math.sin(theta), Math.cos(theta)]]'] },
    { half: 'B', step: 'pairs', edit: ['const right = left + half;', 'const right = left + 1;'] },
    { half: 'A', step: 'frequency', edit: ['base ** ((-2 * i) / headDimensions)', 'base ** (-i / headDimensions)'] },
    { half: 'B', step: 'position', edit: ['const pos = offset + r;', 'const pos = offset + r + 1;'] },
    { half: 'A', step: 'rotation', edit: ['[a * x + b * y, c * x + d * y]', '[a * x + c * y, b * x + d * y]'] },
    { half: 'B', step: 'pairs', edit: ['const left = h * headDimensions + i;', 'const left = h * headDimensions + 2 * i;'] },
    { half: 'A', step: 'frequency', edit: ['pos * invFreq[i]', 'pos * invFreq[h]'] },
    { half: 'B', step: 'position', edit: ['rotationMatrix(pos *', 'rotationMatrix(r *'] },
  ],
  '08': [
    { half: 'A', step: 'mask', edit: ['j <= p; j++', 'j < p; j++'] },
    { half: 'B', step: 'mask', edit: ['const reach = span ?? Q.length;', 'const reach = span || Q.length - 1;'] },
    { half: 'A', step: 'mask', edit: ['Math.max(0, p - span + 1)', 'Math.max(0, p - span)'] },
    { half: 'B', step: 'scale', edit: ['const divisor = Math.sqrt(d);', 'const divisor = d;'] },
    { half: 'A', step: 'scores', edit: ['s + x * K[j][c], 0) / divisor;', 's + x * K[p][c], 0) / divisor;'] },
    { half: 'B', step: 'softmax', edit: ['const w = logits[j] / mass;', 'const w = logits[j] / reach;'] },
    { half: 'A', step: 'softmax', edit: ['let mass = 0;', 'let mass = 1;'] },
    { half: 'B', step: 'weighted-sum', edit: ['V[j].forEach((x, c) =>', 'K[j].forEach((x, c) =>'] },
  ],
  '09': [
    { half: 'A', step: 'mask', edit: ['const visible = (i) => (causal ? i + 1 : T);', 'const visible = (i) => (causal ? i : T);'] },
    { half: 'B', step: 'slice', edit: ['(x / tot) * V[j][offset + c]', '(x / tot) * V[j][c]'] },
    { half: 'A', step: 'concat', edit: ['rows.map((row, i) => [...row, ...part[i]])', 'rows.map((row, i) => [...part[i], ...row])'] },
    { half: 'B', step: 'w-o', edit: ['(_, c) => W_O.map((r) => r[c]));', '(_, c) => W_O[c]);'] },
  ],
};

/** Every slip as { number, index, half, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
