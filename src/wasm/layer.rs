//! Export: class `MultiHeadAttention`, the layer with learned projections (see [`crate::layer`]).
//!
//! The TypeScript declarations of the option and result shapes, and the overloads of
//! `forward` (one per input form), are written in `types/layer.d.ts` (included below as
//! `TYPESCRIPT`), those of `backward` and `grads` in `types/layer-training.d.ts` (the whole build
//! only: Cargo feature `training`); they merge with the class wasm-bindgen declares.

use wasm_bindgen::prelude::*;

use js_sys::{Array, Float64Array};
use super::convert::{copy_exact, copy_in, refused, read_layer_parts, read_layer_weights, MAX_MATRIX_VALUES};
use super::convert::{is_missing, is_typed_candidate, js_result, read_layer_config, tag_cache, write_matrix, write_object, write_trace, write_vector, Checked, MASK};
use super::typed::{read_items, read_typed, write_in, Items, Element, Form, Like, SamePrecision, Typed, TypedMatrix};
use crate::error::{AttentionError, Result};
use crate::layer::{self, Biases, ForwardOptions, LayerConfig, Weights};
use crate::engine::Rope;
use crate::matrix::Matrix;
use super::cache::{store_cache, with_cache, JsKvCache};
use crate::precision::{Dtype, Precision};

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = include_str!("types/layer.d.ts");

#[cfg(feature = "training")]
#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT_TRAINING: &str = include_str!("types/layer-training.d.ts");

const WEIGHT_KEYS: [&str; 8] = ["W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O"];

/// Multi-head attention with learned Q/K/V/output projections, biases, masks,
/// cross-attention, batches, dropout and a backward pass.
#[wasm_bindgen(js_name = MultiHeadAttention)]
pub struct JsMultiHeadAttention {
    inner: layer::MultiHeadAttention,
    /// The name the layer was created by, for messages.
    created_by: &'static str,
}

#[wasm_bindgen(js_class = MultiHeadAttention)]
impl JsMultiHeadAttention {
    /// A layer with seeded Xavier-uniform weights (uniform in ±√(3/C)) and zero biases.
    /// Throws a RangeError when embedDim is not divisible by numHeads.
    #[wasm_bindgen(constructor)]
    pub fn new(#[wasm_bindgen(unchecked_param_type = "MultiHeadAttentionLayerConfig")] config: JsValue) -> std::result::Result<JsMultiHeadAttention, JsValue> {
        js_result(|| {
            // read whole and checked by readLayerConfig in convert.js
            let c = Checked::read(read_layer_config(&config))?;
            let config = LayerConfig {
                embed_dim: c.count("embedDim").unwrap_or_default(),
                number_of_heads: c.count("numHeads").unwrap_or_default(),
                kv_heads: c.count("numKVHeads").unwrap_or_default(),
                bias: c.flag("bias"),
                dropout: c.number("dropout").unwrap_or_default(),
                seed: u64::try_from(c.value("seed")).unwrap_or_default(),
                rope: c.number("ropeBase").map(|base| Rope { base }),
            };
            let inner = layer::MultiHeadAttention::new(&config)?;
            Ok(Self { inner, created_by: "new MultiHeadAttention" })
        })
    }

    /// From a small GPT's fused weights: W_QKV is C×3C with Q, K and V as consecutive column blocks.
    #[wasm_bindgen(js_name = fromFusedQKV)]
    pub fn from_fused_qkv(#[wasm_bindgen(unchecked_param_type = "FusedQKVWeights")] weights: JsValue) -> std::result::Result<JsMultiHeadAttention, JsValue> {
        js_result(|| {
            let p = LayerParts::read(&weights, true)?;
            let inner = layer::MultiHeadAttention::from_fused_qkv(&p.w, p.b.as_deref(), &p.w_o, p.b_o.as_deref(), p.heads, p.dropout, p.seed)?;
            Ok(Self { inner, created_by: "MultiHeadAttention.fromFusedQKV" })
        })
    }

