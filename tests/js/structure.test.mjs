// The layout rules of src/ that no compiler checks: no import cycles between modules, and the
// head computation in one place (src/engine), so a new attention variant touches one place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const SRC = new URL('../../src/', import.meta.url).pathname;

/** Every .rs file under src/, as [module path like "layer::forward", text without its tests]. */
function modules(dir = SRC) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...modules(path));
    else if (name.endsWith('.rs')) {
      const parts = relative(SRC, path).slice(0, -3).split('/');
      if (['mod', 'lib'].includes(parts.at(-1))) parts.pop();
      out.push([parts.join('::') || 'crate', readFileSync(path, 'utf8').split('#[cfg(test)]')[0]]);
    }
  }
  return out;
}

/** Module → the modules it uses through `crate::…` or `super::…` paths (parents count as themselves). */
export function dependencies(files) {
  const known = new Set(files.map(([name]) => name));
  const graph = new Map();
  for (const [name, text] of files) {
    const deps = new Set();
    for (const [, a, b] of text.matchAll(/crate::([a-z_0-9]+)(?:::([a-z_0-9]+))?/g)) {
      deps.add(b && known.has(`${a}::${b}`) ? `${a}::${b}` : a);
    }
    const parent = name.split('::').slice(0, -1);
    for (const [, a] of text.matchAll(/\bsuper::([a-z_0-9]+)/g)) {
      const sibling = [...parent, a].join('::');
      deps.add(known.has(sibling) ? sibling : parent.join('::') || 'crate');
    }
    deps.delete(name);
    graph.set(name, [...deps].filter((d) => known.has(d)));
  }
  return graph;
}

/** The strongly connected components with more than one module (Tarjan). */
export function cycles(graph) {
  let next = 0;
  const index = new Map(), low = new Map(), stack = [], on = new Set(), found = [];
  const visit = (v) => {
    index.set(v, next); low.set(v, next); next += 1; stack.push(v); on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (on.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const component = [];
      let w;
      do { w = stack.pop(); on.delete(w); component.push(w); } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('src/ has no import cycles between modules', () => {
  assert.deepEqual(cycles(dependencies(modules())), []);
});

test('the cycle check sees a cycle (self-test)', () => {
  const files = [['a', 'use crate::b::X;'], ['b', 'use crate::c::Y;'], ['c', 'use crate::a::Z;'], ['d', 'use crate::a::W;']];
  assert.deepEqual(cycles(dependencies(files)), [['a', 'b', 'c']]);
  assert.deepEqual(cycles(dependencies([['layer', ''], ['layer::forward', 'use super::limits::x;'], ['layer::limits', 'use super::forward::y;']])), [['layer::forward', 'layer::limits']]);
});

test('the head computation lives in src/engine only: no other module calls a softmax or packs K itself', () => {
  for (const [name, text] of modules()) {
    if (name.startsWith('engine') || name === 'softmax' || name === 'kernels' || name.startsWith('kernels::') || name === 'trace') continue;
    for (const forbidden of ['stable_softmax_row', 'softmax_row_f32', 'pack_transposed']) {
      assert.ok(!text.includes(forbidden), `${name} uses ${forbidden}: the head routine belongs in src/engine`);
    }
  }
});

test('no TypeScript in Rust strings: each typescript_custom_section includes one src/wasm/types/*.d.ts, and each is included once', () => {
  const TYPES = join(SRC, 'wasm/types');
  const included = [];
  for (const [name, text] of modules()) {
    for (const [, value] of text.matchAll(/#\[wasm_bindgen\(typescript_custom_section\)\]\s*const \w+: &str = ([^;]+);/g)) {
      const file = value.match(/^include_str!\("types\/([\w-]+\.d\.ts)"\)$/)?.[1];
      assert.ok(file && name.startsWith('wasm::'), `${name}: a typescript_custom_section must be include_str!("types/<file>.d.ts") in src/wasm, not ${value.slice(0, 60)}`);
      included.push(file);
    }
    // no declaration text in a string either (an `export function`/`interface` inside a Rust literal)
    assert.doesNotMatch(text, /r#*"[^"]*\bexport (?:function|interface|type|class) /, `${name} holds TypeScript in a string`);
  }
  assert.deepEqual(included.sort(), readdirSync(TYPES).filter((f) => f.endsWith('.d.ts')).sort());
});
