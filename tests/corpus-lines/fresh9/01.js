// A right answer with the columns of K and V memoised in a WeakMap, every matrix built by Array.from with an index callback, and the logits and normalise helpers nested inside the function that uses them.
const columnCache = new WeakMap();

function columnsOf(M) {
  if (!columnCache.has(M)) {
    columnCache.set(M, Array.from({ length: M[0].length }, (_, c) => Array.from({ length: M.length }, (_, r) => M[r][c])));
  }
  return columnCache.get(M);
}

export function dotProductAttention(Q, K, V) {
  const dims = (M) => `${M.length}×${M[0].length}`;
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${dims(K)} but Q is ${dims(Q)}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${dims(V)} but Q is ${dims(Q)}`);

  const nQ = Q.length;
  const width = Q[0].length;
  const Kcols = columnsOf(K);
  const Vcols = columnsOf(V);
  const factor = Math.sqrt(width);

  function logitsFor(i) {
    const dotWith = (j) => Kcols.reduce((acc, col, c) => acc + Q[i][c] * col[j], 0);
    return Array.from({ length: nQ }, (_, j) => dotWith(j) / factor);
  }

  function normalise(logits) {
    const peak = logits.reduce((m, x) => (x > m ? x : m), -Infinity);
    const lifted = Array.from(logits, (x) => Math.exp(x - peak));
    const mass = lifted.reduce((a, b) => a + b, 0);
    return Array.from(lifted, (x) => x / mass);
  }

  return Array.from({ length: nQ }, (_, i) => {
    const probs = normalise(logitsFor(i));
    return Array.from(Vcols, (col) => probs.reduce((acc, p, j) => acc + p * col[j], 0));
  });
}
