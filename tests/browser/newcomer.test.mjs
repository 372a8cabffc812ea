// What a newcomer sees (issue #27, the parts done so far): no token ids in the judge's description;
// a Results card that is never blank during a run; the win-rate heatmap's cells in the colour of their
// own values; every table's headers where their numbers are; the responses table's counts in view on a
// laptop and on a phone; the pace in responses per minute from the first graded response (and the
// Grade button saying when it is paused); every upload control answering a bad file beside itself in
// plain words; the formats page's examples taken by the app; the benchmark page's link readable on its
// dark header. Real parts: `rocketjudge serve`, Chromium, the SmolLM2 judge on the CPU engine.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import {
  startServer,
  launch,
  newPage,
  shot,
  loadFixtures,
  loadJudge,
  overlappingLabels,
  drawn,
  VIEWPORT,
  ROOT,
} from './harness.mjs';

const JUDGE = 'smollm2-135m';
let server;
let browser;
let page;
let context;
let judgeInfo;

before(async () => {
  server = await startServer();
  browser = await launch();
  ({ context, page } = await newPage(browser, server.origin));
  await page.goto(`${server.origin}/?demo=0`);
  await loadFixtures(page);
  judgeInfo = await loadJudge(page, JUDGE, 'cpu');
});

after(async () => {
  await context?.close();
  await browser?.close();
  server?.stop();
});

