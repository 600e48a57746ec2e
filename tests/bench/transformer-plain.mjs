// A plain-JavaScript trainer on Float64Array, the way a course author would write one: the default
// lab model (attention-only, shortformer positions: W_pos added to every layer's query and key inputs,
// no biases), forward and backward by hand, one sequence at a time, then AdamW (PyTorch's formula).
// `make bench` times it against the package; its smoke run checks that its loss and gradients agree
// with the package's float64 Transformer on the same weights.

const rows = (a, r, c) => a.subarray(r * c, (r + 1) * c);

/** out (m×n) += a (m×k) · b (k×n); with `ta`, a is stored k×m (aᵀ); with `tb`, b is stored n×k (bᵀ). */
function matmul(out, a, b, m, k, n, { ta = false, tb = false } = {}) {
  for (let i = 0; i < m; i++) {
    for (let p = 0; p < k; p++) {
      const x = ta ? a[p * m + i] : a[i * k + p];
      if (x === 0) continue;
      for (let j = 0; j < n; j++) out[i * n + j] += x * (tb ? b[j * k + p] : b[p * n + j]);
    }
  }
  return out;
}

/** `{ W_E, W_pos, W_U, layers: [{ W_Q, W_K, W_V, W_O }] }` (number[][]) → flat Float64Arrays. */
export function flatWeights(w) {
  const flat = (m) => Float64Array.from(m.flat());
  return {
    W_E: flat(w.W_E), W_pos: flat(w.W_pos), W_U: flat(w.W_U),
    layers: w.layers.map((l) => ({ W_Q: flat(l.W_Q), W_K: flat(l.W_K), W_V: flat(l.W_V), W_O: flat(l.W_O) })),
  };
}

function zerosLike(p) {
  return {
    W_E: new Float64Array(p.W_E.length), W_pos: new Float64Array(p.W_pos.length), W_U: new Float64Array(p.W_U.length),
    layers: p.layers.map((l) => Object.fromEntries(Object.entries(l).map(([k, v]) => [k, new Float64Array(v.length)]))),
  };
}

const tensors = (p) => [p.W_E, p.W_pos, p.W_U, ...p.layers.flatMap((l) => [l.W_Q, l.W_K, l.W_V, l.W_O])];

