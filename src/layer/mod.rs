//! The multi-head attention layer with learned projections, as a transformer uses it:
//!
//! 1. project: `Q = x_q·W_Q + b_Q`, `K = x_k·W_K + b_K`, `V = x_v·W_V + b_V` (each W is `C × C`,
//!    stored `[in, out]`, so a row vector times W);
//! 2. per head `i` (columns `i·d_head .. (i+1)·d_head` of Q, K and V): scaled dot-product
//!    attention with scale `1/√d_head`, the mask, and (training only) dropout on the weights;
//! 3. concatenate the heads side by side and project: `output = concat·W_O + b_O`.
//!
//! Shapes: `x_q` is `(T_q, C)`, `x_k` and `x_v` are `(T_k, C)`; a batch is a list of such
//! items sharing one mask. `C = numberOfHeads · headDimensions` (h · d_head).
//!
//! [`MultiHeadAttention::backward`] differentiates the last forward pass and stores the
//! parameter gradients. Both passes are written once for f64 and f32 over [`LayerKernel`]; each
//! file's docs say what it holds. The seeded initialisation and the dropout stream are specified
//! bit for bit in [`init`] (`src/init.rs`: the model draws from the same generator).

mod backward;
mod cache;
mod forward;
mod kept;
mod kernel;
mod limits;
mod trace;
mod weights;
#[cfg(test)]
mod tests;

pub use backward::InputGrads;
pub use kept::{BatchGrads, Positions, WeightsIn, WeightsRef};
pub use cache::KvCache;
pub use forward::{BatchOutput, ForwardOptions, ForwardOutput};
pub use kernel::LayerKernel;
pub use limits::LayerLimits;
pub use weights::{Biases, Weights};

use crate::engine::Rope;
use crate::grouped_query::check_kv_heads;
use crate::error::{number_text, AttentionError, Result};
use crate::precision::{ByPrecision, Nothing, Precision};
use kept::{Grads, Kept};
use std::borrow::Cow;
use std::sync::OnceLock;
pub use crate::init; // the seeded generator, the layer's and the model's (it was `layer::init`)
use init::{xavier_uniform, SplitMix64, DROPOUT_STREAM};

/// How to build a layer with seeded weights.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerConfig {
    /// C, the model width (PyTorch's `embed_dim`).
    pub embed_dim: usize,
    /// numberOfHeads (h); must divide `embed_dim`.
    pub number_of_heads: usize,
    /// Whether the four projections have biases.
    pub bias: bool,
    /// Dropout probability on the attention weights during training, `0 ≤ p < 1`.
    pub dropout: f64,
    /// Seed of the weights and of the dropout stream (see [`init`]).
    pub seed: u64,
    /// The key/value heads (grouped-query attention); must divide `number_of_heads`.
    pub kv_heads: usize,
    /// Rotary position embedding of Q and K after projection, or none.
    pub rope: Option<Rope>,
}

impl LayerConfig {
    /// `embed_dim` C, `number_of_heads` h (and as many K/V heads), bias on, no dropout, seed 0, no RoPE.
    pub fn new(embed_dim: usize, number_of_heads: usize) -> Self {
        Self { embed_dim, number_of_heads, bias: true, dropout: 0.0, seed: 0, kv_heads: number_of_heads, rope: None }
    }
}

/// Multi-head attention with learned Q/K/V/output projections, masks, cross-attention,
/// batches, dropout and a backward pass. See the module docs for the computation.
#[derive(Clone, Debug)]
pub struct MultiHeadAttention {
    embed_dim: usize,
    number_of_heads: usize,
    head_dimensions: usize,
    /// The key/value heads (grouped-query attention), dividing `number_of_heads`.
    kv_heads: usize,
    /// Rotary position embedding of Q and K, after the projections.
    rope: Option<Rope>,
    dropout: f64,
    /// The weights in f64; `None` in a model's layer ([`Self::hold_nothing`]), or when f32 ones are lent (`packed_f32`).
    weights: Option<Weights>,
    /// Whether the projections have biases.
    bias: bool,
    dropout_rng: SplitMix64,
    /// What the last forward pass kept for `backward`, in its precision; cleared when the weights change.
    kept: Option<Kept>,
    /// The parameter gradients of the last `backward`, in its precision.
    grads: Option<Grads>,
    /// The weights rounded to f32 and packed for the f32 products ([`LayerKernel::prepared`]), built at
    /// the first f32 pass after construction or `set_weights`; or a model's f32 parameters, lent.
    packed_f32: OnceLock<kernel::PackedWeights>,
    /// What the last forward pass was, for `backward`'s message when it kept nothing.
    last_forward: LastForward,
    /// This layer's identity, which its KV caches carry.
    id: u64,
}

