//! Exports: `Transformer.compositionScores`, `Transformer.circuits` and the reader of `forward`'s
//! `pathMask` (see [`crate::model::circuits`] and [`crate::model::paths`]). A second `impl` block
//! of the class in [`super::transformer`]; the boundary only converts.

use js_sys::Array;
use wasm_bindgen::prelude::*;

use super::convert::{array_length, describe, get, is_array, js_result, missing, write_object, Options};
use super::typed::write_typed;
use crate::error::number_text;
use super::transformer::{JsTransformer, OnModel};
use super::typed::Element;
use crate::precision::Values;
use crate::error::{AttentionError, Result};
use crate::model::paths::{PathCut, PathInput};
use crate::model::{self, ModelConfig};

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = include_str!("types/circuits.d.ts");

const CIRCUITS_KEYS: &str = "layer, head";
const CUT_KEYS: &str = "from, to, input";

/// A required integer ≥ 0.
fn read_index(raw: &JsValue, place: &str) -> Result<usize> {
    match raw.as_f64() {
        Some(x) if x >= 0.0 && x.fract() == 0.0 && x <= 4294967295.0 => Ok(x as usize),
        Some(x) => Err(AttentionError::range_error(format!("{place} is {}; expected an integer ≥ 0", number_text(x)))),
        None => Err(AttentionError::type_error(format!("{place} is {}; expected an integer ≥ 0", describe(raw)))),
    }
}

/// `[layer, head]`.
fn read_head(raw: &JsValue, place: &str) -> Result<(usize, usize)> {
    let expected = "expected [layer, head], two integers ≥ 0";
    if !is_array(raw, place)? {
        return Err(AttentionError::type_error(format!("{place} is {}; {expected}", describe(raw))));
    }
    let len = array_length(raw, place)?;
    if len != 2 {
        return Err(AttentionError::range_error(format!("{place} has {len} entries; {expected}")));
    }
    let at = |i: u32| read_index(&get(raw, &JsValue::from(i), &format!("{place}[{i}]"))?, &format!("{place}[{i}]"));
    Ok((at(0)?, at(1)?))
}

/// `forward`'s `options.pathMask`: an array of `{ from: [l1, i], to: [l2, j], input }`, each checked
/// against the model (absent: no cut).
pub fn read_path_mask(raw: &JsValue, config: &ModelConfig) -> Result<Vec<PathCut>> {
    if raw.is_undefined() {
        return Ok(Vec::new());
    }
    let name = "options.pathMask";
    if !is_array(raw, name)? {
        return Err(AttentionError::type_error(format!("{name} is {}; expected an array of {{ from: [layer, head], to: [layer, head], input: 'query' | 'key' | 'value' }}", describe(raw))));
    }
    (0..array_length(raw, name)?)
        .map(|k| {
            let place = format!("{name}[{k}]");
            let item = get(raw, &JsValue::from(k as u32), &place)?;
            if item.is_undefined() || item.is_null() {
                return Err(missing(&place, "{ from: [layer, head], to: [layer, head], input }"));
            }
            let o = Options::read(&item, &place, CUT_KEYS)?;
            let input = o.raw("input")?;
            let input = input.as_string().and_then(|s| PathInput::parse(&s)).ok_or_else(|| {
                let what = input.as_string().map_or_else(|| describe(&input), |s| format!("{s:?}"));
                AttentionError::type_error(format!("{place}.input is {what}; expected 'query', 'key' or 'value'"))
            })?;
            let cut = PathCut { from: read_head(&o.raw("from")?, &format!("{place}.from"))?, to: read_head(&o.raw("to")?, &format!("{place}.to"))?, input };
            config.check_path_cut(&cut, &place)?;
            Ok(cut)
        })
        .collect()
}

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
            fn call<F: Element>(self, model: &mut model::Transformer<F>) -> Result<JsValue> {
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
            fn call<F: Element>(self, model: &mut model::Transformer<F>) -> Result<JsValue> {
                let c = model.circuits(self.0, self.1)?;
                let (v, ctx) = (model.config().vocab_size, model.config().context_length);
                let typed = |values: Vec<f64>, n: usize| write_typed(&F::wrap::<Values>(values.into_iter().map(F::from_f64).collect()), &[n, n]);
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
