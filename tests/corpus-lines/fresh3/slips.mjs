// A third held-out batch for the first wrong line (issue 28), written after the fixes the second
// batch (../fresh2/) led to and before the diagnosis was run on it: a right answer per challenge
// 01–09 in a style none of the corpus, fresh/ or fresh2/ has for that challenge (reduce alone with
// an { exps, total } accumulator; a closure that cuts a head's columns and for…of over entries();
// a flat T×T Float64Array filled column-major and masked in place; projections column by column
// and heads by recursion; a cache of two flat Float64Arrays and a count; flat K/V buffers read by
// index arithmetic under closures returning closures; a rotor made of closures returning closures;
// a compact band buffer indexed j − lo; a per-head class whose step methods keep state on `this`),
// and one- or two-line slips of it as a learner would make them. Each slip: the step at fault and
// the edit [from, to]; the line at fault is the line of `from` in fresh3/NN.js.
import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { step: 'softmax', edit: ['return { exps: [...exps, e], total: total + e };', 'return { exps: [...exps, e], total: total + x };'] },
    { step: 'weighted-sum', edit: ['s + p * V[j][c], 0)', 's + p * V[j][0], 0)'] },
    { step: 'scale', edit: ['const scale = Math.sqrt(Q[0].length);', 'const scale = Math.sqrt(Q.length);'] },
    { step: 'scores', edit: ['K.map((k) => dot(q, k) / scale)', 'K.map((k) => dot(k, k) / scale)'] },
  ],
  '02': [
    { step: 'slice', edit: ['const cut = columnsOf(from, from + headDimensions);', 'const cut = columnsOf(from, headDimensions);'] },
    { step: 'concat', edit: ['concat[i][from + c] = weights.reduce(', 'concat[i][h + c] = weights.reduce('] },
    { step: 'softmax', edit: ['(z += Math.exp(x - m), Math.exp(x - m))', '(z += Math.exp(x), Math.exp(x - m))'] },
  ],
  '03': [
    { step: 'mask', edit: ['for (let j = i + 1; j < T; j++) S[i * T + j] = -Infinity;', 'for (let j = i; j < T; j++) S[i * T + j] = -Infinity;'] },
    { step: 'mask', edit: ['for (let j = i + 1; j < T; j++) S[i * T + j] = -Infinity;', 'for (let j = i + 1; j < T; j++) S[j * T + i] = -Infinity;'] },
    { step: 'scale', edit: ['const inv = 1 / Math.sqrt(d);', 'const inv = 1 / Math.sqrt(T);'] },
    { step: 'softmax', edit: ['row.forEach((x, j) => { row[j] = Math.exp(x - top); });', 'row.forEach((x, j) => { row[j] = Math.exp(x); });'] },
    { step: 'weighted-sum', edit: ['acc += S[i * T + j] * V[j][c];', 'acc += S[j * T + i] * V[j][c];'] },
  ],
  '04': [
    { step: 'project-Q', edit: ['s += X[t][k] * W[k][j];', 's += X[t][k] * W[j][k];'] },
    { step: 'project-K', edit: ['const [Q, K, V] = [W_Q, W_K, W_V].map(', 'const [Q, K, V] = [W_Q, W_V, W_K].map('] },
    { step: 'slice', edit: ['return [headOutput(Q, K, V, h * d, d), ...', 'return [headOutput(Q, K, V, h, d), ...'] },
    { step: 'concat', edit: ['parts.reduce((row, part) => row.concat(part[t]), [])', 'parts.reduce((row, part) => part[t].concat(row), [])'] },
    { step: 'softmax', edit: ['row[c] += (e[j] / z) * v[from + c];', 'row[c] += e[j] * v[from + c];'] },
  ],
  '05': [
    { step: 'cache', edit: ['keys.set(K[t], n * C);', 'keys.set(K[t], t);'] },
    { step: 'cache', edit: ['    n++;\n', '\n'] },
    { step: 'scale', edit: ['w[j] = s / Math.sqrt(d);', 'w[j] = s / Math.sqrt(C);'] },
    { step: 'softmax', edit: ['row[base + c] += (w[j] / z) * values', 'row[base + c] += (w[j] / n) * values'] },
    { step: 'concat', edit: ['row[base + c] += (w[j] / z) * values', 'row[c * numberOfHeads + h] += (w[j] / z) * values'] },
  ],
  '06': [
    { step: 'kv-head', edit: ['Math.floor((h * numberOfKVHeads) / numberOfHeads) * d', 'Math.round((h * numberOfKVHeads) / numberOfHeads) * d'] },
    { step: 'slice', edit: ['acc += q[h * d + c] * k[j * Ckv + kvBase + c];', 'acc += q[kvBase + c] * k[j * Ckv + kvBase + c];'] },
    { step: 'scale', edit: ['return acc / Math.sqrt(d);', 'return acc / Math.sqrt(Ckv);'] },
    { step: 'weighted-sum', edit: ['(x / z) * v[j * Ckv + kvBase + c]', '(x / z) * k[j * Ckv + kvBase + c]'] },
  ],
  '07': [
    { step: 'frequency', edit: ['base ** (-i / half)', 'base ** (-i / d)'] },
    { step: 'position', edit: ['const turn = atPosition(offset + r);', 'const turn = atPosition(offset);'] },
    { step: 'rotation', edit: ['out[i] = a * c - b * sn[i];', 'out[i] = a * c + b * sn[i];'] },
    { step: 'pairs', edit: ['const [a, b] = [x[i], x[i + half]];', 'const [a, b] = [x[2 * i], x[2 * i + 1]];'] },
    { step: 'pairs', edit: ['row.slice(h * headDimensions, (h + 1) * headDimensions)', 'row.slice(h, h + headDimensions)'] },
  ],
  '08': [
    { step: 'mask', edit: ['for (let j = lo; j <= p; j++)', 'for (let j = lo; j < p; j++)'] },
    { step: 'weighted-sum', edit: ['(x / z) * V[lo + n][c]', '(x / z) * V[n][c]'] },
    { step: 'scale', edit: ['/ Math.sqrt(d);', '/ Math.sqrt(w);'] },
    { step: 'mask', edit: ['const band = new Float64Array(p - lo + 1);', 'const band = new Float64Array(w);'] },
  ],
  '09': [
    { step: 'mask', edit: ['(j > i ? -Infinity : x)', '(i > j ? -Infinity : x)'] },
    { step: 'slice', edit: ['this.k = K.map((row) => row.slice(from, from + d));', 'this.k = K.map((row) => row.slice(0, d));'] },
    { step: 'scale', edit: ['const f = 1 / Math.sqrt(this.d);', 'const f = 1 / Math.sqrt(this.q.length);'] },
    { step: 'concat', edit: ['concat[i].push(...row);', 'concat[i].unshift(...row);'] },
  ],
};

/** Every slip as { number, index, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
