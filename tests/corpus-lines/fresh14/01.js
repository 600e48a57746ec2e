// Style: a tiny einsum helper that parses index strings ('ik,jk->ij'), every product of the attention written as one.
function einsum(spec, A, B) {
  const [inputs, output] = spec.split('->');
  const [left, right] = inputs.split(',');
  const sizes = {};
  const record = (labels, M) => {
    sizes[labels[0]] = M.length;
    sizes[labels[1]] = M[0].length;
  };
  record(left, A);
  record(right, B);
  // the one index that appears in both inputs and not in the output is summed over
  const summed = [...left].find((ch) => right.includes(ch) && !output.includes(ch));
  const [r, c] = output;
  const out = [];
  for (let i = 0; i < sizes[r]; i++) {
    const row = [];
    for (let j = 0; j < sizes[c]; j++) {
      const at = { [r]: i, [c]: j };
      let total = 0;
      for (let s = 0; s < sizes[summed]; s++) {
        at[summed] = s;
        total += A[at[left[0]]][at[left[1]]] * B[at[right[0]]][at[right[1]]];
      }
      row.push(total);
    }
    out.push(row);
  }
  return out;
}

function softmaxRows(S) {
  return S.map((row) => {
    const peak = Math.max(...row);
    const exps = row.map((x) => Math.exp(x - peak));
    const sum = exps.reduce((a, b) => a + b, 0);
    return exps.map((e) => e / sum);
  });
}

const shape = (M) => `${M.length}×${M[0].length}`;

export function dotProductAttention(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) {
    throw new RangeError(`K is ${shape(K)} but Q is ${shape(Q)}`);
  }
  if (V.length !== Q.length) {
    throw new RangeError(`V is ${shape(V)} but Q is ${shape(Q)}`);
  }
  const dk = Q[0].length;
  const scores = einsum('ik,jk->ij', Q, K);
  const scaled = scores.map((row) => row.map((x) => x / Math.sqrt(dk)));
  const weights = softmaxRows(scaled);
  const output = einsum('ij,jc->ic', weights, V);
  return output;
}
