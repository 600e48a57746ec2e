//! Same bits on any number of threads: every path that splits its work (the engine's heads and
//! query blocks, the f32 products' row blocks and column groups, packing, the loss's rows) run on 1, 2 and 3 threads, compared bit for bit.
//! Run with `cargo test --features threads --test threads` (the Makefile's test-native does).
#![cfg(all(feature = "threads", not(target_arch = "wasm32")))]

use attention_lab::attention::dot_product_attention_batch;
use attention_lab::engine::{Batch, Rope};
use attention_lab::grouped_query::grouped_query_attention_batch;
use attention_lab::layer::ForwardOptions;
use attention_lab::layer::{LayerConfig, MultiHeadAttention};
use attention_lab::multi_head::multi_head_attention_batch;
use attention_lab::parallel::{map_hot, threads, with_threads};
use attention_lab::testing::seeded_matrix;
use attention_lab::{HeadSplit, Mask, Matrix};

/// Past one query block (64 rows) and the split threshold, with a ragged last block.
const T: usize = 150;
const C: usize = 32;
const H: usize = 4;

fn data(rows: usize, cols: usize, seed: u64) -> Vec<f64> {
    seeded_matrix(rows, cols, seed).data().to_vec()
}

fn narrow(x: &[f64]) -> Vec<f32> {
    x.iter().map(|&v| v as f32).collect()
}

fn masks() -> Vec<Mask> {
    vec![Mask::none(), Mask::causal(), Mask { causal: true, allowed: None, window: Some(20) }]
}

/// `f` on 1, 2 and 3 threads: every result's bits equal the single-threaded ones.
fn same_bits<R: PartialEq + std::fmt::Debug + Send>(what: &str, f: impl Fn() -> R + Sync) {
    let one = with_threads(1, &f);
    for n in [2, 3] {
        let got = with_threads(n, || {
            assert_eq!(threads(), n);
            f()
        });
        assert!(got == one, "{what}: {n} threads differ from 1");
    }
}

/// Bits of floats, so that NaN or −0 cannot compare equal by accident.
fn bits64(x: &[f64]) -> Vec<u64> {
    x.iter().map(|v| v.to_bits()).collect()
}
fn bits32(x: &[f32]) -> Vec<u32> {
    x.iter().map(|v| v.to_bits()).collect()
}

/// The f32 products on their own, at shapes that take each way of splitting: one row block (a short
/// sequence: cut by columns), a ragged pair of blocks, one to four rows (read in place, cut by columns),
/// with and without a bias (one row past the column split's threshold), A·Bᵀ with and without
/// accumulate, and the packing of B.
/// The short jobs' helpers (`map_hot`): every part once, in order, job after job (the helpers claim parts of
/// each as it is posted), with a job posted inside a part (it falls back to rayon) and two posters at once.
#[test]
fn short_jobs_on_spinning_helpers_give_every_part_once_in_order() {
    for n in [1, 2, 3] {
        with_threads(n, || {
            for round in 0..2000usize {
                let parts = 1 + round % 9;
                let calls = std::sync::atomic::AtomicUsize::new(0);
                let got = map_hot(parts, true, |i| {
                    calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    (0..=i + round % 5 + 5000).map(|x| std::hint::black_box(x * x)).sum::<usize>()
                });
                let want: Vec<usize> = (0..parts).map(|i| (0..=i + round % 5 + 5000).map(|x| x * x).sum()).collect();
                assert_eq!((got, calls.into_inner()), (want, parts), "{n} threads, round {round}");
            }
            let nested = map_hot(4, true, |i| map_hot(3, true, |j| 10 * i + j));
            assert_eq!(nested, (0..4).map(|i| (0..3).map(|j| 10 * i + j).collect::<Vec<_>>()).collect::<Vec<_>>());
            let (a, b) = rayon::join(|| map_hot(64, true, |i| i + 1), || map_hot(64, true, |i| i * 2));
            assert_eq!((a, b), ((1..=64).collect::<Vec<_>>(), (0..64).map(|i| i * 2).collect::<Vec<_>>()));
        });
    }
}

