// A sixteenth held-out batch for the first wrong line (issue 28), written blind (without reading the
// diagnosis, its tests or any measurement) and before the diagnosis was run on any slip of it: a right
// answer per challenge 01–09 in a style none of the corpus, fresh/ … fresh15/ has for that challenge
// (every matrix a Map from the string "i,j" to its number, Q, K and V copied in and the answer read
// back out; ES5, var and a HeadSplitter constructor with columns/attend/softmax/join/mix on its
// prototype and no arrow functions; each query walking its keys backwards, from the last visible key
// down to key 0, the causal mask only the starting key; a pipeline, an array of [name, step] pairs run
// in order over one state object; the heads of each decoded token done by a recursive divide-and-
// conquer split of the head range, the two halves joined on the way back up; no mutation at all,
// every array built by reduce and grown by spread; a column-major Float64Array read through an
// at(t, c) closure and written through put(t, c, value) into a second buffer; the queries tiled two
// rows at a time, each tile scoring only the keys from the first its earliest query may see; flat
// arrays, every matrix one Array.from({ length }) read by index arithmetic, nested rows only in the
// answer), and one- or two-line slips of it as a learner would make them, 38 of the 102 more than a
// one-token change (a term or a call left out, a statement moved, a step done in the wrong place or
// order, two things swapped). Each slip: the step at fault, the edit [from, to], and the half (A or B,
// alternating within a challenge, fixed before any run: rules may be fitted on half A's misses only,
// half B measures whether they generalise); the line at fault is the line of `from` in fresh16/NN.js.
import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { half: 'A', step: 'scores', edit: ['q.get(key(i, c)) * k.get(key(j, c))', 'q.get(key(i, c)) * k.get(key(c, j))'] },
    { half: 'B', step: 'scale', edit: ['const root = Math.sqrt(dk);', 'const root = Math.sqrt(dv);'] },
    { half: 'A', step: 'softmax', edit: ['const e = Math.exp(scores.get(key(i, j)) - biggest);', 'const e = Math.exp(scores.get(key(i, j))) - biggest;'] },
    { half: 'B', step: 'softmax', edit: ['norm += e;', 'norm = e;'] },
    { half: 'A', step: 'weighted-sum', edit: ['weights.get(key(i, j)) * v.get(key(j, c))', 'weights.get(key(i, j)) * v.get(key(i, c))'] },
    { half: 'B', step: 'weighted-sum', edit: ['    for (let c = 0; c < dv; c++) {\n      let acc = 0;\n', '    let acc = 0;\n    for (let c = 0; c < dv; c++) {\n'] },
    { half: 'A', step: 'scale', edit: ['scores.set(where, s / root)', 'scores.set(where, s * root)'] },
    { half: 'B', step: 'softmax', edit: ['    for (let j = 0; j < T; j++) weights.set(key(i, j), weights.get(key(i, j)) / norm);\n', ''] },
    { half: 'A', step: 'scores', edit: ['for (let c = 0; c < dk; c++) total +=', 'for (let c = 0; c < dk - 1; c++) total +='] },
    { half: 'B', step: 'softmax', edit: ['weights.set(key(i, j), e);', 'weights.set(key(j, i), e);'] },
  ],
  '02': [
    { half: 'A', step: 'slice', edit: ['var start = h * this.width;', 'var start = h;'] },
    { half: 'B', step: 'scores', edit: ['s += q[i][c] * k[j][c];', 's += q[i][c] * k[i][c];'] },
    { half: 'A', step: 'scale', edit: ['logits.push(s / Math.sqrt(this.width));', 'logits.push(s / Math.sqrt(this.Q[0].length));'] },
    { half: 'B', step: 'softmax', edit: ['total += exps[n];', 'total += xs[n];'] },
    { half: 'A', step: 'weighted-sum', edit: ['acc += p[j2] * v[j2][c2];', 'acc += p[j2] * v[i][c2];'] },
    { half: 'B', step: 'concat', edit: ['line = line.concat(heads[hh][t]);', 'line = heads[hh][t].concat(line);'] },
    { half: 'A', step: 'w-o', edit: ['sum += X[t][r] * W[r][col];', 'sum += X[t][r] * W[col][r];'] },
    { half: 'B', step: 'slice', edit: ['part.push(M[r].slice(start, start + this.width));', 'part.push(M[r].slice(start, this.width));'] },
    { half: 'A', step: 'softmax', edit: ['  for (var e = 0; e < exps.length; e++) exps[e] = exps[e] / total;\n', ''] },
    { half: 'B', step: 'weighted-sum', edit: ['var v = this.columns(this.V, h);', 'var v = this.columns(this.K, h);'] },
    { half: 'A', step: 'w-o', edit: ['return options.W_O ? layer.mix(joined, options.W_O) : joined;', 'return joined;'] },
    { half: 'B', step: 'concat', edit: ['  for (var t = 0; t < this.T; t++) {\n    var line = [];\n', '  var line = [];\n  for (var t = 0; t < this.T; t++) {\n'] },
  ],
  '03': [
    { half: 'A', step: 'mask', edit: ['const last = causal ? i : K.length - 1;', 'const last = causal ? i - 1 : K.length - 1;'] },
    { half: 'B', step: 'scale', edit: ['logits[j] = dot / Math.sqrt(dk);', 'logits[j] = dot / dk;'] },
    { half: 'A', step: 'scores', edit: ['for (let c = dk - 1; c >= 0; c--)', 'for (let c = dk - 1; c > 0; c--)'] },
    { half: 'B', step: 'mask', edit: ['const last = causal ? i : K.length - 1;', 'const last = causal ? K.length - 1 : i;'] },
    { half: 'A', step: 'softmax', edit: ['denom += logits[j];', 'denom += Math.exp(logits[j]);'] },
    { half: 'B', step: 'weighted-sum', edit: ['out[c] += w * V[j][c];', 'out[c] += w * V[i][c];'] },
    { half: 'A', step: 'mask', edit: ['const last = causal ? i : K.length - 1;', 'const last = causal ? Math.min(i + 1, K.length - 1) : K.length - 1;'] },
    { half: 'B', step: 'softmax', edit: ['logits[j] = Math.exp(logits[j] - peak);', 'logits[j] = Math.exp(logits[j]) - peak;'] },
    { half: 'A', step: 'weighted-sum', edit: ['const w = logits[j] / denom;', 'const w = logits[last - j] / denom;'] },
    { half: 'B', step: 'scores', edit: ['dot += Q[i][c] * K[j][c];', 'dot += Q[j][c] * K[i][c];'] },
  ],
  '04': [
    { half: 'A', step: 'project-Q', edit: ['s.Q = times(X, W_Q);', 's.Q = times(X, transpose(W_Q));'] },
    { half: 'B', step: 'project-K', edit: ['s.K = times(X, W_K);', 's.K = times(X, W_Q);'] },
    { half: 'A', step: 'project-V', edit: ['s.V = times(X, W_V);', 's.V = X;'] },
    { half: 'B', step: 'slice', edit: ['row.slice(h * d, h * d + d)', 'row.slice(h, h + d)'] },
    { half: 'A', step: 'scores', edit: ['head.scores = times(head.q, transpose(head.k));', 'head.scores = times(head.q, transpose(head.q));'] },
    { half: 'B', step: 'scale', edit: ['x / Math.sqrt(d)', 'x / Math.sqrt(C)'] },
    { half: 'A', step: 'softmax', edit: ['const z = e.reduce((a, b) => a + b, 0);', 'const z = row.reduce((a, b) => a + b, 0);'] },
    { half: 'B', step: 'weighted-sum', edit: ['head.out = times(head.weights, head.v);', 'head.out = times(head.weights, head.k);'] },
    { half: 'A', step: 'concat', edit: ['s.Y = X.map((_, t) => s.heads.flatMap((head) => head.out[t]));', 's.Y = s.heads.flatMap((head) => head.out);'] },
    { half: 'B', step: 'w-o', edit: ['s.result = times(s.Y, W_O);', 's.result = times(s.Y, transpose(W_O));'] },
    { half: 'A', step: 'softmax', edit: ['head.weights = head.scores.map((row) => {', 'head.weights = transpose(head.scores).map((row) => {'] },
    { half: 'B', step: 'project-K', edit: ['s.K = times(X, W_K);\n      s.V = times(X, W_V);', 's.K = times(X, W_V);\n      s.V = times(X, W_K);'] },
  ],
  '05': [
    { half: 'A', step: 'cache', edit: ['    cachedKeys.push(K[t]);\n    cachedValues.push(V[t]);\n    output.push(headsBetween(0, numberOfHeads, Q[t], cachedKeys, cachedValues, headDimensions));\n', '    output.push(headsBetween(0, numberOfHeads, Q[t], cachedKeys, cachedValues, headDimensions));\n    cachedKeys.push(K[t]);\n    cachedValues.push(V[t]);\n'] },
    { half: 'B', step: 'slice', edit: ['const q = query.slice(start, start + d);', 'const q = query.slice(start, d);'] },
    { half: 'A', step: 'scale', edit: ['return s / Math.sqrt(d);', 'return s / Math.sqrt(keys.length);'] },
    { half: 'B', step: 'softmax', edit: ['const total = exps.reduce((a, b) => a + b, 0);', 'const total = exps.reduce((a, b) => a + b, 1);'] },
    { half: 'A', step: 'weighted-sum', edit: ['(e / total) * values[j][start + c]', '(e / total) * keys[j][start + c]'] },
    { half: 'B', step: 'cache', edit: ['cachedValues.push(V[t]);', 'cachedValues.push(K[t]);'] },
    { half: 'A', step: 'concat', edit: ['return left.concat(right);', 'return right.concat(left);'] },
    { half: 'B', step: 'slice', edit: ['s += q[c] * key[start + c];', 's += q[c] * key[c];'] },
    { half: 'A', step: 'slice', edit: ['return oneHead(lo * d, query, keys, values, d);', 'return oneHead(lo, query, keys, values, d);'] },
    { half: 'B', step: 'cache', edit: ['  const cachedKeys = [];\n  const cachedValues = [];\n  const output = [];\n  for (let t = 0; t < Q.length; t++) {\n', '  const output = [];\n  for (let t = 0; t < Q.length; t++) {\n    const cachedKeys = [];\n    const cachedValues = [];\n'] },
    { half: 'A', step: 'scores', edit: ['const logits = keys.map((key) => {', 'const logits = values.map((key) => {'] },
    { half: 'B', step: 'softmax', edit: ['mixed[c] += (e / total) * values', 'mixed[c] += e * values'] },
  ],
  '06': [
    { half: 'A', step: 'kv-head', edit: ['const kv = Math.floor(h / group);', 'const kv = h % numberOfKVHeads;'] },
    { half: 'B', step: 'slice', edit: ['const q = columns(qRow, h * d);', 'const q = columns(qRow, kv * d);'] },
    { half: 'A', step: 'scale', edit: ['return [...list, dot / Math.sqrt(d)];', 'return [...list, dot / Math.sqrt(numberOfHeads * d)];'] },
    { half: 'B', step: 'scores', edit: ['const dot = q.reduce((s, x, c) => s + x * k[c], 0);', 'const dot = k.reduce((s, x, c) => s + x * k[c], 0);'] },
    { half: 'A', step: 'softmax', edit: ['const sum = exps.reduce((s, e) => s + e, 0);', 'const sum = scores.reduce((s, e) => s + e, 0);'] },
    { half: 'B', step: 'weighted-sum', edit: ['b + (exps[j] / sum) * v[c]', '(exps[j] / sum) * v[c]'] },
    { half: 'A', step: 'kv-head', edit: ['const v = columns(vRow, kv * d);', 'const v = columns(vRow, h * d);'] },
    { half: 'B', step: 'concat', edit: ['heads.reduce((row, head) => [...row, ...head[t]], [])', 'heads.reduce((row, head) => [...head[t], ...row], [])'] },
    { half: 'A', step: 'kv-head', edit: ['const group = numberOfHeads / numberOfKVHeads;', 'const group = numberOfKVHeads;'] },
    { half: 'B', step: 'softmax', edit: ['[...list, Math.exp(x - top)]', '[Math.exp(x - top), ...list]'] },
    { half: 'A', step: 'weighted-sum', edit: ['const mixed = V.reduce((blend, vRow, j) => {', 'const mixed = K.reduce((blend, vRow, j) => {'] },
    { half: 'B', step: 'kv-head', edit: ['const k = columns(kRow, kv * d);', 'const k = columns(kRow, Math.floor(h / numberOfKVHeads) * d);'] },
  ],
  '07': [
    { half: 'A', step: 'frequency', edit: ['Math.pow(base, (-2 * i) / headDimensions)', 'Math.pow(base, -i / headDimensions)'] },
    { half: 'B', step: 'position', edit: ['const theta = (offset + t) * freq;', 'const theta = t * freq;'] },
    { half: 'A', step: 'pairs', edit: ['const b = first + i + half;', 'const b = first + i + 1;'] },
    { half: 'B', step: 'rotation', edit: ['put(t, a, at(t, a) * cos - at(t, b) * sin);', 'put(t, a, at(t, a) * cos + at(t, b) * sin);'] },
    { half: 'A', step: 'rotation', edit: ['put(t, b, at(t, a) * sin + at(t, b) * cos);', 'put(t, b, at(t, b) * sin + at(t, a) * cos);'] },
    { half: 'B', step: 'frequency', edit: ['const freq = Math.pow(base, (-2 * i) / headDimensions);', 'const freq = Math.pow(base, (-2 * i) / C);'] },
    { half: 'A', step: 'pairs', edit: ['const a = first + i;', 'const a = i;'] },
    { half: 'B', step: 'position', edit: ['const theta = (offset + t) * freq;', 'const theta = (offset + t + 1) * freq;'] },
    { half: 'A', step: 'pairs', edit: ['const first = h * headDimensions;', 'const first = h * half;'] },
    { half: 'B', step: 'rotation', edit: ['        const cos = Math.cos(theta);\n        const sin = Math.sin(theta);\n', '        const cos = Math.sin(theta);\n        const sin = Math.cos(theta);\n'] },
    { half: 'A', step: 'frequency', edit: ['const freq = Math.pow(base, (-2 * i) / headDimensions);', 'const freq = 1 / Math.pow(base, (-2 * i) / headDimensions);'] },
    { half: 'B', step: 'position', edit: ['const theta = (offset + t) * freq;', 'const theta = offset + t * freq;'] },
  ],
  '08': [
    { half: 'A', step: 'mask', edit: ['const inWindow = j <= p && j > p - w;', 'const inWindow = j <= p && j >= p - w;'] },
    { half: 'B', step: 'scale', edit: ['scores.push(dot / Math.sqrt(d));', 'scores.push(dot / d);'] },
    { half: 'A', step: 'mask', edit: ['const lowest = Math.max(0, start - w + 1);', 'const lowest = Math.max(0, stop - w);'] },
    { half: 'B', step: 'scores', edit: ['dot += Q[p][c] * K[j][c];', 'dot += Q[p][c] * K[p][c];'] },
    { half: 'A', step: 'softmax', edit: ['const total = weights.reduce((a, b) => a + b, 0);', 'const total = weights.length;'] },
    { half: 'B', step: 'weighted-sum', edit: ['const j = lowest + n;', 'const j = p;'] },
    { half: 'A', step: 'mask', edit: ['scores.push(-Infinity);', 'scores.push(0);'] },
    { half: 'B', step: 'mask', edit: ['const inWindow = j <= p && j > p - w;', 'const inWindow = j > p - w;'] },
    { half: 'A', step: 'weighted-sum', edit: ['row[c] += (wt / total) * V[j][c];', 'row[c] += (wt / total) * V[n][c];'] },
    { half: 'B', step: 'scores', edit: ['for (let c = 0; c < d; c++) dot += Q[p][c]', 'for (let c = 0; c < d; c++) dot += Q[start][c]'] },
    { half: 'A', step: 'softmax', edit: ['Math.exp(s - peak)', 'Math.exp(s) - peak'] },
    { half: 'B', step: 'mask', edit: ['for (let j = lowest; j < stop; j++) {', 'for (let j = start; j < stop; j++) {'] },
  ],
  '09': [
    { half: 'A', step: 'mask', edit: ['n % T <= Math.floor(n / T) % T', 'n % T < Math.floor(n / T) % T'] },
    { half: 'B', step: 'slice', edit: ['* k[j * C + h * d + c]', '* k[j * C + c]'] },
    { half: 'A', step: 'scale', edit: ['return s / Math.sqrt(d);', 'return s / Math.sqrt(C);'] },
    { half: 'B', step: 'softmax', edit: ['sum += exps[rowStart + j];', 'sum += scores[rowStart + j];'] },
    { half: 'A', step: 'weighted-sum', edit: ['weights[(h * T + i) * T + j]', 'weights[(h * T + j) * T + i]'] },
    { half: 'B', step: 'concat', edit: ['const h = Math.floor((n % C) / d);', 'const h = (n % C) % numberOfHeads;'] },
    { half: 'A', step: 'w-o', edit: ['total += joined[i * C + r] * Wo[r][col];', 'total += joined[i * C + r] * Wo[col][r];'] },
    { half: 'B', step: 'mask', edit: ['    if (!visible(n)) return 0;\n', ''] },
    { half: 'A', step: 'softmax', edit: ['return Math.exp(s - top);', 'return Math.exp(top - s);'] },
    { half: 'B', step: 'scores', edit: ['const j = n % T;', 'const j = Math.floor(n / T) % T;'] },
  ],
};

/** Every slip as { number, index, half, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
