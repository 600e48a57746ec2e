// The inputs of challenge 08's tests. `node challenges/generate.mjs` adds the expected values
// (computed by the wasm reference) and writes tests.json; never edit expected values by hand.
// The package has no slidingWindowAttention: its reference is groupedQueryAttention with one head,
// causal: true and headDimensions = the width of Q (the `reference` field below).
const Q4 = [[1, -1], [0, 2], [1.5, 0.5], [-1, 1]];
const K4 = [[0.5, 1], [2, 0], [-1, -1], [1, 2]];
const V4 = [[1, 2], [-3, 0.5], [2, 2], [0, -1]];

export default {
  challenge: '08-sliding-window',
  title: 'Sliding-window attention',
  summary: 'Let each query see only the last w keys: causal attention in a band, as Mistral does.',
  function: 'slidingWindowAttention',
  reference: {
    function: 'groupedQueryAttention',
    optionsArgument: 3,
    options: { numberOfHeads: 1, numberOfKVHeads: 1, causal: true },
    columnsOf: { headDimensions: 0 },
  },
  tolerance: 1e-9,
  variants: ['window-off-by-one', 'window-hides-self', 'window-ignored', 'window-not-causal', 'mask-with-zero', 'no-scaling', 'softmax-axis', 'no-max-subtraction'],
  fixed: [
    {
      name: 'no window: causal attention',
      why: 'Without a window every query sees all the keys up to its own position: challenge 03 with causal: true.',
      args: [Q4, K4, V4],
    },
    {
      name: 'window 1: only itself',
      why: 'A window of one key leaves each query only its own key, so the output is V.',
      args: [Q4, K4, V4, { window: 1 }],
    },
    {
      name: 'window 2, four tokens',
      why: 'Each query sees its own key and the one before: row p of the weights has non-zero entries at p − 1 and p only.',
      args: [Q4, K4, V4, { window: 2 }],
    },
    {
      name: 'a window wider than the text',
      why: 'With w ≥ T nothing falls out of the window: the same as no window.',
      args: [Q4, K4, V4, { window: 7 }],
    },
    {
      name: 'the first key is loud',
      why: 'Key 0 matches every query strongly and carries V = 100; with w = 2 only queries 0 and 1 may still use it.',
      args: [
        [[1, 1], [1, 1], [1, 1], [1, 1], [1, 1]],
        [[4, 4], [0, 0], [0.5, -0.5], [0, 1], [1, 0]],
        [[100, 100], [1, 0], [0, 1], [1, 1], [-1, 0]],
        { window: 2 },
      ],
    },
    {
      name: 'window 3, six tokens',
      why: 'Query p sees keys p − 2, p − 1 and p; the first two queries see fewer because there is nothing before them.',
      args: [
        [[0.5, 1, -1], [2, 0, 1], [-1, -1, 0.5], [1, 2, 1], [0, -2, 1.5], [1, 1, 1]],
        [[1, -1, 0.5], [0, 2, -1], [1.5, 0, 1], [-1, 1, 2], [2, 1, 0], [0.5, 0.5, -1]],
        [[1, 0, 2], [0, 1, -1], [2, 2, 0], [-1, 0, 1], [3, -1, 0.5], [0, 0, 1]],
        { window: 3 },
      ],
    },
    {
      name: 'large scores, window 2',
      why: 'Scores in the thousands: exp() overflows to Infinity unless each row\'s maximum is subtracted first.',
      args: [[[30, 30], [40, 40], [-20, 35], [40, 30]], [[30, 30], [40, 40], [10, 10], [35, 35]], [[1, 2], [3, 4], [5, 6], [7, 8]], { window: 2 }],
    },
  ],
  errors: [
    {
      name: 'window 0',
      args: [Q4, K4, V4, { window: 0 }],
      throws: { name: 'RangeError', messageStartsWith: 'options.window is 0' },
    },
    {
      name: 'a fractional window',
      args: [Q4, K4, V4, { window: 2.5 }],
      throws: { name: 'RangeError', messageStartsWith: 'options.window is 2.5' },
    },
    {
      name: 'a window that is not a number',
      args: [Q4, K4, V4, { window: '2' }],
      throws: { name: 'TypeError', messageStartsWith: 'options.window is a string' },
    },
    {
      name: 'K narrower than Q',
      args: [Q4, [[1], [2], [3], [4]], V4, { window: 2 }],
      throws: { name: 'RangeError', messageStartsWith: 'K is 4×1 but' },
    },
    {
      name: 'V wider than Q',
      args: [Q4, K4, [[1, 2, 3], [4, 5, 6], [7, 8, 9], [1, 1, 1]], { window: 2 }],
      throws: { name: 'RangeError', messageStartsWith: 'V is 4×3 but' },
    },
  ],
  random: {
    count: 20,
    entries: [-3, 3],
    sizes: { T: [1, 8], d: [1, 4], window: [1, 6] },
    args: [
      { matrix: ['T', 'd'] },
      { matrix: ['T', 'd'] },
      { matrix: ['T', 'd'] },
      { object: { window: { size: 'window' } } },
    ],
  },
};
