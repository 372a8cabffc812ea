// Result views: leaderboard with CIs, per-category table, CI plot, score distributions, pairwise
// win-rate heatmap, item inspector (with checklist editing), comparison with a reference ranking,
// exports. Charts are ECharts (vendored); tooltips are built as DOM text, never HTML strings.

import { h, mount, download, fmt, scrollable, messagesBeside, messageSlot } from './lib/dom.js';
import { chart, takeCharts, retiredCharts, tip, heat } from './lib/charts.js';
import { readUpload, plainError, UploadError } from './lib/upload.js';
import { checklistChanges } from './lib/checklist.js';
import { trustNote } from './lib/manifest.js';
import { EDU_TABS, EDU_VIEWS, responseOf } from './educator.js';
import { DESIGN_TABS, DESIGN_VIEWS } from './designs.js';

const TABS = [
  ['leaderboard', 'Leaderboard'],
  ['categories', 'Per category'],
  ['distributions', 'Score distributions'],
  ['heatmap', 'Win rates'],
  ['inspector', 'Item inspector'],
  ...EDU_TABS,
  ...DESIGN_TABS,
  ['reference', 'Compare to a reference'],
  ['export', 'Export'],
];

/** The fewest models a bootstrap over models is shown for (fewer resample the same few models). */
const MIN_MODELS_FOR_INTERVAL = 5;

// `settings`: the ranking settings, core's defaults (`rankDefaults`) until the user picks a method.
// `decoding`: how item probabilities become scores (seed 003; null: as graded, the exact expectation).
const ui = {
  tab: 'leaderboard',
  settings: null,
  methods: [],
  decoding: null,
  query: null,
  model: null,
  editing: false,
  // Unsaved checklist edits by query (session_id): {base (the checklist they started from), rows,
  // reply (a pasted reply), redraw (the open editor's list)}. They outlive a redraw of the panel, a
  // tab switch and closing the editor; saving them or "Discard changes" ends them.
  drafts: new Map(),
};
export async function renderResults(el, ctx) {
  if (!el) return;
  const oldCharts = takeCharts();
  // Redraws can overlap (a tab clicked while the worker computes): the newest one wins, older ones
  // give their work up.
  const generation = (el.renderGeneration = (el.renderGeneration || 0) + 1);
  el.querySelectorAll(':scope > .tab-body.staging').forEach((b) => b.remove());
  const tabs = h(
    'div',
    { class: 'tabs', role: 'tablist' },
    TABS.map(([id, label]) =>
      h(
        'button',
        {
          role: 'tab',
          id: `tab-${id}`,
          'aria-selected': ui.tab === id ? 'true' : 'false',
          class: ui.tab === id ? 'active' : '',
          onclick: () => {
            ui.tab = id;
            renderResults(el, ctx);
          },
        },
        label,
      ),
    ),
  );
  const body = h('div', { class: 'tab-body', role: 'tabpanel' });
  // The view on screen stays until the new one is drawn: the new one is drawn out of sight beside it
  // (laid out, so that its charts measure their box) and then takes its place, so a redraw (a new
  // tab, the end of a run) never leaves the card blank while the worker computes.
  const shown = el.querySelector(':scope > .tab-body:not(.staging)');
  const focused = el.contains(document.activeElement) && document.activeElement.id ? document.activeElement.id : null;
  if (shown) {
    // The outgoing view gives up its ids (the new one carries them) and takes no more input.
    shown.querySelectorAll('[id]').forEach((e) => e.removeAttribute('id'));
    shown.inert = true;
    body.classList.add('staging');
    el.append(body);
  } else {
    mount(el, tabs, body);
  }
  try {
    await drawView(body, ctx);
  } finally {
    if (generation !== el.renderGeneration) {
      // (A body that is on screen stays there until the newer view replaces it.)
      if (body.classList.contains('staging')) body.remove();
      retiredCharts.push(...oldCharts);
    } else {
      body.classList.remove('staging');
      mount(el, tabs, body);
      // Keyboard focus stays on the control it was on (a tab, a menu), now the new view's.
      if (focused) document.getElementById(focused)?.focus();
      [...oldCharts, ...retiredCharts.splice(0)].forEach((c) => c.dispose());
    }
  }
}

