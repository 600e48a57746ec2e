// The repairs of the first wrong line (issue 28, www/src/diagnosis/repair.js): one-edit variants of
// the learner's module run on the cases; the lines whose variants pass them all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judge } from '../../www/src/cases.js';
import { inRounds, mutantsOf, repairLines, sliceDepths } from '../../www/src/diagnosis/repair.js';
import { toScript } from '../../www/src/script.js';

const load = (script) => (0, eval)(script);
const RIGHT = `export function scaled(x, d) {
  const out = [];
  for (let i = 0; i < x.length; i++) {
    out.push(x[i] / Math.sqrt(d));
  }
  return out;
}
`;
const cases = [
  { kind: 'fixed', args: [[[1, 2]], 4], expected: [[0.5, 1]], tolerance: 1e-9 },
  { kind: 'fixed', args: [[[3, 6], [9, 12]], 9], expected: [[1, 2], [3, 4]], tolerance: 1e-9 },
];
// (the function returns rows: wrap x's rows)
const wrap = (source) => source.replace('export function scaled(x, d) {', 'export function scaled(rows, d) {\n  return rows.map((x) => inner(x, d));\n}\nfunction inner(x, d) {');

test('a slip of one edit is repaired at its own line, and only there', () => {
  const slip = wrap(RIGHT).replace('x[i] / Math.sqrt(d)', 'x[i] / d');
  const line = slip.split('\n').findIndex((l) => l.includes('x[i] / d')) + 1;
  const r = repairLines(slip, 'scaled', cases, { load, toScript, judge, near: [1] });
  assert.deepEqual(r.lines, [line]);
  assert.ok(r.passed.some((p) => p.to === 'Math.sqrt(d)' && p.from === 'd'));
  assert.ok(r.complete && r.tried > 10);
});

test('a variable made wrong and read once is repaired at the line that made it', () => {
  const slip = wrap(RIGHT).replace('  const out = [];', '  const out = [];\n  const root = d;').replace('x[i] / Math.sqrt(d)', 'x[i] / root');
  const line = slip.split('\n').findIndex((l) => l.includes('const root = d')) + 1;
  const use = slip.split('\n').findIndex((l) => l.includes('x[i] / root')) + 1;
  // (a root left out where the size is made or where it is read: either line)
  assert.deepEqual(repairLines(slip, 'scaled', cases, { load, toScript, judge }).lines, [line, use].sort((a, b) => a - b));
});

test('a variant that loops forever or recurses without end is stopped, and the search goes on', () => {
  // `k += 1` made `k = 1` never ends the loop; `f(n - 1)` made `f(n)` never ends the recursion
  const slip = `export function scaled(rows, d) {
  let k = 0;
  while (k < 3) k += 1;
  const f = (n) => (n <= 0 ? 0 : f(n - 1));
  return rows.map((x) => x.map((v) => v / d + f(k)));
}
`;
  const r = repairLines(slip, 'scaled', cases, { load, toScript, judge });
  assert.ok(r.tried > 10, `${r.tried} variants tried`);
  assert.ok(r.lines.includes(5), `the slip's line: ${r.lines}`);
});

test('the edit that repairs is not lost to a pause of the machine: a variant stopped by the clock alone runs once more', () => {
  // (every repairing variant's first run is paused 50 ms, as a busy machine pauses any code: the clock,
  // not its loop turns, stops it; Date.now is the search's clock, moved on here instead of waited for)
  const slip = wrap(RIGHT).replace('x[i] / Math.sqrt(d)', 'Math.pauseOnce(x[i] / d, d)');
  const line = slip.split('\n').findIndex((l) => l.includes('pauseOnce')) + 1;
  const now = Date.now;
  let [offset, pauses, runs] = [0, 0, 0];
  Date.now = () => now() + offset;
  Math.pauseOnce = (value, d) => {
    // (the first entry as a repairing variant computes it, 1 / √4: its first run paused, its second not)
    if (d === 4 && value === 0.5 && runs++ % 2 === 0) [pauses, offset] = [pauses + 1, offset + 50];
    return value;
  };
  try {
    const r = repairLines(slip, 'scaled', cases, { load, toScript, judge, near: [line] });
    assert.ok(pauses > 0, 'a repairing variant ran and was paused');
    assert.deepEqual(r.lines, [line]);
  } finally {
    Date.now = now;
    delete Math.pauseOnce;
  }
});

