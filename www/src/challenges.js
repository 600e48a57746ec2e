// The challenges, read at build time from ../../challenges/*: README, starter, solution, tests.
const readmes = import.meta.glob('../../challenges/*/README.md', { query: '?raw', import: 'default', eager: true });
const starters = import.meta.glob('../../challenges/*/starter.js', { query: '?raw', import: 'default', eager: true });
const solutions = import.meta.glob('../../challenges/*/solution.js', { query: '?raw', import: 'default', eager: true });
const tests = import.meta.glob('../../challenges/*/tests.json', { import: 'default', eager: true });

const folderOf = (path) => path.split('/').at(-2);

export const CHALLENGES = Object.keys(tests)
  .map((path) => {
    const id = folderOf(path);
    const base = path.slice(0, path.lastIndexOf('/'));
    const readme = readmes[`${base}/README.md`];
    return {
      id,
      number: id.slice(0, 2),
      title: tests[path].title,
      summary: tests[path].summary,
      readme,
      starter: starters[`${base}/starter.js`],
      solution: solutions[`${base}/solution.js`],
      tests: tests[path],
    };
  })
  .sort((a, b) => a.id.localeCompare(b.id));

export const challengeById = (id) => CHALLENGES.find((c) => c.id === id);
