//! Whether the model's forward pass can overflow its precision, bounded from the weights alone
//! (for any tokens): the check that refuses an AdamW step whose weights the next call could not
//! run (`options.learningRate` too large), before the step changes anything.
//!
//! Each step of the forward (the module docs' numbering) gets a bound on the magnitude of every
//! entry it computes, partial sums included, from the bound of its input:
//!
//! ```text
//! x·W + b   ≤ X · max_j Σ_i |W_ij| + max|b|        (every partial sum of a column too)
//! LN(x)     ≤ √C · max|w| + max|b|                  ((x − μ)² ≤ (2X)², summed over C)
//! RoPE(q)   ≤ √2 · Q                                 (a pair's rotation keeps its length)
//! Q_h·K_hᵀ  ≤ d_head · Q · K
//! softmax·V ≤ V                                      (a convex combination)
//! GELU(u)   ≤ |u|
//! ```
//!
//! A bound at or below half the largest finite value of the precision means that step cannot
//! overflow. The bounds are loose (a trained model sits many orders of magnitude below them), so
//! only weights that no learning rate a model trains with could produce trip them.

use super::{MlpKind, ModelConfig, Param, Positions};
use crate::real::Real;

/// The first forward intermediate whose bound passes half the largest `F`, as `(name, bound)`:
/// `layers[0].Q`, `logits`, …; `None` when no step of the forward can overflow.
pub(super) fn forward_overflow<F: Real>(config: &ModelConfig, params: &[Param<F>]) -> Option<(String, f64)> {
    let limit = F::MAX.to_f64() / 2.0;
    let find = |layer: Option<usize>, name: &str| params.iter().find(|p| p.layer == layer && p.name == name);
    let abs = |layer: Option<usize>, name: &str| find(layer, name).map_or(0.0, |p| max_abs(&p.data));
    let times = |x: f64, layer: Option<usize>, name: &str| find(layer, name).map_or(0.0, |p| x * column_sum(p));
    let c = config.embed_dim as f64;
    let d_head = c / config.num_heads.max(1) as f64;
    let norm = |x: f64, layer: Option<usize>, prefix: &str| -> (f64, f64) {
        if !config.layer_norm {
            return (x, 0.0);
        }
        // the variance's sum of squares, then the normalised row
        (c.sqrt() * abs(layer, &format!("{prefix}_w")) + abs(layer, &format!("{prefix}_b")), c * (2.0 * x) * (2.0 * x))
    };
    let mut checks: Vec<(String, f64)> = Vec::new();
    let over = |checks: &[(String, f64)]| checks.iter().find(|(_, bound)| !(*bound <= limit)).cloned();
    // 1. x = W_E[token] (+ W_pos[t])
    let positions = if config.positions.has_table() { abs(None, "W_pos") } else { 0.0 };
    let mut x = abs(None, "W_E") + if config.positions == Positions::Learned { positions } else { 0.0 };
    checks.push(("the residual stream".into(), x));
    for l in 0..config.num_layers {
        let at = Some(l);
        let name = |what: &str| format!("layers[{l}].{what}");
        // 2. a = LN1(x) or x; 3. q = k = a (+ W_pos[t]), v = a
        let (a, squares) = norm(x, at, "ln1");
        let qk = a + if config.positions == Positions::Shortformer { positions } else { 0.0 };
        let rope = if config.positions == Positions::Rope { std::f64::consts::SQRT_2 } else { 1.0 };
        // 4. the layer: Q, K, V, the scores, the context and its projection, added to x
        let q = times(qk, at, "W_Q") + abs(at, "b_Q");
        let k = times(qk, at, "W_K") + abs(at, "b_K");
        let v = times(a, at, "W_V") + abs(at, "b_V");
        let out = times(v, at, "W_O") + abs(at, "b_O");
        x += out;
        checks.extend([
            (name("ln1's variance"), squares),
            (name("Q"), q * rope),
            (name("K"), k * rope),
            (name("V"), v),
            (name("scores"), d_head * q * k * rope * rope),
            (name("output"), out),
            ("the residual stream".into(), x),
        ]);
        // 5. x = x + GELU(LN2(x)·W_in + b_in)·W_out + b_out
        if config.mlp {
            let (m, squares) = norm(x, at, "ln2");
            // the gated MLP: |SiLU(g)·u| ≤ |g|·|u|
            let pre = match config.mlp_kind {
                MlpKind::Gelu => times(m, at, "W_in") + abs(at, "b_in"),
                MlpKind::Gated => (times(m, at, "W_gate") + abs(at, "b_gate")) * (times(m, at, "W_up") + abs(at, "b_up")),
            };
            let out = match config.mlp_kind {
                MlpKind::Gelu => times(pre, at, "W_out") + abs(at, "b_out"),
                MlpKind::Gated => times(pre, at, "W_down") + abs(at, "b_down"),
            };
            x += out;
            checks.extend([(name("ln2's variance"), squares), (name("W_in's output"), pre), (name("W_out's output"), out), ("the residual stream".into(), x)]);
        }
        if let Some(found) = over(&checks) {
            return Some(found);
        }
    }
    // 6. logits = (LN_f(x) or x)·W_U
    let (u, squares) = norm(x, None, "ln_final");
    // tied: W_U = W_Eᵀ, whose column sums are W_E's row sums
    let logits = if config.tied { find(None, "W_E").map_or(0.0, |p| u * row_sum(p)) } else { times(u, None, "W_U") };
    checks.extend([("ln_final's variance".into(), squares), ("logits".into(), logits)]);
    over(&checks)
}

