
/** What `new MultiHeadAttention(…)` takes. */
export interface MultiHeadAttentionLayerConfig {
  /** C, the model width. A positive integer divisible by numHeads. */
  embedDim: number;
  /** numberOfHeads (h). headDim = embedDim / numHeads. */
  numHeads: number;
  /**
   * The key/value heads (grouped-query attention); must divide numHeads. Query head i uses key/value
   * head ⌊i / (numHeads / numKVHeads)⌋ (Llama's `repeat_kv`). 1 is multi-query attention. W_K and W_V
   * are then C×(numKVHeads·headDim), b_K and b_V have numKVHeads·headDim entries. Default numHeads.
   */
  numKVHeads?: number;
  /**
   * Rotary position embedding of each head's query and key after projection and bias, before the
   * scores, in the rotate-half layout (Llama, GPT-NeoX): the pair (x[i], x[i + headDim/2]) at position p
   * is rotated by p·base^(−2i/headDim). headDim must be even. `true` means `{ base: 10000 }`; absent or
   * false: no rotation. Keys are at positions 0 … T_k − 1 and queries are the last T_q positions.
   */
  rope?: boolean | { base?: number };
  /** Whether the four projections have biases (initialised to 0). Default true. */
  bias?: boolean;
  /** Dropout probability on the attention weights while training, 0 ≤ dropout < 1. Default 0. */
  dropout?: number;
  /**
   * Seed of the Xavier-uniform initial weights and of the dropout stream (SplitMix64; the exact
   * algorithm is in the crate docs of `layer::init`, so any runtime can reproduce the weights).
   * An integer 0 … 2^53 − 1, or a bigint up to 2^64 − 1. Default 0.
   */
  seed?: number | bigint;
}

/**
 * The layer's parameters, oriented [in, out]: the layer computes x·W + b. Each W is C×C, each b
 * has C entries. The b_* keys are present exactly when the layer has biases.
 */
export interface MultiHeadAttentionLayerWeights {
  W_Q: number[][];
  W_K: number[][];
  W_V: number[][];
  W_O: number[][];
  b_Q?: number[];
  b_K?: number[];
  b_V?: number[];
  b_O?: number[];
}

/**
 * The layer's parameters in the flat typed form, as `getWeights({ dtype })` and `grads({ dtype })` return them:
 * each tensor a Float32Array or Float64Array of its entries, row-major (W_Q's row i, column j at
 * `i·C + j`; W_K and W_V have C·numKVHeads·headDim entries).
 */
export type MultiHeadAttentionLayerFlatWeights<A extends Float32Array | Float64Array> = { [K in keyof MultiHeadAttentionLayerWeights]: A };

/**
 * `setWeights` takes any subset of the keys; the others keep their values. Each tensor is nested
 * (number[][] / number[]) or flat (a Float32Array or Float64Array of its entries, row-major, as
 * `getWeights({ dtype })` returns it; Float32Array values are widened exactly).
 */
export type MultiHeadAttentionLayerWeightsUpdate = { [K in keyof MultiHeadAttentionLayerWeights]?: MultiHeadAttentionLayerWeights[K] | Float32Array | Float64Array };

/** A small GPT's fused layout for `MultiHeadAttention.fromFusedQKV`. */
export interface FusedQKVWeights {
  /** C×3C: the Q, K and V weights as consecutive column blocks, each [in, out]. */
  W_QKV: number[][];
  /** 3C entries (Q, K, V); give both b_QKV and b_O or neither. */
  b_QKV?: number[];
  /** C×C, [in, out]. */
  W_O: number[][];
  b_O?: number[];
  numHeads: number;
  dropout?: number;
  seed?: number | bigint;
}

/**
 * PyTorch `nn.MultiheadAttention` parameters (a state dict exported to JSON), for
 * `MultiHeadAttention.fromPyTorch`. PyTorch stores weights [out, in], transposed relative to ours.
 * The output projection may be given as `out_proj_weight`/`out_proj_bias` or with the state
 * dict's own keys `"out_proj.weight"`/`"out_proj.bias"`.
 */
