// The worker owns the engine: the wasm module, the judge model, the grading loop. The page only
// renders. Messages are typed ({type, id, ...}); every request gets exactly one reply
// ({id, ok: true, result} or {id, ok: false, error}), and progress arrives as {type: 'progress'|...}.
//
// Nothing here talks to any host but the page's own origin (and, only when the user asks for it, the
// model URL they chose; the page's Content-Security-Policy enforces that).

import { put, remove } from './lib/db.js';
import { fetchModel, openCachedModel, removeCachedModel, cachedModels } from './lib/modelstore.js';

let wasm = null;        // the wasm-bindgen module
let generation = 0;     // bumped when a panic forces a fresh wasm instance
let judge = null;       // JudgeHandle
let judgeInfo = null;   // {name, backend, answerTokens, ...}
let control = { paused: false, cancelled: false };

async function loadWasm() {
  // A fresh URL gives a fresh module instance: after a panic (a wasm trap) the old one is abandoned.
  wasm = await import(`../pkg/rocketjudge_wasm.js?instance=${generation}`);
  await wasm.default();
  return wasm;
}

function post(msg) {
  self.postMessage(msg);
}

function describeError(e) {
  if (e instanceof WebAssembly.RuntimeError) {
    return `internal error in the engine (${e.message}); it has been restarted, please retry`;
  }
  return e && e.message ? e.message : String(e);
}

async function recoverIfTrapped(e) {
  if (e instanceof WebAssembly.RuntimeError) {
    generation += 1;
    judge = null;
    judgeInfo = null;
    await loadWasm();
    post({ type: 'engine-restarted' });
  }
}

/** Which backend to use and why. */
async function chooseBackend(requested) {
  const hasGpuApi = typeof navigator !== 'undefined' && 'gpu' in navigator;
  const built = typeof wasm.webgpuAvailable === 'function' ? wasm.webgpuAvailable() : false;
  if (requested === 'cpu') return { backend: 'cpu', why: 'CPU chosen' };
  if (!built) return { backend: 'cpu', why: 'this build has no WebGPU backend' };
  if (!hasGpuApi) return { backend: 'cpu', why: 'this browser has no WebGPU (navigator.gpu is missing)' };
  const adapter = await navigator.gpu.requestAdapter().catch(() => null);
  if (!adapter) return { backend: 'cpu', why: 'the browser found no WebGPU adapter' };
  return { backend: 'webgpu', why: 'WebGPU adapter available' };
}

/** Read the GGUF header from a Blob, growing the prefix until it parses. */
async function readHeader(blob) {
  let want = 1 << 20;
  for (;;) {
    const prefix = new Uint8Array(await blob.slice(0, Math.min(want, blob.size)).arrayBuffer());
    const needed = wasm.ModelHeader.bytesNeeded(prefix);
    if (needed === 0 || prefix.length >= blob.size) return new wasm.ModelHeader(prefix, blob.size);
    if (needed <= prefix.length) return new wasm.ModelHeader(prefix, blob.size);
    want = needed;
  }
}

