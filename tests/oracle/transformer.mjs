// An independent reference for the package's `Transformer` and `repeatedTokens` (issue 21), in
// plain JS f64, written from the formulas in the module docs of src/model (and the TypeScript
// declarations), never from the Rust code. It shares no code with the Rust core.
//
// For one sequence of T tokens (N = T rows, C = embedDim, V = vocabSize, h heads of d = C/h):
//   1. x = W_E[token]                     (+ W_pos[t] with positions = learned)
//   per layer l:
//   2.   a = LN1(x) or x                  (with layerNorm)
//   3.   q = k = a (+ W_pos[t] with positions = shortformer); v = a
//   4.   x = x + attention_l(q, k, v)     causal; RoPE of Q and K (rotate-half, base 10000) with positions = rope
//          Q = q·W_Q + b_Q, K = k·W_K + b_K, V = v·W_V + b_V; head i: P_i = softmax(Q_i·K_iᵀ/√d, j ≤ t),
//          ctx_i = P_i·V_i (0 where headMask[l][i] = false), out = [ctx_0 | …]·W_O + b_O
//          pathMask { from: [l1, i], to: [l, j], input }: head j's Q_j (or K_j, V_j) is computed as above
//          from x − ctx_i^(l1)·W_O^(l1)[rows of head i] (summed over the cuts into that input) instead of x
//   5.   with mlp: x = x + GELU(LN2(x) or x)·W_in + b_in)·W_out + b_out       (GELU: the tanh form)
//   6. logits = (LN_f(x) or x)·W_U
//   7. loss = mean over b and t = 0 … T−2 of −log softmax(logits[b, t])[token[b, t + 1]]
// LN(x) = (x − μ)/√(σ² + 1e−5) ⊙ w + b, σ² the biased variance.
//
// The backward is derived by hand, step by step in reverse (each block says which step it
// differentiates). Every sum is compensated (Neumaier, reference.mjs's `sum`), so the oracle's own
// error is far below the 1e-12 the package's f64 path is held to.
//
// Reused pieces: `sum` (reference.mjs), SplitMix64 (layer.mjs, the crate's seeded generator),
// rotate-half RoPE and its inverse (modern.mjs's `rotate`). The attention itself is written here
// rather than taken from layer.mjs's tracked `forward`/`backward`: the model needs head ablation
// (a head's context zeroed before W_O) and RoPE between the projections and the scores, which that
// layer oracle's signature has no room for.
import { sum } from './reference.mjs';
import { splitMix64 } from './layer.mjs';
import { rotate } from './modern.mjs';

export const LN_EPS = 1e-5;
export const ROPE_BASE = 10000;
const GELU_K = Math.sqrt(2 / Math.PI);
const GELU_A = 0.044715;

// ---- small dense helpers (number[][] row-major) ----------------------------------------------

const zeros = (r, c) => Array.from({ length: r }, () => new Array(c).fill(0));
const dot = (a, b) => sum(a.map((x, i) => x * b[i]));
const transpose = (A) => A[0].map((_, j) => A.map((row) => row[j]));
/** A (m × k) · B (k × n) (+ bias row). */
function matmul(A, B, bias) {
  const Bt = transpose(B);
  return A.map((row) => Bt.map((col, j) => (bias ? sum([...row.map((x, i) => x * col[i]), bias[j]]) : dot(row, col))));
}
/** A (m × n) · Bᵀ for B (k × n). */
const matmulT = (A, B) => A.map((row) => B.map((col) => dot(row, col)));
/** Aᵀ · B for A (m × k), B (m × n): k × n. */
const tmatmul = (A, B) => matmul(transpose(A), B);
const add = (A, B) => A.map((row, i) => row.map((x, j) => x + B[i][j]));
/** G += D, element-wise (2-D or 1-D). */
function accumulate(G, D) {
  if (Array.isArray(G[0])) G.forEach((row, i) => row.forEach((_, j) => { row[j] += D[i][j]; }));
  else G.forEach((_, j) => { G[j] += D[j]; });
}
const colSums = (A) => A[0].map((_, j) => sum(A.map((row) => row[j])));
const cols = (A, from, to) => A.map((row) => row.slice(from, to));
const hcat = (parts) => parts[0].map((_, t) => parts.flatMap((P) => P[t]));

