
/**
 * A matrix as one flat typed array: `data` holds the values row by row, `shape` is `[T, C]`, or
 * `[B, T, C]` for a batch of B sequences (where a function allows it). Every function returns the
 * same kind it was given. Float32Array data is computed in f32 with the SIMD kernels (fastest; results
 * agree with the f64 path to within 1e-5 of the output's largest entry on inputs in [−1, 1]), Float64Array
 * data in f64 exactly as number[][] is.
 */
export interface TypedMatrix<A extends Float32Array | Float64Array = Float32Array | Float64Array> {
  data: A;
  shape: [number, number] | [number, number, number];
}

/**
 * A typed matrix as an argument: a {@link TypedMatrix} whose `shape` may be any array of numbers, so that
 * `const x = { data: new Float32Array(8), shape: [2, 4] }` (whose `shape` TypeScript infers as `number[]`)
 * can be passed. The shape is checked when the call runs: a RangeError unless it is `[T, C]` (or
 * `[B, T, C]` where the function allows a batch) and `data` holds exactly that many values.
 */
export interface TypedMatrixInput<A extends Float32Array | Float64Array = Float32Array | Float64Array> {
  data: A;
  shape: readonly number[];
}

/** Options of `dotProductAttention`. */
export interface AttentionOptions {
  /** Forbid every key after the query: query i sees keys 0..i only. Default false. */
  causal?: boolean;
  /**
   * T×T table; `mask[i][j] === true` means query i may attend to key j (PyTorch's boolean
   * convention). Combined with `causal` by AND. A query row with no allowed key returns zeros.
   */
  mask?: boolean[][];
}

/** Options of `multiHeadAttention` and `traceMultiHeadAttention`. */
export interface MultiHeadAttentionOptions extends AttentionOptions {
  /** numberOfHeads (h): how many heads C is split into. A positive integer. */
  numberOfHeads: number;
  /** headDimensions (d_head): the width of each head. numberOfHeads · headDimensions must equal C. */
  headDimensions: number;
  /** The C×C output projection applied after concatenation. Default: the identity. */
  W_O?: number[][];
}

/** Options of the typed forms of `multiHeadAttention`: W_O may also be a typed matrix of Q's precision. */
export interface TypedMultiHeadAttentionOptions<A extends Float32Array | Float64Array> extends Omit<MultiHeadAttentionOptions, "W_O"> {
  W_O?: number[][] | TypedMatrixInput<A>;
}

/** A primitive operation of the attention spec. "Add" (a 1×C bias added to every row) appears only in `MultiHeadAttention.trace`. */
export type TraceOp = "Slice" | "Transpose" | "MatMul" | "Mul" | "StableSoftmax" | "Concat" | "Add";

/** One intermediate of multi-head attention. */
export interface TraceStep {
  op: TraceOp;
  /** The name later steps use for this result, e.g. "Q_0", "K_0^T", "scores_0", "weights_0", "context_0", "concat", "output". */
  name: string;
  /** The operands' names, in order; the inputs are called "Q", "K", "V" and "W_O". */
  inputs: string[];
  /** The head the step belongs to (absent for Concat and the W_O MatMul). */
  head?: number;
  /** [rows, cols]. */
  shape: [number, number];
  values: number[][];
  /** Slice: the column range [start, end). */
  columns?: [number, number];
  /** Mul: the scalar factor 1/√headDimensions. */
  scalar?: number;
  /** StableSoftmax: which (query, key) pairs were allowed, present only when something was masked (causal rule, window or mask). */
  allowed?: boolean[][];
  /** Slice of K or V in `traceGroupedQueryAttention`: the key/value head this query head reads. */
  kvHead?: number;
  /** Rotate: RoPE's base and the position of row 0 (row t is at position + t). */
  rotation?: { base: number; position: number };
}

/** The output of multi-head attention and every step that produced it. */
export interface AttentionTrace {
  output: number[][];
  steps: TraceStep[];
}

/**
 * Scaled dot-product attention: softmax(Q·Kᵀ / √d_k) · V, computed in f64.
 *
 * Q and K are T×d_k, V is T×d_v (same T); the result is T×d_v. A query row whose keys are all
 * masked returns a row of zeros (PyTorch's "safe softmax"), never NaN.
 *
 * @throws {TypeError} when a matrix is not an array of arrays of numbers, or an option has the wrong type.
 * @throws {RangeError} for an empty or ragged matrix, mismatched shapes, NaN/±Infinity entries or a mask of the wrong shape.
 */
