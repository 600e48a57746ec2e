//! Property tests of the core in f64 (and f32 against f64), with proptest.
//!
//! Tolerances are stated per property; "ε" is f64's unit roundoff 2^-53.
#![cfg(not(target_arch = "wasm32"))]

use attention_lab::attention::attention_scale;
use attention_lab::softmax::stable_softmax;
use attention_lab::{dot_product_attention, multi_head_attention, BoolMatrix, Mask, Matrix, MultiHeadOptions};
use proptest::prelude::*;

const EPS: f64 = f64::EPSILON / 2.0;

/// A `rows × cols` matrix with entries in `[-range, range]`.
fn matrix(rows: usize, cols: usize, range: f64) -> impl Strategy<Value = Matrix> {
    prop::collection::vec(-range..=range, rows * cols).prop_map(move |data| Matrix::new(rows, cols, data).unwrap())
}

/// (T, d_k, d_v).
fn shape() -> impl Strategy<Value = (usize, usize, usize)> {
    (1usize..=12, 1usize..=8, 1usize..=6)
}

/// Q, K (T×d_k) and V (T×d_v).
fn qkv(range: f64) -> impl Strategy<Value = (Matrix, Matrix, Matrix)> {
    shape().prop_flat_map(move |(t, dk, dv)| (matrix(t, dk, range), matrix(t, dk, range), matrix(t, dv, range)))
}

/// A mask for T×T scores: none, causal, an explicit table (possibly with empty rows) or both.
fn mask(t: usize) -> impl Strategy<Value = Mask> {
    (0u8..4, prop::collection::vec(prop::bool::weighted(0.6), t * t)).prop_map(move |(kind, table)| {
        let allowed = Some(BoolMatrix::new(t, t, table).unwrap());
        match kind {
            0 => Mask::none(),
            1 => Mask::causal(),
            2 => Mask { causal: false, allowed, window: None },
            _ => Mask { causal: true, allowed, window: None },
        }
    })
}

fn qkv_mask(range: f64) -> impl Strategy<Value = (Matrix, Matrix, Matrix, Mask)> {
    qkv(range).prop_flat_map(|(q, k, v)| {
        let t = q.rows();
        (Just(q), Just(k), Just(v), mask(t))
    })
}

/// The rows of `perm` applied to `m`: row `i` of the result is row `perm[i]` of `m`.
fn permute_rows(m: &Matrix, perm: &[usize]) -> Matrix {
    let rows: Vec<Vec<f64>> = perm.iter().map(|&p| m.row(p).to_vec()).collect();
    Matrix::from_rows(&rows).unwrap()
}

