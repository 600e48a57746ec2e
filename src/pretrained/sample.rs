//! Choosing the next token from the last position's logits, as transformers' `generate` does with
//! `do_sample` (generation/logits_process.py): the temperature divides the logits
//! (TemperatureLogitsWarper), top-k keeps the tokens whose logit is at least the k-th largest
//! (TopKLogitsWarper: ties at the boundary stay), top-p sorts the rest ascending and drops those
//! whose cumulative probability is ≤ 1 − p, never the most likely (TopPLogitsWarper), and one token
//! is drawn from the softmax of what is left. Temperature 0 is greedy (the argmax, lowest id on
//! ties; no draw). The draws come from the crate's seeded SplitMix64 ([`SplitMix64::next_unit`]),
//! so a seed gives the same tokens in every runtime.

use super::model::argmax;
use crate::error::{number_text, AttentionError, Result};
use crate::init::SplitMix64;
use crate::real::Real;

/// The options of a sampled generation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampling {
    /// ≥ 0; 0 is greedy.
    pub temperature: f64,
    /// Keep the k most likely tokens (≥ 1).
    pub top_k: Option<usize>,
    /// Keep the most likely tokens up to this probability mass, `0 < p ≤ 1`.
    pub top_p: Option<f64>,
}

impl Sampling {
    /// RangeErrors naming the option.
    pub fn check(&self) -> Result<()> {
        if !(self.temperature.is_finite() && self.temperature >= 0.0) {
            return Err(AttentionError::range_error(format!("options.temperature is {}; expected a finite number ≥ 0 (0 is greedy)", number_text(self.temperature))));
        }
        if self.top_k == Some(0) {
            return Err(AttentionError::range_error("options.topK is 0; expected an integer ≥ 1"));
        }
        if let Some(p) = self.top_p {
            if !(p > 0.0 && p <= 1.0) {
                return Err(AttentionError::range_error(format!("options.topP is {}; expected a number in (0, 1]", number_text(p))));
            }
        }
        Ok(())
    }
}

/// A seeded chooser of next tokens.
#[derive(Clone, Debug)]
pub struct Sampler {
    options: Sampling,
    rng: SplitMix64,
}

impl Sampler {
    /// Checks `options`; `seed` starts the draws.
    pub fn new(options: Sampling, seed: u64) -> Result<Self> {
        options.check()?;
        Ok(Self { options, rng: SplitMix64::new(seed) })
    }

    /// The tokens that may be drawn and their probabilities (summing to 1), most likely first
    /// (lowest id first among equals).
    pub fn candidates<F: Real>(&self, logits: &[F]) -> Vec<(u32, f64)> {
        let t = self.options.temperature;
        let mut order: Vec<(u32, f64)> = logits.iter().enumerate().map(|(i, &x)| (i as u32, x.to_f64() / t)).collect();
        order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        if let Some(k) = self.options.top_k {
            let threshold = order[k.min(order.len()) - 1].1;
            order.retain(|&(_, x)| x >= threshold);
        }
        let softmax = |order: &mut Vec<(u32, f64)>| {
            let max = order[0].1;
            let total: f64 = order.iter().map(|&(_, x)| (x - max).exp()).sum();
            order.iter_mut().for_each(|(_, x)| *x = (*x - max).exp() / total);
        };
        softmax(&mut order);
        if let Some(p) = self.options.top_p {
            // ascending: drop while the cumulative mass is ≤ 1 − p, keeping the most likely
            let (mut cumulative, mut keep) = (0.0, order.len());
            for &(_, q) in order.iter().rev() {
                cumulative += q;
                if cumulative > 1.0 - p || keep == 1 {
                    break;
                }
                keep -= 1;
            }
            order.truncate(keep);
            let total: f64 = order.iter().map(|&(_, q)| q).sum();
            order.iter_mut().for_each(|(_, q)| *q /= total);
        }
        order
    }