fn max_abs<F: Real>(values: &[F]) -> f64 {
    values.iter().fold(0.0, |m, x| m.max(x.to_f64().abs()))
}

/// `max_i Σ_j |W_ij|`: the column sums of Wᵀ.
fn row_sum<F: Real>(p: &Param<F>) -> f64 {
    let cols = p.shape.get(1).copied().unwrap_or(1).max(1);
    p.data.chunks_exact(cols).map(|row| row.iter().map(|x| x.to_f64().abs()).sum::<f64>()).fold(0.0, f64::max)
}

/// `max_j Σ_i |W_ij|` for a `[rows, cols]` weight: `|x·W|` is at most that times `max|x|`.
fn column_sum<F: Real>(p: &Param<F>) -> f64 {
    let cols = p.shape.get(1).copied().unwrap_or(1).max(1);
    let mut sums = vec![0.0; cols];
    for row in p.data.chunks_exact(cols) {
        sums.iter_mut().zip(row).for_each(|(s, x)| *s += x.to_f64().abs());
    }
    sums.into_iter().fold(0.0, f64::max)
}

/// `x` as "6.40e61" (three digits), with integer formatting only: the release build has no float
/// formatting (`error::number_text`), whose exact text is unreadable for numbers like these.
pub(super) fn magnitude_text(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return crate::error::number_text(x);
    }
    let sign = if x < 0.0 { "-" } else { "" };
    let a = x.abs();
    let mut exponent = a.log10().floor() as i32;
    // subnormals: 10^exponent itself underflows below 1e-308, so scale up first
    let mantissa = if exponent < -300 { a * 1e300 / 10f64.powi(exponent + 300) } else { a / 10f64.powi(exponent) };
    let mut digits = (mantissa * 100.0).round() as u32;
    if digits >= 1000 {
        digits /= 10;
        exponent += 1;
    }
    format!("{sign}{}.{:02}e{exponent}", digits / 100, digits % 100)
}

#[cfg(test)]
mod tests {
    #[test]
    fn magnitudes_read_in_three_digits() {
        for (x, want) in [(1e30, "1.00e30"), (-6.4e61, "-6.40e61"), (0.7056, "7.06e-1"), (9.999e5, "1.00e6"), (1e308, "1.00e308"), (0.0, "0"), (5e-324, "4.94e-324"), (1.5e-310, "1.50e-310")] {
            assert_eq!(super::magnitude_text(x), want);
        }
    }
}
