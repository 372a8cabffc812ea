// The tab's thread pool under Node: what the threaded engine (pkg-threads/) needs of a page to start
// its pool of Web Workers (wasm-bindgen-rayon's workerHelpers), given with Node's worker_threads, so
// that the same wasm and the same pool run on a machine with many cores and no browser
// (scripts/bench/dawn-bench.mjs --backend cpu --threads N, whose curve scripts/bench-gpu.sh takes).
//
// wasm-bindgen-rayon spawns each worker from its own module file: it fetches `import.meta.url` as a
// Blob and starts `new Worker(blobURL, {type: 'module'})`, posts the wasm module, the shared memory
// and the pool's receiver, and waits for `wasm_bindgen_worker_ready`. Node has none of a Web
// Worker's globals and cannot fetch a file: URL, so `installWorkers(helpers)` gives the main thread
// a `Worker` whose threads run `helpers` (that module file) behind `node-worker-boot.mjs` (a worker's
// `self`, `postMessage` and message events), and a `fetch` that reads file: URLs.

import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Worker as NodeWorker } from 'node:worker_threads';

const BOOT = new URL('./node-worker-boot.mjs', import.meta.url);

/** A Web Worker's face over a Node worker thread that runs `helpers` (a module's file URL). */
function workerClass(helpers, threads) {
  return class Worker extends EventTarget {
    constructor() {
      super();
      this.thread = new NodeWorker(BOOT, { workerData: { script: helpers } });
      threads.push(this.thread);
      this.thread.on('message', (data) => this.dispatchEvent(new MessageEvent('message', { data })));
      this.thread.on('error', (error) => {
        const event = new Event('error');
        event.error = error;
        this.dispatchEvent(event);
      });
    }
    postMessage(message) {
      this.thread.postMessage(message);
    }
    terminate() {
      return this.thread.terminate();
    }
  };
}

/**
 * Install the globals the threaded build's pool needs (once per process; `helpers`: a file URL).
 * Returns `started()`, to call once the pool has started: a pool's workers never return (each runs
 * rayon's loop), and from then on they must not keep Node alive.
 */
export function installWorkers(helpers) {
  const threads = [];
  globalThis.Worker = workerClass(helpers, threads);
  // The module also loads on this thread (the engine's glue imports it), where it listens on `self`
  // as on the engine's own worker; nothing posts to this thread, so it waits on for ever.
  const events = new EventTarget();
  globalThis.self ??= globalThis;
  globalThis.addEventListener ??= events.addEventListener.bind(events);
  globalThis.removeEventListener ??= events.removeEventListener.bind(events);
  const fetchUrl = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.protocol !== 'file:') return fetchUrl(input, init);
    return new Response(await readFile(fileURLToPath(url)));
  };
  return () => threads.forEach((t) => t.unref());
}
