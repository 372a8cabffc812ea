// Grading: a run of the loaded judge over responses in core's order with its live leaderboard,
// what is left to grade and what is graded, regrading after a checklist edit, and the stored
// judgments. Requests: `grade`, `standing`, `pending`, `graded`, `regrade`, `judgments`.

import { Pace } from '../lib/pace.js';
import { inScope } from '../lib/run.js';
import { engine, post, describeError, recoverIfTrapped } from './engine.js';
import { current, control, loadedJudge, judgeRun, onJudge } from './judge.js';
import { stored, keep, judgmentOf, judgmentsOf } from './store.js';

/**
 * The live leaderboard (core's `settle`) of `judge`'s stored grades of the run in `scope` ({models,
 * sessions, total}), its sentence with the run's `pace` ({secsPerResponse?, elapsed?}); null when it
 * cannot be computed (a standing is information, never a reason to stop grading).
 */
async function runStanding(judgeName, scope, pace) {
  const js = inScope(scope, await judgmentsOf(judgeName));
  try {
    return engine.wasm.standing(
      js,
      { models: scope.models, total: scope.total, queries: scope.sessions.length, pace },
      null,
    );
  } catch (e) {
    post({ type: 'notice', text: `The live leaderboard could not be computed: ${describeError(e)}` });
    return null;
  }
}

/** The tokens `judge` runs to grade `job` ({query, response}): its prompt's prefix and every item's
 * suffix, counted by tokenizing (the judge's `explain`); null when it cannot be said. */
function tokensOf(judge, job) {
  try {
    const v = judge.explain(job.query, job.response, null);
    return v.prefix_tokens + v.suffix_tokens.reduce((a, b) => a + b, 0);
  } catch {
    return null;
  }
}

/** Grade one response with the loaded judge (moving to the CPU if the GPU fails). `options`: see JudgeHandle.grade. */
export function gradeOne(query, response, model, options = null) {
  return onJudge((j) => j.grade(query, response, model, options));
}

