// The worker protocol (web/protocol.js) against both sides: every request is answered by the module
// the protocol names and by no other; every event the worker posts and every event, request and core
// call the page uses is listed; nothing listed is unused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { REQUESTS, EVENTS, SIGNALS, CORE_CALLS, refusal } from '../../web/protocol.js';

const root = new URL('../../', import.meta.url);
const read = (rel) => readFileSync(new URL(rel, root), 'utf8');
const jsIn = (dir) =>
  readdirSync(new URL(dir, root))
    .filter((f) => f.endsWith('.js'))
    .map((f) => `${dir}${f}`);
const workerFiles = jsIn('web/worker/');
// The page's modules: web/ and its folders but the worker's and the vendored libraries'.
const pageFiles = readdirSync(new URL('web/', root), { recursive: true })
  .filter((f) => f.endsWith('.js') && !/^(worker|vendor)\//.test(f))
  .map((f) => `web/${f}`);
const testFiles = jsIn('tests/browser/').concat(
  readdirSync(new URL('tests/browser/', root))
    .filter((f) => f.endsWith('.mjs'))
    .map((f) => `tests/browser/${f}`),
);
const matches = (files, re) => new Set(files.flatMap((f) => [...read(f).matchAll(re)].map((m) => m[1])));

test('every request is answered by the worker module the protocol names, and no module answers another', async () => {
  const modules = new Set(Object.values(REQUESTS).map((r) => r.module));
  for (const module of modules) {
    const { handlers } = await import(new URL(`web/worker/${module}.js`, root));
    const listed = Object.keys(REQUESTS).filter((t) => REQUESTS[t].module === module);
    assert.deepEqual(Object.keys(handlers).sort(), listed.sort(), `web/worker/${module}.js`);
    for (const t of listed) assert.equal(typeof handlers[t], 'function', `${module}.${t}`);
  }
  // Every worker module with requests is in the protocol.
  for (const f of workerFiles) {
    if (/^export const handlers/m.test(read(f))) assert.ok(modules.has(f.slice('web/worker/'.length, -3)), f);
  }
});

test('the worker posts only listed events, and every listed event is posted', () => {
  const posted = matches(workerFiles, /post\(\{\s*type: '([a-z-]+)'/g);
  // Load progress goes out under the type its caller names.
  for (const t of matches(workerFiles, /loadFrom\([^)]*'([a-z-]+)'\)/g)) posted.add(t);
  assert.deepEqual([...posted].sort(), Object.keys(EVENTS).sort());
});

test('the page uses only listed requests, events and core calls', () => {
  for (const t of matches(pageFiles, /\.request\(\s*'([a-zA-Z]+)'/g)) assert.ok(t in REQUESTS, `request ${t}`);
  for (const t of matches(pageFiles, /\.on\(\s*'([a-z-]+)'/g)) assert.ok(t in EVENTS, `event ${t}`);
  // Every name quoted in a signal call's argument (`signal(g.paused ? 'pause' : 'resume')` included).
  const signalled = [...matches(pageFiles, /\.signal\(([^)]*)\)/g)].flatMap((a) =>
    [...a.matchAll(/'(\w+)'/g)].map((m) => m[1]),
  );
  assert.deepEqual([...new Set(signalled)].sort(), ['cancel', 'pause', 'resume', 'untilDone', 'untilSettled']);
  for (const t of signalled) assert.ok(SIGNALS.includes(t), `signal ${t}`);
  const core = matches(pageFiles, /\.core\(\s*'([a-zA-Z]+)'/g);
  for (const t of core) assert.ok(CORE_CALLS.includes(t), `core call ${t}`);
  // Each core call is used by the page or a browser test (which may reach it by a variable name).
  const tests = testFiles.map(read).join('\n');
  for (const fn of CORE_CALLS) assert.ok(core.has(fn) || tests.includes(`'${fn}'`), `core call ${fn} is unused`);
});

test('the page refuses what the protocol does not list', () => {
  assert.equal(refusal('request', 'grade'), null);
  assert.match(refusal('request', 'gradeAll'), /unknown request gradeAll/);
  assert.match(refusal('core', 'rank'), /unknown engine call rank/);
  assert.equal(refusal('core', 'parseQueries'), null);
  assert.match(refusal('event', 'gradeed'), /unknown event/);
  assert.match(refusal('signal', 'stop'), /unknown signal/);
});
