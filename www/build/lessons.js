// Build-time rendering of the lessons (Markdown + TeX): the pages receive HTML, so marked, KaTeX's
// JavaScript and the extension never reach the browser (only KaTeX's CSS and fonts do).
//  - `import html from './x.md?lesson'` → the Markdown rendered by marked + marked-katex-extension;
//  - `import index from 'virtual:challenge-index'` → [{ id, number, title, summary }] of every
//    challenge (what the home page and the challenge navigation need, without any lesson or test).
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Marked } from 'marked';
import markedKatex from 'marked-katex-extension';

// the same options the pages used when they rendered in the browser
export const KATEX_OPTIONS = { throwOnError: false, nonStandard: true, output: 'htmlAndMathml' };

export function renderLesson(markdown) {
  const marked = new Marked();
  marked.use(markedKatex(KATEX_OPTIONS));
  return marked.parse(markdown);
}

const INDEX_ID = 'virtual:challenge-index';

export function lessons({ challengesDir }) {
  return {
    name: 'attention-lab-lessons',
    enforce: 'pre',
    resolveId(id) {
      if (id === INDEX_ID) return `\0${INDEX_ID}`;
    },
    load(id) {
      if (id === `\0${INDEX_ID}`) {
        const folders = readdirSync(challengesDir).filter((f) => /^\d\d-/.test(f)).sort();
        const index = folders.map((id) => {
          const file = join(challengesDir, id, 'tests.json');
          this.addWatchFile(file);
          const { title, summary } = JSON.parse(readFileSync(file, 'utf8'));
          return { id, number: id.slice(0, 2), title, summary };
        });
        return `export default ${JSON.stringify(index)};`;
      }
      const [path, query] = id.split('?');
      if (query === 'lesson' && path.endsWith('.md')) {
        const file = resolve(path);
        this.addWatchFile(file);
        return `export default ${JSON.stringify(renderLesson(readFileSync(file, 'utf8')))};`;
      }
    },
  };
}
