// The loaded judge: which backend it runs on and why, loading it, moving it to the CPU when the GPU
// fails, and the run loop every long request shares (one call at a time, pause and cancel honoured
// between items). Requests: `loadJudge`, `unloadJudge`, `judgeBlob`.

import { isSoftwareAdapter, adapterName } from '../lib/adapter.js';
import { engine, post, describeError, failure, recoverIfTrapped, afterRestart } from './engine.js';
import { checkFits, readHeader, openModel } from './models.js';

/**
 * `handle` (the wasm JudgeHandle), `info` ({name, backend, backendKind, device, adapter, why,
 * answerTokens, model}: what the page shows), `loaded` ({blob, name, maxTokens, options,
 * debugLayers}: where it came from, to reload it on the CPU), `running` (a run is in progress) and
 * `loseDevice` (tests only: destroy the GPU device before the next item).
 */
export const current = { handle: null, info: null, loaded: null, running: false, loseDevice: false };

/** Pause and cancel, set by the page's signals and read between the items of a run. */
export const control = { paused: false, cancelled: false };

afterRestart(() => {
  current.handle = null;
  current.info = null;
});

/** The loaded judge, or an error saying to load one. */
export function loadedJudge() {
  if (!current.handle) throw new Error('load a judge first');
  return current.handle;
}

/** The page's signals: pause, resume, cancel, and (tests) losing the GPU device. */
export function signal(type) {
  if (type === 'pause') control.paused = true;
  else if (type === 'resume') control.paused = false;
  else if (type === 'cancel') control.cancelled = true;
  else if (type === 'debugLoseDevice') {
    // During a run the device is destroyed before the next item (the judge is busy with the
    // current one), otherwise now.
    if (current.running) current.loseDevice = true;
    else current.handle?.loseDevice();
  }
}

/**
 * Which backend to use and why; on WebGPU also what the browser says about its adapter. `auto`
 * takes WebGPU on a hardware adapter only; `webgpu` takes any adapter (a software one too).
 */
async function chooseBackend(requested) {
  const hasGpuApi = typeof navigator !== 'undefined' && 'gpu' in navigator;
  if (requested === 'cpu') return { backend: 'cpu', why: 'CPU chosen' };
  if (!engine.wasm.webgpuAvailable()) return { backend: 'cpu', why: 'this build has no WebGPU backend' };
  if (!hasGpuApi) return { backend: 'cpu', why: 'this browser has no WebGPU (navigator.gpu is missing)' };
  const adapter = await navigator.gpu.requestAdapter({ powerPreference: 'high-performance' }).catch(() => null);
  if (!adapter) return { backend: 'cpu', why: 'the browser found no WebGPU adapter' };
  const info = adapter.info || {};
  const name = adapterName(adapter, 'unnamed adapter');
  if (requested !== 'webgpu' && isSoftwareAdapter(adapter)) {
    return {
      backend: 'cpu',
      why: `the WebGPU adapter (${name}) is software, not a GPU: the CPU engine is faster here`,
    };
  }
  return {
    backend: 'webgpu',
    why: requested === 'webgpu' ? 'WebGPU chosen' : 'a hardware WebGPU adapter is available',
    adapter: {
      vendor: info.vendor || '',
      architecture: info.architecture || '',
      device: info.device || '',
      description: info.description || '',
      shaderF16: adapter.features.has('shader-f16'),
      maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
    },
  };
}

/**
 * Load a judge from `{blob, name, maxTokens, debugLayers?, options?}` on a backend; progress goes out
 * as `{type: progressType, done, total}`.
 */
export async function loadFrom({ blob, name, maxTokens, debugLayers, options }, backend, progressType) {
  const read = async (offset, length) => new Uint8Array(await blob.slice(offset, offset + length).arrayBuffer());
  const progress = (done, total) => post({ type: progressType, done, total });
  const header = await readHeader(blob);
  if (debugLayers) header.keepLayers(debugLayers);
  return engine.wasm.loadJudge(header, name, backend, read, progress, maxTokens, options);
}

/** Free the judge's memory and forget it. */
function releaseJudge() {
  try {
    current.handle?.free();
  } catch {
    /* already gone */
  }
  current.handle = null;
  current.info = null;
}

/** What the page shows about a loaded judge; `device` is the engine's typed BackendInfo. */
function describeHandle(handle) {
  const device = handle.info();
  return {
    name: handle.name(),
    backend: device.description,
    backendKind: device.kind,
    device,
    answerTokens: handle.answerTokens(),
  };
}

/** Whether an error means the GPU itself failed (lost, out of memory, invalid): the WebGPU judge is then unusable. */
function isGpuFailure(e) {
  return current.info?.backendKind === 'webgpu' && e?.kind === 'backend';
}

/**
 * The GPU failed in the middle of grading: say so, drop the WebGPU judge and load the same model on
 * the CPU. What was graded is already stored; the caller grades the failed item again.
 */
