//! Head-score detectors (TransformerLens's, one small function each), on one head's attention
//! weights `A` (`T × T`, row t the query at position t) of one sequence `tokens`.
//!
//! For each head, a score is the mean over every `(b, t)` with `t ≥ 1` where it is defined:
//! - `previous_token`: `A[t][t − 1]`;
//! - `first_token`: `A[t][0]`;
//! - `self`: `A[t][t]`;
//! - `induction` (prefix matching): defined where token t occurred before; the summed weight
//!   `Σ A[t][s + 1]` over every earlier occurrence `s < t` of token t (the token after each copy,
//!   which an induction head attends to).

use crate::real::Real;

/// The four scores of one head.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HeadScores {
    pub previous_token: f64,
    pub induction: f64,
    pub first_token: f64,
    pub self_: f64,
}

/// A running mean over the positions where a score is defined.
#[derive(Clone, Copy, Debug, Default)]
struct Mean {
    sum: f64,
    count: usize,
}

impl Mean {
    fn add(&mut self, x: Option<f64>) {
        if let Some(x) = x {
            self.sum += x;
            self.count += 1;
        }
    }

    /// 0 where the score is never defined.
    fn value(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }
}

fn previous_token<F: Real>(a: &[F], t_len: usize, t: usize) -> Option<f64> {
    Some(a[t * t_len + t - 1].to_f64())
}

fn first_token<F: Real>(a: &[F], t_len: usize, t: usize) -> Option<f64> {
    Some(a[t * t_len].to_f64())
}

fn self_attention<F: Real>(a: &[F], t_len: usize, t: usize) -> Option<f64> {
    Some(a[t * t_len + t].to_f64())
}

fn induction<F: Real>(a: &[F], t_len: usize, t: usize, tokens: &[u32]) -> Option<f64> {
    let earlier: Vec<usize> = (0..t).filter(|&s| tokens[s] == tokens[t]).collect();
    (!earlier.is_empty()).then(|| earlier.iter().map(|&s| a[t * t_len + s + 1].to_f64()).sum())
}

/// The scores of every head from `weights` `[B, h, T, T]` and `tokens` `[B, T]`.
pub fn head_scores<F: Real>(weights: &[F], tokens: &[u32], batch: usize, heads: usize, t_len: usize) -> Vec<HeadScores> {
    (0..heads)
        .map(|head| {
            let mut means = [Mean::default(); 4];
            for b in 0..batch {
                let a = &weights[(b * heads + head) * t_len * t_len..][..t_len * t_len];
                let seq = &tokens[b * t_len..(b + 1) * t_len];
                for t in 1..t_len {
                    means[0].add(previous_token(a, t_len, t));
                    means[1].add(induction(a, t_len, t, seq));
                    means[2].add(first_token(a, t_len, t));
                    means[3].add(self_attention(a, t_len, t));
                }
            }
            HeadScores { previous_token: means[0].value(), induction: means[1].value(), first_token: means[2].value(), self_: means[3].value() }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The causal pattern that attends to `target(t)` with weight 1.
    fn one_hot_pattern(t_len: usize, target: impl Fn(usize) -> usize) -> Vec<f64> {
        let mut a = vec![0.0; t_len * t_len];
        for t in 0..t_len {
            a[t * t_len + target(t)] = 1.0;
        }
        a
    }

    #[test]
    fn each_detector_recognises_its_pattern() {
        // BOS, then period 3 repeated: 0 5 6 7 5 6 7 5 6
        let tokens = [0, 5, 6, 7, 5, 6, 7, 5, 6];
        let n = tokens.len();
        let prev = head_scores(&one_hot_pattern(n, |t| t.saturating_sub(1)), &tokens, 1, 1, n)[0];
        assert_eq!((prev.previous_token, prev.first_token), (1.0, 1.0 / 8.0));
        // an induction head: at t, the position after the last earlier copy of token t, else BOS
        let last_copy = |t: usize| (0..t).rev().find(|&s| tokens[s] == tokens[t]).map_or(0, |s| s + 1);
        let ind = head_scores(&one_hot_pattern(n, last_copy), &tokens, 1, 1, n)[0];
        assert_eq!(ind.induction, 1.0, "every defined position puts all its weight after a copy");
        // only t = 1 (no earlier copy: it looks at BOS = t − 1) counts as previous-token
        assert_eq!(ind.previous_token, 1.0 / 8.0);
        let bos = head_scores(&one_hot_pattern(n, |_| 0), &tokens, 1, 1, n)[0];
        assert_eq!((bos.first_token, bos.induction, bos.self_), (1.0, 0.0, 0.0));
        let own = head_scores(&one_hot_pattern(n, |t| t), &tokens, 1, 1, n)[0];
        assert_eq!(own.self_, 1.0);
    }

    #[test]
    fn induction_sums_over_every_earlier_copy() {
        // token 5 at 1, 3 and 5: at t = 5 the copies are s = 1 and s = 3, so keys 2 and 4
        let tokens = [0, 5, 6, 5, 6, 5];
        let n = tokens.len();
        let mut a = vec![0.0; n * n];
        a[5 * n + 2] = 0.25;
        a[5 * n + 4] = 0.5;
        a[5 * n + 5] = 0.25;
        let s = head_scores(&a, &tokens, 1, 1, n)[0];
        // defined at t = 3 (copy at 1: key 2, weight 0), t = 4 (copy at 2: key 3, 0), t = 5 (0.75)
        assert!((s.induction - 0.75 / 3.0).abs() < 1e-15);
    }
}
