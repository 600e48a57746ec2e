// A fifth held-out batch for the first wrong line (issue 28), written after the fixes the fourth
// batch (../fresh4/) led to and before the diagnosis was run on it: a right answer per challenge
// 01–09 in a style none of the corpus, fresh/, fresh2/, fresh3/ or fresh4/ has for that challenge
// (recursion: recursive dot, total and weighted-sum fold, rows by a recursive function; a class of
// static methods and no instance; reduce alone, every loop a reduce building a new array; a tiny
// matrix "library" object; a generator over tokens with a cache of flat Float64Array buffers and a
// row stride; for…of over entries() with destructuring and a K/V head table by Array.from; flat
// Float64Array buffers with strides and angles by Float64Array.from with index arithmetic; early
// returns in a score helper; closures returning functions for the heads), and one- or two-line
// slips of it as a learner would make them. Each slip: the step at fault and the edit [from, to];
// the line at fault is the line of `from` in fresh5/NN.js.
import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { step: 'scores', edit: ['(c === a.length ? 0', '(c === a.length - 1 ? 0'] },
    { step: 'scale', edit: ['dot(Q[i], k) / Math.sqrt(d)', 'dot(Q[i], k) / d'] },
    { step: 'softmax', edit: ['const z = total(exps);', 'const z = total(scores);'] },
    { step: 'weighted-sum', edit: ['if (j === V.length) return acc;', 'if (j === V.length - 1) return acc;'] },
  ],
  '02': [
    { step: 'slice', edit: ['row.slice(h * d, (h + 1) * d)', 'row.slice(h * d + 1, (h + 1) * d + 1)'] },
    { step: 'scale', edit: ['row.map((x) => x / Math.sqrt(d))', 'row.map((x) => x / d)'] },
    { step: 'softmax', edit: ['const w = s.map(Attention.softmax);', 'const w = Attention.transpose(Attention.transpose(s).map(Attention.softmax));'] },
    { step: 'concat', edit: ['heads.push(Attention.times(w,', 'heads.unshift(Attention.times(w,'] },
    { step: 'w-o', edit: ['return W_O ? Attention.times(concat, W_O) : concat;', 'return concat;'] },
  ],
  '03': [
    { step: 'mask', edit: ['causal && j > i ? -Infinity : s', 'causal && j >= i ? -Infinity : s'] },
    { step: 'mask', edit: ['causal && j > i ? -Infinity : s', 'causal && j < i ? -Infinity : s'] },
    { step: 'scale', edit: ['0) / Math.sqrt(d)], [])', '0) * Math.sqrt(d)], [])'] },
    { step: 'softmax', edit: ['const z = exps.reduce((a, b) => a + b, 0);', 'const z = exps.reduce((a, b) => a + b, 1);'] },
    { step: 'weighted-sum', edit: ['x + (exps[j] / z) * v[c]', 'x + (exps[j] / z) * V[i][c]'] },
  ],
  '04': [
    { step: 'project-K', edit: ['const K = M.mul(X, W_K);', 'const K = M.mul(X, W_Q);'] },
    { step: 'project-V', edit: ['const V = M.mul(X, W_V);', 'const V = M.mul(X, M.t(W_V));'] },
    { step: 'slice', edit: ['const [from, to] = [h * d, (h + 1) * d];', 'const [from, to] = [h * d, h * d + d - 1];'] },
    { step: 'scale', edit: ['1 / Math.sqrt(d));', '1 / Math.sqrt(C));'] },
    { step: 'softmax', edit: ['M.rowSoftmax(S)', 'M.t(M.rowSoftmax(M.t(S)))'] },
    { step: 'w-o', edit: ['return M.mul(M.hcat(heads), W_O);', 'return M.hcat(heads);'] },
  ],
  '05': [
    { step: 'cache', edit: ['keys.set(K[t], n * C);', 'keys.set(K[t], 0);'] },
    { step: 'slice', edit: ['keys[j * C + h * d + c]', 'keys[j * C + c]'] },
    { step: 'scale', edit: ['w[j] = s / Math.sqrt(d);', 'w[j] = s / Math.sqrt(C);'] },
    { step: 'softmax', edit: ['(w[j] / z) * values', 'w[j] * values'] },
    { step: 'weighted-sum', edit: ['values[j * C + h * d + c]', 'values[t * C + h * d + c]'] },
  ],
  '06': [
    { step: 'kv-head', edit: ['Math.floor(h / group)', 'Math.floor(h / numberOfKVHeads)'] },
    { step: 'kv-head', edit: ['(e / z) * V[j][g * d + c]', '(e / z) * V[j][h * d + c]'] },
    { step: 'slice', edit: ['const q = row.slice(h * d, (h + 1) * d);', 'const q = row.slice(g * d, (g + 1) * d);'] },
    { step: 'scale', edit: ['scores[j] = s / Math.sqrt(d);', 'scores[j] = s / d;'] },
    { step: 'softmax', edit: ['for (const e of exps) z += e;', 'for (const s of scores) z += Math.exp(s);'] },
  ],
  '07': [
    { step: 'frequency', edit: ['1 / base ** ((2 * i) / headDimensions)', '1 / base ** ((2 * i) / half)'] },
    { step: 'position', edit: ['(offset + Math.floor(k / half)) * inv', 'Math.floor(k / half) * inv'] },
    { step: 'pairs', edit: ['const a = buf[at + i];\n        const b = buf[at + i + half];', 'const a = buf[at + 2 * i];\n        const b = buf[at + 2 * i + 1];'] },
    { step: 'rotation', edit: ['buf[at + i] = a * Math.cos(theta) - b * Math.sin(theta);', 'buf[at + i] = a * Math.cos(theta) + b * Math.sin(theta);'] },
    { step: 'rotation', edit: ['buf[at + i + half] = a * Math.sin(theta)', 'buf[at + i + half] = buf[at + i] * Math.sin(theta)'] },
  ],
  '08': [
    { step: 'mask', edit: ['if (j <= p - w) return -Infinity;', 'if (j < p - w) return -Infinity;'] },
    { step: 'mask', edit: ['  if (j > p) return -Infinity;\n', ''] },
    { step: 'scale', edit: ['return s / Math.sqrt(q.length);', 'return s;'] },
    { step: 'softmax', edit: ['return e.map((x) => x / z);', 'return xs.map((x) => Math.exp(x) / z);'] },
    { step: 'weighted-sum', edit: ['a + x * V[j][c]', 'a + x * V[c][j]'] },
  ],
  '09': [
    { step: 'mask', edit: ['causal && j > i ? -Infinity', 'causal && j > i + 1 ? -Infinity'] },
    { step: 'scale', edit: ['dot(q[i])(kj) / Math.sqrt(d)', 'dot(q[i])(kj) / Math.sqrt(C)'] },
    { step: 'weighted-sum', edit: ['a + x * v[j][c]', 'a + x * k[j][c]'] },
  ],
};

/** Every slip as { number, index, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
