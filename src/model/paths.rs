//! Path ablation: `forward(tokens, { pathMask })` removes what head (l1, i) wrote into the
//! residual stream from one input (query, key or value) of head (l2, j), l1 < l2, and from
//! nothing else: every other head, and head (l2, j)'s other inputs, read the stream unchanged.
//!
//! For a layer with a cut path into head j (step 4 of the model, see the module docs of
//! [`crate::model`]):
//!
//! ```text
//! out_i   = head i alone (W_O's other rows and b_O zero) on its inputs     (N, C)
//! x_in    = x − Σ out_(l1, i) over the cuts (l1, i) → (l2, j) of that input
//! a_in    = LN1(x_in) or x_in;   query/key input a_in (+ W_pos[t]), value input a_in
//! layer l2 output = the layer without its cut heads (b_O kept) on (q, k, v) + Σ_j out_j on its own inputs
//! ```
//!
//! `out_(l1, i)` is what head (l1, i) actually wrote in this pass (after its own cut inputs, and 0
//! when `headMask` switches it off). A layer whose heads are summed one by one like this may
//! differ from the plain forward in the last bits (the order of the sum), never more.

use super::{ablated, batch, ModelConfig, Positions, Transformer};
use crate::error::{AttentionError, Result};
use crate::layer::{BatchOutput, ForwardOptions, LayerKernel, MultiHeadAttention};
use crate::model::ops;

/// Which input of the later head a cut path feeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathInput {
    Query,
    Key,
    Value,
}

impl PathInput {
    /// The JS name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Query => "query",
            Self::Key => "key",
            Self::Value => "value",
        }
    }

    /// From the JS name.
    pub fn parse(name: &str) -> Option<Self> {
        [Self::Query, Self::Key, Self::Value].into_iter().find(|p| p.name() == name)
    }
}

/// One cut: head `from = (l1, i)`'s output removed from input `input` of head `to = (l2, j)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathCut {
    pub from: (usize, usize),
    pub to: (usize, usize),
    pub input: PathInput,
}

impl ModelConfig {
    /// RangeError unless both heads exist and `from` is in an earlier layer than `to`.
    pub fn check_path_cut(&self, cut: &PathCut, place: &str) -> Result<()> {
        let (l, h) = (self.num_layers, self.num_heads);
        for (key, (layer, head)) in [("from", cut.from), ("to", cut.to)] {
            if layer >= l || head >= h {
                return Err(AttentionError::range_error(format!(
                    "{place}.{key} is [{layer}, {head}]; expected [layer, head] with layer 0 … numLayers − 1 = {} and head 0 … numHeads − 1 = {}",
                    l as i64 - 1,
                    h as i64 - 1
                )));
            }
        }
        if cut.from.0 >= cut.to.0 {
            return Err(AttentionError::range_error(format!(
                "{place}.from is in layer {} and {place}.to in layer {}; a head reads only what heads of earlier layers wrote, so from's layer must be lower",
                cut.from.0, cut.to.0
            )));
        }
        Ok(())
    }
}

/// A copy of `layer` in which only head `head` writes: W_O's other rows and b_O are zero.
fn head_only(layer: &MultiHeadAttention, heads: usize, head: usize) -> Result<MultiHeadAttention> {
    let on: Vec<bool> = (0..heads).map(|i| i == head).collect();
    let mut copy = ablated(layer, &on)?;
    if copy.weights().biases.is_some() {
        let mut weights = copy.weights().into_owned();
        if let Some(b) = weights.biases.as_mut() {
            b.b_o.fill(0.0);
        }
        copy.set_weights(weights)?;
    }
    Ok(copy)
}

/// What step 4 of a layer with cut paths needs from the forward around it.
pub(super) struct LayerInputs<'a, F> {
    /// The residual stream `(N, C)` and the layer's inputs from it: `a` (values) and `qk` (queries and keys).
    pub x: &'a [F],
    pub a: &'a [F],
    pub qk: &'a [F],
    /// W_pos's rows `(N, C)` (shortformer and learned).
    pub positions: Option<&'a [F]>,
    pub batch: usize,
    pub t: usize,
    /// `headMask`'s row for this layer when it switches a head off.
    pub mask: Option<&'a [bool]>,
}

