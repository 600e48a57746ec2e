//! Decoding through the layers' KV caches: one cache per layer, the cached forward, greedy or sampled generation.

use super::*;

impl<F: LayerKernel> Transformer<F> {
    /// One empty KV cache per layer, for [`Self::forward_cached`].
    pub fn create_caches(&self) -> Vec<KvCache> {
        self.attention.iter().map(MultiHeadAttention::create_cache).collect()
    }

    /// The logits `[t, V]` of `tokens`, one sequence following the positions `caches` hold (each
    /// layer appends its keys and values): row for row the full forward's, bit for bit. Not with
    /// shortformer positions (its queries and keys carry W_pos, its values do not). On an error the
    /// caches are emptied.
    pub fn forward_cached(&mut self, tokens: &[u32], caches: &mut [KvCache]) -> Result<Vec<F>> {
        let (v, layers) = (self.config.vocab_size, self.config.num_layers);
        if caches.len() != layers {
            return Err(AttentionError::State(format!("caches has {} entries; this model has {layers} layers: use its createCaches()", caches.len())));
        }
        if self.config.positions == Positions::Shortformer {
            return Err(AttentionError::State("a model with shortformer positions cannot decode through a KV cache (its keys carry W_pos, its values do not)".into()));
        }
        let start = caches.first().map_or(0, KvCache::length);
        if tokens.is_empty() || start + tokens.len() > self.config.context_length {
            return Err(AttentionError::range_error(format!(
                "tokens has {} entries after the {start} cached; expected 1 … contextLength − {start} = {}",
                tokens.len(),
                self.config.context_length.saturating_sub(start)
            )));
        }
        if let Some(i) = tokens.iter().position(|&x| x as usize >= v) {
            return Err(AttentionError::range_error(format!("tokens[{i}] is {}; expected an integer in 0 … vocabSize − 1 = {}", tokens[i], v - 1)));
        }
        self.pack_for_inference();
        let step = Tokens { data: tokens.to_vec(), batch: 1, t: tokens.len() };
        let result = self.run(&step, false, false, false, Some(&mut *caches), None, &[]);
        if result.is_err() {
            caches.iter_mut().for_each(KvCache::reset);
        }
        Ok(result?.logits)
    }

    /// Decoding: the prompt runs once through every layer's KV cache, then each new token is one
    /// forward of a single token through the caches (with shortformer positions, whose queries and
    /// keys differ from the values, a full forward of the tokens so far); `choose(logits of the last
    /// position)` picks it and `on_token(id, index)` hears of it (its error stops the generation and
    /// is returned). Returns the prompt and the new tokens. The prompt's ids are checked here.
    pub fn generate(&mut self, prompt: &[u32], max_new: usize, mut choose: impl FnMut(&[F]) -> u32, mut on_token: impl FnMut(u32, usize) -> Result<()>) -> Result<Vec<u32>> {
        let (v, positions) = (self.config.vocab_size, self.config.context_length);
        if prompt.is_empty() {
            return Err(AttentionError::range_error("prompt is empty; expected at least one token"));
        }
        if let Some(i) = prompt.iter().position(|&x| x as usize >= v) {
            return Err(AttentionError::range_error(format!("prompt[{i}] is {}; expected an integer in 0 … vocabSize − 1 = {}", prompt[i], v - 1)));
        }
        let total = prompt.len() + max_new;
        if total > positions {
            return Err(AttentionError::range_error(format!(
                "prompt ({} tokens) + maxNewTokens ({max_new}) = {total} exceeds the {positions} positions this model has (contextLength)",
                prompt.len()
            )));
        }
        self.pack_for_inference();
        let cached = self.config.positions != Positions::Shortformer;
        let mut caches = self.create_caches();
        let mut ids = prompt.to_vec();
        let mut fed = 0; // tokens the caches hold
        for index in 0..max_new {
            let logits = if cached {
                self.forward_cached(&ids[fed..], &mut caches)?
            } else {
                self.run(&Tokens { data: ids.clone(), batch: 1, t: ids.len() }, false, false, false, None, None, &[])?.logits
            };
            fed = ids.len();
            let id = choose(&logits[logits.len() - v..]);
            ids.push(id);
            on_token(id, index)?;
        }
        Ok(ids)
    }
}
