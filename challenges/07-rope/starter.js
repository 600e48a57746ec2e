// Challenge 07: rotary position embedding (RoPE).
// rotaryEmbedding(X, { numberOfHeads, headDimensions, base = 10000, offset = 0 }):
// X is T×(numberOfHeads·headDimensions); return a rotated copy of the same shape.
// Plain JavaScript only: no imports. Keep the `export`.

export function rotaryEmbedding(X, { numberOfHeads, headDimensions, base = 10000, offset = 0 }) {
  // Row r of X is the token at position p = offset + r.
  // Inside each head (columns head·d … head·d + d − 1, d = headDimensions), pair column i
  // with column i + d/2 (rotate-half layout), for i = 0 … d/2 − 1, and turn the pair
  // (a, b) by the angle θ = p · base^(−2i/d):   a' = a·cos θ − b·sin θ,   b' = a·sin θ + b·cos θ.
  // Errors (see the lesson): an odd headDimensions, a base that is not a number > 0,
  // an offset that is not an integer ≥ 0.
  throw new Error('not written yet');
}
