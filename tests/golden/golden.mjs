// Golden fixtures: the exact results of every export, so a refactor of the core can show it changed
// nothing (issue 11). Seeded cases over every export and form are run against the Node build; every
// result (outputs, every trace step, layer weights, gradients, grads(), error classes and messages) is
// serialised canonically and hashed with SHA-256, per case and per group.
//
//   node tests/golden/golden.mjs            recompute and compare with tests/golden/golden.json
//   node tests/golden/golden.mjs --write    regenerate golden.json (only when a change is MEANT to
//                                           change results; say which and why in the commit)
//   --package PATH                          check another Node build than target/pkg-node
//
// f64 groups (number[][], Float64Array) must match bit for bit. f32 groups (Float32Array results)
// also store their Float32 values (base64), and pass when the bits match or, failing that, when
// everything but the Float32 values is bit-identical and each Float32Array result is within 1e-6 of
// the stored one relative to that array's largest magnitude (the allowance for f32).
//
// Cases come from the fuzzer's seeded generator (rng and caseSeed in tests/fuzz/generate.mjs); only
// those two primitives are shared, so edits to the fuzzer's tables do not move these cases. Changing
// rng, caseSeed or a builder below changes the inputs and needs --write.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { dirname, resolve, sep } from 'node:path';
import { rng, caseSeed } from '../fuzz/generate.mjs';

export const FIXTURE = fileURLToPath(new URL('./golden.json', import.meta.url));
export const PACKAGE = fileURLToPath(new URL('../../target/pkg-node/attention_lab.js', import.meta.url));
/** Per-case digest length in hex characters (32 bits: enough to name the first differing case; the group's SHA-256 is the check). */
const CASE_HEX = 8;
/** f32 results: allowed difference relative to the largest magnitude of the same Float32Array. */
export const F32_RELATIVE = 1e-6;

// ---- canonical encoding --------------------------------------------------------------------------
// Each value is a tag byte then its content: numbers as little-endian f64 bytes, Float64Array and
// Float32Array as length + their bytes, strings as length + UTF-8, arrays as length + items, plain
// objects as their keys sorted, each key then value (undefined-valued keys are kept: `'head' in step`
// is observable). Float32Array bytes go to a separate list so f32 groups can compare them with a
// tolerance; the digest covers both.

class Encoder {
  constructor() {
    this.buf = Buffer.allocUnsafe(1 << 16);
    this.n = 0;
    this.f32 = [];
  }
  ensure(k) {
    if (this.n + k <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.n + k));
    this.buf.copy(next, 0, 0, this.n);
    this.buf = next;
  }
  tag(c) {
    this.ensure(1);
    this.buf[this.n++] = c.charCodeAt(0);
  }
  u32(x) {
    this.ensure(4);
    this.buf.writeUInt32LE(x >>> 0, this.n);
    this.n += 4;
  }
  f64(x) {
    this.ensure(8);
    this.buf.writeDoubleLE(x, this.n);
    this.n += 8;
  }
  bytes(view) {
    const b = Buffer.from(view.buffer, view.byteOffset, view.byteLength);
    this.ensure(b.length);
    b.copy(this.buf, this.n);
    this.n += b.length;
  }
  str(s) {
    const b = Buffer.from(s, 'utf8');
    this.u32(b.length);
    this.ensure(b.length);
    b.copy(this.buf, this.n);
    this.n += b.length;
  }
  value(v) {
    if (v === undefined) return this.tag('u');
    if (v === null) return this.tag('z');
    if (v === true) return this.tag('T');
    if (v === false) return this.tag('F');
    if (typeof v === 'number') {
      this.tag('n');
      return this.f64(v);
    }
    if (typeof v === 'string') {
      this.tag('s');
      return this.str(v);
    }
    if (typeof v === 'bigint') {
      this.tag('b');
      return this.str(v.toString());
    }
    if (v instanceof Float64Array) {
      this.tag('D');
      this.u32(v.length);
      return this.bytes(v);
    }
    if (v instanceof Float32Array) {
      this.tag('f');
      this.u32(v.length);
      this.f32.push(v.slice());
      return;
    }
    if (ArrayBuffer.isView(v)) throw new Error(`golden: unexpected ${v.constructor.name} in a result`);
    if (Array.isArray(v)) {
      this.tag('[');
      this.u32(v.length);
      for (const x of v) this.value(x);
      return;
    }
    if (typeof v === 'object') {
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) throw new Error(`golden: unexpected ${proto?.constructor?.name} object in a result`);
      const keys = Object.keys(v).sort();
      this.tag('{');
      this.u32(keys.length);
      for (const k of keys) {
        this.str(k);
        this.value(v[k]);
      }
      return;
    }
    throw new Error(`golden: cannot encode a ${typeof v}`);
  }
  /** { main: Buffer, f32: Float32Array[] } */
  finish() {
    return { main: this.buf.subarray(0, this.n), f32: this.f32 };
  }
}

/** The canonical bytes of one case's record. */
export function encode(record) {
  const e = new Encoder();
  e.value(record);
  return e.finish();
}

const f32Bytes = (arrays) => Buffer.concat(arrays.map((a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)));

// ---- calling --------------------------------------------------------------------------------------

/** The directory of the loaded package: errors whose first stack frame is elsewhere are not its answers. */
let packageDir = null;

/**
 * The value of f(), or what the package threw: the class, name and message (messages are part of
 * the API). An error raised outside the package (a bug in this harness, not an answer) is rethrown.
 */
export function attempt(f) {
  try {
    return { ok: f() };
  } catch (e) {
    if (!(e instanceof Error)) return { threw: { nonError: String(e) } };
    const top = String(e.stack).split('\n').find((line) => line.trimStart().startsWith('at '));
    if (packageDir === null || !top?.includes(packageDir)) throw e;
    return { threw: { class: e.constructor.name, name: e.name, message: e.message } };
  }
}

// ---- inputs ---------------------------------------------------------------------------------------

/** A matrix entry: mostly moderate, sometimes an integer, a large value (peaked softmax) or ±0. */
function entry(r, f32) {
  const x = r.weighted([
    [12, () => r.uniform(-3, 3)],
    [2, () => r.int(-4, 4)],
    [2, () => r.uniform(-30, 30)],
    [1, () => r.pick([0, -0, 0.5, -1, 1e-3])],
  ])();
  return f32 ? Math.fround(x) : x;
}
const rows = (r, t, c, f32 = false) => Array.from({ length: t }, () => Array.from({ length: c }, () => entry(r, f32)));
const vector = (r, c, f32 = false) => Array.from({ length: c }, () => entry(r, f32));
/** Xavier-sized weights (so layers stay well inside the range of f32). */
const weights = (r, a, b, f32 = false) =>
  Array.from({ length: a }, () => Array.from({ length: b }, () => { const x = r.uniform(-0.8, 0.8); return f32 ? Math.fround(x) : x; }));
