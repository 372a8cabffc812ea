// The "Bias probes" view (a tab of Results): one-click probes that change one thing about the selected
// response or the grading (length, order, prompt, checklist, judge) and grade it again, and a report of
// each probe over every graded response. The worker runs them (`probe`, `probeAll`, `loadProbeJudge`).

import { h, mount, fmt, duration, messagesBeside } from '../../lib/dom.js';
import { responsePicker, responseOf, needJudge, noResponse, headRow } from './shared.js';

/** The probes, in the order of their buttons: [name, label, options]. */
const PROBES = [
  ['pad', 'Pad by 30 % (verbosity)', { amount: 0.3 }],
  ['reorder', 'Reverse the order of its paragraphs', {}],
  ['truncate', 'Keep the first half', { amount: 0.5 }],
  ['prompt_wording', 'Reword the grading prompt', { prompt: 'reworded' }],
  ['instruction_level', 'Less instruction in the prompt', { prompt: 'minimal' }],
  ['instruction_level', 'More instruction in the prompt', { prompt: 'criteria' }],
];

const signed = (x, d = 2) => (x == null ? '–' : `${x >= 0 ? '+' : ''}${fmt(x, d)}`);
const pct = (x) => (x == null ? '–' : `${Math.round(x * 100)} %`);

/** One-click probes on the selected response, and a report of each probe over every graded response. */
export async function probes(body, ctx, { ui, rerender }) {
  if (needJudge(ctx, body, 'run probes')) return;
  const pick = responsePicker(ctx, ui, rerender);
  if (!pick || !pick.response) return noResponse(body, pick);
  ui.probeResults ||= [];
  ui.probeReport ||= [];
  const status = h('span', { class: 'hint', id: 'probe-status' });
  const kit = {
    ctx,
    ui,
    rerender,
    status,
    ...probeRunners(ctx, ui, pick, status, rerender),
    ...probeChoices(ctx, pick),
  };
  // What each probe changes and what a fair judge would do (core's words), as the buttons' tooltips.
  ui.probeKinds ||= Object.fromEntries((await ctx.engine.core('probeKinds')).map((k) => [k.name, k.description]));
  ui.promptStyles ||= Object.fromEntries((await ctx.engine.core('promptStyles')).map((p) => [p.name, p.description]));
  kit.button = (id, label, fn, probe, prompt) =>
    h(
      'button',
      {
        id,
        onclick: fn,
        title: [ui.probeKinds[probe], prompt && `This prompt: ${ui.promptStyles[prompt]}.`].filter(Boolean).join(' '),
      },
      label,
    );
  mount(
    body,
    pick.row,
    h(
      'p',
      { class: 'hint' },
      'Each probe changes one thing and grades again with the loaded judge; the table shows the score before and after. "All" runs the probe on every graded response and adds a line to the report.',
    ),
    probeGrid(kit),
    h('h3', {}, 'This response'),
    resultsTable(ui.probeResults),
    h('h3', {}, 'Probe report (every graded response)'),
    reportTable(ui.probeReport),
  );
}

/**
 * `run` grades the selected response once with a probe (a line of "This response"); `runAll` runs it on
 * every graded response (a line of the report, in place of the one with the same label). Progress
 * goes to `status`, an error to ui.probeError.
 */
function probeRunners(ctx, ui, pick, status, rerender) {
  // What a probe costs at this device's measured pace (seconds per response), when known.
  const about = (responses) =>
    ctx.state.pace ? `, about ${duration(ctx.state.pace * responses)} at this device's pace` : '';
  const run = async (probe, label, options) => {
    status.textContent = `${label}: grading the changed response${about(1)}…`;
    ui.probeError = null;
    try {
      const r = await ctx.engine.request('probe', {
        probe,
        query: pick.query,
        response: pick.response,
        model: pick.model,
        options,
      });
      ui.probeResults.unshift({ label, probe, session: pick.query.session_id, model: pick.model, ...r });
      rerender();
    } catch (e) {
      status.textContent = '';
      ui.probeError = e.message;
      rerender();
    }
  };
  const runAll = async (probe, label, options) => {
    const jobs = allJobs(ctx, probe);
    status.textContent = `${label}: 0 of ${jobs.length} responses${about(jobs.length)}…`;
    ui.probeError = null;
    const off = ctx.engine.on('probe-progress', (m) => {
      status.textContent = `${label}: ${m.done} of ${m.total} responses…`;
    });
    try {
      const r = await ctx.engine.request('probeAll', { probe, options, jobs });
      ui.probeReport = [{ label, probe, ...r }, ...ui.probeReport.filter((x) => x.label !== label)];
      rerender();
    } catch (e) {
      status.textContent = '';
      ui.probeError = e.message;
      rerender();
    } finally {
      off?.();
    }
  };
  return { run, runAll };
}

