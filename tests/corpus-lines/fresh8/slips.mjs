// An eighth held-out batch for the first wrong line (issue 28), written after the fixes the seventh
// batch (../fresh7/) led to and before the diagnosis was run on it: a right answer per challenge
// 01–09 in a style none of the corpus, fresh/ … fresh7/ has for that challenge (the scores as a list
// of { i, j, s } records grouped by query in a Map, forEach everywhere; do…while loops over
// preallocated rows with each head written straight into the concatenation; a switch-driven
// pipeline of named stages over a state object; the softmax by log-sum-exp, exp(x − lse); a
// streaming (online) softmax in the decoder, a running max, sum and output rescaled as each cached
// key arrives; the key/value head by `(h / group) | 0` with forEach into preset rows; each RoPE pair
// a complex number { re, im } turned by multiplying with e^{iθ}; out-of-window scores as null that
// the softmax and the blend skip; every head's blend accumulated into one T×C buffer by nested
// forEach), and one- or two-line slips of it as a learner would make them. Each slip: the step at
// fault, the edit [from, to], and the half (A or B, alternating within a challenge, fixed before any
// run: rules may be fitted on half A's misses only, half B measures whether they generalise); the line
// at fault is the line of `from` in fresh8/NN.js.
import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { half: 'A', step: 'scores', edit: ['q.forEach((x, c) => { s += x * k[c]; });', 'q.forEach((x, c) => { s += x * q[c]; });'] },
    { half: 'B', step: 'scale', edit: ['e.s = e.s / Math.sqrt(dk);', 'e.s = e.s / dk;'] },
    { half: 'A', step: 'scale', edit: ['const dk = Q[0].length;', 'const dk = Q.length;'] },
    { half: 'B', step: 'softmax', edit: ['e.w = Math.exp(e.s - top); total += e.w;', 'e.w = Math.exp(e.s - top); total += e.s;'] },
    { half: 'A', step: 'softmax', edit: ['if (!byQuery.has(e.i)) byQuery.set(e.i, []);\n    byQuery.get(e.i).push(e);', 'if (!byQuery.has(e.j)) byQuery.set(e.j, []);\n    byQuery.get(e.j).push(e);'] },
    { half: 'B', step: 'weighted-sum', edit: ['V[j].forEach((v, c) => { out[i][c] += w * v; });', 'V[i].forEach((v, c) => { out[i][c] += w * v; });'] },
  ],
  '02': [
    { half: 'A', step: 'slice', edit: ['const kh = K.map((row) => row.slice(lo, lo + d));', 'const kh = K.map((row) => row.slice(lo, d));'] },
    { half: 'B', step: 'scores', edit: ['scores[j] += qh[i][c] * kh[j][c];', 'scores[j] += qh[i][c] * kh[i][c];'] },
    { half: 'A', step: 'scale', edit: ['scores[j] /= Math.sqrt(d);', 'scores[j] /= Math.sqrt(C);'] },
    { half: 'B', step: 'softmax', edit: ['do { z += e[j]; j++; } while (j < T);', 'do { z += scores[j]; j++; } while (j < T);'] },
    { half: 'A', step: 'concat', edit: ['do { concat[i][lo + c] += w[j] * vh[j][c]; c++; } while (c < d);', 'do { concat[i][c] += w[j] * vh[j][c]; c++; } while (c < d);'] },
    { half: 'B', step: 'w-o', edit: ['do { s += row[c] * W_O[c][col]; c++; } while (c < C);', 'do { s += row[c] * W_O[col][c]; c++; } while (c < C);'] },
  ],
  '03': [
    { half: 'A', step: 'scores', edit: ['m: state.Q.map((q) => state.K.map((k) =>', 'm: state.Q.map((q) => state.Q.map((k) =>'] },
    { half: 'B', step: 'scale', edit: ['const root = Math.sqrt(state.Q[0].length);', 'const root = state.Q[0].length;'] },
    { half: 'A', step: 'mask', edit: ['(j <= i ? x : -Infinity)', '(j < i ? x : -Infinity)'] },
    { half: 'B', step: 'mask', edit: ['if (!state.causal) return state;', 'if (state.causal) return state;'] },
    { half: 'A', step: 'softmax', edit: ['return e.map((x) => x / z);', 'return e;'] },
    { half: 'B', step: 'weighted-sum', edit: ['w.reduce((s, x, j) => s + x * state.V[j][c], 0)', 'w.reduce((s, x, j) => s + x * state.V[c][j], 0)'] },
  ],
  '04': [
    { half: 'A', step: 'project-K', edit: ['const K = linear(X, W_K);', 'const K = linear(X, W_Q);'] },
    { half: 'B', step: 'slice', edit: ['row.slice(h * headDimensions, (h + 1) * headDimensions)', 'row.slice(h * headDimensions, h + headDimensions)'] },
    { half: 'A', step: 'scale', edit: ['dot(qi, kj) / Math.sqrt(headDimensions)', 'dot(qi, kj) / Math.sqrt(C)'] },
    { half: 'B', step: 'softmax', edit: ['const lse = top + Math.log(', 'const lse = Math.log('] },
    { half: 'A', step: 'concat', edit: ['heads[Math.floor(c / headDimensions)][t][c % headDimensions]', 'heads[c % numberOfHeads][t][Math.floor(c / numberOfHeads)]'] },
    { half: 'B', step: 'w-o', edit: ['return linear(joined, W_O);', 'return joined;'] },
  ],
  '05': [
    { half: 'A', step: 'cache', edit: ['for (const { k, v } of cache) {', 'for (const { k, v } of cache.slice(1)) {'] },
    { half: 'B', step: 'slice', edit: ['const key = k.slice(lo, lo + headDimensions);', 'const key = k.slice(0, headDimensions);'] },
    { half: 'A', step: 'scale', edit: ['s /= Math.sqrt(headDimensions);', 's /= Math.sqrt(C);'] },
    { half: 'B', step: 'softmax', edit: ['l = l * shrink + p;', 'l = l + p;'] },
    { half: 'A', step: 'weighted-sum', edit: ['a * shrink + p * v[lo + c]', 'a * shrink + p * v[c]'] },
    { half: 'B', step: 'concat', edit: ['row.push(...acc.map((a) => a / l));', 'row.unshift(...acc.map((a) => a / l));'] },
  ],
  '06': [
    { half: 'A', step: 'kv-head', edit: ['const g = (h / group) | 0;', 'const g = (h / numberOfKVHeads) | 0;'] },
    { half: 'B', step: 'slice', edit: ['const q = qRow.slice(h * d, h * d + d);', 'const q = qRow.slice(g * d, g * d + d);'] },
    { half: 'A', step: 'scores', edit: ['q.reduce((s, x, c) => s + x * k[c], 0) / Math.sqrt(d)', 'q.reduce((s, x, c) => s + x * k[c]) / Math.sqrt(d)'] },
    { half: 'B', step: 'scale', edit: [', 0) / Math.sqrt(d);', ', 0) * Math.sqrt(d);'] },
    { half: 'A', step: 'softmax', edit: ['const sum = ex.reduce((a, b) => a + b, 0);', 'const sum = scores.reduce((a, b) => a + b, 0);'] },
    { half: 'B', step: 'concat', edit: ['result[i][h * d + c] += (e / sum) * x;', 'result[i][g * d + c] += (e / sum) * x;'] },
  ],
  '07': [
    { half: 'A', step: 'rotation', edit: ['im: a.re * b.im + a.im * b.re', 'im: a.re * b.im - a.im * b.re'] },
    { half: 'B', step: 'rotation', edit: ['im: Math.sin(theta) })', 'im: -Math.sin(theta) })'] },
    { half: 'A', step: 'pairs', edit: ['im: row[start + i + half] }', 'im: row[start + i + 1] }'] },
    { half: 'B', step: 'frequency', edit: ['Math.pow(base, -(2 * i) / headDimensions)', 'Math.pow(base, -i / headDimensions)'] },
    { half: 'A', step: 'position', edit: ['const pos = offset + r;', 'const pos = r;'] },
    { half: 'B', step: 'pairs', edit: ['const start = h * headDimensions;', 'const start = h * half;'] },
  ],
  '08': [
    { half: 'A', step: 'mask', edit: ['if (j > p || j <= p - w) return null;', 'if (j > p || j < p - w) return null;'] },
    { half: 'B', step: 'mask', edit: ['const w = window === undefined ? Q.length : window;', 'const w = window === undefined ? Q.length - 1 : window;'] },
    { half: 'A', step: 'scale', edit: ['const d = Q[0].length;\n  const w', 'const d = Q.length;\n  const w'] },
    { half: 'B', step: 'scores', edit: ['const scores = K.map((k, j) => {', 'const scores = Q.map((k, j) => {'] },
    { half: 'A', step: 'softmax', edit: ['const z = ex.reduce((acc, e) => (e === null ? acc : acc + e), 0);', 'const z = live.reduce((acc, e) => acc + e, 0);'] },
    { half: 'B', step: 'weighted-sum', edit: ['acc + wt * V[j][c]', 'acc + wt * V[p][c]'] },
  ],
  '09': [
    { half: 'A', step: 'mask', edit: ['if (causal && j > i) return -Infinity;', 'if (causal && j > i) return 0;'] },
    { half: 'B', step: 'slice', edit: ['s += qRow[off + c] * kRow[off + c];', 's += qRow[off + c] * kRow[c];'] },
    { half: 'A', step: 'softmax', edit: ['const total = ex.reduce((a, b) => a + b, 0);', 'const total = logits.reduce((a, b) => a + b, 0);'] },
    { half: 'B', step: 'w-o', edit: ['s + x * W_O[c][col]', 's + x * W_O[col][c]'] },
  ],
};

/** Every slip as { number, index, half, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
