// The lab's model: the package's Transformer and repeatedTokens (issue 21), in the Worker.
// (`ATTENTION_LAB_STANDIN=1 vite build` aliases `lab-model` to a plain-JS development stand-in
// under tests/lab/ instead; the shipped build never contains it.)
import init, * as lab from '../pkg/attention_lab.js';

export async function loadModel() {
  await init();
  if (typeof lab.Transformer !== 'function' || typeof lab.repeatedTokens !== 'function') {
    throw new Error('this build of the attention-lab package has no Transformer yet, so the lab cannot train (rebuild the package: make build)');
  }
  return lab;
}
