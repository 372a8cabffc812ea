// The Results card's reference tab: this judge's ranking compared with a reference ranking (the
// bundled Chatbot Arena 2023 one or an uploaded one) by rank correlations with bootstrap intervals.

import { h, mount, fmt, messagesBeside } from '../lib/dom.js';
import { uploadControl, UploadError } from '../lib/upload.js';
import { ui, view } from './results-state.js';

/** The fewest models a bootstrap over models is shown for (fewer resample the same few models). */
const MIN_MODELS_FOR_INTERVAL = 5;

export async function reference(body, ctx, judge, rerender) {
  const parts = [
    h(
      'div',
      { class: 'row' },
      bundledButton(ctx, rerender),
      h(
        'label',
        {},
        'or upload a ranking (a JSON list of models, each with its name and rating, optionally its interval): ',
        referenceUpload(ctx, rerender),
      ),
    ),
    messagesBeside('reference-error', ui.referenceError),
  ];
  if (ctx.state.reference) parts.push(...(await comparison(ctx, judge)));
  mount(body, parts);
}

/** The reference ranking's upload: a JSON list (or JSON Lines) of ranked models; a problem is said beside it. */
function referenceUpload(ctx, rerender) {
  return uploadControl(
    { id: 'reference-file', accept: '.json,.jsonl', label: 'Reference ranking', expect: 'json-or-jsonl' },
    {
      use: async (f, bytes) => {
        ui.referenceError = null;
        const entries = await ctx.engine.core('parseRanking', f.name, bytes);
        if (!entries.length) throw new UploadError(`${f.name} holds no ranked models.`);
        ctx.state.reference = { name: f.name, entries };
      },
      failed: (message) => {
        ui.referenceError = message;
      },
      done: rerender,
    },
  );
}

/** The button that takes the bundled Chatbot Arena 2023 ranking as the reference. */
function bundledButton(ctx, rerender) {
  return h(
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
        rerender();
      },
    },
    'Use Chatbot Arena 2023 (MT-Bench models)',
  );
}

/** The comparison of `judge`'s ranking with the reference: its table and notes, or the error. */
async function comparison(ctx, judge) {
  const ours = (
    ctx.lastRanking || (await view(ctx, judge, 'leaderboard', { settings: { ...ui.settings, bootstrap: 200 } }))
  ).entries.map((e) => ({ name: e.model, rating: e.score }));
  try {
    const c = await ctx.engine.core('compareRankings', ours, ctx.state.reference.entries, 1000);
    return [
      comparisonTable(c, ctx.state.reference.name),
      c.only_ours.length ? h('p', { class: 'hint' }, `Not in the reference: ${c.only_ours.join(', ')}`) : null,
      h(
        'p',
        { class: 'hint' },
        `Intervals: 95% bootstrap over models, shown from ${MIN_MODELS_FOR_INTERVAL} models on. With few models they are wide; read them before the point value.`,
      ),
    ];
  } catch (e) {
    return [h('p', { class: 'notice error' }, e.message)];
  }
}

/** The table of the comparison `c` with the reference `name`: the models compared and each correlation. */
function comparisonTable(c, name) {
  const est = estimate(c.models.length);
  return h(
    'table',
    { class: 'meta', id: 'reference-table' },
    h(
      'tbody',
      {},
      h('tr', {}, h('th', {}, 'reference'), h('td', {}, name)),
      h('tr', {}, h('th', {}, 'models compared'), h('td', {}, `${c.models.length}: ${c.models.join(', ')}`)),
      h('tr', {}, h('th', {}, 'Spearman ρ'), h('td', {}, est(c.spearman))),
      h('tr', {}, h('th', {}, 'Kendall τ-b'), h('td', {}, est(c.kendall_tau_b))),
      c.tau_u
        ? h('tr', {}, h('th', {}, 'τ_u (separable pairs)'), h('td', {}, `${est(c.tau_u)} over ${c.tau_u_pairs} pairs`))
        : null,
    ),
  );
}

/** An estimate over `n` models in words: its value and, where it says something, its interval. */
function estimate(n) {
  // A bootstrap over a handful of models resamples the same few models: its interval says nothing.
  return (e) => {
    if (!e) return '–';
    if (n < MIN_MODELS_FOR_INTERVAL) return `${fmt(e.value, 3)} (no interval: ${n} models are too few to resample)`;
    if (e.lower == null) return fmt(e.value, 3);
    if (!(e.upper > e.lower)) return `${fmt(e.value, 3)} (no interval: every resample gave the same value)`;
    return `${fmt(e.value, 3)} [${fmt(e.lower, 3)}, ${fmt(e.upper, 3)}]`;
  };
}
