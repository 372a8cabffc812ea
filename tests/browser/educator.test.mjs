// Browser tests of the educator views (issue #14): explain a score, bias probes, calibration with the
// user's labels, agreement with GPT-4 — in a real Chromium, with the real wasm engine and a real judge
// (SmolLM2-135M: the fastest packaged judge; the views are the same for the 1.5B), on the bundled
// MT-Bench and the bundled GPT-4-judged answers. Each view's numbers are checked against the native
// CLI on the same judgments (`rocketjudge calibrate`, `meta --strong`, `grade`). Screenshots go to
// tests/browser/out/educator-*.png (the README's are copies).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startServer,
  launch,
  newPage,
  loadJudge,
  exportFile,
  cli,
  gradeNatively,
  int8Band,
  overlappingLabels,
  drawn,
  VIEWPORT,
  ROOT,
  OUT,
  jsonl,
} from './harness.mjs';

const JUDGE = 'smollm2-135m';
const GPT4 = join(ROOT, 'benchmarks/mt-bench/gpt4-judged');
// Two queries, the two that are labelled below (a third, longer one added minutes and no check).
const SESSIONS = ['101_turn1', '111_turn1'];
let server;
let browser;

const bundled = readdirSync(GPT4)
  .filter((f) => f.endsWith('.jsonl') && f !== 'gpt-4_single.jsonl')
  .map((f) => f.replace(/\.jsonl$/, ''))
  .sort();
// The models graded: gemma-SFT's two answers are five times as long as the others' (70 % of these
// ten answers' text, and the probes would regrade its longest), so it is loaded and left ungraded.
const models = bundled.filter((m) => m !== 'gemma-SFT');

before(async () => {
  server = await startServer();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  server?.stop();
});

/** The engine's request from the page (the ?debug=1 hook). */
const ask = (page, type, payload = {}) =>
  page.evaluate(([t, p]) => globalThis.__rocketjudgeEngine.request(t, p), [type, payload]);

/** The Results card as a JPEG (the README's screenshots are copies: docs/educator/). */
async function shot(page, name) {
  await page.locator('#results-card').screenshot({ path: join(OUT, `${name}.jpg`), type: 'jpeg', quality: 70 });
}

/** Click a result tab and wait for `selector` in it. */
async function openTab(page, tab, selector) {
  await page.click(`#tab-${tab}`);
  await page.waitForSelector(selector);
}