#[test]
fn the_f32_products_give_the_same_bits_on_any_thread_count() {
    use attention_lab::kernels::{gemm_transposed_b, linear_f32, PackedPanels, PACK_COLUMNS};
    for (rows, k, n) in [(1, 1030, 2 * PACK_COLUMNS + 13), (3, 200, 777), (4, 64, 1030), (5, 70, 900), (40, 256, 520), (90, 640, 300), (150, 33, 260)] {
        let (x, w, bias) = (narrow(&data(rows, k, 5)), narrow(&data(k, n, 6)), narrow(&data(1, n, 7)));
        same_bits(&format!("linear {rows}×{k}×{n}"), || {
            let mut out = vec![0.0f32; rows * n];
            linear_f32(&x, rows, k, &w, n, Some(&bias), &mut out, &mut PackedPanels::new());
            let mut plain = vec![0.0f32; rows * n];
            linear_f32(&x, rows, k, &w, n, None, &mut plain, &mut PackedPanels::new());
            (bits32(&out), bits32(&plain))
        });
        let b = narrow(&data(n, k, 8)); // (n, k): out = x·bᵀ
        for accumulate in [false, true] {
            same_bits(&format!("a·bᵀ {rows}×{k}×{n}, accumulate {accumulate}"), || {
                // rows ldc = n + 3 apart, the extra columns left alone
                let ldc = n + 3;
                let mut out = narrow(&data(rows, ldc, 9));
                gemm_transposed_b(rows, k, n, &x, k, &b, k, &mut out, ldc, accumulate, &mut PackedPanels::new());
                bits32(&out)
            });
        }
        same_bits(&format!("packing {k}×{n}"), || {
            let mut panels = PackedPanels::new();
            panels.pack(&w, n, k, n);
            let mut transposed = PackedPanels::new();
            transposed.pack_transposed(&b, k, k, n);
            (bits32(&panels.unpack()), bits32(&transposed.unpack()))
        });
    }
}

#[test]
fn the_functions_give_the_same_bits_on_any_thread_count() {
    let (q, k, v) = (data(2 * T, C, 1), data(2 * T, C, 2), data(2 * T, C, 3));
    let (q32, k32, v32) = (narrow(&q), narrow(&k), narrow(&v));
    let batch = |x| Batch::new(x, 2, T, C);
    let batch32 = |x| Batch::new(x, 2, T, C);
    let split = HeadSplit { number_of_heads: H, head_dimensions: C / H };
    let w_o = seeded_matrix(C, C, 4);
    let w_o32 = w_o.cast::<f32>();
    for mask in masks() {
        same_bits("dotProductAttention f64", || bits64(&dot_product_attention_batch(batch(&q), batch(&k), batch(&v), &mask).unwrap()));
        same_bits("dotProductAttention f32", || bits32(&dot_product_attention_batch(batch32(&q32), batch32(&k32), batch32(&v32), &mask).unwrap()));
        same_bits("multiHeadAttention f64", || bits64(&multi_head_attention_batch(batch(&q), batch(&k), batch(&v), split, Some(&w_o), &mask).unwrap()));
        same_bits("multiHeadAttention f32", || bits32(&multi_head_attention_batch(batch32(&q32), batch32(&k32), batch32(&v32), split, Some(&w_o32), &mask).unwrap()));
        let (kg, vg) = (data(2 * T, C / 2, 5), data(2 * T, C / 2, 6));
        let (kg32, vg32) = (narrow(&kg), narrow(&vg));
        let half = |x| Batch::new(x, 2, T, C / 2);
        let half32 = |x| Batch::new(x, 2, T, C / 2);
        same_bits("groupedQueryAttention f64", || bits64(&grouped_query_attention_batch(batch(&q), half(&kg), half(&vg), split, 2, None, &mask).unwrap()));
        same_bits("groupedQueryAttention f32", || bits32(&grouped_query_attention_batch(batch32(&q32), half32(&kg32), half32(&vg32), split, 2, None, &mask).unwrap()));
    }
}

#[test]
fn an_overflow_names_the_same_entry_on_any_thread_count() {
    // rows 70 and 130 of Q are huge: the first one the single-threaded loop meets is reported
    let mut q = data(T, C, 7);
    for r in [130, 70] {
        q[r * C..(r + 1) * C].fill(1.5e308);
    }
    let k = data(T, C, 8);
    let split = HeadSplit { number_of_heads: H, head_dimensions: C / H };
    let b = |x| Batch::new(x, 1, T, C);
    let err = || multi_head_attention_batch(b(&q), b(&k), b(&k), split, None, &Mask::none()).err().map(|e| e.to_string());
    assert!(err().is_some_and(|m| m.contains("row 70")), "{:?}", err());
    same_bits("the error", err);
}