// ---- layer norm, GELU, softmax ------------------------------------------------------------------

function layerNorm(X, w, b, eps = LN_EPS) {
  const kept = X.map((row) => {
    const n = row.length;
    const mu = sum(row) / n;
    const centred = row.map((x) => x - mu);
    const variance = sum(centred.map((c) => c * c)) / n;
    const inv = 1 / Math.sqrt(variance + eps);
    return { xhat: centred.map((c) => c * inv), inv };
  });
  return { y: kept.map(({ xhat }) => xhat.map((z, j) => z * w[j] + b[j])), kept };
}

/** RMSNorm (`norm: 'rms'`): y = x/√(mean(x²) + ε)·w; keeps x̂ = x·inv and inv. */
function rmsNorm(X, w, eps) {
  const kept = X.map((row) => {
    const inv = 1 / Math.sqrt(sum(row.map((x) => x * x)) / row.length + eps);
    return { xhat: row.map((x) => x * inv), inv };
  });
  return { y: kept.map(({ xhat }) => xhat.map((z, j) => z * w[j])), kept, rms: true };
}

/** dx of y = RMSNorm(x) from dy; adds to dw. dx = inv·(dx̂ − x̂·mean(dx̂ ⊙ x̂)), dx̂ = dy ⊙ w. */
function rmsNormBackward(dY, { kept }, w, dw) {
  return dY.map((dy, t) => {
    const { xhat, inv } = kept[t];
    dy.forEach((g, j) => { dw[j] += g * xhat[j]; });
    const dxhat = dy.map((g, j) => g * w[j]);
    const meanDX = dot(dxhat, xhat) / dy.length;
    return dxhat.map((g, j) => inv * (g - xhat[j] * meanDX));
  });
}

/** The config's norm of X with the parameters `${prefix}_w` (and `_b`) of `L`. */
function normOf(cfg, X, L, prefix) {
  return cfg.norm === 'rms' ? rmsNorm(X, L[`${prefix}_w`], cfg.normEps) : layerNorm(X, L[`${prefix}_w`], L[`${prefix}_b`], cfg.normEps);
}

/** The backward of normOf: dx from dy, adding into the gradients `GL`. */
function normBackward(dY, kept, L, GL, prefix) {
  return kept.rms ? rmsNormBackward(dY, kept, L[`${prefix}_w`], GL[`${prefix}_w`]) : layerNormBackward(dY, kept, L[`${prefix}_w`], GL[`${prefix}_w`], GL[`${prefix}_b`]);
}

const sigmoid = (u) => 1 / (1 + Math.exp(-u));
/** SiLU(u) = u·σ(u) and its derivative σ(u)·(1 + u·(1 − σ(u))). */
export const silu = (u) => u * sigmoid(u);
const siluDerivative = (u) => { const s = sigmoid(u); return s * (1 + u * (1 - s)); };

/** dx of y = LN(x) from dy; adds to dw, db. dx = (1/σ)(dx̂ − mean(dx̂) − x̂·mean(dx̂ ⊙ x̂)), dx̂ = dy ⊙ w. */
function layerNormBackward(dY, { kept }, w, dw, db) {
  return dY.map((dy, t) => {
    const { xhat, inv } = kept[t];
    const n = dy.length;
    dy.forEach((g, j) => {
      dw[j] += g * xhat[j];
      db[j] += g;
    });
    const dxhat = dy.map((g, j) => g * w[j]);
    const meanD = sum(dxhat) / n;
    const meanDX = dot(dxhat, xhat) / n;
    return dxhat.map((g, j) => inv * (g - meanD - xhat[j] * meanDX));
  });
}

export const gelu = (x) => 0.5 * x * (1 + Math.tanh(GELU_K * (x + GELU_A * x * x * x)));
export function geluDerivative(x) {
  const th = Math.tanh(GELU_K * (x + GELU_A * x * x * x));
  return 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * GELU_K * (1 + 3 * GELU_A * x * x);
}

/** Softmax of the causal row t: entries j > t are 0. */
function causalSoftmax(S) {
  return S.map((row, t) => {
    const m = Math.max(...row.slice(0, t + 1));
    const e = row.map((s, j) => (j <= t ? Math.exp(s - m) : 0));
    const z = sum(e);
    return e.map((x) => x / z);
  });
}