test('the loaded judge is described in plain words: no internal token ids, no kernel names on screen', () => {
  // loadJudge gives what the card says, then [the engine's description, on hover].
  const shown = judgeInfo.slice(0, judgeInfo.lastIndexOf(' ['));
  assert.match(shown, /Backend: /);
  assert.doesNotMatch(shown, /tokens?: \d|wasm|relaxed-simd|int8|f32/, shown);
  assert.match(judgeInfo, /\[cpu \(\d threads?, int8 wasm/, 'the details stay on hover');
});

const label = () => page.locator('#grade-rate').innerText();

/**
 * Every count of graded responses on the page at one moment (read in one go): the progress line, the
 * live leaderboard's sentence and its per-model column, the responses table's column, and, where the
 * Results card shows a leaderboard, its header and its per-model column. Each is [graded, total] or a
 * sum; absent ones are null.
 */
const counts = () =>
  page.evaluate(() => {
    const of = (sel) => {
      const m = /(\d+) of (\d+) responses/.exec(document.querySelector(sel)?.textContent || '');
      return m ? [Number(m[1]), Number(m[2])] : null;
    };
    const sum = (sel) => {
      const cells = [...document.querySelectorAll(sel)];
      return cells.length ? cells.reduce((n, c) => n + Number(c.textContent), 0) : null;
    };
    const header = /(\d+) graded responses/.exec(
      document.querySelector('#results .tab-body:not(.staging)')?.innerText || '',
    );
    return {
      progress: of('#grade-rate'),
      standing: of('#standing-sentence'),
      standingRows: sum('#standing-table tbody tr td:nth-child(3)'),
      responsesTable: sum('#responses table.models td.graded'),
      results: header ? Number(header[1]) : null,
      resultsRows: sum('#results .tab-body:not(.staging) #leaderboard tbody tr td:nth-child(5)'),
    };
  });

/** The counts agree: every one present is the progress line's count of 12. */
function agree(c, when) {
  const [graded, total] = c.progress;
  assert.equal(total, 12, `${when}: ${JSON.stringify(c)}`);
  assert.deepEqual(c.standing, [graded, total], `${when}: the live leaderboard's sentence: ${JSON.stringify(c)}`);
  for (const k of ['standingRows', 'responsesTable', 'results', 'resultsRows'])
    if (c[k] != null) assert.equal(c[k], graded, `${when}: ${k}: ${JSON.stringify(c)}`);
  return graded;
}

test('the pace is in responses per minute from the first response, Paused says so, and Results is never blank during the run', async () => {
  assert.ok((await page.locator('#status .notice.info').count()) > 0, 'the judge-loaded message is up');
  await page.click('#start-grading');
  await page.waitForSelector('#grade-rate');
  assert.equal(
    await page.locator('#status .notice.info').count(),
    0,
    'messages about getting ready are gone once grading starts',
  );
  // The Results card is never blank: before the first grade it says where the live leaderboard is.
  assert.match(await page.locator('#results').innerText(), /live leaderboard is in step 4/);
  const first = await label();
  assert.doesNotMatch(first, /items\/s|ETA -|0\.00/, first);
  await page.waitForFunction(() => /per minute/.test(document.querySelector('#grade-rate')?.textContent || ''), null, {
    timeout: 600_000,
    polling: 100,
  });
  assert.match(await label(), /^\d+ of 12 responses · [\d.]+ per minute · about \d+m \d\ds left$/);
  // Every model graded at least once (query by query: 4 models per query) before the pause.
  await page.waitForFunction(() => Number(document.querySelector('#grade-progress')?.value) >= 5, null, {
    timeout: 600_000,
    polling: 100,
  });
  await page.click('#pause-grading');
  await page.waitForFunction(() => document.querySelector('#start-grading').textContent === 'Paused');
  assert.match(await label(), / · paused$/);
  // A pause draws the results so far; from then on the card is never without a leaderboard, through
  // the rest of the run and the redraw at its end: every change to the card is watched.
  await page.waitForSelector('#results #leaderboard tbody tr');
  // One count, paused: progress, live leaderboard, responses table and Results all say the same, once
  // the response in flight at the pause has landed (the counts stay put and no view is being drawn).
  let paused = await counts();
  for (let still = 0; still < 2; ) {
    await page.waitForTimeout(500);
    const c = await counts();
    const drawing = await page.locator('#results .staging').count();
    still = !drawing && JSON.stringify(c) === JSON.stringify(paused) ? still + 1 : 0;
    paused = c;
  }
  assert.ok(paused.results != null && paused.standingRows != null, JSON.stringify(paused));
  agree(paused, 'paused');
  // Query by query, a query's second to fourth responses reuse its part of the prompt: the card says
  // how many tokens that left unrun.
  const kept = /^(\d+) prompt tokens were not run again/.exec(await page.locator('#grade-kept').innerText());
  assert.ok(kept && Number(kept[1]) > 0, `the kept tokens after ${paused.progress[0]} responses: ${kept}`);
  await page.evaluate(() => {
    window.blankResults = 0;
    new MutationObserver(() => {
      if (!document.querySelector('#results .tab-body:not(.staging) table tbody tr')) window.blankResults += 1;
    }).observe(document.querySelector('#results'), { childList: true, subtree: true, attributes: true });
  });
  await page.click('#pause-grading');
  let samples = 0;
  while ((await page.locator('#start-grading').innerText()) !== 'All graded') {
    samples += 1;
    // While grading: the Grade card and the responses table are drawn together, from one count.
    const c = await counts();
    if (c.progress && c.standing) agree({ ...c, results: null, resultsRows: null }, `sample ${samples}`);
    await page.waitForTimeout(500);
    assert.ok(samples < 3600, 'the run did not end');
  }
  assert.ok(samples >= 2, `${samples} samples during the run`);
  // The end-of-run redraw: done when no view is being drawn out of sight and one view is on screen.
  await page.waitForTimeout(1000);
  await page.waitForFunction(
    () =>
      !document.querySelector('#results .staging') && document.querySelectorAll('#results > .tab-body').length === 1,
  );
  assert.equal(await page.evaluate(() => window.blankResults), 0, 'the Results card went blank');
  assert.ok((await page.locator('#results #leaderboard tbody tr').count()) > 0);
  // The end-of-run message can be dismissed.
  const done = page.locator('#status .notice', { hasText: 'Graded' });
  await done.waitFor();
  await done.locator('button.dismiss').click();
  assert.equal(await page.locator('#status .notice', { hasText: 'Graded' }).count(), 0);
  assert.match(await label(), /^12 of 12 responses · [\d.]+ per minute$/);
  assert.equal(agree(await counts(), 'the end'), 12);
});

test("every table's headers are aligned with their numbers, in every result view", async () => {
  const tabs = await page.$$eval('#results [role=tab]', (bs) => bs.map((b) => b.id));
  let tables = 0;
  for (const id of [...tabs, null]) {
    if (id) {
      await page.click(`#${id}`);
      await page.waitForTimeout(300);
    }
    const where = id || 'the page';
    const { bad, count } = await page.$$eval('table', (all) => {
      const ts = all.filter((t) => t.offsetParent !== null && t.tHead && t.tBodies[0]?.rows[0]);
      const bad = ts.flatMap((t) =>
        [...t.tHead.rows[0].cells].flatMap((th, i) => {
          const td = t.tBodies[0].rows[0].cells[i];
          const [a, b] = [th, td].map((c) => c && getComputedStyle(c).textAlign);
          return !td || a === b ? [] : [`${t.id || t.className}: "${th.textContent}" is ${a}, its cells ${b}`];
        }),
      );
      return { bad, count: ts.length };
    });
    tables += count;
    assert.deepEqual(bad, [], where);
  }
  assert.ok(tables >= 5, `only ${tables} tables were checked`);
});

test('the win-rate heatmap colours each cell by its win rate', async () => {
  await page.click('#tab-heatmap');
  await page.waitForSelector('#heatmap canvas');
  await page.waitForTimeout(1000);
  const cells = await page.evaluate(async () => {
    const echarts = await import('/web/vendor/echarts.esm.min.js');
    const el = document.querySelector('#heatmap');
    const chart = echarts.getInstanceByDom(el);
    const data = chart.getOption().series[0].data;
    // ECharts draws on stacked canvases (layers); a cell is the opaque pixel of one of them.
    const layers = [...el.querySelectorAll('canvas')].map((c) => ({
      ctx: c.getContext('2d'),
      scale: c.width / c.getBoundingClientRect().width,
    }));
    const [x0, y0] = chart.convertToPixel({ seriesIndex: 0 }, [0, 0]);
    const [x1, y1] = chart.convertToPixel({ seriesIndex: 0 }, [1, 1]);
    return data.map(([col, row, winRate]) => {
      const [x, y] = chart.convertToPixel({ seriesIndex: 0 }, [col, row]);
      // A third of the way to the cell's corner: off the printed value.
      const [px, py] = [x + (x1 - x0) / 3, y + (y1 - y0) / 3];
      const opaque = layers
        .map((l) => l.ctx.getImageData(Math.round(px * l.scale), Math.round(py * l.scale), 1, 1).data)
        .find((d) => d[3] === 255);
      return { winRate, r: opaque?.[0], g: opaque?.[1], b: opaque?.[2] };
    });
  });
  assert.ok(cells.length >= 6, `${cells.length} cells`);
  assert.ok(
    cells.every((c) => c.r !== undefined),
    'every cell is drawn',
  );
  const blueness = (c) => c.b - c.r;
  for (const c of cells) {
    if (c.winRate < 0.45)
      assert.ok(blueness(c) < 0, `win rate ${c.winRate} drawn as rgb(${c.r}, ${c.g}, ${c.b}), not red`);
    if (c.winRate > 0.55)
      assert.ok(blueness(c) > 0, `win rate ${c.winRate} drawn as rgb(${c.r}, ${c.g}, ${c.b}), not blue`);
  }
  const sorted = [...cells].sort((a, b) => a.winRate - b.winRate);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i].winRate > sorted[i - 1].winRate + 1e-9) {
      assert.ok(
        blueness(sorted[i]) > blueness(sorted[i - 1]),
        `${sorted[i].winRate} is not bluer than ${sorted[i - 1].winRate}`,
      );
    }
  }
  await shot(page, 'newcomer-heatmap');
});

