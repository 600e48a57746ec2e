// A tenth held-out batch for the first wrong line (issue 28), written after the fixes the ninth
// batch (../fresh9/) led to and before the diagnosis was run on it: a right answer per challenge
// 01–09 in a style none of the corpus, fresh/ … fresh9/ has for that challenge (a beginner's nested
// arrays and plain for loops with short names, Kᵀ built first into its own array; a tutorial's tiny
// helpers dot, transpose, matmul, scaleMatrix, softmaxRow, splitHeads and mergeHeads; helpers that
// return closures, scorer/masker/normalizer/mixer, each query passed through the four; records keyed
// by strings, opts['W_' + name] and a { q, k, v, scores, weights, out } record per head; let-heavy
// mutation in place in a while loop with a manual counter, one scores array overwritten step by
// step; a class of static methods called through the class name; RoPE inline in one function,
// column by column, the pair's partner and the formula chosen by an if/else; helpers that each take
// one options object, working on the window's band only; every matrix grown by
// Array.prototype.reduce, the heads folded into the joined rows), and one- or two-line slips of it
// as a learner would make them, about a quarter of them more than a one-token change (a term or a
// call left out, a statement moved, a step done twice or in the wrong order). Each slip: the step
// at fault, the edit [from, to], and the half (A or B, alternating within a challenge, fixed before
// any run: rules may be fitted on half A's misses only, half B measures whether they generalise);
// the line at fault is the line of `from` in fresh10/NN.js.
import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { half: 'A', step: 'scores', edit: ['tmp = tmp + Q[i][k] * Kt[k][j];', 'tmp = tmp + Q[i][k] * Kt[k][i];'] },
    { half: 'B', step: 'scale', edit: ['row.push(tmp / Math.sqrt(d));', 'row.push(tmp / d);'] },
    { half: 'A', step: 'softmax', edit: ['let tot = 0;', 'let tot = 1;'] },
    { half: 'B', step: 'weighted-sum', edit: ['acc += w[i][j] * V[j][k];', 'acc += w[i][j] * V[k][j];'] },
    { half: 'A', step: 'scores', edit: ['col.push(K[j][k]);', 'col.push(K[k][j]);'] },
    { half: 'B', step: 'softmax', edit: ['e[j] = e[j] / tot;', 'e[j] = e[j] / n;'] },
    { half: 'A', step: 'weighted-sum', edit: ['for (let k = 0; k < m; k++) {\n      let acc = 0;', 'let acc = 0;\n    for (let k = 0; k < m; k++) {'] },
    { half: 'B', step: 'scores', edit: ['for (let k = 0; k < d; k++) {\n        tmp', 'for (let k = 1; k < d; k++) {\n        tmp'] },
    { half: 'A', step: 'weighted-sum', edit: ['acc += w[i][j] * V[j][k];', 'acc += s[i][j] * V[j][k];'] },
  ],
  '02': [
    { half: 'A', step: 'slice', edit: ['row.slice(h * size, h * size + size)', 'row.slice(h * size, size)'] },
    { half: 'B', step: 'scale', edit: ['1 / Math.sqrt(q[0].length)', '1 / Math.sqrt(q.length)'] },
    { half: 'A', step: 'softmax', edit: ['const total = exps.reduce((a, b) => a + b, 0);', 'const total = row.reduce((a, b) => a + b, 0);'] },
    { half: 'B', step: 'concat', edit: ['[].concat(...parts.map((part) => part[t]))', '[].concat(...parts.map((part) => part[0]))'] },
    { half: 'A', step: 'w-o', edit: ['return matmul(merged, W_O || eye(C));', 'return matmul(W_O || eye(C), merged);'] },
    { half: 'B', step: 'scores', edit: ['const Bt = transpose(B);', 'const Bt = B;'] },
    { half: 'A', step: 'slice', edit: ['const vs = splitHeads(V, numberOfHeads, headDimensions);', 'const vs = splitHeads(K, numberOfHeads, headDimensions);'] },
    { half: 'B', step: 'weighted-sum', edit: ['return matmul(weights, v);', 'return matmul(weights, q);'] },
    { half: 'A', step: 'scores', edit: ['scaleMatrix(matmul(q, transpose(k)),', 'scaleMatrix(matmul(q, k),'] },
  ],
  '03': [
    { half: 'A', step: 'mask', edit: ['(j > i ? -Infinity : x)', '(j >= i ? -Infinity : x)'] },
    { half: 'B', step: 'scale', edit: ['return s / root;', 'return s * root;'] },
    { half: 'A', step: 'softmax', edit: ['for (const e of ex) z += e;', 'for (const x of row) z += x;'] },
    { half: 'B', step: 'weighted-sum', edit: ['out[c] += p * V[j][c];', 'out[c] = p * V[j][c];'] },
    { half: 'A', step: 'mask', edit: ['if (!causal) return (row) => row;', 'if (causal) return (row) => row;'] },
    { half: 'B', step: 'scores', edit: ['s += q[c] * k[c];', 's += q[c] * q[c];'] },
    { half: 'A', step: 'weighted-sum', edit: ['const width = V[0].length;', 'const width = V.length;'] },
    { half: 'B', step: 'mask', edit: ['mix(softmax(mask(score(q), i)))', 'mix(mask(softmax(score(q)), i))'] },
    { half: 'A', step: 'softmax', edit: ['const ex = row.map((x) => Math.exp(x - peak));', 'const ex = row.map((x) => Math.exp(x) - peak);'] },
  ],
  '04': [
    { half: 'A', step: 'project-K', edit: ["proj[name] = times(X, opts['W_' + name]);", 'proj[name] = times(X, opts.W_Q);'] },
    { half: 'B', step: 'slice', edit: ['head.k = proj.K.map((row) => row.slice(lo, lo + headDimensions));', 'head.k = proj.K.map((row) => row.slice(lo, headDimensions));'] },
    { half: 'A', step: 'scale', edit: ['/ Math.sqrt(headDimensions)', '/ Math.sqrt(numberOfHeads)'] },
    { half: 'B', step: 'softmax', edit: ['const sum = ex.reduce((a, b) => a + b, 0);', 'const sum = ex.reduce((a, b) => a + b, 1);'] },
    { half: 'A', step: 'weighted-sum', edit: ['head.out = times(head.weights, head.v);', 'head.out = times(head.scores, head.v);'] },
    { half: 'B', step: 'concat', edit: ['joined[t].push(...row)', 'joined[t].unshift(...row)'] },
    { half: 'A', step: 'w-o', edit: ['return times(joined, opts.W_O);', 'return joined;'] },
    { half: 'B', step: 'project-Q', edit: ['s += A[i][k] * B[k][j];', 's += A[i][k] * B[j][k];'] },
    { half: 'A', step: 'slice', edit: ['head.v = proj.V.map((row) => row.slice(lo, lo + headDimensions));', 'head.v = proj.V.map((row) => row.slice(h, h + headDimensions));'] },
  ],
  '05': [
    { half: 'A', step: 'cache', edit: ['keys.push(K[t]);', 'keys.push(Q[t]);'] },
    { half: 'B', step: 'slice', edit: ['* keys[j][off + c];', '* keys[j][c];'] },
    { half: 'A', step: 'scale', edit: ['scores[j] /= Math.sqrt(headDimensions);', 'scores[j] /= Math.sqrt(n);'] },
    { half: 'B', step: 'softmax', edit: ['for (let j = 0; j < n; j++) scores[j] /= sum;', 'for (let j = 0; j < n - 1; j++) scores[j] /= sum;'] },
    { half: 'A', step: 'weighted-sum', edit: ['+= scores[j] * vals[j][off + c];', '+= scores[j] * keys[j][off + c];'] },
    { half: 'B', step: 'cache', edit: ['let n = keys.length;', 'let n = t;'] },
    { half: 'A', step: 'concat', edit: ['c++) row[off + c] +=', 'c++) row[c] +='] },
    { half: 'B', step: 'softmax', edit: ['scores[j] = Math.exp(scores[j] - mx);\n        sum += scores[j];', 'sum += scores[j];\n        scores[j] = Math.exp(scores[j] - mx);'] },
    { half: 'A', step: 'slice', edit: ['let off = h * headDimensions;', 'let off = h;'] },
  ],
  '06': [
    { half: 'A', step: 'kv-head', edit: ['return Math.floor(h / group);', 'return h % group;'] },
    { half: 'B', step: 'kv-head', edit: ['return H / G;', 'return G / H;'] },
    { half: 'A', step: 'slice', edit: ['const v = GQA.cut(V, g, d);', 'const v = GQA.cut(V, h, d);'] },
    { half: 'B', step: 'scale', edit: ['const f = 1 / Math.sqrt(d);', 'const f = Math.sqrt(d);'] },
    { half: 'A', step: 'softmax', edit: ['const z = e.reduce((a, b) => a + b, 0);', 'const z = Math.max(...e);'] },
    { half: 'B', step: 'scores', edit: ['return q.map((a) => k.map((b) =>', 'return q.map((a) => q.map((b) =>'] },
    { half: 'A', step: 'concat', edit: ['joined = joined.map((row, t) => row.concat(out[t]));', 'joined = joined.concat(out);'] },
    { half: 'B', step: 'weighted-sum', edit: ['s + p * v[j][c], 0)', 's + p * v[c][j], 0)'] },
    { half: 'A', step: 'slice', edit: ['row.slice(index * d, (index + 1) * d)', 'row.slice(index * d, index + d)'] },
  ],
  '07': [
    { half: 'A', step: 'frequency', edit: ['Math.pow(base, -2 * i / d)', 'Math.pow(base, -i / d)'] },
    { half: 'B', step: 'position', edit: ['const p = t + offset;', 'const p = t;'] },
    { half: 'A', step: 'pairs', edit: ['const other = X[t][c + half];', 'const other = X[t][c + 1];'] },
    { half: 'B', step: 'rotation', edit: ['X[t][c] * Math.cos(theta) - other * Math.sin(theta)', 'X[t][c] * Math.cos(theta) + other * Math.sin(theta)'] },
    { half: 'A', step: 'pairs', edit: ['const inHead = c - h * d;', 'const inHead = c;'] },
    { half: 'B', step: 'rotation', edit: ['newRow.push(other * Math.sin(theta) + X[t][c] * Math.cos(theta));', 'newRow.push(other * Math.cos(theta) + X[t][c] * Math.sin(theta));'] },
    { half: 'A', step: 'frequency', edit: ['const theta = p * freq;', 'const theta = p / freq;'] },
    { half: 'B', step: 'position', edit: ['options.offset === undefined ? 0 : options.offset', 'options.offset === undefined ? 1 : options.offset'] },
    { half: 'A', step: 'pairs', edit: ['const half = d / 2;', 'const half = C / 2;'] },
  ],
  '08': [
    { half: 'A', step: 'mask', edit: ['Math.max(0, p - size + 1)', 'Math.max(0, p - size)'] },
    { half: 'B', step: 'mask', edit: ['if (window === undefined) return Infinity;', 'if (window === undefined) return 1;'] },
    { half: 'A', step: 'scale', edit: ['const scale = 1 / Math.sqrt(Q[0].length);', 'const scale = 1 / Math.sqrt(Q.length);'] },
    { half: 'B', step: 'scores', edit: ['s += q[c] * K[j][c];', 's += q[c] * K[j - first][c];'] },
    { half: 'A', step: 'weighted-sum', edit: ['const row = V[first + n];', 'const row = V[n];'] },
    { half: 'B', step: 'softmax', edit: ['const weights = softmax({ values: logits({ q, K, first, last, scale }) });', 'const weights = softmax({ values: softmax({ values: logits({ q, K, first, last, scale }) }) });'] },
    { half: 'A', step: 'mask', edit: ['for (let j = first; j <= last; j++) {', 'for (let j = first; j < last; j++) {'] },
    { half: 'B', step: 'weighted-sum', edit: ['const out = new Array(V[0].length).fill(0);', 'const out = new Array(V[0].length).fill(1);'] },
    { half: 'A', step: 'scale', edit: ['out.push(s * scale);', 'out.push(s);'] },
  ],
  '09': [
    { half: 'A', step: 'mask', edit: ['causal && j > i ? -Infinity', 'causal && j < i ? -Infinity'] },
    { half: 'B', step: 'scale', edit: ['x / Math.sqrt(headDimensions)', 'x / headDimensions'] },
    { half: 'A', step: 'concat', edit: ['return rows.map((row, t) => row.concat(out[t]));', 'return out;'] },
    { half: 'B', step: 'slice', edit: ['const to = from + headDimensions;', 'const to = h + headDimensions;'] },
    { half: 'A', step: 'softmax', edit: ['res.push(ex.reduce((acc, e) => acc.concat([e / z]), []));', 'res.push(ex);'] },
    { half: 'B', step: 'w-o', edit: ['return mul(joined, Wo);', 'return mul(Wo, joined);'] },
  ],
};

/** Every slip as { number, index, half, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
