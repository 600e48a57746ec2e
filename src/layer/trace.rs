//! The layer's forward pass with every intermediate recorded, projections and biases included,
//! in the vocabulary of [`crate::trace`] (replayable with [`crate::trace::replay`]).
//!
//! Names: the inputs are `query`, `key`, `value`, `W_Q`, `W_K`, `W_V`, `W_O` and, with biases,
//! `b_Q`, `b_K`, `b_V`, `b_O` (each a `1 × C` matrix). The projections are `query·W_Q` (MatMul)
//! and `Q` (Add of `b_Q`), likewise `K` and `V`; without biases the MatMul itself is named `Q`.
//! The heads, `concat` and the W_O MatMul follow as in [`crate::trace_multi_head_attention`];
//! with biases that MatMul is `concat·W_O` and the final Add of `b_O` is `output`.

use super::forward::ForwardOptions;
use super::limits::{check_forward, PROJECTIONS};
use super::{LayerLimits, MultiHeadAttention};
use crate::error::Result;
use crate::mask::Mask;
use crate::matrix::Matrix;
use super::kept::Positions;
use crate::engine::{Cols, HeadShape};
use crate::trace::{record_heads, Op, Recorder, Rotated, Step, Trace};

impl MultiHeadAttention {
    /// Evaluation-mode forward (no dropout) of one unbatched input, recording every step. The
    /// output equals [`MultiHeadAttention::forward`]'s bit for bit. Does not touch the state
    /// `backward` uses.
    pub fn trace(&self, query: &Matrix, key: &Matrix, value: &Matrix, mask: &Mask) -> Result<Trace> {
        let options = ForwardOptions { mask: mask.clone(), ..ForwardOptions::default() };
        let (t_q, t_k) = self.check_items(&[query.shape()], &[key.shape()], &[value.shape()], &options)?;
        // every head's scores, scaled scores, weights and context are kept: counted like a forward with dropout and needWeights
        check_forward(self, 1, t_q, t_k, (true, false, true), true, f64::PARAMETER_ROWS)?;
        let mut recorder = Recorder::new(t_q, t_k, mask);
        let w = self.weights();
        let b = w.biases.as_ref();
        // 0. Projections: x·W, then + b, each refused where it overflowed: (T_q, C), (T_k, C), (T_k, C)
        let mut project = |i: usize, x, w| project_recorded(&mut recorder, i, x, w, b.map(|b| b.slices()[i]));
        let (q, k, v) = (project(0, query, &w.w_q)?, project(1, key, &w.w_k)?, project(2, value, &w.w_v)?);
        // 0. RoPE: the heads see Q and K rotated; the recorder slices the unrotated ones and
        // records each head's Rotate
        let positions = Positions::aligned(t_q, t_k);
        let (mut q_rot, mut k_rot) = (q.clone(), k.clone());
        self.rotate(q_rot.data_mut(), q.cols(), positions.query, "Q")?;
        self.rotate(k_rot.data_mut(), k.cols(), positions.key, "K")?;
        if let Some(rope) = self.rope {
            recorder.rotated = Some(Rotated { q: &q, k: &k, rope, q_position: positions.query, k_position: positions.key });
        }
        if self.kv_heads != self.number_of_heads {
            recorder.kv_heads = Some(self.kv_heads);
        }
        // 1–7 and pass 8's W_O MatMul: the heads exactly as multi-head attention records them
        let mut shape = HeadShape::new(t_q, t_k, self.number_of_heads, self.kv_heads, self.head_dimensions);
        shape.offset = positions.offset(t_q, t_k);
        let mut output = record_heads(&mut recorder, (Cols::of(&q_rot), Cols::of(&k_rot), Cols::of(&v)), shape, Some(&w.w_o))?; // (T_q, C)
        let mut steps = recorder.steps;
        // 8. + b_O
        if let Some(b) = b {
            if let Some(last) = steps.last_mut() {
                last.name = "concat·W_O".into();
            }
            output.add_row(&b.b_o)?;
            f64::refuse_projection(output.data(), output.cols(), 3, true)?;
            steps.push(Step::new(Op::Add, "output".into(), &["concat·W_O", "b_O"], None, &output));
        }
        Ok(Trace { output: output.to_rows(), steps })
    }