// ---- the model ------------------------------------------------------------------------------

/** Fills in the config's defaults as documented. */
export function fullConfig(config) {
  const c = { positions: 'shortformer', mlp: false, layerNorm: false, bias: false, seed: 0, dtype: 'float32', norm: 'layer', normEps: LN_EPS, mlpBias: true, ropeBase: ROPE_BASE, tiedEmbeddings: false, ...config };
  c.numKVHeads ??= c.numHeads;
  c.mlpWidth ??= 4 * c.embedDim;
  return c;
}

/** Reads `{ data, shape }` or number[][] tokens into number[][]. */
export function tokenRows(tokens) {
  if (Array.isArray(tokens)) return tokens.map((row) => Array.from(row));
  const [B, T] = tokens.shape;
  return Array.from({ length: B }, (_, b) => Array.from(tokens.data.subarray(b * T, (b + 1) * T)));
}

/**
 * The forward pass of one sequence `tok` with parameters `P` (getWeights()' tree: matrices as
 * number[][], vectors as number[]). Returns the logits, the T − 1 losses and what the backward needs.
 */
function forwardSequence(config, P, tok, headMask, pathMask = []) {
  const { embedDim: C, numHeads: h, positions, mlp, layerNorm: ln, numKVHeads: hKv, ropeBase: base } = config;
  const d = C / h;
  const g = h / hKv; // query heads per K/V head
  const T = tok.length;
  const pos = Array.from({ length: T }, (_, t) => t);
  // 1
  let x = tok.map((v, t) => P.W_E[v].map((e, j) => (positions === 'learned' ? e + P.W_pos[t][j] : e)));
  const blocks = [];
  const written = new Map(); // pathMask: `${l},${i}` → what head (l, i) added to the stream, ctx_i·W_O[rows of i]
  P.layers.forEach((L, l) => {
    const xIn = x;
    // 2
    const ln1 = ln ? normOf(config, x, L, 'ln1') : null;
    const a = ln ? ln1.y : x;
    // 3
    const qk = positions === 'shortformer' ? a.map((row, t) => row.map((e, j) => e + P.W_pos[t][j])) : a;
    // 4
    let Q = matmul(qk, L.W_Q, L.b_Q);
    let K = matmul(qk, L.W_K, L.b_K);
    const Vv = matmul(a, L.W_V, L.b_V);
    if (positions === 'rope') {
      Q = rotate(Q, pos, { numberOfHeads: h, headDimensions: d, base });
      K = rotate(K, pos, { numberOfHeads: hKv, headDimensions: d, base });
    }
    const heads = [];
    // pathMask: head i's input `which` is the stream less what the cut paths' sources wrote
    const inputOf = (i, which, M) => {
      const cut = pathMask.filter((c) => c.to[0] === l && c.to[1] === i && c.input === which);
      if (!cut.length) return M;
      const xCut = xIn.map((row, t) => row.map((e, j) => e - sum(cut.map((c) => written.get(`${c.from[0]},${c.from[1]}`)[t][j]))));
      const aCut = ln ? normOf(config, xCut, L, 'ln1').y : xCut;
      if (which === 'value') return matmul(aCut, L.W_V, L.b_V);
      const qkCut = positions === 'shortformer' ? aCut.map((row, t) => row.map((e, j) => e + P.W_pos[t][j])) : aCut;
      const proj = matmul(qkCut, which === 'query' ? L.W_Q : L.W_K, which === 'query' ? L.b_Q : L.b_K);
      return positions === 'rope' ? rotate(proj, pos, { numberOfHeads: which === 'query' ? h : hKv, headDimensions: d, base }) : proj;
    };
    for (let i = 0; i < h; i += 1) {
      const j = Math.floor(i / g); // its K/V head
      const Qi = cols(inputOf(i, 'query', Q), i * d, (i + 1) * d);
      const [Ki, Vi] = [inputOf(i, 'key', K), inputOf(i, 'value', Vv)].map((M) => cols(M, j * d, (j + 1) * d));
      const S = matmulT(Qi, Ki).map((row) => row.map((s) => s / Math.sqrt(d)));
      const Pw = causalSoftmax(S);
      const on = headMask ? headMask[l][i] !== false : true;
      const ctx = on ? matmul(Pw, Vi) : zeros(T, d);
      heads.push({ Qi, Ki, Vi, P: Pw, on, ctx });
      if (pathMask.some((c) => c.from[0] === l && c.from[1] === i)) written.set(`${l},${i}`, matmul(ctx, L.W_O.slice(i * d, (i + 1) * d)));
    }
    const concat = hcat(heads.map((hd) => hd.ctx));
    const attn = matmul(concat, L.W_O, L.b_O);
    x = add(x, attn);
    // 5
    let mlpKept = null;
    if (mlp) {
      const ln2 = ln ? normOf(config, x, L, 'ln2') : null;
      const u = ln ? ln2.y : x;
      if (mlp === 'silu_gated') {
        // (SiLU(u·W_gate + b_gate) ⊙ (u·W_up + b_up))·W_down + b_down
        const gate = matmul(u, L.W_gate, L.b_gate);
        const up = matmul(u, L.W_up, L.b_up);
        const act = gate.map((row, t) => row.map((z, k) => silu(z) * up[t][k]));
        x = add(x, matmul(act, L.W_down, L.b_down));
        mlpKept = { ln2, u, gate, up, act };
      } else {
        const pre = matmul(u, L.W_in, L.b_in);
        const act = pre.map((row) => row.map(gelu));
        x = add(x, matmul(act, L.W_out, L.b_out));
        mlpKept = { ln2, u, pre, act };
      }
    }
    blocks.push({ xIn, ln1, a, qk, heads, concat, mlp: mlpKept });
  });
  // 6
  const lnF = ln ? normOf(config, x, P, 'ln_final') : null;
  const f = ln ? lnF.y : x;
  // W_U = W_Eᵀ when tied
  const logits = config.tiedEmbeddings ? matmulT(f, P.W_E) : matmul(f, P.W_U);
  // 7
  const losses = [];
  const probs = logits.map((row) => {
    const m = Math.max(...row);
    const e = row.map((z) => Math.exp(z - m));
    const s = sum(e);
    return { p: e.map((z) => z / s), lse: m + Math.log(s) };
  });
  for (let t = 0; t + 1 < T; t += 1) losses.push(probs[t].lse - logits[t][tok[t + 1]]);
  return { logits, losses, probs, blocks, lnF, f, x };
}

