//! The f32 forward pass of [`MultiHeadAttention`] (Float32Array input): the same computation as
//! `forward.rs`, through the same engine ([`crate::engine`]) with its f32 kernels, one head and
//! one block of [`crate::engine::QUERY_BLOCK`] query rows at a time.
//!
//! Per batch item, in passes:
//! 1. project the inputs with the packed weights: `Q = x_q·W_Q + b_Q`, likewise K and V;
//! 2. per head, per block of query rows: `scores = Q_i·K_iᵀ`, masked, `softmax(scores/√d_head)`,
//!    `context_i = weights·V_i`, written straight into its columns of `concat`;
//! 3. `output = concat·W_O + b_O`.
//!
//! Memory, when the weights are not requested: the inputs, Q, K, V, `concat` and the output
//! (O(T·C)), one head's packed Kᵀ and V and one block of scores (O(T·block)); never all heads'
//! `T_q × T_k` weights. The weights W are packed into panels once per set of weights (at the
//! first f32 forward after construction or `set_weights`), not per call.
//!
//! Training: with `options.training` the pass is not this one. The f32 kernels keep no
//! intermediates, so a training forward on f32 input runs the f64 forward on the widened inputs
//! (which keeps what `backward` differentiates and applies dropout) and rounds its results to f32;
//! [`MultiHeadAttention::backward_f32`] then differentiates it. `backward` after an evaluation-mode
//! f32 forward is a `State` error.

use super::{LastForward, MultiHeadAttention};
use crate::engine::{check_budget, Batch, Cols, HeadShape, Hooks, Rope, Workspace};
use super::forward::Positions;
use crate::error::{AttentionError, Result};
use crate::matrix::Matrix;
use crate::kernels::{linear_prepacked_f32, PackedPanels};
use crate::limits::refuse_overflow_f32;
use crate::multi_head::heads;

use super::forward::ForwardOptions;
use super::limits::at_item;

/// The layer's weights in f32, packed for [`linear_prepacked_f32`].
#[derive(Clone, Debug)]
pub(super) struct PackedWeightsF32 {
    /// W_Q, W_K, W_V, W_O, each `C × C`.
    panels: [PackedPanels; 4],
    /// b_Q, b_K, b_V, b_O in f32, when the layer has biases.
    biases: Option<[Vec<f32>; 4]>,
}

impl PackedWeightsF32 {
    fn new(layer: &MultiHeadAttention) -> Self {
        let w = &layer.weights;
        let pack = |m: &crate::matrix::Matrix| {
            let values: Vec<f32> = m.data().iter().map(|&x| x as f32).collect();
            let mut panels = PackedPanels::new();
            panels.pack(&values, m.cols(), m.rows(), m.cols()); // (C, C) or (C, C_kv)
            panels
        };
        let to_f32 = |b: &[f64]| b.iter().map(|&x| x as f32).collect::<Vec<f32>>();
        Self {
            panels: [pack(&w.w_q), pack(&w.w_k), pack(&w.w_v), pack(&w.w_o)],
            biases: w.biases.as_ref().map(|b| [to_f32(&b.b_q), to_f32(&b.b_k), to_f32(&b.b_v), to_f32(&b.b_o)]),
        }
    }

    fn bias(&self, i: usize) -> Option<&[f32]> {
        self.biases.as_ref().map(|b| &b[i][..])
    }
}

/// The f32 batch: `[B, T, C]`, one item after another.
pub type BatchF32<'a> = Batch<'a, f32>;

impl Batch<'_, f32> {
    /// The items as f64 matrices `(T, C)` (every f32 is exactly an f64).
    pub(super) fn widen(&self) -> Result<Vec<Matrix>> {
        (0..self.items).map(|i| Matrix::new(self.rows, self.cols, self.item(i).iter().map(|&x| f64::from(x)).collect())).collect()
    }
}

/// The engine's hook that writes every head's softmax weights into `[h, T_q, T_k]`, row-major
/// (keys a causal block skips stay as they are: zeros).
struct WriteWeights<'a> {
    out: &'a mut [f32],
    t_q: usize,
    t_k: usize,
}