    /// From PyTorch's `nn.MultiheadAttention` parameters (in_proj_weight is 3C×C, [out, in]).
    #[wasm_bindgen(js_name = fromPyTorch)]
    pub fn from_pytorch(#[wasm_bindgen(unchecked_param_type = "PyTorchAttentionState")] state: JsValue) -> std::result::Result<JsMultiHeadAttention, JsValue> {
        js_result(|| {
            let p = LayerParts::read(&state, false)?;
            let inner = layer::MultiHeadAttention::from_pytorch(&p.w, p.b.as_deref(), &p.w_o, p.b_o.as_deref(), p.heads, p.dropout, p.seed)?;
            Ok(Self { inner, created_by: "MultiHeadAttention.fromPyTorch" })
        })
    }

    /// C, the model width.
    #[wasm_bindgen(getter = embedDim)]
    pub fn embed_dim(&self) -> f64 {
        self.inner.embed_dim() as f64
    }

    /// numberOfHeads (h).
    #[wasm_bindgen(getter = numHeads)]
    pub fn num_heads(&self) -> f64 {
        self.inner.number_of_heads() as f64
    }

    /// headDimensions (d_head) = embedDim / numHeads.
    #[wasm_bindgen(getter = headDim)]
    pub fn head_dim(&self) -> f64 {
        self.inner.head_dimensions() as f64
    }

    /// The key/value heads (numKVHeads; numHeads unless the layer groups its queries).
    #[wasm_bindgen(getter = numKVHeads)]
    pub fn num_kv_heads(&self) -> f64 {
        self.inner.kv_heads() as f64
    }

    /// 2·C² + 2·C·C_kv (+ 2·C + 2·C_kv with biases), C_kv = numKVHeads·headDim: 4·C² + 4·C with biases
    /// and 4·C² without when numKVHeads = numHeads (2,362,368 and 2,359,296 for C = 768).
    #[wasm_bindgen(getter = numParameters)]
    pub fn num_parameters(&self) -> f64 {
        self.inner.num_parameters() as f64
    }

    /// Copies of the weights, nested or with `{ dtype }` flat typed (see the TypeScript declaration).
    #[wasm_bindgen(js_name = getWeights, skip_typescript)]
    pub fn get_weights(&self, options: JsValue) -> std::result::Result<JsValue, JsValue> {
        js_result(|| match read_dtype_option(&options)? {
            None => write_weights(&self.inner.weights()),
            Some(dtype) => crate::by_precision!(F in dtype, () => write_flat_weights(&*self.inner.weights_in::<F>()?)),
        })
    }

