// Judge models on this device: the Origin Private File System (OPFS), with the Cache API as a fallback.
// A download streams to storage chunk by chunk (never the whole file in memory), reports bytes, and is
// hashed in wasm as it streams. Each stored model has a marker (OPFS: `<key>.json`; Cache API: headers
// of the stored response) that records the SHA-256 and size of exactly the bytes stored, written only
// after they were hashed (and checked, when the source names a SHA-256). A download removes the marker
// before it changes any byte, so an interrupted one never leaves a marker beside other bytes; a cached
// model is used only when its marker matches the source's expected SHA-256 (or, for a URL given
// without one, exists).

const DIR = 'models';
const CACHE = 'rocketjudge-models';
const SHA_HEADER = 'x-rocketjudge-sha256';
const SIZE_HEADER = 'x-rocketjudge-size';
const cacheUrl = (key, partial = false) => `/__model__/${key}${partial ? '.partial' : ''}`;

/** Whether a marker {sha256, size} vouches for `bytes` stored bytes, for a source expecting `sha256` (or none). */
function vouches(marker, bytes, sha256) {
  return (
    !!marker && typeof marker.sha256 === 'string' && marker.size === bytes && (!sha256 || marker.sha256 === sha256)
  );
}

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

/**
 * The cached model `key` as a Blob (disk-backed), or null: only when its marker records the hash of
 * exactly the stored bytes and that hash is `sha256` (when the source names one).
 */
