//! The exported JS API, exercised through wasm-bindgen. Included by `tests/web.rs` (browsers)
//! and `tests/node.rs` (Node), so `wasm-pack test --node` and `--headless --chrome` run the same cases.

use attention_lab::wasm::attention::{dot_product_attention, multi_head_attention, trace_multi_head_attention};
use attention_lab::wasm::projected::projected_self_attention;
use js_sys::{Array, Function, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

// ---- fixture builders -------------------------------------------------------

/// A JS `number[][]` from Rust rows.
fn js_matrix(rows: &[&[f64]]) -> JsValue {
    rows.iter()
        .map(|r| r.iter().map(|&x| JsValue::from_f64(x)).collect::<Array>())
        .collect::<Array>()
        .into()
}

/// A JS object from `(key, value)` pairs.
fn js_object(entries: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (k, v) in entries {
        Reflect::set(&o, &JsValue::from_str(k), v).unwrap();
    }
    o.into()
}

/// The challenge's Q (= K) and V.
fn challenge_q() -> JsValue {
    js_matrix(&[&[1.0, 2.0], &[3.0, 4.0]])
}
fn challenge_v() -> JsValue {
    js_matrix(&[&[5.0, 6.0], &[7.0, 8.0]])
}

/// `{ numberOfHeads, headDimensions }`.
fn heads(number_of_heads: f64, head_dimensions: f64) -> JsValue {
    js_object(&[("numberOfHeads", number_of_heads.into()), ("headDimensions", head_dimensions.into())])
}

/// A JS `number[][]` back into Rust rows.
fn rows_of(value: &JsValue) -> Vec<Vec<f64>> {
    Array::from(value)
        .iter()
        .map(|row| Array::from(&row).iter().map(|x| x.as_f64().expect("number")).collect())
        .collect()
}

/// Entry-by-entry comparison with an absolute tolerance.
fn assert_close(actual: &JsValue, expected: &[&[f64]], tolerance: f64) {
    let got = rows_of(actual);
    assert_eq!(got.len(), expected.len());
    for (r, (g, e)) in got.iter().zip(expected).enumerate() {
        assert_eq!(g.len(), e.len(), "row {r}");
        for (c, (a, b)) in g.iter().zip(e.iter()).enumerate() {
            assert!((a - b).abs() <= tolerance, "[{r}][{c}] is {a}, expected {b} ± {tolerance}");
        }
    }
}

/// The thrown JS error's class name and message.
fn thrown(result: Result<JsValue, JsValue>) -> (String, String) {
    let error: js_sys::Error = result.expect_err("expected a throw").dyn_into().expect("an Error object");
    (String::from(error.name()), String::from(error.message()))
}

fn challenge_mha() -> Result<JsValue, JsValue> {
    multi_head_attention(challenge_q(), challenge_q(), challenge_v(), heads(2.0, 1.0), JsValue::UNDEFINED)
}

// ---- known values -----------------------------------------------------------

#[wasm_bindgen_test]
fn challenge_known_values_options_form() {
    assert_close(&challenge_mha().unwrap(), &[&[6.761594, 7.964028], &[6.995055, 7.999329]], 1e-6);
}

#[wasm_bindgen_test]
fn challenge_known_values_positional_form() {
    let out = multi_head_attention(challenge_q(), challenge_q(), challenge_v(), 2.0.into(), 1.0.into()).unwrap();
    assert_eq!(rows_of(&out), rows_of(&challenge_mha().unwrap()));
}

#[wasm_bindgen_test]
fn not_scaled_by_sqrt_c() {
    // √C scaling would give [[6.609, 7.888], [6.972, 7.993]].
    let out = rows_of(&challenge_mha().unwrap());
    assert!((out[0][0] - 6.609).abs() > 0.1);
    assert!((out[0][1] - 7.888).abs() > 0.05);
}

#[wasm_bindgen_test]
fn dot_product_known_value() {
    let q = js_matrix(&[&[1.0, 0.0], &[0.0, 1.0]]);
    let out = dot_product_attention(q, challenge_q(), challenge_v(), JsValue::UNDEFINED).unwrap();
    assert_close(&out, &[&[6.609, 7.609], &[6.609, 7.609]], 5e-4);
}

#[wasm_bindgen_test]
fn one_head_equals_dot_product_attention_bit_for_bit() {
    let q = js_matrix(&[&[0.3, -1.2, 2.0], &[1.5, 0.25, -0.7], &[-2.0, 0.1, 0.9]]);
    let k = js_matrix(&[&[1.1, 0.4, -0.3], &[-0.6, 2.2, 0.8], &[0.05, -1.0, 1.7]]);
    let v = js_matrix(&[&[4.0, -3.0, 2.0], &[0.5, 0.5, 9.0], &[-1.0, 6.0, 0.0]]);
    let multi = multi_head_attention(q.clone(), k.clone(), v.clone(), heads(1.0, 3.0), JsValue::UNDEFINED).unwrap();
    let single = dot_product_attention(q, k, v, JsValue::UNDEFINED).unwrap();
    let bits = |m: &JsValue| rows_of(m).concat().iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&multi), bits(&single));
}