function boolMask(r, t, s) {
  const p = r.pick([0.9, 0.6, 0.3, 0]);
  return Array.from({ length: t }, () => Array.from({ length: s }, () => r.next() < p));
}
/** `{ data, shape }` of precision `bits` from one T×C matrix or a batch of them. */
function typed(bits, m, batched) {
  const Ctor = bits === 32 ? Float32Array : Float64Array;
  const list = batched ? m : [m];
  return { data: Ctor.from(list.flat(2)), shape: batched ? [list.length, list[0].length, list[0][0].length] : [list[0].length, list[0][0].length] };
}
/** What a record keeps of the options: their names and flags (the inputs follow from the seed). */
const optionNames = (o) => (o == null ? o : Object.keys(o).sort().map((k) => (typeof o[k] === 'boolean' || typeof o[k] === 'number' ? `${k}=${o[k]}` : k)));
// f32 groups store their Float32 values in golden.json, so their sizes are smaller
/** A row or column count. */
const small = (r, bits) => (bits === 32 ? r.int(1, 5) : r.weighted([[8, () => r.int(1, 4)], [3, () => r.int(5, 8)], [1, () => r.int(9, 16)]])());
/** [numberOfHeads, headDimensions]. */
function heads(r, bits) {
  if (bits === 32) return [r.int(1, 3), r.int(1, 3)];
  const h = r.weighted([[4, () => r.int(1, 3)], [1, () => r.int(4, 6)]])();
  const d = r.weighted([[4, () => r.int(1, 3)], [1, () => r.int(4, 6)]])();
  return [h, d];
}
/** A batch size B, or 0 for a [T, C] matrix. */
const batchOf = (r, bits) => (r.bool(0.35) ? r.int(1, bits === 32 ? 2 : 3) : 0);
/** none / {} / causal / mask / both, for a T×S mask. */
function maskOptions(r, t, s = t) {
  return r.weighted([
    [2, () => undefined],
    [1, () => ({})],
    [2, () => ({ causal: true })],
    [1, () => ({ causal: false })],
    [2, () => ({ mask: boolMask(r, t, s) })],
    [2, () => ({ causal: r.bool(), mask: boolMask(r, t, s) })],
  ])();
}

// ---- groups ---------------------------------------------------------------------------------------
// Each group: cases, f32 (whether it stores Float32 values), and run(lab, r, index) → a record (any
// encodable value). Group seeds are fixed numbers so adding a group moves no other group's cases.

function dpa(bits) {
  return (lab, r) => {
    const [t, dk, dv] = [small(r, bits), small(r, bits), small(r, bits)];
    const f32 = bits === 32;
    const options = maskOptions(r, t);
    if (!bits) {
      const args = [rows(r, t, dk), rows(r, t, dk), rows(r, t, dv)];
      return { options: optionNames(options), result: attempt(() => (options === undefined && r.bool() ? lab.dotProductAttention(...args) : lab.dotProductAttention(...args, options))) };
    }
    const b = batchOf(r, bits);
    const make = (c) => (b ? Array.from({ length: b }, () => rows(r, t, c, f32)) : rows(r, t, c, f32));
    const [Q, K, V] = [typed(bits, make(dk), b > 0), typed(bits, make(dk), b > 0), typed(bits, make(dv), b > 0)];
    return { options: optionNames(options), shape: Q.shape, result: attempt(() => lab.dotProductAttention(Q, K, V, options)) };
  };
}

function mha(bits, positional = false) {
  return (lab, r) => {
    const [h, d] = heads(r, bits);
    const c = h * d;
    const t = small(r, bits);
    const f32 = bits === 32;
    if (positional) {
      const [Q, K, V] = [rows(r, t, c), rows(r, t, c), rows(r, t, c)];
      return { h, d, result: attempt(() => lab.multiHeadAttention(Q, K, V, h, d)) };
    }
    const options = { numberOfHeads: h, headDimensions: d, ...(maskOptions(r, t) ?? {}) };
    const withWO = r.bool(0.5);
    const WO = withWO ? weights(r, c, c, f32) : undefined;
    if (!bits) {
      if (withWO) options.W_O = WO;
      const [Q, K, V] = [rows(r, t, c), rows(r, t, c), rows(r, t, c)];
      return { options: optionNames(options), result: attempt(() => lab.multiHeadAttention(Q, K, V, options)) };
    }
    if (withWO) options.W_O = r.bool() ? WO : typed(bits, WO, false);
    const b = batchOf(r, bits);
    const make = () => (b ? Array.from({ length: b }, () => rows(r, t, c, f32)) : rows(r, t, c, f32));
    const [Q, K, V] = [typed(bits, make(), b > 0), typed(bits, make(), b > 0), typed(bits, make(), b > 0)];
    return { options: optionNames(options), shape: Q.shape, result: attempt(() => lab.multiHeadAttention(Q, K, V, options)) };
  };
}

function traceMha(lab, r) {
  const [h, d] = heads(r);
  const c = h * d;
  const t = small(r);
  const options = { numberOfHeads: h, headDimensions: d, ...(maskOptions(r, t) ?? {}) };
  if (r.bool(0.5)) options.W_O = weights(r, c, c);
  let [Q, K, V] = [rows(r, t, c), rows(r, t, c), rows(r, t, c)];
  const form = r.bool(0.3) ? 'Float64Array' : 'number[][]';
  if (form === 'Float64Array') [Q, K, V] = [Q, K, V].map((m) => typed(64, m, false));
  return { form, options: optionNames(options), result: attempt(() => lab.traceMultiHeadAttention(Q, K, V, options)) };
}

function projected(bits) {
  return (lab, r) => {
    const [h, d] = heads(r, bits);
    const c = h * d;
    const t = small(r, bits);
    const f32 = bits === 32;
    const options = { numberOfHeads: h, headDimensions: d, ...(maskOptions(r, t) ?? {}) };
    for (const k of ['W_Q', 'W_K', 'W_V', 'W_O']) options[k] = weights(r, c, c, f32);
    if (!bits) {
      const X = rows(r, t, c);
      return { options: optionNames(options), result: attempt(() => lab.projectedSelfAttention(X, options)) };
    }
    for (const k of ['W_Q', 'W_K', 'W_V', 'W_O']) if (r.bool()) options[k] = typed(bits, options[k], false);
    const b = batchOf(r, bits);
    const X = typed(bits, b ? Array.from({ length: b }, () => rows(r, t, c, f32)) : rows(r, t, c, f32), b > 0);
    return { options: optionNames(options), shape: X.shape, result: attempt(() => lab.projectedSelfAttention(X, options)) };
  };
}

function linearCase(bits) {
  return (lab, r) => {
    const [t, cin, cout] = [small(r, bits), small(r, bits), small(r, bits)];
    const f32 = bits === 32;
    const W = weights(r, cin, cout, f32);
    const bias = r.weighted([[1, () => undefined], [2, () => vector(r, cout, f32)], [1, () => (bits === 32 ? Float32Array : Float64Array).from(vector(r, cout, f32))]])();
    if (!bits) {
      const X = rows(r, t, cin);
      return { bias: bias?.constructor.name, result: attempt(() => (bias === undefined && r.bool() ? lab.linear(X, W) : lab.linear(X, W, bias))) };
    }
    const b = batchOf(r, bits);
    const X = typed(bits, b ? Array.from({ length: b }, () => rows(r, t, cin, f32)) : rows(r, t, cin, f32), b > 0);
    return { bias: bias?.constructor.name, shape: X.shape, result: attempt(() => lab.linear(X, typed(bits, W, false), bias)) };
  };
}

/** The layer's read-only getters and weights. */
const describeLayer = (layer) => ({
  embedDim: layer.embedDim,
  numHeads: layer.numHeads,
  headDim: layer.headDim,
  numParameters: layer.numParameters,
  weights: layer.getWeights(),
});

