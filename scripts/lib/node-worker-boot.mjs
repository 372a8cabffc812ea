// One worker thread of the tab's pool under Node (see node-workers.mjs): the globals a module Web
// Worker has and wasm-bindgen-rayon's worker module uses (`self`, its message events, `postMessage`),
// over Node's worker_threads, then that module (`workerData.script`, a file URL).

import { parentPort, workerData } from 'node:worker_threads';

const events = new EventTarget();
globalThis.self = globalThis;
globalThis.addEventListener = events.addEventListener.bind(events);
globalThis.removeEventListener = events.removeEventListener.bind(events);
globalThis.postMessage = (message) => parentPort.postMessage(message);

await import(workerData.script);
// Only now, as a module Web Worker gets its messages once its module has run: the port keeps what
// came before (the pool's init message) until this listener starts it.
parentPort.on('message', (data) => events.dispatchEvent(new MessageEvent('message', { data })));
