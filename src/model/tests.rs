use super::*;
use crate::testing::assert_within_bounds;

fn tokens(config: &ModelConfig, batch: usize, t: usize, seed: u64) -> Tokens {
    let mut rng = SplitMix64::new(seed);
    let values: Vec<f64> = (0..batch * t).map(|_| (rng.next_u64() % config.vocab_size as u64) as f64).collect();
    Tokens::check(&values, batch, t, config).unwrap()
}

fn small(positions: Positions, mlp: bool, layer_norm: bool, bias: bool) -> ModelConfig {
    ModelConfig { positions, mlp, layer_norm, bias, seed: 3, ..ModelConfig::new(7, 6, 4, 2, 2) }
}

/// Every parameter's gradient against central differences of the f64 loss.
fn check_against_differences(config: ModelConfig) {
    let mut model = Transformer::<f64>::new(config.clone()).unwrap();
    let toks = tokens(&config, 2, 5, 11);
    let (loss, _, grads) = model.gradients(&toks).unwrap();
    assert!(loss.is_finite() && loss > 0.0);
    let h = 1e-5;
    for (i, p) in model.params().to_vec().iter().enumerate() {
        // a few entries of each parameter (all of the small ones)
        let picks: Vec<usize> = (0..p.data.len()).step_by((p.data.len() / 6).max(1)).collect();
        let (mut numeric, mut analytic) = (vec![], vec![]);
        for &j in &picks {
            let shifted = |delta: f64| {
                let mut m = model.clone();
                let mut values = p.data.clone();
                values[j] += delta;
                m.set_params(vec![(p.layer, p.name.to_string(), values)], None).unwrap();
                m.forward(&toks, false, None).unwrap().loss
            };
            numeric.push((shifted(h) - shifted(-h)) / (2.0 * h));
            analytic.push(grads[i][j]);
        }
        let bound: Vec<f64> = numeric.iter().map(|g| 2e-7 * (1.0 + g.abs())).collect();
        assert_within_bounds(&format!("{:?} {}", config.positions, p.path()), &analytic, &numeric, &bound);
    }
}

#[test]
fn gradients_match_central_differences_attention_only() {
    for positions in [Positions::Shortformer, Positions::Learned, Positions::Rope, Positions::None] {
        check_against_differences(small(positions, false, false, false));
    }
}

#[test]
fn gradients_match_central_differences_with_mlp_layer_norm_and_biases() {
    check_against_differences(small(Positions::Shortformer, true, true, true));
    check_against_differences(small(Positions::Learned, true, false, true));
}

#[test]
fn gradients_match_central_differences_with_a_checkpoints_parts() {
    // Llama's block: RMSNorm, the SiLU-gated MLP (with and without biases), one K/V head for two query
    // heads, RoPE with another base, W_U tied to W_E; and GPT-2's with a width other than 4C, tied
    for (norm, mlp_kind, mlp_bias, kv_heads, positions) in [
        (NormKind::Rms, MlpKind::Gated, false, 1, Positions::Rope),
        (NormKind::Rms, MlpKind::Gated, true, 2, Positions::None),
        (NormKind::Layer, MlpKind::Gelu, true, 2, Positions::Learned),
    ] {
        let config = ModelConfig {
            norm,
            norm_eps: 1e-6,
            mlp_kind,
            mlp_width: 6,
            mlp_bias,
            kv_heads,
            rope_base: 500.0,
            tied: true,
            bias: true,
            ..small(positions, true, true, false)
        };
        check_against_differences(config);
    }
}

#[test]
fn the_checkpoint_parts_name_their_parameters() {
    let config = ModelConfig { norm: NormKind::Rms, mlp_kind: MlpKind::Gated, mlp_width: 6, mlp_bias: false, kv_heads: 1, tied: true, ..small(Positions::Rope, true, true, false) };
    let model = Transformer::<f64>::new(config).unwrap();
    let names: Vec<String> = model.params().iter().map(|p| format!("{} {:?}", p.path(), p.shape)).collect();
    assert_eq!(
        names[..9],
        ["W_E [7, 4]", "layers[0].W_Q [4, 4]", "layers[0].W_K [4, 2]", "layers[0].W_V [4, 2]", "layers[0].W_O [4, 4]", "layers[0].ln1_w [4]", "layers[0].ln2_w [4]", "layers[0].W_gate [4, 6]", "layers[0].W_up [4, 6]"]
    );
    assert_eq!(names.last().unwrap(), "ln_final_w [4]", "tied: no W_U");
}