/// The kind of the last forward pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LastForward {
    /// None yet, or the weights changed since.
    None,
    /// One that kept what `backward` needs.
    Kept,
    /// An f32 forward in evaluation mode (its kernels keep no intermediates).
    Evaluation,
    /// A forward with a KV cache (decoding keeps no intermediates).
    Cached,
}

/// Why a layer holding no weights must not be asked for them (a model's internal invariant).
const NOTHING_HELD: &str = "a model's layer holds no weights between calls: the model lends them for each call";

/// The next layer identity (for [`KvCache`]'s owner check).
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl MultiHeadAttention {
    /// A layer with Xavier-uniform weights drawn from `config.seed` (each matrix with its own
    /// fan-in and fan-out) and zero biases.
    pub fn new(config: &LayerConfig) -> Result<Self> {
        let mut layer = Self::holding_nothing(config)?;
        let (c, kv_c) = (layer.embed_dim, layer.kv_heads * layer.head_dimensions);
        let mut rng = SplitMix64::new(config.seed);
        let cols = [c, kv_c, kv_c, c]; // W_Q, W_K, W_V, W_O, drawn in that order
        layer.weights = Some(Weights::from_parts(cols.map(|n| xavier_uniform(&mut rng, c, n)), config.bias.then(|| cols.map(|n| vec![0.0; n]))));
        Ok(layer)
    }

    /// A layer like [`Self::new`]'s holding no weights ([`Self::hold_nothing`]): a model's, whose
    /// weights are its parameters, lent for each call. Nothing is drawn.
    pub fn holding_nothing(config: &LayerConfig) -> Result<Self> {
        // the messages name the config's fields as JS passes them
        let (c, d) = check_split(config.embed_dim, config.number_of_heads, "config.embedDim", "config.numHeads")?;
        check_kv_heads(config.number_of_heads, config.kv_heads, "numHeads", "numKVHeads", "config.")?;
        check_dropout(config.dropout, "config.dropout")?;
        if let Some(r) = config.rope {
            Rope::check_width(d, "headDim")?;
            Rope::check_base(r.base, "config.rope.base")?;
        }
        Ok(Self {
            embed_dim: c,
            number_of_heads: config.number_of_heads,
            head_dimensions: d,
            kv_heads: config.kv_heads,
            rope: config.rope,
            dropout: config.dropout,
            bias: config.bias,
            weights: None,
            dropout_rng: SplitMix64::new(config.seed ^ DROPOUT_STREAM),
            kept: None,
            grads: None,
            packed_f32: OnceLock::new(),
            last_forward: LastForward::None,
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        })
    }

    /// A layer with the given weights (C is read from `weights.w_q`, the K/V heads from W_K's
    /// columns). `seed` starts the dropout stream.
    pub fn from_weights(weights: Weights, number_of_heads: usize, dropout: f64, seed: u64) -> Result<Self> {
        let (c, head_dimensions) = check_split(weights.w_q.rows(), number_of_heads, "C (the rows of W_Q)", "numHeads")?;
        check_dropout(dropout, "dropout")?;
        let kv_c = weights.w_k.cols();
        if kv_c == 0 || !kv_c.is_multiple_of(head_dimensions) {
            return Err(AttentionError::range_error(format!(
                "W_K is {} but its columns must be numKVHeads·headDim, a positive multiple of headDim = {head_dimensions}",
                weights.w_k.shape_text()
            )));
        }
        let kv_heads = kv_c / head_dimensions;
        check_kv_heads(number_of_heads, kv_heads, "numHeads", "numKVHeads (W_K's columns / headDim)", "")?;
        weights.check(c, kv_c)?;
        let mut layer = Self::holding_nothing(&LayerConfig { bias: weights.biases.is_some(), dropout, seed, kv_heads, ..LayerConfig::new(c, number_of_heads) })?;
        layer.weights = Some(weights);
        Ok(layer)
    }

    /// C.
    pub fn embed_dim(&self) -> usize {
        self.embed_dim
    }

    /// numberOfHeads (h).
    pub fn number_of_heads(&self) -> usize {
        self.number_of_heads
    }

    /// headDimensions (d_head) = C / h.
    pub fn head_dimensions(&self) -> usize {
        self.head_dimensions
    }

    /// The dropout probability.
    pub fn dropout(&self) -> f64 {
        self.dropout
    }

    /// The key/value heads.
    pub fn kv_heads(&self) -> usize {
        self.kv_heads
    }

    /// The rotary embedding, if any.
    pub fn rope(&self) -> Option<Rope> {
        self.rope
    }

    /// `2·C² + 2·C·C_kv` (+ `2·C + 2·C_kv` with biases), `C_kv = kv_heads·d_head`: `4·C² + 4·C`
    /// without grouping.
    pub fn num_parameters(&self) -> usize {
        let (c, kv_c) = (self.embed_dim, self.kv_heads * self.head_dimensions);
        2 * c * c + 2 * c * kv_c + if self.has_bias() { 2 * c + 2 * kv_c } else { 0 }
    }

    /// Whether the projections have biases.
    pub fn has_bias(&self) -> bool {
        self.bias
    }

    /// The weights in f64: the layer's own, or the f32 ones lent to it, widened (exact).
    pub fn weights(&self) -> Cow<'_, Weights> {
        self.weights_in().unwrap_or_else(|_| unreachable!("f32 → f64 is exact"))
    }

    /// Drops the layer's weights: a model's layer, whose weights are the model's parameters, lent for
    /// each call ([`Self::lend`]), so that they are held once. Until `set_weights`, the layer is used
    /// only with weights lent.
    pub fn hold_nothing(&mut self) {
        self.weights = None;
        self.packed_f32 = OnceLock::new();
    }

    /// Lends a model's parameters (moved, not copied) to a layer holding none ([`Self::hold_nothing`])
    /// for the calls until [`Self::reclaim`]. What the last forward kept stays: the same weights are
    /// lent again for its backward.
    pub fn lend<F: Precision>(&mut self, weights: Weights<F>) {
        debug_assert!(self.weights.is_none() && self.packed_f32.get().is_none(), "lend to a layer holding weights");
        match F::wrap::<WeightsIn>(weights) {
            ByPrecision::F64(w) => self.weights = Some(w),
            ByPrecision::F32(w) => self.packed_f32 = OnceLock::from(kernel::PackedWeights::lent(w)),
        }
    }

    /// The weights [`Self::lend`] lent, back; `None` when none are lent in `F`. (f64 weights lent are
    /// where a layer's own are: call it on a layer holding nothing of its own.)
    pub fn reclaim<F: Precision>(&mut self) -> Option<Weights<F>> {
        let lent = match F::wrap::<Nothing>(()) {
            ByPrecision::F64(()) => {
                self.packed_f32 = OnceLock::new(); // any f32 packing of them goes with them
                f64::wrap::<WeightsIn>(self.weights.take()?)
            }
            ByPrecision::F32(()) if self.packed_f32.get()?.lent && !self.packed_f32.get()?.is_lent_panels() => f32::wrap(self.packed_f32.take()?.into_lent()),
            ByPrecision::F32(()) => return None,
        };
        F::take(lent)
    }

    /// Lends a float32 model's W_Q, W_K, W_V, W_O already in the panel layout, and its biases (moved, not
    /// copied), to a layer holding none, for forward calls only until [`Self::reclaim_panels`]: the products
    /// read the panels with no packing (see the model's `pack_weights`). A backward needs the weights lent
    /// row-major ([`Self::lend`]).
    pub(crate) fn lend_panels(&mut self, panels: [crate::kernels::PackedPanels; 4], biases: Option<[Vec<f32>; 4]>) {
        debug_assert!(self.weights.is_none() && self.packed_f32.get().is_none(), "lend to a layer holding weights");
        self.packed_f32 = OnceLock::from(kernel::PackedWeights::lent_panels(panels, biases));
    }

    /// The panels and biases [`Self::lend_panels`] lent, back; `None` when none are lent so.
    pub(crate) fn reclaim_panels(&mut self) -> Option<kernel::LentPanels> {
        if !self.packed_f32.get()?.is_lent_panels() {
            return None;
        }
        Some(self.packed_f32.take()?.into_lent_panels())
    }

    /// Replaces the weights (same C, same bias presence). Forgets the last forward pass,
    /// whose cache no longer matches the weights.
    pub fn set_weights(&mut self, weights: Weights) -> Result<()> {
        weights.check(self.embed_dim, self.kv_heads * self.head_dimensions)?;
        if self.has_bias() != weights.biases.is_some() {
            return Err(AttentionError::type_error(match self.has_bias() {
                true => "setWeights: this layer has biases; give b_Q, b_K, b_V and b_O too",
                false => "setWeights: this layer was built with bias: false; b_Q, b_K, b_V and b_O are not accepted",
            }));
        }
        self.weights = Some(weights);
        self.kept = None;
        self.grads = None;
        self.packed_f32 = OnceLock::new();
        self.last_forward = LastForward::None;
        Ok(())
    }

    /// The parameter gradients of the last `backward` in f64, or a `State` error before any.
    /// After an f32 backward they are the f32 gradients, widened exactly.
    pub fn grads(&self) -> Result<Cow<'_, Weights>> {
        self.grads_in()
    }

    /// The parameter gradients of the last `backward` in precision `F`: the stored ones when the
    /// backward ran in `F` (no copy), else converted ([`Weights::to_precision`]).
    pub fn grads_in<F: Precision>(&self) -> Result<Cow<'_, Weights<F>>> {
        let grads = self.grads.as_ref().ok_or_else(|| AttentionError::State("grads() has nothing to return yet: call forward and then backward first".into()))?;
        crate::by_precision!(grads, g => g.to_precision("grads()"))
    }

    /// The weights in precision `F`: the layer's own (f64, no copy), or rounded ([`Weights::to_precision`]);
    /// a layer holding f32 only unpacks them.
    pub fn weights_in<F: Precision>(&self) -> Result<Cow<'_, Weights<F>>> {
        match (&self.weights, self.packed_f32.get()) {
            (Some(w), _) => w.to_precision("getWeights()"),
            (None, Some(packed)) => Ok(Cow::Owned(packed.unpack().to_precision::<F>("getWeights()")?.into_owned())),
            (None, None) => unreachable!("{NOTHING_HELD}"),
        }
    }
}

