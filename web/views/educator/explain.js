// The "Explain a score" view (a tab of Results): for one graded response, what the judge read, each
// checklist item's p(Yes), and how the item probabilities become a score and the scores a rank.

import { h, mount, fmt, scrollable } from '../../lib/dom.js';
import { heat } from '../../lib/charts.js';
import { responsePicker, needJudge, noResponse, headRow } from './shared.js';

/** What the judge saw for one response, each item's p(Yes), and how the score becomes a rank. */
export async function explain(body, ctx, { ui, rerender, settings }) {
  if (needJudge(ctx, body, 'see what it read')) return;
  const pick = responsePicker(ctx, ui, rerender);
  if (!pick || !pick.response) return noResponse(body, pick);
  let x;
  try {
    x = await ctx.engine.request('explain', {
      query: pick.query,
      response: pick.response,
      model: pick.model,
      settings,
    });
  } catch (e) {
    // Keep the selectors: another response may explain (e.g. one that fits the context).
    return mount(body, pick.row, h('p', { class: 'notice error', id: 'explain-error' }, e.message));
  }
  mount(body, pick.row, whatItRead(x.prompt), eachItem(pick.query, x), toScore(x.score), toRank(pick.model, x));
}

/** 1. The prompt: its template and sizes, whether the response was cut, and its shared part. */
function whatItRead(p) {
  return [
    h('h3', {}, '1. What the judge read'),
    h(
      'p',
      { class: 'hint' },
      `The ${p.template} chat template around the grading prompt (${p.style}). `,
      h(
        'span',
        { id: 'explain-sizes' },
        `The shared part is read once (${p.prefix_tokens} tokens), then each item's question (${p.suffix_tokens.join(', ')} tokens).`,
      ),
      p.truncated_chars
        ? ` The response did not fit the judge's context: its last ${p.truncated_chars} characters were cut (kept ${p.kept_chars}).`
        : ' The whole response fit in the context.',
    ),
    h(
      'details',
      { open: true },
      h('summary', {}, 'Shared part'),
      h(
        'pre',
        { class: 'text prompt', id: 'explain-prefix', ...scrollable("The prompt's shared part") },
        p.truncated_chars ? withTruncation(p.prefix, p.truncation_marker) : p.prefix,
      ),
    ),
  ];
}

/** Text with the engine's truncation marker (`marker`, blank around it trimmed) shown as a marked span. */
function withTruncation(text, marker) {
  marker = marker.trim();
  const i = text.indexOf(marker);
  if (i < 0) return [text];
  return [
    text.slice(0, i),
    h('mark', { class: 'truncated', id: 'truncation-mark' }, marker),
    text.slice(i + marker.length),
  ];
}

/** 2. A row per checklist item: its part of the prompt and its p(Yes). */
function eachItem(query, x) {
  const p = x.prompt;
  const probs = x.judgment.norm_probability;
  return [
    h('h3', {}, '2. Each checklist item'),
    h(
      'table',
      { class: 'inspector', id: 'explain-items' },
      headRow(['item', 'the rest of its prompt', 'p(Yes)']),
      h(
        'tbody',
        {},
        query.checklist.map((item, i) =>
          h(
            'tr',
            {},
            h('td', { class: 'item' }, `${i + 1}. ${item}`),
            h(
              'td',
              {},
              h(
                'details',
                {},
                h('summary', {}, 'show'),
                h('pre', { class: 'text', ...scrollable(`Item ${i + 1}'s part of the prompt`) }, p.suffixes[i] ?? ''),
              ),
            ),
            h(
              'td',
              { class: 'num heat', style: { background: heat(probs[i]) } },
              probs[i] == null ? 'not graded' : probs[i].toFixed(3),
            ),
          ),
        ),
      ),
    ),
    h(
      'p',
      { class: 'hint' },
      "p(Yes) = p(Yes)/(p(Yes)+p(No)) of the judge's next token, from its logits: no text is generated.",
    ),
  ];
}

/** 3. The mean p(Yes) over the graded items, scaled to 1–10. */
function toScore(s) {
  return [
    h('h3', {}, '3. From item probabilities to the score'),
    h(
      'p',
      { id: 'explain-score' },
      `Mean p(Yes) over ${s.graded} graded item${s.graded === 1 ? '' : 's'}${s.missing ? ` (${s.missing} not graded, left out)` : ''} = ${fmt(s.mean, 3)}; score = ${fmt(s.mean, 3)} × ${s.scale} + ${s.bias} = `,
      h('strong', {}, fmt(s.score, 2)),
      ' on 1–10.',
    ),
  ];
}

/** 4. The model's scores and where the ranking puts it. */
function toRank(model, x) {
  const e = x.entry;
  const ownScores = x.scores.map((r) => r.score);
  return [
    h('h3', {}, '4. From scores to the rank'),
    h(
      'p',
      { id: 'explain-rank' },
      `${model} has ${ownScores.length} graded response${ownScores.length === 1 ? '' : 's'} (scores ${ownScores.map((v) => fmt(v, 1)).join(', ')}). `,
      e
        ? [
            `The ranking (${x.method}) rates it `,
            h('strong', {}, fmt(e.score, x.method === 'winrate' ? 3 : 2)),
            e.lower != null ? ` (95% CI ${fmt(e.lower, 2)} – ${fmt(e.upper, 2)}, bootstrap over queries)` : '',
            `: rank ${e.rank} of ${x.models}.`,
          ]
        : 'It is not in the ranking.',
    ),
    h(
      'p',
      { class: 'hint' },
      'Bradley–Terry turns every pair of scores on the same query into a win, a loss or a tie (differences under the tie margin), and fits one rating per model to all of them.',
    ),
  ];
}