#[test]
fn loss_is_the_mean_next_token_cross_entropy() {
    let config = small(Positions::Learned, false, false, false);
    let mut model = Transformer::<f64>::new(config.clone()).unwrap();
    let toks = tokens(&config, 2, 4, 5);
    let out = model.forward(&toks, false, None).unwrap();
    assert_eq!(out.losses.len(), 2 * 3);
    // by hand from the logits: −log softmax(logits[b, t])[token[b, t + 1]]
    let v = config.vocab_size;
    for b in 0..2 {
        for t in 0..3 {
            let row = &out.logits[(b * 4 + t) * v..(b * 4 + t + 1) * v];
            let lse = row.iter().map(|x| x.exp()).sum::<f64>().ln();
            let want = lse - row[toks.data[b * 4 + t + 1] as usize];
            assert!((out.losses[b * 3 + t] - want).abs() < 1e-12);
        }
    }
    assert!((out.loss - out.losses.iter().sum::<f64>() / 6.0).abs() < 1e-15);
}

#[test]
fn one_adamw_step_is_the_formula() {
    let config = small(Positions::Shortformer, false, false, true);
    let mut model = Transformer::<f64>::new(config.clone()).unwrap();
    let toks = tokens(&config, 2, 5, 2);
    let before = model.params().to_vec();
    let (_, _, grads) = model.gradients(&toks).unwrap();
    let o = AdamW { learning_rate: 0.01, betas: (0.8, 0.99), eps: 1e-6, weight_decay: 0.1 };
    model.train_step(&toks, &o).unwrap();
    model.train_step(&toks, &o).unwrap();
    // the first step by hand (m = 0.2·g, v = 0.01·g², bias corrections 0.2 and 0.01)
    let mut again = Transformer::<f64>::new(config).unwrap();
    again.train_step(&toks, &o).unwrap();
    for ((p0, p1), g) in before.iter().zip(again.params()).zip(&grads) {
        for ((&x0, &x1), &g) in p0.data.iter().zip(&p1.data).zip(g) {
            let decayed = if p0.decays() { x0 * (1.0 - 0.01 * 0.1) } else { x0 };
            let m = 0.2 * g;
            let v = 0.01 * g * g;
            let want = decayed - (0.01 / 0.2) * (m / (v.sqrt() / 0.01f64.sqrt() + 1e-6));
            assert!((x1 - want).abs() <= 1e-15 * (1.0 + want.abs()), "{}: {x1} vs {want}", p0.path());
        }
    }
    assert_eq!(again.moments().step, 1);
    assert_eq!(model.moments().step, 2);
}

#[test]
fn a_refused_call_changes_nothing() {
    let config = small(Positions::Shortformer, false, false, false);
    let mut model = Transformer::<f32>::new(config.clone()).unwrap();
    let toks = tokens(&config, 2, 5, 2);
    model.train_step(&toks, &AdamW::new(1e-3)).unwrap();
    let (params, moments) = (model.params().to_vec(), model.moments().clone());
    let bad = AdamW { learning_rate: f64::NAN, ..AdamW::new(1e-3) };
    assert!(model.train_step(&toks, &bad).unwrap_err().to_string().contains("options.learningRate is NaN"));
    let huge = AdamW { learning_rate: 1e300, ..AdamW::new(1e-3) };
    assert!(matches!(model.train_step(&toks, &huge), Err(AttentionError::Range(_))));
    // an eps that is 0 in float32 (it blamed the learning rate before)
    let tiny = AdamW { eps: 5e-324, ..AdamW::new(1e-3) };
    assert!(model.train_step(&toks, &tiny).unwrap_err().to_string().contains("which rounds to 0 in a float32 model"));
    assert!(model.set_params(vec![(Some(1), "W_Q".into(), vec![0.0; 3])], None).unwrap_err().to_string().contains("layers[1].W_Q has 3 entries"));
    assert!(model.set_params(vec![(None, "W_X".into(), vec![])], None).is_err());
    assert_eq!(model.params(), &params[..]);
    assert_eq!(model.moments(), &moments);
    // and the model still trains
    model.train_step(&toks, &AdamW::new(1e-3)).unwrap();
    assert_eq!(model.moments().step, 2);
}

