// Decoding with a KV cache, written with do…while loops and 1-based positions (t, h, c, n all
// count from 1) converted to 0-based indices only where an array is read.

export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  const fits = (M) => M.length === Q.length && M[0].length === C;
  if (!fits(Q) || !fits(K) || !fits(V)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const T = Q.length;
  const d = headDimensions;
  const keys = [];
  const values = [];
  const out = [];
  let t = 1;
  do {
    keys.push(K[t - 1]);
    values.push(V[t - 1]);
    const query = Q[t - 1];
    const row = [];
    let h = 1;
    do {
      const from = (h - 1) * d;
      const scores = keys.map((key) => {
        let s = 0;
        let c = 1;
        do {
          s += query[from + c - 1] * key[from + c - 1];
          c++;
        } while (c <= d);
        return s / Math.sqrt(d);
      });
      const top = Math.max(...scores);
      const exps = scores.map((s) => Math.exp(s - top));
      const total = exps.reduce((a, b) => a + b, 0);
      let c = 1;
      do {
        let acc = 0;
        for (let n = 1; n <= values.length; n++) acc += (exps[n - 1] / total) * values[n - 1][from + c - 1];
        row.push(acc);
        c++;
      } while (c <= d);
      h++;
    } while (h <= numberOfHeads);
    out.push(row);
    t++;
  } while (t <= T);
  return out;
}
