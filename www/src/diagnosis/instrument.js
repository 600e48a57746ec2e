// Instrumenting the learner's module so that, run on a probe input, it records every numeric value
// it builds, with the line, column and name of the code that built it (issue 28).
//
// acorn parses the module (it is already the runner's parser: one dependency for both), and the
// rewrite is done by SOURCE SPLICING over acorn's node ranges: `__rec__(id, (` is inserted before a
// node and `))` after it, nothing else is touched. So the instrumented text keeps every line where the
// learner wrote it (nothing inserted holds a newline: an error's line stays the learner's line), and
// a code generator (astring, escodegen) is not needed: it would re-print the whole module.
//
// What is recorded (each is an expression whose value is passed through unchanged):
//   - the initial value of a declared variable (`const scores = …`, `let s = 0`);
//   - every assignment, whole (`s += a * b`, `out[i][j] = x`, `this.w = …`): its value is the new value;
//   - every `return` value, and the body of every arrow function with an expression body (map/reduce callbacks);
//   - every arithmetic expression (`a * b + c` and `a * b`), except array indices (but for an index that
//     chooses what a declaration binds, `const { k, v } = kv[h % numberOfKVHeads]`);
//   - the bound of a `for`, `while` or `do … while` loop's test (`n` of `i < n`);
//   - every argument of a call of the learner's own function (with the parameter names it binds);
//   - the test of every conditional expression (`c ? a : b`) and `if` statement; booleans are kept apart from the numbers (`flags`);
//   - every call's result (the learner's own helpers, `map`, `reduce`, `Math.exp`), except calls
//     whose result is dropped (a statement of its own) and the links of an optional chain.
// Functions and classes assigned to a name are not wrapped (that would lose their inferred `name`).
import { parse } from 'acorn';

/** The name of the recording function inside the instrumented code. */
export const RECORD = '__rec__';

const ARITHMETIC = new Set(['+', '-', '*', '/', '%', '**']);
const COMPARISONS = new Set(['<', '<=', '>', '>=']);
const LOOPS = new Set(['ForStatement', 'WhileStatement', 'DoWhileStatement']);
const FUNCTIONS = new Set(['FunctionExpression', 'ArrowFunctionExpression', 'ClassExpression']);

/** Visits every node of an acorn tree: visit(node, parent, key, spine) — `spine`: node is a link of an optional chain. */
function walk(node, visit, parent = null, key = null, spine = false) {
  visit(node, parent, key, spine);
  for (const [k, child] of Object.entries(node)) {
    if (k === 'loc' || !child || typeof child !== 'object') continue;
    const childSpine = node.type === 'ChainExpression' || (spine && ((node.type === 'MemberExpression' && k === 'object') || (node.type === 'CallExpression' && k === 'callee')));
    if (Array.isArray(child)) for (const c of child) { if (c && typeof c.type === 'string') walk(c, visit, node, k, false); }
    else if (typeof child.type === 'string') walk(child, visit, node, k, childSpine);
  }
}

/** The name under which a node's values are shown: a variable, an assignment's target, `return` of a function. */
function nameOf(code, node, parent, functionName) {
  if (parent?.type === 'VariableDeclarator') return code.slice(parent.id.start, parent.id.end);
  if (node.type === 'AssignmentExpression') return code.slice(node.left.start, node.left.end);
  if (parent?.type === 'ReturnStatement') return `the value returned by ${functionName ?? 'a function'}`;
  const text = code.slice(node.start, node.end).replace(/\s+/g, ' ');
  return text.length > 40 ? `${text.slice(0, 37)}…` : text;
}

/** The names a parameter binds: `x`, `[a, b]`, `{ k, v }`, `x = 1`, `...rest`. */
function boundNames(p) {
  if (p?.type === 'Identifier') return [p.name];
  if (p?.type === 'AssignmentPattern') return boundNames(p.left);
  if (p?.type === 'RestElement') return boundNames(p.argument);
  if (p?.type === 'ArrayPattern') return p.elements.flatMap(boundNames);
  if (p?.type === 'ObjectPattern') return p.properties.flatMap((q) => boundNames(q.type === 'RestElement' ? q.argument : q.value));
  return [];
}

