// A right answer by helpers that return closures: scorer(K, d) returns a function of a query, masker(causal) a function of a row and its index, normalizer() the softmax, mixer(V) the weighted sum; each query row is passed through the four in turn.
function scorer(K, d) {
  const root = Math.sqrt(d);
  return (q) => K.map((k) => {
    let s = 0;
    for (let c = 0; c < d; c++) s += q[c] * k[c];
    return s / root;
  });
}

function masker(causal) {
  if (!causal) return (row) => row;
  return (row, i) => row.map((x, j) => (j > i ? -Infinity : x));
}

function normalizer() {
  return (row) => {
    let peak = -Infinity;
    for (const x of row) if (x > peak) peak = x;
    const ex = row.map((x) => Math.exp(x - peak));
    let z = 0;
    for (const e of ex) z += e;
    return ex.map((e) => e / z);
  };
}

function mixer(V) {
  const width = V[0].length;
  return (weights) => {
    const out = new Array(width).fill(0);
    weights.forEach((p, j) => {
      for (let c = 0; c < width; c++) out[c] += p * V[j][c];
    });
    return out;
  };
}

const dims = (M) => `${M.length}×${M[0].length}`;

export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${dims(K)} but Q is ${dims(Q)}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${dims(V)} but Q is ${dims(Q)}`);
  const score = scorer(K, Q[0].length);
  const mask = masker(causal);
  const softmax = normalizer();
  const mix = mixer(V);
  return Q.map((q, i) => mix(softmax(mask(score(q), i))));
}
