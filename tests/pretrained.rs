//! The core's forward of GPT-2 and Llama checkpoints against the independent float64 oracle
//! (tests/oracle/pretrained.mjs) on random checkpoints written in the Hugging Face layout by
//! tests/pretrained/checkpoint.mjs. `node tests/pretrained/fixtures.mjs` writes the cases and the
//! oracle's answers (Node is required, as for the rest of `make test`).
//!
//! f64: logits, every layer's attention weights and every hidden state within 1e-10 of the
//! oracle's, relative to max(|oracle|, 1); greedy generation gives the oracle's tokens.
//! f32: the same within 1e-4 (f32 weights are stored exactly; the rounding is the f32 arithmetic's).

#![cfg(not(target_arch = "wasm32"))]

use attention_lab::layer::LayerKernel;
use attention_lab::pretrained::json::{parse, Json};
use attention_lab::pretrained::model::Pretrained;
use attention_lab::real::Real;
use std::path::PathBuf;
use std::process::Command;

fn fixtures(precision: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("pretrained-fixtures-{precision}"));
    let status = Command::new("node")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/pretrained/fixtures.mjs"))
        .arg(&dir)
        .status()
        .expect("node runs tests/pretrained/fixtures.mjs");
    assert!(status.success(), "the fixtures script failed");
    dir
}

fn numbers(v: &Json) -> Vec<f64> {
    match v {
        Json::Array(items) => items.iter().flat_map(numbers).collect(),
        Json::Number(x) => vec![*x],
        other => panic!("expected numbers, found {}", other.kind()),
    }
}

fn list(v: Option<&Json>) -> &[Json] {
    match v {
        Some(Json::Array(items)) => items,
        _ => panic!("expected an array"),
    }
}

/// The largest |got − want| / max(|want|, 1), checked against `bound`.
fn agree<F: Real>(what: &str, got: &[F], want: &[f64], bound: f64) -> f64 {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let mut worst = 0f64;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let err = (g.to_f64() - w).abs() / w.abs().max(1.0);
        assert!(err <= bound, "{what}[{i}]: {} vs the oracle's {w} (error {err:e} > {bound:e})", g.to_f64());
        worst = worst.max(err);
    }
    worst
}

fn run<F: LayerKernel>(bound: f64) -> f64 {
    let dir = fixtures(std::any::type_name::<F>());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok()?.strip_suffix(".json").map(String::from))
        .collect();
    names.sort();
    assert_eq!(names.len(), 7, "the fixtures script's cases");
    let mut worst = 0f64;
    for name in &names {
        let case = parse(&std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap()).unwrap();
        let bytes = std::fs::read(dir.join(format!("{name}.safetensors"))).unwrap();
        let mut model = Pretrained::<F>::load(case.get("config").unwrap(), &bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let rows = list(case.get("tokens"));
        let tokens: Vec<u32> = rows.iter().flat_map(|r| numbers(r)).map(|x| x as u32).collect();
        let (b, t) = (rows.len(), tokens.len() / rows.len());
        let out = model.forward(&tokens, b, t, true, true).unwrap();
        worst = worst.max(agree(&format!("{name} logits"), &out.logits, &numbers(case.get("logits").unwrap()), bound));
        let hidden = out.hidden.unwrap();
        let want_hidden = list(case.get("hidden"));
        assert_eq!(hidden.len(), want_hidden.len(), "{name}: L + 1 hidden states");
        for (l, (h, w)) in hidden.iter().zip(want_hidden).enumerate() {
            worst = worst.max(agree(&format!("{name} hidden[{l}]"), h, &numbers(w), bound));
        }
        let weights = out.weights.unwrap();
        for (l, (p, w)) in weights.iter().zip(list(case.get("weights"))).enumerate() {
            worst = worst.max(agree(&format!("{name} weights[{l}]"), p, &numbers(w), bound));
        }
        let prompt: Vec<u32> = numbers(case.get("prompt").unwrap()).iter().map(|&x| x as u32).collect();
        let max_new = numbers(case.get("maxNewTokens").unwrap())[0] as usize;
        let greedy: Vec<u32> = numbers(case.get("greedy").unwrap()).iter().map(|&x| x as u32).collect();
        assert_eq!(model.generate_greedy(&prompt, max_new).unwrap(), greedy, "{name}: greedy tokens");
    }
    worst
}

#[test]
fn f64_forward_agrees_with_the_oracle() {
    let worst = run::<f64>(1e-10);
    println!("f64: largest error against the oracle {worst:e}");
}

#[test]
fn f32_forward_agrees_with_the_oracle() {
    let worst = run::<f32>(1e-4);
    println!("f32: largest error against the oracle {worst:e}");
}