test('a module that does not parse gives no lines; every variant is a module of its own', () => {
  assert.deepEqual(repairLines('export function scaled(x) { return x +; }', 'scaled', cases, { load, toScript, judge }).lines, []);
  const source = wrap(RIGHT);
  for (const m of mutantsOf(source)) {
    assert.ok(m.start >= 0 && m.end <= source.length && m.start <= m.end);
    assert.ok(m.lines.every((l) => Number.isInteger(l) && l >= 1));
  }
});

test('an error check left out is repaired where the check is', () => {
  const right = `export function scaled(rows, d) {
  if (!(d > 0)) throw new RangeError('d must be > 0');
  return rows.map((x) => x.map((v) => v / Math.sqrt(d)));
}
`;
  const slip = right.replace('!(d > 0)', '!(d >= 0)');
  const withError = [...cases, { kind: 'error', args: [[[1]], 0], throws: { name: 'RangeError', messageStartsWith: 'd must be' } }];
  assert.deepEqual(repairLines(slip, 'scaled', withError, { load, toScript, judge }).lines, [2]);
});

test('an answer the cases do not fail has nothing to repair', () => {
  const r = repairLines(wrap(RIGHT), 'scaled', cases, { load, toScript, judge });
  assert.deepEqual(r.lines, []);
  assert.equal(r.tried, 0);
});

test('a term left out is repaired in the second round, only when no edit of the first repairs it', () => {
  // `v / d` for `v / (d * k)`, with k = 1 on every case but the second: the first round's edits
  // (operators, names, constants) do not give it back; a term inserted does
  const right = `export function scaled(rows, d) {
  const k = rows.length;
  const out = rows.map((x) => x.map((v) => v / (d * k)));
  return out;
}
`;
  const twice = [
    { kind: 'fixed', args: [[[2, 4]], 2], expected: [[1, 2]], tolerance: 1e-9 },
    { kind: 'fixed', args: [[[4, 8], [12, 16]], 2], expected: [[1, 2], [3, 4]], tolerance: 1e-9 },
  ];
  assert.ok(twice.every((c) => judge(c, { output: load(toScript(right))().scaled(...c.args) }).pass));
  const slip = right.replace('v / (d * k)', 'v / d');
  const r = repairLines(slip, 'scaled', twice, { load, toScript, judge });
  assert.deepEqual(r.lines, [3]);
  assert.ok(r.passed.every((p) => /k/.test(p.to)), JSON.stringify(r.passed));
  // (a slip the first round repairs gets no second round: its edits are not among those passed)
  const first = repairLines(right.replace('v / (d * k)', 'v * (d * k)'), 'scaled', twice, { load, toScript, judge });
  assert.deepEqual(first.lines, [3]);
  assert.ok(first.passed.every((p) => p.to === '/'), JSON.stringify(first.passed));
});

test('the second round: a property read by another name, a helper left out, an infinity written as a number', () => {
  const second = (source) => mutantsOf(source, { round: 2 }).map((m) => source.slice(0, m.start) + m.text + source.slice(m.end));
  const records = `export function f(head) {
  head.weights = head.scores.map((s) => s * 2);
  return head.scores;
}
`;
  assert.ok(second(records).some((s) => s.includes('return head.weights;')));
  const helper = `const tr = (m) => m[0].map((_, j) => m.map((r) => r[j]));
export function f(A, B) {
  const Bt = B;
  return A.map((a) => Bt.map((b) => a[0] * b[0]));
}
`;
  assert.ok(second(helper).some((s) => s.includes('const Bt = tr(B);')));
  const bound = `export function f(j) {
  if (j > 1) return 0;
  return j;
}
`;
  assert.ok(second(bound).some((s) => s.includes('return -Infinity;')));
  assert.ok(second(bound).some((s) => s.includes('return Infinity;')));
  // (and the first round has none of these: they are what it cannot undo)
  const first = (source) => mutantsOf(source).map((m) => source.slice(0, m.start) + m.text + source.slice(m.end));
  assert.ok(!first(helper).some((s) => s.includes('const Bt = tr(B);')));
  assert.ok(!first(records).some((s) => s.includes('return head.weights;')));
  assert.ok(!first(bound).some((s) => s.includes('Infinity;')));
});