test('explain, probe, calibrate and compare with GPT-4 on the bundled MT-Bench, each as the CLI computes it', async () => {
  const { page, log, external } = await newPage(browser, server.origin);
  await page.goto(`${server.origin}/?demo=0&debug=1`);
  await page.click('#load-mtbench');
  await page.waitForFunction(() => document.querySelector('#bench').innerText.includes('160 queries'));
  await page.click('#load-gpt4-judged');
  await page.waitForFunction(
    (n) => document.querySelectorAll('#responses table.models tbody tr').length === n,
    bundled.length,
  );
  await loadJudge(page, JUDGE, 'cpu');

  // Grade two queries of those models (the page's Grade button would grade all 80 responses).
  const queries = new Map(jsonl(join(ROOT, 'benchmarks/mt-bench/queries.jsonl')).map((q) => [q.session_id, q]));
  const jobs = models.flatMap((m) =>
    jsonl(join(GPT4, `${m}.jsonl`))
      .filter((r) => SESSIONS.includes(r.session_id))
      .map((response) => ({ query: queries.get(response.session_id), response, model: m })),
  );
  assert.equal(jobs.length, models.length * SESSIONS.length);
  await ask(page, 'grade', { jobs });
  const judgments = (await ask(page, 'judgments')).filter((j) => j.judge === JUDGE);
  assert.equal(judgments.length, jobs.length);
  await page.reload();
  await page.waitForSelector('#tab-explain');
  await loadJudge(page, JUDGE, 'cpu');

  // ---- Explain a score: the items' p(Yes) are the stored ones; score = mean·9+1; the response is in the prompt.
  await openTab(page, 'explain', '#explain-items tbody tr');
  await page.selectOption('#pick-query', '101_turn1');
  await page.waitForFunction(
    () => document.querySelector('#pick-query')?.value === '101_turn1' && document.querySelector('#explain-items'),
  );
  // The longest answer (the truncation check below cuts it).
  const model = models
    .map((m) => [m, jsonl(join(GPT4, `${m}.jsonl`)).find((r) => r.session_id === '101_turn1').output[0].length])
    .sort((x, y) => y[1] - x[1])[0][0];
  await page.selectOption('#pick-model', model);
  // (The rank line names the response's model once the view has been drawn for it.)
  await page.waitForFunction((m) => document.querySelector('#explain-rank')?.textContent.startsWith(`${m} has`), model);
  const j = judgments.find((x) => x.session_id === '101_turn1' && x.model_test === model);
  const cells = await page.$$eval('#explain-items tbody tr td:last-child', (tds) =>
    tds.map((t) => Number(t.textContent)),
  );
  assert.deepEqual(
    cells,
    j.norm_probability.map((p) => Number(p.toFixed(3))),
  );
  const mean = j.norm_probability.reduce((a, b) => a + b, 0) / j.norm_probability.length;
  assert.match(await page.innerText('#explain-score'), new RegExp(`= ${(mean * 9 + 1).toFixed(2)} on 1–10`));
  const response = jsonl(join(GPT4, `${model}.jsonl`)).find((r) => r.session_id === '101_turn1');
  assert.ok((await page.innerText('#explain-prefix')).includes(response.output[0].slice(0, 200).trim().split('\n')[0]));
  assert.equal(await page.locator('#truncation-mark').count(), 0);
  const board = await ask(page, 'view', { view: 'leaderboard', judge: JUDGE });
  const entry = board.entries.find((e) => e.model === model);
  assert.match(await page.innerText('#explain-rank'), new RegExp(`rank ${entry.rank} of ${models.length}`));
  await shot(page, 'educator-explain');
  // A judge whose context is 5 tokens short of this response's longest item prompt: the cut is marked.
  const sizes = (await page.innerText('#explain-sizes')).match(/\d+/g).map(Number);
  const short = sizes[0] + Math.max(...sizes.slice(1)) - 5;
  await ask(page, 'loadJudge', { source: { key: JUDGE }, backend: 'cpu', maxTokens: short });
  await openTab(page, 'probes', '#pick-query');
  await openTab(page, 'explain', '#truncation-mark');
  const cut = (await page.innerText('#explain-sizes')).match(/\d+/g).map(Number);
  assert.ok(cut[0] + Math.max(...cut.slice(1)) <= short, `the cut prompt fits ${short} tokens: ${cut}`);
  await ask(page, 'loadJudge', { source: { key: JUDGE }, backend: 'cpu', maxTokens: 4096 });

  // ---- Probes on that response.
  await openTab(page, 'probes', '#probe-0');
  const runProbe = async (id, n) => {
    await page.click(id);
    await page.waitForFunction((k) => document.querySelectorAll('#probe-results tbody tr').length === k, n, {
      timeout: 300_000,
    });
  };
  await runProbe('#probe-0', 1);
  // Padding: the regraded score is what the native CLI gives the padded text.
  const padded = await ask(page, 'core', { fn: 'probeText', args: ['pad', response.output[0], 0.3] });
  assert.ok(padded.changed && padded.text.length > response.output[0].length * 1.2, 'padding lengthens by about 30 %');
  const dir = mkdtempSync(join(tmpdir(), 'rj-probe-'));
  writeFileSync(join(dir, `${model}.jsonl`), `${JSON.stringify({ ...response, output: [padded.text] })}\n`);
  writeFileSync(join(dir, 'queries.jsonl'), `${JSON.stringify(queries.get('101_turn1'))}\n`);
  const native = gradeNatively(JUDGE, join(dir, 'queries.jsonl'), [join(dir, `${model}.jsonl`)]).get(
    `${model}|101_turn1`,
  );
  const nativeScore = (native.reduce((a, b) => a + b, 0) / native.length) * 9 + 1;
  const [before, afterScore] = await page.$$eval('#probe-results tbody tr:first-child td.num', (tds) =>
    tds.slice(0, 2).map((t) => Number(t.textContent)),
  );
  assert.equal(before, Number((mean * 9 + 1).toFixed(2)));
  assert.ok(
    Math.abs(afterScore - nativeScore) <= 9 * int8Band(JUDGE).item + 0.01,
    `padded: page ${afterScore}, native ${nativeScore}`,
  );
  for (const [id, k] of [
    ['#probe-1', 2],
    ['#probe-2', 3],
    ['#probe-3', 4],
    ['#probe-4', 5],
    ['#probe-5', 6],
    ['#probe-position', 7],
  ])
    await runProbe(id, k);
  // Dropping an item needs no grading: the mean of the others.
  await page.selectOption('#probe-item', '0');
  await runProbe('#probe-drop', 8);
  const dropped = j.norm_probability.slice(1);
  const droppedScore = (dropped.reduce((a, b) => a + b, 0) / dropped.length) * 9 + 1;
  assert.equal(
    Number(await page.locator('#probe-results tbody tr:first-child td.num').nth(1).innerText()),
    Number(droppedScore.toFixed(2)),
  );
  await page.fill('#probe-add-text', 'Does the response use exactly three sentences?');
  await runProbe('#probe-add', 9);
  // Position: both orders are probabilities; the note says whether the verdict followed the position.
  const position = await page.locator('#probe-results tbody tr').nth(2).innerText();
  assert.match(position, /shown first 0\.\d\d, shown second 0\.\d\d/);
  // The report over every graded response: one line per probe, n = the responses whose text changed.
  await page.click('#probe-all-0');
  await page.waitForSelector('#probe-report tbody tr', { timeout: 600_000 });
  const report = await page.innerText('#probe-report tbody tr');
  assert.match(report, new RegExp(`^Pad by 30 % \\(verbosity\\)\\t${jobs.length}\\t`));
  assert.match(
    report,
    /(raised|lowered) scores by \d\.\d\d on average; it raised them in \d+ % of \d+ responses and lowered them in \d+ %/,
  );
  console.log(`probe report: ${report.replace(/\t/g, ' | ')}`);
  await shot(page, 'educator-probes');

  // ---- Calibrate: label two queries with GPT-4's scores; the refit ranking is the CLI's.
  const gpt4 = jsonl(join(GPT4, 'gpt-4_single.jsonl'));
  await openTab(page, 'calibrate', '#label-table');
  for (const s of ['101_turn1', '111_turn1']) {
    await page.selectOption('#pick-query', s);
    await page.waitForFunction((q) => document.querySelector('#pick-query')?.value === q, s);
    for (const m of models) {
      const [qid, turn] = [Number(s.split('_')[0]), Number(s.slice(-1))];
      const g = gpt4.find((x) => x.question_id === qid && x.turn === turn && x.model === m);
      const count = Number((await page.innerText('#label-count')).split(' ')[0]);
      await page.fill(`[id="label-${m}"]`, String(g.score));
      await page.dispatchEvent(`[id="label-${m}"]`, 'change');
      await page.waitForFunction(
        (n) => document.querySelector('#label-count')?.textContent.startsWith(`${n} label`),
        count + 1,
      );
    }
  }
  await page.waitForFunction(
    (n) => document.querySelector('#label-count')?.textContent.startsWith(`${n} labels`),
    2 * models.length,
  );
  await page.click('#refit');
  await page.waitForSelector('#calibration-table tbody tr');
  const labelsFile = await (async () => {
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-labels')]);
    const p = join(dir, 'labels.jsonl');
    await dl.saveAs(p);
    return p;
  })();
  assert.equal(jsonl(labelsFile).length, 2 * models.length);
  const exported = await exportFile(page, 'export-judgments', 'educator-judgments.jsonl');
  const cliCal = JSON.parse(cli(['calibrate', '--judgments', exported, '--labels', labelsFile, '--format', 'json']));
  await openTab(page, 'calibrate', '#label-table');
  await page.click('#refit');
  await page.waitForSelector('#calibration-table tbody tr');
  const pageCal = await page.$$eval('#calibration-table tbody tr', (trs) =>
    trs.map((tr) => ({
      model: tr.children[0].textContent,
      rank: tr.children[1].textContent,
      score: tr.children[2].textContent,
    })),
  );
  assert.deepEqual(
    pageCal.map((r) => r.model),
    cliCal.changes.map((c) => c.model),
  );
  pageCal.forEach((r, i) => {
    const c = cliCal.changes[i];
    assert.equal(r.rank, `${c.rank_before} → ${c.rank_after}`);
    assert.equal(r.score, `${c.score_before.toFixed(2)} → ${c.score_after.toFixed(2)}`);
  });
  // The chart's legend shows each series in the colour its intervals are drawn in (the series'
  // own visual colour, which its renderItem draws with): before grey, after blue.
  await page.waitForFunction(() => document.querySelector('#calibration-plot canvas'));
  const legend = await page.evaluate(async () => {
    const echarts = await import('/web/vendor/echarts.esm.min.js');
    const chart = echarts.getInstanceByDom(document.querySelector('#calibration-plot'));
    const model = chart.getModel();
    return chart.getOption().series.map((series, i) => ({
      name: series.name,
      legend: model.getSeriesByIndex(i).getData().getVisual('style').fill,
      drawn: series.itemStyle.color,
    }));
  });
  assert.deepEqual(legend, [
    { name: 'before', legend: '#9ca3af', drawn: '#9ca3af' },
    { name: 'after', legend: '#1d4ed8', drawn: '#1d4ed8' },
  ]);
  await shot(page, 'educator-calibrate');
  // Its labels are not drawn over each other, on a laptop or a phone (drawn without animation, as
  // for a visitor who asks for less motion).
  await page.emulateMedia({ reducedMotion: 'reduce' });
  for (const [width, height] of [
    [1366, 900],
    [390, 844],
  ]) {
    await page.setViewportSize({ width, height });
    await page.waitForTimeout(300); // the chart's resize
    await drawn(page);
    assert.deepEqual(await page.evaluate(overlappingLabels), [], `calibrate at ${width}px`);
  }
  await page.setViewportSize(VIEWPORT);
  await page.emulateMedia({ reducedMotion: null });
  // Labels are kept in this browser.
  await page.reload();
  await page.waitForSelector('#tab-calibrate');
  await openTab(page, 'calibrate', '#label-count');
  assert.match(await page.innerText('#label-count'), new RegExp(`^${2 * models.length} labels stored`));

  // ---- Strong judge: GPT-4's judgments; the page's numbers are `rocketjudge meta --strong`'s.
  await openTab(page, 'strong', '#strong-bundled');
  await page.click('#strong-bundled');
  await page.waitForSelector('#strong-overall');
  const cliStrong = JSON.parse(
    cli(['meta', '--judgments', exported, '--strong', join(GPT4, 'gpt-4_single.jsonl'), '--format', 'json']),
  ).strong;
  const pageStrong = await page.evaluate(async (judge) => {
    const bytes = new Uint8Array(
      await (await fetch('benchmarks/mt-bench/gpt4-judged/gpt-4_single.jsonl')).arrayBuffer(),
    );
    return globalThis.__rocketjudgeEngine.request('view', {
      view: 'strongAgreement',
      judge,
      strong: { name: 'gpt-4_single.jsonl', bytes },
    });
  }, JUDGE);
  assert.equal(pageStrong.overall.pairs, cliStrong.overall.pairs);
  assert.equal(pageStrong.overall.pairs, (SESSIONS.length * models.length * (models.length - 1)) / 2);
  for (const k of ['agreement', 'spearman', 'kendall_tau_b', 'instance_krippendorff'])
    assert.ok(Math.abs(pageStrong.overall[k].value - cliStrong.overall[k].value) < 1e-9, k);
  assert.equal(await page.locator('#strong-models tbody tr').count(), models.length);
  assert.equal(
    await page.locator('#strong-disagreements tbody tr').count(),
    Math.min(8, pageStrong.disagreements.length),
  );
  assert.equal(await page.locator('#strong-queries tbody tr').count(), SESSIONS.length);
  console.log(
    `${JUDGE} vs GPT-4 on ${jobs.length} responses: pairwise agreement ${pageStrong.overall.agreement.value.toFixed(3)}, Spearman ${pageStrong.overall.spearman.value.toFixed(3)}`,
  );
  await shot(page, 'educator-strong');

  assert.deepEqual(external(), [], "no request left the page's origin");
  assert.deepEqual(
    log.errors.filter((e) => !/favicon/.test(e)),
    [],
  );
});
