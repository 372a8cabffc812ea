// The Results card's item inspector tab: one query's checklist with each model's p(Yes) per item, the
// query and a model's response side by side, and the checklist editor.

import { h, mount, fmt, scrollable } from '../lib/dom.js';
import { heat } from '../lib/charts.js';
import { responseOf } from './educator/index.js';
import { ui, view } from './results-state.js';
import { checklistEditor } from './checklist-editor.js';

export async function inspector(body, ctx, judge, rerender) {
  const queries = ctx.state.benchmark ? ctx.state.benchmark.queries : [];
  const graded = new Set(ctx.graded.map((j) => j.session_id));
  const options = queries.filter((q) => graded.has(q.session_id));
  if (!options.length) return mount(body, h('p', { class: 'hint' }, 'No graded queries yet.'));
  if (!ui.query || !graded.has(ui.query)) ui.query = options[0].session_id;
  const q = queries.find((x) => x.session_id === ui.query);
  const sel = querySelect(options, rerender);
  const js = (await view(ctx, judge, 'query', { session: ui.query })).sort((a, b) =>
    a.model_test.localeCompare(b.model_test),
  );
  // Each response's score, core's (mean p(Yes) on 1–10), by model.
  const { scores: all } = await view(ctx, judge, 'scores');
  const score = new Map(all.filter((x) => x.session_id === ui.query).map((x) => [x.model_test, x.score]));
  if (!ui.model || !js.some((j) => j.model_test === ui.model)) ui.model = js[0].model_test;
  const grid = itemGrid(q, js, score, rerender);
  const resp = responseOf(ctx, ui.model, ui.query);
  const editor = ui.editing
    ? checklistEditor(q, ctx, () => {
        ui.editing = false;
        rerender();
      })
    : null;
  mount(
    body,
    h(
      'div',
      { class: 'row' },
      h('label', {}, 'Query ', sel),
      h(
        'button',
        {
          id: 'edit-checklist',
          onclick: () => {
            ui.editing = !ui.editing;
            rerender();
          },
        },
        ui.editing ? 'Close editor' : 'Edit checklist',
      ),
    ),
    h(
      'div',
      { class: 'inspect' },
      h(
        'div',
        {},
        h('h3', {}, 'User query'),
        h('pre', { class: 'text', id: 'query-text', ...scrollable('User query') }, conversationText(q)),
        h('div', { class: 'scroll' }, grid),
        editor,
      ),
      h(
        'div',
        {},
        h('h3', {}, `Response of ${ui.model}`),
        h(
          'pre',
          { class: 'text', id: 'response-text', ...scrollable(`Response of ${ui.model}`) },
          resp ? resp.output[0] : '(response not loaded)',
        ),
      ),
    ),
    h(
      'p',
      { class: 'hint' },
      'Each cell is p(Yes)/(p(Yes)+p(No)) for the item; blue = yes, red = no. Text is shown exactly as uploaded, as text.',
    ),
  );
}

/** The menu of graded queries (`options`); another query redraws the card with its first model. */
function querySelect(options, rerender) {
  const sel = h(
    'select',
    { id: 'inspect-query', class: 'quotes', 'aria-label': 'Query' },
    options.map((o) =>
      h(
        'option',
        { value: o.session_id, selected: o.session_id === ui.query },
        `${o.session_id}${o.category ? ` (${o.category})` : ''}: ${o.conversation_input[o.conversation_input.length - 1].content.slice(0, 80)}`,
      ),
    ),
  );
  sel.addEventListener('change', () => {
    ui.query = sel.value;
    ui.model = null;
    rerender();
  });
  return sel;
}

/**
 * The grid of `q`'s checklist items by model (judgments `js`): each cell the item's p(Yes), the last
 * row each response's score; a model's name selects its response.
 */
function itemGrid(q, js, score, rerender) {
  return h(
    'table',
    { class: 'inspector', id: 'inspector-grid' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', {}, 'checklist item'),
        js.map((j) =>
          h(
            'th',
            {},
            h(
              'button',
              {
                class: `link ${j.model_test === ui.model ? 'selected' : ''}`,
                onclick: () => {
                  ui.model = j.model_test;
                  rerender();
                },
              },
              j.model_test,
            ),
          ),
        ),
      ),
    ),
    h(
      'tbody',
      {},
      q.checklist.map((item, i) =>
        h(
          'tr',
          {},
          h('td', { class: 'item' }, `${i + 1}. ${item}`),
          js.map((j) => {
            const p = j.norm_probability[i];
            return h(
              'td',
              {
                class: 'num heat',
                style: { background: heat(p) },
                title: `p(Yes) = ${p == null ? 'not graded' : p.toFixed(4)}`,
              },
              p == null ? '–' : p.toFixed(2),
            );
          }),
        ),
      ),
      h(
        'tr',
        { class: 'total' },
        h('td', {}, 'score (mean·9+1)'),
        js.map((j) => {
          const x = score.get(j.model_test);
          return h('td', { class: 'num' }, x == null ? '–' : fmt(x));
        }),
      ),
    ),
  );
}

function conversationText(q) {
  return q.conversation_input.map((m) => `${m.role.toUpperCase()}: ${m.content}`).join('\n\n');
}
