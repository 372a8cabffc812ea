// The "Strong judge" view (a tab of Results): how well our judge agrees with a strong judge's verdicts
// (GPT-4's bundled MT-Bench judgments or an upload): overall, per model, per query, and against how
// close two models are (view `strongAgreement`).

import { h, mount, fmt, messagesBeside } from '../../lib/dom.js';
import { chart, tip } from '../../lib/charts.js';
import { uploadControl, plainError } from '../../lib/upload.js';
import { headRow } from './shared.js';

/** An estimate with its interval, when it has one: "0.71 [0.62, 0.80]". */
const est = (e, d = 2) =>
  e ? `${fmt(e.value, d)}${e.lower != null ? ` [${fmt(e.lower, d)}, ${fmt(e.upper, d)}]` : ''}` : '–';

/** Agreement with a strong judge's verdicts. */
export async function strong(body, ctx, { ui, rerender, settings, judge }) {
  const head = strongSource(ctx, ui, rerender);
  const error = (m) => messagesBeside('strong-error', m);
  if (ui.strongError) head.push(error(ui.strongError));
  if (!ctx.state.strong) return mount(body, head);
  // GPT-4's bundled judgments are of the GPT-4-judged answers: without their grades there is nothing
  // to compare, so say so and offer them.
  const graded = new Set(ctx.graded.map((j) => j.model_test));
  if (ctx.state.strong.bundled && !ctx.gpt4Judged.models.some((m) => graded.has(m))) {
    return mount(body, head, gpt4NotGraded(ctx));
  }
  let a;
  try {
    a = await ctx.engine.request('view', {
      view: 'strongAgreement',
      judge,
      scope: ctx.scope,
      strong: ctx.state.strong,
      settings: { tieMargin: settings.tieMargin, bootstrap: settings.bootstrap, seed: settings.seed },
    });
  } catch (e) {
    return mount(body, head, error(plainError(e)));
  }
  ui.strong = a;
  mount(body, head, strongResult(a, ui, rerender));
}

/** Where the strong verdicts come from: GPT-4's bundled judgments, or an upload (ctx.state.strong). */
function strongSource(ctx, ui, rerender) {
  const input = uploadControl(
    { id: 'strong-file', accept: '.jsonl,.json,.csv', label: 'Strong judge verdicts', expect: 'jsonl-json-or-csv' },
    {
      use: (f, bytes) => {
        ui.strongError = null;
        ctx.state.strong = { name: f.name, bytes };
      },
      failed: (message) => {
        ui.strongError = message;
      },
      done: rerender,
    },
  );
  const bundled = h(
    'button',
    {
      id: 'strong-bundled',
      onclick: async () => {
        const r = await fetch('benchmarks/mt-bench/gpt4-judged/gpt-4_single.jsonl');
        if (!r.ok) return ctx.notice(`cannot load GPT-4's judgments (HTTP ${r.status})`, 'error');
        ctx.state.strong = {
          name: 'gpt-4_single.jsonl',
          bytes: new Uint8Array(await r.arrayBuffer()),
          bundled: true,
        };
        ui.strongError = null;
        rerender();
      },
    },
    "Use GPT-4's MT-Bench judgments (bundled)",
  );
  return [
    h(
      'div',
      { class: 'row' },
      bundled,
      h(
        'label',
        {},
        'or upload verdicts (FastChat single or pair judgments, Arena battles, scores JSONL/CSV): ',
        input,
      ),
    ),
    h(
      'p',
      { class: 'hint' },
      'The bundled file holds GPT-4\'s 1–10 scores of the answers "Add GPT-4-judged answers" loads (5 models, MT-Bench questions 81–151 step 10, both turns).',
    ),
  ];
}