fn bits(m: &Matrix) -> Vec<u64> {
    m.data().iter().map(|x| x.to_bits()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Softmax rows with at least one allowed key sum to 1 within 1e-12; empty rows are all 0.
    #[test]
    fn softmax_rows_sum_to_one((q, k, _v, mask) in qkv_mask(30.0)) {
        let scores = q.matmul(&k.transpose()).unwrap().scale(attention_scale(q.cols()));
        let weights = stable_softmax(&scores, &mask);
        for i in 0..weights.rows() {
            let any = (0..weights.cols()).any(|j| mask.allows(i, j, 0));
            let sum: f64 = weights.row(i).iter().sum();
            if any {
                prop_assert!((sum - 1.0).abs() <= 1e-12, "row {i} sums to {sum}");
            } else {
                prop_assert!(weights.row(i).iter().all(|&w| w == 0.0));
            }
            prop_assert!(weights.row(i).iter().all(|&w| (0.0..=1.0).contains(&w)));
        }
    }

    /// Each output entry lies within [min, max] of its V column (a convex combination), up to the
    /// rounding of T-term sums: (T + 2)·ε·max|V column|. Fully masked rows are 0.
    #[test]
    fn outputs_are_convex_combinations((q, k, v, mask) in qkv_mask(30.0)) {
        let out = dot_product_attention(&q, &k, &v, &mask).unwrap();
        let t = v.rows();
        for c in 0..v.cols() {
            let column: Vec<f64> = (0..t).map(|j| v.get(j, c)).collect();
            let lo = column.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = column.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let slack = (t as f64 + 2.0) * EPS * lo.abs().max(hi.abs());
            for i in 0..out.rows() {
                let x = out.get(i, c);
                if (0..t).any(|j| mask.allows(i, j, 0)) {
                    prop_assert!(x >= lo - slack && x <= hi + slack, "out[{i}][{c}] = {x} outside [{lo}, {hi}]");
                } else {
                    prop_assert_eq!(x, 0.0);
                }
            }
        }
    }

    /// Permuting the keys and values together (and the mask's columns with them) leaves the output
    /// unchanged within 8·T·ε·max|V| + 8·d_k·ε·|scores|: not bitwise, because the softmax
    /// denominator and the weighted sum add the same terms in a different order.
    #[test]
    fn permuting_keys_and_values_together_changes_nothing(
        ((q, k, v), perm, table) in qkv(3.0).prop_flat_map(|(q, k, v)| {
            let t = q.rows();
            (Just((q, k, v)), Just((0..t).collect::<Vec<_>>()).prop_shuffle(), prop::collection::vec(prop::bool::weighted(0.7), t * t))
        })
    ) {
        let t = q.rows();
        let mask = Mask { causal: false, allowed: Some(BoolMatrix::new(t, t, table.clone()).unwrap()), window: None };
        let permuted_table: Vec<bool> = (0..t).flat_map(|i| perm.iter().map(move |&p| (i, p))).map(|(i, p)| table[i * t + p]).collect();
        let permuted_mask = Mask { causal: false, allowed: Some(BoolMatrix::new(t, t, permuted_table).unwrap()), window: None };
        let before = dot_product_attention(&q, &k, &v, &mask).unwrap();
        let after = dot_product_attention(&q, &permute_rows(&k, &perm), &permute_rows(&v, &perm), &permuted_mask).unwrap();
        let v_max = v.data().iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let tolerance = 8.0 * t as f64 * EPS * v_max + 8.0 * q.cols() as f64 * EPS * 9.0 * v_max * q.cols() as f64;
        for (a, b) in before.data().iter().zip(after.data()) {
            prop_assert!((a - b).abs() <= tolerance, "{a} vs {b} (tolerance {tolerance})");
        }
    }

    /// numberOfHeads = 1 is dotProductAttention, bit for bit, with any mask.
    #[test]
    fn one_head_is_dot_product_attention((q, k, v, mask) in qkv_mask(30.0).prop_filter("square", |(q, _, v, _)| q.cols() == v.cols())) {
        let options = MultiHeadOptions { mask: mask.clone(), ..MultiHeadOptions::new(1, q.cols()) };
        let multi = multi_head_attention(&q, &k, &v, &options).unwrap();
        let single = dot_product_attention(&q, &k, &v, &mask).unwrap();
        prop_assert_eq!(bits(&multi), bits(&single));
    }

    /// Causal: output row i does not change, to the bit, when keys and values after i change.
    #[test]
    fn causal_rows_never_see_the_future(((q, k, v), (k2, v2), cut) in qkv(30.0).prop_flat_map(|(q, k, v)| {
        let (t, dk, dv) = (q.rows(), k.cols(), v.cols());
        (Just((q, k, v)), (matrix(t, dk, 30.0), matrix(t, dv, 30.0)), 0..t)
    })) {
        // rows after `cut` replaced by unrelated values
        let splice = |a: &Matrix, b: &Matrix| {
            let rows: Vec<Vec<f64>> = (0..a.rows()).map(|r| if r <= cut { a.row(r).to_vec() } else { b.row(r).to_vec() }).collect();
            Matrix::from_rows(&rows).unwrap()
        };
        let before = dot_product_attention(&q, &k, &v, &Mask::causal()).unwrap();
        let after = dot_product_attention(&q, &splice(&k, &k2), &splice(&v, &v2), &Mask::causal()).unwrap();
        for i in 0..=cut {
            prop_assert_eq!(bits(&Matrix::from_rows(&[before.row(i)]).unwrap()), bits(&Matrix::from_rows(&[after.row(i)]).unwrap()));
        }
    }

    /// f32 and f64 agree within 1e-5 relative to each V column's scale on well-conditioned input
    /// (entries in [-1, 1], exactly representable in f32): |out32 − out64| ≤ 1e-5 · max_j |V[j][c]|.
    #[test]
    fn f32_agrees_with_f64((q, k, v, mask) in qkv_mask(1.0)) {
        let to_f32_exact = |m: &Matrix| m.cast::<f32>().cast::<f64>();
        let (q, k, v) = (to_f32_exact(&q), to_f32_exact(&k), to_f32_exact(&v));
        let wide = dot_product_attention(&q, &k, &v, &mask).unwrap();
        let narrow = dot_product_attention(&q.cast::<f32>(), &k.cast::<f32>(), &v.cast::<f32>(), &mask).unwrap();
        for c in 0..v.cols() {
            let scale = (0..v.rows()).map(|j| v.get(j, c).abs()).fold(f64::MIN_POSITIVE, f64::max);
            for i in 0..wide.rows() {
                let (a, b) = (narrow.get(i, c) as f64, wide.get(i, c));
                prop_assert!((a - b).abs() <= 1e-5 * scale, "[{i}][{c}]: f32 {a} vs f64 {b}");
            }
        }
    }

    /// Scaling Q by s equals scaling the scale by s: softmax((s·Q)·Kᵀ/√d)·V = softmax(s·(Q·Kᵀ)/√d)·V.
    /// For s a power of two both sides round identically, so they agree to the bit; for any s in
    /// [0.1, 10] within 16·d_k·ε·|s|·max|scores| in the scores, i.e. 1e-12 in the outputs here.
    #[test]
    fn scaling_q_is_scaling_the_scale((q, k, v, mask) in qkv_mask(3.0), exponent in -4i32..=4, s in 0.1f64..10.0) {
        let by_scale = |factor: f64| {
            let scores = q.matmul(&k.transpose()).unwrap().scale(factor * attention_scale::<f64>(q.cols()));
            stable_softmax(&scores, &mask).matmul(&v).unwrap()
        };
        let power = 2f64.powi(exponent);
        // (s·Q)·Kᵀ then ·(1/√d) vs Q·Kᵀ then ·(s/√d): multiply by a power of two first on both sides
        let exact_left = {
            let scores = q.scale(power).matmul(&k.transpose()).unwrap().scale(attention_scale(q.cols()));
            stable_softmax(&scores, &mask).matmul(&v).unwrap()
        };
        let exact_right = {
            let scores = q.matmul(&k.transpose()).unwrap().scale(power).scale(attention_scale(q.cols()));
            stable_softmax(&scores, &mask).matmul(&v).unwrap()
        };
        prop_assert_eq!(bits(&exact_left), bits(&exact_right));
        // and the package's own entry point on s·Q against the scale multiplied by s
        let via_q = dot_product_attention(&q.scale(s), &k, &v, &mask).unwrap();
        let via_scale = by_scale(s);
        for (a, b) in via_q.data().iter().zip(via_scale.data()) {
            prop_assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} vs {b}");
        }
    }
}