#[test]
fn a_wide_vocabulary_is_counted_once_not_per_layer() {
    // GPT-2's vocabulary and depth at a small width: T = 128 (about 12.9 M logit values, counted once)
    // was refused when the logits were counted in each of the 13 blocks' share (about 167 M values)
    let config = ModelConfig { seed: 1, ..ModelConfig::new(50257, 128, 8, 2, 12) };
    let mut model = Transformer::<f32>::new(config.clone()).unwrap();
    let out = model.forward(&tokens(&config, 1, 128, 5), false, None).unwrap();
    assert_eq!(out.logits.len(), 128 * 50257);
}

#[test]
fn tokens_are_checked_by_place() {
    let config = small(Positions::Shortformer, false, false, false);
    let err = |values: &[f64], b, t| Tokens::check(values, b, t, &config).unwrap_err().to_string();
    assert!(err(&[0.0, 1.0, 7.0, 2.0], 2, 2).contains("tokens[1][0] is 7; expected an integer in 0 … vocabSize − 1 = 6"));
    assert!(err(&[0.0, 1.5], 1, 2).contains("tokens[0][1] is 1.5"));
    assert!(err(&[0.0; 7], 1, 7).contains("T = 7"));
    assert!(err(&[0.0], 1, 1).contains("T = 1"));
}

#[test]
fn head_mask_zeroes_a_heads_output_before_w_o() {
    let config = small(Positions::Shortformer, false, false, true);
    let mut model = Transformer::<f64>::new(config.clone()).unwrap();
    let toks = tokens(&config, 1, 5, 9);
    let full = model.forward(&toks, false, None).unwrap();
    let all_on = vec![vec![true; 2]; 2];
    assert_eq!(model.forward(&toks, false, Some(&all_on)).unwrap().logits, full.logits);
    let off = vec![vec![true, false], vec![true, true]];
    let ablated = model.forward(&toks, false, Some(&off)).unwrap();
    assert_ne!(ablated.logits, full.logits);
    // the same as a model whose layer-0 W_O rows for head 1 are zero
    let mut zeroed = model.clone();
    let mut w_o = model.param(Some(0), "W_O").to_vec();
    w_o[2 * 4..4 * 4].fill(0.0);
    zeroed.set_params(vec![(Some(0), "W_O".into(), w_o)], None).unwrap();
    assert_eq!(zeroed.forward(&toks, false, None).unwrap().logits, ablated.logits);
    assert!(model.forward(&toks, false, Some(&[vec![true; 2]])).is_err());
}

#[test]
fn f32_agrees_with_f64_to_rounding() {
    let config = small(Positions::Shortformer, true, true, true);
    let mut m64 = Transformer::<f64>::new(config.clone()).unwrap();
    let mut m32 = Transformer::<f32>::new(config.clone()).unwrap();
    let toks = tokens(&config, 2, 6, 4);
    let (l64, _, g64) = m64.gradients(&toks).unwrap();
    let (l32, _, g32) = m32.gradients(&toks).unwrap();
    assert!((l64 - l32).abs() < 1e-5 * l64, "{l64} vs {l32}");
    for (a, b) in g64.iter().zip(&g32) {
        for (&x, &y) in a.iter().zip(b) {
            assert!((x - f64::from(y)).abs() < 1e-4 * (1.0 + x.abs()), "{x} vs {y}");
        }
    }
}

