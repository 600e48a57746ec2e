//! config.json → what the loader builds. Fields, defaults and meanings from transformers'
//! `configuration_gpt2.py` (GPT2Config: n_embd, n_layer, n_head, n_positions, n_inner = None → 4C,
//! layer_norm_epsilon = 1e-5, activation_function = "gelu_new", tie_word_embeddings = True) and
//! `configuration_llama.py` (LlamaConfig: hidden_size, intermediate_size, num_hidden_layers,
//! num_attention_heads, num_key_value_heads = None → num_attention_heads, head_dim = None → C / h,
//! max_position_embeddings = 2048, rms_norm_eps = 1e-6, rope_theta = 10000 or
//! rope_parameters.rope_theta, rope_scaling = None, attention_bias = mlp_bias = False,
//! hidden_act = "silu", tie_word_embeddings = False). What changes the computation and is not
//! supported (a RoPE type other than the default, interleaved RoPE pairs, another activation, GPT-2's
//! per-layer scaling or cross-attention) is refused by name rather than ignored.

use super::json::Json;
use crate::error::{number_text, AttentionError, Result};

/// The two decoder families `fromPretrained` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Architecture {
    /// `GPT2LMHeadModel`: learned positions, LayerNorm, Conv1D weights, gelu_new MLP.
    Gpt2,
    /// `LlamaForCausalLM`: RoPE, RMSNorm, grouped-query heads, SiLU-gated MLP.
    Llama,
}

/// A checked config.
#[derive(Clone, Debug, PartialEq)]
pub struct PretrainedConfig {
    pub architecture: Architecture,
    /// V.
    pub vocab_size: usize,
    /// C.
    pub hidden_size: usize,
    pub num_layers: usize,
    /// h.
    pub num_heads: usize,
    /// h_kv (h for GPT-2).
    pub num_kv_heads: usize,
    /// d = C / h (the attention layer's split).
    pub head_dim: usize,
    /// The MLP's width.
    pub intermediate_size: usize,
    /// The positions the model has: T may not exceed it.
    pub max_positions: usize,
    /// LayerNorm's (GPT-2) or RMSNorm's (Llama) ε.
    pub norm_eps: f64,
    /// RoPE's base (Llama only).
    pub rope_theta: Option<f64>,
    pub attention_bias: bool,
    pub mlp_bias: bool,
    /// W_U = W_E when the file has no `lm_head.weight`.
    pub tie_word_embeddings: bool,
}

fn type_error(message: String) -> AttentionError {
    AttentionError::type_error(message)
}

/// Reads the fields of one config object, naming them `config.<field>` in messages.
struct Fields<'a>(&'a Json, &'static str);

impl Fields<'_> {
    fn present(&self, key: &str) -> Option<&Json> {
        self.0.get(key).filter(|v| !matches!(v, Json::Null))
    }

    fn count(&self, key: &str, default: Option<usize>) -> Result<usize> {
        match self.present(key) {
            None => default.ok_or_else(|| type_error(format!("config.{key} is missing; a {} config.json has it", self.1))),
            Some(Json::Number(v)) if v.fract() == 0.0 && *v >= 1.0 && *v <= 4_294_967_295.0 => Ok(*v as usize),
            Some(Json::Number(v)) => Err(AttentionError::range_error(format!("config.{key} is {}; expected an integer ≥ 1", number_text(*v)))),
            Some(other) => Err(type_error(format!("config.{key} is {}; expected an integer", other.kind()))),
        }
    }

    fn positive(&self, key: &str, default: f64) -> Result<f64> {
        match self.present(key) {
            None => Ok(default),
            Some(Json::Number(v)) if v.is_finite() && *v > 0.0 => Ok(*v),
            Some(Json::Number(v)) => Err(AttentionError::range_error(format!("config.{key} is {}; expected a finite number > 0", number_text(*v)))),
            Some(other) => Err(type_error(format!("config.{key} is {}; expected a number", other.kind()))),
        }
    }

    fn flag(&self, key: &str, default: bool) -> Result<bool> {
        match self.present(key) {
            None => Ok(default),
            Some(Json::Bool(b)) => Ok(*b),
            Some(other) => Err(type_error(format!("config.{key} is {}; expected true or false", other.kind()))),
        }
    }

    fn text(&self, key: &str) -> Result<Option<&str>> {
        match self.present(key) {
            None => Ok(None),
            Some(Json::String(s)) => Ok(Some(s)),
            Some(other) => Err(type_error(format!("config.{key} is {}; expected a string", other.kind()))),
        }
    }

    /// A RangeError unless `key` is absent or one of `allowed` (what the package computes).
    fn only(&self, key: &str, allowed: &[&str]) -> Result<()> {
        match self.text(key)? {
            Some(s) if !allowed.contains(&s) => Err(AttentionError::range_error(format!(
                "config.{key} is '{s}'; only {} is supported",
                allowed.iter().map(|a| format!("'{a}'")).collect::<Vec<_>>().join(" or ")
            ))),
            _ => Ok(()),
        }
    }
}

