// The Results card's win-rates tab: each pair of models' win rate over the queries both answered, as
// a heatmap (and a hidden table of the same numbers).

import { h, mount, fmt } from '../lib/dom.js';
import { chart, tip } from '../lib/charts.js';
import { ui, view } from './results-state.js';

export async function heatmap(body, ctx, judge) {
  const w = await view(ctx, judge, 'winRates', { settings: ui.settings });
  const models = w.models;
  const data = w.cells.map((c) => [c.col, c.row, c.win_rate, c.battles]);
  const el = h('div', { class: 'chart tall', id: 'heatmap', role: 'img', 'aria-label': 'Pairwise win rates' });
  mount(
    body,
    h(
      'p',
      { class: 'hint' },
      `Row model's win rate against column model over the queries both answered (score differences under ${w.tie_margin} are ties, counted as half).`,
    ),
    h(
      'table',
      { class: 'hidden-data', id: 'win-rates', hidden: true },
      h(
        'tbody',
        {},
        w.cells.map((c) =>
          h(
            'tr',
            {},
            h('td', {}, models[c.row]),
            h('td', {}, models[c.col]),
            h('td', {}, String(c.win_rate)),
            h('td', {}, String(c.battles)),
          ),
        ),
      ),
    ),
    el,
  );
  // Model names under the columns: slanted where a column is wide enough for them, else upright, so
  // that neighbours never overlap (on a phone a column is some 30 px).
  const grid = { left: 150, right: 80, top: 20, bottom: 110 };
  const column = (el.clientWidth - grid.left - grid.right) / Math.max(models.length, 1);
  chart(el, {
    grid,
    xAxis: { type: 'category', data: models, axisLabel: { rotate: column < 70 ? 90 : 40 } },
    yAxis: { type: 'category', data: models },
    // The colour follows the win rate (the cell's third value; the fourth is its query count).
    visualMap: {
      dimension: 2,
      min: 0,
      max: 1,
      calculable: true,
      orient: 'vertical',
      right: 0,
      top: 'center',
      inRange: { color: ['#b91c1c', '#f8fafc', '#1d4ed8'] },
    },
    tooltip: {
      formatter: (p) =>
        tip(
          `${models[p.value[1]]} vs ${models[p.value[0]]}`,
          `win rate ${fmt(p.value[2], 3)} over ${p.value[3]} queries`,
        ),
    },
    series: [{ type: 'heatmap', data, label: { show: models.length <= 10, formatter: (p) => fmt(p.value[2], 2) } }],
  });
}
