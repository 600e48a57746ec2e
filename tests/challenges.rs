//! The challenges' tests.json files, run against the exported JS API: the reference must pass
//! every fixed case within the file's tolerance, throw the stated error class and message prefix
//! for every error case, and accept every input the random-case recipe can produce.
//! `wasm-pack test --node`, `wasm-pack test --headless --chrome`.

#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use attention_lab::wasm::attention::{dot_product_attention, multi_head_attention};
use attention_lab::wasm::grouped::{grouped_query_attention, rotary_embedding};
use attention_lab::wasm::projected::projected_self_attention;
use attention_lab::wasm::transformer::JsTransformer;
use js_sys::{Array, Reflect};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

/// Every challenge's tests.json, by folder name.
const CHALLENGES: &[(&str, &str)] = &[
    ("01-dot-product-attention", include_str!("../challenges/01-dot-product-attention/tests.json")),
    ("02-multi-head-attention", include_str!("../challenges/02-multi-head-attention/tests.json")),
    ("03-causal-mask", include_str!("../challenges/03-causal-mask/tests.json")),
    ("04-learned-projections", include_str!("../challenges/04-learned-projections/tests.json")),
    ("05-kv-cache", include_str!("../challenges/05-kv-cache/tests.json")),
    ("06-grouped-query", include_str!("../challenges/06-grouped-query/tests.json")),
    ("07-rope", include_str!("../challenges/07-rope/tests.json")),
    ("08-sliding-window", include_str!("../challenges/08-sliding-window/tests.json")),
    ("09-attention-in-a-model", include_str!("../challenges/09-attention-in-a-model/tests.json")),
    ("10-induction-head", include_str!("../challenges/10-induction-head/tests.json")),
    ("11-find-the-circuit", include_str!("../challenges/11-find-the-circuit/tests.json")),
];

/// A challenge graded on a model's behaviour (challenge 10: `"kind": "weights"`) has no fixed, error
/// or random cases; tests/challenges_native.rs and tests/js/challenges.test.mjs grade its weights.
fn graded_by_model(tests: &Value) -> bool {
    tests.get("kind").and_then(Value::as_str) == Some("weights")
}

const SCHEMA: &str = "attention-lab/challenge-tests/1";

fn parse(folder: &str, text: &str) -> Value {
    let tests: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{folder}/tests.json: {e}"));
    assert_eq!(tests["schema"], SCHEMA, "{folder}");
    assert_eq!(tests["challenge"], folder, "{folder}");
    tests
}

/// A JSON value as the same JS value (objects stay plain objects).
fn to_js(value: &Value) -> JsValue {
    js_sys::JSON::parse(&value.to_string()).expect("serde_json writes valid JSON")
}

