//! The model's circuits (Elhage et al. 2021, "A Mathematical Framework for Transformer
//! Circuits"), read from the weights alone: no tokens are run.
//!
//! In the package's row convention (x·W), head h of a layer, with W_Q^h, W_K^h, W_V^h the head's
//! `d_head` columns of W_Q, W_K, W_V and W_O^h the head's `d_head` rows of W_O:
//!
//! ```text
//! W_QK^h = W_Q^h·(W_K^h)ᵀ          (C × C)   query side on the left: score = x_q·W_QK·x_kᵀ
//! W_OV^h = W_V^h·W_O^h             (C × C)   what the head writes: x·W_OV
//! composition(A, B) = ‖A·B‖_F / (‖A‖_F·‖B‖_F)
//!   Q: A = W_OV(l1, i), B = W_QK(l2, j);  K: B = W_QK(l2, j)ᵀ;  V: B = W_OV(l2, j)   (l1 < l2)
//! OV circuit    W_E·W_OV·W_U       (V × V)   row: the attended token, column: the logit it raises
//! QK circuit    W_E·W_QK·W_Eᵀ      (V × V)   row: the query's token, column: the key's token
//! positional    W_pos·W_QK·W_posᵀ  (contextLength × contextLength)
//! copying score Σ Re λ / Σ |λ| over the eigenvalues λ of W_E·W_OV·W_U
//! ```
//!
//! These are the direct paths: the token and position embeddings as a head's only inputs, layer
//! norm (when the model has it) not folded in, the MLPs left out (as TransformerLens computes them
//! from the weights). Everything is computed in f64, from the weights of either dtype.
//!
//! The copying score's eigenvalues: W_E·W_V^h·W_O^h·W_U (V × V) has rank ≤ d_head, and the
//! non-zero eigenvalues of a product do not change when its factors are rotated, so they are the
//! eigenvalues of W_O^h·W_U·W_E·W_V^h (d_head × d_head), found with nalgebra's real Schur form
//! (`complex_eigenvalues`). Zero eigenvalues add nothing to either sum.

use super::{Positions, Transformer};
use crate::error::{AttentionError, Result};
use crate::init::SplitMix64;
use crate::layer::LayerKernel;
use crate::matrix::Matrix;

/// How many random pairs [`baseline`] averages.
pub const BASELINE_SAMPLES: usize = 200;
/// The seed of [`baseline`]'s draws (fixed: the baseline depends only on C and d_head).
pub const BASELINE_SEED: u64 = 0x0C1C_C017;

/// Q-, K- and V-composition of every pair of heads, `[l1, i, l2, j]` row-major (`L·h·L·h`
/// entries), NaN where `l1 ≥ l2`; and the random baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct CompositionScores {
    pub q: Vec<f64>,
    pub k: Vec<f64>,
    pub v: Vec<f64>,
    /// The mean score of [`BASELINE_SAMPLES`] pairs of random matrices of the same shapes.
    pub baseline: f64,
}

/// One head's circuits, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Circuits {
    /// W_E·W_OV·W_U, `V × V`.
    pub ov: Vec<f64>,
    /// W_E·W_QK·W_Eᵀ, `V × V`.
    pub qk: Vec<f64>,
    /// W_pos·W_QK·W_posᵀ, `contextLength × contextLength`, where queries and keys see W_pos
    /// (`shortformer`, `learned`); `None` for `rope` and `none`.
    pub qk_positional: Option<Vec<f64>>,
    /// Σ Re λ / Σ |λ| over the eigenvalues of the OV circuit; NaN when they are all 0.
    pub copying_score: f64,
    /// The eigenvalues (re, im) the copying score is computed from (the d_head of the factored form).
    pub eigenvalues: Vec<(f64, f64)>,
}

