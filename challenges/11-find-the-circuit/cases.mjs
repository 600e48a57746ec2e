// The inputs of challenge 11's tests. `node challenges/generate.mjs` adds the expected values (the
// package's Transformer.compositionScores on the same weights: tests.json's `transformer`, see
// challenges/README.md), trains the lab's model of model.mjs into model.json, and writes tests.json;
// never edit expected values by hand.
const zeros = (n) => Array.from({ length: n }, () => new Array(n).fill(0));
const identity = (n) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
const withEntries = (n, entries) => {
  const M = zeros(n);
  for (const [r, c, x] of entries) M[r][c] = x;
  return M;
};
const I2 = { W_Q: identity(2), W_K: identity(2), W_V: identity(2), W_O: identity(2) };

// C = 4, two heads of 2. Dims 0–1 hold the token, dims 2–3 are free. Layer 1, head 0 (columns 0–1 of
// W_V, rows 0–1 of W_O) reads the token and writes it into dims 2–3 (what a previous-token head does);
// head 1 writes the token back onto itself. Layer 2, head 0: its query reads the token dims and its
// key the free dims (K-composition with head 0); head 1 reads the token with both.
const HAND = {
  layers: [
    {
      W_Q: identity(4),
      W_K: identity(4),
      W_V: withEntries(4, [[0, 0, 1], [1, 1, 1], [0, 2, 1], [1, 3, 1]]),
      W_O: withEntries(4, [[0, 2, 1], [1, 3, 1], [2, 0, 1], [3, 1, 1]]),
    },
    {
      W_Q: withEntries(4, [[0, 0, 1], [1, 1, 1], [0, 2, 1], [1, 3, 1]]),
      W_K: withEntries(4, [[2, 0, 1], [3, 1, 1], [0, 2, 1], [1, 3, 1]]),
      W_V: withEntries(4, [[0, 0, 1], [1, 1, 1], [0, 2, 1], [1, 3, 1]]),
      W_O: withEntries(4, [[0, 2, 1], [1, 3, 1], [2, 0, 1], [3, 1, 1]]),
    },
  ],
};
// C = 3, three heads of one column each (every W_OV and W_QK is an outer product); no symmetry, so
// W_QK and W_QKᵀ differ and a missing transpose shows.
const DECIMALS = {
  layers: [
    { W_Q: [[0.5, -1, 0.2], [1.5, 0.3, -0.7], [-0.4, 0.8, 1]], W_K: [[1, 0.6, -0.2], [-0.5, 1.2, 0.4], [0.3, -0.9, 0.7]], W_V: [[0.9, -0.3, 0.5], [0.2, 1.1, -0.6], [-0.8, 0.4, 1.3]], W_O: [[1.2, -0.4, 0.1], [0.3, 0.9, -1.1], [-0.6, 0.2, 0.8]] },
    { W_Q: [[-0.3, 1.4, 0.6], [0.7, -0.2, 1.1], [1.3, 0.5, -0.9]], W_K: [[0.4, -1.2, 0.9], [1.1, 0.3, 0.2], [-0.7, 0.8, -0.5]], W_V: [[0.6, 0.2, -1.4], [-1, 0.7, 0.3], [0.5, -0.6, 0.9]], W_O: [[0.8, 1, -0.3], [-0.2, 0.4, 1.2], [1.1, -0.7, 0.6]] },
  ],
};
const SHAPE = 'weights.layers';

