// expect: position
// link: numberOfHeads=2&headDimensions=4&mode=rope&base=100&offset=2&step=rotate
// Positions start at 0 whatever the offset.
// Reference answer for challenge 07: rotary position embedding (RoPE), rotate-half layout.
// Each head's row at position p = offset + r is split into pairs (x[i], x[i + d/2]),
// i = 0 … d/2 − 1, and pair i is turned by the angle p · base^(−2i/d).

export function rotaryEmbedding(X, { numberOfHeads, headDimensions, base = 10000, offset = 0 }) {
  checkOptions(X, numberOfHeads, headDimensions, base, offset);
  const half = headDimensions / 2;
  return X.map((row, r) => {
    const position = r;
    const out = row.slice();                                     // (C), a copy
    for (let head = 0; head < numberOfHeads; head++) {
      const start = head * headDimensions;                       // this head's first column
      for (let i = 0; i < half; i++) {
        const angle = position * base ** ((-2 * i) / headDimensions);
        const [cos, sin] = [Math.cos(angle), Math.sin(angle)];
        const [ia, ib] = [start + i, start + i + half];          // the pair's columns: first half, second half
        const [a, b] = [row[ia], row[ib]];
        out[ia] = a * cos - b * sin;
        out[ib] = a * sin + b * cos;
      }
    }
    return out;
  });
}

function checkOptions(X, numberOfHeads, headDimensions, base, offset) {
  if (headDimensions % 2 !== 0) {
    throw new RangeError(`headDimensions = ${headDimensions} is odd; rotary embedding rotates pairs (x[i], x[i + d/2])`);
  }
  if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}; expected a finite number > 0`);
  if (!(Number.isFinite(base) && base > 0)) throw new RangeError(`options.base is ${base}; expected a finite number > 0`);
  if (!(Number.isInteger(offset) && offset >= 0)) throw new RangeError(`options.offset is ${offset}; expected an integer ≥ 0`);
  const C = numberOfHeads * headDimensions;
  if (X.some((row) => row.length !== C)) {
    throw new RangeError(`X is ${X.length}×${X[0].length} but must be T×(numberOfHeads · headDimensions) = T×${C}`);
  }
}
