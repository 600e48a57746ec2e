//! `Transformer.fromPretrained` and what a loaded checkpoint answers: `forward` (with `needHidden`),
//! `generate` through the KV cache, `config`, `numParameters` (see [`crate::pretrained`]). The
//! boundary only converts: the config object is read as JSON text by the core's reader, the
//! safetensors bytes are copied into the module once, the model is the core's [`Pretrained`] in the
//! dtype asked for, dispatched by [`by_precision!`](crate::by_precision).

use js_sys::{Array, Function, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::convert::{array_length, describe, get, is_array, js_result, missing, read_seed, write_object, Options};
use super::transformer::{read_tokens, JsTransformer, Loaded};
use super::typed::{read_dtype, write_typed, Element};
use crate::error::{number_text, AttentionError, Result};
use crate::model::ModelConfig;
use crate::precision::{Precision, Values};
use crate::pretrained::config::{Architecture, PretrainedConfig};
use crate::pretrained::json::{self, Json};
use crate::pretrained::model::{argmax, check_memory, Pretrained};
use crate::pretrained::sample::{Sampler, Sampling};

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = include_str!("types/pretrained.d.ts");

const LOAD_KEYS: &str = "config, weights, dtype";
const FORWARD_KEYS: &str = "needWeights, needHidden";
const GENERATE_KEYS: &str = "maxNewTokens, temperature, topK, topP, seed, onToken";

/// A body written once over the dtype.
trait OnLoaded {
    type Out;
    fn call<F: Element>(self, model: &mut Pretrained<F>) -> Result<Self::Out>;
}

fn with<M: OnLoaded>(loaded: &mut Loaded, body: M) -> Result<M::Out> {
    crate::by_precision!(loaded, m => body.call(m))
}

/// The tokens' checks ([`read_tokens`]) in a loaded model's terms: V, and its positions as the
/// context length.
fn token_config(c: &PretrainedConfig) -> ModelConfig {
    ModelConfig::new(c.vocab_size, c.max_positions, c.hidden_size, c.num_heads, c.num_layers)
}

/// `options.config`: a plain object, read through JSON text by the core's reader.
fn read_config(raw: &JsValue) -> Result<Json> {
    let expected = "expected the parsed config.json of a Hugging Face checkpoint (an object with model_type)";
    if raw.is_undefined() || raw.is_null() {
        return Err(missing("options.config", expected));
    }
    if !raw.is_object() || is_array(raw, "options.config")? || raw.is_function() {
        return Err(AttentionError::type_error(format!("options.config is {}; {expected}", describe(raw))));
    }
    let text = js_sys::JSON::stringify(raw)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| AttentionError::type_error(format!("options.config cannot be written as JSON (a cycle or a bigint?); {expected}")))?;
    json::parse(&text).map_err(|e| AttentionError::type_error(format!("options.config is not plain JSON data ({e}); {expected}")))
}

/// `options.weights`: the file's bytes as an ArrayBuffer or a Uint8Array (its length first, so
/// that a model too big is refused before anything is copied).
fn read_weights(raw: &JsValue) -> Result<Uint8Array> {
    let expected = "expected the bytes of a model.safetensors file (an ArrayBuffer or a Uint8Array)";
    if raw.is_undefined() || raw.is_null() {
        return Err(missing("options.weights", expected));
    }
    if let Some(bytes) = raw.dyn_ref::<Uint8Array>() {
        return Ok(bytes.clone());
    }
    if raw.is_instance_of::<js_sys::ArrayBuffer>() {
        return Ok(Uint8Array::new(raw));
    }
    Err(AttentionError::type_error(format!("options.weights is {}; {expected}", describe(raw))))
}

impl JsTransformer {
    /// The loaded model, or an Error saying that `what` needs one.
    pub(super) fn loaded(&mut self, what: &str) -> Result<&mut Loaded> {
        self.loaded.as_mut().ok_or_else(|| {
            AttentionError::State(format!("{what} needs a model from Transformer.fromPretrained; this one was made with new Transformer(config)"))
        })
    }

