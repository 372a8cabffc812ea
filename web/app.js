// The page: state, panels and wiring. All computation happens in the worker (engine, parsing,
// statistics); this file only keeps state and renders it. Text from files is always rendered as text.

import { EngineClient } from './lib/rpc.js';
import { h, mount, $, fmt, bytes, duration, messagesBeside } from './lib/dom.js';
import * as db from './lib/db.js';
import { renderResults } from './views.js';
import { wantedThreads, saveThreads } from './lib/threads.js';
import { readManifest, modelSource, splitHash, recommendedModel as recommendedIn } from './lib/manifest.js';
import { readUpload, plainError, UploadError } from './lib/upload.js';
import { runScope, gradableJobs, candidates } from './lib/run.js';

const engine = new EngineClient(new URL('./worker/main.js', import.meta.url));
// Tests drive the worker directly with ?debug=1; nothing else is exposed.
if (new URLSearchParams(location.search).get('debug') === '1') globalThis.__rocketjudgeEngine = engine;

const state = {
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
  grading: { running: false, paused: false, done: 0, total: 0, perMinute: null, etaSec: null, errors: [] },
  uploadErrors: { bench: [], responses: [] }, // shown beside the upload control they concern
  run: { order: 'interleaved', until: false }, // how the next run grades (core's schedule), and whether it stops when settled
  standing: null, // the live leaderboard of the loaded judge's grades of this run (core's settle)
  pace: null, // seconds per response this judge took on this device (the last run's)
  reference: null, // {name, entries}
  notices: [],
  gpu: null, // {available, name, f16}
  selectedModel: null, // the judge this browser loaded last (restored at boot): the model list's first choice
  engine: null, // {threads, cores, threadsWhy, cpuKernels, isolated}
};

function notice(text, kind = 'info') {
  // The same message again replaces its older copy instead of stacking.
  state.notices = state.notices.filter((n) => n.text !== text);
  state.notices.push({ text, kind, at: Date.now() });
  state.notices = state.notices.slice(-4);
  renderStatus();
}

/** Drop the notices of `kind` (all when null): they no longer apply. */
function clearNotices(kind = null) {
  state.notices = state.notices.filter((n) => kind && n.kind !== kind);
  renderStatus();
}

// ------------------------------------------------------------------ status

