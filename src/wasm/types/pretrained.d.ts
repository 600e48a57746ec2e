/** What `Transformer.fromPretrained` takes. */
export interface FromPretrainedOptions {
  /** The parsed config.json of a Hugging Face checkpoint: `model_type` 'gpt2' or 'llama'. */
  config: Record<string, unknown>;
  /** The bytes of its model.safetensors (tensors stored as F32, F16 or BF16). */
  weights: ArrayBuffer | Uint8Array;
  /** `'float32'` (default: the SIMD kernels, every core after initThreadPool) or `'float64'` (exact). */
  dtype?: "float32" | "float64";
}

/** The `config` of a model from `Transformer.fromPretrained`: the checkpoint's shape in the package's names. */
export interface PretrainedTransformerConfig {
  modelType: "gpt2" | "llama";
  /** V. */
  vocabSize: number;
  /** The positions the model has (n_positions / max_position_embeddings): T may not exceed it. */
  contextLength: number;
  /** C. */
  embedDim: number;
  /** h. */
  numHeads: number;
  /** h_kv: the key/value heads (h for GPT-2). */
  numKVHeads: number;
  /** d_head. */
  headDim: number;
  numLayers: number;
  /** `'learned'` (GPT-2's W_pos) or `'rope'` (Llama, base `ropeBase`). */
  positions: "learned" | "rope";
  /** RoPE's base (rope_theta), null for GPT-2. */
  ropeBase: number | null;
  /** `'layer'`: LayerNorm (GPT-2); `'rms'`: RMSNorm (Llama). */
  norm: "layer" | "rms";
  /** The norm's ε. */
  normEps: number;
  /** `'gelu_new'`: GELU (tanh form) of x·W_in + b_in, then ·W_out + b_out; `'silu_gated'`: (SiLU(x·W_gate) ⊙ x·W_up)·W_down. */
  mlp: "gelu_new" | "silu_gated";
  /** The MLP's width. */
  mlpWidth: number;
  attentionBias: boolean;
  mlpBias: boolean;
  /** W_U = W_Eᵀ (no lm_head.weight in the file). */
  tiedEmbeddings: boolean;
  dtype: "float32" | "float64";
}

/** Options of `generate`. */
export interface GenerateOptions {
  /** The tokens to generate after the prompt (prompt + maxNewTokens ≤ contextLength). */
  maxNewTokens: number;
  /** 0 (the default) is greedy: the argmax, lowest id on ties. Otherwise the logits are divided by it before sampling. */
  temperature?: number;
  /** Keep the k most likely tokens (ties at the k-th logit stay). */
  topK?: number;
  /** Keep the most likely tokens up to this probability mass, 0 < topP ≤ 1 (the most likely always stays). */
  topP?: number;
  /** Seed of the draws (SplitMix64), an integer 0 … 2^53 − 1 or a bigint. Default 0. */
  seed?: number | bigint;
  /** Called with each new token id and its index 0 … maxNewTokens − 1 as it arrives; if it throws, generation stops and the error is thrown. */
  onToken?: (id: number, index: number) => void;
}

export interface Transformer {
  /** On a model from fromPretrained: the logits, the losses, with needWeights every layer's attention weights [B, h, T, T], and with needHidden the numLayers + 1 hidden states [B, T, C] (Hugging Face's output_hidden_states: the embeddings, the residual stream after each block but the last, and the final norm's output). */
  forward(tokens: TransformerTokens, options?: { needWeights?: boolean; needHidden?: boolean }): TransformerOutput;
  /** On a model from fromPretrained: the prompt and `maxNewTokens` new token ids, each decoded through the KV cache. */
  generate(prompt: number[] | Int32Array | Uint32Array | Uint16Array, options: GenerateOptions): number[];
}
