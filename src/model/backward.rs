//! The backward pass: the gradient of the mean loss with respect to every parameter (the forward's
//! passes in reverse, each step quoting the line it differentiates), and the AdamW step built on it.

use super::*;

impl<F: LayerKernel> Transformer<F> {
    /// The loss and the gradient of every parameter (the same order as [`Self::params`]), at the
    /// current weights. Nothing is updated.
    pub fn gradients(&mut self, tokens: &Tokens) -> Result<(f64, Vec<f64>, Vec<Vec<F>>)> {
        let (b, t, c, v) = (tokens.batch, tokens.t, self.config.embed_dim, self.config.vocab_size);
        let n = b * t;
        self.row_major(); // the backward's products read W row-major (Wᵀ, AdamW, the bounds)
        let pass = self.run(tokens, true, false, false, None, None, &[])?;
        // 7. loss = mean(−log softmax(logits)[next]): d logits = (softmax − onehot) / (B·(T − 1))
        let count = b * (t - 1);
        let (losses, d_logits) = ops::cross_entropy(&pass.logits, v, &tokens.targets(), Some(1.0 / count as f64));
        let d_logits = d_logits.expect("asked for the gradient");
        let mut grads: Vec<Vec<F>> = self.params.iter().map(|p| vec![F::ZERO; p.data.len()]).collect();
        let at = |model: &Self, layer: Option<usize>, name: &str| model.index(layer, name).expect("a parameter of this configuration");
        // 6. logits = u·W_U: d u = d logits·W_Uᵀ, d W_U = uᵀ·d logits (tied, logits = u·W_Eᵀ:
        //    d u = d logits·W_E, d W_E += d logitsᵀ·u)
        let d_u = if self.config.tied {
            let w_e = at(self, None, "W_E");
            ops::add_matmul_at(&d_logits, n, v, &pass.unembed_input, c, &mut grads[w_e]);
            ops::matmul(&d_logits, n, v, &self.params[w_e].data, c, None)
        } else {
            let w_u = at(self, None, "W_U");
            let d_u = ops::matmul_bt(&d_logits, n, v, &self.params[w_u].data, c);
            ops::add_matmul_at(&pass.unembed_input, n, c, &d_logits, v, &mut grads[w_u]);
            d_u
        };
        //    u = LN_f(x)
        let mut dx = self.norm_backward(None, "ln_final", d_u, pass.ln_final.as_ref(), &mut grads);
        let positions = self.config.positions.has_table().then(|| at(self, None, "W_pos"));
        for (l, kept) in pass.blocks.iter().enumerate().rev() {
            // 5. x = x + GELU(m·W_in + b_in)·W_out + b_out, m = LN2(x): dx gains the MLP's input gradient
            //    (gated: d act splits into d gate and d up, each back through its own projection)
            if let Some(mlp) = &kept.mlp {
                let f = self.config.mlp_width;
                let gated = self.config.mlp_kind == MlpKind::Gated;
                let [w_out, b_out] = if gated { ["W_down", "b_down"] } else { ["W_out", "b_out"] };
                let w_out = at(self, Some(l), w_out);
                ops::add_matmul_at(&mlp.act, n, f, &dx, c, &mut grads[w_out]);
                if let Some(b) = self.index(Some(l), b_out) {
                    ops::add_column_sums(&dx, c, &mut grads[b]);
                }
                let d_act = ops::matmul_bt(&dx, n, c, &self.params[w_out].data, f);
                let (d_pres, names) = if gated {
                    let (gate, up) = mlp.pre.split_at(n * f);
                    let (d_gate, d_up) = norm::gated_backward(&d_act, gate, up);
                    (vec![d_gate, d_up], &[["W_gate", "b_gate"], ["W_up", "b_up"]][..])
                } else {
                    (vec![ops::gelu_backward(&d_act, &mlp.pre)], &[["W_in", "b_in"]][..])
                };
                let mut d_input: Option<Vec<F>> = None;
                for (d_pre, [w, b]) in d_pres.iter().zip(names) {
                    let w = at(self, Some(l), w);
                    ops::add_matmul_at(&mlp.input, n, c, d_pre, f, &mut grads[w]);
                    if let Some(b) = self.index(Some(l), b) {
                        ops::add_column_sums(d_pre, f, &mut grads[b]);
                    }
                    let d = ops::matmul_bt(d_pre, n, f, &self.params[w].data, c);
                    match d_input.as_mut() {
                        Some(sum) => ops::add_into(sum, &d),
                        None => d_input = Some(d),
                    }
                }
                let d_input = d_input.expect("an MLP has an input projection");
                let d_x = self.norm_backward(Some(l), "ln2", d_input, mlp.ln2.as_ref(), &mut grads);
                ops::add_into(&mut dx, &d_x);
            }
            // 4. x = x + attention_l(q, k, v): the layer's backward gives d q, d k, d v and its weights' gradients
            //    (its gradients read in F, where the layer's backward left them: no copy, no conversion)
            let BatchGrads { query: dq, key: dk, value: dv } = self.with_layer(l, |model| {
                let inputs = model.attention[l].backward_batch(batch(&dx, b, t, c), true)?;
                for (name, g) in model.attention[l].grads_in::<F>()?.tensors() {
                    ops::add_into(&mut grads[at(model, Some(l), name)], g);
                }
                Ok(inputs)
            })?;
            // 3. q = k = a (+ W_pos[t]), v = a: d a = d q + d k + d v; d W_pos[t] += d q + d k (shortformer)
            let mut da = dv;
            ops::add_into(&mut da, &dq);
            ops::add_into(&mut da, &dk);
            if let (Positions::Shortformer, Some(p)) = (self.config.positions, positions) {
                add_position_grads(&mut grads[p], &dq, t, c);
                add_position_grads(&mut grads[p], &dk, t, c);
            }
            // 2. a = LN1(x): dx gains d a through LN1 (the residual keeps dx itself)
            let d_x = self.norm_backward(Some(l), "ln1", da, kept.ln1.as_ref(), &mut grads);
            ops::add_into(&mut dx, &d_x);
        }
        // 1. x = W_E[token] (+ W_pos[t]): scatter dx into the rows that were read
        let w_e = at(self, None, "W_E");
        for (row, &tok) in dx.chunks_exact(c).zip(&tokens.data) {
            ops::add_into(&mut grads[w_e][tok as usize * c..(tok as usize + 1) * c], row);
        }
        if let (Positions::Learned, Some(p)) = (self.config.positions, positions) {
            add_position_grads(&mut grads[p], &dx, t, c);
        }
        for (param, g) in self.params.iter().zip(&grads) {
            if let Some(i) = g.iter().position(|x| !x.is_finite()) {
                return Err(AttentionError::range_error(format!(
                    "the gradient of {} entry {i} overflows to {}: beyond the largest {}; lower the learning rate or reset the weights",
                    param.path(),
                    crate::limits::non_finite_name(g[i].to_f64()),
                    F::LARGEST
                )));
            }
        }
        let (loss, losses) = mean_loss(&losses, tokens);
        Ok((loss, losses, grads))
    }

