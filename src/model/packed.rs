//! A float32 model's big weights kept in the panel layout between inference calls.
//!
//! The products of a forward read a weight matrix W `(k × n)` either row-major, packing it into panels of
//! [`crate::kernels::NR`] columns as they go ([`crate::kernels::linear_f32`]; a decoding step's few rows read
//! it in place, about 16 GB/s on AMD EPYC), or already packed ([`crate::kernels::linear_prepacked_f32`], at
//! the speed of reading memory). Both give the same bits. So a large float32 model switches the layers'
//! weights (W_Q, W_K, W_V, W_O and the MLP's) to the panel layout at its first inference call (a forward
//! without head masks or cut paths, `generate`, the cached forward), **in place of** the row-major values:
//! one tensor at a time through a transient buffer of that tensor's size, so one copy of the weights is held.
//! Everything that reads the parameters row-major (`gradients`, `trainStep`, `setWeights`/`getWeights`,
//! `getState`/`setState`, head masks, cut paths, the circuits) switches them back first ([`Transformer::row_major`]).
//!
//! A tied W_E `(V × C)`, whose transpose the unembedding reads, is kept as the panels of W_Eᵀ: panel `jb` holds
//! the tokens `8·jb … 8·jb + 7`, whose rows are the same `8·C` floats of W_E, so each block of 8 rows is
//! transposed where it lies ([`PackedPanels::transposed_in_place`]) and its last `V mod 8` rows stay row-major
//! (in W_E's `params` entry); the embedding lookup reads a token's row from its panel (C reads 8 floats apart).
//! An untied W_U and W_pos stay row-major.
//!
//! Only models of at least [`PACKED_MIN_PARAMETERS`] are packed: the lab's small models, which interleave
//! `trainStep` and `forward`, stay row-major and never switch.

use super::*;
use crate::kernels::{PackedPanels, NR};
use crate::precision::{Precision, Values};

/// The fewest parameters of a float32 model whose layers' weights are kept packed between inference calls
/// (2²¹, 8 MB of f32): GPT-2 small has 124M, the lab's induction models about 0.1M.
pub const PACKED_MIN_PARAMETERS: usize = 1 << 21;

/// The layers' 2-D weights that are kept packed: every `x·W` of a block.
const PACKED_NAMES: [&str; 9] = ["W_Q", "W_K", "W_V", "W_O", "W_in", "W_out", "W_gate", "W_up", "W_down"];

impl<F: LayerKernel> Transformer<F> {
    /// Whether the layers' weights are in the panel layout now (see the module docs).
    pub fn is_packed(&self) -> bool {
        !self.packed.is_empty()
    }

    /// Before an inference call: a float32 model of at least [`PACKED_MIN_PARAMETERS`] packs its layers'
    /// weights (once; they stay packed until something needs them row-major).
    pub(super) fn pack_for_inference(&mut self) {
        if self.num_parameters() >= PACKED_MIN_PARAMETERS {
            self.pack_weights();
        }
    }

    /// The layers' 2-D weights ([`PACKED_NAMES`]) switched to the panel layout, whatever the model's size;
    /// nothing for a float64 model (its products are `Matrix::matmul`'s) or one already packed. Each tensor in
    /// turn is packed into a new buffer and its row-major values freed, so at most one tensor's values are
    /// held twice. Inference reads the panels ([`Self::with_layer`], [`Self::product`]) with the bits of the
    /// row-major products.
    pub(crate) fn pack_weights(&mut self) {
        if self.is_packed() || F::DTYPE != f32::DTYPE {
            return;
        }
        let tied = self.config.tied;
        self.packed = self
            .params
            .iter_mut()
            .map(|p| {
                if tied && p.layer.is_none() && p.name == "W_E" {
                    // in place: the whole blocks of NR rows transposed where they lie, the rest left row-major
                    let (v, c) = (p.shape[0], p.shape[1]);
                    let mut rows = f32::take::<Values>(F::wrap::<Values>(std::mem::take(&mut p.data))).expect("only float32 models are packed");
                    let whole = v / NR * NR;
                    p.data = F::take::<Values>(f32::wrap::<Values>(rows.split_off(whole * c))).expect("only float32 models are packed");
                    return Some(PackedPanels::transposed_in_place(rows, whole, c));
                }
                (p.layer.is_some() && PACKED_NAMES.contains(&p.name)).then(|| {
                    let (k, n) = (p.shape[0], p.shape[1]);
                    let values = f32::take::<Values>(F::wrap::<Values>(std::mem::take(&mut p.data))).expect("only float32 models are packed");
                    let mut panels = PackedPanels::new();
                    panels.pack(&values, n, k, n);
                    panels // the row-major values are freed here
                })
            })
            .collect();
    }