/** Zero gradients with the tree of `P`. */
function zerosLike(P) {
  const z = (v) => (Array.isArray(v[0]) ? zeros(v.length, v[0].length) : new Array(v.length).fill(0));
  const out = {};
  for (const [k, v] of Object.entries(P)) if (k !== 'layers') out[k] = z(v);
  out.layers = P.layers.map((L) => Object.fromEntries(Object.entries(L).map(([k, v]) => [k, z(v)])));
  return out;
}

/** The backward of one sequence (scale = 1 / (B·(T − 1)), the mean's factor); adds into G. */
function backwardSequence(config, P, tok, F, scale, G) {
  const { embedDim: C, numHeads: h, positions, mlp, layerNorm: ln, numKVHeads: hKv, ropeBase: base } = config;
  const d = C / h;
  const g = h / hKv;
  const T = tok.length;
  const pos = Array.from({ length: T }, (_, t) => t);
  // 7: dloss/dlogits[t] = scale·(softmax − onehot(token t + 1)), 0 at the last position
  const dLogits = F.probs.map(({ p }, t) => (t + 1 < T ? p.map((q, v) => scale * (q - (v === tok[t + 1] ? 1 : 0))) : new Array(p.length).fill(0)));
  // 6: logits = f·W_U
  // (tied: logits = f·W_Eᵀ, so d W_E += d logitsᵀ·f and d f = d logits·W_E)
  let dx;
  if (config.tiedEmbeddings) {
    accumulate(G.W_E, tmatmul(dLogits, F.f));
    dx = matmul(dLogits, P.W_E);
  } else {
    accumulate(G.W_U, tmatmul(F.f, dLogits));
    dx = matmulT(dLogits, P.W_U);
  }
  if (ln) dx = normBackward(dx, F.lnF, P, G, 'ln_final');
  for (let l = P.layers.length - 1; l >= 0; l -= 1) {
    const L = P.layers[l];
    const GL = G.layers[l];
    const k = F.blocks[l];
    // 5: x = x + GELU(u·W_in + b_in)·W_out + b_out, u = LN2(x) or x
    if (mlp === 'silu_gated') {
      // x = x + (SiLU(gate) ⊙ up)·W_down + b_down: d act = dx·W_downᵀ, d gate = d act ⊙ up ⊙ SiLU′(gate), d up = d act ⊙ SiLU(gate)
      const { ln2, u, gate, up, act } = k.mlp;
      accumulate(GL.W_down, tmatmul(act, dx));
      if (GL.b_down) accumulate(GL.b_down, colSums(dx));
      const dAct = matmulT(dx, L.W_down);
      const dGate = dAct.map((row, t) => row.map((q, j) => q * up[t][j] * siluDerivative(gate[t][j])));
      const dUp = dAct.map((row, t) => row.map((q, j) => q * silu(gate[t][j])));
      accumulate(GL.W_gate, tmatmul(u, dGate));
      accumulate(GL.W_up, tmatmul(u, dUp));
      if (GL.b_gate) accumulate(GL.b_gate, colSums(dGate));
      if (GL.b_up) accumulate(GL.b_up, colSums(dUp));
      let du = add(matmulT(dGate, L.W_gate), matmulT(dUp, L.W_up));
      if (ln) du = normBackward(du, ln2, L, GL, 'ln2');
      dx = add(dx, du);
    } else if (mlp) {
      const { ln2, u, pre, act } = k.mlp;
      accumulate(GL.W_out, tmatmul(act, dx));
      if (GL.b_out) accumulate(GL.b_out, colSums(dx));
      const dAct = matmulT(dx, L.W_out);
      const dPre = dAct.map((row, t) => row.map((q, j) => q * geluDerivative(pre[t][j])));
      accumulate(GL.W_in, tmatmul(u, dPre));
      if (GL.b_in) accumulate(GL.b_in, colSums(dPre));
      let du = matmulT(dPre, L.W_in);
      if (ln) du = normBackward(du, ln2, L, GL, 'ln2');
      dx = add(dx, du);
    }
    // 4: x = x + [ctx_0 | …]·W_O + b_O
    accumulate(GL.W_O, tmatmul(k.concat, dx));
    if (GL.b_O) accumulate(GL.b_O, colSums(dx));
    const dConcat = matmulT(dx, L.W_O);
    const dQ = [];
    // the K/V heads' gradients: each sums over the g query heads that read it
    const dK = Array.from({ length: hKv }, () => zeros(T, d));
    const dV = Array.from({ length: hKv }, () => zeros(T, d));
    k.heads.forEach((hd, i) => {
      const j = Math.floor(i / g);
      const dCtx = hd.on ? cols(dConcat, i * d, (i + 1) * d) : zeros(T, d);
      // ctx = P·V_i
      const dP = matmulT(dCtx, hd.Vi);
      accumulate(dV[j], tmatmul(hd.P, dCtx));
      // P = softmax(S): dS = P ⊙ (dP − rowsum(dP ⊙ P)); S = Q_i K_iᵀ/√d
      const dS = hd.P.map((row, t) => {
        const c = dot(row, dP[t]);
        return row.map((p, j) => (p * (dP[t][j] - c)) / Math.sqrt(d));
      });
      dQ.push(matmul(dS, hd.Ki));
      accumulate(dK[j], tmatmul(dS, hd.Qi));
    });
    let gQ = hcat(dQ);
    let gK = hcat(dK);
    const gV = hcat(dV);
    // RoPE is a rotation: its transpose is the rotation by −θ
    if (positions === 'rope') {
      gQ = rotate(gQ, pos, { numberOfHeads: h, headDimensions: d, base }, true);
      gK = rotate(gK, pos, { numberOfHeads: hKv, headDimensions: d, base }, true);
    }
    // Q = qk·W_Q + b_Q, K = qk·W_K + b_K, V = a·W_V + b_V
    accumulate(GL.W_Q, tmatmul(k.qk, gQ));
    accumulate(GL.W_K, tmatmul(k.qk, gK));
    accumulate(GL.W_V, tmatmul(k.a, gV));
    if (GL.b_Q) {
      accumulate(GL.b_Q, colSums(gQ));
      accumulate(GL.b_K, colSums(gK));
      accumulate(GL.b_V, colSums(gV));
    }
    const dQK = add(matmulT(gQ, L.W_Q), matmulT(gK, L.W_K));
    // 3: qk = a + W_pos[t] (shortformer)
    if (positions === 'shortformer') dQK.forEach((row, t) => accumulate(G.W_pos[t], row));
    let da = add(matmulT(gV, L.W_V), dQK);
    // 2: a = LN1(x) or x; the residual passes dx through
    if (ln) da = normBackward(da, k.ln1, L, GL, 'ln1');
    dx = add(dx, da);
  }
  // 1: x = W_E[token] (+ W_pos[t])
  dx.forEach((row, t) => {
    accumulate(G.W_E[tok[t]], row);
    if (positions === 'learned') accumulate(G.W_pos[t], row);
  });
}