test('a method call of no arguments left in, and two arguments swapped, are first-round edits; a chain\'s edit is at its method\'s line', () => {
  const edits = (source) => mutantsOf(source).map((m) => ({ text: source.slice(0, m.start) + m.text + source.slice(m.end), lines: m.lines }));
  const chain = `export function f(q, k, v) {
  return q
    .mul(k.T())
    .softmax()
    .mul(v.T());
}
`;
  const unwrapped = edits(chain).find((e) => e.text.includes('.mul((v))'));
  assert.ok(unwrapped, 'v.T() unwrapped');
  assert.deepEqual(unwrapped.lines, [5]);
  assert.ok(!edits('export function f(x) { return this.g(); }').some((e) => e.text.includes('return (this)')), 'not this.g()');
  // (two parameters swapped, `(j, i) =>` for `(i, j) =>`, is a second-round edit: it makes up for arguments swapped at a call)
  const params = 'export function f(M) {\n  return M.map((row, i) => row.map((x, j) => M[j][i]));\n}\n';
  assert.ok(!edits(params).some((e) => e.text.includes('(i, row) =>')));
  assert.ok(mutantsOf(params, { round: 2 }).some((m) => params.slice(0, m.start) + m.text + params.slice(m.end) === params.replace('(row, i)', '(i, row)') && m.lines[0] === 2), 'a second-round edit');
  // (a link of a chain, with arguments, left in: `rows.map(f).map(f)`)
  assert.ok(edits('export function f(rows, g) {\n  return rows.map(g)\n    .map(g);\n}\n').some((e) => e.text.includes('return (rows.map(g));') && e.lines[0] === 3));
  const piped = `export function f(x) {
  return pipe(scores, softmax, scale)(x);
}
`;
  assert.ok(edits(piped).some((e) => e.text.includes('pipe(scores, scale, softmax)')));
  assert.ok(edits(piped).some((e) => e.text.includes('pipe(softmax, scores, scale)')));
});

test('terms are put between names that hold numbers, not arrays or objects', () => {
  const source = `export function f(rows, scale, offset) {
  return rows.map((r) => r[0] * scale);
}
`;
  const second = mutantsOf(source, { round: 2 }).map((m) => source.slice(0, m.start) + m.text + source.slice(m.end));
  assert.ok(second.some((s) => s.includes('(scale + offset)')));
  assert.ok(!second.some((s) => /\(rows [-+*/] |[-+*/] rows\)|\(r [-+*/] |[-+*/] r\)/.test(s)), 'no term with rows or r, whose members are read');
});

test('the slice of a line: what declares the names it reads, and the calls of the function around it, steps back', () => {
  const source = `const cols = (from) => (M) => M.map((row) => row.slice(from, from + 2));
export function f(K, group) {
  const headOf = (h) => Math.floor(h / group);
  const g = headOf(1);
  const unrelated = 7;
  return cols(g * 2)(K);
}
`;
  const depth = sliceDepths(source, [1]);
  assert.equal(depth.get(1), 0);
  assert.equal(depth.get(6), 1, 'the call of cols');
  assert.equal(depth.get(4), 2, 'what made g, read by that call');
  assert.equal(depth.get(3), 3, 'what made headOf');
  assert.ok(!depth.has(5), 'a line nothing flows from');
  // (a loop's index is not another loop's; an entry written makes the array)
  const loops = `export function f(S, T) {
  for (let j = 0; j < T; j++) S[j] = 2 * j;
  const row = S.slice(0, T);
  for (let j = 0; j < T; j++) row[j] = Math.exp(row[j]);
  return row.map((x) => x / T);
}
`;
  const d2 = sliceDepths(loops, [5]);
  assert.equal(d2.get(4), 1, 'the line writing into row');
  assert.equal(d2.get(3), 1, 'the line declaring row');
  assert.ok(!d2.has(2) || d2.get(2) > 1, 'the other loop is not a step back through its j');
});

