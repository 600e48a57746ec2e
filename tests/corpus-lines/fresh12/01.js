// Style: an object of named operations dispatched by string, the answer a list of op names run over a state.
const OPS = {
  scores(st) {
    st.m = st.Q.map((q) => st.K.map((k) => {
      let s = 0;
      for (let c = 0; c < q.length; c++) s += q[c] * k[c];
      return s;
    }));
  },
  scale(st) {
    const f = 1 / Math.sqrt(st.Q[0].length);
    st.m = st.m.map((row) => row.map((x) => x * f));
  },
  softmax(st) {
    st.m = st.m.map((row) => {
      const top = Math.max(...row);
      const ex = row.map((x) => Math.exp(x - top));
      let z = 0;
      for (const e of ex) z += e;
      return ex.map((e) => e / z);
    });
  },
  mix(st) {
    const dv = st.V[0].length;
    st.m = st.m.map((w) => {
      const out = new Array(dv).fill(0);
      for (let j = 0; j < w.length; j++) {
        for (let c = 0; c < dv; c++) out[c] += w[j] * st.V[j][c];
      }
      return out;
    });
  },
};

const PROGRAM = ['scores', 'scale', 'softmax', 'mix'];

export function dotProductAttention(Q, K, V) {
  const shape = (M) => `${M.length}×${M[0].length}`;
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${shape(K)} but Q is ${shape(Q)}: Q and K must both be T×d_k`);
  if (V.length !== Q.length) throw new RangeError(`V is ${shape(V)} but Q is ${shape(Q)}: V must have T rows`);
  const st = { Q, K, V, m: null };
  for (const name of PROGRAM) OPS[name](st);
  return st.m;
}
