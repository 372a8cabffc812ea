// The educator's requests (web/views/educator/): bias probes on one response or many, a second judge
// for the judge probe, and what the judge saw and how a score and rank came about. Requests: `probe`,
// `probeAll`, `loadProbeJudge`, `explain`.

import { engine, post, failure } from './engine.js';
import { control, loadedJudge, loadFrom, startControl } from './judge.js';
import { checkFits, openModel } from './models.js';
import { gradeOne } from './grading.js';
import { gradedJudgment, judgmentsOf } from './store.js';

/** A second judge for the "replace the judge" probe: {name, handle}. */
let probeJudge = null;

/** The response with its graded answer replaced by `text`. */
function withAnswer(response, text) {
  return { ...response, output: [text, ...response.output.slice(1)] };
}

/** A response's score (core's, mean p(Yes) on 1–10). */
function scoreOf(judgment) {
  return engine.wasm.explainScore(judgment).score;
}

/** The share a text probe changes by default: pad adds 30 %, truncate keeps 50 %. */
const DEFAULT_AMOUNT = { pad: 0.3, truncate: 0.5, reorder: 0 };

/**
 * One probe on one response: {probe, query, response, model, options}. Returns {before, after, detail}
 * (scores on 1–10; for `position`, p(this response is better) shown first and shown second).
 * `options`: {amount} for pad (share added) and truncate (share kept), {item} for drop_item (index),
 * {text} for add_item, {prompt} for prompt_wording and instruction_level (a PromptStyle),
 * {other} (a response) for position. `judge` needs loadProbeJudge first.
 */
async function runProbe({ probe, query, response, model, options = {} }) {
  const judge = loadedJudge();
  const before = await gradedJudgment(judge.name(), model, response.session_id);
  const regrade = async (q, r, gradeOptions) => (await gradeOne(q, r, model, gradeOptions)).judgment;
  const scored = (j, detail = {}) => ({
    before: scoreOf(before),
    after: scoreOf(j),
    detail: { ...detail, probs: j.norm_probability },
  });
  // Nothing to change (the report leaves these out).
  const unchanged = (detail = {}) => ({
    before: scoreOf(before),
    after: scoreOf(before),
    detail: { ...detail, unchanged: true },
  });
  switch (probe) {
    case 'pad':
    case 'reorder':
    case 'truncate': {
      const t = engine.wasm.probeText(probe, response.output[0], options.amount ?? DEFAULT_AMOUNT[probe]);
      if (!t.changed) return unchanged({ text: t.text });
      return scored(await regrade(query, withAnswer(response, t.text)), { text: t.text });
    }
    case 'drop_item': {
      const i = options.item;
      // Over a whole set, a checklist without item i (or with one item only) is left as it is.
      if (!(i >= 0 && i < before.norm_probability.length) || before.norm_probability.length < 2) {
        return unchanged();
      }
      // Items are graded independently (each reads the shared prefix and itself only), so dropping
      // one leaves the others' p(Yes) as they were: no regrading.
      const probs = before.norm_probability.filter((_, k) => k !== i);
      return scored({ ...before, norm_probability: probs }, { item: query.checklist[i] });
    }
    case 'add_item': {
      const text = (options.text || '').trim();
      if (!text) throw failure('input', 'write the checklist item to add');
      const added = await regrade({ ...query, checklist: [text] }, response);
      const p = added.norm_probability[0];
      return scored({ ...before, norm_probability: [...before.norm_probability, p] }, { item: text, p });
    }
    case 'prompt_wording':
    case 'instruction_level':
      return scored(await regrade(query, response, { prompt: options.prompt }), { prompt: options.prompt });
    case 'judge': {
      if (!probeJudge) throw failure('input', 'load a second judge for this probe first');
      const j = (await probeJudge.handle.grade(query, response, model, null)).judgment;
      return scored(j, { judge: probeJudge.name });
    }
    case 'position': {
      const other = options.other;
      if (!other) throw failure('input', 'choose the response to compare with');
      const first = await judge.compare(query, response, other);
      const second = await judge.compare(query, other, response);
      // before: p(this better) shown first; after: shown second. A consistent judge gives the same.
      return { before: first.p_a, after: 1 - second.p_a, detail: { other: other.generator, first, second } };
    }
    default:
      throw failure('input', `unknown probe ${probe}`);
  }
}

export const handlers = {
  probe: runProbe,

  /**
   * A probe over many responses ({probe, options, jobs: [{query, response, model, other?}]}), with
   * `probe-progress`; returns {outcomes, summary, skipped} (summary: core's probeSummary).
   */
  async probeAll({ probe, options = {}, jobs }) {
    const outcomes = [];
    startControl();
    for (let i = 0; i < jobs.length; i++) {
      if (control.cancelled) break;
      const { query, response, model, other } = jobs[i];
      const r = await runProbe({ probe, query, response, model, options: other ? { ...options, other } : options });
      if (!r.detail.unchanged)
        outcomes.push({ session_id: response.session_id, model, before: r.before, after: r.after });
      post({ type: 'probe-progress', done: i + 1, total: jobs.length });
    }
    const summary = outcomes.length ? engine.wasm.probeSummary(probe, outcomes) : null;
    return { outcomes, summary, skipped: jobs.length - outcomes.length };
  },

  /** Load a second judge for the judge probe ({source}: a manifest entry's source) on the CPU; the main judge stays. */
  async loadProbeJudge({ source }) {
    try {
      probeJudge?.handle.free();
    } catch {
      /* already gone */
    }
    probeJudge = null;
    const blob = await openModel(source, (size) => checkFits(size, 'cpu'));
    const handle = await loadFrom({ blob, name: source.key, maxTokens: 4096 }, 'cpu', 'probe-load');
    probeJudge = { name: source.key, handle };
    return { name: source.key };
  },

  /**
   * What the judge saw and how the score and rank came about ({query, response, model, settings?,
   * options?}): {prompt (engine's PromptView), judgment, score (explainScore), scores (this model's
   * response scores), entry (its leaderboard row), models (how many are ranked), method}.
   */
  async explain({ query, response, model, settings, options }) {
    const judge = loadedJudge();
    const { wasm } = engine;
    const judgment = await gradedJudgment(judge.name(), model, response.session_id);
    const js = await judgmentsOf(judge.name());
    const ranking = wasm.rank(js, settings);
    return {
      prompt: judge.explain(query, response, options || null),
      judgment,
      score: wasm.explainScore(judgment),
      scores: wasm.scoreJudgments(js.filter((j) => j.model_test === model)).scores,
      entry: ranking.entries.find((e) => e.model === model),
      models: ranking.entries.length,
      method: ranking.method,
    };
  },
};
