// Views for educators and careful users (issue #14): explain a score, bias probes, calibration with
// the user's own labels, agreement with a strong judge. The worker computes everything (the engine
// grades, `core` scores, fits and measures); this file renders. Text from files is rendered as text.

import { h, mount, download, fmt, scrollable, messagesBeside, messageSlot } from './lib/dom.js';
import { chart, tip, heat } from './lib/charts.js';
import * as db from './lib/db.js';
import { readUpload, plainError, UploadError } from './lib/upload.js';

export const EDU_TABS = [
  ['explain', 'Explain a score'],
  ['probes', 'Bias probes'],
  ['calibrate', 'Calibrate'],
  ['strong', 'Strong judge'],
];

/** The probes, in the order of their buttons: [name, label, options]. */
const PROBES = [
  ['pad', 'Pad by 30 % (verbosity)', { amount: 0.3 }],
  ['reorder', 'Reverse the order of its paragraphs', {}],
  ['truncate', 'Keep the first half', { amount: 0.5 }],
  ['prompt_wording', 'Reword the grading prompt', { prompt: 'reworded' }],
  ['instruction_level', 'Less instruction in the prompt', { prompt: 'minimal' }],
  ['instruction_level', 'More instruction in the prompt', { prompt: 'criteria' }],
];

const est = (e, d = 2) =>
  e ? `${fmt(e.value, d)}${e.lower != null ? ` [${fmt(e.lower, d)}, ${fmt(e.upper, d)}]` : ''}` : '–';
const signed = (x, d = 2) => (x == null ? '–' : `${x >= 0 ? '+' : ''}${fmt(x, d)}`);
const pct = (x) => (x == null ? '–' : `${Math.round(x * 100)} %`);

