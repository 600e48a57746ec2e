// A right answer whose visible keys come from a generator (function* seen), a query's scores reduced into a plain object keyed by key index, its softmax written back into the same object, and the blend a for…in over that object's keys.
function* seen(p, span) {
  for (let j = Math.max(0, p - span + 1); j <= p; j++) yield j;
}

export function slidingWindowAttention(Q, K, V, options = {}) {
  const { window: span } = options;
  if (span !== undefined) {
    if (typeof span !== 'number') throw new TypeError(`options.window is a ${typeof span}; expected a positive integer`);
    if (!(Number.isInteger(span) && span >= 1)) throw new RangeError(`options.window is ${span}; expected a positive integer`);
  }
  const d = Q[0].length;
  for (const [label, M] of [['K', K], ['V', V]]) {
    if (M[0].length !== d) throw new RangeError(`${label} is ${M.length}×${M[0].length} but must be T×${d}, as wide as Q`);
  }
  const reach = span ?? Q.length;
  const divisor = Math.sqrt(d);
  return Q.map((q, p) => {
    const logits = [...seen(p, reach)].reduce((acc, j) => {
      acc[j] = q.reduce((s, x, c) => s + x * K[j][c], 0) / divisor;
      return acc;
    }, {});
    const ceiling = Math.max(...Object.values(logits));
    let mass = 0;
    for (const j in logits) {
      logits[j] = Math.exp(logits[j] - ceiling);
      mass += logits[j];
    }
    const out = new Array(V[0].length).fill(0);
    for (const j in logits) {
      const w = logits[j] / mass;
      V[j].forEach((x, c) => { out[c] += w * x; });
    }
    return out;
  });
}