#[wasm_bindgen_test]
fn softmax_of_large_equal_scores_is_uniform() {
    // scores 1000·1000/√1 overflow exp() unless the row max is subtracted
    let q = js_matrix(&[&[1000.0], &[1000.0]]);
    let k = js_matrix(&[&[1.0], &[1.0]]);
    let v = js_matrix(&[&[0.0], &[1.0]]);
    assert_close(&dot_product_attention(q, k, v, JsValue::UNDEFINED).unwrap(), &[&[0.5], &[0.5]], 0.0);
}

#[wasm_bindgen_test]
fn causal_changes_to_later_rows_leave_earlier_rows_alone() {
    let options = || js_object(&[("causal", true.into())]);
    let q = js_matrix(&[&[0.1, 0.2], &[0.3, -0.4], &[1.0, 1.0]]);
    let before = rows_of(&dot_product_attention(q.clone(), q.clone(), q.clone(), options()).unwrap());
    let k2 = js_matrix(&[&[0.1, 0.2], &[0.3, -0.4], &[50.0, -50.0]]);
    let after = rows_of(&dot_product_attention(q.clone(), k2.clone(), k2, options()).unwrap());
    assert_eq!(before[..2], after[..2]);
    assert_ne!(before[2], after[2]);
}

#[wasm_bindgen_test]
fn fully_masked_row_returns_zeros() {
    let mask: JsValue = [[false, false], [true, true]]
        .iter()
        .map(|r| r.iter().map(|&b| JsValue::from_bool(b)).collect::<Array>())
        .collect::<Array>()
        .into();
    let out = dot_product_attention(challenge_q(), challenge_q(), challenge_v(), js_object(&[("mask", mask)])).unwrap();
    assert_eq!(rows_of(&out)[0], vec![0.0, 0.0]);
}

#[wasm_bindgen_test]
fn trace_steps_replay_to_the_output() {
    let trace = trace_multi_head_attention(challenge_q(), challenge_q(), challenge_v(), heads(2.0, 1.0)).unwrap();
    let steps = Array::from(&Reflect::get(&trace, &"steps".into()).unwrap());
    let ops: Vec<String> = steps.iter().map(|s| Reflect::get(&s, &"op".into()).unwrap().as_string().unwrap()).collect();
    for op in ["Slice", "Transpose", "MatMul", "Mul", "StableSoftmax", "Concat"] {
        assert!(ops.iter().any(|o| o == op), "no {op} step in {ops:?}");
    }
    // the last step is the W_O MatMul, and its values are the output
    let last = steps.get(steps.length() - 1);
    let output = Reflect::get(&trace, &"output".into()).unwrap();
    assert_eq!(rows_of(&Reflect::get(&last, &"values".into()).unwrap()), rows_of(&output));
    assert_eq!(rows_of(&output), rows_of(&challenge_mha().unwrap()));
}

// ---- bad input --------------------------------------------------------------

