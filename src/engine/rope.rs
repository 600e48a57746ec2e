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
//! score `q(m)·k(n)` depends on the positions only through `m − n`. They are computed here, not
//! by `f64::powf`/`sin`/`cos`: those pull about 9 KB of libm into the .wasm (its reduction for
//! arguments up to 1e308), while positions below [`MAX_POSITION`] need only the short reduction
//! below. Both are plain wasm arithmetic, so every runtime gets the same bits.

use crate::error::{AttentionError, Result};
use crate::error::number_text;
use crate::real::Real;

/// Positions are below 2^20 (1,048,576 tokens): angles stay below 2^20, where the reduction of
/// [`sin_cos`] is accurate to about 1e-15.
pub const MAX_POSITION: usize = 1 << 20;

/// `ln x` for a finite `x > 0`: Halley's iteration on `e^y = x` from the exponent's estimate
/// (cubic convergence; five steps reach f64's precision from any start within ±1).
fn ln(x: f64) -> f64 {
    if x < f64::MIN_POSITIVE {
        // subnormal: e^y would underflow on the way; scale by 2^64 first
        return ln(x * 18_446_744_073_709_551_616.0) - 64.0 * std::f64::consts::LN_2;
    }
    let exponent = ((x.to_bits() >> 52) & 0x7FF) as i64 - 1023;
    let mut y = exponent as f64 * std::f64::consts::LN_2;
    for _ in 0..6 {
        let e = y.exp();
        y += 2.0 * (x - e) / (x + e);
    }
    y
}

/// `(sin x, cos x)` for `|x| < 2^20`: `x = n·π/2 + r` with `|r| ≤ π/4` (π/2 in two parts, the
/// first of 33 bits so that `n·P1` is exact), then the minimax polynomials of fdlibm's kernels.
pub fn sin_cos(x: f64) -> (f64, f64) {
    const P1: f64 = 1.570_796_326_734_125_6; // π/2, its first 33 bits
    const P1T: f64 = 6.077_100_506_506_192e-11; // π/2 − P1
    let n = (x * std::f64::consts::FRAC_2_PI).round();
    let r = (x - n * P1) - n * P1T;
    let z = r * r;
    let sin = r + r * z * (-1.666_666_666_666_663_2e-1 + z * (8.333_333_333_322_49e-3 + z * (-1.984_126_982_985_795e-4 + z * (2.755_731_370_707_007e-6 + z * (-2.505_076_025_340_686e-8 + z * 1.589_690_995_211_55e-10)))));
    let cos = 1.0 - 0.5 * z + z * z * (4.166_666_666_666_66e-2 + z * (-1.388_888_888_887_411e-3 + z * (2.480_158_728_947_673e-5 + z * (-2.755_731_435_139_066e-7 + z * (2.087_572_321_298_175e-9 + z * -1.135_964_755_778_819_5e-11)))));
    match (n as i64).rem_euclid(4) {
        0 => (sin, cos),
        1 => (cos, -sin),
        2 => (-sin, -cos),
        _ => (-cos, sin),
    }
}

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

