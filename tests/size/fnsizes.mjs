// Per-function code sizes of a .wasm from its code section and its name section (no dependencies).
// Usage: node tests/size/fnsizes.mjs [file.wasm] [--top N] [--groups]
// Reads target/wasm32-unknown-unknown/release/attention_lab.wasm by default (before wasm-bindgen and
// wasm-opt, where rustc's name section is still present).
import { readFileSync } from "node:fs";
import { demangle } from "./demangle.mjs";

const args = process.argv.slice(2);
const file = args.find((a) => a.endsWith(".wasm")) ?? "target/wasm32-unknown-unknown/release/attention_lab.wasm";
const topIndex = args.indexOf("--top");
const top = topIndex >= 0 ? Number(args[topIndex + 1]) : 40;
const bytes = readFileSync(file);

let pos = 8;
function u32() {
  let result = 0, shift = 0, byte;
  do { byte = bytes[pos++]; result += (byte & 0x7f) * 2 ** shift; shift += 7; } while (byte & 0x80);
  return result;
}
function name() { const n = u32(); const s = bytes.toString("utf8", pos, pos + n); pos += n; return s; }

let importedFunctions = 0;
const bodies = [];
const names = new Map();
const sections = [];
while (pos < bytes.length) {
  const id = bytes[pos++];
  const size = u32();
  const end = pos + size;
  let label = String(id);
  if (id === 2) { // imports: count the functions, which come first in the index space
    const count = u32();
    for (let i = 0; i < count; i++) {
      name(); name();
      const kind = bytes[pos++];
      if (kind === 0) { u32(); importedFunctions++; }
      else if (kind === 1) { pos++; const f = u32(); u32(); if (f & 1) u32(); }
      else if (kind === 2) { const f = u32(); u32(); if (f & 1) u32(); }
      else if (kind === 3) { pos += 2; }
      else if (kind === 4) { pos++; u32(); }
    }
  } else if (id === 10) {
    const count = u32();
    for (let i = 0; i < count; i++) { const n = u32(); bodies.push(n + 1); pos += n; }
  } else if (id === 0) {
    label = name();
    if (label === "name") {
      while (pos < end) {
        const sub = bytes[pos++]; const subSize = u32(); const subEnd = pos + subSize;
        if (sub === 1) { const count = u32(); for (let i = 0; i < count; i++) { const index = u32(); names.set(index, name()); } }
        pos = subEnd;
      }
    }
  }
  sections.push([label, size]);
  pos = end;
}

const functions = bodies.map((size, i) => ({ size, name: demangle(names.get(i + importedFunctions) ?? `func[${i + importedFunctions}]`) }));
functions.sort((a, b) => b.size - a.size);
const codeTotal = functions.reduce((s, f) => s + f.size, 0);
console.log(`${file}: ${bytes.length} bytes; code ${codeTotal} bytes in ${functions.length} functions`);
console.log("sections:", sections.map(([l, s]) => `${l}=${s}`).join(" "));
console.log(`\ntop ${top} functions:`);
for (const f of functions.slice(0, top)) console.log(String(f.size).padStart(7), f.name.slice(0, 150));

// groups by module path (the crate path's first two segments, or a known family)
function group(n) {
  if (/^__wbindgen_describe|WasmDescribe.*::describe|::describe::inform/.test(n)) return "wasm-bindgen descriptors (removed by wasm-bindgen)";
  if (/core::fmt|core::panicking|panic|fmt::|core::str|core::slice::index|core::result::unwrap_failed|core::option::expect/.test(n)) return "core::fmt / str / panics";
  if (/talc/.test(n)) return "talc";
  if (/compiler_builtins/.test(n)) return "compiler_builtins";
  if (/^(alloc|<alloc|<\[|<&)|::alloc::|raw_vec|RawVec/.test(n) && !/attention_lab/.test(n)) return "alloc";
  let m = n.match(/attention_lab::([a-z_]+(?:::[a-z_0-9]+)?)/);
  if (m) { const g = m[1].split("::"); return "attention_lab::" + (["wasm", "layer", "engine"].includes(g[0]) && g[1] ? g.join("::") : g[0]); }
  m = n.match(/^<?([a-z_][a-z0-9_]*)/);
  return m ? m[1] : "(other)";
}
if (args.includes("--groups")) {
  const sums = new Map();
  for (const f of functions) { const g = group(f.name); const e = sums.get(g) ?? { size: 0, n: 0 }; e.size += f.size; e.n++; sums.set(g, e); }
  console.log("\ngroups:");
  for (const [g, e] of [...sums].sort((a, b) => b[1].size - a[1].size).slice(0, 40)) console.log(String(e.size).padStart(7), String(e.n).padStart(4), g);
}
