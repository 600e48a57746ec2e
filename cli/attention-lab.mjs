#!/usr/bin/env node
// `attention-lab`: the course from a terminal, with the site's tests and diagnosis.
//
//   attention-lab list                    the challenges, and whether ./<id>/<function>.js passes
//   attention-lab start <id> [dir]        writes the starter and the lesson (Markdown, TeX as TeX)
//   attention-lab check <id> [file]       runs the challenge's tests on file; on a failure, the diagnosis
//
// Exit status: 0 all pass, 1 something fails (or the code cannot be run), 2 a usage error.
import { parseArgs } from 'node:util';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { CHALLENGES, challengeByName } from './course.mjs';
import { check, DEFAULT_SITE } from './check.mjs';
import { formatCheck, painterFor } from './format.mjs';

const USAGE = `Usage: attention-lab <command> [options]

Commands:
  list                  the challenges, and whether your answer in ./<id>/ passes
  start <id> [dir]      write the starter and the lesson into dir (default ./<id>/); never overwrites
  check <id> [file]     run the challenge's tests on file (default ./<id>/<function>.js)

<id> is 02, 2 or 02-multi-head-attention.

Options:
  --json                print a machine-readable report (check, list)
  --seed <n>            the random cases' seed (check; default: a new one each run)
  --site <url>          the course site for walkthrough links (default ${DEFAULT_SITE}, as \`make start\` serves it)
  -h, --help            this text
  -v, --version         the package version

Exit status: 0 all tests pass, 1 a test fails or the code cannot be run, 2 a usage error.`;

/** A usage error: exit status 2, one line. */
class UsageError extends Error {}

const OPTIONS = {
  json: { type: 'boolean', default: false },
  seed: { type: 'string' },
  site: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
  version: { type: 'boolean', short: 'v', default: false },
};

/** The default answer file of a challenge: ./<id>/<function>.js, as `start` writes it. */
const defaultFile = (challenge) => join(challenge.id, `${challenge.functionName}.js`);

function challengeOf(name) {
  if (name === undefined) throw new UsageError('which challenge? give its id, for example 02 (see `attention-lab list`)');
  const challenge = challengeByName(name);
  if (!challenge) throw new UsageError(`there is no challenge ${JSON.stringify(name)}; the ids are ${CHALLENGES.map((c) => c.number).join(', ')} (or their folder names, see \`attention-lab list\`)`);
  return challenge;
}

function seedOf(text) {
  if (text === undefined) return (Math.random() * 2 ** 32) >>> 0;
  if (!/^\d+$/.test(text) || Number(text) >= 2 ** 32) throw new UsageError(`--seed must be a whole number from 0 to ${2 ** 32 - 1}, not ${JSON.stringify(text)}`);
  return Number(text);
}

function siteOf(text) {
  if (text === undefined) return DEFAULT_SITE;
  try {
    const url = new URL(text);
    if (!/^https?:$/.test(url.protocol)) throw new Error();
    return url.href.endsWith('/') ? url.href : `${url.href}/`;
  } catch {
    throw new UsageError(`--site must be an http(s) address, not ${JSON.stringify(text)}`);
  }
}

