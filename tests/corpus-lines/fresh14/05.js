// Style: a state machine: a `phase` variable and a switch over the phase names, each token going append → score → scale → softmax → mix (once per head) → emit.
export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  const fits = (M) => M.length === Q.length && M[0].length === C;
  if (!fits(Q) || !fits(K) || !fits(V)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const T = Q.length;
  const d = headDimensions;
  const keys = [];
  const values = [];
  const rows = [];
  let t = 0;
  let h = 0;
  let row = null;
  let logits = null;
  let probs = null;
  let phase = T > 0 ? 'append' : 'done';

  while (phase !== 'done') {
    switch (phase) {
      case 'emit':
        rows.push(row);
        t += 1;
        phase = t < T ? 'append' : 'done';
        break;
      case 'append':
        keys.push(K[t]);
        values.push(V[t]);
        row = new Array(C).fill(0);
        h = 0;
        phase = 'score';
        break;
      case 'score': {
        const lo = h * d;
        logits = keys.map((key) => {
          let s = 0;
          for (let c = lo; c < lo + d; c++) s += Q[t][c] * key[c];
          return s;
        });
        phase = 'scale';
        break;
      }
      case 'scale':
        logits = logits.map((x) => x / Math.sqrt(d));
        phase = 'softmax';
        break;
      case 'softmax': {
        const peak = Math.max(...logits);
        const exps = logits.map((x) => Math.exp(x - peak));
        const total = exps.reduce((a, b) => a + b, 0);
        probs = exps.map((e) => e / total);
        phase = 'mix';
        break;
      }
      case 'mix': {
        const base = h * d;
        for (let j = 0; j < values.length; j++) {
          for (let c = base; c < base + d; c++) row[c] += probs[j] * values[j][c];
        }
        h += 1;
        phase = h < numberOfHeads ? 'score' : 'emit';
        break;
      }
      default:
        throw new Error(`unknown phase ${phase}`);
    }
  }
  return rows;
}
