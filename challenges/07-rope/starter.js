// Challenge 07: rotary position embedding (RoPE).
// X is T×(numberOfHeads·headDimensions); return a
// rotated copy of the same shape.
// Plain JavaScript only: no imports. Keep the `export`.

export function rotaryEmbedding(X, options) {
  const { numberOfHeads, headDimensions } = options;
  const { base = 10000, offset = 0 } = options;
  // Row r of X is the token at position p = offset + r.
  // Head h is columns h·d … h·d + d − 1 (d = headDimensions).
  // In a head, pair column i with column i + d/2
  // (rotate-half), for i = 0 … d/2 − 1, and turn the pair
  // (a, b) by the angle θ = p · base^(−2i/d):
  //   a' = a·cos θ − b·sin θ
  //   b' = a·sin θ + b·cos θ
  // Errors: see "Your task" in the lesson.
  throw new Error('not written yet');
}
