//! The safetensors reader's fuzz check (`fuzz_targets/safetensors.rs`; the stable driver's
//! `--target safetensors`): the input is read twice,
//!
//! 1. as a whole file, raw: `parse` must return `Ok` or a `Range`/`Type` error, never panic;
//! 2. as a recipe: a valid file is built from the first bytes (up to 4 tensors of any dtype and
//!    small shapes, in any order of offsets, with or without `__metadata__` and padding), which
//!    must parse with exactly those tensors and read back exactly those values; then the rest of
//!    the input mutates it (flip, cut, insert, overwrite bytes of the length, header or data).
//!
//! Whenever `parse` accepts a file, the invariants the model relies on must hold: every tensor's
//! bytes lie in the data and are `numel · size(dtype)` long, no two tensors overlap, the tensors
//! cover the data, and `read`/`read_transposed` return `numel` values for float dtypes and a
//! `Type` error naming the tensor for the others.
//!
//! 3. the input as JSON text: the JSON reader and `PretrainedConfig::from_json` return a value or
//!    an error, never panic; and `load` of a small GPT-2 / Llama config (its fields
//!    drawn from the input) with every file above returns a model or a `Range`/`Type` error;
//! 4. a whole checkpoint for that config (every tensor it implies, F32 / F16 / BF16, values from the
//!    input): it loads (unless untied without its head), and its forward of any tokens is finite or a
//!    `Range` error (about a third of the stable driver's inputs load, a fifth forward).

use arbitrary::{Result, Unstructured};
use attention_lab::pretrained::config::PretrainedConfig;
use attention_lab::pretrained::json;
use attention_lab::model::Tokens;
use attention_lab::pretrained::model::load as load_model;
use attention_lab::pretrained::safetensors::{parse, Dtype, SafeTensors};
use attention_lab::AttentionError;

