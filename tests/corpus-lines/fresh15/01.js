// Style: a streaming ("online", FlashAttention-like) softmax: each query walks the keys once, keeping a running maximum, a running denominator and a running output that are rescaled whenever the maximum grows.
export function dotProductAttention(Q, K, V) {
  const shape = (M) => `${M.length}×${M[0].length}`;
  if (K.length !== Q.length || K[0].length !== Q[0].length) {
    throw new RangeError(`K is ${shape(K)} but Q is ${shape(Q)}`);
  }
  if (V.length !== Q.length) {
    throw new RangeError(`V is ${shape(V)} but Q is ${shape(Q)}`);
  }
  const dk = Q[0].length;
  const dv = V[0].length;
  const invSqrt = 1 / Math.sqrt(dk);
  return Q.map((q) => attendOnline(q, K, V, invSqrt, dv));
}

// One query against every key, in a single pass over the keys.
function attendOnline(q, K, V, invSqrt, dv) {
  let runningMax = -Infinity;
  let denominator = 0;
  let acc = new Array(dv).fill(0);
  for (let j = 0; j < K.length; j++) {
    const logit = score(q, K[j]) * invSqrt;
    const newMax = Math.max(runningMax, logit);
    // the old terms were exponentiated against runningMax: bring them to newMax
    const correction = Math.exp(runningMax - newMax);
    const p = Math.exp(logit - newMax);
    denominator = denominator * correction + p;
    acc = acc.map((a, c) => a * correction + p * V[j][c]);
    runningMax = newMax;
  }
  return acc.map((a) => a / denominator);
}

function score(q, k) {
  let s = 0;
  for (let c = 0; c < q.length; c++) s += q[c] * k[c];
  return s;
}
