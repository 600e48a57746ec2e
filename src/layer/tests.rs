//! Native tests of the layer: gradients against central finite differences, the one-head and
//! identity anchors, causality, masking, dropout, the GPT-2 small shapes and the errors.

#![allow(clippy::needless_range_loop)] // finite differences index entries on purpose

use super::init::{xavier_limit, SplitMix64};
use super::*;
use crate::attention::dot_product_attention;
use crate::error::AttentionError;
use crate::mask::{BoolMatrix, Mask};
use crate::matrix::Matrix;
use crate::multi_head::{multi_head_attention, MultiHeadOptions};
use crate::testing::{assert_bitwise_eq, seeded_matrix};

// ---- helpers ----------------------------------------------------------------

/// An unbatched input: a batch of one.
fn one(x: &Matrix) -> &[Matrix] {
    std::slice::from_ref(x)
}

fn layer(c: usize, h: usize, bias: bool, seed: u64) -> MultiHeadAttention {
    MultiHeadAttention::new(&LayerConfig { bias, seed, ..LayerConfig::new(c, h) }).unwrap()
}

/// Random biases (the initial ones are zero, which would hide bias mistakes).
fn with_random_biases(mut layer: MultiHeadAttention, seed: u64) -> MultiHeadAttention {
    let mut weights = layer.weights().into_owned();
    if let Some(b) = &mut weights.biases {
        for (i, v) in [&mut b.b_q, &mut b.b_k, &mut b.b_v, &mut b.b_o].into_iter().enumerate() {
            *v = seeded_matrix(1, v.len(), seed + i as u64).into_data();
        }
    }
    layer.set_weights(weights).unwrap();
    layer
}

fn batch(b: usize, t: usize, c: usize, seed: u64) -> Vec<Matrix> {
    (0..b).map(|i| seeded_matrix(t, c, seed + 100 * i as u64)).collect()
}

fn options(mask: Mask, batched: bool) -> ForwardOptions {
    ForwardOptions { mask, batched, ..ForwardOptions::default() }
}

/// `Σ output ⊙ g` over the batch: the loss whose gradient `backward(g)` computes.
fn loss(layer: &mut MultiHeadAttention, q: &[Matrix], k: &[Matrix], v: &[Matrix], opts: &ForwardOptions, g: &[Matrix]) -> f64 {
    let out = layer.forward(q, k, v, opts).unwrap().output;
    out.iter().zip(g).flat_map(|(o, g)| o.data().iter().zip(g.data()).map(|(a, b)| a * b)).sum()
}

/// The largest `|analytic − numeric| / max(|analytic|, |numeric|, FLOOR)` seen.
#[derive(Default)]
struct WorstError {
    relative: f64,
    place: String,
}

/// Below this magnitude the relative error is measured against FLOOR instead: a gradient that
/// is exactly zero in exact arithmetic (b_K, by the softmax's shift invariance; keys no query
/// may see) has a central-difference estimate of ~1e-11 from rounding alone, which no
/// relative measure can compare with 0. So near zero the bound is |analytic − numeric| ≤ 1e-9.
const FLOOR: f64 = 1e-3;
const STEP: f64 = 1e-5;

impl WorstError {
    fn see(&mut self, analytic: f64, numeric: f64, place: impl FnOnce() -> String) {
        let relative = (analytic - numeric).abs() / analytic.abs().max(numeric.abs()).max(FLOOR);
        if relative > self.relative || !relative.is_finite() {
            self.relative = relative;
            self.place = place();
        }
    }
}

