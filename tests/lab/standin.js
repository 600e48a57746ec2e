// A DEVELOPMENT STAND-IN for the package's Transformer (issue 21), so the lab page could be built
// before the real model landed. Not shipped: the site's build uses it only when
// ATTENTION_LAB_STANDIN=1 (www/vite.config.js aliases `lab-model` to this file). Delete it once the
// real model is merged.
// Real: repeatedTokens (the recipe, its own PRNG, so not the package's bits), the forward
// pass of an attention-only model with shortformer positions, the losses, the attention weights, the
// head scores and headMask. Not real: trainStep updates W_U only (the gradient of the loss with
// respect to the unembedding, with Adam), so the loss falls but no head ever forms.
import { seededRandom } from '../../www/src/cases.js';

export const STANDIN = true;

function gaussian(random) {
  const u = Math.max(random(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}
const matrix = (rows, cols, random, scale) => Array.from({ length: rows }, () => Array.from({ length: cols }, () => (random ? gaussian(random) * scale : 0)));
const matmul = (a, b) => a.map((row) => b[0].map((_, j) => row.reduce((s, x, k) => s + x * b[k][j], 0)));

export function repeatedTokens({ vocabSize, length, batch, seed }) {
  if (length > vocabSize - 1) throw new RangeError(`length (${length}) must be at most vocabSize − 1 (${vocabSize - 1})`);
  const random = seededRandom(seed * 2654435761);
  const tokens = [];
  const repeated = [];
  const periods = [];
  for (let b = 0; b < batch; b++) {
    const period = Math.ceil(length / 2) + Math.floor(random() * (length - Math.ceil(length / 2) + 1));
    const pool = Array.from({ length: vocabSize - 1 }, (_, i) => i + 1);
    for (let i = 0; i < period; i++) { const j = i + Math.floor(random() * (pool.length - i)); [pool[i], pool[j]] = [pool[j], pool[i]]; }
    const row = [0];
    const rep = [false];
    for (let t = 1; t < 1 + 2 * length; t++) { row.push(pool[(t - 1) % period]); rep.push(t - 1 >= period); }
    tokens.push(row);
    repeated.push(rep);
    periods.push(period);
  }
  return { tokens, repeated, periods };
}

export class Transformer {
  constructor({ vocabSize, contextLength, embedDim, numHeads, numLayers, seed = 0, positions = 'shortformer' }) {
    if (embedDim % numHeads) throw new RangeError('embedDim must be a multiple of numHeads');
    Object.assign(this, { vocabSize, contextLength, embedDim, numHeads, numLayers, positions });
    const random = seededRandom(seed + 1);
    const s = 1 / Math.sqrt(embedDim);
    this.w = {
      W_E: matrix(vocabSize, embedDim, random, 1),
      W_pos: matrix(contextLength, embedDim, random, 1),
      W_U: matrix(embedDim, vocabSize, random, s),
      layers: Array.from({ length: numLayers }, () => ({ W_Q: matrix(embedDim, embedDim, random, s), W_K: matrix(embedDim, embedDim, random, s), W_V: matrix(embedDim, embedDim, random, s), W_O: matrix(embedDim, embedDim, random, s) })),
    };
    this.m = matrix(embedDim, vocabSize);
    this.v = matrix(embedDim, vocabSize);
    this.step = 0;
  }

  #run(tokens, headMask) {
    const { embedDim: C, numHeads: h } = this;
    const d = C / h;
    const out = [];
    for (const seq of tokens) {
      const T = seq.length;
      let x = seq.map((tok) => [...this.w.W_E[tok]]);
      const weights = [];
      this.w.layers.forEach((layer, l) => {
        const qk = this.positions === 'shortformer' ? x.map((row, t) => row.map((v, c) => v + this.w.W_pos[t][c])) : x;
        const Q = matmul(qk, layer.W_Q); const K = matmul(qk, layer.W_K); const V = matmul(x, layer.W_V);
        const context = x.map(() => new Array(C).fill(0));
        const perHead = [];
        for (let i = 0; i < h; i++) {
          const A = [];
          for (let t = 0; t < T; t++) {
            const scores = [];
            for (let s = 0; s <= t; s++) { let z = 0; for (let c = i * d; c < (i + 1) * d; c++) z += Q[t][c] * K[s][c]; scores.push(z / Math.sqrt(d)); }
            const max = Math.max(...scores);
            const e = scores.map((z) => Math.exp(z - max));
            const sum = e.reduce((a, b) => a + b, 0);
            const row = new Array(T).fill(0);
            e.forEach((v, s) => { row[s] = v / sum; });
            A.push(row);
            if (headMask?.[l]?.[i] === false) continue;
            for (let s = 0; s <= t; s++) for (let c = i * d; c < (i + 1) * d; c++) context[t][c] += row[s] * V[s][c];
          }
          perHead.push(A);
        }
        const o = matmul(context, layer.W_O);
        x = x.map((row, t) => row.map((v, c) => v + o[t][c]));
        weights.push(perHead);
      });
      const logits = matmul(x, this.w.W_U);
      const losses = [];
      const probs = logits.map((row) => { const max = Math.max(...row); const e = row.map((z) => Math.exp(z - max)); const s = e.reduce((a, b) => a + b, 0); return e.map((v) => v / s); });
      for (let t = 0; t < T - 1; t++) losses.push(-Math.log(probs[t][seq[t + 1]]));
      out.push({ x, logits, probs, losses, weights });
    }
    return out;
  }

  forward(tokens, { needWeights = false, headMask } = {}) {
    const runs = this.#run(tokens, headMask);
    const B = tokens.length; const T = tokens[0].length; const V = this.vocabSize; const h = this.numHeads;
    const losses = runs.map((r) => r.losses);
    const loss = losses.flat().reduce((a, b) => a + b, 0) / (B * (T - 1));
    const result = { logits: { data: Float32Array.from(runs.flatMap((r) => r.logits.flat())), shape: [B, T, V] }, loss, losses };
    if (needWeights) {
      result.weights = this.w.layers.map((_, l) => ({ data: Float32Array.from(runs.flatMap((r) => r.weights[l].flat(2))), shape: [B, h, T, T] }));
    }
    return result;
  }

  headScores(tokens) {
    const runs = this.#run(tokens);
    return this.w.layers.map((_, l) => Array.from({ length: this.numHeads }, (_, i) => {
      const sum = { previousToken: 0, induction: 0, firstToken: 0, self: 0 };
      let n = 0; let nInd = 0;
      runs.forEach((r, b) => {
        const A = r.weights[l][i]; const seq = tokens[b];
        for (let t = 1; t < seq.length; t++) {
          sum.previousToken += A[t][t - 1]; sum.firstToken += A[t][0]; sum.self += A[t][t]; n++;
          let seen = false; let w = 0;
          for (let s = 0; s < t; s++) if (seq[s] === seq[t]) { seen = true; w += A[t][s + 1]; }
          if (seen) { sum.induction += w; nInd++; }
        }
      });
      return { previousToken: sum.previousToken / n, induction: nInd ? sum.induction / nInd : 0, firstToken: sum.firstToken / n, self: sum.self / n };
    }));
  }

  trainStep(tokens, { learningRate, betas = [0.9, 0.999], eps = 1e-8 } = {}) {
    const runs = this.#run(tokens);
    const B = tokens.length; const T = tokens[0].length; const n = B * (T - 1);
    const g = matrix(this.embedDim, this.vocabSize);
    runs.forEach((r, b) => {
      for (let t = 0; t < T - 1; t++) {
        const p = r.probs[t];
        for (let v = 0; v < this.vocabSize; v++) {
          const dz = (p[v] - (v === tokens[b][t + 1] ? 1 : 0)) / n;
          for (let c = 0; c < this.embedDim; c++) g[c][v] += r.x[t][c] * dz;
        }
      }
    });
    this.step++;
    const [b1, b2] = betas;
    for (let c = 0; c < this.embedDim; c++) for (let v = 0; v < this.vocabSize; v++) {
      this.m[c][v] = b1 * this.m[c][v] + (1 - b1) * g[c][v];
      this.v[c][v] = b2 * this.v[c][v] + (1 - b2) * g[c][v] ** 2;
      const mh = this.m[c][v] / (1 - b1 ** this.step); const vh = this.v[c][v] / (1 - b2 ** this.step);
      this.w.W_U[c][v] -= learningRate * mh / (Math.sqrt(vh) + eps);
    }
    const losses = runs.map((r) => r.losses);
    return { loss: losses.flat().reduce((a, b) => a + b, 0) / n, losses };
  }

  getWeights() { return structuredClone(this.w); }
  getState() { return structuredClone({ w: this.w, m: this.m, v: this.v, step: this.step }); }
  setState(state) { const s = structuredClone(state); this.w = s.w; this.m = s.m; this.v = s.v; this.step = s.step; }
  free() {}
}

export default async function init() {}

/** The same entry as www/src/lab-model.js: the module with Transformer and repeatedTokens. */
export async function loadModel() {
  return { Transformer, repeatedTokens, STANDIN };
}
