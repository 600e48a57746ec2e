// The inputs of challenge 01's tests. `node challenges/generate.mjs` adds the expected values
// (computed by the wasm reference) and writes tests.json; never edit expected values by hand.
export default {
  challenge: '01-dot-product-attention',
  title: 'Scaled dot-product attention',
  summary: 'Write softmax(Q·Kᵀ/√d_k)·V, with a softmax that survives large scores.',
  function: 'dotProductAttention',
  tolerance: 1e-9,
  variants: ['no-scaling', 'softmax-axis', 'no-max-subtraction', 'k-not-transposed', 'v-transposed'],
  fixed: [
    {
      name: 'one-hot queries',
      why: 'Each query is a unit vector, so each row of scores is one column of Kᵀ.',
      args: [[[1, 0], [0, 1]], [[1, 2], [3, 4]], [[5, 6], [7, 8]]],
    },
    {
      name: 'one token',
      why: 'With a single key the softmax is [1], so the output is V itself, whatever Q and K are.',
      args: [[[0.5, -1]], [[2, 1]], [[3, -4, 5]]],
    },
    {
      name: 'values wider than keys',
      why: 'd_v (3) differs from d_k (2): the output takes its width from V.',
      args: [[[1, -1], [0.5, 2], [-1.5, 0]], [[0, 1], [2, -1], [1, 1]], [[1, 0, -1], [0, 2, 1], [3, -2, 0.5]]],
    },
    {
      name: 'four key dimensions',
      why: 'd_k = 4, so dividing by √d_k = 2 visibly changes the weights.',
      args: [
        [[1, 2, 0, -1], [0.5, -1, 2, 1], [-2, 1, 1, 0]],
        [[1, 0, 1, 2], [-1, 2, 0.5, 0], [2, 1, -1, 1]],
        [[1, 2], [-1, 0], [0.5, 3]],
      ],
    },
    {
      name: 'large scores',
      why: 'Scores near 2000: exp() of them overflows to Infinity unless each row\'s maximum is subtracted first.',
      args: [[[40, 40], [30, -10]], [[40, 40], [35, 5]], [[1, 2], [3, 4]]],
    },
  ],
  errors: [
    {
      name: 'K has more rows than Q',
      args: [[[1, 2], [3, 4]], [[1, 2], [3, 4], [5, 6]], [[5, 6], [7, 8]]],
      throws: { name: 'RangeError', messageStartsWith: 'K is 3×2 but Q is 2×2' },
    },
    {
      name: 'K has more columns than Q',
      args: [[[1, 2], [3, 4]], [[1, 2, 0], [3, 4, 0]], [[5, 6], [7, 8]]],
      throws: { name: 'RangeError', messageStartsWith: 'K is 2×3 but Q is 2×2' },
    },
    {
      name: 'V has a different number of rows',
      args: [[[1, 2], [3, 4]], [[1, 2], [3, 4]], [[5, 6], [7, 8], [9, 10]]],
      throws: { name: 'RangeError', messageStartsWith: 'V is 3×2 but Q is 2×2' },
    },
  ],
  random: {
    count: 20,
    entries: [-3, 3],
    sizes: { T: [1, 6], d_k: [1, 5], d_v: [1, 5] },
    args: [{ matrix: ['T', 'd_k'] }, { matrix: ['T', 'd_k'] }, { matrix: ['T', 'd_v'] }],
  },
};
