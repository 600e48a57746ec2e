// The inputs of challenge 05's tests. The learner's decode(Q, K, V, { numberOfHeads, headDimensions })
// is checked against the package's multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions,
// causal: true }): decoding token by token with a cache gives the rows of one causal pass.
// `node challenges/generate.mjs` adds the expected values (computed by that reference) and writes
// tests.json; never edit expected values by hand.
const Q = [[1, 2], [3, 4]];
const V = [[5, 6], [7, 8]];
const SHAPE_MESSAGE = 'Q/K/V matrix dimensions must match the numberOfHeads * headDimensions';

export default {
  challenge: '05-kv-cache',
  title: 'KV cache: decode one token at a time',
  summary: 'Keep the past keys and values in a cache and compute each new token\'s attention from the cache alone.',
  function: 'decode',
  reference: { function: 'multiHeadAttention', optionsArgument: 3, options: { causal: true } },
  tolerance: 1e-9,
  variants: ['cache-bypassed', 'cache-overwritten', 'scale-by-C', 'no-scaling', 'no-max-subtraction'],
  fixed: [
    {
      name: 'two tokens, two heads of width 1',
      why: 'Token 0 sees only itself, so its output is V\'s row 0, [5, 6]; token 1 sees both: ≈ [[5, 6], [6.995, 7.999]].',
      args: [Q, Q, V, { numberOfHeads: 2, headDimensions: 1 }],
    },
    {
      name: 'one token',
      why: 'The first token\'s cache holds only its own key and value: its output is its own value row.',
      args: [[[1, -2, 0.5]], [[3, 0, -1]], [[2, -4, 7]], { numberOfHeads: 1, headDimensions: 3 }],
    },
    {
      name: 'four tokens, one head',
      why: 'Each step the cache is one row longer: token t averages the values of tokens 0 … t only.',
      args: [
        [[1, 0], [0, 2], [-1, 1], [2, 2]],
        [[2, 1], [0, -1], [1, 1], [-1, 0.5]],
        [[1, 2], [3, -1], [0, 4], [-2, 1]],
        { numberOfHeads: 1, headDimensions: 2 },
      ],
    },
    {
      name: 'three tokens, three heads of two',
      why: 'C = 6 but each head is 2 wide, so the scale is 1/√2, not 1/√6; each head reads its own columns of the cached rows.',
      args: [
        [[1, 0, 2, -1, 0.5, 1], [0, 1, -1, 2, 1, 0], [2, -1, 0, 1, -0.5, 1.5]],
        [[0.5, 1, 1, 0, -1, 2], [1, -2, 0, 1, 1, 1], [-1, 0.5, 2, 1, 0, -1]],
        [[1, 2, 3, 4, 5, 6], [-1, 0, 1, 0, -1, 0], [2, 2, -2, 1, 0, 3]],
        { numberOfHeads: 3, headDimensions: 2 },
      ],
    },
    {
      name: 'large scores',
      why: 'Scores in the thousands: exp() overflows to Infinity unless each row\'s maximum is subtracted first.',
      args: [
        [[40, 40, 30, 30], [30, -10, 35, 5]],
        [[40, 40, 30, 30], [35, 5, 40, 40]],
        [[1, 2, 3, 4], [5, 6, 7, 8]],
        { numberOfHeads: 2, headDimensions: 2 },
      ],
    },
  ],
  errors: [
    {
      name: 'K has more rows than Q',
      args: [Q, [[1, 2], [3, 4], [5, 6]], V, { numberOfHeads: 2, headDimensions: 1 }],
      throws: { name: 'RangeError', messageStartsWith: SHAPE_MESSAGE },
    },
    {
      name: 'V has fewer rows than Q',
      args: [Q, Q, [[5, 6]], { numberOfHeads: 2, headDimensions: 1 }],
      throws: { name: 'RangeError', messageStartsWith: SHAPE_MESSAGE },
    },
    {
      name: 'C is not numberOfHeads · headDimensions',
      args: [[[1, 2, 3], [4, 5, 6]], [[1, 2, 3], [4, 5, 6]], [[1, 2, 3], [4, 5, 6]], { numberOfHeads: 2, headDimensions: 1 }],
      throws: { name: 'RangeError', messageStartsWith: SHAPE_MESSAGE },
    },
  ],
  random: {
    count: 20,
    entries: [-3, 3],
    sizes: { T: [1, 6], numberOfHeads: [1, 3], headDimensions: [1, 3], C: { product: ['numberOfHeads', 'headDimensions'] } },
    args: [
      { matrix: ['T', 'C'] },
      { matrix: ['T', 'C'] },
      { matrix: ['T', 'C'] },
      { object: { numberOfHeads: { size: 'numberOfHeads' }, headDimensions: { size: 'headDimensions' } } },
    ],
  },
};
