// The wasm module: which build runs (threads or not, and why), starting it, restarting it after a
// trap, the errors it throws, and the `init` and `core` requests. Every other worker module reaches
// the module through `engine.wasm`.
//
// Nothing in the worker talks to any host but the page's own origin (and, only when the user asks
// for it, the model URL they chose; the page's Content-Security-Policy enforces that).

import { EVENTS, refusal } from '../protocol.js';

/**
 * The running module: `wasm` (the wasm-bindgen module), `generation` (bumped when a trap forces a
 * fresh instance), `plan` (the build and thread count, and why) and `starting` (the first `init`).
 *
 * The threaded build (pkg-threads/: shared memory, a pool of Web Workers, relaxed-simd dot products)
 * needs a cross-origin isolated page (headers from `rocketjudge serve`, or the service worker of a
 * static copy) and a browser with relaxed SIMD; otherwise pkg/ runs on this worker's one thread.
 */
export const engine = {
  wasm: null,
  generation: 0,
  plan: { dir: 'pkg', threads: 1, why: 'not started' },
  starting: null,
};

/** Hooks run after a trap restarted the module (the judge module forgets its judge). */
const onRestart = [];
export function afterRestart(fn) {
  onRestart.push(fn);
}

/** Send an event to the page (one listed in the protocol). */
export function post(msg) {
  if (!(msg.type in EVENTS)) throw new Error(refusal('event', msg.type));
  self.postMessage(msg);
}

/** A minimal module using i32x4.relaxed_dot_i8x16_i7x16_add_s: validates only with relaxed SIMD. */
export function hasRelaxedSimd() {
  const v128 = [0xfd, 0x0c, ...new Array(16).fill(0)];
  const body = [0x00, ...v128, ...v128, ...v128, 0xfd, 0x93, 0x02, 0x0b];
  const bytes = [
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    0x01,
    0x05,
    0x01,
    0x60,
    0x00,
    0x01,
    0x7b,
    0x03,
    0x02,
    0x01,
    0x00,
    0x0a,
    body.length + 2,
    0x01,
    body.length,
    ...body,
  ];
  try {
    return WebAssembly.validate(new Uint8Array(bytes));
  } catch {
    return false;
  }
}

/**
 * The build and thread count for `wanted` threads, and why. One thread chosen still takes the
 * threaded build where it can run, without a pool: its relaxed-SIMD dot products are what make the
 * CPU engine fast, and pkg/ has plain SIMD only.
 */
export function choosePlan(wanted, { isolated, relaxedSimd }) {
  const chosen = wanted > 1 ? `${wanted} threads` : 'one thread chosen';
  if (isolated && relaxedSimd) return { dir: 'pkg-threads', threads: wanted, why: chosen };
  if (wanted <= 1) return { dir: 'pkg', threads: 1, why: chosen };
  if (!isolated) {
    return {
      dir: 'pkg',
      threads: 1,
      why: 'the page is not cross-origin isolated, so it cannot share memory between threads',
    };
  }
  return {
    dir: 'pkg',
    threads: 1,
    why: 'this browser lacks WebAssembly relaxed SIMD, which the threaded engine is built with',
  };
}

async function loadWasm() {
  // A fresh URL gives a fresh module instance: after a panic (a wasm trap) the old one is abandoned.
  const { plan } = engine;
  try {
    engine.wasm = await import(`../../${plan.dir}/rocketjudge_wasm.js?instance=${engine.generation}`);
    await engine.wasm.default();
    if (plan.threads > 1) await engine.wasm.initThreadPool(plan.threads);
  } catch (e) {
    if (plan.dir === 'pkg') throw e;
    // A static copy without the threaded build, or a pool that cannot start: one thread.
    engine.plan = { dir: 'pkg', threads: 1, why: `the threaded engine did not start (${describeError(e)})` };
    return loadWasm();
  }
  return engine.wasm;
}

/** An error as the page shows it. */
export function describeError(e) {
  if (e instanceof WebAssembly.RuntimeError) {
    return `internal error in the engine (${e.message}); it has been restarted, please retry`;
  }
  return e && e.message ? e.message : String(e);
}

/** The engine's kind of an error (`e.kind`, set by the wasm module), `internal` for a trap. */
export function errorKind(e) {
  if (e instanceof WebAssembly.RuntimeError) return 'internal';
  return (e && e.kind) || 'other';
}

/** An error of the engine's kind `kind` (what the page acts on). */
export function failure(kind, message) {
  return Object.assign(new Error(message), { kind });
}

/** After a trap: a fresh module instance, without the judge (the page is told). */
export async function recoverIfTrapped(e) {
  if (e instanceof WebAssembly.RuntimeError) {
    engine.generation += 1;
    for (const fn of onRestart) fn();
    await loadWasm();
    post({ type: 'engine-restarted' });
  }
}

export const handlers = {
  /** Start the engine on `threads` threads (default: every core) where the page allows it. */
  async init({ threads } = {}) {
    const cores = navigator.hardwareConcurrency || 1;
    // Once per worker: a thread pool cannot be started twice (a new thread count needs a new worker,
    // which the page gets by reloading); a later or concurrent call waits for the first and reports
    // what runs.
    engine.starting ??= (async () => {
      const isolated = self.crossOriginIsolated === true && typeof SharedArrayBuffer !== 'undefined';
      engine.plan = choosePlan(Math.max(1, Math.min(threads || cores, 64)), {
        isolated,
        relaxedSimd: hasRelaxedSimd(),
      });
      await loadWasm();
    })();
    await engine.starting;
    const { wasm, plan } = engine;
    return {
      promptVersion: wasm.promptVersion(),
      webgpuBuilt: wasm.webgpuAvailable(),
      isolated: self.crossOriginIsolated === true,
      cores,
      threads: plan.threads,
      threadsWhy: plan.why,
      cpuKernels: wasm.cpuKernels(),
    };
  },

  /** One of core's pure calls by name (protocol.js CORE_CALLS), run here so the page never blocks. */
  async core({ fn, args }) {
    const refused = refusal('core', fn);
    if (refused) throw failure('input', refused);
    return engine.wasm[fn](...args);
  },
};
