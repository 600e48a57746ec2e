//! Export: class `MultiHeadAttention`, the layer with learned projections (see [`crate::layer`]).
//!
//! The TypeScript declarations of the option and result shapes, and the overloads of
//! `forward` and `backward` (one per input rank), are written in `types/layer.d.ts` (included
//! below as `TYPESCRIPT`); they merge with the class wasm-bindgen declares.

use wasm_bindgen::prelude::*;
use super::convert::missing;

use super::convert::{is_missing, is_typed_candidate, js_result, read_batch, read_cache_id, read_count, read_probability, read_rope_option, read_seed, tag_cache, write_batch, write_matrix, write_object, write_trace, write_vector, Options};
use super::typed::{read_typed_like, read_typed_matrix, write_typed, Element, OnTyped, SamePrecision, Typed, TypedMatrix, TypedValues, is_float_array, read_dtype, read_tensor};
use crate::error::{AttentionError, Result};
use crate::layer::{self, Biases, ForwardOptions, LayerConfig, MultiHeadAttention, Weights};
use crate::engine::Rope;
use crate::matrix::Matrix;
use super::cache::{store_cache, with_cache, JsKvCache};
use crate::precision::Dtype;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = include_str!("types/layer.d.ts");

const CONFIG_KEYS: &str = "embedDim, numHeads, numKVHeads, bias, dropout, seed, rope";
const ROPE_KEYS: &str = "base";
const WEIGHT_KEYS: &str = "W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O";
const FUSED_KEYS: &str = "W_QKV, b_QKV, W_O, b_O, numHeads, dropout, seed";
const PYTORCH_KEYS: &str = "in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias, out_proj.weight, out_proj.bias, numHeads, dropout, seed";
const FORWARD_KEYS: &str = "mask, causal, window, needWeights, averageWeights, training, cache";
const TRACE_KEYS: &str = "mask, causal";
const DTYPE_KEYS: &str = "dtype";

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
            let o = Options::required(&config, "config", CONFIG_KEYS, "{ embedDim, numHeads, bias?, dropout?, seed? }")?;
            let embed_dim = o.count("embedDim")?;
            let number_of_heads = o.count("numHeads")?;
            let kv = o.raw("numKVHeads")?;
            let config = LayerConfig {
                embed_dim,
                number_of_heads,
                kv_heads: if kv.is_undefined() { number_of_heads } else { read_count(&kv, "config.numKVHeads")? },
                bias: o.flag_or("bias", true)?,
                dropout: read_probability(&o.raw("dropout")?, "config.dropout")?,
                seed: read_seed(&o.raw("seed")?, "config.seed")?,
                rope: read_rope(&o.raw("rope")?)?,
            };
            let inner = layer::MultiHeadAttention::new(&config)?;
            Ok(Self { inner, created_by: "new MultiHeadAttention" })
        })
    }

    /// From a small GPT's fused weights: W_QKV is C×3C with Q, K and V as consecutive column blocks.
    #[wasm_bindgen(js_name = fromFusedQKV)]
    pub fn from_fused_qkv(#[wasm_bindgen(unchecked_param_type = "FusedQKVWeights")] weights: JsValue) -> std::result::Result<JsMultiHeadAttention, JsValue> {
        js_result(|| {
            let o = Options::required(&weights, "weights", FUSED_KEYS, "{ W_QKV, b_QKV?, W_O, b_O?, numHeads }")?;
            let w_qkv = required_matrix(&o, "W_QKV", "weights")?;
            let w_o = required_matrix(&o, "W_O", "weights")?;
            let (b_qkv, b_o) = (o.vector("b_QKV")?, o.vector("b_O")?);
            let number_of_heads = o.count("numHeads")?;
            let (dropout, seed) = dropout_and_seed(&o, "weights")?;
            let inner = layer::MultiHeadAttention::from_fused_qkv(&w_qkv, b_qkv.as_deref(), &w_o, b_o.as_deref(), number_of_heads, dropout, seed)?;
            Ok(Self { inner, created_by: "MultiHeadAttention.fromFusedQKV" })
        })
    }

    /// From PyTorch's `nn.MultiheadAttention` parameters (in_proj_weight is 3C×C, [out, in]).
    #[wasm_bindgen(js_name = fromPyTorch)]
    pub fn from_pytorch(#[wasm_bindgen(unchecked_param_type = "PyTorchAttentionState")] state: JsValue) -> std::result::Result<JsMultiHeadAttention, JsValue> {
        js_result(|| {
            let o = Options::required(&state, "state", PYTORCH_KEYS, "{ in_proj_weight, in_proj_bias?, out_proj_weight, out_proj_bias?, numHeads }")?;
            let in_proj_weight = required_matrix(&o, "in_proj_weight", "state")?;
            let out_proj_weight = either(o.matrix("out_proj_weight")?, o.matrix("out_proj.weight")?, "out_proj_weight", "out_proj.weight")?
                .ok_or_else(|| missing("state.out_proj_weight", "a C×C number[][] (or the state dict key \"out_proj.weight\")"))?;
            let in_proj_bias = o.vector("in_proj_bias")?;
            let out_proj_bias = either(o.vector("out_proj_bias")?, o.vector("out_proj.bias")?, "out_proj_bias", "out_proj.bias")?;
            let number_of_heads = o.count("numHeads")?;
            let (dropout, seed) = dropout_and_seed(&o, "state")?;
            let inner = layer::MultiHeadAttention::from_pytorch(
                &in_proj_weight,
                in_proj_bias.as_deref(),
                &out_proj_weight,
                out_proj_bias.as_deref(),
                number_of_heads,
                dropout,
                seed,
            )?;
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
            let o = Options::required(&weights, "weights", WEIGHT_KEYS, "{ W_Q?, W_K?, W_V?, W_O?, b_Q?, b_K?, b_V?, b_O? }")?;
            let mut updated = self.inner.weights().into_owned();
            for (key, target) in [("W_Q", &mut updated.w_q), ("W_K", &mut updated.w_k), ("W_V", &mut updated.w_v), ("W_O", &mut updated.w_o)] {
                let raw = o.raw(key)?;
                if is_float_array(&raw) {
                    let (rows, cols) = target.shape();
                    *target = Matrix::new(rows, cols, read_tensor(&raw, &format!("weights.{key}"), &[rows, cols])?)?;
                } else if let Some(m) = o.matrix(key)? {
                    *target = m;
                }
            }
            let bias_keys = ["b_Q", "b_K", "b_V", "b_O"];
            match &mut updated.biases {
                Some(Biases { b_q, b_k, b_v, b_o }) => {
                    for (key, target) in bias_keys.into_iter().zip([b_q, b_k, b_v, b_o]) {
                        let raw = o.raw(key)?;
                        if is_float_array(&raw) {
                            *target = read_tensor(&raw, &format!("weights.{key}"), &[target.len()])?;
                        } else if let Some(v) = o.vector(key)? {
                            *target = v;
                        }
                    }
                }
                None => {
                    for key in bias_keys {
                        if !o.raw(key)?.is_undefined() {
                            return Err(AttentionError::type_error(format!(
                                "weights.{key}: this layer has no biases (it was built with bias: false by {})",
                                self.created_by
                            )));
                        }
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
            if is_typed_candidate(&query) {
                return self.forward_typed(&query, &key, &value, &options);
            }
            let (query, batched) = read_batch(&query, "query")?;
            let key_items = read_default(&key, "key", &query, batched, "query")?;
            let value_items = read_default(&value, "value", &key_items, batched, "key")?;
            let o = Options::read(&options, "options", FORWARD_KEYS)?;
            let options = read_forward_options(&o, batched)?;
            let result = match read_cache(&o, &key, &value)? {
                Some(id) => with_cache(id, |cache| self.inner.forward_cached(&query, cache, &options))?,
                None => self.inner.forward(&query, &key_items, &value_items, &options)?,
            };
            let mut entries = vec![("output", write_batch(&result.output, batched))];
            if let Some(weights) = &result.weights {
                // per item: h heads, or one averaged matrix
                let per_item: Vec<JsValue> = weights
                    .iter()
                    .map(|heads| if options.average_weights { write_matrix(&heads[0]) } else { write_batch(heads, true) })
                    .collect();
                let weights = if batched { per_item.into_iter().collect::<js_sys::Array>().into() } else { per_item.into_iter().next().unwrap_or(JsValue::UNDEFINED) };
                entries.push(("weights", weights));
            }
            write_object(&entries)
        })
    }

    /// Evaluation-mode forward of one `[T, C]` input with every step recorded (see the TypeScript declaration).
    #[wasm_bindgen(skip_typescript)]
    pub fn trace(&self, query: JsValue, key: JsValue, value: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
        js_result(|| {
            let (query, batched) = read_batch(&query, "query")?;
            if batched {
                return Err(AttentionError::range_error("query is a batch [B, T, C]; trace takes one [T, C] matrix"));
            }
            let key = read_default(&key, "key", &query, false, "query")?;
            let value = read_default(&value, "value", &key, false, "key")?;
            let mask = Options::read(&options, "options", TRACE_KEYS)?.mask()?;
            let trace = self.inner.trace(&query[0], &key[0], &value[0], &mask)?;
            write_trace(&trace)
        })
    }

    /// Differentiates the last forward (see the TypeScript declaration).
    #[wasm_bindgen(skip_typescript)]
    pub fn backward(&mut self, grad_output: JsValue) -> std::result::Result<JsValue, JsValue> {
        js_result(|| {
            if is_typed_candidate(&grad_output) {
                return self.backward_typed(&grad_output);
            }
            let (grad_output, batched) = read_batch(&grad_output, "gradOutput")?;
            let grads = self.inner.backward(&grad_output, batched)?;
            write_object(&[
                ("query", write_batch(&grads.query, batched)),
                ("key", write_batch(&grads.key, batched)),
                ("value", write_batch(&grads.value, batched)),
            ])
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
    /// TypeScript declaration). Throws an Error before any backward.
    #[wasm_bindgen(skip_typescript)]
    pub fn grads(&self, options: JsValue) -> std::result::Result<JsValue, JsValue> {
        js_result(|| match read_dtype_option(&options)? {
            None => write_weights(&*self.inner.grads()?),
            Some(dtype) => crate::by_precision!(F in dtype, () => write_flat_weights(&*self.inner.grads_in::<F>()?)),
        })
    }
}

/// The typed-array forms of `forward` and `backward`.
impl JsMultiHeadAttention {
    /// `forward` on `{ data: Float32Array | Float64Array, shape: [T, C] | [B, T, C] }`: Float64Array
    /// runs the f64 forward (the same bits as number[][]), Float32Array the f32 one.
    fn forward_typed(&mut self, query: &JsValue, key: &JsValue, value: &JsValue, options: &JsValue) -> Result<JsValue> {
        let c = self.inner.embed_dim();
        let query = read_typed_matrix(query, "query", true)?;
        check_typed_width(&query, "query", c)?;
        let key_typed = read_typed_default(key, "key", &query, c)?.unwrap_or_else(|| query.clone());
        let value_typed = read_typed_default(value, "value", &key_typed, c)?.unwrap_or_else(|| key_typed.clone());
        let o = Options::read(options, "options", FORWARD_KEYS)?;
        let options = read_forward_options(&o, query.batch().is_some())?;
        if let Some(id) = read_cache(&o, key, value)? {
            let query = SamePrecision::new([query], ["query"])?;
            return query.call(LayerForward { layer: &mut self.inner, options, cache: Some(id) });
        }
        let (key, value) = (key_typed, value_typed);
        let qkv = SamePrecision::new([query, key, value], ["query", "key", "value"])?;
        qkv.call(LayerForward { layer: &mut self.inner, options, cache: None })
    }

    /// `backward` on `{ data: Float32Array | Float64Array, shape }`; the gradients come back in
    /// the same precision (Float32Array ones from the f32 backward after an f32 training forward).
    fn backward_typed(&mut self, grad_output: &JsValue) -> Result<JsValue> {
        let c = self.inner.embed_dim();
        let grad = read_typed_matrix(grad_output, "gradOutput", true)?;
        check_typed_width(&grad, "gradOutput", c)?;
        SamePrecision::new([grad], ["gradOutput"])?.call(LayerBackward { layer: &mut self.inner })
    }
}

/// The typed `forward`, in either precision: over query, key and value, or over one input with a cache.
struct LayerForward<'a> {
    layer: &'a mut MultiHeadAttention,
    options: ForwardOptions,
    cache: Option<u32>,
}

impl OnTyped<1> for LayerForward<'_> {
    type Out = JsValue;
    fn call<F: Element>(self, [x]: [Typed<F>; 1]) -> Result<JsValue> {
        let id = self.cache.ok_or_else(|| AttentionError::State("a typed forward of one input needs a cache".into()))?;
        let view = x.view();
        let held = with_cache(id, |cache| Ok(cache.held()))?;
        let result = with_cache(id, |cache| self.layer.forward_cached_batch(view, cache, &self.options))?;
        write_forward(&self.options, self.layer.number_of_heads(), (view.items, view.rows, view.cols, held + view.rows), F::wrap(result.output), result.weights.map(F::wrap))
    }
}

impl OnTyped<3> for LayerForward<'_> {
    type Out = JsValue;
    fn call<F: Element>(self, [query, key, value]: [Typed<F>; 3]) -> Result<JsValue> {
        let (q, k) = (query.view(), key.view());
        let result = self.layer.forward_batch(q, k, value.view(), &self.options)?;
        write_forward(&self.options, self.layer.number_of_heads(), (q.items, q.rows, q.cols, k.rows), F::wrap(result.output), result.weights.map(F::wrap))
    }
}

/// `{ output, weights? }` of a typed forward: `[B?, T_q, C]`, and `[B?, h, T_q, T_k]` or `[B?, T_q, T_k]`.
/// `(B, T_q, C, T_k)` are the query's items, rows and columns and the keys' rows. Not generic over the
/// precision (the values come wrapped), so the module holds one body for f32 and f64.
fn write_forward(options: &ForwardOptions, h: usize, (items, t_q, c, t_k): (usize, usize, usize, usize), output: TypedValues, weights: Option<TypedValues>) -> Result<JsValue> {
    // [B, …] in front when batched
    let lead = |shape: &[usize]| -> Vec<usize> { if options.batched { [&[items][..], shape].concat() } else { shape.to_vec() } };
    let mut entries = vec![("output", write_typed(&output, &lead(&[t_q, c])))];
    if let Some(weights) = weights {
        let shape = if options.average_weights { lead(&[t_q, t_k]) } else { lead(&[h, t_q, t_k]) };
        entries.push(("weights", write_typed(&weights, &shape)));
    }
    write_object(&entries)
}

/// The forward options other than the cache.
fn read_forward_options(o: &Options, batched: bool) -> Result<ForwardOptions> {
    Ok(ForwardOptions {
        mask: o.mask()?,
        need_weights: o.flag("needWeights")?,
        average_weights: o.flag("averageWeights")?,
        training: o.flag("training")?,
        batched,
    })
}

/// `options.cache`'s registry id, if given; then key and value must be omitted (the cache holds
/// this layer's own keys and values: self-attention).
fn read_cache(o: &Options, key: &JsValue, value: &JsValue) -> Result<Option<u32>> {
    let raw = o.raw("cache")?;
    if raw.is_undefined() {
        return Ok(None);
    }
    let id = read_cache_id(&raw, "options.cache")?;
    for (name, v) in [("key", key), ("value", value)] {
        if !is_missing(v) {
            return Err(AttentionError::type_error(format!(
                "{name} must be omitted with options.cache: decoding is self-attention over the cached keys and values (forward(x, undefined, undefined, {{ cache, causal: true }}))"
            )));
        }
    }
    Ok(Some(id))
}

/// The typed `backward`, in either precision.
struct LayerBackward<'a> {
    layer: &'a mut MultiHeadAttention,
}

impl OnTyped<1> for LayerBackward<'_> {
    type Out = JsValue;
    fn call<F: Element>(self, [grad]: [Typed<F>; 1]) -> Result<JsValue> {
        let view = grad.view();
        let batched = grad.shape.len() == 3;
        let layer::BatchGrads { query, key, value } = self.layer.backward_batch(view, batched)?;
        // each gradient has its input's shape: [B, T, C] or [T, C], T from its length
        let write = |values: Vec<F>| {
            let (b, c) = (view.items, view.cols);
            let rows = values.len() / (b * c);
            write_typed(&F::wrap(values), &if batched { vec![b, rows, c] } else { vec![rows, c] })
        };
        write_object(&[("query", write(query)), ("key", write(key)), ("value", write(value))])
    }
}

