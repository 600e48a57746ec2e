//! The JS API in headless browsers: `wasm-pack test --headless --chrome` (and `--firefox`).

#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::wasm_bindgen_test_configure;

wasm_bindgen_test_configure!(run_in_browser);

mod api;
