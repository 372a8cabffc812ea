// The demo as a newcomer runs it, measured: the app (served by `rocketjudge serve`) in headless
// Chromium, the bundled demo (MT-Bench, 3 models' answers), a judge loaded on the CPU engine, Grade
// pressed; every graded response recorded as the page is told of it (its model and query, the
// tokens the judge ran for it, its own seconds, the time left the page showed, the live
// leaderboard's separated pairs and order), until --responses are graded; then Cancel. Called by
// scripts/bench-demo.sh, which builds and serves first.
//
//   node scripts/bench/demo-run.mjs --origin http://127.0.0.1:PORT --model qwen2.5-coder-0.5b \
//     [--responses 40] [--threads N] [--out FILE.json]
//
// The record (--out) is what tests/js/pace.test.mjs replays (tests/fixtures/paces/) and what
// docs/measurements/demo.md reports.

import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { launchChromium } from '../lib/chromium.mjs';

const { values: a } = parseArgs({
  options: {
    origin: { type: 'string' },
    model: { type: 'string', default: 'qwen2.5-coder-0.5b' },
    responses: { type: 'string', default: '40' },
    threads: { type: 'string' },
    out: { type: 'string' },
  },
});
if (!a.origin) throw new Error('--origin is required (scripts/bench-demo.sh passes it)');
const n = Number(a.responses);

const browser = await launchChromium(['--enable-unsafe-webgpu', '--use-webgpu-adapter=swiftshader']);
try {
  const page = await (await browser.newContext()).newPage();
  page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
  if (a.threads) await page.addInitScript((t) => localStorage.setItem('rocketjudge-threads', t), a.threads);
  await page.goto(`${a.origin}/?debug=1`);
  await page.waitForFunction(() => document.querySelectorAll('#responses table.models tbody tr').length === 3, null, {
    timeout: 120_000,
  });
  await page.selectOption('#model-select', a.model);
  await page.selectOption('#backend-select', 'cpu');
  const loadStarted = Date.now();
  await page.click('#load-judge');
  await page.waitForFunction(
    () => !document.querySelector('#load-judge').disabled && document.querySelector('.judge-info'),
    null,
    {
      timeout: 1_800_000,
    },
  );
  const loadSeconds = (Date.now() - loadStarted) / 1000;
  const judge = await page.locator('.judge-info').innerText();
  await page.evaluate(() => {
    window.recorded = [];
    const started = performance.now();
    globalThis.__rocketjudgeEngine.on('graded', (m) => {
      const s = m.standing;
      window.recorded.push({
        model: m.judgment.model_test,
        session_id: m.judgment.session_id,
        tokens: m.detail.prefixTokens + m.detail.suffixTokens,
        seconds: m.detail.seconds,
        elapsed: (performance.now() - started) / 1000,
        etaSec: m.etaSec,
        separated: s ? s.pairs.filter((p) => p.separated).length : 0,
        order: s ? s.entries.map((e) => e.model) : [],
        p_yes_mean: m.judgment.norm_probability.reduce((x, y) => x + y, 0) / m.judgment.norm_probability.length,
      });
    });
  });
  await page.click('#start-grading');
  let last = 0;
  for (;;) {
    const k = await page.evaluate(() => window.recorded.length);
    if (k !== last) {
      const r = (await page.evaluate((i) => window.recorded[i], k - 1)) || {};
      console.error(`${k}/${n} ${r.model} ${r.session_id}: ${r.tokens} tokens in ${r.seconds?.toFixed(1)} s`);
      last = k;
    }
    if (k >= n) break;
    await page.waitForTimeout(1000);
  }
  await page.click('#cancel-grading');
  const recorded = (await page.evaluate(() => window.recorded)).slice(0, n);
  const firstSeparated = recorded.findIndex((r) => r.separated > 0);
  const record = {
    date: new Date().toISOString().slice(0, 10),
    machine: `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}`,
    judge: a.model,
    judgeInfo: judge,
    threads: a.threads ? Number(a.threads) : null,
    loadSeconds,
    firstSeparated:
      firstSeparated < 0 ? null : { responses: firstSeparated + 1, minutes: recorded[firstSeparated].elapsed / 60 },
    responses: recorded,
  };
  if (a.out) writeFileSync(a.out, `${JSON.stringify(record, null, 1)}\n`);
  const mean = (xs) => xs.reduce((x, y) => x + y, 0) / xs.length;
  const total = recorded.reduce((x, r) => x + r.seconds, 0);
  console.log(
    `${a.model} in the tab (${judge.split('\n')[0]}): ${recorded.length} responses in ${(total / 60).toFixed(1)} min, ` +
      `${mean(recorded.map((r) => r.seconds)).toFixed(1)} s a response (${Math.min(...recorded.map((r) => r.seconds)).toFixed(1)}–${Math.max(...recorded.map((r) => r.seconds)).toFixed(1)}); ` +
      `first separated pair: ${record.firstSeparated ? `after ${record.firstSeparated.responses} responses, ${record.firstSeparated.minutes.toFixed(1)} min` : `none in ${recorded.length}`}; ` +
      `mean p(Yes) per model: ${[...new Set(recorded.map((r) => r.model))].map((m) => `${m} ${mean(recorded.filter((r) => r.model === m).map((r) => r.p_yes_mean)).toFixed(2)}`).join(', ')}`,
  );
} finally {
  await browser.close();
}
