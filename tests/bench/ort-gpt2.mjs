// onnxruntime-web as a peer for a whole GPT-2 (issue 30's benchmark): the ONNX graph of GPT2LMHeadModel with
// past key values, built here from the tensors of a safetensors checkpoint in Hugging Face's layout (the
// bytes tests/pretrained/checkpoint.mjs writes, the same bytes Transformer.fromPretrained reads), so both
// runtimes compute the same function on the same f32 numbers.
//
// The graph (opset 17, f32, batch 1; T new tokens, P cached positions, both symbolic):
//   inputs  input_ids (1, T) int64, position_ids (1, T) int64 (P … P+T−1), attention_bias (1, 1, T, P+T) f32
//           (0 where key s ≤ P + t, −1e9 above: the causal mask, built by the caller, see causalBias),
//           past_key.l / past_value.l (1, h, P, d) per layer l
//   outputs logits (1, T, V), present_key.l / present_value.l (1, h, P+T, d)
//   x = Gather(wte, input_ids) + Gather(wpe, position_ids)
//   per layer: a = LayerNormalization(x); qkv = MatMul(a, c_attn.weight) + c_attn.bias; Split into q, k, v;
//     Reshape (1, T, h, d) + Transpose (1, h, T, d); present = Concat(past, new) on the sequence axis;
//     MatMul(q, Transpose(present_key)) · 1/√d + attention_bias; Softmax; MatMul(·, present_value);
//     Transpose + Reshape (1, T, C); MatMul c_proj + bias; x += that;
//     m = LayerNormalization(x); u = MatMul(m, c_fc) + b; gelu_new by its tanh formula (as torch exports
//     transformers' NewGELUActivation: Pow, Mul, Add, Mul, Tanh, Add, Mul; ORT's optimiser may fuse it) or,
//     with gelu: 'fast', com.microsoft.FastGelu; MatMul mlp.c_proj + bias; x += that
//   logits = MatMul(LayerNormalization(x), wteᵀ) (the tied unembedding as a transposed initializer, as a
//   torch export of a tied lm_head gives it)
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { onnx } = require('onnx-proto');

const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;
const { INT, INTS, FLOAT: FLOAT_ATTR } = onnx.AttributeProto.AttributeType;

/** The tensors of a safetensors file: name → { dtype, shape, bytes } (bytes: a view into `file`, not a copy). */
export function readSafetensors(file) {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(Buffer.from(file.buffer, file.byteOffset + 8, n).toString('utf8'));
  const base = 8 + n;
  const out = {};
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    out[name] = { dtype: t.dtype, shape: t.shape, bytes: file.subarray(base + t.data_offsets[0], base + t.data_offsets[1]) };
  }
  return out;
}

const node = (opType, input, output, attribute = [], domain = '') => ({ opType, input, output, attribute, domain, name: output[0] });
const ints = (name, values) => ({ name, type: INTS, ints: values });
const int = (name, value) => ({ name, type: INT, i: value });
const float = (name, value) => ({ name, type: FLOAT_ATTR, f: value });
const valueInfo = (name, dims, elemType = FLOAT) => ({
  name,
  type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) } } },
});
const raw = (name, dims, bytes, dataType = FLOAT) => ({ name, dims, dataType, rawData: bytes });
const f32 = (name, dims, values) => {
  const a = Float32Array.from(values);
  return raw(name, dims, new Uint8Array(a.buffer));
};
const i64 = (name, values) => {
  const a = BigInt64Array.from(values.map(BigInt));
  return raw(name, [a.length], new Uint8Array(a.buffer), INT64);
};

/**
 * The ONNX model (bytes) of a GPT-2 checkpoint `{ config, weights }` (config.json as an object, the
 * safetensors bytes; f32, tied unembedding; keys with or without `transformer.`). Options: gelu 'tanh'
 * (standard ops, the default) or 'fast' (com.microsoft.FastGelu).
 */
