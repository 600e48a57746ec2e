// The learner's module as a script the runner evaluates (runner.worker.js), shared with the Node
// tests that run it the same way: exports turned into a returned object, lines kept where the learner wrote them.
import { parse } from 'acorn';

export const SOURCE_NAME = 'your-code.js';
// Network and messaging globals: removed from the worker before the learner's code runs, and
// shadowed as undefined parameters inside it (the CSP blocks the network anyway).
export const REMOVED = ['fetch', 'XMLHttpRequest', 'WebSocket', 'EventSource', 'importScripts', 'indexedDB', 'caches', 'BroadcastChannel', 'Worker', 'SharedWorker', 'WebTransport'];
export const HIDDEN = [...REMOVED, 'postMessage', 'close', 'onmessage', 'self', 'globalThis'];

/** The line of the learner's code an error comes from, read from its stack. */
export function lineOf(error) {
  const match = String(error?.stack ?? '').match(new RegExp(`${SOURCE_NAME.replace('.', '\\.')}:(\\d+):(\\d+)`));
  return match ? { line: Number(match[1]), column: Number(match[2]) } : {};
}

/**
 * Turns the module text into a script: `export` keywords become spaces (so lines and columns
 * stay where the learner wrote them) and the exported names are returned. `parameters` come first in the
 * wrapper's parameter list (the recorder of an instrumented run).
 */
export function toScript(code, parameters = []) {
  const ast = parse(code, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
  const chars = code.split(''); // UTF-16 units, like acorn's positions
  const blank = (start, end) => { for (let i = start; i < end; i++) if (chars[i] !== '\n') chars[i] = ' '; };
  const exported = [];
  for (const node of ast.body) {
    if (node.type === 'ImportDeclaration' || node.type === 'ExportAllDeclaration' || (node.type === 'ExportNamedDeclaration' && node.source)) {
      const error = new SyntaxError('imports are not available here: keep everything in this one file');
      error.loc = node.loc.start;
      throw error;
    }
    if (node.type === 'ExportNamedDeclaration') {
      if (node.declaration) {
        blank(node.start, node.declaration.start);
        const d = node.declaration;
        if (d.id) exported.push(d.id.name);
        for (const v of d.declarations ?? []) if (v.id.type === 'Identifier') exported.push(v.id.name);
      } else {
        blank(node.start, node.end);
        for (const s of node.specifiers) exported.push(`${s.exported.name}:${s.local.name}`);
      }
    }
    if (node.type === 'ExportDefaultDeclaration') {
      const d = node.declaration;
      blank(node.start, d.start);
      if (d.id) exported.push(`default:${d.id.name}`);
      else {
        // "export default " (15 characters) becomes "var __default__=" over the same span, give or take
        const lead = 'var __default__=';
        chars.splice(node.start, d.start - node.start, ...lead.split(''), ' ');
        exported.push('default:__default__');
      }
    }
  }
  const text = chars.join('');
  const names = exported.map((n) => (n.includes(':') ? n.split(':') : [n, n]));
  const returns = names.map(([outer, inner]) => `${JSON.stringify(outer)}: typeof ${inner} === 'undefined' ? undefined : ${inner}`);
  // One line of wrapper before the code would shift every line number: keep it on line 1.
  return `(function (${[...parameters, ...HIDDEN].join(', ')}) {"use strict";${text}\n;return { ${returns.join(', ')} };\n})\n//# sourceURL=${SOURCE_NAME}`;
}