async function fallBackToCpu(e) {
  const reason = describeError(e);
  post({
    type: 'notice',
    text: `The GPU stopped working while grading (${reason}). Every response graded so far is kept; grading continues on the CPU, which is slower.`,
  });
  const old = current.handle;
  current.handle = null;
  try {
    old?.free();
  } catch {
    /* already gone */
  }
  // Not `load` progress: the page shows that as a judge being loaded by the user.
  const handle = await loadFrom(current.loaded, 'cpu', 'fallback-load');
  current.handle = handle;
  current.info = {
    ...current.info,
    ...describeHandle(handle),
    adapter: null,
    adapterName: undefined,
    why: `WebGPU failed while grading: ${reason}`,
  };
  post({ type: 'judge-changed', judge: current.info });
}

/** Run `call(judge)`, moving to the CPU (once) when the GPU fails. */
export async function onJudge(call) {
  try {
    if (current.loseDevice) {
      current.loseDevice = false;
      current.handle.loseDevice();
    }
    return await call(current.handle);
  } catch (e) {
    if (!isGpuFailure(e)) throw e;
    await fallBackToCpu(e);
    return call(current.handle);
  }
}

/** Start a run of many items: pause and cancel cleared. */
export function startControl() {
  control.paused = false;
  control.cancelled = false;
}

/**
 * A run of the judge over `n` items (`grade`, `runDesign`): `call(judge, i)` for each, one at a time
 * (through onJudge), with pause and cancel honoured between items and the run marked as running, so a
 * second run is refused meanwhile. `done(i, result)` stores and reports an item; a failed call goes to
 * `failed(i, message)` and the run goes on, unless the engine had to restart without its judge.
 * `stop()`, asked before each item, ends the run early (a settled ranking).
 * Returns {done (items passed), cancelled?, stopped?, settled?}.
 */
export async function judgeRun(n, call, done, failed, stop = null) {
  // The judge answers one call at a time: a second run is refused, not interleaved.
  if (current.running) throw failure('busy', 'the judge is busy with another run: wait for it to finish, or cancel it');
  startControl();
  current.running = true;
  try {
    for (let i = 0; i < n; i++) {
      while (control.paused && !control.cancelled) await new Promise((r) => setTimeout(r, 100));
      if (control.cancelled) return { done: i, cancelled: true };
      if (stop && stop()) return { done: i, settled: true };
      let result;
      try {
        result = await onJudge((j) => call(j, i));
      } catch (e) {
        await recoverIfTrapped(e);
        failed(i, describeError(e));
        if (!current.handle) return { done: i, stopped: describeError(e) };
        continue;
      }
      await done(i, result);
      // Let pause/cancel messages in between items.
      await new Promise((r) => setTimeout(r, 0));
    }
  } finally {
    current.running = false;
    current.loseDevice = false;
  }
  return { done: n };
}

export const handlers = {
  /**
   * Load a judge from a manifest entry ({key, url, sha256, size}), a URL, or a File.
   * Downloads into the model store with a byte progress bar, checks SHA-256 when known.
   */
  async loadJudge({ source, backend: requested, maxTokens, options, debugLayers }) {
    // Release the previous judge's memory (a grade in flight keeps its own reference).
    releaseJudge();
    const choice = await chooseBackend(requested);
    const fits = (size) => checkFits(size, choice.backend);
    let blob;
    let name;
    if (source.file) {
      blob = source.file;
      name = source.file.name.replace(/\.gguf$/i, '');
      fits(blob.size);
    } else {
      name = source.key;
      blob = await openModel(source, fits);
    }
    const header = await readHeader(blob);
    const model = header.info();
    header.free();
    // debugLayers (tests only): keep the model's first N blocks.
    // options: {precision: 'int8'|'f32'} for the CPU, {kernels: 'auto'|'gpu'|'software', allowF16,
    // memoryBudget} for WebGPU (all optional).
    current.loaded = { blob, name, maxTokens: maxTokens || 4096, options, debugLayers };
    let handle;
    try {
      handle = await loadFrom(current.loaded, choice.backend, 'load');
    } catch (e) {
      if (choice.backend !== 'webgpu') throw e;
      // The GPU refused (limits, device loss): fall back to the CPU and say why.
      post({ type: 'notice', text: `WebGPU could not load this model (${describeError(e)}); using the CPU instead.` });
      choice.backend = 'cpu';
      choice.why = `WebGPU failed: ${describeError(e)}`;
      choice.adapter = null;
      handle = await loadFrom(current.loaded, 'cpu', 'load');
    }
    current.handle = handle;
    const info = { ...describeHandle(handle), adapter: choice.adapter || null, why: choice.why, model };
    if (info.backendKind === 'webgpu') {
      // The engine's name for the adapter, else what the browser tells (it may withhold the description).
      const a = info.adapter || {};
      info.adapterName =
        info.device.adapter ||
        [a.vendor, a.architecture, a.device, a.description].filter(Boolean).join(' ') ||
        'unnamed adapter';
      info.backend = info.backend.replace(/^webgpu: +\(/, `webgpu: ${info.adapterName} (`);
    }
    current.info = info;
    return info;
  },

  /** Free the judge's memory (the benchmark page runs one engine at a time). */
  async unloadJudge() {
    releaseJudge();
    return true;
  },

  /** The loaded judge's GGUF (a Blob), for the benchmark page to hand to wllama. */
  async judgeBlob() {
    if (!current.loaded) throw new Error('load a judge first');
    return current.loaded.blob;
  },
};
