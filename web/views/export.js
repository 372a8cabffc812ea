// The Results card's export tab: the judgments, scores, ranking, battles and a shareable report of
// aggregates, each made in this tab and saved by the browser.

import { h, mount, download, messageSlot } from '../lib/dom.js';
import { ui, view } from './results-state.js';

export async function exportView(body, ctx, judge) {
  const ranking = ctx.lastRanking || (await view(ctx, judge, 'leaderboard', { settings: ui.settings }));
  const base = `rocketjudge-${judge}`;
  const problem = messageSlot('export-error');
  const btn = (id, label, fn) => exportButton(id, label, fn, problem);
  mount(
    body,
    h(
      'div',
      { class: 'exports' },
      btn('export-judgments', 'Judgments (RocketEval JSONL)', async () =>
        download(`${base}-judgments.jsonl`, await view(ctx, judge, 'judgmentsJsonl'), 'application/jsonl'),
      ),
      btn('export-scores', 'Scores (CSV)', async () =>
        download(`${base}-scores.csv`, await view(ctx, judge, 'scoresCsv'), 'text/csv'),
      ),
      btn('export-ranking-csv', 'Ranking (CSV)', async () =>
        download(`${base}-ranking.csv`, await view(ctx, judge, 'rankingCsv', { settings: ui.settings }), 'text/csv'),
      ),
      btn('export-ranking-json', 'Ranking (JSON)', async () =>
        download(`${base}-ranking.json`, JSON.stringify(rankingJson(ranking), null, 2)),
      ),
      btn('export-battles', 'Battles (Chatbot Arena JSON)', async () =>
        download(`${base}-battles.json`, await view(ctx, judge, 'battlesJson', { settings: ui.settings })),
      ),
      btn('export-report', 'Shareable report (aggregates only)', async () =>
        download(`${base}-report.json`, JSON.stringify(report(ctx, judge, ranking), null, 2)),
      ),
    ),
    problem,
    h(
      'p',
      { class: 'hint' },
      'Files are made in this tab and saved by your browser; nothing is uploaded. CSV cells that a spreadsheet would run as formulas are neutralised. The command-line tool reads the judgments back: ',
      h('code', {}, 'rocketjudge rank --judgments FILE'),
      '.',
    ),
  );
}

/** An export button: `fn` makes and saves the file; its failure is said in `problem`. */
function exportButton(id, label, fn, problem) {
  return h(
    'button',
    {
      id,
      onclick: async () => {
        problem.say(null);
        try {
          await fn();
        } catch (e) {
          problem.say(e.message);
        }
      },
    },
    label,
  );
}

/** The ranking as exported: each model's score, interval and rank. */
function rankingJson(ranking) {
  return ranking.entries.map((e) => ({
    model: e.model,
    score: e.score,
    lower: e.lower,
    upper: e.upper,
    rank: e.rank,
  }));
}

/** The shareable report: the ranking and the benchmark's size, no query, response or checklist text. */
function report(ctx, judge, ranking) {
  return {
    tool: 'rocketjudge',
    judge,
    prompt: 'RocketEval checklist grading',
    method: ranking.method,
    ranking: ranking.entries.map((e) => ({
      model: e.model,
      score: e.score,
      lower: e.lower,
      upper: e.upper,
      rank: e.rank,
      responses: e.responses,
    })),
    benchmark: ctx.state.benchmark
      ? { name: ctx.state.benchmark.name, queries: ctx.state.benchmark.queries.length }
      : null,
    note: 'Aggregates only: no query, response or checklist text.',
    created: new Date().toISOString(),
  };
}
