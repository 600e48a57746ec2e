// The composition scores of two layers' heads (the package's Transformer.compositionScores; challenge 11's
// compositionScores(weights, { numberOfHeads, kind })): the reference steps a right answer
// builds (the first wrong line aligns the learner's numbers with them, reference.js; the call form is
// forms.js's `composition`), and the probe check
// that reads the scores themselves. A form, not a challenge: any function of this signature uses it.
//
// The steps, in order (steps.js): the head's slices of the weights (columns h·d … (h+1)·d − 1 of W_Q, W_K
// and W_V, the same rows of W_O), W_OV = W_V^h·W_O^h of each first-layer head (A), W_QK = W_Q^h·(W_K^h)ᵀ
// of each second-layer head (K only: its reader is the transpose), the reader the kind picks (B: W_QK for
// q, W_QKᵀ for k, W_OV of the second layer for v), the products A·B, the Frobenius norms ‖A·B‖, ‖A‖, ‖B‖,
// and the scores ‖A·B‖ / (‖A‖·‖B‖). The slices, the circuits and the norms are the formula's (the package
// keeps no trace of them); the scores are the package's.
import { closeMatrix, isMatrix } from '../matrix.js';
import { describeProbe, outputsOf } from './probes.js';
import { thrown } from './checks.js';
import { fmt } from './words.js';

const range = (n) => Array.from({ length: n }, (_, i) => i);
const transpose = (M) => M[0].map((_, j) => M.map((row) => row[j]));
const matMul = (A, B) => A.map((row) => B[0].map((_, j) => row.reduce((sum, a, k) => sum + a * B[k][j], 0)));
const norm = (M) => Math.sqrt(M.reduce((sum, row) => sum + row.reduce((s, x) => s + x * x, 0), 0));
const NAMES = ['W_Q', 'W_K', 'W_V', 'W_O'];
const KIND_NAMES = { q: 'Q-composition', k: 'K-composition', v: 'V-composition' };
const READER_NAMES = { q: 'W_QK', k: 'W_QKᵀ', v: 'W_OV of the second layer' };

/** The package's scores of every kind on `weights` (float64): { q, k, v }, numberOfHeads × numberOfHeads each. */
export function packageCompositionScores(lab, weights, numberOfHeads) {
  const C = weights.layers[0].W_Q.length;
  const model = new lab.Transformer({ vocabSize: 2, contextLength: 2, embedDim: C, numHeads: numberOfHeads, numLayers: 2, dtype: 'float64' });
  try {
    model.setWeights({ layers: weights.layers });
    const scores = model.compositionScores();
    const pick = (kind) => scores[kind][0].map((row) => row[1]);
    return { q: pick('q'), k: pick('k'), v: pick('v') };
  } finally {
    model.free();
  }
}

/** The products a[k]·b[k] of A·B and their running sums (numbers a right answer builds on the way). */
function productSums(A, B, into) {
  for (const row of A) {
    for (let j = 0; j < B[0].length; j++) {
      let sum = 0;
      row.forEach((a, k) => { const p = a * B[k][j]; sum += p; into.push(p, sum); });
    }
  }
}

/** The squares of a norm, their running sums (per row, and over the rows) and the sum before its root. */
function normParts(M, into) {
  let total = 0;
  for (const row of M) {
    let sum = 0;
    for (const x of row) { sum += x * x; into.push(x * x, sum, total + sum); }
    total += sum;
  }
  into.push(total);
}

/**
 * The reference steps of a call ([weights, { numberOfHeads, kind }]): { steps, inputs, parts } as
 * reference.js's forms give them. Steps of a head carry `head` as written in the findings ('L1 h0').
 */
