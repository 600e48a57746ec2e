//! Exports: the `Transformer`'s training and state (`gradients`, `trainStep`, `getWeights`,
//! `setWeights`, `getState`, `setState`), a second `impl` block of the class in [`super::transformer`],
//! and `repeatedTokens`, the induction task's batches. The parameters cross as a tree of tensors
//! ([`write_tree`], [`read_tree`]).

use js_sys::{Array, Float64Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use super::convert::{js_result, read_adamw_js, read_key, read_tree_js, refused, typed_to_vec, write_matrix, write_object, write_vector, Checked, MAX_MATRIX_VALUES};
use super::transformer::{read_tokens, JsTransformer};
use super::typed::{write_typed, Element};
use crate::error::{AttentionError, Result};
use crate::matrix::Matrix;
use crate::model::adamw::{AdamW, Moments};
use crate::model::data::repeated_tokens;
use crate::model::Param;
use crate::precision::{Precision, Values};
use crate::real::Real;

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
        js_result(|| crate::by_precision!(&mut self.inner, model => {
            model.row_major(); // a large float32 model keeps its weights packed after inference
            write_tree(model.params(), |i| &model.params()[i].data, false)
        }))
    }

    #[wasm_bindgen(js_name = setWeights, skip_typescript)]
    pub fn set_weights(&mut self, weights: JsValue) -> std::result::Result<(), JsValue> {
        js_result(|| crate::by_precision!(&mut self.inner, model => {
            model.row_major();
            let updates = read_tree(&weights, "weights", model.params(), false)?;
            model.set_params(updates, None)
        }))
    }

    #[wasm_bindgen(js_name = getState, skip_typescript)]
    pub fn get_state(&mut self) -> std::result::Result<JsValue, JsValue> {
        let dtype = self.inner.dtype();
        js_result(|| crate::by_precision!(&mut self.inner, model => {
            model.row_major();
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
            let model = &mut self.inner;
            // the dtype must be the model's, then the step (the trees are read after it)
            let o = Checked::call(&state, "state", "dtype, step, weights, m, v", "what getState() returned", "dtype:sameDtype step:step", 0, model.dtype(), &[])?;
            crate::by_precision!(F in model, model => {
                let step = o.number("step").unwrap_or_default() as u64;
                model.row_major();
                let params = model.params();
                let tree = |key: &str| read_tree(&read_key(&state, key, &format!("state.{key}"), "raw")?, &format!("state.{key}"), params, true);
                let full = |key: &str| -> Result<Vec<Vec<F>>> { Ok(tree(key)?.into_iter().map(|(_, _, v)| v).collect()) };
                let weights = tree("weights")?;
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

/// Reads a tree like [`write_tree`]'s (`readTree` in convert.js): with `full`, every parameter must be
/// there; otherwise any subset. Each tensor: number[][] / number[] or a Float32Array / Float64Array of its entries.
fn read_tree<F: Real>(value: &JsValue, name: &str, params: &[Param<F>], full: bool) -> Result<Vec<(Option<usize>, String, Vec<F>)>> {
    let names: Vec<&str> = params.iter().map(|p| p.name).collect();
    let layers: Vec<i32> = params.iter().map(|p| p.layer.map_or(-1, |l| l as i32)).collect();
    let shapes: Vec<u32> = params.iter().flat_map(|p| [p.shape[0] as u32, p.shape.get(1).map_or(0, |&c| c as u32)]).collect();
    let num_layers = params.iter().filter_map(|p| p.layer).max().map_or(0, |l| l + 1) as u32;
    let tensors = Array::from(&refused(read_tree_js(value, name, &names.join(", "), &layers, &shapes, num_layers, full, MAX_MATRIX_VALUES))?);
    let read = |(p, t): (&Param<F>, JsValue)| (p.layer, p.name.to_string(), typed_to_vec(t.unchecked_ref::<Float64Array>()).into_iter().map(F::from_f64).collect());
    Ok(params.iter().zip(tensors.iter()).filter(|(_, t)| !t.is_undefined()).map(read).collect())
}

/// Batches of the induction task: each sequence is token 0, then a period of distinct tokens
/// (drawn from 1 … vocabSize − 1, the period from ⌈length/2⌉ … length) repeated to 1 + 2·length
/// tokens. Seeded: the same bits in every runtime (the algorithm is in docs/api.md).
#[wasm_bindgen(js_name = repeatedTokens, unchecked_return_type = "RepeatedTokens")]
pub fn repeated_tokens_js(#[wasm_bindgen(unchecked_param_type = "{ vocabSize: number; length: number; batch: number; seed?: number | bigint }")] options: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        let o = Checked::options(&options, "vocabSize, length, batch, seed", "{ vocabSize, length, batch, seed? }", "vocabSize:need length:need batch:need seed:seed")?;
        let count = |key| o.count(key).unwrap_or_default();
        let task = repeated_tokens(count("vocabSize"), count("length"), count("batch"), u64::try_from(o.value("seed")).unwrap_or_default())?;
        let rows = |f: &dyn Fn(usize) -> JsValue| -> JsValue {
            (0..task.batch).map(|b| (0..task.t).map(|t| f(b * task.t + t)).collect::<Array>()).collect::<Array>().into()
        };
        let tokens = rows(&|i| JsValue::from(task.tokens[i]));
        let repeated = rows(&|i| JsValue::from(task.repeated[i]));
        let periods: Array = task.periods.iter().map(|&p| JsValue::from(p as u32)).collect();
        write_object(&[("tokens", tokens), ("repeated", repeated), ("periods", periods.into())])
    })
}