#[wasm_bindgen_test]
fn shape_error_uses_the_challenge_message() {
    let k = js_matrix(&[&[1.0, 2.0], &[3.0, 4.0], &[5.0, 6.0]]);
    let (name, message) = thrown(multi_head_attention(challenge_q(), k, challenge_v(), heads(2.0, 1.0), JsValue::UNDEFINED));
    assert_eq!(name, "RangeError");
    assert_eq!(message, "Q/K/V matrix dimensions must match the numberOfHeads * headDimensions: K is 3×2 but Q is 2×2");
    let (_, message) = thrown(multi_head_attention(challenge_q(), challenge_q(), challenge_v(), heads(2.0, 2.0), JsValue::UNDEFINED));
    assert!(message.starts_with("Q/K/V matrix dimensions must match the numberOfHeads * headDimensions"));
}

#[wasm_bindgen_test]
fn nan_entry_is_a_range_error_naming_the_place() {
    let q = js_matrix(&[&[1.0, 2.0], &[f64::NAN, 4.0]]);
    let (name, message) = thrown(challenge_mha_with_q(q));
    assert_eq!((name.as_str(), message.as_str()), ("RangeError", "Q[1][0] is NaN; expected a finite number"));
    let (_, message) = thrown(challenge_mha_with_q(js_matrix(&[&[1.0, f64::INFINITY], &[3.0, 4.0]])));
    assert_eq!(message, "Q[0][1] is Infinity; expected a finite number");
}

fn challenge_mha_with_q(q: JsValue) -> Result<JsValue, JsValue> {
    multi_head_attention(q, challenge_q(), challenge_v(), heads(2.0, 1.0), JsValue::UNDEFINED)
}

#[wasm_bindgen_test]
fn type_errors_for_non_arrays_and_non_numbers() {
    for (q, expected) in [
        (JsValue::UNDEFINED, "Q is undefined; expected an array of rows (number[][])"),
        (JsValue::from_str("1,2"), "Q is a string; expected an array of rows (number[][])"),
        (js_matrix(&[&[1.0, 2.0]]).dyn_into::<Array>().unwrap().concat(&Array::of1(&"x".into())).into(), "Q[1] is a string; expected a row array (number[][])"),
    ] {
        let (name, message) = thrown(challenge_mha_with_q(q));
        assert_eq!((name.as_str(), message.as_str()), ("TypeError", expected));
    }
    let with_string: JsValue = Array::of2(&Array::of2(&1.into(), &"2".into()), &Array::of2(&3.into(), &4.into())).into();
    let (name, message) = thrown(challenge_mha_with_q(with_string));
    assert_eq!((name.as_str(), message.as_str()), ("TypeError", "Q[0][1] is a string; expected a number"));
}

#[wasm_bindgen_test]
fn range_errors_for_empty_ragged_and_bad_counts() {
    let ragged: JsValue = Array::of2(&Array::of2(&1.into(), &2.into()), &Array::of1(&3.into())).into();
    let (name, message) = thrown(challenge_mha_with_q(ragged));
    assert_eq!(name, "RangeError");
    assert!(message.starts_with("Q[1] has 1 entries but Q[0] has 2"), "{message}");
    let (name, message) = thrown(challenge_mha_with_q(Array::new().into()));
    assert_eq!((name.as_str(), message.as_str()), ("RangeError", "Q is empty; expected at least one row"));
    for (h, d, expected) in [
        (0.0, 2.0, "options.numberOfHeads is 0; expected a positive integer"),
        (1.5, 2.0, "options.numberOfHeads is 1.5; expected a positive integer"),
        (2.0, -1.0, "options.headDimensions is -1; expected a positive integer"),
        (f64::NAN, 1.0, "options.numberOfHeads is NaN; expected a positive integer"),
    ] {
        let (name, message) = thrown(multi_head_attention(challenge_q(), challenge_q(), challenge_v(), heads(h, d), JsValue::UNDEFINED));
        assert_eq!((name.as_str(), message.as_str()), ("RangeError", expected));
    }
}

