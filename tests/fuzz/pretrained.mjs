// The fuzz table's entry for issue 30: `Transformer.fromPretrained`, then `forward` (needWeights,
// needHidden) and `generate` on the loaded model.
//
// Each case writes a small random GPT-2 or Llama checkpoint (tests/pretrained/checkpoint.mjs) and
// sometimes breaks it on purpose the ways the contract names — a config field missing or of the wrong
// kind, an unknown model_type, a config that disagrees with the file (a missing, extra or misshapen
// tensor), a file truncated, with a header that is not JSON, runs past the end or holds an unknown
// dtype; tokens ≥ V or T > the positions; a prompt too long for maxNewTokens; bad sampling options —
// and the generic mutators of cases.mjs break the arguments further. The reference below reads the
// arguments in the documented order and says what the package must do: refuse with the error class
// the contract gives, or answer as tests/oracle/pretrained.mjs (float64: 1e-10 of each tensor's
// scale; float32: 1e-4), with greedy tokens equal to the oracle's. Every refusal must name what it
// refuses (never wasm-bindgen's or a panic's message).
import { types } from 'node:util';
import * as LR from '../oracle/layer.mjs';
import * as O from '../oracle/pretrained.mjs';
import { Invalid } from '../oracle/reference.mjs';
import { gpt2Checkpoint, llamaCheckpoint } from '../pretrained/checkpoint.mjs';
import * as OT from '../oracle/transformer.mjs';
import { readTokens, readForwardOptions as readModelForwardOptions, readTrainOptions, compareGradientTree, adamwMayRefuse } from './transformer.mjs';

const typeError = (why) => new Invalid('TypeError', why);
const rangeError = (why) => new Invalid('RangeError', why);

const LOAD_KINDS = { config: 'count', weights: 'vector', dtype: 'dtype' };
const FORWARD_KINDS = { needWeights: 'flag', needHidden: 'flag' };
const GENERATE_KINDS = { maxNewTokens: 'count', temperature: 'rate', topK: 'count', topP: 'probability', seed: 'seed' };

/** What a refusal must name. */
const NAMES = /\b(options|config|weights|tokens|prompt|maxNewTokens|temperature|topK|topP|seed|onToken|logits|tensor|header)\b/;
const FOREIGN = /unreachable|RuntimeError|null pointer passed to rust|recursive use of an object|expected a (string|number|boolean) argument|Cannot read properties|is not a function|panicked|already (mutably )?borrowed/;

/** The verdict a deliberately broken config or file carries (the kind the contract gives it). */
const BROKEN = new WeakMap();

/** The file's header rewritten by `edit` (a string, or a function of the parsed header). */
function rewriteHeader(bytes, edit) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const text = typeof edit === 'string' ? edit : JSON.stringify(edit(JSON.parse(Buffer.from(bytes.subarray(8, 8 + n)).toString('utf8'))));
  const head = Buffer.from(text, 'utf8');
  const out = new Uint8Array(8 + head.length + bytes.length - 8 - n);
  new DataView(out.buffer).setBigUint64(0, BigInt(head.length), true);
  out.set(head, 8);
  out.set(bytes.subarray(8 + n), 8 + head.length);
  return out;
}

