// The Results card's leaderboard tab: the ranking by the chosen method with 95% bootstrap intervals,
// how many neighbouring pairs the judge separates, and the intervals drawn as a chart.

import { h, mount, fmt } from '../lib/dom.js';
import { chart, tip } from '../lib/charts.js';
import { trustNote } from '../lib/manifest.js';
import { ui, view } from './results-state.js';
import { decodingControls } from './decoding.js';

const METHOD_LABELS = {
  bt: 'Bradley–Terry (Elo scale)',
  mean: 'Mean score (1–10)',
  median: 'Median score',
  winrate: 'Win rate',
  elo: 'Online Elo (order-dependent)',
};

export async function leaderboard(body, ctx, judge, rerender) {
  const m = ui.settings.method;
  const method = methodMenu(m, rerender);
  const decoding = decodingControls(rerender);
  const ranking = await view(ctx, judge, 'leaderboard', { settings: ui.settings });
  ctx.lastRanking = ranking;
  const digits = m === 'winrate' ? 3 : m === 'mean' || m === 'median' ? 2 : 0;
  const plot = h('div', {
    class: 'chart',
    id: 'ci-plot',
    role: 'img',
    'aria-label': 'Ratings with 95% confidence intervals',
  });
  mount(
    body,
    h(
      'div',
      { class: 'row' },
      h('label', {}, 'Method ', method),
      ...decoding,
      h(
        'span',
        { class: 'hint' },
        `judge ${judge} · ${ctx.graded.length} graded responses · 95% bootstrap intervals over queries (${ui.settings.bootstrap} resamples)`,
      ),
    ),
    ranking.order_dependent
      ? h(
          'p',
          { class: 'notice warn' },
          'Online Elo depends on the order of the battles; Bradley–Terry gives the same information without that dependence.',
        )
      : null,
    separation(ranking),
    rankingTable(ranking, m, digits),
    plot,
    trustLine(trustNote(ctx.state.manifest, judge)),
  );
  chart(plot, intervalChart(ranking, m, digits));
}

/** How far to trust the judge, in words; where its figures were measured on hover. */
function trustLine(trust) {
  return h('p', { class: 'hint', id: 'trust-note', title: trust.measured }, trust.text);
}

/** The ranking method menu; a new method redraws the card. */
function methodMenu(m, rerender) {
  const method = h(
    'select',
    { id: 'rank-method', 'aria-label': 'Ranking method' },
    ui.methods.map((v) => h('option', { value: v, selected: m === v }, METHOD_LABELS[v] || v)),
  );
  method.addEventListener('change', () => {
    ui.settings = { ...ui.settings, method: method.value };
    rerender();
  });
  return method;
}

/** The leaderboard table: rank, model, score (`digits` decimals) with its interval, responses, notes. */
function rankingTable(ranking, m, digits) {
  return h(
    'table',
    { class: 'leaderboard', id: 'leaderboard' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['#', 'model', m === 'bt' || m === 'elo' ? 'rating' : 'score', '95% CI', 'responses', ''].map((c) =>
          h('th', {}, c),
        ),
      ),
    ),
    h(
      'tbody',
      {},
      ranking.entries.map((e) =>
        h(
          'tr',
          {},
          h('td', { class: 'num' }, e.rank),
          h('td', {}, e.model),
          h('td', { class: 'num score' }, fmt(e.score, digits)),
          h('td', { class: 'num' }, e.lower == null ? '–' : `${fmt(e.lower, digits)} – ${fmt(e.upper, digits)}`),
          h('td', { class: 'num' }, e.responses),
          h('td', { class: 'hint' }, (e.notes || []).join('; ')),
        ),
      ),
    ),
  );
}

/** The chart of each model's score and 95% interval, the first model on top. */
function intervalChart(ranking, m, digits) {
  const rev = [...ranking.entries].reverse();
  const lo = Math.min(...rev.map((e) => e.lower ?? e.score));
  const hi = Math.max(...rev.map((e) => e.upper ?? e.score));
  const pad = (hi - lo) * 0.05 || 1;
  return {
    grid: { left: 150, right: 30, top: 20, bottom: 40 },
    xAxis: {
      type: 'value',
      min: lo - pad,
      max: hi + pad,
      axisLabel: { formatter: (v) => fmt(v, digits), showMinLabel: false, showMaxLabel: false },
      name: m === 'bt' || m === 'elo' ? 'rating (Elo scale)' : m === 'winrate' ? 'win rate' : 'score (1–10)',
      nameLocation: 'middle',
      nameGap: 28,
    },
    yAxis: { type: 'category', data: rev.map((e) => e.model) },
    tooltip: {
      trigger: 'item',
      formatter: (p) => {
        const e = rev[p.dataIndex];
        return tip(e.model, `${fmt(e.score, digits)} (95% CI ${fmt(e.lower, digits)} – ${fmt(e.upper, digits)})`);
      },
    },
    series: [
      {
        type: 'custom',
        renderItem: intervalBar,
        data: rev.map((e, i) => [i, e.lower ?? e.score, e.upper ?? e.score]),
        encode: { y: 0 },
      },
      { type: 'scatter', data: rev.map((e, i) => [e.score, i]), symbolSize: 10, itemStyle: { color: '#1e3a8a' } },
    ],
  };
}

/** One interval of the chart (ECharts' custom series): a line from lower to upper with a tick at each end. */
function intervalBar(params, api) {
  const y = api.coord([0, api.value(0)])[1];
  const lo = api.coord([api.value(1), 0])[0];
  const hi = api.coord([api.value(2), 0])[0];
  return {
    type: 'group',
    children: [
      { type: 'line', shape: { x1: lo, y1: y, x2: hi, y2: y }, style: { stroke: '#2563eb', lineWidth: 2 } },
      {
        type: 'line',
        shape: { x1: lo, y1: y - 6, x2: lo, y2: y + 6 },
        style: { stroke: '#2563eb', lineWidth: 2 },
      },
      {
        type: 'line',
        shape: { x1: hi, y1: y - 6, x2: hi, y2: y + 6 },
        style: { stroke: '#2563eb', lineWidth: 2 },
      },
    ],
  };
}

/**
 * How many neighbouring pairs of the leaderboard the judge separates, as core's rank says by the live
 * leaderboard's rule (`ranking.rule`, `ranking.separated`); a warning when it separates none.
 */
function separation(ranking) {
  const { separated = [], rule } = ranking;
  if (!separated.length) return null;
  const n = separated.filter(Boolean).length;
  const how = `ordered alike in at least ${Math.round(rule.level * 100)}% of bootstrap resamples of the queries, on at least ${rule.minQueries} shared queries`;
  if (!n) {
    return h(
      'p',
      { class: 'notice warn', id: 'separation' },
      `The judge separates none of the ${separated.length} neighbouring pairs (${how}): the order below is not yet a ranking, however far apart the ratings look.`,
    );
  }
  return h(
    'p',
    { class: 'hint', id: 'separation' },
    `${n} of ${separated.length} neighbouring pairs are separated (${how}); the others are too close to call.`,
  );
}