/// Checks every input, weight and bias gradient of `base` against central differences.
/// `base` has not run forward yet; every loss evaluation starts from a clone of it, so a
/// training pass draws the same dropout mask each time.
fn gradient_check(base: &MultiHeadAttention, q: &[Matrix], k: &[Matrix], v: &[Matrix], opts: &ForwardOptions) -> WorstError {
    let g: Vec<Matrix> = q.iter().enumerate().map(|(i, m)| seeded_matrix(m.rows(), base.embed_dim(), 900 + i as u64)).collect();
    let mut analytic_layer = base.clone();
    analytic_layer.forward(q, k, v, opts).unwrap();
    let inputs = analytic_layer.backward(&g, opts.batched).unwrap();
    let grads = analytic_layer.grads().unwrap().into_owned();
    let mut worst = WorstError::default();

    // inputs
    for (which, analytic) in [(0, &inputs.query), (1, &inputs.key), (2, &inputs.value)] {
        for b in 0..q.len() {
            for e in 0..analytic[b].data().len() {
                let at = |delta: f64| {
                    let mut xs = [q.to_vec(), k.to_vec(), v.to_vec()];
                    xs[which][b].data_mut()[e] += delta;
                    loss(&mut base.clone(), &xs[0], &xs[1], &xs[2], opts, &g)
                };
                let numeric = (at(STEP) - at(-STEP)) / (2.0 * STEP);
                worst.see(analytic[b].data()[e], numeric, || format!("{}[{b}] entry {e}", ["query", "key", "value"][which]));
            }
        }
    }
    // weights and biases
    for (t, (name, analytic)) in grads.tensors().into_iter().enumerate() {
        for e in 0..analytic.len() {
            let at = |delta: f64| {
                let mut layer = base.clone();
                // tensors() order: W_Q … W_O, then b_Q … b_O
                let w = layer.weights().into_owned();
                let (mut matrices, mut biases) = ([w.w_q, w.w_k, w.w_v, w.w_o], w.biases.map(|b| [b.b_q, b.b_k, b.b_v, b.b_o]));
                match biases.as_mut().filter(|_| t >= 4) {
                    Some(b) => b[t - 4][e] += delta,
                    None => matrices[t].data_mut()[e] += delta,
                }
                layer.set_weights(Weights::from_parts(matrices, biases)).unwrap();
                loss(&mut layer, q, k, v, opts, &g)
            };
            let numeric = (at(STEP) - at(-STEP)) / (2.0 * STEP);
            worst.see(analytic[e], numeric, || format!("{name} entry {e}"));
        }
    }
    worst
}

fn assert_gradients(label: &str, base: &MultiHeadAttention, q: &[Matrix], k: &[Matrix], v: &[Matrix], opts: &ForwardOptions) {
    let worst = gradient_check(base, q, k, v, opts);
    println!("{label}: max relative error {:.3e} at {}", worst.relative, worst.place);
    assert!(worst.relative <= 1e-6, "{label}: relative error {:.3e} at {}", worst.relative, worst.place);
}

// ---- gradient checks ----------------------------------------------------------

#[test]
fn gradients_self_and_cross_causal_or_not_bias_or_not() {
    let (c, h) = (4, 2);
    for bias in [true, false] {
        let base = with_random_biases(layer(c, h, bias, 3), 40);
        for causal in [false, true] {
            let mask = if causal { Mask::causal() } else { Mask::none() };
            // self-attention: one input for query, key and value
            let x = batch(1, 3, c, 1);
            assert_gradients(&format!("self bias={bias} causal={causal}"), &base, &x, &x, &x, &options(mask.clone(), false));
            // cross-attention: T_q = 3 queries over T_k = 5 keys/values
            let (q, kv) = (batch(1, 3, c, 2), batch(1, 5, c, 3));
            let v = batch(1, 5, c, 4);
            assert_gradients(&format!("cross bias={bias} causal={causal}"), &base, &q, &kv, &v, &options(mask, false));
        }
    }
}

#[test]
fn gradients_with_grouped_heads_rope_and_a_window() {
    use crate::engine::Rope;
    // 4 query heads of 2 columns over 2 K/V heads (and over 1: multi-query), RoPE with a small
    // base so that the angles matter, cross-attention with 3 queries over 5 keys
    for (kv, rope, window) in [(2, None, None), (1, Some(Rope { base: 50.0 }), None), (2, Some(Rope { base: 50.0 }), Some(2)), (4, None, Some(3))] {
        let config = LayerConfig { seed: 9, kv_heads: kv, rope, ..LayerConfig::new(8, 4) };
        let base = with_random_biases(MultiHeadAttention::new(&config).unwrap(), 70);
        for causal in [false, true] {
            let mask = Mask { causal, window, ..Mask::none() };
            let label = format!("kv={kv} rope={} window={window:?} causal={causal}", rope.is_some());
            let x = batch(1, 4, 8, 5);
            assert_gradients(&format!("self {label}"), &base, &x, &x, &x, &options(mask.clone(), false));
            let (q, k, v) = (batch(1, 3, 8, 6), batch(1, 5, 8, 7), batch(1, 5, 8, 8));
            assert_gradients(&format!("cross {label}"), &base, &q, &k, &v, &options(mask, false));
        }
    }
}

#[test]
fn gradients_batched_with_an_explicit_mask_and_an_empty_row() {
    let base = with_random_biases(layer(6, 3, true, 5), 50);
    let (q, k, v) = (batch(2, 3, 6, 10), batch(2, 4, 6, 20), batch(2, 4, 6, 30));
    // row 1 may attend to nothing
    let table = BoolMatrix::new(3, 4, vec![true, false, true, true, false, false, false, false, true, true, false, true]).unwrap();
    let mask = Mask { causal: false, allowed: Some(table), window: None };
    assert_gradients("batched masked", &base, &q, &k, &v, &options(mask, true));
    assert_gradients("batched causal", &base, &q, &k, &v, &options(Mask::causal(), true));
}