test('where the first round fills most of the bound, a near term of the second is tried before its far edits, which still outrank it', () => {
  // `i` for `i * d` on line 3, the only near line here; the first round's edits of line 4 are far
  const source = `export function f(rows, d) {
  const out = [];
  const at = (i) => i;
  for (let i = 0; i < rows.length; i++) out.push(rows[at(i)]);
  return out;
}
`;
  const mutants = mutantsOf(source);
  const distance = (line) => (line === 3 ? 0 : 100);
  // (`bound`: the bound on variants inRounds plans for; a first round as large as it is tried mixed with the second)
  const run = (cap, passing, bound = mutants.length) => {
    const passed = [];
    const order = [];
    const tryAll = (list) => {
      for (const m of list) {
        if (order.length >= cap) return false;
        order.push(m);
        if (passing(m)) passed.push({ lines: m.lines, to: m.text });
      }
      return true;
    };
    const complete = inRounds(source, mutants, distance, passed, tryAll, bound);
    return { passed, order, complete };
  };
  const key = (m) => `${m.start}:${m.end}:${m.text}`;
  const seen = new Set(mutants.map(key));
  const near1 = mutants.filter((m) => m.line === 3).length;
  const near2 = mutantsOf(source, { round: 2 }).filter((m) => m.line === 3 && !seen.has(key(m))).length;
  const far1 = mutants.length - near1;
  assert.ok(far1 > 10 && near2 > 0);
  const nearTerm = (m) => m.line === 3 && m.text === '(i * d)';
  // (bounds that allow the near edits of both rounds and a few more: the first round, whole, would not reach the term)
  const cut = run(near1 + near2 + 5, nearTerm);
  assert.ok(!cut.complete, 'cut by the bound');
  assert.deepEqual(cut.passed.map((p) => p.to), ['(i * d)'], 'the near term was tried before the cut');
  assert.ok(cut.order.slice(0, near1).every((m) => m.line === 3), 'the first round\'s near edits first');
  // (a first round smaller than the bound is tried whole first: its edits may be slow, and time may stop it)
  const whole = run(near1 + near2 + 5, nearTerm, 3 * mutants.length);
  assert.ok(whole.order.slice(0, mutants.length).every((m) => mutants.includes(m)), 'the first round whole, first');
  assert.deepEqual(whole.passed, []);
  // (but one that leaves the second round less than a third of the bound is mixed with it: fresh19's 09.js, 2,500 of 3,000)
  const most = run(near1 + near2 + 5, nearTerm, Math.floor(mutants.length * 1.4));
  assert.deepEqual(most.passed.map((p) => p.to), ['(i * d)']);
  // (a first-round edit that repairs it, however far, outranks the second round's near ones)
  const far = run(Infinity, (m) => nearTerm(m) || (m.line === 4 && m.text === 'unshift'));
  assert.ok(far.complete);
  assert.deepEqual(far.passed.map((p) => p.to), ['unshift']);
});

test('an element of a list of three or more left out (a step listed twice): a first-round edit at its line', () => {
  const source = `export function f(x) {
  return run([
    ['scale', 2],
    ['softmax'],
    ['softmax'],
  ], x);
}
`;
  const edits = mutantsOf(source).map((m) => ({ text: source.slice(0, m.start) + m.text + source.slice(m.end), lines: m.lines }));
  const once = (s) => (s.match(/\['softmax'\]/g) ?? []).length === 1 && s.includes("['scale', 2]");
  assert.deepEqual(edits.filter((e) => once(e.text)).map((e) => e.lines[0]).sort(), [4, 5]);
  assert.ok(edits.some((e) => !e.text.includes("['scale', 2]") && e.lines[0] === 3), 'any element');
  // (not of a pair, nor of a list of numbers)
  const pair = 'export function f(a, b) { return [a, b].concat([1, 2, 3]); }';
  assert.ok(!mutantsOf(pair).some((m) => m.text === '' ), 'no element of [a, b] or [1, 2, 3] deleted');
});

test('stores.js: an edit inside what a call stores or a variable is assigned is stored; one an expression reads, an operand or a callee, is not', async () => {
  const { storedAt } = await import('../../www/src/diagnosis/stores.js');
  const at = (source, span) => storedAt(source, source.indexOf(span), source.indexOf(span) + span.length);
  assert.equal(at('values.push(K[t]);', 'K'), true);
  assert.equal(at('cache.append(key, cut(K[t], 0));', 'K'), true);
  assert.equal(at("events.push({ type: 'append', value: K[t] });", 'K'), true);
  assert.equal(at('keys = [K[t]];', 'K'), true);
  assert.equal(at('row[c] += probs[j] * values[t][c];', 't]'), false);
  assert.equal(at('acc += (ex[j] / z) * state.keys[j][c];', 'keys'), false);
  assert.equal(at('exps.forEach((e, j) => keys[j].forEach((x, c) => { out[c] += e * x; }));', 'keys'), false);
  assert.equal(at('out.push(w * keys[j][c]);', 'keys'), false); // arithmetic before the store
  assert.equal(at('out.push(cache.keyCols[c].reduce((s, x, j) => s + w[j] * x, 0));', 'keyCols'), false); // a method that computes reads it
  assert.equal(at('values.push(k.slice(from, from + d));', 'k'), true); // one that copies does not
  assert.equal(at('values.push(K[t]', 'K'), null); // does not parse
});

