// Shared plumbing of the browser tests: the app served by `rocketjudge serve` on a free loopback port,
// Debian's Chromium driven by playwright-core with WebGPU on SwiftShader, request logging for the
// privacy checks, screenshots into tests/browser/out/.

import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../../scripts/lib/chromium.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const OUT = join(ROOT, 'tests/browser/out');
export const FIX = join(ROOT, 'tests/fixtures/browser');
export const CLI = join(ROOT, 'target/release/rocketjudge');
/** Where `rocketjudge models fetch` keeps the packaged judges (scripts/test.sh fetches them first). */
export const MODELS = join(process.env.ROCKETJUDGE_CACHE || join(homedir(), '.cache/rocketjudge'), 'models');
mkdirSync(OUT, { recursive: true });

async function freePort() {
  return new Promise((res) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

/** Start `rocketjudge serve` on the repository root; resolves when it answers. */
export async function startServer() {
  const port = await freePort();
  return waitForServer(
    spawn(CLI, ['serve', '--dir', ROOT, '--port', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] }),
    port,
  );
}

/** Serve `dir` as a plain static host does: Python's http.server, no special headers. */
export async function startStaticServer(dir) {
  const port = await freePort();
  return waitForServer(
    spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', dir], {
      stdio: ['ignore', 'ignore', 'ignore'],
    }),
    port,
  );
}

