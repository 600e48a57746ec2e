//! A GPT-2 or Llama checkpoint loaded as the package's one [`Transformer`] (its config gains the
//! checkpoint's parts; the forward, backward, KV-cache decoding and everything else are the model's
//! own), written once over the precision `F`:
//!
//! ```text
//! x = W_E[token] (+ W_pos[t] for GPT-2: positions 'learned')                 hidden[0]
//! per block l:  x = x + attention_l(norm1(x))      a MultiHeadAttention: causal, RoPE (Llama, base
//!                                                  rope_theta) and h_kv key/value heads; 1/√d
//!               x = x + MLP(norm2(x))              GPT-2: gelu_new(x·W_in + b_in)·W_out + b_out
//!                                                  Llama: (SiLU(x·W_gate) ⊙ x·W_up)·W_down (+ biases)
//!               hidden[l + 1] = x for l < L − 1
//! y = norm_f(x)                                                              hidden[L]
//! logits = y·W_U,  W_U = lm_head.weightᵀ, or W_Eᵀ when tied (never copied)
//! ```
//! norm is LayerNorm with `layer_norm_epsilon` (GPT-2) or RMSNorm with `rms_norm_eps` (Llama).
//!
//! Loading maps the file's tensors by name and checks each against the shape the config implies;
//! a missing or extra tensor is a TypeError naming it (and the shape expected), a misshapen one a
//! RangeError naming both shapes, a non-finite value a RangeError naming the tensor and entry.
//! GPT-2's Conv1D weights are `[in, out]` already (c_attn's columns split into W_Q, W_K, W_V);
//! Llama's Linear weights (and lm_head) are `[out, in]` and are transposed as they are read.

use super::config::{Architecture, PretrainedConfig};
use super::json::Json;
use super::safetensors::{self, shape_text, Bytes, SafeTensors, TensorInfo};
use crate::error::{integer_text, AttentionError, Result};
use crate::layer::LayerKernel;
use crate::model::{MlpKind, ModelConfig, NormKind, Param, Positions, Transformer};
use crate::real::Real;

/// The tensors a config implies, `(name, shape)`, in file order: GPT-2's without the `transformer.`
/// prefix, and without `lm_head.weight` (optional when tied, `[V, C]` otherwise).
pub fn expected(c: &PretrainedConfig) -> Vec<(String, Vec<usize>)> {
    let (v, hid, ff, l) = (c.vocab_size, c.hidden_size, c.intermediate_size, c.num_layers);
    let mut list = Vec::new();
    let mut add = |name: String, shape: Vec<usize>| list.push((name, shape));
    match c.architecture {
        Architecture::Gpt2 => {
            add("wte.weight".into(), vec![v, hid]);
            add("wpe.weight".into(), vec![c.max_positions, hid]);
            for i in 0..l {
                let p = format!("h.{i}.");
                for norm in ["ln_1", "ln_2"] {
                    add(format!("{p}{norm}.weight"), vec![hid]);
                    add(format!("{p}{norm}.bias"), vec![hid]);
                }
                add(format!("{p}attn.c_attn.weight"), vec![hid, 3 * hid]);
                add(format!("{p}attn.c_attn.bias"), vec![3 * hid]);
                add(format!("{p}attn.c_proj.weight"), vec![hid, hid]);
                add(format!("{p}attn.c_proj.bias"), vec![hid]);
                add(format!("{p}mlp.c_fc.weight"), vec![hid, ff]);
                add(format!("{p}mlp.c_fc.bias"), vec![ff]);
                add(format!("{p}mlp.c_proj.weight"), vec![ff, hid]);
                add(format!("{p}mlp.c_proj.bias"), vec![hid]);
            }
            add("ln_f.weight".into(), vec![hid]);
            add("ln_f.bias".into(), vec![hid]);
        }
        Architecture::Llama => {
            let (q, kv) = (c.num_heads * c.head_dim, c.num_kv_heads * c.head_dim);
            add("model.embed_tokens.weight".into(), vec![v, hid]);
            for i in 0..l {
                let p = format!("model.layers.{i}.");
                add(format!("{p}input_layernorm.weight"), vec![hid]);
                add(format!("{p}post_attention_layernorm.weight"), vec![hid]);
                for (name, out, inp) in [("q", q, hid), ("k", kv, hid), ("v", kv, hid), ("o", hid, q)] {
                    add(format!("{p}self_attn.{name}_proj.weight"), vec![out, inp]);
                    if c.attention_bias {
                        add(format!("{p}self_attn.{name}_proj.bias"), vec![out]);
                    }
                }
                for (name, out, inp) in [("gate", ff, hid), ("up", ff, hid), ("down", hid, ff)] {
                    add(format!("{p}mlp.{name}_proj.weight"), vec![out, inp]);
                    if c.mlp_bias {
                        add(format!("{p}mlp.{name}_proj.bias"), vec![out]);
                    }
                }
            }
            add("model.norm.weight".into(), vec![hid]);
        }
    }
    list
}

