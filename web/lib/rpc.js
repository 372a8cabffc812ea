// The page's side of the worker protocol: request/reply with ids, plus event listeners. A failed
// request rejects with an Error whose `kind` is the engine's (see crate/wasm `fail`) and, for a
// malformed file, whose `place` is {file, line, field, detail}.

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

  signal(type) {
    this.worker.postMessage({ type });
  }

  /** Listen to events of `type`; returns a function that stops listening. */
  on(type, fn) {
    if (!this.listeners.has(type)) this.listeners.set(type, []);
    this.listeners.get(type).push(fn);
    return () => this.listeners.set(type, this.listeners.get(type).filter((f) => f !== fn));
  }
}