/// The package call for a case, as (export, arguments): tests.json's `function` with the case's
/// arguments, or its `reference` (challenges/README.md): `reference.function` with `reference.options`
/// and the `columnsOf` column counts merged into argument `optionsArgument`; a `transformer` reference
/// (challenge 11) is `Transformer.<method>` with the case's arguments.
fn reference_call(tests: &Value, args: &[Value]) -> (String, Vec<Value>) {
    if let Some(transformer) = tests.get("transformer") {
        return (format!("Transformer.{}", transformer["method"].as_str().expect("transformer.method")), args.to_vec());
    }
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

/// Challenge 11's reference (www/src/cases.js's transformerReference): the exported Transformer, float64,
/// two layers, embedDim the row count of `weights.layers[0].W_Q`, numHeads `options.numberOfHeads`, holding
/// `weights.layers` (setWeights); the answer is the numberOfHeads × numberOfHeads matrix [0][i][1][j] of
/// compositionScores()'s `options.kind`.
fn composition_scores(weights: &Value, options: &Value) -> Result<JsValue, JsValue> {
    let c = weights["layers"][0]["W_Q"].as_array().expect("layers[0].W_Q").len();
    let config = serde_json::json!({ "vocabSize": 2, "contextLength": 2, "embedDim": c, "numHeads": options["numberOfHeads"], "numLayers": 2, "dtype": "float64" });
    let mut model = JsTransformer::new(to_js(&config))?;
    model.set_weights(to_js(&serde_json::json!({ "layers": weights["layers"] })))?;
    let scores = Reflect::get(&model.composition_scores()?, &JsValue::from_str(options["kind"].as_str().expect("options.kind")))?;
    let layer_0 = Array::from(&Array::from(&scores).get(0));
    Ok(layer_0.iter().map(|head| Array::from(&head).get(1)).collect::<Array>().into())
}

/// Calls the reference export `function` (see [`reference_call`]) with the arguments.
fn call(function: &str, args: &[Value]) -> Result<JsValue, JsValue> {
    let arg = |i: usize| args.get(i).map(to_js).unwrap_or(JsValue::UNDEFINED);
    match function {
        "Transformer.compositionScores" => {
            assert!(args.len() == 2, "compositionScores takes (weights, options)");
            composition_scores(&args[0], &args[1])
        }
        "dotProductAttention" => {
            assert!(args.len() <= 4, "dotProductAttention takes at most 4 arguments");
            dot_product_attention(arg(0), arg(1), arg(2), arg(3))
        }
        "multiHeadAttention" => {
            assert!(args.len() <= 5, "multiHeadAttention takes at most 5 arguments");
            multi_head_attention(arg(0), arg(1), arg(2), arg(3), arg(4))
        }
        "groupedQueryAttention" => {
            assert!(args.len() <= 4, "groupedQueryAttention takes at most 4 arguments");
            grouped_query_attention(arg(0), arg(1), arg(2), arg(3))
        }
        "projectedSelfAttention" => {
            assert!(args.len() <= 2, "projectedSelfAttention takes at most 2 arguments");
            projected_self_attention(arg(0), arg(1))
        }
        "rotaryEmbedding" => {
            assert!(args.len() <= 2, "rotaryEmbedding takes at most 2 arguments");
            rotary_embedding(arg(0), arg(1))
        }
        other => panic!("tests.json names {other}, which the reference does not export"),
    }
}

fn rows_of(value: &JsValue) -> Vec<Vec<f64>> {
    Array::from(value)
        .iter()
        .map(|row| Array::from(&row).iter().map(|x| x.as_f64().expect("a number")).collect())
        .collect()
}

fn json_rows(value: &Value) -> Vec<Vec<f64>> {
    value
        .as_array()
        .expect("a matrix")
        .iter()
        .map(|row| row.as_array().expect("a row").iter().map(|x| x.as_f64().expect("a number")).collect())
        .collect()
}

/// The schema's comparison: |a − e| ≤ tolerance · max(1, |e|), same shapes, finite values.
fn mismatch(actual: &[Vec<f64>], expected: &[Vec<f64>], tolerance: f64) -> Option<String> {
    if actual.len() != expected.len() || actual.iter().zip(expected).any(|(a, e)| a.len() != e.len()) {
        return Some(format!("shape differs: got {actual:?}, expected {expected:?}"));
    }
    for (r, (a_row, e_row)) in actual.iter().zip(expected).enumerate() {
        for (c, (&a, &e)) in a_row.iter().zip(e_row).enumerate() {
            if !a.is_finite() || (a - e).abs() > tolerance * e.abs().max(1.0) {
                return Some(format!("[{r}][{c}] is {a}, expected {e} (tolerance {tolerance})"));
            }
        }
    }
    None
}

#[wasm_bindgen_test]
fn the_reference_passes_every_fixed_case() {
    let mut failures = Vec::new();
    let mut count = 0;
    for (folder, text) in CHALLENGES {
        let tests = parse(folder, text);
        let tolerance = tests["tolerance"].as_f64().expect("tolerance");
        assert!(tolerance > 0.0 && tolerance <= 1e-9, "{folder}: tolerance {tolerance} is looser than 1e-9");
        let fixed = tests["fixed"].as_array().expect("fixed");
        assert!(!fixed.is_empty() || graded_by_model(&tests), "{folder} has no fixed case");
        for case in fixed {
            count += 1;
            let name = case["name"].as_str().expect("name");
            let (function, args) = reference_call(&tests, case["args"].as_array().expect("args"));
            match call(&function, &args) {
                Ok(output) => {
                    if let Some(why) = mismatch(&rows_of(&output), &json_rows(&case["expected"]), tolerance) {
                        failures.push(format!("{folder} / {name}: {why}"));
                    }
                }
                Err(e) => failures.push(format!("{folder} / {name}: threw {e:?}")),
            }
        }
    }
    assert!(failures.is_empty(), "{} of {count} fixed cases fail:\n{}", failures.len(), failures.join("\n"));
}

#[wasm_bindgen_test]
fn the_reference_throws_the_stated_error_for_every_error_case() {
    for (folder, text) in CHALLENGES {
        let tests = parse(folder, text);
        let errors = tests["errors"].as_array().expect("errors");
        assert!(!errors.is_empty() || graded_by_model(&tests), "{folder} has no error case");
        for case in errors {
            let name = case["name"].as_str().expect("name");
            let want_class = case["throws"]["name"].as_str().expect("throws.name");
            let want_prefix = case["throws"]["messageStartsWith"].as_str().expect("throws.messageStartsWith");
            let (function, args) = reference_call(&tests, case["args"].as_array().expect("args"));
            let thrown = call(&function, &args)
                .expect_err(&format!("{folder} / {name}: the reference did not throw"));
            let error: js_sys::Error = thrown.dyn_into().unwrap_or_else(|v| panic!("{folder} / {name}: threw a non-Error {v:?}"));
            let (class, message) = (String::from(error.name()), String::from(error.message()));
            assert_eq!(class, want_class, "{folder} / {name}: {message}");
            assert!(message.starts_with(want_prefix), "{folder} / {name}: message {message:?} does not start with {want_prefix:?}");
        }
    }
}

#[wasm_bindgen_test]
fn the_heads_up_known_values_are_in_challenge_02() {
    let tests = parse(CHALLENGES[1].0, CHALLENGES[1].1);
    let case = tests["fixed"]
        .as_array()
        .expect("fixed")
        .iter()
        .find(|c| c["args"][3] == serde_json::json!({ "numberOfHeads": 2, "headDimensions": 1 }) && c["args"][0] == serde_json::json!([[1, 2], [3, 4]]))
        .expect("challenge 02 has the heads-up example");
    // The challenge's published values, to 6 decimals.
    let published = vec![vec![6.761594, 7.964028], vec![6.995055, 7.999329]];
    assert_eq!(mismatch(&json_rows(&case["expected"]), &published, 1e-6), None);
}

/// A small deterministic generator (xorshift64*) for the random-case recipe.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn int(&mut self, min: i64, max: i64) -> i64 {
        min + (self.next() * (max - min + 1) as f64) as i64
    }
}

