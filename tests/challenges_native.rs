//! The challenges' tests.json files against the Rust core directly (plain `cargo test`): every
//! fixed case within the stated tolerance, every error case with the stated error class and
//! message prefix. The wasm twin of this file, tests/challenges.rs, goes through the JS API.

use attention_lab::engine::{Batch, Rope};
use attention_lab::grouped_query::{grouped_query_attention, rotary_embedding_batch};
use attention_lab::projected::{projected_self_attention, ProjectedOptions};
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
    ("09-attention-in-a-model", include_str!("../challenges/09-attention-in-a-model/tests.json")),
    ("10-induction-head", include_str!("../challenges/10-induction-head/tests.json")),
    ("11-find-the-circuit", include_str!("../challenges/11-find-the-circuit/tests.json")),
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
/// and the `columnsOf` column counts merged into argument `optionsArgument`; a `transformer` reference
/// (challenge 11) is `Transformer.<method>` with the case's arguments. (The same as in tests/challenges.rs.)
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

/// Challenge 11's reference (www/src/cases.js's transformerReference): a float64, two-layer Transformer
/// with embedDim the row count of `weights.layers[0].W_Q` and numHeads `options.numberOfHeads`, holding
/// `weights.layers`; the answer is the numberOfHeads × numberOfHeads matrix [0][i][1][j] of `options.kind`.
/// The core takes each matrix as its row-major entries and counts them (the JS API reads the shape).
fn composition_scores(weights: &Value, options: &Value) -> Result<Matrix, AttentionError> {
    let layers = weights["layers"].as_array().expect("weights.layers");
    let c = layers[0]["W_Q"].as_array().expect("layers[0].W_Q").len();
    let h = options["numberOfHeads"].as_u64().expect("options.numberOfHeads") as usize;
    let mut model = Transformer::<f64>::new(ModelConfig::new(2, 2, c, h, 2))?;
    let updates = layers.iter().enumerate().flat_map(|(l, layer)| {
        layer.as_object().expect("a layer").iter().map(move |(name, w)| (Some(l), name.clone(), flat(w)))
    });
    model.set_params(updates.collect(), None)?;
    let scores = model.composition_scores();
    let kind = match options["kind"].as_str().expect("options.kind") {
        "q" => &scores.q,
        "k" => &scores.k,
        "v" => &scores.v,
        other => panic!("unknown kind {other}"),
    };
    // [l1][i][l2][j] of 2 layers, flat: l1 = 0, l2 = 1
    let at = |i: usize, j: usize| kind[(i * 2 + 1) * h + j];
    Matrix::new(h, h, (0..h).flat_map(|i| (0..h).map(move |j| at(i, j))).collect())
}

/// Runs the core function `function` (see [`reference_call`]) with the arguments.
fn call(function: &str, args: &[Value]) -> Result<Matrix, AttentionError> {
    let count = |o: &Value, key: &str| o[key].as_u64().unwrap_or_else(|| panic!("options.{key}")) as usize;
    if function == "Transformer.compositionScores" {
        return composition_scores(&args[0], &args[1]);
    }
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
    let (mut checked, mut skipped, mut by_entries) = (0, Vec::new(), Vec::new());
    for (folder, tests) in tests() {
        for case in tests["errors"].as_array().expect("errors") {
            let name = case["name"].as_str().expect("name");
            let (function, args) = reference_call(&tests, case["args"].as_array().expect("args"));
            if function.starts_with("Transformer.") {
                // the JS API reads a weight's number[][] and names its shape; the core counts its entries:
                // the same class, and the same parameter named first (`weights.` is the JS argument's name)
                let error = call(&function, &args).expect_err(name);
                assert_eq!(class_of(&error), case["throws"]["name"], "{folder} / {name}: {error}");
                let place = |message: &str| message.split(' ').next().unwrap_or_default().to_owned();
                assert_eq!(format!("weights.{}", place(&error.message())), place(case["throws"]["referenceMessage"].as_str().expect("referenceMessage")), "{folder} / {name}: {error}");
                by_entries.push(format!("{folder} / {name}: {error}"));
                continue;
            }
            if let Some(why) = js_only(&function, &args) {
                // only the JS API's reading of an option can refuse these: its message names the option
                assert!(case["throws"]["messageStartsWith"].as_str().expect("prefix").starts_with("options."), "{folder} / {name}");
                skipped.push(format!("{folder} / {name}: {why}"));
                continue;
            }
            checked += 1;
            let error = call(&function, &args).expect_err(name);
            assert_eq!(class_of(&error), case["throws"]["name"], "{folder} / {name}: {error}");
            let prefix = case["throws"]["messageStartsWith"].as_str().expect("prefix");
            assert!(error.message().starts_with(prefix), "{folder} / {name}: {error}");
            assert_eq!(error.message(), case["throws"]["referenceMessage"], "{folder} / {name}: core and JS messages agree");
        }
    }
    eprintln!("{checked} error cases checked against the core; {} read by the JS API only:\n{}", skipped.len(), skipped.join("\n"));
    eprintln!("{} weights refused by their count of entries (the JS API names their shape):\n{}", by_entries.len(), by_entries.join("\n"));
    assert!(checked >= 15 && skipped.len() <= 6, "{checked} checked, {} skipped", skipped.len());
    assert!(!by_entries.is_empty(), "challenge 11's error cases were not run");
}

