//! A record of every intermediate of multi-head attention, in the spec's vocabulary
//! (Slice, Transpose, MatMul, Mul, StableSoftmax, Concat; Add for the layer's biases). The course site draws every
//! picture from it, and [`replay`] proves that the steps really produce the output.
//!
//! Names: the inputs are `Q`, `K`, `V` and `W_O`; head `i` produces `Q_i`, `K_i`, `V_i`,
//! `K_i^T`, `scores_i`, `scaled_i`, `weights_i`, `context_i`; then `concat` and `output`.

use std::collections::HashMap;

use crate::engine::{attention_scale, check_budget, project_output, Cols, HeadShape, Hooks, Rope, Workspace};
use crate::grouped_query::check_grouped_shapes;
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
    /// Rotary position embedding of one head's rows ([`crate::engine::Rope`]), row 0 at `position`.
    Rotate,
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
            Op::Rotate => "Rotate",
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
    /// Slice of K or V in grouped-query attention: the key/value head the query head reads.
    pub kv_head: Option<usize>,
    /// Rotate: RoPE's base and the position of row 0.
    pub rotation: Option<(f64, usize)>,
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
            kv_head: None,
            rotation: None,
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
    /// Grouped-query attention: the number of K/V heads, recorded on the K and V slices.
    pub kv_heads: Option<usize>,
    /// RoPE: Q and K before the rotation (the engine sees them rotated), the rope, and the
    /// positions of Q's and K's row 0.
    pub rotated: Option<Rotated<'a>>,
    /// The current head's operand names for the scores: `Q_i` or `Q_i_rot`, `K_i^T` or `K_i_rot^T`.
    q_name: String,
    k_t_name: String,
    /// The current head's scores, weights and context, row by row as the blocks arrive.
    scores: Vec<f64>,
    weights: Vec<f64>,
    context: Vec<f64>,
    d_head: usize,
}

