//! The two parts a Llama-family block has and the package's own model does not, written once over
//! the precision (`F: Real`; the products around them go through [`crate::model::ops::matmul`]),
//! each with its backward:
//!
//! ```text
//! RMSNorm (Zhang & Sennrich 2019; transformers' LlamaRMSNorm), per row of n columns:
//!     y = x / √(mean(x²) + ε) ⊙ w                 (weight only: no centring, no bias)
//!     dx = (1/r)·(dx̂ − x̂·mean(dx̂ ⊙ x̂)),  dx̂ = dy ⊙ w,  x̂ = x / r,  r = √(mean(x²) + ε);  dw += dy ⊙ x̂
//! SiLU-gated MLP (Shazeer 2020, "SwiGLU"; transformers' LlamaMLP):
//!     MLP(x) = (SiLU(x·W_gate + b_gate) ⊙ (x·W_up + b_up))·W_down + b_down,   SiLU(u) = u·σ(u)
//!     the gate's backward: d_up = d ⊙ SiLU(g),  d_gate = d ⊙ u ⊙ σ(g)·(1 + g·(1 − σ(g)))
//! ```

use crate::real::Real;

/// What RMSNorm keeps for its backward: the normalised rows and each row's `1/r`.
#[derive(Clone, Debug, Default)]
pub struct RmsKept<F> {
    pub x_hat: Vec<F>,
    pub inv_rms: Vec<F>,
}

/// RMSNorm of each row of `x (rows × n)` with gain `w` (see the module docs).
pub fn rms_norm<F: Real>(x: &[F], n: usize, w: &[F], eps: f64) -> (Vec<F>, RmsKept<F>) {
    let (eps, width) = (F::from_f64(eps), F::from_usize(n));
    let mut y = vec![F::ZERO; x.len()];
    let mut kept = RmsKept { x_hat: vec![F::ZERO; x.len()], inv_rms: Vec::with_capacity(x.len() / n.max(1)) };
    for ((row, out), hat) in x.chunks_exact(n).zip(y.chunks_exact_mut(n)).zip(kept.x_hat.chunks_exact_mut(n)) {
        let mean_square = row.iter().fold(F::ZERO, |s, &v| s + v * v) / width;
        let inv = F::ONE / (mean_square + eps).sqrt();
        for i in 0..n {
            hat[i] = row[i] * inv;
            out[i] = hat[i] * w[i];
        }
        kept.inv_rms.push(inv);
    }
    (y, kept)
}

/// The backward of [`rms_norm`]: returns `dx`, adds to `dw`.
pub fn rms_norm_backward<F: Real>(dy: &[F], n: usize, w: &[F], kept: &RmsKept<F>, dw: &mut [F]) -> Vec<F> {
    let width = F::from_usize(n);
    let mut dx = vec![F::ZERO; dy.len()];
    for (r, ((d_row, hat), out)) in dy.chunks_exact(n).zip(kept.x_hat.chunks_exact(n)).zip(dx.chunks_exact_mut(n)).enumerate() {
        let mut mean_dh = F::ZERO;
        for i in 0..n {
            mean_dh += d_row[i] * w[i] * hat[i];
            dw[i] += d_row[i] * hat[i];
        }
        let mean_dh = mean_dh / width;
        for i in 0..n {
            out[i] = kept.inv_rms[r] * (d_row[i] * w[i] - hat[i] * mean_dh);
        }
    }
    dx
}

/// σ(u) = 1 / (1 + e^(−u)) (exact at ±∞: 1 and 0).
fn sigmoid<F: Real>(u: F) -> F {
    F::ONE / (F::ONE + (-u).exp())
}

/// SiLU(u) = u·σ(u).
pub fn silu<F: Real>(u: F) -> F {
    u * sigmoid(u)
}

/// The gate: `SiLU(gate) ⊙ up`, element-wise.
pub fn gated<F: Real>(gate: &[F], up: &[F]) -> Vec<F> {
    gate.iter().zip(up).map(|(&g, &u)| silu(g) * u).collect()
}

/// The backward of [`gated`]: `(d_gate, d_up)` from `d`.
pub fn gated_backward<F: Real>(d: &[F], gate: &[F], up: &[F]) -> (Vec<F>, Vec<F>) {
    let mut d_gate = Vec::with_capacity(d.len());
    let mut d_up = Vec::with_capacity(d.len());
    for ((&d, &g), &u) in d.iter().zip(gate).zip(up) {
        let s = sigmoid(g);
        d_up.push(d * g * s);
        d_gate.push(d * u * s * (F::ONE + g * (F::ONE - s)));
    }
    (d_gate, d_up)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{check_gradient, seeded_values as seeded};

    #[test]
    fn rms_norm_matches_its_formula() {
        let (n, x, w) = (4, seeded(12, 1), seeded(4, 2));
        let (y, _) = rms_norm(&x, n, &w, 1e-6);
        for (row, out) in x.chunks(n).zip(y.chunks(n)) {
            let r = (row.iter().map(|v| v * v).sum::<f64>() / n as f64 + 1e-6).sqrt();
            for i in 0..n {
                assert!((out[i] - row[i] / r * w[i]).abs() <= 1e-15 * (1.0 + out[i].abs()));
            }
        }
        // a zero row stays zero (ε keeps the division finite)
        assert_eq!(rms_norm(&[0.0f32; 3], 3, &[1.0; 3], 1e-6).0, vec![0.0; 3]);
    }

    #[test]
    fn rms_norm_backward_matches_central_differences() {
        let (n, x, w, dy) = (5, seeded(15, 3), seeded(5, 4), seeded(15, 5));
        let loss = |x: &[f64], w: &[f64]| rms_norm(x, n, w, 1e-5).0.iter().zip(&dy).map(|(y, d)| y * d).sum::<f64>();
        let (_, kept) = rms_norm(&x, n, &w, 1e-5);
        let mut dw = vec![0.0; n];
        let dx = rms_norm_backward(&dy, n, &w, &kept, &mut dw);
        check_gradient(&x, &dx, |x| loss(x, &w));
        check_gradient(&w, &dw, |w| loss(&x, w));
    }

    #[test]
    fn gate_matches_its_formula_and_derivative() {
        let (gate, up, d): (Vec<f64>, Vec<f64>, Vec<f64>) = (seeded(20, 6).iter().map(|v| 6.0 * v).collect(), seeded(20, 7), seeded(20, 8));
        for ((&g, &u), &y) in gate.iter().zip(&up).zip(&gated(&gate, &up)) {
            let want = g / (1.0 + (-g).exp()) * u;
            assert!((y - want).abs() <= 1e-15 * (1.0 + want.abs()));
        }
        let (d_gate, d_up) = gated_backward(&d, &gate, &up);
        let loss = |g: &[f64], u: &[f64]| gated(g, u).iter().zip(&d).map(|(y, d)| y * d).sum::<f64>();
        check_gradient(&gate, &d_gate, |g| loss(g, &up));
        check_gradient(&up, &d_up, |u| loss(&gate, u));
        // far out: SiLU(−∞-ish) is −0, SiLU(large) is itself
        assert_eq!(silu(-1e4f64), -0.0);
        assert_eq!(silu(1e4f32), 1e4);
    }
}