    /// Replaces any subset of the weights (shapes as in getWeights; each tensor nested, or flat as a
    /// Float32Array or Float64Array of its entries, row-major). Discards the last forward pass, so
    /// `backward` needs a new `forward` afterwards.
    #[wasm_bindgen(js_name = setWeights)]
    pub fn set_weights(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "MultiHeadAttentionLayerWeightsUpdate")] weights: JsValue,
    ) -> std::result::Result<(), JsValue> {
        js_result(|| {
            let mut updated = self.inner.weights().into_owned();
            let w = &mut updated;
            let mut shapes: Vec<u32> = [&w.w_q, &w.w_k, &w.w_v, &w.w_o].iter().flat_map(|m| [m.rows() as u32, m.cols() as u32]).collect();
            let lengths: Vec<u32> = w.biases.iter().flat_map(|b| [&b.b_q, &b.b_k, &b.b_v, &b.b_o].map(|v| v.len() as u32)).collect();
            let read = Array::from(&refused(read_layer_weights(&weights, &mut shapes, &lengths, self.created_by, MAX_MATRIX_VALUES))?);
            // the values of key `i`, if given, copied into wasm memory (a RangeError if they do not fit)
            let take = |i: usize, shape: (u32, u32)| -> Result<Option<Vec<f64>>> {
                let values: Float64Array = match read.get(i as u32) { v if v.is_undefined() => return Ok(None), v => v.unchecked_into() };
                copy_in(values.length(), &format!("weights.{}", WEIGHT_KEYS[i]), shape, |out| copy_exact(&values, out)).map(Some)
            };
            for (i, target) in [&mut w.w_q, &mut w.w_k, &mut w.w_v, &mut w.w_o].into_iter().enumerate() {
                if let Some(values) = take(i, (shapes[2 * i], shapes[2 * i + 1]))? {
                    *target = Matrix::new(shapes[2 * i] as usize, shapes[2 * i + 1] as usize, values)?;
                }
            }
            if let Some(Biases { b_q, b_k, b_v, b_o }) = &mut w.biases {
                for (i, target) in [b_q, b_k, b_v, b_o].into_iter().enumerate() {
                    if let Some(values) = take(4 + i, (1, target.len() as u32))? {
                        *target = values;
                    }
                }
            }
            self.inner.set_weights(updated)
        })
    }

    /// Runs the layer (see the TypeScript declaration for the overloads).
    #[wasm_bindgen(skip_typescript)]
    pub fn forward(&mut self, query: JsValue, key: JsValue, value: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
        js_result(|| {
            let (inputs, shapes, batched) = read_inputs(&query, &key, &value, self.inner.embed_dim())?;
            // options.cache: then key and value must be omitted (readCall is told which were given)
            let given = u32::from(!is_missing(&key)) | u32::from(!is_missing(&value)) << 1;
            let keys = "mask, causal, window, needWeights, averageWeights, training, cache";
            let steps = format!("{MASK} needWeights:flag averageWeights:flag training:flag cache:cache");
            let o = Checked::call(&options, "options", keys, "", &steps, 0, "", &[given])?;
            let options = ForwardOptions { mask: o.mask()?, need_weights: o.flag("needWeights"), average_weights: o.flag("averageWeights"), training: o.flag("training"), batched };
            let cache = o.number("cache").map(|id| id as u32);
            let h = self.inner.number_of_heads();
            let layer = &mut self.inner;
            crate::by_precision!(F in inputs, [q, k, v] => {
                // number[][] items have their shapes checked here, typed matrices as they were read
                let (result, t_k) = match cache {
                    Some(id) => with_cache(id, |cache| {
                        if let Some([x, ..]) = &shapes {
                            layer.check_cached_items(x, cache, &options)?;
                        }
                        let t_k = cache.held() + q.view().rows;
                        Ok((layer.forward_cached_batch(q.view(), cache, &options)?, t_k))
                    })?,
                    None => {
                        if let Some([x, y, z]) = &shapes {
                            layer.check_items(x, y, z, &options)?;
                        }
                        (layer.forward_batch(q.view(), k.view(), v.view(), &options)?, k.view().rows)
                    }
                };
                // `[B?, T_q, C]`, and `[B?, h, T_q, T_k]` or `[B?, T_q, T_k]`
                let (view, lead) = (q.view(), |shape: &[usize]| if batched { [&[q.view().items][..], shape].concat() } else { shape.to_vec() });
                let mut entries = vec![("output", write_in(q.form, F::wrap(result.output), &lead(&[view.rows, view.cols])))];
                if let Some(weights) = result.weights {
                    let shape = if options.average_weights { lead(&[view.rows, t_k]) } else { lead(&[h, view.rows, t_k]) };
                    entries.push(("weights", write_in(q.form, F::wrap(weights), &shape)));
                }
                write_object(&entries)
            })
        })
    }

    /// Evaluation-mode forward of one `[T, C]` input with every step recorded (see the TypeScript declaration).
    #[wasm_bindgen(skip_typescript)]
    pub fn trace(&self, query: JsValue, key: JsValue, value: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
        js_result(|| {
            let query = read_items(&query, "query", 2, "")?;
            let key = read_default(&key, "key", &query, "query")?;
            let value = read_default(&value, "value", &key, "key")?;
            let mask = Checked::options(&options, "mask, causal", "", MASK)?.mask()?;
            let [q, k, v] = [query, key, value].map(|m| Matrix::new(m.shapes[0].0, m.shapes[0].1, m.values));
            write_trace(&self.inner.trace(&q?, &k?, &v?, &mask)?)
        })
    }

    /// Differentiates the last forward (see the TypeScript declaration); an Error in the light entry.
    #[wasm_bindgen(skip_typescript)]
    pub fn backward(&mut self, grad_output: JsValue) -> std::result::Result<JsValue, JsValue> {
        js_result(|| {
            if !TRAINING {
                return Err(not_in_light_entry("backward"));
            }
            let (grad, shapes) = if is_typed_candidate(&grad_output) {
                let grad = read_typed(&grad_output, "gradOutput", true, self.inner.embed_dim(), None)?;
                (SamePrecision::new([grad])?, None)
            } else {
                let grad = read_items(&grad_output, "gradOutput", -1, "")?;
                (f64::wrap([rows_typed(&grad)]), Some((grad.shapes, grad.batched)))
            };
            let layer = &mut self.inner;
            crate::by_precision!(F in grad, [g] => {
                let batched = g.shape.len() == 3;
                if let Some((shapes, batched)) = &shapes {
                    layer.check_gradient_items(shapes, *batched)?;
                }
                let view = g.view();
                let layer::BatchGrads { query, key, value } = layer.backward_batch(view, batched)?;
                // each gradient has its input's shape: [B, T, C] or [T, C], T from its length
                let write = |values: Vec<F>| {
                    let (b, c) = (view.items, view.cols);
                    let rows = values.len() / (b * c);
                    write_in(g.form, F::wrap(values), &if batched { vec![b, rows, c] } else { vec![rows, c] })
                };
                write_object(&[("query", write(query)), ("key", write(key)), ("value", write(value))])
            })
        })
    }

    /// A new, empty KV cache for decoding with this layer (see the TypeScript declaration).
    #[wasm_bindgen(js_name = createCache, skip_typescript)]
    pub fn create_cache(&self) -> std::result::Result<JsValue, JsValue> {
        js_result(|| {
            let id = store_cache(self.inner.create_cache())?;
            Ok(tag_cache(&JsValue::from(JsKvCache { id }), id))
        })
    }

    /// The parameter gradients of the last `backward`, nested or with `{ dtype }` flat typed (see the
    /// TypeScript declaration). Throws an Error before any backward, and in the light entry.
    #[wasm_bindgen(skip_typescript)]
    pub fn grads(&self, options: JsValue) -> std::result::Result<JsValue, JsValue> {
        js_result(|| {
            if !TRAINING {
                return Err(not_in_light_entry("grads()"));
            }
            match read_dtype_option(&options)? {
                None => write_weights(&*self.inner.grads()?),
                Some(dtype) => crate::by_precision!(F in dtype, () => write_flat_weights(&*self.inner.grads_in::<F>()?)),
            }
        })
    }
}

