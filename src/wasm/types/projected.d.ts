
/** Options of `projectedSelfAttention`: the head split, the four projections and an optional mask. */
export interface ProjectedSelfAttentionOptions extends AttentionOptions {
  /** numberOfHeads (h). A positive integer. */
  numberOfHeads: number;
  /** headDimensions (d_head). C = numberOfHeads · headDimensions is the width of X. */
  headDimensions: number;
  /** C×C, oriented [in, out]: Q = X·W_Q. */
  W_Q: number[][];
  /** C×C, [in, out]: K = X·W_K. */
  W_K: number[][];
  /** C×C, [in, out]: V = X·W_V. */
  W_V: number[][];
  /** C×C, [in, out]: output = concat·W_O. */
  W_O: number[][];
}

/**
 * Self-attention with given projections and no biases: Q = X·W_Q, K = X·W_K, V = X·W_V, then
 * `multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal, mask })`. X is T×C with
 * C = numberOfHeads · headDimensions; the result is T×C. Computed by the `MultiHeadAttention`
 * layer (`bias: false`, weights from the options), so it equals that layer's `forward(X)` bit for bit.
 *
 * @example projectedSelfAttention([[1, 0], [0, 1]], { numberOfHeads: 2, headDimensions: 1,
 *   W_Q: [[1, 0], [0, 1]], W_K: [[1, 0], [0, 1]], W_V: [[1, 0], [0, 1]], W_O: [[1, 0], [0, 1]] })
 * // = multiHeadAttention(X, X, X, { numberOfHeads: 2, headDimensions: 1 })
 * @throws {TypeError} for a value of the wrong type, a missing option or an unknown option.
 * @throws {RangeError} "X is 2×3 but numberOfHeads · headDimensions = …" when X is not T×C;
 *   "W_K is 2×3 but must be C×C = 2×2 …" for a projection of the wrong shape; also for bad counts,
 *   NaN/±Infinity entries or a mask that is not T×T.
 */
export function projectedSelfAttention(X: number[][], options: ProjectedSelfAttentionOptions): number[][];
/**
 * The typed form: X as `{ data: Float32Array, shape: [T, C] | [B, T, C] }`, computed in f32 by the layer's
 * SIMD forward (the weights rounded to f32); the result is the same kind and shape. Each W may be
 * number[][] or a `[C, C]` typed matrix of X's precision.
 */
export function projectedSelfAttention(X: TypedMatrixInput<Float32Array>, options: TypedProjectedSelfAttentionOptions<Float32Array>): TypedMatrix<Float32Array>;
/** The typed form in f64: bit for bit what number[][] input gives, one batch item at a time. */
export function projectedSelfAttention(X: TypedMatrixInput<Float64Array>, options: TypedProjectedSelfAttentionOptions<Float64Array>): TypedMatrix<Float64Array>;

/** Options of the typed forms of `projectedSelfAttention`: each W may also be a typed matrix of X's precision. */
export interface TypedProjectedSelfAttentionOptions<A extends Float32Array | Float64Array> extends Omit<ProjectedSelfAttentionOptions, "W_Q" | "W_K" | "W_V" | "W_O"> {
  W_Q: number[][] | TypedMatrixInput<A>;
  W_K: number[][] | TypedMatrixInput<A>;
  W_V: number[][] | TypedMatrixInput<A>;
  W_O: number[][] | TypedMatrixInput<A>;
}
