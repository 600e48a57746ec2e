// What one head's attention weights say: the learner's weights Ŵ (read through one-hot columns of V)
// against the reference's W (from the trace), and, when they differ, the first step that explains
// it. The readers run in order; the first that returns (a finding, or null: nothing to say) wins.
import { closeMatrix as close, columns, finiteMatrix, identity, range, transpose } from '../matrix.js';
import { hasStep, stepOf } from './probes.js';
import { fitScale, nameScale } from './scale.js';
import { readMask, readWindowBand, readWindowNaN, sums } from './weights-mask.js';
import { capital, fmt, headName, weightsName } from './words.js';

/** Large scores: near one-hot weights say little about the scale; only a softmax that breaks on them is told. */
export function readLarge(r) {
  const { ctx, lab, probe, t, i, Ŵ, W, allowed, d, C, dim, dv, scaleName, windowed, who, base, T, large } = r;
  if (large && finiteMatrix(Ŵ)) {
    // near one-hot weights say little about the scale; only a softmax that breaks on large scores is told here
    if (!ctx.facts['weights:one-head']) return null;
    return { ...base, step: 'softmax', title: `${capital(who)} are wrong when the scores are large`, detail: `With scaled scores near ${fmt(Math.max(...stepOf(t, `scaled_${i}`).values.flat()))} your weights differ from the softmax, although they are right on small scores. Subtract each row's maximum, then exp(), then divide by the row's sum.` };
  }
  return undefined;
}

/** Weights that are not finite numbers: NaN from the mask, from a loop bound, from the softmax. */
export function readNonFinite(r) {
  const { ctx, lab, probe, t, i, Ŵ, W, allowed, d, C, dim, dv, scaleName, windowed, who, base, T, large } = r;
  if (!finiteMatrix(Ŵ) && allowed && !large && ctx.facts['weights:one-head']) {
    const bad = range(T).filter((q) => Ŵ[q].some((x) => !Number.isFinite(x)));
    return {
      ...base, step: 'mask',
      title: `With causal: true ${who} contain NaN (row${bad.length > 1 ? 's' : ''} ${bad.join(', ')})`,
      detail: bad.length === 1 && bad[0] === 0
        ? 'Only the first row breaks: its only allowed key is key 0, the query itself. If the diagonal is masked too (j ≥ i instead of j > i), every score of row 0 is −Infinity and −∞ − (−∞) is NaN. Query i may look at keys j ≤ i.'
        : 'Without the mask your weights are right, so the mask brings the NaN: set masked scores to −Infinity (not +Infinity or NaN), so that e^(−∞ − max) is exactly 0, and keep the diagonal unmasked.',
    };
  }
  if (!finiteMatrix(Ŵ) && !large && probe.T !== d && ctx.facts['weights:one-head']) {
    return {
      ...base, step: 'scores',
      title: `${capital(who)} contain NaN when T (${probe.T}) and ${dim} (${d}) differ`,
      detail: `With as many tokens as columns your weights are right; here they are not numbers. A loop that runs to T where it should run to ${dim} (or the other way round) reads past the end of a row, and undefined turns into NaN. score[i][j] sums ${dim} products q_i[c] · k_j[c].`,
    };
  }
  if (!finiteMatrix(Ŵ) && !large && ctx.facts.sameWidthRight && dv !== d) {
    return {
      ...base, step: 'scores',
      title: `${capital(who)} contain NaN when V (${dv} columns) is wider or narrower than Q and K (${d})`,
      detail: `With V as wide as Q and K your answer is right; here it is not a number. A loop of the scores that runs over V's width (d_v) instead of ${dim} reads past the end of a row of Q or K, and undefined turns into NaN. score[i][j] sums ${dim} products q_i[c] · k_j[c]; the weighted sum runs over d_v.`,
    };
  }
  if (!finiteMatrix(Ŵ)) {
    return {
      ...base, step: 'softmax',
      title: large ? `${capital(who)} turn into NaN or Infinity when the scores are large` : `${capital(who)} contain NaN or Infinity`,
      detail: large
        ? `With scaled scores near ${fmt(Math.max(...stepOf(t, `scaled_${i}`).values.flat()))}, e^score overflows to Infinity and Infinity / Infinity is NaN. Subtract each row's maximum before exp(): the weights do not change, and nothing overflows.`
        : 'Look for exp() of a large number, a division by zero, or an index past the end of a row (undefined becomes NaN).',
    };
  }
  return undefined;
}

