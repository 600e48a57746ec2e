//! A record of every intermediate of multi-head attention, in the spec's vocabulary
//! (Slice, Transpose, MatMul, Mul, StableSoftmax, Concat; Add for the layer's biases). The course site draws every
//! picture from it, and [`replay`] proves that the steps really produce the output.
//!
//! Names: the inputs are `Q`, `K`, `V` and `W_O`; head `i` produces `Q_i`, `K_i`, `V_i`,
//! `K_i^T`, `scores_i`, `scaled_i`, `weights_i`, `context_i`; then `concat` and `output`.

use std::collections::HashMap;

use crate::engine::{attention_scale, check_budget, project_output, Cols, Hooks, Workspace};
use crate::error::{AttentionError, Result};
use crate::mask::{BoolMatrix, Mask};
use crate::matrix::Matrix;
use crate::multi_head::{check_multi_head, heads, HeadSplit, MultiHeadOptions};
use crate::softmax::stable_softmax;

/// A primitive operation of the spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Slice,
    Transpose,
    MatMul,
    Mul,
    StableSoftmax,
    Concat,
    /// A bias: the second operand (`1 × C`) added to every row of the first (the layer's `+ b`).
    Add,
}

impl Op {
    /// The op's name as the trace reports it (`"Slice"`, `"MatMul"`, …).
    pub fn name(self) -> &'static str {
        match self {
            Op::Slice => "Slice",
            Op::Transpose => "Transpose",
            Op::MatMul => "MatMul",
            Op::Mul => "Mul",
            Op::StableSoftmax => "StableSoftmax",
            Op::Concat => "Concat",
            Op::Add => "Add",
        }
    }
}

/// One intermediate: what produced it, from what, and its values.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub op: Op,
    /// The name later steps refer to it by.
    pub name: String,
    /// Names of the operands, in order.
    pub inputs: Vec<String>,
    /// The head this step belongs to, if any.
    pub head: Option<usize>,
    /// `[rows, cols]`.
    pub shape: [usize; 2],
    /// The values, row by row.
    pub values: Vec<Vec<f64>>,
    /// Slice: the half-open column range `[start, end)`.
    pub columns: Option<[usize; 2]>,
    /// Mul: the scalar factor.
    pub scalar: Option<f64>,
    /// StableSoftmax: which (query, key) pairs were allowed, when anything was masked.
    pub allowed: Option<Vec<Vec<bool>>>,
}

impl Step {
    pub(crate) fn new(op: Op, name: String, inputs: &[&str], head: Option<usize>, value: &Matrix) -> Self {
        Self {
            op,
            name,
            inputs: inputs.iter().map(|s| s.to_string()).collect(),
            head,
            shape: [value.rows(), value.cols()],
            values: value.to_rows(),
            columns: None,
            scalar: None,
            allowed: None,
        }
    }

    fn matrix(&self) -> Result<Matrix> {
        Matrix::from_rows(&self.values)
    }
}

/// The engine's hooks that keep every intermediate as a [`Step`]: the head's slices and Kᵀ when
/// it starts, its blocks of scores, weights and context gathered into whole `T_q × T_k` (and
/// `T_q × d_head`) matrices, recorded when it ends.
pub(crate) struct Recorder<'a> {
    pub steps: Vec<Step>,
    t_q: usize,
    t_k: usize,
    mask: &'a Mask,
    /// The current head's scores, weights and context, row by row as the blocks arrive.
    scores: Vec<f64>,
    weights: Vec<f64>,
    context: Vec<f64>,
    d_head: usize,
}

impl<'a> Recorder<'a> {
    pub(crate) fn new(t_q: usize, t_k: usize, mask: &'a Mask) -> Self {
        Self { steps: Vec::new(), t_q, t_k, mask, scores: Vec::new(), weights: Vec::new(), context: Vec::new(), d_head: 0 }
    }

    pub(crate) fn record(&mut self, op: Op, name: String, inputs: &[&str], head: Option<usize>, value: &Matrix) -> &mut Step {
        self.steps.push(Step::new(op, name, inputs, head, value));
        self.steps.last_mut().expect("just pushed")
    }

