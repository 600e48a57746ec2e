//! A small decoder-only transformer built from [`MultiHeadAttention`] layers (reused, not
//! copied), trained with AdamW: the model behind the lab's induction heads. Written once over
//! the precision `F` (f64: the layer's exact path; f32: its SIMD kernels, split over threads).
//!
//! Shapes: B sequences of T tokens, N = B·T rows, C = embed_dim, V = vocab_size, h heads.
//!
//! ```text
//! 1. x = W_E[token]                       (N, C)   (+ W_pos[t] with positions = learned)
//! per layer l:
//! 2.   a = LN1(x) or x                    (N, C)
//! 3.   q = k = a (+ W_pos[t] with positions = shortformer); v = a
//! 4.   x = x + attention_l(q, k, v)       (N, C)   causal; the layer's RoPE with positions = rope
//! 5.   with mlp: x = x + GELU(LN2(x)·W_in + b_in)·W_out + b_out      (N, 4C) inside
//! 6. logits = (LN_f(x) or x)·W_U          (N, V)
//! 7. loss = mean over b and t = 0 … T−2 of −log softmax(logits[b, t])[token[b, t + 1]]
//! ```
//!
//! The backward (`gradients`) runs the passes in reverse; each step quotes the line it
//! differentiates. [`adamw`] is PyTorch's `torch.optim.AdamW`.

pub mod adamw;
pub mod circuits;
pub(crate) mod bounds;
pub mod data;
pub mod norm;
pub mod ops;
pub mod paths;
pub mod scores;

use crate::engine::{Batch, Rope};
use crate::error::{number_text, AttentionError, Result};
use crate::layer::init::{xavier_uniform, SplitMix64};
use crate::layer::{BatchGrads, BatchOutput, Biases, ForwardOptions, KvCache, LayerConfig, LayerKernel, MultiHeadAttention, Weights};
use crate::limits::check_working_set;
use crate::mask::Mask;
use crate::matrix::Matrix;
use crate::real::Real;
use adamw::{AdamW, Moments};
use norm::RmsKept;
use ops::NormKept;
use paths::{LayerInputs, PathCut};
pub use scores::HeadScores;

/// How the model knows where a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Positions {
    /// W_pos[t] added to every layer's query and key inputs, never to the residual stream or the
    /// values (Press et al. 2021). The default: positions cannot leak into what heads copy.
    Shortformer,
    /// W_pos[t] added to the residual stream once, at the bottom (GPT-2).
    Learned,
    /// The layer's rotary embedding of Q and K (base 10000).
    Rope,
    /// None: only the causal mask tells positions apart.
    None,
}

impl Positions {
    /// The JS name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Shortformer => "shortformer",
            Self::Learned => "learned",
            Self::Rope => "rope",
            Self::None => "none",
        }
    }

    /// From the JS name.
    pub fn parse(name: &str) -> Option<Self> {
        [Self::Shortformer, Self::Learned, Self::Rope, Self::None].into_iter().find(|p| p.name() == name)
    }

    fn has_table(self) -> bool {
        matches!(self, Self::Shortformer | Self::Learned)
    }
}

/// The blocks' and the final normalisation (with `layer_norm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NormKind {
    /// LayerNorm: (x − μ)/√(σ² + ε)·w + b (parameters `*_w`, `*_b`).
    Layer,
    /// RMSNorm: x/√(mean(x²) + ε)·w (parameter `*_w` only; Llama).
    Rms,
}

/// The MLP's form (with `mlp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MlpKind {
    /// GELU (tanh form) of m·W_in + b_in, then ·W_out + b_out (GPT-2's gelu_new).
    Gelu,
    /// (SiLU(m·W_gate + b_gate) ⊙ (m·W_up + b_up))·W_down + b_down (Llama).
    Gated,
}

/// What `new Transformer(…)` takes (the dtype is the model's type parameter).
#[derive(Clone, Debug, PartialEq)]
pub struct ModelConfig {
    pub vocab_size: usize,
    pub context_length: usize,
    /// C.
    pub embed_dim: usize,
    /// h, dividing C.
    pub num_heads: usize,
    pub num_layers: usize,
    pub positions: Positions,
    /// A GELU MLP of width 4C after each attention.
    pub mlp: bool,
    /// Pre-LN blocks and a final LN.
    pub layer_norm: bool,
    /// The attention layers' biases.
    pub bias: bool,
    pub seed: u64,
    /// The normalisation with `layer_norm` (default LayerNorm).
    pub norm: NormKind,
    /// Its ε (default 1e-5).
    pub norm_eps: f64,
    /// The MLP's form with `mlp` (default GELU).
    pub mlp_kind: MlpKind,
    /// The MLP's width (default 4C).
    pub mlp_width: usize,
    /// The MLP's biases (default true).
    pub mlp_bias: bool,
    /// h_kv, the key/value heads, dividing h (default h).
    pub kv_heads: usize,
    /// RoPE's base with `positions = rope` (default 10000).
    pub rope_base: f64,
    /// W_U = W_Eᵀ, no parameter of its own (default false).
    pub tied: bool,
}

impl ModelConfig {
    /// Attention-only, shortformer positions, no biases, seed 0.
    pub fn new(vocab_size: usize, context_length: usize, embed_dim: usize, num_heads: usize, num_layers: usize) -> Self {
        Self {
            vocab_size,
            context_length,
            embed_dim,
            num_heads,
            num_layers,
            positions: Positions::Shortformer,
            mlp: false,
            layer_norm: false,
            bias: false,
            seed: 0,
            norm: NormKind::Layer,
            norm_eps: 1e-5,
            mlp_kind: MlpKind::Gelu,
            mlp_width: 4 * embed_dim,
            mlp_bias: true,
            kv_heads: num_heads,
            rope_base: Rope::default().base,
            tied: false,
        }
    }

    /// d_head = C / h.
    pub fn head_dim(&self) -> usize {
        self.embed_dim / self.num_heads.max(1)
    }

    /// `headMask` must have numLayers rows (checked before any row is read) …
    pub fn check_head_mask_rows(&self, rows: usize) -> Result<()> {
        let (l, h) = (self.num_layers, self.num_heads);
        if rows != l {
            return Err(AttentionError::range_error(format!("options.headMask has {rows} rows; expected numLayers = {l} rows of numHeads = {h} booleans")));
        }
        Ok(())
    }

    /// … each of numHeads entries.
    pub fn check_head_mask_row(&self, layer: usize, len: usize) -> Result<()> {
        if len != self.num_heads {
            return Err(AttentionError::range_error(format!("options.headMask[{layer}] has {len} entries; expected numHeads = {}", self.num_heads)));
        }
        Ok(())
    }

    /// `2 ≤ T ≤ context_length`, the tokens' sequence length.
    pub fn check_sequence_length(&self, t: usize) -> Result<()> {
        if t < 2 || t > self.context_length {
            return Err(AttentionError::range_error(format!(
                "tokens has T = {t} per sequence; expected 2 ≤ T ≤ contextLength = {} (the model predicts token t + 1 from tokens 0 … t)",
                self.context_length
            )));
        }
        Ok(())
    }