/**
 * The module's own functions and methods (declarations, functions bound to a name, class and object
 * methods): name → what each parameter binds, by position ({ names, pattern }).
 */
function ownFunctions(ast) {
  const own = new Map();
  // each parameter: its names, and whether it is an array pattern of names (`[a, b]`: its names by position)
  const params = (fn) => (fn.params ?? []).map((p) => ({ names: boundNames(p), pattern: p.type === 'ArrayPattern' && p.elements.every((e) => e?.type === 'Identifier') }));
  walk(ast, (node, parent) => {
    if (node.type === 'FunctionDeclaration' && node.id) own.set(node.id.name, params(node));
    if (FUNCTIONS.has(node.type) && parent?.type === 'VariableDeclarator' && parent.id.type === 'Identifier') own.set(parent.id.name, params(node));
    if ((node.type === 'MethodDefinition' || node.type === 'Property') && FUNCTIONS.has(node.value?.type) && node.key.type === 'Identifier') own.set(node.key.name, params(node.value));
  });
  // a function made by one of them and bound to a name (`const turn = atPosition(p)`, where
  // atPosition returns `(x) => …`): its own too, under that name; its code is its maker's
  // (`home`: that name → the named function its code is written in, `rotor` for both)
  const returned = new Map();
  const home = new Map();
  const nodes = new Map();
  walk(ast, (node, parent) => {
    if (node.type === 'FunctionDeclaration' && node.id) nodes.set(node.id.name, node);
    if (FUNCTIONS.has(node.type) && parent?.type === 'VariableDeclarator' && parent.id.type === 'Identifier') nodes.set(parent.id.name, node);
  });
  for (let pass = 0; pass < 3; pass++) {
    walk(ast, (node) => {
      if (node.type !== 'VariableDeclarator' || node.id.type !== 'Identifier' || own.has(node.id.name) || node.init?.type !== 'CallExpression' || node.init.callee.type !== 'Identifier') return;
      const made = madeBy(nodes.get(node.init.callee.name));
      if (!made || returned.has(made)) return;
      own.set(node.id.name, params(made));
      nodes.set(node.id.name, made);
      returned.set(made, node.id.name);
      home.set(node.id.name, home.get(node.init.callee.name) ?? node.init.callee.name);
    });
  }
  return { own, home };
}

/** The function a function returns (its expression body, or a `return` of its body's own statements), or null. */
function madeBy(fn) {
  if (!fn || !/Function/.test(fn.type)) return null;
  if (fn.expression) return /Function/.test(fn.body.type) ? fn.body : null;
  const ret = fn.body.body.find((st) => st.type === 'ReturnStatement' && /Function/.test(st.argument?.type ?? ''));
  return ret ? ret.argument : null;
}

/** The identifiers a node reads (at most 16). */
function namesIn(node) {
  const names = new Set();
  walk(node, (n, parent, key) => {
    if (n.type === 'Identifier' && names.size < 16 && !(parent?.type === 'MemberExpression' && key === 'property' && !parent.computed)) names.add(n.name);
  });
  return [...names];
}

/**
 * The identifiers a node computes with (at most 16): the names its own arithmetic combines (`p` of
 * `p * inverse[i]`, `z` of `(e[j] / z) * v` or `w /= z`); not what a call, an index or a callback reads.
 */
function operandsIn(node) {
  const names = new Set();
  const visit = (n) => {
    if (n.type === 'Identifier') names.add(n.name);
    // (a property read by its name in arithmetic, as `.by` of `x * node.by`: propertyOf names where it is made;
    // a call's argument `node.from` is named so too, not a site that only reads a property)
    else if (propertyName(n)) names.add(propertyName(n));
    else if (n.type === 'BinaryExpression' && ARITHMETIC.has(n.operator)) { visit(n.left); visit(n.right); }
    else if (n.type === 'AssignmentExpression' && n.operator !== '=') visit(n.right);
    else if (n.type === 'UnaryExpression') visit(n.argument);
  };
  if (node.type === 'BinaryExpression' || node.type === 'AssignmentExpression' || node.type === 'UnaryExpression') visit(node);
  return [...names].slice(0, 16);
}

