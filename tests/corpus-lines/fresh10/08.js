// A right answer whose helpers all take one options object: windowOf({ window }) checks and defaults the window, band({ p, size }) gives the first and last visible key, logits({ q, K, first, last, scale }), softmax({ values }) and mix({ weights, V, first }) work on the band only.
function windowOf({ window }) {
  if (window === undefined) return Infinity;
  if (typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}; expected a positive integer`);
  if (!Number.isInteger(window) || window < 1) throw new RangeError(`options.window is ${window}; expected a positive integer`);
  return window;
}

function checkWidths({ Q, K, V }) {
  const d = Q[0].length;
  if (K[0].length !== d) throw new RangeError(`K is ${K.length}×${K[0].length} but must be T×${d}, as wide as Q`);
  if (V[0].length !== d) throw new RangeError(`V is ${V.length}×${V[0].length} but must be T×${d}, as wide as Q`);
}

function band({ p, size }) {
  const first = Math.max(0, p - size + 1);
  return { first, last: p };
}

function logits({ q, K, first, last, scale }) {
  const out = [];
  for (let j = first; j <= last; j++) {
    let s = 0;
    for (let c = 0; c < q.length; c++) s += q[c] * K[j][c];
    out.push(s * scale);
  }
  return out;
}

function softmax({ values }) {
  const top = Math.max(...values);
  const ex = values.map((x) => Math.exp(x - top));
  const sum = ex.reduce((a, b) => a + b, 0);
  return ex.map((x) => x / sum);
}

function mix({ weights, V, first }) {
  const out = new Array(V[0].length).fill(0);
  weights.forEach((w, n) => {
    const row = V[first + n];
    for (let c = 0; c < out.length; c++) out[c] += w * row[c];
  });
  return out;
}

export function slidingWindowAttention(Q, K, V, options = {}) {
  const size = windowOf(options);
  checkWidths({ Q, K, V });
  const scale = 1 / Math.sqrt(Q[0].length);
  return Q.map((q, p) => {
    const { first, last } = band({ p, size });
    const weights = softmax({ values: logits({ q, K, first, last, scale }) });
    return mix({ weights, V, first });
  });
}