test('numbers do not overclaim: the leaderboard says how many neighbours the judge separates, a 4-model comparison shows no interval', async () => {
  await page.click('#tab-leaderboard');
  await page.waitForSelector('#separation');
  const sep = await page.locator('#separation').innerText();
  // 3 queries: fewer than the 10 shared queries a separation needs, so none can be separated.
  assert.match(
    sep,
    /^The judge separates none of the 3 neighbouring pairs \(ordered alike in at least 95% of bootstrap resamples of the queries, on at least 10 shared queries\)/,
  );
  await page.click('#tab-reference');
  await page.click('#reference-bundled');
  await page.waitForSelector('#reference-table');
  const table = await page.locator('#reference-table').innerText();
  const n = Number(/models compared\s+(\d+):/.exec(table)?.[1]);
  assert.ok(n >= 2 && n < 5, table);
  assert.doesNotMatch(table, /\[[-\d.]+, [-\d.]+\]/, 'an interval over so few models is shown');
  assert.match(table, new RegExp(`Spearman ρ\\s+-?[\\d.]+ \\(no interval: ${n} models are too few to resample\\)`));
});

test('the responses table keeps its counts and remove buttons in view, laptop and phone', async () => {
  for (const [width, height] of [
    [1366, 900],
    [390, 844],
  ]) {
    await page.setViewportSize({ width, height });
    await page.waitForTimeout(300);
    const fit = await page.$eval('#responses table.models', (t) => ({
      table: t.scrollWidth,
      box: t.parentElement.clientWidth,
      graded: t.tHead.rows[0].cells[2].textContent,
    }));
    assert.equal(fit.graded, 'graded');
    assert.ok(fit.table <= fit.box, `${width}px: the table is ${fit.table}px wide in a ${fit.box}px box`);
    await shot(page, `newcomer-responses-${width}`);
  }
  await page.setViewportSize(VIEWPORT);
});

