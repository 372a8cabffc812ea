// Step 5, the Results card as the page fills it in (web/views/results.js draws it): what it is given
// (the worker, the state, what is graded), and the regrading of a query's edited checklist items.

import { $ } from '../lib/dom.js';
import * as db from '../lib/db.js';
import { modelSource } from '../lib/manifest.js';
import { state, engine, notice, inOrder, renderAll, currentScope } from '../page.js';
import { inScope } from '../lib/run.js';
import { renderResults } from './results.js';
import { GPT4_JUDGED_MODELS, loadGpt4JudgedResponses } from './responses.js';

export function renderResultsPanel() {
  const gpt4Judged = { models: GPT4_JUDGED_MODELS, add: inOrder(loadGpt4JudgedResponses) };
  const scope = currentScope();
  renderResults($('#results'), {
    engine,
    state,
    // The loaded judge's graded responses of the run loaded now (ids; the views ask the worker for
    // everything else, of the same `scope`), or without a loaded judge those of the judge with the
    // most grades: the one count the Grade card shows.
    judge: state.graded.judge,
    graded: inScope(scope, state.graded.responses),
    scope: { keys: scope.keys },
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