/** The probes' own choices: the model to swap with, the item to drop, the item to add, the second judge. */
function probeChoices(ctx, pick) {
  const others = pick.models.filter((m) => m !== pick.model);
  const otherSel = h(
    'select',
    { id: 'probe-other', 'aria-label': 'Compare with' },
    others.map((m) => h('option', { value: m }, m)),
  );
  const itemSel = h(
    'select',
    { id: 'probe-item', class: 'quotes', 'aria-label': 'Item to drop' },
    pick.query.checklist.map((t, i) => h('option', { value: i }, `${i + 1}. ${t.slice(0, 60)}`)),
  );
  const addText = h('input', {
    type: 'text',
    id: 'probe-add-text',
    size: 50,
    placeholder: 'A checklist item to add, e.g. Is the response concise?',
    'aria-label': 'Item to add',
  });
  const judges = (ctx.state.manifest || []).filter((m) => m.name !== ctx.state.judge.name);
  const judgeSel = h(
    'select',
    { id: 'probe-judge', 'aria-label': 'Second judge' },
    judges.map((m) => h('option', { value: m.name }, m.display)),
  );
  return { otherSel, itemSel, addText, judgeSel };
}

/** A row per probe, each with its button and its "All" button, then the status and the error. */
function probeGrid(kit) {
  const { button, run, runAll } = kit;
  return h(
    'div',
    { class: 'probe-grid' },
    PROBES.map(([probe, label, options], k) =>
      h(
        'div',
        { class: 'row' },
        button(`probe-${k}`, label, () => run(probe, label, options), probe, options.prompt),
        button(`probe-all-${k}`, 'All', () => runAll(probe, label, options)),
      ),
    ),
    positionRow(kit),
    dropRow(kit),
    addRow(kit),
    judgeRow(kit),
    kit.status,
    messagesBeside('probe-error', kit.ui.probeError),
  );
}

/** Swap the order against another model's response to the same query. */
function positionRow({ ctx, ui, button, run, runAll, otherSel }) {
  return h(
    'div',
    { class: 'row' },
    button(
      'probe-position',
      'Swap the order against',
      () =>
        run('position', `Position against ${otherSel.value}`, {
          other: responseOf(ctx, otherSel.value, ui.query),
        }),
      'position',
    ),
    otherSel,
    button('probe-all-position', 'All', () => runAll('position', 'Position (each pair, both orders)', {})),
  );
}

/** Drop one checklist item. */
function dropRow({ button, run, runAll, itemSel }) {
  return h(
    'div',
    { class: 'row' },
    button(
      'probe-drop',
      'Drop item',
      () => run('drop_item', `Drop item ${Number(itemSel.value) + 1}`, { item: Number(itemSel.value) }),
      'drop_item',
    ),
    itemSel,
    button('probe-all-drop', 'All', () =>
      runAll('drop_item', `Drop item ${Number(itemSel.value) + 1} of every checklist`, {
        item: Number(itemSel.value),
      }),
    ),
  );
}

/** Add a checklist item of the user's. */
function addRow({ button, run, runAll, addText }) {
  return h(
    'div',
    { class: 'row' },
    button(
      'probe-add',
      'Add item',
      () => run('add_item', `Add “${addText.value.trim()}”`, { text: addText.value }),
      'add_item',
    ),
    addText,
    button('probe-all-add', 'All', () =>
      runAll('add_item', `Add “${addText.value.trim()}” to every checklist`, { text: addText.value }),
    ),
  );
}

/** Load a second judge and grade with it instead. */
function judgeRow({ ctx, ui, rerender, status, button, run, runAll, judgeSel }) {
  return h(
    'div',
    { class: 'row' },
    button('probe-judge-load', 'Load as second judge', async () => {
      status.textContent = 'loading the second judge…';
      try {
        const m = ctx.state.manifest.find((x) => x.name === judgeSel.value);
        const { name } = await ctx.engine.request('loadProbeJudge', { source: ctx.modelSource(m) });
        ui.probeJudge = name;
        status.textContent = `second judge: ${name}`;
        rerender();
      } catch (e) {
        status.textContent = '';
        ui.probeError = e.message;
        rerender();
      }
    }),
    judgeSel,
    button('probe-judge', 'Grade with it', () => run('judge', `Judge ${ui.probeJudge || '?'}`, {}), 'judge'),
    button('probe-all-judge', 'All', () => runAll('judge', `Judge ${ui.probeJudge || '?'} instead`, {})),
    h('span', { class: 'hint' }, ui.probeJudge ? `loaded: ${ui.probeJudge}` : ''),
  );
}

