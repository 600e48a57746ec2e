// The inputs of challenge 02's tests. `node challenges/generate.mjs` adds the expected values
// (computed by the wasm reference) and writes tests.json; never edit expected values by hand.
const Q = [[1, 2], [3, 4]];
const V = [[5, 6], [7, 8]];
const SHAPE_MESSAGE = 'Q/K/V matrix dimensions must match the numberOfHeads * headDimensions';

export default {
  challenge: '02-multi-head-attention',
  title: 'Multi-head attention (heads up)',
  summary: 'Slice Q, K and V into heads by columns, attend per head, put the heads side by side, apply W_O.',
  function: 'multiHeadAttention',
  tolerance: 1e-9,
  variants: ['scale-by-C', 'no-scaling', 'softmax-axis', 'rows-sliced', 'concat-vertical', 'k-not-transposed', 'v-transposed', 'no-max-subtraction'],
  fixed: [
    {
      name: 'heads up: the known values',
      why: 'Q = K = [[1, 2], [3, 4]], V = [[5, 6], [7, 8]], two heads of width 1: ≈ [[6.762, 7.964], [6.995, 7.999]].',
      args: [Q, Q, V, { numberOfHeads: 2, headDimensions: 1 }],
    },
    {
      name: 'one head is plain attention',
      why: 'With numberOfHeads = 1 the result is dotProductAttention(Q, K, V).',
      args: [Q, Q, V, { numberOfHeads: 1, headDimensions: 2 }],
    },
    {
      name: 'one head, three tokens',
      why: 'T (3) differs from C (2): slicing rows instead of columns shows up here.',
      args: [[[1, 0], [0, 2], [-1, 1]], [[2, 1], [0, -1], [1, 1]], [[1, 2], [3, -1], [0, 4]], { numberOfHeads: 1, headDimensions: 2 }],
    },
    {
      name: 'three heads of two',
      why: 'C = 6 but each head is 2 wide, so the scale must be 1/√2, not 1/√6.',
      args: [
        [[1, 0, 2, -1, 0.5, 1], [0, 1, -1, 2, 1, 0], [2, -1, 0, 1, -0.5, 1.5]],
        [[0.5, 1, 1, 0, -1, 2], [1, -2, 0, 1, 1, 1], [-1, 0.5, 2, 1, 0, -1]],
        [[1, 2, 3, 4, 5, 6], [-1, 0, 1, 0, -1, 0], [2, 2, -2, 1, 0, 3]],
        { numberOfHeads: 3, headDimensions: 2 },
      ],
    },
    {
      name: 'two heads of two, two tokens',
      why: 'Each head is 2×2, so a missing transpose of K or an extra one of V still gives numbers, wrong ones.',
      args: [
        [[1, 2, 0, -1], [3, -1, 2, 1]],
        [[0, 1, 1, 2], [2, 0, -1, 1]],
        [[1, 2, 3, 4], [5, -6, 7, 8]],
        { numberOfHeads: 2, headDimensions: 2 },
      ],
    },
    {
      name: 'a W_O that is not the identity',
      why: 'The concatenated heads are multiplied by W_O at the end. W_O is not symmetric, so W_O used transposed shows here.',
      args: [[[1, 2], [3, 4], [0, -1]], [[1, 2], [3, 4], [2, 0]], [[5, 6], [7, 8], [1, -1]], { numberOfHeads: 2, headDimensions: 1, W_O: [[0, 1], [-1, 0.5]] }],
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
      name: 'C is not numberOfHeads · headDimensions',
      args: [[[1, 2, 3], [4, 5, 6]], [[1, 2, 3], [4, 5, 6]], [[1, 2, 3], [4, 5, 6]], { numberOfHeads: 2, headDimensions: 1 }],
      throws: { name: 'RangeError', messageStartsWith: SHAPE_MESSAGE },
    },
    {
      name: 'V is wider than Q',
      args: [Q, Q, [[5, 6, 0, 1], [7, 8, 0, 1]], { numberOfHeads: 2, headDimensions: 1 }],
      throws: { name: 'RangeError', messageStartsWith: SHAPE_MESSAGE },
    },
  ],
  random: {
    count: 20,
    entries: [-3, 3],
    sizes: { T: [1, 5], numberOfHeads: [1, 3], headDimensions: [1, 3], C: { product: ['numberOfHeads', 'headDimensions'] } },
    args: [
      { matrix: ['T', 'C'] },
      { matrix: ['T', 'C'] },
      { matrix: ['T', 'C'] },
      // W_O varies too: applied on the wrong side (concat·W_Oᵀ) or ignored, it must fail random cases
      { object: { numberOfHeads: { size: 'numberOfHeads' }, headDimensions: { size: 'headDimensions' }, W_O: { matrix: ['C', 'C'] } } },
    ],
  },
};
