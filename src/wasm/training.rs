//! Exports: the `Transformer`'s training and state (`gradients`, `trainStep`, `getWeights`,
//! `setWeights`, `getState`, `setState`), a second `impl` block of the class in [`super::transformer`],
//! and `repeatedTokens`, the induction task's batches. The parameters cross as a tree of tensors
//! ([`write_tree`], [`read_tree`]).

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use super::convert::{array_length, describe, get, is_array, is_missing, js_result, missing, read_adamw_js, read_integer, read_seed, write_matrix, write_object, write_vector, Checked, Options, MAX_MATRIX_VALUES};
use super::transformer::{read_tokens, JsTransformer};
use super::typed::{read_tensor, write_typed, Element};
use crate::error::{AttentionError, Result};
use crate::matrix::Matrix;
use crate::model::adamw::{AdamW, Moments};
use crate::model::data::repeated_tokens;
use crate::model::Param;
use crate::precision::{Precision, Values};
use crate::real::Real;

const TASK_KEYS: &str = "vocabSize, length, batch, seed";
const STATE_KEYS: &str = "dtype, step, weights, m, v";
const LAYERS: &str = "layers";

#[wasm_bindgen(js_class = Transformer)]
impl JsTransformer {
    #[wasm_bindgen(skip_typescript)]
    pub fn gradients(&mut self, tokens: JsValue) -> std::result::Result<JsValue, JsValue> {
        js_result(|| crate::by_precision!(&mut self.inner, model => {
            let tokens = read_tokens(&tokens, model.config())?;
            let (loss, _, grads) = model.gradients(&tokens)?;
            let tree = write_tree(model.params(), |i| &grads[i], false)?;
            write_object(&[("loss", JsValue::from(loss)), ("grads", tree)])
        }))
    }

    #[wasm_bindgen(js_name = trainStep, skip_typescript)]
    pub fn train_step(&mut self, tokens: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
        js_result(|| {
            let adamw = read_adamw(&options)?;
            crate::by_precision!(&mut self.inner, model => {
                let tokens = read_tokens(&tokens, model.config())?;
                let (loss, losses) = model.train_step(&tokens, &adamw)?;
                write_object(&[("loss", JsValue::from(loss)), ("losses", write_typed(&f64::wrap::<Values>(losses), &[tokens.batch, tokens.t - 1]))])
            })
        })
    }

    #[wasm_bindgen(js_name = getWeights, skip_typescript)]
    pub fn get_weights(&mut self) -> std::result::Result<JsValue, JsValue> {
        js_result(|| crate::by_precision!(&self.inner, model => write_tree(model.params(), |i| &model.params()[i].data, false)))
    }

    #[wasm_bindgen(js_name = setWeights, skip_typescript)]
    pub fn set_weights(&mut self, weights: JsValue) -> std::result::Result<(), JsValue> {
        js_result(|| {
            if is_missing(&weights) {
                return Err(missing("weights", "an object with some of the keys of getWeights()"));
            }
            crate::by_precision!(&mut self.inner, model => {
                let updates = read_tree(&weights, "weights", model.params(), false)?;
                model.set_params(updates, None)
            })
        })
    }

    #[wasm_bindgen(js_name = getState, skip_typescript)]
    pub fn get_state(&mut self) -> std::result::Result<JsValue, JsValue> {
        let dtype = self.inner.dtype();
        js_result(|| crate::by_precision!(&self.inner, model => {
            let params = model.params();
            let moments = model.moments().full(params);
            write_object(&[
                ("dtype", JsValue::from_str(dtype)),
                ("step", JsValue::from(moments.step as f64)),
                ("weights", write_tree(params, |i| &params[i].data, true)?),
                ("m", write_tree(params, |i| &moments.m[i], true)?),
                ("v", write_tree(params, |i| &moments.v[i], true)?),
            ])
        }))
    }

    #[wasm_bindgen(js_name = setState, skip_typescript)]
    pub fn set_state(&mut self, state: JsValue) -> std::result::Result<(), JsValue> {
        js_result(|| {
            let o = Options::required(&state, "state", STATE_KEYS, "what getState() returned")?;
            let dtype = o.raw("dtype")?;
            let model = &mut self.inner;
            if dtype.as_string().as_deref() != Some(model.dtype()) {
                return Err(AttentionError::type_error(format!(
                    "state.dtype is {}; this model is '{}': a state restores only a model of the same dtype",
                    describe(&dtype),
                    model.dtype()
                )));
            }
            crate::by_precision!(F in model, model => {
                let step = read_integer(&o.raw("step")?, "state.step", 9007199254740991.0)? as u64;
                let params = model.params();
                let full = |key: &str| -> Result<Vec<Vec<F>>> {
                    let updates = read_tree(&o.raw(key)?, &format!("state.{key}"), params, true)?;
                    Ok(updates.into_iter().map(|(_, _, v)| v).collect())
                };
                let weights = read_tree(&o.raw("weights")?, "state.weights", params, true)?;
                let moments = Moments { m: full("m")?, v: full("v")?, step };
                model.set_params(weights, Some(moments))
            })
        })
    }
}

/// `trainStep`'s options, the defaults the core's.
fn read_adamw(options: &JsValue) -> Result<AdamW> {
    let o = Checked::read(read_adamw_js(options, MAX_MATRIX_VALUES))?;
    let d = AdamW::new(0.0);
    let betas = o.number("beta1").zip(o.number("beta2")).unwrap_or(d.betas);
    let number = |key, default| o.number(key).unwrap_or(default);
    let adamw = AdamW { learning_rate: number("learningRate", 0.0), betas, eps: number("eps", d.eps), weight_decay: number("weightDecay", d.weight_decay) };
    adamw.check()?;
    Ok(adamw)
}

