// Style: a sliding deque: the positions walked in order, each key index pushed onto a queue and the oldest shifted off once the queue holds more than `window` keys, every query attending to exactly the keys in the queue.
export function slidingWindowAttention(Q, K, V, options = {}) {
  const { window } = options;
  if (window !== undefined) {
    if (typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}; expected a positive integer`);
    if (!Number.isInteger(window) || window < 1) throw new RangeError(`options.window is ${window}; expected a positive integer`);
  }
  const d = Q[0].length;
  const shape = (M) => `${M.length}×${M[0].length}`;
  if (K[0].length !== d) throw new RangeError(`K is ${shape(K)} but must be T×${d}, as wide as Q`);
  if (V[0].length !== d) throw new RangeError(`V is ${shape(V)} but must be T×${d}, as wide as Q`);

  const limit = window ?? Q.length;
  const queue = [];
  const out = [];
  for (let p = 0; p < Q.length; p++) {
    queue.push(p);
    if (queue.length > limit) queue.shift();
    out.push(attendTo(Q[p], queue, K, V, d));
  }
  return out;
}

// One query against the keys whose indices are in the queue.
function attendTo(q, queue, K, V, d) {
  const scale = Math.sqrt(d);
  const logits = queue.map((j) => dot(q, K[j]) / scale);
  const peak = Math.max(...logits);
  const weights = logits.map((s) => Math.exp(s - peak));
  const sum = weights.reduce((a, b) => a + b, 0);
  const row = new Array(V[0].length).fill(0);
  queue.forEach((j, n) => {
    for (let c = 0; c < row.length; c++) row[c] += (weights[n] / sum) * V[j][c];
  });
  return row;
}

function dot(a, b) {
  let s = 0;
  for (let c = 0; c < a.length; c++) s += a[c] * b[c];
  return s;
}