/** Runs steps on a layer and frees it; each step's result or error is recorded in order. */
function withLayer(make, steps) {
  const built = attempt(make);
  if (!built.ok) return { built };
  const layer = built.ok;
  try {
    return { built: true, steps: steps.map(([label, f]) => [label, attempt(() => f(layer))]) };
  } finally {
    layer.free();
  }
}

/** A layer config: C = h·d, bias, seed (number or bigint), dropout. */
function layerConfig(r, { dropout = false, bits = 0 } = {}) {
  const [h, d] = heads(r, bits);
  const config = { embedDim: h * d, numHeads: h };
  if (r.bool(0.7)) config.seed = r.weighted([[3, () => r.int(0, 1000)], [1, () => r.int(0, 2 ** 31) * 2 ** 21 + r.int(0, 2 ** 21 - 1)], [1, () => BigInt(r.int(0, 2 ** 31)) * 2n ** 33n + BigInt(r.int(0, 2 ** 31))]])();
  if (r.bool(0.3)) config.bias = r.bool(0.3);
  if (dropout) config.dropout = r.pick([0.1, 0.25, 0.5, 0.9]);
  return config;
}

/** query, key, value (key/value undefined, null or given; cross-attention T_k ≠ T_q), in one form. */
function layerInputs(r, c, { bits = 0, batch = batchOf(r, bits) } = {}) {
  const f32 = bits === 32;
  const tq = small(r, bits);
  const cross = r.bool(0.4);
  const tk = cross ? small(r, bits) : tq;
  const make = (t) => (batch ? Array.from({ length: batch }, () => rows(r, t, c, f32)) : rows(r, t, c, f32));
  const form = (m) => (bits ? typed(bits, m, batch > 0) : m);
  const query = form(make(tq));
  let key;
  let value;
  if (cross) {
    key = form(make(tk));
    value = r.bool(0.7) ? form(make(tk)) : r.pick([undefined, null]);
  } else {
    const kind = r.int(0, 3);
    if (kind === 1) key = r.pick([undefined, null]);
    if (kind >= 2) key = form(make(tq));
    if (kind === 3) value = form(make(tq));
  }
  return { query, key, value, tq, tk, batch };
}

function forwardOptions(r, tq, tk, { training = false } = {}) {
  const o = maskOptions(r, tq, tk) ?? {};
  if (r.bool(0.4)) o.needWeights = true;
  if (o.needWeights && r.bool(0.5)) o.averageWeights = true;
  if (training) o.training = true;
  return r.bool(0.1) && Object.keys(o).length === 0 ? undefined : o;
}

/** Gradient of the output's shape. */
function gradLike(r, out, bits) {
  if (bits) {
    const Ctor = bits === 32 ? Float32Array : Float64Array;
    return { data: Ctor.from(out.data, () => entry(r, bits === 32)), shape: out.shape };
  }
  const fill = (m) => (Array.isArray(m[0]) && Array.isArray(m[0][0]) ? m.map(fill) : m.map((row) => row.map(() => entry(r))));
  return fill(out);
}

function layerNew(lab, r) {
  const config = layerConfig(r);
  const c = config.embedDim;
  const { query, key, value, tq, tk, batch } = layerInputs(r, c);
  const options = forwardOptions(r, tq, tk);
  let out;
  const steps = [
    ['describe', (l) => describeLayer(l)],
    ['forward', (l) => (out = l.forward(query, key, value, options))],
    ['backward', (l) => l.backward(gradLike(r, out.output))],
    ['grads', (l) => l.grads()],
  ];
  if (!batch && r.bool(0.5)) {
    const traceOptions = maskOptions(r, tq, tk);
    steps.push(['trace', (l) => l.trace(query, key, value, traceOptions)]);
  }
  if (r.bool(0.3)) {
    const update = {};
    for (const k of ['W_Q', 'W_K', 'W_V', 'W_O']) if (r.bool()) update[k] = weights(r, c, c);
    if (config.bias !== false && r.bool()) update.b_O = vector(r, c);
    steps.push(['setWeights', (l) => l.setWeights(update)]);
    steps.push(['backward after setWeights', (l) => l.backward(gradLike(r, out.output))]);
    steps.push(['forward after setWeights', (l) => l.forward(query, key, value, options)]);
    steps.push(['getWeights after setWeights', (l) => l.getWeights()]);
  }
  return { config, tq, tk, options: optionNames(options), record: withLayer(() => new lab.MultiHeadAttention(config), steps) };
}

function layerImported(lab, r) {
  const [h, d] = heads(r);
  const c = h * d;
  const bias = r.bool(0.6);
  const extra = {};
  if (r.bool(0.3)) extra.dropout = r.pick([0, 0.2]);
  if (r.bool(0.3)) extra.seed = r.int(0, 99);
  let make;
  let source;
  if (r.bool()) {
    source = { W_QKV: weights(r, c, 3 * c), W_O: weights(r, c, c), numHeads: h, ...extra };
    if (bias) Object.assign(source, { b_QKV: vector(r, 3 * c), b_O: vector(r, c) });
    make = () => lab.MultiHeadAttention.fromFusedQKV(source);
  } else {
    const stateKeys = r.bool(0.3);
    source = { in_proj_weight: weights(r, 3 * c, c), numHeads: h, ...extra };
    source[stateKeys ? 'out_proj.weight' : 'out_proj_weight'] = weights(r, c, c);
    if (bias) {
      source.in_proj_bias = vector(r, 3 * c);
      source[stateKeys ? 'out_proj.bias' : 'out_proj_bias'] = vector(r, c);
    }
    make = () => lab.MultiHeadAttention.fromPyTorch(source);
  }
  const { query, key, value, tq, tk } = layerInputs(r, c);
  const options = forwardOptions(r, tq, tk, { training: r.bool(0.2) });
  let out;
  return {
    source: Object.keys(source).sort(),
    options: optionNames(options),
    record: withLayer(make, [
      ['describe', (l) => describeLayer(l)],
      ['forward', (l) => (out = l.forward(query, key, value, options))],
      ['backward', (l) => l.backward(gradLike(r, out.output))],
      ['grads', (l) => l.grads()],
    ]),
  };
}

/** Training with dropout: several passes (the dropout generator advances), backward, grads, then evaluation. */
function layerTraining(bits) {
  return (lab, r) => {
    const config = layerConfig(r, { dropout: true, bits });
    const c = config.embedDim;
    const { query, key, value, tq, tk } = layerInputs(r, c, { bits });
    const passes = r.int(1, 3);
    const steps = [];
    const used = [];
    let out;
    for (let p = 0; p < passes; p += 1) {
      const options = forwardOptions(r, tq, tk, { training: true });
      used.push(optionNames(options));
      steps.push([`forward training ${p}`, (l) => (out = l.forward(query, key, value, options))]);
    }
    steps.push(['backward', (l) => l.backward(gradLike(r, out.output, bits))]);
    steps.push(['grads', (l) => l.grads()]);
    const evalOptions = forwardOptions(r, tq, tk);
    steps.push(['forward evaluation', (l) => l.forward(query, key, value, evalOptions)]);
    if (bits === 32) steps.push(['backward after f32 evaluation', (l) => l.backward(gradLike(r, out.output, bits))]);
    used.push(optionNames(evalOptions));
    return { config, tq, tk, options: used, record: withLayer(() => new lab.MultiHeadAttention(config), steps) };
  };
}

