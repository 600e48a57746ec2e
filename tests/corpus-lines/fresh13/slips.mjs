// A thirteenth held-out batch for the first wrong line (issue 28), written blind (without reading the
// diagnosis) and before the diagnosis was run on it: a right answer per challenge 01–09 in a style
// none of the corpus, fresh/ … fresh12/ has for that challenge (lazy matrices behind a Proxy, every
// entry computed on first read by a rule (i, j) => value and memoised in a Map; a fluent builder
// that records each step as a closure and runs them only on .run(); a tiny computation graph of Node
// objects, like an autograd tape, sorted and evaluated forward once; a sequence of small pure
// functions, each with a JSDoc comment, composed by the exported function; event sourcing, the
// decode a list of 'append' and 'query' events folded by a reducer over an immutable state; query
// heads grouped by their key/value head with a groupBy helper, each group's K/V cut once; a
// PairCursor class implementing Symbol.iterator by hand, next() walking rows, heads and pairs; a
// string-keyed registry of kernels looked up by name, the window mask a nested ternary; row-major
// Float64Array buffers read through an idx(r, c, n) helper, the causal mask a nested ternary), and
// one- or two-line slips of it as a learner would make them, 20 of the 80 more than a one-token
// change (a term or a call left out, a statement moved, a step done twice or in the wrong order).
// Each slip: the step at fault, the edit [from, to], and the half (A or B, alternating within a
// challenge, fixed before any run: rules may be fitted on half A's misses only, half B measures
// whether they generalise); the line at fault is the line of `from` in fresh13/NN.js.
import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { half: 'A', step: 'scores', edit: ['for (let c = 0; c < dk; c++) s += Q[i][c] * K[j][c];', 'for (let c = 0; c < dk; c++) s += Q[i][c] * K[i][c];'] },
    { half: 'B', step: 'scale', edit: ['raw[i][j] / Math.sqrt(dk)', 'raw[i][j] / dk'] },
    { half: 'A', step: 'softmax', edit: ['Math.exp(scaled[i][j] - rowMax[i][0])', 'Math.exp(scaled[i][j]) - rowMax[i][0]'] },
    { half: 'B', step: 'softmax', edit: ['for (let j = 0; j < T; j++) z += exps[i][j];', 'for (let j = 0; j < T; j++) z += scaled[i][j];'] },
    { half: 'A', step: 'weighted-sum', edit: ['acc += weights[i][j] * V[j][c];', 'acc += weights[i][j] * V[i][c];'] },
    { half: 'B', step: 'scale', edit: ['raw[i][j] / Math.sqrt(dk)', 'raw[i][j] * Math.sqrt(dk)'] },
    { half: 'A', step: 'scores', edit: ['const raw = lazy(T, T, (i, j) => {', 'const raw = lazy(T, T, (j, i) => {'] },
    { half: 'B', step: 'weighted-sum', edit: ['for (let j = 0; j < T; j++) acc +=', 'for (let j = 1; j < T; j++) acc +='] },
    { half: 'A', step: 'softmax', edit: ['const weights = lazy(T, T, (i, j) => exps[i][j] / rowSum[i][0]);', 'const weights = exps;'] },
  ],
  '02': [
    { half: 'A', step: 'slice', edit: ['row.slice(h * width, h * width + width)', 'row.slice(h * width, h + width)'] },
    { half: 'B', step: 'scores', edit: ['hd.m = hd.q.map((qi) => hd.k.map(', 'hd.m = hd.q.map((qi) => hd.q.map('] },
    { half: 'A', step: 'scale', edit: ['x / Math.sqrt(hd.width)', 'x / hd.width'] },
    { half: 'B', step: 'softmax', edit: ['const z = ex.reduce((a, b) => a + b, 0);', 'const z = row.reduce((a, b) => a + b, 0);'] },
    { half: 'A', step: 'weighted-sum', edit: ['o[c] += wj * hd.v[j][c];', 'o[c] += wj * hd.v[c][j];'] },
    { half: 'B', step: 'concat', edit: ['[].concat(...s.heads.map((hd) => hd.out[t]))', '[].concat(...s.heads.map((hd) => hd.out[t]).reverse())'] },
    { half: 'A', step: 'w-o', edit: ['row.reduce((a, x, i) => a + x * W[i][j], 0)', 'row.reduce((a, x, i) => a + x * W[j][i], 0)'] },
    { half: 'B', step: 'scale', edit: ['    .scale()\n    .softmax()\n', '    .softmax()\n    .scale()\n'] },
    { half: 'A', step: 'slice', edit: ['s.heads.push({ q: cut(s.Q), k: cut(s.K), v: cut(s.V), width });', 's.heads.push({ q: cut(s.Q), k: cut(s.K), v: s.V, width });'] },
  ],
  '03': [
    { half: 'A', step: 'mask', edit: ['(causal && j > i ? -Infinity : x)', '(causal && j >= i ? -Infinity : x)'] },
    { half: 'B', step: 'scale', edit: ['x / Math.sqrt(Q[0].length)', 'x / Q[0].length'] },
    { half: 'A', step: 'scores', edit: ["const kt = node('transpose', [k],", "const kt = node('transpose', [q],"] },
    { half: 'B', step: 'softmax', edit: ['const z = ex.reduce((a, b) => a + b, 0);', 'const z = ex.length;'] },
    { half: 'A', step: 'weighted-sum', edit: ["const out = node('matmul', [weights, v],", "const out = node('matmul', [weights, k],"] },
    { half: 'B', step: 'mask', edit: ['(causal && j > i ? -Infinity : x)', '(causal && j > i ? 0 : x)'] },
    { half: 'A', step: 'softmax', edit: ['const ex = row.map((x) => Math.exp(x - top));', 'const ex = row.map((x) => Math.exp(x) - top);'] },
    { half: 'B', step: 'mask', edit: ["const weights = node('softmax', [masked],", "const weights = node('softmax', [scaled],"] },
    { half: 'A', step: 'scores', edit: ['row.reduce((s, x, c) => s + x * b[c][j], 0)', 'row.reduce((s, x, c) => s + x * b[j][c], 0)'] },
  ],
  '04': [
    { half: 'A', step: 'project-Q', edit: ['const Q = linear(X, W_Q);', 'const Q = linear(X, W_K);'] },
    { half: 'B', step: 'project-V', edit: ['const V = linear(X, W_V);', 'const V = X;'] },
    { half: 'A', step: 'scores', edit: ['qi.reduce((acc, x, c) => acc + x * kj[c], 0)', 'qi.reduce((acc, x, c) => acc + x * qi[c], 0)'] },
    { half: 'B', step: 'scale', edit: ['const r = Math.sqrt(width);', 'const r = width;'] },
    { half: 'A', step: 'softmax', edit: ['const ex = row.map((x) => Math.exp(x - top));', 'const ex = row.map((x) => Math.exp(top - x));'] },
    { half: 'B', step: 'weighted-sum', edit: ['w.reduce((acc, wj, j) => acc + wj * v[j][c], 0)', 'w.reduce((acc, wj, j) => acc + wj * v[c][j], 0)'] },
    { half: 'A', step: 'w-o', edit: ['return linear(sideBySide(outs), W_O);', 'return sideBySide(outs);'] },
    { half: 'B', step: 'slice', edit: ['const from = h * headDimensions;', 'const from = h;'] },
    { half: 'A', step: 'concat', edit: ['parts.reduce((row, part) => row.concat(part[t]), [])', 'parts.reduce((row, part) => [...part[t], ...row], [])'] },
  ],
  '05': [
    { half: 'A', step: 'cache', edit: ["events.push({ type: 'append', key: K[t], value: V[t] });", "events.push({ type: 'append', key: K[t], value: K[t] });"] },
    { half: 'B', step: 'scores', edit: ['s += event.query[c] * key[c];', 's += event.query[c] * key[c - lo];'] },
    { half: 'A', step: 'scale', edit: ['return s / Math.sqrt(width);', 'return s;'] },
    { half: 'B', step: 'softmax', edit: ['const z = ex.reduce((a, b) => a + b, 0);', 'const z = ex.reduce((a, b) => a + b, 1);'] },
    { half: 'A', step: 'weighted-sum', edit: ['acc += (ex[j] / z) * state.values[j][c];', 'acc += (ex[j] / z) * state.keys[j][c];'] },
    { half: 'B', step: 'cache', edit: ["    events.push({ type: 'append', key: K[t], value: V[t] });\n    events.push({ type: 'query', query: Q[t] });\n", "    events.push({ type: 'query', query: Q[t] });\n    events.push({ type: 'append', key: K[t], value: V[t] });\n"] },
    { half: 'A', step: 'slice', edit: ['const lo = h * width;', 'const lo = h;'] },
    { half: 'B', step: 'cache', edit: ['keys: [...state.keys, event.key]', 'keys: [event.key]'] },
    { half: 'A', step: 'concat', edit: ['row.push(acc);', 'row.unshift(acc);'] },
  ],
  '06': [
    { half: 'A', step: 'kv-head', edit: ['groupBy(heads, (h) => Math.floor(h / perGroup))', 'groupBy(heads, (h) => h % numberOfKVHeads)'] },
    { half: 'B', step: 'slice', edit: ['const qLo = h * d;', 'const qLo = Number(g) * d;'] },
    { half: 'A', step: 'scale', edit: ['return s / Math.sqrt(d);', 'return s / Math.sqrt(C);'] },
    { half: 'B', step: 'softmax', edit: ['const z = ex.reduce((a, b) => a + b, 0);', 'const z = logits.reduce((a, b) => a + b, 0);'] },
    { half: 'A', step: 'weighted-sum', edit: ['(e / z) * vg[j][c];', '(e / z) * vg[i][c];'] },
    { half: 'B', step: 'scores', edit: ['s += qrow[qLo + c] * krow[c];', 's += qrow[qLo + c] * krow[qLo + c];'] },
    { half: 'A', step: 'kv-head', edit: ['const vg = V.map((row) => row.slice(kvLo, kvLo + d));', 'const vg = V.map((row) => row.slice(0, d));'] },
    { half: 'B', step: 'kv-head', edit: ['const perGroup = numberOfHeads / numberOfKVHeads;', 'const perGroup = numberOfKVHeads;'] },
    { half: 'A', step: 'concat', edit: ['out[i][qLo + c] +=', 'out[i][c] +='] },
  ],
  '07': [
    { half: 'A', step: 'frequency', edit: ['base ** (-(2 * i) / headDimensions)', 'base ** (-i / headDimensions)'] },
    { half: 'B', step: 'position', edit: ['const pos = r + offset;', 'const pos = r;'] },
    { half: 'A', step: 'pairs', edit: ['const second = first + half;', 'const second = first + 1;'] },
    { half: 'B', step: 'rotation', edit: ['out[r][first] = x * Math.cos(theta) - y * Math.sin(theta);', 'out[r][first] = x * Math.cos(theta) + y * Math.sin(theta);'] },
    { half: 'A', step: 'pairs', edit: ['const first = h * headDimensions + i;', 'const first = h + i;'] },
    { half: 'B', step: 'frequency', edit: ['base ** (-(2 * i) / headDimensions)', 'base ** (-(2 * i) / C)'] },
    { half: 'A', step: 'rotation', edit: ['out[r][second] = x * Math.sin(theta) + y * Math.cos(theta);', 'out[r][second] = out[r][first] * Math.sin(theta) + y * Math.cos(theta);'] },
    { half: 'B', step: 'pairs', edit: ['this.half = width / 2;', 'this.half = width;'] },
    { half: 'A', step: 'position', edit: ['const theta = pos * freq;', 'const theta = (pos + 1) * freq;'] },
  ],
  '08': [
    { half: 'A', step: 'mask', edit: ['j <= p - w ? -Infinity : x', 'j < p - w ? -Infinity : x'] },
    { half: 'B', step: 'scale', edit: ['row.map((x) => x / Math.sqrt(d))', 'row.map((x) => x / d)'] },
    { half: 'A', step: 'mask', edit: ['(j > p ? -Infinity', '(j >= p ? -Infinity'] },
    { half: 'B', step: 'scores', edit: ["const S = KERNELS['logits'](Q, K);", "const S = KERNELS['logits'](K, Q);"] },
    { half: 'A', step: 'softmax', edit: ['return ex.map((e) => e / z);', 'return ex;'] },
    { half: 'B', step: 'weighted-sum', edit: ["return KERNELS['blend'](P, V);", "return KERNELS['blend'](P, K);"] },
    { half: 'A', step: 'mask', edit: ["  const banded = KERNELS['band'](scaledS, w);\n  const P = KERNELS['softmax'](banded);\n", "  const P = KERNELS['softmax'](scaledS);\n"] },
    { half: 'B', step: 'scale', edit: ["  const scaledS = KERNELS['scale'](S, d);\n  const banded = KERNELS['band'](scaledS, w);\n", "  const banded = KERNELS['band'](S, w);\n"] },
    { half: 'A', step: 'weighted-sum', edit: ['acc + wj * V[j][c], 0)', 'acc + wj * V[j][c], 1)'] },
  ],
  '09': [
    { half: 'A', step: 'mask', edit: ['(j > i ? -Infinity', '(j >= i ? -Infinity'] },
    { half: 'B', step: 'slice', edit: ['const base = h * d;', 'const base = h;'] },
    { half: 'A', step: 'scale', edit: ['s / Math.sqrt(d)) : s / Math.sqrt(d);', 's / Math.sqrt(d)) : s / d;'] },
    { half: 'B', step: 'softmax', edit: ['z += p[j];', 'z = p[j];'] },
    { half: 'A', step: 'weighted-sum', edit: ['(p[j] / z) * v[idx(j, base + c, C)]', '(p[j] / z) * v[idx(i, base + c, C)]'] },
    { half: 'B', step: 'w-o', edit: ['w[idx(i, j, C)]', 'w[idx(j, i, C)]'] },
    { half: 'A', step: 'scores', edit: ['q[idx(i, base + c, C)] * k[idx(j, base + c, C)]', 'q[idx(i, base + c, C)] * q[idx(j, base + c, C)]'] },
    { half: 'B', step: 'softmax', edit: ['        if (p[j] > top) top = p[j];\n', ''] },
  ],
};

/** Every slip as { number, index, half, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
