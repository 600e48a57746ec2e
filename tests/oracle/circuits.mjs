// An independent reference for the Transformer's circuits (issue 32), in plain JS f64, written from
// the formulas in docs/api.md (and the paper: Elhage et al. 2021), never from the Rust code.
//
// Row convention (x·W). Head i of layer l, d = C/h: W_Q^i, W_K^i, W_V^i its columns i·d … (i+1)·d of
// W_Q, W_K, W_V; W_O^i its rows i·d … (i+1)·d of W_O.
//   W_QK = W_Q^i·(W_K^i)ᵀ, W_OV = W_V^i·W_O^i                          (C × C)
//   composition(A, B) = ‖A·B‖_F / (‖A‖_F·‖B‖_F); Q: B = W_QK(l2, j), K: W_QK(l2, j)ᵀ, V: W_OV(l2, j)
//   OV circuit W_E·W_OV·W_U, QK circuit W_E·W_QK·W_Eᵀ, positional W_pos·W_QK·W_posᵀ
//   copying score Σ Re λ / Σ |λ| over the eigenvalues of the whole V × V OV circuit
// The eigenvalues come from ml-matrix's EigenvalueDecomposition (a port of JAMA's Hessenberg + real
// Schur QR), on the full V × V matrix; the package uses nalgebra on a d × d factored form, so the two
// share neither code nor the shortcut. Sums are compensated (reference.mjs's `sum`).
import { Matrix, EigenvalueDecomposition } from 'ml-matrix';
import { sum } from './reference.mjs';
import { splitMix64 } from './layer.mjs';

const transpose = (A) => A[0].map((_, j) => A.map((row) => row[j]));
const matmul = (A, B) => {
  const Bt = transpose(B);
  return A.map((row) => Bt.map((col) => sum(row.map((x, k) => x * col[k]))));
};
const frobenius = (A) => Math.sqrt(sum(A.flat().map((x) => x * x)));

/** ‖A·B‖_F / (‖A‖_F·‖B‖_F). */
export const composition = (A, B) => frobenius(matmul(A, B)) / (frobenius(A) * frobenius(B));

/** `{ QK, OV }` of head `i` of layer `l` from getWeights()' tree `P`. */
export function headMatrices(P, l, i, numHeads) {
  const L = P.layers[l];
  const C = L.W_Q.length;
  const d = C / numHeads;
  const columns = (W) => W.map((row) => row.slice(i * d, (i + 1) * d));
  return { QK: matmul(columns(L.W_Q), transpose(columns(L.W_K))), OV: matmul(columns(L.W_V), L.W_O.slice(i * d, (i + 1) * d)) };
}

/** `{ q, k, v }` indexed [l1][i][l2][j], NaN where l1 ≥ l2. */
export function compositionScores(P, numHeads) {
  const nL = P.layers.length;
  const heads = P.layers.map((_, l) => Array.from({ length: numHeads }, (__, i) => headMatrices(P, l, i, numHeads)));
  const table = (score) => heads.map((layer, l1) => layer.map((A) => heads.map((later, l2) => later.map((B) => (l1 < l2 ? score(A, B) : NaN)))));
  return {
    q: table((A, B) => composition(A.OV, B.QK)),
    k: table((A, B) => composition(A.OV, transpose(B.QK))),
    v: table((A, B) => composition(A.OV, B.OV)),
    layers: nL,
  };
}

/** The eigenvalues of a square matrix: { re, im }. */
export function eigenvalues(M) {
  const e = new EigenvalueDecomposition(new Matrix(M), { assumeSymmetric: false });
  return { re: e.realEigenvalues, im: e.imaginaryEigenvalues };
}

/** `{ ov, qk, qkPositional, copyingScore }` of head `head` of layer `layer` (matrices as number[][]). */
export function circuits(P, config, { layer, head }) {
  const { QK, OV } = headMatrices(P, layer, head, config.numHeads);
  const ov = matmul(matmul(P.W_E, OV), P.W_U);
  const qk = matmul(matmul(P.W_E, QK), transpose(P.W_E));
  const positions = config.positions ?? 'shortformer';
  const qkPositional = positions === 'shortformer' || positions === 'learned' ? matmul(matmul(P.W_pos, QK), transpose(P.W_pos)) : null;
  const { re, im } = eigenvalues(ov);
  const absolute = sum(re.map((r, k) => Math.hypot(r, im[k])));
  return { ov, qk, qkPositional, copyingScore: absolute === 0 ? NaN : sum(re) / absolute };
}

/** The documented baseline: the mean over 200 pairs drawn from SplitMix64(0x0C1CC017) of the score of
 * A = G1·G2, B = G3·G4 (G1, G3: C × d; G2, G4: d × C; entries 2u − 1, row by row, in that order). */
export function baseline(C, d, samples = 200) {
  const rng = splitMix64(0x0C1CC017n);
  const draw = (r, c) => Array.from({ length: r }, () => Array.from({ length: c }, () => 2 * rng.nextUnit() - 1));
  let total = 0;
  for (let s = 0; s < samples; s += 1) {
    const A = matmul(draw(C, d), draw(d, C));
    const B = matmul(draw(C, d), draw(d, C));
    total += composition(A, B);
  }
  return total / samples;
}