/** Identity weights (each row is the token's own value), or the right weights plus the identity (V added). */
export function readOwnValue(r) {
  const { ctx, lab, probe, t, i, Ŵ, W, allowed, d, C, dim, dv, scaleName, windowed, who, base, T, large } = r;
  // the identity where the reference is not: output row i is V[i], token i's own value
  const isIdentity = Ŵ.every((row, q) => row.every((w, k) => Math.abs(w - (q === k ? 1 : 0)) < 1e-12));
  if (isIdentity && (!allowed || ctx.facts.ownValue) && !close(W, identity(T), 1e-7)) {
    ctx.facts.ownValue = true;
    return { ...base, step: 'weighted-sum', title: `Each output row is token i's own value ${probe.numberOfHeads > 1 ? `V_${i}[i]` : 'V[i]'}, not a blend of all rows of V`, detail: `Read through one-hot columns of V, ${who} are the identity: output row i is V[i] whatever the scores${allowed ? ' and whatever the mask' : ''}. Row i of the output is Σ_j w_ij · V[j], every row of V weighted by query i's weights (a loop over j that reads V[i] instead of V[j] gives this). If your weights themselves put all of query i's attention on key i, look next at ${allowed ? 'the mask (does it let query i see only itself?) and ' : ''}the scores: score[i][j] = q_i · k_j.` };
  }
  // the right weights plus the identity: output = weights·V + V (V added after the weighted sum)
  if (close(Ŵ.map((row, q) => row.map((w, k) => w - (q === k ? 1 : 0))), W, 1e-7)) {
    return { ...base, step: 'residual', title: 'Your output is weights·V + V: V is added after the weighted sum', detail: `Read through one-hot columns of V, ${who} are the right weights plus 1 on the diagonal: each output row is Σ_j w_ij · V[j] plus V[i]. A sum that starts from V[i] instead of 0 does this. Start every output row at 0.` };
  }
  return undefined;
}

/** Rows that do not sum to 1: weights used transposed, a softmax down the columns, scaled after it, or no division. */
export function readSums(r) {
  const { ctx, lab, probe, t, i, Ŵ, W, allowed, d, C, dim, dv, scaleName, windowed, who, base, T, large } = r;
  const { rowSums, colSums, rowsOk, colsOk } = sums(r);
  if (!rowsOk && colsOk && T > 1 && close(Ŵ, transpose(W), 1e-7)) {
    return { ...base, step: 'weighted-sum', title: 'Right weights, used transposed in the weighted sum', detail: 'Your output is weightsᵀ·V: output row i must be Σ_j weights[i][j] · V[j], the weights of query i (row i), not column i. (The same numbers come out of scores transposed, K·Qᵀ, with the softmax down the columns.)' };
  }
  if (!rowsOk && colsOk && T > 1) {
    return { ...base, step: 'softmax', title: `${capital(who)} sum to 1 down each column instead of along each row`, detail: 'The softmax runs over the wrong axis. Each query (a row of the scores) spreads its attention over the keys: apply softmax to every row.' };
  }
  const k = rowSums[0];
  if (!rowsOk && k > 0 && rowSums.every((x) => Math.abs(x - k) < 1e-7 * Math.max(1, k))) {
    const s = fitScale(Ŵ.map((row) => row.map((x) => x / k)), stepOf(t, `scores_${i}`).values, allowed);
    // the scores scaled right (1/√d), each row then multiplied by k: the softmax's division, not the scale
    if (s !== null && Math.abs(s * Math.sqrt(d) - 1) < 1e-6) {
      return { ...base, step: 'softmax', title: `${capital(who)} are the softmax of the scaled scores times ${fmt(k)}: every row sums to ${fmt(k)}, not 1`, detail: `The scores are scaled right (by 1/√${dim}), but each e^score is divided by something other than the sum of its own row (a count, a constant). A softmax divides each e^score by the sum of its row.` };
    }
    if (s !== null) {
      return { ...base, step: 'scale', title: `Your scores are not scaled before the softmax: every row of ${who} sums to ${fmt(k)}${Math.abs(k - 1 / Math.sqrt(d)) < 1e-9 ? ` = 1/√${d}` : ''}`, detail: `Your weights are softmax(scores × ${scaleName(s)}) multiplied by ${fmt(k)} afterwards. Scale the scores by 1/√${dim} first; the softmax then makes each row sum to 1.` };
    }
  }
  if (!rowsOk) {
    const total = rowSums.reduce((a, b) => a + b, 0);
    const S = stepOf(t, `scaled_${i}`).values;
    const expOnly = S.map((row) => row.map(Math.exp));
    let why = 'A softmax divides each e^score by the sum of its own row.';
    if (Math.abs(total - 1) < 1e-7) why = 'They sum to 1 over the whole matrix: divide by the sum of each row, not of all the scores.';
    else if (close(Ŵ, expOnly, 1e-7)) why = 'They equal e^score: the division by the row sum is missing.';
    return { ...base, step: 'softmax', title: `${capital(who)} do not sum to 1 along each row`, detail: `Row sums: ${rowSums.map(fmt).join(', ')} (each should be 1). ${why}` };
  }
  return undefined;
}