test('repaired.js readOrStored: a cache finding that may be the weighted sum\'s goes to it when an edit that reads repairs its line, stays at the store an edit repairs', async () => {
  const { readOrStored } = await import('../../www/src/diagnosis/repaired.js');
  const source = 'a\nb\nc\n';
  const sum = { step: 'weighted-sum', title: 'Your weighted sum takes the rows of K, not of V' };
  const found = { step: 'cache', line: 3, title: 'Line 3: Your cache\'s values are rows of K', readInstead: sum };
  const read = { lines: [3], stored: false };
  const store = { lines: [1], stored: true };
  assert.deepEqual([readOrStored(found, { passed: [read] }, source)].map((f) => [f.step, f.line, f.title]), [['weighted-sum', 3, 'Line 3: Your weighted sum takes the rows of K, not of V']]);
  assert.deepEqual([readOrStored(found, { passed: [read, store] }, source)].map((f) => [f.step, f.line, f.title, 'readInstead' in f]), [['cache', 1, 'Line 1: Your cache\'s values are rows of K', false]]);
  assert.deepEqual([readOrStored(found, { passed: [store, { lines: [3], stored: true }] }, source)].map((f) => [f.step, f.line]), [['cache', 3]]);
  assert.deepEqual([readOrStored(found, { passed: [] }, source)].map((f) => [f.step, f.line, 'readInstead' in f]), [['cache', 3, false]]);
  assert.deepEqual([readOrStored(found, { passed: [{ lines: [2], stored: false }] }, source)].map((f) => [f.step, f.line]), [['cache', 3]]);
  const plain = { step: 'softmax', line: 2, title: 'Line 2: x' };
  assert.equal(readOrStored(plain, { passed: [read] }, source), plain);
});

test('loops.js roundedArguments: the whole argument of a rounding is index arithmetic, not a step\'s number', async () => {
  const { roundedArguments } = await import('../../www/src/diagnosis/loops.js');
  const src = 'const i = Math.floor(n / T) % T; const x = Math.exp(n / T);';
  const site = (name) => ({ name, at: src.indexOf(name), end: src.indexOf(name) + name.length });
  const sites = [site('Math.floor(n / T)'), site('n / T'), site('Math.exp(n / T)'), { name: 'n / T', at: src.lastIndexOf('n / T'), end: src.lastIndexOf('n / T') + 5 }];
  assert.deepEqual([...roundedArguments(sites)], [1]);
});

test('a statement moved past two others (to the end or the start of its block) is a second-round edit that keeps every line where it was', () => {
  const second = (source) => mutantsOf(source, { round: 2 });
  const slip = `export function decode(K, V) {
  const keys = [];
  const values = [];
  const out = [];
  for (let t = 0; t < K.length; t++) {
    out.push(keys.length + values.length);
    keys.push(K[t]);
    values.push(V[t]);
  }
  return out;
}
`;
  const moved = second(slip).filter((m) => m.text.startsWith('keys.push(K[t]);\n    values.push(V[t]);\n    out.push'));
  assert.equal(moved.length, 1, JSON.stringify(second(slip).map((m) => m.text)));
  assert.deepEqual(moved[0].lines, [6]);
  const text = slip.slice(0, moved[0].start) + moved[0].text + slip.slice(moved[0].end);
  assert.equal(text.split('\n').length, slip.split('\n').length);
  assert.equal(text.split('\n')[5], '    keys.push(K[t]);');
  assert.equal(text.split('\n')[7], '    out.push(keys.length + values.length);');
  const cases2 = [{ kind: 'fixed', args: [[[1], [2]], [[3], [4]]], expected: [[2, 4]], tolerance: 1e-9 }];
  const right = (o) => [o];
  const wrapped = slip.replace('export function decode(K, V) {', 'export function decode(K, V) { return [inner(K, V)]; }\nfunction inner(K, V) {');
  const r = repairLines(wrapped, 'decode', cases2.map((c) => ({ ...c, expected: right(c.expected[0]) })), { load, toScript, judge });
  assert.deepEqual(r.lines, [7]);
  // (the first round swaps neighbours only: moving `out.push` past both pushes is not among its edits)
  assert.ok(!mutantsOf(slip).some((m) => m.text.startsWith('keys.push(K[t]);\n    values.push(V[t]);\n    out.push')));
});

