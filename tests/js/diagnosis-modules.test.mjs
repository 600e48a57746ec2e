// The diagnosis's shape (issue 28, "diagnosis as data"): www/src/diagnosis/ is a folder of small
// modules — none over 600 lines, no function over 80 lines, no import cycle — and its code names no
// challenge: no folder id, no challenge's function name as a string (what differs between challenges is
// in each challenges/NN-…/diagnosis.json, read by one engine; see docs/diagnosis.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { parse } from '../../www/node_modules/acorn/dist/acorn.mjs';

const ROOT = new URL('../../', import.meta.url).pathname;
const FOLDER = join(ROOT, 'www/src/diagnosis');
const MODULES = readdirSync(FOLDER).filter((f) => f.endsWith('.js')).sort().map((f) => join(FOLDER, f));
const source = (file) => readFileSync(file, 'utf8');
const astOf = (file) => parse(source(file), { ecmaVersion: 'latest', sourceType: 'module', locations: true });

/** Visits every node of an acorn tree. */
function walk(node, visit) {
  visit(node);
  for (const [key, child] of Object.entries(node)) {
    if (key === 'loc' || !child || typeof child !== 'object') continue;
    for (const c of Array.isArray(child) ? child : [child]) if (c && typeof c.type === 'string') walk(c, visit);
  }
}

/** The www/src modules a module imports (resolved paths), relative imports only. */
const importsOf = (file) => astOf(file).body.filter((n) => n.type === 'ImportDeclaration' || (n.type === 'ExportNamedDeclaration' && n.source) || n.type === 'ExportAllDeclaration')
  .map((n) => n.source.value).filter((s) => s.startsWith('.')).map((s) => normalize(join(dirname(file), s)));

test('the diagnosis is a folder of modules of at most 600 lines', () => {
  assert.ok(MODULES.length >= 10, `${MODULES.length} modules`);
  for (const file of MODULES) {
    const lines = source(file).split('\n').length;
    assert.ok(lines <= 600, `${relative(ROOT, file)}: ${lines} lines`);
  }
});

test('no function of the diagnosis is over 80 lines', () => {
  const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);
  for (const file of MODULES) {
    walk(astOf(file), (node) => {
      if (!FUNCTIONS.has(node.type)) return;
      const lines = node.loc.end.line - node.loc.start.line + 1;
      assert.ok(lines <= 80, `${relative(ROOT, file)}:${node.loc.start.line}: a function of ${lines} lines`);
    });
  }
});

/** A cycle in a graph (node → the nodes it imports) as a path, or null. */
function findCycle(graph) {
  const state = new Map(); // node → 'visiting' | 'done'
  const visit = (node, path) => {
    if (state.get(node) === 'done') return null;
    if (state.get(node) === 'visiting') return [...path, node];
    state.set(node, 'visiting');
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next, [...path, node]);
      if (cycle) return cycle;
    }
    state.set(node, 'done');
    return null;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node, []);
    if (cycle) return cycle;
  }
  return null;
}

test('the diagnosis modules import one another without a cycle', () => {
  const graph = new Map();
  const add = (file) => {
    if (graph.has(file)) return;
    graph.set(file, importsOf(file).filter((next) => next.startsWith(join(ROOT, 'www/src'))));
    graph.get(file).forEach(add);
  };
  MODULES.forEach(add);
  const cycle = findCycle(graph);
  assert.equal(cycle, null, `an import cycle: ${cycle?.map((f) => relative(ROOT, f)).join(' → ')}`);
  // the search finds one where there is one
  assert.deepEqual(findCycle(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']]])), ['a', 'b', 'c', 'a']);
});

test('the diagnosis code names no challenge: no folder id, no challenge function name as a string', () => {
  const folders = readdirSync(join(ROOT, 'challenges')).filter((f) => /^\d\d-/.test(f));
  const names = new Set(folders.map((f) => JSON.parse(source(join(ROOT, 'challenges', f, 'tests.json'))).function));
  assert.ok(names.has('multiHeadAttention') && names.has('decode'), 'the challenges\' function names are read');
  for (const file of MODULES) {
    walk(astOf(file), (node) => {
      const strings = node.type === 'Literal' && typeof node.value === 'string' ? [node.value] : node.type === 'TemplateElement' ? [node.value.cooked] : [];
      for (const text of strings) {
        assert.ok(!names.has(text), `${relative(ROOT, file)}:${node.loc.start.line}: the string '${text}' names a challenge's function`);
        assert.ok(!folders.some((f) => text.includes(f)) && !/^\d\d-[a-z]/.test(text), `${relative(ROOT, file)}:${node.loc.start.line}: '${text}' names a challenge`);
      }
      // a table's function is not read: the form (diagnosis.json's reference) says how to call it
      if (node.type === 'MemberExpression' && !node.computed && node.property.name === 'function') assert.fail(`${relative(ROOT, file)}:${node.loc.start.line}: reads .function`);
    });
  }
});
