//! Cases for the exported `MultiHeadAttention` class through wasm-bindgen. Included by
//! `tests/layer.rs` (headless browsers) and `tests/layer_node.rs` (Node), so
//! `wasm-pack test --node` and `wasm-pack test --headless --chrome` run the same cases.

use attention_lab::wasm::layer::JsMultiHeadAttention as MultiHeadAttention;
use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

// ---- helpers ---------------------------------------------------------------------

fn js_matrix(rows: &[Vec<f64>]) -> JsValue {
    rows.iter().map(|r| r.iter().map(|&x| JsValue::from_f64(x)).collect::<Array>()).collect::<Array>().into()
}

fn js_object(entries: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (k, v) in entries {
        Reflect::set(&o, &JsValue::from_str(k), v).unwrap();
    }
    o.into()
}

fn prop(o: &JsValue, key: &str) -> JsValue {
    Reflect::get(o, &JsValue::from_str(key)).unwrap()
}

fn rows_of(value: &JsValue) -> Vec<Vec<f64>> {
    Array::from(value).iter().map(|row| Array::from(&row).iter().map(|x| x.as_f64().expect("number")).collect()).collect()
}

/// A deterministic `rows × cols` matrix with entries in [-1, 1).
fn matrix(rows: usize, cols: usize, seed: u64) -> Vec<Vec<f64>> {
    let m = attention_lab::testing::seeded_matrix(rows, cols, seed);
    m.to_rows()
}

fn config(embed_dim: f64, num_heads: f64) -> JsValue {
    js_object(&[("embedDim", embed_dim.into()), ("numHeads", num_heads.into())])
}

fn thrown<T>(result: Result<T, JsValue>) -> (String, String) {
    let Err(error) = result else { panic!("expected a throw") };
    let error: js_sys::Error = error.dyn_into().expect("an Error object");
    (String::from(error.name()), String::from(error.message()))
}

fn forward(layer: &mut MultiHeadAttention, q: &[Vec<f64>], k: &[Vec<f64>], v: &[Vec<f64>], options: JsValue) -> Vec<Vec<f64>> {
    let result = layer.forward(js_matrix(q), js_matrix(k), js_matrix(v), options).unwrap();
    rows_of(&prop(&result, "output"))
}

// ---- tests ---------------------------------------------------------------------------

#[wasm_bindgen_test]
fn getters_and_parameter_counts() {
    let layer = MultiHeadAttention::new(config(768.0, 12.0)).unwrap();
    assert_eq!((layer.head_dim(), layer.num_parameters(), layer.embed_dim(), layer.num_heads()), (64.0, 2_362_368.0, 768.0, 12.0));
    let no_bias = MultiHeadAttention::new(js_object(&[("embedDim", 768.into()), ("numHeads", 12.into()), ("bias", false.into())])).unwrap();
    assert_eq!(no_bias.num_parameters(), 2_359_296.0);
}

#[wasm_bindgen_test]
fn embed_dim_not_divisible_is_a_range_error_and_construction_keeps_working() {
    let (name, message) = thrown(MultiHeadAttention::new(config(10.0, 3.0)));
    assert_eq!(name, "RangeError");
    assert_eq!(message, "config.embedDim = 10 is not divisible by numHeads = 3: each head takes C / numHeads columns");
    let (name, message) = thrown(MultiHeadAttention::new(js_object(&[("embedDim", 4.into()), ("numHeads", "2".into())])));
    assert_eq!((name.as_str(), message.as_str()), ("TypeError", "config.numHeads is a string; expected a positive integer"));
    assert!(MultiHeadAttention::new(config(4.0, 2.0)).is_ok());
}

