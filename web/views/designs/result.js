// Results → Evaluation types: what a design has made by the judge: a summary, the replies that could
// not be read, position consistency, the design's leaderboard, its agreement with the checklist
// ranking and the loaded reference, and the records' download.

import { h, download, fmt } from '../../lib/dom.js';

/** The summary line: the judge, how many records, what is missing, and how they are ranked. */
function summary(v, { name, settings, decoding }) {
  const what = v.pairs ? 'comparisons (both orders)' : 'responses scored';
  const unjudged = v.pairs ? 'pairs without a verdict (left out)' : 'responses without a readable one (unanswered)';
  const unscored =
    v.type === 'reasoned'
      ? ` · ${v.unreadable.length} of ${v.replies} replies unreadable, ${v.unscored} ${unjudged}`
      : v.unscored
        ? ` · ${v.unscored} empty responses have no perplexity`
        : '';
  const read = v.pairs ? "the majority of the replies' votes" : `${v.settings.aggregate} of the replies' scores`;
  const decoded = v.type === 'reasoned' ? read : decoding ? `${decoding.method} decoding` : 'the exact expectation';
  return h(
    'p',
    { class: 'hint', id: 'design-summary' },
    `${name} · ${v.count} ${what}${unscored} · ranked by ${v.ranking?.method ?? settings.method}, ${decoded} (the Leaderboard tab's Method${v.type === 'reasoned' ? '' : ' and Decoding'})`,
  );
}

/** A reasoned design's unreadable replies as written (the first 200); null when every reply was read. */
function unreadableReplies(v) {
  return v.type === 'reasoned' && v.unreadable.length
    ? h(
        'details',
        { id: 'design-unreadable' },
        h(
          'summary',
          {},
          `The ${v.unreadable.length} unreadable replies, as written${v.unreadable.length > 200 ? ' (the first 200 here; every one is in the download)' : ''}`,
        ),
        h(
          'ol',
          {},
          v.unreadable
            .slice(0, 200)
            .map((x) =>
              h(
                'li',
                {},
                h('span', { class: 'hint' }, `${x.model} on ${x.session_id}, reply ${x.reply}: `),
                h('pre', { class: 'text' }, x.text || '(empty)'),
              ),
            ),
        ),
      )
    : null;
}

/** The judge's position consistency over a pairwise design's comparisons; null without one. */
function consistency(c) {
  return c
    ? h(
        'p',
        { id: 'design-consistency' },
        `Position consistency ${fmt(c.rate, 3)}: ${c.consistent} of ${c.pairs} comparisons keep their verdict when the two responses swap places; p(the first shown wins) ${fmt(c.first_shown, 3)} (0.5 without position bias).`,
      )
    : null;
}

/** The records' download, as the native CLI writes them, and what reads them. */
function exportRow(v) {
  const file = {
    pairwise: 'pairs.jsonl',
    direct: `direct-${v.settings.instruction}.jsonl`,
    reasoned: `reasoned-${v.settings.protocol}.jsonl`,
  }[v.type];
  const how = {
    pairwise: 'rocketjudge rank --judgments <folder with it> ranks the same comparisons natively.',
    direct: 'One line per response, as rocketjudge direct writes them.',
    reasoned: v.pairs
      ? `One line per pair with every reply, as rocketjudge reason writes pairs.jsonl; rocketjudge rank --battles ${file} ranks them.`
      : 'One line per response with every reply, as rocketjudge reason writes them; rocketjudge rank --scores <folder with it> ranks them.',
  }[v.type];
  return h(
    'div',
    { class: 'row' },
    h(
      'button',
      { id: 'design-export', onclick: () => download(file, v.jsonl, 'application/x-ndjson') },
      `Download ${file}`,
    ),
    h('span', { class: 'hint' }, how),
  );
}

