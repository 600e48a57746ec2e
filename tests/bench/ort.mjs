// onnxruntime-web (the wasm execution provider) as a peer in `make bench`: an ONNX model of
// attention-lab's self-attention layer, built here from the layer's own weights (getWeights()), so both
// compute the same function on the same numbers.
//
// Two graphs, both f32, opset 17, input X (T, C) with T symbolic:
//   'ops'   the standard operators: MatMul + Add (Q, K, V), Reshape (T, h, d) + Transpose (h, T, d),
//           MatMul Q·Kᵀ, Mul 1/√d, Softmax(axis −1), MatMul ·V, Transpose + Reshape (T, C), MatMul + Add (W_O)
//   'fused' the same projections around ORT's contrib op com.microsoft.MultiHeadAttention (the Q, K, V
//           biases go into its packed `bias` input; it scales by 1/√d itself)
//
// The ModelProto is encoded with onnx-proto (protobufjs classes generated from onnx.proto): a
// maintained schema rather than a hand-written protobuf encoder.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { onnx } = require('onnx-proto');

const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;
const { INT, INTS } = onnx.AttributeProto.AttributeType;

/** A TensorProto initializer from a Float32Array (FLOAT) or a BigInt64Array (INT64), as raw little-endian bytes. */
function tensor(name, dims, values) {
  const dataType = values instanceof BigInt64Array ? INT64 : FLOAT;
  return { name, dims, dataType, rawData: new Uint8Array(values.buffer, values.byteOffset, values.byteLength) };
}

/** A number[][] C×C weight ([in, out], as getWeights gives it) as one row-major Float32Array: ONNX MatMul's X·W. */
const flat = (rows) => Float32Array.from(rows.flat());

const node = (opType, input, output, attribute = [], domain = '') => ({ opType, input, output, attribute, domain, name: output[0] });
const ints = (name, values) => ({ name, type: INTS, ints: values });
const int = (name, value) => ({ name, type: INT, i: value });
const valueInfo = (name, dims) => ({
  name,
  type: { tensorType: { elemType: FLOAT, shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) } } },
});

/**
 * The ONNX model (bytes) of multi-head self-attention with the weights `w` of getWeights() (W_* C×C [in, out],
 * b_* C entries; a layer with biases), C = embedDim, h = numHeads. Input 'X' (T, C), output 'Y' ((T, C) for
 * 'ops', (1, T, C) for 'fused': the same values in the same order).
 */