// Deliverable 5: every view, on a laptop and on a phone, photographed into docs/screens/ (look at them
// after a change), checked by axe-core (WCAG 2.1 A/AA and best practice; no serious or critical
// violation), walked with the Tab key (every visible control receives focus) and measured (no view
// wider than the window).
const AXE = readFileSync(join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
const SCREENS = join(ROOT, 'docs/screens');
const SIZES = [
  ['laptop', 1366, 900],
  ['phone', 390, 844],
];

/** The serious and critical axe-core violations on page `p` (axe injected where it is not yet). */
async function axeSerious(p, where) {
  if (!(await p.evaluate(() => typeof window.axe === 'object'))) await p.evaluate(AXE);
  const r = await p.evaluate(() =>
    window.axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }),
  );
  return r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${where}: ${v.id} (${v.help}) at ${v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(' '))
          .join(', ')}`,
    );
}

/** The page's width, the window's, and the innermost element that sticks out furthest (for the message). */
function widest() {
  const client = document.documentElement.clientWidth;
  const out = [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > client + 1);
  const leaves = out.filter((e) => ![...e.children].some((c) => out.includes(c)));
  const e = leaves.sort((x, y) => y.getBoundingClientRect().right - x.getBoundingClientRect().right)[0];
  const what = e
    ? `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.className ? `.${e.className}` : ''} in ${e.parentElement?.closest('[id]')?.id || 'the page'}: "${(e.textContent || '').trim().slice(0, 40)}"`
    : '';
  return [document.documentElement.scrollWidth, client, what];
}

/** Press Tab until every visible, enabled control has had focus; return those that never did. */
/**
 * Words broken inside across two lines (in the page): every word of 4 or more characters in a table
 * cell, a header, a button, a label or a badge that spans more than one line box. Model names (file
 * names may be one long word) and quoted texts (pre) are left out. Returns "word (in tag)" strings.
 */
function brokenWords() {
  const out = [];
  const boxes = document.querySelectorAll('td:not(.model), th, button, label, .badge');
  for (const box of boxes) {
    if (!box.getClientRects().length || box.closest('pre, td.model')) continue;
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      if (t.parentElement.closest('pre, td.model, .sr-only')) continue;
      // A word: letters and digits between spaces, hyphens and slashes (a line may break after those).
      for (const m of t.data.matchAll(/[^\s\-–—/]{4,}/g)) {
        const r = document.createRange();
        r.setStart(t, m.index);
        r.setEnd(t, m.index + m[0].length);
        const lines = new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top)));
        if (lines.size > 1) out.push(`${m[0]} (in ${box.tagName.toLowerCase()})`);
      }
    }
  }
  return [...new Set(out)];
}

/**
 * Menus that cut an option's words off: a select narrower than the same select at its natural width
 * (as wide as its widest option, with its padding and arrow), and the options that do not fit. Menus
 * whose options quote the benchmark (a query's or an item's opening words, class `quotes`) are left
 * out: their opening words are what tells one from another, and the open menu shows each whole.
 * Returns "select#id: option" strings.
 */
function cutMenus() {
  const ctx = document.createElement('canvas').getContext('2d');
  const out = [];
  for (const s of document.querySelectorAll('select:not(.quotes)')) {
    if (!s.checkVisibility({ visibilityProperty: true })) continue;
    const natural = s.cloneNode(true);
    natural.removeAttribute('id');
    Object.assign(natural.style, {
      width: 'auto',
      minWidth: '0',
      maxWidth: 'none',
      position: 'absolute',
      visibility: 'hidden',
    });
    s.parentElement.append(natural);
    const spare = natural.clientWidth - s.clientWidth;
    const cs = getComputedStyle(s);
    ctx.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
    const widths = [...s.options].map((o) => ctx.measureText(o.text).width);
    // The widest option just fits at the natural width: any option within `spare` of it does not here.
    const room = Math.max(...widths) - spare;
    natural.remove();
    if (spare <= 1) continue;
    for (const [i, o] of [...s.options].entries()) if (widths[i] > room + 1) out.push(`select#${s.id}: "${o.text}"`);
  }
  return out;
}

