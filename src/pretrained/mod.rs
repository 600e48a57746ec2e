//! Pretrained decoders in Hugging Face's format (issue 30, groundwork): the safetensors reader,
//! config.json's mapping onto the model, RMSNorm and the SiLU-gated MLP, and a forward of a loaded
//! GPT-2 or Llama checkpoint built from the package's own attention layer (with its RoPE, grouped
//! heads and KV cache), with greedy and sampled decoding. No wasm-bindgen here; of these, only
//! [`layer`] (the attention layer from a fused QKV or PyTorch's `nn.MultiheadAttention` state) is
//! exported to JS yet, as `MultiHeadAttention.fromFusedQKV` and `fromPyTorch`.
//!
//! Checked against `tests/oracle/pretrained.mjs` (an independent float64 GPT-2 / Llama) by
//! `tests/pretrained.rs`, on random checkpoints that `tests/pretrained/checkpoint.mjs` writes.
//!
//! Left for the integration into `Transformer` (after the boundary refactor): the `positions`,
//! `norm` and `mlp` options of its config and `Transformer.fromPretrained`; the backward through
//! RMSNorm and the gated MLP inside the model (the functions and their backwards are in [`norm`]);
//! products with the MLP and unembedding weights packed once (f32's `Kernel::linear` and
//! `LayerKernel::a_bt` pack their weight on every call, which dominates one decoded token); the
//! attention layers holding their weights in f32 for an f32 model (they keep an f64 copy today).

pub mod config;
pub mod json;
pub mod layer;
pub mod model;
pub mod safetensors;
pub mod sample;
