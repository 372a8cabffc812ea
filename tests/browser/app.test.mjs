// Browser tests of the app (issue #5, #8): a real Chromium, real wasm engine, real judge weights.
// Run by scripts/test.sh after `scripts/build-web.sh`: `node --test tests/browser/`.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  startServer,
  launch,
  newPage,
  shot,
  loadFixtures,
  loadJudge,
  gradeAll,
  exportFile,
  cli,
  nativeGrades,
  int8Band,
  compareGrades,
  fixtureSubset,
  SHORT_QUERIES,
  FIX,
  OUT,
  ROOT,
  jsonl,
  gradeKey,
} from './harness.mjs';

const JUDGE = 'smollm2-135m';
const MODELS = ['gpt-4', 'gpt-3.5-turbo', 'llama-13b', 'alpaca-13b'];
// The graded runs take the fixture's two shorter queries: 8 responses.
const GRADED = fixtureSubset(SHORT_QUERIES);
let server;
let browser;
// Map key(model, session) -> norm_probability, from `rocketjudge grade` on the same inputs, with the
// CPU's f32 products (compared tightly) and its default 8-bit integer ones (compared within the band
// that float order moves int8 results by: harness.int8Band).
let native;
let nativeInt8;

before(async () => {
  server = await startServer();
  browser = await launch();
  native = nativeGrades(JUDGE, MODELS, 'f32', GRADED);
  nativeInt8 = nativeGrades(JUDGE, MODELS, 'int8', GRADED);
});

after(async () => {
  await browser?.close();
  server?.stop();
});

/** Every item's p(Yes) in `judgments` within `tol` of the native CLI's f32 grades. Returns the largest gap. */
function compareToNative(judgments, tol) {
  const { worst } = compareGrades(judgments, native);
  assert.ok(worst <= tol, `largest |Δp(Yes)| vs native ${worst} > ${tol}`);
  return worst;
}

/** Int8 grades against the native CLI's, within the band (per item and on average). */
function compareToNativeInt8(judgments) {
  const band = int8Band(JUDGE);
  const { worst, mean } = compareGrades(judgments, nativeInt8);
  assert.ok(
    worst <= band.item && mean <= band.mean,
    `int8 vs native int8: max |Δp| ${worst.toFixed(4)} (≤ ${band.item.toFixed(4)}), mean ${mean.toFixed(4)} (≤ ${band.mean.toFixed(4)})`,
  );
  return { worst, mean };
}

/** The page's leaderboard rows: [{model, score}]. */
async function leaderboard(page) {
  await page.click('#tab-leaderboard');
  await page.waitForSelector('#leaderboard tbody tr');
  return page.$$eval('#leaderboard tbody tr', (rows) =>
    rows.map((r) => ({ model: r.children[1].textContent, score: Number(r.children[2].textContent) })),
  );
}

async function gradeIn(page, backend, precision) {
  await page.goto(`${server.origin}/?demo=0&debug=1`);
  await loadFixtures(page, MODELS, GRADED);
  const info = await loadJudge(page, JUDGE, backend, precision);
  await gradeAll(page);
  return info;
}

