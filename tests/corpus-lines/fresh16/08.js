// Challenge 08 tiled: the queries taken two rows at a time, each tile scoring only the keys from the
// first one its earliest query may see up to its last query.

export function slidingWindowAttention(Q, K, V, { window } = {}) {
  checkWindow(window);
  checkShapes(Q, K, V);
  const w = window ?? Infinity;
  const d = Q[0].length;
  const T = Q.length;
  const TILE = 2;
  const out = [];
  for (let start = 0; start < T; start += TILE) {
    const stop = Math.min(start + TILE, T);
    const lowest = Math.max(0, start - w + 1); // the first key any query of this tile may see
    for (let p = start; p < stop; p++) {
      const scores = [];
      for (let j = lowest; j < stop; j++) {
        const inWindow = j <= p && j > p - w;
        if (!inWindow) {
          scores.push(-Infinity);
          continue;
        }
        let dot = 0;
        for (let c = 0; c < d; c++) dot += Q[p][c] * K[j][c];
        scores.push(dot / Math.sqrt(d));
      }
      const peak = Math.max(...scores);
      const weights = scores.map((s) => Math.exp(s - peak));
      const total = weights.reduce((a, b) => a + b, 0);
      const row = new Array(V[0].length).fill(0);
      weights.forEach((wt, n) => {
        const j = lowest + n;
        for (let c = 0; c < row.length; c++) row[c] += (wt / total) * V[j][c];
      });
      out.push(row);
    }
  }
  return out;
}

function checkWindow(window) {
  if (window === undefined) return;
  if (typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}; expected a positive integer`);
  if (!Number.isInteger(window) || window < 1) throw new RangeError(`options.window is ${window}; expected a positive integer`);
}

function checkShapes(Q, K, V) {
  const d = Q[0].length;
  if (K[0].length !== d) throw new RangeError(`K is ${K.length}×${K[0].length} but must be T×${d}, as wide as Q`);
  if (V[0].length !== d) throw new RangeError(`V is ${V.length}×${V[0].length} but must be T×${d}, as wide as Q`);
}
