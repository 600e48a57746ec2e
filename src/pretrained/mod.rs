//! Pretrained decoders in Hugging Face's format: the safetensors reader, config.json checked and
//! mapped onto the model's config, and a GPT-2 or Llama checkpoint loaded as the package's one
//! [`crate::model::Transformer`] (`model.rs`), with greedy and sampled decoding (`sample.rs`); and the
//! attention layer from other libraries' layouts of its weights (`layer.rs`). No wasm-bindgen here:
//! `src/wasm/pretrained.rs` exports the loading as `Transformer.fromPretrained` and `generate`,
//! `src/wasm/layer.rs` the layer's as `MultiHeadAttention.fromFusedQKV` and `fromPyTorch`.
//!
//! Checked against `tests/oracle/pretrained.mjs` (an independent float64 GPT-2 / Llama) by
//! `tests/pretrained.rs`, on random checkpoints that `tests/pretrained/checkpoint.mjs` writes.

pub mod config;
pub mod json;
pub mod layer;
pub mod model;
pub mod safetensors;
pub mod sample;