function renderStatus() {
  const j = state.judge;
  mount(
    $('#status'),
    h(
      'span',
      { class: 'badge privacy', title: 'The page may only contact its own origin (Content-Security-Policy).' },
      'Private: nothing leaves this tab',
    ),
    j
      ? h('span', { class: 'badge' }, `judge: ${j.name} on ${j.backend}`)
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

// ------------------------------------------------------------------ 1. judge

/** The manifest's recommended judge for this device (its `role`): where a hardware GPU runs WebGPU, else on the CPU. */
function recommendedModel() {
  return recommendedIn(state.manifest, !!(state.gpu && state.gpu.hardware));
}

/**
 * The judge card's controls, made the first time the card is drawn and kept from then on: a redraw
 * (a download's progress, an upload, a failed load) never replaces the model, backend or precision
 * chosen, a file picked, a URL half typed, or the control the user is typing in. What changes is
 * drawn in the card's live parts between them (`about`, `progress`).
 */
let judgeCard = null;

function judgeControls() {
  if (judgeCard) return judgeCard;
  // The choice this browser kept (boot), else the model recommended here.
  const chosen = state.selectedModel || recommendedModel();
  const select = h(
    'select',
    { id: 'model-select', 'aria-label': 'Judge model' },
    state.manifest.map((m) =>
      h(
        'option',
        { value: m.name, selected: m.name === chosen },
        `${m.display} — ${bytes(m.size)}${m.name === recommendedModel() ? ' (recommended here)' : ''}`,
      ),
    ),
    h('option', { value: '__file' }, 'A GGUF file on this computer…'),
    h('option', { value: '__url' }, 'A GGUF at a URL…'),
  );
  const fileInput = h('input', {
    type: 'file',
    accept: '.gguf',
    id: 'model-file',
    hidden: true,
    'aria-label': 'GGUF file',
  });
  const urlInput = h('input', {
    type: 'url',
    id: 'model-url',
    placeholder: 'https://…/model.gguf#sha256=… (the host must be allowed by the page policy)',
    hidden: true,
    size: 48,
    'aria-label': 'GGUF URL',
  });
  const backendSel = h(
    'select',
    { id: 'backend-select', 'aria-label': 'Backend' },
    h('option', { value: 'auto' }, 'GPU (WebGPU) if there is one, else CPU'),
    h('option', { value: 'cpu' }, 'CPU'),
    h('option', { value: 'webgpu' }, 'WebGPU, even on a software adapter'),
  );
  const precisionSel = h(
    'select',
    {
      id: 'precision-select',
      'aria-label': 'CPU products',
      title: 'How the CPU engine multiplies: 8-bit integers as llama.cpp (faster), or f32',
    },
    h('option', { value: 'int8' }, 'CPU: 8-bit integer products (as llama.cpp)'),
    h('option', { value: 'f32' }, 'CPU: f32 products'),
  );
  const button = h('button', {
    id: 'load-judge',
    class: 'primary',
    onclick: () => loadJudge(select.value, fileInput.files[0], urlInput.value, backendSel.value, precisionSel.value),
  });
  select.addEventListener('change', () => {
    state.judgeError = null; // about the previous choice
    fileInput.hidden = select.value !== '__file';
    urlInput.hidden = select.value !== '__url';
    renderJudge();
  });
  judgeCard = { select, button, about: h('div'), progress: h('div') };
  mount(
    $('#judge'),
    h('div', { class: 'row' }, select, fileInput, urlInput, backendSel, precisionSel, button),
    judgeCard.about,
    renderThreads(),
    judgeCard.progress,
    h('details', { class: 'cached' }, h('summary', {}, 'Cached models'), h('div', { id: 'cached-list' }, '…')),
  );
  return judgeCard;
}

function renderJudge() {
  const { select, button, about, progress } = judgeControls();
  const l = state.loading;
  button.disabled = !!l;
  button.textContent = state.judge ? 'Load another judge' : 'Load judge';
  const selected = state.manifest.find((m) => m.name === select.value);
  mount(
    about,
    messagesBeside('judge-error', state.judgeError),
    selected
      ? h(
          'p',
          { class: 'hint' },
          selected.role.charAt(0).toUpperCase() + selected.role.slice(1),
          '. ',
          `SHA-256 ${selected.sha256.slice(0, 12)}… is checked after download; the model is then cached in this browser.`,
        )
      : null,
    h('p', { class: 'hint', id: 'gpu-info' }, gpuLine()),
  );
  mount(
    progress,
    l
      ? h(
          'div',
          { class: 'progress-block' },
          h(
            'label',
            { for: 'load-progress' },
            l.phase === 'download'
              ? `Downloading ${bytes(l.done)} of ${bytes(l.total)}`
              : `Loading weights ${bytes(l.done)} of ${bytes(l.total)}`,
          ),
          h('progress', { id: 'load-progress', max: l.total || 1, value: l.done }),
        )
      : null,
    state.judge
      ? h(
          'div',
          { class: 'judge-info' },
          h('strong', {}, state.judge.name),
          ` · ${state.judge.model.architecture} · ${state.judge.backend}`,
          h('div', { class: 'hint' }, `Backend: ${state.judge.why}.`),
        )
      : null,
  );
  // The list changes when a load ends, not with each step of its progress.
  if (!l) renderCached();
}

function gpuLine() {
  const g = state.gpu;
  if (!g) return 'Checking WebGPU…';
  if (!g.available) return `No WebGPU: ${g.why}. The CPU engine runs instead.`;
  if (!g.hardware)
    return `WebGPU: ${g.name} is a software adapter (the CPU drawing for a missing GPU), slower than the CPU engine, so the CPU engine runs and the 0.5B judge is recommended. Choose "WebGPU, even on a software adapter" to try it anyway.`;
  return `WebGPU: ${g.name}${g.f16 ? ', shader-f16' : ', no shader-f16'}.`;
}

/** The CPU engine's threads: how many run, why, and a selector (applies after a reload). */
function renderThreads() {
  const e = state.engine;
  if (!e) return null;
  const select = h(
    'select',
    { id: 'threads-select', 'aria-label': 'CPU threads' },
    Array.from({ length: e.cores }, (_, i) => i + 1).map((n) =>
      h('option', { value: n, selected: n === wantedThreads() }, `${n}`),
    ),
  );
  select.addEventListener('change', () => {
    // A new thread count restarts the engine, by reloading the page (everything graded is stored).
    saveThreads(select.value);
    notice('Restarting the engine with the new thread count; everything graded is kept.');
    location.reload();
  });
  const running = e.threads > 1 ? `${e.threads} threads` : `1 thread (${e.threadsWhy})`;
  return h(
    'p',
    { class: 'hint', id: 'threads-info' },
    `CPU engine: ${running}, ${e.cpuKernels}. Threads: `,
    select,
    ` of ${e.cores} cores.`,
  );
}

async function renderCached() {
  const list = await engine.request('cachedModels').catch(() => []);
  const el = $('#cached-list');
  if (!el) return;
  mount(
    el,
    list.length
      ? h(
          'ul',
          {},
          list.map((m) =>
            h(
              'li',
              {},
              `${m.key} ${m.size ? bytes(m.size) : ''} `,
              h(
                'button',
                {
                  class: 'link',
                  onclick: async () => {
                    await engine.request('removeModel', { key: m.key });
                    notice(`Removed ${m.key} from this browser.`);
                    renderCached();
                  },
                },
                'remove',
              ),
            ),
          ),
        )
      : 'None yet.',
  );
}

/** A judge-card problem, said beside the Load button (kept in the state: the card is redrawn). */
function judgeError(text) {
  state.judgeError = text;
  renderJudge();
}

async function loadJudge(choice, file, url, backend, precision = 'int8') {
  let source;
  state.judgeError = null;
  if (choice === '__file') {
    if (!file) return judgeError('Choose a .gguf file first.');
    source = { file };
  } else if (choice === '__url') {
    if (!url) return judgeError('Enter a model URL first.');
    let u;
    try {
      u = splitHash(new URL(url, location.href).href);
    } catch (e) {
      return judgeError(`That is not a usable model URL: ${e.message}.`);
    }
    source = { key: `url-${await shortHash(u.url)}`, urls: [u.url], sha256: u.sha256 };
    if (!u.sha256)
      notice(
        'This URL names no SHA-256, so the model’s integrity cannot be checked: add #sha256= and the model’s 64-digit SHA-256 to the URL, as the command line takes it.',
      );
  } else {
    source = modelSource(state.manifest.find((x) => x.name === choice));
  }
  state.loading = { phase: 'download', done: 0, total: source.size || 0 };
  renderJudge();
  try {
    state.judge = await engine.request('loadJudge', { source, backend, maxTokens: 4096, options: { precision } });
    await db.put('settings', { choice, backend, precision }, 'judge');
    state.pace = (await db.get('settings', paceKey()).catch(() => null))?.secsPerResponse ?? null;
    notice(`Judge ${state.judge.name} loaded on ${state.judge.backend}.`);
  } catch (e) {
    state.judgeError = `Could not load the judge: ${e.message}`;
  }
  state.loading = null;
  renderAll();
}

async function shortHash(s) {
  const d = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(s));
  return [...new Uint8Array(d)]
    .slice(0, 6)
    .map((b) => b.toString(16).padStart(2, '0'))
    .join('');
}

engine.on('download', (m) => {
  state.loading = { phase: 'download', done: m.done, total: m.total };
  throttle('judge', renderJudge);
});
engine.on('load', (m) => {
  state.loading = { phase: 'load', done: m.done, total: m.total };
  throttle('judge', renderJudge);
});
engine.on('notice', (m) => notice(m.text, 'warn'));
// The worker moved the judge to another backend (the GPU was lost mid-grade): show where it runs now.
engine.on('judge-changed', (m) => {
  state.judge = m.judge;
  renderJudge();
});
engine.on('engine-restarted', () => {
  state.judge = null;
  notice('The engine hit an internal error and was restarted; load the judge again.', 'error');
  renderAll();
});

const timers = {};
function throttle(name, fn, ms = 150) {
  if (timers[name]) return;
  timers[name] = setTimeout(() => {
    timers[name] = null;
    fn();
  }, ms);
}

// ------------------------------------------------------------------ 2. benchmark

// Changes to the inputs (benchmark, responses) run one after another, in the order the user made
// them: responses are matched to the benchmark's queries, so a response file chosen while the
// benchmark is still being read waits for it instead of being refused.
let inputsDone = Promise.resolve();
function inOrder(fn) {
  return (...args) => {
    inputsDone = inputsDone.then(() => fn(...args)).catch((e) => notice(e.message, 'error'));
    return inputsDone;
  };
}

async function loadBundledBenchmark() {
  const resp = await fetch('benchmarks/mt-bench/queries.jsonl');
  if (!resp.ok) throw new Error(`cannot load the MT-Bench benchmark (HTTP ${resp.status})`);
  const parsed = await engine.core('parseQueries', 'mt-bench/queries.jsonl', new Uint8Array(await resp.arrayBuffer()));
  state.benchmark = {
    name: 'MT-Bench (80 questions × 2 turns, precomputed checklists)',
    queries: parsed.records,
    problems: parsed.problems,
  };
  await db.put('inputs', state.benchmark, 'benchmark');
}

/** Queries, and a separate checklist file attached and checked by core's Benchmark. */
async function uploadBenchmark(files) {
  let queries = null;
  let checklists = null;
  state.uploadErrors.bench = [];
  try {
    for (const f of files) {
      const bytesIn = await readUpload(f, 'jsonl');
      const text = new TextDecoder().decode(bytesIn.slice(0, 4096));
      if (/"conversation_input"/.test(text)) queries = { name: f.name, bytes: bytesIn };
      else if (/"checklist"/.test(text) && !checklists) checklists = { name: f.name, bytes: bytesIn };
      else if (/"checklist"/.test(text))
        throw new UploadError(`${f.name}: one checklist file at a time (${checklists.name} is the other).`);
      else
        throw new UploadError(
          `${f.name} holds neither queries (lines with "conversation_input") nor checklists (lines with "checklist"); the file formats page shows both.`,
        );
    }
    if (!queries)
      throw new UploadError(
        'Add a queries file too: JSON Lines with "session_id" and "conversation_input" on each line (the file formats page shows one).',
      );
    const parsed = checklists
      ? await engine.core('parseQueriesWithChecklists', queries.name, queries.bytes, checklists.name, checklists.bytes)
      : await engine.core('parseQueries', queries.name, queries.bytes);
    state.benchmark = {
      name: [...files].map((f) => f.name).join(' + '),
      queries: parsed.records,
      problems: parsed.problems,
    };
  } catch (e) {
    state.uploadErrors.bench = [plainError(e)];
    return renderBench();
  }
  await db.put('inputs', state.benchmark, 'benchmark');
  renderAll();
}

/** A link to the formats page (web/formats.html), at `section`. */
function formatsLink(section) {
  return h(
    'a',
    { href: `web/formats.html#${section}`, target: '_blank', rel: 'noopener', class: 'formats-link' },
    'file formats',
  );
}

function problemList(problems, limit = 12) {
  if (!problems || problems.length === 0) return null;
  const errors = problems.filter((p) => p.severity === 'error').length;
  return h(
    'details',
    { class: `problems ${errors ? 'has-errors' : ''}`, open: errors > 0 },
    h(
      'summary',
      {},
      `${problems.length} problem${problems.length === 1 ? '' : 's'} (${errors} error${errors === 1 ? '' : 's'})`,
    ),
    h(
      'ul',
      {},
      problems
        .slice(0, limit)
        .map((p) =>
          h(
            'li',
            { class: p.severity },
            `${p.file}${p.line ? `:${p.line}` : ''} — session ${p.session_id}: ${p.message}`,
          ),
        ),
      problems.length > limit ? h('li', {}, `… and ${problems.length - limit} more`) : null,
    ),
  );
}

function renderBench() {
  const b = state.benchmark;
  const input = h('input', {
    type: 'file',
    multiple: true,
    accept: '.jsonl,.json',
    id: 'bench-files',
    'aria-label': 'Queries and checklist files',
  });
  const upload = inOrder(uploadBenchmark);
  input.addEventListener('change', () => upload([...input.files]));
  const withChecklist = b ? b.queries.filter((q) => q.checklist && q.checklist.length).length : 0;
  const items = b ? b.queries.reduce((n, q) => n + (q.checklist ? q.checklist.length : 0), 0) : 0;
  mount(
    $('#bench'),
    h(
      'div',
      { class: 'row' },
      h(
        'button',
        {
          id: 'load-mtbench',
          onclick: inOrder(async () => {
            await loadBundledBenchmark();
            renderAll();
          }),
        },
        'Use MT-Bench (bundled)',
      ),
      h('label', { class: 'file-label' }, 'or upload queries + checklists (JSON Lines): ', input),
      formatsLink('bench-h'),
    ),
    messagesBeside('bench-errors', state.uploadErrors.bench),
    b
      ? h(
          'p',
          {},
          h('strong', {}, b.name),
          `: ${b.queries.length} queries, ${withChecklist} with checklists, ${items} checklist items.`,
        )
      : h('p', { class: 'hint' }, 'No benchmark loaded.'),
    b ? problemList(b.problems) : null,
  );
}

// ------------------------------------------------------------------ 3. responses

async function addResponseFiles(files) {
  state.uploadErrors.responses = [];
  if (!state.benchmark) {
    state.uploadErrors.responses = ['Load a benchmark first (step 2): responses are matched to its queries.'];
    return renderResponses();
  }
  const known = new Set(state.benchmark.queries.map((q) => q.session_id));
  for (const f of files) {
    try {
      const parsed = await engine.core(
        'parseResponses',
        f.name,
        await readUpload(f, 'jsonl-or-json'),
        state.benchmark.queries,
      );
      if (!parsed.records.length) throw new UploadError(`${f.name} holds no responses.`);
      if (!parsed.records.some((r) => known.has(r.session_id))) {
        const theirs = [...new Set(parsed.records.map((r) => r.session_id))];
        throw new UploadError(
          `None of the ${parsed.records.length} responses in ${f.name} answers a query of the benchmark: its session ids (${theirs
            .slice(0, 3)
            .map((x) => `"${x}"`)
            .join(
              ', ',
            )}${theirs.length > 3 ? ', …' : ''}) are not the benchmark's (such as "${state.benchmark.queries[0].session_id}"). The file was not added.`,
        );
      }
      const models = [...new Set(parsed.records.map((r) => r.generator))];
      state.responses = state.responses.filter((r) => r.file !== f.name);
      for (const model of models) {
        state.responses.push({
          file: f.name,
          model,
          format: parsed.format,
          records: parsed.records.filter((r) => r.generator === model),
          problems: parsed.problems,
        });
      }
    } catch (e) {
      state.uploadErrors.responses.push(plainError(e));
    }
  }
  await db.put('inputs', state.responses, 'responses');
  renderAll();
}

/** The FastChat-fork models of benchmarks/mt-bench/gpt4-judged (scripts/data/build_gpt4_judged.py). */
const GPT4_JUDGED_MODELS = [
  'claude-3-5-sonnet-20240620',
  'gemini-1.5-flash',
  'gemma-SFT',
  'llama2_chat_7b',
  'llama2_7b',
];

/** Bundled response files (`dir`/<name>.jsonl) added as if uploaded. */
async function loadBundledResponses(dir, names) {
  const files = [];
  for (const n of names) {
    const r = await fetch(`${dir}/${n}.jsonl`);
    if (r.ok) files.push(new File([await r.blob()], `${n}.jsonl`));
  }
  await addResponseFiles(files);
}

const loadDemoResponses = () =>
  loadBundledResponses('benchmarks/mt-bench/demo', ['gpt-4', 'gpt-3.5-turbo', 'vicuna-13b-v1.3', 'llama-13b']);
/** Answers GPT-4 judged (its scores: benchmarks/mt-bench/gpt4-judged/gpt-4_single.jsonl, the Strong judge view). */
const loadGpt4JudgedResponses = () => loadBundledResponses('benchmarks/mt-bench/gpt4-judged', GPT4_JUDGED_MODELS);

/**
 * Ask the worker what is graded (state.graded) and, with a judge loaded, what is left (state.pending:
 * core's rule, as `rocketjudge grade` resumes; not asked during a run, whose jobs are fixed).
 */
async function refreshGraded() {
  state.graded = await engine.request('graded', { judge: state.judge?.name ?? null }).catch(() => state.graded);
  if (state.grading.running) return;
  if (!state.judge || !state.benchmark) {
    state.pending = [];
    return;
  }
  const jobs = gradableJobs(state.benchmark.queries, state.responses);
  const left = await engine
    .request('pending', { judge: state.judge.name, candidates: candidates(jobs) })
    .catch(() => null);
  state.pending = left && left.map((i) => jobs[i]);
}

/** Responses `judge` graded, as `model\u0000session` keys. */
const gradedKeys = () => new Set(state.graded.responses.map((r) => `${r.model_test}\u0000${r.session_id}`));

function renderResponses() {
  const input = h('input', {
    type: 'file',
    multiple: true,
    accept: '.jsonl,.json',
    id: 'response-files',
    'aria-label': 'Response files',
  });
  const add = inOrder(addResponseFiles);
  input.addEventListener('change', () => add([...input.files]));
  const drop = h(
    'div',
    { class: 'drop', tabindex: 0 },
    'Drop one file per model here: RocketEval responses JSONL, FastChat model_answer JSONL or AlpacaEval model_outputs.json.',
  );
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    add([...e.dataTransfer.files]);
  });
  // Counts are per judge: the loaded one, else the one with the most grades stored here.
  const judge = state.graded.judge;
  const graded = gradedKeys();
  mount(
    $('#responses'),
    h(
      'div',
      { class: 'row' },
      input,
      h(
        'button',
        { id: 'load-demo', onclick: inOrder(loadDemoResponses), disabled: !state.benchmark },
        'Add demo answers (4 models)',
      ),
      h(
        'button',
        {
          id: 'load-gpt4-judged',
          onclick: inOrder(loadGpt4JudgedResponses),
          disabled: !state.benchmark,
          title:
            'FastChat-fork models whose answers GPT-4 scored: compare the judge with GPT-4 in Results → Strong judge',
        },
        `Add GPT-4-judged answers (${GPT4_JUDGED_MODELS.length} models)`,
      ),
    ),
    drop,
    h('p', { class: 'hint' }, 'What each format holds, with examples: ', formatsLink('resp-h'), '.'),
    messagesBeside('responses-errors', state.uploadErrors.responses),
    state.responses.length
      ? h(
          'div',
          { class: 'scroll' },
          h(
            'table',
            { class: 'models' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['model', 'responses', 'graded'].map((c) => h('th', {}, c)),
                h('th', {}, h('span', { class: 'sr-only' }, 'remove')),
              ),
            ),
            h(
              'tbody',
              {},
              state.responses.map((r) =>
                h(
                  'tr',
                  {},
                  h(
                    'td',
                    { class: 'model' },
                    h('span', { class: 'name' }, r.model),
                    h('div', { class: 'hint' }, `${r.file} · ${r.format}`),
                  ),
                  h('td', { class: 'num count' }, r.records.length),
                  h(
                    'td',
                    { class: 'num graded' },
                    judge ? r.records.filter((x) => graded.has(`${r.model}\u0000${x.session_id}`)).length : '–',
                  ),
                  h(
                    'td',
                    {},
                    h(
                      'button',
                      {
                        class: 'link',
                        onclick: inOrder(async () => {
                          state.responses = state.responses.filter((x) => x !== r);
                          await db.put('inputs', state.responses, 'responses');
                          renderAll();
                        }),
                      },
                      'remove',
                    ),
                  ),
                ),
              ),
            ),
          ),
        )
      : null,
    judge ? h('p', { class: 'hint' }, `"graded" counts grades by ${judge}.`) : null,
    state.responses.map((r) => problemList(r.problems)),
  );
}

