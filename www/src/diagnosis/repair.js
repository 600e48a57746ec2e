// The line one small edit repairs (issue 28). A learner's slip is one or two small edits of a right
// answer: an operator, a name, a number, a bound, a statement too many or out of order. The classic
// mutation operators of mutation testing (arithmetic, relational, logical and assignment operator
// replacement; operand and statement deletion; a name replaced by another in scope; a constant moved
// by one; a negation inserted or removed) are those edits and their inverses, so one of them applied
// to the slip's line gives the right answer back. This module makes every such one-edit variant of the
// learner's module (a mutant), runs each on the challenge's own cases, and returns the lines whose
// mutants pass them all: evidence of the line at fault that reads no step and no output, only whether
// an edit of that line makes the answer right. When no such edit repairs it, a second round tries
// edits that add what a slip left out (a term, a helper around a read, a property's right name, an
// infinity: INSERTIONS), within what is left of the same bounds; they are many more, and most would
// "repair" right lines of an answer that one of the first round's edits repairs, so they come after.
// Nothing here runs the learner's code in place: each mutant is a new script, run in the worker that
// runs the learner's code (a 2 s limit of its own). Every loop turn and every function call of a mutant
// ticks (a mutated bound can loop forever, and a worker cannot stop a loop from outside): a mutant stops
// past twenty times the ticks of the answer itself on the cases (at least MIN_TICKS, at most
// MAX_TICKS), and the search past MAX_MUTANTS mutants or TOTAL_TICKS ticks in all. These bounds count
// work, not time, so the same answer gets the same lines on the page, in the terminal and in Node
// under any load; MAX_MS (and SAFETY_MUTANT_MS for one mutant) only guard a very slow machine, and the
// worker gives the search cases.js's REPAIR_TIME_LIMIT_MS (5 s), not the learner's 2 s. Mutants
// are tried nearest the lines the traced run named first (`near`), so the bounds cut the farthest.
import { parse } from 'acorn';
import { storedAt } from './stores.js';
import { REPAIR_LIMITS, meter, roundsOf } from './meter.js';
import { sliceDepths } from './slice.js';
import { FUNCTIONS, GLOBALS, LOOPS, bound, readAsValue, walk } from './syntax.js';

export { REPAIR_LIMITS, sliceDepths };

const GROUPS = [['+', '-', '*', '/'], ['<', '<=', '>', '>='], ['===', '!=='], ['==', '!='], ['&&', '||']];
const ASSIGN = [['+=', '=', '-='], ['*=', '/=', '=']];
const METHODS = [['push', 'unshift'], ['max', 'min'], ['floor', 'ceil', 'round']];

/** The variables of the module that hold values (not functions), each with the range of the scope it is seen in. */
function variablesOf(ast) {
  const out = [];
  const scopes = [ast];
  walk(ast, (node) => {
    if (FUNCTIONS.has(node.type)) {
      for (const p of node.params) for (const name of bound(p)) out.push({ name, scope: node });
    }
    if (node.type === 'VariableDeclarator' && !FUNCTIONS.has(node.init?.type)) {
      // (seen in the function around it: the declaration's block is not tracked, a wrong pick only fails)
      for (const name of bound(node.id)) out.push({ name, scope: null, at: node.start });
    }
    if (node.type === 'CatchClause') for (const name of bound(node.param)) out.push({ name, scope: node });
    if (FUNCTIONS.has(node.type)) scopes.push(node);
  });
  // a declaration's scope: the innermost function around it, else the module
  for (const v of out) {
    if (v.scope) continue;
    v.scope = scopes.filter((s) => s.start <= v.at && v.at < s.end).reduce((a, s) => (s.start >= a.start ? s : a), ast);
  }
  return out;
}

/** The edits of an operator: the others of its group, and for arithmetic an operand dropped or swapped, `± 1`, a root. */
function operatorEdits(node, { source, text, add, madeAt }) {
  const group = (node.type === 'AssignmentExpression' ? ASSIGN : GROUPS).find((g) => g.includes(node.operator));
  // the operator's own characters: after the left operand
  const at = source.indexOf(node.operator, node.left.end);
  for (const op of group ?? []) if (op !== node.operator) add(node, at, at + node.operator.length, op);
  if (group !== GROUPS[0]) return;
  add(node, node.start, node.end, `(${text(node.left)})`);
  add(node, node.start, node.end, `(${text(node.right)})`);
  if (node.operator === '-' || node.operator === '/') add(node, node.start, node.end, `(${text(node.right)} ${node.operator} ${text(node.left)})`);
  add(node, node.start, node.end, `(${text(node)} + 1)`);
  add(node, node.start, node.end, `(${text(node)} - 1)`);
  // (a root left out where the size is made or where it is read: either line)
  if (node.operator === '/' || node.operator === '*') add(node, node.right.start, node.right.end, `Math.sqrt(${text(node.right)})`, [...new Set([node.loc.start.line, ...madeAt(node.right)])]);
}

