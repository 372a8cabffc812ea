// The tab's model cache trusts only bytes it verified (issue #28). A URL model takes `#sha256=` as
// the CLI does and is checked; a cached model is used only when its marker records the hash of exactly
// the stored bytes and that hash is the one expected; a download that fails part way leaves no
// marker; the Cache API fallback stores nothing under a model's key before the bytes are verified.
// A model given without a hash is kept only when its GGUF header says it is whole, and a body shorter
// than the size its source names is never kept (issue #62).
// Real parts: `rocketjudge serve`, Chromium, the SmolLM2 judge's real bytes, the wasm SHA-256.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MODELS, ROOT, startServer, launch, newPage } from './harness.mjs';

const JUDGE = 'smollm2-135m';
const SHA = createHash('sha256')
  .update(readFileSync(join(MODELS, `${JUDGE}.gguf`)))
  .digest('hex');
const OTHER = 'ab'.repeat(32);
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

async function enginePage() {
  const p = await newPage(browser, server.origin);
  await p.page.goto(`${server.origin}/?demo=0&debug=1`);
  await p.page.waitForFunction(() => globalThis.__rocketjudgeEngine);
  await p.page.evaluate(() => globalThis.__rocketjudgeEngine.request('init'));
  return p;
}

const request = (page, name, args) =>
  page.evaluate(
    ([n, a]) =>
      globalThis.__rocketjudgeEngine.request(n, a).then(
        (v) => ({ ok: v }),
        (e) => ({ error: e.message }),
      ),
    [name, args],
  );
const cached = async (page) => (await request(page, 'cachedModels')).ok;

test('a URL model is checked against its #sha256=, reused only while the stored hash is the expected one', async () => {
  const { context, page, log } = await enginePage();
  const url = `${server.origin}/models/${JUDGE}.gguf`;
  const downloads = () => log.requests.filter((u) => u === url).length;
  // The page splits the hash off the URL as the CLI does.
  const split = await page.evaluate(
    async (u) => (await import('/web/lib/manifest.js')).splitHash(`${u}#sha256=${'AB'.repeat(32)}`),
    url,
  );
  assert.deepEqual(split, { url, sha256: OTHER });

  const wrong = await request(page, 'loadJudge', {
    source: { key: 'url-judge', urls: [url], sha256: OTHER },
    backend: 'cpu',
  });
  assert.match(wrong.error || '', /SHA-256 .* does not match the expected abababab/);
  assert.deepEqual(await cached(page), [], 'nothing kept of a download that failed its check');

  const good = await request(page, 'loadJudge', {
    source: { key: 'url-judge', urls: [url], sha256: SHA },
    backend: 'cpu',
  });
  assert.ok(good.ok, good.error);
  assert.deepEqual(
    (await cached(page)).map((m) => [m.key, m.sha256, m.store]),
    [['url-judge', SHA, 'opfs']],
  );
  const before = downloads();
  assert.ok(
    (await request(page, 'loadJudge', { source: { key: 'url-judge', urls: [url], sha256: SHA }, backend: 'cpu' })).ok,
  );
  assert.equal(downloads(), before, 'the verified copy is used without a download');

  // Another expected hash for the same key: the cached copy is not used; the download is checked (and fails).
  const changed = await request(page, 'loadJudge', {
    source: { key: 'url-judge', urls: [url], sha256: OTHER },
    backend: 'cpu',
  });
  assert.equal(downloads(), before + 1, 'a cached copy with another hash was used');
  assert.match(changed.error || '', /does not match/);

  // A download that fails part way (its second part is missing) leaves no marker for the key.
  assert.ok(
    (await request(page, 'loadJudge', { source: { key: 'url-judge', urls: [url], sha256: SHA }, backend: 'cpu' })).ok,
  );
  const cut = await request(page, 'loadJudge', {
    source: { key: 'url-judge', urls: [url, `${server.origin}/models/${JUDGE}.gguf.part001`], sha256: OTHER },
    backend: 'cpu',
  });
  assert.match(cut.error || '', /cannot download part 2 of 2/);
  assert.deepEqual(await cached(page), [], 'a marker outlived the bytes it described');
  await context.close();
});

test('the page takes a typed URL with #sha256= and refuses a model whose bytes differ', async () => {
  const { context, page, external } = await enginePage();
  const url = `${server.origin}/models/${JUDGE}.gguf`;
  await page.selectOption('#model-select', '__url');
  await page.fill('#model-url', `${url}#sha256=${OTHER}`);
  await page.click('#load-judge');
  await page.waitForFunction(() =>
    [...document.querySelectorAll('.notice.error')].some((n) => /Could not load the judge/.test(n.textContent)),
  );
  const text = await page.locator('.notice.error').last().innerText();
  assert.match(text, /SHA-256 .* does not match the expected abababab/);
  assert.deepEqual(await cached(page), [], 'nothing kept');
  await page.fill('#model-url', `${url}#sha256=12`);
  await page.click('#load-judge');
  await page.waitForFunction(() =>
    [...document.querySelectorAll('.notice.error')].some((n) => /must be 64 hexadecimal digits/.test(n.textContent)),
  );
  assert.deepEqual(external(), []);
  await context.close();
});