/// [`Rope::refuse_overflow`]'s message, one body for f32 and f64.
fn rotation_overflow(name: &str, r: usize, c: usize, value: f64, largest: &str) -> AttentionError {
    AttentionError::range_error(format!(
        "{name}[{r}][{c}] overflows to {}: rotating its pair by RoPE went beyond the largest {largest}; scale the inputs down",
        crate::limits::non_finite_name(value)
    ))
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

    /// A RangeError unless rows `first … first + rows − 1` are below [`MAX_POSITION`].
    pub fn check_positions(first: usize, rows: usize, what: &str) -> Result<()> {
        if first.saturating_add(rows) <= MAX_POSITION {
            return Ok(());
        }
        Err(AttentionError::range_error(format!(
            "{what} reach position {}, but rotary embedding positions stay below 2^20 = {MAX_POSITION}",
            first.saturating_add(rows).saturating_sub(1)
        )))
    }

    /// A RangeError unless every angle of positions `first .. first + rows` with heads of `d` columns
    /// stays below 2^20 radians, where [`sin_cos`] is accurate (`base_name` as the caller calls the
    /// base). A base ≥ 1 keeps every angle at most the position; a tiny base turns the last pairs by
    /// `p·base^(−(d−2)/d)`, which can pass any bound (base 1e-100 turns position 1 by 1e50).
    pub fn check_angles(&self, first: usize, rows: usize, d: usize, base_name: &str) -> Result<()> {
        let Some(last) = (first + rows).checked_sub(1) else { return Ok(()) };
        let i = if self.base < 1.0 { (d / 2).saturating_sub(1) } else { 0 };
        let theta = last as f64 * (-2.0 * i as f64 / d as f64 * ln(self.base)).exp();
        if theta < MAX_POSITION as f64 {
            return Ok(());
        }
        Err(AttentionError::range_error(format!(
            "{base_name} is too small for these positions: position {last} would turn pair {i} of each head by p·base^(−2i/d) beyond 2^20 radians, where rotary embedding's sine and cosine are computed; use a larger base (base ≥ 1 keeps every angle at most the position)"
        )))
    }

    /// A RangeError naming the first entry of a rotated `(rows, cols)` matrix `name` that left the
    /// precision's range (a rotation can grow a pair's entry by up to √2).
    pub fn refuse_overflow<F: Real>(values: &[F], cols: usize, name: &str) -> Result<()> {
        let Some(at) = values.iter().position(|x| !x.is_finite()) else { return Ok(()) };
        Err(rotation_overflow(name, at / cols, at % cols, values[at].to_f64(), F::LARGEST))
    }

    /// `(cos θ, sin θ)` for position `p` and pair `i` of `d`: `θ = p·base^(−2i/d)`, with
    /// `base^(−2i/d)` as `e^(−(2i/d)·ln base)`.
    fn angle(&self, p: usize, i: usize, d: usize) -> (f64, f64) {
        let theta = p as f64 * (-2.0 * i as f64 / d as f64 * ln(self.base)).exp();
        let (sin, cos) = sin_cos(theta);
        (cos, sin)
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
    fn sin_cos_and_ln_agree_with_libm_over_the_position_range() {
        let mut worst = 0.0f64;
        let mut x: f64 = 1e-3;
        while x < MAX_POSITION as f64 {
            for y in [x, -x] {
                let (s, c) = sin_cos(y);
                worst = worst.max((s - y.sin()).abs()).max((c - y.cos()).abs());
            }
            x = x * 1.37 + 0.71;
        }
        for p in [0.0, 1.0, 0.5, 1e-3, 3.0, 1e5, (MAX_POSITION - 1) as f64, std::f64::consts::FRAC_PI_4, 2.0 * std::f64::consts::PI] {
            let (s, c) = sin_cos(p);
            worst = worst.max((s - p.sin()).abs()).max((c - p.cos()).abs());
        }
        assert!(worst < 1e-15 * 4.0, "worst absolute error {worst}");
        for b in [10000.0, 2.0, 1.0, 0.5, 1e-300, 1e300, 5e-324, 500000.0] {
            assert!((ln(b) - b.ln()).abs() <= 4.0 * f64::EPSILON * b.ln().abs().max(1.0), "ln({b}) = {} vs {}", ln(b), b.ln());
        }
        assert!(Rope::check_positions(MAX_POSITION - 5, 5, "X's rows").is_ok());
        assert!(Rope::check_positions(MAX_POSITION - 5, 6, "X's rows").unwrap_err().message().starts_with("X's rows reach position 1048576"));
    }

    #[test]
    fn a_tiny_base_is_refused_where_an_angle_would_pass_2_20_radians() {
        // d = 4: pair 1 turns by p·base^(−1/2); base 1e-100 turns position 1 by 1e50
        let tiny = Rope { base: 1e-100 };
        let err = tiny.check_angles(1, 1, 4, "options.base").unwrap_err();
        assert!(matches!(err, AttentionError::Range(_)) && err.message().starts_with("options.base is too small for these positions: position 1 would turn pair 1"), "{err}");
        // d = 2 has only pair 0, which turns by the position whatever the base
        assert!(tiny.check_angles(1, 5, 2, "options.base").is_ok());
        // base 1e-6, d = 4: factor 1000, so positions up to 1048 pass and 1049 does not
        let small = Rope { base: 1e-6 };
        assert!(small.check_angles(0, 1049, 4, "b").is_ok() && small.check_angles(0, 1050, 4, "b").is_err());
        assert!(Rope::default().check_angles(0, MAX_POSITION, 64, "b").is_ok());
        assert!(Rope::default().check_angles(0, 0, 64, "b").is_ok());
    }

    #[test]
    fn the_first_pair_turns_by_the_position_in_radians() {
        // i = 0: θ = p, so (1, 0) at position 1 becomes (cos 1, sin 1) in rotate-half layout
        let mut x: Vec<f64> = vec![1.0, 0.0];
        Rope::default().rotate(&mut x, 2, 2, 1, false);
        assert!((x[0] - 1f64.cos()).abs() < 1e-16 && (x[1] - 1f64.sin()).abs() < 1e-16, "{x:?}");
        assert!(Rope::check_width(3, "headDim").unwrap_err().message().starts_with("headDim = 3 is odd"));
        assert!(Rope::check_base(0.0, "rope.base").is_err() && Rope::check_base(f64::NAN, "rope.base").is_err());
    }
}
