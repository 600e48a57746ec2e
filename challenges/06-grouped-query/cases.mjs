// The inputs of challenge 06's tests. `node challenges/generate.mjs` adds the expected values
// (computed by the wasm reference, groupedQueryAttention) and writes tests.json; never edit
// expected values by hand.
const KV_WIDTH = 'but must be T_k×(numberOfKVHeads · headDimensions)';

export default {
  challenge: '06-grouped-query',
  title: 'Grouped-query and multi-query attention',
  summary: 'Let groups of query heads share one key/value head: head i reads K/V head ⌊i / (numberOfHeads / numberOfKVHeads)⌋.',
  function: 'groupedQueryAttention',
  tolerance: 1e-9,
  variants: ['kv-head-modulo', 'kv-sliced-as-query', 'scale-by-C', 'no-scaling', 'softmax-axis', 'no-max-subtraction'],
  fixed: [
    {
      name: 'two query heads share one key/value head',
      why: 'The lesson\'s example: Q = [[1, 2], [3, 4]], K = [[1], [3]], V = [[5], [7]], numberOfHeads = 2, numberOfKVHeads = 1: ≈ [[6.762, 6.964], [6.995, 6.999]].',
      args: [[[1, 2], [3, 4]], [[1], [3]], [[5], [7]], { numberOfHeads: 2, numberOfKVHeads: 1, headDimensions: 1 }],
    },
    {
      name: 'as many KV heads as query heads is multi-head attention',
      why: 'With numberOfKVHeads = numberOfHeads every query head has its own key/value head: the result of challenge 02.',
      args: [
        [[1, 2, 0, -1], [3, -1, 2, 1]],
        [[0, 1, 1, 2], [2, 0, -1, 1]],
        [[1, 2, 3, 4], [5, -6, 7, 8]],
        { numberOfHeads: 2, numberOfKVHeads: 2, headDimensions: 2 },
      ],
    },
    {
      name: 'four query heads, two KV heads, three tokens',
      why: 'Heads 0 and 1 read KV head 0, heads 2 and 3 read KV head 1. Choosing the KV head by i mod 2 pairs heads 0 and 2 instead.',
      args: [
        [[1, 0, 2, -1], [0, 1, -1, 2], [2, -1, 0, 1]],
        [[0.5, 1], [1, -2], [-1, 0.5]],
        [[1, 2], [-1, 0], [2, 3]],
        { numberOfHeads: 4, numberOfKVHeads: 2, headDimensions: 1 },
      ],
    },
    {
      name: 'four query heads, two KV heads of width 2',
      why: 'C = 8 but each head is 2 wide: the scale is 1/√2, not 1/√8, and K/V head ⌊i / 2⌋ covers columns 2⌊i / 2⌋ … 2⌊i / 2⌋ + 1 of K and V.',
      args: [
        [[1, 0, 2, -1, 0.5, 1, 0, 2], [0, 1, -1, 2, 1, 0, -2, 1]],
        [[0.5, 1, 1, 0], [1, -2, 0, 1]],
        [[1, 2, 3, 4], [-1, 0, 1, 0]],
        { numberOfHeads: 4, numberOfKVHeads: 2, headDimensions: 2 },
      ],
    },
    {
      name: 'multi-query: three query heads, one KV head',
      why: 'numberOfKVHeads = 1 (multi-query attention): every query head reads the same K and V.',
      args: [
        [[1, 0, 2, -1, 0.5, 1], [0, 1, -1, 2, 1, 0], [2, -1, 0, 1, -0.5, 1.5]],
        [[0.5, 1], [1, -2], [-1, 0.5]],
        [[1, 2], [-1, 0], [2, 2]],
        { numberOfHeads: 3, numberOfKVHeads: 1, headDimensions: 2 },
      ],
    },
    {
      name: 'large scores',
      why: 'Scores in the thousands: exp() overflows to Infinity unless each row\'s maximum is subtracted first.',
      args: [
        [[40, 40, 30, 30], [30, -10, 35, 5]],
        [[40, 40], [35, 5]],
        [[1, 2], [5, 6]],
        { numberOfHeads: 2, numberOfKVHeads: 1, headDimensions: 2 },
      ],
    },
  ],
  errors: [
    {
      name: 'numberOfKVHeads does not divide numberOfHeads',
      args: [[[1, 2, 3, 4], [5, 6, 7, 8]], [[1, 2, 3], [4, 5, 6]], [[1, 2, 3], [4, 5, 6]], { numberOfHeads: 4, numberOfKVHeads: 3, headDimensions: 1 }],
      throws: { name: 'RangeError', messageStartsWith: 'numberOfKVHeads = 3 does not divide numberOfHeads = 4' },
    },
    {
      name: 'K as wide as Q (C instead of C_kv)',
      args: [[[1, 2], [3, 4]], [[1, 2], [3, 4]], [[5], [7]], { numberOfHeads: 2, numberOfKVHeads: 1, headDimensions: 1 }],
      throws: { name: 'RangeError', messageStartsWith: `K is 2×2 ${KV_WIDTH}` },
    },
    {
      name: 'V as wide as Q (C instead of C_kv)',
      args: [[[1, 2], [3, 4]], [[1], [3]], [[5, 6], [7, 8]], { numberOfHeads: 2, numberOfKVHeads: 1, headDimensions: 1 }],
      throws: { name: 'RangeError', messageStartsWith: `V is 2×2 ${KV_WIDTH}` },
    },
    {
      name: 'Q narrower than numberOfHeads · headDimensions',
      args: [[[1], [3]], [[1], [3]], [[5], [7]], { numberOfHeads: 2, numberOfKVHeads: 1, headDimensions: 1 }],
      throws: { name: 'RangeError', messageStartsWith: 'Q is 2×1 but must be T_q×(numberOfHeads · headDimensions)' },
    },
    {
      name: 'V has fewer rows than K',
      args: [[[1, 2], [3, 4]], [[1], [3]], [[5]], { numberOfHeads: 2, numberOfKVHeads: 1, headDimensions: 1 }],
      throws: { name: 'RangeError', messageStartsWith: 'V is 1×1 but K is 2×1' },
    },
  ],
  random: {
    count: 20,
    entries: [-3, 3],
    // numberOfHeads = numberOfKVHeads · group, so numberOfKVHeads always divides it
    sizes: {
      T: [1, 5],
      numberOfKVHeads: [1, 3],
      group: [1, 3],
      headDimensions: [1, 3],
      numberOfHeads: { product: ['numberOfKVHeads', 'group'] },
      C: { product: ['numberOfKVHeads', 'group', 'headDimensions'] },
      C_kv: { product: ['numberOfKVHeads', 'headDimensions'] },
    },
    args: [
      { matrix: ['T', 'C'] },
      { matrix: ['T', 'C_kv'] },
      { matrix: ['T', 'C_kv'] },
      {
        object: {
          numberOfHeads: { size: 'numberOfHeads' },
          numberOfKVHeads: { size: 'numberOfKVHeads' },
          headDimensions: { size: 'headDimensions' },
        },
      },
    ],
  },
};