/** The design's leaderboard: rank, model, score or rating with its 95% CI, responses or verdicts. */
function leaderboardTable(v) {
  const m = v.ranking.method;
  const digits = m === 'winrate' ? 3 : m === 'mean' || m === 'median' ? 2 : 0;
  // Verdicts on pairs rank without response scores: each model's count is its battles.
  const verdicts = v.type === 'reasoned' && v.pairs;
  return h(
    'table',
    { class: 'leaderboard', id: 'design-leaderboard' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        [
          '#',
          'model',
          m === 'bt' || m === 'elo' ? 'rating' : 'score',
          '95% CI',
          verdicts ? 'verdicts' : 'responses',
        ].map((x) => h('th', {}, x)),
      ),
    ),
    h(
      'tbody',
      {},
      v.ranking.entries.map((e) =>
        h(
          'tr',
          {},
          h('td', { class: 'num' }, e.rank),
          h('td', {}, e.model),
          h('td', { class: 'num score' }, fmt(e.score, digits)),
          h('td', { class: 'num' }, e.lower == null ? '–' : `${fmt(e.lower, digits)} – ${fmt(e.upper, digits)}`),
          h('td', { class: 'num' }, verdicts ? e.battles : e.responses),
        ),
      ),
    ),
  );
}

/** What mean and median rank for pairwise comparisons and perplexity rows; empty for the rest. */
function methodHints(v, u) {
  const m = v.ranking.method;
  const parts = [];
  if (v.type === 'pairwise' && (m === 'mean' || m === 'median'))
    parts.push(
      h(
        'p',
        { class: 'hint' },
        "Mean and median rank each model's win share per query on 1–10 (1 + 9 × its mean p(win) in that query's comparisons).",
      ),
    );
  if (v.type === 'direct' && u.instruction === 'perplexity' && (m === 'mean' || m === 'median'))
    parts.push(
      h(
        'p',
        { class: 'hint' },
        'Perplexity rows rank by their mean token log-probability, −ln(perplexity) (higher: the judge finds the response more predictable); each downloaded line also records the perplexity itself, as seed 004 reports it.',
      ),
    );
  return parts;
}

/** The rankings to compare with: this judge's checklist leaderboard (where it ranks) and the loaded reference. */
async function otherRankings(ctx, { name, settings, decoding }) {
  const against = [];
  if (ctx.graded.length) {
    try {
      const checklist = await ctx.engine.request('view', {
        view: 'leaderboard',
        judge: name,
        scope: ctx.scope,
        settings,
        ...(decoding ? { decoding } : {}),
      });
      against.push(["this judge's checklist grading", checklist.entries]);
    } catch {
      /* fewer than two graded models: nothing to compare */
    }
  }
  if (ctx.state.reference) against.push([ctx.state.reference.name, ctx.state.reference.entries]);
  return against;
}

/** Agreement with other rankings (Spearman ρ, Kendall τ-b), a row per ranking; [] when there is none. */
async function agreement(v, ctx, opts) {
  const rows = [];
  for (const [label, entries] of await otherRankings(ctx, opts)) {
    try {
      const a = await ctx.engine.core('compareRankings', v.ranking.entries, entries, 1000);
      rows.push(
        h(
          'tr',
          {},
          h('td', {}, label),
          h('td', { class: 'num' }, a.models.length),
          h('td', { class: 'num' }, fmt(a.spearman?.value, 3)),
          h('td', { class: 'num' }, fmt(a.kendall_tau_b?.value, 3)),
        ),
      );
    } catch (e) {
      rows.push(h('tr', {}, h('td', {}, label), h('td', { colspan: 3, class: 'hint' }, e.message)));
    }
  }
  if (!rows.length) return [];
  return [
    h('h3', {}, 'Agreement with other rankings'),
    h(
      'table',
      { class: 'meta', id: 'design-agreement' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['ranking', 'models', 'Spearman ρ', 'Kendall τ-b'].map((x) => h('th', {}, x)),
        ),
      ),
      h('tbody', {}, rows),
    ),
  ];
}

/** A design's leaderboard, position consistency and agreement with the checklist ranking and the reference. */
export async function designResult(v, ctx, opts) {
  const { name, u } = opts;
  if (!v.count) return h('p', { class: 'hint', id: 'design-empty' }, `Nothing made yet with this design by ${name}.`);
  const parts = [summary(v, opts), unreadableReplies(v), consistency(v.consistency)];
  // The records can be downloaded even where they cannot be ranked (e.g. no reply could be read).
  const exported = exportRow(v);
  if (v.rankError) return [...parts, h('p', { class: 'notice error' }, v.rankError), exported];
  parts.push(leaderboardTable(v), ...methodHints(v, u));
  // Agreement with the checklist leaderboard (this judge) and with a loaded reference ranking.
  parts.push(...(await agreement(v, ctx, opts)), exported);
  return parts;
}
