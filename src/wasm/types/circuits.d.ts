/** One cut path of `forward`'s `pathMask`: head `from` = [l1, i]'s output removed from input `input` of head `to` = [l2, j] only (l1 < l2; layers and heads count from 0). */
export interface PathCut {
  from: [number, number];
  to: [number, number];
  input: "query" | "key" | "value";
}

/** What `compositionScores` returns: each score array indexed [l1][i][l2][j], NaN where l1 ≥ l2. */
export interface CompositionScores {
  /** ‖W_OV(l1, i)·W_QK(l2, j)‖ / (‖W_OV(l1, i)‖·‖W_QK(l2, j)‖), Frobenius norms. */
  q: number[][][][];
  /** The same with W_QK(l2, j)ᵀ: how much head (l2, j)'s keys read what head (l1, i) wrote. */
  k: number[][][][];
  /** The same with W_OV(l2, j). */
  v: number[][][][];
  /** The mean score of 200 seeded pairs of random matrices of the same shapes (factors uniform in [−1, 1)); about 1/√embedDim. */
  baseline: number;
}

/** What `circuits` returns. Each matrix is row-major in the model's dtype. */
export interface HeadCircuits<A extends Float32Array | Float64Array = Float32Array | Float64Array> {
  /** W_E·W_OV·W_U [V, V]: row = the attended token, column = the logit it raises. */
  ov: TransformerTyped<A>;
  /** W_E·W_QK·W_Eᵀ [V, V]: row = the query's token, column = the key's token. */
  qk: TransformerTyped<A>;
  /** W_pos·W_QK·W_posᵀ [contextLength, contextLength] with 'shortformer' or 'learned' positions; null otherwise. */
  qkPositional: TransformerTyped<A> | null;
  /** Σ Re λ / Σ |λ| over the eigenvalues λ of the OV circuit (−1 … 1; NaN when they are all 0). */
  copyingScore: number;
}

export interface Transformer {
  /** Q-, K- and V-composition of every head (l1, i) with every head (l2, j) of a later layer, from the weights (TransformerLens' `all_composition_scores`), and the random baseline. */
  compositionScores(): CompositionScores;
  /** One head's full OV and QK circuits (direct paths, from the weights) and its OV copying score. Layers and heads count from 0. */
  circuits(options: { layer: number; head: number }): HeadCircuits;
}