/** Zeros where the reference gives weight, in a challenge with a mask: masked although it must not be. */
export function readUnexpectedMask(r) {
  const { ctx, lab, probe, t, i, Ŵ, W, allowed, d, C, dim, dv, scaleName, windowed, who, base, T, large } = r;
  // zeros where the reference gives weight: a mask where there should be none
  if (!allowed && hasStep(ctx.table, 'mask')) {
    const zeroed = [];
    Ŵ.forEach((row, q) => row.forEach((w, k) => { if (Math.abs(w) <= 1e-300 && W[q][k] > 1e-12) zeroed.push([q, k]); }));
    if (zeroed.length) {
      const future = zeroed.every(([q, k]) => k > q);
      return {
        ...base, step: 'mask',
        title: `${capital(who)} are masked although ${probe.causal === false ? 'causal is false' : 'no options are given'}`,
        detail: `${future ? 'Keys after the query get weight 0' : `Some keys get weight 0 (query ${zeroed[0][0]}, key ${zeroed[0][1]})`}. Without { causal: true } this is plain attention: every query sees every key. Use the mask only when options.causal is true (and default it to false).`,
      };
    }
  }
  return undefined;
}

/** Rows that sum to 1: at which scale? (the same for every key, another constant, or one per row) */
export function readScale(r) {
  const { ctx, lab, probe, t, i, Ŵ, W, allowed, d, C, dim, dv, scaleName, windowed, who, base, T, large } = r;
  // rows sum to 1: which scores, at which scale?
  const S = stepOf(t, `scores_${i}`).values;
  const s = fitScale(Ŵ, S, allowed);
  const expectedScale = stepOf(t, `scaled_${i}`).scalar;
  if (s !== null && Math.abs(s) < 1e-9 && hasStep(ctx.table, 'cache')) {
    return { ...base, step: 'scores', title: `${capital(who)} are the same for every cached key: token t's scores do not change from key to key`, detail: `Each token spreads its weight evenly over the keys in its cache, so all of its scores are the same number. Token t's score against cached key j is q_t · k_j, its own query against each key in the cache: a score q_t · k_t (its own key, for every cached key) does this, and so would a scale of 0.` };
  }
  if (s !== null && Math.abs(s) < 1e-9) {
    return { ...base, step: 'scores', title: `${capital(who)} are the same for every key: your scores do not change along a row`, detail: `Each query spreads its weight evenly over the keys it may see, so every score of row i is the same number. score[i][j] = q_i · k_j must use key j: a score q_i · k_i (key i for the whole row) does this, and so would a scale of 0.` };
  }
  if (s !== null && Math.abs(s - expectedScale) > 1e-6 * expectedScale) {
    return {
      ...base, step: 'scale',
      title: `Your scores are multiplied by ${scaleName(s)}; expected 1/√${dim} = 1/√${d} ≈ ${fmt(expectedScale)}`,
      detail: `Read from the ratios of ${who}: log(w_ij / w_ik) = scale · (score_ij − score_ik) fits scale = ${fmt(s)} in every row.${Math.abs(s - 1 / Math.sqrt(C)) < 1e-9 && probe.numberOfHeads > 1 ? ' Inside a head the dot products run over headDimensions columns only, so divide by √headDimensions, not √C.' : ` A score is a sum of ${dim} products, so divide it by √${dim}.`}`,
    };
  }
  // a scale that changes from row to row (the number of keys a row sees, for example)
  if (s === null) {
    const rowScales = range(T).map((q) => fitScale([Ŵ[q]], [S[q]], allowed ? [allowed[q]] : null));
    const known = rowScales.filter((x) => x !== null);
    // a row whose allowed scores are all equal says nothing about a scale
    const silent = (q) => new Set(range(T).filter((k) => !allowed || allowed[q][k]).map((k) => S[q][k])).size < 2;
    if (known.length >= 2 && rowScales.every((x, q) => x !== null || silent(q)) && Math.max(...known) - Math.min(...known) > 1e-6) {
      const perKeys = rowScales.every((x, q) => x === null || Math.abs(x - 1 / Math.sqrt(allowed ? allowed[q].filter(Boolean).length : T)) < 1e-6);
      const shown = rowScales.map((x, q) => (x === null ? null : `row ${q}: ${fmt(x)}`)).filter(Boolean).slice(0, 3).join(', ');
      return { ...base, step: 'scale', title: `Your scale changes from row to row (${shown}); expected 1/√${dim} = ${fmt(expectedScale)} in every row`, detail: `Read from the ratios of ${who}, each row fits its own scale.${perKeys ? ' Row t is scaled by 1/√(number of keys it sees): that is the length of the cache or of the row, not the width of a key.' : ''} The scale is 1/√${dim} = 1/√${d}, the same for every query.` };
    }
  }
  return undefined;
}