/** The edits of a call: a method of its group, a `Math` call or a one-parameter helper unwrapped or wrapped, a receiver swapped with its argument, a spread. */
function callEdits(node, { text, add, unary }) {
  const callee = node.callee;
  if (callee.type === 'MemberExpression' && !callee.computed) {
    const group = METHODS.find((g) => g.includes(callee.property.name));
    for (const m of group ?? []) if (m !== callee.property.name) add(node, callee.property.start, callee.property.end, m, [callee.property.loc.start.line]);
    if (callee.object.type === 'Identifier' && callee.object.name === 'Math' && node.arguments.length === 1) add(node, node.start, node.end, `(${text(node.arguments[0])})`);
    // `b.concat(a)` for `a.concat(b)`: a receiver and its one argument swapped
    const [only] = node.arguments;
    if (node.arguments.length === 1 && only.type !== 'SpreadElement' && !FUNCTIONS.has(only.type) && !(callee.object.type === 'Identifier' && GLOBALS.has(callee.object.name))) add(node, node.start, node.end, `${text(only)}.${callee.property.name}(${text(callee.object)})`);
  }
  // `v` for `v.T()`: a method call of no arguments left in where it was not meant (its line the method's,
  // in a chain over several lines)
  if (callee.type === 'MemberExpression' && !callee.computed && !node.arguments.length && !(callee.object.type === 'Identifier' && GLOBALS.has(callee.object.name)) && callee.object.type !== 'ThisExpression') add(node, node.start, node.end, `(${text(callee.object)})`, [callee.property.loc.start.line]);
  // (and a link of a chain left in, arguments or not: `rows.map(softmax)` for `rows.map(softmax).map(softmax)`)
  else if (callee.type === 'MemberExpression' && !callee.computed && callee.object.type === 'CallExpression') add(node, node.start, node.end, `(${text(callee.object)})`, [callee.property.loc.start.line]);
  // `pipe(f, h, g)` for `pipe(f, g, h)`: two arguments next to each other swapped
  node.arguments.forEach((a, k) => {
    const b = node.arguments[k + 1];
    if (b && a.type !== 'SpreadElement' && b.type !== 'SpreadElement') add(node, a.start, b.end, `${text(b)}, ${text(a)}`, [a.loc.start.line, b.loc.start.line]);
  });
  // `push(x)` for `push(...x)`, and the other way round
  for (const a of node.arguments) {
    if (a.type === 'SpreadElement') add(node, a.start, a.end, text(a.argument), [a.loc.start.line]);
    else if (callee.type === 'MemberExpression' && !FUNCTIONS.has(a.type)) add(node, a.start, a.end, `...${text(a)}`, [a.loc.start.line]);
  }
  // a helper of one parameter (`tr(B)`) called where it was not meant, or not called where it was
  if (callee.type === 'Identifier' && unary.has(callee.name) && node.arguments.length === 1) add(node, node.start, node.end, `(${text(node.arguments[0])})`);
  // (around a name or a call: `transpose(cut(K, o, d))` for `cut(K, o, d)`)
  for (const a of node.arguments) if (a.type === 'Identifier' || a.type === 'CallExpression') for (const f of unary) if (f !== (callee.type === 'Identifier' ? callee.name : null)) add(node, a.start, a.end, `${f}(${text(a)})`);
}

/** The edits of a member read: two indices swapped, two names of an index swapped, `X.length` ↔ `X[0].length`. */
function memberEdits(node, { text, add }) {
  // `V[c][j]` for `V[j][c]`
  if (node.computed && node.object.type === 'MemberExpression' && node.object.computed) add(node, node.start, node.end, `${text(node.object.object)}[${text(node.property)}][${text(node.object.property)}]`);
  // `w[col * n + c]` for `w[c * n + col]`
  if (node.computed) {
    const names = [];
    walk(node.property, (n, p, k) => { if (n.type === 'Identifier' && readAsValue(n, p, k) && !names.some((m) => m.name === n.name)) names.push(n); });
    for (let a = 0; a < names.length; a++) {
      for (let b = a + 1; b < names.length; b++) {
        const swapped = text(node.property).replace(/[A-Za-z_$][\w$]*/g, (w) => (w === names[a].name ? names[b].name : w === names[b].name ? names[a].name : w));
        add(node, node.property.start, node.property.end, swapped);
      }
    }
  }
  // a size read at the wrong depth
  if (!node.computed && node.property.name === 'length') {
    const o = node.object;
    if (o.type === 'MemberExpression' && o.computed && o.property.type === 'Literal' && o.property.value === 0) add(node, o.start, o.end, text(o.object));
    else add(node, o.start, o.end, `${text(o)}[0]`);
  }
}