    /// A loaded model's `config` getter: the checkpoint's shape in the package's names.
    pub(super) fn loaded_config(loaded: &Loaded) -> Result<JsValue> {
        let dtype = loaded.dtype();
        let c = crate::by_precision!(loaded, m => m.config.clone());
        let gpt2 = c.architecture == Architecture::Gpt2;
        let n = |x: usize| JsValue::from(x as f64);
        write_object(&[
            ("modelType", JsValue::from_str(if gpt2 { "gpt2" } else { "llama" })),
            ("vocabSize", n(c.vocab_size)),
            ("contextLength", n(c.max_positions)),
            ("embedDim", n(c.hidden_size)),
            ("numHeads", n(c.num_heads)),
            ("numKVHeads", n(c.num_kv_heads)),
            ("headDim", n(c.head_dim)),
            ("numLayers", n(c.num_layers)),
            ("positions", JsValue::from_str(if gpt2 { "learned" } else { "rope" })),
            ("ropeBase", c.rope_theta.map_or(JsValue::NULL, JsValue::from)),
            ("norm", JsValue::from_str(if gpt2 { "layer" } else { "rms" })),
            ("normEps", JsValue::from(c.norm_eps)),
            ("mlp", JsValue::from_str(if gpt2 { "gelu_new" } else { "silu_gated" })),
            ("mlpWidth", n(c.intermediate_size)),
            ("attentionBias", JsValue::from(gpt2 || c.attention_bias)),
            ("mlpBias", JsValue::from(gpt2 || c.mlp_bias)),
            ("tiedEmbeddings", JsValue::from(crate::by_precision!(loaded, m => m.unembed.is_none()))),
            ("dtype", JsValue::from_str(dtype)),
        ])
    }

    /// A loaded model's `forward`: logits, loss and losses, and with `needWeights` / `needHidden`
    /// every layer's attention weights / the L + 1 hidden states.
    pub(super) fn loaded_forward(loaded: &mut Loaded, tokens: &JsValue, options: &JsValue) -> Result<JsValue> {
        struct Forward<'a>(&'a JsValue, &'a JsValue);
        impl OnLoaded for Forward<'_> {
            type Out = JsValue;
            fn call<F: Element>(self, model: &mut Pretrained<F>) -> Result<JsValue> {
                let tokens = read_tokens(self.0, &token_config(&model.config))?;
                let o = Options::read(self.1, "options", FORWARD_KEYS)?;
                let (need_weights, need_hidden) = (o.flag("needWeights")?, o.flag("needHidden")?);
                let (b, t, v, c, h) = (tokens.batch, tokens.t, model.config.vocab_size, model.config.hidden_size, model.config.num_heads);
                let out = model.forward(&tokens.data, b, t, need_weights, need_hidden)?;
                let (loss, losses) = model.loss(&tokens, &out.logits);
                let mut entries = vec![
                    ("logits", write_typed(&F::wrap::<Values>(out.logits), &[b, t, v])),
                    ("loss", JsValue::from(loss)),
                    ("losses", write_typed(&f64::wrap::<Values>(losses), &[b, t - 1])),
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
            }
        }
        with(loaded, Forward(tokens, options))
    }
}