/** A small checkpoint, sometimes broken on purpose (the config or the file, never both). */
function checkpointFor(r) {
  const gpt2 = r.bool();
  const heads = r.int(1, 3);
  const d = 2 * r.int(1, 2);
  const dtype = r.pick(['F32', 'F32', 'F16', 'BF16']);
  const seed = r.int(1, 1e6);
  const positions = r.int(3, 9);
  const vocab = r.int(4, 13);
  const layers = r.int(1, 2);
  const made = gpt2
    ? gpt2Checkpoint({ vocab, positions, embd: heads * d, layers, heads, prefix: r.bool(), tied: r.bool(0.7), buffers: r.pick([false, false, 'F32', 'BOOL']), dtype, seed })
    : (() => {
      const kvHeads = r.pick([1, heads]);
      return llamaCheckpoint({ vocab, positions, hidden: heads * d, intermediate: r.int(2, 9), layers, heads, kvHeads, tied: r.bool(0.3), attentionBias: r.bool(0.3), mlpBias: r.bool(0.3), ropeStyle: r.pick(['rope_theta', 'rope_parameters']), ropeTheta: r.pick([10000, 500000, 37.5]), dtype, seed });
    })();
  let { config, weights } = made;
  const breakage = r.weighted([
    [36, () => null],
    [1, () => { config = { ...config }; delete config[gpt2 ? r.pick(['n_embd', 'n_layer', 'n_head', 'vocab_size']) : r.pick(['hidden_size', 'intermediate_size', 'num_attention_heads', 'num_hidden_layers', 'vocab_size'])]; return ['config', 'TypeError']; }],
    [1, () => { config = { ...config, model_type: r.pick(['bert', 'gpt_neox', 'Llama', '']) }; return ['config', 'RangeError']; }],
    [1, () => { config = { ...config, model_type: r.pick([2, null, true]) }; return ['config', 'TypeError']; }],
    [1, () => { config = { ...config, [gpt2 ? 'n_embd' : 'hidden_size']: r.pick(['8', true, [8]]) }; return ['config', 'TypeError']; }],
    [1, () => { config = { ...config, [gpt2 ? 'n_head' : 'num_attention_heads']: r.pick([0, -1, 1.5]) }; return ['config', 'RangeError']; }],
    [1, () => { config = { ...config, [gpt2 ? 'n_layer' : 'num_hidden_layers']: layers + 1 }; return ['config', 'TypeError']; }],
    [1, () => (layers > 1 ? (config = { ...config, [gpt2 ? 'n_layer' : 'num_hidden_layers']: layers - 1 }, ['config', 'TypeError']) : null)],
    [1, () => { config = { ...config, vocab_size: vocab + 1 }; return ['config', 'RangeError']; }],
    [1, () => { weights = weights.subarray(0, r.int(0, Math.min(weights.length - 1, 40))); return ['weights', 'RangeError']; }],
    [1, () => { weights = rewriteHeader(weights, r.pick(['{"a": [', 'not json', '{"x": 1,}'])); return ['weights', 'TypeError']; }],
    [1, () => { weights = rewriteHeader(weights, (h) => { const k = Object.keys(h).filter((n) => n !== '__metadata__').pop(); h[k].data_offsets[1] += 2; return h; }); return ['weights', 'RangeError']; }],
    [1, () => { const w = new Uint8Array(weights); new DataView(w.buffer).setBigUint64(0, BigInt(r.pick([weights.length, 2 ** 40, 2 ** 53])), true); weights = w; return ['weights', 'RangeError']; }],
  ])();
  if (r.bool(0.2)) weights = weights.slice().buffer;
  if (breakage) BROKEN.set(breakage[0] === 'config' ? config : weights, breakage[1]);
  return { config, weights };
}

/** Valid tokens for V and the positions, sometimes broken on purpose. */
function tokensFor(r, V, P) {
  const B = r.int(1, 2);
  const T = r.int(2, P);
  const rows = Array.from({ length: B }, () => Array.from({ length: T }, () => r.int(0, V - 1)));
  if (r.bool(0.08)) rows[0][r.int(0, T - 1)] = r.pick([V, V + 3, -1, 0.5, NaN]);
  else if (r.bool(0.05)) rows.forEach((row) => row.push(...Array.from({ length: P + 1 - T }, () => 0)));
  else if (r.bool(0.1)) return { data: Int32Array.from(rows.flat()), shape: [B, T] };
  return rows;
}

/** `fromPretrained`'s options, or throws Invalid: { config, bytes, dtype, m (the oracle's model) }. */
function readLoad(options) {
  if (options === undefined || options === null) throw typeError('options is missing');
  const o = LR.readObject(options, 'options', ['config', 'weights', 'dtype'], true);
  const config = o.config;
  if (config === undefined || config === null) throw typeError('options.config is missing');
  if (typeof config !== 'object' || Array.isArray(config)) throw typeError('options.config is not an object');
  const weights = o.weights;
  if (weights === undefined || weights === null) throw typeError('options.weights is missing');
  if (!(weights instanceof Uint8Array) && !(weights instanceof ArrayBuffer)) throw typeError('options.weights is not bytes');
  const dtype = o.dtype === undefined ? 'float32' : o.dtype;
  if (dtype !== 'float32' && dtype !== 'float64') throw typeError('options.dtype is not float32 or float64');
  if (BROKEN.has(config)) throw new Invalid(BROKEN.get(config), 'the config is broken on purpose');
  if (!('model_type' in config)) throw typeError('config.model_type is missing');
  const bytes = weights instanceof ArrayBuffer ? new Uint8Array(weights) : weights;
  if (BROKEN.has(weights)) throw new Invalid(BROKEN.get(weights), 'the file is broken on purpose');
  return { config, bytes, dtype, m: O.load(config, bytes) };
}

