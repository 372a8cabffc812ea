// The result views, each answered by `core` through the wasm module from the stored judgments of one
// judge. Requests: `view`, `rankDefaults`.

import { engine, failure } from './engine.js';
import { judgmentsOf } from './store.js';
import { inScope } from '../lib/run.js';

/**
 * {view, judge, scope?, settings?, decoding?, categories?, labels?, strong?, session?} → the view, of
 * the judgments of `scope`'s responses (runScope's keys: the run the page has loaded) when given. `settings` are
 * ranking settings ({method, tieMargin, equal, pairOrders, bootstrap, resample, seed}, each optional;
 * defaults: `rankDefaults`). `decoding` ({method, samples?, temperature?, seed?}, core's): how the
 * items' probabilities become scores, passed to core as a parameter (null: as each judgment records;
 * the stored judgments are never rewritten).
 */
const VIEWS = {
  leaderboard: (w, js, r, d) => w.rank(js, r.settings, d),
  scores: (w, js, r, d) => w.scoreJudgments(js, d),
  categories: (w, js, r, d) => w.categoryTable(js, r.categories || {}, d),
  distributions: (w, js, r, d) => w.distributions(js, d),
  disagreement: (w, js) => w.disagreement(js),
  winRates: (w, js, r, d) => w.winRates(js, r.settings, d),
  judgmentsJsonl: (w, js) => w.judgmentsJsonl(js),
  // The judgments of one query ({session}), for the inspector's items: the page keeps none.
  query: (w, js, r) => js.filter((j) => j.session_id === r.session),
  scoresCsv: (w, js, r, d) => w.scoresCsv(js, d),
  rankingCsv: (w, js, r, d) => w.rankingCsv(w.rank(js, r.settings, d).entries),
  battlesJson: (w, js, r, d) => w.battlesJson(js, r.settings, d),
  // The user's labels ({labels}) refit the supervised scorer: the ranking before and after.
  calibration: (w, js, r, d) => w.calibrate(js, r.labels || [], r.settings, d),
  // A strong judge's verdicts ({strong: {name, bytes}}) against these judgments.
  strongAgreement: (w, js, r, d) => w.strongAgreement(js, r.strong.name, r.strong.bytes, r.settings, d),
};

export const handlers = {
  /** A result view (see VIEWS). */
  async view(r) {
    const answer = VIEWS[r.view];
    if (!answer) throw failure('input', `unknown view ${r.view}`);
    const all = await judgmentsOf(r.judge);
    return answer(engine.wasm, r.scope ? inScope(r.scope, all) : all, r, r.decoding ?? null);
  },

  /** The ranking settings' defaults and choices (core's). */
  async rankDefaults() {
    return engine.wasm.rankDefaults();
  },
};
