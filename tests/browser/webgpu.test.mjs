// The judge engine on WebGPU in the browser (Chromium's WebGPU on SwiftShader, a CPU device, so
// these check correctness, never speed):
// (a) parity: the WebGPU judge in the page's worker against the CPU backend, |Δp(Yes)| ≤ 0.01 per
//     item, for the four packaged models (see PLAN for what fits SwiftShader's speed), its kernels
//     with subgroup operations exactly where the page's adapter offers them;
// (b) device loss in the middle of grading: a clear message, every finished response kept exactly
//     once, the rest graded on the CPU.
// Run by scripts/test.sh after `scripts/build-web.sh` (which builds the wasm with the `webgpu` feature):
// `node --test tests/browser/webgpu.test.mjs`.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import {
  startServer,
  launch,
  newPage,
  shot,
  loadFixtures,
  loadJudge,
  exportFile,
  gradeNatively,
  ROOT,
  FIX,
  packagedSource,
  jsonl,
  gradeKey,
  compareProbabilities,
} from './harness.mjs';

const PARITY = join(ROOT, 'tests/fixtures/parity');

// Chromium's WebGPU here is SwiftShader on a shared 2-core machine: measured at ~0.2 GFLOP/s (native
// lavapipe does ~3), a whole SmolLM2-135M forward over the shortest parity fixture (267 prefix + 354
// suffix tokens) took 565 s and agreed with the native CPU within 4e-4. Whole models do not fit this
// file's ~8 minute budget, so by default each judge runs cut to its first blocks (every tensor type and
// shape of the model, its architecture's attention and norms; the answers are meaningless but must
// still agree) on the shortest fixture, 101_turn1, with the first `items` checklist items, against the
// CPU backend in the same page on the same cut model. Qwen2.5-Coder-1.5B is the slowest: one block and
// one item of the shortest fixture. Measured here (load average ~4): SmolLM2 39 s, Gemma 71 s, 0.5B 44 s,
// 1.5B 104 s, device loss 44 s: 5 minutes for the file. The seconds each model took are logged.
// ROCKETJUDGE_WEBGPU_FULL=1 (for machines with a GPU) grades whole models on every parity fixture
// against the native CPU backend (`rocketjudge grade --backend cpu`).
const FULL = !!process.env.ROCKETJUDGE_WEBGPU_FULL;
const PLAN = [
  { model: 'smollm2-135m', layers: 2, items: 5 },
  { model: 'gemma-3-270m', layers: 1, items: 5 },
  { model: 'qwen2.5-coder-0.5b', layers: 1, items: 5 },
  { model: 'qwen2.5-coder-1.5b', layers: 1, items: 1 },
];
const LOSS_JUDGE = 'smollm2-135m';
const LOSS_LAYERS = 1;

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

/**
 * In the page: a worker of the app (web/worker/main.js) loads `source` for each of `runs` ({backend,
 * debugLayers}) in turn and grades `jobs` (the worker stores them in this page's IndexedDB and reports
 * each). Returns one {info, judgments, loadS, gradeS} per run.
 */
async function gradeInWorker(page, source, jobs, runs) {
  return page.evaluate(
    async ({ source, jobs, runs }) => {
      const w = new Worker('/web/worker/main.js', { type: 'module' });
      let next = 1;
      const pending = new Map();
      const notices = [];
      let graded = [];
      const errors = [];
      w.onmessage = (ev) => {
        const m = ev.data;
        if (m.id && pending.has(m.id)) {
          const { resolve, reject } = pending.get(m.id);
          pending.delete(m.id);
          if (m.ok) resolve(m.result);
          else reject(new Error(m.error));
        } else if (m.type === 'notice') notices.push(m.text);
        else if (m.type === 'graded') graded.push(m.judgment);
        else if (m.type === 'grade-error') errors.push(m.error);
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
        for (const { backend, debugLayers } of runs) {
          const t0 = performance.now();
          // The CPU with f32 products: the same arithmetic as the WebGPU kernels.
          const info = await request('loadJudge', {
            source,
            backend,
            maxTokens: 4096,
            debugLayers,
            options: { precision: 'f32' },
          });
          const t1 = performance.now();
          graded = [];
          const done = await request('grade', { jobs });
          const t2 = performance.now();
          if (done.graded !== jobs.length || errors.length)
            throw new Error(`${backend}: ${JSON.stringify(done)} ${errors.join('; ')}`);
          out.push({
            info,
            notices: [...notices],
            judgments: graded,
            loadS: (t1 - t0) / 1000,
            gradeS: (t2 - t1) / 1000,
          });
        }
        return out;
      } finally {
        w.terminate();
      }
    },
    { source, jobs, runs },
  );
}

