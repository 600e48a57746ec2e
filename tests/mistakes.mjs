// Realistic wrong answers: each is a challenge's solution.js with one small edit, and the
// mistake id the site must name for it. Used by tests/js/challenges.test.mjs (diagnosis in Node)
// and tests/e2e/site.test.mjs (the hint shown on the page).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const solution = (challenge) => readFileSync(join(ROOT, 'challenges', challenge, 'solution.js'), 'utf8');

const NO_MAX = ['const max = Math.max(...row);', 'const max = 0;'];
const NO_SCALE_01 = ['const scale = 1 / Math.sqrt(Q[0].length);', 'const scale = 1;'];
const AXIS = ['const weights = scaled.map(softmax);', 'const weights = transpose(transpose(scaled).map(softmax));'];

export const MISTAKES = [
  { challenge: '01-dot-product-attention', id: 'no-scaling', edit: NO_SCALE_01 },
  { challenge: '01-dot-product-attention', id: 'softmax-axis', edit: AXIS },
  { challenge: '01-dot-product-attention', id: 'no-max-subtraction', edit: NO_MAX },
  { challenge: '01-dot-product-attention', id: 'k-not-transposed', edit: ['matMul(Q, transpose(K))', 'matMul(Q, K)'] },
  { challenge: '01-dot-product-attention', id: 'v-transposed', edit: ['return matMul(weights, V);', 'return matMul(weights, transpose(V));'] },
  { challenge: '02-multi-head-attention', id: 'scale-by-C', edit: ['attention(Q_h, K_h, V_h, headDimensions)', 'attention(Q_h, K_h, V_h, C)'] },
  { challenge: '02-multi-head-attention', id: 'no-scaling', edit: ['const scale = 1 / Math.sqrt(width);', 'const scale = 1;'] },
  { challenge: '02-multi-head-attention', id: 'softmax-axis', edit: AXIS },
  { challenge: '02-multi-head-attention', id: 'rows-sliced', edit: ['return M.map((row) => row.slice(start, end));', 'return M.slice(start, end);'] },
  { challenge: '02-multi-head-attention', id: 'concat-vertical', edit: ['const concat = concatColumns(contexts);', 'const concat = contexts.flat();'] },
  { challenge: '02-multi-head-attention', id: 'k-not-transposed', edit: ['matMul(Q, transpose(K))', 'matMul(Q, K)'] },
  { challenge: '02-multi-head-attention', id: 'v-transposed', edit: ['return matMul(weights, V);', 'return matMul(weights, transpose(V));'] },
  { challenge: '02-multi-head-attention', id: 'no-max-subtraction', edit: NO_MAX },
  { challenge: '03-causal-mask', id: 'mask-ignored', edit: ['const weights = masked.map(softmax);', 'const weights = scaled.map(softmax);'] },
  { challenge: '03-causal-mask', id: 'mask-reversed', edit: ['causal && j > i ? -Infinity', 'causal && j < i ? -Infinity'] },
  { challenge: '03-causal-mask', id: 'mask-after-softmax', edit: ['const weights = masked.map(softmax);', 'const weights = scaled.map(softmax).map((row, i) => row.map((w, j) => (causal && j > i ? 0 : w)));'] },
  { challenge: '03-causal-mask', id: 'mask-with-zero', edit: ['causal && j > i ? -Infinity', 'causal && j > i ? 0'] },
  { challenge: '03-causal-mask', id: 'no-scaling', edit: NO_SCALE_01 },
  { challenge: '03-causal-mask', id: 'softmax-axis', edit: ['const weights = masked.map(softmax);', 'const weights = transpose(transpose(masked).map(softmax));'] },
  { challenge: '03-causal-mask', id: 'no-max-subtraction', edit: NO_MAX },
  { challenge: '04-learned-projections', id: 'no-projection', edit: ['const [Q, K, V] = [W_Q, W_K, W_V].map((W) => project(X, W));', 'const [Q, K, V] = [X, X, X];'] },
  { challenge: '04-learned-projections', id: 'weights-transposed', edit: ['return matMul(M, W);', 'return matMul(M, transpose(W));'] },
  { challenge: '04-learned-projections', id: 'w-o-skipped', edit: ['return project(concat, W_O);', 'return concat;'] },
  { challenge: '04-learned-projections', id: 'scale-by-C', edit: ['attention(Q_h, K_h, V_h, headDimensions)', 'attention(Q_h, K_h, V_h, C)'] },
  { challenge: '04-learned-projections', id: 'no-scaling', edit: ['const scale = 1 / Math.sqrt(width);', 'const scale = 1;'] },
  { challenge: '04-learned-projections', id: 'softmax-axis', edit: AXIS },
  { challenge: '04-learned-projections', id: 'k-not-transposed', edit: ['matMul(Q, transpose(K))', 'matMul(Q, K)'] },
  { challenge: '04-learned-projections', id: 'no-max-subtraction', edit: NO_MAX },
  { challenge: '05-kv-cache', id: 'cache-bypassed', edit: ['rows.push(attendToCache(Q[t], cache, numberOfHeads, headDimensions));', 'rows.push(attendToCache(Q[t], { keys: K, values: V }, numberOfHeads, headDimensions));'] },
  { challenge: '05-kv-cache', id: 'cache-overwritten', edit: ['cache.keys.push(key); cache.values.push(value);', 'cache.keys = [key]; cache.values = [value];'] },
  { challenge: '05-kv-cache', id: 'scale-by-C', edit: ['const scale = 1 / Math.sqrt(headDimensions);', 'const scale = 1 / Math.sqrt(numberOfHeads * headDimensions);'] },
  { challenge: '05-kv-cache', id: 'no-scaling', edit: ['const scale = 1 / Math.sqrt(headDimensions);', 'const scale = 1;'] },
  { challenge: '05-kv-cache', id: 'no-max-subtraction', edit: NO_MAX },
  { challenge: '06-grouped-query', id: 'kv-head-modulo', edit: ['const kvHead = Math.floor(head / group);', 'const kvHead = head % numberOfKVHeads;'] },
  { challenge: '06-grouped-query', id: 'kv-sliced-as-query', edit: ['const kvHead = Math.floor(head / group);', 'const kvHead = head;'] },
  { challenge: '06-grouped-query', id: 'scale-by-C', edit: ['attention(Q_h, K_h, V_h, headDimensions)', 'attention(Q_h, K_h, V_h, C)'] },
  { challenge: '06-grouped-query', id: 'no-scaling', edit: ['const scale = 1 / Math.sqrt(width);', 'const scale = 1;'] },
  { challenge: '06-grouped-query', id: 'softmax-axis', edit: AXIS },
  { challenge: '06-grouped-query', id: 'no-max-subtraction', edit: NO_MAX },
  { challenge: '07-rope', id: 'rope-interleaved', edit: ['const [ia, ib] = [start + i, start + i + half];', 'const [ia, ib] = [start + 2 * i, start + 2 * i + 1];'] },
  { challenge: '07-rope', id: 'rope-angle-exponent', edit: ['base ** ((-2 * i) / headDimensions)', 'base ** (-i / headDimensions)'] },
  { challenge: '07-rope', id: 'rope-offset-ignored', edit: ['const position = offset + r;', 'const position = r;'] },
  { challenge: '08-sliding-window', id: 'window-off-by-one', edit: ['const allowed = (p, j) => p - w < j && j <= p;', 'const allowed = (p, j) => p - w <= j && j <= p;'] },
  { challenge: '08-sliding-window', id: 'window-hides-self', edit: ['const allowed = (p, j) => p - w < j && j <= p;', 'const allowed = (p, j) => p - w < j && j < p;'] },
  { challenge: '08-sliding-window', id: 'window-ignored', edit: ['const allowed = (p, j) => p - w < j && j <= p;', 'const allowed = (p, j) => j <= p;'] },
  { challenge: '08-sliding-window', id: 'window-not-causal', edit: ['const allowed = (p, j) => p - w < j && j <= p;', 'const allowed = (p, j) => Math.abs(p - j) < w;'] },
  { challenge: '08-sliding-window', id: 'mask-with-zero', edit: ['allowed(p, j) ? x : -Infinity', 'allowed(p, j) ? x : 0'] },
  { challenge: '08-sliding-window', id: 'no-scaling', edit: NO_SCALE_01 },
  { challenge: '08-sliding-window', id: 'softmax-axis', edit: ['const weights = masked.map(softmax);', 'const weights = transpose(transpose(masked).map(softmax));'] },
  { challenge: '08-sliding-window', id: 'no-max-subtraction', edit: NO_MAX },
  { challenge: '09-attention-in-a-model', id: 'no-scaling', edit: ['const scale = 1 / Math.sqrt(width);', 'const scale = 1;'] },
  { challenge: '09-attention-in-a-model', id: 'scale-by-C', edit: ['sliceColumns(V, start, end), headDimensions, causal)', 'sliceColumns(V, start, end), C, causal)'] },
  { challenge: '09-attention-in-a-model', id: 'softmax-axis', edit: ['return matMul(masked.map(softmax), V);', 'return matMul(transpose(transpose(masked).map(softmax)), V);'] },
  { challenge: '09-attention-in-a-model', id: 'no-max-subtraction', edit: NO_MAX },
  { challenge: '09-attention-in-a-model', id: 'mask-ignored', edit: ['const masked = causal ? scores.map((row, i) => row.map((x, j) => (j <= i ? x : -Infinity))) : scores;', 'const masked = scores;'] },
  { challenge: '09-attention-in-a-model', id: 'mask-off-by-one', edit: ['(j <= i ? x : -Infinity)', '(j <= i + 1 ? x : -Infinity)'] },
  { challenge: '09-attention-in-a-model', id: 'mask-after-softmax', edit: ['return matMul(masked.map(softmax), V);', 'return matMul(scores.map(softmax).map((row, i) => row.map((w, j) => (causal && j > i ? 0 : w))), V);'] },
  { challenge: '09-attention-in-a-model', id: 'mask-with-zero', edit: ['(j <= i ? x : -Infinity)', '(j <= i ? x : 0)'] },
  { challenge: '09-attention-in-a-model', id: 'w-o-skipped', edit: ['return matMul(concat, W_O ?? identity(C));', 'return concat;'] },
];