/// `generate`'s prompt: `number[]` (or an Int32Array / Uint32Array / Uint16Array) of token ids below V.
fn read_prompt(raw: &JsValue, v: usize) -> Result<Vec<u32>> {
    let expected = "expected number[], the token ids of the prompt";
    if raw.is_undefined() || raw.is_null() {
        return Err(missing("prompt", expected));
    }
    let values: Vec<f64> = if let Some(a) = raw.dyn_ref::<js_sys::Int32Array>() {
        a.to_vec().into_iter().map(f64::from).collect()
    } else if let Some(a) = raw.dyn_ref::<js_sys::Uint32Array>() {
        a.to_vec().into_iter().map(f64::from).collect()
    } else if let Some(a) = raw.dyn_ref::<js_sys::Uint16Array>() {
        a.to_vec().into_iter().map(f64::from).collect()
    } else if is_array(raw, "prompt")? {
        (0..array_length(raw, "prompt")?)
            .map(|i| {
                let x = get(raw, &JsValue::from(i as u32), &format!("prompt[{i}]"))?;
                x.as_f64().ok_or_else(|| AttentionError::type_error(format!("prompt[{i}] is {}; expected an integer token id", describe(&x))))
            })
            .collect::<Result<_>>()?
    } else {
        return Err(AttentionError::type_error(format!("prompt is {}; {expected}", describe(raw))));
    };
    if values.is_empty() {
        return Err(AttentionError::range_error("prompt is empty; expected at least one token"));
    }
    values
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            if x.fract() == 0.0 && x >= 0.0 && x < v as f64 {
                Ok(x as u32)
            } else {
                Err(AttentionError::range_error(format!("prompt[{i}] is {}; expected an integer in 0 … vocabSize − 1 = {}", number_text(x), v - 1)))
            }
        })
        .collect()
}

/// `generate`'s options (maxNewTokens required).
struct Generate {
    max_new: usize,
    sampling: Sampling,
    seed: u64,
    on_token: Option<Function>,
}

fn read_generate(options: &JsValue) -> Result<Generate> {
    if options.is_undefined() || options.is_null() {
        return Err(missing("options", "{ maxNewTokens, temperature?, topK?, topP?, seed?, onToken? }"));
    }
    let o = Options::read(options, "options", GENERATE_KEYS)?;
    let max_new = o.raw("maxNewTokens")?;
    let max_new = match max_new.as_f64() {
        Some(x) if x >= 0.0 && x.fract() == 0.0 && x <= 4294967295.0 => x as usize,
        Some(x) => return Err(AttentionError::range_error(format!("options.maxNewTokens is {}; expected an integer ≥ 0", number_text(x)))),
        None if max_new.is_undefined() => return Err(missing("options.maxNewTokens", "an integer ≥ 0, the tokens to generate")),
        None => return Err(AttentionError::type_error(format!("options.maxNewTokens is {}; expected an integer ≥ 0", describe(&max_new)))),
    };
    let temperature = o.raw("temperature")?;
    let temperature = match temperature.as_f64() {
        Some(x) => x,
        None if temperature.is_undefined() => 0.0,
        None => return Err(AttentionError::type_error(format!("options.temperature is {}; expected a finite number ≥ 0 (0 is greedy)", describe(&temperature)))),
    };
    let top_k = o.raw("topK")?;
    let top_k = match top_k.as_f64() {
        None if top_k.is_undefined() => None,
        Some(x) if x >= 1.0 && x.fract() == 0.0 && x <= 4294967295.0 => Some(x as usize),
        Some(x) => return Err(AttentionError::range_error(format!("options.topK is {}; expected an integer ≥ 1", number_text(x)))),
        None => return Err(AttentionError::type_error(format!("options.topK is {}; expected an integer ≥ 1", describe(&top_k)))),
    };
    let top_p = o.raw("topP")?;
    let top_p = match top_p.as_f64() {
        None if top_p.is_undefined() => None,
        Some(x) => Some(x),
        None => return Err(AttentionError::type_error(format!("options.topP is {}; expected a number in (0, 1]", describe(&top_p)))),
    };
    let on_token = o.raw("onToken")?;
    let on_token = if on_token.is_undefined() {
        None
    } else {
        Some(on_token.dyn_into::<Function>().map_err(|f| AttentionError::type_error(format!("options.onToken is {}; expected a function (id, index) => void", describe(&f))))?)
    };
    let sampling = Sampling { temperature, top_k, top_p };
    sampling.check()?;
    Ok(Generate { max_new, sampling, seed: read_seed(&o.raw("seed")?, "options.seed")?, on_token })
}

