//! The core fuzz check: decode arbitrary bytes into shapes, values, masks and options, call the
//! core, and panic (which the fuzzer reports) when an invariant breaks:
//!
//! 1. no panic inside the core, whatever the shapes (mismatched ones included);
//! 2. errors are `Range` errors (the core never produces `Type` or `State` errors);
//! 3. from finite inputs, an `Ok` output is entirely finite (overflow must be a `Range` error);
//! 4. dotProductAttention outputs lie within their V column's range (convex combinations);
//! 5. the trace's output equals multiHeadAttention's bit for bit, and replaying its steps does too;
//! 6. f32 never panics and is finite on finite f32 input whenever it returns `Ok`;
//! 7. the MultiHeadAttention layer (built by `new`, `from_fused_qkv` or `from_pytorch`, with
//!    biases or not, dropout or not): forward (masks, causal, cross-attention, batches,
//!    need/average weights, training) and backward never panic, return `Range` errors for bad
//!    shapes and overflow (`Type` only for averageWeights without needWeights, `State` never here),
//!    and from finite inputs return only finite outputs, weights and gradients; a failed call
//!    leaves the layer working.

pub mod safetensors;

use arbitrary::{Result, Unstructured};
use attention_lab::layer::{ForwardOptions, LayerConfig, MultiHeadAttention};
use attention_lab::{
    dot_product_attention, multi_head_attention, replay, trace_multi_head_attention, AttentionError, BoolMatrix, Mask,
    Matrix, MultiHeadOptions,
};

/// A finite f64: mostly moderate, sometimes any finite bit pattern (huge, tiny, subnormal, -0).
fn value(u: &mut Unstructured) -> Result<f64> {
    Ok(match u.int_in_range(0u8..=9)? {
        0 => {
            let x = f64::from_bits(u.arbitrary()?);
            if x.is_finite() { x } else { 0.0 }
        }
        1 => *u.choose(&[0.0, -0.0, 5e-324, f64::MIN_POSITIVE, 1e-300, 1e150, -1e150, 1e300, f64::MAX, f64::MIN])?,
        _ => f64::from(u.int_in_range(-4000i32..=4000)?) / 1000.0,
    })
}

fn matrix(u: &mut Unstructured, rows: usize, cols: usize) -> Result<Matrix> {
    let data = (0..rows * cols).map(|_| value(u)).collect::<Result<Vec<_>>>()?;
    Ok(Matrix::new(rows, cols, data).expect("length matches"))
}

/// A size, usually the intended one, sometimes off (to exercise the shape checks).
fn maybe_off(u: &mut Unstructured, n: usize) -> Result<usize> {
    Ok(if u.ratio(1u8, 10u8)? { u.int_in_range(0..=n + 2)? } else { n })
}

fn mask(u: &mut Unstructured, t: usize) -> Result<Mask> {
    let causal = u.arbitrary()?;
    let allowed = if u.arbitrary()? {
        let (r, c) = (maybe_off(u, t)?, maybe_off(u, t)?);
        let data = (0..r * c).map(|_| u.arbitrary()).collect::<Result<Vec<bool>>>()?;
        Some(BoolMatrix::new(r, c, data).expect("length matches"))
    } else {
        None
    };
    Ok(Mask { causal, allowed, window: None })
}

fn expect_range_error(e: &AttentionError) {
    assert!(matches!(e, AttentionError::Range(_)), "the core returned a non-Range error: {e}");
    assert!(!e.message().is_empty());
}

fn assert_finite(m: &Matrix, what: &str) {
    assert!(m.data().iter().all(|x| x.is_finite()), "{what}: a non-finite output from finite input: {m:?}");
}

/// Decodes `data` and checks the invariants above. Panics on a violation.
pub fn check(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let _ = run(&mut u);
}

fn run(u: &mut Unstructured) -> Result<()> {
    match u.int_in_range(0u8..=3)? {
        0 => check_dot_product(u),
        1 => check_multi_head(u),
        2 => check_f32(u),
        _ => check_layer(u),
    }
}