function readForwardOptions(options) {
  const o = LR.readObject(options, 'options', Object.keys(FORWARD_KINDS), false) ?? {};
  return { needWeights: LR.readFlag(o.needWeights, 'options.needWeights'), needHidden: LR.readFlag(o.needHidden, 'options.needHidden') };
}

/** `generate`'s prompt: number[] or an Int32Array / Uint32Array / Uint16Array of ids < V. */
function readPrompt(x, V) {
  if (x === undefined || x === null) throw typeError('prompt is missing');
  let values;
  if (x instanceof Int32Array || x instanceof Uint32Array || x instanceof Uint16Array) values = Array.from(x);
  else if (Array.isArray(x)) {
    values = [];
    for (let i = 0; i < x.length; i += 1) {
      if (typeof x[i] !== 'number') throw typeError(`prompt[${i}] is not a number`);
      values.push(x[i]);
    }
  } else throw typeError('prompt is not an array');
  if (values.length === 0) throw rangeError('prompt is empty');
  if (!values.every((v) => Number.isInteger(v) && v >= 0 && v < V)) throw rangeError('a prompt token is out of range');
  return values;
}

function readGenerateOptions(options) {
  if (options === undefined || options === null) throw typeError('options is missing');
  const o = LR.readObject(options, 'options', [...Object.keys(GENERATE_KINDS), 'onToken'], true);
  const n = o.maxNewTokens;
  if (typeof n !== 'number') throw typeError('options.maxNewTokens is missing or not a number');
  if (!(Number.isInteger(n) && n >= 0 && n <= 2 ** 32 - 1)) throw rangeError('options.maxNewTokens is not an integer ≥ 0');
  const temperature = o.temperature === undefined ? 0 : o.temperature;
  if (typeof temperature !== 'number') throw typeError('options.temperature is not a number');
  const topK = o.topK;
  if (topK !== undefined && typeof topK !== 'number') throw typeError('options.topK is not a number');
  if (topK !== undefined && !(Number.isInteger(topK) && topK >= 1 && topK <= 2 ** 32 - 1)) throw rangeError('options.topK is not an integer ≥ 1');
  const topP = o.topP;
  if (topP !== undefined && typeof topP !== 'number') throw typeError('options.topP is not a number');
  if (o.onToken !== undefined && typeof o.onToken !== 'function') throw typeError('options.onToken is not a function');
  if (!(Number.isFinite(temperature) && temperature >= 0)) throw rangeError('options.temperature is not finite ≥ 0');
  if (topP !== undefined && !(topP > 0 && topP <= 1)) throw rangeError('options.topP is not in (0, 1]');
  const seed = LR.readSeed(o.seed, 'options.seed');
  return { maxNewTokens: n, temperature, topK, topP, seed };
}

function checkRefusal(e) {
  if ((e instanceof TypeError || e instanceof RangeError) && !(e instanceof WebAssembly.RuntimeError)) {
    if (FOREIGN.test(e.message)) return new Error(`a ${e.name} with a foreign message: ${e.message}`);
    if (!NAMES.test(e.message)) return new Error(`a ${e.name} that names nothing: ${e.message}`);
  }
  return e;
}

function scaledError(actual, expected) {
  if (actual.length !== expected.length) return Infinity;
  let worst = 0, scale = 0;
  for (let i = 0; i < expected.length; i += 1) {
    worst = Math.max(worst, Math.abs(actual[i] - expected[i]));
    scale = Math.max(scale, Math.abs(expected[i]));
  }
  return worst / (scale || 1);
}

/** The toy oracle's config for a loaded model's `config` (the same architecture, every option named). */
function toyConfig(config) {
  return {
    vocabSize: config.vocabSize, contextLength: config.contextLength, embedDim: config.embedDim, numHeads: config.numHeads, numLayers: config.numLayers,
    positions: config.positions, mlp: config.mlp, layerNorm: true, bias: config.attentionBias, norm: config.norm, normEps: config.normEps,
    mlpWidth: config.mlpWidth, mlpBias: config.mlpBias, numKVHeads: config.numKVHeads, ropeBase: config.ropeBase ?? OT.ROPE_BASE,
    tiedEmbeddings: config.tiedEmbeddings, dtype: config.dtype,
  };
}

