//! Export: `wasmMemoryBytes()`, the size of the module's linear memory.

use wasm_bindgen::prelude::*;

/// The size in bytes of this module's WebAssembly memory. Wasm memory grows but never shrinks,
/// so this is also the peak reached so far (the benchmark reports it per size).
#[wasm_bindgen(js_name = wasmMemoryBytes)]
pub fn wasm_memory_bytes() -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        core::arch::wasm32::memory_size(0) as f64 * 65536.0
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        0.0
    }
}
