// Challenge 02 with every product one call of a small einsum helper: the spec names the indices
// ('ic,jc->ij' for q·kᵀ), the index shared by both inputs and missing from the output is summed.

function einsum(spec, A, B) {
  const [inputs, output] = spec.split('->');
  const [left, right] = inputs.split(',');
  const sizes = {};
  [...left].forEach((ch, n) => {
    sizes[ch] = n === 0 ? A.length : A[0].length;
  });
  [...right].forEach((ch, n) => {
    sizes[ch] = n === 0 ? B.length : B[0].length;
  });
  const summed = [...left].find((ch) => right.includes(ch) && !output.includes(ch));
  const [r, c] = output;
  const pick = (M, idx, at) => M[at[idx[0]]][at[idx[1]]];
  const out = [];
  for (let x = 0; x < sizes[r]; x++) {
    const row = [];
    for (let y = 0; y < sizes[c]; y++) {
      let s = 0;
      for (let z = 0; z < sizes[summed]; z++) {
        const at = { [r]: x, [c]: y, [summed]: z };
        s += pick(A, left, at) * pick(B, right, at);
      }
      row.push(s);
    }
    out.push(row);
  }
  return out;
}

function softmax(row) {
  const max = Math.max(...row);
  const exps = row.map((x) => Math.exp(x - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
}

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  for (const M of [Q, K, V]) {
    if (M.length !== Q.length || M[0].length !== C) {
      throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
    }
  }
  const d = headDimensions;
  const heads = [];
  for (let h = 0; h < numberOfHeads; h++) {
    const cols = (M) => M.map((row) => row.slice(h * d, (h + 1) * d));
    const [q, k, v] = [cols(Q), cols(K), cols(V)];
    const scores = einsum('ic,jc->ij', q, k);
    const scaled = scores.map((row) => row.map((s) => s / Math.sqrt(d)));
    const weights = scaled.map(softmax);
    heads.push(einsum('ij,jc->ic', weights, v));
  }
  const joined = Q.map((_, t) => heads.reduce((row, head) => row.concat(head[t]), []));
  return W_O ? einsum('tc,co->to', joined, W_O) : joined;
}
