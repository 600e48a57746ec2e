//! The challenges' tests.json files against the Rust core directly (plain `cargo test`): every
//! fixed case within the stated tolerance, every error case with the stated error class and
//! message prefix. The wasm twin of this file, tests/challenges.rs, goes through the JS API.

use attention_lab::grouped_query::grouped_query_attention;
use attention_lab::layer::{projected_self_attention, ProjectedOptions};
use attention_lab::{dot_product_attention, multi_head_attention, AttentionError, HeadSplit, Mask, Matrix, MultiHeadOptions};
use serde_json::Value;

const CHALLENGES: &[(&str, &str)] = &[
    ("01-dot-product-attention", include_str!("../challenges/01-dot-product-attention/tests.json")),
    ("02-multi-head-attention", include_str!("../challenges/02-multi-head-attention/tests.json")),
    ("03-causal-mask", include_str!("../challenges/03-causal-mask/tests.json")),
    ("04-learned-projections", include_str!("../challenges/04-learned-projections/tests.json")),
    ("05-kv-cache", include_str!("../challenges/05-kv-cache/tests.json")),
    ("06-grouped-query", include_str!("../challenges/06-grouped-query/tests.json")),
];

fn matrix(value: &Value) -> Matrix {
    let rows: Vec<Vec<f64>> = serde_json::from_value(value.clone()).expect("a number[][]");
    Matrix::from_rows(&rows).expect("a rectangular matrix")
}

/// The `{ causal? }` part of an options object (absent means no mask).
fn mask(options: Option<&Value>) -> Mask {
    match options.and_then(|o| o.get("causal")).and_then(Value::as_bool) {
        Some(true) => Mask::causal(),
        _ => Mask::none(),
    }
}

/// Runs the core function that tests.json names, with the case's arguments.
fn call(function: &str, args: &[Value]) -> Result<Matrix, AttentionError> {
    let count = |o: &Value, key: &str| o[key].as_u64().unwrap_or_else(|| panic!("options.{key}")) as usize;
    if function == "projectedSelfAttention" {
        let o = &args[1];
        let options = ProjectedOptions {
            split: HeadSplit { number_of_heads: count(o, "numberOfHeads"), head_dimensions: count(o, "headDimensions") },
            w_q: matrix(&o["W_Q"]),
            w_k: matrix(&o["W_K"]),
            w_v: matrix(&o["W_V"]),
            w_o: matrix(&o["W_O"]),
            mask: mask(Some(o)),
        };
        return projected_self_attention(&matrix(&args[0]), options);
    }
    let (q, k, v) = (matrix(&args[0]), matrix(&args[1]), matrix(&args[2]));
    match function {
        "dotProductAttention" => dot_product_attention(&q, &k, &v, &mask(args.get(3))),
        "groupedQueryAttention" => {
            let o = &args[3];
            let split = HeadSplit { number_of_heads: count(o, "numberOfHeads"), head_dimensions: count(o, "headDimensions") };
            grouped_query_attention(&q, &k, &v, split, count(o, "numberOfKVHeads"), o.get("W_O").map(matrix).as_ref(), &mask(Some(o)))
        }
        "multiHeadAttention" => {
            let o = &args[3];
            let mut options = MultiHeadOptions::new(count(o, "numberOfHeads"), count(o, "headDimensions"));
            options.w_o = o.get("W_O").map(matrix);
            options.mask = mask(Some(o));
            multi_head_attention(&q, &k, &v, &options)
        }
        other => panic!("unknown function {other}"),
    }
}

/// The reference's function and arguments for a case (challenges/README.md, `reference`): the
/// function tests.json names with the same arguments, or `reference.function` with
/// `reference.options` merged into the last argument (the options object).
fn reference_call(tests: &Value, args: &[Value]) -> (String, Vec<Value>) {
    let Some(reference) = tests.get("reference") else {
        return (tests["function"].as_str().expect("function").to_owned(), args.to_vec());
    };
    let mut args = args.to_vec();
    let last = args.last_mut().and_then(Value::as_object_mut).expect("a case with a reference ends with an options object");
    for (key, value) in reference["options"].as_object().expect("reference.options") {
        last.insert(key.clone(), value.clone());
    }
    (reference["function"].as_str().expect("reference.function").to_owned(), args)
}

fn tests() -> impl Iterator<Item = (&'static str, Value)> {
    CHALLENGES.iter().map(|(folder, text)| {
        let tests: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{folder}/tests.json: {e}"));
        assert_eq!(tests["challenge"], *folder);
        (*folder, tests)
    })
}

#[test]
fn the_core_passes_every_fixed_case() {
    let mut count = 0;
    for (folder, tests) in tests() {
        let tolerance = tests["tolerance"].as_f64().expect("tolerance");
        assert!(tolerance <= 1e-9, "{folder}: tolerance {tolerance}");
        for case in tests["fixed"].as_array().expect("fixed") {
            let name = case["name"].as_str().expect("name");
            let (function, args) = reference_call(&tests, case["args"].as_array().expect("args"));
            let output = call(&function, &args).unwrap_or_else(|e| panic!("{folder} / {name}: {e}"));
            let expected = matrix(&case["expected"]);
            assert_eq!(output.shape(), expected.shape(), "{folder} / {name}");
            for (i, (&a, &e)) in output.data().iter().zip(expected.data()).enumerate() {
                assert!(a.is_finite() && (a - e).abs() <= tolerance * e.abs().max(1.0), "{folder} / {name}: element {i} is {a}, expected {e}");
            }
            count += 1;
        }
    }
    assert!(count >= 15, "only {count} fixed cases");
}

#[test]
fn the_core_fails_every_error_case_with_the_stated_class_and_message() {
    for (folder, tests) in tests() {
        for case in tests["errors"].as_array().expect("errors") {
            let name = case["name"].as_str().expect("name");
            let (function, args) = reference_call(&tests, case["args"].as_array().expect("args"));
            let error = call(&function, &args).expect_err(name);
            let class = match error {
                AttentionError::Type(_) => "TypeError",
                AttentionError::Range(_) => "RangeError",
                AttentionError::State(_) => "Error",
            };
            assert_eq!(class, case["throws"]["name"], "{folder} / {name}: {error}");
            let prefix = case["throws"]["messageStartsWith"].as_str().expect("prefix");
            assert!(error.message().starts_with(prefix), "{folder} / {name}: {error}");
            assert_eq!(error.message(), case["throws"]["referenceMessage"], "{folder} / {name}: core and JS messages agree");
        }
    }
}