#[test]
fn gradients_with_dropout_reuse_the_forward_mask() {
    let base = MultiHeadAttention::new(&LayerConfig { dropout: 0.3, seed: 8, ..LayerConfig::new(4, 2) }).unwrap();
    let base = with_random_biases(base, 60);
    let (q, k, v) = (batch(2, 3, 4, 11), batch(2, 5, 4, 12), batch(2, 5, 4, 13));
    let opts = ForwardOptions { training: true, ..options(Mask::none(), true) };
    // make sure the mask really dropped something, or the check would not test dropout
    let used = base.clone().forward(&q, &k, &v, &ForwardOptions { need_weights: true, ..opts.clone() }).unwrap().weights.unwrap();
    assert!(used.iter().flatten().flat_map(|m| m.data()).any(|&w| w == 0.0));
    assert_gradients("dropout", &base, &q, &k, &v, &opts);
}

#[test]
fn self_attention_gradient_is_the_sum_of_the_three_input_gradients() {
    let mut attention = with_random_biases(layer(4, 2, true, 9), 70);
    let x = batch(1, 3, 4, 14);
    let g = batch(1, 3, 4, 15);
    let opts = options(Mask::causal(), false);
    attention.forward(&x, &x, &x, &opts).unwrap();
    let grads = attention.backward(&g, false).unwrap();
    let mut worst = WorstError::default();
    for e in 0..12 {
        let at = |delta: f64| {
            let mut x2 = x.clone();
            x2[0].data_mut()[e] += delta;
            loss(&mut attention.clone(), &x2, &x2, &x2, &opts, &g)
        };
        let numeric = (at(STEP) - at(-STEP)) / (2.0 * STEP);
        let analytic = grads.query[0].data()[e] + grads.key[0].data()[e] + grads.value[0].data()[e];
        worst.see(analytic, numeric, || format!("x entry {e}"));
    }
    assert!(worst.relative <= 1e-6, "{:.3e} at {}", worst.relative, worst.place);
}

// ---- anchors ------------------------------------------------------------------

#[test]
fn identity_projections_equal_the_foundation_bit_for_bit() {
    for (c, h) in [(6, 1), (6, 2), (6, 3), (8, 4)] {
        let mut x = seeded_matrix(5, c, 77);
        x.data_mut()[0] = -0.0; // sign of zero and subnormals survive x·I
        x.data_mut()[3] = 5e-324;
        x.data_mut()[7] = -1e-310;
        let foundation = multi_head_attention(&x, &x, &x, &MultiHeadOptions::new(h, c / h)).unwrap();
        for bias in [true, false] {
            let identity = Weights {
                w_q: Matrix::identity(c),
                w_k: Matrix::identity(c),
                w_v: Matrix::identity(c),
                w_o: Matrix::identity(c),
                biases: bias.then(|| Biases { b_q: vec![0.0; c], b_k: vec![0.0; c], b_v: vec![0.0; c], b_o: vec![0.0; c] }),
            };
            let mut attention = MultiHeadAttention::from_weights(identity, h, 0.0, 0).unwrap();
            let out = attention.forward(one(&x), one(&x), one(&x), &ForwardOptions::default()).unwrap();
            assert_bitwise_eq(&out.output[0], &foundation);
        }
    }
}

#[test]
fn one_head_equals_single_head_attention_forward() {
    let mut attention = with_random_biases(layer(5, 1, true, 12), 80);
    let x = seeded_matrix(4, 5, 81);
    let w = attention.weights().into_owned();
    let b = w.biases.clone().unwrap();
    for mask in [Mask::none(), Mask::causal()] {
        let out = attention.forward(one(&x), one(&x), one(&x), &options(mask.clone(), false)).unwrap().output;
        let q = project(&x, &w.w_q, Some(&b.b_q)).unwrap();
        let k = project(&x, &w.w_k, Some(&b.b_k)).unwrap();
        let v = project(&x, &w.w_v, Some(&b.b_v)).unwrap();
        let context = dot_product_attention(&q, &k, &v, &mask).unwrap();
        let expected = project(&context, &w.w_o, Some(&b.b_o)).unwrap();
        assert_bitwise_eq(&out[0], &expected);
    }
}