export async function openCachedModel(key, sha256 = null) {
  const dir = await opfsDir();
  if (dir) {
    const marker = await readMarker(dir, key);
    if (marker && marker.complete) {
      const f = await (await dir.getFileHandle(`${key}.gguf`)).getFile().catch(() => null);
      if (f && vouches(marker, f.size, sha256)) return f;
    }
  }
  if (self.caches) {
    const r = await (await caches.open(CACHE)).match(cacheUrl(key));
    if (r) {
      const blob = await r.blob();
      const marker = { sha256: r.headers.get(SHA_HEADER), size: Number(r.headers.get(SIZE_HEADER)) };
      if (vouches(marker, blob.size, sha256)) return blob;
    }
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
      const r = await c.match(req);
      const sha256 = r && r.headers.get(SHA_HEADER);
      if (sha256 && !out.some((m) => m.key === key))
        out.push({ key, size: Number(r.headers.get(SIZE_HEADER)), sha256, store: 'cache' });
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
  if (self.caches) {
    const c = await caches.open(CACHE);
    await c.delete(cacheUrl(key));
    await c.delete(cacheUrl(key, true));
  }
}

async function checkRoom(size) {
  if (!size || !navigator.storage || !navigator.storage.estimate) return;
  const { quota = Infinity, usage = 0 } = await navigator.storage.estimate();
  if (quota - usage < size * 1.05) {
    throw new Error(
      `not enough browser storage for this model: it needs ${(size / 1e6).toFixed(0)} MB, ${((quota - usage) / 1e6).toFixed(0)} MB are free`,
    );
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
        if (!resp.ok || !resp.body)
          throw new Error(`cannot download part ${i + 1} of ${urls.length} (${urls[i]}): HTTP ${resp.status}`);
        reader = resp.body.getReader();
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** Throw when a download ended before the length it announced (or the manifest gives): never stored as whole. */
function shortOf(done, total) {
  if (total && done < total) throw new Error(`the download ended after ${done} of ${total} bytes; nothing was kept`);
}

/**
 * Open the download of `source` after refusing what cannot run or fit: by the known size before any
 * byte is asked for, else by the first response's Content-Length. Returns {resp (urls[0]'s), total
 * (the bytes expected, 0 when unknown)}.
 */
async function openDownload(source, fits) {
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
  return { resp, total };
}

/** The hex SHA-256 `hasher` has computed; throws when `source` names another. */
function verifiedHash(hasher, source) {
  const got = hasher.hex();
  if (source.sha256 && got !== source.sha256) {
    throw new Error(
      `the downloaded model's SHA-256 (${got.slice(0, 16)}…) does not match the expected ${source.sha256.slice(0, 16)}…; it was discarded`,
    );
  }
  return got;
}

/** Write the OPFS marker of `done` stored bytes with SHA-256 `sha`: the model is now whole. */
async function writeMarker(dir, source, done, sha) {
  const urls = source.urls;
  const marker = await (await dir.getFileHandle(`${source.key}.json`, { create: true })).createSyncAccessHandle();
  const text = new TextEncoder().encode(
    JSON.stringify({
      complete: true,
      size: done,
      sha256: sha,
      verified: !!source.sha256,
      url: urls[0],
      parts: urls.length,
    }),
  );
  marker.truncate(0);
  marker.write(text, { at: 0 });
  marker.flush();
  marker.close();
}

/** Stream `body` into OPFS as `<key>.gguf`, hashing it, then mark it whole; returns the stored Blob. */
async function storeInOpfs(dir, source, body, hasher, progress, total) {
  let done = 0;
  // The marker goes before any byte changes: an interrupted download leaves no marker.
  await dir.removeEntry(`${source.key}.json`).catch(() => {});
  const file = await dir.getFileHandle(`${source.key}.gguf`, { create: true });
  const access = await file.createSyncAccessHandle();
  // A download that breaks off or fails its check leaves nothing for the key.
  let sha;
  try {
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
      shortOf(done, total);
    } finally {
      access.close();
    }
    sha = verifiedHash(hasher, source);
  } catch (e) {
    await removeCachedModel(source.key);
    throw e;
  }
  await writeMarker(dir, source, done, sha);
  return openCachedModel(source.key, source.sha256);
}

/**
 * Fallback: the Cache API. The bytes go to a partial entry while they are hashed; only verified
 * bytes are stored under the model's key, with their hash and size as the marker.
 */
async function storeInCache(source, body, hasher, progress, total) {
  let done = 0;
  const [toCache, toHash] = body.tee();
  const c = await caches.open(CACHE);
  await c.delete(cacheUrl(source.key));
  const partial = cacheUrl(source.key, true);
  const stored = c.put(partial, new Response(toCache, { headers: { 'content-type': 'application/octet-stream' } }));
  const reader = toHash.getReader();
  let sha;
  try {
    for (;;) {
      const { done: end, value } = await reader.read();
      if (end) break;
      hasher.update(value);
      done += value.length;
      progress(done, total);
    }
    await stored;
    shortOf(done, total);
    sha = verifiedHash(hasher, source);
  } catch (e) {
    await stored.catch(() => {});
    await removeCachedModel(source.key);
    throw e;
  }
  const bytes = await (await c.match(partial)).blob();
  if (bytes.size !== done) {
    await removeCachedModel(source.key);
    throw new Error(`the browser stored ${bytes.size} of the ${done} bytes downloaded; nothing was kept`);
  }
  await c.put(
    cacheUrl(source.key),
    new Response(bytes, {
      headers: { 'content-type': 'application/octet-stream', [SHA_HEADER]: sha, [SIZE_HEADER]: String(done) },
    }),
  );
  await c.delete(partial);
  return openCachedModel(source.key, source.sha256);
}

/**
 * Download `source` ({key, urls, sha256?, size?}: the model's bytes are those of `urls` joined in
 * order) into the store; `progress(done, total)` per chunk. `fits(bytes)` throws when a model of
 * that size cannot run here; it is asked before the download. Returns the stored Blob. A SHA-256
 * mismatch, or a download that fails part way, deletes what was stored for the key and throws.
 */
export async function fetchModel(source, wasm, progress, fits = () => {}) {
  const { resp, total } = await openDownload(source, fits);
  const urls = source.urls;
  const body = urls.length === 1 ? resp.body : joinedStream(urls, resp);
  const hasher = new wasm.Sha256Stream();
  const dir = await opfsDir();
  if (dir && self.FileSystemSyncAccessHandle) return storeInOpfs(dir, source, body, hasher, progress, total);
  return storeInCache(source, body, hasher, progress, total);
}
