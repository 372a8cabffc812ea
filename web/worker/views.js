// The result views, each answered by `core` through the wasm module from the stored judgments of one
// judge. Requests: `view`, `rankDefaults`.

import { engine, failure } from './engine.js';
import { judgmentsOf } from './store.js';

/**
 * {view, judge, settings?, decoding?, categories?, labels?, strong?} → the view. `settings` are
 * ranking settings ({method, tieMargin, equal, pairOrders, bootstrap, resample, seed}, each optional;
 * defaults: `rankDefaults`).
 */
const VIEWS = {
  leaderboard: (w, js, r) => w.rank(js, r.settings),
  scores: (w, js) => w.scoreJudgments(js),
  categories: (w, js, r) => w.categoryTable(js, r.categories || {}),
  distributions: (w, js) => w.distributions(js),
  disagreement: (w, js) => w.disagreement(js),
  winRates: (w, js, r) => w.winRates(js, r.settings),
  judgmentsJsonl: (w, js) => w.judgmentsJsonl(js),
  scoresCsv: (w, js) => w.scoresCsv(js),
  rankingCsv: (w, js, r) => w.rankingCsv(w.rank(js, r.settings).entries),
  battlesJson: (w, js, r) => w.battlesJson(js, r.settings),
  // The user's labels ({labels}) refit the supervised scorer: the ranking before and after.
  calibration: (w, js, r) => w.calibrate(js, r.labels || [], r.settings),
  // A strong judge's verdicts ({strong: {name, bytes}}) against these judgments.
  strongAgreement: (w, js, r) => w.strongAgreement(js, r.strong.name, r.strong.bytes, r.settings),
};

export const handlers = {
  /** A result view (see VIEWS). */
  async view(r) {
    const answer = VIEWS[r.view];
    if (!answer) throw failure('input', `unknown view ${r.view}`);
    // `decoding` ({method, samples?, temperature?, seed?}): how the items' probabilities become
    // scores (core's `decoding`), replacing what the judgments record.
    const js = await judgmentsOf(r.judge);
    return answer(engine.wasm, r.decoding ? js.map((j) => ({ ...j, decoding: r.decoding })) : js, r);
  },

  /** The ranking settings' defaults and choices (core's). */
  async rankDefaults() {
    return engine.wasm.rankDefaults();
  },
};