// ---- the MultiHeadAttention layer ------------------------------------------------------------

mod layer {
    use super::*;
    use attention_lab::layer::{Biases, ForwardOptions, LayerConfig, MultiHeadAttention};

    /// A layer with h heads of d columns, seeded weights and random biases in [-1, 1].
    fn layer_strategy() -> impl Strategy<Value = MultiHeadAttention> {
        (1usize..=3, 1usize..=3, any::<u64>(), any::<bool>()).prop_flat_map(|(h, d, seed, bias)| {
            let c = h * d;
            prop::collection::vec(-1.0f64..=1.0, 4 * c).prop_map(move |b| {
                let mut layer = MultiHeadAttention::new(&LayerConfig { bias, seed, ..LayerConfig::new(c, h) }).unwrap();
                if bias {
                    let mut w = layer.weights().into_owned();
                    w.biases = Some(Biases { b_q: b[..c].to_vec(), b_k: b[c..2 * c].to_vec(), b_v: b[2 * c..3 * c].to_vec(), b_o: b[3 * c..].to_vec() });
                    layer.set_weights(w).unwrap();
                }
                layer
            })
        })
    }

    /// A layer, a query (T_q × C), keys and values (T_k × C, cross-attention when T_k ≠ T_q) and a gradient.
    fn case() -> impl Strategy<Value = (MultiHeadAttention, Matrix, Matrix, Matrix, Matrix)> {
        (layer_strategy(), 1usize..=6, 1usize..=6).prop_flat_map(|(layer, t_q, t_k)| {
            let c = layer.embed_dim();
            (Just(layer), matrix(t_q, c, 2.0), matrix(t_k, c, 2.0), matrix(t_k, c, 2.0), matrix(t_q, c, 1.0))
        })
    }

