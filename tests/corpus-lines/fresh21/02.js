// Challenge 02 with the iterator protocol written by hand: headsOf() returns an object whose
// [Symbol.iterator]() hands out a { next() } over the heads, each value { offset, q, k, v }, and
// indices(n) another such object over 0 … n − 1; every loop is a for…of over one of them.

function indices(n) {
  return {
    [Symbol.iterator]() {
      let i = 0;
      return { next: () => (i < n ? { done: false, value: i++ } : { done: true, value: undefined }) };
    },
  };
}

function columns(M, from, width) {
  return M.map((row) => row.slice(from, from + width));
}

function headsOf(Q, K, V, numberOfHeads, headDimensions) {
  return {
    [Symbol.iterator]() {
      let h = 0;
      return {
        next() {
          if (h === numberOfHeads) return { done: true, value: undefined };
          const offset = h * headDimensions;
          const q = columns(Q, offset, headDimensions);
          const k = columns(K, offset, headDimensions);
          const v = columns(V, offset, headDimensions);
          h += 1;
          return { done: false, value: { offset, q, k, v } };
        },
      };
    },
  };
}

function attendHead({ q, k, v }, d) {
  const out = [];
  for (const i of indices(q.length)) {
    const scores = [];
    for (const j of indices(k.length)) {
      let dot = 0;
      for (const c of indices(d)) dot += q[i][c] * k[j][c];
      scores.push(dot / Math.sqrt(d));
    }
    const top = Math.max(...scores);
    const exps = scores.map((s) => Math.exp(s - top));
    const total = exps.reduce((a, b) => a + b, 0);
    const row = new Array(d).fill(0);
    for (const [j, e] of exps.entries()) {
      for (const c of indices(d)) row[c] += (e / total) * v[j][c];
    }
    out.push(row);
  }
  return out;
}

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  for (const M of [Q, K, V]) {
    if (M.length !== Q.length || M.some((row) => row.length !== C)) {
      throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
    }
  }
  const joined = Q.map(() => new Array(C).fill(0));
  for (const head of headsOf(Q, K, V, numberOfHeads, headDimensions)) {
    const out = attendHead(head, headDimensions);
    for (const t of indices(Q.length)) {
      for (const c of indices(headDimensions)) joined[t][head.offset + c] = out[t][c];
    }
  }
  const mix = W_O ?? Array.from({ length: C }, (_, i) => Array.from({ length: C }, (_, j) => (i === j ? 1 : 0)));
  return joined.map((row) => mix[0].map((_, j) => row.reduce((sum, x, c) => sum + x * mix[c][j], 0)));
}
