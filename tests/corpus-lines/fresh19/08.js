// Challenge 08: the window is a relative-position bias, as in T5 or ALiBi. One table indexed by the
// distance p − j (shifted by T − 1 so that it starts at 0) holds 0 for a key the query may see and
// −Infinity otherwise; every score gets bias[p − j + T − 1] added before the softmax.

export function slidingWindowAttention(Q, K, V, options = {}) {
  const { window } = options;
  if (window !== undefined) {
    if (typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}`);
    if (!Number.isInteger(window) || window < 1) throw new RangeError(`options.window is ${window}`);
  }
  const d = Q[0].length;
  if (K[0].length !== d) throw new RangeError(`K is ${shapeText(K)} but must be T×${d}`);
  if (V[0].length !== d) throw new RangeError(`V is ${shapeText(V)} but must be T×${d}`);

  const T = Q.length;
  const reach = window ?? T;                                   // no window: every earlier key
  const bias = [];
  for (let dist = -(T - 1); dist <= T - 1; dist++) {
    const visible = dist >= 0 && dist < reach;
    bias.push(visible ? 0 : -Infinity);
  }

  const norm = Math.sqrt(d);
  const out = [];
  for (let p = 0; p < T; p++) {
    const scores = [];
    for (let j = 0; j < T; j++) {
      let s = 0;
      for (let c = 0; c < d; c++) s += Q[p][c] * K[j][c];
      scores.push(s / norm + bias[p - j + T - 1]);
    }
    let best = -Infinity;
    for (const s of scores) best = Math.max(best, s);
    const ws = scores.map((s) => Math.exp(s - best));
    let den = 0;
    for (const w of ws) den += w;
    const row = new Array(d).fill(0);
    for (let j = 0; j < T; j++) {
      if (ws[j] === 0) continue;
      for (let c = 0; c < d; c++) row[c] += (ws[j] / den) * V[j][c];
    }
    out.push(row);
  }
  return out;
}

function shapeText(M) {
  return `${M.length}×${M[0].length}`;
}