    /// `rows` rows of a column range as a matrix.
    fn columns(m: Cols<f64>, rows: usize) -> Result<Matrix> {
        Matrix::new(rows, m.width, (0..rows).flat_map(|r| m.row(r).iter().copied()).collect())
    }

    /// Records `concat` (`(T, C)`, from the heads' contexts) and returns it as a matrix.
    pub(crate) fn concat(&mut self, concat: &[f64], heads: usize) -> Result<Matrix> {
        let c = concat.len() / self.t_q.max(1);
        let concat = Matrix::new(self.t_q, c, concat.to_vec())?;
        let names: Vec<String> = (0..heads).map(|i| format!("context_{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        self.record(Op::Concat, "concat".into(), &names, None, &concat);
        Ok(concat)
    }
}

impl Hooks<f64> for Recorder<'_> {
    fn head_start(&mut self, head: usize, q: Cols<f64>, k: Cols<f64>, v: Cols<f64>) -> Result<()> {
        // 1. Slice the head's columns out of Q, K and V; 2. Transpose K_h
        let columns = [q.start, q.start + q.width];
        for (name, m, rows) in [("Q", q, self.t_q), ("K", k, self.t_k), ("V", v, self.t_k)] {
            let part = Self::columns(m, rows)?; // (T, d_head)
            self.record(Op::Slice, format!("{name}_{head}"), &[name], Some(head), &part).columns = Some(columns);
        }
        let k_t = Self::columns(k, self.t_k)?.transpose(); // (d_head, T_k)
        self.record(Op::Transpose, format!("K_{head}^T"), &[&format!("K_{head}")], Some(head), &k_t);
        self.d_head = v.width;
        self.scores.clear();
        self.weights.clear();
        self.context.clear();
        Ok(())
    }

    fn scores(&mut self, _head: usize, _first: usize, scores: &[f64], _n_keys: usize) {
        self.scores.extend_from_slice(scores); // f64 computes every key: rows × T_k
    }

    fn weights(&mut self, _head: usize, _first: usize, weights: &mut [f64], _n_keys: usize) -> Result<()> {
        self.weights.extend_from_slice(weights);
        Ok(())
    }

    fn context(&mut self, _head: usize, first: usize, rows: usize, out: &[f64], stride: usize, start: usize) {
        for r in first..first + rows {
            self.context.extend_from_slice(&out[r * stride + start..][..self.d_head]);
        }
    }

    fn head_end(&mut self, head: usize) -> Result<()> {
        let (t_q, t_k) = (self.t_q, self.t_k);
        let matrix = |data: &[f64], cols| Matrix::new(t_q, cols, data.to_vec());
        // 3. MatMul: scores; 4. Mul by 1/√d_head (the multiplication the f64 softmax kernel starts with)
        let scores = matrix(&self.scores, t_k)?; // (T_q, T_k)
        let scale = attention_scale::<f64>(self.d_head);
        let scaled = scores.scale(scale); // (T_q, T_k)
        self.record(Op::MatMul, format!("scores_{head}"), &[&format!("Q_{head}"), &format!("K_{head}^T")], Some(head), &scores);
        self.record(Op::Mul, format!("scaled_{head}"), &[&format!("scores_{head}")], Some(head), &scaled).scalar = Some(scale);
        // 5. StableSoftmax along each row, masked keys get weight 0
        let weights = matrix(&self.weights, t_k)?; // (T_q, T_k)
        let allowed = self.mask.resolve(t_q, t_k, t_k as isize - t_q as isize).map(|m| m.to_rows());
        self.record(Op::StableSoftmax, format!("weights_{head}"), &[&format!("scaled_{head}")], Some(head), &weights).allowed = allowed;
        // 6. MatMul: the weighted sum of the head's values
        let context = matrix(&self.context, self.d_head)?; // (T_q, d_head)
        self.record(Op::MatMul, format!("context_{head}"), &[&format!("weights_{head}"), &format!("V_{head}")], Some(head), &context);
        Ok(())
    }
}

/// The output and every step that led to it.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    pub output: Vec<Vec<f64>>,
    pub steps: Vec<Step>,
}

