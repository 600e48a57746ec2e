//! The model's parameter tensors, its checked tokens and what a forward pass returns.

use super::*;

/// One parameter tensor: `layer` is `None` for the model's own (`W_E`, `W_pos`, `W_U`, `ln_final_*`).
#[derive(Clone, Debug, PartialEq)]
pub struct Param<F> {
    pub layer: Option<usize>,
    pub name: &'static str,
    /// `[rows, cols]`, or `[n]` for a vector.
    pub shape: Vec<usize>,
    pub data: Vec<F>,
}

impl<F: Real> Param<F> {
    pub(super) fn new(layer: Option<usize>, name: &'static str, shape: Vec<usize>, data: Vec<F>) -> Self {
        Self { layer, name, shape, data }
    }

    pub(super) fn filled(layer: Option<usize>, name: &'static str, n: usize, value: f64) -> Self {
        Self::new(layer, name, vec![n], vec![F::from_f64(value); n])
    }

    pub(super) fn from_matrix(layer: Option<usize>, name: &'static str, m: Matrix) -> Self {
        Self::new(layer, name, vec![m.rows(), m.cols()], m.data().iter().map(|&x| F::from_f64(x)).collect())
    }

    /// Where a message names it: `W_E`, `layers[1].W_Q`.
    pub fn path(&self) -> String {
        match self.layer {
            Some(l) => format!("layers[{l}].{}", self.name),
            None => self.name.to_string(),
        }
    }

    /// AdamW decays the 2-D parameters (weights and embeddings) and nothing else.
    pub fn decays(&self) -> bool {
        self.shape.len() == 2
    }
}

/// The attention layer's parameter names, in [`Weights::tensors`] order.
pub(super) const ATTENTION_NAMES: [&str; 8] = ["W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O"];

/// Layer `l`'s attention weights as parameters, in [`Weights::tensors`] order, each with its shape.
pub fn attention_params<F: Real>(l: usize, weights: &Weights) -> Vec<Param<F>> {
    let shapes = [&weights.w_q, &weights.w_k, &weights.w_v, &weights.w_o].map(|m| vec![m.rows(), m.cols()]);
    weights
        .tensors()
        .into_iter()
        .enumerate()
        .map(|(i, (name, data))| {
            let shape = if i < 4 { shapes[i].clone() } else { vec![data.len()] };
            let name = ATTENTION_NAMES.into_iter().find(|&n| n == name).expect("the layer's own names");
            Param::new(Some(l), name, shape, data.iter().map(|&x| F::from_f64(x)).collect())
        })
        .collect()
}

/// What [`Transformer::forward`] returns.
#[derive(Clone, Debug)]
pub struct ModelOutput<F> {
    /// `[B, T, V]`.
    pub logits: Vec<F>,
    /// The mean of `losses`.
    pub loss: f64,
    /// `[B, T − 1]`: the cross-entropy of each next token.
    pub losses: Vec<f64>,
    /// With `need_weights`: per layer `[B, h, T, T]`.
    pub weights: Option<Vec<Vec<F>>>,
    /// With `need_hidden`: L + 1 entries `[B, T, C]`, as Hugging Face's `output_hidden_states`: the
    /// embeddings, the residual stream after each block but the last, and the final norm's output.
    pub hidden: Option<Vec<Vec<F>>>,
}

/// The model's tokens, checked: `[B, T]` row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Tokens {
    pub data: Vec<u32>,
    pub batch: usize,
    pub t: usize,
}

impl Tokens {
    /// From JS numbers, `[B, T]` row-major: each must be an integer in `0 … vocab_size − 1`, and
    /// `2 ≤ T ≤ context_length`.
    pub fn check(values: &[f64], batch: usize, t: usize, config: &ModelConfig) -> Result<Self> {
        if batch == 0 {
            return Err(AttentionError::range_error("tokens is an empty batch; expected [B, T] with B ≥ 1"));
        }
        config.check_sequence_length(t)?;
        let mut data = Vec::with_capacity(values.len());
        for (i, &x) in values.iter().enumerate() {
            if !(x.fract() == 0.0 && x >= 0.0 && x < config.vocab_size as f64) {
                return Err(AttentionError::range_error(format!(
                    "tokens[{}][{}] is {}; expected an integer in 0 … vocabSize − 1 = {}",
                    i / t,
                    i % t,
                    number_text(x),
                    config.vocab_size - 1
                )));
            }
            data.push(x as u32);
        }
        Ok(Self { data, batch, t })
    }

    /// Each row's next token (`None` at the last position of each sequence).
    pub(crate) fn targets(&self) -> Vec<Option<u32>> {
        (0..self.data.len()).map(|i| (i % self.t + 1 < self.t).then(|| self.data[i + 1])).collect()
    }
}
