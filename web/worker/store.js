// The stored judgments: IndexedDB (`judgments`), read once into a map by (judge, model, session).
// The worker owns them; the page asks for them and for the views computed from them.

import { put, all } from '../lib/db.js';
import { failure } from './engine.js';

let judgments = null;
const judgmentKey = (j) => `${j.judge}\u0000${j.model_test}\u0000${j.session_id}`;

/** Every stored judgment by key (read from IndexedDB on first use). */
export async function stored() {
  judgments ??= new Map((await all('judgments')).map((j) => [judgmentKey(j), j]));
  return judgments;
}

/** Store a judgment (IndexedDB first, so a reload loses nothing that was reported). */
export async function keep(j) {
  await put('judgments', j);
  (await stored()).set(judgmentKey(j), j);
}

/** The stored judgment of `model`'s response to `session` by `judge`, or undefined. */
export async function judgmentOf(judge, model, session) {
  return (await stored()).get(judgmentKey({ judge, model_test: model, session_id: session }));
}

/** The stored judgment of `model`'s response to `session` by `judge`, or an input error saying to grade it. */
export async function gradedJudgment(judge, model, session) {
  const j = await judgmentOf(judge, model, session);
  if (!j) throw failure('input', `${model} on ${session} is not graded by ${judge} yet: grade it first`);
  return j;
}

/** The judgments of one judge. */
export async function judgmentsOf(judge) {
  return [...(await stored()).values()].filter((j) => j.judge === judge);
}
