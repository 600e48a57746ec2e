// A fourteenth held-out batch for the first wrong line (issue 28), written blind (without reading the
// diagnosis) and before the diagnosis was run on it: a right answer per challenge 01–09 in a style
// none of the corpus, fresh/ … fresh13/ has for that challenge (a tiny einsum helper parsing index
// strings 'ik,jk->ij', every product one call of it; a Tensor of shape, strides and offset over a
// Float64Array, view() cutting a head's columns without a copy and .T swapping the strides, each
// head's weighted sum written through a view straight into the concatenation; one Float64Array arena
// allocated up front with every intermediate a named region at an offset; a student's port from NumPy,
// helpers named np_matmul, np_split, np_concatenate, np_max and np_sum with their axes; a state machine,
// a `phase` variable and a switch over the phase names append, score, scale, softmax, mix and emit;
// generator pipelines, every stage a function* over rows, a query head a chain of them; a small toolkit
// (range, zeros, vecmat) and RoPE as each row times a C×C block-diagonal rotation matrix built for its
// position; column-major storage, the matrices kept as lists of columns and the scores and weights flat
// in column-major order; a Mat class with static constructors (of, zeros, identity, causal, hcat) and
// chained methods, the causal mask an additive matrix), and one- or two-line slips of it as a learner
// would make them, 19 of the 83 more than a one-token change (a term or a call left out, a statement
// moved, a step done twice or in the wrong order). Each slip: the step at fault, the edit [from, to],
// and the half (A or B, alternating within a challenge, fixed before any run: rules may be fitted on
// half A's misses only, half B measures whether they generalise); the line at fault is the line of
// `from` in fresh14/NN.js.
import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { half: 'A', step: 'scores', edit: ["const scores = einsum('ik,jk->ij', Q, K);", "const scores = einsum('ik,kj->ij', Q, K);"] },
    { half: 'B', step: 'scale', edit: ['row.map((x) => x / Math.sqrt(dk))', 'row.map((x) => x / dk)'] },
    { half: 'A', step: 'softmax', edit: ['const sum = exps.reduce((a, b) => a + b, 0);', 'const sum = row.reduce((a, b) => a + b, 0);'] },
    { half: 'B', step: 'weighted-sum', edit: ["einsum('ij,jc->ic', weights, V)", "einsum('ij,cj->ic', weights, V)"] },
    { half: 'A', step: 'scores', edit: ['B[at[right[0]]][at[right[1]]]', 'B[at[right[1]]][at[right[0]]]'] },
    { half: 'B', step: 'scale', edit: ['const dk = Q[0].length;', 'const dk = Q.length;'] },
    { half: 'A', step: 'scale', edit: ['const weights = softmaxRows(scaled);', 'const weights = softmaxRows(scores);'] },
    { half: 'B', step: 'softmax', edit: ['return exps.map((e) => e / sum);', 'return exps;'] },
    { half: 'A', step: 'weighted-sum', edit: ["const output = einsum('ij,jc->ic', weights, V);", "const output = einsum('ij,jc->ic', weights, K);"] },
  ],
  '02': [
    { half: 'A', step: 'slice', edit: ['const hi = lo + headDimensions;', 'const hi = lo + numberOfHeads;'] },
    { half: 'B', step: 'scores', edit: ['const scores = matmul(qh, kh.T);', 'const scores = matmul(qh, qh.T);'] },
    { half: 'A', step: 'scale', edit: ['const scale = 1 / Math.sqrt(headDimensions);', 'const scale = 1 / Math.sqrt(C);'] },
    { half: 'B', step: 'softmax', edit: ['for (let j = 0; j < m; j++) S.set(i, j, S.get(i, j) / total);', 'for (let j = 0; j < m - 1; j++) S.set(i, j, S.get(i, j) / total);'] },
    { half: 'A', step: 'weighted-sum', edit: ['matmul(weights, vh, concat.view(lo, hi));', 'matmul(weights, vh.T, concat.view(lo, hi));'] },
    { half: 'B', step: 'concat', edit: ['matmul(weights, vh, concat.view(lo, hi));', 'matmul(weights, vh, concat.view(0, headDimensions));'] },
    { half: 'A', step: 'w-o', edit: ['matmul(concat, Tensor.fromRows(W_O))', 'matmul(concat, Tensor.fromRows(W_O).T)'] },
    { half: 'B', step: 'scale', edit: ['    for (let n = 0; n < scores.data.length; n++) scores.data[n] *= scale;\n    const weights = softmaxRowsInPlace(scores);\n', '    const weights = softmaxRowsInPlace(scores);\n    for (let n = 0; n < scores.data.length; n++) scores.data[n] *= scale;\n'] },
    { half: 'A', step: 'slice', edit: ['this.offset + colStart * this.strides[1]);', 'this.offset + colStart * this.strides[0]);'] },
  ],
  '03': [
    { half: 'A', step: 'mask', edit: ['for (let j = i + 1; j < T; j++) arena[S + i * T + j] = -Infinity;', 'for (let j = i; j < T; j++) arena[S + i * T + j] = -Infinity;'] },
    { half: 'B', step: 'scale', edit: ['const inv = 1 / Math.sqrt(dk);', 'const inv = 1 / Math.sqrt(dv);'] },
    { half: 'A', step: 'scores', edit: ['arena[layout.k + j * dk + c]', 'arena[layout.k + j * dv + c]'] },
    { half: 'B', step: 'mask', edit: ['arena[S + i * T + j] = -Infinity;', 'arena[S + i * T + j] = 0;'] },
    { half: 'A', step: 'softmax', edit: ['total += arena[W + i * T + j];', 'total += arena[S + i * T + j];'] },
    { half: 'B', step: 'weighted-sum', edit: ['w * arena[layout.v + j * dv + c]', 'w * arena[layout.v + i * dv + c]'] },
    { half: 'A', step: 'mask', edit: ['if (causal) {', 'if (!causal) {'] },
    { half: 'B', step: 'softmax', edit: ['    for (let j = 0; j < T; j++) arena[W + i * T + j] /= total;\n', ''] },
    { half: 'A', step: 'weighted-sum', edit: ['const w = arena[W + i * T + j];', 'const w = arena[W + j * T + i];'] },
    { half: 'B', step: 'scale', edit: ['  for (let n = 0; n < T * T; n++) arena[S + n] *= inv;\n', ''] },
  ],
  '04': [
    { half: 'A', step: 'project-K', edit: ['const k = np_matmul(X, W_K);', 'const k = np_matmul(X, np_transpose(W_K));'] },
    { half: 'B', step: 'slice', edit: ['const width = a[0].length / sections;', 'const width = sections;'] },
    { half: 'A', step: 'scale', edit: ['np_multiply(att, 1 / Math.sqrt(headDimensions))', 'np_multiply(att, 1 / Math.sqrt(n_embd))'] },
    { half: 'B', step: 'softmax', edit: ['const s = np_sum(e, -1);', 'const s = np_sum(e, 0);'] },
    { half: 'A', step: 'weighted-sum', edit: ['np_matmul(att_weights, v_heads[h])', 'np_matmul(np_transpose(att_weights), v_heads[h])'] },
    { half: 'B', step: 'project-V', edit: ['const v = np_matmul(X, W_V);', 'const v = np_matmul(X, W_K);'] },
    { half: 'A', step: 'concat', edit: ['const y = np_concatenate(out_heads, 1);', 'const y = np_concatenate(out_heads, 0);'] },
    { half: 'B', step: 'w-o', edit: ['return np_matmul(y, W_O);', 'return np_matmul(W_O, y);'] },
    { half: 'A', step: 'project-Q', edit: ['const q = np_matmul(X, W_Q);', 'const q = np_multiply(np_matmul(X, W_Q), 1 / Math.sqrt(headDimensions));'] },
    { half: 'B', step: 'scores', edit: ['const att = np_matmul(q_heads[h], np_transpose(k_heads[h]));', 'const att = np_matmul(q_heads[h], k_heads[h]);'] },
  ],
  '05': [
    { half: 'A', step: 'cache', edit: ['logits = keys.map((key) => {', 'logits = K.map((key) => {'] },
    { half: 'B', step: 'cache', edit: ['values.push(V[t]);', 'values.unshift(V[t]);'] },
    { half: 'A', step: 'slice', edit: ['s += Q[t][c] * key[c];', 's += Q[t][c - lo] * key[c];'] },
    { half: 'B', step: 'scale', edit: ['logits = logits.map((x) => x / Math.sqrt(d));', 'logits = logits.map((x) => x / Math.sqrt(C));'] },
    { half: 'A', step: 'softmax', edit: ['const exps = logits.map((x) => Math.exp(x - peak));', 'const exps = logits.map((x) => Math.exp(peak - x));'] },
    { half: 'B', step: 'weighted-sum', edit: ['row[c] += probs[j] * values[j][c];', 'row[c] += probs[j] * values[t][c];'] },
    { half: 'A', step: 'concat', edit: ['row[c] += probs[j]', 'row[c - base] += probs[j]'] },
    { half: 'B', step: 'cache', edit: ["        t += 1;\n        phase = t < T ? 'append' : 'done';\n        break;\n      case 'append':\n        keys.push(K[t]);\n        values.push(V[t]);\n", "        keys.push(K[t]);\n        values.push(V[t]);\n        t += 1;\n        phase = t < T ? 'append' : 'done';\n        break;\n      case 'append':\n"] },
    { half: 'A', step: 'scores', edit: ['s += Q[t][c] * key[c];', 's += Q[t][c] * keys[t][c];'] },
  ],
  '06': [
    { half: 'A', step: 'kv-head', edit: ['const kv = Math.floor(h / groupSize);', 'const kv = Math.round(h / groupSize);'] },
    { half: 'B', step: 'slice', edit: ['const qh = columns(Q, h * d, d);', 'const qh = columns(Q, kv * d, d);'] },
    { half: 'A', step: 'scale', edit: ['scaled(logits, 1 / Math.sqrt(d))', 'scaled(logits, 1 / Math.sqrt(C_kv))'] },
    { half: 'B', step: 'softmax', edit: ['yield exps.map((e) => e / total);', 'yield row.map((x) => x / total);'] },
    { half: 'A', step: 'weighted-sum', edit: ['out[c] += wj * values[j][c];', 'out[c] += wj * values[c][j];'] },
    { half: 'B', step: 'kv-head', edit: ['const vh = [...columns(V, kv * d, d)];', 'const vh = [...columns(V, h * d, d)];'] },
    { half: 'A', step: 'concat', edit: ['yield parts.flatMap((p) => p[t]);', 'yield parts.map((p) => p[t]);'] },
    { half: 'B', step: 'scores', edit: ['const kh = [...columns(K, kv * d, d)];', 'const kh = columns(K, kv * d, d);'] },
    { half: 'A', step: 'scale', edit: ['const weights = softmaxed(scaled(logits, 1 / Math.sqrt(d)));', 'const weights = scaled(softmaxed(logits), 1 / Math.sqrt(d));'] },
  ],
  '07': [
    { half: 'A', step: 'frequency', edit: ['base ** (-(2 * i) / d)', 'base ** (-(2 * (i + 1)) / d)'] },
    { half: 'B', step: 'position', edit: ['const position = offset + r;', 'const position = offset;'] },
    { half: 'A', step: 'pairs', edit: ['const a = start + i;\n      const b = start + i + half;', 'const a = start + 2 * i;\n      const b = start + 2 * i + 1;'] },
    { half: 'B', step: 'rotation', edit: ['R[b][a] = -sin;', 'R[b][a] = sin;'] },
    { half: 'A', step: 'rotation', edit: ['s + xi * M[i][j], 0)', 's + xi * M[j][i], 0)'] },
    { half: 'B', step: 'frequency', edit: ['inverseFrequencies(headDimensions, base);', 'inverseFrequencies(headDimensions, 10000);'] },
    { half: 'A', step: 'position', edit: ['const position = offset + r;', 'const position = offset + r + 1;'] },
    { half: 'B', step: 'pairs', edit: ['const start = h * d;', 'const start = h * half;'] },
    { half: 'A', step: 'rotation', edit: ['      R[b][b] = cos;\n', ''] },
  ],
  '08': [
    { half: 'A', step: 'mask', edit: ['const inside = j <= p && j > p - w;', 'const inside = j <= p && j >= p - w;'] },
    { half: 'B', step: 'scale', edit: ['const root = Math.sqrt(d);', 'const root = Math.sqrt(T);'] },
    { half: 'A', step: 'scores', edit: ['s += Qc[c][p] * Kc[c][j];', 's += Qc[c][j] * Kc[c][p];'] },
    { half: 'B', step: 'mask', edit: ['const inside = j <= p && j > p - w;', 'const inside = Math.abs(p - j) < w;'] },
    { half: 'A', step: 'softmax', edit: ['for (let j = 0; j < T; j++) P[j * T + p] /= total;', 'for (let j = 0; j < p; j++) P[j * T + p] /= total;'] },
    { half: 'B', step: 'weighted-sum', edit: ['out[p] += P[j * T + p] * col[j];', 'out[p] += P[p * T + j] * col[j];'] },
    { half: 'A', step: 'mask', edit: ['const w = window === undefined ? T : window;', 'const w = T;'] },
    { half: 'B', step: 'softmax', edit: ['      P[j * T + p] = Math.exp(S[j * T + p] - peak);\n      total += P[j * T + p];\n', '      total += P[j * T + p];\n      P[j * T + p] = Math.exp(S[j * T + p] - peak);\n'] },
    { half: 'A', step: 'weighted-sum', edit: ['const Oc = Vc.map((col) => {', 'const Oc = Kc.map((col) => {'] },
    { half: 'B', step: 'scale', edit: ['for (let n = 0; n < S.length; n++) S[n] /= root;', 'for (let n = 0; n < T; n++) S[n] /= root;'] },
  ],
  '09': [
    { half: 'A', step: 'mask', edit: ['(j > i ? -Infinity : 0)', '(j > i + 1 ? -Infinity : 0)'] },
    { half: 'B', step: 'slice', edit: ['      .dot(v.cols(from, to));', '      .dot(v.cols(0, d));'] },
    { half: 'A', step: 'scale', edit: ['.mul(1 / Math.sqrt(d))', '.mul(1 / Math.sqrt(C))'] },
    { half: 'B', step: 'w-o', edit: ['joined.dot(W_O ? Mat.of(W_O) : Mat.identity(C))', 'joined.dot(W_O ? Mat.of(W_O).t() : Mat.identity(C))'] },
    { half: 'A', step: 'mask', edit: ['      .add(mask)\n      .softmax()\n', '      .softmax()\n      .add(mask)\n'] },
    { half: 'B', step: 'softmax', edit: ['      .softmax()\n', '      .t().softmax().t()\n'] },
    { half: 'A', step: 'weighted-sum', edit: ['.dot(v.cols(from, to));', '.dot(k.cols(from, to));'] },
    { half: 'B', step: 'concat', edit: ['parts.flatMap((p) => p.rows[r])', 'parts.flatMap((p) => p.rows[0])'] },
  ],
};

/** Every slip as { number, index, half, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
