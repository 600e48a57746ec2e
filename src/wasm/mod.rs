//! The JavaScript boundary: the only module that knows about wasm-bindgen.
//!
//! [`convert`] walks and checks JS values (with `convert.js`, which holds the readers and the words
//! of their messages; every export's options are read whole, in its order, by `readCall`'s steps or
//! a reader of their own, as `Transformer`'s config, generate's and trainStep's options: the export
//! gets a fresh checked object back and reads its fields by kind through [`convert::Checked`]) and
//! turns core errors into JS errors (in one place); [`typed`] reads
//! the matrix arguments as groups of one precision and writes results back in their form; [`memory`] and [`threads`] are the module's own exports. The other
//! files hold the exports, one file per group: `attention.rs` (dotProductAttention,
//! multiHeadAttention, traceMultiHeadAttention), `grouped.rs` (groupedQueryAttention,
//! traceGroupedQueryAttention, rotaryEmbedding), `linear.rs`, `projected.rs`, `layer.rs`
//! (MultiHeadAttention), `cache.rs` (KvCache). The class `Transformer` is spread over four files, one
//! `impl` block each: `transformer.rs` (the class, its config, forward and headScores),
//! `training.rs` (gradients, trainStep, the weights and the optimizer state; and repeatedTokens),
//! `pretrained.rs` (Transformer.fromPretrained, generate) and `circuits.rs` (compositionScores,
//! circuits). The hand-written TypeScript declarations are
//! `.d.ts` files in `types/` (one per export group: `transformer.d.ts` declares the class's
//! `transformer.rs` and `training.rs` methods; KvCache's and wasmMemoryBytes's are wasm-bindgen's own),
//! which each file hands to wasm-bindgen with `include_str!` in a `typescript_custom_section`: no
//! TypeScript in Rust strings.

pub mod attention;
pub mod cache;
#[cfg(feature = "model")]
pub mod circuits;
pub mod convert;
pub mod grouped;
pub mod layer;
pub mod linear;
pub mod memory;
#[cfg(feature = "model")]
pub mod pretrained;
pub mod projected;
pub mod threads;
#[cfg(feature = "model")]
pub mod training;
#[cfg(feature = "model")]
pub mod transformer;
pub mod typed;

use wasm_bindgen::prelude::*;

/// Installs the panic hook once, when the module is instantiated, so that a bug (never bad
/// input: that is always a `TypeError` or `RangeError`) is reported with a readable message.
// The message console_error_panic_hook wrote (the panic, then the JS stack, on console.error), without
// that crate (1,066 B of the attention-only .wasm): `reportPanic` in `convert.js` adds the stack.
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| report_panic(&info.to_string())));
}

#[wasm_bindgen(module = "/src/wasm/convert.js")]
extern "C" {
    #[wasm_bindgen(js_name = reportPanic)]
    fn report_panic(message: &str);
}

/// The allocator: Talc instead of Rust's default dlmalloc, 6.7 KB smaller in the release .wasm (3.2 KB
/// gzipped), as fast on the benchmark's large cases and about 0.35 µs slower on the challenge's 2×2
/// call (docs/performance.md, "Size"). Counted ([`crate::heap`]), so that a call that cannot fit
/// is refused with a RangeError rather than aborting the module.
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: crate::heap::Counting<talc::wasm::WasmDynamicTalc> = crate::heap::Counting(talc::wasm::new_wasm_dynamic_allocator());

/// The threads build keeps std's allocator (it locks), counted the same way.
#[cfg(all(target_family = "wasm", target_feature = "atomics"))]
#[global_allocator]
static ALLOCATOR: crate::heap::Counting<std::alloc::System> = crate::heap::Counting(std::alloc::System);