/// Central differences through the exported methods, for the input and two parameters.
#[wasm_bindgen_test]
fn finite_differences_through_the_exports() {
    let make = || MultiHeadAttention::new(js_object(&[("embedDim", 4.into()), ("numHeads", 2.into()), ("seed", 3.into())])).unwrap();
    let (q, kv) = (matrix(3, 4, 1), matrix(5, 4, 2));
    let g = matrix(3, 4, 3);
    let options = || js_object(&[("causal", true.into())]);
    let loss = |layer: &mut MultiHeadAttention, q: &[Vec<f64>]| -> f64 {
        let out = forward(layer, q, &kv, &kv, options());
        out.iter().flatten().zip(g.iter().flatten()).map(|(a, b)| a * b).sum()
    };
    let mut layer = make();
    forward(&mut layer, &q, &kv, &kv, options());
    let grads = layer.backward(js_matrix(&g)).unwrap();
    let d_query = rows_of(&prop(&grads, "query"));
    let step = 1e-5;
    let mut worst: f64 = 0.0;
    for r in 0..3 {
        for c in 0..4 {
            let mut up = q.clone();
            up[r][c] += step;
            let mut down = q.clone();
            down[r][c] -= step;
            let numeric = (loss(&mut make(), &up) - loss(&mut make(), &down)) / (2.0 * step);
            let analytic = d_query[r][c];
            worst = worst.max((analytic - numeric).abs() / analytic.abs().max(numeric.abs()).max(1e-3));
        }
    }
    assert!(worst <= 1e-6, "query: max relative error {worst}");
    // W_O[1][2] through setWeights
    let param = layer.grads(JsValue::UNDEFINED).unwrap();
    let analytic = rows_of(&prop(&param, "W_O"))[1][2];
    let at = |delta: f64| {
        let mut l = make();
        let mut w_o = rows_of(&prop(&l.get_weights(JsValue::UNDEFINED).unwrap(), "W_O"));
        w_o[1][2] += delta;
        l.set_weights(js_object(&[("W_O", js_matrix(&w_o))])).unwrap();
        loss(&mut l, &q)
    };
    let numeric = (at(step) - at(-step)) / (2.0 * step);
    assert!((analytic - numeric).abs() / analytic.abs().max(numeric.abs()).max(1e-3) <= 1e-6, "{analytic} vs {numeric}");
}

#[wasm_bindgen_test]
fn batched_shapes_and_weights() {
    let mut layer = MultiHeadAttention::new(config(6.0, 3.0)).unwrap();
    let batch: JsValue = [matrix(2, 6, 1), matrix(2, 6, 2)].iter().map(|m| js_matrix(m)).collect::<Array>().into();
    let keys: JsValue = [matrix(4, 6, 3), matrix(4, 6, 4)].iter().map(|m| js_matrix(m)).collect::<Array>().into();
    let result = layer.forward(batch, keys, JsValue::UNDEFINED, js_object(&[("needWeights", true.into())])).unwrap();
    let output = Array::from(&prop(&result, "output"));
    assert_eq!(output.length(), 2);
    assert_eq!(rows_of(&output.get(1)).len(), 2);
    let weights = Array::from(&prop(&result, "weights"));
    let item = Array::from(&weights.get(0));
    assert_eq!(item.length(), 3); // heads
    assert_eq!(rows_of(&item.get(0)).iter().map(Vec::len).collect::<Vec<_>>(), vec![4, 4]);
}

#[wasm_bindgen_test]
fn call_order_and_shape_errors_then_the_layer_still_works() {
    let mut layer = MultiHeadAttention::new(config(4.0, 2.0)).unwrap();
    let x = matrix(3, 4, 1);
    let (name, message) = thrown(layer.backward(js_matrix(&x)));
    assert_eq!(name, "Error");
    assert!(message.starts_with("backward needs the forward pass it differentiates"), "{message}");
    let (name, _) = thrown(layer.grads(JsValue::UNDEFINED));
    assert_eq!(name, "Error");
    let first = forward(&mut layer, &x, &x, &x, JsValue::UNDEFINED);
    let (name, message) = thrown(layer.backward(js_matrix(&matrix(2, 4, 1))));
    assert_eq!((name.as_str(), message.as_str()), ("RangeError", "gradOutput is 2×4 but the output was 3×4; gradOutput must have the output's shape"));
    let (name, message) = thrown(layer.forward(js_matrix(&[vec![1.0, f64::NAN, 0.0, 0.0]]), JsValue::UNDEFINED, JsValue::UNDEFINED, JsValue::UNDEFINED));
    assert_eq!((name.as_str(), message.as_str()), ("RangeError", "query[0][1] is NaN; expected a finite number"));
    let (name, message) = thrown(layer.set_weights(js_object(&[("W_V", js_matrix(&matrix(3, 4, 1)))])));
    assert_eq!(name, "RangeError");
    assert!(message.starts_with("W_V is 3×4 but must be C×C = 4×4"), "{message}");
    assert!(layer.backward(js_matrix(&x)).is_ok());
    assert_eq!(forward(&mut layer, &x, &x, &x, JsValue::UNDEFINED), first);
}
