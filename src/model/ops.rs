//! The model's own ops on flat row-major slices, written once over the precision: products
//! through [`Kernel::linear`] (f64: summed in increasing order; f32: the SIMD kernels, split
//! over threads) and the transposed ones through the attention layer's own
//! ([`LayerKernel::a_bt`], [`LayerKernel::at_b`]); layer norm, GELU and the cross-entropy, each
//! with its backward.

use crate::engine::Kernel;
use crate::layer::LayerKernel;
use crate::real::Real;

/// `x (m × k) · w (k × n) (+ bias)`.
pub fn matmul<F: Kernel>(x: &[F], m: usize, k: usize, w: &[F], n: usize, bias: Option<&[F]>) -> Vec<F> {
    let mut out = vec![F::ZERO; m * n];
    F::linear(x, m, k, w, n, bias, &mut out);
    out
}

/// `dy (m × n) · wᵀ` for `w (k × n)`: the input gradient of `y = x·w`, through the layer's own
/// transposed product ([`LayerKernel::a_bt`]).
pub fn matmul_bt<F: LayerKernel>(dy: &[F], m: usize, n: usize, w: &[F], k: usize) -> Vec<F> {
    let mut out = vec![F::ZERO; m * k];
    F::a_bt(m, n, k, dy, n, w, n, &mut out, k, &mut F::Scratch::default()); // (m, k) = (m, n)·(k, n)ᵀ
    out
}

/// `xᵀ · dy` for `x (m × k)`, `dy (m × n)`: the weight gradient of `y = x·w`, added to `grad (k × n)`
/// (each entry's whole sum, then added), through the layer's own [`LayerKernel::at_b`].
pub fn add_matmul_at<F: LayerKernel>(x: &[F], m: usize, k: usize, dy: &[F], n: usize, grad: &mut [F]) {
    F::at_b(k, m, n, x, k, dy, n, grad, n, true, &mut F::Scratch::default()); // (k, n) += (m, k)ᵀ·(m, n)
}

/// `Σ_rows dy`, added to `grad (n)`: the bias gradient of `y = x·w + b`.
pub fn add_column_sums<F: Real>(dy: &[F], n: usize, grad: &mut [F]) {
    for row in dy.chunks_exact(n) {
        grad.iter_mut().zip(row).for_each(|(g, &d)| *g += d);
    }
}

/// `a += b`, element-wise.
pub fn add_into<F: Real>(a: &mut [F], b: &[F]) {
    a.iter_mut().zip(b).for_each(|(x, &y)| *x += y);
}

/// The variance floor of [`layer_norm`].
pub const LAYER_NORM_EPS: f64 = 1e-5;

/// What layer norm keeps for its backward: the normalised rows and each row's `1/σ`.
#[derive(Clone, Debug, Default)]
pub struct NormKept<F> {
    pub x_hat: Vec<F>,
    pub inv_std: Vec<F>,
}

/// Per row of `x (rows × n)`: `y = (x − μ)/√(σ² + ε) ⊙ w + b`, σ² the biased variance, ε = [`LAYER_NORM_EPS`].
pub fn layer_norm<F: Real>(x: &[F], n: usize, w: &[F], b: &[F]) -> (Vec<F>, NormKept<F>) {
    layer_norm_eps(x, n, w, b, LAYER_NORM_EPS)
}

/// [`layer_norm`] with the given ε (a checkpoint's `layer_norm_epsilon`).
pub fn layer_norm_eps<F: Real>(x: &[F], n: usize, w: &[F], b: &[F], eps: f64) -> (Vec<F>, NormKept<F>) {
    let (eps, width) = (F::from_f64(eps), F::from_usize(n));
    let mut y = vec![F::ZERO; x.len()];
    let mut kept = NormKept { x_hat: vec![F::ZERO; x.len()], inv_std: Vec::with_capacity(x.len() / n) };
    for ((row, out), hat) in x.chunks_exact(n).zip(y.chunks_exact_mut(n)).zip(kept.x_hat.chunks_exact_mut(n)) {
        let mean = row.iter().fold(F::ZERO, |s, &v| s + v) / width;
        let var = row.iter().fold(F::ZERO, |s, &v| s + (v - mean) * (v - mean)) / width;
        let inv_std = F::ONE / (var + eps).sqrt();
        for i in 0..n {
            hat[i] = (row[i] - mean) * inv_std;
            out[i] = hat[i] * w[i] + b[i];
        }
        kept.inv_std.push(inv_std);
    }
    (y, kept)
}

