// Scores kept as a list of { i, j, s } records (coordinate form), grouped by query with forEach.
export function dotProductAttention(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) {
    throw new RangeError(`K is ${K.length}×${K[0].length} but Q is ${Q.length}×${Q[0].length}`);
  }
  if (V.length !== Q.length) {
    throw new RangeError(`V is ${V.length}×${V[0].length} but Q is ${Q.length}×${Q[0].length}`);
  }
  const dk = Q[0].length;
  const entries = [];
  Q.forEach((q, i) => {
    K.forEach((k, j) => {
      let s = 0;
      q.forEach((x, c) => { s += x * k[c]; });
      entries.push({ i, j, s });
    });
  });
  entries.forEach((e) => { e.s = e.s / Math.sqrt(dk); });
  const byQuery = new Map();
  entries.forEach((e) => {
    if (!byQuery.has(e.i)) byQuery.set(e.i, []);
    byQuery.get(e.i).push(e);
  });
  byQuery.forEach((group) => {
    let top = -Infinity;
    group.forEach((e) => { if (e.s > top) top = e.s; });
    let total = 0;
    group.forEach((e) => { e.w = Math.exp(e.s - top); total += e.w; });
    group.forEach((e) => { e.w = e.w / total; });
  });
  const out = Q.map(() => new Array(V[0].length).fill(0));
  entries.forEach(({ i, j, w }) => {
    V[j].forEach((v, c) => { out[i][c] += w * v; });
  });
  return out;
}