/** Charts on the page drawn with an animation (their ids). */
async function animatedCharts() {
  const echarts = await import('/web/vendor/echarts.esm.min.js');
  return [...document.querySelectorAll('[_echarts_instance_]')]
    .filter((el) => echarts.getInstanceByDom(el)?.getOption().animation !== false)
    .map((el) => `chart #${el.id}`);
}

async function unreachableByTab() {
  const n = await page.evaluate(() => {
    const controls = 'a[href], button, input, select, textarea, summary';
    const all = [...document.querySelectorAll(`${controls}, [tabindex]`)];
    // Shown: laid out and visible (checkVisibility also leaves out a closed <details>' content).
    // A visible control taken out of the Tab order (tabindex=-1) counts, and fails.
    const shown = all.filter(
      (e) =>
        (e.matches(controls) || e.tabIndex >= 0) &&
        !e.disabled &&
        !e.closest('[inert]') &&
        e.checkVisibility({ visibilityProperty: true, opacityProperty: true }),
    );
    document.querySelectorAll('[data-kbd]').forEach((e) => delete e.dataset.kbd);
    shown.forEach((e, i) => {
      e.dataset.kbd = String(i);
    });
    document.activeElement?.blur();
    return shown.length;
  });
  const seen = new Set();
  for (let i = 0; i < 2 * n + 10 && seen.size < n; i += 1) {
    await page.keyboard.press('Tab');
    const k = await page.evaluate(() => document.activeElement?.dataset.kbd);
    if (k != null) seen.add(k);
  }
  return page.$$eval(
    '[data-kbd]',
    (es, got) =>
      es
        .filter((e) => !got.includes(e.dataset.kbd))
        .map(
          (e) =>
            `${e.tagName.toLowerCase()}#${e.id || ''}.${e.className || ''} "${(e.textContent || e.getAttribute('aria-label') || '').trim().slice(0, 40)}"`,
        ),
    [...seen],
  );
}

test('every view on a laptop and a phone: photographed, no sideways scrolling, no word broken inside, no menu cut off, no chart labels drawn over each other, no serious accessibility violation, every control reachable by Tab', async () => {
  mkdirSync(SCREENS, { recursive: true });
  const tabs = await page.$$eval('#results [role=tab]', (bs) => bs.map((b) => b.id));
  const problems = [];
  // As a visitor whose system asks for less motion: the charts are drawn without their entry
  // animation, so each view is photographed as soon as it is drawn (two frames after).
  await page.emulateMedia({ reducedMotion: 'reduce' });
  for (const [size, width, height] of SIZES) {
    await page.setViewportSize({ width, height });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(SCREENS, `${size}-app.png`) });
    problems.push(...(await axeSerious(page, `${size}, the page`)));
    problems.push(...(await page.evaluate(brokenWords)).map((w) => `${size}, the page: a word broken inside: ${w}`));
    problems.push(...(await page.evaluate(cutMenus)).map((w) => `${size}, the page: a menu cuts off ${w}`));
    for (const id of tabs) {
      await page.click(`#${id}`);
      // Drawn: the new tab strip marks it, and no view is being drawn out of sight.
      await page.waitForSelector(`#${id}[aria-selected=true]`);
      await page.waitForFunction(() => !document.querySelector('#results .staging'));
      await drawn(page);
      problems.push(
        ...(await page.evaluate(animatedCharts)).map((c) => `${size}, ${id}: ${c} animates for less motion`),
      );
      await page
        .locator('#results-card')
        .screenshot({ path: join(SCREENS, `${size}-${id.replace(/^tab-/, 'results-')}.png`) });
      problems.push(...(await axeSerious(page, `${size}, ${id}`)));
      const [scroll, client, what] = await page.evaluate(widest);
      if (scroll > client)
        problems.push(`${size}, ${id}: the page is ${scroll}px wide in a ${client}px window (${what})`);
      problems.push(...(await page.evaluate(brokenWords)).map((w) => `${size}, ${id}: a word broken inside: ${w}`));
      problems.push(...(await page.evaluate(cutMenus)).map((w) => `${size}, ${id}: a menu cuts off ${w}`));
      problems.push(...(await page.evaluate(overlappingLabels)).map((w) => `${size}, ${id}: labels overlap: ${w}`));
      if (size === 'laptop')
        problems.push(...(await unreachableByTab()).map((c) => `${id}: never reached by Tab: ${c}`));
    }
  }
  const other = await context.newPage();
  for (const [size, width, height] of SIZES) {
    await other.setViewportSize({ width, height });
    for (const [name, path] of [
      ['formats', 'web/formats.html'],
      ['bench', 'bench.html'],
    ]) {
      await other.goto(`${server.origin}/${path}`);
      await other.waitForTimeout(500);
      await other.screenshot({ path: join(SCREENS, `${size}-${name}.png`) });
      const [scroll, client, what] = await other.evaluate(widest);
      if (scroll > client)
        problems.push(`${size}, ${name}: the page is ${scroll}px wide in a ${client}px window (${what})`);
      problems.push(...(await axeSerious(other, `${size}, ${name}`)));
    }
  }
  await other.close();
  await page.setViewportSize(VIEWPORT);
  await page.emulateMedia({ reducedMotion: null });
  assert.deepEqual(problems, []);
});

