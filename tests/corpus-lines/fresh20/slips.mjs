// A twentieth held-out batch for the first wrong line (issue 28), written blind (without reading the
// diagnosis, its tests or any measurement) and before the diagnosis was run on any slip of it, other than
// to check that every base passes all of its challenge's tests and every slip fails at least one: a right
// answer per challenge 01–09 in a style none of the corpus, fresh/ … fresh19/ has for that challenge
// (curried helpers, every one taking one argument and returning a function of the next, a query row
// attended by attend(keys)(values)(scale)(q) with one step per line inside; transposed first, each
// head's keys kept as columns Kt[c][j] so that a score is a query row against a column, the softmax a
// log-sum-exp exp(x − lse) and W_O read through its columns; flatMap everywhere, the scores one flat
// list of T·T numbers over queries and keys, scaled and masked by flatMap over that list with cell n
// the query ⌊n / T⌋ and the key n % T, cut back into rows for the softmax; every matrix a Map from the
// string "i,j" to its number, the projections and W_O by one product() of such maps, each head's scores
// a Map of its own and the heads written into one joined Map at their columns; the KV cache transposed
// into a struct of arrays, one growing array per feature column keyCols[c][t] and valueCols[c][t], each
// token pushing onto every column before its query reads the cache; an object per head, kv[g] = { k, v }
// and heads[h] = { q, k, v } with the group's k and v shared by reference, each head object given its
// out and the outs joined in key order; a RoPE plan made once as a struct of arrays, firstCol[n],
// secondCol[n] and invFreq[n] for every rotate-half pair of every head, each row copied and turned by
// walking n; recursion instead of loops for the rows, a row's logits and mask, the dot product, the
// maximum, the exponentials, the total, the normalising and the blend; a tiny interpreter, the layer and
// each head programs of op names run by a reducer over one state object, OPS mapping each name to a
// function from state to state), and one- or two-line slips of it as a learner would make them: 108 in
// all (12 for each of 01–09, 54 in each half), 74 of them more than a one-token change (a term, a call or
// a line left out, a statement moved, a wrong index, variable, axis or head offset, an off-by-one in a
// bound or a window, two things swapped, a wrong query/key-value head mapping, the wrong partner of a
// pair, the cache appended after the query reads it, the mask run after the softmax). Each slip: the step
// at fault, the edit [from, to], and the half (A or B, alternating within a challenge, fixed before any
// run: rules may be fitted on half A's misses only, half B measures whether they generalise); the line at
// fault is the line of `from` in fresh20/NN.js.