/** Mean next-token loss and the gradients of every parameter for `tokens` (number[][]). */
export function lossAndGradients(p, tokens, { V, C, h }) {
  const d = C / h, scale = 1 / Math.sqrt(d);
  const g = zerosLike(p);
  const B = tokens.length, T = tokens[0].length, count = B * (T - 1);
  let loss = 0;
  for (const seq of tokens) {
    // forward
    let x = new Float64Array(T * C);
    for (let t = 0; t < T; t++) rows(x, t, C).set(rows(p.W_E, seq[t], C));
    const kept = [];
    for (const L of p.layers) {
      const qk = Float64Array.from(x);
      for (let t = 0; t < T; t++) for (let c = 0; c < C; c++) qk[t * C + c] += p.W_pos[t * C + c];
      const Q = matmul(new Float64Array(T * C), qk, L.W_Q, T, C, C);
      const K = matmul(new Float64Array(T * C), qk, L.W_K, T, C, C);
      const Vv = matmul(new Float64Array(T * C), x, L.W_V, T, C, C);
      const A = new Float64Array(h * T * T), O = new Float64Array(T * C);
      for (let i = 0; i < h; i++) {
        for (let t = 0; t < T; t++) {
          const a = A.subarray((i * T + t) * T, (i * T + t + 1) * T);
          let max = -Infinity;
          for (let s = 0; s <= t; s++) {
            let dot = 0;
            for (let e = 0; e < d; e++) dot += Q[t * C + i * d + e] * K[s * C + i * d + e];
            a[s] = dot * scale;
            max = Math.max(max, a[s]);
          }
          let sum = 0;
          for (let s = 0; s <= t; s++) sum += (a[s] = Math.exp(a[s] - max));
          for (let s = 0; s <= t; s++) {
            a[s] /= sum;
            for (let e = 0; e < d; e++) O[t * C + i * d + e] += a[s] * Vv[s * C + i * d + e];
          }
        }
      }
      const next = matmul(Float64Array.from(x), O, L.W_O, T, C, C);
      kept.push({ x, qk, Q, K, Vv, A, O });
      x = next;
    }
    const logits = matmul(new Float64Array(T * V), x, p.W_U, T, C, V);
    const dLogits = new Float64Array(T * V);
    for (let t = 0; t < T - 1; t++) {
      const row = rows(logits, t, V), dRow = rows(dLogits, t, V);
      const max = Math.max(...row);
      let sum = 0;
      for (let j = 0; j < V; j++) sum += Math.exp(row[j] - max);
      loss += (Math.log(sum) + max - row[seq[t + 1]]) / count;
      for (let j = 0; j < V; j++) dRow[j] = (Math.exp(row[j] - max) / sum - (j === seq[t + 1] ? 1 : 0)) / count;
    }
    // backward: logits = x·W_U
    matmul(g.W_U, x, dLogits, C, T, V, { ta: true });
    const dx = matmul(new Float64Array(T * C), dLogits, p.W_U, T, V, C, { tb: true });
    for (let l = p.layers.length - 1; l >= 0; l--) {
      const L = p.layers[l], G = g.layers[l], { x: xin, qk, Q, K, Vv, A, O } = kept[l];
      // x_next = x + O·W_O
      matmul(G.W_O, O, dx, C, T, C, { ta: true });
      const dO = matmul(new Float64Array(T * C), dx, L.W_O, T, C, C, { tb: true });
      const dQ = new Float64Array(T * C), dK = new Float64Array(T * C), dV = new Float64Array(T * C);
      for (let i = 0; i < h; i++) {
        for (let t = 0; t < T; t++) {
          const a = A.subarray((i * T + t) * T, (i * T + t + 1) * T);
          const dA = new Float64Array(t + 1);
          let dot = 0;
          for (let s = 0; s <= t; s++) {
            for (let e = 0; e < d; e++) {
              dA[s] += dO[t * C + i * d + e] * Vv[s * C + i * d + e];
              dV[s * C + i * d + e] += a[s] * dO[t * C + i * d + e];
            }
            dot += dA[s] * a[s];
          }
          for (let s = 0; s <= t; s++) {
            const dS = a[s] * (dA[s] - dot) * scale;
            for (let e = 0; e < d; e++) {
              dQ[t * C + i * d + e] += dS * K[s * C + i * d + e];
              dK[s * C + i * d + e] += dS * Q[t * C + i * d + e];
            }
          }
        }
      }
      matmul(G.W_Q, qk, dQ, C, T, C, { ta: true });
      matmul(G.W_K, qk, dK, C, T, C, { ta: true });
      matmul(G.W_V, xin, dV, C, T, C, { ta: true });
      const dQK = matmul(new Float64Array(T * C), dQ, L.W_Q, T, C, C, { tb: true });
      matmul(dQK, dK, L.W_K, T, C, C, { tb: true });
      matmul(dx, dV, L.W_V, T, C, C, { tb: true });
      for (let j = 0; j < T * C; j++) {
        dx[j] += dQK[j];
        g.W_pos[j] += dQK[j];
      }
    }
    for (let t = 0; t < T; t++) {
      const gRow = rows(g.W_E, seq[t], C);
      for (let c = 0; c < C; c++) gRow[c] += dx[t * C + c];
    }
  }
  return { loss, grads: g };
}

/** A trainer: `step(tokens)` → loss, then AdamW (every tensor here is 2-D, so every one decays). */
export function plainTrainer(weights, dims, { learningRate, betas = [0.9, 0.999], eps = 1e-8, weightDecay = 0.01 }) {
  const p = flatWeights(weights);
  const m = tensors(zerosLike(p)), v = tensors(zerosLike(p));
  let step = 0;
  return {
    params: p,
    step(tokens) {
      const { loss, grads } = lossAndGradients(p, tokens, dims);
      step += 1;
      const [b1, b2] = betas;
      const stepSize = learningRate / (1 - b1 ** step), c2 = Math.sqrt(1 - b2 ** step);
      tensors(p).forEach((x, i) => {
        const gi = tensors(grads)[i];
        for (let j = 0; j < x.length; j++) {
          x[j] *= 1 - learningRate * weightDecay;
          m[i][j] += (1 - b1) * (gi[j] - m[i][j]);
          v[i][j] = b2 * v[i][j] + (1 - b2) * gi[j] * gi[j];
          x[j] -= stepSize * (m[i][j] / (Math.sqrt(v[i][j]) / c2 + eps));
        }
      });
      return loss;
    },
  };
}