/**
 * Every graded response with its text, as probe jobs; `position` pairs each with the next model's
 * response to the same query.
 */
function allJobs(ctx, probe) {
  const byId = new Map((ctx.state.benchmark?.queries || []).map((q) => [q.session_id, q]));
  const jobs = [];
  for (const j of ctx.graded) {
    const query = byId.get(j.session_id);
    const response = responseOf(ctx, j.model_test, j.session_id);
    if (query && response) jobs.push({ query, response, model: j.model_test });
  }
  if (probe !== 'position') return jobs;
  const pairs = [];
  for (let i = 0; i < jobs.length; i++) {
    for (let k = i + 1; k < jobs.length; k++) {
      if (jobs[k].query.session_id === jobs[i].query.session_id) pairs.push({ ...jobs[i], other: jobs[k].response });
    }
  }
  return pairs;
}

/** The probes run on the selected responses, newest first: the score before and after. */
function resultsTable(results) {
  if (!results.length) return h('p', { class: 'hint' }, 'No probe run yet.');
  return h(
    'table',
    { class: 'meta', id: 'probe-results' },
    headRow(['probe', 'response', 'before', 'after', 'Δ', '']),
    h(
      'tbody',
      {},
      results.map((r) =>
        h(
          'tr',
          {},
          h('td', {}, r.label),
          h('td', {}, `${r.model} · ${r.session}`),
          h('td', { class: 'num' }, fmt(r.before, r.probe === 'position' ? 3 : 2)),
          h('td', { class: 'num' }, fmt(r.after, r.probe === 'position' ? 3 : 2)),
          h('td', { class: 'num' }, signed(r.after - r.before, r.probe === 'position' ? 3 : 2)),
          h('td', { class: 'hint' }, probeNote(r)),
        ),
      ),
    ),
  );
}

function probeNote(r) {
  const d = r.detail || {};
  if (r.probe === 'position') {
    const firstWins = r.before > 0.5;
    const secondWins = r.after > 0.5;
    return `p(this better) shown first ${fmt(r.before, 2)}, shown second ${fmt(r.after, 2)} vs ${d.other}: ${firstWins === secondWins ? 'the same verdict in both orders' : 'the verdict follows the position'}`;
  }
  if (d.unchanged) return 'the text has nothing to change (one sentence)';
  if (d.item) return d.p != null ? `${d.item}: p(Yes) ${fmt(d.p, 3)}` : d.item;
  if (d.prompt) return `prompt: ${d.prompt}`;
  if (d.judge) return `judge: ${d.judge}`;
  return '';
}

/** A line per probe run on every graded response: how often and how much it moved the scores. */
function reportTable(report) {
  if (!report.length) return h('p', { class: 'hint' }, 'Press "All" beside a probe.');
  return h(
    'table',
    { class: 'meta', id: 'probe-report' },
    headRow(['probe', 'responses', 'mean Δ [95% CI]', 'raised', 'lowered', 'unchanged', 'summary']),
    h(
      'tbody',
      {},
      report.map((r) => h('tr', {}, h('td', {}, r.label), ...reportCells(r))),
    ),
  );
}

function reportCells(r) {
  const s = r.summary;
  if (!s) return [h('td', { colspan: 6 }, 'nothing to probe')];
  const ci = s.mean_delta_ci
    ? ` [${signed(s.mean_delta_ci.lower, r.probe === 'position' ? 3 : 2)}, ${signed(s.mean_delta_ci.upper, r.probe === 'position' ? 3 : 2)}]`
    : '';
  if (r.probe === 'position') {
    const p = s.position;
    return [
      h('td', { class: 'num' }, s.n),
      h('td', { class: 'num' }, `${signed(s.mean_delta, 3)}${ci}`),
      h('td', { colspan: 3, class: 'num' }, `consistent in ${pct(p.consistency)}`),
      h(
        'td',
        {},
        `The verdict stayed the same with the order swapped in ${pct(p.consistency)} of ${s.n} pairs (${p.flips} flipped); the first-shown response's p(better) was ${signed(p.first_position_shift, 3)} above ½ on average.`,
      ),
    ];
  }
  return [
    h('td', { class: 'num' }, s.n),
    h('td', { class: 'num' }, `${signed(s.mean_delta)}${ci}`),
    h('td', { class: 'num' }, pct(s.raised)),
    h('td', { class: 'num' }, pct(s.lowered)),
    h('td', { class: 'num' }, pct(s.unchanged)),
    h(
      'td',
      {},
      `${r.label} ${s.mean_delta >= 0 ? 'raised' : 'lowered'} scores by ${fmt(Math.abs(s.mean_delta))} on average; it raised them in ${pct(s.raised)} of ${s.n} responses and lowered them in ${pct(s.lowered)}.`,
    ),
  ];
}
