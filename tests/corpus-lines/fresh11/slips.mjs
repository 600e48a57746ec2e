// An eleventh held-out batch for the first wrong line (issue 28), written blind (without reading the
// diagnosis) and before the diagnosis was run on it: a right answer per challenge 01–09 in a style
// none of the corpus, fresh/ … fresh10/ has for that challenge (a competitive programmer's terse
// style, one-letter names, several declarations per const and comma expressions in loop bodies; a
// Head class with private #fields and a method per step, owned by a MultiHeadLayer class with
// private #check/#concat/#project; a numpy-like mini library `np` with a shape-checking matmul, tril,
// where and axis-1 reductions broadcast back over the rows; lazy function* generator pipelines, a
// head a chain of generators nested in one another and the heads advanced together by a joined()
// generator; everything in Maps over two passes per token, logits keyed `${head}:${position}`, the
// blend a Map from column to number; curried helpers and pipe(), no loops, an attend function per
// query head; RoPE by recursion over rows, heads and pairs with a small named const per quantity; a
// Matrix class whose methods chain one per line, q.mul(k.T()).scale().band(w).softmax().mul(v);
// batched 3-D tensors einops-style, T×C reshaped to T×H×d and permuted to H×T×d, a batched bmm for
// the scores and the blend, permuted back and flattened before W_O), and one- or two-line slips of
// it as a learner would make them, about a quarter of them more than a one-token change (a term or a
// call left out, a statement moved, a step done twice or in the wrong order). Each slip: the step
// at fault, the edit [from, to], and the half (A or B, alternating within a challenge, fixed before
// any run: rules may be fitted on half A's misses only, half B measures whether they generalise);
// the line at fault is the line of `from` in fresh11/NN.js.
import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { half: 'A', step: 'scores', edit: ['t += Q[i][c] * K[j][c];', 't += Q[i][c] * K[i][c];'] },
    { half: 'B', step: 'scale', edit: ['const r = 1 / Math.sqrt(d), o = [];', 'const r = 1 / Math.sqrt(m), o = [];'] },
    { half: 'A', step: 'softmax', edit: ['let x = -Infinity, z = 0;', 'let x = -Infinity, z = 1;'] },
    { half: 'B', step: 'weighted-sum', edit: ['y[c] += s[j] / z * V[j][c];', 'y[c] += s[j] / z * V[i][c];'] },
    { half: 'A', step: 'scores', edit: ['for (let c = 0; c < d; c++) t +=', 'for (let c = 0; c < m; c++) t +='] },
    { half: 'B', step: 'softmax', edit: ['s[j] = Math.exp(s[j] - x), z += s[j];', 'z += s[j], s[j] = Math.exp(s[j] - x);'] },
    { half: 'A', step: 'scale', edit: ['s[j] = t * r, x = Math.max(x, s[j]);', 's[j] = t, x = Math.max(x, s[j]);'] },
    { half: 'B', step: 'weighted-sum', edit: ['for (let j = 0; j < n; j++) for (let c = 0; c < m; c++)', 'for (let j = 0; j < n - 1; j++) for (let c = 0; c < m; c++)'] },
    { half: 'A', step: 'softmax', edit: ['Math.exp(s[j] - x)', 'Math.exp(x - s[j])'] },
  ],
  '02': [
    { half: 'A', step: 'slice', edit: ['row.slice(this.#start, this.#start + this.#width)', 'row.slice(this.#start, this.#width)'] },
    { half: 'B', step: 'scale', edit: ['const factor = 1 / Math.sqrt(this.#width);', 'const factor = 1 / this.#width;'] },
    { half: 'A', step: 'softmax', edit: ['const total = ex.reduce((a, b) => a + b, 0);', 'const total = row.reduce((a, b) => a + b, 0);'] },
    { half: 'B', step: 'scores', edit: ['s + x * kj[c], 0)', 's + x * qi[c], 0)'] },
    { half: 'A', step: 'weighted-sum', edit: ['s + w * v[j][c], 0)', 's + w * v[c][j], 0)'] },
    { half: 'B', step: 'concat', edit: ['outs.reduce((row, out) => row.concat(out[t]), [])', 'outs.reduce((row, out) => out[t].concat(row), [])'] },
    { half: 'A', step: 'w-o', edit: ['s + xi * this.#W_O[i][j], 0)', 's + xi * this.#W_O[j][i], 0)'] },
    { half: 'B', step: 'scale', edit: ['return this.mix(this.softmax(this.scale(this.scores(q, k))), v);', 'return this.mix(this.softmax(this.scores(q, k)), v);'] },
    { half: 'A', step: 'slice', edit: ['this.#start = index * width;', 'this.#start = index;'] },
  ],
  '03': [
    { half: 'A', step: 'mask', edit: ['(_, j) => j <= i)', '(_, j) => j < i)'] },
    { half: 'B', step: 'scale', edit: ['np.mul(scores, 1 / Math.sqrt(d))', 'np.mul(scores, 1 / Math.sqrt(T))'] },
    { half: 'A', step: 'softmax', edit: ['return np.div(e, np.sum(e));', 'return np.div(e, np.sum(X));'] },
    { half: 'B', step: 'weighted-sum', edit: ['return np.matmul(weights, V);', 'return np.matmul(weights, np.T(V));'] },
    { half: 'A', step: 'scores', edit: ['const scores = np.matmul(Q, np.T(K));', 'const scores = np.matmul(Q, np.T(Q));'] },
    { half: 'B', step: 'mask', edit: ['np.where(np.tril([T, T]), scaled, -Infinity)', 'np.where(np.tril([T, T]), scaled, 0)'] },
    { half: 'A', step: 'softmax', edit: ['row.map((x, j) => x / B[i][j % B[i].length])', 'row.map((x, j) => x / B[0][j % B[i].length])'] },
    { half: 'B', step: 'mask', edit: ['const weights = softmax(masked);', 'const weights = causal ? np.where(np.tril([T, T]), softmax(scaled), 0) : softmax(scaled);'] },
    { half: 'A', step: 'scores', edit: ['np.matmul(Q, np.T(K))', 'np.matmul(Q, K)'] },
  ],
  '04': [
    { half: 'A', step: 'project-K', edit: ['const K = [...project(X, W_K)];', 'const K = [...project(X, W_Q)];'] },
    { half: 'B', step: 'slice', edit: ['const v = [...columns(V, from, headDimensions)];', 'const v = [...columns(V, h, headDimensions)];'] },
    { half: 'A', step: 'scale', edit: ['const factor = 1 / Math.sqrt(headDimensions);', 'const factor = 1 / Math.sqrt(C);'] },
    { half: 'B', step: 'softmax', edit: ['const z = ex.reduce((a, b) => a + b, 0);', 'const z = ex.length;'] },
    { half: 'A', step: 'weighted-sum', edit: ['s + p * values[j][c], 0)', 's + p * values[c][j], 0)'] },
    { half: 'B', step: 'concat', edit: ['yield parts.flatMap((part) => part.value);', 'yield parts.map((part) => part.value);'] },
    { half: 'A', step: 'w-o', edit: ['return [...project(joined(heads), W_O)];', 'return [...joined(heads)];'] },
    { half: 'B', step: 'project-Q', edit: ['s + xi * W[i][j], 0)', 's + xi * W[j][i], 0)'] },
    { half: 'A', step: 'project-V', edit: ['const V = [...project(X, W_V)];', 'const V = X;'] },
  ],
  '05': [
    { half: 'A', step: 'cache', edit: ['cache.set(t, { key: K[t], value: V[t] });', 'cache.set(t, { key: K[t], value: K[t] });'] },
    { half: 'B', step: 'slice', edit: ['s += query[c] * key[c];', 's += query[c - lo] * key[c];'] },
    { half: 'A', step: 'scale', edit: ['const root = Math.sqrt(headDimensions);', 'const root = Math.sqrt(numberOfHeads * headDimensions);'] },
    { half: 'B', step: 'softmax', edit: ['let total = 0;', 'let total = 1;'] },
    { half: 'A', step: 'weighted-sum', edit: ['acc += (weights.get(pos) / total) * value[c];', 'acc = (weights.get(pos) / total) * value[c];'] },
    { half: 'B', step: 'cache', edit: ['    cache.set(t, { key: K[t], value: V[t] });\n    rows.push(step(Q[t], cache, numberOfHeads, headDimensions));', '    rows.push(step(Q[t], cache, numberOfHeads, headDimensions));\n    cache.set(t, { key: K[t], value: V[t] });'] },
    { half: 'A', step: 'concat', edit: ['out.set(c, acc);', 'out.set(c - base, acc);'] },
    { half: 'B', step: 'softmax', edit: ['const e = Math.exp(logits.get(`${head}:${pos}`) - top);', 'const e = Math.exp(logits.get(`${head}:${pos}`));'] },
    { half: 'A', step: 'slice', edit: ['const lo = h * headDimensions;', 'const lo = h;'] },
  ],
  '06': [
    { half: 'A', step: 'kv-head', edit: ['(h) => Math.floor(h / group);', '(h) => h % group;'] },
    { half: 'B', step: 'slice', edit: ['return cols(h * headDimensions)(headDimensions)(Q).map(attend);', 'return cols(h)(headDimensions)(Q).map(attend);'] },
    { half: 'A', step: 'kv-head', edit: ['const headOf = kvHeadOf(numberOfHeads / numberOfKVHeads);', 'const headOf = kvHeadOf(numberOfKVHeads);'] },
    { half: 'B', step: 'softmax', edit: ['const z = ex.reduce((a, b) => a + b, 0);', 'const z = row.reduce((a, b) => a + b, 0);'] },
    { half: 'A', step: 'weighted-sum', edit: ['s + w * values[j][c], 0)', 's + w * values[0][c], 0)'] },
    { half: 'B', step: 'scores', edit: ['q.reduce((s, x, c) => s + x * k[c], 0)', 'q.reduce((s, x, c) => s + x * q[c], 0)'] },
    { half: 'A', step: 'concat', edit: ['heads.flatMap((head) => head[t])', 'heads.map((head) => head[t])'] },
    { half: 'B', step: 'kv-head', edit: ['const values = cols(g * headDimensions)(headDimensions)(V);', 'const values = cols(h * headDimensions)(headDimensions)(V);'] },
    { half: 'A', step: 'scale', edit: ['pipe(scoresAgainst(keys), scaleBy(1 / Math.sqrt(headDimensions)), softmax, mixWith(values))', 'pipe(scoresAgainst(keys), softmax, scaleBy(1 / Math.sqrt(headDimensions)), mixWith(values))'] },
  ],
  '07': [
    { half: 'A', step: 'frequency', edit: ['base ** ((-2 * i) / headDimensions)', 'base ** (-i / headDimensions)'] },
    { half: 'B', step: 'position', edit: ['turnHeads(X[r], offset + r, 0)', 'turnHeads(X[r], r, 0)'] },
    { half: 'A', step: 'pairs', edit: ['const second = first + half;', 'const second = first + 1;'] },
    { half: 'B', step: 'rotation', edit: ['turned[first] = a * Math.cos(angle) - b * Math.sin(angle);', 'turned[first] = a * Math.cos(angle) + b * Math.sin(angle);'] },
    { half: 'A', step: 'pairs', edit: ['turnPairs(row, h * headDimensions, position, 0)', 'turnPairs(row, h, position, 0)'] },
    { half: 'B', step: 'frequency', edit: ['const angle = position * inverseFrequency;', 'const angle = position / inverseFrequency;'] },
    { half: 'A', step: 'rotation', edit: ['turned[second] = a * Math.sin(angle) + b * Math.cos(angle);', 'turned[second] = turned[first] * Math.sin(angle) + b * Math.cos(angle);'] },
    { half: 'B', step: 'pairs', edit: ['if (i === half) return row;', 'if (i === headDimensions) return row;'] },
    { half: 'A', step: 'frequency', edit: ['base ** ((-2 * i) / headDimensions)', 'base ** ((-2 * i) / (numberOfHeads * headDimensions))'] },
  ],
  '08': [
    { half: 'A', step: 'mask', edit: ['j > p - w ?', 'j >= p - w ?'] },
    { half: 'B', step: 'scale', edit: ['.scale(1 / Math.sqrt(d))', '.scale(1 / d)'] },
    { half: 'A', step: 'mask', edit: ['j <= p &&', 'j < p &&'] },
    { half: 'B', step: 'scores', edit: ['.mul(k.T())', '.mul(q.T())'] },
    { half: 'A', step: 'softmax', edit: ['return ex.map((e) => e / z);', 'return ex.map((e) => e / r.length);'] },
    { half: 'B', step: 'weighted-sum', edit: ['.mul(v)', '.mul(v.T())'] },
    { half: 'A', step: 'mask', edit: ['    .band(w)\n', ''] },
    { half: 'B', step: 'softmax', edit: ['    .softmax()', '    .softmax().softmax()'] },
    { half: 'A', step: 'weighted-sum', edit: ['const [q, k, v] = [Q, K, V].map((M) => Matrix.of(M));', 'const [q, k, v] = [Q, K, K].map((M) => Matrix.of(M));'] },
  ],
  '09': [
    { half: 'A', step: 'mask', edit: ['causal && j > i', 'causal && j >= i'] },
    { half: 'B', step: 'slice', edit: ['row.slice(h * d, h * d + d)', 'row.slice(h * d, d)'] },
    { half: 'A', step: 'scale', edit: ['x / Math.sqrt(headDimensions)', 'x / Math.sqrt(C)'] },
    { half: 'B', step: 'concat', edit: ['const joined = flatten(permute(heads));', 'const joined = flatten(heads);'] },
    { half: 'A', step: 'w-o', edit: ['s + x * W_O[i][j], 0)', 's + x * W_O[j][i], 0)'] },
    { half: 'B', step: 'weighted-sum', edit: ['const heads = bmm(weights, v);', 'const heads = bmm(weights, k);'] },
    { half: 'A', step: 'scores', edit: ['const scores = bmm(q, transposeLast(k));', 'const scores = bmm(q, transposeLast(q));'] },
    { half: 'B', step: 'softmax', edit: ['return ex.map((e) => e / z);', 'return ex;'] },
    { half: 'A', step: 'mask', edit: ['const weights = masked.map((M) => M.map(softmax));', 'const weights = scaled.map((M) => M.map(softmax));'] },
  ],
};

/** Every slip as { number, index, half, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
