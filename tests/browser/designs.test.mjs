// Browser test of the other evaluation designs (issues #13 and #30): the "Evaluation types" tab runs pairwise
// comparisons (both orders; A/B and the 5-point scale), Direct scores (an instruction level, perplexity)
// and scores (or pair verdicts) from the judge's written reasoning with the real wasm engine and a real
// judge, stores them as it goes, ranks them with core — and each record equals what the native CLI makes on the same
// inputs (`grade --type pairwise`, `direct`, `reason`), each leaderboard what `rocketjudge rank`
// computes from the page's download.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, copyFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startServer,
  launch,
  newPage,
  shot,
  loadFixtures,
  loadJudge,
  cli,
  fixtureSubset,
  SHORT_QUERIES,
  OUT,
  jsonl,
} from './harness.mjs';

const JUDGE = 'smollm2-135m';
const MODELS = ['gpt-4', 'gpt-3.5-turbo', 'llama-13b'];
const FIX = fixtureSubset(SHORT_QUERIES);
// The written-reasoning tests (replies of up to 64 tokens, the 0.5B's among them) take its shortest query.
const ONE = fixtureSubset(['101_turn1']);
let server;
let browser;

const inputs = [
  '--queries',
  join(FIX, 'queries.jsonl'),
  '--responses',
  ...MODELS.map((m) => join(FIX, 'responses', `${m}.jsonl`)),
];
/** The native CLI's records for `args` on the same inputs (f32 products, as the page's here). */
const native = (args) => {
  const dir = mkdtempSync(join(tmpdir(), 'rj-design-'));
  cli([...args, '--model', JUDGE, ...inputs, '--out', dir, '--backend', 'cpu', '--precision', 'f32']);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) => jsonl(join(dir, f)));
};

before(async () => {
  server = await startServer();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  server?.stop();
});

/** Press Run and wait until the status says the run is done. */
async function runDesign(page) {
  await page.click('#design-run');
  await page.waitForFunction(() => /^done/.test(document.querySelector('#design-status')?.textContent || ''), null, {
    timeout: 1_200_000,
    polling: 500,
  });
  await page.waitForSelector('#design-leaderboard tbody tr');
}

/** Download the design's records into a folder of its own (what `rocketjudge rank` reads). */
async function download(page, name) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#design-export')]);
  const dir = mkdtempSync(join(tmpdir(), 'rj-page-'));
  await dl.saveAs(join(dir, name));
  copyFileSync(join(dir, name), join(OUT, `designs-${name}`));
  return dir;
}

/**
 * Run the Direct design at `instruction` in the page and natively; `gap(page row, native row)` checks
 * one response and measures their difference. Returns the largest.
 */
async function directRun(page, instruction, gap, flags = []) {
  await page.waitForSelector('#design-empty');
  await runDesign(page);
  const file = `direct-${instruction}.jsonl`;
  const rows = jsonl(join(await download(page, file), file));
  const nat = native(['direct', '--instruction', instruction, ...flags]);
  assert.equal(rows.length, 6);
  assert.equal(nat.length, 6);
  return Math.max(
    ...nat.map((n) =>
      gap(
        rows.find((x) => x.model_test === n.model_test && x.session_id === n.session_id),
        n,
      ),
    ),
  );
}

const board = (page) =>
  page.$$eval('#design-leaderboard tbody tr', (rows) =>
    rows.map((r) => ({ model: r.children[1].textContent, score: Number(r.children[2].textContent) })),
  );

/** Select a menu and wait for the tab to be drawn again with it. */
async function choose(page, id, value) {
  await page.selectOption(`#${id}`, value);
  await page.waitForFunction(([i, v]) => document.querySelector(`#${i}`)?.value === v, [id, value]);
}

