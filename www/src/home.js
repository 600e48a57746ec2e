// Home page: links to the walkthrough and every challenge, with progress from localStorage.
import { progress, el } from './common.js';
import { CHALLENGES } from './challenges.js';

const list = document.getElementById('challenge-list');
const summary = document.getElementById('progress-summary');

function render() {
  list.replaceChildren(...CHALLENGES.map((c) => {
    const solved = progress.solved(c.id);
    const state = solved ? 'solved' : progress.attempted(c.id) ? 'attempted' : 'not started';
    return el('li', { class: `challenge-item ${solved ? 'is-solved' : ''}`, 'data-challenge': c.id },
      el('a', { href: `./challenge.html?id=${c.id}` }, `${c.number} · ${c.title}`),
      el('span', { class: `state state-${state.replace(' ', '-')}`, 'data-state': state }, solved ? '✓ solved' : state),
      el('p', { class: 'summary' }, c.summary));
  }));
  const solved = CHALLENGES.filter((c) => progress.solved(c.id)).length;
  summary.textContent = `${solved} of ${CHALLENGES.length} challenges solved.`;
}

document.getElementById('reset-progress').addEventListener('click', () => {
  progress.reset();
  render();
  document.getElementById('reset-status').textContent = 'Progress cleared.';
});

render();