/// `‖M‖_F`.
fn frobenius(m: &Matrix) -> f64 {
    m.data().iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// ‖A·B‖_F / (‖A‖_F·‖B‖_F) (NaN when A or B is 0).
pub fn composition(a: &Matrix, b: &Matrix) -> f64 {
    let ab = a.matmul(b).expect("C × C by C × C");
    frobenius(&ab) / (frobenius(a) * frobenius(b))
}

/// The expected composition score of unrelated heads: the mean of ‖A·B‖/(‖A‖‖B‖) over
/// [`BASELINE_SAMPLES`] pairs A = G1·G2, B = G3·G4 of products of independent `C × d_head` and
/// `d_head × C` factors with entries uniform in [−1, 1) (the distribution of the model's
/// Xavier-uniform initialisation, up to a scale the ratio does not see), drawn from SplitMix64
/// seeded with [`BASELINE_SEED`]. The same for Q, K and V: their B's have the same shapes and
/// distribution. About 1/√C for large C (the ratio of the expected squared norms is exactly 1/C).
pub fn baseline(c: usize, d: usize) -> f64 {
    let mut rng = SplitMix64::new(BASELINE_SEED);
    let mut draw = |rows: usize, cols: usize| {
        let data = (0..rows * cols).map(|_| 2.0 * rng.next_unit() - 1.0).collect();
        Matrix::new(rows, cols, data).expect("a shape with its entries")
    };
    let mut sum = 0.0;
    for _ in 0..BASELINE_SAMPLES {
        let a = draw(c, d).matmul(&draw(d, c)).expect("factors");
        let b = draw(c, d).matmul(&draw(d, c)).expect("factors");
        sum += composition(&a, &b);
    }
    sum / BASELINE_SAMPLES as f64
}

/// Σ Re λ / Σ |λ| (NaN when every λ is 0).
pub fn copying_score(eigenvalues: &[(f64, f64)]) -> f64 {
    let re: f64 = eigenvalues.iter().map(|&(re, _)| re).sum();
    let abs: f64 = eigenvalues.iter().map(|&(re, im)| re.hypot(im)).sum();
    if abs == 0.0 {
        f64::NAN
    } else {
        re / abs
    }
}

/// The eigenvalues (re, im) of a square matrix (nalgebra's real Schur decomposition).
pub fn eigenvalues(m: &Matrix) -> Vec<(f64, f64)> {
    let n = m.rows();
    let square = nalgebra::DMatrix::from_row_slice(n, n, m.data());
    square.complex_eigenvalues().iter().map(|z| (z.re, z.im)).collect()
}

impl<F: LayerKernel> Transformer<F> {
    /// A parameter as an f64 matrix of its shape.
    fn matrix(&self, layer: Option<usize>, name: &str) -> Matrix {
        let i = self.index(layer, name).expect("a parameter of this configuration");
        let p = &self.params[i];
        let values: Vec<f64> = match self.panels(i) {
            // kept packed (see `packed`): W_E as the panels of W_Eᵀ, the layers' weights as their own
            Some(_) if layer.is_none() && name == "W_E" => {
                let mut rows = Vec::with_capacity(p.shape[0] * p.shape[1]);
                (0..p.shape[0]).for_each(|token| self.push_embedding(token, &mut rows));
                rows.iter().map(|x| x.to_f64()).collect()
            }
            Some(panels) => panels.unpack().into_iter().map(f64::from).collect(),
            None => p.data.iter().map(|x| x.to_f64()).collect(),
        };
        Matrix::new(p.shape[0], p.shape[1], values).expect("a 2-D parameter")
    }

    /// `(W_Q^h, W_K^h, W_V^h, W_O^h)` of head `head` of layer `layer`: C × d, C × d, C × d, d × C.
    fn head_weights(&self, layer: usize, head: usize) -> [Matrix; 4] {
        let d = self.config.embed_dim / self.config.num_heads;
        let (from, to) = (head * d, (head + 1) * d);
        let columns = |name: &str| self.matrix(Some(layer), name).slice_columns(from, to).expect("the head's columns");
        [columns("W_Q"), columns("W_K"), columns("W_V"), self.matrix(Some(layer), "W_O").slice_rows(from, to).expect("the head's rows")]
    }

    /// `(W_QK, W_OV)` of one head, both C × C.
    pub fn head_circuit_matrices(&self, layer: usize, head: usize) -> (Matrix, Matrix) {
        let [w_q, w_k, w_v, w_o] = self.head_weights(layer, head);
        (w_q.matmul_transposed(&w_k).expect("C × d by (C × d)ᵀ"), w_v.matmul(&w_o).expect("C × d by d × C"))
    }

    /// Q-, K- and V-composition of every pair of heads in an earlier and a later layer.
    pub fn composition_scores(&self) -> CompositionScores {
        let (l, h) = (self.config.num_layers, self.config.num_heads);
        let heads: Vec<Vec<(Matrix, Matrix)>> = (0..l).map(|layer| (0..h).map(|head| self.head_circuit_matrices(layer, head)).collect()).collect();
        let mut scores = CompositionScores { q: vec![f64::NAN; l * h * l * h], k: vec![f64::NAN; l * h * l * h], v: vec![f64::NAN; l * h * l * h], baseline: 0.0 };
        for (l1, earlier) in heads.iter().enumerate() {
            for (i, (_, ov)) in earlier.iter().enumerate() {
                for (l2, later) in heads.iter().enumerate().skip(l1 + 1) {
                    for (j, (qk, ov2)) in later.iter().enumerate() {
                        let at = ((l1 * h + i) * l + l2) * h + j;
                        scores.q[at] = composition(ov, qk);
                        scores.k[at] = composition(ov, &qk.transpose());
                        scores.v[at] = composition(ov, ov2);
                    }
                }
            }
        }
        scores.baseline = baseline(self.config.embed_dim, self.config.embed_dim / h);
        scores
    }

    /// RangeError unless `layer` and `head` name a head of this model.
    pub fn check_head(&self, layer: usize, head: usize, place: &str) -> Result<()> {
        let (l, h) = (self.config.num_layers, self.config.num_heads);
        if layer >= l {
            return Err(AttentionError::range_error(format!("{place}.layer is {layer}; expected 0 … numLayers − 1 = {}", l as i64 - 1)));
        }
        if head >= h {
            return Err(AttentionError::range_error(format!("{place}.head is {head}; expected 0 … numHeads − 1 = {}", h - 1)));
        }
        Ok(())
    }

    /// One head's OV and QK circuits and its copying score (see the module docs).
    pub fn circuits(&self, layer: usize, head: usize) -> Result<Circuits> {
        self.check_head(layer, head, "options")?;
        let (w_qk, w_ov) = self.head_circuit_matrices(layer, head);
        let (w_e, w_u) = (self.matrix(None, "W_E"), self.matrix(None, "W_U"));
        let ov = w_e.matmul(&w_ov).and_then(|m| m.matmul(&w_u)).expect("V × C · C × C · C × V");
        let qk = w_e.matmul(&w_qk).and_then(|m| m.matmul_transposed(&w_e)).expect("V × C · C × C · (V × C)ᵀ");
        let qk_positional = match self.config.positions {
            Positions::Shortformer | Positions::Learned => {
                let w_pos = self.matrix(None, "W_pos");
                Some(w_pos.matmul(&w_qk).and_then(|m| m.matmul_transposed(&w_pos)).expect("pos × C · C × C · (pos × C)ᵀ").into_data())
            }
            Positions::Rope | Positions::None => None,
        };
        // the non-zero eigenvalues of W_E·W_V·W_O·W_U are those of W_O·W_U·W_E·W_V (d × d)
        let [_, _, w_v, w_o] = self.head_weights(layer, head);
        let small = w_o.matmul(&w_u).and_then(|m| m.matmul(&w_e)).and_then(|m| m.matmul(&w_v)).expect("d × C · C × V · V × C · C × d");
        let eigenvalues = eigenvalues(&small);
        Ok(Circuits { ov: ov.into_data(), qk: qk.into_data(), qk_positional, copying_score: copying_score(&eigenvalues), eigenvalues })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelConfig;

    #[test]
    fn eigenvalues_of_a_rotation_and_a_diagonal() {
        // a 90° rotation: ±i, no real part, so a copying score of 0
        let rotation = Matrix::new(2, 2, vec![0.0, -1.0, 1.0, 0.0]).unwrap();
        let mut ev = eigenvalues(&rotation);
        ev.sort_by(|a, b| a.1.total_cmp(&b.1));
        assert!((ev[0].0).abs() < 1e-15 && (ev[0].1 + 1.0).abs() < 1e-15 && (ev[1].1 - 1.0).abs() < 1e-15, "{ev:?}");
        assert_eq!(copying_score(&ev).abs() < 1e-15, true);
        // diag(2, −1): (2 − 1) / (2 + 1)
        let diag = Matrix::new(2, 2, vec![2.0, 0.0, 0.0, -1.0]).unwrap();
        assert!((copying_score(&eigenvalues(&diag)) - 1.0 / 3.0).abs() < 1e-15);
    }

    #[test]
    fn composition_of_aligned_and_orthogonal_products() {
        // A writes into direction 0; B reads direction 0 (score 1) or direction 1 (score 0)
        let e = |r: usize, c: usize| {
            let mut m = Matrix::zeros(3, 3);
            m.data_mut()[r * 3 + c] = 1.0;
            m
        };
        assert_eq!(composition(&e(0, 0), &e(0, 2)), 1.0);
        assert_eq!(composition(&e(0, 0), &e(1, 2)), 0.0);
        assert!(composition(&Matrix::zeros(3, 3), &e(1, 2)).is_nan());
    }

    #[test]
    fn baseline_is_near_one_over_root_c_and_deterministic() {
        let b = baseline(64, 16);
        assert_eq!(b, baseline(64, 16));
        assert!((b - 0.125).abs() < 0.02, "{b}");
    }

    #[test]
    fn the_factored_eigenvalues_give_the_full_circuits_trace() {
        // Σ λ = trace: the trace of the V × V OV circuit equals Σ Re λ of the d × d form
        let config = ModelConfig { seed: 5, ..ModelConfig::new(11, 8, 8, 2, 2) };
        let model = Transformer::<f64>::new(config).unwrap();
        for (layer, head) in [(0, 0), (1, 1)] {
            let c = model.circuits(layer, head).unwrap();
            let trace: f64 = (0..11).map(|i| c.ov[i * 11 + i]).sum();
            let re: f64 = c.eigenvalues.iter().map(|z| z.0).sum();
            assert!((trace - re).abs() < 1e-12 * (1.0 + trace.abs()), "{trace} {re}");
            assert!(c.copying_score.abs() <= 1.0);
        }
        let s = model.composition_scores();
        let at = |l1: usize, i: usize, l2: usize, j: usize| ((l1 * 2 + i) * 2 + l2) * 2 + j;
        assert!(s.q[at(0, 0, 0, 1)].is_nan() && s.v[at(1, 0, 0, 1)].is_nan(), "l1 ≥ l2 is NaN");
        assert!(s.k[at(0, 1, 1, 1)].is_finite());
    }
}