test('pairwise and Direct designs in the page equal the native CLI, rank like `rocketjudge rank`, and resume', async () => {
  const { page, log, external } = await newPage(browser, server.origin);
  await page.goto(`${server.origin}/?demo=0&debug=1`);
  await loadFixtures(page, MODELS, FIX);
  await loadJudge(page, JUDGE, 'cpu', 'f32');
  await page.click('#tab-designs');
  await page.waitForSelector('#design-empty');

  // ---- Pairwise, every two models, plain prompt (the default design): 2 queries × 3 pairs, both orders.
  // Before the run, the tab says what it runs over: 3 models' answers to 2 queries.
  assert.equal(await page.locator('#design-status').innerText(), '6 loaded responses to run over');
  await runDesign(page);
  assert.match(await page.locator('#design-summary').innerText(), /6 comparisons/);
  const consistency = await page.locator('#design-consistency').innerText();
  const pageBoard = await board(page);
  const dir = await download(page, 'pairs.jsonl');
  const pairs = jsonl(join(dir, 'pairs.jsonl'));
  const nat = native(['grade', '--type', 'pairwise']);
  const pkey = (p) => `${p.session_id}|${p.model_a}|${p.model_b}`;
  assert.deepEqual(pairs.map(pkey).sort(), nat.map(pkey).sort());
  let worst = 0;
  for (const p of pairs) {
    const n = nat.find((x) => pkey(x) === pkey(p));
    assert.deepEqual(
      [p.judge, p.checklist, p.checklist_use, p.prompt_version],
      [n.judge, n.checklist, n.checklist_use, n.prompt_version],
    );
    worst = Math.max(worst, Math.abs(p.p_a_first - n.p_a_first), Math.abs(p.p_a_second - n.p_a_second));
  }
  assert.ok(worst <= 0.01, `pairwise p(A) page vs native: max |Δ| ${worst}`);
  console.log(`pairwise (wasm f32) vs native f32: max |Δp(A)| = ${worst.toExponential(2)}; ${consistency}`);
  // The consistency line counts the records; the leaderboard is `rocketjudge rank` on the download.
  const consistent = pairs.filter(
    (p) => (p.p_a_first > 0.5 && p.p_a_second > 0.5) || (p.p_a_first < 0.5 && p.p_a_second < 0.5),
  ).length;
  assert.match(consistency, new RegExp(`${consistent} of 6 comparisons`));
  const ranked = JSON.parse(cli(['rank', '--judgments', dir, '--format', 'json']));
  assert.deepEqual(
    pageBoard.map((r) => r.model),
    ranked.map((r) => r.model),
  );
  pageBoard.forEach((r, i) =>
    assert.ok(Math.abs(r.score - ranked[i].score) <= 0.5, `${r.model}: page ${r.score} vs CLI ${ranked[i].score}`),
  );
  // Every aggregation and decoding applies: win rate under greedy decoding, as `rank` computes it.
  const view = (design, extra) =>
    page.evaluate(
      ([d, x]) => globalThis.__rocketjudgeEngine.request('designView', { judge: 'smollm2-135m', design: d, ...x }),
      [design, extra],
    );
  const plain = { type: 'pairwise', settings: { checklist: 'never' } };
  const greedy = await view(plain, { settings: { method: 'winrate' }, decoding: { method: 'greedy' } });
  const greedyRanked = JSON.parse(
    cli(['rank', '--judgments', dir, '--method', 'winrate', '--decoding', 'greedy', '--format', 'json']),
  );
  for (const e of greedy.ranking.entries) {
    assert.ok(
      Math.abs(e.score - greedyRanked.find((x) => x.model === e.model).score) < 1e-9,
      `greedy win rate of ${e.model}`,
    );
  }
  // One battle from the orders' mean is the default; seed 001's one battle per order is the page's
  // Battles menu and core's `pairOrders`, ranked as `rank --pair-orders each` ranks it.
  for (const orders of ['each', 'mean']) {
    const v = await view(plain, { settings: { method: 'winrate', pairOrders: orders } });
    const c = JSON.parse(
      cli(['rank', '--judgments', dir, '--method', 'winrate', '--pair-orders', orders, '--format', 'json']),
    );
    for (const e of v.ranking.entries)
      assert.ok(
        Math.abs(e.score - c.find((x) => x.model === e.model).score) < 1e-9,
        `${orders}: win rate of ${e.model}`,
      );
  }
  await choose(page, 'design-orders', 'each');
  await choose(page, 'design-orders', 'mean');
  await shot(page, 'designs-pairwise');

  // ---- A threshold without selective use, or a negative one, is refused by core with the reason.
  const bad = await view({ type: 'pairwise', settings: { checklist: 'selective', k: -1 } }, {}).then(
    () => null,
    (e) => e.message,
  );
  assert.match(bad || '', /non-negative/);

  // ---- The 5-point scale (Arena-Hard's): each order's verdict distribution as natively.
  await choose(page, 'design-type', 'five');
  await page.waitForSelector('#design-empty');
  await runDesign(page);
  const five = jsonl(join(await download(page, 'pairs.jsonl'), 'pairs.jsonl'));
  const natFive = native(['grade', '--type', 'pairwise-5point']);
  assert.deepEqual(five.map(pkey).sort(), natFive.map(pkey).sort());
  let worstVerdict = 0;
  for (const p of five) {
    const n = natFive.find((x) => pkey(x) === pkey(p));
    assert.deepEqual([p.scale, p.prompt_version], ['5-point', 'pairwise-5point-v1']);
    p.verdicts.flat().forEach((x, i) => {
      worstVerdict = Math.max(worstVerdict, Math.abs(x - n.verdicts.flat()[i]));
    });
  }
  assert.ok(worstVerdict <= 0.01, `5-point verdicts page vs native: max |Δ| ${worstVerdict}`);

  // ---- Direct at instruction level 2 (generic): each digit distribution as `rocketjudge direct` makes it.
  await choose(page, 'design-type', 'direct');
  await choose(page, 'design-instruction', 'generic');
  const worstDigit = await directRun(page, 'generic', (d, n) => {
    assert.equal(d.prompt_version, 'generic-direct-v1');
    // Seed 004's levels judge without the reference answer (the menu's default: as the paper does).
    assert.deepEqual([d.reference, n.reference], [false, false]);
    assert.ok(Math.abs(d.score - n.score) <= 0.05, `${n.session_id}: score ${d.score} vs ${n.score}`);
    return Math.max(...d.digits.map((p, i) => Math.abs(p - n.digits[i])));
  });
  assert.ok(worstDigit <= 0.01, `Direct digits page vs native: max |Δ| ${worstDigit}`);

  // ---- Seed 004's one criterion named by the user: the page's rubric box, checked and recorded by core.
  const named = await view({ type: 'direct', settings: { instruction: 'criteria', rubric: 'Logicality' } }, {});
  assert.equal(named.count, 0, 'a criterion of its own is another design, with nothing made yet');
  const misplaced = await view({ type: 'direct', settings: { instruction: 'generic', rubric: 'Logicality' } }, {}).then(
    () => null,
    (e) => e.message,
  );
  assert.match(misplaced || '', /rubric of your own/);
  await choose(page, 'design-instruction', 'criteria');
  await page.waitForSelector('#design-rubric');
  // ---- Seeds 003/004's 1–5 scale and 003's ends-only rubric: the page's menus reach core, which
  // refuses the scale where the prompt is fixed to 0–9.
  const likert = await view({ type: 'direct', settings: { instruction: 'rubric-ends', scale: '1-5' } }, {});
  assert.equal(likert.count, 0, 'the 1–5 scale is another design, with nothing made yet');
  const fixed = await view({ type: 'direct', settings: { instruction: 'rocketeval', scale: '1-5' } }, {}).then(
    () => null,
    (e) => e.message,
  );
  assert.match(fixed || '', /0–9/);
  await choose(page, 'design-scale', '1-5');
  await choose(page, 'design-instruction', 'rubric-ends');
  await page.waitForSelector('#design-rubric');
  assert.equal(await page.locator('#design-scale').inputValue(), '1-5');
  // ---- Seed 003's instance rubrics from a file: refused with its line when wrong, then one query's own
  // rubric, the built-in one elsewhere — each record as `rocketjudge direct --rubrics` makes it.
  const sid = jsonl(join(FIX, 'queries.jsonl'))[0].session_id;
  const rubricsDir = mkdtempSync(join(tmpdir(), 'rj-rubrics-'));
  const twice = join(rubricsDir, 'bad.jsonl');
  writeFileSync(
    twice,
    `${JSON.stringify({ session_id: sid, rubric: 'Logicality' })}\n${JSON.stringify({ session_id: sid, rubric: 'Fluency' })}\n`,
  );
  await page.setInputFiles('#design-rubrics', twice);
  await page.waitForFunction(() =>
    /bad\.jsonl, line 2/.test(document.querySelector('#design-error')?.textContent || ''),
  );
  const good = join(rubricsDir, 'rubrics.jsonl');
  writeFileSync(
    good,
    `${JSON.stringify({ session_id: sid, rubric: 'Logicality: how much the answer obeys common sense.' })}\n`,
  );
  await page.setInputFiles('#design-rubrics', good);
  await page.waitForSelector('#design-rubrics-loaded');
  const worstLikert = await directRun(
    page,
    'rubric-ends',
    (d, n) => {
      assert.deepEqual(
        [d.scale, d.rubric ?? null, d.prompt_version],
        [n.scale, n.rubric ?? null, 'rubric-ends-direct-v1'],
      );
      assert.equal(
        d.rubric ?? null,
        d.session_id === sid ? 'Logicality: how much the answer obeys common sense.' : null,
      );
      assert.ok(d.digits[0] === 0 && d.digits.slice(6).every((p) => p === 0), `only 1–5 answer: ${d.digits}`);
      return Math.max(...d.digits.map((p, i) => Math.abs(p - n.digits[i])));
    },
    ['--scale', '1-5', '--rubrics', good],
  );
  assert.ok(worstLikert <= 0.01, `1–5 digits with per-query rubrics, page vs native: max |Δ| ${worstLikert}`);
  await page.click('#design-rubrics-loaded button');
  await choose(page, 'design-scale', '0-9');

  // ---- Perplexity (level 1, no prompt): the checklist menu goes away; mean log p as natively.
  await choose(page, 'design-instruction', 'perplexity');
  assert.equal(await page.locator('#design-checklist').count(), 0);
  const worstLp = await directRun(page, 'perplexity', (d, n) => {
    assert.equal(d.tokens, n.tokens);
    assert.ok(
      Math.abs(d.perplexity - Math.exp(-d.score)) <= 1e-9 * d.perplexity,
      `perplexity ${d.perplexity} of mean log p ${d.score}`,
    );
    return Math.abs(d.score - n.score);
  });
  assert.ok(worstLp <= 0.01, `perplexity page vs native: max |Δ mean log p| ${worstLp}`);
  console.log(
    `5-point: max |Δ verdict p| = ${worstVerdict.toExponential(2)}; Direct generic: max |Δ digit p| = ${worstDigit.toExponential(2)}; perplexity: max |Δ mean log p| = ${worstLp.toExponential(2)} nats; rubric-ends 1–5 with per-query rubrics: max |Δ digit p| = ${worstLikert.toExponential(2)}`,
  );

  // ---- After a reload the records are kept: running again makes nothing twice.
  await page.reload();
  await loadJudge(page, JUDGE, 'cpu', 'f32');
  await page.click('#tab-designs');
  await page.waitForSelector('#design-leaderboard tbody tr');
  await runDesign(page);
  assert.match(await page.locator('#design-status').innerText(), /done: 6/);
  assert.match(await page.locator('#design-summary').innerText(), /6 comparisons/);

  assert.deepEqual(external(), [], "no request left the page's origin");
  assert.deepEqual(
    log.errors.filter((e) => !/favicon/.test(e)),
    [],
  );
});