/**
 * `model.forward(tokens, { headMask })` of a model with `config` and parameters `P` (getWeights()):
 * { logits [B][T][V], losses [B][T−1], loss, weights [layer][b][head][T][T] }.
 */
export function forward(config, P, tokens, { headMask, pathMask } = {}) {
  const cfg = fullConfig(config);
  const rows = tokenRows(tokens);
  const passes = rows.map((tok) => forwardSequence(cfg, P, tok, headMask, pathMask));
  const losses = passes.map((p) => p.losses);
  return {
    logits: passes.map((p) => p.logits),
    losses,
    loss: sum(losses.flat()) / losses.flat().length,
    weights: P.layers.map((_, l) => passes.map((p) => p.blocks[l].heads.map((hd) => hd.P))),
    passes,
  };
}

/** `model.gradients(tokens)`: { loss, grads } with the tree of getWeights(). */
export function gradients(config, P, tokens) {
  const cfg = fullConfig(config);
  const rows = tokenRows(tokens);
  const F = forward(cfg, P, rows);
  const G = zerosLike(P);
  const scale = 1 / (rows.length * (rows[0].length - 1));
  rows.forEach((tok, b) => backwardSequence(cfg, P, tok, F.passes[b], scale, G));
  return { loss: F.loss, grads: G };
}