/// One argument from its template (see challenges/README.md).
fn instantiate(template: &Value, sizes: &serde_json::Map<String, Value>, entries: (f64, f64), rng: &mut Rng) -> Value {
    let size = |name: &Value| sizes[name.as_str().expect("a size name")].as_i64().expect("a drawn size");
    let object = template.as_object().expect("a template object");
    if let Some(shape) = object.get("matrix") {
        let (rows, cols) = (size(&shape[0]), size(&shape[1]));
        let data = (0..rows).map(|_| (0..cols).map(|_| entries.0 + rng.next() * (entries.1 - entries.0)).collect::<Vec<_>>()).collect::<Vec<_>>();
        serde_json::json!(data)
    } else if let Some(name) = object.get("size") {
        serde_json::json!(size(name))
    } else if let Some(choices) = object.get("oneOf") {
        let choices = choices.as_array().expect("oneOf list");
        choices[rng.int(0, choices.len() as i64 - 1) as usize].clone()
    } else if let Some(value) = object.get("literal") {
        value.clone()
    } else if let Some(items) = object.get("list") {
        Value::Array(items.as_array().expect("list templates").iter().map(|t| instantiate(t, sizes, entries, rng)).collect())
    } else if let Some(fields) = object.get("object") {
        let fields = fields.as_object().expect("object template");
        Value::Object(fields.iter().map(|(k, t)| (k.clone(), instantiate(t, sizes, entries, rng))).collect())
    } else {
        panic!("unknown template {template}")
    }
}

#[wasm_bindgen_test]
fn the_random_recipe_only_makes_inputs_the_reference_accepts() {
    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    for (folder, text) in CHALLENGES {
        let tests = parse(folder, text);
        if graded_by_model(&tests) {
            continue;
        }
        let random = &tests["random"];
        let count = random["count"].as_u64().expect("random.count");
        assert!(count >= 1, "{folder}: no random cases");
        let entries = (random["entries"][0].as_f64().expect("min"), random["entries"][1].as_f64().expect("max"));
        for _ in 0..count.max(50) {
            // ranges first, then the products of ranges
            let specs = random["sizes"].as_object().expect("sizes");
            let mut sizes = serde_json::Map::new();
            for (name, spec) in specs.iter().filter(|(_, s)| s.is_array()) {
                sizes.insert(name.clone(), serde_json::json!(rng.int(spec[0].as_i64().expect("min"), spec[1].as_i64().expect("max"))));
            }
            for (name, spec) in specs.iter().filter(|(_, s)| !s.is_array()) {
                let factors = spec["product"].as_array().expect("a [min, max] range or a product");
                let value: i64 = factors.iter().map(|f| sizes[f.as_str().expect("name")].as_i64().expect("a range size")).product();
                sizes.insert(name.clone(), serde_json::json!(value));
            }
            let args: Vec<Value> = random["args"].as_array().expect("args").iter().map(|t| instantiate(t, &sizes, entries, &mut rng)).collect();
            let (function, args) = reference_call(&tests, &args);
            let output = call(&function, &args).unwrap_or_else(|e| panic!("{folder}: the reference rejects a random case {args:?}: {e:?}"));
            assert!(rows_of(&output).iter().flatten().all(|x| x.is_finite()), "{folder}: non-finite output");
        }
    }
}
