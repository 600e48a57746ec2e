// Runs the learner's code, away from the page: no DOM, no localStorage, and (by this file's
// Content-Security-Policy, see vite.config.js) no network. The page terminates this worker
// after 2 s. Messages: in { code, functionName, cases: [{ id, args }] };
// out { type: 'syntax' | 'load-error' | 'missing' | 'done', … }; with `deep: true` in the first
// message, outputs may be nested objects (challenge 10's weights). After a 'done', the page may send
// { probes: [{ id, args, function? }] }: more calls of the same function, or of the export `function`
// names (challenge 11's nameHeads) (the diagnosis's probe inputs, see diagnosis/locate.js; the model checks), answered { type: 'done', results } under a fresh 2 s limit; or { trace: [{ id, args }] }:
// the same code (or `code`, when given) instrumented (diagnosis/instrument.js) and run on those calls, answered
// { type: 'done', traced: { sites, bodyLines, results } } (the numbers it built, by line); or { repair: { cases, near } }:
// every one-edit variant of the code (diagnosis/repair.js) run on the judged cases, answered
// { type: 'done', repair: { lines, tried, passed, complete } } (the lines one edit makes right; the page and the
// terminal give this message cases.js's REPAIR_TIME_LIMIT_MS, 5 s).
import { REMOVED, lineOf, toScript } from './script.js';
import { runTraced } from './diagnosis/instrument.js';
import { repairLines } from './diagnosis/repair.js';
import { judge } from './cases.js';

const post = self.postMessage.bind(self);
for (const name of REMOVED) {
  try {
    Object.defineProperty(self, name, { value: undefined, configurable: false, writable: false });
  } catch { /* still shadowed below */ }
}

// Outputs and messages are capped here, in the worker, so a huge result (say 10 MB) never
// reaches the page: the challenges' matrices are at most a few dozen rows and columns.
const MAX_ROWS = 64;
const MAX_COLUMNS = 64;
const MAX_TEXT = 300;

/** `text`, cut to MAX_TEXT characters with a note of its full length. */
function short(text) {
  const s = String(text);
  return s.length <= MAX_TEXT ? s : `${s.slice(0, MAX_TEXT)}… (cut: ${s.length.toLocaleString('en')} characters in all)`;
}

function describeError(error) {
  if (error instanceof Error) return { name: short(error.name).slice(0, 60), message: short(error.message), ...lineOf(error) };
  return { name: 'thrown value', message: short(`your code threw ${typeof error === 'string' ? JSON.stringify(error) : String(error)}`) };
}

/** Only plain data goes back to the page: numbers stay numbers, anything else is described. */
function plain(value, depth = 0) {
  if (typeof value === 'number') return value;
  if (Array.isArray(value) && depth < 2) {
    const limit = depth === 0 ? MAX_ROWS : MAX_COLUMNS;
    if (value.length > limit) {
      const what = depth === 0 ? `an array of ${value.length.toLocaleString('en')} rows` : `a row of ${value.length.toLocaleString('en')} entries`;
      return { unexpected: `${what}: too large to show (the expected result is a small matrix)` };
    }
    return value.map((v) => plain(v, depth + 1));
  }
  if (value === undefined) return { unexpected: 'undefined' };
  if (value === null) return { unexpected: 'null' };
  return { unexpected: Array.isArray(value) ? 'a nested array' : typeof value === 'object' ? 'an object' : `a ${typeof value} (${String(value).slice(0, 40)}${typeof value === 'string' && value.length > 40 ? `… ${value.length.toLocaleString('en')} characters` : ''})` };
}

// Challenge 10 returns the weights of a model ({ W_U, layers: [{ W_Q, … }] }): with `deep`, plain
// data of any nesting goes back, capped at MAX_NUMBERS numbers in all.
const MAX_NUMBERS = 200_000;

