// The terminal text of `attention-lab check` and `list`: a check report (./check.mjs) as lines that
// fit the terminal. `paint(style, text)` colours (node:util styleText) or returns text unchanged.
import { styleText } from 'node:util';
import { GROUP_TITLES, PROBLEM_LABELS, formatNumber as pageNumber, mistakesHeading } from './course.mjs';
/** Random cases that fail are listed up to this many (they usually fail alike). */
const RANDOM_SHOWN = 3;

/**
 * A painter for `stream`: colours only when it is a terminal that has colours, and never when
 * NO_COLOR is set (styleText checks the stream and the environment too).
 */
export function painterFor(stream) {
  const colour = Boolean(stream.isTTY) && stream.hasColors?.() === true && !process.env.NO_COLOR;
  return colour ? (style, text) => styleText(style, text, { stream }) : (_style, text) => text;
}

/**
 * A number as the site's tables show it (www/src/matrix.js's formatNumber); an output entry that is
 * not a number as the runner described it ({ unexpected }).
 */
export const formatNumber = (x) => (typeof x === 'number' ? pageNumber(x) : String(x?.unexpected ?? x));

/** `text` broken into lines of at most `width` characters, each starting with `indent`. */
export function wrap(text, width, indent = '') {
  const lines = [];
  for (const paragraph of String(text).split('\n')) {
    let line = '';
    for (const word of paragraph.split(' ')) {
      if (line && indent.length + line.length + 1 + word.length > width) {
        lines.push(indent + line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    lines.push(indent + line);
  }
  return lines;
}

const isMatrix = (M) => Array.isArray(M) && M.length > 0 && M.every(Array.isArray);
const sameCell = (a, e) => typeof a === 'number' && typeof e === 'number' && Math.abs(a - e) <= 1e-7 * Math.max(1, Math.abs(e));

/**
 * Two matrices side by side (or one under the other when they do not fit in `width`): the
 * expected, and the learner's with the cells that differ painted (or, without colour, starred).
 */
function matrices(expected, actual, width, paint, plain) {
  const block = (label, M, marks) => {
    const cells = M.map((row) => row.map((x) => formatNumber(x)));
    const widths = [];
    cells.forEach((row) => row.forEach((t, c) => { widths[c] = Math.max(widths[c] ?? 0, t.length + 1); }));
    const rows = cells.map((row, r) => row.map((t, c) => {
      const differs = marks?.(r, c);
      const padded = t.padStart(widths[c]) + (plain && marks ? (differs ? '*' : ' ') : '');
      return differs ? paint(['red', 'bold'], padded) : padded;
    }).join(' '));
    const visible = Math.max(label.length, ...cells.map((row) => row.reduce((n, t, c) => n + widths[c] + (plain && marks ? 1 : 0) + 1, -1)));
    return { lines: [label, ...rows], width: visible };
  };
  const left = block(`expected ${expected.label ?? ''}`.trim(), expected.matrix ?? expected, null);
  const actualMatrix = actual.matrix ?? actual;
  const same = actualMatrix.length === (expected.matrix ?? expected).length;
  const E = expected.matrix ?? expected;
  const right = block(actual.label ?? 'yours', actualMatrix, (r, c) => !same || E[r]?.[c] === undefined || !sameCell(actualMatrix[r][c], E[r][c]));
  const lines = [];
  const gap = 4;
  if (2 + left.width + gap + right.width <= width) {
    const height = Math.max(left.lines.length, right.lines.length);
    for (let i = 0; i < height; i++) {
      const l = left.lines[i] ?? '';
      lines.push(`  ${l}${' '.repeat(left.width - l.length + gap)}${right.lines[i] ?? ''}`.trimEnd());
    }
  } else {
    lines.push(...left.lines.map((l) => `  ${l}`), '', ...right.lines.map((l) => `  ${l}`));
  }
  if (plain) lines.push('  (* differs from the expected value)');
  return lines;
}

// An attention pattern (T×T weights in [0, 1], rows queries, columns keys) as text, two characters
// a cell, as the page draws it in colour: darker shades for larger weights.
const SHADES = [[0.9, '██'], [0.6, '▓▓'], [0.3, '▒▒'], [0.1, '░░'], [0, ' ·']];
const PATTERN_LEGEND = 'Rows are queries, columns keys: █ ≥ 0.9, ▓ ≥ 0.6, ▒ ≥ 0.3, ░ ≥ 0.1, · less; blank above the diagonal: masked (exactly 0); ╌ a row not scored; ! not a number.';

function patternLines(caption, pattern) {
  const cell = (row, q, k) => {
    const w = row[k];
    if (typeof w !== 'number' || !Number.isFinite(w)) return '!!';
    if (k > q && w === 0) return '  ';
    return SHADES.find(([bound]) => w >= bound)?.[1] ?? ' ·';
  };
  const T = pattern.length;
  const rows = pattern.map((row, q) => `${String(q).padStart(2)} ${row === null ? '╌╌'.repeat(T) : Array.from({ length: T }, (_, k) => cell(row, q, k)).join('')}`.trimEnd());
  return { lines: [caption, ...rows], width: Math.max(caption.length, 3 + 2 * T) };
}

/** Blocks of lines side by side when they fit in `width`, else one under the other. */
function sideBySide(blocks, width) {
  const gap = 4;
  if (2 + blocks.reduce((n, b) => n + b.width + gap, -gap) > width) return blocks.flatMap((b, i) => [...(i ? [''] : []), ...b.lines.map((l) => `  ${l}`)]);
  const height = Math.max(...blocks.map((b) => b.lines.length));
  return Array.from({ length: height }, (_, i) => `  ${blocks.map((b, j) => (b.lines[i] ?? '').padEnd(j === blocks.length - 1 ? 0 : b.width + gap)).join('')}`.trimEnd());
}

/** Whether two patterns differ anywhere by more than rounding. */
const patternsDiffer = (A, B) => A.some((row, q) => row.some((w, k) => !(Math.abs(w - B[q][k]) <= 1e-9)));

/**
 * What the page shows in a case of the model (challenges/NN-…/model-check.js's `model`): the scores,
 * and for a failing case the hint and the patterns (10: the head's next to the one that would pass;
 * 09: each head whose weights differ from the reference's, yours next to the reference's).
 */
function modelLines(c, width, dim, paint, plain) {
  const m = c.model;
  const out = [];
  if (m.kind === 'forward') {
    const [yours, reference] = m.scores;
    // a failure's reason already gives both shares
    if (c.pass) return { lines: [dim(`      ${yours.label}: ${yours.text}; ${reference.label}: ${reference.text} (of ${m.repeats} repeated tokens)`)], patterns: false };
    const pairs = m.pairs.filter((p) => !p.yours.pattern || patternsDiffer(p.yours.pattern, p.reference.pattern));
    for (const p of pairs) {
      const mine = p.yours.pattern ? patternLines(p.yours.caption, p.yours.pattern) : { lines: [p.yours.caption, '(your weights could not be read)'], width: p.yours.caption.length };
      out.push('', ...sideBySide([mine, patternLines(p.reference.caption, p.reference.pattern)], width).map((l) => `  ${l}`));
    }
    if (pairs.length) out.push(...wrap(`Each head's weights on the first sequence (${m.tokens.length} tokens: ${m.tokens.join(' ')}).`, width, '    ').map(dim));
    return { lines: out, patterns: pairs.length > 0 };
  }
  if (m.kind === 'load') return { lines: out, patterns: false };
  if (m.kind === 'scores') {
    // 11: a failing kind shows its hint, then the scores side by side
    if (c.pass) return { lines: [], patterns: false };
    if (m.hint) out.push(...wrap(m.hint.text, width, '      '));
    if (m.yours) out.push(...matrices({ label: 'scores (rows: layer-1 heads, columns: layer-2 heads)', matrix: m.expected }, { label: 'your scores', matrix: m.yours }, width, paint, plain));
    return { lines: out, patterns: false };
  }
  if (m.kind === 'naming') {
    // 11's nameHeads: a failure's reason gives both answers; the scores it was given, to read them by
    if (c.pass) return { lines: [], patterns: false };
    const cells = m.kComposition.map((row) => row.map((x) => formatNumber(x)));
    const w = Math.max(...cells.flat().map((t) => t.length));
    out.push('', `      the K-composition it was given (rows: layer-1 heads, columns: layer-2 heads; baseline ${formatNumber(m.baseline)}):`, ...cells.map((row) => `      ${row.map((t) => t.padStart(w)).join('  ')}`));
    return { lines: out, patterns: false };
  }
  if (m.kind === 'heads') return { lines: m.note ? wrap(m.note, width, '      ').map(dim) : [], patterns: false };
  // a failure's reason already gives the score
  if (c.pass) return { lines: [dim(`      ${m.score.label}: ${m.score.text}`)], patterns: false };
  if (m.hint) out.push(...wrap(m.hint.text, width, '      '));
  if (m.kind !== 'head') return { lines: out, patterns: false };
  out.push('', ...sideBySide([patternLines(m.yours.caption, m.yours.pattern), patternLines(m.expected.caption, m.expected.pattern)], width).map((l) => `  ${l}`));
  out.push(...wrap(`On the first sequence: ${m.tokens.join(' ')}.`, width, '    ').map(dim));
  return { lines: out, patterns: true };
}

/** The text of a check report, as an array of lines. */
export function formatCheck(report, { paint, width = 80 }) {
  const plain = paint('red', 'x') === 'x';
  const ok = (text) => paint('green', text);
  const bad = (text) => paint('red', text);
  const dim = (text) => paint('dim', text);
  const strong = (text) => paint('bold', text);
  const out = [];
  const { challenge } = report;
  out.push(strong(`Challenge ${challenge.number} · ${challenge.title}`) + dim(` · ${report.file}`));
  if (report.problem) {
    out.push(bad(`✗ ${problemLine(report.problem, report.file)}`));
    return out;
  }
  let lastThrown = null;
  let patterns = false;
  for (const kind of Object.keys(GROUP_TITLES)) {
    const items = report.cases.filter((c) => c.kind === kind);
    if (!items.length) continue;
    const passed = items.filter((c) => c.pass).length;
    out.push('', strong(`${GROUP_TITLES[kind]}: ${passed} of ${items.length} pass`));
    let shown = 0;
    for (const c of items) {
      if (kind === 'random' && (c.pass || shown >= RANDOM_SHOWN)) continue;
      shown++;
      out.push(c.pass ? `  ${ok('✓')} ${c.name}` : `  ${bad('✗')} ${c.name}${c.reason ? dim(`: ${c.reason}`) : ''}`);
      if (!c.pass && c.why) out.push(...wrap(c.why, width, '      ').map(dim));
      const thrown = !c.pass && c.error && kind !== 'error' ? `${c.error.name}: ${c.error.message}${c.error.line ? ` (line ${c.error.line})` : ''}` : null;
      // the same exception on every case is said once
      if (thrown && thrown !== lastThrown) out.push(...wrap(thrown, width, '      '));
      lastThrown = thrown ?? lastThrown;
      if (c.model) {
        const drawn = modelLines(c, width, dim, paint, plain);
        out.push(...drawn.lines);
        patterns ||= drawn.patterns;
      }
    }
    if (kind === 'model' && patterns) out.push(...wrap(PATTERN_LEGEND, width, '  ').map(dim));
    const failed = items.length - passed;
    if (kind === 'random' && failed > shown) out.push(dim(`  … and ${failed - shown} more random case${failed - shown === 1 ? '' : 's'} fail`));
  }
  const firstWrong = report.cases.find((c) => c.kind === 'fixed' && !c.pass && isMatrix(c.output));
  if (firstWrong) out.push('', strong(`"${firstWrong.name}"`), ...matrices(firstWrong.expected, { label: 'your output', matrix: firstWrong.output }, width, paint, plain));
  const d = report.diagnosis;
  if (d?.located) {
    const f = d.located;
    out.push('', bad(strong(f.heading)), ...wrap(f.title, width, '  ').map(strong));
    if (f.line) out.push(`  ${paint('cyan', `${report.file}:${f.line}`)}`, `  ${dim('│')} ${f.lineText ?? ''}`);
    out.push(...wrap(f.detail, width, '  '),
      ...wrap(f.foundBy, width, '  ').map(dim));
    if (f.expected && f.actual && isMatrix(f.expected.matrix) && isMatrix(f.actual.matrix)) out.push(...matrices(f.expected, f.actual, width, paint, plain));
    if (f.walkthrough) out.push('  Open this step in the walkthrough, with these inputs:', `  ${paint('cyan', f.walkthrough)}`);
  }
  if (d?.probeNote) out.push('', ...wrap(d.probeNote, width));
  if (d?.mistakes.length) {
    out.push('', strong(mistakesHeading(d.mistakes.length)));
    for (const m of d.mistakes) out.push(...wrap(`${m.title}. ${m.hint}`, width, '  '));
  }
  if (d?.nonFinite) out.push('', strong(d.nonFinite.title), ...wrap(d.nonFinite.detail, width, '  '));
  const all = report.status === 'pass';
  // the seed only matters to a challenge with random cases (10 has none)
  const seeded = report.cases.some((c) => c.kind === 'random');
  out.push('', (all ? ok(`✓ All ${report.total} tests pass.`) : bad(`✗ ${report.passed} of ${report.total} tests pass.`))
    + ` ${report.elapsedMs} ms${seeded ? `; random seed ${report.seed}` : ''}${all ? '. Challenge solved ✓' : seeded ? ` (again with --seed ${report.seed})` : '.'}`);
  return out;
}

/** The one line for code that could not be tested (the site's status line, with the file). */
export function problemLine(problem, file) {
  if (problem.type === 'timeout') return `Stopped: ${problem.message}`;
  const where = problem.line ? ` (${file} line ${problem.line}${problem.column ? `, column ${problem.column}` : ''})` : ` (${file})`;
  const label = PROBLEM_LABELS[problem.type] ?? 'Error';
  return `${label}${where}: ${problem.name && problem.type !== 'syntax' ? `${problem.name}: ` : ''}${problem.message}`;
}