/// The JS class of an error of the core.
fn class_of(error: &AttentionError) -> &'static str {
    match error {
        AttentionError::Type(_) => "TypeError",
        AttentionError::Range(_) => "RangeError",
        AttentionError::State(_) => "Error",
    }
}

// ---- the model checks (challenges 09 and 10): the package's Transformer, natively ----------------
// (challenge 11's reference is `composition_scores` above, run on its fixed and error cases)

use attention_lab::model::data::repeated_tokens;
use attention_lab::model::{ModelConfig, Positions, Tokens, Transformer};

fn challenge(folder: &str) -> Value {
    tests().find(|(f, _)| *f == folder).unwrap_or_else(|| panic!("no {folder}")).1
}

/// A number[][] (or number[]) as its row-major entries.
fn flat(value: &Value) -> Vec<f64> {
    match value {
        Value::Array(items) => items.iter().flat_map(flat).collect(),
        Value::Number(n) => vec![n.as_f64().expect("a number")],
        other => panic!("not a tensor: {other}"),
    }
}

/// Dense entries of a tests.json sparse matrix `{ shape, entries: [[row, col, value]] }`.
fn unpack(sparse: &Value) -> Vec<f64> {
    let cols = sparse["shape"][1].as_u64().expect("cols") as usize;
    let mut data = vec![0.0; sparse["shape"][0].as_u64().expect("rows") as usize * cols];
    for entry in sparse["entries"].as_array().expect("entries") {
        data[entry[0].as_u64().expect("row") as usize * cols + entry[1].as_u64().expect("col") as usize] = entry[2].as_f64().expect("value");
    }
    data
}

/// A float64 model with `weights` ({ W_E?, W_pos?, W_U, layers: [{ W_Q, … }] }) read by `tensor`.
fn model_with(config: ModelConfig, weights: &Value, tensor: impl Fn(&Value) -> Vec<f64>) -> Transformer<f64> {
    let mut model = Transformer::<f64>::new(config).expect("a valid config");
    let mut updates = Vec::new();
    for name in ["W_E", "W_pos", "W_U"] {
        if let Some(w) = weights.get(name) {
            updates.push((None, name.to_owned(), tensor(w)));
        }
    }
    for (l, layer) in weights["layers"].as_array().expect("layers").iter().enumerate() {
        for (name, w) in layer.as_object().expect("a layer") {
            updates.push((Some(l), name.clone(), tensor(w)));
        }
    }
    model.set_params(updates, None).expect("the weights fit the model");
    model
}

