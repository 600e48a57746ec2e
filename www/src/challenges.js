// The challenges, read at build time from ../../challenges/*. The index (id, number, title,
// summary) is all the home page and the navigation need; a challenge page loads only its own
// lesson (rendered to HTML at build time, KaTeX included: build/lessons.js), starter, solution and tests.
import INDEX from 'virtual:challenge-index';

const lessons = import.meta.glob('../../challenges/*/README.md', { query: '?lesson', import: 'default' });
const starters = import.meta.glob('../../challenges/*/starter.js', { query: '?raw', import: 'default' });
const solutions = import.meta.glob('../../challenges/*/solution.js', { query: '?raw', import: 'default' });
const tests = import.meta.glob('../../challenges/*/tests.json', { import: 'default' });
// the traced probe inputs of the first-wrong-line diagnosis (diagnosis/first-line.js); challenge 10 has none
const diagnoses = import.meta.glob('../../challenges/*/diagnosis.json', { import: 'default' });

/** [{ id, number, title, summary }], in order. */
export const CHALLENGES = INDEX;

/** The whole challenge `id` ({ …index entry, lesson (HTML), starter, solution, tests, diagnosis (or null) }), or undefined. */
export async function loadChallenge(id) {
  const entry = CHALLENGES.find((c) => c.id === id);
  if (!entry) return undefined;
  const base = `../../challenges/${id}`;
  const [lesson, starter, solution, testsOf, diagnosis] = await Promise.all([
    lessons[`${base}/README.md`](), starters[`${base}/starter.js`](), solutions[`${base}/solution.js`](), tests[`${base}/tests.json`](),
    diagnoses[`${base}/diagnosis.json`]?.() ?? null,
  ]);
  return { ...entry, lesson, starter, solution, tests: testsOf, diagnosis };
}