/** The layer on typed arrays (evaluation; f64 also backward and grads). */
function layerTyped(bits) {
  return (lab, r) => {
    const config = layerConfig(r, { bits });
    const c = config.embedDim;
    const { query, key, value, tq, tk } = layerInputs(r, c, { bits });
    const options = forwardOptions(r, tq, tk);
    let out;
    const steps = [['forward', (l) => (out = l.forward(query, key, value, options))]];
    if (bits === 64) {
      steps.push(['backward', (l) => l.backward(gradLike(r, out.output, bits))]);
      steps.push(['grads', (l) => l.grads()]);
    } else if (r.bool(0.5)) {
      // a second forward reuses the packed weights; then setWeights repacks them
      steps.push(['forward again', (l) => l.forward(query, key, value, options)]);
      const update = { W_V: weights(r, c, c) };
      steps.push(['setWeights', (l) => l.setWeights(update)]);
      steps.push(['forward after setWeights', (l) => l.forward(query, key, value, options)]);
    }
    return { config, tq, tk, options: optionNames(options), record: withLayer(() => new lab.MultiHeadAttention(config), steps) };
  };
}

/**
 * Larger shapes, so the kernels' blocks and remainders are crossed (64-row query blocks, register
 * blocks, the packed panels): one export per case. f32 cases keep their outputs small (the values
 * are stored): few value columns, T around 64.
 */
function larger(bits) {
  const f32 = bits === 32;
  return (lab, r) => {
    const which = r.pick(['dotProductAttention', 'multiHeadAttention', 'linear', 'projectedSelfAttention', 'layer']);
    const t = f32 ? r.int(60, 70) : r.pick([r.int(1, 80), r.int(60, 70), r.int(120, 136)]);
    const form = (m) => (bits ? typed(bits, m, false) : m);
    if (which === 'dotProductAttention') {
      const [dk, dv] = [r.int(1, 40), f32 ? r.int(1, 4) : r.int(1, 40)];
      const [Q, K, V] = [rows(r, t, dk, f32), rows(r, t, dk, f32), rows(r, t, dv, f32)];
      const options = maskOptions(r, t);
      return { which, t, dk, dv, options: optionNames(options), result: attempt(() => lab.dotProductAttention(form(Q), form(K), form(V), options)) };
    }
    if (which === 'linear') {
      const [rowsX, cin, cout] = [f32 ? r.int(1, 70) : t, r.int(1, 40), f32 ? r.int(1, 6) : r.int(1, 40)];
      const X = rows(r, rowsX, cin, f32);
      const W = weights(r, cin, cout, f32);
      const bias = r.bool() ? vector(r, cout, f32) : undefined;
      return { which, rowsX, cin, cout, result: attempt(() => lab.linear(form(X), form(W), bias)) };
    }
    const h = f32 ? r.int(1, 2) : r.int(1, 8);
    const d = f32 ? r.int(1, 12 / h) : r.int(1, 16);
    const c = h * d;
    const options = maskOptions(r, t) ?? {};
    if (which === 'multiHeadAttention') {
      const [Q, K, V] = [rows(r, t, c, f32), rows(r, t, c, f32), rows(r, t, c, f32)];
      const o = { numberOfHeads: h, headDimensions: d, ...options };
      if (r.bool()) o.W_O = weights(r, c, c, f32);
      return { which, t, h, d, options: optionNames(o), result: attempt(() => lab.multiHeadAttention(form(Q), form(K), form(V), o)) };
    }
    if (which === 'projectedSelfAttention') {
      const X = rows(r, t, c, f32);
      const o = { numberOfHeads: h, headDimensions: d, ...options, W_Q: weights(r, c, c, f32), W_K: weights(r, c, c, f32), W_V: weights(r, c, c, f32), W_O: weights(r, c, c, f32) };
      return { which, t, h, d, options: optionNames(o), result: attempt(() => lab.projectedSelfAttention(form(X), o)) };
    }
    const X = rows(r, t, c, f32);
    const config = { embedDim: c, numHeads: h, seed: r.int(0, 1000) };
    let out;
    const steps = [['forward', (l) => (out = l.forward(form(X), undefined, undefined, options))]];
    if (!f32) {
      steps.push(['backward', (l) => l.backward(gradLike(r, out.output, bits))]);
      steps.push(['grads', (l) => l.grads()]);
    }
    return { which, t, config, options: optionNames(options), record: withLayer(() => new lab.MultiHeadAttention(config), steps) };
  };
}

// ---- error cases ------------------------------------------------------------------------------------

