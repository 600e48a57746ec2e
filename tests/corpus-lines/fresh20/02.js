// Challenge 02 transposed first: each head's keys are kept as columns (Kt[c][j] is key j's entry c),
// so a score is a query row against a column, the softmax is a log-sum-exp, exp(x − lse), and W_O is
// read through its columns too.

// columns from … to − 1 of M, each one a list over the rows
function columnsOf(M, from, to) {
  const cols = [];
  for (let c = from; c < to; c++) cols.push(M.map((row) => row[c]));
  return cols;
}

function logSumExp(row) {
  const top = Math.max(...row);
  return top + Math.log(row.reduce((sum, x) => sum + Math.exp(x - top), 0));
}

// one head: the columns from … to − 1 of Q, K and V
function head(Q, K, V, from, to) {
  const d = to - from;
  const Kt = columnsOf(K, from, to); // d × T
  const out = [];
  for (const q of Q) {
    const part = q.slice(from, to);
    const scores = Kt[0].map((_, j) => part.reduce((s, x, c) => s + x * Kt[c][j], 0));
    const scaled = scores.map((s) => s / Math.sqrt(d));
    const lse = logSumExp(scaled);
    const weights = scaled.map((s) => Math.exp(s - lse));
    const row = [];
    for (let c = from; c < to; c++) row.push(weights.reduce((s, w, j) => s + w * V[j][c], 0));
    out.push(row);
  }
  return out;
}

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  for (const M of [Q, K, V]) {
    if (M.length !== Q.length || M[0].length !== C) {
      throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
    }
  }
  const heads = [];
  for (let h = 0; h < numberOfHeads; h++) {
    heads.push(head(Q, K, V, h * headDimensions, (h + 1) * headDimensions));
  }
  const joined = Q.map((_, t) => heads.flatMap((out) => out[t]));
  const Wt = W_O ? columnsOf(W_O, 0, C) : null; // W_O's columns: Wt[o][i] = W_O[i][o]
  if (!Wt) return joined;
  return joined.map((row) => Wt.map((col) => row.reduce((s, x, i) => s + x * col[i], 0)));
}