impl<'a> Recorder<'a> {
    pub(crate) fn new(t_q: usize, t_k: usize, mask: &'a Mask) -> Self {
        Self {
            steps: Vec::new(),
            t_q,
            t_k,
            mask,
            kv_heads: None,
            rotated: None,
            q_name: String::new(),
            k_t_name: String::new(),
            scores: Vec::new(),
            weights: Vec::new(),
            context: Vec::new(),
            d_head: 0,
        }
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

/// Q and K as given, before RoPE, with the rotation's parameters.
pub(crate) struct Rotated<'a> {
    pub q: &'a Matrix,
    pub k: &'a Matrix,
    pub rope: Rope,
    /// Positions of Q's row 0 and K's row 0.
    pub q_position: usize,
    pub k_position: usize,
}

impl Hooks<f64> for Recorder<'_> {
    fn head_start(&mut self, head: usize, q: Cols<f64>, k: Cols<f64>, v: Cols<f64>) -> Result<()> {
        // 1. Slice the head's columns out of Q, K and V (K and V: its K/V head's), rotate Q_h and
        // K_h with RoPE; 2. Transpose K_h
        let (t_q, t_k) = (self.t_q, self.t_k);
        let kv_head = self.kv_heads.map(|_| k.start / k.width.max(1));
        let (mut q_name, mut k_name) = (format!("Q_{head}"), format!("K_{head}"));
        for (name, m, rows) in [("Q", q, t_q), ("K", k, t_k), ("V", v, t_k)] {
            let columns = [m.start, m.start + m.width];
            // what was sliced: the input before RoPE (the engine's columns are already rotated)
            let source = match (&self.rotated, name) {
                (Some(r), "Q") => Some((r.q, r.q_position)),
                (Some(r), "K") => Some((r.k, r.k_position)),
                _ => None,
            };
            let part = match source {
                Some((original, _)) => original.slice_columns(columns[0], columns[1])?,
                None => Self::columns(m, rows)?,
            }; // (T, d_head)
            let sliced = self.record(Op::Slice, format!("{name}_{head}"), &[name], Some(head), &part);
            sliced.columns = Some(columns);
            if name != "Q" {
                sliced.kv_head = kv_head;
            }
            if let (Some((_, position)), Some(r)) = (source, &self.rotated) {
                let base = r.rope.base;
                let rotated = Self::columns(m, rows)?; // (T, d_head)
                let input = format!("{name}_{head}");
                self.record(Op::Rotate, format!("{name}_{head}_rot"), &[&input], Some(head), &rotated).rotation = Some((base, position));
                if name == "Q" {
                    q_name = format!("Q_{head}_rot");
                } else {
                    k_name = format!("K_{head}_rot");
                }
            }
        }
        let k_t = Self::columns(k, t_k)?.transpose(); // (d_head, T_k)
        self.k_t_name = format!("{k_name}^T");
        self.q_name = q_name;
        let k_t_name = self.k_t_name.clone();
        self.record(Op::Transpose, k_t_name, &[&k_name], Some(head), &k_t);
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

    fn context(&mut self, _head: usize, _first: usize, rows: usize, out: &[f64], stride: usize, start: usize) {
        for r in 0..rows {
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
        let (q_name, k_t_name) = (self.q_name.clone(), self.k_t_name.clone());
        self.record(Op::MatMul, format!("scores_{head}"), &[&q_name, &k_t_name], Some(head), &scores);
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
    let output = record_heads(&mut recorder, (Cols::of(q), Cols::of(k), Cols::of(v)), options.split.head_shape(t, t), options.w_o.as_ref())?;
    Ok(Trace { output: output.to_rows(), steps: recorder.steps })
}

/// Grouped-query attention with every intermediate recorded, and with `rope` (base, position of
/// key 0) Q and K rotated first: per head `Slice`, `Rotate`, `Transpose`, `MatMul`, `Mul`,
/// `StableSoftmax` (its `allowed` shows the causal rule, the window and the mask), `MatMul`;
/// then `Concat` and the W_O `MatMul`. `output` equals [`crate::grouped_query::grouped_query_attention`] of the rotated
/// Q and K bit for bit. The queries are the last `T_q` of the `T_k` positions.
#[allow(clippy::too_many_arguments)]
pub fn trace_grouped_query_attention(q: &Matrix, k: &Matrix, v: &Matrix, split: HeadSplit, kv_heads: usize, w_o: Option<&Matrix>, mask: &Mask, rope: Option<(Rope, usize)>) -> Result<Trace> {
    check_grouped_shapes(q.shape(), k.shape(), v.shape(), split, kv_heads, w_o.map(Matrix::shape), mask)?;
    if rope.is_some() {
        Rope::check_width(split.head_dimensions, "headDimensions")?;
        if q.rows() > k.rows() {
            return Err(AttentionError::range_error(format!(
                "Q has T_q = {} rows but K has T_k = {}: with rope the queries are the last T_q of the T_k positions, so T_q ≤ T_k",
                q.rows(),
                k.rows()
            )));
        }
    }
    let (t_q, t_k, c, h) = (q.rows(), k.rows(), q.cols(), split.number_of_heads);
    check_budget(HeadShape::new(t_q, t_k, h, kv_heads, split.head_dimensions), &[(4 * t_q, c), (4 * t_k, c), (3 * h * t_q, t_k), (2 * t_q, t_k)], || {
        format!("traceGroupedQueryAttention with T_q = {t_q}, T_k = {t_k}, C = {c} and {h} heads (every intermediate is kept)")
    })?;
    let mut recorder = Recorder::new(t_q, t_k, mask);
    recorder.kv_heads = Some(kv_heads);
    let (mut q_rot, mut k_rot) = (q.clone(), k.clone());
    if let Some((rope, k_position)) = rope {
        Rope::check_positions(k_position, t_k, "K's rows")?;
        rope.check_angles(k_position, t_k, split.head_dimensions, "options.rope.base")?;
        let q_position = k_position + t_k - t_q;
        rope.rotate(q_rot.data_mut(), c, split.head_dimensions, q_position, false);
        rope.rotate(k_rot.data_mut(), k.cols(), split.head_dimensions, k_position, false);
        Rope::refuse_overflow(q_rot.data(), c, "Q")?;
        Rope::refuse_overflow(k_rot.data(), k.cols(), "K")?;
        recorder.rotated = Some(Rotated { q, k, rope, q_position, k_position });
    }
    let shape = HeadShape::new(t_q, t_k, h, kv_heads, split.head_dimensions);
    let output = record_heads(&mut recorder, (Cols::of(&q_rot), Cols::of(&k_rot), Cols::of(v)), shape, w_o)?;
    Ok(Trace { output: output.to_rows(), steps: recorder.steps })
}

/// The heads, `concat` and the W_O MatMul (`"output"`), recorded; returns the output, `(T, C)`.
/// Shared by the trace functions and the layer's trace.
pub(crate) fn record_heads(recorder: &mut Recorder, (q, k, v): (Cols<f64>, Cols<f64>, Cols<f64>), shape: HeadShape, w_o: Option<&Matrix>) -> Result<Matrix> {
    let (mask, t) = (recorder.mask, recorder.t_q);
    let mut concat = heads(q, k, v, shape, mask, &mut Workspace::new(), recorder)?;
    recorder.concat(&concat, shape.heads)?;
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
            Op::Rotate => {
                let (base, position) = step.rotation.ok_or_else(|| mismatch(step, "has no rotation"))?;
                let mut rotated = operand(0)?.clone();
                let d = rotated.cols();
                Rope { base }.rotate(rotated.data_mut(), d, d, position, false);
                rotated
            }
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
    fn grouped_trace_with_rope_and_a_window_replays_and_equals_the_function() {
        use crate::grouped_query::grouped_query_attention;
        let (q, k, v) = (seeded_matrix(5, 8, 31), seeded_matrix(7, 4, 32), seeded_matrix(7, 4, 33));
        let split = HeadSplit { number_of_heads: 4, head_dimensions: 2 };
        let mask = Mask { causal: true, window: Some(3), ..Mask::none() };
        let rope = Rope { base: 100.0 };
        let trace = trace_grouped_query_attention(&q, &k, &v, split, 2, None, &mask, Some((rope, 4))).unwrap();
        let (mut q_rot, mut k_rot) = (q.clone(), k.clone());
        rope.rotate(q_rot.data_mut(), 8, 2, 4 + 7 - 5, false);
        rope.rotate(k_rot.data_mut(), 4, 2, 4, false);
        let direct = grouped_query_attention(&q_rot, &k_rot, &v, split, 2, None, &mask).unwrap();
        assert_bitwise_eq(&Matrix::from_rows(&trace.output).unwrap(), &direct);
        let w_o = Matrix::identity(8);
        assert_bitwise_eq(&replay(&[("Q", &q), ("K", &k), ("V", &v), ("W_O", &w_o)], &trace.steps).unwrap(), &direct);
        // query heads 2 and 3 read K/V head 1; the rotations and the window are recorded
        let k_slices: Vec<_> = trace.steps.iter().filter(|s| s.op == Op::Slice && s.name.starts_with('K')).map(|s| (s.kv_head, s.columns)).collect();
        assert_eq!(k_slices, vec![(Some(0), Some([0, 2])), (Some(0), Some([0, 2])), (Some(1), Some([2, 4])), (Some(1), Some([2, 4]))]);
        assert_eq!(trace.steps.iter().filter(|s| s.op == Op::Rotate).count(), 8);
        let weights = trace.steps.iter().find(|s| s.name == "weights_0").unwrap();
        // query 0 is at position 2 (7 keys, 5 queries): with a window of 3 it sees keys 0, 1 and 2; query 4 (position 6) keys 4 to 6
        assert_eq!(weights.allowed.as_ref().unwrap()[0], vec![true, true, true, false, false, false, false]);
        assert_eq!(weights.allowed.as_ref().unwrap()[4], vec![false, false, false, false, true, true, true]);
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