/** Query and model selectors over the responses `judge` has graded; sets ui.query / ui.model. */
function responsePicker(ctx, ui, rerender) {
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
    { id: 'pick-query', 'aria-label': 'Query' },
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

function needJudge(ctx, body, what) {
  if (ctx.state.judge) return false;
  mount(body, h('p', { class: 'hint' }, `Load the judge that graded these responses to ${what}.`));
  return true;
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

export const EDU_VIEWS = {
  /** What the judge saw for one response, each item's p(Yes), and how the score becomes a rank. */
  async explain(body, ctx, { ui, rerender, settings }) {
    if (needJudge(ctx, body, 'see what it read')) return;
    const pick = responsePicker(ctx, ui, rerender);
    if (!pick || !pick.response)
      return mount(body, pick ? pick.row : null, h('p', { class: 'hint' }, 'No graded response with its text loaded.'));
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
    const p = x.prompt;
    const s = x.score;
    const probs = x.judgment.norm_probability;
    const e = x.entry;
    const ownScores = x.scores.map((r) => r.score);
    mount(
      body,
      pick.row,
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
      h('h3', {}, '2. Each checklist item'),
      h(
        'table',
        { class: 'inspector', id: 'explain-items' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['item', 'the rest of its prompt', 'p(Yes)'].map((c) => h('th', {}, c)),
          ),
        ),
        h(
          'tbody',
          {},
          pick.query.checklist.map((item, i) =>
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
      h('h3', {}, '3. From item probabilities to the score'),
      h(
        'p',
        { id: 'explain-score' },
        `Mean p(Yes) over ${s.graded} graded item${s.graded === 1 ? '' : 's'}${s.missing ? ` (${s.missing} not graded, left out)` : ''} = ${fmt(s.mean, 3)}; score = ${fmt(s.mean, 3)} × ${s.scale} + ${s.bias} = `,
        h('strong', {}, fmt(s.score, 2)),
        ' on 1–10.',
      ),
      h('h3', {}, '4. From scores to the rank'),
      h(
        'p',
        { id: 'explain-rank' },
        `${pick.model} has ${ownScores.length} graded response${ownScores.length === 1 ? '' : 's'} (scores ${ownScores.map((v) => fmt(v, 1)).join(', ')}). `,
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
    );
  },

  /** One-click probes on the selected response, and a report of each probe over every graded response. */
  async probes(body, ctx, { ui, rerender }) {
    if (needJudge(ctx, body, 'run probes')) return;
    const pick = responsePicker(ctx, ui, rerender);
    if (!pick || !pick.response)
      return mount(body, pick ? pick.row : null, h('p', { class: 'hint' }, 'No graded response with its text loaded.'));
    ui.probeResults ||= [];
    ui.probeReport ||= [];
    const status = h('span', { class: 'hint', id: 'probe-status' });
    const run = async (probe, label, options) => {
      status.textContent = `${label}: grading…`;
      ui.probeError = null;
      try {
        const r = await ctx.engine.request('probe', {
          probe,
          query: pick.query,
          response: pick.response,
          model: pick.model,
          options,
        });
        ui.probeResults.unshift({ label, probe, session: pick.query.session_id, model: pick.model, ...r });
        rerender();
      } catch (e) {
        status.textContent = '';
        ui.probeError = e.message;
        rerender();
      }
    };
    const runAll = async (probe, label, options) => {
      const jobs = allJobs(ctx, probe);
      status.textContent = `${label}: 0 of ${jobs.length} responses…`;
      ui.probeError = null;
      const off = ctx.engine.on('probe-progress', (m) => {
        status.textContent = `${label}: ${m.done} of ${m.total} responses…`;
      });
      try {
        const r = await ctx.engine.request('probeAll', { probe, options, jobs });
        ui.probeReport = [{ label, probe, ...r }, ...ui.probeReport.filter((x) => x.label !== label)];
        rerender();
      } catch (e) {
        status.textContent = '';
        ui.probeError = e.message;
        rerender();
      } finally {
        off?.();
      }
    };
    const others = pick.models.filter((m) => m !== pick.model);
    const otherSel = h(
      'select',
      { id: 'probe-other', 'aria-label': 'Compare with' },
      others.map((m) => h('option', { value: m }, m)),
    );
    const itemSel = h(
      'select',
      { id: 'probe-item', 'aria-label': 'Item to drop' },
      pick.query.checklist.map((t, i) => h('option', { value: i }, `${i + 1}. ${t.slice(0, 60)}`)),
    );
    const addText = h('input', {
      type: 'text',
      id: 'probe-add-text',
      size: 50,
      placeholder: 'A checklist item to add, e.g. Is the response concise?',
      'aria-label': 'Item to add',
    });
    const judges = (ctx.state.manifest || []).filter((m) => m.name !== ctx.state.judge.name);
    const judgeSel = h(
      'select',
      { id: 'probe-judge', 'aria-label': 'Second judge' },
      judges.map((m) => h('option', { value: m.name }, m.display)),
    );
    // What each probe changes and what a fair judge would do (core's words), as the buttons' tooltips.
    ui.probeKinds ||= Object.fromEntries((await ctx.engine.core('probeKinds')).map((k) => [k.name, k.description]));
    ui.promptStyles ||= Object.fromEntries((await ctx.engine.core('promptStyles')).map((p) => [p.name, p.description]));
    const button = (id, label, fn, probe, prompt) =>
      h(
        'button',
        {
          id,
          onclick: fn,
          title: [ui.probeKinds[probe], prompt && `This prompt: ${ui.promptStyles[prompt]}.`].filter(Boolean).join(' '),
        },
        label,
      );
    mount(
      body,
      pick.row,
      h(
        'p',
        { class: 'hint' },
        'Each probe changes one thing and grades again with the loaded judge; the table shows the score before and after. "All" runs the probe on every graded response and adds a line to the report.',
      ),
      h(
        'div',
        { class: 'probe-grid' },
        PROBES.map(([probe, label, options], k) =>
          h(
            'div',
            { class: 'row' },
            button(`probe-${k}`, label, () => run(probe, label, options), probe, options.prompt),
            button(`probe-all-${k}`, 'All', () => runAll(probe, label, options)),
          ),
        ),
        h(
          'div',
          { class: 'row' },
          button(
            'probe-position',
            'Swap the order against',
            () =>
              run('position', `Position against ${otherSel.value}`, {
                other: responseOf(ctx, otherSel.value, ui.query),
              }),
            'position',
          ),
          otherSel,
          button('probe-all-position', 'All', () => runAll('position', 'Position (each pair, both orders)', {})),
        ),
        h(
          'div',
          { class: 'row' },
          button(
            'probe-drop',
            'Drop item',
            () => run('drop_item', `Drop item ${Number(itemSel.value) + 1}`, { item: Number(itemSel.value) }),
            'drop_item',
          ),
          itemSel,
          button('probe-all-drop', 'All', () =>
            runAll('drop_item', `Drop item ${Number(itemSel.value) + 1} of every checklist`, {
              item: Number(itemSel.value),
            }),
          ),
        ),
        h(
          'div',
          { class: 'row' },
          button(
            'probe-add',
            'Add item',
            () => run('add_item', `Add “${addText.value.trim()}”`, { text: addText.value }),
            'add_item',
          ),
          addText,
          button('probe-all-add', 'All', () =>
            runAll('add_item', `Add “${addText.value.trim()}” to every checklist`, { text: addText.value }),
          ),
        ),
        h(
          'div',
          { class: 'row' },
          button('probe-judge-load', 'Load as second judge', async () => {
            status.textContent = 'loading the second judge…';
            try {
              const m = ctx.state.manifest.find((x) => x.name === judgeSel.value);
              const { name } = await ctx.engine.request('loadProbeJudge', { source: ctx.modelSource(m) });
              ui.probeJudge = name;
              status.textContent = `second judge: ${name}`;
              rerender();
            } catch (e) {
              status.textContent = '';
              ui.probeError = e.message;
              rerender();
            }
          }),
          judgeSel,
          button('probe-judge', 'Grade with it', () => run('judge', `Judge ${ui.probeJudge || '?'}`, {}), 'judge'),
          button('probe-all-judge', 'All', () => runAll('judge', `Judge ${ui.probeJudge || '?'} instead`, {})),
          h('span', { class: 'hint' }, ui.probeJudge ? `loaded: ${ui.probeJudge}` : ''),
        ),
        status,
        messagesBeside('probe-error', ui.probeError),
      ),
      h('h3', {}, 'This response'),
      ui.probeResults.length
        ? h(
            'table',
            { class: 'meta', id: 'probe-results' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['probe', 'response', 'before', 'after', 'Δ', ''].map((c) => h('th', {}, c)),
              ),
            ),
            h(
              'tbody',
              {},
              ui.probeResults.map((r) =>
                h(
                  'tr',
                  {},
                  h('td', {}, r.label),
                  h('td', {}, `${r.model} · ${r.session}`),
                  h('td', { class: 'num' }, fmt(r.before, r.probe === 'position' ? 3 : 2)),
                  h('td', { class: 'num' }, fmt(r.after, r.probe === 'position' ? 3 : 2)),
                  h('td', { class: 'num' }, signed(r.after - r.before, r.probe === 'position' ? 3 : 2)),
                  h('td', { class: 'hint' }, probeNote(r)),
                ),
              ),
            ),
          )
        : h('p', { class: 'hint' }, 'No probe run yet.'),
      h('h3', {}, 'Probe report (every graded response)'),
      ui.probeReport.length
        ? h(
            'table',
            { class: 'meta', id: 'probe-report' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['probe', 'responses', 'mean Δ [95% CI]', 'raised', 'lowered', 'unchanged', 'summary'].map((c) =>
                  h('th', {}, c),
                ),
              ),
            ),
            h(
              'tbody',
              {},
              ui.probeReport.map((r) => h('tr', {}, h('td', {}, r.label), ...reportCells(r))),
            ),
          )
        : h('p', { class: 'hint' }, 'Press "All" beside a probe.'),
    );
  },

  /** The user's labels refit RocketEval's supervised scorer; the ranking before and after. */
  async calibrate(body, ctx, { ui, rerender, settings, judge }) {
    ctx.state.labels ||= (await db.get('inputs', 'labels')) || [];
    const labels = ctx.state.labels;
    const save = async () => {
      await db.put('inputs', labels, 'labels');
      rerender();
    };
    const pick = responsePicker(ctx, ui, rerender);
    if (!pick) return mount(body, h('p', { class: 'hint' }, 'No graded responses yet.'));
    const { scores } = await ctx.engine.request('view', { view: 'scores', judge });
    const ours = new Map(scores.filter((x) => x.session_id === ui.query).map((x) => [x.model_test, x.score]));
    const labelOf = (m) => labels.find((l) => l.session_id === ui.query && l.model_test === m && l.score != null);
    const labelProblem = messageSlot('label-problem');
    const scoreRows = pick.models.map((m) => {
      const input = h('input', {
        type: 'number',
        min: 1,
        max: 10,
        step: 0.5,
        size: 4,
        value: labelOf(m)?.score ?? '',
        'aria-label': `your score for ${m}`,
        id: `label-${m}`,
      });
      input.addEventListener('change', async () => {
        const v = input.value === '' ? null : Number(input.value);
        // A value that is not a label leaves the stored label as it was.
        if (v != null && !(v >= 1 && v <= 10))
          return labelProblem.say(`${m}: a score label is a number from 1 to 10, not ${input.value}.`);
        labelProblem.say(null);
        const at = labels.findIndex((l) => l.session_id === ui.query && l.model_test === m && l.score != null);
        if (at >= 0) labels.splice(at, 1);
        if (v != null) {
          labels.push({ session_id: ui.query, model_test: m, score: v, created: new Date().toISOString() });
        }
        await save();
      });
      return h('tr', {}, h('td', {}, m), h('td', { class: 'num' }, fmt(ours.get(m), 2)), h('td', {}, input));
    });
    const [selA, selB] = ['a', 'b'].map((s, k) =>
      h(
        'select',
        { id: `pref-model-${s}`, 'aria-label': `model ${s.toUpperCase()}` },
        pick.models.map((m, i) => h('option', { value: m, selected: i === k }, m)),
      ),
    );
    const prefer = (winner) => async () => {
      if (selA.value === selB.value)
        return labelProblem.say('A preference compares two different models: choose another model A or B.');
      labels.push({
        session_id: ui.query,
        model_a: selA.value,
        model_b: selB.value,
        winner,
        created: new Date().toISOString(),
      });
      await save();
    };
    const importer = h('input', {
      type: 'file',
      accept: '.jsonl,.json',
      id: 'labels-file',
      'aria-label': 'Import labels',
    });
    importer.addEventListener('change', async () => {
      const f = importer.files[0];
      ui.labelsError = null;
      try {
        const read = await ctx.engine.core('parseLabels', f.name, await readUpload(f, 'jsonl'));
        if (!read.length) throw new UploadError(`${f.name} holds no labels.`);
        labels.push(...read);
        await save();
      } catch (e) {
        ui.labelsError = plainError(e);
        rerender();
      }
    });
    let result = null;
    if (ui.calibrated && labels.length) {
      try {
        result = await ctx.engine.request('view', { view: 'calibration', judge, labels, settings });
      } catch (e) {
        result = { error: e.message };
      }
    }
    mount(
      body,
      h(
        'p',
        { class: 'hint' },
        "Label a few responses with your own score (1–10) or preference. RocketEval's supervised scorer then learns, per query, how much each checklist item should count, and blends that with the plain mean by how much your labels on that query differ (α: 0 when they are all equal). Labels stay in this browser; export them as JSONL.",
      ),
      pick.row,
      h(
        'table',
        { class: 'meta', id: 'label-table' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['model', "judge's score", 'your score (1–10)'].map((c) => h('th', {}, c)),
          ),
        ),
        h('tbody', {}, scoreRows),
      ),
      h(
        'div',
        { class: 'row' },
        'Preference on this query: ',
        selA,
        ' vs ',
        selB,
        h('button', { id: 'pref-a', onclick: prefer('model_a') }, 'A is better'),
        h('button', { id: 'pref-tie', onclick: prefer('tie') }, 'Tie'),
        h('button', { id: 'pref-b', onclick: prefer('model_b') }, 'B is better'),
      ),
      labelProblem,
      h('p', { id: 'label-count' }, `${labels.length} label${labels.length === 1 ? '' : 's'} stored in this browser.`),
      labels.length
        ? h(
            'details',
            {},
            h('summary', {}, 'Your labels'),
            h(
              'ul',
              {},
              labels.map((l, i) =>
                h(
                  'li',
                  {},
                  l.score != null
                    ? `${l.session_id} · ${l.model_test}: ${l.score}`
                    : `${l.session_id} · ${l.model_a} vs ${l.model_b}: ${l.winner}`,
                  ' ',
                  h(
                    'button',
                    {
                      class: 'link',
                      onclick: async () => {
                        labels.splice(i, 1);
                        await save();
                      },
                    },
                    'remove',
                  ),
                ),
              ),
            ),
          )
        : null,
      h(
        'div',
        { class: 'row' },
        h(
          'button',
          {
            class: 'primary',
            id: 'refit',
            disabled: !labels.length,
            onclick: () => {
              ui.calibrated = true;
              rerender();
            },
          },
          'Refit and compare rankings',
        ),
        h(
          'button',
          {
            id: 'export-labels',
            disabled: !labels.length,
            onclick: async () =>
              download(`rocketjudge-labels.jsonl`, await ctx.engine.core('labelsJsonl', labels), 'application/jsonl'),
          },
          'Export labels (JSONL)',
        ),
        h('label', {}, 'Import labels (JSON Lines, one score or preference per line): ', importer),
      ),
      messagesBeside('labels-error', ui.labelsError),
      result ? calibrationResult(result) : null,
    );
  },

  /** Agreement with a strong judge's verdicts. */
  async strong(body, ctx, { ui, rerender, settings, judge }) {
    const input = h('input', {
      type: 'file',
      accept: '.jsonl,.json,.csv',
      id: 'strong-file',
      'aria-label': 'Strong judge verdicts',
    });
    input.addEventListener('change', async () => {
      const f = input.files[0];
      ui.strongError = null;
      try {
        ctx.state.strong = { name: f.name, bytes: await readUpload(f, 'jsonl-json-or-csv') };
      } catch (e) {
        ui.strongError = plainError(e);
      }
      rerender();
    });
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
    const head = [
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
    const error = (m) => messagesBeside('strong-error', m);
    if (ui.strongError) head.push(error(ui.strongError));
    if (!ctx.state.strong) return mount(body, head);
    // GPT-4's bundled judgments are of the GPT-4-judged answers: without their grades there is nothing
    // to compare, so say so and offer them.
    const graded = new Set(ctx.graded.map((j) => j.model_test));
    if (ctx.state.strong.bundled && !ctx.gpt4Judged.models.some((m) => graded.has(m))) {
      const loaded = ctx.state.responses.some((r) => ctx.gpt4Judged.models.includes(r.model));
      return mount(
        body,
        head,
        h(
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
        ),
      );
    }
    let a;
    try {
      a = await ctx.engine.request('view', {
        view: 'strongAgreement',
        judge,
        strong: ctx.state.strong,
        settings: { tieMargin: settings.tieMargin, bootstrap: settings.bootstrap, seed: settings.seed },
      });
    } catch (e) {
      return mount(body, head, error(plainError(e)));
    }
    ui.strong = a;
    mount(body, head, strongResult(a, ctx, ui, rerender));
  },
};

/**
 * Every graded response with its text, as probe jobs; `position` pairs each with the next model's
 * response to the same query.
 */
function allJobs(ctx, probe) {
  const byId = new Map((ctx.state.benchmark?.queries || []).map((q) => [q.session_id, q]));
  const jobs = [];
  for (const j of ctx.graded) {
    const query = byId.get(j.session_id);
    const response = responseOf(ctx, j.model_test, j.session_id);
    if (query && response) jobs.push({ query, response, model: j.model_test });
  }
  if (probe !== 'position') return jobs;
  const pairs = [];
  for (let i = 0; i < jobs.length; i++) {
    for (let k = i + 1; k < jobs.length; k++) {
      if (jobs[k].query.session_id === jobs[i].query.session_id) pairs.push({ ...jobs[i], other: jobs[k].response });
    }
  }
  return pairs;
}

function probeNote(r) {
  const d = r.detail || {};
  if (r.probe === 'position') {
    const firstWins = r.before > 0.5;
    const secondWins = r.after > 0.5;
    return `p(this better) shown first ${fmt(r.before, 2)}, shown second ${fmt(r.after, 2)} vs ${d.other}: ${firstWins === secondWins ? 'the same verdict in both orders' : 'the verdict follows the position'}`;
  }
  if (d.unchanged) return 'the text has nothing to change (one sentence)';
  if (d.item) return d.p != null ? `${d.item}: p(Yes) ${fmt(d.p, 3)}` : d.item;
  if (d.prompt) return `prompt: ${d.prompt}`;
  if (d.judge) return `judge: ${d.judge}`;
  return '';
}

function reportCells(r) {
  const s = r.summary;
  if (!s) return [h('td', { colspan: 6 }, 'nothing to probe')];
  const ci = s.mean_delta_ci
    ? ` [${signed(s.mean_delta_ci.lower, r.probe === 'position' ? 3 : 2)}, ${signed(s.mean_delta_ci.upper, r.probe === 'position' ? 3 : 2)}]`
    : '';
  if (r.probe === 'position') {
    const p = s.position;
    return [
      h('td', { class: 'num' }, s.n),
      h('td', { class: 'num' }, `${signed(s.mean_delta, 3)}${ci}`),
      h('td', { colspan: 3, class: 'num' }, `consistent in ${pct(p.consistency)}`),
      h(
        'td',
        {},
        `The verdict stayed the same with the order swapped in ${pct(p.consistency)} of ${s.n} pairs (${p.flips} flipped); the first-shown response's p(better) was ${signed(p.first_position_shift, 3)} above ½ on average.`,
      ),
    ];
  }
  return [
    h('td', { class: 'num' }, s.n),
    h('td', { class: 'num' }, `${signed(s.mean_delta)}${ci}`),
    h('td', { class: 'num' }, pct(s.raised)),
    h('td', { class: 'num' }, pct(s.lowered)),
    h('td', { class: 'num' }, pct(s.unchanged)),
    h(
      'td',
      {},
      `${r.label} ${s.mean_delta >= 0 ? 'raised' : 'lowered'} scores by ${fmt(Math.abs(s.mean_delta))} on average; it raised them in ${pct(s.raised)} of ${s.n} responses and lowered them in ${pct(s.lowered)}.`,
    ),
  ];
}

function calibrationResult(c) {
  if (c.error) return h('p', { class: 'notice error' }, c.error);
  const width = (lo, hi) => (lo == null ? null : hi - lo);
  const plot = h('div', {
    class: 'chart',
    id: 'calibration-plot',
    role: 'img',
    'aria-label': 'Ratings with 95% intervals before and after calibration',
  });
  requestAnimationFrame(() => ciChart(plot, c.changes));
  return h(
    'div',
    { id: 'calibration-result' },
    h('h3', {}, 'Ranking before and after'),
    plot,
    h(
      'table',
      { class: 'leaderboard', id: 'calibration-table' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['model', 'rank', 'score', '95% CI before', '95% CI after', 'CI width'].map((t) => h('th', {}, t)),
        ),
      ),
      h(
        'tbody',
        {},
        c.changes.map((r) =>
          h(
            'tr',
            {},
            h('td', {}, r.model),
            h('td', { class: 'num' }, `${r.rank_before} → ${r.rank_after}`),
            h('td', { class: 'num' }, `${fmt(r.score_before, 2)} → ${fmt(r.score_after, 2)}`),
            h(
              'td',
              { class: 'num' },
              r.lower_before == null ? '–' : `${fmt(r.lower_before, 2)} – ${fmt(r.upper_before, 2)}`,
            ),
            h(
              'td',
              { class: 'num' },
              r.lower_after == null ? '–' : `${fmt(r.lower_after, 2)} – ${fmt(r.upper_after, 2)}`,
            ),
            h(
              'td',
              { class: 'num' },
              `${fmt(width(r.lower_before, r.upper_before), 2)} → ${fmt(width(r.lower_after, r.upper_after), 2)}`,
            ),
          ),
        ),
      ),
    ),
    h(
      'p',
      { class: 'hint' },
      `${c.labels_used} label${c.labels_used === 1 ? '' : 's'} used. Per query, the weight α of the fitted predictor:`,
    ),
    h(
      'ul',
      { id: 'calibration-alpha' },
      c.queries.map((q) =>
        h(
          'li',
          {},
          `${q.session_id}: ${q.labels} label${q.labels === 1 ? '' : 's'}, α = ${fmt(q.alpha, 2)}${q.trained ? '' : ' (not trained)'}${itemWeights(q.importance)}`,
        ),
      ),
    ),
    c.problems?.length
      ? h(
          'ul',
          {},
          c.problems.map((p) => h('li', { class: p.severity }, `${p.session_id}: ${p.message}`)),
        )
      : null,
  );
}

/**
 * The items a query's predictor leans on most (seed 000's item reweighting):
 * "; items by weight: 2 (0.71), 1 (0.29)".
 */
function itemWeights(importance) {
  const top = (importance || [])
    .map((w, i) => [i + 1, w])
    .filter(([, w]) => w > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3);
  return top.length ? `; items by weight: ${top.map(([i, w]) => `${i} (${fmt(w, 2)})`).join(', ')}` : '';
}

/** Each model's rating and 95% interval before (grey) and after (blue) calibration, best first. */
function ciChart(el, changes) {
  const rows = [...changes].reverse();
  const series = (key, color, offset) => ({
    type: 'custom',
    name: key,
    renderItem: (params, api) => {
      const y = api.coord([0, api.value(0)])[1] + offset;
      const [lo, hi, mid] = [
        api.coord([api.value(1), 0])[0],
        api.coord([api.value(2), 0])[0],
        api.coord([api.value(3), 0])[0],
      ];
      return {
        type: 'group',
        children: [
          { type: 'line', shape: { x1: lo, y1: y, x2: hi, y2: y }, style: { stroke: color, lineWidth: 2 } },
          { type: 'circle', shape: { cx: mid, cy: y, r: 4 }, style: { fill: color } },
        ],
      };
    },
    data: rows.map((r, i) => [
      i,
      r[`lower_${key}`] ?? r[`score_${key}`],
      r[`upper_${key}`] ?? r[`score_${key}`],
      r[`score_${key}`],
    ]),
    encode: { y: 0, x: [1, 2] },
  });
  chart(el, {
    animation: false,
    grid: { left: 190, right: 30, top: 30, bottom: 40 },
    legend: { data: ['before', 'after'], top: 0 },
    xAxis: { type: 'value', scale: true, name: 'rating', nameLocation: 'middle', nameGap: 26 },
    yAxis: { type: 'category', data: rows.map((r) => r.model) },
    tooltip: {
      trigger: 'item',
      formatter: (p) => {
        const r = rows[p.value[0]];
        return tip(
          r.model,
          `before ${fmt(r.score_before, 2)} (${fmt(r.lower_before, 2)} – ${fmt(r.upper_before, 2)})`,
          `after ${fmt(r.score_after, 2)} (${fmt(r.lower_after, 2)} – ${fmt(r.upper_after, 2)})`,
        );
      },
    },
    series: [series('before', '#9ca3af', -5), series('after', '#1d4ed8', 5)],
  });
}

function strongResult(a, ctx, ui, rerender) {
  const o = a.overall;
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
    h(
      'table',
      { class: 'meta', id: 'strong-overall' },
      h(
        'tbody',
        {},
        h('tr', {}, h('th', {}, 'pairs of responses to the same query'), h('td', {}, `${o.pairs}`)),
        h('tr', {}, h('th', {}, 'pairwise agreement (ties must match)'), h('td', {}, est(o.agreement, 3))),
        h('tr', {}, h('th', {}, 'pairwise accuracy (½ for one-sided ties)'), h('td', {}, est(o.accuracy, 3))),
        h(
          'tr',
          {},
          h('th', {}, `system level Spearman ρ (${a.models.length} models)`),
          h('td', {}, est(o.spearman, 3)),
        ),
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
    ),
    h('p', { class: 'hint' }, '95% intervals: bootstrap over queries.'),
    h('h3', {}, 'Per model'),
    h(
      'table',
      { class: 'leaderboard', id: 'strong-models' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['model', 'our mean (rank)', 'strong mean (rank)', 'pairwise agreement', 'responses'].map((t) =>
            h('th', {}, t),
          ),
        ),
      ),
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
    ),
    h('h3', {}, 'Where they disagree most'),
    h(
      'table',
      { class: 'meta', id: 'strong-disagreements' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['query', 'pairwise agreement', 'most discordant pair', ''].map((t) => h('th', {}, t)),
        ),
      ),
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
    ),
    h(
      'details',
      {},
      h('summary', {}, `Every query (${a.per_query.length})`),
      h(
        'table',
        { class: 'meta', id: 'strong-queries' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['query', 'models', 'pairwise agreement', 'Kendall τ-b of scores'].map((t) => h('th', {}, t)),
          ),
        ),
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
    ),
    h('h3', {}, 'Agreement and how close two models are'),
    h(
      'p',
      { class: 'hint' },
      "Each dot is a pair of models: the strong judge's gap between their means (x) and how often our judge orders their responses to the same query as the strong judge does (y). Close models are where a small judge disagrees.",
    ),
    plot,
    h(
      'table',
      { class: 'meta', id: 'strong-bins' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ["strong judge's gap", 'model pairs', 'response pairs', 'agreement'].map((t) => h('th', {}, t)),
        ),
      ),
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
    ),
    a.only_ours?.length || a.only_strong?.length
      ? h(
          'p',
          { class: 'hint' },
          `Left out: ${[...(a.only_ours || []).map((m) => `${m} (no strong verdicts)`), ...(a.only_strong || []).map((m) => `${m} (not graded here)`)].join(', ')}.`,
        )
      : null,
  );
  requestAnimationFrame(() =>
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
    }),
  );
  return out;
}

function discordant(d) {
  return `${d.model_a} vs ${d.model_b}: ours ${fmt(d.ours_a, 2)} / ${fmt(d.ours_b, 2)}, strong ${d.strong_a == null ? d.strong_verdict : `${fmt(d.strong_a, 1)} / ${fmt(d.strong_b, 1)}`}`;
}