/** The edits of a block: a statement deleted, two statements swapped (either may be the one misplaced). */
function blockEdits(node, { text, add }) {
  node.body.forEach((st, k) => {
    if (st.type === 'ExpressionStatement' || (st.type === 'IfStatement' && !st.alternate)) add(st, st.start, st.end, ';');
    const next = node.body[k + 1];
    if (next && !/Declaration$/.test(st.type + next.type)) add(st, st.start, next.end, `${text(next)}\n${text(st)}`, [st.loc.start.line, next.loc.start.line]);
  });
}

/**
 * `Math.exp(row[n])` for `Math.exp(row[n] - top)`: the row's maximum left out of an exp, a name in scope
 * subtracted. Of a read or a call, in the first round (an exp is written a few times at most); of
 * any other argument but a name, in the second.
 */
function expMaxEdits(node, { text, add, inScope, objects }, first) {
  const [arg] = node.arguments;
  if (text(node.callee) !== 'Math.exp' || node.arguments.length !== 1 || arg.type === 'Identifier' || arg.type === 'SpreadElement') return;
  if (first === (arg.type === 'MemberExpression' || arg.type === 'CallExpression')) for (const name of inScope(node)) if (!objects.has(name)) add(node, arg.start, arg.end, `${text(arg)} - ${name}`);
}

/** The other edits, by node type. */
const EDITS = {
  BinaryExpression: operatorEdits,
  LogicalExpression: operatorEdits,
  AssignmentExpression: operatorEdits,
  CallExpression: (node, context) => {
    callEdits(node, context);
    expMaxEdits(node, context, true);
  },
  MemberExpression: memberEdits,
  // (a value left as an alias: few, they stay in the first round)
  VariableDeclarator: (node, context) => projectionEdits(node.init, context),
  Property: (node, context) => !node.computed && !node.shorthand && node.kind === 'init' && projectionEdits(node.value, context),
  BlockStatement: blockEdits,
  Program: blockEdits,
  UnaryExpression: (node, { text, add }) => {
    if (node.operator === '-' || node.operator === '!') add(node, node.start, node.end, `(${text(node.argument)})`);
  },
  Literal: (node, { add, inScope, objects }, parent) => {
    if (!(typeof node.value === 'number' && Number.isInteger(node.value) && node.value >= 0 && node.value < 1e6)) return;
    add(node, node.start, node.end, String(node.value + 1));
    if (node.value > 0) add(node, node.start, node.end, String(node.value - 1));
    // (a constant written where a variable was meant: `left + 1` for `left + half`; not a name whose members
    // the module reads, an array's or an object's)
    if (node.value <= 2 && parent?.type !== 'Property') for (const name of inScope(node)) if (!objects.has(name)) add(node, node.start, node.end, name);
  },
  IfStatement: (node, { text, add }) => add(node, node.test.start, node.test.end, `!(${text(node.test)})`),
  ConditionalExpression: (node, { text, add }) => {
    add(node, node.test.start, node.test.end, `!(${text(node.test)})`);
    add(node, node.consequent.start, node.alternate.end, `${text(node.alternate)} : ${text(node.consequent)}`);
  },
  // `[...b, ...a]` for `[...a, ...b]`, `['scores', 'softmax', 'scale']` for `['scores', 'scale', 'softmax']`:
  // two elements next to each other swapped
  // (and of a list of three or more, an element left in where it was not meant: a step listed twice)
  ArrayExpression: (node, { text, add }) => {
    // (`[cols(Q), cols(K), V]`: the one element a helper every other is made by is not applied to)
    const called = node.elements.filter((e) => e?.type === 'CallExpression' && e.callee.type === 'Identifier' && e.arguments.length === 1);
    const f = called.length >= 2 && called.every((e) => e.callee.name === called[0].callee.name) ? called[0].callee.name : null;
    for (const e of f && called.length === node.elements.length - 1 ? node.elements : []) if (e && !called.includes(e) && e.type !== 'SpreadElement') add(node, e.start, e.end, `${f}(${text(e)})`, [e.loc.start.line]);
    node.elements.forEach((a, k) => {
      const b = node.elements[k + 1];
      if (a && b) add(node, a.start, b.end, `${text(b)}, ${text(a)}`, [a.loc.start.line, b.loc.start.line]);
      const listed = a && node.elements.length >= 3 && (a.type !== 'Literal' || typeof a.value === 'string');
      if (listed && b) add(node, a.start, b.start, '', [a.loc.start.line]);
      else if (listed && !b && node.elements[k - 1]) add(node, node.elements[k - 1].end, a.end, '', [a.loc.start.line]);
    });
  },
  // `{ left: leaf(W_O), right: joined }` for `{ left: joined, right: leaf(W_O) }`: two values of an object next to each other swapped
  // (not two calls of one function, `{ q: cut(Q), k: cut(K) }`: swapped, they make up for a transpose further on)
  // (and an object that only tags one value, `{ kind: 'transpose', of: v }`, made where it was not meant: that value)
  ObjectExpression: (node, { text, add }) => {
    const plain = (p) => p?.type === 'Property' && p.kind === 'init' && !p.computed && !p.shorthand && !p.method;
    const held = node.properties.filter((p) => !(plain(p) && p.value.type === 'Literal'));
    if (held.length === 1 && node.properties.length > 1 && plain(held[0]) && /^(Identifier|MemberExpression|ObjectExpression|CallExpression)$/.test(held[0].value.type)) add(node, node.start, node.end, `(${text(held[0].value)})`);
    node.properties.forEach((a, k) => {
      const b = node.properties[k + 1];
      const alike = a?.value?.type === 'CallExpression' && b?.value?.type === 'CallExpression' && text(a.value.callee) === text(b.value.callee);
      if (plain(a) && plain(b) && !alike) add(node, a.value.start, b.value.end, `${text(b.value)}${text(node).slice(a.value.end - node.start, b.value.start - node.start)}${text(a.value)}`, [a.value.loc.start.line, b.value.loc.start.line]);
    });
  },
  Identifier: (node, { add, inScope, madeAt, counters }, parent, key) => {
    if (readAsValue(node, parent, key)) for (const name of inScope(node)) if (name !== node.name) add(node, node.start, node.end, name, madeAt(node));
    // (a counter started one off: `let k = q` for `let k = q + 1`, `for (let j = i; …)`)
    if (parent?.type === 'VariableDeclarator' && key === 'init' && counters.has(parent.id.name)) for (const sign of ['+', '-']) add(node, node.start, node.end, `(${node.name} ${sign} 1)`);
  },
};