#[wasm_bindgen_test]
fn options_are_checked() {
    let (name, message) = thrown(multi_head_attention(challenge_q(), challenge_q(), challenge_v(), JsValue::UNDEFINED, JsValue::UNDEFINED));
    assert_eq!(name, "TypeError");
    assert!(message.starts_with("options is missing"), "{message}");
    let misspelled = js_object(&[("numberofHeads", 2.into()), ("headDimensions", 1.into())]);
    let (name, message) = thrown(multi_head_attention(challenge_q(), challenge_q(), challenge_v(), misspelled, JsValue::UNDEFINED));
    assert_eq!(name, "TypeError");
    assert!(message.starts_with("options.numberofHeads is not an option (did you mean numberOfHeads?)"), "{message}");
    let (name, message) = thrown(dot_product_attention(challenge_q(), challenge_q(), challenge_v(), js_object(&[("causal", "yes".into())])));
    assert_eq!((name.as_str(), message.as_str()), ("TypeError", "options.causal is a string; expected true or false"));
}

#[wasm_bindgen_test]
fn mask_of_the_wrong_shape_is_a_range_error() {
    let mask: JsValue = Array::of1(&Array::of2(&true.into(), &true.into())).into();
    let (name, message) = thrown(dot_product_attention(challenge_q(), challenge_q(), challenge_v(), js_object(&[("mask", mask)])));
    assert_eq!(name, "RangeError");
    assert!(message.starts_with("mask is 1×2 but the scores are 2×2"), "{message}");
}

#[wasm_bindgen_test]
fn throwing_getter_is_a_type_error_and_the_module_keeps_working() {
    let row = Array::of2(&1.into(), &2.into());
    let getter = Function::new_no_args("throw new Error('boom')");
    let descriptor = js_object(&[("get", getter.into())]);
    Object::define_property(&row, &JsValue::from(1), descriptor.unchecked_ref());
    let q: JsValue = Array::of2(&row, &Array::of2(&3.into(), &4.into())).into();
    let (name, message) = thrown(challenge_mha_with_q(q));
    assert_eq!((name.as_str(), message.as_str()), ("TypeError", "Q[0][1] could not be read (reading it threw: boom)"));
    assert_close(&challenge_mha().unwrap(), &[&[6.761594, 7.964028], &[6.995055, 7.999329]], 1e-6);
}

#[wasm_bindgen_test]
fn w_o_must_be_c_by_c() {
    let options = js_object(&[("numberOfHeads", 2.into()), ("headDimensions", 1.into()), ("W_O", js_matrix(&[&[1.0]]))]);
    let (name, message) = thrown(multi_head_attention(challenge_q(), challenge_q(), challenge_v(), options, JsValue::UNDEFINED));
    assert_eq!((name.as_str(), message.as_str()), ("RangeError", "W_O is 1×1 but must be C×C = 2×2"));
}

// ---- projectedSelfAttention ---------------------------------------------------

/// `{ numberOfHeads, headDimensions, W_Q, W_K, W_V, W_O }` with the given C×C weights.
fn projections(h: f64, d: f64, w: [&[&[f64]]; 4]) -> JsValue {
    js_object(&[
        ("numberOfHeads", h.into()),
        ("headDimensions", d.into()),
        ("W_Q", js_matrix(w[0])),
        ("W_K", js_matrix(w[1])),
        ("W_V", js_matrix(w[2])),
        ("W_O", js_matrix(w[3])),
    ])
}

const W_Q: &[&[f64]] = &[&[1.0, 2.0], &[0.0, 1.0]];
const W_K: &[&[f64]] = &[&[0.5, 0.0], &[1.0, -1.0]];
const W_V: &[&[f64]] = &[&[2.0, 1.0], &[-1.0, 0.0]];
const W_O: &[&[f64]] = &[&[0.0, 1.0], &[1.0, 0.5]];

#[wasm_bindgen_test]
fn projected_self_attention_is_multi_head_attention_of_the_projections() {
    let x: &[&[f64]] = &[&[1.0, 0.0], &[0.0, 2.0], &[-1.0, 1.0]];
    let got = projected_self_attention(js_matrix(x), projections(2.0, 1.0, [W_Q, W_K, W_V, W_O])).unwrap();
    // X·W computed here by hand: X·W_Q = [[1, 2], [0, 2], [-1, -1]], X·W_K = [[0.5, 0], [2, -2], [0.5, -1]], X·W_V = [[2, 1], [-2, 0], [-3, -1]]
    let q = js_matrix(&[&[1.0, 2.0], &[0.0, 2.0], &[-1.0, -1.0]]);
    let k = js_matrix(&[&[0.5, 0.0], &[2.0, -2.0], &[0.5, -1.0]]);
    let v = js_matrix(&[&[2.0, 1.0], &[-2.0, 0.0], &[-3.0, -1.0]]);
    let options = js_object(&[("numberOfHeads", 2.into()), ("headDimensions", 1.into()), ("W_O", js_matrix(W_O))]);
    let expected = multi_head_attention(q, k, v, options, JsValue::UNDEFINED).unwrap();
    assert_eq!(rows_of(&got), rows_of(&expected));
}