// ------------------------------------------------------------------ 4. grade

/** The run: every model's responses to queries with a checklist (graded or not), for the live leaderboard. */
const currentScope = () => runScope(state.benchmark ? state.benchmark.queries : [], state.responses);

/** The key under which this device's pace with the loaded judge is kept. */
const paceKey = () => state.judge && `pace:${state.judge.name}@${state.judge.backend}`;

/** The loaded judge's standing on this run from the stored grades (when not grading). */
async function refreshStanding() {
  if (!state.judge || state.grading.running) return;
  const scope = currentScope();
  state.standing = scope.total
    ? await engine
        .request('standing', { judge: state.judge.name, scope, secsPerResponse: state.pace })
        .catch(() => null)
    : null;
  renderGrade();
}

async function startGrading() {
  await refreshGraded();
  const jobs = state.pending || [];
  if (!jobs.length) return notice('Nothing left to grade.');
  state.grading = {
    running: true,
    paused: false,
    done: 0,
    total: jobs.length,
    perMinute: null,
    etaSec: null,
    errors: [],
  };
  // "Demo loaded… press Grade" and the like are done with.
  clearNotices('info');
  renderGrade();
  // Once, so the Results card says where the live leaderboard is; it is redrawn on a pause and at the end.
  renderResultsPanel();
  const { order, until } = state.run;
  try {
    const r = await engine.request('grade', { jobs, order, scope: currentScope(), until: until ? 'settled' : null });
    if (r.cancelled) notice(`Grading cancelled after ${r.graded} responses; what was graded is kept.`);
    else if (r.stopped) notice(`Grading stopped: ${r.stopped}`, 'error');
    else if (r.settled) notice(`Stopped: ${r.sentence}. ${r.left} responses are left; press Grade to grade them too.`);
    else notice(`Graded ${r.graded} responses.`);
  } catch (e) {
    notice(`Grading failed: ${e.message}`, 'error');
  }
  state.grading.running = false;
  if (state.pace) await db.put('settings', { secsPerResponse: state.pace }, paceKey());
  renderAll();
}

