// The Results card's per-category tab: each model's mean response score in each query category, as
// a table coloured by the score.

import { h, mount, fmt } from '../lib/dom.js';
import { heat } from '../lib/charts.js';
import { view } from './results-state.js';

export async function categories(body, ctx, judge) {
  const categories = Object.fromEntries(
    (ctx.state.benchmark ? ctx.state.benchmark.queries : [])
      .filter((q) => q.category)
      .map((q) => [q.session_id, q.category]),
  );
  const t = await view(ctx, judge, 'categories', { categories });
  mount(
    body,
    h(
      'p',
      { class: 'hint', id: 'category-hint' },
      `Mean response score (1–10) in each of ${t.categories.length} categories. Few responses per cell make these noisy.${t.categories.length > 3 ? ' On a narrow screen the table scrolls sideways; the shaded edge has more.' : ''}`,
    ),
    h(
      'div',
      { class: 'scroll' },
      h(
        'table',
        { class: 'categories', id: 'category-table' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', {}, 'model'),
            t.categories.map((c) => h('th', {}, c)),
          ),
        ),
        h(
          'tbody',
          {},
          t.models.map((model, i) =>
            h(
              'tr',
              {},
              h('td', {}, model),
              t.means[i].map((v) =>
                h('td', { class: 'num heat', style: { background: heat(v == null ? null : (v - 1) / 9) } }, fmt(v, 2)),
              ),
            ),
          ),
        ),
      ),
    ),
  );
}
