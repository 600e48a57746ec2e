// Challenge 03 in while loops with manual indices: the T×T scores filled first, the mask written over
// them as −Infinity, then each row softmaxed in place and multiplied by V.

export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  checkShapes(Q, K, V);
  const T = Q.length;
  const dk = Q[0].length;
  const dv = V[0].length;
  const scale = Math.sqrt(dk);

  const scores = [];
  let i = 0;
  while (i < T) {
    const row = [];
    let j = 0;
    while (j < K.length) {
      let dot = 0;
      let c = 0;
      while (c < dk) {
        dot += Q[i][c] * K[j][c];
        c++;
      }
      row.push(dot / scale);
      j++;
    }
    scores.push(row);
    i++;
  }

  if (causal) {
    let q = 0;
    while (q < T) {
      let k = q + 1;
      while (k < T) {
        scores[q][k] = -Infinity;
        k++;
      }
      q++;
    }
  }

  let r = 0;
  while (r < T) {
    const row = scores[r];
    let top = -Infinity;
    let n = 0;
    while (n < row.length) {
      if (row[n] > top) top = row[n];
      n++;
    }
    let total = 0;
    n = 0;
    while (n < row.length) {
      row[n] = Math.exp(row[n] - top);
      total += row[n];
      n++;
    }
    n = 0;
    while (n < row.length) row[n++] /= total;
    r++;
  }

  const out = [];
  let t = 0;
  while (t < T) {
    const line = new Array(dv).fill(0);
    let s = 0;
    while (s < T) {
      let c = 0;
      while (c < dv) {
        line[c] += scores[t][s] * V[s][c];
        c++;
      }
      s++;
    }
    out.push(line);
    t++;
  }
  return out;
}

function checkShapes(Q, K, V) {
  const shape = (M) => `${M.length}×${M[0].length}`;
  if (K.length !== Q.length || K[0].length !== Q[0].length) {
    throw new RangeError(`K is ${shape(K)} but Q is ${shape(Q)}`);
  }
  if (V.length !== Q.length) {
    throw new RangeError(`V is ${shape(V)} but Q is ${shape(Q)}`);
  }
}