/// A RangeError unless the typed matrix has C = the layer's embedDim columns.
fn check_typed_width(m: &TypedMatrix, name: &str, c: usize) -> Result<()> {
    if m.rows_cols().1 == c {
        return Ok(());
    }
    let expected = if m.batch().is_some() { format!("[B, T, {c}]") } else { format!("[T, {c}]") };
    Err(AttentionError::range_error(format!(
        "{name}.shape is {} but the layer's embedDim is {c}: {name} must be {expected}",
        m.shape_text()
    )))
}

/// A typed `key` (or `value`): `None` for `undefined`/`null` ("the same as `default`"); otherwise a
/// typed matrix of `default`'s precision, rank and batch size with C columns.
fn read_typed_default(value: &JsValue, name: &str, default: &TypedMatrix, c: usize) -> Result<Option<TypedMatrix>> {
    if is_missing(value) {
        return Ok(None);
    }
    let m = read_typed_like(value, name, default, "query", "query, key and value", true)?;
    check_typed_width(&m, name, c)?;
    Ok(Some(m))
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
    read_dtype(&Options::read(options, "options", DTYPE_KEYS)?.raw("dtype")?, "options.dtype")
}

/// `{ W_Q, …, b_O? }` in the flat typed form: a Float32Array or Float64Array per tensor.
fn write_flat_weights<F: Element>(weights: &Weights<F>) -> Result<JsValue> {
    let entries: Vec<(&str, JsValue)> = weights.tensors().into_iter().map(|(name, data)| (name, F::array(data))).collect();
    write_object(&entries)
}