/** Numbers, arrays and plain objects, copied; anything else described. */
function plainDeep(value, budget = { left: MAX_NUMBERS }, depth = 0) {
  if (typeof value === 'number') {
    budget.left--;
    return value;
  }
  if (budget.left <= 0) return { unexpected: `more than ${MAX_NUMBERS.toLocaleString('en')} numbers in all: too large` };
  if (depth > 6) return { unexpected: 'nested too deeply' };
  if (Array.isArray(value)) return value.map((v) => plainDeep(v, budget, depth + 1));
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.keys(value).slice(0, 64).map((k) => [k, plainDeep(value[k], budget, depth + 1)]));
  }
  return plain(value, 2);
}

let learnerFunction = null;
let learnerCode = null;
let learnerName = null;
let learnerExports = {};
let deepOutputs = false;

/** Runs the calls; a call may name another export of the learner's module (`function`, challenge 11's nameHeads): its output is plain data of any nesting. */
function runCases(fn, cases) {
  return cases.map(({ id, args, function: name }) => {
    try {
      if (name !== undefined) {
        const other = learnerExports[name];
        if (typeof other !== 'function') return { id, error: { name: 'Error', message: `your code does not export a function named ${name} (write: export function ${name}(…) { … })` } };
        return { id, output: plainDeep(other(...args)) };
      }
      return { id, output: deepOutputs ? plainDeep(fn(...args)) : plain(fn(...args)) };
    } catch (error) {
      return { id, error: describeError(error) };
    }
  });
}

/** Runs `body` with the console's printing methods silenced, and restores them. */
function quietly(body) {
  const names = ['log', 'info', 'warn', 'error', 'debug', 'trace', 'dir', 'dirxml', 'table', 'group', 'groupCollapsed', 'groupEnd', 'count', 'time', 'timeEnd', 'timeLog', 'assert'];
  const saved = names.map((name) => [name, console[name]]);
  for (const name of names) console[name] = () => {};
  try {
    return body();
  } finally {
    for (const [name, method] of saved) console[name] = method;
  }
}

self.onmessage = ({ data: { code, functionName, cases, probes, trace, repair, deep = false } }) => {
  if (repair) {
    // the diagnosis's repairs (diagnosis/repair.js): one-edit variants of the code, run on the cases
    const load = (script) => (0, eval)(script);
    post(learnerFunction ? { type: 'done', repair: quietly(() => repairLines(learnerCode, learnerName, repair.cases, { load, toScript, judge, near: repair.near })) } : { type: 'missing', message: 'no function loaded' });
    return;
  }
  if (trace) {
    // the diagnosis's traced probes: the same code, instrumented (diagnosis/instrument.js)
    // It runs the learner's code a second time (the module too), only to read its numbers: what it prints
    // was already shown by the real run, so the console is quiet meanwhile (else every line printed twice).
    const load = (script) => (0, eval)(script);
    // (`code` with a trace: other code of the same function, the learner's with one edit: diagnosis/repair.js)
    post(learnerFunction ? { type: 'done', traced: quietly(() => runTraced(code ?? learnerCode, learnerName, trace, { load, toScript, lineOf })) } : { type: 'missing', message: 'no function loaded' });
    return;
  }
  if (probes) {
    post(learnerFunction ? { type: 'done', results: runCases(learnerFunction, probes) } : { type: 'missing', message: 'no function loaded' });
    return;
  }
  let script;
  try {
    script = toScript(code);
  } catch (error) {
    const loc = error.loc ?? {};
    post({ type: 'syntax', message: error.message.replace(/ \(\d+:\d+\)$/, ''), line: loc.line, column: loc.column === undefined ? undefined : loc.column + 1 });
    return;
  }
  let exportsOfCode;
  try {
    exportsOfCode = (0, eval)(script)();
  } catch (error) {
    post({ type: error instanceof SyntaxError && !lineOf(error).line ? 'syntax' : 'load-error', ...describeError(error) });
    return;
  }
  const fn = exportsOfCode[functionName] ?? exportsOfCode.default;
  if (typeof fn !== 'function') {
    post({ type: 'missing', message: `your code does not export a function named ${functionName} (write: export function ${functionName}(…) { … })` });
    return;
  }
  learnerFunction = fn;
  learnerExports = exportsOfCode;
  learnerCode = code;
  learnerName = functionName;
  deepOutputs = deep;
  post({ type: 'done', results: runCases(fn, cases) });
};
