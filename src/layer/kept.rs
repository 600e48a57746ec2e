//! What a forward pass keeps for the backward pass, in the precision it ran in, and what the
//! passes return besides the output: the state between `forward.rs` and `backward.rs`.

use super::Weights;
use crate::precision::Family;
use crate::real::Real;

/// The input gradients of [`super::MultiHeadAttention::backward_batch`], flat: `[B, T_q, C]`,
/// `[B, T_k, C]`, `[B, T_k, C]` (and, of matrices, [`super::InputGrads`]).
#[derive(Clone, Debug, PartialEq)]
pub struct BatchGrads<F> {
    pub query: Vec<F>,
    pub key: Vec<F>,
    pub value: Vec<F>,
}

crate::by_precision_type! {
    /// What a forward pass kept for `backward`, in the precision it ran in.
    pub(crate) Kept = KeptIn: ForwardCache<F>;
}

crate::by_precision_type! {
    /// The parameter gradients of a `backward`, in the precision it ran in (read in another precision,
    /// they are converted then: see [`super::MultiHeadAttention::grads_in`]).
    pub Grads = WeightsIn: Weights<F>;
}

/// `&Weights` as a [`Family`] (to take a borrowed value in its own precision).
pub struct WeightsRef<'a>(std::marker::PhantomData<&'a ()>);

impl<'a> Family for WeightsRef<'a> {
    type Of<F: Real> = &'a Weights<F>;
}

/// One head's intermediates that the backward pass needs.
#[derive(Clone, Debug)]
pub(crate) struct HeadCache<F> {
    /// The softmax result, `(T_q, T_k)` row-major (keys a causal block skipped stay 0, as masked).
    pub weights: Vec<F>,
    /// With dropout: whether each entry was kept (factor `1/(1−p)`) or dropped (0).
    pub kept: Option<Vec<bool>>,
    /// The weights that multiplied V, when they are not `weights ⊙ factor` in this precision (a
    /// cache widened from f32 holds the f32 products).
    pub used: Option<Vec<F>>,
}

impl<F: Real> HeadCache<F> {
    /// `used = weights ⊙ factor` into `out` (`T_q × T_k`): the weights that multiplied V, with the
    /// forward's product (the same bits as the hook's).
    pub fn used_into(&self, keep_scale: Option<F>, out: &mut [F]) {
        match (&self.used, &self.kept, keep_scale) {
            (Some(used), _, _) => out.copy_from_slice(used),
            (None, Some(kept), Some(s)) => {
                for ((o, &w), &k) in out.iter_mut().zip(&self.weights).zip(kept) {
                    *o = w * if k { s } else { F::ZERO };
                }
            }
            _ => out.copy_from_slice(&self.weights),
        }
    }
}

/// One batch item's intermediates, row-major.
#[derive(Clone, Debug)]
pub(crate) struct ItemCache<F> {
    /// `(T_q, C)`, `(T_k, C)`, `(T_k, C)`; `x_k` and `x_v` are `None` when they hold x_q's bits
    /// (self-attention keeps one copy).
    pub x_q: Vec<F>,
    pub x_k: Option<Vec<F>>,
    pub x_v: Option<Vec<F>>,
    /// The projections (Q and K rotated when the layer has RoPE): `(T_q, C)`, `(T_k, C_kv)`, `(T_k, C_kv)`.
    pub q: Vec<F>,
    pub k: Vec<F>,
    pub v: Vec<F>,
    pub heads: Vec<HeadCache<F>>,
    /// `(T_q, C)`.
    pub concat: Vec<F>,
}

/// What the last forward pass kept.
#[derive(Clone, Debug)]
pub(crate) struct ForwardCache<F> {
    pub batched: bool,
    pub t_q: usize,
    pub t_k: usize,
    pub items: Vec<ItemCache<F>>,
    /// The positions of query 0 and key 0 (RoPE's angles, the causal rule and the window).
    pub positions: Positions,
    /// With dropout: the factor of a kept weight, `1/(1−p)` computed in f64 and rounded once.
    pub keep_scale: Option<F>,
}

impl ForwardCache<f32> {
    /// The kept f32 values widened exactly (for `backward_f64`): the dropout factor of a kept weight is
    /// the f32 one the forward multiplied by, and `used` the f32 products.
    pub(super) fn widen(&self) -> ForwardCache<f64> {
        let wide = |v: &[f32]| v.iter().map(|&x| f64::from(x)).collect::<Vec<f64>>();
        let mut used = vec![0.0f32; self.t_q * self.t_k];
        let items = self
            .items
            .iter()
            .map(|item| ItemCache {
                x_q: wide(&item.x_q),
                x_k: item.x_k.as_deref().map(wide),
                x_v: item.x_v.as_deref().map(wide),
                q: wide(&item.q),
                k: wide(&item.k),
                v: wide(&item.v),
                heads: item
                    .heads
                    .iter()
                    .map(|head| HeadCache {
                        weights: wide(&head.weights),
                        kept: head.kept.clone(),
                        used: head.kept.as_ref().map(|_| {
                            head.used_into(self.keep_scale, &mut used);
                            wide(&used)
                        }),
                    })
                    .collect(),
                concat: wide(&item.concat),
            })
            .collect();
        ForwardCache { batched: self.batched, t_q: self.t_q, t_k: self.t_k, items, positions: self.positions, keep_scale: self.keep_scale.map(f64::from) }
    }
}

/// Where the rows are in the sequence: query `i` at `query + i`, key `j` at `key + j`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Positions {
    pub query: usize,
    pub key: usize,
}

impl Positions {
    /// Without a cache: keys at `0 … T_k − 1`, queries the last `T_q` of them (`T_q > T_k` puts
    /// the first queries before every key, where the causal rule hides all of them).
    pub fn aligned(t_q: usize, t_k: usize) -> Self {
        Self { query: t_k.saturating_sub(t_q), key: 0 }
    }

    /// The engine's offset: position of query 0 minus that of key 0, with `T_q > T_k` counted.
    pub fn offset(&self, t_q: usize, t_k: usize) -> isize {
        self.query as isize - self.key as isize - t_q.saturating_sub(t_k) as isize
    }
}

