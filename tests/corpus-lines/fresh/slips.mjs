// A held-out batch for the first wrong line (issue 28), written after the engine's last change and
// before the diagnosis was run on any of it: a right answer per challenge 01–08 in a style neither
// tests/corpus/ nor tests/corpus-lines/NN.js has for that challenge (a generator with for..of and a
// closure; flat Float64Array buffers filled column by column; a class of chained step methods with
// the mask written as −Infinity; curried helpers and closures; a cache made by a closure and a
// generator over tokens with subarray views; K/V heads in a Map with destructuring; rows rebuilt by
// flatMap with destructured pairs; a flat score buffer banded by a closure), and one- or two-line
// slips of it. Each slip: the step at fault and the edit [from, to]; the line at fault is the line
// of `from` in fresh/NN.js.
import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { step: 'scale', edit: ['const score = scorer(K, 1 / Math.sqrt(Q[0].length));', 'const score = scorer(K, 1 / Math.sqrt(V[0].length));'] },
    { step: 'scores', edit: ['for (const [c, x] of enumerate(k)) s += x * q[c];', 'for (const [c, x] of enumerate(k)) s += x * k[c];'] },
    { step: 'softmax', edit: ['for (const e of exps) total += e;', 'for (const e of logits) total += e;'] },
    { step: 'weighted-sum', edit: ['for (const [j, w] of enumerate(weights)) acc += w * V[j][c];', 'for (const [j, w] of enumerate(weights)) acc += w * V[i][c];'] },
    { step: 'scale', edit: ['return s * scale;', 'return s / scale;'] },
  ],
  '02': [
    { step: 'slice', edit: ['const start = h * headDimensions;', 'const start = h;'] },
    { step: 'scale', edit: ['w[i * T + j] = s / Math.sqrt(d);', 'w[i * T + j] = s / Math.sqrt(C);'] },
    { step: 'softmax', edit: ['{ w[i * T + j] = Math.exp(w[i * T + j] - max); sum += w[i * T + j]; }', '{ sum += w[i * T + j]; w[i * T + j] = Math.exp(w[i * T + j] - max); }'] },
    { step: 'weighted-sum', edit: ['acc += w[i * T + j] * v[j * C + c];', 'acc += w[j * T + i] * v[j * C + c];'] },
    { step: 'w-o', edit: ['s + x * W_O[c][o]', 's + x * W_O[o][c]'] },
    { step: 'concat', edit: ['concat[i * C + c] = acc;', 'concat[c * T + i] = acc;'] },
  ],
  '03': [
    { step: 'mask', edit: ['(j > i ? -Infinity : x)', '(j >= i ? -Infinity : x)'] },
    { step: 'mask', edit: ['(j > i ? -Infinity : x)', '(j < i ? -Infinity : x)'] },
    { step: 'scale', edit: ['const f = Math.sqrt(this.d);', 'const f = this.d;'] },
    { step: 'mask', edit: ['if (!this.causal) return S;', 'if (this.causal) return S;'] },
    { step: 'weighted-sum', edit: ['s + p * this.V[j][c]', 's + p * this.V[c][j]'] },
  ],
  '04': [
    { step: 'project-V', edit: ['[project(W_Q), project(W_K), project(W_V)]', '[project(W_Q), project(W_K), project(W_K)]'] },
    { step: 'project-Q', edit: ['const project = (W) => times(X, W);', 'const project = (W) => times(X, transpose(W));'] },
    { step: 'concat', edit: ['const concat = X.map((_, t) => heads.flatMap((head) => head[t]));', 'const concat = heads.flat();'] },
    { step: 'scale', edit: ['x / Math.sqrt(headDimensions)', 'x / Math.sqrt(C)'] },
    { step: 'softmax', edit: ['const total = ex.reduce((a, b) => a + b, 0);', 'const total = row.reduce((a, b) => a + b, 0);'] },
  ],
  '05': [
    { step: 'cache', edit: ['for (let j = 0; j < cache.size; j++) {', 'for (let j = 0; j < t; j++) {'] },
    { step: 'cache', edit: ['add(k, v) { keys.push(k); values.push(v); },', 'add(k, v) { keys.unshift(k); values.push(v); },'] },
    { step: 'scale', edit: ['/ Math.sqrt(d));', '/ Math.sqrt(d * H));'] },
    { step: 'concat', edit: ['const out = row.subarray(h * d, (h + 1) * d);', 'const out = row.subarray(0, d);'] },
    { step: 'softmax', edit: ['const z = e.reduce((a, b) => a + b, 0);', 'const z = logits.reduce((a, b) => a + b, 0);'] },
    { step: 'slice', edit: ['const qh = q.slice(h * d, (h + 1) * d);', 'const qh = q.slice(h, h + d);'] },
  ],
  '06': [
    { step: 'kv-head', edit: ['kv.get(Math.floor(h / group))', 'kv.get(h % numberOfKVHeads)'] },
    { step: 'scale', edit: ['const scale = Math.sqrt(q[0].length);', 'const scale = Math.sqrt(k.length);'] },
    { step: 'slice', edit: ['attend(cols(Q, h * headDimensions, headDimensions), k, v)', 'attend(cols(Q, h, headDimensions), k, v)'] },
    { step: 'concat', edit: ['ctx.forEach((row, i) => out[i].push(...row));', 'ctx.forEach((row, i) => out[i].unshift(...row));'] },
    { step: 'kv-head', edit: ['v: cols(V, g * headDimensions, headDimensions)', 'v: cols(V, g, headDimensions)'] },
  ],
  '07': [
    { step: 'frequency', edit: ['position / base ** ((2 * i) / headDimensions)', 'position / base ** (i / headDimensions)'] },
    { step: 'position', edit: ['angle(offset + r, i)', 'angle(r, i)'] },
    { step: 'pairs', edit: ['rotate([x[i], x[i + half]], ', 'rotate([x[2 * i], x[2 * i + 1]], '] },
    { step: 'rotation', edit: ['a * Math.sin(theta) + b * Math.cos(theta)]', 'b * Math.cos(theta) - a * Math.sin(theta)]'] },
    { step: 'pairs', edit: ['return [...firsts, ...seconds];', 'return firsts.flatMap((u, i) => [u, seconds[i]]);'] },
  ],
  '08': [
    { step: 'mask', edit: ['j <= p && j > p - w', 'j <= p && j >= p - w'] },
    { step: 'mask', edit: ['j <= p && j > p - w', 'j < p && j > p - w'] },
    { step: 'scale', edit: ['S[p * T + j] = s / Math.sqrt(d);', 'S[p * T + j] = s / Math.sqrt(T);'] },
    { step: 'scores', edit: ['s += Q[p][c] * K[j][c];', 's += Q[p][c] * K[p][c];'] },
    { step: 'weighted-sum', edit: ['out[q][c] += S[q * T + j] * V[j][c];', 'out[q][c] += S[q * T + j] * V[q][c];'] },
    { step: 'mask', edit: ['const w = window ?? T;', 'const w = window;'] },
  ],
};

/** Every slip as { number, index, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
