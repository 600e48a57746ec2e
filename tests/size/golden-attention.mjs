// The golden fixtures' groups that an attention-only build (no `model` feature: no Transformer) can run,
// checked bit for bit against a Node build of it; the model's groups are listed as skipped. The light build
// (no Cargo feature `training`) throws on the layer's backward, so the groups that call it differ there: to check
// that build's flags, build it with `--features training`.
// Usage: node tests/size/golden-attention.mjs <attention-only pkg-node dir>
import { resolve } from "node:path";
import { GROUPS, compute, compare, loadPackage, readFixture } from "../golden/golden.mjs";

const lab = loadPackage(resolve(process.argv[2], "attention_lab.js"));
const only = [], skipped = [];
for (const name of Object.keys(GROUPS)) {
  try { compute(lab, { only: [name] }); only.push(name); } catch { skipped.push(name); }
}
const report = compare(readFixture(), compute(lab, { only }), { all: false });
for (const line of report) console.log(`${line.ok ? "ok  " : "FAIL"} ${line.group}: ${line.how}; ${line.detail}`);
const failed = report.filter((l) => !l.ok).length;
console.log(`golden (attention-only): ${report.length} groups, ${failed} failed; skipped (need the model): ${skipped.join(", ")}`);
process.exitCode = failed || report.length === 0 ? 1 : 0;