test('an OPFS entry whose marker does not record the expected hash is downloaded again', async () => {
  const { context, page, log } = await enginePage();
  const url = `${server.origin}/models/${JUDGE}.gguf`;
  // Planted: 1000 bytes that are no model, with a "complete" marker of the right size but another hash.
  await page.evaluate(async () => {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('models', { create: true });
    const write = async (name, data) => {
      const w = await (await dir.getFileHandle(name, { create: true })).createWritable();
      await w.write(data);
      await w.close();
    };
    await write('planted.gguf', new Uint8Array(1000));
    await write('planted.json', JSON.stringify({ complete: true, size: 1000, sha256: '00'.repeat(32) }));
  });
  const loaded = await request(page, 'loadJudge', {
    source: { key: 'planted', urls: [url], sha256: SHA },
    backend: 'cpu',
  });
  assert.ok(loaded.ok, `the planted bytes were used: ${loaded.error}`);
  assert.ok(log.requests.includes(url), 'the model was downloaded');
  assert.deepEqual(
    (await cached(page)).map((m) => [m.key, m.sha256]),
    [['planted', SHA]],
  );
  await context.close();
});

test('the Cache API fallback keeps only verified bytes, with their hash as the marker', async () => {
  // The page itself has no OPFS sync access, so the store takes its Cache API path there.
  const { context, page } = await enginePage();
  const url = `${server.origin}/models/${JUDGE}.gguf`;
  const result = await page.evaluate(
    async ([u, sha, other]) => {
      const store = await import('/web/lib/modelstore.js');
      const wasm = await import('/pkg/rocketjudge_wasm.js');
      await wasm.default();
      const c = await caches.open('rocketjudge-models');
      const keys = async () => (await c.keys()).map((r) => new URL(r.url).pathname).sort();
      const out = {};
      out.wrong = await store
        .fetchModel({ key: 'k', urls: [u], sha256: other }, wasm, () => {})
        .then(
          () => 'stored',
          (e) => e.message,
        );
      out.afterWrong = await keys();
      const blob = await store.fetchModel({ key: 'k', urls: [u], sha256: sha }, wasm, () => {});
      out.size = blob.size;
      out.afterGood = await keys();
      out.header = (await c.match('/__model__/k')).headers.get('x-rocketjudge-sha256');
      out.reopened = (await store.openCachedModel('k', sha))?.size ?? null;
      out.otherHash = await store.openCachedModel('k', other);
      await c.put('/__model__/unmarked', new Response(new Uint8Array(10)));
      out.unmarked = await store.openCachedModel('unmarked');
      out.listed = (await store.cachedModels()).map((m) => m.key);
      return out;
    },
    [url, SHA, OTHER],
  );
  assert.match(result.wrong, /does not match/);
  assert.deepEqual(result.afterWrong, [], 'nothing stored of unverified bytes');
  assert.deepEqual(result.afterGood, ['/__model__/k']);
  assert.equal(result.header, SHA);
  assert.equal(result.reopened, result.size);
  assert.equal(result.otherHash, null, 'an entry with another hash is not used');
  assert.equal(result.unmarked, null, 'an entry without a marker is not used');
  assert.deepEqual(result.listed, ['k']);
  await context.close();
});

test('a model with no hash is kept only when it is a whole GGUF, and a body shorter than its size never', async () => {
  // Served by `rocketjudge serve` from the app's models/ folder: the first 300 kB of the judge, as a
  // server that cut the body without announcing a length would leave it.
  const cutFile = join(ROOT, 'models', 'rj-test-cut.gguf');
  writeFileSync(cutFile, readFileSync(join(MODELS, `${JUDGE}.gguf`)).subarray(0, 300_000));
  const { context, page } = await enginePage();
  try {
    const cutUrl = `${server.origin}/models/rj-test-cut.gguf`;
    const cut = await request(page, 'loadJudge', { source: { key: 'cut', urls: [cutUrl] }, backend: 'cpu' });
    assert.match(cut.error || '', /not a whole GGUF file \(300000 bytes arrived/);
    assert.deepEqual(await cached(page), [], 'nothing kept of a cut model');
    // The whole judge without a hash is kept (marked unverified), as before.
    const whole = await request(page, 'loadJudge', {
      source: { key: 'whole', urls: [`${server.origin}/models/${JUDGE}.gguf`] },
      backend: 'cpu',
    });
    assert.ok(whole.ok, whole.error);
    assert.deepEqual(
      (await cached(page)).map((m) => [m.key, m.sha256]),
      [['whole', SHA]],
    );
    // A body shorter than the size the source names is refused before anything is stored.
    const short = await page.evaluate(async (u) => {
      const store = await import('/web/lib/modelstore.js');
      const wasm = await import('/pkg/rocketjudge_wasm.js');
      await wasm.default();
      const error = await store
        .fetchModel({ key: 'short', urls: [u], size: 400_000 }, wasm, () => {})
        .then(
          () => 'stored',
          (e) => e.message,
        );
      return { error, kept: await store.openCachedModel('short') };
    }, cutUrl);
    assert.match(short.error, /ended after 300000 of 400000 bytes; nothing was kept/);
    assert.equal(short.kept, null);
  } finally {
    await context.close();
    rmSync(cutFile, { force: true });
  }
});
