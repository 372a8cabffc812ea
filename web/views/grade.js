// Step 4, the grading card: start, pause and cancel a run, its order and whether it stops when the
// ranking is settled, its estimate and progress at this device's pace, and the live leaderboard.

import { h, mount, $, fmt, duration } from '../lib/dom.js';
import * as db from '../lib/db.js';
import { state, engine, notice, clearNotices, throttle, renderAll, currentScope, gradedCount } from '../page.js';
import { refreshGraded, renderResponses } from './responses.js';
import { renderResultsPanel } from './results-panel.js';

/** The key under which this device's pace with the loaded judge is kept. */
export const paceKey = () => state.judge && `pace:${state.judge.name}@${state.judge.backend}`;

/** The loaded judge's standing on this run from the stored grades (when not grading). */
export async function refreshStanding() {
  if (!state.judge || state.grading.running) return;
  const scope = currentScope();
  state.standing = scope.total
    ? await engine
        .request('standing', { judge: state.judge.name, scope, secsPerResponse: state.pace })
        .catch(() => null)
    : null;
  renderGrade();
}

async function startGrading() {
  await refreshGraded();
  const jobs = state.pending || [];
  if (!jobs.length) return notice('Nothing left to grade.');
  state.grading = {
    running: true,
    paused: false,
    done: 0,
    total: jobs.length,
    perMinute: null,
    etaSec: null,
    keptTokens: 0,
    errors: [],
  };
  // "Demo loaded… press Grade" and the like are done with.
  clearNotices('info');
  renderGrade();
  // Once, so the Results card says where the live leaderboard is; it is redrawn on a pause and at the end.
  renderResultsPanel();
  const { order, until } = state.run;
  let r = null;
  try {
    r = await engine.request('grade', { jobs, order, scope: currentScope(), until: until ? 'settled' : null });
  } catch (e) {
    notice(`Grading failed: ${e.message}`, 'error');
  }
  Object.assign(state.grading, { running: false, paused: false });
  if (r) {
    await refreshGraded();
    const c = gradedCount();
    const counted = `${c.graded} of ${c.total} responses graded`;
    if (r.cancelled) notice(`Grading cancelled: ${counted}; what was graded is kept.`);
    else if (r.stopped) notice(`Grading stopped: ${r.stopped} (${counted}).`, 'error');
    else if (r.settled) notice(`Stopped: ${r.sentence}. ${r.left} responses are left; press Grade to grade them too.`);
    else notice(`Graded: ${counted}.`);
  }
  if (state.pace)
    await db.put('settings', { secsPerResponse: state.pace, secsPerToken: state.secsPerToken }, paceKey());
  renderAll();
}

engine.on('graded', (m) => {
  const { done, total, perMinute, etaSec, keptTokens } = m;
  Object.assign(state.grading, { done, total, perMinute, etaSec, keptTokens });
  state.pace = m.secsPerResponse;
  state.secsPerToken = m.secsPerToken ?? state.secsPerToken;
  // The one count: the stored grades, this one added as the worker stored it, and the live leaderboard
  // computed with it; the Grade card and the responses table are drawn together from them.
  const j = m.judgment;
  if (state.graded.judge !== j.judge) state.graded = { judge: j.judge, responses: [] };
  state.graded.responses.push({ model_test: j.model_test, session_id: j.session_id });
  if ('standing' in m) state.standing = m.standing;
  // The result views wait for the run to end (the worker answers them between responses); the live
  // leaderboard in the Grade card is what changes meanwhile.
  throttle(
    'grade',
    () => {
      renderGrade();
      renderResponses();
      // Paused: the response in flight when Pause was pressed lands after the Results were drawn.
      if (state.grading.paused) renderResultsPanel();
    },
    200,
  );
});
engine.on('standing', (m) => {
  state.standing = m.standing;
  throttle('grade', renderGrade, 200);
});
engine.on('grade-error', (m) => {
  state.grading.errors.push(m);
  notice(`${m.model} on ${m.session_id}: ${m.error}`, 'error');
});

/**
 * The time the responses left should take at this device's measured pace: their tokens (what the
 * judge runs for them, counted before the run) at the seconds per token of this judge's last run here;
 * else, with no tokens counted, its seconds per response times their number.
 */