    fn run(layer: &mut MultiHeadAttention, q: &Matrix, k: &Matrix, v: &Matrix, options: &ForwardOptions) -> Matrix {
        let mut out = layer.forward(&[q.clone()], &[k.clone()], &[v.clone()], options).unwrap().output;
        out.remove(0)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// A batch gives each item exactly what it gives alone (bit for bit), forward and backward.
        #[test]
        fn a_batch_is_its_items_bit_for_bit((mut layer, q, k, v, g) in case(), seed in any::<u64>()) {
            let c = layer.embed_dim();
            let (q2, k2, v2) = (attention_lab::testing::seeded_matrix(q.rows(), c, seed), attention_lab::testing::seeded_matrix(k.rows(), c, seed ^ 1), attention_lab::testing::seeded_matrix(k.rows(), c, seed ^ 2));
            let options = ForwardOptions { batched: true, ..ForwardOptions::default() };
            let both = layer.forward(&[q.clone(), q2.clone()], &[k.clone(), k2.clone()], &[v.clone(), v2.clone()], &options).unwrap().output;
            let grads = layer.backward(&[g.clone(), g.clone()], true).unwrap();
            let single = ForwardOptions::default();
            prop_assert_eq!(bits(&both[0]), bits(&run(&mut layer, &q, &k, &v, &single)));
            let alone = layer.backward(&[g.clone()], false).unwrap();
            prop_assert_eq!(bits(&grads.key[0]), bits(&alone.key[0]));
            prop_assert_eq!(bits(&both[1]), bits(&run(&mut layer, &q2, &k2, &v2, &single)));
        }

        /// Permuting the keys and values together leaves the output unchanged within
        /// 64·(T_k + C)·ε·(1 + max|output|) (sums in another order; the projections are row-wise).
        #[test]
        fn permuting_keys_and_values_together_changes_nothing((mut layer, q, k, v, _g) in case(), shuffle in any::<u64>()) {
            let t_k = k.rows();
            let mut perm: Vec<usize> = (0..t_k).collect();
            let mut s = shuffle;
            for i in (1..t_k).rev() {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                perm.swap(i, (s >> 33) as usize % (i + 1));
            }
            let options = ForwardOptions::default();
            let before = run(&mut layer, &q, &k, &v, &options);
            let after = run(&mut layer, &q, &permute_rows(&k, &perm), &permute_rows(&v, &perm), &options);
            let scale = 1.0 + before.data().iter().fold(0.0f64, |m, x| m.max(x.abs()));
            let tolerance = 64.0 * (t_k + layer.embed_dim()) as f64 * EPS * scale * 16.0;
            for (a, b) in before.data().iter().zip(after.data()) {
                prop_assert!((a - b).abs() <= tolerance, "{a} vs {b} (tolerance {tolerance})");
            }
        }

        /// Causal self-attention: changing the inputs at positions ≥ cut leaves every output row
        /// before cut unchanged, bit for bit (no leakage from the future), and their gradients too.
        #[test]
        fn causal_rows_never_see_the_future((mut layer, q, _k, _v, g) in case(), cut in 0usize..6, noise in matrix(6, 9, 5.0)) {
            let t = q.rows();
            let cut = cut.min(t);
            let mut changed = q.clone();
            for i in cut..t {
                for j in 0..q.cols() {
                    changed.row_mut(i)[j] = noise.get(i, j);
                }
            }
            let options = ForwardOptions { mask: Mask::causal(), ..ForwardOptions::default() };
            let a = run(&mut layer, &q, &q, &q, &options);
            let b = run(&mut layer, &changed, &changed, &changed, &options);
            for i in 0..cut {
                prop_assert_eq!(bits(&Matrix::from_rows(&[a.row(i)]).unwrap()), bits(&Matrix::from_rows(&[b.row(i)]).unwrap()), "row {} changed", i);
            }
            let _ = g;
        }

        /// needWeights: every row of every head sums to 1 within 1e-12 (0 when fully masked); the
        /// averaged weights are the mean over heads within 1e-15; outputs are finite.
        #[test]
        fn returned_weights_are_distributions((mut layer, q, k, v, _g) in case(), table in prop::collection::vec(prop::bool::weighted(0.6), 36)) {
            let (t_q, t_k) = (q.rows(), k.rows());
            let allowed = BoolMatrix::new(t_q, t_k, table[..t_q * t_k].to_vec()).unwrap();
            let mask = Mask { causal: false, allowed: Some(allowed), window: None };
            let options = ForwardOptions { mask: mask.clone(), need_weights: true, ..ForwardOptions::default() };
            let per_head = layer.forward(&[q.clone()], &[k.clone()], &[v.clone()], &options).unwrap();
            prop_assert!(per_head.output[0].data().iter().all(|x| x.is_finite()));
            let heads = &per_head.weights.as_ref().unwrap()[0];
            for w in heads {
                for i in 0..t_q {
                    let sum: f64 = w.row(i).iter().sum();
                    let any = (0..t_k).any(|j| mask.allows(i, j, t_k as isize - t_q as isize));
                    prop_assert!(if any { (sum - 1.0).abs() <= 1e-12 } else { sum == 0.0 }, "row {i} sums to {sum}");
                }
            }
            let averaged = layer.forward(&[q], &[k], &[v], &ForwardOptions { average_weights: true, ..options }).unwrap();
            let mean = &averaged.weights.unwrap()[0][0];
            for (n, &m) in mean.data().iter().enumerate() {
                let expected = heads.iter().map(|w| w.data()[n]).sum::<f64>() / heads.len() as f64;
                prop_assert!((m - expected).abs() <= 1e-15, "{m} vs {expected}");
            }
        }

        /// backward is linear in gradOutput (within 64·ε·scale), and the b_O gradient is exactly
        /// the column sums of gradOutput.
        #[test]
        fn backward_is_linear_in_the_gradient((mut layer, q, k, v, g) in case(), h in matrix(6, 9, 1.0)) {
            let (t_q, c) = (q.rows(), layer.embed_dim());
            let h = Matrix::from_rows(&(0..t_q).map(|i| h.row(i)[..c].to_vec()).collect::<Vec<_>>()).unwrap();
            let sum = Matrix::new(t_q, c, g.data().iter().zip(h.data()).map(|(a, b)| a + b).collect()).unwrap();
            run(&mut layer, &q, &k, &v, &ForwardOptions::default());
            let a = layer.backward(&[g.clone()], false).unwrap();
            if let Some(b) = &layer.grads().unwrap().biases {
                let expected = g.column_sums();
                prop_assert_eq!(&b.b_o, &expected);
            }
            let b = layer.backward(&[h], false).unwrap();
            let both = layer.backward(&[sum], false).unwrap();
            for ((x, y), z) in a.query[0].data().iter().zip(b.query[0].data()).zip(both.query[0].data()) {
                let scale = 1.0 + x.abs() + y.abs();
                prop_assert!((x + y - z).abs() <= 64.0 * (c + k.rows()) as f64 * EPS * scale * 8.0, "{x} + {y} vs {z}");
            }
        }
    }
}

