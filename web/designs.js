// The other evaluation designs (issues #13 and #30, seeds 000–004): pairwise comparisons in both orders
// (every two models, or each against a reference), Direct scores at an instruction level or by
// perplexity, with the query's checklist in the prompt always, never or where the judge is unsure, and
// scores or pair verdicts from the judge's written reasoning (chain of thought, N replies aggregated). The worker runs
// the engine and stores each record as it is made; core ranks them with the leaderboard's method and
// decoding. This file renders; text from files is rendered as text.

import { h, mount, download, fmt, messagesBeside } from './lib/dom.js';
import { readUpload, plainError } from './lib/upload.js';

export const DESIGN_TABS = [['designs', 'Evaluation types']];

const TYPES = {
  pairwise: 'Pairwise: every two models, both orders',
  reference: 'Pairwise: each model against a reference',
  five: "Pairwise on a 5-point scale (Arena-Hard's), both orders",
  direct: 'Direct score (0–9 or 1–5, no checklist items)',
  reasoned: 'Written reasoning (chain of thought), N replies per response or pair',
};
// The page's words for core's choices (`designChoices`: its named enums, their facts and defaults); a
// name core adds and the page has no words for is shown as it is.
// Core's `Aggregate`: how a response's N replies become one score.
const AGGREGATES = { mean: 'mean', median: 'median', majority: 'majority vote' };
// Core's `DirectInstruction`: seed 004's levels and seed 003's variants.
const INSTRUCTIONS = {
  rocketeval: "RocketEval's Direct prompt (score bands)",
  generic: 'Generic: "evaluate the quality" (level 2)',
  criteria: 'Criteria named (level 3)',
  rubric: 'Criteria defined, with score bands (level 4)',
  'rubric-ends': 'Criteria defined, only the lowest and highest score described (seed 003)',
  perplexity: 'Perplexity: no prompt (level 1)',
};
// Core's `ChecklistUse` (seed 002).
const USES = { never: 'never', always: 'always', selective: 'selectively, where the judge is unsure' };
// Core's `DirectScale`: the range the levels' prompts ask the score in.
const SCALES = { '0-9': '0–9', '1-5': '1–5 (seeds 003 and 004)' };
// Core's `ReferenceUse`: the query's reference answer in a Direct prompt.
const REFERENCES = { paper: "as the prompt's paper does", include: 'included', omit: 'left out' };
// Core's `pairOrders` (rank::PairOrders): how a comparison's two orders become battles.
const ORDERS = { mean: 'one from the mean of the two orders', each: 'one per order (seed 001)' };

/** A menu of core's `names`, each in the page's `words` (or as it is). */
const menu = (names, words) => Object.fromEntries(names.map((n) => [n, words[n] ?? n]));

/** Core's facts about a Direct level: {name, scale (1–5 allowed), rubric (the user's may replace it), prompt}. */
const instructionOf = (choices, name) => choices.instructions.find((i) => i.name === name);

/** The design the worker runs, from the form's state (`u`) and core's `choices`. */
function designOf(u, choices) {
  const k = u.checklist === 'selective' && u.k !== '' ? Number(u.k) : null;
  if (u.type === 'direct') {
    const level = instructionOf(choices, u.instruction);
    const { defaults } = choices;
    const rubric = level.rubric && u.rubric.trim() ? u.rubric : null;
    // The default scale is left out, so designs stored before the choice keep their id.
    const scale = level.scale && u.scale !== defaults.scale ? { scale: u.scale } : {};
    // Seed 003's instance rubrics (a file of `{session_id, rubric}` lines): each query's own, over `rubric`.
    const rubrics = level.rubric && u.rubrics ? { rubrics: u.rubrics.bySession } : {};
    // Without a prompt (perplexity) no checklist, reference answer or threshold applies.
    return {
      type: 'direct',
      settings: {
        instruction: u.instruction,
        ...scale,
        ...rubrics,
        rubric,
        reference: level.prompt ? u.referenceAnswer : defaults.reference,
        checklist: level.prompt ? u.checklist : defaults.checklist,
        k: level.prompt ? k : null,
      },
    };
  }
  if (u.type === 'reasoned') {
    const r = u.reasoned;
    return {
      type: 'reasoned',
      settings: {
        protocol: r.protocol,
        samples: Number(r.samples),
        temperature: Number(r.temperature),
        aggregate: r.aggregate,
        replyTokens: Number(r.replyTokens),
        seed: 0,
      },
    };
  }
  return {
    type: 'pairwise',
    settings: {
      scale: u.type === 'five' ? '5-point' : 'binary',
      checklist: u.checklist,
      k,
      reference: u.type === 'reference' ? u.reference : null,
    },
  };
}

