//! The exported `MultiHeadAttention` class in headless browsers:
//! `wasm-pack test --headless --chrome` (and `--firefox`). Same cases as `tests/layer_node.rs`.

#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

mod layer_cases;
