// The other evaluation designs (seeds 001–004): pairwise comparisons, Direct scores and written
// (reasoned) judgments, each stored in IndexedDB (`designs`) the moment it is made, and their
// results. Requests: `runDesign`, `designView`.

import { put, all } from '../lib/db.js';
import { engine, post, describeError, failure } from './engine.js';
import { judgeRun, loadedJudge } from './judge.js';

/** Stored records of the other designs (IndexedDB `designs`, read once), by key. */
let designRecords = null;

async function designsStored() {
  designRecords ??= new Map((await all('designs')).map((r) => [r.key, r]));
  return designRecords;
}

/**
 * A design checked by core (errors of kind `invalid` for combinations that mean nothing):
 * {type: 'pairwise', settings: {checklist, k, reference, decoding}}, {type: 'direct', settings:
 * {instruction, reference, checklist, k, decoding}} or {type: 'reasoned', settings: {protocol, samples,
 * temperature, aggregate, replyTokens, seed}}. Its id (the checked settings) names its stored records;
 * `pairs`: whether it judges pairs of responses (pairwise, or a pairwise reasoned protocol).
 */
function checkDesign({ type, settings }) {
  const { wasm } = engine;
  let checked;
  if (type === 'pairwise') checked = wasm.checkPairSettings(settings);
  else if (type === 'direct') checked = wasm.checkDirectSettings(settings);
  else if (type === 'reasoned') checked = wasm.checkReasonedSettings(settings);
  else throw failure('input', `unknown evaluation type ${type}`);
  const pairwiseProtocol = () => wasm.reasonedProtocols().find((p) => p.name === checked.protocol).pairwise;
  const pairs = type === 'pairwise' || (type === 'reasoned' && pairwiseProtocol());
  return { type, settings: checked, id: `${type}:${JSON.stringify(checked)}`, pairs };
}

const designKey = (judgeName, id, session, a, b = '') => [judgeName, id, session, a, b].join('\u0000');

/**
 * The tasks of a design over `jobs`: every planned pair of responses (a query's pairs in turn), or
 * each response, every model's answer to a query in turn (the queries in the order they first
 * come). Either way the judge keeps the query's part of the prompt from one task to the next.
 */
function plan(d, jobs, judgeName) {
  if (!d.pairs) {
    const first = new Map();
    jobs.forEach((j, i) => first.has(j.response.session_id) || first.set(j.response.session_id, i));
    const byQuery = [...jobs].sort((x, y) => first.get(x.response.session_id) - first.get(y.response.session_id));
    return byQuery.map((a) => ({ a, key: designKey(judgeName, d.id, a.response.session_id, a.model) }));
  }
  const planned = engine.wasm.planPairs(
    jobs.map((j) => [j.response.session_id, j.model]),
    d.settings.reference ?? undefined,
  );
  return planned.map(([a, b]) => ({
    a: jobs[a],
    b: jobs[b],
    key: designKey(judgeName, d.id, jobs[a].response.session_id, jobs[a].model, jobs[b].model),
  }));
}

/** One task on the judge: the engine call of the design's type. */
function runTask(judge, d, { a, b }, onReply) {
  if (b && d.type === 'reasoned')
    return judge.reasonPair(a.query, a.response, a.model, b.response, b.model, d.settings, onReply);
  if (b) return judge.comparePair(a.query, a.response, a.model, b.response, b.model, d.settings);
  if (d.type === 'reasoned') return judge.reason(a.query, a.response, a.model, d.settings, onReply);
  return judge.direct(a.query, a.response, a.model, d.settings);
}

/** A reasoned design's written replies: how many, and each whose score (vote) could not be read. */
function replies(d, records) {
  const read = (x) => (d.pairs ? x.vote : x.score) != null;
  return {
    unscored: records.filter((r) => (d.pairs ? r.winner : r.score) == null).length,
    replies: records.reduce((n, r) => n + r.samples.length, 0),
    unreadable: records.flatMap((r) =>
      r.samples
        .map((x, i) => ({
          model: d.pairs ? `${r.model_a} vs ${r.model_b}` : r.model_test,
          session_id: r.session_id,
          reply: i + 1,
          text: x.text,
          read: read(x),
        }))
        .filter((x) => !x.read),
    ),
  };
}

