// The loaded judge: which backend it runs on and why, loading it, moving it to the CPU when the GPU
// fails, and the run loop every long request shares (one call at a time, pause and cancel honoured
// between items). Requests: `loadJudge`, `gpu`, `unloadJudge`, `judgeBlob`.

import { engine, post, describeError, failure, recoverIfTrapped, afterRestart } from './engine.js';
import { checkFits, openModel } from './models.js';
import { adapterReport, readHeader, loadJudgeFrom } from '../lib/loading.js';

/**
 * `handle` (the wasm JudgeHandle; `why` set on it where the worker moved it to the CPU), `info`
 * ({name, backend, backendKind, device (the engine's BackendInfo), why, answerTokens, model}: what the
 * page shows), `loaded` ({blob, name, maxTokens, options, debugLayers}: where it came from, to reload
 * it on the CPU), `running` (a run is in progress) and `loseDevice` (tests only: destroy the GPU
 * device before the next item).
 */
export const current = { handle: null, info: null, loaded: null, running: false, loseDevice: false };

/** Pause and cancel, set by the page's signals and read between the items of a run. */
// `untilSettled`: a grading run stops once its live leaderboard is settled (the page's checkbox,
// which may change during the run).
export const control = { paused: false, cancelled: false, untilSettled: false };

afterRestart(() => {
  current.handle = null;
  current.info = null;
});

/** The loaded judge, or an error saying to load one. */
export function loadedJudge() {
  if (!current.handle) throw new Error('load a judge first');
  return current.handle;
}

/** The page's signals: pause, resume, cancel, stop when settled or not, and (tests) losing the GPU device. */
export function signal(type) {
  if (type === 'pause') control.paused = true;
  else if (type === 'resume') control.paused = false;
  else if (type === 'cancel') control.cancelled = true;
  else if (type === 'untilSettled') control.untilSettled = true;
  else if (type === 'untilDone') control.untilSettled = false;
  else if (type === 'debugLoseDevice') {
    // During a run the device is destroyed before the next item (the judge is busy with the
    // current one), otherwise now.
    if (current.running) current.loseDevice = true;
    else current.handle?.loseDevice();
  }
}

/**
 * Load a judge from `{blob, name, maxTokens, debugLayers?, options?}` on a backend; progress goes out
 * as `{type: progressType, done, total}`.
 */
export function loadFrom(loaded, backend, progressType) {
  return loadJudgeFrom(engine.wasm, loaded, backend, (done, total) => post({ type: progressType, done, total }));
}

/** What this browser tells of its WebGPU adapter (see lib/loading.js). */
const browserAdapter = () => adapterReport(typeof navigator !== 'undefined' ? navigator.gpu : undefined);

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
  if (handle.why) device.why = handle.why;
  return {
    name: handle.name(),
    backend: device.description,
    backendKind: device.kind,
    device,
    why: device.why,
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
  handle.why = `WebGPU failed while grading: ${reason}`;
  current.handle = handle;
  current.info = { ...current.info, ...describeHandle(handle) };
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
  async loadJudge({ source, backend, maxTokens, options, debugLayers }) {
    // Release the previous judge's memory (a grade in flight keeps its own reference).
    releaseJudge();
    // The engine decides where the judge runs (`auto`: WebGPU on a hardware adapter, else the CPU;
    // a GPU that cannot load the model: the CPU) and says why; the browser's report is what it knows
    // of the adapter. A model the CPU engine cannot hold is refused before it is downloaded when the
    // CPU is where the engine starts.
    const adapter = engine.wasm.webgpuAvailable() ? await browserAdapter() : null;
    const onCpu = engine.wasm.cpuBeforeOpening(backend, adapter) !== undefined;
    const fits = (size) => checkFits(size, onCpu ? 'cpu' : 'webgpu');
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
    const header = await readHeader(engine.wasm, blob);
    const model = header.info();
    header.free();
    // debugLayers (tests only): keep the model's first N blocks.
    // options: {precision: 'int8'|'f32'} for the CPU, {kernels: 'auto'|'gpu'|'software', allowF16,
    // memoryBudget} for WebGPU (all optional).
    current.loaded = { blob, name, maxTokens: maxTokens || 4096, options: { ...options, adapter }, debugLayers };
    let handle;
    try {
      handle = await loadFrom(current.loaded, backend, 'load');
    } catch (e) {
      // WebGPU was chosen (not `auto`, where the engine falls back itself) and could not load the
      // model (limits, device loss): the CPU, saying why.
      if (backend !== 'webgpu') throw e;
      post({ type: 'notice', text: `WebGPU could not load this model (${describeError(e)}); using the CPU instead.` });
      handle = await loadFrom(current.loaded, 'cpu', 'load');
      handle.why = `WebGPU failed: ${describeError(e)}`;
    }
    current.handle = handle;
    current.info = { ...describeHandle(handle), model };
    return current.info;
  },

  /**
   * What this browser's WebGPU adapter is, as the engine judges it (its rule for software adapters):
   * {available, hardware, name, f16, why}.
   */
  async gpu() {
    return engine.wasm.adapterFacts(await browserAdapter());
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