/// What a wasm32 module can address in all: 4 GiB.
pub const WASM_MEMORY_BYTES: u128 = 1 << 32;

/// A RangeError, before anything is allocated, when the loaded model would not fit in wasm32's
/// memory: its parameters in `F` and the attention layers' own copy of their weights (in `F`: f32
/// layers keep only their packed panels). The file is read a chunk at a time and never held.
/// Returns the number of parameters.
pub fn check_memory<F: Real>(config: &PretrainedConfig) -> Result<u128> {
    let shapes = expected(config);
    let count = |keep: &dyn Fn(&str) -> bool| -> u128 { shapes.iter().filter(|(n, _)| keep(n)).map(|(_, s)| s.iter().map(|&d| d as u128).product::<u128>()).sum() };
    let head = if config.tie_word_embeddings { 0 } else { config.vocab_size as u128 * config.hidden_size as u128 };
    let parameters = count(&|_| true) + head;
    let attention = count(&|n| n.contains("attn.c_attn.weight") || n.contains("attn.c_proj.weight") || n.contains("self_attn."));
    let width = std::mem::size_of::<F>() as u128;
    let needed = (parameters + attention) * width;
    if needed > WASM_MEMORY_BYTES {
        let mb = |b: u128| integer_text(b.div_ceil(1 << 20));
        return Err(AttentionError::range_error(format!(
            "this checkpoint needs about {} MB of memory ({} parameters as {} and the attention layers' copies), more than the {} MB a wasm32 module can address; load a smaller model{}",
            mb(needed),
            integer_text(parameters),
            if width == 4 { "f32" } else { "f64" },
            mb(WASM_MEMORY_BYTES),
            if width == 8 { " or use dtype 'float32'" } else { "" }
        )));
    }
    Ok(parameters)
}

/// The file's tensors by the names the loader asks for (GPT-2's `transformer.` prefix removed).
struct Source<'a, B: Bytes + ?Sized> {
    file: SafeTensors<'a, B>,
    prefix: &'static str,
}

impl<B: Bytes + ?Sized> Source<'_, B> {
    fn info(&self, name: &str) -> &TensorInfo {
        let full = if name == "lm_head.weight" { name.to_string() } else { format!("{}{name}", self.prefix) };
        self.file.get(&full).expect("checked by check_tensors")
    }

    fn finite<F: LayerKernel>(info: &TensorInfo, values: Vec<F>) -> Result<Vec<F>> {
        if F::all_finite(&values) {
            return Ok(values); // the SIMD scan; the first entry found only for the message
        }
        if let Some(i) = values.iter().position(|x| !x.is_finite()) {
            return Err(AttentionError::range_error(format!(
                "weights: tensor \"{}\" entry {i} is {}; a checkpoint's weights must be finite",
                info.name,
                crate::limits::non_finite_name(values[i].to_f64())
            )));
        }
        Ok(values)
    }

    fn read<F: LayerKernel>(&self, name: &str) -> Result<Vec<F>> {
        let info = self.info(name);
        Self::finite(info, self.file.read(info)?)
    }

    /// Columns `from … to` of a 2-D tensor.
    fn read_columns<F: LayerKernel>(&self, name: &str, from: usize, to: usize) -> Result<Vec<F>> {
        let info = self.info(name);
        Self::finite(info, self.file.read_columns(info, from, to)?)
    }

    /// A PyTorch Linear weight `[out, in]` as `[in, out]`.
    fn read_t<F: LayerKernel>(&self, name: &str) -> Result<Vec<F>> {
        let info = self.info(name);
        Self::finite(info, self.file.read_transposed(info)?)
    }
}