/**
 * The second round's edits, tried only when no edit of the first repairs the answer: a term left out
 * (`t` for `t + offset`, `s` for `s * scale`, `V[n]` for `V[first + n]`: a read given an operand, a
 * name in scope), a property read by another's name (`head.scores` for `head.weights`), a helper of
 * the module left out around a read (`B` for `transpose(B)`, `joined` for `linear(joined, W_O)`), an
 * infinity written as a number (`return 0` for `return -Infinity`), two parameters swapped. There are many more of these than
 * of the first round's, most of them on lines that are right, so they come after it.
 */
const INSERTIONS = {
  // (a statement moved past two or more others, to the end or the start of its block: `output.push(attend(…))`
  // before the two pushes into the cache it reads)
  // (the text between the statements kept where it is, so that every line keeps its number)
  BlockStatement: (node, { text, source, add }) => node.body.forEach((st, k) => {
    const [n, body] = [node.body.length, node.body.map(text)];
    const between = node.body.slice(1).map((b, m) => source.slice(node.body[m].end, b.start));
    const moved = (to) => body.filter((_, m) => m !== k).toSpliced(to, 0, body[k]).map((t, m) => t + (between[m] ?? '')).join('');
    if (!/Declaration$/.test(st.type) && k < n - 2) add(st, node.body[0].start, node.body[n - 1].end, moved(n - 1));
    if (!/Declaration$/.test(st.type) && k >= 2) add(st, node.body[0].start, node.body[n - 1].end, moved(0));
  }),
  Identifier: (node, { add, inScope, kept, madeAt, helpers, objects, modules, applied, inMethod }, parent, key) => {
    if (!readAsValue(node, parent, key) || (parent.type === 'MemberExpression' && key === 'object')) return;
    const lines = madeAt(node);
    // (terms between numbers: a name whose members are read holds an array or an object)
    // (or a number a method keeps on `this`: `h * this.width` for `h`)
    for (const name of objects.has(node.name) ? [] : [...inScope(node), ...kept(node)]) {
      if (name === node.name || objects.has(name)) continue;
      for (const form of [`(${node.name} + ${name})`, `(${node.name} - ${name})`, `(${name} - ${node.name})`, `(${node.name} * ${name})`, `(${node.name} / ${name})`, `(${name} / ${node.name})`]) add(node, node.start, node.end, form, lines);
    }
    // (a helper called where it was not: `B` for `tr(B)`; `joined` for `linear(joined, W_O)` where a
    // value is made or returned)
    for (const [f, arity] of helpers) {
      if (arity === 1 && !(parent.type === 'CallExpression' && key === 'arguments')) add(node, node.start, node.end, `${f}(${node.name})`, lines);
      if (arity === 2 && (parent.type === 'ReturnStatement' || parent.type === 'VariableDeclarator')) for (const name of inScope(node)) if (name !== node.name) add(node, node.start, node.end, `${f}(${node.name}, ${name})`, lines);
    }
    // (or a module kept on `this` not applied, in a method: `concat` for `this.o_proj.forward(concat)`, at the read:
    // the value read is right, the call on it left out)
    if (parent.type === 'ReturnStatement' || parent.type === 'VariableDeclarator') for (const m of inMethod(node) ? modules : []) for (const f of applied) add(node, node.start, node.end, `${m}.${f}(${node.name})`);
  },
  CallExpression: (node, context) => expMaxEdits(node, context, false),
  MemberExpression: (node, { add, properties, inScope, objects, kept, text }, parent, key) => {
    if (node.computed || (parent?.type === 'CallExpression' && key === 'callee') || (parent?.type === 'AssignmentExpression' && key === 'left')) return;
    for (const name of properties) if (name !== node.property.name) add(node, node.property.start, node.property.end, name);
    // (a number kept on `this` given a term, as a name is: `lo + this.d` for `this.d`)
    if (kept(node).includes(text(node))) for (const name of inScope(node)) if (!objects.has(name)) add(node, node.start, node.end, `(${name} + ${text(node)})`);
  },
  Literal: (node, { add }, parent) => {
    if (typeof node.value !== 'number' || parent?.type === 'Property') return;
    if (parent?.type === 'UnaryExpression' && parent.operator === '-') add(parent, parent.start, parent.end, '-Infinity');
    else for (const inf of ['Infinity', '-Infinity']) add(node, node.start, node.end, inf);
  },
  // `(j, i) => …` for `(i, j) => …`: two parameters next to each other swapped (here, not in the first round:
  // swapped where a function is declared, they make up for arguments swapped at its every call)
  ...Object.fromEntries([...FUNCTIONS].map((type) => [type, (node, { text, add }) => node.params.forEach((a, k) => {
    const b = node.params[k + 1];
    if (b && a.type === 'Identifier' && b.type === 'Identifier') add(node, a.start, b.end, `${text(b)}, ${text(a)}`, [a.loc.start.line]);
  })])),
};