const MASK_KINDS = { needWeights: 'flag', headMask: 'mask' };
const TRAIN_KINDS = { learningRate: 'rate', betas: 'vector', eps: 'rate', weightDecay: 'rate' };

export const PRETRAINED_EXPORTS = [
  {
    name: 'Transformer.fromPretrained + forward + generate',
    requires: (pkg) => typeof pkg.Transformer?.fromPretrained === 'function',
    matrixArgs: [1],
    vectorArgs: [3],
    objects: { 0: LOAD_KINDS, 2: FORWARD_KINDS, 4: GENERATE_KINDS },
    valid(r) {
      const { config, weights } = checkpointFor(r);
      const load = { config, weights };
      if (r.bool(0.6)) load.dtype = r.pick(['float32', 'float64']);
      const V = config.vocab_size ?? 4, P = config.n_positions ?? config.max_position_embeddings ?? 4;
      const forward = r.weighted([[1, () => undefined], [3, () => ({ needWeights: r.bool(), needHidden: r.bool() })]])();
      const prompt = Array.from({ length: r.int(1, 3) }, () => r.int(0, V - 1));
      const generate = { maxNewTokens: r.weighted([[16, () => r.int(0, Math.max(0, P - prompt.length))], [1, () => P]])() };
      r.weighted([
        [8, () => {}],
        [4, () => { generate.temperature = r.pick([0.5, 1, 2]); generate.seed = r.int(0, 99); }],
        [2, () => { generate.temperature = 1; generate.topK = r.pick([1, 2, 100]); generate.topP = r.pick([0.5, 1, undefined]); }],
        [1, () => { generate.temperature = r.pick([-1, NaN, Infinity]); }],
        [1, () => { generate.topP = r.pick([0, 1.5, -0.1]); }],
      ])();
      return [load, tokensFor(r, V, P), forward, prompt, generate];
    },
    call(pkg, a) {
      let model;
      try {
        model = pkg.Transformer.fromPretrained(a[0]);
      } catch (e) {
        throw checkRefusal(e);
      }
      try {
        const forward = model.forward(a[1], a[2]);
        const heard = [];
        const g = a[4];
        // a listener on plain options whose own keys are plain values (a mutated getter or proxy is passed as it is)
        const plain = g !== null && typeof g === 'object' && !types.isProxy(g) && !Array.isArray(g) && Object.getPrototypeOf(g) === Object.prototype
          && Object.values(Object.getOwnPropertyDescriptors(g)).every((d) => 'value' in d);
        const options = plain ? { ...g, onToken: (id, i) => heard.push([id, i]) } : g;
        const ids = model.generate(a[3], options);
        return { forward, ids, heard, listened: plain, dtype: model.config.dtype };
      } catch (e) {
        throw checkRefusal(e);
      } finally {
        model.free();
      }
    },
    reference(a) {
      const load = readLoad(a[0]);
      const { m } = load;
      const tokens = readTokens(a[1], { vocabSize: m.V, contextLength: m.positions });
      const fo = readForwardOptions(a[2]);
      const prompt = readPrompt(a[3], m.V);
      const g = readGenerateOptions(a[4]);
      if (prompt.length + g.maxNewTokens > m.positions) throw rangeError('prompt + maxNewTokens exceeds the positions');
      return { load, tokens, fo, prompt, g };
    },
    compare(result, v) {
      const { m, dtype } = v.load;
      const tol = dtype === 'float64' ? 1e-10 : 1e-4;
      if (result.dtype !== dtype) return `config.dtype is ${result.dtype}, expected ${dtype}`;
      const want = O.forward(m, v.tokens);
      const got = result.forward;
      const e = scaledError(got.logits.data, want.logits.data);
      if (!(e <= tol)) return `logits: scaled error ${e} > ${tol}`;
      if (v.fo.needWeights !== (got.weights !== undefined)) return `weights ${got.weights ? 'present' : 'absent'} with needWeights ${v.fo.needWeights}`;
      if (v.fo.needHidden !== (got.hidden !== undefined)) return `hidden ${got.hidden ? 'present' : 'absent'} with needHidden ${v.fo.needHidden}`;
      for (const [name, list] of [['weights', got.weights], ['hidden', got.hidden]]) {
        if (!list) continue;
        if (list.length !== want[name].length) return `${name} has ${list.length} entries, expected ${want[name].length}`;
        for (let i = 0; i < list.length; i += 1) {
          const err = scaledError(list[i].data, want[name][i].data);
          if (!(err <= tol)) return `${name}[${i}]: scaled error ${err} > ${tol}`;
        }
      }
      const ids = result.ids;
      const n = v.prompt.length + v.g.maxNewTokens;
      if (!Array.isArray(ids) || ids.length !== n) return `generate returned ${ids?.length} ids, expected ${n}`;
      if (ids.slice(0, v.prompt.length).join() !== v.prompt.join()) return 'generate does not start with the prompt';
      if (!ids.every((id) => Number.isInteger(id) && id >= 0 && id < m.V)) return 'generate returned an id outside 0 … V − 1';
      if (result.listened && (result.heard.map(([id]) => id).join() !== ids.slice(v.prompt.length).join() || result.heard.some(([, i], k) => i !== k))) return 'onToken did not hear each new token with its index';
      if ((v.g.temperature === 0 || v.g.topK === 1) && dtype === 'float64') {
        const greedy = O.generateGreedy(m, v.prompt, v.g.maxNewTokens);
        if (greedy.join() !== ids.join()) return `greedy tokens ${ids} differ from the oracle's ${greedy}`;
      }
      return null;
    },
  },
  {
    // issue 30's second stage: a loaded model is a Transformer like any other
    name: 'Transformer.fromPretrained + forward headMask, headScores, getWeights / setWeights, gradients, trainStep',
    requires: (pkg) => typeof pkg.Transformer?.fromPretrained === 'function',
    matrixArgs: [1],
    objects: { 0: LOAD_KINDS, 2: MASK_KINDS, 3: TRAIN_KINDS },
    valid(r) {
      const { config, weights } = checkpointFor(r);
      const load = { config, weights };
      if (r.bool(0.6)) load.dtype = r.pick(['float32', 'float64']);
      const V = config.vocab_size ?? 4, P = config.n_positions ?? config.max_position_embeddings ?? 4;
      const L = config.n_layer ?? config.num_hidden_layers ?? 1, h = config.n_head ?? config.num_attention_heads ?? 1;
      const options = r.weighted([
        [1, () => undefined],
        [10, () => ({ needWeights: r.bool(), headMask: Array.from({ length: L }, () => Array.from({ length: h }, () => r.bool(0.7))) })],
        [1, () => ({ headMask: Array.from({ length: L + r.pick([-1, 1]) }, () => Array.from({ length: h }, () => true)) })],
        [1, () => ({ headMask: Array.from({ length: L }, () => Array.from({ length: h + 1 }, () => true)) })],
      ])();
      const train = r.weighted([
        [14, () => ({ learningRate: r.pick([1e-3, 1e-2]), weightDecay: r.pick([0, 0.01, 0.1]) })],
        [1, () => ({ learningRate: r.pick([NaN, -1]) })],
        [1, () => ({ learningRate: 1e-3, betas: [0.9, r.pick([1, 0.99])] })],
      ])();
      return [load, tokensFor(r, V, P), options, train, r.int(0, 1e6)];
    },
    call(pkg, a) {
      let model;
      try {
        model = pkg.Transformer.fromPretrained(a[0]);
      } catch (e) {
        throw checkRefusal(e);
      }
      try {
        const config = model.config;
        const forward = model.forward(a[1], a[2]);
        const scores = model.headScores(a[1]);
        const checkpoint = model.getWeights();
        // setWeights: every tensor moved a little (seeded), then the answers are at those weights
        let s = (a[4] >>> 0) || 1;
        const next = () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 2 ** 32 - 0.5; };
        const moved = JSON.parse(JSON.stringify(checkpoint), (k, v) => (typeof v === 'number' ? v + 0.02 * next() : v));
        model.setWeights(moved);
        const W = model.getWeights();
        const grads = model.gradients(a[1]);
        const stepped = model.trainStep(a[1], a[3]);
        const after = model.getWeights();
        return { config, forward, scores, checkpoint, W, grads, stepped, after, step: model.step };
      } catch (e) {
        throw checkRefusal(e);
      } finally {
        model.free();
      }
    },
    reference(a) {
      const load = readLoad(a[0]);
      const { m } = load;
      const c = { vocabSize: m.V, contextLength: m.positions, numLayers: m.L, numHeads: m.h };
      const tokens = readTokens(a[1], c);
      const fo = readModelForwardOptions(a[2], c);
      if (fo.pathMask.length > 0) throw new Error('fuzz: no pathMask here');
      const train = readTrainOptions(a[3]);
      return { load, tokens, fo, train, mayRefuse: adamwMayRefuse(train) };
    },
    compare(result, v) {
      const { m, dtype } = v.load;
      const tol = dtype === 'float64' ? 1e-10 : 1e-4;
      const c = toyConfig(result.config);
      // the checkpoint's tensors under the documented names: the oracle built from them is the file's model
      const fromFile = O.forward(m, v.tokens, { headMask: v.fo.headMask });
      const e0 = scaledError(O.forward(O.fromWeights(m, result.checkpoint), v.tokens, { headMask: v.fo.headMask }).logits.data, fromFile.logits.data);
      if (!(e0 <= 1e-12)) return `getWeights' tensors are not the checkpoint's: scaled error ${e0}`;
      const e1 = scaledError(result.forward.logits.data, fromFile.logits.data);
      if (!(e1 <= tol)) return `forward with headMask: scaled error ${e1} > ${tol}`;
      if (v.fo.needWeights !== (result.forward.weights !== undefined)) return 'weights present without needWeights, or absent with it';
      // headScores: the documented means of the unmasked attention weights
      const want = OT.headScores(O.forward(m, v.tokens).weights, v.tokens);
      for (let l = 0; l < m.L; l += 1) {
        for (let i = 0; i < m.h; i += 1) {
          for (const k of ['previousToken', 'induction', 'firstToken', 'self']) {
            if (!(Math.abs(result.scores[l][i][k] - want[l][i][k]) <= tol)) return `headScores[${l}][${i}].${k} ${result.scores[l][i][k]} vs ${want[l][i][k]}`;
          }
        }
      }
      // the toy oracle of the same architecture on the moved weights: the same model as the checkpoint oracle
      const moved = O.forward(O.fromWeights(m, result.W), v.tokens);
      const toy = OT.forward(c, result.W, v.tokens);
      const e2 = scaledError(toy.logits.flat(2), moved.logits.data);
      if (!(e2 <= 1e-12)) return `the toy oracle of this config disagrees with the checkpoint oracle: scaled error ${e2}`;
      // gradients: the toy oracle's backward
      const ref = OT.gradients(c, result.W, v.tokens);
      if (!(Math.abs(result.grads.loss - ref.loss) <= tol * Math.max(1, ref.loss))) return `gradients' loss ${result.grads.loss} vs ${ref.loss}`;
      const bad = compareGradientTree(result.grads.grads, ref.grads, c, dtype === 'float64' ? 1e-10 : 1e-3);
      if (bad) return bad;
      // trainStep: the loss before the step, then AdamW from zero moments at step 1 (2-D tensors decay)
      if (result.stepped.loss !== result.grads.loss) return `trainStep's loss ${result.stepped.loss} is not gradients' ${result.grads.loss}`;
      if (result.step !== 1) return `step is ${result.step} after one trainStep`;
      const g = Object.fromEntries(OT.leaves(result.grads.grads));
      const after = Object.fromEntries(OT.leaves(result.after));
      for (const [k, w] of OT.leaves(result.W)) {
        const tensor = k.startsWith('layers[') ? result.W.layers[Number(k.match(/^layers\[(\d+)\]/)[1])][k.split('.')[1]] : result.W[k];
        const want = OT.adamwStep(w, g[k], new Array(w.length).fill(0), new Array(w.length).fill(0), 1, v.train, Array.isArray(tensor[0]), dtype === 'float64' ? undefined : Math.fround);
        const e = scaledError(after[k], want.p);
        if (!(e <= (dtype === 'float64' ? 1e-12 : 1e-6))) return `${k} after trainStep: scaled error ${e}`;
      }
      return null;
    },
  },
];
