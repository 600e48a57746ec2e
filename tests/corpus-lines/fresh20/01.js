// Challenge 01 curried: every helper takes one argument and returns a function of the next, and a
// query row is attended by attend(keys)(values)(scale)(q), the steps one line each inside it.

const shapeText = (M) => `${M.length}×${M[0].length}`;

const dot = (a) => (b) => a.reduce((sum, x, i) => sum + x * b[i], 0);

// one query against every key
const scoresOf = (keys) => (q) => keys.map((k) => dot(q)(k));

const scaleBy = (factor) => (row) => row.map((x) => x * factor);

const softmax = (row) => {
  const top = Math.max(...row);
  const exps = row.map((x) => Math.exp(x - top));
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / total);
};

// the weighted average of the value rows, column by column
const blend = (values) => (weights) =>
  values[0].map((_, c) => weights.reduce((sum, w, j) => sum + w * values[j][c], 0));

const attend = (keys) => (values) => (scale) => (q) => {
  const scores = scoresOf(keys)(q);
  const scaled = scaleBy(scale)(scores);
  const weights = softmax(scaled);
  return blend(values)(weights);
};

const checkShapes = (Q) => (K) => (V) => {
  if (K.length !== Q.length || K[0].length !== Q[0].length) {
    throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  }
  if (V.length !== Q.length) {
    throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
  }
};

export function dotProductAttention(Q, K, V) {
  checkShapes(Q)(K)(V);
  const dk = Q[0].length;
  const attendQuery = attend(K)(V)(1 / Math.sqrt(dk));
  return Q.map((q) => attendQuery(q));
}
