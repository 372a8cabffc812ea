// The "Calibrate" view (a tab of Results): the user's own labels (scores and preferences, kept in this
// browser, imported and exported as JSON Lines) refit RocketEval's supervised scorer, and the ranking
// before and after is shown side by side (view `calibration`).

import { h, mount, download, fmt, messagesBeside, messageSlot } from '../../lib/dom.js';
import { chart, tip } from '../../lib/charts.js';
import * as db from '../../lib/db.js';
import { uploadControl, UploadError } from '../../lib/upload.js';
import { responsePicker, headRow } from './shared.js';

/** The user's labels refit RocketEval's supervised scorer; the ranking before and after. */
export async function calibrate(body, ctx, { ui, rerender, settings, judge }) {
  ctx.state.labels ||= (await db.get('inputs', 'labels')) || [];
  const labels = ctx.state.labels;
  const save = async () => {
    await db.put('inputs', labels, 'labels');
    rerender();
  };
  const pick = responsePicker(ctx, ui, rerender);
  if (!pick) return mount(body, h('p', { class: 'hint' }, 'No graded responses yet.'));
  const { scores } = await ctx.engine.request('view', { view: 'scores', judge, scope: ctx.scope });
  const ours = new Map(scores.filter((x) => x.session_id === ui.query).map((x) => [x.model_test, x.score]));
  const labelProblem = messageSlot('label-problem');
  const kit = { ctx, ui, rerender, labels, save, labelProblem };
  const scoreRows = pick.models.map((m) => scoreRow(kit, m, ours.get(m)));
  const preference = preferenceRow(kit, pick.models);
  const importer = labelsImport(kit);
  const result = await refit(ctx, ui, labels, judge, settings);
  mount(
    body,
    h(
      'p',
      { class: 'hint' },
      "Label a few responses with your own score (1–10) or preference. RocketEval's supervised scorer then learns, per query, how much each checklist item should count, and blends that with the plain mean by how much your labels on that query differ (α: 0 when they are all equal). Labels stay in this browser; export them as JSONL.",
    ),
    pick.row,
    h(
      'table',
      { class: 'meta', id: 'label-table' },
      headRow(['model', "judge's score", 'your score (1–10)']),
      h('tbody', {}, scoreRows),
    ),
    preference,
    labelProblem,
    h('p', { id: 'label-count' }, `${labels.length} label${labels.length === 1 ? '' : 's'} stored in this browser.`),
    labelList(labels, save),
    labelActions(kit, importer),
    messagesBeside('labels-error', ui.labelsError),
    result ? calibrationResult(result) : null,
  );
}

/** A model's row of the label table: the judge's score (`score`) and the user's, stored on change. */
function scoreRow({ ui, labels, save, labelProblem }, m, score) {
  const label = labels.find((l) => l.session_id === ui.query && l.model_test === m && l.score != null);
  const input = h('input', {
    type: 'number',
    min: 1,
    max: 10,
    step: 0.5,
    size: 4,
    value: label?.score ?? '',
    'aria-label': `your score for ${m}`,
    id: `label-${m}`,
  });
  input.addEventListener('change', async () => {
    const v = input.value === '' ? null : Number(input.value);
    // A value that is not a label leaves the stored label as it was.
    if (v != null && !(v >= 1 && v <= 10))
      return labelProblem.say(`${m}: a score label is a number from 1 to 10, not ${input.value}.`);
    labelProblem.say(null);
    const at = labels.findIndex((l) => l.session_id === ui.query && l.model_test === m && l.score != null);
    if (at >= 0) labels.splice(at, 1);
    if (v != null) {
      labels.push({ session_id: ui.query, model_test: m, score: v, created: new Date().toISOString() });
    }
    await save();
  });
  return h('tr', {}, h('td', {}, m), h('td', { class: 'num' }, fmt(score, 2)), h('td', {}, input));
}

