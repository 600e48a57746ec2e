// A right answer as a beginner writes it: nested arrays and plain for loops with short names (i, j, k, tmp, res), Kᵀ built first into its own array, the scores, the softmax and the product each a separate block of loops in one function.
export function dotProductAttention(Q, K, V) {
  let n = Q.length;
  let d = Q[0].length;
  if (K.length != n || K[0].length != d) {
    throw new RangeError('K is ' + K.length + '×' + K[0].length + ' but Q is ' + n + '×' + d);
  }
  if (V.length != n) {
    throw new RangeError('V is ' + V.length + '×' + V[0].length + ' but Q is ' + n + '×' + d);
  }
  let m = V[0].length;

  // Kt[k][j] = K[j][k]
  let Kt = [];
  for (let k = 0; k < d; k++) {
    let col = [];
    for (let j = 0; j < n; j++) {
      col.push(K[j][k]);
    }
    Kt.push(col);
  }

  // s = Q Kt / sqrt(d)
  let s = [];
  for (let i = 0; i < n; i++) {
    let row = [];
    for (let j = 0; j < n; j++) {
      let tmp = 0;
      for (let k = 0; k < d; k++) {
        tmp = tmp + Q[i][k] * Kt[k][j];
      }
      row.push(tmp / Math.sqrt(d));
    }
    s.push(row);
  }

  // softmax of every row
  let w = [];
  for (let i = 0; i < n; i++) {
    let big = s[i][0];
    for (let j = 1; j < n; j++) {
      if (s[i][j] > big) big = s[i][j];
    }
    let e = [];
    let tot = 0;
    for (let j = 0; j < n; j++) {
      let x = Math.exp(s[i][j] - big);
      e.push(x);
      tot += x;
    }
    for (let j = 0; j < n; j++) {
      e[j] = e[j] / tot;
    }
    w.push(e);
  }

  // res = w V
  let res = [];
  for (let i = 0; i < n; i++) {
    let out = [];
    for (let k = 0; k < m; k++) {
      let acc = 0;
      for (let j = 0; j < n; j++) {
        acc += w[i][j] * V[j][k];
      }
      out.push(acc);
    }
    res.push(out);
  }
  return res;
}