// ---- attention as LLMs run it: grouped-query heads, RoPE, windows, the KV cache -------------

mod modern {
    use super::*;
    use attention_lab::engine::Rope;
    use attention_lab::grouped_query::grouped_query_attention;
    use attention_lab::layer::{ForwardOptions, LayerConfig, MultiHeadAttention};
    use attention_lab::multi_head::{multi_head_attention, HeadSplit, MultiHeadOptions};

    fn bits(m: &Matrix) -> Vec<u64> {
        m.data().iter().map(|x| x.to_bits()).collect()
    }

    /// (h, h_kv, d): h_kv divides h.
    fn heads() -> impl Strategy<Value = (usize, usize, usize)> {
        (1usize..=3, 1usize..=3, 1usize..=3).prop_map(|(kv, group, half)| (kv * group, kv, 2 * half))
    }

    /// K or V with each K/V head repeated `group` times side by side (repeat_interleave).
    fn repeated(m: &Matrix, kv: usize, d: usize, group: usize) -> Matrix {
        let parts: Vec<Matrix> = (0..kv * group).map(|i| m.slice_columns((i / group) * d, (i / group + 1) * d).unwrap()).collect();
        Matrix::concat_columns(&parts).unwrap()
    }

    fn forward(layer: &mut MultiHeadAttention, x: &Matrix, options: &ForwardOptions) -> Matrix {
        layer.forward(&[x.clone()], &[x.clone()], &[x.clone()], options).unwrap().output.remove(0)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        /// numKVHeads = numHeads is today's layer: the same weights from the same seed and the same
        /// outputs, bit for bit (the default config is that layer).
        #[test]
        fn as_many_kv_heads_as_heads_is_the_multi_head_layer((h, _, d) in heads(), seed in any::<u64>(), t in 1usize..=7, causal in any::<bool>()) {
            let c = h * d;
            let x = attention_lab::testing::seeded_matrix(t, c, seed);
            let mut plain = MultiHeadAttention::new(&LayerConfig { seed, ..LayerConfig::new(c, h) }).unwrap();
            let mut grouped = MultiHeadAttention::new(&LayerConfig { seed, kv_heads: h, ..LayerConfig::new(c, h) }).unwrap();
            prop_assert_eq!(plain.weights(), grouped.weights());
            let options = ForwardOptions { mask: Mask { causal, ..Mask::none() }, ..ForwardOptions::default() };
            prop_assert_eq!(bits(&forward(&mut plain, &x, &options)), bits(&forward(&mut grouped, &x, &options)));
        }

        /// Grouped-query attention is multi-head attention with every K/V head repeated for its
        /// group, bit for bit, with any mask and window.
        #[test]
        fn grouped_query_attention_is_multi_head_attention_with_repeated_heads((h, kv, d) in heads(), t in 1usize..=9, seed in any::<u64>(), causal in any::<bool>(), window in prop::option::of(1usize..=10)) {
            let q = attention_lab::testing::seeded_matrix(t, h * d, seed);
            let (k, v) = (attention_lab::testing::seeded_matrix(t, kv * d, seed ^ 1), attention_lab::testing::seeded_matrix(t, kv * d, seed ^ 2));
            let mask = Mask { causal, window, ..Mask::none() };
            let split = HeadSplit { number_of_heads: h, head_dimensions: d };
            let got = grouped_query_attention(&q, &k, &v, split, kv, None, &mask).unwrap();
            let options = MultiHeadOptions { mask, ..MultiHeadOptions::new(h, d) };
            let want = multi_head_attention(&q, &repeated(&k, kv, d, h / kv), &repeated(&v, kv, d, h / kv), &options).unwrap();
            prop_assert_eq!(bits(&got), bits(&want));
        }

        /// RoPE at position 0 and a window at least T long change nothing, bit for bit.
        #[test]
        fn rope_at_position_zero_and_a_window_as_long_as_t_change_nothing((h, kv, d) in heads(), t in 1usize..=7, seed in any::<u64>(), base in 1.5f64..1e6) {
            let c = h * d;
            let x = attention_lab::testing::seeded_matrix(1, c, seed);
            let mut rotated = x.clone();
            Rope { base }.rotate(rotated.data_mut(), c, d, 0, false);
            prop_assert_eq!(bits(&rotated), bits(&x));
            let y = attention_lab::testing::seeded_matrix(t, c, seed ^ 5);
            let mut layer = MultiHeadAttention::new(&LayerConfig { seed, kv_heads: kv, ..LayerConfig::new(c, h) }).unwrap();
            for causal in [false, true] {
                let plain = forward(&mut layer, &y, &ForwardOptions { mask: Mask { causal, ..Mask::none() }, ..ForwardOptions::default() });
                let windowed = forward(&mut layer, &y, &ForwardOptions { mask: Mask { causal, window: Some(t), ..Mask::none() }, ..ForwardOptions::default() });
                prop_assert_eq!(bits(&plain), bits(&windowed));
            }
        }

        /// Decoding through a KV cache in any chunking gives the rows of one causal pass, bit for
        /// bit, with grouped heads, RoPE and a window.
        #[test]
        fn chunked_decoding_is_one_causal_pass((h, kv, d) in heads(), seed in any::<u64>(), cuts in prop::collection::vec(1usize..=4, 1..=5), rope in any::<bool>(), window in prop::option::of(1usize..=6)) {
            let c = h * d;
            let t: usize = cuts.iter().sum();
            let x = attention_lab::testing::seeded_matrix(t, c, seed);
            let config = LayerConfig { seed, kv_heads: kv, rope: rope.then_some(Rope { base: 100.0 }), ..LayerConfig::new(c, h) };
            let mut layer = MultiHeadAttention::new(&config).unwrap();
            let options = ForwardOptions { mask: Mask { causal: true, window, ..Mask::none() }, ..ForwardOptions::default() };
            let whole = forward(&mut layer, &x, &options);
            let mut cache = layer.create_cache();
            let mut start = 0;
            for n in cuts {
                let chunk = x.slice_rows(start, start + n).unwrap();
                let rows = layer.forward_cached(&[chunk], &mut cache, &options).unwrap().output.remove(0);
                prop_assert_eq!(bits(&rows), bits(&whole.slice_rows(start, start + n).unwrap()), "rows {}..{}", start, start + n);
                start += n;
            }
            prop_assert_eq!(cache.length(), t);
            if let Some(w) = window {
                prop_assert!(cache.held() < 2 * w, "a window of {} holds {} positions", w, cache.held());
            }
        }
    }
}

