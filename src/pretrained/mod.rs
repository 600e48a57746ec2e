//! Pretrained decoders in Hugging Face's format (issue 30): the safetensors reader, config.json's
//! mapping onto the model, RMSNorm and the SiLU-gated MLP, and a forward of a loaded GPT-2 or
//! Llama checkpoint built from the package's own attention layer. No wasm-bindgen here.

pub mod config;
pub mod json;
pub mod model;
pub mod norm;
pub mod sample;
pub mod safetensors;
