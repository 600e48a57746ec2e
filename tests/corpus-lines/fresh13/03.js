// Style: a tiny computation graph of Node objects (like an autograd tape), built first, then evaluated forward once.
class Node {
  constructor(op, inputs, fn) {
    this.op = op;
    this.inputs = inputs;
    this.fn = fn;
    this.value = undefined;
  }
}

const input = (value) => Object.assign(new Node('input', [], null), { value });
const node = (op, inputs, fn) => new Node(op, inputs, fn);

function forward(out) {
  const order = [];
  const seen = new Set();
  const visit = (n) => {
    if (seen.has(n)) return;
    seen.add(n);
    n.inputs.forEach(visit);
    order.push(n);
  };
  visit(out);
  for (const n of order) {
    if (n.fn) n.value = n.fn(...n.inputs.map((x) => x.value));
  }
  return out.value;
}

export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  const shape = (M) => `${M.length}×${M[0].length}`;
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${shape(K)} but Q is ${shape(Q)}: Q and K must both be T×d_k`);
  if (V.length !== Q.length) throw new RangeError(`V is ${shape(V)} but Q is ${shape(Q)}: V must have T rows`);
  const q = input(Q);
  const k = input(K);
  const v = input(V);
  const kt = node('transpose', [k], (m) => m[0].map((_, j) => m.map((row) => row[j])));
  const scores = node('matmul', [q, kt], (a, b) => a.map((row) => b[0].map((_, j) => row.reduce((s, x, c) => s + x * b[c][j], 0))));
  const scaled = node('scale', [scores], (m) => m.map((row) => row.map((x) => x / Math.sqrt(Q[0].length))));
  const masked = node('mask', [scaled], (m) => m.map((row, i) => row.map((x, j) => (causal && j > i ? -Infinity : x))));
  const weights = node('softmax', [masked], (m) => m.map((row) => {
    const top = Math.max(...row);
    const ex = row.map((x) => Math.exp(x - top));
    const z = ex.reduce((a, b) => a + b, 0);
    return ex.map((e) => e / z);
  }));
  const out = node('matmul', [weights, v], (a, b) => a.map((row) => b[0].map((_, c) => row.reduce((s, w, j) => s + w * b[j][c], 0))));
  return forward(out);
}