// ---- AdamW (torch.optim.AdamW) -----------------------------------------------------------------

/**
 * One AdamW step of a flat parameter `p` with gradient `g` and moments `m`, `v`, at step `s`
 * (counted from 1), as PyTorch: decay p·(1 − lr·wd) when `decays`, m ← m + (1 − β1)(g − m),
 * v ← β2·v + (1 − β2)·g², p ← p − lr/(1 − β1^s) · (m / (√v/√(1 − β2^s) + eps)). Returns new arrays.
 * `round` is the precision of the element-wise arithmetic (Math.fround for an f32 model: each
 * operation rounded to f32, the scalars computed in f64 and rounded once, as the docs state).
 */
export function adamwStep(p, g, m, v, s, { learningRate: lr, betas = [0.9, 0.999], eps = 1e-8, weightDecay = 0.01 }, decays, round = (x) => x) {
  const [b1, b2] = betas;
  const [decay, oneMinusB1, beta2, oneMinusB2, stepSize, bc2, epsilon] = [1 - lr * weightDecay, 1 - b1, b2, 1 - b2, lr / (1 - b1 ** s), Math.sqrt(1 - b2 ** s), eps].map(round);
  const P = Array.from(p);
  const M = Array.from(m);
  const Vv = Array.from(v);
  for (let i = 0; i < P.length; i += 1) {
    if (decays) P[i] = round(P[i] * decay);
    M[i] = round(M[i] + round(oneMinusB1 * round(g[i] - M[i])));
    Vv[i] = round(round(beta2 * Vv[i]) + round(round(oneMinusB2 * g[i]) * g[i]));
    const denom = round(round(round(Math.sqrt(Vv[i])) / bc2) + epsilon);
    P[i] = round(P[i] - round(stepSize * round(M[i] / denom)));
  }
  return { p: P, m: M, v: Vv };
}

// ---- repeatedTokens ------------------------------------------------------------------------------