/** Core's facts about a reasoned design's protocol ({pairwise, checklist}); none for other designs. */
const protocolOf = (design, protocols) =>
  design.type === 'reasoned' ? protocols.find((p) => p.name === design.settings.protocol) : null;

/** Whether a design's prompt lists the query's checklist (its responses need one). */
const listsChecklist = (design, protocols) =>
  protocolOf(design, protocols)?.checklist ?? design.settings.checklist !== 'never';

/**
 * A protocol's settings as its paper runs it, for the form
 * (`{protocol, samples, temperature, aggregate, replyTokens}`).
 */
const paperForm = (protocol) => {
  const { seed: _seed, ...form } = protocol.paper;
  return form;
};

/**
 * The reasoned form's fields: a protocol (core's, with its paper's settings), N, T, the aggregation,
 * the reply length.
 */
function reasonedFields(u, protocols, choices, set) {
  const r = u.reasoned;
  const field = (id, label, key, attrs, title) => {
    const el = h('input', { type: 'number', id, 'aria-label': label, value: r[key], size: 5, title, ...attrs });
    el.addEventListener('change', () => {
      r[key] = el.value;
      set();
    });
    return h('label', { title }, `${label} `, el);
  };
  const byName = Object.fromEntries(protocols.map((p) => [p.name, p.description]));
  return [
    h(
      'label',
      {},
      'Protocol ',
      select('design-protocol', 'Reasoning protocol', byName, r.protocol, (name) => {
        Object.assign(r, paperForm(protocols.find((p) => p.name === name)));
        set();
      }),
    ),
    field(
      'design-samples',
      'Replies',
      'samples',
      { min: 1, max: 64, step: 1 },
      "Replies per response or pair, a pair's half in each order (the protocol's paper: 1, 5 or 10)",
    ),
    field(
      'design-temperature',
      'Temperature',
      'temperature',
      { min: 0, step: 0.1 },
      '0: greedy (then one reply); the papers sample at 1.0',
    ),
    h(
      'label',
      {},
      'Aggregate ',
      select(
        'design-aggregate',
        'Aggregation of the replies',
        menu(choices.aggregates, AGGREGATES),
        r.aggregate,
        (v) => {
          r.aggregate = v;
          set();
        },
      ),
    ),
    field(
      'design-reply-tokens',
      'Reply tokens',
      'replyTokens',
      { min: 1, step: 1 },
      'The most tokens one reply may have',
    ),
  ];
}

/**
 * Every loaded response with its query: what a design runs over; with `checklist` (the design may put
 * it in the prompt) only those whose query has one. Returns {jobs, without} (responses left out).
 */
function designJobs(ctx, checklist) {
  const byId = new Map((ctx.state.benchmark ? ctx.state.benchmark.queries : []).map((q) => [q.session_id, q]));
  const all = ctx.state.responses.flatMap((r) =>
    r.records
      .filter((x) => byId.has(x.session_id))
      .map((x) => ({ query: byId.get(x.session_id), response: x, model: r.model })),
  );
  const jobs = checklist ? all.filter((j) => j.query.checklist && j.query.checklist.length) : all;
  return { jobs, without: all.length - jobs.length };
}

/** Show the run's state in the tab (whichever copy of it is drawn now). */
function showStatus(ui, text) {
  ui.designStatus = text;
  const el = document.getElementById('design-status');
  if (el) el.textContent = text;
}

const select = (id, label, choices, value, onchange) => {
  const s = h(
    'select',
    { id, 'aria-label': label },
    Object.entries(choices).map(([v, text]) => h('option', { value: v, selected: v === value }, text)),
  );
  s.addEventListener('change', () => onchange(s.value));
  return s;
};

