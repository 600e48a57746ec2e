//! The induction task: `repeatedTokens`.
//!
//! Each sequence is token 0 (a beginning-of-sequence token), then a segment of `period`
//! **distinct** tokens drawn uniformly without replacement from `1 … vocab_size − 1`, repeated
//! until the sequence holds `1 + 2·length` tokens. `period` is drawn per sequence uniformly from
//! `⌈length/2⌉ … length`. Bit for bit, with one SplitMix64 started at `seed`:
//!
//! ```text
//! for each sequence b:
//!     period = ⌈length/2⌉ + below(length − ⌈length/2⌉ + 1)
//!     pool = [1, 2, …, vocab_size − 1]
//!     for i in 0 … period − 1:                 // a partial Fisher–Yates shuffle
//!         j = i + below(vocab_size − 1 − i)
//!         swap pool[i], pool[j]
//!     tokens[b] = [0] then pool[(t − 1) mod period] for t = 1 … 2·length
//! below(n) = ⌊next_unit() · n⌋                  // uniform in 0 … n − 1
//! ```
//!
//! `repeated[b][t]` is true where token t repeats the token one period back (`t − period ≥ 1`).

use crate::error::{AttentionError, Result};
use crate::init::SplitMix64;

/// A batch of induction sequences (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct RepeatedTokens {
    /// `[B, T]` row-major, `T = 1 + 2·length`.
    pub tokens: Vec<u32>,
    /// `[B, T]`: whether token t repeats the token one period back.
    pub repeated: Vec<bool>,
    /// One period per sequence.
    pub periods: Vec<usize>,
    pub batch: usize,
    pub t: usize,
}

/// Uniform in `0 … n − 1` (`n ≥ 1`).
fn below(rng: &mut SplitMix64, n: usize) -> usize {
    ((rng.next_unit() * n as f64) as usize).min(n - 1)
}

/// The largest `length` the task accepts: sequences of `1 + 2·length` tokens stay small enough to
/// hand to a model (whose context is bounded by the working-set check anyway).
pub const MAX_LENGTH: usize = 1 << 20;

/// `batch` sequences of `1 + 2·length` tokens (see the module docs).
pub fn repeated_tokens(vocab_size: usize, length: usize, batch: usize, seed: u64) -> Result<RepeatedTokens> {
    if vocab_size < 2 {
        return Err(AttentionError::range_error(format!(
            "vocabSize is {vocab_size}; expected an integer ≥ 2 (token 0 begins every sequence, the others are drawn from 1 … vocabSize − 1)"
        )));
    }
    if length == 0 || length > vocab_size - 1 || length > MAX_LENGTH {
        return Err(AttentionError::range_error(format!(
            "length is {length}; expected an integer with 1 ≤ length ≤ vocabSize − 1 = {} (a period holds distinct tokens from 1 … vocabSize − 1)",
            vocab_size - 1
        )));
    }
    if batch == 0 {
        return Err(AttentionError::range_error("batch is 0; expected a positive integer"));
    }
    let t = 1 + 2 * length;
    crate::limits::check_working_set(batch as u128 * t as u128 * 2 + vocab_size as u128, || {
        format!("repeatedTokens with batch = {batch} and length = {length}")
    })?;
    let mut rng = SplitMix64::new(seed);
    let (mut tokens, mut repeated, mut periods) = (Vec::with_capacity(batch * t), Vec::with_capacity(batch * t), Vec::with_capacity(batch));
    let shortest = length.div_ceil(2);
    let mut pool: Vec<u32> = Vec::with_capacity(vocab_size - 1);
    for _ in 0..batch {
        let period = shortest + below(&mut rng, length - shortest + 1);
        pool.clear();
        pool.extend(1..vocab_size as u32);
        for i in 0..period {
            let j = i + below(&mut rng, vocab_size - 1 - i);
            pool.swap(i, j);
        }
        tokens.push(0);
        repeated.push(false);
        for pos in 1..t {
            tokens.push(pool[(pos - 1) % period]);
            repeated.push(pos > period);
        }
        periods.push(period);
    }
    Ok(RepeatedTokens { tokens, repeated, periods, batch, t })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_are_periodic_distinct_and_seeded() {
        let r = repeated_tokens(32, 24, 50, 7).unwrap();
        assert_eq!((r.batch, r.t), (50, 49));
        assert_eq!(r, repeated_tokens(32, 24, 50, 7).unwrap(), "same seed, same bits");
        assert_ne!(r.tokens, repeated_tokens(32, 24, 50, 8).unwrap().tokens);
        let mut seen_periods = std::collections::BTreeSet::new();
        for b in 0..r.batch {
            let seq = &r.tokens[b * r.t..(b + 1) * r.t];
            let p = r.periods[b];
            assert!((12..=24).contains(&p), "period {p}");
            seen_periods.insert(p);
            assert_eq!(seq[0], 0);
            let segment = &seq[1..=p];
            let distinct: std::collections::BTreeSet<_> = segment.iter().collect();
            assert_eq!(distinct.len(), p, "distinct tokens in one period");
            assert!(segment.iter().all(|&x| (1..32).contains(&x)));
            for t in 1..r.t {
                let rep = r.repeated[b * r.t + t];
                assert_eq!(rep, t > p, "repeated[{b}][{t}]");
                if rep {
                    assert_eq!(seq[t], seq[t - p]);
                }
            }
        }
        assert!(seen_periods.len() > 5, "periods vary: {seen_periods:?}");
    }

    #[test]
    fn refuses_impossible_tasks() {
        assert!(repeated_tokens(32, 32, 1, 0).unwrap_err().to_string().contains("length is 32"));
        assert!(repeated_tokens(1, 1, 1, 0).unwrap_err().to_string().contains("vocabSize"));
        assert!(repeated_tokens(8, 0, 1, 0).is_err());
        assert!(repeated_tokens(8, 3, 0, 0).unwrap_err().to_string().contains("batch"));
        // the largest length a vocabulary allows
        let r = repeated_tokens(8, 7, 3, 1).unwrap();
        assert_eq!(r.t, 15);
    }
}
