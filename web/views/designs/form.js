// Results → Evaluation types: the design form. Its controls (type, reference, Direct level, scale,
// rubric and rubrics per query, reference answer, the reasoned protocol's settings, checklist use and
// threshold, battles) keep their state in the shared `ui.designForm`; a change redraws the tab.

import { h } from '../../lib/dom.js';
import { uploadControl } from '../../lib/upload.js';
import {
  TYPES,
  TYPE_ABOUT,
  AGGREGATES,
  INSTRUCTIONS,
  USES,
  SCALES,
  REFERENCES,
  ORDERS,
  menu,
  instructionOf,
  paperForm,
} from './choices.js';

const select = (id, label, choices, value, onchange) => {
  const s = h(
    'select',
    { id, 'aria-label': label },
    Object.entries(choices).map(([v, text]) => h('option', { value: v, selected: v === value }, text)),
  );
  s.addEventListener('change', () => onchange(s.value));
  return s;
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
      '0: greedy (then one reply: a near-tie at any one token changes all it writes after, so one greedy verdict is fragile); the papers sample at 1.0',
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

/** The selective threshold: where the judge is unsure enough to be shown the checklist. */
function thresholdInput({ u, ui, rerender }) {
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
  return k;
}

/** Seed 004's criterion of the user's own: named (criteria) or defined with score bands. */
function rubricBox({ u, ui, rerender }) {
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
  return rubric;
}

/** Seed 003's instance rubrics: a JSONL file of `{session_id, rubric}` lines, each a loaded query's. */
function rubricsUpload(ctx, { u, ui, rerender }) {
  return uploadControl(
    {
      id: 'design-rubrics',
      accept: '.jsonl',
      label: 'Rubrics per query',
      expect: 'jsonl',
      title:
        'A JSONL file of {session_id, rubric} lines: each query judged by its own rubric (seed 003), the Rubric box elsewhere',
    },
    {
      use: async (f, bytes) => {
        ui.designErrors = [];
        const read = await ctx.engine.core('parseQueryRubrics', f.name, bytes);
        const known = new Set((ctx.state.benchmark ? ctx.state.benchmark.queries : []).map((q) => q.session_id));
        const unknown = read.filter((r) => !known.has(r.session_id)).map((r) => r.session_id);
        if (unknown.length)
          throw new Error(
            `${f.name}: no loaded query has the session_id ${unknown.slice(0, 3).join(', ')}${unknown.length > 3 ? ', …' : ''}`,
          );
        u.rubrics = { name: f.name, bySession: Object.fromEntries(read.map((r) => [r.session_id, r.rubric])) };
      },
      failed: (message) => {
        u.rubrics = null;
        ui.designErrors = [message];
      },
      done: () => {
        ui.designStatus = '';
        rerender();
      },
    },
  );
}

/** The loaded rubrics per query, with a button that clears them; null when none are loaded. */
function rubricsLoaded({ u, rerender }) {
  return u.rubrics
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
}

/** A Direct design's fields: the instruction level, its scale and rubric where it has them, the reference answer. */
function directFields(ctx, f, level, perplexity) {
  const { u, choices, set } = f;
  return [
    h(
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
    ),
    level.scale
      ? h(
          'label',
          {},
          'Scale ',
          select('design-scale', 'Score scale', menu(choices.scales, SCALES), u.scale, set('scale')),
        )
      : null,
    ...(level.rubric
      ? [
          h('label', {}, 'Rubric ', rubricBox(f)),
          h('label', {}, 'Rubrics per query ', rubricsUpload(ctx, f)),
          rubricsLoaded(f),
        ]
      : []),
    !perplexity
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
  ];
}

/** Where the query's checklist goes in the prompt, and the threshold of the selective use. */
function checklistFields(f) {
  const { u, choices, set } = f;
  return [
    h(
      'label',
      {},
      'Checklist in the prompt ',
      select('design-checklist', 'Checklist use', menu(choices.checklistUses, USES), u.checklist, set('checklist')),
    ),
    u.checklist === 'selective' ? h('label', {}, 'threshold ', thresholdInput(f)) : null,
  ];
}

/** How a pairwise design's two orders become battles. */
function ordersField({ u, choices, set }) {
  return h(
    'label',
    {
      title:
        'The mean of the two orders gives one battle per comparison (a split is a tie; the default, since a small judge\'s verdict in one order is mostly its position). Seed 001 counts each order as a battle; a 5-point verdict "much better" as three battles, "better" as one, a tie as one tie.',
    },
    'Battles ',
    select('design-orders', 'Battles per comparison', menu(choices.pairOrders, ORDERS), u.orders, set('orders')),
  );
}

/**
 * The form's row: the type and the fields it has. `f`: {ui, u (the form's state), models, protocols,
 * choices, design (the one the form describes), rerender}.
 */
export function designForm(ctx, f) {
  const { ui, u, models, protocols, choices, design, rerender } = f;
  const set = (field) => (v) => {
    u[field] = v;
    ui.designStatus = '';
    ui.designErrors = [];
    rerender();
  };
  const fields = { ...f, set };
  const level = instructionOf(choices, u.instruction);
  const perplexity = u.type === 'direct' && !level.prompt;
  const reasoned = u.type === 'reasoned';
  const row = h(
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
    ...(u.type === 'direct' ? directFields(ctx, fields, level, perplexity) : []),
    ...(reasoned
      ? reasonedFields(u, protocols, choices, () => {
          ui.designStatus = '';
          ui.designErrors = [];
          rerender();
        })
      : []),
    ...(perplexity || reasoned ? [] : checklistFields(fields)),
    design.type === 'pairwise' ? ordersField(fields) : null,
  );
  return h('div', {}, h('p', { class: 'hint', id: 'design-type-about' }, TYPE_ABOUT[u.type]), row);
}
