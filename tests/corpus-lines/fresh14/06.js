// Style: generator pipelines: every stage a function* that takes rows and yields rows (columns, scores, scaled, softmaxed, mixed, joined), a query head's attention a chain of them.
function* columns(rows, from, width) {
  for (const row of rows) yield row.slice(from, from + width);
}

function* scoresAgainst(queries, keys) {
  for (const q of queries) {
    const logits = [];
    for (const k of keys) {
      let s = 0;
      for (let c = 0; c < q.length; c++) s += q[c] * k[c];
      logits.push(s);
    }
    yield logits;
  }
}

function* scaled(rows, factor) {
  for (const row of rows) yield row.map((x) => x * factor);
}

function* softmaxed(rows) {
  for (const row of rows) {
    const peak = Math.max(...row);
    const exps = row.map((x) => Math.exp(x - peak));
    const total = exps.reduce((a, b) => a + b, 0);
    yield exps.map((e) => e / total);
  }
}

function* mixed(weightRows, values) {
  for (const w of weightRows) {
    const out = new Array(values[0].length).fill(0);
    w.forEach((wj, j) => {
      for (let c = 0; c < out.length; c++) out[c] += wj * values[j][c];
    });
    yield out;
  }
}

// parts: one list of rows per head; yields each token's row, the heads side by side
function* joined(parts) {
  for (let t = 0; t < parts[0].length; t++) yield parts.flatMap((p) => p[t]);
}

const shape = (M) => `${M.length}×${M[0].length}`;

export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  if (numberOfHeads % numberOfKVHeads !== 0) {
    throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  }
  const d = headDimensions;
  const C = numberOfHeads * d;
  const C_kv = numberOfKVHeads * d;
  if (Q[0].length !== C) throw new RangeError(`Q is ${shape(Q)} but must be T_q×(numberOfHeads · headDimensions) = T_q×${C}`);
  if (K[0].length !== C_kv) throw new RangeError(`K is ${shape(K)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${C_kv}`);
  if (V[0].length !== C_kv) throw new RangeError(`V is ${shape(V)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${C_kv}`);
  if (V.length !== K.length) throw new RangeError(`V is ${shape(V)} but K is ${shape(K)}`);

  const groupSize = numberOfHeads / numberOfKVHeads;
  const headOutputs = [];
  for (let h = 0; h < numberOfHeads; h++) {
    const kv = Math.floor(h / groupSize);
    const qh = columns(Q, h * d, d);
    const kh = [...columns(K, kv * d, d)];
    const vh = [...columns(V, kv * d, d)];
    const logits = scoresAgainst(qh, kh);
    const weights = softmaxed(scaled(logits, 1 / Math.sqrt(d)));
    headOutputs.push([...mixed(weights, vh)]);
  }
  return [...joined(headOutputs)];
}