/** GPT-4 judged other models' answers than the graded ones: grade them, or add them first. */
function gpt4NotGraded(ctx) {
  const loaded = ctx.state.responses.some((r) => ctx.gpt4Judged.models.includes(r.model));
  return h(
    'div',
    { class: 'notice warn', id: 'strong-needs' },
    h(
      'span',
      {},
      loaded
        ? `GPT-4 judged the answers of ${ctx.gpt4Judged.models.length} other models, which are loaded but not graded yet: grade them (step 4), then come back here.`
        : `GPT-4 judged the answers of ${ctx.gpt4Judged.models.length} other models, not the ones graded here. Add their answers, grade them (step 4), then come back here. `,
    ),
    loaded
      ? null
      : h(
          'button',
          {
            id: 'strong-add-answers',
            onclick: async () => {
              await ctx.gpt4Judged.add();
            },
          },
          `Add the GPT-4-judged answers (${ctx.gpt4Judged.models.length} models)`,
        ),
  );
}

/** The agreement `a`: overall, per model, where it is lowest, per query, and by closeness of models. */
function strongResult(a, ui, rerender) {
  const plot = h('div', {
    class: 'chart',
    id: 'closeness-plot',
    role: 'img',
    'aria-label': "Agreement against the strong judge's gap between two models",
  });
  const out = h(
    'div',
    { id: 'strong-result' },
    h('h3', {}, 'Overall'),
    overallTable(a),
    h('p', { class: 'hint' }, '95% intervals: bootstrap over queries.'),
    h('h3', {}, 'Per model'),
    perModelTable(a),
    h('h3', {}, 'Where they disagree most'),
    disagreementsTable(a, ui, rerender),
    everyQuery(a),
    h('h3', {}, 'Agreement and how close two models are'),
    h(
      'p',
      { class: 'hint' },
      "Each dot is a pair of models: the strong judge's gap between their means (x) and how often our judge orders their responses to the same query as the strong judge does (y). Close models are where a small judge disagrees.",
    ),
    plot,
    closenessTable(a),
    a.only_ours?.length || a.only_strong?.length
      ? h(
          'p',
          { class: 'hint' },
          `Left out: ${[...(a.only_ours || []).map((m) => `${m} (no strong verdicts)`), ...(a.only_strong || []).map((m) => `${m} (not graded here)`)].join(', ')}.`,
        )
      : null,
  );
  requestAnimationFrame(() => closenessChart(plot, a));
  return out;
}

/** Pairwise agreement and accuracy, the system-level correlations, and the response-level ones. */
function overallTable(a) {
  const o = a.overall;
  return h(
    'table',
    { class: 'meta', id: 'strong-overall' },
    h(
      'tbody',
      {},
      h('tr', {}, h('th', {}, 'pairs of responses to the same query'), h('td', {}, `${o.pairs}`)),
      h('tr', {}, h('th', {}, 'pairwise agreement (ties must match)'), h('td', {}, est(o.agreement, 3))),
      h('tr', {}, h('th', {}, 'pairwise accuracy (½ for one-sided ties)'), h('td', {}, est(o.accuracy, 3))),
      h('tr', {}, h('th', {}, `system level Spearman ρ (${a.models.length} models)`), h('td', {}, est(o.spearman, 3))),
      h('tr', {}, h('th', {}, 'system level Kendall τ-b'), h('td', {}, est(o.kendall_tau_b, 3))),
      o.instance_spearman
        ? h('tr', {}, h('th', {}, 'response scores, Spearman ρ'), h('td', {}, est(o.instance_spearman, 3)))
        : null,
      o.instance_krippendorff
        ? h(
            'tr',
            {},
            h(
              'th',
              {
                title:
                  "Seed 003's agreement measure: the two judges as raters of each response on 1–10; unlike a correlation it asks for the same values",
              },
              "response scores, Krippendorff's α (interval)",
            ),
            h('td', {}, est(o.instance_krippendorff, 3)),
          )
        : null,
    ),
  );
}

/** Each model's mean and rank by both judges, and how often they order its responses alike. */
function perModelTable(a) {
  return h(
    'table',
    { class: 'leaderboard', id: 'strong-models' },
    headRow(['model', 'our mean (rank)', 'strong mean (rank)', 'pairwise agreement', 'responses']),
    h(
      'tbody',
      {},
      a.per_model.map((m) =>
        h(
          'tr',
          {},
          h('td', {}, m.model),
          h('td', { class: 'num' }, `${fmt(m.ours_mean, 2)} (${m.ours_rank})`),
          h('td', { class: 'num' }, `${fmt(m.strong_mean, 2)} (${m.strong_rank})`),
          h('td', { class: 'num' }, est(m.agreement, 2)),
          h('td', { class: 'num' }, m.responses),
        ),
      ),
    ),
  );
}

