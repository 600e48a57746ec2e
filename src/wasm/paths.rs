//! `forward`'s `options.pathMask` (see [`crate::model::paths`]), read for the `Transformer` export, and
//! the integer reader `circuits` shares.

use wasm_bindgen::prelude::*;

use super::convert::{array_length, describe, get, is_array, read_index, Options};
use crate::error::{AttentionError, Result};
use crate::model::paths::{PathCut, PathInput};
use crate::model::ModelConfig;

const CUT_KEYS: &str = "from, to, input";

/// `[layer, head]`.
fn read_head(raw: &JsValue, place: &str) -> Result<(usize, usize)> {
    let expected = "expected [layer, head], two integers ≥ 0";
    if !is_array(raw, place)? {
        return Err(AttentionError::type_error(format!("{place} is {}; {expected}", describe(raw))));
    }
    let len = array_length(raw, place)?;
    if len != 2 {
        return Err(AttentionError::range_error(format!("{place} has {len} entries; {expected}")));
    }
    let at = |i: u32| read_index(&get(raw, &JsValue::from(i), &format!("{place}[{i}]"))?, &format!("{place}[{i}]"));
    Ok((at(0)?, at(1)?))
}

/// `forward`'s `options.pathMask`: an array of `{ from: [l1, i], to: [l2, j], input }`, each checked
/// against the model (absent: no cut).
pub fn read_path_mask(raw: &JsValue, config: &ModelConfig) -> Result<Vec<PathCut>> {
    if raw.is_undefined() {
        return Ok(Vec::new());
    }
    let name = "options.pathMask";
    if !is_array(raw, name)? {
        return Err(AttentionError::type_error(format!("{name} is {}; expected an array of {{ from: [layer, head], to: [layer, head], input: 'query' | 'key' | 'value' }}", describe(raw))));
    }
    (0..array_length(raw, name)?)
        .map(|k| {
            let place = format!("{name}[{k}]");
            let item = get(raw, &JsValue::from(k as u32), &place)?;
            let o = Options::required(&item, &place, CUT_KEYS, "{ from: [layer, head], to: [layer, head], input }")?;
            let input = o.raw("input")?;
            let input = input.as_string().and_then(|s| PathInput::parse(&s)).ok_or_else(|| {
                let what = input.as_string().map_or_else(|| describe(&input), |s| format!("{s:?}"));
                AttentionError::type_error(format!("{place}.input is {what}; expected 'query', 'key' or 'value'"))
            })?;
            let cut = PathCut { from: read_head(&o.raw("from")?, &format!("{place}.from"))?, to: read_head(&o.raw("to")?, &format!("{place}.to"))?, input };
            config.check_path_cut(&cut, &place)?;
            Ok(cut)
        })
        .collect()
}