    /// Everything [`Self::check_shape`] checks, and that the model trains within one call's working
    /// set: its parameters, their gradients and two AdamW moments (a model made by `new Transformer`).
    fn check(&self) -> Result<()> {
        self.check_shape()?;
        let (v, c, ctx, l) = (self.vocab_size as u128, self.embed_dim as u128, self.context_length as u128, self.num_layers as u128);
        // the parameters, their gradients and two moments
        let f = self.mlp_width as u128;
        let mlp = match self.mlp_kind {
            MlpKind::Gelu => 2 * c * f + f + c,
            MlpKind::Gated => 3 * c * f + 2 * f + c,
        };
        let per_layer = 4 * c * c + 4 * c + if self.mlp { mlp } else { 0 } + 4 * c;
        let parameters = 2 * v * c + ctx * c + l * per_layer + 2 * c;
        check_working_set(4 * parameters, || {
            format!("a Transformer with vocabSize = {v}, contextLength = {ctx}, embedDim = {c} and numLayers = {l} (its parameters, gradients and AdamW moments)")
        })
    }

    /// The config's own consistency (vocabulary, context, RoPE's even head size, K/V heads, MLP
    /// width), not its size: a loaded checkpoint's memory is checked by the loader against the file.
    fn check_shape(&self) -> Result<()> {
        if self.vocab_size < 2 {
            return Err(AttentionError::range_error(format!("config.vocabSize is {}; expected an integer ≥ 2", self.vocab_size)));
        }
        if self.context_length < 2 {
            return Err(AttentionError::range_error(format!(
                "config.contextLength is {}; expected an integer ≥ 2 (the model predicts token t + 1 from tokens 0 … t)",
                self.context_length
            )));
        }
        if self.positions == Positions::Rope && !(self.embed_dim / self.num_heads.max(1)).is_multiple_of(2) {
            return Err(AttentionError::range_error(format!(
                "config.positions is 'rope' but headDim = embedDim / numHeads = {} is odd; RoPE rotates pairs of columns",
                self.embed_dim / self.num_heads.max(1)
            )));
        }
        if self.kv_heads == 0 || !self.num_heads.is_multiple_of(self.kv_heads) {
            return Err(AttentionError::range_error(format!("config.numKVHeads is {}; expected a divisor of numHeads = {}", self.kv_heads, self.num_heads)));
        }
        if self.mlp && self.mlp_width == 0 {
            return Err(AttentionError::range_error("config.mlpWidth is 0; expected an integer ≥ 1"));
        }
        Ok(())
    }
}

/// One parameter tensor: `layer` is `None` for the model's own (`W_E`, `W_pos`, `W_U`, `ln_final_*`).
#[derive(Clone, Debug, PartialEq)]
pub struct Param<F> {
    pub layer: Option<usize>,
    pub name: &'static str,
    /// `[rows, cols]`, or `[n]` for a vector.
    pub shape: Vec<usize>,
    pub data: Vec<F>,
}

impl<F: Real> Param<F> {
    fn new(layer: Option<usize>, name: &'static str, shape: Vec<usize>, data: Vec<F>) -> Self {
        Self { layer, name, shape, data }
    }

    fn filled(layer: Option<usize>, name: &'static str, n: usize, value: f64) -> Self {
        Self::new(layer, name, vec![n], vec![F::from_f64(value); n])
    }

    fn from_matrix(layer: Option<usize>, name: &'static str, m: Matrix) -> Self {
        Self::new(layer, name, vec![m.rows(), m.cols()], m.data().iter().map(|&x| F::from_f64(x)).collect())
    }

    /// Where a message names it: `W_E`, `layers[1].W_Q`.
    pub fn path(&self) -> String {
        match self.layer {
            Some(l) => format!("layers[{l}].{}", self.name),
            None => self.name.to_string(),
        }
    }

    /// AdamW decays the 2-D parameters (weights and embeddings) and nothing else.
    pub fn decays(&self) -> bool {
        self.shape.len() == 2
    }
}

/// The attention layer's parameter names, in [`Weights::tensors`] order.
const ATTENTION_NAMES: [&str; 8] = ["W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O"];

/// Layer `l`'s attention weights as parameters, in [`Weights::tensors`] order, each with its shape.
pub fn attention_params<F: Real>(l: usize, weights: &Weights) -> Vec<Param<F>> {
    let shapes = [&weights.w_q, &weights.w_k, &weights.w_v, &weights.w_o].map(|m| vec![m.rows(), m.cols()]);
    weights
        .tensors()
        .into_iter()
        .enumerate()
        .map(|(i, (name, data))| {
            let shape = if i < 4 { shapes[i].clone() } else { vec![data.len()] };
            let name = ATTENTION_NAMES.into_iter().find(|&n| n == name).expect("the layer's own names");
            Param::new(Some(l), name, shape, data.iter().map(|&x| F::from_f64(x)).collect())
        })
        .collect()
}

/// What [`Transformer::forward`] returns.
#[derive(Clone, Debug)]
pub struct ModelOutput<F> {
    /// `[B, T, V]`.
    pub logits: Vec<F>,
    /// The mean of `losses`.
    pub loss: f64,
    /// `[B, T − 1]`: the cross-entropy of each next token.
    pub losses: Vec<f64>,
    /// With `need_weights`: per layer `[B, h, T, T]`.
    pub weights: Option<Vec<Vec<F>>>,
    /// With `need_hidden`: L + 1 entries `[B, T, C]`, as Hugging Face's `output_hidden_states`: the
    /// embeddings, the residual stream after each block but the last, and the final norm's output.
    pub hidden: Option<Vec<Vec<F>>>,
}

/// The model's tokens, checked: `[B, T]` row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Tokens {
    pub data: Vec<u32>,
    pub batch: usize,
    pub t: usize,
}

impl Tokens {
    /// From JS numbers, `[B, T]` row-major: each must be an integer in `0 … vocab_size − 1`, and
    /// `2 ≤ T ≤ context_length`.
    pub fn check(values: &[f64], batch: usize, t: usize, config: &ModelConfig) -> Result<Self> {
        if batch == 0 {
            return Err(AttentionError::range_error("tokens is an empty batch; expected [B, T] with B ≥ 1"));
        }
        config.check_sequence_length(t)?;
        let mut data = Vec::with_capacity(values.len());
        for (i, &x) in values.iter().enumerate() {
            if !(x.fract() == 0.0 && x >= 0.0 && x < config.vocab_size as f64) {
                return Err(AttentionError::range_error(format!(
                    "tokens[{}][{}] is {}; expected an integer in 0 … vocabSize − 1 = {}",
                    i / t,
                    i % t,
                    number_text(x),
                    config.vocab_size - 1
                )));
            }
            data.push(x as u32);
        }
        Ok(Self { data, batch, t })
    }

