//! The JavaScript boundary: the only module that knows about wasm-bindgen.
//!
//! [`convert`] turns JS values into core types and core errors into JS errors (in one
//! place); the other files hold the exports, one file per exported item.

pub mod attention;
pub mod circuits;
pub mod convert;
pub mod grouped;
pub mod layer;
pub mod linear;
pub mod memory;
pub mod paths;
pub mod projected;
pub mod threads;
pub mod transformer;

use wasm_bindgen::prelude::*;

/// Installs the panic hook once, when the module is instantiated, so that a bug (never bad
/// input: that is always a `TypeError` or `RangeError`) is reported with a readable message.
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// The allocator: Talc instead of Rust's default dlmalloc, 6.7 KB smaller in the release .wasm (3.2 KB
/// gzipped), as fast on the benchmark's large cases and about 0.35 µs slower on the challenge's 2×2
/// call (docs/performance.md, "Size").
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
