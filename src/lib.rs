//! attention-lab: the reference implementation of scaled dot-product and multi-head
//! attention behind a browser course, plus the WebAssembly boundary that exports it.
//!
//! The core modules are plain Rust, with no wasm-bindgen or js-sys: everything that calls into
//! JS lives in [`wasm`], which converts values and errors and does not reword them. The core's
//! messages are written for the package's users, so they name arguments and options as JS passes
//! them (`options.cache`, `numHeads`, `Float32Array`).

pub mod attention;
pub mod engine;
pub mod error;
pub mod grouped_query;
pub mod heap;
pub mod init;
pub mod kernels;
pub mod layer;
pub mod limits;
pub mod linear;
pub mod mask;
pub mod matrix;
pub mod model;
pub mod multi_head;
pub mod projected;
pub mod parallel;
pub mod precision;
pub mod pretrained;
pub mod real;
pub mod softmax;
#[doc(hidden)]
pub mod testing;
pub mod trace;
pub mod wasm;

pub use attention::dot_product_attention;
pub use error::{AttentionError, Result};
pub use mask::{BoolMatrix, Mask};
pub use matrix::Matrix;
pub use multi_head::{multi_head_attention, HeadSplit, MultiHeadOptions};
pub use trace::{replay, trace_multi_head_attention, Trace};
