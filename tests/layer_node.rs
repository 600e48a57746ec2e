//! The exported `MultiHeadAttention` class in Node: `wasm-pack test --node`. Same cases as `tests/layer.rs`.

#![cfg(target_arch = "wasm32")]

mod layer_cases;
