// The judge writes in the tab: greedy generation through the app's worker (web/worker/main.js `generate`).
// (a) CPU (threads, int8 relaxed SIMD): SmolLM2-135M continues each parity fixture's query as
//     llama.cpp does (tests/golden/engine/generate-smollm2-135m.json, scripts/golden/generate_golden.py):
//     the same prompt tokens, the same tokens until the first step where llama.cpp's own top two logits
//     nearly tie (within its variation across its settings, the rule of crate/engine/tests/generate.rs);
//     the streamed pieces make the text, one event per token.
// (b) WebGPU (SwiftShader, a CPU device too slow for whole models: see webgpu.test.mjs) on SmolLM2 cut
//     to its first 2 blocks: the same greedy tokens as the CPU backend's f32 products in the same page.
// (c) The app: the item inspector's checklist editor writes a checklist with the loaded judge in the
//     tab; the questions land in the editor, and saving regrades the query with them.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  startServer,
  launch,
  newPage,
  shot,
  loadFixtures,
  loadJudge,
  gradeAll,
  ROOT,
  packagedSource,
} from './harness.mjs';

const MODEL = 'smollm2-135m';
const golden = JSON.parse(readFileSync(join(ROOT, `tests/golden/engine/generate-${MODEL}.json`), 'utf8'));

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

const sourceOf = (model) => packagedSource(server.origin, model);

/**
 * In the page: the app's worker loads `source` for each of `runs` ({backend, options, debugLayers})
 * and generates from each of `prompts` ({text, maxTokens}) greedily. Returns per run {info, outputs:
 * [{result, events}]}.
 */
async function generateInWorker(page, source, prompts, runs) {
  return page.evaluate(
    async ({ source, prompts, runs }) => {
      const w = new Worker('/web/worker/main.js', { type: 'module' });
      let next = 1;
      const pending = new Map();
      let events = [];
      w.onmessage = (ev) => {
        const m = ev.data;
        if (m.id && pending.has(m.id)) {
          const { resolve, reject } = pending.get(m.id);
          pending.delete(m.id);
          if (m.ok) resolve(m.result);
          else reject(new Error(m.error));
        } else if (m.type === 'generate-token') events.push(m);
      };
      const request = (type, payload = {}) =>
        new Promise((resolve, reject) => {
          const id = next++;
          pending.set(id, { resolve, reject });
          w.postMessage({ type, id, ...payload });
        });
      try {
        await request('init');
        const out = [];
        for (const { backend, options, debugLayers } of runs) {
          const info = await request('loadJudge', { source, backend, maxTokens: 4096, debugLayers, options });
          const outputs = [];
          for (const { text, maxTokens } of prompts) {
            events = [];
            const result = await request('generate', { prompt: text, chat: true, settings: { maxTokens } });
            outputs.push({ result, events });
          }
          out.push({ info, outputs });
          await request('unloadJudge');
        }
        return out;
      } finally {
        w.terminate();
      }
    },
    { source, prompts, runs },
  );
}

/** One event per token, in order, whose pieces make the text. */
function checkEvents(what, { result, events }) {
  assert.deepEqual(
    events.map((e) => e.n),
    result.tokens.map((_, i) => i + 1),
    `${what}: one event per token`,
  );
  assert.equal(events.map((e) => e.piece).join(''), result.text, `${what}: the pieces make the text`);
}