/// Single-head attention backward written out directly from the textbook formulas
/// (P = softmax(QKᵀ/√d), Y = PV, out = YW_O + b_O), without any head slicing.
fn single_head_reference_grads(w: &Weights, x: &Matrix, g: &Matrix, mask: &Mask) -> (Matrix, Weights) {
    let b = w.biases.as_ref().unwrap();
    let d = x.cols();
    let q = project(x, &w.w_q, Some(&b.b_q)).unwrap();
    let k = project(x, &w.w_k, Some(&b.b_k)).unwrap();
    let v = project(x, &w.w_v, Some(&b.b_v)).unwrap();
    let s = 1.0 / (d as f64).sqrt();
    let p = crate::softmax::stable_softmax(&q.matmul(&k.transpose()).unwrap().scale(s), mask);
    let y = p.matmul(&v).unwrap();
    let d_y = g.matmul(&w.w_o.transpose()).unwrap();
    let d_p = d_y.matmul(&v.transpose()).unwrap();
    let mut d_s = Matrix::zeros(p.rows(), p.cols());
    for i in 0..p.rows() {
        let dot: f64 = (0..p.cols()).map(|j| p.get(i, j) * d_p.get(i, j)).sum();
        for j in 0..p.cols() {
            d_s.row_mut(i)[j] = p.get(i, j) * (d_p.get(i, j) - dot);
        }
    }
    let d_q = d_s.matmul(&k).unwrap().scale(s);
    let d_k = d_s.transpose().matmul(&q).unwrap().scale(s);
    let d_v = p.transpose().matmul(&d_y).unwrap();
    let mut d_x = d_q.matmul(&w.w_q.transpose()).unwrap();
    d_x.add_assign(&d_k.matmul(&w.w_k.transpose()).unwrap()).unwrap();
    d_x.add_assign(&d_v.matmul(&w.w_v.transpose()).unwrap()).unwrap();
    let xt = x.transpose();
    let grads = Weights {
        w_q: xt.matmul(&d_q).unwrap(),
        w_k: xt.matmul(&d_k).unwrap(),
        w_v: xt.matmul(&d_v).unwrap(),
        w_o: y.transpose().matmul(g).unwrap(),
        biases: Some(Biases { b_q: d_q.column_sums(), b_k: d_k.column_sums(), b_v: d_v.column_sums(), b_o: g.column_sums() }),
    };
    (d_x, grads)
}

#[test]
fn one_head_equals_single_head_attention_backward() {
    let mut attention = with_random_biases(layer(5, 1, true, 13), 90);
    let x = seeded_matrix(4, 5, 91);
    let g = seeded_matrix(4, 5, 92);
    for mask in [Mask::none(), Mask::causal()] {
        attention.forward(one(&x), one(&x), one(&x), &options(mask.clone(), false)).unwrap();
        let inputs = attention.backward(one(&g), false).unwrap();
        let (d_x, expected) = single_head_reference_grads(&attention.weights(), &x, &g, &mask);
        let mut ours = inputs.query[0].clone();
        ours.add_assign(&inputs.key[0]).unwrap();
        ours.add_assign(&inputs.value[0]).unwrap();
        let close = |a: &[f64], b: &[f64], what: &str| {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                assert!((x - y).abs() <= 1e-13 * x.abs().max(y.abs()).max(1.0), "{what} entry {i}: {x} vs {y}");
            }
        };
        close(ours.data(), d_x.data(), "d_x");
        for ((name, a), (_, b)) in attention.grads().unwrap().tensors().into_iter().zip(expected.tensors()) {
            close(a, b, name);
        }
    }
}

// ---- causality and masking ------------------------------------------------------

#[test]
fn causal_no_future_leakage_forward_and_backward() {
    let (c, t) = (6, 5);
    let mut attention = with_random_biases(layer(c, 3, true, 14), 100);
    let opts = options(Mask::causal(), false);
    let x = seeded_matrix(t, c, 101);
    let before = attention.forward(one(&x), one(&x), one(&x), &opts).unwrap().output;
    for cut in 0..t - 1 {
        // change every position after `cut`
        let mut changed = x.clone();
        for r in cut + 1..t {
            changed.row_mut(r).iter_mut().for_each(|v| *v = *v * -3.0 + 7.0);
        }
        let after = attention.forward(one(&changed), one(&changed), one(&changed), &opts).unwrap().output;
        for r in 0..=cut {
            assert_eq!(before[0].row(r), after[0].row(r), "row {r} changed when rows > {cut} did");
        }
        assert_ne!(before[0].row(cut + 1), after[0].row(cut + 1));
        // a gradient only on output rows ≤ cut reaches no input row > cut
        let mut g = seeded_matrix(t, c, 102);
        for r in cut + 1..t {
            g.row_mut(r).fill(0.0);
        }
        let grads = attention.backward(&[g], false).unwrap();
        for m in [&grads.query[0], &grads.key[0], &grads.value[0]] {
            for r in cut + 1..t {
                assert!(m.row(r).iter().all(|&v| v == 0.0), "gradient reached row {r} > {cut}: {:?}", m.row(r));
            }
            // the check is not vacuous: row `cut` does get a gradient (except at cut = 0, where
            // query 0 sees only key 0, its weight is the constant 1 and Q_0, K_0 get none)
            if cut > 0 || std::ptr::eq(m, &grads.value[0]) {
                assert!(m.row(cut).iter().any(|&v| v != 0.0));
            }
        }
    }
}

