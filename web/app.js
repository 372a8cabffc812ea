// The page's shell: it starts the worker's engine, restores what this browser kept, and draws every
// panel (web/views/: judge, benchmark, responses, grade, results-panel; their shared state in
// web/page.js). All computation happens in the worker (engine, parsing, statistics); the page only
// keeps state and renders it. Text from files is always rendered as text.

import { $ } from './lib/dom.js';
import * as db from './lib/db.js';
import { wantedThreads } from './lib/threads.js';
import { readManifest } from './lib/manifest.js';
import { state, engine, notice, renderStatus, onRenderAll } from './page.js';
import { renderJudge, reloadKeptJudge } from './views/judge.js';
import { loadBundledBenchmark, renderBench } from './views/benchmark.js';
import { DEMO_MODELS, loadDemoResponses, refreshGraded, renderResponses } from './views/responses.js';
import { renderGrade, refreshStanding } from './views/grade.js';
import { renderResultsPanel } from './views/results-panel.js';

engine.on('notice', (m) => notice(m.text, 'warn'));
engine.on('engine-restarted', () => {
  state.judge = null;
  notice('The engine hit an internal error and was restarted; load the judge again.', 'error');
  renderAll();
});

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
onRenderAll(renderAll);

async function boot() {
  renderStatus();
  try {
    state.engine = await engine.request('init', { threads: wantedThreads() });
  } catch (e) {
    notice(`The engine could not start: ${e.message}`, 'error');
    return;
  }
  // The settling rule (core's): whether a benchmark is large enough to settle is said before a run.
  state.settleRule = (await engine.core('runChoices').catch(() => null))?.rule ?? null;
  state.gpu = await engine.request('gpu').catch((e) => ({ available: false, hardware: false, why: e.message }));
  try {
    state.manifest = await readManifest();
  } catch {
    notice('Could not read models/manifest.json; load a model from a file.', 'warn');
  }
  const bench = await restoreInputs();
  const wantDemo = new URLSearchParams(location.search).get('demo') !== '0';
  if (!bench && wantDemo) await loadDemo();
  await renderAll();
  $('#forget').addEventListener('click', forgetAll);
  await reloadKeptJudge();
}

/**
 * Restore what this browser kept: the benchmark, the responses and the judge chosen last (the
 * judgments are the worker's: it stores them, and the page asks it for counts and views). Returns
 * the benchmark kept, if any.
 */
async function restoreInputs() {
  const [bench, responses, judgeSettings] = await Promise.all([
    db.get('inputs', 'benchmark'),
    db.get('inputs', 'responses'),
    db.get('settings', 'judge'),
  ]).catch(() => [null, null, null]);
  if (bench) state.benchmark = bench;
  if (responses) state.responses = responses;
  if (judgeSettings && judgeSettings.choice && !judgeSettings.choice.startsWith('__'))
    state.selectedModel = judgeSettings.choice;
  return bench;
}

/** A first visit: MT-Bench with the demo's answers, ready to grade. */
async function loadDemo() {
  try {
    await loadBundledBenchmark();
    await loadDemoResponses();
    // True while the demo's answers are loaded and nothing has been graded of them.
    const demo = new Set(state.responses.map((r) => r.file));
    notice(
      `Demo loaded: MT-Bench with answers of ${DEMO_MODELS.length} models. Load the judge and press Grade.`,
      'info',
      () => state.responses.some((r) => demo.has(r.file)) && !state.graded.responses.length,
    );
  } catch (e) {
    notice(e.message, 'error');
  }
}

/** The Forget button: everything this page stored in this browser deleted, then a fresh page. */
async function forgetAll() {
  if (!confirm('Delete the benchmark, responses, grades and cached models stored by this page in this browser?'))
    return;
  await Promise.all([db.clear('inputs'), db.clear('judgments'), db.clear('designs'), db.clear('settings')]);
  for (const m of await engine.request('cachedModels').catch(() => []))
    await engine.request('removeModel', { key: m.key });
  location.reload();
}

boot();
