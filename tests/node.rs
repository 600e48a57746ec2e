//! The JS API in Node: `wasm-pack test --node`. Same cases as `tests/web.rs`.

#![cfg(target_arch = "wasm32")]

mod api;