test('every upload control answers an empty file, a JSON document, random bytes and a mismatched file beside itself, in plain words', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rj-uploads-'));
  const file = (name, bytes) => {
    writeFileSync(join(dir, name), bytes);
    return join(dir, name);
  };
  const empty = file('empty.jsonl', '');
  const pretty = file(
    'pretty.json',
    JSON.stringify({ session_id: '101_turn1', generator: 'm', output: ['an answer'] }, null, 2),
  );
  const random = file('random.jsonl', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256)));
  const mismatched = file(
    'mismatched.jsonl',
    ['nope_1', 'nope_2'].map((id) => JSON.stringify({ session_id: id, generator: 'm', output: ['x'] })).join('\n'),
  );
  const plain = (m) => !/`|EOF while parsing|field \?/.test(m);
  // [control, where its message must appear (inside the control's own card or view), tab to open first]
  const controls = /** @type {const} */ ([
    ['#bench-files', '#bench', null],
    ['#response-files', '#responses', null],
    ['#labels-file', '#results', '#tab-calibrate'],
    ['#reference-file', '#results', '#tab-reference'],
    ['#strong-file', '#results', '#tab-strong'],
  ]);
  const expect = [
    [empty, () => /empty\.jsonl is empty: expected /],
    [random, () => /random\.jsonl is not a text file/],
    [
      pretty,
      () =>
        /pretty\.json is one JSON document over \d+ lines, not JSON Lines: expected each JSON object on a line of its own/,
    ],
  ];
  for (const [id, box, tab] of controls) {
    for (const [path, pattern] of expect) {
      if (tab) await page.click(tab);
      await page.setInputFiles(id, path);
      const want = pattern(id);
      await page.waitForFunction(
        ([b, re]) =>
          [...document.querySelectorAll(`${b} .notice.error`)].some((n) => new RegExp(re).test(n.textContent)),
        [box, want.source],
      );
      const msgs = await page.locator(`${box} .notice.error`).allInnerTexts();
      assert.ok(msgs.every(plain), `${id}: ${msgs}`);
    }
  }
  // A responses file that answers none of the benchmark's queries is refused, not added as a model.
  const before = await page.locator('#responses table.models tbody tr').count();
  await page.setInputFiles('#response-files', mismatched);
  await page.waitForFunction(() =>
    /None of the 2 responses in mismatched\.jsonl answers a query of the benchmark: its session ids \("nope_1", "nope_2"\) are not the benchmark's/.test(
      document.querySelector('#responses-errors')?.textContent || '',
    ),
  );
  assert.equal(await page.locator('#responses table.models tbody tr').count(), before);
  // A responses file given as benchmark is named as neither queries nor checklists.
  await page.setInputFiles('#bench-files', mismatched);
  await page.waitForFunction(() =>
    /mismatched\.jsonl holds neither queries/.test(document.querySelector('#bench-errors')?.textContent || ''),
  );
  assert.match(await page.locator('#bench').innerText(), /3 queries/, 'the benchmark in use is kept');
  await shot(page, 'newcomer-upload-errors');
});

test('problems that are not about a file stand beside their control too, in plain words', async () => {
  const topErrors = () => page.locator('#status .notice.error').count();
  const before = await topErrors();
  // The judge card: Load with "a file" chosen and none given.
  const choice = await page.locator('#model-select').inputValue();
  await page.selectOption('#model-select', '__file');
  await page.click('#load-judge');
  await page.waitForSelector('#judge-error .notice');
  assert.match(await page.locator('#judge-error').innerText(), /^Choose a \.gguf file first\.$/);
  await page.selectOption('#model-select', choice);
  // Calibrate: a score outside 1–10, and a preference between a model and itself.
  await page.click('#tab-calibrate');
  const score = page.locator('[id="label-gpt-4"]');
  await score.fill('11');
  await score.dispatchEvent('change');
  await page.waitForSelector('#label-problem .notice');
  assert.match(
    await page.locator('#label-problem').innerText(),
    /^gpt-4: a score label is a number from 1 to 10, not 11\.$/,
  );
  await page.selectOption('#pref-model-b', await page.locator('#pref-model-a').inputValue());
  await page.click('#pref-a');
  assert.match(await page.locator('#label-problem').innerText(), /two different models/);
  // The checklist editor: a pasted reply with no numbered questions.
  await page.click('#tab-inspector');
  await page.click('#edit-checklist');
  await page.click('summary:has-text("Create the checklist with a strong model elsewhere")');
  await page.fill('#checklist-reply', 'Sure! Here are some thoughts about the response.');
  await page.click('#use-reply');
  await page.waitForSelector('#checklist-reply-error .notice');
  assert.match(await page.locator('#checklist-reply-error').innerText(), /No numbered questions found in the reply/);
  assert.equal(await topErrors(), before, 'nothing went to the top of the page');
  await page.click('#edit-checklist');
  await page.click('#tab-leaderboard');
});

test('checklist edits outlive a redraw, a tab switch and closing the editor, until saved or discarded', async () => {
  // The editor's items once it shows `n` of them (the panel draws asynchronously), else as it is.
  const items = async (n) => {
    await page
      .waitForFunction((k) => document.querySelectorAll('ol.editor input').length === k, n, { timeout: 10_000 })
      .catch(() => {});
    return page.$$eval('ol.editor input', (inputs) => inputs.map((i) => i.value));
  };
  await page.click('#tab-inspector');
  await page.click('#edit-checklist');
  await page.waitForSelector('ol.editor input');
  const saved = await items(await page.locator('ol.editor input').count());
  assert.ok(saved.length >= 2, `the inspector's checklist has ${saved.length} items`);
  await page.fill('ol.editor li:first-child input', 'Is the first item reworded?');
  await page.click('.edit-box button:has-text("Add item")');
  await page.fill('ol.editor li:last-child input', 'Is this item new?');
  await page.click('summary:has-text("Create the checklist with a strong model elsewhere")');
  await page.fill('#checklist-reply', '1. Half of a pasted reply');
  const edited = ['Is the first item reworded?', ...saved.slice(1), 'Is this item new?'];
  // Another tab and back draws the panel (and the editor) again; so does closing and opening it.
  await page.click('#tab-leaderboard');
  await page.click('#tab-inspector');
  assert.deepEqual(await items(edited.length), edited);
  await page.click('#edit-checklist');
  await page.click('#edit-checklist');
  assert.deepEqual(await items(edited.length), edited);
  assert.equal(await page.locator('#checklist-reply').inputValue(), '1. Half of a pasted reply');
  await page.click('#discard-checklist');
  assert.deepEqual(await items(saved.length), saved);
  assert.equal(await page.locator('#checklist-reply').inputValue(), '');
  await page.click('#edit-checklist');
  await page.click('#tab-leaderboard');
});

