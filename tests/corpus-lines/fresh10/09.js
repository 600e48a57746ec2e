// A right answer built with Array.prototype.reduce: every matrix (the products, the transpose, each head's columns, the scores with the causal mask, the softmax rows, the concatenation and W_O) is grown by a reduce that pushes into its accumulator, and the heads are folded one by one into the joined rows.
const mul = (A, B) => A.reduce((res, a) => {
  res.push(B[0].reduce((row, _, j) => {
    row.push(a.reduce((s, x, k) => s + x * B[k][j], 0));
    return row;
  }, []));
  return res;
}, []);

const tr = (M) => M[0].reduce((res, _, c) => {
  res.push(M.reduce((col, row) => col.concat([row[c]]), []));
  return res;
}, []);

const cols = (M, from, to) => M.reduce((res, row) => {
  res.push(row.slice(from, to));
  return res;
}, []);

const softmaxRows = (S) => S.reduce((res, row) => {
  const top = row.reduce((m, x) => (x > m ? x : m), -Infinity);
  const ex = row.reduce((acc, x) => acc.concat([Math.exp(x - top)]), []);
  const z = ex.reduce((a, b) => a + b, 0);
  res.push(ex.reduce((acc, e) => acc.concat([e / z]), []));
  return res;
}, []);

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  const bad = [Q, K, V].reduce((b, M) => b || M.length !== Q.length || M[0].length !== C, false);
  if (bad) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const headIds = Array.from({ length: numberOfHeads }, (_, h) => h);
  const joined = headIds.reduce((rows, h) => {
    const from = h * headDimensions;
    const to = from + headDimensions;
    const raw = mul(cols(Q, from, to), tr(cols(K, from, to)));
    const scores = raw.reduce((res, row, i) => {
      res.push(row.reduce((acc, x, j) => acc.concat([causal && j > i ? -Infinity : x / Math.sqrt(headDimensions)]), []));
      return res;
    }, []);
    const out = mul(softmaxRows(scores), cols(V, from, to));
    return rows.map((row, t) => row.concat(out[t]));
  }, Q.map(() => []));
  const Wo = W_O ?? Array.from({ length: C }).reduce((I, _, i) => {
    I.push(Array.from({ length: C }, (_, j) => (i === j ? 1 : 0)));
    return I;
  }, []);
  return mul(joined, Wo);
}