export interface PyTorchAttentionState {
  /** 3C×C: the Q, K and V weights stacked by rows. */
  in_proj_weight: number[][];
  in_proj_bias?: number[];
  out_proj_weight?: number[][];
  out_proj_bias?: number[];
  "out_proj.weight"?: number[][];
  "out_proj.bias"?: number[];
  numHeads: number;
  dropout?: number;
  seed?: number | bigint;
}

/** Options of `MultiHeadAttention.forward`. */
export interface MultiHeadAttentionForwardOptions {
  /** T_q×T_k; `mask[i][j] === true` means query i may attend to key j. Shared by a whole batch. */
  mask?: boolean[][];
  /**
   * Query at position p sees keys j ≤ p only. Keys are at positions 0 … T_k − 1 and the queries are the
   * LAST T_q positions (query i at T_k − T_q + i): flash-attention's bottom-right alignment, which
   * decoding needs; PyTorch's `is_causal` aligns top-left instead. The same as j ≤ i when T_q = T_k.
   * Combined with `mask` and `window` by AND.
   */
  causal?: boolean;
  /** A sliding window w (positive integer): query at p sees keys with |p − j| < w; with `causal`, p − w < j ≤ p (Mistral). */
  window?: number;
  /**
   * Decode with a KV cache from `createCache()`: the input (self-attention; key and value omitted) is
   * projected, rotated at positions cache.length …, appended to the cache, and attends over everything
   * cached. Needs `causal: true`; no `mask`, no `training`. Any chunking of a sequence gives the rows of
   * one causal forward over the whole sequence. With `window` the cache holds fewer than 2·window positions
   * (those no later query can see are dropped). `backward` after a cached forward throws.
   */
  cache?: KvCache;
  /** Also return the attention weights per head. Default false. */
  needWeights?: boolean;
  /** With needWeights: return the mean over heads instead. Default false. */
  averageWeights?: boolean;
  /** Apply dropout (only when the layer's dropout > 0). Default false. */
  training?: boolean;
}

/** `forward` on one [T_q, C] matrix. */
export interface MultiHeadAttentionResult {
  /** [T_q, C]. */
  output: number[][];
  /** With needWeights: [h, T_q, T_k], or [T_q, T_k] with averageWeights (after dropout when training). */
  weights?: number[][][] | number[][];
}

/** `forward` on a batch [B, T_q, C]. */
export interface MultiHeadAttentionBatchResult {
  /** [B, T_q, C]. */
  output: number[][][];
  /** With needWeights: [B, h, T_q, T_k], or [B, T_q, T_k] with averageWeights. */
  weights?: number[][][][] | number[][][];
}

/**
 * `forward` on typed input: the same kind back. `output` is [T_q, C] (or [B, T_q, C]); with
 * needWeights, `weights` is [h, T_q, T_k] (or [B, h, T_q, T_k]), [T_q, T_k] (or [B, T_q, T_k]) with averageWeights.
 */
export interface MultiHeadAttentionTypedResult<A extends Float32Array | Float64Array> {
  output: TypedMatrix<A>;
  weights?: { data: A; shape: number[] };
}

