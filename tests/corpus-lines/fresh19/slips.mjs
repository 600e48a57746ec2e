// A nineteenth held-out batch for the first wrong line (issue 28), written blind (without reading the
// diagnosis, its tests or any measurement) and before the diagnosis was run on any slip of it, other than
// to check that every base passes all of its challenge's tests and every slip fails at least one: a right
// answer per challenge 01–09 in a style none of the corpus, fresh/ … fresh18/ has for that challenge
// (every matrix a lazy view { rows, cols, at(i, j) }, transposed(), mapped() and product() composing
// views without computing anything until materialise(), every sum Kahan-compensated; the heads folded
// into the rows, Q, K and V stacked into one (H·T)×d matrix head after head, each stacked row scoring
// only its own head's block of keys, and the stack unfolded back to T×C before W_O; the scores in one
// lower-triangular packed Float64Array, row i at offset i(i + 1)/2 with i + 1 entries when causal (i·T
// and T without the mask), softmaxed in place through subarray views, a masked key never stored; a port
// of a PyTorch module tree, a Linear class with forward(X) checking its own weight and a SelfAttention
// module owning q_proj, k_proj, v_proj and o_proj; a coroutine, a function* decoder keeping the cache in
// its locals and fed one token per gen.next({ q, k, v }), appending before it answers; the group folded
// into the sequence as fast GQA kernels do, the group's query heads stacked as group·T rows against
// their key/value head's T keys and scattered back by r / T and r % T; each rotate-half pair turned in
// polar form, radius by Math.hypot and phase by Math.atan2, rebuilt from the phase plus the angle; the
// window a relative-position bias table as in T5 or ALiBi, 0 or −Infinity by the distance p − j shifted
// by T − 1, added to every score; a streaming FlashAttention-like softmax per head, a running maximum,
// denominator and output rescaled by exp(m_old − m_new), the causal stream stopping after key i), and
// one- or two-line slips of it as a learner would make them: 105 in all (11 for 01, 03 and 04, 12 for
// each of 02 and 05–09), 72 of them more than a one-token change (a term, a call or a line left out, a
// statement moved, a wrong index, variable, axis or head offset, an off-by-one in a bound or a window,
// two things swapped, a wrong query/key-value head mapping, the wrong partner of a pair). Each slip: the
// step at fault, the edit [from, to], and the half (A or B, alternating within a challenge, fixed before
// any run: rules may be fitted on half A's misses only, half B measures whether they generalise); the
// line at fault is the line of `from` in fresh19/NN.js.
import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { half: 'A', step: 'scores', edit: ['const scores = product(q, transposed(k));', 'const scores = product(q, k);'] },
    { half: 'B', step: 'scale', edit: ['const scaled = mapped(scores, (x) => x / Math.sqrt(dk));', 'const scaled = mapped(scores, (x) => x / dk);'] },
    { half: 'A', step: 'softmax', edit: ['for (let j = 0; j < A.cols; j++) exps.push(Math.exp(A.at(i, j) - top));', 'for (let j = 0; j < A.cols; j++) exps.push(Math.exp(A.at(i, j)));'] },
    { half: 'B', step: 'weighted-sum', edit: ['const out = product(weights, v);', 'const out = product(weights, k);'] },
    { half: 'A', step: 'scores', edit: ['at: (i, j) => kahanSum(A.cols, (n) => A.at(i, n) * B.at(n, j))', 'at: (i, j) => kahanSum(A.cols, (n) => A.at(i, n) * B.at(j, n))'] },
    { half: 'B', step: 'softmax', edit: ['const total = kahanSum(A.cols, (j) => exps[j]);', 'const total = kahanSum(A.cols - 1, (j) => exps[j]);'] },
    { half: 'A', step: 'scale', edit: ['const dk = q.cols;', 'const dk = q.rows;'] },
    { half: 'B', step: 'softmax', edit: ['rows.push(exps.map((e) => e / total));', 'rows.push(exps);'] },
    { half: 'A', step: 'weighted-sum', edit: ['return materialise(out);', 'return materialise(weights);'] },
    { half: 'B', step: 'scale', edit: ['const weights = softmaxRows(scaled);', 'const weights = softmaxRows(scores);'] },
    { half: 'A', step: 'weighted-sum', edit: ['Array.from({ length: A.cols }, (_, j) => A.at(i, j))', 'Array.from({ length: A.cols }, (_, j) => A.at(j, i))'] },
  ],
  '02': [
    { half: 'A', step: 'slice', edit: ['for (const row of M) stack.push(row.slice(h * d, h * d + d));', 'for (const row of M) stack.push(row.slice(h, h + d));'] },
    { half: 'B', step: 'slice', edit: ['const block = Math.floor(r / T) * T;', 'const block = Math.floor(r / T);'] },
    { half: 'A', step: 'scores', edit: ['for (let c = 0; c < headDimensions; c++) s += q[c] * ks[j][c];', 'for (let c = 0; c < headDimensions; c++) s += q[c] * qs[j][c];'] },
    { half: 'B', step: 'scale', edit: ['logits.push(s * scale);', 'logits.push(s);'] },
    { half: 'A', step: 'softmax', edit: ['const total = exps.reduce((a, b) => a + b, 0);', 'const total = exps.reduce((a, b) => a + b, 1);'] },
    { half: 'B', step: 'weighted-sum', edit: ['out[c] += (e / total) * vs[block + n][c];', 'out[c] += (e / total) * vs[n][c];'] },
    { half: 'A', step: 'concat', edit: ['for (let h = 0; h < heads; h++) row.push(...stack[h * T + t]);', 'for (let h = 0; h < heads; h++) row.push(...stack[t * heads + h]);'] },
    { half: 'B', step: 'w-o', edit: ['row.reduce((s, x, i) => s + x * W[i][o], 0)', 'row.reduce((s, x, i) => s + x * W[o][i], 0)'] },
    { half: 'A', step: 'scale', edit: ['const scale = 1 / Math.sqrt(headDimensions);', 'const scale = 1 / Math.sqrt(C);'] },
    { half: 'B', step: 'softmax', edit: ['const exps = logits.map((x) => Math.exp(x - top));', 'const exps = logits.map((x) => Math.exp(x) - top);'] },
    { half: 'A', step: 'concat', edit: ['for (let t = 0; t < T; t++) {\n    const row = [];', 'for (let t = 0; t < T - 1; t++) {\n    const row = [];'] },
    { half: 'B', step: 'slice', edit: ['for (let h = 0; h < heads; h++) {\n    for (const row of M) stack.push(', 'for (const row of M) {\n    for (let h = 0; h < heads; h++) stack.push('] },
  ],
  '03': [
    { half: 'A', step: 'mask', edit: ['const rowLength = (i) => (causal ? i + 1 : T);', 'const rowLength = (i) => (causal ? i : T);'] },
    { half: 'B', step: 'mask', edit: ['const rowStart = (i) => (causal ? (i * (i + 1)) / 2 : i * T);', 'const rowStart = (i) => (causal ? (i * (i - 1)) / 2 : i * T);'] },
    { half: 'A', step: 'scores', edit: ['for (let c = 0; c < dk; c++) dot += Q[i][c] * K[j][c];', 'for (let c = 0; c < dk; c++) dot += Q[i][c] * K[i][c];'] },
    { half: 'B', step: 'scale', edit: ['packed[start + j] = dot / Math.sqrt(dk);', 'packed[start + j] = dot;'] },
    { half: 'A', step: 'softmax', edit: ['row[j] = Math.exp(row[j] - max);', 'row[j] = Math.exp(row[j]) - max;'] },
    { half: 'B', step: 'softmax', edit: ['for (let j = 0; j < row.length; j++) row[j] /= sum;', ''] },
    { half: 'A', step: 'weighted-sum', edit: ['for (let c = 0; c < dv; c++) mixed[c] += w * V[j][c];', 'for (let c = 0; c < dv; c++) mixed[c] += w * V[i][c];'] },
    { half: 'B', step: 'mask', edit: ['const rowLength = (i) => (causal ? i + 1 : T);', 'const rowLength = (i) => i + 1;'] },
    { half: 'A', step: 'weighted-sum', edit: ['const w = packed[start + j];', 'const w = packed[j];'] },
    { half: 'B', step: 'softmax', edit: ['const row = packed.subarray(rowStart(i), rowStart(i) + rowLength(i));', 'const row = packed.subarray(rowStart(i), rowStart(i) + T);'] },
    { half: 'A', step: 'scale', edit: ['packed[start + j] = dot / Math.sqrt(dk);', 'packed[start + j] = dot / Math.sqrt(T);'] },
  ],
  '04': [
    { half: 'A', step: 'project-K', edit: ["this.k_proj = new Linear('W_K', W_K, this.C);", "this.k_proj = new Linear('W_K', W_Q, this.C);"] },
    { half: 'B', step: 'project-V', edit: ['const v = this.v_proj.forward(X);', 'const v = X;'] },
    { half: 'A', step: 'slice', edit: ['const hi = lo + this.d;', 'const hi = this.d;'] },
    { half: 'B', step: 'scores', edit: ['qi.reduce((s, x, c) => s + x * kj[c], 0) / scale', 'qi.reduce((s, x, c) => s + x * qi[c], 0) / scale'] },
    { half: 'A', step: 'scale', edit: ['const scale = Math.sqrt(this.d);', 'const scale = Math.sqrt(this.C);'] },
    { half: 'B', step: 'softmax', edit: ['const Z = e.reduce((a, b) => a + b, 0);', 'const Z = Math.max(...e);'] },
    { half: 'A', step: 'weighted-sum', edit: ['p.reduce((s, w, j) => s + w * v[j][c], 0)', 'p.reduce((s, w, j) => s + w * v[c][j], 0)'] },
    { half: 'B', step: 'concat', edit: ['const concat = X.map((_, t) => outputs.flatMap((o) => o[t]));', 'const concat = outputs.flat();'] },
    { half: 'A', step: 'w-o', edit: ['return this.o_proj.forward(concat);', 'return concat;'] },
    { half: 'B', step: 'project-Q', edit: ['const q = this.q_proj.forward(X);', 'const q = this.k_proj.forward(X);'] },
    { half: 'A', step: 'softmax', edit: ['const e = logits.map((z) => Math.exp(z - peak));', 'const e = logits.map((z) => Math.exp(peak - z));'] },
  ],
  '05': [
    { half: 'A', step: 'cache', edit: ['keys.push(token.k);', 'keys.push(token.q);'] },
    { half: 'B', step: 'cache', edit: ['values.push(token.v);', 'values[0] = token.v;'] },
    { half: 'A', step: 'slice', edit: ['const q = token.q.slice(off, off + headDimensions);', 'const q = token.q.slice(0, headDimensions);'] },
    { half: 'B', step: 'scores', edit: ['for (let c = 0; c < headDimensions; c++) s += q[c] * key[off + c];', 'for (let c = 0; c < headDimensions; c++) s += q[c] * key[c];'] },
    { half: 'A', step: 'scale', edit: ['return s * scale;', 'return s;'] },
    { half: 'B', step: 'softmax', edit: ['const z = ex.reduce((a, b) => a + b, 0);', 'const z = ex.length;'] },
    { half: 'A', step: 'weighted-sum', edit: ['acc += (ex[n] / z) * values[n][off + c];', 'acc += (ex[n] / z) * values[n][c];'] },
    { half: 'B', step: 'concat', edit: ['row.push(acc);', 'row.unshift(acc);'] },
    { half: 'A', step: 'cache', edit: ['gen.next({ q: Q[t], k: K[t], v: V[t] });', 'gen.next({ q: Q[t], k: K[0], v: V[0] });'] },
    { half: 'B', step: 'scale', edit: ['const scale = 1 / Math.sqrt(headDimensions);', 'const scale = 1 / headDimensions;'] },
    { half: 'A', step: 'softmax', edit: ['const ex = logits.map((x) => Math.exp(x - m));', 'const ex = logits.map((x) => Math.exp(x) - m);'] },
    { half: 'B', step: 'weighted-sum', edit: ['for (let c = 0; c < headDimensions; c++) {\n        let acc = 0;', 'let acc = 0;\n      for (let c = 0; c < headDimensions; c++) {'] },
  ],
  '06': [
    { half: 'A', step: 'kv-head', edit: ['const qCol = (g * group + m) * d;', 'const qCol = (m * numberOfKVHeads + g) * d;'] },
    { half: 'B', step: 'slice', edit: ['const keys = K.map((row) => row.slice(kvCol, kvCol + d));', 'const keys = K.map((row) => row.slice(kvCol, kvCol + d * group));'] },
    { half: 'A', step: 'kv-head', edit: ['const kvCol = g * d;', 'const kvCol = g * group * d;'] },
    { half: 'B', step: 'scores', edit: ['k.reduce((acc, x, c) => acc + x * q[c], 0) / scale', 'k.reduce((acc, x, c) => acc + x * k[c], 0) / scale'] },
    { half: 'A', step: 'scale', edit: ['const scale = Math.sqrt(d);', 'const scale = Math.sqrt(d * group);'] },
    { half: 'B', step: 'softmax', edit: ['for (let c = 0; c < d; c++) o[c] += (w[j] / sum) * vals[j][c];', 'for (let c = 0; c < d; c++) o[c] += w[j] * vals[j][c];'] },
    { half: 'A', step: 'weighted-sum', edit: ['for (let j = 0; j < vals.length; j++) {', 'for (let j = 0; j < vals.length - 1; j++) {'] },
    { half: 'B', step: 'concat', edit: ['const col = (g * group + m) * d;', 'const col = (g + m) * d;'] },
    { half: 'A', step: 'concat', edit: ['const m = Math.floor(r / T);\n      const t = r % T;', 'const m = r % group;\n      const t = Math.floor(r / group);'] },
    { half: 'B', step: 'slice', edit: ['for (const row of Q) stacked.push(row.slice(qCol, qCol + d));', 'for (const row of Q) stacked.push(row.slice(qCol + 1, qCol + d + 1));'] },
    { half: 'A', step: 'softmax', edit: ['const w = s.map((x) => Math.exp(x - hi));', 'const w = s.map((x) => Math.exp(hi - x));'] },
    { half: 'B', step: 'weighted-sum', edit: ['const mixed = attend(stacked, keys, vals, d);', 'const mixed = attend(stacked, keys, keys, d);'] },
  ],
  '07': [
    { half: 'A', step: 'position', edit: ['const position = offset + r;', 'const position = r;'] },
    { half: 'B', step: 'frequency', edit: ['frequencies.push(Math.pow(base, (-2 * i) / headDimensions));', 'frequencies.push(Math.pow(base, -i / headDimensions));'] },
    { half: 'A', step: 'pairs', edit: ['const b = X[r][first + i + half];', 'const b = X[r][first + i + 1];'] },
    { half: 'B', step: 'rotation', edit: ['turned[first + i] = radius * Math.cos(phase + theta);', 'turned[first + i] = radius * Math.cos(phase - theta);'] },
    { half: 'A', step: 'rotation', edit: ['const phase = Math.atan2(b, a);', 'const phase = Math.atan2(a, b);'] },
    { half: 'B', step: 'pairs', edit: ['const first = h * headDimensions;', 'const first = h * half;'] },
    { half: 'A', step: 'frequency', edit: ['for (let i = 0; i < half; i++) frequencies.push(', 'for (let i = 1; i <= half; i++) frequencies.push('] },
    { half: 'B', step: 'rotation', edit: ['const theta = position * frequencies[i];', 'const theta = position + frequencies[i];'] },
    { half: 'A', step: 'position', edit: ['const position = offset + r;', 'const position = offset + r + 1;'] },
    { half: 'B', step: 'rotation', edit: ['turned[first + i + half] = radius * Math.sin(phase + theta);', 'turned[first + i + half] = radius * Math.cos(phase + theta);'] },
    { half: 'A', step: 'rotation', edit: ['const radius = Math.hypot(a, b);', 'const radius = Math.hypot(a);'] },
    { half: 'B', step: 'frequency', edit: ['frequencies.push(Math.pow(base, (-2 * i) / headDimensions));', 'frequencies.push(Math.pow(base, (-2 * i) / half));'] },
  ],
  '08': [
    { half: 'A', step: 'mask', edit: ['const visible = dist >= 0 && dist < reach;', 'const visible = dist >= 0 && dist <= reach;'] },
    { half: 'B', step: 'mask', edit: ['scores.push(s / norm + bias[p - j + T - 1]);', 'scores.push(s / norm + bias[j - p + T - 1]);'] },
    { half: 'A', step: 'scores', edit: ['for (let c = 0; c < d; c++) s += Q[p][c] * K[j][c];', 'for (let c = 0; c < d; c++) s += Q[p][c] * K[p][c];'] },
    { half: 'B', step: 'scale', edit: ['const norm = Math.sqrt(d);', 'const norm = d;'] },
    { half: 'A', step: 'mask', edit: ['const reach = window ?? T;', 'const reach = window ?? 1;'] },
    { half: 'B', step: 'softmax', edit: ['for (const s of scores) best = Math.max(best, s);', 'for (const s of scores) best = s;'] },
    { half: 'A', step: 'weighted-sum', edit: ['for (let c = 0; c < d; c++) row[c] += (ws[j] / den) * V[j][c];', 'for (let c = 0; c < d; c++) row[c] += (ws[j] / den) * V[p][c];'] },
    { half: 'B', step: 'mask', edit: ['for (let dist = -(T - 1); dist <= T - 1; dist++) {', 'for (let dist = 0; dist <= T - 1; dist++) {'] },
    { half: 'A', step: 'softmax', edit: ['for (const w of ws) den += w;', 'for (const w of scores) den += w;'] },
    { half: 'B', step: 'scale', edit: ['scores.push(s / norm + bias[p - j + T - 1]);', 'scores.push(s + bias[p - j + T - 1]);'] },
    { half: 'A', step: 'weighted-sum', edit: ['if (ws[j] === 0) continue;', 'if (ws[j] === 0) break;'] },
    { half: 'B', step: 'softmax', edit: ['const ws = scores.map((s) => Math.exp(s - best));', 'const ws = scores.map((s) => Math.exp(s) - best);'] },
  ],
  '09': [
    { half: 'A', step: 'mask', edit: ['const last = causal ? i : T - 1;', 'const last = causal ? i - 1 : T - 1;'] },
    { half: 'B', step: 'slice', edit: ['for (let c = 0; c < headDimensions; c++) s += Q[i][lo + c] * K[j][lo + c];', 'for (let c = 0; c < headDimensions; c++) s += Q[i][lo + c] * K[j][c];'] },
    { half: 'A', step: 'scale', edit: ['s *= scale;', ''] },
    { half: 'B', step: 'softmax', edit: ['const shrink = Math.exp(m - mNew);', 'const shrink = Math.exp(mNew - m);'] },
    { half: 'A', step: 'softmax', edit: ['l = l * shrink + p;', 'l = l + p;'] },
    { half: 'B', step: 'weighted-sum', edit: ['acc[c] = acc[c] * shrink + p * V[j][lo + c];', 'acc[c] = acc[c] + p * V[j][lo + c];'] },
    { half: 'A', step: 'softmax', edit: ['m = mNew;', ''] },
    { half: 'B', step: 'concat', edit: ['for (let c = 0; c < headDimensions; c++) joined[i][lo + c] = acc[c] / l;', 'for (let c = 0; c < headDimensions; c++) joined[i][c] = acc[c] / l;'] },
    { half: 'A', step: 'w-o', edit: ['projected[o] += row[r] * W_O[r][o];', 'projected[o] += row[r] * W_O[o][r];'] },
    { half: 'B', step: 'mask', edit: ['for (let j = 0; j <= last; j++) {', 'for (let j = 0; j < last; j++) {'] },
    { half: 'A', step: 'scores', edit: ['s += Q[i][lo + c] * K[j][lo + c];', 's += Q[j][lo + c] * K[i][lo + c];'] },
    { half: 'B', step: 'weighted-sum', edit: ['acc[c] = acc[c] * shrink + p * V[j][lo + c];', 'acc[c] = acc[c] * shrink + p * V[i][lo + c];'] },
  ],
};

/** Every slip as { number, index, half, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