test('an exp of a read or a call with the row\'s maximum left out, and the one element of a list a helper is not applied to, are repaired', () => {
  const exp = `export function f(rows) {
  return rows.map((row) => {
    const top = Math.max(...row);
    const e = row.map((_, n) => Math.exp(row[n]));
    const z = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / z);
  });
}
`;
  const big = [{ kind: 'fixed', args: [[[1000, 999]]], expected: [[Math.E / (Math.E + 1), 1 / (Math.E + 1)]], tolerance: 1e-9 }];
  const r = repairLines(exp, 'f', big, { load, toScript, judge });
  assert.deepEqual(r.lines, [4]);
  assert.ok(r.passed.some((p) => p.to === 'row[n] - top'), JSON.stringify(r.passed));
  const list = `export function f(Q, K, V) {
  const cols = (M) => M.map((row) => row.slice(1));
  const [q, k, v] = [cols(Q), cols(K), V];
  return q.map((a, i) => [a[0] * k[i][0] + v[i][0]]);
}
`;
  const one = [{ kind: 'fixed', args: [[[1, 2]], [[3, 4]], [[5, 6]]], expected: [[14]], tolerance: 1e-9 }];
  const edits = mutantsOf(list).filter((m) => m.text === 'cols(V)');
  assert.equal(edits.length, 1);
  assert.deepEqual(edits[0].lines, [3]);
  assert.ok(repairLines(list, 'f', one, { load, toScript, judge }).passed.some((p) => p.to === 'cols(V)' && p.lines[0] === 3));
});

test('a counter started one off is a first-round edit of its start; a name that starts no counter gets none', () => {
  const edits = (source) => mutantsOf(source).map((m) => ({ text: source.slice(0, m.start) + m.text + source.slice(m.end), lines: m.lines }));
  const slip = `export function mask(S) {
  for (let q = 0; q < S.length; q++) {
    let k = q;
    while (k < S.length) {
      S[q][k] = -Infinity;
      k++;
    }
  }
  const n = S.length;
  const last = n;
  return S.slice(0, last);
}
`;
  assert.ok(edits(slip).some((e) => e.text.includes('let k = (q + 1);') && e.lines[0] === 3));
  assert.ok(edits(slip).some((e) => e.text.includes('let k = (q - 1);')));
  // (`last` is declared from a name too, but nothing steps it: no edit of that kind)
  assert.ok(!edits(slip).some((e) => e.text.includes('const last = (n + 1);') || e.text.includes('const last = (n - 1);')));
  const cases2 = [{ kind: 'fixed', args: [[[1, 2], [3, 4]]], expected: [[1, -Infinity], [3, 4]], tolerance: 1e-9 }];
  assert.deepEqual(repairLines(slip, 'mask', cases2, { load, toScript, judge }).lines.includes(3), true);
});

test('an exp of a read left without the maximum is a first-round edit; an exp of arithmetic gets that edit only in the second', () => {
  const src = `export function f(row, top) {
  const a = Math.exp(row[0]);
  const b = Math.exp(row[1] * 2);
  return [a, b, top];
}
`;
  const first = mutantsOf(src);
  const second = mutantsOf(src, { round: 2 });
  assert.ok(first.some((m) => m.text === 'row[0] - top' && m.lines[0] === 2));
  assert.ok(!first.some((m) => m.text === 'row[1] * 2 - top'));
  assert.ok(second.some((m) => m.text === 'row[1] * 2 - top'));
  assert.ok(!second.some((m) => m.text === 'row[0] - top'));
});