export const DESIGN_VIEWS = {
  /** Choose a design, run it with the loaded judge, and rank its records with every aggregation. */
  async designs(body, ctx, { ui, rerender, settings: leaderboard, judge }) {
    const models = ctx.state.responses.map((r) => r.model);
    const protocols = (ui.reasonedProtocols ||= await ctx.engine.core('reasonedProtocols'));
    const choices = (ui.designChoices ||= await ctx.engine.core('designChoices'));
    const { defaults } = choices;
    const u = (ui.designForm ||= {
      type: 'pairwise',
      reference: models[0] || '',
      instruction: defaults.instruction,
      scale: defaults.scale,
      checklist: defaults.checklist,
      k: '',
      orders: defaults.pairOrders,
      referenceAnswer: defaults.reference,
      rubric: '',
      reasoned: paperForm(protocols[0]),
    });
    if (!models.includes(u.reference)) u.reference = models[0] || '';
    const set = (field) => (v) => {
      u[field] = v;
      ui.designStatus = '';
      ui.designErrors = [];
      rerender();
    };
    const k = h('input', {
      type: 'number',
      id: 'design-k',
      min: 0,
      step: 0.5,
      size: 5,
      value: u.k,
      'aria-label': 'Selective threshold',
      placeholder: u.type === 'direct' ? '1.5' : '3',
      title:
        u.type === 'direct'
          ? "Use the checklist where the standard deviation of the plain prompt's 0–9 distribution is at least this (default 1.5)"
          : 'Use the checklist where the less-preferred response would get at least this many of 10 sampled verdicts, five per order, in expectation (default 3)',
    });
    k.addEventListener('change', () => {
      u.k = k.value;
      ui.designStatus = '';
      rerender();
    });
    const rubric = h(
      'textarea',
      {
        id: 'design-rubric',
        rows: 2,
        cols: 40,
        'aria-label': 'Rubric',
        placeholder:
          u.instruction === 'criteria'
            ? 'Helpfulness, Relevance, Accuracy, Depth, Creativity, Level of detail'
            : 'the criterion, its definition and when to give each score',
        title:
          'Seed 004 judges one criterion the user names (criteria) or defines with score bands (rubric, rubric-ends); empty: the built-in one',
      },
      u.rubric,
    );
    rubric.addEventListener('change', () => {
      u.rubric = rubric.value;
      ui.designStatus = '';
      rerender();
    });
    const rubricsFile = h('input', {
      type: 'file',
      accept: '.jsonl',
      id: 'design-rubrics',
      'aria-label': 'Rubrics per query',
      title:
        'A JSONL file of {session_id, rubric} lines: each query judged by its own rubric (seed 003), the Rubric box elsewhere',
    });
    rubricsFile.addEventListener('change', async () => {
      const f = rubricsFile.files[0];
      ui.designErrors = [];
      try {
        const read = await ctx.engine.core('parseQueryRubrics', f.name, await readUpload(f, 'jsonl'));
        const known = new Set((ctx.state.benchmark ? ctx.state.benchmark.queries : []).map((q) => q.session_id));
        const unknown = read.filter((r) => !known.has(r.session_id)).map((r) => r.session_id);
        if (unknown.length)
          throw new Error(
            `${f.name}: no loaded query has the session_id ${unknown.slice(0, 3).join(', ')}${unknown.length > 3 ? ', …' : ''}`,
          );
        u.rubrics = { name: f.name, bySession: Object.fromEntries(read.map((r) => [r.session_id, r.rubric])) };
      } catch (e) {
        u.rubrics = null;
        ui.designErrors = [plainError(e)];
      }
      ui.designStatus = '';
      rerender();
    });
    const rubricsShown = u.rubrics
      ? h(
          'span',
          { class: 'hint', id: 'design-rubrics-loaded' },
          `${Object.keys(u.rubrics.bySession).length} queries with their own rubric (${u.rubrics.name}) `,
          h(
            'button',
            {
              onclick: () => {
                u.rubrics = null;
                rerender();
              },
            },
            'Clear',
          ),
        )
      : null;
    const level = instructionOf(choices, u.instruction);
    const perplexity = u.type === 'direct' && !level.prompt;
    const reasoned = u.type === 'reasoned';
    const name = ctx.state.judge ? ctx.state.judge.name : judge;
    const design = designOf(u, choices);
    const settings = design.type === 'pairwise' ? { ...leaderboard, pairOrders: u.orders } : leaderboard;
    const run = async () => {
      const { jobs, without } = designJobs(ctx, listsChecklist(design, protocols));
      ui.designErrors = [];
      if (!jobs.length) {
        ui.designErrors = ['Load a benchmark and responses first (with checklists, to put them in the prompt).'];
        return rerender();
      }
      if (without)
        ctx.notice(`${without} responses answer queries without a checklist and are left out of this run.`, 'warn');
      showStatus(ui, 'starting…');
      let done = 'starting';
      const off = [
        ctx.engine.on('design-progress', (m) => {
          done = `${m.done} of ${m.total} ${m.pairs ? 'comparisons' : 'responses'}`;
          showStatus(ui, `${done}…`);
        }),
        ctx.engine.on('design-reply', (m) => {
          const read = m.score != null ? `scored ${m.score}` : m.vote ? `voted for ${m.vote}` : 'unreadable';
          showStatus(ui, `${done}; the next: reply ${m.reply} of ${m.samples} ${read}…`);
        }),
        ctx.engine.on('design-error', (m) => {
          ui.designErrors.push(`${m.model} on ${m.session_id}: ${m.error}`);
        }),
      ];
      ui.designRunning = true;
      try {
        const r = await ctx.engine.request('runDesign', { design, jobs });
        ui.designStatus = r.cancelled
          ? `cancelled after ${r.done} of ${r.total}; what was made is kept`
          : r.stopped
            ? `stopped: ${r.stopped}`
            : `done: ${r.total}`;
      } catch (e) {
        ui.designStatus = '';
        ui.designErrors.push(e.message);
      } finally {
        off.forEach((f) => f());
        ui.designRunning = false;
      }
      rerender();
    };
    const form = h(
      'div',
      { class: 'row' },
      h('label', {}, 'Type ', select('design-type', 'Evaluation type', TYPES, u.type, set('type'))),
      u.type === 'reference'
        ? h(
            'label',
            {},
            'Reference ',
            select(
              'design-reference',
              'Reference model',
              Object.fromEntries(models.map((m) => [m, m])),
              u.reference,
              set('reference'),
            ),
          )
        : null,
      u.type === 'direct'
        ? h(
            'label',
            {},
            'Instruction ',
            select(
              'design-instruction',
              'Instruction level',
              menu(
                choices.instructions.map((i) => i.name),
                INSTRUCTIONS,
              ),
              u.instruction,
              set('instruction'),
            ),
          )
        : null,
      u.type === 'direct' && level.scale
        ? h(
            'label',
            {},
            'Scale ',
            select('design-scale', 'Score scale', menu(choices.scales, SCALES), u.scale, set('scale')),
          )
        : null,
      ...(u.type === 'direct' && level.rubric
        ? [h('label', {}, 'Rubric ', rubric), h('label', {}, 'Rubrics per query ', rubricsFile), rubricsShown]
        : []),
      u.type === 'direct' && !perplexity
        ? h(
            'label',
            {
              title:
                "The query's reference answer in the prompt: RocketEval's Direct prompt carries it (its MT-Bench setting), seed 004's levels judge without one",
            },
            'Reference answer ',
            select(
              'design-reference-answer',
              'Reference answer',
              menu(choices.references, REFERENCES),
              u.referenceAnswer,
              set('referenceAnswer'),
            ),
          )
        : null,
      ...(reasoned
        ? reasonedFields(u, protocols, choices, () => {
            ui.designStatus = '';
            ui.designErrors = [];
            rerender();
          })
        : []),
      perplexity || reasoned
        ? null
        : h(
            'label',
            {},
            'Checklist in the prompt ',
            select(
              'design-checklist',
              'Checklist use',
              menu(choices.checklistUses, USES),
              u.checklist,
              set('checklist'),
            ),
          ),
      !perplexity && !reasoned && u.checklist === 'selective' ? h('label', {}, 'threshold ', k) : null,
      design.type === 'pairwise'
        ? h(
            'label',
            {
              title:
                'The mean of the two orders gives one battle per comparison (a split is a tie; the default, since a small judge\'s verdict in one order is mostly its position). Seed 001 counts each order as a battle; a 5-point verdict "much better" as three battles, "better" as one, a tie as one tie.',
            },
            'Battles ',
            select(
              'design-orders',
              'Battles per comparison',
              menu(choices.pairOrders, ORDERS),
              u.orders,
              set('orders'),
            ),
          )
        : null,
    );
    const buttons = h(
      'div',
      { class: 'row' },
      h(
        'button',
        {
          id: 'design-run',
          class: 'primary',
          disabled: !ctx.state.judge || ui.designRunning,
          onclick: run,
          title: ctx.state.judge ? '' : 'Load a judge first',
        },
        'Run with the loaded judge',
      ),
      h(
        'button',
        { id: 'design-cancel', disabled: !ui.designRunning, onclick: () => ctx.engine.signal('cancel') },
        'Cancel',
      ),
      h('span', { class: 'hint', id: 'design-status' }, ui.designStatus || ''),
      messagesBeside('design-error', ui.designErrors),
    );
    const intro = h(
      'p',
      { class: 'hint' },
      "Grade the loaded responses another way and rank them with the leaderboard's method and decoding. Pairwise comparisons run in both orders, one battle from their mean unless you choose one per order (the judge's position bias is reported); every comparison and score is stored as it is made, so a rerun continues where it stopped.",
    );
    if (!name) return mount(body, intro, form, buttons, h('p', { class: 'hint' }, 'Load a judge to run a design.'));
    let v;
    try {
      v = await ctx.engine.request('designView', {
        judge: name,
        design,
        settings,
        ...(ui.decoding ? { decoding: ui.decoding } : {}),
      });
    } catch (e) {
      return mount(body, intro, form, buttons, h('p', { class: 'notice error' }, e.message));
    }
    mount(body, intro, form, buttons, await designResult(v, ctx, { name, settings, decoding: ui.decoding, u }));
  },
};

