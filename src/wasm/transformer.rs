//! Export: class `Transformer` (see [`crate::model`]): the model in its dtype, its construction and
//! config, `forward` and `headScores`, and the readers of its tokens and forward options. Training
//! and state (`gradients`, `trainStep`, the weights and the optimizer state) are a second `impl`
//! block in `training.rs`; `fromPretrained`/`generate` in `pretrained.rs`, the circuits in
//! `circuits.rs`. The boundary only converts: tokens, options and weights in, typed arrays
//! and plain objects out. The dtype is dispatched by [`by_precision!`](crate::by_precision).

use js_sys::Array;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::convert::{js_result, read_key, read_model_config, read_tokens_js, refused, typed_to_vec, write_object, Checked};
use super::typed::write_typed;
use crate::error::Result;
use crate::model::paths::{PathCut, PathInput};
use crate::model::{self, MlpKind, ModelConfig, NormKind, Positions, Tokens};
use crate::precision::{ByPrecision, Dtype, Family, Precision, Values};
use crate::real::Real;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = include_str!("types/transformer.d.ts");

/// The model in its dtype; each method's body is written once over it with
/// [`by_precision!`](crate::by_precision).
pub(super) type Model = ByPrecision<ModelIn>;

/// [`model::Transformer`] as a [`Family`].
pub(super) struct ModelIn;

impl Family for ModelIn {
    type Of<F: Real> = model::Transformer<F>;
}

/// A small transformer (attention-only by default) that trains in the package with AdamW: embed,
/// causal multi-head attention layers (each a `MultiHeadAttention`) added to the residual stream,
/// unembed, next-token cross-entropy. The model is written out as formulas in docs/api.md.
#[wasm_bindgen(js_name = Transformer)]
pub struct JsTransformer {
    pub(super) inner: Model,
    /// `'gpt2'` or `'llama'` for a checkpoint loaded by `fromPretrained` (src/wasm/pretrained.rs).
    pub(super) model_type: Option<&'static str>,
}

#[wasm_bindgen(js_class = Transformer)]
impl JsTransformer {
    /// A model with seeded weights. Throws a RangeError for a config that does not fit (embedDim not a
    /// multiple of numHeads, contextLength < 2, …) and a TypeError for an unknown key or a wrong type.
    #[wasm_bindgen(constructor)]
    pub fn new(#[wasm_bindgen(unchecked_param_type = "TransformerConfig")] config: JsValue) -> std::result::Result<JsTransformer, JsValue> {
        js_result(|| {
            let c = Checked::read(read_model_config(&config))?;
            let count = |key| c.count(key).unwrap_or(0);
            let defaults = ModelConfig::new(count("vocabSize"), count("contextLength"), count("embedDim"), count("numHeads"), count("numLayers"));
            let mlp = c.text("mlp");
            let config = ModelConfig {
                positions: c.text("positions").and_then(|p| Positions::parse(&p)).unwrap_or(Positions::Shortformer),
                mlp: mlp.is_some(),
                mlp_kind: if mlp.as_deref() == Some("silu_gated") { MlpKind::Gated } else { MlpKind::Gelu },
                layer_norm: c.flag("layerNorm"),
                norm: if c.text("norm").as_deref() == Some("rms") { NormKind::Rms } else { NormKind::Layer },
                norm_eps: c.number("normEps").unwrap_or(defaults.norm_eps),
                mlp_width: c.count("mlpWidth").unwrap_or(defaults.mlp_width),
                mlp_bias: c.flag("mlpBias"),
                kv_heads: c.count("numKVHeads").unwrap_or(defaults.num_heads),
                rope_base: c.number("ropeBase").unwrap_or(defaults.rope_base),
                bias: c.flag("bias"),
                seed: u64::try_from(c.value("seed")).unwrap_or_default(),
                tied: c.flag("tiedEmbeddings"),
                ..defaults
            };
            config.check_parts()?;
            let dtype = read_key(&c.value("options"), "dtype", "config.dtype", "dtype")?.as_string().and_then(|d| Dtype::parse(&d)).unwrap_or(f32::wrap(()));
            let inner = crate::by_precision!(F in dtype, () => F::wrap(model::Transformer::<F>::new(config)?));
            Ok(Self { inner, model_type: None })
        })
    }

