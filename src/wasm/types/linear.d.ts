
/**
 * The projection `X·W + b`: X is T×in (or [B, T, in] as a typed matrix), W is in×out (`[in, out]`,
 * so each column of W is one output feature), b has `out` entries (optional). Returns T×out in the
 * same form as X: number[][] and Float64Array are computed in f64 (each sum in increasing order of
 * the shared index, like `multiHeadAttention`), Float32Array in f32 with the SIMD kernel.
 *
 * @throws {TypeError} when X, W or b has the wrong type, or X and W are not the same kind.
 * @throws {RangeError} when W's rows do not match X's columns, b's length does not match W's columns, or a value is not finite.
 */
export function linear(X: number[][], W: number[][], b?: number[] | Float64Array): number[][];
export function linear(X: TypedMatrixInput<Float32Array>, W: TypedMatrixInput<Float32Array>, b?: Float32Array | number[]): TypedMatrix<Float32Array>;
export function linear(X: TypedMatrixInput<Float64Array>, W: TypedMatrixInput<Float64Array>, b?: Float64Array | number[]): TypedMatrix<Float64Array>;
