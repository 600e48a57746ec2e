//! A GPT-2 or Llama checkpoint loaded onto the package's parts, and its forward, written once over
//! the precision `F` (f64: exact sums in order; f32: the SIMD kernels):
//!
//! ```text
//! x = W_E[token] (+ W_pos[t] for GPT-2)                                  hidden[0]
//! per block l:  x = x + attention_l(norm1(x))      a MultiHeadAttention: causal, RoPE (Llama, base
//!                                                  rope_theta) and h_kv key/value heads; 1/√d
//!               x = x + MLP(norm2(x))              GPT-2: gelu_new(x·W_in + b_in)·W_out + b_out
//!                                                  Llama: (SiLU(x·W_gate) ⊙ x·W_up)·W_down (+ biases)
//!               hidden[l + 1] = x for l < L − 1
//! y = norm_f(x)                                                          hidden[L]
//! logits = y·W_Uᵀ,  W_U = lm_head.weight [V, C], or W_E when tied (never copied)
//! ```
//! norm is LayerNorm with `layer_norm_epsilon` (GPT-2) or RMSNorm with `rms_norm_eps` (Llama).
//! `hidden` follows transformers' `output_hidden_states`: the embeddings, the residual stream after
//! each block but the last, and the final norm's output (L + 1 entries).
//!
//! Loading maps the file's tensors by name and checks each against the shape the config implies;
//! a missing or extra tensor is a TypeError naming it (and the shape expected), a misshapen one a
//! RangeError naming both shapes, a non-finite value a RangeError naming the tensor and entry.
//! GPT-2's Conv1D weights are `[in, out]` already (c_attn's columns split into W_Q, W_K, W_V);
//! Llama's Linear weights are `[out, in]` and are transposed as they are read.

use super::config::{Architecture, PretrainedConfig};
use super::json::Json;
use super::norm::{gated, rms_norm};
use super::safetensors::{self, shape_text, SafeTensors, TensorInfo};
use crate::engine::{Batch, Rope};
use crate::error::{integer_text, AttentionError, Result};
use crate::layer::{BatchOutput, Biases, ForwardOptions, KvCache, LayerKernel, MultiHeadAttention, Weights};
use crate::limits::check_working_set;
use crate::mask::Mask;
use crate::matrix::Matrix;
use crate::model::{mean_loss, ops, Tokens};
use crate::real::Real;

/// A block's or the final normalisation.
#[derive(Clone, Debug)]
pub enum Norm<F> {
    /// GPT-2's LayerNorm: gain and bias.
    Layer { w: Vec<F>, b: Vec<F> },
    /// Llama's RMSNorm: gain only.
    Rms { w: Vec<F> },
}

/// A block's MLP, weights `[in, out]`.
#[derive(Clone, Debug)]
pub enum Mlp<F> {
    Gelu { w_in: Vec<F>, b_in: Vec<F>, w_out: Vec<F>, b_out: Vec<F> },
    Gated { w_gate: Vec<F>, w_up: Vec<F>, w_down: Vec<F>, biases: Option<[Vec<F>; 3]> },
}

/// One decoder block.
#[derive(Clone, Debug)]
pub struct Block<F> {
    pub norm1: Norm<F>,
    pub attention: MultiHeadAttention,
    pub norm2: Norm<F>,
    pub mlp: Mlp<F>,
}

/// A loaded checkpoint.
#[derive(Clone, Debug)]
pub struct Pretrained<F> {
    pub config: PretrainedConfig,
    /// W_E, `[V, C]`.
    pub embed: Vec<F>,
    /// GPT-2's W_pos, `[max_positions, C]`.
    pub positions: Option<Vec<F>>,
    pub blocks: Vec<Block<F>>,
    pub final_norm: Norm<F>,
    /// `lm_head.weight` `[V, C]`, or `None`: tied to W_E.
    pub unembed: Option<Vec<F>>,
}