/** A member's property by its name, as `.by` for `node.by`; null for a computed one (`row[c]`) or anything else. */
const propertyName = (n) => (n?.type === 'MemberExpression' && !n.computed && n.property.type === 'Identifier' ? `.${n.property.name}` : null);

/**
 * The property a node's value is made for, as `.by`: an object literal's (`{ kind: 'scale', by: 1 / d }`)
 * or an assignment's to a member (`this.scale = 1 / d`); else null.
 */
function propertyOf(node, parent) {
  if (parent?.type === 'Property' && parent.value === node && !parent.computed && parent.key.type === 'Identifier') return `.${parent.key.name}`;
  return parent?.type === 'AssignmentExpression' && parent.operator === '=' && parent.right === node ? propertyName(parent.left) : null;
}

/**
 * The declarators of `for (let i = 0; …)` loops: their variables count, they hold no step's value.
 * (So does an index of `for (const key in row)` turned back into a number in its body: `const i = Number(key)`.)
 */
function loopCounters(ast) {
  const counters = new Set();
  const numeric = (init, names) => (init?.type === 'CallExpression' && init.callee.type === 'Identifier' && ['Number', 'parseInt'].includes(init.callee.name) && init.arguments[0]?.type === 'Identifier' && names.has(init.arguments[0].name))
    || (init?.type === 'UnaryExpression' && init.operator === '+' && init.argument.type === 'Identifier' && names.has(init.argument.name));
  walk(ast, (node, parent, key) => {
    if (node.type === 'VariableDeclaration' && parent?.type === 'ForStatement' && key === 'init') node.declarations.forEach((d) => counters.add(d));
    if (node.type !== 'ForInStatement' || node.left.type !== 'VariableDeclaration') return;
    const names = new Set(node.left.declarations.flatMap((d) => (d.id.type === 'Identifier' ? [d.id.name] : [])));
    walk(node.body, (inner) => { if (inner.type === 'VariableDeclarator' && numeric(inner.init, names)) counters.add(inner); });
  });
  return counters;
}