function estimate(n) {
  const perToken = state.secsPerToken;
  const tokens = state.pendingTokens;
  if (perToken && tokens)
    return `about ${duration(perToken * tokens)}: ${tokens} tokens at ${fmt(1 / perToken, 0)} tokens per second measured here`;
  if (!state.pace) return 'the time per response is measured on the first one';
  return `about ${duration(state.pace * n)} at ${fmt(state.pace, 1)} s per response measured here`;
}

const ORDERS = [
  ['interleaved', 'Query by query (all ranked early)'],
  ['adaptive', 'Close pairs first'],
  ['model', 'Model by model'],
];

export function renderGrade() {
  const count = gradedCount();
  const g = state.grading;
  const jobs = g.running ? [] : state.pending || [];
  const ready = state.judge && state.benchmark && state.responses.length;
  mount(
    $('#grade'),
    gradeControls(g, ready, jobs),
    !ready ? h('p', { class: 'hint' }, "Load a judge, a benchmark and at least one model's responses.") : null,
    cannotSettle() ? h('p', { class: 'hint', id: 'grade-cannot-settle' }, cannotSettle()) : null,
    ready && !g.running && jobs.length
      ? h(
          'p',
          { class: 'hint', id: 'grade-estimate' },
          `${jobs.length} response${jobs.length === 1 ? '' : 's'} to grade: ${estimate(jobs.length)}${state.run.until && !cannotSettle() ? '; the run stops earlier once the ranking is settled' : ''}.`,
        )
      : null,
    g.running || g.done
      ? h(
          'div',
          { class: 'progress-block' },
          h('label', { for: 'grade-progress', id: 'grade-rate' }, progressLine(g, count)),
          h('progress', { id: 'grade-progress', max: count.total || 1, value: count.graded }),
          g.keptTokens > 0
            ? h(
                'p',
                { class: 'hint', id: 'grade-kept' },
                // As the CLI's last line says it.
                `${g.keptTokens} prompt tokens were not run again in this run: each query's part of the prompt, kept between its responses.`,
              )
            : null,
        )
      : null,
    resuming(g, jobs)
      ? h('p', { class: 'hint' }, 'Grades from an earlier visit were restored; grading continues with what is missing.')
      : null,
    !state.judge && state.graded.judge
      ? h(
          'p',
          { class: 'hint' },
          `${state.graded.responses.length} responses were graded earlier by ${state.graded.judge}; load that judge to grade the rest.`,
        )
      : null,
    renderStanding(state.standing),
  );
}

/** Whether the next run continues one of an earlier visit: nothing run in this one, some graded before. */
function resuming(g, jobs) {
  return !g.running && !g.done && state.judge && jobs.length > 0 && state.graded.responses.length > 0;
}

/** The card's row of controls: Grade, Pause, Cancel, the order and the stop-when-settled box. */
function gradeControls(g, ready, jobs) {
  const order = orderSelect(g);
  const until = untilBox(g);
  return h(
    'div',
    { class: 'row' },
    h(
      'button',
      {
        id: 'start-grading',
        class: 'primary',
        disabled: !ready || g.running || jobs.length === 0,
        onclick: startGrading,
      },
      g.running
        ? g.paused
          ? 'Paused'
          : 'Grading…'
        : !ready || !state.pending
          ? 'Grade'
          : jobs.length
            ? resuming(g, jobs)
              ? `Resume (${jobs.length} left)`
              : `Grade ${jobs.length} response${jobs.length === 1 ? '' : 's'}`
            : 'All graded',
    ),
    pauseButton(g),
    h('button', { id: 'cancel-grading', disabled: !g.running, onclick: () => engine.signal('cancel') }, 'Cancel'),
    h('label', {}, 'Order ', order),
    h(
      'label',
      {
        title:
          'Stop once every adjacent pair of the live leaderboard is ordered the same way in at least 95% of bootstrap replicates, on at least 10 shared queries. What is left stays; Grade continues it.',
      },
      until,
      ' Stop when the ranking is settled',
    ),
  );
}

/** The order the next run grades in (state.run.order). */
function orderSelect(g) {
  const order = h(
    'select',
    {
      id: 'grade-order',
      'aria-label': 'Grading order',
      disabled: g.running,
      title:
        "Query by query: the queries in a seeded random order balanced across categories, every model graded on a query before the next, so the leaderboard ranks every model from the start. Adaptive: query by query until each model has 10 grades, then the pairs still too close to call first. Model by model: each model's file in turn.",
    },
    ORDERS.map(([v, label]) => h('option', { value: v, selected: state.run.order === v }, label)),
  );
  order.addEventListener('change', () => {
    state.run.order = order.value;
  });
  return order;
}

