//! The native side of `make bench`: the same Rust core as the wasm build, compiled for this
//! machine, on the same seeded inputs as `tests/bench/bench.mjs`.
//!
//! `cargo run --release --example bench -- [--smoke] [--out DIR]` prints one JSON object per
//! line: `{ "case", "medianMs", "runs" }`; with `--out DIR` it also writes each case's output as
//! little-endian f32 to `DIR/<case>.f32` so the harness can check that it agrees.

use std::time::Instant;

use attention_lab::engine::Batch;
use attention_lab::layer::{Biases, ForwardOptions, MultiHeadAttention, Weights};
use attention_lab::mask::Mask;
use attention_lab::matrix::Matrix;
use attention_lab::multi_head::{multi_head_attention_batch, HeadSplit};

/// mulberry32, the generator the JS harness uses too: values in [-1, 1) times `scale`.
fn seeded(len: usize, seed: u32, scale: f32) -> Vec<f32> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state.wrapping_add(0x6D2B_79F5);
            let mut z = state;
            z = (z ^ (z >> 15)).wrapping_mul(z | 1);
            z ^= z.wrapping_add((z ^ (z >> 7)).wrapping_mul(z | 61));
            z ^= z >> 14;
            ((z >> 8) as f32 / 16_777_216.0 * 2.0 - 1.0) * scale
        })
        .collect()
}

struct Case {
    name: &'static str,
    t: usize,
    h: usize,
    c: usize,
    projections: bool,
    runs: usize,
}

/// The inputs of a case, generated exactly as `inputs()` in bench.mjs does.
struct Inputs {
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    /// W_Q, W_K, W_V, W_O (C, C) and their biases (C), when the case has projections.
    weights: Vec<Vec<f32>>,
    biases: Vec<Vec<f32>>,
}

fn inputs(case: &Case) -> Inputs {
    let (t, c) = (case.t, case.c);
    if case.name == "challenge" {
        let q = vec![1.0, 2.0, 3.0, 4.0];
        return Inputs { k: q.clone(), q, v: vec![5.0, 6.0, 7.0, 8.0], weights: vec![], biases: vec![] };
    }
    let q = seeded(t * c, 1, 1.0);
    if case.projections {
        // self-attention of X: Q = K = V = X before the projections
        let w_scale = 1.0 / (c as f32).sqrt();
        let weights = (0..4).map(|i| seeded(c * c, 10 + i, w_scale)).collect();
        let biases = (0..4).map(|i| seeded(c, 20 + i, 0.1)).collect();
        return Inputs { k: q.clone(), v: q.clone(), q, weights, biases };
    }
    Inputs { q, k: seeded(t * c, 2, 1.0), v: seeded(t * c, 3, 1.0), weights: vec![], biases: vec![] }
}

/// One forward pass: multi-head attention, or with projections the `MultiHeadAttention` layer's
/// f32 forward (Q·W_Q + b_Q, K·W_K + b_K, V·W_V + b_V, attention, then ·W_O + b_O), as the wasm
/// build runs it for Float32Array input.
fn forward(case: &Case, x: &Inputs, out: &mut Vec<f32>, scratch: &mut Scratch) {
    let split = HeadSplit { number_of_heads: case.h, head_dimensions: case.c / case.h };
    let t = case.t;
    match &mut scratch.layer {
        None => {
            let one = |data| Batch::new(data, 1, t, case.c);
            *out = multi_head_attention_batch(one(&x.q), one(&x.k), one(&x.v), split, None, &Mask::none()).expect("the f32 attention");
        }
        Some(layer) => {
            let input = Batch::new(&x.q, 1, t, case.c);
            *out = layer.forward_batch(input, input, input, &ForwardOptions::default()).expect("the layer's forward").output;
        }
    }
}

/// The layer with the case's weights and biases (f32 values, held in f64 by the layer).
fn layer(case: &Case, x: &Inputs) -> MultiHeadAttention {
    let c = case.c;
    let w = |i: usize| Matrix::new(c, c, x.weights[i].iter().map(|&v| v as f64).collect()).expect("C×C");
    let b = |i: usize| x.biases[i].iter().map(|&v| v as f64).collect::<Vec<f64>>();
    let weights = Weights { w_q: w(0), w_k: w(1), w_v: w(2), w_o: w(3), biases: Some(Biases { b_q: b(0), b_k: b(1), b_v: b(2), b_o: b(3) }) };
    MultiHeadAttention::from_weights(weights, case.h, 0.0, 0).expect("a valid layer")
}

struct Scratch {
    layer: Option<MultiHeadAttention>,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let smoke = args.iter().any(|a| a == "--smoke");
    let out_dir = args.iter().position(|a| a == "--out").and_then(|i| args.get(i + 1)).cloned();
    let runs = |full: usize| if smoke { 1 } else { full };
    let mut cases = vec![
        Case { name: "challenge", t: 2, h: 2, c: 2, projections: false, runs: runs(2000) },
        Case { name: "T16", t: 16, h: 4, c: 64, projections: false, runs: runs(500) },
        Case { name: "T128proj", t: 128, h: 12, c: 768, projections: true, runs: runs(30) },
        Case { name: "T1024", t: 1024, h: 12, c: 768, projections: false, runs: runs(7) },
        Case { name: "T8192", t: 8192, h: 12, c: 768, projections: false, runs: runs(1) },
    ];
    if smoke {
        // the smoke run checks agreement on small shapes only
        cases = vec![
            Case { name: "challenge", t: 2, h: 2, c: 2, projections: false, runs: 1 },
            Case { name: "T16", t: 16, h: 4, c: 64, projections: false, runs: 1 },
            Case { name: "T80proj", t: 80, h: 4, c: 64, projections: true, runs: 1 },
        ];
    }
    for case in &cases {
        let x = inputs(case);
        let len = case.t * case.c;
        let mut out = vec![0.0f32; len];
        let mut scratch = Scratch { layer: case.projections.then(|| layer(case, &x)) };
        if case.projections {
            forward(case, &x, &mut out, &mut scratch); // packs the layer's weights, as bench.mjs does
        }
        // warm-up, then timed runs
        let warmups = if smoke { 0 } else { (case.runs / 5).clamp(1, 50) };
        for _ in 0..warmups {
            forward(case, &x, &mut out, &mut scratch);
        }
        let mut times = Vec::with_capacity(case.runs);
        for _ in 0..case.runs {
            let start = Instant::now();
            forward(case, &x, &mut out, &mut scratch);
            times.push(start.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(|a, b| a.total_cmp(b));
        let median = times[times.len() / 2];
        println!("{{\"case\":\"{}\",\"medianMs\":{median},\"runs\":{}}}", case.name, case.runs);
        if let Some(dir) = &out_dir {
            let bytes: Vec<u8> = out.iter().flat_map(|x| x.to_le_bytes()).collect();
            std::fs::write(format!("{dir}/{}.f32", case.name), bytes).expect("writing the output file");
        }
    }
}