const handlers = {
  async init() {
    await loadWasm();
    return { promptVersion: wasm.promptVersion(), webgpuBuilt: typeof wasm.webgpuAvailable === 'function' && wasm.webgpuAvailable() };
  },

  /** Core calls, run here so the page never blocks: {fn, args}. */
  async core({ fn, args }) {
    if (!(fn in wasm) || typeof wasm[fn] !== 'function') throw new Error(`unknown engine call ${fn}`);
    return wasm[fn](...args);
  },

  async cachedModels() {
    return cachedModels();
  },

  async removeModel({ key }) {
    await removeCachedModel(key);
    return true;
  },

  /**
   * Load a judge from a manifest entry ({key, url, sha256, size}), a URL, or a File.
   * Downloads into the model store with a byte progress bar, checks SHA-256 when known.
   */
  async loadJudge({ source, backend: requested, maxTokens }) {
    judge = null;
    judgeInfo = null;
    let blob;
    let name;
    if (source.file) {
      blob = source.file;
      name = source.file.name.replace(/\.gguf$/i, '');
    } else {
      name = source.key;
      blob = await openCachedModel(source.key);
      if (!blob) {
        blob = await fetchModel(source, wasm, (done, total) => post({ type: 'download', done, total }));
      }
    }
    const header = await readHeader(blob);
    const info = header.info();
    const choice = await chooseBackend(requested);
    const read = async (offset, length) => new Uint8Array(await blob.slice(offset, offset + length).arrayBuffer());
    const progress = (done, total) => post({ type: 'load', done, total });
    let handle;
    try {
      handle = await wasm.loadJudge(header, name, choice.backend, read, progress, maxTokens || 4096);
    } catch (e) {
      if (choice.backend !== 'webgpu') throw e;
      // The GPU refused (limits, device loss): fall back to the CPU and say why.
      post({ type: 'notice', text: `WebGPU could not load this model (${describeError(e)}); using the CPU instead.` });
      choice.backend = 'cpu';
      choice.why = `WebGPU failed: ${describeError(e)}`;
      handle = await wasm.loadJudge(await readHeader(blob), name, 'cpu', read, progress, maxTokens || 4096);
    }
    judge = handle;
    judgeInfo = { name: handle.name(), backend: handle.backend(), why: choice.why, answerTokens: handle.answerTokens(), model: info };
    return judgeInfo;
  },

  /**
   * Grade jobs one after another: [{query, response, model}]. Each judgment is written to IndexedDB
   * before it is reported, so a reload loses at most the response in flight.
   */
  async grade({ jobs }) {
    if (!judge) throw new Error('load a judge first');
    control = { paused: false, cancelled: false };
    const started = performance.now();
    let items = 0;
    for (let i = 0; i < jobs.length; i++) {
      while (control.paused && !control.cancelled) await new Promise((r) => setTimeout(r, 100));
      if (control.cancelled) return { graded: i, cancelled: true };
      const { query, response, model } = jobs[i];
      let result;
      try {
        result = await judge.grade(query, response, model);
      } catch (e) {
        await recoverIfTrapped(e);
        post({ type: 'grade-error', session_id: response.session_id, model, error: describeError(e) });
        if (!judge) return { graded: i, stopped: describeError(e) };
        continue;
      }
      await put('judgments', result.judgment);
      items += result.items.length;
      const secs = (performance.now() - started) / 1000;
      post({
        type: 'graded', judgment: result.judgment, detail: { prefixTokens: result.prefixTokens, suffixTokens: result.suffixTokens, truncatedChars: result.truncatedChars },
        done: i + 1, total: jobs.length, itemsPerSec: items / secs, etaSec: (secs / (i + 1)) * (jobs.length - i - 1),
      });
      // Let pause/cancel messages in between responses.
      await new Promise((r) => setTimeout(r, 0));
    }
    return { graded: jobs.length };
  },

  /** Grade without storing (checklist edits): returns [{model, judgment}] for the page to merge. */
  async regrade({ jobs }) {
    if (!judge) throw new Error('load a judge first');
    const out = [];
    for (const { query, response, model } of jobs) {
      try {
        out.push({ model, judgment: (await judge.grade(query, response, model)).judgment });
      } catch (e) {
        await recoverIfTrapped(e);
        throw e;
      }
    }
    return out;
  },

  async forgetJudgment({ key }) {
    await remove('judgments', key);
    return true;
  },
};

self.onmessage = async (ev) => {
  const msg = ev.data;
  if (msg.type === 'pause') { control.paused = true; return; }
  if (msg.type === 'resume') { control.paused = false; return; }
  if (msg.type === 'cancel') { control.cancelled = true; return; }
  const h = handlers[msg.type];
  if (!h) { post({ id: msg.id, ok: false, error: `unknown request ${msg.type}` }); return; }
  try {
    post({ id: msg.id, ok: true, result: await h(msg) });
  } catch (e) {
    await recoverIfTrapped(e).catch(() => {});
    post({ id: msg.id, ok: false, error: describeError(e) });
  }
};