const Q2 = [[0.5, -1], [2, 0.25]];
const Q3 = [[1, 2, 3], [4, 5, 6]];
const f64 = (m) => typed(64, m, false);
const f32m = (m) => typed(32, m, false);
/** Fixed bad calls, one or more per export: what each throws (class and message) is recorded. */
const ERROR_CALLS = [
  ['dpa: string entry', (lab) => lab.dotProductAttention([[1, '2']], [[1, 2]], [[1, 2]])],
  ['dpa: NaN', (lab) => lab.dotProductAttention([[1, 2], [NaN, 0]], Q2, Q2)],
  ['dpa: Infinity', (lab) => lab.dotProductAttention(Q2, Q2, [[1, Infinity], [0, 0]])],
  ['dpa: ragged', (lab) => lab.dotProductAttention([[1, 2], [3]], Q2, Q2)],
  ['dpa: empty', (lab) => lab.dotProductAttention([], [], [])],
  ['dpa: not a matrix', (lab) => lab.dotProductAttention('Q', Q2, Q2)],
  ['dpa: flat array', (lab) => lab.dotProductAttention([1, 2], Q2, Q2)],
  ['dpa: K width', (lab) => lab.dotProductAttention(Q2, Q3, Q2)],
  ['dpa: V rows', (lab) => lab.dotProductAttention(Q2, Q2, [[1, 2]])],
  ['dpa: misspelled option', (lab) => lab.dotProductAttention(Q2, Q2, Q2, { casual: true })],
  ['dpa: causal not boolean', (lab) => lab.dotProductAttention(Q2, Q2, Q2, { causal: 'yes' })],
  ['dpa: mask shape', (lab) => lab.dotProductAttention(Q2, Q2, Q2, { mask: [[true]] })],
  ['dpa: mask entry', (lab) => lab.dotProductAttention(Q2, Q2, Q2, { mask: [[true, 1], [true, true]] })],
  ['dpa: typed precision mix', (lab) => lab.dotProductAttention(f64(Q2), f32m(Q2), f64(Q2))],
  ['dpa: typed and number[][]', (lab) => lab.dotProductAttention(f64(Q2), Q2, Q2)],
  ['dpa: typed data length', (lab) => lab.dotProductAttention({ data: new Float64Array(3), shape: [2, 2] }, f64(Q2), f64(Q2))],
  ['dpa: typed NaN', (lab) => lab.dotProductAttention({ data: Float64Array.of(1, 2, NaN, 4), shape: [2, 2] }, f64(Q2), f64(Q2))],
  ['dpa: typed shape', (lab) => lab.dotProductAttention({ data: new Float64Array(4), shape: [2, 2, 1, 1] }, f64(Q2), f64(Q2))],
  ['dpa: Int32Array data', (lab) => lab.dotProductAttention({ data: new Int32Array(4), shape: [2, 2] }, f64(Q2), f64(Q2))],
  ['dpa: f32 overflow', (lab) => lab.dotProductAttention(f32m([[3e38, 3e38]]), f32m([[3e38, 3e38]]), f32m([[1, 1]]))],
  ['mha: shape message', (lab) => lab.multiHeadAttention(Q2, Q3, Q2, { numberOfHeads: 2, headDimensions: 1 })],
  ['mha: h·d ≠ C', (lab) => lab.multiHeadAttention(Q2, Q2, Q2, { numberOfHeads: 3, headDimensions: 1 })],
  ['mha: heads 0', (lab) => lab.multiHeadAttention(Q2, Q2, Q2, { numberOfHeads: 0, headDimensions: 2 })],
  ['mha: heads 1.5', (lab) => lab.multiHeadAttention(Q2, Q2, Q2, { numberOfHeads: 1.5, headDimensions: 2 })],
  ['mha: options missing', (lab) => lab.multiHeadAttention(Q2, Q2, Q2)],
  ['mha: misspelled option', (lab) => lab.multiHeadAttention(Q2, Q2, Q2, { numberOfHeds: 1, headDimensions: 2 })],
  ['mha: W_O shape', (lab) => lab.multiHeadAttention(Q2, Q2, Q2, { numberOfHeads: 1, headDimensions: 2, W_O: [[1, 0, 0]] })],
  ['mha: fifth argument with options', (lab) => lab.multiHeadAttention(Q2, Q2, Q2, { numberOfHeads: 1, headDimensions: 2 }, 2)],
  ['mha: positional bad d', (lab) => lab.multiHeadAttention(Q2, Q2, Q2, 2, '1')],
  ['mha: f64 overflow', (lab) => lab.multiHeadAttention([[1e300, 1e300]], [[1e300, 1e300]], [[1, 1]], { numberOfHeads: 1, headDimensions: 2, W_O: [[1e300, 0], [0, 1e300]] })],
  ['mha: typed W_O precision', (lab) => lab.multiHeadAttention(f32m(Q2), f32m(Q2), f32m(Q2), { numberOfHeads: 1, headDimensions: 2, W_O: f64(Q2) })],
  ['trace: Float32Array', (lab) => lab.traceMultiHeadAttention(f32m(Q2), f32m(Q2), f32m(Q2), { numberOfHeads: 1, headDimensions: 2 })],
  ['trace: batch', (lab) => lab.traceMultiHeadAttention(typed(64, [Q2, Q2], true), typed(64, [Q2, Q2], true), typed(64, [Q2, Q2], true), { numberOfHeads: 1, headDimensions: 2 })],
  ['trace: positional', (lab) => lab.traceMultiHeadAttention(Q2, Q2, Q2, 1, 2)],
  ['projected: X width', (lab) => lab.projectedSelfAttention([[1, 2, 3], [4, 5, 6]], { numberOfHeads: 2, headDimensions: 1, W_Q: Q2, W_K: Q2, W_V: Q2, W_O: Q2 })],
  ['projected: W_K shape', (lab) => lab.projectedSelfAttention(Q2, { numberOfHeads: 2, headDimensions: 1, W_Q: Q2, W_K: Q3, W_V: Q2, W_O: Q2 })],
  ['projected: W_O missing', (lab) => lab.projectedSelfAttention(Q2, { numberOfHeads: 2, headDimensions: 1, W_Q: Q2, W_K: Q2, W_V: Q2 })],
  ['projected: options missing', (lab) => lab.projectedSelfAttention(Q2)],
  ['projected: typed W precision', (lab) => lab.projectedSelfAttention(f32m(Q2), { numberOfHeads: 2, headDimensions: 1, W_Q: f64(Q2), W_K: Q2, W_V: Q2, W_O: Q2 })],
  ['linear: W rows', (lab) => lab.linear(Q2, Q3.concat([[7, 8, 9]]))],
  ['linear: b length', (lab) => lab.linear(Q2, Q2, [1, 2, 3])],
  ['linear: typed X, number[][] W', (lab) => lab.linear(f64(Q2), Q2)],
  ['linear: precision mix', (lab) => lab.linear(f64(Q2), f32m(Q2))],
  ['linear: b entry', (lab) => lab.linear(Q2, Q2, [1, 'x'])],
  ['linear: overflow', (lab) => lab.linear([[1e308, 1e308]], [[10], [10]])],
  ['layer: not divisible', (lab) => new lab.MultiHeadAttention({ embedDim: 10, numHeads: 3 })],
  ['layer: config missing', (lab) => new lab.MultiHeadAttention()],
  ['layer: misspelled config', (lab) => new lab.MultiHeadAttention({ embedDim: 4, numHeads: 2, drop_out: 0.1 })],
  ['layer: dropout 1', (lab) => new lab.MultiHeadAttention({ embedDim: 4, numHeads: 2, dropout: 1 })],
  ['layer: seed -1', (lab) => new lab.MultiHeadAttention({ embedDim: 4, numHeads: 2, seed: -1 })],
  ['layer: seed 2^64', (lab) => new lab.MultiHeadAttention({ embedDim: 4, numHeads: 2, seed: 2n ** 64n })],
  ['fused: one bias', (lab) => lab.MultiHeadAttention.fromFusedQKV({ W_QKV: weights(rng(1), 2, 6), b_QKV: [0, 0, 0, 0, 0, 0], W_O: Q2, numHeads: 1 })],
  ['fused: W_QKV shape', (lab) => lab.MultiHeadAttention.fromFusedQKV({ W_QKV: Q2, W_O: Q2, numHeads: 1 })],
  ['pytorch: in_proj shape', (lab) => lab.MultiHeadAttention.fromPyTorch({ in_proj_weight: Q2, out_proj_weight: Q2, numHeads: 1 })],
  ['pytorch: both out_proj keys', (lab) => lab.MultiHeadAttention.fromPyTorch({ in_proj_weight: weights(rng(2), 6, 2), out_proj_weight: Q2, 'out_proj.weight': Q2, numHeads: 1 })],
];

/** Bad calls on a live layer, then one good forward (the layer keeps working). */
const LAYER_ERROR_STEPS = [
  ['backward before forward', (l) => l.backward(Q2)],
  ['grads before backward', (l) => l.grads()],
  ['query width', (l) => l.forward([[1, 2, 3]])],
  ['key width', (l) => l.forward(Q2, [[1, 2, 3]])],
  ['mask shape', (l) => l.forward(Q2, undefined, undefined, { mask: [[true]] })],
  ['misspelled option', (l) => l.forward(Q2, undefined, undefined, { need_weights: true })],
  ['averageWeights not boolean', (l) => l.forward(Q2, undefined, undefined, { averageWeights: 1 })],
  ['setWeights b_* without bias', (l) => l.setWeights({ b_Q: [0, 0] })],
  ['setWeights W shape', (l) => l.setWeights({ W_Q: Q3 })],
  ['forward', (l) => l.forward(Q2)],
  ['backward shape', (l) => l.backward([[1, 2]])],
  ['trace batch', (l) => l.trace([Q2, Q2])],
  ['trace Float32Array', (l) => l.trace(f32m(Q2))],
  ['typed query precision mix', (l) => l.forward(f32m(Q2), f64(Q2))],
  ['f32 evaluation forward', (l) => l.forward(f32m(Q2))],
  ['backward after f32 evaluation', (l) => l.backward(f32m(Q2))],
  ['f32 overflow', (l) => l.forward(f32m([[3e38, -3e38], [3e38, 3e38]]))],
  ['forward after errors', (l) => l.forward(Q2)],
];

