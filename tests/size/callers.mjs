// Who calls a function, from the text (wasm-dis) of tests/size/named.sh's module: the chains of callers up to
// an export, to find what pulls a piece of code (a formatter, a panic path) into the build.
// Usage: node tests/size/callers.mjs target/size-named/named.wat 'regex of a callee' [depth]
import { readFileSync } from "node:fs";
import { demangle } from "./demangle.mjs";
const [file, pattern, depthArg] = process.argv.slice(2);
const depth = Number(depthArg ?? 4);
const text = readFileSync(file, "utf8");
const callers = new Map(); // callee -> Set(caller)
let current = null;
const nameRe = /^\s*\(func \$("[^"]*"|\S+)/;
for (const line of text.split("\n")) {
  const f = line.match(nameRe);
  if (f) { current = f[1].replace(/^"|"$/g, ""); continue; }
  for (const m of line.matchAll(/\((?:call|return_call|ref\.func) \$("[^"]*"|[^\s)]+)/g)) {
    const callee = m[1].replace(/^"|"$/g, "");
    if (!callers.has(callee)) callers.set(callee, new Set());
    callers.get(callee).add(current);
  }
}
const re = new RegExp(pattern);
const short = (n) => demangle(n).replace(/::h[0-9a-f]{16}$/, "").replace(/\[[0-9a-f]{16}\]/g, "").slice(0, 140);
function show(name, level, seen) {
  const set = callers.get(name);
  if (!set || level > depth) return;
  for (const c of set) {
    console.log("  ".repeat(level) + "<- " + short(c));
    if (!seen.has(c)) { seen.add(c); show(c, level + 1, seen); }
  }
}
for (const callee of callers.keys()) if (re.test(demangle(callee))) { console.log(short(callee)); show(callee, 1, new Set([callee])); }