#[test]
fn the_trained_model_of_09_predicts_the_share_of_repeats_that_tests_json_states() {
    let tests = challenge("09-attention-in-a-model");
    let shipped: Value = serde_json::from_str(include_str!("../challenges/09-attention-in-a-model/model.json")).expect("model.json");
    let c = &shipped["config"];
    let count = |key: &str| c[key].as_u64().unwrap_or_else(|| panic!("config.{key}")) as usize;
    let mut config = ModelConfig::new(count("vocabSize"), count("contextLength"), count("embedDim"), count("numHeads"), count("numLayers"));
    config.positions = Positions::Shortformer;
    let mut model = model_with(config.clone(), &shipped, flat);
    let e = &tests["model"]["evaluation"];
    let data = repeated_tokens(config.vocab_size, e["length"].as_u64().expect("length") as usize, e["batch"].as_u64().expect("batch") as usize, e["seed"].as_u64().expect("seed"))
        .expect("the evaluation sequences");
    let tokens = Tokens { data: data.tokens.clone(), batch: data.batch, t: data.t };
    let out = model.forward(&tokens, false, None).expect("forward");
    let v = config.vocab_size;
    let (mut right, mut repeats) = (0, 0);
    for b in 0..data.batch {
        for t in 1..data.t {
            if !data.repeated[b * data.t + t] {
                continue;
            }
            let row = &out.logits[(b * data.t + t - 1) * v..(b * data.t + t) * v];
            let best = (0..v).fold(0, |arg, j| if row[j] > row[arg] { j } else { arg });
            repeats += 1;
            right += usize::from(best as u32 == data.tokens[b * data.t + t]);
        }
    }
    let stated = &tests["model"]["reference"];
    assert_eq!(repeats as u64, stated["repeatedTokens"].as_u64().expect("repeatedTokens"));
    assert_eq!(right as f64 / repeats as f64, stated["accuracy"].as_f64().expect("accuracy"), "{right} of {repeats}");
    let scores = model.head_scores(&tokens).expect("scores");
    assert!(scores[1].iter().any(|s| s.induction > 0.8), "layer 2 is an induction layer: {:?}", scores[1]);
}

/// The grading of challenge 10 (grade.js), natively: (previous-token score of layer 1's best head,
/// induction score of the last layer's best head, mean loss on repeated tokens).
fn grade_10(graded: &Value, grading: &Value) -> (f64, f64, f64) {
    let c = &graded["config"];
    let (v, l) = (c["vocabSize"].as_u64().expect("vocabSize") as usize, c["contextLength"].as_u64().expect("contextLength") as usize);
    let layers = c.get("numLayers").and_then(Value::as_u64).unwrap_or(2) as usize;
    let width = 3 * v + l; // token, position, free (2V): grade.js's basisOf
    let mut config = ModelConfig::new(v, l, width, 1, layers);
    config.positions = Positions::Shortformer;
    let mut model = model_with(config, &graded["weights"], unpack);
    let one_hot = |rows: usize, at: &dyn Fn(usize) -> usize| (0..rows * width).map(|i| if i % width == at(i / width) { 1.0 } else { 0.0 }).collect::<Vec<f64>>();
    model.set_params(vec![(None, "W_E".into(), one_hot(v, &|i| i)), (None, "W_pos".into(), one_hot(l, &|t| v + t))], None).expect("the basis");
    let data = repeated_tokens(v, v - 1, grading["batch"].as_u64().expect("batch") as usize, grading["seed"].as_u64().expect("seed")).expect("tokens");
    let tokens = Tokens { data: data.tokens.clone(), batch: data.batch, t: data.t };
    let scores = model.head_scores(&tokens).expect("scores");
    let out = model.forward(&tokens, false, None).expect("forward");
    let (mut sum, mut count) = (0.0, 0);
    for b in 0..data.batch {
        for t in 1..data.t {
            if data.repeated[b * data.t + t] {
                sum += out.losses[b * (data.t - 1) + t - 1];
                count += 1;
            }
        }
    }
    let best = |layer: usize, f: &dyn Fn(&attention_lab::model::HeadScores) -> f64| scores[layer].iter().map(f).fold(f64::MIN, f64::max);
    (best(0, &|s| s.previous_token), best(scores.len() - 1, &|s| s.induction), sum / count as f64)
}

#[test]
fn the_hand_built_induction_head_of_10_passes_natively_and_one_layer_does_not() {
    let tests = challenge("10-induction-head");
    let grading = &tests["model"]["grading"];
    let bound = |key: &str| grading[key].as_f64().expect("a bound");
    let close = |a: f64, stated: &Value| (a - stated.as_f64().expect("a number")).abs() <= 1e-5 * a.abs().max(1.0);
    let reference = tests["model"]["reference"].as_array().expect("reference");
    assert_eq!(reference.len(), 2);
    for graded in reference {
        let (previous, induction, loss) = grade_10(graded, grading);
        assert!(previous >= bound("previousToken") && induction >= bound("induction") && loss < bound("loss"), "{previous} {induction} {loss}");
        assert!(close(previous, &graded["previousToken"]) && close(induction, &graded["induction"]) && close(loss, &graded["loss"]), "{previous} {induction} {loss} vs {graded}");
    }
    for graded in tests["model"]["counterExample"].as_array().expect("counterExample") {
        let (previous, induction, loss) = grade_10(graded, grading);
        assert!(previous < bound("previousToken") && induction < bound("induction") && loss >= bound("loss"), "one layer passes: {previous} {induction} {loss}");
    }
}
