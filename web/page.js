// What the page's panels share: the worker (engine), the one state object they all draw from, the
// notices and the status line, the run and its one count, the redraw throttle, the queue of input
// changes, and the full redraw (web/app.js registers it at boot, so a panel asks for it without
// importing the shell).

import { EngineClient } from './lib/rpc.js';
import { h, mount, $ } from './lib/dom.js';
import { runScope, countGraded } from './lib/run.js';

export const engine = new EngineClient(new URL('./worker/main.js', import.meta.url));
// Tests drive the worker directly with ?debug=1; nothing else is exposed.
if (new URLSearchParams(location.search).get('debug') === '1') globalThis.__rocketjudgeEngine = engine;

export const state = {
  manifest: [],
  judge: null, // {name, backend, why, answerTokens, model} (the token ids stay off screen)
  loading: null, // {phase, done, total}
  benchmark: null, // {name, queries, problems}
  responses: [], // [{file, model, format, records, problems}]
  // What the worker says is graded (it keeps the judgments): {judge, responses: [{model_test,
  // session_id}]} for the loaded judge, else the one with the most grades; and the responses it has
  // left to grade ([{query, response, model}]; null until asked).
  graded: { judge: null, responses: [] },
  pending: null,
  pendingTokens: null, // the tokens the loaded judge runs to grade them (null: not known)
  grading: { running: false, paused: false, done: 0, total: 0, perMinute: null, etaSec: null, errors: [] },
  uploadErrors: { bench: [], responses: [] }, // shown beside the upload control they concern
  run: { order: 'interleaved', until: false }, // how the next run grades (core's schedule), and whether it stops when settled
  settleRule: null, // core's rule for a settled ranking ({level, minQueries}), read at boot
  standing: null, // the live leaderboard of the loaded judge's grades of this run (core's settle)
  pace: null, // seconds per response this judge took on this device (the last run's)
  secsPerToken: null, // and seconds per token it runs (its prompts and items), the same run's
  reference: null, // {name, entries}
  notices: [],
  gpu: null, // {available, name, f16}
  selectedModel: null, // the judge this browser loaded last (restored at boot): the model list's first choice
  engine: null, // {threads, cores, threadsWhy, cpuKernels, isolated}
};

/** A message in the status area; `holds` (optional): while it returns true the message is still
 * true, and once it does not the message goes at the next redraw. */
export function notice(text, kind = 'info', holds = null) {
  // The same message again replaces its older copy instead of stacking.
  state.notices = state.notices.filter((n) => n.text !== text);
  state.notices.push({ text, kind, at: Date.now(), holds });
  state.notices = state.notices.slice(-4);
  renderStatus();
}

/** Drop the notices of `kind` (all when null): they no longer apply. */
export function clearNotices(kind = null) {
  state.notices = state.notices.filter((n) => kind && n.kind !== kind);
  renderStatus();
}

/** The run: every model's responses to queries with a checklist (graded or not), for the live leaderboard. */
export const currentScope = () => runScope(state.benchmark ? state.benchmark.queries : [], state.responses);

/** The run's one count: {graded, total} of its responses (lib/run.js `countGraded`). */
export const gradedCount = () => countGraded(currentScope(), state.graded.responses);

// ------------------------------------------------------------------ status

/** Where a loaded judge runs, in plain words ("the CPU (2 threads)", "the GPU (its name)"); the
 * engine's own description, kernels included, is for a title or a details line. */
export function runsOn(j) {
  const d = j.device || {};
  if (j.backendKind === 'cpu') return `the CPU (${d.threads ?? 1} thread${d.threads === 1 ? '' : 's'})`;
  return `the GPU${d.adapter ? ` (${d.adapter})` : ''}`;
}

/** The CPU engine's kernels in plain words (`kernels`: the engine's name for them, e.g. "int8 wasm
 * relaxed-simd 16-bit runs", shown on hover). */
export function kernelWords(kernels) {
  const what = /^int8/.test(kernels) ? '8-bit integer kernels' : 'floating-point kernels';
  return /simd/.test(kernels) ? `${what} with SIMD` : what;
}

export function renderStatus() {
  const j = state.judge;
  state.notices = state.notices.filter((n) => !n.holds || n.holds());
  mount(
    $('#status'),
    h(
      'span',
      { class: 'badge privacy', title: 'The page may only contact its own origin (Content-Security-Policy).' },
      'Private: nothing leaves this tab',
    ),
    j
      ? h('span', { class: 'badge', title: j.backend }, `judge: ${j.name} on ${runsOn(j)}`)
      : h('span', { class: 'badge muted' }, 'no judge loaded'),
    state.notices.map((n) =>
      h(
        'div',
        { class: `notice ${n.kind}`, role: n.kind === 'error' ? 'alert' : null },
        h('span', {}, n.text),
        h(
          'button',
          {
            class: 'dismiss',
            'aria-label': 'Dismiss this message',
            title: 'Dismiss',
            onclick: () => {
              state.notices = state.notices.filter((x) => x !== n);
              renderStatus();
            },
          },
          '×',
        ),
      ),
    ),
  );
}

// ------------------------------------------------------------------ redraws

const timers = {};
export function throttle(name, fn, ms = 150) {
  if (timers[name]) return;
  timers[name] = setTimeout(() => {
    timers[name] = null;
    fn();
  }, ms);
}

// Changes to the inputs (benchmark, responses) run one after another, in the order the user made
// them: responses are matched to the benchmark's queries, so a response file chosen while the
// benchmark is still being read waits for it instead of being refused.
let inputsDone = Promise.resolve();
export function inOrder(fn) {
  return (...args) => {
    inputsDone = inputsDone.then(() => fn(...args)).catch((e) => notice(e.message, 'error'));
    return inputsDone;
  };
}

let drawAll = () => {};

/** The shell's full redraw (web/app.js `renderAll`), registered once at boot. */
export function onRenderAll(fn) {
  drawAll = fn;
}

/** Everything drawn again, after asking the worker what is graded (the shell's `renderAll`). */
export function renderAll() {
  return drawAll();
}
