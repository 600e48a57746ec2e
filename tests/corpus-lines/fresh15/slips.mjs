// A fifteenth held-out batch for the first wrong line (issue 28), written blind (without reading the
// diagnosis, its tests or any measurement) and before the diagnosis was run on it: a right answer per
// challenge 01–09 in a style none of the corpus, fresh/ … fresh14/ has for that challenge (a streaming,
// FlashAttention-like softmax, each query walking the keys once with a running maximum, denominator
// and output rescaled as the maximum grows; lodash-like helpers written inline, _.times, _.chunk,
// _.unzip, _.zip, _.sumBy, _.max and _.flatten, every row chunked into its heads and the heads unzipped
// to the front; a long-format "data frame" kept as an object of columns { query, key, score }, one row
// per (query, key) pair, the scale a mutate(), the causal mask a filter() of rows, the softmax grouped
// by query and the output a pivot of the weighted values; a fused QKV projection like GPT-2's c_attn,
// W_Q, W_K and W_V glued side by side into one C×3C weight and the product split at 0, C and 2C; the
// observer pattern, a tiny event emitter whose 'append' event each head's listener caches its slices
// from and whose 'query' event every head answers through a reply callback; a port of Hugging Face's
// repeat_kv, K and V widened first by repeating each key/value head's columns `group` times, then
// plain multi-head attention; a port of Hugging Face's rotary code, inv_freq from arange(0, d, 2),
// T×d cos and sin caches from cat(freqs, freqs) and x·cos + rotate_half(x)·sin; a sliding deque of key
// indices, pushed at each position and shifted once it holds more than `window`; a small Vec class
// for single rows, dot, scale, plus, slice, times and Vec.concat, the layer written one query row at a
// time and the causal mask a cut of the visible keys), and one- or two-line slips of it as a learner
// would make them, 24 of the 89 more than a one-token change (a term or a call left out, a statement
// moved, a step done twice or in the wrong order). Each slip: the step at fault, the edit [from, to],
// and the half (A or B, alternating within a challenge, fixed before any run: rules may be fitted on
// half A's misses only, half B measures whether they generalise); the line at fault is the line of
// `from` in fresh15/NN.js.
import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { half: 'A', step: 'scores', edit: ['for (let c = 0; c < q.length; c++) s += q[c] * k[c];', 'for (let c = 1; c < q.length; c++) s += q[c] * k[c];'] },
    { half: 'B', step: 'scale', edit: ['const invSqrt = 1 / Math.sqrt(dk);', 'const invSqrt = 1 / Math.sqrt(dv);'] },
    { half: 'A', step: 'softmax', edit: ['const correction = Math.exp(runningMax - newMax);', 'const correction = Math.exp(newMax - runningMax);'] },
    { half: 'B', step: 'softmax', edit: ['denominator = denominator * correction + p;', 'denominator = denominator + p;'] },
    { half: 'A', step: 'weighted-sum', edit: ['acc = acc.map((a, c) => a * correction + p * V[j][c]);', 'acc = acc.map((a, c) => a + p * V[j][c]);'] },
    { half: 'B', step: 'weighted-sum', edit: ['a * correction + p * V[j][c]', 'a * correction + p * K[j][c]'] },
    { half: 'A', step: 'softmax', edit: ['    runningMax = newMax;\n', ''] },
    { half: 'B', step: 'scale', edit: ['(q) => attendOnline(q, K, V, invSqrt, dv)', '(q) => attendOnline(q, K, V, Math.sqrt(dk), dv)'] },
    { half: 'A', step: 'softmax', edit: ['return acc.map((a) => a / denominator);', 'return acc;'] },
    { half: 'B', step: 'softmax', edit: ['const p = Math.exp(logit - newMax);', 'const p = Math.exp(logit - runningMax);'] },
  ],
  '02': [
    { half: 'A', step: 'slice', edit: ['_.chunk(row, headDimensions)', '_.chunk(row, numberOfHeads)'] },
    { half: 'B', step: 'scores', edit: ['const logits = k.map((kj) =>', 'const logits = q.map((kj) =>'] },
    { half: 'A', step: 'scale', edit: ['const scale = 1 / Math.sqrt(d);', 'const scale = 1 / Math.sqrt(q.length);'] },
    { half: 'B', step: 'softmax', edit: ['const total = _.sumBy(exps, (e) => e);', 'const total = _.sumBy(logits, (e) => e);'] },
    { half: 'A', step: 'weighted-sum', edit: ['weights[j] * vj[c]', 'weights[c] * vj[j]'] },
    { half: 'B', step: 'concat', edit: ['const joined = _.unzip(heads).map((parts) => _.flatten(parts));', 'const joined = _.flatten(heads);'] },
    { half: 'A', step: 'w-o', edit: ['const columnsOfW = _.unzip(W);', 'const columnsOfW = W;'] },
    { half: 'B', step: 'slice', edit: ['const byHead = (M) => _.unzip(M.map((row) => _.chunk(row, headDimensions)));', 'const byHead = (M) => M.map((row) => _.chunk(row, headDimensions));'] },
    { half: 'A', step: 'softmax', edit: ['const weights = exps.map((e) => e / total);', 'const weights = exps.map((e) => e / top);'] },
    { half: 'B', step: 'concat', edit: ['map((parts) => _.flatten(parts))', 'map((parts) => _.flatten(parts.reverse()))'] },
  ],
  '03': [
    { half: 'A', step: 'mask', edit: ['filter(df, (r) => r.key <= r.query)', 'filter(df, (r) => r.key < r.query)'] },
    { half: 'B', step: 'scale', edit: ['(r) => r.score / Math.sqrt(dk)', '(r) => r.score / dk'] },
    { half: 'A', step: 'scores', edit: ['df.score.push(dotRow(Q[i], K[j]));', 'df.score.push(dotRow(Q[i], K[i]));'] },
    { half: 'B', step: 'mask', edit: ['filter(df, (r) => r.key <= r.query)', 'filter(df, (r) => r.key >= r.query)'] },
    { half: 'A', step: 'softmax', edit: ["df = groupSoftmax(df, 'query', 'score', 'weight');", "df = groupSoftmax(df, 'key', 'score', 'weight');"] },
    { half: 'B', step: 'weighted-sum', edit: ['V[key].forEach((v, c) => {', 'V[query].forEach((v, c) => {'] },
    { half: 'A', step: 'mask', edit: ["  if (causal) df = filter(df, (r) => r.key <= r.query);\n  df = groupSoftmax(df, 'query', 'score', 'weight');\n", "  df = groupSoftmax(df, 'query', 'score', 'weight');\n  if (causal) df = filter(df, (r) => r.key <= r.query);\n"] },
    { half: 'B', step: 'softmax', edit: ['(total.get(df[by][n]) ?? 0) + e', '(total.get(df[by][n]) ?? 1) + e'] },
    { half: 'A', step: 'scale', edit: ["  df = mutate(df, 'score', (r) => r.score / Math.sqrt(dk));\n", ''] },
    { half: 'B', step: 'weighted-sum', edit: ['out[query][c] += weight * v;', 'out[key][c] += weight * v;'] },
  ],
  '04': [
    { half: 'A', step: 'project-Q', edit: ['[split(0), split(C), split(2 * C)]', '[split(C), split(0), split(2 * C)]'] },
    { half: 'B', step: 'project-V', edit: ['...W_K[r], ...W_V[r]]', '...W_K[r], ...W_K[r]]'] },
    { half: 'A', step: 'slice', edit: ['const lo = h * headDimensions;', 'const lo = h * numberOfHeads;'] },
    { half: 'B', step: 'scale', edit: ['cols(v, lo, hi), headDimensions);', 'cols(v, lo, hi), C);'] },
    { half: 'A', step: 'softmax', edit: ['const z = e.reduce((s, x) => s + x, 0);', 'const z = att.reduce((s, x) => s + x, 0);'] },
    { half: 'B', step: 'weighted-sum', edit: ['(ej / z) * v[j][c]', '(ej / z) * k[j][c]'] },
    { half: 'A', step: 'concat', edit: ['head.forEach((row, t) => y[t].push(...row));', 'head.forEach((row, t) => y[t].unshift(...row));'] },
    { half: 'B', step: 'w-o', edit: ['return linear(y, W_O); // c_proj', 'return y;'] },
    { half: 'A', step: 'scores', edit: ['qi.reduce((s, x, c) => s + x * kj[c], 0)', 'qi.reduce((s, x, c) => s + x * qi[c], 0)'] },
    { half: 'B', step: 'project-K', edit: ['const W_qkv = W_Q.map((row, r) => [...row, ...W_K[r], ...W_V[r]]);', 'const W_qkv = [...W_Q, ...W_K, ...W_V];'] },
  ],
  '05': [
    { half: 'A', step: 'cache', edit: ["    bus.emit('append', K[t], V[t]);\n    const row = new Array(C).fill(0);\n    bus.emit('query', Q[t], (from, part) => {\n      part.forEach((x, c) => {\n        row[from + c] = x;\n      });\n    });\n", "    const row = new Array(C).fill(0);\n    bus.emit('query', Q[t], (from, part) => {\n      part.forEach((x, c) => {\n        row[from + c] = x;\n      });\n    });\n    bus.emit('append', K[t], V[t]);\n"] },
    { half: 'B', step: 'slice', edit: ['const qh = q.slice(from, from + d);', 'const qh = q.slice(0, d);'] },
    { half: 'A', step: 'scale', edit: ['/ Math.sqrt(d));', '/ Math.sqrt(keys.length));'] },
    { half: 'B', step: 'softmax', edit: ['const total = exps.reduce((a, b) => a + b, 0);', 'const total = logits.reduce((a, b) => a + b, 0);'] },
    { half: 'A', step: 'weighted-sum', edit: ['exps.forEach((e, j) => values[j].forEach(', 'exps.forEach((e, j) => keys[j].forEach('] },
    { half: 'B', step: 'cache', edit: ['values.push(v.slice(from, from + d));', 'values.push(k.slice(from, from + d));'] },
    { half: 'A', step: 'concat', edit: ['row[from + c] = x;', 'row[c] = x;'] },
    { half: 'B', step: 'cache', edit: ['  const bus = createEmitter();\n  for (let h = 0; h < numberOfHeads; h++) subscribeHead(bus, h * headDimensions, headDimensions);\n\n  const rows = [];\n  for (let t = 0; t < T; t++) {\n', '  const rows = [];\n  for (let t = 0; t < T; t++) {\n    const bus = createEmitter();\n    for (let h = 0; h < numberOfHeads; h++) subscribeHead(bus, h * headDimensions, headDimensions);\n'] },
    { half: 'A', step: 'scores', edit: ['const logits = keys.map((kh) =>', 'const logits = values.map((kh) =>'] },
    { half: 'B', step: 'slice', edit: ['keys.push(k.slice(from, from + d));', 'keys.push(k.slice(from, d));'] },
  ],
  '06': [
    { half: 'A', step: 'kv-head', edit: ['    for (let g = 0; g < nKV; g++) {\n      const head = row.slice(g * d, (g + 1) * d);\n      for (let r = 0; r < group; r++) out.push(...head);\n    }\n', '    for (let r = 0; r < group; r++) {\n      for (let g = 0; g < nKV; g++) out.push(...row.slice(g * d, (g + 1) * d));\n    }\n'] },
    { half: 'B', step: 'kv-head', edit: ['const Vx = repeatKV(V, numberOfKVHeads, group, headDimensions);', 'const Vx = repeatKV(V, group, numberOfKVHeads, headDimensions);'] },
    { half: 'A', step: 'kv-head', edit: ['const head = row.slice(g * d, (g + 1) * d);', 'const head = row.slice(g, g + d);'] },
    { half: 'B', step: 'scale', edit: ['return s / Math.sqrt(d);', 'return s / Math.sqrt(Q[i].length);'] },
    { half: 'A', step: 'softmax', edit: ['const sum = ex.reduce((a, b) => a + b, 0);', 'const sum = xs.reduce((a, b) => a + b, 0);'] },
    { half: 'B', step: 'weighted-sum', edit: ['w[j] * V[j][off + c]', 'w[j] * V[i][off + c]'] },
    { half: 'A', step: 'scores', edit: ['const scores = K.map((k) => {', 'const scores = V.map((k) => {'] },
    { half: 'B', step: 'concat', edit: ['out[i][off + c] += w[j]', 'out[i][c * H + h] += w[j]'] },
    { half: 'A', step: 'kv-head', edit: ['const group = numberOfHeads / numberOfKVHeads;', 'const group = numberOfHeads;'] },
    { half: 'B', step: 'slice', edit: ['for (let c = 0; c < d; c++) s += Q[i][off + c] * k[off + c];', 'for (let c = 0; c < Q[i].length; c++) s += Q[i][c] * k[c];'] },
  ],
  '07': [
    { half: 'A', step: 'frequency', edit: ['arange(0, d, 2).map(', 'arange(0, d, 1).map('] },
    { half: 'B', step: 'position', edit: ['arange(offset, offset + X.length, 1)', 'arange(0, X.length, 1)'] },
    { half: 'A', step: 'pairs', edit: ['const emb = freqs.map((row) => [...row, ...row]);', 'const emb = freqs.map((row) => row.flatMap((f) => [f, f]));'] },
    { half: 'B', step: 'rotation', edit: ['return [...x2.map((v) => -v), ...x1];', 'return [...x2, ...x1.map((v) => -v)];'] },
    { half: 'A', step: 'frequency', edit: ['1 / base ** (k / d)', '1 / base ** k / d'] },
    { half: 'B', step: 'rotation', edit: ['xi * cos[t][i] + rotated[i] * sin[t][i]', 'xi * cos[t][i] - rotated[i] * sin[t][i]'] },
    { half: 'A', step: 'position', edit: ['(p) => invFreq.map((f) => p * f)', '(p) => invFreq.map((f) => (p + offset) * f)'] },
    { half: 'B', step: 'pairs', edit: ['const rotated = rotateHalf(x);', 'const rotated = rotateHalf(row).slice(h * d, (h + 1) * d);'] },
    { half: 'A', step: 'rotation', edit: ['const sin = emb.map((row) => row.map(Math.sin));', 'const sin = emb.map((row) => row.map(Math.cos));'] },
    { half: 'B', step: 'frequency', edit: ['(k / d)', '(k / (numberOfHeads * d))'] },
  ],
  '08': [
    { half: 'A', step: 'mask', edit: ['if (queue.length > limit) queue.shift();', 'if (queue.length >= limit) queue.shift();'] },
    { half: 'B', step: 'scale', edit: ['const scale = Math.sqrt(d);', 'const scale = Math.sqrt(queue.length);'] },
    { half: 'A', step: 'scores', edit: ['queue.map((j) => dot(q, K[j]) / scale)', 'queue.map((j, n) => dot(q, K[n]) / scale)'] },
    { half: 'B', step: 'mask', edit: ['    queue.push(p);\n    if (queue.length > limit) queue.shift();\n', '    if (queue.length > limit) queue.shift();\n    queue.push(p);\n'] },
    { half: 'A', step: 'softmax', edit: ['(weights[n] / sum) * V[j][c]', 'weights[n] * V[j][c]'] },
    { half: 'B', step: 'weighted-sum', edit: ['(weights[n] / sum) * V[j][c]', '(weights[n] / sum) * V[n][c]'] },
    { half: 'A', step: 'mask', edit: ['if (queue.length > limit) queue.shift();', 'if (queue.length > limit) queue.pop();'] },
    { half: 'B', step: 'mask', edit: ['    queue.push(p);\n    if (queue.length > limit) queue.shift();\n    out.push(attendTo(Q[p], queue, K, V, d));\n', '    out.push(attendTo(Q[p], queue, K, V, d));\n    queue.push(p);\n    if (queue.length > limit) queue.shift();\n'] },
    { half: 'A', step: 'weighted-sum', edit: ['queue.forEach((j, n) => {', 'queue.forEach((n, j) => {'] },
    { half: 'B', step: 'scale', edit: ['const scale = Math.sqrt(d);', 'const scale = Math.sqrt(K.length);'] },
  ],
  '09': [
    { half: 'A', step: 'mask', edit: ['const visible = keys.slice(0, last + 1);', 'const visible = keys.slice(0, last);'] },
    { half: 'B', step: 'slice', edit: ['const values = v.map((vj) => vj.slice(from, to));', 'const values = v.map((vj) => vj.slice(0, headDimensions));'] },
    { half: 'A', step: 'scale', edit: ['.scale(1 / Math.sqrt(d));', '.scale(Math.sqrt(d));'] },
    { half: 'B', step: 'w-o', edit: ['const wo = W_O ? W_O.map((row) => new Vec(row)) : null;', 'const wo = W_O ? W_O[0].map((_, c) => new Vec(W_O.map((row) => row[c]))) : null;'] },
    { half: 'A', step: 'mask', edit: ['causal ? i : T - 1', 'causal ? i + 1 : T - 1'] },
    { half: 'B', step: 'softmax', edit: ['const weights = exps.scale(1 / exps.sum());', 'const weights = exps.scale(1 / logits.sum());'] },
    { half: 'A', step: 'weighted-sum', edit: ['acc.plus(values[j].scale(w))', 'acc.plus(keys[j].scale(w))'] },
    { half: 'B', step: 'concat', edit: ['const joined = Vec.concat(heads);', 'const joined = heads.reduce((acc, hv) => acc.plus(hv));'] },
    { half: 'A', step: 'mask', edit: ['const visible = keys.slice(0, last + 1);', 'const visible = keys;'] },
  ],
};

/** Every slip as { number, index, half, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