/** The nodes to wrap: [{ node, parent }], each range once (the first reason to record it names it). */
function targets(ast) {
  const chosen = new Map();
  const add = (node, parent, fn, call = false, loop = null, param = null) => {
    const key = `${node.start}:${node.end}`;
    // `argument`: recorded only as an argument (the alignment does not read it: first-line.js follows a parameter to it)
    if (!chosen.has(key)) chosen.set(key, { node, parent, fn, call, loop, param, argument: Boolean(param) });
    else if (call) chosen.get(key).call = true; // `const s = f(x)`: named by the variable, a frame all the same
    if (param) chosen.get(key).param = param;
    else chosen.get(key).argument = false;
  };
  const names = [];
  const { own, home } = ownFunctions(ast);
  // the arrays the code fills cell by cell (`concat[i][c] = …`, `concat[i].push(…)`): recorded when a method reads them whole
  const filled = new Set();
  walk(ast, (node) => {
    const name = node.type === 'AssignmentExpression' ? arrayWritten(node) : node.type === 'CallExpression' ? arrayMutated(node) : null;
    if (name) filled.add(name);
  });
  walk(ast, (node, parent, key, spine) => {
    if (spine) return;
    // the innermost named function (a callback belongs to the function it is written in)
    const fn = names.findLast((f) => f.name && f.start <= node.start && node.end <= f.end)?.name;
    const self = /Function/.test(node.type) ? node.id?.name ?? (parent?.type === 'VariableDeclarator' ? parent.id.name : parent?.type === 'MethodDefinition' || parent?.type === 'Property' ? parent.key.name : null) : null;
    if (/Function/.test(node.type)) names.push({ start: node.start, end: node.end, name: self });
    // the bound a loop's counter is compared with (`h < numberOfHeads`): a loop that stops short shows there
    if (LOOPS.has(node.type) && node.test?.type === 'BinaryExpression' && COMPARISONS.has(node.test.operator)) add(node.test.right, node.test, fn, false, [node.start, node.end]);
    // (an index is not recorded, unless it chooses what a declaration binds: `const { k, v } = kv[h % numberOfKVHeads]`)
    const index = node.type === 'VariableDeclarator' && node.init?.type === 'MemberExpression' && node.init.computed ? node.init.property : null;
    if (index?.type === 'BinaryExpression' && ARITHMETIC.has(index.operator)) add(index, node.init, fn);
    if (node.type === 'VariableDeclarator' && node.init && !FUNCTIONS.has(node.init.type)) add(node.init, node, fn);
    else if (node.type === 'AssignmentExpression' && !FUNCTIONS.has(node.right.type)) add(node, parent, fn);
    else if (node.type === 'ReturnStatement' && node.argument) add(node.argument, node, fn);
    else if (node.type === 'ArrowFunctionExpression' && node.expression) add(node.body, node, self ?? fn); // a named arrow's body is its own
    else if (node.type === 'ConditionalExpression' || node.type === 'IfStatement') add(node.test, node, fn); // its boolean: which branch (`j > i ? -Infinity : x`, `if (j > i) continue`)
    else if (node.type === 'BinaryExpression' && ARITHMETIC.has(node.operator)) {
      if (!(parent?.type === 'MemberExpression' && key === 'property')) add(node, parent, fn);
    } else if (node.type === 'CallExpression' && node.callee.type !== 'Super') {
      // a call of the learner's own function or method: a frame (see createRecorder); others only when their result is used
      const callee = node.callee.type === 'Identifier' ? node.callee.name : node.callee.type === 'MemberExpression' && !node.callee.computed ? node.callee.property.name : null;
      const mine = own.has(callee);
      if (mine || parent?.type !== 'ExpressionStatement') add(node, parent, fn, mine);
      // a statement that writes into an array by its method (`concat[i].unshift(…row)`): when, not what it returns
      else if (arrayMutated(node)) { add(node, parent, fn); chosen.get(`${node.start}:${node.end}`).touch = true; }
      // an array filled cell by cell, read whole by a method of its own (`concat.map(…)`): its cells as they are then
      const object = node.callee.type === 'MemberExpression' && !node.callee.computed ? node.callee.object : null;
      if (object?.type === 'Identifier' && filled.has(object.name) && !MUTATORS.has(node.callee.property.name)) add(object, node.callee, fn);
      // the arguments of a call of the learner's own function, each with the parameter names it binds there
      if (mine) node.arguments.forEach((arg, k) => { const p = own.get(callee)[k]; if (arg.type !== 'SpreadElement' && p?.names.length) add(arg, node, fn, false, null, { callee, binds: p.names, pattern: p.pattern, home: home.get(callee) ?? null }); });
    }
  });
  return [...chosen.values()];
}

const MUTATORS = new Set(['push', 'unshift', 'splice', 'set', 'fill', 'reverse', 'sort', 'copyWithin']);

/** The array a call of an array's mutating method writes into (`out` of `out[i].push(…)`), or null. */
function arrayMutated(call) {
  const callee = call?.callee;
  if (callee?.type !== 'MemberExpression' || callee.computed || !MUTATORS.has(callee.property.name)) return null;
  let target = callee.object;
  while (target.type === 'MemberExpression') target = target.object;
  return target.type === 'Identifier' ? target.name : null;
}

/** The variable a value is, or is an element, a slice, a view or a copy of: `out`, `out[i]`, `buffer.subarray(a, b)`, `Array.from(out)`; else null. */
function arrayRead(node) {
  let target = node;
  // a copy of it: `Array.from(out)`, `Float64Array.from(out)`, `[...out]`
  const copied = target.type === 'CallExpression' && target.callee.type === 'MemberExpression' && !target.callee.computed && target.callee.property.name === 'from' && target.arguments.length === 1;
  if (copied) target = target.arguments[0];
  else if (target.type === 'ArrayExpression' && target.elements.length === 1 && target.elements[0]?.type === 'SpreadElement') target = target.elements[0].argument;
  if (target.type === 'CallExpression' && target.callee.type === 'MemberExpression' && !target.callee.computed && ['slice', 'subarray'].includes(target.callee.property.name)) target = target.callee.object;
  while (target.type === 'MemberExpression') target = target.object;
  return target.type === 'Identifier' ? target.name : null;
}