test('CPU: threads and integer kernels where the page is isolated; grades 4 models like the native CLI (f32), exports that the CLI reads', async () => {
  const { context, page, log, external } = await newPage(browser, server.origin);
  const info = await gradeIn(page, 'cpu', 'f32');
  assert.match(info, /cpu \(\d+ threads?, f32\)/);
  // `rocketjudge serve` sends COOP/COEP: the threaded engine runs, on every core of this machine.
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  // In plain words, the kernels' own name on hover.
  assert.match(
    await page.locator('#threads-info').innerText(),
    new RegExp(`CPU engine: ${cores > 1 ? `${cores} threads` : '1 thread'}, 8-bit integer kernels with SIMD`),
  );
  assert.match(await page.locator('#threads-info').getAttribute('title'), /int8 wasm relaxed-simd/);
  assert.match(
    await page.locator('.badge', { hasText: 'judge:' }).innerText(),
    new RegExp(`on the CPU \\(${cores} threads?\\)$`),
  );
  // The wasm module's SIMD kernels equal the scalar reference for every weight type: both
  // relaxed-simd kernels (the engine races them on the first products), 8 types × 3 shapes each;
  // and its f32 products (x·wᵀ, a·b: its own simd128 tiles) equal f64 sums, 4 shapes each.
  const selfTest = await page.evaluate(() => globalThis.__rocketjudgeEngine.core('kernelSelfTest'));
  assert.deepEqual([...new Set(selfTest.map((t) => t.kernel))].sort(), [
    'f32 a·b',
    'f32 x·wᵀ',
    'int8 wasm relaxed-simd 16-bit runs',
    'int8 wasm relaxed-simd 32-bit dot',
  ]);
  assert.equal(selfTest.length, 56);
  // Finite first: an output never written is NaN in the engine, which may cross as null.
  for (const t of selfTest) assert.ok(Number.isFinite(t.max_rel_error) && t.max_rel_error <= 1e-5, JSON.stringify(t));
  const f32Worst = Math.max(...selfTest.filter((t) => t.dtype === 'F32').map((t) => t.max_rel_error));
  console.log(`wasm f32 products vs f64 sums: max relative error ${f32Worst.toExponential(2)}`);
  await shot(page, 'cpu-graded');
  // Two queries, fewer than a separated pair must share: the page says the ranking cannot settle,
  // and each pair's row of the live leaderboard says why, with no estimate it could never reach.
  assert.match(
    await page.locator('#grade-cannot-settle').innerText(),
    /has 2 queries, fewer than the 10 shared queries a separated pair needs/,
  );
  assert.ok(await page.locator('#grade-until').isDisabled());
  const verdicts = await page.$$eval('#standing-table td.verdict', (cells) =>
    cells.map((c) => c.textContent).filter(Boolean),
  );
  assert.equal(verdicts.length, 3, verdicts.join(' | '));
  for (const v of verdicts) assert.equal(v, 'cannot separate: 2 queries here, 10 shared needed');
  assert.match(await page.locator('#standing-sentence').innerText(), /the ranking cannot settle here/);
  const board = await leaderboard(page);
  assert.equal(board.length, 4);
  const exported = await exportFile(page, 'export-judgments', 'browser-cpu-judgments.jsonl');
  const judgments = jsonl(exported);
  const worst = compareToNative(judgments, 0.01);
  console.log(`cpu (wasm, f32) vs native f32: max |Δp| = ${worst.toExponential(2)}`);
  // The page's leaderboard is what `rocketjudge rank` computes from the exported file.
  const ranked = JSON.parse(cli(['rank', '--judgments', exported, '--format', 'json']));
  assert.deepEqual(
    board.map((r) => r.model),
    ranked.map((r) => r.model),
  );
  board.forEach((r, i) =>
    assert.ok(Math.abs(r.score - ranked[i].score) <= 0.5, `${r.model}: page ${r.score} vs CLI ${ranked[i].score}`),
  );
  // And the same order as natively graded judgments.
  const nativeRanked = JSON.parse(cli(['rank', '--judgments', native.dir, '--format', 'json']));
  assert.deepEqual(
    ranked.map((r) => r.model),
    nativeRanked.map((r) => r.model),
  );
  // The decoding setting (seed 003) re-decodes every item as `rank --decoding` does.
  await page.click('#tab-leaderboard');
  await page.waitForSelector('#rank-decoding');
  const before = await page.$('#leaderboard');
  await page.selectOption('#rank-decoding', 'greedy');
  await page.waitForFunction((old) => !old.isConnected && document.querySelector('#leaderboard tbody tr'), before);
  const greedyBoard = await page.$$eval('#leaderboard tbody tr', (rows) =>
    rows.map((r) => ({ model: r.children[1].textContent, score: Number(r.children[2].textContent) })),
  );
  const greedyRanked = JSON.parse(cli(['rank', '--judgments', exported, '--decoding', 'greedy', '--format', 'json']));
  assert.deepEqual(greedyBoard.map((r) => r.model).sort(), greedyRanked.map((r) => r.model).sort());
  greedyBoard.forEach((r) =>
    assert.ok(
      Math.abs(r.score - greedyRanked.find((x) => x.model === r.model).score) <= 0.5,
      `greedy ${r.model}: page ${r.score}`,
    ),
  );
  const badDecoding = await page.evaluate(
    (judge) =>
      globalThis.__rocketjudgeEngine
        .request('view', { view: 'leaderboard', judge, decoding: { method: 'greedy', samples: 3 } })
        .then(
          () => null,
          (e) => e.message,
        ),
    JUDGE,
  );
  assert.match(badDecoding || '', /applies only to the `sample`, `majority` and `median` decodings/);
  // Sampling with the user's N and T: the same seeded draws as `rank --decoding sample`.
  // (Each change redraws the tab: wait for a new leaderboard and the control `id` holding `value`.)
  const redrawn = async (change, id, value = null) => {
    const old = await page.$('#leaderboard');
    await change();
    await page.waitForFunction(
      ([o, i, v]) => {
        const el = document.querySelector(i);
        return (
          !o.isConnected && document.querySelector('#leaderboard tbody tr') && el && (v === null || el.value === v)
        );
      },
      [old, id, value],
    );
  };
  await redrawn(() => page.selectOption('#rank-decoding', 'sample'), '#decoding-samples');
  for (const [field, value] of [
    ['samples', '7'],
    ['temperature', '0.5'],
  ]) {
    await redrawn(
      async () => {
        await page.fill(`#decoding-${field}`, value);
        await page.locator(`#decoding-${field}`).dispatchEvent('change');
      },
      `#decoding-${field}`,
      value,
    );
  }
  const sampleBoard = await page.$$eval('#leaderboard tbody tr', (rows) =>
    rows.map((r) => ({ model: r.children[1].textContent, score: Number(r.children[2].textContent) })),
  );
  const sampleRanked = JSON.parse(
    cli([
      'rank',
      '--judgments',
      exported,
      '--decoding',
      'sample',
      '--samples',
      '7',
      '--temperature',
      '0.5',
      '--sample-seed',
      '0',
      '--format',
      'json',
    ]),
  );
  sampleBoard.forEach((r) =>
    assert.ok(
      Math.abs(r.score - sampleRanked.find((x) => x.model === r.model).score) <= 0.5,
      `sampled ${r.model}: page ${r.score}`,
    ),
  );
  // Seed 003's majority of N samples, exact: the menu's default N = 5, as `rank --decoding majority`.
  await redrawn(() => page.selectOption('#rank-decoding', 'majority'), '#decoding-samples', '5');
  assert.equal(await page.locator('#decoding-seed').count(), 0, 'an exact decoding draws nothing: no seed');
  const majorityBoard = await page.$$eval('#leaderboard tbody tr', (rows) =>
    rows.map((r) => ({ model: r.children[1].textContent, score: Number(r.children[2].textContent) })),
  );
  const majorityRanked = JSON.parse(
    cli(['rank', '--judgments', exported, '--decoding', 'majority', '--format', 'json']),
  );
  majorityBoard.forEach((r) =>
    assert.ok(
      Math.abs(r.score - majorityRanked.find((x) => x.model === r.model).score) <= 0.5,
      `majority ${r.model}: page ${r.score}`,
    ),
  );
  await redrawn(() => page.selectOption('#rank-decoding', 'expected'), '#rank-decoding', 'expected');
  // Seed 000's ratio of disagreement, from the exported items: 1 − pⁿ − (1 − p)ⁿ averaged.
  const items = judgments.flatMap((j) => j.norm_probability.filter((p) => p !== null));
  const ratios = await page.evaluate(
    (judge) => globalThis.__rocketjudgeEngine.request('view', { view: 'disagreement', judge }),
    JUDGE,
  );
  assert.deepEqual(
    ratios.map((r) => r.samples),
    [2, 3, 5, 10],
  );
  for (const r of ratios) {
    const want = items.reduce((sum, p) => sum + 1 - p ** r.samples - (1 - p) ** r.samples, 0) / items.length;
    assert.equal(r.items, items.length);
    assert.ok(Math.abs(r.ratio - want) < 1e-9, `disagreement at ${r.samples}: ${r.ratio} vs ${want}`);
  }
  await page.click('#tab-distributions');
  await page.waitForSelector('#disagreement-table tbody tr');
  // Other exports parse with the CLI's readers.
  const battles = await exportFile(page, 'export-battles', 'browser-battles.json');
  const b = JSON.parse(readFileSync(battles, 'utf8'));
  assert.equal(b.length, 2 * 6);
  cli(['meta', '--judgments', exported, '--pairs', battles, '--bootstrap', '0']);
  const csv = readFileSync(await exportFile(page, 'export-ranking-csv', 'browser-ranking.csv'), 'utf8');
  assert.match(csv, /^rank,model,score,lower,upper\n1,/);
  // The win-rate view (a typed request the worker answers with core) agrees with the exported
  // battles: per ordered pair, the row model's points (win 1, tie ½) per battle.
  const rates = await page.evaluate(
    (judge) => globalThis.__rocketjudgeEngine.request('view', { view: 'winRates', judge }),
    JUDGE,
  );
  assert.deepEqual(rates.models, [...new Set(b.flatMap((x) => [x.model_a, x.model_b]))].sort());
  assert.equal(rates.tie_margin, 0.1);
  assert.equal(rates.cells.length, 4 * 3);
  for (const c of rates.cells) {
    const [row, col] = [rates.models[c.row], rates.models[c.col]];
    const pair = b.filter((x) => (x.model_a === row && x.model_b === col) || (x.model_a === col && x.model_b === row));
    const points = pair.reduce(
      (n, x) => n + (x.winner === 'tie' ? 0.5 : (x.winner === 'model_a') === (x.model_a === row) ? 1 : 0),
      0,
    );
    assert.equal(c.battles, pair.length, `${row} vs ${col}`);
    assert.ok(
      Math.abs(c.win_rate - points / pair.length) < 1e-12,
      `${row} vs ${col}: ${c.win_rate} vs ${points / pair.length}`,
    );
  }
  await page.click('#tab-heatmap');
  await page.waitForSelector('#win-rates tr', { state: 'attached' });
  assert.equal(await page.locator('#win-rates tr').count(), 12);
  // The category table comes from core too: one row per model, the categories the queries name.
  const cats = await page.evaluate(
    (judge) =>
      globalThis.__rocketjudgeEngine.request('view', {
        view: 'categories',
        judge,
        categories: { '101_turn1': 'coding' },
      }),
    JUDGE,
  );
  assert.equal(cats.models.length, 4);
  assert.ok(cats.categories.includes('coding') && cats.categories.includes('all'), JSON.stringify(cats.categories));
  // A bad setting is refused by core with a typed error kind.
  const bad = await page.evaluate(
    (judge) =>
      globalThis.__rocketjudgeEngine.request('view', { view: 'leaderboard', judge, settings: { method: 'nope' } }).then(
        () => null,
        (e) => ({ kind: e.kind, message: e.message }),
      ),
    JUDGE,
  );
  assert.equal(bad?.kind, 'input', JSON.stringify(bad));
  assert.match(bad.message, /unknown variant `nope`, expected one of `bt`/);
  assert.deepEqual(external(), [], "no request left the page's origin");
  assert.deepEqual(
    log.errors.filter((e) => !/favicon/.test(e)),
    [],
  );
  await context.close();
});

