// Style: a port of Hugging Face's rotary code: inv_freq from arange(0, d, 2), cos and sin caches of shape T×d built from cat(freqs, freqs), rotate_half(x) = cat(−x2, x1), and every head turned as x·cos + rotate_half(x)·sin.
export function rotaryEmbedding(X, options) {
  const { numberOfHeads, headDimensions, base = 10000, offset = 0 } = options;
  checkOptions(X, numberOfHeads, headDimensions, base, offset);
  const d = headDimensions;
  const invFreq = arange(0, d, 2).map((k) => 1 / base ** (k / d)); // d/2 frequencies
  const positions = arange(offset, offset + X.length, 1);
  const freqs = positions.map((p) => invFreq.map((f) => p * f)); // T × d/2
  const emb = freqs.map((row) => [...row, ...row]); // T × d
  const cos = emb.map((row) => row.map(Math.cos));
  const sin = emb.map((row) => row.map(Math.sin));
  return X.map((row, t) => {
    const out = [];
    for (let h = 0; h < numberOfHeads; h++) {
      const x = row.slice(h * d, (h + 1) * d);
      const rotated = rotateHalf(x);
      out.push(...x.map((xi, i) => xi * cos[t][i] + rotated[i] * sin[t][i]));
    }
    return out;
  });
}

function arange(start, stop, step) {
  const out = [];
  for (let v = start; v < stop; v += step) out.push(v);
  return out;
}

// [x1, x2] → [−x2, x1], the halves of one head
function rotateHalf(x) {
  const half = x.length / 2;
  const x1 = x.slice(0, half);
  const x2 = x.slice(half);
  return [...x2.map((v) => -v), ...x1];
}

function checkOptions(X, numberOfHeads, headDimensions, base, offset) {
  if (headDimensions % 2 !== 0) throw new RangeError(`headDimensions = ${headDimensions} is odd`);
  if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}`);
  if (!(Number.isFinite(base) && base > 0)) throw new RangeError(`options.base is ${base}`);
  if (!Number.isInteger(offset) || offset < 0) throw new RangeError(`options.offset is ${offset}`);
  const C = numberOfHeads * headDimensions;
  if (X.some((row) => row.length !== C)) {
    throw new RangeError(`X is ${X.length}×${X[0].length} but must be T×${C}`);
  }
}