/** The array an assignment writes an element of: the identifier under its left side's member chain, or null. */
function arrayWritten(assignment) {
  let target = assignment?.left;
  if (target?.type !== 'MemberExpression') return null;
  while (target.type === 'MemberExpression') target = target.object;
  return target.type === 'Identifier' ? target.name : null;
}

/**
 * The instrumented module: { code, sites }. `code` is `source` with every recorded expression
 * wrapped in `__rec__(id, (…))`, on the same lines; sites[id] = { line, column (1-based), name }.
 * Throws acorn's SyntaxError on a module that does not parse.
 */
export function instrument(source) {
  const ast = parse(source, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
  const sites = [];
  const inserts = [];
  const idOf = new Map(); // a recorded node → its site
  const counters = loopCounters(ast);
  const counterNames = new Set([...counters].flatMap((d) => boundNames(d.id)));
  for (const { node, parent, fn, call, loop, param, argument, touch } of targets(ast)) {
    const id = sites.length;
    idOf.set(node, id);
    const inner = node.type === 'BinaryExpression' && parent?.type === 'BinaryExpression' && ARITHMETIC.has(parent.operator);
    // (a method's call in a chain over several lines, `.softmax()`: where the method is written)
    const at = node.type === 'CallExpression' && node.callee.type === 'MemberExpression' && !node.callee.computed ? node.callee.property.loc.start : node.loc.start;
    sites.push({
      fn: fn ?? null,
      call,
      // a write by an array's method, as a statement: only the moment it ran is recorded
      touch: Boolean(touch),
      line: at.line, column: at.column + 1, name: nameOf(source, node, parent, fn), at: node.start, end: node.end,
      // for the bound of a `for` loop's test: the loop's [start, end] in the source (the sites it encloses have their `at` in it)
      loop,
      // for an argument of a call of the learner's own function: that function, and the parameter names the argument binds
      callee: param?.callee ?? null, binds: param?.binds ?? null, argument,
      // (for a function another made, `turn` of `const turn = atPosition(p)`: the function its code is written in)
      home: param?.home ?? null,
      // a name passed on as it is (`qk(second, h)`): it computes nothing there
      plain: node.type === 'Identifier',
      // an array's length read as it is (`Q[0].length`): a shape, which a right answer holds
      lengthRead: node.type === 'MemberExpression' && !node.computed && node.property.name === 'length',
      // the variable it declares, and the names it reads (first-line.js follows a wrong value to the constant it came from)
      declares: parent?.type === 'VariableDeclarator' && parent.id.type === 'Identifier' ? parent.id.name : null, property: propertyOf(node, parent),
      // the names an array pattern declares, by position (`const [start, end] = […]`)
      // (or an array pattern parameter the argument binds: `[a, b]` of `rotate([x, y], θ)`)
      pattern: parent?.type === 'VariableDeclarator' && parent.id.type === 'ArrayPattern' && parent.id.elements.every((e) => e?.type === 'Identifier') ? parent.id.elements.map((e) => e.name) : param?.pattern ? param.binds : null,
      // a part of a larger arithmetic expression: its value is not what the code keeps
      inner,
      // the larger expression's site, for a part (what the code does with the part's value)
      outer: inner ? idOf.get(parent) ?? null : null,
      uses: namesIn(node),
      // the names it computes with (arithmetic operands), and whether it declares a loop counter
      operands: operandsIn(node),
      // (or passes one on as it is: `angle(p, i)` in a loop over i)
      counter: counters.has(parent) || (Boolean(param) && node.type === 'Identifier' && counterNames.has(node.name)),
      // a call's arguments as names it computes with (`g` of `dotAt(q, h * d, k, g * d, d)`)
      args: node.type === 'CallExpression' ? [...new Set(node.arguments.flatMap((a) => (a.type === 'Identifier' ? [a.name] : propertyName(a) ? [propertyName(a)] : operandsIn(a))))].slice(0, 16) : null,
      // the array an assignment writes into (`out` for `out[i] = …`, its value or its right-hand side)
      // (or a call of its mutating method: `out[i].push(…row)`)
      // (and for a call of a mutating method, which: `unshift`, `reverse`, `sort` choose an order)
      mutator: node.type === 'CallExpression' && arrayMutated(node) ? node.callee.property.name : null,
      writes: arrayWritten(node.type === 'AssignmentExpression' ? node : parent?.type === 'AssignmentExpression' && parent.right === node ? parent : null) ?? (node.type === 'CallExpression' ? arrayMutated(node) : null),
      // whether its value is what its function returns (a `return`, an arrow function's expression body)
      // the names a `for…of` binds when it is that loop's iterable (`{ k, v }` of `for (const { k, v } of cache.slice(1))`)
      // the array a `.map` call walks, as written (`Q` of `Q.map((k, j) => …)`, `this.q`)
      mapsOver: node.type === 'CallExpression' && node.callee.type === 'MemberExpression' && !node.callee.computed && node.callee.property.name === 'map' && /^(Identifier|MemberExpression|ThisExpression)$/.test(node.callee.object.type) ? source.slice(node.callee.object.start, node.callee.object.end) : null,
      iterates: parent?.type === 'ForOfStatement' && parent.right === node ? boundNames(parent.left.declarations?.[0]?.id ?? parent.left) : null,
      returns: parent?.type === 'ReturnStatement' || (parent?.type === 'ArrowFunctionExpression' && parent.body === node),
      // the variable a site's value is, or is a part or a view of (`return out`, `out[i]`, `buffer.subarray(a, b)`)
      // (for a write by an array's method, what it puts in: `row` of `out.push(Array.from(row))`)
      reads: arrayMutated(node) && node.arguments.length === 1 ? arrayRead(node.arguments[0].type === 'SpreadElement' ? node.arguments[0].argument : node.arguments[0]) : arrayRead(node),
      // an assignment's operator (`+=`: an accumulation) and the name it assigns or writes into
      operator: node.type === 'AssignmentExpression' ? node.operator : null,
      // a loop's bound: the comparison it is the right side of (`<` an end, `<=` a last one)
      comparison: loop && parent?.type === 'BinaryExpression' && parent.right === node ? parent.operator : null,
      target: node.type === 'AssignmentExpression' ? (node.left.type === 'Identifier' ? node.left.name : arrayWritten(node)) : null,
    });
    // openers: outer (longer) first; closers: inner (later start) first. A call of the learner's own
    // function opens a frame first: `__rec__(id,(__rec__.enter(id),f(x)))`
    inserts.push({ at: node.start, text: call ? `${RECORD}(${id},(${RECORD}.enter(${id}),` : `${RECORD}(${id},(`, order: [1, -(node.end - node.start)] });
    inserts.push({ at: node.end, text: '))', order: [0, -node.start] });
  }
  inserts.sort((a, b) => a.at - b.at || a.order[0] - b.order[0] || a.order[1] - b.order[1]);
  let code = '';
  let at = 0;
  for (const insert of inserts) {
    code += source.slice(at, insert.at) + insert.text;
    at = insert.at;
  }
  return { code: code + source.slice(at), sites };
}

// ---- the recorder -----------------------------------------------------------------------------

/**
 * Bounds: a learner's loop can build millions of values. Each site keeps its first
 * MAX_PER_SITE numbers (in the order they were built, with the moment each was built), and a run
 * keeps MAX_TOTAL numbers in all; past either bound the values are counted, not kept. An array is
 * read to depth 2 (a matrix), at most MAX_PER_SNAPSHOT numbers of it; it is copied when recorded,
 * so a row filled later is seen again when it is returned or assigned whole.
 */
export const LIMITS = { MAX_PER_SITE: 4096, MAX_TOTAL: 200_000, MAX_PER_SNAPSHOT: 1024, MAX_SNAPSHOTS_PER_SITE: 16 };

const isArrayLike = (v) => Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));

