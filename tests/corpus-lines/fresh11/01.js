// A right answer in a competitive programmer's terse style: one-letter names, several declarations per const, comma expressions in the loop bodies, the scores, their running maximum, the exponentials and their total all kept in one reused array per query, the blend divided by the total on the fly.
export function dotProductAttention(Q, K, V) {
  const n = Q.length, d = Q[0].length, m = V[0].length;
  const f = (A) => `${A.length}×${A[0].length}`;
  if (K.length !== n || K[0].length !== d) throw new RangeError(`K is ${f(K)} but Q is ${f(Q)}`);
  if (V.length !== n) throw new RangeError(`V is ${f(V)} but Q is ${f(Q)}`);
  const r = 1 / Math.sqrt(d), o = [];
  for (let i = 0; i < n; i++) {
    const s = new Array(n);
    let x = -Infinity, z = 0;
    for (let j = 0; j < n; j++) {
      let t = 0;
      for (let c = 0; c < d; c++) t += Q[i][c] * K[j][c];
      s[j] = t * r, x = Math.max(x, s[j]);
    }
    for (let j = 0; j < n; j++) s[j] = Math.exp(s[j] - x), z += s[j];
    const y = new Array(m).fill(0);
    for (let j = 0; j < n; j++) for (let c = 0; c < m; c++) y[c] += s[j] / z * V[j][c];
    o.push(y);
  }
  return o;
}