#[wasm_bindgen_test]
fn projected_self_attention_with_identities_is_the_challenge_02_answer() {
    let i: &[&[f64]] = &[&[1.0, 0.0], &[0.0, 1.0]];
    let got = projected_self_attention(challenge_q(), projections(2.0, 1.0, [i, i, i, i])).unwrap();
    let expected = multi_head_attention(challenge_q(), challenge_q(), challenge_q(), heads(2.0, 1.0), JsValue::UNDEFINED).unwrap();
    assert_eq!(rows_of(&got), rows_of(&expected));
}

#[wasm_bindgen_test]
fn projected_self_attention_errors_name_the_argument_and_the_module_keeps_working() {
    let cases: Vec<(JsValue, JsValue, &str, &str)> = vec![
        (js_matrix(&[&[1.0, 2.0, 3.0]]), projections(2.0, 1.0, [W_Q, W_K, W_V, W_O]), "RangeError", "X is 1×3 but numberOfHeads · headDimensions = 2 · 1 = 2: X must have C = 2 columns"),
        (challenge_q(), projections(2.0, 1.0, [W_Q, &[&[1.0, 0.0, 1.0], &[0.0, 1.0, 1.0]], W_V, W_O]), "RangeError", "W_K is 2×3 but must be C×C = 2×2 (oriented [in, out]: the projection is X·W_K)"),
        (challenge_q(), js_object(&[("numberOfHeads", 2.into()), ("headDimensions", 1.into()), ("W_Q", js_matrix(W_Q)), ("W_K", js_matrix(W_K)), ("W_V", js_matrix(W_V))]), "TypeError", "options.W_O is missing; expected a C×C number[][] oriented [in, out]"),
        (challenge_q(), JsValue::UNDEFINED, "TypeError", "options is missing; expected { numberOfHeads, headDimensions, W_Q, W_K, W_V, W_O, causal?, mask? }"),
        (js_matrix(&[&[1.0, f64::NAN]]), projections(2.0, 1.0, [W_Q, W_K, W_V, W_O]), "RangeError", "X[0][1] is NaN; expected a finite number"),
        (challenge_q(), projections(0.0, 1.0, [W_Q, W_K, W_V, W_O]), "RangeError", "options.numberOfHeads is 0; expected a positive integer"),
    ];
    for (x, options, class, message) in cases {
        let (name, got) = thrown(projected_self_attention(x, options));
        assert_eq!((name.as_str(), got.as_str()), (class, message));
    }
    let misspelled = projections(2.0, 1.0, [W_Q, W_K, W_V, W_O]);
    Reflect::set(&misspelled, &"casual".into(), &true.into()).unwrap();
    let (name, message) = thrown(projected_self_attention(challenge_q(), misspelled));
    assert_eq!(name, "TypeError");
    assert!(message.starts_with("options.casual is not an option (did you mean causal?)"), "{message}");
    assert!(projected_self_attention(challenge_q(), projections(2.0, 1.0, [W_Q, W_K, W_V, W_O])).is_ok());
}

// ---- attention as LLMs run it --------------------------------------------------------

use attention_lab::wasm::grouped::{grouped_query_attention, rotary_embedding, trace_grouped_query_attention};

/// `{ numberOfHeads, numberOfKVHeads, headDimensions }` and extra entries.
fn grouped(h: f64, kv: f64, d: f64, extra: &[(&str, JsValue)]) -> JsValue {
    let mut entries = vec![("numberOfHeads", h.into()), ("numberOfKVHeads", kv.into()), ("headDimensions", d.into())];
    entries.extend(extra.iter().cloned());
    js_object(&entries)
}