/// Checks `C > 0`, `h > 0` and `h | C`, and that the weights fit; returns `(C, d_head)`.
fn check_split(c: usize, number_of_heads: usize, c_name: &str, h_name: &str) -> Result<(usize, usize)> {
    if c == 0 {
        return Err(AttentionError::range_error(format!("{c_name} is 0; expected a positive integer")));
    }
    if number_of_heads == 0 {
        return Err(AttentionError::range_error(format!("{h_name} is 0; expected a positive integer")));
    }
    if !c.is_multiple_of(number_of_heads) {
        return Err(AttentionError::range_error(format!(
            "{c_name} = {c} is not divisible by numHeads = {number_of_heads}: each head takes C / numHeads columns"
        )));
    }
    // the four C × C weights, and the copy `setWeights` makes (the count in u128, the message with the usize)
    let n = c as u128;
    crate::limits::check_working_set(8 * n * n + 8 * n, || {
        format!("a layer with embedDim = {c} (four {c}×{c} weights, and a copy of them while they are replaced)")
    })?;
    Ok((c, c / number_of_heads))
}

fn check_dropout(p: f64, name: &str) -> Result<()> {
    if (0.0..1.0).contains(&p) {
        Ok(())
    } else {
        Err(AttentionError::range_error(format!("{name} is {}; expected a probability with 0 ≤ dropout < 1", number_text(p))))
    }
}
