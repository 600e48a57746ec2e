// Style: a small linear-algebra toolkit (range, zeros, vecmat) and RoPE as a matrix product: each row times a C×C block-diagonal rotation matrix built for its position.
const range = (n) => Array.from({ length: n }, (_, i) => i);
const zeros = (n, m) => range(n).map(() => new Array(m).fill(0));
const vecmat = (x, M) => M[0].map((_, j) => x.reduce((s, xi, i) => s + xi * M[i][j], 0));

function inverseFrequencies(d, base) {
  return range(d / 2).map((i) => base ** (-(2 * i) / d));
}

// R[in][out], so that x·R turns every pair (start + i, start + i + d/2) of every head
function rotationMatrix(position, numberOfHeads, d, freqs) {
  const C = numberOfHeads * d;
  const half = d / 2;
  const R = zeros(C, C);
  for (let h = 0; h < numberOfHeads; h++) {
    const start = h * d;
    for (let i = 0; i < half; i++) {
      const angle = position * freqs[i];
      const cos = Math.cos(angle);
      const sin = Math.sin(angle);
      const a = start + i;
      const b = start + i + half;
      R[a][a] = cos;
      R[b][a] = -sin;
      R[a][b] = sin;
      R[b][b] = cos;
    }
  }
  return R;
}

export function rotaryEmbedding(X, { numberOfHeads, headDimensions, base = 10000, offset = 0 }) {
  if (headDimensions % 2 !== 0) {
    throw new RangeError(`headDimensions = ${headDimensions} is odd; the pairs are (x[i], x[i + d/2])`);
  }
  if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}; expected a finite number > 0`);
  if (!Number.isFinite(base) || base <= 0) throw new RangeError(`options.base is ${base}; expected a finite number > 0`);
  if (!Number.isInteger(offset) || offset < 0) throw new RangeError(`options.offset is ${offset}; expected an integer ≥ 0`);
  const C = numberOfHeads * headDimensions;
  if (X.some((row) => row.length !== C)) {
    throw new RangeError(`X is ${X.length}×${X[0].length} but must be T×(numberOfHeads · headDimensions) = T×${C}`);
  }
  const freqs = inverseFrequencies(headDimensions, base);
  return X.map((row, r) => {
    const position = offset + r;
    const R = rotationMatrix(position, numberOfHeads, headDimensions, freqs);
    return vecmat(row, R);
  });
}