impl PretrainedConfig {
    /// Checks a parsed config.json (see the module docs for the fields and defaults).
    pub fn from_json(config: &Json) -> Result<Self> {
        if !matches!(config, Json::Object(_)) {
            return Err(type_error(format!("config is {}; expected the object of a config.json", config.kind())));
        }
        let model_type = match config.get("model_type") {
            Some(Json::String(s)) => s.as_str(),
            Some(other) => return Err(type_error(format!("config.model_type is {}; expected 'gpt2' or 'llama'", other.kind()))),
            None => return Err(type_error("config.model_type is missing; expected 'gpt2' or 'llama'".to_string())),
        };
        let parsed = match model_type {
            "gpt2" => Self::gpt2(&Fields(config, "gpt2"))?,
            "llama" => Self::llama(&Fields(config, "llama"))?,
            other => {
                return Err(AttentionError::range_error(format!(
                    "config.model_type is '{other}'; expected 'gpt2' (GPT2LMHeadModel) or 'llama' (LlamaForCausalLM, as SmolLM2, TinyLlama, Llama 3.2)"
                )))
            }
        };
        parsed.check()?;
        Ok(parsed)
    }

    fn gpt2(f: &Fields) -> Result<Self> {
        let (c, h) = (f.count("n_embd", None)?, f.count("n_head", None)?);
        f.only("activation_function", &["gelu_new", "gelu_pytorch_tanh"])?;
        if f.flag("scale_attn_by_inverse_layer_idx", false)? {
            return Err(AttentionError::range_error("config.scale_attn_by_inverse_layer_idx is true; only GPT-2's own 1/√d scaling is supported".to_string()));
        }
        if !f.flag("scale_attn_weights", true)? {
            return Err(AttentionError::range_error("config.scale_attn_weights is false; only GPT-2's own 1/√d scaling is supported".to_string()));
        }
        if f.flag("add_cross_attention", false)? {
            return Err(AttentionError::range_error("config.add_cross_attention is true; only decoder-only GPT-2 is supported".to_string()));
        }
        Ok(Self {
            architecture: Architecture::Gpt2,
            vocab_size: f.count("vocab_size", None)?,
            hidden_size: c,
            num_layers: f.count("n_layer", None)?,
            num_heads: h,
            num_kv_heads: h,
            head_dim: c / h,
            intermediate_size: f.count("n_inner", Some(4 * c))?,
            max_positions: f.count("n_positions", None)?,
            norm_eps: f.positive("layer_norm_epsilon", 1e-5)?,
            rope_theta: None,
            attention_bias: true,
            mlp_bias: true,
            tie_word_embeddings: f.flag("tie_word_embeddings", true)?,
        })
    }

