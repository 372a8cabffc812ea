// The Results card's score-distributions tab: each model's response scores as a box plot, and how
// often repeated sampled answers to an item would disagree (seed 000's ratio of disagreement).

import { h, mount, fmt } from '../lib/dom.js';
import { chart, tip } from '../lib/charts.js';
import { view } from './results-state.js';

export async function distributions(body, ctx, judge) {
  const [d, r] = await Promise.all([view(ctx, judge, 'distributions'), view(ctx, judge, 'disagreement')]);
  const models = d.map((x) => x.model);
  const box = d.map((x) => [x.min, x.q1, x.median, x.q3, x.max]);
  const el = h('div', {
    class: 'chart tall',
    id: 'dist-plot',
    role: 'img',
    'aria-label': 'Distribution of response scores per model',
  });
  // Seed 000's ratio of disagreement: how often repeated Yes/No answers to an item would differ.
  mount(
    body,
    h('p', { class: 'hint' }, 'Response scores (mean p(Yes) on 1–10) per model: box = quartiles, whiskers = range.'),
    el,
    h('h3', {}, 'How unsure the judge is, item by item'),
    h(
      'p',
      { class: 'hint' },
      `If each of the ${r[0]?.items ?? 0} graded items were answered N times by sampling Yes or No at temperature 1, the share of items whose answers would not all agree (exact, from each item's p(Yes); RocketEval's Fig. 4 measures this for sampled judges).`,
    ),
    h(
      'table',
      { class: 'meta', id: 'disagreement-table' },
      h('thead', {}, h('tr', {}, h('th', {}, 'samples N'), h('th', {}, 'items that would not agree'))),
      h(
        'tbody',
        {},
        r.map((x) =>
          h('tr', {}, h('td', { class: 'num' }, x.samples), h('td', { class: 'num' }, `${fmt(100 * x.ratio, 1)}%`)),
        ),
      ),
    ),
  );
  chart(el, {
    grid: { left: 150, right: 30, top: 20, bottom: 40 },
    xAxis: { type: 'value', min: 1, max: 10, name: 'response score', nameLocation: 'middle', nameGap: 28 },
    yAxis: { type: 'category', data: models },
    tooltip: {
      trigger: 'item',
      formatter: (p) => {
        const q = box[p.dataIndex];
        return tip(
          models[p.dataIndex],
          `min ${fmt(q[0])} · Q1 ${fmt(q[1])} · median ${fmt(q[2])} · Q3 ${fmt(q[3])} · max ${fmt(q[4])}`,
        );
      },
    },
    series: [{ type: 'boxplot', data: box, itemStyle: { color: '#dbeafe', borderColor: '#1e3a8a' } }],
  });
}
