// What a grading run covers, from the page's selections: the benchmark's queries and the uploaded
// responses.

/** The queries with a checklist (only those are graded), by session id. */
function gradable(queries) {
  return new Map(queries.filter((q) => q.checklist && q.checklist.length).map((q) => [q.session_id, q]));
}

/**
 * The run: every model's responses to queries with a checklist (graded or not), for the live
 * leaderboard and the one count: {models (in file order), sessions, total, keys (each response's
 * `responseKey`)}. `responses`: [{model, records}]; a model's response to a query counts once.
 */
export function runScope(queries, responses) {
  const withChecklist = gradable(queries);
  const models = [];
  const sessions = new Set();
  const keys = new Set();
  for (const r of responses) {
    for (const resp of r.records) {
      if (!withChecklist.has(resp.session_id)) continue;
      if (!models.includes(r.model)) models.push(r.model);
      sessions.add(resp.session_id);
      keys.add(responseKey(r.model, resp.session_id));
    }
  }
  return { models, sessions: [...sessions], total: keys.size, keys: [...keys] };
}

/** A response's key in a scope's `keys`. */
export const responseKey = (model, session) => `${model}\u0000${session}`;

/**
 * The one count of a run every place shows (progress, notices, the live leaderboard, Results, the
 * responses table): of `scope`'s responses (runScope), how many are among `graded`
 * ([{model_test, session_id}]: what the worker stores for the judge). Returns {graded, total}.
 */
export function countGraded(scope, graded) {
  return { graded: gradedKeys(scope, graded).size, total: scope.total };
}

/** The `responseKey`s of `scope`'s responses that are among `graded`: what countGraded counts. */
export function gradedKeys(scope, graded) {
  const keys = new Set(scope.keys);
  return new Set(graded.map((j) => responseKey(j.model_test, j.session_id)).filter((k) => keys.has(k)));
}

/** The judgments of `graded` ([{model_test, session_id, ...}]) that are responses of `scope`. */
export function inScope(scope, graded) {
  const keys = new Set(scope.keys);
  return graded.filter((j) => keys.has(responseKey(j.model_test, j.session_id)));
}

/**
 * Every response the run may grade, model by model in file order (the worker grades them in the run's
 * order): [{query, response, model}]. Which of them are left is the worker's answer (`pending`: core's
 * rule of what counts as already graded); `candidates` is what that request is sent.
 */
export function gradableJobs(queries, responses) {
  const byId = gradable(queries);
  const jobs = [];
  for (const r of responses) {
    for (const resp of r.records) {
      const q = byId.get(resp.session_id);
      if (q) jobs.push({ query: q, response: resp, model: r.model });
    }
  }
  return jobs;
}

/** The `pending` request's candidates for `jobs` (see gradableJobs): [{model, session_id, items}]. */
export const candidates = (jobs) =>
  jobs.map((j) => ({ model: j.model, session_id: j.response.session_id, items: j.query.checklist.length }));
