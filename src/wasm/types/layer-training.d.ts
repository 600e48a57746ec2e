// The layer's training half (Cargo feature `training`): `backward` and `grads()`. Included by
// src/wasm/layer.rs only in the whole build; the light entry attention-lab/attention declares neither (its
// methods of those names throw an Error naming the whole build).

/**
 * The input gradients of `backward`, shaped like the inputs. For self-attention (one input x
 * used as query, key and value) the gradient with respect to x is query + key + value.
 */
export interface MultiHeadAttentionInputGrads<M> {
  query: M;
  key: M;
  value: M;
}

export interface MultiHeadAttention {
  /**
   * Differentiates the last forward for the gradient of the loss with respect to its output
   * (same shape as the output). Returns the input gradients; stores the parameter gradients
   * for `grads()` (replacing earlier ones). Training passes reuse the forward's dropout mask.
   * After a Float32Array training forward, number[][] or Float64Array gradOutput is differentiated in f64
   * on the values that forward kept (the f64 derivative of the f32 forward).
   * @throws {Error} when no forward has run since construction or the last setWeights, or the last forward was a Float32Array one in evaluation mode.
   * @throws {RangeError} when gradOutput's shape differs from the output's, or a gradient overflows (beyond
   * the largest f64, or f32 for Float32Array training), naming it.
   */
  backward(gradOutput: number[][]): MultiHeadAttentionInputGrads<number[][]>;
  /** After a batched forward: gradOutput is [B, T_q, C]; the loss sums over the items, so the parameter gradients do too. */
  backward(gradOutput: number[][][]): MultiHeadAttentionInputGrads<number[][][]>;
  /** gradOutput as `{ data: Float64Array, shape }` (after any f64 forward); the gradients come back as Float64Array typed matrices. */
  backward(gradOutput: TypedMatrixInput<Float64Array>): MultiHeadAttentionInputGrads<TypedMatrix<Float64Array>>;
  /**
   * gradOutput as `{ data: Float32Array, shape }`, the gradients returned as Float32Array typed matrices.
   * After a Float32Array training forward the backward runs in f32 on the SIMD kernels, and `grads()` are
   * then f32-accurate (f32 values widened exactly to numbers): each gradient entry is within γ_K·m of the f64
   * derivative of the same forward, u = 2^-24, γ_K = K·u/(1 − K·u), m the entry computed with absolute
   * values and K the roundings on its chain (for the query gradient 2C + headDim + 2T_k + 9; the table is
   * in docs/api.md). After an f64 forward it is widened, differentiated in f64 and rounded once.
   */
  backward(gradOutput: TypedMatrixInput<Float32Array>): MultiHeadAttentionInputGrads<TypedMatrix<Float32Array>>;
  /**
   * The parameter gradients of the last `backward`, with the keys of `getWeights()`, nested.
   * @throws {Error} before any backward.
   */
  grads(): MultiHeadAttentionLayerWeights;
  /**
   * The gradients in the flat typed form, Float32Array: after an f32 backward (a Float32Array training
   * forward and gradOutput) the f32 gradients themselves, no conversion; after an f64 one rounded once.
   * @throws {Error} before any backward.
   * @throws {RangeError} when an f64 gradient is beyond the largest f32, naming it.
   */
  grads(options: { dtype: "float32" }): MultiHeadAttentionLayerFlatWeights<Float32Array>;
  /** The gradients in the flat typed form, Float64Array (f32 gradients widened exactly). @throws {Error} before any backward. */
  grads(options: { dtype: "float64" }): MultiHeadAttentionLayerFlatWeights<Float64Array>;
}
