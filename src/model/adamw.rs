//! AdamW exactly as PyTorch's `torch.optim.AdamW` (the single-tensor path, `amsgrad=False`,
//! `maximize=False`): at step `s` (counted from 1), for every parameter `p` with gradient `g`,
//! element-wise in the model's precision, with the scalars computed in f64 and rounded once:
//!
//! ```text
//! p = p · (1 − lr·weight_decay)            // only for 2-D parameters (weights, embeddings)
//! m = m + (1 − β1)·(g − m)                 // exp_avg.lerp_(grad, 1 − β1)
//! v = β2·v + (1 − β2)·g·g                  // exp_avg_sq.mul_(β2).addcmul_(g, g, 1 − β2)
//! step_size = lr / (1 − β1^s)
//! denom = √v / √(1 − β2^s) + eps
//! p = p − step_size · m / denom            // param.addcdiv_(exp_avg, denom, −step_size)
//! ```

use super::Param;
use crate::error::{number_text, AttentionError, Result};
use crate::real::Real;

/// The optimizer's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamW {
    pub learning_rate: f64,
    pub betas: (f64, f64),
    pub eps: f64,
    pub weight_decay: f64,
}

impl AdamW {
    /// PyTorch's defaults except the learning rate: betas (0.9, 0.999), eps 1e-8, weight decay 0.01.
    pub fn new(learning_rate: f64) -> Self {
        Self { learning_rate, betas: (0.9, 0.999), eps: 1e-8, weight_decay: 0.01 }
    }

    /// The option a step too large is blamed on, as "options.X = v is too large" and "lower the …":
    /// the weight decay when it multiplies the weights by 1 − learningRate·weightDecay < 0 and is the
    /// larger of the two (a learning rate of 1e-3 with a weight decay of 1e308), else the learning rate.
    pub(crate) fn too_large(&self) -> (String, &'static str) {
        let (name, value, remedy) = if self.learning_rate * self.weight_decay > 1.0 && self.weight_decay > self.learning_rate {
            ("weightDecay", self.weight_decay, "the weight decay")
        } else {
            ("learningRate", self.learning_rate, "the learning rate")
        };
        (format!("options.{name} = {}", super::bounds::magnitude_text(value)), remedy)
    }

    /// RangeErrors naming the option (`options.learningRate` …).
    pub fn check(&self) -> Result<()> {
        let finite_at_least_zero = |name: &str, x: f64| {
            if x.is_finite() && x >= 0.0 {
                Ok(())
            } else {
                Err(AttentionError::range_error(format!("options.{name} is {}; expected a finite number ≥ 0", number_text(x))))
            }
        };
        finite_at_least_zero("learningRate", self.learning_rate)?;
        finite_at_least_zero("weightDecay", self.weight_decay)?;
        finite_at_least_zero("eps", self.eps)?;
        for (i, beta) in [self.betas.0, self.betas.1].into_iter().enumerate() {
            if !(0.0..1.0).contains(&beta) {
                return Err(AttentionError::range_error(format!("options.betas[{i}] is {}; expected a number with 0 ≤ beta < 1", number_text(beta))));
            }
        }
        Ok(())
    }
}

/// The moments of every parameter (the same order and shapes as the model's parameters) and the
/// number of steps taken. Before any step they are all zero and not allocated (`m` and `v` empty): a
/// model that only runs forward (a loaded checkpoint) keeps no optimizer memory; [`Moments::full`]
/// gives them allocated.
#[derive(Clone, Debug, PartialEq)]
pub struct Moments<F> {
    pub m: Vec<Vec<F>>,
    pub v: Vec<Vec<F>>,
    pub step: u64,
}

impl<F: Real> Moments<F> {
    /// Zero moments, step 0, not allocated yet.
    pub fn zeros(_params: &[Param<F>]) -> Self {
        Self { m: Vec::new(), v: Vec::new(), step: 0 }
    }