    /// The config, every option filled in (a part's options — norm, normEps; mlpWidth, mlpBias; ropeBase —
    /// only when the model has that part).
    #[wasm_bindgen(getter, skip_typescript)]
    pub fn config(&self) -> std::result::Result<JsValue, JsValue> {
        let inner = &self.inner;
        let dtype = inner.dtype();
        let c = crate::by_precision!(inner, m => m.config());
        if let Some(model_type) = self.model_type {
            return js_result(|| loaded_config(c, model_type, dtype));
        }
        let seed = if c.seed < (1u64 << 53) { JsValue::from(c.seed as f64) } else { JsValue::from(c.seed) };
        js_result(|| {
            let mut entries = vec![
                ("vocabSize", JsValue::from(c.vocab_size as f64)),
                ("contextLength", JsValue::from(c.context_length as f64)),
                ("embedDim", JsValue::from(c.embed_dim as f64)),
                ("numHeads", JsValue::from(c.num_heads as f64)),
                ("numLayers", JsValue::from(c.num_layers as f64)),
                ("positions", JsValue::from_str(c.positions.name())),
                ("mlp", if c.mlp && c.mlp_kind == MlpKind::Gated { JsValue::from_str("silu_gated") } else { JsValue::from(c.mlp) }),
                ("layerNorm", JsValue::from(c.layer_norm)),
                ("bias", JsValue::from(c.bias)),
                ("seed", seed),
                ("dtype", JsValue::from_str(dtype)),
                ("numKVHeads", JsValue::from(c.kv_heads as f64)),
                ("tiedEmbeddings", JsValue::from(c.tied)),
            ];
            // a part's options only with the part (`{ ...model.config, embedDim }` then builds a model)
            if c.layer_norm {
                entries.extend([("norm", JsValue::from_str(c.norm.name())), ("normEps", JsValue::from(c.norm_eps))]);
            }
            if c.mlp {
                entries.extend([("mlpWidth", JsValue::from(c.mlp_width as f64)), ("mlpBias", JsValue::from(c.mlp_bias))]);
            }
            if c.positions == Positions::Rope {
                entries.push(("ropeBase", JsValue::from(c.rope_base)));
            }
            write_object(&entries)
        })
    }

    /// The number of parameters (every entry of every tensor of getWeights).
    #[wasm_bindgen(getter = numParameters)]
    pub fn num_parameters(&self) -> f64 {
        crate::by_precision!(&self.inner, m => m.num_parameters() as f64)
    }

    /// The AdamW steps taken (trainStep calls that were not refused, or what setState restored).
    #[wasm_bindgen(getter)]
    pub fn step(&self) -> f64 {
        crate::by_precision!(&self.inner, m => m.moments().step as f64)
    }

    #[wasm_bindgen(skip_typescript)]
    pub fn forward(&mut self, tokens: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
        js_result(|| crate::by_precision!(F in &mut self.inner, model => {
            let tokens = read_tokens(&tokens, model.config())?;
            let (head_mask, cuts, o) = read_masks(&options, model.config())?;
            let (need_weights, need_hidden) = (o.flag("needWeights"), o.flag("needHidden"));
            let (b, t, v, h, c) = (tokens.batch, tokens.t, model.config().vocab_size, model.config().num_heads, model.config().embed_dim);
            let out = model.forward_all(&tokens, need_weights, need_hidden, head_mask.as_deref(), &cuts)?;
            let mut entries = vec![
                ("logits", write_typed(&F::wrap::<Values>(out.logits), &[b, t, v])),
                ("loss", JsValue::from(out.loss)),
                ("losses", write_typed(&f64::wrap::<Values>(out.losses), &[b, t - 1])),
            ];
            if let Some(weights) = out.weights {
                let all: Array = weights.into_iter().map(|w| write_typed(&F::wrap::<Values>(w), &[b, h, t, t])).collect();
                entries.push(("weights", all.into()));
            }
            if let Some(hidden) = out.hidden {
                let all: Array = hidden.into_iter().map(|x| write_typed(&F::wrap::<Values>(x), &[b, t, c])).collect();
                entries.push(("hidden", all.into()));
            }
            write_object(&entries)
        }))
    }

    #[wasm_bindgen(js_name = headScores, skip_typescript)]
    pub fn head_scores(&mut self, tokens: JsValue) -> std::result::Result<JsValue, JsValue> {
        js_result(|| crate::by_precision!(&mut self.inner, model => {
            let tokens = read_tokens(&tokens, model.config())?;
            let layers = model.head_scores(&tokens)?;
            let mut out = Vec::with_capacity(layers.len());
            for heads in layers {
                let mut row = Vec::with_capacity(heads.len());
                for s in heads {
                    row.push(write_object(&[
                        ("previousToken", JsValue::from(s.previous_token)),
                        ("induction", JsValue::from(s.induction)),
                        ("firstToken", JsValue::from(s.first_token)),
                        ("self", JsValue::from(s.self_)),
                    ])?);
                }
                out.push(JsValue::from(row.into_iter().collect::<Array>()));
            }
            Ok(out.into_iter().collect::<Array>().into())
        }))
    }
}