const sourceOf = (model) => packagedSource(server.origin, model);

test('parity: the WebGPU judge in the browser agrees with the CPU backend on every packaged model', async () => {
  const queries = jsonl(join(PARITY, 'queries.jsonl'));
  const responses = jsonl(join(PARITY, 'responses.jsonl'));
  const summary = [];
  // ROCKETJUDGE_WEBGPU_MODELS=a,b limits the models (for development).
  const only = process.env.ROCKETJUDGE_WEBGPU_MODELS?.split(',');
  for (const { model, layers, items } of PLAN.filter((p) => !only || only.includes(p.model))) {
    const started = Date.now();
    const picked = FULL ? responses : responses.filter((r) => r.session_id === '101_turn1');
    const jobs = picked.map((response) => {
      const query = { ...queries.find((q) => q.session_id === response.session_id) };
      if (!FULL) query.checklist = query.checklist.slice(0, items);
      return { query, response, model: response.generator };
    });
    const { context, page } = await newPage(browser, server.origin);
    await page.goto(`${server.origin}/?demo=0`);
    // Whether the engine's device may use subgroups here: the adapter offers them and the browser's
    // WGSL has the subgroup_id builtins (web/lib/loading.js asks the device for them then).
    const offered = await page.evaluate(async () => {
      const adapter = await navigator.gpu.requestAdapter();
      return adapter.features.has('subgroups') && navigator.gpu.wgslLanguageFeatures.has('subgroup_id');
    });
    const runs = FULL
      ? [{ backend: 'webgpu' }]
      : [
          { backend: 'webgpu', debugLayers: layers },
          { backend: 'cpu', debugLayers: layers },
        ];
    const [gpu, cpu] = await gradeInWorker(page, sourceOf(model), jobs, runs);
    await context.close();

    assert.equal(
      gpu.info.backendKind,
      'webgpu',
      `${model} loaded on ${gpu.info.backend} (${gpu.info.why}; ${gpu.notices.join(' ')})`,
    );
    assert.equal(gpu.info.device.kind, 'webgpu');
    // The engine names the adapter from what the browser reported (wgpu in a browser has no name).
    assert.ok(gpu.info.device.adapter, 'the adapter is named');
    assert.ok(gpu.info.backend.includes(gpu.info.device.adapter), gpu.info.backend);
    assert.equal(typeof gpu.info.device.f16, 'boolean');
    assert.equal(gpu.info.device.subgroups, offered, `subgroups offered: ${offered}; ${gpu.info.backend}`);
    let want;
    let against;
    if (FULL) {
      const file = join(mkdtempSync(join(tmpdir(), 'rj-parity-')), 'responses.jsonl');
      writeFileSync(file, picked.map((r) => JSON.stringify(r)).join('\n') + '\n');
      // f32 products on the CPU, as the WebGPU backend computes (the CPU's default rounds activations to 8 bits).
      want = gradeNatively(model, join(PARITY, 'queries.jsonl'), [file], 'f32');
      against = 'native CPU';
    } else {
      assert.equal(cpu.info.backendKind, 'cpu');
      want = new Map(cpu.judgments.map((j) => [gradeKey(j), j.norm_probability]));
      against = 'CPU (wasm)';
    }
    const { worst, worstMargin } = compareProbabilities(model, gpu.judgments, want);
    const n = gpu.judgments.reduce((s, j) => s + j.norm_probability.length, 0);
    const line =
      `${model}${FULL ? '' : ` (first ${layers} block${layers > 1 ? 's' : ''})`}: ${n} items of ${picked.map((r) => r.session_id).join(', ')}; ` +
      `max |Δp(Yes)| WebGPU vs ${against} ${worst.toExponential(2)}, |Δmargin| ${worstMargin.toExponential(2)}; ` +
      `WebGPU load ${gpu.loadS.toFixed(1)}s, grading ${gpu.gradeS.toFixed(1)}s${cpu ? `; CPU grading ${cpu.gradeS.toFixed(1)}s` : ''}; total ${((Date.now() - started) / 1000).toFixed(1)}s`;
    console.log(line);
    summary.push(line);
    if (summary.length === 1)
      console.log(
        `adapter: ${gpu.info.device.adapter}; ${gpu.info.backend}; software adapter: ${gpu.info.device.softwareAdapter}; ` +
          `subgroups offered and used: ${offered}`,
      );
  }
  writeFileSync(join(ROOT, 'tests/browser/out/webgpu-parity.txt'), summary.join('\n') + '\n');
});