impl<F: LayerKernel> Transformer<F> {
    /// Step 4 of layer `l` when a cut path starts or ends there. `written` collects what each
    /// source head wrote, for the later layers.
    pub(super) fn attend_with_cuts(&self, l: usize, inputs: &LayerInputs<F>, options: &ForwardOptions, cuts: &[PathCut], written: &mut Vec<((usize, usize), Vec<F>)>) -> Result<BatchOutput<F>> {
        let (h, c) = (self.config.num_heads, self.config.embed_dim);
        let (b, t) = (inputs.batch, inputs.t);
        let on = |j: usize| inputs.mask.is_none_or(|m| m[j]);
        let targets: Vec<usize> = (0..h).filter(|&j| on(j) && cuts.iter().any(|cut| cut.to == (l, j))).collect();
        let mut heads_alone: Vec<Option<BatchOutput<F>>> = (0..h).map(|_| None).collect();
        let result = if targets.is_empty() {
            let mut layer = match inputs.mask {
                Some(mask) => ablated(&self.attention[l], mask)?,
                None => self.attention[l].clone(),
            };
            layer.forward_batch(batch(inputs.qk, b, t, c), batch(inputs.qk, b, t, c), batch(inputs.a, b, t, c), options)?
        } else {
            let rest: Vec<bool> = (0..h).map(|j| on(j) && !targets.contains(&j)).collect();
            let mut result = ablated(&self.attention[l], &rest)?.forward_batch(batch(inputs.qk, b, t, c), batch(inputs.qk, b, t, c), batch(inputs.a, b, t, c), options)?;
            for &j in &targets {
                let alone = self.head_alone(l, j, inputs, options, cuts, written)?;
                ops::add_into(&mut result.output, &alone.output);
                if let (Some(all), Some(own)) = (result.weights.as_mut(), alone.weights.as_ref()) {
                    let square = t * t;
                    for item in 0..b {
                        let at = (item * h + j) * square;
                        all[at..at + square].copy_from_slice(&own[at..at + square]);
                    }
                }
                heads_alone[j] = Some(alone);
            }
            result
        };
        let mut sources: Vec<usize> = cuts.iter().filter(|cut| cut.from.0 == l).map(|cut| cut.from.1).collect();
        sources.sort_unstable();
        sources.dedup();
        for i in sources {
            let out = match (on(i), heads_alone[i].take()) {
                (false, _) => vec![F::ZERO; b * t * c],
                (true, Some(alone)) => alone.output,
                (true, None) => self.head_alone(l, i, inputs, options, cuts, written)?.output,
            };
            written.push(((l, i), out));
        }
        Ok(result)
    }