engine.on('graded', (m) => {
  Object.assign(state.grading, { done: m.done, total: m.total, perMinute: m.perMinute, etaSec: m.etaSec });
  state.pace = m.secsPerResponse;
  throttle('grade', renderGrade, 200);
  // The result views wait for the run to end (the worker answers them between responses); the live
  // leaderboard in the Grade card is what changes meanwhile.
  throttle('responses', () => refreshGraded().then(renderResponses), 1500);
});
engine.on('standing', (m) => {
  state.standing = m.standing;
  throttle('grade', renderGrade, 200);
});
engine.on('grade-error', (m) => {
  state.grading.errors.push(m);
  notice(`${m.model} on ${m.session_id}: ${m.error}`, 'error');
});

/** The time a run of `n` responses should take at this device's measured pace. */
function estimate(n) {
  if (!state.pace) return 'the time per response is measured on the first one';
  return `about ${duration(state.pace * n)} at ${fmt(state.pace, 1)} s per response measured here`;
}

const ORDERS = [
  ['interleaved', 'Query by query (every model ranked early)'],
  ['adaptive', 'Close pairs first (adaptive)'],
  ['model', 'Model by model'],
];

function renderGrade() {
  const g = state.grading;
  const jobs = g.running ? [] : state.pending || [];
  const ready = state.judge && state.benchmark && state.responses.length;
  const order = h(
    'select',
    {
      id: 'grade-order',
      'aria-label': 'Grading order',
      disabled: g.running,
      title:
        "Query by query: the queries in a seeded random order balanced across categories, every model graded on a query before the next, so the leaderboard ranks every model from the start. Adaptive: query by query until each model has 10 grades, then the pairs still too close to call first. Model by model: each model's file in turn.",
    },
    ORDERS.map(([v, label]) => h('option', { value: v, selected: state.run.order === v }, label)),
  );
  order.addEventListener('change', () => {
    state.run.order = order.value;
  });
  const until = h('input', { type: 'checkbox', id: 'grade-until', checked: state.run.until, disabled: g.running });
  until.addEventListener('change', () => {
    state.run.until = until.checked;
    renderGrade();
  });
  mount(
    $('#grade'),
    h(
      'div',
      { class: 'row' },
      h(
        'button',
        {
          id: 'start-grading',
          class: 'primary',
          disabled: !ready || g.running || jobs.length === 0,
          onclick: startGrading,
        },
        g.running
          ? g.paused
            ? 'Paused'
            : 'Grading…'
          : !ready || !state.pending
            ? 'Grade'
            : jobs.length
              ? `Grade ${jobs.length} response${jobs.length === 1 ? '' : 's'}`
              : 'All graded',
      ),
      h(
        'button',
        {
          id: 'pause-grading',
          disabled: !g.running,
          onclick: () => {
            g.paused = !g.paused;
            engine.signal(g.paused ? 'pause' : 'resume');
            renderGrade();
            if (g.paused) renderResultsPanel();
          },
        },
        g.paused ? 'Resume' : 'Pause',
      ),
      h('button', { id: 'cancel-grading', disabled: !g.running, onclick: () => engine.signal('cancel') }, 'Cancel'),
      h('label', {}, 'Order ', order),
      h(
        'label',
        {
          title:
            'Stop once every adjacent pair of the live leaderboard is ordered the same way in at least 95% of bootstrap replicates, on at least 10 shared queries. What is left stays; Grade continues it.',
        },
        until,
        ' Stop when the ranking is settled',
      ),
    ),
    !ready ? h('p', { class: 'hint' }, "Load a judge, a benchmark and at least one model's responses.") : null,
    ready && !g.running && jobs.length
      ? h(
          'p',
          { class: 'hint', id: 'grade-estimate' },
          `${jobs.length} response${jobs.length === 1 ? '' : 's'} to grade: ${estimate(jobs.length)}${state.run.until ? '; the run stops earlier once the ranking is settled' : ''}.`,
        )
      : null,
    g.running || g.done
      ? h(
          'div',
          { class: 'progress-block' },
          h('label', { for: 'grade-progress', id: 'grade-rate' }, progressLine(g)),
          h('progress', { id: 'grade-progress', max: g.total || 1, value: g.done }),
        )
      : null,
    !g.running && !g.done && state.judge && jobs.length && state.graded.responses.length
      ? h('p', { class: 'hint' }, 'Grades from an earlier visit were restored; grading continues with what is missing.')
      : null,
    !state.judge && state.graded.judge
      ? h(
          'p',
          { class: 'hint' },
          `${state.graded.responses.length} responses were graded earlier by ${state.graded.judge}; load that judge to grade the rest.`,
        )
      : null,
    renderStanding(state.standing),
  );
}

