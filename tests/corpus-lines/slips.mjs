// The first-wrong-line corpus (issue 28): a right answer per challenge in a style the corpus of
// tests/corpus/ lacks (NN.js: flat buffers, classes, typed arrays, helpers across functions, index
// arithmetic, loops by rows or columns, map/reduce), and one- or two-line slips of it, written as a
// learner would before the diagnosis was run on any of them. Each slip: the step at fault and the
// edit [from, to]; the line at fault is the line of `from` in NN.js.
import { readFileSync } from 'node:fs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { step: 'scale', edit: ['const scale = 1 / Math.sqrt(d);', 'const scale = 1 / d;'] },
    { step: 'scores', edit: ['dot += q[i * d + c] * k[j * d + c];', 'dot += q[i * d + c] * k[i * d + c];'] },
    { step: 'softmax', edit: ['weights[i * T + j] = Math.exp(scores[i * T + j] - max);', 'weights[i * T + j] = Math.exp(scores[i * T + j]) - max;'] },
    { step: 'softmax', edit: ['for (let j = 0; j < T; j++) weights[i * T + j] /= sum;', 'for (let j = 0; j < T; j++) weights[i * T + j] /= T;'] },
    { step: 'weighted-sum', edit: ['row[c] += weights[i * T + j] * V[j][c];', 'row[c] += weights[j * T + i] * V[j][c];'] },
    { step: 'weighted-sum', edit: ['const row = new Array(dv).fill(0);', 'const row = new Array(dv).fill(1);'] },
    { step: 'scale', edit: ['for (let n = 0; n < T * T; n++) scores[n] *= scale;', 'for (let n = 0; n < T; n++) scores[n] *= scale;'] },
    { step: 'scores', edit: ['for (let c = 0; c < d; c++) dot +=', 'for (let c = 1; c < d; c++) dot +='] },
  ],
  '02': [
    { step: 'slice', edit: ['const [start, end] = [h * headDimensions, (h + 1) * headDimensions];', 'const [start, end] = [h * headDimensions + 1, (h + 1) * headDimensions + 1];'] },
    { step: 'scale', edit: ['scores.scale(1 / Math.sqrt(headDimensions))', 'scores.scale(1 / Math.sqrt(C))'] },
    { step: 'softmax', edit: ['const z = e.reduce((a, b) => a + b, 0);', 'const z = e.reduce((a, b) => a + b, 1);'] },
    { step: 'scores', edit: ['times(k.columns(start, end).transpose())', 'times(q.columns(start, end).transpose())'] },
    { step: 'weighted-sum', edit: ['return weights.times(v.columns(start, end));', 'return weights.times(k.columns(start, end));'] },
    { step: 'concat', edit: ['heads.flatMap((head) => head.rows[t])', 'heads.flatMap((head) => head.rows[t]).reverse()'] },
    { step: 'w-o', edit: ['concat.times(new Matrix(W_O)).rows', 'concat.times(new Matrix(W_O).transpose()).rows'] },
    { step: 'softmax', edit: ['const e = r.map((x) => Math.exp(x - m));', 'const e = r.map((x) => Math.exp(x) - m);'] },
  ],
  '03': [
    { step: 'mask', edit: ['return causal ? i + 1 : T;', 'return causal ? i : T;'] },
    { step: 'mask', edit: ['return causal ? i + 1 : T;', 'return causal ? Math.min(i + 2, T) : T;'] },
    { step: 'mask', edit: ['const n = visibleKeys(i, K.length, causal);', 'const n = visibleKeys(i, K.length, !causal);'] },
    { step: 'scale', edit: ['logits[j] = dot(query, K[j]) / Math.sqrt(d);', 'logits[j] = dot(query, K[j]) / d;'] },
    { step: 'scores', edit: ['s += a[c] * b[c];', 's += a[c] * b[0];'] },
    { step: 'softmax', edit: ['const w = logits.map((x) => Math.exp(x - top));', 'const w = logits.map((x) => Math.exp(x) - top);'] },
    { step: 'weighted-sum', edit: ['out[c] += (w[j] / total) * V[j][c];', 'out[c] += (w[j] / total) * V[i][c];'] },
    { step: 'weighted-sum', edit: ['for (let c = 0; c < out.length; c++)', 'for (let c = 0; c < out.length - 1; c++)'] },
  ],
  '04': [
    { step: 'project-K', edit: ['const K = new Linear(W_K).apply(X);', 'const K = new Linear(W_Q).apply(X);'] },
    { step: 'project-V', edit: ['const V = new Linear(W_V).apply(X);', 'const V = X;'] },
    { step: 'project-Q', edit: ['y[j] += x[i] * this.W[i][j];', 'y[j] += x[i] * this.W[j][i];'] },
    { step: 'slice', edit: ['acc += Q[i][off + c] * K[j][off + c];', 'acc += Q[i][off + c] * K[j][c];'] },
    { step: 'scale', edit: ['s.push(acc / Math.sqrt(headDimensions));', 's.push(acc / Math.sqrt(C));'] },
    { step: 'softmax', edit: ['concat[i][off + c] += (e[j] / z) * V[j][off + c];', 'concat[i][off + c] += (e[j] / T) * V[j][off + c];'] },
    { step: 'weighted-sum', edit: ['concat[i][off + c] += (e[j] / z) * V[j][off + c];', 'concat[i][off + c] += (e[j] / z) * V[i][off + c];'] },
    { step: 'w-o', edit: ['return new Linear(W_O).apply(concat);', 'return concat;'] },
    { step: 'concat', edit: ['concat[i][off + c] += (e[j] / z) * V[j][off + c];', 'concat[i][h + c * numberOfHeads] += (e[j] / z) * V[j][off + c];'] },
  ],
  '05': [
    { step: 'cache', edit: ['cache.append(K[t], V[t]);', 'cache.append(K[t], K[t]);'] },
    { step: 'cache', edit: ['    cache.append(K[t], V[t]);\n    out.push(attendToken(Q[t], cache, numberOfHeads, headDimensions));', '    out.push(attendToken(Q[t], cache, numberOfHeads, headDimensions));\n    cache.append(K[t], V[t]);'] },
    { step: 'scale', edit: ['/ Math.sqrt(d));', '/ Math.sqrt(numberOfHeads * d));'] },
    { step: 'slice', edit: ['reduce((s, x, c) => s + x * qh[c], 0)', 'reduce((s, x, c) => s + x * q[c], 0)'] },
    { step: 'softmax', edit: ['const z = e.reduce((a, b) => a + b, 0);', 'const z = e.length;'] },
    { step: 'slice', edit: ['out[h * d + c] += (e[j] / z) * vh[c];', 'out[h * d + c] += (e[j] / z) * v[c];'] },
    { step: 'cache', edit: ['append(k, v) { this.keys.push(k); this.values.push(v); }', 'append(k, v) { this.keys = [k]; this.values.push(v); }'] },
    { step: 'concat', edit: ['out[h * d + c] += (e[j] / z) * vh[c];', 'out[c] += (e[j] / z) * vh[c];'] },
  ],
  '06': [
    { step: 'kv-head', edit: ['const g = Math.floor(h / perGroup);', 'const g = h % numberOfKVHeads;'] },
    { step: 'kv-head', edit: ['const g = Math.floor(h / perGroup);', 'const g = Math.floor(h / numberOfKVHeads);'] },
    { step: 'scale', edit: ['/ Math.sqrt(d));', '/ Math.sqrt(C));'] },
    { step: 'slice', edit: ['dotAt(Q[i], h * d, K[j], g * d, d)', 'dotAt(Q[i], g * d, K[j], g * d, d)'] },
    { step: 'softmax', edit: ['const ex = xs.map((x) => Math.exp(x - top));', 'const ex = xs.map((x) => Math.exp(x) - top);'] },
    { step: 'weighted-sum', edit: ['acc + p * V[j][g * d + c]', 'acc + p * V[i][g * d + c]'] },
    { step: 'kv-head', edit: ['acc + p * V[j][g * d + c]', 'acc + p * V[j][h * d + c]'] },
    { step: 'scores', edit: ['for (let c = 0; c < n; c++) s +=', 'for (let c = 1; c < n; c++) s +='] },
  ],
  '07': [
    { step: 'frequency', edit: ['Math.pow(base, -(2 * i) / d)', 'Math.pow(base, -i / d)'] },
    { step: 'frequency', edit: ['Math.pow(base, -(2 * i) / d)', 'Math.pow(base, (2 * i) / d)'] },
    { step: 'position', edit: ['const p = r + offset;', 'const p = r;'] },
    { step: 'position', edit: ['const p = r + offset;', 'const p = r + offset + 1;'] },
    { step: 'pairs', edit: ['const x2 = row[h * d + i + half];', 'const x2 = row[h * d + i + 1];'] },
    { step: 'rotation', edit: ['out[h * d + i] = x1 * Math.cos(theta) - x2 * Math.sin(theta);', 'out[h * d + i] = x1 * Math.cos(theta) + x2 * Math.sin(theta);'] },
    { step: 'rotation', edit: ['out[h * d + i + half] = x2 * Math.cos(theta) + x1 * Math.sin(theta);', 'out[h * d + i + half] = x2 * Math.sin(theta) + x1 * Math.cos(theta);'] },
    { step: 'pairs', edit: ['for (let h = 0; h < numberOfHeads; h++) {', 'for (let h = 0; h < 1; h++) {'] },
  ],
  '08': [
    { step: 'mask', edit: ['const first = Math.max(0, p - w + 1);', 'const first = Math.max(0, p - w);'] },
    { step: 'mask', edit: ['const keys = K.slice(first, p + 1);', 'const keys = K.slice(first, p);'] },
    { step: 'mask', edit: ['const first = Math.max(0, p - w + 1);', 'const first = 0;'] },
    { step: 'scale', edit: ['/ Math.sqrt(d));', '/ d);'] },
    { step: 'scores', edit: ['k.reduce((s, x, c) => s + x * q[c], 0)', 'k.reduce((s, x, c) => s + x * k[c], 0)'] },
    { step: 'softmax', edit: ['(exps[j] / sum) * v[c]', '(exps[j] / exps.length) * v[c]'] },
    { step: 'weighted-sum', edit: ['(exps[j] / sum) * v[c]', '(exps[j] / sum) * v[j]'] },
    { step: 'weighted-sum', edit: ['const values = V.slice(first, p + 1);', 'const values = V.slice(0, p + 1);'] },
  ],
  '09': [
    { step: 'mask', edit: ['const last = causal ? i : K.length - 1;', 'const last = K.length - 1;'] },
    { step: 'scale', edit: ['scores.push(s / Math.sqrt(d));', 'scores.push(s / Math.sqrt(Q[0].length));'] },
    { step: 'softmax', edit: ['out[c] += (e[j] / z) * V[j][off + c];', 'out[c] += e[j] * V[j][off + c];'] },
    { step: 'w-o', edit: ['s + x * W_O[k][j]', 's + x * W_O[j][k]'] },
  ],
};

/** Every slip as { number, step, line, source }: the base with the edit made, and the line of the edit. */
export const slips = () => slipsOf(SLIPS, base);

/** The slips of a table ({ NN: [{ step, edit }] }) on the bases `baseOf(NN)`, as slips() gives them. */
export function slipsOf(table, baseOf) {
  return Object.entries(table).flatMap(([number, list]) => {
    const text = baseOf(number);
    return list.map(({ step, half, edit: [from, to] }, k) => {
      const at = text.indexOf(from);
      if (at < 0 || text.indexOf(from, at + 1) >= 0) throw new Error(`${number} slip ${k}: “${from}” must occur once in ${number}.js`);
      return { number, index: k, ...(half ? { half } : {}), step, line: text.slice(0, at).split('\n').length, source: text.slice(0, at) + to + text.slice(at + from.length) };
    });
  });
}