test('device loss in the middle of grading: a clear message, nothing lost or doubled, the rest graded on the CPU', async () => {
  const started = Date.now();
  const models = ['gpt-4', 'gpt-3.5-turbo', 'llama-13b', 'alpaca-13b'];
  // The reference: the CPU backend in a page, on the same (cut) judge and the same 12 responses.
  const queries = jsonl(join(FIX, 'queries.jsonl'));
  const jobs = models.flatMap((model) =>
    jsonl(join(FIX, 'responses', `${model}.jsonl`)).map((response) => ({
      query: queries.find((q) => q.session_id === response.session_id),
      response,
      model,
    })),
  );
  const ref = await (async () => {
    const { context, page } = await newPage(browser, server.origin);
    await page.goto(`${server.origin}/?demo=0`);
    const [cpu] = await gradeInWorker(page, sourceOf(LOSS_JUDGE), jobs, [{ backend: 'cpu', debugLayers: LOSS_LAYERS }]);
    await context.close();
    return new Map(cpu.judgments.map((j) => [gradeKey(j), j.norm_probability]));
  })();

  const { context, page, log } = await newPage(browser, server.origin);
  // Record what the engine worker tells the page, and cut the judge to its first blocks (SwiftShader
  // is slow) by adding the worker's test option to the page's loadJudge request.
  await context.addInitScript((layers) => {
    const Native = window.Worker;
    window.__rj = { workers: [], messages: [] };
    window.Worker = class extends Native {
      constructor(...args) {
        super(...args);
        window.__rj.workers.push(this);
        this.addEventListener('message', (ev) => {
          const m = ev.data || {};
          if (m.type === 'graded')
            window.__rj.messages.push({
              type: m.type,
              key: `${m.judgment.model_test}|${m.judgment.session_id}`,
              backend: m.detail.backend,
            });
          else if (m.type && m.type !== 'load' && m.type !== 'fallback-load')
            window.__rj.messages.push({ type: m.type, text: m.text || m.error || '' });
        });
      }
      postMessage(msg, ...rest) {
        super.postMessage(msg && msg.type === 'loadJudge' ? { ...msg, debugLayers: layers } : msg, ...rest);
      }
    };
  }, LOSS_LAYERS);
  await page.goto(`${server.origin}/?demo=0`);
  await loadFixtures(page, models);
  // SwiftShader is a software adapter: "auto" would take the CPU (next test), so WebGPU is chosen
  // explicitly; f32 products on the CPU after the loss, as the reference.
  const info = await loadJudge(page, LOSS_JUDGE, 'webgpu', 'f32');
  assert.match(info, /webgpu/, info);

  await page.click('#start-grading');
  await page.waitForFunction(() => Number(document.querySelector('#grade-progress')?.value) >= 2, null, {
    timeout: 600_000,
    polling: 100,
  });
  // The test hook: the worker destroys the GPU device before its next response.
  await page.evaluate(() => window.__rj.workers[0].postMessage({ type: 'debugLoseDevice' }));
  await page.waitForFunction(() => document.querySelector('#start-grading')?.textContent === 'All graded', null, {
    timeout: 900_000,
    polling: 500,
  });
  await shot(page, 'webgpu-device-lost');

  // A clear message on the page.
  const notices = await page.$$eval('.notice', (ns) => ns.map((n) => n.textContent));
  const lost = notices.find((t) => /GPU stopped working while grading/.test(t));
  assert.ok(lost, `a device-loss notice among ${JSON.stringify(notices)}`);
  assert.match(lost, /GPU device lost/);
  assert.match(lost, /graded so far is kept/);
  assert.match(lost, /continues on the CPU/);

  // Every response graded exactly once: some on WebGPU before the loss, the rest on the CPU after it.
  const messages = await page.evaluate(() => window.__rj.messages);
  const graded = messages.filter((m) => m.type === 'graded');
  assert.equal(graded.length, 12, 'one graded report per response');
  assert.equal(new Set(graded.map((m) => m.key)).size, 12, 'no response graded twice');
  const backends = graded.map((m) => m.backend);
  const firstCpu = backends.indexOf('cpu');
  assert.ok(firstCpu >= 2, `graded on ${backends.join(',')}`);
  assert.ok(
    backends.slice(0, firstCpu).every((b) => b === 'webgpu') && backends.slice(firstCpu).every((b) => b === 'cpu'),
    backends.join(','),
  );
  assert.deepEqual(
    messages.filter((m) => m.type === 'grade-error'),
    [],
    'no response failed',
  );
  assert.ok(
    messages.some((m) => m.type === 'judge-changed'),
    'the page is told the judge moved to the CPU',
  );
  assert.match(
    await page.locator('.badge', { hasText: 'judge:' }).innerText(),
    / on the CPU\b/,
    'the judge badge says where it runs now',
  );

  // The judgments, WebGPU's and the CPU's alike, agree with the reference.
  const judgments = jsonl(await exportFile(page, 'export-judgments', 'browser-webgpu-lost.jsonl'));
  const { worst } = compareProbabilities('after device loss', judgments, ref);

  // And all of them are stored: after a reload the page shows 12 graded responses.
  await page.reload();
  await page.waitForSelector('#responses table.models');
  const kept = await page.$$eval('#responses table.models tbody tr', (rows) =>
    rows.reduce((n, r) => n + (Number(r.querySelector('td.graded').textContent) || 0), 0),
  );
  assert.equal(kept, 12, 'graded responses stored after a reload');
  assert.deepEqual(
    log.errors.filter((e) => !/favicon/.test(e)),
    [],
  );
  await context.close();
  console.log(
    `device loss after ${firstCpu} responses on WebGPU, ${12 - firstCpu} on the CPU; max |Δp(Yes)| vs CPU ${worst.toExponential(2)}; ` +
      `${((Date.now() - started) / 1000).toFixed(1)}s`,
  );
});