export default {
  challenge: '11-find-the-circuit',
  title: 'Find the circuit',
  summary: 'Compute the Q-, K- and V-composition scores of a trained model\'s heads from its weights, and find the previous-token and induction heads with them.',
  function: 'compositionScores',
  // the answer is read from the package's Transformer holding the weights (www/src/cases.js)
  transformer: { method: 'compositionScores' },
  tolerance: 1e-9,
  variants: [],
  fixed: [
    {
      name: 'one head per layer, every W the identity',
      why: 'W_OV = W_QK = I (2×2): ‖I·I‖ / (‖I‖·‖I‖) = √2 / 2, about 0.71.',
      args: [{ layers: [I2, I2] }, { numberOfHeads: 1, kind: 'k' }],
    },
    {
      name: 'a previous-token head and a head whose keys read it: K',
      why: 'Layer 1 head 0 writes the token into dims 2–3, which layer 2 head 0\'s keys read: that pair K-composes (W_OV·W_QKᵀ keeps the token dims). Head 1 writes the token dims, which layer 2 head 1\'s keys read. The crossed pairs do not compose at all.',
      args: [HAND, { numberOfHeads: 2, kind: 'k' }],
    },
    {
      name: 'the same weights: Q',
      why: 'Both layer-2 heads\' queries read only the token dims: layer 1 head 0, which writes dims 2–3, has no Q-composition with either; head 1, which writes the token dims, has.',
      args: [HAND, { numberOfHeads: 2, kind: 'q' }],
    },
    {
      name: 'the same weights: V',
      why: 'V-composition multiplies two OV circuits: what head j of layer 2 moves of what head i of layer 1 wrote.',
      args: [HAND, { numberOfHeads: 2, kind: 'v' }],
    },
    {
      name: 'three heads of one column: K',
      why: 'Head h owns column h of W_Q, W_K, W_V and row h of W_O: each W_OV and W_QK is an outer product of a column and a row.',
      args: [DECIMALS, { numberOfHeads: 3, kind: 'k' }],
    },
    {
      name: 'the same weights: Q',
      why: 'Q uses W_QK where K uses its transpose: the two differ unless W_QK is symmetric.',
      args: [DECIMALS, { numberOfHeads: 3, kind: 'q' }],
    },
    {
      name: 'the same weights, one head of three: V',
      why: 'With one head, W_OV is the whole W_V·W_O: a 1×1 answer.',
      args: [DECIMALS, { numberOfHeads: 1, kind: 'v' }],
    },
  ],
  errors: [
    {
      name: 'a W_O of the first layer that is not C×C',
      args: [{ layers: [{ ...I2, W_O: [[1, 2, 3]] }, I2] }, { numberOfHeads: 1, kind: 'k' }],
      throws: { name: 'RangeError', messageStartsWith: `${SHAPE}[0].W_O is 1×3 but must be 2×2` },
    },
    {
      name: 'a W_K of the second layer that is not C×C',
      args: [{ layers: [I2, { ...I2, W_K: [[1, 0], [0, 1], [1, 1]] }] }, { numberOfHeads: 2, kind: 'q' }],
      throws: { name: 'RangeError', messageStartsWith: `${SHAPE}[1].W_K is 3×2 but must be 2×2` },
    },
  ],
  random: {
    count: 20,
    entries: [-1, 1],
    sizes: { numberOfHeads: [1, 3], headDimensions: [1, 3], C: { product: ['numberOfHeads', 'headDimensions'] } },
    args: [
      { object: { layers: { list: [
        { object: { W_Q: { matrix: ['C', 'C'] }, W_K: { matrix: ['C', 'C'] }, W_V: { matrix: ['C', 'C'] }, W_O: { matrix: ['C', 'C'] } } },
        { object: { W_Q: { matrix: ['C', 'C'] }, W_K: { matrix: ['C', 'C'] }, W_V: { matrix: ['C', 'C'] }, W_O: { matrix: ['C', 'C'] } } },
      ] } } },
      { object: { numberOfHeads: { size: 'numberOfHeads' }, kind: { oneOf: ['q', 'k', 'v'] } } },
    ],
  },
  // The model check (challenges/README.md): the lab's default run, trained by model.mjs into
  // model.json; the learner's function is called on its two layers for each kind.
  // nameHeads(kComposition, baseline): called on the package's K-composition of that model (its answer:
  // the heads by behaviour, model-check.js) and on these constructed scores, whose answers are theirs by
  // construction (the rule of the lesson: the row with the largest sum, then that row's cells above the baseline).
  model: {
    kind: 'circuits',
    weights: 'model.json',
    kinds: ['q', 'k', 'v'],
    naming: {
      function: 'nameHeads',
      cases: [
        {
          name: 'four heads, the previous-token head is layer-1 head 2',
          why: 'Row 2 sums to 1.20, the other rows to about 0.5: layer-1 head 2 is the head whose output the layer-2 keys read. Of its cells, only layer-2 heads 0 and 3 are above the baseline 0.125: they are the induction heads.',
          args: [[[0.12, 0.13, 0.11, 0.14], [0.1, 0.15, 0.12, 0.13], [0.45, 0.11, 0.09, 0.55], [0.14, 0.12, 0.13, 0.1]], 0.125],
          expected: { previousToken: [0, 2], induction: [[1, 0], [1, 3]] },
        },
        {
          name: 'the brightest cell is not the strongest row',
          why: 'The largest score, 0.60, is in row 0, but its other cells are below the baseline 0.2 (row sum 0.80); row 1 is above the baseline in every cell (row sum 0.99). Read the row, not the maximum: layer-1 head 1, and all three layer-2 heads.',
          args: [[[0.6, 0.1, 0.1], [0.35, 0.33, 0.31], [0.2, 0.19, 0.18]], 0.2],
          expected: { previousToken: [0, 1], induction: [[1, 0], [1, 1], [1, 2]] },
        },
        {
          name: 'no cell of the strongest row is above the baseline',
          why: 'Row 1 is the strongest (0.53 against 0.30), but both of its cells are under the baseline 0.3: no layer-2 head reads it more than random matrices would, so there is no induction head to name (an empty list).',
          args: [[[0.1, 0.2], [0.25, 0.28]], 0.3],
          expected: { previousToken: [0, 1], induction: [] },
        },
      ],
    },
  },
};
