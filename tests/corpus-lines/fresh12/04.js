// Style: "kernels" over flat Float64Array buffers, every result one flat buffer written by index math.
function flat(M) {
  return Float64Array.from(M.flat());
}

// out (n×m) = A (n×k) · B (k×m), all row-major flat buffers.
function gemm(A, B, n, k, m) {
  const out = new Float64Array(n * m);
  for (let i = 0; i < n; i++) {
    for (let p = 0; p < k; p++) {
      const a = A[i * k + p];
      for (let j = 0; j < m; j++) out[i * m + j] += a * B[p * m + j];
    }
  }
  return out;
}

function headKernel(Qf, Kf, Vf, T, C, h, d, out) {
  const off = h * d;
  const s = new Float64Array(T);
  const inv = 1 / Math.sqrt(d);
  for (let i = 0; i < T; i++) {
    let top = -Infinity;
    for (let j = 0; j < T; j++) {
      let acc = 0;
      for (let c = 0; c < d; c++) acc += Qf[i * C + off + c] * Kf[j * C + off + c];
      s[j] = acc * inv;
      if (s[j] > top) top = s[j];
    }
    let z = 0;
    for (let j = 0; j < T; j++) {
      s[j] = Math.exp(s[j] - top);
      z += s[j];
    }
    const dst = out.subarray(i * C + off, i * C + off + d);
    for (let j = 0; j < T; j++) {
      const w = s[j] / z;
      for (let c = 0; c < d; c++) dst[c] += w * Vf[j * C + off + c];
    }
  }
}

export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  const shape = (M) => `${M.length}×${M[0].length}`;
  if (X.some((row) => row.length !== C)) {
    throw new RangeError(`X is ${shape(X)} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`);
  }
  const named = { W_Q, W_K, W_V, W_O };
  for (const name of ['W_Q', 'W_K', 'W_V', 'W_O']) {
    const W = named[name];
    if (W.length !== C || W.some((row) => row.length !== C)) throw new RangeError(`${name} is ${shape(W)} but must be C×C = ${C}×${C}`);
  }
  const T = X.length;
  const x = flat(X);
  const Qf = gemm(x, flat(W_Q), T, C, C);
  const Kf = gemm(x, flat(W_K), T, C, C);
  const Vf = gemm(x, flat(W_V), T, C, C);
  const joined = new Float64Array(T * C);
  for (let h = 0; h < numberOfHeads; h++) headKernel(Qf, Kf, Vf, T, C, h, headDimensions, joined);
  const y = gemm(joined, flat(W_O), T, C, C);
  return Array.from({ length: T }, (_, i) => Array.from(y.subarray(i * C, i * C + C)));
}
