// A right answer in while loops with manual indices: the max by Math.max.apply, the exponentials and their total in one pass, a separate pass that normalizes, the output rows pushed.
export function dotProductAttention(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${K.length}×${K[0].length} but Q is ${Q.length}×${Q[0].length}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${V.length}×${V[0].length} but Q is ${Q.length}×${Q[0].length}`);
  const n = Q.length;
  const d = Q[0].length;
  const out = [];
  let i = 0;
  while (i < n) {
    const scores = [];
    let j = 0;
    while (j < K.length) {
      let s = 0;
      let c = 0;
      while (c < d) {
        s += Q[i][c] * K[j][c];
        c++;
      }
      scores.push(s / Math.sqrt(d));
      j++;
    }
    const top = Math.max.apply(null, scores);
    let total = 0;
    j = 0;
    while (j < scores.length) {
      scores[j] = Math.exp(scores[j] - top);
      total += scores[j];
      j++;
    }
    j = 0;
    while (j < scores.length) {
      scores[j] /= total;
      j++;
    }
    const row = [];
    let c = 0;
    while (c < V[0].length) {
      let acc = 0;
      j = 0;
      while (j < n) {
        acc += scores[j] * V[j][c];
        j++;
      }
      row.push(acc);
      c++;
    }
    out.push(row);
    i++;
  }
  return out;
}
