// Challenge 01 as a tiny stack machine: the attention is a program of [op, ...args] instructions run
// by an interpreter over a stack of matrices.

const OPS = {
  push(stack, M) {
    stack.push(M);
  },
  transpose(stack) {
    const M = stack.pop();
    stack.push(M[0].map((_, j) => M.map((row) => row[j])));
  },
  matmul(stack) {
    const B = stack.pop();
    const A = stack.pop();
    const out = [];
    for (let i = 0; i < A.length; i++) {
      const row = [];
      for (let j = 0; j < B[0].length; j++) {
        let s = 0;
        for (let k = 0; k < B.length; k++) s += A[i][k] * B[k][j];
        row.push(s);
      }
      out.push(row);
    }
    stack.push(out);
  },
  scale(stack, factor) {
    const M = stack.pop();
    stack.push(M.map((row) => row.map((x) => x * factor)));
  },
  softmax(stack) {
    const M = stack.pop();
    stack.push(M.map((row) => {
      const top = Math.max(...row);
      const exps = row.map((x) => Math.exp(x - top));
      let total = 0;
      for (const e of exps) total += e;
      return exps.map((e) => e / total);
    }));
  },
};

function run(program) {
  const stack = [];
  for (const [op, ...args] of program) OPS[op](stack, ...args);
  return stack.pop();
}

export function dotProductAttention(Q, K, V) {
  checkShapes(Q, K, V);
  const dk = Q[0].length;
  return run([
    ['push', Q],
    ['push', K],
    ['transpose'],
    ['matmul'],
    ['scale', 1 / Math.sqrt(dk)],
    ['softmax'],
    ['push', V],
    ['matmul'],
  ]);
}

function checkShapes(Q, K, V) {
  const shape = (M) => `${M.length}×${M[0].length}`;
  if (K.length !== Q.length || K[0].length !== Q[0].length) {
    throw new RangeError(`K is ${shape(K)} but Q is ${shape(Q)}`);
  }
  if (V.length !== Q.length) {
    throw new RangeError(`V is ${shape(V)} but Q is ${shape(Q)}`);
  }
}
