// A module-resolution hook for the learner's worker (./sandbox.mjs registers it once the runner is
// loaded): every import() the learner's code makes is refused, so it reaches no Node module
// (node:net, node:http, node:fs, node:child_process…) and no other code.

/** Refuses every specifier. */
export async function resolve(specifier) {
  const error = new Error(`imports are not available here: keep everything in this one file (${specifier})`);
  error.code = 'ERR_ACCESS_DENIED';
  throw error;
}
