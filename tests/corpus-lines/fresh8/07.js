// Each pair as a complex number { re, im }, turned by multiplying with the unit number e^{iθ}.
const cmul = (a, b) => ({ re: a.re * b.re - a.im * b.im, im: a.re * b.im + a.im * b.re });
const unit = (theta) => ({ re: Math.cos(theta), im: Math.sin(theta) });

export function rotaryEmbedding(X, options) {
  const { numberOfHeads, headDimensions, base = 10000, offset = 0 } = options;
  guard(X, numberOfHeads, headDimensions, base, offset);
  const half = headDimensions / 2;
  return X.map((row, r) => {
    const pos = offset + r;
    const out = [...row];
    for (let h = 0; h < numberOfHeads; h++) {
      const start = h * headDimensions;
      for (let i = 0; i < half; i++) {
        const z = { re: row[start + i], im: row[start + i + half] };
        const freq = Math.pow(base, -(2 * i) / headDimensions);
        const turned = cmul(z, unit(pos * freq));
        out[start + i] = turned.re;
        out[start + i + half] = turned.im;
      }
    }
    return out;
  });
}

function guard(X, numberOfHeads, headDimensions, base, offset) {
  if (headDimensions % 2 !== 0) throw new RangeError(`headDimensions = ${headDimensions} is odd`);
  if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}`);
  if (!(base > 0 && Number.isFinite(base))) throw new RangeError(`options.base is ${base}`);
  if (!Number.isInteger(offset) || offset < 0) throw new RangeError(`options.offset is ${offset}`);
  const C = numberOfHeads * headDimensions;
  if (X.some((row) => row.length !== C)) throw new RangeError(`X is ${X.length}×${X[0].length} but must be T×${C}`);
}
