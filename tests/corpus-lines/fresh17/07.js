// Challenge 07 as a small Rope class: Rope.for(numberOfHeads, headDimensions) makes one, withBase() and
// startingAt() check and set the options and return the Rope for chaining, the half width and the
// inverse frequencies are getters, and apply(X) turns every row at its position.

class Rope {
  static for(numberOfHeads, headDimensions) {
    if (headDimensions % 2 !== 0) throw new RangeError(`headDimensions = ${headDimensions} is odd`);
    return new Rope(numberOfHeads, headDimensions);
  }

  constructor(numberOfHeads, headDimensions) {
    this.heads = numberOfHeads;
    this.width = headDimensions;
    this.base = 10000;
    this.offset = 0;
  }

  withBase(base) {
    if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}; expected a finite number > 0`);
    if (!(Number.isFinite(base) && base > 0)) throw new RangeError(`options.base is ${base}; expected a finite number > 0`);
    this.base = base;
    return this;
  }

  startingAt(offset) {
    if (!(Number.isInteger(offset) && offset >= 0)) throw new RangeError(`options.offset is ${offset}; expected an integer ≥ 0`);
    this.offset = offset;
    return this;
  }

  get half() {
    return this.width / 2;
  }

  get frequencies() {
    return Array.from({ length: this.half }, (_, i) => this.base ** ((-2 * i) / this.width));
  }

  angle(position, i) {
    return position * this.frequencies[i];
  }

  turnRow(row, position) {
    const out = [...row];
    for (let h = 0; h < this.heads; h++) {
      const start = h * this.width;
      for (let i = 0; i < this.half; i++) {
        const theta = this.angle(position, i);
        const x1 = row[start + i];
        const x2 = row[start + i + this.half];
        out[start + i] = x1 * Math.cos(theta) - x2 * Math.sin(theta);
        out[start + i + this.half] = x1 * Math.sin(theta) + x2 * Math.cos(theta);
      }
    }
    return out;
  }

  apply(X) {
    const C = this.heads * this.width;
    if (X.some((row) => row.length !== C)) {
      throw new RangeError(`X is ${X.length}×${X[0].length} but must be T×(numberOfHeads · headDimensions) = T×${C}`);
    }
    return X.map((row, r) => this.turnRow(row, this.offset + r));
  }
}

export function rotaryEmbedding(X, { numberOfHeads, headDimensions, base = 10000, offset = 0 }) {
  return Rope.for(numberOfHeads, headDimensions).withBase(base).startingAt(offset).apply(X);
}