/// The optional `dropout` (default 0) and `seed` (default 0) of an options object called `name`.
fn dropout_and_seed(o: &Options, name: &str) -> Result<(f64, u64)> {
    Ok((read_probability(&o.raw("dropout")?, &format!("{name}.dropout"))?, read_seed(&o.raw("seed")?, &format!("{name}.seed"))?))
}

/// A `number[][]` property that must be present.
fn required_matrix(o: &Options, key: &str, name: &str) -> Result<Matrix> {
    o.matrix(key)?.ok_or_else(|| missing(&format!("{name}.{key}"), "a number[][]"))
}

/// One of two spellings of the same property, not both.
fn either<T>(a: Option<T>, b: Option<T>, a_name: &str, b_name: &str) -> Result<Option<T>> {
    match (a, b) {
        (Some(_), Some(_)) => Err(AttentionError::type_error(format!("state has both {a_name} and \"{b_name}\"; give one of them"))),
        (a, b) => Ok(a.or(b)),
    }
}

/// `key` (or `value`): `undefined`/`null` means "the same as `default`"; otherwise it must be
/// batched exactly when the query is.
fn read_default(value: &JsValue, name: &str, default: &[Matrix], batched: bool, default_name: &str) -> Result<Vec<Matrix>> {
    if is_missing(value) {
        return Ok(default.to_vec());
    }
    let (items, is_batched) = read_batch(value, name)?;
    if is_batched != batched {
        let rank = |b: bool| if b { "a batch [B, T, C]" } else { "one [T, C] matrix" };
        return Err(AttentionError::range_error(format!(
            "{name} is {} but {default_name} is {}: query, key and value must all be batched or all not",
            rank(is_batched),
            rank(batched)
        )));
    }
    Ok(items)
}

/// `config.rope`: absent or false → none, true → base 10000, `{ base? }` → that base.
fn read_rope(raw: &JsValue) -> Result<Option<Rope>> {
    match read_rope_option(raw, "config.rope", ROPE_KEYS)? {
        Some(o) => Ok(Some(Rope { base: o.positive_or("base", Rope::default().base)? })),
        None => Ok(None),
    }
}