#[test]
fn seeded_and_deterministic() {
    let config = small(Positions::Shortformer, false, false, false);
    let toks = tokens(&config, 2, 5, 1);
    let run = || {
        let mut m = Transformer::<f32>::new(config.clone()).unwrap();
        (0..3).map(|_| m.train_step(&toks, &AdamW::new(1e-2)).unwrap().0.to_bits()).collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
    let other = Transformer::<f32>::new(ModelConfig { seed: 4, ..config.clone() }).unwrap();
    assert_ne!(other.params()[0].data, Transformer::<f32>::new(config).unwrap().params()[0].data);
}

/// The induction task, natively: `cargo test --release -- --ignored induction --nocapture`.
#[test]
#[ignore]
fn induction_forms() {
    let config = ModelConfig { seed: 1, ..ModelConfig::new(32, 64, 64, 4, 2) };
    let mut model = Transformer::<f32>::new(config.clone()).unwrap();
    let start = std::time::Instant::now();
    let probe = data::repeated_tokens(32, 24, 16, 999).unwrap();
    let probe = Tokens { data: probe.tokens, batch: 16, t: 49 };
    for step in 0..2000 {
        let task = data::repeated_tokens(32, 24, 32, 7 + step).unwrap();
        let toks = Tokens { data: task.tokens.clone(), batch: 32, t: 49 };
        let (loss, losses) = model.train_step(&toks, &AdamW::new(1e-2)).unwrap();
        if step % 25 == 0 {
            let (mut rep, mut other) = ((0.0, 0), (0.0, 0));
            for b in 0..32 {
                for t in 0..48 {
                    let target = if task.repeated[b * 49 + t + 1] { &mut rep } else { &mut other };
                    target.0 += losses[b * 48 + t];
                    target.1 += 1;
                }
            }
            let scores = model.head_scores(&probe).unwrap();
            let best = scores[1].iter().map(|s| s.induction).fold(0.0, f64::max);
            let prev = scores[0].iter().map(|s| s.previous_token).fold(0.0, f64::max);
            eprintln!(
                "step {step} {:.1}s loss {loss:.3} repeated {:.3} other {:.3} prev {prev:.2} induction {best:.2}",
                start.elapsed().as_secs_f64(),
                rep.0 / rep.1 as f64,
                other.0 / other.1 as f64
            );
            if best > 0.4 && rep.0 / (rep.1 as f64) < 0.25 * other.0 / other.1 as f64 {
                break;
            }
        }
    }
}

/// `trainStep(tokens, { learningRate: 1e30 })` on an f32 model: weights of about 1e30 are finite, but
/// the next forward's Q = x·W_Q would reach 1e60. Refused before anything changes, naming the option.
fn refused_learning_rate<F: LayerKernel>(config: &ModelConfig, learning_rate: f64) -> Option<String> {
    refused_step::<F>(config, &AdamW::new(learning_rate))
}

fn refused_step<F: LayerKernel>(config: &ModelConfig, adamw: &AdamW) -> Option<String> {
    let mut model = Transformer::<F>::new(config.clone()).unwrap();
    let toks = tokens(config, 2, 5, 4);
    model.train_step(&toks, &AdamW::new(1e-2)).unwrap();
    let (params, moments) = (model.params().to_vec(), model.moments().clone());
    match model.train_step(&toks, adamw) {
        Ok(_) => {
            model.forward(&toks, false, None).expect("an accepted step leaves a model that runs");
            None
        }
        Err(AttentionError::Range(message)) => {
            assert_eq!(model.params(), &params[..], "{message}");
            assert_eq!(model.moments(), &moments);
            model.train_step(&toks, &AdamW::new(1e-2)).expect("the model still trains");
            Some(message)
        }
        Err(other) => panic!("{other:?}"),
    }
}

#[test]
fn a_learning_rate_whose_step_the_next_forward_could_not_run_is_refused_naming_it() {
    for (positions, mlp, layer_norm, bias) in [(Positions::Shortformer, false, false, false), (Positions::Rope, true, true, true), (Positions::Learned, true, false, false)] {
        let config = small(positions, mlp, layer_norm, bias);
        let message = refused_learning_rate::<f32>(&config, 1e30).expect("1e30 is refused in f32");
        assert!(message.starts_with("options.learningRate = ") && message.contains("is too large: this AdamW step would move "), "{message}");
        assert!(message.contains("the next forward pass can overflow f32") && message.ends_with("(the model was not changed)"), "{message}");
        // a step that overflows a weight itself names the option too
        let message = refused_learning_rate::<f32>(&config, 1e39).expect("1e39 is refused in f32");
        assert!(message.starts_with("options.learningRate = ") && message.contains("the AdamW step overflows"), "{message}");
        // a weight decay that multiplies the weights by 1 − 1e-3·1e308 is named, not the learning rate
        let message = refused_step::<f32>(&config, &AdamW { weight_decay: 1e308, ..AdamW::new(1e-3) }).expect("weight decay 1e308 is refused");
        assert!(message.starts_with("options.weightDecay = 1.00e308 is too large: ") && message.ends_with("lower the weight decay (the model was not changed)"), "{message}");
        let message = refused_step::<f64>(&config, &AdamW { weight_decay: 1e308, ..AdamW::new(1e-3) }).expect("weight decay 1e308 is refused");
        assert!(message.starts_with("options.weightDecay = 1.00e308 is too large: "), "{message}");
        // f64 runs weights of 1e10, which f32 cannot (its scores would reach about 1e80), not of 1e200
        assert_eq!(refused_learning_rate::<f64>(&config, 1e10), None);
        assert!(refused_learning_rate::<f32>(&config, 1e10).is_some());
        assert!(refused_learning_rate::<f64>(&config, 1e200).expect("1e200 is refused in f64").contains("overflow f64"));
        // learning rates a model trains with are taken
        for rate in [1e-3, 1e-2, 1.0] {
            assert_eq!(refused_learning_rate::<f32>(&config, rate), None);
        }
    }
}

#[test]
fn the_forward_bound_holds_on_the_model_it_bounds() {
    // weights scaled until the bound trips: the largest scale it passes runs without overflow
    let config = small(Positions::Shortformer, true, true, true);
    let toks = tokens(&config, 2, 6, 9);
    let base = Transformer::<f32>::new(config.clone()).unwrap();
    let mut passed = 0;
    for exponent in 0..40 {
        let scale = 10f64.powi(exponent);
        let mut model = base.clone();
        let updates = base.params().iter().map(|p| (p.layer, p.name.to_string(), p.data.iter().map(|&x| (x.to_f64() * scale) as f32 + if p.shape.len() == 1 { scale as f32 } else { 0.0 }).collect())).collect();
        if model.set_params(updates, None).is_err() {
            break;
        }
        if super::bounds::forward_overflow(&config, model.params()).is_none() {
            model.forward(&toks, false, None).unwrap_or_else(|e| panic!("scale 1e{exponent} passes the bound but the forward fails: {e}"));
            passed = exponent;
        }
    }
    assert!((2..20).contains(&passed), "the bound passes up to 1e{passed}");
}

fn bits<F: Real>(values: &[F]) -> Vec<u64> {
    values.iter().map(|x| x.to_f64().to_bits()).collect()
}

/// A float32 model whose layers' weights are packed ([`Transformer::pack_weights`]) gives the row-major
/// model's bits: the forward (many rows: the packed product; its attention weights and hidden states), the
/// cached decoding (one row at a time) and greedy generation; switching back ([`Transformer::row_major`])
/// gives the parameters bit for bit, and a training step after it is the row-major model's. Widths not a
/// multiple of the panels' 8 columns (C = 12, one K/V head of 6, an MLP of 20) and both MLPs, with biases;
/// GPT-2's tied W_E (V = 11: one panel of 8 tokens kept as W_Eᵀ, the last 3 rows row-major).
#[test]
fn packed_weights_give_the_row_major_bits_and_switch_back_exactly() {
    let gpt2 = ModelConfig { mlp_width: 20, ..small(Positions::Learned, true, true, true) };
    let gpt2 = ModelConfig { embed_dim: 12, num_heads: 2, vocab_size: 11, context_length: 9, tied: true, ..gpt2 };
    let llama = ModelConfig { norm: NormKind::Rms, mlp_kind: MlpKind::Gated, mlp_bias: true, kv_heads: 1, positions: Positions::Rope, tied: false, ..gpt2.clone() };
    for config in [gpt2, llama] {
        let mut plain = Transformer::<f32>::new(config.clone()).unwrap();
        assert!(plain.num_parameters() < PACKED_MIN_PARAMETERS);
        let mut packed = plain.clone();
        packed.pack_weights();
        assert!(packed.is_packed());
        let toks = tokens(&config, 2, 7, 5);
        let (a, b) = (plain.forward_all(&toks, true, true, None, &[]).unwrap(), packed.forward_all(&toks, true, true, None, &[]).unwrap());
        assert!(packed.is_packed(), "a forward keeps the weights packed");
        assert_eq!(bits(&a.logits), bits(&b.logits), "{:?} logits", config.mlp_kind);
        assert_eq!(a.loss.to_bits(), b.loss.to_bits());
        for (x, y) in a.weights.unwrap().iter().zip(&b.weights.unwrap()).chain(a.hidden.unwrap().iter().zip(&b.hidden.unwrap())) {
            assert_eq!(bits(x), bits(y));
        }
        // decoding: the prompt, then one token at a time (a one-row product of each packed weight)
        let (mut ca, mut cb) = (plain.create_caches(), packed.create_caches());
        for step in [&[3u32, 10, 4][..], &[9], &[5]] {
            assert_eq!(bits(&plain.forward_cached(step, &mut ca).unwrap()), bits(&packed.forward_cached(step, &mut cb).unwrap()));
        }
        let greedy = |logits: &[f32]| (0..logits.len()).max_by(|&i, &j| logits[i].total_cmp(&logits[j])).unwrap() as u32;
        assert_eq!(plain.generate(&[2, 7], 5, greedy, |_, _| Ok(())).unwrap(), packed.generate(&[2, 7], 5, greedy, |_, _| Ok(())).unwrap());
        // back to row-major: every parameter bit for bit, and packing again and back changes nothing
        packed.row_major();
        assert!(!packed.is_packed());
        assert_eq!(packed.params(), plain.params());
        packed.pack_weights();
        packed.row_major();
        assert_eq!(packed.params(), plain.params());
        // a training step after a packed forward (gradients switch back first) is the row-major model's
        packed.pack_weights();
        let adamw = AdamW::new(1e-2);
        assert_eq!(plain.train_step(&toks, &adamw).unwrap().0.to_bits(), packed.train_step(&toks, &adamw).unwrap().0.to_bits());
        assert!(!packed.is_packed());
        assert_eq!(packed.params(), plain.params());
        // head masks read W_O row-major: the packed model switches back and masks as the plain one does
        packed.pack_weights();
        let mask = vec![vec![true, false]; config.num_layers];
        assert_eq!(bits(&plain.forward(&toks, false, Some(&mask)).unwrap().logits), bits(&packed.forward(&toks, false, Some(&mask)).unwrap().logits));
        assert!(!packed.is_packed());
        // the circuits (one K/V head per query head) read packed weights as they are
        packed.pack_weights();
        if config.kv_heads == config.num_heads {
            assert_eq!(packed.head_circuit_matrices(1, 1), plain.head_circuit_matrices(1, 1));
        }
    }
}

/// Only float32 models of at least [`PACKED_MIN_PARAMETERS`] pack at inference; a training call switches back.
#[test]
fn only_large_float32_models_pack_at_inference() {
    let config = ModelConfig { seed: 2, ..ModelConfig::new(4096, 16, 256, 4, 2) };
    let toks = tokens(&config, 1, 6, 3);
    let mut m32 = Transformer::<f32>::new(config.clone()).unwrap();
    assert!(m32.num_parameters() >= PACKED_MIN_PARAMETERS);
    let before = m32.params().to_vec();
    m32.forward(&toks, false, None).unwrap();
    assert!(m32.is_packed());
    m32.row_major();
    assert_eq!(m32.params(), &before[..]);
    m32.generate(&[1, 2], 2, |_| 0, |_, _| Ok(())).unwrap();
    assert!(m32.is_packed());
    m32.gradients(&toks).unwrap();
    assert!(!m32.is_packed());
    let mut m64 = Transformer::<f64>::new(config.clone()).unwrap();
    m64.forward(&toks, false, None).unwrap();
    assert!(!m64.is_packed());
    let mut small32 = Transformer::<f32>::new(small(Positions::Learned, true, true, true)).unwrap();
    small32.forward(&tokens(small32.config(), 1, 4, 1), false, None).unwrap();
    assert!(!small32.is_packed());
}
