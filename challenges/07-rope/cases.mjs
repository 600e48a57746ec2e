// The inputs of challenge 07's tests. `node challenges/generate.mjs` adds the expected values
// (computed by the wasm reference, rotaryEmbedding) and writes tests.json; never edit expected values by hand.
const ONE_PAIR = { numberOfHeads: 1, headDimensions: 2 };
const ONE_HEAD_4 = { numberOfHeads: 1, headDimensions: 4 };

export default {
  challenge: '07-rope',
  title: 'Rotary position embedding',
  summary: 'Turn each pair of features by an angle that grows with the position, so scores only see the distance.',
  function: 'rotaryEmbedding',
  tolerance: 1e-9,
  variants: ['rope-interleaved', 'rope-angle-exponent', 'rope-offset-ignored'],
  fixed: [
    {
      name: 'position 0 changes nothing',
      why: 'At position 0 every angle is 0: cos 0 = 1, sin 0 = 0, so the row comes back unchanged.',
      args: [[[1, -2, 3, 0.5]], ONE_HEAD_4],
    },
    {
      name: 'one pair, one radian',
      why: 'With headDimensions = 2 there is one pair and its angle is p · base⁰ = p: at position 1, (1, 0) turns to (cos 1, sin 1).',
      args: [[[1, 0]], { ...ONE_PAIR, offset: 1 }],
    },
    {
      name: 'rows are positions',
      why: 'Row r sits at position r: the same vector turns by 0, 1, 2 and 3 radians.',
      args: [[[1, 0], [1, 0], [1, 0], [1, 0]], ONE_PAIR],
    },
    {
      name: 'rotate-half pairs',
      why: 'With headDimensions = 4, column 0 pairs with column 2 and column 1 with column 3 (not 0 with 1); pair 1 turns 100 times slower than pair 0.',
      args: [[[1, 2, 3, 4], [1, 2, 3, 4]], { ...ONE_HEAD_4, offset: 1 }],
    },
    {
      name: 'a smaller base',
      why: 'base = 100 with headDimensions = 4: pair 1 turns at 100^(−2/4) = 0.1 radian per position.',
      args: [[[0.5, -1, 2, 1], [3, 0, -1, 2]], { ...ONE_HEAD_4, base: 100, offset: 3 }],
    },
    {
      name: 'two heads, the same angles',
      why: 'Every head is rotated on its own, with the angles of one head of width headDimensions (not of the whole row).',
      args: [
        [[1, 0, 2, -1, 0.5, 1, -2, 3], [0, 1, 1, 0, 2, 2, 1, -1], [1, 1, 1, 1, -1, 0, 0, 1]],
        { numberOfHeads: 2, headDimensions: 4 },
      ],
    },
    {
      name: 'offset: a later chunk',
      why: 'With offset = 1000 the first row is at position 1000, as when a model continues a long text; six columns give three pairs.',
      args: [[[1, 2, -1, 0, 3, 1], [2, -1, 0.5, 1, 1, -2]], { numberOfHeads: 1, headDimensions: 6, offset: 1000 }],
    },
  ],
  errors: [
    {
      name: 'odd headDimensions',
      args: [[[1, 2, 3]], { numberOfHeads: 1, headDimensions: 3 }],
      throws: { name: 'RangeError', messageStartsWith: 'headDimensions = 3 is odd' },
    },
    {
      name: 'X is not T×(numberOfHeads·headDimensions)',
      args: [[[1, 2, 3]], ONE_PAIR],
      throws: { name: 'RangeError', messageStartsWith: 'X is 1×3 but must be' },
    },
    {
      name: 'base 0',
      args: [[[1, 2]], { ...ONE_PAIR, base: 0 }],
      throws: { name: 'RangeError', messageStartsWith: 'options.base is 0' },
    },
    {
      name: 'negative base',
      args: [[[1, 2]], { ...ONE_PAIR, base: -10 }],
      throws: { name: 'RangeError', messageStartsWith: 'options.base is -10' },
    },
    {
      name: 'base is not a number',
      args: [[[1, 2]], { ...ONE_PAIR, base: '10000' }],
      throws: { name: 'TypeError', messageStartsWith: 'options.base is a string' },
    },
    {
      name: 'negative offset',
      args: [[[1, 2]], { ...ONE_PAIR, offset: -1 }],
      throws: { name: 'RangeError', messageStartsWith: 'options.offset is -1' },
    },
    {
      name: 'fractional offset',
      args: [[[1, 2]], { ...ONE_PAIR, offset: 1.5 }],
      throws: { name: 'RangeError', messageStartsWith: 'options.offset is 1.5' },
    },
  ],
  random: {
    count: 20,
    entries: [-3, 3],
    sizes: {
      T: [1, 5],
      numberOfHeads: [1, 3],
      pairs: [1, 3],
      two: [2, 2],
      offset: [0, 60],
      headDimensions: { product: ['pairs', 'two'] },
      C: { product: ['numberOfHeads', 'pairs', 'two'] },
    },
    args: [
      { matrix: ['T', 'C'] },
      {
        object: {
          numberOfHeads: { size: 'numberOfHeads' },
          headDimensions: { size: 'headDimensions' },
          base: { oneOf: [10000, 500, 10] },
          offset: { size: 'offset' },
        },
      },
    ],
  },
};
