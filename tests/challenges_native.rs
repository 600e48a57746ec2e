//! The challenges' tests.json files against the Rust core directly (plain `cargo test`): every
//! fixed case within the stated tolerance, every error case with the stated error class and
//! message prefix. The wasm twin of this file, tests/challenges.rs, goes through the JS API.

use attention_lab::engine::{Batch, Rope};
use attention_lab::grouped_query::{grouped_query_attention, rotary_embedding_batch};
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
    ("07-rope", include_str!("../challenges/07-rope/tests.json")),
    ("08-sliding-window", include_str!("../challenges/08-sliding-window/tests.json")),
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

/// The package call for a case, as (export, arguments): tests.json's `function` with the case's
/// arguments, or its `reference` (challenges/README.md): `reference.function` with `reference.options`
/// and the `columnsOf` column counts merged into argument `optionsArgument`. (The same as in
/// tests/challenges.rs.)
fn reference_call(tests: &Value, args: &[Value]) -> (String, Vec<Value>) {
    let Some(reference) = tests.get("reference") else {
        return (tests["function"].as_str().expect("function").to_owned(), args.to_vec());
    };
    let at = reference["optionsArgument"].as_u64().expect("reference.optionsArgument") as usize;
    let mut full = args.to_vec();
    if full.len() <= at {
        full.resize(at + 1, Value::Null);
    }
    let mut options = match &full[at] {
        Value::Object(o) => o.clone(),
        Value::Null => serde_json::Map::new(),
        other => panic!("the options argument {other} is not an object"),
    };
    for (key, value) in reference["options"].as_object().expect("reference.options") {
        options.insert(key.clone(), value.clone());
    }
    for (key, index) in reference.get("columnsOf").and_then(Value::as_object).into_iter().flatten() {
        let matrix = &args[index.as_u64().expect("a column index") as usize];
        let columns = matrix[0].as_array().expect("a matrix argument").len();
        options.insert(key.clone(), serde_json::json!(columns));
    }
    full[at] = Value::Object(options);
    (reference["function"].as_str().expect("reference.function").to_owned(), full)
}

/// Why the core cannot be called with these arguments at all, or None. Options the core takes as
/// `usize` or `f64` (an offset of −1 or 1.5, a window of 0 or "2", a base "10000") are refused by
/// the JS API while it reads them, before the core: tests/challenges.rs checks those cases.
fn js_only(function: &str, args: &[Value]) -> Option<String> {
    let o = args.last()?;
    let not_count = |key: &str, min: u64| o.get(key).is_some_and(|v| v.as_u64().is_none_or(|n| n < min));
    match function {
        "rotaryEmbedding" if o.get("base").is_some_and(|b| !b.is_number()) => Some("base is not a number".into()),
        "rotaryEmbedding" if not_count("offset", 0) => Some("offset is not an integer ≥ 0".into()),
        "groupedQueryAttention" if not_count("window", 1) => Some("window is not a positive integer".into()),
        _ => None,
    }
}

/// Runs the core function `function` (see [`reference_call`]) with the arguments.
fn call(function: &str, args: &[Value]) -> Result<Matrix, AttentionError> {
    let count = |o: &Value, key: &str| o[key].as_u64().unwrap_or_else(|| panic!("options.{key}")) as usize;
    if function == "rotaryEmbedding" {
        let (x, o) = (matrix(&args[0]), &args[1]);
        let split = HeadSplit { number_of_heads: count(o, "numberOfHeads"), head_dimensions: count(o, "headDimensions") };
        let rope = Rope { base: o.get("base").map_or(Rope::default().base, |b| b.as_f64().expect("a number")) };
        let offset = o.get("offset").map_or(0, |_| count(o, "offset"));
        let out = rotary_embedding_batch(Batch::of(&x), split, rope, offset)?;
        return Matrix::new(x.rows(), x.cols(), out); // (T, C), as X
    }
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
            let mut mask = mask(Some(o));
            mask.window = o.get("window").map(|_| count(o, "window"));
            grouped_query_attention(&q, &k, &v, split, count(o, "numberOfKVHeads"), o.get("W_O").map(matrix).as_ref(), &mask)
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
    let (mut checked, mut skipped) = (0, Vec::new());
    for (folder, tests) in tests() {
        for case in tests["errors"].as_array().expect("errors") {
            let name = case["name"].as_str().expect("name");
            let (function, args) = reference_call(&tests, case["args"].as_array().expect("args"));
            if let Some(why) = js_only(&function, &args) {
                // only the JS API's reading of an option can refuse these: its message names the option
                assert!(case["throws"]["messageStartsWith"].as_str().expect("prefix").starts_with("options."), "{folder} / {name}");
                skipped.push(format!("{folder} / {name}: {why}"));
                continue;
            }
            checked += 1;
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
    eprintln!("{checked} error cases checked against the core; {} read by the JS API only:\n{}", skipped.len(), skipped.join("\n"));
    assert!(checked >= 15 && skipped.len() <= 6, "{checked} checked, {} skipped", skipped.len());
}
