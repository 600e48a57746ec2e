//! `Transformer.fromPretrained` and `generate` (see [`crate::pretrained`]): a checkpoint loaded as
//! the package's one `Transformer`, and decoding through its KV caches. The boundary only converts:
//! the config object is read as JSON text by the core's reader, the safetensors bytes are read from
//! the caller's buffer a range at a time (the file is never copied into the module whole), the model
//! is built in the dtype asked for, dispatched by [`by_precision!`](crate::by_precision).

use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::convert::{js_result, read_generate_js, read_key, read_prompt, refused, typed_to_vec, Checked};
use super::transformer::JsTransformer;
use crate::error::{AttentionError, Result};
use crate::precision::Precision;
use crate::pretrained::config::PretrainedConfig;
use crate::pretrained::json;
use crate::pretrained::model::{argmax, check_memory, load};
use crate::pretrained::safetensors::{copy_f32_in_chunks, Bytes};
use crate::pretrained::sample::{Sampler, Sampling};

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = include_str!("types/pretrained.d.ts");

/// The caller's Uint8Array, read through [`Bytes`]: each range is copied into the module as the
/// reader asks for it.
struct JsBytes(js_sys::Uint8Array);

impl Bytes for JsBytes {
    fn length(&self) -> usize {
        self.0.length() as usize
    }

    fn copy_to(&self, at: usize, out: &mut [u8]) {
        // within the file: the reader asks only for ranges inside length()
        self.0.subarray(at as u32, (at + out.len()) as u32).copy_to(out);
    }

    fn copy_f32(&self, at: usize, out: &mut [std::mem::MaybeUninit<f32>]) {
        let start = self.0.byte_offset() as usize + at;
        if !start.is_multiple_of(4) {
            // a Float32Array view needs 4-byte alignment: a chunk of bytes at a time
            return copy_f32_in_chunks(self, at, out);
        }
        // wasm is little-endian, as the file is: the values copied as they are
        js_sys::Float32Array::new_with_byte_offset_and_length(&self.0.buffer(), start as u32, out.len() as u32).copy_to_uninit(out);
    }
}

/// `generate`'s options (maxNewTokens required): the sampling checked by the core, then the seed.
fn read_generate(options: &JsValue) -> Result<(usize, Sampling, u64, Option<Function>)> {
    let g = Checked::read(read_generate_js(options))?;
    let sampling = Sampling { temperature: g.number("temperature").unwrap_or(0.0), top_k: g.count("topK"), top_p: g.number("topP") };
    sampling.check()?;
    let seed = u64::try_from(read_key(&g.value("options"), "seed", "options.seed", "seed")?).unwrap_or_default();
    Ok((g.count("maxNewTokens").unwrap_or(0), sampling, seed, g.value("onToken").dyn_into().ok()))
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
            let o = Checked::options(&options, "config, weights, dtype", "{ config, weights, dtype? }", "config:config weights:bytes dtype:dtype")?;
            // the config as JSON text (convert.js wrote it), read by the core's reader
            let config = json::parse(&o.text("config").unwrap_or_default()).map_err(|e| {
                AttentionError::type_error(format!("options.config is not plain JSON data ({e}); expected the parsed config.json of a Hugging Face checkpoint (an object with model_type)"))
            })?;
            let bytes = o.value("weights").unchecked_into();
            let dtype = o.dtype("dtype").unwrap_or(f32::wrap(()));
            let checked = PretrainedConfig::from_json(&config)?;
            crate::by_precision!(F in &dtype, () => check_memory::<F>(&checked))?;
            let bytes = JsBytes(bytes);
            let inner = crate::by_precision!(F in dtype, () => F::wrap(load::<F>(&config, &bytes)?));
            let model_type = if checked.architecture == crate::pretrained::config::Architecture::Gpt2 { "gpt2" } else { "llama" };
            Ok(JsTransformer { inner, model_type: Some(model_type) })
        })
    }

    /// Generates `maxNewTokens` tokens after `prompt` (token ids): the prompt runs once, then each
    /// new token is one forward of a single token through the KV cache (a model with shortformer
    /// positions reruns the tokens so far). `temperature` 0 (the default) is greedy (the argmax,
    /// lowest id on ties); otherwise the logits are divided by it, `topK` and `topP` filter them as
    /// transformers does, and one token is drawn with the seeded generator (`seed`, default 0: the
    /// same tokens in every runtime). `onToken(id, index)` is called as each token arrives; if it
    /// throws, generation stops and the error is thrown. Returns the prompt and the new tokens.
    #[wasm_bindgen(skip_typescript)]
    pub fn generate(&mut self, prompt: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
        let (ids, thrown) = js_result(|| {
            let v = crate::by_precision!(&self.inner, m => m.config().vocab_size);
            let prompt = typed_to_vec(&refused(read_prompt(&prompt, v as f64))?.unchecked_into::<js_sys::Uint32Array>());
            let (max_new, sampling, seed, on_token) = read_generate(&options)?;
            let mut sampler = Sampler::new(sampling, seed)?;
            let greedy = sampling.temperature == 0.0;
            let mut thrown = None;
            let result = crate::by_precision!(&mut self.inner, model => model.generate(
                &prompt,
                max_new,
                |logits| if greedy { argmax(logits) } else { sampler.choose(logits) },
                |id, index| match &on_token {
                    Some(f) => f.call2(&JsValue::NULL, &JsValue::from(id), &JsValue::from(index as u32)).map(|_| ()).map_err(|e| {
                        thrown = Some(e);
                        AttentionError::State("options.onToken threw".into())
                    }),
                    None => Ok(()),
                },
            ));
            match (result, thrown) {
                (_, Some(e)) => Ok((Vec::new(), Some(e))),
                (r, None) => r.map(|ids| (ids, None)),
            }
        })?;
        match thrown {
            // the caller's own error, unchanged
            Some(e) => Err(e),
            None => Ok(ids.into_iter().map(JsValue::from).collect::<Array>().into()),
        }
    }
}
