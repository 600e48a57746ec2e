// A right answer over Float64Array scratch buffers with explicit strides: Q, K and V copied into flat row-major buffers, one reusable buffer for a query's logits, every head written into a flat T×C buffer at its column offset, W_O read through its own stride.
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const nh = numberOfHeads;
  const hd = headDimensions;
  const width = nh * hd;
  const n = Q.length;
  for (const M of [Q, K, V]) {
    if (M.length !== n || M[0].length !== width) {
      throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
    }
  }
  const flat = (M) => Float64Array.from(M.flat());
  const q = flat(Q);
  const k = flat(K);
  const v = flat(V);
  const rowStride = width;
  const logits = new Float64Array(n);
  const mixed = new Float64Array(n * width);
  const inv = 1 / Math.sqrt(hd);

  for (let h = 0; h < nh; h++) {
    const col0 = h * hd;
    for (let i = 0; i < n; i++) {
      const qBase = i * rowStride + col0;
      let top = -Infinity;
      for (let j = 0; j < n; j++) {
        const kBase = j * rowStride + col0;
        let s = 0;
        for (let c = 0; c < hd; c++) s += q[qBase + c] * k[kBase + c];
        logits[j] = s * inv;
        if (logits[j] > top) top = logits[j];
      }
      let norm = 0;
      for (let j = 0; j < n; j++) {
        logits[j] = Math.exp(logits[j] - top);
        norm += logits[j];
      }
      const outBase = i * rowStride + col0;
      for (let j = 0; j < n; j++) {
        const p = logits[j] / norm;
        const vBase = j * rowStride + col0;
        for (let c = 0; c < hd; c++) mixed[outBase + c] += p * v[vBase + c];
      }
    }
  }

  if (!W_O) return Array.from({ length: n }, (_, i) => Array.from(mixed.subarray(i * width, (i + 1) * width)));
  const wStride = W_O[0].length;
  const w = flat(W_O);
  return Array.from({ length: n }, (_, i) => Array.from({ length: width }, (_, col) => {
    let acc = 0;
    for (let c = 0; c < width; c++) acc += mixed[i * width + c] * w[c * wStride + col];
    return acc;
  }));
}
