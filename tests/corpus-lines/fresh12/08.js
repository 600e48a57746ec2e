// Style: a tiny stack machine, the attention an instruction list of [op, arg] run by an interpreter over a stack of matrices.
const INSTRUCTIONS = {
  transpose(stack) {
    const M = stack.pop();
    stack.push(M[0].map((_, j) => M.map((row) => row[j])));
  },
  matmul(stack) {
    const B = stack.pop();
    const A = stack.pop();
    stack.push(A.map((row) => B[0].map((_, j) => row.reduce((s, a, k) => s + a * B[k][j], 0))));
  },
  scale(stack, f) {
    stack.push(stack.pop().map((row) => row.map((x) => x * f)));
  },
  band(stack, w) {
    stack.push(stack.pop().map((row, p) => row.map((x, j) => (j <= p && j > p - w ? x : -Infinity))));
  },
  softmax(stack) {
    stack.push(stack.pop().map((row) => {
      const top = Math.max(...row);
      const ex = row.map((x) => Math.exp(x - top));
      const z = ex.reduce((a, b) => a + b, 0);
      return ex.map((e) => e / z);
    }));
  },
};

function run(program) {
  const stack = [];
  for (const [op, arg] of program) {
    if (op === 'push') stack.push(arg);
    else INSTRUCTIONS[op](stack, arg);
  }
  return stack.pop();
}

export function slidingWindowAttention(Q, K, V, options = {}) {
  const { window } = options;
  if (window !== undefined) {
    if (typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}; expected a positive integer`);
    if (!Number.isInteger(window) || window < 1) throw new RangeError(`options.window is ${window}; expected a positive integer`);
  }
  const shape = (M) => `${M.length}×${M[0].length}`;
  const d = Q[0].length;
  if (K[0].length !== d) throw new RangeError(`K is ${shape(K)} but must be T×${d}, as wide as Q`);
  if (V[0].length !== d) throw new RangeError(`V is ${shape(V)} but must be T×${d}, as wide as Q`);
  const w = window === undefined ? Infinity : window;
  return run([
    ['push', Q],
    ['push', K],
    ['transpose'],
    ['matmul'],
    ['scale', 1 / Math.sqrt(d)],
    ['band', w],
    ['softmax'],
    ['push', V],
    ['matmul'],
  ]);
}
