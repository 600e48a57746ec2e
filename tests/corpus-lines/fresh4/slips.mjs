// A fourth held-out batch for the first wrong line (issue 28), written after the fixes the third
// batch (../fresh3/) led to and before the diagnosis was run on it: a right answer per challenge
// 01–09 in a style none of the corpus, fresh/, fresh2/ or fresh3/ has for that challenge (while loops
// with manual indices, Math.max.apply and a separate normalize pass; one generic matmul helper for
// every product with a transpose helper; an early `continue` for masked keys and a normalize helper
// dividing in place; rows-against-rows products through a transposed weight and a reduce extending the
// output rows head by head; object-heavy state: a cache of { key, value } entries and a step object per
// head; a Map from K/V head to its slices; a table of { cos, sin } objects in while loops; a Map of a
// query's band normalized in place; a Map of heads with generic matmul and a reduce for the
// concatenation), and one- or two-line slips of it as a learner would make them. Each slip: the step
// at fault and the edit [from, to]; the line at fault is the line of `from` in fresh4/NN.js.
import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { step: 'scores', edit: ['s += Q[i][c] * K[j][c];', 's += Q[i][c] * K[i][c];'] },
    { step: 'scale', edit: ['scores.push(s / Math.sqrt(d));', 'scores.push(s / d);'] },
    { step: 'softmax', edit: ['    j = 0;\n    while (j < scores.length) {\n      scores[j] /= total;', '    while (j < scores.length) {\n      scores[j] /= total;'] },
    { step: 'weighted-sum', edit: ['acc += scores[j] * V[j][c];', 'acc += scores[j] * V[i][c];'] },
  ],
  '02': [
    { step: 'slice', edit: ['const v = columns(V, from, headDimensions);', 'const v = columns(V, h, headDimensions);'] },
    { step: 'scores', edit: ['matmul(q, transpose(k))', 'matmul(q, k)'] },
    { step: 'concat', edit: ['concat[i][from + c] = x;', 'concat[i][c] = x;'] },
    { step: 'w-o', edit: ['matmul(concat, W_O)', 'matmul(concat, transpose(W_O))'] },
  ],
  '03': [
    { step: 'mask', edit: ['if (causal && j > i) continue;', 'if (causal && j >= i) continue;'] },
    { step: 'mask', edit: ['if (causal && j > i) continue;', 'if (j > i) continue;'] },
    { step: 'softmax', edit: ['w[j] = w[j] / z;', 'w[j] = w[j] / w.length;'] },
    { step: 'weighted-sum', edit: ['row[c] += w[j] * V[j][c];', 'row[c] += w[j] * V[i][c];'] },
  ],
  '04': [
    { step: 'project-Q', edit: ['const Q = times(X, W_Q);', 'const Q = times(X, transpose(W_Q));'] },
    { step: 'project-V', edit: ['const V = times(X, W_V);', 'const V = times(X, W_K);'] },
    { step: 'slice', edit: ['const q = Q[t].slice(from, from + d);', 'const q = Q[t].slice(from, d);'] },
    { step: 'concat', edit: ['return row.concat(vt.map((column) => dot(w, column)));', 'return vt.map((column) => dot(w, column)).concat(row);'] },
  ],
  '05': [
    { step: 'cache', edit: ['state.cache.push({ key: K[t], value: V[t] });', 'state.cache = [{ key: K[t], value: V[t] }];'] },
    { step: 'slice', edit: ['s + x * entry.key[head.from + c]', 's + x * entry.key[c]'] },
    { step: 'scale', edit: ['/ Math.sqrt(headDimensions)) };', '/ Math.sqrt(C)) };'] },
    { step: 'softmax', edit: ['step.weights = step.exps.map((x) => x / step.total);', 'step.weights = step.exps.map((x) => x / step.exps.length);'] },
  ],
  '06': [
    { step: 'kv-head', edit: ['kv.get(Math.floor(h / group))', 'kv.get(h % numberOfKVHeads)'] },
    { step: 'slice', edit: ['const q = row.slice(h * d, h * d + d);', 'const q = row.slice(h, h + d);'] },
    { step: 'scale', edit: ['/ Math.sqrt(d));', '/ Math.sqrt(row.length));'] },
    { step: 'softmax', edit: ['a + (x / z) * v[j][c]', 'a + x * v[j][c]'] },
  ],
  '07': [
    { step: 'frequency', edit: ['Math.pow(base, (2 * i) / headDimensions)', 'Math.pow(base, i / headDimensions)'] },
    { step: 'position', edit: ['const theta = (offset + t) /', 'const theta = t /'] },
    { step: 'pairs', edit: ['const b = X[t][start + i + half];', 'const b = X[t][start + i + 1];'] },
    { step: 'rotation', edit: ['row[start + i + half] = a * sin + b * cos;', 'row[start + i + half] = b * cos - a * sin;'] },
  ],
  '08': [
    { step: 'mask', edit: ['if (j > p || j <= p - w) continue;', 'if (j > p || j < p - w) continue;'] },
    { step: 'mask', edit: ['if (j > p || j <= p - w) continue;', 'if (j <= p - w) continue;'] },
    { step: 'softmax', edit: ['band.set(j, e / z);', 'band.set(j, e / band.size);'] },
    { step: 'weighted-sum', edit: ['out[c] += a * V[j][c];', 'out[c] += a * V[p][c];'] },
  ],
  '09': [
    { step: 'scale', edit: ['row.map((x) => x / Math.sqrt(d))', 'row.map((x) => x * Math.sqrt(d))'] },
    { step: 'mask', edit: ['(j <= i ? x : -Infinity)', '(j < i ? x : -Infinity)'] },
    { step: 'weighted-sum', edit: ['matmul(S.map(softmax), head.v)', 'matmul(S.map(softmax), head.k)'] },
    { step: 'concat', edit: ['[...row, ...head.out[i]]', '[...head.out[i], ...row]'] },
  ],
};

/** Every slip as { number, index, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
