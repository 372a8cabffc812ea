// The page's side of the worker protocol (web/protocol.js): request/reply with ids, signals, and event
// listeners; a message the protocol does not list is refused here, before it reaches the worker. A
// failed request rejects with an Error whose `kind` is the engine's (see crate/wasm `fail`) and, for a
// malformed file, whose `place` is {file, line, field, detail}.

import { refusal } from '../protocol.js';

/** An error for a message the protocol does not list (a bug in the page). */
function refused(kind, type) {
  const why = refusal(kind, type);
  return why ? Object.assign(new Error(`web/protocol.js: ${why}`), { kind: 'input' }) : null;
}

export class EngineClient {
  constructor(url) {
    this.worker = new Worker(url, { type: 'module' });
    this.next = 1;
    this.pending = new Map();
    this.listeners = new Map();
    this.worker.onmessage = (ev) => {
      const m = ev.data;
      if (m.id && this.pending.has(m.id)) {
        const { resolve, reject } = this.pending.get(m.id);
        this.pending.delete(m.id);
        if (m.ok) resolve(m.result);
        else reject(Object.assign(new Error(m.error), { kind: m.kind, place: m.place }));
        return;
      }
      for (const fn of this.listeners.get(m.type) || []) fn(m);
    };
    this.worker.onerror = (ev) => {
      for (const { reject } of this.pending.values()) reject(new Error(`the engine worker failed: ${ev.message}`));
      this.pending.clear();
    };
  }

  /** Send a request; resolves with the worker's result. */
  request(type, payload = {}) {
    const bad = refused('request', type) || (type === 'core' ? refused('core', payload.fn) : null);
    if (bad) return Promise.reject(bad);
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ type, id, ...payload });
    });
  }

  /** A core (pure) engine call by name. */
  core(fn, ...args) {
    return this.request('core', { fn, args });
  }

  /** Tell the worker to pause, resume or cancel (no reply). */
  signal(type) {
    const bad = refused('signal', type);
    if (bad) throw bad;
    this.worker.postMessage({ type });
  }

  /** Listen to events of `type`; returns a function that stops listening. */
  on(type, fn) {
    const bad = refused('event', type);
    if (bad) throw bad;
    if (!this.listeners.has(type)) this.listeners.set(type, []);
    this.listeners.get(type).push(fn);
    return () =>
      this.listeners.set(
        type,
        this.listeners.get(type).filter((f) => f !== fn),
      );
  }
}
