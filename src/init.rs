//! The seeded generator behind the layer's initial weights and its dropout masks, and the model's
//! (its initial weights, `repeatedTokens`, sampling and the circuits' baselines); also `layer::init`.
//!
//! Everything here is defined bit for bit so that any runtime (Rust, JS with `BigInt`, Python)
//! reproduces the same numbers from the same seed.
//!
//! ## The generator: SplitMix64
//!
//! State: one unsigned 64-bit integer `state`, all arithmetic modulo 2^64.
//!
//! ```text
//! next_u64():
//!     state = state + 0x9E3779B97F4A7C15
//!     z = state
//!     z = (z XOR (z >> 30)) * 0xBF58476D1CE4E5B9
//!     z = (z XOR (z >> 27)) * 0x94D049BB133111EB
//!     return z XOR (z >> 31)
//!
//! next_unit():   // uniform in [0, 1), a multiple of 2^-53
//!     return (next_u64() >> 11) * 2^-53
//! ```
//!
//! ## Initial weights: Xavier-uniform
//!
//! A generator starts with `state = seed`. It fills W_Q, then W_K, then W_V, then W_O (each
//! `C × C`), every matrix row by row (entry `[in][out]`, `in` outer, `out` inner). Each entry is
//!
//! ```text
//! limit = sqrt(6 / (fan_in + fan_out)) = sqrt(6 / (C + C)) = sqrt(3 / C)
//! w     = limit * (2 * next_unit() - 1)          // uniform in [-limit, limit)
//! ```
//!
//! computed in f64 in exactly that order (`2·u`, then `− 1`, then `limit·…`; `limit` is
//! `sqrt(3 / C)` with one division and one square root). The biases start at 0.
//!
//! ## Dropout
//!
//! The dropout generator is a second SplitMix64 whose initial state is
//! `seed XOR DROPOUT_STREAM` (see [`DROPOUT_STREAM`]); it is created with the layer and
//! advances with every training forward pass that applies dropout (probability `p > 0`).
//! Such a pass draws one `next_unit()` per attention weight, in the order batch item, head,
//! query row, key column (row-major `[B, h, T_q, T_k]`), and drops the weight when the draw
//! is `< p`; kept weights are multiplied by `1 / (1 − p)`.

use crate::matrix::Matrix;

/// The SplitMix64 increment, `⌊2^64 / φ⌋` rounded to odd.
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// XORed into the seed to start the dropout stream, so it never repeats the weights' stream.
pub const DROPOUT_STREAM: u64 = 0xD1B5_4A32_D192_ED03;

/// The SplitMix64 generator (see the module docs for the exact algorithm).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose state starts at `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`: the top 53 bits of [`Self::next_u64`] times 2^-53 (exact in f64).
    pub fn next_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// The Xavier-uniform bound for a `fan_in × fan_out` weight: `sqrt(6 / (fan_in + fan_out))`.
pub fn xavier_limit(fan_in: usize, fan_out: usize) -> f64 {
    (6.0 / (fan_in + fan_out) as f64).sqrt()
}

/// A `fan_in × fan_out` Xavier-uniform matrix drawn row by row from `rng`.
pub fn xavier_uniform(rng: &mut SplitMix64, fan_in: usize, fan_out: usize) -> Matrix {
    let limit = xavier_limit(fan_in, fan_out);
    let mut w = Matrix::zeros(fan_in, fan_out);
    for x in w.data_mut() {
        *x = limit * (2.0 * rng.next_unit() - 1.0);
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_values() {
        // The published first outputs of SplitMix64 from state 0 and from state 1234567.
        let mut zero = SplitMix64::new(0);
        assert_eq!(zero.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(zero.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        let mut other = SplitMix64::new(1_234_567);
        assert_eq!(other.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(other.next_u64(), 3_203_168_211_198_807_973);
    }

    #[test]
    fn unit_draws_are_in_range_and_exact() {
        let mut rng = SplitMix64::new(0);
        let u = rng.next_unit();
        assert_eq!(u, (0xE220_A839_7B1D_CDAFu64 >> 11) as f64 / 9_007_199_254_740_992.0);
        for _ in 0..10_000 {
            let u = rng.next_unit();
            assert!((0.0..1.0).contains(&u));
        }
    }

    #[test]
    fn xavier_stays_within_the_limit_and_fills_the_range() {
        let mut rng = SplitMix64::new(7);
        let w = xavier_uniform(&mut rng, 64, 64);
        let limit = (3.0f64 / 64.0).sqrt();
        assert_eq!(xavier_limit(64, 64), limit);
        assert!(w.data().iter().all(|&x| (-limit..limit).contains(&x)));
        let max = w.data().iter().cloned().fold(f64::MIN, f64::max);
        let min = w.data().iter().cloned().fold(f64::MAX, f64::min);
        assert!(max > 0.95 * limit && min < -0.95 * limit, "{min} .. {max}");
        let mean = w.data().iter().sum::<f64>() / w.data().len() as f64;
        assert!(mean.abs() < 0.02 * limit, "mean {mean}");
    }
}