async function waitForServer(proc, port) {
  const origin = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${origin}/index.html`)).ok) break;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { origin, stop: () => proc.kill() };
}

/** A packaged judge (models/manifest.json) as the worker's `loadJudge` takes it, served from `origin`. */
export function packagedSource(origin, model) {
  const m = JSON.parse(readFileSync(join(ROOT, 'models/manifest.json'), 'utf8')).models.find((x) => x.name === model);
  if (!m) throw new Error(`${model} is not in models/manifest.json`);
  return { key: m.name, urls: [`${origin}/models/${m.name}.gguf`], sha256: m.sha256, size: m.size };
}

export async function launch() {
  return launchChromium(['--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-webgpu-adapter=swiftshader']);
}

/** The window every test page starts with. */
export const VIEWPORT = { width: 1400, height: 1600 };

/** A fresh profile (empty IndexedDB/OPFS) with a log of every request and console error. */
export async function newPage(browser, origin, options = {}) {
  const context = await browser.newContext({
    viewport: VIEWPORT,
    acceptDownloads: true,
    ...options,
  });
  // Generous waits: CI shares 2 cores between Chromium, SwiftShader and the wasm engine, and a page
  // load or a parse can stall for seconds there. A real hang still fails, after two minutes.
  context.setDefaultTimeout(120_000);
  const page = await context.newPage();
  const log = { requests: [], errors: [] };
  context.on('request', (r) => log.requests.push(r.url()));
  page.on('pageerror', (e) => log.errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') log.errors.push(m.text());
  });
  page.on('worker', (w) =>
    w.on('console', (m) => {
      if (m.type() === 'error') log.errors.push(`worker: ${m.text()}`);
    }),
  );
  return {
    context,
    page,
    log,
    external: () =>
      log.requests.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:')),
  };
}

/** Two frames later: what the page drew on the last one is on screen (charts without animation). */
export const drawn = (page) =>
  page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

/**
 * Chart labels drawn over each other: every pair of texts a chart on the page draws (axis
 * labels, legends, names; those ECharts hides are not drawn) whose boxes overlap by more than a pixel
 * both ways. Run in the page (page.evaluate); returns "chart: text / text" strings.
 */
export async function overlappingLabels() {
  const echarts = await import('/web/vendor/echarts.esm.min.js');
  const out = [];
  for (const el of document.querySelectorAll('[_echarts_instance_]')) {
    const chart = echarts.getInstanceByDom(el);
    if (!chart || !el.checkVisibility()) continue;
    const texts = chart
      .getZr()
      .storage.getDisplayList(true)
      .filter((d) => d.type === 'tspan' && !d.invisible && String(d.style.text ?? '').trim())
      .map((d) => {
        // Its box, as tall as its font (a text span's own box is shorter), about the same middle.
        const r = d.getBoundingRect().clone();
        const size = Number(/(\d+(?:\.\d+)?)px/.exec(d.style.font || '')?.[1] ?? r.height);
        r.y += r.height / 2 - size / 2;
        r.height = size;
        if (d.transform) r.applyTransform(d.transform);
        return { r, text: String(d.style.text) };
      });
    for (let i = 0; i < texts.length; i += 1)
      for (let j = i + 1; j < texts.length; j += 1) {
        const [a, b] = [texts[i].r, texts[j].r];
        const ox = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
        const oy = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
        if (ox > 1 && oy > 1) out.push(`${el.id || el.parentElement?.id}: "${texts[i].text}" / "${texts[j].text}"`);
      }
  }
  return out;
}

export async function shot(page, name) {
  await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
}

/** The non-blank lines of a JSONL file, as written. */
export const jsonlLines = (path) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim());

/** The records of a JSONL file. */
export const jsonl = (path) => jsonlLines(path).map((l) => JSON.parse(l));

/** The parity fixture's response to `sessionId` and its query, the checklist cut to its first `items`. */
export function parityItem(sessionId, items) {
  const parity = join(ROOT, 'tests/fixtures/parity');
  const response = jsonl(join(parity, 'responses.jsonl')).find((r) => r.session_id === sessionId);
  const query = { ...jsonl(join(parity, 'queries.jsonl')).find((q) => q.session_id === sessionId) };
  query.checklist = query.checklist.slice(0, items);
  return { query, response };
}

/** Load the fixture benchmark and responses (of `dir`: FIX or a `fixtureSubset`) through the page's file inputs. */
export async function loadFixtures(page, models = ['gpt-4', 'gpt-3.5-turbo', 'llama-13b', 'alpaca-13b'], dir = FIX) {
  const queries = join(dir, 'queries.jsonl');
  const n = jsonlLines(queries).length;
  await page.setInputFiles('#bench-files', queries);
  await page.waitForFunction((k) => document.querySelector('#bench').innerText.includes(`${k} queries`), n);
  await page.setInputFiles(
    '#response-files',
    models.map((m) => join(dir, 'responses', `${m}.jsonl`)),
  );
  await page.waitForFunction(
    (n) => document.querySelectorAll('#responses table.models tbody tr').length === n,
    models.length,
  );
}

/** The fixture's two shorter queries, which the graded runs take: the third, the longest, adds minutes and no check. */
export const SHORT_QUERIES = ['101_turn1', '104_turn1'];

/**
 * The browser fixture cut to `sessions` (queries and every model's responses to them) in a folder of
 * its own, for `loadFixtures` and the native CLI: fewer prompts where a check needs no more.
 */
export function fixtureSubset(sessions) {
  const dir = mkdtempSync(join(tmpdir(), 'rj-fixture-'));
  mkdirSync(join(dir, 'responses'));
  const keep = (path) =>
    jsonlLines(path)
      .filter((l) => sessions.includes(JSON.parse(l).session_id))
      .map((l) => `${l}\n`)
      .join('');
  writeFileSync(join(dir, 'queries.jsonl'), keep(join(FIX, 'queries.jsonl')));
  for (const f of readdirSync(join(FIX, 'responses')))
    writeFileSync(join(dir, 'responses', f), keep(join(FIX, 'responses', f)));
  return dir;
}

export async function loadJudge(page, model, backend, precision = 'int8') {
  await page.selectOption('#model-select', model);
  await page.selectOption('#backend-select', backend);
  await page.selectOption('#precision-select', precision);
  // Load waits for a load under way (after a reload the page loads the kept judge by itself), and
  // is disabled until its own load ends.
  await page.click('#load-judge', { timeout: 600_000 });
  await page.waitForFunction(
    () => !document.querySelector('#load-judge')?.disabled && document.querySelector('.judge-info'),
    null,
    { timeout: 600_000, polling: 100 },
  );
  // What it says, and the engine's own description of its backend (on hover).
  const info = page.locator('.judge-info');
  return `${await info.innerText()} [${await info.getAttribute('title')}]`;
}

export async function gradeAll(page, timeout = 1_800_000) {
  await page.click('#start-grading');
  await page.waitForFunction(
    () => {
      const b = document.querySelector('#start-grading');
      return b && b.textContent === 'All graded';
    },
    null,
    { timeout, polling: 1000 },
  );
}

/** Click an export button and return the downloaded file's path. */
export async function exportFile(page, buttonId, name) {
  await page.click('#tab-export');
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click(`#${buttonId}`)]);
  const path = join(OUT, name);
  await dl.saveAs(path);
  return path;
}

/** The key of a response's grades in the maps `gradeNatively` makes and `compareGrades` reads: `model|session`. */
export const gradeKey = (j) => `${j.model_test}|${j.session_id}`;

