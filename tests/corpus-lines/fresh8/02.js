// do…while loops over preallocated rows, one head at a time written straight into the concatenation.
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  check(Q, K, V, numberOfHeads * headDimensions);
  const T = Q.length;
  const d = headDimensions;
  const C = numberOfHeads * d;
  const concat = new Array(T);
  let r = 0;
  do { concat[r] = new Array(C).fill(0); r++; } while (r < T);
  let h = 0;
  do {
    const lo = h * d;
    const qh = Q.map((row) => row.slice(lo, lo + d));
    const kh = K.map((row) => row.slice(lo, lo + d));
    const vh = V.map((row) => row.slice(lo, lo + d));
    let i = 0;
    do {
      const scores = new Array(T).fill(0);
      let j = 0;
      do {
        let c = 0;
        do { scores[j] += qh[i][c] * kh[j][c]; c++; } while (c < d);
        scores[j] /= Math.sqrt(d);
        j++;
      } while (j < T);
      const top = Math.max(...scores);
      const e = scores.map((s) => Math.exp(s - top));
      let z = 0;
      j = 0;
      do { z += e[j]; j++; } while (j < T);
      const w = e.map((x) => x / z);
      j = 0;
      do {
        let c = 0;
        do { concat[i][lo + c] += w[j] * vh[j][c]; c++; } while (c < d);
        j++;
      } while (j < T);
      i++;
    } while (i < T);
    h++;
  } while (h < numberOfHeads);
  if (!W_O) return concat;
  return concat.map((row) => W_O[0].map((_, col) => {
    let s = 0;
    let c = 0;
    do { s += row[c] * W_O[c][col]; c++; } while (c < C);
    return s;
  }));
}

function check(Q, K, V, C) {
  for (const M of [Q, K, V]) {
    if (M.length !== Q.length || M[0].length !== C) {
      throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
    }
  }
}