export function gpt2Model({ config, weights }, { gelu = 'tanh' } = {}) {
  const tensors = readSafetensors(weights);
  const prefix = 'wte.weight' in tensors ? '' : 'transformer.';
  const get = (name) => {
    const t = tensors[prefix + name];
    if (!t) throw new TypeError(`gpt2Model: the checkpoint has no ${prefix + name}`);
    if (t.dtype !== 'F32') throw new TypeError(`gpt2Model: ${prefix + name} is ${t.dtype}; this graph is f32 only`);
    return t;
  };
  if ('lm_head.weight' in tensors) throw new TypeError('gpt2Model: an untied lm_head is not supported (the bench checkpoints are tied)');
  const c = config.n_embd, h = config.n_head, layers = config.n_layer, v = config.vocab_size;
  const d = c / h, eps = config.layer_norm_epsilon ?? 1e-5;
  const initializer = [];
  const init = (onnxName, name) => {
    const t = get(name);
    initializer.push(raw(onnxName, t.shape, t.bytes));
    return onnxName;
  };
  const nodes = [];
  const op = (opType, input, output, attribute, domain) => { nodes.push(node(opType, input, [output], attribute, domain)); return output; };

  init('wte', 'wte.weight');
  init('wpe', 'wpe.weight');
  // wteᵀ (C, V) for the unembedding
  const wte = get('wte.weight');
  const e = new Float32Array(wte.bytes.slice().buffer); // aligned copy
  const wteT = new Float32Array(c * v);
  for (let i = 0; i < v; i++) for (let j = 0; j < c; j++) wteT[j * v + i] = e[i * c + j];
  initializer.push(raw('wte_T', [c, v], new Uint8Array(wteT.buffer)));
  initializer.push(
    f32('scale', [], [1 / Math.sqrt(d)]),
    i64('heads_shape', [0, 0, h, d]), // (1, T, h, d)
    i64('merge_shape', [0, 0, c]), // (1, T, C)
    i64('qkv_split', [c, c, c]),
  );
  if (gelu === 'tanh') {
    initializer.push(
      f32('gelu_half', [], [0.5]), f32('gelu_one', [], [1]), f32('gelu_three', [], [3]),
      f32('gelu_cubic', [], [0.044715]), f32('gelu_sqrt', [], [Math.sqrt(2 / Math.PI)]),
    );
  }

  const inputs = [
    valueInfo('input_ids', [1, 'T'], INT64),
    valueInfo('position_ids', [1, 'T'], INT64),
    valueInfo('attention_bias', [1, 1, 'T', 'PT']),
  ];
  const outputs = [valueInfo('logits', [1, 'T', v])];
  const tok = op('Gather', ['wte', 'input_ids'], 'tok_emb', [int('axis', 0)]);
  const pos = op('Gather', ['wpe', 'position_ids'], 'pos_emb', [int('axis', 0)]);
  let x = op('Add', [tok, pos], 'x0');
  for (let l = 0; l < layers; l++) {
    const p = `h.${l}.`, L = `l${l}_`;
    inputs.push(valueInfo(`past_key.${l}`, [1, h, 'P', d]), valueInfo(`past_value.${l}`, [1, h, 'P', d]));
    outputs.push(valueInfo(`present_key.${l}`, [1, h, 'PT', d]), valueInfo(`present_value.${l}`, [1, h, 'PT', d]));
    const ln = (input, which, out) => op('LayerNormalization', [input, init(`${L}${which}_w`, `${p}${which}.weight`), init(`${L}${which}_b`, `${p}${which}.bias`)],
      out, [int('axis', -1), float('epsilon', eps)]);
    const linear = (input, name, out) => op('Add', [op('MatMul', [input, init(`${L}${name}_w`, `${p}${name}.weight`)], `${out}_mm`), init(`${L}${name}_b`, `${p}${name}.bias`)], out);
    const a = ln(x, 'ln_1', `${L}ln1`);
    const qkv = linear(a, 'attn.c_attn', `${L}qkv`);
    nodes.push(node('Split', [qkv, 'qkv_split'], [`${L}q`, `${L}k`, `${L}v`], [int('axis', 2)]));
    const heads = (m) => op('Transpose', [op('Reshape', [`${L}${m}`, 'heads_shape'], `${L}${m}_thd`)], `${L}${m}_h`, [ints('perm', [0, 2, 1, 3])]); // (1, h, T, d)
    const q = heads('q');
    const k = op('Concat', [`past_key.${l}`, heads('k')], `present_key.${l}`, [int('axis', 2)]); // (1, h, P+T, d)
    const vv = op('Concat', [`past_value.${l}`, heads('v')], `present_value.${l}`, [int('axis', 2)]);
    const kT = op('Transpose', [k], `${L}kT`, [ints('perm', [0, 1, 3, 2])]); // (1, h, d, P+T)
    const scores = op('Add', [op('Mul', [op('MatMul', [q, kT], `${L}qk`), 'scale'], `${L}scaled`), 'attention_bias'], `${L}scores`);
    const probs = op('Softmax', [scores], `${L}probs`, [int('axis', -1)]);
    const ctx = op('MatMul', [probs, vv], `${L}ctx`); // (1, h, T, d)
    const merged = op('Reshape', [op('Transpose', [ctx], `${L}ctx_thd`, [ints('perm', [0, 2, 1, 3])]), 'merge_shape'], `${L}merged`);
    x = op('Add', [x, linear(merged, 'attn.c_proj', `${L}attn_out`)], `${L}x_attn`);
    const m = ln(x, 'ln_2', `${L}ln2`);
    let g;
    if (gelu === 'fast') {
      const mm = op('MatMul', [m, init(`${L}mlp.c_fc_w`, `${p}mlp.c_fc.weight`)], `${L}fc_mm`);
      g = op('FastGelu', [mm, init(`${L}mlp.c_fc_b`, `${p}mlp.c_fc.bias`)], `${L}gelu`, [], 'com.microsoft');
    } else if (gelu === 'tanh') {
      const u = linear(m, 'mlp.c_fc', `${L}fc`);
      // 0.5·u·(1 + tanh(√(2/π)·(u + 0.044715·u³)))
      const cube = op('Mul', [op('Pow', [u, 'gelu_three'], `${L}g_pow`), 'gelu_cubic'], `${L}g_cube`);
      const inner = op('Mul', [op('Add', [u, cube], `${L}g_sum`), 'gelu_sqrt'], `${L}g_inner`);
      const onePlus = op('Add', [op('Tanh', [inner], `${L}g_tanh`), 'gelu_one'], `${L}g_onep`);
      g = op('Mul', [op('Mul', [u, 'gelu_half'], `${L}g_half`), onePlus], `${L}gelu`);
    } else {
      throw new RangeError(`gpt2Model: gelu must be 'tanh' or 'fast', got ${JSON.stringify(gelu)}`);
    }
    x = op('Add', [x, linear(g, 'mlp.c_proj', `${L}mlp_out`)], `${L}x_mlp`);
  }
  const y = op('LayerNormalization', [x, init('lnf_w', 'ln_f.weight'), init('lnf_b', 'ln_f.bias')], 'lnf', [int('axis', -1), float('epsilon', eps)]);
  op('MatMul', [y, 'wte_T'], 'logits');
  const model = onnx.ModelProto.fromObject({
    irVersion: 8,
    producerName: 'attention-lab tests/bench/ort-gpt2.mjs',
    opsetImport: [{ domain: '', version: 17 }, ...(gelu === 'fast' ? [{ domain: 'com.microsoft', version: 1 }] : [])],
    graph: { name: 'gpt2_with_past', node: nodes, initializer, input: inputs, output: outputs },
  });
  return onnx.ModelProto.encode(model).finish();
}