export interface MultiHeadAttention {
  /**
   * Runs the layer: Q = query·W_Q + b_Q, K = key·W_K + b_K, V = value·W_V + b_V; per head
   * softmax(Q_h·K_hᵀ/√headDim)·V_h under the mask; heads concatenated, then ·W_O + b_O.
   * key defaults to query and value to key. T_k may differ from T_q (cross-attention).
   * @throws {TypeError} for a value of the wrong type or an unknown option.
   * @throws {RangeError} for shapes that do not fit (C ≠ embedDim, key/value T differ, mask not T_q×T_k) or NaN/±Infinity entries.
   */
  forward(query: number[][], key?: number[][] | null, value?: number[][] | null, options?: MultiHeadAttentionForwardOptions): MultiHeadAttentionResult;
  /** A batch: query [B, T_q, C], key and value [B, T_k, C]; the B items share the weights and the mask. */
  forward(query: number[][][], key?: number[][][] | null, value?: number[][][] | null, options?: MultiHeadAttentionForwardOptions): MultiHeadAttentionBatchResult;
  /**
   * The typed form in f32: `{ data: Float32Array, shape: [T, C] | [B, T, C] }`, computed with the SIMD
   * kernels (weights packed once per set of weights), one head and one block of 64 query rows at a
   * time: without needWeights, memory is O(T·C + 64·T), never all heads' T_q×T_k weights. Results agree
   * with the f64 path to within 1e-5 of the output's largest entry on inputs in [−1, 1]; `backward` after
   * it throws an Error. With `training: true`
   * the same f32 kernels run (the same output and weights as evaluation mode without dropout; with
   * dropout the same entries dropped as the f64 path for the same seed) and the layer keeps what
   * `backward` needs in f32: Q, K (after RoPE), V, the weights, the dropout mask, concat and the inputs.
   */
  forward(query: TypedMatrixInput<Float32Array>, key?: TypedMatrixInput<Float32Array> | null, value?: TypedMatrixInput<Float32Array> | null, options?: MultiHeadAttentionForwardOptions): MultiHeadAttentionTypedResult<Float32Array>;
  /** The typed form in f64: bit for bit what number[][] input gives, and `backward` works after it. */
  forward(query: TypedMatrixInput<Float64Array>, key?: TypedMatrixInput<Float64Array> | null, value?: TypedMatrixInput<Float64Array> | null, options?: MultiHeadAttentionForwardOptions): MultiHeadAttentionTypedResult<Float64Array>;
  /**
   * Any one of the forms above, the same form for query, key and value (query's form decides; key and value
   * must match it); the result is that form's. (Declared last so that a call that fits no form is reported
   * against it: a misspelled option is named as such, and a key in another precision as that.)
   */
  forward<M extends number[][] | number[][][] | TypedMatrixInput<Float32Array> | TypedMatrixInput<Float64Array>>(query: M, key?: [M][M extends unknown ? 0 : never] | null, value?: [M][M extends unknown ? 0 : never] | null, options?: MultiHeadAttentionForwardOptions): MultiHeadAttentionResult | MultiHeadAttentionBatchResult | MultiHeadAttentionTypedResult<Float32Array> | MultiHeadAttentionTypedResult<Float64Array>;
  /** A new, empty KV cache for this layer's `forward(x, undefined, undefined, { cache, causal: true })`. */
  createCache(): KvCache;
  /**
   * An evaluation-mode forward of one [T, C] input with every step recorded, projections and
   * biases included: MatMul "query·W_Q" and Add "Q" (b_Q), likewise K and V, then the heads as in
   * `traceMultiHeadAttention`, the W_O MatMul "concat·W_O" and Add "output" (b_O). Without biases
   * the MatMuls are named "Q", "K", "V" and "output". Replaying the steps from the inputs "query",
   * "key", "value", "W_Q" … "W_O" and "b_Q" … "b_O" (as 1×C matrices) reproduces `output` bit for
   * bit, and `output` equals `forward(…).output`. Does not affect `backward`.
   */
  trace(query: number[][], key?: number[][] | null, value?: number[][] | null, options?: Pick<MultiHeadAttentionForwardOptions, "mask" | "causal">): AttentionTrace;
  /** Copies of the weights (and biases, when the layer has them), nested: number[][] and number[]. */
  getWeights(): MultiHeadAttentionLayerWeights;
  /**
   * The flat typed form (no nested arrays to build or walk: the form for training by hand): each tensor a
   * Float32Array of its entries, row-major, each weight rounded once to f32 (what the f32 forward uses).
   * @throws {RangeError} when a weight is beyond the largest f32 (about 3.4e38), naming it.
   */
  getWeights(options: { dtype: "float32" }): MultiHeadAttentionLayerFlatWeights<Float32Array>;
  /** The flat typed form in f64: each tensor a Float64Array of its entries, row-major, exact. */
  getWeights(options: { dtype: "float64" }): MultiHeadAttentionLayerFlatWeights<Float64Array>;
}