/** `rocketjudge reason` natively (CPU, f32 products, as the page's here) on `models`' responses to the one query. */
function nativeReason(judge, models, args) {
  const dir = mkdtempSync(join(tmpdir(), 'rj-reason-'));
  cli([
    'reason',
    ...args,
    '--model',
    judge,
    '--queries',
    join(ONE, 'queries.jsonl'),
    '--responses',
    ...models.map((m) => join(ONE, 'responses', `${m}.jsonl`)),
    '--out',
    dir,
    '--backend',
    'cpu',
    '--precision',
    'f32',
  ]);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) => jsonl(join(dir, f)));
}

/** Type a number into a field of the form and wait for the tab to be drawn again with it. */
async function setNumber(page, id, value) {
  await page.fill(`#${id}`, String(value));
  await page.dispatchEvent(`#${id}`, 'change');
  await page.waitForFunction(([i, v]) => document.querySelector(`#${i}`)?.value === v, [id, String(value)]);
}

/** A page with `models`' responses to the one query and `judge` loaded (CPU, f32), on the Written reasoning design. */
async function reasoningPage(judge, models) {
  const p = await newPage(browser, server.origin);
  await p.page.goto(`${server.origin}/?demo=0&debug=1`);
  await loadFixtures(p.page, models, ONE);
  await loadJudge(p.page, judge, 'cpu', 'f32');
  await p.page.click('#tab-designs');
  await choose(p.page, 'design-type', 'reasoned');
  return p;
}

