// Rust's legacy mangling (_ZN…E: length-prefixed segments, a hash last) and a rough reading of v0 (_R…)
export function demangle(raw) {
  if (raw.startsWith("_ZN")) {
    const parts = [];
    let i = 3;
    while (i < raw.length && raw[i] !== "E") {
      const m = raw.slice(i).match(/^(\d+)/);
      if (!m) break;
      i += m[1].length;
      parts.push(raw.slice(i, i + Number(m[1])));
      i += Number(m[1]);
    }
    if (/^h[0-9a-f]{16}$/.test(parts.at(-1) ?? "")) parts.pop();
    const codes = { SP: "@", BP: "*", RF: "&", LT: "<", GT: ">", LP: "(", RP: ")", C: "," };
    return parts.map((p) => p.replace(/^_\$/, "$").replace(/\$([A-Z]+)\$/g, (_, c) => codes[c] ?? "?")
      .replace(/\$u([0-9a-f]+)\$/g, (_, h) => String.fromCodePoint(parseInt(h, 16))).replace(/\.\./g, "::")).join("::");
  }
  if (raw.startsWith("_R")) {
    // v0, roughly: the length-prefixed identifiers in order
    const idents = [];
    let i = 2;
    while (i < raw.length) {
      const skip = raw.slice(i).match(/^[sB][0-9A-Za-z]*_/); // disambiguators and back-references
      const ident = raw.slice(i).match(/^(\d+)_?/);
      if (skip && !/^\d/.test(raw[i])) {
        i += skip[0].length;
      } else if (ident) {
        i += ident[0].length;
        idents.push(raw.slice(i, i + Number(ident[1])));
        i += Number(ident[1]);
      } else {
        i += 1;
      }
    }
    return idents.join("::");
  }
  return raw;
}
