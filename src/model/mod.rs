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
mod backward;
mod config;
mod decode;
mod packed;
mod params;
pub mod circuits;
pub(crate) mod bounds;
pub mod data;
pub mod norm;
pub mod ops;
pub mod paths;
pub mod scores;

use crate::engine::{Batch, Rope};
use crate::error::{number_text, AttentionError, Result};
use crate::init::{xavier_uniform, SplitMix64};
use crate::layer::{BatchGrads, BatchOutput, Biases, ForwardOptions, KvCache, LayerConfig, LayerKernel, MultiHeadAttention, Weights};
use crate::limits::check_working_set;
use crate::mask::Mask;
use crate::matrix::Matrix;
use crate::real::Real;
use adamw::{AdamW, Moments};
use norm::RmsKept;
use ops::NormKept;
use paths::{LayerInputs, PathCut};
pub use config::{MlpKind, ModelConfig, NormKind, Positions};
pub use packed::PACKED_MIN_PARAMETERS;
pub use params::{attention_params, ModelOutput, Param, Tokens};
use params::ATTENTION_NAMES;
pub use scores::HeadScores;

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
    /// One attention layer per block, holding no weights: [`Self::with_layer`] lends it the
    /// `layers[l].W_*` parameters for each call.
    attention: Vec<MultiHeadAttention>,
    optimizer: Moments<F>,
    /// Empty while the weights are row-major; between inference calls of a large float32 model, one entry
    /// per parameter: the layers' 2-D weights in the panel layout (their `params` entries left empty) and a
    /// tied W_E as the panels of W_Eᵀ (its `params` entry holding its last V mod 8 rows); see [`packed`].
    packed: Vec<Option<crate::kernels::PackedPanels>>,
}

impl<F: LayerKernel> Transformer<F> {
    /// A model with seeded Xavier-uniform weights: one SplitMix64 from `config.seed` fills W_E,
    /// W_pos, then draws one seed per attention layer (its own initialisation, see
    /// [`crate::init`]), fills each MLP's W_in and W_out, then W_U. Biases 0, LN gains 1.
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
            layer.hold_nothing(); // the parameters are lent for each call (with_layer)
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
        Ok(Self { config, params, attention, optimizer, packed: Vec::new() })
    }

    /// A model with the given parameters (every one `config` implies, in [`Self::params`]'s order,
    /// e.g. a checkpoint's): the attention layers are built from theirs; the optimizer starts at zero.
    /// The size is not checked here (the parameters exist already; the loader checks the checkpoint's
    /// memory before reading it, and a training call checks its own working set).
    pub fn from_params(config: ModelConfig, params: Vec<Param<F>>) -> Result<Self> {
        config.check_shape()?;
        let mut attention = Vec::with_capacity(config.num_layers);
        for l in 0..config.num_layers {
            let layer = MultiHeadAttention::holding_nothing(&Self::layer_config(&config, 0))?;
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
            attention.push(layer);
        }
        let optimizer = Moments::zeros(&params);
        Ok(Self { config, params, attention, optimizer, packed: Vec::new() })
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

    /// Every parameter, in a fixed order (the one `getWeights` lists). The weights must be row-major:
    /// call [`Self::row_major`] first on a model that may have run inference packed.
    pub fn params(&self) -> &[Param<F>] {
        assert!(!self.is_packed(), "params() of a model whose weights are packed: call row_major() first");
        &self.params
    }

    /// The AdamW state: moments and step.
    pub fn moments(&self) -> &Moments<F> {
        &self.optimizer
    }

    pub fn num_parameters(&self) -> usize {
        self.params.iter().map(|p| p.shape.iter().product::<usize>()).sum()
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
        self.row_major();
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
                layer.set_weights(weights)?; // its checks, then the weights lent for each call
                layer.hold_nothing();
                Ok(layer)
            })
            .collect()
    }

    /// Runs `f` with layer `l`'s weights lent to it from the parameters (moved, not copied: the model's
    /// layers hold no weights of their own, [`MultiHeadAttention::lend`]), and moves them back after.
    fn with_layer<R>(&mut self, l: usize, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        if self.is_packed() {
            return self.with_layer_panels(l, f);
        }
        let weights = self.take_attention(l);
        self.attention[l].lend(weights);
        let result = f(self);
        let back = self.attention[l].reclaim().expect("the weights lent above");
        self.put_attention(l, back);
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
        let mut x: Vec<F> = Vec::with_capacity(n * c);
        tokens.data.iter().for_each(|&tok| self.push_embedding(tok as usize, &mut x));
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
                let product = |w: &str, b: &str| self.product(Some(l), w, b, &input, n);
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
                let out = self.product(Some(l), out[0], out[1], &act, n);
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
            self.unembed_tied(&unembed_input, n)
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
        // head masks and cut paths copy weights row-major (W_O's rows, one head's columns)
        if head_mask.is_none() && cuts.is_empty() {
            self.pack_for_inference();
        } else {
            self.row_major();
        }
        let pass = self.run(tokens, false, need_weights, need_hidden, None, head_mask, cuts)?;
        let (losses, _) = ops::cross_entropy(&pass.logits, self.config.vocab_size, &tokens.targets(), None);
        let (loss, losses) = mean_loss(&losses, tokens);
        Ok(ModelOutput { logits: pass.logits, loss, losses, weights: pass.weights, hidden: pass.hidden })
    }

    fn check_head_mask(&self, mask: &[Vec<bool>]) -> Result<()> {
        self.config.check_head_mask_rows(mask.len())?;
        mask.iter().enumerate().try_for_each(|(l, row)| self.config.check_head_mask_row(l, row.len()))
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