function errorsFixed(lab, r, index) {
  if (index < ERROR_CALLS.length) {
    const [label, call] = ERROR_CALLS[index];
    return { label, result: attempt(() => call(lab)) };
  }
  return { label: 'layer', record: withLayer(() => new lab.MultiHeadAttention({ embedDim: 2, numHeads: 1, bias: false, seed: 5 }), LAYER_ERROR_STEPS) };
}

/** Seeded bad input: one mutation of a valid call (a value, a shape, an option), per export. */
function errorsSeeded(lab, r) {
  const t = r.int(1, 4);
  const [h, d] = [r.int(1, 2), r.int(1, 3)];
  const c = h * d;
  const [Q, K, V] = [rows(r, t, c), rows(r, t, c), rows(r, t, c)];
  const target = [Q, K, V][r.int(0, 2)];
  const [i, j] = [r.int(0, t - 1), r.int(0, c - 1)];
  const mutation = r.pick(['NaN', '-Infinity', 'string', 'undefined', 'ragged', 'extra row', 'option', 'mask', 'typed length', 'typed entry']);
  let args = [Q, K, V];
  const options = { numberOfHeads: h, headDimensions: d };
  switch (mutation) {
    case 'NaN': target[i][j] = NaN; break;
    case '-Infinity': target[i][j] = -Infinity; break;
    case 'string': target[i][j] = String(target[i][j]); break;
    case 'undefined': target[i][j] = undefined; break;
    case 'ragged': target[i] = target[i].concat([1]); break;
    case 'extra row': target.push(target[0].slice()); break;
    case 'option': options[r.pick(['causal', 'casual', 'W_O', 'mask', 'numberOfHeads', 'headDimensions'])] = r.pick([1, 'true', null, [[1]], 0, 2.5]); break;
    case 'mask': options.mask = boolMask(r, t, t + r.int(1, 2)); break;
    case 'typed length': args = [Q, K, V].map((m) => f64(m)); args[r.int(0, 2)].shape = [t, c + 1]; break;
    case 'typed entry': args = [Q, K, V].map((m) => typed(r.pick([32, 64]), m, false)); args[r.int(0, 2)].data[r.int(0, t * c - 1)] = r.pick([NaN, Infinity]); break;
    default: throw new Error(mutation);
  }
  const which = r.pick(['dotProductAttention', 'multiHeadAttention', 'traceMultiHeadAttention', 'projectedSelfAttention', 'layer']);
  const { numberOfHeads, headDimensions, ...maskOnly } = options;
  const call = {
    dotProductAttention: () => lab.dotProductAttention(...args, maskOnly),
    multiHeadAttention: () => lab.multiHeadAttention(...args, options),
    traceMultiHeadAttention: () => lab.traceMultiHeadAttention(...args, options),
    projectedSelfAttention: () => lab.projectedSelfAttention(args[0], { ...options, W_Q: weights(r, c, c), W_K: weights(r, c, c), W_V: weights(r, c, c), W_O: options.W_O ?? weights(r, c, c) }),
  }[which];
  if (call) return { mutation, which, result: attempt(call) };
  return { mutation, which, record: withLayer(() => new lab.MultiHeadAttention({ embedDim: c, numHeads: h, seed: 1 }), [['forward', (l) => l.forward(args[0], args[1], args[2], maskOnly)]]) };
}

/** name → { seed, cases, f32, run }. Order here is the order of golden.json. */
// ---- issue 21: the Transformer and repeatedTokens ----------------------------------------------------

/**
 * Every number of an f32 model's result as Float32Array (numbers and Float64Array too: its losses are
 * f64 sums of f32 values), so that the f32 allowance applies to all of them; strings, booleans and
 * the structure stay in the main encoding.
 */
function f32Values(v) {
  if (typeof v === 'number') return Float32Array.of(v);
  if (v instanceof Float64Array) return Float32Array.from(v);
  if (ArrayBuffer.isView(v)) return v;
  if (Array.isArray(v)) return v.length > 0 && v.every((x) => typeof x === 'number') ? Float32Array.from(v) : v.map(f32Values);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, f32Values(x)]));
  return v;
}

/**
 * A small seeded Transformer (every positions, mlp, layerNorm, bias, 0–2 layers) on seeded tokens:
 * forward with weights and a head mask, gradients, headScores, two AdamW steps, getState, and
 * refused calls (their class and message), in order on one model.
 */
function transformerCase(bits) {
  return (lab, r) => {
    const positions = r.pick(['shortformer', 'learned', 'rope', 'none']);
    const numHeads = r.int(1, 3);
    const d = positions === 'rope' ? 2 * r.int(1, 2) : r.int(1, 3);
    const config = {
      vocabSize: r.int(2, 10), contextLength: r.int(2, 8), embedDim: numHeads * d, numHeads, numLayers: r.int(0, 2),
      positions, mlp: r.bool(), layerNorm: r.bool(), bias: r.bool(), seed: r.pick([r.int(0, 1e6), 2n ** 64n - 1n]), dtype: bits === 32 ? 'float32' : 'float64',
    };
    const B = r.int(1, 3);
    const T = r.int(2, config.contextLength);
    const tokens = Array.from({ length: B }, () => Array.from({ length: T }, () => r.int(0, config.vocabSize - 1)));
    const headMask = Array.from({ length: config.numLayers }, () => Array.from({ length: numHeads }, () => r.bool(0.7)));
    const opts = [{ learningRate: r.pick([1e-3, 1e-2, 0.1]) }, { learningRate: 1e-2, betas: [r.pick([0.9, 0.5]), r.pick([0.999, 0.9])], eps: r.pick([1e-8, 1e-3]), weightDecay: r.pick([0, 0.01, 0.3]) }];
    const bad = r.pick([[[0, config.vocabSize]], [[0.5, 1]], [[0]], { data: Int32Array.of(0, -1), shape: [1, 2] }]);
    const typed = { data: Int32Array.from(tokens.flat()), shape: [B, T] };
    const out = bits === 32 ? f32Values : (x) => x;
    const steps = [
      ['config', (m) => ({ config: m.config, numParameters: m.numParameters, step: m.step })],
      ['forward', (m) => out(m.forward(tokens, { needWeights: true, headMask }))],
      ['forward typed', (m) => out(m.forward(typed).losses)],
      ['gradients', (m) => out(m.gradients(tokens))],
      ['headScores', (m) => out(m.headScores(tokens))],
      ['trainStep 1', (m) => out(m.trainStep(tokens, opts[0]))],
      ['trainStep 2', (m) => out(m.trainStep(typed, opts[1]))],
      ['getState', (m) => out(m.getState())],
      ['refused tokens', (m) => m.forward(bad)],
      ['refused options', (m) => m.trainStep(tokens, { learningRate: r.pick([NaN, -1, Infinity]) })],
      ['refused weights', (m) => m.setWeights({ W_E: [[1]] })],
      ['step after refusals', (m) => m.step],
    ];
    const built = attempt(() => new lab.Transformer(config));
    if (!built.ok) return { config: String(config), built };
    const model = built.ok;
    try {
      return { record: steps.map(([label, f]) => [label, attempt(() => f(model))]) };
    } finally {
      model.free();
    }
  };
}

