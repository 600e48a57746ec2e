//! The attention layer from other libraries' layouts of its weights: a small GPT's fused QKV
//! (`C × 3C`, the Q, K and V weights as column blocks, as GPT-2's `c_attn` stores them) and PyTorch's
//! `nn.MultiheadAttention` state (`[out, in]`, transposed relative to the layer's `[in, out]`). Each
//! reorders the weights into [`Weights`] and builds the layer with [`MultiHeadAttention::from_weights`],
//! which checks them.

use crate::error::{AttentionError, Result};
use crate::layer::{Biases, MultiHeadAttention, Weights};
use crate::matrix::Matrix;

impl MultiHeadAttention {
    /// From the fused layout of a small GPT: `w_qkv` is `C × 3C` with the Q, K and V weights
    /// as consecutive column blocks, `b_qkv` has `3C` entries in the same order.
    pub fn from_fused_qkv(
        w_qkv: &Matrix,
        b_qkv: Option<&[f64]>,
        w_o: &Matrix,
        b_o: Option<&[f64]>,
        number_of_heads: usize,
        dropout: f64,
        seed: u64,
    ) -> Result<Self> {
        let c = w_qkv.rows();
        if w_qkv.cols() != 3 * c {
            return Err(AttentionError::range_error(format!(
                "W_QKV is {} but must be C×3C = {c}×{} (Q, K and V weights side by side)",
                w_qkv.shape_text(),
                3 * c
            )));
        }
        let biases = fused_biases(b_qkv, b_o, c, "b_QKV", "b_O")?;
        Self::from_blocks(w_qkv, w_o.clone(), biases, number_of_heads, dropout, seed)
    }

    /// From `w_qkv` (`C × 3C`: the Q, K and V weights as consecutive column blocks), W_O and the biases.
    fn from_blocks(w_qkv: &Matrix, w_o: Matrix, biases: Option<Biases>, number_of_heads: usize, dropout: f64, seed: u64) -> Result<Self> {
        let c = w_qkv.rows();
        let [w_q, w_k, w_v] = [0, 1, 2].map(|i| w_qkv.slice_columns(i * c, (i + 1) * c)); // (C, C) each
        Self::from_weights(Weights { w_q: w_q?, w_k: w_k?, w_v: w_v?, w_o, biases }, number_of_heads, dropout, seed)
    }

    /// From PyTorch's `nn.MultiheadAttention` state: `in_proj_weight` is `3C × C` (rows: the Q,
    /// K and V blocks, each oriented `[out, in]`, i.e. transposed relative to ours),
    /// `out_proj_weight` is `C × C` `[out, in]`; the biases have `3C` and `C` entries.
    pub fn from_pytorch(
        in_proj_weight: &Matrix,
        in_proj_bias: Option<&[f64]>,
        out_proj_weight: &Matrix,
        out_proj_bias: Option<&[f64]>,
        number_of_heads: usize,
        dropout: f64,
        seed: u64,
    ) -> Result<Self> {
        let c = in_proj_weight.cols();
        if in_proj_weight.rows() != 3 * c {
            return Err(AttentionError::range_error(format!(
                "in_proj_weight is {} but must be 3C×C = {}×{c} (PyTorch's [out, in] orientation)",
                in_proj_weight.shape_text(),
                3 * c
            )));
        }
        if out_proj_weight.shape() != (c, c) {
            return Err(AttentionError::range_error(format!(
                "out_proj_weight is {} but must be C×C = {c}×{c}",
                out_proj_weight.shape_text()
            )));
        }
        // ours = theirsᵀ: transpose once, then the Q, K, V blocks are column blocks
        let w_qkv = in_proj_weight.transpose(); // (C, 3C)
        let biases = fused_biases(in_proj_bias, out_proj_bias, c, "in_proj_bias", "out_proj_bias")?;
        Self::from_blocks(&w_qkv, out_proj_weight.transpose(), biases, number_of_heads, dropout, seed)
    }
}

/// Splits a fused `3C` bias into Q, K, V parts; both biases or neither.
fn fused_biases(b_qkv: Option<&[f64]>, b_o: Option<&[f64]>, c: usize, qkv_name: &str, o_name: &str) -> Result<Option<Biases>> {
    match (b_qkv, b_o) {
        (None, None) => Ok(None),
        (Some(b_qkv), Some(b_o)) => {
            if b_qkv.len() != 3 * c {
                return Err(AttentionError::range_error(format!(
                    "{qkv_name} has {} entries but must have 3C = {}",
                    b_qkv.len(),
                    3 * c
                )));
            }
            if b_o.len() != c {
                return Err(AttentionError::range_error(format!("{o_name} has {} entries but must have C = {c}", b_o.len())));
            }
            Ok(Some(Biases {
                b_q: b_qkv[..c].to_vec(),
                b_k: b_qkv[c..2 * c].to_vec(),
                b_v: b_qkv[2 * c..].to_vec(),
                b_o: b_o.to_vec(),
            }))
        }
        (Some(_), None) => Err(AttentionError::type_error(format!("{o_name} is missing: give both {qkv_name} and {o_name}, or neither"))),
        (None, Some(_)) => Err(AttentionError::type_error(format!("{qkv_name} is missing: give both {qkv_name} and {o_name}, or neither"))),
    }
}