    /// Each row's next token (`None` at the last position of each sequence).
    pub(crate) fn targets(&self) -> Vec<Option<u32>> {
        (0..self.data.len()).map(|i| (i % self.t + 1 < self.t).then(|| self.data[i + 1])).collect()
    }
}

/// What a normalisation kept for its backward.
enum NormState<F> {
    Layer(NormKept<F>),
    Rms(RmsKept<F>),
}

/// What one layer's forward kept for the backward (step numbers as in the module docs).
struct BlockKept<F> {
    /// 2: LN1's intermediates (with layer_norm).
    ln1: Option<NormState<F>>,
    /// 5: the MLP's LN2 intermediates, its input, pre-activation and activation.
    mlp: Option<MlpKept<F>>,
}

struct MlpKept<F> {
    ln2: Option<NormState<F>>,
    input: Vec<F>,
    /// GELU's pre-activation; the gated MLP's gate then up pre-activations, `2·N·F`.
    pre: Vec<F>,
    act: Vec<F>,
}

/// The activations one forward pass kept.
struct Pass<F> {
    blocks: Vec<BlockKept<F>>,
    /// 6: LN_f's intermediates and the input of W_U.
    ln_final: Option<NormState<F>>,
    unembed_input: Vec<F>,
    logits: Vec<F>,
    weights: Option<Vec<Vec<F>>>,
    /// With `need_hidden`: the residual stream before each block, then the final norm's output.
    hidden: Option<Vec<Vec<F>>>,
}

/// The transformer (see the module docs).
#[derive(Clone, Debug)]
pub struct Transformer<F> {
    config: ModelConfig,
    params: Vec<Param<F>>,
    /// One attention layer per block: in f64 its weights are a copy of the `layers[l].W_*` parameters;
    /// in f32 it holds none, and [`Self::with_layer`] lends it the parameters for each call.
    attention: Vec<MultiHeadAttention>,
    optimizer: Moments<F>,
}