#[test]
fn a_row_that_may_attend_to_nothing_gives_zeros_and_zero_gradient() {
    let (c, t_q, t_k) = (4, 3, 2);
    let table = BoolMatrix::new(t_q, t_k, vec![true, true, false, false, true, false]).unwrap();
    let mask = Mask { causal: false, allowed: Some(table), window: None };
    let (q, k, v) = (batch(1, t_q, c, 110), batch(1, t_k, c, 111), batch(1, t_k, c, 112));
    for bias in [false, true] {
        let mut attention = with_random_biases(layer(c, 2, bias, 15), 113);
        let opts = ForwardOptions { need_weights: true, ..options(mask.clone(), false) };
        let out = attention.forward(&q, &k, &v, &opts).unwrap();
        let weights = out.weights.unwrap();
        for head in &weights[0] {
            assert_eq!(head.row(1), &[0.0, 0.0]);
        }
        // the attention context of row 1 is zero, so the output row is exactly b_O (0 without bias)
        let expected_row: Vec<f64> = attention.weights().biases.as_ref().map_or(vec![0.0; c], |b| b.b_o.clone());
        assert_eq!(out.output[0].row(1), &expected_row[..]);
        // a gradient only on row 1 reaches nothing but b_O
        let mut g = Matrix::zeros(t_q, c);
        g.row_mut(1).copy_from_slice(&[1.0, -2.0, 3.0, 0.5]);
        let grads = attention.backward(&[g], false).unwrap();
        for m in [&grads.query[0], &grads.key[0], &grads.value[0]] {
            assert!(m.data().iter().all(|&x| x == 0.0), "{m:?}");
        }
        for (name, data) in attention.grads().unwrap().tensors() {
            if name == "b_O" {
                assert_eq!(data, &[1.0, -2.0, 3.0, 0.5]);
            } else {
                assert!(data.iter().all(|&x| x == 0.0), "{name}: {data:?}");
            }
        }
    }
}

// ---- weights output, dropout -----------------------------------------------------

#[test]
fn need_weights_per_head_and_averaged() {
    let mut attention = layer(6, 3, true, 16);
    let (q, k) = (batch(2, 2, 6, 120), batch(2, 4, 6, 121));
    let per_head = attention.forward(&q, &k, &k, &ForwardOptions { need_weights: true, ..options(Mask::none(), true) }).unwrap();
    let per_head = per_head.weights.unwrap();
    assert_eq!((per_head.len(), per_head[0].len(), per_head[0][0].shape()), (2, 3, (2, 4)));
    for m in per_head.iter().flatten() {
        for r in 0..m.rows() {
            assert!((m.row(r).iter().sum::<f64>() - 1.0).abs() < 1e-15);
        }
    }
    let averaged = attention
        .forward(&q, &k, &k, &ForwardOptions { need_weights: true, average_weights: true, ..options(Mask::none(), true) })
        .unwrap()
        .weights
        .unwrap();
    assert_eq!((averaged.len(), averaged[0].len()), (2, 1));
    for b in 0..2 {
        for e in 0..8 {
            let mean = per_head[b].iter().map(|m| m.data()[e]).sum::<f64>() / 3.0;
            assert_eq!(averaged[b][0].data()[e], mean);
        }
    }
    let none = attention.forward(&q, &k, &k, &options(Mask::none(), true)).unwrap();
    assert!(none.weights.is_none());
}

#[test]
fn dropout_only_in_training_scaled_and_seeded() {
    let config = LayerConfig { dropout: 0.25, seed: 21, ..LayerConfig::new(8, 2) };
    let (q, k) = (batch(1, 16, 8, 130), batch(1, 16, 8, 131));
    let eval = ForwardOptions { need_weights: true, ..options(Mask::none(), false) };
    let train = ForwardOptions { training: true, ..eval.clone() };
    let mut a = MultiHeadAttention::new(&config).unwrap();
    let mut plain = MultiHeadAttention::new(&LayerConfig { dropout: 0.0, ..config.clone() }).unwrap();
    // not training: exactly the layer without dropout
    let eval_out = a.forward(&q, &k, &k, &eval).unwrap();
    assert_eq!(eval_out, plain.forward(&q, &k, &k, &eval).unwrap());
    // training with p = 0 changes nothing either
    assert_eq!(plain.forward(&q, &k, &k, &train).unwrap(), eval_out);
    // training: each weight is dropped (0) or kept and scaled by 1/(1−p)
    let trained = a.forward(&q, &k, &k, &train).unwrap();
    let (mut dropped, mut total) = (0, 0);
    for (kept, full) in trained.weights.as_ref().unwrap()[0].iter().zip(&eval_out.weights.as_ref().unwrap()[0]) {
        for (&x, &w) in kept.data().iter().zip(full.data()) {
            total += 1;
            if x == 0.0 {
                dropped += 1;
            } else {
                assert_eq!(x, w * (1.0 / 0.75));
            }
        }
    }
    let rate = dropped as f64 / total as f64;
    assert!((rate - 0.25).abs() < 0.06, "dropped {dropped} of {total}");
    // the same seed gives the same masks; the next pass draws new ones
    let mut b = MultiHeadAttention::new(&config).unwrap();
    b.forward(&q, &k, &k, &eval).unwrap();
    assert_eq!(b.forward(&q, &k, &k, &train).unwrap(), trained);
    assert_ne!(b.forward(&q, &k, &k, &train).unwrap(), trained);
}

