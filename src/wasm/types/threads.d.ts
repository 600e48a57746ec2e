
/** What {@link threadsInfo} returns. */
export interface ThreadsInfo {
  /** The threads the calls use now: 1 until `initThreadPool` has started more. */
  threads: number;
  /** Whether this build can start threads at all: Node's entry, and `attention-lab/web` on a cross-origin isolated page, load the threads build; the bundler entry and non-isolated pages the single-threaded one. */
  threadsBuild: boolean;
  /** Why `threads` is 1, or `null` when a pool is running. */
  reason: string | null;
}

/**
 * Starts a pool of `threads` threads (default: the runtime's core count) and resolves to the
 * number actually in use. After it, the ordinary synchronous calls split their work across them:
 * the layer's forward pass and the functions' heads and query blocks, and every Float32Array
 * product by blocks of rows (a large one of a few rows, as a decoding step's unembedding, by columns).
 * No sum is divided between threads, so every result has the same bits on any number of threads.
 * The pool is started once: a second call resolves to the threads
 * already in use. Where threads cannot start it resolves to 1 and {@link threadsInfo} says why.
 *
 * @throws {TypeError} when `threads` is not a number.
 * @throws {RangeError} when `threads` is not an integer from 1 to 64.
 */
export function initThreadPool(threads?: number): Promise<number>;

/** The threads in use, whether this build can start any, and why not when it cannot. */
export function threadsInfo(): ThreadsInfo;