test('a software WebGPU adapter is not a GPU: the page says so, recommends the judge for the CPU engine, and "auto" runs on the CPU', async () => {
  const { context, page, log } = await newPage(browser, server.origin);
  await page.goto(`${server.origin}/?demo=0`);
  await page.waitForFunction(
    () => !/Checking WebGPU/.test(document.querySelector('#gpu-info')?.textContent || 'Checking WebGPU'),
  );
  const gpu = await page.locator('#gpu-info').innerText();
  assert.match(gpu, /swiftshader.*software adapter/i, gpu);
  // The CPU engine runs; the 1.5B is recommended where it keeps pace there (2 or more threads with
  // relaxed SIMD, as this isolated page has on 2 cores), else the 0.5B.
  const threaded = await page.evaluate(() => navigator.hardwareConcurrency >= 2);
  assert.equal(
    await page.locator('#model-select').inputValue(),
    threaded ? 'qwen2.5-coder-1.5b' : 'qwen2.5-coder-0.5b',
    'the judge recommended for this CPU engine',
  );
  assert.equal(
    await page.locator('#model-select option:checked').evaluate((o) => o.parentElement.label),
    'Recommended on this device',
  );
  const info = await loadJudge(page, 'smollm2-135m', 'auto');
  assert.match(info, /· on the CPU \(/, info);
  assert.match(info, /software, not a GPU/, info);
  assert.deepEqual(
    log.errors.filter((e) => !/favicon/.test(e)),
    [],
  );
  await context.close();
});