test("GPT-4's bundled judgments on answers it did not judge: said so, with the answers it judged one click away", async () => {
  await page.click('#tab-strong');
  await page.click('#strong-bundled');
  await page.waitForSelector('#strong-needs');
  assert.match(
    await page.locator('#strong-needs').innerText(),
    /GPT-4 judged the answers of 5 other models, not the ones graded here/,
  );
  const before = await page.locator('#responses table.models tbody tr').count();
  await page.click('#strong-add-answers');
  await page.waitForFunction(
    (n) => document.querySelectorAll('#responses table.models tbody tr').length === n + 5,
    before,
  );
  await page.click('#tab-strong');
  await page.click('#strong-bundled');
  await page.waitForFunction(() =>
    /loaded but not graded yet: grade them/.test(document.querySelector('#strong-needs')?.textContent || ''),
  );
});

test('the formats page is served as a page, and each of its examples is taken by its upload control', async () => {
  const { context: c2, page: p2, log, external } = await newPage(browser, server.origin);
  await p2.goto(`${server.origin}/?demo=0`);
  const href = await p2.getAttribute('#formats-link', 'href');
  await p2.goto(new URL(href, `${server.origin}/`).href);
  assert.equal(await p2.title(), 'rocketjudge — file formats');
  await shot(p2, 'formats-page');
  const links = await p2.$$eval('a[download]', (as) => as.map((a) => a.href));
  assert.equal(links.length, 9);
  const dir = mkdtempSync(join(tmpdir(), 'rj-formats-'));
  const saved = {};
  for (const url of links) {
    const [dl] = await Promise.all([
      p2.waitForEvent('download'),
      p2.click(`a[href="${new URL(url).pathname.replace(/^\/web\//, '')}"]`),
    ]);
    saved[dl.suggestedFilename()] = join(dir, dl.suggestedFilename());
    await dl.saveAs(saved[dl.suggestedFilename()]);
  }
  // Taken by the app: queries + checklists as the benchmark, the responses, labels, ranking and verdicts.
  await p2.goto(`${server.origin}/?demo=0&debug=1`);
  await p2.setInputFiles('#bench-files', [saved['queries.jsonl'], saved['checklists.jsonl']]);
  await p2.waitForFunction(() => /2 queries, 2 with checklists/.test(document.querySelector('#bench').innerText));
  await p2.setInputFiles('#response-files', [saved['responses.jsonl'], saved['model_answer.jsonl']]);
  await p2.waitForFunction(() => document.querySelectorAll('#responses table.models tbody tr').length === 2);
  const rows = await p2.$$eval('#responses table.models tbody tr', (rs) =>
    rs.map((r) => [
      r.querySelector('.name').textContent,
      r.querySelector('.hint').textContent,
      r.querySelector('td.count').textContent,
    ]),
  );
  assert.deepEqual(rows, [
    ['my-model', 'responses.jsonl · rocketeval', '2'],
    ['my-model', 'model_answer.jsonl · fastchat', '2'],
  ]);
  // AlpacaEval outputs answer an AlpacaEval benchmark (ids are the instruction's hash): here they are refused by name.
  await p2.setInputFiles('#response-files', saved['model_outputs.json']);
  await p2.waitForFunction(() =>
    /None of the 2 responses in model_outputs\.json answers a query/.test(
      document.querySelector('#responses-errors')?.textContent || '',
    ),
  );
  for (const [name, parse] of [
    ['labels.jsonl', 'parseLabels'],
    ['ranking.json', 'parseRanking'],
  ]) {
    const n = await p2.evaluate(
      async ([u, fn]) =>
        (
          await globalThis.__rocketjudgeEngine.request('core', {
            fn,
            args: [u.split('/').pop(), new Uint8Array(await (await fetch(u)).arrayBuffer())],
          })
        ).length,
      [`web/formats/${name}`, parse],
    );
    assert.ok(n >= 2, `${name}: ${n} records`);
  }
  // The verdict files are read by the strong-judge comparison (which then finds no judgments to compare):
  // no format error, where a broken CSV gets one.
  const strongKind = (name, bytes) =>
    p2.evaluate(
      ([n, b]) =>
        globalThis.__rocketjudgeEngine
          .request('core', { fn: 'strongAgreement', args: [[], n, new Uint8Array(b), null] })
          .then(
            () => 'ok',
            (e) => e.kind,
          ),
      [name, bytes],
    );
  for (const name of ['gpt-4_single.jsonl', 'scores.csv']) {
    assert.notEqual(await strongKind(name, [...readFileSync(saved[name])]), 'format', name);
  }
  assert.equal(await strongKind('broken.csv', [...Buffer.from('session,model\nq1,m\n')]), 'format');
  assert.deepEqual(external(), []);
  assert.deepEqual(log.errors, []);
  await c2.close();
});

test("the benchmark page's link reads on its dark header", async () => {
  await page.goto(`${server.origin}/bench.html`);
  await page.waitForSelector('#bench-prefix');
  const c = await page.evaluate(() => {
    const rgb = (s) => s.match(/\d+/g).slice(0, 3).map(Number);
    const lum = ([r, g, b]) =>
      [r, g, b]
        .map((v) => {
          v /= 255;
          return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
        })
        .reduce((a, v, i) => a + v * [0.2126, 0.7152, 0.0722][i], 0);
    const fg = lum(rgb(getComputedStyle(document.querySelector('.tagline a')).color));
    const bg = lum(rgb(getComputedStyle(document.querySelector('.top')).backgroundColor));
    const input = getComputedStyle(document.querySelector('#bench-prefix'));
    return { contrast: (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05), radius: input.borderTopLeftRadius };
  });
  assert.ok(c.contrast >= 4.5, `contrast ${c.contrast.toFixed(2)}:1`);
  assert.equal(c.radius, '6px', 'number inputs styled like the others');
});
