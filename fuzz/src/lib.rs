//! The core fuzz check: decode arbitrary bytes into shapes, values, masks and options, call the
//! core, and panic (which the fuzzer reports) when an invariant breaks:
//!
//! 1. no panic inside the core, whatever the shapes (mismatched ones included);
//! 2. errors are `Range` errors (the core never produces `Type` or `State` errors);
//! 3. from finite inputs, an `Ok` output is entirely finite (overflow must be a `Range` error);
//! 4. dotProductAttention outputs lie within their V column's range (convex combinations);
//! 5. the trace's output equals multiHeadAttention's bit for bit, and replaying its steps does too;
//! 6. f32 never panics and is finite on finite f32 input whenever it returns `Ok`.

use arbitrary::{Result, Unstructured};
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
    Ok(Mask { causal, allowed })
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
    match u.int_in_range(0u8..=2)? {
        0 => check_dot_product(u),
        1 => check_multi_head(u),
        _ => check_f32(u),
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

fn bits(m: &Matrix) -> Vec<u64> {
    m.data().iter().map(|x| x.to_bits()).collect()
}