test("written reasoning (chain of thought) in the page: the 0.5B's replies as the native CLI writes them, ranked as `rank --scores` ranks them", async () => {
  // The 0.5B (the app's CPU judge) writes readable scores here; two models on one query keep the run short.
  const models = ['gpt-4', 'llama-13b'];
  const { page, log, external } = await reasoningPage('qwen2.5-coder-0.5b', models);
  // The protocol menu is core's; choosing one fills in its paper's settings.
  await choose(page, 'design-protocol', 'feedback');
  assert.deepEqual(
    [
      await page.inputValue('#design-samples'),
      await page.inputValue('#design-temperature'),
      await page.inputValue('#design-aggregate'),
    ],
    ['5', '1', 'mean'],
  );
  await choose(page, 'design-protocol', 'rocketeval-cot');
  assert.deepEqual(
    [await page.inputValue('#design-samples'), await page.inputValue('#design-temperature')],
    ['1', '0'],
  );
  // Several greedy replies mean nothing: core says so beside the form.
  await setNumber(page, 'design-samples', 3);
  await page.waitForFunction(() => /greedy replies would all be the same/.test(document.body.textContent));
  await setNumber(page, 'design-samples', 1);
  await setNumber(page, 'design-reply-tokens', 64);
  await page.waitForSelector('#design-empty');
  await runDesign(page);
  const file = 'reasoned-rocketeval-cot.jsonl';
  const dir = await download(page, file);
  const rows = jsonl(join(dir, file));
  const nat = nativeReason('qwen2.5-coder-0.5b', models, ['--reply-tokens', '64']);
  assert.equal(rows.length, 2);
  let same = 0;
  for (const n of nat) {
    const d = rows.find((x) => x.model_test === n.model_test && x.session_id === n.session_id);
    assert.deepEqual(
      [d.judge, d.prompt_version, d.settings, d.reference],
      [n.judge, n.prompt_version, n.settings, n.reference],
    );
    assert.equal(d.samples.length, 1);
    if (d.samples[0].text === n.samples[0].text) {
      same += 1;
      assert.deepEqual([d.score ?? null, d.unparsed], [n.score ?? null, n.unparsed], 'the same reply reads the same');
    }
  }
  // Greedy text can part only at a near-tie of two tokens' logits (the tab's f32 sums and native ones
  // differ in order): seen on none of 9 such replies in f32 (in int8 on 2 of 9, "3"/"5" and "good"/"poor").
  // One of the two may part; the test below asks every reply of the pairwise form to be the native one.
  assert.ok(same >= 1, `${same} of 2 greedy replies equal the native CLI's`);
  console.log(`reasoned (rocketeval-cot, 0.5B f32, 64 tokens): ${same} of 2 page replies equal the native CLI's`);
  // The leaderboard is `rocketjudge rank --scores` on the download.
  const ranked = JSON.parse(cli(['rank', '--scores', dir, '--format', 'json']));
  const pageBoard = await board(page);
  assert.deepEqual(
    pageBoard.map((r) => r.model),
    ranked.map((r) => r.model),
  );
  pageBoard.forEach((r, i) =>
    assert.ok(Math.abs(r.score - ranked[i].score) <= 0.5, `${r.model}: page ${r.score} vs CLI ${ranked[i].score}`),
  );
  await shot(page, 'designs-reasoned');
  assert.deepEqual(external(), [], "no request left the page's origin");
  assert.deepEqual(
    log.errors.filter((e) => !/favicon/.test(e)),
    [],
  );
});

