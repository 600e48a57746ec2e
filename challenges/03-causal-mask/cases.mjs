// The inputs of challenge 03's tests. `node challenges/generate.mjs` adds the expected values
// (computed by the wasm reference) and writes tests.json; never edit expected values by hand.
const CAUSAL = { causal: true };

export default {
  challenge: '03-causal-mask',
  title: 'Causal mask: no peeking',
  summary: 'Add a causal option: no query may look at a later key.',
  function: 'dotProductAttention',
  tolerance: 1e-9,
  variants: ['mask-ignored', 'mask-reversed', 'mask-after-softmax', 'mask-with-zero', 'no-scaling', 'softmax-axis', 'no-max-subtraction'],
  fixed: [
    {
      name: 'no options: plain attention',
      why: 'Without an options object nothing is masked; this is challenge 01.',
      args: [[[1, 0], [0, 1]], [[1, 2], [3, 4]], [[5, 6], [7, 8]]],
    },
    {
      name: 'causal: false',
      why: 'An explicit causal: false also masks nothing.',
      args: [[[1, 0], [0, 1]], [[1, 2], [3, 4]], [[5, 6], [7, 8]], { causal: false }],
    },
    {
      name: 'causal, two tokens',
      why: 'Token 0 can only see itself, so its output is V[0] exactly; token 1 sees both.',
      args: [[[1, 0], [0, 1]], [[1, 2], [3, 4]], [[5, 6], [7, 8]], CAUSAL],
    },
    {
      name: 'causal, one token',
      why: 'A single token only has itself to look at.',
      args: [[[2, -1, 0.5]], [[1, 1, 1]], [[4, -2]], CAUSAL],
    },
    {
      name: 'causal, four tokens',
      why: 'Row i of the weights has i + 1 non-zero entries.',
      args: [
        [[1, -1, 0.5], [0, 2, -1], [1.5, 0, 1], [-1, 1, 2]],
        [[0.5, 1, -1], [2, 0, 1], [-1, -1, 0.5], [1, 2, 1]],
        [[1, 2], [-3, 0.5], [2, 2], [0, -1]],
        CAUSAL,
      ],
    },
    {
      name: 'the future is loud',
      why: 'The last key matches every query strongly; only the last query may use it.',
      args: [
        [[1, 1], [1, 1], [1, 1]],
        [[0, 0], [0.5, -0.5], [4, 4]],
        [[1, 0], [0, 1], [100, 100]],
        CAUSAL,
      ],
    },
    {
      name: 'large scores, causal',
      why: 'Scores in the thousands: exp() overflows to Infinity unless each row\'s maximum is subtracted first.',
      args: [[[30, 30], [40, 40], [-20, 35]], [[30, 30], [40, 40], [10, 10]], [[1, 2], [3, 4], [5, 6]], CAUSAL],
    },
  ],
  errors: [
    {
      name: 'K has more rows than Q',
      args: [[[1, 2], [3, 4]], [[1, 2], [3, 4], [5, 6]], [[5, 6], [7, 8]], CAUSAL],
      throws: { name: 'RangeError', messageStartsWith: 'K is 3×2 but Q is 2×2' },
    },
    {
      name: 'V has a different number of rows',
      args: [[[1, 2], [3, 4]], [[1, 2], [3, 4]], [[5, 6]], CAUSAL],
      throws: { name: 'RangeError', messageStartsWith: 'V is 1×2 but Q is 2×2' },
    },
  ],
  random: {
    count: 20,
    entries: [-3, 3],
    sizes: { T: [1, 6], d_k: [1, 4], d_v: [1, 4] },
    args: [
      { matrix: ['T', 'd_k'] },
      { matrix: ['T', 'd_k'] },
      { matrix: ['T', 'd_v'] },
      { object: { causal: { oneOf: [true, false] } } },
    ],
  },
};