test("CPU: greedy continuations equal llama.cpp's up to a near-tie of its own logits", async () => {
  const { context, page, external } = await newPage(browser, server.origin);
  await page.goto(`${server.origin}/?demo=0&debug=1`);
  const tol = golden.reference_variation;
  const prompts = golden.fixtures.map((f) => ({ text: f.user_message, maxTokens: f.tokens.length }));
  const [run] = await generateInWorker(page, sourceOf(MODEL), prompts, [
    { backend: 'cpu', options: { precision: 'int8' } },
  ]);
  assert.match(run.info.backend, /^cpu \(\d+ threads?, int8 wasm/);
  let equal = 0;
  let compared = 0;
  golden.fixtures.forEach((f, i) => {
    const out = run.outputs[i];
    const { result } = out;
    assert.deepEqual(result.prompt, f.prompt, `${f.fixture}: prompt token ids`);
    checkEvents(f.fixture, out);
    const k = result.tokens.findIndex((t, j) => t !== f.tokens[j]);
    if (k < 0) {
      assert.deepEqual(result.tokens, f.tokens, `${f.fixture}: the continuation`);
      assert.equal(result.text, f.text, `${f.fixture}: the text`);
      equal += f.tokens.length;
      compared += f.tokens.length;
      console.log(`${f.fixture}: all ${f.tokens.length} tokens equal llama.cpp's (${(result.ms / 1000).toFixed(1)} s)`);
      return;
    }
    const step = f.steps[k];
    const theirs = step[0];
    const ours = step.find(([id]) => id === result.tokens[k]);
    assert.ok(
      ours,
      `${f.fixture} step ${k}: our token ${result.tokens[k]} is not among llama.cpp's top 5 ${JSON.stringify(step)}`,
    );
    assert.ok(
      theirs[1] - ours[1] <= tol,
      `${f.fixture} step ${k}: llama.cpp's logits ${theirs[1]} (${theirs[0]}) vs ${ours[1]} (${ours[0]}) differ by more than its own variation ${tol}`,
    );
    equal += k;
    compared += k + 1;
    console.log(
      `${f.fixture}: ${k} tokens equal, then a near-tie in llama.cpp's logits: ${theirs[1].toFixed(4)} vs ${ours[1].toFixed(4)}`,
    );
  });
  console.log(`tab CPU: ${equal} of ${compared} compared tokens equal llama.cpp's`);
  assert.deepEqual(external(), [], "no request left the page's origin");
  await context.close();
});

test("WebGPU: greedy continuations equal the CPU backend's (first 2 blocks)", async () => {
  const { context, page, external } = await newPage(browser, server.origin);
  await page.goto(`${server.origin}/?demo=0&debug=1`);
  const prompts = [{ text: golden.fixtures[0].user_message, maxTokens: 12 }];
  const [gpu, cpu] = await generateInWorker(page, sourceOf(MODEL), prompts, [
    { backend: 'webgpu', debugLayers: 2 },
    // The CPU with f32 products: the same arithmetic as the WebGPU kernels.
    { backend: 'cpu', debugLayers: 2, options: { precision: 'f32' } },
  ]);
  assert.match(gpu.info.backend, /^webgpu/);
  const [g, c] = [gpu.outputs[0], cpu.outputs[0]];
  checkEvents('webgpu', g);
  assert.equal(g.result.tokens.length, 12);
  assert.deepEqual(g.result.tokens, c.result.tokens, 'WebGPU and CPU generate the same tokens');
  assert.equal(g.result.text, c.result.text);
  console.log(
    `WebGPU (2 blocks): ${g.result.tokens.length} tokens as the CPU's in ${(g.result.ms / 1000).toFixed(1)} s: ${JSON.stringify(g.result.text)}`,
  );
  assert.deepEqual(external(), []);
  await context.close();
});

test('the app: a checklist written by the loaded judge in the tab, edited, saved and graded', async () => {
  const { context, page, external, log } = await newPage(browser, server.origin);
  await page.goto(`${server.origin}/?demo=0&debug=1`);
  await loadFixtures(page, ['gpt-4']);
  await loadJudge(page, MODEL, 'cpu');
  await gradeAll(page);
  await page.click('#tab-inspector');
  await page.click('#edit-checklist');
  await page.click('summary:has-text("Write the checklist on this device")');
  // RocketEval's creation prompt by default, seed 002's policies beside it (core's names).
  await page.waitForFunction(() => document.querySelectorAll('#write-checklist-policy option').length > 1);
  assert.deepEqual(await page.$$eval('#write-checklist-policy option', (os) => os.map((o) => o.value)), [
    'rocketeval',
    'baseline',
    'specify',
    'length-0.5',
    'length-1.5',
    'self-refine',
    'ticking',
  ]);
  await page.click('#write-checklist');
  await page.waitForFunction(
    () => /questions written in \d+ tokens/.test(document.querySelector('#write-checklist-status')?.textContent || ''),
    null,
    { timeout: 300_000 },
  );
  const written = await page.$$eval('ol.editor input', (inputs) => inputs.map((i) => i.value));
  assert.ok(written.length > 0 && written.every((t) => t.trim().endsWith('?')), JSON.stringify(written));
  assert.equal(new Set(written).size, written.length, 'each question once');
  await shot(page, 'checklist-written-in-the-tab');
  // The edit step: the first question reworded, then saved; the query is graded with the new list.
  await page.fill('ol.editor li:first-child input', 'Does the response answer the question directly?');
  // Clicked in the page, read at once: busy (disabled, saying what it regrades) from the click on.
  const busy = await page.evaluate(() => {
    const b = document.querySelector('#save-checklist');
    b.click();
    return { disabled: b.disabled, text: b.textContent };
  });
  assert.equal(busy.disabled, true);
  assert.match(busy.text, /^Regrading \d+ items? of \d+ responses?…$/);
  await page.waitForFunction(
    (n) => document.querySelectorAll('#inspector-grid tbody tr').length === n + 1,
    written.length,
    { timeout: 300_000 },
  );
  const items = await page.$$eval('#inspector-grid tbody tr td.item', (tds) => tds.map((t) => t.textContent));
  assert.equal(items[0], '1. Does the response answer the question directly?');
  const probs = await page.$$eval('#inspector-grid tbody tr:not(.total) td.num', (tds) =>
    tds.map((t) => t.textContent),
  );
  assert.ok(probs.length === written.length && probs.every((p) => /^\d\.\d\d$/.test(p)), JSON.stringify(probs));
  assert.deepEqual(external(), [], 'the query never left the page');
  assert.deepEqual(
    log.errors.filter((e) => !/favicon/.test(e)),
    [],
  );
  await context.close();
});
