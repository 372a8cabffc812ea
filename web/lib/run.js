// What a grading run covers, from the page's selections: the benchmark's queries and the uploaded
// responses.

/** The queries with a checklist (only those are graded), by session id. */
function gradable(queries) {
  return new Map(queries.filter((q) => q.checklist && q.checklist.length).map((q) => [q.session_id, q]));
}

/**
 * The run: every model's responses to queries with a checklist (graded or not), for the live
 * leaderboard: {models (in file order), sessions, total}. `responses`: [{model, records}].
 */
export function runScope(queries, responses) {
  const withChecklist = gradable(queries);
  const models = [];
  const sessions = new Set();
  let total = 0;
  for (const r of responses) {
    for (const resp of r.records) {
      if (!withChecklist.has(resp.session_id)) continue;
      if (!models.includes(r.model)) models.push(r.model);
      sessions.add(resp.session_id);
      total += 1;
    }
  }
  return { models, sessions: [...sessions], total };
}

/**
 * The responses still to grade, model by model in file order (the worker grades them in the run's
 * order): [{query, response, model}]. `graded(model, session, checklistLength)` says whether the
 * judge's stored judgment covers that response's current checklist.
 */
export function pendingJobs(queries, responses, graded) {
  const byId = gradable(queries);
  const jobs = [];
  for (const r of responses) {
    for (const resp of r.records) {
      const q = byId.get(resp.session_id);
      if (!q || graded(r.model, resp.session_id, q.checklist.length)) continue;
      jobs.push({ query: q, response: resp, model: r.model });
    }
  }
  return jobs;
}