/** `12 of 64 responses · 3.1 per minute · about 17m left`: the pace over the last responses, once one is graded. */
function progressLine(g) {
  const parts = [`${g.done} of ${g.total} responses`];
  if (g.running && g.perMinute == null) parts.push('measuring the pace on the first response');
  else if (g.perMinute != null)
    parts.push(`${fmt(g.perMinute, 1)} per minute`, g.running ? `about ${duration(g.etaSec)} left` : null);
  if (g.paused) parts.push('paused');
  return parts.filter(Boolean).join(' · ');
}

/** The live leaderboard: per model its grades so far and rating, per adjacent pair separated or too close. */
function renderStanding(s) {
  if (!s || !s.entries.length) return s ? h('p', { class: 'hint', id: 'standing-sentence' }, s.sentence) : null;
  const verdict = (p) => {
    if (!p) return '';
    const share = `${Math.round(p.share * 100)}%`;
    if (p.separated) return `separated from the next (${share} of replicates)`;
    return `too close to call (${share})${p.more != null ? `: about ${p.more} more per model` : ''}`;
  };
  return h(
    'div',
    { class: 'standing', id: 'standing' },
    h('h3', {}, 'Live leaderboard'),
    h(
      'table',
      { class: 'leaderboard', id: 'standing-table' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { class: 'num' }, '#'),
          h('th', {}, 'model'),
          h('th', { class: 'num' }, 'graded'),
          h('th', { class: 'num' }, 'rating'),
          h('th', { class: 'num' }, '95% CI'),
          h('th', {}, 'vs next'),
        ),
      ),
      h(
        'tbody',
        {},
        s.entries.map((e, i) =>
          h(
            'tr',
            { class: s.pairs[i] ? (s.pairs[i].separated ? 'separated' : 'too-close') : '' },
            h('td', { class: 'num' }, e.rank),
            h('td', {}, e.model),
            h('td', { class: 'num' }, e.responses),
            h('td', { class: 'num' }, fmt(e.score, 0)),
            h('td', { class: 'num' }, e.lower == null ? '–' : `${fmt(e.lower, 0)} – ${fmt(e.upper, 0)}`),
            h('td', { class: 'verdict' }, verdict(s.pairs[i])),
          ),
        ),
      ),
    ),
    h(
      'p',
      { class: 'hint', id: 'standing-sentence' },
      `${s.sentence[0].toUpperCase()}${s.sentence.slice(1)}. Bradley–Terry on every graded response (each pair compared on the queries both were graded on); intervals and verdicts from 1000 bootstrap resamples of the queries; separated: ordered alike in ≥ ${Math.round(s.rule.level * 100)}% of them, on ≥ ${s.rule.minQueries} shared queries.`,
    ),
  );
}

