// Style: closures holding state, a cache made by makeCache() with a counter and string-keyed entries `${kind}${t}`, read back by a counter-based iterator.
function makeCache() {
  const store = {};
  let count = 0;
  return {
    append(key, value) {
      store['k' + count] = key;
      store['v' + count] = value;
      count += 1;
    },
    iterator() {
      let n = 0;
      return {
        next() {
          if (n >= count) return { done: true };
          const item = { key: store['k' + n], value: store['v' + n] };
          n += 1;
          return { done: false, value: item };
        },
      };
    },
    size() {
      return count;
    },
  };
}

function headOutput(query, cache, lo, d) {
  const logits = [];
  const values = [];
  const it = cache.iterator();
  for (let step = it.next(); !step.done; step = it.next()) {
    let s = 0;
    for (let c = 0; c < d; c++) s += query[lo + c] * step.value.key[lo + c];
    logits.push(s / Math.sqrt(d));
    values.push(step.value.value);
  }
  const top = Math.max(...logits);
  const ex = logits.map((x) => Math.exp(x - top));
  const z = ex.reduce((a, b) => a + b, 0);
  const out = new Array(d).fill(0);
  for (let j = 0; j < values.length; j++) {
    for (let c = 0; c < d; c++) out[c] += (ex[j] / z) * values[j][lo + c];
  }
  return out;
}

export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  const T = Q.length;
  if ([Q, K, V].some((M) => M.length !== T || M.some((row) => row.length !== C))) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const cache = makeCache();
  const rows = [];
  for (let t = 0; t < T; t++) {
    cache.append(K[t], V[t]);
    const row = [];
    for (let h = 0; h < numberOfHeads; h++) {
      row.push(...headOutput(Q[t], cache, h * headDimensions, headDimensions));
    }
    rows.push(row);
  }
  return rows;
}