/** Whether the run stops when the ranking is settled (state.run.until): before a run, or during one
 * (the worker is told at once). Disabled, and saying why, where the benchmark cannot settle. */
function untilBox(g) {
  const never = cannotSettle();
  const until = h('input', {
    type: 'checkbox',
    id: 'grade-until',
    checked: state.run.until && !never,
    disabled: !!never,
  });
  until.addEventListener('change', () => {
    state.run.until = until.checked;
    if (g.running) engine.signal(until.checked ? 'untilSettled' : 'untilDone');
    renderGrade();
  });
  return until;
}

/** Why this benchmark's ranking can never settle (fewer queries than a separated pair must share),
 * or null. */
function cannotSettle() {
  const rule = state.settleRule;
  const queries = state.benchmark ? state.benchmark.queries.length : 0;
  if (!rule || !state.benchmark || queries >= rule.minQueries) return null;
  return `This benchmark has ${queries} quer${queries === 1 ? 'y' : 'ies'}, fewer than the ${rule.minQueries} shared queries a separated pair needs: its ranking cannot settle, so a run grades every response.`;
}

function pauseButton(g) {
  return h(
    'button',
    {
      id: 'pause-grading',
      disabled: !g.running,
      onclick: () => {
        g.paused = !g.paused;
        engine.signal(g.paused ? 'pause' : 'resume');
        renderGrade();
        if (g.paused) renderResultsPanel();
      },
    },
    g.paused ? 'Resume' : 'Pause',
  );
}

/** `12 of 64 responses · 3.1 per minute · about 17m left`: the run's one count (graded of all its
 * responses, earlier visits' grades included), and the pace over the last responses once one is graded. */
function progressLine(g, c) {
  const parts = [`${c.graded} of ${c.total} responses`];
  if (g.running && g.perMinute == null) parts.push('measuring the pace on the first response');
  else if (g.perMinute != null)
    parts.push(`${fmt(g.perMinute, 1)} per minute`, g.running ? `about ${duration(g.etaSec)} left` : null);
  if (g.paused) parts.push('paused');
  return parts.filter(Boolean).join(' · ');
}

/** The live leaderboard: per model its grades so far and rating, per adjacent pair separated or too close. */
function renderStanding(s) {
  if (!s || !s.entries.length) return s ? h('p', { class: 'hint', id: 'standing-sentence' }, s.sentence) : null;
  // Core words each pair's state (settle's PairState), as the CLI prints it.
  const verdict = (p) => (p ? p.verdict : '');
  return h(
    'div',
    { class: 'standing', id: 'standing' },
    h('h3', {}, 'Live leaderboard'),
    h(
      'table',
      { class: 'leaderboard', id: 'standing-table' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { class: 'num' }, '#'),
          h('th', {}, 'model'),
          h('th', { class: 'num' }, 'graded'),
          h('th', { class: 'num' }, 'rating'),
          h('th', { class: 'num' }, '95% CI'),
          h('th', {}, 'vs next'),
        ),
      ),
      h(
        'tbody',
        {},
        s.entries.map((e, i) =>
          h(
            'tr',
            { class: s.pairs[i] ? (s.pairs[i].separated ? 'separated' : 'too-close') : '' },
            h('td', { class: 'num' }, e.rank),
            h('td', {}, e.model),
            h('td', { class: 'num' }, e.responses),
            h('td', { class: 'num' }, fmt(e.score, 0)),
            h(
              'td',
              { class: 'num', style: { whiteSpace: 'nowrap' } },
              e.lower == null ? '–' : `${fmt(e.lower, 0)} – ${fmt(e.upper, 0)}`,
            ),
            h('td', { class: 'verdict' }, verdict(s.pairs[i])),
          ),
        ),
      ),
    ),
    h(
      'p',
      { class: 'hint', id: 'standing-sentence' },
      `${s.sentence[0].toUpperCase()}${s.sentence.slice(1)}. Bradley–Terry on every graded response (each pair compared on the queries both were graded on); intervals and verdicts from 1000 bootstrap resamples of the queries; separated: ordered alike in ≥ ${Math.round(s.rule.level * 100)}% of them, on ≥ ${s.rule.minQueries} shared queries.`,
    ),
  );
}