/**
 * `repeatedTokens({ vocabSize, length, batch, seed })` from the algorithm in src/model/data.rs's
 * docs: one SplitMix64 at `seed`; per sequence a period from ⌈length/2⌉ … length, a partial
 * Fisher–Yates draw of `period` distinct tokens from 1 … vocabSize − 1, repeated after token 0.
 */
export function repeatedTokens({ vocabSize, length, batch, seed = 0 }) {
  const rng = splitMix64(BigInt(seed));
  const below = (n) => Math.min(Math.floor(rng.nextUnit() * n), n - 1);
  const shortest = Math.ceil(length / 2);
  const T = 1 + 2 * length;
  const tokens = [];
  const repeated = [];
  const periods = [];
  for (let b = 0; b < batch; b += 1) {
    const period = shortest + below(length - shortest + 1);
    const pool = Array.from({ length: vocabSize - 1 }, (_, i) => i + 1);
    for (let i = 0; i < period; i += 1) {
      const j = i + below(vocabSize - 1 - i);
      [pool[i], pool[j]] = [pool[j], pool[i]];
    }
    tokens.push(Array.from({ length: T }, (_, t) => (t === 0 ? 0 : pool[(t - 1) % period])));
    repeated.push(Array.from({ length: T }, (_, t) => t - period >= 1));
    periods.push(period);
  }
  return { tokens, repeated, periods };
}

// ---- head scores -----------------------------------------------------------------------------------

/**
 * The scores of every layer and head from the attention weights `weights[l]` ([B, h, T, T] as a
 * flat array with its shape, as forward(…, { needWeights: true }) returns them) and the tokens:
 * means over (b, t ≥ 1) of A[t][t−1], A[t][0], A[t][t], and (where token t occurred before) the
 * summed weight on s + 1 over every earlier occurrence s < t.
 */
export function headScores(weights, tokens) {
  const rows = tokenRows(tokens);
  return weights.map(({ data, shape: [B, h, T] }) => Array.from({ length: h }, (_, i) => {
    const acc = { previousToken: [], induction: [], firstToken: [], self: [] };
    for (let b = 0; b < B; b += 1) {
      const A = (t, j) => data[((b * h + i) * T + t) * T + j];
      const tok = rows[b];
      for (let t = 1; t < T; t += 1) {
        acc.previousToken.push(A(t, t - 1));
        acc.firstToken.push(A(t, 0));
        acc.self.push(A(t, t));
        const earlier = [];
        for (let s = 0; s < t; s += 1) if (tok[s] === tok[t]) earlier.push(A(t, s + 1));
        if (earlier.length > 0) acc.induction.push(sum(earlier));
      }
    }
    const mean = (xs) => (xs.length === 0 ? 0 : sum(xs) / xs.length);
    return { previousToken: mean(acc.previousToken), induction: mean(acc.induction), firstToken: mean(acc.firstToken), self: mean(acc.self) };
  }));
}

// ---- comparing ---------------------------------------------------------------------------------------

/** Every leaf tensor of a weights tree as [path, flat number[]]. */
export function leaves(tree) {
  const out = [];
  const flat = (v) => (ArrayBuffer.isView(v) ? Array.from(v) : v.flat(Infinity));
  for (const [k, v] of Object.entries(tree)) {
    if (k === 'layers') v.forEach((L, l) => Object.entries(L).forEach(([n, t]) => out.push([`layers[${l}].${n}`, flat(t)])));
    else out.push([k, flat(v)]);
  }
  return out;
}

/**
 * The one tolerance measure of the model suites: the largest |a − e| over a tensor, divided by the
 * tensor's largest |e| (scaled by the max abs of the tensor; 1 when the tensor is all zeros).
 */
export function scaledError(actual, expected) {
  const a = Array.from(actual);
  const e = Array.from(expected);
  if (a.length !== e.length) return Infinity;
  let scale = 0;
  for (const x of e) scale = Math.max(scale, Math.abs(x));
  if (scale === 0) scale = 1;
  let worst = 0;
  for (let i = 0; i < e.length; i += 1) {
    const err = Math.abs(a[i] - e[i]);
    if (!(err <= worst)) worst = Number.isNaN(err) ? Infinity : err;
  }
  return worst / scale;
}