    /// The named inputs a replay of [`MultiHeadAttention::trace`] starts from.
    pub fn trace_inputs(&self, query: &Matrix, key: &Matrix, value: &Matrix) -> Vec<(&'static str, Matrix)> {
        let w = self.weights();
        let mut inputs = vec![("query", query.clone()), ("key", key.clone()), ("value", value.clone())];
        // W_Q … W_O, then b_Q … b_O, named as PROJECTIONS names them
        inputs.extend(PROJECTIONS.iter().zip([&w.w_q, &w.w_k, &w.w_v, &w.w_o]).map(|(p, m)| (p.2, m.clone())));
        if let Some(b) = &w.biases {
            inputs.extend(PROJECTIONS.iter().zip(b.slices()).map(|(p, v)| (p.3, Matrix::new(1, v.len(), v.to_vec()).expect("1×C holds C values"))));
        }
        inputs
    }
}

/// Projection `i` of [`PROJECTIONS`]: `x·W` recorded as a MatMul, then `+ b` recorded as an Add,
/// refused where it overflowed.
fn project_recorded(recorder: &mut Recorder, i: usize, x: &Matrix, w: &Matrix, bias: Option<&[f64]>) -> Result<Matrix> {
    let (name, x_name, w_name, b_name) = PROJECTIONS[i];
    let mut projected = x.matmul(w)?; // (T, C)
    match bias {
        None => _ = recorder.record(Op::MatMul, name.into(), &[x_name, w_name], None, &projected),
        Some(b) => {
            let product_name = format!("{x_name}·{w_name}");
            recorder.record(Op::MatMul, product_name.clone(), &[x_name, w_name], None, &projected);
            projected.add_row(b)?; // (T, C)
            recorder.record(Op::Add, name.into(), &[&product_name, b_name], None, &projected);
        }
    }
    f64::refuse_projection(projected.data(), projected.cols(), i, bias.is_some())?;
    Ok(projected)
}

#[cfg(test)]
mod tests {
    use crate::layer::{ForwardOptions, LayerConfig, MultiHeadAttention};
    use crate::mask::Mask;
    use crate::matrix::Matrix;
    use crate::testing::{assert_bitwise_eq, seeded_matrix};
    use crate::trace::{replay, Op};

    fn replayed(layer: &MultiHeadAttention, q: &Matrix, k: &Matrix, v: &Matrix, mask: &Mask) -> (Matrix, Matrix, Vec<Op>) {
        let trace = layer.trace(q, k, v, mask).unwrap();
        let inputs = layer.trace_inputs(q, k, v);
        let named: Vec<(&str, &Matrix)> = inputs.iter().map(|(n, m)| (*n, m)).collect();
        let ops = trace.steps.iter().map(|s| s.op).collect();
        (replay(&named, &trace.steps).unwrap(), Matrix::from_rows(&trace.output).unwrap(), ops)
    }

    #[test]
    fn layer_trace_replays_to_the_forward_output_bit_for_bit() {
        for bias in [true, false] {
            let mut layer = MultiHeadAttention::new(&LayerConfig { bias, seed: 4, ..LayerConfig::new(6, 3) }).unwrap();
            let mut weights = layer.weights().into_owned();
            if let Some(b) = &mut weights.biases {
                b.b_q = seeded_matrix(1, 6, 1).into_data();
                b.b_o = seeded_matrix(1, 6, 2).into_data();
            }
            layer.set_weights(weights).unwrap();
            // cross-attention with a causal mask: T_q = 3, T_k = 4
            let (q, kv) = (seeded_matrix(3, 6, 3), seeded_matrix(4, 6, 4));
            let (replay_output, trace_output, ops) = replayed(&layer, &q, &kv, &kv, &Mask::causal());
            let one = std::slice::from_ref;
            let forward = layer.forward(one(&q), one(&kv), one(&kv), &ForwardOptions { mask: Mask::causal(), ..Default::default() }).unwrap();
            assert_bitwise_eq(&trace_output, &forward.output[0]);
            assert_bitwise_eq(&replay_output, &forward.output[0]);
            // 3 projections (MatMul + Add each with bias), 3 heads × 8 steps, Concat, W_O MatMul (+ Add)
            let adds = ops.iter().filter(|&&op| op == Op::Add).count();
            assert_eq!((ops.len(), adds), if bias { (6 + 24 + 3, 4) } else { (3 + 24 + 2, 0) });
        }
    }

    #[test]
    fn replay_catches_a_wrong_bias() {
        let layer = MultiHeadAttention::new(&LayerConfig::new(4, 2)).unwrap();
        let x = seeded_matrix(2, 4, 5);
        let trace = layer.trace(&x, &x, &x, &Mask::none()).unwrap();
        let mut inputs = layer.trace_inputs(&x, &x, &x);
        inputs.iter_mut().find(|(n, _)| *n == "b_K").unwrap().1.data_mut()[0] = 1e-9;
        let named: Vec<(&str, &Matrix)> = inputs.iter().map(|(n, m)| (*n, m)).collect();
        assert!(replay(&named, &trace.steps).is_err());
    }
}