/// Multi-head attention with every intermediate recorded. `output` is bit-identical to
/// [`crate::multi_head_attention`] on the same input.
pub fn trace_multi_head_attention(q: &Matrix, k: &Matrix, v: &Matrix, options: &MultiHeadOptions) -> Result<Trace> {
    check_multi_head(q, k, v, options)?;
    // the steps keep every intermediate: per head 5 T×d_head matrices and 3 T×T ones, then concat and output
    let (t, c, h) = (q.rows(), q.cols(), options.split.number_of_heads);
    check_budget(options.split.head_shape(t, t), &[(3 * t, c), (10 * t, c), (3 * h * t, t), (3 * t, t)], || {
        format!("traceMultiHeadAttention with T = {t}, C = {c} and {h} heads (every intermediate is kept)")
    })?;
    let mut recorder = Recorder::new(t, t, &options.mask);
    let output = record_heads(&mut recorder, (Cols::of(q), Cols::of(k), Cols::of(v)), options.split, options.w_o.as_ref())?;
    Ok(Trace { output: output.to_rows(), steps: recorder.steps })
}

/// The heads, `concat` and the W_O MatMul (`"output"`), recorded; returns the output, `(T, C)`.
/// Shared by [`trace_multi_head_attention`] and the layer's trace.
pub(crate) fn record_heads(recorder: &mut Recorder, (q, k, v): (Cols<f64>, Cols<f64>, Cols<f64>), split: HeadSplit, w_o: Option<&Matrix>) -> Result<Matrix> {
    let (mask, t) = (recorder.mask, recorder.t_q);
    let mut concat = heads(q, k, v, split.head_shape(t, recorder.t_k), mask, &mut Workspace::new(), recorder)?;
    recorder.concat(&concat, split.number_of_heads)?;
    // 8. MatMul by W_O
    project_output(&mut concat, t, q.stride, w_o.map(Matrix::data))?; // (T, C)
    let output = Matrix::new(t, q.stride, concat)?;
    recorder.record(Op::MatMul, "output".into(), &["concat", "W_O"], None, &output);
    Ok(output)
}

/// Re-executes `steps` in order from the named inputs and returns the last result.
/// Fails if any step's recorded values differ, by a single bit, from what its op computes.
pub fn replay(inputs: &[(&str, &Matrix)], steps: &[Step]) -> Result<Matrix> {
    let mut env: HashMap<String, Matrix> = inputs.iter().map(|(n, m)| (n.to_string(), (*m).clone())).collect();
    let mut last = None;
    for step in steps {
        let operand = |i: usize| -> Result<&Matrix> {
            let name = step.inputs.get(i).ok_or_else(|| mismatch(step, "has too few inputs"))?;
            env.get(name).ok_or_else(|| mismatch(step, &format!("uses {name}, which no earlier step made")))
        };
        let computed = match step.op {
            Op::Slice => {
                let [start, end] = step.columns.ok_or_else(|| mismatch(step, "has no column range"))?;
                operand(0)?.slice_columns(start, end)?
            }
            Op::Transpose => operand(0)?.transpose(),
            Op::MatMul => operand(0)?.matmul(operand(1)?)?,
            Op::Mul => operand(0)?.scale(step.scalar.ok_or_else(|| mismatch(step, "has no scalar"))?),
            Op::StableSoftmax => {
                let scores = operand(0)?;
                let allowed = match &step.allowed {
                    Some(rows) => {
                        let flat: Vec<bool> = rows.iter().flatten().copied().collect();
                        Some(BoolMatrix::new(scores.rows(), scores.cols(), flat)?)
                    }
                    None => None,
                };
                stable_softmax(scores, &Mask { causal: false, allowed, window: None })
            }
            Op::Add => {
                let bias = operand(1)?;
                if bias.rows() != 1 {
                    return Err(mismatch(step, "adds a bias that is not one row"));
                }
                let mut sum = operand(0)?.clone();
                sum.add_row(bias.row(0))?;
                sum
            }
            Op::Concat => {
                let parts = (0..step.inputs.len()).map(|i| operand(i).cloned()).collect::<Result<Vec<_>>>()?;
                Matrix::concat_columns(&parts)?
            }
        };
        let recorded = step.matrix()?;
        let same_bits = computed.shape() == recorded.shape()
            && computed.data().iter().zip(recorded.data()).all(|(a, b)| a.to_bits() == b.to_bits());
        if !same_bits {
            return Err(mismatch(step, "records values its op does not produce"));
        }
        env.insert(step.name.clone(), computed.clone());
        last = Some(computed);
    }
    last.ok_or_else(|| AttentionError::range_error("the trace has no steps"))
}

