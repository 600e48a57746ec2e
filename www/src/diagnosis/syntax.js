// The acorn tree's helpers the repairs share (repair.js, slice.js): a walk that gives each node its
// parent, the names a pattern binds, whether a name is read as a value.

export const LOOPS = new Set(['ForStatement', 'WhileStatement', 'DoWhileStatement', 'ForInStatement', 'ForOfStatement']);
export const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);
export const GLOBALS = new Set(['Math', 'Number', 'Array', 'Object', 'Float64Array', 'Float32Array', 'Infinity', 'NaN', 'undefined', 'RangeError', 'TypeError', 'Error', 'JSON', 'Map', 'Set', 'WeakMap', 'String', 'Boolean', 'Symbol', 'console', 'this', 'arguments']);

/** Every node of an acorn tree: visit(node, parent, key). */
export function walk(node, visit, parent = null, key = null) {
  visit(node, parent, key);
  for (const [k, child] of Object.entries(node)) {
    if (k === 'loc' || !child || typeof child !== 'object') continue;
    if (Array.isArray(child)) for (const c of child) { if (c && typeof c.type === 'string') walk(c, visit, node, k); }
    else if (typeof child.type === 'string') walk(child, visit, node, k);
  }
}

/** The names a pattern binds. */
export function bound(p) {
  if (!p) return [];
  if (p.type === 'Identifier') return [p.name];
  if (p.type === 'AssignmentPattern') return bound(p.left);
  if (p.type === 'RestElement') return bound(p.argument);
  if (p.type === 'ArrayPattern') return p.elements.flatMap(bound);
  if (p.type === 'ObjectPattern') return p.properties.flatMap((q) => bound(q.type === 'RestElement' ? q.argument : q.value));
  return [];
}

/** Whether an Identifier node is read as a value (not declared, not a property name, not a callee). */
export function readAsValue(node, parent, key) {
  if (!parent) return false;
  if (parent.type === 'MemberExpression' && key === 'property' && !parent.computed) return false;
  if ((parent.type === 'Property' || parent.type === 'MethodDefinition' || parent.type === 'PropertyDefinition') && key === 'key') return false;
  if (parent.type === 'VariableDeclarator' && key === 'id') return false;
  if (FUNCTIONS.has(parent.type) && (key === 'params' || key === 'id')) return false;
  if (parent.type === 'CallExpression' && key === 'callee') return false;
  if (parent.type === 'AssignmentExpression' && key === 'left') return false;
  if (parent.type === 'UpdateExpression') return false;
  if (/Pattern|RestElement|CatchClause|Label|Break|Continue|ClassDeclaration|ClassExpression|ImportSpecifier|ExportSpecifier/.test(parent.type)) return false;
  if (parent.type === 'Property' && parent.shorthand) return false;
  return !GLOBALS.has(node.name);
}