export function attentionModel(w, { c, h, variant = 'ops' }) {
  if (!w.b_Q) throw new TypeError('attentionModel(w): w needs the biases b_Q, b_K, b_V, b_O (a layer built with bias: true)');
  if (c % h !== 0) throw new RangeError(`attentionModel: C=${c} is not divisible by h=${h}`);
  const d = c / h;
  const initializer = [
    tensor('W_Q', [c, c], flat(w.W_Q)), tensor('W_K', [c, c], flat(w.W_K)), tensor('W_V', [c, c], flat(w.W_V)),
    tensor('W_O', [c, c], flat(w.W_O)), tensor('b_O', [c], Float32Array.from(w.b_O)),
  ];
  let nodes;
  let outputDims;
  if (variant === 'ops') {
    initializer.push(
      tensor('b_Q', [c], Float32Array.from(w.b_Q)), tensor('b_K', [c], Float32Array.from(w.b_K)), tensor('b_V', [c], Float32Array.from(w.b_V)),
      tensor('heads_shape', [3], BigInt64Array.from([-1n, BigInt(h), BigInt(d)])), // (T, h, d)
      tensor('concat_shape', [2], BigInt64Array.from([-1n, BigInt(c)])), // (T, C)
      tensor('scale', [], Float32Array.of(1 / Math.sqrt(d))),
    );
    nodes = [];
    for (const m of ['Q', 'K', 'V']) {
      nodes.push(
        node('MatMul', ['X', `W_${m}`], [`${m}_mm`]), // (T, C)
        node('Add', [`${m}_mm`, `b_${m}`], [m]), // (T, C)
        node('Reshape', [m, 'heads_shape'], [`${m}_thd`]), // (T, h, d)
        // (h, T, d) for Q and V; K straight to (h, d, T), i.e. Kᵀ per head
        node('Transpose', [`${m}_thd`], [`${m}_h`], [ints('perm', m === 'K' ? [1, 2, 0] : [1, 0, 2])]),
      );
    }
    nodes.push(
      node('MatMul', ['Q_h', 'K_h'], ['scores']), // (h, T, T)
      node('Mul', ['scores', 'scale'], ['scaled']), // (h, T, T)
      node('Softmax', ['scaled'], ['weights'], [int('axis', -1)]), // (h, T, T)
      node('MatMul', ['weights', 'V_h'], ['context']), // (h, T, d)
      node('Transpose', ['context'], ['context_thd'], [ints('perm', [1, 0, 2])]), // (T, h, d)
      node('Reshape', ['context_thd', 'concat_shape'], ['concat']), // (T, C)
      node('MatMul', ['concat', 'W_O'], ['out_mm']), // (T, C)
      node('Add', ['out_mm', 'b_O'], ['Y']), // (T, C)
    );
    outputDims = ['T', c];
  } else if (variant === 'fused') {
    initializer.push(
      tensor('b_QKV', [3 * c], Float32Array.from([...w.b_Q, ...w.b_K, ...w.b_V])),
      tensor('batch_axis', [1], BigInt64Array.of(0n)),
    );
    nodes = [
      node('Unsqueeze', ['X', 'batch_axis'], ['X_b']), // (1, T, C)
      node('MatMul', ['X_b', 'W_Q'], ['Q']), // (1, T, C), no bias: the contrib op adds b_QKV
      node('MatMul', ['X_b', 'W_K'], ['K']),
      node('MatMul', ['X_b', 'W_V'], ['V']),
      node('MultiHeadAttention', ['Q', 'K', 'V', 'b_QKV'], ['concat'], [int('num_heads', h)], 'com.microsoft'), // (1, T, C)
      node('MatMul', ['concat', 'W_O'], ['out_mm']), // (1, T, C)
      node('Add', ['out_mm', 'b_O'], ['Y']), // (1, T, C)
    ];
    outputDims = [1, 'T', c];
  } else {
    throw new RangeError(`attentionModel: variant must be 'ops' or 'fused', got ${JSON.stringify(variant)}`);
  }
  const model = onnx.ModelProto.fromObject({
    irVersion: 8,
    producerName: 'attention-lab tests/bench/ort.mjs',
    opsetImport: [{ domain: '', version: 17 }, ...(variant === 'fused' ? [{ domain: 'com.microsoft', version: 1 }] : [])],
    graph: {
      name: `attention_${variant}`,
      node: nodes,
      initializer,
      input: [valueInfo('X', ['T', c])],
      output: [valueInfo('Y', outputDims)],
    },
  });
  return onnx.ModelProto.encode(model).finish();
}

/**
 * onnxruntime-web for Node with `threads` wasm threads (SIMD binary). ORT reads numThreads when its wasm
 * starts (the first session), so one process has one thread count: run another count in another process.
 */
export async function loadOrt(threads) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.simd = true;
  ort.env.logLevel = 'error';
  return ort;
}

/** A session of the model and `run(x)`: X (T, C) Float32Array → Y's Float32Array (async, as ORT's run is). */
export async function ortRunner(ort, modelBytes, { t, c }) {
  const session = await ort.InferenceSession.create(modelBytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  return {
    session,
    async run(x) {
      const feeds = { X: new ort.Tensor('float32', x, [t, c]) };
      const { Y } = await session.run(feeds);
      const data = Y.data;
      Y.dispose?.();
      return data;
    },
  };
}
