//! The model's configuration: its sizes and the kinds of its parts (positions, norm, MLP), checked.

use super::*;

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

    pub(crate) fn has_table(self) -> bool {
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

impl NormKind {
    /// The JS name: `'layer'` or `'rms'`.
    pub fn name(self) -> &'static str {
        match self {
            NormKind::Layer => "layer",
            NormKind::Rms => "rms",
        }
    }
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

    /// A RangeError for an option of a part the config leaves out, set to other than its default: the
    /// norm's options without `layerNorm`, the MLP's without `mlp`, `ropeBase` without `positions: 'rope'`
    /// (a value the model would silently ignore).
    pub fn check_parts(&self) -> Result<()> {
        let d = ModelConfig::new(self.vocab_size, self.context_length, self.embed_dim, self.num_heads, self.num_layers);
        let unused = |key: &str, value: String, part: &str| {
            Err(AttentionError::range_error(format!("config.{key} is {value} but {part}; the option would change nothing (leave it out, or turn the part on)")))
        };
        let (no_norms, no_mlp) = ("config.layerNorm is false: the model has no norms", "config.mlp is false: the model has no MLP");
        if !self.layer_norm && self.norm != d.norm {
            return unused("norm", format!("'{}'", self.norm.name()), no_norms);
        }
        if !self.layer_norm && self.norm_eps != d.norm_eps {
            return unused("normEps", crate::error::number_text(self.norm_eps), no_norms);
        }
        if !self.mlp && self.mlp_width != d.mlp_width {
            return unused("mlpWidth", self.mlp_width.to_string(), no_mlp);
        }
        if !self.mlp && !self.mlp_bias {
            return unused("mlpBias", "false".into(), no_mlp);
        }
        if self.positions != Positions::Rope && self.rope_base != d.rope_base {
            return unused("ropeBase", crate::error::number_text(self.rope_base), &format!("config.positions is '{}', not 'rope'", self.positions.name()));
        }
        Ok(())
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
    pub(crate) fn check(&self) -> Result<()> {
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
    pub(crate) fn check_shape(&self) -> Result<()> {
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
