// A ranking you can watch form (issue #26), in a real Chromium with the SmolLM2 test judge on the
// CPU engine: two models on twelve queries (tests/fixtures/settle: GPT-4's answers and a refuser's).
// - Before the run the Grade card says how many responses and how the time is estimated.
// - The default order is query by query: while grading, both models' graded counts never differ by
//   more than one, and the live leaderboard in the Grade card marks the pair too close to call.
// - "Stop when the ranking is settled" ends the run once the pair is separated (at least 10 shared
//   queries: 20 or 22 of 24 responses), leaving the rest; a second run grades only that, and the
//   complete run ranks as `rocketjudge rank` ranks the page's exported judgments.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startServer, launch, newPage, shot, loadJudge, exportFile, cli, ROOT } from './harness.mjs';

const FIX = join(ROOT, 'tests/fixtures/settle');
let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  server?.stop();
});

/** Graded responses per model, from the Responses card's table. */
const gradedCounts = (page) =>
  page.$$eval('#responses table.models tbody tr', (rows) =>
    rows.map((r) => Number(r.querySelector('td.graded').textContent) || 0),
  );

test('query-by-query grading, a live leaderboard while grading, stop when settled and complete later', async () => {
  const { context, page, log, external } = await newPage(browser, server.origin);
  await page.goto(`${server.origin}/?demo=0`);
  await page.setInputFiles('#bench-files', join(FIX, 'queries.jsonl'));
  await page.waitForFunction(() => document.querySelector('#bench').innerText.includes('12 queries'));
  await page.setInputFiles(
    '#response-files',
    ['gpt-4', 'refuser'].map((m) => join(FIX, 'responses', `${m}.jsonl`)),
  );
  await page.waitForFunction(() => document.querySelectorAll('#responses table.models tbody tr').length === 2);
  await loadJudge(page, 'smollm2-135m', 'cpu');
  assert.equal(await page.locator('#grade-order').inputValue(), 'interleaved', 'query by query is the default order');
  assert.match(
    await page.locator('#grade-estimate').innerText(),
    /^24 responses to grade: the time per response is measured on the first one\./,
  );

  assert.equal(await page.locator('#grade-cannot-settle').count(), 0, '12 queries can settle');
  await page.click('#start-grading');
  // While grading: the live leaderboard, with the pair too close to call after a few queries.
  await page.waitForFunction(
    () =>
      document.querySelector('#start-grading')?.textContent === 'Grading…' &&
      document.querySelector('#standing-table tr.too-close'),
    null,
    { timeout: 600_000, polling: 200 },
  );
  // Stop when settled, asked for during the run: the worker is told at once.
  await page.check('#grade-until');
  let samples = 0;
  while ((await page.locator('#start-grading').innerText()) === 'Grading…') {
    const [a, b] = await gradedCounts(page);
    assert.ok(Math.abs(a - b) <= 1, `query by query: graded ${a} and ${b}`);
    samples += 1;
    await page.waitForTimeout(500);
  }
  assert.ok(samples >= 3, `sampled the run ${samples} times`);
  await shot(page, 'live-settled');
  // Stopped settled, with the rest left for later.
  const stopped = await page.locator('.notice').filter({ hasText: 'Stopped: ranking settled after' }).innerText();
  const n = Number(/settled after (\d+) of 24 responses/.exec(stopped)?.[1]);
  assert.ok(n >= 20 && n < 24 && n % 2 === 0, stopped);
  assert.match(stopped, new RegExp(`${24 - n} responses are left; press Grade`));
  assert.equal(await page.locator('#standing-table tr.separated').count(), 1);
  assert.match(
    await page.locator('#standing-sentence').innerText(),
    new RegExp(`Ranking settled after ${n} of 24 responses`),
  );
  assert.equal(await page.locator('#start-grading').innerText(), `Grade ${24 - n} responses`);
  // The estimate for what is left: its tokens, counted before the run, at the pace measured on this one.
  assert.match(
    await page.locator('#grade-estimate').innerText(),
    new RegExp(`^${24 - n} responses to grade: about \\S.*: \\d+ tokens at \\d+ tokens per second measured here[.;]`),
  );

  // A later run grades what is left, and the leaderboard is the CLI's on the exported judgments.
  await page.uncheck('#grade-until');
  await page.click('#start-grading');
  await page.waitForFunction(() => document.querySelector('#start-grading')?.textContent === 'All graded', null, {
    timeout: 600_000,
    polling: 500,
  });
  assert.deepEqual(await gradedCounts(page), [12, 12]);
  assert.match(await page.locator('#standing-sentence').innerText(), /24 of 24 responses/);
  const exported = await exportFile(page, 'export-judgments', 'live-judgments.jsonl');
  const ranked = JSON.parse(cli(['rank', '--judgments', exported, '--format', 'json']));
  const live = await page.$$eval('#standing-table tbody tr', (rows) => rows.map((r) => r.children[1].textContent));
  assert.deepEqual(
    live,
    ranked.map((r) => r.model),
  );
  assert.equal(await page.locator('#standing-table tr.separated').count(), ranked[0].vs_next.separated ? 1 : 0);
  assert.deepEqual(external(), [], "no request left the page's origin");
  assert.deepEqual(
    log.errors.filter((e) => !/favicon/.test(e)),
    [],
  );
  await context.close();
});