// ---- issue 21: the Transformer and repeatedTokens -------------------------------------------------

mod model_properties {
    use attention_lab::model::adamw::AdamW;
    use attention_lab::model::data::repeated_tokens;
    use attention_lab::model::{ModelConfig, Positions, Tokens, Transformer};
    use proptest::prelude::*;

    /// A small config: any positions (RoPE with an even head width), mlp, layerNorm, bias, 0–2 layers.
    fn config() -> impl Strategy<Value = ModelConfig> {
        (2usize..10, 2usize..8, 1usize..4, 1usize..3, 0usize..3, 0u8..4, any::<(bool, bool, bool)>(), any::<u64>()).prop_map(
            |(v, ctx, h, d, l, p, (mlp, layer_norm, bias), seed)| {
                let positions = [Positions::Shortformer, Positions::Learned, Positions::Rope, Positions::None][p as usize];
                let d = if positions == Positions::Rope { 2 * d } else { d };
                ModelConfig { positions, mlp, layer_norm, bias, seed, ..ModelConfig::new(v, ctx, h * d, h, l) }
            },
        )
    }

    /// A config and B×T tokens for it.
    fn config_tokens() -> impl Strategy<Value = (ModelConfig, usize, usize, Vec<f64>)> {
        config().prop_flat_map(|c| {
            let (v, ctx) = (c.vocab_size, c.context_length);
            (Just(c), 1usize..4, 2usize..=ctx).prop_flat_map(move |(c, b, t)| {
                (Just(c), Just(b), Just(t), prop::collection::vec((0..v).prop_map(|x| x as f64), b * t))
            })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// The documented task: token 0, a period of distinct tokens from 1 … V − 1 of length
        /// ⌈length/2⌉ … length, repeated; `repeated` exactly where t − period ≥ 1; seeded.
        #[test]
        fn repeated_tokens_is_the_documented_task((v, length) in (2usize..64).prop_flat_map(|v| (Just(v), 1..v)), batch in 1usize..8, seed in any::<u64>()) {
            let task = repeated_tokens(v, length, batch, seed).unwrap();
            prop_assert_eq!(task.t, 1 + 2 * length);
            prop_assert_eq!(&task, &repeated_tokens(v, length, batch, seed).unwrap());
            for b in 0..batch {
                let p = task.periods[b];
                prop_assert!(p >= length.div_ceil(2) && p <= length);
                let row = &task.tokens[b * task.t..(b + 1) * task.t];
                prop_assert_eq!(row[0], 0);
                let mut seen = std::collections::HashSet::new();
                for t in 1..task.t {
                    prop_assert_eq!(row[t], row[1 + (t - 1) % p]);
                    prop_assert!(row[t] >= 1 && (row[t] as usize) < v);
                    if t <= p { prop_assert!(seen.insert(row[t]), "a period repeats a token"); }
                    prop_assert_eq!(task.repeated[b * task.t + t], t >= 1 + p);
                }
                prop_assert!(!task.repeated[b * task.t]);
            }
        }

        /// Permuting the batch permutes the losses, bit for bit (f64); the loss is their mean, each ≥ 0.
        #[test]
        fn the_batch_order_only_permutes_the_losses((c, b, t, values) in config_tokens(), shift in 0usize..4) {
            let mut model = Transformer::<f64>::new(c.clone()).unwrap();
            let tokens = Tokens::check(&values, b, t, &c).unwrap();
            let out = model.forward(&tokens, false, None).unwrap();
            let order: Vec<usize> = (0..b).map(|i| (i + shift) % b).collect();
            let permuted: Vec<f64> = order.iter().flat_map(|&i| values[i * t..(i + 1) * t].to_vec()).collect();
            let other = model.forward(&Tokens::check(&permuted, b, t, &c).unwrap(), false, None).unwrap();
            for (k, &i) in order.iter().enumerate() {
                let bits = |x: &[f64]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                prop_assert_eq!(bits(&other.losses[k * (t - 1)..(k + 1) * (t - 1)]), bits(&out.losses[i * (t - 1)..(i + 1) * (t - 1)]));
            }
            prop_assert!(out.losses.iter().all(|&x| x >= 0.0));
            let mean = out.losses.iter().sum::<f64>() / out.losses.len() as f64;
            prop_assert!((out.loss - mean).abs() <= 1e-12 * mean.max(1.0), "loss {} vs mean {}", out.loss, mean);
        }

        /// The f32 model on the same (f32) weights is within 1e-5 (relative) of the f64 one.
        #[test]
        fn f32_is_close_to_f64((c, b, t, values) in config_tokens()) {
            let mut m32 = Transformer::<f32>::new(c.clone()).unwrap();
            let mut m64 = Transformer::<f64>::new(c.clone()).unwrap();
            let updates = m32.params().iter().map(|p| (p.layer, p.name.to_string(), p.data.iter().map(|&x| x as f64).collect())).collect();
            m64.set_params(updates, None).unwrap();
            let tokens = Tokens::check(&values, b, t, &c).unwrap();
            let (l32, l64) = (m32.forward(&tokens, false, None).unwrap().loss, m64.forward(&tokens, false, None).unwrap().loss);
            prop_assert!((l32 - l64).abs() <= 1e-5 * l64.abs().max(1.0), "f32 {} vs f64 {}", l32, l64);
        }

        /// trainStep is deterministic, and a refused step (a bad option) changes nothing.
        #[test]
        fn train_step_is_deterministic_and_a_refused_step_changes_nothing((c, b, t, values) in config_tokens(), lr in 0.0f64..0.1) {
            let tokens = Tokens::check(&values, b, t, &c).unwrap();
            let mut a = Transformer::<f64>::new(c.clone()).unwrap();
            let mut z = Transformer::<f64>::new(c.clone()).unwrap();
            for _ in 0..2 {
                let (la, _) = a.train_step(&tokens, &AdamW::new(lr)).unwrap();
                let (lz, _) = z.train_step(&tokens, &AdamW::new(lr)).unwrap();
                prop_assert_eq!(la.to_bits(), lz.to_bits());
            }
            prop_assert_eq!(a.params(), z.params());
            prop_assert_eq!(a.moments(), z.moments());
            for bad in [AdamW::new(f64::NAN), AdamW { betas: (1.0, 0.999), ..AdamW::new(lr) }, AdamW { eps: -1.0, ..AdamW::new(lr) }] {
                prop_assert!(a.train_step(&tokens, &bad).is_err());
                prop_assert_eq!(a.params(), z.params());
                prop_assert_eq!(a.moments(), z.moments());
            }
        }
    }
}
