// A twenty-first held-out batch for the first wrong line (issue 28), written blind (without reading the
// diagnosis, its tests or any measurement) and before the diagnosis was run on any slip of it, other than
// to check that every base passes all of its challenge's tests and every slip fails at least one: a right
// answer per challenge 01–09 in a style none of the corpus, fresh/ … fresh20/ has for that challenge (a
// class hierarchy, an Op base class whose forward(x) each step overrides, KeyScores, Scale, RowSoftmax
// and ValueBlend, run in order by a Sequence op; the iterator protocol written by hand, headsOf() and
// indices(n) objects whose [Symbol.iterator]() returns a { next() } handing out the heads as
// { offset, q, k, v } and the indices, every loop a for…of over one of them; Array.from({ length }, …)
// for every array, the scores, the scaled and masked scores, the maxima, the exponentials, the totals,
// the weights and the output each one Array.from over the rows with one over the columns inside, no loop
// and no map; while loops with manual counters stepped by += 1 for the product helper, the heads, each
// query's scores, maximum, exponentials and total and the blend into the joined rows; the KV cache a
// singly linked list, each token's key and value a new node pointing to the one before, the query
// walking from the newest node back to the oldest; everything in objects keyed by name, the key/value
// heads kv0, kv1, … and the query heads q0, q1, … made by Object.fromEntries, each query head naming the
// key/value head it reads, the outputs out.q0, out.q1, … joined through Object.values; no mutation in
// RoPE, the rotate-half pairs listed once as [first, second, frequency] triples and each row turned by a
// reduce over them returning turned.with(first, …).with(second, …), the pair read by .at(); a streaming
// (online) softmax per query over its window, a running maximum, total and output rescaled by
// exp(old maximum − new maximum); one Float64Array arena holding Q, K, V, the scores, the concatenation
// and W_O at fixed offsets, read and written through { at, rowStride, colStride } views, Kᵀ being K's
// region with its strides swapped), and one- or two-line slips of it as a learner would make them: 108 in
// all (12 for each of 01–09, 54 in each half), 72 of them more than a one-token change (a term, a call or
// a line left out, a statement moved, a wrong index, variable, axis, stride or head offset, an off-by-one
// in a bound, a slice end or a window, two things swapped, a wrong query/key-value head mapping, the wrong
// partner of a pair, a reduce without its initial value, the cache appended after the query reads it or
// its oldest node skipped, the running maximum never updated). Each slip: the step at fault, the edit
// [from, to], and the half (A or B, alternating within a challenge, fixed before any run: rules may be
// fitted on half A's misses only, half B measures whether they generalise); the line at fault is the
// line of `from` in fresh21/NN.js.