async function drawView(body, ctx) {
  // The other evaluation designs need no checklist grades, only a judge.
  const design = ui.tab in DESIGN_VIEWS;
  if (!ctx.graded.length && !design) {
    mount(
      body,
      h(
        'p',
        { class: 'hint', id: 'results-empty' },
        ctx.state.grading?.running
          ? 'Grading has started: the live leaderboard is in step 4 above while the run goes on; these views are drawn when it is paused or ends.'
          : 'No grades yet: load a judge and grade some responses (or try another evaluation type).',
      ),
    );
    return;
  }
  const judge = ctx.judge ?? ctx.state.judge?.name;
  try {
    if (!ui.settings) ({ settings: ui.settings, methods: ui.methods } = await ctx.engine.request('rankDefaults'));
    await VIEWS[ui.tab](body, ctx, judge);
  } catch (e) {
    mount(body, h('p', { class: 'notice error' }, e.message));
  }
}

/** A result view of `judge`'s judgments, computed by core in the worker (see `VIEWS` in web/worker/views.js). */
function view(ctx, judge, name, extra = {}) {
  return ctx.engine.request('view', { view: name, judge, ...(ui.decoding ? { decoding: ui.decoding } : {}), ...extra });
}

const DECODINGS = {
  expected: ['Expected p(Yes) (exact)', null],
  greedy: ['Greedy (Yes/No per item)', { method: 'greedy' }],
  sample: ['N samples at temperature T', { method: 'sample', samples: 10, temperature: 1, seed: 0 }],
  majority: ['Majority of N samples (exact)', { method: 'majority', samples: 5, temperature: 1 }],
  median: ['Median of N samples (exact)', { method: 'median', samples: 5, temperature: 1 }],
};

/**
 * The decoding menu, and for sampled decodings their number of samples, temperature and (drawn ones)
 * seed (core checks them).
 */
function decodingControls(rerender) {
  const chosen = ui.decoding ? ui.decoding.method : 'expected';
  const menu = h(
    'select',
    {
      id: 'rank-decoding',
      'aria-label': 'Decoding',
      title:
        'How each answer distribution becomes a number: the exact expectation, the most likely answer, the mean of N answers sampled at temperature T, or (seed 003) the most frequent or the median of N such answers, in exact expectation',
    },
    Object.entries(DECODINGS).map(([v, [label]]) => h('option', { value: v, selected: chosen === v }, label)),
  );
  menu.addEventListener('change', () => {
    ui.decoding = DECODINGS[menu.value][1];
    rerender();
  });
  if (!ui.decoding?.samples) return [h('label', {}, 'Decoding ', menu)];
  const number = (field, label, attrs) => {
    const input = h('input', {
      type: 'number',
      id: `decoding-${field}`,
      'aria-label': label,
      size: 5,
      value: ui.decoding[field],
      ...attrs,
    });
    input.addEventListener('change', () => {
      // A value core would refuse is not applied (every view would show the error instead of results).
      const v = Number(input.value);
      const ok =
        input.value !== '' &&
        (field === 'temperature'
          ? v > 0 && Number.isFinite(v)
          : Number.isInteger(v) && v >= (field === 'samples' ? 1 : 0));
      input.setCustomValidity(
        ok
          ? ''
          : field === 'temperature'
            ? 'a temperature above 0'
            : field === 'samples'
              ? 'a whole number of samples, at least 1'
              : 'a whole number, 0 or more',
      );
      if (!input.reportValidity()) return;
      ui.decoding = { ...ui.decoding, [field]: v };
      rerender();
    });
    return h('label', {}, `${label} `, input);
  };
  const max = chosen === 'majority' ? { max: 10 } : {};
  return [
    h('label', {}, 'Decoding ', menu),
    number('samples', 'N', { min: 1, step: 1, ...max }),
    number('temperature', 'T', { min: 0, step: 'any' }),
    chosen === 'sample' ? number('seed', 'seed', { min: 0, step: 1 }) : null,
  ];
}