/**
 * Issue 32: a small seeded Transformer (every positions, 1–3 layers) after one AdamW step:
 * compositionScores, every head's circuits, forward with seeded cut paths (and a head mask), and
 * refused calls (their class and message).
 */
function circuitsCase(bits) {
  return (lab, r) => {
    const positions = r.pick(['shortformer', 'learned', 'rope', 'none']);
    const numHeads = r.int(1, 3);
    const d = positions === 'rope' ? 2 * r.int(1, 2) : r.int(1, 3);
    const config = {
      vocabSize: r.int(2, 10), contextLength: r.int(2, 8), embedDim: numHeads * d, numHeads, numLayers: r.int(1, 3),
      positions, mlp: r.bool(), layerNorm: r.bool(), bias: r.bool(), seed: r.int(0, 1e6), dtype: bits === 32 ? 'float32' : 'float64',
    };
    const B = r.int(1, 3);
    const T = r.int(2, config.contextLength);
    const tokens = Array.from({ length: B }, () => Array.from({ length: T }, () => r.int(0, config.vocabSize - 1)));
    const head = () => [r.int(0, config.numLayers - 1), r.int(0, numHeads - 1)];
    const pathMask = [];
    for (let k = r.int(0, 4); k > 0 && config.numLayers > 1; k -= 1) {
      const l2 = r.int(1, config.numLayers - 1);
      pathMask.push({ from: [r.int(0, l2 - 1), r.int(0, numHeads - 1)], to: [l2, r.int(0, numHeads - 1)], input: r.pick(['query', 'key', 'value']) });
    }
    const headMask = Array.from({ length: config.numLayers }, () => Array.from({ length: numHeads }, () => r.bool(0.8)));
    const out = bits === 32 ? f32Values : (x) => x;
    // NaN (l1 ≥ l2) is kept as the string 'NaN': the encoding records numbers' bits, and a NaN's are the engine's
    const scores = (s) => Object.fromEntries(Object.entries(s).map(([k, v]) => [k, Array.isArray(v) ? v.flat(3).map((x) => (Number.isNaN(x) ? 'NaN' : x)) : v]));
    const steps = [
      ['compositionScores', (m) => out(scores(m.compositionScores()))],
      ['circuits', (m) => Array.from({ length: config.numLayers * numHeads }, (_, i) => out(m.circuits({ layer: Math.floor(i / numHeads), head: i % numHeads })))],
      ['forward pathMask', (m) => out(m.forward(tokens, { pathMask, needWeights: true }))],
      ['forward pathMask headMask', (m) => out(m.forward(tokens, { pathMask, headMask }).losses)],
      ['refused circuits', (m) => m.circuits({ layer: r.pick([config.numLayers, -1, 0.5]), head: 0 })],
      ['refused pathMask', (m) => m.forward(tokens, { pathMask: [{ from: head(), to: [0, 0], input: r.pick(['key', 'keys']) }] })],
    ];
    const model = new lab.Transformer(config);
    try {
      model.trainStep(tokens, { learningRate: 0.05 });
      return { record: steps.map(([label, f]) => [label, attempt(() => f(model))]) };
    } finally {
      model.free();
    }
  };
}

/** repeatedTokens over seeded arguments, some refused. */
function repeatedTokensCase(lab, r) {
  const vocabSize = r.int(1, 40);
  const o = { vocabSize, length: r.weighted([[8, () => r.int(1, Math.max(1, vocabSize - 1))], [1, () => vocabSize + r.int(0, 2)], [1, () => r.pick([0, 1.5])]])(), batch: r.int(1, 5) };
  if (r.bool(0.7)) o.seed = r.pick([r.int(0, 1e9), 2 ** 53 - 1, 3n, 2n ** 64n - 1n]);
  return { args: Object.entries(o).map(([k, v]) => `${k}=${v}`), result: attempt(() => lab.repeatedTokens(o)) };
}

export const GROUPS = {
  'dotProductAttention number[][]': { seed: 101, cases: 600, run: dpa(0) },
  'dotProductAttention Float64Array': { seed: 102, cases: 400, run: dpa(64) },
  'dotProductAttention Float32Array': { seed: 103, cases: 200, f32: true, run: dpa(32) },
  'multiHeadAttention options': { seed: 201, cases: 600, run: mha(0) },
  'multiHeadAttention positional': { seed: 202, cases: 300, run: mha(0, true) },
  'multiHeadAttention Float64Array': { seed: 203, cases: 400, run: mha(64) },
  'multiHeadAttention Float32Array': { seed: 204, cases: 200, f32: true, run: mha(32) },
  traceMultiHeadAttention: { seed: 301, cases: 400, run: traceMha },
  'projectedSelfAttention number[][]': { seed: 401, cases: 400, run: projected(0) },
  'projectedSelfAttention Float64Array': { seed: 402, cases: 300, run: projected(64) },
  'projectedSelfAttention Float32Array': { seed: 403, cases: 200, f32: true, run: projected(32) },
  'linear number[][]': { seed: 501, cases: 400, run: linearCase(0) },
  'linear Float64Array': { seed: 502, cases: 300, run: linearCase(64) },
  'linear Float32Array': { seed: 503, cases: 200, f32: true, run: linearCase(32) },
  'MultiHeadAttention new: forward, backward, grads, trace, setWeights': { seed: 601, cases: 600, run: layerNew },
  'MultiHeadAttention fromFusedQKV / fromPyTorch': { seed: 602, cases: 400, run: layerImported },
  'MultiHeadAttention training with dropout number[][]': { seed: 603, cases: 300, run: layerTraining(0) },
  'MultiHeadAttention Float64Array': { seed: 604, cases: 300, run: layerTyped(64) },
  'MultiHeadAttention Float32Array evaluation': { seed: 605, cases: 120, f32: true, run: layerTyped(32) },
  'MultiHeadAttention Float32Array training + backward': { seed: 606, cases: 100, f32: true, run: layerTraining(32) },
  'larger shapes number[][]': { seed: 801, cases: 80, run: larger(0) },
  'larger shapes Float64Array': { seed: 802, cases: 40, run: larger(64) },
  'larger shapes Float32Array': { seed: 803, cases: 16, f32: true, run: larger(32) },
  'errors (fixed)': { seed: 701, cases: ERROR_CALLS.length + 1, run: errorsFixed },
  'errors (seeded)': { seed: 702, cases: 600, run: errorsSeeded },
  // issue 21
  'Transformer float64': { seed: 901, cases: 120, run: transformerCase(64) },
  'Transformer float32': { seed: 902, cases: 80, f32: true, run: transformerCase(32) },
  repeatedTokens: { seed: 903, cases: 200, run: repeatedTokensCase },
  // issue 32
  'Transformer circuits float64': { seed: 1001, cases: 80, run: circuitsCase(64) },
  'Transformer circuits float32': { seed: 1002, cases: 60, f32: true, run: circuitsCase(32) },
};

// ---- computing and comparing ------------------------------------------------------------------------

