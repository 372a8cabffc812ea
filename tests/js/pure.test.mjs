// The page's and the worker's pure rules: which engine build runs, a checklist edit, what a grading
// run covers, and a judge's trust note.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { choosePlan } from '../../web/worker/engine.js';
import { checklistChanges } from '../../web/lib/checklist.js';
import { runScope, gradableJobs, candidates, countGraded, inScope } from '../../web/lib/run.js';
import { trustNote, recommendedModel } from '../../web/lib/manifest.js';
import { readFileSync } from 'node:fs';

test('threads need an isolated page and relaxed SIMD; otherwise one thread, saying why', () => {
  const ok = { isolated: true, relaxedSimd: true };
  assert.deepEqual(choosePlan(4, ok), { dir: 'pkg-threads', threads: 4, why: '4 threads' });
  // One thread: the threaded build without a pool, for its relaxed-SIMD kernels, where it can run.
  assert.deepEqual(choosePlan(1, ok), { dir: 'pkg-threads', threads: 1, why: 'one thread chosen' });
  assert.equal(choosePlan(1, { isolated: false, relaxedSimd: true }).dir, 'pkg');
  assert.equal(choosePlan(1, { isolated: true, relaxedSimd: false }).dir, 'pkg');
  const notIsolated = choosePlan(4, { isolated: false, relaxedSimd: true });
  assert.equal(notIsolated.threads, 1);
  assert.match(notIsolated.why, /not cross-origin isolated/);
  const noRelaxed = choosePlan(4, { isolated: true, relaxedSimd: false });
  assert.equal(noRelaxed.dir, 'pkg');
  assert.match(noRelaxed.why, /relaxed SIMD/);
});

test('a checklist edit keeps the grades of unchanged items and regrades new or reworded ones', () => {
  const old = ['Is it correct?', 'Is it short?', 'Does it cite?'];
  const c = checklistChanges(old, ['  Does it cite?', 'Is it correct and complete?', '', 'Is it correct?']);
  assert.deepEqual(c.newChecklist, ['Does it cite?', 'Is it correct and complete?', 'Is it correct?']);
  assert.deepEqual(c.keep, [
    [0, 2],
    [2, 0],
  ]);
  assert.deepEqual(c.grade, [1]);
  assert.deepEqual(checklistChanges(old, old), { newChecklist: old, keep: old.map((_, i) => [i, i]), grade: [] });
});

test("a run covers responses to queries with a checklist; the worker is asked about each with its checklist's length", () => {
  const queries = [
    { session_id: 'q1', checklist: ['a', 'b'] },
    { session_id: 'q2', checklist: [] },
    { session_id: 'q3', checklist: ['c'] },
  ];
  const responses = [
    { model: 'm1', records: [{ session_id: 'q1' }, { session_id: 'q2' }, { session_id: 'q3' }] },
    { model: 'm2', records: [{ session_id: 'q3' }, { session_id: 'q9' }] },
  ];
  const scope = runScope(queries, responses);
  assert.deepEqual(scope, {
    models: ['m1', 'm2'],
    sessions: ['q1', 'q3'],
    total: 3,
    keys: ['m1\u0000q1', 'm1\u0000q3', 'm2\u0000q3'],
  });
  // The one count: stored grades of this run's responses only (not m2's q1, which it has no response
  // to, nor a query without a checklist), each once.
  const graded = [
    { model_test: 'm1', session_id: 'q1' },
    { model_test: 'm1', session_id: 'q1' },
    { model_test: 'm2', session_id: 'q1' },
    { model_test: 'm1', session_id: 'q2' },
    { model_test: 'm2', session_id: 'q3' },
  ];
  assert.deepEqual(countGraded(scope, graded), { graded: 2, total: 3 });
  assert.deepEqual(
    inScope(scope, graded).map((j) => `${j.model_test}/${j.session_id}`),
    ['m1/q1', 'm1/q1', 'm2/q3'],
  );
  const jobs = gradableJobs(queries, responses);
  assert.deepEqual(
    jobs.map((j) => `${j.model}/${j.response.session_id}`),
    ['m1/q1', 'm1/q3', 'm2/q3'],
  );
  assert.equal(jobs[1].query, queries[2]);
  assert.deepEqual(candidates(jobs), [
    { model: 'm1', session_id: 'q1', items: 2 },
    { model: 'm1', session_id: 'q3', items: 1 },
    { model: 'm2', session_id: 'q3', items: 1 },
  ]);
});

test('the 1.5B is recommended where it keeps pace, the 0.5B (fast and rough) elsewhere', () => {
  const { models } = JSON.parse(readFileSync(new URL('../../models/manifest.json', import.meta.url), 'utf8'));
  assert.equal(recommendedModel(models, true), 'qwen2.5-coder-1.5b');
  assert.equal(recommendedModel(models, false), 'qwen2.5-coder-0.5b');
  assert.equal(recommendedModel([], true), null);
});

test("a judge's trust note comes from its manifest entry, with where its figures were measured apart", () => {
  const { models } = JSON.parse(readFileSync(new URL('../../models/manifest.json', import.meta.url), 'utf8'));
  const note = trustNote(models, 'qwen2.5-coder-0.5b');
  assert.match(note.text, /^The 0\.5B judge agrees only weakly/);
  // The page shows the note; where it was measured (a path in the repository) is for a hover.
  assert.doesNotMatch(note.text, /docs\//);
  assert.match(note.measured, /^Measured: .*docs\/quality\/qwen2\.5-coder-0\.5b-s6\.md\.$/);
  assert.match(trustNote(models, 'smollm2-135m').text, /ranks models in reverse/);
  assert.match(trustNote(models, 'my-own-judge').text, /^Small judges vary/);
});
