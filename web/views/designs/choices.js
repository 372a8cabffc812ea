// Results → Evaluation types: the page's words for core's design choices (types, Direct levels,
// checklist use, scales, aggregations, battles) and the design the worker runs, made from the form's
// state.

export const TYPES = {
  pairwise: 'Pairwise, both orders',
  reference: 'Pairwise against a reference',
  five: 'Pairwise, 5-point scale',
  direct: 'Direct score, no checklist',
  reasoned: 'Written reasoning',
};
// What each type does, said below the menu (the menu's words are short enough for a phone).
export const TYPE_ABOUT = {
  pairwise: 'Every two models compared on each query, in both orders.',
  reference: 'Each model compared with a reference model on each query, in both orders.',
  five: "Every two models compared on a 5-point scale (Arena-Hard's), in both orders.",
  direct: 'A score from 0 to 9 or 1 to 5 for each response, without checklist items.',
  reasoned: 'The judge writes its reasoning, then a score: N replies per response or pair.',
};
// The page's words for core's choices (`designChoices`: its named enums, their facts and defaults); a
// name core adds and the page has no words for is shown as it is.
// Core's `Aggregate`: how a response's N replies become one score.
export const AGGREGATES = { mean: 'mean', median: 'median', majority: 'majority vote' };
// Core's `DirectInstruction`: seed 004's levels and seed 003's variants.
export const INSTRUCTIONS = {
  rocketeval: "RocketEval's (score bands)",
  generic: 'Generic (level 2)',
  criteria: 'Criteria named (level 3)',
  rubric: 'Criteria and bands (level 4)',
  'rubric-ends': 'Criteria, ends only (seed 003)',
  perplexity: 'Perplexity (level 1)',
};
// Core's `ChecklistUse` (seed 002).
export const USES = { never: 'never', always: 'always', selective: 'where the judge is unsure' };
// Core's `DirectScale`: the range the levels' prompts ask the score in.
export const SCALES = { '0-9': '0–9', '1-5': '1–5 (seeds 003 and 004)' };
// Core's `ReferenceUse`: the query's reference answer in a Direct prompt.
export const REFERENCES = { paper: "as the prompt's paper does", include: 'included', omit: 'left out' };
// Core's `pairOrders` (rank::PairOrders): how a comparison's two orders become battles.
export const ORDERS = { mean: 'mean of the two orders', each: 'one per order (seed 001)' };

/** A menu of core's `names`, each in the page's `words` (or as it is). */
export const menu = (names, words) => Object.fromEntries(names.map((n) => [n, words[n] ?? n]));

/** Core's facts about a Direct level: {name, scale (1–5 allowed), rubric (the user's may replace it), prompt}. */
export const instructionOf = (choices, name) => choices.instructions.find((i) => i.name === name);

/** The design the worker runs, from the form's state (`u`) and core's `choices`. */
export function designOf(u, choices) {
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
export const listsChecklist = (design, protocols) =>
  protocolOf(design, protocols)?.checklist ?? design.settings.checklist !== 'never';

/**
 * A protocol's settings as its paper runs it, for the form
 * (`{protocol, samples, temperature, aggregate, replyTokens}`).
 */
export const paperForm = (protocol) => {
  const { seed: _seed, ...form } = protocol.paper;
  return form;
};
