// Where a wrong value can come from (repair.js orders its variants by it): a static slice, by how
// many steps back each line is from the lines the traced run named.
import { parse } from 'acorn';
import { FUNCTIONS, LOOPS, bound, readAsValue, walk } from './syntax.js';

/**
 * The lines a wrong value at `near` can come from, by how many steps back: { line → depth } (the near
 * lines 0). A step back from a line is the lines that declare or assign a name (or property) it reads,
 * the lines that call or pass the named function around it (its arguments made there), and the test of
 * an `if` or a ternary that decides whether it runs, at its depth (a control dependence: `if (!causal)`). A static
 * slice, coarse: a wrong value found in a helper is often made by its caller (`cols(from)` given the
 * wrong `from`), or by the line that made what the caller passed.
 */
export function sliceDepths(source, near, maxDepth = 3) {
  const ast = parse(source, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
  const reads = new Map();
  const defs = new Map();
  const named = [];
  const at = (map, k, v) => map.set(k, (map.get(k) ?? new Set()).add(v));
  const nameOf = (n) => (n?.type === 'Identifier' || n?.type === 'PrivateIdentifier' ? n.name : null);
  // (a declaration is seen in the innermost block, loop or function around it: `j` of one loop is not another's)
  const scopes = [];
  walk(ast, (node) => { if (node.type === 'BlockStatement' || LOOPS.has(node.type) || FUNCTIONS.has(node.type)) scopes.push(node); });
  const scopeOf = (node) => scopes.filter((b) => b.start <= node.start && node.end <= b.end).reduce((a, b) => (b.start >= a.start ? b : a), ast);
  const declared = [];
  const assigned = [];
  const tests = []; // (an if's or a ternary's test, and the lines it decides: `if (!causal) { … }`)
  walk(ast, (node, parent, key) => {
    const line = node.loc.start.line;
    if (node.type === 'IfStatement' || node.type === 'ConditionalExpression') tests.push({ line: node.test.loc.start.line, from: node.consequent.loc.start.line, to: (node.alternate ?? node.consequent).loc.end.line });
    if (node.type === 'Identifier' && (readAsValue(node, parent, key) || (parent?.type === 'CallExpression' && key === 'callee'))) at(reads, line, node.name);
    if (node.type === 'MemberExpression' && !node.computed && nameOf(node.property) && !(parent?.type === 'AssignmentExpression' && key === 'left')) at(reads, node.property.loc.start.line, nameOf(node.property));
    if (node.type === 'VariableDeclarator') {
      const scope = scopeOf(node);
      for (const name of bound(node.id)) declared.push({ name, line, from: scope.loc.start.line, to: scope.loc.end.line });
    }
    // (a property assigned is seen everywhere; a variable assigned, where its declaration is: below)
    if (node.type === 'AssignmentExpression' && node.left.type === 'MemberExpression' && !node.left.computed && nameOf(node.left.property)) at(defs, nameOf(node.left.property), line);
    if (node.type === 'AssignmentExpression' && node.left.type !== 'MemberExpression') for (const name of bound(node.left)) assigned.push({ name, line });
    // (an entry written makes the array: `row[j] = …`)
    if (node.type === 'AssignmentExpression' && node.left.type === 'MemberExpression' && node.left.computed && node.left.object.type === 'Identifier') assigned.push({ name: node.left.object.name, line });
    if (node.type === 'UpdateExpression' && node.argument.type === 'Identifier') assigned.push({ name: node.argument.name, line });
    const fn = node.type === 'FunctionDeclaration' ? [nameOf(node.id), node]
      : (node.type === 'VariableDeclarator' || node.type === 'AssignmentExpression') && FUNCTIONS.has((node.init ?? node.right)?.type) ? [nameOf(node.id ?? node.left) ?? nameOf(node.left?.property), node.init ?? node.right]
      : ['MethodDefinition', 'Property', 'PropertyDefinition'].includes(node.type) && FUNCTIONS.has(node.value?.type) ? [nameOf(node.key), node.value] : null;
    if (fn?.[0]) named.push({ name: fn[0], from: fn[1].loc.start.line, to: fn[1].loc.end.line });
  });
  for (const { name, line } of assigned) {
    const v = declared.filter((d) => d.name === name && d.from <= line && line <= d.to).reduce((a, d) => (!a || d.from >= a.from ? d : a), null);
    declared.push({ name, line, from: v?.from ?? 1, to: v?.to ?? Infinity });
  }
  const callers = new Map();
  for (const [line, names] of reads) for (const f of named) if (names.has(f.name) && !(f.from <= line && line <= f.to)) at(callers, f.name, line);
  const depth = new Map(near.map((l) => [l, 0]));
  let frontier = [...depth.keys()];
  for (let d = 1; d <= maxDepth && frontier.length; d++) {
    const next = [];
    const visit = (line) => { if (!depth.has(line)) { depth.set(line, d); next.push(line); for (const t of tests) if (t.from <= line && line <= t.to && t.line !== line) visit(t.line); } };
    for (const line of frontier) {
      for (const name of reads.get(line) ?? []) {
        for (const l of defs.get(name) ?? []) visit(l);
        for (const v of declared) if (v.name === name && v.from <= line && line <= v.to) visit(v.line);
      }
      for (const f of named) if (f.from <= line && line <= f.to) for (const l of callers.get(f.name) ?? []) visit(l);
    }
    frontier = next;
  }
  return depth;
}