    /// Head `j` of layer `l` alone on its own inputs (the stream less the cut sources' outputs).
    fn head_alone(&self, l: usize, j: usize, inputs: &LayerInputs<F>, options: &ForwardOptions, cuts: &[PathCut], written: &[((usize, usize), Vec<F>)]) -> Result<BatchOutput<F>> {
        let (b, t, c) = (inputs.batch, inputs.t, self.config.embed_dim);
        let stream_without = |input: PathInput| -> Option<Vec<F>> {
            let removed: Vec<&Vec<F>> = cuts
                .iter()
                .filter(|cut| cut.to == (l, j) && cut.input == input)
                .filter_map(|cut| written.iter().find(|(head, _)| *head == cut.from).map(|(_, out)| out))
                .collect();
            (!removed.is_empty()).then(|| {
                let mut x = inputs.x.to_vec();
                for out in removed {
                    x.iter_mut().zip(out).for_each(|(x, &o)| *x = *x - o);
                }
                x
            })
        };
        let query_key = |x: Option<Vec<F>>| -> Vec<F> {
            match x {
                None => inputs.qk.to_vec(),
                Some(x) => {
                    let (mut a, _) = self.norm(Some(l), "ln1", &x);
                    if let (Positions::Shortformer, Some(pos)) = (self.config.positions, inputs.positions) {
                        ops::add_into(&mut a, pos);
                    }
                    a
                }
            }
        };
        let q = query_key(stream_without(PathInput::Query));
        let k = query_key(stream_without(PathInput::Key));
        let v = match stream_without(PathInput::Value) {
            None => inputs.a.to_vec(),
            Some(x) => self.norm(Some(l), "ln1", &x).0,
        };
        head_only(&self.attention[l], self.config.num_heads, j)?.forward_batch(batch(&q, b, t, c), batch(&k, b, t, c), batch(&v, b, t, c), options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::init::SplitMix64;
    use crate::model::{ModelConfig, Tokens};

    fn tokens(config: &ModelConfig, batch: usize, t: usize, seed: u64) -> Tokens {
        let mut rng = SplitMix64::new(seed);
        let values: Vec<f64> = (0..batch * t).map(|_| (rng.next_u64() % config.vocab_size as u64) as f64).collect();
        Tokens::check(&values, batch, t, config).unwrap()
    }

    fn cut(from: (usize, usize), to: (usize, usize), input: PathInput) -> PathCut {
        PathCut { from, to, input }
    }

    #[test]
    fn a_cut_from_a_switched_off_head_changes_nothing_but_rounding() {
        for (positions, layer_norm, bias) in [(Positions::Shortformer, false, false), (Positions::Learned, true, true), (Positions::Rope, false, true)] {
            let config = ModelConfig { positions, layer_norm, bias, seed: 9, ..ModelConfig::new(9, 8, 8, 2, 2) };
            let mut model = Transformer::<f64>::new(config.clone()).unwrap();
            let toks = tokens(&config, 2, 7, 4);
            let mask = vec![vec![false, true], vec![true, true]];
            let plain = model.forward(&toks, true, Some(&mask)).unwrap();
            let cuts = [cut((0, 0), (1, 1), PathInput::Key), cut((0, 0), (1, 0), PathInput::Value)];
            let with = model.forward_with_cuts(&toks, true, Some(&mask), &cuts).unwrap();
            for (a, e) in with.logits.iter().zip(&plain.logits) {
                assert!((a - e).abs() <= 1e-12 * (1.0 + e.abs()), "{positions:?}: {a} vs {e}");
            }
            assert!((with.loss - plain.loss).abs() < 1e-12);
        }
    }

    #[test]
    fn a_cut_changes_only_the_later_head_it_names() {
        let config = ModelConfig { seed: 2, ..ModelConfig::new(9, 8, 8, 2, 2) };
        let mut model = Transformer::<f64>::new(config.clone()).unwrap();
        let toks = tokens(&config, 1, 8, 6);
        let plain = model.forward(&toks, true, None).unwrap();
        let with = model.forward_with_cuts(&toks, true, None, &[cut((0, 1), (1, 0), PathInput::Key)]).unwrap();
        let (pw, ww) = (plain.weights.unwrap(), with.weights.unwrap());
        let square = 64;
        assert_eq!(pw[0], ww[0], "layer 0 is untouched");
        assert_eq!(pw[1][square..], ww[1][square..], "head 1 of layer 1 is untouched");
        assert!(pw[1][..square].iter().zip(&ww[1][..square]).any(|(a, b)| (a - b).abs() > 1e-6), "head 0 of layer 1 reads other keys");
        // the same removal by hand: head (0, 1)'s output subtracted from the key input only is
        // what a key path cut is; a query cut differs from a key cut
        let q = model.forward_with_cuts(&toks, true, None, &[cut((0, 1), (1, 0), PathInput::Query)]).unwrap();
        assert_ne!(q.loss, with.loss);
    }

    #[test]
    fn cuts_are_checked() {
        let config = ModelConfig::new(9, 8, 8, 2, 2);
        assert!(config.check_path_cut(&cut((0, 0), (1, 1), PathInput::Key), "c").is_ok());
        let same = config.check_path_cut(&cut((1, 0), (1, 1), PathInput::Key), "options.pathMask[0]").unwrap_err().to_string();
        assert!(same.contains("from's layer must be lower"), "{same}");
        let out = config.check_path_cut(&cut((0, 2), (1, 1), PathInput::Key), "options.pathMask[0]").unwrap_err().to_string();
        assert!(out.contains("options.pathMask[0].from is [0, 2]"), "{out}");
    }
}
