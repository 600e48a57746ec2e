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
    const idents = [];
    const re = /(\d+)_?([A-Za-z_][A-Za-z0-9_]*)/g;
    let m;
    while ((m = re.exec(raw.slice(2)))) {
      const n = Number(m[1]);
      const id = m[2].slice(0, n);
      if (!/^Cs/.test(raw.slice(2).slice(m.index - 2, m.index)) || true) idents.push(id);
      re.lastIndex = m.index + m[1].length + (m[0].length - m[1].length - m[2].length) + n;
    }
    return idents.filter((s) => !/^[A-Za-z0-9]{11,}$/.test(s) || /[a-z]_/.test(s)).join("::");
  }
  return raw;
}