export function dotProductAttention(Q: number[][], K: number[][], V: number[][], options?: AttentionOptions): number[][];
/** The typed form: Q, K, V as `{ data: Float32Array, shape }` ([T, d] or [B, T, d]); the result is the same kind. */
export function dotProductAttention(Q: TypedMatrixInput<Float32Array>, K: TypedMatrixInput<Float32Array>, V: TypedMatrixInput<Float32Array>, options?: AttentionOptions): TypedMatrix<Float32Array>;
/** The typed form in f64: bit for bit what number[][] input gives. */
export function dotProductAttention(Q: TypedMatrixInput<Float64Array>, K: TypedMatrixInput<Float64Array>, V: TypedMatrixInput<Float64Array>, options?: AttentionOptions): TypedMatrix<Float64Array>;

/**
 * Multi-head self-attention as the course defines it: slice Q, K and V by columns into
 * numberOfHeads heads of headDimensions columns, run scaled dot-product attention per head
 * (scale 1/√headDimensions), concatenate the heads side by side and multiply by W_O
 * (the C×C identity unless given). Q, K and V must all be T×C with C = numberOfHeads·headDimensions.
 *
 * @example multiHeadAttention([[1, 2], [3, 4]], [[1, 2], [3, 4]], [[5, 6], [7, 8]], { numberOfHeads: 2, headDimensions: 1 })
 * // ≈ [[6.761594, 7.964028], [6.995055, 7.999329]]
 * @throws {TypeError} for a value of the wrong type or a missing/unknown option.
 * @throws {RangeError} "Q/K/V matrix dimensions must match the numberOfHeads * headDimensions: …" for a shape that does not fit, and for bad counts, NaN/±Infinity entries or a bad mask.
 */
export function multiHeadAttention(Q: number[][], K: number[][], V: number[][], options: MultiHeadAttentionOptions): number[][];
/** The positional form from the challenge: `multiHeadAttention(Q, K, V, numberOfHeads, headDimensions)`. */
export function multiHeadAttention(Q: number[][], K: number[][], V: number[][], numberOfHeads: number, headDimensions: number): number[][];
/**
 * The typed form: Q, K, V as `{ data: Float32Array, shape: [T, C] }` (or `[B, T, C]`), computed in f32
 * one head and one block of 64 query rows at a time, so memory stays O(T·C + 64·T) however long T is.
 * `W_O` may be a `[C, C]` TypedMatrix of the same precision or number[][].
 */
export function multiHeadAttention(Q: TypedMatrixInput<Float32Array>, K: TypedMatrixInput<Float32Array>, V: TypedMatrixInput<Float32Array>, options: TypedMultiHeadAttentionOptions<Float32Array>): TypedMatrix<Float32Array>;
export function multiHeadAttention(Q: TypedMatrixInput<Float32Array>, K: TypedMatrixInput<Float32Array>, V: TypedMatrixInput<Float32Array>, numberOfHeads: number, headDimensions: number): TypedMatrix<Float32Array>;
/** The typed form in f64: bit for bit what number[][] input gives. */
export function multiHeadAttention(Q: TypedMatrixInput<Float64Array>, K: TypedMatrixInput<Float64Array>, V: TypedMatrixInput<Float64Array>, options: TypedMultiHeadAttentionOptions<Float64Array>): TypedMatrix<Float64Array>;
export function multiHeadAttention(Q: TypedMatrixInput<Float64Array>, K: TypedMatrixInput<Float64Array>, V: TypedMatrixInput<Float64Array>, numberOfHeads: number, headDimensions: number): TypedMatrix<Float64Array>;

/**
 * `multiHeadAttention` with every intermediate recorded as a named step (Slice, Transpose,
 * MatMul, Mul, StableSoftmax, Concat). Replaying the steps in order reproduces `output` bit for bit,
 * and `output` equals `multiHeadAttention` on the same input bit for bit.
 */
export function traceMultiHeadAttention(Q: number[][], K: number[][], V: number[][], options: MultiHeadAttentionOptions): AttentionTrace;
/** The trace of f64 typed input (`[T, C]`), identical to the number[][] trace. Float32Array is refused: the trace records exact f64 steps. */
export function traceMultiHeadAttention(Q: TypedMatrixInput<Float64Array>, K: TypedMatrixInput<Float64Array>, V: TypedMatrixInput<Float64Array>, options: MultiHeadAttentionOptions): AttentionTrace;