import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { half: 'A', step: 'scores', edit: ['return Q.map((q) => this.K.map((k) => q.reduce((sum, x, c) => sum + x * k[c], 0)));', 'return this.K.map((k) => Q.map((q) => q.reduce((sum, x, c) => sum + x * k[c], 0)));'] },
    { half: 'B', step: 'scale', edit: ['this.factor = 1 / Math.sqrt(width);', 'this.factor = 1 / width;'] },
    { half: 'A', step: 'softmax', edit: ['const exps = row.map((s) => Math.exp(s - top));', 'const exps = row.map((s) => Math.exp(s));'] },
    { half: 'B', step: 'weighted-sum', edit: ['weights.reduce((sum, w, j) => sum + w * this.V[j][c], 0)', 'weights.reduce((sum, w, j) => sum + this.V[j][c], 0)'] },
    { half: 'A', step: 'scale', edit: ['new Scale(Q[0].length)', 'new Scale(Q.length)'] },
    { half: 'B', step: 'softmax', edit: ['return exps.map((e) => e / total);', 'return exps;'] },
    { half: 'A', step: 'scores', edit: ['new KeyScores(K)', 'new KeyScores(Q)'] },
    { half: 'B', step: 'softmax', edit: ['const total = exps.reduce((a, b) => a + b, 0);', 'const total = row.reduce((a, b) => a + b, 0);'] },
    { half: 'A', step: 'weighted-sum', edit: ['return W.map((weights) => this.V[0].map((_, c) =>', 'return W.map((weights) => weights.map((_, c) =>'] },
    { half: 'B', step: 'scale', edit: ['new KeyScores(K), new Scale(Q[0].length), new RowSoftmax()', 'new KeyScores(K), new RowSoftmax()'] },
    { half: 'A', step: 'softmax', edit: ['const top = Math.max(...row);', 'const top = Math.min(...row);'] },
    { half: 'B', step: 'weighted-sum', edit: ['sum + w * this.V[j][c], 0)', 'sum + w * this.V[c][j], 0)'] },
  ],
  '02': [
    { half: 'A', step: 'slice', edit: ['const k = columns(K, offset, headDimensions);', 'const k = columns(K, h, headDimensions);'] },
    { half: 'B', step: 'scale', edit: ['scores.push(dot / Math.sqrt(d));', 'scores.push(dot / d);'] },
    { half: 'A', step: 'slice', edit: ['return M.map((row) => row.slice(from, from + width));', 'return M.map((row) => row.slice(from, width));'] },
    { half: 'B', step: 'softmax', edit: ['const exps = scores.map((s) => Math.exp(s - top));', 'const exps = scores.map((s) => Math.exp(s) - top);'] },
    { half: 'A', step: 'concat', edit: ['joined[t][head.offset + c] = out[t][c];', 'joined[t][c] = out[t][c];'] },
    { half: 'B', step: 'w-o', edit: ['sum + x * mix[c][j], 0)', 'sum + x * mix[j][c], 0)'] },
    { half: 'A', step: 'slice', edit: ['const offset = h * headDimensions;', 'const offset = h * numberOfHeads;'] },
    { half: 'B', step: 'weighted-sum', edit: ['row[c] += (e / total) * v[j][c];', 'row[c] += (e / total) * v[i][c];'] },
    { half: 'A', step: 'scores', edit: ['for (const c of indices(d)) dot += q[i][c] * k[j][c];', 'for (const c of indices(d - 1)) dot += q[i][c] * k[j][c];'] },
    { half: 'B', step: 'concat', edit: ['for (const t of indices(Q.length)) {', 'for (const t of indices(Q.length - 1)) {'] },
    { half: 'A', step: 'w-o', edit: ['const mix = W_O ?? Array.from(', 'const mix = Array.from('] },
    { half: 'B', step: 'softmax', edit: ['const total = exps.reduce((a, b) => a + b, 0);', 'const total = scores.reduce((a, b) => a + b, 0);'] },
  ],
  '03': [
    { half: 'A', step: 'mask', edit: ['(causal && j > i ? -Infinity', '(causal && j >= i ? -Infinity'] },
    { half: 'B', step: 'mask', edit: ['? -Infinity : scaled[i][j])', '? 0 : scaled[i][j])'] },
    { half: 'A', step: 'scale', edit: ['scores[i][j] / Math.sqrt(d)', 'scores[i][j] / d'] },
    { half: 'B', step: 'softmax', edit: ['Math.exp(masked[i][j] - maxima[i])', 'Math.exp(masked[i][j])'] },
    { half: 'A', step: 'weighted-sum', edit: ['weights[i][j] * V[j][c]', 'weights[j][i] * V[j][c]'] },
    { half: 'B', step: 'scores', edit: ['Q[i][c] * K[j][c]', 'Q[i][c] * K[c][j]'] },
    { half: 'A', step: 'mask', edit: ['(causal && j > i ? -Infinity', '(j > i ? -Infinity'] },
    { half: 'B', step: 'softmax', edit: ['exps[i][j] / totals[i]', 'exps[i][j] / totals[j]'] },
    { half: 'A', step: 'scale', edit: ['-Infinity : scaled[i][j])', '-Infinity : scores[i][j])'] },
    { half: 'B', step: 'weighted-sum', edit: ['sum(Array.from({ length: T }, (_, j) => weights[i][j] * V[j][c]))', 'sum(Array.from({ length: i }, (_, j) => weights[i][j] * V[j][c]))'] },
    { half: 'A', step: 'softmax', edit: ['(_, i) => sum(exps[i]));', '(_, i) => sum(exps.map((row) => row[i])));'] },
    { half: 'B', step: 'mask', edit: ['(causal && j > i ? -Infinity', '(causal && j > i + 1 ? -Infinity'] },
  ],
  '04': [
    { half: 'A', step: 'slice', edit: ['dot += Q[i][start + c] * K[j][start + c];', 'dot += Q[i][start + c] * K[j][c];'] },
    { half: 'B', step: 'scale', edit: ['scores.push(dot / Math.sqrt(d));', 'scores.push(dot / Math.sqrt(C));'] },
    { half: 'A', step: 'softmax', edit: ['const w = Math.exp(scores[e] - top);', 'const w = Math.exp(scores[e]);'] },
    { half: 'B', step: 'concat', edit: ['joined[i][start + col] +=', 'joined[i][col] +='] },
    { half: 'A', step: 'w-o', edit: ['return product(joined, W_O);', 'return joined;'] },
    { half: 'B', step: 'weighted-sum', edit: ['* V[key][start + col];', '* V[i][start + col];'] },
    { half: 'A', step: 'scores', edit: ['while (j < T) {\n        let dot = 0;', 'let dot = 0;\n      while (j < T) {'] },
    { half: 'B', step: 'softmax', edit: ['total += w;', 'total = w;'] },
    { half: 'A', step: 'slice', edit: ['const start = h * d;', 'const start = h * numberOfHeads;'] },
    { half: 'B', step: 'w-o', edit: ['return product(joined, W_O);', 'return product(W_O, joined);'] },
    { half: 'A', step: 'weighted-sum', edit: ['joined[i][start + col] += (weights[key] / total)', 'joined[i][start + col] = (weights[key] / total)'] },
    { half: 'B', step: 'softmax', edit: ['(weights[key] / total) * V[key]', 'weights[key] * V[key]'] },
  ],
  '05': [
    { half: 'A', step: 'cache', edit: ['    newest = { key: K[t], value: V[t], previous: newest };\n    rows.push(attendAll(Q[t], newest, numberOfHeads, headDimensions));', '    rows.push(attendAll(Q[t], newest, numberOfHeads, headDimensions));\n    newest = { key: K[t], value: V[t], previous: newest };'] },
    { half: 'B', step: 'cache', edit: ['previous: newest }', 'previous: null }'] },
    { half: 'A', step: 'slice', edit: ['for (let c = from; c < from + d; c++)', 'for (let c = from; c < d; c++)'] },
    { half: 'B', step: 'scale', edit: ['scores.push(dot / Math.sqrt(d));', 'scores.push(dot);'] },
    { half: 'A', step: 'softmax', edit: ['const total = exps.reduce((a, b) => a + b, 0);', 'const total = exps.reduce((a, b) => a + b, 1);'] },
    { half: 'B', step: 'weighted-sum', edit: ['* values[n][c];', '* values[0][c];'] },
    { half: 'A', step: 'cache', edit: ['node !== null;', 'node.previous !== null;'] },
    { half: 'B', step: 'concat', edit: ['row[from + c] +=', 'row[c] +='] },
    { half: 'A', step: 'slice', edit: ['values.push(node.value.slice(from, from + d));', 'values.push(node.value.slice(from, d));'] },
    { half: 'B', step: 'softmax', edit: ['Math.exp(s - top)', 'Math.exp(top - s)'] },
    { half: 'A', step: 'scores', edit: ['dot += q[c] * node.key[c];', 'dot += q[c] * node.value[c];'] },
    { half: 'B', step: 'cache', edit: ['value: V[t]', 'value: K[t]'] },
  ],
  '06': [
    { half: 'A', step: 'kv-head', edit: ['reads: `kv${Math.floor(h / group)}`', 'reads: `kv${h % numberOfKVHeads}`'] },
    { half: 'B', step: 'scale', edit: ['dots.map((x) => x / Math.sqrt(d))', 'dots.map((x) => x / Math.sqrt(C))'] },
    { half: 'A', step: 'slice', edit: ['row.slice(head * d, (head + 1) * d)', 'row.slice(head, head + d)'] },
    { half: 'B', step: 'kv-head', edit: ['const group = numberOfHeads / numberOfKVHeads;', 'const group = numberOfKVHeads;'] },
    { half: 'A', step: 'softmax', edit: ['const top = Math.max(...scores);', 'const top = Math.min(...scores);'] },
    { half: 'B', step: 'weighted-sum', edit: ['s + w * v[j][c], 0)', 's + w * k[j][c], 0)'] },
    { half: 'A', step: 'scores', edit: ['const dots = k.map((kj) =>', 'const dots = q.map((kj) =>'] },
    { half: 'B', step: 'concat', edit: ['return Q.map((_, t) => outs.flatMap((rows) => rows[t]));', 'return outs.flat();'] },
    { half: 'A', step: 'kv-head', edit: ['const { k, v } = kvHeads[reads];', "const { k, v } = kvHeads[name.replace('q', 'kv')];"] },
    { half: 'B', step: 'slice', edit: ['q: cut(Q, h, d)', 'q: cut(Q, Math.floor(h / group), d)'] },
    { half: 'A', step: 'weighted-sum', edit: ['weights.reduce((s, w, j) => s + w * v[j][c], 0)', 'weights.reduce((s, w, j) => s + w * v[j][c])'] },
    { half: 'B', step: 'scale', edit: ['const scores = dots.map((x) => x / Math.sqrt(d));', 'const scores = dots;'] },
  ],
  '07': [
    { half: 'A', step: 'pairs', edit: ['const second = first + half;', 'const second = first + 1;'] },
    { half: 'B', step: 'frequency', edit: ['base ** ((-2 * i) / headDimensions)', 'base ** (-i / headDimensions)'] },
    { half: 'A', step: 'position', edit: ['const position = offset + r;', 'const position = r;'] },
    { half: 'B', step: 'rotation', edit: ['a * Math.cos(angle) - b * Math.sin(angle)', 'a * Math.cos(angle) + b * Math.sin(angle)'] },
    { half: 'A', step: 'pairs', edit: ['const head = Math.floor(n / half);', 'const head = n % numberOfHeads;'] },
    { half: 'B', step: 'frequency', edit: ['base ** ((-2 * i) / headDimensions)', 'base ** ((-2 * (i + 1)) / headDimensions)'] },
    { half: 'A', step: 'rotation', edit: ['const turnedSecond = a * Math.sin(angle) + b * Math.cos(angle);', 'const turnedSecond = b * Math.sin(angle) + a * Math.cos(angle);'] },
    { half: 'B', step: 'position', edit: ['const position = offset + r;', 'const position = offset + r + 1;'] },
    { half: 'A', step: 'rotation', edit: ['return turned.with(first, turnedFirst)', 'return row.with(first, turnedFirst)'] },
    { half: 'B', step: 'pairs', edit: ['const b = row.at(second);', 'const b = row.at(first + half - 1);'] },
    { half: 'A', step: 'frequency', edit: ['base ** ((-2 * i) / headDimensions)', 'base ** (-2 * i) / headDimensions'] },
    { half: 'B', step: 'rotation', edit: ['const turnedSecond = a * Math.sin(angle)', 'const turnedSecond = turnedFirst * Math.sin(angle)'] },
  ],
  '08': [
    { half: 'A', step: 'mask', edit: ['Math.max(0, p - w + 1)', 'Math.max(0, p - w)'] },
    { half: 'B', step: 'scale', edit: ['const scale = 1 / Math.sqrt(d);', 'const scale = 1 / d;'] },
    { half: 'A', step: 'softmax', edit: ['const shrink = Math.exp(best - next);', 'const shrink = 1;'] },
    { half: 'B', step: 'weighted-sum', edit: ['e * V[j][c]);', 'e * V[p][c]);'] },
    { half: 'A', step: 'mask', edit: ['j <= p; j++)', 'j < p; j++)'] },
    { half: 'B', step: 'softmax', edit: ['total = total * shrink + e;', 'total = total + e;'] },
    { half: 'A', step: 'scores', edit: ['s + x * K[j][c], 0)', 's + x * K[p][c], 0)'] },
    { half: 'B', step: 'mask', edit: ['for (let j = first; j <= p; j++) {', 'for (let j = first; j < Q.length; j++) {'] },
    { half: 'A', step: 'softmax', edit: ['      best = next;\n', ''] },
    { half: 'B', step: 'weighted-sum', edit: ['a * shrink + e * V[j][c]', 'a * shrink + V[j][c]'] },
    { half: 'A', step: 'scale', edit: [', 0) * scale;', ', 0);'] },
    { half: 'B', step: 'scores', edit: ['s + x * K[j][c], 0)', 's + x * Q[j][c], 0)'] },
  ],
  '09': [
    { half: 'A', step: 'mask', edit: ['const seen = causal ? i + 1 : T;', 'const seen = causal ? i : T;'] },
    { half: 'B', step: 'scale', edit: ['put(s, i, j, dot / Math.sqrt(d));', 'put(s, i, j, dot / Math.sqrt(C));'] },
    { half: 'A', step: 'w-o', edit: ['outRow[j] += get(cat, i, c) * get(wo, c, j);', 'outRow[j] += get(cat, i, c) * get(wo, j, c);'] },
    { half: 'B', step: 'slice', edit: ['const col = h * d;', 'const col = h;'] },
    { half: 'A', step: 'scores', edit: ['const kT = view(kAt, 1, C);', 'const kT = view(kAt, C, 1);'] },
    { half: 'B', step: 'softmax', edit: ['let top = -Infinity;\n      for (let j = 0; j < seen; j++) top = Math.max(top, get(s, i, j));', 'let top = 0;'] },
    { half: 'A', step: 'mask', edit: ['put(s, i, j, j < seen ? Math.exp(get(s, i, j) - top) : 0);', 'put(s, i, j, Math.exp(get(s, i, j) - top));'] },
    { half: 'B', step: 'weighted-sum', edit: ['* get(v, j, col + c);', '* get(v, i, col + c);'] },
    { half: 'A', step: 'concat', edit: ['put(cat, i, col + c, sum);', 'put(cat, i, c, sum);'] },
    { half: 'B', step: 'softmax', edit: ['total += get(s, i, j);', 'total += get(s, j, i);'] },
    { half: 'A', step: 'scores', edit: ['get(q, i, col + c) * get(kT, col + c, j)', 'get(q, i, col + c) * get(kT, j, col + c)'] },
    { half: 'B', step: 'w-o', edit: ['outRow[j] += get(cat', 'outRow[j] = get(cat'] },
  ],
};

/** Every slip as { number, index, half, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