#[test]
fn the_layer_gives_the_same_bits_on_any_thread_count() {
    for (kv_heads, rope) in [(H, None), (2, Some(Rope { base: 10_000.0 }))] {
        let config = LayerConfig { kv_heads, rope, ..LayerConfig::new(C, H) };
        let x = data(2 * T, C, 9);
        let x32 = narrow(&x);
        let items: Vec<Matrix> = (0..2).map(|i| Matrix::new(T, C, x[i * T * C..(i + 1) * T * C].to_vec()).unwrap()).collect();
        for mask in masks() {
            let options = ForwardOptions { mask: mask.clone(), batched: true, ..ForwardOptions::default() };
            same_bits("layer forward f32", || {
                let mut layer = MultiHeadAttention::new(&config).unwrap();
                let b = Batch::new(&x32[..], 2, T, C);
                bits32(&layer.forward_batch(b, b, b, &options).unwrap().output)
            });
            same_bits("layer forward f64", || {
                let mut layer = MultiHeadAttention::new(&config).unwrap();
                let out = layer.forward(&items, &items, &items, &options).unwrap().output;
                out.iter().flat_map(|m| bits64(m.data())).collect::<Vec<_>>()
            });
        }
    }
}

#[test]
fn f32_training_and_its_backward_give_the_same_bits_on_any_thread_count() {
    let config = LayerConfig { kv_heads: 2, rope: Some(Rope { base: 10_000.0 }), dropout: 0.1, seed: 3, ..LayerConfig::new(C, H) };
    let (x, g) = (narrow(&data(2 * T, C, 10)), narrow(&data(2 * T, C, 11)));
    let options = ForwardOptions { mask: Mask::causal(), batched: true, training: true, ..ForwardOptions::default() };
    same_bits("f32 training step", || {
        let mut layer = MultiHeadAttention::new(&config).unwrap();
        let b = Batch::new(&x[..], 2, T, C);
        let out = layer.forward_batch(b, b, b, &options).unwrap().output;
        let grads = layer.backward_batch(Batch::new(&g[..], 2, T, C), true).unwrap();
        let params: Vec<u64> = layer.grads().unwrap().tensors().iter().flat_map(|(_, t)| bits64(t)).collect();
        (bits32(&out), bits32(&grads.query), bits32(&grads.key), bits32(&grads.value), params)
    });
}

/// Training without dropout splits the batch items over threads (forward and backward, each item
/// into gradients of its own, added in item order): five items (a ragged last round on 2 and 3
/// threads), biases and grouped K/V heads, in f32 and f64, give the bits of one thread.
#[test]
fn training_split_over_batch_items_gives_the_same_bits_on_any_thread_count() {
    const B: usize = 5;
    let config = LayerConfig { kv_heads: 2, bias: true, seed: 4, ..LayerConfig::new(C, H) };
    let (x, g) = (data(B * T, C, 12), data(B * T, C, 13));
    let (x32, g32) = (narrow(&x), narrow(&g));
    // without returned weights the forward splits too; with them (not split) the same weights come back
    let options = ForwardOptions { mask: Mask::causal(), batched: true, training: true, ..ForwardOptions::default() };
    let with_weights = ForwardOptions { need_weights: true, ..options.clone() };
    let params = |layer: &MultiHeadAttention| -> Vec<u64> { layer.grads().unwrap().tensors().iter().flat_map(|(_, t)| bits64(t)).collect() };
    same_bits("f32 training split over items", || {
        let mut layer = MultiHeadAttention::new(&config).unwrap();
        let b = Batch::new(&x32[..], B, T, C);
        let weights = layer.forward_batch(b, b, b, &with_weights).unwrap().weights.unwrap();
        let out = layer.forward_batch(b, b, b, &options).unwrap();
        let grads = layer.backward_batch(Batch::new(&g32[..], B, T, C), true).unwrap();
        (bits32(&out.output), bits32(&weights), bits32(&grads.query), bits32(&grads.key), bits32(&grads.value), params(&layer))
    });
    same_bits("f64 training split over items", || {
        let mut layer = MultiHeadAttention::new(&config).unwrap();
        let b = Batch::new(&x[..], B, T, C);
        let weights = layer.forward_batch(b, b, b, &with_weights).unwrap().weights.unwrap();
        let out = layer.forward_batch(b, b, b, &options).unwrap();
        let grads = layer.backward_batch(Batch::new(&g[..], B, T, C), true).unwrap();
        (bits64(&out.output), bits64(&weights), bits64(&grads.query), bits64(&grads.key), bits64(&grads.value), params(&layer))
    });
    // the first failing item is the one named, as in order: item 3's gradient overflows
    let mut huge = g32.clone();
    huge[3 * T * C..4 * T * C].iter_mut().for_each(|v| *v *= 3e38);
    let failing = || {
        let mut layer = MultiHeadAttention::new(&config).unwrap();
        let b = Batch::new(&x32[..], B, T, C);
        layer.forward_batch(b, b, b, &options).unwrap();
        layer.backward_batch(Batch::new(&huge[..], B, T, C), true).err().map(|e| e.to_string())
    };
    let message = with_threads(3, failing).expect("an overflow");
    assert!(message.contains("in batch item 3:"), "{message}");
    same_bits("the failing item", failing);
}