    /// The backward of [`Self::norm`]: `dy` itself without layer norm.
    fn norm_backward(&self, layer: Option<usize>, prefix: &str, dy: Vec<F>, kept: Option<&NormState<F>>, grads: &mut [Vec<F>]) -> Vec<F> {
        let Some(kept) = kept else { return dy };
        let wi = self.index(layer, &format!("{prefix}_w")).expect("LN gain");
        let mut dw = std::mem::take(&mut grads[wi]);
        let dx = match kept {
            NormState::Layer(kept) => {
                let bi = self.index(layer, &format!("{prefix}_b")).expect("LN bias");
                let mut db = std::mem::take(&mut grads[bi]);
                let dx = ops::layer_norm_backward(&dy, self.config.embed_dim, &self.params[wi].data, kept, &mut dw, &mut db);
                grads[bi] = db;
                dx
            }
            NormState::Rms(kept) => norm::rms_norm_backward(&dy, self.config.embed_dim, &self.params[wi].data, kept, &mut dw),
        };
        grads[wi] = dw;
        dx
    }

    /// One training step: the loss and gradients at the current weights, then one AdamW update
    /// of every parameter. A refused call (bad options, an overflow) changes nothing.
    pub fn train_step(&mut self, tokens: &Tokens, adamw: &AdamW) -> Result<(f64, Vec<f64>)> {
        adamw.check()?;
        let (loss, losses, grads) = self.gradients(tokens)?;
        let mut params = self.params.clone();
        let moments = self.optimizer.step(&mut params, &grads, adamw)?;
        self.refuse_runaway_step(&params, adamw)?;
        let attention = self.layers_for(&params)?;
        self.params = params;
        self.attention = attention;
        self.optimizer = moments;
        Ok((loss, losses))
    }

    /// A RangeError naming `options.learningRate` (or `options.weightDecay`, [`AdamW::too_large`]) when the stepped `params` are so large that the
    /// next forward pass could overflow ([`bounds`]) while the current ones cannot: refused before
    /// anything changes, not left for the next call to trip over.
    fn refuse_runaway_step(&self, params: &[Param<F>], adamw: &AdamW) -> Result<()> {
        let Some((what, bound)) = bounds::forward_overflow(&self.config, params) else { return Ok(()) };
        if bounds::forward_overflow(&self.config, &self.params).is_some() {
            return Ok(()); // the weights were that large before the step: not the learning rate's doing
        }
        let (p, i) = (0..params.len())
            .flat_map(|p| (0..params[p].data.len()).map(move |i| (p, i)))
            .max_by(|&(a, i), &(b, j)| params[a].data[i].to_f64().abs().total_cmp(&params[b].data[j].to_f64().abs()))
            .expect("a model has parameters");
        let (option, remedy) = adamw.too_large();
        Err(AttentionError::range_error(format!(
            "{option} is too large: this AdamW step would move {} entry {i} from {} to {}, and with weights that large the next forward pass can overflow {} ({what} could reach {}); lower {remedy} (the model was not changed)",
            params[p].path(),
            bounds::magnitude_text(self.params[p].data[i].to_f64()),
            bounds::magnitude_text(params[p].data[i].to_f64()),
            F::LARGEST,
            bounds::magnitude_text(bound)
        )))
    }
}

/// `grad[t] += d[b, t]` over the batch: W_pos's gradient from rows `(N, C)`.
fn add_position_grads<F: Real>(grad: &mut [F], d: &[F], t: usize, c: usize) {
    for (i, row) in d.chunks_exact(c).enumerate() {
        ops::add_into(&mut grad[(i % t) * c..(i % t + 1) * c], row);
    }
}