/** Two models of the selected query and a preference between them: A, a tie or B. */
function preferenceRow({ ui, labels, save, labelProblem }, models) {
  const [selA, selB] = ['a', 'b'].map((s, k) =>
    h(
      'select',
      { id: `pref-model-${s}`, 'aria-label': `model ${s.toUpperCase()}` },
      models.map((m, i) => h('option', { value: m, selected: i === k }, m)),
    ),
  );
  const prefer = (winner) => async () => {
    if (selA.value === selB.value)
      return labelProblem.say('A preference compares two different models: choose another model A or B.');
    labels.push({
      session_id: ui.query,
      model_a: selA.value,
      model_b: selB.value,
      winner,
      created: new Date().toISOString(),
    });
    await save();
  };
  return h(
    'div',
    { class: 'row' },
    'Preference on this query: ',
    selA,
    ' vs ',
    selB,
    h('button', { id: 'pref-a', onclick: prefer('model_a') }, 'A is better'),
    h('button', { id: 'pref-tie', onclick: prefer('tie') }, 'Tie'),
    h('button', { id: 'pref-b', onclick: prefer('model_b') }, 'B is better'),
  );
}

/** The labels file control: its labels are added to the stored ones; a problem goes to ui.labelsError. */
function labelsImport({ ctx, ui, rerender, labels, save }) {
  return uploadControl(
    { id: 'labels-file', accept: '.jsonl,.json', label: 'Import labels', expect: 'jsonl' },
    {
      use: async (f, bytes) => {
        ui.labelsError = null;
        const read = await ctx.engine.core('parseLabels', f.name, bytes);
        if (!read.length) throw new UploadError(`${f.name} holds no labels.`);
        labels.push(...read);
        await save();
      },
      failed: (message) => {
        ui.labelsError = message;
        rerender();
      },
    },
  );
}

/** The stored labels, each with a button that removes it (none when there are none). */
function labelList(labels, save) {
  if (!labels.length) return null;
  return h(
    'details',
    {},
    h('summary', {}, 'Your labels'),
    h(
      'ul',
      {},
      labels.map((l, i) =>
        h(
          'li',
          {},
          l.score != null
            ? `${l.session_id} · ${l.model_test}: ${l.score}`
            : `${l.session_id} · ${l.model_a} vs ${l.model_b}: ${l.winner}`,
          ' ',
          h(
            'button',
            {
              class: 'link',
              onclick: async () => {
                labels.splice(i, 1);
                await save();
              },
            },
            'remove',
          ),
        ),
      ),
    ),
  );
}

/** Refit (which shows the ranking before and after), export the labels, import labels. */
function labelActions({ ctx, ui, rerender, labels }, importer) {
  return h(
    'div',
    { class: 'row' },
    h(
      'button',
      {
        class: 'primary',
        id: 'refit',
        disabled: !labels.length,
        onclick: () => {
          ui.calibrated = true;
          rerender();
        },
      },
      'Refit and compare rankings',
    ),
    h(
      'button',
      {
        id: 'export-labels',
        disabled: !labels.length,
        onclick: async () =>
          download(`rocketjudge-labels.jsonl`, await ctx.engine.core('labelsJsonl', labels), 'application/jsonl'),
      },
      'Export labels (JSONL)',
    ),
    h('label', {}, 'Import labels (JSON Lines, one score or preference per line): ', importer),
  );
}

/** The calibration once the user has asked for it and there are labels: the view, or its error; else null. */
async function refit(ctx, ui, labels, judge, settings) {
  if (!(ui.calibrated && labels.length)) return null;
  try {
    return await ctx.engine.request('view', { view: 'calibration', judge, labels, settings, scope: ctx.scope });
  } catch (e) {
    return { error: e.message };
  }
}

/** The ranking before and after calibration (chart and table), and each query's weight α. */
function calibrationResult(c) {
  if (c.error) return h('p', { class: 'notice error' }, c.error);
  const plot = h('div', {
    class: 'chart',
    id: 'calibration-plot',
    role: 'img',
    'aria-label': 'Ratings with 95% intervals before and after calibration',
  });
  requestAnimationFrame(() => ciChart(plot, c.changes));
  return h(
    'div',
    { id: 'calibration-result' },
    h('h3', {}, 'Ranking before and after'),
    plot,
    calibrationTable(c.changes),
    h(
      'p',
      { class: 'hint' },
      `${c.labels_used} label${c.labels_used === 1 ? '' : 's'} used. Per query, the weight α of the fitted predictor:`,
    ),
    h(
      'ul',
      { id: 'calibration-alpha' },
      c.queries.map((q) =>
        h(
          'li',
          {},
          `${q.session_id}: ${q.labels} label${q.labels === 1 ? '' : 's'}, α = ${fmt(q.alpha, 2)}${q.trained ? '' : ' (not trained)'}${itemWeights(q.importance)}`,
        ),
      ),
    ),
    c.problems?.length
      ? h(
          'ul',
          {},
          c.problems.map((p) => h('li', { class: p.severity }, `${p.session_id}: ${p.message}`)),
        )
      : null,
  );
}

