// The README's JavaScript examples run as they are written, on the Node this machine has (the package
// supports Node ≥ 20.19): each ```js block is saved as a module in a project where `attention-lab` is the
// Node build, and run with `node`. A block that only works in TypeScript or on a newer Node (`using`) is a
// ```ts block.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKAGE } from './support/lab.mjs';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** Every fenced block of `language`, with the line it starts on. */
function blocks(markdown, language) {
  const found = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const open = lines[i].match(/^(\s*)```(\w*)\s*$/);
    if (!open) continue;
    const end = lines.findIndex((line, j) => j > i && line.trim() === '```');
    if (open[2] === language) found.push({ line: i + 1, code: lines.slice(i + 1, end).map((l) => l.slice(open[1].length)).join('\n') });
    i = end;
  }
  return found;
}

/** A project whose `attention-lab` is the Node build (target/pkg-node), as `npm install` would give. */
function project() {
  const dir = mkdtempSync(join(tmpdir(), 'attention-lab-readme-'));
  const pkg = join(dir, 'node_modules', 'attention-lab');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'attention-lab', exports: './index.cjs' }));
  writeFileSync(join(pkg, 'index.cjs'), `module.exports = require(${JSON.stringify(PACKAGE)});\n`);
  return dir;
}

test('the README has JavaScript examples, and `using` only in TypeScript ones', () => {
  const js = blocks(README, 'js');
  assert.ok(js.length >= 4, `${js.length} js blocks`);
  for (const { line, code } of js) {
    assert.doesNotMatch(code, /^\s*(await\s+)?using\s+[\w$]/m, `README.md:${line}: \`using\` is a SyntaxError in JavaScript on Node 20; show try { … } finally { x.free() } and put \`using\` in a \`\`\`ts block`);
  }
  assert.ok(blocks(README, 'ts').some(({ code }) => /^using \w+ = new /m.test(code)), 'a TypeScript block shows `using`');
});

test('every README JavaScript example runs on this Node', { timeout: 300_000 }, () => {
  const dir = project();
  try {
    for (const { line, code } of blocks(README, 'js')) {
      const file = join(dir, `readme-${line}.mjs`);
      writeFileSync(file, code);
      try {
        execFileSync(process.execPath, [file], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (error) {
        assert.fail(`README.md:${line}: the example fails on Node ${process.version}:\n${error.stderr}`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