/**
 * `rocketjudge grade` on the CPU (`precision` int8 or f32) of `queries` and `responses` (files or
 * folders): Map model|session -> norm_probability, with the output folder as `.dir`.
 */
export function gradeNatively(judge, queries, responses, precision = 'int8') {
  const dir = mkdtempSync(join(tmpdir(), 'rj-native-'));
  cli([
    'grade',
    '--model',
    judge,
    '--queries',
    queries,
    '--responses',
    ...responses,
    '--out',
    dir,
    '--backend',
    'cpu',
    '--precision',
    precision,
  ]);
  const grades = new Map();
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.jsonl'))) {
    for (const j of jsonl(join(dir, f))) {
      grades.set(gradeKey(j), j.norm_probability);
    }
  }
  grades.dir = dir;
  return grades;
}

/** `gradeNatively` on the fixture responses of `models`. */
export function nativeGrades(judge, models, precision = 'int8', dir = FIX) {
  return gradeNatively(
    judge,
    join(dir, 'queries.jsonl'),
    models.map((m) => join(dir, 'responses', `${m}.jsonl`)),
    precision,
  );
}

/**
 * How far two int8 gradings of one response may be apart, per item and on average: activations
 * rounded to 8 bits make p(Yes) move with the float summation order (the browser's kernels and the
 * native ones add in different orders), within the band llama.cpp itself spreads over for the judge
 * (`reference_variation` of its parity golden file). Two computations each within that band may be
 * up to twice it apart; on average, at most the band.
 */
export function int8Band(judge) {
  const g = JSON.parse(readFileSync(join(ROOT, 'tests/golden/engine', `parity-${judge}.json`), 'utf8'));
  return { item: 2 * g.reference_variation, mean: g.reference_variation };
}

const logit = (p) => Math.log(p) - Math.log1p(-p);

/**
 * WebGPU against the CPU: every item of `judgments` within 0.01 of `want` in p(Yes), and within 0.04
 * in the logit margin log(p/(1-p)) = logit_yes − logit_no (what 0.01 means at p = ½; it keeps the
 * check meaningful where a cut model's p(Yes) sits near 0 or 1). Returns the largest |Δp| and |Δmargin|.
 */
export function compareProbabilities(what, judgments, want) {
  let worst = 0;
  let worstMargin = 0;
  assert.equal(judgments.length, want.size, `${what}: every response graded once`);
  for (const j of judgments) {
    const w = want.get(gradeKey(j));
    assert.ok(w, `${what}: unexpected judgment ${gradeKey(j)}`);
    assert.equal(j.norm_probability.length, w.length, `${what} ${gradeKey(j)}: items`);
    j.norm_probability.forEach((p, i) => {
      assert.ok(typeof p === 'number' && Number.isFinite(p), `${what} ${gradeKey(j)} item ${i}: ${p}`);
      const d = Math.abs(p - w[i]);
      const dm = p > 0 && p < 1 && w[i] > 0 && w[i] < 1 ? Math.abs(logit(p) - logit(w[i])) : 0;
      worst = Math.max(worst, d);
      worstMargin = Math.max(worstMargin, dm);
      assert.ok(
        d <= 0.01 && dm <= 0.04,
        `${what} ${gradeKey(j)} item ${i}: WebGPU p(Yes) ${p} vs CPU ${w[i]} (margin Δ ${dm.toFixed(4)})`,
      );
    });
  }
  return { worst, worstMargin };
}

/** Compare judgments with `native` grades: every response once; returns {worst, mean} |Δp|. */
export function compareGrades(judgments, native) {
  if (judgments.length !== native.size)
    throw new Error(`${judgments.length} judgments for ${native.size} graded responses`);
  let worst = 0;
  let sum = 0;
  let n = 0;
  for (const j of judgments) {
    const want = native.get(gradeKey(j));
    if (!want) throw new Error(`unexpected judgment ${j.model_test} ${j.session_id}`);
    if (want.length !== j.norm_probability.length)
      throw new Error(`${j.model_test} ${j.session_id}: ${j.norm_probability.length} items, ${want.length} natively`);
    j.norm_probability.forEach((p, i) => {
      const d = Math.abs(p - want[i]);
      worst = Math.max(worst, d);
      sum += d;
      n += 1;
    });
  }
  return { worst, mean: sum / n };
}

export function cli(args) {
  return execFileSync(CLI, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export function writeOut(name, text) {
  const p = join(OUT, name);
  writeFileSync(p, text);
  return p;
}