/// Loads `weights` (the bytes of a model.safetensors, read a tensor at a time) as `config` (a
/// parsed config.json) says: a [`Transformer`] whose config has the checkpoint's parts (see the
/// module docs) and whose parameters are the file's tensors, oriented `[in, out]`.
pub fn load<F: LayerKernel>(config: &Json, weights: &(impl Bytes + ?Sized)) -> Result<Transformer<F>> {
    let config = PretrainedConfig::from_json(config)?;
    let parameters = check_memory::<F>(&config)?;
    let file = safetensors::parse(weights)?;
    let source = check_tensors(&config, file)?;
    // the heap grown once for every parameter (see crate::heap::reserve), not once per tensor
    crate::heap::reserve(usize::try_from(parameters * std::mem::size_of::<F>() as u128).unwrap_or(usize::MAX));
    let gpt2 = config.architecture == Architecture::Gpt2;
    let (c, v, f) = (config.hidden_size, config.vocab_size, config.intermediate_size);
    let model = ModelConfig {
        positions: if gpt2 { Positions::Learned } else { Positions::Rope },
        mlp: true,
        layer_norm: true,
        bias: gpt2 || config.attention_bias,
        norm: if gpt2 { NormKind::Layer } else { NormKind::Rms },
        norm_eps: config.norm_eps,
        mlp_kind: if gpt2 { MlpKind::Gelu } else { MlpKind::Gated },
        mlp_width: f,
        mlp_bias: gpt2 || config.mlp_bias,
        kv_heads: config.num_kv_heads,
        rope_base: config.rope_theta.unwrap_or(10000.0),
        tied: source.file.get("lm_head.weight").is_none(),
        ..ModelConfig::new(v, config.max_positions, c, config.num_heads, config.num_layers)
    };
    let mut params: Vec<Param<F>> = Vec::new();
    let mut add = |layer: Option<usize>, name: &'static str, shape: Vec<usize>, data: Vec<F>| params.push(Param { layer, name, shape, data });
    if gpt2 {
        add(None, "W_E", vec![v, c], source.read("wte.weight")?);
        add(None, "W_pos", vec![config.max_positions, c], source.read("wpe.weight")?);
    } else {
        add(None, "W_E", vec![v, c], source.read("model.embed_tokens.weight")?);
    }
    for l in 0..config.num_layers {
        let at = Some(l);
        if gpt2 {
            let p = format!("h.{l}.");
            let qkv_b: Vec<F> = source.read(&format!("{p}attn.c_attn.bias"))?;
            for (i, name) in ["W_Q", "W_K", "W_V"].into_iter().enumerate() {
                // columns i·C … (i+1)·C of c_attn [C, 3C]
                add(at, name, vec![c, c], source.read_columns(&format!("{p}attn.c_attn.weight"), i * c, (i + 1) * c)?);
            }
            add(at, "W_O", vec![c, c], source.read(&format!("{p}attn.c_proj.weight"))?);
            for (i, name) in ["b_Q", "b_K", "b_V"].into_iter().enumerate() {
                add(at, name, vec![c], qkv_b[i * c..(i + 1) * c].to_vec());
            }
            add(at, "b_O", vec![c], source.read(&format!("{p}attn.c_proj.bias"))?);
            add(at, "ln1_w", vec![c], source.read(&format!("{p}ln_1.weight"))?);
            add(at, "ln1_b", vec![c], source.read(&format!("{p}ln_1.bias"))?);
            add(at, "ln2_w", vec![c], source.read(&format!("{p}ln_2.weight"))?);
            add(at, "ln2_b", vec![c], source.read(&format!("{p}ln_2.bias"))?);
            add(at, "W_in", vec![c, f], source.read(&format!("{p}mlp.c_fc.weight"))?);
            add(at, "b_in", vec![f], source.read(&format!("{p}mlp.c_fc.bias"))?);
            add(at, "W_out", vec![f, c], source.read(&format!("{p}mlp.c_proj.weight"))?);
            add(at, "b_out", vec![c], source.read(&format!("{p}mlp.c_proj.bias"))?);
        } else {
            let p = format!("model.layers.{l}.");
            let (q, kv) = (config.num_heads * config.head_dim, config.num_kv_heads * config.head_dim);
            for (name, n, cols) in [("W_Q", "q", q), ("W_K", "k", kv), ("W_V", "v", kv)] {
                add(at, name, vec![c, cols], source.read_t(&format!("{p}self_attn.{n}_proj.weight"))?);
            }
            add(at, "W_O", vec![q, c], source.read_t(&format!("{p}self_attn.o_proj.weight"))?);
            if config.attention_bias {
                for (name, n, len) in [("b_Q", "q", q), ("b_K", "k", kv), ("b_V", "v", kv), ("b_O", "o", c)] {
                    add(at, name, vec![len], source.read(&format!("{p}self_attn.{n}_proj.bias"))?);
                }
            }
            add(at, "ln1_w", vec![c], source.read(&format!("{p}input_layernorm.weight"))?);
            add(at, "ln2_w", vec![c], source.read(&format!("{p}post_attention_layernorm.weight"))?);
            for (name, bias, n, rows, cols) in [("W_gate", "b_gate", "gate", c, f), ("W_up", "b_up", "up", c, f), ("W_down", "b_down", "down", f, c)] {
                add(at, name, vec![rows, cols], source.read_t(&format!("{p}mlp.{n}_proj.weight"))?);
                if config.mlp_bias {
                    add(at, bias, vec![cols], source.read(&format!("{p}mlp.{n}_proj.bias"))?);
                }
            }
        }
    }
    if gpt2 {
        add(None, "ln_final_w", vec![c], source.read("ln_f.weight")?);
        add(None, "ln_final_b", vec![c], source.read("ln_f.bias")?);
    } else {
        add(None, "ln_final_w", vec![c], source.read("model.norm.weight")?);
    }
    if !model.tied {
        // lm_head.weight [V, C] as W_U [C, V]
        add(None, "W_U", vec![c, v], source.read_t("lm_head.weight")?);
    }
    Transformer::from_params(model, params)
}