/// What [`Pretrained::forward`] returns.
#[derive(Clone, Debug)]
pub struct PretrainedOutput<F> {
    /// `[B, T, V]`.
    pub logits: Vec<F>,
    /// Per layer `[B, h, T, T]`, with `need_weights`.
    pub weights: Option<Vec<Vec<F>>>,
    /// L + 1 entries `[B, T, C]`, with `need_hidden`.
    pub hidden: Option<Vec<Vec<F>>>,
}

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
/// memory beside the file's bytes: its parameters in `F`, the attention layers' own f64 copy of
/// their weights (and, in f32, their packed panels), and the file itself.
pub fn check_memory<F: Real>(config: &PretrainedConfig, file_bytes: usize) -> Result<()> {
    let shapes = expected(config);
    let count = |keep: &dyn Fn(&str) -> bool| -> u128 { shapes.iter().filter(|(n, _)| keep(n)).map(|(_, s)| s.iter().map(|&d| d as u128).product::<u128>()).sum() };
    let head = if config.tie_word_embeddings { 0 } else { config.vocab_size as u128 * config.hidden_size as u128 };
    let parameters = count(&|_| true) + head;
    let attention = count(&|n| n.contains("attn.c_attn.weight") || n.contains("attn.c_proj.weight") || n.contains("self_attn."));
    let width = std::mem::size_of::<F>() as u128;
    let needed = parameters * width + attention * (8 + if width == 4 { 4 } else { 0 }) + file_bytes as u128;
    if needed > WASM_MEMORY_BYTES {
        let mb = |b: u128| integer_text(b.div_ceil(1 << 20));
        return Err(AttentionError::range_error(format!(
            "this checkpoint needs about {} MB of memory ({} parameters as {}, the attention layers' copies and the file's {} MB), more than the {} MB a wasm32 module can address; load a smaller model{}",
            mb(needed),
            integer_text(parameters),
            if width == 4 { "f32" } else { "f64" },
            mb(file_bytes as u128),
            mb(WASM_MEMORY_BYTES),
            if width == 8 { " or use dtype 'float32'" } else { "" }
        )));
    }
    Ok(())
}

/// The file's tensors by the names the loader asks for (GPT-2's `transformer.` prefix removed).
struct Source<'a> {
    file: SafeTensors<'a>,
    prefix: &'static str,
}

impl Source<'_> {
    fn info(&self, name: &str) -> &TensorInfo {
        let full = if name == "lm_head.weight" { name.to_string() } else { format!("{}{name}", self.prefix) };
        self.file.get(&full).expect("checked by Pretrained::check_tensors")
    }

    fn finite<F: Real>(info: &TensorInfo, values: Vec<F>) -> Result<Vec<F>> {
        if let Some(i) = values.iter().position(|x| !x.is_finite()) {
            return Err(AttentionError::range_error(format!(
                "weights: tensor \"{}\" entry {i} is {}; a checkpoint's weights must be finite",
                info.name,
                crate::limits::non_finite_name(values[i].to_f64())
            )));
        }
        Ok(values)
    }

    fn read<F: Real>(&self, name: &str) -> Result<Vec<F>> {
        let info = self.info(name);
        Self::finite(info, self.file.read(info)?)
    }

    /// A PyTorch Linear weight `[out, in]` as `[in, out]`.
    fn read_t<F: Real>(&self, name: &str) -> Result<Vec<F>> {
        let info = self.info(name);
        Self::finite(info, self.file.read_transposed(info)?)
    }
}

/// Columns `from … to` of a row-major `rows × cols` matrix.
fn columns(data: &[f64], cols: usize, from: usize, to: usize) -> Vec<f64> {
    data.chunks_exact(cols).flat_map(|row| row[from..to].iter().copied()).collect()
}