/// The backward of [`layer_norm`]: returns `dx`, adds to `dw` and `db`.
/// `dx = (1/σ)·(dx̂ − mean(dx̂) − x̂·mean(dx̂ ⊙ x̂))` with `dx̂ = dy ⊙ w`.
pub fn layer_norm_backward<F: Real>(dy: &[F], n: usize, w: &[F], kept: &NormKept<F>, dw: &mut [F], db: &mut [F]) -> Vec<F> {
    let width = F::from_usize(n);
    let mut dx = vec![F::ZERO; dy.len()];
    for (r, ((d_row, hat), out)) in dy.chunks_exact(n).zip(kept.x_hat.chunks_exact(n)).zip(dx.chunks_exact_mut(n)).enumerate() {
        let (mut mean_d, mut mean_dh) = (F::ZERO, F::ZERO);
        for i in 0..n {
            let d_hat = d_row[i] * w[i];
            mean_d += d_hat;
            mean_dh += d_hat * hat[i];
            dw[i] += d_row[i] * hat[i];
            db[i] += d_row[i];
        }
        let (mean_d, mean_dh) = (mean_d / width, mean_dh / width);
        for i in 0..n {
            out[i] = kept.inv_std[r] * (d_row[i] * w[i] - mean_d - hat[i] * mean_dh);
        }
    }
    dx
}

const GELU_C: f64 = 0.797_884_560_802_865_4; // √(2/π)
const GELU_A: f64 = 0.044_715;
/// Values of [`gelu`] per task when it is split across threads.
const GELU_CHUNK: usize = 1 << 14;

/// GELU, the tanh form of GPT-2 (PyTorch's `gelu(x, approximate='tanh')`):
/// `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
pub fn gelu<F: Kernel>(x: &[F]) -> Vec<F> {
    let (c, a, half, two) = (F::from_f64(GELU_C), F::from_f64(GELU_A), F::from_f64(0.5), F::from_f64(2.0));
    let mut y = vec![F::ZERO; x.len()];
    // element-wise, so split across threads in chunks with the same bits; tanh(u) = 1 − 2/(e^{2u} + 1) (exact at
    // ±∞: ±1), each chunk in three passes so that the exponentials are taken many at a time (F::exp_shifted):
    // y = u + u with u = √(2/π)·(x + 0.044715·x³); y = e^y; y = ½·x·(1 + (1 − 2/(y + 1)))
    let split = crate::parallel::worth_splitting(x.len().div_ceil(GELU_CHUNK), x.len());
    crate::parallel::for_each_chunk(&mut y, GELU_CHUNK, split, |i, out| {
        let x = &x[i * GELU_CHUNK..i * GELU_CHUNK + out.len()];
        for (o, &v) in out.iter_mut().zip(x) {
            let u = c * (v + a * v * v * v);
            *o = u + u;
        }
        F::exp_shifted(out, F::ZERO);
        for (o, &v) in out.iter_mut().zip(x) {
            *o = half * v * (F::ONE + (F::ONE - two / (*o + F::ONE)));
        }
    });
    y
}

/// The backward of [`gelu`] at its input `x`: `dy ⊙ gelu′(x)`.
pub fn gelu_backward<F: Kernel>(dy: &[F], x: &[F]) -> Vec<F> {
    let (c, a, half, three, two) = (F::from_f64(GELU_C), F::from_f64(GELU_A), F::from_f64(0.5), F::from_f64(3.0), F::from_f64(2.0));
    // as gelu: e^(2u) many at a time, then tanh(u) = 1 − 2/(e^(2u) + 1) from it
    let mut out: Vec<F> = x.iter().map(|&v| c * (v + a * v * v * v)).map(|u| u + u).collect();
    F::exp_shifted(&mut out, F::ZERO);
    for ((o, &d), &v) in out.iter_mut().zip(dy).zip(x) {
        let th = F::ONE - two / (*o + F::ONE);
        *o = d * (half * (F::ONE + th) + half * v * (F::ONE - th * th) * c * (F::ONE + three * a * v * v));
    }
    out
}

