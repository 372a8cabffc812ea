// The "Benchmark this device" page (bench.html): our engine and wllama side by side on the same
// model, threads and tokens, on the CPU and on WebGPU (SwiftShader here: the small workload). Speed is
// not asserted (benchmarks are not tests); that both engines ran the same work, and the table, are.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, launch, newPage, shot, ROOT, MODELS } from './harness.mjs';

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

test('the benchmark page runs rocketjudge and wllama on the same tokens, CPU and WebGPU, and prints the ratios', async () => {
  const { context, page, log, external } = await newPage(browser, server.origin);
  // From the app's footer link; then with 4 generated tokens (`?decode=`, 64 by default) and a small
  // workload: what is checked is that both engines ran the same work, not how fast. (wllama's four
  // pilot runs on the CPU are most of the test's time, in proportion to the prefix: 16 tokens, not
  // 48, took it from 125 to 98 s on the Zen 3 VM.)
  await page.goto(`${server.origin}/?demo=0`);
  await page.click('#bench-link');
  await page.waitForSelector('#bench-run');
  await page.goto(new URL('?decode=4', page.url()).href);
  await page.waitForSelector('#bench-run');
  await page.selectOption('#bench-model', 'smollm2-135m');
  await page.fill('#bench-prefix', '16');
  await page.fill('#bench-items', '2');
  await page.fill('#bench-suffix', '6');
  await page.fill('#bench-repeat', '1');
  assert.equal(await page.isChecked('#bench-webgpu'), true, 'WebGPU is offered where the browser has an adapter');
  // Every status line the run shows, kept as it changes.
  await page.evaluate(() => {
    const el = document.querySelector('#status');
    window.statuses = [];
    new MutationObserver(() => window.statuses.push(el.textContent)).observe(el, {
      childList: true,
      subtree: true,
      characterData: true,
    });
  });
  await page.click('#bench-run');
  // While it runs: Run disabled, and the result area says what is running.
  assert.equal(await page.isDisabled('#bench-run'), true);
  assert.match(await page.locator('#bench-running').innerText(), /^Running on cpu and webgpu/);
  await page.waitForFunction(() => document.querySelector('#bench-json').textContent, null, {
    timeout: 900_000,
    polling: 1000,
  });
  assert.equal(await page.isDisabled('#bench-run'), false, 'Run is enabled again when the run ends');
  // wllama's timed rounds on the CPU (the page's longest wait) say their time left, from its pilot's pace.
  const statuses = await page.evaluate(() => window.statuses);
  assert.ok(
    statuses.some((t) => /wllama on cpu .*round 1 of 1….*About \d+m \d\ds left for its rounds\./.test(t)),
    statuses.filter((t) => /wllama/.test(t)).join('\n'),
  );
  const report = JSON.parse(await page.locator('#bench-json').textContent());
  assert.equal(report.error, undefined, report.error);
  assert.equal(report.isolated, true);
  assert.deepEqual(
    report.rows.map((r) => r.backend),
    ['cpu', 'webgpu'],
  );
  for (const row of report.rows) {
    const { rocketjudge: ours, wllama } = row;
    assert.ok(ours && wllama, `${row.backend}: both engines ran (${row.skipped || ''})`);
    for (const e of [ours, wllama])
      assert.ok(e.prefixTokensPerSec > 0 && e.secondsPerResponse > 0 && e.decodeTokensPerSec > 0, JSON.stringify(e));
    // Decode: wllama generated as many tokens as asked (the end of generation ignored), one more
    // than its one-token baseline.
    assert.equal(wllama.decode.generated, row.workload.decodeTokens + 1, JSON.stringify(wllama.decode));
    assert.ok(Math.abs(row.ratio.decodeTokensPerSec - ours.decodeTokensPerSec / wllama.decodeTokensPerSec) < 1e-9);
    // The same work: llama-server's own token counts equal our engine's for the prefix and each item,
    // and it took the prefix from its KV cache for every item.
    assert.deepEqual(wllama.tokens, ours.tokens);
    assert.equal(ours.tokens.items.length, row.workload.items);
    assert.equal(wllama.prefixReused, true);
    assert.ok(Math.abs(row.ratio.secondsPerResponse - ours.secondsPerResponse / wllama.secondsPerResponse) < 1e-9);
    // wllama at its best: the installed release, its settings from a pilot of the page's thread
    // count and one thread, flash attention on and off (the fastest runs the workload); on the
    // software adapter's small workload no pilot: the page's thread count, flash attention on.
    assert.equal(
      wllama.version,
      JSON.parse(readFileSync(join(ROOT, 'node_modules/@wllama/wllama/package.json'), 'utf8')).version,
    );
    const threads = report.threads;
    if (row.reduced) {
      assert.deepEqual(wllama.pilot, []);
      assert.deepEqual([wllama.threads, wllama.flashAttn], [threads, true]);
    } else {
      assert.deepEqual(
        wllama.pilot.map((p) => [p.threads, p.flashAttn]),
        [...new Set([threads, 1])].flatMap((t) => [
          [t, true],
          [t, false],
        ]),
      );
      const best = wllama.pilot.reduce((a, b) => (b.prefixTokensPerSec > a.prefixTokensPerSec ? b : a));
      assert.deepEqual([wllama.threads, wllama.flashAttn], [best.threads, best.flashAttn]);
    }
    // Our engine's memory: the wasm memory holds at least the model's weights, below 32-bit wasm's 4 GiB.
    assert.ok(
      ours.wasmMemoryBytes > statSync(join(MODELS, 'smollm2-135m.gguf')).size / 2 && ours.wasmMemoryBytes < 2 ** 32,
      String(ours.wasmMemoryBytes),
    );
  }
  assert.match(report.rows[0].rocketjudge.backend, /^cpu \(\d+ threads?, int8 wasm/);
  // The row's label names the CPU's kernels once (its description already does).
  const cpu = report.rows[0].rocketjudge;
  assert.equal(cpu.label.split(cpu.kernels).length - 1, 1, cpu.label);
  assert.equal(report.rows[1].wllama.webgpu, true);
  assert.match(report.rows[1].rocketjudge.backend, /^webgpu: .*swiftshader/i);
  assert.ok(report.rows[1].reduced, 'a software adapter runs the small workload');
  // The table shows both engines on both backends.
  const engines = await page.$$eval('#bench-table tbody tr', (rows) =>
    rows.map((r) => r.children[1].textContent.split(' ')[0]),
  );
  assert.deepEqual(engines, ['rocketjudge', 'wllama', 'rocketjudge', 'wllama']);
  await shot(page, 'bench');
  assert.deepEqual(external(), [], "no request left the page's origin");
  assert.deepEqual(
    log.errors.filter((e) => !/favicon/.test(e)),
    [],
  );
  await context.close();
});
