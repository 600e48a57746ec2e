//! The layer's parameters and their gradients, [`Weights`], one type over the precision (the model
//! keeps one per layer).

use super::WeightsRef;
use crate::error::{number_text, AttentionError, Result};
use crate::matrix::Matrix;
use crate::precision::Precision;
use crate::real::Real;
use std::borrow::Cow;

/// The four projection biases: b_Q and b_O of length C, b_K and b_V of the K/V width.
#[derive(Clone, Debug, PartialEq)]
pub struct Biases<F = f64> {
    pub b_q: Vec<F>,
    pub b_k: Vec<F>,
    pub b_v: Vec<F>,
    pub b_o: Vec<F>,
}

/// The layer's parameters (and, with the same layout, their gradients; the layer holds its
/// weights in f64, or none when a float32 model lends it its f32 parameters, and an f32 backward's
/// gradients in f32). W_Q and W_O are `C × C`, W_K and
/// W_V `C × (kv_heads·d_head)`, oriented `[in, out]`: the layer computes `x·W + b`.
#[derive(Clone, Debug, PartialEq)]
pub struct Weights<F = f64> {
    pub w_q: Matrix<F>,
    pub w_k: Matrix<F>,
    pub w_v: Matrix<F>,
    pub w_o: Matrix<F>,
    /// `None` for a layer built with `bias: false`.
    pub biases: Option<Biases<F>>,
}

impl<F> Biases<F> {
    /// `[b_Q, b_K, b_V, b_O]`.
    pub fn slices(&self) -> [&[F]; 4] {
        [&self.b_q, &self.b_k, &self.b_v, &self.b_o]
    }
}

impl<F> Weights<F> {
    /// The weights from `[W_Q, W_K, W_V, W_O]` and `[b_Q, b_K, b_V, b_O]`.
    pub fn from_parts([w_q, w_k, w_v, w_o]: [Matrix<F>; 4], biases: Option<[Vec<F>; 4]>) -> Self {
        Self { w_q, w_k, w_v, w_o, biases: biases.map(|[b_q, b_k, b_v, b_o]| Biases { b_q, b_k, b_v, b_o }) }
    }
}

impl<F: Real> Weights<F> {
    /// All zeros: W_Q and W_O `C × C`, W_K and W_V `C × C_kv`, and with `bias` the biases.
    pub fn zeros(c: usize, kv_c: usize, bias: bool) -> Self {
        let cols = [c, kv_c, kv_c, c];
        Self::from_parts(cols.map(|n| Matrix::zeros(c, n)), bias.then(|| cols.map(|n| vec![F::ZERO; n])))
    }

    /// Every entry widened or rounded to `G` (f32 → f64 is exact).
    pub fn cast<G: Real>(&self) -> Weights<G> {
        let bias = |v: &[F]| v.iter().map(|&x| G::from_f64(x.to_f64())).collect();
        Weights::from_parts([&self.w_q, &self.w_k, &self.w_v, &self.w_o].map(Matrix::cast), self.biases.as_ref().map(|b| b.slices().map(bias)))
    }

    /// Every parameter tensor by its JS name (`W_Q`, …, `b_O`), flattened row-major.
    pub fn tensors(&self) -> Vec<(&'static str, &[F])> {
        let mut out = vec![("W_Q", self.w_q.data()), ("W_K", self.w_k.data()), ("W_V", self.w_v.data()), ("W_O", self.w_o.data())];
        if let Some(b) = &self.biases {
            out.extend([("b_Q", &b.b_q[..]), ("b_K", &b.b_k[..]), ("b_V", &b.b_v[..]), ("b_O", &b.b_o[..])]);
        }
        out
    }
}

impl<G: Precision> Weights<G> {
    /// These values in precision `F`: borrowed when `F` is their own, else converted (f32 → f64 is
    /// exact; f64 → f32 rounds, and an entry beyond the largest f32 is a RangeError naming
    /// `{what}.W_Q` … and the entry).
    pub fn to_precision<F: Precision>(&self, what: &str) -> Result<Cow<'_, Weights<F>>> {
        if let Some(same) = F::take(G::wrap::<WeightsRef<'_>>(self)) {
            return Ok(Cow::Borrowed(same));
        }
        let converted: Weights<F> = self.cast();
        for (name, data) in converted.tensors() {
            if let Some(i) = data.iter().position(|x| !x.is_finite()) {
                return Err(AttentionError::range_error(format!(
                    "{what}.{name} entry {i} is beyond the largest {}: read it with dtype '{}'",
                    F::LARGEST,
                    G::DTYPE
                )));
            }
        }
        Ok(Cow::Owned(converted))
    }
}

impl Weights {
    /// Checks that W_Q and W_O are `c × c` and W_K and W_V `c × kv_c`, that the biases have
    /// their lengths, and that all entries are finite.
    pub(super) fn check(&self, c: usize, kv_c: usize) -> Result<()> {
        for (name, w, cols) in [("W_Q", &self.w_q, c), ("W_K", &self.w_k, kv_c), ("W_V", &self.w_v, kv_c), ("W_O", &self.w_o, c)] {
            if w.shape() != (c, cols) {
                let rule = if cols == c { format!("C×C = {c}×{c}") } else { format!("C×(numKVHeads·headDim) = {c}×{cols}") };
                return Err(AttentionError::range_error(format!(
                    "{name} is {} but must be {rule} (oriented [in, out]: the layer computes x·{name})",
                    w.shape_text()
                )));
            }
        }
        if let Some(b) = &self.biases {
            for (name, v, len) in [("b_Q", &b.b_q, c), ("b_K", &b.b_k, kv_c), ("b_V", &b.b_v, kv_c), ("b_O", &b.b_o, c)] {
                if v.len() != len {
                    let rule = if len == c { format!("C = {c}") } else { format!("numKVHeads·headDim = {len}") };
                    return Err(AttentionError::range_error(format!("{name} has {} entries but must have {rule}", v.len())));
                }
            }
        }
        for (name, data) in self.tensors() {
            if let Some(i) = data.iter().position(|x| !x.is_finite()) {
                return Err(AttentionError::range_error(format!(
                    "{name} entry {i} is {}; expected a finite number",
                    number_text(data[i])
                )));
            }
        }
        Ok(())
    }
}
