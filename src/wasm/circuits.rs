//! Exports: `Transformer.compositionScores` and `Transformer.circuits` (see [`crate::model::circuits`]),
//! a second `impl` block of the class in [`super::transformer`] (whose `forward` reads `pathMask` with
//! [`super::paths`]); the boundary only converts.

use js_sys::Array;
use wasm_bindgen::prelude::*;

use super::convert::{js_result, missing, write_object, write_typed, Options};
use super::paths::read_index;
use super::transformer::{JsTransformer, OnModel, Typed};
use crate::error::Result;
use crate::layer::LayerKernel;
use crate::model;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = r#"
/** One cut path of `forward`'s `pathMask`: head `from` = [l1, i]'s output removed from input `input` of head `to` = [l2, j] only (l1 < l2; layers and heads count from 0). */
export interface PathCut {
  from: [number, number];
  to: [number, number];
  input: "query" | "key" | "value";
}

/** What `compositionScores` returns: each score array indexed [l1][i][l2][j], NaN where l1 ≥ l2. */
export interface CompositionScores {
  /** ‖W_OV(l1, i)·W_QK(l2, j)‖ / (‖W_OV(l1, i)‖·‖W_QK(l2, j)‖), Frobenius norms. */
  q: number[][][][];
  /** The same with W_QK(l2, j)ᵀ: how much head (l2, j)'s keys read what head (l1, i) wrote. */
  k: number[][][][];
  /** The same with W_OV(l2, j). */
  v: number[][][][];
  /** The mean score of 200 seeded pairs of random matrices of the same shapes (factors uniform in [−1, 1)); about 1/√embedDim. */
  baseline: number;
}

/** What `circuits` returns. Each matrix is row-major in the model's dtype. */
export interface HeadCircuits<A extends Float32Array | Float64Array = Float32Array | Float64Array> {
  /** W_E·W_OV·W_U [V, V]: row = the attended token, column = the logit it raises. */
  ov: TransformerTyped<A>;
  /** W_E·W_QK·W_Eᵀ [V, V]: row = the query's token, column = the key's token. */
  qk: TransformerTyped<A>;
  /** W_pos·W_QK·W_posᵀ [contextLength, contextLength] with 'shortformer' or 'learned' positions; null otherwise. */
  qkPositional: TransformerTyped<A> | null;
  /** Σ Re λ / Σ |λ| over the eigenvalues λ of the OV circuit (−1 … 1; NaN when they are all 0). */
  copyingScore: number;
}

export interface Transformer {
  /** Q-, K- and V-composition of every head (l1, i) with every head (l2, j) of a later layer, from the weights (TransformerLens' `all_composition_scores`), and the random baseline. */
  compositionScores(): CompositionScores;
  /** One head's full OV and QK circuits (direct paths, from the weights) and its OV copying score. Layers and heads count from 0. */
  circuits(options: { layer: number; head: number }): HeadCircuits;
}
"#;

const CIRCUITS_KEYS: &str = "layer, head";

/// `[l1][i][l2][j]` nested arrays from a flat `L·h·L·h` vector.
fn nested(values: &[f64], l: usize, h: usize) -> JsValue {
    let at = |l1: usize, i: usize, l2: usize, j: usize| JsValue::from(values[((l1 * h + i) * l + l2) * h + j]);
    let heads = |l1: usize, i: usize| -> Array { (0..l).map(|l2| JsValue::from((0..h).map(|j| at(l1, i, l2, j)).collect::<Array>())).collect() };
    (0..l).map(|l1| JsValue::from((0..h).map(|i| JsValue::from(heads(l1, i))).collect::<Array>())).collect::<Array>().into()
}

#[wasm_bindgen(js_class = Transformer)]
impl JsTransformer {
    /// Q-, K- and V-composition of every head with every head of a later layer, `[l1][i][l2][j]` (NaN
    /// where l1 ≥ l2), and the random baseline (see [`crate::model::circuits`]).
    #[wasm_bindgen(js_name = compositionScores, skip_typescript)]
    pub fn composition_scores(&mut self) -> std::result::Result<JsValue, JsValue> {
        struct Scores;
        impl OnModel for Scores {
            type Out = JsValue;
            fn call<F: LayerKernel + Typed>(self, model: &mut model::Transformer<F>) -> Result<JsValue> {
                let (l, h) = (model.config().num_layers, model.config().num_heads);
                let s = model.composition_scores();
                write_object(&[("q", nested(&s.q, l, h)), ("k", nested(&s.k, l, h)), ("v", nested(&s.v, l, h)), ("baseline", JsValue::from(s.baseline))])
            }
        }
        js_result(|| self.inner.with(Scores))
    }

    /// One head's OV, QK and positional QK circuits and its copying score. TypeError for a missing or
    /// non-integer `layer` / `head`, RangeError for one the model lacks.
    #[wasm_bindgen(skip_typescript)]
    pub fn circuits(&mut self, options: JsValue) -> std::result::Result<JsValue, JsValue> {
        struct Circuits(usize, usize);
        impl OnModel for Circuits {
            type Out = JsValue;
            fn call<F: LayerKernel + Typed>(self, model: &mut model::Transformer<F>) -> Result<JsValue> {
                let c = model.circuits(self.0, self.1)?;
                let (v, ctx) = (model.config().vocab_size, model.config().context_length);
                let typed = |values: Vec<f64>, n: usize| write_typed(&F::typed(values.into_iter().map(F::from_f64).collect()), &[n, n]);
                write_object(&[
                    ("ov", typed(c.ov, v)),
                    ("qk", typed(c.qk, v)),
                    ("qkPositional", c.qk_positional.map_or(JsValue::NULL, |p| typed(p, ctx))),
                    ("copyingScore", JsValue::from(c.copying_score)),
                ])
            }
        }
        js_result(|| {
            if options.is_undefined() || options.is_null() {
                return Err(missing("options", "{ layer, head }"));
            }
            let o = Options::read(&options, "options", CIRCUITS_KEYS)?;
            let (layer, head) = (read_index(&o.raw("layer")?, "options.layer")?, read_index(&o.raw("head")?, "options.head")?);
            self.inner.with(Circuits(layer, head))
        })
    }
}