#[test]
fn dropout_draw_order_is_the_documented_one() {
    // [B, h, T_q, T_k] row-major from SplitMix64(seed ^ DROPOUT_STREAM), dropped when u < p
    let (p, seed) = (0.5, 33);
    let mut attention = MultiHeadAttention::new(&LayerConfig { dropout: p, seed, ..LayerConfig::new(4, 2) }).unwrap();
    let (q, k) = (batch(2, 2, 4, 140), batch(2, 3, 4, 141));
    let used = attention
        .forward(&q, &k, &k, &ForwardOptions { training: true, need_weights: true, ..options(Mask::none(), true) })
        .unwrap()
        .weights
        .unwrap();
    let mut rng = SplitMix64::new(seed ^ init::DROPOUT_STREAM);
    for m in used.iter().flatten() {
        for &x in m.data() {
            assert_eq!(x == 0.0, rng.next_unit() < p);
        }
    }
}

// ---- construction, weights, shapes -------------------------------------------------

#[test]
fn gpt2_small_shapes_and_parameter_counts() {
    let mut with_bias = layer(768, 12, true, 0);
    assert_eq!(with_bias.head_dimensions(), 64);
    assert_eq!(with_bias.num_parameters(), 2_362_368);
    assert_eq!(layer(768, 12, false, 0).num_parameters(), 2_359_296);
    let x = batch(2, 16, 768, 150);
    let out = with_bias.forward(&x, &x, &x, &options(Mask::causal(), true)).unwrap().output;
    assert_eq!(out.len(), 2);
    assert!(out.iter().all(|m| m.shape() == (16, 768) && m.data().iter().all(|v| v.is_finite())));
}

#[test]
fn seeded_initialisation_follows_the_documented_algorithm() {
    let c = 6;
    let attention = layer(c, 2, true, 42);
    let mut rng = SplitMix64::new(42);
    let limit = (3.0f64 / c as f64).sqrt();
    assert_eq!(limit, xavier_limit(c, c));
    for (name, data) in attention.weights().tensors() {
        if name.starts_with('W') {
            for &w in data {
                assert_eq!(w.to_bits(), (limit * (2.0 * rng.next_unit() - 1.0)).to_bits(), "{name}");
            }
        } else {
            assert!(data.iter().all(|&b| b == 0.0), "{name}");
        }
    }
    assert_eq!(attention.weights(), layer(c, 2, true, 42).weights());
    assert_ne!(attention.weights(), layer(c, 2, true, 43).weights());
}

#[test]
fn fused_and_pytorch_layouts_map_onto_ours() {
    let (c, h) = (4, 2);
    let w_qkv = seeded_matrix(c, 3 * c, 160); // [C, 3C]
    let b_qkv = seeded_matrix(1, 3 * c, 161).into_data();
    let w_o = seeded_matrix(c, c, 162);
    let b_o = seeded_matrix(1, c, 163).into_data();
    let fused = MultiHeadAttention::from_fused_qkv(&w_qkv, Some(&b_qkv), &w_o, Some(&b_o), h, 0.0, 0).unwrap();
    let w = fused.weights();
    assert_eq!(w.w_q.row(1), &w_qkv.row(1)[..c]);
    assert_eq!(w.w_k.row(1), &w_qkv.row(1)[c..2 * c]);
    assert_eq!(w.w_v.row(1), &w_qkv.row(1)[2 * c..]);
    assert_eq!(w.biases.as_ref().unwrap().b_k, b_qkv[c..2 * c]);
    // PyTorch computes F.linear(x, W, b) = x·Wᵀ + b with in_proj_weight = [W_q; W_k; W_v] (3C × C)
    let in_proj = w_qkv.transpose(); // (3C, C)
    let out_proj = w_o.transpose(); // (C, C)
    let torch = MultiHeadAttention::from_pytorch(&in_proj, Some(&b_qkv), &out_proj, Some(&b_o), h, 0.0, 0).unwrap();
    assert_eq!(torch.weights(), fused.weights());
    // and the projection it performs is PyTorch's, written out with explicit loops
    let x = seeded_matrix(3, c, 164);
    let q = project(&x, &torch.weights().w_q, Some(&b_qkv[..c])).unwrap();
    for t in 0..3 {
        for o in 0..c {
            let linear: f64 = (0..c).map(|i| x.get(t, i) * in_proj.get(o, i)).sum::<f64>() + b_qkv[o];
            assert!((q.get(t, o) - linear).abs() < 1e-15);
        }
    }
    // without biases
    let no_bias = MultiHeadAttention::from_fused_qkv(&w_qkv, None, &w_o, None, h, 0.0, 0).unwrap();
    assert_eq!((no_bias.has_bias(), no_bias.num_parameters()), (false, 64));
}

