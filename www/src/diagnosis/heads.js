// A head built from another head's inputs (issue 28). When the first wrong step's entry for head h
// is missing and the site that built head h′'s entry of that step built every number of it AGAIN
// after it was complete (before head h's were due), the code computed head h′'s step a second time
// in head h's place: head h read another head's columns (`dotAt(Q[i], g * d, …)` for `h * d`). The
// step at fault is then the slice that picks a head's columns, not the step whose numbers are
// missing; its line, the call that passed those columns (when the numbers were built inside a
// helper), else the site that rebuilt them.

const isInteger = (x) => Math.abs(x - Math.round(x)) <= 1e-12;
const near = (a, b) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

/** The first moment after `after` at which the site built a number near x: its index, or -1. */
const againAt = (site, x, after) => site.values.findIndex((v, k) => site.moments[k] > after && near(v, x));

/**
 * For the first wrong step `step` (a value step: scores, weights…): { step: 'slice', entry, site, probe }
 * when a head's entry of it is another head's built again; null otherwise. `alignments`: per probe,
 * align.js's entries; `recordings`: per probe; `sites`: the instrumented sites.
 */
export function anotherHead(step, alignments, recordings, sites) {
  for (const [probe, alignment] of alignments.entries()) {
    const missing = alignment.find((e) => e.step === step && e.status === 'missing' && e.head !== null && e.head !== undefined);
    if (!missing) continue;
    const slices = alignment.filter((e) => e.step === 'slice' && e.head === missing.head);
    if (!slices.length || slices.every((e) => e.status === 'ok')) continue;
    for (const other of alignment.filter((e) => e.step === step && e.status === 'ok' && e.head !== missing.head && Number.isInteger(e.site))) {
      const site = recordings[probe].sites[other.site];
      const numbers = other.matrix.flat().filter((x) => Number.isFinite(x) && !isInteger(x));
      const again = numbers.map((x) => againAt(site, x, other.moment));
      if (!numbers.length || again.some((k) => k < 0)) continue;
      const first = again.reduce((a, k) => (site.moments[k] < site.moments[a] ? k : a));
      const caller = site.callers?.[first] ?? -1;
      const at = caller >= 0 && sites[caller]?.fn !== sites[other.site]?.fn ? caller : other.site;
      return { step: 'slice', entry: slices.find((e) => e.status !== 'ok'), site: at, probe };
    }
  }
  return null;
}