/// The parameters as `{ W_E, …, layers: [{ W_Q, … }] }`, each tensor from `values(i)`: number[][] /
/// number[] (`typed = false`) or a flat typed array of the dtype.
fn write_tree<'a, F: Element + 'a>(params: &[Param<F>], values: impl Fn(usize) -> &'a [F], typed: bool) -> Result<JsValue> {
    let top = Object::new();
    let layers: Vec<Object> = (0..params.iter().filter_map(|p| p.layer).max().map_or(0, |l| l + 1)).map(|_| Object::new()).collect();
    for (i, p) in params.iter().enumerate() {
        let data = values(i);
        let value = if typed {
            F::array(data)
        } else {
            let wide: Vec<f64> = data.iter().map(|x| x.to_f64()).collect();
            match p.shape[..] {
                [rows, cols] => write_matrix(&Matrix::new(rows, cols, wide)?),
                _ => write_vector(&wide),
            }
        };
        let target = p.layer.map_or(&top, |l| &layers[l]);
        Reflect::set(target, &JsValue::from_str(p.name), &value).map_err(|_| AttentionError::State(format!("could not set {} on the result", p.path())))?;
    }
    let layers: Array = layers.into_iter().collect();
    Reflect::set(&top, &JsValue::from_str(LAYERS), &layers).map_err(|_| AttentionError::State("could not set layers on the result".into()))?;
    Ok(top.into())
}

/// Reads a tree like [`write_tree`]'s: with `full`, every parameter must be there; otherwise any
/// subset. Each tensor: number[][] / number[] or a Float32Array / Float64Array of its entries.
fn read_tree<F: Real>(value: &JsValue, name: &str, params: &[Param<F>], full: bool) -> Result<Vec<(Option<usize>, String, Vec<F>)>> {
    if is_missing(value) || !value.is_object() {
        return Err(AttentionError::type_error(format!("{name} is {}; expected an object with the keys of getWeights()", describe(value))));
    }
    let num_layers = params.iter().filter_map(|p| p.layer).max().map_or(0, |l| l + 1);
    let top_keys: Vec<&str> = params.iter().filter(|p| p.layer.is_none()).map(|p| p.name).chain([LAYERS]).collect();
    let layer_keys: Vec<&str> = params.iter().filter(|p| p.layer == Some(0)).map(|p| p.name).collect();
    let top = Options::read(value, name, &top_keys.join(", "))?;
    let layers = top.raw(LAYERS)?;
    let layer_objects: Vec<Option<Options>> = if layers.is_undefined() {
        (0..num_layers).map(|_| None).collect()
    } else {
        if !is_array(&layers, &format!("{name}.layers"))? {
            return Err(AttentionError::type_error(format!("{name}.layers is {}; expected an array of numLayers = {num_layers} objects", describe(&layers))));
        }
        let len = array_length(&layers, &format!("{name}.layers"))?;
        if len > num_layers || (full && len != num_layers) {
            return Err(AttentionError::range_error(format!("{name}.layers has {len} entries; this model has numLayers = {num_layers}")));
        }
        (0..num_layers)
            .map(|l| {
                let item = if l < len { get(&layers, &JsValue::from(l as u32), &format!("{name}.layers[{l}]"))? } else { JsValue::UNDEFINED };
                if is_missing(&item) && !full {
                    return Ok(None);
                }
                Options::read(&item, &format!("{name}.layers[{l}]"), &layer_keys.join(", ")).map(Some)
            })
            .collect::<Result<_>>()?
    };
    let mut updates = Vec::new();
    for p in params {
        let (object, place) = match p.layer {
            Some(l) => (layer_objects[l].as_ref(), format!("{name}.layers[{l}].{}", p.name)),
            None => (Some(&top), format!("{name}.{}", p.name)),
        };
        let raw = match object {
            Some(o) => o.raw(p.name)?,
            None => JsValue::UNDEFINED,
        };
        if raw.is_undefined() {
            if full {
                return Err(AttentionError::type_error(format!("{place} is missing; {name} must hold every parameter")));
            }
            continue;
        }
        updates.push((p.layer, p.name.to_string(), read_tensor(&raw, &place, &p.shape)?));
    }
    Ok(updates)
}

/// Batches of the induction task: each sequence is token 0, then a period of distinct tokens
/// (drawn from 1 … vocabSize − 1, the period from ⌈length/2⌉ … length) repeated to 1 + 2·length
/// tokens. Seeded: the same bits in every runtime (the algorithm is in docs/api.md).
#[wasm_bindgen(js_name = repeatedTokens, unchecked_return_type = "RepeatedTokens")]
pub fn repeated_tokens_js(#[wasm_bindgen(unchecked_param_type = "{ vocabSize: number; length: number; batch: number; seed?: number | bigint }")] options: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        let o = Options::required(&options, "options", TASK_KEYS, "{ vocabSize, length, batch, seed? }")?;
        let task = repeated_tokens(o.count("vocabSize")?, o.count("length")?, o.count("batch")?, read_seed(&o.raw("seed")?, "options.seed")?)?;
        let rows = |f: &dyn Fn(usize) -> JsValue| -> JsValue {
            (0..task.batch).map(|b| (0..task.t).map(|t| f(b * task.t + t)).collect::<Array>()).collect::<Array>().into()
        };
        let tokens = rows(&|i| JsValue::from(task.tokens[i]));
        let repeated = rows(&|i| JsValue::from(task.repeated[i]));
        let periods: Array = task.periods.iter().map(|&p| JsValue::from(p as u32)).collect();
        write_object(&[("tokens", tokens), ("repeated", repeated), ("periods", periods.into())])
    })
}