// ------------------------------------------------------------------ 5. results

function renderResultsPanel() {
  const gpt4Judged = { models: GPT4_JUDGED_MODELS, add: inOrder(loadGpt4JudgedResponses) };
  renderResults($('#results'), {
    engine,
    state,
    // The loaded judge's graded responses (ids; the views ask the worker for everything else), or
    // without a loaded judge those of the judge with the most grades.
    judge: state.graded.judge,
    graded: state.graded.responses,
    notice,
    regrade: regradeItems,
    modelSource,
    gpt4Judged,
  });
}

/**
 * Grade only the new and reworded checklist items of every response to `query` (the worker merges and
 * stores). Returns whether the new checklist was saved (else a notice says why; the editor keeps the edits).
 */
async function regradeItems(query, changes) {
  // changes: {newChecklist, keep: [[newIndex, oldIndex]...], grade: [newIndex...]}
  if (!state.judge) {
    notice('Load a judge to regrade edited items.', 'error');
    return false;
  }
  const jobs = [];
  for (const r of state.responses) {
    for (const resp of r.records)
      if (resp.session_id === query.session_id) jobs.push({ response: resp, model: r.model });
  }
  const merged = await engine
    .request('regrade', {
      query: { ...query, checklist: changes.newChecklist },
      keep: changes.keep,
      grade: changes.grade,
      jobs,
    })
    .catch((e) => {
      notice(e.message, 'error');
      return null;
    });
  if (!merged) return false;
  query.checklist = changes.newChecklist;
  await db.put('inputs', state.benchmark, 'benchmark');
  renderAll();
  return true;
}