/**
 * Challenge 10's wrong answers: it has no catalogue of variants (its function returns weights, not
 * matrices), so each mistake is named by what grade.js finds: `fails`, the checks that fail on every
 * config, and `hints`, how headHint reads each failing head's pattern ('elsewhere' or 'blurred').
 * Used by tests/package/cli.test.mjs (the command and the page give the same verdicts).
 */
export const WEIGHTS_MISTAKES = [
  { challenge: '10-induction-head', id: 'k-composition-broken', edit: ['two.W_K[previous(i)][token + i] = 1;', 'two.W_K[token + i][token + i] = 1;'], fails: ['induction', 'loss'], hints: { induction: 'elsewhere' } },
  { challenge: '10-induction-head', id: 'gain-too-small', edit: ['const sharp = 12 * Math.sqrt(C);', 'const sharp = 3;'], fails: ['previous-token', 'induction', 'loss'], hints: { 'previous-token': 'blurred', induction: 'blurred' } },
  { challenge: '10-induction-head', id: 'previous-token-is-self', edit: ['if (t >= 1) one.W_Q[position + t][position + t - 1] = sharp;', 'one.W_Q[position + t][position + t] = sharp;'], fails: ['previous-token', 'induction', 'loss'], hints: { 'previous-token': 'elsewhere', induction: 'elsewhere' } },
  { challenge: '10-induction-head', id: 'previous-token-not-written', edit: ['one.W_O[token + i][previous(i)] = 1;', 'one.W_O[token + i][token + i] = 1;'], fails: ['induction', 'loss'], hints: { induction: 'elsewhere' } },
  { challenge: '10-induction-head', id: 'unembed-reads-token', edit: ['W_U[output(i)][i] = 10;', 'W_U[token + i][i] = 10;'], fails: ['loss'], hints: {} },
];

/** The mistaken source; throws if the edit no longer applies to solution.js. */
export function mistakenSource({ challenge, edit: [from, to] }) {
  const source = solution(challenge);
  if (!source.includes(from)) throw new Error(`${challenge}/solution.js no longer contains ${JSON.stringify(from)}`);
  return source.replace(from, to);
}