/// `backward` and `grads()` need the Cargo feature `training` (in the whole build, not in the light entry
/// `attention-lab/attention`): without it they return [`not_in_light_entry`] first, a constant branch, so
/// the layer's backward leaves that module.
const TRAINING: bool = cfg!(feature = "training");

/// The state error of `backward` and `grads()` in the light entry.
fn not_in_light_entry(method: &str) -> AttentionError {
    AttentionError::State(format!(
        "{method} is not in attention-lab/attention, the light entry, which runs the layer forward only; import MultiHeadAttention from \"attention-lab\" to train"
    ))
}

/// query, key and value of `forward` as one group: `{ data, shape }` matrices (each checked to have
/// the layer's C columns as it is read), or `number[][]` items in f64 with their shapes, for the
/// core's `check_items` once the options are read; and whether they are a batch.
type Inputs = (SamePrecision<3>, Option<[Vec<(usize, usize)>; 3]>, bool);

fn read_inputs(query: &JsValue, key: &JsValue, value: &JsValue, c: usize) -> Result<Inputs> {
    if !is_typed_candidate(query) {
        let query = read_items(query, "query", -1, "")?;
        let key = read_default(key, "key", &query, "query")?;
        let value = read_default(value, "value", &key, "key")?;
        let group = f64::wrap([&query, &key, &value].map(rows_typed));
        return Ok((group, Some([query.shapes, key.shapes, value.shapes]), query.batched));
    }
    let query = read_typed(query, "query", true, c, None)?;
    let key = read_typed_default(key, "key", &query, c)?.unwrap_or_else(|| query.clone());
    let value = read_typed_default(value, "value", &key, c)?.unwrap_or_else(|| key.clone());
    let batched = query.batch().is_some();
    Ok((SamePrecision::new([query, key, value])?, None, batched))
}

