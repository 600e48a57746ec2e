//! Export: `projectedSelfAttention(X, options)`, self-attention with given projections W_Q,
//! W_K, W_V and W_O and no biases (challenge 04's reference; see [`crate::layer::projected_self_attention`]).

use wasm_bindgen::prelude::*;

use super::convert::{js_result, read_count, read_matrix, write_matrix, Options};
use crate::error::{AttentionError, Result};
use crate::layer::{projected_self_attention as projected, ProjectedOptions};
use crate::matrix::Matrix;
use crate::multi_head::HeadSplit;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = r#"
/** Options of `projectedSelfAttention`: the head split, the four projections and an optional mask. */
export interface ProjectedSelfAttentionOptions extends AttentionOptions {
  /** numberOfHeads (h). A positive integer. */
  numberOfHeads: number;
  /** headDimensions (d_head). C = numberOfHeads · headDimensions is the width of X. */
  headDimensions: number;
  /** C×C, oriented [in, out]: Q = X·W_Q. */
  W_Q: number[][];
  /** C×C, [in, out]: K = X·W_K. */
  W_K: number[][];
  /** C×C, [in, out]: V = X·W_V. */
  W_V: number[][];
  /** C×C, [in, out]: output = concat·W_O. */
  W_O: number[][];
}

/**
 * Self-attention with given projections and no biases: Q = X·W_Q, K = X·W_K, V = X·W_V, then
 * `multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal, mask })`. X is T×C with
 * C = numberOfHeads · headDimensions; the result is T×C. Computed by the `MultiHeadAttention`
 * layer (`bias: false`, weights from the options), so it equals that layer's `forward(X)` bit for bit.
 * number[][] only (no typed-array form).
 *
 * @example projectedSelfAttention([[1, 0], [0, 1]], { numberOfHeads: 2, headDimensions: 1,
 *   W_Q: [[1, 0], [0, 1]], W_K: [[1, 0], [0, 1]], W_V: [[1, 0], [0, 1]], W_O: [[1, 0], [0, 1]] })
 * // = multiHeadAttention(X, X, X, { numberOfHeads: 2, headDimensions: 1 })
 * @throws {TypeError} for a value of the wrong type, a missing option or an unknown option.
 * @throws {RangeError} "X is 2×3 but numberOfHeads · headDimensions = …" when X is not T×C;
 *   "W_K is 2×3 but must be C×C = 2×2 …" for a projection of the wrong shape; also for bad counts,
 *   NaN/±Infinity entries or a mask that is not T×T.
 */
export function projectedSelfAttention(X: number[][], options: ProjectedSelfAttentionOptions): number[][];
"#;

const PROJECTED_KEYS: &str = "numberOfHeads, headDimensions, W_Q, W_K, W_V, W_O, causal, mask";

/// Self-attention of X with the projections W_Q, W_K, W_V and W_O (see the TypeScript declaration).
#[wasm_bindgen(js_name = projectedSelfAttention, skip_typescript)]
pub fn projected_self_attention(x: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        let x = read_matrix(&x, "X")?;
        if options.is_undefined() || options.is_null() {
            return Err(AttentionError::type_error(
                "options is missing; expected { numberOfHeads, headDimensions, W_Q, W_K, W_V, W_O, causal?, mask? }",
            ));
        }
        let o = Options::read(&options, "options", PROJECTED_KEYS)?;
        let split = HeadSplit {
            number_of_heads: read_count(&o.raw("numberOfHeads")?, "options.numberOfHeads")?,
            head_dimensions: read_count(&o.raw("headDimensions")?, "options.headDimensions")?,
        };
        let options = ProjectedOptions {
            split,
            w_q: required_weight(&o, "W_Q")?,
            w_k: required_weight(&o, "W_K")?,
            w_v: required_weight(&o, "W_V")?,
            w_o: required_weight(&o, "W_O")?,
            mask: o.mask()?,
        };
        Ok(write_matrix(&projected(&x, options)?))
    })
}

/// `options[key]`, a `number[][]` that must be present.
fn required_weight(o: &Options, key: &str) -> Result<Matrix> {
    o.matrix(key)?
        .ok_or_else(|| AttentionError::type_error(format!("options.{key} is missing; expected a C×C number[][] oriented [in, out]")))
}