fn check_dot_product(u: &mut Unstructured) -> Result<()> {
    let (t, dk, dv) = (u.int_in_range(0..=12)?, u.int_in_range(0..=8)?, u.int_in_range(0..=8)?);
    let q = matrix(u, t, dk)?;
    let (k_rows, k_cols, v_rows) = (maybe_off(u, t)?, maybe_off(u, dk)?, maybe_off(u, t)?);
    let k = matrix(u, k_rows, k_cols)?;
    let v = matrix(u, v_rows, dv)?;
    let mask = mask(u, t)?;
    match dot_product_attention(&q, &k, &v, &mask) {
        Err(e) => expect_range_error(&e),
        Ok(out) => {
            assert_finite(&out, "dot_product_attention");
            for c in 0..v.cols() {
                let column = (0..v.rows()).map(|j| v.get(j, c));
                let (lo, hi) = column.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)));
                let slack = (v.rows() as f64 + 2.0) * f64::EPSILON * lo.abs().max(hi.abs());
                for i in 0..out.rows() {
                    let x = out.get(i, c);
                    assert!(x == 0.0 || (x >= lo - slack && x <= hi + slack), "out[{i}][{c}] = {x} is outside [{lo}, {hi}]");
                }
            }
        }
    }
    Ok(())
}

fn check_multi_head(u: &mut Unstructured) -> Result<()> {
    let (t, h, d) = (u.int_in_range(0..=8)?, u.int_in_range(0..=4)?, u.int_in_range(0..=4)?);
    let c = h * d;
    let (q_cols, k_rows) = (maybe_off(u, c)?, maybe_off(u, t)?);
    let q = matrix(u, t, q_cols)?;
    let k = matrix(u, k_rows, c)?;
    let v = matrix(u, t, c)?;
    let mut options = MultiHeadOptions::new(h, d);
    if u.arbitrary()? {
        let w_o_rows = maybe_off(u, c)?;
        options.w_o = Some(matrix(u, w_o_rows, c)?);
    }
    options.mask = mask(u, t)?;
    let direct = multi_head_attention(&q, &k, &v, &options);
    let trace = trace_multi_head_attention(&q, &k, &v, &options);
    match (direct, trace) {
        (Err(e), Err(f)) => {
            expect_range_error(&e);
            assert_eq!(e, f, "multi_head_attention and the trace disagree on the error");
        }
        (Ok(out), Ok(trace)) => {
            assert_finite(&out, "multi_head_attention");
            let traced = Matrix::from_rows(&trace.output).expect("rectangular");
            assert_eq!(bits(&traced), bits(&out), "trace output differs from multi_head_attention");
            let identity = Matrix::identity(c);
            let w_o = options.w_o.as_ref().unwrap_or(&identity);
            let replayed = replay(&[("Q", &q), ("K", &k), ("V", &v), ("W_O", w_o)], &trace.steps).expect("the trace replays");
            assert_eq!(bits(&replayed), bits(&out), "replaying the trace gives another output");
        }
        (a, b) => panic!("multi_head_attention gave {a:?} but the trace gave {:?}", b.map(|t| t.output)),
    }
    Ok(())
}

fn check_f32(u: &mut Unstructured) -> Result<()> {
    let (t, dk, dv) = (u.int_in_range(1..=10)?, u.int_in_range(1..=6)?, u.int_in_range(1..=6)?);
    // values inside f32's range, so the cast keeps them finite
    let clamp = |m: Matrix| {
        let data = m.data().iter().map(|&x| x.clamp(f32::MIN as f64, f32::MAX as f64)).collect();
        Matrix::new(m.rows(), m.cols(), data).expect("same length").cast::<f32>()
    };
    let (q, k, v) = (clamp(matrix(u, t, dk)?), clamp(matrix(u, t, dk)?), clamp(matrix(u, t, dv)?));
    let mask = mask(u, t)?;
    match dot_product_attention(&q, &k, &v, &mask) {
        Err(e) => expect_range_error(&e),
        Ok(out) => assert!(out.data().iter().all(|x| x.is_finite()), "f32: a non-finite output from finite input"),
    }
    Ok(())
}

