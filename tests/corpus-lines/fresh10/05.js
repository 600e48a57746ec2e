// A right answer with let-heavy mutation in place: a while loop over the tokens with a manual counter, the cache two growing arrays of rows, one scores array and one output row allocated per token and overwritten in place (scores scaled, exponentiated and divided where they lie), the head's slice read by an offset.
export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  let C = numberOfHeads * headDimensions;
  let T = Q.length;
  for (let M of [Q, K, V]) {
    if (M.length !== T || M[0].length !== C) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  let keys = [];
  let vals = [];
  let rows = [];
  let t = 0;
  while (t < T) {
    keys.push(K[t]);
    vals.push(V[t]);
    let n = keys.length;
    let row = new Array(C).fill(0);
    let scores = new Array(n);
    for (let h = 0; h < numberOfHeads; h++) {
      let off = h * headDimensions;
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let c = 0; c < headDimensions; c++) s += Q[t][off + c] * keys[j][off + c];
        scores[j] = s;
      }
      let mx = -Infinity;
      for (let j = 0; j < n; j++) {
        scores[j] /= Math.sqrt(headDimensions);
        if (scores[j] > mx) mx = scores[j];
      }
      let sum = 0;
      for (let j = 0; j < n; j++) {
        scores[j] = Math.exp(scores[j] - mx);
        sum += scores[j];
      }
      for (let j = 0; j < n; j++) scores[j] /= sum;
      for (let j = 0; j < n; j++) {
        for (let c = 0; c < headDimensions; c++) row[off + c] += scores[j] * vals[j][off + c];
      }
    }
    rows.push(row);
    t++;
  }
  return rows;
}