    fn llama(f: &Fields) -> Result<Self> {
        let (c, h) = (f.count("hidden_size", None)?, f.count("num_attention_heads", None)?);
        f.only("hidden_act", &["silu"])?;
        if f.flag("rope_interleaved", false)? {
            return Err(AttentionError::range_error("config.rope_interleaved is true; only the rotate-half RoPE layout (Llama's) is supported".to_string()));
        }
        // the RoPE type: rope_scaling (older configs) or rope_parameters (transformers v5)
        for key in ["rope_scaling", "rope_parameters"] {
            match f.present(key) {
                None => {}
                Some(Json::Object(_)) => {
                    let inner = f.present(key).expect("present");
                    for field in ["rope_type", "type"] {
                        match inner.get(field) {
                            None | Some(Json::Null) => {}
                            Some(Json::String(s)) if s == "default" => {}
                            Some(Json::String(s)) => {
                                return Err(AttentionError::range_error(format!("config.{key}.{field} is '{s}'; only the default RoPE is supported")))
                            }
                            Some(other) => return Err(type_error(format!("config.{key}.{field} is {}; expected a string", other.kind()))),
                        }
                    }
                }
                Some(other) => return Err(type_error(format!("config.{key} is {}; expected an object or null", other.kind()))),
            }
        }
        let theta = match f.present("rope_parameters").and_then(|p| p.get("rope_theta")) {
            Some(Json::Number(v)) if v.is_finite() && *v > 0.0 => *v,
            Some(other) => {
                return Err(AttentionError::range_error(format!(
                    "config.rope_parameters.rope_theta is {}; expected a finite number > 0",
                    match other {
                        Json::Number(v) => number_text(*v),
                        _ => other.kind().to_string(),
                    }
                )))
            }
            None => f.positive("rope_theta", 10000.0)?,
        };
        Ok(Self {
            architecture: Architecture::Llama,
            vocab_size: f.count("vocab_size", None)?,
            hidden_size: c,
            num_layers: f.count("num_hidden_layers", None)?,
            num_heads: h,
            num_kv_heads: f.count("num_key_value_heads", Some(h))?,
            head_dim: f.count("head_dim", Some(c / h.max(1)).filter(|&d| d > 0))?,
            intermediate_size: f.count("intermediate_size", None)?,
            max_positions: f.count("max_position_embeddings", Some(2048))?,
            norm_eps: f.positive("rms_norm_eps", 1e-6)?,
            rope_theta: Some(theta),
            attention_bias: f.flag("attention_bias", false)?,
            mlp_bias: f.flag("mlp_bias", false)?,
            tie_word_embeddings: f.flag("tie_word_embeddings", false)?,
        })
    }