/// `number[][]` items as one f64 matrix of [`Form::Rows`], shaped as the first item (the core's
/// `check_items` then checks that they all are).
fn rows_typed(items: &Items) -> Typed<f64> {
    let (rows, cols) = items.shapes.first().copied().unwrap_or((0, 0));
    let shape = if items.batched { vec![items.shapes.len(), rows, cols] } else { vec![rows, cols] };
    Typed { values: items.values.clone(), shape, form: Form::Rows }
}

/// A typed `key` (or `value`): `None` for `undefined`/`null` ("the same as `default`"); otherwise a
/// typed matrix of `default`'s precision, rank and batch size with C columns.
fn read_typed_default(value: &JsValue, name: &str, default: &TypedMatrix, c: usize) -> Result<Option<TypedMatrix>> {
    if is_missing(value) {
        return Ok(None);
    }
    Ok(Some(read_typed(value, name, true, c, Some(Like { name: "query", first: default, group: "query, key and value", same_rank: true }))?))
}

/// `{ W_Q, …, b_O? }` as a JS object.
fn write_weights(weights: &Weights) -> Result<JsValue> {
    let mut entries = vec![
        ("W_Q", write_matrix(&weights.w_q)),
        ("W_K", write_matrix(&weights.w_k)),
        ("W_V", write_matrix(&weights.w_v)),
        ("W_O", write_matrix(&weights.w_o)),
    ];
    if let Some(b) = &weights.biases {
        entries.extend([("b_Q", write_vector(&b.b_q)), ("b_K", write_vector(&b.b_k)), ("b_V", write_vector(&b.b_v)), ("b_O", write_vector(&b.b_o))]);
    }
    write_object(&entries)
}

/// `{ dtype }` of `getWeights` and `grads`: `None` for the nested form.
fn read_dtype_option(options: &JsValue) -> Result<Option<Dtype>> {
    Ok(Checked::options(options, "dtype", "", "dtype:dtype")?.dtype("dtype"))
}

/// `{ W_Q, …, b_O? }` in the flat typed form: a Float32Array or Float64Array per tensor.
fn write_flat_weights<F: Element>(weights: &Weights<F>) -> Result<JsValue> {
    let entries: Vec<(&str, JsValue)> = weights.tensors().into_iter().map(|(name, data)| (name, F::array(data))).collect();
    write_object(&entries)
}

/// `key` (or `value`): `undefined`/`null` means "the same as `default`"; otherwise it must be
/// batched exactly when `default` is.
fn read_default(value: &JsValue, name: &str, default: &Items, default_name: &str) -> Result<Items> {
    if is_missing(value) {
        return Ok(default.clone());
    }
    read_items(value, name, i32::from(default.batched), default_name)
}

/// What `readLayerParts` read of `fromFusedQKV`'s weights (`fused`) or `fromPyTorch`'s state: the input and
/// output projections and their biases, the heads, dropout and seed.
struct LayerParts {
    w: Matrix,
    w_o: Matrix,
    b: Option<Vec<f64>>,
    b_o: Option<Vec<f64>>,
    heads: usize,
    dropout: f64,
    seed: u64,
}

impl LayerParts {
    fn read(value: &JsValue, fused: bool) -> Result<Self> {
        let c = Checked::read(read_layer_parts(value, fused, MAX_MATRIX_VALUES))?;
        let matrix = |key| Ok::<_, AttentionError>(c.matrix(key)?.unwrap_or_else(|| Matrix::zeros(0, 0)));
        let vector = |key| Ok::<_, AttentionError>(c.table::<Float64Array>(key)?.map(|(values, _, _)| values));
        Ok(Self {
            w: matrix("w")?,
            w_o: matrix("wO")?,
            b: vector("b")?,
            b_o: vector("bO")?,
            heads: c.count("numHeads").unwrap_or_default(),
            dropout: c.number("dropout").unwrap_or_default(),
            seed: u64::try_from(c.value("seed")).unwrap_or_default(),
        })
    }
}