import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { half: 'A', step: 'scores', edit: ['const scoresOf = (keys) => (q) => keys.map((k) => dot(q)(k));', 'const scoresOf = (keys) => (q) => keys[0].map((_, c) => dot(q)(keys.map((k) => k[c])));'] },
    { half: 'B', step: 'scale', edit: ['const attendQuery = attend(K)(V)(1 / Math.sqrt(dk));', 'const attendQuery = attend(K)(V)(Math.sqrt(dk));'] },
    { half: 'A', step: 'softmax', edit: ['const exps = row.map((x) => Math.exp(x - top));', 'const exps = row.map((x) => Math.exp(x));'] },
    { half: 'B', step: 'weighted-sum', edit: ['weights.reduce((sum, w, j) => sum + w * values[j][c], 0)', 'weights.reduce((sum, w, j) => sum + w * values[c][j], 0)'] },
    { half: 'A', step: 'scale', edit: ['const scaled = scaleBy(scale)(scores);', 'const scaled = scores;'] },
    { half: 'B', step: 'softmax', edit: ['return exps.map((e) => e / total);', 'return exps;'] },
    { half: 'A', step: 'weighted-sum', edit: ['return blend(values)(weights);', 'return blend(keys)(weights);'] },
    { half: 'B', step: 'scores', edit: ['const scores = scoresOf(keys)(q);', 'const scores = scoresOf(values)(q);'] },
    { half: 'A', step: 'softmax', edit: ['const total = exps.reduce((a, b) => a + b, 0);', 'const total = row.reduce((a, b) => a + Math.exp(b), 0);'] },
    { half: 'B', step: 'weighted-sum', edit: ['values[0].map((_, c) =>', 'weights.map((_, c) =>'] },
    { half: 'A', step: 'scale', edit: ['const scaleBy = (factor) => (row) => row.map((x) => x * factor);', 'const scaleBy = (factor) => (row) => row.map((x) => x / factor);'] },
    { half: 'B', step: 'scores', edit: ['const dot = (a) => (b) => a.reduce((sum, x, i) => sum + x * b[i], 0);', 'const dot = (a) => (b) => a.reduce((sum, x, i) => sum + x * b[i]);'] },
  ],
  '02': [
    { half: 'A', step: 'slice', edit: ['const part = q.slice(from, to);', 'const part = q.slice(0, d);'] },
    { half: 'B', step: 'scores', edit: ['part.reduce((s, x, c) => s + x * Kt[c][j], 0)', 'part.reduce((s, x, c) => s + x * Kt[j][c], 0)'] },
    { half: 'A', step: 'scale', edit: ['const scaled = scores.map((s) => s / Math.sqrt(d));', 'const scaled = scores.map((s) => s / Math.sqrt(Q[0].length));'] },
    { half: 'B', step: 'softmax', edit: ['return top + Math.log(row.reduce((sum, x) => sum + Math.exp(x - top), 0));', 'return Math.log(row.reduce((sum, x) => sum + Math.exp(x - top), 0));'] },
    { half: 'A', step: 'softmax', edit: ['const weights = scaled.map((s) => Math.exp(s - lse));', 'const weights = scaled.map((s) => Math.exp(s) - lse);'] },
    { half: 'B', step: 'weighted-sum', edit: ['row.push(weights.reduce((s, w, j) => s + w * V[j][c], 0));', 'row.push(weights.reduce((s, w, j) => s + w * K[j][c], 0));'] },
    { half: 'A', step: 'concat', edit: ['const joined = Q.map((_, t) => heads.flatMap((out) => out[t]));', 'const joined = heads.flat();'] },
    { half: 'B', step: 'w-o', edit: ['const Wt = W_O ? columnsOf(W_O, 0, C) : null;', 'const Wt = W_O ? W_O : null;'] },
    { half: 'A', step: 'slice', edit: ['heads.push(head(Q, K, V, h * headDimensions, (h + 1) * headDimensions));', 'heads.push(head(Q, K, V, h, h + headDimensions));'] },
    { half: 'B', step: 'scale', edit: ['const d = to - from;', 'const d = to;'] },
    { half: 'A', step: 'scores', edit: ['const Kt = columnsOf(K, from, to);', 'const Kt = columnsOf(Q, from, to);'] },
    { half: 'B', step: 'w-o', edit: ['if (!Wt) return joined;', 'return joined;'] },
  ],
  '03': [
    { half: 'A', step: 'scores', edit: ['[q.reduce((s, x, c) => s + x * k[c], 0)]', '[q.reduce((s, x, c) => s + x * q[c], 0)]'] },
    { half: 'B', step: 'scale', edit: ['const scale = 1 / Math.sqrt(Q[0].length);', 'const scale = 1 / Math.sqrt(T);'] },
    { half: 'A', step: 'mask', edit: ['causal && n % T > Math.floor(n / T)', 'causal && n % T >= Math.floor(n / T)'] },
    { half: 'B', step: 'mask', edit: ['causal && n % T > Math.floor(n / T)', 'causal && Math.floor(n / T) > n % T'] },
    { half: 'A', step: 'softmax', edit: ['const exps = row.flatMap((x) => [Math.exp(x - top)]);', 'const exps = row.flatMap((x) => [Math.exp(x)]);'] },
    { half: 'B', step: 'weighted-sum', edit: ['[w.reduce((s, x, j) => s + x * V[j][c], 0)]', '[w.reduce((s, x, j) => s + x * V[c][j], 0)]'] },
    { half: 'A', step: 'softmax', edit: ['const weights = rowsOf(masked, T).flatMap(softmaxRow);', 'const weights = softmaxRow(masked);'] },
    { half: 'B', step: 'mask', edit: ['(causal && n % T > Math.floor(n / T) ?', '(n % T > Math.floor(n / T) ?'] },
    { half: 'A', step: 'scale', edit: ['const masked = scaled.flatMap(', 'const masked = scores.flatMap('] },
    { half: 'B', step: 'scores', edit: ['const scores = Q.flatMap((q) => K.flatMap((k) =>', 'const scores = Q.flatMap((q) => Q.flatMap((k) =>'] },
    { half: 'A', step: 'weighted-sum', edit: ['const blend = (w, V) => V[0].flatMap(', 'const blend = (w, V) => w.flatMap('] },
    { half: 'B', step: 'softmax', edit: ['const total = exps.reduce((a, b) => a + b, 0);', 'const total = row.reduce((a, b) => a + b, 0);'] },
  ],
  '04': [
    { half: 'A', step: 'project-Q', edit: ['const q = product(x, toMap(W_Q));', 'const q = product(toMap(W_Q), x);'] },
    { half: 'B', step: 'project-K', edit: ['const k = product(x, toMap(W_K));', 'const k = product(x, toMap(W_Q));'] },
    { half: 'A', step: 'project-V', edit: ['const v = product(x, toMap(W_V));', 'const v = x;'] },
    { half: 'B', step: 'slice', edit: ['const at = h * headDimensions;', 'const at = h;'] },
    { half: 'A', step: 'scores', edit: ['* k.m.get(`${j},${c}`);', '* k.m.get(`${c},${j}`);'] },
    { half: 'B', step: 'scale', edit: ['const scale = 1 / Math.sqrt(headDimensions);', 'const scale = 1 / Math.sqrt(C);'] },
    { half: 'A', step: 'softmax', edit: ['const exps = row.map((s) => Math.exp(s - top));', 'const exps = row.map((s) => Math.exp(s));'] },
    { half: 'B', step: 'weighted-sum', edit: ['for (let j = 0; j < T; j++) sum +=', 'for (let j = 0; j < T - 1; j++) sum +='] },
    { half: 'A', step: 'concat', edit: ['joined.set(`${i},${at + c}`, sum);', 'joined.set(`${i},${c}`, sum);'] },
    { half: 'B', step: 'w-o', edit: ['return toRows(product({ m: joined, rows: T, cols: C }, toMap(W_O)));', 'return toRows({ m: joined, rows: T, cols: C });'] },
    { half: 'A', step: 'softmax', edit: ['const row = Array.from({ length: T }, (_, j) => S.get(`${i},${j}`));', 'const row = Array.from({ length: T }, (_, j) => S.get(`${j},${i}`));'] },
    { half: 'B', step: 'scale', edit: ['S.set(`${i},${j}`, s * scale);', 'S.set(`${i},${j}`, s);'] },
  ],
  '05': [
    { half: 'A', step: 'cache', edit: ['append(cache, K[t], V[t]);\n    out.push(attendAll(Q[t], cache, numberOfHeads, headDimensions));', 'out.push(attendAll(Q[t], cache, numberOfHeads, headDimensions));\n    append(cache, K[t], V[t]);'] },
    { half: 'B', step: 'cache', edit: ['cache.valueCols[c].push(value[c]);', 'cache.valueCols[c].push(key[c]);'] },
    { half: 'A', step: 'slice', edit: ['const part = attendHead(query, cache, h * headDimensions, headDimensions);', 'const part = attendHead(query, cache, h, headDimensions);'] },
    { half: 'B', step: 'scores', edit: ['logits[j] += query[c] * cache.keyCols[c][j];', 'logits[j] += query[j] * cache.keyCols[c][j];'] },
    { half: 'A', step: 'scale', edit: ['const scaled = logits.map((s) => s / Math.sqrt(width));', 'const scaled = logits.map((s) => s / width);'] },
    { half: 'B', step: 'softmax', edit: ['const exps = scaled.map((s) => Math.exp(s - top));', 'const exps = scaled.map((s) => Math.exp(top - s));'] },
    { half: 'A', step: 'weighted-sum', edit: ['out.push(cache.valueCols[c].reduce((s, x, j) => s + weights[j] * x, 0));', 'out.push(cache.keyCols[c].reduce((s, x, j) => s + weights[j] * x, 0));'] },
    { half: 'B', step: 'concat', edit: ['row.push(...part);', 'row.unshift(...part);'] },
    { half: 'A', step: 'cache', edit: ['const n = cache.keyCols[0].length; // tokens cached so far', 'const n = cache.keyCols[0].length - 1; // tokens cached so far'] },
    { half: 'B', step: 'scale', edit: ['const scaled = logits.map((s) => s / Math.sqrt(width));', 'const scaled = logits.map((s) => s / Math.sqrt(query.length));'] },
    { half: 'A', step: 'softmax', edit: ['const weights = exps.map((e) => e / total);', 'const weights = exps;'] },
    { half: 'B', step: 'weighted-sum', edit: ['for (let c = first; c < first + width; c++) {\n    out.push(', 'for (let c = 0; c < width; c++) {\n    out.push('] },
  ],
  '06': [
    { half: 'A', step: 'kv-head', edit: ['const { k, v } = kv[Math.floor(h / group)];', 'const { k, v } = kv[h % numberOfKVHeads];'] },
    { half: 'B', step: 'kv-head', edit: ['const group = numberOfHeads / numberOfKVHeads;', 'const group = numberOfKVHeads;'] },
    { half: 'A', step: 'slice', edit: ['heads[h] = { q: columns(Q, h * headDimensions, headDimensions), k, v };', 'heads[h] = { q: columns(Q, h, headDimensions), k, v };'] },
    { half: 'B', step: 'slice', edit: ['v: columns(V, g * headDimensions, headDimensions),', 'v: columns(V, g, headDimensions),'] },
    { half: 'A', step: 'scores', edit: ['kj.reduce((s, x, c) => s + x * qi[c], 0)', 'kj.reduce((s, x, c) => s + x * kj[c], 0)'] },
    { half: 'B', step: 'scale', edit: ['for (const h in heads) heads[h].out = attend(heads[h], headDimensions);', 'for (const h in heads) heads[h].out = attend(heads[h], headDimensions * group);'] },
    { half: 'A', step: 'softmax', edit: ['const exps = scaled.map((s) => Math.exp(s - top));', 'const exps = scaled.map((s) => Math.exp(s) / Math.exp(top));'] },
    { half: 'B', step: 'weighted-sum', edit: ['s + (e / total) * v[j][c], 0)', 's + (e / total) * k[j][c], 0)'] },
    { half: 'A', step: 'concat', edit: ['return Q.map((_, t) => Object.keys(heads).flatMap((h) => heads[h].out[t]));', 'return Object.keys(heads).flatMap((h) => heads[h].out);'] },
    { half: 'B', step: 'kv-head', edit: ['const { k, v } = kv[Math.floor(h / group)];', 'const { k, v } = kv[Math.floor(h / numberOfKVHeads)];'] },
    { half: 'A', step: 'scores', edit: ['const scores = k.map((kj) =>', 'const scores = q.map((kj) =>'] },
    { half: 'B', step: 'softmax', edit: ['const total = exps.reduce((a, b) => a + b, 0);', 'const total = scaled.reduce((a, b) => a + b, 0);'] },
  ],
  '07': [
    { half: 'A', step: 'frequency', edit: ['invFreq.push(base ** (-2 * i / headDimensions));', 'invFreq.push(base ** (-i / headDimensions));'] },
    { half: 'B', step: 'pairs', edit: ['firstCol.push(h * headDimensions + i);', 'firstCol.push(h * headDimensions + 2 * i);'] },
    { half: 'A', step: 'position', edit: ['const position = offset + r;', 'const position = r;'] },
    { half: 'B', step: 'rotation', edit: ['out[plan.secondCol[n]] = a * sin + b * cos;', 'out[plan.secondCol[n]] = b * sin + a * cos;'] },
    { half: 'A', step: 'rotation', edit: ['out[plan.firstCol[n]] = a * cos - b * sin;', 'out[plan.firstCol[n]] = a * cos + b * sin;'] },
    { half: 'B', step: 'frequency', edit: ['invFreq.push(base ** (-2 * i / headDimensions));', 'invFreq.push(base ** (-2 * (h * half + i) / headDimensions));'] },
    { half: 'A', step: 'pairs', edit: ['const b = row[plan.secondCol[n]];', 'const b = row[plan.firstCol[n] + 1];'] },
    { half: 'B', step: 'position', edit: ['const position = offset + r;', 'const position = offset + r + 1;'] },
    { half: 'A', step: 'rotation', edit: ['out[plan.secondCol[n]] = a * sin + b * cos;', 'out[plan.secondCol[n]] = out[plan.firstCol[n]] * sin + b * cos;'] },
    { half: 'B', step: 'rotation', edit: ['const sin = Math.sin(angle);', 'const sin = Math.sin(-angle);'] },
    { half: 'A', step: 'pairs', edit: ['for (let i = 0; i < half; i++) {', 'for (let i = 0; i < headDimensions; i++) {'] },
    { half: 'B', step: 'frequency', edit: ['invFreq.push(base ** (-2 * i / headDimensions));', 'invFreq.push(base ** (-2 * i) / headDimensions);'] },
  ],
  '08': [
    { half: 'A', step: 'mask', edit: ['const visible = (p, j) => j <= p && j > p - w;', 'const visible = (p, j) => j <= p && j >= p - w;'] },
    { half: 'B', step: 'mask', edit: ['const visible = (p, j) => j <= p && j > p - w;', 'const visible = (p, j) => j < p && j > p - w;'] },
    { half: 'A', step: 'scale', edit: ['const scale = 1 / Math.sqrt(Q[0].length);', 'const scale = 1 / Q[0].length;'] },
    { half: 'B', step: 'scores', edit: ['const score = (p, j) => dot(Q[p], K[j]);', 'const score = (p, j) => dot(Q[p], K[p]);'] },
    { half: 'A', step: 'softmax', edit: ['const exps = expOf(row, top);', 'const exps = expOf(row, 0);'] },
    { half: 'B', step: 'mask', edit: ['const w = window ?? Infinity;', 'const w = window ?? Q.length - 1;'] },
    { half: 'A', step: 'mask', edit: ['visible(p, j) ? row[j] : -Infinity', 'visible(j, p) ? row[j] : -Infinity'] },
    { half: 'B', step: 'weighted-sum', edit: ['weights[j] * V[j][c] + blend(weights, c, j + 1)', 'weights[j] * K[j][c] + blend(weights, c, j + 1)'] },
    { half: 'A', step: 'softmax', edit: ['const total = sumOf(exps);', 'const total = sumOf(row);'] },
    { half: 'B', step: 'scale', edit: ['[score(p, j) * scale, ...logits(p, j + 1)]', '[score(p, j), ...logits(p, j + 1)]'] },
    { half: 'A', step: 'weighted-sum', edit: ['(c === V[0].length ? [] :', '(c === V[0].length - 1 ? [] :'] },
    { half: 'B', step: 'softmax', edit: ['const weights = divide(exps, total);', 'const weights = exps;'] },
  ],
  '09': [
    { half: 'A', step: 'slice', edit: ['k: cut(s.K, s.from, s.d),', 'k: cut(s.K, 0, s.d),'] },
    { half: 'B', step: 'mask', edit: ['(j > i ? -Infinity : y)', '(j > i + 1 ? -Infinity : y)'] },
    { half: 'A', step: 'scale', edit: ['row.map((y) => y / Math.sqrt(s.d))', 'row.map((y) => y / Math.sqrt(s.h * s.d))'] },
    { half: 'B', step: 'mask', edit: ["const HEAD = ['slice', 'scores', 'scale', 'mask', 'softmax', 'blend'];", "const HEAD = ['slice', 'scores', 'scale', 'softmax', 'mask', 'blend'];"] },
    { half: 'A', step: 'softmax', edit: ['const exps = row.map((y) => Math.exp(y - top));', 'const exps = row.map((y) => Math.exp(y));'] },
    { half: 'B', step: 'weighted-sum', edit: ['t + wj * s.v[j][c], 0)', 't + wj * s.k[j][c], 0)'] },
    { half: 'A', step: 'concat', edit: ['joined: s.Q.map((_, t) => s.outs.flatMap((o) => o[t]))', 'joined: s.outs.flat()'] },
    { half: 'B', step: 'w-o', edit: ['t + y * s.W_O[i][o], 0)', 't + y * s.W_O[o][i], 0)'] },
    { half: 'A', step: 'mask', edit: ['mask: (s) => (s.causal ?', 'mask: (s) => (!s.causal ?'] },
    { half: 'B', step: 'scores', edit: ['x: s.q.map((qi) => s.k.map((kj) =>', 'x: s.q.map((qi) => s.q.map((kj) =>'] },
    { half: 'A', step: 'slice', edit: ['run(HEAD, { ...s, from: head * s.d })', 'run(HEAD, { ...s, from: head })'] },
    { half: 'B', step: 'softmax', edit: ['softmax: (s) => ({ ...s, x: s.x.map(softmaxRow) }),', 'softmax: (s) => ({ ...s, x: s.x.map((row, i) => softmaxRow(s.x.map((r) => r[i]))) }),'] },
  ],
};

/** Every slip as { number, index, half, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
