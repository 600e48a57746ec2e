// The inputs of challenge 04's tests. `node challenges/generate.mjs` adds the expected values
// (computed by the wasm reference) and writes tests.json; never edit expected values by hand.
const I2 = [[1, 0], [0, 1]];
const X = [[1, 2], [3, 4]];
// Small projections that are not symmetric, so X·W and X·Wᵀ differ.
const W_Q = [[1, 2], [0, 1]];
const W_K = [[0.5, 0], [1, -1]];
const W_V = [[2, 1], [-1, 0]];
const W_O = [[0, 1], [1, 0.5]];
const heads = (numberOfHeads, headDimensions, weights) => ({ numberOfHeads, headDimensions, ...weights });

export default {
  challenge: '04-learned-projections',
  title: 'Learned projections',
  summary: 'Project one input X into Q, K and V with W_Q, W_K and W_V, attend per head, then apply W_O.',
  function: 'projectedSelfAttention',
  tolerance: 1e-9,
  variants: ['no-projection', 'weights-transposed', 'w-o-skipped', 'scale-by-C', 'no-scaling', 'softmax-axis', 'k-not-transposed', 'no-max-subtraction'],
  fixed: [
    {
      name: 'identity projections: challenge 02 again',
      why: 'With every W the identity, Q = K = V = X and the result is multiHeadAttention(X, X, X) of challenge 02.',
      args: [X, heads(2, 1, { W_Q: I2, W_K: I2, W_V: I2, W_O: I2 })],
    },
    {
      name: 'one head, three projections',
      why: 'One head of width 2: Q, K and V are three different views of the same X.',
      args: [X, heads(1, 2, { W_Q, W_K, W_V, W_O: I2 })],
    },
    {
      name: 'two heads, three tokens, a W_O that mixes',
      why: 'W_O is not the identity, so it must be applied to the concatenated heads at the end.',
      args: [[[1, 0], [0, 2], [-1, 1]], heads(2, 1, { W_Q, W_K, W_V, W_O })],
    },
    {
      name: 'two heads of two, two tokens',
      why: 'C = 4: each head reads two of the columns that the projections produced.',
      args: [
        [[1, -1, 0.5, 2], [0, 1, -2, 1]],
        heads(2, 2, {
          W_Q: [[1, 0, 0.5, 0], [0, 1, 0, -1], [2, 0, 1, 0], [0, 0.5, 0, 1]],
          W_K: [[0, 1, 0, 0], [1, 0, 0, 1], [0, 0, 1, -0.5], [0.5, 0, 1, 0]],
          W_V: [[1, 2, 0, 0], [0, 1, 3, 0], [0, 0, 1, 4], [-1, 0, 0, 1]],
          W_O: [[1, 0, 0, 1], [0, 1, 0, 0], [0, 0.5, 1, 0], [1, 0, 0, -1]],
        }),
      ],
    },
    {
      name: 'three heads of two',
      why: 'C = 6 but each head is 2 wide, so the scale is 1/√2, not 1/√6.',
      args: [
        [[1, 0, 2, -1, 0.5, 1], [0, 1, -1, 2, 1, 0], [2, -1, 0, 1, -0.5, 1.5]],
        heads(3, 2, {
          W_Q: [[1, 0, 0, 0, 0, 0.5], [0, 1, 0, 0, 1, 0], [0, 0, 1, 0.5, 0, 0], [0, 0, 0, 1, 0, 0], [0, 1, 0, 0, 1, 0], [0.5, 0, 0, 0, 0, 1]],
          W_K: [[0, 1, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 1, 0], [0, 0, 0, 1, 0, 0], [0, 0, 0.5, 0, 0, 1]],
          W_V: [[1, 2, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0, 1, 3, 0, 0], [0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 1, -1], [0, 0, 0, 0, 0, 1]],
          W_O: [[1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0], [0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 1, 0], [1, 1, 1, 0, 0, 1]],
        }),
      ],
    },
    {
      name: 'large scores',
      why: 'The projections scale X up and scores reach the thousands: exp() overflows to Infinity unless each row\'s maximum is subtracted first.',
      args: [[[4, 4], [3, -1]], heads(1, 2, { W_Q: [[10, 0], [0, 10]], W_K: [[10, 0], [1, 10]], W_V, W_O })],
    },
  ],
  errors: [
    {
      name: 'X has more columns than C',
      args: [[[1, 2, 3], [4, 5, 6]], heads(2, 1, { W_Q, W_K, W_V, W_O })],
      throws: { name: 'RangeError', messageStartsWith: 'X is 2×3 but numberOfHeads · headDimensions = 2 · 1 = 2' },
    },
    {
      name: 'W_K is not C×C',
      args: [X, heads(2, 1, { W_Q, W_K: [[1, 0, 1], [0, 1, 1]], W_V, W_O })],
      throws: { name: 'RangeError', messageStartsWith: 'W_K is 2×3 but must be C×C = 2×2' },
    },
    {
      name: 'W_O is too small',
      args: [[[1, 0, 2], [0, 1, 1]], heads(3, 1, { W_Q: [[1, 0, 0], [0, 1, 0], [0, 0, 1]], W_K: [[1, 0, 0], [0, 1, 0], [0, 0, 1]], W_V: [[1, 0, 0], [0, 1, 0], [0, 0, 1]], W_O })],
      throws: { name: 'RangeError', messageStartsWith: 'W_O is 2×2 but must be C×C = 3×3' },
    },
  ],
  random: {
    count: 20,
    entries: [-1, 1],
    sizes: { T: [1, 5], numberOfHeads: [1, 3], headDimensions: [1, 3], C: { product: ['numberOfHeads', 'headDimensions'] } },
    args: [
      { matrix: ['T', 'C'] },
      {
        object: {
          numberOfHeads: { size: 'numberOfHeads' },
          headDimensions: { size: 'headDimensions' },
          W_Q: { matrix: ['C', 'C'] },
          W_K: { matrix: ['C', 'C'] },
          W_V: { matrix: ['C', 'C'] },
          W_O: { matrix: ['C', 'C'] },
        },
      },
    ],
  },
};