/// The cross-entropy of each row of `logits (rows × v)` against `targets` (one per row; `None`
/// rows, the last position of each sequence, take no part): returns each row's loss (0 for
/// `None`), and with `scale` the gradient `scale·(softmax(row) − onehot(target))`. Each row's
/// log-sum-exp is taken from the max, each exponential in F ([`Real::exp`]: for f32 the kernels'
/// vectorised one), summed and logged in f64.
pub fn cross_entropy<F: Kernel>(logits: &[F], v: usize, targets: &[Option<u32>], scale: Option<f64>) -> (Vec<f64>, Option<Vec<F>>) {
    // rows split across threads: each row's sums are its own, so the bits do not depend on the count
    let split = crate::parallel::worth_splitting(targets.len(), logits.len());
    // per row: (loss, max, Σ exp(x − max)), or None for a row without a target; the exponentials taken many at a
    // time (F::exp_shifted), then added in order in f64
    let rows = crate::parallel::map(targets.len(), split, |r| {
        let (row, target) = (&logits[r * v..(r + 1) * v], targets[r]?);
        let max = row.iter().fold(F::NEG_INFINITY, |m, &x| if x > m { x } else { m });
        let mut e = row.to_vec();
        F::exp_shifted(&mut e, max);
        let sum: f64 = e.iter().map(|&x| x.to_f64()).sum();
        Some((sum.ln() + max.to_f64() - row[target as usize].to_f64(), max, sum))
    });
    let losses = rows.iter().map(|r| r.map_or(0.0, |(loss, _, _)| loss)).collect();
    let grad = scale.map(|scale| {
        let mut grad = vec![F::ZERO; logits.len()];
        crate::parallel::for_each_chunk(&mut grad, v.max(1), split, |r, g| {
            let (Some((_, max, sum)), Some(target)) = (rows[r], targets[r]) else { return };
            // g = e^(x − max), then the gradient from it
            g.copy_from_slice(&logits[r * v..(r + 1) * v]);
            F::exp_shifted(g, max);
            for (j, g) in g.iter_mut().enumerate() {
                let p = g.to_f64() / sum;
                *g = F::from_f64(scale * (p - if j == target as usize { 1.0 } else { 0.0 }));
            }
        });
        grad
    });
    (losses, grad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{check_gradient, seeded_values as seeded};

    #[test]
    fn layer_norm_backward_matches_central_differences() {
        let (n, x, w, b, dy) = (5, seeded(15, 1), seeded(5, 2), seeded(5, 3), seeded(15, 4));
        let loss = |x: &[f64], w: &[f64], b: &[f64]| layer_norm(x, n, w, b).0.iter().zip(&dy).map(|(y, d)| y * d).sum::<f64>();
        let (_, kept) = layer_norm(&x, n, &w, &b);
        let (mut dw, mut db) = (vec![0.0; n], vec![0.0; n]);
        let dx = layer_norm_backward(&dy, n, &w, &kept, &mut dw, &mut db);
        check_gradient(&x, &dx, |x| loss(x, &w, &b));
        check_gradient(&w, &dw, |w| loss(&x, w, &b));
        check_gradient(&b, &db, |b| loss(&x, &w, b));
    }

    #[test]
    fn gelu_matches_its_formula_and_derivative() {
        let x: Vec<f64> = seeded(20, 5).iter().map(|v| 4.0 * v).collect();
        for (&v, &g) in x.iter().zip(&gelu(&x)) {
            let want = 0.5 * v * (1.0 + (GELU_C * (v + GELU_A * v.powi(3))).tanh());
            assert!((g - want).abs() <= 1e-15 * (1.0 + want.abs()), "{g} vs {want}");
        }
        let dy = seeded(20, 6);
        check_gradient(&x, &gelu_backward(&dy, &x), |x| gelu(x).iter().zip(&dy).map(|(y, d)| y * d).sum());
        assert_eq!(gelu(&[f64::MAX.sqrt(), -f64::MAX.sqrt()]), vec![f64::MAX.sqrt(), -0.0]);
    }

    #[test]
    fn cross_entropy_gradient_and_skipped_rows() {
        let (v, logits) = (4, seeded(12, 7));
        let targets = [Some(2), None, Some(0)];
        let (losses, grad) = cross_entropy(&logits, v, &targets, Some(0.5));
        assert_eq!(losses[1], 0.0);
        let grad = grad.unwrap();
        assert!(grad[v..2 * v].iter().all(|&g| g == 0.0));
        check_gradient(&logits, &grad, |l| cross_entropy(l, v, &targets, None).0.iter().sum::<f64>() * 0.5);
        // a direct value: uniform logits give ln v
        let (flat, _) = cross_entropy(&[1.0f32; 4], 4, &[Some(3)], None);
        assert!((flat[0] - 4f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn products_agree_with_matrix_matmul() {
        let (x, w) = (crate::testing::seeded_matrix(3, 4, 8), crate::testing::seeded_matrix(4, 2, 9));
        let want = x.matmul(&w).unwrap();
        assert_eq!(matmul(x.data(), 3, 4, w.data(), 2, None), want.data());
        let dy = crate::testing::seeded_matrix(3, 2, 10);
        assert_eq!(matmul_bt(dy.data(), 3, 2, w.data(), 4), dy.matmul(&w.transpose()).unwrap().data());
        let mut g = vec![0.0; 8];
        add_matmul_at(x.data(), 3, 4, dy.data(), 2, &mut g);
        assert_eq!(g, x.transpose().matmul(&dy).unwrap().data());
    }
}
