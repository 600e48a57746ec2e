// Challenge 08 with a streaming (online) softmax: each query walks the keys of its window once, from
// the first it may see up to itself, keeping a running maximum, a running total and a running output
// that are rescaled by exp(old maximum − new maximum) whenever the maximum grows.

const shapeText = (M) => `${M.length}×${M[0].length}`;

export function slidingWindowAttention(Q, K, V, { window } = {}) {
  if (window !== undefined) {
    if (typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}`);
    if (!Number.isInteger(window) || window < 1) throw new RangeError(`options.window is ${window}`);
  }
  const d = Q[0].length;
  if (K[0].length !== d) throw new RangeError(`K is ${shapeText(K)} but must be T×${d}`);
  if (V[0].length !== d) throw new RangeError(`V is ${shapeText(V)} but must be T×${d}`);
  const w = window ?? Infinity;
  const scale = 1 / Math.sqrt(d);
  return Q.map((q, p) => {
    const first = Math.max(0, p - w + 1);
    let best = -Infinity;
    let total = 0;
    let acc = new Array(d).fill(0);
    for (let j = first; j <= p; j++) {
      const score = q.reduce((s, x, c) => s + x * K[j][c], 0) * scale;
      const next = Math.max(best, score);
      const shrink = Math.exp(best - next);
      const e = Math.exp(score - next);
      total = total * shrink + e;
      acc = acc.map((a, c) => a * shrink + e * V[j][c]);
      best = next;
    }
    return acc.map((a) => a / total);
  });
}