/// Every tensor the config implies is in the file with its shape, and nothing else is (GPT-2's
/// `attn.bias` / `attn.masked_bias` and Llama's `rotary_emb.inv_freq` buffers aside; in a GPT-2 file
/// with the `transformer.` prefix, every other key has it); `lm_head.weight` is optional when tied.
fn check_tensors<'a, B: Bytes + ?Sized>(config: &PretrainedConfig, file: SafeTensors<'a, B>) -> Result<Source<'a, B>> {
    let gpt2 = config.architecture == Architecture::Gpt2;
    let prefix = if gpt2 && file.get("transformer.wte.weight").is_some() { "transformer." } else { "" };
    let kind = if gpt2 { "gpt2" } else { "llama" };
    let mut wanted = expected(config);
    let head = vec![config.vocab_size, config.hidden_size];
    for (name, shape) in &wanted {
        let full = format!("{prefix}{name}");
        match file.get(&full) {
            None => {
                return Err(AttentionError::type_error(format!(
                    "weights has no tensor \"{full}\" (expected shape {}), which this {kind} config needs",
                    shape_text(shape)
                )))
            }
            Some(t) if &t.shape != shape => {
                return Err(AttentionError::range_error(format!("weights: tensor \"{full}\" has shape {}; expected {}", t.shape_text(), shape_text(shape))))
            }
            Some(_) => {}
        }
    }
    match file.get("lm_head.weight") {
        Some(t) if t.shape != head => {
            return Err(AttentionError::range_error(format!("weights: tensor \"lm_head.weight\" has shape {}; expected {}", t.shape_text(), shape_text(&head))))
        }
        None if !config.tie_word_embeddings => {
            return Err(AttentionError::type_error(format!(
                "weights has no tensor \"lm_head.weight\" (expected shape {}), and config.tie_word_embeddings is false",
                shape_text(&head)
            )))
        }
        _ => {}
    }
    // buffers older files hold and transformers skips on load (`_keys_to_ignore_on_load_*`):
    // GPT-2's causal mask and masked_bias, Llama's rotary_emb.inv_freq (recomputed from rope_theta)
    let buffer = |name: &str| match config.architecture {
        Architecture::Gpt2 => name.starts_with("h.") && (name.ends_with(".attn.bias") || name.ends_with(".attn.masked_bias")),
        Architecture::Llama => name.starts_with("model.layers.") && name.ends_with(".self_attn.rotary_emb.inv_freq"),
    };
    for t in &file.tensors {
        let known = if t.name == "lm_head.weight" {
            true
        } else {
            t.name.strip_prefix(prefix).is_some_and(|name| buffer(name) || wanted.iter().any(|(n, _)| n == name))
        };
        if !known {
            return Err(AttentionError::type_error(format!(
                "weights has a tensor \"{}\" that this {kind} config has no place for (numLayers = {}; is the config the checkpoint's own?)",
                t.name, config.num_layers
            )));
        }
    }
    wanted.push(("lm_head.weight".into(), head));
    for (name, _) in &wanted {
        if let Some(t) = file.get(&if name == "lm_head.weight" { name.clone() } else { format!("{prefix}{name}") }) {
            SafeTensors::<B>::check_float(t)?;
        }
    }
    Ok(Source { file, prefix })
}

/// The index of the largest entry (the first on ties).
pub fn argmax<F: Real>(row: &[F]) -> u32 {
    (1..row.len()).fold(0, |b, j| if row[j] > row[b] { j } else { b }) as u32
}