impl Hooks<f32> for WriteWeights<'_> {
    fn weights(&mut self, head: usize, first: usize, weights: &mut [f32], n_keys: usize) -> Result<()> {
        for (i, row) in weights.chunks_exact(n_keys).enumerate() {
            let at = (head * self.t_q + first + i) * self.t_k;
            self.out[at..at + n_keys].copy_from_slice(row);
        }
        Ok(())
    }
}

/// What [`MultiHeadAttention::forward_f32`] returns.
#[derive(Clone, Debug, PartialEq)]
pub struct ForwardOutputF32 {
    /// `[B, T_q, C]`, row-major.
    pub output: Vec<f32>,
    /// With `need_weights`: `[B, h, T_q, T_k]`, or `[B, T_q, T_k]` with `average_weights`.
    pub weights: Option<Vec<f32>>,
}

impl MultiHeadAttention {
    /// The forward pass in f32 (see the module docs). `query` is `[B, T_q, C]`, `key` and
    /// `value` `[B, T_k, C]`. In evaluation mode it forgets the last f64 forward pass, so a
    /// following `backward` is a `State` error; with `options.training` it is the f64 forward
    /// rounded to f32, which `backward_f32` (or `backward`) differentiates.
    pub fn forward_f32(&mut self, query: BatchF32, key: BatchF32, value: BatchF32, options: &ForwardOptions) -> Result<ForwardOutputF32> {
        let (c, h, d_head) = (self.embed_dim, self.number_of_heads, self.head_dimensions);
        let (b, t_q, t_k) = (query.items, query.rows, key.rows);
        // checks: the boundary has named shapes already; these guard the core's own contract
        for (name, x) in [("query", &query), ("key", &key), ("value", &value)] {
            if x.items != b || x.rows == 0 || x.data.len() != x.items * x.rows * c {
                return Err(AttentionError::range_error(format!(
                    "{name} has {} values, which is not [B = {b}, T, C = {c}] with T > 0",
                    x.data.len()
                )));
            }
        }
        if b == 0 {
            return Err(AttentionError::range_error("query is an empty batch; expected at least one item"));
        }
        if value.rows != t_k {
            return Err(AttentionError::range_error(format!(
                "value has T = {} rows but key has T_k = {t_k}: each key position needs one value",
                value.rows
            )));
        }
        options.mask.check_shape(t_q, t_k)?;
        if options.average_weights && !options.need_weights {
            return Err(AttentionError::type_error(
                "options.averageWeights only applies with options.needWeights: true; set both or neither",
            ));
        }
        if options.training {
            return self.forward_f32_in_f64(query, key, value, options);
        }
        // memory: the inputs, Q, K, V, concat, the output, and the weights if asked for
        let weights_len = if !options.need_weights {
            (0, 0)
        } else if options.average_weights {
            (b * (1 + h) * t_q, t_k)
        } else {
            (b * h * t_q, t_k)
        };
        self.check_rope_alignment(t_q, t_k)?;
        let kv_c = self.kv_heads * d_head;
        let positions = Positions::aligned(t_q, t_k);
        let mut shape = HeadShape::new(t_q, t_k, h, self.kv_heads, d_head);
        shape.offset = positions.offset(t_q, t_k);
        let parts = [(b * (t_q + 2 * t_k), c), (2 * t_q + 2 * t_k, c), (b * t_q, c), weights_len];
        check_budget(shape, &parts, || format!("MultiHeadAttention.forward with B = {b}, T_q = {t_q}, T_k = {t_k}, C = {c}"))?;

        if self.packed_f32.is_none() {
            self.packed_f32 = Some(PackedWeightsF32::new(self));
        }
        let packed = self.packed_f32.as_ref().expect("packed just above");
        let mut output = vec![0.0f32; b * t_q * c];
        let mut weights = options.need_weights.then(|| vec![0.0f32; b * if options.average_weights { 1 } else { h } * t_q * t_k]);
        let mut head_weights = (options.need_weights && options.average_weights).then(|| vec![0.0f32; h * t_q * t_k]);
        let (mut q, mut k, mut v) = (vec![0.0f32; t_q * c], vec![0.0f32; t_k * kv_c], vec![0.0f32; t_k * kv_c]);
        let mut workspace = Workspace::new();
        for i in 0..b {
            // 1. project the inputs
            linear_prepacked_f32(query.item(i), t_q, &packed.panels[0], packed.bias(0), &mut q); // (T_q, C)
            linear_prepacked_f32(key.item(i), t_k, &packed.panels[1], packed.bias(1), &mut k); // (T_k, C_kv)
            linear_prepacked_f32(value.item(i), t_k, &packed.panels[2], packed.bias(2), &mut v); // (T_k, C_kv)
            refuse_overflow_f32(&q, c, "Q", "query·W_Q + b_Q")?;
            refuse_overflow_f32(&k, kv_c, "K", "key·W_K + b_K")?;
            refuse_overflow_f32(&v, kv_c, "V", "value·W_V + b_V")?;
            // 1b. RoPE: rotate Q and K at their positions (the angles in f64, rounded once)
            if let Some(rope) = self.rope {
                Rope::check_positions(positions.query.max(positions.key), t_q.max(t_k), "the rows")?;
                rope.rotate(&mut q, c, d_head, positions.query, false);
                rope.rotate(&mut k, kv_c, d_head, positions.key, false);
                Rope::refuse_overflow(&q, c, "Q")?;
                Rope::refuse_overflow(&k, kv_c, "K")?;
            }
            // the weights of this item: straight into the result, or per head for the mean
            let item_weights: Option<&mut [f32]> = match (&mut weights, &mut head_weights) {
                (Some(_), Some(per_head)) => {
                    per_head.fill(0.0);
                    Some(&mut per_head[..])
                }
                (Some(all), None) => Some(&mut all[i * h * t_q * t_k..(i + 1) * h * t_q * t_k]),
                _ => None,
            };
            // 2. the engine: per head, block by block, into the head's columns of concat (T_q, C)
            let (q_, k_, v_) = (Cols::all(&q, c), Cols::all(&k, kv_c), Cols::all(&v, kv_c));
            let concat = match item_weights {
                Some(out) => heads(q_, k_, v_, shape, &options.mask, &mut workspace, &mut WriteWeights { out, t_q, t_k }),
                None => heads(q_, k_, v_, shape, &options.mask, &mut workspace, &mut ()),
            }
            .map_err(|e| at_item(e, options.batched, i))?;
            // the mean over heads, summed in head order and then divided (as the f64 path does)
            if let (Some(all), Some(per_head)) = (&mut weights, &head_weights) {
                let mean = &mut all[i * t_q * t_k..(i + 1) * t_q * t_k];
                for head in per_head.chunks_exact(t_q * t_k) {
                    mean.iter_mut().zip(head).for_each(|(m, &x)| *m += x);
                }
                mean.iter_mut().for_each(|m| *m /= h as f32);
            }
            // 3. output projection
            let out = &mut output[i * t_q * c..(i + 1) * t_q * c];
            linear_prepacked_f32(&concat, t_q, &packed.panels[3], packed.bias(3), out); // (T_q, C)
            refuse_overflow_f32(out, c, "output", "concat·W_O + b_O")?;
        }
        // no intermediates kept: backward after this pass is refused
        self.cache = None;
        self.last_forward = LastForward::F32;
        Ok(ForwardOutputF32 { output, weights })
    }
}