const METHOD_LABELS = {
  bt: 'Bradley–Terry (Elo scale)',
  mean: 'Mean score (1–10)',
  median: 'Median score',
  winrate: 'Win rate',
  elo: 'Online Elo (order-dependent)',
};

// The educator and design views get the shared selection (`ui`), a way to redraw, and the ranking settings.
// (The results element is taken now: by the time an asynchronous step redraws, `body` may have been
// replaced by another view's.)
const EDU = Object.fromEntries(
  Object.entries({ ...EDU_VIEWS, ...DESIGN_VIEWS }).map(([name, fn]) => [
    name,
    (body, ctx, judge) => {
      const el = body.parentElement;
      return fn(body, ctx, { ui, judge, settings: ui.settings, rerender: () => renderResults(el, ctx) });
    },
  ]),
);

const VIEWS = {
  ...EDU,
  async leaderboard(body, ctx, judge) {
    const m = ui.settings.method;
    const method = h(
      'select',
      { id: 'rank-method', 'aria-label': 'Ranking method' },
      ui.methods.map((v) => h('option', { value: v, selected: m === v }, METHOD_LABELS[v] || v)),
    );
    method.addEventListener('change', () => {
      ui.settings = { ...ui.settings, method: method.value };
      renderResults(body.parentElement, ctx);
    });
    const decoding = decodingControls(() => renderResults(body.parentElement, ctx));
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
      h(
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
      ),
      plot,
      h('p', { class: 'hint' }, trustNote(ctx.state.manifest, judge)),
    );
    const rev = [...ranking.entries].reverse();
    const lo = Math.min(...rev.map((e) => e.lower ?? e.score));
    const hi = Math.max(...rev.map((e) => e.upper ?? e.score));
    const pad = (hi - lo) * 0.05 || 1;
    chart(plot, {
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
          renderItem: (params, api) => {
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
          },
          data: rev.map((e, i) => [i, e.lower ?? e.score, e.upper ?? e.score]),
          encode: { y: 0 },
        },
        { type: 'scatter', data: rev.map((e, i) => [e.score, i]), symbolSize: 10, itemStyle: { color: '#1e3a8a' } },
      ],
    });
  },

  async categories(body, ctx, judge) {
    const categories = Object.fromEntries(
      (ctx.state.benchmark ? ctx.state.benchmark.queries : [])
        .filter((q) => q.category)
        .map((q) => [q.session_id, q.category]),
    );
    const t = await view(ctx, judge, 'categories', { categories });
    mount(
      body,
      h('p', { class: 'hint' }, 'Mean response score (1–10) per category. Few responses per cell make these noisy.'),
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
                  h(
                    'td',
                    { class: 'num heat', style: { background: heat(v == null ? null : (v - 1) / 9) } },
                    fmt(v, 2),
                  ),
                ),
              ),
            ),
          ),
        ),
      ),
    );
  },

  async distributions(body, ctx, judge) {
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
  },

  async heatmap(body, ctx, judge) {
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
    chart(el, {
      grid: { left: 150, right: 80, top: 20, bottom: 110 },
      xAxis: { type: 'category', data: models, axisLabel: { rotate: 40 } },
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
  },

  async inspector(body, ctx, judge) {
    const queries = ctx.state.benchmark ? ctx.state.benchmark.queries : [];
    const graded = new Set(ctx.graded.map((j) => j.session_id));
    const options = queries.filter((q) => graded.has(q.session_id));
    if (!options.length) return mount(body, h('p', { class: 'hint' }, 'No graded queries yet.'));
    if (!ui.query || !graded.has(ui.query)) ui.query = options[0].session_id;
    const q = queries.find((x) => x.session_id === ui.query);
    const sel = h(
      'select',
      { id: 'inspect-query', 'aria-label': 'Query' },
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
      renderResults(body.parentElement, ctx);
    });
    const js = (await view(ctx, judge, 'query', { session: ui.query })).sort((a, b) =>
      a.model_test.localeCompare(b.model_test),
    );
    // Each response's score, core's (mean p(Yes) on 1–10), by model.
    const { scores: all } = await view(ctx, judge, 'scores');
    const score = new Map(all.filter((x) => x.session_id === ui.query).map((x) => [x.model_test, x.score]));
    if (!ui.model || !js.some((j) => j.model_test === ui.model)) ui.model = js[0].model_test;
    const grid = h(
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
                    renderResults(body.parentElement, ctx);
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
    const resp = responseOf(ctx, ui.model, ui.query);
    const editor = ui.editing
      ? checklistEditor(q, ctx, () => {
          ui.editing = false;
          renderResults(body.parentElement, ctx);
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
              renderResults(body.parentElement, ctx);
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
          grid,
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
  },

  async reference(body, ctx, judge) {
    const input = h('input', {
      type: 'file',
      accept: '.json,.jsonl',
      id: 'reference-file',
      'aria-label': 'Reference ranking',
    });
    input.addEventListener('change', async () => {
      const f = input.files[0];
      ui.referenceError = null;
      try {
        const entries = await ctx.engine.core('parseRanking', f.name, await readUpload(f, 'json-or-jsonl'));
        if (!entries.length) throw new UploadError(`${f.name} holds no ranked models.`);
        ctx.state.reference = { name: f.name, entries };
      } catch (e) {
        ui.referenceError = plainError(e);
      }
      renderResults(body.parentElement, ctx);
    });
    const bundled = h(
      'button',
      {
        id: 'reference-bundled',
        onclick: async () => {
          const r = await fetch('benchmarks/mt-bench/reference-arena-2023.json');
          ctx.state.reference = {
            name: 'Chatbot Arena Elo (LMSYS snapshots, 2023)',
            entries: await ctx.engine.core(
              'parseRanking',
              'reference-arena-2023.json',
              new Uint8Array(await r.arrayBuffer()),
            ),
          };
          renderResults(body.parentElement, ctx);
        },
      },
      'Use Chatbot Arena 2023 (MT-Bench models)',
    );
    const parts = [
      h(
        'div',
        { class: 'row' },
        bundled,
        h(
          'label',
          {},
          'or upload a ranking (a JSON list of models, each with its name and rating, optionally its interval): ',
          input,
        ),
      ),
      messagesBeside('reference-error', ui.referenceError),
    ];
    if (ctx.state.reference) {
      const ours = (
        ctx.lastRanking || (await view(ctx, judge, 'leaderboard', { settings: { ...ui.settings, bootstrap: 200 } }))
      ).entries.map((e) => ({ name: e.model, rating: e.score }));
      try {
        const c = await ctx.engine.core('compareRankings', ours, ctx.state.reference.entries, 1000);
        // A bootstrap over a handful of models resamples the same few models: its interval says nothing.
        const n = c.models.length;
        const est = (e) => {
          if (!e) return '–';
          if (n < MIN_MODELS_FOR_INTERVAL)
            return `${fmt(e.value, 3)} (no interval: ${n} models are too few to resample)`;
          if (e.lower == null) return fmt(e.value, 3);
          if (!(e.upper > e.lower)) return `${fmt(e.value, 3)} (no interval: every resample gave the same value)`;
          return `${fmt(e.value, 3)} [${fmt(e.lower, 3)}, ${fmt(e.upper, 3)}]`;
        };
        parts.push(
          h(
            'table',
            { class: 'meta', id: 'reference-table' },
            h(
              'tbody',
              {},
              h('tr', {}, h('th', {}, 'reference'), h('td', {}, ctx.state.reference.name)),
              h('tr', {}, h('th', {}, 'models compared'), h('td', {}, `${c.models.length}: ${c.models.join(', ')}`)),
              h('tr', {}, h('th', {}, 'Spearman ρ'), h('td', {}, est(c.spearman))),
              h('tr', {}, h('th', {}, 'Kendall τ-b'), h('td', {}, est(c.kendall_tau_b))),
              c.tau_u
                ? h(
                    'tr',
                    {},
                    h('th', {}, 'τ_u (separable pairs)'),
                    h('td', {}, `${est(c.tau_u)} over ${c.tau_u_pairs} pairs`),
                  )
                : null,
            ),
          ),
          c.only_ours.length ? h('p', { class: 'hint' }, `Not in the reference: ${c.only_ours.join(', ')}`) : null,
          h(
            'p',
            { class: 'hint' },
            `Intervals: 95% bootstrap over models, shown from ${MIN_MODELS_FOR_INTERVAL} models on. With few models they are wide; read them before the point value.`,
          ),
        );
      } catch (e) {
        parts.push(h('p', { class: 'notice error' }, e.message));
      }
    }
    mount(body, parts);
  },

  async export(body, ctx, judge) {
    const ranking = ctx.lastRanking || (await view(ctx, judge, 'leaderboard', { settings: ui.settings }));
    const base = `rocketjudge-${judge}`;
    const problem = messageSlot('export-error');
    const btn = (id, label, fn) =>
      h(
        'button',
        {
          id,
          onclick: async () => {
            problem.say(null);
            try {
              await fn();
            } catch (e) {
              problem.say(e.message);
            }
          },
        },
        label,
      );
    mount(
      body,
      h(
        'div',
        { class: 'exports' },
        btn('export-judgments', 'Judgments (RocketEval JSONL)', async () =>
          download(`${base}-judgments.jsonl`, await view(ctx, judge, 'judgmentsJsonl'), 'application/jsonl'),
        ),
        btn('export-scores', 'Scores (CSV)', async () =>
          download(`${base}-scores.csv`, await view(ctx, judge, 'scoresCsv'), 'text/csv'),
        ),
        btn('export-ranking-csv', 'Ranking (CSV)', async () =>
          download(`${base}-ranking.csv`, await view(ctx, judge, 'rankingCsv', { settings: ui.settings }), 'text/csv'),
        ),
        btn('export-ranking-json', 'Ranking (JSON)', async () =>
          download(
            `${base}-ranking.json`,
            JSON.stringify(
              ranking.entries.map((e) => ({
                model: e.model,
                score: e.score,
                lower: e.lower,
                upper: e.upper,
                rank: e.rank,
              })),
              null,
              2,
            ),
          ),
        ),
        btn('export-battles', 'Battles (Chatbot Arena JSON)', async () =>
          download(`${base}-battles.json`, await view(ctx, judge, 'battlesJson', { settings: ui.settings })),
        ),
        btn('export-report', 'Shareable report (aggregates only)', async () =>
          download(
            `${base}-report.json`,
            JSON.stringify(
              {
                tool: 'rocketjudge',
                judge,
                prompt: 'RocketEval checklist grading',
                method: ranking.method,
                ranking: ranking.entries.map((e) => ({
                  model: e.model,
                  score: e.score,
                  lower: e.lower,
                  upper: e.upper,
                  rank: e.rank,
                  responses: e.responses,
                })),
                benchmark: ctx.state.benchmark
                  ? { name: ctx.state.benchmark.name, queries: ctx.state.benchmark.queries.length }
                  : null,
                note: 'Aggregates only: no query, response or checklist text.',
                created: new Date().toISOString(),
              },
              null,
              2,
            ),
          ),
        ),
      ),
      problem,
      h(
        'p',
        { class: 'hint' },
        'Files are made in this tab and saved by your browser; nothing is uploaded. CSV cells that a spreadsheet would run as formulas are neutralised. The command-line tool reads the judgments back: ',
        h('code', {}, 'rocketjudge rank --judgments FILE'),
        '.',
      ),
    );
  },
};

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

/** The editor's rows for the items `texts` (a row keeps its text as the user edits it). */
const itemRows = (texts) => texts.map((text) => ({ text }));

/** The unsaved edits of `q`'s checklist: kept ones while they start from its checklist, else none yet. */
function checklistDraft(q) {
  const kept = ui.drafts.get(q.session_id);
  if (kept && kept.base.length === q.checklist.length && kept.base.every((t, i) => t === q.checklist[i])) return kept;
  const fresh = { base: [...q.checklist], rows: itemRows(q.checklist), reply: '' };
  ui.drafts.set(q.session_id, fresh);
  return fresh;
}

function checklistEditor(q, ctx, close) {
  const draft = checklistDraft(q);
  const { rows } = draft;
  const list = h('ol', { class: 'editor' });
  // Edits land in the draft; a judge that finishes writing after the panel was drawn again fills the
  // editor then shown (`draft.redraw`).
  const redraw = () =>
    mount(
      list,
      rows.map((r, i) =>
        h(
          'li',
          {},
          (() => {
            const inp = h('input', { type: 'text', value: r.text, size: 70, 'aria-label': `item ${i + 1}` });
            inp.addEventListener('input', () => {
              r.text = inp.value;
            });
            return inp;
          })(),
          h(
            'button',
            {
              class: 'link',
              onclick: () => {
                rows.splice(i, 1);
                redraw();
              },
            },
            'remove',
          ),
        ),
      ),
    );
  draft.redraw = redraw;
  redraw();
  // A checklist made by a strong model elsewhere: show RocketEval's creation prompt, parse the reply.
  const promptBox = h('pre', { class: 'text', id: 'creation-prompt', hidden: true });
  const replyProblem = messageSlot('checklist-reply-error');
  const reply = h('textarea', {
    id: 'checklist-reply',
    rows: 5,
    cols: 70,
    placeholder: "Paste the model's reply (a numbered list of questions)",
    'aria-label': 'Checklist reply',
  });
  reply.value = draft.reply;
  reply.addEventListener('input', () => {
    draft.reply = reply.value;
  });
  const create = h(
    'details',
    { class: 'create' },
    h('summary', {}, 'Create the checklist with a strong model elsewhere'),
    h(
      'p',
      { class: 'hint' },
      "Run RocketEval's creation prompt (below) with a strong model of your choice, then paste its reply. Nothing is sent from here.",
    ),
    h(
      'div',
      { class: 'row' },
      h(
        'button',
        {
          id: 'show-creation-prompt',
          onclick: async () => {
            promptBox.textContent = await ctx.engine.core('creationPrompt', q);
            promptBox.hidden = false;
          },
        },
        'Show the prompt',
      ),
      h(
        'button',
        {
          onclick: async () => {
            await navigator.clipboard.writeText(await ctx.engine.core('creationPrompt', q));
            ctx.notice('Creation prompt copied.');
          },
        },
        'Copy it',
      ),
    ),
    promptBox,
    reply,
    replyProblem,
    h(
      'button',
      {
        id: 'use-reply',
        onclick: async () => {
          const items = await ctx.engine.core('parseChecklistReply', reply.value);
          if (!items)
            return replyProblem.say(
              'No numbered questions found in the reply: paste a list such as "1. Does the response …?", one question per line.',
            );
          replyProblem.say(null);
          rows.splice(0, rows.length, ...itemRows(items));
          draft.redraw();
        },
      },
      'Use these questions',
    ),
  );
  // A checklist written here by the loaded judge: the query never leaves the tab; the items land in
  // the editor above for review before saving.
  const judge = ctx.state.judge;
  const writeStatus = h('span', { class: 'hint', id: 'write-checklist-status', 'aria-live': 'polite' });
  const writeProblem = messageSlot('write-checklist-error');
  const writeButton = h(
    'button',
    {
      id: 'write-checklist',
      disabled: !judge,
      onclick: async () => {
        writeButton.disabled = true;
        writeProblem.say(null);
        const stop = ctx.engine.on('generate-token', (m) => {
          writeStatus.textContent = `Writing: ${m.n} tokens…`;
        });
        try {
          const r = await ctx.engine.request('writeChecklist', { query: q, policy: policySel.value });
          if (!r.items) {
            writeStatus.textContent = '';
            const last = r.replies[r.replies.length - 1] || '';
            writeProblem.say(
              `The judge wrote no checklist questions (${r.tokens} tokens; its reply began: "${last.slice(0, 160)}…"). Try another prompt or a larger judge, or use a strong model elsewhere.`,
            );
            return;
          }
          rows.splice(0, rows.length, ...itemRows(r.items));
          draft.redraw();
          writeStatus.textContent = `${r.items.length} questions written in ${r.tokens} tokens: read and edit them above, then save.`;
        } catch (e) {
          writeStatus.textContent = '';
          writeProblem.say(`Could not write the checklist: ${e.message}`);
        } finally {
          stop();
          writeButton.disabled = !judge;
        }
      },
    },
    'Write it with the loaded judge',
  );
  // The prompt: RocketEval's, or seed 002's generation policies (two-step ones ask twice).
  const policySel = h(
    'select',
    { id: 'write-checklist-policy', 'aria-label': 'Checklist prompt' },
    h('option', { value: 'rocketeval' }, "RocketEval's creation prompt"),
  );
  ctx.engine.core('creationPolicies').then((names) =>
    mount(
      policySel,
      names.map((n) =>
        h('option', { value: n }, n === 'rocketeval' ? "RocketEval's creation prompt" : `Seed 002: ${n}`),
      ),
    ),
  );
  const writeHere = h(
    'details',
    { class: 'create' },
    h('summary', {}, 'Write the checklist on this device'),
    h(
      'p',
      { class: 'hint' },
      judge
        ? `${judge.name} writes it from RocketEval's creation prompt in this tab; the query is not sent anywhere. A small judge writes much worse checklists than a strong model (often generic or repeated questions): review every item before saving.`
        : 'Load a judge first (Judge card): it writes the checklist in this tab.',
    ),
    h('div', { class: 'row' }, policySel, writeButton, writeStatus),
    writeProblem,
  );
  return h(
    'div',
    { class: 'edit-box' },
    h(
      'p',
      { class: 'hint' },
      'Add, remove or reword items. Saving regrades only the new and reworded items for every model.',
    ),
    list,
    h(
      'div',
      { class: 'row' },
      h(
        'button',
        {
          onclick: () => {
            rows.push({ text: '' });
            redraw();
          },
        },
        'Add item',
      ),
      h(
        'button',
        {
          class: 'primary',
          id: 'save-checklist',
          onclick: async () => {
            const saved = await ctx.regrade(
              q,
              checklistChanges(
                q.checklist,
                rows.map((r) => r.text),
              ),
            );
            if (!saved) return; // a notice says why; the edits stay
            ui.drafts.delete(q.session_id);
            close();
          },
        },
        'Save and regrade',
      ),
      h(
        'button',
        {
          id: 'discard-checklist',
          onclick: () => {
            rows.splice(0, rows.length, ...itemRows(q.checklist));
            draft.reply = '';
            reply.value = '';
            redraw();
          },
        },
        'Discard changes',
      ),
    ),
    writeHere,
    create,
  );
}

function conversationText(q) {
  return q.conversation_input.map((m) => `${m.role.toUpperCase()}: ${m.content}`).join('\n\n');
}
