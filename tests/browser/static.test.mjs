// The app as a static site (issue #17): `rocketjudge site` builds the folder, Python's plain
// http.server serves it (no COOP/COEP or CSP headers, as GitHub Pages), and Chromium grades in it:
// the service worker makes the page cross-origin isolated (so the threaded engine runs) and puts the
// worker under the app's Content-Security-Policy (issue #28), the judge
// arrives in parts that the page joins and checks against the manifest's SHA-256, and the grades
// agree with the native CLI's.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import {
  ROOT,
  startStaticServer,
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
  jsonl,
} from './harness.mjs';

const JUDGE = 'smollm2-135m';
const MODELS = ['gpt-4', 'llama-13b'];
// 4 responses: the two models' answers to the fixture's two shorter queries.
const GRADED = fixtureSubset(SHORT_QUERIES);
const PART_MB = 40;
let site;
let server;
let browser;

before(async () => {
  site = join(mkdtempSync(join(tmpdir(), 'rj-site-')), 'site');
  cli(['site', '--out', site, '--models', JUDGE, '--part-mb', String(PART_MB)]);
  server = await startStaticServer(site);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  server?.stop();
});

/** Poll `fn` in the page until it returns true; the page may reload meanwhile (the service worker's). */
async function until(page, fn, what, ms = 60_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      if (await page.evaluate(fn)) return;
    } catch {
      /* navigating */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

test('the folder holds the app, the demo, and the judge in parts of at most --part-mb MB', () => {
  for (const f of [
    'index.html',
    'sw.js',
    'web/app.js',
    'web/isolate.js',
    'web/vendor/echarts.esm.min.js',
    'pkg/rocketjudge_wasm_bg.wasm',
    'benchmarks/mt-bench/queries.jsonl',
    'benchmarks/mt-bench/checklists.jsonl',
    'benchmarks/mt-bench/demo/gpt-4.jsonl',
    'models/manifest.json',
  ]) {
    assert.ok(statSync(join(site, f)).size > 0, `${f} is in the site`);
  }
  const manifest = JSON.parse(readFileSync(join(site, 'models/manifest.json'), 'utf8'));
  assert.deepEqual(
    manifest.models.map((m) => m.name),
    [JUDGE],
  );
  const m = manifest.models[0];
  assert.equal(m.source, undefined, 'the package-index parts are not published');
  const parts = m.web.parts;
  assert.equal(parts.length, Math.ceil(m.size / (PART_MB * 1e6)));
  assert.equal(
    parts.reduce((n, p) => n + p.size, 0),
    m.size,
  );
  for (const p of parts) assert.ok(statSync(join(site, p.url)).size === p.size && p.size <= PART_MB * 1e6, p.url);
  assert.deepEqual(
    readdirSync(join(site, 'models')).filter((f) => f.endsWith('.gguf')),
    [],
    'no whole model file',
  );
  // The policy is still in the page (a static host sends none).
  assert.match(
    readFileSync(join(site, 'index.html'), 'utf8'),
    /http-equiv="Content-Security-Policy" content="default-src 'none'/,
  );
});

test('served by a plain static server: cross-origin isolated by the service worker, grades like the native CLI', async () => {
  const native = nativeGrades(JUDGE, MODELS, 'int8', GRADED);
  const { context, page, log, external } = await newPage(browser, server.origin);
  await page.goto(`${server.origin}/?demo=0&debug=1`);
  await until(page, () => self.crossOriginIsolated === true, 'cross-origin isolation');
  await until(page, () => !!globalThis.__rocketjudgeEngine, 'the engine');
  const init = await page.evaluate(() => globalThis.__rocketjudgeEngine.request('init'));
  assert.equal(init.isolated, true, 'the engine worker is cross-origin isolated too');
  // The worker runs under the app's one policy (web/csp.js), which the service worker adds to its
  // script: a request to another origin is a connect-src violation there, not a plain network error.
  const worker = page.workers().find((w) => w.url().endsWith('/web/worker/main.js'));
  const violation = await worker.evaluate(
    () =>
      new Promise((resolve) => {
        self.addEventListener(
          'securitypolicyviolation',
          (e) => resolve({ directive: e.effectiveDirective, policy: e.originalPolicy }),
          { once: true },
        );
        fetch('https://blocked.example/model.gguf').catch((e) => setTimeout(() => resolve({ none: String(e) }), 1000));
      }),
  );
  const csp = {};
  new Function('self', readFileSync(join(ROOT, 'web/csp.js'), 'utf8'))(csp);
  assert.deepEqual(violation, {
    directive: 'connect-src',
    policy: `${csp.ROCKETJUDGE_CSP.policy}; ${csp.ROCKETJUDGE_CSP.headerOnly}`,
  });
  const probe = (u) => u.includes('blocked.example');
  log.requests = log.requests.filter((u) => !probe(u));
  log.errors = log.errors.filter((e) => !probe(e));
  await loadFixtures(page, MODELS, GRADED);
  const info = await loadJudge(page, JUDGE, 'cpu');
  assert.match(info, /cpu/);
  const parts = JSON.parse(readFileSync(join(site, 'models/manifest.json'), 'utf8')).models[0].web.parts;
  for (const p of parts)
    assert.ok(
      log.requests.some((u) => u.endsWith(p.url)),
      `part ${p.url} was downloaded`,
    );
  await gradeAll(page);
  await shot(page, 'static-site-graded');
  const judgments = jsonl(await exportFile(page, 'export-judgments', 'static-site-judgments.jsonl'));
  // The threaded int8 engine runs here too (isolated by the service worker), within the int8 band of the CLI's.
  assert.match(info, /cpu \(\d+ threads?, int8 wasm relaxed-simd (16-bit runs|32-bit dot)\)/);
  const band = int8Band(JUDGE);
  const { worst, mean } = compareGrades(judgments, native);
  assert.ok(
    worst <= band.item && mean <= band.mean,
    `max |Δp| ${worst} (≤ ${band.item}), mean ${mean} (≤ ${band.mean})`,
  );
  console.log(
    `static site, ${judgments.length} responses: max |Δp| vs native int8 = ${worst.toFixed(4)}, mean ${mean.toFixed(4)}`,
  );
  assert.deepEqual(external(), [], "no request left the page's origin");
  assert.deepEqual(
    log.errors.filter((e) => !/favicon/.test(e)),
    [],
  );
  await context.close();
});

test('without service workers the page is not isolated and still runs (one thread)', async () => {
  const { context, page, log } = await newPage(browser, server.origin, { serviceWorkers: 'block' });
  await page.goto(`${server.origin}/?debug=1`);
  // The bundled demo loads (benchmark and 3 models' answers), and the page stays as it is.
  await page.waitForFunction(() => document.querySelectorAll('#responses table.models tbody tr').length === 3);
  assert.equal(await page.evaluate(() => self.crossOriginIsolated), false);
  const init = await page.evaluate(() => globalThis.__rocketjudgeEngine.request('init'));
  assert.equal(init.isolated, false);
  assert.deepEqual(
    log.errors.filter((e) => !/favicon/.test(e)),
    [],
  );
  await context.close();
});