/** A copy of a matrix-like value: { rows, cols, data } for an array of equal-length rows, 1×n for a flat one; null otherwise. */
function snapshot(v) {
  if (!isArrayLike(v) || v.length === 0 || v.length > LIMITS.MAX_PER_SNAPSHOT) return null;
  const cell = (x) => (x === undefined ? NaN : x); // a cell never written (`new Array(C)`): no number
  if (typeof v[0] === 'number') {
    for (let i = 0; i < v.length; i++) if (typeof v[i] !== 'number') return null;
    return { rows: 1, cols: v.length, data: Array.from(v) };
  }
  const cols = isArrayLike(v[0]) ? v[0].length : -1;
  // rows that are all empty (`row.slice(a, a)` of every row): a matrix of no column, its shape kept
  if (cols === 0 && v.every((row) => isArrayLike(row) && row.length === 0)) return { rows: v.length, cols: 0, data: [] };
  if (cols <= 0 || v.length * cols > LIMITS.MAX_PER_SNAPSHOT) return null;
  const data = [];
  for (const row of v) {
    if (!isArrayLike(row) || row.length !== cols) return null;
    for (let j = 0; j < cols; j++) { if (typeof cell(row[j]) !== 'number') return null; data.push(cell(row[j])); }
  }
  return { rows: v.length, cols, data };
}

