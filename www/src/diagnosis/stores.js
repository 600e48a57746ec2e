// Whether an edit's span is what the code stores or what it reads (issue 28): repair.js marks each
// edit that repairs with it, and repaired.js's readOrStored tells a cache that holds K's rows as
// values (`values.push(K[t])`) from a weighted sum that reads them (`keys[j]` for `values[j]`).
import { parse } from 'acorn';

/** Calls that store what they are given: a cache's append, a map's set. */
const STORES = new Set(['push', 'unshift', 'splice', 'set', 'append', 'add', 'emit', 'concat', 'put', 'store']);

/** Methods that compute from the array they are called on (read it), not copy it. */
const READS = new Set(['reduce', 'reduceRight', 'map', 'flatMap', 'forEach', 'filter', 'some', 'every', 'find']);

/**
 * Whether the span [start, end) of `source` is (inside) what a call of STORES is given or what is
 * assigned with `=` (true), or is read, an operand of arithmetic or of any other call
 * (false), looking out from the span to its statement; null when the source does not parse.
 */
export function storedAt(source, start, end) {
  let tree;
  try {
    tree = parse(source, { ecmaVersion: 'latest', sourceType: 'module' });
  } catch {
    return null;
  }
  // the nodes that hold the span, outermost first
  const path = [];
  const visit = (node) => {
    if (node.start > start || node.end < end) return;
    path.push(node);
    for (const value of Object.values(node)) {
      for (const child of Array.isArray(value) ? value : [value]) if (child && typeof child.type === 'string') visit(child);
    }
  };
  visit(tree);
  for (let k = path.length - 1; k > 0; k--) {
    const [node, inner] = [path[k - 1], path[k]];
    if (/Statement$|Declaration$|Function/.test(node.type)) return false;
    if (node.type === 'BinaryExpression' && /^[-+*/%]$|^\*\*$/.test(node.operator)) return false;
    if (node.type === 'AssignmentExpression') return node.operator === '=' && inner === node.right;
    // (what a method that computes is called on is read by it, `cache.keyCols[c].reduce(…)`, though its result is
    // stored; not one that copies, `k.slice(from, from + d)`)
    if (node.type === 'CallExpression' && node.callee === inner && inner.type === 'MemberExpression' && READS.has(inner.property.name)) return false;
    if (node.type === 'CallExpression' && node.arguments.includes(inner)) {
      const name = node.callee.type === 'MemberExpression' ? node.callee.property.name : node.callee.name;
      if (STORES.has(name)) return true;
    }
  }
  return false;
}