impl<F: LayerKernel> Pretrained<F> {
    /// Loads `weights` (the bytes of a model.safetensors) as `config` (a parsed config.json) says.
    pub fn load(config: &Json, weights: &[u8]) -> Result<Self> {
        let config = PretrainedConfig::from_json(config)?;
        check_memory::<F>(&config, weights.len())?;
        let file = safetensors::parse(weights)?;
        let source = Self::check_tensors(&config, file)?;
        let (c, ff) = (config.hidden_size, config.intermediate_size);
        let mut blocks = Vec::with_capacity(config.num_layers);
        for l in 0..config.num_layers {
            let block = match config.architecture {
                Architecture::Gpt2 => {
                    let p = format!("h.{l}.");
                    let norm = |n: &str| -> Result<Norm<F>> { Ok(Norm::Layer { w: source.read(&format!("{p}{n}.weight"))?, b: source.read(&format!("{p}{n}.bias"))? }) };
                    let qkv: Vec<f64> = source.read(&format!("{p}attn.c_attn.weight"))?;
                    let qkv_b: Vec<f64> = source.read(&format!("{p}attn.c_attn.bias"))?;
                    let part = |i: usize| Matrix::new(c, c, columns(&qkv, 3 * c, i * c, (i + 1) * c));
                    let weights = Weights {
                        w_q: part(0)?,
                        w_k: part(1)?,
                        w_v: part(2)?,
                        w_o: Matrix::new(c, c, source.read(&format!("{p}attn.c_proj.weight"))?)?,
                        biases: Some(Biases {
                            b_q: qkv_b[..c].to_vec(),
                            b_k: qkv_b[c..2 * c].to_vec(),
                            b_v: qkv_b[2 * c..].to_vec(),
                            b_o: source.read(&format!("{p}attn.c_proj.bias"))?,
                        }),
                    };
                    Block {
                        norm1: norm("ln_1")?,
                        attention: MultiHeadAttention::from_weights(weights, config.num_heads, 0.0, 0)?,
                        norm2: norm("ln_2")?,
                        mlp: Mlp::Gelu {
                            w_in: source.read(&format!("{p}mlp.c_fc.weight"))?,
                            b_in: source.read(&format!("{p}mlp.c_fc.bias"))?,
                            w_out: source.read(&format!("{p}mlp.c_proj.weight"))?,
                            b_out: source.read(&format!("{p}mlp.c_proj.bias"))?,
                        },
                    }
                }
                Architecture::Llama => {
                    let p = format!("model.layers.{l}.");
                    let (q, kv) = (config.num_heads * config.head_dim, config.num_kv_heads * config.head_dim);
                    let proj = |n: &str, rows: usize, cols: usize| -> Result<Matrix> { Matrix::new(rows, cols, source.read_t(&format!("{p}self_attn.{n}_proj.weight"))?) };
                    let bias = |n: &str| source.read::<f64>(&format!("{p}self_attn.{n}_proj.bias"));
                    let weights = Weights {
                        w_q: proj("q", c, q)?,
                        w_k: proj("k", c, kv)?,
                        w_v: proj("v", c, kv)?,
                        w_o: proj("o", q, c)?,
                        biases: if config.attention_bias { Some(Biases { b_q: bias("q")?, b_k: bias("k")?, b_v: bias("v")?, b_o: bias("o")? }) } else { None },
                    };
                    let rope = config.rope_theta.map(|base| Rope { base });
                    let mlp = |n: &str| source.read_t::<F>(&format!("{p}mlp.{n}_proj.weight"));
                    let mlp_bias = |n: &str| source.read::<F>(&format!("{p}mlp.{n}_proj.bias"));
                    Block {
                        norm1: Norm::Rms { w: source.read(&format!("{p}input_layernorm.weight"))? },
                        attention: MultiHeadAttention::from_weights(weights, config.num_heads, 0.0, 0)?.with_rope(rope)?,
                        norm2: Norm::Rms { w: source.read(&format!("{p}post_attention_layernorm.weight"))? },
                        mlp: Mlp::Gated {
                            w_gate: mlp("gate")?,
                            w_up: mlp("up")?,
                            w_down: mlp("down")?,
                            biases: if config.mlp_bias { Some([mlp_bias("gate")?, mlp_bias("up")?, mlp_bias("down")?]) } else { None },
                        },
                    }
                }
            };
            debug_assert!(matches!(&block.mlp, Mlp::Gelu { w_in, .. } | Mlp::Gated { w_gate: w_in, .. } if w_in.len() == c * ff));
            blocks.push(block);
        }
        let (embed, positions, final_norm) = match config.architecture {
            Architecture::Gpt2 => (
                source.read("wte.weight")?,
                Some(source.read("wpe.weight")?),
                Norm::Layer { w: source.read("ln_f.weight")?, b: source.read("ln_f.bias")? },
            ),
            Architecture::Llama => (source.read("model.embed_tokens.weight")?, None, Norm::Rms { w: source.read("model.norm.weight")? }),
        };
        let unembed = if source.file.get("lm_head.weight").is_some() { Some(source.read("lm_head.weight")?) } else { None };
        Ok(Self { config, embed, positions, blocks, final_norm, unembed })
    }