    /// The weights row-major again (nothing when they are): each packed tensor in turn unpacked into a new
    /// buffer and its panels freed. Bit for bit the values packed.
    pub fn row_major(&mut self) {
        for (p, panels) in self.params.iter_mut().zip(std::mem::take(&mut self.packed)) {
            let Some(panels) = panels else { continue };
            if p.layer.is_none() && p.name == "W_E" {
                // the rows back in the same memory, then the last V mod NR (within its capacity: no copy)
                let mut rows = panels.into_transposed_rows();
                rows.extend(f32::take::<Values>(F::wrap::<Values>(std::mem::take(&mut p.data))).expect("only float32 models are packed"));
                p.data = F::take::<Values>(f32::wrap::<Values>(rows)).expect("only float32 models are packed");
            } else {
                let values = panels.unpack();
                drop(panels);
                p.data = F::take::<Values>(f32::wrap::<Values>(values)).expect("only float32 models are packed");
            }
        }
    }

    /// Parameter `i`'s panels, when the weights are packed and it is one of [`PACKED_NAMES`].
    pub(super) fn panels(&self, i: usize) -> Option<&PackedPanels> {
        self.packed.get(i).and_then(Option::as_ref)
    }

    /// W_E's row `token` (the token's embedding), added to `out`: from W_Eᵀ's panels when it is kept packed.
    pub(super) fn push_embedding(&self, token: usize, out: &mut Vec<F>) {
        let i = self.index(None, "W_E").expect("every model has W_E");
        let c = self.config.embed_dim;
        match self.panels(i) {
            Some(panels) if token < panels.n() => out.extend(panels.column(token).map(|x| F::from_f64(f64::from(x)))),
            Some(panels) => out.extend_from_slice(&self.params[i].data[(token - panels.n()) * c..(token - panels.n() + 1) * c]),
            None => out.extend_from_slice(&self.params[i].data[token * c..(token + 1) * c]),
        }
    }

    /// The tied unembedding `u (m × C)·W_Eᵀ` `(m × V)`: the panels of W_Eᵀ and the row-major last rows when it
    /// is kept packed, each entry the same sum as the row-major product's ([`ops::matmul_bt`]).
    pub(super) fn unembed_tied(&self, u: &[F], m: usize) -> Vec<F> {
        let (c, v) = (self.config.embed_dim, self.config.vocab_size);
        let i = self.index(None, "W_E").expect("every model has W_E");
        let Some(panels) = self.panels(i) else {
            return ops::matmul_bt(u, m, c, &self.params[i].data, v);
        };
        let whole = panels.n();
        let mut out = vec![F::ZERO; m * v];
        F::times_panels(u, m, panels, &mut out, v);
        if whole < v {
            F::a_bt(m, c, v - whole, u, c, &self.params[i].data, c, &mut out[whole..], v, &mut F::Scratch::default());
        }
        out
    }

    /// `x (m × k)·W + b` for the 2-D parameter `w` (`k × n`) and the bias `b` if the model has it: from the
    /// panels when the weights are packed, else W read row-major; the same bits either way.
    pub(super) fn product(&self, layer: Option<usize>, w: &str, b: &str, x: &[F], m: usize) -> Vec<F> {
        let i = self.index(layer, w).expect("a parameter of this configuration");
        let (k, n) = (self.params[i].shape[0], self.params[i].shape[1]);
        let bias = self.bias(layer, b);
        match self.panels(i) {
            Some(panels) => {
                let mut out = vec![F::ZERO; m * n];
                F::project_panels(x, m, panels, bias, &mut out);
                out
            }
            None => ops::matmul(x, m, k, &self.params[i].data, n, bias),
        }
    }

    /// [`Self::with_layer`] for packed weights: layer `l`'s W_Q, W_K, W_V, W_O panels and its biases lent
    /// (moved) to its attention layer for `f`, and moved back after.
    pub(super) fn with_layer_panels<R>(&mut self, l: usize, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        let index = |model: &Self, name: &str| model.index(Some(l), name).expect("an attention parameter of this configuration");
        let panels = ["W_Q", "W_K", "W_V", "W_O"].map(|name| {
            let i = index(self, name);
            self.packed[i].take().expect("packed weights")
        });
        let biases = self.config.bias.then(|| {
            ["b_Q", "b_K", "b_V", "b_O"].map(|name| {
                let i = index(self, name);
                f32::take::<Values>(F::wrap::<Values>(std::mem::take(&mut self.params[i].data))).expect("only float32 models are packed")
            })
        });
        self.attention[l].lend_panels(panels, biases);
        let result = f(self);
        let (panels, biases) = self.attention[l].reclaim_panels().expect("the panels lent above");
        for (name, p) in ["W_Q", "W_K", "W_V", "W_O"].into_iter().zip(panels) {
            let i = index(self, name);
            self.packed[i] = Some(p);
        }
        for (name, b) in ["b_Q", "b_K", "b_V", "b_O"].into_iter().zip(biases.into_iter().flatten()) {
            let i = index(self, name);
            self.params[i].data = F::take::<Values>(f32::wrap::<Values>(b)).expect("only float32 models are packed");
        }
        result
    }
}