/**
 * The matrix an object wraps, `new Matrix(rows)` whose one array field is `this.rows`: a snapshot
 * of that field when it is the object's only array-like own field (of its first 8), null otherwise.
 */
function wrapped(object) {
  // (data fields only, read from their descriptors: a getter of the learner's is never run; the
  // first 8 keys at most, so that an object used as a large table costs no more than a small one)
  const fields = [];
  let seen = 0;
  for (const key in object) {
    if (++seen > 8) break;
    const field = Object.getOwnPropertyDescriptor(object, key)?.value;
    if (isArrayLike(field)) fields.push(field);
  }
  return fields.length === 1 ? snapshot(fields[0]) : null;
}

/**
 * A fresh recorder for `siteCount` sites: `record(id, value)` returns value unchanged (and never
 * throws; an object's wrapped matrix is kept in `wraps`, apart, only with `readObjects`); `take()` gives what was kept: per site { values, moments, callers, snapshots, wraps, flags, functions } (plain arrays; functions: how many of its values were functions), the counts, and the calls still open.
 */
export function createRecorder(siteCount, sites = [], { readObjects = false } = {}) {
  const values = Array.from({ length: siteCount }, () => []);
  const moments = Array.from({ length: siteCount }, () => []);
  // the call of the learner's own function each number was built under (the innermost frame), or -1
  const callers = Array.from({ length: siteCount }, () => []);
  const snapshots = Array.from({ length: siteCount }, () => []);
  const wraps = Array.from({ length: siteCount }, () => []);
  // the booleans a site built (a band or a mask as a predicate: `(p, j) => j <= p && j > p - w`), with their moments
  const flags = Array.from({ length: siteCount }, () => ({ values: [], moments: [] }));
  // how many functions a site's value was (`const cut = columnsOf(a, b)`: a closure, no number)
  const functions = new Array(siteCount).fill(0);
  const frames = [];
  let moment = 0;
  let kept = 0;
  let dropped = 0;
  const keep = (id, x) => {
    if (kept >= LIMITS.MAX_TOTAL || values[id].length >= LIMITS.MAX_PER_SITE) { dropped++; return; }
    values[id].push(x);
    moments[id].push(moment);
    callers[id].push(frames.length ? frames[frames.length - 1] : -1);
    kept++;
  };
  function record(id, value) {
    try {
      if (sites[id]?.call) while (frames.length && frames.pop() !== id) { /* a frame left by a throw */ }
      moment++;
      if (sites[id]?.touch) { if (moments[id].length < LIMITS.MAX_PER_SITE) moments[id].push(moment); }
      else if (typeof value === 'number') keep(id, value);
      else if (typeof value === 'function') functions[id]++;
      else if (typeof value === 'boolean') {
        if (kept < LIMITS.MAX_TOTAL && flags[id].values.length < LIMITS.MAX_PER_SITE) { flags[id].values.push(value); flags[id].moments.push(moment); kept++; } else dropped++;
      }
      else if (isArrayLike(value) && kept < LIMITS.MAX_TOTAL) {
        const snap = snapshot(value);
        if (snap) {
          for (const x of snap.data) keep(id, x);
          if (snapshots[id].length < LIMITS.MAX_SNAPSHOTS_PER_SITE) snapshots[id].push({ ...snap, moment, caller: frames.length ? frames[frames.length - 1] : -1 });
        }
      }
      // (an object that wraps a matrix, `new Matrix(rows)`: kept apart, its numbers not counted as values)
      else if (readObjects && value && typeof value === 'object' && wraps[id].length < LIMITS.MAX_SNAPSHOTS_PER_SITE) {
        const snap = wrapped(value);
        if (snap) wraps[id].push({ ...snap, moment, caller: frames.length ? frames[frames.length - 1] : -1 });
      }
    } catch { /* a value that cannot be read is not recorded */ }
    return value;
  }
  /** Opens the frame of a call of the learner's own function (closed when its result is recorded). */
  record.enter = (id) => { if (frames.length < 10_000) frames.push(id); };
  // (`open`: the calls of the learner's own functions not returned when it was taken, outermost
  // first: after a throw, the calls it was thrown under)
  const take = () => ({ sites: values.map((v, id) => ({ values: v, moments: moments[id], callers: callers[id], snapshots: snapshots[id], wraps: wraps[id], flags: flags[id], functions: functions[id] })), kept, dropped, open: frames.slice() });
  return { record, take };
}

