// Challenge 01: every matrix is a lazy "view", a function (i, j) => number with its rows and cols.
// Nothing is computed until the answer is materialised at the end; sums are Kahan-compensated.

export function dotProductAttention(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) {
    throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  }
  if (V.length !== Q.length) {
    throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
  }
  const q = view(Q);
  const k = view(K);
  const v = view(V);
  const dk = q.cols;

  const scores = product(q, transposed(k));                         // T×T, q_i · k_j
  const scaled = mapped(scores, (x) => x / Math.sqrt(dk));
  const weights = softmaxRows(scaled);
  const out = product(weights, v);                                  // T×dv
  return materialise(out);
}

function view(M) {
  return { rows: M.length, cols: M[0].length, at: (i, j) => M[i][j] };
}

function transposed(A) {
  return { rows: A.cols, cols: A.rows, at: (i, j) => A.at(j, i) };
}

function mapped(A, f) {
  return { rows: A.rows, cols: A.cols, at: (i, j) => f(A.at(i, j)) };
}

function product(A, B) {
  return { rows: A.rows, cols: B.cols, at: (i, j) => kahanSum(A.cols, (n) => A.at(i, n) * B.at(n, j)) };
}

function softmaxRows(A) {
  const rows = [];
  for (let i = 0; i < A.rows; i++) {
    let top = -Infinity;
    for (let j = 0; j < A.cols; j++) top = Math.max(top, A.at(i, j));
    const exps = [];
    for (let j = 0; j < A.cols; j++) exps.push(Math.exp(A.at(i, j) - top));
    const total = kahanSum(A.cols, (j) => exps[j]);
    rows.push(exps.map((e) => e / total));
  }
  return view(rows);
}

function kahanSum(n, term) {
  let sum = 0;
  let carry = 0;
  for (let t = 0; t < n; t++) {
    const y = term(t) - carry;
    const next = sum + y;
    carry = next - sum - y;
    sum = next;
  }
  return sum;
}

function materialise(A) {
  return Array.from({ length: A.rows }, (_, i) => Array.from({ length: A.cols }, (_, j) => A.at(i, j)));
}

function shapeText(M) {
  return `${M.length}×${M[0].length}`;
}
