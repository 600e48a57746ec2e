// A seventeenth held-out batch for the first wrong line (issue 28), written blind (without reading the
// diagnosis, its tests or any measurement) and before the diagnosis was run on any slip of it, other than
// to check that every base passes all of its challenge's tests and every slip fails at least one: a right
// answer per challenge 01–09 in a style none of the corpus, fresh/ … fresh16/ has for that challenge (a
// tiny stack machine, the attention a program of [op, ...args] instructions run over a stack of
// matrices; every product one call of a small einsum helper whose spec names the indices, 'ic,jc->ij'
// for q·kᵀ; while loops with manual indices, the T×T scores filled, the mask written over them as
// −Infinity, each row softmaxed in place; every matrix an object { rows, cols, data } over a
// Float64Array read through get(i, j) and written through set(i, j, x); curried helpers, one
// attendHead(d)(h)(cache)(query) per head and a cache the token appends to before its query reads it;
// recursion instead of loops over the tokens, the query heads, the keys, the columns, the maximum and
// the total; a Rope class made by a static factory, its options set by chained withBase()/startingAt()
// and its half width and inverse frequencies getters; an iterable class whose [Symbol.iterator]
// generator yields one output row per query, band(p) giving the keys it may see and the scale a
// getter; memoised helpers, memo(fn) caching the scores, each row's maximum and total and the heads'
// outputs by their arguments), and one- or two-line slips of it as a learner would make them: 107 in
// all (11 for 01, 12 for each of 02–09), 71 of them more than a one-token change (50 of those change
// three tokens or more or more than one line: a term, a call or a line left out, a statement moved or
// added, a step done in the wrong order, two things swapped). Each slip: the step at fault, the edit
// [from, to], and the half (A or B, alternating within a challenge, fixed before any run: rules may be
// fitted on half A's misses only, half B measures whether they generalise); the line at fault is the
// line of `from` in fresh17/NN.js.
import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { half: 'A', step: 'scores', edit: ["    ['transpose'],\n", ''] },
    { half: 'B', step: 'scale', edit: ["['scale', 1 / Math.sqrt(dk)],", "['scale', 1 / dk],"] },
    { half: 'A', step: 'softmax', edit: ['const exps = row.map((x) => Math.exp(x - top));', 'const exps = row.map((x) => Math.exp(x));'] },
    { half: 'B', step: 'softmax', edit: ['for (const e of exps) total += e;', 'for (const e of row) total += e;'] },
    { half: 'A', step: 'weighted-sum', edit: ["['push', V],", "['push', K],"] },
    { half: 'B', step: 'scale', edit: ['const dk = Q[0].length;', 'const dk = Q.length;'] },
    { half: 'A', step: 'scale', edit: ["    ['scale', 1 / Math.sqrt(dk)],\n    ['softmax'],\n", "    ['softmax'],\n    ['scale', 1 / Math.sqrt(dk)],\n"] },
    { half: 'B', step: 'weighted-sum', edit: ["    ['push', V],\n", "    ['push', V],\n    ['transpose'],\n"] },
    { half: 'A', step: 'softmax', edit: ['return exps.map((e) => e / total);', 'return exps;'] },
    { half: 'B', step: 'scores', edit: ["    ['push', Q],\n    ['push', K],\n", "    ['push', K],\n    ['push', Q],\n"] },
    { half: 'A', step: 'softmax', edit: ['const top = Math.max(...row);', 'const top = Math.min(...row);'] },
  ],
  '02': [
    { half: 'A', step: 'scores', edit: ["einsum('ic,jc->ij', q, k)", "einsum('ic,cj->ij', q, k)"] },
    { half: 'B', step: 'scale', edit: ['s / Math.sqrt(d)', 's / Math.sqrt(numberOfHeads * d)'] },
    { half: 'A', step: 'slice', edit: ['row.slice(h * d, (h + 1) * d)', 'row.slice(h, (h + 1) * d)'] },
    { half: 'B', step: 'softmax', edit: ['const sum = exps.reduce((a, b) => a + b, 0);', 'const sum = row.reduce((a, b) => a + b, 0);'] },
    { half: 'A', step: 'weighted-sum', edit: ["heads.push(einsum('ij,jc->ic', weights, v));", "heads.push(einsum('ij,jc->ic', weights, k));"] },
    { half: 'B', step: 'concat', edit: ['const joined = Q.map((_, t) => heads.reduce((row, head) => row.concat(head[t]), []));', 'const joined = heads.flat();'] },
    { half: 'A', step: 'w-o', edit: ["einsum('tc,co->to', joined, W_O)", "einsum('tc,oc->to', joined, W_O)"] },
    { half: 'B', step: 'softmax', edit: ['const exps = row.map((x) => Math.exp(x - max));', 'const exps = row.map((x) => Math.exp(x));'] },
    { half: 'A', step: 'slice', edit: ['const [q, k, v] = [cols(Q), cols(K), cols(V)];', 'const [q, k, v] = [cols(Q), cols(K), V];'] },
    { half: 'B', step: 'scores', edit: ["einsum('ic,jc->ij', q, k)", "einsum('ic,jc->ij', q, q)"] },
    { half: 'A', step: 'w-o', edit: ["return W_O ? einsum('tc,co->to', joined, W_O) : joined;", 'return joined;'] },
    { half: 'B', step: 'scale', edit: ['    const scaled = scores.map((row) => row.map((s) => s / Math.sqrt(d)));\n    const weights = scaled.map(softmax);\n', '    const weights = scores.map(softmax).map((row) => row.map((s) => s / Math.sqrt(d)));\n'] },
  ],
  '03': [
    { half: 'A', step: 'mask', edit: ['let k = q + 1;', 'let k = q;'] },
    { half: 'B', step: 'scale', edit: ['const scale = Math.sqrt(dk);', 'const scale = dk;'] },
    { half: 'A', step: 'scores', edit: ['dot += Q[i][c] * K[j][c];', 'dot += Q[i][c] * K[i][c];'] },
    { half: 'B', step: 'mask', edit: ['scores[q][k] = -Infinity;', 'scores[q][k] = 0;'] },
    { half: 'A', step: 'softmax', edit: ['row[n] = Math.exp(row[n] - top);', 'row[n] = Math.exp(row[n]);'] },
    { half: 'B', step: 'weighted-sum', edit: ['line[c] += scores[t][s] * V[s][c];', 'line[c] += scores[s][t] * V[s][c];'] },
    { half: 'A', step: 'mask', edit: ['if (causal) {', 'if (!causal) {'] },
    { half: 'B', step: 'softmax', edit: ['    n = 0;\n    while (n < row.length) row[n++] /= total;\n', ''] },
    { half: 'A', step: 'weighted-sum', edit: ['const line = new Array(dv).fill(0);', 'const line = new Array(dk).fill(0);'] },
    { half: 'B', step: 'scores', edit: ['let c = 0;\n      while (c < dk) {', 'let c = 1;\n      while (c < dk) {'] },
    { half: 'A', step: 'mask', edit: ['let k = q + 1;', 'let k = q + 2;'] },
    { half: 'B', step: 'softmax', edit: ['    let total = 0;\n    n = 0;\n', '    let total = 1;\n    n = 0;\n'] },
  ],
  '04': [
    { half: 'A', step: 'project-Q', edit: ['const Q = product(x, fromRows(W_Q));', 'const Q = x;'] },
    { half: 'B', step: 'project-K', edit: ['const K = product(x, fromRows(W_K));', 'const K = product(x, fromRows(W_Q));'] },
    { half: 'A', step: 'project-V', edit: ['const V = product(x, fromRows(W_V));', 'const V = product(fromRows(W_V), x);'] },
    { half: 'B', step: 'slice', edit: ['const off = h * d;', 'const off = h;'] },
    { half: 'A', step: 'scores', edit: ['Q.get(i, off + c) * K.get(j, off + c)', 'Q.get(i, off + c) * K.get(off + c, j)'] },
    { half: 'B', step: 'scale', edit: ['return s / Math.sqrt(d);', 'return s / Math.sqrt(C);'] },
    { half: 'A', step: 'softmax', edit: ['      for (let j = 0; j < T; j++) scores.set(i, j, scores.get(i, j) / z);\n', ''] },
    { half: 'B', step: 'weighted-sum', edit: ['acc += scores.get(i, j) * V.get(j, off + c);', 'acc += scores.get(i, j) * V.get(i, off + c);'] },
    { half: 'A', step: 'concat', edit: ['joined.set(i, off + c, acc);', 'joined.set(i, c, acc);'] },
    { half: 'B', step: 'w-o', edit: ['return toRows(product(joined, fromRows(W_O)));', 'return toRows(joined);'] },
    { half: 'A', step: 'softmax', edit: ['scores.set(i, j, Math.exp(scores.get(i, j) - top));', 'scores.set(i, j, Math.exp(scores.get(i, j)));'] },
    { half: 'B', step: 'weighted-sum', edit: ['      for (let c = 0; c < d; c++) {\n        let acc = 0;\n', '      let acc = 0;\n      for (let c = 0; c < d; c++) {\n'] },
  ],
  '05': [
    { half: 'A', step: 'cache', edit: ['    cache.keys.push(K[t]);\n    cache.values.push(V[t]);\n', '    cache.keys = [K[t]];\n    cache.values = [V[t]];\n'] },
    { half: 'B', step: 'slice', edit: ['const cut = columns(h * d)(d);', 'const cut = columns(h)(d);'] },
    { half: 'A', step: 'scale', edit: ['scaleBy(1 / Math.sqrt(d))', 'scaleBy(1 / d)'] },
    { half: 'B', step: 'softmax', edit: ['const total = exps.reduce((a, b) => a + b, 0);', 'const total = xs.reduce((a, b) => a + b, 0);'] },
    { half: 'A', step: 'weighted-sum', edit: ['return blend(cache.values.map(cut))(weights);', 'return blend(cache.keys.map(cut))(weights);'] },
    { half: 'B', step: 'cache', edit: ['return heads.flatMap((head) => head(cache)(query));', 'return heads.flatMap((head) => head({ keys: K, values: V })(query));'] },
    { half: 'A', step: 'concat', edit: ['return heads.flatMap((head) => head(cache)(query));', 'return heads.map((head) => head(cache)(query));'] },
    { half: 'B', step: 'scores', edit: ['const logits = cache.keys.map(cut).map(dotWith(q));', 'const logits = cache.values.map(cut).map(dotWith(q));'] },
    { half: 'A', step: 'softmax', edit: ['return exps.map((e) => e / total);', 'return exps;'] },
    { half: 'B', step: 'slice', edit: ['(row) => row.slice(start, start + width);', '(row) => row.slice(start, width);'] },
    { half: 'A', step: 'cache', edit: ['cache.values.push(V[t]);', 'cache.values.push(K[t]);'] },
    { half: 'B', step: 'cache', edit: ['  return Q.map((query, t) => {\n', '  return Q.map((query, t) => {\n    const cache = { keys: [], values: [] };\n'] },
  ],
  '06': [
    { half: 'A', step: 'kv-head', edit: ['const kv = Math.floor(h / group);', 'const kv = h % numberOfKVHeads;'] },
    { half: 'B', step: 'slice', edit: ['const scores = scoresOf(q, h * d, kv * d);', 'const scores = scoresOf(q, kv * d, kv * d);'] },
    { half: 'A', step: 'scale', edit: ['dot(q, qFrom, K[j], kFrom) / Math.sqrt(d)', 'dot(q, qFrom, K[j], kFrom) / Math.sqrt(numberOfHeads * d)'] },
    { half: 'B', step: 'scores', edit: ['j === K.length ? [] :', 'j === K.length - 1 ? [] :'] },
    { half: 'A', step: 'softmax', edit: ['const exps = scores.map((s) => Math.exp(s - top));', 'const exps = scores.map((s) => Math.exp(s));'] },
    { half: 'B', step: 'weighted-sum', edit: ['weights[j] * V[j][vFrom + c]', 'weights[j] * V[j][vFrom]'] },
    { half: 'A', step: 'kv-head', edit: ['return columnsOf(exps.map((e) => e / total), kv * d);', 'return columnsOf(exps.map((e) => e / total), h * d);'] },
    { half: 'B', step: 'concat', edit: ['[...headRow(h, q), ...rowOf(q, h + 1)]', '[...rowOf(q, h + 1), ...headRow(h, q)]'] },
    { half: 'A', step: 'kv-head', edit: ['const group = numberOfHeads / numberOfKVHeads;', 'const group = numberOfKVHeads;'] },
    { half: 'B', step: 'softmax', edit: ['const total = sumOf(exps);', 'const total = sumOf(scores);'] },
    { half: 'A', step: 'weighted-sum', edit: ['j === V.length ? 0 :', 'j === V.length - 1 ? 0 :'] },
    { half: 'B', step: 'scores', edit: ['c === d ? 0 :', 'c === d - 1 ? 0 :'] },
  ],
  '07': [
    { half: 'A', step: 'frequency', edit: ['this.base ** ((-2 * i) / this.width)', 'this.base ** (-i / this.width)'] },
    { half: 'B', step: 'position', edit: ['this.turnRow(row, this.offset + r)', 'this.turnRow(row, r)'] },
    { half: 'A', step: 'pairs', edit: ['const x2 = row[start + i + this.half];', 'const x2 = row[start + i + 1];'] },
    { half: 'B', step: 'rotation', edit: ['out[start + i] = x1 * Math.cos(theta) - x2 * Math.sin(theta);', 'out[start + i] = x1 * Math.cos(theta) + x2 * Math.sin(theta);'] },
    { half: 'A', step: 'rotation', edit: ['out[start + i + this.half] = x1 * Math.sin(theta) + x2 * Math.cos(theta);', 'out[start + i + this.half] = x2 * Math.sin(theta) + x1 * Math.cos(theta);'] },
    { half: 'B', step: 'frequency', edit: ['this.base ** ((-2 * i) / this.width)', 'this.base ** ((-2 * i) / (this.heads * this.width))'] },
    { half: 'A', step: 'pairs', edit: ['const start = h * this.width;', 'const start = h * this.half;'] },
    { half: 'B', step: 'position', edit: ['return position * this.frequencies[i];', 'return (position + this.offset) * this.frequencies[i];'] },
    { half: 'A', step: 'pairs', edit: ['const x1 = row[start + i];\n        const x2 = row[start + i + this.half];', 'const x1 = row[start + 2 * i];\n        const x2 = row[start + 2 * i + 1];'] },
    { half: 'B', step: 'rotation', edit: ['out[start + i] = x1 * Math.cos(theta) - x2 * Math.sin(theta);', 'out[start + i] = x1 * Math.sin(theta) - x2 * Math.cos(theta);'] },
    { half: 'A', step: 'frequency', edit: ['this.base ** ((-2 * i) / this.width)', 'this.base ** ((2 * i) / this.width)'] },
    { half: 'B', step: 'rotation', edit: ['out[start + i + this.half] = x1 * Math.sin(theta)', 'out[start + i + this.half] = out[start + i] * Math.sin(theta)'] },
  ],
  '08': [
    { half: 'A', step: 'mask', edit: ['const first = Math.max(0, p - this.w + 1);', 'const first = Math.max(0, p - this.w);'] },
    { half: 'B', step: 'scale', edit: ['return 1 / Math.sqrt(this.Q[0].length);', 'return 1 / this.Q[0].length;'] },
    { half: 'A', step: 'mask', edit: ['return [first, p];', 'return [first, p - 1];'] },
    { half: 'B', step: 'scores', edit: ['const k = this.K[j];', 'const k = this.K[p];'] },
    { half: 'A', step: 'softmax', edit: ['const sum = exps.reduce((a, b) => a + b, 0);', 'const sum = logits.reduce((a, b) => a + b, 0);'] },
    { half: 'B', step: 'weighted-sum', edit: ['const value = this.V[first + n];', 'const value = this.V[n];'] },
    { half: 'A', step: 'mask', edit: ['const [first, last] = this.band(p);', 'const [first, last] = [0, p];'] },
    { half: 'B', step: 'mask', edit: ['return [first, p];', 'return [first, Math.min(p + this.w - 1, this.Q.length - 1)];'] },
    { half: 'A', step: 'softmax', edit: ['const weight = exps[n] / sum;', 'const weight = exps[n];'] },
    { half: 'B', step: 'scale', edit: ['out.push(s * this.scale);', 'out.push(s);'] },
    { half: 'A', step: 'weighted-sum', edit: ['row[c] += weight * value[c];', 'row[c] = weight * value[c];'] },
    { half: 'B', step: 'scores', edit: ['const q = this.Q[p];', 'const q = this.Q[first];'] },
  ],
  '09': [
    { half: 'A', step: 'mask', edit: ['const seen = (i, j) => !causal || j <= i;', 'const seen = (i, j) => !causal || j < i;'] },
    { half: 'B', step: 'slice', edit: ['* K[j][h * d + c];', '* K[j][c];'] },
    { half: 'A', step: 'scale', edit: ['return s / Math.sqrt(d);', 'return s / Math.sqrt(C);'] },
    { half: 'B', step: 'mask', edit: ['for (let j = 0; j < T; j++) if (seen(i, j)) total +=', 'for (let j = 0; j < T; j++) total +='] },
    { half: 'A', step: 'weighted-sum', edit: ['acc += weight(h, i, j) * V[j][h * d + c];', 'acc += weight(h, j, i) * V[j][h * d + c];'] },
    { half: 'B', step: 'concat', edit: ['headOut(Math.floor(col / d), i, col % d)', 'headOut(col % numberOfHeads, i, Math.floor(col / numberOfHeads))'] },
    { half: 'A', step: 'w-o', edit: ['y += joined(i, r) * W_O[r][col];', 'y += joined(i, r) * W_O[col][r];'] },
    { half: 'B', step: 'softmax', edit: ['(seen(i, j) ? Math.exp(score(h, i, j) - rowMax(h, i)) / rowSum(h, i) : 0)', '(seen(i, j) ? Math.exp(score(h, i, j)) / rowSum(h, i) : 0)'] },
    { half: 'A', step: 'mask', edit: ['const weight = (h, i, j) => (seen(i, j) ? Math.exp(score(h, i, j) - rowMax(h, i)) / rowSum(h, i) : 0);', 'const weight = (h, i, j) => Math.exp(score(h, i, j) - rowMax(h, i)) / rowSum(h, i);'] },
    { half: 'B', step: 'scores', edit: ['s += Q[i][h * d + c] * K[j][h * d + c];', 's += Q[i][h * d + c] * K[i][h * d + c];'] },
    { half: 'A', step: 'w-o', edit: ['if (!W_O) return joined(i, col);', 'return joined(i, col);'] },
    { half: 'B', step: 'softmax', edit: ['let total = 0;', 'let total = 1;'] },
  ],
};

/** Every slip as { number, index, half, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