/** The ranking of a design's records (`settings`: ranking settings; `decoding`: core's, null: as recorded). */
function ranking(d, records, settings, decoding) {
  const { wasm } = engine;
  if (d.type === 'pairwise') return wasm.rankPairs(records, settings, decoding ?? null);
  if (d.pairs) return { ranking: wasm.rankReasonedPairs(records, settings) };
  if (d.type === 'reasoned') return { ranking: wasm.rankReasoned(records, settings) };
  return { ranking: wasm.rankDirect(records, settings, decoding ?? null) };
}

export const handlers = {
  /**
   * Run a design over responses ({design, jobs: [{query, response, model}]}) with the loaded judge:
   * every planned comparison (both orders), Direct score or reasoned score, each stored the moment it
   * is made, so a rerun (or a reload) continues with what is missing. Progress: `design-progress`
   * {done, total, pairs} (`pairs`: the tasks are comparisons), and
   * `design-reply` {reply, samples, score, vote} as each written reply is read (a pair's reply votes
   * `model_a` or `model_b`); a failed comparison: `design-error`. Returns {done, total, cancelled?, stopped?}.
   */
  async runDesign({ design, jobs }) {
    const name = loadedJudge().name();
    const d = checkDesign(design);
    const onReply = (reply, sample) =>
      post({
        type: 'design-reply',
        reply: reply + 1,
        samples: d.settings.samples,
        score: sample.score ?? null,
        vote: sample.vote ?? null,
      });
    const tasks = plan(d, jobs, name);
    const store = await designsStored();
    const todo = tasks.filter((t) => !store.has(t.key));
    const before = tasks.length - todo.length;
    const r = await judgeRun(
      todo.length,
      (j, i) => runTask(j, d, todo[i], onReply),
      async (i, record) => {
        // `null`: an empty response has no perplexity; kept, so a rerun does not ask again.
        const kept = { key: todo[i].key, judge: name, design: d.id, record };
        await put('designs', kept);
        store.set(kept.key, kept);
        post({ type: 'design-progress', done: before + i + 1, total: tasks.length, pairs: d.pairs });
      },
      (i, error) => {
        const { a, b } = todo[i];
        post({
          type: 'design-error',
          session_id: a.response.session_id,
          model: b ? `${a.model} vs ${b.model}` : a.model,
          error,
        });
      },
    );
    return { ...r, done: before + r.done, total: tasks.length };
  },

  /**
   * A design's results ({judge, design, settings?, decoding?}; `settings`: ranking settings, `decoding`
   * replaces the records'): {type, pairs, settings, count, unscored, jsonl, ranking?, consistency?,
   * rankError?, replies?, unreadable?}. `jsonl` is the records as `rocketjudge grade --type pairwise` /
   * `rocketjudge direct` / `rocketjudge reason` write them. Reasoned designs: `unscored` counts responses
   * (pairs) with no readable reply, `replies` all replies, `unreadable` each reply whose score (vote)
   * could not be read ({model, session_id, reply, text}; a pair's model is `A vs B`).
   */
  async designView({ judge: name, design, settings, decoding }) {
    const d = checkDesign(design);
    const rows = [...(await designsStored()).values()].filter((r) => r.judge === name && r.design === d.id);
    const records = rows.map((r) => r.record).filter(Boolean);
    const out = {
      type: d.type,
      pairs: d.pairs,
      settings: d.settings,
      count: records.length,
      unscored: rows.length - records.length,
      jsonl: records.map((r) => `${JSON.stringify(r)}\n`).join(''),
    };
    if (d.type === 'reasoned') Object.assign(out, replies(d, records));
    if (!records.length) return out;
    try {
      Object.assign(out, ranking(d, records, settings, decoding));
    } catch (e) {
      out.rankError = describeError(e);
    }
    return out;
  },
};
