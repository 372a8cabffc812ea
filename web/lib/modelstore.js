// Judge models on this device: the Origin Private File System (OPFS), with the Cache API as a fallback.
// A download streams to storage chunk by chunk (never the whole file in memory), reports bytes, and is
// checked against the manifest's SHA-256 (hashed in wasm as it streams) before it counts as cached.

const DIR = 'models';
const CACHE = 'rocketjudge-models';

async function opfsDir() {
  if (!navigator.storage || !navigator.storage.getDirectory) return null;
  try {
    const root = await navigator.storage.getDirectory();
    return await root.getDirectoryHandle(DIR, { create: true });
  } catch {
    return null;
  }
}

async function readMarker(dir, key) {
  try {
    const f = await (await dir.getFileHandle(`${key}.json`)).getFile();
    return JSON.parse(await f.text());
  } catch {
    return null;
  }
}

/** The cached model as a Blob (disk-backed), or null. */
export async function openCachedModel(key) {
  const dir = await opfsDir();
  if (dir) {
    const marker = await readMarker(dir, key);
    if (marker && marker.complete) {
      const f = await (await dir.getFileHandle(`${key}.gguf`)).getFile();
      if (f.size === marker.size) return f;
    }
  }
  if (self.caches) {
    const c = await caches.open(CACHE);
    const r = await c.match(`/__model__/${key}`);
    if (r) return await r.blob();
  }
  return null;
}

/** Keys of cached models with their sizes. */
export async function cachedModels() {
  const out = [];
  const dir = await opfsDir();
  if (dir) {
    for await (const [name] of dir.entries()) {
      if (!name.endsWith('.json')) continue;
      const key = name.slice(0, -5);
      const m = await readMarker(dir, key);
      if (m && m.complete) out.push({ key, size: m.size, sha256: m.sha256, store: 'opfs' });
    }
  }
  if (self.caches) {
    const c = await caches.open(CACHE);
    for (const req of await c.keys()) {
      const key = new URL(req.url).pathname.replace('/__model__/', '');
      if (!out.some((m) => m.key === key)) out.push({ key, store: 'cache' });
    }
  }
  return out;
}

export async function removeCachedModel(key) {
  const dir = await opfsDir();
  if (dir) {
    for (const n of [`${key}.gguf`, `${key}.json`, `${key}.gguf.partial`]) {
      await dir.removeEntry(n).catch(() => {});
    }
  }
  if (self.caches) await (await caches.open(CACHE)).delete(`/__model__/${key}`);
}

async function checkRoom(size) {
  if (!size || !navigator.storage || !navigator.storage.estimate) return;
  const { quota = Infinity, usage = 0 } = await navigator.storage.estimate();
  if (quota - usage < size * 1.05) {
    throw new Error(`not enough browser storage for this model: it needs ${(size / 1e6).toFixed(0)} MB, ${((quota - usage) / 1e6).toFixed(0)} MB are free`);
  }
}

/**
 * The bytes of `urls` one after another, as one stream: a model served whole, or in parts (a static
 * host that refuses large files). `first` is the already-opened response of urls[0].
 */
function joinedStream(urls, first) {
  let i = 0;
  let reader = first.body.getReader();
  return new ReadableStream({
    async pull(controller) {
      for (;;) {
        const { done, value } = await reader.read();
        if (!done) return controller.enqueue(value);
        i += 1;
        if (i === urls.length) return controller.close();
        const resp = await fetch(urls[i], { credentials: 'omit', cache: 'no-store' });
        if (!resp.ok || !resp.body) throw new Error(`cannot download part ${i + 1} of ${urls.length} (${urls[i]}): HTTP ${resp.status}`);
        reader = resp.body.getReader();
      }
    },
    cancel(reason) { return reader.cancel(reason); },
  });
}

/**
 * Download `source` ({key, urls, sha256?, size?}: the model's bytes are those of `urls` joined in
 * order) into the store; `progress(done, total)` per chunk. `fits(bytes)` throws when a model of
 * that size cannot run here; it is asked before the download. Returns the stored Blob. A SHA-256
 * mismatch deletes the download and throws.
 */
export async function fetchModel(source, wasm, progress, fits = () => {}) {
  // Refuse what cannot run before any byte is downloaded: by the known size, else by Content-Length.
  if (source.size) fits(source.size);
  await checkRoom(source.size);
  const urls = source.urls;
  const resp = await fetch(urls[0], { credentials: 'omit', cache: 'no-store' });
  if (!resp.ok || !resp.body) throw new Error(`cannot download ${urls[0]}: HTTP ${resp.status}`);
  const total = source.size || (urls.length === 1 && Number(resp.headers.get('content-length'))) || 0;
  try {
    if (total && !source.size) {
      fits(total);
      await checkRoom(total);
    }
  } catch (e) {
    await resp.body.cancel().catch(() => {});
    throw e;
  }
  const body = urls.length === 1 ? resp.body : joinedStream(urls, resp);
  const hasher = new wasm.Sha256Stream();
  const dir = await opfsDir();
  let done = 0;
  const verify = () => {
    const got = hasher.hex();
    if (source.sha256 && got !== source.sha256) {
      throw new Error(`the downloaded model's SHA-256 (${got.slice(0, 16)}…) does not match the expected ${source.sha256.slice(0, 16)}…; it was discarded`);
    }
    return got;
  };
  if (dir && self.FileSystemSyncAccessHandle) {
    const partial = await dir.getFileHandle(`${source.key}.gguf`, { create: true });
    const access = await partial.createSyncAccessHandle();
    try {
      access.truncate(0);
      const reader = body.getReader();
      for (;;) {
        const { done: end, value } = await reader.read();
        if (end) break;
        access.write(value, { at: done });
        hasher.update(value);
        done += value.length;
        progress(done, total);
      }
      access.flush();
    } finally {
      access.close();
    }
    let sha;
    try {
      sha = verify();
    } catch (e) {
      await removeCachedModel(source.key);
      throw e;
    }
    const marker = await (await dir.getFileHandle(`${source.key}.json`, { create: true })).createSyncAccessHandle();
    const text = new TextEncoder().encode(JSON.stringify({ complete: true, size: done, sha256: sha, url: urls[0], parts: urls.length }));
    marker.truncate(0);
    marker.write(text, { at: 0 });
    marker.flush();
    marker.close();
    return openCachedModel(source.key);
  }
  // Fallback: the Cache API, fed by one branch of the stream while the other is hashed.
  const [toCache, toHash] = body.tee();
  const c = await caches.open(CACHE);
  const stored = c.put(`/__model__/${source.key}`, new Response(toCache, { headers: { 'content-type': 'application/octet-stream' } }));
  const reader = toHash.getReader();
  for (;;) {
    const { done: end, value } = await reader.read();
    if (end) break;
    hasher.update(value);
    done += value.length;
    progress(done, total);
  }
  await stored;
  try {
    verify();
  } catch (e) {
    await c.delete(`/__model__/${source.key}`);
    throw e;
  }
  return openCachedModel(source.key);
}