export function compositionReference([weights, { numberOfHeads, kind }], lab) {
  const layers = weights.layers;
  const C = layers[0].W_Q.length;
  const d = C / numberOfHeads;
  const heads = range(numberOfHeads);
  const columns = (M, h) => M.map((row) => row.slice(h * d, (h + 1) * d));
  const rows = (M, h) => M.slice(h * d, (h + 1) * d);
  const inputs = layers.flatMap((layer) => NAMES.map((name) => layer[name]));
  const source = inputs.flatMap((M) => M.flat());
  const steps = [];
  const known = [];
  // the slices the kind reads are steps; the others a right answer may build all the same (known)
  const reads = [['W_V', 'W_O'], kind === 'v' ? ['W_V', 'W_O'] : ['W_Q', 'W_K']];
  layers.forEach((layer, l) => heads.forEach((h) => {
    for (const name of NAMES) {
      const slice = name === 'W_O' ? rows(layer[name], h) : columns(layer[name], h);
      if (reads[l].includes(name)) steps.push({ step: 'slice', head: `L${l + 1} h${h}`, matrix: slice, layout: true, source });
      else known.push(slice);
    }
  }));
  const ov = (layer, h) => matMul(columns(layer.W_V, h), rows(layer.W_O, h));
  const qk = (layer, h) => matMul(columns(layer.W_Q, h), transpose(columns(layer.W_K, h)));
  const A = heads.map((i) => ov(layers[0], i));
  A.forEach((M, i) => steps.push({ step: 'circuit-ov', head: `L1 h${i}`, matrix: M }));
  const QK = heads.map((j) => qk(layers[1], j));
  const B = heads.map((j) => (kind === 'q' ? QK[j] : kind === 'k' ? transpose(QK[j]) : ov(layers[1], j)));
  if (kind === 'k') QK.forEach((M, j) => steps.push({ step: 'circuit-qk', head: `L2 h${j}`, matrix: M }));
  // W_QKᵀ holds W_QK's numbers moved: matched by position, and not as its transpose (that is W_QK)
  B.forEach((M, j) => steps.push(kind === 'k' ? { step: 'reader', head: `L2 h${j}`, matrix: M, layout: true, exact: true, source: QK[j].flat() } : { step: 'reader', head: `L2 h${j}`, matrix: M }));
  const products = heads.map((i) => heads.map((j) => matMul(A[i], B[j])));
  products.forEach((row, i) => row.forEach((M, j) => steps.push({ step: 'product', head: `L1 h${i} → L2 h${j}`, matrix: M })));
  steps.push({ step: 'norms', head: null, matrix: [[...A.map(norm), ...B.map(norm), ...products.flat().map(norm)]] });
  steps.push({ step: 'ratio', head: null, matrix: packageCompositionScores(lab, weights, numberOfHeads)[kind] });
  // on the way: every circuit of both layers (an answer may build them all), their products, the norms' sums
  const parts = [];
  for (const layer of layers) {
    for (const h of heads) {
      productSums(columns(layer.W_V, h), rows(layer.W_O, h), parts);
      productSums(columns(layer.W_Q, h), transpose(columns(layer.W_K, h)), parts);
      parts.push(...ov(layer, h).flat(), ...qk(layer, h).flat());
    }
  }
  heads.forEach((i) => heads.forEach((j) => productSums(A[i], B[j], parts)));
  for (const M of [...A, ...B, ...products.flat()]) normParts(M, parts);
  heads.forEach((i) => heads.forEach((j) => parts.push(norm(A[i]) * norm(B[j]))));
  // every circuit of both layers, and W_QK's transpose: arrays a right answer may build
  for (const layer of layers) for (const h of heads) known.push(ov(layer, h), qk(layer, h));
  return { steps, inputs, parts, known };
}

const close = (M, E) => isMatrix(M, E.length, E[0].length) && closeMatrix(M, E, 1e-9);

/**
 * The probe check `composition` (diagnosis.json: ["composition", probe ids]): each probe's scores
 * against the package's. Scores that are another kind's name the reader; the squares of the scores
 * (no square root on the norms) name the norms; other wrong scores are told without a step (the
 * traced run names it). A throw is told as it is (thrown(): a rejected valid call is the check).
 */
export function checkComposition(probeIds) {
  return (ctx) => {
    for (const id of probeIds) {
      const probe = ctx.probe(id);
      const got = outputsOf(ctx, probe);
      if (got.error) return thrown(ctx, probe, got.error);
      const output = got.outputs[0];
      const scores = packageCompositionScores(ctx.lab, { layers: probe.layers }, probe.numberOfHeads);
      const expected = scores[probe.kind];
      if (close(output, expected)) continue;
      const h = probe.numberOfHeads;
      const found = { probe, expected: { label: 'the package\'s scores', matrix: expected }, actual: isMatrix(output, h, h) ? { label: 'your scores', matrix: output } : null };
      const other = Object.keys(scores).find((k) => k !== probe.kind && close(output, scores[k]));
      if (other) {
        return {
          ...found, step: 'reader',
          title: `Your ${KIND_NAMES[probe.kind]} scores are the ${KIND_NAMES[other]} scores: the reader of kind '${probe.kind}' is ${READER_NAMES[probe.kind]}, yours is ${READER_NAMES[other]}`,
          detail: `Head j of the second layer reads what head i of the first writes through its queries (W_QK), its keys (W_QKᵀ: a key is the right-hand side of the score) or its values (its own W_OV). On this probe (${describeProbe(probe, ctx.table)}) every score you return is the package's ${KIND_NAMES[other]} score.`,
        };
      }
      if (close(output, expected.map((row) => row.map((x) => x * x)))) {
        return {
          ...found, step: 'norms',
          title: 'Your scores are the squares of the package\'s: a Frobenius norm without its square root',
          detail: `‖M‖ is the square root of the sum of every entry squared. On this probe (${describeProbe(probe, ctx.table)}) the score of L1 h0 → L2 h0 is ${fmt(expected[0][0])}; yours is ${fmt(output[0][0])}, its square.`,
        };
      }
      return {
        ...found, step: null,
        title: `Your scores differ from the package's on a probe input (${describeProbe(probe, ctx.table)})`,
        detail: isMatrix(output, h, h) ? 'They are not another kind\'s scores, nor their squares: the step where they leave the reference is found by running your code on a traced input.' : `Expected a ${h}×${h} matrix (rows: the heads of the first layer, columns: the heads of the second).`,
      };
    }
    return null;
  };
}