/// The `config` getter of a loaded model: the toy config's keys, then the checkpoint's parts.
fn loaded_config(c: &ModelConfig, model_type: &str, dtype: &str) -> Result<JsValue> {
    let n = |x: usize| JsValue::from(x as f64);
    write_object(&[
        ("modelType", JsValue::from_str(model_type)),
        ("vocabSize", n(c.vocab_size)),
        ("contextLength", n(c.context_length)),
        ("embedDim", n(c.embed_dim)),
        ("numHeads", n(c.num_heads)),
        ("numKVHeads", n(c.kv_heads)),
        ("headDim", n(c.head_dim())),
        ("numLayers", n(c.num_layers)),
        ("positions", JsValue::from_str(c.positions.name())),
        ("ropeBase", if c.positions == Positions::Rope { JsValue::from(c.rope_base) } else { JsValue::NULL }),
        ("norm", JsValue::from_str(c.norm.name())),
        ("normEps", JsValue::from(c.norm_eps)),
        ("mlp", JsValue::from_str(if c.mlp_kind == MlpKind::Gelu { "gelu_new" } else { "silu_gated" })),
        ("mlpWidth", n(c.mlp_width)),
        ("attentionBias", JsValue::from(c.bias)),
        ("mlpBias", JsValue::from(c.mlp_bias)),
        ("tiedEmbeddings", JsValue::from(c.tied)),
        ("dtype", JsValue::from_str(dtype)),
    ])
}

/// `[B, T]` tokens as `number[][]` or `{ data: an integer typed array, shape: [B, T] }` (read by
/// `readTokens`), checked against the model by the core.
pub(super) fn read_tokens(value: &JsValue, config: &ModelConfig) -> Result<Tokens> {
    let mut shape = [0.0; 2];
    let ids: js_sys::Float64Array = refused(read_tokens_js(value, &mut shape))?.unchecked_into();
    Tokens::check(&typed_to_vec(&ids), shape[0] as usize, shape[1] as usize, config)
}

/// forward's options (needWeights, needHidden, then `headMask` and `pathMask`, each checked against the
/// model as soon as it is read): `headMask`'s numLayers rows of numHeads booleans (the counts checked
/// before the values are read), `pathMask`'s cuts `{ from: [l1, i], to: [l2, j], input }` (absent: none).
#[allow(clippy::type_complexity)]
fn read_masks(options: &JsValue, config: &ModelConfig) -> Result<(Option<Vec<Vec<bool>>>, Vec<PathCut>, Checked)> {
    let steps = "needWeights:flag needHidden:flag headMask:headMask";
    let o = Checked::call(options, "options", "needWeights, needHidden, headMask, pathMask", "", steps, 0, "", &[config.num_layers as u32, config.num_heads as u32])?;
    let head_mask = match o.table::<js_sys::Uint8Array>("headMask")? {
        None => None,
        Some((values, _, _)) => {
            let lengths = typed_to_vec(&Checked::read(o.value("headMask"))?.value("lengths").unchecked_into::<js_sys::Uint32Array>());
            config.check_head_mask_rows(lengths[0] as usize)?;
            lengths[1..].iter().enumerate().try_for_each(|(l, &n)| config.check_head_mask_row(l, n as usize))?;
            Some(values.chunks(config.num_heads.max(1)).map(|row| row.iter().map(|&b| b != 0).collect()).collect())
        }
    };
    let cuts = typed_to_vec(&read_key(options, "pathMask", "options.pathMask", "pathMask")?.unchecked_into::<js_sys::Uint32Array>());
    let cuts: Vec<PathCut> = cuts.chunks(5).map(|c| PathCut { from: (c[0] as usize, c[1] as usize), to: (c[2] as usize, c[3] as usize), input: [PathInput::Query, PathInput::Key, PathInput::Value][c[4] as usize] }).collect();
    for (k, cut) in cuts.iter().enumerate() {
        config.check_path_cut(cut, &format!("options.pathMask[{k}]"))?;
    }
    Ok((head_mask, cuts, o))
}