test('a number a constructor keeps on this is a term of the second round in its methods; an array kept on this is none', () => {
  const src = `export function attend(Q, width) {
  const heads = new Heads(Q, width);
  return [[0, 1, 2].flatMap((h) => heads.columns(h)[0])];
}
function Heads(Q, width) {
  this.Q = Q;
  this.width = width;
  this.T = Q.length;
}
Heads.prototype.columns = function (h) {
  const start = h;
  return this.Q.map((row) => row.slice(start, start + this.width));
};
const outside = (h) => h + 1;
`;
  const second = mutantsOf(src, { round: 2 });
  const at = (line) => second.filter((m) => m.lines[0] === line).map((m) => m.text);
  assert.ok(at(11).includes('(h * this.width)'));
  assert.ok(at(11).includes('(h + this.T)'));
  assert.ok(!at(11).some((t) => t.includes('this.Q')));
  // (and such a number read gets a name in scope as a term: `start + this.width` for `this.width`; not an array kept on this)
  const read = src.indexOf('this.width))');
  assert.ok(second.some((m) => m.start === read && m.end === read + 'this.width'.length && m.text === '(start + this.width)'));
  assert.ok(!second.some((m) => m.start === src.indexOf('this.Q.map') && m.text.includes('+ this.Q)')));
  // (not in an arrow function of the module, where `this` is not the object's)
  assert.ok(!at(14).some((t) => t.includes('this.')));
  const cases = [{ kind: 'fixed', args: [[[1, 2, 3, 4, 5, 6]], 2], expected: [[1, 2, 3, 4, 5, 6]], tolerance: 1e-9 }];
  assert.deepEqual(repairLines(src, 'attend', cases, { load, toScript, judge }).passed.filter((p) => p.to === '(h * this.width)').map((p) => p.lines[0]), [11]);
});

test('first-round edits: two values of an object swapped (not two calls of one function), a one-parameter helper around a call passed as an argument', () => {
  const edits = (source) => mutantsOf(source).map((m) => ({ text: source.slice(0, m.start) + m.text + source.slice(m.end), lines: m.lines }));
  const src = `const tr = (M) => M[0].map((_, j) => M.map((row) => row[j]));
const cut = (M, w) => M.map((row) => row.slice(0, w));
export function f(K, t, mul) {
  const node = { kind: 'product', left: K, right: tr(K) };
  return mul(cut(K, 1), K[t]);
}
`;
  const all = edits(src);
  assert.ok(all.some((e) => e.text.includes("{ kind: 'product', left: tr(K), right: K }") && e.lines[0] === 4));
  assert.ok(all.some((e) => e.text.includes("{ kind: K, left: 'product', right: tr(K) }")));
  assert.ok(all.some((e) => e.text.includes('mul(tr(cut(K, 1)), K[t])') && e.lines[0] === 5));
  // (two calls of one function are not swapped: `{ q: cut(Q), k: cut(K) }` swapped makes up for a transpose further on)
  const alike = "export function g(Q, K) {\n  return { q: cut(Q), k: cut(K), n: 1 };\n}\nconst cut = (M) => M;\n";
  assert.ok(!edits(alike).some((e) => e.text.includes('q: cut(K), k: cut(Q)')));
  assert.ok(edits(alike).some((e) => e.text.includes('k: 1, n: cut(K)')));
});

test('an answer that throws on a case it should answer bounds a variant by its work on every case: the repair that runs them all is found', () => {
  const src = `export function f(xs, k) {
  const v = xs[k + 1].v;
  let s = 0;
  for (let i = 0; i < 3000; i++) s += i % 2;
  return [[v + s - 1500]];
}
`;
  // (the first case throws at once; the second, where xs[k] and xs[k + 1] agree, runs the loop)
  const cases = [
    { kind: 'fixed', args: [[{ v: 1 }], 0], expected: [[1]], tolerance: 1e-9 },
    { kind: 'fixed', args: [[{ v: 1 }, { v: 1 }], 0], expected: [[1]], tolerance: 1e-9 },
  ];
  const r = repairLines(src, 'f', cases, { load, toScript, judge });
  assert.ok(r.passed.some((p) => p.to === '(k)' && p.lines[0] === 2), JSON.stringify(r.passed));
});