/** The first line of the body of each function declared at the top of the module: { name: line }. */
function bodyLines(source) {
  const ast = parse(source, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
  const lines = {};
  for (let node of ast.body) {
    if (node.type === 'ExportNamedDeclaration' || node.type === 'ExportDefaultDeclaration') node = node.declaration ?? node;
    if (node?.type === 'FunctionDeclaration' && node.id) lines[node.id.name] = (node.body.body[0] ?? node.body).loc.start.line;
    for (const d of node?.declarations ?? []) if (d.id.type === 'Identifier' && d.init?.body?.type === 'BlockStatement') lines[d.id.name] = (d.init.body.body[0] ?? d.init.body).loc.start.line;
  }
  return lines;
}

/**
 * Runs `functionName` of the learner's `source`, instrumented, on each call: the traced run the
 * diagnosis aligns with the reference. `load(script)` evaluates a script from toScript (the
 * runner's eval) and returns its exports; `toScript` and `lineOf` are script.js's. Returns
 * { sites, bodyLines, results: [{ id, recording, error? }] }; null when the instrumented code
 * does not load (it then says nothing: the plain run's results stand).
 */
/**
 * The error the learner's own code throws where the instrumented code threw `error`: V8 writes an expression
 * it could not destructure by its text (`Cannot destructure property 'k' of 'kv[h]' as it is undefined.`), and
 * there the instrumented text is the recorder's call. `plain()` runs the learner's own function on a copy of the
 * same arguments, only then. Else `error` itself.
 */
export function ownError(error, plain) {
  if (!String(error?.message ?? '').includes(`${RECORD}(`)) return error;
  try {
    plain();
  } catch (e) {
    if (e?.name === error?.name) return e;
  }
  return error;
}

export function runTraced(source, functionName, calls, { load, toScript, lineOf }) {
  let fn;
  let sites;
  let current = createRecorder(0);
  try {
    const instrumented = instrument(source);
    sites = instrumented.sites;
    const record = (id, value) => current.record(id, value);
    record.enter = (id) => current.record.enter(id);
    const exported = load(toScript(instrumented.code, [RECORD]))(record);
    fn = exported[functionName] ?? exported.default;
  } catch {
    return null;
  }
  if (typeof fn !== 'function') return null;
  let plain = null; // the learner's own module's exports, loaded only for an error whose message names the recorder
  const results = calls.map(({ id, args }) => {
    // (objects read for a wrapped matrix unless the code makes a Proxy, whose traps reading would run)
    current = createRecorder(sites.length, sites, { readObjects: !/\bProxy\b/.test(source) });
    let error;
    try {
      fn(...structuredClone(args));
    } catch (e) {
      // (its message as the learner's own code has it; its line is the same)
      const own = ownError(e, () => { plain ??= load(toScript(source))(); (plain[functionName] ?? plain.default)(...structuredClone(args)); });
      error = { name: String(e?.name ?? 'thrown value'), message: String(own?.message ?? own).slice(0, 300), ...lineOf(e) };
    }
    return { id, recording: current.take(), ...(error ? { error } : {}) };
  });
  return { sites, bodyLines: bodyLines(source), results };
}