/**
 * `const Q = product(x, fromRows(W_Q))` for `const Q = x`, `Q: matMul(s.X, W_Q)` for `Q: s.X`: a value
 * left as another's alias where the calls beside it make theirs from it (`product(x, fromRows(W_K))`),
 * one such call with one of its names (not the alias's) replaced by another in scope.
 */
function projectionEdits(value, { text, add, inScope, calls }) {
  if (value?.type !== 'Identifier' && !(value?.type === 'MemberExpression' && !value.computed)) return;
  const alias = text(value);
  // (a call given a function, `forEachCell(T, T, (i, j) => …)`, makes no value from the alias)
  for (const call of calls.filter((c) => !c.arguments.some((a) => FUNCTIONS.has(a.type)))) {
    const from = call.arguments.find((a) => text(a) === alias);
    if (!from) continue;
    const names = [];
    walk(call, (n, p, k) => { if (n.type === 'Identifier' && readAsValue(n, p, k) && !(from.start <= n.start && n.end <= from.end)) names.push(n); });
    for (const n of names) {
      for (const name of inScope(value)) {
        if (name === n.name || names.some((m) => m.name === name) || name === alias) continue;
        add(value, value.start, value.end, text(call).slice(0, n.start - call.start) + name + text(call).slice(n.end - call.start));
      }
    }
  }
}

/**
 * Where an edit of a read of a variable puts the fault: a variable declared once, never assigned
 * again and read in one place, read with a new value there, was made with the wrong value: its
 * declaration's line. Else the read's. (node) → [line].
 */