#[wasm_bindgen(js_class = Transformer)]
impl JsTransformer {
    /// A Hugging Face checkpoint (`gpt2`: GPT2LMHeadModel; `llama`: LlamaForCausalLM, SmolLM2,
    /// TinyLlama, Llama 3.2) loaded as a Transformer: `config` is its parsed config.json, `weights`
    /// the bytes of its model.safetensors (F32, F16 or BF16 tensors, converted on load), `dtype`
    /// 'float32' (default) or 'float64'. Throws a TypeError or RangeError naming a missing or
    /// unsupported config field, a missing, extra or misshapen tensor, a malformed file, or a model
    /// too big for wasm memory (before allocating it).
    #[wasm_bindgen(js_name = fromPretrained)]
    pub fn from_pretrained(#[wasm_bindgen(unchecked_param_type = "FromPretrainedOptions")] options: JsValue) -> std::result::Result<JsTransformer, JsValue> {
        js_result(|| {
            if options.is_undefined() || options.is_null() {
                return Err(missing("options", "{ config, weights, dtype? }"));
            }
            let o = Options::read(&options, "options", LOAD_KEYS)?;
            let config = read_config(&o.raw("config")?)?;
            let bytes = read_weights(&o.raw("weights")?)?;
            let dtype = read_dtype(&o.raw("dtype")?, "options.dtype")?.unwrap_or(f32::wrap(()));
            let checked = PretrainedConfig::from_json(&config)?;
            let length = bytes.length() as usize;
            crate::by_precision!(F in &dtype, () => check_memory::<F>(&checked, length))?;
            let bytes = bytes.to_vec();
            let loaded = crate::by_precision!(F in dtype, () => F::wrap(Pretrained::<F>::load(&config, &bytes)?));
            Ok(JsTransformer::from_loaded(loaded))
        })
    }

    /// Generates `maxNewTokens` tokens after `prompt` (token ids) on a model from fromPretrained: the
    /// prompt runs once, then each new token is one forward of a single token through the KV cache.
    /// `temperature` 0 (the default) is greedy (the argmax, lowest id on ties); otherwise the logits
    /// are divided by it, `topK` and `topP` filter them as transformers does, and one token is drawn
    /// with the seeded generator (`seed`, default 0: the same tokens in every runtime).
    /// `onToken(id, index)` is called as each token arrives; if it throws, generation stops and the
    /// error is thrown. Returns the prompt and the new tokens.
    #[wasm_bindgen(skip_typescript)]
    pub fn generate(&mut self, prompt: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
        struct Run(Vec<u32>, Generate);
        impl OnLoaded for Run {
            type Out = (Vec<u32>, Option<JsValue>);
            fn call<F: Element>(self, model: &mut Pretrained<F>) -> Result<Self::Out> {
                let Run(prompt, g) = self;
                let mut sampler = Sampler::new(g.sampling, g.seed)?;
                let greedy = g.sampling.temperature == 0.0;
                let mut thrown = None;
                let result = model.generate(
                    &prompt,
                    g.max_new,
                    |logits| if greedy { argmax(logits) } else { sampler.choose(logits) },
                    |id, index| match &g.on_token {
                        Some(f) => f.call2(&JsValue::NULL, &JsValue::from(id), &JsValue::from(index as u32)).map(|_| ()).map_err(|e| {
                            thrown = Some(e);
                            AttentionError::State("options.onToken threw".into())
                        }),
                        None => Ok(()),
                    },
                );
                match (result, thrown) {
                    (_, Some(e)) => Ok((Vec::new(), Some(e))),
                    (r, None) => r.map(|ids| (ids, None)),
                }
            }
        }
        let (ids, thrown) = js_result(|| {
            let loaded = self.loaded("generate")?;
            let v = crate::by_precision!(&*loaded, m => m.config.vocab_size);
            let prompt = read_prompt(&prompt, v)?;
            let g = read_generate(&options)?;
            with(loaded, Run(prompt, g))
        })?;
        match thrown {
            // the caller's own error, unchanged
            Some(e) => Err(e),
            None => Ok(ids.into_iter().map(JsValue::from).collect::<Array>().into()),
        }
    }
}