fn mismatch(step: &Step, what: &str) -> AttentionError {
    AttentionError::range_error(format!("step {} ({:?}) {what}", step.name, step.op))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::multi_head::multi_head_attention;
    use crate::testing::{assert_bitwise_eq, challenge_qkv, seeded_matrix};

    fn replay_with_identity(q: &Matrix, k: &Matrix, v: &Matrix, trace: &Trace, c: usize) -> Matrix {
        let w_o = Matrix::identity(c);
        replay(&[("Q", q), ("K", k), ("V", v), ("W_O", &w_o)], &trace.steps).unwrap()
    }

    #[test]
    fn challenge_trace_has_every_step_and_replays() {
        let (q, k, v) = challenge_qkv();
        let trace = trace_multi_head_attention(&q, &k, &v, &MultiHeadOptions::new(2, 1)).unwrap();
        // per head: 3 slices, transpose, matmul, mul, softmax, matmul; then concat and W_O
        assert_eq!(trace.steps.len(), 2 * 8 + 2);
        assert_eq!(trace.steps[0].columns, Some([0, 1]));
        assert_eq!(trace.steps[0].values, vec![vec![1.0], vec![3.0]]);
        let replayed = replay_with_identity(&q, &k, &v, &trace, 2);
        assert_bitwise_eq(&replayed, &Matrix::from_rows(&trace.output).unwrap());
    }

    #[test]
    fn trace_output_equals_multi_head_attention_bit_for_bit() {
        let (q, k, v) = (seeded_matrix(6, 6, 11), seeded_matrix(6, 6, 12), seeded_matrix(6, 6, 13));
        let mut options = MultiHeadOptions::new(3, 2);
        options.mask = Mask::causal();
        let trace = trace_multi_head_attention(&q, &k, &v, &options).unwrap();
        let direct = multi_head_attention(&q, &k, &v, &options).unwrap();
        assert_bitwise_eq(&Matrix::from_rows(&trace.output).unwrap(), &direct);
        assert_bitwise_eq(&replay_with_identity(&q, &k, &v, &trace, 6), &direct);
    }

    #[test]
    fn blocked_output_equals_the_full_trace_bit_for_bit() {
        // T = 150 > QUERY_BLOCK: multi_head_attention works in three row blocks, the trace in one
        let (q, k, v) = (seeded_matrix(150, 8, 21), seeded_matrix(150, 8, 22), seeded_matrix(150, 8, 23));
        for mask in [Mask::none(), Mask::causal()] {
            let options = MultiHeadOptions { mask, w_o: Some(seeded_matrix(8, 8, 24)), ..MultiHeadOptions::new(2, 4) };
            let trace = trace_multi_head_attention(&q, &k, &v, &options).unwrap();
            let direct = multi_head_attention(&q, &k, &v, &options).unwrap();
            assert_bitwise_eq(&Matrix::from_rows(&trace.output).unwrap(), &direct);
            let w_o = options.w_o.clone().unwrap();
            let replayed = replay(&[("Q", &q), ("K", &k), ("V", &v), ("W_O", &w_o)], &trace.steps).unwrap();
            assert_bitwise_eq(&replayed, &direct);
        }
    }

    #[test]
    fn replay_detects_a_tampered_step() {
        let (q, k, v) = challenge_qkv();
        let mut trace = trace_multi_head_attention(&q, &k, &v, &MultiHeadOptions::new(2, 1)).unwrap();
        trace.steps[4].values[0][0] += 1e-12;
        let w_o = Matrix::identity(2);
        assert!(replay(&[("Q", &q), ("K", &k), ("V", &v), ("W_O", &w_o)], &trace.steps).is_err());
    }
}
