// The lab's text task (www/src/lab-text.js): the vocabulary, seeded windows, the copyable split,
// and its SplitMix64 against the package's (the first draw of repeatedTokens is its period).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { textTask, splitMix64, copyable, visibleChar, WINDOW_RANGE, EXAMPLE_PASSAGE } from '../../www/src/lab-text.js';

const ROOT = new URL('../../', import.meta.url);
const TEXT = readFileSync(new URL('www/src/texts/alice-chapter-1.txt', ROOT), 'utf8');
const task = textTask(TEXT);
const lab = createRequire(import.meta.url)(new URL('target/pkg-node/attention_lab.js', ROOT).pathname);

test('the vocabulary is the text\'s characters, sorted by code point, and encode/decode round-trip', () => {
  assert.equal(task.vocabulary.length, new Set(TEXT).size);
  assert.equal(task.vocabulary.length, 64, 'the page says 64 characters');
  for (let i = 1; i < task.vocabulary.length; i++) assert.ok(task.vocabulary[i - 1].codePointAt(0) < task.vocabulary[i].codePointAt(0));
  assert.equal(task.decode(task.tokens), TEXT);
  assert.deepEqual(task.encode('Alice'), [...'Alice'].map((c) => task.vocabulary.indexOf(c)));
  assert.throws(() => task.encode('Alice€'), { name: 'RangeError', message: /character "€" at index 5/ });
  assert.equal(task.label(task.vocabulary.indexOf(' ')), '␣');
  assert.equal(task.label(task.vocabulary.indexOf('\n')), '↵');
  assert.equal(visibleChar('a'), 'a');
  assert.throws(() => textTask(42), TypeError);
});

test('windows are seeded: the same seed gives the same windows, another seed others; each is a slice of the text', () => {
  const a = task.windows({ window: 64, batch: 16, seed: 12345 });
  assert.deepEqual(task.windows({ window: 64, batch: 16, seed: 12345 }), a);
  assert.notDeepEqual(task.windows({ window: 64, batch: 16, seed: 12346 }), a);
  assert.equal(a.length, 16);
  for (const w of a) {
    assert.equal(w.length, 64);
    assert.ok(TEXT.includes(task.decode(w)));
  }
  // offsets cover the text: the first and last characters can both be drawn
  const starts = new Set(Array.from({ length: 400 }, (_, s) => task.windows({ window: 128, batch: 8, seed: s })).flat().map((w) => TEXT.indexOf(task.decode(w))));
  assert.ok(Math.min(...starts) < 200 && Math.max(...starts) > TEXT.length - 400, `${Math.min(...starts)} … ${Math.max(...starts)}`);
  for (const bad of [WINDOW_RANGE[0] - 1, WINDOW_RANGE[1] + 1, 64.5]) assert.throws(() => task.windows({ window: bad, batch: 1, seed: 0 }), { name: 'RangeError', message: /window is/ });
  assert.throws(() => task.windows({ window: 64, batch: 0, seed: 0 }), { name: 'RangeError', message: /batch is 0/ });
  assert.throws(() => task.windows({ window: 64, batch: 1, seed: -1 }), { name: 'RangeError', message: /seed is -1/ });
});

test('the example window starts at the passage that repeats itself', () => {
  assert.ok(task.decode(task.example(64)).startsWith(EXAMPLE_PASSAGE));
  assert.equal(task.decode(task.example(128)).length, 128);
});

test('copyable: a character whose (previous, current) pair occurred earlier in the window', () => {
  const flags = copyable(task.encode('abcab'));
  assert.deepEqual(flags, [false, false, false, false, true]); // "ab" again at 3–4
  assert.deepEqual(copyable(task.encode('aaaa')), [false, false, true, true]);
  const example = task.example(64);
  const c = copyable(example);
  // the second "Do cats eat bats?": every character after its first "Do" pair is copyable
  const second = task.decode(example).indexOf('Do cats', 5);
  for (let t = second + 1; t < second + 'Do cats eat bats?'.length; t++) assert.ok(c[t], `position ${t} (${task.decode([example[t]])})`);
});

test('splitMix64 draws what the package\'s SplitMix64 draws (repeatedTokens\' first draw is the period)', () => {
  for (const seed of [0, 1, 7, 65537, 2 ** 40 + 3]) {
    for (const length of [5, 24]) {
      const { periods } = lab.repeatedTokens({ vocabSize: 64, length, batch: 1, seed });
      const shortest = Math.ceil(length / 2);
      assert.equal(periods[0], shortest + Math.floor(splitMix64(seed)() * (length - shortest + 1)), `seed ${seed}, length ${length}`);
    }
  }
});
