// Challenge 03, every query walking its keys backwards, from the last one it may see down to key 0.

export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  checkShapes(Q, K, V);
  const dk = Q[0].length;
  const dv = V[0].length;
  const result = [];
  for (let i = 0; i < Q.length; i++) {
    const last = causal ? i : K.length - 1; // the furthest key this query may look at
    const logits = new Array(last + 1);
    let peak = -Infinity;
    for (let j = last; j >= 0; j--) {
      let dot = 0;
      for (let c = dk - 1; c >= 0; c--) dot += Q[i][c] * K[j][c];
      logits[j] = dot / Math.sqrt(dk);
      if (logits[j] > peak) peak = logits[j];
    }
    let denom = 0;
    for (let j = last; j >= 0; j--) {
      logits[j] = Math.exp(logits[j] - peak);
      denom += logits[j];
    }
    const out = new Array(dv).fill(0);
    for (let j = last; j >= 0; j--) {
      const w = logits[j] / denom;
      for (let c = 0; c < dv; c++) out[c] += w * V[j][c];
    }
    result.push(out);
  }
  return result;
}

function checkShapes(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) {
    throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  }
  if (V.length !== Q.length) {
    throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
  }
}

function shapeText(M) {
  return `${M.length}×${M[0].length}`;
}
