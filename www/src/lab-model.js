// The lab's model: the package's Transformer and repeatedTokens (issue 21), in the Worker, from the
// site's single-threaded web build (www/pkg, as every page). Not the threads build yet: in a Vite
// bundle its pool cannot start (its workers are blob: module workers, which the site's CSP
// `worker-src 'self'` refuses, and they import the glue by a path relative to the unbundled
// snippet), so it would only add its larger .wasm (216 KB gzipped against 157 KB).
import init, * as lab from '../pkg/attention_lab.js';

export async function loadModel() {
  await init();
  if (typeof lab.Transformer !== 'function' || typeof lab.repeatedTokens !== 'function') {
    throw new Error('this build of the attention-lab package has no Transformer, so the lab cannot train (rebuild it: make build)');
  }
  return lab;
}