    /// Every tensor the config implies is in the file with its shape, and nothing else is (GPT-2's
    /// `attn.bias` / `attn.masked_bias` and Llama's `rotary_emb.inv_freq` buffers aside; in a GPT-2 file
    /// with the `transformer.` prefix, every other key has it); `lm_head.weight` is optional when tied.
    fn check_tensors<'a>(config: &PretrainedConfig, file: SafeTensors<'a>) -> Result<Source<'a>> {
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
                SafeTensors::check_float(t)?;
            }
        }
        Ok(Source { file, prefix })
    }

    fn norm(&self, norm: &Norm<F>, x: &[F]) -> Vec<F> {
        let (c, eps) = (self.config.hidden_size, self.config.norm_eps);
        match norm {
            Norm::Layer { w, b } => ops::layer_norm_eps(x, c, w, b, eps).0,
            Norm::Rms { w } => rms_norm(x, c, w, eps).0,
        }
    }

    fn mlp(mlp: &Mlp<F>, x: &[F], n: usize, c: usize, ff: usize) -> Vec<F> {
        match mlp {
            Mlp::Gelu { w_in, b_in, w_out, b_out } => {
                let act = ops::gelu(&ops::matmul(x, n, c, w_in, ff, Some(b_in)));
                ops::matmul(&act, n, ff, w_out, c, Some(b_out))
            }
            Mlp::Gated { w_gate, w_up, w_down, biases } => {
                let b = |i: usize| biases.as_ref().map(|b| &b[i][..]);
                let act = gated(&ops::matmul(x, n, c, w_gate, ff, b(0)), &ops::matmul(x, n, c, w_up, ff, b(1)));
                ops::matmul(&act, n, ff, w_down, c, b(2))
            }
        }
    }

    /// A RangeError unless `tokens` is `batch` sequences of `t ≥ 1` tokens `< V` that fit in the
    /// positions after the `start` already seen.
    pub fn check_tokens(&self, tokens: &[u32], batch: usize, t: usize, start: usize) -> Result<()> {
        let (v, p) = (self.config.vocab_size, self.config.max_positions);
        if batch == 0 || t == 0 || tokens.len() != batch * t {
            return Err(AttentionError::range_error(format!("tokens has {} entries; expected B·T with B, T ≥ 1", tokens.len())));
        }
        if start + t > p {
            let cached = if start > 0 { format!(" after the {start} cached") } else { String::new() };
            return Err(AttentionError::range_error(format!(
                "tokens has T = {t} per sequence{cached}; this model has {p} positions (max_position_embeddings / n_positions)"
            )));
        }
        if let Some(i) = tokens.iter().position(|&x| x as usize >= v) {
            return Err(AttentionError::range_error(format!("tokens[{}][{}] is {}; expected a token id below vocabSize = {v}", i / t, i % t, tokens[i])));
        }
        Ok(())
    }

    /// The forward of `batch` sequences of `t` tokens (see the module docs).
    pub fn forward(&mut self, tokens: &[u32], batch: usize, t: usize, need_weights: bool, need_hidden: bool) -> Result<PretrainedOutput<F>> {
        self.pass(tokens, batch, t, None, need_weights, need_hidden)
    }

    /// One empty KV cache per layer, for [`Self::forward_cached`].
    pub fn create_caches(&self) -> Vec<KvCache> {
        self.blocks.iter().map(|b| b.attention.create_cache()).collect()
    }

    /// The forward of `t` new tokens per sequence after those `caches` hold (positions
    /// `caches[0].length() …`), appending their keys and values: row for row the full forward's
    /// answer. Weights are `[B, h, t, cached + t]`. On an error the caches are emptied.
    pub fn forward_cached(&mut self, tokens: &[u32], batch: usize, t: usize, caches: &mut [KvCache], need_weights: bool, need_hidden: bool) -> Result<PretrainedOutput<F>> {
        if caches.len() != self.blocks.len() {
            return Err(AttentionError::State(format!("caches has {} entries; this model has {} layers: use its createCaches()", caches.len(), self.blocks.len())));
        }
        let result = self.pass(tokens, batch, t, Some(&mut *caches), need_weights, need_hidden);
        if result.is_err() {
            caches.iter_mut().for_each(KvCache::reset);
        }
        result
    }

    fn pass(&mut self, tokens: &[u32], batch: usize, t: usize, mut caches: Option<&mut [KvCache]>, need_weights: bool, need_hidden: bool) -> Result<PretrainedOutput<F>> {
        let start = caches.as_ref().and_then(|c| c.first()).map_or(0, KvCache::length);
        self.check_tokens(tokens, batch, t, start)?;
        let (c, v, ff, n) = (self.config.hidden_size, self.config.vocab_size, self.config.intermediate_size, batch * t);
        let layers = self.blocks.len();
        let weights_size = if need_weights { layers * batch * self.config.num_heads * t * (start + t) } else { 0 };
        let hidden_size = if need_hidden { (layers + 1) * n * c } else { 0 };
        check_working_set((n * (4 * c + 3 * ff + v) + weights_size + hidden_size) as u128, || format!("this model's forward with B = {batch}, T = {t}"))?;
        let mut x: Vec<F> = tokens.iter().flat_map(|&tok| self.embed[tok as usize * c..(tok as usize + 1) * c].iter().copied()).collect();
        if let Some(pos) = &self.positions {
            for (i, row) in x.chunks_exact_mut(c).enumerate() {
                let p = start + i % t;
                ops::add_into(row, &pos[p * c..(p + 1) * c]);
            }
        }
        let mut hidden = need_hidden.then(Vec::new);
        let mut weights = need_weights.then(Vec::new);
        let options = ForwardOptions { mask: Mask::causal(), need_weights, average_weights: false, training: false, batched: true };
        for l in 0..layers {
            if let Some(h) = hidden.as_mut() {
                h.push(x.clone());
            }
            let a = self.norm(&self.blocks[l].norm1, &x);
            let attention = &mut self.blocks[l].attention;
            let BatchOutput { output, weights: w } = match caches.as_deref_mut() {
                Some(caches) => attention.forward_cached_batch(Batch::new(&a, batch, t, c), &mut caches[l], &options)?,
                None => attention.forward_batch(Batch::new(&a, batch, t, c), Batch::new(&a, batch, t, c), Batch::new(&a, batch, t, c), &options)?,
            };
            ops::add_into(&mut x, &output);
            if let (Some(all), Some(w)) = (weights.as_mut(), w) {
                all.push(w);
            }
            let b = self.norm(&self.blocks[l].norm2, &x);
            ops::add_into(&mut x, &Self::mlp(&self.blocks[l].mlp, &b, n, c, ff));
        }
        let y = self.norm(&self.final_norm, &x);
        let w_u = self.unembed.as_deref().unwrap_or(&self.embed);
        let logits = ops::matmul_bt(&y, n, c, w_u, v);
        if let Some(i) = logits.iter().position(|x| !x.is_finite()) {
            return Err(AttentionError::range_error(format!(
                "logits[{}][{}][{}] overflows to {}: beyond the largest {}",
                i / (t * v),
                i / v % t,
                i % v,
                crate::limits::non_finite_name(logits[i].to_f64()),
                F::LARGEST
            )));
        }
        if let Some(h) = hidden.as_mut() {
            h.push(y);
        }
        Ok(PretrainedOutput { logits, weights, hidden })
    }

    /// The next-token cross-entropy of `tokens` from `logits` (as [`crate::model::Transformer`]'s
    /// forward): `(the mean, the losses [B, T − 1])`.
    pub fn loss(&self, tokens: &Tokens, logits: &[F]) -> (f64, Vec<f64>) {
        let (per_row, _) = ops::cross_entropy(logits, self.config.vocab_size, &tokens.targets(), None);
        mean_loss(&per_row, tokens)
    }

    /// The number of parameters (W_U counted only when untied).
    pub fn num_parameters(&self) -> usize {
        expected(&self.config).iter().map(|(_, s)| s.iter().product::<usize>()).sum::<usize>() + self.unembed.as_ref().map_or(0, Vec::len)
    }

    /// Decoding through the KV cache: the prompt runs once, then each new token is one cached
    /// forward of a single token; `choose(logits of the last position)` picks it and
    /// `on_token(id, index)` hears of it (an error from it stops the generation and is returned).
    /// Returns the prompt and the new tokens.
    pub fn generate(&mut self, prompt: &[u32], max_new: usize, mut choose: impl FnMut(&[F]) -> u32, mut on_token: impl FnMut(u32, usize) -> Result<()>) -> Result<Vec<u32>> {
        if prompt.is_empty() {
            return Err(AttentionError::range_error("prompt is empty; expected at least one token"));
        }
        let total = prompt.len() + max_new;
        if total > self.config.max_positions {
            return Err(AttentionError::range_error(format!(
                "prompt ({} tokens) + maxNewTokens ({max_new}) = {total} exceeds the {} positions this model has",
                prompt.len(),
                self.config.max_positions
            )));
        }
        let v = self.config.vocab_size;
        let mut caches = self.create_caches();
        let mut ids = prompt.to_vec();
        let mut next: &[u32] = prompt;
        let mut owned;
        for index in 0..max_new {
            let out = self.forward_cached(next, 1, next.len(), &mut caches, false, false)?;
            let id = choose(&out.logits[out.logits.len() - v..]);
            ids.push(id);
            on_token(id, index)?;
            owned = [id];
            next = &owned;
        }
        Ok(ids)
    }

    /// Greedy decoding through the KV cache: each new token is the argmax of the last position's
    /// logits (the lowest id on ties, as torch.argmax).
    pub fn generate_greedy(&mut self, prompt: &[u32], max_new: usize) -> Result<Vec<u32>> {
        self.generate(prompt, max_new, argmax, |_, _| Ok(()))
    }
}

/// The index of the largest entry (the first on ties).
pub fn argmax<F: Real>(row: &[F]) -> u32 {
    (1..row.len()).fold(0, |b, j| if row[j] > row[b] { j } else { b }) as u32
}
