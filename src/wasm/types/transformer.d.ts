
/** What `new Transformer(…)` takes. */
export interface TransformerConfig {
  /** V: tokens are integers 0 … vocabSize − 1. At least 2. */
  vocabSize: number;
  /** The longest sequence T the model takes (W_pos has this many rows). At least 2. */
  contextLength: number;
  /** C, the residual stream's width; a multiple of numHeads. */
  embedDim: number;
  /** h, the heads of each attention layer. headDim = embedDim / numHeads. */
  numHeads: number;
  /** The attention layers (blocks); 0 is a bigram model. */
  numLayers: number;
  /**
   * How positions enter. `'shortformer'` (the default, fastest to form induction heads): W_pos[t] is added
   * to every layer's query and key inputs, never to the residual stream or the values. `'learned'`: W_pos[t]
   * added to the residual stream once, at the bottom (GPT-2). `'rope'`: each layer's rotary embedding of Q
   * and K (base 10000; headDim must be even). `'none'`: only the causal mask.
   */
  positions?: "shortformer" | "learned" | "rope" | "none";
  /**
   * An MLP after each attention layer: `true` or `'gelu_new'` (GELU, tanh form: W_in, b_in, W_out, b_out),
   * `'silu_gated'` ((SiLU(m·W_gate + b_gate) ⊙ (m·W_up + b_up))·W_down + b_down, Llama's). Default false.
   * The `config` getter gives `true` for the GELU MLP and `'silu_gated'` for the gated one.
   */
  mlp?: boolean | "gelu_new" | "silu_gated";
  /** Pre-norm blocks (a norm before attention and MLP) and a final norm before W_U. Default false. */
  layerNorm?: boolean;
  /** With layerNorm: `'layer'` (LayerNorm, `*_w` and `*_b`; the default) or `'rms'` (RMSNorm, `*_w` only). */
  norm?: "layer" | "rms";
  /** With layerNorm: the norms' ε, a finite number > 0. Default 1e-5. */
  normEps?: number;
  /** With mlp: F, the MLP's hidden width, an integer ≥ 1. Default 4·embedDim. */
  mlpWidth?: number;
  /** With mlp: the MLP's biases. Default true. */
  mlpBias?: boolean;
  /** Key/value heads, a divisor of numHeads (query head i reads K/V head ⌊i / (numHeads / numKVHeads)⌋). Default numHeads. */
  numKVHeads?: number;
  /** With positions 'rope': the base of RoPE's frequencies, a finite number > 0. Default 10000. */
  ropeBase?: number;
  /** W_U = W_Eᵀ, no parameter of its own (getWeights has no W_U). Default false. */
  tiedEmbeddings?: boolean;
  /** Biases b_Q, b_K, b_V, b_O in the attention layers. Default false. */
  bias?: boolean;
  /** Seed of the initial weights (SplitMix64), an integer 0 … 2^53 − 1 or a bigint. Default 0. */
  seed?: number | bigint;
  /** `'float32'` (default: the SIMD kernels, every core after initThreadPool) or `'float64'` (exact). */
  dtype?: "float32" | "float64";
}

/** Tokens [B, T]: integers 0 … vocabSize − 1, 2 ≤ T ≤ contextLength. */
export type TransformerTokens = number[][] | { data: Int32Array | Uint32Array | Uint16Array | Uint8Array; shape: [number, number] };

/** A tensor as `getWeights` returns it (number[][] for matrices, number[] for vectors), or any
 * Float32Array / Float64Array of its entries, row-major, for `setWeights`. */
export type TransformerTensor = number[][] | number[] | Float32Array | Float64Array;

/** One block's parameters, oriented [in, out] (the layer computes x·W + b). */
export interface TransformerLayerWeights<T = TransformerTensor> {
  W_Q: T; W_K: T; W_V: T; W_O: T;
  b_Q?: T; b_K?: T; b_V?: T; b_O?: T;
  /** With layerNorm: the gain and bias of the LN before attention. */
  ln1_w?: T; ln1_b?: T;
  /** With mlp and layerNorm: the LN before the MLP. */
  ln2_w?: T; ln2_b?: T;
  /** With a GELU mlp: W_in [C, F], b_in [F], W_out [F, C], b_out [C] (F = mlpWidth; biases with mlpBias). */
  W_in?: T; b_in?: T; W_out?: T; b_out?: T;
  /** With mlp 'silu_gated': W_gate, W_up [C, F], W_down [F, C] (and b_gate, b_up [F], b_down [C] with mlpBias). */
  W_gate?: T; b_gate?: T; W_up?: T; b_up?: T; W_down?: T; b_down?: T;
}

/** Every parameter: W_E [V, C], W_pos [contextLength, C] (shortformer and learned), W_U [C, V] (absent with tiedEmbeddings). Norm biases (`*_b`) only with norm 'layer'. */
export interface TransformerWeights<T = TransformerTensor> {
  W_E: T;
  W_pos?: T;
  W_U?: T;
  ln_final_w?: T;
  ln_final_b?: T;
  layers: TransformerLayerWeights<T>[];
}

