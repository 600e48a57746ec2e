// The site's one module of matrix helpers: small plain-JavaScript matrices (arrays of rows) for the
// diagnosis's probe inputs, readings and mistake models (diagnosis/, variants.js), the walkthrough, and how
// a number of a matrix is written (the pages, and `attention-lab check`, which ships this file).
// Expected values never come from here: they come from the package. Pure functions, no DOM.

/** Decimals shown for a number. */
const DIGITS = 4;

/** [0, 1, …, n − 1]. */
export const range = (n) => Array.from({ length: n }, (_, i) => i);

/** A rows×cols matrix of zeros. */
export const zeros = (rows, cols) => range(rows).map(() => range(cols).map(() => 0));

/** The n×n identity. */
export const identity = (n) => range(n).map((i) => range(n).map((j) => (i === j ? 1 : 0)));

/** Mᵀ. */
export const transpose = (M) => M[0].map((_, j) => M.map((row) => row[j]));

/** Every entry of M times s. */
export const scaleBy = (M, s) => M.map((row) => row.map((x) => x * s));

/** Columns start … end − 1 of every row. */
export const sliceColumns = (M, start, end) => M.map((row) => row.slice(start, end));

/** Matrices with the same rows, side by side (their columns concatenated). */
export const concatColumns = (parts) => parts[0].map((_, r) => parts.flatMap((p) => p[r]));

/** Columns `cols` (a list of indices) of every row. */
export const columns = (M, cols) => M.map((row) => cols.map((c) => row[c]));

/** Row n of the identity: 1 in column c, 0 elsewhere. */
export const oneHot = (n, c) => range(n).map((k) => (k === c ? 1 : 0));

/** The mean of each column, as a one-row matrix. */
export const columnMeans = (M) => [M[0].map((_, c) => M.reduce((sum, row) => sum + row[c], 0) / M.length)];

/** M with every entry outside the d×d diagonal blocks set to 0. */
export const blockDiagonal = (M, d) => M.map((row, r) => row.map((x, c) => (Math.floor(r / d) === Math.floor(c / d) ? x : 0)));

/** Whether M is exactly the identity. */
export const isIdentity = (M) => M.every((row, i) => row.every((x, j) => x === (i === j ? 1 : 0)));

/** Whether M is an array of `rows` arrays of `cols` entries each. */
export const isMatrix = (M, rows, cols) => Array.isArray(M) && M.length === rows && M.every((row) => Array.isArray(row) && row.length === cols);

/** Whether every entry of M is a finite number. */
export const finiteMatrix = (M) => M.every((row) => row.every((x) => typeof x === 'number' && Number.isFinite(x)));

/** `actual` has `expected`'s shape and each entry is within `tolerance` of it (relative to max(1, |expected|)); NaN and ±∞ never match. */
export function closeMatrix(actual, expected, tolerance = 1e-8) {
  if (!isMatrix(actual, expected.length, expected[0].length)) return false;
  return actual.every((row, r) => row.every((x, c) => typeof x === 'number' && Number.isFinite(x) && Math.abs(x - expected[r][c]) <= tolerance * Math.max(1, Math.abs(expected[r][c]))));
}

/** A·B, or null when the inner sizes differ (or either is missing). */
export function matMul(A, B) {
  if (!A || !B || A[0].length !== B.length) return null;
  return A.map((row) => B[0].map((_, j) => row.reduce((sum, a, k) => sum + a * B[k][j], 0)));
}

/** The softmax of one row: its maximum subtracted first unless `stable` is false (a mistake's model). */
export function softmaxRow(row, stable = true) {
  const max = stable ? Math.max(...row) : 0;
  const exps = row.map((x) => Math.exp(x - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
}

/** A number as shown: fixed decimals, a real minus sign, NaN and ±∞ spelled out. */
export function formatNumber(x) {
  if (typeof x !== 'number') return String(x);
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '∞' : '−∞';
  const text = Math.abs(x) >= 1e5 ? x.toExponential(2) : x.toFixed(DIGITS);
  return text.replace(/^-(?=.*[1-9])/, '−').replace(/^-/, '');
}
