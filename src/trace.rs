//! A record of every intermediate of multi-head attention, in the spec's vocabulary
//! (Slice, Transpose, MatMul, Mul, StableSoftmax, Concat; Add for the layer's biases). The course site draws every
//! picture from it, and [`replay`] proves that the steps really produce the output.
//!
//! Names: the inputs are `Q`, `K`, `V` and `W_O`; head `i` produces `Q_i`, `K_i`, `V_i`,
//! `K_i^T`, `scores_i`, `scaled_i`, `weights_i`, `context_i`; then `concat` and `output`.

use std::collections::HashMap;

use crate::error::{AttentionError, Result};
use crate::limits::{check_working_set, count_values};
use crate::mask::{BoolMatrix, Mask};
use crate::matrix::Matrix;
use crate::multi_head::{check_multi_head, run, MultiHeadOptions};
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

    pub(crate) fn with_columns(mut self, columns: [usize; 2]) -> Self {
        self.columns = Some(columns);
        self
    }

    pub(crate) fn with_scalar(mut self, scalar: f64) -> Self {
        self.scalar = Some(scalar);
        self
    }

    pub(crate) fn with_allowed(mut self, allowed: Option<BoolMatrix>) -> Self {
        self.allowed = allowed.map(|m| m.to_rows());
        self
    }

    fn matrix(&self) -> Result<Matrix> {
        Matrix::from_rows(&self.values)
    }
}

/// Where intermediates go: nowhere, or into a list of steps.
pub(crate) enum Recorder {
    Off,
    On(Vec<Step>),
}

impl Recorder {
    /// True when steps are being kept.
    pub(crate) fn is_on(&self) -> bool {
        matches!(self, Recorder::On(_))
    }

    /// Builds the step only when recording.
    pub(crate) fn record(&mut self, step: impl FnOnce() -> Step) {
        if let Recorder::On(steps) = self {
            steps.push(step());
        }
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
    let needed = count_values(&[(3 * t, c), (3 * t, t), (10 * t, c), (3 * h * t, t)]);
    check_working_set(needed, || {
        format!("traceMultiHeadAttention with T = {t}, C = {c} and {h} heads (every intermediate is kept)")
    })?;
    let mut recorder = Recorder::On(Vec::new());
    let output = run(q, k, v, options, &mut recorder)?;
    let Recorder::On(steps) = recorder else { unreachable!("recorder was created On") };
    Ok(Trace { output: output.to_rows(), steps })
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
                stable_softmax(scores, &Mask { causal: false, allowed })
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
