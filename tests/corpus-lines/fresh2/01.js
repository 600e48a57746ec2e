// A right answer as a pipeline: small functions composed by pipe(), each taking a state object and returning a new one.
const pipe = (...fns) => (x) => fns.reduce((acc, f) => f(acc), x);
const scoresOf = (st) => ({ ...st, S: st.Q.map((q) => st.K.map((k) => q.reduce((s, x, c) => s + x * k[c], 0))) });
const scaleOf = (st) => ({ ...st, S: st.S.map((row) => row.map((x) => x / Math.sqrt(st.Q[0].length))) });
const softmaxOf = (st) => ({
  ...st,
  W: st.S.map((row) => {
    const m = Math.max(...row);
    const e = row.map((x) => Math.exp(x - m));
    const z = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / z);
  }),
});
const mixOf = ({ W, V }) => W.map((w) => V[0].map((_, c) => w.reduce((s, p, j) => s + p * V[j][c], 0)));

export function dotProductAttention(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${K.length}×${K[0].length} but Q is ${Q.length}×${Q[0].length}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${V.length}×${V[0].length} but Q is ${Q.length}×${Q[0].length}`);
  return pipe(scoresOf, scaleOf, softmaxOf, mixOf)({ Q, K, V });
}
