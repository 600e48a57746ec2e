//! The JavaScript boundary: the only module that knows about wasm-bindgen.
//!
//! [`convert`] turns JS values into core types and core errors into JS errors (in one
//! place); the other files hold the exports, one file per exported item.

pub mod attention;
pub mod convert;
pub mod layer;
pub mod linear;
pub mod memory;
pub mod projected;

use wasm_bindgen::prelude::*;

/// Installs the panic hook once, when the module is instantiated, so that a bug (never bad
/// input: that is always a `TypeError` or `RangeError`) is reported with a readable message.
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}