/** Each model's rank, score, 95% interval and its width, before → after. */
function calibrationTable(changes) {
  const width = (lo, hi) => (lo == null ? null : hi - lo);
  return h(
    'table',
    { class: 'leaderboard', id: 'calibration-table' },
    headRow(['model', 'rank', 'score', '95% CI before', '95% CI after', 'CI width']),
    h(
      'tbody',
      {},
      changes.map((r) =>
        h(
          'tr',
          {},
          h('td', {}, r.model),
          h('td', { class: 'num' }, `${r.rank_before} → ${r.rank_after}`),
          h('td', { class: 'num' }, `${fmt(r.score_before, 2)} → ${fmt(r.score_after, 2)}`),
          h(
            'td',
            { class: 'num' },
            r.lower_before == null ? '–' : `${fmt(r.lower_before, 2)} – ${fmt(r.upper_before, 2)}`,
          ),
          h(
            'td',
            { class: 'num' },
            r.lower_after == null ? '–' : `${fmt(r.lower_after, 2)} – ${fmt(r.upper_after, 2)}`,
          ),
          h(
            'td',
            { class: 'num' },
            `${fmt(width(r.lower_before, r.upper_before), 2)} → ${fmt(width(r.lower_after, r.upper_after), 2)}`,
          ),
        ),
      ),
    ),
  );
}

/**
 * The items a query's predictor leans on most (seed 000's item reweighting):
 * "; items by weight: 2 (0.71), 1 (0.29)".
 */
function itemWeights(importance) {
  const top = (importance || [])
    .map((w, i) => [i + 1, w])
    .filter(([, w]) => w > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3);
  return top.length ? `; items by weight: ${top.map(([i, w]) => `${i} (${fmt(w, 2)})`).join(', ')}` : '';
}

/** Each model's rating and 95% interval before (grey) and after (blue) calibration, best first. */
function ciChart(el, changes) {
  const rows = [...changes].reverse();
  // Each series draws in its own visual colour, the one its legend entry shows.
  const series = (key, color, offset) => ({
    type: 'custom',
    name: key,
    itemStyle: { color },
    renderItem: (params, api) => {
      const drawn = api.visual('color');
      const y = api.coord([0, api.value(0)])[1] + offset;
      const [lo, hi, mid] = [
        api.coord([api.value(1), 0])[0],
        api.coord([api.value(2), 0])[0],
        api.coord([api.value(3), 0])[0],
      ];
      return {
        type: 'group',
        children: [
          { type: 'line', shape: { x1: lo, y1: y, x2: hi, y2: y }, style: { stroke: drawn, lineWidth: 2 } },
          { type: 'circle', shape: { cx: mid, cy: y, r: 4 }, style: { fill: drawn } },
        ],
      };
    },
    data: rows.map((r, i) => [
      i,
      r[`lower_${key}`] ?? r[`score_${key}`],
      r[`upper_${key}`] ?? r[`score_${key}`],
      r[`score_${key}`],
    ]),
    encode: { y: 0, x: [1, 2] },
  });
  chart(el, {
    animation: false,
    grid: { left: 190, right: 30, top: 30, bottom: 40 },
    legend: { data: ['before', 'after'], top: 0 },
    // Labels that would overlap (a phone's narrow plot) are left out rather than drawn over each other.
    xAxis: {
      type: 'value',
      scale: true,
      name: 'rating',
      nameLocation: 'middle',
      nameGap: 26,
      axisLabel: { hideOverlap: true },
    },
    yAxis: {
      type: 'category',
      data: rows.map((r) => r.model),
      axisLabel: { width: 180, overflow: 'truncate', hideOverlap: true },
    },
    tooltip: {
      trigger: 'item',
      formatter: (p) => {
        const r = rows[p.value[0]];
        return tip(
          r.model,
          `before ${fmt(r.score_before, 2)} (${fmt(r.lower_before, 2)} – ${fmt(r.upper_before, 2)})`,
          `after ${fmt(r.score_after, 2)} (${fmt(r.lower_after, 2)} – ${fmt(r.upper_after, 2)})`,
        );
      },
    },
    series: [series('before', '#9ca3af', -5), series('after', '#1d4ed8', 5)],
  });
}
