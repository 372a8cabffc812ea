// What the educator views share: the query and response selectors over the graded responses, a
// loaded response by model and query, the hint when no judge is loaded, and a table's header row.

import { h, mount } from '../../lib/dom.js';

/** Query and model selectors over the responses `judge` has graded; sets ui.query / ui.model. */
export function responsePicker(ctx, ui, rerender) {
  const queries = ctx.state.benchmark ? ctx.state.benchmark.queries : [];
  const graded = new Set(ctx.graded.map((j) => j.session_id));
  const options = queries.filter((q) => graded.has(q.session_id));
  if (!options.length) return null;
  if (!ui.query || !graded.has(ui.query)) ui.query = options[0].session_id;
  const models = ctx.graded
    .filter((j) => j.session_id === ui.query)
    .map((j) => j.model_test)
    .sort();
  if (!ui.model || !models.includes(ui.model)) ui.model = models[0];
  const qs = h(
    'select',
    { id: 'pick-query', class: 'quotes', 'aria-label': 'Query' },
    options.map((o) =>
      h(
        'option',
        { value: o.session_id, selected: o.session_id === ui.query },
        `${o.session_id}: ${o.conversation_input[o.conversation_input.length - 1].content.slice(0, 70)}`,
      ),
    ),
  );
  qs.addEventListener('change', () => {
    ui.query = qs.value;
    rerender();
  });
  const ms = h(
    'select',
    { id: 'pick-model', 'aria-label': 'Model' },
    models.map((m) => h('option', { value: m, selected: m === ui.model }, m)),
  );
  ms.addEventListener('change', () => {
    ui.model = ms.value;
    rerender();
  });
  const query = queries.find((q) => q.session_id === ui.query);
  return {
    row: h('div', { class: 'row' }, h('label', {}, 'Query ', qs), h('label', {}, 'Response of ', ms)),
    query,
    model: ui.model,
    response: responseOf(ctx, ui.model, ui.query),
    models,
  };
}

/** `model`'s loaded response to `session`, or null. */
export function responseOf(ctx, model, session) {
  for (const r of ctx.state.responses) {
    if (r.model !== model) continue;
    const x = r.records.find((y) => y.session_id === session);
    if (x) return x;
  }
  return null;
}

/** True (and a hint in `body`) when no judge is loaded: the view needs it to `what`. */
export function needJudge(ctx, body, what) {
  if (ctx.state.judge) return false;
  mount(body, h('p', { class: 'hint' }, `Load the judge that graded these responses to ${what}.`));
  return true;
}

/** The hint, under the selectors when there are any, that there is no graded response with its text. */
export function noResponse(body, pick) {
  return mount(body, pick ? pick.row : null, h('p', { class: 'hint' }, 'No graded response with its text loaded.'));
}

/** A table's header: one row of column names. */
export function headRow(columns) {
  return h(
    'thead',
    {},
    h(
      'tr',
      {},
      columns.map((c) => h('th', {}, c)),
    ),
  );
}