fn range_message(result: Result<impl std::fmt::Debug>) -> String {
    match result.unwrap_err() {
        AttentionError::Range(m) => m,
        other => panic!("expected a Range error, got {other:?}"),
    }
}

#[test]
fn construction_errors() {
    let err = |config: LayerConfig| range_message(MultiHeadAttention::new(&config));
    // the config's fields as JS passes them: these are the constructor's messages in JS too
    assert_eq!(err(LayerConfig::new(10, 3)), "config.embedDim = 10 is not divisible by numHeads = 3: each head takes C / numHeads columns");
    assert_eq!(err(LayerConfig::new(0, 1)), "config.embedDim is 0; expected a positive integer");
    assert_eq!(err(LayerConfig::new(4, 0)), "config.numHeads is 0; expected a positive integer");
    assert_eq!(err(LayerConfig { dropout: 1.0, ..LayerConfig::new(4, 2) }), "config.dropout is 1; expected a probability with 0 ≤ dropout < 1");
    assert_eq!(err(LayerConfig { kv_heads: 3, ..LayerConfig::new(8, 4) }), "config.numKVHeads = 3 does not divide numHeads = 4: each key/value head serves numHeads / numKVHeads query heads");
    let rope = |base| LayerConfig { rope: Some(crate::engine::Rope { base }), ..LayerConfig::new(4, 2) };
    assert_eq!(err(rope(0.0)), "config.rope.base is 0; expected a finite number > 0");
    assert!(err(LayerConfig::new(1 << 20, 1)).contains("more than"));
    let w = seeded_matrix(4, 11, 1);
    let message = range_message(MultiHeadAttention::from_fused_qkv(&w, None, &seeded_matrix(4, 4, 2), None, 2, 0.0, 0));
    assert_eq!(message, "W_QKV is 4×11 but must be C×3C = 4×12 (Q, K and V weights side by side)");
    let w_qkv = seeded_matrix(4, 12, 1);
    let message = range_message(MultiHeadAttention::from_fused_qkv(&w_qkv, None, &seeded_matrix(3, 4, 2), None, 2, 0.0, 0));
    assert!(message.starts_with("W_O is 3×4 but must be C×C = 4×4"), "{message}");
    let message = range_message(MultiHeadAttention::from_pytorch(&w_qkv, None, &seeded_matrix(4, 4, 2), None, 2, 0.0, 0));
    assert!(message.starts_with("in_proj_weight is 4×12 but must be 3C×C"), "{message}");
    let half = MultiHeadAttention::from_fused_qkv(&w_qkv, Some(&[0.0; 12]), &seeded_matrix(4, 4, 2), None, 2, 0.0, 0);
    assert!(matches!(half, Err(AttentionError::Type(m)) if m == "b_O is missing: give both b_QKV and b_O, or neither"));
}

