// An eighteenth held-out batch for the first wrong line (issue 28), written blind (without reading the
// diagnosis, its tests or any measurement) and before the diagnosis was run on any slip of it, other than
// to check that every base passes all of its challenge's tests and every slip fails at least one: a right
// answer per challenge 01–09 in a style none of the corpus, fresh/ … fresh17/ has for that challenge
// (every matrix held column-major, as an array of columns, the softmax a log-sum-exp taken along the
// rows of the column-stored scores; an expression tree of tagged objects { kind: 'matrix' | 'columns' |
// 'transpose' | 'product' | 'scale' | 'softmax' | 'concat', … } built per head and one evaluate() that
// dispatches on the kind with a switch; scores and weights in Maps keyed by "i,j" strings, a masked cell
// never stored and a labelled break ending a row's keys; one pipe(...) of small pure stages, each
// returning the state object with one more field (Q, K, V, offsets, scores, scaled, weights, outs,
// joined) and the last the output projection; do…while loops with 1-based positions for the token, the
// head, the column and the cached key, converted to 0-based indices only where an array is read; a tiny
// Tensor class over a flat array with shape and strides, reshape() splitting the heads out of the
// columns and permute(1, 0, 2) bringing the head axis first; a visitor, forEachPair(heads, width, visit)
// calling back with each rotate-half pair's two columns and its index, the callback destructuring and
// turning them; a cell visitor, forEachCell(rows, cols, visit) driving every loop, the band test
// skipping the cells outside the window; one fold, Q.reduce carrying an accumulator object
// { joined, out } and a log-sum-exp softmax per head), and one- or two-line slips of it as a learner
// would make them: 107 in all (11 for 01, 12 for each of 02–09), 75 of them more than a one-token
// change (56 of those change three tokens or more or more than one line: a term, a call or a line left
// out, a statement added, a step done in the wrong order, a wrong index, variable or axis, an off-by-one
// in a bound or a 1-based conversion, two things swapped). Each slip: the step at fault, the edit
// [from, to], and the half (A or B, alternating within a challenge, fixed before any run: rules may
// be fitted on half A's misses only, half B measures whether they generalise); the line at fault is the
// line of `from` in fresh18/NN.js.
import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { half: 'A', step: 'scores', edit: ['s += q[c][i] * k[c][j];', 's += q[i][c] * k[j][c];'] },
    { half: 'B', step: 'scale', edit: ['const scale = 1 / Math.sqrt(dk);', 'const scale = 1 / dk;'] },
    { half: 'A', step: 'softmax', edit: ['for (const col of cols) total += Math.exp(col[i] - top);', 'for (const col of cols) total += Math.exp(col[i]);'] },
    { half: 'B', step: 'weighted-sum', edit: ['acc += weightCols[j][i] * col[j];', 'acc += weightCols[i][j] * col[j];'] },
    { half: 'A', step: 'scale', edit: ['return s * scale;', 'return s;'] },
    { half: 'B', step: 'softmax', edit: ['return top + Math.log(total);', 'return Math.log(total);'] },
    { half: 'A', step: 'weighted-sum', edit: ['const outCols = v.map((col) =>', 'const outCols = k.map((col) =>'] },
    { half: 'B', step: 'scores', edit: ['for (let c = 0; c < dk; c++) s +=', 'for (let c = 0; c < dk - 1; c++) s +='] },
    { half: 'A', step: 'softmax', edit: ['return cols.map((col) => col.map((x, i) => Math.exp(x - lse[i])));', 'return cols.map((col, j) => col.map((x) => Math.exp(x - lse[j])));'] },
    { half: 'B', step: 'weighted-sum', edit: ['return toRows(outCols);', 'return outCols;'] },
    { half: 'A', step: 'scores', edit: ['const k = toColumns(K);', 'const k = K;'] },
  ],
  '02': [
    { half: 'A', step: 'slice', edit: ["from: h * headDimensions, to: (h + 1) * headDimensions };", "from: h, to: h + headDimensions };"] },
    { half: 'B', step: 'scores', edit: ["right: { kind: 'transpose', of: k } };", "right: { kind: 'transpose', of: q } };"] },
    { half: 'A', step: 'scale', edit: ["by: 1 / Math.sqrt(headDimensions)", "by: 1 / headDimensions"] },
    { half: 'B', step: 'softmax', edit: ['const total = exps.reduce((a, b) => a + b, 0);', 'const total = row.reduce((a, b) => a + b, 0);'] },
    { half: 'A', step: 'weighted-sum', edit: ["return { kind: 'product', left: weights, right: v };", "return { kind: 'product', left: weights, right: { kind: 'transpose', of: v } };"] },
    { half: 'B', step: 'concat', edit: ['return parts[0].map((_, t) => parts.flatMap((part) => part[t]));', 'return parts.flat();'] },
    { half: 'A', step: 'w-o', edit: ["const tree = W_O ? { kind: 'product', left: joined, right: leaf(W_O) } : joined;", 'const tree = joined;'] },
    { half: 'B', step: 'softmax', edit: ['const exps = row.map((x) => Math.exp(x - top));', 'const exps = row.map((x) => Math.exp(x));'] },
    { half: 'A', step: 'scale', edit: ["    const scaled = { kind: 'scale', by: 1 / Math.sqrt(headDimensions), of: scores };\n    const weights = { kind: 'softmax', of: scaled };\n    return { kind: 'product', left: weights, right: v };\n", "    const weights = { kind: 'softmax', of: scores };\n    const scaled = { kind: 'scale', by: 1 / Math.sqrt(headDimensions), of: weights };\n    return { kind: 'product', left: scaled, right: v };\n"] },
    { half: 'B', step: 'slice', edit: ['const v = { ...cols, of: leaf(V) };', 'const v = leaf(V);'] },
    { half: 'A', step: 'w-o', edit: ["{ kind: 'product', left: joined, right: leaf(W_O) }", "{ kind: 'product', left: leaf(W_O), right: joined }"] },
    { half: 'B', step: 'concat', edit: ['const parts = node.parts.map(evaluate);', 'const parts = node.parts.map(evaluate).reverse();'] },
  ],
  '03': [
    { half: 'A', step: 'mask', edit: ['if (causal && j > i) break keys;', 'if (causal && j >= i) break keys;'] },
    { half: 'B', step: 'scale', edit: ['const scale = 1 / Math.sqrt(dk);', 'const scale = 1 / Math.sqrt(T);'] },
    { half: 'A', step: 'scores', edit: ['dot += Q[i][c] * K[j][c];', 'dot += Q[i][c] * K[c][j];'] },
    { half: 'B', step: 'softmax', edit: ['const e = Math.exp(score.get(cell(i, j)) - top);', 'const e = Math.exp(score.get(cell(i, j)));'] },
    { half: 'A', step: 'weighted-sum', edit: ['out[i][c] += w * V[j][c];', 'out[j][c] += w * V[i][c];'] },
    { half: 'B', step: 'mask', edit: ['if (causal && j > i) break keys;', 'if (j > i) break keys;'] },
    { half: 'A', step: 'softmax', edit: ['    for (const j of seen) weight.set(cell(i, j), weight.get(cell(i, j)) / total);\n', ''] },
    { half: 'B', step: 'scores', edit: ['score.set(cell(i, j), dot * scale);', 'score.set(cell(j, i), dot * scale);'] },
    { half: 'A', step: 'weighted-sum', edit: ["const [i, j] = at.split(',').map(Number);", "const [j, i] = at.split(',').map(Number);"] },
    { half: 'B', step: 'scale', edit: ['score.set(cell(i, j), dot * scale);', 'score.set(cell(i, j), dot);'] },
    { half: 'A', step: 'mask', edit: ['if (causal && j > i) break keys;', 'if (causal && j > i + 1) break keys;'] },
    { half: 'B', step: 'softmax', edit: ['let total = 0;', 'let total = 1;'] },
  ],
  '04': [
    { half: 'A', step: 'project-Q', edit: ['(s) => ({ ...s, Q: matMul(s.X, W_Q) }),', '(s) => ({ ...s, Q: s.X }),'] },
    { half: 'B', step: 'project-K', edit: ['(s) => ({ ...s, K: matMul(s.X, W_K) }),', '(s) => ({ ...s, K: matMul(s.X, W_Q) }),'] },
    { half: 'A', step: 'project-V', edit: ['(s) => ({ ...s, V: matMul(s.X, W_V) }),', '(s) => ({ ...s, V: matMul(W_V, s.X) }),'] },
    { half: 'B', step: 'slice', edit: ['Array.from({ length: numberOfHeads }, (_, h) => h * d)', 'Array.from({ length: numberOfHeads }, (_, h) => h)'] },
    { half: 'A', step: 'scores', edit: ['matMul(cut(s.Q, o, d), transpose(cut(s.K, o, d)))', 'matMul(cut(s.Q, o, d), cut(s.K, o, d))'] },
    { half: 'B', step: 'scale', edit: ['row.map((x) => x / Math.sqrt(d))', 'row.map((x) => x / Math.sqrt(C))'] },
    { half: 'A', step: 'softmax', edit: ['const total = exps.reduce((a, b) => a + b, 0);', 'const total = row.reduce((a, b) => a + b, 0);'] },
    { half: 'B', step: 'weighted-sum', edit: ['matMul(W, cut(s.V, s.offsets[h], d))', 'matMul(cut(s.V, s.offsets[h], d), W)'] },
    { half: 'A', step: 'concat', edit: ['(s) => ({ ...s, joined: s.X.map((_, t) => s.outs.flatMap((O) => O[t])) }),', '(s) => ({ ...s, joined: s.outs.flat() }),'] },
    { half: 'B', step: 'w-o', edit: ['(s) => matMul(s.joined, W_O),', '(s) => s.joined,'] },
    { half: 'A', step: 'slice', edit: ['row.slice(from, from + width)', 'row.slice(from, width)'] },
    { half: 'B', step: 'scale', edit: ['(s) => ({ ...s, weights: s.scaled.map((S) => S.map(softmax)) }),', '(s) => ({ ...s, weights: s.scores.map((S) => S.map(softmax)) }),'] },
  ],
  '05': [
    { half: 'A', step: 'cache', edit: ['keys.push(K[t - 1]);', 'keys.push(K[t]);'] },
    { half: 'B', step: 'slice', edit: ['const from = (h - 1) * d;', 'const from = h * d;'] },
    { half: 'A', step: 'scale', edit: ['return s / Math.sqrt(d);', 'return s / Math.sqrt(C);'] },
    { half: 'B', step: 'softmax', edit: ['const total = exps.reduce((a, b) => a + b, 0);', 'const total = scores.reduce((a, b) => a + b, 0);'] },
    { half: 'A', step: 'weighted-sum', edit: ['* values[n - 1][from + c - 1];', '* keys[n - 1][from + c - 1];'] },
    { half: 'B', step: 'cache', edit: ['values.push(V[t - 1]);', 'values.push(K[t - 1]);'] },
    { half: 'A', step: 'concat', edit: ['row.push(acc);', 'row.unshift(acc);'] },
    { half: 'B', step: 'scores', edit: ['s += query[from + c - 1] * key[from + c - 1];', 's += query[from + c - 1] * key[from + c];'] },
    { half: 'A', step: 'softmax', edit: ['acc += (exps[n - 1] / total) * values', 'acc += exps[n - 1] * values'] },
    { half: 'B', step: 'cache', edit: ['    keys.push(K[t - 1]);\n    values.push(V[t - 1]);\n', '    keys.length = 0;\n    values.length = 0;\n    keys.push(K[t - 1]);\n    values.push(V[t - 1]);\n'] },
    { half: 'A', step: 'slice', edit: ['s += query[from + c - 1] * key[from + c - 1];', 's += query[c - 1] * key[c - 1];'] },
    { half: 'B', step: 'weighted-sum', edit: ['for (let n = 1; n <= values.length; n++)', 'for (let n = 0; n < values.length; n++)'] },
  ],
  '06': [
    { half: 'A', step: 'kv-head', edit: ['const g = Math.floor(h / group);', 'const g = h % numberOfKVHeads;'] },
    { half: 'B', step: 'slice', edit: ['const k = Tensor.fromRows(K).reshape([Tk, numberOfKVHeads, d]).permute(1, 0, 2);', 'const k = Tensor.fromRows(K).reshape([Tk, d, numberOfKVHeads]).permute(2, 0, 1);'] },
    { half: 'A', step: 'scale', edit: ['scores.push(s / Math.sqrt(d));', 'scores.push(s / Math.sqrt(C));'] },
    { half: 'B', step: 'scores', edit: ['s += q.at(h, i, c) * k.at(g, j, c);', 's += q.at(h, i, c) * k.at(j, g, c);'] },
    { half: 'A', step: 'softmax', edit: ['const total = exps.reduce((a, b) => a + b, 0);', 'const total = scores.reduce((a, b) => a + b, 0);'] },
    { half: 'B', step: 'weighted-sum', edit: ['v.at(g, j, c)', 'v.at(g, c, j)'] },
    { half: 'A', step: 'kv-head', edit: ['const group = numberOfHeads / numberOfKVHeads;', 'const group = numberOfKVHeads;'] },
    { half: 'B', step: 'concat', edit: ['const out = new Tensor(new Array(Tq * C).fill(0), [Tq, numberOfHeads, d]);', 'const out = new Tensor(new Array(Tq * C).fill(0), [numberOfHeads, Tq, d]);'] },
    { half: 'A', step: 'kv-head', edit: ['v.at(g, j, c)', 'v.at(h, j, c)'] },
    { half: 'B', step: 'softmax', edit: ['acc += (exps[j] / total)', 'acc += exps[j]'] },
    { half: 'A', step: 'slice', edit: ['const q = Tensor.fromRows(Q).reshape([Tq, numberOfHeads, d]).permute(1, 0, 2);', 'const q = Tensor.fromRows(Q).reshape([numberOfHeads, Tq, d]);'] },
    { half: 'B', step: 'scores', edit: ['for (let c = 0; c < d; c++) s += q.at(h, i, c)', 'for (let c = 1; c < d; c++) s += q.at(h, i, c)'] },
  ],
  '07': [
    { half: 'A', step: 'frequency', edit: ['base ** (-(2 * i) / headDimensions)', 'base ** (-i / headDimensions)'] },
    { half: 'B', step: 'position', edit: ['const position = offset + r;', 'const position = r;'] },
    { half: 'A', step: 'pairs', edit: ['visit(start + i, start + i + half, i);', 'visit(start + 2 * i, start + 2 * i + 1, i);'] },
    { half: 'B', step: 'rotation', edit: ['out[lo] = x * cos - y * sin;', 'out[lo] = x * cos + y * sin;'] },
    { half: 'A', step: 'rotation', edit: ['out[hi] = x * sin + y * cos;', 'out[hi] = out[lo] * sin + y * cos;'] },
    { half: 'B', step: 'frequency', edit: ['base ** (-(2 * i) / headDimensions)', 'base ** (-(2 * i) / C)'] },
    { half: 'A', step: 'pairs', edit: ['const start = h * width;', 'const start = h * half;'] },
    { half: 'B', step: 'position', edit: ['const theta = position * inverse[i];', 'const theta = (position + offset) * inverse[i];'] },
    { half: 'A', step: 'rotation', edit: ['const [cos, sin] = [Math.cos(theta), Math.sin(theta)];', 'const [sin, cos] = [Math.cos(theta), Math.sin(theta)];'] },
    { half: 'B', step: 'pairs', edit: ['  const half = width / 2;\n  for (let h = 0; h < heads; h++) {', '  const half = width;\n  for (let h = 0; h < heads; h++) {'] },
    { half: 'A', step: 'frequency', edit: ['base ** (-(2 * i) / headDimensions)', 'base ** (-2 * (i + 1) / headDimensions)'] },
    { half: 'B', step: 'rotation', edit: ['out[hi] = x * sin + y * cos;', 'out[hi] = y * cos - x * sin;'] },
  ],
  '08': [
    { half: 'A', step: 'mask', edit: ['const inBand = (i, j) => j <= i && j > i - w;', 'const inBand = (i, j) => j <= i && j >= i - w;'] },
    { half: 'B', step: 'scale', edit: ['scores[i][j] = s / Math.sqrt(d);', 'scores[i][j] = s / d;'] },
    { half: 'A', step: 'mask', edit: ['    if (!inBand(i, j)) return;\n', ''] },
    { half: 'B', step: 'scores', edit: ['s += Q[i][c] * K[j][c];', 's += Q[j][c] * K[i][c];'] },
    { half: 'A', step: 'softmax', edit: ['const totals = exps.map((row) => row.reduce((a, b) => a + b, 0));', 'const totals = scores.map((row) => row.reduce((a, b) => a + b, 0));'] },
    { half: 'B', step: 'weighted-sum', edit: ['out[i][c] += p * V[j][c];', 'out[j][c] += p * V[i][c];'] },
    { half: 'A', step: 'mask', edit: ['const w = window ?? T;', 'const w = window ?? 1;'] },
    { half: 'B', step: 'mask', edit: ['const inBand = (i, j) => j <= i && j > i - w;', 'const inBand = (i, j) => j > i - w;'] },
    { half: 'A', step: 'softmax', edit: ['const p = exps[i][j] / totals[i];', 'const p = exps[i][j] / totals[j];'] },
    { half: 'B', step: 'weighted-sum', edit: ['forEachCell(1, d, (_, c) => {', 'forEachCell(1, d - 1, (_, c) => {'] },
    { half: 'A', step: 'scores', edit: ['scores[i][j] = s / Math.sqrt(d);', 'scores[j][i] = s / Math.sqrt(d);'] },
    { half: 'B', step: 'scale', edit: ['scores[i][j] = s / Math.sqrt(d);', 'scores[i][j] = s / Math.sqrt(T);'] },
  ],
  '09': [
    { half: 'A', step: 'mask', edit: ['const visible = causal ? K.slice(0, i + 1) : K;', 'const visible = causal ? K.slice(0, i) : K;'] },
    { half: 'B', step: 'slice', edit: ['const qh = q.slice(from, from + d);', 'const qh = q.slice(from, d);'] },
    { half: 'A', step: 'scale', edit: ['s + x * k[from + c], 0) / Math.sqrt(d)', 's + x * k[from + c], 0) / Math.sqrt(C)'] },
    { half: 'B', step: 'softmax', edit: ['const lse = top + Math.log(', 'const lse = Math.log('] },
    { half: 'A', step: 'weighted-sum', edit: ['s + w * V[j][from + c]', 's + w * K[j][from + c]'] },
    { half: 'B', step: 'concat', edit: ['row.push(weights.reduce(', 'row.unshift(weights.reduce('] },
    { half: 'A', step: 'w-o', edit: ['s + x * W_O[r][o]', 's + x * W_O[o][r]'] },
    { half: 'B', step: 'mask', edit: ['const visible = causal ? K.slice(0, i + 1) : K;', 'const visible = K.slice(0, i + 1);'] },
    { half: 'A', step: 'scores', edit: ['s + x * k[from + c]', 's + x * q[from + c]'] },
    { half: 'B', step: 'w-o', edit: ['acc.out.push(W_O ? W_O[0].map((_, o) => row.reduce((s, x, r) => s + x * W_O[r][o], 0)) : row);', 'acc.out.push(row);'] },
    { half: 'A', step: 'softmax', edit: ['const weights = logits.map((x) => Math.exp(x - lse));', 'const weights = logits.map((x) => Math.exp(x - top));'] },
    { half: 'B', step: 'slice', edit: ['const from = h * d;', 'const from = h;'] },
  ],
};

/** Every slip as { number, index, half, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