export const handlers = {
  /**
   * Grade a run: `jobs` ([{query, response, model}]: the responses still to grade, model by model in
   * file order) in `order` (core's schedule: `interleaved`, `model` or `adaptive`) from `seed` (core's
   * default when absent).
   * `scope` ({models, sessions, total, keys}: the whole run, what is graded included) gives the live
   * leaderboard, posted as {type: 'standing'} at the start and with every `graded` event after;
   * with `until: 'settled'` (or the signal `untilSettled` during the run) the run stops once that
   * leaderboard is settled. Each judgment is written
   * to IndexedDB before it is reported, so a reload loses at most the response in flight.
   */
  async grade({ jobs, order = 'interleaved', seed = null, scope = null, until = null }) {
    const judge = loadedJudge();
    const { wasm } = engine;
    const started = performance.now();
    const startedOn = current.info.backendKind;
    // The page may turn this on or off during the run (signals untilSettled, untilDone).
    control.untilSettled = until === 'settled';
    const defaults = wasm.runChoices();
    const { rule } = defaults;
    seed ??= defaults.seed;
    const keys = jobs.map((j) => ({
      model: j.model,
      session_id: j.response.session_id,
      category: j.query.category ?? null,
    }));
    const done = new Uint8Array(jobs.length);
    // The job of each step, chosen once (a step retried on the CPU after a GPU failure keeps its job).
    const picked = [];
    let live = scope ? await runStanding(judge.name(), scope, {}) : null;
    if (live) post({ type: 'standing', standing: live });
    const pick = (i) =>
      (picked[i] ??= wasm.nextJob(keys, order, seed, done, order === 'adaptive' ? live : null, rule.minQueries));
    const pace = new Pace();
    // The tokens the judge will run for each job (its prompt and items, tokenized, nothing run): the
    // time left is the work left at the measured seconds per token.
    const work = jobs.map((j) => tokensOf(judge, j));
    let tokensLeft = work.every((t) => t != null) ? work.reduce((a, b) => a + b, 0) : null;
    let stepStarted = 0;
    // Prompt tokens not run again: each query's part, kept from its previous response.
    let kept = 0;
    const r = await judgeRun(
      jobs.length,
      (j, i) => {
        stepStarted = performance.now();
        const k = pick(i);
        return j.grade(jobs[k].query, jobs[k].response, jobs[k].model, null);
      },
      async (i, result) => {
        const { prefixTokens, suffixTokens, keptTokens, truncatedChars } = result;
        const seconds = (performance.now() - stepStarted) / 1000;
        kept += keptTokens;
        pace.add(seconds, prefixTokens + suffixTokens);
        done[picked[i]] = 1;
        if (tokensLeft != null) tokensLeft -= work[picked[i]];
        await keep(result.judgment);
        const secs = (performance.now() - started) / 1000;
        const remaining = jobs.length - i - 1;
        // The live leaderboard after every response, posted with it: the page shows one count.
        if (scope) {
          live = await runStanding(current.handle.name(), scope, {
            secsPerResponse: pace.secsPerResponse(),
            elapsed: secs,
          });
        }
        post({
          type: 'graded',
          judgment: result.judgment,
          detail: { prefixTokens, suffixTokens, truncatedChars, seconds, backend: current.info.backendKind },
          done: i + 1,
          total: jobs.length,
          keptTokens: kept,
          perMinute: pace.perMinute(),
          secsPerResponse: pace.secsPerResponse(),
          secsPerToken: pace.secsPerToken(),
          etaSec: pace.secondsLeft(remaining, tokensLeft),
          ...(scope ? { standing: live } : {}),
        });
      },
      (i, error) => {
        // No job chosen: the schedule itself failed, which ends the run.
        if (picked[i] === undefined) throw new Error(`the grading order failed: ${error}`);
        // Not graded in this run: skipped, so the schedule moves on.
        done[picked[i]] = 1;
        if (tokensLeft != null) tokensLeft -= work[picked[i]];
        const job = jobs[picked[i]];
        post({ type: 'grade-error', session_id: job.response.session_id, model: job.model, error });
      },
      () => control.untilSettled && !!live && live.settled,
    );
    const base = { graded: r.done, ...(live ? { sentence: live.sentence } : {}) };
    if (r.cancelled) return { ...base, cancelled: true };
    if (r.stopped) return { ...base, stopped: r.stopped };
    if (r.settled) return { ...base, settled: true, left: jobs.length - r.done };
    return startedOn === current.info.backendKind ? base : { ...base, movedTo: current.info.backendKind };
  },

  /** The tokens the loaded judge runs to grade `jobs` ([{query, response}]), tokenized and not run:
   * {tokens}, null when a job's cannot be said (the page's estimate before a run). */
  async work({ jobs }) {
    const judge = loadedJudge();
    let tokens = 0;
    for (const j of jobs) {
      const t = tokensOf(judge, j);
      if (t == null) return { tokens: null };
      tokens += t;
    }
    return { tokens };
  },

  /** The live leaderboard of `judge`'s stored grades of a run (`scope` as for `grade`), or null. */
  async standing({ judge: name, scope, secsPerResponse = null }) {
    return runStanding(name, scope, secsPerResponse ? { secsPerResponse } : {});
  },

  /**
   * The indices of `candidates` ([{model, session_id, items}]: responses with their checklist's
   * length now) that `judge` has still to grade: core's `resume` rule, as `rocketjudge grade` resumes
   * (a stored judgment counts when made by this judge with the tab's prompt wording, undecoded, on
   * as many items as the checklist has).
   */
  async pending({ judge, candidates }) {
    const { wasm } = engine;
    const settings = { judge, promptVersion: wasm.promptVersion() };
    return [...wasm.pendingResponses(await judgmentsOf(judge), candidates, settings)];
  },

  /**
   * What is stored, for the page's counts and pickers: {judge, responses: [{model_test, session_id}]}
   * — `judge` the one asked for, else the one with the most stored grades (null when nothing is
   * stored), and the responses it graded.
   */
  async graded({ judge = null }) {
    const all = [...(await stored()).values()];
    const counts = {};
    for (const j of all) counts[j.judge] = (counts[j.judge] || 0) + 1;
    const chosen = judge ?? Object.entries(counts).sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
    const responses = all
      .filter((j) => j.judge === chosen)
      .map(({ model_test, session_id }) => ({ model_test, session_id }));
    return { judge: chosen, responses };
  },

  /**
   * Regrade after a checklist edit: `query` with its new checklist, `keep` ([[newIndex, oldIndex]]:
   * items whose grades stay), `grade` (new indices: items graded now) for every response in `jobs`
   * ([{response, model}]). Stores and returns the merged judgments.
   */
  async regrade({ query, keep: kept, grade, jobs }) {
    loadedJudge();
    const partial = { ...query, checklist: grade.map((i) => query.checklist[i]) };
    const out = [];
    for (const { response, model } of jobs) {
      let fresh;
      try {
        fresh = (await gradeOne(partial, response, model)).judgment;
      } catch (e) {
        await recoverIfTrapped(e);
        throw e;
      }
      const prev = await judgmentOf(fresh.judge, fresh.model_test, fresh.session_id);
      const probs = query.checklist.map(() => null);
      for (const [ni, oi] of kept) probs[ni] = prev ? prev.norm_probability[oi] : null;
      grade.forEach((ni, k) => {
        probs[ni] = fresh.norm_probability[k];
      });
      const merged = { ...fresh, norm_probability: probs, judgment: engine.wasm.judgmentLabels(probs) };
      await keep(merged);
      out.push(merged);
    }
    return out;
  },

  /** Every stored judgment (the tests read the store with it; the page asks for views and `graded`). */
  async judgments() {
    return [...(await stored()).values()];
  },
};
