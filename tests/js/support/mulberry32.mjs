// mulberry32: the seeded generator the JS tests and the benchmark share (tests/bench/native.rs
// implements the same one in Rust). Values are in [-1, 1) and exactly representable in f32, so
// f32 and f64 runs see the same inputs.

/** `len` values into a new array of type `Array` (Float64Array by default), each times `scale`. */
export function seeded(len, seed, { scale = 1, Array = Float64Array } = {}) {
  const out = new Array(len);
  let state = seed >>> 0;
  for (let i = 0; i < len; i++) {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    z = (z ^ (z >>> 14)) >>> 0;
    out[i] = Math.fround((z >>> 8) / 16777216 * 2 - 1) * scale;
  }
  return out;
}