test('resume after a reload to one thread (int8, the default): grades are kept, the rest is graded, nothing is doubled', async () => {
  const { context, page } = await newPage(browser, server.origin);
  await page.goto(`${server.origin}/?demo=0&debug=1`);
  await loadFixtures(page, MODELS, GRADED);
  await loadJudge(page, JUDGE, 'cpu');
  await page.click('#start-grading');
  await page.waitForFunction(() => Number(document.querySelector('#grade-progress')?.value) >= 3, null, {
    timeout: 600_000,
    polling: 500,
  });
  // The thread selector reloads the page in the middle of grading (on a 1-core machine 1 is already
  // chosen: a plain reload). One thread chosen on an isolated page still runs the threaded build
  // (without its pool), for its relaxed-SIMD kernels.
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  await Promise.all([page.waitForEvent('load'), cores > 1 ? page.selectOption('#threads-select', '1') : page.reload()]);
  await page.waitForSelector('#responses table.models');
  await page.waitForSelector('#threads-info');
  assert.match(
    await page.locator('#threads-info').innerText(),
    /CPU engine: 1 thread \(one thread chosen\), 8-bit integer kernels with SIMD/,
  );
  assert.match(await page.locator('#threads-info').getAttribute('title'), /int8 wasm relaxed-simd/);
  const kept = await page.$$eval('#responses table.models tbody tr', (rows) =>
    rows.reduce((n, r) => n + (Number(r.querySelector('td.graded').textContent) || 0), 0),
  );
  assert.ok(kept >= 3, `grades kept after reload: ${kept}`);
  // One click resumes: the judge is loaded again from this browser's cache by itself, and Grade
  // offers what is left.
  await page.waitForFunction(
    (left) => document.querySelector('#start-grading')?.textContent === `Resume (${left} left)`,
    8 - kept,
    { timeout: 300_000, polling: 200 },
  );
  assert.match(await page.locator('.judge-info').getAttribute('title'), /cpu \(1 thread/);
  await gradeAll(page);
  const judgments = jsonl(await exportFile(page, 'export-judgments', 'browser-resumed.jsonl'));
  assert.equal(new Set(judgments.map(gradeKey)).size, 8);
  const { worst, mean } = compareToNativeInt8(judgments);
  console.log(`cpu (wasm, int8) vs native int8: max |Δp| = ${worst.toFixed(4)}, mean ${mean.toFixed(4)}`);
  // What is left is the worker's answer by core's rule (as `rocketjudge grade` resumes): nothing now;
  // a response whose checklist has since grown, or any response for another judge, is left.
  const candidates = judgments.map((j) => ({
    model: j.model_test,
    session_id: j.session_id,
    items: j.norm_probability.length,
  }));
  const pending = (judge, cs) =>
    page.evaluate(
      ([judge, cs]) => globalThis.__rocketjudgeEngine.request('pending', { judge, candidates: cs }),
      [judge, cs],
    );
  const judge = judgments[0].judge;
  assert.deepEqual(await pending(judge, candidates), []);
  const grown = candidates.map((c, i) => (i === 5 ? { ...c, items: c.items + 1 } : c));
  assert.deepEqual(await pending(judge, grown), [5]);
  assert.equal((await pending('another-judge', candidates)).length, 8);
  await shot(page, 'resumed');
  await context.close();
});

test('a malformed upload names the file, line and field', async () => {
  const { context, page } = await newPage(browser, server.origin);
  await page.goto(`${server.origin}/?demo=0`);
  await page.setInputFiles('#bench-files', join(FIX, 'queries.jsonl'));
  const bad = join(OUT, 'bad-model.jsonl');
  writeFileSync(
    bad,
    '{"session_id": "101_turn1", "output": ["fine"], "generator": "bad-model"}\n{"session_id": "104_turn1", "output": 42, "generator": "bad-model"}\n',
  );
  await page.setInputFiles('#response-files', bad);
  // Beside the control, in words: file, line, field and what was expected.
  await page.waitForSelector('#responses-errors .notice.error');
  const msg = await page.locator('#responses-errors .notice.error').last().innerText();
  assert.match(msg, /^bad-model\.jsonl, line 2, field "output": /);
  assert.doesNotMatch(msg, /`/);
  await shot(page, 'malformed-upload');
  await context.close();
});

test('responses chosen while the benchmark is still being read wait for it, in order', async () => {
  const { context, page } = await newPage(browser, server.origin);
  await page.goto(`${server.origin}/?demo=0`);
  // The whole MT-Bench (160 queries, 700 KB) takes a while to parse; the responses follow at once.
  const mtBench = join(ROOT, 'benchmarks/mt-bench');
  await page.setInputFiles('#bench-files', [join(mtBench, 'queries.jsonl'), join(mtBench, 'checklists.jsonl')]);
  await page.setInputFiles('#response-files', join(FIX, 'responses', 'gpt-4.jsonl'));
  await page.waitForSelector('#responses table.models tbody tr');
  assert.deepEqual(await page.locator('.notice.error').allInnerTexts(), []);
  assert.match(await page.locator('#bench').innerText(), /160 queries, 160 with checklists/);
  const row = await page.$$eval('#responses table.models tbody tr', (rows) =>
    rows.map((r) => [r.querySelector('.name').textContent, Number(r.querySelector('td.count').textContent)]),
  );
  assert.deepEqual(row, [['gpt-4', jsonl(join(FIX, 'responses', 'gpt-4.jsonl')).length]]);
  await context.close();
});

test('the judge card keeps what was chosen, picked and typed while the page is drawn again around it', async () => {
  const { context, page } = await newPage(browser, server.origin);
  await page.goto(`${server.origin}/?demo=0`);
  await page.selectOption('#backend-select', 'cpu');
  await page.selectOption('#precision-select', 'f32');
  await page.selectOption('#model-select', '__file');
  await page.setInputFiles('#model-file', join(FIX, 'queries.jsonl')); // picked, not loaded
  await page.selectOption('#model-select', '__url');
  await page.fill('#model-url', 'http://127.0.0.1/half-typed'); // the cursor stays in the box
  // The card's controls must be the same elements after a redraw; its live part (the WebGPU line) is drawn anew.
  const controls = ['model-select', 'model-file', 'model-url', 'backend-select', 'precision-select', 'load-judge'];
  await page.evaluate((ids) => {
    for (const id of [...ids, 'gpu-info']) document.getElementById(id).dataset.before = '1';
  }, controls);
  // An upload draws every card again, the judge card included.
  await page.setInputFiles('#bench-files', join(FIX, 'queries.jsonl'));
  await page.waitForFunction(() => !document.getElementById('gpu-info').dataset.before);
  const kept = await page.evaluate(
    (ids) => ({
      same: ids.filter((id) => document.getElementById(id).dataset.before === '1'),
      backend: document.getElementById('backend-select').value,
      precision: document.getElementById('precision-select').value,
      model: document.getElementById('model-select').value,
      url: document.getElementById('model-url').value,
      urlShown: !document.getElementById('model-url').hidden,
      file: [...document.getElementById('model-file').files].map((f) => f.name),
      focus: document.activeElement?.id,
    }),
    controls,
  );
  assert.deepEqual(kept, {
    same: controls,
    backend: 'cpu',
    precision: 'f32',
    model: '__url',
    url: 'http://127.0.0.1/half-typed',
    urlShown: true,
    file: ['queries.jsonl'],
    focus: 'model-url',
  });
  await context.close();
});

test('hostile text in uploads is shown as inert text and requests nothing', async () => {
  const { context, page, external } = await newPage(browser, server.origin);
  await page.goto(`${server.origin}/?demo=0`);
  await page.setInputFiles('#bench-files', join(FIX, 'queries.jsonl'));
  const payload =
    '<img src="https://evil.example/x.png" onerror="window.__pwned=1"><script>window.__pwned=1</script>' +
    '[link](javascript:window.__pwned=1) \u202Eevil\u202C \u0000nul ' +
    'x'.repeat(20000);
  const model = '<b onmouseover="window.__pwned=1">evil-model</b>';
  const file = join(OUT, 'hostile.jsonl');
  writeFileSync(
    file,
    `${JSON.stringify({ session_id: '101_turn1', chat_history: ['q'], output: [payload], generator: model })}\n`,
  );
  await page.setInputFiles('#response-files', file);
  await page.waitForSelector('#responses table.models tbody tr');
  const cell = await page.locator('#responses table.models tbody tr td .name').first().innerText();
  assert.equal(cell, model, 'the model name is shown literally');
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.locator('#responses b').count(), 0, 'no element was created from the text');
  assert.deepEqual(external(), []);
  await shot(page, 'hostile-text');
  await context.close();
});

test('a panic inside the engine becomes an error message and the worker keeps working', async () => {
  const { context, page } = await newPage(browser, server.origin);
  await page.goto(`${server.origin}/?demo=0&debug=1`);
  await page.waitForFunction(() => globalThis.__rocketjudgeEngine);
  await page.evaluate(() => globalThis.__rocketjudgeEngine.request('init'));
  const failed = await page.evaluate(() =>
    globalThis.__rocketjudgeEngine.request('core', { fn: 'debugPanic', args: [] }).then(
      () => null,
      (e) => e.message,
    ),
  );
  assert.match(failed || '', /internal error in the engine/);
  await page.waitForSelector('.notice.error');
  assert.match(await page.locator('.notice.error').last().innerText(), /internal error and was restarted/);
  // The next request is served by the fresh module.
  const version = await page.evaluate(() =>
    globalThis.__rocketjudgeEngine.request('core', { fn: 'promptVersion', args: [] }),
  );
  assert.ok(typeof version === 'string' && version.length > 0, `prompt version after the panic: ${version}`);
  // And uploads are parsed by it: the benchmark, then one model's responses.
  await page.setInputFiles('#bench-files', join(FIX, 'queries.jsonl'));
  await page.setInputFiles('#response-files', join(FIX, 'responses', readdirSync(join(FIX, 'responses'))[0]));
  await page.waitForSelector('#responses table.models tbody tr');
  await context.close();
});

test('a model too large for the CPU engine is refused before any byte is downloaded', async () => {
  const { context, page, log } = await newPage(browser, server.origin);
  await page.goto(`${server.origin}/?demo=0&debug=1`);
  await page.waitForFunction(() => globalThis.__rocketjudgeEngine);
  await page.evaluate(() => globalThis.__rocketjudgeEngine.request('init'));
  const source = { key: 'too-large', urls: [`${server.origin}/models/too-large.gguf`], size: 5 * 2 ** 30 };
  const failed = await page.evaluate(
    (s) =>
      globalThis.__rocketjudgeEngine.request('loadJudge', { source: s, backend: 'cpu' }).then(
        () => null,
        (e) => e.message,
      ),
    source,
  );
  assert.match(
    failed || '',
    /too large for the CPU engine in a browser tab: 32-bit WebAssembly addresses at most 4 GiB/,
  );
  assert.deepEqual(
    log.requests.filter((u) => u.includes('too-large')),
    [],
    'the model was never requested',
  );
  // Control: a size that fits is requested (and, absent on the server, fails with the HTTP status).
  const small = await page.evaluate(
    (s) =>
      globalThis.__rocketjudgeEngine.request('loadJudge', { source: { ...s, size: 1000 }, backend: 'cpu' }).then(
        () => null,
        (e) => e.message,
      ),
    source,
  );
  assert.match(small || '', /cannot download .*too-large\.gguf: HTTP 404/);
  assert.ok(
    log.requests.some((u) => u.includes('too-large')),
    "the request log sees the worker's downloads",
  );
  await context.close();
});
