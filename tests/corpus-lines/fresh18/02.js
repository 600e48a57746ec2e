// Multi-head attention as a small expression tree: every node a tagged object { kind, ... },
// built per head, and one evaluate() that dispatches on the kind with a switch.

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  for (const M of [Q, K, V]) {
    if (M.length !== Q.length || M[0].length !== C) {
      throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
    }
  }
  const leaf = (value) => ({ kind: 'matrix', value });
  const heads = Array.from({ length: numberOfHeads }, (_, h) => {
    const cols = { kind: 'columns', from: h * headDimensions, to: (h + 1) * headDimensions };
    const q = { ...cols, of: leaf(Q) };
    const k = { ...cols, of: leaf(K) };
    const v = { ...cols, of: leaf(V) };
    const scores = { kind: 'product', left: q, right: { kind: 'transpose', of: k } };
    const scaled = { kind: 'scale', by: 1 / Math.sqrt(headDimensions), of: scores };
    const weights = { kind: 'softmax', of: scaled };
    return { kind: 'product', left: weights, right: v };
  });
  const joined = { kind: 'concat', parts: heads };
  const tree = W_O ? { kind: 'product', left: joined, right: leaf(W_O) } : joined;
  return evaluate(tree);
}

function evaluate(node) {
  switch (node.kind) {
    case 'matrix':
      return node.value;
    case 'columns':
      return evaluate(node.of).map((row) => row.slice(node.from, node.to));
    case 'transpose': {
      const M = evaluate(node.of);
      return M[0].map((_, j) => M.map((row) => row[j]));
    }
    case 'product': {
      const A = evaluate(node.left);
      const B = evaluate(node.right);
      return A.map((row) => B[0].map((_, j) => row.reduce((s, a, k) => s + a * B[k][j], 0)));
    }
    case 'scale':
      return evaluate(node.of).map((row) => row.map((x) => x * node.by));
    case 'softmax':
      return evaluate(node.of).map((row) => {
        const top = Math.max(...row);
        const exps = row.map((x) => Math.exp(x - top));
        const total = exps.reduce((a, b) => a + b, 0);
        return exps.map((e) => e / total);
      });
    case 'concat': {
      const parts = node.parts.map(evaluate);
      return parts[0].map((_, t) => parts.flatMap((part) => part[t]));
    }
    default:
      throw new TypeError(`unknown node kind ${node.kind}`);
  }
}