// ------------------------------------------------------------------ boot

/** Everything drawn again, after asking the worker what is graded. */
async function renderAll() {
  await refreshGraded();
  renderStatus();
  renderJudge();
  renderBench();
  renderResponses();
  renderGrade();
  renderResultsPanel();
  refreshStanding();
}

async function boot() {
  renderStatus();
  try {
    state.engine = await engine.request('init', { threads: wantedThreads() });
  } catch (e) {
    notice(`The engine could not start: ${e.message}`, 'error');
    return;
  }
  state.gpu = await engine.request('gpu').catch((e) => ({ available: false, hardware: false, why: e.message }));
  try {
    state.manifest = await readManifest();
  } catch {
    notice('Could not read models/manifest.json; load a model from a file.', 'warn');
  }
  // Restore what this browser kept; on a first visit, preload the demo.
  // The judgments are the worker's (it stores them); the page asks it for counts and views.
  const [bench, responses, judgeSettings] = await Promise.all([
    db.get('inputs', 'benchmark'),
    db.get('inputs', 'responses'),
    db.get('settings', 'judge'),
  ]).catch(() => [null, null, null]);
  if (bench) state.benchmark = bench;
  if (responses) state.responses = responses;
  if (judgeSettings && judgeSettings.choice && !judgeSettings.choice.startsWith('__'))
    state.selectedModel = judgeSettings.choice;
  const wantDemo = new URLSearchParams(location.search).get('demo') !== '0';
  if (!bench && wantDemo) {
    try {
      await loadBundledBenchmark();
      await loadDemoResponses();
      notice('Demo loaded: MT-Bench with answers of 4 models. Load the judge and press Grade.');
    } catch (e) {
      notice(e.message, 'error');
    }
  }
  renderAll();
  $('#forget').addEventListener('click', async () => {
    if (!confirm('Delete the benchmark, responses, grades and cached models stored by this page in this browser?'))
      return;
    await Promise.all([db.clear('inputs'), db.clear('judgments'), db.clear('designs'), db.clear('settings')]);
    for (const m of await engine.request('cachedModels').catch(() => []))
      await engine.request('removeModel', { key: m.key });
    location.reload();
  });
}

boot();