test('written reasoning in the page: unreadable replies counted and shown, records downloadable, kept across a reload', async () => {
  // SmolLM2 writes no readable score under RocketEval's CoT prompt (natively too).
  const { page, log, external } = await reasoningPage(JUDGE, MODELS);
  await setNumber(page, 'design-reply-tokens', 24);
  await page.waitForSelector('#design-empty');
  await page.click('#design-run');
  await page.waitForFunction(() => /^done/.test(document.querySelector('#design-status')?.textContent || ''), null, {
    timeout: 1_200_000,
    polling: 500,
  });
  await page.waitForSelector('#design-unreadable');
  const file = 'reasoned-rocketeval-cot.jsonl';
  const rows = jsonl(join(await download(page, file), file));
  const nat = nativeReason(JUDGE, MODELS, ['--reply-tokens', '24']);
  const texts = (rs) => rs.map((r) => `${r.model_test}|${r.session_id}|${r.samples[0].text}`).sort();
  assert.deepEqual(texts(rows), texts(nat), 'the same replies as natively');
  assert.ok(
    rows.every((r) => r.score == null && r.unparsed === 1),
    'no reply is readable',
  );
  assert.match(
    await page.locator('#design-summary').innerText(),
    /3 of 3 replies unreadable, 3 responses without a readable one/,
  );
  await page.click('#design-unreadable summary');
  const shown = await page.$$eval('#design-unreadable pre', (p) => p.map((x) => x.textContent));
  assert.deepEqual(shown.sort(), rows.map((r) => r.samples[0].text || '(empty)').sort());
  // After a reload the records are kept: running again makes nothing twice.
  await page.reload();
  await loadJudge(page, JUDGE, 'cpu', 'f32');
  await page.click('#tab-designs');
  await choose(page, 'design-type', 'reasoned');
  await setNumber(page, 'design-reply-tokens', 24);
  await page.waitForSelector('#design-unreadable');
  await page.click('#design-run');
  await page.waitForFunction(() => /^done: 3/.test(document.querySelector('#design-status')?.textContent || ''), null, {
    timeout: 60_000,
    polling: 200,
  });
  const byKey = (rs) =>
    [...rs].sort((a, b) => `${a.model_test}|${a.session_id}`.localeCompare(`${b.model_test}|${b.session_id}`));
  assert.deepEqual(
    byKey(jsonl(join(await download(page, file), file))),
    byKey(rows),
    'the records are the ones made before',
  );
  assert.deepEqual(external(), [], "no request left the page's origin");
  assert.deepEqual(
    log.errors.filter((e) => !/favicon/.test(e)),
    [],
  );
});

