// The real-model page's head detectors and the small sums over its outputs (issue 31): plain functions
// of the attention weights and logits the worker gets from the package, no DOM, also run by the Node tests.
//
// Each detector is the mean, over the query positions t ≥ 1 of every sequence where it is defined, of a
// weight (or a sum of weights) on row t of a head's pattern A (the package's headScores uses the same
// definitions for the three it has; tests/js/model-detectors.test.mjs checks that they agree):
// - previousToken: A[t][t − 1];
// - firstToken:    A[t][0] (many heads of real models park their weight there when they have nothing to do);
// - duplicateToken: Σ A[t][s] over the earlier positions s < t that hold the same token, where there is one;
// - induction:     Σ A[t][s + 1] over the same earlier occurrences s (the token after the last time this token
//                  appeared: what an induction head copies), where there is one.

export const DETECTORS = ['previousToken', 'induction', 'duplicateToken', 'firstToken'];

/**
 * Scores of every head of one layer. `weights` is `{ data, shape: [B, h, T, T] }` (the package's
 * forward with needWeights), `tokens` B arrays of T token ids. Returns h objects { previousToken,
 * induction, duplicateToken, firstToken } (NaN where a score is defined nowhere, e.g. no token repeats).
 */
export function headDetectors(weights, tokens) {
  const [B, h, T, T2] = weights.shape;
  if (T !== T2 || tokens.length !== B || tokens.some((row) => row.length !== T)) {
    throw new RangeError(`headDetectors: weights of shape [${weights.shape}] do not fit ${tokens.length} sequences of ${tokens[0]?.length} tokens`);
  }
  const data = weights.data;
  const out = [];
  for (let head = 0; head < h; head++) {
    const sum = { previousToken: 0, induction: 0, duplicateToken: 0, firstToken: 0 };
    const count = { previousToken: 0, induction: 0, duplicateToken: 0, firstToken: 0 };
    for (let b = 0; b < B; b++) {
      const seq = tokens[b];
      for (let t = 1; t < T; t++) {
        const row = ((b * h + head) * T + t) * T;
        sum.previousToken += data[row + t - 1]; count.previousToken++;
        sum.firstToken += data[row]; count.firstToken++;
        let dup = 0; let ind = 0; let seen = false;
        for (let s = 0; s < t; s++) {
          if (seq[s] === seq[t]) { seen = true; dup += data[row + s]; ind += data[row + s + 1]; }
        }
        if (seen) {
          sum.duplicateToken += dup; count.duplicateToken++;
          sum.induction += ind; count.induction++;
        }
      }
    }
    out.push(Object.fromEntries(DETECTORS.map((k) => [k, count[k] ? sum[k] / count[k] : NaN])));
  }
  return out;
}

/** Every head of every layer ranked by one detector: [{ layer, head, score }], highest first, NaN left out. */
export function rankHeads(scores, detector) {
  return scores.flatMap((layer, l) => layer.map((s, i) => ({ layer: l, head: i, score: s[detector] })))
    .filter((x) => Number.isFinite(x.score))
    .sort((a, b) => b.score - a.score || a.layer - b.layer || a.head - b.head);
}

/** The k largest of a softmax over `logits` (a row of V numbers, any array), as [{ id, p }], largest first. */
export function topK(logits, k = 10) {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i] > max) max = logits[i];
  let z = 0;
  for (let i = 0; i < logits.length; i++) z += Math.exp(logits[i] - max);
  const best = []; // kept sorted, largest first, at most k
  for (let i = 0; i < logits.length; i++) {
    const x = logits[i];
    if (best.length === k && x <= best[k - 1].x) continue;
    let j = best.length;
    while (j > 0 && best[j - 1].x < x) j--;
    best.splice(j, 0, { id: i, x });
    if (best.length > k) best.pop();
  }
  return best.map(({ id, x }) => ({ id, p: Math.exp(x - max) / z }));
}
