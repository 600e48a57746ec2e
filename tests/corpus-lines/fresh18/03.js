// Dot-product attention with an optional causal mask; scores and weights live in Maps keyed by
// "i,j" strings, so a masked cell is simply never stored, and a labelled break ends a row's keys.

export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) {
    throw new RangeError(`K is ${K.length}×${K[0].length} but Q is ${Q.length}×${Q[0].length}`);
  }
  if (V.length !== Q.length) {
    throw new RangeError(`V is ${V.length}×${V[0].length} but Q is ${Q.length}×${Q[0].length}`);
  }
  const T = Q.length;
  const dk = Q[0].length;
  const dv = V[0].length;
  const scale = 1 / Math.sqrt(dk);
  const cell = (i, j) => `${i},${j}`;

  const score = new Map();
  for (let i = 0; i < T; i++) {
    keys: for (let j = 0; j < T; j++) {
      if (causal && j > i) break keys;
      let dot = 0;
      for (let c = 0; c < dk; c++) dot += Q[i][c] * K[j][c];
      score.set(cell(i, j), dot * scale);
    }
  }

  const weight = new Map();
  for (let i = 0; i < T; i++) {
    const seen = [];
    for (let j = 0; j < T; j++) if (score.has(cell(i, j))) seen.push(j);
    const top = Math.max(...seen.map((j) => score.get(cell(i, j))));
    let total = 0;
    for (const j of seen) {
      const e = Math.exp(score.get(cell(i, j)) - top);
      weight.set(cell(i, j), e);
      total += e;
    }
    for (const j of seen) weight.set(cell(i, j), weight.get(cell(i, j)) / total);
  }

  const out = Array.from({ length: T }, () => new Array(dv).fill(0));
  for (const [at, w] of weight) {
    const [i, j] = at.split(',').map(Number);
    for (let c = 0; c < dv; c++) out[i][c] += w * V[j][c];
  }
  return out;
}