function madeAtOf(ast) {
  const reads = new Map();
  const declared = new Map();
  const assigned = new Set();
  walk(ast, (node, parent, key) => {
    if (node.type === 'Identifier' && readAsValue(node, parent, key)) reads.set(node.name, (reads.get(node.name) ?? 0) + 1);
    if (node.type === 'VariableDeclarator' && node.id.type === 'Identifier') declared.set(node.id.name, [...(declared.get(node.id.name) ?? []), node]);
    if (node.type === 'AssignmentExpression' && node.left.type === 'Identifier') assigned.add(node.left.name);
    if (node.type === 'UpdateExpression' && node.argument.type === 'Identifier') assigned.add(node.argument.name);
  });
  return (node) => {
    const d = node.type === 'Identifier' ? declared.get(node.name) : null;
    return d?.length === 1 && d[0].init && !assigned.has(node.name) && reads.get(node.name) === 1 ? [d[0].loc.start.line] : [node.loc.start.line];
  };
}

/**
 * Every one-edit variant of `source`: [{ start, end, text, line, lines }] (replace source[start, end)
 * by text; `lines`, 1-based, the lines it puts the fault on, `line` the first). Throws acorn's
 * SyntaxError on a module that does not parse.
 */
export function mutantsOf(source, { round = 1 } = {}) {
  const ast = parse(source, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
  const out = [];
  const variables = variablesOf(ast);
  // the module's functions of one and two parameters, by name (`tr`, `transpose`; `matmul`)
  const helpers = new Map();
  // the names of the properties it reads (not those it calls) or makes objects with, and the names whose members are read
  const properties = new Set();
  const objects = new Set();
  walk(ast, (node, parent, key) => {
    if (node.type === 'MemberExpression' && node.object.type === 'Identifier') objects.add(node.object.name);
    if (node.type === 'FunctionDeclaration' && node.id) helpers.set(node.id.name, node.params.length);
    if (node.type === 'VariableDeclarator' && node.id.type === 'Identifier' && FUNCTIONS.has(node.init?.type)) helpers.set(node.id.name, node.init.params.length);
    if (node.type === 'MemberExpression' && !node.computed && node.property.type === 'Identifier' && !(parent?.type === 'CallExpression' && key === 'callee') && node.property.name !== 'length') properties.add(node.property.name);
    // (and the keys an object is made with, `{ q: Q[t], k: K[t], v: V[t] }`: `token.k` read as `token.q`)
    if (node.type === 'Property' && parent?.type === 'ObjectExpression' && !node.computed && node.key.type === 'Identifier' && node.key.name !== 'length') properties.add(node.key.name);
  });
  // (the numbers a constructor keeps on `this`, `this.width = width`, `this.T = Q.length`: not an
  // array's or an object's, nor a function)
  const numeric = (v) => (v.type === 'Identifier' && !objects.has(v.name)) || (v.type === 'MemberExpression' && v.property.name === 'length') || (v.type === 'Literal' && typeof v.value === 'number') || v.type === 'BinaryExpression';
  // (and the objects it keeps there, `this.o_proj = new Linear(…)`: modules)
  const kept = new Set();
  const modules = new Set();
  walk(ast, (node) => {
    const left = node.type === 'AssignmentExpression' && node.operator === '=' ? node.left : null;
    if (left?.type !== 'MemberExpression' || left.object.type !== 'ThisExpression' || left.computed) return;
    if (numeric(node.right)) kept.add(`this.${left.property.name}`);
    if (node.right.type === 'NewExpression') modules.add(`this.${left.property.name}`);
  });
  const methods = [];
  walk(ast, (node) => {
    if (node.type === 'FunctionExpression' || node.type === 'FunctionDeclaration') methods.push(node);
  });
  // (the methods of one argument called on the modules kept on `this`, `forward`)
  const applied = new Set();
  walk(ast, (node) => {
    const callee = node.type === 'CallExpression' && node.arguments.length === 1 ? node.callee : null;
    if (callee?.type === 'MemberExpression' && !callee.computed && modules.has(source.slice(callee.object.start, callee.object.end))) applied.add(callee.property.name);
  });
  const inMethod = (node) => methods.some((f) => f.start <= node.start && node.end <= f.end);
  const unary = new Set([...helpers].filter(([, n]) => n === 1).map(([name]) => name));
  // (the names a `++`, `--`, `+=` or `-=` steps)
  const counters = new Set();
  walk(ast, (node) => {
    const target = node.type === 'UpdateExpression' ? node.argument : node.type === 'AssignmentExpression' && /^[+-]=$/.test(node.operator) ? node.left : null;
    if (target?.type === 'Identifier') counters.add(target.name);
  });
  const calls = [];
  walk(ast, (node) => { if (node.type === 'CallExpression' && node.arguments.length >= 2) calls.push(node); });
  const context = {
    source,
    calls,
    modules,
    applied,
    unary,
    counters,
    helpers: [...helpers].filter(([, n]) => n === 1 || n === 2),
    properties: [...properties],
    objects,
    madeAt: madeAtOf(ast),
    text: (n) => source.slice(n.start, n.end),
    add: (node, start, end, replacement, lines = [node.loc.start.line]) => out.push({ start, end, text: replacement, line: lines[0], lines }),
    // the names of the variables seen at a node
    inScope: (node) => [...new Set(variables.filter((v) => v.scope.start <= node.start && node.end <= v.scope.end).map((v) => v.name))],
    // (and the numbers kept on `this`, seen in a method: a `function`'s or a class's, not the module's arrows)
    kept: (node) => (inMethod(node) ? [...kept] : []),
    inMethod,
  };
  const edits = round === 1 ? EDITS : INSERTIONS;
  walk(ast, (node, parent, key) => edits[node.type]?.(node, context, parent, key));
  // (an edit kept once: the same text at the same place)
  const unique = new Map(out.map((m) => [`${m.start}:${m.end}:${m.text}`, m]));
  return [...unique.values()];
}

/** Each loop's body and each function's made to call `__tick__()` first: [{ at, text }] insertions into `source`. */
function guardsOf(source) {
  const ast = parse(source, { ecmaVersion: 'latest', sourceType: 'module' });
  const inserts = [];
  walk(ast, (node) => {
    if (!LOOPS.has(node.type) && !FUNCTIONS.has(node.type)) return;
    const body = node.body;
    if (body.type === 'BlockStatement') inserts.push({ at: body.start + 1, text: '__tick__();' });
    else if (FUNCTIONS.has(node.type)) inserts.push({ at: body.start, text: '(__tick__(),' }, { at: body.end, text: ')' });
    else inserts.push({ at: body.start, text: '{__tick__();' }, { at: body.end, text: '}' });
  });
  return inserts;
}

/** `source` with the edit and the insertions applied (insertions at or after an edit's start land after it). */
function spliced(source, edit, inserts) {
  const all = [...inserts.filter((i) => i.at <= edit.start || i.at >= edit.end), { at: edit.start, end: edit.end, text: edit.text, edit: true }];
  all.sort((a, b) => a.at - b.at || (a.edit ? 1 : 0) - (b.edit ? 1 : 0));
  let out = '';
  let at = 0;
  for (const x of all) {
    out += source.slice(at, x.at) + x.text;
    at = x.edit ? x.end : x.at;
  }
  return out + source.slice(at);
}

/**
 * The runner's script of the module, once: its code keeps the module's characters where they are
 * (only `export` blanked), so each mutant is that script with the edit spliced in. { code, scriptOf(text) }.
 */
function scriptsOf(source, toScript) {
  const script = toScript(source, ['__tick__']);
  const head = script.indexOf('"use strict";') + '"use strict";'.length;
  const tail = script.lastIndexOf('\n;return {');
  const body = script.slice(head, tail);
  if (body.length !== source.length) return { code: source, scriptOf: (text) => toScript(text, ['__tick__']) };
  return { code: body, scriptOf: (text) => script.slice(0, head) + text + script.slice(tail) };
}

/**
 * How far a line is from the `near` lines, for the order mutants are tried in: in lines (4 a line, plus the
 * near line's rank), or in steps back from their values along the slice (`sliceDepths`: d steps rank as d + ½ lines).
 */
function nearness(source, near) {
  const slice = sliceDepths(source, near);
  return (line) => Math.min(...near.map((l, k) => Math.abs(line - l) * 4 + k), slice.has(line) ? slice.get(line) * 4 + 2 : 1e9);
}

/**
 * The lines one edit repairs: { lines: [line …] (ascending), tried, passed: [{ lines, start, end, from, to, stored }] …,
 * complete, timed } — `complete` when every mutant was tried within the bounds, `timed` when the 4 s guard
 * stopped it (what it found then depends on the machine's speed). `cases`: the challenge's
 * cases, each { kind: 'fixed' | 'error', args, … } as cases.js's judge reads them, the ones the answer
 * failed first; `load(script)` evaluates a script (the worker's, the runner's); `toScript` the runner's;
 * `judge(testCase, result)` cases.js's; `near`: lines to try first (the traced run's), in order.
 */
export function repairLines(source, functionName, cases, { load, toScript, judge, near = [] }) {
  const started = Date.now();
  let mutants;
  try {
    mutants = mutantsOf(source);
  } catch {
    return { lines: [], tried: 0, passed: [], complete: false };
  }
  const guards = guardsOf(source);
  const { code, scriptOf } = scriptsOf(source, toScript);
  const distance = nearness(source, near);
  mutants.sort((a, b) => distance(a.line) - distance(b.line) || a.start - b.start);
  const run = meter(cases, judge);
  // (the answer itself, run on the cases: twenty times its ticks bound a mutant's)
  try {
    run.start();
    const own = load(scriptOf(spliced(code, { start: 0, end: 0, text: '' }, guards)))(run.tick);
    const fn = own[functionName] ?? own.default;
    // (an answer these cases do not fail, one failing only others — random or the model's —, has nothing to repair here)
    if (run.all(fn)) return { lines: [], tried: 0, passed: [], complete: true };
    run.limit = Math.min(REPAIR_LIMITS.MAX_TICKS, Math.max(REPAIR_LIMITS.MIN_TICKS, 20 * run.ticks));
    // (and its time on every case, failing or not: ten times that, from 5 to 100 ms, bounds a variant's
    // time, so that a few variants that made an array huge do not eat the search's guard)
    const clock = run.start().started;
    let threw = false;
    for (const c of cases) {
      try {
        fn(...structuredClone(c.args));
      } catch {
        threw ||= c.kind === 'fixed';
      }
    }
    // (an answer that throws on a case it should answer, or runs past its bound there, stopped its work there: its
    // ticks on every case bound a variant's)
    if (threw) run.limit = Math.min(REPAIR_LIMITS.MAX_TICKS, Math.max(run.limit, 20 * run.ticks));
    run.ms = Math.min(REPAIR_LIMITS.SAFETY_MUTANT_MS, Math.max(REPAIR_LIMITS.MIN_MUTANT_MS, 10 * (Date.now() - clock)));
    run.total = 0;
  } catch {
    return { lines: [], tried: 0, passed: [], complete: false };
  }
  const passed = [];
  let [tried, retried, timed] = [0, 0, false];
  const tryAll = (list) => {
    for (const m of list) {
      timed = Date.now() - started > REPAIR_LIMITS.MAX_MS;
      if (tried >= REPAIR_LIMITS.MAX_MUTANTS || run.total > REPAIR_LIMITS.TOTAL_TICKS || timed) return false;
      tried++;
      let fn;
      try {
        // (an edit around a loop's body, or one that writes a loop or a function: the guards of the edited text)
        const inside = guards.some((g) => g.at > m.start && g.at < m.end) || /\b(for|while|function)\b|=>/.test(m.text);
        const edited = inside ? spliced(code, m, []) : null;
        const text = inside ? spliced(edited, { start: 0, end: 0, text: '' }, guardsOf(edited)) : spliced(code, m, guards);
        run.start();
        const exported = load(scriptOf(text))(run.tick);
        fn = exported[functionName] ?? exported.default;
      } catch {
        continue;
      }
      if (typeof fn !== 'function') continue;
      let ok = run.all(fn);
      // (a variant stopped by the clock alone runs once more on a longer one: a busy machine pauses any
      // code a few milliseconds, and the edit that repairs must not lose to the machine's load)
      if (!ok && run.clocked && retried++ < REPAIR_LIMITS.MAX_RETRIES) ok = run.all(fn, cases, Math.max(run.ms, REPAIR_LIMITS.RETRY_MUTANT_MS));
      if (ok) passed.push({ lines: m.lines, start: m.start, end: m.end, from: source.slice(m.start, m.end), to: m.text, stored: storedAt(source, m.start, m.end) });
    }
    return true;
  };
  const complete = inRounds(source, mutants, distance, passed, tryAll);
  const lines = [...new Set(passed.flatMap((p) => p.lines))].sort((a, b) => a - b);
  return { lines, tried, passed, complete, timed };
}

/** The mutants tried in rounds (meter.js's `roundsOf`), the second round's edits those of `source`. */
export function inRounds(source, mutants, distance, passed, tryAll, bound = REPAIR_LIMITS.MAX_MUTANTS) {
  const seen = new Set(mutants.map((m) => `${m.start}:${m.end}:${m.text}`));
  return roundsOf(mutantsOf(source, { round: 2 }).filter((m) => !seen.has(`${m.start}:${m.end}:${m.text}`)), mutants, distance, passed, tryAll, bound);
}
