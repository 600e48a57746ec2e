// A right answer on a tiny matrix class whose methods chain one per line (cols, timesT, scaled, softmaxRows, times), each query head's key/value head read from an owner table built once by Array.from, the heads joined by an hcat method.
class Mat {
  constructor(rows) { this.rows = rows; }
  get height() { return this.rows.length; }
  get width() { return this.rows[0].length; }
  cols(from, count) { return new Mat(this.rows.map((r) => r.slice(from, from + count))); }
  timesT(other) { return new Mat(this.rows.map((a) => other.rows.map((b) => a.reduce((s, x, c) => s + x * b[c], 0)))); }
  scaled(f) { return new Mat(this.rows.map((r) => r.map((x) => x * f))); }
  softmaxRows() {
    return new Mat(this.rows.map((r) => {
      const hi = Math.max(...r);
      const e = r.map((x) => Math.exp(x - hi));
      const sum = e.reduce((a, b) => a + b, 0);
      return e.map((x) => x / sum);
    }));
  }
  times(other) {
    return new Mat(this.rows.map((a) => other.rows[0].map((_, j) => a.reduce((s, x, k) => s + x * other.rows[k][j], 0))));
  }
  hcat(other) { return new Mat(this.rows.map((r, i) => [...r, ...other.rows[i]])); }
  toString() { return `${this.height}×${this.width}`; }
}

export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  const [q, k, v] = [Q, K, V].map((M) => new Mat(M));
  if (numberOfHeads % numberOfKVHeads !== 0) {
    throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  }
  const C = numberOfHeads * headDimensions;
  const Ckv = numberOfKVHeads * headDimensions;
  if (q.width !== C) throw new RangeError(`Q is ${q} but must be T_q×(numberOfHeads · headDimensions) = T_q×${C}`);
  if (k.width !== Ckv) throw new RangeError(`K is ${k} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${Ckv}`);
  if (v.width !== Ckv) throw new RangeError(`V is ${v} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${Ckv}`);
  if (v.height !== k.height) throw new RangeError(`V is ${v} but K is ${k}`);

  const shareBy = numberOfHeads / numberOfKVHeads;
  const owner = Array.from({ length: numberOfHeads }, (_, h) => Math.floor(h / shareBy));
  const invRoot = 1 / Math.sqrt(headDimensions);
  let joined = null;
  owner.forEach((g, h) => {
    const out = q.cols(h * headDimensions, headDimensions)
      .timesT(k.cols(g * headDimensions, headDimensions))
      .scaled(invRoot)
      .softmaxRows()
      .times(v.cols(g * headDimensions, headDimensions));
    joined = joined ? joined.hcat(out) : out;
  });
  return joined.rows;
}