fn check_layer(u: &mut Unstructured) -> Result<()> {
    let (h, d) = (u.int_in_range(1..=4)?, u.int_in_range(1..=4)?);
    let c = h * d;
    let number_of_heads = if u.ratio(1u8, 12u8)? { u.int_in_range(0..=9)? } else { h };
    let dropout = *u.choose(&[0.0, 0.0, 0.5, 0.999])?;
    let seed: u64 = u.arbitrary()?;
    let built = match u.int_in_range(0u8..=2)? {
        0 => MultiHeadAttention::new(&LayerConfig { bias: u.arbitrary()?, dropout, seed, ..LayerConfig::new(c, number_of_heads) }),
        1 => {
            let cols = maybe_off(u, 3 * c)?;
            let w_qkv = matrix(u, c, cols)?;
            let rows = maybe_off(u, c)?;
            let w_o = matrix(u, rows, c)?;
            let biases = if u.arbitrary()? { let n = maybe_off(u, 3 * c)?; Some((vector(u, n)?, vector(u, c)?)) } else { None };
            MultiHeadAttention::from_fused_qkv(&w_qkv, biases.as_ref().map(|b| &b.0[..]), &w_o, biases.as_ref().map(|b| &b.1[..]), number_of_heads, dropout, seed)
        }
        _ => {
            let rows = maybe_off(u, 3 * c)?;
            let in_proj = matrix(u, rows, c)?;
            let out_proj = matrix(u, c, c)?;
            let biases = if u.arbitrary()? { let n = maybe_off(u, c)?; Some((vector(u, 3 * c)?, vector(u, n)?)) } else { None };
            MultiHeadAttention::from_pytorch(&in_proj, biases.as_ref().map(|b| &b.0[..]), &out_proj, biases.as_ref().map(|b| &b.1[..]), number_of_heads, dropout, seed)
        }
    };
    let mut layer = match built {
        Ok(layer) => layer,
        Err(e) => {
            expect_range_or_type_error(&e);
            return Ok(());
        }
    };
    for _ in 0..u.int_in_range(1..=2)? {
        let batched = u.arbitrary()?;
        let b = if batched { u.int_in_range(1..=3)? } else { 1 };
        let (t_q, t_k) = (u.int_in_range(1..=6)?, u.int_in_range(1..=6)?);
        let items = |u: &mut Unstructured, t: usize| -> Result<Vec<Matrix>> {
            let n = maybe_off(u, b)?.max(1);
            (0..n).map(|_| { let (r, k) = (maybe_off(u, t)?, maybe_off(u, c)?); matrix(u, r, k) }).collect()
        };
        let query = items(u, t_q)?;
        let key = items(u, t_k)?;
        let value = items(u, t_k)?;
        let need_weights = u.arbitrary()?;
        let options = ForwardOptions {
            mask: mask_of(u, t_q, t_k)?,
            need_weights,
            average_weights: need_weights && u.arbitrary()?,
            training: u.arbitrary()?,
            batched,
        };
        match layer.forward(&query, &key, &value, &options) {
            Err(e) => expect_range_error(&e),
            Ok(out) => {
                for m in &out.output {
                    assert_finite(m, "layer forward output");
                }
                for m in out.weights.iter().flatten().flatten() {
                    assert_finite(m, "layer forward weights");
                }
                let grad = items(u, t_q)?;
                match layer.backward(&grad, batched) {
                    Err(e) => expect_range_error(&e),
                    Ok(grads) => {
                        for m in grads.query.iter().chain(&grads.key).chain(&grads.value) {
                            assert_finite(m, "layer input gradient");
                        }
                        let params = layer.grads().expect("grads after a successful backward");
                        for (name, data) in params.tensors() {
                            assert!(data.iter().all(|x| x.is_finite()), "grads().{name}: a non-finite gradient from finite input");
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

fn vector(u: &mut Unstructured, n: usize) -> Result<Vec<f64>> {
    (0..n).map(|_| value(u)).collect()
}

/// A mask for T_q×T_k scores (sometimes of the wrong shape).
fn mask_of(u: &mut Unstructured, t_q: usize, t_k: usize) -> Result<Mask> {
    let causal = u.arbitrary()?;
    let allowed = if u.arbitrary()? {
        let (r, c) = (maybe_off(u, t_q)?, maybe_off(u, t_k)?);
        let data = (0..r * c).map(|_| u.arbitrary()).collect::<Result<Vec<bool>>>()?;
        Some(BoolMatrix::new(r, c, data).expect("length matches"))
    } else {
        None
    };
    Ok(Mask { causal, allowed, window: None })
}

/// Constructors refuse bad shapes with a RangeError and a missing half of a bias pair with a TypeError.
fn expect_range_or_type_error(e: &AttentionError) {
    assert!(matches!(e, AttentionError::Range(_) | AttentionError::Type(_)), "a layer constructor returned a State error: {e}");
    assert!(!e.message().is_empty());
}

fn bits(m: &Matrix) -> Vec<u64> {
    m.data().iter().map(|x| x.to_bits()).collect()
}