#[test]
fn call_order_and_shape_errors_leave_the_layer_usable() {
    let mut attention = layer(4, 2, true, 17);
    let x = batch(1, 3, 4, 170);
    let g = batch(1, 3, 4, 171);
    let state = |r: Result<InputGrads>| matches!(r, Err(AttentionError::State(_)));
    assert!(state(attention.backward(&g, false)));
    assert!(matches!(attention.grads(), Err(AttentionError::State(_))));
    let opts = options(Mask::none(), false);
    attention.forward(&x, &x, &x, &opts).unwrap();
    let first = attention.backward(&g, false).unwrap();
    // wrong gradient shapes
    assert_eq!(range_message(attention.backward(&batch(1, 2, 4, 1), false)), "gradOutput is 2×4 but the output was 3×4; gradOutput must have the output's shape");
    assert!(range_message(attention.backward(&g, true)).starts_with("gradOutput is a batch [B, T, C] but the last forward returned one [T, C] matrix"));
    // bad forwards: T_k of key and value differ, wrong C, bad mask, batch sizes differ
    let message = range_message(attention.forward(&x, &batch(1, 2, 4, 1), &x, &opts));
    assert_eq!(message, "value has T = 3 rows but key has T_k = 2: each key position needs one value");
    let message = range_message(attention.forward(&batch(1, 3, 5, 1), &x, &x, &opts));
    assert_eq!(message, "query is 3×5 but the layer's embedDim is 4: query must be T×4");
    let bad_mask = options(Mask { causal: false, allowed: Some(BoolMatrix::new(2, 3, vec![true; 6]).unwrap()), window: None }, false);
    assert!(range_message(attention.forward(&x, &x, &x, &bad_mask)).starts_with("mask is 2×3 but the scores are 3×3"));
    let message = range_message(attention.forward(&batch(2, 3, 4, 1), &batch(1, 3, 4, 1), &batch(2, 3, 4, 1), &options(Mask::none(), true)));
    assert!(message.starts_with("key has a batch of 1 but query has 2"), "{message}");
    let ragged = vec![seeded_matrix(3, 4, 1), seeded_matrix(2, 4, 2)];
    let message = range_message(attention.forward(&ragged, &ragged, &ragged, &options(Mask::none(), true)));
    assert_eq!(message, "query[1] is 2×4 but query[0] is 3×4: every item of a batch must have the same T");
    let averaged_only = ForwardOptions { average_weights: true, ..opts.clone() };
    assert!(matches!(attention.forward(&x, &x, &x, &averaged_only), Err(AttentionError::Type(_))));
    // the failed forwards did not replace the last good one
    assert_eq!(attention.backward(&g, false).unwrap(), first);
    // setWeights forgets the forward pass
    let weights = attention.weights().into_owned();
    attention.set_weights(weights.clone()).unwrap();
    assert!(state(attention.backward(&g, false)));
    let mut no_bias = weights.clone();
    no_bias.biases = None;
    assert!(matches!(attention.set_weights(no_bias), Err(AttentionError::Type(_))));
    let mut wrong = weights;
    wrong.w_k = Matrix::zeros(4, 3);
    assert!(range_message(attention.set_weights(wrong)).starts_with("W_K is 4×3 but must be C×C = 4×4"));
    attention.forward(&x, &x, &x, &opts).unwrap();
    assert_eq!(attention.backward(&g, false).unwrap(), first);
}

#[test]
fn a_refused_cached_forward_leaves_the_cache_as_it_was() {
    use crate::engine::Rope;
    let config = LayerConfig { seed: 2, kv_heads: 1, rope: Some(Rope::default()), ..LayerConfig::new(4, 2) };
    let mut layer = MultiHeadAttention::new(&config).unwrap();
    let mut cache = layer.create_cache();
    let options = ForwardOptions { mask: Mask::causal(), batched: true, ..ForwardOptions::default() };
    let (a, b) = (seeded_matrix(3, 4, 1), seeded_matrix(3, 4, 2));
    layer.forward_cached(&[a.clone(), b.clone()], &mut cache, &options).unwrap();
    let before = cache.clone();
    // item 1 overflows at the projection: nothing may be appended, to item 0 either
    let huge = Matrix::new(1, 4, vec![1e308; 4]).unwrap();
    let err = layer.forward_cached(&[seeded_matrix(1, 4, 3), huge], &mut cache, &options).unwrap_err();
    assert!(matches!(err, AttentionError::Range(_)) && err.message().starts_with("in batch item 1:"), "{err}");
    assert_eq!(cache, before);
    // a different batch size is refused too, and the cache still decodes what one pass gives
    assert!(layer.forward_cached(&[seeded_matrix(1, 4, 3)], &mut cache, &options).is_err());
    let next = [seeded_matrix(2, 4, 4), seeded_matrix(2, 4, 5)];
    let got = layer.forward_cached(&next, &mut cache, &options).unwrap().output;
    let joined = |x: &Matrix, y: &Matrix| {
        let mut m = x.clone();
        m.append_rows(y).unwrap();
        m
    };
    let whole = [joined(&a, &next[0]), joined(&b, &next[1])];
    let want = layer.forward(&whole, &whole, &whole, &options).unwrap().output;
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.data(), w.slice_rows(3, 5).unwrap().data());
    }
    // another layer's cache is an Error
    let mut other = MultiHeadAttention::new(&config).unwrap();
    assert!(matches!(other.forward_cached(&next, &mut cache, &options), Err(AttentionError::State(_))));
}

/// `x·W + b` by the spec's ops (MatMul, then the bias added to every row): the reference the
/// layer's projections are checked against.
fn project(x: &Matrix, w: &Matrix, b: Option<&[f64]>) -> crate::error::Result<Matrix> {
    let mut projected = x.matmul(w)?;
    if let Some(b) = b {
        projected.add_row(b)?;
    }
    Ok(projected)
}
