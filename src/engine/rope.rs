//! Rotary position embedding (RoPE), rotate-half layout (Llama and GPT-NeoX in Hugging Face):
//! within each head of `d` columns (d even) and for `i < d/2`, the pair `(x[i], x[i + d/2])` of
//! the row at position `p` is rotated by the angle `θ = p · base^(−2i/d)`:
//!
//! ```text
//! x[i]       → x[i]·cos θ − x[i + d/2]·sin θ
//! x[i + d/2] → x[i + d/2]·cos θ + x[i]·sin θ
//! ```
//!
//! The angle, its cosine and sine are computed in f64 (then rounded once for f32 data), so a
//! score `q(m)·k(n)` depends on the positions only through `m − n`.

use crate::error::{AttentionError, Result};
use crate::error::number_text;
use crate::real::Real;

/// RoPE's parameters: `base` (10000 in Llama) and the position of row 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rope {
    pub base: f64,
}

impl Default for Rope {
    fn default() -> Self {
        Self { base: 10000.0 }
    }
}

impl Rope {
    /// A RangeError unless `base` is finite and positive (`name` as the caller calls it).
    pub fn check_base(base: f64, name: &str) -> Result<()> {
        if base.is_finite() && base > 0.0 {
            return Ok(());
        }
        Err(AttentionError::range_error(format!("{name} is {}; expected a finite number > 0", number_text(base))))
    }

    /// A RangeError unless the head width is even (`name` as the caller calls it).
    pub fn check_width(d: usize, name: &str) -> Result<()> {
        if d.is_multiple_of(2) {
            return Ok(());
        }
        Err(AttentionError::range_error(format!(
            "{name} = {d} is odd; rotary embedding rotates pairs (x[i], x[i + d/2]), so each head needs an even width"
        )))
    }

    /// `(cos θ, sin θ)` for position `p` and pair `i` of `d`.
    fn angle(&self, p: usize, i: usize, d: usize) -> (f64, f64) {
        let theta = p as f64 * self.base.powf(-2.0 * i as f64 / d as f64);
        (theta.cos(), theta.sin())
    }

    /// Rotates, in place, every head (`d` columns) of the `rows` rows of a row-major matrix with
    /// `cols` columns; row `r` is at position `first_position + r`. `inverse` rotates by `−θ`
    /// (the transpose: the backward pass of a rotation).
    pub fn rotate<F: Real>(&self, x: &mut [F], cols: usize, d: usize, first_position: usize, inverse: bool) {
        let half = d / 2;
        for (r, row) in x.chunks_exact_mut(cols).enumerate() {
            let p = first_position + r;
            for i in 0..half {
                let (cos, sin) = self.angle(p, i, d);
                let (cos, sin) = (F::from_f64(cos), F::from_f64(if inverse { -sin } else { sin }));
                for head in row.chunks_exact_mut(d) {
                    let (a, b) = (head[i], head[i + half]);
                    head[i] = a * cos - b * sin;
                    head[i + half] = b * cos + a * sin;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dot(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn position_zero_is_the_identity_and_pairs_keep_their_length() {
        let rope = Rope::default();
        let x: Vec<f64> = vec![0.3, -1.2, 2.0, 0.7, 0.1, -0.4, 1.5, 0.25];
        let mut y = x.clone();
        rope.rotate(&mut y, 8, 4, 0, false);
        assert_eq!(x, y);
        rope.rotate(&mut y, 8, 4, 7, false);
        for h in 0..2 {
            for i in 0..2 {
                let (a, b) = (h * 4 + i, h * 4 + i + 2);
                assert!(((x[a] * x[a] + x[b] * x[b]) - (y[a] * y[a] + y[b] * y[b])).abs() < 1e-14);
            }
        }
        // the inverse undoes it
        rope.rotate(&mut y, 8, 4, 7, true);
        for (a, b) in x.iter().zip(&y) {
            assert!((a - b).abs() < 1e-15);
        }
    }

    #[test]
    fn scores_depend_only_on_the_distance() {
        let rope = Rope { base: 100.0 };
        let (q, k) = ([0.5, -0.3, 0.8, 0.1], [0.2, 0.9, -0.4, 0.6]);
        let score = |m: usize, n: usize| {
            let (mut a, mut b) = (q.to_vec(), k.to_vec());
            rope.rotate(&mut a, 4, 4, m, false);
            rope.rotate(&mut b, 4, 4, n, false);
            dot(&a, &b)
        };
        assert!((score(5, 2) - score(13, 10)).abs() < 1e-12);
        assert!((score(5, 2) - score(5, 3)).abs() > 1e-3);
    }

    #[test]
    fn the_first_pair_turns_by_the_position_in_radians() {
        // i = 0: θ = p, so (1, 0) at position 1 becomes (cos 1, sin 1) in rotate-half layout
        let mut x: Vec<f64> = vec![1.0, 0.0];
        Rope::default().rotate(&mut x, 2, 2, 1, false);
        assert_eq!(x, vec![1f64.cos(), 1f64.sin()]);
        assert!(Rope::check_width(3, "headDim").unwrap_err().message().starts_with("headDim = 3 is odd"));
        assert!(Rope::check_base(0.0, "rope.base").is_err() && Rope::check_base(f64::NAN, "rope.base").is_err());
    }
}