/** Other score matrices the learner may have built (K not transposed, Q·Qᵀ, another head's columns…); else the scores are named. */
export function readScores(r) {
  const { ctx, lab, probe, t, i, Ŵ, W, allowed, d, C, dim, dv, scaleName, windowed, who, base, T, large } = r;
  const S = stepOf(t, `scores_${i}`).values;
  const s = fitScale(Ŵ, S, allowed);
  // other score matrices the learner may have built
  const [Qh, Kh] = [stepOf(t, `Q_${i}`).values, stepOf(t, `K_${i}`).values];
  const candidates = [];
  const [qn, kn] = ctx.table.dim === 'd_k' ? ['Q', 'K'] : ['Q_h', 'K_h'];
  if (Qh[0].length === Kh.length) candidates.push(['scores', lab.linear(Qh, Kh), `Your weights fit the scores ${qn}·${kn} (K not transposed). Transpose K so that score[i][j] = q_i · k_j.`]);
  candidates.push(['scores', transpose(S), `Your weights fit the scores ${kn}·${qn}ᵀ, the transpose of ${qn}·${kn}ᵀ: row i must belong to query i, column j to key j.`]);
  candidates.push(['scores', lab.linear(Qh, transpose(Qh)), 'Your weights fit the scores Q·Qᵀ: the keys are not used. score[i][j] = q_i · k_j, a query against a key.']);
  candidates.push(['scores', lab.linear(Kh, transpose(Kh)), 'Your weights fit the scores K·Kᵀ: the queries are not used. score[i][j] = q_i · k_j, a query against a key.']);
  candidates.push(['scores', range(T).map(() => range(T).map((j) => Qh[j].reduce((sum, x, c) => sum + x * Kh[j][c], 0))), 'Your weights fit the scores q_j · k_j: row i does not use query i. score[i][j] = q_i · k_j.']);
  const { Q, K } = probe;
  const h = probe.numberOfHeads;
  if (h > 1) {
    for (let other = 0; other < h; other++) {
      if (other === i) continue;
      const cols = range(d).map((c) => other * d + c);
      candidates.push(['slice', lab.linear(columns(Q, cols), transpose(columns(K, cols))), `Head ${i}'s weights fit the scores of columns ${cols[0]}–${cols.at(-1)}, which belong to head ${other}. Head i takes columns i·headDimensions up to (i+1)·headDimensions.`]);
      candidates.push(['slice', lab.linear(Qh, transpose(columns(K, cols))), `Head ${i}'s queries are its own, but its keys are columns ${cols[0]}–${cols.at(-1)} of K, head ${other}'s. Slice the keys with the same columns as the queries: i·headDimensions up to (i+1)·headDimensions.`]);
      candidates.push(['slice', lab.linear(columns(Q, cols), transpose(Kh)), `Head ${i}'s keys are its own, but its queries are columns ${cols[0]}–${cols.at(-1)} of Q, head ${other}'s. Slice the queries of head i: columns i·headDimensions up to (i+1)·headDimensions.`]);
    }
    const strided = range(d).map((c) => c * h + i);
    candidates.push(['slice', lab.linear(columns(Q, strided), transpose(columns(K, strided))), `Head ${i}'s weights fit the scores of columns ${strided.join(', ')} (every ${h}th column): a reshape of each row into [headDimensions, numberOfHeads] instead of [numberOfHeads, headDimensions]. Head i takes the block of columns i·headDimensions up to (i+1)·headDimensions.`]);
    candidates.push(['slice', lab.linear(Q, transpose(K)), `Head ${i}'s weights fit the scores of all C columns: the heads are not sliced. Head i takes only columns i·headDimensions up to (i+1)·headDimensions.`]);
  }
  for (const [step, scores, why] of candidates) {
    const fitted = fitScale(Ŵ, scores, allowed);
    if (fitted !== null) {
      return { ...base, step, title: step === 'slice' ? `${capital(headName(probe, i))} computes its scores from the wrong columns` : `${capital(who)} come from the wrong scores`, detail: `${why} (The scale your weights imply is ${scaleName(fitted)}.)` };
    }
  }
  if (s !== null && close(Ŵ, W, 1e-6)) return null; // right scores and scale, weights differ only by rounding
  return {
    ...base, step: 'scores',
    title: `${capital(who)} sum to 1 but are not a softmax of ${qn}·${kn}ᵀ at any scale`,
    detail: `Each row is positive and sums to 1, so the softmax step works; the scores going into it are not q_i · k_j. Check the loops of ${qn}·${kn}ᵀ: score[i][j] is the dot product of query row i with key row j, over ${dim} columns.`,
  };

}

