// The inputs of challenge 09's tests. `node challenges/generate.mjs` adds the expected values
// (computed by the wasm reference), trains the model of model.mjs into model.json and scores it,
// and writes tests.json; never edit expected values by hand.
import { EVALUATION } from './model.mjs';

const SHAPE_MESSAGE = 'Q/K/V matrix dimensions must match the numberOfHeads * headDimensions';
const Q = [[1, 0, 2, -1], [0, 1, -1, 2], [2, -1, 0, 1]];
const K = [[0.5, 1, 1, 0], [1, -2, 0, 1], [-1, 0.5, 2, 1]];
const V = [[1, 2, 3, 4], [-1, 0, 1, 0], [2, 2, -2, 1]];
const TWO_BY_TWO = { numberOfHeads: 2, headDimensions: 2 };

export default {
  challenge: '09-attention-in-a-model',
  title: 'Your attention inside a trained model',
  summary: 'Write causal multi-head attention with W_O and run a trained two-layer model on it: does it still copy?',
  function: 'multiHeadAttention',
  tolerance: 1e-9,
  variants: ['no-scaling', 'scale-by-C', 'softmax-axis', 'no-max-subtraction', 'mask-ignored', 'mask-off-by-one', 'mask-after-softmax', 'mask-with-zero', 'w-o-skipped'],
  fixed: [
    {
      name: 'two heads of two, causal',
      why: 'Token 0 sees only itself, so row 0 is V\'s row 0 (W_O is the identity); token 2 sees all three.',
      args: [Q, K, V, { ...TWO_BY_TWO, causal: true }],
    },
    {
      name: 'the same, causal: false',
      why: 'Without the mask every token sees every key: this is challenge 02.',
      args: [Q, K, V, { ...TWO_BY_TWO, causal: false }],
    },
    {
      name: 'no causal option',
      why: 'A missing causal option means no mask.',
      args: [Q, K, V, TWO_BY_TWO],
    },
    {
      name: 'a loud next key',
      why: 'Key t + 1 matches query t strongly: a mask one key too wide lets every query read its next token.',
      args: [
        [[1, 1], [1, -1], [-1, 1], [1, 1]],
        [[0, 0], [4, -4], [-4, 4], [4, 4]],
        [[1, 0], [0, 1], [-1, 2], [3, -1]],
        { numberOfHeads: 1, headDimensions: 2, causal: true },
      ],
    },
    {
      name: 'causal, W_O not the identity',
      why: 'The model passes each layer\'s W_O: the heads side by side, times W_O. W_O is not symmetric, so a transposed W_O shows.',
      args: [Q, K, V, { ...TWO_BY_TWO, causal: true, W_O: [[0, 1, 0, 0], [-1, 0.5, 0, 2], [0, 0, 1, -1], [1, 0, 0.5, 0]] }],
    },
    {
      name: 'one head of four, four tokens, causal',
      why: 'With one head the scale is 1/√4 = 1/2; four tokens, so row t has t + 1 non-zero weights.',
      args: [
        [[1, 0, 2, -1], [0, 1, -1, 2], [2, -1, 0, 1], [-1, 1, 1, 0]],
        [[0.5, 1, 1, 0], [1, -2, 0, 1], [-1, 0.5, 2, 1], [1, 1, -1, 0]],
        [[1, 2, 3, 4], [-1, 0, 1, 0], [2, 2, -2, 1], [0, 1, 0, -1]],
        { numberOfHeads: 1, headDimensions: 4, causal: true },
      ],
    },
    {
      name: 'large scores, causal',
      why: 'Scores in the thousands: exp() overflows to Infinity unless each row\'s maximum is subtracted first.',
      args: [
        [[40, 40, 30, 30], [30, -10, 35, 5], [20, 20, -30, 30]],
        [[40, 40, 30, 30], [35, 5, 40, 40], [30, 30, 30, -30]],
        [[1, 2, 3, 4], [5, 6, 7, 8], [-1, 0, 2, 1]],
        { ...TWO_BY_TWO, causal: true },
      ],
    },
  ],
  errors: [
    {
      name: 'K has more rows than Q',
      args: [[[1, 2], [3, 4]], [[1, 2], [3, 4], [5, 6]], [[5, 6], [7, 8]], { numberOfHeads: 2, headDimensions: 1, causal: true }],
      throws: { name: 'RangeError', messageStartsWith: SHAPE_MESSAGE },
    },
    {
      name: 'C is not numberOfHeads · headDimensions',
      args: [[[1, 2, 3], [4, 5, 6]], [[1, 2, 3], [4, 5, 6]], [[1, 2, 3], [4, 5, 6]], { numberOfHeads: 2, headDimensions: 1, causal: true }],
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
      { object: { numberOfHeads: { size: 'numberOfHeads' }, headDimensions: { size: 'headDimensions' }, W_O: { matrix: ['C', 'C'] }, causal: { oneOf: [true, false] } } },
    ],
  },
  // The model check (challenges/README.md): the trained model of model.mjs, run by forward.js with
  // the learner's attention and with the package's, scored on these sequences.
  model: { kind: 'forward', weights: 'model.json', evaluation: EVALUATION, displaySequence: 0 },
};