    /// The shapes the attention layer can take.
    fn check(&self) -> Result<()> {
        let (c, h, kv, d) = (self.hidden_size, self.num_heads, self.num_kv_heads, self.head_dim);
        let names = match self.architecture {
            Architecture::Gpt2 => ("n_embd", "n_head"),
            Architecture::Llama => ("hidden_size", "num_attention_heads"),
        };
        if !c.is_multiple_of(h) || d * h != c {
            return Err(AttentionError::range_error(format!(
                "config.{} = {c} with config.{} = {h} and head_dim = {d}: the package's attention needs head_dim · heads = hidden size",
                names.0, names.1
            )));
        }
        if !h.is_multiple_of(kv) {
            return Err(AttentionError::range_error(format!(
                "config.num_key_value_heads = {kv} does not divide config.num_attention_heads = {h}: each key/value head serves h / h_kv query heads"
            )));
        }
        if self.rope_theta.is_some() && !d.is_multiple_of(2) {
            return Err(AttentionError::range_error(format!("head_dim = {d} is odd; RoPE rotates pairs of columns")));
        }
        if self.vocab_size < 2 {
            return Err(AttentionError::range_error(format!("config.vocab_size is {}; expected an integer ≥ 2", self.vocab_size)));
        }
        if self.max_positions < 2 {
            let key = if self.architecture == Architecture::Gpt2 { "n_positions" } else { "max_position_embeddings" };
            return Err(AttentionError::range_error(format!(
                "config.{key} is {}; expected an integer ≥ 2 (the model predicts token t + 1 from tokens 0 … t)",
                self.max_positions
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::json::parse;
    use super::*;

    fn config(text: &str) -> Result<PretrainedConfig> {
        PretrainedConfig::from_json(&parse(text).unwrap())
    }

    const GPT2: &str = r#"{"model_type":"gpt2","vocab_size":50257,"n_embd":768,"n_layer":12,"n_head":12,"n_positions":1024,"n_inner":null,"layer_norm_epsilon":1e-05,"activation_function":"gelu_new"}"#;
    const LLAMA: &str = r#"{"model_type":"llama","vocab_size":49152,"hidden_size":576,"intermediate_size":1536,"num_hidden_layers":30,"num_attention_heads":9,"num_key_value_heads":3,"max_position_embeddings":8192,"rms_norm_eps":1e-05,"rope_theta":100000,"rope_scaling":null,"tie_word_embeddings":true,"hidden_act":"silu"}"#;

    #[test]
    fn reads_gpt2_and_llama_with_their_defaults() {
        let g = config(GPT2).unwrap();
        assert_eq!((g.architecture, g.hidden_size, g.head_dim, g.intermediate_size, g.norm_eps), (Architecture::Gpt2, 768, 64, 3072, 1e-5));
        assert!(g.tie_word_embeddings && g.attention_bias && g.rope_theta.is_none());
        let l = config(LLAMA).unwrap(); // SmolLM2-135M's shape
        assert_eq!((l.num_heads, l.num_kv_heads, l.head_dim, l.rope_theta, l.tie_word_embeddings), (9, 3, 64, Some(100000.0), true));
        assert!(!l.attention_bias && !l.mlp_bias);
        let v5 = config(&LLAMA.replace(r#""rope_theta":100000,"rope_scaling":null"#, r#""rope_parameters":{"rope_type":"default","rope_theta":500000.0}"#)).unwrap();
        assert_eq!(v5.rope_theta, Some(500000.0));
        let bare = config(r#"{"model_type":"llama","vocab_size":10,"hidden_size":8,"intermediate_size":4,"num_hidden_layers":1,"num_attention_heads":2}"#).unwrap();
        assert_eq!((bare.num_kv_heads, bare.head_dim, bare.max_positions, bare.norm_eps, bare.rope_theta, bare.tie_word_embeddings), (2, 4, 2048, 1e-6, Some(10000.0), false));
    }

    #[test]
    fn refuses_by_name() {
        let cases: [(String, &str); 14] = [
            (GPT2.replace(r#""n_embd":768,"#, ""), "TypeError: config.n_embd is missing; a gpt2 config.json has it"),
            (GPT2.replace("gpt2", "bert"), "RangeError: config.model_type is 'bert'; expected 'gpt2'"),
            (r#"{"n_embd":1}"#.into(), "TypeError: config.model_type is missing"),
            ("[1]".into(), "TypeError: config is an array"),
            (GPT2.replace(r#""n_head":12"#, r#""n_head":"12""#), "TypeError: config.n_head is a string; expected an integer"),
            (GPT2.replace(r#""n_head":12"#, r#""n_head":7"#), "RangeError: config.n_embd = 768 with config.n_head = 7"),
            (GPT2.replace("gelu_new", "relu"), "RangeError: config.activation_function is 'relu'; only 'gelu_new' or 'gelu_pytorch_tanh' is supported"),
            (GPT2.replace(r#""n_inner":null"#, r#""scale_attn_by_inverse_layer_idx":true"#), "RangeError: config.scale_attn_by_inverse_layer_idx is true"),
            (LLAMA.replace(r#""rope_scaling":null"#, r#""rope_scaling":{"rope_type":"llama3","factor":32}"#), "RangeError: config.rope_scaling.rope_type is 'llama3'; only the default RoPE is supported"),
            (LLAMA.replace(r#""rope_theta":100000"#, r#""rope_parameters":{"rope_type":"yarn"}"#), "RangeError: config.rope_parameters.rope_type is 'yarn'"),
            (LLAMA.replace(r#""num_key_value_heads":3"#, r#""num_key_value_heads":2"#), "RangeError: config.num_key_value_heads = 2 does not divide config.num_attention_heads = 9"),
            (LLAMA.replace(r#""rms_norm_eps":1e-05"#, r#""rms_norm_eps":-1"#), "RangeError: config.rms_norm_eps is -1; expected a finite number > 0"),
            // found by the safetensors fuzzer: one position was refused later, under the toy model's option name
            (GPT2.replace(r#""n_positions":1024"#, r#""n_positions":1"#), "RangeError: config.n_positions is 1; expected an integer ≥ 2"),
            (LLAMA.replace(r#""max_position_embeddings":8192"#, r#""max_position_embeddings":1"#), "RangeError: config.max_position_embeddings is 1; expected an integer ≥ 2"),
        ];
        for (text, want) in cases {
            let got = config(&text).unwrap_err().to_string();
            assert!(got.starts_with(want), "{got}\n  expected to start with\n{want}");
        }
        let interleaved = config(&LLAMA.replace(r#""hidden_act":"silu""#, r#""hidden_act":"silu","rope_interleaved":true"#)).unwrap_err().to_string();
        assert_eq!(interleaved, "RangeError: config.rope_interleaved is true; only the rotate-half RoPE layout (Llama's) is supported");
        assert!(config(&LLAMA.replace(r#""hidden_act":"silu""#, r#""hidden_act":"silu","rope_interleaved":false"#)).is_ok());
        let odd = config(&LLAMA.replace(r#""max_position_embeddings""#, r#""head_dim":32,"max_position_embeddings""#)).unwrap_err().to_string();
        assert!(odd.contains("head_dim = 32: the package's attention needs head_dim · heads = hidden size"), "{odd}");
    }
}