const READERS = [readLarge, readWindowNaN, readNonFinite, readOwnValue, readWindowBand, readMask, readSums, readUnexpectedMask, readScale, readScores];

/**
 * Checks one head's weights Ŵ against the reference weights W (from the trace) and, when they
 * differ, finds the first step that explains it. Returns a finding or null.
 */
export function explainWeights(ctx, probe, t, i, Ŵ, { large = false } = {}) {
  const lab = ctx.lab;
  const W = stepOf(t, `weights_${i}`).values;
  const allowed = stepOf(t, `weights_${i}`).allowed ?? null;
  if (close(Ŵ, W, 1e-7)) return null;
  const d = probe.headDimensions;
  const C = probe.C;
  const dim = ctx.table.dim ?? 'headDimensions';
  const dv = probe.readout ? (probe.readoutWidth ?? d) : probe.V[0].length / probe.numberOfHeads;
  const scaleName = (x) => nameScale(x, d, C, W.length, dim, dv);
  const windowed = ctx.table.mask === 'window';
  const who = weightsName(probe, i);
  const base = { probe, head: i, expected: { label: `weights_${i}`, matrix: W }, actual: { label: `your weights_${i}`, matrix: Ŵ } };
  const T = W.length;
  const r = { ctx, lab, probe, t, i, Ŵ, W, allowed, d, C, dim, dv, scaleName, windowed, who, base, T, large };
  for (const read of READERS) {
    const found = read(r);
    if (found !== undefined) return found;
  }
  return null;
}