test("pairs judged by written replies in the page (seed 002's pairwise form): each order's replies and votes as natively, ranked as `rank --battles`", async () => {
  // The 0.5B writes readable votes here (SmolLM2 none); two models on one query keep the run short: one pair.
  const models = ['gpt-4', 'llama-13b'];
  const { page, log, external } = await reasoningPage('qwen2.5-coder-0.5b', models);
  // The paper's settings: ten replies, five per order, majority vote.
  await choose(page, 'design-protocol', 'pair-reason');
  assert.deepEqual(
    [
      await page.inputValue('#design-samples'),
      await page.inputValue('#design-temperature'),
      await page.inputValue('#design-aggregate'),
    ],
    ['10', '1', 'majority'],
  );
  await setNumber(page, 'design-samples', 3);
  await page.waitForFunction(() => /split evenly between the two presentation orders/.test(document.body.textContent));
  // Greedy, one reply per order (the tab's f32 sums make the native ones' greedy choices, tests above).
  await setNumber(page, 'design-samples', 2);
  await setNumber(page, 'design-temperature', 0);
  await setNumber(page, 'design-reply-tokens', 48);
  await page.waitForSelector('#design-empty');
  await page.click('#design-run');
  await page.waitForFunction(() => /^done/.test(document.querySelector('#design-status')?.textContent || ''), null, {
    timeout: 1_200_000,
    polling: 500,
  });
  const file = 'reasoned-pair-reason.jsonl';
  const dir = await download(page, file);
  const rows = jsonl(join(dir, file));
  const nat = nativeReason('qwen2.5-coder-0.5b', models, [
    '--protocol',
    'pair-reason',
    '--samples',
    '2',
    '--temperature',
    '0',
    '--reply-tokens',
    '48',
  ]);
  assert.equal(rows.length, 1, 'two models on one query');
  const key = (r) => `${r.session_id}|${r.model_a}|${r.model_b}`;
  const seen = (rs) =>
    rs.map((r) => [key(r), r.samples.map((s) => [s.a_first, s.text, s.vote ?? null]), r.winner ?? null]).sort();
  assert.deepEqual(seen(rows), seen(nat), "each order's reply, its vote and the verdict as natively");
  const unread = rows.reduce((n, r) => n + r.unparsed, 0);
  const unjudged = rows.filter((r) => r.winner == null).length;
  assert.match(
    await page.locator('#design-summary').innerText(),
    new RegExp(`${unread} of 2 replies unreadable, ${unjudged} pairs without a verdict`),
  );
  if (unjudged < rows.length) {
    // The leaderboard is `rocketjudge rank --battles` on the download (the leaderboard's method).
    await page.waitForSelector('#design-leaderboard tbody tr');
    const ranked = JSON.parse(cli(['rank', '--battles', join(dir, file), '--format', 'json']));
    const pageBoard = await board(page);
    assert.deepEqual(
      pageBoard.map((r) => r.model),
      ranked.map((r) => r.model),
    );
  } else {
    await page.waitForFunction(() => /no verdicts on pairs to rank/.test(document.body.textContent));
  }
  if (unread) {
    await page.click('#design-unreadable summary');
    const shown = await page.$$eval('#design-unreadable li .hint', (s) => s.map((x) => x.textContent));
    assert.equal(shown.length, unread);
    assert.ok(
      shown.every((s) => / vs /.test(s)),
      'each unreadable reply names its pair',
    );
  }
  await shot(page, 'designs-reasoned-pairs');
  assert.deepEqual(external(), [], "no request left the page's origin");
  assert.deepEqual(
    log.errors.filter((e) => !/favicon/.test(e)),
    [],
  );
});
