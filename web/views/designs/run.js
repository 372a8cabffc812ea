// Results → Evaluation types: running a design with the loaded judge over the loaded responses, its
// progress and errors shown in the tab as the worker reports them, and the Run and Cancel buttons.

import { h, messagesBeside } from '../../lib/dom.js';
import { listsChecklist } from './choices.js';

/**
 * Every loaded response with its query: what a design runs over; with `checklist` (the design may put
 * it in the prompt) only those whose query has one. Returns {jobs, without} (responses left out).
 */
function designJobs(ctx, checklist) {
  const byId = new Map((ctx.state.benchmark ? ctx.state.benchmark.queries : []).map((q) => [q.session_id, q]));
  const all = ctx.state.responses.flatMap((r) =>
    r.records
      .filter((x) => byId.has(x.session_id))
      .map((x) => ({ query: byId.get(x.session_id), response: x, model: r.model })),
  );
  const jobs = checklist ? all.filter((j) => j.query.checklist && j.query.checklist.length) : all;
  return { jobs, without: all.length - jobs.length };
}

/** Show the run's state in the tab (whichever copy of it is drawn now). */
function showStatus(ui, text) {
  ui.designStatus = text;
  const el = document.getElementById('design-status');
  if (el) el.textContent = text;
}

/**
 * Follow a run's events: its progress and each reply in the status, each record's error in the list.
 * Returns the functions that stop following.
 */
function followRun(ctx, ui) {
  let done = 'starting';
  return [
    ctx.engine.on('design-progress', (m) => {
      done = `${m.done} of ${m.total} ${m.pairs ? 'comparisons' : 'responses'}`;
      showStatus(ui, `${done}…`);
    }),
    ctx.engine.on('design-reply', (m) => {
      const read = m.score != null ? `scored ${m.score}` : m.vote ? `voted for ${m.vote}` : 'unreadable';
      showStatus(ui, `${done}; the next: reply ${m.reply} of ${m.samples} ${read}…`);
    }),
    ctx.engine.on('design-error', (m) => {
      ui.designErrors.push(`${m.model} on ${m.session_id}: ${m.error}`);
    }),
  ];
}

/** Run `design` over every loaded response it can judge, then redraw with how the run ended. */
async function runDesign(ctx, { ui, rerender, design, protocols }) {
  const { jobs, without } = designJobs(ctx, listsChecklist(design, protocols));
  ui.designErrors = [];
  if (!jobs.length) {
    ui.designErrors = ['Load a benchmark and responses first (with checklists, to put them in the prompt).'];
    return rerender();
  }
  if (without)
    ctx.notice(`${without} responses answer queries without a checklist and are left out of this run.`, 'warn');
  showStatus(ui, 'starting…');
  const off = followRun(ctx, ui);
  ui.designRunning = true;
  try {
    const r = await ctx.engine.request('runDesign', { design, jobs });
    ui.designStatus = r.cancelled
      ? `cancelled after ${r.done} of ${r.total}; what was made is kept`
      : r.stopped
        ? `stopped: ${r.stopped}`
        : `done: ${r.total}`;
  } catch (e) {
    ui.designStatus = '';
    ui.designErrors.push(e.message);
  } finally {
    off.forEach((f) => f());
    ui.designRunning = false;
  }
  rerender();
}

/** The Run and Cancel buttons, the run's status and its errors. `r`: {ui, rerender, design, protocols}. */
export function runButtons(ctx, r) {
  const { ui } = r;
  // Before a run: what it would run over.
  const { jobs, without } = designJobs(ctx, listsChecklist(r.design, r.protocols));
  const scope = `${jobs.length} loaded response${jobs.length === 1 ? '' : 's'} to run over${without ? ` (${without} without a checklist left out)` : ''}`;
  return h(
    'div',
    { class: 'row' },
    h(
      'button',
      {
        id: 'design-run',
        class: 'primary',
        disabled: !ctx.state.judge || ui.designRunning,
        onclick: () => runDesign(ctx, r),
        title: ctx.state.judge ? '' : 'Load a judge first',
      },
      'Run with the loaded judge',
    ),
    h(
      'button',
      { id: 'design-cancel', disabled: !ui.designRunning, onclick: () => ctx.engine.signal('cancel') },
      'Cancel',
    ),
    h('span', { class: 'hint', id: 'design-status' }, ui.designStatus || (ui.designRunning ? '' : scope)),
    messagesBeside('design-error', ui.designErrors),
  );
}
