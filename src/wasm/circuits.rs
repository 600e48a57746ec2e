//! Exports: `Transformer.compositionScores` and `Transformer.circuits` (see [`crate::model::circuits`]),
//! a second `impl` block of the class in [`super::transformer`] (whose `forward` reads `pathMask` with
//! [`super::paths`]); the boundary only converts.

use js_sys::Array;
use wasm_bindgen::prelude::*;

use super::convert::{js_result, write_object, Checked};
use super::transformer::JsTransformer;
use super::typed::write_typed;
use crate::error::Result;
use crate::precision::Precision;
use crate::real::Real;
use crate::precision::Values;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = include_str!("types/circuits.d.ts");

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
        js_result(|| crate::by_precision!(&self.inner, model => {
            circuits_apply(model.config(), "compositionScores")?;
            let (l, h) = (model.config().num_layers, model.config().num_heads);
            let s = model.composition_scores();
            write_object(&[("q", nested(&s.q, l, h)), ("k", nested(&s.k, l, h)), ("v", nested(&s.v, l, h)), ("baseline", JsValue::from(s.baseline))])
        }))
    }

    /// One head's OV, QK and positional QK circuits and its copying score. TypeError for a missing or
    /// non-integer `layer` / `head`, RangeError for one the model lacks.
    #[wasm_bindgen(skip_typescript)]
    pub fn circuits(&mut self, options: JsValue) -> std::result::Result<JsValue, JsValue> {
        js_result(|| {
            let o = Checked::options(&options, "layer, head", "{ layer, head }", "layer:index head:index")?;
            let (layer, head) = (o.count("layer").unwrap_or_default(), o.count("head").unwrap_or_default());
            crate::by_precision!(F in &self.inner, model => {
                circuits_apply(model.config(), "circuits")?;
                let c = model.circuits(layer, head)?;
                let (v, ctx) = (model.config().vocab_size, model.config().context_length);
                let typed = |values: Vec<f64>, n: usize| write_typed(&F::wrap::<Values>(values.into_iter().map(F::from_f64).collect()), &[n, n]);
                write_object(&[
                    ("ov", typed(c.ov, v)),
                    ("qk", typed(c.qk, v)),
                    ("qkPositional", c.qk_positional.map_or(JsValue::NULL, |p| typed(p, ctx))),
                    ("copyingScore", JsValue::from(c.copying_score)),
                ])
            })
        })
    }
}

/// The circuits read W_U and each head's own W_K, W_V: an Error for a model whose W_U is W_Eᵀ or
/// whose query heads share K/V heads (a checkpoint's), saying so.
fn circuits_apply(config: &crate::model::ModelConfig, what: &str) -> Result<()> {
    if config.tied || config.kv_heads != config.num_heads {
        return Err(crate::error::AttentionError::State(format!(
            "{what} reads W_U and one K/V head per query head; this model {}",
            if config.tied { "ties W_U to W_E (no W_U of its own)" } else { "shares its K/V heads between query heads (numKVHeads < numHeads)" }
        )));
    }
    Ok(())
}