#[test]
fn the_working_set_check_counts_what_the_threads_hold() {
    use attention_lab::engine::{workspace_shapes, HeadShape};
    let shape = HeadShape::new(T, T, H, 2, C / H);
    let values = |shapes: [(usize, usize); 4]| shapes.iter().map(|(r, c)| r * c).sum::<usize>();
    let one = with_threads(1, || values(workspace_shapes(shape)));
    let three = with_threads(3, || values(workspace_shapes(shape)));
    // both K/V heads packed, three blocks of scores and every context row, on top of one head's workspace
    assert!(three > one + T * C + 2 * 64 * T, "{three} vs {one}");
}

/// Issue 21: the f32 Transformer's trainStep (its products split over threads) on 8 induction sequences:
/// the same loss bits, losses and state after three steps on 1, 2 and 3 threads, for the default
/// model and for one with every option.
#[test]
fn the_f32_transformer_trains_to_the_same_bits_on_any_thread_count() {
    use attention_lab::model::adamw::AdamW;
    use attention_lab::model::data::repeated_tokens;
    use attention_lab::model::{ModelConfig, Positions, Tokens, Transformer};
    // batch 8 (392 rows): past the products' row blocks, and quick in a debug build
    let task = repeated_tokens(32, 24, 8, 7).unwrap();
    for full in [false, true] {
        let config = ModelConfig {
            seed: 1,
            positions: if full { Positions::Rope } else { Positions::Shortformer },
            mlp: full,
            layer_norm: full,
            bias: full,
            ..ModelConfig::new(32, 64, 64, 4, 2)
        };
        let values: Vec<f64> = task.tokens.iter().map(|&t| t as f64).collect();
        let tokens = Tokens::check(&values, task.batch, task.t, &config).unwrap();
        same_bits(if full { "f32 Transformer with every option" } else { "f32 Transformer" }, || {
            let mut model = Transformer::<f32>::new(config.clone()).unwrap();
            let mut losses = Vec::new();
            for _ in 0..3 {
                let (loss, each) = model.train_step(&tokens, &AdamW::new(1e-3)).unwrap();
                losses.push(loss.to_bits());
                losses.extend(bits64(&each));
            }
            let params: Vec<u32> = model.params().iter().flat_map(|p| bits32(&p.data)).collect();
            let moments: Vec<u32> = model.moments().m.iter().chain(&model.moments().v).flat_map(|m| bits32(m)).collect();
            (losses, params, moments, model.moments().step)
        });
    }
}

/// A seeded Llama checkpoint in the Hugging Face layout (F32): its config.json and model.safetensors.
fn llama_checkpoint(v: usize, c: usize, heads: usize, kv_heads: usize, ff: usize, layers: usize, positions: usize) -> (String, Vec<u8>) {
    let d = c / heads;
    let mut tensors: Vec<(String, Vec<usize>)> = vec![("model.embed_tokens.weight".into(), vec![v, c])];
    for l in 0..layers {
        let p = format!("model.layers.{l}.");
        for (name, shape) in [
            ("input_layernorm.weight", vec![c]),
            ("self_attn.q_proj.weight", vec![heads * d, c]),
            ("self_attn.k_proj.weight", vec![kv_heads * d, c]),
            ("self_attn.v_proj.weight", vec![kv_heads * d, c]),
            ("self_attn.o_proj.weight", vec![c, heads * d]),
            ("post_attention_layernorm.weight", vec![c]),
            ("mlp.gate_proj.weight", vec![ff, c]),
            ("mlp.up_proj.weight", vec![ff, c]),
            ("mlp.down_proj.weight", vec![c, ff]),
        ] {
            tensors.push((format!("{p}{name}"), shape));
        }
    }
    tensors.push(("model.norm.weight".into(), vec![c]));
    tensors.push(("lm_head.weight".into(), vec![v, c]));
    let (mut header, mut data, mut offset) = (Vec::new(), Vec::new(), 0);
    for (i, (name, shape)) in tensors.iter().enumerate() {
        let n: usize = shape.iter().product();
        let scale = if shape.len() == 1 { 0.0 } else { 1.0 / (shape[1] as f64).sqrt() };
        let values = seeded_matrix(1, n, 100 + i as u64);
        for &x in values.data() {
            // norm gains near 1, weights scaled by 1/√fan_in
            let value = if shape.len() == 1 { 1.0 + 0.25 * x } else { scale * x };
            data.extend_from_slice(&(value as f32).to_le_bytes());
        }
        let dims: Vec<String> = shape.iter().map(|s| s.to_string()).collect();
        header.push(format!("\"{name}\":{{\"dtype\":\"F32\",\"shape\":[{}],\"data_offsets\":[{offset},{}]}}", dims.join(","), offset + 4 * n));
        offset += 4 * n;
    }
    let header = format!("{{{}}}", header.join(","));
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(&data);
    let config = format!(
        r#"{{"model_type":"llama","vocab_size":{v},"hidden_size":{c},"intermediate_size":{ff},"num_hidden_layers":{layers},"num_attention_heads":{heads},"num_key_value_heads":{kv_heads},"max_position_embeddings":{positions},"rope_theta":10000,"tie_word_embeddings":false}}"#
    );
    (config, bytes)
}