    /// The next token (see the module docs).
    pub fn choose<F: Real>(&mut self, logits: &[F]) -> u32 {
        if self.options.temperature == 0.0 {
            return argmax(logits);
        }
        let candidates = self.candidates(logits);
        let u = self.rng.next_unit();
        let mut cumulative = 0.0;
        for &(id, q) in &candidates {
            cumulative += q;
            if u < cumulative {
                return id;
            }
        }
        candidates.last().expect("at least one candidate").0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sampler(temperature: f64, top_k: Option<usize>, top_p: Option<f64>, seed: u64) -> Sampler {
        Sampler::new(Sampling { temperature, top_k, top_p }, seed).unwrap()
    }

    #[test]
    fn temperature_zero_is_greedy_and_top_k_keeps_ties() {
        let logits = [0.5f32, 2.0, -1.0, 2.0, 1.9];
        assert_eq!(sampler(0.0, None, None, 1).choose(&logits), 1);
        let mut k1 = sampler(3.0, Some(1), None, 7);
        assert!((0..200).all(|_| matches!(k1.choose(&logits), 1 | 3)));
        // top-k keeps ties at its boundary: both 2.0s with k = 1
        assert_eq!(k1.candidates(&logits).iter().map(|c| c.0).collect::<Vec<_>>(), vec![1, 3]);
    }

    #[test]
    fn draws_follow_the_softmax() {
        // probabilities 1/10, 2/10, 3/10, 4/10
        let logits: Vec<f64> = [1.0f64, 2.0, 3.0, 4.0].iter().map(|x| x.ln()).collect();
        let mut s = sampler(1.0, None, None, 42);
        let n = 40_000;
        let mut counts = [0usize; 4];
        for _ in 0..n {
            counts[s.choose(&logits) as usize] += 1;
        }
        for (i, &c) in counts.iter().enumerate() {
            let p = (i + 1) as f64 / 10.0;
            let sigma = (n as f64 * p * (1.0 - p)).sqrt();
            assert!((c as f64 - n as f64 * p).abs() < 4.0 * sigma, "token {i}: {c} draws of {n}, expected {}", n as f64 * p);
        }
        // temperature 2 flattens: p ∝ √(i + 1)
        let flat = sampler(2.0, None, None, 0).candidates(&logits);
        let z: f64 = (1..=4).map(|i| f64::from(i).sqrt()).sum();
        for (id, q) in flat {
            assert!((q - f64::from(id + 1).sqrt() / z).abs() < 1e-15);
        }
    }

    #[test]
    fn top_p_keeps_the_smallest_likely_set() {
        let logits: Vec<f64> = [0.5f64, 0.3, 0.2].iter().map(|x| x.ln()).collect();
        let ids = |p: f64| sampler(1.0, None, Some(p), 0).candidates(&logits).iter().map(|c| c.0).collect::<Vec<_>>();
        assert_eq!(ids(0.4), vec![0]);
        assert_eq!(ids(0.5), vec![0]); // the 0.3 + 0.2 = 0.5 below it is ≤ 1 − 0.5: dropped
        assert_eq!(ids(0.6), vec![0, 1]);
        assert_eq!(ids(1.0), vec![0, 1, 2]);
        let kept = sampler(1.0, None, Some(0.6), 0).candidates(&logits);
        assert!((kept[0].1 - 0.625).abs() < 1e-15 && (kept[1].1 - 0.375).abs() < 1e-15);
        let mut s = sampler(1.0, None, Some(0.6), 3);
        assert!((0..2000).all(|_| s.choose(&logits) != 2));
    }

    #[test]
    fn a_seed_repeats_its_tokens() {
        let logits = [0.1f32, 0.2, 0.3, 0.4, 0.5];
        let draw = |seed| {
            let mut s = sampler(1.0, Some(4), Some(0.9), seed);
            (0..50).map(|_| s.choose(&logits)).collect::<Vec<_>>()
        };
        assert_eq!(draw(9), draw(9));
        assert_ne!(draw(9), draw(10));
    }

    #[test]
    fn bad_options_are_refused_by_name() {
        let err = |temperature, top_k, top_p| Sampler::new(Sampling { temperature, top_k, top_p }, 0).unwrap_err().to_string();
        assert_eq!(err(-1.0, None, None), "RangeError: options.temperature is -1; expected a finite number ≥ 0 (0 is greedy)");
        assert!(err(f64::NAN, None, None).starts_with("RangeError: options.temperature is NaN"));
        assert_eq!(err(1.0, Some(0), None), "RangeError: options.topK is 0; expected an integer ≥ 1");
        assert_eq!(err(1.0, None, Some(0.0)), "RangeError: options.topP is 0; expected a number in (0, 1]");
        assert!(err(1.0, None, Some(1.5)).starts_with("RangeError: options.topP is 1.5"));
    }
}
