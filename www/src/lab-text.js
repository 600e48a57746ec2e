// The lab's second task: next-character prediction on real text, the first chapter of Alice's
// Adventures in Wonderland (Project Gutenberg eBook #11, public domain; see texts/README.md).
// `textTask(text)` gives pure functions of the text, used by the Worker (batches) and the page
// (labels), and tested in tests/js/lab-text.test.mjs; the site imports the text with Vite's ?raw.
//  - the vocabulary is the text's distinct characters, sorted by code point (64 of them): token i
//    is vocabulary[i];
//  - a batch is `batch` windows of `window` consecutive characters, each starting at an offset drawn
//    with SplitMix64 (the generator of the package's repeatedTokens) seeded from (seed, step), so a
//    link reproduces every batch;
//  - a character is "copyable" when the pair (previous character, character) already occurred
//    earlier in its window: an induction head, attending to the character after an earlier copy of
//    the current one, could predict it; this split stands in for the induction task's "repeated".
/** The shortest and longest window the lab accepts (the model's contextLength is the window). */
export const WINDOW_RANGE = [8, 128];
/** The example window shown on the page begins at the first occurrence of this passage, which repeats itself. */
export const EXAMPLE_PASSAGE = '“Do cats eat bats? Do cats eat bats?”';

/** A visible label for a character: a space is ␣, a newline ↵ (the others as they are). */
export const visibleChar = (c) => (c === ' ' ? '␣' : c === '\n' ? '↵' : c);

const MASK64 = (1n << 64n) - 1n;
/** SplitMix64 as the package has it (src/init.rs): next() is uniform in [0, 1), 53 bits. */
export function splitMix64(seed) {
  let state = BigInt(seed) & MASK64;
  return () => {
    state = (state + 0x9E3779B97F4A7C15n) & MASK64;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & MASK64;
    z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & MASK64;
    z ^= z >> 31n;
    return Number(z >> 11n) / 2 ** 53;
  };
}

/** The text task on `text` (a string); see the top of this file. */
export function textTask(text) {
  if (typeof text !== 'string' || text.length < WINDOW_RANGE[1]) throw new TypeError(`textTask: text must be a string of at least ${WINDOW_RANGE[1]} characters`);
  /** The text's distinct characters, sorted by code point; token i is vocabulary[i]. */
  const vocabulary = [...new Set(text)].sort((a, b) => a.codePointAt(0) - b.codePointAt(0));
  const index = new Map(vocabulary.map((c, i) => [c, i]));
  const tokens = Uint16Array.from(Array.from(text), (c) => index.get(c));
  const exampleStart = Math.max(0, Array.from(text.slice(0, Math.max(0, text.indexOf(EXAMPLE_PASSAGE)))).length);

  function checkWindow(window, where) {
    if (!Number.isInteger(window) || window < WINDOW_RANGE[0] || window > WINDOW_RANGE[1]) {
      throw new RangeError(`${where}: window is ${window}; expected an integer from ${WINDOW_RANGE[0]} to ${WINDOW_RANGE[1]}`);
    }
  }

  return {
    vocabulary,
    tokens,
    /** The tokens of a string of the text's characters; a RangeError names a character outside it. */
    encode(string) {
      return Array.from(string, (c, i) => {
        const token = index.get(c);
        if (token === undefined) throw new RangeError(`encode: character ${JSON.stringify(c)} at index ${i} is not in the text's vocabulary`);
        return token;
      });
    },
    /** The string of some tokens. */
    decode: (some) => Array.from(some, (t) => vocabulary[t]).join(''),
    /** A visible label for a token (space ␣, newline ↵). */
    label: (token) => visibleChar(vocabulary[token]),
    /**
     * `batch` windows of `window` characters, as tokens [batch][window], at offsets drawn uniformly
     * from 0 … length − window by SplitMix64 started at `seed`: offset = floor(next() · count).
     */
    windows({ window, batch, seed }) {
      checkWindow(window, 'textTask.windows');
      if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`textTask.windows: batch is ${batch}; expected a positive integer`);
      if (!Number.isSafeInteger(seed) || seed < 0) throw new RangeError(`textTask.windows: seed is ${seed}; expected an integer ≥ 0`);
      const next = splitMix64(seed);
      const count = tokens.length - window + 1;
      return Array.from({ length: batch }, () => {
        const offset = Math.min(count - 1, Math.floor(next() * count));
        return Array.from(tokens.subarray(offset, offset + window));
      });
    },
    /** The example window: `window` characters from the example passage (earlier if the text ends first). */
    example(window) {
      checkWindow(window, 'textTask.example');
      const start = Math.min(exampleStart, tokens.length - window);
      return Array.from(tokens.subarray(start, start + window));
    },
  };
}

/**
 * copyable[t] for each position of a window: true where the pair (tokens[t − 1], tokens[t]) occurred
 * at some earlier (s − 1, s), s < t. (Position 0 is never copyable.) Laid out like repeatedTokens'
 * `repeated`, so losses[t] (predicting token t + 1) is split by copyable[t + 1].
 */
export function copyable(tokens) {
  const seen = new Set();
  return Array.from(tokens, (token, t) => {
    if (t === 0) return false;
    const pair = tokens[t - 1] * 65536 + token;
    const before = seen.has(pair);
    seen.add(pair);
    return before;
  });
}