    /// These moments with every tensor allocated (zeros where none was yet), one per parameter.
    pub fn full(&self, params: &[Param<F>]) -> Self {
        if !self.m.is_empty() || params.is_empty() {
            return self.clone();
        }
        let zeros = || params.iter().map(|p| vec![F::ZERO; p.data.len()]).collect();
        Self { m: zeros(), v: zeros(), step: self.step }
    }

    /// A RangeError unless the moments fit `params` and are finite (and v ≥ 0).
    pub fn check(&self, params: &[Param<F>]) -> Result<()> {
        for (which, all) in [("m", &self.m), ("v", &self.v)] {
            if all.len() != params.len() {
                return Err(AttentionError::range_error(format!("state.{which} has {} tensors; expected {}, one per parameter", all.len(), params.len())));
            }
            for (p, values) in params.iter().zip(all) {
                if values.len() != p.data.len() {
                    return Err(AttentionError::range_error(format!("state.{which} of {} has {} entries; expected {}", p.path(), values.len(), p.data.len())));
                }
                if let Some(i) = values.iter().position(|&x| !x.is_finite() || (which == "v" && x < F::ZERO)) {
                    return Err(AttentionError::range_error(format!(
                        "state.{which} of {} entry {i} is {}; expected a finite number{}",
                        p.path(),
                        number_text(values[i].to_f64()),
                        if which == "v" { " ≥ 0" } else { "" }
                    )));
                }
            }
        }
        Ok(())
    }

    /// One AdamW step of `params` (updated in place) with `grads`; returns the new moments.
    /// A RangeError (and `params` must then be dropped by the caller) when a parameter overflows.
    pub fn step(&self, params: &mut [Param<F>], grads: &[Vec<F>], o: &AdamW) -> Result<Self> {
        let mut next = self.full(params);
        next.step += 1;
        let s = next.step as f64;
        let (b1, b2) = o.betas;
        let decay = F::from_f64(1.0 - o.learning_rate * o.weight_decay);
        let step_size = F::from_f64(o.learning_rate / (1.0 - b1.powf(s)));
        let correction2_sqrt = F::from_f64((1.0 - b2.powf(s)).sqrt());
        let (one_minus_b1, b2f, one_minus_b2, eps) = (F::from_f64(1.0 - b1), F::from_f64(b2), F::from_f64(1.0 - b2), F::from_f64(o.eps));
        if o.eps > 0.0 && eps == F::ZERO {
            // f32: an eps below half the smallest float32 would silently be 0 (and 0 / 0 where v is 0)
            return Err(AttentionError::range_error(format!(
                "options.eps is {}, which rounds to 0 in a float32 model; give eps ≥ 1e-45 (or 0, knowing that m / (√v + eps) then divides by zero where v is 0)",
                super::bounds::magnitude_text(o.eps)
            )));
        }
        for (((p, g), m), v) in params.iter_mut().zip(grads).zip(&mut next.m).zip(&mut next.v) {
            let decays = p.decays();
            for (((x, &g), m), v) in p.data.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()) {
                if decays {
                    *x = *x * decay;
                }
                *m = *m + one_minus_b1 * (g - *m);
                *v = b2f * *v + one_minus_b2 * g * g;
                let denom = v.sqrt() / correction2_sqrt + eps;
                *x = *x - step_size * (*m / denom);
            }
            if let Some(i) = p.data.iter().position(|x| !x.is_finite()) {
                return Err(AttentionError::range_error(if o.eps == 0.0 {
                    format!(
                        "the AdamW step makes {} entry {i} {}: with eps = 0, m / (√v + eps) divides by zero where v is 0 (a gradient that is 0 or whose square underflows); give options.eps > 0",
                        p.path(),
                        crate::limits::non_finite_name(p.data[i].to_f64())
                    )
                } else {
                    let (option, remedy) = o.too_large();
                    format!(
                        "{option} is too large: the AdamW step overflows {} entry {i} beyond the largest {}; lower {remedy} (the model was not changed)",
                        p.path(),
                        F::LARGEST
                    )
                }));
            }
        }
        Ok(next)
    }
}