/** `setWeights` takes any subset; `layers[l]` may be absent or partial. */
export type TransformerWeightsUpdate = Partial<Omit<TransformerWeights, "layers">> & { layers?: (Partial<TransformerLayerWeights> | undefined | null)[] };

/** A [..shape] tensor, row-major. */
export interface TransformerTyped<A extends Float32Array | Float64Array> { data: A; shape: number[] }

/** What `forward` returns. */
export interface TransformerOutput<A extends Float32Array | Float64Array = Float32Array | Float64Array> {
  /** [B, T, V], in the model's dtype. */
  logits: TransformerTyped<A>;
  /** The mean of `losses`. */
  loss: number;
  /** [B, T − 1]: the cross-entropy of predicting token t + 1 from tokens 0 … t (Float64Array). */
  losses: TransformerTyped<Float64Array>;
  /** With needWeights: per layer [B, h, T, T] (row t: query t's weights over keys 0 … t). */
  weights?: TransformerTyped<A>[];
  /** With needHidden (a model from fromPretrained): numLayers + 1 entries [B, T, C]: the embeddings, the residual stream after each block but the last, and the final norm's output. */
  hidden?: TransformerTyped<A>[];
}

/** The scores of one head; each a mean over positions t ≥ 1 (see docs/api.md). */
export interface HeadScore {
  /** Mean weight on t − 1. */
  previousToken: number;
  /** Where token t occurred before: mean of the summed weight on s + 1 over every earlier occurrence s. */
  induction: number;
  /** Mean weight on position 0. */
  firstToken: number;
  /** Mean weight on t itself. */
  self: number;
}

/** Weights, AdamW moments and step, as `getState` returns it (every tensor a flat typed array). */
export interface TransformerState {
  dtype: "float32" | "float64";
  step: number;
  weights: TransformerWeights<Float32Array | Float64Array>;
  m: TransformerWeights<Float32Array | Float64Array>;
  v: TransformerWeights<Float32Array | Float64Array>;
}

/** Options of `trainStep`: AdamW as PyTorch's `torch.optim.AdamW`. */
export interface TrainStepOptions {
  /** A finite number ≥ 0. */
  learningRate: number;
  /** Default [0.9, 0.999]. */
  betas?: [number, number];
  /** Default 1e-8. */
  eps?: number;
  /** Decoupled decay of every 2-D parameter (weights, embeddings), not of biases or LN. Default 0.01. */
  weightDecay?: number;
}

/** What `repeatedTokens` returns. */
export interface RepeatedTokens {
  /** [B, 1 + 2·length]: token 0, then a period of distinct tokens repeated. */
  tokens: number[][];
  /** [B, T]: true where token t repeats the token one period back. */
  repeated: boolean[][];
  /** The period of each sequence, ⌈length/2⌉ … length. */
  periods: number[];
}

export interface Transformer {
  /** The logits, the losses, and with needWeights every layer's attention weights. headMask[l][i] = false ablates head i of layer l (its output is zeroed before W_O); each pathMask entry removes one head's output from one input of one later head only (path ablation). */
  forward(tokens: TransformerTokens, options?: { needWeights?: boolean; headMask?: boolean[][]; pathMask?: PathCut[] }): TransformerOutput;
  /** The loss and the gradient of every parameter (the keys of getWeights), at the current weights; nothing is updated. */
  gradients(tokens: TransformerTokens): { loss: number; grads: TransformerWeights<number[][] | number[]> };
  /** The loss at the current weights, then one AdamW step of every parameter. A refused call changes nothing. */
  trainStep(tokens: TransformerTokens, options: TrainStepOptions): { loss: number; losses: TransformerTyped<Float64Array> };
  /** Per layer, per head: the previous-token, induction, first-token and self scores on these tokens. */
  headScores(tokens: TransformerTokens): HeadScore[][];
  /** Copies of every parameter. */
  getWeights(): TransformerWeights<number[][] | number[]>;
  /** Replaces any subset of the parameters (the others keep theirs); the optimizer's moments and step are kept. */
  setWeights(weights: TransformerWeightsUpdate): void;
  /** Weights, moments and step (typed arrays: transferable with postMessage). */
  getState(): TransformerState;
  /** Restores what getState returned (of a model with the same config and dtype). */
  setState(state: TransformerState): void;
  /** The config, every option filled in (norm and normEps only with layerNorm, mlpWidth and mlpBias only with mlp, ropeBase only with positions 'rope'). */
  readonly config: Required<Omit<TransformerConfig, "seed" | "norm" | "normEps" | "mlpWidth" | "mlpBias" | "ropeBase">> &
    Pick<TransformerConfig, "norm" | "normEps" | "mlpWidth" | "mlpBias" | "ropeBase"> & { seed: number | bigint };
}
