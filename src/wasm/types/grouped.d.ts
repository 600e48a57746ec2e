
/** Options of `groupedQueryAttention`. */
export interface GroupedQueryAttentionOptions {
  /** numberOfHeads (h): the query heads. A positive integer. */
  numberOfHeads: number;
  /** numberOfKVHeads: the key/value heads; must divide numberOfHeads. 1 is multi-query attention, numberOfHeads is multi-head attention. */
  numberOfKVHeads: number;
  /** headDimensions (d_head): the width of every head. */
  headDimensions: number;
  /** The C×C output projection (C = numberOfHeads·headDimensions). Default: the identity. */
  W_O?: number[][];
  /**
   * Query at position p sees keys j ≤ p only. The queries are the LAST T_q of the T_k key positions
   * (query i is at T_k − T_q + i): flash-attention's bottom-right alignment, the one decoding with a
   * KV cache needs, not PyTorch's top-left `is_causal`. With T_q = T_k it is the usual causal mask.
   */
  causal?: boolean;
  /** T_q×T_k table; `mask[i][j] === true` means query i may attend to key j. ANDed with the rest. */
  mask?: boolean[][];
  /** A sliding window w (positive integer): query at p sees keys with |p − j| < w; with `causal`, p − w < j ≤ p (Mistral). */
  window?: number;
}

/** The typed forms of `groupedQueryAttention`: W_O may also be a typed matrix of Q's precision. */
export interface TypedGroupedQueryAttentionOptions<A extends Float32Array | Float64Array> extends Omit<GroupedQueryAttentionOptions, "W_O"> {
  W_O?: number[][] | TypedMatrixInput<A>;
}

/** Options of `rotaryEmbedding`. */
export interface RotaryEmbeddingOptions {
  /** numberOfHeads (h): X's columns are h heads side by side. */
  numberOfHeads: number;
  /** headDimensions (d_head): each head's width; must be even (pairs are rotated). */
  headDimensions: number;
  /** The base of the angles θ = p·base^(−2i/d_head). Default 10000 (Llama). A finite number > 0. */
  base?: number;
  /** The position of row 0 (rows are at offset, offset + 1, …). Default 0. An integer ≥ 0; every position must stay below 2^20. */
  offset?: number;
}

/**
 * Grouped-query attention: numberOfHeads query heads share numberOfKVHeads key/value heads; query
 * head i reads K/V head ⌊i / (numberOfHeads / numberOfKVHeads)⌋ (consecutive query heads share one,
 * as PyTorch's `repeat_interleave` and Llama's `repeat_kv` do). Each head is scaled by 1/√headDimensions;
 * the heads are concatenated and multiplied by W_O. Q is T_q×(numberOfHeads·headDimensions), K and V are
 * T_k×(numberOfKVHeads·headDimensions); the result is T_q×C. With numberOfKVHeads = numberOfHeads and
 * T_q = T_k it equals `multiHeadAttention` bit for bit.
 *
 * @example groupedQueryAttention(Q, K, V, { numberOfHeads: 4, numberOfKVHeads: 2, headDimensions: 8, causal: true })
 * @throws {TypeError} for a value of the wrong type or a missing/unknown option.
 * @throws {RangeError} when numberOfKVHeads does not divide numberOfHeads, for shapes that do not fit, NaN/±Infinity entries, a bad window or mask.
 */
export function groupedQueryAttention(Q: number[][], K: number[][], V: number[][], options: GroupedQueryAttentionOptions): number[][];
/** The typed form in f32, with the SIMD kernels; [T, C] or [B, T, C]. */
export function groupedQueryAttention(Q: TypedMatrixInput<Float32Array>, K: TypedMatrixInput<Float32Array>, V: TypedMatrixInput<Float32Array>, options: TypedGroupedQueryAttentionOptions<Float32Array>): TypedMatrix<Float32Array>;
/** The typed form in f64: bit for bit what number[][] gives. */
export function groupedQueryAttention(Q: TypedMatrixInput<Float64Array>, K: TypedMatrixInput<Float64Array>, V: TypedMatrixInput<Float64Array>, options: TypedGroupedQueryAttentionOptions<Float64Array>): TypedMatrix<Float64Array>;

/** Options of `traceGroupedQueryAttention`: those of `groupedQueryAttention`, and RoPE. */
export interface TraceGroupedQueryAttentionOptions extends GroupedQueryAttentionOptions {
  /**
   * Rotate Q and K with rotary position embedding before the scores (absent or false: no rotation).
   * `offset` is the position of key 0 (default 0); query i is at offset + T_k − T_q + i, so T_q ≤ T_k.
   */
  rope?: boolean | { base?: number; offset?: number };
}

/**
 * `groupedQueryAttention` with every intermediate recorded, for the course: per head Slice (K and V
 * slices carry `kvHead`), Rotate (with `rope`), Transpose, MatMul, Mul, StableSoftmax (its `allowed`
 * shows the causal rule, the window and the mask), MatMul; then Concat and the W_O MatMul. Replaying
 * the steps reproduces `output` bit for bit.
 */
export function traceGroupedQueryAttention(Q: number[][], K: number[][], V: number[][], options: TraceGroupedQueryAttentionOptions): AttentionTrace;

/**
 * Rotary position embedding (RoPE), rotate-half layout (Llama and GPT-NeoX in Hugging Face): within
 * each head and for i < d/2, the pair (x[i], x[i + d/2]) of the row at position p is rotated by
 * θ = p·base^(−2i/d): x[i] → x[i]·cos θ − x[i+d/2]·sin θ, x[i+d/2] → x[i+d/2]·cos θ + x[i]·sin θ.
 * Row t is at position offset + t. Returns the rotated copy; X is not changed.
 *
 * @throws {RangeError} for an odd headDimensions, a shape that is not T×(numberOfHeads·headDimensions), a base that is not a finite number > 0 or a negative or fractional offset.
 */
export function rotaryEmbedding(X: number[][], options: RotaryEmbeddingOptions): number[][];
/** The typed forms, in X's precision; [T, C] or [B, T, C] (every item starts at `offset`). */
export function rotaryEmbedding(X: TypedMatrixInput<Float32Array>, options: RotaryEmbeddingOptions): TypedMatrix<Float32Array>;
export function rotaryEmbedding(X: TypedMatrixInput<Float64Array>, options: RotaryEmbeddingOptions): TypedMatrix<Float64Array>;