test('a value left as an alias where the calls beside it make theirs from it (a projection left out): a first-round edit at its line', () => {
  const src = `const mul = (A, B) => A.map((row) => B[0].map((_, j) => row.reduce((s, a, k) => s + a * B[k][j], 0)));
export function f(X, { W_Q, W_K }) {
  const Q = X;
  const K = mul(X, W_K);
  return Q.map((q, i) => q.map((x, c) => x + K[i][c]));
}
`;
  const edits = mutantsOf(src).map((m) => ({ text: src.slice(0, m.start) + m.text + src.slice(m.end), lines: m.lines }));
  assert.ok(edits.some((e) => e.text.includes('const Q = mul(X, W_Q);') && e.lines[0] === 3));
  // (an object's value too, `Q: s.X`; a shorthand `{ X }` gets none)
  const piped = "const mul = (A, B) => A;\nexport const g = (s, W_Q, W_K) => ({ ...s, Q: s.X, K: mul(s.X, W_K), X: s.X });\n";
  const got = mutantsOf(piped).map((m) => piped.slice(0, m.start) + m.text + piped.slice(m.end));
  assert.ok(got.some((t) => t.includes('Q: mul(s.X, W_Q), K:')));
  // (no call made from the alias: no such edit)
  const lone = 'export function h(X, W_Q) {\n  const Q = X;\n  return Q.map((r) => r.map((x) => x * W_Q));\n}\n';
  const at = lone.indexOf('X;');
  assert.ok(!mutantsOf(lone).some((m) => m.start === at && /^\w+\(/.test(m.text)));
  assert.ok(mutantsOf(src).some((m) => m.start === src.indexOf('X;') && /^\w+\(/.test(m.text)));
  // the repair: the line of the alias
  const cases = [
    { kind: 'fixed', args: [[[1, 0], [0, 1]], { W_Q: [[2, 0], [0, 3]], W_K: [[1, 1], [0, 1]] }], expected: [[3, 1], [0, 4]], tolerance: 1e-9 },
    { kind: 'fixed', args: [[[1, 2]], { W_Q: [[1, 0], [0, 1]], W_K: [[0, 1], [1, 0]] }], expected: [[3, 3]], tolerance: 1e-9 },
  ];
  const right = src.replace('const Q = X;', 'const Q = mul(X, W_Q);');
  assert.ok(cases.every((c) => JSON.stringify(load(toScript(right, []))().f(...structuredClone(c.args))) === JSON.stringify(c.expected)));
  const { lines } = repairLines(src, 'f', cases, { load, toScript, judge });
  assert.deepEqual(lines, [3]);
});

test('an object that only tags one value, made where it was not meant, is a first-round edit: that value', () => {
  const src = "export function f(v, w) {\n  return { kind: 'product', left: w, right: { kind: 'transpose', of: v } };\n}\n";
  const texts = mutantsOf(src).map((m) => src.slice(0, m.start) + m.text + src.slice(m.end));
  assert.ok(texts.some((t) => t.includes("right: (v) }")));
  // (an object of two values, or of a value and arithmetic, tags none)
  const two = "export function g(v, w, d) {\n  return { kind: 'scale', by: 1 / d, of: v, with: w };\n}\n";
  assert.ok(!mutantsOf(two).some((m) => m.start === two.indexOf('{ kind') && !m.text.startsWith('{')));
});

test('a module a constructor keeps on this, not applied where a value is returned or made: a second-round edit at the read', () => {
  const src = `class Linear {
  constructor(W) { this.W = W; }
  forward(X) { return X.map((row) => row.map((x) => x * this.W)); }
}
class Block {
  constructor(a, b) { this.in_proj = new Linear(a); this.out_proj = new Linear(b); }
  forward(X) {
    const h = this.in_proj.forward(X);
    return h;
  }
}
export function f(X, a, b) { return new Block(a, b).forward(X); }
export const g = (h) => h;
`;
  const second = mutantsOf(src, { round: 2 });
  const at = (text) => second.filter((m) => m.text === text).map((m) => m.lines[0]);
  assert.deepEqual(at('this.out_proj.forward(h)'), [9]);
  // (not outside a method, where `this` is not the object's)
  assert.ok(!second.some((m) => m.lines[0] === 13 && m.text.includes('this.')));
  // (the case is scalar weights: a term `a * b` where the modules are made repairs it too)
  const cases = [{ kind: 'fixed', args: [[[1, 2]], 2, 3], expected: [[6, 12]], tolerance: 1e-9 }];
  assert.deepEqual(repairLines(src, 'f', cases, { load, toScript, judge }).passed.filter((p) => p.to === 'this.out_proj.forward(h)').map((p) => p.lines), [[9]]);
});
