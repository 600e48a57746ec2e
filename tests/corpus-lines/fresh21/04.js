// Challenge 04 in while loops with manual counters: the product helper, the heads, each query's
// scores, maximum, exponentials and total, and the blend into the joined rows are all while loops
// over let counters stepped by += 1.

const shapeText = (M) => `${M.length}×${M[0].length}`;

function product(A, B) {
  const out = [];
  let i = 0;
  while (i < A.length) {
    const row = [];
    let j = 0;
    while (j < B[0].length) {
      let s = 0;
      let k = 0;
      while (k < B.length) {
        s += A[i][k] * B[k][j];
        k += 1;
      }
      row.push(s);
      j += 1;
    }
    out.push(row);
    i += 1;
  }
  return out;
}

export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  if (X[0].length !== C) {
    throw new RangeError(`X is ${shapeText(X)} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`);
  }
  const named = [['W_Q', W_Q], ['W_K', W_K], ['W_V', W_V], ['W_O', W_O]];
  let n = 0;
  while (n < named.length) {
    const [name, W] = named[n];
    if (W.length !== C || W[0].length !== C) throw new RangeError(`${name} is ${shapeText(W)} but must be C×C = ${C}×${C}`);
    n += 1;
  }
  const Q = product(X, W_Q);
  const K = product(X, W_K);
  const V = product(X, W_V);
  const T = X.length;
  const d = headDimensions;
  const joined = [];
  let t = 0;
  while (t < T) {
    joined.push(new Array(C).fill(0));
    t += 1;
  }
  let h = 0;
  while (h < numberOfHeads) {
    const start = h * d;
    let i = 0;
    while (i < T) {
      const scores = [];
      let j = 0;
      while (j < T) {
        let dot = 0;
        let c = 0;
        while (c < d) {
          dot += Q[i][start + c] * K[j][start + c];
          c += 1;
        }
        scores.push(dot / Math.sqrt(d));
        j += 1;
      }
      let top = -Infinity;
      let m = 0;
      while (m < T) {
        top = Math.max(top, scores[m]);
        m += 1;
      }
      const weights = [];
      let total = 0;
      let e = 0;
      while (e < T) {
        const w = Math.exp(scores[e] - top);
        weights.push(w);
        total += w;
        e += 1;
      }
      let key = 0;
      while (key < T) {
        let col = 0;
        while (col < d) {
          joined[i][start + col] += (weights[key] / total) * V[key][start + col];
          col += 1;
        }
        key += 1;
      }
      i += 1;
    }
    h += 1;
  }
  return product(joined, W_O);
}