/** The eight queries with the lowest agreement, each with its most discordant pair and a way to inspect it. */
function disagreementsTable(a, ui, rerender) {
  return h(
    'table',
    { class: 'meta', id: 'strong-disagreements' },
    headRow(['query', 'pairwise agreement', 'most discordant pair', '']),
    h(
      'tbody',
      {},
      a.disagreements.slice(0, 8).map((q) =>
        h(
          'tr',
          {},
          h('td', {}, q.session_id),
          h('td', { class: 'num' }, fmt(q.agreement, 2)),
          h('td', {}, q.most_discordant ? discordant(q.most_discordant) : '–'),
          h(
            'td',
            {},
            h(
              'button',
              {
                class: 'link',
                onclick: () => {
                  ui.query = q.session_id;
                  ui.tab = 'inspector';
                  rerender();
                },
              },
              'inspect',
            ),
          ),
        ),
      ),
    ),
  );
}

function discordant(d) {
  return `${d.model_a} vs ${d.model_b}: ours ${fmt(d.ours_a, 2)} / ${fmt(d.ours_b, 2)}, strong ${d.strong_a == null ? d.strong_verdict : `${fmt(d.strong_a, 1)} / ${fmt(d.strong_b, 1)}`}`;
}

/** Every query's agreement and Kendall τ-b, folded. */
function everyQuery(a) {
  return h(
    'details',
    {},
    h('summary', {}, `Every query (${a.per_query.length})`),
    h(
      'table',
      { class: 'meta', id: 'strong-queries' },
      headRow(['query', 'models', 'pairwise agreement', 'Kendall τ-b of scores']),
      h(
        'tbody',
        {},
        a.per_query.map((q) =>
          h(
            'tr',
            {},
            h('td', {}, q.session_id),
            h('td', { class: 'num' }, q.models.length),
            h('td', { class: 'num' }, fmt(q.agreement, 2)),
            h('td', { class: 'num' }, fmt(q.kendall_tau_b, 2)),
          ),
        ),
      ),
    ),
  );
}

/** Agreement by the strong judge's gap between two models, in bins. */
function closenessTable(a) {
  return h(
    'table',
    { class: 'meta', id: 'strong-bins' },
    headRow(["strong judge's gap", 'model pairs', 'response pairs', 'agreement']),
    h(
      'tbody',
      {},
      a.closeness_bins.map((b) =>
        h(
          'tr',
          {},
          h('td', {}, `${fmt(b.lower, 2)} – ${fmt(b.upper, 2)}`),
          h('td', { class: 'num' }, b.model_pairs),
          h('td', { class: 'num' }, b.pairs),
          h('td', { class: 'num' }, fmt(b.agreement, 3)),
        ),
      ),
    ),
  );
}

/** A dot per pair of models: the strong judge's gap between them (x) and our agreement on them (y). */
function closenessChart(plot, a) {
  chart(plot, {
    animation: false,
    grid: { left: 60, right: 30, top: 20, bottom: 50 },
    xAxis: { type: 'value', name: "strong judge's gap between the two models", nameLocation: 'middle', nameGap: 30 },
    yAxis: { type: 'value', min: 0, max: 1, name: 'agreement' },
    tooltip: {
      trigger: 'item',
      formatter: (p) => {
        const c = a.closeness[p.dataIndex];
        return tip(
          `${c.model_a} vs ${c.model_b}`,
          `gap ${fmt(c.strong_gap, 2)} · agreement ${fmt(c.agreement, 2)} over ${c.pairs} queries`,
        );
      },
    },
    series: [
      {
        type: 'scatter',
        data: a.closeness.map((c) => [c.strong_gap, c.agreement ?? null]),
        symbolSize: 10,
        itemStyle: { color: '#1e3a8a' },
      },
    ],
  });
}