#[test]
fn a_loaded_f32_checkpoint_forwards_and_generates_to_the_same_bits_on_any_thread_count() {
    use attention_lab::model::{Tokens, Transformer};
    use attention_lab::pretrained::json::parse;
    use attention_lab::pretrained::model::{argmax, load};
    // T = 150 per sequence, 2 sequences: past one query block and the products' row blocks
    let (config, bytes) = llama_checkpoint(50, 32, 4, 2, 48, 2, 160);
    let config = parse(&config).unwrap();
    let tokens: Vec<u32> = (0..2 * T as u32).map(|i| (i * 7 + i / 13) % 50).collect();
    same_bits("a loaded f32 Llama checkpoint", || {
        let mut model: Transformer<f32> = load(&config, &bytes).unwrap();
        let values: Vec<f64> = tokens.iter().map(|&x| x as f64).collect();
        let checked = Tokens::check(&values, 2, T, model.config()).unwrap();
        let out = model.forward_all(&checked, true, true, None, &[]).unwrap();
        let weights: Vec<u32> = out.weights.unwrap().iter().flat_map(|w| bits32(w)).collect();
        let hidden: Vec<u32> = out.hidden.unwrap().iter().flat_map(|h| bits32(h)).collect();
        let generated = model.generate(&tokens[..100], 8, argmax, |_, _| Ok(())).unwrap();
        (bits32(&out.logits), weights, hidden, generated)
    });
}

/// A float32 model above `PACKED_MIN_PARAMETERS` keeps its layers' weights and its tied W_E packed between
/// inference calls: its forward (many rows: row blocks, then column groups) and its decoding (one row) give the
/// same bits on any thread count, and the row-major products' bits (a forward with an all-on head mask switches
/// the weights back to row-major first).
#[test]
fn a_packed_f32_model_gives_the_row_major_bits_on_any_thread_count() {
    use attention_lab::model::{ModelConfig, Tokens, Transformer, PACKED_MIN_PARAMETERS};
    use attention_lab::pretrained::model::argmax;
    let config = ModelConfig { tied: true, mlp: true, layer_norm: true, bias: true, seed: 9, ..ModelConfig::new(4099, 160, 256, 4, 2) };
    let tokens: Vec<f64> = (0..2 * T as u64).map(|i| ((i * 7919 + i / 13) % 4099) as f64).collect();
    let all_on = vec![vec![true; 4]; 2];
    same_bits("a packed f32 model", || {
        let mut model = Transformer::<f32>::new(config.clone()).unwrap();
        assert!(model.num_parameters() >= PACKED_MIN_PARAMETERS);
        let checked = Tokens::check(&tokens, 2, T, model.config()).unwrap();
        let packed = model.forward(&checked, false, None).unwrap().logits;
        assert!(model.is_packed());
        let generated = model.generate(&[4098, 17, 4097], 6, argmax, |_, _| Ok(())).unwrap();
        let row_major = model.forward(&checked, false, Some(&all_on)).unwrap().logits;
        assert!(!model.is_packed());
        assert!(bits32(&packed) == bits32(&row_major), "packed and row-major logits differ");
        (bits32(&packed), generated)
    });
}