impl<F: LayerKernel> Transformer<F> {
    /// A model with seeded Xavier-uniform weights: one SplitMix64 from `config.seed` fills W_E,
    /// W_pos, then draws one seed per attention layer (its own initialisation, see
    /// [`crate::layer::init`]), fills each MLP's W_in and W_out, then W_U. Biases 0, LN gains 1.
    pub fn new(config: ModelConfig) -> Result<Self> {
        if config.num_heads == 0 || config.embed_dim == 0 || !config.embed_dim.is_multiple_of(config.num_heads) {
            return Err(AttentionError::range_error(format!(
                "config.embedDim = {} is not a positive multiple of config.numHeads = {}: each head takes embedDim / numHeads columns",
                config.embed_dim, config.num_heads
            )));
        }
        config.check()?;
        let (v, c) = (config.vocab_size, config.embed_dim);
        let mut rng = SplitMix64::new(config.seed);
        let mut params = vec![Param::from_matrix(None, "W_E", xavier_uniform(&mut rng, v, c))];
        if config.positions.has_table() {
            params.push(Param::from_matrix(None, "W_pos", xavier_uniform(&mut rng, config.context_length, c)));
        }
        let mut attention = Vec::with_capacity(config.num_layers);
        for l in 0..config.num_layers {
            let mut layer = MultiHeadAttention::new(&Self::layer_config(&config, rng.next_u64()))?;
            params.extend(attention_params(l, &layer.weights()));
            F::hold(&mut layer); // f64: its own copy; f32: none, the parameters are lent (with_layer)
            let f = config.mlp_width;
            let norm = |params: &mut Vec<Param<F>>, prefix: &'static [&'static str; 2]| {
                params.push(Param::filled(Some(l), prefix[0], c, 1.0));
                if config.norm == NormKind::Layer {
                    params.push(Param::filled(Some(l), prefix[1], c, 0.0));
                }
            };
            if config.layer_norm {
                norm(&mut params, &["ln1_w", "ln1_b"]);
            }
            if config.mlp {
                if config.layer_norm {
                    norm(&mut params, &["ln2_w", "ln2_b"]);
                }
                let names: &[(&'static str, &'static str, usize, usize)] = match config.mlp_kind {
                    MlpKind::Gelu => &[("W_in", "b_in", c, f), ("W_out", "b_out", f, c)],
                    MlpKind::Gated => &[("W_gate", "b_gate", c, f), ("W_up", "b_up", c, f), ("W_down", "b_down", f, c)],
                };
                for &(w, b, rows, cols) in names {
                    params.push(Param::from_matrix(Some(l), w, xavier_uniform(&mut rng, rows, cols)));
                    if config.mlp_bias {
                        params.push(Param::filled(Some(l), b, cols, 0.0));
                    }
                }
            }
            attention.push(layer);
        }
        if config.layer_norm {
            params.push(Param::filled(None, "ln_final_w", c, 1.0));
            if config.norm == NormKind::Layer {
                params.push(Param::filled(None, "ln_final_b", c, 0.0));
            }
        }
        if !config.tied {
            params.push(Param::from_matrix(None, "W_U", xavier_uniform(&mut rng, c, v)));
        }
        let optimizer = Moments::zeros(&params);
        Ok(Self { config, params, attention, optimizer })
    }

    /// A model with the given parameters (every one `config` implies, in [`Self::params`]'s order,
    /// e.g. a checkpoint's): the attention layers are built from theirs; the optimizer starts at zero.
    /// The size is not checked here (the parameters exist already; the loader checks the checkpoint's
    /// memory before reading it, and a training call checks its own working set).
    pub fn from_params(config: ModelConfig, params: Vec<Param<F>>) -> Result<Self> {
        config.check_shape()?;
        let mut attention = Vec::with_capacity(config.num_layers);
        for l in 0..config.num_layers {
            let mut layer = MultiHeadAttention::holding_nothing(&Self::layer_config(&config, 0))?;
            let (c, kv) = (config.embed_dim, config.kv_heads * config.head_dim());
            for name in ATTENTION_NAMES.iter().take(if config.bias { 8 } else { 4 }) {
                let len = match *name {
                    "W_Q" | "W_O" => c * c,
                    "W_K" | "W_V" => c * kv,
                    "b_K" | "b_V" => kv,
                    _ => c,
                };
                if !params.iter().any(|p| p.layer == Some(l) && p.name == *name && p.data.len() == len) {
                    return Err(AttentionError::type_error(format!("layers[{l}].{name} is missing or does not have its {len} values")));
                }
            }
            if !F::LAYERS_HOLD_WEIGHTS {
                // its weights are the parameters, lent for each call
                attention.push(layer);
                continue;
            }
            let find = |name: &str| params.iter().find(|p| p.layer == Some(l) && p.name == name).map(|p| p.data.iter().map(|x| x.to_f64()).collect::<Vec<f64>>());
            let matrix = |name: &str, rows: usize, cols: usize| Matrix::new(rows, cols, find(name).unwrap_or_default());
            let kv = config.kv_heads * config.head_dim();
            let c = config.embed_dim;
            layer.set_weights(Weights {
                w_q: matrix("W_Q", c, c)?,
                w_k: matrix("W_K", c, kv)?,
                w_v: matrix("W_V", c, kv)?,
                w_o: matrix("W_O", c, c)?,
                biases: config.bias.then(|| Biases { b_q: find("b_Q").unwrap_or_default(), b_k: find("b_K").unwrap_or_default(), b_v: find("b_V").unwrap_or_default(), b_o: find("b_O").unwrap_or_default() }),
            })?;
            attention.push(layer);
        }
        let optimizer = Moments::zeros(&params);
        Ok(Self { config, params, attention, optimizer })
    }

    /// The attention layer of every block: causal use, h heads of C/h, h_kv K/V heads, the config's
    /// biases and RoPE.
    fn layer_config(config: &ModelConfig, seed: u64) -> LayerConfig {
        LayerConfig {
            bias: config.bias,
            seed,
            kv_heads: config.kv_heads,
            rope: (config.positions == Positions::Rope).then_some(Rope { base: config.rope_base }),
            ..LayerConfig::new(config.embed_dim, config.num_heads)
        }
    }

    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// Every parameter, in a fixed order (the one `getWeights` lists).
    pub fn params(&self) -> &[Param<F>] {
        &self.params
    }

    /// The AdamW state: moments and step.
    pub fn moments(&self) -> &Moments<F> {
        &self.optimizer
    }

    pub fn num_parameters(&self) -> usize {
        self.params.iter().map(|p| p.data.len()).sum()
    }

    fn index(&self, layer: Option<usize>, name: &str) -> Option<usize> {
        self.params.iter().position(|p| p.layer == layer && p.name == name)
    }

    fn param(&self, layer: Option<usize>, name: &str) -> &[F] {
        &self.params[self.index(layer, name).expect("a parameter of this configuration")].data
    }

    /// Replaces the given parameters (each `(layer, name, values)`; the others keep theirs) and,
    /// with `moments`, the optimizer state. Checks everything before changing anything.
    pub fn set_params(&mut self, updates: Vec<(Option<usize>, String, Vec<F>)>, moments: Option<Moments<F>>) -> Result<()> {
        let mut params = self.params.clone();
        for (layer, name, values) in updates {
            let place = match layer {
                Some(l) => format!("layers[{l}].{name}"),
                None => name.clone(),
            };
            let Some(i) = self.index(layer, &name) else {
                return Err(AttentionError::type_error(format!(
                    "{place} is not a parameter of this model; its keys are those of getWeights(): {}",
                    self.key_list(layer)
                )));
            };
            check_values(&place, &values, &params[i].shape)?;
            params[i].data = values;
        }
        if let Some(m) = &moments {
            m.check(&params)?;
        }
        let attention = self.layers_for(&params)?;
        self.params = params;
        self.attention = attention;
        if let Some(m) = moments {
            self.optimizer = m;
        }
        Ok(())
    }

    /// The keys of one layer (or of the model), for messages.
    fn key_list(&self, layer: Option<usize>) -> String {
        let names: Vec<&str> = self.params.iter().filter(|p| p.layer == layer).map(|p| p.name).collect();
        let mut text = names.join(", ");
        if layer.is_none() && self.config.num_layers > 0 {
            text.push_str(", layers");
        }
        text
    }

    /// The attention layers with the weights in `params` (the layers' own checks run here).
    fn layers_for(&self, params: &[Param<F>]) -> Result<Vec<MultiHeadAttention>> {
        let find = |l: usize, name: &str| -> Vec<f64> {
            params.iter().find(|p| p.layer == Some(l) && p.name == name).map(|p| p.data.iter().map(|x| x.to_f64()).collect()).unwrap_or_default()
        };
        let c = self.config.embed_dim;
        (0..self.config.num_layers)
            .map(|l| {
                let kv = self.config.kv_heads * self.config.head_dim();
                let matrix = |name: &str, cols: usize| Matrix::new(c, cols, find(l, name));
                let weights = Weights {
                    w_q: matrix("W_Q", c)?,
                    w_k: matrix("W_K", kv)?,
                    w_v: matrix("W_V", kv)?,
                    w_o: matrix("W_O", c)?,
                    biases: self.config.bias.then(|| Biases { b_q: find(l, "b_Q"), b_k: find(l, "b_K"), b_v: find(l, "b_V"), b_o: find(l, "b_O") }),
                };
                let mut layer = self.attention[l].clone();
                layer.set_weights(weights)?;
                F::hold(&mut layer);
                Ok(layer)
            })
            .collect()
    }

    /// Runs `f` with layer `l`'s weights lent to it from the parameters (moved, not copied: a float32
    /// model's layers hold no weights of their own, [`LayerKernel::hold`]), and moves them back after.
    fn with_layer<R>(&mut self, l: usize, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        let weights = self.take_attention(l);
        if let Some(back) = F::lend(&mut self.attention[l], weights) {
            self.put_attention(l, back);
        }
        let result = f(self);
        if let Some(back) = F::reclaim(&mut self.attention[l]) {
            self.put_attention(l, back);
        }
        result
    }

    /// Layer `l`'s attention parameters moved out of [`Self::params`] (left empty until
    /// [`Self::put_attention`]).
    fn take_attention(&mut self, l: usize) -> Weights<F> {
        let (c, kv, bias) = (self.config.embed_dim, self.config.kv_heads * self.config.head_dim(), self.config.bias);
        let mut take = |name: &str, rows: usize, cols: usize| {
            let i = self.index(Some(l), name).expect("an attention parameter of this configuration");
            Matrix::new(rows, cols, std::mem::take(&mut self.params[i].data)).expect("a parameter has its shape")
        };
        let (w_q, w_k, w_v, w_o) = (take("W_Q", c, c), take("W_K", c, kv), take("W_V", c, kv), take("W_O", c, c));
        let biases = bias.then(|| {
            let [b_q, b_k, b_v, b_o] = ["b_Q", "b_K", "b_V", "b_O"].map(|name| take(name, 1, if matches!(name, "b_K" | "b_V") { kv } else { c }).into_data());
            Biases { b_q, b_k, b_v, b_o }
        });
        Weights { w_q, w_k, w_v, w_o, biases }
    }

    /// [`Self::take_attention`]'s weights back into the parameters.
    fn put_attention(&mut self, l: usize, weights: Weights<F>) {
        let Weights { w_q, w_k, w_v, w_o, biases } = weights;
        let mut tensors = vec![("W_Q", w_q.into_data()), ("W_K", w_k.into_data()), ("W_V", w_v.into_data()), ("W_O", w_o.into_data())];
        if let Some(b) = biases {
            tensors.extend([("b_Q", b.b_q), ("b_K", b.b_k), ("b_V", b.b_v), ("b_O", b.b_o)]);
        }
        for (name, data) in tensors {
            let i = self.index(Some(l), name).expect("an attention parameter of this configuration");
            self.params[i].data = data;
        }
    }

    /// W_pos's rows `start … start + t − 1` repeated for each of `batch` sequences, `(N, C)`.
    fn position_rows(&self, batch: usize, start: usize, t: usize) -> Vec<F> {
        let c = self.config.embed_dim;
        let rows = &self.param(None, "W_pos")[start * c..(start + t) * c];
        rows.repeat(batch)
    }

    /// The forward pass (steps 1–6), keeping what the backward needs. `head_mask[l][i] = false`
    /// zeroes head i's output before W_O (by zeroing W_O's rows for that head in a copy of the layer).
    /// `cuts` are [`paths`]' cut paths (empty: the plain model).
    /// With `need_hidden`, [`Pass::hidden`] holds the residual stream before each block and the final
    /// norm's output. With `caches` (one per layer, not with shortformer positions, head masks or
    /// cuts), `tokens` follow the positions the caches hold and each layer appends its keys and values.
    #[allow(clippy::too_many_arguments)]
    fn run(&mut self, tokens: &Tokens, training: bool, need_weights: bool, need_hidden: bool, mut caches: Option<&mut [KvCache]>, head_mask: Option<&[Vec<bool>]>, cuts: &[PathCut]) -> Result<Pass<F>> {
        let (b, t, c, v) = (tokens.batch, tokens.t, self.config.embed_dim, self.config.vocab_size);
        let n = b * t;
        let start = caches.as_ref().and_then(|c| c.first()).map_or(0, KvCache::length);
        let per_layer_weights = if need_weights { b * self.config.num_heads * t * (start + t) } else { 0 };
        let mlp_width = if self.config.mlp { 3 * self.config.mlp_width + 2 * c } else { 4 * c };
        // per block: its inputs and outputs, the MLP's, the layer's kept values; the logits and their
        // softmax once, after the blocks (counted per block, a GPT-2-small forward of T = 91 was refused)
        let per_block = n * (c * 4 + mlp_width + if need_hidden { c } else { 0 }) + per_layer_weights;
        let logits = (n as u128) * 2 * v as u128;
        // training (gradients, trainStep): the gradients, the moments and the stepped copy of the parameters too
        let training_state = if training { 4 * self.num_parameters() as u128 } else { 0 };
        check_working_set((per_block as u128) * (self.config.num_layers as u128 + 1) + logits + training_state, || {
            format!("Transformer with B = {b}, T = {t}, embedDim = {c} and vocabSize = {v}")
        })?;
        // 1. x = W_E[token] (+ W_pos[t])                                   (N, C)
        let w_e = self.param(None, "W_E");
        let mut x: Vec<F> = tokens.data.iter().flat_map(|&tok| w_e[tok as usize * c..(tok as usize + 1) * c].iter().copied()).collect();
        let positions = self.config.positions.has_table().then(|| self.position_rows(b, start, t));
        if self.config.positions == Positions::Learned {
            ops::add_into(&mut x, positions.as_deref().expect("learned positions have W_pos"));
        }
        let options = ForwardOptions { mask: Mask::causal(), need_weights, average_weights: false, training, batched: true };
        let mut blocks = Vec::with_capacity(self.config.num_layers);
        let mut weights = need_weights.then(Vec::new);
        let mut written = Vec::new(); // what the cut paths' source heads wrote
        let mut hidden = need_hidden.then(Vec::new);
        for l in 0..self.config.num_layers {
            if let Some(h) = hidden.as_mut() {
                h.push(x.clone());
            }
            // 2. a = LN1(x) or x
            let (a, ln1) = self.norm(Some(l), "ln1", &x);
            // 3. q = k = a (+ W_pos[t]); v = a
            let qk = match (self.config.positions, &positions) {
                (Positions::Shortformer, Some(pos)) => a.iter().zip(pos).map(|(&x, &p)| x + p).collect(),
                _ => a.clone(),
            };
            // 4. x = x + attention_l(q, k, v)
            let masked = head_mask.map(|m| &m[l]).filter(|m| m.iter().any(|&on| !on));
            let BatchOutput { output: out, weights: w } = self.with_layer(l, |model| {
                if let Some(caches) = caches.as_deref_mut() {
                    model.attention[l].forward_cached_batch(batch(&a, b, t, c), &mut caches[l], &options)
                } else if cuts.iter().any(|cut| cut.from.0 == l || cut.to.0 == l) {
                    let inputs = LayerInputs { x: &x, a: &a, qk: &qk, positions: positions.as_deref(), batch: b, t, mask: masked.map(|m| m.as_slice()) };
                    model.attend_with_cuts(l, &inputs, &options, cuts, &mut written)
                } else {
                    let layer = &mut model.attention[l];
                    match masked {
                        Some(mask) => ablated(layer, mask)?.forward_batch(batch(&qk, b, t, c), batch(&qk, b, t, c), batch(&a, b, t, c), &options),
                        None => layer.forward_batch(batch(&qk, b, t, c), batch(&qk, b, t, c), batch(&a, b, t, c), &options),
                    }
                }
            })?;
            ops::add_into(&mut x, &out);
            if let (Some(all), Some(w)) = (weights.as_mut(), w) {
                all.push(w);
            }
            // 5. x = x + GELU(LN2(x)·W_in + b_in)·W_out + b_out
            //    or x = x + (SiLU(LN2(x)·W_gate + b_gate) ⊙ (LN2(x)·W_up + b_up))·W_down + b_down
            let mlp = if self.config.mlp {
                let (input, ln2) = self.norm(Some(l), "ln2", &x);
                let f = self.config.mlp_width;
                let product = |w: &str, b: &str| ops::matmul(&input, n, c, self.param(Some(l), w), f, self.bias(Some(l), b));
                let (pre, act, out) = match self.config.mlp_kind {
                    MlpKind::Gelu => {
                        let pre = product("W_in", "b_in");
                        let act = ops::gelu(&pre);
                        (pre, act, ["W_out", "b_out"])
                    }
                    MlpKind::Gated => {
                        let (mut gate, up) = (product("W_gate", "b_gate"), product("W_up", "b_up"));
                        let act = norm::gated(&gate, &up);
                        gate.extend(up);
                        (gate, act, ["W_down", "b_down"])
                    }
                };
                let out = ops::matmul(&act, n, f, self.param(Some(l), out[0]), c, self.bias(Some(l), out[1]));
                ops::add_into(&mut x, &out);
                Some(MlpKept { ln2, input, pre, act })
            } else {
                None
            };
            blocks.push(BlockKept { ln1, mlp });
        }
        // 6. logits = (LN_f(x) or x)·W_U                                   (N, V)
        //    (W_U = W_Eᵀ when tied)
        let (unembed_input, ln_final) = self.norm(None, "ln_final", &x);
        let logits = if self.config.tied {
            ops::matmul_bt(&unembed_input, n, c, self.param(None, "W_E"), v)
        } else {
            ops::matmul(&unembed_input, n, c, self.param(None, "W_U"), v, None)
        };
        if let Some(i) = logits.iter().position(|x| !x.is_finite()) {
            return Err(AttentionError::range_error(format!(
                "logits[{}][{}][{}] overflows to {}: the residual stream grew beyond the largest {}; lower the learning rate or reset the weights",
                i / (t * v),
                i / v % t,
                i % v,
                crate::limits::non_finite_name(logits[i].to_f64()),
                F::LARGEST
            )));
        }
        if let Some(h) = hidden.as_mut() {
            h.push(unembed_input.clone());
        }
        Ok(Pass { blocks, ln_final, unembed_input, logits, weights, hidden })
    }

    /// `LN(x)` with the parameters `{prefix}_w`, `{prefix}_b` of `layer` (RMSNorm: `{prefix}_w`
    /// only), or `x` itself without layer norm.
    fn norm(&self, layer: Option<usize>, prefix: &str, x: &[F]) -> (Vec<F>, Option<NormState<F>>) {
        if !self.config.layer_norm {
            return (x.to_vec(), None);
        }
        let (c, w) = (self.config.embed_dim, self.param(layer, &format!("{prefix}_w")));
        match self.config.norm {
            NormKind::Layer => {
                let (y, kept) = ops::layer_norm_eps(x, c, w, self.param(layer, &format!("{prefix}_b")), self.config.norm_eps);
                (y, Some(NormState::Layer(kept)))
            }
            NormKind::Rms => {
                let (y, kept) = norm::rms_norm(x, c, w, self.config.norm_eps);
                (y, Some(NormState::Rms(kept)))
            }
        }
    }

    /// A bias the config may leave out.
    fn bias(&self, layer: Option<usize>, name: &str) -> Option<&[F]> {
        self.index(layer, name).map(|i| &self.params[i].data[..])
    }

    /// Step 7 and the outputs of a forward pass (evaluation: no training state is touched).
    pub fn forward(&mut self, tokens: &Tokens, need_weights: bool, head_mask: Option<&[Vec<bool>]>) -> Result<ModelOutput<F>> {
        self.forward_with_cuts(tokens, need_weights, head_mask, &[])
    }

    /// [`Self::forward`] with cut paths (see [`paths`]).
    pub fn forward_with_cuts(&mut self, tokens: &Tokens, need_weights: bool, head_mask: Option<&[Vec<bool>]>, cuts: &[PathCut]) -> Result<ModelOutput<F>> {
        self.forward_all(tokens, need_weights, false, head_mask, cuts)
    }

    /// [`Self::forward_with_cuts`], with the hidden states when `need_hidden`.
    pub fn forward_all(&mut self, tokens: &Tokens, need_weights: bool, need_hidden: bool, head_mask: Option<&[Vec<bool>]>, cuts: &[PathCut]) -> Result<ModelOutput<F>> {
        if let Some(mask) = head_mask {
            self.check_head_mask(mask)?;
        }
        if !cuts.is_empty() && (self.config.kv_heads != self.config.num_heads) {
            return Err(AttentionError::range_error(format!(
                "options.pathMask cuts single heads' paths, which needs one K/V head per query head; this model has numKVHeads = {} for numHeads = {}",
                self.config.kv_heads, self.config.num_heads
            )));
        }
        for (k, cut) in cuts.iter().enumerate() {
            self.config.check_path_cut(cut, &format!("options.pathMask[{k}]"))?;
        }
        let pass = self.run(tokens, false, need_weights, need_hidden, None, head_mask, cuts)?;
        let (losses, _) = ops::cross_entropy(&pass.logits, self.config.vocab_size, &tokens.targets(), None);
        let (loss, losses) = mean_loss(&losses, tokens);
        Ok(ModelOutput { logits: pass.logits, loss, losses, weights: pass.weights, hidden: pass.hidden })
    }

    /// One empty KV cache per layer, for [`Self::forward_cached`].
    pub fn create_caches(&self) -> Vec<KvCache> {
        self.attention.iter().map(MultiHeadAttention::create_cache).collect()
    }

    /// The logits `[t, V]` of `tokens`, one sequence following the positions `caches` hold (each
    /// layer appends its keys and values): row for row the full forward's, bit for bit. Not with
    /// shortformer positions (its queries and keys carry W_pos, its values do not). On an error the
    /// caches are emptied.
    pub fn forward_cached(&mut self, tokens: &[u32], caches: &mut [KvCache]) -> Result<Vec<F>> {
        let (v, layers) = (self.config.vocab_size, self.config.num_layers);
        if caches.len() != layers {
            return Err(AttentionError::State(format!("caches has {} entries; this model has {layers} layers: use its createCaches()", caches.len())));
        }
        if self.config.positions == Positions::Shortformer {
            return Err(AttentionError::State("a model with shortformer positions cannot decode through a KV cache (its keys carry W_pos, its values do not)".into()));
        }
        let start = caches.first().map_or(0, KvCache::length);
        if tokens.is_empty() || start + tokens.len() > self.config.context_length {
            return Err(AttentionError::range_error(format!(
                "tokens has {} entries after the {start} cached; expected 1 … contextLength − {start} = {}",
                tokens.len(),
                self.config.context_length.saturating_sub(start)
            )));
        }
        if let Some(i) = tokens.iter().position(|&x| x as usize >= v) {
            return Err(AttentionError::range_error(format!("tokens[{i}] is {}; expected an integer in 0 … vocabSize − 1 = {}", tokens[i], v - 1)));
        }
        let step = Tokens { data: tokens.to_vec(), batch: 1, t: tokens.len() };
        let result = self.run(&step, false, false, false, Some(&mut *caches), None, &[]);
        if result.is_err() {
            caches.iter_mut().for_each(KvCache::reset);
        }
        Ok(result?.logits)
    }

    /// Decoding: the prompt runs once through every layer's KV cache, then each new token is one
    /// forward of a single token through the caches (with shortformer positions, whose queries and
    /// keys differ from the values, a full forward of the tokens so far); `choose(logits of the last
    /// position)` picks it and `on_token(id, index)` hears of it (its error stops the generation and
    /// is returned). Returns the prompt and the new tokens. The prompt's ids are checked here.
    pub fn generate(&mut self, prompt: &[u32], max_new: usize, mut choose: impl FnMut(&[F]) -> u32, mut on_token: impl FnMut(u32, usize) -> Result<()>) -> Result<Vec<u32>> {
        let (v, positions) = (self.config.vocab_size, self.config.context_length);
        if prompt.is_empty() {
            return Err(AttentionError::range_error("prompt is empty; expected at least one token"));
        }
        if let Some(i) = prompt.iter().position(|&x| x as usize >= v) {
            return Err(AttentionError::range_error(format!("prompt[{i}] is {}; expected an integer in 0 … vocabSize − 1 = {}", prompt[i], v - 1)));
        }
        let total = prompt.len() + max_new;
        if total > positions {
            return Err(AttentionError::range_error(format!(
                "prompt ({} tokens) + maxNewTokens ({max_new}) = {total} exceeds the {positions} positions this model has (contextLength)",
                prompt.len()
            )));
        }
        let cached = self.config.positions != Positions::Shortformer;
        let mut caches = self.create_caches();
        let mut ids = prompt.to_vec();
        let mut fed = 0; // tokens the caches hold
        for index in 0..max_new {
            let logits = if cached {
                self.forward_cached(&ids[fed..], &mut caches)?
            } else {
                self.run(&Tokens { data: ids.clone(), batch: 1, t: ids.len() }, false, false, false, None, None, &[])?.logits
            };
            fed = ids.len();
            let id = choose(&logits[logits.len() - v..]);
            ids.push(id);
            on_token(id, index)?;
        }
        Ok(ids)
    }

    fn check_head_mask(&self, mask: &[Vec<bool>]) -> Result<()> {
        self.config.check_head_mask_rows(mask.len())?;
        mask.iter().enumerate().try_for_each(|(l, row)| self.config.check_head_mask_row(l, row.len()))
    }

    /// The loss and the gradient of every parameter (the same order as [`Self::params`]), at the
    /// current weights. Nothing is updated.
    pub fn gradients(&mut self, tokens: &Tokens) -> Result<(f64, Vec<f64>, Vec<Vec<F>>)> {
        let (b, t, c, v) = (tokens.batch, tokens.t, self.config.embed_dim, self.config.vocab_size);
        let n = b * t;
        let pass = self.run(tokens, true, false, false, None, None, &[])?;
        // 7. loss = mean(−log softmax(logits)[next]): d logits = (softmax − onehot) / (B·(T − 1))
        let count = b * (t - 1);
        let (losses, d_logits) = ops::cross_entropy(&pass.logits, v, &tokens.targets(), Some(1.0 / count as f64));
        let d_logits = d_logits.expect("asked for the gradient");
        let mut grads: Vec<Vec<F>> = self.params.iter().map(|p| vec![F::ZERO; p.data.len()]).collect();
        let at = |model: &Self, layer: Option<usize>, name: &str| model.index(layer, name).expect("a parameter of this configuration");
        // 6. logits = u·W_U: d u = d logits·W_Uᵀ, d W_U = uᵀ·d logits (tied, logits = u·W_Eᵀ:
        //    d u = d logits·W_E, d W_E += d logitsᵀ·u)
        let d_u = if self.config.tied {
            let w_e = at(self, None, "W_E");
            ops::add_matmul_at(&d_logits, n, v, &pass.unembed_input, c, &mut grads[w_e]);
            ops::matmul(&d_logits, n, v, &self.params[w_e].data, c, None)
        } else {
            let w_u = at(self, None, "W_U");
            let d_u = ops::matmul_bt(&d_logits, n, v, &self.params[w_u].data, c);
            ops::add_matmul_at(&pass.unembed_input, n, c, &d_logits, v, &mut grads[w_u]);
            d_u
        };
        //    u = LN_f(x)
        let mut dx = self.norm_backward(None, "ln_final", d_u, pass.ln_final.as_ref(), &mut grads);
        let positions = self.config.positions.has_table().then(|| at(self, None, "W_pos"));
        for (l, kept) in pass.blocks.iter().enumerate().rev() {
            // 5. x = x + GELU(m·W_in + b_in)·W_out + b_out, m = LN2(x): dx gains the MLP's input gradient
            //    (gated: d act splits into d gate and d up, each back through its own projection)
            if let Some(mlp) = &kept.mlp {
                let f = self.config.mlp_width;
                let gated = self.config.mlp_kind == MlpKind::Gated;
                let [w_out, b_out] = if gated { ["W_down", "b_down"] } else { ["W_out", "b_out"] };
                let w_out = at(self, Some(l), w_out);
                ops::add_matmul_at(&mlp.act, n, f, &dx, c, &mut grads[w_out]);
                if let Some(b) = self.index(Some(l), b_out) {
                    ops::add_column_sums(&dx, c, &mut grads[b]);
                }
                let d_act = ops::matmul_bt(&dx, n, c, &self.params[w_out].data, f);
                let (d_pres, names) = if gated {
                    let (gate, up) = mlp.pre.split_at(n * f);
                    let (d_gate, d_up) = norm::gated_backward(&d_act, gate, up);
                    (vec![d_gate, d_up], &[["W_gate", "b_gate"], ["W_up", "b_up"]][..])
                } else {
                    (vec![ops::gelu_backward(&d_act, &mlp.pre)], &[["W_in", "b_in"]][..])
                };
                let mut d_input: Option<Vec<F>> = None;
                for (d_pre, [w, b]) in d_pres.iter().zip(names) {
                    let w = at(self, Some(l), w);
                    ops::add_matmul_at(&mlp.input, n, c, d_pre, f, &mut grads[w]);
                    if let Some(b) = self.index(Some(l), b) {
                        ops::add_column_sums(d_pre, f, &mut grads[b]);
                    }
                    let d = ops::matmul_bt(d_pre, n, f, &self.params[w].data, c);
                    match d_input.as_mut() {
                        Some(sum) => ops::add_into(sum, &d),
                        None => d_input = Some(d),
                    }
                }
                let d_input = d_input.expect("an MLP has an input projection");
                let d_x = self.norm_backward(Some(l), "ln2", d_input, mlp.ln2.as_ref(), &mut grads);
                ops::add_into(&mut dx, &d_x);
            }
            // 4. x = x + attention_l(q, k, v): the layer's backward gives d q, d k, d v and its weights' gradients
            let (BatchGrads { query: dq, key: dk, value: dv }, layer_grads) = self.with_layer(l, |model| {
                let inputs = model.attention[l].backward_batch(batch(&dx, b, t, c), true)?;
                Ok((inputs, model.attention[l].grads_in::<F>()?.into_owned()))
            })?;
            for (name, g) in layer_grads.tensors() {
                let i = at(self, Some(l), name);
                ops::add_into(&mut grads[i], g);
            }
            // 3. q = k = a (+ W_pos[t]), v = a: d a = d q + d k + d v; d W_pos[t] += d q + d k (shortformer)
            let mut da = dv;
            ops::add_into(&mut da, &dq);
            ops::add_into(&mut da, &dk);
            if let (Positions::Shortformer, Some(p)) = (self.config.positions, positions) {
                add_position_grads(&mut grads[p], &dq, t, c);
                add_position_grads(&mut grads[p], &dk, t, c);
            }
            // 2. a = LN1(x): dx gains d a through LN1 (the residual keeps dx itself)
            let d_x = self.norm_backward(Some(l), "ln1", da, kept.ln1.as_ref(), &mut grads);
            ops::add_into(&mut dx, &d_x);
        }
        // 1. x = W_E[token] (+ W_pos[t]): scatter dx into the rows that were read
        let w_e = at(self, None, "W_E");
        for (row, &tok) in dx.chunks_exact(c).zip(&tokens.data) {
            ops::add_into(&mut grads[w_e][tok as usize * c..(tok as usize + 1) * c], row);
        }
        if let (Positions::Learned, Some(p)) = (self.config.positions, positions) {
            add_position_grads(&mut grads[p], &dx, t, c);
        }
        for (param, g) in self.params.iter().zip(&grads) {
            if let Some(i) = g.iter().position(|x| !x.is_finite()) {
                return Err(AttentionError::range_error(format!(
                    "the gradient of {} entry {i} overflows to {}: beyond the largest {}; lower the learning rate or reset the weights",
                    param.path(),
                    crate::limits::non_finite_name(g[i].to_f64()),
                    F::LARGEST
                )));
            }
        }
        let (loss, losses) = mean_loss(&losses, tokens);
        Ok((loss, losses, grads))
    }

    /// The backward of [`Self::norm`]: `dy` itself without layer norm.
    fn norm_backward(&self, layer: Option<usize>, prefix: &str, dy: Vec<F>, kept: Option<&NormState<F>>, grads: &mut [Vec<F>]) -> Vec<F> {
        let Some(kept) = kept else { return dy };
        let wi = self.index(layer, &format!("{prefix}_w")).expect("LN gain");
        let mut dw = std::mem::take(&mut grads[wi]);
        let dx = match kept {
            NormState::Layer(kept) => {
                let bi = self.index(layer, &format!("{prefix}_b")).expect("LN bias");
                let mut db = std::mem::take(&mut grads[bi]);
                let dx = ops::layer_norm_backward(&dy, self.config.embed_dim, &self.params[wi].data, kept, &mut dw, &mut db);
                grads[bi] = db;
                dx
            }
            NormState::Rms(kept) => norm::rms_norm_backward(&dy, self.config.embed_dim, &self.params[wi].data, kept, &mut dw),
        };
        grads[wi] = dw;
        dx
    }

    /// One training step: the loss and gradients at the current weights, then one AdamW update
    /// of every parameter. A refused call (bad options, an overflow) changes nothing.
    pub fn train_step(&mut self, tokens: &Tokens, adamw: &AdamW) -> Result<(f64, Vec<f64>)> {
        adamw.check()?;
        let (loss, losses, grads) = self.gradients(tokens)?;
        let mut params = self.params.clone();
        let moments = self.optimizer.step(&mut params, &grads, adamw)?;
        self.refuse_runaway_step(&params, adamw)?;
        let attention = self.layers_for(&params)?;
        self.params = params;
        self.attention = attention;
        self.optimizer = moments;
        Ok((loss, losses))
    }

    /// A RangeError naming `options.learningRate` when the stepped `params` are so large that the
    /// next forward pass could overflow ([`bounds`]) while the current ones cannot: refused before
    /// anything changes, not left for the next call to trip over.
    fn refuse_runaway_step(&self, params: &[Param<F>], adamw: &AdamW) -> Result<()> {
        let Some((what, bound)) = bounds::forward_overflow(&self.config, params) else { return Ok(()) };
        if bounds::forward_overflow(&self.config, &self.params).is_some() {
            return Ok(()); // the weights were that large before the step: not the learning rate's doing
        }
        let (p, i) = (0..params.len())
            .flat_map(|p| (0..params[p].data.len()).map(move |i| (p, i)))
            .max_by(|&(a, i), &(b, j)| params[a].data[i].to_f64().abs().total_cmp(&params[b].data[j].to_f64().abs()))
            .expect("a model has parameters");
        Err(AttentionError::range_error(format!(
            "options.learningRate = {} is too large: this AdamW step would move {} entry {i} from {} to {}, and with weights that large the next forward pass can overflow {} ({what} could reach {}); lower the learning rate (the model was not changed)",
            bounds::magnitude_text(adamw.learning_rate),
            params[p].path(),
            bounds::magnitude_text(self.params[p].data[i].to_f64()),
            bounds::magnitude_text(params[p].data[i].to_f64()),
            F::LARGEST,
            bounds::magnitude_text(bound)
        )))
    }

    /// The head scores of every layer (outer) and head (inner) on `tokens`.
    pub fn head_scores(&mut self, tokens: &Tokens) -> Result<Vec<Vec<HeadScores>>> {
        let output = self.forward(tokens, true, None)?;
        let h = self.config.num_heads;
        Ok(output.weights.unwrap_or_default().iter().map(|w| scores::head_scores(w, &tokens.data, tokens.batch, h, tokens.t)).collect())
    }
}