#[wasm_bindgen_test]
fn grouped_query_attention_with_as_many_kv_heads_is_multi_head_attention_bit_for_bit() {
    let (q, v) = (challenge_q(), challenge_v());
    let got = rows_of(&grouped_query_attention(q.clone(), q.clone(), v.clone(), grouped(2.0, 2.0, 1.0, &[])).unwrap());
    let want = rows_of(&challenge_mha().unwrap());
    let bits = |m: &Vec<Vec<f64>>| m.iter().flatten().map(|x| x.to_bits()).collect::<Vec<u64>>();
    assert_eq!(bits(&got), bits(&want));
}

#[wasm_bindgen_test]
fn multi_query_attention_reads_one_kv_head_and_a_window_of_one_sees_only_itself() {
    // two query heads share the one K/V column; with causal and window 1 each query sees its own key only
    let k = js_matrix(&[&[1.0], &[2.0], &[3.0]]);
    let v = js_matrix(&[&[10.0], &[20.0], &[30.0]]);
    let q = js_matrix(&[&[1.0, -1.0], &[0.5, 2.0]]); // T_q = 2: positions 1 and 2 of T_k = 3
    let out = grouped_query_attention(q, k, v, grouped(2.0, 1.0, 1.0, &[("causal", true.into()), ("window", 1.0.into())])).unwrap();
    assert_close(&out, &[&[20.0, 20.0], &[30.0, 30.0]], 0.0);
}

#[wasm_bindgen_test]
fn rotary_embedding_turns_the_first_pair_by_the_position() {
    let x = js_matrix(&[&[1.0, 0.0], &[1.0, 0.0]]);
    let out = rotary_embedding(x, js_object(&[("numberOfHeads", 1.0.into()), ("headDimensions", 2.0.into()), ("offset", 1.0.into())])).unwrap();
    // rows at positions 1 and 2: (cos p, sin p)
    assert_close(&out, &[&[1f64.cos(), 1f64.sin()], &[2f64.cos(), 2f64.sin()]], 1e-15);
}

#[wasm_bindgen_test]
fn the_grouped_trace_records_rotations_and_kv_heads() {
    let q = js_matrix(&[&[1.0, 0.5, -1.0, 2.0]]);
    let kv = js_matrix(&[&[1.0, 0.0], &[0.5, -0.5]]);
    let rope = js_object(&[("base", 100.0.into())]);
    let trace = trace_grouped_query_attention(q, kv.clone(), kv, grouped(2.0, 1.0, 2.0, &[("rope", rope)])).unwrap();
    let steps: Array = Reflect::get(&trace, &"steps".into()).unwrap().unchecked_into();
    let ops: Vec<String> = steps.iter().map(|s| Reflect::get(&s, &"op".into()).unwrap().as_string().unwrap()).collect();
    assert_eq!(ops.iter().filter(|op| *op == "Rotate").count(), 4, "{ops:?}");
    let kv_heads: Vec<f64> = steps.iter().filter_map(|s| Reflect::get(&s, &"kvHead".into()).unwrap().as_f64()).collect();
    assert_eq!(kv_heads, vec![0.0; 4], "K and V slices of both query heads read K/V head 0");
}

#[wasm_bindgen_test]
fn modern_bad_input_is_a_range_or_type_error_and_the_module_keeps_working() {
    let q = challenge_q();
    let (name, message) = thrown(grouped_query_attention(q.clone(), q.clone(), q.clone(), grouped(2.0, 3.0, 1.0, &[])));
    assert_eq!(name, "RangeError");
    assert!(message.starts_with("numberOfKVHeads = 3 does not divide numberOfHeads = 2"), "{message}");
    let (name, message) = thrown(rotary_embedding(q.clone(), js_object(&[("numberOfHeads", 2.0.into()), ("headDimensions", 1.0.into())])));
    assert_eq!(name, "RangeError");
    assert!(message.starts_with("headDimensions = 1 is odd"), "{message}");
    let (name, _) = thrown(grouped_query_attention(q.clone(), q.clone(), q.clone(), grouped(2.0, 1.0, 1.0, &[("window", 0.0.into())])));
    assert_eq!(name, "RangeError");
    assert_close(&challenge_mha().unwrap(), &[&[6.761594, 7.964028], &[6.995055, 7.999329]], 1e-6);
}