/** A design's leaderboard, position consistency and agreement with the checklist ranking and the reference. */
async function designResult(v, ctx, { name, settings, decoding, u }) {
  if (!v.count) return h('p', { class: 'hint', id: 'design-empty' }, `Nothing made yet with this design by ${name}.`);
  const what = v.pairs ? 'comparisons (both orders)' : 'responses scored';
  const c = v.consistency;
  const unjudged = v.pairs ? 'pairs without a verdict (left out)' : 'responses without a readable one (unanswered)';
  const unscored =
    v.type === 'reasoned'
      ? ` · ${v.unreadable.length} of ${v.replies} replies unreadable, ${v.unscored} ${unjudged}`
      : v.unscored
        ? ` · ${v.unscored} empty responses have no perplexity`
        : '';
  const read = v.pairs ? "the majority of the replies' votes" : `${v.settings.aggregate} of the replies' scores`;
  const decoded = v.type === 'reasoned' ? read : decoding ? `${decoding.method} decoding` : 'the exact expectation';
  const parts = [
    h(
      'p',
      { class: 'hint', id: 'design-summary' },
      `${name} · ${v.count} ${what}${unscored} · ranked by ${v.ranking?.method ?? settings.method}, ${decoded} (the Leaderboard tab's Method${v.type === 'reasoned' ? '' : ' and Decoding'})`,
    ),
    v.type === 'reasoned' && v.unreadable.length
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
      : null,
    c
      ? h(
          'p',
          { id: 'design-consistency' },
          `Position consistency ${fmt(c.rate, 3)}: ${c.consistent} of ${c.pairs} comparisons keep their verdict when the two responses swap places; p(the first shown wins) ${fmt(c.first_shown, 3)} (0.5 without position bias).`,
        )
      : null,
  ];
  // The records can be downloaded even where they cannot be ranked (e.g. no reply could be read).
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
  const exportRow = h(
    'div',
    { class: 'row' },
    h(
      'button',
      { id: 'design-export', onclick: () => download(file, v.jsonl, 'application/x-ndjson') },
      `Download ${file}`,
    ),
    h('span', { class: 'hint' }, how),
  );
  if (v.rankError) return [...parts, h('p', { class: 'notice error' }, v.rankError), exportRow];
  const m = v.ranking.method;
  const digits = m === 'winrate' ? 3 : m === 'mean' || m === 'median' ? 2 : 0;
  // Verdicts on pairs rank without response scores: each model's count is its battles.
  const verdicts = v.type === 'reasoned' && v.pairs;
  parts.push(
    h(
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
    ),
  );
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
  // Agreement with the checklist leaderboard (this judge) and with a loaded reference ranking.
  const against = [];
  if (ctx.graded.length) {
    try {
      const checklist = await ctx.engine.request('view', {
        view: 'leaderboard',
        judge: name,
        settings,
        ...(decoding ? { decoding } : {}),
      });
      against.push(["this judge's checklist grading", checklist.entries]);
    } catch {
      /* fewer than two graded models: nothing to compare */
    }
  }
  if (ctx.state.reference) against.push([ctx.state.reference.name, ctx.state.reference.entries]);
  const rows = [];
  for (const [label, entries] of against) {
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
  if (rows.length) {
    parts.push(
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
    );
  }
  parts.push(exportRow);
  return parts;
}