/// `(mean, the per-next-token losses [B, T − 1])` from the per-row losses `[B, T]`.
pub(crate) fn mean_loss(per_row: &[f64], tokens: &Tokens) -> (f64, Vec<f64>) {
    let losses: Vec<f64> = per_row.chunks_exact(tokens.t).flat_map(|row| row[..tokens.t - 1].iter().copied()).collect();
    let loss = losses.iter().sum::<f64>() / losses.len() as f64;
    (loss, losses)
}

/// `grad[t] += d[b, t]` over the batch: W_pos's gradient from rows `(N, C)`.
fn add_position_grads<F: Real>(grad: &mut [F], d: &[F], t: usize, c: usize) {
    for (i, row) in d.chunks_exact(c).enumerate() {
        ops::add_into(&mut grad[(i % t) * c..(i % t + 1) * c], row);
    }
}

/// `(N, C)` rows as a `[B, T, C]` batch.
fn batch<F: Real>(data: &[F], b: usize, t: usize, c: usize) -> Batch<'_, F> {
    Batch::new(data, b, t, c)
}

/// A copy of `layer` whose heads with `on[i] = false` contribute nothing: W_O's rows for head i
/// (`i·d_head … (i+1)·d_head`) are zero, which is exactly zeroing that head's output before W_O.
fn ablated(layer: &MultiHeadAttention, on: &[bool]) -> Result<MultiHeadAttention> {
    let (mut copy, d) = (layer.clone(), layer.head_dimensions());
    let mut weights = layer.weights().into_owned();
    let c = weights.w_o.cols();
    for (head, _) in on.iter().enumerate().filter(|(_, &on)| !on) {
        weights.w_o.data_mut()[head * d * c..(head + 1) * d * c].fill(0.0);
    }
    copy.set_weights(weights)?;
    Ok(copy)
}

/// A RangeError unless `values` fits `shape` and is finite.
fn check_values<F: Real>(place: &str, values: &[F], shape: &[usize]) -> Result<()> {
    let want: usize = shape.iter().product();
    if values.len() != want {
        let shape_text = shape.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("×");
        return Err(AttentionError::range_error(format!("{place} has {} entries; expected {shape_text} = {want}", values.len())));
    }
    if let Some(i) = values.iter().position(|x| !x.is_finite()) {
        return Err(AttentionError::range_error(format!("{place} entry {i} is {}; expected a finite number", number_text(values[i].to_f64()))));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