const NAMES: [&str; 15] = ["BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "F64", "I64", "U64"];

/// The check (see the module docs).
pub fn check(data: &[u8]) {
    invariants(data);
    if let Ok(value) = json::parse(&String::from_utf8_lossy(data)) {
        if let Err(e) = PretrainedConfig::from_json(&value) {
            assert!(matches!(e, AttentionError::Range(_) | AttentionError::Type(_)), "a State error from the config: {e}");
        }
    }
    let mut u = Unstructured::new(data);
    let config = small_config(&mut u).unwrap_or_else(|_| json::parse(r#"{"model_type":"gpt2","vocab_size":4,"n_embd":2,"n_layer":1,"n_head":1,"n_positions":2}"#).unwrap());
    load(&config, data);
    let _ = checkpoint(&mut u, &config);
    let _ = recipe(&mut u, &config);
}

/// A whole checkpoint for `config` (every tensor it implies, F32 / F16 / BF16, values drawn from the
/// input, `lm_head.weight` or not): it must load unless a value is not finite or the head is
/// missing while untied (then a Range / Type error), and then forward any tokens it accepts.
fn checkpoint(u: &mut Unstructured, config: &json::Json) -> Result<()> {
    let Ok(parsed) = PretrainedConfig::from_json(config) else { return Ok(()) };
    let mut tensors = attention_lab::pretrained::model::expected(&parsed);
    if u.arbitrary()? {
        tensors.push(("lm_head.weight".into(), vec![parsed.vocab_size, parsed.hidden_size]));
    }
    let mut header = String::from("{");
    let mut data = Vec::new();
    for (i, (name, shape)) in tensors.iter().enumerate() {
        let dtype = *u.choose(&["F32", "F16", "BF16"])?;
        let n: usize = shape.iter().product();
        let begin = data.len();
        for _ in 0..n {
            let x = f32::from(u.int_in_range(-64i8..=64)?) / 32.0;
            match dtype {
                "F32" => data.extend_from_slice(&x.to_le_bytes()),
                "F16" => data.extend_from_slice(&[0, 0x3c]), // 1.0
                _ => data.extend_from_slice(&((x.to_bits() >> 16) as u16).to_le_bytes()), // exact: x has few bits
            }
        }
        let shape: Vec<String> = shape.iter().map(|s| s.to_string()).collect();
        header.push_str(&format!("{}\"{name}\":{{\"dtype\":\"{dtype}\",\"shape\":[{}],\"data_offsets\":[{begin},{}]}}", if i > 0 { "," } else { "" }, shape.join(","), data.len()));
    }
    header.push('}');
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(&data);
    let mut model = match load_model::<f32>(config, &file[..]) {
        Ok(model) => model,
        Err(e) => {
            assert!(!parsed.tie_word_embeddings && tensors.len() == attention_lab::pretrained::model::expected(&parsed).len(), "a whole checkpoint was refused: {e}");
            return Ok(());
        }
    };
    let t = u.int_in_range(1..=3)?;
    let tokens: Vec<f64> = (0..t).map(|_| u.int_in_range(0..=parsed.vocab_size as u32).map(f64::from)).collect::<Result<_>>()?;
    let (need_weights, need_hidden) = (u.arbitrary()?, u.arbitrary()?);
    let tokens = match Tokens::check(&tokens, 1, t, model.config()) {
        Ok(tokens) => tokens,
        Err(e) => {
            assert!(matches!(e, AttentionError::Range(_)), "tokens: {e}");
            return Ok(());
        }
    };
    match model.forward_all(&tokens, need_weights, need_hidden, None, &[]) {
        Ok(out) => assert!(out.logits.iter().all(|x| x.is_finite()) && out.logits.len() == t * parsed.vocab_size),
        Err(e) => assert!(matches!(e, AttentionError::Range(_)), "forward: {e}"),
    }
    load(config, &file[..file.len() - 1]);
    Ok(())
}

/// A small config of either architecture, its sizes drawn from the input.
fn small_config(u: &mut Unstructured) -> Result<json::Json> {
    let (v, c, l, h) = (u.int_in_range(1..=6)?, 2 * u.int_in_range(1..=3)?, u.int_in_range(0..=2)?, u.int_in_range(1..=2)?);
    let text = if u.arbitrary()? {
        format!(r#"{{"model_type":"gpt2","vocab_size":{v},"n_embd":{c},"n_layer":{l},"n_head":{h},"n_positions":{}}}"#, u.int_in_range(1..=4)?)
    } else {
        format!(
            r#"{{"model_type":"llama","vocab_size":{v},"hidden_size":{c},"intermediate_size":{},"num_hidden_layers":{l},"num_attention_heads":{h},"num_key_value_heads":{},"tie_word_embeddings":{},"attention_bias":{}}}"#,
            u.int_in_range(1..=4)?,
            u.int_in_range(1..=2)?,
            u.arbitrary::<bool>()?,
            u.arbitrary::<bool>()?
        )
    };
    Ok(json::parse(&text).expect("a config written here"))
}

/// `load` never panics and refuses only with `Range` / `Type` errors.
fn load(config: &json::Json, bytes: &[u8]) {
    if let Err(e) = load_model::<f32>(config, bytes) {
        assert!(matches!(e, AttentionError::Range(_) | AttentionError::Type(_)), "a State error from load: {e}");
    }
}

fn expect_refusal(e: &AttentionError) {
    assert!(matches!(e, AttentionError::Range(_) | AttentionError::Type(_)), "a State error from the reader: {e}");
    assert!(e.message().starts_with("weights (a .safetensors file): "), "a message that does not say what it is about: {e}");
}

fn invariants(bytes: &[u8]) -> Option<SafeTensors<'_>> {
    match parse(bytes) {
        Err(e) => {
            expect_refusal(&e);
            None
        }
        Ok(st) => {
            let header = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
            let data_len = bytes.len() - 8 - header;
            let mut spans: Vec<(usize, usize)> = st.tensors.iter().map(|t| (t.begin, t.end)).collect();
            spans.sort();
            let mut at = 0;
            for (b, e) in spans {
                assert_eq!(b, at, "a hole or an overlap was accepted");
                at = e;
            }
            assert_eq!(at, data_len, "the tensors do not cover the data");
            for t in &st.tensors {
                assert!(t.end <= data_len);
                assert_eq!(t.end - t.begin, t.numel() * t.dtype.size());
                let float = matches!(t.dtype, Dtype::F32 | Dtype::F16 | Dtype::BF16);
                match st.read::<f32>(t) {
                    Ok(v) => assert!(float && v.len() == t.numel()),
                    Err(e) => {
                        assert!(!float, "a float tensor was refused: {e}");
                        expect_refusal(&e);
                        assert!(e.message().contains(&format!("\"{}\"", t.name)), "the refusal does not name the tensor: {e}");
                    }
                }
                if float && t.shape.len() == 2 {
                    assert_eq!(st.read_transposed::<f64>(t).unwrap().len(), t.numel());
                }
            }
            Some(st)
        }
    }
}

fn recipe(u: &mut Unstructured, config: &json::Json) -> Result<()> {
    let count = u.int_in_range(0..=4)?;
    let mut specs: Vec<(String, &str, Vec<usize>, Vec<u8>)> = Vec::new();
    let names = ["wte.weight", "wpe.weight", "h.0.ln_1.weight", "model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"];
    for i in 0..count {
        let dtype = *u.choose(&NAMES)?;
        let rank = u.int_in_range(0..=3)?;
        let shape: Vec<usize> = (0..rank).map(|_| u.int_in_range(0..=3)).collect::<Result<_>>()?;
        let size = Dtype::parse(dtype).unwrap().size() * shape.iter().product::<usize>();
        let bytes: Vec<u8> = (0..size).map(|_| u.arbitrary()).collect::<Result<_>>()?;
        let name = if u.arbitrary()? { u.choose(&names)?.to_string() } else { format!("t{i}.weight") };
        if specs.iter().any(|(n, ..)| *n == name) {
            continue;
        }
        specs.push((name, dtype, shape, bytes));
    }
    // the data in a shuffled order of tensors
    let count = specs.len();
    let mut order: Vec<usize> = (0..count).collect();
    for i in (1..order.len()).rev() {
        let j = u.int_in_range(0..=i)?;
        order.swap(i, j);
    }
    let mut offsets = vec![(0, 0); count];
    let mut data = Vec::new();
    for &i in &order {
        offsets[i] = (data.len(), data.len() + specs[i].3.len());
        data.extend_from_slice(&specs[i].3);
    }
    let mut header = String::from("{");
    if u.arbitrary()? {
        header.push_str("\"__metadata__\":{\"format\":\"pt\"},");
    }
    for (i, (name, dtype, shape, _)) in specs.iter().enumerate() {
        let shape: Vec<String> = shape.iter().map(|s| s.to_string()).collect();
        header.push_str(&format!("\"{name}\":{{\"dtype\":\"{dtype}\",\"shape\":[{}],\"data_offsets\":[{},{}]}},", shape.join(","), offsets[i].0, offsets[i].1));
    }
    if header.ends_with(',') {
        header.pop();
    }
    header.push('}');
    for _ in 0..u.int_in_range(0..=7)? {
        header.push(' ');
    }
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(&data);
    {
        let st = invariants(&file).expect("a well-formed file was refused");
        assert_eq!(st.tensors.len(), count);
        for (name, dtype, shape, bytes) in &specs {
            let t = st.get(name).expect("every tensor is listed");
            assert_eq!((t.dtype.name(), &t.shape), (*dtype, shape));
            assert_eq!(st.bytes(t), &bytes[..]);
        }
    }
    load(config, &file);
    // mutations
    for _ in 0..u.int_in_range(1..=4)? {
        if file.is_empty() {
            break;
        }
        let at = u.int_in_range(0..=file.len() - 1)?;
        match u.int_in_range(0..=4)? {
            0 => file[at] ^= 1 << u.int_in_range(0..=7)?,
            1 => file.truncate(at),
            2 => file.insert(at, u.arbitrary()?),
            3 => {
                file.remove(at);
            }
            _ => file[at] = *u.choose(b"{}[]\",:0123456789- ")?,
        }
        invariants(&file);
        load(config, &file);
    }
    Ok(())
}
