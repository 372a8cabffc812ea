// Step 3, the responses card: one file per model (uploaded, dropped or bundled), matched to the
// benchmark's queries, each model's count and grades so far; and what the worker says is graded.

import { h, mount, $, messagesBeside } from '../lib/dom.js';
import * as db from '../lib/db.js';
import { readUpload, plainError, UploadError } from '../lib/upload.js';
import { gradableJobs, candidates, gradedKeys, responseKey } from '../lib/run.js';
import { state, engine, inOrder, renderAll, currentScope } from '../page.js';
import { formatsLink, problemList } from './benchmark.js';

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
export const GPT4_JUDGED_MODELS = [
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

/**
 * The demo's models: three of the four in benchmarks/mt-bench/demo, far apart in quality (MT-Bench's
 * GPT-4 scores 9.0, 6.4, 2.6), so that the live leaderboard can separate a pair as soon as the rule
 * allows, after 10 queries × 3 models (GPT-3.5-Turbo, 7.9, is one the 1.5B cannot tell from GPT-4).
 */
export const DEMO_MODELS = ['gpt-4', 'vicuna-13b-v1.3', 'llama-13b'];
export const loadDemoResponses = () => loadBundledResponses('benchmarks/mt-bench/demo', DEMO_MODELS);
/** Answers GPT-4 judged (its scores: benchmarks/mt-bench/gpt4-judged/gpt-4_single.jsonl, the Strong judge view). */
export const loadGpt4JudgedResponses = () =>
  loadBundledResponses('benchmarks/mt-bench/gpt4-judged', GPT4_JUDGED_MODELS);

/**
 * Ask the worker what is graded (state.graded) and, with a judge loaded, what is left (state.pending:
 * core's rule, as `rocketjudge grade` resumes; not asked during a run, whose jobs are fixed).
 */
export async function refreshGraded() {
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
  // Their work, for the estimate before a run: what the judge runs for them, tokenized.
  state.pendingTokens = state.pending?.length
    ? ((await engine.request('work', { jobs: state.pending }).catch(() => null))?.tokens ?? null)
    : null;
}

export function renderResponses() {
  const input = h('input', {
    type: 'file',
    multiple: true,
    accept: '.jsonl,.json',
    id: 'response-files',
    'aria-label': 'Response files',
  });
  const add = inOrder(addResponseFiles);
  input.addEventListener('change', () => add([...input.files]));
  // Counts are per judge: the loaded one, else the one with the most grades stored here.
  const judge = state.graded.judge;
  mount(
    $('#responses'),
    h('div', { class: 'row' }, input, bundledButtons()),
    dropZone(add),
    h('p', { class: 'hint' }, 'What each format holds, with examples: ', formatsLink('resp-h'), '.'),
    messagesBeside('responses-errors', state.uploadErrors.responses),
    state.responses.length ? modelsTable(judge) : null,
    judge ? h('p', { class: 'hint' }, `"graded" counts grades by ${judge}.`) : null,
    state.responses.map((r) => problemList(r.problems)),
  );
}

/** The buttons that add the bundled answers: the demo's models, and those GPT-4 judged. */
function bundledButtons() {
  return [
    h(
      'button',
      { id: 'load-demo', onclick: inOrder(loadDemoResponses), disabled: !state.benchmark },
      `Add demo answers (${DEMO_MODELS.length} models)`,
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
  ];
}

/** The place to drop response files on; they go to `add`. */
function dropZone(add) {
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
  return drop;
}

/** The models loaded: per model its responses and how many of them `judge` graded, and a remove button. */
function modelsTable(judge) {
  // The one count (lib/run.js), per model.
  const graded = gradedKeys(currentScope(), state.graded.responses);
  return h(
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
        state.responses.map((r) => modelRow(r, judge, graded)),
      ),
    ),
  );
}

function modelRow(r, judge, graded) {
  return h(
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
      judge ? r.records.filter((x) => graded.has(responseKey(r.model, x.session_id))).length : '–',
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
  );
}
