// Style: the observer pattern with a tiny event emitter: each token emits 'append' with its K and V rows, one listener per head keeps that head's slices as its own cache, and the token's 'query' event is answered by every head through a reply callback.
function createEmitter() {
  const listeners = {};
  return {
    on(event, fn) {
      (listeners[event] ??= []).push(fn);
    },
    emit(event, ...args) {
      (listeners[event] ?? []).forEach((fn) => fn(...args));
    },
  };
}

export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  const T = Q.length;
  if ([Q, K, V].some((M) => M.length !== T || M.some((row) => row.length !== C))) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const bus = createEmitter();
  for (let h = 0; h < numberOfHeads; h++) subscribeHead(bus, h * headDimensions, headDimensions);

  const rows = [];
  for (let t = 0; t < T; t++) {
    bus.emit('append', K[t], V[t]);
    const row = new Array(C).fill(0);
    bus.emit('query', Q[t], (from, part) => {
      part.forEach((x, c) => {
        row[from + c] = x;
      });
    });
    rows.push(row);
  }
  return rows;
}

// One head: columns from … from + d − 1 of every row.
function subscribeHead(bus, from, d) {
  const keys = [];
  const values = [];
  bus.on('append', (k, v) => {
    keys.push(k.slice(from, from + d));
    values.push(v.slice(from, from + d));
  });
  bus.on('query', (q, reply) => {
    const qh = q.slice(from, from + d);
    const logits = keys.map((kh) => qh.reduce((s, x, c) => s + x * kh[c], 0) / Math.sqrt(d));
    const top = Math.max(...logits);
    const exps = logits.map((l) => Math.exp(l - top));
    const total = exps.reduce((a, b) => a + b, 0);
    const out = new Array(d).fill(0);
    exps.forEach((e, j) => values[j].forEach((x, c) => {
      out[c] += (e / total) * x;
    }));
    reply(from, out);
  });
}