impl MultiHeadAttention {
    /// The training forward on f32 input: the f64 forward on the widened inputs (exact
    /// widening), its output and weights rounded to f32.
    fn forward_f32_in_f64(&mut self, query: BatchF32, key: BatchF32, value: BatchF32, options: &ForwardOptions) -> Result<ForwardOutputF32> {
        let result = self.forward(&query.widen()?, &key.widen()?, &value.widen()?, options)?;
        let output = narrow_items_f32(&result.output, options.batched, "output")?;
        // attention weights lie in [0, 1]: rounding cannot overflow
        let weights = result.weights.map(|w| w.iter().flatten().flat_map(|m| m.data().iter().map(|&x| x as f32)).collect());
        Ok(ForwardOutputF32 { output, weights })
    }
}

/// `items` (one f64 matrix per batch item) rounded to f32, flat `[B, rows, cols]`; a RangeError
/// names the first entry beyond the largest f32 (about 3.4e38), as `name[r][c]`.
pub(super) fn narrow_items_f32(items: &[Matrix], batched: bool, name: &str) -> Result<Vec<f32>> {
    let mut out = Vec::with_capacity(items.iter().map(|m| m.data().len()).sum());
    for (b, m) in items.iter().enumerate() {
        let start = out.len();
        out.extend(m.data().iter().map(|&x| x as f32));
        refuse_overflow_f32(&out[start..], m.cols(), name, "its value, computed in f64,").map_err(|e| at_item(e, batched, b))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::AttentionError;
    use crate::layer::{ForwardOutput, LayerConfig, Weights};
    use crate::mask::{BoolMatrix, Mask};
    use crate::matrix::Matrix;
    use crate::testing::seeded_matrix;

    fn layer(c: usize, h: usize, bias: bool, seed: u64) -> MultiHeadAttention {
        let mut layer = MultiHeadAttention::new(&LayerConfig { bias, seed, ..LayerConfig::new(c, h) }).unwrap();
        // non-zero biases, so that a bias mistake shows
        let mut weights = layer.weights().clone();
        if let Some(b) = &mut weights.biases {
            for (i, v) in [&mut b.b_q, &mut b.b_k, &mut b.b_v, &mut b.b_o].into_iter().enumerate() {
                *v = seeded_matrix(1, c, seed + 50 + i as u64).into_data();
            }
        }
        layer.set_weights(weights).unwrap();
        layer
    }

    /// A batch as f64 matrices (rounded through f32, so both paths see the same inputs) and as flat f32.
    fn batch(b: usize, t: usize, c: usize, seed: u64) -> (Vec<Matrix>, Vec<f32>) {
        let items: Vec<Matrix> = (0..b).map(|i| seeded_matrix(t, c, seed + 100 * i as u64).cast::<f32>().cast()).collect();
        let flat = items.iter().flat_map(|m| m.data().iter().map(|&x| x as f32)).collect();
        (items, flat)
    }

    fn assert_near(got: &[f32], want: impl IntoIterator<Item = f64>, tolerance: f64) {
        let want: Vec<f64> = want.into_iter().collect();
        assert_eq!(got.len(), want.len());
        for (i, (a, b)) in got.iter().zip(&want).enumerate() {
            assert!((*a as f64 - b).abs() <= tolerance, "element {i}: {a} vs {b}");
        }
    }

    fn flat(output: &ForwardOutput) -> Vec<f64> {
        output.output.iter().flat_map(|m| m.data().to_vec()).collect()
    }

    #[test]
    fn agrees_with_the_f64_forward_across_blocks_masks_batches_and_cross_attention() {
        // T_q = 70 spans two query blocks; T_k = 90 differs (cross-attention)
        let (b, t_q, t_k, c, h) = (2, 70, 90, 12, 3);
        let (xq, fq) = batch(b, t_q, c, 1);
        let (xk, fk) = batch(b, t_k, c, 2);
        let (xv, fv) = batch(b, t_k, c, 3);
        let table: Vec<bool> = (0..t_q * t_k).map(|n| (n * 7919) % 5 != 0).collect();
        let explicit = BoolMatrix::new(t_q, t_k, table).unwrap();
        let masks = [Mask::none(), Mask::causal(), Mask { causal: false, allowed: Some(explicit.clone()), window: None }, Mask { causal: true, allowed: Some(explicit), window: None }];
        for bias in [true, false] {
            let mut layer = layer(c, h, bias, 7);
            for mask in &masks {
                for (need_weights, average_weights) in [(false, false), (true, false), (true, true)] {
                    let options = ForwardOptions { mask: mask.clone(), need_weights, average_weights, training: false, batched: true };
                    let want = layer.forward(&xq, &xk, &xv, &options).unwrap();
                    let (q, k, v) = (BatchF32::new(&fq, b, t_q, c), BatchF32::new(&fk, b, t_k, c), BatchF32::new(&fv, b, t_k, c));
                    let got = layer.forward_f32(q, k, v, &options).unwrap();
                    assert_near(&got.output, flat(&want), 1e-4);
                    match (&got.weights, &want.weights) {
                        (None, None) => {}
                        (Some(got), Some(want)) => assert_near(got, want.iter().flatten().flat_map(|m| m.data().to_vec()), 1e-5),
                        _ => panic!("weights present in one path only"),
                    }
                }
            }
        }
    }

    #[test]
    fn weights_are_packed_per_set_of_weights() {
        let (c, t) = (8, 5);
        let mut layer = layer(c, 2, true, 3);
        let (x, fx) = batch(1, t, c, 9);
        let input = BatchF32::new(&fx, 1, t, c);
        let options = ForwardOptions::default();
        let before = layer.forward_f32(input, input, input, &options).unwrap();
        assert!(layer.packed_f32.is_some());
        // new weights must be used by the next f32 forward (the packed ones are dropped)
        let mut weights = layer.weights().clone();
        weights.w_o = seeded_matrix(c, c, 77);
        layer.set_weights(weights).unwrap();
        assert!(layer.packed_f32.is_none());
        let after = layer.forward_f32(input, input, input, &options).unwrap();
        assert_ne!(before.output, after.output);
        let want = layer.forward(&x, &x, &x, &options).unwrap();
        assert_near(&after.output, flat(&want), 1e-5);
    }

    #[test]
    fn backward_after_an_f32_forward_is_refused_and_an_f64_forward_restores_it() {
        let (c, t) = (4, 3);
        let mut layer = layer(c, 2, true, 1);
        let (x, fx) = batch(1, t, c, 2);
        let input = BatchF32::new(&fx, 1, t, c);
        layer.forward(&x, &x, &x, &ForwardOptions::default()).unwrap();
        layer.forward_f32(input, input, input, &ForwardOptions::default()).unwrap();
        assert!(layer.last_forward_f32());
        let err = layer.backward(&x, false).unwrap_err();
        assert!(matches!(err, AttentionError::State(_)));
        assert!(err.message().starts_with("backward cannot differentiate a Float32Array forward"), "{err}");
        layer.forward(&x, &x, &x, &ForwardOptions::default()).unwrap();
        assert!(!layer.last_forward_f32());
        layer.backward(&x, false).unwrap();
    }

    #[test]
    fn training_runs_the_f64_forward_and_backward_f32_differentiates_it() {
        let (c, t, b) = (8, 5, 2);
        let config = LayerConfig { dropout: 0.25, seed: 4, ..LayerConfig::new(c, 2) };
        // `batch` gives f32 values and the same values as f64 matrices: both layers see the same numbers
        let (x, fx) = batch(b, t, c, 6);
        let (g, fg) = batch(b, t, c, 7);
        let options = ForwardOptions { training: true, need_weights: true, batched: true, ..ForwardOptions::default() };
        let (mut f64_layer, mut f32_layer) = (MultiHeadAttention::new(&config).unwrap(), MultiHeadAttention::new(&config).unwrap());
        let want = f64_layer.forward(&x, &x, &x, &options).unwrap();
        let input = BatchF32::new(&fx, b, t, c);
        let got = f32_layer.forward_f32(input, input, input, &options).unwrap();
        // the same dropout draws and the same f64 numbers, rounded once
        let rounded: Vec<f32> = flat(&want).into_iter().map(|v| v as f32).collect();
        assert_eq!(got.output, rounded);
        let want_weights: Vec<f32> = want.weights.unwrap().iter().flatten().flat_map(|m| m.data().iter().map(|&v| v as f32)).collect();
        assert_eq!(got.weights.unwrap(), want_weights);
        assert!(!f32_layer.last_forward_f32());
        let want = f64_layer.backward(&g, true).unwrap();
        let got = f32_layer.backward_f32(BatchF32::new(&fg, b, t, c), true).unwrap();
        for (got, want) in [(&got.query, &want.query), (&got.key, &want.key), (&got.value, &want.value)] {
            let want: Vec<f32> = want.iter().flat_map(|m| m.data().iter().map(|&v| v as f32)).collect();
            assert_eq!(got, &want);
        }
        assert_eq!(f32_layer.grads().unwrap(), f64_layer.grads().unwrap());
    }

    #[test]
    fn a_training_result_beyond_f32_is_refused() {
        let (c, t) = (4, 3);
        let mut layer = layer(c, 2, true, 1);
        let huge = vec![3e38f32; t * c];
        let huge = BatchF32::new(&huge, 1, t, c);
        let training = ForwardOptions { training: true, ..ForwardOptions::default() };
        let err = layer.forward_f32(huge, huge, huge, &training).unwrap_err();
        // the f64 forward itself stays finite (3e38·C ≪ 1.8e308); rounding its output to f32 is what fails
        assert!(matches!(err, AttentionError::Range(_)) && err.message().contains("in f32: its value, computed in f64,"), "{err}");
    }

    #[test]
    fn a_score_beyond_f32_is_refused_not_taken_for_a_masked_key() {
        // identity projections: Q = query, K = key; Q row 0 · K row 0 overflows f32 on the way (the
        // products −3.5e38, 3e38, 3e38), which a softmax would read as a masked key
        let c = 3;
        let mut layer = MultiHeadAttention::new(&LayerConfig { bias: false, ..LayerConfig::new(c, 1) }).unwrap();
        let identity = Matrix::new(c, c, (0..c * c).map(|i| if i % (c + 1) == 0 { 1.0 } else { 0.0 }).collect()).unwrap();
        layer.set_weights(Weights { w_q: identity.clone(), w_k: identity.clone(), w_v: identity.clone(), w_o: identity, biases: None }).unwrap();
        let query = [1e19f32, 1e19, 1e19];
        let key = [-3.5e19f32, 3e19, 3e19, 1.0, 1.0, 1.0];
        let value = [1.0f32, 0.0, 0.0, 0.0, 1.0, 0.0];
        let (q, k, v) = (BatchF32::new(&query, 1, 1, c), BatchF32::new(&key, 1, 2, c), BatchF32::new(&value, 1, 2, c));
        let err = layer.forward_f32(q, k, v, &ForwardOptions::default()).unwrap_err();
        assert!(matches!(err, AttentionError::Range(_)) && err.message().starts_with("scores_0[0][0] overflows to -Infinity in f32"), "{err}");
        // in f64 (training) the score is finite and the answer is V row 0
        let training = ForwardOptions { training: true, ..ForwardOptions::default() };
        let out = layer.forward_f32(q, k, v, &training).unwrap();
        assert_eq!(out.output, vec![1.0, 0.0, 0.0]);
    }

    #[test]
    fn overflow_and_shapes_are_refused() {
        let (c, t) = (4, 3);
        let mut layer = MultiHeadAttention::new(&LayerConfig { dropout: 0.5, ..LayerConfig::new(c, 2) }).unwrap();
        let (_, fx) = batch(1, t, c, 2);
        let input = BatchF32::new(&fx, 1, t, c);
        // without training the dropout does not apply
        layer.forward_f32(input, input, input, &ForwardOptions::default()).unwrap();
        // finite f32 inputs whose projection passes 3.4e38
        let huge = vec![3e38f32; t * c];
        let huge = BatchF32::new(&huge, 1, t, c);
        let err = layer.forward_f32(huge, huge, huge, &ForwardOptions::default()).unwrap_err();
        assert!(matches!(err, AttentionError::Range(_)) && err.message().contains("overflows to"), "{err}");
        // value rows ≠ key rows, a mask of the wrong shape
        let (_, fv) = batch(1, t + 1, c, 3);
        let value = BatchF32::new(&fv, 1, t + 1, c);
        assert!(layer.forward_f32(input, input, value, &ForwardOptions::default()).unwrap_err().message().starts_with("value has T = 4 rows"));
        let masked = ForwardOptions { mask: Mask { causal: false, allowed: Some(BoolMatrix::new(2, 2, vec![true; 4]).unwrap()), window: None }, ..ForwardOptions::default() };
        assert!(layer.forward_f32(input, input, input, &masked).is_err());
    }
}