/** The additive causal mask (1, 1, T, P+T): 0 where key s ≤ P + t, −1e9 elsewhere. */
export function causalBias(t, past) {
  const n = past + t;
  const bias = new Float32Array(t * n);
  for (let i = 0; i < t; i++) for (let s = past + i + 1; s < n; s++) bias[i * n + s] = -1e9;
  return bias;
}

/**
 * A session of the GPT-2 graph and `run(tokens, past)`: tokens number[] (the T new ids), past the
 * `present` of an earlier run (or null: P = 0) → { logits: Float32Array (T·V), present: { key: [...], value: [...] }
 * (ort.Tensor per layer; dispose() them when done) }. Async, as ORT's run is.
 */
export async function gpt2Runner(ort, modelBytes, { layers, heads, headDim }) {
  const session = await ort.InferenceSession.create(modelBytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all', logSeverityLevel: 3 });
  const empty = new ort.Tensor('float32', new Float32Array(0), [1, heads, 0, headDim]);
  return {
    session,
    async run(tokens, past = null) {
      const t = tokens.length, p = past ? past.length : 0;
      const feeds = {
        input_ids: new ort.Tensor('int64', BigInt64Array.from(tokens, BigInt), [1, t]),
        position_ids: new ort.Tensor('int64', BigInt64Array.from({ length: t }, (_, i) => BigInt(p + i)), [1, t]),
        attention_bias: new ort.Tensor('float32', causalBias(t, p), [1, 1, t, p + t]),
      };
      for (let l = 0; l < layers; l++) {
        feeds[`past_key.${l}`] = past ? past.key[l] : empty;
        feeds[`past_value.${l}`] = past ? past.value[l] : empty;
      }
      const out = await session.run(feeds);
      const present = { length: p + t, key: [], value: [] };
      for (let l = 0; l < layers; l++) {
        present.key.push(out[`present_key.${l}`]);
        present.value.push(out[`present_value.${l}`]);
      }
      const logits = out.logits.data;
      out.logits.dispose?.();
      return { logits, present };
    },
    dispose(present) {
      if (!present) return;
      for (const tensor of [...present.key, ...present.value]) tensor.dispose?.();
    },
  };
}