/** The learner's file as text; a usage error when it cannot be read. */
function readAnswer(file, challenge) {
  let stats;
  try {
    stats = statSync(file);
  } catch {
    const hint = file === defaultFile(challenge) ? ` (run \`attention-lab start ${challenge.number}\` to create it)` : '';
    throw new UsageError(`cannot read ${file}: no such file${hint}`);
  }
  if (stats.isDirectory()) throw new UsageError(`${file} is a folder; give the file that exports ${challenge.functionName}`);
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${error.code ?? error.message}`);
  }
}

/** JSON for the reports: NaN and ±Infinity (JSON has neither) as the strings "NaN", "Infinity", "-Infinity". */
const toJson = (value) => JSON.stringify(value, (_key, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v), 2);
const print = (lines) => process.stdout.write(`${[lines].flat().join('\n')}\n`);
// Wrapped to the terminal; piped (a file, a grader), every line whole.
const width = () => (process.stdout.isTTY ? Math.max(40, Math.min(process.stdout.columns || 80, 120)) : Infinity);

async function commandCheck([name, file, ...rest], options) {
  if (rest.length) throw new UsageError(`check takes a challenge and a file, not ${rest.length + 2} arguments`);
  const challenge = challengeOf(name);
  const path = file ?? defaultFile(challenge);
  const seed = seedOf(options.seed);
  const site = siteOf(options.site);
  const code = readAnswer(path, challenge);
  const report = await check({ challenge, code, file: path, seed, site });
  if (options.json) print(toJson(report));
  else print(formatCheck(report, { paint: painterFor(process.stdout), width: width() }));
  return report.status === 'pass' ? 0 : 1;
}

async function commandList(args, options) {
  if (args.length) throw new UsageError('list takes no arguments');
  const paint = painterFor(process.stdout);
  const rows = [];
  for (const challenge of CHALLENGES) {
    const file = defaultFile(challenge);
    const row = { id: challenge.id, number: challenge.number, title: challenge.title, summary: challenge.summary, function: challenge.functionName, file: null, status: null, passed: null, total: null };
    if (existsSync(file) && statSync(file).isFile()) {
      const report = await check({ challenge, code: readFileSync(file, 'utf8'), file, seed: seedOf(options.seed) });
      Object.assign(row, { file, status: report.status, passed: report.passed, total: report.total });
    }
    rows.push(row);
  }
  if (options.json) {
    print(toJson({ challenges: rows }));
    return 0;
  }
  const titleWidth = Math.max(...rows.map((r) => r.title.length));
  print(rows.map((r) => {
    const state = r.status === null ? paint('dim', 'not started')
      : r.status === 'pass' ? paint('green', `✓ passes (${r.file})`)
        : paint('red', `✗ ${r.status === 'fail' ? `${r.passed} of ${r.total} pass` : r.status} (${r.file})`);
    return `${paint('bold', r.number)}  ${r.title.padEnd(titleWidth)}  ${state}`;
  }));
  print(paint('dim', '\nStart one with `attention-lab start <id>`; check it with `attention-lab check <id>`.'));
  return 0;
}

function commandStart([name, dir, ...rest], options) {
  if (rest.length) throw new UsageError(`start takes a challenge and a folder, not ${rest.length + 2} arguments`);
  const challenge = challengeOf(name);
  const folder = dir ?? challenge.id;
  if (existsSync(folder) && !statSync(folder).isDirectory()) throw new UsageError(`${folder} exists and is not a folder`);
  mkdirSync(folder, { recursive: true });
  const files = [
    { path: join(folder, `${challenge.functionName}.js`), text: challenge.starter, what: 'the starter: write your answer here' },
    { path: join(folder, `${challenge.id}.md`), text: challenge.readme, what: 'the lesson, Markdown with TeX math' },
  ];
  const written = files.map(({ path, text, what }) => {
    try {
      writeFileSync(path, text, { flag: 'wx' });
      return { path, what, written: true };
    } catch (error) {
      if (error.code === 'EEXIST') return { path, what, written: false };
      throw new UsageError(`cannot write ${path}: ${error.code ?? error.message}`);
    }
  });
  const answer = files[0].path;
  if (options.json) {
    print(toJson({ challenge: challenge.id, files: written }));
    return 0;
  }
  const paint = painterFor(process.stdout);
  print(written.map((f) => (f.written ? `${paint('green', 'wrote')} ${f.path} (${f.what})` : `${paint('yellow', 'kept ')} ${f.path}: it exists, and start never overwrites`)));
  const checkArgs = answer === defaultFile(challenge) ? challenge.number : `${challenge.number} ${relative('.', answer)}`;
  print(`\nChallenge ${challenge.number} · ${challenge.title}\nWhen ready: npx attention-lab check ${checkArgs}`);
  return 0;
}

const COMMANDS = { check: commandCheck, list: commandList, start: commandStart };

async function main(argv) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error.message.split('\n')[0].replace(/\. To specify a positional argument.*$/, ''));
  }
  const { values: options, positionals: [command, ...args] } = parsed;
  if (options.help) {
    print(USAGE);
    return 0;
  }
  if (options.version) {
    print(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version);
    return 0;
  }
  if (!command) throw new UsageError('which command? list, start or check');
  const run = COMMANDS[command];
  if (!run) throw new UsageError(`unknown command ${JSON.stringify(command)}; the commands are list, start and check`);
  if (options.seed !== undefined && command === 'start') throw new UsageError('--seed is for check and list');
  return run(args, options);
}

const json = process.argv.includes('--json');
try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  if (json) print(toJson({ error: { type: 'usage', message: error.message } }));
  process.stderr.write(`attention-lab: ${error.message}\nRun \`attention-lab --help\` for usage.\n`);
  process.exitCode = 2;
}