/**
 * Runs the groups against `lab`. Returns name → { cases: [{ digest, structure?, f32 }], sha256 }.
 * `tamper(group, index, record)` may alter a case's record before it is encoded (the self-test flips
 * one bit of one output with it).
 */
export function compute(lab, { only, tamper } = {}) {
  const out = {};
  for (const [name, group] of Object.entries(GROUPS)) {
    if (only && !only.includes(name)) continue;
    const whole = createHash('sha256');
    const cases = [];
    for (let index = 0; index < group.cases; index += 1) {
      const r = rng(caseSeed(group.seed, index));
      const record = group.run(lab, r, index);
      if (tamper) tamper(name, index, record);
      const encoded = encode(record);
      const f32 = f32Bytes(encoded.f32);
      whole.update(encoded.main).update(f32);
      const digest = createHash('sha256').update(encoded.main).update(f32).digest('hex').slice(0, CASE_HEX);
      const structure = group.f32 ? createHash('sha256').update(encoded.main).digest('hex').slice(0, CASE_HEX) : undefined;
      cases.push({ digest, structure, f32: encoded.f32 });
    }
    out[name] = { cases, sha256: whole.digest('hex') };
  }
  return out;
}

/** The fixture's JSON for computed groups. */
export function toFixture(computed, generatedFrom) {
  const groups = {};
  for (const [name, g] of Object.entries(computed)) {
    const entry = { cases: g.cases.length, sha256: g.sha256, digests: g.cases.map((c) => c.digest) };
    if (GROUPS[name].f32) {
      entry.structure = g.cases.map((c) => c.structure);
      entry.f32 = g.cases.map((c) => f32Bytes(c.f32).toString('base64') + '|' + c.f32.map((a) => a.length).join(','));
    }
    groups[name] = entry;
  }
  return { about: 'SHA-256 of every export\'s results over seeded cases; see tests/golden/golden.mjs', generatedFrom, groups };
}

/** Largest relative difference of the case's Float32 arrays against the stored ones, or null if their sizes differ. */
function f32Difference(stored, arrays) {
  const [b64, lengths] = stored.split('|');
  const expectedLengths = lengths === '' ? [] : lengths.split(',').map(Number);
  if (expectedLengths.length !== arrays.length || expectedLengths.some((n, i) => n !== arrays[i].length)) return null;
  const bytes = Buffer.from(b64, 'base64');
  const all = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  let at = 0;
  let worst = 0;
  for (const a of arrays) {
    const e = all.subarray(at, at + a.length);
    at += a.length;
    let scale = 0;
    for (const x of e) scale = Math.max(scale, Math.abs(x));
    scale = Math.max(scale, 1e-30);
    for (let i = 0; i < a.length; i += 1) {
      const rel = Math.abs(a[i] - e[i]) / scale;
      if (!(rel <= worst)) worst = Number.isNaN(rel) ? Infinity : Math.max(worst, rel);
    }
  }
  return worst;
}

/**
 * Compares computed groups with the fixture. Returns one line per group:
 * { group, ok, how: 'bits' | 'within 1e-6' | 'missing' | …, firstBadCase?, detail }.
 */
export function compare(fixture, computed, { all = true } = {}) {
  const report = [];
  if (all) {
    for (const name of Object.keys(fixture.groups)) {
      if (!(name in computed)) report.push({ group: name, ok: false, how: 'missing', detail: 'in golden.json but no longer computed' });
    }
  }
  for (const [name, g] of Object.entries(computed)) {
    const stored = fixture.groups[name];
    if (!stored) {
      report.push({ group: name, ok: false, how: 'new', detail: 'not in golden.json (run with --write)' });
      continue;
    }
    if (stored.cases !== g.cases.length) {
      report.push({ group: name, ok: false, how: 'case count', detail: `${g.cases.length} cases, golden.json has ${stored.cases}` });
      continue;
    }
    if (g.sha256 === stored.sha256) {
      report.push({ group: name, ok: true, how: 'bits', detail: `${stored.cases} cases, sha256 ${g.sha256.slice(0, 16)}…` });
      continue;
    }
    let firstBad = -1;
    let bad = 0;
    let worst = 0;
    let within = 0;
    for (let i = 0; i < g.cases.length; i += 1) {
      const c = g.cases[i];
      if (c.digest === stored.digests[i]) continue;
      if (GROUPS[name].f32 && c.structure === stored.structure[i]) {
        const diff = f32Difference(stored.f32[i], c.f32);
        if (diff !== null && diff <= F32_RELATIVE) {
          within += 1;
          worst = Math.max(worst, diff);
          continue;
        }
      }
      bad += 1;
      if (firstBad < 0) firstBad = i;
    }
    if (bad === 0 && within > 0) {
      report.push({ group: name, ok: true, how: 'within 1e-6', detail: `${within} of ${stored.cases} cases differ in Float32 bits, largest relative difference ${worst.toExponential(2)}` });
    } else if (bad === 0) {
      // every case digest matches but the group digest does not: the stored digests disagree with it
      report.push({ group: name, ok: false, how: 'group digest', firstBadCase: -1, detail: 'every case matches its digest but the group SHA-256 differs (golden.json edited by hand?)' });
    } else {
      report.push({ group: name, ok: false, how: 'differs', firstBadCase: firstBad, detail: `${bad} of ${stored.cases} cases differ, the first is case ${firstBad}` });
    }
  }
  return report;
}

export function loadPackage(path = PACKAGE) {
  const require = createRequire(import.meta.url);
  const resolved = require.resolve(path);
  packageDir = dirname(resolved) + sep;
  return require(resolved);
}

export const readFixture = () => JSON.parse(readFileSync(FIXTURE, 'utf8'));

function main(argv) {
  const write = argv.includes('--write');
  const p = argv.indexOf('--package');
  const lab = loadPackage(p >= 0 ? resolve(argv[p + 1]) : PACKAGE);
  const started = performance.now();
  const computed = compute(lab);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const total = Object.values(computed).reduce((s, g) => s + g.cases.length, 0);
  if (write) {
    let commit = 'unknown';
    try {
      commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: fileURLToPath(new URL('.', import.meta.url)), encoding: 'utf8' }).trim();
      const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'Cargo.toml', 'Cargo.lock'], { cwd: fileURLToPath(new URL('../..', import.meta.url)), encoding: 'utf8' }).trim();
      if (dirty) commit += ' (with uncommitted changes in src/)';
    } catch {}
    // one group per block, each list on one line (a regenerated fixture's diff names the groups that moved)
    const json = JSON.stringify(toFixture(computed, commit), (k, v) => (Array.isArray(v) ? JSON.stringify(v) : v), 1).replace(/"(\[.*\])"/g, (_, a) => JSON.parse(`"${a}"`)) + '\n';
    writeFileSync(FIXTURE, json);
    console.log(`golden: wrote ${FIXTURE}: ${Object.keys(computed).length} groups, ${total} cases, ${(json.length / 1024).toFixed(0)} KiB (${seconds} s)`);
    return 0;
  }
  const report = compare(readFixture(), computed);
  for (const line of report) console.log(`${line.ok ? 'ok  ' : 'FAIL'} ${line.group}: ${line.how}; ${line.detail}`);
  const failed = report.filter((l) => !l.ok).length;
  console.log(`golden: ${total} cases in ${report.length} groups, ${failed} failed (${seconds} s)`);
  return failed ? 1 : 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = main(process.argv.slice(2));
